//! The projection engine: pure logic, no IO, no clock, no randomness.
//!
//! One operation runs at every model call (seed: "One operation, run at every
//! model call"): reconstruct parts, restore what is stored, measure, and only
//! over trigger reduce along the ladder; then project the parts back into a
//! legal request. Preflight (turn start, full raw history) restores without
//! reducing; step (every call, checkpoint + growth) runs it all. The caller
//! loads the store entries and writes back the new ones the call returns.

pub(crate) mod action;
pub mod budget;
pub(crate) mod carried;
pub(crate) mod checkpoint;
pub(crate) mod clean;
pub(crate) mod defs;
pub(crate) mod entries;
pub mod estimate;
pub(crate) mod ladder;
pub(crate) mod lexicon;
pub(crate) mod measure;
pub(crate) mod milestones;
pub(crate) mod parts;
pub(crate) mod projection;
pub(crate) mod restore;
pub mod summarizer;
pub(crate) mod toolfacts;
pub(crate) mod toolrules;

use serde::Serialize;
use std::sync::Arc;

use budget::Budget;
pub use entries::Minted;
use entries::{Entry, GATE_KEY};
use estimate::Estimator;
use ladder::{Pass, TierReport, floor, shrink};
use parts::{Part, PartBody, Side};
use restore::{ReadError, RestoreReport, StoreView, restore};
use summarizer::Summarizer;

use crate::model::decimal::Ratio;
use crate::view::View;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The rungs of the ladder, named as in reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    #[default]
    Shrink,
    Floor,
    BreakthroughShrink,
    BreakthroughFloor,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Shrink => "shrink",
            Tier::Floor => "floor",
            Tier::BreakthroughShrink => "breakthrough_shrink",
            Tier::BreakthroughFloor => "breakthrough_floor",
        }
    }

    /// Tiers as reports print them: `shrink,floor`, or `-` for none.
    pub fn list(tiers: &[Tier]) -> String {
        if tiers.is_empty() {
            return "-".to_string();
        }
        tiers.iter().map(|t| t.name()).collect::<Vec<_>>().join(",")
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which boundary is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Turn start over the full raw history: restore a bounded checkpoint, no reduction.
    Preflight,
    /// A model call over checkpoint + growth: the full operation.
    Step,
}

/// How the call ended against the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// At or under trigger.
    Ok,
    /// Over trigger and not reduced this call: preflight (the first step
    /// reduces), or anti-thrash holding. Within the window, so the call proceeds.
    OverTrigger,
    /// Over trigger after the whole ladder ran: what remains is the summary
    /// plus a window the breakthrough tiers breached or could not reduce
    /// further. Within the window, so the call proceeds.
    Breakthrough,
    /// Over the effective window after everything: the true ceiling.
    OverWindow,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::OverTrigger => "over_trigger",
            Status::Breakthrough => "breakthrough",
            Status::OverWindow => "over_window",
        }
    }
}

/// Where the prediction's bulk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Real tokens: the previous call's recorded usage plus the scaled
    /// estimate of the raw history's increment, minus the scaled estimate of
    /// what the view removed, plus that of what it added.
    Recorded,
    /// No usage to anchor on: measured overhead (or 0 on a cold start) plus
    /// the (scaled) estimate of the view.
    Estimate,
}

/// The raw history at a call, measured with the estimator: what a compacted
/// view's difference is taken against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawMeasure {
    /// The estimate of the raw history's parts.
    pub estimate: u64,
    /// The estimate of what the raw history added since the previous call
    /// (new tool results and user input; see `increment_since`).
    pub increment: u64,
    /// The raw history's last generation step.
    pub last_step: u32,
}

impl RawMeasure {
    /// Measure raw parts: the previous call is `previous` (0 when none).
    pub fn of(parts: &[Part], previous: u32, est: &dyn Estimator) -> RawMeasure {
        RawMeasure {
            estimate: parts.iter().map(|p| p.tokens).sum(),
            increment: if previous > 0 {
                increment_since(parts, previous, est)
            } else {
                0
            },
            last_step: parts.iter().filter_map(|p| p.generation).max().unwrap_or(0),
        }
    }
}

