//! `compactor replay`: the timeline of a task, call by call.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use super::Ui;
use super::project::{budget_of, resolve_task, summarizer_of};
use crate::cli::{PriceArgs, ReplayArgs};
use crate::driver::{RunSettings, TaskRecordIndex};
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::exit::Outcome;
use crate::replay::{Prices, ReplayOptions, StepRow, Totals, replay};
use crate::store::{RunInfo, RunStep, Store};
use crate::style::{self, paint};

pub fn run(store: &mut Store, ui: &mut Ui, args: &ReplayArgs) -> Result<Outcome> {
    let budget = budget_of(&args.budget)?;
    let task = resolve_task(store, ui, &args.source)?;
    let index = TaskRecordIndex::load(store, &task)?;
    let calls = index.calls();
    if calls == 0 {
        bail!("task {task} has no model calls to replay");
    }
    let to = args.to.unwrap_or(calls);
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.budget, store)?;
    let run_settings = RunSettings {
        budget,
        estimator: &est,
        summarizer: summarizer.get(),
    }
    .identity();
    let from = match (args.from, args.resume) {
        (Some(k), _) => k,
        (None, false) => 1,
        // Re-run the last committed call (idempotent), then go on.
        (None, true) => match store.reader().replay_progress(&task)? {
            Some((k, settings)) if settings == run_settings => k,
            Some((_, settings)) => bail!(
                "the interrupted replay of {task} ran with other settings ({settings}); resume it with those, or replay from the start"
            ),
            None => 1,
        },
    };
    if args.in_place
        && !args.resume
        && let Some((p, settings)) = store.reader().replay_progress(&task)?
        && settings == run_settings
    {
        ui.note(format!(
            "note: calls 1 to {p} of {task} already ran in place on this store; running them again \
             restores what later calls stored, so their rows can differ from a first run's \
             (without --in-place a replay starts from a scratch copy; --resume goes on from call {p})"
        ));
    }
    if !(1..=calls).contains(&to) || !(1..=to).contains(&from) {
        bail!("--from {from} --to {to} is out of range: task {task} has calls 1..={calls}");
    }
    if let Some(name) = &args.save
        && !args.force
        && store.reader().run(name)?.is_some()
    {
        bail!(
            "a run named {name:?} is already saved; pass --force to replace it or pick another name"
        );
    }
    if let Some(dir) = &args.views {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let settings = RunSettings {
        budget,
        estimator: &est,
        summarizer: summarizer.get(),
    };
    let opts = ReplayOptions {
        from,
        to,
        resume: args.resume,
        prices: prices_of(&args.prices),
        progress: (args.in_place || args.resume).then(|| run_settings.clone()),
    };
    let bar = (ui.stderr_terminal && !ui.quiet && !args.jsonl && to - from >= 20).then(|| {
        let bar = ProgressBar::with_draw_target(
            Some(u64::from(to - from + 1)),
            ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            ProgressStyle::with_template("replaying {wide_bar} {pos}/{len} calls")
                .expect("valid template"),
        );
        bar
    });
    if !args.json && !args.jsonl {
        header(ui, &task, &budget, calls)?;
    }
    let mut saved: Vec<RunStep> = Vec::new();
    let mut scratch = if args.in_place || args.resume {
        None
    } else {
        Some(store.scratch_copy(&task)?)
    };
    let target: &mut Store = scratch.as_mut().unwrap_or(store);
    let prices = opts.prices;
    let (rows, totals) = replay(target, &index, settings, opts, |row, out| -> Result<()> {
        if let Some(b) = &bar {
            b.inc(1);
        }
        summarizer.note_call(row.step);
        if let Some(dir) = &args.views {
            write_view(dir, row.step, &out.view.canonical_bytes())?;
        }
        if args.jsonl {
            serde_json::to_writer(&mut ui.out, row)?;
            writeln!(ui.out)?;
            ui.out.flush()?;
        } else if !args.json {
            print_row(ui, row)?;
        }
        if args.save.is_some() {
            saved.push(RunStep {
                step: row.step,
                turn: row.turn,
                report: serde_json::to_value(row).expect("rows serialise"),
                view: out.view.clone(),
            });
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let llm = summarizer.report();
    if args.json {
        let mut v = json!({"task": task, "budget": budget, "steps": rows, "totals": totals});
        if let Some(r) = &llm {
            v["llm"] = serde_json::to_value(r)?;
        }
        ui.json(&v)?;
    } else if !args.jsonl {
        print_totals(ui, &totals, &prices)?;
        for l in llm.iter().flat_map(|r| r.human()) {
            writeln!(ui.out, "{l}")?;
        }
    } else {
        summarizer.note(ui);
    }
    drop(scratch);
    if let Some(name) = &args.save {
        let info = RunInfo {
            name: name.clone(),
            task_id: task.clone(),
            settings: json!({"budget": budget, "summarizer": summarizer.get().name(), "from": from, "to": to}),
            steps: saved.len() as u64,
            final_view_hash: rows.last().map(|r| r.view_hash.clone()),
            totals: serde_json::to_value(&totals)?,
        };
        store.transaction(|tx| tx.save_run(&info, &saved))?;
        ui.note(format!("saved as run {name:?} ({} calls)", saved.len()));
    }
    Ok(Outcome::Ok)
}

pub fn prices_of(p: &PriceArgs) -> Prices {
    Prices {
        input: p.price_input,
        cache_write: p.price_cache_write,
        cache_read: p.price_cache_read,
    }
}

/// Written atomically: a killed replay leaves whole views or none.
fn write_view(dir: &Path, step: u32, bytes: &[u8]) -> Result<()> {
    let path = dir.join(format!("call-{step:04}.json"));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.write_all(bytes)?;
    tmp.persist(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn header(ui: &mut Ui, task: &str, b: &Budget, calls: u32) -> Result<()> {
    writeln!(
        ui.out,
        "{}",
        paint(
            ui.color,
            style::BOLD,
            &format!(
                "replay · task {task} · {calls} calls · w_eff {} · trigger {} · stop {} · protect {} steps",
                b.w_eff(),
                b.trigger(),
                b.stop(),
                b.protect_recent_steps
            )
        )
    )?;
    writeln!(
        ui.out,
        "{}",
        paint(
            ui.color,
            style::DIM,
            " CALL  TURN   BEFORE →    AFTER  RECORDED  TIERS                                SHRUNK DROP FOLDED  CACHE_READ CACHE_WRITE   RAW_TOKENS  VIEW"
        )
    )?;
    Ok(())
}

fn print_row(ui: &mut Ui, r: &StepRow) -> Result<()> {
    let tiers = if r.tiers_fired.is_empty() {
        "-".to_string()
    } else {
        r.tiers_fired.join(",")
    };
    let tiers = format!("{tiers:<36}");
    let tiers = if r.tiers_fired.is_empty() {
        tiers
    } else {
        paint(ui.color, style::CYAN, &tiers)
    };
    writeln!(
        ui.out,
        "{:>5} {:>5} {:>8} → {:>8} {:>9}  {} {:>6} {:>4} {:>6} {:>11} {:>11} {:>12}  {}",
        r.step,
        r.turn,
        r.tokens_before,
        r.tokens_after,
        r.recorded_prompt_tokens
            .map_or("-".to_string(), |t| t.to_string()),
        tiers,
        r.parts_shrunk,
        r.parts_dropped,
        r.parts_folded,
        r.cache_read_tokens,
        r.cache_write_tokens,
        r.raw_tokens,
        &r.view_hash[..12]
    )?;
    Ok(())
}

fn print_totals(ui: &mut Ui, t: &Totals, p: &Prices) -> Result<()> {
    writeln!(
        ui.out,
        "totals over {} calls (estimated tokens; USD per million: input {}, cache write {}, cache read {}):",
        t.calls, p.input, p.cache_write, p.cache_read
    )?;
    for (name, c) in [("compacted", &t.compacted), ("raw", &t.raw)] {
        writeln!(
            ui.out,
            "  {name:<9} {:>12} prompt · {:>12} cache read · {:>11} cache write · ${} with cache · ${} without",
            c.prompt_tokens,
            c.cache_read_tokens,
            c.cache_write_tokens,
            c.cost_cached_usd,
            c.cost_uncached_usd
        )?;
    }
    Ok(())
}
