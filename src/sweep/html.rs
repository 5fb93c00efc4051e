//! `sweep -o sweep.html`: one self-contained page, in the style of
//! `report`'s. Per session a scatter of cost against fidelity (the probes
//! kept at the worst call) with the Pareto front marked and the recording,
//! the trims and the masks as reference points, and the session's sortable table;
//! the totals over sessions first. CSS and script are inline and the chart
//! is SVG with integer coordinates: no request leaves the page, and the
//! same rows give the same bytes.

use std::fmt::Write;

use crate::htmlreport::svg::nice_max;
use crate::htmlreport::{esc, thousands};
use crate::model::decimal::Micros;
use crate::probe::percent;

use super::mask::KEEP_OUTPUTS;
use super::{
    GroupTotal, PolicyKey, Row, RowKind, Saving, SweepSummary, SweptSession, Varying, key_label,
    label, pareto_front, shared_label, signed_dollars, signed_percent,
};

const CSS: &str = include_str!("../htmlreport/report.css");
const SWEEP_CSS: &str = include_str!("sweep.css");
const JS: &str = include_str!("sweep.js");

/// The page of a sweep's summary.
pub(crate) fn render(s: &SweepSummary<'_>, version: &str) -> String {
    let mut out = String::with_capacity(32 * 1024 + s.sessions.len() * 8 * 1024);
    let n = s.sessions.len();
    let policies = s.policies.len();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"compactor {}\">\n\
         <title>compactor sweep · {} · {}</title>\n<style>\n{CSS}{SWEEP_CSS}</style>\n</head>\n<body>\n",
        esc(version),
        counted(n as u64, "session"),
        counted(policies as u64, "policy")
    );
    let keys: Vec<PolicyKey> = s.policies.iter().filter_map(|p| p.policy.clone()).collect();
    let varying = Varying::of(&keys);
    let calls: u64 = s
        .recorded
        .as_ref()
        .map_or_else(|| s.policies.first().map_or(0, |p| p.calls), |r| r.calls);
    let shared = keys
        .first()
        .map(|k| shared_label(k, &varying))
        .unwrap_or_default();
    let _ = write!(
        out,
        "<header>\n<h1>Which compaction policy to use</h1>\n<dl class=\"meta\">\
         <dt>sessions</dt><dd>{} · {}</dd>\
         <dt>policies</dt><dd>{}{}</dd>\
         <dt>recommended</dt><dd>{}</dd>\
         <dt>cost</dt><dd>the prompt through a prompt cache plus the recorded output, at each session's model's prices, \
         in estimated tokens as <code>replay</code>'s totals count them; the recording is priced the same way from the views the \
         client sent (what it paid by its recorded usage is listed beside it)</dd>\
         <dt>fidelity</dt><dd>probes kept at the worst call, as <code>probe</code> scores them: the user's asks, rules and files \
         written are critical</dd>\
         <dt>compactor</dt><dd>{}</dd></dl>\n</header>\n",
        counted(n as u64, "session"),
        counted(calls, "model call"),
        counted(policies as u64, "policy"),
        if shared.is_empty() {
            String::new()
        } else {
            format!(" · every one: {}", esc(&shared))
        },
        total_recommendation(s, &varying),
        esc(version)
    );
    let mut section = 0;
    if n > 1 {
        section += 1;
        totals_section(&mut out, s, &varying, section);
    }
    for sess in &s.sessions {
        section += 1;
        session_section(&mut out, sess, section);
    }
    let _ = writeln!(
        out,
        "<footer>compactor {} · the same rows give the same file, byte for byte · \
         click a column's heading to sort by it</footer>",
        esc(version)
    );
    let _ = write!(out, "<script>\n{JS}</script>\n</body>\n</html>\n");
    out
}