/// The prediction in real-token space for any view of one call's history:
/// `raw − ratio × (raw estimate − view estimate)`, never below the overhead
/// plus the unscaled estimate of the view, never above the raw prediction
/// (unless that floor is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prediction {
    /// The raw history's prediction.
    pub raw: u64,
    /// The raw history's estimate.
    pub raw_estimate: u64,
    pub ratio: Ratio,
    pub overhead: u64,
}

impl Prediction {
    /// The prediction for a view whose parts are estimated at `view_estimate`.
    pub fn of(&self, view_estimate: u64) -> u64 {
        let removed = self
            .ratio
            .of(self.raw_estimate.saturating_sub(view_estimate));
        let added = self
            .ratio
            .of(view_estimate.saturating_sub(self.raw_estimate));
        let p = self.raw.saturating_sub(removed).saturating_add(added);
        let floor = self.overhead.saturating_add(view_estimate);
        p.min(self.raw).max(floor)
    }
}

/// Recorded tokens per estimated token, as measured (1 when not measured).
pub const UNIT_RATIO: Ratio = Ratio::from_ppm(1_000_000);

/// The real-token calibration inputs for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calibration {
    /// Overhead (system prompt, tool definitions): the first recorded call's
    /// prompt tokens minus the estimate of the messages it was sent.
    pub overhead: Option<u64>,
    /// The previous call's step and its recorded real total (prompt + output).
    pub previous_call: Option<(u32, u64)>,
    /// The original agent compacted its own context before this call, so its
    /// recorded usage no longer measures a raw view.
    pub agent_compacted: bool,
    /// The raw history at this call; `None`: the parts passed in are the raw
    /// history (nothing restored).
    pub raw: Option<RawMeasure>,
    /// The session's recorded/estimated ratio measured on earlier raw calls;
    /// `None`: not measured (estimates are used as they are).
    pub ratio: Option<Ratio>,
}

/// Everything a call needs besides the parts and the store entries.
pub struct CallContext<'a> {
    pub budget: Budget,
    /// The current turn (1-based; 0 before any ask).
    pub turn: u32,
    /// The model call being prepared: the step index of the generation about to be made.
    pub call: u32,
    pub mode: Mode,
    pub estimator: &'a dyn Estimator,
    pub summarizer: &'a dyn Summarizer,
    /// Stands in when `summarizer` fails: the floor must always produce something.
    pub fallback: &'a dyn Summarizer,
    pub calibration: Calibration,
}

/// What a call reports (`--json` prints this object).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallReport {
    pub mode: Mode,
    pub turn: u32,
    pub call: u32,
    pub status: Status,
    pub tiers_fired: Vec<Tier>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub trigger: u64,
    pub stop: u64,
    pub w_eff: u64,
    pub basis: Basis,
    /// Recorded tokens per estimated token, by which estimates are scaled
    /// (a decimal string; "1" when not measured).
    pub ratio: Ratio,
    /// Whether `ratio` was measured on this session's earlier raw calls.
    pub ratio_measured: bool,
    /// The prediction for the raw history at this call, on the same basis.
    pub raw_predicted: u64,
    /// The estimate of the view's messages alone (no overhead).
    pub estimated_messages: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead: Option<u64>,
    pub restored: RestoreReport,
    pub tiers: Vec<TierReport>,
    /// Tool parts the shrink tiers passed over for want of a stored form
    /// (below the precompact threshold, or no rule): skipped, never dropped.
    pub shrink_misses: u32,
    /// Parts whose images and inline files from earlier turns this call
    /// replaced by a placeholder (only when the ladder runs; restored on
    /// every later call).
    #[serde(skip_serializing_if = "is_zero")]
    pub placeholders_minted: u32,
    /// Anti-thrash held the ladder this call.
    pub gated: bool,
    pub synthetic_results: u32,
    pub protected_from_step: u32,
    pub parts: usize,
    pub messages: usize,
    pub view_hash: String,
}

/// The result of one call: the view, its parts (the next call's checkpoint),
/// the report, and the store entries to write.
pub struct CallOutput {
    pub parts: SharedParts,
    /// Shared, so a caller can hand it on (to a thread judging views) while
    /// the replay keeps it as the view before the next call's.
    pub view: Arc<View>,
    /// In a replay, how many leading blocks the view shares with the view
    /// of the call before it (`None` when not known): what a caller that
    /// follows the views need not compare again.
    pub shared_blocks: Option<usize>,
    pub report: CallReport,
    /// `(key, entry)` upserts for `task_compaction_snapshot`, in minting
    /// order; a shrink entry names its tool's stored form, read again when
    /// it is written ([`Minted::value`]).
    pub new_entries: Vec<(String, Minted)>,
}

