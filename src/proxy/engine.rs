//! The proxy's conversations, run by a fixed pool of engine threads
//! (`ProxyLimits::engine_threads`), whatever the number of conversations.
//! A conversation always goes to the same thread (by its identity), which
//! takes its calls one at a time; each thread holds two store connections
//! (one it writes through, one its conversations' indexes read rows
//! through) and the in-memory state of its recent conversations: their
//! tasks (the first one and any started when the history diverged), their
//! live runs and what their last forwarded field was made of.
//!
//! That state is a cache of the record, never a second source of truth: a
//! conversation idle for `idle` or pushed out by the LRU cap
//! (`max_conversations`) is dropped, and rebuilt from the record when it
//! returns (determinism makes the rebuilt run derive the same views). A
//! conversation is never dropped while a call of it is in flight; one whose
//! request was over `large_body` is dropped once its call is over, so that
//! a huge body's memory is returned.
//!
//! A call: find the task whose record the request extends (or start one),
//! record what is new, run the engine's step, write the forwarded body and
//! record its view hash; then, once the upstream's answer is over, record
//! the assistant row (or how the call ended).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;

use super::convo::BadRequest;
use super::record::{Conversation, Divergence, head_rows, task_id, task_record};
use super::render::{Written, conversation_field};
use super::request::{Api, Request};
use super::run::LiveRun;
use super::{ProxyLimits, ProxySettings, SummarizerChoice};
use crate::engine::estimate::CharsPerToken;
use crate::engine::summarizer::Summarizer;
use crate::engine::{Status, Tier};
use crate::fault::{self, ProxyPoint};
use crate::model::digest::Digest;
use crate::model::{Block, Message};
use crate::store::{DbLocation, ProxyCall, ProxyConversation, ProxyResponse, Store, StoreError};
use crate::summarize::{Extractive, StaticCheckpoint};

