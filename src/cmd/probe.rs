//! `compactor probe`: fidelity as a number. Replays a task to a call and
//! scores that call's view with probes read from the raw record (see
//! `crate::probe`): per category passed / recoverable / lost, and the lost
//! probes named. Every call up to it is scored too, for the worst one.

use std::io::Write;

use anyhow::{Result, bail};
use clap::Args;
use serde_json::json;

use super::Ui;
use super::args::{BudgetArgs, RunTarget};
use super::exit::Outcome;
use super::style::{self, paint_if};
use super::summarizer::summarizer_of;
use super::target::{Resolved, scratch_replay};
use super::words::{noun_for, plural};
use crate::engine::{Status, Tier};
use crate::hooks::compare::{Compared, before_call, compare, sent_view};
use crate::model::{Kind, Message};
use crate::probe::precision::Precision;
use crate::probe::{
    Category, Evaluation, ProbeWorker, Worst, evaluate_with_precision, extract, percent,
};
use crate::session::run::ReplayOptions;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor probe --task latest --window 32000\n  compactor probe session.jsonl --at 40 --json\n  compactor probe session.jsonl --window 32000 --fail-on-loss"
)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub run: RunTarget,

    /// The call whose view is scored (default: the last call).
    #[arg(long, value_name = "CALL")]
    pub at: Option<u32>,

    /// Score what the original agent sent instead of compactor's view: the
    /// recorded history since the agent's last own compaction summary.
    #[arg(long)]
    pub recorded: bool,

    /// Print one JSON object: {"categories":{...},"critical_lost":N,"lost":[...],...}.
    #[arg(long)]
    pub json: bool,

    /// Exit 1 when a critical probe (ask, constraint, deliverable) is lost,
    /// or when a summary line of the view is misleading (contradicts the record).
    #[arg(long)]
    pub fail_on_loss: bool,
}

pub fn run(store: &mut crate::store::Store, ui: &mut Ui, args: &ProbeArgs) -> Result<Outcome> {
    let r = args.run.replayable(store, ui, "probe")?;
    let (budget, task, index, calls) = (r.budget, &r.task, &r.index, r.calls);
    let at = args.at.unwrap_or(calls);
    if !(1..=calls).contains(&at) {
        bail!("--at {at} is out of range: task {task} has calls 1..={calls}");
    }
    let compactions = store.reader().client_compactions(task)?;
    // The recorded view is read from the record whole; a replay reads it as it goes.
    let (rows, probes) = match args.recorded {
        true => {
            let rows = index.all_rows()?;
            let probes = extract(&rows);
            (rows, probes)
        }
        false => (Vec::new(), Vec::new()),
    };
    let (evaluation, precision, replayed, probe_count) = if args.recorded {
        let end = index.history_end(at);
        // What the client sent: its summary, and the Task Context a hook put back.
        let view = sent_view(&rows[..end], &compactions);
        let (evaluation, precision) = evaluate_with_precision(&probes, &view, &rows, end);
        (evaluation, precision, None, probes.len())
    } else {
        let scored = score_replay(store, ui, &r, &args.run.budget, at)?;
        let count = scored.probe_count;
        let (e, p) = (scored.evaluation.clone(), scored.precision.clone());
        (e, p, Some(scored), count)
    };
    let worst = replayed.as_ref().and_then(|r| r.worst.clone());
    if args.json {
        let mut v = serde_json::to_value(&evaluation)?;
        v["task"] = json!(task);
        v["call"] = json!(at);
        v["view"] = json!(if args.recorded {
            "recorded"
        } else {
            "compactor"
        });
        v["probes"] = json!(probe_count);
        v["budget"] = serde_json::to_value(budget)?;
        if let Some(r) = &replayed {
            v["status"] = serde_json::to_value(r.status)?;
            v["tiers_fired"] = serde_json::to_value(&r.tiers)?;
            v["folds"] = json!(r.folds);
            v["tokens_after"] = json!(r.tokens_after);
            v["raw_tokens"] = json!(r.raw_tokens);
        }
        if let Some(w) = &worst {
            v["worst_call"] = serde_json::to_value(w)?;
        }
        v["misleading"] = json!(precision.misleading.len());
        v["misleading_lines"] = serde_json::to_value(&precision.misleading)?;
        v["abandoned_judged"] = json!(precision.abandoned_judged);
        v["abandoned_lost"] = json!(precision.abandoned_lost);
        if let Some(r) = &replayed {
            v["misleading_calls"] = json!(r.misleading_calls);
            if let Some((call, p)) = &r.most_misleading {
                v["most_misleading_call"] = json!({
                    "call": call,
                    "misleading": p.misleading.len(),
                    "misleading_lines": p.misleading,
                });
            }
        }
        ui.json_kind("probe", &v)?;
    } else {
        let what = match &replayed {
            Some(r) => format!(
                "compactor's view · {} · tiers {} · {} · {} of {} raw {}",
                r.status.name(),
                Tier::list(&r.tiers),
                plural(r.folds, "fold"),
                r.tokens_after,
                r.raw_tokens,
                noun_for(r.raw_tokens, "token")
            ),
            None => {
                let end = index.history_end(at);
                match rows[..end].iter().rfind(|m| m.kind == Kind::CompactSummary) {
                    Some(m) => format!(
                        "the recorded history since the agent's own compaction (line {})",
                        m.line
                    ),
                    None => "the recorded history (the agent did not compact it before this call)"
                        .to_string(),
                }
            }
        };
        print_human(ui, task, at, &what, &evaluation, worst.as_ref())?;
        print_precision(ui, at, &precision, replayed.as_ref())?;
        if args.recorded
            && let Some(c) = before_call(&compare(&probes, &compactions), at)
        {
            print_side_by_side(ui, c)?;
        }
    }
    let falls_short = evaluation.critical_lost > 0 || !precision.misleading.is_empty();
    Ok(if args.fail_on_loss && falls_short {
        Outcome::Differs
    } else {
        Outcome::Ok
    })
}

