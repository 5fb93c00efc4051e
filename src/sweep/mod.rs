//! `compactor sweep`'s pure part: which compaction policy to use, answered
//! with a session's own numbers.
//!
//! A sweep replays each session under every policy of a grid ([`grid`]),
//! and sets three references beside them: what the client itself sent and
//! paid ([`recorded`]), plain drop-oldest trimming at the same window
//! ([`trim`]) and observation masking, the literature's cheap baseline
//! ([`mask`]). Each run is one [`Row`]; the rows of a session give its
//! recommendation, and the rows of all sessions the totals ([`SweepSummary`]).
//! Rows are plain data, so shards swept on several machines merge by
//! concatenation: the totals are computed from the rows alone.
//!
//! Pure: rows in, rows, totals and pages out; no IO, clock or hash-map
//! order. Money is integer micro-dollars, survival integer per mille.

mod append;
pub(crate) mod grid;
pub(crate) mod html;
pub(crate) mod mask;
pub(crate) mod recorded;
pub(crate) mod trim;

#[cfg(test)]
pub(crate) mod lean_tests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::engine::estimate::Estimator;
use crate::engine::{Status, Tier};
use crate::model::{Message, Usage};
use crate::probe::{Evaluation, Survival, permille};
use crate::session::cost::{CacheTtl, Prices, Totals};
use crate::session::record::TaskRecordIndex;

/// What a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RowKind {
    /// A replay under one policy of the grid.
    Policy,
    /// Drop-oldest trimming at a window of the grid.
    Trim,
    /// Observation masking (old tool outputs become a placeholder, no
    /// summary), its calls over the window told at a window of the grid.
    Mask,
    /// What the client sent and paid, by its recorded usage.
    Recorded,
}

impl RowKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RowKind::Policy => "policy",
            RowKind::Trim => "trim",
            RowKind::Mask => "mask",
            RowKind::Recorded => "recorded",
        }
    }
}

/// Where a policy's window, output reserve or summary budget came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Origin {
    /// Given on the command line.
    Flag,
    /// The session's own window (recorded, else its model's).
    Session,
    /// The window's default (the reserve `min(20000, window / 8)`; the
    /// summary budget 6% of the prompt room, within 2000..=8000).
    Default,
}

/// A run's policy: the budget it ran under. A trim row has only the window
/// and the reserve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFields {
    pub window: u64,
    pub window_from: Origin,
    pub output_reserved: u64,
    pub output_reserved_from: Origin,
    pub trigger_ratio: Option<String>,
    pub stop_ratio: Option<String>,
    pub protect_recent_steps: Option<u32>,
    pub summary_budget: Option<u64>,
    /// Where the summary budget came from; `None` in a trim row.
    #[serde(default)]
    pub summary_budget_from: Option<Origin>,
    pub summarizer: Option<String>,
}

impl PolicyFields {
    /// The policy as asked for, the same in every session: a window or
    /// reserve left to each session is `None`.
    pub(crate) fn key(&self) -> PolicyKey {
        PolicyKey {
            window: (self.window_from == Origin::Flag).then_some(self.window),
            output_reserved: (self.output_reserved_from == Origin::Flag)
                .then_some(self.output_reserved),
            trigger_ratio: self.trigger_ratio.clone(),
            stop_ratio: self.stop_ratio.clone(),
            protect_recent_steps: self.protect_recent_steps,
            // A default budget follows the window: the same policy in
            // sessions of different windows.
            summary_budget: self
                .summary_budget
                .filter(|_| self.summary_budget_from == Some(Origin::Flag)),
            summarizer: self.summarizer.clone(),
        }
    }
}

/// A policy as asked for: what groups the rows of many sessions. `None`
/// window: each session's own; `None` reserve: each window's default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyKey {
    pub window: Option<u64>,
    pub output_reserved: Option<u64>,
    pub trigger_ratio: Option<String>,
    pub stop_ratio: Option<String>,
    pub protect_recent_steps: Option<u32>,
    pub summary_budget: Option<u64>,
    pub summarizer: Option<String>,
}

/// Calls at which each tier fired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TierCounts {
    pub shrink: u32,
    pub floor: u32,
    pub breakthrough_shrink: u32,
    pub breakthrough_floor: u32,
}

impl TierCounts {
    fn add(&mut self, tiers: &[Tier]) {
        for t in tiers {
            match t {
                Tier::Shrink => self.shrink += 1,
                Tier::Floor => self.floor += 1,
                Tier::BreakthroughShrink => self.breakthrough_shrink += 1,
                Tier::BreakthroughFloor => self.breakthrough_floor += 1,
            }
        }
    }
}

