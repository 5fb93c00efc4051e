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
//! Calibration: a live task's recorded usage measured the view the proxy
//! forwarded, not the raw history that an imported transcript's usage
//! measures. So each call is anchored on the previous call's real tokens
//! plus the estimate of what its view had left out of the raw history
//! (scaled by the ratio of real to estimated tokens measured over the
//! forwarded views): what the raw history would have measured, which the
//! engine's prediction starts from. The views' estimates are what the
//! proxy keeps with each forwarded call (`proxy_call`).

use std::collections::BTreeMap;

use crate::engine::budget::Budget;
use crate::engine::estimate::Estimator;
use crate::engine::summarizer::Summarizer;
use crate::engine::{CallOutput, UNIT_RATIO};
use crate::model::decimal::Ratio;
use crate::session::record::TaskRecordIndex;
use crate::session::run::{Placement, Run};
use crate::session::settings::RunSettings;
use crate::store::{Store, StoreError};

pub(crate) struct LiveRun<'s> {
    budget: Budget,
    estimator: &'s dyn Estimator,
    summarizer: &'s dyn Summarizer,
    run: Option<Run<'s, Box<TaskRecordIndex>>>,
    /// The estimate of each forwarded call's view (its messages), by call.
    views: BTreeMap<u32, u64>,
}

/// The least growth of the views' estimate a ratio is measured over, and
/// the bounds it is kept in (as the record's own ratio is).
const MIN_RATIO_SPAN: u64 = crate::session::record::MIN_RATIO_SPAN;
const RATIO_PPM: (u128, u128) = (500_000, 4_000_000);

impl<'s> LiveRun<'s> {
    /// A run whose task's earlier calls forwarded views of these estimates.
    pub(crate) fn new(
        budget: Budget,
        estimator: &'s dyn Estimator,
        summarizer: &'s dyn Summarizer,
        views: BTreeMap<u32, u64>,
    ) -> LiveRun<'s> {
        LiveRun {
            budget,
            estimator,
            summarizer,
            run: None,
            views,
        }
    }

    /// The views' estimates by call, for a run that takes over.
    pub(crate) fn views(&self) -> &BTreeMap<u32, u64> {
        &self.views
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
        let grown = match self.run.as_mut() {
            Some(run) => run.grow(store).is_ok(),
            None => false,
        };
        if !grown {
            let index = Box::new(TaskRecordIndex::load(store, task)?);
            let placement = Placement::InPlace {
                record_progress: false,
            };
            self.run = Some(Run::open(store, index, self.settings(), placement)?);
        }
        let run = self.run.as_mut().expect("set above");
        let k = run.index().calls() + 1;
        if let Some((real, ratio)) = anchor(run, &self.views, k)? {
            run.anchor_next(k, real, ratio);
        }
        let out = run.step(store, k)?;
        self.views.insert(k, out.report.estimated_messages);
        Ok((k, out))
    }
}

/// What call `k` anchors on: the previous call's real tokens (prompt and
/// output) plus, scaled, the estimate of what its forwarded view left out
/// of the raw history; and the ratio measured over the forwarded views.
/// `None` when the previous call was not forwarded or has no usage.
fn anchor(
    run: &mut Run<'_, Box<TaskRecordIndex>>,
    views: &BTreeMap<u32, u64>,
    k: u32,
) -> Result<Option<(u64, Option<Ratio>)>, StoreError> {
    let Some(prev) = k.checked_sub(1).filter(|p| *p >= 1) else {
        return Ok(None);
    };
    let (Some(&view), Some(usage)) = (views.get(&prev), run.index().usage(prev)) else {
        return Ok(None);
    };
    let index = run.index();
    // The first and the last earlier forwarded call with usage.
    let measured: Vec<(u64, u64)> = views
        .range(..k)
        .filter_map(|(&j, &e)| index.usage(j).map(|u| (u.prompt_tokens(), e)))
        .collect();
    let ratio = match (measured.first(), measured.last()) {
        (Some(&(p0, e0)), Some(&(p1, e1))) if e1 >= e0 + MIN_RATIO_SPAN && p1 > p0 => {
            let ppm = (u128::from(p1 - p0) * 1_000_000 / u128::from(e1 - e0))
                .clamp(RATIO_PPM.0, RATIO_PPM.1);
            Some(Ratio::from_ppm(ppm as u32))
        }
        _ => None,
    };
    let raw = run.raw_estimate(prev)?;
    let left_out = ratio.unwrap_or(UNIT_RATIO).of(raw.saturating_sub(view));
    let real = usage.prompt_tokens() + usage.output_tokens + left_out;
    Ok(Some((real, ratio)))
}
