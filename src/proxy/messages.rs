//! Anthropic Messages (`POST /v1/messages`), as Claude Code speaks it: the
//! request read into the record's rows, the forwarded `messages` written
//! from a view, and the streamed answer assembled into the assistant row.
//!
//! Claude Code 2.1.332 sends `system` as text blocks (the first a billing
//! line, two with `cache_control`), `tools` (about 32 KB), `metadata.user_id`
//! (a JSON string naming `session_id`), `thinking`, `context_management`,
//! `output_config` and `stream: true`; the session id again in the
//! `X-Claude-Code-Session-Id` header, the key in `x-api-key`, betas in
//! `anthropic-beta`, and `?beta=true` on the path. Among the messages is one
//! `role: "system"` message (the environment) after the first user message.
//! One `cache_control` breakpoint sits on the last block of the last message
//! and moves with it; thinking blocks come back with their signatures.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::convo::{BadRequest, item_object, kind_of, system_rows};
use super::pieces::{Pieces, Text, json_array};
use super::sse::{Assemble, answer_json};
use crate::model::{Block, Message, Usage};
use crate::transcript::anthropic::AnthropicImporter;
use crate::transcript::{ObjectLines, TaskSet, anthropic_block, anthropic_usage};

/// Breakpoints a Messages request may carry (system, tools and messages together).
pub(crate) const MAX_BREAKPOINTS: usize = 4;

/// A content block without its cache breakpoint (the proxy places its own).
fn without_cache_control(mut b: Value) -> Value {
    if let Value::Object(o) = &mut b {
        o.remove("cache_control");
        if let Some(Value::Array(inner)) = o.get_mut("content") {
            for c in inner.iter_mut() {
                if let Value::Object(co) = c {
                    co.remove("cache_control");
                }
            }
        }
    }
    b
}

/// Normalised content: a string, or blocks (breakpoints removed).
pub(crate) fn content_blocks(content: Value, what: &str) -> Result<Vec<Block>, BadRequest> {
    match content {
        Value::String(text) => Ok(vec![Block::Text { text }]),
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .into_iter()
            .map(|b| {
                anthropic_block(0, without_cache_control(b))
                    .map_err(|e| BadRequest(format!("{what}: {}", e.message)))
            })
            .collect(),
        other => Err(BadRequest(format!(
            "{what} is {}; expected a string or a list of content blocks",
            kind_of(&other)
        ))),
    }
}

/// One request message as the record's rows (one row; none for an empty
/// message): user and assistant messages as the Anthropic importer reads
/// them, a `system` message as a system row.
pub(crate) fn message_rows(raw: &str, i: usize) -> Result<Vec<Message>, BadRequest> {
    let what = format!("messages[{i}]");
    let mut obj = item_object(raw, &what, "an object with \"role\" and \"content\"")?;
    let content = obj.remove("content").unwrap_or(Value::Null);
    let blocks = content_blocks(content, &what)?;
    let role = obj.get("role").and_then(Value::as_str).unwrap_or("");
    if role == "system" {
        return Ok(system_rows(blocks));
    }
    if role != "user" && role != "assistant" {
        return Err(BadRequest(format!(
            "{what} has role {role:?}; expected \"user\", \"assistant\" or \"system\""
        )));
    }
    if blocks.is_empty() {
        return Ok(Vec::new());
    }
    // The importer reads the message itself: the same kinds as an import
    // (the blocks handed over as values, their strings moved, not copied).
    let blocks = Value::Array(blocks.into_iter().map(Block::into_value).collect());
    let mut m = Map::new();
    m.insert("role".into(), Value::String(role.into()));
    m.insert("content".into(), blocks);
    let mut tasks = TaskSet::default();
    AnthropicImporter::default()
        .object(1, m, &mut tasks)
        .map_err(|e| BadRequest(format!("{what}: {}", e.message)))?;
    let mut rows = std::mem::take(&mut tasks.main().messages);
    for r in &mut rows {
        r.gen_id = None;
        r.line = 0;
    }
    Ok(rows)
}

