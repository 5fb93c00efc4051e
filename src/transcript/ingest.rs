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
use crate::engine::toolrules::{ToolForm, ToolRules};
use crate::model::{Block, Format, Message, ToolContent};
use crate::store::{
    AppendOutcome, EncodedRow, PIPELINE_BATCH, PIPELINE_DEPTH, RowEncoder, Store, StoreError,
    TaskInfo, Tx,
};
use crate::transcript::idtable::IdTable;
use crate::transcript::{
    self, Digest, LineError, OpenToolCall, ParseOptions, ParsedFile, TaskBuilder, TaskSet, Warning,
};

mod database;
mod forms;

use forms::{FormMinter, Minted, put_forms};

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
    /// A database source (OpenCode's store) or one of its rows is not what
    /// was expected.
    #[error("{path}: {error}")]
    Row {
        path: String,
        error: crate::transcript::opencode::RowError,
    },
}

impl crate::model::Hint for IngestError {
    fn hint(&self) -> Option<&str> {
        match self {
            IngestError::Parse { error, .. } => error.hint,
            IngestError::Io { .. } | IngestError::Store { .. } | IngestError::Row { .. } => None,
        }
    }
}

impl IngestError {
    /// Whether the file was refused before any format was recognised in it
    /// (none was given): it is not a transcript, as far as its first lines
    /// tell (an empty file, a `package.json`), rather than a transcript with
    /// a bad line.
    pub fn is_not_a_transcript(&self) -> bool {
        matches!(self, IngestError::Parse { error, .. } if error.format_unknown)
    }

    /// The store stayed busy (another process writing) past the wait allowed.
    pub fn is_busy(&self) -> bool {
        matches!(self, IngestError::Store { source, .. } if source.is_busy())
    }
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
    /// The report of the file shown as `shown`, of `bytes` bytes, before
    /// anything is counted in it.
    pub(crate) fn empty(
        shown: &str,
        format: String,
        status: ImportStatus,
        bytes: u64,
    ) -> FileReport {
        FileReport {
            path: shown.to_string(),
            format,
            status,
            lines: 0,
            bytes,
            tasks: Vec::new(),
            not_conversation_lines: 0,
            duplicate_lines: 0,
            unknown_line_types: BTreeMap::new(),
            skipped_lines: Vec::new(),
            warnings: Vec::new(),
            incomplete_lines: 0,
        }
    }

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
    // OpenCode's sessions are an SQLite database, read as one.
    if opts.format.is_none_or(|f| f == Format::Opencode)
        && (opts.format.is_some() || transcript::opencode::is_sqlite(path).map_err(io_err)?)
    {
        return database::ingest_opencode(store, path, &canonical, &shown, opts, progress);
    }
    // Taken before reading: a file that grows while it is read has another
    // size next time, so it is read again.
    let stat = mtime_ns(&meta).map(|m| (meta.len(), m));
    if opts.task.is_none()
        && let Some(report) = known_file(store, path, &canonical, &shown, meta.len(), stat)?
    {
        return Ok(report);
    }
    let file = File::open(path).map_err(io_err)?;
    let file = BufReader::with_capacity(READ_BUFFER, file);
    ingest_stream(store, &canonical, &shown, file, opts, stat, progress)
}

/// The most input `compactor import` commits in one batch of small files
/// (see [`Store::begin_batch`](crate::store::Store::begin_batch)); a file
/// this large or larger is a transaction of its own. An import stopped
/// midway loses at most this much of the whole files before the one being
/// read: the next import takes them again.
pub const BATCH_BYTES: u64 = 8 << 20;

/// The read buffer of a transcript file. Under the allocator's
/// [`LARGE`](crate::allocator::LARGE), so one import of many files reuses
/// the same memory rather than mapping (and faulting in) a new buffer for
/// each file (an import of the corpus took half the page faults).
const READ_BUFFER: usize = 512 << 10;

/// What the parsing thread hands on.
enum ParseEvent {
    /// Bytes read so far.
    Progress(u64),
    /// The file's first task is stored from here on as it is parsed: its
    /// format, the base name of the file's tasks and the task's key.
    Start {
        format: Format,
        base: String,
        key: String,
    },
    /// The first task's next messages, final and in file order.
    Rows(Vec<Message>),
}

