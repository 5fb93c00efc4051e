//! OpenAI Chat Completions (`POST /v1/chat/completions`, or
//! `{base}/chat/completions`), as OpenCode and every OpenAI-compatible
//! client speak it: the request's messages read into the record's rows by
//! the Chat Completions importer's own reading, the forwarded `messages`
//! written from a view, and the answer (JSON, or chunks streamed with
//! `stream_options.include_usage`) assembled into the assistant row.
//!
//! OpenCode 1.18.33 with a provider of npm type `@ai-sdk/openai-compatible`
//! sends `POST {baseURL}/chat/completions`: `model`, `max_tokens`,
//! `messages` (its system prompt as `system` messages first), `tools`,
//! `tool_choice: "auto"`, `stream: true` and `stream_options.include_usage`;
//! its assistant messages come back with `reasoning_content` and
//! `tool_calls` (arguments as a JSON string), each call answered by a
//! `role: "tool"` message. The session is named in `x-session-id` (and
//! `x-session-affinity`). Its side requests (a title, a compaction's
//! summary) name the same session with no tools and another system prompt:
//! another lineage, so another task, linked to the session's first.

use serde_json::Value;

use super::convo::{BadRequest, item_object, system_rows};
use super::render::ItemWriter;
use super::responses::instruction_blocks;
use super::sse::{Assemble, answer_json};
use crate::model::Message;
use crate::transcript::codex::codex_usage;
use crate::transcript::openai_chat::OpenAiChatImporter;
use crate::transcript::{ObjectLines, TaskSet};

/// One request message as the record's rows: `system` and `developer`
/// messages as a system row, the rest as the Chat Completions importer
/// reads them (an empty message: no row).
pub(crate) fn message_rows(raw: &str, i: usize) -> Result<Vec<Message>, BadRequest> {
    let what = format!("messages[{i}]");
    let obj = item_object(raw, &what, "an object with \"role\" and \"content\"")?;
    let role = obj.get("role").and_then(Value::as_str).unwrap_or("");
    if matches!(role, "system" | "developer") {
        return Ok(system_rows(instruction_blocks(obj.get("content"))));
    }
    let mut tasks = TaskSet::default();
    OpenAiChatImporter::default()
        .object(1, obj, &mut tasks)
        .map_err(|e| BadRequest(format!("{what}: {}", e.message)))?;
    let mut rows = std::mem::take(&mut tasks.main().messages);
    rows.retain(|r| !r.content.is_empty());
    for r in &mut rows {
        r.gen_id = None;
        r.line = 0;
        r.timestamp = None;
        r.usage = None;
    }
    Ok(rows)
}

/// The session a Chat Completions request names: the client's session
/// header, else `prompt_cache_key`, else `user`.
pub(crate) fn session_of(
    header: Option<&str>,
    prompt_cache_key: Option<String>,
    user: Option<String>,
) -> Option<String> {
    header
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .or(prompt_cache_key.filter(|k| !k.is_empty()))
        .or(user.filter(|u| !u.is_empty()))
}

/// Writes the forwarded `messages` array: the client's own messages where
/// the view holds them whole, else messages made from the view's blocks
/// (tool calls as `tool_calls`, results as `tool` messages, reasoning as
/// `reasoning_content`).
#[derive(Default)]
pub(crate) struct ChatWriter {
    out: Vec<String>,
}

impl ItemWriter for ChatWriter {
    const ITEM_HOLDS_ITS_REASONING: bool = true;

    fn items(&self) -> &[String] {
        &self.out
    }

    /// A message the client sent, as it sent it.
    fn sent(&mut self, raw: &str) {
        self.out.push(raw.to_string());
    }

    fn view_items(&mut self, fragment: &crate::view::View) {
        let (messages, _) = crate::view::chat_messages(fragment, true);
        self.out.extend(messages.iter().map(Value::to_string));
    }

    /// The messages written from `from` on (no freeform calls to know).
    fn since(&self, from: usize) -> (Vec<String>, Vec<String>) {
        (self.out[from..].to_vec(), Vec::new())
    }

    /// Messages of a view message written before, as they were.
    fn written(&mut self, messages: &[String], _known: &[String]) {
        self.out.extend(messages.iter().cloned());
    }
}

