//! The raw history as a run builds it from the record: the engine's
//! [`RawParts`] fed the record's rows, read as they are needed.

use std::collections::HashSet;

use super::record::{Measures, TaskRecordIndex};
use crate::engine::checkpoint::RawParts;
use crate::engine::estimate::Estimator;
use crate::engine::parts::Part;
use crate::store::StoreError;

/// The raw history's parts up to some row, kept only from the last part a
/// stored summary folded on (see [`Driver::raw_parts`](super::driver::Driver)):
/// no stored coverage ends before it is the longest while that summary is
/// stored (the chain's first hash).
pub(super) struct RawHistory {
    pub(super) parts: RawParts,
    /// Rows fed.
    pub(super) fed: usize,
}

impl RawHistory {
    /// An empty history, looking its tool calls up in the record's shared
    /// ids (those `measures` keep).
    pub(super) fn new(measures: &Measures) -> RawHistory {
        RawHistory {
            parts: RawParts::new(measures.builder.tool_calls().clone()),
            fed: 0,
        }
    }

    /// Feed rows `self.fed..end` of the record, read as they are needed;
    /// `take`: handed over rather than copied (no one else reads them from
    /// the index: a run's last call; a probe beside a replay reads the
    /// rows the replay read, from the block they were read into).
    pub(super) fn feed(
        &mut self,
        index: &TaskRecordIndex,
        end: usize,
        est: &dyn Estimator,
        measures: &mut Measures,
        take: bool,
    ) -> Result<(), StoreError> {
        let parts = &mut self.parts;
        if take {
            index.each_row_owned(self.fed, end, |i, m| {
                measures.offer(index, i, &m, est);
                parts.push_owned(m, est);
            })?;
        } else {
            index.each_row(self.fed, end, |i, m| {
                parts.push(m, est);
                measures.offer(index, i, m, est);
            })?;
        }
        self.fed = end;
        self.parts.chain_new_parts();
        Ok(())
    }

    /// Whether a stored summary still folds what was dropped, so that no
    /// shorter one can be the longest: when another writer forgot it, the
    /// history must be built again from the first row.
    pub(super) fn fold_kept(&self, covers: &HashSet<[u8; 32]>) -> bool {
        self.parts.fold_kept(covers)
    }

    /// Built again from the first row: a summary that folded less than what
    /// was dropped is the longest one now (another writer forgot state).
    pub(super) fn rebuilt(
        index: &TaskRecordIndex,
        end: usize,
        est: &dyn Estimator,
        measures: &mut Measures,
        take: bool,
    ) -> Result<RawHistory, StoreError> {
        let mut r = RawHistory::new(measures);
        r.feed(index, end, est, measures, take)?;
        Ok(r)
    }

    /// The parts, handed over: no later call reads this history.
    pub(super) fn hand_over(self) -> Vec<Part> {
        self.parts.hand_over()
    }
}

/// How many rows the raw history is fed at a time before what a stored
/// summary folds is dropped (a few under test, so that the property tests'
/// short sessions drop between slices too).
pub(super) const FEED_ROWS: usize = if cfg!(test) { 3 } else { 2048 };
