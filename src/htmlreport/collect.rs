//! Gathering a report's data from a replay: one [`Collector::on_call`] per
//! replayed call, then [`Collector::finish`]. Pure: no IO, and every map that
//! reaches the output is ordered.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::CallOutput;
use crate::engine::estimate::Estimator;
use crate::engine::parts::{PartBody, PartState, Side, coverage_key, reconstruct};
use crate::model::{Block, Kind, Message};
use crate::probe::{CallScore, Evaluation, Scorer, extract};
use crate::session::driver::TaskRecordIndex;
use crate::session::replay::StepRow;

/// Tool names that get their own segment in the composition bar; the rest
/// share "other tools".
pub(crate) const TOOL_SEGMENTS: usize = 8;
/// Rows of the largest-tool-outputs table.
pub(crate) const LARGEST_TOOLS: usize = 15;

/// The fixed composition segments, in bar order (tool segments follow
/// `Summary`); each one's label is `FIXED[segment as usize]`.
#[derive(Clone, Copy)]
enum Fixed {
    Overhead,
    Asks,
    Context,
    Assistant,
    Thinking,
    Summary,
}
const FIXED: [&str; 6] = [
    "system + tools",
    "user asks",
    "injected context",
    "assistant text",
    "thinking",
    "summary",
];
const ELIDED: &str = "elided forms";
const OTHER_TOOLS: &str = "other tools";

/// One fold's `## Task Context`, as first seen in the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fold {
    /// The summary's coverage key (`cov:…`).
    pub coverage: String,
    /// Raw parts it folds.
    pub covers: u64,
    pub summarizer: String,
    /// The call that minted it.
    pub minted_turn: u32,
    pub minted_call: u32,
    /// The first replayed call whose view carried it.
    pub first_call: u32,
    pub tokens: u64,
    /// The text as the model sees it (starts with `## Task Context`).
    pub text: String,
}

/// What happened to one tool output, call by call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolFate {
    pub id: String,
    pub name: String,
    /// The model call that issued the tool call.
    pub step: u32,
    /// Raw tokens of the call and its output.
    pub raw_tokens: u64,
    /// State changes after it first appeared: `(call, what)`, e.g. `(12, "shrunk (rule)")`.
    pub events: Vec<(u32, String)>,
    /// Tokens it takes in the last call's view (0 when folded away).
    pub last_tokens: u64,
}

/// Everything the renderer needs besides the header.
#[derive(Debug, Clone)]
pub(crate) struct Collected {
    pub rows: Vec<StepRow>,
    /// Calls made right after the original agent compacted its own context.
    pub agent_compactions: Vec<u32>,
    /// Segment names of the composition bar.
    pub segments: Vec<String>,
    /// Per call, tokens per segment (same order as `segments`).
    pub composition: Vec<Vec<u64>>,
    pub folds: Vec<Fold>,
    pub largest_tools: Vec<ToolFate>,
    /// How many probes the record yields (asks, rules, files written, ...).
    pub probe_count: usize,
    /// Per call, how many of the probes its view keeps.
    pub probe_scores: Vec<CallScore>,
    /// The worst call's full evaluation (fewest critical probes kept, then
    /// fewest kept, the earliest on a tie).
    pub probe_worst: Option<(u32, Evaluation)>,
    /// The client's own compactions its hooks recorded (set by the caller).
    pub client_compactions: Vec<ClientPanel>,
}

/// One compaction of the client's, as the hooks recorded it: its summary
/// and compactor's Task Context, each with how many critical probes of the
/// history it replaced it keeps.
#[derive(Debug, Clone)]
pub(crate) struct ClientPanel {
    pub after_call: u32,
    pub client: String,
    pub trigger: Option<String>,
    /// (who, text, evaluation), the client's first; `None` when not recorded.
    pub sides: Vec<(String, Option<(String, Evaluation)>)>,
}

/// The state of a tracked tool part in one view.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Raw,
    Shrunk(String),
    Dropped,
    Absent,
}

