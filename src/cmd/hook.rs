//! `compactor hook pre-compact|post-compact|session-start` (hidden): what
//! Claude Code and Codex run around their own compaction, with the hook's
//! JSON on stdin (see `crate::hooks` for what each client sends and takes).
//!
//! - pre-compact imports the transcript (what was added since the last
//!   import) and, for Claude Code, prints instructions for its summarizer:
//!   keep the user's requests and constraints verbatim.
//! - post-compact imports it and records the client's own summary with the
//!   task, after the call it followed.
//! - session-start (source `compact`) imports it, derives compactor's
//!   `## Task Context` from the history before the compaction, records it and
//!   prints it as `hookSpecificOutput.additionalContext`.
//!
//! - for Gemini CLI, pre-compact (its `PreCompress`, which fires before
//!   every turn) imports the transcript; before-model (`BeforeModel`) reads
//!   the request's text and, when it starts from the CLI's summary of a
//!   compression, appends compactor's Task Context to that summary
//!   (`hookSpecificOutput.llm_request.messages`). The Task Context is
//!   derived once per summary, recorded with it, and reused on every later
//!   request; a request with no summary is answered at once, unlogged.
//!
//! A hook never breaks the session: on any failure (no store, an unwritable
//! store, a malformed or foreign transcript, a timeout, a panic) it exits 0
//! with nothing on stdout or stderr, and writes one line to `hooks.log` beside
//! the store. Nor does it hold the client up on a store another process is
//! writing: it waits for it briefly (`COMPACTOR_HOOK_STORE_WAIT`, 2 s), then
//! answers from the transcript alone, writes nothing, and its log line names
//! what it skipped. It reads only the transcript the client names, and only when it
//! lies under that client's own session directory; it writes only the store
//! and the log.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde::Deserialize;

use super::Cli;
use super::Ui;
use super::exit::Outcome;
use super::hook_log::log_path;
use super::session_dirs::{claude_projects, codex_sessions, gemini_tmp};
use super::summarizer::{Configured, SummarizerArgs};
use super::words::plural;
use super::write_session::Stamp;
use crate::hooks::adapter::{Session, import_session, latest_client_summary, read_session, record};
use crate::hooks::context::{
    TaskContext, before_compaction, summarizer_instructions, task_context,
};
use crate::hooks::{Client, DEADLINE_SECS, HookEvent, STORE_WAIT_SECS};
use crate::store::{CompactionHalf, DbLocation, Store};

#[derive(Debug, Args)]
pub struct HookArgs {
    /// pre-compact, post-compact, session-start or before-model.
    #[arg(value_name = "EVENT")]
    pub event: String,

    /// The client running the hook: claude-code, codex or gemini-cli.
    #[arg(long, default_value = "claude-code", value_name = "CLIENT")]
    pub client: String,

    #[command(flatten)]
    pub summary: SummarizerArgs,
}

/// Past this size the log moves to `hooks.log.1` (one generation is kept).
const LOG_MAX_BYTES: u64 = 1 << 20;
/// The most a hook reads from stdin (a summary can be long; a hook input is
/// never this long).
const STDIN_MAX_BYTES: u64 = 64 << 20;

/// What a hook run did, for stdout and the log.
struct Done {
    stdout: Option<String>,
    note: String,
}

