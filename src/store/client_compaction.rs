//! `client_compaction`: what the hooks saw of a client's own compaction. The
//! post-compact and session-start hooks each fill their half of one row (the
//! clients run them in either order), keyed by the task and the call the
//! compaction followed. A later compaction after the same call replaces it.

use rusqlite::params;

use super::{Reader, Result, Tx};

/// One compaction of a task by its client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCompaction {
    pub task_id: String,
    /// Model calls recorded before it: the first view after it is call `after_call + 1`.
    pub after_call: u32,
    /// Rows of the task's record before it.
    pub history_rows: u64,
    pub client: String,
    pub trigger: Option<String>,
    pub client_summary: Option<String>,
    pub task_context: Option<String>,
    pub summarizer: Option<String>,
}

/// Which half of a row a hook writes.
pub enum CompactionHalf<'a> {
    /// The client's summary (post-compact).
    ClientSummary {
        trigger: Option<&'a str>,
        summary: &'a str,
    },
    /// compactor's Task Context (session-start).
    TaskContext { text: &'a str, summarizer: &'a str },
}

impl Tx<'_> {
    /// Record one half of the compaction of `task` after call `after_call`.
    pub fn record_client_compaction(
        &self,
        task: &str,
        after_call: u32,
        history_rows: u64,
        client: &str,
        half: &CompactionHalf<'_>,
    ) -> Result<()> {
        // Each half fills its two columns and leaves the other half's as
        // they are (NULL on a new row).
        let (values, set, first, second) = match *half {
            CompactionHalf::ClientSummary { trigger, summary } => (
                "?5, ?6, NULL, NULL",
                "trigger = excluded.trigger, client_summary = excluded.client_summary",
                trigger,
                Some(summary),
            ),
            CompactionHalf::TaskContext { text, summarizer } => (
                "NULL, NULL, ?5, ?6",
                "task_context = excluded.task_context, summarizer = excluded.summarizer",
                Some(text),
                Some(summarizer),
            ),
        };
        self.tx.execute(
            &format!(
                "INSERT INTO client_compaction (task_id, after_call, history_rows, client, trigger, client_summary, task_context, summarizer)
                 VALUES (?1, ?2, ?3, ?4, {values})
                 ON CONFLICT(task_id, after_call) DO UPDATE SET
                   history_rows = excluded.history_rows, client = excluded.client, {set}"
            ),
            params![task, after_call, history_rows as i64, client, first, second],
        )?;
        Ok(())
    }
}

impl Reader<'_> {
    /// The client's compactions of `task`, oldest first.
    pub fn client_compactions(&self, task: &str) -> Result<Vec<ClientCompaction>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT task_id, after_call, history_rows, client, trigger, client_summary, task_context, summarizer
             FROM client_compaction WHERE task_id = ?1 ORDER BY after_call",
        )?;
        let rows = stmt.query_map([task], |r| {
            Ok(ClientCompaction {
                task_id: r.get(0)?,
                after_call: r.get(1)?,
                history_rows: r.get::<_, i64>(2)? as u64,
                client: r.get(3)?,
                trigger: r.get(4)?,
                client_summary: r.get(5)?,
                task_context: r.get(6)?,
                summarizer: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn each_hook_fills_its_half_in_either_order() {
        let mut store = Store::open_memory().unwrap();
        store
            .transaction(|tx| {
                tx.record_client_compaction(
                    "t",
                    3,
                    40,
                    "claude-code",
                    &CompactionHalf::TaskContext {
                        text: "## Task Context",
                        summarizer: "extractive",
                    },
                )?;
                tx.record_client_compaction(
                    "t",
                    3,
                    40,
                    "claude-code",
                    &CompactionHalf::ClientSummary {
                        trigger: Some("manual"),
                        summary: "the client's",
                    },
                )?;
                tx.record_client_compaction(
                    "t",
                    9,
                    80,
                    "claude-code",
                    &CompactionHalf::ClientSummary {
                        trigger: Some("auto"),
                        summary: "later",
                    },
                )
            })
            .unwrap();
        let got = store.reader().client_compactions("t").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].after_call, 3);
        assert_eq!(got[0].task_context.as_deref(), Some("## Task Context"));
        assert_eq!(got[0].client_summary.as_deref(), Some("the client's"));
        assert_eq!(got[0].trigger.as_deref(), Some("manual"));
        assert_eq!(got[1].task_context, None);
        assert!(
            store
                .reader()
                .client_compactions("other")
                .unwrap()
                .is_empty()
        );
    }
}
