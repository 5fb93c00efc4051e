//! A view written back as an agent's own session file, so the agent resumes
//! from the compacted history: Claude Code (a `compact_boundary` line, an
//! `isCompactSummary` user line, then one line per kept message) and Codex (a
//! `session_meta` line, then one `compacted` item whose `replacement_history`
//! is the view as Responses-API items). The lines name the client version the
//! file is for, the source's git branch and title, as the client's own do.
//!
//! Pure: the session id and the timestamp come in from the caller (the only
//! place a clock or randomness enters), and every line uuid is derived from
//! the view, so two files written from one view differ only in those two.
//!
//! Before rendering, [`adapt`] makes the view acceptable to the target
//! provider: content one provider cannot take from another (a Codex
//! `encrypted_content` is not an Anthropic thinking signature, an Anthropic
//! signature means nothing to OpenAI) is dropped with a note, never passed
//! through; tool ids the target would refuse are rewritten consistently.

use serde_json::{Map, Value, json};

use super::text::tool_content_text;
use super::{View, ViewMessage, ViewRole};
use crate::model::{Block, Format, ToolContent};

/// The session formats `compact --write-session` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SessionKind {
    /// A Claude Code session (`claude --resume <id>`).
    ClaudeCode,
    /// A Codex rollout (`codex resume <id>`).
    Codex,
}

impl SessionKind {
    /// The provider family whose API the client speaks.
    pub fn provider(self) -> Vendor {
        match self {
            SessionKind::ClaudeCode => Vendor::Anthropic,
            SessionKind::Codex => Vendor::OpenAi,
        }
    }
}

/// Whose signatures and encrypted reasoning a block carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Anthropic,
    OpenAi,
    /// Gemini's thought signatures, which no other provider takes.
    Google,
}

impl Vendor {
    /// The provider a transcript format's reasoning blocks came from.
    pub fn of(format: Format) -> Vendor {
        match format {
            Format::ClaudeCode | Format::Anthropic => Vendor::Anthropic,
            // OpenCode's reasoning carries no signature an Anthropic API would take.
            Format::Codex | Format::OpenaiChat | Format::Opencode => Vendor::OpenAi,
            Format::GeminiCli => Vendor::Google,
        }
    }
}

/// Text put where a message's only content was dropped (a message cannot be empty).
pub const OMITTED: &str = "(reasoning from another provider omitted)";

/// The view as the target provider can accept it, and what was changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Adapted {
    pub view: View,
    pub notes: Vec<String>,
}

/// Make a view acceptable to `target` when its reasoning came from `source`:
/// reasoning blocks are kept only when both are the same provider (and, for
/// Anthropic, only signed ones); tool ids outside `[A-Za-z0-9_-]` are rewritten
/// (the same way in the call and its result) for Anthropic.
pub fn adapt(view: &View, source: Vendor, target: Vendor) -> Adapted {
    let mut dropped = 0u32;
    let mut renamed = 0u32;
    let mut messages = Vec::with_capacity(view.messages.len());
    for m in &view.messages {
        let mut content = Vec::with_capacity(m.content.len());
        for b in &m.content {
            match b {
                Block::Thinking { signature, .. } => {
                    let keep = source == target
                        && (target == Vendor::OpenAi
                            || signature.as_deref().is_some_and(|s| !s.is_empty()));
                    if keep {
                        content.push(b.clone());
                    } else {
                        dropped += 1;
                    }
                }
                Block::RedactedThinking { .. } => {
                    if source == target {
                        content.push(b.clone());
                    } else {
                        dropped += 1;
                    }
                }
                Block::ToolUse { id, name, input } if target == Vendor::Anthropic => {
                    let safe = safe_id(id);
                    renamed += u32::from(safe != *id);
                    content.push(Block::ToolUse {
                        id: safe,
                        name: safe_id(name),
                        input: input.clone(),
                    });
                }
                Block::ToolResult {
                    tool_use_id,
                    content: c,
                    is_error,
                } if target == Vendor::Anthropic => content.push(Block::ToolResult {
                    tool_use_id: safe_id(tool_use_id),
                    content: c.clone(),
                    is_error: *is_error,
                }),
                other => content.push(other.clone()),
            }
        }
        if content.is_empty() {
            content.push(Block::Text {
                text: OMITTED.to_string(),
            });
        }
        messages.push(ViewMessage {
            role: m.role,
            content,
        });
    }
    let mut notes = Vec::new();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} reasoning block{} dropped: {}",
            if dropped == 1 { "" } else { "s" },
            match (source, target) {
                (Vendor::OpenAi, Vendor::Anthropic) =>
                    "Codex/OpenAI encrypted reasoning is not an Anthropic thinking signature",
                (Vendor::Anthropic, Vendor::OpenAi) =>
                    "Anthropic thinking signatures mean nothing to an OpenAI model",
                (Vendor::Google, _) =>
                    "Gemini thoughts and thought signatures mean nothing to another provider",
                _ => "unsigned thinking cannot be sent back to Anthropic",
            }
        ));
    }
    if renamed > 0 {
        notes.push(format!(
            "{renamed} tool call id{} rewritten to Anthropic's [A-Za-z0-9_-] alphabet",
            if renamed == 1 { "" } else { "s" }
        ));
    }
    Adapted {
        view: View { messages },
        notes,
    }
}

