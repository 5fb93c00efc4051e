//! The human tables: one per session, sorted by cost, with its
//! recommendation on its own line; the totals over sessions after them.

use std::io::Write;

use anyhow::Result;

use super::super::Ui;
use super::super::style::{self, paint_if};
use super::super::words::plural;
use crate::model::decimal::Micros;
use crate::probe::percent;
use crate::sweep::mask::KEEP_OUTPUTS;
use crate::sweep::{
    GroupTotal, PolicyKey, Row, RowKind, Saving, SweepSummary, Varying, key_label, label,
    recommend, shared_label, signed_dollars, signed_percent,
};

const HEAD: &str = "     COST    SAVED       PROMPT       PEAK  OVER_WINDOW  FOLDS  BREAKS  CRIT_LOST  WORST_CRIT  WORST_ALL  RUN";

/// What the columns mean, once before the first table.
pub(super) fn legend(ui: &mut Ui) -> Result<()> {
    ui.line(
        style::DIM,
        "COST: the prompt through a prompt cache plus the output, in estimated tokens as replay's totals count them; SAVED: against the client's own sends (recorded) priced the same way; PEAK: the largest prompt of a call; BREAKS: calls whose view does not extend the call before's (the cache written again); WORST_*: probes kept at the worst call (critical: asks, rules, files written); mask: observation masking, the literature's cheap baseline",
    )?;
    writeln!(ui.out)?;
    Ok(())
}

/// One session's table: its rows sorted by cost (the grid's order on a
/// tie), then its recommendation.
pub(super) fn session(ui: &mut Ui, rows: &[&Row]) -> Result<()> {
    let Some(first) = rows.first() else {
        return Ok(());
    };
    let keys: Vec<PolicyKey> = policy_keys(rows);
    let policies = rows.iter().filter(|r| r.kind == RowKind::Policy).count();
    let title = format!(
        "sweep · task {} · {} · {} · {}",
        first.session,
        first.model.as_deref().unwrap_or("model unknown"),
        plural(first.calls, "call"),
        plural(policies, "policy")
    );
    let varying = heading(ui, &title, &keys, HEAD)?;
    let recorded = rows
        .iter()
        .find(|r| r.kind == RowKind::Recorded)
        .map(|r| r.comparable_cost());
    let rec = recommend(rows);
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (rows[i].comparable_cost(), i));
    for i in order {
        let r = rows[i];
        let chosen = rec.as_ref().is_some_and(|c| c.row == i);
        print_row(ui, r, recorded, &varying, chosen)?;
    }
    match &rec {
        Some(c) if c.keeps_recorded => {
            let kept = rows[c.row];
            let line = format!(
                "recommended: keep what the client does (recorded): ${}; no policy is cheaper with every critical probe kept and no call over the window{}",
                Micros(c.cost_micros).dollars(),
                fidelity_words(
                    kept.worst.filter(|w| w.critical_lost > 0).map(|w| format!(
                        "{} at their worst call",
                        plural(w.critical_lost, "critical probe")
                    )),
                    c.dearer_fit
                        .map(|i| (label_of(rows[i], &varying), rows[i].cost_micros)),
                    c.cost_micros
                ),
            );
            ui.line(style::GREEN, &line)?;
        }
        Some(c) => {
            let r = rows[c.row];
            let what = label_of(r, &varying);
            let line = format!(
                "recommended: {what}: ${}{}",
                Micros(c.cost_micros).dollars(),
                saving_words(c.saving, "the client's own"),
            );
            ui.line(style::GREEN, &line)?;
        }
        None => {}
    }
    if !rows.iter().any(|r| r.eligible()) {
        let line = match closest(rows) {
            Some(r) => format!(
                "no policy keeps every critical probe at every call with no call over the window; the closest: {} (${}, {} lost at its worst call, {} over the window)",
                label_of(r, &varying),
                Micros(r.cost_micros).dollars(),
                r.worst.map_or(0, |w| w.critical_lost),
                plural(r.over_window_calls.unwrap_or(0), "call"),
            ),
            None => "no policy ran".to_string(),
        };
        ui.line(style::YELLOW, &line)?;
    }
    writeln!(ui.out)?;
    Ok(())
}

/// A table's title in bold, the settings every policy shares, and the
/// column heads; returns which settings vary (what a row's label names).
fn heading(ui: &mut Ui, title: &str, keys: &[PolicyKey], head: &str) -> Result<Varying> {
    let varying = Varying::of(keys);
    ui.line(style::BOLD, title)?;
    if let Some(k) = keys.first() {
        let shared = shared_label(k, &varying);
        if !shared.is_empty() {
            ui.line(style::DIM, &format!("every policy: {shared}"))?;
        }
    }
    ui.line(style::DIM, head)?;
    Ok(varying)
}