/// A tool call being streamed: its index (when the server numbers its
/// calls), id, name and arguments so far.
#[derive(Default)]
struct CallSoFar {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Assembles a Chat Completions answer, streamed or whole, into the
/// assistant row: the message the client sends back, read as it reads it.
#[derive(Default)]
pub(crate) struct ChatAssembler {
    id: Option<String>,
    content: String,
    reasoning: String,
    calls: Vec<CallSoFar>,
    usage: Option<Value>,
    /// The other choices (`n` > 1) the answer held: passed on to the
    /// client, never recorded (the record holds choice 0 alone).
    other_choices: std::collections::BTreeSet<u64>,
    /// A choice's `finish_reason` came.
    finished: bool,
    /// `data: [DONE]` came (or the whole answer was read).
    done: bool,
    error: Option<String>,
}

impl Assemble for ChatAssembler {
    fn event(&mut self, _name: &str, data: &[u8]) {
        if data.trim_ascii() == b"[DONE]" {
            self.done = true;
            return;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(data) {
            self.chunk(&v);
        }
    }

    fn whole(&mut self, body: &[u8]) -> Result<(), String> {
        let v = answer_json(body)?;
        if let Some(e) = error_of(&v) {
            self.error = Some(e);
            return Ok(());
        }
        self.take_id_and_usage(&v);
        self.note_other_choices(&v);
        let choice = first_choice(&v);
        let m = &choice["message"];
        match &m["content"] {
            Value::String(s) => self.content.push_str(s),
            Value::Array(parts) => {
                for p in parts {
                    if let Some(t) = p["text"].as_str() {
                        self.content.push_str(t);
                    }
                }
            }
            _ => {}
        }
        if let Some(r) = reasoning_of(m) {
            self.reasoning.push_str(r);
        }
        for (i, c) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
            self.calls.push(CallSoFar {
                index: Some(i as u64),
                id: c["id"].as_str().unwrap_or("").to_string(),
                name: c["function"]["name"].as_str().unwrap_or("").to_string(),
                arguments: c["function"]["arguments"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            });
        }
        self.finished = true;
        self.done = true;
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done || self.error.is_some()
    }

    fn complete_at_end(&self) -> bool {
        // A server that ends its stream without `[DONE]` once a choice
        // finished (some local servers do): the answer is whole.
        self.finished && self.error.is_none()
    }

    fn errored(&self) -> bool {
        self.error.is_some()
    }

    fn note(&self) -> Option<String> {
        (!self.other_choices.is_empty()).then(|| {
            format!(
                "the upstream answered {} choices (the request's `n`); the client got them all, and choice 0 alone is recorded, as the one the conversation goes on with",
                self.other_choices.len() + 1
            )
        })
    }

    fn finish(self: Box<Self>) -> Result<Message, String> {
        (*self).into_row()
    }
}

/// Whether a streamed tool call's piece names its function.
fn has_name(c: &Value) -> bool {
    c["function"]["name"]
        .as_str()
        .is_some_and(|n| !n.is_empty())
}

/// A choice's `index` (a choice without one is the only one: 0).
fn choice_index(c: &Value) -> u64 {
    c["index"].as_u64().unwrap_or(0)
}

/// Choice 0 of an answer or chunk, or `Null` when it holds none (a chunk of
/// another choice, when the request asked for several: never merged into
/// choice 0's).
fn first_choice(v: &Value) -> &Value {
    v["choices"]
        .as_array()
        .and_then(|c| c.iter().find(|c| choice_index(c) == 0))
        .unwrap_or(&Value::Null)
}

/// The reasoning a message or delta carries: `reasoning_content` (DeepSeek,
/// vLLM, what OpenCode sends back) or `reasoning` (OpenRouter, Ollama).
fn reasoning_of(m: &Value) -> Option<&str> {
    m["reasoning_content"]
        .as_str()
        .or_else(|| m["reasoning"].as_str())
}

/// The error an answer or chunk carries instead of a completion.
fn error_of(v: &Value) -> Option<String> {
    let e = v.get("error").filter(|e| !e.is_null())?;
    Some(
        e["message"]
            .as_str()
            .or(e.as_str())
            .unwrap_or("the upstream sent an error")
            .to_string(),
    )
}

impl ChatAssembler {
    fn take_id_and_usage(&mut self, v: &Value) {
        if self.id.is_none()
            && let Some(id) = v["id"].as_str()
        {
            self.id = Some(id.to_string());
        }
        if v.get("usage").is_some_and(|u| u.is_object()) {
            self.usage = Some(v["usage"].clone());
        }
    }