/// A call's parts, shared: a driver keeps them as its checkpoint without a
/// copy and takes them back whole ([`SharedParts::into_vec`]) once the
/// caller has let go of the output (a copy only while it still holds it).
#[derive(Debug, Clone, Default)]
pub struct SharedParts(Arc<Vec<Part>>);

impl SharedParts {
    pub fn new(parts: Vec<Part>) -> SharedParts {
        SharedParts(Arc::new(parts))
    }

    /// The parts, owned: taken back whole when no one else holds them.
    pub fn into_vec(self) -> Vec<Part> {
        std::sync::Arc::unwrap_or_clone(self.0)
    }
}

impl std::ops::Deref for SharedParts {
    type Target = Vec<Part>;

    fn deref(&self) -> &Vec<Part> {
        &self.0
    }
}

impl<'a> IntoIterator for &'a SharedParts {
    type Item = &'a Part;
    type IntoIter = std::slice::Iter<'a, Part>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Run the operation on reconstructed parts, hashing the view from where the
/// previous call's view hash left off (`resume`) and walking the coverage
/// chain from where the previous walk left off (`chain`); default ones start
/// afresh: the same output, less work when the calls share a prefix.
pub fn run_call(
    parts: Vec<Part>,
    ctx: &CallContext<'_>,
    store: StoreView<'_>,
    resume: &mut checkpoint::Resume,
) -> Result<CallOutput, ReadError> {
    let budget = ctx.budget;
    let (trigger, w_eff) = (budget.trigger(), budget.w_eff());
    let (mut parts, _) = restore(parts, store, ctx.estimator, &mut resume.chain)?;
    let refreshed = ladder::refresh_head(&mut parts, ctx, store)?;
    let mut tally = PartTally::default();
    for p in &parts {
        tally.add(p);
    }
    let before = Before::new(ctx, &tally, || {
        RawMeasure::of(
            &parts,
            ctx.calibration.previous_call.map_or(0, |(s, _)| s),
            ctx.estimator,
        )
    });
    let (tokens_before, protect_from) = (before.predicted, before.protect_from);

    let mut pass = Pass {
        ctx,
        store,
        model: before.model,
        view_estimate: tally.estimate,
        predicted: before.predicted,
        new_entries: refreshed
            .into_iter()
            .map(|(k, v)| (k, Minted::Value(v)))
            .collect(),
        misses: 0,
        placeholders: 0,
    };
    let mut tiers = Vec::new();
    let mut gated = false;
    if ctx.mode == Mode::Step && tokens_before > trigger {
        let (streak, rerun) = gate_streak(store, ctx)?;
        // The gate holds only under the window: a live over-window call would be
        // rejected by the provider and re-enter compaction, so offline it always does.
        if streak >= 2 && tokens_before <= w_eff {
            gated = true;
        } else {
            tiers = ladder(&mut pass, &mut parts, protect_from)?;
            let effective =
                tokens_before.saturating_sub(pass.predicted) >= budget.min_effective_saving();
            if !rerun {
                let gate = Entry::Gate {
                    turn: ctx.turn,
                    call: ctx.call,
                    streak_before: streak,
                    streak_after: if effective { 0 } else { streak + 1 },
                };
                pass.new_entries
                    .push((GATE_KEY.to_string(), Minted::Value(gate.to_value())));
            }
        }
    }
    let after = After {
        predicted: pass.predicted,
        shrink_misses: pass.misses,
        placeholders_minted: pass.placeholders,
        tiers,
        gated,
        estimated_messages: parts.iter().map(|p| p.tokens).sum(),
        parts: parts.len(),
    };
    let new_entries = pass.new_entries;

    // A run that keeps no view hashes it as it is projected (the same bytes).
    let (view, stats, messages, view_hash) = if resume.parts_only {
        // Not even projected: a copy of every block kept, only to be let go.
        (
            View::default(),
            projection::ProjectionStats::default(),
            0,
            String::new(),
        )
    } else if resume.hash.keeps_no_view() {
        let (hash, messages, stats) = projection::project_hashed(&parts);
        (View::default(), stats, messages, hash)
    } else if resume.view_takes_parts {
        // Moved, not copied: a 60 MB image was held by the parts, the view
        // and the request's body at once.
        let (view, stats) = projection::project_owned(std::mem::take(&mut parts));
        let hash = view.hash_resuming(&mut resume.hash);
        let messages = view.messages.len();
        (view, stats, messages, hash)
    } else {
        let (view, stats) = projection::project(&parts);
        let hash = view.hash_resuming(&mut resume.hash);
        let messages = view.messages.len();
        (view, stats, messages, hash)
    };
    Ok(CallOutput {
        parts: SharedParts::new(parts),
        view: Arc::new(view),
        shared_blocks: None,
        report: report(
            ctx,
            tally.restored,
            &before,
            after,
            (view_hash, messages, stats),
        ),
        new_entries,
    })
}

/// What a call's report needs of its parts as restored, counted part by
/// part (so the parts need not be held together).
#[derive(Default)]
struct PartTally {
    restored: RestoreReport,
    last_step: u32,
    /// Some part is not raw, or is a summary.
    touched: bool,
    estimate: u64,
    parts: usize,
}

impl PartTally {
    fn add(&mut self, p: &Part) {
        restore::hold(&mut self.restored, p);
        self.last_step = self.last_step.max(p.generation.unwrap_or(0));
        self.touched |= p.state != parts::PartState::Raw || p.summary().is_some();
        self.estimate += p.tokens;
        self.parts += 1;
    }
}

/// The prediction before any tier fires.
struct Before {
    model: Prediction,
    predicted: u64,
    raw_predicted: u64,
    basis: Basis,
    ratio: Ratio,
    protect_from: u32,
}

impl Before {
    /// `raw_of` measures the parts as the raw history when the context has
    /// no raw measure (called only then, and only while they are raw).
    fn new(
        ctx: &CallContext<'_>,
        tally: &PartTally,
        raw_of: impl FnOnce() -> RawMeasure,
    ) -> Before {
        let budget = ctx.budget;
        let protect_from = (tally.last_step + 1).saturating_sub(budget.protect_recent_steps);
        // The recorded usage measures this view only while it is still the raw
        // history: nothing restored, reduced or folded, whichever path built it.
        let pristine = !ctx.calibration.agent_compacted && !tally.touched;
        let estimate = tally.estimate;
        let cal = &ctx.calibration;
        let overhead = cal.overhead.unwrap_or(0);
        let ratio = cal.ratio.unwrap_or(UNIT_RATIO);
        let raw = match cal.raw {
            Some(r) => r,
            // The parts are the raw history only while nothing was restored.
            None if pristine => raw_of(),
            None => RawMeasure {
                estimate,
                increment: 0,
                last_step: tally.last_step,
            },
        };
        let raw_floor = overhead.saturating_add(raw.estimate);
        let (raw_predicted, basis) = match cal.previous_call {
            Some((step, real))
                if !cal.agent_compacted
                    && step == raw.last_step
                    && step > 0
                    && (cal.raw.is_some() || pristine) =>
            {
                (
                    real.saturating_add(ratio.of(raw.increment)).max(raw_floor),
                    Basis::Recorded,
                )
            }
            _ => (
                overhead
                    .saturating_add(ratio.of(raw.estimate))
                    .max(raw_floor),
                Basis::Estimate,
            ),
        };
        let model = Prediction {
            raw: raw_predicted,
            raw_estimate: raw.estimate,
            ratio,
            overhead,
        };
        Before {
            model,
            predicted: model.of(estimate),
            raw_predicted,
            basis,
            ratio,
            protect_from,
        }
    }
}

/// What the ladder left.
struct After {
    predicted: u64,
    shrink_misses: u32,
    placeholders_minted: u32,
    tiers: Vec<TierReport>,
    gated: bool,
    estimated_messages: u64,
    parts: usize,
}

fn report(
    ctx: &CallContext<'_>,
    restored: RestoreReport,
    before: &Before,
    after: After,
    (view_hash, messages, stats): (String, usize, projection::ProjectionStats),
) -> CallReport {
    let budget = ctx.budget;
    let (trigger, stop, w_eff) = (budget.trigger(), budget.stop(), budget.w_eff());
    let (tokens_before, predicted) = (before.predicted, after.predicted);
    let ladder_ran = ctx.mode == Mode::Step && tokens_before > trigger && !after.gated;
    let status = if predicted <= trigger {
        Status::Ok
    } else if predicted > w_eff {
        Status::OverWindow
    } else if ladder_ran {
        Status::Breakthrough
    } else {
        Status::OverTrigger
    };
    CallReport {
        mode: ctx.mode,
        turn: ctx.turn,
        call: ctx.call,
        status,
        tiers_fired: after.tiers.iter().map(|t: &TierReport| t.tier).collect(),
        tokens_before,
        tokens_after: predicted,
        trigger,
        stop,
        w_eff,
        basis: before.basis,
        ratio: before.ratio,
        ratio_measured: ctx.calibration.ratio.is_some(),
        raw_predicted: before.raw_predicted,
        estimated_messages: after.estimated_messages,
        overhead: ctx.calibration.overhead,
        restored,
        tiers: after.tiers,
        shrink_misses: after.shrink_misses,
        placeholders_minted: after.placeholders_minted,
        gated: after.gated,
        synthetic_results: stats.synthetic_results,
        protected_from_step: before.protect_from,
        parts: after.parts,
        messages,
        view_hash,
    }
}

/// A preflight whose view is not kept, fed its raw parts one by one in
/// order as they are made (each complete: a tool call with its result, if
/// it ever gets one) over a store with no stored summary (nothing folds,
/// and a preflight reduces nothing): the same report as [`run_call`]
/// gives over all of them, holding none of them.
pub struct StreamedPreflight<'a> {
    turn: u32,
    estimator: &'a dyn Estimator,
    store: StoreView<'a>,
    tally: PartTally,
    projection: projection::HashedProjection,
}

