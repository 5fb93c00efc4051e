//! The proxy's conversations, each run by a thread of its own: it owns the
//! conversation's store connection, its tasks (the first one and any
//! started when the history diverged) and their live runs, and takes the
//! calls of that conversation one at a time, so conversations run side by
//! side and never share state but the store file.
//!
//! A call: find the task whose record the request extends (or start one),
//! record what is new, run the engine's step, write the forwarded body and
//! record its view hash; then, once the upstream's answer is over, record
//! the assistant row (or how the call ended).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use serde::Serialize;

use super::convo::BadRequest;
use super::record::{Conversation, Divergence, head_rows, task_id, task_record};
use super::render::{Written, conversation_field};
use super::request::{Api, Request};
use super::run::LiveRun;
use super::{ProxySettings, SummarizerChoice};
use crate::engine::estimate::CharsPerToken;
use crate::engine::summarizer::Summarizer;
use crate::engine::{Status, Tier};
use crate::fault::{self, ProxyPoint};
use crate::model::{Block, Message};
use crate::store::{ProxyCall, ProxyConversation, ProxyResponse, Store, StoreError};
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
    #[error("the proxy's conversation thread stopped")]
    Gone,
}

/// A call ready to forward.
pub(crate) struct Prepared {
    pub task: String,
    pub attempt: u64,
    /// Rows of the record when it was forwarded.
    pub rows: u64,
    pub body: Vec<u8>,
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
    /// The upstream's status (`None`: it never answered).
    pub upstream_status: Option<u16>,
    /// `recorded`, `upstream_error`, `upstream_failed`, `client_gone`, `superseded`, `unparsed`.
    pub outcome: String,
}

/// How a forwarded call ended, for the conversation's thread to record.
pub(crate) struct Ended {
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
        ended: Box<Ended>,
        reply: mpsc::SyncSender<String>,
    },
}

/// Subagent prompts seen in tool calls, by session: the prompt and the
/// task whose call it is (a conversation whose first ask is that prompt
/// is that task's subagent).
type Agents = Mutex<HashMap<String, Vec<(String, String)>>>;

/// The conversations of one proxy, by identity.
pub(crate) struct Engine {
    settings: Arc<ProxySettings>,
    threads: Mutex<HashMap<String, mpsc::Sender<Job>>>,
    agents: Arc<Agents>,
    forwarded: AtomicU64,
}

impl Engine {
    pub(crate) fn new(settings: Arc<ProxySettings>) -> Engine {
        Engine {
            settings,
            threads: Mutex::new(HashMap::new()),
            agents: Arc::default(),
            forwarded: AtomicU64::new(0),
        }
    }

    fn thread(&self, identity: &str) -> mpsc::Sender<Job> {
        let mut threads = self.threads.lock().expect("no thread panics holding it");
        if let Some(t) = threads.get(identity) {
            return t.clone();
        }
        let (send, recv) = mpsc::channel();
        let settings = Arc::clone(&self.settings);
        let agents = Arc::clone(&self.agents);
        let identity_owned = identity.to_string();
        std::thread::Builder::new()
            .name("compactor-conversation".into())
            .spawn(move || conversation_thread(&settings, &identity_owned, &agents, recv))
            .expect("a thread starts");
        threads.insert(identity.to_string(), send.clone());
        send
    }

    /// Record and project a call (on the conversation's thread).
    pub(crate) async fn call(&self, req: Request) -> Result<Prepared, CallError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let n = self.forwarded.fetch_add(1, Ordering::SeqCst) + 1;
        let mut req = Box::new(req);
        req.n = n;
        let thread = self.thread(&req.identity);
        if thread.send(Job::Call { req, reply }).is_err() {
            self.threads
                .lock()
                .expect("no thread panics holding it")
                .clear();
            return Err(CallError::Gone);
        }
        answer.await.map_err(|_| CallError::Gone)?
    }

    /// Record how a call ended (blocking: from the forwarding thread),
    /// returning its outcome once recorded.
    pub(crate) fn ended(&self, identity: &str, ended: Ended) -> String {
        let (reply, done) = mpsc::sync_channel(1);
        let outcome = ended.outcome.to_string();
        if self
            .thread(identity)
            .send(Job::End {
                ended: Box::new(ended),
                reply,
            })
            .is_err()
        {
            return outcome;
        }
        done.recv().unwrap_or(outcome)
    }
}

/// A task of the conversation with its live run.
struct Live<'s> {
    conv: Conversation,
    run: LiveRun<'s>,
    /// What its last forwarded conversation field was made of.
    written: Written,
}

