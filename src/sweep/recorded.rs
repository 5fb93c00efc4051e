//! The recorded reference: what the client itself sent and paid, its own
//! compactions included.
//!
//! Tokens and cost are the transcript's recorded usage (uncached input,
//! cache reads and writes, output), priced at the session's model. Its
//! views are what `probe --recorded` scores: the record since the client's
//! last own compaction summary, with the Task Context a compactor hook put
//! back. Those views are also priced as the policies are (estimated tokens,
//! the same cache model), so a policy's saving is measured on one basis.

use crate::engine::Status;
use crate::hooks::compare::sent_view;
use crate::model::Kind;
use crate::probe::{Probe, Scorer};
use crate::session::cost::{CacheSplitter, Prices, Totals};
use crate::store::ClientCompaction;
use crate::view::View;

use super::{CallTally, Estimated, Record, Row, RowKind};

/// The recorded row of `record`, its views scored with `probes`.
pub(crate) fn recorded_row(
    record: &Record<'_>,
    compactions: &[ClientCompaction],
    probes: Vec<Probe>,
) -> Row {
    let p = &record.prices;
    let mut scorer = Scorer::new(probes);
    let mut splitter = CacheSplitter::default();
    let mut estimated = Totals::default();
    let mut tally = CallTally::default();
    let mut prev: Option<View> = None;
    let (mut prompt, mut read, mut write, mut output, mut cost) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut usage_calls, mut compacted) = (0u32, 0u32);
    let mut peak = 0;
    for (i, call) in record.calls.iter().enumerate() {
        let start = match i {
            0 => None,
            _ => Some(record.calls[i - 1].history_end),
        };
        // A compaction of the client's between two calls.
        if let Some(from) = start
            && record.rows[from..call.history_end]
                .iter()
                .any(|m| matches!(m.kind, Kind::CompactSummary | Kind::CompactBoundary))
        {
            compacted += 1;
        }
        if let Some(u) = call.usage {
            usage_calls += 1;
            prompt += u.prompt_tokens();
            read += u.cache_read_input_tokens;
            write += u.cache_creation_input_tokens;
            output += u.output_tokens;
            peak = peak.max(u.prompt_tokens());
            cost += Prices::cost(p.input, u.input_tokens)
                + Prices::cost(p.cache_read, u.cache_read_input_tokens)
                + Prices::cost(p.cache_write, u.cache_creation_input_tokens)
                + Prices::cost(p.output, u.output_tokens);
        }
        let view = sent_view(&record.rows[..call.history_end], compactions);
        let (r, w) = splitter.split(prev.as_ref(), &view, record.overhead, record.estimator);
        record.add_call(&mut estimated, i, r, w);
        let e = scorer.evaluate(&view, call.history_end);
        let tokens = call.usage.map_or(0, |u| u.prompt_tokens());
        tally.add(i as u32 + 1, tokens, Status::Ok, &[], &e);
        prev = Some(view);
    }
    let c = &estimated.compacted;
    Row {
        kind: RowKind::Recorded,
        session: record.session.task.clone(),
        model: record.session.model.clone(),
        policy: None,
        calls: record.calls.len() as u32,
        over_window_calls: None,
        breakthrough_calls: None,
        folds: Some(compacted),
        tiers: None,
        trimmed_calls: None,
        prompt_tokens: prompt,
        cache_read_tokens: read,
        cache_write_tokens: write,
        output_tokens: output,
        cost_micros: cost,
        peak_tokens: peak,
        critical_lost: tally.last_critical_lost,
        worst: tally.worst,
        basis: "recorded".to_string(),
        usage_calls: Some(usage_calls),
        estimated: Some(Estimated {
            prompt_tokens: c.prompt_tokens,
            cache_read_tokens: c.cache_read_tokens,
            cache_write_tokens: c.cache_write_tokens,
            cost_micros: c.cost_cached_usd.0 + estimated.cost_output_usd.0,
        }),
    }
}
