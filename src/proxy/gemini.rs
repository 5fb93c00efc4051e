//! The Gemini API (Gemini CLI, and any client of Google's
//! `generativelanguage` API): `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`
//! (server-sent events, each a `GenerateContentResponse` chunk) and
//! `POST …:generateContent` (one JSON answer). The conversation is
//! `contents`, a list of `{role, parts}`; the system prompt is
//! `systemInstruction`; usage is the answer's `usageMetadata`.
//!
//! What Gemini CLI 0.61 sends (measured against a loopback stand-in):
//! - no session id anywhere: a conversation is its system prompt and first
//!   user content (the CLI's `<session_context>` and the ask, two parts);
//! - the model's turn back as it took it: thought parts dropped, streamed
//!   text merged into one part, each `functionCall` given an id of its own
//!   (`read_file_<ms>_<n>`) and, when the model sent none, a synthetic
//!   `thoughtSignature` on the turn's first call. The answer and the turn
//!   sent back are compared on their text and calls only: thoughts and
//!   signatures are recorded, and forwarded as the client sends them.
//! - calls are named here by their place, `gemini-call-I-K` (the K-th call
//!   of content I): Gemini pairs a `functionResponse` with its call by
//!   order, and the ids a client sets are its own (the answer has none).
//!   The K-th response of content I answers call `gemini-call-(I-1)-K`. A
//!   content written from the view (a compacted result) takes back the
//!   name and id the client gave its call.
//! - helper calls: `:generateContent` with no `tools` and a JSON answer
//!   asked for (`responseMimeType: application/json`, a response schema):
//!   the routing classifier (the last 4 turns), loop detection (the last
//!   20) and the next-speaker check. Each carries a window of the history
//!   that slides every turn, under a system prompt of its own: recorded as
//!   a conversation it would start a task at every turn. They are side
//!   calls: forwarded as sent and recorded nowhere (the CLI bounds them
//!   itself). The CLI's compression (no tools, a text answer) is a
//!   conversation like any other, so the engine bounds it too.
//! - the key in `x-goog-api-key` (or `?key=` in the URL): forwarded, never
//!   recorded.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::body::BodyFields;
use super::convo::{BadRequest, item_object, system_rows};
use super::pieces::Text;
use super::render::ItemWriter;
use super::request::Request;
use super::sse::{Assemble, answer_json};
use crate::model::{Block, Kind, Message, Role, ToolContent, Usage};
use crate::transcript::gemini::{self as parts, Ids};
use crate::view::{View, ViewRole};

/// The prefix of the id a call is named by (see the module doc).
const CALL: &str = "gemini-call-";

/// The model call a path names: its model and whether it streams.
pub(crate) fn route(path: &str) -> Option<(&str, bool)> {
    let rest = ["/v1beta/models/", "/v1/models/", "/v1alpha/models/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?;
    let (model, action) = rest.rsplit_once(':')?;
    if model.is_empty() || model.contains('/') {
        return None;
    }
    match action {
        "streamGenerateContent" => Some((model, true)),
        "generateContent" => Some((model, false)),
        _ => None,
    }
}

/// Whether a `:generateContent` body is a helper's side call: no tools,
/// and a JSON answer asked for (see the module doc).
pub(crate) fn side_call(body: &[u8]) -> bool {
    let Ok(fields) = BodyFields::parse(body, "contents") else {
        return false;
    };
    let no_tools = fields
        .value::<Value>("tools")
        .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty));
    let json = fields.value::<Value>("generationConfig").is_some_and(|g| {
        g.get("responseMimeType").and_then(Value::as_str) == Some("application/json")
            || g.get("responseSchema").is_some()
            || g.get("responseJsonSchema").is_some()
    });
    no_tools && json
}

/// The call ids of content `item` (see the module doc).
struct Placed {
    item: usize,
}

impl Ids for Placed {
    fn call(&mut self, k: usize, _id: Option<&str>, _name: &str) -> String {
        format!("{CALL}{}-{k}", self.item)
    }

    fn response(&mut self, k: usize, _id: Option<&str>, _name: &str) -> String {
        match self.item.checked_sub(1) {
            Some(before) => format!("{CALL}{before}-{k}"),
            None => format!("{CALL}none-{k}"),
        }
    }
}