/// Run the hook. Always exit status 0: whatever happens is in the log.
pub fn run(cli: &Cli, ui: &mut Ui, args: &HookArgs) -> Outcome {
    // A panic must not reach the client's terminal: it is logged instead.
    std::panic::set_hook(Box::new(|_| {}));
    let location = super::db_location(cli).ok();
    let log = location.as_ref().and_then(log_path);
    let event = args.event.clone();
    let client = args.client.clone();
    let deadline = deadline();
    let (tx, rx) = mpsc::channel();
    let job = {
        let location = location.clone();
        let db_given = cli.db.is_some();
        let kind = args.summary.summarizer;
        let llm = args.summary.llm.clone();
        move || {
            let result = std::panic::catch_unwind(|| {
                let summary = SummarizerArgs {
                    summarizer: kind,
                    llm,
                };
                work(location, db_given, &event, &client, &summary)
            })
            .unwrap_or_else(|p| {
                let what = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(Failure::new(anyhow!(
                    "internal error (a bug in compactor): {what}"
                )))
            });
            let _ = tx.send(result);
        }
    };
    std::thread::spawn(job);
    let (line, stdout) = match rx.recv_timeout(deadline) {
        // A run that had nothing to do and says nothing (Gemini CLI's
        // BeforeModel on a request with no summary) is not logged.
        Ok(Ok(done)) if done.note.is_empty() && done.stdout.is_none() => return Outcome::Ok,
        Ok(Ok(done)) => (format!("ok: {}", done.note), done.stdout),
        Ok(Err(f)) => (f.line(), None),
        Err(_) => (
            format!(
                "failed: timed out after {} s; nothing was printed (a store still being written is left as it was)",
                deadline.as_secs_f64()
            ),
            None,
        ),
    };
    if let Some(text) = stdout {
        // A client that went away has nothing left to read it.
        let _ = writeln!(ui.out, "{text}").and_then(|_| ui.out.flush());
    }
    if let Some(log) = &log {
        if cli.db.is_none()
            && let Some(dir) = log.parent()
        {
            // The default store's directory is made on first use; so is the log's.
            let _ = std::fs::create_dir_all(dir);
        }
        append_log(
            log,
            &format!("{} {} {} {line}", now(), args.event, args.client),
        );
    }
    Outcome::Ok
}

/// The hook's deadline: `COMPACTOR_HOOK_TIMEOUT` seconds, else [`DEADLINE_SECS`].
fn deadline() -> Duration {
    seconds_from_env("COMPACTOR_HOOK_TIMEOUT").unwrap_or(Duration::from_secs(DEADLINE_SECS))
}

fn now() -> String {
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    Stamp {
        session_id: String::new(),
        unix_ms,
    }
    .iso()
}

/// Append one line to the log, moving a full log aside first. A log that
/// cannot be written is given up on: the hook still exits 0.
fn append_log(path: &Path, line: &str) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() > LOG_MAX_BYTES) {
        let _ = std::fs::rename(path, path.with_extension("log.1"));
    }
    let one_line: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{one_line}");
    }
}

/// A failed run: the error, and the session it was for when known.
struct Failure {
    error: anyhow::Error,
    session: Option<String>,
}

impl Failure {
    fn new(error: anyhow::Error) -> Failure {
        Failure {
            error,
            session: None,
        }
    }

    fn line(&self) -> String {
        match &self.session {
            Some(s) => format!("session {s} failed: {:#}", self.error),
            None => format!("failed: {:#}", self.error),
        }
    }
}

/// The fields of a hook's stdin compactor reads (the clients send more).
#[derive(Debug, Default, Deserialize)]
struct HookInput {
    session_id: Option<String>,
    transcript_path: Option<String>,
    hook_event_name: Option<String>,
    trigger: Option<String>,
    compact_summary: Option<String>,
    source: Option<String>,
    /// Gemini CLI's BeforeModel: the request, its text only.
    llm_request: Option<LlmRequest>,
}

#[derive(Debug, Default, Deserialize)]
struct LlmRequest {
    #[serde(default)]
    messages: Vec<serde_json::Value>,
}

/// What Gemini CLI (0.61.0) puts after its summary of the compressed
/// history, as the model's turn: how its summary is found in a request.
pub const GEMINI_SUMMARY_ACK: &str = "Got it. Thanks for the additional context!";

/// The request's messages up to and including the CLI's summary, and the
/// summary's text: `None` when the request does not start from one, or when
/// compactor's Task Context is already in it.
struct Compressed {
    messages: Vec<serde_json::Value>,
    summary: String,
}

fn compressed_summary(input: &HookInput) -> Option<Compressed> {
    let messages = &input.llm_request.as_ref()?.messages;
    let i = messages.windows(2).position(|w| {
        w[0]["role"] == "user"
            && w[0]["content"].is_string()
            && w[1]["role"] == "model"
            && w[1]["content"].as_str().map(str::trim) == Some(GEMINI_SUMMARY_ACK)
    })?;
    let summary = messages[i]["content"].as_str()?.to_string();
    if summary.contains(crate::hooks::context::PREAMBLE) {
        return None;
    }
    Some(Compressed {
        messages: messages[..=i].to_vec(),
        summary,
    })
}

