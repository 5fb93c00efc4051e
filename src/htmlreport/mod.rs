//! `compactor report`: one self-contained HTML page picturing a replayed
//! session. This module is the pure part: data in, HTML string out.
//!
//! The page makes no external request: CSS and script are inline and the
//! charts are SVG drawn here with integer coordinates. Everything that comes
//! from a transcript (titles, tool names, summaries) is escaped; the per-call
//! data the script reads sits in a JSON block with `<`, `>` and `&` escaped,
//! so no transcript can close the script element. The same data gives the
//! same bytes: no clock, no hash-map order, no floats.
//!
//! Per-call data is embedded for every call (compact integer arrays), so the
//! composition of any call can be picked and every call hovered. Past
//! `series::DECIMATE_ABOVE` calls, more calls than the plot has pixel
//! columns, the charts draw each column's first, lowest, highest and last
//! value (the same picture, peaks exact), and the page's data is per column:
//! the calls it spans, how many fired a tier, and its peak call's numbers
//! and composition, so a page stays a few MB at any length. Tables and
//! headline figures are exact either way.

pub(crate) mod collect;
pub(crate) mod series;
pub(crate) mod svg;

use std::fmt::Write;

use serde_json::json;
use similar::{ChangeTag, TextDiff};

pub(crate) use collect::{ClientPanel, Collected, Collector, Fold};

use crate::engine::budget::Budget;
use crate::session::cost::{Prices, Totals};

/// Who and what the report is about.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub task: String,
    pub title: Option<String>,
    /// Where the task came from (the file name as given, or the task id).
    pub source: String,
    pub format: String,
    pub model: Option<String>,
    pub budget: Budget,
    pub summarizer: String,
    pub estimator: String,
    pub prices: Prices,
    /// Whose prices those are (`claude-opus-4-6`, `defaults: …`).
    pub prices_from: String,
    pub version: String,
}

/// Folds shown in full (text or diff); beyond this the middle ones are listed only.
pub(crate) const MAX_FOLDS_SHOWN: usize = 40;

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");
/// Declarations that replace `report.js`'s own for a page drawn per pixel
/// column (see `series`); inserted before the end of its function, where a
/// later function declaration wins.
const JS_COLUMNS: &str = include_str!("report-columns.js");

/// Render the page.
pub(crate) fn render(h: &Header, c: &Collected, totals: &Totals) -> String {
    let mut out = String::with_capacity(64 * 1024 + c.slots.len() * 300);
    let title = h.title.as_deref().unwrap_or(&h.task);
    let last_hash = c.last_hash.as_str();
    page_head(
        &mut out,
        &h.version,
        &format!("report · {}", esc(title)),
        &[CSS],
    );
    header(&mut out, h, c, title, last_hash);
    context_section(&mut out, h, c);
    composition_section(&mut out, c);
    summaries_section(&mut out, c);
    cache_section(&mut out, h, c, totals);
    probe_section(&mut out, c);
    client_section(&mut out, c);
    let _ = writeln!(
        out,
        "<footer>compactor {} · the same inputs give the same file, byte for byte · \
         token counts are estimates ({}) unless marked recorded</footer>",
        esc(&h.version),
        esc(&h.estimator)
    );
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"calls\">{}</script>",
        data_json(c)
    );
    let _ = write!(out, "<script>\n{}</script>\n</body>\n</html>\n", script(c));
    out
}

/// A self-contained page's head, up to the opening of its body: the
/// generator's `version`, the `title` after "compactor " (HTML), and the
/// style sheets inline, in order.
pub(crate) fn page_head(out: &mut String, version: &str, title: &str, css: &[&str]) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"compactor {}\">\n\
         <title>compactor {title}</title>\n<style>\n{}</style>\n</head>\n<body>\n",
        esc(version),
        css.concat()
    );
}

/// The page's script: `report.js`, with the per-column declarations when
/// the page is drawn per pixel column.
fn script(c: &Collected) -> String {
    let end = "})();\n";
    match JS.strip_suffix(end) {
        Some(body) if c.decimated => format!("{body}{JS_COLUMNS}{end}"),
        _ => JS.to_string(),
    }
}