/// The call ids of an answer, whose place is known once it is recorded
/// ([`place_answer`]).
struct Unplaced;

impl Ids for Unplaced {
    fn call(&mut self, k: usize, _id: Option<&str>, _name: &str) -> String {
        format!("{CALL}?-{k}")
    }

    fn response(&mut self, k: usize, _id: Option<&str>, _name: &str) -> String {
        format!("{CALL}?-r{k}")
    }
}

/// Name an answer's calls by the place it takes: content `item`.
pub(crate) fn place_answer(answer: &mut Message, item: usize) {
    let unplaced = format!("{CALL}?-");
    for b in &mut answer.content {
        if let Block::ToolUse { id, .. } = b
            && let Some(k) = id.strip_prefix(&unplaced)
        {
            *id = format!("{CALL}{item}-{k}");
        }
    }
}

/// The system prompt: `systemInstruction`, a content or a string.
pub(crate) fn system_blocks(v: Option<Value>) -> Vec<Block> {
    let parts = match v {
        Some(Value::String(s)) => vec![Value::String(s)],
        Some(Value::Object(o)) => match o.get("parts") {
            Some(Value::Array(p)) => p.clone(),
            _ => vec![Value::Object(o)],
        },
        _ => Vec::new(),
    };
    parts
        .iter()
        .filter_map(|p| match p {
            Value::String(s) => Some(s.clone()),
            other => other
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
        .filter(|t| !t.is_empty())
        .map(|text| Block::Text { text })
        .collect()
}

/// Content `i` of a request (its exact text) as the record's rows.
pub(crate) fn content_rows(raw: &str, i: usize) -> Result<Vec<Message>, BadRequest> {
    let what = format!("contents[{i}]");
    let obj = item_object(raw, &what, "an object with \"role\" and \"parts\"")?;
    let role = obj.get("role").and_then(Value::as_str).unwrap_or("user");
    let list = parts::parts_of(obj.get("parts").unwrap_or(&Value::Null))
        .map_err(|e| BadRequest(format!("{what}: {}", e.0)))?;
    let mut ids = Placed { item: i };
    match role {
        "model" => {
            let blocks = parts::model_blocks(&list, &mut ids)
                .map_err(|e| BadRequest(format!("{what}: {}", e.0)))?;
            if blocks.is_empty() {
                return Ok(Vec::new());
            }
            Ok(vec![Message::new(
                Role::Assistant,
                Kind::Generation,
                blocks,
                0,
            )])
        }
        "user" | "function" | "tool" => {
            let blocks = parts::user_blocks(&list, &mut ids)
                .map_err(|e| BadRequest(format!("{what}: {}", e.0)))?;
            Ok(user_rows(blocks, i))
        }
        "system" => Ok(system_rows(system_blocks(Some(Value::Object(obj))))),
        other => Err(BadRequest(format!(
            "{what} has role {other:?}; expected \"user\" or \"model\""
        ))),
    }
}

/// A user content's rows: its results (with whatever came with them), or
/// its parts by kind: the client's context, a summary, the ask.
fn user_rows(blocks: Vec<Block>, i: usize) -> Vec<Message> {
    if blocks.is_empty() {
        return Vec::new();
    }
    if blocks.iter().any(|b| matches!(b, Block::ToolResult { .. })) {
        return vec![Message::new(Role::User, Kind::ToolResult, blocks, 0)];
    }
    let mut rows: Vec<Message> = Vec::new();
    for b in blocks {
        let kind = match &b {
            Block::Text { text } if parts::context_text(text) => Kind::Context,
            Block::Text { text } if parts::state_snapshot(text) && i <= 1 => Kind::CarriedSummary,
            Block::Text { text } if parts::state_snapshot(text) => Kind::CompactSummary,
            _ => Kind::Ask,
        };
        match rows.last_mut() {
            Some(r) if r.kind == kind => r.content.push(b),
            _ => rows.push(Message::new(Role::User, kind, vec![b], 0)),
        }
    }
    rows
}

/// A `usageMetadata` as usage: the prompt counts its cached tokens, and
/// the thoughts are billed as output.
fn usage(u: &Value) -> Option<Usage> {
    let o = u.as_object()?;
    let n = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cached = n("cachedContentTokenCount");
    Some(Usage {
        input_tokens: (n("promptTokenCount") + n("toolUsePromptTokenCount")).saturating_sub(cached),
        output_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    })
}

fn error_of(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    Some(
        e.get("message")
            .and_then(Value::as_str)
            .map_or_else(|| e.to_string(), str::to_string),
    )
}

/// Assembles a Gemini answer, streamed or whole, into the model row: the
/// first candidate's parts, in order.
#[derive(Default)]
pub(crate) struct GeminiAssembler {
    parts: Vec<Value>,
    usage: Option<Value>,
    id: Option<String>,
    /// A chunk carried the candidate's `finishReason`.
    finished: bool,
    /// Some chunk came.
    any: bool,
    error: Option<String>,
}

impl GeminiAssembler {
    fn chunk(&mut self, v: &Value) {
        if let Some(e) = error_of(v) {
            self.error = Some(e);
            return;
        }
        self.any = true;
        if self.id.is_none()
            && let Some(id) = v.get("responseId").and_then(Value::as_str)
        {
            self.id = Some(id.to_string());
        }
        if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(c) = v
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return;
        };
        if let Some(p) = c.pointer("/content/parts").and_then(Value::as_array) {
            self.parts.extend(p.iter().cloned());
        }
        if c.get("finishReason").is_some_and(|f| !f.is_null()) {
            self.finished = true;
        }
    }
}

impl Assemble for GeminiAssembler {
    fn event(&mut self, _name: &str, data: &[u8]) {
        if let Ok(v) = serde_json::from_slice::<Value>(data) {
            self.chunk(&v);
        }
    }

    fn whole(&mut self, body: &[u8]) -> Result<(), String> {
        match answer_json(body)? {
            // `:streamGenerateContent` without `alt=sse`: the chunks as one list.
            Value::Array(chunks) => chunks.iter().for_each(|c| self.chunk(c)),
            v => self.chunk(&v),
        }
        self.finished |= self.any;
        Ok(())
    }

    fn complete(&self) -> bool {
        self.finished || self.error.is_some()
    }

    fn errored(&self) -> bool {
        self.error.is_some()
    }

    /// Gemini's stream has no closing event: a stream that ends after its
    /// chunks is whole.
    fn complete_at_end(&self) -> bool {
        self.any
    }

    fn finish(self: Box<Self>) -> Result<Message, String> {
        if let Some(e) = self.error {
            return Err(format!("the upstream's answer is an error: {e}"));
        }
        let blocks = parts::model_blocks(&self.parts, &mut Unplaced).map_err(|e| e.0)?;
        let mut m = Message::new(Role::Assistant, Kind::Generation, blocks, 0);
        m.gen_id = self.id;
        m.usage = self.usage.as_ref().and_then(usage);
        Ok(m)
    }
}

/// Writes `contents`: the client's own contents, and contents made from
/// view blocks (a compacted result, the summary) in Gemini's shape, each
/// call and response with the name and id the client gave it.
pub(crate) struct GeminiWriter<'r> {
    req: &'r Request,
    out: Vec<Text>,
    /// Each call's name, by its id, from the view.
    names: HashMap<String, String>,
    /// The ids the client gave the calls of a content, by its index.
    client_ids: HashMap<usize, Vec<Option<String>>>,
}

