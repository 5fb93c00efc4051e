//! Importing a transcript file into the store: parse, name tasks, append rows,
//! mint eager tool forms, all in one transaction per file.
//!
//! Used by `compactor import` and by every command that accepts a FILE in place
//! of `--task` (the file is imported first, which is a no-op when unchanged).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::engine::estimate::CharsPerToken;
use crate::engine::toolrules::ToolRules;
use crate::model::{Block, Format};
use crate::store::{Store, StoreError, TaskRecord, Tx};
use crate::transcript::{
    self, LineError, OpenToolCall, ParseOptions, ParsedFile, TaskBuilder, Warning,
};

#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    pub format: Option<Format>,
    /// Overrides the task name found in the file.
    pub task: Option<String>,
    pub skip_invalid: bool,
    pub rules: ToolRules,
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    // The source is printed by the error chain (`{:#}`), not repeated here.
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{error}")]
    Parse { path: String, error: LineError },
    #[error("{path}")]
    Store {
        path: String,
        #[source]
        source: StoreError,
    },
}

/// What an import did with a file (`status` in `import --json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportStatus {
    /// Parsed and stored (rows may all have been there already).
    Imported,
    /// Byte-for-byte what was imported before: not parsed again.
    Unchanged,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Rows added by this import.
    pub added: u64,
    /// Rows that were already stored.
    pub already: u64,
    pub turns: u32,
    pub steps: u32,
    pub tool_forms_minted: u64,
    pub interrupted_tool_calls: Vec<InterruptedCall>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InterruptedCall {
    pub id: String,
    pub name: String,
    pub line: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LocatedWarning {
    pub task: String,
    pub line: u64,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SkippedReport {
    pub line: u64,
    pub column: u64,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: String,
    pub format: String,
    /// `imported`, or `unchanged` when the file is byte-identical to its last import.
    pub status: ImportStatus,
    pub lines: u64,
    pub bytes: u64,
    pub tasks: Vec<TaskReport>,
    pub not_conversation_lines: u64,
    pub duplicate_lines: u64,
    pub unknown_line_types: BTreeMap<String, u64>,
    pub skipped_lines: Vec<SkippedReport>,
    pub warnings: Vec<LocatedWarning>,
    /// 1 when the last line has no newline and does not parse yet (a session
    /// still being written): left for the next import.
    pub incomplete_lines: u64,
}

impl FileReport {
    pub fn added(&self) -> u64 {
        self.tasks.iter().map(|t| t.added).sum()
    }

    /// The file's main task: the first one that is not a subagent (`a/b`).
    pub fn main_task(&self) -> Option<&str> {
        self.tasks
            .iter()
            .find(|t| !t.id.contains('/'))
            .or(self.tasks.first())
            .map(|t| t.id.as_str())
    }
}

/// The path recorded for a source: canonical when it exists, as given otherwise.
pub fn source_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Import one file. Nothing of the file is stored unless all of it is.
///
/// Phases: check it is a regular file; skip it when it is known (unchanged,
/// or only a half-written line more); parse it whole; then name its tasks
/// and, in one transaction, store each task's rows and mint its tool forms.
pub fn ingest_file(
    store: &mut Store,
    path: &Path,
    opts: &IngestOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<FileReport, IngestError> {
    let shown = path.display().to_string();
    let io_err = |source| IngestError::Io {
        path: shown.clone(),
        source,
    };
    let canonical = source_path(path).display().to_string();
    let meta = regular_file(path).map_err(io_err)?;
    // Taken before reading: a file that grows while it is read has another
    // size next time, so it is read again.
    let stat = mtime_ns(&meta).map(|m| (meta.len(), m));
    if opts.task.is_none()
        && let Some(report) = known_file(store, path, &canonical, &shown, meta.len(), stat)?
    {
        return Ok(report);
    }
    let file = File::open(path).map_err(io_err)?;
    let parsed = parse(
        BufReader::with_capacity(1 << 20, file),
        opts,
        progress,
        &shown,
    )?;
    store_parsed(store, &canonical, &shown, parsed, opts, stat)
}

/// Phase 0: the file's metadata, when it is a regular file. Opening a FIFO
/// would wait for a writer forever.
fn regular_file(path: &Path) -> std::io::Result<std::fs::Metadata> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::other(
            "is a directory; expected a transcript file",
        ));
    }
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "is not a regular file (a FIFO, socket or device); expected a transcript file",
        ));
    }
    Ok(meta)
}

