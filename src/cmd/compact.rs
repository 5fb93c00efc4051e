//! `compactor compact`: compact a saved session offline. Import if needed,
//! replay every recorded call keeping the store (so forms and summaries are
//! minted as a live engine would have minted them), then run the next call
//! and write its view: the bounded checkpoint to resume the session with.
//! Calls already run on this store under the same settings (the replay
//! progress) are not run again: compact resumes at the last one, as a
//! restarted engine would. So running it again re-derives the same view and
//! mints nothing, and compacting a session that has grown runs only its new
//! calls.

use std::io::Write;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Ui;
use super::project::{budget_of, outcome_of, resolve_task, summarizer_of};
use super::report::CallJson;
use crate::cli::{CompactArgs, ExportFormatArg};
use crate::driver::{Driver, RunSettings, TaskRecordIndex, resume_point};
use crate::engine::estimate::CharsPerToken;
use crate::exit::Outcome;
use crate::replay::{Prices, ReplayOptions, replay};
use crate::store::Store;
use crate::view::{ExportFormat, export};

pub fn run(store: &mut Store, ui: &mut Ui, args: &CompactArgs) -> Result<Outcome> {
    let budget = budget_of(&args.budget)?;
    let task = resolve_task(store, ui, &args.source)?;
    let index = TaskRecordIndex::load(store, &task)?;
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.budget, store)?;
    let settings = || RunSettings {
        budget,
        estimator: &est,
        summarizer: summarizer.get(),
    };
    let calls = index.calls();
    let identity = settings().identity();
    // Re-run the last call already committed (a re-run mints nothing new), then go on.
    let from = resume_point(store, &task, &settings())?.map_or(1, |k| k.clamp(1, calls + 1));
    if from > 1 {
        ui.note(format!(
            "calls 1 to {from} of {task} already ran on this store with these settings: resuming at call {from}"
        ));
    }
    // Tier name → how many replayed calls fired it, in first-fired order.
    let mut fired: Vec<(&'static str, u32)> = Vec::new();
    let mut replayed = 0u32;
    if from <= calls {
        let todo = calls - from + 1;
        let bar = (ui.stderr_terminal && !ui.quiet && todo >= 20).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(u64::from(todo)), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("compacting {wide_bar} {pos}/{len} calls")
                    .expect("valid template"),
            );
            bar
        });
        let opts = ReplayOptions {
            from,
            to: calls,
            resume: from > 1,
            prices: Prices::default(),
            progress: Some(identity.clone()),
        };
        replay(store, &index, settings(), opts, |row, _| -> Result<()> {
            if let Some(b) = &bar {
                b.inc(1);
            }
            replayed += 1;
            summarizer.note_call(row.step);
            for t in &row.tiers_fired {
                match fired.iter_mut().find(|(name, _)| name == t) {
                    Some((_, n)) => *n += 1,
                    None => fired.push((t, 1)),
                }
            }
            Ok(())
        })?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    }
    let mut driver = Driver::new(store, &index, settings())?;
    driver.record_progress(identity);
    let out = driver.step(store, calls + 1)?;
    summarizer.note_call(calls + 1);
    let llm = summarizer.report();
    let format = match args.format {
        ExportFormatArg::Anthropic => ExportFormat::Anthropic,
        ExportFormatArg::Openai => ExportFormat::Openai,
        ExportFormatArg::Markdown => ExportFormat::Markdown,
    };
    let bytes = export(&out.view, format);
    let recorded = index.recorded_prompt(calls + 1);
    let summary = if fired.is_empty() {
        format!("replayed {replayed} recorded calls: no tier fired")
    } else {
        let list: Vec<String> = fired.iter().map(|(t, n)| format!("{t} at {n}")).collect();
        format!(
            "replayed {replayed} recorded calls: {} calls",
            list.join(", ")
        )
    };
    match &args.output {
        Some(path) => {
            if !args.json {
                writeln!(ui.out, "{summary}")?;
            }
            std::fs::write(path, &bytes)
                .with_context(|| format!("cannot write the view to {}", path.display()))?;
            super::summarizer::print_call_with(
                ui,
                &task,
                &out.report,
                &budget,
                recorded,
                args.json,
                llm.as_ref(),
            )?;
        }
        None => {
            ui.out.write_all(&bytes)?;
            // The view owns stdout; the report goes to stderr.
            if args.json {
                let mut v = serde_json::to_value(CallJson {
                    task: &task,
                    report: &out.report,
                    recorded_prompt_tokens: recorded,
                    budget: &budget,
                })?;
                if let Some(r) = &llm {
                    v["llm"] = serde_json::to_value(r)?;
                }
                ui.requested_on_stderr(v.to_string());
            } else {
                ui.note(format!(
                    "compacted {task}: {summary}; final view {} → {} tokens, tiers {}, status {}, view {}",
                    out.report.tokens_before,
                    out.report.tokens_after,
                    if out.report.tiers_fired.is_empty() { "-".to_string() } else { out.report.tiers_fired.join(",") },
                    out.report.status.name(),
                    &out.report.view_hash[..16]
                ));
                summarizer.note(ui);
            }
        }
    }
    Ok(outcome_of(out.report.status))
}