/// The call whose view kept the fewest probes: fewest critical ones kept,
/// then fewest kept overall, the earliest on a tie (as `probe` picks it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorstCall {
    pub call: u32,
    pub critical_lost: u64,
    pub critical_kept_permille: u64,
    pub kept_permille: u64,
}

impl WorstCall {
    /// Higher is better: critical probes kept, then all probes kept.
    pub(crate) fn fidelity(&self) -> (u64, u64) {
        (self.critical_kept_permille, self.kept_permille)
    }
}

/// The recorded views priced as the policies are (estimated tokens, the
/// same cache model), so the two compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Estimated {
    pub prompt_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost_micros: u64,
}

/// One run of a session: a policy, the trim, or the recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Row {
    pub kind: RowKind,
    pub session: String,
    pub model: Option<String>,
    /// `None` for the recorded row: the client's own policy is not known.
    pub policy: Option<PolicyFields>,
    pub calls: u32,
    /// Calls predicted over the window (`None` for the recording: the
    /// provider took every call it holds).
    pub over_window_calls: Option<u32>,
    /// Calls the ladder left over trigger (policies only).
    pub breakthrough_calls: Option<u32>,
    /// Calls that folded (policies), the client's own compactions (recorded).
    pub folds: Option<u32>,
    pub tiers: Option<TierCounts>,
    /// Calls at which trimming dropped history (trim), or masking replaced
    /// an output (mask).
    pub trimmed_calls: Option<u32>,
    pub prompt_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The recorded output tokens: the same under every policy.
    pub output_tokens: u64,
    /// The prompt with a cache plus the output, in micro-dollars.
    pub cost_micros: u64,
    /// The largest prompt of a call.
    pub peak_tokens: u64,
    /// Critical probes lost at the last call (`probe --json`'s `critical_lost`).
    pub critical_lost: u64,
    pub worst: Option<WorstCall>,
    /// `estimate` (the replay's cache model on estimated tokens) or
    /// `recorded` (the transcript's usage).
    pub basis: String,
    /// Calls with recorded usage (recorded only).
    pub usage_calls: Option<u32>,
    /// The recorded views on the policies' basis (recorded only).
    pub estimated: Option<Estimated>,
    /// Calls whose view does not extend the previous call's (the cache is
    /// written again from there), as `replay`'s totals count them; for the
    /// recording, its views on the policies' basis.
    #[serde(default)]
    pub prefix_breaks: u32,
}

impl Row {
    /// The cost that compares across kinds: the recorded row's on the
    /// policies' basis.
    pub(crate) fn comparable_cost(&self) -> u64 {
        match &self.estimated {
            Some(e) => e.cost_micros,
            None => self.cost_micros,
        }
    }

    /// A policy a live engine could run on this session as it is: no call
    /// over the window, no critical probe lost at any call.
    pub(crate) fn eligible(&self) -> bool {
        self.kind == RowKind::Policy
            && self.over_window_calls == Some(0)
            && self.worst.is_none_or(|w| w.critical_lost == 0)
    }

    /// Some call lost a critical probe.
    pub(crate) fn loses_critical(&self) -> bool {
        self.worst.is_some_and(|w| w.critical_lost > 0)
    }
}

/// What a run saw call by call: statuses, tiers, peak and probe scores.
#[derive(Debug, Default)]
pub(crate) struct CallTally {
    calls: u32,
    over_window: u32,
    breakthrough: u32,
    folds: u32,
    tiers: TierCounts,
    peak: u64,
    last_critical_lost: u64,
    worst: Option<WorstCall>,
}

impl CallTally {
    /// One call: its prompt `tokens`, its status and tiers, and the score of
    /// its view.
    pub(crate) fn add(
        &mut self,
        call: u32,
        tokens: u64,
        status: Status,
        tiers: &[Tier],
        e: &Evaluation,
    ) {
        let counts = ProbeCounts {
            judged: e.judged,
            kept: e.passed + e.recoverable,
            critical_judged: e.critical_judged,
            critical_lost: e.critical_lost,
        };
        self.add_counts(call, tokens, status, tiers, counts);
    }

    /// [`CallTally::add`], with the view's probe counts.
    pub(crate) fn add_counts(
        &mut self,
        call: u32,
        tokens: u64,
        status: Status,
        tiers: &[Tier],
        e: ProbeCounts,
    ) {
        let s = Survival {
            critical_lost: e.critical_lost,
            critical_kept_permille: permille(
                e.critical_judged - e.critical_lost,
                e.critical_judged,
            ),
            kept_permille: permille(e.kept, e.judged),
        };
        self.add_survival(call, tokens, status, tiers, s);
    }