/// What the encoding thread hands on.
enum Encoded {
    Progress(u64),
    /// Each message's encoded row and the tool forms it mints.
    Rows(Vec<(EncodedRow, Vec<Minted>)>),
    /// The minter's table of ids failed: the import fails.
    Failed(std::io::Error),
}

/// Phases 2 to 4 for a file read as a stream, on three threads: one parses
/// and normalises, one serialises, hashes and compresses (the store's
/// [`RowEncoder`]), this one inserts and mints tool forms, joined by bounded
/// channels of small batches, so memory stays at a few batches however
/// large the file. Once the first lines name the file's tasks (`--task`, or
/// the main session's id) and its first task has a conversation, that
/// task's messages are stored as they are parsed, in the file's one
/// transaction: a bad line later still leaves nothing stored. Its other
/// tasks (subagents inline in a Claude Code session) and files whose name
/// comes only from their end are stored after the parse.
fn ingest_stream(
    store: &mut Store,
    canonical: &str,
    shown: &str,
    reader: impl std::io::BufRead + Send,
    opts: &IngestOptions,
    stat: Option<(u64, i64)>,
    progress: &mut dyn FnMut(u64),
) -> Result<FileReport, IngestError> {
    std::thread::scope(|scope| {
        let (send, events) = std::sync::mpsc::sync_channel::<ParseEvent>(PIPELINE_DEPTH);
        let parser = scope.spawn(move || parse_streaming(reader, opts, send));
        let mut start = None;
        for event in &events {
            match event {
                ParseEvent::Progress(n) => progress(n),
                ParseEvent::Start { format, base, key } => {
                    start = Some((format, base, key));
                    break;
                }
                ParseEvent::Rows(_) => unreachable!("rows are sent after the start"),
            }
        }
        let join =
            |parser: std::thread::ScopedJoinHandle<'_, Result<ParsedFile, LineError>>| match parser
                .join()
            {
                Ok(parsed) => parsed.map_err(|e| parse_error(shown, e)),
                Err(panic) => std::panic::resume_unwind(panic),
            };
        let Some((format, base, key)) = start else {
            let parsed = join(parser)?;
            return store_parsed(store, canonical, shown, parsed, opts, stat);
        };
        let stored = store.transaction(|tx| -> Result<FileReport, Failed> {
            let source_id = tx.upsert_source(canonical, format, 0, 0, &[0u8; 32])?;
            let id = if key.is_empty() {
                base.clone()
            } else {
                format!("{base}/{key}")
            };
            let mut writer = tx.row_writer(&id, Some(source_id))?;
            let encoder = Encoder {
                rows: RowEncoder::new(writer.stored()).indexing(writer.indexes()),
                forms: FormMinter::new(&opts.rules),
                skip: writer.stored(),
                seen: 0,
            };
            let (send, encoded) = std::sync::mpsc::sync_channel::<Encoded>(PIPELINE_DEPTH);
            scope.spawn(move || encoder.run(events, send));
            let mut minted = 0;
            // Returning on an error drops `encoded`, which stops the other
            // two threads at their next batch.
            for batch in encoded {
                match batch {
                    Encoded::Progress(n) => progress(n),
                    Encoded::Rows(rows) => {
                        for (row, forms) in rows {
                            writer.push(row)?;
                            if forms.iter().any(|f| matches!(f, Minted::Late { .. })) {
                                // A late result's call is read back from the store.
                                writer.flush()?;
                            }
                            minted += put_forms(tx, &id, &opts.rules, &forms)?;
                        }
                    }
                    Encoded::Failed(e) => return Err(Failed::Ids(e)),
                }
            }
            let mut parsed = join(parser).map_err(Failed::Ingest)?;
            name_from_codex_index(format, canonical, &mut parsed.tasks);
            let outcome = writer.finish()?;
            tx.upsert_source(
                canonical,
                format,
                parsed.bytes,
                parsed.lines,
                parsed.hash.as_bytes(),
            )?;
            tx.set_source_stat(canonical, stat)?;
            let mut report = parsed_report(&parsed, shown);
            let mut tasks = parsed.tasks.iter();
            let first = tasks.next().expect("the streamed task");
            upsert_task(tx, format, &base, first)?;
            report_task(&base, first, outcome, minted, &mut report);
            for t in tasks.filter(|t| t.has_conversation()) {
                store_task(tx, source_id, format, &base, t, &opts.rules, &mut report)?;
            }
            Ok(report)
        });
        stored.map_err(|e| e.into_ingest(shown))
    })
}

