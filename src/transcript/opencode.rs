//! OpenCode's sessions: its SQLite store (`$XDG_DATA_HOME/opencode/opencode.db`),
//! tables `session`, `message` and `part`, each row's JSON in `data`.
//!
//! Not a line format: [`Database`] opens the store read-only and reads it in
//! one read transaction, so a store OpenCode is writing (WAL) is seen as one
//! consistent snapshot; `ingest` stores one task per session from it.
//!
//! Quirks handled here (OpenCode 1.18, recorded in `testdata/opencode/`):
//! - one assistant message is one model call: its parts run `step-start`,
//!   reasoning, text and tool parts, `step-finish` (the call's tokens and
//!   cost). A tool part holds the call and its result or error together:
//!   it becomes a `tool_use` in the generation row and a `tool_result` in
//!   the row after it. Usage: `tokens.input` excludes the cached tokens and
//!   `tokens.output` the reasoning ones (the provider's completion tokens are
//!   output + reasoning), as Anthropic's figures do.
//! - a message is imported once it is final: an assistant message once it
//!   has `time.completed` or an `error`; a user message once anything follows
//!   it (its parts are written one by one). The rest of the session waits for
//!   the next import, so a grown session appends rows, never rewrites one.
//! - text parts marked `synthetic` (a file's content read for an `@file`, the
//!   "Continue…" after a compaction) were sent but not typed: context, not an
//!   ask. `ignored` text, `text/plain` and directory file parts, agent
//!   mentions and patch parts were never sent: note rows.
//! - a compaction is a user message holding a `compaction` part (the model is
//!   later sent "What did we do so far?") and the assistant message marked
//!   `summary` that answers it: a boundary and the agent's summary. The
//!   summary call's usage is not a call of the conversation.
//! - OpenCode clears old tool outputs by setting `state.time.compacted`; the
//!   output stays in the part, and the raw record keeps it.
//! - a failed call (an assistant `error`) is never sent again: a synthetic
//!   row. An aborted one that streamed more than reasoning is sent again: a
//!   generation, its unfinished tools answered "[Tool execution was
//!   interrupted]" as OpenCode answers them.
//! - `opencode run` quotes a prompt that holds a space (`"…"`): kept as typed.
//! - subagent sessions name their parent in `parent_id`: their task is
//!   `PARENT/SESSION`.
//! - a row's `line` is the place of its first part in the session (1 = the
//!   first part of the first message).

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::TaskBuilder;
use super::common::image_from_url;
use crate::model::{Block, Kind, Message, Role, ToolContent, Usage};

/// The first bytes of every SQLite database file.
pub(crate) const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What OpenCode sends in place of a compaction part.
pub(crate) const COMPACTION_PROMPT: &str = "What did we do so far?";

/// What OpenCode sends in place of a subtask part.
const SUBTASK_PROMPT: &str = "The following tool was executed by the user";

/// What OpenCode answers for a tool call that never finished.
const INTERRUPTED: &str = "[Tool execution was interrupted]";

/// What the store is expected to be, for errors.
pub(crate) const EXPECTED: &str =
    "expected OpenCode's opencode.db (tables session, message and part, JSON in `data`)";

/// Whether the file starts as an SQLite database does.
pub(crate) fn is_sqlite(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path)?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..])? {
            0 => return Ok(false),
            n => got += n,
        }
    }
    Ok(&head == SQLITE_MAGIC)
}

/// A problem with one row of the store, or with the store itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{row}: {message}")]
pub struct RowError {
    /// Which row (`session ses_…, part prt_…`), or `the database`.
    pub row: String,
    pub message: String,
}

impl RowError {
    fn database(e: impl std::fmt::Display) -> RowError {
        RowError {
            row: "the database".to_string(),
            message: format!("{e}; {EXPECTED}"),
        }
    }
}

/// OpenCode's store, open read-only.
pub(crate) struct Database {
    conn: Connection,
}

/// One session's row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionRow {
    pub id: String,
    pub parent_id: Option<String>,
    pub title: Option<String>,
    pub directory: Option<String>,
    pub version: Option<String>,
    pub agent: Option<String>,
}