    /// The choices other than 0 that `v` holds.
    fn note_other_choices(&mut self, v: &Value) {
        for c in v["choices"].as_array().into_iter().flatten() {
            if choice_index(c) != 0 {
                self.other_choices.insert(choice_index(c));
            }
        }
    }

    /// One streamed chunk.
    fn chunk(&mut self, v: &Value) {
        if let Some(e) = error_of(v) {
            self.error = Some(e);
            return;
        }
        self.take_id_and_usage(v);
        self.note_other_choices(v);
        let choice = first_choice(v);
        let delta = &choice["delta"];
        if let Some(t) = delta["content"].as_str() {
            self.content.push_str(t);
        }
        if let Some(r) = reasoning_of(delta) {
            self.reasoning.push_str(r);
        }
        for c in delta["tool_calls"].as_array().into_iter().flatten() {
            let at = self.call_for(c);
            let call = &mut self.calls[at];
            // The name comes whole, once (a server repeating it in every
            // chunk must not double it).
            if let Some(n) = c["function"]["name"].as_str()
                && call.name.is_empty()
            {
                call.name = n.to_string();
            }
            if let Some(a) = c["function"]["arguments"].as_str() {
                call.arguments.push_str(a);
            }
        }
        if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
            self.finished = true;
        }
    }

    /// Where a streamed tool call's piece goes: by its id (a new id is a new
    /// call), else by its `index`, else to the call before (a server that
    /// numbers nothing, as Gemini's OpenAI-compatible endpoint streams
    /// parallel calls: each whole, with its id and no `index`).
    fn call_for(&mut self, c: &Value) -> usize {
        let index = c["index"].as_u64();
        let id = c["id"].as_str().filter(|id| !id.is_empty());
        let found = match (id, index) {
            (Some(id), _) => self.calls.iter().rposition(|s| s.id == id).or_else(|| {
                // The first piece to name the id of a call whose earlier
                // pieces came by index alone.
                index.and_then(|i| {
                    self.calls
                        .iter()
                        .rposition(|s| s.index == Some(i) && s.id.is_empty())
                })
            }),
            (None, Some(i)) => self.calls.iter().rposition(|s| s.index == Some(i)),
            // A piece naming its function starts a call when the one
            // before has its name (a name comes once per call).
            (None, None)
                if has_name(c) && self.calls.last().is_some_and(|l| !l.name.is_empty()) =>
            {
                None
            }
            (None, None) => self.calls.len().checked_sub(1),
        };
        let at = found.unwrap_or_else(|| {
            self.calls.push(CallSoFar {
                index,
                ..CallSoFar::default()
            });
            self.calls.len() - 1
        });
        if let Some(id) = id {
            self.calls[at].id = id.to_string();
        }
        at
    }