fn total_recommendation(s: &SweepSummary<'_>, varying: &Varying) -> String {
    let n = s.sessions.len();
    let sessions = if n == 1 {
        "the session".to_string()
    } else {
        format!("all {}", counted(n as u64, "session"))
    };
    match &s.recommendation {
        Some(r) if r.policy.is_none() => format!(
            "<b>keep what the clients do</b> (recorded) for {sessions}: {}; no policy is cheaper with every critical probe kept and no call over the window{}",
            dollars(r.cost_micros),
            match (r.dearer_fit, s.recorded.as_ref()) {
                (Some(i), Some(g)) => format!(
                    " (the clients' own sends lose critical probes in {}; {} keeps every one for {})",
                    counted(u64::from(g.sessions_losing_critical), "session"),
                    s.policies[i]
                        .policy
                        .as_ref()
                        .map_or_else(String::new, |k| esc(&key_label(k, Some(varying)))),
                    dollars(s.policies[i].cost_micros)
                ),
                _ => String::new(),
            }
        ),
        Some(r) => {
            let k = r
                .policy
                .and_then(|i| s.policies[i].policy.as_ref())
                .expect("a policy");
            format!(
                "<b>{}</b> for {}: {}{}",
                esc(&key_label(k, Some(varying))),
                sessions,
                dollars(r.cost_micros),
                saving_words(r.saving, "the clients' own sends")
            )
        }
        None => "none: no policy keeps every critical probe at every call with no call over the window in every session"
            .to_string(),
    }
}

fn saving_words(s: Option<Saving>, against: &str) -> String {
    match s {
        None => format!(" ({against} recorded no usage)"),
        Some(s) => {
            let pct = s
                .saving_permille
                .map(|p| format!(" ({})", signed_percent(p.abs())))
                .unwrap_or_default();
            let (amount, dir) = if s.saving_micros >= 0 {
                (s.saving_micros, "less")
            } else {
                (-s.saving_micros, "more")
            };
            format!(", {}{pct} {dir} than {against}", signed_dollars(amount))
        }
    }
}

fn totals_section(out: &mut String, s: &SweepSummary<'_>, varying: &Varying, n: usize) {
    let sessions = s.sessions.len();
    let recorded = s
        .recorded
        .as_ref()
        .filter(|r| r.sessions as usize == sessions)
        .map(GroupTotal::comparable_cost);
    let _ = write!(
        out,
        "<section id=\"totals\">\n<h2><span class=\"n\">{n}</span> Totals over {}</h2>\n\
         <p class=\"lede\">Each policy summed over the sessions it ran on. The recommendation is the cheapest \
         policy that ran on every session with no call over the window and no critical probe lost at any call, \
         or the clients' own sends when none is cheaper at that fidelity.</p>\n\
         <table class=\"sortable sweep\"><thead><tr><th>run</th><th class=\"num\">cost</th><th class=\"num\">saved</th>\
         <th class=\"num\">calls</th><th class=\"num\">prompt tokens</th><th class=\"num\">over window</th>\
         <th class=\"num\" title=\"calls whose view does not extend the call before's\">prefix breaks</th>\
         <th class=\"num\">critical lost</th><th class=\"num\">sessions losing a critical probe</th></tr></thead><tbody>",
        counted(sessions as u64, "session")
    );
    for (g, chosen) in s.ranked() {
        let run = match (g.kind, &g.policy) {
            (RowKind::Policy, Some(k)) => esc(&key_label(k, Some(varying))),
            (RowKind::Trim, Some(k)) => {
                format!("trim: drop-oldest at {}", esc(&key_label(k, None)))
            }
            (RowKind::Mask, Some(k)) => format!(
                "mask: the last {KEEP_OUTPUTS} tool outputs at {}",
                esc(&key_label(k, None))
            ),
            _ => format!(
                "recorded: the clients' own sends (paid {} by their usage)",
                dollars(g.cost_micros)
            ),
        };
        let saved = match (g.kind, recorded) {
            (RowKind::Recorded, _) | (_, None) => None,
            (_, Some(rec)) => Saving::of(g.cost_micros, rec).saving_permille,
        };
        let _ = write!(
            out,
            "<tr class=\"{}{}\"><td>{run}</td>{}{}{}{}{}{}{}{}</tr>",
            g.kind.name(),
            if chosen { " chosen" } else { "" },
            money_cell(g.comparable_cost()),
            permille_cell(saved),
            num_cell(Some(g.calls)),
            num_cell(Some(g.prompt_tokens)),
            num_cell(g.over_window_calls),
            num_cell(Some(g.prefix_breaks)),
            num_cell(Some(g.critical_lost)),
            num_cell(Some(u64::from(g.sessions_losing_critical))),
        );
    }
    out.push_str("</tbody></table>\n</section>\n");
}

