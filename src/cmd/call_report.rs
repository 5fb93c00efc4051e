//! The human and JSON reports of a projecting call (preflight, step, compact).

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Ui;
use super::defaults::{RunBudget, overhead_warning};
use super::words::plural;
use crate::cmd::style::{self, paint};
use crate::engine::budget::Budget;
use crate::engine::{CallReport, Mode, Status};
use crate::summarize::llm::LlmReport;

/// `--json` output: the engine's report plus what the record says.
#[derive(Serialize)]
pub struct CallJson<'a> {
    pub task: &'a str,
    #[serde(flatten)]
    pub report: &'a CallReport,
    /// What the original agent's provider counted for this call, when recorded.
    pub recorded_prompt_tokens: Option<u64>,
    pub budget: &'a Budget,
    /// The model summarizer's report (`--summarizer llm` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<&'a LlmReport>,
}

/// The heading of a `preflight` or `step` call's human report.
pub fn mode_heading(mode: Mode) -> &'static str {
    match mode {
        Mode::Preflight => "preflight",
        Mode::Step => "step",
    }
}

/// The report of one projecting call: one JSON object (with an `llm` key
/// when the model summarizer ran), or the human report, headed with
/// `heading` (the command's name), followed by the model summarizer's lines.
#[allow(clippy::too_many_arguments)]
pub fn print_call(
    ui: &mut Ui,
    heading: &str,
    task: &str,
    report: &CallReport,
    budget: &RunBudget,
    recorded: Option<u64>,
    json: bool,
    llm: Option<&LlmReport>,
) -> Result<()> {
    let call = CallJson {
        task,
        report,
        recorded_prompt_tokens: recorded,
        budget: &budget.budget,
        llm,
    };
    if json {
        return ui.json_kind("call", &call);
    }
    print_human(ui, heading, &call, budget.window_words())?;
    for l in llm.map(LlmReport::human).unwrap_or_default() {
        writeln!(ui.out, "{l}")?;
    }
    Ok(())
}

