//! `compactor compact`: compact a saved session offline. Import if needed,
//! replay every recorded call (so forms and summaries are minted as a live
//! engine would have minted them), then run the next call and write its view:
//! the bounded checkpoint to resume the session with.
//!
//! By default the replay runs on a scratch copy of the task: the store is left
//! as it was found, so the same command gives the same view on any store.
//! With `--in-place` it runs on the store under its profile (budget,
//! summarizer, summary budget, tool rules): calls already run under the same
//! profile (the replay progress) are not run again, so running it again
//! re-derives the same view and mints nothing, and compacting a session that
//! has grown runs only its new calls.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use super::Ui;
use super::args::RunTarget;
use super::atomic::write_atomic;
use super::call_report::CallJson;
use super::defaults::RunBudget;
use super::exit::outcome_of;
use super::progress::progress;
use super::summarizer::{Configured, summarizer_of};
use super::target::Resolved;
use super::titles::{TitleSearch, title_of};
use super::visible::visible_line;
use super::words::{noun_for, plural};
use super::write_session::{Stamp, name_codex_session, resume_command, session_path, write_new};
use crate::cmd::exit::Outcome;
use crate::engine::CallOutput;
use crate::engine::Tier;
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::model::{Format, Kind};
use crate::session::cost::{CacheTtl, Prices};
use crate::session::record::TaskRecordIndex;
use crate::session::run::{Placement, ReplayOptions, Run};
use crate::session::settings::RunSettings;
use crate::store::Store;
use crate::summarize::llm::LlmReport;
use crate::view::session::{
    CLAUDE_CODE_VERSION, CODEX_VERSION, SessionKind, SessionParams, Vendor, adapt,
    claude_code_session, codex_session,
};
use crate::view::{ExportFormat, RequestHead, export_request};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor compact -o checkpoint.json                 the latest task\n  compactor compact session.jsonl --write-session claude-code --resume-dir ~/src/app\n  compactor compact rollout.jsonl --write-session codex"
)]
pub struct CompactArgs {
    #[command(flatten)]
    pub run: RunTarget,

    /// Write the final view to FILE (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The final view's format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Anthropic)]
    pub format: ExportFormat,

    /// Print the final call's report as JSON (on stderr when the view goes to stdout).
    #[arg(long)]
    pub json: bool,

    /// Compact on the store itself, keeping what the replay mints in this
    /// profile (budget, summarizer, summary budget, tool rules) and resuming
    /// where an earlier in-place run under the same profile stopped. By
    /// default the replay runs on a scratch copy of the task and the store is
    /// left as it was found (the llm summary cache excepted).
    #[arg(long)]
    pub in_place: bool,

    /// Write the final view as a new session of this agent, to resume from. The
    /// report then goes to stdout, and the view only to `-o FILE`.
    #[arg(long, value_enum, value_name = "AGENT")]
    pub write_session: Option<SessionKind>,

    /// The directory the written session belongs to and is resumed in (Claude Code files
    /// it under that project). Default: the source session's directory, else the current one.
    #[arg(
        long,
        value_name = "DIR",
        requires = "write_session",
        value_hint = clap::ValueHint::DirPath
    )]
    pub resume_dir: Option<PathBuf>,
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &CompactArgs) -> Result<Outcome> {
    let Resolved {
        budget,
        run_budget,
        task,
        index,
        calls,
        ..
    } = args.run.resolve(store, ui)?;
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.run.budget, store)?;
    let settings = RunSettings::new(budget, &est, &summarizer);
    let placement = Placement::in_place_if(args.in_place, true);
    let mut run = Run::open(store, &index, settings, placement)?;
    // Re-run the last call already committed (a re-run mints nothing new), then go on.
    let from = run
        .resume_point(store)?
        .map_or(1, |k| k.clamp(1, calls + 1));
    if from > 1 {
        ui.note(format!(
            "calls 1 to {from} of {task} already ran on this store with these settings: resuming at call {from}"
        ));
    }
    let fired = replay_recorded(store, ui, &mut run, from, calls)?;
    // The checkpoint to resume with is what a restarted engine derives.
    run.restart(store)?;
    let out = run.step(store, calls + 1)?;
    // The checkpoint is a whole request: the recorded system prompt and tools too.
    let head =
        RequestHead::from_system_blocks(index.system_rows()?.iter().flat_map(|m| &m.content));
    let (bytes, export_notes) = export_request(&out.view, &head, args.format);
    for n in export_notes {
        ui.note(format!("the view as {}: {n}", format_name(args.format)));
    }
    let written = match args.write_session {
        Some(kind) => Some(write_session(
            store,
            &index,
            &task,
            &out,
            kind,
            args.resume_dir.as_deref(),
        )?),
        None => None,
    };
    let done = Compacted {
        task: &task,
        out: &out,
        budget: &budget,
        run_budget: &run_budget,
        recorded: index.recorded_prompt(calls + 1),
        llm: summarizer.report(),
        bytes,
        summary: fired.summary(),
        written,
    };
    if args.output.is_some() || done.written.is_some() {
        done.report_beside_files(ui, args)?;
    } else {
        ui.out.write_all(&done.bytes)?;
        // The view owns stdout; the report goes to stderr.
        done.report_on_stderr(ui, args, &summarizer)?;
    }
    Ok(outcome_of(out.report.status))
}