fn session_section(out: &mut String, s: &SweptSession<'_>, n: usize) {
    let rows = &s.rows;
    let Some(first) = rows.first() else {
        return;
    };
    let keys: Vec<PolicyKey> = rows
        .iter()
        .filter(|r| r.kind == RowKind::Policy)
        .filter_map(|r| r.policy.as_ref().map(|p| p.key()))
        .collect();
    let varying = Varying::of(&keys);
    let front = pareto_front(rows);
    let chosen = s.recommendation.as_ref().map(|r| r.row);
    let rec = match &s.recommendation {
        Some(r) if r.keeps_recorded => format!(
            "Recommended: <b>keep what the client does</b> (recorded): {}; no policy is cheaper with every critical probe kept and no call over the window{}.",
            dollars(r.cost_micros),
            match r.dearer_fit {
                Some(i) => format!(
                    " (the client's own sends lose a critical probe; {} keeps every one for {})",
                    esc(&label(
                        rows[i].policy.as_ref().expect("a policy"),
                        Some(&varying)
                    )),
                    dollars(rows[i].cost_micros)
                ),
                None => String::new(),
            }
        ),
        Some(r) => format!(
            "Recommended: <b>{}</b>: {}{}.",
            esc(&label(
                rows[r.row].policy.as_ref().expect("a policy"),
                Some(&varying)
            )),
            dollars(r.cost_micros),
            saving_words(r.saving, "the client's own sends")
        ),
        None => "No policy keeps every critical probe at every call with no call over the window."
            .to_string(),
    };
    let _ = write!(
        out,
        "<section id=\"session-{n}\" class=\"session\">\n<h2><span class=\"n\">{n}</span> task <code>{}</code> · {} · {}</h2>\n\
         <p class=\"lede\">{rec}</p>\n\
         <div class=\"legend\"><span class=\"p ok\">policy</span><span class=\"p lost\">policy losing a critical probe</span>\
         <span class=\"p over\">policy with calls over the window</span><span class=\"p front\">on the Pareto front</span>\
         <span class=\"p chosen\">recommended</span><span class=\"p recorded\">recorded: the client's own</span>\
         <span class=\"p trim\">trim: drop-oldest</span><span class=\"p mask\">mask: old tool outputs masked</span></div>\n\
         <div class=\"chartbox\">{}</div>\n",
        esc(&first.session),
        esc(first.model.as_deref().unwrap_or("model unknown")),
        counted(u64::from(first.calls), "call"),
        scatter(n, rows, &front, chosen, &varying)
    );
    let recorded = s.recorded().map(Row::comparable_cost);
    out.push_str(
        "<div class=\"wide\"><table class=\"sortable sweep\"><thead><tr><th>run</th><th class=\"num\">cost</th><th class=\"num\">saved</th>\
         <th class=\"num\">prompt</th><th class=\"num\">cache read</th><th class=\"num\">cache write</th>\
         <th class=\"num\">peak</th><th class=\"num\" title=\"calls over the window\">over window</th><th class=\"num\">folds</th>\
         <th class=\"num\" title=\"calls whose view does not extend the call before's\">prefix breaks</th>\
         <th class=\"num\" title=\"critical probes lost at the last call\">crit. lost</th>\
         <th class=\"num\" title=\"critical probes kept at the worst call\">worst: crit.</th>\
         <th class=\"num\" title=\"all probes kept at the worst call\">worst: all</th>\
         <th title=\"on the Pareto front\">front</th></tr></thead><tbody>",
    );
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (rows[i].comparable_cost(), i));
    for i in order {
        let r = rows[i];
        let (prompt, read, write) = match &r.estimated {
            Some(e) => (e.prompt_tokens, e.cache_read_tokens, e.cache_write_tokens),
            None => (r.prompt_tokens, r.cache_read_tokens, r.cache_write_tokens),
        };
        let saved = match (r.kind, recorded) {
            (RowKind::Recorded, _) | (_, None) => None,
            (_, Some(rec)) => Saving::of(r.cost_micros, rec).saving_permille,
        };
        let worst = r.worst;
        let _ = write!(
            out,
            "<tr class=\"{}{}\"><td>{}</td>{}{}{}{}{}{}{}{}{}{}{}{}<td>{}</td></tr>",
            r.kind.name(),
            if chosen == Some(i) { " chosen" } else { "" },
            run_words(r, &varying),
            money_cell(r.comparable_cost()),
            permille_cell(saved),
            num_cell(Some(prompt)),
            num_cell(Some(read)),
            num_cell(Some(write)),
            num_cell(Some(r.peak_tokens)),
            num_cell(r.over_window_calls.map(u64::from)),
            num_cell(r.folds.map(u64::from)),
            num_cell(Some(u64::from(r.prefix_breaks))),
            num_cell(Some(r.critical_lost)),
            kept_cell(worst.map(|w| w.critical_kept_permille)),
            kept_cell(worst.map(|w| w.kept_permille)),
            if front.contains(&i) { "✓" } else { "" }
        );
    }
    out.push_str("</tbody></table></div>\n</section>\n");
}

