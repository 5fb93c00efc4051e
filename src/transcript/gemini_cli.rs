//! Gemini CLI session files (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`,
//! `$GEMINI_CLI_HOME/.gemini/…` when that is set).
//!
//! Quirks handled here (Gemini CLI 0.61, `testdata/gemini-cli/`):
//! - the first line is the session's metadata (`sessionId`, `projectHash`,
//!   `startTime`, `kind` `main` or `subagent`); then one line per message
//!   (`id`, `type` `user` / `gemini` / `info` / `error` / `warning`,
//!   `content`), interleaved with `{"$set": …}` lines that update the
//!   metadata (`lastUpdated`, `summary`, `directories`) or replace the whole
//!   message list (`messages`), and `{"$rewindTo": ID}` lines.
//! - a message is written again, whole, each time it changes, under the same
//!   id: a `gemini` message first with its text and `tokens`, then with its
//!   `toolCalls` (each call's `id`, `name`, `args` and `result`, the
//!   `functionResponse` parts sent back). The CLI reads a file by keeping the
//!   last line of each id; the record is append-only, so each line adds what
//!   it brings that the record does not have yet: a message the first time,
//!   then the calls, results and usage added to it (rows of the same
//!   generation). `$set.messages` is applied the same way: the messages it
//!   names that the record lacks are added (Gemini CLI's own compression
//!   puts its summary, a `<state_snapshot>` user turn, there).
//! - a `user` message whose parts are `functionResponse`s is what the CLI
//!   sent back for the calls of the message before: results already read
//!   from that message's `toolCalls` are duplicates.
//! - the CLI's session context (`<session_context>`) and a hook's
//!   (`<hook_context>`) are context, not asks; a slash command (`/compress`)
//!   or `?` is never sent to the model: a note.
//! - `tokens` is the call's `usageMetadata`: `input` is the whole prompt,
//!   `cached` of it read from cache; `thoughts` are billed as output.
//! - `info`, `error` and `warning` messages are the CLI's own, shown to the
//!   user, never sent: notes. A rewind (`$rewindTo`) or a rewrite that
//!   drops messages the record holds is noted as a warning; the record
//!   keeps them.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::common::{opt_str, shape, type_name};
use super::gemini::{self, BadPart, Ids};
use super::{LineError, LineOutcome, LineResult, ObjectLines, TaskSet, Warning};
use crate::model::{Block, Format, Kind, Message, Role, ToolContent, Usage};

#[derive(Default)]
pub(crate) struct GeminiCliImporter {
    /// What the record holds of each message, by id.
    seen: HashMap<String, Seen>,
    /// Calls whose result the record holds.
    answered: HashSet<String>,
    /// Calls without a result yet, in order: id and name.
    open: Vec<(String, String)>,
    /// Whether a conversation message was added (a summary then is the
    /// CLI's compression, not one the session began with).
    conversation: bool,
}

/// What the record holds of one message.
#[derive(Default)]
struct Seen {
    /// Its first row (text, thoughts, calls) was added.
    added: bool,
    calls: HashSet<String>,
    usage: bool,
}

impl ObjectLines for GeminiCliImporter {
    const FORMAT: Format = Format::GeminiCli;

    fn object(&mut self, line: u64, obj: Map<String, Value>, tasks: &mut TaskSet) -> LineResult {
        if let Some(set) = obj.get("$set") {
            let set = set.as_object().ok_or_else(|| {
                shape(
                    line,
                    format!("\"$set\" is {}; expected an object", type_name(set)),
                )
            })?;
            return self.set(line, set, tasks);
        }
        if let Some(to) = obj.get("$rewindTo") {
            let to = to.as_str().unwrap_or("");
            tasks.main().warnings.push(Warning {
                line,
                message: format!(
                    "the session was rewound to message {to}; the record keeps the messages after it"
                ),
            });
            return Ok(LineOutcome::NotConversation);
        }
        if obj.get("id").is_some_and(Value::is_string) {
            let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
            return self.message(line, &obj, ty, tasks);
        }
        if obj.contains_key("sessionId") && obj.contains_key("projectHash") {
            let task = tasks.main();
            if task.meta.session_id.is_none() {
                task.meta.session_id = opt_str(&obj, "sessionId");
            }
            if let Some(Value::String(s)) = obj.get("summary") {
                task.meta.title = Some(s.clone());
            }
            return Ok(LineOutcome::NotConversation);
        }
        let ty = obj
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| obj.keys().next().cloned())
            .unwrap_or_else(|| "{}".into());
        Ok(LineOutcome::Unknown(ty))
    }
}

