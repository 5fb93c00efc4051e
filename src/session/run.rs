//! The one way to run a task: every caller (the commands, the check
//! harness, a live caller) says what it wants run and where, and this
//! module decides how.
//!
//! A [`Run`] owns the choices that are the session layer's and no caller's:
//! the scratch store of a what-if run, the driver's modes (a one-call
//! preflight hashes its view without keeping a copy, or never holds it),
//! recording the replay progress an in-place run resumes from, and telling
//! the summarizer which model call its work belongs to
//! ([`Summarizer::call_done`](crate::engine::summarizer::Summarizer::call_done)).
//!
//! - [`preflight`]: the restored checkpoint at a turn start, a run of one
//!   call (it mints nothing, so there is nothing to carry to a next one);
//! - [`Run::step`]: one model call, its new entries committed before it
//!   returns;
//! - [`Run::replay`]: calls `from..=to` as a live engine would have run
//!   them, with the timeline's row for each;
//! - [`Run::grow`]: go on over the task's record as rows are appended to it
//!   (a session file being written, a live conversation), keeping what was
//!   derived from the rows before.

use std::ops::Deref;

use super::cost::{CacheTtl, Prices, Totals};
use super::driver::Driver;
use super::record::TaskRecordIndex;
use super::replay::{Replayer, StepRow};
use super::settings::{self, RunSettings};
use crate::engine::CallOutput;
use crate::store::{Store, StoreError};

/// Where a run reads and writes its compaction state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// A scratch copy of the task with no compaction state: the run shows
    /// what a live engine would have done, repeats exactly, and leaves the
    /// store as it was found.
    Scratch,
    /// The store itself: the state kept under the settings' profile is read
    /// and what the run mints is kept there.
    InPlace {
        /// Also record every committed call as the task's replay progress
        /// (with the settings it ran under), in the same transaction as the
        /// call's entries, for a later run to resume from.
        record_progress: bool,
    },
}

impl Placement {
    /// In place when `in_place` (recording the replay progress when
    /// `record_progress`), else on a scratch copy: what a command's
    /// `--in-place` flag asks for.
    pub fn in_place_if(in_place: bool, record_progress: bool) -> Placement {
        match in_place {
            true => Placement::InPlace { record_progress },
            false => Placement::Scratch,
        }
    }
}

/// What a preflight keeps of its view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The view, to write or show.
    Views,
    /// Only its report: the view is hashed as it is projected and never
    /// held (the output's view is left empty).
    Nothing,
}

/// Which calls [`Run::replay`] runs and reports.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// First call to report (and, with `resume`, to run).
    pub from: u32,
    /// Last call to run and report.
    pub to: u32,
    /// Calls before `from` already ran on this store: do not run them again
    /// (what a restarted engine does; the checkpoint is re-derived).
    pub resume: bool,
    /// What the totals' costs are priced at.
    pub prices: Prices,
    /// How long the cache lives between two calls.
    pub cache_ttl: CacheTtl,
}

impl ReplayOptions {
    /// Calls 1 to `to`, all reported.
    pub fn from_start(to: u32, prices: Prices) -> ReplayOptions {
        ReplayOptions {
            from: 1,
            to,
            resume: false,
            prices,
            cache_ttl: CacheTtl::default(),
        }
    }
}

/// The restored checkpoint at the start of the turn of call `k`, as the only
/// call of a run. A scratch run never shrinks a tool part (only a step's
/// ladder reads tool forms), so its scratch store is lent none.
pub fn preflight(
    store: &mut Store,
    index: &TaskRecordIndex,
    settings: RunSettings<'_>,
    placement: Placement,
    keep: Keep,
    k: u32,
) -> Result<CallOutput, StoreError> {
    let summarizer = settings.summarizer;
    let mut scratch = match placement {
        Placement::Scratch => Some(store.scratch_copy_formless(&index.task)?),
        Placement::InPlace { .. } => None,
    };
    let target: &mut Store = scratch.as_mut().unwrap_or(store);
    let mut driver = Driver::new(target, index, settings)?;
    match keep {
        Keep::Nothing => driver.one_shot_unkept(),
        // One call, with nothing before it to resume a hash from.
        Keep::Views => driver.one_shot(),
    }
    let out = driver.preflight(target, k)?;
    // A preflight reports the turn's first call, not `k`.
    summarizer.call_done(out.report.call);
    Ok(out)
}

/// A task being run call by call: its driver (the caches, the previous
/// call's parts) and the timeline kept from one call to the next. It reads
/// the task's record through `I`: a borrowed index, or one it owns so that
/// it can go on over a longer record ([`Run::grow`]).
pub struct Run<'a, I = &'a TaskRecordIndex>
where
    I: Deref<Target = TaskRecordIndex>,
{
    /// A scratch run's own store; `None` runs on the caller's.
    scratch: Option<Store>,
    replayer: Replayer<'a, I>,
    settings: RunSettings<'a>,
    record_progress: bool,
}

