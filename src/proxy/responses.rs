//! OpenAI Responses (`POST /v1/responses`), as Codex speaks it: the request's
//! input items read into the record's rows by the Codex importer's own
//! reading of `response_item`s, the forwarded `input` written from a view,
//! and the streamed answer's output items assembled into the assistant row.
//!
//! Codex 0.171.0 reaches a custom provider (`model_providers.NAME` in
//! `config.toml`, `base_url = "http://127.0.0.1:8787/v1"`, `wire_api =
//! "responses"`, the key from `env_key`) with `POST {base_url}/responses`:
//! `model`, `input`, `tools`, `tool_choice`, `parallel_tool_calls`,
//! `reasoning`, `store: false`, `include: ["reasoning.encrypted_content"]`,
//! `prompt_cache_key` (the session id), `client_metadata` (which changes
//! from call to call) and `stream: true`; no `instructions` and no
//! `previous_response_id`: the base instructions are the first `developer`
//! message, and the whole history is sent every time, each item with its
//! `id`, reasoning with its `encrypted_content`. Headers: `authorization:
//! Bearer`, `session-id`, `thread-id`, `x-codex-window-id`,
//! `x-codex-turn-metadata`, `originator`.

use serde_json::{Map, Value};

use super::convo::{BadRequest, item_object, system_rows};
use super::pieces::Text;
use super::render::ItemWriter;
use super::sse::{Assemble, answer_json};
use crate::model::{Block, Kind, Message, Role};
use crate::transcript::codex::{CodexImporter, codex_usage};
use crate::transcript::{ObjectLines, TaskSet};

/// The text of a `developer`/`system` message's content.
pub(crate) fn instruction_blocks(content: Option<&Value>) -> Vec<Block> {
    match content {
        Some(Value::String(s)) => vec![Block::Text { text: s.clone() }],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(|t| Block::Text {
                text: t.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// One input item as the record's rows: instructions (`developer` and
/// `system` messages) as a system row, the rest as the Codex importer reads
/// a rollout's `response_item` (an item type it does not know is kept
/// whole, as a block of its own).
pub(crate) fn item_rows(raw: &str, i: usize) -> Result<Vec<Message>, BadRequest> {
    let what = format!("input[{i}]");
    let item = item_object(raw, &what, "an input item object")?;
    let ty = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    let role = item.get("role").and_then(Value::as_str).unwrap_or("");
    if ty == "message" && matches!(role, "developer" | "system") {
        return Ok(system_rows(instruction_blocks(item.get("content"))));
    }
    // Handed over whole (a large item is not copied); read again from its
    // text in the rare case the importer keeps nothing of it.
    let mut payload = item;
    payload
        .entry("type")
        .or_insert(Value::String("message".into()));
    let mut line = Map::new();
    line.insert("type".into(), Value::String("response_item".into()));
    line.insert("payload".into(), Value::Object(payload));
    let mut tasks = TaskSet::default();
    CodexImporter::default()
        .object(1, line, &mut tasks)
        .map_err(|e| BadRequest(format!("{what}: {}", e.message)))?;
    let mut rows = std::mem::take(&mut tasks.main().messages);
    if rows.is_empty() {
        let mut opaque = item_object(raw, &what, "an input item object")?;
        opaque.remove("id");
        rows.push(Message::new(
            Role::User,
            Kind::Context,
            vec![Block::Other(Value::Object(opaque))],
            0,
        ));
    }
    for r in &mut rows {
        r.gen_id = None;
        r.line = 0;
        r.timestamp = None;
    }
    Ok(rows)
}

/// The rows of a bare string `input`.
pub(crate) fn string_input_rows(raw: &str) -> Result<Vec<Message>, BadRequest> {
    let text: String = serde_json::from_str(raw).map_err(|e| BadRequest(e.to_string()))?;
    Ok(vec![Message::new(
        Role::User,
        Kind::Ask,
        vec![Block::Text { text }],
        0,
    )])
}

/// Writes the forwarded `input` array: the client's own items (ids,
/// `encrypted_content` and all) where the view holds them unchanged, else
/// items made from the view's blocks.
#[derive(Default)]
pub(crate) struct InputWriter {
    out: Vec<Text>,
    /// Call ids of Codex's freeform tools (`custom_tool_call`): their
    /// results are `custom_tool_call_output`.
    custom: Vec<String>,
}

impl ItemWriter for InputWriter {
    fn items(&self) -> &[Text] {
        &self.out
    }

    /// An item the client sent (`raw`), as it sent it.
    fn sent(&mut self, raw: &str, text: Text) {
        // Only its type and call id are read (a large item is not copied).
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(rename = "type", borrow)]
            ty: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow)]
            call_id: Option<std::borrow::Cow<'a, str>>,
        }
        if let Ok(Head {
            ty: Some(ty),
            call_id: Some(id),
        }) = serde_json::from_str::<Head<'_>>(raw)
            && ty == "custom_tool_call"
        {
            self.custom.push(id.into_owned());
        }
        self.out.push(text);
    }

    fn view_items(&mut self, fragment: &crate::view::View) {
        for mut item in crate::view::session::responses_items(fragment) {
            let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
            let id = item
                .get("call_id")
                .and_then(Value::as_str)
                .map(str::to_string);
            match (ty, id) {
                ("custom_tool_call", Some(id)) => self.custom.push(id),
                ("function_call_output", Some(id)) if self.custom.contains(&id) => {
                    item["type"] = Value::String("custom_tool_call_output".into());
                }
                _ => {}
            }
            self.out.push(Text::own(item.to_string()));
        }
    }

    /// The items written from `from` on, and the freeform calls among all
    /// written (for the caller to keep and hand back with [`ItemWriter::written`]).
    fn since(&self, from: usize) -> (Vec<Text>, Vec<String>) {
        (self.out[from..].to_vec(), self.custom.clone())
    }

    /// Items of a view message written before, as they were.
    fn written(&mut self, items: &[Text], custom: &[String]) {
        self.out.extend(items.iter().cloned());
        for c in custom {
            if !self.custom.contains(c) {
                self.custom.push(c.clone());
            }
        }
    }
}

