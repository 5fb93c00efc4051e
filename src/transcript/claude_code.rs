//! Claude Code session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`).
//!
//! Quirks handled here (see the corpus's FORMATS.md):
//! - one API response is written as one line per content block, all sharing
//!   `message.id`; the lines of a response with parallel tool calls interleave
//!   with their tool results. Rows keep that split; `gen_id` groups them.
//! - sidechain lines (inline in 1.0.x, `agent-*.jsonl` files later) become
//!   their own tasks, keyed `agent-<agentId>` or `sidechain-<root uuid>`.
//! - `progress` lines embed copies of subagent messages: never imported.
//! - `summary` lines are titles; `isCompactSummary` users and 1.0.x
//!   continuation texts are the agent's own compaction summaries, not asks.
//! - a line repeated with the same `uuid` is imported once.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{anthropic_content, anthropic_usage, first_text, shape};
use super::{
    Digest, DigestMap, Importer, LineError, LineOutcome, LineResult, TaskSet, expected_line,
};
use crate::model::{Block, Format, Kind, Message, Role};

/// The text Claude Code puts at the head of a resumed session's summary.
pub(crate) const CONTINUATION_PREFIX: &str =
    "This session is being continued from a previous conversation that ran out of context";

#[derive(Default)]
pub(crate) struct ClaudeCodeImporter {
    /// The uuids of the lines imported.
    seen_uuids: DigestMap<()>,
    /// uuid → task key, for sidechain lines (their parent decides their task).
    sidechain_task: HashMap<String, String>,
    last_sidechain_key: Option<String>,
    /// Tasks whose request shape is already recorded.
    shape_seen: HashSet<String>,
}

/// The fields of a line we use; everything else is skipped without building values.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Cow<'a, str>>,
    uuid: Option<String>,
    #[serde(rename = "parentUuid")]
    parent_uuid: Option<String>,
    #[serde(rename = "isSidechain")]
    is_sidechain: Option<bool>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    #[serde(rename = "isMeta")]
    is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary")]
    is_compact_summary: Option<bool>,
    #[serde(rename = "isApiErrorMessage")]
    is_api_error: Option<bool>,
    timestamp: Option<String>,
    subtype: Option<String>,
    summary: Option<String>,
    #[serde(rename = "customTitle")]
    custom_title: Option<String>,
    cwd: Option<String>,
    version: Option<String>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(rename = "compactMetadata")]
    compact_metadata: Option<Value>,
    /// `api-request-shape`: `{system, tools}`.
    shape: Option<Value>,
    /// `api-request`: the request parameters (`model`, ...).
    params: Option<Value>,
}

#[derive(Deserialize)]
struct ApiMessage {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    content: Value,
    usage: Option<Value>,
}

const EXPECTED: &str = expected_line(Format::ClaudeCode);

impl Importer for ClaudeCodeImporter {
    fn format(&self) -> Format {
        Format::ClaudeCode
    }

