//! The reduction ladder: placeholders for what earlier turns sent (images,
//! inline files), then ① shrink outside the protected window, ② floor,
//! ③ breakthrough shrink, ④ breakthrough floor. Each tier runs only while
//! the prediction is over trigger; shrinking aims at stop.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::carried::task_context_sections;
use super::clean::{request, strip_controls_owned, stripped};
use super::entries::{Entry, Minted, placeholder_key};
use super::parts::{
    NO_RESULT_TEXT, Part, PartBody, PartState, SummaryHead, coverage_key, coverage_next,
    coverage_start,
};
use super::restore::{
    ReadError, StoreView, apply_form, apply_placeholder, apply_shell, holds_inline_media,
    summary_part,
};
use super::summarizer::{SpanEntry, SummaryRequest, ToolCall};
use super::{CallContext, Tier};
use crate::model::{Block, Kind, ToolContent};
use crate::view::text::tool_content_text;

/// What one tier did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TierReport {
    pub tier: Tier,
    pub parts_shrunk: u32,
    pub parts_dropped: u32,
    /// Tool parts considered with no stored form (skipped, never dropped).
    pub misses: u32,
    pub tokens_saved: u64,
    /// Raw parts newly folded into the summary.
    pub parts_folded: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<String>,
    /// The configured summarizer failed and the static checkpoint stood in.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub summarizer_fallback: bool,
}

/// The state one reduction pass threads through the tiers.
pub(crate) struct Pass<'a> {
    pub ctx: &'a CallContext<'a>,
    pub store: StoreView<'a>,
    /// How a view's estimate becomes a prediction in real-token space.
    pub model: crate::engine::Prediction,
    /// The running estimate of the view's parts.
    pub view_estimate: u64,
    /// The running prediction: `model.of(view_estimate)`.
    pub predicted: u64,
    /// Entries minted so far, in order.
    pub new_entries: Vec<(String, Minted)>,
    /// Tool parts the shrink tiers considered but found no stored form for.
    pub misses: u32,
    /// Placeholders minted by this pass (see [`placehold`]).
    pub placeholders: u32,
}

impl Pass<'_> {
    /// The prediction once `removed` estimated tokens leave the view and
    /// `added` join it.
    pub(crate) fn after(&self, removed: u64, added: u64) -> u64 {
        self.model.of(self
            .view_estimate
            .saturating_sub(removed)
            .saturating_add(added))
    }

    /// Apply such a change to the running estimate and prediction.
    pub(crate) fn change(&mut self, removed: u64, added: u64) {
        self.view_estimate = self
            .view_estimate
            .saturating_sub(removed)
            .saturating_add(added);
        self.predicted = self.model.of(self.view_estimate);
    }
}

/// Placeholders for the images and inline files of earlier turns, sent
/// before: the first move of a ladder that runs, each stored so that every
/// later call restores it. Never under the trigger, where the view is the
/// client's own bytes (a placeholder there would rewrite a cached prefix
/// for nothing the window needs). One that would not save is not minted.
pub(crate) fn placehold(pass: &mut Pass<'_>, parts: &mut [Part]) {
    let ctx = pass.ctx;
    for p in parts.iter_mut() {
        if p.turn >= ctx.turn || !holds_inline_media(p) {
            continue;
        }
        let mut held = p.clone();
        apply_placeholder(&mut held, ctx.estimator);
        if held.tokens >= p.tokens {
            continue;
        }
        pass.change(p.tokens - held.tokens, 0);
        *p = held;
        let key = placeholder_key(p.turn, &p.address);
        pass.new_entries
            .push((key, Minted::Value(Entry::Placeholder.to_value())));
        pass.placeholders += 1;
    }
}

/// Shrink tool parts for which `eligible` holds, oldest first, toward `target`.
/// The target is checked only between generations, so a generation is never
/// bisected. A part with no stored form is a miss: skipped, never dropped.
pub(crate) fn shrink(
    pass: &mut Pass<'_>,
    tier: Tier,
    parts: &mut [Part],
    eligible: impl Fn(&Part) -> bool,
    target: u64,
) -> Result<TierReport, ReadError> {
    let ctx = pass.ctx;
    let mut r = TierReport {
        tier,
        ..TierReport::default()
    };
    let mut current_generation = None;
    for p in parts.iter_mut() {
        if p.state != PartState::Raw || !p.is_tool() || !eligible(p) {
            continue;
        }
        if p.generation != current_generation {
            if pass.predicted <= target {
                break;
            }
            current_generation = p.generation;
        }
        let Some(id) = p.tool_id() else { continue };
        let Some(form) = pass.store.tool_forms.form(id)? else {
            r.misses += 1;
            pass.misses += 1;
            continue;
        };
        let before = p.tokens;
        let tool_id = id.to_string();
        let entry = if form.rule == "drop" {
            apply_shell(p, ctx.estimator);
            r.parts_dropped += 1;
            Minted::Value(Entry::Drop.to_value())
        } else {
            apply_form(p, &form.rule, &form.form, ctx.estimator);
            r.parts_shrunk += 1;
            // Not the form itself: the part holds it now, and the entry is
            // written from the stored form (the same bytes).
            Minted::StoredForm { tool_id }
        };
        let saved = before.saturating_sub(p.tokens);
        r.tokens_saved += saved;
        pass.change(saved, 0);
        pass.new_entries.push((p.address.clone(), entry));
    }
    Ok(r)
}

