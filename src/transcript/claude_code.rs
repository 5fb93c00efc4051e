//! Claude Code session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`).
//!
//! Quirks handled here (see the corpus's FORMATS.md):
//! - one API response is written as one line per content block, all sharing
//!   `message.id`; the lines of a response with parallel tool calls interleave
//!   with their tool results. Rows keep that split; `gen_id` groups them.
//! - sidechain lines (inline in 1.0.x, `agent-*.jsonl` files later) become
//!   their own tasks, keyed `agent-<agentId>` or `sidechain-<root uuid>`.
//! - `progress` lines embed copies of subagent messages: never imported.
//! - `summary` and `custom-title` lines are titles; `isCompactSummary` users
//!   and 1.0.x continuation texts are the agent's own compaction summaries,
//!   not asks: a marker when the history they summarize is in the file
//!   before them, else (the session began at a compaction) the carried
//!   history's first user message.
//! - a line repeated with the same `uuid` is imported once.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{anthropic_content, anthropic_usage, first_text, shape};
use super::idtable::IdTable;
use super::typed::{CheckedUsage, Content};
use super::{Digest, Importer, LineError, LineOutcome, LineResult, TaskSet, expected_line};
use crate::model::{Block, Format, Kind, Message, Role, Usage};

/// The window of the Anthropic 1M context (the `context-1m-…` beta).
const ONE_M_CONTEXT: u64 = 1_000_000;

/// The text Claude Code puts at the head of a resumed session's summary.
pub(crate) const CONTINUATION_PREFIX: &str =
    "This session is being continued from a previous conversation that ran out of context";

#[derive(Default)]
pub(crate) struct ClaudeCodeImporter {
    /// The uuids of the lines imported.
    seen_uuids: IdTable<()>,
    /// uuid → task key (its place in `sidechain_keys`), for sidechain
    /// lines: their parent decides their task. Kept as [`IdTable`] keeps
    /// ids, so it does not grow with the file.
    sidechain_task: IdTable<u32>,
    /// The sidechain task keys, each once, and their places.
    sidechain_keys: Vec<String>,
    sidechain_places: HashMap<String, u32>,
    last_sidechain_key: Option<String>,
    /// Tasks whose request shape is already recorded.
    shape_seen: HashSet<String>,
}

/// The fields of a line we use; everything else is skipped without building
/// values. `M` is how `message` is read: typed in the same pass
/// ([`TypedMessage`]), or kept as text for the `Value` path.
#[derive(Deserialize)]
struct Line<'a, M> {
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
    #[serde(rename = "gitBranch", borrow)]
    git_branch: Option<Cow<'a, str>>,
    message: Option<M>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(rename = "compactMetadata")]
    compact_metadata: Option<Value>,
    /// `api-request-shape`: `{system, tools}`.
    shape: Option<Value>,
    /// `api-request`: the request parameters (`model`, ...).
    params: Option<Value>,
}

/// A line's `message`: its content as `C` and its usage as `U`, read either
/// straight into blocks and checked counts ([`TypedMessage`]) or as values
/// (the general path, which words every error).
#[derive(Deserialize)]
struct ApiMessage<C, U> {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    content: C,
    usage: Option<U>,
}

/// `message` read with its line, in one pass (see `super::typed`).
type TypedMessage = ApiMessage<Content, CheckedUsage>;

/// How a line's `message` field becomes its blocks and usage.
trait MessageField {
    /// The message's fields; an error when they are not a message's shape.
    fn open(self, line: u64) -> Result<ApiMessage<ContentIn, UsageIn>, LineError>;
}

impl MessageField for TypedMessage {
    fn open(self, _line: u64) -> Result<ApiMessage<ContentIn, UsageIn>, LineError> {
        Ok(ApiMessage {
            id: self.id,
            model: self.model,
            content: ContentIn::Blocks(self.content.0),
            usage: self.usage.map(|u| UsageIn::Checked(u.0)),
        })
    }
}

impl MessageField for &RawValue {
    fn open(self, line: u64) -> Result<ApiMessage<ContentIn, UsageIn>, LineError> {
        let m: ApiMessage<Value, Value> = serde_json::from_str(self.get()).map_err(|e| {
            LineError::new(
                line,
                1,
                format!("unexpected \"message\" shape: {e}; expected an Anthropic message object"),
            )
        })?;
        Ok(ApiMessage {
            id: m.id,
            model: m.model,
            content: ContentIn::Value(m.content),
            usage: m.usage.map(UsageIn::Value),
        })
    }
}