/// What a replay to `--at` found.
struct Replayed {
    evaluation: Evaluation,
    /// The scored call's precision.
    precision: Precision,
    /// Calls up to `--at` whose view carried a misleading line.
    misleading_calls: u32,
    /// The call up to `--at` whose view carried the most, and its precision.
    most_misleading: Option<(u32, Precision)>,
    status: Status,
    tiers: Vec<Tier>,
    /// The worst call up to `--at`.
    worst: Option<Worst>,
    /// How many probes the whole record yields.
    probe_count: usize,
    /// Calls whose ladder folded (floor or breakthrough floor).
    folds: u32,
    /// The scored call's view and the raw history it replaces, in tokens.
    tokens_after: u64,
    raw_tokens: u64,
}

/// Replays on a scratch copy up to `at`, scoring every call in the same
/// pass, its views judged on a thread beside the replay (see
/// `crate::probe::ProbeWorker`).
fn score_replay(
    store: &mut crate::store::Store,
    ui: &mut Ui,
    r: &Resolved,
    budget_args: &BudgetArgs,
    at: u32,
) -> Result<Replayed> {
    let summarizer = summarizer_of(budget_args, store)?;
    let mut pass = ProbeWorker::spawn(r.index.len());
    let rows = |range: std::ops::Range<usize>, f: &mut dyn FnMut(&Message)| {
        r.index.each_row(range.start, range.end, |_, m| f(m))
    };
    let mut folds = 0;
    let mut last: Option<(Status, Vec<Tier>, u64, u64)> = None;
    let opts = ReplayOptions::from_start(at, crate::session::cost::Prices::default());
    scratch_replay(
        store,
        ui,
        r,
        &summarizer,
        &opts,
        "probing {wide_bar} {pos}/{len} calls",
        |row, out| {
            let history_rows = r.index.history_end(row.call);
            pass.score(
                row.call,
                (&out.view, out.shared_blocks),
                history_rows,
                row.call == at,
                rows,
            )?;
            if row
                .tiers_fired
                .iter()
                .any(|t| matches!(t, Tier::Floor | Tier::BreakthroughFloor))
            {
                folds += 1;
            }
            if row.call == at {
                let t = row.tiers_fired.clone();
                last = Some((row.status, t, row.tokens_after, row.raw_tokens));
            }
            Ok(())
        },
    )?;
    summarizer.note(ui);
    // The probes of the rows past `--at` count too.
    let judge = pass.finish(rows, |_, _| {})?;
    let (status, tiers, tokens_after, raw_tokens) = last.expect("the replay reaches --at");
    Ok(Replayed {
        evaluation: judge.kept().cloned().expect("the view at --at is judged"),
        precision: judge.kept_precision().cloned().unwrap_or_default(),
        misleading_calls: judge.misleading_calls(),
        most_misleading: judge.most_misleading().map(|(k, p)| (k, p.clone())),
        status,
        tiers,
        worst: judge.worst().map(|(k, e)| Worst::of(k, e)),
        probe_count: judge.probes().len(),
        folds,
        tokens_after,
        raw_tokens,
    })
}

