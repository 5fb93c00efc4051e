//! Running a sweep's jobs: each a replay (or a reference run) of one
//! session on its own scratch store, on up to `--jobs` threads, each thread
//! with its own connection to the store file. Results are handed on in job
//! order whatever order they finish in, so the output is the same for any
//! number of threads; a thread holds one run at a time, so memory is about
//! threads × one replay.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use anyhow::{Context, Result};
use indicatif::ProgressBar;

use super::super::summarizer::{Configured, LlmArgs};
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::model::Message;
use crate::probe::{Probe, ProbePass};
use crate::session::cost::{CacheTtl, Prices, Totals};
use crate::session::record::TaskRecordIndex;
use crate::session::run::{Placement, ReplayOptions, Run};
use crate::session::settings::RunSettings;
use crate::store::{DbLocation, Store, StoreError};
use crate::summarize::llm::config::SummarizerKind;
use crate::sweep::grid::Spec;
use crate::sweep::mask::{KEEP_OUTPUTS, mask_row};
use crate::sweep::recorded::recorded_row;
use crate::sweep::trim::trim_row;
use crate::sweep::{CallTally, PolicyFields, ReferenceRecord, Row, SessionInfo, call_infos};

/// One run of a sweep.
#[derive(Debug, Clone)]
pub(super) enum SweepJob {
    Policy {
        session: usize,
        spec: Spec,
        budget: Budget,
    },
    Trim {
        session: usize,
        budget: Budget,
        fields: PolicyFields,
    },
    Mask {
        session: usize,
        budget: Budget,
        fields: PolicyFields,
    },
    Recorded {
        session: usize,
    },
}

impl SweepJob {
    pub(super) fn session(&self) -> usize {
        match self {
            SweepJob::Policy { session, .. }
            | SweepJob::Trim { session, .. }
            | SweepJob::Mask { session, .. }
            | SweepJob::Recorded { session } => *session,
        }
    }
}

/// A session to sweep: who it is and its prices.
#[derive(Debug, Clone)]
pub(super) struct Planned {
    pub info: SessionInfo,
    pub prices: Prices,
}

/// Everything the jobs read: the sessions, the jobs, and how to make each
/// policy's summarizer.
pub(super) struct SweepPlan {
    pub sessions: Vec<Planned>,
    pub jobs: Vec<SweepJob>,
    /// Per summarizer of the grid: the kind asked for and its name.
    pub summarizers: Vec<(Option<SummarizerKind>, String)>,
    pub llm: LlmArgs,
    /// How long the prompt cache lives, for every run.
    pub cache_ttl: CacheTtl,
}

/// A job's row and the notes it leaves for stderr.
pub(super) type JobDone = (Row, Vec<String>);

