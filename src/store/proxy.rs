//! What `compactor proxy` keeps beside the record of each live conversation:
//! `proxy_conversation` (which task records it, and why it was started),
//! `proxy_call` (every forwarded request's call, rows and view hash),
//! `proxy_response` (how each one ended) and `proxy_superseded` (the
//! recorded answers a client's retry superseded). All four are append-only.

use rusqlite::{OptionalExtension, params};

use super::{Reader, Result, StoreError, Tx};

/// A live conversation as `proxy_conversation` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyConversation {
    pub task_id: String,
    /// `messages` (Anthropic Messages) or `responses` (OpenAI Responses).
    pub api: String,
    /// The conversation's identity (hex): its session, system prompt and first message.
    pub identity: String,
    /// Its session and system prompt alone (hex): a client that compacted or
    /// cleared its context starts a conversation of the same lineage.
    pub lineage: String,
    pub session_id: Option<String>,
    /// Leading rows of the record that hold the system prompt and tools.
    pub head_rows: u64,
    pub parent_id: Option<String>,
    pub reason: Option<String>,
}

/// One forwarded request, as `proxy_call` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyCall {
    pub task_id: String,
    /// 1, 2, ... in the order the task's requests were forwarded.
    pub attempt: u64,
    /// The model call the view projected.
    pub call: u32,
    /// Rows of the record the view was derived from.
    pub rows: u64,
    pub profile: String,
    pub view_hash: String,
    /// The call's report as JSON (tokens, tiers fired, status).
    pub report: serde_json::Value,
}

/// How a forwarded request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyResponse {
    pub task_id: String,
    pub attempt: u64,
    /// The upstream's HTTP status (`None`: it never answered).
    pub status: Option<u16>,
    pub outcome: String,
}

/// The time a row is written, as transcripts stamp their lines
/// (`2026-12-01T00:16:44.767Z`): SQLite's clock, so the stamp is taken in
/// the row's own statement. A live conversation's times are its activity
/// (`tasks`, `latest`); no view reads them.
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// A live task's activity: its first and last recorded times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyActivity {
    pub task_id: String,
    /// The session the client named (its requests' session id).
    pub session_id: Option<String>,
    pub first: Option<String>,
    pub last: Option<String>,
}

/// A recorded answer that a client's retry of the same request superseded:
/// it stays in the record, out of the history views are derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxySuperseded {
    /// The answer's row (`task_message.seq`).
    pub seq: u64,
    /// The forwarded request it answered.
    pub attempt: u64,
    /// The retry that superseded it.
    pub by_attempt: u64,
}

const CONVERSATION_COLUMNS: &str =
    "task_id, api, identity, lineage, session_id, head_rows, parent_id, reason";

fn conversation(r: &rusqlite::Row<'_>) -> rusqlite::Result<ProxyConversation> {
    Ok(ProxyConversation {
        task_id: r.get(0)?,
        api: r.get(1)?,
        identity: r.get(2)?,
        lineage: r.get(3)?,
        session_id: r.get(4)?,
        head_rows: r.get::<_, i64>(5)? as u64,
        parent_id: r.get(6)?,
        reason: r.get(7)?,
    })
}

