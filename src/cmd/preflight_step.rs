//! `compactor preflight` and `compactor step`: one operation, two boundaries.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use super::Ui;
use super::args::RunTarget;
use super::atomic::write_view;
use super::call_report::{mode_heading, print_call};
use super::exit::outcome_of;
use super::summarizer::summarizer_of;
use super::target::Resolved;
use super::words::plural;
use crate::cmd::exit::Outcome;
use crate::engine::Mode;
use crate::engine::estimate::CharsPerToken;
use crate::session::record::TaskRecordIndex;
use crate::session::run::{Keep, Placement, Run, preflight};
use crate::session::settings::RunSettings;
use crate::store::Store;

#[derive(Debug, Args)]
pub struct StepArgs {
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

pub fn run(store: &mut Store, ui: &mut Ui, args: &StepArgs, mode: Mode) -> Result<Outcome> {
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
    let settings = RunSettings::new(budget, &est, &summarizer);
    // By default a what-if run that leaves no trace.
    let placement = Placement::in_place_if(args.in_place, false);
    let out = match mode {
        // Only the report is printed unless the view is written.
        Mode::Preflight => {
            let keep = match args.view {
                Some(_) => Keep::Views,
                None => Keep::Nothing,
            };
            preflight(store, &index, settings, placement, keep, k)?
        }
        Mode::Step => Run::open(store, &index, settings, placement)?.step(store, k)?,
    };
    if let Some(path) = &args.view {
        write_view(path, &out.view)?;
    }
    print_call(
        ui,
        mode_heading(out.report.mode),
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
