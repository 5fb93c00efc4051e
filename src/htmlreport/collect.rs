//! Gathering a report's data: every row of the record through
//! [`Collector::read_row`] first, then one [`Collector::on_call`] per
//! replayed call, then [`Collector::finish`]. What it keeps is what the page
//! draws: the series per call up to `series::DECIMATE_ABOVE` calls and per
//! pixel column past it, the numbers the page's script shows per call or
//! per column, the tables' exact figures, the folds shown. Pure: no IO, and
//! every map that reaches the output is ordered.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::convert::Infallible;

use super::MAX_FOLDS_SHOWN;
use super::series::{Series, decimated};
use super::svg::{LEFT, x_of};
use crate::engine::estimate::Estimator;
use crate::engine::parts::{PartBody, PartState, Side, ToolOutput, coverage_key, part_tokens};
use crate::engine::{CallOutput, Status, Tier};
use crate::model::digest::{Digest, DigestMap};
use crate::model::{Block, Kind, Message, Role};
use crate::probe::precision::Precision;
use crate::probe::{Evaluation, ProbeWorker, Survival};
use crate::session::record::TaskRecordIndex;
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

/// One call's numbers, as the page's script shows them when the call is
/// hovered or picked.
#[derive(Debug, Clone)]
pub(crate) struct Detail {
    pub call: u32,
    pub turn: u32,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub recorded_prompt_tokens: Option<u64>,
    pub raw_tokens: u64,
    pub tiers_fired: Vec<Tier>,
    pub status: Status,
    pub parts_shrunk: u32,
    pub parts_dropped: u32,
    pub parts_folded: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The view hash, its first 12 characters.
    pub hash: String,
    /// Tokens per fixed segment.
    fixed: [u64; FIXED.len()],
    /// Raw tool tokens, by the index of the tool's name (see `Collector::names`).
    tools: Vec<(usize, u64)>,
    elided: u64,
}

/// What the page shows for a stretch of calls: one call, or past
/// `series::DECIMATE_ABOVE` calls a pixel column's, shown by its peak (the
/// call with the most tokens after compaction, the earliest on a tie).
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub detail: Detail,
    /// The stretch's first call and how many calls it holds.
    pub from: u32,
    pub calls: u32,
    /// How many of them fired a tier.
    pub fired: u32,
}

/// A call where tiers fired, as the context chart marks it.
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    pub call: u32,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub tiers_fired: Vec<Tier>,
}

/// The largest values over the replay.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Peaks {
    pub raw: u64,
    pub tokens_after: u64,
    /// Of the raw history, the compacted view before and after, and recorded usage.
    pub all: u64,
    /// Of the view before and after compaction.
    pub view: u64,
    /// Of the raw history and recorded usage.
    pub raw_or_recorded: u64,
    /// Of cache reads and writes together.
    pub cache: u64,
}

/// The per-call series the charts draw.
#[derive(Debug, Clone)]
pub(crate) struct ChartSeries {
    pub raw: Series,
    pub recorded: Series,
    pub tokens_after: Series,
    pub cache_read: Series,
    pub cache_total: Series,
    pub kept: Series,
    pub critical_kept: Series,
}

impl ChartSeries {
    /// A call's probe survival, the calls in order (judged beside the
    /// replay, so taken later than the call's other values).
    fn push_survival(&mut self, s: Survival) {
        self.kept.push(Some(s.kept_permille));
        self.critical_kept.push(Some(s.critical_kept_permille));
    }

    fn new(calls: u64) -> ChartSeries {
        let s = || Series::new(calls);
        ChartSeries {
            raw: s(),
            recorded: s(),
            tokens_after: s(),
            cache_read: s(),
            cache_total: s(),
            kept: s(),
            critical_kept: s(),
        }
    }
}