/// A call the engine could not take.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The request is malformed: the client's 400.
    #[error(transparent)]
    Bad(#[from] BadRequest),
    /// The store failed: the client's 500, and nothing forwarded.
    #[error("the proxy's store failed: {0}")]
    Store(#[from] StoreError),
    #[error("the proxy's engine failed on this call")]
    Gone,
}

/// A call ready to forward.
pub(crate) struct Prepared {
    pub task: String,
    pub attempt: u64,
    /// Rows of the record when it was forwarded.
    pub rows: u64,
    /// The forwarded body, in pieces (runs of the client's body among them).
    pub body: Vec<Bytes>,
    pub report: ForwardedCall,
    /// The proxy's count of forwarded requests (for its fault points).
    pub n: u64,
}

/// One forwarded call as the proxy reports it (`compactor.proxy_call/1`).
#[derive(Debug, Clone, Serialize)]
pub struct ForwardedCall {
    pub task: String,
    pub api: &'static str,
    /// The model call projected (the record's calls + 1).
    pub call: u32,
    /// The task's forwarded requests so far, this one included (a retry of
    /// a call is another attempt at the same call).
    pub attempt: u64,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub trigger: u64,
    pub w_eff: u64,
    pub tiers_fired: Vec<Tier>,
    pub status: Status,
    pub view_hash: String,
    /// Items (messages or input items) the client sent, and forwarded.
    pub items_sent: usize,
    pub items_forwarded: usize,
    /// The task this one was started from, and why, on its first call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The attempt whose recorded answer this retry superseded, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<u64>,
    /// The upstream's status (`None`: it never answered).
    pub upstream_status: Option<u16>,
    /// `recorded`, `upstream_error`, `upstream_failed`, `client_gone`, `superseded`, `unparsed`.
    pub outcome: String,
}

/// How a forwarded call ended, for the conversation's thread to record.
pub(crate) struct Ended {
    /// The size of the answer's body (bytes passed on).
    pub bytes: usize,
    pub task: String,
    pub attempt: u64,
    pub rows: u64,
    pub status: Option<u16>,
    /// The assistant row, when the answer completed.
    pub answer: Option<Message>,
    /// Why there is no answer to record.
    pub outcome: &'static str,
    pub n: u64,
}

enum Job {
    Call {
        req: Box<Request>,
        reply: tokio::sync::oneshot::Sender<Result<Prepared, CallError>>,
    },
    End {
        identity: String,
        ended: Box<Ended>,
        reply: Option<tokio::sync::oneshot::Sender<String>>,
    },
}

/// Subagent prompts seen in tool calls: the session, the prompt's digest
/// and the task whose call it is (a conversation whose first ask is that
/// prompt is that task's subagent). The newest [`AGENT_PROMPTS`] only.
type Agents = Mutex<VecDeque<(String, Digest, String)>>;

/// How many subagent prompts are remembered.
const AGENT_PROMPTS: usize = 4096;

/// The conversations of one proxy, on a fixed pool of threads.
pub(crate) struct Engine {
    workers: Vec<mpsc::Sender<Job>>,
    forwarded: AtomicU64,
}

/// How long the checkpointer lets commits gather after one wakes it: at
/// most one checkpoint per this, whatever the calls.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// WAL pages after which an engine thread's own commit checkpoints anyway
/// (SQLite's default is 1,000): a backstop, should the checkpointer fall
/// behind or fail to open the store.
const CHECKPOINT_BACKSTOP_PAGES: u32 = 8_000;

/// Copies the WAL into the database off the calls' path. SQLite checkpoints
/// in whichever commit crosses its threshold, and that commit's call waited
/// for the checkpoint's fsyncs (20 to 40 ms here, the tail of the first
/// byte the proxy adds); the engine threads leave it to this thread
/// instead, which a commit wakes and which checkpoints (PASSIVE: it never
/// waits for a reader or a writer) at most once per [`CHECKPOINT_EVERY`].
/// It ends with the engine (its wake-up channel closed).
fn checkpointer(db: DbLocation, wake: mpsc::Receiver<()>) {
    let mut store: Option<Store> = None;
    while wake.recv().is_ok() {
        std::thread::sleep(CHECKPOINT_EVERY);
        while wake.try_recv().is_ok() {}
        if store.is_none() {
            store = Store::open(&db).ok();
        }
        if store.as_ref().is_some_and(|s| s.checkpoint().is_err()) {
            store = None;
        }
    }
}

impl Engine {
    pub(crate) fn new(settings: Arc<ProxySettings>, limits: ProxyLimits) -> Engine {
        let agents: Arc<Agents> = Arc::default();
        let (wake, woken) = mpsc::sync_channel(1);
        if matches!(settings.db, DbLocation::File(_)) {
            let db = settings.db.clone();
            std::thread::Builder::new()
                .name("compactor-checkpoint".into())
                .spawn(move || checkpointer(db, woken))
                .expect("a thread starts");
        }
        let workers = (0..limits.engine_threads.max(1))
            .map(|_| {
                let (send, recv) = mpsc::channel();
                let settings = Arc::clone(&settings);
                let agents = Arc::clone(&agents);
                let limits = limits.clone();
                let wake = wake.clone();
                std::thread::Builder::new()
                    .name("compactor-engine".into())
                    .spawn(move || worker(&settings, &limits, &agents, recv, &wake))
                    .expect("a thread starts");
                send
            })
            .collect();
        Engine {
            workers,
            forwarded: AtomicU64::new(0),
        }
    }

    /// The thread a conversation's calls go to.
    fn worker(&self, identity: &str) -> &mpsc::Sender<Job> {
        let h = identity
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        &self.workers[(h % self.workers.len() as u64) as usize]
    }

    /// Record and project a call (on the conversation's thread).
    pub(crate) async fn call(&self, req: Request) -> Result<Prepared, CallError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let n = self.forwarded.fetch_add(1, Ordering::SeqCst) + 1;
        let mut req = Box::new(req);
        req.n = n;
        self.worker(&req.identity)
            .send(Job::Call { req, reply })
            .map_err(|_| CallError::Gone)?;
        answer.await.map_err(|_| CallError::Gone)?
    }

    /// Record how a call ended, returning its outcome once recorded.
    pub(crate) async fn ended(&self, identity: &str, ended: Ended) -> String {
        let (reply, done) = tokio::sync::oneshot::channel();
        let outcome = ended.outcome.to_string();
        let job = Job::End {
            identity: identity.to_string(),
            ended: Box::new(ended),
            reply: Some(reply),
        };
        if self.worker(identity).send(job).is_err() {
            return outcome;
        }
        done.await.unwrap_or(outcome)
    }

    /// Record how a call ended without waiting (a call dropped before it
    /// could say).
    pub(crate) fn ended_later(&self, identity: &str, ended: Ended) {
        let job = Job::End {
            identity: identity.to_string(),
            ended: Box::new(ended),
            reply: None,
        };
        let _ = self.worker(identity).send(job);
    }
}

/// A task of the conversation with its live run.
struct Live<'s> {
    conv: Conversation,
    run: LiveRun<'s>,
    /// What its last forwarded conversation field was made of.
    written: Written,
}