pub(crate) struct Collector {
    overhead: u64,
    rows: Vec<StepRow>,
    /// Per call: fixed segments, tool tokens by name, elided tokens.
    fixed: Vec<[u64; FIXED.len()]>,
    tools: Vec<BTreeMap<String, u64>>,
    elided: Vec<u64>,
    folds: Vec<Fold>,
    seen_folds: BTreeSet<String>,
    /// The largest raw tool outputs, tracked through the replay.
    tracked: Vec<ToolFate>,
    tracked_at: BTreeMap<String, usize>,
    tracked_state: Vec<Option<Seen>>,
    agent_compactions: Vec<u32>,
    scorer: Scorer,
    /// Per call (index `k-1`), the end of its history in the record.
    history_ends: Vec<usize>,
    probe_scores: Vec<CallScore>,
    probe_worst: Option<(u32, Evaluation)>,
}

impl Collector {
    /// Prepare for a replay of `index` (all its calls): `rows` are its rows,
    /// `overhead` its [`TaskRecordIndex::overhead`] (0 when unknown).
    pub(crate) fn new(
        index: &TaskRecordIndex,
        rows: &[Message],
        overhead: u64,
        est: &dyn Estimator,
    ) -> Collector {
        // The largest tool outputs of the whole record, largest first.
        let mut raw: Vec<ToolFate> = reconstruct(rows, est)
            .into_iter()
            .filter_map(|p| match &p.body {
                PartBody::Tool { id, name, .. } => Some(ToolFate {
                    id: id.clone(),
                    name: name.clone(),
                    step: p.step,
                    raw_tokens: p.tokens,
                    events: Vec::new(),
                    last_tokens: 0,
                }),
                _ => None,
            })
            .collect();
        raw.sort_by(|a, b| b.raw_tokens.cmp(&a.raw_tokens).then(a.id.cmp(&b.id)));
        raw.truncate(LARGEST_TOOLS);
        let tracked_at = raw
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        let tracked_state = vec![None; raw.len()];
        Collector {
            overhead,
            rows: Vec::new(),
            fixed: Vec::new(),
            tools: Vec::new(),
            elided: Vec::new(),
            folds: Vec::new(),
            seen_folds: BTreeSet::new(),
            tracked: raw,
            tracked_at,
            tracked_state,
            agent_compactions: agent_compactions(index),
            scorer: Scorer::new(extract(rows)),
            history_ends: (1..=index.calls()).map(|k| index.history_end(k)).collect(),
            probe_scores: Vec::new(),
            probe_worst: None,
        }
    }

    /// Take one replayed call.
    pub(crate) fn on_call(&mut self, row: &StepRow, out: &CallOutput) {
        self.score_probes(row, out);
        let mut fixed = [0u64; FIXED.len()];
        fixed[Fixed::Overhead as usize] = self.overhead;
        let mut tools: BTreeMap<String, u64> = BTreeMap::new();
        let mut elided = 0;
        let mut now: Vec<Option<Seen>> = vec![None; self.tracked.len()];
        for p in &out.parts {
            if p.state != PartState::Raw {
                elided += p.tokens;
            }
            match &p.body {
                PartBody::Summary(h) => {
                    fixed[Fixed::Summary as usize] += p.tokens;
                    let key = coverage_key(&h.coverage);
                    if self.seen_folds.insert(key.clone()) {
                        self.folds.push(Fold {
                            coverage: key,
                            covers: h.covers,
                            summarizer: h.summarizer.clone(),
                            minted_turn: h.minted_at.0,
                            minted_call: h.minted_at.1,
                            first_call: row.call,
                            tokens: p.tokens,
                            text: crate::engine::parts::summary_block_text(&h.text),
                        });
                    }
                }
                PartBody::Tool { id, name, .. } => {
                    if p.state == PartState::Raw {
                        *tools.entry(name.clone()).or_default() += p.tokens;
                    }
                    if let Some(&i) = self.tracked_at.get(id) {
                        now[i] = Some(match &p.state {
                            PartState::Shrunk { rule } => Seen::Shrunk(rule.clone()),
                            PartState::Dropped => Seen::Dropped,
                            _ => Seen::Raw,
                        });
                        self.tracked[i].last_tokens = p.tokens;
                    }
                }
                PartBody::Block { .. } if p.state != PartState::Raw => {}
                PartBody::Block { side, block } => {
                    let seg = match (side, block) {
                        (
                            Side::Assistant,
                            Block::Thinking { .. } | Block::RedactedThinking { .. },
                        ) => Fixed::Thinking,
                        (Side::Assistant, _) => Fixed::Assistant,
                        (Side::User, _) if p.kind == Kind::Ask => Fixed::Asks,
                        (Side::User, _) if p.kind == Kind::CarriedSummary => Fixed::Summary,
                        (Side::User, _) => Fixed::Context,
                    };
                    fixed[seg as usize] += p.tokens;
                }
            }
        }
        // Tool fates: a change of state after the part first appeared.
        for (i, state) in now.into_iter().enumerate() {
            let prev = self.tracked_state[i].clone();
            let state = match (state, &prev) {
                (Some(s), _) => s,
                // Not in the view: folded away once it has been seen, else not yet issued.
                (None, Some(_)) => Seen::Absent,
                (None, None) => continue,
            };
            if state == Seen::Absent {
                self.tracked[i].last_tokens = 0;
            }
            if prev.as_ref() != Some(&state) {
                let what = match &state {
                    Seen::Raw if prev.is_none() => None,
                    Seen::Raw => Some("raw again".to_string()),
                    Seen::Shrunk(rule) => Some(format!("shrunk ({rule})")),
                    Seen::Dropped => Some("dropped to its shell".to_string()),
                    Seen::Absent => Some("folded into the summary".to_string()),
                };
                if let Some(w) = what {
                    self.tracked[i].events.push((row.call, w));
                }
                self.tracked_state[i] = Some(state);
            }
        }
        self.fixed.push(fixed);
        self.tools.push(tools);
        self.elided.push(elided);
        self.rows.push(row.clone());
    }