/// Calls named by their own id (the session file's, which its results
/// carry too), else by message and ordinal; a response without an id
/// answers the oldest open call of its name.
struct FileIds<'a> {
    msg: &'a str,
    open: &'a [(String, String)],
}

impl Ids for FileIds<'_> {
    fn call(&mut self, k: usize, id: Option<&str>, _name: &str) -> String {
        id.map_or_else(|| format!("{}-{k}", self.msg), str::to_string)
    }

    fn response(&mut self, k: usize, id: Option<&str>, name: &str) -> String {
        if let Some(id) = id {
            return id.to_string();
        }
        self.open
            .iter()
            .find(|(_, n)| n == name)
            .map_or_else(|| format!("{}-r{k}", self.msg), |(id, _)| id.clone())
    }
}

fn bad(line: u64, id: &str) -> impl Fn(BadPart) -> LineError + '_ {
    move |e| shape(line, format!("message {id}: {}", e.0))
}

/// A `tokens` object as usage: `input` counts the cached tokens too.
fn usage(line: u64, v: Option<&Value>) -> Result<Option<Usage>, LineError> {
    let Some(o) = v.and_then(Value::as_object) else {
        return Ok(None);
    };
    let n = |k: &str| super::tokens::count(line, o, k);
    let cached = n("cached")?;
    Ok(Some(Usage {
        input_tokens: n("input")?
            .saturating_add(n("tool")?)
            .saturating_sub(cached),
        output_tokens: n("output")?.saturating_add(n("thoughts")?),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    }))
}

/// The directory a session context names as the workspace.
pub(crate) fn workspace_of(text: &str) -> Option<String> {
    let rest = text.split("**Workspace Directories:**").nth(1)?;
    let line = rest.lines().find(|l| !l.trim().is_empty())?;
    let dir = line.trim().strip_prefix("- ")?.trim();
    (!dir.is_empty()).then(|| dir.to_string())
}

