//! The proxy's one way into the session layer: a live conversation's task
//! run call by call over its record as the record grows, the driver (its
//! caches, the previous call's parts) kept from call to call.
//!
//! A step at call `k` runs over the rows recorded before it, as a step of
//! `replay` does; a driver that cannot carry on over the grown record (a
//! retried call whose history grew) is replaced by a new one, which derives
//! the same view (a resumed run equals a fresh one).

use crate::engine::CallOutput;
use crate::engine::budget::Budget;
use crate::engine::estimate::Estimator;
use crate::engine::summarizer::Summarizer;
use crate::session::driver::{Driver, RunSettings, TaskRecordIndex};
use crate::store::{Store, StoreError};

pub(crate) struct LiveRun<'s> {
    budget: Budget,
    estimator: &'s dyn Estimator,
    summarizer: &'s dyn Summarizer,
    driver: Option<Driver<'s>>,
}

impl<'s> LiveRun<'s> {
    pub(crate) fn new(
        budget: Budget,
        estimator: &'s dyn Estimator,
        summarizer: &'s dyn Summarizer,
    ) -> LiveRun<'s> {
        LiveRun {
            budget,
            estimator,
            summarizer,
            driver: None,
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
    /// the call mints is committed before this returns.
    pub(crate) fn next_call(
        &mut self,
        store: &mut Store,
        task: &str,
    ) -> Result<(u32, CallOutput), StoreError> {
        let index = TaskRecordIndex::load(store, task)?;
        let k = index.calls() + 1;
        let fresh = match self.driver.as_mut() {
            Some(d) => d.extend(store, index)?,
            None => Some(index),
        };
        if let Some(index) = fresh {
            self.driver = Some(Driver::owning(store, index, self.settings())?);
        }
        let driver = self.driver.as_mut().expect("set above");
        let out = driver.step(store, k)?;
        Ok((k, out))
    }
}
