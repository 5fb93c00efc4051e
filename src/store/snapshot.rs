//! `task_compaction_snapshot`: the content-addressed store of reduced forms,
//! summaries and the calibration anchor, upserted by key within a profile.
//! A profile (see migration 0005) keeps the state of different budgets,
//! summarizers and tool rules apart: a run reads only its own profile.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::{Reader, Result, StoreError, Tx};

/// What `reset` forgot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Forgotten {
    pub entries: u64,
    pub progress: u64,
}

impl Tx<'_> {
    /// Insert or overwrite the entry under `key` in `profile`.
    pub fn put_entry(&self, task_id: &str, profile: &str, key: &str, entry: &Value) -> Result<()> {
        let text = serde_json::to_string(entry).expect("JSON values serialise");
        self.tx
            .prepare_cached(
                "INSERT INTO task_compaction_snapshot (task_id, profile, key, entry) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(task_id, profile, key) DO UPDATE SET entry = excluded.entry",
            )?
            .execute(params![task_id, profile, key, text])?;
        self.index_summary(task_id, key, entry)
    }

    /// Remember which settings `profile` stands for (first write wins: the id
    /// is a hash of the settings).
    pub fn put_profile(&self, profile: &str, settings: &Value) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT OR IGNORE INTO compaction_profile (profile, settings) VALUES (?1, ?2)",
            )?
            .execute(params![profile, settings.to_string()])?;
        Ok(())
    }

    /// Forget a task's compaction state: every profile's, or one profile's.
    /// The raw record and the import-time tool forms are never touched.
    pub fn forget_compaction(&self, task_id: &str, profile: Option<&str>) -> Result<Forgotten> {
        let (entries, progress) = match profile {
            None => (
                self.tx.execute(
                    "DELETE FROM task_compaction_snapshot WHERE task_id = ?1",
                    [task_id],
                )?,
                self.tx
                    .execute("DELETE FROM replay_progress WHERE task_id = ?1", [task_id])?,
            ),
            Some(p) => (
                self.tx.execute(
                    "DELETE FROM task_compaction_snapshot WHERE task_id = ?1 AND profile = ?2",
                    params![task_id, p],
                )?,
                self.tx.execute(
                    "DELETE FROM replay_progress WHERE task_id = ?1 AND profile = ?2",
                    params![task_id, p],
                )?,
            ),
        };
        // The index holds the summary lines still stored, and only those.
        self.reindex_summaries(task_id)?;
        Ok(Forgotten {
            entries: entries as u64,
            progress: progress as u64,
        })
    }
}

/// One profile holding state for a task.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileState {
    pub profile: String,
    /// The settings it stands for (None for 'legacy' state).
    pub settings: Option<Value>,
    pub entries: u64,
}

/// The columns of `task_compaction_snapshot` an entry is read from, in one place.
const COLUMNS: &str = "profile, key, entry";

/// One row of `task_compaction_snapshot`, decoded by column name.
struct SnapshotRow {
    profile: String,
    key: String,
    entry: String,
}

impl SnapshotRow {
    fn decode(r: &rusqlite::Row<'_>) -> rusqlite::Result<SnapshotRow> {
        Ok(SnapshotRow {
            profile: r.get("profile")?,
            key: r.get("key")?,
            entry: r.get("entry")?,
        })
    }

    /// The entry's JSON, or a corrupt-store error naming it.
    fn value(&self, task_id: &str) -> Result<Value> {
        serde_json::from_str(&self.entry).map_err(|e| {
            StoreError::Corrupt(format!(
                "snapshot entry {} of task {task_id}: {e}",
                self.key
            ))
        })
    }
}

