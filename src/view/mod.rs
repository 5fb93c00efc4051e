//! Views: what is sent to the model, as canonical bytes, plus the legality
//! check every view must pass and renderings for other tools.
//!
//! The canonical form is compact JSON `{"messages":[...]}` in Anthropic
//! Messages shape, fields in a fixed order (struct order; maps sorted), one
//! trailing newline. `view_hash` is the blake3 of exactly those bytes.

pub mod session;
pub mod text;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::model::{Block, ToolContent};
use text::{block_text, image_label};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewMessage {
    pub role: ViewRole,
    pub content: Vec<Block>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ViewRole {
    User,
    Assistant,
}

/// What [`View::hash_resuming`] keeps between views: the last view's
/// messages and the hash state after each prefix of them. A cache of the
/// hash, never an input to it: any view hashes the same with any state.
#[derive(Clone, Default)]
pub struct HashResume {
    messages: Vec<ViewMessage>,
    /// `states[i]`: the hasher after the canonical bytes before message `i`.
    states: Vec<blake3::Hasher>,
    /// Keep nothing: every view is hashed from the start (a one-shot run,
    /// which would only pay for a copy of its view).
    off: bool,
    /// Keep not even the view: it is hashed message by message as it is
    /// projected, each message dropped once hashed ([`HashResume::unkept`]).
    unkept: bool,
}

impl HashResume {
    /// A resume state that keeps nothing between views.
    pub fn off() -> HashResume {
        HashResume {
            off: true,
            ..HashResume::default()
        }
    }

    /// A state for a run that needs its view's hash and measures, never its
    /// bytes: the engine hashes the view as it projects it (a
    /// [`StreamHash`]) and hands back an empty view.
    pub fn unkept() -> HashResume {
        HashResume {
            off: true,
            unkept: true,
            ..HashResume::default()
        }
    }

    /// Whether the view is hashed as it is projected and not kept.
    pub fn keeps_no_view(&self) -> bool {
        self.unkept
    }

    /// Forget the last view (whether it keeps anything stays as it was).
    pub fn reset(&mut self) {
        self.messages.clear();
        self.states.clear();
    }
}

/// Serialise `value` as compact JSON straight into `h`: the bytes are
/// hashed as they are written, through a small buffer on the stack, never
/// held whole (nor allocated: a large heap buffer per message costs more in
/// the allocator than the hashing).
pub(crate) fn hash_json(h: &mut blake3::Hasher, value: &impl Serialize) {
    struct Sink<'a> {
        h: &'a mut blake3::Hasher,
        buf: [u8; 4096],
        len: usize,
    }
    impl std::io::Write for Sink<'_> {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            if self.len + data.len() > self.buf.len() {
                self.h.update(&self.buf[..self.len]);
                self.len = 0;
            }
            if data.len() >= self.buf.len() {
                self.h.update(data);
            } else {
                self.buf[self.len..self.len + data.len()].copy_from_slice(data);
                self.len += data.len();
            }
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.h.update(&self.buf[..self.len]);
            self.len = 0;
            Ok(())
        }
    }
    let mut w = Sink {
        h,
        buf: [0; 4096],
        len: 0,
    };
    serde_json::to_writer(&mut w, value).expect("views serialise");
    std::io::Write::flush(&mut w).expect("a hasher takes every byte");
}

/// A view's hash taken message by message, in order, without the view: the
/// same bytes as [`View::hash`] hashes, each message serialised into a
/// buffer that is hashed whenever it holds `STREAM_HASH_BUFFER` bytes, and
/// then free to drop. (Large updates keep blake3 on its wide path: short
/// ones each start and end on a partly filled chunk, hashed a block at a
/// time.)
pub struct StreamHash {
    h: blake3::Hasher,
    buf: Vec<u8>,
    messages: usize,
}

/// How many bytes a [`StreamHash`] gathers before hashing them.
const STREAM_HASH_BUFFER: usize = 64 * 1024;