impl<'r> GeminiWriter<'r> {
    pub(crate) fn new(req: &'r Request, view: &View) -> GeminiWriter<'r> {
        let names = view
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| match b {
                Block::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
                _ => None,
            })
            .collect();
        GeminiWriter {
            req,
            out: Vec::new(),
            names,
            client_ids: HashMap::new(),
        }
    }

    /// The id the client gave call `id` (`gemini-call-I-K`), if any.
    fn client_id(&mut self, id: &str) -> Option<String> {
        let (i, k) = id.strip_prefix(CALL)?.split_once('-')?;
        let (i, k): (usize, usize) = (i.parse().ok()?, k.parse().ok()?);
        if i >= self.req.items.len() {
            return None;
        }
        let req = self.req;
        let ids = self.client_ids.entry(i).or_insert_with(|| {
            let content: Value = serde_json::from_str(req.item_text(i)).unwrap_or(Value::Null);
            content
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("functionCall"))
                .map(|fc| fc.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        });
        ids.get(k).cloned().flatten()
    }

    fn part(&mut self, b: &Block, signature: Option<&str>) -> Option<Value> {
        let mut p = match b {
            Block::Text { text } => serde_json::json!({ "text": text }),
            Block::Thinking {
                thinking,
                signature,
            } => {
                let mut p = serde_json::json!({ "text": thinking, "thought": true });
                if let Some(s) = signature {
                    p["thoughtSignature"] = Value::String(s.clone());
                }
                return Some(p);
            }
            Block::ToolUse { id, name, input } => {
                let mut fc = Map::new();
                if let Some(cid) = self.client_id(id) {
                    fc.insert("id".into(), Value::String(cid));
                }
                fc.insert("name".into(), Value::String(name.clone()));
                fc.insert("args".into(), input.clone());
                serde_json::json!({ "functionCall": fc })
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut fr = Map::new();
                if let Some(cid) = self.client_id(tool_use_id) {
                    fr.insert("id".into(), Value::String(cid));
                }
                let name = self.names.get(tool_use_id).cloned().unwrap_or_default();
                fr.insert("name".into(), Value::String(name));
                let text = match content {
                    ToolContent::Text(t) => t.clone(),
                    blocks => blocks.text(),
                };
                let key = if *is_error { "error" } else { "output" };
                fr.insert("response".into(), serde_json::json!({ key: text }));
                serde_json::json!({ "functionResponse": fr })
            }
            Block::Image { source } => serde_json::json!({"inlineData": {
                "mimeType": source.media_type.as_deref().unwrap_or("image/png"),
                "data": source.data.as_deref().unwrap_or(""),
            }}),
            Block::RedactedThinking { .. } => return None,
            Block::Other(v) => v.clone(),
        };
        if let Some(s) = signature {
            p["thoughtSignature"] = Value::String(s.to_string());
        }
        Some(p)
    }
}

