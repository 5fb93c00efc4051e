//! The trim reference: what plain drop-oldest trimming would send at the
//! same window, as `trim_messages(strategy="last")` does.
//!
//! At each call the raw history (the engine's parts, so a tool call and its
//! result go together) is cut from the front, a generation at a time, until
//! the system prompt and tools plus what is left fit `w_eff`; the last
//! generation or user turn is always kept. There is no summary, no tool
//! output reduction and no hysteresis: once the history outgrows the window
//! every call drops a little more, so the cached prefix breaks at every call.
//! Tokens are the estimate (as the replay's cost model counts them); a call
//! whose last generation alone does not fit is over the window.

use crate::engine::Status;
use crate::engine::parts::Part;
use crate::engine::projection::project;
use crate::probe::{Probe, Scorer};
use crate::session::cost::{CacheSplitter, Totals};
use crate::view::View;

use super::{
    CallTally, History, PolicyFields, ReadRows, ReferenceRecord, Row, RowKind, window_status,
};

/// Trim `record` at every call to fit `w_eff`, scoring each view with
/// `probes`, its rows read with `read` as the calls reach them (what is
/// held is the trimmed history, not the record).
pub(crate) fn trim_row<E>(
    record: &ReferenceRecord<'_>,
    policy: PolicyFields,
    w_eff: u64,
    probes: Vec<Probe>,
    read: &mut ReadRows<'_, E>,
) -> Result<Row, E> {
    let mut history = History::of(record);
    let mut views = WholeViews::new(probes);
    let mut trimmed_calls = 0;
    for (i, call) in record.calls.iter().enumerate() {
        history.feed(call.history_end, read)?;
        let builder = &mut history.parts;
        let mut kept: u64 = builder.parts().iter().map(|p| p.tokens).sum();
        let mut trimmed = false;
        while record.overhead + kept > w_eff {
            let first = first_group(builder.parts());
            if first == builder.parts().len() {
                break;
            }
            kept -= builder.parts()[..first]
                .iter()
                .map(|p| p.tokens)
                .sum::<u64>();
            builder.drop_front(first);
            trimmed = true;
        }
        trimmed_calls += u32::from(trimmed);
        let tokens = record.overhead + kept;
        let (view, _) = project(builder.parts());
        views.call(record, i, view, tokens, window_status(tokens, w_eff));
    }
    Ok(views.row(RowKind::Trim, record, policy, trimmed_calls))
}

/// A reference priced and scored on whole views, call after call: each
/// view split for the prompt cache against the one before and scored whole
/// (the trim reference, and the whole-record evaluations the lean
/// references are held to).
pub(crate) struct WholeViews {
    scorer: Scorer,
    splitter: CacheSplitter,
    totals: Totals,
    tally: CallTally,
    prev: Option<View>,
}

impl WholeViews {
    pub(crate) fn new(probes: Vec<Probe>) -> WholeViews {
        WholeViews {
            scorer: Scorer::new(probes),
            splitter: CacheSplitter::default(),
            totals: Totals::default(),
            tally: CallTally::default(),
            prev: None,
        }
    }

    /// Call `i`'s view, `tokens` its prompt and `status` its status.
    pub(crate) fn call(
        &mut self,
        record: &ReferenceRecord<'_>,
        i: usize,
        view: View,
        tokens: u64,
        status: Status,
    ) {
        let est = record.estimator;
        let (read, write) = self
            .splitter
            .split(self.prev.as_ref(), &view, record.overhead, est);
        self.totals.prefix_breaks += u32::from(self.splitter.broke());
        record.add_call(&mut self.totals, i, read, write);
        let e = self.scorer.evaluate(&view, record.calls[i].history_end);
        self.tally.add(i as u32 + 1, tokens, status, &[], &e);
        self.prev = Some(view);
    }

    /// The row of a reference of this `kind`, `changed_calls` the calls at
    /// which it trimmed or masked.
    pub(crate) fn row(
        self,
        kind: RowKind,
        record: &ReferenceRecord<'_>,
        policy: PolicyFields,
        changed_calls: u32,
    ) -> Row {
        self.tally
            .window_row(kind, record.session, policy, &self.totals, changed_calls)
    }
}

/// How many parts the first group holds: one generation's parts (its text,
/// reasoning and tool calls with their results), or one user-side part.
pub(crate) fn first_group(parts: &[Part]) -> usize {
    match parts.first().and_then(|p| p.generation) {
        Some(g) => parts
            .iter()
            .position(|p| p.generation != Some(g))
            .unwrap_or(parts.len()),
        None => 1.min(parts.len()),
    }
}
