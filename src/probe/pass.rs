//! Probes scored in one pass beside a replay: the record's rows are read as
//! the replay reaches them (its probes extracted then), each call's view is
//! scored as it comes, and the worst call is kept as the pass goes. What it
//! holds is the probes, the scorer's pieces of the latest view and the
//! worst call's evaluation, whatever the number of calls.
//!
//! A view is judged on the probes of the rows before it, as
//! [`super::evaluate`] judges it on those of the whole record, with one
//! look ahead: of the `state` probes only the latest one the record keeps
//! is judged, and a closing sentence is kept only when no later one comes
//! before the next ask. So while a closing sentence before the view is
//! pending, rows past the view are read until an ask keeps it or another
//! closing sentence replaces it (their own probes wait for later views).

use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use super::precision::{Ledger, LedgerReader, Precision, RecordFact};
use super::{Evaluation, Extractor, Probe, Scorer, Survival, Tally};
use crate::model::Message;
use crate::view::View;

/// Reads a record's rows in order as the views need them, making their
/// probes.
struct RowReader {
    extractor: Extractor,
    /// The record's facts summary lines are checked against.
    ledger: LedgerReader,
    /// The record's rows, and how many were read.
    rows: usize,
    fed: usize,
}

impl RowReader {
    fn new(rows: usize) -> RowReader {
        RowReader {
            extractor: Extractor::default(),
            ledger: LedgerReader::default(),
            rows,
            fed: 0,
        }
    }

    /// The rows to read before a view of the first `history_rows` rows can
    /// be judged, if any.
    fn wants(&self, history_rows: usize) -> Option<Range<usize>> {
        let history_rows = history_rows.min(self.rows);
        if self.fed < history_rows {
            return Some(self.fed..history_rows);
        }
        let pending = self
            .extractor
            .pending_state_row()
            .is_some_and(|row| row < history_rows);
        (pending && self.fed < self.rows).then(|| self.fed..self.fed + 1)
    }

    /// Take the record's next row.
    fn feed(&mut self, m: &Message) {
        self.extractor.row(self.fed, m);
        self.ledger.row(self.fed, m);
        self.fed += 1;
        if self.fed == self.rows {
            self.extractor.end();
        }
    }

    /// The probes made since the last call.
    fn take_probes(&mut self) -> Vec<Probe> {
        self.extractor.take_probes()
    }

    /// The record's facts read since the last call.
    fn take_facts(&mut self) -> Vec<RecordFact> {
        self.ledger.take()
    }

    /// Read what a view of the first `history_rows` rows needs: `read(range,
    /// f)` hands `f` the rows of `range` in order.
    fn read_to<E>(
        &mut self,
        history_rows: usize,
        mut read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(range) = self.wants(history_rows) {
            let to = range.end;
            read(range, &mut |m| self.feed(m))?;
            if self.fed < to {
                // A reader that handed over fewer rows: judge with what came.
                debug_assert!(false, "rows up to {to} asked for, {} read", self.fed);
                break;
            }
        }
        Ok(())
    }
}

/// Scores views on the probes it is given, keeping the worst call.
pub(crate) struct Judge {
    scorer: Scorer,
    /// The latest view's tally.
    tally: Tally,
    /// The worst call so far and its evaluation: fewest critical probes
    /// kept, then fewest kept, the earliest on a tie.
    worst: Option<(u32, Evaluation)>,
    /// The evaluation kept at a call that asked for it.
    kept: Option<Evaluation>,
    /// The latest call judged.
    last_call: Option<u32>,
    /// The record's facts, for the summary lines that contradict them.
    ledger: Ledger,
    /// The latest view's precision.
    precision: Precision,
    /// The precision kept at a call that asked for it.
    kept_precision: Option<Precision>,
    /// Calls whose view carried a misleading line.
    misleading_calls: u32,
    /// The call whose view carried the most misleading lines (the earliest
    /// on a tie), and its precision.
    most_misleading: Option<(u32, Precision)>,
}

impl Judge {
    fn new() -> Judge {
        Judge {
            scorer: Scorer::new(Vec::new()),
            tally: Tally::default(),
            worst: None,
            kept: None,
            last_call: None,
            ledger: Ledger::default(),
            precision: Precision::default(),
            kept_precision: None,
            misleading_calls: 0,
            most_misleading: None,
        }
    }

    fn add_facts(&mut self, facts: Vec<RecordFact>) {
        if !facts.is_empty() {
            self.ledger.add(facts);
        }
    }

    fn add_probes(&mut self, probes: Vec<Probe>) {
        if !probes.is_empty() {
            self.scorer.add_probes(probes);
        }
    }

