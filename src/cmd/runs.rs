//! `compactor runs`: saved replay runs.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use serde_json::json;

use super::Ui;
use super::words::plural;
use crate::cmd::exit::Outcome;
use crate::store::Store;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  compactor runs\n  compactor runs --json")]
pub struct RunsArgs {
    /// Print JSON Lines: one object a line, one line per saved run.
    #[arg(long)]
    pub json: bool,
}

pub fn run(store: &Store, ui: &mut Ui, args: &RunsArgs) -> Result<Outcome> {
    let runs = store.reader().runs()?;
    if args.json {
        // JSON Lines: one run a line.
        for r in &runs {
            ui.json_kind(
                "run",
                &json!({"name": r.name, "task": r.task_id, "calls": r.steps,
                       "final_view_hash": r.final_view_hash, "settings": r.settings, "totals": r.totals}),
            )?;
        }
        return Ok(Outcome::Ok);
    }
    if runs.is_empty() {
        ui.note("no saved runs: `compactor replay --save NAME` saves one");
        return Ok(Outcome::Ok);
    }
    for r in &runs {
        let b = &r.settings["budget"];
        writeln!(
            ui.out,
            "{}  task {} · {} · window {} reserve {} trigger {} stop {} protect {} · {} · final view {}",
            super::visible::visible_line(&r.name),
            super::visible::visible_line(&r.task_id),
            plural(r.steps, "call"),
            b["window"],
            b["output_reserved"],
            b["trigger_ratio"].as_str().unwrap_or("?"),
            b["stop_ratio"].as_str().unwrap_or("?"),
            b["protect_recent_steps"],
            r.settings["summarizer"].as_str().unwrap_or("?"),
            r.final_view_hash
                .as_deref()
                .map_or("-", |h| &h[..16.min(h.len())])
        )?;
    }
    Ok(Outcome::Ok)
}