impl Default for StreamHash {
    fn default() -> StreamHash {
        let mut buf = Vec::with_capacity(2 * STREAM_HASH_BUFFER);
        buf.extend_from_slice(b"{\"messages\":[");
        StreamHash {
            h: blake3::Hasher::new(),
            buf,
            messages: 0,
        }
    }
}

impl StreamHash {
    /// The view's next message.
    pub fn push(&mut self, m: &ViewMessage) {
        if self.messages > 0 {
            self.buf.push(b',');
        }
        serde_json::to_writer(&mut self.buf, m).expect("views serialise");
        self.messages += 1;
        if self.buf.len() >= STREAM_HASH_BUFFER {
            self.h.update(&self.buf);
            self.buf.clear();
        }
    }

    /// The messages pushed so far.
    pub fn messages(&self) -> usize {
        self.messages
    }

    /// The view's hash, hex, as [`View::hash`] gives it.
    pub fn finish(mut self) -> String {
        self.buf.extend_from_slice(b"]}\n");
        self.h.update(&self.buf);
        self.h.finalize().to_hex().to_string()
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct View {
    pub messages: Vec<ViewMessage>,
}

impl View {
    /// The canonical bytes: compact JSON and a trailing newline.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(self).expect("views serialise");
        out.push(b'\n');
        out
    }

    /// blake3 of the canonical bytes, hex (streamed: the bytes are never
    /// held whole).
    pub fn hash(&self) -> String {
        let mut h = blake3::Hasher::new();
        hash_json(&mut h, self);
        h.update(b"\n");
        h.finalize().to_hex().to_string()
    }

    /// The same hash as [`View::hash`], resumed from the longest prefix of
    /// messages this view shares with the last view `resume` hashed: only
    /// the messages after it are serialised.
    pub fn hash_resuming(&self, resume: &mut HashResume) -> String {
        if resume.off {
            return self.hash();
        }
        let shared = self.shared_prefix(&resume.messages);
        resume.messages.truncate(shared);
        resume.states.truncate(shared + 1);
        if resume.states.is_empty() {
            let mut h = blake3::Hasher::new();
            h.update(b"{\"messages\":[");
            resume.states.push(h);
        }
        for (i, m) in self.messages.iter().enumerate().skip(shared) {
            let mut h = resume.states[i].clone();
            if i > 0 {
                h.update(b",");
            }
            hash_json(&mut h, m);
            resume.states.push(h);
            resume.messages.push(m.clone());
        }
        let mut h = resume.states[self.messages.len()].clone();
        h.update(b"]}\n");
        h.finalize().to_hex().to_string()
    }

    /// Parse canonical (or any equivalent) view JSON.
    pub fn from_json(bytes: &[u8]) -> Result<View, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// Delta encoding (saved runs, golden files): how many leading messages
    /// this view shares with the previous one; the rest is stored whole.
    pub fn shared_prefix(&self, prev: &[ViewMessage]) -> usize {
        prev.iter()
            .zip(&self.messages)
            .take_while(|(a, b)| a == b)
            .count()
    }

    /// Rebuild a view from the previous view's messages, the shared prefix
    /// length and the rest; `None` if the prefix is longer than the previous view.
    pub fn from_delta(
        prev: &[ViewMessage],
        prefix: usize,
        suffix: Vec<ViewMessage>,
    ) -> Option<View> {
        let mut messages = prev.get(..prefix)?.to_vec();
        messages.extend(suffix);
        Some(View { messages })
    }
}

/// One way a view breaks the Messages API's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Index of the offending message.
    pub message: usize,
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "message {}: {}", self.message, self.what)
    }
}

