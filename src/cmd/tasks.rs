//! `compactor tasks`

use std::io::Write;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::Ui;
use crate::cmd::exit::Outcome;
use crate::model::Usage;
use crate::store::Store;

#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Print a JSON array.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct TaskRow {
    id: String,
    format: String,
    parent: Option<String>,
    title: Option<String>,
    model: Option<String>,
    /// Conversation messages (meta rows excluded).
    messages: u64,
    /// Every stored row, meta rows included: what `import` reports as added.
    rows: u64,
    turns: u64,
    /// Model calls recorded.
    calls: u64,
    /// The same as `calls` (the name before issue 9; kept for other tools).
    steps: u64,
    tool_calls: u64,
    interrupted_tool_calls: u64,
    orphan_tool_results: u64,
    usage: Usage,
    first_timestamp: Option<String>,
    last_timestamp: Option<String>,
}

pub fn run(store: &Store, ui: &mut Ui, args: &TasksArgs) -> Result<Outcome> {
    let reader = store.reader();
    let mut rows = Vec::new();
    for t in reader.tasks()? {
        let st = reader.task_stats(&t.id)?;
        rows.push(TaskRow {
            id: t.id,
            format: t.format,
            parent: t.parent_id,
            title: t.title,
            model: t.model,
            messages: st.messages,
            rows: st.rows,
            turns: st.turns,
            calls: st.steps,
            steps: st.steps,
            tool_calls: st.tool_calls,
            interrupted_tool_calls: st.interrupted_tool_calls,
            orphan_tool_results: st.orphan_tool_results,
            usage: st.usage,
            first_timestamp: st.first_timestamp,
            last_timestamp: st.last_timestamp,
        });
    }
    if args.json {
        // JSON Lines: one task a line, then the totals record.
        for r in &rows {
            ui.json_kind("task", r)?;
        }
        ui.json_kind(
            "tasks_total",
            &serde_json::json!({
                "tasks": rows.len(),
                "messages": rows.iter().map(|r| r.messages).sum::<u64>(),
                "calls": rows.iter().map(|r| r.calls).sum::<u64>(),
            }),
        )?;
        return Ok(Outcome::Ok);
    }
    if rows.is_empty() {
        ui.note("no tasks yet: import a transcript with `compactor import FILE`");
        return Ok(Outcome::Ok);
    }
    let width = rows
        .iter()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let header = format!(
        "{:<width$}  {:<11}  {:>5}  {:>5}  {:>5}  {:>5}  {:>10}  {:>9}  {:>11}  {:>11}  {:<24}  {:<24}",
        "TASK",
        "FORMAT",
        "MSGS",
        "TURNS",
        "STEPS",
        "TOOLS",
        "INPUT",
        "OUTPUT",
        "CACHE_READ",
        "CACHE_WRITE",
        "FIRST",
        "LAST"
    );
    writeln!(
        ui.out,
        "{}",
        crate::cmd::style::paint(ui.color, crate::cmd::style::BOLD, header.trim_end())
    )?;
    for r in &rows {
        // The last column is padded too: trim so lines carry no trailing blanks.
        let line = format!(
            "{:<width$}  {:<11}  {:>5}  {:>5}  {:>5}  {:>5}  {:>10}  {:>9}  {:>11}  {:>11}  {:<24}  {:<24}",
            r.id,
            r.format,
            r.messages,
            r.turns,
            r.steps,
            r.tool_calls,
            r.usage.input_tokens,
            r.usage.output_tokens,
            r.usage.cache_read_input_tokens,
            r.usage.cache_creation_input_tokens,
            r.first_timestamp.as_deref().unwrap_or("-"),
            r.last_timestamp.as_deref().unwrap_or("-"),
        );
        writeln!(ui.out, "{}", line.trim_end())?;
    }
    Ok(Outcome::Ok)
}