/// A row's `data` column: its JSON text, or why it holds none (SQLite
/// types a value by what was stored, whatever the column says: a BLOB, a
/// number or NULL is no JSON text).
pub(crate) type Data = Result<String, String>;

/// One message's row and its parts' rows, in OpenCode's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MessageRow {
    pub id: String,
    pub data: Data,
    /// `(id, data)` of each part.
    pub parts: Vec<(String, Data)>,
}

/// Column `i` of `r` as [`Data`].
fn data_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Data> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(t) => {
            String::from_utf8(t.to_vec()).map_err(|_| "text that is not UTF-8".to_string())
        }
        ValueRef::Blob(b) => Err(format!("a BLOB of {} bytes, not text", b.len())),
        ValueRef::Null => Err("NULL".to_string()),
        ValueRef::Integer(_) | ValueRef::Real(_) => Err("a number".to_string()),
    })
}

impl Database {
    /// Open the store read-only. A store in WAL mode is read with OpenCode
    /// writing it (readers never block its writer).
    pub(crate) fn open(path: &Path) -> Result<Database, RowError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(RowError::database)?;
        // OpenCode holds its write lock briefly; a checkpoint may too.
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(RowError::database)?;
        // A first read opens the WAL (SQLite makes it and its index when
        // they are missing) and tells an SQLite file that is no database.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
            .map_err(RowError::database)?;
        Ok(Database { conn })
    }

    /// Start the one read transaction every later read is made in.
    pub(crate) fn snapshot(&self) -> Result<Snapshot<'_>, RowError> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(RowError::database)?;
        for table in ["session", "message", "part"] {
            let found: Option<String> = tx
                .query_row(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .optional()
                .map_err(RowError::database)?;
            if found.is_none() {
                return Err(RowError::database(format!("no table `{table}`")));
            }
        }
        Ok(Snapshot { tx })
    }
}

/// The store as one read transaction saw it.
pub(crate) struct Snapshot<'c> {
    tx: rusqlite::Transaction<'c>,
}

impl Snapshot<'_> {
    /// Every session, oldest first (a subagent's after its parent's).
    pub(crate) fn sessions(&self) -> Result<Vec<SessionRow>, RowError> {
        let mut stmt = self
            .tx
            .prepare(
                "SELECT id, parent_id, title, directory, version, agent FROM session
                 ORDER BY time_created, id",
            )
            .map_err(RowError::database)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SessionRow {
                    id: r.get(0)?,
                    parent_id: r.get(1)?,
                    title: r.get(2)?,
                    directory: r.get(3)?,
                    version: r.get(4)?,
                    agent: r.get(5)?,
                })
            })
            .map_err(RowError::database)?;
        rows.collect::<Result<_, _>>().map_err(RowError::database)
    }

    /// A session's messages with their parts, in the order OpenCode reads
    /// them (messages by creation time then id, parts by id).
    pub(crate) fn messages(&self, session: &str) -> Result<Vec<MessageRow>, RowError> {
        let mut stmt = self
            .tx
            .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
            .map_err(RowError::database)?;
        let mut messages: Vec<MessageRow> = stmt
            .query_map([session], |r| {
                Ok(MessageRow {
                    id: r.get(0)?,
                    data: data_at(r, 1)?,
                    parts: Vec::new(),
                })
            })
            .map_err(RowError::database)?
            .collect::<Result<_, _>>()
            .map_err(RowError::database)?;
        let place: std::collections::HashMap<String, usize> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.clone(), i))
            .collect();
        let mut stmt = self
            .tx
            .prepare(
                "SELECT message_id, id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id",
            )
            .map_err(RowError::database)?;
        let parts = stmt
            .query_map([session], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    data_at(r, 2)?,
                ))
            })
            .map_err(RowError::database)?;
        for p in parts {
            let (message, id, data) = p.map_err(RowError::database)?;
            // A part of a message that is gone is never sent: left out.
            if let Some(&i) = place.get(&message) {
                messages[i].parts.push((id, data));
            }
        }
        Ok(messages)
    }
}