/// The SAVED cell: the cost against the recorded sends' (`-` for the
/// recorded row itself, or when nothing was recorded to compare with).
fn saved_cell(kind: RowKind, cost_micros: u64, recorded: Option<u64>) -> String {
    match (kind, recorded) {
        (RowKind::Recorded, _) | (_, None) => "-".to_string(),
        (_, Some(rec)) => Saving::of(cost_micros, rec)
            .saving_permille
            .map_or("-".to_string(), signed_percent),
    }
}

fn policy_keys(rows: &[&Row]) -> Vec<PolicyKey> {
    rows.iter()
        .filter(|r| r.kind == RowKind::Policy)
        .filter_map(|r| r.policy.as_ref().map(|p| p.key()))
        .collect()
}

/// The policy that comes nearest: fewest calls over the window, then
/// fewest critical probes lost, then the cheapest.
fn closest<'a>(rows: &[&'a Row]) -> Option<&'a Row> {
    rows.iter()
        .copied()
        .enumerate()
        .filter(|(_, r)| r.kind == RowKind::Policy)
        .min_by_key(|(i, r)| {
            (
                r.over_window_calls.unwrap_or(0),
                r.worst.map_or(0, |w| w.critical_lost),
                r.cost_micros,
                *i,
            )
        })
        .map(|(_, r)| r)
}

fn label_of(r: &Row, varying: &Varying) -> String {
    label(r.policy.as_ref().expect("a policy row"), Some(varying))
}

/// What keeping the client's own sends gives up when its compactions lost
/// critical probes (`lost`: how, in words; `None` when none was lost): the
/// cheapest policy that keeps them all, for more (`fit`: its label and
/// cost), or that none does. `kept`: the cost of the sends kept.
fn fidelity_words(lost: Option<String>, fit: Option<(String, u64)>, kept: u64) -> String {
    let Some(lost) = lost else {
        return String::new();
    };
    match fit {
        Some((what, cost)) => format!(
            " (the client's own sends lose {lost}; {what} keeps every one for ${}, {} more)",
            Micros(cost).dollars(),
            signed_percent(Saving::of(cost, kept).saving_permille.unwrap_or(0).abs())
        ),
        None => format!(
            " (the client's own sends lose {lost}, and no policy keeps every one within the window)"
        ),
    }
}

/// `, $1.10 (25.6%) less than the client's own`, or more.
fn saving_words(s: Option<Saving>, against: &str) -> String {
    let Some(s) = s else {
        return format!(" ({against} recorded no usage to compare with)");
    };
    let pct = s
        .saving_permille
        .map(|p| format!(" ({})", signed_percent(p.abs())))
        .unwrap_or_default();
    if s.saving_micros >= 0 {
        format!(
            ", {}{pct} less than {against}",
            signed_dollars(s.saving_micros)
        )
    } else {
        format!(
            ", {}{pct} more than {against}",
            signed_dollars(-s.saving_micros)
        )
    }
}

fn print_row(
    ui: &mut Ui,
    r: &Row,
    recorded: Option<u64>,
    varying: &Varying,
    chosen: bool,
) -> Result<()> {
    let cost = format!("${}", Micros(r.comparable_cost()).dollars());
    let saved = saved_cell(r.kind, r.cost_micros, recorded);
    let prompt = r.estimated.map_or(r.prompt_tokens, |e| e.prompt_tokens);
    let dash = |v: Option<u32>| v.map_or("-".to_string(), |n| n.to_string());
    let over = format!("{:>11}", dash(r.over_window_calls));
    let over = paint_if(
        ui.color,
        r.over_window_calls.unwrap_or(0) > 0,
        style::ERROR,
        over,
    );
    let lost = format!("{:>9}", r.critical_lost);
    let lost = paint_if(ui.color, r.critical_lost > 0, style::ERROR, lost);
    let (crit, all) = r.worst.map_or(("-".to_string(), "-".to_string()), |w| {
        (percent(w.critical_kept_permille), percent(w.kept_permille))
    });
    let crit = format!("{crit:>10}");
    let crit = paint_if(ui.color, r.loses_critical(), style::ERROR, crit);
    let run = run_words(r, varying);
    let run = paint_if(ui.color, chosen, style::GREEN, run);
    writeln!(
        ui.out,
        "{cost:>9} {saved:>8} {prompt:>12} {:>10}  {over}  {:>5}  {:>6}  {lost}  {crit}  {all:>9}  {run}",
        r.peak_tokens,
        dash(r.folds),
        r.prefix_breaks,
    )?;
    Ok(())
}