fn run_words(r: &Row, varying: &Varying) -> String {
    match (r.kind, &r.policy) {
        (RowKind::Policy, Some(p)) => esc(&label(p, Some(varying))),
        (RowKind::Trim, Some(p)) => format!(
            "trim at window {} · reserve {}",
            p.window, p.output_reserved
        ),
        (RowKind::Mask, Some(p)) => format!(
            "mask (last {KEEP_OUTPUTS} outputs) at window {} · reserve {}",
            p.window, p.output_reserved
        ),
        _ => format!(
            "recorded ({}; paid {})",
            counted(u64::from(r.folds.unwrap_or(0)), "compaction"),
            dollars(r.cost_micros)
        ),
    }
}

fn dollars(micros: u64) -> String {
    format!("${}", Micros(micros).dollars())
}

fn money_cell(micros: u64) -> String {
    format!(
        "<td class=\"num\" data-v=\"{micros}\">{}</td>",
        dollars(micros)
    )
}

fn num_cell(v: Option<u64>) -> String {
    match v {
        Some(v) => format!("<td class=\"num\" data-v=\"{v}\">{}</td>", thousands(v)),
        None => "<td class=\"num\" data-v=\"\">–</td>".to_string(),
    }
}

fn permille_cell(v: Option<i64>) -> String {
    match v {
        Some(v) => format!(
            "<td class=\"num\" data-v=\"{v}\">{}</td>",
            signed_percent(v)
        ),
        None => "<td class=\"num\" data-v=\"\">–</td>".to_string(),
    }
}

fn kept_cell(v: Option<u64>) -> String {
    match v {
        Some(v) => format!(
            "<td class=\"num{}\" data-v=\"{v}\">{}</td>",
            if v < 1000 { " short" } else { "" },
            percent(v)
        ),
        None => "<td class=\"num\" data-v=\"\">–</td>".to_string(),
    }
}

/// `1 call`, `12,000 calls`; `policy` → `policies`.
fn counted(n: u64, noun: &str) -> String {
    let plural = match (n, noun.strip_suffix('y')) {
        (1, _) => noun.to_string(),
        (_, Some(stem)) => format!("{stem}ies"),
        _ => format!("{noun}s"),
    };
    format!("{} {plural}", thousands(n))
}

const WIDTH: i64 = 1200;
const HEIGHT: i64 = 372;
const LEFT: i64 = 72;
const RIGHT: i64 = 1110;
const TOP: i64 = 40;
const BOTTOM: i64 = 320;

/// The cost axis: from a round value at or below the cheapest run to one at
/// or above the dearest, and its tick step, in micro-dollars.
fn cost_axis(lo: u64, hi: u64) -> (u64, u64, u64) {
    let span = (hi - lo).max(hi / 20).max(10);
    let (_, step) = nice_max(span);
    let step = step.max(1);
    let from = lo / step * step;
    let to = hi.div_ceil(step) * step;
    let to = if to == from { from + step } else { to };
    (from, to, step)
}

/// A point of the chart: where, what, and the runs drawn there.
struct Point {
    x: i64,
    y: i64,
    class: &'static str,
    rows: Vec<usize>,
}