/// Check that a view is a legal Anthropic Messages request body: it starts
/// with a user message, roles alternate, no content or text block is empty,
/// every tool_result comes first in its user message and answers a tool_use
/// of the previous assistant message, every tool_use is answered by the next
/// message, and tool_use ids are unique.
pub fn validate(view: &View) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut v = |message: usize, what: String| out.push(Violation { message, what });
    if view.messages.is_empty() {
        v(0, "the view has no messages".into());
        return out;
    }
    if view.messages[0].role != ViewRole::User {
        v(0, "the first message is not from the user".into());
    }
    let mut seen_ids = HashSet::new();
    for (i, m) in view.messages.iter().enumerate() {
        if i > 0 && view.messages[i - 1].role == m.role {
            v(i, format!("two {:?} messages in a row", m.role));
        }
        if m.content.is_empty() {
            v(i, "empty content".into());
        }
        let mut past_results = false;
        for b in &m.content {
            match b {
                Block::Text { text } if text.trim().is_empty() => {
                    v(i, "an empty or whitespace-only text block".into())
                }
                Block::Thinking { thinking, .. } if thinking.is_empty() => {
                    v(i, "an empty thinking block".into())
                }
                Block::ToolUse { id, .. } => {
                    if m.role != ViewRole::Assistant {
                        v(i, format!("tool_use {id} in a user message"));
                    }
                    if !seen_ids.insert(id.clone()) {
                        v(i, format!("tool_use id {id} is used twice"));
                    }
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    if m.role != ViewRole::User {
                        v(
                            i,
                            format!("tool_result {tool_use_id} in an assistant message"),
                        );
                    }
                    if past_results {
                        v(
                            i,
                            format!("tool_result {tool_use_id} comes after other content"),
                        );
                    }
                    if tool_content_empty(content) {
                        v(i, format!("tool_result {tool_use_id} has empty content"));
                    }
                }
                Block::Other(_) => v(i, "a block type the view does not allow".into()),
                _ => {}
            }
            if !matches!(b, Block::ToolResult { .. }) {
                past_results = true;
            }
        }
        // Pairing with the neighbours.
        if m.role == ViewRole::User {
            let asked: Vec<&str> = match i.checked_sub(1).map(|p| &view.messages[p]) {
                Some(prev) if prev.role == ViewRole::Assistant => tool_ids(prev, ToolSide::Use),
                _ => Vec::new(),
            };
            for b in &m.content {
                if let Block::ToolResult { tool_use_id, .. } = b
                    && !asked.contains(&tool_use_id.as_str())
                {
                    v(
                        i,
                        format!(
                            "tool_result {tool_use_id} answers no tool_use of the previous message"
                        ),
                    );
                }
            }
        } else {
            let ids = tool_ids(m, ToolSide::Use);
            let answered = view
                .messages
                .get(i + 1)
                .map(|next| tool_ids(next, ToolSide::Result))
                .unwrap_or_default();
            for id in ids {
                if !answered.contains(&id) {
                    v(
                        i,
                        format!("tool_use {id} is not answered by the next message"),
                    );
                }
            }
        }
    }
    out
}

/// Which blocks [`tool_ids`] reads: the calls, or the results answering them.
#[derive(Clone, Copy, PartialEq)]
enum ToolSide {
    Use,
    Result,
}

/// The tool call ids of `m`'s tool_use blocks, or of the calls its
/// tool_result blocks answer.
fn tool_ids(m: &ViewMessage, side: ToolSide) -> Vec<&str> {
    m.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } if side == ToolSide::Use => Some(id.as_str()),
            Block::ToolResult { tool_use_id, .. } if side == ToolSide::Result => {
                Some(tool_use_id.as_str())
            }
            _ => None,
        })
        .collect()
}

fn tool_content_empty(c: &ToolContent) -> bool {
    match c {
        ToolContent::Text(s) => s.trim().is_empty(),
        ToolContent::Blocks(bs) => bs.is_empty(),
    }
}

/// Export formats for other tools and for people (also the `--format` flag's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The canonical Anthropic Messages body.
    Anthropic,
    /// OpenAI Chat Completions messages.
    Openai,
    /// A readable transcript.
    Markdown,
}

