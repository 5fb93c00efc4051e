//! Saved replay runs (`replay --save NAME`): reports, view hashes and views
//! stored as deltas, under their task and name (a name is its task's: two
//! tasks may each have a run of the same name). Bookkeeping for people and
//! `diff`; the engine never reads it.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::{Reader, Result, StoreError, Tx};
use crate::view::{View, ViewMessage};

#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    pub name: String,
    pub task_id: String,
    pub settings: Value,
    pub steps: u64,
    pub final_view_hash: Option<String>,
    pub totals: Value,
}

/// One saved call.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStep {
    pub step: u32,
    pub turn: u32,
    pub report: Value,
    pub view: View,
}

impl Tx<'_> {
    /// Replace its task's run of its name (its steps included).
    pub fn save_run(&self, info: &RunInfo, steps: &[RunStep]) -> Result<()> {
        self.tx.execute(
            "DELETE FROM run_step WHERE task_id = ?1 AND run = ?2",
            [&info.task_id, &info.name],
        )?;
        self.tx.execute(
            "INSERT OR REPLACE INTO run (name, task_id, settings, steps, final_view_hash, totals)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                info.name,
                info.task_id,
                info.settings.to_string(),
                info.steps as i64,
                info.final_view_hash,
                info.totals.to_string()
            ],
        )?;
        let mut stmt = self.tx.prepare_cached(
            "INSERT INTO run_step (task_id, run, step, turn, report, view_hash, prefix_messages, suffix)
             VALUES (?8, ?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut prev: &[ViewMessage] = &[];
        for s in steps {
            let shared = s.view.shared_prefix(prev);
            let suffix =
                serde_json::to_string(&s.view.messages[shared..]).expect("views serialise");
            stmt.execute(params![
                info.name,
                s.step,
                s.turn,
                s.report.to_string(),
                s.view.hash(),
                shared as i64,
                suffix,
                info.task_id
            ])?;
            prev = &s.view.messages;
        }
        Ok(())
    }
}

impl Tx<'_> {
    /// Record that an in-place replay of `task` under `profile` committed `call`.
    pub fn set_replay_progress(
        &self,
        task: &str,
        profile: &str,
        settings: &Value,
        call: u32,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO replay_progress (task_id, profile, settings, last_call) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(task_id, profile) DO UPDATE SET settings = excluded.settings, last_call = excluded.last_call",
            )?
            .execute(params![task, profile, settings.to_string(), call])?;
        Ok(())
    }
}

impl Reader<'_> {
    /// The last call an in-place replay of `task` under `profile` committed,
    /// and its settings.
    pub fn replay_progress(&self, task: &str, profile: &str) -> Result<Option<(u32, Value)>> {
        let row: Option<(u32, String)> = self
            .conn
            .query_row(
                "SELECT last_call, settings FROM replay_progress WHERE task_id = ?1 AND profile = ?2",
                params![task, profile],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        decode_progress(task, row)
    }

    /// The most advanced in-place replay of `task` under any profile.
    pub fn any_replay_progress(&self, task: &str) -> Result<Option<(u32, Value)>> {
        let row: Option<(u32, String)> = self
            .conn
            .query_row(
                "SELECT last_call, settings FROM replay_progress WHERE task_id = ?1
                 ORDER BY last_call DESC, profile LIMIT 1",
                [task],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        decode_progress(task, row)
    }

    /// Every saved run, by name, then task.
    pub fn runs(&self) -> Result<Vec<RunInfo>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM run ORDER BY name, task_id"
        ))?;
        let rows = stmt.query_map([], run_from_row)?;
        rows.map(|r| r?.map_err(StoreError::Corrupt)).collect()
    }

    /// The runs named `name`, one per task that saved one, by task.
    pub fn runs_named(&self, name: &str) -> Result<Vec<RunInfo>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM run WHERE name = ?1 ORDER BY task_id"
        ))?;
        let rows = stmt.query_map([name], run_from_row)?;
        rows.map(|r| r?.map_err(StoreError::Corrupt)).collect()
    }

    /// `task`'s run named `name`.
    pub fn run(&self, task: &str, name: &str) -> Result<Option<RunInfo>> {
        let row = self
            .conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM run WHERE task_id = ?1 AND name = ?2"),
                [task, name],
                run_from_row,
            )
            .optional()?;
        row.transpose().map_err(StoreError::Corrupt)
    }

    /// Every step of `task`'s run `name` with its view rebuilt from the deltas.
    pub fn run_steps(&self, task: &str, name: &str) -> Result<Vec<RunStep>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {STEP_COLUMNS} FROM run_step WHERE task_id = ?1 AND run = ?2 ORDER BY step"
        ))?;
        let rows = stmt.query_map([task, name], |r| {
            Ok((
                r.get::<_, u32>("step")?,
                r.get::<_, u32>("turn")?,
                r.get::<_, String>("report")?,
                r.get::<_, String>("view_hash")?,
                r.get::<_, i64>("prefix_messages")?,
                r.get::<_, String>("suffix")?,
            ))
        })?;
        let mut out: Vec<RunStep> = Vec::new();
        for row in rows {
            let (step, turn, report, hash, prefix, suffix) = row?;
            let corrupt =
                |what: String| StoreError::Corrupt(format!("run {name} step {step}: {what}"));
            let prev = out.last().map_or(&[][..], |p| &p.view.messages[..]);
            let tail: Vec<ViewMessage> =
                serde_json::from_str(&suffix).map_err(|e| corrupt(format!("view: {e}")))?;
            let view = View::from_delta(prev, prefix as usize, tail)
                .ok_or_else(|| corrupt("the shared prefix exceeds the previous view".into()))?;
            if view.hash() != hash {
                return Err(corrupt("the rebuilt view does not match its hash".into()));
            }
            out.push(RunStep {
                step,
                turn,
                report: serde_json::from_str(&report)
                    .map_err(|e| corrupt(format!("report: {e}")))?,
                view,
            });
        }
        Ok(out)
    }
}

