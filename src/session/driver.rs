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

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Deref;

use crate::engine::budget::Budget;
use crate::engine::entries::{ANCHOR_KEY, Entry};
use crate::engine::estimate::Estimator;
use crate::engine::measure::MeasureBuilder;
use crate::engine::parts::{
    ChainResume, Part, PartsBuilder, SummaryHead, ToolCalls, coverage_key, coverage_next,
    coverage_start, decode_coverage_key, reconstruct,
};
use crate::engine::restore::{Snapshot, StoreView, ToolForms, summary_part};
use crate::engine::summarizer::Summarizer;
use crate::engine::toolrules::ToolForm;
use crate::engine::{
    Calibration, CallContext, CallOutput, Mode, RawMeasure, SharedParts, StreamedPreflight,
    run_call_resuming,
};
use crate::model::decimal::Ratio;
use crate::model::digest::{Digest, DigestMap};
use crate::model::{Kind, Message, Usage};
use crate::store::{RowHead, Store, StoreError};
use crate::summarize::StaticCheckpoint;
use crate::view::HashResume;

/// A task's record, indexed by model call: per-row metadata only (kind,
/// turn, step, recorded usage), with the rows' content read from the store
/// by range when a caller needs it, so an index costs a few bytes per row
/// whatever the rows hold.
pub struct TaskRecordIndex {
    pub task: String,
    rows: RowSource,
    /// Per row: its kind.
    kinds: Vec<Kind>,
    /// Per row its turn, as runs: `(first row, turn)`, by row.
    turns: Vec<(usize, u32)>,
    /// `first_row[s - 1]`: index of the first row of generation `s`.
    first_row: Vec<usize>,
    /// Recorded usage per generation (the last one written), by step.
    usage: UsageTable,
    /// Whether the agent compacted its own context before generation `s`.
    agent_compacted_before: Vec<bool>,
    /// The first row of the conversation (the record's length when it has
    /// none): a compaction row before it (the boundary a session that began
    /// at a compaction opens with) compacted nothing the record holds.
    first_conversation: usize,
    /// The calls whose recorded usage measures the raw history, ascending.
    raw_calls: Vec<u32>,
}

/// An index's per-row metadata, built from the rows' heads as they are
/// read, in order (never all the heads at once: at 100K calls they were
/// 40 MB).
#[derive(Default)]
struct HeadsBuilder {
    /// Per row: its kind.
    kinds: Vec<Kind>,
    /// Per row its turn, as runs: `(first row, turn)`.
    turns: Vec<(usize, u32)>,
    /// `first_row[s - 1]`: index of the first row of generation `s`.
    first_row: Vec<usize>,
    /// The step of each generation id (by its digest), from the first row
    /// of the last generation that started with it.
    step_of_gen: DigestMap<u32>,
    /// Per generation so far, the usage last recorded on a row of its id.
    usage: UsageTable,
    /// The usage last recorded on a row of an id no generation started
    /// with yet.
    pending: DigestMap<Usage>,
}

impl HeadsBuilder {
    fn push(&mut self, m: RowHead) {
        let i = self.kinds.len();
        if m.kind == Kind::Generation && m.step as usize > self.first_row.len() {
            self.first_row.push(i);
            self.usage.packed.push(NO_USAGE);
            if let Some(g) = &m.gen_id {
                let g = Digest::of(g);
                let now = m.step as usize - 1;
                // An id's usage is its last generation's (the last one
                // written wins), the rows recorded before it started too.
                let u = match self.step_of_gen.insert(g, m.step) {
                    Some(s) => self.usage.take(s as usize - 1),
                    None => self.pending.remove(&g),
                };
                if let Some(u) = u {
                    self.usage.set(now, u);
                }
            }
        }
        self.kinds.push(m.kind);
        if self.turns.last().is_none_or(|&(_, t)| t != m.turn) {
            self.turns.push((i, m.turn));
        }
        let (Some(u), Some(g)) = (m.usage, m.gen_id) else {
            return;
        };
        let g = Digest::of(&g);
        match self.step_of_gen.get(&g) {
            Some(&s) => self.usage.set(s as usize - 1, u),
            None => {
                self.pending.insert(g, u);
            }
        }
    }

    fn finish(self, task: &str, source: RowSource) -> TaskRecordIndex {
        let HeadsBuilder {
            mut kinds,
            mut turns,
            mut first_row,
            step_of_gen,
            mut usage,
            pending,
        } = self;
        drop((step_of_gen, pending));
        let calls = first_row.len();
        // Kept for the whole run: no room left to grow into.
        usage.packed.shrink_to_fit();
        kinds.shrink_to_fit();
        turns.shrink_to_fit();
        first_row.shrink_to_fit();
        let first_conversation = kinds
            .iter()
            .position(|k| k.reaches_view())
            .unwrap_or(kinds.len());
        let mut agent_compacted_before = vec![false; calls];
        let mut compacted = false;
        let mut next = 0;
        for (i, kind) in kinds.iter().enumerate() {
            while next < calls && first_row[next] == i {
                agent_compacted_before[next] = compacted;
                next += 1;
            }
            if is_agent_compaction(*kind) && i > first_conversation {
                compacted = true;
            }
        }
        let mut index = TaskRecordIndex {
            task: task.to_string(),
            rows: source,
            kinds,
            turns,
            first_row,
            usage,
            agent_compacted_before,
            first_conversation,
            raw_calls: Vec::new(),
        };
        index.raw_calls = (1..=index.calls())
            .filter(|&k| index.raw_recorded(k).is_some())
            .collect();
        index.raw_calls.shrink_to_fit();
        index
    }
}

/// Recorded usage per generation, four 32-bit counts each (a usage with a
/// count past them is kept apart, whole): 16 bytes a call rather than 40.
#[derive(Default)]
struct UsageTable {
    packed: Vec<[u32; 4]>,
    /// The usages that do not fit, by generation index.
    wide: BTreeMap<usize, Usage>,
}

/// No usage recorded (a usage whose counts are all `u32::MAX` is wide).
const NO_USAGE: [u32; 4] = [u32::MAX; 4];

impl UsageTable {
    /// Generation `i` recorded `u` (a step past the generations started is
    /// not one: left out).
    fn set(&mut self, i: usize, u: Usage) {
        if i >= self.packed.len() {
            return;
        }
        let counts = [
            u.input_tokens,
            u.output_tokens,
            u.cache_read_input_tokens,
            u.cache_creation_input_tokens,
        ]
        .map(|n| u32::try_from(n).ok().filter(|&n| n != u32::MAX));
        match counts {
            [Some(a), Some(b), Some(c), Some(d)] => {
                self.packed[i] = [a, b, c, d];
                self.wide.remove(&i);
            }
            _ => {
                self.packed[i] = NO_USAGE;
                self.wide.insert(i, u);
            }
        }
    }

    /// Generation `i`'s usage, taken out of the table.
    fn take(&mut self, i: usize) -> Option<Usage> {
        let u = self.get(i);
        if let Some(p) = self.packed.get_mut(i) {
            *p = NO_USAGE;
            self.wide.remove(&i);
        }
        u
    }

    fn get(&self, i: usize) -> Option<Usage> {
        match *self.packed.get(i)? {
            NO_USAGE => self.wide.get(&i).copied(),
            [a, b, c, d] => Some(Usage {
                input_tokens: a.into(),
                output_tokens: b.into(),
                cache_read_input_tokens: c.into(),
                cache_creation_input_tokens: d.into(),
            }),
        }
    }
}

/// Where an index reads its rows' content.
enum RowSource {
    /// A connection of its own to the store file (a run may write through
    /// another one meanwhile; the record is append-only), and the last block
    /// of rows read from it: its first row's index and the rows.
    Store {
        store: Box<Store>,
        block: RefCell<(usize, Vec<Message>)>,
    },
    /// The rows themselves: an index of rows in memory, or of an in-memory
    /// store (which has no second connection).
    Memory(Vec<Message>),
}

/// How many rows an index reads from the store at a time (one query each:
/// a query per call costs more than the rows it reads).
const READ_BLOCK: usize = if cfg!(test) { 4 } else { 256 };

