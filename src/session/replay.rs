//! A replay's timeline: each call's row, and what a prompt cache would have
//! done (through `session::cost`) for the compacted and the raw history.

use std::ops::Deref;
use std::sync::Arc;

use serde::Serialize;

use super::cost::{CacheSplitter, CacheTtl, expired};
use super::driver::Driver;
use super::record::TaskRecordIndex;
use super::settings::RunSettings;
use crate::engine::{CallOutput, CallReport, Status, Tier};
use crate::store::{Store, StoreError};
use crate::view::View;

/// One row of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    pub turn: u32,
    /// The model call (1 = the first).
    pub call: u32,
    pub tiers_fired: Vec<Tier>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub status: Status,
    pub view_hash: String,
    pub recorded_prompt_tokens: Option<u64>,
    pub parts_shrunk: u32,
    pub parts_dropped: u32,
    pub parts_folded: u64,
    /// Tokens a prompt cache would re-read (the prefix shared with the previous view).
    pub cache_read_tokens: u64,
    /// Tokens it would write (everything after that prefix).
    pub cache_write_tokens: u64,
    /// 1 when the view does not extend the previous call's (a prefix
    /// break: the cache is written again from the first block that
    /// differs), else 0; summed, the totals' `prefix_breaks`.
    pub prefix_breaks: u32,
    /// The raw, uncompacted history's prediction at this call, on the same
    /// basis as `tokens_before` and `tokens_after`.
    pub raw_tokens: u64,
    /// What the predictions rest on: `recorded` usage or the `estimate`.
    pub basis: crate::engine::Basis,
    /// Recorded tokens per estimated token the estimates were scaled by.
    pub ratio: crate::model::decimal::Ratio,
    pub ratio_measured: bool,
    pub synthetic_results: u32,
    pub messages: usize,
}

/// What a prompt cache would have done for the raw, uncompacted history at
/// a call (estimated tokens).
#[derive(Debug, Clone, Copy)]
pub struct RawCache {
    pub read: u64,
    pub write: u64,
    /// The cache had expired before this call (see [`CacheTtl`]): both
    /// histories read nothing.
    pub expired: bool,
}

/// A replay in progress: the driver and what the timeline carries from one
/// call to the next (the previous view, for the cache split). A
/// [`Run`](super::run::Run) holds one, over an index it borrows or owns
/// ([`Replayer::grow`]).
pub(super) struct Replayer<'a, I = &'a TaskRecordIndex>
where
    I: Deref<Target = TaskRecordIndex>,
{
    pub(super) driver: Driver<'a, I>,
    /// The overhead the cache and cost model adds to every estimate.
    overhead: u64,
    raw_prev: Option<u64>,
    prev_view: Option<Arc<View>>,
    splitter: CacheSplitter,
}

impl<'a, I: Deref<Target = TaskRecordIndex>> Replayer<'a, I> {
    pub(super) fn new(
        store: &Store,
        index: I,
        settings: RunSettings<'a>,
    ) -> Result<Self, StoreError> {
        let overhead = index.overhead(settings.estimator)?.unwrap_or(0);
        Ok(Replayer {
            driver: Driver::new(store, index, settings)?,
            overhead,
            raw_prev: None,
            prev_view: None,
            splitter: CacheSplitter::default(),
        })
    }

    /// Run call `k` (the next one after the previous call, or call 1) and
    /// hand `f` its row, output and the raw history's cache split.
    pub(super) fn call<E: From<StoreError>>(
        &mut self,
        store: &mut Store,
        k: u32,
        ttl: CacheTtl,
        f: impl FnOnce(&StepRow, &CallOutput, RawCache) -> Result<(), E>,
    ) -> Result<(), E> {
        let est = self.driver.estimator();
        let mut out = self.driver.step(store, k)?;
        let (read, write) =
            self.splitter
                .split(self.prev_view.as_deref(), &out.view, self.overhead, est);
        out.shared_blocks = self.splitter.shared_blocks();
        // The raw history at this call, for comparison, on the view's
        // measure (its blocks as sent): the view's tokens and what
        // compaction took out of its parts. A view that is the raw history
        // costs exactly what the raw history does.
        let raw_tokens = (read + write + self.driver.raw_estimate(k)?)
            .saturating_sub(out.report.estimated_messages);
        let raw_read = self.raw_prev.map_or(0, |p| p.min(raw_tokens));
        let (mut raw_read, mut raw_write) = (raw_read, raw_tokens - raw_read);
        let (mut read, mut write) = (read, write);
        // A pause longer than the cache lives: both histories start again.
        let expired_now = self.driver.index.cache_expired(k, ttl.millis());
        if expired_now {
            (read, write) = expired(read, write);
            (raw_read, raw_write) = expired(raw_read, raw_write);
        }
        let raw = RawCache {
            read: raw_read,
            write: raw_write,
            expired: expired_now,
        };
        let row = step_row(
            &out.report,
            self.driver.index.recorded_prompt(k),
            (read, write),
            self.splitter.broke(),
        );
        let done = f(&row, &out, raw);
        self.raw_prev = Some(raw_tokens);
        self.prev_view = Some(out.view);
        done
    }

    /// Go on over `index`, the task's record grown since (see [`Driver::grow`]).
    pub(super) fn grow(&mut self, store: &Store, index: I) -> Result<(), StoreError> {
        if let Some(o) = index.overhead(self.driver.estimator())? {
            self.overhead = o;
        }
        self.driver.grow(store, index)
    }
}

impl Replayer<'_, Box<TaskRecordIndex>> {
    /// Go on over the task's record as `store` holds it now (see
    /// [`Driver::grow_in_place`]).
    pub(super) fn grow_in_place(&mut self, store: &Store) -> Result<(), StoreError> {
        let before = self.driver.index.overhead_inputs();
        self.driver.grow_in_place(store)?;
        // The overhead rests on its inputs only.
        if self.driver.index.overhead_inputs() != before
            && let Some(o) = self.driver.index.overhead(self.driver.estimator())?
        {
            self.overhead = o;
        }
        Ok(())
    }
}

fn step_row(
    r: &CallReport,
    recorded: Option<u64>,
    (read, write): (u64, u64),
    broke: bool,
) -> StepRow {
    StepRow {
        turn: r.turn,
        call: r.call,
        tiers_fired: r.tiers_fired.clone(),
        tokens_before: r.tokens_before,
        tokens_after: r.tokens_after,
        status: r.status,
        view_hash: r.view_hash.clone(),
        recorded_prompt_tokens: recorded,
        parts_shrunk: r.tiers.iter().map(|t| t.parts_shrunk).sum(),
        parts_dropped: r.tiers.iter().map(|t| t.parts_dropped).sum(),
        parts_folded: r.tiers.iter().map(|t| t.parts_folded).sum(),
        cache_read_tokens: read,
        cache_write_tokens: write,
        prefix_breaks: u32::from(broke),
        raw_tokens: r.raw_predicted,
        basis: r.basis,
        ratio: r.ratio,
        ratio_measured: r.ratio_measured,
        synthetic_results: r.synthetic_results,
        messages: r.messages,
    }
}