    /// [`CallTally::add`], with the view's survival (as a probe pass gives it).
    pub(crate) fn add_survival(
        &mut self,
        call: u32,
        tokens: u64,
        status: Status,
        tiers: &[Tier],
        e: Survival,
    ) {
        self.calls += 1;
        match status {
            Status::OverWindow => self.over_window += 1,
            Status::Breakthrough => self.breakthrough += 1,
            Status::Ok | Status::OverTrigger => {}
        }
        if tiers
            .iter()
            .any(|t| matches!(t, Tier::Floor | Tier::BreakthroughFloor))
        {
            self.folds += 1;
        }
        self.tiers.add(tiers);
        self.peak = self.peak.max(tokens);
        self.last_critical_lost = e.critical_lost;
        let now = WorstCall {
            call,
            critical_lost: e.critical_lost,
            critical_kept_permille: e.critical_kept_permille,
            kept_permille: e.kept_permille,
        };
        // Strictly worse only: the earliest call keeps a tie.
        if self.worst.is_none_or(|w| now.fidelity() < w.fidelity()) {
            self.worst = Some(now);
        }
    }

    /// A row on the estimate basis: a run's totals, and what its calls
    /// showed.
    fn estimate_row(
        &self,
        kind: RowKind,
        session: &SessionInfo,
        policy: PolicyFields,
        totals: &Totals,
    ) -> Row {
        let c = &totals.compacted;
        Row {
            kind,
            session: session.task.clone(),
            model: session.model.clone(),
            policy: Some(policy),
            calls: totals.calls,
            over_window_calls: Some(self.over_window),
            breakthrough_calls: None,
            folds: None,
            tiers: None,
            trimmed_calls: None,
            prompt_tokens: c.prompt_tokens,
            cache_read_tokens: c.cache_read_tokens,
            cache_write_tokens: c.cache_write_tokens,
            output_tokens: totals.output_tokens,
            cost_micros: c.cost_cached_usd.0 + totals.cost_output_usd.0,
            peak_tokens: self.peak,
            critical_lost: self.last_critical_lost,
            worst: self.worst,
            basis: "estimate".to_string(),
            usage_calls: None,
            estimated: None,
            prefix_breaks: totals.prefix_breaks,
        }
    }

    /// The row of a policy's replay, with the replay's totals.
    pub(crate) fn policy_row(
        &self,
        session: &SessionInfo,
        policy: PolicyFields,
        totals: &Totals,
    ) -> Row {
        Row {
            breakthrough_calls: Some(self.breakthrough),
            folds: Some(self.folds),
            tiers: Some(self.tiers),
            ..self.estimate_row(RowKind::Policy, session, policy, totals)
        }
    }

    /// The row of a reference run at a window of the grid (`trim`, `mask`),
    /// which dropped or masked history at `changed_calls` calls.
    pub(crate) fn window_row(
        &self,
        kind: RowKind,
        session: &SessionInfo,
        policy: PolicyFields,
        totals: &Totals,
        changed_calls: u32,
    ) -> Row {
        Row {
            trimmed_calls: Some(changed_calls),
            ..self.estimate_row(kind, session, policy, totals)
        }
    }
}

/// What a view's score comes to in a row: probes judged and kept (passed or
/// recoverable), critical ones judged and lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProbeCounts {
    pub judged: u64,
    pub kept: u64,
    pub critical_judged: u64,
    pub critical_lost: u64,
}

/// Reads the record's rows of a range, in order, handing each to the
/// callback: the reference runs read the rows as their calls reach them.
pub(crate) type ReadRows<'r, E> =
    dyn FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E> + 'r;

/// The history a reference holds, fed the record's rows as its calls reach
/// them.
pub(crate) struct History<'r> {
    pub(crate) parts: crate::engine::parts::PartsBuilder,
    fed: usize,
    estimator: &'r dyn Estimator,
}