impl<'a> StreamedPreflight<'a> {
    /// `None` when the store holds a summary (the parts must be held to fold it).
    pub fn new(
        turn: u32,
        estimator: &'a dyn Estimator,
        store: StoreView<'a>,
    ) -> Option<StreamedPreflight<'a>> {
        store.covers.is_empty().then(|| StreamedPreflight {
            turn,
            estimator,
            store,
            tally: PartTally::default(),
            projection: projection::HashedProjection::default(),
        })
    }

    /// The next raw part, restored, counted, projected and hashed.
    pub fn push(&mut self, mut part: Part) -> Result<(), ReadError> {
        restore::restore_part(&mut part, self.store, self.estimator)?;
        self.tally.add(&part);
        self.projection.push(&part);
        Ok(())
    }

    /// The call's output after the last part (no parts, no view, no
    /// entries), or `None` when `ctx` is not a preflight of this turn or has
    /// no raw measure (which would need the parts).
    pub fn finish(self, ctx: &CallContext<'_>) -> Option<CallOutput> {
        if ctx.mode != Mode::Preflight || ctx.turn != self.turn || ctx.calibration.raw.is_none() {
            return None;
        }
        let tally = self.tally;
        // Never called: the context has a raw measure.
        let before = Before::new(ctx, &tally, RawMeasure::default);
        let after = After {
            predicted: before.predicted,
            shrink_misses: 0,
            placeholders_minted: 0,
            tiers: Vec::new(),
            gated: false,
            estimated_messages: tally.estimate,
            parts: tally.parts,
        };
        let hashed = self.projection.finish();
        Some(CallOutput {
            parts: SharedParts::default(),
            view: Arc::default(),
            shared_blocks: None,
            report: report(ctx, tally.restored, &before, after, hashed),
            new_entries: Vec::new(),
        })
    }
}