/// Everything the renderer needs besides the header.
#[derive(Debug, Clone)]
pub(crate) struct Collected {
    /// Calls replayed.
    pub calls: u64,
    /// Drawn per pixel column (see `series`).
    pub decimated: bool,
    /// The last call, and its whole view hash.
    pub last: Option<Detail>,
    pub last_hash: String,
    /// Per call, or per pixel column when decimated.
    pub slots: Vec<Slot>,
    /// Calls where tiers fired.
    pub fired: u64,
    pub peaks: Peaks,
    pub series: ChartSeries,
    pub markers: Vec<Marker>,
    /// Calls made right after the original agent compacted its own context.
    pub agent_compactions: Vec<u32>,
    /// Segment names of the composition bar.
    pub segments: Vec<String>,
    /// Per slot, tokens per segment (same order as `segments`).
    pub composition: Vec<Vec<u64>>,
    /// The last call's.
    pub last_composition: Vec<u64>,
    /// The folds shown (see `MAX_FOLDS_SHOWN`), each with its place among all.
    pub folds: Vec<(usize, Fold)>,
    pub fold_count: usize,
    pub largest_tools: Vec<ToolFate>,
    /// How many probes the record yields (asks, rules, files written, ...).
    pub probe_count: usize,
    /// The worst call's full evaluation (fewest critical probes kept, then
    /// fewest kept, the earliest on a tie).
    pub probe_worst: Option<(u32, Evaluation)>,
    /// The last call's precision: its summary lines that contradict the
    /// record, and the abandoned approaches it keeps.
    pub precision_last: Precision,
    /// Calls whose view carried a misleading line.
    pub misleading_calls: u32,
    /// The call whose view carried the most, and its precision.
    pub most_misleading: Option<(u32, Precision)>,
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

/// The folds the page shows: the first and the last `MAX_FOLDS_SHOWN / 2`.
#[derive(Debug, Default)]
struct FoldLog {
    first: Vec<Fold>,
    last: VecDeque<Fold>,
    count: usize,
}

impl FoldLog {
    fn push(&mut self, f: Fold) {
        self.count += 1;
        if self.first.len() < MAX_FOLDS_SHOWN / 2 {
            self.first.push(f);
            return;
        }
        if self.last.len() == MAX_FOLDS_SHOWN / 2 {
            self.last.pop_front();
        }
        self.last.push_back(f);
    }

    /// The folds kept, each with its index among all.
    fn shown(self) -> Vec<(usize, Fold)> {
        let from = self.count - self.last.len();
        let first = self.first.into_iter().enumerate();
        let last = self
            .last
            .into_iter()
            .enumerate()
            .map(|(i, f)| (from + i, f));
        first.chain(last).collect()
    }
}

/// The largest raw tool outputs of a record read row by row, sized as its
/// parts are (`engine::parts::reconstruct`: a tool call pairs with the
/// first result for its id; a reused id or an unpaired result is text),
/// holding only the calls still waiting for a result and the largest ones.
#[derive(Default)]
struct LargestTools {
    /// Every tool call's id: whether its result came.
    calls: DigestMap<bool>,
    /// The calls waiting for their result: id, name, input, step.
    waiting: DigestMap<(String, String, serde_json::Value, u32)>,
    /// The largest, largest first (then by id).
    top: Vec<ToolFate>,
}

impl LargestTools {
    fn row(&mut self, m: &Message, est: &dyn Estimator) {
        if m.role == Role::Meta || !m.kind.reaches_view() {
            return;
        }
        for block in &m.content {
            match block {
                Block::ToolUse { id, name, input } if m.role == Role::Assistant => {
                    let key = Digest::of(id);
                    if self.calls.contains_key(&key) {
                        continue;
                    }
                    self.calls.insert(key, false);
                    self.waiting
                        .insert(key, (id.clone(), name.clone(), input.clone(), m.step));
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let key = Digest::of(tool_use_id);
                    if self.calls.get(&key) != Some(&false) {
                        continue;
                    }
                    self.calls.insert(key, true);
                    if let Some(call) = self.waiting.remove(&key) {
                        let output = ToolOutput {
                            content: content.clone(),
                            is_error: *is_error,
                        };
                        self.offer(call, Some(output), est);
                    }
                }
                _ => {}
            }
        }
    }

