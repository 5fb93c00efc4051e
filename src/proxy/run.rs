//! The proxy's one way into the session layer: a live conversation's task
//! run call by call over its record as the record grows, the driver (its
//! caches, the previous call's parts) kept from call to call.
//!
//! A step at call `k` runs over the rows recorded before it, as a step of
//! `replay` does, on the store itself (`Placement::InPlace`); a run that
//! cannot carry on over the grown record (a retried call whose history
//! grew) is replaced by a new one, which derives the same view (a resumed
//! run equals a fresh one).
//!
//! Calibration is the session layer's: a live task's index knows that its
//! recorded usage measured the views forwarded (`session::live`), so this
//! run and every offline one read it alike.

use std::sync::{Arc, Mutex};

use crate::engine::CallOutput;
use crate::engine::budget::Budget;
use crate::engine::estimate::Estimator;
use crate::engine::summarizer::Summarizer;
use crate::session::record::{Reader, TaskRecordIndex};
use crate::session::run::{Placement, Run};
use crate::session::settings::RunSettings;
use crate::store::{Store, StoreError};

pub(crate) struct LiveRun<'s> {
    budget: Budget,
    estimator: &'s dyn Estimator,
    summarizer: &'s dyn Summarizer,
    run: Option<Run<'s, Box<TaskRecordIndex>>>,
    /// The connection its index reads rows through, shared with the other
    /// conversations of the thread; `None`: one of its own.
    reader: Option<Arc<Mutex<Store>>>,
}

impl<'s> LiveRun<'s> {
    pub(crate) fn new(
        budget: Budget,
        estimator: &'s dyn Estimator,
        summarizer: &'s dyn Summarizer,
        reader: Option<Arc<Mutex<Store>>>,
    ) -> LiveRun<'s> {
        LiveRun {
            budget,
            estimator,
            summarizer,
            run: None,
            reader,
        }
    }

    fn settings(&self) -> RunSettings<'s> {
        RunSettings::new(self.budget, self.estimator, self.summarizer)
    }

    /// The profile the run's state is kept under.
    pub(crate) fn profile(&self) -> String {
        self.settings().profile()
    }

    /// The settings the profile stands for.
    pub(crate) fn identity(&self) -> serde_json::Value {
        self.settings().identity()
    }

    /// The next model call of `task` over its record as `store` holds it
    /// now: its number and the engine's output (the view, the report). What
    /// the call mints is committed before this returns. `last`: no later
    /// call goes on from this run (its conversation is let go once this
    /// call is over), so nothing is kept for one and the run is let go.
    pub(crate) fn next_call(
        &mut self,
        store: &mut Store,
        task: &str,
        last: bool,
    ) -> Result<(u32, CallOutput), StoreError> {
        let grown = match self.run.as_mut() {
            Some(run) => run.grow(store).is_ok(),
            None => false,
        };
        if !grown {
            let index = Box::new(match &self.reader {
                Some(r) => TaskRecordIndex::load_through(Reader::Shared(Arc::clone(r)), task)?,
                None => TaskRecordIndex::load(store, task)?,
            });
            let placement = Placement::InPlace {
                record_progress: false,
            };
            self.run = Some(Run::open(store, index, self.settings(), placement)?);
        }
        let run = self.run.as_mut().expect("set above");
        if last {
            run.last_call();
        }
        let k = run.index().calls() + 1;
        let out = run.step(store, k)?;
        // No row is kept between calls: the next reads what it needs.
        run.index().release_block();
        if last {
            self.run = None;
        }
        Ok((k, out))
    }
}