/// The task id of each session: its id, or `PARENT/ID` under its parent's
/// task when the parent is in the store.
pub(crate) fn task_ids(sessions: &[SessionRow]) -> BTreeMap<String, String> {
    let parents: BTreeMap<&str, Option<&str>> = sessions
        .iter()
        .map(|s| (s.id.as_str(), s.parent_id.as_deref()))
        .collect();
    let mut ids = BTreeMap::new();
    for s in sessions {
        // The chain up to a root, cut at a loop or a parent not in the store.
        let mut chain = vec![s.id.as_str()];
        let mut at = s.id.as_str();
        while let Some(Some(p)) = parents.get(at) {
            if chain.contains(p) || !parents.contains_key(p) {
                break;
            }
            chain.push(p);
            at = p;
        }
        chain.reverse();
        ids.insert(s.id.clone(), chain.join("/"));
    }
    ids
}

/// What reading one session gave.
#[derive(Debug, Default)]
pub(crate) struct SessionRead {
    /// Parts read (the report's `lines`) and their JSON's bytes.
    pub parts: u64,
    pub bytes: u64,
    /// Parts that are no conversation and no note (snapshots).
    pub not_conversation: u64,
    pub unknown: BTreeMap<String, u64>,
    /// Messages left for the next import: not final yet.
    pub held_back: u64,
    /// Parts skipped as invalid (`--skip-invalid`), each with its reason.
    pub skipped: Vec<(u64, String)>,
}

/// The message fields the mapping reads.
#[derive(Deserialize)]
struct Info {
    role: Option<String>,
    #[serde(default)]
    time: InfoTime,
    error: Option<Value>,
    summary: Option<Value>,
    #[serde(rename = "modelID")]
    model_id: Option<String>,
    path: Option<InfoPath>,
}

#[derive(Deserialize, Default)]
struct InfoTime {
    created: Option<i64>,
    completed: Option<i64>,
}

#[derive(Deserialize)]
struct InfoPath {
    cwd: Option<String>,
}

/// A message read: its fields, and its parts as JSON objects.
struct Read<'m> {
    row: &'m MessageRow,
    info: Info,
    parts: Vec<(&'m str, Map<String, Value>)>,
    /// The `line` of its first part.
    line: u64,
}

impl Read<'_> {
    fn is_user(&self) -> bool {
        self.info.role.as_deref() == Some("user")
    }

    fn is_assistant(&self) -> bool {
        self.info.role.as_deref() == Some("assistant")
    }

    /// An assistant message still being written.
    fn unfinished(&self) -> bool {
        self.is_assistant() && self.info.time.completed.is_none() && self.info.error.is_none()
    }

    fn timestamp(&self) -> Option<String> {
        self.info.time.created.map(iso_millis)
    }

    fn where_(&self, session: &str, part: Option<&str>) -> String {
        match part {
            Some(p) => format!("session {session}, message {}, part {p}", self.row.id),
            None => format!("session {session}, message {}", self.row.id),
        }
    }
}