    fn offer(
        &mut self,
        (id, name, input, step): (String, String, serde_json::Value, u32),
        output: Option<ToolOutput>,
        est: &dyn Estimator,
    ) {
        let body = PartBody::Tool {
            id,
            name,
            input,
            output,
        };
        let raw_tokens = part_tokens(est, &body);
        let PartBody::Tool { id, name, .. } = body else {
            unreachable!("a tool part")
        };
        let fate = ToolFate {
            id,
            name,
            step,
            raw_tokens,
            events: Vec::new(),
            last_tokens: 0,
        };
        let at = self
            .top
            .partition_point(|t| (t.raw_tokens, &fate.id) > (fate.raw_tokens, &t.id));
        if at < LARGEST_TOOLS {
            self.top.insert(at, fate);
            self.top.truncate(LARGEST_TOOLS);
        }
    }

    /// The largest, once every row was read (a call never answered is sized
    /// as the view shows it, with the text for a missing result).
    fn finish(mut self, est: &dyn Estimator) -> Vec<ToolFate> {
        let waiting: Vec<_> = self.waiting.drain().map(|(_, call)| call).collect();
        for call in waiting {
            self.offer(call, None, est);
        }
        self.top
    }
}

pub(crate) struct Collector<'e> {
    est: &'e dyn Estimator,
    overhead: u64,
    calls: u64,
    decimated: bool,
    /// While the record is read: its largest tool outputs.
    sizing: Option<LargestTools>,
    /// The probes, read with the record, scoring each call's view on a
    /// thread beside the replay.
    pass: ProbeWorker,
    last: Option<Detail>,
    last_hash: String,
    slots: Vec<Slot>,
    fired: u64,
    peaks: Peaks,
    series: ChartSeries,
    markers: Vec<Marker>,
    /// Tool names met in raw parts, in the order met, and each one's tokens
    /// over the whole replay.
    names: Vec<String>,
    name_at: BTreeMap<String, usize>,
    name_tokens: Vec<u64>,
    folds: FoldLog,
    seen_folds: BTreeSet<String>,
    /// The largest raw tool outputs, tracked through the replay.
    tracked: Vec<ToolFate>,
    tracked_at: BTreeMap<String, usize>,
    tracked_state: Vec<Option<Seen>>,
    agent_compactions: Vec<u32>,
}