impl<'r> History<'r> {
    pub(crate) fn of(record: &ReferenceRecord<'r>) -> History<'r> {
        History {
            parts: crate::engine::parts::PartsBuilder::default(),
            fed: 0,
            estimator: record.estimator,
        }
    }

    /// Reads the rows up to `history_end` (a call's history) into the parts.
    pub(crate) fn feed<E>(
        &mut self,
        history_end: usize,
        read: &mut ReadRows<'_, E>,
    ) -> Result<(), E> {
        let (parts, est) = (&mut self.parts, self.estimator);
        read(self.fed..history_end, &mut |m| parts.push(m, est))?;
        self.fed = history_end;
        Ok(())
    }
}

/// How a reference's call of `tokens` ends against the window `w_eff`: a
/// reference never reduces to a trigger, so it is in or over.
pub(crate) fn window_status(tokens: u64, w_eff: u64) -> crate::engine::Status {
    if tokens > w_eff {
        crate::engine::Status::OverWindow
    } else {
        crate::engine::Status::Ok
    }
}

/// What a reference run needs of each recorded call, read off the task's
/// index: where its history ends and its recorded usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallInfo {
    pub history_end: usize,
    pub usage: Option<Usage>,
    /// Sent longer than the cache lives after the call before: it reads
    /// nothing from the cache (see `session::cost::CacheTtl`).
    pub cache_expired: bool,
}

/// Each call of `index`'s record: where its history ends, its recorded
/// usage, and whether the cache had expired by then under `ttl`.
pub(crate) fn call_infos(index: &TaskRecordIndex, ttl: CacheTtl) -> Vec<CallInfo> {
    (1..=index.calls())
        .map(|k| CallInfo {
            history_end: index.history_end(k),
            usage: index.usage(k),
            cache_expired: index.cache_expired(k, ttl.millis()),
        })
        .collect()
}

/// A session's record, as the reference runs read it.
pub(crate) struct ReferenceRecord<'a> {
    pub session: &'a SessionInfo,
    /// Per call, from the first.
    pub calls: Vec<CallInfo>,
    /// The system prompt and tools, in tokens (as the replay's cost model
    /// counts them).
    pub overhead: u64,
    pub prices: Prices,
    pub estimator: &'a dyn Estimator,
}

impl ReferenceRecord<'_> {
    /// The totals a run's views add up to, the output of each call counted
    /// as the replay counts it, and a call after a pause longer than the
    /// cache lives priced as the replay prices it (nothing read).
    fn add_call(&self, totals: &mut Totals, k: usize, read: u64, write: u64) {
        totals.calls += 1;
        let (read, write) = match self.calls[k].cache_expired {
            true => crate::session::cost::expired(read, write),
            false => (read, write),
        };
        totals.compacted.add(read, write, &self.prices);
        let output = self.calls[k].usage.map_or(0, |u| u.output_tokens);
        totals.add_output(output, &self.prices);
    }
}

/// Who a session is, for its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionInfo {
    pub task: String,
    pub model: Option<String>,
}

/// The saving of a cost against a reference: signed micro-dollars, and per
/// mille of the reference (`None` when the reference is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Saving {
    pub saving_micros: i64,
    pub saving_permille: Option<i64>,
}

impl Saving {
    pub(crate) fn of(cost: u64, reference: u64) -> Saving {
        let saving = i128::from(reference) - i128::from(cost);
        Saving {
            saving_micros: saving as i64,
            saving_permille: (reference > 0)
                .then(|| (saving * 1000 / i128::from(reference)) as i64),
        }
    }
}

/// A session's recommendation: the cheapest of the policies fit to run (no
/// call over the window, no critical probe lost at any call) and the
/// recording, keeping what the client does: a policy is never recommended
/// that costs more than doing nothing. On a tie the recording wins, then
/// the first policy in the rows' order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recommendation {
    /// Index of the chosen row among the session's rows: a policy, or the
    /// recording.
    pub row: usize,
    /// Its cost on the policies' basis.
    pub cost_micros: u64,
    /// The recording's cost on the same basis.
    pub recorded_micros: Option<u64>,
    pub saving: Option<Saving>,
    /// The recording is chosen: no policy fit to run is cheaper.
    pub keeps_recorded: bool,
    /// When the recording is chosen though it lost a critical probe: the
    /// cheapest policy fit to run, which keeps them all for more (index
    /// among the rows), if one is.
    pub dearer_fit: Option<usize>,
}

/// The recommendation of one session's rows (see [`Recommendation`]).
pub(crate) fn recommend(rows: &[&Row]) -> Option<Recommendation> {
    let fit = |r: &&Row| r.eligible() || r.kind == RowKind::Recorded;
    let (i, best) = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| fit(r))
        .min_by_key(|(i, r)| (r.comparable_cost(), r.kind != RowKind::Recorded, *i))?;
    let recorded = rows
        .iter()
        .find(|r| r.kind == RowKind::Recorded)
        .map(|r| r.comparable_cost());
    let cost = best.comparable_cost();
    let keeps_recorded = best.kind == RowKind::Recorded;
    let dearer_fit = (keeps_recorded && best.loses_critical())
        .then(|| {
            rows.iter()
                .enumerate()
                .filter(|(_, r)| r.eligible())
                .min_by_key(|(i, r)| (r.cost_micros, *i))
                .map(|(i, _)| i)
        })
        .flatten();
    Some(Recommendation {
        row: i,
        cost_micros: cost,
        recorded_micros: recorded,
        saving: recorded.map(|r| Saving::of(cost, r)),
        keeps_recorded,
        dearer_fit,
    })
}

