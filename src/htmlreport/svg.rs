//! The charts, drawn as inline SVG with integer coordinates.

use std::fmt::Write;

use std::collections::BTreeMap;

use super::collect::{Collected, Marker};
use super::{short_tokens, thousands};
use crate::engine::Tier;
use crate::engine::budget::Budget;

/// Chart geometry in viewBox units.
pub(crate) const WIDTH: u64 = 1200;
pub(crate) const LEFT: u64 = 72;
pub(crate) const RIGHT: u64 = 1110;
pub(crate) const TOP: u64 = 16;

/// The x of call `k` (1-based) of `n`.
pub(crate) fn x_of(k: u64, n: u64) -> u64 {
    if n <= 1 {
        return LEFT;
    }
    LEFT + ((k - 1) * (RIGHT - LEFT) + (n - 1) / 2) / (n - 1)
}

/// A vertical scale: `0..=max` tokens onto `bottom..=TOP`.
#[derive(Clone, Copy)]
pub(crate) struct Scale {
    pub max: u64,
    pub bottom: u64,
}

impl Scale {
    /// Values above `max` are drawn at the top edge (the chart clips them).
    pub(crate) fn y(&self, v: u64) -> u64 {
        let v = v.min(self.max + self.max / 20);
        let h = self.bottom - TOP;
        let off = (u128::from(v) * u128::from(h) + u128::from(self.max) / 2) / u128::from(self.max);
        (i128::from(self.bottom) - off as i128).max(0) as u64
    }
}

/// A round number at or above `v` (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a
/// power of ten), and the tick step that divides it into three to six.
pub(crate) fn nice_max(v: u64) -> (u64, u64) {
    let v = v.max(10);
    let mut p = 1u64;
    while p * 10 < v {
        p *= 10;
    }
    // (max, step) in tenths of p.
    for (m, step) in [
        (10, 2),
        (12, 2),
        (15, 5),
        (20, 5),
        (25, 5),
        (30, 5),
        (40, 10),
        (50, 10),
        (60, 10),
        (80, 20),
        (100, 20),
    ] {
        if p * m / 10 >= v {
            return ((p * m / 10).max(1), (p * step / 10).max(1));
        }
    }
    (p * 10, p * 2)
}

fn grid(out: &mut String, s: Scale, step: u64, n: u64) {
    out.push_str("<g class=\"grid\">");
    let mut v = 0;
    while v <= s.max {
        let y = s.y(v);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y}\" y2=\"{y}\"/><text x=\"{}\" y=\"{}\" class=\"yl\">{}</text>",
            LEFT - 6,
            y + 4,
            short_tokens(v)
        );
        v += step;
    }
    // About ten call ticks, on round call numbers.
    let (_, cstep) = nice_max(n.max(2) / 2);
    let cstep = cstep.max(1);
    let mut k = cstep;
    let _ = write!(
        out,
        "<text x=\"{LEFT}\" y=\"{}\" class=\"xl\">1</text>",
        s.bottom + 18
    );
    while k <= n {
        let x = x_of(k, n);
        if x > LEFT + 30 {
            let _ = write!(
                out,
                "<line class=\"xt\" x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\"/><text x=\"{x}\" y=\"{}\" class=\"xl\">{k}</text>",
                s.bottom,
                s.bottom + 5,
                s.bottom + 18
            );
        }
        k += cstep;
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" class=\"xl axis\">model call</text></g>",
        (LEFT + RIGHT) / 2,
        s.bottom + 36
    );
}

/// Close the plot group, then the chart's hover guide (parked left of the
/// plot until the page's script moves it) and the rectangle that catches the
/// pointer over the plot down to `bottom`; their ids start with `chart`.
fn guide_and_hit(out: &mut String, chart: &str, bottom: u64) {
    let _ = write!(
        out,
        "</g><line id=\"{chart}-guide\" class=\"guide\" x1=\"-10\" x2=\"-10\" y1=\"{TOP}\" y2=\"{bottom}\"/>\
         <rect id=\"{chart}-hit\" class=\"hit\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"/>",
        RIGHT - LEFT + 1,
        bottom - TOP
    );
}

/// The tier a marker is coloured by: the deepest one that fired.
fn deepest(tiers: &[Tier]) -> &'static str {
    [
        Tier::BreakthroughFloor,
        Tier::BreakthroughShrink,
        Tier::Floor,
        Tier::Shrink,
    ]
    .into_iter()
    .find(|t| tiers.contains(t))
    .map_or("other", Tier::name)
}

pub(crate) struct ContextChart<'a> {
    pub c: &'a Collected,
    pub budget: &'a Budget,
}

pub(crate) const CONTEXT_HEIGHT: u64 = 440;
const CONTEXT_BOTTOM: u64 = 392;

