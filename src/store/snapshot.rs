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
        Ok(())
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

impl Reader<'_> {
    pub fn entry(&self, task_id: &str, profile: &str, key: &str) -> Result<Option<Value>> {
        let text: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT entry FROM task_compaction_snapshot WHERE task_id = ?1 AND profile = ?2 AND key = ?3",
            )?
            .query_row(params![task_id, profile, key], |r| r.get(0))
            .optional()?;
        text.map(|t| parse(task_id, key, &t)).transpose()
    }

    /// Every entry of a task in one profile, ordered by key.
    pub fn entries(&self, task_id: &str, profile: &str) -> Result<BTreeMap<String, Value>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, entry FROM task_compaction_snapshot WHERE task_id = ?1 AND profile = ?2 ORDER BY key",
        )?;
        let rows = stmt.query_map(params![task_id, profile], |r| {
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

    /// Every entry of a task in every profile, ordered by profile then key.
    pub fn all_entries(&self, task_id: &str) -> Result<Vec<(String, String, Value)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT profile, key, entry FROM task_compaction_snapshot WHERE task_id = ?1 ORDER BY profile, key",
        )?;
        let rows = stmt.query_map([task_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (p, k, t) = row?;
            let v = parse(task_id, &k, &t)?;
            out.push((p, k, v));
        }
        Ok(out)
    }

    /// The profiles holding state for a task, ordered by id.
    pub fn profiles(&self, task_id: &str) -> Result<Vec<ProfileState>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.profile, p.settings, COUNT(*) FROM task_compaction_snapshot s
               LEFT JOIN compaction_profile p ON p.profile = s.profile
              WHERE s.task_id = ?1 GROUP BY s.profile ORDER BY s.profile",
        )?;
        let rows = stmt.query_map([task_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, i64>(2)?,
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

fn parse(task_id: &str, key: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("snapshot entry {key} of task {task_id}: {e}")))
}