fn work(
    location: Option<DbLocation>,
    db_given: bool,
    event: &str,
    client: &str,
    summary: &SummarizerArgs,
) -> Result<Done, Failure> {
    let event = HookEvent::parse(event)
        .ok_or_else(|| {
            anyhow!(
                "unknown hook event {event:?}; expected pre-compact, post-compact, session-start or before-model"
            )
        })
        .map_err(Failure::new)?;
    let client = Client::parse(client)
        .ok_or_else(|| {
            anyhow!("unknown client {client:?}; expected claude-code, codex or gemini-cli")
        })
        .map_err(Failure::new)?;
    crate::fault::in_hook();
    let input = read_input(event, client).map_err(Failure::new)?;
    // Gemini CLI runs BeforeModel before every request: one that does not
    // start from its summary is answered before the store is touched.
    let compressed = match event {
        HookEvent::BeforeModel => match compressed_summary(&input) {
            Some(c) => Some(c),
            None => {
                return Ok(Done {
                    stdout: None,
                    note: String::new(),
                });
            }
        },
        _ => None,
    };
    let session = input.session_id.clone();
    let fail = |e: anyhow::Error| Failure {
        error: e,
        session: session.clone(),
    };
    if event == HookEvent::SessionStart && input.source.as_deref() != Some("compact") {
        return Ok(Done {
            stdout: None,
            note: format!(
                "session {} skipped: source {}, not compact",
                session.as_deref().unwrap_or("?"),
                input.source.as_deref().unwrap_or("unknown")
            ),
        });
    }
    let transcript = allowed_transcript(&input, client).map_err(fail)?;
    let location = location
        .ok_or_else(|| anyhow!("cannot find a user data directory for the store (HOME is not set)"))
        .map_err(fail)?;
    let mut store = HookStore::open(&location, db_given, store_wait()).map_err(fail)?;
    let s = store
        .import(&transcript, client, session.as_deref())
        .map_err(fail)?;
    let history = before_compaction(&s.rows);
    let head = format!("task {} after call {}", s.task, s.calls);
    let done = match event {
        HookEvent::PreCompact => pre_compact(client, &s, store.imported(), history, head),
        HookEvent::PostCompact => post_compact(&mut store, client, &input, &s, history.len(), head),
        HookEvent::SessionStart => session_start(&mut store, client, summary, &s, history, head),
        HookEvent::BeforeModel => before_model(
            &mut store,
            client,
            summary,
            &s,
            history,
            compressed.expect("found above"),
            head,
        ),
    };
    let mut done = done.map_err(fail)?;
    done.note.push_str(&store.skipped_note());
    Ok(done)
}

/// How long a hook waits for a store another process is writing:
/// `COMPACTOR_HOOK_STORE_WAIT` seconds, else [`STORE_WAIT_SECS`]. The wait
/// sits on the client's critical path, so it is short; past it the hook
/// answers from the transcript alone and logs what it skipped.
fn store_wait() -> Duration {
    seconds_from_env("COMPACTOR_HOOK_STORE_WAIT").unwrap_or(Duration::from_secs(STORE_WAIT_SECS))
}