impl Tx<'_> {
    pub fn put_proxy_conversation(&self, c: &ProxyConversation) -> Result<()> {
        self.tx.execute(
            &format!("INSERT INTO proxy_conversation ({CONVERSATION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
            params![
                c.task_id,
                c.api,
                c.identity,
                c.lineage,
                c.session_id,
                c.head_rows as i64,
                c.parent_id,
                c.reason
            ],
        )?;
        Ok(())
    }

    /// Record a forwarded request, stamped with the time it was recorded:
    /// when the proxy received it (it records a call before forwarding it).
    pub fn put_proxy_call(&self, c: &ProxyCall) -> Result<()> {
        self.tx
            .prepare_cached(&format!(
                "INSERT INTO proxy_call (task_id, attempt, call, rows, profile, view_hash, report, received_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {NOW})"
            ))?
            .execute(params![
                c.task_id,
                c.attempt as i64,
                c.call,
                c.rows as i64,
                c.profile,
                c.view_hash,
                c.report.to_string()
            ])?;
        Ok(())
    }

    pub fn put_proxy_superseded(&self, task: &str, s: &ProxySuperseded) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO proxy_superseded (task_id, seq, attempt, by_attempt) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                task,
                s.seq as i64,
                s.attempt as i64,
                s.by_attempt as i64
            ])?;
        Ok(())
    }

    /// Record how a forwarded request ended, stamped with the time it did.
    pub fn put_proxy_response(&self, r: &ProxyResponse) -> Result<()> {
        self.tx
            .prepare_cached(&format!(
                "INSERT INTO proxy_response (task_id, attempt, status, outcome, answered_at) VALUES (?1, ?2, ?3, ?4, {NOW})"
            ))?
            .execute(params![r.task_id, r.attempt as i64, r.status, r.outcome])?;
        Ok(())
    }
}