impl ContextChart<'_> {
    /// The top of the token axis and its tick step. The raw history far above
    /// the window is clipped at about twice the window.
    pub(crate) fn y_max(&self) -> (u64, u64) {
        let b = self.budget;
        let peak = self.c.peaks.all;
        let view_peak = self.c.peaks.view;
        let top = peak.min(b.window.max(view_peak) * 2).max(b.window);
        nice_max(top + top / 20)
    }

    pub(crate) fn render(&self) -> String {
        let c = self.c;
        let n = c.calls;
        let b = self.budget;
        let (max, step) = self.y_max();
        let s = Scale {
            max,
            bottom: CONTEXT_BOTTOM,
        };
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg id=\"ctx\" class=\"chart\" viewBox=\"0 0 {WIDTH} {CONTEXT_HEIGHT}\" role=\"img\" aria-label=\"tokens per model call\" data-calls=\"{n}\">\
             <defs><clipPath id=\"ctx-clip\"><rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"/></clipPath></defs>",
            RIGHT - LEFT + 1,
            CONTEXT_BOTTOM - TOP
        );
        grid(&mut out, s, step, n);
        // Budget lines, labelled at the right.
        out.push_str("<g class=\"limits\">");
        for (class, label, v) in [
            ("window", "window", b.window),
            ("weff", "w_eff", b.w_eff()),
            ("trigger", "trigger", b.trigger()),
            ("stop", "stop", b.stop()),
        ] {
            if v > max {
                continue;
            }
            let y = s.y(v);
            let _ = write!(
                out,
                "<line class=\"{class}\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y}\" y2=\"{y}\"><title>{label} {}</title></line>\
                 <text class=\"ll {class}\" x=\"{}\" y=\"{}\">{label} {}</text>",
                thousands(v),
                RIGHT + 6,
                y + 4,
                short_tokens(v)
            );
        }
        out.push_str("</g>");
        // The original agent's own compactions (one line per x: the last drawn covers the others).
        out.push_str("<g class=\"agent\">");
        let marks: Vec<u32> = c
            .agent_compactions
            .iter()
            .copied()
            .filter(|&k| u64::from(k) <= n)
            .collect();
        let at = |k: &u32| x_of(u64::from(*k), n);
        for (k, more) in last_at_each_place(&marks, c.decimated, at) {
            let x = x_of(u64::from(k), n);
            let _ = write!(
                out,
                "<line class=\"agent-compact\" data-call=\"{k}\" x1=\"{x}\" x2=\"{x}\" y1=\"{TOP}\" y2=\"{CONTEXT_BOTTOM}\"><title>the original agent compacted its context before call {k}{}</title></line>",
                more_here(more)
            );
        }
        out.push_str("</g><g clip-path=\"url(#ctx-clip)\">");
        let _ = write!(
            out,
            "<polyline class=\"line raw-est\" data-series=\"raw-estimated\" points=\"{}\"/>",
            c.series.raw.polyline(s, false)
        );
        // Recorded usage can have gaps: one path, a new subpath after each gap.
        let d = c.series.recorded.path(s);
        if !d.is_empty() {
            let _ = write!(
                out,
                "<path class=\"line raw-rec\" data-series=\"raw-recorded\" d=\"{d}\"/>"
            );
        }
        let _ = write!(
            out,
            "<polyline class=\"line view\" data-series=\"compacted\" points=\"{}\"/>",
            c.series.tokens_after.polyline(s, false)
        );
        guide_and_hit(&mut out, "ctx", CONTEXT_BOTTOM);
        out.push_str("<g class=\"markers\">");
        let place = |m: &Marker| {
            (
                x_of(u64::from(m.call), n),
                deepest(&m.tiers_fired),
                s.y(m.tokens_before).saturating_sub(2),
            )
        };
        for (m, more) in last_at_each_place(&c.markers, c.decimated, place) {
            let (x, deepest, y) = place(&m);
            let tiers = super::tier_names(&m.tiers_fired, ",");
            let _ = write!(
                out,
                "<path class=\"tier t-{deepest}\" data-call=\"{}\" data-tiers=\"{tiers}\" d=\"M{x},{y} l-5,-9 h10z\"><title>call {}: {} · {} → {}{}</title></path>",
                m.call,
                m.call,
                tiers.replace(',', ", "),
                thousands(m.tokens_before),
                thousands(m.tokens_after),
                more_here(more)
            );
        }
        out.push_str("</g></svg>");
        out
    }
}

/// The items to draw, in order, each with how many earlier ones it covers.
/// Drawn per pixel column, an item drawn where a later one is drawn the same
/// way is covered by it, so only the last at each place is drawn.
fn last_at_each_place<T: Clone, K: Ord>(
    items: &[T],
    decimated: bool,
    place: impl Fn(&T) -> K,
) -> Vec<(T, usize)> {
    if !decimated {
        return items.iter().map(|t| (t.clone(), 0)).collect();
    }
    let mut last: BTreeMap<K, (usize, usize)> = BTreeMap::new();
    for (i, t) in items.iter().enumerate() {
        let e = last.entry(place(t)).or_insert((i, 0));
        *e = (i, e.1 + usize::from(e.0 != i));
    }
    let mut kept: Vec<(usize, usize)> = last.into_values().collect();
    kept.sort_unstable();
    kept.into_iter()
        .map(|(i, more)| (items[i].clone(), more))
        .collect()
}