/// A non-negative number of seconds from an environment variable.
fn seconds_from_env(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// What a busy store made a hook skip first: the transcript's import.
const IMPORT: &str = "importing the transcript";

/// The store as a hook uses it: every wait for it, together, at most the
/// hook's store wait; once it was found busy, nothing more is written, and
/// what that skipped is named in the log.
struct HookStore {
    store: Option<Store>,
    deadline: Instant,
    /// What the busy store made the hook skip, in order.
    skipped: Vec<String>,
    /// How long the hook waited for it.
    waited: Option<Duration>,
}

impl HookStore {
    fn open(location: &DbLocation, db_given: bool, wait: Duration) -> Result<HookStore> {
        let start = Instant::now();
        let mut hs = HookStore {
            store: None,
            deadline: start + wait,
            skipped: Vec::new(),
            waited: None,
        };
        if !db_given {
            crate::store::create_default_dir(location)?;
        }
        match Store::open_waiting(location, wait) {
            Ok(store) => hs.store = Some(store),
            // A store another process is migrating: nothing can be written.
            Err(e) if e.is_busy() => hs.busy(start, None),
            Err(e) => return Err(e.into()),
        }
        Ok(hs)
    }

    /// The store for a write, with what is left of the wait; None once it
    /// was found busy.
    fn writable(&mut self) -> Option<&mut Store> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let store = self.store.as_mut()?;
        store.set_busy_wait(left).ok()?;
        Some(store)
    }

    /// The store was busy when the hook tried `what`: skip it and every
    /// write after it.
    fn busy(&mut self, since: Instant, what: Option<&str>) {
        self.waited.get_or_insert(since.elapsed());
        self.store = None;
        self.skipped.extend(what.map(str::to_string));
    }

    /// Import the transcript and load its record; with the store busy, the
    /// session as the transcript alone holds it.
    fn import(
        &mut self,
        transcript: &Path,
        client: Client,
        session: Option<&str>,
    ) -> Result<Session> {
        let start = Instant::now();
        match self.writable() {
            Some(store) => match import_session(store, transcript, client) {
                Ok(s) => return Ok(s),
                Err(e) if e.is_busy() => self.busy(start, Some(IMPORT)),
                Err(e) => return Err(e.into()),
            },
            None => self.skipped.push(IMPORT.to_string()),
        }
        let fallback = transcript
            .file_stem()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(read_session(
            transcript,
            client,
            session.unwrap_or(&fallback),
        )?)
    }

    /// Whether the transcript was imported (not skipped for a busy store).
    fn imported(&self) -> bool {
        !self.skipped.iter().any(|s| s == IMPORT)
    }

    /// Record one half of the client's compaction, unless the store is or
    /// turns out busy: whether it was recorded.
    fn record(
        &mut self,
        s: &Session,
        history_rows: usize,
        client: Client,
        half: &CompactionHalf<'_>,
        what: &str,
    ) -> Result<bool> {
        let start = Instant::now();
        let Some(store) = self.writable() else {
            self.skipped.push(what.to_string());
            return Ok(false);
        };
        match record(store, s, history_rows, client, half) {
            Ok(()) => Ok(true),
            Err(e) if e.is_busy() => {
                self.busy(start, Some(what));
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `; the store was busy …: skipped …` for the log, or nothing.
    fn skipped_note(&self) -> String {
        match (self.waited, self.skipped.is_empty()) {
            (Some(w), false) => format!(
                "; the store was busy (another process writing it): after {:.1} s, skipped {} (the next import catches up)",
                w.as_secs_f64(),
                self.skipped.join(", ")
            ),
            _ => String::new(),
        }
    }
}

fn read_input(event: HookEvent, client: Client) -> Result<HookInput> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(STDIN_MAX_BYTES)
        .read_to_end(&mut bytes)
        .context("cannot read the hook's input on stdin")?;
    let input: HookInput = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow!("the hook's input on stdin is not the JSON object a client sends ({e})")
    })?;
    if let Some(name) = &input.hook_event_name
        && name != event.name_for(client)
    {
        bail!(
            "the client ran `compactor hook {}` for its {name} event; expected {}",
            event.arg(),
            event.name_for(client)
        );
    }
    Ok(input)
}