/// Cost against the probes kept at the worst call, one mark per run
/// (runs that land on the same spot share it, counted).
fn scatter(
    section: usize,
    rows: &[&Row],
    front: &[usize],
    chosen: Option<usize>,
    varying: &Varying,
) -> String {
    let costs = rows.iter().map(|r| r.comparable_cost());
    let lo = costs.clone().min().unwrap_or(0);
    let hi = costs.max().unwrap_or(0);
    let (from, to, step) = cost_axis(lo, hi);
    let x_of = |c: u64| -> i64 {
        LEFT + ((u128::from(c - from) * (RIGHT - LEFT) as u128 + u128::from(to - from) / 2)
            / u128::from(to - from)) as i64
    };
    let y_of = |permille: u64| -> i64 {
        BOTTOM - (permille.min(1000) as i64 * (BOTTOM - TOP) + 500) / 1000
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg id=\"scatter-{section}\" class=\"chart scatter\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"cost against probes kept at the worst call\">"
    );
    out.push_str("<g class=\"grid\">");
    for pct in [0u64, 25, 50, 75, 100] {
        let y = y_of(pct * 10);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y}\" y2=\"{y}\"/><text x=\"{}\" y=\"{}\" class=\"yl\">{pct}%</text>",
            LEFT - 6,
            y + 4
        );
    }
    let mut v = from;
    while v <= to {
        let x = x_of(v);
        let _ = write!(
            out,
            "<line class=\"xt\" x1=\"{x}\" x2=\"{x}\" y1=\"{BOTTOM}\" y2=\"{}\"/><text x=\"{x}\" y=\"{}\" class=\"xl\">{}</text>",
            BOTTOM + 5,
            BOTTOM + 18,
            dollars(v)
        );
        v += step;
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" class=\"xl axis\">cost (prompt through a cache, plus output)</text>\
         <text x=\"14\" y=\"{}\" class=\"yl axis\" transform=\"rotate(-90 14 {})\">probes kept at the worst call</text></g>",
        (LEFT + RIGHT) / 2,
        BOTTOM + 40,
        (TOP + BOTTOM) / 2,
        (TOP + BOTTOM) / 2
    );
    let mut points: Vec<Point> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let x = x_of(r.comparable_cost());
        let y = y_of(r.worst.map_or(1000, |w| w.kept_permille));
        let class = match r.kind {
            RowKind::Recorded => "recorded",
            RowKind::Trim => "trim",
            RowKind::Mask => "mask",
            RowKind::Policy if r.over_window_calls.unwrap_or(0) > 0 => "over",
            RowKind::Policy if r.loses_critical() => "lost",
            RowKind::Policy => "ok",
        };
        match points
            .iter_mut()
            .find(|p| p.x == x && p.y == y && p.class == class)
        {
            Some(p) => p.rows.push(i),
            None => points.push(Point {
                x,
                y,
                class,
                rows: vec![i],
            }),
        }
    }
    // The front, from the cheapest on.
    let mut on_front: Vec<(i64, i64)> = front
        .iter()
        .map(|&i| {
            (
                x_of(rows[i].comparable_cost()),
                y_of(rows[i].worst.map_or(1000, |w| w.kept_permille)),
            )
        })
        .collect();
    on_front.sort();
    on_front.dedup();
    if on_front.len() > 1 {
        let pts: Vec<String> = on_front.iter().map(|(x, y)| format!("{x},{y}")).collect();
        let _ = write!(
            out,
            "<polyline class=\"front-line\" points=\"{}\"><title>the Pareto front: no other policy is both cheaper and keeps more</title></polyline>",
            pts.join(" ")
        );
    }
    let mut labels = Labels::default();
    out.push_str("<g class=\"points\">");
    for p in &points {
        let title: Vec<String> = p
            .rows
            .iter()
            .map(|&i| point_title(rows[i], varying))
            .collect();
        let (x, y) = (p.x, p.y);
        let on = p.rows.iter().any(|i| front.contains(i));
        if on {
            let _ = write!(
                out,
                "<circle class=\"ring front\" cx=\"{x}\" cy=\"{y}\" r=\"10\"/>"
            );
        }
        if p.rows.iter().any(|i| Some(*i) == chosen) {
            let _ = write!(
                out,
                "<circle class=\"ring chosen\" cx=\"{x}\" cy=\"{y}\" r=\"14\"/>"
            );
            labels.place(x - 40, y - 20, -1, "chosen", "recommended");
        }
        let mark = match p.class {
            "recorded" => format!(
                "<path class=\"pt recorded\" d=\"M{x},{} l8,8 l-8,8 l-8,-8z\"/>",
                y - 8
            ),
            "trim" => format!(
                "<rect class=\"pt trim\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\"/>",
                x - 6,
                y - 6
            ),
            "mask" => format!(
                "<path class=\"pt mask\" d=\"M{x},{} l7,13 l-14,0z\"/>",
                y - 7
            ),
            "over" => format!(
                "<path class=\"pt over\" d=\"M{},{} l12,12 M{},{} l-12,12\"/>",
                x - 6,
                y - 6,
                x + 6,
                y - 6
            ),
            class => format!("<circle class=\"pt {class}\" cx=\"{x}\" cy=\"{y}\" r=\"6\"/>"),
        };
        let _ = write!(
            out,
            "<g class=\"mark\" data-runs=\"{}\">{mark}<title>{}</title></g>",
            p.rows.len(),
            esc(&title.join("\n"))
        );
        let tag = match p.class {
            "recorded" => Some("recorded".to_string()),
            "trim" | "mask" => {
                let windows: Vec<String> = p
                    .rows
                    .iter()
                    .filter_map(|&i| rows[i].policy.as_ref().map(|f| f.window.to_string()))
                    .collect();
                Some(format!("{} {}", p.class, windows.join(", ")))
            }
            _ if p.rows.len() > 1 => Some(format!("×{}", p.rows.len())),
            _ => None,
        };
        if let Some(tag) = tag {
            // Below the point, or above it near the cost axis, clear of its labels.
            if y + 18 > BOTTOM - 6 {
                labels.place(x + 10, y - 10, -1, p.class, &tag);
            } else {
                labels.place(x + 10, y + 18, 1, p.class, &tag);
            }
        }
    }
    out.push_str("</g>");
    for (x, y, class, text) in &labels.placed {
        let _ = write!(
            out,
            "<text class=\"plabel {class}\" x=\"{x}\" y=\"{y}\">{}</text>",
            esc(text)
        );
    }
    out.push_str("</svg>");
    out
}

