//! Runs the engine over a stored task the way a live runtime would: preflight
//! at each turn start over the raw history, a step at every model call over
//! the checkpoint plus the turn's growth, the store read before and written
//! after every call.
//!
//! The task's record is indexed once ([`TaskRecordIndex`]: per-row metadata,
//! a few bytes a row); the rows' content is read from the store by range as
//! the driver needs it, in order. Per call it only turns the
//! rows added since the previous call into parts (or, after a restart, the
//! rows since the turn start): no whole-history walk on the per-call path,
//! and no copy of the record in memory.
//!
//! It keeps these caches of the derivation, never a second source of truth
//! (a property test holds them to [`Driver::uncached`], which re-derives
//! everything at every call):
//! - the profile's snapshot entries, decoded (a summary or a tool entry by
//!   its kind alone, its text or form read by key when restored), updated
//!   with the driver's own writes and read again when `PRAGMA data_version`
//!   shows another writer;
//! - the raw history's parts, built once as the record is append-only, with
//!   the coverage chain over their addresses, both kept from the last fold
//!   on, so a turn start finds the longest stored summary by looking its
//!   decoded coverage up in the chain and hands the engine only the summary
//!   and what follows it;
//! - the raw history's measures at every call, from running totals over the
//!   rows read for the parts;
//! - per call: the previous call's parts handed over as the checkpoint (not
//!   copied), their tool call index (checked, built again after a fold), the
//!   coverage walk restore resumes, and where the view hash left off.

use std::collections::HashMap;
use std::ops::Deref;

use super::live::LiveCalibration;
use super::raw_history::{FEED_ROWS, RawHistory};
use super::record::{Measures, RowSource, TaskRecordIndex, read_heads};
use super::settings::RunSettings;
use super::stored::{FormReader, FormSource, Held, SnapshotCache, cached, store_error};
use crate::engine::checkpoint::{Growth, Resume, coverage_key, reconstruct};
use crate::engine::entries::{ANCHOR_KEY, Entry};
use crate::engine::estimate::Estimator;
use crate::engine::parts::{Part, SummaryHead};
use crate::engine::restore::StoreView;
use crate::engine::{
    Calibration, CallContext, CallOutput, Minted, Mode, SharedParts, StreamedPreflight, run_call,
};
use crate::store::{Store, StoreError};

/// Drives calls over one task, keeping the previous call's parts in memory.
/// It reads the task's record through `I`: a borrowed index, or one it owns
/// so that it can go on over a longer record ([`Driver::grow`]).
pub struct Driver<'a, I = &'a TaskRecordIndex>
where
    I: Deref<Target = TaskRecordIndex>,
{
    pub index: I,
    settings: RunSettings<'a>,
    /// The compaction profile this driver reads and writes.
    pub(super) profile: String,
    overhead: Option<u64>,
    /// The raw history measured at each call so far (index `k-1`).
    raw: Measures,
    tool_forms: FormSource,
    /// The previous call's number, its parts (shared with the output the
    /// caller got) and the rows they cover.
    last: Option<(u32, SharedParts, usize)>,
    /// Record each committed call as replay progress (in-place replays).
    progress: Option<serde_json::Value>,
    /// Keep the caches (see the module); `false`: re-derive at every call.
    cached: bool,
    pub(super) snapshot: Option<SnapshotCache>,
    pub(super) raw_history: Option<RawHistory>,
    /// Where the last call's view hash and coverage walk left off.
    resume: Resume,
    /// The tool call index of the last step's parts, for the next step's
    /// builder to check and reuse (see [`Growth::continuing`]).
    tool_index: HashMap<String, usize>,
    /// This driver makes one call (see [`Driver::one_shot`]).
    one_shot: bool,
    /// A live task's calibration (see [`LiveCalibration`]); `None` for an
    /// imported one.
    live: Option<LiveCalibration>,
}