fn conversation_thread(
    settings: &ProxySettings,
    identity: &str,
    agents: &Agents,
    jobs: mpsc::Receiver<Job>,
) {
    let est = CharsPerToken::default();
    let summarizer: Box<dyn Summarizer> = match settings.summarizer {
        SummarizerChoice::Extractive => Box::new(Extractive),
        SummarizerChoice::Static => Box::new(StaticCheckpoint),
    };
    let mut store: Option<Store> = None;
    let mut tasks: Option<Vec<Live<'_>>> = None;
    for job in jobs {
        match job {
            Job::Call { req, reply } => {
                let opened = match &mut store {
                    Some(s) => Ok(s),
                    slot => Store::open(&settings.db).map(|s| slot.insert(s)),
                };
                let result = opened.map_err(CallError::from).and_then(|store| {
                    let tasks = match &mut tasks {
                        Some(t) => t,
                        slot => {
                            slot.insert(load(store, identity, settings, &est, summarizer.as_ref())?)
                        }
                    };
                    prepare(
                        store,
                        tasks,
                        *req,
                        settings,
                        &est,
                        summarizer.as_ref(),
                        agents,
                    )
                });
                if result.is_err() {
                    // A failed call leaves no state behind but the store's.
                    tasks = None;
                }
                let _ = reply.send(result);
            }
            Job::End { ended, reply } => {
                let outcome = match (store.as_mut(), tasks.as_mut()) {
                    (Some(store), Some(tasks)) => end(store, tasks, *ended, agents)
                        .unwrap_or_else(|e| format!("not recorded: {e}")),
                    _ => ended.outcome.to_string(),
                };
                let _ = reply.send(outcome);
            }
        }
    }
}

/// The tasks recorded for this identity before, oldest first.
fn load<'s>(
    store: &Store,
    identity: &str,
    settings: &ProxySettings,
    est: &'s CharsPerToken,
    summarizer: &'s dyn Summarizer,
) -> Result<Vec<Live<'s>>, StoreError> {
    let mut out = Vec::new();
    for meta in store.reader().proxy_conversations(identity)? {
        let views = forwarded_views(store, &meta.task_id)?;
        let model = store.reader().task(&meta.task_id)?.and_then(|t| t.model);
        out.push(Live {
            conv: Conversation::load(store, meta)?,
            run: LiveRun::new(
                settings.budget_for(model.as_deref()),
                est,
                summarizer,
                views,
            ),
            written: Written::default(),
        });
    }
    Ok(out)
}

/// The estimate of the view each call of `task` forwarded (its last
/// attempt's), as the proxy kept it.
pub(crate) fn forwarded_views(
    store: &Store,
    task: &str,
) -> Result<std::collections::BTreeMap<u32, u64>, StoreError> {
    Ok(store
        .reader()
        .proxy_calls(task)?
        .into_iter()
        .filter_map(|c| Some((c.call, c.report["estimated_messages"].as_u64()?)))
        .collect())
}

fn prepare<'s>(
    store: &mut Store,
    tasks: &mut Vec<Live<'s>>,
    req: Request,
    settings: &ProxySettings,
    est: &'s CharsPerToken,
    summarizer: &'s dyn Summarizer,
    agents: &Agents,
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
    let index = match chosen {
        Some((i, plan)) => {
            tasks[i].conv.record(store, plan, None)?;
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
            let record = task_record(&req, &conv.meta, plan.rows());
            conv.record(store, plan, Some((&record, head_rows(&req))))?;
            tasks.push(Live {
                conv,
                run: LiveRun::new(
                    settings.budget_for(req.model.as_deref()),
                    est,
                    summarizer,
                    Default::default(),
                ),
                written: Written::default(),
            });
            started = parent.map(|p| (p, reason.unwrap_or_default()));
            tasks.len() - 1
        }
    };
    let live = &mut tasks[index];
    let task = live.conv.meta.task_id.clone();
    let (call, out) = live.run.next_call(store, &task)?;
    let crate::engine::CallOutput {
        view, report: r, ..
    } = out;
    let field = conversation_field(
        &req,
        &live.conv,
        std::sync::Arc::unwrap_or_clone(view),
        &mut live.written,
    );
    let body = req.forwarded(&field);
    let items_forwarded = count_items(&field);
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

/// Items in a forwarded conversation field.
fn count_items(field: &str) -> usize {
    serde_json::from_str::<Vec<&serde_json::value::RawValue>>(field).map_or(0, |v| v.len())
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
        let first_ask = first_ask_texts(req);
        let known = agents.lock().expect("no thread panics holding it");
        if let Some((_, task)) = known.get(session).and_then(|calls| {
            calls
                .iter()
                .rev()
                .find(|(prompt, _)| first_ask.iter().any(|t| t == prompt))
        }) {
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

/// The texts of the request's first ask.
fn first_ask_texts(req: &Request) -> Vec<String> {
    req.read
        .iter()
        .flat_map(|(_, rows)| rows)
        .find(|r| r.kind == crate::model::Kind::Ask)
        .map(|r| {
            r.content
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text.trim().to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
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
                    let mut known = agents.lock().expect("no thread panics holding it");
                    let list = known.entry(session.clone()).or_default();
                    for p in calls {
                        list.push((p, ended.task.clone()));
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
            Api::Responses => serde_json::json!({
                "error": {"type": kind, "message": message, "param": null, "code": null},
            }),
        }
        .to_string()
    }
}