impl<'e> Collector<'e> {
    /// Prepare for a replay of `index` (all its calls): `overhead` is its
    /// [`TaskRecordIndex::overhead`] (0 when unknown). Every row of the
    /// record goes through [`Collector::read_row`] before the first call.
    pub(crate) fn new(
        index: &TaskRecordIndex,
        overhead: u64,
        est: &'e dyn Estimator,
    ) -> Collector<'e> {
        let calls = u64::from(index.calls());
        Collector {
            est,
            overhead,
            calls,
            decimated: decimated(calls),
            sizing: Some(LargestTools::default()),
            pass: ProbeWorker::spawn(index.len()),
            last: None,
            last_hash: String::new(),
            slots: Vec::new(),
            fired: 0,
            peaks: Peaks::default(),
            series: ChartSeries::new(calls),
            markers: Vec::new(),
            names: Vec::new(),
            name_at: BTreeMap::new(),
            name_tokens: Vec::new(),
            folds: FoldLog::default(),
            seen_folds: BTreeSet::new(),
            tracked: Vec::new(),
            tracked_at: BTreeMap::new(),
            tracked_state: Vec::new(),
            agent_compactions: agent_compactions(index),
        }
    }

    /// Take the record's next row (all of them, in order, before the replay).
    pub(crate) fn read_row(&mut self, m: &Message) {
        if let Some(sizing) = &mut self.sizing {
            sizing.row(m, self.est);
        }
        self.pass.feed(m);
    }

    /// After the last row: the tool outputs to track.
    fn start(&mut self) {
        let Some(sizing) = self.sizing.take() else {
            return;
        };
        self.tracked = sizing.finish(self.est);
        self.tracked_at = (self.tracked.iter().enumerate())
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        self.tracked_state = vec![None; self.tracked.len()];
    }

    /// The index of a tool name, noted when first met.
    fn name(&mut self, name: &str) -> usize {
        if let Some(&i) = self.name_at.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        self.name_tokens.push(0);
        self.name_at.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// Take one replayed call, whose history is the record's first
    /// `history_rows` rows.
    pub(crate) fn on_call(&mut self, row: &StepRow, out: &CallOutput, history_rows: usize) {
        self.start();
        let every_row_read = |_, _: &mut dyn FnMut(&Message)| Ok::<(), Infallible>(());
        (self.pass)
            .score(
                row.call,
                (&out.view, out.shared_blocks),
                history_rows,
                false,
                every_row_read,
            )
            .unwrap_or_else(|never| match never {});
        let series = &mut self.series;
        self.pass.drain(|_, s| series.push_survival(s));
        let mut fixed = [0u64; FIXED.len()];
        fixed[Fixed::Overhead as usize] = self.overhead;
        let mut tools: Vec<(usize, u64)> = Vec::new();
        let mut elided = 0;
        let mut now: Vec<Option<Seen>> = vec![None; self.tracked.len()];
        for p in out.parts.iter() {
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
                        let i = self.name(name);
                        self.name_tokens[i] += p.tokens;
                        match tools.iter_mut().find(|(n, _)| *n == i) {
                            Some((_, t)) => *t += p.tokens,
                            None => tools.push((i, p.tokens)),
                        }
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
        let recorded = row.recorded_prompt_tokens;
        let peaks = &mut self.peaks;
        peaks.raw = peaks.raw.max(row.raw_tokens);
        peaks.tokens_after = peaks.tokens_after.max(row.tokens_after);
        peaks.view = (peaks.view).max(row.tokens_before).max(row.tokens_after);
        peaks.raw_or_recorded = (peaks.raw_or_recorded)
            .max(row.raw_tokens)
            .max(recorded.unwrap_or(0));
        peaks.all = peaks.all.max(peaks.view).max(peaks.raw_or_recorded);
        peaks.cache = (peaks.cache).max(row.cache_read_tokens + row.cache_write_tokens);
        let s = &mut self.series;
        s.raw.push(Some(row.raw_tokens));
        s.recorded.push(recorded);
        s.tokens_after.push(Some(row.tokens_after));
        s.cache_read.push(Some(row.cache_read_tokens));
        s.cache_total
            .push(Some(row.cache_read_tokens + row.cache_write_tokens));
        let fired = !row.tiers_fired.is_empty();
        if fired {
            self.fired += 1;
            self.markers.push(Marker {
                call: row.call,
                tokens_before: row.tokens_before,
                tokens_after: row.tokens_after,
                tiers_fired: row.tiers_fired.clone(),
            });
        }
        let detail = Detail {
            call: row.call,
            turn: row.turn,
            tokens_before: row.tokens_before,
            tokens_after: row.tokens_after,
            recorded_prompt_tokens: recorded,
            raw_tokens: row.raw_tokens,
            tiers_fired: row.tiers_fired.clone(),
            status: row.status,
            parts_shrunk: row.parts_shrunk,
            parts_dropped: row.parts_dropped,
            parts_folded: row.parts_folded,
            cache_read_tokens: row.cache_read_tokens,
            cache_write_tokens: row.cache_write_tokens,
            hash: row.view_hash[..row.view_hash.len().min(12)].to_string(),
            fixed,
            tools,
            elided,
        };
        self.slot(detail.clone(), fired);
        self.last = Some(detail);
        self.last_hash.clone_from(&row.view_hash);
    }

    /// File a call's detail under its slot: its own, or its pixel column's,
    /// whose peak it becomes if it has more tokens after compaction.
    fn slot(&mut self, d: Detail, fired: bool) {
        let starts = match self.slots.last() {
            None => true,
            Some(_) if !self.decimated => true,
            Some(last) => {
                let x = |k: u32| x_of(u64::from(k), self.calls);
                x(last.from) != x(d.call)
            }
        };
        if starts {
            debug_assert!(
                !self.decimated
                    || x_of(u64::from(d.call), self.calls) - LEFT == self.slots.len() as u64
            );
            self.slots.push(Slot {
                from: d.call,
                calls: 1,
                fired: u32::from(fired),
                detail: d,
            });
            return;
        }
        let slot = self.slots.last_mut().expect("a slot");
        slot.calls += 1;
        slot.fired += u32::from(fired);
        if d.tokens_after > slot.detail.tokens_after {
            slot.detail = d;
        }
    }

    /// What was collected, and the record's probes (every row read).
    pub(crate) fn finish(mut self) -> (Collected, Vec<crate::probe::Probe>) {
        self.start();
        let series = &mut self.series;
        let every_row_read = |_, _: &mut dyn FnMut(&Message)| Ok::<(), Infallible>(());
        let judge = (self.pass)
            .finish(every_row_read, |_, s| series.push_survival(s))
            .unwrap_or_else(|never| match never {});
        // The tool names with the most tokens over the whole replay get a segment.
        let mut names: Vec<(usize, u64)> = self.name_tokens.iter().copied().enumerate().collect();
        names.sort_by(|a, b| b.1.cmp(&a.1).then(self.names[a.0].cmp(&self.names[b.0])));
        let own: Vec<usize> = names.iter().take(TOOL_SEGMENTS).map(|(i, _)| *i).collect();
        let has_other = names.len() > TOOL_SEGMENTS;
        let mut segments: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
        segments.extend(own.iter().map(|&i| format!("tool: {}", self.names[i])));
        if has_other {
            segments.push(OTHER_TOOLS.to_string());
        }
        segments.push(ELIDED.to_string());
        let composition_of = |d: &Detail| {
            let tokens = |i: usize| d.tools.iter().find(|(n, _)| *n == i).map_or(0, |(_, t)| *t);
            let mut v: Vec<u64> = d.fixed.to_vec();
            v.extend(own.iter().map(|&i| tokens(i)));
            if has_other {
                v.push(
                    (d.tools.iter())
                        .filter(|(n, _)| !own.contains(n))
                        .map(|(_, t)| t)
                        .sum(),
                );
            }
            v.push(d.elided);
            v
        };
        let composition = self
            .slots
            .iter()
            .map(|s| composition_of(&s.detail))
            .collect();
        let last_composition = self.last.as_ref().map(composition_of).unwrap_or_default();
        let fold_count = self.folds.count;
        let probes = judge.probes().to_vec();
        let precision_last = judge.latest_precision().clone();
        let misleading_calls = judge.misleading_calls();
        let most_misleading = judge.most_misleading().map(|(k, p)| (k, p.clone()));
        let collected = Collected {
            calls: self.slots.iter().map(|s| u64::from(s.calls)).sum(),
            decimated: self.decimated,
            last: self.last,
            last_hash: self.last_hash,
            slots: self.slots,
            fired: self.fired,
            peaks: self.peaks,
            series: self.series,
            markers: self.markers,
            agent_compactions: self.agent_compactions,
            segments,
            composition,
            last_composition,
            folds: self.folds.shown(),
            fold_count,
            largest_tools: self.tracked,
            probe_count: probes.len(),
            probe_worst: judge.into_worst(),
            precision_last,
            misleading_calls,
            most_misleading,
            client_compactions: Vec::new(),
        };
        (collected, probes)
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