/// A conversation's state on its thread.
struct Held<'s> {
    tasks: Vec<Live<'s>>,
    /// When it was last used (the LRU's order) and at what instant.
    tick: u64,
    at: Instant,
    /// Calls forwarded and not yet ended.
    in_flight: u32,
    /// Its last request was over the large-body size: dropped once idle.
    large: bool,
}

/// An engine thread's two store connections, opened at its first call
/// (again after a failure to open them).
struct Connections<'s> {
    settings: &'s ProxySettings,
    store: Option<Store>,
    reader: Option<Arc<Mutex<Store>>>,
}

impl Connections<'_> {
    fn get(&mut self) -> Result<(&mut Store, Arc<Mutex<Store>>), StoreError> {
        if self.store.is_none() {
            let store = Store::open(&self.settings.db)?;
            store.checkpoint_after_pages(CHECKPOINT_BACKSTOP_PAGES)?;
            self.store = Some(store);
        }
        let store = self.store.as_mut().expect("opened above");
        if self.reader.is_none() {
            let other = store
                .reopen()?
                .ok_or_else(|| StoreError::Corrupt("the proxy's store is in memory".into()))?;
            self.reader = Some(Arc::new(Mutex::new(other)));
        }
        Ok((
            store,
            Arc::clone(self.reader.as_ref().expect("opened above")),
        ))
    }
}

/// What a conversation's live runs are made with.
#[derive(Clone, Copy)]
struct Runs<'s> {
    settings: &'s ProxySettings,
    est: &'s CharsPerToken,
    summarizer: &'s dyn Summarizer,
}

impl<'s> Runs<'s> {
    /// A live run of a task whose model is `model`, its index reading rows
    /// through `reader`.
    fn live(&self, model: Option<&str>, reader: &Arc<Mutex<Store>>) -> LiveRun<'s> {
        LiveRun::new(
            self.settings.budget_for(model),
            self.est,
            self.summarizer,
            Some(Arc::clone(reader)),
        )
    }
}

/// What an engine thread holds: its connections and its conversations.
struct Thread<'s> {
    runs: Runs<'s>,
    limits: &'s ProxyLimits,
    conns: Connections<'s>,
    held: HashMap<String, Held<'s>>,
    tick: u64,
}

impl<'s> Thread<'s> {
    /// A conversation's state, loaded from the record if it is not held,
    /// and the thread's connections.
    #[allow(clippy::type_complexity)]
    fn held(
        &mut self,
        identity: &str,
    ) -> Result<(&mut Held<'s>, &mut Store, Arc<Mutex<Store>>), StoreError> {
        self.tick += 1;
        let (store, reader) = self.conns.get()?;
        if !self.held.contains_key(identity) {
            let tasks = load(store, identity, self.runs, &reader)?;
            self.held.insert(
                identity.to_string(),
                Held {
                    tasks,
                    tick: 0,
                    at: Instant::now(),
                    in_flight: 0,
                    large: false,
                },
            );
        }
        let h = self.held.get_mut(identity).expect("inserted above");
        h.tick = self.tick;
        h.at = Instant::now();
        Ok((h, store, reader))
    }

    fn call(&mut self, req: Request, agents: &Agents) -> Result<Prepared, CallError> {
        let identity = req.identity.clone();
        let large = req.body.len() > self.limits.large_body;
        let runs = self.runs;
        let result = match self.held(&identity) {
            Ok((held, store, reader)) => {
                // A large request's conversation is let go once its call
                // is over: its run keeps nothing for a next call.
                let r = prepare(store, &mut held.tasks, req, runs, agents, &reader, large);
                if r.is_ok() {
                    held.in_flight += 1;
                    held.large |= large;
                }
                r
            }
            Err(e) => Err(e.into()),
        };
        // A failed call leaves no state behind but the store's.
        if result.is_err() && self.held.get(&identity).is_some_and(|h| h.in_flight == 0) {
            self.held.remove(&identity);
        }
        result
    }

    fn end(&mut self, identity: &str, ended: Ended, agents: &Agents) -> String {
        let outcome = ended.outcome.to_string();
        let recorded = self.held(identity).and_then(|(held, store, _)| {
            held.in_flight = held.in_flight.saturating_sub(1);
            end(store, &mut held.tasks, ended, agents)
        });
        recorded.unwrap_or_else(|e| {
            self.held.remove(identity);
            format!("{outcome} (not recorded: {e})")
        })
    }

