//! The raw history's parts as a run builds them from the record, kept from
//! the last fold on, with the coverage chain over their addresses.

use std::collections::{HashMap, HashSet, VecDeque};

use super::record::{Measures, TaskRecordIndex};
use super::stored::SnapshotCache;
use crate::engine::estimate::Estimator;
use crate::engine::parts::{PartsBuilder, ToolCalls, coverage_next, coverage_start};
use crate::store::StoreError;

/// The raw history's parts up to some row, with the coverage chain over
/// their addresses. Addresses never change once a part exists (a later tool
/// result only fills its call's output), so the chain only ever grows. The
/// parts and the chain are kept only from the last part a stored summary
/// folded on (see [`Driver::raw_parts`]): what a summary folds is never shown
/// again while the summary is stored, and no stored coverage ends before it
/// is the longest while that summary is stored (the chain's first hash), so
/// the history costs what follows its last fold, not a hash per part.
pub(super) struct RawHistory {
    pub(super) builder: PartsBuilder,
    /// Rows fed.
    pub(super) fed: usize,
    /// `chain[i - builder.offset()]`: the coverage hash of parts `..=i`
    /// (of all parts made).
    pub(super) chain: VecDeque<[u8; 32]>,
    /// Where each hash of the chain is.
    pub(super) at: HashMap<[u8; 32], usize>,
}

impl RawHistory {
    /// An empty history, looking its tool calls up in the record's shared
    /// `ids` (those its measures keep).
    pub(super) fn new(ids: ToolCalls) -> RawHistory {
        RawHistory {
            builder: PartsBuilder::sharing(ids),
            fed: 0,
            chain: VecDeque::new(),
            at: HashMap::new(),
        }
    }

    /// Feed rows `self.fed..end` of the record, read as they are needed.
    pub(super) fn feed(
        &mut self,
        index: &TaskRecordIndex,
        end: usize,
        est: &dyn Estimator,
        measures: &mut Measures,
    ) -> Result<(), StoreError> {
        let builder = &mut self.builder;
        index.each_row(self.fed, end, |i, m| {
            builder.push(m, est);
            measures.offer(index, i, m, est);
        })?;
        self.fed = end;
        let offset = self.builder.offset();
        for i in offset + self.chain.len()..offset + self.builder.parts.len() {
            let prev = self.chain.back().copied().unwrap_or_else(coverage_start);
            let h = coverage_next(&prev, &self.builder.parts[i - offset].address);
            self.chain.push_back(h);
            self.at.entry(h).or_insert(i);
        }
        Ok(())
    }

    /// Drop the parts before part `i` (of all parts made), and their chain.
    pub(super) fn drop_front(&mut self, i: usize) {
        let offset = self.builder.offset();
        for (j, h) in self.chain.drain(..i - offset).enumerate() {
            if self.at.get(&h) == Some(&(offset + j)) {
                self.at.remove(&h);
            }
        }
        self.builder.drop_front(i - offset);
    }

    /// Whether a stored summary still folds what was dropped (the chain's
    /// first hash is a stored coverage), so that no shorter one can be the
    /// longest: when another writer forgot it, the history must be built
    /// again from the first row.
    pub(super) fn fold_kept(&self, covers: &HashSet<[u8; 32]>) -> bool {
        self.builder.offset() == 0 || self.chain.front().is_some_and(|h| covers.contains(h))
    }

    /// Built again from the first row: a summary that folded less than what
    /// was dropped is the longest one now (another writer forgot state).
    pub(super) fn rebuilt(
        index: &TaskRecordIndex,
        end: usize,
        est: &dyn Estimator,
        measures: &mut Measures,
    ) -> Result<RawHistory, StoreError> {
        let mut r = RawHistory::new(measures.builder.tool_calls().clone());
        r.feed(index, end, est, measures)?;
        Ok(r)
    }
}

/// How many rows the raw history is fed at a time before what a stored
/// summary folds is dropped (a few under test, so that the property tests'
/// short sessions drop between slices too).
pub(super) const FEED_ROWS: usize = if cfg!(test) { 3 } else { 2048 };

/// The stored summary coverage that is the longest prefix of the raw
/// history's parts: the index of the last part it folds, and its hash.
pub(super) fn longest_fold<'s>(
    snap: &'s SnapshotCache,
    raw: &RawHistory,
) -> Option<(usize, &'s [u8; 32])> {
    snap.covers
        .iter()
        .filter_map(|h| raw.at.get(h).map(|&i| (i, h)))
        .max_by_key(|(i, _)| *i)
}
