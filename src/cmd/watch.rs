//! `compactor watch [FILE|TASK]`: follow a session file as it is written.
//!
//! The file is polled: each look imports what was added (a no-op when its
//! size and modification time did not change; a half-written last line is
//! left for the next look), and every model call not yet reported gets the
//! row `replay` gives it. One replay runs for the whole watch, on a scratch
//! copy of the task, its driver kept from look to look and handed the grown
//! record, so each call is run once and carries the state the calls before
//! it left, as a live engine would. Ctrl-C ends the watch as it ends the
//! proxy: the import or call under way is finished (an import is one
//! transaction, so the store is never left with half of one), `stopped` is
//! printed on stderr and the status is 0; a second Ctrl-C ends it at once.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;

use super::Ui;
use super::args::BudgetArgs;
use super::args::format_or_auto;
use super::defaults;
use super::summarizer::Configured;
use super::summarizer::summarizer_of;
use super::target::{find_task, positional_task};
use crate::cmd::exit::Outcome;
use crate::engine::estimate::{CharsPerToken, Estimator};
use crate::model::Format;
use crate::session::cost::Prices;
use crate::session::record::TaskRecordIndex;
use crate::session::replay::StepRow;
use crate::session::run::{Placement, ReplayOptions, Run};
use crate::session::settings::RunSettings;
use crate::store::Store;
use crate::transcript::ingest::{IngestOptions, ingest_file};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  compactor watch --project . --window 200000       the latest session of this project
  compactor watch --task c64c                       a task's session file, named by a prefix
  compactor watch session.jsonl --json --until-idle 30")]
pub struct WatchArgs {
    /// A transcript file to follow, or a task (its id, a unique prefix, `latest`) whose
    /// file to follow. Default: `latest`.
    #[arg(value_name = "FILE|TASK")]
    pub target: Option<String>,

    /// The task whose file to follow: its id, a unique prefix of it, or `latest`.
    #[arg(long, value_name = "TASK", conflicts_with = "target")]
    pub task: Option<String>,

    /// Pick among the sessions recorded in this project directory: `latest` and prefixes
    /// look only there. `--cwd` is an older name for it.
    #[arg(long, alias = "cwd", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub project: Option<PathBuf>,

    /// FILE's transcript format.
    #[arg(long, default_value = "auto", value_parser = format_or_auto(), value_name = "FORMAT")]
    pub input_format: ::std::option::Option<Format>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// One JSON line per model call: the call's record of `replay --jsonl`.
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
    let (path, task) = target(store, args)?;
    let idle = args.until_idle.map(Duration::from_secs);
    let interval = Duration::from_millis(args.interval.max(10));
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.budget, store)?;
    let mut watch = Watch {
        path,
        task,
        format: args.input_format,
        flags: &args.budget,
        estimator: &est,
        summarizer: &summarizer,
        json: args.json,
        announced: false,
        followed: None,
    };
    let ctrl_c = on_ctrl_c();
    let mut last_change = Instant::now();
    loop {
        match watch.look(store, ui) {
            Ok(true) => last_change = Instant::now(),
            Ok(false) => {}
            Err(e) if e.is::<Stopped>() => return stopped(ui),
            Err(e) => return Err(e),
        }
        if let Some(idle) = idle
            && last_change.elapsed() >= idle
        {
            watch.finish(store, ui)?;
            return Ok(Outcome::Ok);
        }
        match ctrl_c.recv_timeout(interval) {
            Ok(()) => return stopped(ui),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // No handler could be installed: Ctrl-C keeps its default action.
            Err(mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(interval),
        }
    }
}

/// Set once Ctrl-C is pressed: the watch ends at its next safe point.
static STOP: AtomicBool = AtomicBool::new(false);

/// The watch was stopped by Ctrl-C.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for Stopped {}

/// The end of a watch stopped by Ctrl-C, as every long-running command ends
/// (`proxy` too, see `exit.rs`): what was printed stays, `stopped` on
/// stderr, exit status 0.
fn stopped(ui: &mut Ui) -> Result<Outcome> {
    ui.out.flush()?;
    ui.note("stopped");
    Ok(Outcome::Ok)
}

