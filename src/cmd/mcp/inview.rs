//! What the model that asks has in its context now: which of the record's
//! entries a search hit need not bring back.
//!
//! Read from the record, never derived again through a run (the server
//! only reads): the session's current task, from its latest compaction
//! on (what a client compacted it keeps only as its summary): the latest
//! compaction marker among its rows, or the latest compaction its hooks
//! recorded (Claude Code writes the marker to its transcript only after
//! its hooks ran, so the record may not hold it yet), less
//! what compactor took out of the view it forwarded last, for a task the
//! proxy records: the raw parts folded into the floor summary stored under
//! the profile of its latest call, and the tool calls whose output that
//! profile shrank or dropped. Every other task of the session or project
//! is out of the context.

use std::collections::HashSet;

use crate::engine::entries::Entry;
use crate::engine::estimate::CharsPerToken;
use crate::engine::parts::{
    Side, block_address, coverage_next, coverage_start, decode_coverage_key, reconstruct,
};
use crate::model::{Block, Kind, Role};
use crate::store::{Store, StoreError};

use crate::cmd::search_hits::Place;

/// The entries of one task the model holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InView {
    pub task: String,
    /// Rows before this one are out of the context (a compaction marker).
    pub from_seq: u64,
    /// Part addresses (`text:…`, `reasoning:…`) and tool call ids that
    /// compactor folded or shrank.
    pub out: HashSet<String>,
}

/// What identifies the state `InView` was read from: the task, its rows,
/// its stored compaction state and the client compactions its hooks
/// recorded (the server keeps the last one it read).
pub type Key = (String, u64, u64, usize);

/// The key of `task`'s state now.
pub fn key(store: &Store, task: &str) -> Result<Key, StoreError> {
    let reader = store.reader();
    let rows = reader.message_count(task)?;
    let entries = reader.snapshot_entry_count(task)?;
    let compactions = reader.client_compactions(task)?.len();
    Ok((task.to_string(), rows, entries, compactions))
}

/// What the model holds of `task`.
pub fn read(store: &Store, task: &str) -> Result<InView, StoreError> {
    let reader = store.reader();
    let mut from_seq = reader
        .last_seq_of_kinds(task, &[Kind::CompactSummary, Kind::CompactBoundary])?
        .unwrap_or(0);
    // A compaction the hooks recorded: the rows before it are out.
    for c in reader.client_compactions(task)? {
        from_seq = from_seq.max(c.history_rows);
    }
    let mut out = HashSet::new();
    let profile = reader
        .proxy_calls(task)?
        .into_iter()
        .max_by_key(|c| c.attempt)
        .map(|c| c.profile);
    if let Some(profile) = profile {
        let entries = reader.entries(task, &profile)?;
        let covers: HashSet<[u8; 32]> = entries
            .keys()
            .filter_map(|k| decode_coverage_key(k))
            .collect();
        for (key, v) in &entries {
            if let Some(id) = key.strip_prefix("tool:")
                && matches!(
                    Entry::from_value(v),
                    Some(Entry::Shrink { .. } | Entry::Drop)
                )
            {
                out.insert(id.to_string());
            }
        }
        if !covers.is_empty() {
            let rows = reader.history_rows(task)?;
            let parts = reconstruct(rows.iter(), &CharsPerToken::default());
            let mut h = coverage_start();
            let mut folded = 0;
            for (i, p) in parts.iter().enumerate() {
                h = coverage_next(&h, &p.address);
                if covers.contains(&h) {
                    folded = i + 1;
                }
            }
            for p in &parts[..folded] {
                out.insert(
                    p.tool_id()
                        .map_or_else(|| p.address.clone(), str::to_string),
                );
            }
        }
    }
    Ok(InView {
        task: task.to_string(),
        from_seq,
        out,
    })
}

