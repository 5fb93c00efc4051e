//! `task_tool_compaction`: compacted tool forms minted eagerly at import.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::{Reader, Result, StoreError, Tx};
use crate::engine::toolrules::ToolForm;

impl Tx<'_> {
    /// Store a form unless one is already stored (forms are minted once).
    pub fn put_tool_form(&self, task_id: &str, f: &ToolForm) -> Result<bool> {
        let mut form = Vec::new();
        crate::model::json::write_value(&mut form, &f.form);
        let form = String::from_utf8(form).expect("JSON of strings is UTF-8");
        let n = self
            .tx
            .prepare_cached(
                "INSERT OR IGNORE INTO task_tool_compaction
                   (task_id, tool_call_id, tool_name, rule, form, raw_tokens, form_tokens, pointer)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                task_id,
                f.tool_call_id,
                f.tool_name,
                f.rule,
                form,
                f.raw_tokens as i64,
                f.form_tokens as i64,
                f.pointer
            ])?;
        Ok(n > 0)
    }
}

/// The columns of `task_tool_compaction` a form is read from, in one place.
const COLUMNS: &str = "tool_call_id, tool_name, rule, form, raw_tokens, form_tokens, pointer";

impl Reader<'_> {
    pub fn tool_form(&self, task_id: &str, tool_call_id: &str) -> Result<Option<ToolForm>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM task_tool_compaction WHERE task_id = ?1 AND tool_call_id = ?2"
            ))?
            .query_row(params![task_id, tool_call_id], ToolFormRow::decode)
            .optional()?
            .map(|r| r.into_form(task_id))
            .transpose()
    }

    /// The tool call ids of a task that have a form, handed to `f` one at a
    /// time (no form read).
    pub fn each_tool_form_id(&self, task_id: &str, mut f: impl FnMut(&str)) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT tool_call_id FROM task_tool_compaction WHERE task_id = ?1")?;
        let mut rows = stmt.query([task_id])?;
        while let Some(r) = rows.next()? {
            f(&r.get::<_, String>(0)?);
        }
        Ok(())
    }

    /// Every (task, tool call id) of any task whose form's id starts with
    /// `prefix`, ordered by task then id: where a compacted form's pointer
    /// leads, whichever session it came from.
    pub fn tool_form_ids_starting(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT task_id, tool_call_id FROM task_tool_compaction
              WHERE substr(tool_call_id, 1, length(?1)) = ?1
              ORDER BY task_id, tool_call_id",
        )?;
        let rows = stmt.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every form of a task, by tool call id.
    pub fn tool_forms(&self, task_id: &str) -> Result<HashMap<String, ToolForm>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM task_tool_compaction WHERE task_id = ?1"
        ))?;
        let rows = stmt.query_map([task_id], ToolFormRow::decode)?;
        let mut out = HashMap::new();
        for row in rows {
            let f = row?.into_form(task_id)?;
            out.insert(f.tool_call_id.clone(), f);
        }
        Ok(out)
    }
}

/// One row of `task_tool_compaction`, decoded by column name.
struct ToolFormRow {
    tool_call_id: String,
    tool_name: String,
    rule: String,
    form: String,
    raw_tokens: i64,
    form_tokens: i64,
    pointer: String,
}

impl ToolFormRow {
    fn decode(r: &rusqlite::Row<'_>) -> rusqlite::Result<ToolFormRow> {
        Ok(ToolFormRow {
            tool_call_id: r.get("tool_call_id")?,
            tool_name: r.get("tool_name")?,
            rule: r.get("rule")?,
            form: r.get("form")?,
            raw_tokens: r.get("raw_tokens")?,
            form_tokens: r.get("form_tokens")?,
            pointer: r.get("pointer")?,
        })
    }

    fn into_form(self, task_id: &str) -> Result<ToolForm> {
        let form = serde_json::from_str(&self.form).map_err(|e| {
            StoreError::Corrupt(format!(
                "tool form {} of task {task_id}: {e}",
                self.tool_call_id
            ))
        })?;
        Ok(ToolForm {
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            rule: self.rule,
            form,
            raw_tokens: self.raw_tokens as u64,
            form_tokens: self.form_tokens as u64,
            pointer: self.pointer,
        })
    }
}