/// Phase 1: the report of a file imported before and not to be read again:
/// its size and modification time are as at the last import (near-instant),
/// or its bytes are what was consumed then, plus at most a half-written
/// line. `None`: the file is parsed.
fn known_file(
    store: &mut Store,
    path: &Path,
    canonical: &str,
    shown: &str,
    size: u64,
    stat: Option<(u64, i64)>,
) -> Result<Option<FileReport>, IngestError> {
    let store_err = |source| IngestError::Store {
        path: shown.to_string(),
        source,
    };
    if stat.is_some() && store.reader().source_stat(canonical).map_err(store_err)? == stat {
        return unchanged_report(store, canonical, size, shown).map(Some);
    }
    let Some((consumed, hash)) = store.reader().source(canonical).map_err(store_err)? else {
        return Ok(None);
    };
    let recognised = recognise(path, consumed, &hash, size).map_err(|source| IngestError::Io {
        path: shown.to_string(),
        source,
    })?;
    let Some(incomplete) = recognised else {
        return Ok(None);
    };
    store
        .transaction(|tx| tx.set_source_stat(canonical, stat))
        .map_err(store_err)?;
    let mut report = unchanged_report(store, canonical, size, shown)?;
    report.incomplete_lines = incomplete;
    Ok(Some(report))
}

/// Import a transcript read whole from a stream (`import -`), shown as
/// `shown`. It is recorded under a name made from its content, so importing
/// the same text again adds nothing and another text is another source.
pub fn ingest_bytes(
    store: &mut Store,
    shown: &str,
    bytes: &[u8],
    opts: &IngestOptions,
) -> Result<FileReport, IngestError> {
    let parsed = parse(bytes, opts, &mut |_| {}, shown)?;
    let canonical = format!("stdin:{}", &parsed.hash.to_hex()[..16]);
    store_parsed(store, &canonical, shown, parsed, opts, None)
}

