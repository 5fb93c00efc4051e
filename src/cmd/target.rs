//! The task a command works on: a transcript FILE (imported first), `--task`
//! or `latest`, resolved and loaded with the budget it runs under.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::Ui;
use super::args::{RunTarget, TaskSource};
use super::defaults::{self, RunBudget};
use super::errors::{Hinted, hinted};
use super::progress::progress;
use super::summarizer::Configured;
use super::words::plural;
use crate::engine::CallOutput;
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::session::cost::Totals;
use crate::session::record::TaskRecordIndex;
use crate::session::replay::StepRow;
use crate::session::run::{Placement, ReplayOptions, Run};
use crate::session::settings::RunSettings;
use crate::store::{Store, TaskInfo};
use crate::transcript::ingest::{FileReport, IngestOptions, ingest_file, source_path};

/// The task a command works on: FILE's main task after importing it, else
/// `--task`, else `latest` (within `--project` when given). An argument
/// that names no file is taken as `--task` takes a name.
pub fn resolve_task(store: &mut Store, ui: &mut Ui, src: &TaskSource) -> Result<String> {
    resolve_source(store, ui, src).map(|(task, _)| task)
}

/// As [`resolve_task`], with the transcript file imported for it (None when
/// a task was named).
fn resolve_source(
    store: &mut Store,
    ui: &mut Ui,
    src: &TaskSource,
) -> Result<(String, Option<PathBuf>)> {
    let Some(file) = &src.file else {
        let name = src.task.as_deref().unwrap_or("latest");
        return Ok((find_task(store, name, src.project.as_deref())?, None));
    };
    if !names_a_path(file) {
        let name = file.to_string_lossy();
        if let Some(task) = &src.task {
            return Err(two_names(&name, task));
        }
        if src.import_as.is_some() {
            bail!("{name}: no such file (--import-as names the task a FILE is imported as)");
        }
        let task = positional_task(store, &name, src.project.as_deref())?;
        return Ok((task, None));
    }
    if let Some(task) = &src.task {
        return Err(two_names(&file.display().to_string(), task));
    }
    if let Some(dir) = &src.project {
        return Err(hinted(
            format!(
                "--project {} picks among the sessions recorded in a directory, but {} already names the task",
                dir.display(),
                file.display()
            ),
            "drop --project (alias --cwd); `compact --write-session` writes the session for another directory with --resume-dir DIR",
        ));
    }
    if let Some(name) = &src.import_as {
        check_import_name(
            store,
            name,
            &[source_path(file).display().to_string()],
            false,
        )?;
    }
    let opts = IngestOptions {
        format: src.input_format,
        task: src.import_as.clone(),
        ..IngestOptions::default()
    };
    let report = import_one(store, ui, file, &opts)?;
    for w in &report.warnings {
        ui.warn(format!(
            "{}:{}: {} (task {})",
            report.path, w.line, w.message, w.task
        ));
    }
    if report.incomplete_lines > 0 {
        ui.note(held_back_note(&report));
    }
    match report.main_task() {
        Some(t) => Ok((t.to_string(), Some(file.clone()))),
        None => bail!("{} holds no conversation to project", file.display()),
    }
}

/// What an import left for later, in words: a last line with no newline
/// that is not whole JSON yet (a session still being written), or
/// OpenCode's messages not final yet. Imported once finished.
pub fn held_back_note(report: &FileReport) -> String {
    if report.format == crate::model::Format::Opencode.as_str() {
        format!(
            "note: {}: {} not final yet (OpenCode is still writing), left for a later import",
            report.path,
            super::words::plural(report.incomplete_lines, "message")
        )
    } else {
        format!(
            "note: {}: its last line has no newline and is not whole JSON yet (a session still being written): left out until it is, and imported then",
            report.path
        )
    }
}

/// Whether a command-line argument names something on disk (a dangling
/// link included: importing it says what is wrong with it).
pub fn names_a_path(arg: &Path) -> bool {
    arg.symlink_metadata().is_ok()
}

/// The task an argument names that is no file: as `--task` takes it, or an
/// error saying it is neither.
pub fn positional_task(store: &Store, name: &str, project_dir: Option<&Path>) -> Result<String> {
    find_task(store, name, project_dir).map_err(|e| match e.downcast_ref::<Hinted>() {
        Some(h) if h.message.starts_with("unknown task") => no_file_or_task(name),
        _ => e,
    })
}

/// An argument that is neither a file nor a task.
fn no_file_or_task(name: &str) -> anyhow::Error {
    hinted(
        format!("no file or task named {name:?}"),
        "a FILE is imported first; a task is named by its id, a unique prefix or `latest` (also with --task ID); `compactor tasks` lists them",
    )
}

/// FILE (or a task given as an argument) and `--task` both name the task.
fn two_names(arg: &str, task: &str) -> anyhow::Error {
    hinted(
        format!("{arg} and --task {task} both name the task to work on: give one of them"),
        "--task only picks a task already in the store; to import FILE under a name of your own, use --import-as NAME",
    )
}

