//! The mask reference: observation masking as the literature runs it
//! ("The Complexity Trap", Lindenbauer et al., JetBrains Research, 2025:
//! SWE-agent's `last_n_observations` history processor with n = 10). At
//! every call the last [`KEEP_OUTPUTS`] tool outputs stay as they are and
//! every older one becomes a one-line placeholder; the calls themselves,
//! the asks and the assistant's text stay, and no summary is written. It
//! runs at every call, whatever the window: a view it leaves over the
//! window is a call a provider would refuse.
//!
//! Masking moves the cached prefix's end at every call once more than
//! [`KEEP_OUTPUTS`] outputs exist (the output that falls out of the last
//! ten is rewritten), so what is held is only the view's tail, from the
//! oldest output still kept: what comes before it is final (every output
//! there is masked, and no later row changes a part once its call has its
//! result), so its blocks are priced and their probe text scanned once, as
//! they leave the tail, and dropped. Tokens are the estimate, as the
//! replay's cost model counts them.

use crate::engine::estimate::block_tokens;
use crate::engine::ladder::legal_boundaries;
use crate::engine::parts::{PartBody, PartState, PartsBuilder};
use crate::engine::projection::project_continued;
use crate::model::{Block, ToolContent};
use crate::probe::Probe;
use crate::session::cost::Totals;
use crate::view::ViewRole;

use super::append::AppendScorer;
use super::{
    CallTally, History, PolicyFields, ReadRows, ReferenceRecord, Row, RowKind, window_status,
};

/// Tool outputs kept whole: the paper's setting (its configurations name it
/// `M = 10`, SWE-agent's `last_n_observations: n: 10`), the one it reports
/// as matching LLM summarization's solve rate at half the raw agent's cost.
pub(crate) const KEEP_OUTPUTS: usize = 10;

/// The rule a masked part is marked with.
const MASKED: &str = "mask";

/// What an older output becomes: one line, no pointer to it.
pub(crate) fn placeholder(content: &ToolContent) -> ToolContent {
    let lines = crate::view::text::tool_content_text(content)
        .lines()
        .count();
    ToolContent::Text(format!("[old tool output omitted: {lines} lines]"))
}