/// The system prompt of a request: `system` as a string or text blocks.
pub(crate) fn system_blocks(system: Option<Value>) -> Result<Vec<Block>, BadRequest> {
    match system {
        None => Ok(Vec::new()),
        Some(v) => content_blocks(v, "system"),
    }
}

/// The session id a Messages request names: Claude Code's header, else the
/// `session_id` inside `metadata.user_id` (a JSON string in 2.x, a
/// `..._session_<id>` name before).
pub(crate) fn session_of(header: Option<&str>, metadata: Option<&Value>) -> Option<String> {
    if let Some(h) = header.filter(|h| !h.is_empty()) {
        return Some(h.to_string());
    }
    let user = metadata?.get("user_id")?.as_str()?;
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(user)
        && let Some(s) = o.get("session_id").and_then(Value::as_str)
    {
        return Some(s.to_string());
    }
    user.rsplit_once("_session_").map(|(_, s)| s.to_string())
}

/// The breakpoints `system` and `tools` already carry.
pub(crate) fn breakpoints_in(v: Option<&Value>) -> usize {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter(|b| b.get("cache_control").is_some())
            .count(),
        _ => 0,
    }
}

/// The breakpoint the client put on its messages (the last one), if any.
pub(crate) fn message_breakpoint(raw: &str) -> Option<Value> {
    // Its fields and its blocks' read as spans: no text is copied (a large
    // one was read twice into a `Value` only to be dropped).
    type Fields<'a> = BTreeMap<String, &'a RawValue>;
    let m: Fields<'_> = serde_json::from_str(raw).ok()?;
    let blocks: Vec<&RawValue> = serde_json::from_str(m.get("content")?.get()).ok()?;
    blocks.iter().rev().find_map(|b| {
        let fields: Fields<'_> = serde_json::from_str(b.get()).ok()?;
        serde_json::from_str(fields.get("cache_control")?.get()).ok()
    })
}

/// Writes the forwarded `messages` array: the view's messages, each block
/// the client's own text where the view holds it unchanged (signatures,
/// citations and all, byte for byte), else the view's block, with one
/// breakpoint on the last block that can take one.
pub(crate) struct MessagesWriter {
    /// Each message: its role (`None`: a system message written whole) and
    /// its blocks' JSON text.
    out: Vec<(Option<&'static str>, Vec<Text>)>,
}

/// A block as the forwarded request carries it.
pub(crate) enum OutBlock {
    /// The client's block, as sent (its breakpoint removed).
    Sent(Text),
    /// A block of the view the client did not send (a compacted form, a summary).
    View(Block),
}

/// A block's JSON text without its breakpoint (parsed only when it has one).
fn sent_without_cache_control(raw: Text, body: &str) -> Text {
    let text = raw.as_str(body);
    if !text.contains("\"cache_control\"") {
        return raw;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Text::own(without_cache_control(v).to_string()),
        Err(_) => raw,
    }
}

impl MessagesWriter {
    pub(crate) fn new() -> MessagesWriter {
        MessagesWriter { out: Vec::new() }
    }

    /// A message of the view; returns its blocks' text (kept by the caller
    /// for the next call, whose view shares the message). A block the
    /// client sent is a run of `body`.
    pub(crate) fn message(
        &mut self,
        role: &'static str,
        blocks: Vec<OutBlock>,
        body: &str,
    ) -> &[Text] {
        let content = blocks
            .into_iter()
            .map(|b| match b {
                OutBlock::Sent(raw) => sent_without_cache_control(raw, body),
                OutBlock::View(b) => {
                    Text::own(serde_json::to_string(&b).expect("blocks serialise"))
                }
            })
            .collect();
        self.out.push((Some(role), content));
        &self.out.last().expect("pushed").1
    }

    /// A message of the view written before, its blocks' text as it was.
    pub(crate) fn written(&mut self, role: &'static str, blocks: Vec<Text>) {
        self.out.push((Some(role), blocks));
    }

    /// How many messages are written.
    pub(crate) fn len(&self) -> usize {
        self.out.len()
    }

