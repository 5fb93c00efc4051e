//! A task's record indexed by model call: per-row metadata only, the rows'
//! content read from the store by range as a run needs it, and the raw
//! history's measures from running totals over the rows read. The driver
//! runs over it; the commands and the report read a task through it.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::engine::RawMeasure;
use crate::engine::estimate::Estimator;
use crate::engine::measure::MeasureBuilder;
use crate::model::decimal::Ratio;
use crate::model::digest::{Digest, DigestMap};
use crate::model::time::instant_millis;
use crate::model::{Kind, Message, Usage};
use crate::store::{RowHead, Store, StoreError};

/// A task's record, indexed by model call: per-row metadata only (kind,
/// turn, step, recorded usage), with the rows' content read from the store
/// by range when a caller needs it, so an index costs a few bytes per row
/// whatever the rows hold.
pub struct TaskRecordIndex {
    pub task: String,
    pub(super) rows: RowSource,
    /// Per row: its kind.
    pub(super) kinds: Vec<Kind>,
    /// Per row its turn, as runs: `(first row, turn)`, by row.
    turns: Vec<(usize, u32)>,
    /// `first_row[s - 1]`: index of the first row of generation `s`.
    pub(super) first_row: Vec<usize>,
    /// Recorded usage per generation (the last one written), by step.
    usage: UsageTable,
    /// Whether the agent compacted its own context before generation `s`.
    pub(super) agent_compacted_before: Vec<bool>,
    /// The first row of the conversation (the record's length when it has
    /// none): a compaction row before it (the boundary a session that began
    /// at a compaction opens with) compacted nothing the record holds.
    first_conversation: usize,
    /// The calls whose recorded usage measures the raw history, ascending.
    pub(super) raw_calls: Vec<u32>,
    /// When each call was sent, by the record's timestamps (see
    /// [`HeadsBuilder::push`]), and when the next, unrecorded one would be.
    times: CallTimes,
    /// Rows of the stored record left out of its history (by `seq`,
    /// ascending): answers a live client's retry superseded
    /// (`proxy_superseded`). The index's row `i` is the `i`-th row not
    /// left out.
    pub(super) holes: Vec<u64>,
    /// A live task's (one `compactor proxy` recorded): what each call's
    /// recorded usage measured, the estimate of the view forwarded at that
    /// call, by call. `None`: an imported task, whose usage measured the
    /// raw history.
    pub(super) measured: Option<Measured>,
}

/// A live task's measured views by call (a call's last attempt's), and the
/// last attempt read (a grown index reads only the attempts after it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Measured {
    pub(super) views: BTreeMap<u32, u64>,
    pub(super) through: u64,
}

/// When each call was sent: the latest timestamp of the rows before its
/// generation (the ask or tool results its request carried), in
/// milliseconds since the epoch ([`NO_TIME`] when no row before it has one).
#[derive(Default)]
struct CallTimes {
    /// By call, from the first.
    sent: Vec<i64>,
    /// The latest timestamp of every row so far.
    latest: Option<i64>,
}

/// No timestamp known.
const NO_TIME: i64 = i64::MIN;

/// An index's per-row metadata, built from the rows' heads as they are
/// read, in order (never all the heads at once: at 100K calls they were
/// 40 MB).
#[derive(Default)]
pub(super) struct HeadsBuilder {
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
    times: CallTimes,
}

