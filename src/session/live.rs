//! The calibration of a live task: one `compactor proxy` recorded. Its
//! recorded usage measured the view the proxy forwarded at that call, not
//! the raw history an imported transcript's usage measures, and at call `k`
//! the proxy knew only the record before it. Every run of a live task (the
//! proxy's own, `replay`, `probe`, `report`, `sweep`) reads it this way, so a
//! replay at the proxy's budget derives the views it forwarded.
//!
//! - The anchor of call `k` is call `k-1`'s real tokens (prompt and output)
//!   plus the estimate of what its forwarded view left out of the raw
//!   history, scaled by the ratio below: what the raw history would have
//!   measured, which the engine's prediction starts from.
//! - The ratio of real to estimated tokens is measured over the forwarded
//!   views (the first and the last earlier call with usage), as the record's
//!   own ratio is over raw calls.
//! - The overhead (system prompt and tools) is what the record before call
//!   `k` tells: its system rows, and the first call with usage's prompt minus
//!   the view that call forwarded.

use super::record::{MIN_RATIO_SPAN, TaskRecordIndex};
use crate::engine::estimate::{Estimator, block_tokens};
use crate::engine::{RawMeasure, UNIT_RATIO};
use crate::model::Kind;
use crate::model::decimal::Ratio;
use crate::store::StoreError;

/// The bounds a live ratio is kept in (as the record's own ratio is).
const RATIO_PPM: (u128, u128) = (500_000, 4_000_000);

/// What a live task's calibration needs beyond its index.
pub(super) struct LiveCalibration {
    /// Each system row's position and the estimate of the system rows up to
    /// and including it.
    system: Vec<(usize, u64)>,
    /// The first call with recorded usage.
    first_usage: Option<u32>,
}

impl LiveCalibration {
    /// `None` for a task that is not live. `before`: the calibration of
    /// the same record when it held `len` rows (a grown record keeps its
    /// system rows, so only those after it are read).
    pub(super) fn of(
        index: &TaskRecordIndex,
        est: &dyn Estimator,
        before: Option<(&LiveCalibration, usize)>,
    ) -> Result<Option<LiveCalibration>, StoreError> {
        if !index.is_live() {
            return Ok(None);
        }
        let (mut system, from) = match before {
            Some((b, len)) if len <= index.len() => (b.system.clone(), len),
            _ => (Vec::new(), 0),
        };
        let mut total = system.last().map_or(0, |(_, t)| *t);
        for i in from..index.len() {
            if index.kind(i) != Kind::System {
                continue;
            }
            for m in index.read_rows(i, i + 1)? {
                total += m.content.iter().map(|b| block_tokens(est, b)).sum::<u64>();
            }
            system.push((i, total));
        }
        let first_usage = (1..=index.calls()).find(|k| index.usage(*k).is_some());
        Ok(Some(LiveCalibration {
            system,
            first_usage,
        }))
    }

    /// The overhead at call `k`: the larger of the system rows recorded
    /// before it and the first earlier call's prompt minus its forwarded
    /// view (as [`TaskRecordIndex::overhead`] measures a record that ends
    /// before `k`). `raw` holds the raw history's measures up to `k`.
    pub(super) fn overhead(
        &self,
        index: &TaskRecordIndex,
        k: u32,
        raw: &[RawMeasure],
    ) -> Option<u64> {
        let end = index.history_end(k);
        let system = self
            .system
            .iter()
            .take_while(|(pos, _)| *pos < end)
            .last()
            .map_or(0, |(_, t)| *t);
        let measured = self.first_usage.filter(|j| *j < k).and_then(|j| {
            let view = index
                .measured_view(j)
                .or_else(|| raw.get(j as usize - 1).map(|m| m.estimate))?;
            Some(index.usage(j)?.prompt_tokens().saturating_sub(view))
        });
        match measured {
            Some(m) => Some(m.max(system)),
            None => (system > 0).then_some(system),
        }
    }

    /// The ratio of real to estimated tokens before call `k`, over the
    /// forwarded views: between the first and the last earlier call with
    /// usage, when their views' estimates are far enough apart.
    pub(super) fn ratio(index: &TaskRecordIndex, k: u32) -> Option<Ratio> {
        let views = &index.measured.as_ref()?.views;
        let with_usage = |(&j, &e): (&u32, &u64)| index.usage(j).map(|u| (u.prompt_tokens(), e));
        let (p0, e0) = views.range(..k).find_map(with_usage)?;
        let (p1, e1) = views.range(..k).rev().find_map(with_usage)?;
        if e1 < e0 + MIN_RATIO_SPAN || p1 <= p0 {
            return None;
        }
        let ppm =
            (u128::from(p1 - p0) * 1_000_000 / u128::from(e1 - e0)).clamp(RATIO_PPM.0, RATIO_PPM.1);
        Some(Ratio::from_ppm(ppm as u32))
    }

    /// What call `k` anchors on: the previous call and its real tokens plus,
    /// scaled by `ratio`, the estimate of what its forwarded view left out
    /// of the raw history. `None` when it has no usage or was not forwarded.
    pub(super) fn previous_call(
        index: &TaskRecordIndex,
        k: u32,
        raw: &[RawMeasure],
        ratio: Option<Ratio>,
    ) -> Option<(u32, u64)> {
        let prev = k.checked_sub(1).filter(|p| *p >= 1)?;
        let view = index.measured_view(prev)?;
        let usage = index.usage(prev)?;
        let raw = raw.get(prev as usize - 1)?.estimate;
        let left_out = ratio.unwrap_or(UNIT_RATIO).of(raw.saturating_sub(view));
        Some((prev, usage.prompt_tokens() + usage.output_tokens + left_out))
    }
}
