//! What a run keeps between its calls, as the engine offers it to the
//! session that drives it: the raw history's parts with the coverage chain
//! over them ([`RawParts`]), a call's parts as they grow from its
//! checkpoint ([`Growth`]), and where the last call's view hash and
//! coverage walk left off ([`Resume`]). All are caches of the derivation:
//! a fresh one gives the same output, with more work. The store names a
//! stored summary by the coverage hash it folds up to ([`coverage_key`],
//! [`decode_coverage_key`]).

use std::collections::{HashMap, HashSet, VecDeque};

use super::estimate::Estimator;
use super::parts::{ChainResume, Part, PartsBuilder, SummaryHead, ToolCalls};
pub(crate) use super::parts::{coverage_key, decode_coverage_key, reconstruct};
use super::parts::{coverage_next, coverage_start};
use super::restore::summary_part;
use crate::model::Message;
use crate::view::HashResume;

/// The raw history's parts as they are made from the record's rows, with
/// the coverage chain over their addresses. Addresses never change once a
/// part exists (a later tool result only fills its call's output), so the
/// chain only ever grows. Parts can be dropped from the front once a stored
/// summary folds them: what a summary folds is never shown again while it
/// is stored, so the history costs what follows its last fold.
pub struct RawParts {
    builder: PartsBuilder,
    /// `chain[i - builder.offset()]`: the coverage hash of parts `..=i`
    /// (of all parts made).
    chain: VecDeque<[u8; 32]>,
    /// Where each hash of the chain is.
    at: HashMap<[u8; 32], usize>,
}

impl RawParts {
    /// An empty history, looking its tool calls up in the record's shared
    /// `ids` (those its measures keep).
    pub fn new(ids: ToolCalls) -> RawParts {
        RawParts {
            builder: PartsBuilder::sharing(ids),
            chain: VecDeque::new(),
            at: HashMap::new(),
        }
    }

    /// The record's next row.
    pub fn push(&mut self, m: &Message, est: &dyn Estimator) {
        self.builder.push(m, est);
    }

    /// The record's next row, given up: its blocks moved into the parts.
    pub fn push_owned(&mut self, m: Message, est: &dyn Estimator) {
        self.builder.push_owned(m, est);
    }

    /// Extend the chain over the parts made since it was last extended.
    pub fn chain_new_parts(&mut self) {
        let offset = self.builder.offset();
        let parts = self.builder.parts();
        for i in offset + self.chain.len()..offset + parts.len() {
            let prev = self.chain.back().copied().unwrap_or_else(coverage_start);
            let h = coverage_next(&prev, &parts[i - offset].address);
            self.chain.push_back(h);
            self.at.entry(h).or_insert(i);
        }
    }

    /// How many parts were dropped from the front.
    pub fn offset(&self) -> usize {
        self.builder.offset()
    }

    /// The parts held (from [`RawParts::offset`] on).
    pub fn parts(&self) -> &[Part] {
        self.builder.parts()
    }

    /// The parts held, handed over: no later call reads this history.
    pub fn hand_over(self) -> Vec<Part> {
        self.builder.into_parts().0
    }

    /// Drop the parts before part `i` (of all parts made), and their chain.
    pub fn drop_front(&mut self, i: usize) {
        let offset = self.builder.offset();
        for (j, h) in self.chain.drain(..i - offset).enumerate() {
            if self.at.get(&h) == Some(&(offset + j)) {
                self.at.remove(&h);
            }
        }
        self.builder.drop_front(i - offset);
    }

    /// Whether a stored summary still folds what was dropped (the chain's
    /// first hash is among `covers`), so that no shorter one can be the
    /// longest.
    pub fn fold_kept(&self, covers: &HashSet<[u8; 32]>) -> bool {
        self.builder.offset() == 0 || self.chain.front().is_some_and(|h| covers.contains(h))
    }