    /// Score call `call`'s view, whose history is the first `history_rows`
    /// rows, on the probes given so far. `shared` is how many leading
    /// blocks it shares with call `call - 1`'s view, if known.
    fn judge(
        &mut self,
        call: u32,
        view: &View,
        shared: Option<usize>,
        history_rows: usize,
    ) -> Survival {
        // Of use only when that view is the one judged last.
        let follows = self.last_call.is_some_and(|last| last + 1 == call);
        let shared = shared.filter(|_| follows).unwrap_or(0);
        self.last_call = Some(call);
        (self.scorer).tally_after(view, shared, history_rows, &mut self.tally);
        self.precision =
            self.ledger
                .check(view, history_rows, self.scorer.probes(), self.tally.lost());
        let n = self.precision.misleading.len();
        if n > 0 {
            self.misleading_calls += 1;
            if self
                .most_misleading
                .as_ref()
                .is_none_or(|(_, p)| n > p.misleading.len())
            {
                self.most_misleading = Some((call, self.precision.clone()));
            }
        }
        let s = self.tally.survival();
        // Strictly worse: the earliest call wins a tie.
        if self
            .worst
            .as_ref()
            .is_none_or(|(_, w)| s.key() < w.survival())
        {
            self.worst = Some((call, self.evaluation()));
        }
        s
    }

    /// The latest scored view's evaluation, its lost probes named.
    fn evaluation(&self) -> Evaluation {
        self.tally.evaluation(self.scorer.probes())
    }

    /// The worst call scored and its evaluation.
    pub(crate) fn worst(&self) -> Option<(u32, &Evaluation)> {
        self.worst.as_ref().map(|(k, e)| (*k, e))
    }

    /// The evaluation of the call scored with `keep` set, if one was.
    pub(crate) fn kept(&self) -> Option<&Evaluation> {
        self.kept.as_ref()
    }

    /// The precision of the call scored with `keep` set, if one was.
    pub(crate) fn kept_precision(&self) -> Option<&Precision> {
        self.kept_precision.as_ref()
    }

    /// The latest scored view's precision.
    pub(crate) fn latest_precision(&self) -> &Precision {
        &self.precision
    }

    /// How many views carried a misleading line.
    pub(crate) fn misleading_calls(&self) -> u32 {
        self.misleading_calls
    }

    /// The call whose view carried the most misleading lines, if any did.
    pub(crate) fn most_misleading(&self) -> Option<(u32, &Precision)> {
        self.most_misleading.as_ref().map(|(k, p)| (*k, p))
    }

    /// The probes given, in record order.
    pub(crate) fn probes(&self) -> &[Probe] {
        self.scorer.probes()
    }

    /// The worst call scored, by its evaluation.
    pub(crate) fn into_worst(self) -> Option<(u32, Evaluation)> {
        self.worst
    }
}

/// See the module documentation.
pub(crate) struct ProbePass {
    reader: RowReader,
    judge: Judge,
}

impl ProbePass {
    /// A pass over a record of `rows` rows.
    pub(crate) fn new(rows: usize) -> ProbePass {
        ProbePass {
            reader: RowReader::new(rows),
            judge: Judge::new(),
        }
    }