/// Why a streamed import stopped: the store, or the file (a bad line).
enum Failed {
    Store(StoreError),
    Ingest(IngestError),
    /// A tool form minter's table of ids (its temporary file).
    Ids(std::io::Error),
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Failed {
        Failed::Store(e)
    }
}

impl Failed {
    fn into_ingest(self, shown: &str) -> IngestError {
        match self {
            Failed::Store(source) => IngestError::Store {
                path: shown.to_string(),
                source,
            },
            Failed::Ingest(e) => e,
            Failed::Ids(e) => IngestError::Io {
                path: shown.to_string(),
                source: std::io::Error::new(
                    e.kind(),
                    format!("the import's temporary file of ids: {e}"),
                ),
            },
        }
    }
}

/// The parsing thread of [`ingest_stream`]: parse, and once the file's
/// first task can be stored as it comes, hand its messages on in batches.
fn parse_streaming(
    reader: impl std::io::BufRead,
    opts: &IngestOptions,
    send: std::sync::mpsc::SyncSender<ParseEvent>,
) -> Result<ParsedFile, LineError> {
    let parse_opts = ParseOptions {
        format: opts.format,
        skip_invalid: opts.skip_invalid,
    };
    let hung_up = || LineError::new(0, 0, "the import stopped");
    let progress_send = send.clone();
    let mut progress = |n| {
        // A closed channel ends the parse at its next batch instead.
        let _ = progress_send.send(ParseEvent::Progress(n));
    };
    let mut started = false;
    let mut batch = Vec::new();
    let mut flush = |format: Format, tasks: &mut TaskSet| -> Result<(), LineError> {
        if !started {
            let Some(base) = stream_base(opts, format, tasks) else {
                return Ok(());
            };
            let key = tasks.first_mut().map(|t| t.key.clone()).unwrap_or_default();
            send.send(ParseEvent::Start { format, base, key })
                .map_err(|_| hung_up())?;
            started = true;
        }
        let Some(first) = tasks.first_mut() else {
            return Ok(());
        };
        batch.append(&mut first.messages);
        if batch.len() >= PIPELINE_BATCH {
            send.send(ParseEvent::Rows(std::mem::take(&mut batch)))
                .map_err(|_| hung_up())?;
        }
        Ok(())
    };
    let parsed = transcript::parse_stream(reader, &parse_opts, &mut progress, &mut flush)?;
    if !batch.is_empty() {
        send.send(ParseEvent::Rows(batch)).map_err(|_| hung_up())?;
    }
    Ok(parsed)
}

/// The base name of the file's tasks, once it is final and its first task
/// can be stored as it is parsed: `--task`, or the main session's id (set
/// once, by the first line that states it), for the line formats whose
/// importers never look back at the messages pushed (Claude Code, Codex),
/// when the first task has a conversation (a task without one is not
/// stored). `None`: not yet, or never (the name comes from the whole file).
fn stream_base(opts: &IngestOptions, format: Format, tasks: &mut TaskSet) -> Option<String> {
    if !matches!(format, Format::ClaudeCode | Format::Codex)
        || !tasks.first_mut().is_some_and(|t| t.has_conversation())
    {
        return None;
    }
    opts.task
        .clone()
        .or_else(|| tasks.get("").and_then(|t| t.meta.session_id.clone()))
}

/// The encoding thread of [`ingest_stream`]: the first task's rows encoded
/// and its tool forms minted, off the thread that inserts them.
struct Encoder<'r> {
    rows: RowEncoder,
    forms: FormMinter<'r>,
    /// Rows the store already holds: their results are not minted again.
    skip: u64,
    seen: u64,
}