type RunRow = std::result::Result<RunInfo, String>;

/// The columns a run and a run step are read from, in one place each.
const RUN_COLUMNS: &str = "name, task_id, settings, steps, final_view_hash, totals";
const STEP_COLUMNS: &str = "step, turn, report, view_hash, prefix_messages, suffix";

fn run_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let name: String = r.get("name")?;
    let settings: String = r.get("settings")?;
    let totals: String = r.get("totals")?;
    let parse = |what: &str, s: &str| -> std::result::Result<Value, String> {
        serde_json::from_str(s).map_err(|e| format!("run {name} {what}: {e}"))
    };
    Ok((|| {
        Ok(RunInfo {
            name: name.clone(),
            task_id: r.get("task_id").map_err(|e| e.to_string())?,
            settings: parse("settings", &settings)?,
            steps: r.get::<_, i64>("steps").map_err(|e| e.to_string())? as u64,
            final_view_hash: r.get("final_view_hash").map_err(|e| e.to_string())?,
            totals: parse("totals", &totals)?,
        })
    })())
}

/// A `replay_progress` row's settings, decoded.
fn decode_progress(task: &str, row: Option<(u32, String)>) -> Result<Option<(u32, Value)>> {
    row.map(|(k, s)| {
        serde_json::from_str(&s)
            .map(|v| (k, v))
            .map_err(|e| StoreError::Corrupt(format!("replay progress of {task}: {e}")))
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Block;
    use crate::store::Store;
    use crate::view::ViewRole;
    use serde_json::json;

    fn msg(role: ViewRole, t: &str) -> ViewMessage {
        ViewMessage {
            role,
            content: vec![Block::Text { text: t.into() }],
        }
    }

    #[test]
    fn runs_round_trip_their_views_through_deltas() {
        let mut store = Store::open_memory().unwrap();
        let v1 = View {
            messages: vec![msg(ViewRole::User, "a")],
        };
        let v2 = View {
            messages: vec![msg(ViewRole::User, "a"), msg(ViewRole::Assistant, "b")],
        };
        let v3 = View {
            messages: vec![msg(ViewRole::User, "summary")],
        };
        let steps: Vec<RunStep> = [v1, v2, v3]
            .into_iter()
            .enumerate()
            .map(|(i, view)| RunStep {
                step: i as u32 + 1,
                turn: 1,
                report: json!({"step": i + 1}),
                view,
            })
            .collect();
        let info = RunInfo {
            name: "r".into(),
            task_id: "t".into(),
            settings: json!({}),
            steps: 3,
            final_view_hash: Some(steps[2].view.hash()),
            totals: json!({}),
        };
        store.transaction(|tx| tx.save_run(&info, &steps)).unwrap();
        let back = store.reader().run_steps("t", "r").unwrap();
        assert_eq!(back, steps);
        assert_eq!(store.reader().runs().unwrap(), vec![info.clone()]);
        assert!(store.reader().run("t", "nope").unwrap().is_none());
        // The same name under another task is another run; each replaces
        // only its own.
        let other = RunInfo {
            task_id: "u".into(),
            steps: 1,
            final_view_hash: Some(steps[0].view.hash()),
            ..info.clone()
        };
        store
            .transaction(|tx| tx.save_run(&other, &steps[..1]))
            .unwrap();
        assert_eq!(store.reader().run_steps("t", "r").unwrap(), steps);
        assert_eq!(store.reader().run_steps("u", "r").unwrap(), steps[..1]);
        assert_eq!(
            store.reader().runs_named("r").unwrap(),
            vec![info, other.clone()]
        );
        assert_eq!(store.reader().run("u", "r").unwrap(), Some(other));
    }

    #[test]
    fn runs_saved_before_names_were_per_task_keep_their_task() {
        // A store at version 15, with a run and its steps.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            for sql in &super::super::MIGRATIONS[..15] {
                conn.execute_batch(sql).unwrap();
            }
            conn.execute_batch(
                "PRAGMA user_version = 15;
                 INSERT INTO run VALUES ('base', 'task-a', '{}', 1, 'h', '{}');
                 INSERT INTO run_step VALUES ('base', 1, 1, '{}', 'h', 0, '[]');",
            )
            .unwrap();
        }
        let store = Store::open(&crate::store::DbLocation::File(path)).unwrap();
        let runs = store.reader().runs().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(
            (runs[0].name.as_str(), runs[0].task_id.as_str()),
            ("base", "task-a")
        );
        let conn = &store.conn;
        let steps: Vec<(String, String, u32)> = conn
            .prepare("SELECT task_id, run, step FROM run_step")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(steps, vec![("task-a".into(), "base".into(), 1)]);
    }
}