impl InView {
    /// Whether the entry at `place` (its block, when it is a row's) is in
    /// the model's context.
    pub fn holds(&self, place: &Place, block: Option<(Role, &Block)>) -> bool {
        let Some(seq) = place.seq else {
            return false;
        };
        if place.task != self.task || seq < self.from_seq {
            return false;
        }
        match block {
            Some((_, Block::ToolUse { id, .. })) => !self.out.contains(id),
            Some((_, Block::ToolResult { tool_use_id, .. })) => !self.out.contains(tool_use_id),
            Some((role, b)) => {
                let side = if role == Role::Assistant {
                    Side::Assistant
                } else {
                    Side::User
                };
                !self.out.contains(&block_address(side, b))
            }
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::entries::Entry;
    use crate::model::{Kind, Message, ToolContent};
    use crate::store::ProxyCall;

    fn text(role: Role, kind: Kind, t: &str) -> Message {
        Message::new(role, kind, vec![Block::Text { text: t.into() }], 0)
    }

    fn place(task: &str, seq: u64) -> Place {
        Place {
            task: task.into(),
            seq: Some(seq),
            call: 1,
        }
    }

    /// Rows before the client's latest compaction marker are out of the
    /// context; the marker's summary and what follows are in it.
    #[test]
    fn a_client_compaction_leaves_what_came_before_out() {
        let mut s = Store::open_memory().unwrap();
        let rows = vec![
            text(Role::User, Kind::Ask, "Never migrate the tenant_registry."),
            text(Role::Assistant, Kind::Generation, "Noted."),
            text(Role::User, Kind::CompactSummary, "Summary: parser work."),
            text(Role::User, Kind::Ask, "Go on."),
        ];
        s.transaction(|tx| tx.append_messages("t", None, &rows))
            .unwrap();
        let v = read(&s, "t").unwrap();
        assert_eq!(v.from_seq, 2);
        let b = |i: usize| Some((rows[i].role, &rows[i].content[0]));
        assert!(!v.holds(&place("t", 0), b(0)));
        assert!(!v.holds(&place("t", 1), b(1)));
        assert!(v.holds(&place("t", 2), b(2)));
        assert!(v.holds(&place("t", 3), b(3)));
        // Another task, and a floor summary line, are out of it.
        assert!(!v.holds(&place("u", 3), b(3)));
        let line = Place {
            task: "t".into(),
            seq: None,
            call: 1,
        };
        assert!(!v.holds(&line, None));
        // What identifies the state changes when a row is added.
        let before = key(&s, "t").unwrap();
        s.transaction(|tx| tx.append_rows("t", &rows[3..])).unwrap();
        assert_ne!(key(&s, "t").unwrap(), before);
    }

    /// A compaction the hooks recorded before the client's marker reached
    /// the record (Claude Code writes it after its hooks ran): the rows
    /// before it are out of the context, and the key changes with it.
    #[test]
    fn a_compaction_the_hooks_recorded_leaves_what_came_before_out() {
        let mut s = Store::open_memory().unwrap();
        let rows = vec![
            text(Role::User, Kind::Ask, "Never migrate the tenant_registry."),
            text(Role::Assistant, Kind::Generation, "Noted."),
        ];
        s.transaction(|tx| tx.append_messages("t", None, &rows))
            .unwrap();
        let b = |i: usize| Some((rows[i].role, &rows[i].content[0]));
        assert!(read(&s, "t").unwrap().holds(&place("t", 0), b(0)));
        let before = key(&s, "t").unwrap();
        s.transaction(|tx| {
            tx.record_client_compaction(
                "t",
                1,
                2,
                "claude-code",
                &crate::store::CompactionHalf::ClientSummary {
                    trigger: Some("manual"),
                    summary: "All files read.",
                },
            )
        })
        .unwrap();
        assert_ne!(key(&s, "t").unwrap(), before);
        let v = read(&s, "t").unwrap();
        assert_eq!(v.from_seq, 2);
        assert!(!v.holds(&place("t", 0), b(0)));
        assert!(!v.holds(&place("t", 1), b(1)));
    }

    /// For a task the proxy records: the parts folded into the floor
    /// summary its latest call's profile stores, and the tool calls that
    /// profile shrank, are out of the context.
    #[test]
    fn what_the_proxy_folded_or_shrank_is_out() {
        let mut s = Store::open_memory().unwrap();
        let mut call = Message::tool_call("toolu_a", "Bash", json!({"command": "ls"}), 0);
        call.step = 1;
        let mut result = Message::tool_result(
            "toolu_a".into(),
            ToolContent::Text("a.txt".into()),
            false,
            0,
        );
        result.step = 1;
        let mut call2 = Message::tool_call("toolu_b", "Bash", json!({"command": "pwd"}), 0);
        call2.step = 2;
        let mut result2 = Message::tool_result(
            "toolu_b".into(),
            ToolContent::Text("/home".into()),
            false,
            0,
        );
        result2.step = 2;
        let mut call3 = Message::tool_call("toolu_c", "Bash", json!({"command": "date"}), 0);
        call3.step = 3;
        let rows = vec![
            text(Role::User, Kind::Ask, "List the files."),
            call,
            result,
            call2,
            result2,
            call3,
        ];
        s.transaction(|tx| tx.append_messages("t", None, &rows))
            .unwrap();
        // The summary folds the ask and the first tool call; the second
        // tool call is shrunk.
        let parts = reconstruct(rows.iter(), &CharsPerToken::default());
        let mut h = coverage_start();
        for p in &parts[..2] {
            h = coverage_next(&h, &p.address);
        }
        let summary = Entry::Summary {
            text: "- #1: List the files.".into(),
            covers: 2,
            summarizer: "extractive".into(),
            extends: None,
            minted_turn: 1,
            minted_call: 2,
        };
        let shrink = Entry::Shrink {
            rule: "head_tail".into(),
            form: json!({}),
        };
        s.transaction(|tx| {
            tx.put_entry(
                "t",
                "p",
                &crate::engine::parts::coverage_key(&h),
                &summary.to_value(),
            )?;
            tx.put_entry("t", "p", "tool:toolu_b", &shrink.to_value())?;
            // Another profile's state is not what the proxy forwarded.
            tx.put_entry("t", "q", "tool:toolu_c", &shrink.to_value())?;
            tx.put_proxy_call(&ProxyCall {
                task_id: "t".into(),
                attempt: 1,
                call: 3,
                rows: 6,
                profile: "p".into(),
                view_hash: "h".into(),
                report: json!({}),
            })
        })
        .unwrap();
        let v = read(&s, "t").unwrap();
        let b = |i: usize| Some((rows[i].role, &rows[i].content[0]));
        assert!(!v.holds(&place("t", 0), b(0)), "the folded ask");
        assert!(!v.holds(&place("t", 2), b(2)), "the folded call's output");
        assert!(!v.holds(&place("t", 4), b(4)), "the shrunk call's output");
        assert!(v.holds(&place("t", 5), b(5)), "a call the view holds whole");
    }
}