impl Reader<'_> {
    /// The conversations of one identity, oldest first.
    pub fn proxy_conversations(&self, identity: &str) -> Result<Vec<ProxyConversation>> {
        self.conversations_where("identity", identity)
    }

    /// The conversations of one lineage, oldest first.
    pub fn proxy_lineage(&self, lineage: &str) -> Result<Vec<ProxyConversation>> {
        self.conversations_where("lineage", lineage)
    }

    fn conversations_where(&self, column: &str, value: &str) -> Result<Vec<ProxyConversation>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM proxy_conversation WHERE {column} = ?1 ORDER BY rowid"
        ))?;
        let rows = stmt.query_map([value], conversation)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The conversations of one client session, oldest first.
    pub fn proxy_session(&self, session: &str) -> Result<Vec<ProxyConversation>> {
        self.conversations_where("session_id", session)
    }

    /// The conversation recorded by `task`, if the proxy recorded it.
    pub fn proxy_conversation(&self, task: &str) -> Result<Option<ProxyConversation>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {CONVERSATION_COLUMNS} FROM proxy_conversation WHERE task_id = ?1"
                ),
                [task],
                conversation,
            )
            .optional()?)
    }

    /// Every live task, by id: its session and when it was first and last
    /// active (a call received, an answer ended).
    pub fn proxy_activity(&self) -> Result<Vec<ProxyActivity>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.task_id, c.session_id, min(t.at), max(t.at) FROM proxy_conversation c
             LEFT JOIN (SELECT task_id, received_at AS at FROM proxy_call
                        UNION ALL SELECT task_id, answered_at FROM proxy_response) t
               ON t.task_id = c.task_id
             GROUP BY c.task_id ORDER BY c.task_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ProxyActivity {
                task_id: r.get(0)?,
                session_id: r.get(1)?,
                first: r.get(2)?,
                last: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every forwarded request of `task`, in the order forwarded.
    pub fn proxy_calls(&self, task: &str) -> Result<Vec<ProxyCall>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT attempt, call, rows, profile, view_hash, report FROM proxy_call
             WHERE task_id = ?1 ORDER BY attempt",
        )?;
        let rows = stmt.query_map([task], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (attempt, call, n, profile, view_hash, report) = row?;
            let report = serde_json::from_str(&report)
                .map_err(|e| StoreError::Corrupt(format!("proxy call {attempt} of {task}: {e}")))?;
            out.push(ProxyCall {
                task_id: task.to_string(),
                attempt: attempt as u64,
                call,
                rows: n as u64,
                profile,
                view_hash,
                report,
            });
        }
        Ok(out)
    }

    /// The last attempt number forwarded for `task` (0 before any).
    pub fn proxy_last_attempt(&self, task: &str) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT coalesce(max(attempt), 0) FROM proxy_call WHERE task_id = ?1",
            [task],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// The answers of `task` a retry superseded, by row.
    pub fn proxy_superseded(&self, task: &str) -> Result<Vec<ProxySuperseded>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, attempt, by_attempt FROM proxy_superseded WHERE task_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([task], |r| {
            Ok(ProxySuperseded {
                seq: r.get::<_, i64>(0)? as u64,
                attempt: r.get::<_, i64>(1)? as u64,
                by_attempt: r.get::<_, i64>(2)? as u64,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// What a live task's recorded usage measured: for each request the
    /// proxy forwarded after attempt `after`, in order, its attempt, its call
    /// and the estimate of the view it forwarded.
    pub fn proxy_measured_views(&self, task: &str, after: u64) -> Result<Vec<(u64, u32, u64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT attempt, call, json_extract(report, '$.estimated_messages') FROM proxy_call
             WHERE task_id = ?1 AND attempt > ?2 ORDER BY attempt",
        )?;
        let rows = stmt.query_map(params![task, after as i64], |r| {
            Ok((
                r.get::<_, i64>(0)? as u64,
                r.get::<_, u32>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (attempt, call, estimate) = row?;
            if let Some(e) = estimate {
                out.push((attempt, call, e.max(0) as u64));
            }
        }
        Ok(out)
    }

    /// Whether `task` records a live conversation (the proxy wrote it).
    pub fn is_proxy_task(&self, task: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM proxy_conversation WHERE task_id = ?1",
                [task],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// How each forwarded request of `task` ended, in the order forwarded.
    pub fn proxy_responses(&self, task: &str) -> Result<Vec<ProxyResponse>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT attempt, status, outcome FROM proxy_response WHERE task_id = ?1 ORDER BY attempt",
        )?;
        let rows = stmt.query_map([task], |r| {
            Ok(ProxyResponse {
                task_id: task.to_string(),
                attempt: r.get::<_, i64>(0)? as u64,
                status: r.get(1)?,
                outcome: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn proxy_rows_read_back_and_cannot_be_rewritten() {
        let mut s = Store::open_memory().unwrap();
        let c = ProxyConversation {
            task_id: "live-1".into(),
            api: "messages".into(),
            identity: "aa".into(),
            lineage: "bb".into(),
            session_id: Some("s".into()),
            head_rows: 1,
            parent_id: None,
            reason: None,
        };
        let call = ProxyCall {
            task_id: "live-1".into(),
            attempt: 1,
            call: 1,
            rows: 3,
            profile: "p".into(),
            view_hash: "h".into(),
            report: serde_json::json!({"tokens_after": 5}),
        };
        s.transaction(|tx| {
            tx.put_proxy_conversation(&c)?;
            tx.put_proxy_call(&call)?;
            tx.put_proxy_response(&ProxyResponse {
                task_id: "live-1".into(),
                attempt: 1,
                status: Some(200),
                outcome: "recorded".into(),
            })
        })
        .unwrap();
        let r = s.reader();
        assert_eq!(r.proxy_conversations("aa").unwrap(), vec![c.clone()]);
        assert_eq!(r.proxy_lineage("bb").unwrap(), vec![c.clone()]);
        assert_eq!(r.proxy_conversation("live-1").unwrap(), Some(c));
        assert_eq!(r.proxy_calls("live-1").unwrap(), vec![call]);
        assert_eq!(r.proxy_last_attempt("live-1").unwrap(), 1);
        assert_eq!(r.proxy_responses("live-1").unwrap()[0].status, Some(200));
        // Both were stamped with the time they were written.
        let a = &r.proxy_activity().unwrap()[0];
        assert_eq!(
            (a.task_id.as_str(), a.session_id.as_deref()),
            ("live-1", Some("s"))
        );
        let (first, last) = (a.first.clone().unwrap(), a.last.clone().unwrap());
        assert!(first <= last, "{first} {last}");
        assert_eq!(
            (first.len(), &first[10..11], &first[23..]),
            (24, "T", "Z"),
            "{first}"
        );
        for sql in [
            "UPDATE proxy_call SET view_hash = 'x'",
            "DELETE FROM proxy_conversation",
            "DELETE FROM proxy_response",
        ] {
            let err = s
                .transaction(|tx| tx.tx.execute(sql, []).map_err(StoreError::from))
                .unwrap_err();
            assert!(err.to_string().contains("append-only"), "{sql}: {err}");
        }
    }
}
