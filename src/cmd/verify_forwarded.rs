//! `replay --verify-forwarded`: every view the proxy forwarded for a task
//! derived again from the record.

use std::io::Write;

use anyhow::{Context, Result};

use super::Ui;
use super::exit::Outcome;
use crate::store::Store;

/// `replay --verify-forwarded`: every forwarded view of `task` derived again.
pub fn verify(store: &Store, ui: &mut Ui, task: &str, json: bool) -> Result<Outcome> {
    let shown = super::visible::visible_line(task);
    let checked = crate::proxy::verify::verify(store, task)
        .with_context(|| format!("cannot verify the calls forwarded for {task}"))?;
    let ok = checked.iter().all(|c| c.ok);
    if json {
        let v = serde_json::json!({
            "task": task,
            "calls": checked,
            "verified": checked.iter().filter(|c| c.ok).count(),
            "ok": ok,
        });
        ui.json_kind("verify_forwarded", &v)?;
    } else {
        // `attempt` numbers the task's forwarded requests; a call sent again
        // (a client's retry) is the one request that repeats a call.
        let mut seen = std::collections::BTreeSet::new();
        for c in &checked {
            let retry = if seen.insert(c.call) {
                ""
            } else {
                " · a retry"
            };
            writeln!(
                ui.out,
                "call {:>4} · request {:>4} · {:>6} rows · forwarded {} · derived {} · {}{retry}",
                c.call,
                c.attempt,
                c.rows,
                &c.forwarded[..12],
                &c.derived[..12],
                if c.ok { "ok" } else { "MISMATCH" }
            )?;
        }
        match checked.iter().find(|c| !c.ok) {
            None => writeln!(
                ui.out,
                "verified {} forwarded views of {shown}: each derived again from the record, byte for byte",
                checked.len()
            )?,
            Some(c) => writeln!(
                ui.out,
                "call {} (forwarded request {}) of {shown}: the view derived again differs from the one forwarded",
                c.call, c.attempt
            )?,
        }
    }
    Ok(if ok { Outcome::Ok } else { Outcome::Differs })
}
