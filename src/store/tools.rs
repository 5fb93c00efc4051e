//! `task_tool_compaction`: compacted tool forms minted eagerly at import.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::{Reader, Result, StoreError, Tx};

pub use crate::engine::toolrules::ToolForm;

impl Tx<'_> {
    /// Store a form unless one is already stored (forms are minted once).
    pub fn put_tool_form(&self, task_id: &str, f: &ToolForm) -> Result<bool> {
        let form = serde_json::to_string(&f.form).expect("JSON values serialise");
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

impl Reader<'_> {
    pub fn tool_form(&self, task_id: &str, tool_call_id: &str) -> Result<Option<ToolForm>> {
        self.conn
            .prepare_cached(
                "SELECT tool_call_id, tool_name, rule, form, raw_tokens, form_tokens, pointer
                 FROM task_tool_compaction WHERE task_id = ?1 AND tool_call_id = ?2",
            )?
            .query_row(params![task_id, tool_call_id], row_tuple)
            .optional()?
            .map(|t| to_form(task_id, t))
            .transpose()
    }

    /// Every form of a task, by tool call id.
    pub fn tool_forms(&self, task_id: &str) -> Result<HashMap<String, ToolForm>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT tool_call_id, tool_name, rule, form, raw_tokens, form_tokens, pointer
             FROM task_tool_compaction WHERE task_id = ?1",
        )?;
        let rows = stmt.query_map([task_id], row_tuple)?;
        let mut out = HashMap::new();
        for row in rows {
            let f = to_form(task_id, row?)?;
            out.insert(f.tool_call_id.clone(), f);
        }
        Ok(out)
    }
}

type Row = (String, String, String, String, i64, i64, String);

fn row_tuple(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
    ))
}

fn to_form(task_id: &str, (id, name, rule, form, raw, small, pointer): Row) -> Result<ToolForm> {
    let form = serde_json::from_str(&form)
        .map_err(|e| StoreError::Corrupt(format!("tool form {id} of task {task_id}: {e}")))?;
    Ok(ToolForm {
        tool_call_id: id,
        tool_name: name,
        rule,
        form,
        raw_tokens: raw as u64,
        form_tokens: small as u64,
        pointer,
    })
}