/// The policies of one session's rows on the Pareto front of cost against
/// fidelity (the probes kept at the worst call, as the chart plots them):
/// those no other policy beats on both, a policy with a call over the window
/// left out (a provider would refuse that call). Indexes into `rows`.
pub(crate) fn pareto_front(rows: &[&Row]) -> Vec<usize> {
    let candidates: Vec<(usize, u64, u64)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.kind == RowKind::Policy && r.over_window_calls == Some(0))
        .map(|(i, r)| (i, r.cost_micros, r.worst.map_or(1000, |w| w.kept_permille)))
        .collect();
    candidates
        .iter()
        .filter(|(_, cost, kept)| {
            !candidates
                .iter()
                .any(|(_, c, k)| c <= cost && k >= kept && (c < cost || k > kept))
        })
        .map(|(i, _, _)| *i)
        .collect()
}

/// A sweep's rows grouped by session, in the order the sessions first
/// appear, with the totals over them.
#[derive(Debug)]
pub(crate) struct SweepSummary<'a> {
    pub sessions: Vec<SweptSession<'a>>,
    pub policies: Vec<GroupTotal>,
    pub trims: Vec<GroupTotal>,
    pub masks: Vec<GroupTotal>,
    pub recorded: Option<GroupTotal>,
    pub recommendation: Option<TotalRecommendation>,
}

/// One session's rows and its recommendation.
#[derive(Debug)]
pub(crate) struct SweptSession<'a> {
    pub task: String,
    pub rows: Vec<&'a Row>,
    pub recommendation: Option<Recommendation>,
}

impl SweptSession<'_> {
    pub(crate) fn recorded(&self) -> Option<&Row> {
        self.rows
            .iter()
            .copied()
            .find(|r| r.kind == RowKind::Recorded)
    }
}

/// Rows of one kind and policy summed over sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct GroupTotal {
    pub kind: RowKind,
    /// The policy as asked for (`None` for the recording).
    pub policy: Option<PolicyKey>,
    pub sessions: u32,
    pub calls: u64,
    pub over_window_calls: Option<u64>,
    pub breakthrough_calls: Option<u64>,
    pub folds: Option<u64>,
    pub prompt_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    pub cost_micros: u64,
    /// The recording on the policies' basis (recorded only).
    pub estimated_cost_micros: Option<u64>,
    pub critical_lost: u64,
    /// Sessions in which some call lost a critical probe.
    pub sessions_losing_critical: u32,
    /// Calls whose view does not extend the call before's.
    pub prefix_breaks: u64,
}

impl GroupTotal {
    fn new(kind: RowKind, policy: Option<PolicyKey>) -> GroupTotal {
        let some = |b: bool| b.then_some(0);
        GroupTotal {
            kind,
            policy,
            sessions: 0,
            calls: 0,
            over_window_calls: some(kind != RowKind::Recorded),
            breakthrough_calls: some(kind == RowKind::Policy),
            folds: some(matches!(kind, RowKind::Policy | RowKind::Recorded)),
            prompt_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            output_tokens: 0,
            cost_micros: 0,
            estimated_cost_micros: some(kind == RowKind::Recorded),
            critical_lost: 0,
            sessions_losing_critical: 0,
            prefix_breaks: 0,
        }
    }

    fn add(&mut self, r: &Row) {
        let plus = |t: &mut Option<u64>, v: Option<u32>| {
            if let (Some(t), Some(v)) = (t.as_mut(), v) {
                *t += u64::from(v);
            }
        };
        self.sessions += 1;
        self.calls += u64::from(r.calls);
        plus(&mut self.over_window_calls, r.over_window_calls);
        plus(&mut self.breakthrough_calls, r.breakthrough_calls);
        plus(&mut self.folds, r.folds);
        self.prompt_tokens += r.prompt_tokens;
        self.cache_read_tokens += r.cache_read_tokens;
        self.cache_write_tokens += r.cache_write_tokens;
        self.output_tokens += r.output_tokens;
        self.cost_micros += r.cost_micros;
        if let (Some(t), Some(e)) = (self.estimated_cost_micros.as_mut(), &r.estimated) {
            *t += e.cost_micros;
        }
        self.critical_lost += r.critical_lost;
        self.sessions_losing_critical += u32::from(r.loses_critical());
        self.prefix_breaks += u64::from(r.prefix_breaks);
    }