impl ItemWriter for GeminiWriter<'_> {
    const ITEM_HOLDS_ITS_REASONING: bool = true;

    /// A content the client sent stands for the thoughts and signatures
    /// recorded before its blocks (it carries them, or leaves them out).
    fn held_by_item(b: &Block) -> bool {
        matches!(b, Block::Thinking { .. } | Block::RedactedThinking { .. })
    }

    fn items(&self) -> &[Text] {
        &self.out
    }

    /// A content the client sent, as it sent it.
    fn sent(&mut self, _raw: &str, text: Text) {
        self.out.push(text);
    }

    fn view_items(&mut self, fragment: &View) {
        for m in &fragment.messages {
            let role = match m.role {
                ViewRole::User => "user",
                ViewRole::Assistant => "model",
            };
            // A signature rides on the block it names; the others are
            // parts of their own.
            let mut rides: HashMap<usize, &str> = HashMap::new();
            let mut own: Vec<&str> = Vec::new();
            let body: Vec<&Block> = m
                .content
                .iter()
                .filter(|b| !matches!(b, Block::RedactedThinking { .. } | Block::Thinking { .. }))
                .collect();
            for b in &m.content {
                if let Some((target, sig)) = parts::signature_of(b) {
                    match target.filter(|t| *t < body.len()) {
                        Some(t) => {
                            rides.insert(t, sig);
                        }
                        None => own.push(sig),
                    }
                }
            }
            let mut out: Vec<Value> = Vec::new();
            for b in m
                .content
                .iter()
                .filter(|b| matches!(b, Block::Thinking { .. }))
            {
                out.extend(self.part(b, None));
            }
            for (t, b) in body.iter().enumerate() {
                out.extend(self.part(b, rides.get(&t).copied()));
            }
            for s in own {
                out.push(serde_json::json!({"text": "", "thoughtSignature": s}));
            }
            if !out.is_empty() {
                self.out.push(Text::own(
                    serde_json::json!({"role": role, "parts": out}).to_string(),
                ));
            }
        }
    }

    fn since(&self, from: usize) -> (Vec<Text>, Vec<String>) {
        (self.out[from..].to_vec(), Vec::new())
    }

    fn written(&mut self, items: &[Text], _known: &[String]) {
        self.out.extend(items.iter().cloned());
    }
}

#[cfg(test)]
mod tests;
