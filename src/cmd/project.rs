//! `compactor preflight` and `compactor step`: one operation, two boundaries.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use super::Ui;
use super::call_report::print_call;
use super::common::{Resolved, RunTarget, outcome_of, plural, summarizer_of, write_view};
use crate::cmd::exit::Outcome;
use crate::engine::Mode;
use crate::engine::estimate::CharsPerToken;
use crate::session::driver::{Driver, RunSettings, TaskRecordIndex};
use crate::store::Store;

#[derive(Debug, Args)]
pub struct ProjectArgs {
    #[command(flatten)]
    pub run: RunTarget,

    /// The model call to project (1 = the first). Default: the next call after
    /// the last recorded message.
    #[arg(long, value_name = "CALL")]
    pub at: Option<u32>,

    /// Write the view's canonical bytes to FILE.
    #[arg(long, value_name = "FILE")]
    pub view: Option<PathBuf>,

    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// Run on the store itself, reading and keeping the compaction state of
    /// this profile (budget, summarizer, summary budget, tool rules). By
    /// default the call runs on a scratch copy of the task with no compaction
    /// state, and the store is left as it was found.
    #[arg(long)]
    pub in_place: bool,
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &ProjectArgs, mode: Mode) -> Result<Outcome> {
    let Resolved {
        budget,
        run_budget,
        task,
        index,
        ..
    } = args.run.resolve(store, ui)?;
    let k = call_of(&index, args.at)?;
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.run.budget, store)?;
    // A what-if run leaves no trace: a scratch copy with no compaction state.
    let mut scratch = match mode {
        _ if args.in_place => None,
        Mode::Preflight => Some(store.scratch_copy_formless(&task)?),
        Mode::Step => Some(store.scratch_copy(&task)?),
    };
    let target: &mut Store = scratch.as_mut().unwrap_or(store);
    let mut driver = Driver::new(
        target,
        &index,
        RunSettings::new(budget, &est, summarizer.get()),
    )?;
    match mode {
        // Only the report is printed: the view is hashed, never held.
        Mode::Preflight if args.view.is_none() => driver.one_shot_unkept(),
        // One call with nothing before it to resume a hash from.
        Mode::Preflight => driver.one_shot(),
        Mode::Step => {}
    }
    let out = match mode {
        Mode::Preflight => driver.preflight(target, k)?,
        Mode::Step => driver.step(target, k)?,
    };
    drop(scratch);
    if let Some(path) = &args.view {
        write_view(path, &out.view)?;
    }
    summarizer.note_call(out.report.call);
    print_call(
        ui,
        &task,
        &out.report,
        &run_budget,
        // Preflight reports the turn's first call, not `k`.
        index.recorded_prompt(out.report.call),
        args.json,
        summarizer.report().as_ref(),
    )?;
    Ok(outcome_of(out.report.status))
}

/// The call to project: `--at`, or the next call after the record.
pub fn call_of(index: &TaskRecordIndex, at: Option<u32>) -> Result<u32> {
    let next = index.calls() + 1;
    match at {
        None => Ok(next),
        Some(k) if (1..=next).contains(&k) => Ok(k),
        Some(k) => bail!(
            "--at {k} is out of range: task {} has {}, so CALL must be 1..={next} ({next} is the next, unrecorded call)",
            index.task,
            plural(index.calls(), "model call")
        ),
    }
}