    /// The cost that compares across kinds (the recording's on the
    /// policies' basis).
    pub(crate) fn comparable_cost(&self) -> u64 {
        self.estimated_cost_micros.unwrap_or(self.cost_micros)
    }
}

/// The recommendation over every session: the cheapest in total of the
/// policies that ran on every session with no call over the window and no
/// critical probe lost in any of them, and the recordings (keeping what the
/// clients do) when every session has one; the recordings on a tie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TotalRecommendation {
    /// Index into [`SweepSummary::policies`]; `None`: the recordings.
    pub policy: Option<usize>,
    pub cost_micros: u64,
    pub recorded_micros: Option<u64>,
    pub saving: Option<Saving>,
    /// When the recordings are chosen though some lost a critical probe:
    /// the cheapest policy fit for every session, which keeps them all for
    /// more, if one is.
    pub dearer_fit: Option<usize>,
}

/// Group `rows` (any order of sessions; a session's rows in run order) and
/// total them.
pub(crate) fn summarize(rows: &[Row]) -> SweepSummary<'_> {
    let mut sessions: Vec<SweptSession<'_>> = Vec::new();
    // Where each task's session is, so a merge of thousands stays linear.
    let mut at: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        match at.get(r.session.as_str()) {
            Some(&i) => sessions[i].rows.push(r),
            None => {
                at.insert(&r.session, sessions.len());
                sessions.push(SweptSession {
                    task: r.session.clone(),
                    rows: vec![r],
                    recommendation: None,
                });
            }
        }
    }
    for s in &mut sessions {
        s.recommendation = recommend(&s.rows);
    }
    let mut policies: Vec<GroupTotal> = Vec::new();
    let mut trims: Vec<GroupTotal> = Vec::new();
    let mut masks: Vec<GroupTotal> = Vec::new();
    let mut recorded: Option<GroupTotal> = None;
    for s in &sessions {
        for r in &s.rows {
            let key = r.policy.as_ref().map(PolicyFields::key);
            let group = match r.kind {
                RowKind::Policy => find_or_add(&mut policies, r.kind, key),
                RowKind::Trim => find_or_add(&mut trims, r.kind, key),
                RowKind::Mask => find_or_add(&mut masks, r.kind, key),
                RowKind::Recorded => {
                    recorded.get_or_insert_with(|| GroupTotal::new(RowKind::Recorded, None))
                }
            };
            group.add(r);
        }
    }
    let n = sessions.len() as u32;
    let recorded_micros = recorded
        .as_ref()
        .filter(|r| r.sessions == n)
        .map(GroupTotal::comparable_cost);
    let keep = recorded_micros.map(|cost| (None, cost));
    let fit: Vec<(Option<usize>, u64)> = policies
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.sessions == n && p.over_window_calls == Some(0) && p.sessions_losing_critical == 0
        })
        .map(|(i, p)| (Some(i), p.cost_micros))
        .collect();
    let cheapest = |c: &[(Option<usize>, u64)]| {
        c.iter()
            .copied()
            .min_by_key(|&(i, cost)| (cost, i.is_some(), i))
    };
    let losing = recorded
        .as_ref()
        .is_some_and(|r| r.sessions_losing_critical > 0);
    let recommendation = fit
        .iter()
        .copied()
        .chain(keep)
        .min_by_key(|&(i, cost)| (cost, i.is_some(), i))
        .map(|(policy, cost)| TotalRecommendation {
            policy,
            cost_micros: cost,
            recorded_micros,
            saving: recorded_micros.map(|r| Saving::of(cost, r)),
            dearer_fit: match policy {
                None if losing => cheapest(&fit).and_then(|(i, _)| i),
                _ => None,
            },
        });
    SweepSummary {
        sessions,
        policies,
        trims,
        masks,
        recorded,
        recommendation,
    }
}