/// Catch Ctrl-C (SIGINT): the first one asks the watch to stop once the
/// import or call under way is done (an import is one transaction, and a
/// reported call is whole), and is sent on the channel; a second one ends
/// the process at once, with the status of a process killed by it (130).
/// The handler is installed before this returns.
fn on_ctrl_c() -> mpsc::Receiver<()> {
    let (tx, rx) = mpsc::channel();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        return rx;
    };
    let installed = {
        let _in = runtime.enter();
        interrupts()
    };
    let Ok(mut interrupts) = installed else {
        return rx;
    };
    std::thread::spawn(move || {
        runtime.block_on(async {
            if interrupts.next().await {
                STOP.store(true, Ordering::SeqCst);
                let _ = tx.send(());
            }
            if interrupts.next().await {
                std::process::exit(130);
            }
        })
    });
    rx
}

/// SIGINT (Ctrl-C on Windows) as a stream, registered when made.
struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
    #[cfg(windows)]
    signal: tokio::signal::windows::CtrlC,
}

impl Interrupts {
    /// The next interrupt; false when none can come any more.
    async fn next(&mut self) -> bool {
        self.signal.recv().await.is_some()
    }
}

fn interrupts() -> std::io::Result<Interrupts> {
    #[cfg(unix)]
    let signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    #[cfg(windows)]
    let signal = tokio::signal::windows::ctrl_c()?;
    Ok(Interrupts { signal })
}

/// A watch between two looks at its file.
struct Watch<'a> {
    path: PathBuf,
    /// The file's task, once known.
    task: Option<String>,
    format: Option<Format>,
    /// The budget flags: what they leave to the session's model is filled in
    /// as `replay` fills it in, once the session has a call to run.
    flags: &'a BudgetArgs,
    estimator: &'a dyn Estimator,
    summarizer: &'a Configured,
    json: bool,
    announced: bool,
    /// The replay, from the first call on.
    followed: Option<Followed<'a>>,
}

impl<'a> Watch<'a> {
    /// One look at the file: import what was added, then run and print
    /// every call whose row is final. Returns whether rows were added.
    fn look(&mut self, store: &mut Store, ui: &mut Ui) -> Result<bool> {
        // A new session file may be empty or hold half a first line: wait for one line.
        if self.task.is_none() && !has_a_line(&self.path)? {
            return Ok(false);
        }
        let opts = IngestOptions {
            format: self.format,
            ..IngestOptions::default()
        };
        let report = ingest_file(store, &self.path, &opts, &mut |_| {})?;
        if self.task.is_none() {
            self.task = report.main_task().map(str::to_string);
        }
        self.report(store, ui, false)?;
        Ok(report.added() > 0)
    }

    /// The end of the watch: nothing more is coming, so the last call is as
    /// final as the file; print it too.
    fn finish(&mut self, store: &mut Store, ui: &mut Ui) -> Result<()> {
        self.report(store, ui, true)
    }

    /// Run and print the calls not reported yet whose rows are final (with
    /// `all`, every call the record holds).
    fn report(&mut self, store: &mut Store, ui: &mut Ui, all: bool) -> Result<()> {
        let Some(task) = &self.task else {
            return Ok(());
        };
        // Said once, after a budget the session cannot run under is refused.
        let mut announce = |ui: &mut Ui| {
            if !self.announced {
                ui.note(format!("watching {} (task {task})", self.path.display()));
                self.announced = true;
            }
        };
        let f = match &mut self.followed {
            Some(f) => {
                f.catch_up(store)?;
                f
            }
            None => {
                let index = TaskRecordIndex::load(store, task)?;
                if ready(&index, all) == 0 {
                    announce(ui);
                    return Ok(());
                }
                // As replay resolves it, now that the session names its model.
                let budget = defaults::budget_for(self.flags, store.reader().task(task)?.as_ref())?;
                if !self.flags.allow_over_window {
                    defaults::refuse_below_overhead(
                        &budget.budget,
                        index.overhead(self.estimator)?,
                    )?;
                }
                announce(ui);
                defaults::note_window(ui, &budget);
                let settings = RunSettings::new(budget.budget, self.estimator, self.summarizer);
                self.followed
                    .insert(Followed::start(store, index, settings)?)
            }
        };
        let to = ready(f.index(), all);
        f.report_to(store, ui, self.json, to)
    }
}