impl TaskRecordIndex {
    pub fn load(store: &Store, task: &str) -> Result<TaskRecordIndex, StoreError> {
        match store.reopen()? {
            Some(own) => {
                let mut heads = HeadsBuilder::default();
                own.reader().each_row_head(task, |h| heads.push(h))?;
                Ok(heads.finish(
                    task,
                    RowSource::Store {
                        store: Box::new(own),
                        block: RefCell::new((0, Vec::new())),
                    },
                ))
            }
            None => Ok(TaskRecordIndex::new(task, store.reader().task_rows(task)?)),
        }
    }

    /// An index of rows held in memory.
    pub fn new(task: &str, rows: Vec<Message>) -> TaskRecordIndex {
        let mut heads = HeadsBuilder::default();
        for m in &rows {
            heads.push(RowHead {
                kind: m.kind,
                turn: m.turn,
                step: m.step,
                gen_id: m.gen_id.clone(),
                usage: m.usage,
            });
        }
        heads.finish(task, RowSource::Memory(rows))
    }

    /// The index's own connection to the store file, if it reads its rows
    /// from one.
    fn own_store(&self) -> Option<&Store> {
        match &self.rows {
            RowSource::Store { store, .. } => Some(store),
            RowSource::Memory(_) => None,
        }
    }

    /// What the overhead is measured from: the system rows and the first
    /// call with recorded usage (while both stay, so does the overhead).
    fn overhead_inputs(&self) -> (usize, Option<u32>) {
        let system = self.kinds.iter().filter(|k| **k == Kind::System).count();
        let first = (1..=self.calls()).find(|k| self.usage(*k).is_some());
        (system, first)
    }

    /// The number of rows in the record.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the record has no rows.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The kind of row `i`.
    pub fn kind(&self, i: usize) -> Kind {
        self.kinds[i]
    }

    /// The turn of row `i`.
    fn turn_at(&self, i: usize) -> u32 {
        let run = self.turns.partition_point(|&(first, _)| first <= i);
        self.turns[run - 1].1
    }

    /// Whether rows `from..to` hold the agent compacting its own context (a
    /// compact summary or boundary row after the conversation began).
    pub fn agent_compacted_in(&self, from: usize, to: usize) -> bool {
        let from = from.max(self.first_conversation + 1);
        from < to && self.kinds[from..to].iter().any(|k| is_agent_compaction(*k))
    }

    /// Rows `from..to`, each handed to `f` with its index as it is read: at
    /// most a block of rows in memory at a time (`READ_BLOCK` rows). `f` must
    /// not read this index's rows itself.
    pub fn each_row(
        &self,
        from: usize,
        to: usize,
        mut f: impl FnMut(usize, &Message),
    ) -> Result<(), StoreError> {
        match &self.rows {
            RowSource::Memory(rows) => {
                for (i, m) in rows[from..to].iter().enumerate() {
                    f(from + i, m);
                }
                Ok(())
            }
            RowSource::Store { store, block } => {
                let mut block = block.borrow_mut();
                let mut i = from;
                while i < to {
                    let (start, rows) = &mut *block;
                    if !(*start..*start + rows.len()).contains(&i) {
                        // Read ahead a block: the rows a run reads next
                        // (the rest of the turn, the history at the turn
                        // start) mostly follow.
                        let end = self.len().min(i + READ_BLOCK);
                        rows.clear();
                        store
                            .reader()
                            .each_stored(&self.task, i as u64, end as u64, |s| {
                                rows.push(s.message);
                                Ok::<(), StoreError>(())
                            })?;
                        *start = i;
                        if rows.len() != end - i {
                            return Err(StoreError::Corrupt(format!(
                                "task {}: rows {i}..{end} were indexed, {} read",
                                self.task,
                                rows.len()
                            )));
                        }
                    }
                    let stop = to.min(*start + rows.len());
                    for (j, m) in rows[i - *start..stop - *start].iter().enumerate() {
                        f(i + j, m);
                    }
                    i = stop;
                }
                Ok(())
            }
        }
    }

    /// Rows `from..to`, read into memory.
    pub fn read_rows(&self, from: usize, to: usize) -> Result<Vec<Message>, StoreError> {
        if let RowSource::Memory(rows) = &self.rows {
            return Ok(rows[from..to].to_vec());
        }
        let mut out = Vec::with_capacity(to - from);
        self.each_row(from, to, |_, m| out.push(m.clone()))?;
        Ok(out)
    }

    /// Every row, read into memory (for what needs the whole record at once:
    /// `show`, probe extraction, the report).
    pub fn all_rows(&self) -> Result<Vec<Message>, StoreError> {
        self.read_rows(0, self.len())
    }

    /// The recorded system rows (the request's system prompt and tools), read
    /// alone.
    pub fn system_rows(&self) -> Result<Vec<Message>, StoreError> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.len() {
            if self.kind(i) != Kind::System {
                i += 1;
                continue;
            }
            let run = self.kinds[i..]
                .iter()
                .take_while(|k| **k == Kind::System)
                .count();
            out.extend(self.read_rows(i, i + run)?);
            i += run;
        }
        Ok(out)
    }

    /// The number of model calls (generations) recorded.
    pub fn calls(&self) -> u32 {
        self.first_row.len() as u32
    }

    /// Rows before model call `k` (call `calls()+1` is the next, unrecorded one).
    pub fn history_end(&self, k: u32) -> usize {
        match k
            .checked_sub(1)
            .and_then(|i| self.first_row.get(i as usize))
        {
            Some(&i) => i,
            None => self.len(),
        }
    }

    /// The turn call `k` belongs to.
    pub fn turn_of(&self, k: u32) -> u32 {
        let end = self.history_end(k);
        end.checked_sub(1).map_or(0, |i| self.turn_at(i))
    }

    /// The first call of the turn call `k` belongs to.
    pub fn turn_first_call(&self, k: u32) -> u32 {
        let t = self.turn_of(k);
        let mut first = k;
        while first > 1 && self.turn_of(first - 1) == t {
            first -= 1;
        }
        first
    }

    /// Whether call `k` is the last of its turn in the record.
    pub fn ends_turn(&self, k: u32) -> bool {
        k >= self.calls() || self.turn_of(k + 1) != self.turn_of(k)
    }

    /// Recorded usage of call `k`, if the transcript has it.
    pub fn usage(&self, k: u32) -> Option<Usage> {
        k.checked_sub(1).and_then(|i| self.usage.get(i as usize))
    }

    /// Recorded prompt tokens sent at call `k`.
    pub fn recorded_prompt(&self, k: u32) -> Option<u64> {
        self.usage(k).map(|u| u.prompt_tokens())
    }

    /// The raw history measured at every call `1..=calls()+1` (index `k-1`),
    /// in one streamed walk over the record (running totals, no re-walk per
    /// call).
    pub fn raw_measures(&self, est: &dyn Estimator) -> Result<Vec<RawMeasure>, StoreError> {
        self.measures_until(self.calls() + 1, est)
    }

    /// The raw history measured at calls `1..=last`.
    fn measures_until(
        &self,
        last: u32,
        est: &dyn Estimator,
    ) -> Result<Vec<RawMeasure>, StoreError> {
        let mut m = Measures::default();
        m.ensure(self, last, est)?;
        Ok(m.out)
    }

    /// Whether the recorded usage of call `k` measures the raw history (the
    /// agent had not compacted its own context by then).
    fn raw_recorded(&self, k: u32) -> Option<u64> {
        let i = k.checked_sub(1)? as usize;
        if *self.agent_compacted_before.get(i)? {
            return None;
        }
        self.recorded_prompt(k)
    }

    /// The session's recorded/estimated ratio as known before call `k`: the
    /// growth of the recorded prompt over the growth of the raw history's
    /// estimate, between the first and the last earlier call with raw usage
    /// (the overhead cancels out). `None` when fewer than two such calls or
    /// less than [`MIN_RATIO_SPAN`] estimated tokens apart.
    pub fn ratio_before(&self, k: u32, measures: &[RawMeasure]) -> Option<Ratio> {
        let raw = |j: u32| {
            self.raw_recorded(j)
                .map(|p| (p, measures[j as usize - 1].estimate))
        };
        // The first and the last call before `k` with raw usage.
        let before = &self.raw_calls[..self.raw_calls.partition_point(|&j| j < k)];
        let first = raw(*before.first()?)?;
        let last = raw(*before.last()?)?;
        let de = last.1.checked_sub(first.1)?;
        let dp = last.0.checked_sub(first.0)?;
        if de < MIN_RATIO_SPAN || dp == 0 {
            return None;
        }
        let ppm = (u128::from(dp) * 1_000_000 / u128::from(de))
            .clamp(u128::from(MIN_RATIO_PPM), u128::from(MAX_RATIO_PPM));
        Some(Ratio::from_ppm(ppm as u32))
    }

    /// Overhead (system prompt and tools): the larger of the estimate of the
    /// recorded request's `system` rows (Claude Code 2.1.3xx
    /// `api-request-shape`, a request's `system`, Codex base instructions) and
    /// the first recorded call's prompt minus the estimate of the messages it
    /// was sent (clamped at 0). The larger, because a record can hold only part
    /// of the request (Codex records no tools) or a redacted prompt.
    pub fn overhead(&self, est: &dyn Estimator) -> Result<Option<u64>, StoreError> {
        let system: u64 = self
            .system_rows()?
            .iter()
            .flat_map(|m| &m.content)
            .map(|b| crate::engine::estimate::block_tokens(est, b))
            .sum();
        // The raw estimate at that call is the sum of its history's parts'
        // tokens, measured without building them.
        let measured = match (1..=self.calls()).find(|k| self.usage(*k).is_some()) {
            Some(k) => {
                let estimate = self.measures_until(k, est)?[k as usize - 1].estimate;
                self.recorded_prompt(k).map(|p| p.saturating_sub(estimate))
            }
            None => None,
        };
        Ok(match measured {
            Some(m) => Some(m.max(system)),
            None => (system > 0).then_some(system),
        })
    }
}