/// Positions where the parts may be cut: no generation has parts on both sides.
pub(crate) fn legal_boundaries(parts: &[Part]) -> Vec<bool> {
    let n = parts.len();
    let mut prefix_max = vec![0u32; n + 1];
    for (i, p) in parts.iter().enumerate() {
        prefix_max[i + 1] = prefix_max[i].max(p.generation.unwrap_or(0));
    }
    let mut suffix_min = vec![u32::MAX; n + 1];
    for i in (0..n).rev() {
        suffix_min[i] = suffix_min[i + 1].min(parts[i].generation.unwrap_or(u32::MAX));
    }
    (0..=n)
        .map(|b| b == 0 || b == n || prefix_max[b] < suffix_min[b])
        .collect()
}

/// Fold the oldest prefix, ending at a legal boundary no later than `cap`, as
/// little as reaches `target` (the raw tail kept is the larger of what fits
/// and the protected window). Returns `None` when there is nothing to fold.
pub(crate) fn floor(
    pass: &mut Pass<'_>,
    tier: Tier,
    parts: &mut Vec<Part>,
    cap: usize,
    target: u64,
) -> Option<TierReport> {
    let ctx = pass.ctx;
    // What the fold extends: the summary at the head of the parts, or a
    // `## Task Context` the session carried in, which opens its record.
    let prior = parts.first().and_then(Prior::of);
    let start = usize::from(prior.is_some());
    let legal = legal_boundaries(parts);
    let cap = cap.min(parts.len());
    let head_tokens = if start == 1 { parts[0].tokens } else { 0 };
    // The new head's size is not known before summarizing: assume the cap.
    let summary_guess = ctx.budget.summary_budget_tokens.max(head_tokens);
    let mut folded_tokens = 0u64;
    let mut boundary = None;
    for b in start + 1..=cap {
        folded_tokens += parts[b - 1].tokens;
        if !legal[b] {
            continue;
        }
        boundary = Some(b);
        let after = pass.after(folded_tokens + head_tokens, summary_guess);
        if after <= target {
            break;
        }
    }
    let b = boundary?;
    let span: Vec<SpanEntry<'_>> = parts[start..b].iter().filter_map(span_entry).collect();
    let later: Vec<ToolCall<'_>> = parts[b..].iter().filter_map(later_call).collect();
    let request = SummaryRequest {
        prior: prior.as_ref().map(|p| p.text.as_str()),
        span: &span,
        later: &later,
        budget_tokens: ctx.budget.summary_budget_tokens,
        estimator: ctx.estimator,
    };
    let (summary, fallback) = match ctx.summarizer.summarize(&request) {
        Ok(s) => (s, false),
        // The floor must always produce something.
        Err(_) => (
            // If even the fallback fails, the fold is declined.
            ctx.fallback.summarize(&request).ok()?,
            true,
        ),
    };
    let mut h = prior.as_ref().map_or_else(coverage_start, |p| p.coverage);
    for p in &parts[start..b] {
        h = coverage_next(&h, &p.address);
    }
    let covers = prior.as_ref().map_or(0, |p| p.covers) + (b - start) as u64;
    let key = coverage_key(&h);
    let entry = Entry::Summary {
        text: summary.text.clone(),
        covers,
        summarizer: summary.summarizer.clone(),
        extends: prior
            .as_ref()
            .and_then(|p| p.stored.then(|| coverage_key(&p.coverage))),
        minted_turn: ctx.turn,
        minted_call: ctx.call,
    };
    let removed: u64 = parts[..b].iter().map(|p| p.tokens).sum();
    let head = summary_part(
        &parts[b - 1],
        SummaryHead {
            text: summary.text,
            coverage: h,
            covers,
            summarizer: summary.summarizer.clone(),
            minted_at: (ctx.turn, ctx.call),
        },
        ctx.estimator,
    );
    let added = head.tokens;
    if added >= removed {
        // A fold that saves nothing only loses detail: decline it, store nothing.
        return None;
    }
    pass.new_entries
        .push((key.clone(), Minted::Value(entry.to_value())));
    parts.splice(..b, std::iter::once(head));
    let saved = removed.saturating_sub(added);
    pass.change(removed, added);
    Some(TierReport {
        tier,
        tokens_saved: saved,
        parts_folded: (b - start) as u64,
        coverage: Some(key),
        summarizer: Some(summary.summarizer),
        summarizer_fallback: fallback,
        ..TierReport::default()
    })
}