/// What a whole request carries besides the messages, as the transcript
/// recorded it: the system prompt and the tool definitions (Anthropic shape:
/// `{name, description, input_schema}`, or a server tool's own shape).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestHead {
    pub system: Option<String>,
    pub tools: Vec<Value>,
}

impl RequestHead {
    /// From a task's `system` rows: their text is the system prompt, a
    /// `{"type":"tools"}` block holds the tool definitions.
    pub fn from_system_blocks<'a>(blocks: impl Iterator<Item = &'a Block>) -> RequestHead {
        let mut texts = Vec::new();
        let mut tools = Vec::new();
        for b in blocks {
            match b {
                Block::Text { text } => texts.push(text.clone()),
                Block::Other(v) if v.get("type").and_then(Value::as_str) == Some("tools") => {
                    if let Some(list) = v.get("tools").and_then(Value::as_array) {
                        tools.extend(list.iter().cloned());
                    }
                }
                _ => {}
            }
        }
        RequestHead {
            system: (!texts.is_empty()).then(|| texts.join("\n\n")),
            tools,
        }
    }

    /// From a checkpoint file's `system` (a string or text blocks) and `tools`.
    pub fn from_checkpoint(v: &Value) -> RequestHead {
        let system = match v.get("system") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(parts)) => {
                let t: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                (!t.is_empty()).then(|| t.join("\n\n"))
            }
            _ => None,
        };
        let tools = v
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        RequestHead { system, tools }
    }

    pub fn is_empty(&self) -> bool {
        self.system.is_none() && self.tools.is_empty()
    }
}

/// Render a view with its request head as a whole request body, and say what
/// had to be dropped for the format. Without a head the Anthropic form is the
/// view's canonical bytes. Anthropic: `{"system","tools","messages"}`.
/// OpenAI: a standard Chat Completions body, `{"messages","tools"}`, the system
/// prompt as the first message; reasoning (no Chat Completions field carries
/// it) and server tools without an input schema are dropped with a note.
pub fn export_request(
    view: &View,
    head: &RequestHead,
    format: ExportFormat,
) -> (Vec<u8>, Vec<String>) {
    let mut notes = Vec::new();
    let bytes = match format {
        ExportFormat::Anthropic if head.is_empty() => view.canonical_bytes(),
        ExportFormat::Anthropic => {
            // Fixed field order: system, tools, then the canonical messages.
            let mut out = b"{".to_vec();
            if let Some(s) = &head.system {
                out.extend_from_slice(b"\"system\":");
                out.extend(serde_json::to_vec(s).expect("strings serialise"));
                out.push(b',');
            }
            if !head.tools.is_empty() {
                out.extend_from_slice(b"\"tools\":");
                out.extend(serde_json::to_vec(&head.tools).expect("values serialise"));
                out.push(b',');
            }
            out.extend_from_slice(&view.canonical_bytes()[1..]);
            out
        }
        ExportFormat::Openai => {
            let mut messages = Vec::new();
            if let Some(s) = &head.system {
                messages.push(json!({"role": "system", "content": s}));
            }
            let (rest, dropped) = chat_messages(view, false);
            messages.extend(rest);
            if dropped > 0 {
                notes.push(format!(
                    "{dropped} reasoning block{} dropped: Chat Completions has no field for reasoning",
                    if dropped == 1 { "" } else { "s" }
                ));
            }
            let mut tools = Vec::new();
            let mut server = 0u32;
            for t in &head.tools {
                match (t.get("name"), t.get("input_schema")) {
                    (Some(name), Some(schema)) => tools.push(json!({
                        "type": "function",
                        "function": {
                            "name": name,
                            "description": t.get("description").cloned().unwrap_or(Value::String(String::new())),
                            "parameters": schema,
                        },
                    })),
                    _ => server += 1,
                }
            }
            if server > 0 {
                notes.push(format!(
                    "{server} tool definition{} without an input schema (provider server tools) dropped",
                    if server == 1 { "" } else { "s" }
                ));
            }
            let mut body = json!({ "messages": messages });
            if !tools.is_empty() {
                body["tools"] = Value::Array(tools);
            }
            let mut out = serde_json::to_vec(&body).expect("values serialise");
            out.push(b'\n');
            out
        }
        ExportFormat::Markdown => {
            let mut out = String::new();
            if let Some(s) = &head.system {
                out.push_str(&format!("### system\n\n{s}\n\n"));
            }
            if !head.tools.is_empty() {
                let names: Vec<&str> = head
                    .tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .collect();
                out.push_str(&format!("### tools\n\n{}\n\n", names.join(", ")));
            }
            out.push_str(&to_markdown(view));
            out.into_bytes()
        }
    };
    (bytes, notes)
}