/// What the replay before the final call fired: each tier with how many
/// replayed calls fired it, in first-fired order.
struct Fired {
    replayed: u32,
    tiers: Vec<(Tier, u32)>,
}

impl Fired {
    /// `replayed 26 recorded calls: shrink at 7, floor at 1 call`.
    fn summary(&self) -> String {
        let replayed_calls = plural(self.replayed, "recorded call");
        match self.tiers.last() {
            None => format!("replayed {replayed_calls}: no tier fired"),
            Some((_, last)) => {
                let list: Vec<String> = self
                    .tiers
                    .iter()
                    .map(|(t, n)| format!("{t} at {n}"))
                    .collect();
                // `shrink at 7, floor at 1 call`: the unit once, after the last count.
                format!(
                    "replayed {replayed_calls}: {} {}",
                    list.join(", "),
                    noun_for(*last, "call")
                )
            }
        }
    }
}

/// Replay the recorded calls `from..=calls` (those before `from` already
/// ran), a bar showing progress over 20 calls or more.
fn replay_recorded(
    store: &mut Store,
    ui: &Ui,
    run: &mut Run<'_>,
    from: u32,
    calls: u32,
) -> Result<Fired> {
    let mut fired = Fired {
        replayed: 0,
        tiers: Vec::new(),
    };
    if from > calls {
        return Ok(fired);
    }
    let todo = calls - from + 1;
    let bar = progress(
        ui,
        todo >= 20,
        u64::from(todo),
        "compacting {wide_bar} {pos}/{len} calls",
    );
    let opts = ReplayOptions {
        from,
        to: calls,
        resume: from > 1,
        prices: Prices::default(),
        cache_ttl: CacheTtl::default(),
    };
    run.replay(store, &opts, |row, _| -> Result<()> {
        if let Some(b) = &bar {
            b.inc(1);
        }
        fired.replayed += 1;
        for t in &row.tiers_fired {
            match fired.tiers.iter_mut().find(|(name, _)| name == t) {
                Some((_, n)) => *n += 1,
                None => fired.tiers.push((*t, 1)),
            }
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(fired)
}

/// The final view and what is reported of it.
struct Compacted<'a> {
    task: &'a str,
    out: &'a CallOutput,
    budget: &'a Budget,
    run_budget: &'a RunBudget,
    recorded: Option<u64>,
    llm: Option<LlmReport>,
    /// The view as the export format writes it.
    bytes: Vec<u8>,
    /// What the replay fired.
    summary: String,
    written: Option<WrittenSession>,
}

impl Compacted<'_> {
    /// The `--json` object: the call's report, and the session written.
    fn json_value(&self) -> Result<serde_json::Value> {
        let mut v = serde_json::to_value(CallJson {
            task: self.task,
            report: &self.out.report,
            recorded_prompt_tokens: self.recorded,
            budget: self.budget,
            llm: self.llm.as_ref(),
        })?;
        if let Some(w) = &self.written {
            v["session_id"] = serde_json::Value::String(w.session_id.clone());
            v["session_path"] = serde_json::Value::String(w.path.display().to_string());
        }
        super::with_schema("call", &v)
    }

    fn wrote(&self, path: &Path, format: ExportFormat) -> String {
        format!(
            "wrote the view to {} ({}, {})",
            path.display(),
            format_name(format),
            plural(self.bytes.len(), "byte")
        )
    }

    /// The view went to `-o FILE` or a written session: the report owns stdout.
    fn report_beside_files(&self, ui: &mut Ui, args: &CompactArgs) -> Result<()> {
        if !args.json {
            writeln!(ui.out, "{}", self.summary)?;
        }
        if let Some(path) = &args.output {
            write_atomic(path, &self.bytes, "the view to ")?;
        }
        if args.json {
            ui.json(&self.json_value()?)?;
            if let Some(path) = &args.output {
                ui.note(self.wrote(path, args.format));
            }
        } else {
            super::call_report::print_call(
                ui,
                "compact",
                self.task,
                &self.out.report,
                self.run_budget,
                self.recorded,
                false,
                self.llm.as_ref(),
            )?;
            if let Some(path) = &args.output {
                writeln!(ui.out, "{}", visible_line(&self.wrote(path, args.format)))?;
            }
        }
        if let Some(w) = &self.written {
            for n in &w.notes {
                ui.note(format!("written session: {n}"));
            }
            if !Path::new(&w.cwd).is_dir() {
                ui.warn(format!(
                    "the session's project directory {} does not exist here: the client resumes it from there (--resume-dir DIR writes it for another directory)",
                    w.cwd
                ));
            }
            if !args.json {
                let path = w.path.display().to_string();
                writeln!(ui.out, "session: {}", visible_line(&path))?;
                let resume = format!(
                    "cd {} && {}",
                    shell_word(&w.cwd),
                    resume_command(w.kind, &w.session_id)
                );
                writeln!(ui.out, "resume:  {}", visible_line(&resume))?;
            }
        }
        Ok(())
    }

    /// The view went to stdout: the report goes to stderr.
    fn report_on_stderr(
        &self,
        ui: &mut Ui,
        args: &CompactArgs,
        summarizer: &Configured,
    ) -> Result<()> {
        if args.json {
            ui.requested_on_stderr(self.json_value()?.to_string());
        } else {
            let r = &self.out.report;
            ui.note(format!(
                "compacted {}: {}; final view {} → {} tokens, tiers {}, status {}, view {}",
                self.task,
                self.summary,
                r.tokens_before,
                r.tokens_after,
                Tier::list(&r.tiers_fired),
                r.status.name(),
                &r.view_hash[..16]
            ));
            summarizer.note(ui);
        }
        Ok(())
    }
}

/// A session written by `--write-session`.
struct WrittenSession {
    kind: SessionKind,
    session_id: String,
    path: PathBuf,
    cwd: String,
    notes: Vec<String>,
}

/// Write the final view as a new session of `kind` (the source is never
/// touched), named as its source is: the same title and git branch, and the
/// source's client version when it is the same client's.
fn write_session(
    store: &Store,
    index: &TaskRecordIndex,
    task: &str,
    out: &CallOutput,
    kind: SessionKind,
    resume_dir: Option<&Path>,
) -> Result<WrittenSession> {
    let record = store.reader().task(task)?;
    let format = record.as_ref().and_then(|r| Format::parse(&r.format));
    let source = format.map_or(Vendor::Anthropic, Vendor::of);
    let cwd = match resume_dir {
        Some(dir) => absolute(dir)?,
        None => match record.as_ref().and_then(|r| r.meta.cwd.clone()) {
            Some(c) => c,
            None => absolute(Path::new("."))?,
        },
    };
    let adapted = adapt(&out.view, source, kind.provider());
    let stamp = Stamp::new(kind, &out.report.view_hash)?;
    let timestamp = stamp.iso();
    // Only a Claude model name means anything to Claude Code, and only
    // another to Codex.
    let model = record
        .as_ref()
        .and_then(|r| r.meta.model.as_deref())
        .filter(|m| (kind == SessionKind::ClaudeCode) == m.starts_with("claude"));
    let same_client = matches!(
        (kind, format),
        (SessionKind::ClaudeCode, Some(Format::ClaudeCode))
            | (SessionKind::Codex, Some(Format::Codex))
    );
    let version = record
        .as_ref()
        .and_then(|r| r.meta.cli_version.as_deref())
        .filter(|v| same_client && !v.is_empty())
        .unwrap_or(match kind {
            SessionKind::ClaudeCode => CLAUDE_CODE_VERSION,
            SessionKind::Codex => CODEX_VERSION,
        });
    let title = source_title(index, record.as_ref().and_then(|r| r.meta.title.as_deref()))?;
    let params = SessionParams {
        session_id: &stamp.session_id,
        timestamp: &timestamp,
        cwd: &cwd,
        model,
        pre_tokens: out.report.tokens_before,
        version,
        git_branch: record.as_ref().and_then(|r| r.meta.git_branch.as_deref()),
        title: title.as_deref(),
    };
    let bytes = match kind {
        SessionKind::ClaudeCode => claude_code_session(&adapted.view, &params),
        SessionKind::Codex => codex_session(&adapted.view, &params),
    };
    let path = session_path(kind, &stamp, &cwd)?;
    write_new(&path, &bytes)?;
    let mut notes = adapted.notes;
    // The name is a courtesy: the session is written and resumable without it.
    if let (SessionKind::Codex, Some(title)) = (kind, &title)
        && let Err(e) = name_codex_session(&stamp.session_id, title, &timestamp)
    {
        notes.push(format!(
            "{e:#}; `codex resume {}` still finds it",
            stamp.session_id
        ));
    }
    Ok(WrittenSession {
        kind,
        session_id: stamp.session_id,
        path,
        cwd,
        notes,
    })
}

/// The title `tasks` lists the source by (see `title_of`), the ask rows
/// read one at a time, in order.
fn source_title(index: &TaskRecordIndex, recorded: Option<&str>) -> Result<Option<String>> {
    if let Some(title) = title_of(recorded, []) {
        return Ok(Some(title));
    }
    let mut search = TitleSearch::default();
    for i in (0..index.len()).filter(|&i| index.kind(i) == Kind::Ask) {
        let mut title = None;
        index.each_row(i, i + 1, |_, m| title = search.offer(&m.content))?;
        if title.is_some() {
            return Ok(title);
        }
    }
    Ok(search.finish())
}

fn absolute(dir: &Path) -> Result<String> {
    let abs = std::fs::canonicalize(dir)
        .with_context(|| format!("--resume-dir {}: no such directory", dir.display()))?;
    Ok(abs.display().to_string())
}

/// A path quoted for a POSIX shell when it needs quoting.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn format_name(f: ExportFormat) -> &'static str {
    match f {
        ExportFormat::Anthropic => "anthropic",
        ExportFormat::Openai => "openai",
        ExportFormat::Markdown => "markdown",
    }
}