/// Point labels, each moved away from its point (down or up) past the ones
/// already placed that it would overlap.
#[derive(Default)]
struct Labels {
    placed: Vec<(i64, i64, &'static str, String)>,
}

impl Labels {
    fn place(&mut self, mut x: i64, mut y: i64, away: i64, class: &'static str, text: &str) {
        // About 7 units a character at 12px.
        let width = |t: &str| 7 * t.chars().count() as i64;
        if x + width(text) > WIDTH - 4 {
            // Left of the point rather than off the chart.
            x -= 24 + width(text);
        }
        while self.placed.iter().any(|(px, py, _, pt)| {
            (py - y).abs() < 14 && x < px + width(pt) && *px < x + width(text)
        }) {
            y += 14 * away;
        }
        self.placed.push((x, y, class, text.to_string()));
    }
}

fn point_title(r: &Row, varying: &Varying) -> String {
    let what = match (r.kind, &r.policy) {
        (RowKind::Policy, Some(p)) => label(p, Some(varying)),
        (RowKind::Trim, Some(p)) => format!("trim at window {}", p.window),
        (RowKind::Mask, Some(p)) => format!("mask at window {}", p.window),
        _ => "recorded: the client's own sends".to_string(),
    };
    let worst = r.worst.map_or(String::new(), |w| {
        format!(
            " · worst call {}: critical kept {}, all kept {}",
            w.call,
            percent(w.critical_kept_permille),
            percent(w.kept_permille)
        )
    });
    format!(
        "{what}: {}{worst}{}",
        dollars(r.comparable_cost()),
        match r.over_window_calls {
            Some(n) if n > 0 => format!(" · {n} over the window"),
            _ => String::new(),
        }
    )
}