/// The summary a fold extends.
struct Prior {
    /// Its sections (no `## Task Context` heading).
    text: String,
    /// The coverage of the raw parts it stands for.
    coverage: [u8; 32],
    covers: u64,
    /// Whether it is a summary this engine stored (else a carried one).
    stored: bool,
}

impl Prior {
    fn of(first: &Part) -> Option<Prior> {
        if let Some(h) = first.summary() {
            return Some(Prior {
                text: h.text.clone(),
                coverage: h.coverage,
                covers: h.covers,
                stored: true,
            });
        }
        let text = carried_task_context(first)?;
        Some(Prior {
            text: text.to_string(),
            coverage: coverage_next(&coverage_start(), &first.address),
            covers: 1,
            stored: false,
        })
    }
}

/// The sections of compactor's own `## Task Context` when `p` is a
/// carried summary holding one.
fn carried_task_context(p: &Part) -> Option<&str> {
    match (&p.kind, &p.body) {
        (
            Kind::CarriedSummary,
            PartBody::Block {
                block: Block::Text { text },
                ..
            },
        ) => task_context_sections(text),
        _ => None,
    }
}

/// Codex 0.40 wraps shell output as `{"output": ..., "metadata": {...}}`; the
/// record keeps it verbatim, the summarizer is shown the output itself.
pub(crate) fn unwrap_envelope(text: String) -> String {
    if text.starts_with("{\"output\"")
        && let Ok(serde_json::Value::Object(env)) = serde_json::from_str(&text)
        && let Some(serde_json::Value::String(inner)) = env.get("output")
    {
        return inner.clone();
    }
    text
}

/// A tool call the view keeps raw after the folded span, as the summarizer
/// is shown it: its input and outcome, not its output.
fn later_call(p: &Part) -> Option<ToolCall<'_>> {
    let PartBody::Tool {
        id,
        name,
        input,
        output,
    } = &p.body
    else {
        return None;
    };
    Some(ToolCall {
        step: p.step,
        id: id.clone(),
        name: name.clone(),
        input: Cow::Borrowed(recorded_input(p, input)),
        output: Cow::Borrowed(""),
        is_error: output.as_ref().is_some_and(|o| o.is_error),
        interrupted: output.is_none(),
    })
}

/// The head a stored summary restored, brought up to date when the calls
/// the view keeps after it contradict it (`Summarizer::refresh`): the head
/// part is replaced and the refreshed entry returned, under the same
/// coverage key, for the call to store.
pub(crate) fn refresh_head(
    parts: &mut [Part],
    ctx: &CallContext<'_>,
    store: StoreView<'_>,
) -> Result<Option<(String, Value)>, ReadError> {
    let Some(head) = parts.first().and_then(Part::summary) else {
        return Ok(None);
    };
    let later: Vec<ToolCall> = parts[1..].iter().filter_map(later_call).collect();
    if later.is_empty() {
        return Ok(None);
    }
    let Some(text) = ctx.summarizer.refresh(&head.text, &later) else {
        return Ok(None);
    };
    if text == head.text {
        return Ok(None);
    }
    let key = coverage_key(&head.coverage);
    let Some(Entry::Summary {
        covers,
        summarizer,
        extends,
        minted_turn,
        minted_call,
        ..
    }) = store.snapshot.entry(&key)?
    else {
        // A head not from the store (a carried summary): nothing to update.
        return Ok(None);
    };
    let entry = Entry::Summary {
        text: text.clone(),
        covers,
        summarizer,
        extends,
        minted_turn,
        minted_call,
    };
    let mut fresh = head.clone();
    fresh.text = text;
    parts[0] = summary_part(&parts[0], fresh, ctx.estimator);
    Ok(Some((key, entry.to_value())))
}

/// A tool call's input as recorded, whatever form the view shows.
fn recorded_input<'p>(p: &'p Part, shown: &'p Value) -> &'p Value {
    p.raw_input.as_deref().unwrap_or(shown)
}