impl Reader<'_> {
    /// How many entries the task's compaction state holds, every profile's.
    pub fn snapshot_entry_count(&self, task_id: &str) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT count(*) FROM task_compaction_snapshot WHERE task_id = ?1",
            [task_id],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    pub fn entry(&self, task_id: &str, profile: &str, key: &str) -> Result<Option<Value>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM task_compaction_snapshot WHERE task_id = ?1 AND profile = ?2 AND key = ?3"
            ))?
            .query_row(params![task_id, profile, key], SnapshotRow::decode)
            .optional()?
            .map(|r| r.value(task_id))
            .transpose()
    }

    /// Every entry of a task in one profile, ordered by key.
    pub fn entries(&self, task_id: &str, profile: &str) -> Result<BTreeMap<String, Value>> {
        let mut out = BTreeMap::new();
        self.each_entry(task_id, profile, |key, v| {
            out.insert(key, v);
        })?;
        Ok(out)
    }

    /// [`Reader::entries`] handed to `f` one at a time, in key order, so a
    /// caller that keeps less than every entry whole never holds them all.
    pub fn each_entry(
        &self,
        task_id: &str,
        profile: &str,
        mut f: impl FnMut(String, Value),
    ) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM task_compaction_snapshot WHERE task_id = ?1 AND profile = ?2 ORDER BY key"
        ))?;
        for row in stmt.query_map(params![task_id, profile], SnapshotRow::decode)? {
            let row = row?;
            let v = row.value(task_id)?;
            f(row.key, v);
        }
        Ok(())
    }

    /// Every entry of a task in every profile, ordered by profile then key.
    pub fn all_entries(&self, task_id: &str) -> Result<Vec<(String, String, Value)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM task_compaction_snapshot WHERE task_id = ?1 ORDER BY profile, key"
        ))?;
        let mut out = Vec::new();
        for row in stmt.query_map([task_id], SnapshotRow::decode)? {
            let row = row?;
            let v = row.value(task_id)?;
            out.push((row.profile, row.key, v));
        }
        Ok(out)
    }

    /// The profiles holding state for a task, ordered by id.
    pub fn profiles(&self, task_id: &str) -> Result<Vec<ProfileState>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.profile AS profile, p.settings AS settings, COUNT(*) AS entries
               FROM task_compaction_snapshot s
               LEFT JOIN compaction_profile p ON p.profile = s.profile
              WHERE s.task_id = ?1 GROUP BY s.profile ORDER BY s.profile",
        )?;
        let rows = stmt.query_map([task_id], |r| {
            Ok((
                r.get::<_, String>("profile")?,
                r.get::<_, Option<String>>("settings")?,
                r.get::<_, i64>("entries")?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (profile, settings, n) = row?;
            let settings = settings
                .map(|s| {
                    serde_json::from_str(&s).map_err(|e| {
                        StoreError::Corrupt(format!("settings of profile {profile}: {e}"))
                    })
                })
                .transpose()?;
            out.push(ProfileState {
                profile,
                settings,
                entries: n as u64,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::store::{Store, StoreError, TaskInfo};

    #[test]
    fn entries_read_back_by_column_and_a_corrupt_one_is_named() {
        let mut store = Store::open_memory().unwrap();
        store
            .transaction(|tx| -> Result<(), StoreError> {
                tx.upsert_task(&TaskInfo {
                    id: "t".into(),
                    format: "anthropic".into(),
                    ..Default::default()
                })?;
                tx.put_profile("p", &json!({"budget": 1}))?;
                tx.put_entry("t", "p", "b", &json!({"kind": "drop"}))?;
                tx.put_entry("t", "p", "a", &json!({"kind": "shrink"}))?;
                tx.put_entry("t", "q", "a", &json!(1))
            })
            .unwrap();
        let r = store.reader();
        assert_eq!(
            r.entry("t", "p", "b").unwrap(),
            Some(json!({"kind": "drop"}))
        );
        assert_eq!(r.entry("t", "p", "c").unwrap(), None);
        let keys: Vec<_> = r.entries("t", "p").unwrap().into_keys().collect();
        assert_eq!(keys, ["a", "b"]);
        let all: Vec<_> = r
            .all_entries("t")
            .unwrap()
            .into_iter()
            .map(|(p, k, _)| format!("{p}/{k}"))
            .collect();
        assert_eq!(all, ["p/a", "p/b", "q/a"]);
        let profiles = r.profiles("t").unwrap();
        assert_eq!(profiles.len(), 2);
        assert_eq!(profiles[0].settings, Some(json!({"budget": 1})));
        assert_eq!((profiles[0].entries, profiles[1].entries), (2, 1));
        assert_eq!(profiles[1].settings, None);

        store
            .transaction(|tx| -> Result<usize, StoreError> {
                Ok(tx.tx.execute(
                    "UPDATE task_compaction_snapshot SET entry = '{not json' WHERE key = 'b'",
                    [],
                )?)
            })
            .unwrap();
        let err = store.reader().entries("t", "p").unwrap_err();
        assert!(
            matches!(&err, StoreError::Corrupt(m) if m.starts_with("snapshot entry b of task t:")),
            "{err:?}"
        );
    }
}