/// The transcript the client names, when it is a file under that client's
/// own session directory (symlinks resolved).
fn allowed_transcript(input: &HookInput, client: Client) -> Result<PathBuf> {
    let named = input
        .transcript_path
        .as_deref()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| anyhow!("the hook's input names no transcript_path"))?;
    let root = match client {
        Client::ClaudeCode => claude_projects(),
        Client::Codex => codex_sessions(),
        Client::GeminiCli => gemini_tmp(),
    }
    .ok_or_else(|| {
        anyhow!(
            "cannot find {}'s session directory (HOME is not set)",
            client.title()
        )
    })?;
    let path = std::fs::canonicalize(named)
        .with_context(|| format!("cannot read the transcript {named}"))?;
    let root_real = std::fs::canonicalize(&root).unwrap_or(root.clone());
    if !path.starts_with(&root_real) {
        bail!(
            "the transcript {named} is not under {} ({}'s session directory): compactor reads only the client's own sessions",
            root.display(),
            client.title()
        );
    }
    if !path.is_file() {
        bail!("the transcript {named} is not a regular file");
    }
    Ok(path)
}

fn pre_compact(
    client: Client,
    s: &Session,
    imported: bool,
    history: &[crate::model::Message],
    head: String,
) -> Result<Done> {
    let stdout = if client.takes_pre_compact_instructions() {
        summarizer_instructions(history, client.context_limit())
    } else {
        None
    };
    // With the store busy, the rows were read from the transcript, not
    // imported (the log line's end says so).
    let rows = if imported {
        format!("imported {}", plural(s.rows.len(), "row"))
    } else {
        format!("read {} from the transcript", plural(s.rows.len(), "row"))
    };
    let note = match &stdout {
        Some(t) => format!(
            "{head}: {rows}; asked the client's summarizer to keep {} verbatim",
            plural(t.lines().filter(|l| l.starts_with("- ")).count(), "line")
        ),
        None => format!("{head}: {rows}"),
    };
    Ok(Done { stdout, note })
}

fn post_compact(
    store: &mut HookStore,
    client: Client,
    input: &HookInput,
    s: &Session,
    history_rows: usize,
    head: String,
) -> Result<Done> {
    let summary = match client {
        Client::ClaudeCode => input.compact_summary.clone(),
        // Codex sends no summary: its rollout holds it by now. (Gemini CLI
        // has no PostCompact: its summary comes with BeforeModel.)
        Client::Codex | Client::GeminiCli => latest_client_summary(&s.rows),
    }
    .filter(|t| !t.trim().is_empty())
    .ok_or_else(|| anyhow!("{head}: no summary of the client's to record"))?;
    let recorded = store.record(
        s,
        history_rows,
        client,
        &CompactionHalf::ClientSummary {
            trigger: input.trigger.as_deref(),
            summary: &summary,
        },
        &format!("recording {}'s summary", client.title()),
    )?;
    // Not recorded: the store was busy, and the log line's end says so.
    let verb = if recorded {
        "recorded"
    } else {
        "did not record"
    };
    Ok(Done {
        stdout: None,
        note: format!(
            "{head}: {verb} {}'s summary ({} characters)",
            client.title(),
            summary.chars().count()
        ),
    })
}

fn session_start(
    store: &mut HookStore,
    client: Client,
    summary: &SummarizerArgs,
    s: &Session,
    history: &[crate::model::Message],
    head: String,
) -> Result<Done> {
    let limit = client.context_limit();
    let Some((tc, config_note)) = configured_task_context(store, summary, history, limit) else {
        return Ok(Done {
            stdout: None,
            note: format!("{head}: no request in the history yet, nothing to put back"),
        });
    };
    store.record(
        s,
        history.len(),
        client,
        &CompactionHalf::TaskContext {
            text: &tc.text,
            summarizer: &tc.summarizer,
        },
        "recording the Task Context",
    )?;
    let out = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": tc.text,
        }
    });
    let over = over_note(&tc, client);
    Ok(Done {
        stdout: Some(out.to_string()),
        note: format!(
            "{head}: printed the Task Context, {} {} of {} ({}){over}{config_note}",
            tc.size,
            limit.unit(),
            limit.max(),
            tc.summarizer
        ),
    })
}

/// The note on a Task Context whose requests and constraints alone are over
/// the client's limit, or nothing.
fn over_note(tc: &TaskContext, client: Client) -> String {
    let limit = client.context_limit();
    if tc.over_limit {
        format!(
            "; its requests and constraints alone are over {}'s {} {}, printed whole (never cut)",
            client.title(),
            limit.max(),
            limit.unit()
        )
    } else {
        String::new()
    }
}