    fn line(&mut self, line: u64, text: &str, tasks: &mut TaskSet) -> LineResult {
        let l: Line = match serde_json::from_str(text) {
            Ok(l) => l,
            Err(e) => {
                // A valid JSON value of the wrong shape deserves a clearer message.
                if e.is_data()
                    && let Ok(v) = serde_json::from_str::<Value>(text)
                    && !v.is_object()
                {
                    return Err(shape(
                        line,
                        format!(
                            "the line is {}; expected {EXPECTED}",
                            super::common::type_name(&v)
                        ),
                    ));
                }
                return Err(LineError::from_json(line, &e, EXPECTED));
            }
        };
        let Some(ty) = l.ty.as_deref() else {
            return Err(shape(
                line,
                "the object has no \"type\"; expected a Claude Code line such as {\"type\":\"user\",\"message\":{...}}",
            ));
        };
        match ty {
            "user" | "assistant" => self.conversation(line, ty, &l, tasks),
            "summary" => {
                let Some(title) = &l.summary else {
                    return Err(shape(
                        line,
                        "summary line without \"summary\"; expected a title string",
                    ));
                };
                // Auto titles come early and often: the first one names the task.
                push_title(tasks, line, &l, title, false);
                Ok(LineOutcome::Imported)
            }
            "custom-title" => match &l.custom_title {
                // A title the user set replaces any other.
                Some(title) => {
                    push_title(tasks, line, &l, title, true);
                    Ok(LineOutcome::Imported)
                }
                None => Ok(LineOutcome::NotConversation),
            },
            "system" => match l.subtype.as_deref() {
                Some("compact_boundary") | Some("microcompact_boundary") => {
                    if !self.first_sight(&l) {
                        return Ok(LineOutcome::Duplicate);
                    }
                    let label = l
                        .content
                        .and_then(|c| serde_json::from_str::<String>(c.get()).ok())
                        .unwrap_or_else(|| "Conversation compacted".to_string());
                    let pre = l
                        .compact_metadata
                        .as_ref()
                        .and_then(|m| m.get("preTokens"))
                        .and_then(Value::as_u64);
                    let text = match pre {
                        Some(p) => format!(
                            "{label} ({}, {p} tokens before)",
                            l.subtype.as_deref().unwrap_or("")
                        ),
                        None => format!("{label} ({})", l.subtype.as_deref().unwrap_or("")),
                    };
                    let mut m = Message::new(
                        Role::Meta,
                        Kind::CompactBoundary,
                        vec![Block::Text { text }],
                        line,
                    );
                    m.source_uuid = l.uuid.clone();
                    m.timestamp = l.timestamp.clone();
                    let key = self.task_key(&l);
                    tasks.task(&key).push(m);
                    Ok(LineOutcome::Imported)
                }
                _ => Ok(LineOutcome::NotConversation),
            },
            // Claude Code 2.1.3xx records the request it sends: the shape
            // (system prompt and tools) once per change, the parameters
            // (model) per call. The first shape becomes the task's system
            // row; the model names the task when no response did yet.
            "api-request-shape" => {
                let key = self.task_key(&l);
                let task = tasks.task(&key);
                if self.shape_seen.insert(key) {
                    let shape = l.shape.unwrap_or(Value::Null);
                    let mut content = Vec::new();
                    match shape.get("system") {
                        Some(Value::String(s)) => content.push(Block::Text { text: s.clone() }),
                        Some(Value::Array(parts)) => {
                            for p in parts {
                                if let Some(t) = p.get("text").and_then(Value::as_str) {
                                    content.push(Block::Text {
                                        text: t.to_string(),
                                    });
                                }
                            }
                        }
                        _ => {}
                    }
                    if let Some(tools @ Value::Array(_)) = shape.get("tools") {
                        content.push(Block::Other(
                            serde_json::json!({"type": "tools", "tools": tools}),
                        ));
                    }
                    if content.is_empty() {
                        return Ok(LineOutcome::NotConversation);
                    }
                    let mut m = Message::new(Role::Meta, Kind::System, content, line);
                    m.timestamp = l.timestamp.clone();
                    task.push(m);
                    return Ok(LineOutcome::Imported);
                }
                Ok(LineOutcome::NotConversation)
            }
            "api-request" => {
                let key = self.task_key(&l);
                let task = tasks.task(&key);
                if task.meta.model.is_none() {
                    task.meta.model = l
                        .params
                        .as_ref()
                        .and_then(|p| p.get("model"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                Ok(LineOutcome::NotConversation)
            }
            // Copies of request messages (`api-request-blob`, whose `system`
            // role is the client's own injected context), cost and session
            // bookkeeping: not conversation, skipped on purpose.
            "api-request-blob" | "cost-state" | "atis-latch" | "mode" | "tools-used" => {
                Ok(LineOutcome::NotConversation)
            }
            "progress"
            | "file-history-snapshot"
            | "queue-operation"
            | "last-prompt"
            | "attachment"
            | "tag"
            | "agent-name"
            | "pr-link" => Ok(LineOutcome::NotConversation),
            other => Ok(LineOutcome::Unknown(other.to_string())),
        }
    }
}

impl ClaudeCodeImporter {
    /// False when this uuid was already imported from this file (a copied line).
    fn first_sight(&mut self, l: &Line) -> bool {
        match &l.uuid {
            Some(u) => self.seen_uuids.insert(Digest::of(u), ()).is_none(),
            None => true,
        }
    }

    /// Which task a line belongs to: "" for the main session, else its sidechain.
    fn task_key(&mut self, l: &Line) -> String {
        if !l.is_sidechain.unwrap_or(false) {
            return String::new();
        }
        let key = if let Some(agent) = &l.agent_id {
            format!("agent-{agent}")
        } else {
            let parent = l
                .parent_uuid
                .as_ref()
                .and_then(|p| self.sidechain_task.get(p));
            match (parent, &l.parent_uuid) {
                (Some(k), _) => k.clone(),
                // A new sidechain root (1.0.x inline Task runs start with parentUuid null).
                (None, None) => format!(
                    "sidechain-{}",
                    l.uuid
                        .as_deref()
                        .map(|u| &u[..u.len().min(8)])
                        .unwrap_or("root")
                ),
                (None, Some(_)) => self
                    .last_sidechain_key
                    .clone()
                    .unwrap_or_else(|| "sidechain-orphan".to_string()),
            }
        };
        if let Some(u) = &l.uuid {
            self.sidechain_task.insert(u.clone(), key.clone());
        }
        self.last_sidechain_key = Some(key.clone());
        key
    }

    fn conversation(&mut self, line: u64, ty: &str, l: &Line, tasks: &mut TaskSet) -> LineResult {
        let Some(raw) = l.message else {
            return Err(shape(
                line,
                format!(
                    "{ty} line without \"message\"; expected {{\"message\":{{\"role\",\"content\"}}}}"
                ),
            ));
        };
        let mut msg: ApiMessage = serde_json::from_str(raw.get()).map_err(|e| {
            LineError::new(
                line,
                1,
                format!("unexpected \"message\" shape: {e}; expected an Anthropic message object"),
            )
        })?;
        if !self.first_sight(l) {
            return Ok(LineOutcome::Duplicate);
        }
        let content = anthropic_content(line, std::mem::take(&mut msg.content))?;
        let key = self.task_key(l);
        let task = tasks.task(&key);
        if task.meta.session_id.is_none() {
            task.meta.session_id = l.session_id.clone();
            task.meta.cwd = l.cwd.clone();
            task.meta.cli_version = l.version.clone();
            if !key.is_empty() {
                task.meta.parent_session = l.session_id.clone();
                task.meta.agent_id = l.agent_id.clone();
            }
        }
        let mut m = if ty == "assistant" {
            let synthetic =
                l.is_api_error.unwrap_or(false) || msg.model.as_deref() == Some("<synthetic>");
            if synthetic {
                Message::new(Role::Assistant, Kind::Synthetic, content, line)
            } else {
                if task.meta.model.is_none() {
                    task.meta.model = msg.model.clone();
                }
                let mut m = Message::new(Role::Assistant, Kind::Generation, content, line);
                m.gen_id = msg.id.clone().or_else(|| l.uuid.clone());
                m.usage = match &msg.usage {
                    Some(u) => anthropic_usage(line, u)?,
                    None => None,
                };
                m
            }
        } else {
            let kind = classify_user(l, &content);
            Message::new(Role::User, kind, content, line)
        };
        m.source_uuid = l.uuid.clone();
        m.timestamp = l.timestamp.clone();
        task.push(m);
        Ok(LineOutcome::Imported)
    }
}

/// Record a session title as a meta row of the main task.
fn push_title(tasks: &mut TaskSet, line: u64, l: &Line, title: &str, replace: bool) {
    let mut m = Message::new(
        Role::Meta,
        Kind::Title,
        vec![Block::Text {
            text: title.to_string(),
        }],
        line,
    );
    m.timestamp = l.timestamp.clone();
    let task = tasks.main();
    if replace || task.meta.title.is_none() {
        task.meta.title = Some(title.to_string());
    }
    task.push(m);
}

/// Decide what a user line is: an ask, tool results, injected context, an interrupt
/// or the agent's own compaction summary.
fn classify_user(l: &Line, content: &[Block]) -> Kind {
    if l.is_compact_summary.unwrap_or(false) {
        return Kind::CompactSummary;
    }
    if content
        .iter()
        .any(|b| matches!(b, Block::ToolResult { .. }))
    {
        return Kind::ToolResult;
    }
    if l.is_meta.unwrap_or(false) {
        return Kind::Context;
    }
    let text = first_text(content).unwrap_or("");
    let t = text.trim_start();
    if t.starts_with("[Request interrupted by user") {
        Kind::Interrupt
    } else if t.starts_with(CONTINUATION_PREFIX) {
        Kind::CompactSummary
    } else if is_injected(t)
        || content.is_empty()
        || (t.is_empty() && !content.iter().any(|b| matches!(b, Block::Image { .. })))
    {
        Kind::Context
    } else {
        Kind::Ask
    }
}

/// Text the client writes into a user line on its own (command output, caveats).
fn is_injected(t: &str) -> bool {
    [
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<bash-stdout>",
        "<bash-stderr>",
        "Caveat: The messages below were generated by the user",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}
