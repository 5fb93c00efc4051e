//! What the hooks print: compactor's `## Task Context` for the client's next
//! request (session-start) and, for a client that takes them, instructions
//! for the client's own summarizer (pre-compact). Pure: the history and a
//! summarizer in, text out.
//!
//! Both fit under the client's hook output limit. The summary budget is
//! lowered until the text fits, so the summarizer's priority floor decides
//! what goes: findings, ruled-out calls and decisions are demoted first, the
//! P0 lines (requests, constraints) never. Should the P0 lines alone exceed
//! the limit, the text is printed whole all the same: both clients keep an
//! over-long output in a file they name to the model, and cutting a rule
//! here would lose it for good. `## Constraints` comes first, so a client's
//! preview of an over-long output still shows the rules.

use crate::engine::estimate::CharsPerToken;
use crate::engine::ladder::span_entry;
use crate::engine::parts::reconstruct;
use crate::engine::summarizer::{SpanEntry, Summarizer, SummaryRequest};
use crate::model::{Kind, Message};
use crate::summarize::Extractive;

/// How a client measures a hook's output, and how much it takes whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputLimit {
    /// JavaScript string length (Claude Code).
    Utf16Units(usize),
    /// Bytes of UTF-8 (Codex).
    Utf8Bytes(usize),
}

impl OutputLimit {
    pub fn max(self) -> usize {
        match self {
            OutputLimit::Utf16Units(n) | OutputLimit::Utf8Bytes(n) => n,
        }
    }

    /// The size of `text` in this limit's unit.
    pub fn measure(self, text: &str) -> usize {
        match self {
            OutputLimit::Utf16Units(_) => text.encode_utf16().count(),
            OutputLimit::Utf8Bytes(_) => text.len(),
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            OutputLimit::Utf16Units(_) => "characters",
            OutputLimit::Utf8Bytes(_) => "bytes",
        }
    }
}

/// The line before the Task Context, for the model.
pub const PREAMBLE: &str = "The conversation was just compacted. compactor keeps the whole session; \
this is its summary of everything before the compaction. The requests and constraints are the \
user's own words and still apply.";

/// The instruction pre-compact gives the client's summarizer.
pub const INSTRUCTION: &str = "Keep every request and constraint of the user listed below \
verbatim in the summary: they still apply after the compaction.";

/// compactor's Task Context as session-start prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskContext {
    /// The whole `additionalContext`: the preamble, then `## Task Context`.
    pub text: String,
    /// The sections alone (what `## Task Context` heads).
    pub sections: String,
    /// Which summarizer wrote it (`extractive`, `llm:…`, or
    /// `extractive (… over the limit)` when the configured one's summary did not fit).
    pub summarizer: String,
    /// The text's size in the limit's unit.
    pub size: usize,
    /// The P0 lines alone were over the limit: printed whole anyway.
    pub over_limit: bool,
}

/// The history before a compaction: every row, except a trailing summary the
/// client itself wrote (a Codex rollout holds its `compacted` item when the
/// hooks after the compaction run; compactor summarizes what it replaced).
pub fn before_compaction(rows: &[Message]) -> &[Message] {
    match rows.iter().rposition(|m| m.kind == Kind::CompactSummary) {
        Some(i) if !rows[i..].iter().any(|m| m.kind == Kind::Ask) => &rows[..i],
        _ => rows,
    }
}

/// What the summarizer is shown of `rows`: every part, oldest first.
fn span_of(rows: &[Message]) -> Vec<SpanEntry<'static>> {
    let est = CharsPerToken::default();
    reconstruct(rows, &est)
        .iter()
        .filter_map(|p| span_entry(p).map(SpanEntry::into_owned))
        .collect()
}

fn has_ask(span: &[SpanEntry]) -> bool {
    span.iter().any(|e| matches!(e, SpanEntry::Ask { .. }))
}

/// Tries of a lower budget before settling for what the floor leaves.
const FIT_TRIES: usize = 8;