impl GeminiCliImporter {
    fn set(&mut self, line: u64, set: &Map<String, Value>, tasks: &mut TaskSet) -> LineResult {
        if let Some(Value::String(s)) = set.get("summary") {
            tasks.main().meta.title = Some(s.clone());
        }
        let Some(messages) = set.get("messages") else {
            return Ok(LineOutcome::NotConversation);
        };
        let messages = messages.as_array().ok_or_else(|| {
            shape(
                line,
                format!(
                    "\"$set.messages\" is {}; expected a list of messages",
                    type_name(messages)
                ),
            )
        })?;
        let mut added = false;
        let named: HashSet<&str> = messages
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str))
            .collect();
        let dropped = self
            .seen
            .keys()
            .filter(|id| !named.contains(id.as_str()))
            .count();
        if dropped > 0 {
            tasks.main().warnings.push(Warning {
                line,
                message: format!(
                    "the session's history was rewritten without {dropped} message{} the record holds; the record keeps them",
                    if dropped == 1 { "" } else { "s" }
                ),
            });
        }
        for (i, m) in messages.iter().enumerate() {
            let obj = m.as_object().ok_or_else(|| {
                shape(
                    line,
                    format!(
                        "\"$set.messages\"[{i}] is {}; expected a message object",
                        type_name(m)
                    ),
                )
            })?;
            let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
            if obj.get("id").is_some_and(Value::is_string) {
                added |= self.message(line, obj, ty, tasks)? == LineOutcome::Imported;
            }
        }
        Ok(if added {
            LineOutcome::Imported
        } else {
            LineOutcome::NotConversation
        })
    }

    fn message(
        &mut self,
        line: u64,
        obj: &Map<String, Value>,
        ty: &str,
        tasks: &mut TaskSet,
    ) -> LineResult {
        let id = obj
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let timestamp = opt_str(obj, "timestamp");
        let mut rows = match ty {
            "user" => self.user(line, &id, obj)?,
            "gemini" => self.gemini(line, &id, obj, tasks)?,
            "info" | "error" | "warning" => {
                let seen = self.seen.entry(id.clone()).or_default();
                if seen.added {
                    return Ok(LineOutcome::Duplicate);
                }
                seen.added = true;
                let text = match obj.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                vec![Message::new(
                    Role::Meta,
                    Kind::Note,
                    vec![Block::Text {
                        text: format!("[gemini-cli {ty}] {text}"),
                    }],
                    line,
                )]
            }
            other => return Ok(LineOutcome::Unknown(other.to_string())),
        };
        if rows.is_empty() {
            return Ok(LineOutcome::Duplicate);
        }
        let task = tasks.main();
        for r in &mut rows {
            r.timestamp.clone_from(&timestamp);
            r.source_uuid = Some(id.clone());
            if task.meta.cwd.is_none()
                && r.kind == Kind::Context
                && let Some(dir) = r.content.iter().find_map(|b| match b {
                    Block::Text { text } => workspace_of(text),
                    _ => None,
                })
            {
                task.meta.cwd = Some(dir);
            }
        }
        for r in rows {
            self.conversation |= matches!(r.kind, Kind::Ask | Kind::Generation);
            task.push(r);
        }
        Ok(LineOutcome::Imported)
    }

    /// A user message's rows: its results the record lacks, or (the first
    /// time) its text, by kind.
    fn user(
        &mut self,
        line: u64,
        id: &str,
        obj: &Map<String, Value>,
    ) -> Result<Vec<Message>, LineError> {
        let parts =
            gemini::parts_of(obj.get("content").unwrap_or(&Value::Null)).map_err(bad(line, id))?;
        let mut ids = FileIds {
            msg: id,
            open: &self.open,
        };
        let blocks = gemini::user_blocks(&parts, &mut ids).map_err(bad(line, id))?;
        let seen = self.seen.entry(id.to_string()).or_default();
        let first = !seen.added;
        seen.added = true;
        let (results, rest): (Vec<Block>, Vec<Block>) = blocks
            .into_iter()
            .partition(|b| matches!(b, Block::ToolResult { .. }));
        let mut rows = Vec::new();
        let results: Vec<Block> = results
            .into_iter()
            .filter(|b| match b {
                Block::ToolResult { tool_use_id, .. } => !self.answered.contains(tool_use_id),
                _ => false,
            })
            .collect();
        if !results.is_empty() {
            for b in &results {
                if let Block::ToolResult { tool_use_id, .. } = b {
                    self.answer(tool_use_id);
                }
            }
            rows.push(Message::new(Role::User, Kind::ToolResult, results, line));
        }
        if first {
            // Consecutive parts of one kind make one row.
            for b in rest {
                let kind = match &b {
                    Block::Text { text } if gemini::context_text(text) => Kind::Context,
                    Block::Text { text } if gemini::state_snapshot(text) => {
                        if self.conversation {
                            Kind::CompactSummary
                        } else {
                            Kind::CarriedSummary
                        }
                    }
                    Block::Text { text }
                        if text.trim_start().starts_with('/')
                            || text.trim_start().starts_with('?') =>
                    {
                        Kind::Note
                    }
                    _ => Kind::Ask,
                };
                match rows.last_mut() {
                    Some(r) if r.kind == kind && r.kind != Kind::ToolResult => r.content.push(b),
                    _ => {
                        let role = if kind == Kind::Note {
                            Role::Meta
                        } else {
                            Role::User
                        };
                        rows.push(Message::new(role, kind, vec![b], line));
                    }
                }
            }
        }
        Ok(rows)
    }

    /// A gemini message's rows: the first time its thoughts, text and
    /// calls; then the calls, results and usage it gained.
    fn gemini(
        &mut self,
        line: u64,
        id: &str,
        obj: &Map<String, Value>,
        tasks: &mut TaskSet,
    ) -> Result<Vec<Message>, LineError> {
        if let Some(model) = opt_str(obj, "model") {
            tasks.main().meta.model.get_or_insert(model);
        }
        let parts =
            gemini::parts_of(obj.get("content").unwrap_or(&Value::Null)).map_err(bad(line, id))?;
        let mut ids = FileIds {
            msg: id,
            open: &self.open,
        };
        let content = gemini::model_blocks(&parts, &mut ids).map_err(bad(line, id))?;
        let calls = tool_calls(line, id, obj)?;
        let usage = usage(line, obj.get("tokens"))?;
        let seen = self.seen.entry(id.to_string()).or_default();
        let mut rows = Vec::new();
        let mut new_calls = Vec::new();
        let generation = |content: Vec<Block>| {
            let mut m = Message::new(Role::Assistant, Kind::Generation, content, line);
            m.gen_id = Some(id.to_string());
            m
        };
        if !seen.added {
            seen.added = true;
            let mut blocks: Vec<Block> = thoughts(obj.get("thoughts"));
            blocks.extend(content);
            for b in &blocks {
                if let Block::ToolUse { id, name, .. } = b {
                    seen.calls.insert(id.clone());
                    new_calls.push((id.clone(), name.clone()));
                }
            }
            for c in &calls {
                if seen.calls.insert(c.id.clone()) {
                    new_calls.push((c.id.clone(), c.name.clone()));
                    blocks.push(c.tool_use());
                }
            }
            if !blocks.is_empty() {
                let mut m = generation(blocks);
                m.usage = usage;
                seen.usage = usage.is_some();
                rows.push(m);
            }
        } else {
            let blocks: Vec<Block> = calls
                .iter()
                .filter(|c| seen.calls.insert(c.id.clone()))
                .map(|c| {
                    new_calls.push((c.id.clone(), c.name.clone()));
                    c.tool_use()
                })
                .collect();
            if !blocks.is_empty() {
                rows.push(generation(blocks));
            }
        }
        if let (Some(u), false) = (usage, seen.usage) {
            seen.usage = true;
            let mut m = Message::new(Role::Meta, Kind::Usage, Vec::new(), line);
            m.gen_id = Some(id.to_string());
            m.usage = Some(u);
            rows.push(m);
        }
        self.open.extend(new_calls);
        for c in calls {
            if let Some((content, is_error)) = c.result
                && !self.answered.contains(&c.id)
            {
                self.answer(&c.id);
                rows.push(Message::tool_result(c.id, content, is_error, line));
            }
        }
        Ok(rows)
    }

    fn answer(&mut self, id: &str) {
        self.answered.insert(id.to_string());
        self.open.retain(|(o, _)| o != id);
    }
}