impl SweepSummary<'_> {
    /// Every total (the policies, trims, masks and the recordings), cheapest
    /// first (in that order on a tie), each with whether it is the one
    /// recommended: the order of the totals' table and page.
    pub(crate) fn ranked(&self) -> Vec<(&GroupTotal, bool)> {
        let mut all: Vec<(usize, &GroupTotal)> = self
            .policies
            .iter()
            .chain(&self.trims)
            .chain(&self.masks)
            .chain(&self.recorded)
            .enumerate()
            .collect();
        all.sort_by_key(|(i, g)| (g.comparable_cost(), *i));
        all.into_iter()
            .map(|(i, g)| {
                let chosen = self
                    .recommendation
                    .as_ref()
                    .is_some_and(|r| match r.policy {
                        Some(p) => p == i && g.kind == RowKind::Policy,
                        None => g.kind == RowKind::Recorded,
                    });
                (g, chosen)
            })
            .collect()
    }

    /// Whether a policy of the grid is fit for every session: it ran on
    /// each, with no call over the window and no critical probe lost.
    pub(crate) fn has_fit_policy(&self) -> bool {
        let n = self.sessions.len() as u32;
        self.policies.iter().any(|p| {
            p.sessions == n && p.over_window_calls == Some(0) && p.sessions_losing_critical == 0
        })
    }

    /// The `compactor.sweep_total/1` record (without its schema).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let sessions: Vec<serde_json::Value> = self
            .sessions
            .iter()
            .map(|s| {
                let rec = s.recommendation.as_ref().map(|r| {
                    let row = s.rows[r.row];
                    let dearer_fit = r.dearer_fit.map(|i| {
                        let fit = s.rows[i];
                        serde_json::json!({"policy": fit.policy, "cost_micros": fit.cost_micros})
                    });
                    serde_json::json!({
                        "kind": row.kind,
                        "policy": row.policy,
                        "cost_micros": r.cost_micros,
                        "recorded_cost_micros": r.recorded_micros,
                        "saving_micros": r.saving.map(|s| s.saving_micros),
                        "saving_permille": r.saving.and_then(|s| s.saving_permille),
                        "dearer_fit": dearer_fit,
                    })
                });
                serde_json::json!({"session": s.task, "recommendation": rec})
            })
            .collect();
        let recommendation = self.recommendation.as_ref().map(|r| {
            let (kind, policy) = match r.policy {
                Some(i) => (RowKind::Policy, self.policies[i].policy.clone()),
                None => (RowKind::Recorded, None),
            };
            let dearer_fit = r.dearer_fit.map(|i| {
                let g = &self.policies[i];
                serde_json::json!({"policy": g.policy, "cost_micros": g.cost_micros})
            });
            serde_json::json!({
                "dearer_fit": dearer_fit,
                "kind": kind,
                "policy": policy,
                "cost_micros": r.cost_micros,
                "recorded_cost_micros": r.recorded_micros,
                "saving_micros": r.saving.map(|s| s.saving_micros),
                "saving_permille": r.saving.and_then(|s| s.saving_permille),
            })
        });
        serde_json::json!({
            "sessions": sessions,
            "policies": self.policies,
            "trim": self.trims,
            "mask": self.masks,
            "recorded": self.recorded,
            "recommendation": recommendation,
        })
    }
}

fn find_or_add(
    groups: &mut Vec<GroupTotal>,
    kind: RowKind,
    key: Option<PolicyKey>,
) -> &mut GroupTotal {
    let at = match groups.iter().position(|g| g.policy == key) {
        Some(i) => i,
        None => {
            groups.push(GroupTotal::new(kind, key));
            groups.len() - 1
        }
    };
    &mut groups[at]
}

/// Which policy parameters take more than one value among `keys`: a label
/// names those only, the rest are the same everywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Varying {
    pub window: bool,
    pub output_reserved: bool,
    pub trigger_ratio: bool,
    pub stop_ratio: bool,
    pub protect_recent_steps: bool,
    pub summary_budget: bool,
    pub summarizer: bool,
}

impl Varying {
    /// Every parameter, for a label that names them all.
    const ALL: Varying = Varying {
        window: true,
        output_reserved: true,
        trigger_ratio: true,
        stop_ratio: true,
        protect_recent_steps: true,
        summary_budget: true,
        summarizer: true,
    };