/// compactor's Task Context of `history`, under `limit`; `None` when the
/// history holds no request (nothing to put back). `summarizer` writes it;
/// when its summary is over the limit, the extractive summarizer fits it.
pub fn task_context(
    history: &[Message],
    summarizer: &dyn Summarizer,
    limit: OutputLimit,
) -> Option<TaskContext> {
    let span = span_of(history);
    if !has_ask(&span) {
        return None;
    }
    let render = |sections: &str| {
        format!(
            "{PREAMBLE}\n\n## Task Context\n\n{}",
            constraints_first(sections).trim_end()
        )
    };
    let est = CharsPerToken::default();
    let overhead = limit.measure(&render("")) as u64;
    let mut budget = (limit.max() as u64).saturating_sub(overhead) / 4;
    let mut name = summarizer.name();
    let mut active: &dyn Summarizer = summarizer;
    let mut last: Option<TaskContext> = None;
    for _ in 0..FIT_TRIES {
        let req = SummaryRequest {
            prior: None,
            span: &span,
            later: &[],
            budget_tokens: budget.max(1),
            estimator: &est,
        };
        let summary = active
            .summarize(&req)
            .or_else(|_| Extractive.summarize(&req))
            .ok()?;
        if active.name() == summarizer.name() {
            name = summary.summarizer.clone();
        }
        let text = render(&summary.text);
        let size = limit.measure(&text);
        let fits = size <= limit.max();
        let shrank = last.as_ref().is_none_or(|l| size < l.size);
        let candidate = TaskContext {
            text,
            sections: constraints_first(&summary.text).trim_end().to_string(),
            summarizer: name.clone(),
            size,
            over_limit: !fits,
        };
        if fits {
            return Some(candidate);
        }
        if !shrank {
            // The floor: only P0 is left, and it is printed whole.
            break;
        }
        if active.name() != "extractive" {
            // A model's summary over the limit: the extractive one fits
            // instead (deterministic, and no second model call).
            name = format!("extractive ({} over the limit)", summarizer.name());
            active = &Extractive;
        }
        // Scale the budget by how far over it is, at least one token lower.
        let scaled = budget * limit.max() as u64 / size.max(1) as u64;
        budget = scaled.min(budget.saturating_sub(1));
        last = Some(candidate);
    }
    last.map(|mut l| {
        l.summarizer = name;
        l
    })
}

/// The summary with its `## Constraints` section moved to the front.
fn constraints_first(sections: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, _) in sections.match_indices("## ") {
        if (i == 0 || sections.as_bytes()[i - 1] == b'\n') && i > start {
            parts.push(&sections[start..i]);
            start = i;
        }
    }
    parts.push(&sections[start..]);
    match parts.iter().position(|p| p.starts_with("## Constraints")) {
        Some(i) if i > 0 => {
            let c = parts.remove(i);
            let mut out = String::with_capacity(sections.len() + 2);
            out.push_str(c.trim_end());
            out.push_str("\n\n");
            for p in parts {
                out.push_str(p);
            }
            out
        }
        _ => sections.to_string(),
    }
}

/// The instructions pre-compact prints for the client's summarizer: the
/// user's constraints and requests as compactor recorded them (its
/// extractive P0 lines), under `limit`, whole lines only; `None` when the
/// history holds no request.
pub fn summarizer_instructions(history: &[Message], limit: OutputLimit) -> Option<String> {
    let span = span_of(history);
    if !has_ask(&span) {
        return None;
    }
    let est = CharsPerToken::default();
    let req = SummaryRequest {
        prior: None,
        span: &span,
        later: &[],
        budget_tokens: (limit.max() / 4) as u64,
        estimator: &est,
    };
    let summary = Extractive.summarize(&req).ok()?;
    let sections = constraints_first(&summary.text);
    let mut lines = vec![INSTRUCTION.to_string(), String::new()];
    let mut keep = false;
    for l in sections.lines() {
        if let Some(h) = l.strip_prefix("## ") {
            keep = h == "Constraints" || h == "Requests";
        }
        if keep {
            lines.push(l.to_string());
        }
    }
    let whole = lines.join("\n").trim_end().to_string();
    if limit.measure(&whole) <= limit.max() {
        return Some(whole);
    }
    let note =
        |n: usize| format!("- … {n} more lines: compactor puts them back after the compaction");
    let mut out = lines[..2].join("\n");
    for (i, l) in lines.iter().enumerate().skip(2) {
        let tail = note(lines.len() - i);
        if limit.measure(&out) + limit.measure(l) + limit.measure(&tail) + 2 > limit.max() {
            out.push('\n');
            out.push_str(&tail);
            return Some(out);
        }
        out.push('\n');
        out.push_str(l);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