/// What a row ran, in words.
fn run_words(r: &Row, varying: &Varying) -> String {
    match (r.kind, &r.policy) {
        (RowKind::Policy, Some(p)) => label(p, Some(varying)),
        (RowKind::Trim, Some(p)) => format!(
            "trim: drop-oldest at window {} · reserve {} (history dropped at {})",
            p.window,
            p.output_reserved,
            plural(r.trimmed_calls.unwrap_or(0), "call")
        ),
        (RowKind::Mask, Some(p)) => format!(
            "mask: the last {KEEP_OUTPUTS} tool outputs kept, older ones a placeholder (at window {} · reserve {}; masked at {})",
            p.window,
            p.output_reserved,
            plural(r.trimmed_calls.unwrap_or(0), "call")
        ),
        _ => format!(
            "recorded: the client's own sends ({}; paid ${} by its usage, {} of {} calls with usage)",
            plural(r.folds.unwrap_or(0), "compaction"),
            Micros(r.cost_micros).dollars(),
            r.usage_calls.unwrap_or(0),
            r.calls
        ),
    }
}

const TOTAL_HEAD: &str =
    "     COST    SAVED      CALLS  OVER_WINDOW  BREAKS  CRIT_LOST  SESSIONS_LOSING  RUN";

/// The totals over sessions: each policy, trim window and the recordings
/// summed, sorted by cost, then the one recommendation.
pub(super) fn totals(ui: &mut Ui, s: &SweepSummary<'_>) -> Result<()> {
    let n = s.sessions.len();
    let keys: Vec<PolicyKey> = s.policies.iter().filter_map(|p| p.policy.clone()).collect();
    let title = format!(
        "totals · {} · {}",
        plural(n, "session"),
        plural(s.policies.len(), "policy")
    );
    let varying = heading(ui, &title, &keys, TOTAL_HEAD)?;
    let recorded = s
        .recorded
        .as_ref()
        .filter(|r| r.sessions as usize == n)
        .map(GroupTotal::comparable_cost);
    for (g, chosen) in s.ranked() {
        let cost = format!("${}", Micros(g.comparable_cost()).dollars());
        let saved = saved_cell(g.kind, g.cost_micros, recorded);
        let over = g
            .over_window_calls
            .map_or("-".to_string(), |n| n.to_string());
        let losing = format!("{} of {}", g.sessions_losing_critical, g.sessions);
        let run = match (g.kind, &g.policy) {
            (RowKind::Policy, Some(k)) => key_label(k, Some(&varying)),
            (RowKind::Trim, Some(k)) => format!("trim: drop-oldest at {}", key_label(k, None)),
            (RowKind::Mask, Some(k)) => format!(
                "mask: the last {KEEP_OUTPUTS} tool outputs kept, at {}",
                key_label(k, None)
            ),
            _ => format!(
                "recorded: the clients' own sends (paid ${} by their usage)",
                Micros(g.cost_micros).dollars()
            ),
        };
        let run = paint_if(ui.color, chosen, style::GREEN, run);
        writeln!(
            ui.out,
            "{cost:>9} {saved:>8} {:>10}  {over:>11}  {:>6}  {:>9}  {losing:>15}  {run}",
            g.calls, g.prefix_breaks, g.critical_lost
        )?;
    }
    match &s.recommendation {
        Some(r) if r.policy.is_none() => {
            let losing = s
                .recorded
                .as_ref()
                .map_or(0, |g| g.sessions_losing_critical);
            ui.line(
                style::GREEN,
                &format!(
                    "recommended for all {}: keep what the clients do (recorded): ${}; no policy is cheaper with every critical probe kept and no call over the window in every session{}",
                    plural(n, "session"),
                    Micros(r.cost_micros).dollars(),
                    fidelity_words(
                        (losing > 0).then(|| format!("critical probes in {}", plural(losing, "session"))),
                        r.dearer_fit.map(|i| {
                            let g = &s.policies[i];
                            let k = g.policy.as_ref().expect("a policy total");
                            (key_label(k, Some(&varying)), g.cost_micros)
                        }),
                        r.cost_micros
                    ),
                ),
            )?
        }
        Some(r) => {
            let k = r
                .policy
                .and_then(|i| s.policies[i].policy.as_ref())
                .expect("a policy total");
            ui.line(
                style::GREEN,
                &format!(
                    "recommended for all {}: {}: ${}{}",
                    plural(n, "session"),
                    key_label(k, Some(&varying)),
                    Micros(r.cost_micros).dollars(),
                    saving_words(r.saving, "the clients' own")
                ),
            )?;
        }
        None => {}
    }
    if !s.has_fit_policy() {
        ui.line(
            style::YELLOW,
            &format!(
                "no policy keeps every critical probe at every call with no call over the window in all {}",
                plural(n, "session")
            ),
        )?;
    }
    Ok(())
}