/// Assembles a Responses answer, streamed or whole, into the assistant row.
#[derive(Default)]
pub(crate) struct ResponsesAssembler {
    id: Option<String>,
    items: Vec<(u64, Value)>,
    usage: Option<Value>,
    completed: bool,
    error: Option<String>,
}

impl Assemble for ResponsesAssembler {
    fn event(&mut self, _name: &str, data: &[u8]) {
        if let Ok(v) = serde_json::from_slice::<Value>(data) {
            self.on_event(v);
        }
    }

    fn whole(&mut self, body: &[u8]) -> Result<(), String> {
        let v = answer_json(body)?;
        self.whole_response(&v);
        match v["status"].as_str() {
            Some("completed") | None => self.completed = true,
            Some(other) => self.error = Some(format!("the response is {other}")),
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.completed || self.error.is_some()
    }

    fn errored(&self) -> bool {
        self.error.is_some()
    }

    fn finish(self: Box<Self>) -> Result<Message, String> {
        (*self).into_row()
    }
}

impl ResponsesAssembler {
    fn on_event(&mut self, v: Value) {
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "response.created" | "response.in_progress" => {
                if let Some(id) = v["response"]["id"].as_str() {
                    self.id = Some(id.to_string());
                }
            }
            "response.output_item.done" => {
                let i = v["output_index"]
                    .as_u64()
                    .unwrap_or(self.items.len() as u64);
                self.items.push((i, v["item"].clone()));
            }
            "response.completed" => {
                let r = &v["response"];
                self.whole_response(r);
                self.completed = true;
            }
            "response.failed" | "response.incomplete" => {
                let r = &v["response"];
                self.error = Some(
                    r["error"]["message"]
                        .as_str()
                        .or(r["incomplete_details"]["reason"].as_str())
                        .unwrap_or("the response did not complete")
                        .to_string(),
                );
            }
            "error" => {
                self.error = Some(
                    v["message"]
                        .as_str()
                        .or(v["error"]["message"].as_str())
                        .unwrap_or("the upstream sent an error event")
                        .to_string(),
                )
            }
            _ => {}
        }
    }

