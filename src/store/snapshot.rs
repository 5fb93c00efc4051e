//! `task_compaction_snapshot`: the content-addressed store of reduced forms,
//! summaries and the calibration anchor, upserted by key.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::{Reader, Result, StoreError, Tx};

impl Tx<'_> {
    /// Insert or overwrite the entry under `key`.
    pub fn put_entry(&self, task_id: &str, key: &str, entry: &Value) -> Result<()> {
        let text = serde_json::to_string(entry).expect("JSON values serialise");
        self.tx
            .prepare_cached(
                "INSERT INTO task_compaction_snapshot (task_id, key, entry) VALUES (?1, ?2, ?3)
                 ON CONFLICT(task_id, key) DO UPDATE SET entry = excluded.entry",
            )?
            .execute(params![task_id, key, text])?;
        Ok(())
    }
}

impl Reader<'_> {
    pub fn entry(&self, task_id: &str, key: &str) -> Result<Option<Value>> {
        let text: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT entry FROM task_compaction_snapshot WHERE task_id = ?1 AND key = ?2",
            )?
            .query_row(params![task_id, key], |r| r.get(0))
            .optional()?;
        text.map(|t| parse(task_id, key, &t)).transpose()
    }

    /// Every entry of a task, ordered by key.
    pub fn entries(&self, task_id: &str) -> Result<BTreeMap<String, Value>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, entry FROM task_compaction_snapshot WHERE task_id = ?1 ORDER BY key",
        )?;
        let rows = stmt.query_map([task_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (k, t) = row?;
            let v = parse(task_id, &k, &t)?;
            out.insert(k, v);
        }
        Ok(out)
    }
}

fn parse(task_id: &str, key: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("snapshot entry {key} of task {task_id}: {e}")))
}