    /// The assistant message as the client sends it back, read as the
    /// request's messages are.
    fn into_row(mut self) -> Result<Message, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.done && !self.finished {
            return Err("the stream ended before a choice finished".into());
        }
        // Numbered calls in their numbers' order; otherwise as they came.
        if self.calls.iter().all(|c| c.index.is_some()) {
            self.calls.sort_by_key(|c| c.index);
        }
        let mut message = serde_json::json!({
            "role": "assistant",
            "content": if self.content.is_empty() { Value::Null } else { Value::String(self.content) },
        });
        if !self.reasoning.is_empty() {
            message["reasoning_content"] = Value::String(self.reasoning);
        }
        if !self.calls.is_empty() {
            message["tool_calls"] = self
                .calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let id = if c.id.is_empty() {
                        format!("call_{i}")
                    } else {
                        c.id.clone()
                    };
                    serde_json::json!({"id": id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
        }
        let mut content = Vec::new();
        for row in message_rows(&message.to_string(), 0).map_err(|e| e.0)? {
            content.extend(row.content);
        }
        let mut row = Message::new(
            crate::model::Role::Assistant,
            crate::model::Kind::Generation,
            content,
            0,
        );
        row.gen_id = self.id;
        row.usage = self.usage.as_ref().map(|u| {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            let cached = u["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .or_else(|| u["prompt_cache_hit_tokens"].as_u64())
                .unwrap_or(0);
            codex_usage(n(&u["prompt_tokens"]), cached, n(&u["completion_tokens"]))
        });
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Block, Kind};
    use crate::proxy::sse::Answer;
    use serde_json::json;

    /// Chunks as OpenCode's loopback model streams them: reasoning, text, a
    /// tool call whose arguments come in two pieces, the finish reason, the
    /// usage chunk `include_usage` asks for, and `[DONE]`.
    fn stream() -> String {
        let chunk = |delta: Value, finish: Value| {
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        };
        let chunks = [
            chunk(
                json!({"role": "assistant", "content": null, "reasoning_content": "The notes "}),
                Value::Null,
            ),
            chunk(json!({"reasoning_content": "first."}), Value::Null),
            chunk(json!({"content": "Reading."}), Value::Null),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": ""}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"filePath\":"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.txt\"}"}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
            json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 1200, "completion_tokens": 20,
                   "prompt_tokens_details": {"cached_tokens": 600}}}),
        ];
        let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        s.push_str("data: [DONE]\n\n");
        s
    }

    #[test]
    fn a_streamed_answer_assembles_into_the_message_the_client_sends_back() {
        let s = stream();
        for size in [1, 7, s.len()] {
            let mut a = Answer::streamed(Box::new(ChatAssembler::default()));
            for c in s.as_bytes().chunks(size) {
                a.feed(c);
            }
            assert!(a.complete(), "chunks of {size}");
            let row = a.finish().unwrap();
            assert_eq!(row.gen_id.as_deref(), Some("chatcmpl-1"));
            let u = row.usage.unwrap();
            assert_eq!(
                (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
                (600, 600, 20)
            );
            // OpenCode sends it back so: the same blocks.
            let echoed = r#"{"role":"assistant","content":"Reading.","reasoning_content":"The notes first.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"filePath\":\"a.txt\"}"}}]}"#;
            let rows = message_rows(echoed, 3).unwrap();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].kind, Kind::Generation);
            assert_eq!(rows[0].content, row.content);
            assert!(
                matches!(&row.content[0], Block::Thinking { thinking, signature: None } if thinking == "The notes first.")
            );
            assert!(
                matches!(&row.content[2], Block::ToolUse { id, name, input } if id == "call_1" && name == "read" && input["filePath"] == "a.txt")
            );
        }
    }

    #[test]
    fn a_whole_answer_and_a_stream_without_done_assemble_too() {
        let whole = json!({"id": "chatcmpl-2", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Done.", "reasoning": "short"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2}});
        let (row, note) = Answer::whole(
            Box::new(ChatAssembler::default()),
            whole.to_string().as_bytes(),
        )
        .unwrap();
        assert_eq!(note, None);
        assert_eq!(row.content.len(), 2);
        assert_eq!(row.usage.unwrap().input_tokens, 10);
        // No `[DONE]`: complete at the stream's end once a choice finished.
        let mut a = ChatAssembler::default();
        a.event("", br#"{"id":"c","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}"#);
        assert!(!a.complete() && a.complete_at_end());
        assert_eq!(Box::new(a).finish().unwrap().content.len(), 1);
        // Cut before a choice finished: nothing to record.
        let mut a = Answer::streamed(Box::new(ChatAssembler::default()));
        a.feed(
            b"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n",
        );
        assert!(a.finish().unwrap_err().contains("before a choice finished"));
        // An error chunk ends the answer, unrecorded.
        let mut a = Answer::streamed(Box::new(ChatAssembler::default()));
        a.feed(b"data: {\"error\":{\"message\":\"overloaded\"}}\n\n");
        assert!(a.complete() && a.errored());
        assert_eq!(a.finish().unwrap_err(), "overloaded");
    }

    /// The streamed chunks of `deltas`, each `(choice index, delta,
    /// finish_reason)`, then `[DONE]`.
    fn chunks(deltas: &[(u64, Value, Value)]) -> String {
        let mut s: String = deltas
            .iter()
            .map(|(i, d, f)| {
                let c = json!({"id": "chatcmpl-n", "choices": [{"index": i, "delta": d, "finish_reason": f}]});
                format!("data: {c}\n\n")
            })
            .collect();
        s.push_str("data: [DONE]\n\n");
        s
    }

    fn streamed(s: &str) -> (Message, Option<String>) {
        let mut a = Answer::streamed(Box::new(ChatAssembler::default()));
        a.feed(s.as_bytes());
        assert!(a.complete());
        let note = a.note();
        (a.finish().unwrap(), note)
    }

    #[test]
    fn of_several_choices_choice_0_alone_is_recorded_and_the_rest_noted() {
        // n = 2, streamed: the choices' chunks interleave, and choice 1
        // finishes first.
        let s = chunks(&[
            (
                0,
                json!({"role": "assistant", "content": "stub "}),
                Value::Null,
            ),
            (
                1,
                json!({"role": "assistant", "content": "second "}),
                Value::Null,
            ),
            (1, json!({"content": "choice"}), json!("stop")),
            (0, json!({"content": "answer 1"}), json!("stop")),
        ]);
        let (row, note) = streamed(&s);
        assert_eq!(
            row.content,
            vec![Block::Text {
                text: "stub answer 1".into()
            }]
        );
        let note = note.expect("the other choice is noted");
        assert!(
            note.contains("2 choices") && note.contains("choice 0 alone is recorded"),
            "{note}"
        );
        // Only choice 1 finished: choice 0 is not whole yet.
        let mut a = ChatAssembler::default();
        a.event(
            "",
            br#"{"id":"c","choices":[{"index":1,"delta":{"content":"x"},"finish_reason":"stop"}]}"#,
        );
        assert!(!a.complete_at_end());
        // One answer, choice 0 alone: no note.
        let (_, note) = streamed(&chunks(&[(0, json!({"content": "hi"}), json!("stop"))]));
        assert_eq!(note, None);
        // Whole, with two choices listed (choice 1 first).
        let whole = json!({"id": "chatcmpl-w", "choices": [
            {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "second choice"}},
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "stub answer 1"}}]});
        let (row, note) = Answer::whole(
            Box::new(ChatAssembler::default()),
            whole.to_string().as_bytes(),
        )
        .unwrap();
        assert_eq!(
            row.content,
            vec![Block::Text {
                text: "stub answer 1".into()
            }]
        );
        assert!(note.is_some());
    }

    /// The tool calls of an assembled row: (id, name, input).
    fn calls_of(row: &Message) -> Vec<(String, String, Value)> {
        row.content
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { id, name, input } => {
                    Some((id.clone(), name.clone(), input.clone()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn parallel_tool_calls_without_index_are_assembled_by_id_then_by_order() {
        let call = |id: Option<&str>, name: Option<&str>, args: &str| {
            let mut c = json!({"type": "function", "function": {"arguments": args}});
            if let Some(id) = id {
                c["id"] = json!(id);
            }
            if let Some(n) = name {
                c["function"]["name"] = json!(n);
            }
            c
        };
        let want = vec![
            (
                "call_a".to_string(),
                "read".to_string(),
                json!({"filePath": "a.txt"}),
            ),
            (
                "call_b".to_string(),
                "grep".to_string(),
                json!({"pattern": "x"}),
            ),
        ];
        // Gemini's OpenAI-compatible endpoint: each call whole, in a chunk of
        // its own, with its id and no index.
        let apart = chunks(&[
            (
                0,
                json!({"tool_calls": [call(Some("call_a"), Some("read"), r#"{"filePath":"a.txt"}"#)]}),
                Value::Null,
            ),
            (
                0,
                json!({"tool_calls": [call(Some("call_b"), Some("grep"), r#"{"pattern":"x"}"#)]}),
                Value::Null,
            ),
            (0, json!({}), json!("tool_calls")),
        ]);
        assert_eq!(calls_of(&streamed(&apart).0), want);
        // Both in one chunk, no index.
        let together = chunks(&[
            (
                0,
                json!({"tool_calls": [
                call(Some("call_a"), Some("read"), r#"{"filePath":"a.txt"}"#),
                call(Some("call_b"), Some("grep"), r#"{"pattern":"x"}"#)]}),
                Value::Null,
            ),
            (0, json!({}), json!("tool_calls")),
        ]);
        assert_eq!(calls_of(&streamed(&together).0), want);
        // No id, no index: by order, each piece naming a function starts a
        // call, the pieces after it are its arguments.
        let bare = chunks(&[
            (
                0,
                json!({"tool_calls": [call(None, Some("read"), r#"{"filePath":"#)]}),
                Value::Null,
            ),
            (
                0,
                json!({"tool_calls": [call(None, None, r#""a.txt"}"#)]}),
                Value::Null,
            ),
            (
                0,
                json!({"tool_calls": [call(None, Some("grep"), r#"{"pattern":"x"}"#)]}),
                Value::Null,
            ),
            (0, json!({}), json!("tool_calls")),
        ]);
        let got = calls_of(&streamed(&bare).0);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(
            (got[0].2.clone(), got[1].2.clone()),
            (want[0].2.clone(), want[1].2.clone())
        );
        // OpenAI's own: numbered, the id in the first piece only, and the
        // same index reused by distinct ids is two calls.
        let mut a = call(Some("call_a"), Some("read"), "");
        a["index"] = json!(0);
        let mut a2 = call(None, None, r#"{"filePath":"a.txt"}"#);
        a2["index"] = json!(0);
        let mut b = call(Some("call_b"), Some("grep"), r#"{"pattern":"x"}"#);
        b["index"] = json!(0);
        let numbered = chunks(&[
            (0, json!({"tool_calls": [a]}), Value::Null),
            (0, json!({"tool_calls": [a2]}), Value::Null),
            (0, json!({"tool_calls": [b]}), Value::Null),
            (0, json!({}), json!("tool_calls")),
        ]);
        assert_eq!(calls_of(&streamed(&numbered).0), want);
    }

    #[test]
    fn messages_become_rows_with_instructions_as_system_rows() {
        let sys = message_rows(r#"{"role":"system","content":"You are OpenCode."}"#, 0).unwrap();
        assert_eq!(sys[0].kind, Kind::System);
        let dev = message_rows(
            r#"{"role":"developer","content":[{"type":"text","text":"Be brief."}]}"#,
            1,
        )
        .unwrap();
        assert_eq!(dev[0].kind, Kind::System);
        let ask = message_rows(r#"{"role":"user","content":"fix it"}"#, 2).unwrap();
        assert_eq!(ask[0].kind, Kind::Ask);
        let tool = message_rows(
            r#"{"role":"tool","tool_call_id":"call_1","content":"file text"}"#,
            3,
        )
        .unwrap();
        assert!(
            matches!(&tool[0].content[0], Block::ToolResult { tool_use_id, .. } if tool_use_id == "call_1")
        );
        assert!(
            message_rows("[1]", 4)
                .unwrap_err()
                .0
                .contains("messages[4] is a list")
        );
        assert!(
            message_rows(r#"{"role":"tool","content":"x"}"#, 5)
                .unwrap_err()
                .0
                .contains("messages[5]: tool message without \"tool_call_id\"")
        );
        assert!(
            message_rows(r#"{"role":"robot","content":"x"}"#, 6)
                .unwrap_err()
                .0
                .contains("role \"robot\"")
        );
    }

    #[test]
    fn view_blocks_are_written_as_paired_chat_messages() {
        use crate::view::ViewRole;
        let mut w = ChatWriter::default();
        w.sent(r#"{"role":"system","content":"S"}"#);
        w.view(
            ViewRole::Assistant,
            vec![
                Block::Thinking {
                    thinking: "why".into(),
                    signature: None,
                },
                Block::Text { text: "ok".into() },
                Block::ToolUse {
                    id: "call_1".into(),
                    name: "read".into(),
                    input: json!({"filePath": "a"}),
                },
            ],
        );
        w.view(
            ViewRole::User,
            vec![
                Block::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: crate::model::ToolContent::Text("[shrunk]".into()),
                    is_error: false,
                },
                Block::Text {
                    text: "go on".into(),
                },
            ],
        );
        let out: Vec<Value> = serde_json::from_str(&w.finish()).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(out[1]["reasoning_content"], "why");
        assert_eq!(
            out[1]["tool_calls"][0]["function"]["arguments"],
            "{\"filePath\":\"a\"}"
        );
        assert_eq!(out[2]["role"], "tool");
        assert_eq!(out[2]["tool_call_id"], "call_1");
        assert_eq!(out[3]["role"], "user");
        // Written back, they read as the same blocks.
        let rows = message_rows(&out[1].to_string(), 1).unwrap();
        assert_eq!(rows[0].content.len(), 3);
    }
}