/// An id or tool name in Anthropic's alphabet (`[A-Za-z0-9_-]`, 1 to 128 chars).
fn safe_id(id: &str) -> String {
    let mut s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if s.is_empty() {
        s.push('_');
    }
    s
}

/// The client version a written session names when its source is another
/// client's (or did not record one): the versions `tests/cli/resume.rs`
/// resumes written sessions with, as `clients/package.json` pins them.
pub const CLAUDE_CODE_VERSION: &str = "2.1.332";
pub const CODEX_VERSION: &str = "0.171.0";

/// What a written session needs besides the view.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionParams<'a> {
    /// The new session id (a UUID).
    pub session_id: &'a str,
    /// ISO-8601 UTC with milliseconds, the time every line is stamped with.
    pub timestamp: &'a str,
    /// The working directory the session belongs to.
    pub cwd: &'a str,
    /// The model recorded for the source session, if any.
    pub model: Option<&'a str>,
    /// Tokens of the history before compaction (Claude Code's `preTokens`).
    pub pre_tokens: u64,
    /// The version of the client the file is for, as its lines name it
    /// (Claude Code's `version`, Codex's `cli_version`).
    pub version: &'a str,
    /// The git branch the source session was on, when it recorded one.
    pub git_branch: Option<&'a str>,
    /// The source session's title (Claude Code: a `custom-title` line; for
    /// Codex see [`codex_index_entry`]).
    pub title: Option<&'a str>,
}

