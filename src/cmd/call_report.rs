//! The human and JSON reports of a projecting call (preflight, step, compact).

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Ui;
use super::common::plural;
use super::defaults::{RunBudget, overhead_warning};
use crate::cmd::style::{self, paint};
use crate::engine::budget::Budget;
use crate::engine::{Report, Status};
use crate::summarize::llm::LlmReport;

/// `--json` output: the engine's report plus what the record says.
#[derive(Serialize)]
pub struct CallJson<'a> {
    pub task: &'a str,
    #[serde(flatten)]
    pub report: &'a Report,
    /// What the original agent's provider counted for this call, when recorded.
    pub recorded_prompt_tokens: Option<u64>,
    pub budget: &'a Budget,
    /// The model summarizer's report (`--summarizer llm` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<&'a LlmReport>,
}

/// The report of one projecting call: one JSON object (with an `llm` key
/// when the model summarizer ran), or the human report followed by the
/// model summarizer's lines.
pub fn print_call(
    ui: &mut Ui,
    task: &str,
    report: &Report,
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
    print_human(ui, &call, budget.window_words())?;
    for l in llm.map(LlmReport::human).unwrap_or_default() {
        writeln!(ui.out, "{l}")?;
    }
    Ok(())
}

fn print_human(ui: &mut Ui, call: &CallJson, window_words: Option<String>) -> Result<()> {
    let CallJson {
        task,
        report,
        budget,
        recorded_prompt_tokens: recorded,
        ..
    } = *call;
    let mode = match report.mode {
        crate::engine::Mode::Preflight => "preflight",
        crate::engine::Mode::Step => "step",
    };
    let title = format!(
        "{mode} · task {task} · call {} (turn {})",
        report.call, report.turn
    );
    ui.line(style::BOLD, &title)?;
    writeln!(
        ui.out,
        "budget: window {}{} − reserve {} = w_eff {} · trigger {} ({}) · stop {} ({}) · protect {} steps",
        budget.window,
        window_words.map_or_else(String::new, |w| format!(" ({w})")),
        budget.output_reserved,
        report.w_eff,
        report.trigger,
        budget.trigger_ratio,
        report.stop,
        budget.stop_ratio,
        budget.protect_recent_steps
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
    match recorded {
        Some(r) => tokens.push_str(&format!(" · recorded {r}")),
        None => tokens.push_str(" · no usage recorded"),
    }
    writeln!(ui.out, "{tokens}")?;
    if let Some(w) = overhead_warning(report.overhead, budget) {
        ui.line(style::YELLOW, &w)?;
    }
    let r = &report.restored;
    let mut restored = Vec::new();
    if let Some(key) = &r.summary {
        restored.push(format!(
            "summary of {} parts ({})",
            r.folded_parts,
            short_key(key)
        ));
    }
    restored.push(format!("{} forms", r.forms_applied));
    restored.push(format!("{} shells", r.shells_applied));
    if r.images_placeheld > 0 {
        restored.push(format!("{} images placeheld", r.images_placeheld));
    }
    writeln!(ui.out, "restored: {}", restored.join(" · "))?;
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
                "{} folded into {} ({}{}), −{} tokens",
                plural(t.parts_folded, "part"),
                t.coverage.as_deref().map(short_key).unwrap_or_default(),
                t.summarizer.as_deref().unwrap_or("?"),
                if t.summarizer_fallback {
                    ", fallback"
                } else {
                    ""
                },
                t.tokens_saved
            )
        } else {
            format!(
                "{} shrunk, {} dropped to a shell, {}, −{} tokens",
                plural(t.parts_shrunk.into(), "part"),
                t.parts_dropped,
                plural(t.misses.into(), "miss"),
                t.tokens_saved
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
            plural(report.shrink_misses.into(), "tool call")
        )?;
    }
    let status = paint_status(ui.color, report.status, report.status.name());
    let mut tail = format!(
        "status: {status} · {} messages · {} parts",
        report.messages, report.parts
    );
    if report.synthetic_results > 0 {
        tail.push_str(&format!(
            " · {} synthetic results for interrupted calls",
            report.synthetic_results
        ));
    }
    tail.push_str(&format!(" · view {}", &report.view_hash[..16]));
    writeln!(ui.out, "{tail}")?;
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

/// The prediction's basis and ratio in words, as the JSON's `basis` and `ratio` say.
pub fn basis_words(report: &Report) -> String {
    let scale = if report.ratio_measured {
        format!("estimates × {} (measured on raw calls)", report.ratio)
    } else {
        "estimates unscaled (ratio not measured)".to_string()
    };
    match report.basis {
        crate::engine::Basis::Recorded => {
            format!("recorded usage − removed + added, {scale}")
        }
        crate::engine::Basis::Estimate => {
            format!("estimate (no usage to anchor on): overhead + view, {scale}")
        }
    }
}

fn short_key(key: &str) -> String {
    match key.split_once(':') {
        Some((kind, h)) => format!("{kind}:{}", &h[..h.len().min(12)]),
        None => key.to_string(),
    }
}