impl<'a, I: Deref<Target = TaskRecordIndex>> Driver<'a, I> {
    pub fn new(
        store: &Store,
        index: I,
        settings: RunSettings<'a>,
    ) -> Result<Driver<'a, I>, StoreError> {
        let profile = settings.profile();
        let live = LiveCalibration::of(&index, settings.estimator, None)?;
        let mut overhead = index.overhead(settings.estimator)?;
        if overhead.is_none()
            && let Some(Entry::Anchor { overhead: o, .. }) = store
                .reader()
                .entry(&index.task, &profile, ANCHOR_KEY)?
                .as_ref()
                .and_then(Entry::from_value)
        {
            overhead = o;
        }
        Ok(Driver {
            tool_forms: FormSource::of(store, &index)?,
            raw: Measures::default(),
            index,
            settings,
            profile,
            overhead,
            last: None,
            progress: None,
            cached: true,
            snapshot: None,
            raw_history: None,
            resume: Resume::default(),
            tool_index: HashMap::new(),
            one_shot: false,
            live,
        })
    }

    /// A driver that keeps no cache: every call reads the snapshot from the
    /// store and rebuilds the raw history from the record. Slow; the
    /// reference the cached driver is held to.
    #[cfg(test)]
    pub(super) fn uncached(
        store: &Store,
        index: I,
        settings: RunSettings<'a>,
    ) -> Result<Driver<'a, I>, StoreError> {
        let mut d = Driver::new(store, index, settings)?;
        d.cached = false;
        Ok(d)
    }

    /// The estimator this driver measures with.
    pub fn estimator(&self) -> &'a dyn Estimator {
        self.settings.estimator
    }

    /// The estimate of the raw history's parts at call `k` (any `k` past the
    /// record measures the whole record).
    pub fn raw_estimate(&mut self, k: u32) -> Result<u64, StoreError> {
        let k = k.clamp(1, self.index.calls() + 1);
        self.raw.ensure(&self.index, k, self.settings.estimator)?;
        Ok(self.raw.out[k as usize - 1].estimate)
    }

    /// Make the snapshot cache current: read it again unless it was read
    /// from this store and no other connection wrote since.
    fn refresh(&mut self, store: &Store) -> Result<(), StoreError> {
        let at = (store.instance(), store.data_version()?);
        if self.cached && self.snapshot.as_ref().is_some_and(|c| c.read_at == at) {
            return Ok(());
        }
        let cache = SnapshotCache::read(at, store, &self.index.task, &self.profile)?;
        self.snapshot = Some(cache);
        Ok(())
    }

    /// The raw history's parts up to row `end`, for a preflight. Cached: the
    /// longest stored summary whose coverage is a prefix of them is already
    /// folded in (what restore would fold; it finds nothing longer), so only
    /// the summary and what follows it are copied.
    fn raw_parts(&mut self, store: &Store, end: usize) -> Result<Vec<Part>, StoreError> {
        let est = self.settings.estimator;
        let index = &*self.index;
        if !self.cached {
            return Ok(reconstruct(&index.read_rows(0, end)?, est));
        }
        let snap = self.snapshot.as_ref().expect("refreshed before use");
        let raw = match &mut self.raw_history {
            Some(r) if r.fed <= end && r.fold_kept(&snap.covers) => r,
            slot => slot.insert(RawHistory::new(&self.raw)),
        };
        // Fed a slice of rows at a time, dropping what the longest stored
        // summary folds so far as it goes: a history built from the first
        // row (a new driver over a store with state) never holds all of it.
        while raw.fed < end {
            let to = end.min(raw.fed + FEED_ROWS);
            raw.feed(index, to, est, &mut self.raw, self.one_shot)?;
            if let Some((i, h)) = raw.parts.longest_fold(&snap.covers)
                && i > raw.parts.offset()
                && matches!(snap.held(&coverage_key(h)), Some(Held::Summary))
            {
                raw.parts.drop_front(i);
            }
        }
        let stored = cached(snap, store, &index.task, &self.profile);
        let best = match raw.parts.longest_fold(&snap.covers) {
            Some((i, h)) => match stored.read(&coverage_key(h))? {
                Some(Entry::Summary {
                    text,
                    covers,
                    summarizer,
                    minted_turn,
                    minted_call,
                    ..
                }) => Some((
                    i,
                    SummaryHead {
                        text,
                        coverage: *h,
                        covers,
                        summarizer,
                        minted_at: (minted_turn, minted_call),
                    },
                )),
                // Restore skips a corrupt entry the same way.
                _ => None,
            },
            None => None,
        };
        // The parts needed from here on: all of them with no summary, else
        // the last one it folds (for the head) and what follows.
        let need = best.as_ref().map_or(0, |(i, _)| *i);
        if need < raw.parts.offset() {
            *raw = RawHistory::rebuilt(index, end, est, &mut self.raw, self.one_shot)?;
        }
        let Some((i, head)) = best else {
            if self.one_shot {
                // No later call reads the history: hand it over, uncopied.
                let raw = self.raw_history.take().expect("fed above");
                return Ok(raw.hand_over());
            }
            return Ok(raw.parts.parts().to_vec());
        };
        Ok(raw.parts.folded_at(i, head, est))
    }

    /// This driver makes one call: its view is hashed without keeping a copy
    /// of it for the next call's hash to resume from.
    pub(super) fn one_shot(&mut self) {
        self.resume = Resume::one_call();
        self.one_shot = true;
    }

    /// This driver makes one call whose parts no one reads after it: its
    /// view takes their blocks rather than copies (its output's parts are
    /// left empty, and no checkpoint is kept for a next call).
    pub(super) fn one_shot_view_only(&mut self) {
        self.one_shot();
        self.resume = Resume::one_call_view_only();
    }

    /// This driver makes one call whose view only its report needs: the
    /// view is hashed as it is projected and never held (the call's
    /// [`CallOutput::view`] is left empty, and so are its parts when no
    /// summary is stored; its report is the same).
    pub(super) fn one_shot_unkept(&mut self) {
        self.one_shot();
        self.resume = Resume::unkept();
    }

    /// Record every committed call as this task's replay progress, with the
    /// settings it ran under, in the same transaction as the call's entries.
    pub(super) fn record_progress(&mut self, settings: serde_json::Value) {
        self.progress = Some(settings);
    }

    fn context(&self, k: u32, mode: Mode) -> CallContext<'a> {
        let idx = &*self.index;
        let recorded = |p: u32| {
            idx.usage(p)
                .map(|u| (p, u.prompt_tokens() + u.output_tokens))
        };
        // A live task's usage measured the views forwarded (see `live`).
        let (previous_call, ratio, overhead) = match &self.live {
            Some(live) => {
                let ratio = LiveCalibration::ratio(idx, k);
                let prev = k.checked_sub(1).filter(|p| *p >= 1);
                let previous = match prev {
                    Some(p) if idx.measured_view(p).is_none() => recorded(p),
                    _ => LiveCalibration::previous_call(idx, k, &self.raw.out, ratio),
                };
                (previous, ratio, live.overhead(idx, k, &self.raw.out))
            }
            None => (
                k.checked_sub(1).filter(|p| *p >= 1).and_then(recorded),
                idx.ratio_before(k, &self.raw.out),
                self.overhead,
            ),
        };
        let agent_compacted = match k.checked_sub(1) {
            Some(i) if (i as usize) < idx.agent_compacted_before.len() => {
                idx.agent_compacted_before[i as usize]
            }
            _ => idx.agent_compacted_in(0, idx.len()),
        };
        CallContext {
            budget: self.settings.budget,
            turn: idx.turn_of(k),
            call: k,
            mode,
            estimator: self.settings.estimator,
            summarizer: self.settings.summarizer,
            fallback: self.settings.fallback,
            calibration: Calibration {
                overhead,
                previous_call,
                agent_compacted,
                raw: k
                    .checked_sub(1)
                    .and_then(|i| self.raw.out.get(i as usize))
                    .copied(),
                ratio,
            },
        }
    }

    /// Preflight for the turn of call `k`: restore over the full raw history
    /// up to the turn's first call. Mints nothing.
    pub fn preflight(&mut self, store: &Store, k: u32) -> Result<CallOutput, StoreError> {
        let first = self.index.turn_first_call(k);
        let end = self.index.history_end(first);
        self.refresh(store)?;
        if let Some(out) = self.preflight_streamed(store, first, end)? {
            return Ok(out);
        }
        let parts = self.raw_parts(store, end)?;
        self.raw
            .ensure(&self.index, first, self.settings.estimator)?;
        let ctx = self.context(first, Mode::Preflight);
        self.run(store, parts, &ctx)
    }

    /// [`Driver::preflight`]'s parts alone, for a step to go on from: its
    /// view is not projected (the step projects its own), so a history of
    /// 60 MB is not copied into a view only to be let go.
    fn preflight_parts(&mut self, store: &Store, k: u32) -> Result<Vec<Part>, StoreError> {
        self.resume.parts_only = true;
        let out = self.preflight(store, k);
        self.resume.parts_only = false;
        Ok(out?.parts.into_vec())
    }

    /// A one-shot preflight that keeps no view, over a store with no stored
    /// summary: the raw parts are made a slice of rows at a time and each
    /// complete one is restored, projected and hashed as it comes, so that
    /// only the parts still waiting for a tool result are held, never the
    /// whole history ([`StreamedPreflight`]). `None` where it does not
    /// apply (then the built path runs, from the first row again).
    fn preflight_streamed(
        &mut self,
        store: &Store,
        first: u32,
        end: usize,
    ) -> Result<Option<CallOutput>, StoreError> {
        let index = &*self.index;
        let fresh = self.raw_history.is_none();
        if !(self.cached && self.one_shot && self.resume.keeps_no_view() && fresh)
            || first == 0
            || first > index.calls() + 1
        {
            return Ok(None);
        }
        let snap = self.snapshot.as_ref().expect("refreshed before use");
        let stored = cached(snap, store, &index.task, &self.profile);
        let forms = FormReader::new(&self.tool_forms, index);
        let store = StoreView {
            snapshot: &stored,
            covers: &snap.covers,
            tool_forms: &forms,
        };
        let est = self.settings.estimator;
        let Some(mut stream) = StreamedPreflight::new(index.turn_of(first), est, store) else {
            return Ok(None);
        };
        let mut builder = Growth::fresh(self.raw.builder.tool_calls().clone());
        let (raw, mut fed) = (&mut self.raw, 0);
        while fed < end {
            let to = end.min(fed + FEED_ROWS);
            index.each_row(fed, to, |i, m| {
                builder.push(m, est);
                raw.offer(index, i, m, est);
            })?;
            fed = to;
            for p in builder.take_complete() {
                stream.push(p).map_err(store_error)?;
            }
        }
        for p in builder.finish().0 {
            stream.push(p).map_err(store_error)?;
        }
        raw.ensure(index, first, est)?;
        let ctx = self.context(first, Mode::Preflight);
        Ok(stream.finish(&ctx))
    }

    /// The engine's operation over `parts`, with the snapshot as refreshed.
    fn run(
        &mut self,
        store: &Store,
        parts: Vec<Part>,
        ctx: &CallContext<'_>,
    ) -> Result<CallOutput, StoreError> {
        if ctx.mode == Mode::Step {
            self.tool_forms.prepare(&self.index)?;
        }
        if !self.cached {
            self.resume.reset();
        }
        let snap = self.snapshot.as_ref().expect("refreshed before use");
        let stored = cached(snap, store, &self.index.task, &self.profile);
        let forms = FormReader::new(&self.tool_forms, &self.index);
        run_call(
            parts,
            ctx,
            StoreView {
                snapshot: &stored,
                covers: &snap.covers,
                tool_forms: &forms,
            },
            &mut self.resume,
        )
        .map_err(store_error)
    }

    /// Step at call `k`: the full operation over checkpoint + growth. The new
    /// entries are written in one transaction before this returns.
    pub fn step(&mut self, store: &mut Store, k: u32) -> Result<CallOutput, StoreError> {
        let end = self.index.history_end(k);
        let turn_start = self.index.turn_first_call(k) == k;
        let (base, from) = match self.last.take() {
            // Within a turn the previous call's parts are the checkpoint so far;
            // a turn start re-folds from the pristine raw history (preflight).
            // Taken back whole when the caller has dropped its output.
            Some((prev, parts, covered)) if prev + 1 == k && covered <= end && !turn_start => {
                (parts.into_vec(), covered)
            }
            _ => {
                let first = self.index.turn_first_call(k);
                (
                    self.preflight_parts(store, k)?,
                    self.index.history_end(first),
                )
            }
        };
        let tool_index = match self.cached {
            true => std::mem::take(&mut self.tool_index),
            false => HashMap::new(),
        };
        let mut builder = Growth::continuing(base, tool_index);
        let (index, est, raw) = (&*self.index, self.settings.estimator, &mut self.raw);
        if self.one_shot {
            // No later call reads these rows: handed over, not copied.
            index.each_row_owned(from, end, |i, m| {
                raw.offer(index, i, &m, est);
                builder.push_owned(m, est);
            })?;
        } else {
            index.each_row(from, end, |i, m| {
                builder.push(m, est);
                raw.offer(index, i, m, est);
            })?;
        }
        raw.ensure(index, k, est)?;
        let (parts, tool_index) = builder.finish();
        self.tool_index = tool_index;
        self.refresh(store)?;
        let ctx = self.context(k, Mode::Step);
        let out = self.run(store, parts, &ctx)?;
        let mut anchor = None;
        if self.index.ends_turn(k) && k <= self.index.calls() {
            // Turn end: persist the calibration anchor for the next turn's preflight.
            let real = self.index.usage(k).map_or(out.report.tokens_after, |u| {
                u.prompt_tokens() + u.output_tokens
            });
            let entry = Entry::Anchor {
                turn: ctx.turn,
                real_tokens: real,
                overhead: self.overhead,
            };
            anchor = Some((ANCHOR_KEY.to_string(), Minted::Value(entry.to_value())));
        }
        // The call's entries are written from its output, not copied (a
        // request of 20,000 tool results mints as many), a shrink entry's
        // form read again from the store one at a time.
        let writes = || out.new_entries.iter().chain(&anchor);
        let any = writes().next().is_some();
        let task = self.index.task.clone();
        let progress = self.progress.as_ref();
        let profile = &self.profile;
        let identity = self.settings.identity();
        let forms = FormReader::new(&self.tool_forms, &self.index);
        store.transaction(|tx| -> Result<(), StoreError> {
            if any {
                tx.put_profile(profile, &identity)?;
            }
            for (key, m) in writes() {
                let v = m.value(&forms).map_err(store_error)?;
                tx.put_entry(&task, profile, key, &v)?;
            }
            if let Some(settings) = progress {
                tx.put_profile(profile, &identity)?;
                tx.set_replay_progress(&task, profile, settings, k)?;
            }
            Ok(())
        })?;
        if let Some(cache) = self.snapshot.as_mut().filter(|_| self.cached) {
            for (key, m) in writes() {
                cache.put(key, m);
            }
        }
        if self.progress.is_some() {
            crate::fault::after_call(k);
        }
        // Shared with the output, not copied; none when the view took them.
        self.last = (!self.resume.view_takes_parts).then(|| (k, out.parts.clone(), end));
        Ok(out)
    }

    /// Forget the in-memory checkpoint (the next step re-derives it from the store).
    #[cfg(test)]
    pub fn forget(&mut self) {
        self.last = None;
    }

    /// Go on over `index`, the same task's record grown since this driver's
    /// index was loaded (a session file still being written): what the driver
    /// derived from the rows it saw stays, as the record is append-only, and
    /// what depended on where the record ended is derived again, so the next
    /// calls equal those of a driver that ran over the longer record from the
    /// start. A record that is not a continuation is refused.
    pub fn grow(&mut self, store: &Store, index: I) -> Result<(), StoreError> {
        let old = &*self.index;
        // The rows left out of the history before the old record's end are
        // the same (a row left out since changes the history this run read).
        let stored = old.stored_len();
        let holes_before = index.holes.partition_point(|&h| h < stored);
        let continues = index.task == old.task
            && index.len() >= old.len()
            && index.calls() >= old.calls()
            && index.holes[..holes_before] == old.holes[..]
            && index.kinds[..old.len()] == old.kinds[..]
            && index.first_row[..old.first_row.len()] == old.first_row[..];
        if !continues {
            return Err(StoreError::Corrupt(format!(
                "task {}: the record no longer begins with the rows this run read",
                old.task
            )));
        }
        // The measure of the next, unrecorded call was taken where the
        // record ended.
        self.raw.out.truncate(old.calls() as usize);
        // The overhead rests on the system rows and the first call with
        // recorded usage, which may have arrived since.
        if old.overhead_inputs() != index.overhead_inputs()
            && let Some(o) = index.overhead(self.settings.estimator)?
        {
            self.overhead = Some(o);
        }
        // New tool results minted forms at their import.
        self.tool_forms = FormSource::of(store, &index)?;
        let before = self.live.as_ref().map(|l| (l, self.index.len()));
        self.live = LiveCalibration::of(&index, self.settings.estimator, before)?;
        self.index = index;
        Ok(())
    }
}

impl<'a> Driver<'a, Box<TaskRecordIndex>> {
    /// [`Driver::grow`] over the task's record as the store holds it now,
    /// its rows' heads read through the index's own connection to the store
    /// file (no connection is opened: a live caller grows it at every call).
    pub fn grow_in_place(&mut self, store: &Store) -> Result<(), StoreError> {
        let task = self.index.task.clone();
        let Some(own) = self.index.own_store() else {
            let index = Box::new(TaskRecordIndex::load(store, &task)?);
            return self.grow(store, index);
        };
        let (heads, holes, measured) = read_heads(&own, &task, self.index.measured.clone())?;
        drop(own);
        let mut index = Box::new(heads.finish(&task, RowSource::Memory(Vec::new())));
        index.holes = holes;
        index.measured = measured;
        // The rows are read where they were: the same connection and the
        // block it last read (the record is append-only).
        index.rows = std::mem::replace(&mut self.index.rows, RowSource::Memory(Vec::new()));
        self.grow(store, index)
    }
}
