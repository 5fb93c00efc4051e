//! The offline audit of a live session: every view the proxy forwarded for
//! a task, derived again from the record as it stood when that request was
//! forwarded (its rows appended to a scratch store in the same steps as
//! the proxy appended them, and the answers a retry superseded marked as
//! they were), under the settings it ran under, and compared with the hash
//! the proxy kept. Each request checked is written to the scratch store as
//! the proxy wrote it, so the next one is anchored as the proxy anchored it.

use serde::Serialize;

use super::run::LiveRun;
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::engine::summarizer::Summarizer;
use crate::model::decimal::Ratio;
use crate::store::{DbLocation, ProxyCall, Store, StoreError};
use crate::summarize::{Extractive, StaticCheckpoint};

/// One forwarded request, checked.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub attempt: u64,
    pub call: u32,
    pub rows: u64,
    pub forwarded: String,
    pub derived: String,
    pub ok: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "task {0} holds no call forwarded by compactor proxy; --verify-forwarded checks a live session's record"
    )]
    NotLive(String),
    #[error(
        "forwarded request {attempt} of {task} ran under settings this compactor cannot run again: {why}"
    )]
    Settings {
        task: String,
        attempt: u64,
        why: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot make a scratch store: {0}")]
    Scratch(#[from] std::io::Error),
}

/// The budget and summarizer a forwarded request ran under, from its row.
fn settings_of(call: &ProxyCall) -> Result<(Budget, Box<dyn Summarizer>), String> {
    let s = &call.report["settings"];
    let b = &s["budget"];
    let n = |k: &str| b[k].as_u64().ok_or_else(|| format!("no budget {k}"));
    let r = |k: &str| -> Result<Ratio, String> {
        b[k].as_str()
            .ok_or_else(|| format!("no budget {k}"))?
            .parse()
    };
    let budget = Budget {
        window: n("window")?,
        output_reserved: n("output_reserved")?,
        trigger_ratio: r("trigger_ratio")?,
        stop_ratio: r("stop_ratio")?,
        protect_recent_steps: u32::try_from(n("protect_recent_steps")?)
            .map_err(|e| e.to_string())?,
        summary_budget_tokens: n("summary_budget_tokens")?,
    };
    let summarizer: Box<dyn Summarizer> = match s["summarizer"].as_str() {
        Some("extractive") => Box::new(Extractive),
        Some("static") => Box::new(StaticCheckpoint),
        other => return Err(format!("the summarizer {other:?}")),
    };
    if s["tool_rules"] != crate::engine::toolrules::default_rules_id() {
        return Err("other tool rules".into());
    }
    Ok((budget, summarizer))
}

/// Check every forwarded request of `task` in order, stopping at the first
/// whose view is not derived again (it is the last one returned).
pub fn verify(store: &Store, task: &str) -> Result<Vec<Checked>, VerifyError> {
    let calls = store.reader().proxy_calls(task)?;
    if calls.is_empty() {
        return Err(VerifyError::NotLive(task.to_string()));
    }
    let dir = tempfile::tempdir()?;
    let mut scratch = Store::open(&DbLocation::File(dir.path().join("verify.db")))?;
    let forms = store.tool_forms(task)?;
    scratch.transaction(|tx| -> Result<(), StoreError> {
        for f in forms.values() {
            tx.put_tool_form(task, f)?;
        }
        Ok(())
    })?;
    let conversation = store
        .reader()
        .proxy_conversation(task)?
        .ok_or_else(|| VerifyError::NotLive(task.to_string()))?;
    scratch.transaction(|tx| tx.put_proxy_conversation(&conversation))?;
    let superseded = store.reader().proxy_superseded(task)?;
    let mut marked = 0;
    let est = CharsPerToken::default();
    let mut out = Vec::new();
    let mut copied = 0u64;
    let mut start = 0;
    while start < calls.len() {
        // A run of requests forwarded under one profile (a proxy restarted
        // with other settings starts another).
        let profile = &calls[start].profile;
        let end = calls[start..]
            .iter()
            .position(|c| c.profile != *profile)
            .map_or(calls.len(), |p| start + p);
        let (budget, summarizer) =
            settings_of(&calls[start]).map_err(|why| VerifyError::Settings {
                task: task.to_string(),
                attempt: calls[start].attempt,
                why,
            })?;
        let mut live = LiveRun::new(budget, &est, summarizer.as_ref(), None);
        for call in &calls[start..end] {
            if copied < call.rows {
                let rows: Vec<_> = store
                    .reader()
                    .messages(task, copied, call.rows)?
                    .into_iter()
                    .map(|s| s.message)
                    .collect();
                scratch.transaction(|tx| tx.append_rows(task, &rows).map(drop))?;
                copied = call.rows;
            }
            // The answers superseded by this request or one before it.
            let now = superseded[marked..]
                .iter()
                .take_while(|s| s.by_attempt <= call.attempt)
                .count();
            if now > 0 {
                let marks = &superseded[marked..marked + now];
                scratch.transaction(|tx| -> Result<(), StoreError> {
                    for s in marks {
                        tx.put_proxy_superseded(task, s)?;
                    }
                    Ok(())
                })?;
                marked += now;
            }
            let (k, derived) = live.next_call(&mut scratch, task, false)?;
            let mut row = call.clone();
            row.report["estimated_messages"] = derived.report.estimated_messages.into();
            scratch.transaction(|tx| tx.put_proxy_call(&row))?;
            let derived = derived.report.view_hash;
            let ok = k == call.call && derived == call.view_hash;
            out.push(Checked {
                attempt: call.attempt,
                call: k,
                rows: call.rows,
                forwarded: call.view_hash.clone(),
                derived,
                ok,
            });
            if !ok {
                return Ok(out);
            }
        }
        start = end;
    }
    Ok(out)
}