/// What the summarizer is shown of a part: terminal control sequences
/// stripped, an ask cut down to its request (`clean`).
pub(crate) fn span_entry(p: &Part) -> Option<SpanEntry<'_>> {
    Some(match &p.body {
        PartBody::Summary(_) => return None,
        PartBody::Tool {
            id,
            name,
            input,
            output,
        } => SpanEntry::ToolCall(ToolCall {
            step: p.step,
            id: id.clone(),
            name: name.clone(),
            input: Cow::Borrowed(recorded_input(p, input)),
            output: p.raw_output.as_deref().or(output.as_ref()).map_or(
                Cow::Borrowed(NO_RESULT_TEXT),
                |o| {
                    let text = match &o.content {
                        ToolContent::Text(t) => Cow::Borrowed(t.as_str()),
                        blocks => Cow::Owned(tool_content_text(blocks)),
                    };
                    stripped_cow(unwrapped(text))
                },
            ),
            is_error: output.as_ref().is_some_and(|o| o.is_error),
            interrupted: output.is_none(),
        }),
        PartBody::Block { block, .. } => {
            // Read in place: a large text is not copied to be summarized.
            let text: Cow<'_, str> = match block {
                Block::Text { text } => Cow::Borrowed(text),
                Block::Thinking { thinking, .. } => {
                    return Some(SpanEntry::Reasoning {
                        step: p.step,
                        text: stripped(thinking),
                    });
                }
                Block::RedactedThinking { .. } | Block::Image { .. } => return None,
                other => Cow::Owned(crate::view::text::block_text(other)),
            };
            let text = stripped_cow(text);
            match p.kind {
                // A slash-command wrapper or injected context alone is no ask.
                Kind::Ask => match request_cow(&text) {
                    Some(ask) => SpanEntry::Ask {
                        turn: p.turn,
                        text: ask,
                    },
                    None => SpanEntry::Context { text },
                },
                Kind::Interrupt => SpanEntry::Interrupt { text },
                Kind::Generation => SpanEntry::AssistantText { step: p.step, text },
                // A summary in another format (the client's own) is mined as
                // the agent's own summaries are.
                Kind::CompactSummary | Kind::CarriedSummary => SpanEntry::AgentSummary { text },
                _ => SpanEntry::Context { text },
            }
        }
    })
}

/// [`stripped`] of a text borrowed or owned, for as long as it lives.
fn stripped_cow(text: Cow<'_, str>) -> Cow<'_, str> {
    match text {
        Cow::Borrowed(t) => stripped(t),
        Cow::Owned(t) => Cow::Owned(strip_controls_owned(t)),
    }
}

/// [`request`] of a text borrowed or owned, for as long as it lives.
fn request_cow<'a>(text: &Cow<'a, str>) -> Option<Cow<'a, str>> {
    match text {
        Cow::Borrowed(t) => request(t),
        Cow::Owned(t) => request(t).map(|r| Cow::Owned(r.into_owned())),
    }
}

/// [`unwrap_envelope`] of a text borrowed or owned.
fn unwrapped(text: Cow<'_, str>) -> Cow<'_, str> {
    if text.starts_with("{\"output\"") {
        Cow::Owned(unwrap_envelope(text.into_owned()))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::CharsPerToken;
    use crate::engine::parts::reconstruct;
    use crate::model::{Message, Role, ToolContent};

    fn entries(msgs: &[Message]) -> Vec<SpanEntry<'static>> {
        let est = CharsPerToken::default();
        reconstruct(msgs, &est)
            .iter()
            .filter_map(span_entry)
            .map(SpanEntry::into_owned)
            .collect()
    }

    fn ask(text: &str) -> Message {
        Message::new(
            Role::User,
            Kind::Ask,
            vec![Block::Text { text: text.into() }],
            1,
        )
    }

    /// Issue 14's losses, at the seam every summarizer reads.
    #[test]
    fn the_span_shows_requests_not_wrappers_and_no_control_sequences() {
        let got = entries(&[
            ask(
                "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
            ),
            ask(
                "# Context from my IDE setup:\n\n## Open tabs:\n- a.ts\n\n## My request for Codex:\ncan you run lint, test and check-types",
            ),
            Message::new(
                Role::Assistant,
                Kind::Generation,
                vec![Block::ToolUse {
                    id: "t1".into(),
                    name: "Bash".into(),
                    input: serde_json::json!({"command": "npm test"}),
                }],
                2,
            ),
            Message::tool_result(
                "t1".into(),
                ToolContent::Text("\u{1b}[31m⎯⎯⎯ FAIL\u{1b}[39m a.test.ts".into()),
                true,
                3,
            ),
        ]);
        assert!(matches!(&got[0], SpanEntry::Context { .. }), "{got:?}");
        assert_eq!(
            got[1],
            SpanEntry::Ask {
                turn: 0,
                text: "can you run lint, test and check-types".into()
            }
        );
        assert!(
            matches!(&got[2], SpanEntry::ToolCall(c) if c.output == "⎯⎯⎯ FAIL a.test.ts"),
            "{got:?}"
        );
    }
}