fn print_human(
    ui: &mut Ui,
    heading: &str,
    call: &CallJson,
    window_words: Option<String>,
) -> Result<()> {
    let CallJson {
        task,
        report,
        budget,
        recorded_prompt_tokens: recorded,
        ..
    } = *call;
    let title = format!(
        "{heading} · task {task} · call {} (turn {})",
        report.call, report.turn
    );
    ui.line(style::BOLD, &title)?;
    writeln!(
        ui.out,
        "budget: window {}{} − reserve {} = w_eff {} · trigger {} ({}) · stop {} ({}) · protect {}",
        budget.window,
        window_words.map_or_else(String::new, |w| format!(" ({w})")),
        budget.output_reserved,
        report.w_eff,
        report.trigger,
        budget.trigger_ratio,
        report.stop,
        budget.stop_ratio,
        plural(budget.protect_recent_steps, "step")
    )?;
    let mut tokens = format!(
        "tokens: {} → {} (trigger {}, stop {}) · raw history {} · basis {}",
        report.tokens_before,
        report.tokens_after,
        report.trigger,
        report.stop,
        report.raw_predicted,
        basis_words(report),
    );
    // What the transcript recorded for this very call, to compare with; the
    // basis above names the call its anchor came from.
    match recorded {
        Some(r) => tokens.push_str(&format!(" · recorded at call {}: {r}", report.call)),
        None => tokens.push_str(&format!(
            " · call {} has no recorded usage to compare with",
            report.call
        )),
    }
    writeln!(ui.out, "{tokens}")?;
    if let Some(w) = overhead_warning(report.overhead, budget) {
        ui.line(style::YELLOW, &w)?;
    }
    let r = &report.restored;
    let mut restored = Vec::new();
    if let Some(key) = &r.summary {
        restored.push(format!(
            "summary of {} ({})",
            plural(r.folded_parts, "part"),
            short_key(key)
        ));
    }
    restored.push(plural(r.forms_applied, "form"));
    restored.push(plural(r.shells_applied, "shell"));
    if r.images_placeheld > 0 {
        restored.push(format!(
            "{} (historical images, inline files)",
            plural(r.images_placeheld, "placeholder")
        ));
    }
    writeln!(ui.out, "restored: {}", restored.join(" · "))?;
    if report.placeholders_minted > 0 {
        writeln!(
            ui.out,
            "placeheld: {} of earlier turns (images, inline files), stored for the calls after",
            plural(report.placeholders_minted, "part")
        )?;
    }
    if report.tiers.is_empty() {
        let why = if report.gated {
            "none (anti-thrash holds after two ineffective compactions this turn)"
        } else if report.mode == crate::engine::Mode::Preflight {
            "none (preflight restores, it does not reduce)"
        } else if report.tokens_before <= report.trigger {
            "none (at or under trigger)"
        } else {
            "none could reduce further"
        };
        writeln!(ui.out, "tiers: {why}")?;
    }
    for (i, t) in report.tiers.iter().enumerate() {
        let label = if i == 0 { "tiers:" } else { "      " };
        let what = if t.parts_folded > 0 {
            format!(
                "{} folded into {} ({}{}), −{}",
                plural(t.parts_folded, "part"),
                t.coverage.as_deref().map(short_key).unwrap_or_default(),
                t.summarizer.as_deref().unwrap_or("?"),
                if t.summarizer_fallback {
                    ", fallback"
                } else {
                    ""
                },
                plural(t.tokens_saved, "token")
            )
        } else {
            format!(
                "{} shrunk, {} dropped to a shell, {}, −{}",
                plural(t.parts_shrunk, "part"),
                t.parts_dropped,
                plural(t.misses, "miss"),
                plural(t.tokens_saved, "token")
            )
        };
        writeln!(
            ui.out,
            "{label} {} — {what}",
            paint(ui.color, style::CYAN, t.tier.name())
        )?;
    }
    if report.shrink_misses > 0 && report.tiers.iter().all(|t| t.misses == 0) {
        writeln!(
            ui.out,
            "shrink: {} without a stored form (skipped, left for the floor)",
            plural(report.shrink_misses, "tool call")
        )?;
    }
    let status = paint_status(ui.color, report.status, report.status.name());
    // The line's fields, joined by one separator.
    let mut tail = vec![
        format!("status: {status}"),
        plural(report.messages, "message"),
        plural(report.parts, "part"),
    ];
    if report.synthetic_results > 0 {
        let results = plural(report.synthetic_results, "synthetic result");
        tail.push(format!("{results} for interrupted calls"));
    }
    tail.push(format!("view {}", &report.view_hash[..16]));
    writeln!(ui.out, "{}", tail.join(" · "))?;
    Ok(())
}

/// `text` in the colour of `status` (green, yellow, yellow, red).
pub fn paint_status(color: bool, status: Status, text: &str) -> String {
    let style = match status {
        Status::Ok => style::GREEN,
        Status::OverTrigger | Status::Breakthrough => style::YELLOW,
        Status::OverWindow => style::RED,
    };
    paint(color, style, text)
}

/// The prediction's basis and ratio in words, as the JSON's `basis` and
/// `ratio` say. A recorded basis anchors on the previous call's usage.
pub fn basis_words(report: &CallReport) -> String {
    let scale = if report.ratio_measured {
        format!("estimates × {} (measured on raw calls)", report.ratio)
    } else {
        "estimates unscaled (ratio not measured)".to_string()
    };
    match report.basis {
        crate::engine::Basis::Recorded => format!(
            "recorded: call {}'s usage − removed + added, {scale}",
            report.call.saturating_sub(1)
        ),
        // No earlier call's usage measures this history: none was recorded,
        // or the original agent compacted its context since.
        crate::engine::Basis::Estimate => {
            format!("estimate: overhead + view (not anchored on recorded usage), {scale}")
        }
    }
}

fn short_key(key: &str) -> String {
    match key.split_once(':') {
        Some((kind, h)) => format!("{kind}:{}", &h[..h.len().min(12)]),
        None => key.to_string(),
    }
}