/// The raw history measured call by call from running totals over the rows
/// seen so far. A driver offers it the rows it reads for the parts, so a
/// row is read once for both.
#[derive(Default)]
struct Measures {
    builder: MeasureBuilder,
    /// Rows seen.
    fed: usize,
    /// `out[k - 1]`: the raw history measured at call `k` (room made for
    /// every call at once).
    out: Vec<RawMeasure>,
}

impl Measures {
    /// Row `i` of the record: taken if it is the next one not seen yet.
    fn offer(&mut self, index: &TaskRecordIndex, i: usize, m: &Message, est: &dyn Estimator) {
        if i == self.fed {
            self.emit(index, i);
            self.builder.push(m, est);
            self.fed += 1;
        }
    }

    /// Measure the calls whose history ends at row `row` (all rows before
    /// it seen, none after).
    fn emit(&mut self, index: &TaskRecordIndex, row: usize) {
        loop {
            let k = self.out.len() as u32 + 1;
            if k > index.calls() + 1 || index.history_end(k) != row {
                return;
            }
            if self.out.capacity() == 0 {
                self.out.reserve_exact(index.calls() as usize + 1);
            }
            self.out.push(self.builder.measure(k - 1));
            // The next call's measure starts from this call.
            self.builder.forget_before(k - 1);
        }
    }

    /// Measured at calls `1..=k` (`k` at most `calls()+1`), reading the
    /// rows not seen yet.
    fn ensure(
        &mut self,
        index: &TaskRecordIndex,
        k: u32,
        est: &dyn Estimator,
    ) -> Result<(), StoreError> {
        let k = k.min(index.calls() + 1);
        if self.out.len() >= k as usize {
            return Ok(());
        }
        let end = index.history_end(k);
        index.each_row(self.fed, end, |i, m| self.offer(index, i, m, est))?;
        self.emit(index, end);
        Ok(())
    }
}

/// A row of the agent compacting its own context (once the conversation
/// began: see [`TaskRecordIndex::agent_compacted_in`]). A carried summary is
/// none: it opens the record, which holds nothing it replaced.
fn is_agent_compaction(kind: Kind) -> bool {
    matches!(kind, Kind::CompactSummary | Kind::CompactBoundary)
}

/// The least growth of the raw estimate (tokens) a ratio is measured over.
pub const MIN_RATIO_SPAN: u64 = 2_000;
/// The ratio is kept within [0.5, 4]: outside it the record is not measuring
/// what the estimate measures.
const MIN_RATIO_PPM: u32 = 500_000;
const MAX_RATIO_PPM: u32 = 4_000_000;

/// Engine settings for a run.
pub struct RunSettings<'a> {
    pub budget: Budget,
    pub estimator: &'a dyn Estimator,
    pub summarizer: &'a dyn Summarizer,
    /// Stands in when `summarizer` fails (the static checkpoint in practice).
    pub fallback: &'a dyn Summarizer,
}

impl<'a> RunSettings<'a> {
    /// Settings with the static checkpoint as the fallback summarizer.
    pub fn new(
        budget: Budget,
        estimator: &'a dyn Estimator,
        summarizer: &'a dyn Summarizer,
    ) -> Self {
        RunSettings {
            budget,
            estimator,
            summarizer,
            fallback: &StaticCheckpoint,
        }
    }

    /// What stored state depends on besides the record: the budget (the
    /// summary budget included), the summarizer and the tool rules. State is
    /// kept apart per profile, and progress only trusted under equal settings.
    pub fn identity(&self) -> serde_json::Value {
        serde_json::json!({
            "budget": self.budget,
            "summarizer": self.summarizer.name(),
            "tool_rules": crate::engine::toolrules::default_rules_id(),
        })
    }

    /// The compaction profile these settings run under: a short blake3 of
    /// [`RunSettings::identity`]'s canonical JSON (serde_json sorts keys).
    pub fn profile(&self) -> String {
        profile_of(&self.identity())
    }
}

/// The profile id of a settings identity.
pub fn profile_of(identity: &serde_json::Value) -> String {
    blake3::hash(identity.to_string().as_bytes()).to_hex()[..16].to_string()
}

/// The last call an in-place run of `task` committed under these settings.
pub fn resume_point(
    store: &Store,
    task: &str,
    settings: &RunSettings<'_>,
) -> Result<Option<u32>, StoreError> {
    Ok(
        match store.reader().replay_progress(task, &settings.profile())? {
            Some((k, s)) if s == settings.identity() => Some(k),
            _ => None,
        },
    )
}

/// A profile's snapshot entries as the driver last read them, decoded, with
/// every summary's text and every tool entry's form left out (read again by
/// key when one is restored, see [`CachedSnapshot`]): each floor stores a
/// summary that extends the last one, so the texts together grow with the
/// square of the history (at 100K calls, GBs), while a call reads one of
/// them at most; the forms grow with the history (about 90 MB of JSON at
/// 100K calls), while a call restores those of its window at most.
struct SnapshotCache {
    /// The store instance and its `data_version` when they were read.
    read_at: (u64, i64),
    /// By their keys' digests: the keys' text is not kept.
    entries: DigestMap<Held>,
    /// The coverage hashes of the `cov:` keys among them.
    covers: HashSet<[u8; 32]>,
}

impl SnapshotCache {
    /// The profile's entries read from `store`, one row at a time.
    fn read(
        read_at: (u64, i64),
        store: &Store,
        task: &str,
        profile: &str,
    ) -> Result<SnapshotCache, StoreError> {
        let mut cache = SnapshotCache {
            read_at,
            entries: DigestMap::default(),
            covers: HashSet::new(),
        };
        store.reader().each_entry(task, profile, |key, v| {
            if let Some(e) = Entry::from_value(&v) {
                cache.entries.insert(Digest::of(&key), Held::of(e));
                cache.covers.extend(decode_coverage_key(&key));
            }
        })?;
        Ok(cache)
    }

    /// The entry held under `key`.
    fn held(&self, key: &str) -> Option<&Held> {
        self.entries.get(&Digest::of(key))
    }