/// compactor's Task Context of `history` under `limit`, by the configured
/// summarizer (the extractive one when the store is busy or the configured
/// one is unusable, which the note says); `None` when the history holds no
/// request.
fn configured_task_context(
    store: &mut HookStore,
    summary: &SummarizerArgs,
    history: &[crate::model::Message],
    limit: crate::hooks::context::OutputLimit,
) -> Option<(TaskContext, String)> {
    // A model summarizer keeps its answers in the store: with the store
    // busy, the extractive one answers at once.
    let (configured, config_note) = match store.writable() {
        Some(store) => match Configured::for_store(summary.summarizer, &summary.llm, store) {
            Ok(c) => (Some(c), String::new()),
            Err(e) => (
                None,
                format!(" (the configured summarizer is unusable, {e:#}; extractive used)"),
            ),
        },
        None => (None, String::new()),
    };
    let extractive = crate::summarize::Extractive;
    let summarizer: &dyn crate::engine::summarizer::Summarizer = match &configured {
        Some(c) => c.get(),
        None => &extractive,
    };
    let tc = task_context(history, summarizer, limit)?;
    Some((tc, config_note))
}

/// Gemini CLI's BeforeModel on a request that starts from its summary:
/// compactor's Task Context appended to the summary. The first request after
/// a compression derives it from the history before (the whole session the
/// transcript holds) and records it with the summary; every later request
/// finds it recorded and sends the same text.
fn before_model(
    store: &mut HookStore,
    client: Client,
    summary: &SummarizerArgs,
    s: &Session,
    history: &[crate::model::Message],
    compressed: Compressed,
    head: String,
) -> Result<Done> {
    let limit = client.context_limit();
    let recorded = store.store.as_ref().and_then(|st| {
        st.reader()
            .client_compactions(&s.task)
            .ok()?
            .into_iter()
            .rev()
            .find(|c| c.client_summary.as_deref() == Some(compressed.summary.as_str()))
            .and_then(|c| c.task_context)
    });
    let (text, note) = match recorded {
        Some(text) => {
            let note = format!(
                "{head}: put the recorded Task Context after Gemini CLI's summary again ({} {})",
                limit.measure(&text),
                limit.unit()
            );
            (text, note)
        }
        None => {
            let Some((tc, config_note)) = configured_task_context(store, summary, history, limit)
            else {
                return Ok(Done {
                    stdout: None,
                    note: format!("{head}: no request in the history yet, nothing to put back"),
                });
            };
            store.record(
                s,
                history.len(),
                client,
                &CompactionHalf::ClientSummary {
                    trigger: None,
                    summary: &compressed.summary,
                },
                &format!("recording {}'s summary", client.title()),
            )?;
            store.record(
                s,
                history.len(),
                client,
                &CompactionHalf::TaskContext {
                    text: &tc.text,
                    summarizer: &tc.summarizer,
                },
                "recording the Task Context",
            )?;
            let note = format!(
                "{head}: put the Task Context after Gemini CLI's summary, {} {} of {} ({}){}{config_note}",
                tc.size,
                limit.unit(),
                limit.max(),
                tc.summarizer,
                over_note(&tc, client)
            );
            (tc.text, note)
        }
    };
    let mut messages = compressed.messages;
    let last = messages.len() - 1;
    messages[last]["content"] =
        serde_json::Value::String(format!("{}\n\n{text}", compressed.summary));
    let out = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "BeforeModel",
            "llm_request": { "messages": messages },
        }
    });
    Ok(Done {
        stdout: Some(out.to_string()),
        note,
    })
}

/// Whether a command line runs `compactor hook …` (its first word that is
/// not a global flag or a flag's value is `hook`).
pub fn is_hook_command_line(args: &[std::ffi::OsString]) -> bool {
    let mut it = args.iter().skip(1).filter_map(|a| a.to_str());
    while let Some(a) = it.next() {
        match a {
            "--db" | "--color" => {
                it.next();
            }
            a if a.starts_with('-') => {}
            a => return a == "hook",
        }
    }
    false
}