/// ` · and 3 more calls here` when a mark stands for others drawn at its place.
fn more_here(more: usize) -> String {
    match more {
        0 => String::new(),
        1 => " · and 1 more call here".to_string(),
        n => format!(" · and {n} more calls here"),
    }
}

pub(crate) const CACHE_HEIGHT: u64 = 300;
const CACHE_BOTTOM: u64 = 252;

/// Cache reads and writes per call (stacked areas) against the raw history's prompt.
pub(crate) fn cache_chart(c: &Collected) -> String {
    let n = c.calls;
    let view_peak = c.peaks.cache;
    let raw_peak = c.peaks.raw;
    let top = raw_peak.min(view_peak * 2).max(view_peak);
    let (max, step) = nice_max(top + top / 20);
    let s = Scale {
        max,
        bottom: CACHE_BOTTOM,
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg id=\"cache-chart\" class=\"chart\" viewBox=\"0 0 {WIDTH} {CACHE_HEIGHT}\" role=\"img\" aria-label=\"cache reads and writes per model call\" data-calls=\"{n}\">\
         <defs><clipPath id=\"cache-clip\"><rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"/></clipPath></defs>",
        RIGHT - LEFT + 1,
        CACHE_BOTTOM - TOP
    );
    grid(&mut out, s, step, n);
    out.push_str("<g clip-path=\"url(#cache-clip)\">");
    let (x1, xn) = (x_of(1, n), x_of(n.max(1), n));
    let base = s.y(0);
    let read = c.series.cache_read.polyline(s, false);
    let total = c.series.cache_total.polyline(s, false);
    let read_rev = c.series.cache_read.polyline(s, true);
    let _ = write!(
        out,
        "<polygon class=\"area read\" data-series=\"cache-read\" points=\"{x1},{base} {read} {xn},{base}\"/>\
         <polygon class=\"area write\" data-series=\"cache-write\" points=\"{total} {read_rev}\"/>\
         <polyline class=\"line raw-est\" data-series=\"raw-prompt\" points=\"{}\"/>",
        c.series.raw.polyline(s, false)
    );
    // Its ids are its own: the section around it is `cache`.
    guide_and_hit(&mut out, "cache-chart", CACHE_BOTTOM);
    out.push_str("</svg>");
    out
}

pub(crate) const PROBE_HEIGHT: u64 = 220;
const PROBE_BOTTOM: u64 = 172;

/// Critical and all probes kept per call, in per mille (0–100%).
pub(crate) fn probe_chart(c: &Collected) -> String {
    let n = c.calls;
    let s = Scale {
        max: 1000,
        bottom: PROBE_BOTTOM,
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg id=\"probes\" class=\"chart\" viewBox=\"0 0 {WIDTH} {PROBE_HEIGHT}\" role=\"img\" aria-label=\"probes kept per model call\" data-calls=\"{n}\">"
    );
    out.push_str("<g class=\"grid\">");
    for pct in [0u64, 50, 100] {
        let y = s.y(pct * 10);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y}\" y2=\"{y}\"/><text x=\"{}\" y=\"{}\" class=\"yl\">{pct}%</text>",
            LEFT - 6,
            y + 4
        );
    }
    let _ = write!(
        out,
        "<text x=\"{LEFT}\" y=\"{}\" class=\"xl\">1</text><text x=\"{RIGHT}\" y=\"{}\" class=\"xl\">{n}</text>\
         <text x=\"{}\" y=\"{}\" class=\"xl axis\">model call</text></g>",
        s.bottom + 18,
        s.bottom + 18,
        (LEFT + RIGHT) / 2,
        s.bottom + 36
    );
    let _ = write!(
        out,
        "<polyline class=\"line kept\" data-series=\"all-kept\" points=\"{}\"/>\
         <polyline class=\"line crit\" data-series=\"critical-kept\" points=\"{}\"/></svg>",
        c.series.kept.polyline(s, false),
        c.series.critical_kept.polyline(s, false)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_maxima_are_round_and_cover_the_value() {
        assert_eq!(nice_max(64_000), (80_000, 20_000));
        assert_eq!(nice_max(101_000), (120_000, 20_000));
        assert_eq!(nice_max(150_000), (150_000, 50_000));
        assert_eq!(nice_max(210_000), (250_000, 50_000));
        assert_eq!(nice_max(7), (10, 2));
        for v in [1u64, 9, 99, 101, 12_345, 999_999, 10_000_001] {
            let (m, s) = nice_max(v);
            assert!(m >= v && s > 0 && m % s == 0, "{v} -> {m} {s}");
        }
    }

    #[test]
    fn calls_spread_over_the_plot_from_left_to_right() {
        assert_eq!(x_of(1, 1), LEFT);
        assert_eq!(x_of(1, 500), LEFT);
        assert_eq!(x_of(500, 500), RIGHT);
        let s = Scale {
            max: 1000,
            bottom: 400,
        };
        assert_eq!(s.y(0), 400);
        assert_eq!(s.y(1000), TOP);
        // Off-scale values stop just above the top (clipped).
        assert!(s.y(1_000_000) < TOP);
    }
}