    /// The store now holds `value` under `key` (written by this driver).
    fn put(&mut self, key: &str, value: &serde_json::Value) {
        // Decoded as `SnapshotCache::read` decodes: an entry that does not
        // decode is left out (never trusted).
        match Entry::from_value(value) {
            Some(e) => {
                self.entries.insert(Digest::of(key), Held::of(e));
                self.covers.extend(decode_coverage_key(key));
            }
            None => {
                self.entries.remove(&Digest::of(key));
                if let Some(h) = decode_coverage_key(key) {
                    self.covers.remove(&h);
                }
            }
        }
    }
}

/// An entry as the cache keeps it: a summary or a tool entry by its kind
/// alone (read whole by key when it is asked for), a few bytes beside its
/// key; any other entry whole.
#[derive(Debug, Clone, PartialEq)]
enum Held {
    Summary,
    Shrink,
    Drop,
    Whole(Box<Entry>),
}

impl Held {
    fn of(e: Entry) -> Held {
        match e {
            Entry::Summary { .. } => Held::Summary,
            Entry::Shrink { .. } => Held::Shrink,
            Entry::Drop => Held::Drop,
            e => Held::Whole(Box::new(e)),
        }
    }
}

/// The cache as the engine reads it: a summary or a tool entry is read
/// whole from the store it was cached from (the cache is current: refreshed
/// before every call, and no write happens during one). A read that fails
/// is kept for the driver to return after the call.
struct CachedSnapshot<'s> {
    cache: &'s SnapshotCache,
    store: &'s Store,
    task: &'s str,
    profile: &'s str,
    failed: FirstFailure,
}

impl CachedSnapshot<'_> {
    fn read(&self, key: &str) -> Result<Option<Entry>, StoreError> {
        Ok(match self.cache.held(key) {
            Some(Held::Summary | Held::Shrink) => self
                .store
                .reader()
                .entry(self.task, self.profile, key)?
                .as_ref()
                .and_then(Entry::from_value),
            Some(Held::Drop) => Some(Entry::Drop),
            Some(Held::Whole(e)) => Some(Entry::clone(e)),
            None => None,
        })
    }

    /// The first read that failed, if any.
    fn check(self) -> Result<(), StoreError> {
        self.failed.check()
    }
}

impl Snapshot for CachedSnapshot<'_> {
    fn entry(&self, key: &str) -> Option<Entry> {
        self.failed.or_none(self.read(key))
    }
}

/// The first store read that failed during a call (the engine's lookups
/// cannot fail), kept for the driver to return after the call.
#[derive(Default)]
struct FirstFailure(RefCell<Option<StoreError>>);

impl FirstFailure {
    /// What `r` read, or none when it failed (the failure kept).
    fn or_none<T>(&self, r: Result<Option<T>, StoreError>) -> Option<T> {
        r.unwrap_or_else(|e| {
            self.0.borrow_mut().get_or_insert(e);
            None
        })
    }

    fn check(self) -> Result<(), StoreError> {
        self.0.into_inner().map_or(Ok(()), Err)
    }
}

/// Where a driver reads the import-time tool forms (only a step's ladder
/// reads them).
enum FormSource {
    /// Every form, in memory: for an index of rows in memory (an in-memory
    /// store's forms, or those it lent a scratch store).
    Held(std::sync::Arc<crate::store::ToolForms>),
    /// Read one at a time by tool call id through the index's own connection
    /// to the store file (forms are minted once, at import, and a run reads
    /// them from the store it imported into, whatever store it writes to).
    /// Which ids have a form is read at the first step and kept as hashes,
    /// so that looking up a part with none reads nothing.
    ByKey(Option<HashSet<u64>>),
}

impl FormSource {
    fn of(store: &Store, index: &TaskRecordIndex) -> Result<FormSource, StoreError> {
        Ok(match index.own_store() {
            Some(_) => FormSource::ByKey(None),
            None => FormSource::Held(store.tool_forms(&index.task)?),
        })
    }

    /// Read which ids have a form, if that is not known yet.
    fn prepare(&mut self, index: &TaskRecordIndex) -> Result<(), StoreError> {
        if let (FormSource::ByKey(ids @ None), Some(own)) = (&mut *self, index.own_store()) {
            let mut set = HashSet::new();
            own.reader().each_tool_form_id(&index.task, |id| {
                set.insert(form_id_hash(id));
            })?;
            *ids = Some(set);
        }
        Ok(())
    }
}

/// A tool call id as [`FormSource::ByKey`] keeps it: a fixed hash (two ids
/// that share one only cost a read that finds nothing).
fn form_id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The tool forms as the engine reads them. A read that fails is kept for
/// the driver to return after the call.
struct FormReader<'s> {
    source: &'s FormSource,
    index: &'s TaskRecordIndex,
    failed: FirstFailure,
}

impl<'s> FormReader<'s> {
    fn new(source: &'s FormSource, index: &'s TaskRecordIndex) -> FormReader<'s> {
        FormReader {
            source,
            index,
            failed: FirstFailure::default(),
        }
    }

    fn read(&self, id: &str) -> Result<Option<ToolForm>, StoreError> {
        match (self.source, self.index.own_store()) {
            (FormSource::Held(forms), _) => Ok(forms.get(id).cloned()),
            (FormSource::ByKey(Some(ids)), Some(own)) if ids.contains(&form_id_hash(id)) => {
                own.reader().tool_form(&self.index.task, id)
            }
            _ => Ok(None),
        }
    }

    /// The first read that failed, if any.
    fn check(self) -> Result<(), StoreError> {
        self.failed.check()
    }
}

impl ToolForms for FormReader<'_> {
    fn form(&self, id: &str) -> Option<ToolForm> {
        self.failed.or_none(self.read(id))
    }
}

/// The raw history's parts up to some row, with the coverage chain over
/// their addresses. Addresses never change once a part exists (a later tool
/// result only fills its call's output), so the chain only ever grows. The
/// parts and the chain are kept only from the last part a stored summary
/// folded on (see [`Driver::raw_parts`]): what a summary folds is never shown
/// again while the summary is stored, and no stored coverage ends before it
/// is the longest while that summary is stored (the chain's first hash), so
/// the history costs what follows its last fold, not a hash per part.
struct RawHistory {
    builder: PartsBuilder,
    /// Rows fed.
    fed: usize,
    /// `chain[i - builder.offset()]`: the coverage hash of parts `..=i`
    /// (of all parts made).
    chain: VecDeque<[u8; 32]>,
    /// Where each hash of the chain is.
    at: HashMap<[u8; 32], usize>,
}

impl RawHistory {
    /// An empty history, looking its tool calls up in the record's shared
    /// `ids` (those its measures keep).
    fn new(ids: ToolCalls) -> RawHistory {
        RawHistory {
            builder: PartsBuilder::sharing(ids),
            fed: 0,
            chain: VecDeque::new(),
            at: HashMap::new(),
        }
    }

    /// Feed rows `self.fed..end` of the record, read as they are needed.
    fn feed(
        &mut self,
        index: &TaskRecordIndex,
        end: usize,
        est: &dyn Estimator,
        measures: &mut Measures,
    ) -> Result<(), StoreError> {
        let builder = &mut self.builder;
        index.each_row(self.fed, end, |i, m| {
            builder.push(m, est);
            measures.offer(index, i, m, est);
        })?;
        self.fed = end;
        let offset = self.builder.offset();
        for i in offset + self.chain.len()..offset + self.builder.parts.len() {
            let prev = self.chain.back().copied().unwrap_or_else(coverage_start);
            let h = coverage_next(&prev, &self.builder.parts[i - offset].address);
            self.chain.push_back(h);
            self.at.entry(h).or_insert(i);
        }
        Ok(())
    }

    /// Drop the parts before part `i` (of all parts made), and their chain.
    fn drop_front(&mut self, i: usize) {
        let offset = self.builder.offset();
        for (j, h) in self.chain.drain(..i - offset).enumerate() {
            if self.at.get(&h) == Some(&(offset + j)) {
                self.at.remove(&h);
            }
        }
        self.builder.drop_front(i - offset);
    }