/// Refuse an import name that would change what a name already in use
/// means: the store is append-only, so a task imported under it could never
/// be taken back. A name is free when no task's id starts with it, apart
/// from the tasks imported under it before from one of `sources` (their
/// source paths: importing the same file under the same name again is a
/// no-op; with `stdin`, any task read from standard input).
pub fn check_import_name(store: &Store, name: &str, sources: &[String], stdin: bool) -> Result<()> {
    let refuse = |why: String| {
        hinted(
            format!("cannot import as {name:?}: {why}"),
            "pick a new name, or leave the name out to import under the session's own id",
        )
    };
    if name.is_empty() || name == "latest" {
        return Err(refuse(
            "`latest` names the most recently active task".to_string(),
        ));
    }
    if name.contains('/') {
        return Err(refuse(
            "`TASK/AGENT` names a task's subagent, so a name holds no `/`".to_string(),
        ));
    }
    let reader = store.reader();
    let mut clashes = Vec::new();
    for t in reader.tasks()? {
        let Some(rest) = t.id.strip_prefix(name) else {
            continue;
        };
        let ours = (rest.is_empty() || rest.starts_with('/'))
            && reader
                .task_source(&t.id)?
                .is_some_and(|s| sources.contains(&s) || (stdin && s.starts_with("stdin:")));
        if !ours {
            clashes.push(t.id);
        }
    }
    match clashes.as_slice() {
        [] => Ok(()),
        [one] if one == name => Err(refuse(format!(
            "task {name} exists already, imported from another source"
        ))),
        many => {
            let shown: Vec<&str> = many.iter().take(3).map(String::as_str).collect();
            Err(refuse(format!(
                "it is the start of {} ({}{}), which `--task {name}` names today",
                plural(many.len(), "task id"),
                shown.join(", "),
                if many.len() > 3 { ", ..." } else { "" }
            )))
        }
    }
}

/// The task a name means: an exact id; `latest`, the most recently active
/// task (subagents aside); or a unique id prefix (a prefix that names a task
/// and its subagents means the task). `project_dir` keeps the sessions recorded
/// in that directory; without it, `latest` prefers the current directory's
/// sessions when there are any. An ambiguous prefix lists the candidates.
pub fn find_task(store: &Store, name: &str, project_dir: Option<&Path>) -> Result<String> {
    let reader = store.reader();
    if name != "latest" && reader.task(name)?.is_some() {
        return Ok(name.to_string());
    }
    let tasks = reader.tasks()?;
    let in_dir = |dir: &Path| -> Vec<&crate::store::TaskInfo> {
        let wanted = [
            dir.display().to_string(),
            std::fs::canonicalize(dir)
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        ];
        tasks
            .iter()
            .filter(|t| t.meta.cwd.as_ref().is_some_and(|c| wanted.contains(c)))
            .collect()
    };
    let pool: Vec<&crate::store::TaskInfo> = match project_dir {
        Some(dir) => {
            let pool = in_dir(dir);
            if pool.is_empty() {
                return Err(hinted(
                    format!("no task was recorded in {}", dir.display()),
                    "`compactor tasks` shows each task's project directory",
                ));
            }
            pool
        }
        None if name == "latest" => {
            let here = std::env::current_dir()
                .map(|d| in_dir(&d))
                .unwrap_or_default();
            if here.iter().any(|t| t.parent_id.is_none()) {
                here
            } else {
                tasks.iter().collect()
            }
        }
        None => tasks.iter().collect(),
    };
    if name == "latest" {
        let activity: std::collections::BTreeMap<String, (Option<String>, i64)> = reader
            .task_activity()?
            .into_iter()
            .map(|(id, ts, row)| (id, (ts, row)))
            .collect();
        return pool
            .iter()
            .filter(|t| t.parent_id.is_none())
            .max_by_key(|t| (activity.get(&t.id).cloned(), t.id.clone()))
            .map(|t| t.id.clone())
            .ok_or_else(|| {
                hinted(
                    "no task yet, so none is the latest",
                    "import a transcript with `compactor import`",
                )
            });
    }
    let matches: Vec<&str> = pool
        .iter()
        .filter(|t| t.id.starts_with(name))
        .map(|t| t.id.as_str())
        .collect();
    // A task and its own subagents: the prefix names the task.
    let heads: Vec<&str> = matches
        .iter()
        .copied()
        .filter(|id| {
            !matches
                .iter()
                .any(|p| id.len() > p.len() && id.starts_with(p) && id.as_bytes()[p.len()] == b'/')
        })
        .collect();
    match heads.as_slice() {
        [one] => Ok(one.to_string()),
        // `PREFIX/AGENT`: a subagent under the task PREFIX names (`c2e8d4a1/agent-a5`).
        [] if name.contains('/') => {
            let (head, rest) = name.split_once('/').expect("checked");
            let parent = find_task(store, head, project_dir).map_err(|_| unknown_task(name))?;
            let full = format!("{parent}/{rest}");
            if full != name {
                // Ambiguity is reported as is; an unknown one under the name given.
                return find_task(store, &full, None).map_err(|e| {
                    if e.to_string().starts_with("unknown task") {
                        unknown_task(name)
                    } else {
                        e
                    }
                });
            }
            Err(unknown_task(name))
        }
        [] => Err(unknown_task(name)),
        many => {
            let shown: Vec<String> = many.iter().take(20).map(|id| format!("  {id}")).collect();
            Err(hinted(
                format!(
                    "task prefix {name:?} is ambiguous: {} tasks match\n{}{}",
                    many.len(),
                    shown.join("\n"),
                    if many.len() > 20 { "\n  ..." } else { "" }
                ),
                "give more of the id",
            ))
        }
    }
}