/// Run every job of `plan` on `threads` threads, handing each result to
/// `deliver` in job order. An in-memory store has no second connection:
/// its jobs run one after another on this thread. On a failure no new job
/// starts; the error returned is that of the first failed job in order.
pub(super) fn run_jobs(
    store: &mut Store,
    plan: &SweepPlan,
    threads: usize,
    bar: Option<&ProgressBar>,
    mut deliver: impl FnMut(usize, JobDone) -> Result<()>,
) -> Result<()> {
    let location = match store.location() {
        DbLocation::File(p) if threads > 1 && plan.jobs.len() > 1 => DbLocation::File(p.clone()),
        _ => {
            for i in 0..plan.jobs.len() {
                let done = run_job(store, plan, i)?;
                if let Some(b) = bar {
                    b.inc(1);
                }
                deliver(i, done)?;
            }
            return Ok(());
        }
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<JobDone>)>();
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..threads.min(plan.jobs.len()) {
            let tx = tx.clone();
            let (next, stop, location) = (&next, &stop, &location);
            scope.spawn(move || {
                let mut own = match Store::open(location) {
                    Ok(s) => s,
                    Err(e) => {
                        stop.store(true, Ordering::SeqCst);
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let _ = tx.send((i, Err(anyhow::Error::from(e))));
                        return;
                    }
                };
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= plan.jobs.len() {
                        return;
                    }
                    let done = run_job(&mut own, plan, i);
                    if done.is_err() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    if tx.send((i, done)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Results wait here until every job before them is handed on.
        let mut waiting: BTreeMap<usize, Result<JobDone>> = BTreeMap::new();
        let mut due = 0;
        let mut failed: Option<anyhow::Error> = None;
        for (i, done) in rx {
            if let Some(b) = bar {
                b.inc(1);
            }
            waiting.insert(i, done);
            while failed.is_none()
                && let Some(done) = waiting.remove(&due)
            {
                due += 1;
                if let Err(e) = done.and_then(|d| deliver(due - 1, d)) {
                    stop.store(true, Ordering::SeqCst);
                    failed = Some(e);
                }
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

/// Run job `i` of `plan` over the store `source`.
fn run_job(source: &mut Store, plan: &SweepPlan, i: usize) -> Result<JobDone> {
    let job = &plan.jobs[i];
    let s = &plan.sessions[job.session()];
    let task = &s.info.task;
    let index = TaskRecordIndex::load(source, task)?;
    let est = CharsPerToken::default();
    match job {
        SweepJob::Policy { spec, budget, .. } => {
            let (kind, name) = &plan.summarizers[spec.summarizer];
            let summarizer = Configured::for_store(*kind, &plan.llm, source)?;
            let prices = (s.prices, plan.cache_ttl);
            let (totals, tally) = replay_and_probe(source, &index, *budget, &summarizer, prices)
                .with_context(|| format!("sweeping task {task} at {}", budget_words(budget)))?;
            let notes = summarizer.report().map(|r| r.human()).unwrap_or_default();
            let row = tally.policy_row(&s.info, spec.fields(budget, name), &totals);
            Ok((row, notes))
        }
        SweepJob::Trim { budget, fields, .. } => {
            let record = reference_record(&index, s, &est, plan.cache_ttl)?;
            let probes = probes_of(&index)?;
            let row = trim_row(
                &record,
                fields.clone(),
                budget.w_eff(),
                probes,
                &mut |r, f| read_rows(&index, r, f),
            )?;
            Ok((row, Vec::new()))
        }
        SweepJob::Mask { budget, fields, .. } => {
            let record = reference_record(&index, s, &est, plan.cache_ttl)?;
            let probes = probes_of(&index)?;
            let row = mask_row(
                &record,
                (fields.clone(), budget.w_eff(), KEEP_OUTPUTS),
                probes,
                &mut |r, f| read_rows(&index, r, f),
            )?;
            Ok((row, Vec::new()))
        }
        SweepJob::Recorded { .. } => {
            let record = reference_record(&index, s, &est, plan.cache_ttl)?;
            let compactions = source.reader().client_compactions(task)?;
            let probes = probes_of(&index)?;
            let row = recorded_row(&record, &compactions, probes, &mut |r, f| {
                read_rows(&index, r, f)
            })?;
            Ok((row, Vec::new()))
        }
    }
}

/// What a reference run reads of a session besides its rows (which it
/// reads as its calls reach them).
fn reference_record<'a>(
    index: &TaskRecordIndex,
    s: &'a Planned,
    est: &'a CharsPerToken,
    ttl: CacheTtl,
) -> Result<ReferenceRecord<'a>> {
    Ok(ReferenceRecord {
        session: &s.info,
        calls: call_infos(index, ttl),
        overhead: index.overhead(est)?.unwrap_or(0),
        prices: s.prices,
        estimator: est,
    })
}

/// The one place sweep runs a policy, as `replay --json` and `probe --json`
/// run it: a replay of the whole task on a scratch copy with no compaction
/// state, every call's view scored with the record's probes. Returns the
/// replay's totals and what the calls showed.
pub(super) fn replay_and_probe(
    source: &mut Store,
    index: &TaskRecordIndex,
    budget: Budget,
    summarizer: &Configured,
    (prices, cache_ttl): (Prices, CacheTtl),
) -> Result<(Totals, CallTally)> {
    let est = CharsPerToken::default();
    let settings = RunSettings::new(budget, &est, summarizer);
    let mut pass = ProbePass::new(index.len());
    let mut tally = CallTally::default();
    let mut run = Run::open(source, index, settings, Placement::Scratch)?;
    let opts = ReplayOptions {
        cache_ttl,
        ..ReplayOptions::from_start(index.calls(), prices)
    };
    let totals = run.replay(source, &opts, |row, out| -> Result<()> {
        let history_rows = index.history_end(row.call);
        let s = pass.score(
            row.call,
            (&out.view, out.shared_blocks),
            history_rows,
            |r, f| read_rows(index, r, f),
        )?;
        tally.add_survival(row.call, row.tokens_after, row.status, &row.tiers_fired, s);
        Ok(())
    })?;
    Ok((totals, tally))
}

/// Reads rows `range` of `index` for a probe pass or a reference run, as
/// they are reached.
fn read_rows(
    index: &TaskRecordIndex,
    range: Range<usize>,
    f: &mut dyn FnMut(&Message),
) -> Result<(), StoreError> {
    index.each_row(range.start, range.end, |_, m| f(m))
}

/// Every probe of the record, its rows read a block at a time.
fn probes_of(index: &TaskRecordIndex) -> Result<Vec<Probe>> {
    let mut pass = ProbePass::new(index.len());
    pass.read_all(|r, f| read_rows(index, r, f))?;
    Ok(pass.probes().to_vec())
}

fn budget_words(b: &Budget) -> String {
    format!(
        "window {} · reserve {} · trigger {} · stop {} · protect {}",
        b.window, b.output_reserved, b.trigger_ratio, b.stop_ratio, b.protect_recent_steps
    )
}
