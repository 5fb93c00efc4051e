//! `compactor preflight` and `compactor step`: one operation, two boundaries.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::Ui;
use super::import::{format_of, import_one};
use super::summarizer::{Configured, print_call_with};
use crate::cli::{BudgetArgs, ProjectArgs, TaskSource};
use crate::driver::{Driver, RunSettings, TaskRecordIndex};
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::engine::{Mode, Status};
use crate::exit::Outcome;
use crate::ingest::IngestOptions;
use crate::store::Store;
use crate::view::View;

pub fn run(store: &mut Store, ui: &mut Ui, args: &ProjectArgs, mode: Mode) -> Result<Outcome> {
    let budget = budget_of(&args.budget)?;
    let task = resolve_task(store, ui, &args.source)?;
    let index = TaskRecordIndex::load(store, &task)?;
    let k = call_of(&index, args.at)?;
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.budget, store)?;
    let mut driver = Driver::new(
        store,
        &index,
        RunSettings {
            budget,
            estimator: &est,
            summarizer: summarizer.get(),
        },
    )?;
    let out = match mode {
        Mode::Preflight => driver.preflight(store, k)?,
        Mode::Step => driver.step(store, k)?,
    };
    if let Some(path) = &args.view {
        write_view(path, &out.view)?;
    }
    summarizer.note_call(out.report.call);
    print_call_with(
        ui,
        &task,
        &out.report,
        &budget,
        // Preflight reports the turn's first call, not `k`.
        index.recorded_prompt(out.report.call),
        args.json,
        summarizer.report().as_ref(),
    )?;
    Ok(outcome_of(out.report.status))
}

/// `over_window` is the one result that falls short: exit status 1.
pub fn outcome_of(status: Status) -> Outcome {
    match status {
        Status::OverWindow => Outcome::Differs,
        _ => Outcome::Ok,
    }
}

pub fn budget_of(a: &BudgetArgs) -> Result<Budget> {
    let b = Budget {
        window: a.window,
        output_reserved: a.output_reserved,
        trigger_ratio: a.trigger_ratio,
        stop_ratio: a.stop_ratio,
        protect_recent_steps: a.protect_recent_steps,
        summary_budget_tokens: a.summary_budget,
    };
    b.validate()?;
    Ok(b)
}

/// The summarizer `args` configure (flags, environment, config file).
pub fn summarizer_of(args: &BudgetArgs, store: &Store) -> Result<Configured> {
    Configured::for_store(args.summarizer, &args.llm, store)
}

/// The call to project: `--at`, or the next call after the record.
pub fn call_of(index: &TaskRecordIndex, at: Option<u32>) -> Result<u32> {
    let next = index.calls() + 1;
    match at {
        None => Ok(next),
        Some(k) if (1..=next).contains(&k) => Ok(k),
        Some(k) => bail!(
            "--at {k} is out of range: task {} has {} model calls, so STEP must be 1..={next} ({next} is the next, unrecorded call)",
            index.task,
            index.calls()
        ),
    }
}

/// The task a command works on: `--task`, or FILE's main task after importing it.
pub fn resolve_task(store: &mut Store, ui: &mut Ui, src: &TaskSource) -> Result<String> {
    match &src.file {
        Some(file) => {
            let opts = IngestOptions {
                format: format_of(src.input_format),
                task: src.task.clone(),
                ..IngestOptions::default()
            };
            let report = import_one(store, ui, file, &opts)?;
            for w in &report.warnings {
                ui.warn(format!(
                    "{}:{}: {} (task {})",
                    report.path, w.line, w.message, w.task
                ));
            }
            match report.main_task() {
                Some(t) => Ok(t.to_string()),
                None => bail!("{} holds no conversation to project", file.display()),
            }
        }
        None => {
            let task = src.task.clone().expect("clap requires FILE or --task");
            if store.reader().task(&task)?.is_none() {
                bail!("unknown task {task:?}; `compactor tasks` lists the imported ones");
            }
            Ok(task)
        }
    }
}

/// Write a view's canonical bytes atomically (a temp file renamed into place).
pub fn write_view(path: &Path, view: &View) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write the view to {}", path.display()))?;
    std::io::Write::write_all(&mut tmp, &view.canonical_bytes())?;
    tmp.persist(path)
        .with_context(|| format!("cannot write the view to {}", path.display()))?;
    Ok(())
}