    /// Score the call's view with the record's probes; keep the worst call.
    fn score_probes(&mut self, row: &StepRow, out: &CallOutput) {
        let end = self
            .history_ends
            .get(row.call as usize - 1)
            .copied()
            .unwrap_or(usize::MAX);
        let e = self.scorer.evaluate(&out.view, end);
        let survival = crate::probe::Survival {
            critical_lost: e.critical_lost,
            critical_kept_permille: e.critical_kept_permille(),
            kept_permille: e.kept_permille(),
        };
        let score = CallScore::of(row.call, row.status, &row.tiers_fired, survival);
        // Strictly worse: the earliest call wins a tie, as in `probe::worst`.
        if self
            .probe_worst
            .as_ref()
            .is_none_or(|(_, w)| e.survival() < w.survival())
        {
            self.probe_worst = Some((row.call, e));
        }
        self.probe_scores.push(score);
    }

    pub(crate) fn finish(self) -> Collected {
        // The tool names with the most tokens over the whole replay get a segment.
        let mut by_name: BTreeMap<&str, u64> = BTreeMap::new();
        for t in &self.tools {
            for (name, tokens) in t {
                *by_name.entry(name).or_default() += tokens;
            }
        }
        let mut names: Vec<(&str, u64)> = by_name.into_iter().collect();
        names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let own: Vec<String> = names
            .iter()
            .take(TOOL_SEGMENTS)
            .map(|(n, _)| n.to_string())
            .collect();
        let has_other = names.len() > TOOL_SEGMENTS;
        let mut segments: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
        segments.extend(own.iter().map(|n| format!("tool: {n}")));
        if has_other {
            segments.push(OTHER_TOOLS.to_string());
        }
        segments.push(ELIDED.to_string());
        let composition = self
            .fixed
            .iter()
            .zip(&self.tools)
            .zip(&self.elided)
            .map(|((fixed, tools), elided)| {
                let mut v: Vec<u64> = fixed.to_vec();
                v.extend(own.iter().map(|n| tools.get(n).copied().unwrap_or(0)));
                if has_other {
                    v.push(
                        tools
                            .iter()
                            .filter(|(n, _)| !own.contains(n))
                            .map(|(_, t)| t)
                            .sum(),
                    );
                }
                v.push(*elided);
                v
            })
            .collect();
        Collected {
            rows: self.rows,
            agent_compactions: self.agent_compactions,
            segments,
            composition,
            folds: self.folds,
            largest_tools: self.tracked,
            probe_count: self.scorer.probes().len(),
            probe_scores: self.probe_scores,
            probe_worst: self.probe_worst,
            client_compactions: Vec::new(),
        }
    }
}

/// Calls made right after the original agent compacted its own context (a
/// compact summary or boundary row recorded since the previous call).
pub(crate) fn agent_compactions(index: &TaskRecordIndex) -> Vec<u32> {
    let mut out = Vec::new();
    let mut from = 0;
    for k in 1..=index.calls() {
        let end = index.history_end(k);
        if index.agent_compacted_in(from, end) {
            out.push(k);
        }
        from = end;
    }
    out
}