impl<'a, I: Deref<Target = TaskRecordIndex>> Run<'a, I> {
    /// A run of `index`'s task under `settings`, placed on `store` or on a
    /// scratch copy of the task.
    pub fn open(
        store: &Store,
        index: I,
        settings: RunSettings<'a>,
        placement: Placement,
    ) -> Result<Self, StoreError> {
        let (scratch, record_progress) = match placement {
            Placement::Scratch => (Some(store.scratch_copy(&index.task)?), false),
            Placement::InPlace { record_progress } => (None, record_progress),
        };
        let target = scratch.as_ref().unwrap_or(store);
        let mut replayer = Replayer::new(target, index, settings)?;
        if record_progress {
            replayer.driver.record_progress(settings.identity());
        }
        Ok(Run {
            scratch,
            replayer,
            settings,
            record_progress,
        })
    }

    /// The task's record as the run reads it.
    pub fn index(&self) -> &TaskRecordIndex {
        &self.replayer.driver.index
    }

    /// The last call an in-place run of this task committed under these
    /// settings (none on a scratch store).
    pub fn resume_point(&self, store: &Store) -> Result<Option<u32>, StoreError> {
        let target = self.scratch.as_ref().unwrap_or(store);
        settings::resume_point(target, &self.index().task, &self.settings)
    }

    /// The estimate of the raw history's parts at call `k` (any `k` past the
    /// record measures the whole record).
    pub fn raw_estimate(&mut self, k: u32) -> Result<u64, StoreError> {
        self.replayer.driver.raw_estimate(k)
    }

    /// The next call is this run's last: what it reads is handed over to it
    /// rather than kept for a later one (the raw history and the rows read
    /// are moved into its parts, and its parts into its view, its view
    /// hashed without a copy kept). The same view and report, the call's
    /// output holding no parts; a later call would derive what it needs
    /// again.
    pub fn last_call(&mut self) {
        self.replayer.driver.one_shot_view_only();
    }

    /// Step at call `k`: the full operation over the checkpoint and the
    /// turn's growth. The new entries are committed before this returns.
    pub fn step(&mut self, store: &mut Store, k: u32) -> Result<CallOutput, StoreError> {
        let target: &mut Store = self.scratch.as_mut().unwrap_or(store);
        let out = self.replayer.driver.step(target, k)?;
        self.settings.summarizer.call_done(out.report.call);
        Ok(out)
    }

    /// Replay `opts.from..=opts.to`, calling `on_call` after each reported
    /// call (its row and output) so callers can print, write views or draw
    /// progress. No row is kept: a caller that needs them all keeps them (a
    /// row per call is about 300 bytes, 30 MB at 100K calls).
    pub fn replay<E: From<StoreError>>(
        &mut self,
        store: &mut Store,
        opts: &ReplayOptions,
        mut on_call: impl FnMut(&StepRow, &CallOutput) -> Result<(), E>,
    ) -> Result<Totals, E> {
        let target: &mut Store = self.scratch.as_mut().unwrap_or(store);
        let summarizer = self.settings.summarizer;
        let mut totals = Totals::default();
        let start = if opts.resume { opts.from.max(1) } else { 1 };
        for k in start..=opts.to {
            let index = &self.replayer.driver.index;
            let output = index.usage(k).map_or(0, |u| u.output_tokens);
            self.replayer.call(
                target,
                k,
                opts.cache_ttl,
                |row, out, raw| -> Result<(), E> {
                    if k >= opts.from {
                        totals.calls += 1;
                        totals.compacted.add(
                            row.cache_read_tokens,
                            row.cache_write_tokens,
                            &opts.prices,
                        );
                        totals.raw.add(raw.read, raw.write, &opts.prices);
                        totals.prefix_breaks += row.prefix_breaks;
                        totals.cache_expired_calls += u32::from(raw.expired);
                        totals.add_output(output, &opts.prices);
                        summarizer.call_done(row.call);
                        on_call(row, out)?;
                    }
                    Ok(())
                },
            )?;
        }
        Ok(totals)
    }
}

impl<'a> Run<'a, &'a TaskRecordIndex> {
    /// Start again from what the store holds, as a restarted engine would:
    /// a new driver, none of the previous calls' state kept in memory.
    pub fn restart(&mut self, store: &Store) -> Result<(), StoreError> {
        let target = self.scratch.as_ref().unwrap_or(store);
        let index = self.replayer.driver.index;
        let mut driver = Driver::new(target, index, self.settings)?;
        if self.record_progress {
            driver.record_progress(self.settings.identity());
        }
        self.replayer.driver = driver;
        Ok(())
    }
}

impl Run<'_, Box<TaskRecordIndex>> {
    /// Go on over the task's record as `store` holds it now, when rows were
    /// appended since (by this process or another): what was derived from
    /// the rows before stays, and the next calls equal those of a run over
    /// the longer record from the start. A scratch run is lent the tool
    /// forms minted since; an in-place run reads the record again through
    /// its index's own connection (a live caller grows it at every call). A
    /// record that does not continue the one this run read is refused.
    pub fn grow(&mut self, store: &Store) -> Result<(), StoreError> {
        let task = self.index().task.clone();
        let reader = store.reader();
        if reader.message_count(&task)? == self.index().stored_len()
            && reader.proxy_superseded(&task)?.len() == self.index().superseded_rows()
            && reader
                .proxy_measured_views(&task, self.index().measured_through())?
                .is_empty()
        {
            return Ok(());
        }
        match &mut self.scratch {
            Some(scratch) => {
                let index = TaskRecordIndex::load(store, &task)?;
                scratch.lend_forms_again(store)?;
                self.replayer.grow(scratch, Box::new(index))
            }
            None => self.replayer.grow_in_place(store),
        }
    }
}