    /// A whole response object: its id, usage and (when no item came
    /// streamed) its output.
    fn whole_response(&mut self, r: &Value) {
        if let Some(id) = r["id"].as_str() {
            self.id = Some(id.to_string());
        }
        if r.get("usage").is_some_and(|u| !u.is_null()) {
            self.usage = Some(r["usage"].clone());
        }
        if self.items.is_empty()
            && let Some(out) = r["output"].as_array()
        {
            self.items = out
                .iter()
                .enumerate()
                .map(|(i, it)| (i as u64, it.clone()))
                .collect();
        }
    }

    fn into_row(mut self) -> Result<Message, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.completed {
            return Err("the stream ended before response.completed".into());
        }
        self.items.sort_by_key(|(i, _)| *i);
        let mut content = Vec::new();
        for (i, (_, item)) in self.items.iter().enumerate() {
            let raw = item.to_string();
            for row in item_rows(&raw, i).map_err(|e| e.0)? {
                content.extend(row.content);
            }
        }
        let mut row = Message::new(Role::Assistant, Kind::Generation, content, 0);
        row.gen_id = self.id;
        row.usage = self.usage.as_ref().map(|u| {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            codex_usage(
                n(&u["input_tokens"]),
                n(&u["input_tokens_details"]["cached_tokens"]),
                n(&u["output_tokens"]),
            )
        });
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::sse::Answer;

    #[test]
    fn output_items_assemble_into_the_row_the_client_sends_back() {
        let items = [
            serde_json::json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"why"}],"encrypted_content":"ENC"}),
            serde_json::json!({"type":"function_call","id":"fc_1","status":"completed","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}),
        ];
        let mut stream = String::new();
        stream.push_str("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\n");
        for (i, it) in items.iter().enumerate() {
            stream.push_str(&format!(
                "event: response.output_item.done\ndata: {}\n\n",
                serde_json::json!({"type":"response.output_item.done","output_index":i,"item":it})
            ));
        }
        stream.push_str("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"usage\":{\"input_tokens\":100,\"input_tokens_details\":{\"cached_tokens\":60},\"output_tokens\":7}}}\n\n");
        let mut a = Answer::streamed(Box::new(ResponsesAssembler::default()));
        for c in stream.as_bytes().chunks(5) {
            a.feed(c);
        }
        assert!(a.complete());
        let row = a.finish().unwrap();
        assert_eq!(row.gen_id.as_deref(), Some("resp_1"));
        let u = row.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (40, 60, 7)
        );
        // The client sends the two items back (with ids): the same blocks.
        let mut echoed = Vec::new();
        for (i, it) in items.iter().enumerate() {
            for r in item_rows(&it.to_string(), i).unwrap() {
                assert_eq!(r.kind, Kind::Generation);
                echoed.extend(r.content);
            }
        }
        assert_eq!(echoed, row.content);
        assert!(
            matches!(&row.content[0], Block::Thinking { signature: Some(s), .. } if s == "ENC")
        );
    }

    #[test]
    fn instructions_are_system_rows_and_unknown_items_are_kept_whole() {
        let dev = r#"{"type":"message","id":"m1","role":"developer","content":[{"type":"input_text","text":"You are Codex"}]}"#;
        let rows = item_rows(dev, 0).unwrap();
        assert_eq!(rows[0].kind, Kind::System);
        let env = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}"#;
        assert_eq!(item_rows(env, 1).unwrap()[0].kind, Kind::Context);
        let ask =
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}"#;
        assert_eq!(item_rows(ask, 2).unwrap()[0].kind, Kind::Ask);
        let odd = r#"{"type":"compaction","id":"c1","encrypted_content":"E"}"#;
        let rows = item_rows(odd, 3).unwrap();
        assert!(
            matches!(&rows[0].content[0], Block::Other(v) if v["encrypted_content"] == "E" && v.get("id").is_none())
        );
        assert!(
            item_rows("[1]", 4)
                .unwrap_err()
                .0
                .contains("input[4] is a list")
        );
    }

    #[test]
    fn a_failed_or_cut_response_records_nothing() {
        let mut a = Answer::streamed(Box::new(ResponsesAssembler::default()));
        a.feed(b"data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"message\":\"rate limited\"}}}\n\n");
        assert_eq!(a.finish().unwrap_err(), "rate limited");
        let mut a = Answer::streamed(Box::new(ResponsesAssembler::default()));
        a.feed(b"data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n");
        assert!(
            a.finish()
                .unwrap_err()
                .contains("before response.completed")
        );
    }
}