    /// A system message the client sent, its content as text blocks
    /// without a breakpoint: one form whichever the client sent (Claude Code
    /// sends its environment as a block list first, as a string after), so
    /// that the forwarded prefix stays the same from call to call.
    pub(crate) fn system(&mut self, raw: &str) {
        let m: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(a)) => a.iter().cloned().map(without_cache_control).collect(),
            _ => Vec::new(),
        };
        let text = serde_json::json!({"role": "system", "content": blocks}).to_string();
        self.out.push((None, vec![Text::own(text)]));
    }

    /// The array's text onto `out`, with `breakpoint` on the last block of
    /// a view message that can take one (thinking blocks cannot).
    pub(crate) fn finish(mut self, breakpoint: Option<Value>, body: &str, out: &mut Pieces) {
        if let Some(bp) = breakpoint {
            'done: for (role, blocks) in self.out.iter_mut().rev() {
                if role.is_none() {
                    continue;
                }
                for b in blocks.iter_mut().rev() {
                    let Ok(Value::Object(mut o)) = serde_json::from_str::<Value>(b.as_str(body))
                    else {
                        continue;
                    };
                    let ty = o.get("type").and_then(Value::as_str).unwrap_or("");
                    if matches!(ty, "thinking" | "redacted_thinking") {
                        continue;
                    }
                    o.insert("cache_control".into(), bp);
                    *b = Text::own(Value::Object(o).to_string());
                    break 'done;
                }
            }
        }
        json_array(out, &self.out, |out, (role, blocks)| match role {
            None => out.text(&blocks[0], body),
            Some(role) => {
                out.str("{\"role\":\"");
                out.str(role);
                out.str("\",\"content\":");
                json_array(out, blocks, |out, b| out.text(b, body));
                out.char('}');
            }
        });
    }
}

/// The blocks of a request message as sent (`raw`, a run of `body`), each
/// block's JSON text: a run of the body, or, for a string content, one
/// text block written here.
pub(crate) fn sent_blocks(body: &str, raw: &str) -> Vec<Text> {
    #[derive(serde::Deserialize)]
    struct Sent<'a> {
        #[serde(borrow)]
        content: Option<&'a serde_json::value::RawValue>,
    }
    let Ok(m) = serde_json::from_str::<Sent<'_>>(raw) else {
        return Vec::new();
    };
    let Some(content) = m.content else {
        return Vec::new();
    };
    if let Ok(list) = super::body::array_items(content) {
        return list.iter().map(|b| Text::of(body, b.get())).collect();
    }
    match serde_json::from_str::<String>(content.get()) {
        Ok(text) => vec![Text::own(
            serde_json::to_string(&Block::Text { text }).expect("serialises"),
        )],
        Err(_) => Vec::new(),
    }
}

/// Assembles a Messages answer, streamed (`text/event-stream`) or whole
/// (JSON), into the assistant row and its usage.
#[derive(Default)]
pub(crate) struct MessagesAssembler {
    id: Option<String>,
    usage: Option<Map<String, Value>>,
    blocks: Vec<Value>,
    /// The partial JSON of each tool block's input, by block index.
    partial: Vec<String>,
    stopped: bool,
    error: Option<String>,
}

impl Assemble for MessagesAssembler {
    fn event(&mut self, name: &str, data: &[u8]) {
        if !self.delta(data)
            && let Ok(v) = serde_json::from_slice::<Value>(data)
        {
            self.on_event(name, v);
        }
    }

    fn whole(&mut self, body: &[u8]) -> Result<(), String> {
        let mut v = answer_json(body)?;
        self.id = v.get("id").and_then(Value::as_str).map(str::to_string);
        self.usage = v.get("usage").and_then(Value::as_object).cloned();
        self.blocks = match v.get_mut("content").map(Value::take) {
            Some(Value::Array(blocks)) => blocks,
            _ => Vec::new(),
        };
        self.partial = vec![String::new(); self.blocks.len()];
        self.stopped = true;
        Ok(())
    }

    fn complete(&self) -> bool {
        self.stopped || self.error.is_some()
    }

    fn errored(&self) -> bool {
        self.error.is_some()
    }

    fn finish(self: Box<Self>) -> Result<Message, String> {
        (*self).into_row()
    }
}