fn header(out: &mut String, h: &Header, c: &Collected, title: &str, last_hash: &str) {
    let b = &h.budget;
    let _ = write!(
        out,
        "<header>\n<h1>{}</h1>\n<dl class=\"meta\">\
         <dt>task</dt><dd><code>{}</code></dd>\
         <dt>source</dt><dd><code>{}</code> · {}</dd>\
         <dt>model</dt><dd>{}</dd>\
         <dt>calls</dt><dd>{} · {}</dd>\
         <dt>budget</dt><dd>window {} − reserve {} = w_eff {} · trigger {} ({}) · stop {} ({}) · protect {} · summary ≤ {} tokens · {} summarizer</dd>\
         <dt>last view</dt><dd><code>{}</code></dd>\
         <dt>compactor</dt><dd>{}</dd>\
         </dl>\n</header>\n",
        esc(title),
        esc(&h.task),
        esc(&h.source),
        esc(&h.format),
        esc(h.model.as_deref().unwrap_or("unknown")),
        counted(c.calls, "model call"),
        counted(u64::from(c.last.as_ref().map_or(0, |r| r.turn)), "turn"),
        thousands(b.window),
        thousands(b.output_reserved),
        thousands(b.w_eff()),
        thousands(b.trigger()),
        b.trigger_ratio,
        thousands(b.stop()),
        b.stop_ratio,
        counted(b.protect_recent_steps.into(), "step"),
        thousands(b.summary_budget_tokens),
        esc(&h.summarizer),
        esc(last_hash),
        esc(&h.version),
    );
}

fn context_section(out: &mut String, h: &Header, c: &Collected) {
    let fired = c.fired;
    let peak_raw = c.peaks.raw;
    let peak_view = c.peaks.tokens_after;
    let chart = svg::ContextChart {
        c,
        budget: &h.budget,
    };
    let (y_max, _) = chart.y_max();
    let peak_all = c.peaks.raw_or_recorded;
    let clipped = if peak_all > y_max {
        format!(
            " Lines above {} tokens run off the top of the chart.",
            thousands(y_max)
        )
    } else {
        String::new()
    };
    let _ = write!(
        out,
        "<section id=\"context\">\n<h2><span class=\"n\">1</span> Context per call</h2>\n\
         <p class=\"lede\">The raw history peaks at <b>{}</b> tokens; the compacted view at <b>{}</b>. \
         Tiers fired at <b>{}</b> of {}{}.{}</p>\n\
         <div class=\"legend\">\
         <span class=\"k raw-est\">raw history (estimated)</span>\
         <span class=\"k raw-rec\">raw history (recorded usage)</span>\
         <span class=\"k view\">compacted view</span>\
         <span class=\"k window\">window</span><span class=\"k weff\">w_eff</span>\
         <span class=\"k trigger\">trigger</span><span class=\"k stop\">stop</span>\
         <span class=\"m t-shrink\">shrink</span><span class=\"m t-floor\">floor</span>\
         <span class=\"m t-breakthrough_shrink\">breakthrough shrink</span>\
         <span class=\"m t-breakthrough_floor\">breakthrough floor</span>\
         <span class=\"k agent-compact\">agent compacted itself</span></div>\n\
         <div class=\"chartbox\">{}<div id=\"ctx-tip\" class=\"tip\" hidden></div></div>\n\
         <p id=\"ctx-line\" class=\"reportline\">Hover a call to see its report line; click it to show its composition below.</p>\n</section>\n",
        thousands(peak_raw),
        thousands(peak_view),
        thousands(fired),
        counted(c.calls, "call"),
        match c.agent_compactions.len() {
            0 => String::new(),
            1 => "; the original agent compacted itself once".to_string(),
            n => format!("; the original agent compacted itself {n} times"),
        },
        clipped,
        chart.render()
    );
}

/// Segment colours, by position in the bar.
const PALETTE: [&str; 18] = [
    "#8c8c99", "#2f6fdf", "#7ea6e8", "#1b9e77", "#a6d8c4", "#d4a017", "#c0392b", "#e67e22",
    "#8e44ad", "#16a085", "#d35400", "#2c3e50", "#b03a6f", "#5d6d7e", "#a04000", "#6c3483",
    "#117a65", "#cfcfd6",
];