/// OpenAI Chat Completions messages: tool_use → `tool_calls`, tool_result →
/// `role: tool` messages, images → `image_url`; reasoning (no standard Chat
/// Completions field carries it) is left out, or with `keep_reasoning` sent
/// as `reasoning_content`, the field the providers that send reasoning use
/// (redacted reasoning is always left out): the messages and how many
/// reasoning blocks were left out.
pub fn chat_messages(view: &View, keep_reasoning: bool) -> (Vec<Value>, u32) {
    let mut out = Vec::new();
    let mut dropped = 0u32;
    for m in &view.messages {
        match m.role {
            ViewRole::Assistant => {
                let mut text = Vec::new();
                let mut calls = Vec::new();
                let mut reasoning = Vec::new();
                for b in &m.content {
                    match b {
                        Block::Text { text: t } => text.push(t.clone()),
                        Block::Thinking { thinking, .. } if keep_reasoning => {
                            reasoning.push(thinking.clone())
                        }
                        Block::Thinking { .. } | Block::RedactedThinking { .. } => dropped += 1,
                        Block::ToolUse { id, name, input } => calls.push(json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": serde_json::to_string(input).expect("values serialise")},
                        })),
                        other => text.push(block_text(other)),
                    }
                }
                let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { Value::String(text.join("\n\n")) }});
                if !reasoning.is_empty() {
                    msg["reasoning_content"] = Value::String(reasoning.join("\n\n"));
                }
                if !calls.is_empty() {
                    msg["tool_calls"] = Value::Array(calls);
                }
                out.push(msg);
            }
            ViewRole::User => {
                let mut parts = Vec::new();
                for b in &m.content {
                    match b {
                        Block::ToolResult {
                            tool_use_id,
                            content,
                            ..
                        } => out.push(json!({
                            "role": "tool",
                            "tool_call_id": tool_use_id,
                            "content": text::tool_content_text(content),
                        })),
                        Block::Text { text } => parts.push(json!({"type": "text", "text": text})),
                        Block::Image { source } => match (&source.data, &source.url) {
                            (Some(d), _) => parts.push(json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{d}", source.media_type.as_deref().unwrap_or("image/png"))}})),
                            (None, Some(u)) => parts.push(json!({"type": "image_url", "image_url": {"url": u}})),
                            _ => parts.push(json!({"type": "text", "text": image_label(source)})),
                        },
                        other => parts.push(json!({"type": "text", "text": block_text(other)})),
                    }
                }
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "content": parts}));
                }
            }
        }
    }
    (out, dropped)
}

/// A readable transcript of the view.
pub fn to_markdown(view: &View) -> String {
    let mut out = String::new();
    for (i, m) in view.messages.iter().enumerate() {
        let role = match m.role {
            ViewRole::User => "user",
            ViewRole::Assistant => "assistant",
        };
        out.push_str(&format!("### {} · {role}\n\n", i + 1));
        for b in &m.content {
            let text = match b {
                Block::ToolUse { .. } | Block::ToolResult { .. } | Block::Thinking { .. } => {
                    format!("```\n{}\n```", block_text(b))
                }
                _ => block_text(b),
            };
            out.push_str(&text);
            out.push_str("\n\n");
        }
    }
    out
}

#[cfg(test)]
mod tests;