    /// Drop what is over the limits: conversations idle too long, those
    /// whose last request was large, then the least recently used over the
    /// cap; never one with a call in flight.
    fn evict(&mut self, now: Instant) {
        let idle = self.limits.conversation_idle;
        self.held.retain(|_, h| {
            h.in_flight > 0 || !(h.large || now.saturating_duration_since(h.at) >= idle)
        });
        // The cap is the proxy's: each thread holds its share.
        let cap = self
            .limits
            .max_conversations
            .div_ceil(self.limits.engine_threads.max(1));
        while self.held.len() > cap {
            let oldest = self
                .held
                .iter()
                .filter(|(_, h)| h.in_flight == 0)
                .min_by_key(|(_, h)| h.tick)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    self.held.remove(&k);
                }
                None => break,
            }
        }
    }
}

fn worker(
    settings: &ProxySettings,
    limits: &ProxyLimits,
    agents: &Agents,
    jobs: mpsc::Receiver<Job>,
    checkpoint: &mpsc::SyncSender<()>,
) {
    let est = CharsPerToken::default();
    let summarizer: Box<dyn Summarizer> = match settings.summarizer {
        SummarizerChoice::Extractive => Box::new(Extractive),
        SummarizerChoice::Static => Box::new(StaticCheckpoint),
    };
    let mut thread = Thread {
        runs: Runs {
            settings,
            est: &est,
            summarizer: summarizer.as_ref(),
        },
        limits,
        conns: Connections {
            settings,
            store: None,
            reader: None,
        },
        held: HashMap::new(),
        tick: 0,
    };
    // Idle conversations are looked for at least this often.
    let sweep =
        (limits.conversation_idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    // When to return freed memory to the system: a while after a large
    // request or answer (once its buffers have been let go, wherever), and
    // again later (a slow client may still be taking it).
    let mut release: Vec<Instant> = Vec::new();
    loop {
        let now = Instant::now();
        let wait = release
            .iter()
            .min()
            .map_or(sweep, |t| t.saturating_duration_since(now).min(sweep));
        let job = jobs.recv_timeout(wait);
        let committed = job.is_ok();
        let large = match &job {
            Ok(Job::Call { req, .. }) => req.body.len() > super::LARGE_TRANSFER,
            Ok(Job::End { ended, .. }) => ended.bytes > super::LARGE_TRANSFER,
            Err(_) => false,
        };
        match job {
            // A call that panics (a defect) fails alone: its conversation's
            // state is dropped (rebuilt from the record at its next call)
            // and the thread goes on with the others.
            Ok(Job::Call { req, reply }) => {
                let identity = req.identity.clone();
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    thread.call(*req, agents)
                }))
                .unwrap_or_else(|_| {
                    thread.held.remove(&identity);
                    Err(CallError::Gone)
                });
                let _ = reply.send(result);
            }
            Ok(Job::End {
                identity,
                ended,
                reply,
            }) => {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    thread.end(&identity, *ended, agents)
                }))
                .unwrap_or_else(|_| {
                    thread.held.remove(&identity);
                    "not recorded: the proxy's engine failed".to_string()
                });
                if let Some(reply) = reply {
                    let _ = reply.send(outcome);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        if committed {
            // Full: a checkpoint is already due.
            let _ = checkpoint.try_send(());
        }
        let now = Instant::now();
        thread.evict(now);
        if large {
            release = [100, 1_000, 5_000]
                .map(|ms| now + Duration::from_millis(ms))
                .to_vec();
        }
        if release.iter().any(|t| *t <= now) {
            release.retain(|t| *t > now);
            super::release_memory();
        }
    }
}

/// The tasks recorded for this identity before, oldest first.
fn load<'s>(
    store: &Store,
    identity: &str,
    runs: Runs<'s>,
    reader: &Arc<Mutex<Store>>,
) -> Result<Vec<Live<'s>>, StoreError> {
    let mut out = Vec::new();
    for meta in store.reader().proxy_conversations(identity)? {
        let model = store
            .reader()
            .task(&meta.task_id)?
            .and_then(|t| t.meta.model);
        out.push(Live {
            conv: Conversation::load(store, meta)?,
            run: runs.live(model.as_deref(), reader),
            written: Written::default(),
        });
    }
    Ok(out)
}