    /// The stored coverage among `covers` that is the longest prefix of the
    /// parts: the index of the last part it folds, and its hash.
    pub fn longest_fold<'s>(&self, covers: &'s HashSet<[u8; 32]>) -> Option<(usize, &'s [u8; 32])> {
        covers
            .iter()
            .filter_map(|h| self.at.get(h).map(|&i| (i, h)))
            .max_by_key(|(i, _)| *i)
    }

    /// The parts a preflight starts from when the summary `head` folds
    /// parts `..=i`: the summary in the place of part `i`, then what follows
    /// it. What it folds is dropped (never shown again while it is stored).
    pub fn folded_at(&mut self, i: usize, head: SummaryHead, est: &dyn Estimator) -> Vec<Part> {
        let parts = &self.builder.parts()[i - self.builder.offset()..];
        let head = summary_part(&parts[0], head, est);
        let mut out = Vec::with_capacity(parts.len());
        out.push(head);
        out.extend_from_slice(&parts[1..]);
        self.drop_front(i);
        out
    }

    /// The chain's hashes held and how many are indexed, for tests.
    #[cfg(test)]
    pub(crate) fn chain(&self) -> (&VecDeque<[u8; 32]>, usize) {
        (&self.chain, self.at.len())
    }
}

/// A call's parts as they are made from the record's rows on top of its
/// checkpoint: the previous call's parts continued (a step within a turn),
/// or a history made afresh whose complete parts can be taken from the
/// front as the rows arrive (a preflight streaming its parts to the engine).
pub struct Growth {
    builder: PartsBuilder,
}

impl Growth {
    /// A history made afresh, looking its tool calls up in the record's
    /// shared `ids`.
    pub fn fresh(ids: ToolCalls) -> Growth {
        Growth {
            builder: PartsBuilder::sharing(ids),
        }
    }

    /// The previous call's `parts` continued, with its tool call index.
    pub fn continuing(parts: Vec<Part>, tool_index: HashMap<String, usize>) -> Growth {
        Growth {
            builder: PartsBuilder::continuing(parts, tool_index),
        }
    }

    /// The record's next row.
    pub fn push(&mut self, m: &Message, est: &dyn Estimator) {
        self.builder.push(m, est);
    }

    /// The record's next row, given up: its blocks moved into the parts.
    pub fn push_owned(&mut self, m: Message, est: &dyn Estimator) {
        self.builder.push_owned(m, est);
    }

    /// The parts at the front that no later row can change, taken out.
    pub fn take_complete(&mut self) -> Vec<Part> {
        let n = self.builder.complete();
        self.builder.take_front(n)
    }

    /// The parts held and the tool call index, for the next call to continue.
    pub fn finish(self) -> (Vec<Part>, HashMap<String, usize>) {
        self.builder.into_parts()
    }
}

/// Where the last call's view hash and coverage walk left off, for the next
/// call of the same run to resume from.
#[derive(Default)]
pub struct Resume {
    pub(crate) hash: HashResume,
    pub(crate) chain: ChainResume,
    /// The next call's parts are all its caller reads (a step's preflight):
    /// its view is neither projected nor hashed, and its report's view hash
    /// is left empty.
    pub(crate) parts_only: bool,
    /// The call's parts are let go by its caller as soon as it returns (a
    /// proxy's last call over a large body): the view takes their blocks
    /// rather than copies of them, and the call's parts are left empty.
    pub(crate) view_takes_parts: bool,
}

impl Resume {
    /// For a run of one call: its view is hashed without keeping a copy of
    /// it for a next call's hash.
    pub fn one_call() -> Resume {
        Resume {
            hash: HashResume::off(),
            ..Resume::default()
        }
    }

    /// For a run of one call whose view only its report needs: the view is
    /// hashed as it is projected and never held (the call's view is left
    /// empty, and so are its parts when no summary is stored).
    pub fn unkept() -> Resume {
        Resume {
            hash: HashResume::unkept(),
            ..Resume::default()
        }
    }

    /// [`Resume::one_call`] whose parts no one reads after it: the view
    /// takes their blocks (the same view; the call's parts are left empty).
    pub fn one_call_view_only() -> Resume {
        Resume {
            view_takes_parts: true,
            ..Resume::one_call()
        }
    }

    /// Whether the view is hashed as it is projected and not kept.
    pub fn keeps_no_view(&self) -> bool {
        self.hash.keeps_no_view()
    }

    /// Forget what the last call left (whether views are kept stays).
    pub fn reset(&mut self) {
        self.hash.reset();
        self.chain = ChainResume::default();
    }
}