fn colour(i: usize, segments: usize) -> &'static str {
    // The elided segment is always the last colour.
    if i + 1 == segments {
        PALETTE[PALETTE.len() - 1]
    } else {
        PALETTE[i % (PALETTE.len() - 1)]
    }
}

fn composition_section(out: &mut String, c: &Collected) {
    let n = c.calls;
    let _ = write!(
        out,
        "<section id=\"composition\">\n<h2><span class=\"n\">2</span> What fills the window</h2>\n\
         <p class=\"lede\">Two figures, two measures. The bar and the table count each part of the call's view \
         with the estimator (characters ÷ 4), the system prompt and tools as measured: the <i>estimated total</i>. \
         The tokens <i>after compaction</i> are the engine's prediction for the same view, the one the trigger and stop \
         are compared with: the provider's recorded usage at the call before, plus what the history added and \
         minus what the view left out, each estimate scaled by the ratio of recorded to estimated tokens. \
         They differ by the estimator's error.</p>\n\
         <div class=\"picker\"><label for=\"call\">call</label> \
         <input type=\"range\" id=\"call-range\" min=\"1\" max=\"{n}\" value=\"{n}\" aria-label=\"call\"> \
         <input type=\"number\" id=\"call\" min=\"1\" max=\"{n}\" value=\"{n}\"> <span id=\"comp-title\">{}</span></div>\n\
         <div id=\"bar\" class=\"bar\">",
        comp_title(c)
    );
    let last = &c.last_composition;
    let total: u64 = last.iter().sum();
    for (i, (name, v)) in c.segments.iter().zip(last).enumerate() {
        let _ = write!(
            out,
            "<div class=\"seg\" style=\"flex-grow:{v};background:{}\" title=\"{}: {} tokens\"></div>",
            colour(i, c.segments.len()),
            esc(name),
            thousands(*v)
        );
    }
    out.push_str("</div>\n<table id=\"segs\" class=\"segs\"><tbody>");
    for (i, (name, v)) in c.segments.iter().zip(last).enumerate() {
        let _ = write!(
            out,
            "<tr{}><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            if *v == 0 { " class=\"zero\"" } else { "" },
            colour(i, c.segments.len()),
            esc(name),
            thousands(*v),
            percent(*v, total)
        );
    }
    let _ = writeln!(
        out,
        "</tbody><tfoot><tr><td>estimated total</td><td class=\"num\" id=\"segs-total\">{}</td><td></td></tr>\
         <tr><td>predicted after compaction</td><td class=\"num\" id=\"segs-predicted\">{}</td><td></td></tr></tfoot></table>",
        thousands(total),
        c.last
            .as_ref()
            .map_or_else(String::new, |r| thousands(r.tokens_after))
    );
    out.push_str(
        "<h3>The largest tool outputs</h3>\n<table class=\"tools\"><thead><tr>\
         <th>tool call</th><th>tool</th><th class=\"num\">issued at call</th><th class=\"num\">raw tokens</th>\
         <th>what happened</th><th class=\"num\">tokens in the last view</th></tr></thead><tbody>",
    );
    for t in &c.largest_tools {
        let what = if t.events.is_empty() {
            "kept as is".to_string()
        } else {
            t.events
                .iter()
                .map(|(k, w)| format!("{} at call {k}", esc(w)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{what}</td><td class=\"num\">{}</td></tr>",
            esc(&t.id),
            esc(&t.name),
            t.step,
            thousands(t.raw_tokens),
            thousands(t.last_tokens)
        );
    }
    if c.largest_tools.is_empty() {
        out.push_str("<tr><td colspan=\"6\" class=\"muted\">no tool calls</td></tr>");
    }
    out.push_str("</tbody></table>\n</section>\n");
}

/// The composition's title for the last call.
fn comp_title(c: &Collected) -> String {
    match &c.last {
        Some(r) => format!(
            "turn {} · {} tokens after compaction{}",
            r.turn,
            thousands(r.tokens_after),
            if r.tiers_fired.is_empty() {
                String::new()
            } else {
                format!(" · {}", tier_names(&r.tiers_fired, ", "))
            }
        ),
        None => String::new(),
    }
}

fn summaries_section(out: &mut String, c: &Collected) {
    let _ = write!(
        out,
        "<section id=\"summaries\">\n<h2><span class=\"n\">3</span> Summaries</h2>\n<p class=\"lede\">{}</p>\n",
        match c.fold_count {
            0 => "No fold happened: the floor tier never ran.".to_string(),
            1 => "One fold. Its <code>## Task Context</code> is shown in full.".to_string(),
            n => format!(
                "{n} folds. The first <code>## Task Context</code> is shown in full, each later one as a diff against the one before."
            ),
        }
    );
    let n = c.fold_count;
    let (head, tail) = if n > MAX_FOLDS_SHOWN {
        (MAX_FOLDS_SHOWN / 2, n - MAX_FOLDS_SHOWN / 2)
    } else {
        (n, n)
    };
    // The folds shown are those before `head` and from `tail` on.
    let mut prev: Option<&Fold> = None;
    for (i, f) in &c.folds {
        let i = *i;
        if i == tail && head < tail {
            let _ = writeln!(
                out,
                "<p class=\"muted\">… folds {} to {} are left out to keep the page small …</p>",
                head + 1,
                tail
            );
        }
        let _ = writeln!(
            out,
            "<details class=\"fold\"{}><summary><b>fold {}</b> · first in the view at call {} · minted at call {} (turn {}) · \
             covers {} · {} · {} · <code title=\"{}\">{}</code></summary>",
            if i == 0 || i + 1 == n { " open" } else { "" },
            i + 1,
            f.first_call,
            f.minted_call,
            f.minted_turn,
            counted(f.covers, "raw part"),
            counted(f.tokens, "token"),
            esc(&f.summarizer),
            esc(&f.coverage),
            esc(&f.coverage[..f.coverage.len().min(16)])
        );
        match prev {
            Some(p) if !(i == tail && head < tail) => out.push_str(&diff_html(&p.text, &f.text)),
            _ => {
                let _ = writeln!(out, "<pre class=\"summary\">{}</pre>", esc(&f.text));
            }
        }
        out.push_str("</details>\n");
        prev = Some(f);
    }
    out.push_str("</section>\n");
}

/// A line diff (similar) as `<pre>` with inserted and deleted lines marked.
pub(crate) fn diff_html(old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let (mut plus, mut minus) = (0u64, 0u64);
    let mut body = String::new();
    for (g, group) in diff.grouped_ops(2).iter().enumerate() {
        if g > 0 {
            body.push_str("<span class=\"hunk\">⋯</span>");
        }
        for op in group {
            for ch in diff.iter_changes(op) {
                let (class, sign) = match ch.tag() {
                    ChangeTag::Insert => {
                        plus += 1;
                        ("ins", '+')
                    }
                    ChangeTag::Delete => {
                        minus += 1;
                        ("del", '-')
                    }
                    ChangeTag::Equal => ("eq", ' '),
                };
                let line = ch.to_string_lossy();
                // Block spans: no newline between them, or each line doubles.
                let _ = write!(
                    body,
                    "<span class=\"{class}\">{sign} {}</span>",
                    esc(line.trim_end_matches('\n'))
                );
            }
        }
    }
    if plus + minus == 0 {
        return "<p class=\"muted\">unchanged text</p>\n".to_string();
    }
    format!(
        "<p class=\"diffstat\"><span class=\"ins\">+{plus}</span> <span class=\"del\">−{minus}</span> lines against the previous fold</p>\n<pre class=\"diff\">{body}</pre>\n"
    )
}

fn cache_section(out: &mut String, h: &Header, c: &Collected, t: &Totals) {
    let p = &h.prices;
    let _ = write!(
        out,
        "<section id=\"cache\">\n<h2><span class=\"n\">4</span> Cache and cost</h2>\n\
         <p class=\"lede\">Per call: the prefix a prompt cache would re-read and what it would write, \
         against the raw history's prompt. Prices in USD per million tokens ({}): input {}, cache write {}, cache read {}, output {}.</p>\n\
         <div class=\"legend\"><span class=\"a read\">cache read</span><span class=\"a write\">cache write</span>\
         <span class=\"k raw-est\">raw history prompt</span></div>\n<div class=\"chartbox\">{}</div>\n\
         <table class=\"totals\"><thead><tr><th>history</th><th class=\"num\">prompt tokens</th><th class=\"num\">cache read</th>\
         <th class=\"num\">cache write</th><th class=\"num\">cost with cache</th><th class=\"num\">cost without cache</th></tr></thead><tbody>",
        esc(&h.prices_from),
        p.input.rate(),
        p.cache_write.rate(),
        p.cache_read.rate(),
        p.output.rate(),
        svg::cache_chart(c)
    );
    for (name, x) in [("compacted", &t.compacted), ("raw", &t.raw)] {
        let _ = write!(
            out,
            "<tr><td>{name}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">${}</td><td class=\"num\">${}</td></tr>",
            thousands(x.prompt_tokens),
            thousands(x.cache_read_tokens),
            thousands(x.cache_write_tokens),
            x.cost_cached_usd.dollars(),
            x.cost_uncached_usd.dollars()
        );
    }
    let _ = write!(
        out,
        "</tbody></table>\n<p>With a cache, the compacted history costs <b>{}</b> of the raw one \
         ({} prompt tokens against {}). The {} recorded output tokens cost ${} under both.</p>\n</section>\n",
        percent(t.compacted.cost_cached_usd.0, t.raw.cost_cached_usd.0),
        thousands(t.compacted.prompt_tokens),
        thousands(t.raw.prompt_tokens),
        thousands(t.output_tokens),
        t.cost_output_usd.dollars()
    );
}

/// Lost probes listed for the worst call, at most.
const LOST_LISTED: usize = 20;

fn probe_section(out: &mut String, c: &Collected) {
    let _ = write!(
        out,
        "<section id=\"probe\">\n<h2><span class=\"n\">5</span> Probe survival</h2>\n\
         <p class=\"lede\">{} read from the raw record: the user's asks, the rules they set, \
         the files written, errors met, decisions and the latest state (as <code>compactor probe</code> \
         reads them). Each call's view is searched for them; a probe whose text is gone but whose stored \
         form the view still points to is recoverable. Asks, rules and deliverables are critical.</p>\n",
        counted(c.probe_count as u64, "probe")
    );
    let Some((call, worst)) = &c.probe_worst else {
        out.push_str("<p class=\"muted\">No call was replayed.</p>\n</section>\n");
        return;
    };
    if c.probe_count == 0 {
        out.push_str("<p class=\"muted\">The record yields no probes.</p>\n</section>\n");
        return;
    }
    let _ = write!(
        out,
        "<div class=\"legend\"><span class=\"k crit\">critical probes kept</span>\
         <span class=\"k kept\">all probes kept</span></div>\n<div class=\"chartbox\">{}</div>\n\
         <p>Worst call <b>{call}</b>: critical probes kept <b>{}</b> ({} lost of {}) · all kept {} of {} judged.</p>\n\
         <table class=\"probes\"><thead><tr><th>category</th><th>critical</th><th class=\"num\">passed</th>\
         <th class=\"num\">recoverable</th><th class=\"num\">lost</th></tr></thead><tbody>",
        svg::probe_chart(c),
        crate::probe::percent(worst.critical_kept_permille()),
        worst.critical_lost,
        worst.critical_judged,
        crate::probe::percent(worst.kept_permille()),
        worst.judged
    );
    for category in crate::probe::Category::ALL {
        let Some(n) = worst.categories.get(category.name()) else {
            continue;
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            category.name(),
            if n.critical { "yes" } else { "no" },
            n.passed,
            n.recoverable,
            n.lost
        );
    }
    out.push_str("</tbody></table>\n");
    precision_paragraph(out, c);
    if !worst.lost.is_empty() {
        let _ = writeln!(out, "<p>Lost at call {call}:</p>");
        listed_at_most(out, &worst.lost, LOST_LISTED, |out, l| {
            let expected: String = l.expected.chars().take(160).collect();
            let _ = write!(
                out,
                "<li><b>{}</b>{} <q>{}</q> <span class=\"muted\">(transcript line {} · {})</span></li>",
                l.category.name(),
                if l.critical { " (critical)" } else { "" },
                esc(&expected),
                esc(&l.source),
                l.line
            );
        });
    }
    out.push_str("</section>\n");
}

/// Misleading lines listed for a call, at most.
const MISLEADING_LISTED: usize = 10;

/// Precision: the Task Context's lines that contradict the record (the
/// call that carried the most listed), and the abandoned approaches kept.
fn precision_paragraph(out: &mut String, c: &Collected) {
    let p = &c.precision_last;
    let _ = writeln!(
        out,
        "<p>Misleading summary lines (a Task Context line the record contradicts: a ruled-out \
         action that later succeeded, an open error since resolved, a file called owed that was \
         written): <b>{}</b> at the last call; {} carried one. Abandoned approaches (errors never \
         retried with success) kept at the last call: {} of {}.</p>",
        p.misleading.len(),
        counted(u64::from(c.misleading_calls), "view"),
        p.abandoned_judged - p.abandoned_lost,
        p.abandoned_judged
    );
    let Some((call, most)) = &c.most_misleading else {
        return;
    };
    let _ = writeln!(out, "<p>Misleading at call {call}:</p>");
    listed_at_most(out, &most.misleading, MISLEADING_LISTED, |out, m| {
        let text: String = m.text.chars().take(160).collect();
        let _ = write!(
            out,
            "<li><b>{}</b> ({}) <q>{}</q> <span class=\"muted\">{}{}</span></li>",
            m.kind.name(),
            esc(m.section),
            esc(&text),
            esc(&m.why),
            if m.proof_in_view {
                "; the view shows that call"
            } else {
                ""
            }
        );
    });
}

/// A list of the first `listed` of `items`, each written by `item` as an
/// `<li>`, and how many more there are.
fn listed_at_most<T>(
    out: &mut String,
    items: &[T],
    listed: usize,
    mut item: impl FnMut(&mut String, &T),
) {
    out.push_str("<ul class=\"lost\">");
    for i in items.iter().take(listed) {
        item(out, i);
    }
    if items.len() > listed {
        let _ = write!(
            out,
            "<li class=\"muted\">and {} more</li>",
            items.len() - listed
        );
    }
    out.push_str("</ul>\n");
}

/// The client's own compactions, when its hooks recorded any: its summary
/// beside compactor's Task Context.
fn client_section(out: &mut String, c: &Collected) {
    if c.client_compactions.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section id=\"client\">\n<h2><span class=\"n\">6</span> The client's own compactions</h2>\n\
         <p class=\"lede\">What compactor's hooks recorded when the client compacted the session itself: \
         the summary the client wrote, and the <code>## Task Context</code> compactor put back right after it, \
         each scored with the probes of the history they replaced.</p>\n"
    );
    for p in &c.client_compactions {
        let _ = writeln!(
            out,
            "<h3>after call {} · {} · {}</h3>\n<div class=\"sides\">",
            p.after_call,
            esc(&p.client),
            esc(p.trigger.as_deref().unwrap_or("trigger unknown"))
        );
        for (who, side) in &p.sides {
            match side {
                Some((text, e)) => {
                    let _ = writeln!(
                        out,
                        "<div><p><b>{}</b>: critical probes kept <b>{}</b> ({} lost of {}) · all kept {}</p>\n\
                         <pre class=\"summary\">{}</pre></div>",
                        esc(who),
                        crate::probe::percent(e.critical_kept_permille()),
                        e.critical_lost,
                        e.critical_judged,
                        crate::probe::percent(e.kept_permille()),
                        esc(text)
                    );
                }
                None => {
                    let _ = writeln!(out, "<div><p><b>{}</b>: not recorded</p></div>", esc(who));
                }
            }
        }
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}

/// The arrays the script reads: per call, or per pixel column (its peak
/// call's numbers, the calls it spans and how many fired a tier).
fn data_json(c: &Collected) -> String {
    let r: Vec<&collect::Detail> = c.slots.iter().map(|s| &s.detail).collect();
    let mut v = json!({
        "turn": r.iter().map(|x| x.turn).collect::<Vec<_>>(),
        "before": r.iter().map(|x| x.tokens_before).collect::<Vec<_>>(),
        "after": r.iter().map(|x| x.tokens_after).collect::<Vec<_>>(),
        "rec": r.iter().map(|x| x.recorded_prompt_tokens.map_or(-1, |t| t as i64)).collect::<Vec<_>>(),
        "raw": r.iter().map(|x| x.raw_tokens).collect::<Vec<_>>(),
        "tiers": r.iter().map(|x| tier_names(&x.tiers_fired, ",")).collect::<Vec<_>>(),
        "status": r.iter().map(|x| x.status.name()).collect::<Vec<_>>(),
        "shrunk": r.iter().map(|x| x.parts_shrunk).collect::<Vec<_>>(),
        "dropped": r.iter().map(|x| x.parts_dropped).collect::<Vec<_>>(),
        "folded": r.iter().map(|x| x.parts_folded).collect::<Vec<_>>(),
        "cr": r.iter().map(|x| x.cache_read_tokens).collect::<Vec<_>>(),
        "cw": r.iter().map(|x| x.cache_write_tokens).collect::<Vec<_>>(),
        "hash": r.iter().map(|x| x.hash.as_str()).collect::<Vec<_>>(),
        "segs": c.segments,
        "colours": (0..c.segments.len()).map(|i| colour(i, c.segments.len())).collect::<Vec<_>>(),
        "comp": c.composition,
    });
    if c.decimated {
        v["n"] = json!(c.calls);
        v["call"] = json!(r.iter().map(|x| x.call).collect::<Vec<_>>());
        v["from"] = json!(c.slots.iter().map(|s| s.from).collect::<Vec<_>>());
        v["fired"] = json!(c.slots.iter().map(|s| s.fired).collect::<Vec<_>>());
    }
    script_safe_json(&v.to_string())
}

/// JSON that cannot end or open anything inside a `<script>` element.
pub(crate) fn script_safe_json(s: &str) -> String {
    s.replace('&', "\\u0026")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
}

/// Escape text for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `1234567` → `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `1 call`, `12,000 calls`: a count in thousands and its noun.
fn counted(n: u64, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n))
}