/// The last call of `index` whose row can no longer change (with `all`, the
/// last call): a call's row carries its recorded usage, which a Codex
/// rollout writes after the call's items, so the last call waits for its
/// usage or for the next call.
fn ready(index: &TaskRecordIndex, all: bool) -> u32 {
    let n = index.calls();
    match (all, index.usage(n)) {
        (true, _) | (_, Some(_)) => n,
        (false, None) => n.saturating_sub(1),
    }
}

/// The replay a watch keeps going: a run on a scratch copy of the task,
/// over its record as it grows.
struct Followed<'a> {
    run: Run<'a, Box<TaskRecordIndex>>,
    trigger: u64,
    /// The calls reported so far.
    reported: u32,
}

impl<'a> Followed<'a> {
    fn start(
        store: &Store,
        index: TaskRecordIndex,
        settings: RunSettings<'a>,
    ) -> Result<Followed<'a>> {
        let trigger = settings.budget.trigger();
        let run = Run::open(store, Box::new(index), settings, Placement::Scratch)?;
        Ok(Followed {
            run,
            trigger,
            reported: 0,
        })
    }

    fn index(&self) -> &TaskRecordIndex {
        self.run.index()
    }

    /// Hand the run the task's record again when rows were added to it (by
    /// this watch's import or by any other).
    fn catch_up(&mut self, store: &Store) -> Result<()> {
        Ok(self.run.grow(store)?)
    }

    /// Run and print every call not reported yet, up to `to`.
    fn report_to(&mut self, store: &mut Store, ui: &mut Ui, json: bool, to: u32) -> Result<()> {
        let trigger = self.trigger;
        let opts = ReplayOptions {
            from: self.reported + 1,
            to,
            // The calls reported ran on this run's store.
            resume: true,
            prices: Prices::default(),
        };
        let reported = &mut self.reported;
        self.run.replay(store, &opts, |row, _| -> Result<()> {
            if STOP.load(Ordering::SeqCst) {
                return Err(Stopped.into());
            }
            if json {
                ui.json_kind("replay_call", row)?;
            } else {
                writeln!(ui.out, "{}", one_line(row, trigger))?;
            }
            ui.out.flush()?;
            *reported = row.call;
            Ok(())
        })?;
        Ok(())
    }
}

/// Whether the file holds a whole line yet (read up to its first newline,
/// a block at a time: the file may be large).
fn has_a_line(path: &Path) -> Result<bool> {
    use std::io::Read;
    let fail = || format!("cannot read {}", path.display());
    let mut file = std::fs::File::open(path).with_context(fail)?;
    let mut block = [0u8; 8192];
    loop {
        match file.read(&mut block).with_context(fail)? {
            0 => return Ok(false),
            n if block[..n].contains(&b'\n') => return Ok(true),
            _ => {}
        }
    }
}

/// The file to follow, and its task when already known.
fn target(store: &Store, args: &WatchArgs) -> Result<(PathBuf, Option<String>)> {
    let task = match (&args.target, &args.task) {
        (Some(t), _) => {
            let p = Path::new(t);
            if p.is_file() {
                return Ok((p.to_path_buf(), None));
            }
            if p.is_dir() {
                bail!("{t} is a directory; expected a transcript file or a task");
            }
            positional_task(store, t, args.project.as_deref())?
        }
        (None, name) => find_task(
            store,
            name.as_deref().unwrap_or("latest"),
            args.project.as_deref(),
        )?,
    };
    let source = store
        .reader()
        .task_source(&task)?
        .with_context(|| format!("task {task} has no source file to follow"))?;
    if source.starts_with("stdin:") {
        bail!("task {task} was read from standard input: there is no file to follow");
    }
    Ok((PathBuf::from(source), Some(task)))
}

/// `call 12 (turn 3) · 63727 → 41200 tokens (trigger 117000) · tiers shrink, floor · ok`
fn one_line(r: &StepRow, trigger: u64) -> String {
    format!(
        "call {} (turn {}) · {} → {} tokens (trigger {trigger}) · tiers {} · {}",
        r.call,
        r.turn,
        r.tokens_before,
        r.tokens_after,
        if r.tiers_fired.is_empty() {
            "none".to_string()
        } else {
            let tiers: Vec<&str> = r.tiers_fired.iter().map(|t| t.name()).collect();
            tiers.join(", ")
        },
        r.status.name()
    )
}

#[cfg(test)]
mod tests;