    /// Whether a stored summary still folds what was dropped (the chain's
    /// first hash is a stored coverage), so that no shorter one can be the
    /// longest: when another writer forgot it, the history must be built
    /// again from the first row.
    fn fold_kept(&self, covers: &HashSet<[u8; 32]>) -> bool {
        self.builder.offset() == 0 || self.chain.front().is_some_and(|h| covers.contains(h))
    }

    /// Built again from the first row: a summary that folded less than what
    /// was dropped is the longest one now (another writer forgot state).
    fn rebuilt(
        index: &TaskRecordIndex,
        end: usize,
        est: &dyn Estimator,
        measures: &mut Measures,
    ) -> Result<RawHistory, StoreError> {
        let mut r = RawHistory::new(measures.builder.tool_calls().clone());
        r.feed(index, end, est, measures)?;
        Ok(r)
    }
}

/// How many rows the raw history is fed at a time before what a stored
/// summary folds is dropped (a few under test, so that the property tests'
/// short sessions drop between slices too).
const FEED_ROWS: usize = if cfg!(test) { 3 } else { 2048 };

/// The stored summary coverage that is the longest prefix of the raw
/// history's parts: the index of the last part it folds, and its hash.
fn longest_fold<'s>(snap: &'s SnapshotCache, raw: &RawHistory) -> Option<(usize, &'s [u8; 32])> {
    snap.covers
        .iter()
        .filter_map(|h| raw.at.get(h).map(|&i| (i, h)))
        .max_by_key(|(i, _)| *i)
}

/// The snapshot cache as the engine reads it, from `store`.
fn cached<'s>(
    snap: &'s SnapshotCache,
    store: &'s Store,
    task: &'s str,
    profile: &'s str,
) -> CachedSnapshot<'s> {
    CachedSnapshot {
        cache: snap,
        store,
        task,
        profile,
        failed: FirstFailure::default(),
    }
}

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
    profile: String,
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
    snapshot: Option<SnapshotCache>,
    raw_history: Option<RawHistory>,
    /// Where the last view's hash left off.
    hash_resume: HashResume,
    /// Where the last restore's coverage walk left off.
    chain: ChainResume,
    /// The tool call index of the last step's parts, for the next step's
    /// builder to check and reuse (see [`PartsBuilder::continuing`]).
    tool_index: HashMap<String, usize>,
    /// This driver makes one call (see [`Driver::one_shot`]).
    one_shot: bool,
    /// What the next step at this call anchors on in place of the record's
    /// own usage (see [`Driver::anchor_next`]).
    anchor: Option<(u32, u64, Option<Ratio>)>,
}