/// One entry of a message's `toolCalls`.
struct ToolCall {
    id: String,
    name: String,
    args: Value,
    /// Its result once the call ran: the content and whether it failed.
    result: Option<(ToolContent, bool)>,
}

impl ToolCall {
    fn tool_use(&self) -> Block {
        Block::ToolUse {
            id: self.id.clone(),
            name: self.name.clone(),
            input: self.args.clone(),
        }
    }
}

fn tool_calls(line: u64, msg: &str, obj: &Map<String, Value>) -> Result<Vec<ToolCall>, LineError> {
    let Some(list) = obj.get("toolCalls") else {
        return Ok(Vec::new());
    };
    let list = list.as_array().ok_or_else(|| {
        shape(
            line,
            format!(
                "message {msg}: \"toolCalls\" is {}; expected a list",
                type_name(list)
            ),
        )
    })?;
    list.iter()
        .enumerate()
        .map(|(k, tc)| {
            let o = tc.as_object().ok_or_else(|| {
                shape(
                    line,
                    format!(
                        "message {msg}: toolCalls[{k}] is {}; expected an object",
                        type_name(tc)
                    ),
                )
            })?;
            let name = opt_str(o, "name").ok_or_else(|| {
                shape(
                    line,
                    format!(
                        "message {msg}: toolCalls[{k}] has no \"name\"; expected the tool's name"
                    ),
                )
            })?;
            let id = opt_str(o, "id").unwrap_or_else(|| format!("{msg}-{k}"));
            let args = match o.get("args") {
                Some(v @ Value::Object(_)) => v.clone(),
                _ => Value::Object(Map::new()),
            };
            let error = o.get("status").and_then(Value::as_str) == Some("error");
            let result = match o.get("result") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some((ToolContent::Text(s.clone()), error)),
                Some(Value::Array(parts)) => {
                    // The parts sent back: the response's own content, and
                    // any other part (an image a tool read) beside it.
                    let mut text = Vec::new();
                    let mut failed = error;
                    for p in parts {
                        match p.get("functionResponse") {
                            Some(fr) => {
                                let (c, e) = gemini::response_content(fr.get("response"));
                                failed |= e;
                                text.push(c.text());
                            }
                            None => match p.get("text").and_then(Value::as_str) {
                                Some(t) => text.push(t.to_string()),
                                None => text.push(p.to_string()),
                            },
                        }
                    }
                    Some((ToolContent::Text(text.join("\n")), failed))
                }
                Some(other) => {
                    let (c, e) = gemini::response_content(Some(other));
                    Some((c, e || error))
                }
            };
            Ok(ToolCall {
                id,
                name,
                args,
                result,
            })
        })
        .collect()
}

/// The thoughts the CLI recorded beside a message (`subject`,
/// `description`), as it shows them.
fn thoughts(v: Option<&Value>) -> Vec<Block> {
    let Some(list) = v.and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|t| {
            let description = t.get("description").and_then(Value::as_str).unwrap_or("");
            let text = match t
                .get("subject")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                Some(s) => format!("**{s}** {description}"),
                None => description.to_string(),
            };
            (!text.trim().is_empty()).then_some(Block::Thinking {
                thinking: text,
                signature: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