fn prepare<'s>(
    store: &mut Store,
    tasks: &mut Vec<Live<'s>>,
    mut req: Request,
    runs: Runs<'s>,
    agents: &Agents,
    reader: &Arc<Mutex<Store>>,
    last: bool,
) -> Result<Prepared, CallError> {
    // The newest task whose record the request extends.
    let mut best: Option<(usize, Divergence)> = None;
    let mut chosen = None;
    for (i, t) in tasks.iter().enumerate().rev() {
        match t.conv.plan(&req)? {
            Ok(plan) => {
                chosen = Some((i, plan));
                break;
            }
            Err(d) => {
                if best.as_ref().is_none_or(|(_, b)| d.shared > b.shared) {
                    best = Some((i, d));
                }
            }
        }
    }
    let mut started = None;
    let mut supersedes = None;
    let index = match chosen {
        Some((i, plan)) => {
            supersedes = plan.superseded_attempt();
            let rows = plan.take_rows(&req)?;
            tasks[i].conv.record(store, plan, rows, None)?;
            i
        }
        None => {
            let (parent, reason) = match best {
                Some((i, d)) => (Some(tasks[i].conv.meta.task_id.clone()), Some(d.reason)),
                None => parent_of(store, &req, agents)?,
            };
            let meta = ProxyConversation {
                task_id: task_id(&req.identity, tasks.len()),
                api: req.api.name().to_string(),
                identity: req.identity.clone(),
                lineage: req.lineage.clone(),
                session_id: req.session.clone(),
                head_rows: head_rows(&req).len() as u64,
                parent_id: parent.clone(),
                reason: reason.clone(),
            };
            let mut conv = Conversation::empty(meta);
            let plan = conv.plan(&req)?.map_err(|d| {
                BadRequest(format!("a new conversation cannot diverge: {}", d.reason))
            })?;
            let rows = plan.take_rows(&req)?;
            let record = task_record(&req, &conv.meta, &rows);
            conv.record(store, plan, rows, Some((&record, head_rows(&req))))?;
            tasks.push(Live {
                conv,
                run: runs.live(req.model.as_deref(), reader),
                written: Written::default(),
            });
            started = parent.map(|p| (p, reason.unwrap_or_default()));
            tasks.len() - 1
        }
    };
    let live = &mut tasks[index];
    let task = live.conv.meta.task_id.clone();
    let (call, out) = live.run.next_call(store, &task, last)?;
    let crate::engine::CallOutput {
        view,
        report: r,
        parts,
        ..
    } = out;
    // Only the view is needed from here on.
    drop(parts);
    let (pieces, items_forwarded) = req.forwarded(|out| {
        conversation_field(
            &req,
            &live.conv,
            std::sync::Arc::unwrap_or_clone(view),
            &mut live.written,
            !last,
            out,
        )
    });
    // The client's runs the view keeps are sent from its body itself.
    let body = pieces.into_bytes(&Bytes::from(std::mem::take(&mut req.body)));
    live.conv.attempts += 1;
    let attempt = live.conv.attempts;
    let r = &r;
    let report = ForwardedCall {
        task: task.clone(),
        api: req.api.name(),
        call,
        attempt,
        tokens_before: r.tokens_before,
        tokens_after: r.tokens_after,
        trigger: r.trigger,
        w_eff: r.w_eff,
        tiers_fired: r.tiers_fired.clone(),
        status: r.status,
        view_hash: r.view_hash.clone(),
        items_sent: req.items.len(),
        items_forwarded,
        started_from: started.as_ref().map(|(p, _)| p.clone()),
        reason: started.map(|(_, r)| r),
        supersedes,
        upstream_status: None,
        outcome: String::new(),
    };
    let row = ProxyCall {
        task_id: task.clone(),
        attempt,
        call,
        rows: live.conv.rows,
        profile: live.run.profile(),
        view_hash: r.view_hash.clone(),
        report: serde_json::json!({
            "tokens_before": r.tokens_before,
            "tokens_after": r.tokens_after,
            "estimated_messages": r.estimated_messages,
            "tiers_fired": r.tiers_fired,
            "status": r.status,
            "settings": live.run.identity(),
        }),
    };
    store.transaction(|tx| tx.put_proxy_call(&row))?;
    fault::proxy(ProxyPoint::AfterRequest, req.n);
    Ok(Prepared {
        task,
        attempt,
        rows: live.conv.rows,
        body,
        report,
        n: req.n,
    })
}