/// `64000` → `64k`, `1250000` → `1.25M` (axis labels).
pub(crate) fn short_tokens(n: u64) -> String {
    let (div, unit) = if n >= 1_000_000 {
        (1_000_000, "M")
    } else if n >= 1_000 {
        (1_000, "k")
    } else {
        return n.to_string();
    };
    let whole = n / div;
    let frac = (n % div) * 100 / div;
    if frac == 0 {
        format!("{whole}{unit}")
    } else if frac.is_multiple_of(10) {
        format!("{whole}.{}{unit}", frac / 10)
    } else {
        format!("{whole}.{frac:02}{unit}")
    }
}

/// `part` of `whole` as a percentage with one decimal, from integers.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "–".to_string();
    }
    let tenths = (u128::from(part) * 1000 + u128::from(whole) / 2) / u128::from(whole);
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// The tiers' names joined by `sep` (empty when none fired).
fn tier_names(tiers: &[crate::engine::Tier], sep: &str) -> String {
    tiers.iter().map(|t| t.name()).collect::<Vec<_>>().join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_formatted_from_integers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(short_tokens(64_000), "64k");
        assert_eq!(short_tokens(62_500), "62.5k");
        assert_eq!(short_tokens(1_250_000), "1.25M");
        assert_eq!(short_tokens(500), "500");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(2, 3), "66.7%");
        assert_eq!(percent(5, 0), "–");
    }

    #[test]
    fn transcript_text_cannot_open_markup() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        let j = script_safe_json(&json!({"t": "</script><script>x()</script>"}).to_string());
        assert!(!j.contains('<') && !j.contains('>'));
        let back: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(back["t"], "</script><script>x()</script>");
    }

    #[test]
    fn a_fold_diff_marks_inserted_and_deleted_lines() {
        let html = diff_html("a\nb\nc\n", "a\nB <x>\nc\nd\n");
        assert!(html.contains("<span class=\"del\">- b</span>"));
        assert!(html.contains("<span class=\"ins\">+ B &lt;x&gt;</span>"));
        assert!(html.contains("+2</span> <span class=\"del\">−1"));
        assert!(diff_html("same\n", "same\n").contains("unchanged"));
    }
}