impl Encoder<'_> {
    fn run(
        mut self,
        events: std::sync::mpsc::Receiver<ParseEvent>,
        send: std::sync::mpsc::SyncSender<Encoded>,
    ) {
        for event in events {
            let out = match event {
                ParseEvent::Progress(n) => Encoded::Progress(n),
                ParseEvent::Rows(msgs) => {
                    let rows = msgs.into_iter().map(|mut m| {
                        let row = self.rows.encode_taking(&mut m);
                        let forms = self.forms.take(&m, self.seen, self.seen >= self.skip)?;
                        self.seen += 1;
                        Ok((row, forms))
                    });
                    match rows.collect() {
                        Ok(rows) => Encoded::Rows(rows),
                        Err(e) => Encoded::Failed(e),
                    }
                }
                ParseEvent::Start { .. } => continue,
            };
            if send.send(out).is_err() {
                return;
            }
        }
    }
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
        let mut report = unchanged_report(store, canonical, size, shown)?;
        // Fewer bytes consumed than the file holds: the rest is the
        // half-written last line left for later at the last import.
        if let Some((consumed, _)) = store.reader().source(canonical).map_err(store_err)? {
            report.incomplete_lines = u64::from(consumed < size);
        }
        // A copy of a file imported from another path holds its rows under
        // that path: read it again to name its tasks (nothing is added).
        return Ok((!report.tasks.is_empty()).then_some(report));
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
    if report.tasks.is_empty() {
        return Ok(None);
    }
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
    let mut parsed = parsed;
    name_from_codex_index(parsed.format, canonical, &mut parsed.tasks);
    store
        .transaction(|tx| -> Result<(), Failed> {
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
        .map_err(|e| e.into_ingest(shown))?;
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
        tasks,
        ..FileReport::empty(shown, String::new(), ImportStatus::Unchanged, size)
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
    transcript::parse_reader(reader, &parse_opts, progress).map_err(|e| parse_error(shown, e))
}

/// A parse failure: a read error (line 0) is IO, a bad line is input.
fn parse_error(shown: &str, error: LineError) -> IngestError {
    match error.line {
        0 => IngestError::Io {
            path: shown.to_string(),
            source: std::io::Error::other(error.message.clone()),
        },
        _ => IngestError::Parse {
            path: shown.to_string(),
            error,
        },
    }
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
                .find_map(|t| t.parent_session.clone().or(t.meta.session_id.clone()))
        })
}

/// The report of a parsed file before any task is stored.
fn parsed_report(parsed: &ParsedFile, shown: &str) -> FileReport {
    FileReport {
        lines: parsed.lines,
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
        incomplete_lines: parsed.incomplete_lines,
        ..FileReport::empty(
            shown,
            parsed.format.as_str().to_string(),
            ImportStatus::Imported,
            parsed.bytes,
        )
    }
}

/// The id a task is stored under, and its parent's.
fn task_id(base: &str, t: &TaskBuilder) -> (String, Option<String>) {
    if t.key.is_empty() {
        (base.to_string(), t.parent_session.clone())
    } else {
        (format!("{base}/{}", t.key), Some(base.to_string()))
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
) -> Result<(), Failed> {
    let (id, _) = task_id(base, t);
    upsert_task(tx, format, base, t)?;
    let outcome = tx.append_messages(&id, Some(source_id), &t.messages)?;
    let mut minter = FormMinter::new(rules);
    let mut minted = 0;
    for (i, m) in t.messages.iter().enumerate() {
        let i = i as u64;
        let forms = minter
            .take(m, i, i >= outcome.already)
            .map_err(Failed::Ids)?;
        minted += put_forms(tx, &id, rules, &forms)?;
    }
    report_task(base, t, outcome, minted, report);
    Ok(())
}

/// A Codex session with no title of its own takes the name its Codex home's
/// index gives it (see `codex_names`).
fn name_from_codex_index(format: Format, canonical: &str, tasks: &mut [TaskBuilder]) {
    if format != Format::Codex {
        return;
    }
    for t in tasks.iter_mut().filter(|t| t.meta.title.is_none()) {
        if let Some(id) = t.meta.session_id.as_deref() {
            t.meta.title = super::codex_names::thread_name(Path::new(canonical), id);
        }
    }
}

/// Insert or refresh a task's record from what its file states.
fn upsert_task(tx: &Tx<'_>, format: Format, base: &str, t: &TaskBuilder) -> Result<(), StoreError> {
    let (id, parent) = task_id(base, t);
    tx.upsert_task(&TaskInfo {
        id,
        format: format.as_str().to_string(),
        parent_id: parent,
        meta: t.meta.clone(),
    })
}

/// A stored task's part of the report: what was added, its shape, its
/// interrupted calls and its warnings.
fn report_task(
    base: &str,
    t: &TaskBuilder,
    outcome: AppendOutcome,
    minted: u64,
    report: &mut FileReport,
) {
    let (id, parent) = task_id(base, t);
    report.tasks.push(TaskReport {
        id: id.clone(),
        parent,
        added: outcome.added,
        already: outcome.already,
        turns: t.turns(),
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