/// A message's content, as read: blocks, or a value still to check.
enum ContentIn {
    Blocks(Vec<Block>),
    Value(Value),
}

impl ContentIn {
    fn blocks(self, line: u64) -> Result<Vec<Block>, LineError> {
        match self {
            ContentIn::Blocks(b) => Ok(b),
            ContentIn::Value(v) => anthropic_content(line, v),
        }
    }
}

/// A message's usage, as read: checked counts, or a value still to check.
enum UsageIn {
    Checked(Usage),
    Value(Value),
}

impl UsageIn {
    fn usage(&self, line: u64) -> Result<Option<Usage>, LineError> {
        match self {
            UsageIn::Checked(u) => Ok(Some(*u)),
            UsageIn::Value(v) => anthropic_usage(line, v),
        }
    }
}

const EXPECTED: &str = expected_line(Format::ClaudeCode);

impl Importer for ClaudeCodeImporter {
    fn format(&self) -> Format {
        Format::ClaudeCode
    }

    fn line(&mut self, line: u64, text: &str, tasks: &mut TaskSet) -> LineResult {
        self.read(line, text, tasks, true)
    }
}

impl ClaudeCodeImporter {
    /// One line. `typed`: first try the one pass for a line whose message
    /// the typed reader takes whole (`super::typed`); any other line, and
    /// every line when not `typed`, is read with its message as text and
    /// then as a `Value`, which gives the same result or words the error.
    fn read(&mut self, line: u64, text: &str, tasks: &mut TaskSet, typed: bool) -> LineResult {
        if typed && let Ok(l) = serde_json::from_str::<Line<TypedMessage>>(text) {
            return self.dispatch(line, l, tasks);
        }
        let l: Line<&RawValue> = match serde_json::from_str(text) {
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
        self.dispatch(line, l, tasks)
    }

    /// What a parsed line is, and what it adds.
    fn dispatch<M: MessageField>(
        &mut self,
        line: u64,
        mut l: Line<'_, M>,
        tasks: &mut TaskSet,
    ) -> LineResult {
        let ty = l.ty.take();
        let Some(ty) = ty.as_deref() else {
            return Err(shape(
                line,
                "the object has no \"type\"; expected a Claude Code line such as {\"type\":\"user\",\"message\":{...}}",
            ));
        };
        match ty {
            "user" | "assistant" => self.conversation(line, ty, l, tasks),
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
                    if !self.first_sight(line, &l)? {
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
                    let key = self.task_key(line, &l)?;
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
                let key = self.task_key(line, &l)?;
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
                let key = self.task_key(line, &l)?;
                let task = tasks.task(&key);
                if task.meta.model.is_none() {
                    task.meta.model = l
                        .params
                        .as_ref()
                        .and_then(|p| p.get("model"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                // A request for the 1M context (the `context-1m-…` beta)
                // records the window the session ran with.
                let betas = l.params.as_ref().and_then(|p| p.get("betas"));
                let one_m = betas.and_then(Value::as_array).is_some_and(|b| {
                    b.iter()
                        .any(|b| b.as_str().is_some_and(|b| b.starts_with("context-1m-")))
                });
                if one_m {
                    task.meta.context_window = Some(ONE_M_CONTEXT);
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

    /// False when this uuid was already imported from this file (a copied line).
    fn first_sight<M>(&mut self, line: u64, l: &Line<'_, M>) -> Result<bool, LineError> {
        match &l.uuid {
            Some(u) => match self.seen_uuids.get_or_insert_with(Digest::of(u), || ()) {
                Ok((_, new)) => Ok(new),
                Err(e) => Err(super::idtable::failure(line, &e)),
            },
            None => Ok(true),
        }
    }

    /// Which task a line belongs to: "" for the main session, else its sidechain.
    fn task_key<M>(&mut self, line: u64, l: &Line<'_, M>) -> Result<String, LineError> {
        if !l.is_sidechain.unwrap_or(false) {
            return Ok(String::new());
        }
        let failed = |e: std::io::Error| super::idtable::failure(line, &e);
        let key = if let Some(agent) = &l.agent_id {
            format!("agent-{agent}")
        } else {
            let parent = match &l.parent_uuid {
                Some(p) => self.sidechain_task.get(&Digest::of(p)).map_err(failed)?,
                None => None,
            };
            match (parent, &l.parent_uuid) {
                (Some(k), _) => self.sidechain_keys[k as usize].clone(),
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
            let place = match self.sidechain_places.get(&key) {
                Some(&place) => place,
                None => {
                    let place = u32::try_from(self.sidechain_keys.len()).map_err(|_| {
                        LineError::new(
                            line,
                            1,
                            "more sidechains in one file than can be told apart",
                        )
                    })?;
                    self.sidechain_keys.push(key.clone());
                    self.sidechain_places.insert(key.clone(), place);
                    place
                }
            };
            self.sidechain_task
                .insert(Digest::of(u), place)
                .map_err(failed)?;
        }
        self.last_sidechain_key = Some(key.clone());
        Ok(key)
    }

    fn conversation<M: MessageField>(
        &mut self,
        line: u64,
        ty: &str,
        mut l: Line<'_, M>,
        tasks: &mut TaskSet,
    ) -> LineResult {
        let Some(raw) = l.message.take() else {
            return Err(shape(
                line,
                format!(
                    "{ty} line without \"message\"; expected {{\"message\":{{\"role\",\"content\"}}}}"
                ),
            ));
        };
        let msg = raw.open(line)?;
        if !self.first_sight(line, &l)? {
            return Ok(LineOutcome::Duplicate);
        }
        let content = msg.content.blocks(line)?;
        let key = self.task_key(line, &l)?;
        let task = tasks.task(&key);
        // The client version and branch the session is on now: a session
        // resumed by a newer client, or on another branch, names the latest.
        if let Some(branch) = l.git_branch.as_deref().filter(|b| !b.is_empty())
            && task.meta.git_branch.as_deref() != Some(branch)
        {
            task.meta.git_branch = Some(branch.to_string());
        }
        if let Some(version) = l.version.take().filter(|v| !v.is_empty())
            && task.meta.cli_version.as_ref() != Some(&version)
        {
            task.meta.cli_version = Some(version);
        }
        if task.meta.session_id.is_none() {
            task.meta.session_id = l.session_id.clone();
            task.meta.cwd = l.cwd.clone();
            if !key.is_empty() {
                task.parent_session = l.session_id.clone();
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
                // A usage of all zeros records no call: a placeholder (a
                // session compactor wrote) or a synthetic line.
                m.usage = match msg.usage {
                    Some(u) => u.usage(line)?.filter(|u| *u != Usage::default()),
                    None => None,
                };
                m
            }
        } else {
            let kind = classify_user(&l, &content, !task.has_conversation());
            Message::new(Role::User, kind, content, line)
        };
        m.source_uuid = l.uuid.clone();
        m.timestamp = l.timestamp.clone();
        task.push(m);
        Ok(LineOutcome::Imported)
    }
}

/// Record a session title as a meta row of the main task.
fn push_title<M>(tasks: &mut TaskSet, line: u64, l: &Line<'_, M>, title: &str, replace: bool) {
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
/// or a compaction summary. `opens` says nothing of the conversation came before
/// it in its task: a summary there carries history the record does not hold.
fn classify_user<M>(l: &Line<'_, M>, content: &[Block], opens: bool) -> Kind {
    let summary = if opens {
        Kind::CarriedSummary
    } else {
        Kind::CompactSummary
    };
    if l.is_compact_summary.unwrap_or(false) {
        return summary;
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
        summary
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::typed::both_ways;

    /// Blocks of every shape the typed reader takes, and of shapes it must
    /// leave to the `Value` path (unknown types, missing or mistyped fields,
    /// duplicate keys, escapes).
    const BLOCKS: &[&str] = &[
        r#"{"type":"text","text":"hi \"there\"\n\u00e9\u2028 \ud83d\ude00"}"#,
        r#"{"type":"text","text":"x","citations":[{"a":1}],"cache_control":{"type":"ephemeral"}}"#,
        r#"{"type":"te\u0078t","text":"escaped type"}"#,
        r#"{"text":"type last","type":"text"}"#,
        r#"{"type":"text"}"#,
        r#"{"type":"text","text":5}"#,
        r#"{"type":"text","text":"a","text":"b"}"#,
        r#"{"type":7,"text":"a"}"#,
        r#"{"text":"no type"}"#,
        r#"{"type":"thinking","thinking":"hm","signature":"sig"}"#,
        r#"{"type":"thinking","thinking":"hm","signature":null}"#,
        r#"{"type":"thinking","thinking":"hm","signature":3}"#,
        r#"{"type":"redacted_thinking","data":"enc"}"#,
        r#"{"type":"tool_use","id":"t1","name":"Read","input":{"b":1.5,"a":[true,null],"c":{"z":"1e400"}}}"#,
        r#"{"type":"tool_use","id":"t2","name":"Bash","input":null}"#,
        r#"{"type":"tool_use","id":"t3","name":"Bash"}"#,
        r#"{"type":"tool_use","id":"t4","name":"Bash","input":[1,2]}"#,
        r#"{"type":"tool_use","id":"t5","input":{}}"#,
        r#"{"type":"tool_use","id":"t6","name":"N","input":{"n":18446744073709551616,"f":0.1,"e":-0}}"#,
        r#"{"tool_use_id":"t1","type":"tool_result","content":"out\tput"}"#,
        r#"{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}],"is_error":true}"#,
        r#"{"type":"tool_result","tool_use_id":"t3","content":null,"is_error":null}"#,
        r#"{"type":"tool_result","tool_use_id":"t4"}"#,
        r#"{"type":"tool_result","tool_use_id":"t5","content":{"a":1}}"#,
        r#"{"type":"tool_result","tool_use_id":"t6","content":"x","is_error":"yes"}"#,
        r#"{"type":"tool_result","tool_use_id":"t7","content":[{"type":"document","source":{}}]}"#,
        r#"{"type":"tool_result","content":"no id"}"#,
        r#"{"type":"image","source":{"type":"url","url":"https://x/y.png","extra":1}}"#,
        r#"{"type":"image","source":{"media_type":"image/jpeg","data":"AA"}}"#,
        r#"{"type":"image","source":{"type":5}}"#,
        r#"{"type":"image","source":"nope"}"#,
        r#"{"type":"image"}"#,
        r#"{"type":"document","source":{"type":"text","data":"d"},"title":"t"}"#,
        r#"{"type":"server_tool_use","id":"s1","name":"web_search","input":{"q":"x"}}"#,
        // Read strictly where the reader skips them, as a `Value` is: a lone
        // surrogate, a number out of range, nesting past the depth limit.
        r#"{"type":"text","text":"x","extra":"\udc00"}"#,
        r#"{"type":"text","text":"x","extra":{"n":1e400}}"#,
        DEEP,
        // Objects only, and a type only as a string.
        r#"["text","x",null,null,null,null,null,null,null,null,null,null]"#,
        r#"{"type":{"text":null},"text":"x"}"#,
        r#"{"type":"image","source":["url",null,null,"https://x/y.png"]}"#,
        r#""a bare string""#,
        r#"42"#,
        r#"null"#,
    ];

    /// A block with a skipped field nested 130 deep (`serde_json` stops at 128).
    const DEEP: &str = concat!(
        r#"{"type":"text","text":"deep","x":"#,
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "}"
    );

    /// Usage objects: accepted, defaulted, and each kind of refused count.
    const USAGES: &[&str] = &[
        "",
        r#","usage":{"input_tokens":3,"cache_creation_input_tokens":4264,"output_tokens":36,"service_tier":"standard","cache_read_input_tokens":9758,"server_tool_use":{"web_search_requests":0}}"#,
        r#","usage":{"output_tokens":null}"#,
        r#","usage":null"#,
        r#","usage":"none""#,
        r#","usage":{"input_tokens":1099511627776}"#,
        r#","usage":{"input_tokens":1099511627777}"#,
        r#","usage":{"input_tokens":-1}"#,
        r#","usage":{"input_tokens":2.0}"#,
        r#","usage":{"input_tokens":"7"}"#,
        r#","usage":{"input_tokens":1,"input_tokens":2}"#,
        r#","usage":[1,2,3,4]"#,
        r#","usage":{"input_tokens":1,"server_tool_use":{"x":"\ud800"}}"#,
    ];

    /// A sidechain line whose parent came many lines before, after the
    /// importer's tables of uuids were written out to their temporary
    /// files: it still joins its parent's task, not the sidechain read last.
    #[test]
    fn a_sidechain_line_finds_a_parent_from_far_back() {
        let user = |uuid: &str, parent: Option<&str>, text: &str| {
            let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
            format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"isSidechain":true,"message":{{"role":"user","content":"{text}"}}}}"#
            )
        };
        let far = super::super::idtable::BUDGET + 100;
        let mut lines = vec![
            user("aaaaaaaa-root", None, "task a"),
            user("bbbbbbbb-root", None, "task b"),
        ];
        for i in 0..far {
            let parent = if i == 0 {
                "bbbbbbbb-root".to_string()
            } else {
                format!("b-{}", i - 1)
            };
            lines.push(user(&format!("b-{i}"), Some(&parent), "more of b"));
        }
        lines.push(user("a-late", Some("aaaaaaaa-root"), "back to a"));
        let mut importer = ClaudeCodeImporter::default();
        let mut tasks = TaskSet::default();
        for (i, text) in lines.iter().enumerate() {
            let outcome = importer.read(i as u64 + 1, text, &mut tasks, true);
            assert_eq!(outcome, Ok(LineOutcome::Imported), "line {}", i + 1);
        }
        let tasks = tasks.into_tasks();
        let sizes: Vec<(&str, usize)> = tasks
            .iter()
            .map(|t| (t.key.as_str(), t.messages.len()))
            .collect();
        assert!(sizes.contains(&("sidechain-aaaaaaaa", 2)), "{sizes:?}");
        assert!(
            sizes.contains(&("sidechain-bbbbbbbb", far + 1)),
            "{sizes:?}"
        );
    }

    /// The main task's rows after `lines`.
    fn rows_of(lines: &[String]) -> (Vec<Message>, crate::transcript::TaskMeta) {
        let mut importer = ClaudeCodeImporter::default();
        let mut tasks = TaskSet::default();
        for (i, text) in lines.iter().enumerate() {
            importer
                .read(i as u64 + 1, text, &mut tasks, true)
                .expect("the line imports");
        }
        let task = tasks.into_tasks().into_iter().next().expect("a task");
        (task.messages, task.meta)
    }

    fn line(ty: &str, uuid: &str, extra: &str) -> String {
        format!(
            r#"{{"type":"{ty}","uuid":"{uuid}","sessionId":"s","cwd":"/w","version":"2.1.39","gitBranch":"main","timestamp":"2026-03-14T09:00:07.000Z"{extra}}}"#
        )
    }

    const BOUNDARY: &str = r#","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":9}"#;
    const SUMMARY: &str = r###","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"message":{"role":"user","content":[{"type":"text","text":"## Task Context\n\n## Requests\n- #1: Fix it. Never log the secret."}]}"###;

    fn ask(text: &str) -> String {
        format!(r#","message":{{"role":"user","content":"{text}"}}"#)
    }

    /// A session that begins at a compaction: its summary is the first user
    /// message of the history (it reaches views and opens turn 1); the
    /// boundary before it stays a meta row.
    #[test]
    fn a_summary_that_opens_the_session_is_its_carried_history() {
        let (rows, _) = rows_of(&[
            line("system", "b", BOUNDARY),
            line("user", "s1", SUMMARY),
            line(
                "assistant",
                "a1",
                r#","message":{"id":"msg_1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"Carrying on."}],"usage":{"input_tokens":0,"output_tokens":0}}"#,
            ),
            line("user", "u2", &ask("And add a test.")),
        ]);
        let shape: Vec<(Kind, u32)> = rows.iter().map(|m| (m.kind, m.turn)).collect();
        assert_eq!(
            shape,
            [
                (Kind::CompactBoundary, 0),
                (Kind::CarriedSummary, 1),
                (Kind::Generation, 1),
                (Kind::Ask, 2)
            ]
        );
        assert!(Kind::CarriedSummary.reaches_view());
        // A usage of all zeros is no recorded call.
        assert_eq!(rows[2].usage, None);
        // A 1.0.x continuation file opens with the same text as a plain user line.
        let (rows, _) = rows_of(&[line(
            "user",
            "c1",
            &ask(
                "This session is being continued from a previous conversation that ran out of context. The summary below covers it.",
            ),
        )]);
        assert_eq!(rows[0].kind, Kind::CarriedSummary);
        assert_eq!(rows[0].turn, 1);
    }

    /// The agent compacted inside the file: the raw before it stays the
    /// source, the summary a marker (no view, no turn).
    #[test]
    fn a_summary_after_its_raw_history_stays_the_agents_marker() {
        let (rows, _) = rows_of(&[
            line("user", "u1", &ask("Fix it. Never log the secret.")),
            line("system", "b", BOUNDARY),
            line("user", "s1", SUMMARY),
            line(
                "user",
                "u2",
                &ask(
                    "This session is being continued from a previous conversation that ran out of context.",
                ),
            ),
        ]);
        let shape: Vec<(Kind, u32)> = rows.iter().map(|m| (m.kind, m.turn)).collect();
        assert_eq!(
            shape,
            [
                (Kind::Ask, 1),
                (Kind::CompactBoundary, 1),
                (Kind::CompactSummary, 1),
                (Kind::CompactSummary, 1)
            ]
        );
        assert!(!Kind::CompactSummary.reaches_view());
        // Injected context before it is conversation too.
        let (rows, _) = rows_of(&[
            line(
                "user",
                "m1",
                r#","isMeta":true,"message":{"role":"user","content":"<system-reminder>x</system-reminder>"}"#,
            ),
            line("user", "s1", SUMMARY),
        ]);
        assert_eq!(rows[1].kind, Kind::CompactSummary);
    }

    /// The branch and client version a session names are its latest: a
    /// session resumed by a newer client on another branch names those.
    #[test]
    fn the_latest_branch_and_version_name_the_session() {
        let later = line("user", "u2", &ask("more"))
            .replace("2.1.39", "2.1.332")
            .replace(r#""gitBranch":"main""#, r#""gitBranch":"feat/retry""#);
        let blank = line("user", "u3", &ask("more still"))
            .replace("2.1.39", "")
            .replace(r#""gitBranch":"main""#, r#""gitBranch":"""#);
        let (_, meta) = rows_of(&[line("user", "u1", &ask("go")), later, blank]);
        assert_eq!(meta.git_branch.as_deref(), Some("feat/retry"));
        assert_eq!(meta.cli_version.as_deref(), Some("2.1.332"));
    }

    #[test]
    fn the_typed_reader_reads_every_line_as_the_general_one_does() {
        let mut lines = Vec::new();
        let mut uuid = 0;
        let mut line = |ty: &str, message: &str, extra: &str| {
            uuid += 1;
            format!(
                r#"{{"type":"{ty}","uuid":"u{uuid}","sessionId":"s","cwd":"/w","version":"2.1.39","timestamp":"2026-03-14T09:00:07.000Z"{extra},"message":{message}}}"#
            )
        };
        for (i, block) in BLOCKS.iter().enumerate() {
            let usage = USAGES[i % USAGES.len()];
            lines.push(line(
                "assistant",
                &format!(r#"{{"id":"msg_{i}","model":"claude-opus-4-6","role":"assistant","content":[{block}]{usage}}}"#),
                "",
            ));
            lines.push(line(
                "user",
                &format!(r#"{{"role":"user","content":[{block},{{"type":"text","text":"and"}}]}}"#),
                "",
            ));
        }
        for (i, usage) in USAGES.iter().enumerate() {
            lines.push(line(
                "assistant",
                &format!(r#"{{"id":"msg_u{i}","content":"text"{usage}}}"#),
                "",
            ));
            lines.push(line(
                "assistant",
                &format!(r#"{{"model":"<synthetic>","content":"error"{usage}}}"#),
                "",
            ));
        }
        for content in [
            r#""plain ask""#,
            "null",
            "5",
            "{}",
            r#""[Request interrupted by user]""#,
        ] {
            lines.push(line("user", &format!(r#"{{"content":{content}}}"#), ""));
        }
        lines.push(line("user", r#"{"role":"user"}"#, ""));
        lines.push(line("user", "null", ""));
        lines.push(line("user", "[1]", ""));
        lines.push(line("user", r#"{"content":"a","content":"b"}"#, ""));
        lines.push(line("assistant", r#"{"id":5,"content":"a"}"#, ""));
        lines.push(line("user", r#"{"content":"meta"}"#, r#","isMeta":true"#));
        lines.push(line(
            "assistant",
            r#"{"id":"side","content":[{"type":"text","text":"in a sidechain"}]}"#,
            r#","isSidechain":true,"agentId":"a1""#,
        ));
        lines.push(line(
            "summary",
            r#"{"content":[{"type":"weird"}]}"#,
            r#","summary":"a title""#,
        ));
        // A repeated line (same uuid) is a duplicate either way, whatever its content.
        let again = lines[0].clone();
        lines.push(again);
        let mut bad = lines[1].clone();
        bad = bad.replace(r#""content":["#, r#""content":[7,"#);
        lines.push(bad);
        lines.push("[]".to_string());
        lines.push(r#"{"type":"assistant"}"#.to_string());
        lines.push(r#"{"message":{"content":"no type"}}"#.to_string());
        let typed = both_ways(&lines, ClaudeCodeImporter::read, |t| {
            serde_json::from_str::<Line<TypedMessage>>(t).is_ok()
        });
        // Both paths are exercised: the typed one takes most lines whole.
        assert!(
            typed > lines.len() / 3 && typed < lines.len(),
            "{typed} of {}",
            lines.len()
        );
    }
}