/// No task of that name in the store.
pub fn unknown_task(task: &str) -> anyhow::Error {
    hinted(
        format!("unknown task {task:?}"),
        "`compactor tasks` lists the imported ones",
    )
}

/// A task resolved for a command that runs it: the budget, the task and its
/// record.
pub struct Resolved {
    pub budget: Budget,
    /// The budget with where its window came from (the human report says).
    pub run_budget: RunBudget,
    pub task: String,
    /// The task's descriptive row (its model, the window it recorded).
    pub record: Option<TaskInfo>,
    pub index: TaskRecordIndex,
    pub calls: u32,
    /// The transcript file imported for the run (None when a task was named).
    pub file: Option<PathBuf>,
}

impl RunTarget {
    /// Checks the budget flags, resolves the task (importing a named file
    /// first) and loads its record, then fills in the budget the flags left
    /// to the task's model.
    pub fn resolve(&self, store: &mut Store, ui: &mut Ui) -> Result<Resolved> {
        defaults::precheck(&self.budget)?;
        let (task, file) = resolve_source(store, ui, &self.source)?;
        let record = store.reader().task(&task)?;
        let run_budget = defaults::budget_for(&self.budget, record.as_ref())?;
        defaults::note_window(ui, &run_budget);
        let index = TaskRecordIndex::load(store, &task)?;
        if !self.budget.allow_over_window {
            defaults::refuse_below_overhead(
                &run_budget.budget,
                index.overhead(&CharsPerToken::default())?,
            )?;
        }
        let calls = index.calls();
        Ok(Resolved {
            budget: run_budget.budget,
            run_budget,
            task,
            record,
            index,
            calls,
            file,
        })
    }

    /// As [`RunTarget::resolve`], for a command that replays the task: one
    /// with no model calls is refused ("no model calls to {verb}").
    pub fn replayable(&self, store: &mut Store, ui: &mut Ui, verb: &str) -> Result<Resolved> {
        let r = self.resolve(store, ui)?;
        if r.calls == 0 {
            bail!("task {} has no model calls to {verb}", r.task);
        }
        Ok(r)
    }
}

/// Files at least this large get a progress bar (on a terminal, without --quiet).
pub(super) const PROGRESS_MIN_BYTES: u64 = 4 << 20;

/// Import one file, with a progress bar for large files on a terminal.
pub fn import_one(
    store: &mut Store,
    ui: &mut Ui,
    path: &Path,
    opts: &IngestOptions,
) -> Result<FileReport> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let bar = progress(
        ui,
        size >= PROGRESS_MIN_BYTES,
        size,
        "{msg} {wide_bar} {bytes}/{total_bytes} {bytes_per_sec}",
    );
    if let Some(b) = &bar {
        b.set_message(format!("importing {}", path.display()));
    }
    let result = ingest_file(store, path, opts, &mut |n| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(result?)
}

/// Replays calls `opts.from` to `opts.to` of `r` on a scratch copy of the task with no
/// compaction state, so it shows what a live engine would have done and
/// repeats exactly; a bar (`template`) shows progress over 20 calls or more.
/// `each` sees every call, after the summarizer's events are attributed to it.
pub fn scratch_replay(
    store: &mut Store,
    ui: &Ui,
    r: &Resolved,
    summarizer: &Configured,
    opts: &ReplayOptions,
    template: &str,
    mut each: impl FnMut(&StepRow, &CallOutput) -> Result<()>,
) -> Result<Totals> {
    let est = CharsPerToken::default();
    let settings = RunSettings::new(r.budget, &est, summarizer);
    let to = opts.to;
    let bar = progress(ui, to >= 20, u64::from(to), template);
    let mut run = Run::open(store, &r.index, settings, Placement::Scratch)?;
    let totals = run.replay(store, opts, |row, out| -> Result<()> {
        if let Some(b) = &bar {
            b.inc(1);
        }
        each(row, out)
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(totals)
}
