//! `compactor watch [TASK|FILE]`: follow a session file as it is written.
//!
//! The file is polled: each look imports what was added (a no-op when its
//! size and modification time did not change; a half-written last line is
//! left for the next look), and every model call not yet reported gets the
//! report `step --at CALL` would print, as a what-if on a scratch copy. Each
//! import is one transaction, so Ctrl-C (the default signal action) leaves the
//! store as it was after the last whole import, never half of one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;

use super::Ui;
use super::call_report::print_call;
use super::common::{BudgetArgs, find_task, summarizer_of};
use super::defaults::{self, RunBudget};
use super::import::format_or_auto;
use crate::cmd::exit::Outcome;
use crate::engine::Report;
use crate::engine::estimate::CharsPerToken;
use crate::model::Format;
use crate::session::driver::{Driver, RunSettings, TaskRecordIndex};
use crate::store::Store;
use crate::transcript::ingest::{IngestOptions, ingest_file};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  compactor watch                                   follow the latest session
  compactor watch --project . --window 200000       the latest session of this project
  compactor watch session.jsonl --json --until-idle 30")]
pub struct WatchArgs {
    /// A transcript file to follow, or a task (its id, a unique prefix, `latest`) whose
    /// file to follow. Default: `latest`.
    #[arg(value_name = "TASK|FILE")]
    pub target: Option<String>,

    /// Pick among the sessions recorded in this project directory: `latest` and prefixes
    /// look only there. `--cwd` is an older name for it.
    #[arg(long, alias = "cwd", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub project: Option<PathBuf>,

    /// FILE's transcript format.
    #[arg(long, default_value = "auto", value_parser = format_or_auto(), value_name = "FORMAT")]
    pub input_format: ::std::option::Option<Format>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// One JSON line per model call, the same as `step --at CALL --json` prints.
    #[arg(long)]
    pub json: bool,

    /// Stop once nothing was added for SECONDS (default: run until Ctrl-C).
    #[arg(long, value_name = "SECONDS")]
    pub until_idle: Option<u64>,

    /// How often to look at the file, in milliseconds.
    #[arg(long, default_value_t = 500, value_name = "MS")]
    pub interval: u64,
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &WatchArgs) -> Result<Outcome> {
    defaults::precheck(&args.budget)?;
    // The window may be the model's: known once the session names it.
    let mut budget: Option<RunBudget> = None;
    let (path, mut task) = target(store, args)?;
    let opts = IngestOptions {
        format: args.input_format,
        ..IngestOptions::default()
    };
    let idle = args.until_idle.map(Duration::from_secs);
    let interval = Duration::from_millis(args.interval.max(10));
    let mut reported = 0u32;
    let mut last_change = Instant::now();
    let mut announced = false;
    loop {
        // A new session file may be empty or hold half a first line: wait for one line.
        if task.is_none() && !has_a_line(&path)? {
            if let Some(idle) = idle
                && last_change.elapsed() >= idle
            {
                return Ok(Outcome::Ok);
            }
            std::thread::sleep(interval);
            continue;
        }
        let report = ingest_file(store, &path, &opts, &mut |_| {})?;
        if report.added() > 0 {
            last_change = Instant::now();
        }
        if task.is_none() {
            task = report.main_task().map(str::to_string);
        }
        if let Some(t) = &task {
            if !announced {
                ui.note(format!("watching {} (task {t})", path.display()));
                announced = true;
            }
            let index = TaskRecordIndex::load(store, t)?;
            if budget.is_none() && index.calls() > reported {
                let b = defaults::budget_for(&args.budget, store.reader().task(t)?.as_ref())?;
                defaults::note_window(ui, &b);
                budget = Some(b);
            }
            for k in reported + 1..=index.calls() {
                let budget = budget.as_ref().expect("resolved before the first call");
                report_call(store, ui, args, budget, t, &index, k)?;
                ui.out.flush()?;
            }
            reported = reported.max(index.calls());
        }
        if let Some(idle) = idle
            && last_change.elapsed() >= idle
        {
            return Ok(Outcome::Ok);
        }
        std::thread::sleep(interval);
    }
}

/// Whether the file holds a whole line yet.
fn has_a_line(path: &Path) -> Result<bool> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(bytes.contains(&b'\n'))
}

/// The file to follow, and its task when already known.
fn target(store: &Store, args: &WatchArgs) -> Result<(PathBuf, Option<String>)> {
    if let Some(t) = &args.target {
        let p = Path::new(t);
        if p.is_file() {
            return Ok((p.to_path_buf(), None));
        }
        if p.is_dir() {
            bail!("{t} is a directory; expected a transcript file or a task");
        }
    }
    let name = args.target.as_deref().unwrap_or("latest");
    let task = find_task(store, name, args.project.as_deref())?;
    let source = store
        .reader()
        .task_source(&task)?
        .with_context(|| format!("task {task} has no source file to follow"))?;
    if source.starts_with("stdin:") {
        bail!("task {task} was read from standard input: there is no file to follow");
    }
    Ok((PathBuf::from(source), Some(task)))
}

/// What `step --at k` prints for call `k`: a what-if on a scratch copy.
fn report_call(
    store: &mut Store,
    ui: &mut Ui,
    args: &WatchArgs,
    budget: &RunBudget,
    task: &str,
    index: &TaskRecordIndex,
    k: u32,
) -> Result<()> {
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.budget, store)?;
    let mut scratch = store.scratch_copy(task)?;
    let mut driver = Driver::new(
        &scratch,
        index,
        RunSettings::new(budget.budget, &est, summarizer.get()),
    )?;
    let out = driver.step(&mut scratch, k)?;
    summarizer.note_call(out.report.call);
    if args.json {
        return print_call(
            ui,
            task,
            &out.report,
            budget,
            index.recorded_prompt(out.report.call),
            true,
            summarizer.report().as_ref(),
        );
    }
    writeln!(ui.out, "{}", one_line(&out.report))?;
    Ok(())
}

/// `call 12 (turn 3) · 63727 → 41200 tokens (trigger 117000) · tiers shrink, floor · ok`
fn one_line(r: &Report) -> String {
    let tiers: Vec<&str> = r.tiers_fired.iter().map(|t| t.name()).collect();
    format!(
        "call {} (turn {}) · {} → {} tokens (trigger {}) · tiers {} · {}",
        r.call,
        r.turn,
        r.tokens_before,
        r.tokens_after,
        r.trigger,
        if tiers.is_empty() {
            "none".to_string()
        } else {
            tiers.join(", ")
        },
        r.status.name()
    )
}