/// `what` names the view scored: compactor's, or the recorded one.
fn print_human(
    ui: &mut Ui,
    task: &str,
    at: u32,
    what: &str,
    e: &Evaluation,
    worst: Option<&Worst>,
) -> Result<()> {
    ui.line(
        style::BOLD,
        &format!("probe · task {task} · call {at} · {what}"),
    )?;
    ui.line(
        style::DIM,
        "CATEGORY      CRITICAL  PASSED  RECOVERABLE  LOST",
    )?;
    for c in Category::ALL {
        let n = e.categories[c.name()];
        let lost = format!("{:>4}", n.lost);
        let lost = paint_if(ui.color, n.lost > 0 && c.critical(), style::ERROR, lost);
        writeln!(
            ui.out,
            "{:<12}  {:<8}  {:>6}  {:>11}  {}",
            c.name(),
            if c.critical() { "yes" } else { "no" },
            n.passed,
            n.recoverable,
            lost
        )?;
    }
    writeln!(
        ui.out,
        "critical kept {} ({} lost of {}) · all kept {} of {} judged",
        percent(e.critical_kept_permille()),
        e.critical_lost,
        e.critical_judged,
        percent(e.kept_permille()),
        e.judged
    )?;
    if let Some(w) = worst {
        writeln!(
            ui.out,
            "worst call {}: critical kept {} ({} lost) · all kept {}",
            w.call,
            percent(w.critical_kept_permille),
            w.critical_lost,
            percent(w.kept_permille)
        )?;
    }
    if !e.lost.is_empty() {
        writeln!(ui.out, "lost:")?;
        for l in &e.lost {
            let clipped = clip(&l.expected, 120);
            let text = crate::cmd::visible::visible(&clipped);
            writeln!(
                ui.out,
                "  {}{:<11} line {:<6} {}  {}",
                if l.critical { "!" } else { " " },
                l.category.name(),
                l.line,
                l.source,
                text
            )?;
        }
    }
    Ok(())
}

/// The summary lines that contradict the record, and the abandoned
/// approaches kept; with a replay, how many of its views carried a
/// misleading line and which carried the most.
fn print_precision(ui: &mut Ui, at: u32, p: &Precision, replayed: Option<&Replayed>) -> Result<()> {
    let misleading = format!("{}", p.misleading.len());
    let misleading = paint_if(ui.color, !p.misleading.is_empty(), style::ERROR, misleading);
    let across = match replayed {
        Some(r) => {
            let most = match &r.most_misleading {
                Some((call, m)) => format!(", the most at call {call}: {}", m.misleading.len()),
                None => String::new(),
            };
            format!(
                " ({} up to it carried one{most})",
                plural(r.misleading_calls, "view")
            )
        }
        None => String::new(),
    };
    writeln!(
        ui.out,
        "misleading summary lines at call {at}: {misleading}{across} · abandoned approaches kept {} of {}",
        p.abandoned_judged - p.abandoned_lost,
        p.abandoned_judged
    )?;
    let listed = match replayed.and_then(|r| r.most_misleading.as_ref()) {
        Some((call, worst)) if p.misleading.is_empty() => {
            writeln!(ui.out, "misleading at call {call}:")?;
            &worst.misleading
        }
        _ => {
            if !p.misleading.is_empty() {
                writeln!(ui.out, "misleading:")?;
            }
            &p.misleading
        }
    };
    {
        for m in listed {
            let text = crate::cmd::visible::visible(&clip(&m.text, 120)).into_owned();
            writeln!(
                ui.out,
                "  !{:<20} {:<11} {}  — {}",
                m.kind.name(),
                m.section,
                text,
                m.why
            )?;
        }
    }
    Ok(())
}

/// The client's own summary and compactor's Task Context of the compaction
/// the scored call follows, scored with the probes of what they replaced.
fn print_side_by_side(ui: &mut Ui, c: &Compared) -> Result<()> {
    let client = crate::hooks::Client::parse(&c.client).map_or(c.client.as_str(), |k| k.title());
    writeln!(ui.out)?;
    ui.line(
        style::BOLD,
        &format!(
            "the client's own compaction after call {} ({}, {}), scored on the {} before it:",
            c.after_call,
            client,
            c.trigger.as_deref().unwrap_or("trigger unknown"),
            plural(c.history_rows, "row")
        ),
    )?;
    ui.line(
        style::DIM,
        "SUMMARY                   CRITICAL KEPT          ALL KEPT",
    )?;
    let sides = [
        (format!("{client}'s summary"), &c.client_summary),
        ("compactor's Task Context".to_string(), &c.task_context),
    ];
    for (who, side) in &sides {
        match side {
            Some(s) => {
                let e = &s.evaluation;
                writeln!(
                    ui.out,
                    "{who:<24}  {:<21}  {} ({} of {})",
                    format!(
                        "{} ({} of {})",
                        percent(e.critical_kept_permille()),
                        e.critical_judged - e.critical_lost,
                        e.critical_judged
                    ),
                    percent(e.kept_permille()),
                    e.passed + e.recoverable,
                    e.judged
                )?;
            }
            None => writeln!(ui.out, "{who:<24}  not recorded")?,
        }
    }
    for (who, side) in &sides {
        let Some(s) = side else { continue };
        let critical: Vec<_> = s.evaluation.lost.iter().filter(|l| l.critical).collect();
        if critical.is_empty() {
            continue;
        }
        writeln!(ui.out, "critical probes {who} lost:")?;
        for l in critical {
            let text = crate::cmd::visible::visible(&clip(&l.expected, 120)).into_owned();
            writeln!(
                ui.out,
                "  !{:<11} line {:<6} {}",
                l.category.name(),
                l.line,
                text
            )?;
        }
    }
    Ok(())
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}