/// The ladder, escalating only while the prediction is over trigger.
fn ladder(
    pass: &mut Pass<'_>,
    parts: &mut Vec<Part>,
    protect_from: u32,
) -> Result<Vec<TierReport>, ReadError> {
    let ctx = pass.ctx;
    let (trigger, stop) = (ctx.budget.trigger(), ctx.budget.stop());
    let mut fired = Vec::new();
    let outside = |p: &Part| p.step < protect_from;

    // Placeholders for what earlier turns sent: free, and minted only here.
    ladder::placehold(pass, parts);
    if pass.predicted <= trigger {
        return Ok(fired);
    }

    // ① shrink old tools outside the protected window, toward stop.
    let r = shrink(pass, Tier::Shrink, parts, outside, stop)?;
    if r.parts_shrunk + r.parts_dropped > 0 {
        fired.push(r);
    }
    if pass.predicted <= trigger {
        return Ok(fired);
    }

    // ② floor: fold the oldest prefix, the boundary held outside the window.
    // A summary minted by this very call (a re-run) counts as this pass's fold.
    let mut folded_this_call = parts
        .first()
        .and_then(Part::summary)
        .is_some_and(|h| h.minted_at == (ctx.turn, ctx.call));
    if !folded_this_call {
        let cap = first_from_step(parts, protect_from);
        if let Some(r) = floor(pass, Tier::Floor, parts, cap, stop) {
            fired.push(r);
            folded_this_call = true;
        }
    }
    if pass.predicted <= trigger {
        return Ok(fired);
    }

    // ③ breakthrough shrink: the whole array, protected window included.
    let r = shrink(pass, Tier::BreakthroughShrink, parts, |_| true, stop)?;
    if r.parts_shrunk + r.parts_dropped > 0 {
        fired.push(r);
    }
    if pass.predicted <= trigger || folded_this_call {
        return Ok(fired);
    }

    // ④ breakthrough floor: fold with no protection, keeping the last step.
    let keep_from = last_generation(parts).max(1);
    let cap = first_from_step(parts, keep_from);
    if let Some(r) = floor(pass, Tier::BreakthroughFloor, parts, cap, stop) {
        fired.push(r);
    }
    Ok(fired)
}

