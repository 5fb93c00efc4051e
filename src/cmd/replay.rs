//! `compactor replay`: the timeline of a task, call by call.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;

use super::args::RunTarget;
use super::atomic::write_atomic;
use super::call_report::paint_status;
use super::defaults::{PriceArgs, RunBudget, RunPrices, overhead_warning, prices_for};
use super::errors::hinted;
use super::progress::progress;
use super::summarizer::summarizer_of;
use super::target::Resolved;
use super::words::plural;
use super::{Ui, with_schema};
use crate::cmd::exit::Outcome;
use crate::cmd::style::{self, paint_if};
use crate::engine::estimate::CharsPerToken;
use crate::engine::{Status, Tier};
use crate::probe::{CallScore, ProbePass, Worst, percent};
use crate::session::cost::Totals;
use crate::session::replay::StepRow;
use crate::session::run::{Placement, ReplayOptions, Run};
use crate::session::settings::{RunSettings, recorded_progress};
use crate::store::{RunInfo, RunStep, Store};
use crate::summarize::llm::LlmReport;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor replay --task latest --window 64000\n  compactor replay session.jsonl --save baseline --jsonl\n  compactor replay --task 7f3c --from 100 --to 120 --views views/"
)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub run: RunTarget,

    #[command(flatten)]
    pub prices: PriceArgs,

    /// First call to show (earlier calls still run, unless --resume).
    #[arg(long, value_name = "CALL")]
    pub from: Option<u32>,

    /// Last call to run and show.
    #[arg(long, value_name = "CALL")]
    pub to: Option<u32>,

    /// Replay on the store itself, keeping what the replay mints (as `compact`
    /// does). By default a replay runs on a scratch copy of the task with no
    /// compaction state, so it shows what a live engine would have done and
    /// repeats exactly.
    #[arg(long)]
    pub in_place: bool,

    /// Continue an interrupted in-place replay (implies --in-place): start at
    /// the last call it committed (or at --from), re-deriving the checkpoint
    /// as a restarted engine would.
    #[arg(long)]
    pub resume: bool,

    /// Write every call's view to DIR/call-NNNN.json.
    #[arg(long, value_name = "DIR")]
    pub views: Option<PathBuf>,

    /// Save the run's reports and views in the store under NAME.
    #[arg(long, value_name = "NAME")]
    pub save: Option<String>,

    /// With --save, replace an existing run of that name.
    #[arg(long, requires = "save")]
    pub force: bool,

    /// Print one JSON object: {"calls":[...],"totals":{...},"schema":"compactor.replay/1"}.
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,

    /// Print one JSON object per call as soon as it completes (JSON Lines),
    /// then a totals record.
    #[arg(long)]
    pub jsonl: bool,

    /// Score every call's view with probes from the raw record (as `compactor
    /// probe` does): critical and overall survival per call, and the worst call.
    #[arg(long)]
    pub probes: bool,

    /// Audit a task `compactor proxy` recorded: derive every view it forwarded
    /// again, from the record as it stood then and under the settings it ran
    /// with (budget flags are not needed), and compare hashes; exit 1 at the
    /// first mismatch.
    #[arg(long, conflicts_with_all = ["in_place", "resume", "views", "save", "probes", "from", "to"])]
    pub verify_forwarded: bool,
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &ReplayArgs) -> Result<Outcome> {
    if args.verify_forwarded {
        let task = super::target::resolve_task(store, ui, &args.run.source)?;
        return super::verify_forwarded::verify(store, ui, &task, args.json || args.jsonl);
    }
    let Resolved {
        budget,
        run_budget,
        task,
        record,
        index,
        calls,
        ..
    } = args.run.replayable(store, ui, "replay")?;
    let run_prices = prices_for(ui, &args.prices, record.as_ref())?;
    let to = args.to.unwrap_or(calls);
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.run.budget, store)?;
    let settings = RunSettings::new(budget, &est, &summarizer);
    let from = first_call(store, ui, args, &task, &settings)?;
    if !(1..=calls).contains(&to) || !(1..=to).contains(&from) {
        bail!("--from {from} --to {to} is out of range: task {task} has calls 1..={calls}");
    }
    prepare_outputs(store, args, &task)?;
    let opts = ReplayOptions {
        from,
        to,
        resume: args.resume,
        prices: run_prices.prices,
        cache_ttl: run_prices.cache_ttl,
    };
    let bar = progress(
        ui,
        !args.jsonl && to - from >= 20,
        u64::from(to - from + 1),
        "replaying {wide_bar} {pos}/{len} calls",
    );
    if !args.json && !args.jsonl {
        let overhead = index.overhead(&est)?;
        header(ui, &task, &run_budget, overhead, calls, args.probes)?;
    }
    let mut saved: Vec<RunStep> = Vec::new();
    let placement = Placement::in_place_if(args.in_place || args.resume, true);
    let mut run = Run::open(store, &index, settings, placement)?;
    let mut statuses = StatusCounts::default();
    let mut pass = args.probes.then(|| ProbePass::new(index.len()));
    // `--json` writes its document as the calls arrive.
    let mut document = match args.json {
        true => Some(JsonDocument::open(
            &mut ui.out,
            [("budget", serde_json::to_value(budget)?)],
            "calls",
        )?),
        false => None,
    };
    let mut last_hash = None;
    let totals = run.replay(store, &opts, |row, out| -> Result<()> {
        if let Some(b) = &bar {
            b.inc(1);
        }
        statuses.add(row.status);
        if let Some(dir) = &args.views {
            write_view(dir, row.call, &out.view.canonical_bytes())?;
        }
        let score = match &mut pass {
            Some(pass) => {
                let rows = |r: std::ops::Range<usize>, f: &mut dyn FnMut(&_)| {
                    index.each_row(r.start, r.end, |_, m| f(m))
                };
                let s = pass.score(
                    row.call,
                    (&out.view, out.shared_blocks),
                    index.history_end(row.call),
                    rows,
                )?;
                Some(CallScore::of(row.call, row.status, &row.tiers_fired, s))
            }
            None => None,
        };
        if args.jsonl || args.json {
            let mut v = serde_json::to_value(row)?;
            if let Some(s) = &score {
                v["probes"] = serde_json::to_value(s)?;
            }
            match &mut document {
                Some(d) => d.item(&mut ui.out, &v)?,
                None => {
                    ui.json_kind("replay_call", &v)?;
                    ui.out.flush()?;
                }
            }
        } else {
            print_row(ui, row, score.as_ref())?;
        }
        if args.save.is_some() {
            last_hash = Some(row.view_hash.clone());
            saved.push(RunStep {
                step: row.call,
                turn: row.turn,
                report: serde_json::to_value(row).expect("rows serialise"),
                view: crate::view::View::clone(&out.view),
            });
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let llm = summarizer.report();
    let worst = pass
        .as_ref()
        .and_then(|p| p.worst())
        .map(|(k, e)| Worst::of(k, e));
    if let Some(document) = document {
        let mut v = json!({"task": task, "totals": totals});
        if args.probes {
            v["probes"] = json!({"worst_call": worst});
        }
        if let Some(r) = &llm {
            v["llm"] = serde_json::to_value(r)?;
        }
        document.close(&mut ui.out, with_schema("replay", &v)?)?;
    } else if !args.jsonl {
        print_summary(ui, &statuses, &totals, &run_prices, worst, llm.as_ref())?;
    } else {
        // JSON Lines end with the totals record.
        let mut v = json!({"task": task, "totals": totals});
        if let Some(r) = &llm {
            v["llm"] = serde_json::to_value(r)?;
        }
        ui.json_kind("replay_totals", &v)?;
        summarizer.note(ui);
    }
    drop(run);
    if let Some(name) = &args.save {
        let info = RunInfo {
            name: name.clone(),
            task_id: task.clone(),
            settings: json!({"budget": budget, "summarizer": summarizer.get().name(), "from": from, "to": to}),
            steps: saved.len() as u64,
            final_view_hash: last_hash,
            totals: serde_json::to_value(&totals)?,
        };
        save_run(store, ui, &info, &saved)?;
    }
    // As `step`: a call over the window is one a live provider would refuse.
    Ok(if statuses.over_window > 0 {
        Outcome::Differs
    } else {
        Outcome::Ok
    })
}

/// The first call to report: `--from`, else where an interrupted in-place
/// replay left off (`--resume`), else call 1; an in-place replay over calls
/// that already ran in place says what running them again does.
fn first_call(
    store: &Store,
    ui: &mut Ui,
    args: &ReplayArgs,
    task: &str,
    settings: &RunSettings<'_>,
) -> Result<u32> {
    // What an earlier in-place replay committed, where it matters.
    let recorded = match (args.from, args.resume, args.in_place) {
        (None, true, _) | (_, false, true) => recorded_progress(store, task, settings)?,
        _ => None,
    };
    let from = match (args.from, args.resume, &recorded) {
        (Some(k), _, _) => k,
        (None, false, _) => 1,
        // Re-run the last committed call (idempotent), then go on.
        (None, true, Some(p)) if p.ran_under(settings) => p.call,
        (None, true, Some(p)) => bail!(
            "the interrupted replay of {task} ran with other settings ({}); resume it with those, or replay from the start",
            p.settings
        ),
        (None, true, None) => 1,
    };
    if args.in_place
        && !args.resume
        && let Some(p) = recorded.as_ref().filter(|p| p.ran_under(settings))
    {
        let p = p.call;
        ui.note(format!(
            "note: calls 1 to {p} of {task} already ran in place on this store; running them again \
             restores what later calls stored, so their rows can differ from a first run's \
             (without --in-place a replay starts from a scratch copy; --resume goes on from call {p})"
        ));
    }
    Ok(from)
}

/// Refuse a `--save` name the task has already taken (without `--force`)
/// and create the `--views` directory, before anything runs.
fn prepare_outputs(store: &Store, args: &ReplayArgs, task: &str) -> Result<()> {
    if let Some(name) = &args.save
        && !args.force
        && store.reader().run(task, name)?.is_some()
    {
        return Err(hinted(
            format!("task {task} already has a run named {name:?}"),
            "pass --force to replace it or pick another name",
        ));
    }
    if let Some(dir) = &args.views {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    Ok(())
}

/// Save the run's rows and views under its name.
fn save_run(store: &mut Store, ui: &mut Ui, info: &RunInfo, saved: &[RunStep]) -> Result<()> {
    store.transaction(|tx| tx.save_run(info, saved))?;
    ui.note(format!(
        "saved as run {:?} ({})",
        info.name,
        plural(saved.len(), "call")
    ));
    Ok(())
}

/// The human timeline's end: the statuses, the totals, the worst call's
/// probes and the model summarizer's report.
fn print_summary(
    ui: &mut Ui,
    statuses: &StatusCounts,
    totals: &Totals,
    run_prices: &RunPrices,
    worst: Option<Worst>,
    llm: Option<&LlmReport>,
) -> Result<()> {
    print_statuses(ui, statuses)?;
    print_totals(ui, totals, run_prices)?;
    if let Some(w) = worst {
        writeln!(
            ui.out,
            "probes: worst call {}: critical kept {} ({} lost) · all kept {}",
            w.call,
            percent(w.critical_kept_permille),
            w.critical_lost,
            percent(w.kept_permille)
        )?;
    }
    for l in llm.iter().flat_map(|r| r.human()) {
        writeln!(ui.out, "{l}")?;
    }
    Ok(())
}

/// How many replayed calls ended in each status.
#[derive(Debug, Default)]
struct StatusCounts {
    ok: u32,
    over_trigger: u32,
    breakthrough: u32,
    over_window: u32,
}

impl StatusCounts {
    fn add(&mut self, s: Status) {
        match s {
            Status::Ok => self.ok += 1,
            Status::OverTrigger => self.over_trigger += 1,
            Status::Breakthrough => self.breakthrough += 1,
            Status::OverWindow => self.over_window += 1,
        }
    }
}

/// Written atomically: a killed replay leaves whole views or none.
fn write_view(dir: &Path, step: u32, bytes: &[u8]) -> Result<()> {
    write_atomic(&dir.join(format!("call-{step:04}.json")), bytes, "")
}

fn header(
    ui: &mut Ui,
    task: &str,
    run: &RunBudget,
    overhead: Option<u64>,
    calls: u32,
    probes: bool,
) -> Result<()> {
    let b = &run.budget;
    let window = match run.window_words() {
        Some(w) => format!("{} ({w})", b.window),
        None => b.window.to_string(),
    };
    ui.line(
        style::BOLD,
        &format!(
            "replay · task {task} · {} · window {window} · w_eff {} · trigger {} · stop {} · protect {}",
            plural(calls, "call"),
            b.w_eff(),
            b.trigger(),
            b.stop(),
            plural(b.protect_recent_steps, "step")
        ),
    )?;
    if let Some(w) = overhead_warning(overhead, b) {
        ui.line(style::YELLOW, &w)?;
    }
    ui.line(
        style::DIM,
        "BEFORE, AFTER, RAW_TOKENS: predicted prompt tokens (recorded usage − removed + added, estimates scaled; basis and ratio in --json); RECORDED: the transcript's usage; CACHE_*: estimated tokens; BREAK: the view does not extend the call before's",
    )?;
    let columns = format!(
        " CALL  TURN   BEFORE →    AFTER  RECORDED  STATUS        {:<w$} SHRUNK DROP FOLDED  CACHE_READ CACHE_WRITE BREAK   RAW_TOKENS  VIEW",
        "TIERS",
        w = tiers_width()
    );
    let probe_columns = if probes {
        "            CRIT    ALL"
    } else {
        ""
    };
    ui.line(style::DIM, &format!("{columns}{probe_columns}"))?;
    Ok(())
}

/// The TIERS column's width: the longest list one call can fire (④ never
/// follows a fold by ②, so shrink, breakthrough_shrink, breakthrough_floor).
fn tiers_width() -> usize {
    Tier::list(&[
        Tier::Shrink,
        Tier::BreakthroughShrink,
        Tier::BreakthroughFloor,
    ])
    .len()
}

fn print_row(ui: &mut Ui, r: &StepRow, score: Option<&CallScore>) -> Result<()> {
    let tiers = format!("{:<w$}", Tier::list(&r.tiers_fired), w = tiers_width());
    let tiers = paint_if(ui.color, !r.tiers_fired.is_empty(), style::CYAN, tiers);
    let status = paint_status(ui.color, r.status, &format!("{:<12}", r.status.name()));
    write!(
        ui.out,
        "{:>5} {:>5} {:>8} → {:>8} {:>9}  {status}  {} {:>6} {:>4} {:>6} {:>11} {:>11} {:>5} {:>12}  {}",
        r.call,
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
        if r.prefix_breaks > 0 { "yes" } else { "-" },
        r.raw_tokens,
        &r.view_hash[..12]
    )?;
    if let Some(c) = score {
        let crit = format!("{:>6}", percent(c.critical_kept_permille));
        let crit = paint_if(ui.color, c.critical_lost > 0, style::ERROR, crit);
        write!(ui.out, "  {crit} {:>6}", percent(c.kept_permille))?;
    }
    writeln!(ui.out)?;
    Ok(())
}

/// `status: 14 ok · 2 over_trigger · 3 breakthrough · 1 over_window`.
fn print_statuses(ui: &mut Ui, s: &StatusCounts) -> Result<()> {
    let counts = [
        (Status::Ok, s.ok),
        (Status::OverTrigger, s.over_trigger),
        (Status::Breakthrough, s.breakthrough),
        (Status::OverWindow, s.over_window),
    ];
    let parts: Vec<String> = counts
        .iter()
        .map(|&(status, n)| {
            let text = format!("{n} {}", status.name());
            if n == 0 {
                text
            } else {
                paint_status(ui.color, status, &text)
            }
        })
        .collect();
    let tail = if s.over_window > 0 {
        " (over the window: a provider would refuse those calls; exit status 1)"
    } else {
        ""
    };
    writeln!(ui.out, "status: {}{tail}", parts.join(" · "))?;
    Ok(())
}

fn print_totals(ui: &mut Ui, t: &Totals, run: &RunPrices) -> Result<()> {
    let p = &run.prices;
    writeln!(
        ui.out,
        "totals over {} (estimated tokens, both histories on the same basis; USD per million, {}: input {}, cache write {}, cache read {}, output {}; cache lifetime {}: {} after a longer pause read nothing):",
        plural(t.calls, "call"),
        run.words(),
        p.input.rate(),
        p.cache_write.rate(),
        p.cache_read.rate(),
        p.output.rate(),
        run.cache_ttl.name(),
        plural(t.cache_expired_calls, "call"),
    )?;
    for (name, c) in [("compacted", &t.compacted), ("raw", &t.raw)] {
        writeln!(
            ui.out,
            "  {name:<9} {:>12} prompt · {:>12} cache read · {:>11} cache write · ${} with cache · ${} without",
            c.prompt_tokens,
            c.cache_read_tokens,
            c.cache_write_tokens,
            c.cost_cached_usd.dollars(),
            c.cost_uncached_usd.dollars()
        )?;
    }
    writeln!(
        ui.out,
        "  output    {:>12} recorded tokens · ${} (the same under both histories)",
        t.output_tokens,
        t.cost_output_usd.dollars()
    )?;
    writeln!(
        ui.out,
        "  prefix breaks: {} of {} (compacted views that do not extend the call before's; the raw history has none)",
        t.prefix_breaks,
        plural(t.calls, "call")
    )?;
    Ok(())
}

/// A JSON object written as it is made: the keys before an array first,
/// the array's items as they come, the keys after it at the end. The bytes
/// are those of the whole object serialised at once (`serde_json::Map`
/// keeps its keys sorted), and no item is held once it is written.
struct JsonDocument {
    key: &'static str,
    items: u64,
}

impl JsonDocument {
    /// Write the keys of `head` (each must sort before `key`) and open the
    /// array under `key`.
    fn open<const N: usize>(
        out: &mut dyn Write,
        head: [(&str, serde_json::Value); N],
        key: &'static str,
    ) -> Result<JsonDocument> {
        let head: serde_json::Map<String, serde_json::Value> =
            head.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        if let Some(k) = head.keys().find(|k| k.as_str() >= key) {
            bail!("internal: the key {k:?} does not sort before {key:?}");
        }
        // `{"a":1,"b":2}` less its closing brace, then `,"key":[`.
        let text = serde_json::to_string(&head)?;
        let mut open = text[..text.len() - 1].to_string();
        if !head.is_empty() {
            open.push(',');
        }
        open.push_str(&serde_json::to_string(key)?);
        open.push_str(":[");
        out.write_all(open.as_bytes())?;
        Ok(JsonDocument { key, items: 0 })
    }

    fn item(&mut self, out: &mut dyn Write, v: &serde_json::Value) -> Result<()> {
        let text = serde_json::to_string(v)?;
        if self.items > 0 {
            out.write_all(b",")?;
        }
        out.write_all(text.as_bytes())?;
        self.items += 1;
        Ok(())
    }

    /// Close the array, write the keys of `tail` (each must sort after the
    /// array's) and end the line.
    fn close(self, out: &mut dyn Write, tail: serde_json::Value) -> Result<()> {
        let serde_json::Value::Object(tail) = tail else {
            bail!("internal: the end of the document is not an object");
        };
        if let Some(k) = tail.keys().find(|k| k.as_str() <= self.key) {
            bail!("internal: the key {k:?} does not sort after {:?}", self.key);
        }
        // `{"x":1,"y":2}` less its opening brace, after `],`.
        let text = serde_json::to_string(&tail)?;
        match tail.is_empty() {
            true => out.write_all(b"]}")?,
            false => {
                out.write_all(b"],")?;
                out.write_all(&text.as_bytes()[1..])?;
            }
        }
        out.write_all(b"\n")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streamed document is the whole object serialised at once, with
    /// no item, one, or several.
    #[test]
    fn a_streamed_document_has_the_bytes_of_the_whole_object() {
        for n in [0, 1, 3] {
            let items: Vec<serde_json::Value> = (0..n)
                .map(|i| json!({"z": i, "a": format!("<{i}>\"")}))
                .collect();
            let mut out: Vec<u8> = Vec::new();
            let mut d =
                JsonDocument::open(&mut out, [("budget", json!({"w": 1, "b": [2]}))], "calls")
                    .unwrap();
            for v in &items {
                d.item(&mut out, v).unwrap();
            }
            let tail = json!({"task": "t", "totals": {"calls": n}, "schema": "s/1"});
            d.close(&mut out, tail.clone()).unwrap();
            let mut whole = tail;
            whole["budget"] = json!({"w": 1, "b": [2]});
            whole["calls"] = json!(items);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("{}\n", serde_json::to_string(&whole).unwrap())
            );
        }
        let mut out: Vec<u8> = Vec::new();
        assert!(JsonDocument::open(&mut out, [("task", json!(1))], "calls").is_err());
        let d = JsonDocument::open(&mut out, [], "calls").unwrap();
        assert!(d.close(&mut out, json!({"budget": 1})).is_err());
    }
}