impl<'a, I: Deref<Target = TaskRecordIndex>> Driver<'a, I> {
    pub fn new(
        store: &Store,
        index: I,
        settings: RunSettings<'a>,
    ) -> Result<Driver<'a, I>, StoreError> {
        let profile = settings.profile();
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
            hash_resume: HashResume::default(),
            tool_index: HashMap::new(),
            chain: ChainResume::default(),
            one_shot: false,
            anchor: None,
        })
    }

    /// A driver that keeps no cache: every call reads the snapshot from the
    /// store and rebuilds the raw history from the record. Slow; the
    /// reference the cached driver is held to.
    pub fn uncached(
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
            slot => slot.insert(RawHistory::new(self.raw.builder.tool_calls().clone())),
        };
        // Fed a slice of rows at a time, dropping what the longest stored
        // summary folds so far as it goes: a history built from the first
        // row (a new driver over a store with state) never holds all of it.
        while raw.fed < end {
            let to = end.min(raw.fed + FEED_ROWS);
            raw.feed(index, to, est, &mut self.raw)?;
            if let Some((i, h)) = longest_fold(snap, raw)
                && i > raw.builder.offset()
                && matches!(snap.held(&coverage_key(h)), Some(Held::Summary))
            {
                raw.drop_front(i);
            }
        }
        let stored = cached(snap, store, &index.task, &self.profile);
        let best = match longest_fold(snap, raw) {
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
        if need < raw.builder.offset() {
            *raw = RawHistory::rebuilt(index, end, est, &mut self.raw)?;
        }
        let Some((i, head)) = best else {
            if self.one_shot {
                // No later call reads the history: hand it over, uncopied.
                let raw = self.raw_history.take().expect("fed above");
                return Ok(raw.builder.parts);
            }
            return Ok(raw.builder.parts.clone());
        };
        let parts = &raw.builder.parts[i - raw.builder.offset()..];
        let head = summary_part(&parts[0], head, est);
        let mut out = Vec::with_capacity(parts.len());
        out.push(head);
        out.extend_from_slice(&parts[1..]);
        // What the summary folds is not shown again while it is stored.
        raw.drop_front(i);
        Ok(out)
    }

    /// This driver makes one call: its view is hashed without keeping a copy
    /// of it for the next call's hash to resume from.
    pub fn one_shot(&mut self) {
        self.hash_resume = HashResume::off();
        self.one_shot = true;
    }

    /// This driver makes one call whose view only its report needs: the
    /// view is hashed as it is projected and never held (the call's
    /// [`CallOutput::view`] is left empty, and so are its parts when no
    /// summary is stored; its report is the same).
    pub fn one_shot_unkept(&mut self) {
        self.one_shot();
        self.hash_resume = HashResume::unkept();
    }

    /// Record every committed call as this task's replay progress, with the
    /// settings it ran under, in the same transaction as the call's entries.
    pub fn record_progress(&mut self, settings: serde_json::Value) {
        self.progress = Some(settings);
    }

    /// Anchor call `k` on `real` tokens for the call before it, and on
    /// `ratio`, in place of what the record's usage gives: for a live run,
    /// whose recorded usage measured the view it forwarded rather than the
    /// raw history (the caller turns it into what the raw history would
    /// have measured). Holds for the next step at `k` only.
    pub fn anchor_next(&mut self, k: u32, real: u64, ratio: Option<Ratio>) {
        self.anchor = Some((k, real, ratio));
    }

    fn context(&self, k: u32, mode: Mode) -> CallContext<'a> {
        let idx = &*self.index;
        let anchor = self.anchor.filter(|(at, _, _)| *at == k);
        let previous_call = k
            .checked_sub(1)
            .filter(|p| *p >= 1)
            .and_then(|p| match anchor {
                Some((_, real, _)) => Some((p, real)),
                None => idx
                    .usage(p)
                    .map(|u| (p, u.prompt_tokens() + u.output_tokens)),
            });
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
                overhead: self.overhead,
                previous_call,
                agent_compacted,
                raw: k
                    .checked_sub(1)
                    .and_then(|i| self.raw.out.get(i as usize))
                    .copied(),
                ratio: match anchor {
                    Some((_, _, ratio)) => ratio,
                    None => idx.ratio_before(k, &self.raw.out),
                },
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
        if !(self.cached && self.one_shot && self.hash_resume.keeps_no_view() && fresh)
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
        let mut builder = PartsBuilder::sharing(self.raw.builder.tool_calls().clone());
        let (raw, mut fed) = (&mut self.raw, 0);
        while fed < end {
            let to = end.min(fed + FEED_ROWS);
            index.each_row(fed, to, |i, m| {
                builder.push(m, est);
                raw.offer(index, i, m, est);
            })?;
            fed = to;
            for p in builder.take_front(builder.complete()) {
                stream.push(p);
            }
        }
        for p in builder.into_parts().0 {
            stream.push(p);
        }
        raw.ensure(index, first, est)?;
        let ctx = self.context(first, Mode::Preflight);
        let out = stream.finish(&ctx);
        stored.check()?;
        forms.check()?;
        Ok(out)
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
            self.hash_resume.reset();
            self.chain = ChainResume::default();
        }
        let snap = self.snapshot.as_ref().expect("refreshed before use");
        let stored = cached(snap, store, &self.index.task, &self.profile);
        let forms = FormReader::new(&self.tool_forms, &self.index);
        let out = run_call_resuming(
            parts,
            ctx,
            StoreView {
                snapshot: &stored,
                covers: &snap.covers,
                tool_forms: &forms,
            },
            &mut self.hash_resume,
            &mut self.chain,
        );
        stored.check()?;
        forms.check()?;
        Ok(out)
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
                let pre = self.preflight(store, k)?;
                (pre.parts.into_vec(), self.index.history_end(first))
            }
        };
        let tool_index = match self.cached {
            true => std::mem::take(&mut self.tool_index),
            false => HashMap::new(),
        };
        let mut builder = PartsBuilder::continuing(base, tool_index);
        let (index, est, raw) = (&*self.index, self.settings.estimator, &mut self.raw);
        index.each_row(from, end, |i, m| {
            builder.push(m, est);
            raw.offer(index, i, m, est);
        })?;
        raw.ensure(index, k, est)?;
        let (parts, tool_index) = builder.into_parts();
        self.tool_index = tool_index;
        self.refresh(store)?;
        let ctx = self.context(k, Mode::Step);
        let out = self.run(store, parts, &ctx)?;
        let mut writes = out.new_entries.clone();
        if self.index.ends_turn(k) && k <= self.index.calls() {
            // Turn end: persist the calibration anchor for the next turn's preflight.
            let real = self.index.usage(k).map_or(out.report.tokens_after, |u| {
                u.prompt_tokens() + u.output_tokens
            });
            let anchor = Entry::Anchor {
                turn: ctx.turn,
                real_tokens: real,
                overhead: self.overhead,
            };
            writes.push((ANCHOR_KEY.to_string(), anchor.to_value()));
        }
        let task = self.index.task.clone();
        let progress = self.progress.as_ref();
        let profile = &self.profile;
        let identity = self.settings.identity();
        store.transaction(|tx| -> Result<(), StoreError> {
            if !writes.is_empty() {
                tx.put_profile(profile, &identity)?;
            }
            for (key, v) in &writes {
                tx.put_entry(&task, profile, key, v)?;
            }
            if let Some(settings) = progress {
                tx.put_profile(profile, &identity)?;
                tx.set_replay_progress(&task, profile, settings, k)?;
            }
            Ok(())
        })?;
        if let Some(cache) = self.snapshot.as_mut().filter(|_| self.cached) {
            for (key, v) in &writes {
                cache.put(key, v);
            }
        }
        if self.progress.is_some() {
            crate::fault::after_call(k);
        }
        // Shared with the output, not copied.
        self.last = Some((k, out.parts.clone(), end));
        self.anchor = None;
        Ok(out)
    }

    /// Forget the in-memory checkpoint (the next step re-derives it from the store).
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
        let continues = index.task == old.task
            && index.len() >= old.len()
            && index.calls() >= old.calls()
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
        let mut heads = HeadsBuilder::default();
        own.reader().each_row_head(&task, |h| heads.push(h))?;
        let mut index = Box::new(heads.finish(&task, RowSource::Memory(Vec::new())));
        // The rows are read where they were: the same connection and the
        // block it last read (the record is append-only).
        index.rows = std::mem::replace(&mut self.index.rows, RowSource::Memory(Vec::new()));
        self.grow(store, index)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::engine::estimate::CharsPerToken;
    use crate::session::props::{budget, build, transcript};
    use crate::store::{DbLocation, Store};
    use crate::summarize::StaticCheckpoint;

    #[test]
    fn the_snapshot_cache_holds_no_summary_text_nor_tool_form_and_reads_them_by_key() {
        let mut store = Store::open_memory().unwrap();
        let summary = |text: &str| Entry::Summary {
            text: text.into(),
            covers: 3,
            summarizer: "extractive".into(),
            extends: None,
            minted_turn: 1,
            minted_call: 2,
        };
        let (key, later) = (coverage_key(&[7; 32]), coverage_key(&[8; 32]));
        let shrink = Entry::Shrink {
            rule: "r".into(),
            form: serde_json::json!({"input": {"a": 1}}),
        };
        store
            .transaction(|tx| -> Result<(), StoreError> {
                tx.upsert_task(&task_t())?;
                tx.put_entry("t", "p", &key, &summary("## Requests\n- #1: a").to_value())?;
                tx.put_entry("t", "p", "tool:x", &shrink.to_value())?;
                tx.put_entry("t", "p", "meta:x", &serde_json::json!({"kind": "nonsense"}))
            })
            .unwrap();
        let mut cache = SnapshotCache::read((0, 0), &store, "t", "p").unwrap();
        assert_eq!(
            cache.entries.len(),
            2,
            "an entry that does not decode is left out"
        );
        assert_eq!(cache.held(&key), Some(&Held::Summary));
        assert_eq!(cache.held("tool:x"), Some(&Held::Shrink));
        assert!(cache.covers.contains(&[7; 32]));
        // The driver's own write is held the same way, and read back whole.
        let text = "## Requests\n- #1: a\n- #2: b";
        store
            .transaction(|tx| tx.put_entry("t", "p", &later, &summary(text).to_value()))
            .unwrap();
        cache.put(&later, &summary(text).to_value());
        assert_eq!(cache.held(&later), Some(&Held::Summary));
        let stored = cached(&cache, &store, "t", "p");
        assert_eq!(stored.entry(&key), Some(summary("## Requests\n- #1: a")));
        assert_eq!(stored.entry(&later), Some(summary(text)));
        assert_eq!(stored.entry("tool:x"), Some(shrink));
        assert_eq!(stored.entry("meta:x"), None);
        stored.check().unwrap();
    }

    /// The record of the tests' task `t`.
    fn task_t() -> crate::store::TaskRecord {
        crate::store::TaskRecord {
            id: "t".into(),
            format: "anthropic".into(),
            ..Default::default()
        }
    }

    /// Put a simulated transcript into a store the way import does.
    fn stored(events: &[crate::session::props::Ev], store: &mut Store) -> TaskRecordIndex {
        let sim = build(events);
        store
            .transaction(|tx| -> Result<(), StoreError> {
                tx.upsert_task(&task_t())?;
                tx.append_messages("t", None, sim.messages())?;
                for f in sim.forms.values() {
                    tx.put_tool_form("t", f)?;
                }
                Ok(())
            })
            .unwrap();
        TaskRecordIndex::load(store, "t").unwrap()
    }

    /// Every call's view, report and new entries, as one string.
    fn outcome(out: &CallOutput) -> String {
        format!(
            "{}\n{}\n{}",
            String::from_utf8(out.view.canonical_bytes()).unwrap(),
            serde_json::to_string(&out.report).unwrap(),
            serde_json::to_string(&out.new_entries).unwrap()
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::session::props::cases(32), ..ProptestConfig::default() })]

        /// The caches are caches of the derivation: a cached driver (its
        /// snapshot, raw history and measures, view hash resumed) gives
        /// byte-identical views, reports and entries to one that re-derives
        /// everything at every call, also when the driver forgets its
        /// checkpoint, and when another connection forgets the compaction
        /// state between calls (the cache must see `data_version` move).
        #[test]
        fn cached_and_uncached_drivers_agree(
            events in transcript(),
            b in budget(),
            forget_at in 0u32..30,
            wipe_at in 0u32..30,
        ) {
            let est = CharsPerToken::default();
            let settings = || RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint };
            let dir = tempfile::tempdir().unwrap();
            let loc = DbLocation::File(dir.path().join("cached.db"));
            let mut cached_store = Store::open(&loc).unwrap();
            let index = stored(&events, &mut cached_store);
            let mut reference_store = Store::open_memory().unwrap();
            let reference_index = stored(&events, &mut reference_store);
            let mut cached = Driver::new(&cached_store, &index, settings()).unwrap();
            let mut reference = Driver::uncached(&reference_store, &reference_index, settings()).unwrap();
            for k in 1..=index.calls() + 1 {
                if k == wipe_at {
                    // Another writer: a second connection to the cached store.
                    let mut other = Store::open(&loc).unwrap();
                    other.transaction(|tx| tx.forget_compaction("t", None)).unwrap();
                    reference_store.transaction(|tx| tx.forget_compaction("t", None)).unwrap();
                }
                if k == forget_at {
                    cached.forget();
                    reference.forget();
                }
                let a = outcome(&cached.step(&mut cached_store, k).unwrap());
                let r = outcome(&reference.step(&mut reference_store, k).unwrap());
                prop_assert_eq!(a, r, "call {}", k);
                let a = outcome(&cached.preflight(&cached_store, k).unwrap());
                let r = outcome(&reference.preflight(&reference_store, k).unwrap());
                prop_assert_eq!(a, r, "preflight at call {}", k);
                prop_assert_eq!(cached.raw_estimate(k).unwrap(), reference.raw_estimate(k).unwrap());
            }
        }

        /// A one-shot preflight that never holds its view (hashed as it is
        /// projected, the raw history handed over uncopied, rows read from
        /// the store as they are needed) reports exactly what a preflight
        /// that builds its view does: the same hash of the same bytes, the
        /// same messages, parts and measures, at every call, also once calls
        /// have stored summaries and forms for it to restore.
        #[test]
        fn unkept_one_shot_preflight_reports_what_the_built_view_gives(events in transcript(), b in budget()) {
            let est = CharsPerToken::default();
            let settings = || RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint };
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
            let index = stored(&events, &mut store);
            let mut stepper = Driver::new(&store, &index, settings()).unwrap();
            for k in 1..=index.calls() + 1 {
                let built = stepper.preflight(&store, k).unwrap();
                let mut once = Driver::new(&store, &index, settings()).unwrap();
                once.one_shot_unkept();
                let unkept = once.preflight(&store, k).unwrap();
                // With no summary stored it streams its parts and keeps none.
                let no_summary = once.snapshot.as_ref().unwrap().covers.is_empty();
                prop_assert_eq!(unkept.parts.is_empty(), no_summary || built.parts.is_empty(), "call {}", k);
                prop_assert_eq!(&unkept.report.view_hash, &built.view.hash(), "call {}", k);
                prop_assert_eq!(unkept.report.messages, built.view.messages.len());
                prop_assert_eq!(
                    serde_json::to_string(&unkept.report).unwrap(),
                    serde_json::to_string(&built.report).unwrap(),
                    "call {}", k
                );
                if !no_summary {
                    prop_assert_eq!(&unkept.parts[..], &built.parts[..]);
                }
                prop_assert_eq!(&unkept.new_entries, &built.new_entries);
                prop_assert!(unkept.view.messages.is_empty());
                stepper.step(&mut store, k).unwrap();
            }
        }

        /// A tool form read by id through the index's own connection (the
        /// ids that have one kept as hashes) is the one the whole map holds,
        /// for every id that has one, and none for an id that has none; an
        /// index of rows in memory holds the map itself.
        #[test]
        fn tool_forms_read_by_id_agree_with_the_whole_map(events in transcript(), other in "[a-z0-9_]{1,12}") {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
            let index = stored(&events, &mut store);
            let all = store.reader().tool_forms("t").unwrap();
            let mut source = FormSource::of(&store, &index).unwrap();
            prop_assert!(matches!(source, FormSource::ByKey(None)));
            // Before the first step prepares it, nothing is read.
            prop_assert_eq!(all.keys().find_map(|id| FormReader::new(&source, &index).form(id)), None);
            source.prepare(&index).unwrap();
            let forms = FormReader::new(&source, &index);
            for (id, f) in &all {
                prop_assert_eq!(forms.form(id), Some(f.clone()));
            }
            prop_assert_eq!(forms.form(&other), all.get(&other).cloned());
            forms.check().unwrap();
            let mut mem = Store::open_memory().unwrap();
            let held_index = stored(&events, &mut mem);
            let held = FormSource::of(&mem, &held_index).unwrap();
            prop_assert!(matches!(held, FormSource::Held(_)));
            let held = FormReader::new(&held, &held_index);
            for (id, f) in &all {
                prop_assert_eq!(held.form(id), Some(f.clone()));
            }
            prop_assert_eq!(held.form(&other), all.get(&other).cloned());
        }

        /// After every call of a run, the snapshot cache read by key (a
        /// summary's text and a tool entry's form read from the store) gives
        /// every stored entry exactly as decoding them all does, and the raw
        /// history keeps its parts and its coverage chain only from its last
        /// fold: the chain is the whole history's chain from there on, and
        /// its first hash is a stored coverage.
        #[test]
        fn the_cache_read_by_key_agrees_with_every_entry_decoded_and_the_chain_starts_at_the_last_fold(
            events in transcript(),
            b in budget(),
        ) {
            let est = CharsPerToken::default();
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
            let index = stored(&events, &mut store);
            let mut d = Driver::new(&store, &index, RunSettings::new(b, &est, &StaticCheckpoint)).unwrap();
            let rows = index.all_rows().unwrap();
            for k in 1..=index.calls() + 1 {
                d.step(&mut store, k).unwrap();
                let snap = d.snapshot.as_ref().unwrap();
                let by_key = cached(snap, &store, "t", &d.profile);
                let all = store.reader().entries("t", &d.profile).unwrap();
                for (key, v) in &all {
                    prop_assert_eq!(by_key.entry(key), Entry::from_value(v), "call {} key {}", k, key);
                }
                prop_assert_eq!(by_key.entry("tool:none"), None);
                by_key.check().unwrap();
                let Some(raw) = d.raw_history.as_ref() else { continue };
                let parts = reconstruct(&rows[..raw.fed], &est);
                let mut h = coverage_start();
                let full: Vec<_> = parts.iter().map(|p| { h = coverage_next(&h, &p.address); h }).collect();
                let offset = raw.builder.offset();
                prop_assert_eq!(raw.chain.len(), raw.builder.parts.len());
                prop_assert_eq!(raw.at.len(), raw.chain.len());
                prop_assert!(raw.chain.iter().eq(full[offset..].iter()), "call {}", k);
                prop_assert!(offset == 0 || snap.covers.contains(&full[offset]), "call {}", k);
            }
        }

        /// The index built from the rows' heads one at a time (a run of
        /// rows of one generation keeping its last usage) equals the index
        /// built from all the heads at once, whatever the order of
        /// generations, usage rows and reused generation ids.
        #[test]
        fn heads_indexed_one_at_a_time_equal_all_at_once(
            rows in prop::collection::vec((0u8..6, 0u32..4, prop::option::of(0u8..4), prop::option::of(1u64..50)), 0..60),
        ) {
            let mut step = 0;
            let heads: Vec<RowHead> = rows
                .into_iter()
                .enumerate()
                .map(|(i, (kind, advance, gen_id, usage))| {
                    let kind = [Kind::Generation, Kind::Usage, Kind::ToolResult, Kind::CompactBoundary, Kind::Ask, Kind::CompactSummary][kind as usize];
                    // A generation's rows share its step; others follow it.
                    if kind == Kind::Generation {
                        step += advance.min(1);
                    }
                    RowHead {
                        kind,
                        // Runs of turns, not always ascending.
                        turn: (i as u32 / 5) % 3,
                        step,
                        gen_id: gen_id.map(|g| format!("g{g}")),
                        // Some counts past 32 bits, or at their largest.
                        usage: usage.map(|n| Usage {
                            input_tokens: n,
                            output_tokens: i as u64,
                            cache_read_input_tokens: [0, u64::from(u32::MAX), 1 << 40][n as usize % 3],
                            cache_creation_input_tokens: [n, u64::from(u32::MAX) - 1][i % 2],
                        }),
                    }
                })
                .collect();
            // All at once, as the index was built before it streamed.
            let mut first_row = Vec::new();
            let mut step_of_gen: HashMap<&str, u32> = HashMap::new();
            for (i, m) in heads.iter().enumerate() {
                if m.kind == Kind::Generation && m.step as usize > first_row.len() {
                    first_row.push(i);
                    if let Some(g) = &m.gen_id {
                        step_of_gen.insert(g, m.step);
                    }
                }
            }
            let mut usage = vec![None; first_row.len()];
            for m in &heads {
                if let (Some(u), Some(g)) = (&m.usage, &m.gen_id)
                    && let Some(&s) = step_of_gen.get(g.as_str())
                {
                    usage[s as usize - 1] = Some(*u);
                }
            }
            // A compaction row counts once a conversation row came before it.
            let compacted: Vec<bool> = first_row
                .iter()
                .map(|&r| {
                    (0..r).any(|j| {
                        is_agent_compaction(heads[j].kind)
                            && heads[..j].iter().any(|h| h.kind.reaches_view())
                    })
                })
                .collect();
            let kinds: Vec<(Kind, u32)> = heads.iter().map(|h| (h.kind, h.turn)).collect();
            let turns: Vec<u32> = (1..=first_row.len() + 1)
                .map(|k| first_row.get(k - 1).copied().unwrap_or(heads.len()))
                .map(|end| end.checked_sub(1).map_or(0, |i| heads[i].turn))
                .collect();
            let mut b = HeadsBuilder::default();
            for h in heads.iter().cloned() {
                b.push(h);
            }
            let index = b.finish("t", RowSource::Memory(Vec::new()));
            prop_assert_eq!(&index.first_row, &first_row);
            let indexed: Vec<_> = (1..=index.calls()).map(|k| index.usage(k)).collect();
            prop_assert_eq!(&indexed, &usage);
            prop_assert_eq!(&index.agent_compacted_before, &compacted);
            let indexed: Vec<_> = (0..index.len()).map(|i| (index.kind(i), index.turn_at(i))).collect();
            prop_assert_eq!(&indexed, &kinds);
            let indexed: Vec<_> = (1..=index.calls() + 1).map(|k| index.turn_of(k)).collect();
            prop_assert_eq!(&indexed, &turns);
            let raw: Vec<u32> = (1..=first_row.len() as u32)
                .filter(|&k| !compacted[k as usize - 1] && usage[k as usize - 1].is_some())
                .collect();
            prop_assert_eq!(&index.raw_calls, &raw);
        }

        /// An index that reads its rows from the store by block (a file
        /// store) and one that holds them (the same rows in memory) agree on
        /// every call's boundaries, turn, usage and measures, on the
        /// overhead and the system rows, and on any range of rows read.
        #[test]
        fn a_store_read_index_agrees_with_rows_in_memory(
            events in transcript(),
            from in 0usize..40,
            len in 0usize..40,
        ) {
            let est = CharsPerToken::default();
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
            let read = stored(&events, &mut store);
            let rows = store.reader().task_rows("t").unwrap();
            let from_store = matches!(read.rows, RowSource::Store { .. });
            prop_assert!(from_store, "a file store's index reads its rows");
            let held = TaskRecordIndex::new("t", rows.clone());
            prop_assert_eq!(read.len(), rows.len());
            prop_assert_eq!(read.calls(), held.calls());
            for k in 1..=held.calls() + 1 {
                prop_assert_eq!(read.history_end(k), held.history_end(k));
                prop_assert_eq!(read.turn_of(k), held.turn_of(k));
                prop_assert_eq!(read.usage(k), held.usage(k));
                prop_assert_eq!(read.ends_turn(k), held.ends_turn(k));
            }
            prop_assert_eq!(read.raw_measures(&est).unwrap(), held.raw_measures(&est).unwrap());
            prop_assert_eq!(read.overhead(&est).unwrap(), held.overhead(&est).unwrap());
            prop_assert_eq!(read.system_rows().unwrap(), held.system_rows().unwrap());
            prop_assert_eq!(read.all_rows().unwrap(), rows.clone());
            let from = from.min(rows.len());
            let to = (from + len).min(rows.len());
            prop_assert_eq!(read.read_rows(from, to).unwrap(), rows[from..to].to_vec());
            // Backwards after forwards: a block read before is not trusted
            // for rows outside it.
            prop_assert_eq!(read.read_rows(0, from).unwrap(), rows[..from].to_vec());
        }

        /// The raw measures from running totals equal a walk over the parts,
        /// and the ratio from the indexed raw calls equals a scan of them.
        #[test]
        fn raw_measures_and_ratios_equal_a_whole_walk(events in transcript()) {
            let est = CharsPerToken::default();
            let mut mem = Store::open_memory().unwrap();
            let index = stored(&events, &mut mem);
            let measures = index.raw_measures(&est).unwrap();
            let rows = index.all_rows().unwrap();
            for k in 1..=index.calls() + 1 {
                let parts = reconstruct(&rows[..index.history_end(k)], &est);
                prop_assert_eq!(measures[k as usize - 1], RawMeasure::of(&parts, k - 1, &est), "call {}", k);
                let raw = |j: u32| index.raw_recorded(j).map(|p| (p, measures[j as usize - 1].estimate));
                let scanned = (|| {
                    let first = (1..k).find_map(raw)?;
                    let last = (1..k).rev().find_map(raw)?;
                    Some((first, last))
                })();
                let indexed = index.raw_calls.iter().filter(|&&j| j < k).map(|&j| raw(j).unwrap()).collect::<Vec<_>>();
                prop_assert_eq!(scanned, indexed.first().copied().zip(indexed.last().copied()));
            }
        }

        /// Calibration in real-token space: a compacted view is never
        /// predicted above its raw history's prediction, nor below the
        /// overhead plus the unscaled estimate of the view; a raw view is
        /// predicted as its raw history.
        #[test]
        fn compacted_predictions_stay_between_the_floor_and_the_raw_prediction(events in transcript(), b in budget()) {
            let est = CharsPerToken::default();
            let mut mem = Store::open_memory().unwrap();
            let index = stored(&events, &mut mem);
            let mut d = Driver::new(&mem, &index, RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint }).unwrap();
            for k in 1..=index.calls() + 1 {
                let out = d.step(&mut mem, k).unwrap();
                let r = &out.report;
                let floor = r.overhead.unwrap_or(0) + r.estimated_messages;
                prop_assert!(r.tokens_after >= floor, "call {}: {} below the floor {}", k, r.tokens_after, floor);
                prop_assert!(r.tokens_after <= r.raw_predicted, "call {}: {} above the raw prediction {}", k, r.tokens_after, r.raw_predicted);
                prop_assert!(r.tokens_before <= r.raw_predicted, "call {}", k);
                if r.tiers_fired.is_empty() {
                    prop_assert_eq!(r.tokens_after, r.tokens_before, "call {}", k);
                }
                if !r.ratio_measured {
                    prop_assert_eq!(r.ratio, crate::engine::UNIT_RATIO);
                }
            }
        }

        /// Keeping the previous call's parts in memory, re-deriving the
        /// checkpoint before every call, and reopening a file store between
        /// calls all give byte-identical views.
        #[test]
        fn continuous_rederived_and_reopened_runs_agree(events in transcript(), b in budget()) {
            let est = CharsPerToken::default();
            let settings = || RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint };
            let mut mem = Store::open_memory().unwrap();
            let index = stored(&events, &mut mem);
            let mut continuous = Driver::new(&mem, &index, settings()).unwrap();
            let mut views = Vec::new();
            for k in 1..=index.calls() + 1 {
                views.push(String::from_utf8(continuous.step(&mut mem, k).unwrap().view.canonical_bytes()).unwrap());
            }

            let mut mem2 = Store::open_memory().unwrap();
            let index2 = stored(&events, &mut mem2);
            let mut forgetful = Driver::new(&mem2, &index2, settings()).unwrap();
            for k in 1..=index2.calls() + 1 {
                forgetful.forget();
                let v = String::from_utf8(forgetful.step(&mut mem2, k).unwrap().view.canonical_bytes()).unwrap();
                prop_assert_eq!(&v, &views[k as usize - 1], "call {} differs when re-derived", k);
            }

            let dir = tempfile::tempdir().unwrap();
            let loc = DbLocation::File(dir.path().join("s.db"));
            let mut file = Store::open(&loc).unwrap();
            let index3 = stored(&events, &mut file);
            drop(file);
            for k in 1..=index3.calls() + 1 {
                let mut store = Store::open(&loc).unwrap();
                let mut d = Driver::new(&store, &index3, settings()).unwrap();
                let v = String::from_utf8(d.step(&mut store, k).unwrap().view.canonical_bytes()).unwrap();
                prop_assert_eq!(&v, &views[k as usize - 1], "call {} differs after reopening", k);
            }
        }
    }
}