/// A file's modification time in nanoseconds since the epoch, when the
/// platform tells it.
fn mtime_ns(meta: &std::fs::Metadata) -> Option<i64> {
    let t = meta.modified().ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

/// Phases 3 and 4: name the parsed file's tasks and store them, in one transaction.
fn store_parsed(
    store: &mut Store,
    canonical: &str,
    shown: &str,
    parsed: ParsedFile,
    opts: &IngestOptions,
    stat: Option<(u64, i64)>,
) -> Result<FileReport, IngestError> {
    let store_err = |source| IngestError::Store {
        path: shown.to_string(),
        source,
    };
    let base = match base_name(opts, &parsed) {
        Some(b) => b,
        None => content_name(store, canonical, parsed.format, &parsed.tasks).map_err(store_err)?,
    };
    let mut report = parsed_report(&parsed, shown);
    store
        .transaction(|tx| -> Result<(), StoreError> {
            let hash = *parsed.hash.as_bytes();
            let format = parsed.format;
            let source_id =
                tx.upsert_source(canonical, format, parsed.bytes, parsed.lines, &hash)?;
            tx.set_source_stat(canonical, stat)?;
            for t in &parsed.tasks {
                // Titles or a system prompt alone are no conversation yet (a Claude Code
                // file that so far holds only `summary` lines): storing them would make
                // a task named after the first line, orphaned once the session id appears.
                if t.has_conversation() {
                    store_task(tx, source_id, format, &base, t, &opts.rules, &mut report)?;
                }
            }
            Ok(())
        })
        .map_err(store_err)?;
    Ok(report)
}

/// Part of phase 1: whether the file is the one imported last time (`Some(0)`:
/// byte for byte, by its stored hash), or that plus a half-written last line
/// and nothing else (`Some(1)`: nothing to parse yet, the line is left for
/// later). `None`: the file is read and imported.
fn recognise(path: &Path, consumed: u64, hash: &[u8], size: u64) -> std::io::Result<Option<u64>> {
    if size == consumed {
        return Ok((hash_file(path)?.as_bytes()[..] == hash[..]).then_some(0));
    }
    // A whole line is at most this long to be worth checking here; a longer
    // growth is parsed anyway.
    const TAIL_MAX: u64 = 64 << 20;
    if consumed == 0 || size < consumed || size - consumed > TAIL_MAX {
        return Ok(None);
    }
    let mut f = File::open(path)?;
    let mut h = blake3::Hasher::new();
    std::io::copy(&mut (&mut f).take(consumed), &mut h)?;
    if h.finalize().as_bytes()[..] != hash[..] {
        return Ok(None);
    }
    let mut tail = Vec::new();
    f.read_to_end(&mut tail)?;
    // One line, no newline yet, not yet JSON: a whole new line means parsing.
    let half_line = !tail.contains(&b'\n') && transcript::reader::is_incomplete_tail(&tail);
    Ok(half_line.then_some(1))
}

/// The report of a file not read again: the tasks already stored, nothing added.
fn unchanged_report(
    store: &Store,
    canonical: &str,
    size: u64,
    shown: &str,
) -> Result<FileReport, IngestError> {
    let store_err = |source| IngestError::Store {
        path: shown.to_string(),
        source,
    };
    let tasks = store
        .reader()
        .tasks_of_source(canonical)
        .map_err(store_err)?
        .into_iter()
        .map(|(id, rows)| TaskReport {
            parent: None,
            added: 0,
            already: rows,
            turns: 0,
            steps: 0,
            tool_forms_minted: 0,
            interrupted_tool_calls: Vec::new(),
            id,
        })
        .collect();
    Ok(FileReport {
        path: shown.to_string(),
        format: String::new(),
        status: ImportStatus::Unchanged,
        lines: 0,
        bytes: size,
        tasks,
        not_conversation_lines: 0,
        duplicate_lines: 0,
        unknown_line_types: BTreeMap::new(),
        skipped_lines: Vec::new(),
        warnings: Vec::new(),
        incomplete_lines: 0,
    })
}

/// Phase 2: parse the whole file (a read error is IO, a bad line is input).
fn parse(
    reader: impl std::io::BufRead,
    opts: &IngestOptions,
    progress: &mut dyn FnMut(u64),
    shown: &str,
) -> Result<ParsedFile, IngestError> {
    let parse_opts = ParseOptions {
        format: opts.format,
        skip_invalid: opts.skip_invalid,
    };
    transcript::parse_reader(reader, &parse_opts, progress).map_err(|error| match error.line {
        0 => IngestError::Io {
            path: shown.to_string(),
            source: std::io::Error::other(error.message.clone()),
        },
        _ => IngestError::Parse {
            path: shown.to_string(),
            error,
        },
    })
}

/// Phase 3: the name the file's tasks are stored under: `--task`, else the
/// main task's session id, else a subagent's parent session. `None`: the
/// file names no session, so the name comes from its content.
fn base_name(opts: &IngestOptions, parsed: &ParsedFile) -> Option<String> {
    opts.task
        .clone()
        .or_else(|| {
            parsed
                .tasks
                .iter()
                .find(|t| t.key.is_empty())
                .and_then(|t| t.meta.session_id.clone())
        })
        .or_else(|| {
            parsed
                .tasks
                .iter()
                .find_map(|t| t.meta.parent_session.clone().or(t.meta.session_id.clone()))
        })
}

/// The report of a parsed file before any task is stored.
fn parsed_report(parsed: &ParsedFile, shown: &str) -> FileReport {
    FileReport {
        path: shown.to_string(),
        format: parsed.format.as_str().to_string(),
        status: ImportStatus::Imported,
        lines: parsed.lines,
        bytes: parsed.bytes,
        tasks: Vec::new(),
        not_conversation_lines: parsed.not_conversation,
        duplicate_lines: parsed.duplicates,
        unknown_line_types: parsed.unknown.clone(),
        skipped_lines: parsed
            .skipped
            .iter()
            .map(|e| SkippedReport {
                line: e.line,
                column: e.column,
                message: e.message.clone(),
            })
            .collect(),
        warnings: Vec::new(),
        incomplete_lines: parsed.incomplete_lines,
    }
}

/// Phase 4, inside the file's transaction: one task's record, its new rows
/// and their tool forms, reported.
fn store_task(
    tx: &Tx<'_>,
    source_id: i64,
    format: Format,
    base: &str,
    t: &TaskBuilder,
    rules: &ToolRules,
    report: &mut FileReport,
) -> Result<(), StoreError> {
    let (id, parent) = if t.key.is_empty() {
        (base.to_string(), t.meta.parent_session.clone())
    } else {
        (format!("{base}/{}", t.key), Some(base.to_string()))
    };
    tx.upsert_task(&TaskRecord {
        id: id.clone(),
        format: format.as_str().to_string(),
        parent_id: parent.clone(),
        session_id: t.meta.session_id.clone(),
        agent_id: t.meta.agent_id.clone(),
        cwd: t.meta.cwd.clone(),
        model: t.meta.model.clone(),
        cli_version: t.meta.cli_version.clone(),
        title: t.meta.title.clone(),
    })?;
    let outcome = tx.append_messages(&id, Some(source_id), &t.messages)?;
    let est = CharsPerToken::default();
    let minted = mint_tool_forms(tx, &id, &t.messages, outcome.already as usize, rules, &est)?;
    report.tasks.push(TaskReport {
        id: id.clone(),
        parent,
        added: outcome.added,
        already: outcome.already,
        turns: t.messages.last().map_or(0, |m| m.turn),
        steps: t.steps(),
        tool_forms_minted: minted,
        interrupted_tool_calls: t
            .open_tool_calls()
            .into_iter()
            .map(|OpenToolCall { id, name, line }| InterruptedCall { id, name, line })
            .collect(),
    });
    report.warnings.extend(
        t.warnings
            .iter()
            .map(|Warning { line, message }| LocatedWarning {
                task: id.clone(),
                line: *line,
                message: message.clone(),
            }),
    );
    Ok(())
}

/// A name for a task whose file names no session: the format and a hash of
/// the conversation's first message, which survives the file growing. When a
/// task of that name holds a different conversation (two logs that share a
/// system prompt), the hash takes in more messages until the name is free or
/// names this same conversation. A file imported before from the same path
/// keeps its task, so a rewrite of it is refused rather than imported anew.
fn content_name(
    store: &Store,
    source: &str,
    format: Format,
    tasks: &[crate::transcript::TaskBuilder],
) -> Result<String, StoreError> {
    let prefix = format!("{}-", format.as_str());
    if let Some((task, _)) = store
        .reader()
        .tasks_of_source(source)?
        .into_iter()
        .find(|(t, _)| t.starts_with(&prefix) && !t.contains('/'))
    {
        return Ok(task);
    }
    let msgs: &[crate::model::Message] = tasks
        .iter()
        .find(|t| t.key.is_empty())
        .map_or(&[], |t| &t.messages);
    let mut h = blake3::Hasher::new();
    let mut name = format!("{}-{}", format.as_str(), &h.finalize().to_hex()[..12]);
    for (i, m) in msgs.iter().enumerate() {
        h.update(m.role.as_str().as_bytes());
        h.update(b"\0");
        h.update(m.content_json().as_bytes());
        h.update(b"\0");
        name = format!("{}-{}", format.as_str(), &h.finalize().to_hex()[..12]);
        if store.reader().consistent_with(&name, msgs)? || i + 1 == msgs.len() {
            break;
        }
    }
    Ok(name)
}

/// Mint compacted forms for the tool results among `msgs[from..]`.
fn mint_tool_forms(
    tx: &crate::store::Tx<'_>,
    task_id: &str,
    msgs: &[crate::model::Message],
    from: usize,
    rules: &ToolRules,
    est: &CharsPerToken,
) -> Result<u64, StoreError> {
    let mut calls: HashMap<&str, (&str, &Value)> = HashMap::new();
    for m in msgs {
        for b in &m.content {
            if let Block::ToolUse { id, name, input } = b {
                calls.entry(id.as_str()).or_insert((name.as_str(), input));
            }
        }
    }
    let mut minted = 0;
    for m in &msgs[from.min(msgs.len())..] {
        for b in &m.content {
            let Block::ToolResult {
                tool_use_id,
                content,
                ..
            } = b
            else {
                continue;
            };
            let Some((name, input)) = calls.get(tool_use_id.as_str()) else {
                continue;
            };
            if let Some(f) = rules.compact(est, tool_use_id, name, input, content) {
                let stored = tx.put_tool_form(task_id, &f)?;
                minted += u64::from(stored);
            }
        }
    }
    Ok(minted)
}

fn hash_file(path: &Path) -> std::io::Result<blake3::Hash> {
    let mut h = blake3::Hasher::new();
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize())
}