impl MessagesAssembler {
    /// A text, thinking or tool input delta, the bulk of a stream, read
    /// without building a value; `false` for any other event.
    fn delta(&mut self, data: &[u8]) -> bool {
        use std::borrow::Cow;
        #[derive(serde::Deserialize)]
        struct DeltaEvent<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
            index: Option<usize>,
            #[serde(borrow)]
            delta: Option<Delta<'a>>,
        }
        #[derive(serde::Deserialize)]
        struct Delta<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
            #[serde(borrow, default)]
            text: Option<Cow<'a, str>>,
            #[serde(borrow, default)]
            thinking: Option<Cow<'a, str>>,
            #[serde(borrow, default)]
            partial_json: Option<Cow<'a, str>>,
        }
        let Ok(e) = serde_json::from_slice::<DeltaEvent<'_>>(data) else {
            return false;
        };
        let (Some(i), Some(d)) = (e.index, e.delta) else {
            return false;
        };
        if e.kind != "content_block_delta" {
            return false;
        }
        let (key, piece) = match (&*d.kind, d.text, d.thinking, d.partial_json) {
            ("text_delta", Some(t), _, _) => ("text", t),
            ("thinking_delta", _, Some(t), _) => ("thinking", t),
            ("input_json_delta", _, _, Some(p)) => {
                if let Some(partial) = self.partial.get_mut(i) {
                    partial.push_str(&p);
                }
                return true;
            }
            _ => return false,
        };
        if let Some(Value::Object(o)) = self.blocks.get_mut(i) {
            let cur = o.entry(key).or_insert(Value::String(String::new()));
            if let Value::String(t) = cur {
                t.push_str(&piece);
            }
        }
        true
    }

    fn on_event(&mut self, name: &str, v: Value) {
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_string();
        match ty.as_str() {
            "message_start" => {
                let m = &v["message"];
                self.id = m.get("id").and_then(Value::as_str).map(str::to_string);
                self.usage = m.get("usage").and_then(Value::as_object).cloned();
            }
            "content_block_start" => {
                let i = v["index"].as_u64().unwrap_or(self.blocks.len() as u64) as usize;
                while self.blocks.len() <= i {
                    self.blocks.push(Value::Null);
                    self.partial.push(String::new());
                }
                self.blocks[i] = v["content_block"].clone();
            }
            "content_block_delta" => {
                let i = v["index"].as_u64().unwrap_or(0) as usize;
                let (Some(b), Some(partial)) = (self.blocks.get_mut(i), self.partial.get_mut(i))
                else {
                    return;
                };
                let d = &v["delta"];
                let append = |b: &mut Value, key: &str, s: &str| {
                    if let Some(o) = b.as_object_mut() {
                        let cur = o.entry(key).or_insert(Value::String(String::new()));
                        if let Value::String(t) = cur {
                            t.push_str(s);
                        }
                    }
                };
                match d.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text_delta" => append(b, "text", d["text"].as_str().unwrap_or("")),
                    "thinking_delta" => append(b, "thinking", d["thinking"].as_str().unwrap_or("")),
                    "signature_delta" => {
                        if let Some(o) = b.as_object_mut() {
                            o.insert("signature".into(), d["signature"].clone());
                        }
                    }
                    "input_json_delta" => {
                        partial.push_str(d["partial_json"].as_str().unwrap_or(""))
                    }
                    "citations_delta" => {
                        if let Some(o) = b.as_object_mut() {
                            let c = o.entry("citations").or_insert(Value::Array(Vec::new()));
                            if let Value::Array(list) = c {
                                list.push(d["citation"].clone());
                            }
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(u) = v.get("usage").and_then(Value::as_object) {
                    let usage = self.usage.get_or_insert_with(Map::new);
                    for (k, n) in u {
                        if !n.is_null() {
                            usage.insert(k.clone(), n.clone());
                        }
                    }
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                self.error = Some(
                    v["error"]["message"]
                        .as_str()
                        .unwrap_or("the upstream sent an error event")
                        .to_string(),
                )
            }
            _ => {}
        }
    }

    /// The assistant row, if the answer completed; else why not.
    fn into_row(self) -> Result<Message, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.stopped {
            return Err("the stream ended before message_stop".into());
        }
        let mut content = Vec::new();
        for (b, partial) in self.blocks.into_iter().zip(self.partial) {
            let mut b = b;
            if b.is_null() {
                continue;
            }
            if !partial.is_empty()
                && let Some(o) = b.as_object_mut()
            {
                let input = serde_json::from_str(&partial)
                    .map_err(|e| format!("a tool call's input is not JSON: {e}"))?;
                o.insert("input".into(), input);
            }
            content.push(anthropic_block(0, b).map_err(|e| e.message)?);
        }
        let usage: Option<Usage> = match &self.usage {
            Some(u) => anthropic_usage(0, &Value::Object(u.clone())).map_err(|e| e.message)?,
            None => None,
        };
        let mut row = Message::new(
            crate::model::Role::Assistant,
            crate::model::Kind::Generation,
            content,
            0,
        );
        row.gen_id = self.id;
        row.usage = usage;
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, ToolContent};
    use crate::proxy::sse::Answer;

    /// The last block's breakpoint, read as a `Value` reading of the
    /// message finds it (a null one included), whatever else it holds.
    #[test]
    fn the_message_breakpoint_is_the_last_blocks() {
        let old = |raw: &str| -> Option<Value> {
            let m: Value = serde_json::from_str(raw).ok()?;
            m.get("content")?
                .as_array()?
                .iter()
                .rev()
                .find_map(|b| b.get("cache_control").cloned())
        };
        let long = "x\\n".repeat(100_000);
        for raw in [
            r#"{"role":"user","content":"go"}"#.to_string(),
            r#"{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}]}"#.to_string(),
            r#"{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":null}]}"#.to_string(),
            r#"{"role":"user","content":[7,"s",{"cache_control":1,"cache_control":2}],"content":[{"cache_control":3}]}"#.to_string(),
            format!(r#"{{"role":"user","content":[{{"type":"text","text":"{long}","cache_control":{{"type":"ephemeral","ttl":"1h"}}}}]}}"#),
            r#"{"role":"user","content":[{"cache_control":1}]"#.to_string(),
            "[]".to_string(),
        ] {
            assert_eq!(message_breakpoint(&raw), old(&raw), "{}", &raw[..60.min(raw.len())]);
        }
    }

    fn sse(events: &[Value]) -> String {
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect()
    }

    #[test]
    fn a_streamed_answer_assembles_into_the_row_the_client_sends_back() {
        let stream = sse(&[
            serde_json::json!({"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}),
            serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}),
            serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}),
            serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}),
            serde_json::json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
            serde_json::json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Rea"}}),
            serde_json::json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ding"}}),
            serde_json::json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}),
            serde_json::json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":"}}),
            serde_json::json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}),
            serde_json::json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}),
            serde_json::json!({"type":"message_stop"}),
        ]);
        let mut a = Answer::streamed(Box::new(MessagesAssembler::default()));
        // Fed in awkward pieces, as a network delivers them.
        for chunk in stream.as_bytes().chunks(7) {
            a.feed(chunk);
        }
        assert!(a.complete());
        let row = a.finish().unwrap();
        assert_eq!(row.gen_id.as_deref(), Some("msg_1"));
        let u = row.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (10, 5, 12)
        );
        let echoed = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"SIG"},{"type":"text","text":"Reading"},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a.txt"},"cache_control":{"type":"ephemeral"}}]}"#;
        let rows = message_rows(echoed, 2).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].kind, Kind::Generation);
        assert_eq!(rows[0].content, row.content);
    }

    #[test]
    fn an_interrupted_or_failed_stream_records_nothing() {
        let mut a = Answer::streamed(Box::new(MessagesAssembler::default()));
        a.feed(b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n");
        assert!(a.finish().unwrap_err().contains("before message_stop"));
        let mut a = Answer::streamed(Box::new(MessagesAssembler::default()));
        a.feed(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
        assert!(a.errored());
        assert_eq!(a.finish().unwrap_err(), "Overloaded");
        let whole = br#"{"id":"msg_w","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3,"output_tokens":1}}"#;
        let (row, _) = Answer::whole(Box::new(MessagesAssembler::default()), whole).unwrap();
        assert_eq!(row.gen_id.as_deref(), Some("msg_w"));
    }

    #[test]
    fn request_messages_become_the_importers_rows() {
        let user = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","cache_control":{"type":"ephemeral"}},{"type":"text","text":"<system-reminder>r</system-reminder>"}]}"#;
        let rows = message_rows(user, 0).unwrap();
        assert_eq!(rows[0].kind, Kind::ToolResult);
        assert!(
            matches!(&rows[0].content[0], Block::ToolResult { content: ToolContent::Text(t), .. } if t == "x")
        );
        let sys = r##"{"role":"system","content":"# Environment"}"##;
        let rows = message_rows(sys, 1).unwrap();
        assert_eq!(rows[0].kind, Kind::System);
        // A list of one text block and the same text as a string are one entry.
        let as_list = r##"{"role":"system","content":[{"type":"text","text":"# Environment","cache_control":{"type":"ephemeral"}}]}"##;
        assert_eq!(
            message_rows(as_list, 1).unwrap()[0].content,
            rows[0].content
        );
        let bad = message_rows(r#"{"role":"robot","content":"x"}"#, 3).unwrap_err();
        assert!(bad.0.contains("messages[3] has role \"robot\""), "{bad}");
    }

    #[test]
    fn the_session_is_the_header_else_metadata() {
        let meta = serde_json::json!({"user_id": "{\"device_id\":\"d\",\"session_id\":\"s-1\"}"});
        assert_eq!(session_of(None, Some(&meta)).as_deref(), Some("s-1"));
        assert_eq!(session_of(Some("h"), Some(&meta)).as_deref(), Some("h"));
        let old = serde_json::json!({"user_id": "user_ab_account__session_s-2"});
        assert_eq!(session_of(None, Some(&old)).as_deref(), Some("s-2"));
        assert_eq!(session_of(None, None), None);
    }

    #[test]
    fn the_breakpoint_goes_on_the_last_block_that_takes_one() {
        let body = r#"{"type":"thinking","thinking":"t","signature":"s","cache_control":{"type":"ephemeral"}}"#;
        let mut w = MessagesWriter::new();
        w.message(
            "user",
            vec![OutBlock::View(Block::Text { text: "a".into() })],
            body,
        );
        w.message(
            "assistant",
            vec![OutBlock::Sent(Text::of(body, body))],
            body,
        );
        w.system(r#"{"role":"system","content":"env"}"#);
        let mut out = Pieces::default();
        w.finish(
            Some(serde_json::json!({"type":"ephemeral"})),
            body,
            &mut out,
        );
        let out = out.into_bytes(&bytes::Bytes::from(body)).concat();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"[{"role":"user","content":[{"cache_control":{"type":"ephemeral"},"text":"a","type":"text"}]},{"role":"assistant","content":[{"signature":"s","thinking":"t","type":"thinking"}]},{"content":[{"text":"env","type":"text"}],"role":"system"}]"#
        );
        // A block sent without a breakpoint is kept byte for byte: a run of
        // the body, not a copy.
        let raw = r#"{"type":"text",  "text":"b"}"#;
        assert_eq!(
            sent_without_cache_control(Text::of(raw, raw), raw),
            Text::Body(0..raw.len())
        );
        let body = r#"{"role":"user","content":[{"type":"text","text":"x"}, {"type":"image","source":{}}]}"#;
        let sent = sent_blocks(body, body);
        let blocks: Vec<&str> = sent.iter().map(|t| t.as_str(body)).collect();
        assert_eq!(
            blocks,
            [
                r#"{"type":"text","text":"x"}"#,
                r#"{"type":"image","source":{}}"#
            ]
        );
        let body = r#"{"role":"user","content":"hi"}"#;
        let blocks = sent_blocks(body, body);
        assert_eq!(blocks[0].as_str(body), r#"{"type":"text","text":"hi"}"#);
        assert!(matches!(blocks[0], Text::Own(_)));
    }
}