/// A UUID-shaped id (version 4 layout) derived from `seed`: deterministic.
pub fn uuid_from(seed: &[u8]) -> String {
    let h = blake3::hash(seed);
    let mut b = [0u8; 16];
    b.copy_from_slice(&h.as_bytes()[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Whether the first block of the view is compactor's `## Task Context` summary.
pub fn summary_text(view: &View) -> Option<&str> {
    let first = view.messages.first()?;
    match (first.role, first.content.first()) {
        (ViewRole::User, Some(Block::Text { text })) if text.starts_with("## Task Context") => {
            Some(text)
        }
        _ => None,
    }
}

fn jsonl(lines: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        serde_json::to_writer(&mut out, l).expect("values serialise");
        out.push(b'\n');
    }
    out
}

/// The Claude Code session file for an (adapted) view: a `compact_boundary`,
/// the first message as the `isCompactSummary` line when it is a summary, then
/// one line per message, chained by `parentUuid`, and the title last.
pub fn claude_code_session(view: &View, p: &SessionParams) -> Vec<u8> {
    let seed = view.hash();
    let envelope = |ty: &str, uuid: &str, parent: Option<&str>| -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("parentUuid".into(), json!(parent));
        m.insert("isSidechain".into(), json!(false));
        m.insert("userType".into(), json!("external"));
        m.insert("cwd".into(), json!(p.cwd));
        m.insert("sessionId".into(), json!(p.session_id));
        m.insert("version".into(), json!(p.version));
        m.insert("gitBranch".into(), json!(p.git_branch.unwrap_or("")));
        m.insert("type".into(), json!(ty));
        m.insert("uuid".into(), json!(uuid));
        m.insert("timestamp".into(), json!(p.timestamp));
        m
    };
    let mut lines = Vec::new();
    let boundary = uuid_from(format!("{seed}:boundary").as_bytes());
    let mut b = envelope("system", &boundary, None);
    b.insert("subtype".into(), json!("compact_boundary"));
    b.insert("content".into(), json!("Conversation compacted"));
    b.insert("isMeta".into(), json!(false));
    b.insert("level".into(), json!("info"));
    b.insert("logicalParentUuid".into(), Value::Null);
    b.insert(
        "compactMetadata".into(),
        json!({"trigger": "manual", "preTokens": p.pre_tokens}),
    );
    lines.push(Value::Object(b));
    let has_summary = summary_text(view).is_some();
    let mut parent = boundary;
    for (i, m) in view.messages.iter().enumerate() {
        let uuid = uuid_from(format!("{seed}:{i}").as_bytes());
        let l = match m.role {
            ViewRole::User => {
                let mut l = envelope("user", &uuid, Some(&parent));
                l.insert(
                    "message".into(),
                    json!({"role": "user", "content": blocks_json(&m.content)}),
                );
                if i == 0 && has_summary {
                    l.insert("isCompactSummary".into(), json!(true));
                    l.insert("isVisibleInTranscriptOnly".into(), json!(true));
                }
                if m.content
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult { .. }))
                {
                    l.insert("sourceToolAssistantUUID".into(), json!(parent));
                }
                l
            }
            ViewRole::Assistant => {
                let mut l = envelope("assistant", &uuid, Some(&parent));
                let calls = m.content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
                l.insert(
                    "message".into(),
                    json!({
                        "id": format!("msg_compactor_{}", &uuid_from(format!("{seed}:msg:{i}").as_bytes())[..8]),
                        "type": "message",
                        "role": "assistant",
                        "model": p.model.unwrap_or("compactor"),
                        "content": blocks_json(&m.content),
                        "stop_reason": if calls { "tool_use" } else { "end_turn" },
                        "stop_sequence": null,
                        "usage": {"input_tokens": 0, "output_tokens": 0},
                    }),
                );
                l
            }
        };
        lines.push(Value::Object(l));
        parent = uuid;
    }
    // The title as Claude Code writes a session's name (and lists it by).
    if let Some(title) = p.title {
        lines
            .push(json!({"type": "custom-title", "customTitle": title, "sessionId": p.session_id}));
    }
    jsonl(&lines)
}

fn blocks_json(blocks: &[Block]) -> Value {
    serde_json::to_value(blocks).expect("blocks serialise")
}

/// The Codex rollout for an (adapted) view: `session_meta`, a `turn_context`
/// naming the model when one is known (as Codex writes one before every
/// call: re-imported, the session keeps its model, its window and prices),
/// then a `compacted` item whose `replacement_history` is the whole view as
/// Responses-API items.
pub fn codex_session(view: &View, p: &SessionParams) -> Vec<u8> {
    let mut meta = json!({
        "timestamp": p.timestamp,
        "type": "session_meta",
        "payload": {
            "id": p.session_id,
            "timestamp": p.timestamp,
            "cwd": p.cwd,
            "originator": "compactor",
            "cli_version": p.version,
            "source": "cli",
        },
    });
    if let Some(branch) = p.git_branch {
        meta["payload"]["git"] = json!({"branch": branch});
    }
    let mut lines = vec![meta];
    if let Some(model) = p.model {
        // The fields every Codex version's `turn_context` carries; the model
        // is what an import reads of it, the policies are the most
        // restrictive (the resume tests run the pinned Codex over such a
        // file).
        lines.push(json!({
            "timestamp": p.timestamp,
            "type": "turn_context",
            "payload": {
                "cwd": p.cwd,
                "approval_policy": "never",
                "sandbox_policy": {"type": "read-only"},
                "model": model,
                "summary": "auto",
            },
        }));
    }
    lines.push(json!({
        "timestamp": p.timestamp,
        "type": "compacted",
        "payload": {
            "message": summary_text(view).unwrap_or(""),
            "replacement_history": responses_items(view),
        },
    }));
    jsonl(&lines)
}

/// The line Codex keeps a session's name in: its `session_index.jsonl`
/// (under `$CODEX_HOME`, append-only, the latest entry for an id wins), by
/// which `codex resume` lists and finds sessions.
pub fn codex_index_entry(session_id: &str, title: &str, timestamp: &str) -> Vec<u8> {
    jsonl(&[json!({"id": session_id, "thread_name": title, "updated_at": timestamp})])
}