/// The parent of a conversation seen for the first time: the task whose
/// subagent call's prompt is its first ask, else the latest conversation of
/// its lineage (the client compacted or cleared its context), else the
/// first conversation of its session (a side request).
fn parent_of(
    store: &Store,
    req: &Request,
    agents: &Agents,
) -> Result<(Option<String>, Option<String>), StoreError> {
    if let Some(session) = &req.session {
        let first_ask = first_ask_digests(req);
        let known = agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, task)) = known
            .iter()
            .rev()
            .find(|(s, prompt, _)| s == session && first_ask.contains(prompt))
        {
            return Ok((
                Some(task.clone()),
                Some(format!(
                    "a subagent of {task}: its first ask is the prompt of {task}'s agent call"
                )),
            ));
        }
    }
    let reader = store.reader();
    if let Some(prev) = reader.proxy_lineage(&req.lineage)?.last() {
        return Ok((
            Some(prev.task_id.clone()),
            Some(format!(
                "the client started its history anew (it compacted or cleared its context): same session and system prompt as {}, another first message",
                prev.task_id
            )),
        ));
    }
    if let Some(session) = &req.session
        && let Some(first) = reader.proxy_session(session)?.first()
    {
        return Ok((
            Some(first.task_id.clone()),
            Some(format!(
                "a side request of the session of {} (another system prompt or first message)",
                first.task_id
            )),
        ));
    }
    Ok((None, None))
}

/// The digests of the texts of the request's first ask (each trimmed).
fn first_ask_digests(req: &Request) -> Vec<Digest> {
    req.with_identifying_rows(|mut rows| {
        Iterator::find(&mut rows, |r| r.kind == crate::model::Kind::Ask)
            .map(|r| {
                r.content
                    .iter()
                    .filter_map(|b| match b {
                        Block::Text { text } => Some(Digest::of(text.trim())),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// Record how a call ended; returns its outcome.
fn end(
    store: &mut Store,
    tasks: &mut [Live<'_>],
    ended: Ended,
    agents: &Agents,
) -> Result<String, StoreError> {
    let Some(live) = tasks.iter_mut().find(|t| t.conv.meta.task_id == ended.task) else {
        return Ok(ended.outcome.to_string());
    };
    let mut response = ProxyResponse {
        task_id: ended.task.clone(),
        attempt: ended.attempt,
        status: ended.status,
        outcome: ended.outcome.to_string(),
    };
    let outcome = match ended.answer {
        Some(answer) => {
            response.outcome = "recorded".into();
            let calls = agent_prompts(&answer);
            if live
                .conv
                .record_answer(store, ended.rows, answer, &response)?
            {
                if let Some(session) = &live.conv.meta.session_id
                    && !calls.is_empty()
                {
                    let mut known = agents.lock().unwrap_or_else(|e| e.into_inner());
                    for p in calls {
                        if known.len() == AGENT_PROMPTS {
                            known.pop_front();
                        }
                        known.push_back((session.clone(), Digest::of(&p), ended.task.clone()));
                    }
                }
                fault::proxy(ProxyPoint::AfterResponse, ended.n);
                "recorded".to_string()
            } else {
                let rows = store.reader().proxy_responses(&ended.task)?;
                rows.iter()
                    .rev()
                    .find(|r| r.attempt == ended.attempt)
                    .map_or("superseded".to_string(), |r| r.outcome.clone())
            }
        }
        None => {
            store.transaction(|tx| tx.put_proxy_response(&response))?;
            ended.outcome.to_string()
        }
    };
    Ok(outcome)
}

/// The prompts of the subagent calls (Claude Code's `Agent`/`Task` tool) an
/// answer makes.
fn agent_prompts(answer: &Message) -> Vec<String> {
    answer
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { name, input, .. } if matches!(name.as_str(), "Agent" | "Task") => {
                input
                    .get("prompt")
                    .and_then(|p| p.as_str())
                    .map(|p| p.trim().to_string())
            }
            _ => None,
        })
        .collect()
}

impl Api {
    /// The error body a client of this API expects.
    pub(crate) fn error_body(self, kind: &str, message: &str) -> String {
        match self {
            Api::Messages => serde_json::json!({
                "type": "error",
                "error": {"type": kind, "message": message},
            }),
            Api::Responses | Api::Chat => serde_json::json!({
                "error": {"type": kind, "message": message, "param": null, "code": null},
            }),
            // Google's error shape: a status name, and its message.
            Api::Gemini => serde_json::json!({
                "error": {"status": match kind {
                    "invalid_request_error" => "INVALID_ARGUMENT",
                    "permission_error" => "PERMISSION_DENIED",
                    "request_too_large" => "INVALID_ARGUMENT",
                    _ => "INTERNAL",
                }, "message": message},
            }),
        }
        .to_string()
    }
}