/// Map one session's rows onto `task` (a fresh builder), what is final of
/// it. `skip_invalid` skips a part that is not JSON of the expected shape
/// (listed in the result) instead of failing.
pub(crate) fn read_session(
    session: &SessionRow,
    rows: &[MessageRow],
    skip_invalid: bool,
    task: &mut TaskBuilder,
) -> Result<SessionRead, RowError> {
    let mut out = SessionRead::default();
    let mut read = Vec::with_capacity(rows.len());
    let mut line = 1u64;
    for row in rows {
        let info = row
            .data
            .as_deref()
            .map_err(|why| format!("`data` is {why}"))
            .and_then(|d| serde_json::from_str::<Info>(d).map_err(|e| e.to_string()));
        let info = match info {
            Ok(info) => info,
            Err(e) => {
                let message =
                    format!("{e}; expected OpenCode's message JSON ({{\"role\",\"time\",…}})");
                if !skip_invalid {
                    return Err(RowError {
                        row: format!("session {}, message {}", session.id, row.id),
                        message,
                    });
                }
                // The message goes, and its parts with it.
                out.parts += row.parts.len() as u64;
                out.skipped.push((
                    line,
                    format!(
                        "message {} ({}): {message}",
                        row.id,
                        match row.parts.len() {
                            1 => "its 1 part skipped too".to_string(),
                            n => format!("its {n} parts skipped too"),
                        }
                    ),
                ));
                line += row.parts.len().max(1) as u64;
                continue;
            }
        };
        let mut parts = Vec::with_capacity(row.parts.len());
        for (i, (id, data)) in row.parts.iter().enumerate() {
            out.parts += 1;
            let parsed = match data {
                Ok(text) => {
                    out.bytes += text.len() as u64;
                    serde_json::from_str::<Value>(text).map_err(|e| format!("invalid JSON: {e}"))
                }
                Err(why) => Err(format!("`data` is {why}")),
            };
            match parsed {
                Ok(Value::Object(obj)) if obj.get("type").is_some_and(Value::is_string) => {
                    parts.push((id.as_str(), obj));
                }
                other => {
                    let what = match other {
                        Ok(_) => "not an object with a \"type\"".to_string(),
                        Err(e) => e,
                    };
                    let message = format!("{what}; expected OpenCode's part JSON ({{\"type\",…}})");
                    if !skip_invalid {
                        return Err(RowError {
                            row: format!("session {}, message {}, part {id}", session.id, row.id),
                            message,
                        });
                    }
                    out.skipped
                        .push((line + i as u64, format!("part {id}: {message}")));
                }
            }
        }
        let first = line;
        line += row.parts.len().max(1) as u64;
        read.push(Read {
            row,
            info,
            parts,
            line: first,
        });
    }
    // Only what is final: up to the first message still being written, and
    // a user message only once something follows it.
    let mut end = read.iter().position(Read::unfinished).unwrap_or(read.len());
    if end == read.len() && read.last().is_some_and(Read::is_user) {
        end -= 1;
    }
    out.held_back = (read.len() - end) as u64;
    task.meta.session_id = Some(session.id.clone());
    task.meta.cwd = session.directory.clone();
    task.meta.cli_version = session.version.clone();
    task.meta.title = session.title.clone().filter(|t| !is_placeholder_title(t));
    if session.parent_id.is_some() {
        task.meta.agent_id = session.agent.clone();
    }
    for m in &read[..end] {
        if m.is_assistant() {
            if let Some(model) = &m.info.model_id {
                task.meta.model = Some(model.clone());
            }
            if task.meta.cwd.is_none() {
                task.meta.cwd = m.info.path.as_ref().and_then(|p| p.cwd.clone());
            }
        }
        let mapped = if m.is_user() {
            user_message(m, task, &mut out)
        } else if m.is_assistant() {
            assistant_message(m, task, &mut out)
        } else {
            let role = m.info.role.as_deref().unwrap_or("none");
            *out.unknown
                .entry(format!("message role {role}"))
                .or_default() += 1;
            Ok(())
        };
        mapped.map_err(|e| RowError {
            row: m.where_(&session.id, e.0.as_deref()),
            message: e.1,
        })?;
    }
    Ok(out)
}

/// A part of the wrong shape: its id and what is wrong.
type PartError = (Option<String>, String);

fn str_field<'a>(part: (&str, &'a Map<String, Value>), key: &str) -> Result<&'a str, PartError> {
    part.1.get(key).and_then(Value::as_str).ok_or_else(|| {
        let ty = part.1.get("type").and_then(Value::as_str).unwrap_or("");
        (
            Some(part.0.to_string()),
            format!("a {ty} part without a string \"{key}\"; expected OpenCode's part JSON"),
        )
    })
}