/// The view as OpenAI Responses-API input items, in order: user text and
/// images as `message` items, tool results as `function_call_output` (or
/// `custom_tool_call_output`), assistant text as `message` items, tool calls
/// as `function_call` (`custom_tool_call` for Codex's freeform tools), reasoning
/// as `reasoning` items.
pub fn responses_items(view: &View) -> Vec<Value> {
    let mut items = Vec::new();
    let mut custom_calls: Vec<String> = Vec::new();
    for m in &view.messages {
        let mut parts: Vec<Value> = Vec::new();
        let flush = |parts: &mut Vec<Value>, items: &mut Vec<Value>, role: &str| {
            if !parts.is_empty() {
                items.push(
                    json!({"type": "message", "role": role, "content": std::mem::take(parts)}),
                );
            }
        };
        let role = match m.role {
            ViewRole::User => "user",
            ViewRole::Assistant => "assistant",
        };
        let text_type = match m.role {
            ViewRole::User => "input_text",
            ViewRole::Assistant => "output_text",
        };
        for b in &m.content {
            match b {
                Block::Text { text } => parts.push(json!({"type": text_type, "text": text})),
                Block::Image { source } if m.role == ViewRole::User => {
                    let url = match (&source.data, &source.url) {
                        (Some(d), _) => format!(
                            "data:{};base64,{d}",
                            source.media_type.as_deref().unwrap_or("image/png")
                        ),
                        (None, Some(u)) => u.clone(),
                        (None, None) => String::new(),
                    };
                    parts.push(json!({"type": "input_image", "image_url": url}));
                }
                Block::ToolUse { id, name, input } => {
                    flush(&mut parts, &mut items, role);
                    items.push(tool_call_item(id, name, input, &mut custom_calls));
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    flush(&mut parts, &mut items, role);
                    let ty = if custom_calls.contains(tool_use_id) {
                        "custom_tool_call_output"
                    } else {
                        "function_call_output"
                    };
                    items.push(
                        json!({"type": ty, "call_id": tool_use_id, "output": tool_output(content)}),
                    );
                }
                Block::Thinking {
                    thinking,
                    signature,
                } => {
                    flush(&mut parts, &mut items, role);
                    let mut r = json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": thinking}], "content": null});
                    if let Some(s) = signature {
                        r["encrypted_content"] = json!(s);
                    }
                    items.push(r);
                }
                Block::RedactedThinking { data } => {
                    flush(&mut parts, &mut items, role);
                    items.push(json!({"type": "reasoning", "summary": [], "content": null, "encrypted_content": data}));
                }
                other => {
                    parts.push(json!({"type": text_type, "text": super::text::block_text(other)}))
                }
            }
        }
        flush(&mut parts, &mut items, role);
    }
    items
}

/// A tool call as Codex records it: Codex's freeform tools (`apply_patch`,
/// recorded with a raw `input`) go back as `custom_tool_call`; the rest as
/// `function_call` with JSON-string arguments.
fn tool_call_item(id: &str, name: &str, input: &Value, custom: &mut Vec<String>) -> Value {
    let only = |key: &str| -> Option<&str> {
        let o = input.as_object()?;
        (o.len() == 1).then(|| o.get(key)?.as_str()).flatten()
    };
    if let Some(raw) = only("input").filter(|_| name == "apply_patch") {
        custom.push(id.to_string());
        return json!({"type": "custom_tool_call", "status": "completed", "call_id": id, "name": name, "input": raw});
    }
    let arguments = match only("arguments") {
        Some(raw) => raw.to_string(),
        None => serde_json::to_string(input).expect("values serialise"),
    };
    json!({"type": "function_call", "name": name, "arguments": arguments, "call_id": id})
}

/// A tool result's output: text, or content items when it holds images.
fn tool_output(content: &ToolContent) -> Value {
    match content {
        ToolContent::Blocks(bs) if bs.iter().any(|b| matches!(b, Block::Image { .. })) => {
            let items: Vec<Value> = bs
                .iter()
                .map(|b| match b {
                    Block::Image { source } if source.data.is_some() => json!({
                        "type": "input_image",
                        "image_url": format!("data:{};base64,{}", source.media_type.as_deref().unwrap_or("image/png"), source.data.as_deref().unwrap_or("")),
                    }),
                    other => json!({"type": "input_text", "text": super::text::block_text(other)}),
                })
                .collect();
            Value::Array(items)
        }
        other => Value::String(tool_content_text(other)),
    }
}

#[cfg(test)]
mod tests;