impl HeadsBuilder {
    pub(super) fn push(&mut self, m: RowHead) {
        let i = self.kinds.len();
        if m.kind == Kind::Generation && m.step as usize > self.first_row.len() {
            self.first_row.push(i);
            // Sent once the rows before it were written: its own are the answer.
            self.times.sent.push(self.times.latest.unwrap_or(NO_TIME));
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
        if let Some(t) = m.timestamp.as_deref().and_then(instant_millis) {
            self.times.latest = Some(self.times.latest.map_or(t, |l| l.max(t)));
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

    pub(super) fn finish(self, task: &str, source: RowSource) -> TaskRecordIndex {
        let HeadsBuilder {
            mut kinds,
            mut turns,
            mut first_row,
            step_of_gen,
            mut usage,
            pending,
            mut times,
        } = self;
        times.sent.shrink_to_fit();
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
            times,
            holes: Vec::new(),
            measured: None,
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
pub(super) enum RowSource {
    /// A connection to the store file other than the one a run writes
    /// through (a run may write meanwhile; the record is append-only), and
    /// the last block of rows read from it: its first row's index and the
    /// rows (`None`: a row handed over, read again if it is wanted again).
    Store {
        store: Reader,
        block: RefCell<(usize, Vec<Option<Message>>)>,
    },
    /// The rows themselves: an index of rows in memory, or of an in-memory
    /// store (which has no second connection).
    Memory(Vec<Message>),
}

/// An index's connection for reading rows: its own, or one it shares with
/// the other indexes of a thread (a live proxy holds a fixed number of
/// connections however many conversations it keeps).
pub enum Reader {
    Own(Box<Store>),
    Shared(Arc<Mutex<Store>>),
}

/// A [`Reader`]'s connection while it is used (a shared one locked).
pub(super) enum ReaderRef<'a> {
    Own(&'a Store),
    Shared(MutexGuard<'a, Store>),
}

impl std::ops::Deref for ReaderRef<'_> {
    type Target = Store;

    fn deref(&self) -> &Store {
        match self {
            ReaderRef::Own(s) => s,
            ReaderRef::Shared(g) => g,
        }
    }
}

impl Reader {
    fn get(&self) -> ReaderRef<'_> {
        match self {
            Reader::Own(s) => ReaderRef::Own(s),
            // A reader is never used by two threads at once, nor while a
            // panic held it: a poisoned lock's store is still whole.
            Reader::Shared(m) => ReaderRef::Shared(m.lock().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

/// How many rows an index reads from the store at a time (one query each:
/// a query per call costs more than the rows it reads).
const READ_BLOCK: usize = if cfg!(test) { 4 } else { 256 };

impl TaskRecordIndex {
    pub fn load(store: &Store, task: &str) -> Result<TaskRecordIndex, StoreError> {
        match store.reopen()? {
            Some(own) => TaskRecordIndex::load_through(Reader::Own(Box::new(own)), task),
            None => {
                let reader = store.reader();
                let holes = superseded(store, task)?;
                let mut rows = Vec::new();
                let mut seq = 0u64;
                let mut skip = holes.iter().peekable();
                reader.each_stored(task, 0, u64::MAX, |s| {
                    if skip.next_if_eq(&&seq).is_none() {
                        rows.push(s.message);
                    }
                    seq += 1;
                    Ok::<(), StoreError>(())
                })?;
                let mut index = TaskRecordIndex::new(task, rows);
                index.holes = holes;
                index.measured = measured(store, task, None)?;
                Ok(index)
            }
        }
    }

    /// An index of `task` that reads its rows through `reader` (a
    /// connection to the store file the task is in).
    pub fn load_through(reader: Reader, task: &str) -> Result<TaskRecordIndex, StoreError> {
        let (heads, holes, measured) = {
            let conn = reader.get();
            read_heads(&conn, task, None)?
        };
        let mut index = heads.finish(
            task,
            RowSource::Store {
                store: reader,
                block: RefCell::new((0, Vec::new())),
            },
        );
        index.holes = holes;
        index.measured = measured;
        Ok(index)
    }

    /// The rows the record stores for this task (those left out of its
    /// history included).
    pub fn stored_len(&self) -> u64 {
        (self.len() + self.holes.len()) as u64
    }

    /// How many stored rows are left out of the history.
    pub fn superseded_rows(&self) -> usize {
        self.holes.len()
    }

    /// Whether the task's usage measured the views a live proxy forwarded.
    pub fn is_live(&self) -> bool {
        self.measured.is_some()
    }

    /// The estimate of the view forwarded at live call `k`, if the proxy
    /// forwarded it.
    pub fn measured_view(&self, k: u32) -> Option<u64> {
        self.measured.as_ref()?.views.get(&k).copied()
    }

    /// The last forwarded request whose measured view the index holds.
    pub fn measured_through(&self) -> u64 {
        self.measured.as_ref().map_or(0, |m| m.through)
    }

    /// Forget the block of rows last read (a run between calls keeps no
    /// rows it will read again from the store).
    pub fn release_block(&self) {
        if let RowSource::Store { block, .. } = &self.rows {
            *block.borrow_mut() = (0, Vec::new());
        }
    }

    /// The stored `seq` of the history's row `i`.
    fn seq_of(&self, i: usize) -> u64 {
        let mut seq = i as u64;
        for &h in &self.holes {
            if h <= seq {
                seq += 1;
            } else {
                break;
            }
        }
        seq
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
                timestamp: m.timestamp.clone(),
            });
        }
        heads.finish(task, RowSource::Memory(rows))
    }

    /// The index's own connection to the store file, if it reads its rows
    /// from one.
    pub(super) fn own_store(&self) -> Option<ReaderRef<'_>> {
        match &self.rows {
            RowSource::Store { store, .. } => Some(store.get()),
            RowSource::Memory(_) => None,
        }
    }

    /// What the overhead is measured from: the system rows and the first
    /// call with recorded usage (while both stay, so does the overhead).
    pub(super) fn overhead_inputs(&self) -> (usize, Option<u32>) {
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
    pub(super) fn turn_at(&self, i: usize) -> u32 {
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
        self.rows_from(from, to, false, |i, m| f(i, &m))
    }

    /// [`TaskRecordIndex::each_row`], each row handed over: taken out of the
    /// block read rather than copied (read again should it be wanted again).
    pub fn each_row_owned(
        &self,
        from: usize,
        to: usize,
        mut f: impl FnMut(usize, Message),
    ) -> Result<(), StoreError> {
        self.rows_from(from, to, true, |i, m| f(i, m.into_owned()))
    }

    fn rows_from(
        &self,
        from: usize,
        to: usize,
        take: bool,
        mut f: impl FnMut(usize, Cow<'_, Message>),
    ) -> Result<(), StoreError> {
        match &self.rows {
            RowSource::Memory(rows) => {
                for (i, m) in rows[from..to].iter().enumerate() {
                    f(from + i, Cow::Borrowed(m));
                }
                Ok(())
            }
            RowSource::Store { store, block } => {
                let mut block = block.borrow_mut();
                let mut i = from;
                while i < to {
                    let (start, rows) = &mut *block;
                    let held =
                        (*start..*start + rows.len()).contains(&i) && rows[i - *start].is_some();
                    if !held {
                        // Read ahead a block: the rows a run reads next
                        // (the rest of the turn, the history at the turn
                        // start) mostly follow.
                        let end = self.len().min(i + READ_BLOCK);
                        rows.clear();
                        self.read_stored(store, i, end, |m| rows.push(Some(m)))?;
                        *start = i;
                    }
                    let stop = to.min(*start + rows.len());
                    while i < stop {
                        let slot = &mut rows[i - *start];
                        let m = match slot {
                            None => break,
                            Some(_) if take => Cow::Owned(slot.take().expect("held")),
                            Some(m) => Cow::Borrowed(&*m),
                        };
                        f(i, m);
                        i += 1;
                    }
                }
                Ok(())
            }
        }
    }

    /// Rows `from..to`, read into memory.
    /// Read from the store as they are (not through the block read ahead,
    /// which would read past `to`: the rows after the system prompt may be
    /// the largest of the record).
    pub fn read_rows(&self, from: usize, to: usize) -> Result<Vec<Message>, StoreError> {
        let store = match &self.rows {
            RowSource::Memory(rows) => return Ok(rows[from..to].to_vec()),
            RowSource::Store { store, .. } => store,
        };
        let mut out = Vec::with_capacity(to - from);
        if from >= to {
            return Ok(out);
        }
        self.read_stored(store, from, to, |m| out.push(m))?;
        Ok(out)
    }

    /// Rows `from..to` (`from < to`) read from the store in order, the
    /// holes left out, each handed to `push`; an error unless exactly those
    /// rows were read.
    fn read_stored(
        &self,
        store: &Reader,
        from: usize,
        to: usize,
        mut push: impl FnMut(Message),
    ) -> Result<(), StoreError> {
        let (first, last) = (self.seq_of(from), self.seq_of(to - 1) + 1);
        let mut skip = self.holes.iter().skip_while(|h| **h < first).peekable();
        let mut read = 0;
        store
            .get()
            .reader()
            .each_stored(&self.task, first, last, |s| {
                if skip.next_if_eq(&&s.seq).is_none() {
                    push(s.message);
                    read += 1;
                }
                Ok::<(), StoreError>(())
            })?;
        if read != to - from {
            return Err(StoreError::Corrupt(format!(
                "task {}: rows {from}..{to} were indexed, {read} read",
                self.task
            )));
        }
        Ok(())
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

    /// Whether call `k` was sent more than `ttl` milliseconds after the call
    /// before it, by the record's timestamps: a prompt cache written then
    /// has expired, so the call reads nothing from it. `false` when either
    /// time is unknown (call `calls()+1`, the next one, is sent after the
    /// latest row).
    pub fn cache_expired(&self, k: u32, ttl_ms: i64) -> bool {
        match (self.sent_at(k.saturating_sub(1)), self.sent_at(k)) {
            (Some(before), Some(now)) if k > 1 => now.saturating_sub(before) > ttl_ms,
            _ => false,
        }
    }

    /// When call `k` was sent, by the record's timestamps (call `calls()+1`
    /// after the latest row), if known.
    fn sent_at(&self, k: u32) -> Option<i64> {
        let t = match k.checked_sub(1).map(|i| self.times.sent.get(i as usize)) {
            Some(Some(&t)) => t,
            Some(None) if k == self.calls() + 1 => self.times.latest?,
            _ => return None,
        };
        (t != NO_TIME).then_some(t)
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
    pub(super) fn raw_recorded(&self, k: u32) -> Option<u64> {
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

/// The superseded rows of `task`, by `seq`.
fn superseded(store: &Store, task: &str) -> Result<Vec<u64>, StoreError> {
    Ok(store
        .reader()
        .proxy_superseded(task)?
        .into_iter()
        .map(|s| s.seq)
        .collect())
}

/// What a live task's recorded usage measured, by call (`None`: not live),
/// `known` extended with the requests forwarded since.
fn measured(
    store: &Store,
    task: &str,
    known: Option<Measured>,
) -> Result<Option<Measured>, StoreError> {
    let reader = store.reader();
    let mut m = match known {
        Some(m) => m,
        None if reader.is_proxy_task(task)? => Measured::default(),
        None => return Ok(None),
    };
    for (attempt, call, estimate) in reader.proxy_measured_views(task, m.through)? {
        m.views.insert(call, estimate);
        m.through = attempt;
    }
    Ok(Some(m))
}

/// The row heads of `task`'s history (its superseded rows left out), the
/// superseded rows, and what a live task's usage measured (`known`: what an
/// index of it read before).
#[allow(clippy::type_complexity)]
pub(super) fn read_heads(
    store: &Store,
    task: &str,
    known: Option<Measured>,
) -> Result<(HeadsBuilder, Vec<u64>, Option<Measured>), StoreError> {
    let holes = superseded(store, task)?;
    let mut heads = HeadsBuilder::default();
    let mut seq = 0u64;
    let mut skip = holes.iter().peekable();
    store.reader().each_row_head(task, |h| {
        if skip.next_if_eq(&&seq).is_none() {
            heads.push(h);
        }
        seq += 1;
    })?;
    Ok((heads, holes, measured(store, task, known)?))
}

/// The raw history measured call by call from running totals over the rows
/// seen so far. A driver offers it the rows it reads for the parts, so a
/// row is read once for both.
#[derive(Default)]
pub(super) struct Measures {
    pub(super) builder: MeasureBuilder,
    /// Rows seen.
    fed: usize,
    /// `out[k - 1]`: the raw history measured at call `k` (room made for
    /// every call at once).
    pub(super) out: Vec<RawMeasure>,
}

impl Measures {
    /// Row `i` of the record: taken if it is the next one not seen yet.
    pub(super) fn offer(
        &mut self,
        index: &TaskRecordIndex,
        i: usize,
        m: &Message,
        est: &dyn Estimator,
    ) {
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
    pub(super) fn ensure(
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
pub(super) fn is_agent_compaction(kind: Kind) -> bool {
    matches!(kind, Kind::CompactSummary | Kind::CompactBoundary)
}

/// The least growth of the raw estimate (tokens) a ratio is measured over.
pub const MIN_RATIO_SPAN: u64 = 2_000;
/// The ratio is kept within [0.5, 4]: outside it the record is not measuring
/// what the estimate measures.
const MIN_RATIO_PPM: u32 = 500_000;
const MAX_RATIO_PPM: u32 = 4_000_000;