    /// What varies among the policy keys of `rows`' policies.
    pub(crate) fn of<'a>(keys: impl IntoIterator<Item = &'a PolicyKey>) -> Varying {
        let keys: Vec<&PolicyKey> = keys.into_iter().collect();
        fn differs<T: PartialEq>(keys: &[&PolicyKey], f: impl Fn(&PolicyKey) -> T) -> bool {
            keys.first()
                .is_some_and(|first| keys.iter().any(|k| f(k) != f(first)))
        }
        Varying {
            window: differs(&keys, |k| k.window),
            output_reserved: differs(&keys, |k| k.output_reserved),
            trigger_ratio: differs(&keys, |k| k.trigger_ratio.clone()),
            stop_ratio: differs(&keys, |k| k.stop_ratio.clone()),
            protect_recent_steps: differs(&keys, |k| k.protect_recent_steps),
            summary_budget: differs(&keys, |k| k.summary_budget),
            summarizer: differs(&keys, |k| k.summarizer.clone()),
        }
    }

    fn any(&self) -> bool {
        self.window
            || self.output_reserved
            || self.trigger_ratio
            || self.stop_ratio
            || self.protect_recent_steps
            || self.summary_budget
            || self.summarizer
    }
}

/// A policy's parameters in words (`window 64000 · trigger 0.65`): with
/// `only`, those that vary (all of them when none does); the window and
/// reserve as the session ran them.
pub(crate) fn label(p: &PolicyFields, only: Option<&Varying>) -> String {
    let v = only.filter(|v| v.any()).unwrap_or(&Varying::ALL);
    let mut parts = Vec::new();
    if v.window {
        parts.push(format!("window {}", p.window));
    }
    if v.output_reserved {
        parts.push(format!("reserve {}", p.output_reserved));
    }
    words_of(
        &mut parts,
        v,
        (
            &p.trigger_ratio,
            &p.stop_ratio,
            p.protect_recent_steps,
            p.summary_budget,
            &p.summarizer,
        ),
    );
    parts.join(" · ")
}

/// A policy as asked for in words (`window each session's · trigger 0.65`).
pub(crate) fn key_label(k: &PolicyKey, only: Option<&Varying>) -> String {
    let v = only.filter(|v| v.any()).unwrap_or(&Varying::ALL);
    let mut parts = Vec::new();
    if v.window {
        parts.push(match k.window {
            Some(w) => format!("window {w}"),
            None => "window each session's".to_string(),
        });
    }
    if v.output_reserved {
        parts.push(match k.output_reserved {
            Some(r) => format!("reserve {r}"),
            None => "reserve default".to_string(),
        });
    }
    words_of(
        &mut parts,
        v,
        (
            &k.trigger_ratio,
            &k.stop_ratio,
            k.protect_recent_steps,
            k.summary_budget,
            &k.summarizer,
        ),
    );
    parts.join(" · ")
}

type Rest<'a> = (
    &'a Option<String>,
    &'a Option<String>,
    Option<u32>,
    Option<u64>,
    &'a Option<String>,
);

fn words_of(parts: &mut Vec<String>, v: &Varying, (t, s, p, b, z): Rest<'_>) {
    if let (true, Some(t)) = (v.trigger_ratio, t) {
        parts.push(format!("trigger {t}"));
    }
    if let (true, Some(s)) = (v.stop_ratio, s) {
        parts.push(format!("stop {s}"));
    }
    if let (true, Some(p)) = (v.protect_recent_steps, p) {
        parts.push(format!("protect {p}"));
    }
    match (v.summary_budget, b, z) {
        (true, Some(b), _) => parts.push(format!("summary {b}")),
        // A policy row (it has a summarizer) whose budget follows its window.
        (true, None, Some(_)) => parts.push("summary default".to_string()),
        _ => {}
    }
    if let (true, Some(z)) = (v.summarizer, z) {
        parts.push(format!("{z} summarizer"));
    }
}

/// The parameters every policy of `keys` shares, in words (for a heading):
/// those that do not vary.
pub(crate) fn shared_label(k: &PolicyKey, v: &Varying) -> String {
    let inverse = Varying {
        window: !v.window,
        output_reserved: !v.output_reserved,
        trigger_ratio: !v.trigger_ratio,
        stop_ratio: !v.stop_ratio,
        protect_recent_steps: !v.protect_recent_steps,
        summary_budget: !v.summary_budget,
        summarizer: !v.summarizer,
    };
    if !inverse.any() {
        return String::new();
    }
    key_label(k, Some(&inverse))
}

/// Per mille as a signed percentage with one decimal: `256` → `25.6%`,
/// `-31` → `-3.1%`.
pub(crate) fn signed_percent(permille: i64) -> String {
    let sign = if permille < 0 { "-" } else { "" };
    let m = permille.unsigned_abs();
    format!("{sign}{}.{}%", m / 10, m % 10)
}

/// Signed micro-dollars for people: `$1.10`, `-$0.3200`.
pub(crate) fn signed_dollars(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    format!(
        "{sign}${}",
        crate::model::decimal::Micros(micros.unsigned_abs()).dollars()
    )
}