    /// Read what a view of the first `history_rows` rows needs (see
    /// [`ProbePass::score`]).
    fn read_to<E>(
        &mut self,
        history_rows: usize,
        read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<(), E> {
        self.reader.read_to(history_rows, read)?;
        self.judge.add_probes(self.reader.take_probes());
        self.judge.add_facts(self.reader.take_facts());
        Ok(())
    }

    /// Read the rest of the record (every probe then known).
    pub(crate) fn read_all<E>(
        &mut self,
        read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<(), E> {
        self.read_to(self.reader.rows, read)
    }

    /// Score call `call`'s view, whose history is the record's first
    /// `history_rows` rows, reading the rows it needs first: `read(range,
    /// f)` hands `f` the rows of `range` in order. `shared` is how many
    /// leading blocks the view shares with call `call - 1`'s, if known
    /// ([`crate::engine::CallOutput::shared_blocks`]).
    pub(crate) fn score<E>(
        &mut self,
        call: u32,
        (view, shared): (&View, Option<usize>),
        history_rows: usize,
        read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<Survival, E> {
        self.read_to(history_rows, read)?;
        Ok(self.judge.judge(call, view, shared, history_rows))
    }

    /// The latest scored view's evaluation, its lost probes named.
    #[cfg(test)]
    pub(crate) fn evaluation(&self) -> Evaluation {
        self.judge.evaluation()
    }

    /// The worst call scored and its evaluation.
    pub(crate) fn worst(&self) -> Option<(u32, &Evaluation)> {
        self.judge.worst()
    }

    /// The probes read so far (all of the record's after
    /// [`ProbePass::read_all`]), in record order.
    pub(crate) fn probes(&self) -> &[Probe] {
        self.judge.probes()
    }
}

/// Views the worker is behind by, at most: what it holds beyond the
/// replay's own view (each shared with the replay, not copied).
const WORKER_QUEUE: usize = 2;

/// One view for the worker, with the probes and facts read since the last.
struct Job {
    probes: Vec<Probe>,
    facts: Vec<RecordFact>,
    view: Option<JobView>,
    keep: bool,
}

/// A view to judge: its call, its shared blocks, its history's rows.
struct JobView {
    call: u32,
    view: Arc<View>,
    shared: Option<usize>,
    history_rows: usize,
}

/// A [`ProbePass`] whose judge runs on a thread of its own: `score` hands
/// the view over and returns, the survivals come back in call order
/// through [`ProbeWorker::drain`] and [`ProbeWorker::finish`].
pub(crate) struct ProbeWorker {
    reader: RowReader,
    jobs: Option<SyncSender<Job>>,
    survivals: Receiver<(u32, Survival)>,
    thread: Option<JoinHandle<Judge>>,
}

impl ProbeWorker {
    /// A pass over a record of `rows` rows, its judge started.
    pub(crate) fn spawn(rows: usize) -> ProbeWorker {
        let (jobs, inbox) = sync_channel::<Job>(WORKER_QUEUE);
        let (outbox, survivals) = channel();
        let thread = std::thread::Builder::new()
            .name("probe-judge".to_string())
            .spawn(move || {
                let mut judge = Judge::new();
                for job in inbox {
                    judge.add_probes(job.probes);
                    judge.add_facts(job.facts);
                    if let Some(v) = job.view {
                        let call = v.call;
                        let s = judge.judge(call, &v.view, v.shared, v.history_rows);
                        if job.keep {
                            judge.kept = Some(judge.evaluation());
                            judge.kept_precision = Some(judge.precision.clone());
                        }
                        // The receiver gone means the pass was dropped.
                        let _ = outbox.send((call, s));
                    }
                }
                judge
            })
            .expect("a thread for the probe judge");
        ProbeWorker {
            reader: RowReader::new(rows),
            jobs: Some(jobs),
            survivals,
            thread: Some(thread),
        }
    }

    /// Take the record's next row.
    pub(crate) fn feed(&mut self, m: &Message) {
        self.reader.feed(m);
    }

    /// Hand the judge a job, with the probes made since the last.
    fn send(&mut self, view: Option<JobView>, keep: bool) {
        let probes = self.reader.take_probes();
        let facts = self.reader.take_facts();
        let job = Job {
            probes,
            facts,
            view,
            keep,
        };
        let sent = self.jobs.as_ref().map(|jobs| jobs.send(job));
        if !matches!(sent, Some(Ok(()))) {
            // The judge stopped, so it panicked: `finish` says so.
            self.jobs = None;
        }
    }

    /// Hand over call `call`'s view, whose history is the record's first
    /// `history_rows` rows, after reading the rows it needs (as
    /// [`ProbePass::score`]); `keep` keeps its evaluation for
    /// [`Judge::kept`]. Waits while the judge is [`WORKER_QUEUE`] views
    /// behind.
    pub(crate) fn score<E>(
        &mut self,
        call: u32,
        (view, shared): (&Arc<View>, Option<usize>),
        history_rows: usize,
        keep: bool,
        read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<(), E> {
        self.reader.read_to(history_rows, read)?;
        let view = Arc::clone(view);
        let job = JobView {
            call,
            view,
            shared,
            history_rows,
        };
        self.send(Some(job), keep);
        Ok(())
    }

    /// The survivals of the views judged so far and not yet taken, in call
    /// order, without waiting.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(u32, Survival)) {
        while let Ok((call, s)) = self.survivals.try_recv() {
            f(call, s);
        }
    }

    /// Read the rest of the record, wait for the judge to score every view
    /// handed over (their survivals not yet taken go to `f`, in call
    /// order) and return it.
    pub(crate) fn finish<E>(
        mut self,
        read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
        mut f: impl FnMut(u32, Survival),
    ) -> Result<Judge, E> {
        self.reader.read_to(self.reader.rows, read)?;
        self.send(None, false);
        self.jobs = None;
        for (call, s) in self.survivals.iter() {
            f(call, s);
        }
        let thread = self.thread.take().expect("joined once");
        Ok(match thread.join() {
            Ok(judge) => judge,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    }
}

impl Drop for ProbeWorker {
    fn drop(&mut self) {
        // Dropped before `finish` (an error stopped the replay): let the
        // judge run out and end.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