/// The index of the first part at `step` or later (the end when there is none):
/// a fold's cap.
fn first_from_step(parts: &[Part], step: u32) -> usize {
    parts
        .iter()
        .position(|p| p.step >= step)
        .unwrap_or(parts.len())
}

fn last_generation(parts: &[Part]) -> u32 {
    parts.iter().filter_map(|p| p.generation).max().unwrap_or(0)
}

/// Tokens added since the previous call was sent: its tool results and the
/// user input after it (its own output is in the recorded total).
fn increment_since(parts: &[Part], step: u32, est: &dyn Estimator) -> u64 {
    parts
        .iter()
        .filter(|p| p.step >= step)
        .map(|p| match &p.body {
            PartBody::Tool { output, .. } if p.generation == Some(step) => output
                .as_ref()
                .map_or(0, |o| estimate::tool_content_tokens(est, &o.content)),
            PartBody::Tool { .. } => p.tokens,
            PartBody::Block {
                side: Side::User, ..
            } => p.tokens,
            PartBody::Block { .. } if p.generation == Some(step) => 0,
            _ => p.tokens,
        })
        .sum()
}

/// The anti-thrash streak this call starts from, and whether this call is a
/// re-run of the call that last wrote the gate (a re-run never rewrites it).
fn gate_streak(store: StoreView<'_>, ctx: &CallContext<'_>) -> Result<(u32, bool), ReadError> {
    Ok(match store.snapshot.entry(GATE_KEY)? {
        Some(Entry::Gate {
            turn,
            call,
            streak_before,
            streak_after,
        }) if turn == ctx.turn => {
            if call == ctx.call {
                (streak_before, true)
            } else {
                (streak_after, false)
            }
        }
        _ => (0, false),
    })
}

#[cfg(test)]
mod prediction_tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Between the floor (overhead + the unscaled view estimate) and the
        /// raw prediction, whatever the ratio; the raw view is the raw prediction.
        #[test]
        fn a_prediction_stays_between_floor_and_raw(
            overhead in 0u64..50_000,
            raw_estimate in 0u64..500_000,
            extra in 0u64..500_000,
            ppm in 500_000u32..=4_000_000,
            view_share in 0u64..=1000,
        ) {
            let raw = overhead + raw_estimate + extra;
            let m = Prediction { raw, raw_estimate, ratio: Ratio::from_ppm(ppm), overhead };
            let view = raw_estimate * view_share / 1000;
            let p = m.of(view);
            prop_assert!(p >= overhead + view);
            prop_assert!(p <= raw);
            prop_assert_eq!(m.of(raw_estimate), raw);
            // Removing more never predicts more.
            prop_assert!(m.of(view / 2) <= p);
        }
    }
}
