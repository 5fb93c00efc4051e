//! `compactor reset`: forget a task's compaction state (every profile's, or
//! one profile's). The raw record and the import-time tool forms stay.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use serde_json::json;

use super::Ui;
use super::errors::hinted;
use super::target::find_task;
use super::words::plural;
use crate::cmd::exit::Outcome;
use crate::store::{Forgotten, Store, StoreError};

#[derive(Debug, Args)]
#[command(
    group = clap::ArgGroup::new("which").args(["task", "task_flag"]).required(true),
    after_help = "Examples:\n  compactor reset 7f3c                       forget every profile's state of a task\n  compactor reset --task 7f3c --profile 9a1b  one profile's only"
)]
pub struct ResetArgs {
    /// The task whose compaction state to forget: its id or a unique prefix of it
    /// (`compactor tasks` lists them). Named here or with --task; never `latest` by default.
    #[arg(value_name = "TASK")]
    pub task: Option<String>,

    /// The task, as every command takes it.
    #[arg(long = "task", value_name = "TASK")]
    pub task_flag: Option<String>,

    /// Forget only this profile's state: its id or a unique prefix, as
    /// `compactor show --task TASK compacted` lists them (`legacy` for state
    /// written before profiles existed).
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,

    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &ResetArgs) -> Result<Outcome> {
    let name = args
        .task
        .as_deref()
        .or(args.task_flag.as_deref())
        .ok_or_else(|| anyhow::anyhow!("name the task whose compaction state to forget"))?;
    let task = &find_task(store, name, None)?;
    let profile = match &args.profile {
        None => None,
        Some(p) => {
            let known: Vec<String> = store
                .reader()
                .profiles(task)?
                .into_iter()
                .map(|s| s.profile)
                .filter(|id| id.starts_with(p.as_str()))
                .collect();
            match known.as_slice() {
                [one] => Some(one.clone()),
                // Nothing stored under it: still forget its progress, if any.
                [] => Some(p.clone()),
                _ => {
                    return Err(hinted(
                        format!(
                            "profile {p:?} matches {} profiles of task {task}",
                            known.len()
                        ),
                        "give more of the id",
                    ));
                }
            }
        }
    };
    let forgotten: Forgotten = store.transaction(|tx| -> Result<Forgotten, StoreError> {
        tx.forget_compaction(task, profile.as_deref())
    })?;
    if args.json {
        ui.json_kind(
            "reset",
            &json!({
                "task": task,
                "profile": profile,
                "entries_forgotten": forgotten.entries,
                "progress_forgotten": forgotten.progress,
            }),
        )?;
    } else {
        let scope = profile.map_or("every profile".to_string(), |p| format!("profile {p}"));
        writeln!(
            ui.out,
            "task {task}: forgot {} and {} of {scope}; the raw record is untouched",
            plural(forgotten.entries, "compaction entry"),
            plural(forgotten.progress, "replay progress record")
        )?;
    }
    Ok(Outcome::Ok)
}