/// A note row's block: what OpenCode recorded, under a type of its own (a
/// plain `text` or `image` would be read back as a conversation block).
fn note(kind: &str, fields: Value) -> Block {
    let mut obj = match fields {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    obj.insert("type".into(), Value::String(format!("opencode.{kind}")));
    Block::Other(Value::Object(obj))
}

fn push(task: &mut TaskBuilder, m: &Read<'_>, mut msg: Message) {
    msg.source_uuid = Some(m.row.id.clone());
    msg.timestamp = m.timestamp();
    task.push(msg);
}

fn user_message(
    m: &Read<'_>,
    task: &mut TaskBuilder,
    out: &mut SessionRead,
) -> Result<(), PartError> {
    let mut sent = Vec::new();
    let mut notes = Vec::new();
    let mut typed = false;
    let mut compaction = None;
    for (id, p) in &m.parts {
        let part = (*id, p);
        match p["type"].as_str().unwrap_or("") {
            "text" => {
                let text = str_field(part, "text")?;
                if p.get("ignored").and_then(Value::as_bool) == Some(true) {
                    notes.push(note("ignored_text", json!({ "text": text })));
                    continue;
                }
                typed |= p.get("synthetic").and_then(Value::as_bool) != Some(true);
                sent.push(Block::Text {
                    text: text.to_string(),
                });
            }
            "file" => {
                let mime = str_field(part, "mime")?;
                let url = str_field(part, "url")?;
                let filename = p.get("filename").cloned().unwrap_or(Value::Null);
                let path = p.get("source").and_then(|s| s.get("path")).cloned();
                if mime == "text/plain" || mime == "application/x-directory" {
                    // Its content reaches the model as synthetic text parts.
                    let mut f = json!({ "mime": mime, "filename": filename });
                    if let Some(path) = path {
                        f["path"] = path;
                    }
                    if !url.starts_with("data:") {
                        f["url"] = Value::String(url.to_string());
                    }
                    notes.push(note("file", f));
                } else if mime.starts_with("image/") {
                    sent.push(image_from_url(url));
                } else {
                    let name = filename.as_str().unwrap_or("file");
                    sent.push(Block::Text {
                        text: format!("[Attached {mime}: {name}]"),
                    });
                    notes.push(note("file", json!({ "mime": mime, "filename": filename })));
                }
            }
            "agent" => {
                let name = str_field(part, "name")?;
                notes.push(note("agent", json!({ "name": name })));
            }
            "subtask" => {
                sent.push(Block::Text {
                    text: SUBTASK_PROMPT.to_string(),
                });
                let keep = ["prompt", "description", "agent", "command"];
                let fields: Map<String, Value> = p
                    .iter()
                    .filter(|(k, _)| keep.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                notes.push(note("subtask", Value::Object(fields)));
            }
            "compaction" => {
                let auto = p.get("auto").and_then(Value::as_bool) == Some(true);
                let overflow = p.get("overflow").and_then(Value::as_bool) == Some(true);
                compaction = Some(match (auto, overflow) {
                    (_, true) => "overflow",
                    (true, false) => "auto",
                    (false, false) => "manual",
                });
            }
            other => {
                *out.unknown.entry(other.to_string()).or_default() += 1;
            }
        }
    }
    if let Some(trigger) = compaction {
        let text = format!(
            "Conversation compacted ({trigger}): the model is sent \"{COMPACTION_PROMPT}\" and the summary"
        );
        let msg = Message::new(
            Role::Meta,
            Kind::CompactBoundary,
            vec![Block::Text { text }],
            m.line,
        );
        push(task, m, msg);
    } else if !sent.is_empty() {
        let kind = if typed { Kind::Ask } else { Kind::Context };
        push(task, m, Message::new(Role::User, kind, sent, m.line));
    }
    if !notes.is_empty() {
        push(task, m, Message::new(Role::Meta, Kind::Note, notes, m.line));
    }
    Ok(())
}

/// One model call of an assistant message, its parts from one `step-start`.
#[derive(Default)]
struct Step {
    gen_id: String,
    line: u64,
    blocks: Vec<Block>,
    results: Vec<Block>,
    finish: Option<(Usage, Value)>,
    notes: Vec<Block>,
}

fn assistant_message(
    m: &Read<'_>,
    task: &mut TaskBuilder,
    out: &mut SessionRead,
) -> Result<(), PartError> {
    if m.info.summary == Some(Value::Bool(true)) {
        let text: Vec<&str> = m
            .parts
            .iter()
            .filter(|(_, p)| p["type"] == "text")
            .filter_map(|(_, p)| p.get("text").and_then(Value::as_str))
            .collect();
        let text = text.join("\n");
        if !text.is_empty() {
            let msg = Message::new(
                Role::Assistant,
                Kind::CompactSummary,
                vec![Block::Text { text }],
                m.line,
            );
            push(task, m, msg);
        }
        return Ok(());
    }
    if let Some(error) = &m.info.error {
        let name = error.get("name").and_then(Value::as_str).unwrap_or("error");
        let aborted = name == "MessageAbortedError";
        let streamed = m
            .parts
            .iter()
            .any(|(_, p)| !matches!(p["type"].as_str(), Some("step-start" | "reasoning")));
        if !(aborted && streamed) {
            // Never sent again: a placeholder, not a model call.
            let message = error
                .get("data")
                .and_then(|d| d.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let text = format!("{name}: {message}");
            let msg = Message::new(
                Role::Assistant,
                Kind::Synthetic,
                vec![Block::Text { text }],
                m.line,
            );
            push(task, m, msg);
            return Ok(());
        }
    }
    let mut steps: Vec<Step> = Vec::new();
    for (i, (id, p)) in m.parts.iter().enumerate() {
        let part = (*id, p);
        let line = m.line + i as u64;
        let ty = p["type"].as_str().unwrap_or("");
        if ty == "step-start" || steps.is_empty() {
            steps.push(Step {
                gen_id: if ty == "step-start" {
                    id.to_string()
                } else {
                    m.row.id.clone()
                },
                line,
                ..Step::default()
            });
            if ty == "step-start" {
                continue;
            }
        }
        let step = steps.last_mut().expect("a step was opened");
        match ty {
            "text" => {
                let text = str_field(part, "text")?;
                if !text.is_empty() {
                    step.blocks.push(Block::Text {
                        text: text.to_string(),
                    });
                }
            }
            "reasoning" => {
                let text = str_field(part, "text")?;
                if !text.is_empty() {
                    step.blocks.push(Block::Thinking {
                        thinking: text.to_string(),
                        signature: None,
                    });
                }
            }
            "tool" => {
                let (call, result) = tool_part(part)?;
                step.blocks.push(call);
                step.results.push(result);
            }
            "step-finish" => {
                step.finish = Some(step_finish(part)?);
            }
            "patch" => {
                let hash = p.get("hash").cloned().unwrap_or(Value::Null);
                let files = p.get("files").cloned().unwrap_or(Value::Null);
                step.notes
                    .push(note("patch", json!({ "hash": hash, "files": files })));
            }
            "retry" => {
                let attempt = p.get("attempt").cloned().unwrap_or(Value::Null);
                let message = p
                    .get("error")
                    .and_then(|e| e.get("data"))
                    .and_then(|d| d.get("message"))
                    .cloned()
                    .unwrap_or(Value::Null);
                step.notes.push(note(
                    "retry",
                    json!({ "attempt": attempt, "error": message }),
                ));
            }
            "snapshot" => out.not_conversation += 1,
            other => *out.unknown.entry(other.to_string()).or_default() += 1,
        }
    }
    for step in steps {
        if !step.blocks.is_empty() {
            let mut g = Message::new(Role::Assistant, Kind::Generation, step.blocks, step.line);
            g.gen_id = Some(step.gen_id.clone());
            push(task, m, g);
        }
        if !step.results.is_empty() {
            push(
                task,
                m,
                Message::new(Role::User, Kind::ToolResult, step.results, step.line),
            );
        }
        if let Some((usage, finish)) = step.finish {
            let mut u = Message::new(
                Role::Meta,
                Kind::Usage,
                vec![note("step_finish", finish)],
                step.line,
            );
            u.gen_id = Some(step.gen_id.clone());
            u.usage = Some(usage);
            push(task, m, u);
        }
        if !step.notes.is_empty() {
            push(
                task,
                m,
                Message::new(Role::Meta, Kind::Note, step.notes, step.line),
            );
        }
    }
    Ok(())
}

/// A tool part: the call, and its result as the model was sent it.
fn tool_part(part: (&str, &Map<String, Value>)) -> Result<(Block, Block), PartError> {
    let id = str_field(part, "callID")?.to_string();
    let name = str_field(part, "tool")?.to_string();
    let bad = |what: &str| {
        (
            Some(part.0.to_string()),
            format!("a tool part whose \"state\" {what}; expected OpenCode's tool state JSON"),
        )
    };
    let state = part
        .1
        .get("state")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("is missing"))?;
    let input = state.get("input").cloned().unwrap_or_else(|| json!({}));
    let status = state.get("status").and_then(Value::as_str).unwrap_or("");
    let (content, is_error) = match status {
        "completed" => {
            let output = state
                .get("output")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("has no string \"output\""))?;
            let media: Vec<Block> = state
                .get("attachments")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|a| {
                    let url = a.get("url")?.as_str()?;
                    let mime = a.get("mime")?.as_str()?;
                    (mime.starts_with("image/") && url.starts_with("data:"))
                        .then(|| image_from_url(url))
                })
                .collect();
            if media.is_empty() {
                (ToolContent::Text(output.to_string()), false)
            } else {
                let mut blocks = vec![Block::Text {
                    text: output.to_string(),
                }];
                blocks.extend(media);
                (ToolContent::Blocks(blocks), false)
            }
        }
        "error" => {
            let meta = state.get("metadata");
            let interrupted = meta.and_then(|m| m.get("interrupted")) == Some(&Value::Bool(true));
            match meta.and_then(|m| m.get("output")).and_then(Value::as_str) {
                // What a tool had put out when it was stopped is sent as its output.
                Some(output) if interrupted => (ToolContent::Text(output.to_string()), false),
                _ => {
                    let error = state
                        .get("error")
                        .and_then(Value::as_str)
                        .ok_or_else(|| bad("has no string \"error\""))?;
                    (ToolContent::Text(error.to_string()), true)
                }
            }
        }
        "pending" | "running" => (ToolContent::Text(INTERRUPTED.to_string()), true),
        other => return Err(bad(&format!("has the status {other:?}"))),
    };
    let call = Block::ToolUse {
        id: id.clone(),
        name,
        input,
    };
    let result = Block::ToolResult {
        tool_use_id: id,
        content,
        is_error,
    };
    Ok((call, result))
}