/// Mask `record` at every call, keeping the last `keep` tool outputs
/// ([`KEEP_OUTPUTS`] as the literature does), scoring each view with
/// `probes`, its rows read with `read` as the calls reach them. `w_eff`
/// only tells the calls over the window.
pub(crate) fn mask_row<E>(
    record: &ReferenceRecord<'_>,
    (policy, w_eff, keep): (PolicyFields, u64, usize),
    probes: Vec<Probe>,
    read: &mut ReadRows<'_, E>,
) -> Result<Row, E> {
    let est = record.estimator;
    let mut history = History::of(record);
    let mut scorer = AppendScorer::new(probes);
    let mut totals = Totals::default();
    let mut tally = CallTally::default();
    // The blocks before the tail: their tokens (the tail's are re-counted).
    let mut settled_tokens = 0u64;
    // The last view's tail, as blocks with their roles and tokens.
    let mut tail: Vec<(ViewRole, Block, u64)> = Vec::new();
    let mut masked_calls = 0;
    // Whether blocks were settled at an earlier call: the first blocks of
    // the view carry its opening placeholder, if any.
    let mut any_settled = false;
    for (i, call) in record.calls.iter().enumerate() {
        history.feed(call.history_end, read)?;
        let builder = &mut history.parts;
        let masked = mask_outputs(builder, keep, est);
        masked_calls += u32::from(masked);
        // Settle what no later call changes: up to the first part that can
        // still change (an output still kept, or a call of the latest
        // generation still waiting for its result: one that never gets it
        // before a later generation is taken as never answered), cut before
        // a part no generation spans the cut to.
        let parts = builder.parts();
        let latest = parts.iter().filter_map(|p| p.generation).max();
        let open = parts
            .iter()
            .position(|p| match &p.body {
                PartBody::Tool {
                    output: Some(_), ..
                } => p.state == PartState::Raw,
                PartBody::Tool { output: None, .. } => p.generation == latest,
                _ => false,
            })
            .unwrap_or(parts.len());
        // A boundary at the end is not settled: the next row may continue
        // the generation before it.
        let legal = legal_boundaries(parts);
        let cut = (0..=open.min(parts.len().saturating_sub(1)))
            .rev()
            .find(|&b| legal[b])
            .unwrap_or(0);
        let settled = match cut {
            0 => Vec::new(),
            _ => blocks_of(&parts[..cut], !any_settled, est),
        };
        let now = blocks_of(&parts[cut..], !any_settled && cut == 0, est);
        any_settled |= cut > 0;
        builder.drop_front(cut);
        // The cache split against the last view: its tail against what
        // settled since and the tail now.
        let shared = tail
            .iter()
            .zip(settled.iter().chain(&now))
            .take_while(|((r1, b1, _), (r2, b2, _))| r1 == r2 && b1 == b2)
            .count();
        let shared_tokens: u64 = tail[..shared].iter().map(|(_, _, t)| t).sum();
        let added: u64 = settled.iter().chain(&now).map(|(_, _, t)| t).sum();
        let total = record.overhead + settled_tokens + added;
        let (r, w) = match i {
            0 => (0, total),
            _ => {
                let r = record.overhead + settled_tokens + shared_tokens;
                (r, total - r)
            }
        };
        if i > 0 && shared < tail.len() {
            totals.prefix_breaks += 1;
        }
        record.add_call(&mut totals, i, r, w);
        settled_tokens += settled.iter().map(|(_, _, t)| t).sum::<u64>();
        scorer.extend_blocks(settled.iter().map(|(_, b, _)| b));
        let e = scorer.score_with_tail(now.iter().map(|(_, b, _)| b), call.history_end);
        let tokens = record.overhead + settled_tokens + now.iter().map(|(_, _, t)| t).sum::<u64>();
        tally.add_counts(i as u32 + 1, tokens, window_status(tokens, w_eff), &[], e);
        tail = now;
    }
    Ok(tally.window_row(RowKind::Mask, record.session, policy, &totals, masked_calls))
}

/// Mask every tool output held but the last `keep` of the whole history
/// (those before the parts held are masked already): whether one was
/// masked now.
pub(crate) fn mask_outputs(
    builder: &mut PartsBuilder,
    keep: usize,
    est: &dyn crate::engine::estimate::Estimator,
) -> bool {
    let outputs: Vec<usize> = builder
        .parts()
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            matches!(
                &p.body,
                PartBody::Tool {
                    output: Some(_),
                    ..
                }
            )
        })
        .map(|(i, _)| i)
        .collect();
    let older = outputs.len().saturating_sub(keep);
    let mut any = false;
    for &i in &outputs[..older] {
        let p = &mut builder.parts_mut()[i];
        if p.state != PartState::Raw {
            continue;
        }
        if let PartBody::Tool {
            output: Some(o), ..
        } = &mut p.body
        {
            o.content = placeholder(&o.content);
        }
        p.state = PartState::Shrunk {
            rule: MASKED.to_string(),
        };
        p.measure(est);
        any = true;
    }
    any
}

/// The blocks `parts` project to after the parts before them (`first`: no
/// part comes before them), with their roles and tokens.
fn blocks_of(
    parts: &[crate::engine::parts::Part],
    first: bool,
    est: &dyn crate::engine::estimate::Estimator,
) -> Vec<(ViewRole, Block, u64)> {
    let (view, _) = match first {
        true => crate::engine::projection::project(parts),
        false => project_continued(parts),
    };
    view.messages
        .into_iter()
        .flat_map(|m| {
            let role = m.role;
            m.content.into_iter().map(move |b| (role, b))
        })
        .map(|(role, b)| {
            let t = block_tokens(est, &b);
            (role, b, t)
        })
        .collect()
}