/// A `step-finish` part: its tokens as usage (Anthropic's terms), and what
/// else it records (the finish reason, the cost in dollars).
fn step_finish(part: (&str, &Map<String, Value>)) -> Result<(Usage, Value), PartError> {
    let p = part.1;
    let tokens = p.get("tokens").and_then(Value::as_object);
    let count = |v: Option<&Value>| -> Result<u64, PartError> {
        match v {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v
                .as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                        .map(|f| f as u64)
                })
                .ok_or_else(|| {
                    (
                        Some(part.0.to_string()),
                        format!(
                            "a step-finish part with a token count {v}; expected whole numbers"
                        ),
                    )
                }),
        }
    };
    let get = |k: &str| tokens.and_then(|t| t.get(k));
    let cache = get("cache");
    let usage = Usage {
        input_tokens: count(get("input"))?,
        output_tokens: count(get("output"))?.saturating_add(count(get("reasoning"))?),
        cache_read_input_tokens: count(cache.and_then(|c| c.get("read")))?,
        cache_creation_input_tokens: count(cache.and_then(|c| c.get("write")))?,
    };
    let reason = p.get("reason").cloned().unwrap_or(Value::Null);
    let cost = p.get("cost").cloned().unwrap_or(Value::Null);
    Ok((usage, json!({ "reason": reason, "cost": cost })))
}

/// The title OpenCode gives a session before it has one of its own.
fn is_placeholder_title(title: &str) -> bool {
    title.starts_with("New session - ") || title.starts_with("Child session - ")
}

/// Milliseconds since the epoch as ISO-8601 UTC with milliseconds, as the
/// other formats write their timestamps.
pub(crate) fn iso_millis(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = crate::model::time::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests;
