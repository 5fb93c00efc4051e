//! Helpers more than one command uses.

use std::path::Path;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Ui;
use super::defaults::{self, RunBudget};
use super::exit::Outcome;
use super::import::{format_or_auto, import_one};
use super::summarizer::{Configured, SummarizerArgs};
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::engine::{CallOutput, Status};
use crate::model::Format;
use crate::model::decimal::Ratio;
use crate::session::cost::{Prices, Totals};
use crate::session::driver::{RunSettings, TaskRecordIndex};
use crate::session::replay::{ReplayOptions, StepRow, replay};
use crate::store::{DbLocation, Store, StoreError, TaskRecord};
use crate::transcript::LineError;
use crate::transcript::ingest::IngestError;
use crate::transcript::ingest::IngestOptions;
use crate::view::View;

/// Which task to work on: a transcript FILE (imported first), `--task`, or
/// by default `latest` (as `watch` follows the latest session).
#[derive(Debug, Args)]
pub struct TaskSource {
    /// A transcript file: imported first (a no-op when unchanged), then its main task is used.
    /// Without FILE and --task: the latest task.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// The task: its id, a unique prefix of it, or `latest` (the default: the most recently
    /// active; `compactor tasks` lists them). With FILE, the name to import it as.
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,

    /// Pick among the sessions recorded in this project directory (the PROJECT column of
    /// `compactor tasks`): `latest` and id prefixes look only there; alone, its latest
    /// session. `--cwd` is an older name for it.
    #[arg(long, alias = "cwd", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub project: Option<PathBuf>,

    /// FILE's transcript format.
    #[arg(long, default_value = "auto", value_parser = format_or_auto(), value_name = "FORMAT")]
    pub input_format: ::std::option::Option<Format>,
}

/// The compaction budget. Env vars are named as in the engine specification.
#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// The model's context window, in tokens. Default: the window the session
    /// recorded, else the recorded model's (README, "Models and prices"), else 200000.
    #[arg(long, env = "COMPACTION_CONTEXT_WINDOW", value_name = "TOKENS")]
    pub window: Option<u64>,

    /// Tokens reserved for the model's output: w_eff = window − output_reserved.
    /// Default: min(20000, window / 8).
    #[arg(long, env = "OUTPUT_RESERVED_TOKENS", value_name = "TOKENS")]
    pub output_reserved: Option<u64>,

    /// Compaction starts above w_eff × this ratio.
    #[arg(
        long,
        env = "COMPACTION_TRIGGER_RATIO",
        default_value = "0.65",
        value_name = "RATIO"
    )]
    pub trigger_ratio: Ratio,

    /// Shrinking aims at w_eff × this ratio (must be below the trigger ratio).
    #[arg(
        long,
        env = "COMPACTION_STOP_RATIO",
        default_value = "0.5",
        value_name = "RATIO"
    )]
    pub stop_ratio: Ratio,

    /// Model steps at the end of the history that ordinary compaction never touches.
    #[arg(
        long,
        env = "COMPACTION_PROTECT_RECENT_STEPS",
        default_value_t = 5,
        value_name = "N"
    )]
    pub protect_recent_steps: u32,

    /// Token cap of the floor summary.
    #[arg(
        long,
        env = "ROLLING_SUMMARY_BUDGET_TOKENS",
        default_value_t = 2_500,
        value_name = "TOKENS"
    )]
    pub summary_budget: u64,

    #[command(flatten)]
    pub summary: SummarizerArgs,
}

/// The default store: `$XDG_DATA_HOME/compactor/compactor.db`, else the
/// platform's user data directory.
pub fn default_db_path() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        env("LOCALAPPDATA").or_else(|| env("APPDATA"))
    } else if cfg!(target_os = "macos") {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join("Library/Application Support")))
    } else {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join(".local/share")))
    }?;
    Some(base.join("compactor").join("compactor.db"))
}

/// The store at `location`, which must exist: for a command that only reads
/// what was imported (an in-memory store is always there, empty).
pub fn open_existing_store(location: &DbLocation) -> Result<Store> {
    if let DbLocation::File(path) = location
        && !path.exists()
    {
        return Err(hinted(
            format!("no store at {}; import something first", path.display()),
            "`compactor import` creates it; --db PATH or COMPACTOR_DB names another store",
        ));
    }
    Ok(Store::open(location)?)
}

/// `over_window` is the one result that falls short: exit status 1.
pub fn outcome_of(status: Status) -> Outcome {
    match status {
        Status::OverWindow => Outcome::Differs,
        _ => Outcome::Ok,
    }
}

/// The summarizer `args` configure (flags, environment, config file).
pub fn summarizer_of(args: &BudgetArgs, store: &Store) -> Result<Configured> {
    Configured::for_store(args.summary.summarizer, &args.summary.llm, store)
}

/// The task a command works on: FILE's main task after importing it, else
/// `--task`, else `latest` (within `--project` when given).
pub fn resolve_task(store: &mut Store, ui: &mut Ui, src: &TaskSource) -> Result<String> {
    match &src.file {
        Some(file) => {
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
            let opts = IngestOptions {
                format: src.input_format,
                task: src.task.clone(),
                ..IngestOptions::default()
            };
            let report = import_one(store, ui, file, &opts)?;
            for w in &report.warnings {
                ui.warn(format!(
                    "{}:{}: {} (task {})",
                    report.path, w.line, w.message, w.task
                ));
            }
            match report.main_task() {
                Some(t) => Ok(t.to_string()),
                None => bail!("{} holds no conversation to project", file.display()),
            }
        }
        None => {
            let name = src.task.as_deref().unwrap_or("latest");
            find_task(store, name, src.project.as_deref())
        }
    }
}

/// The task a name means: an exact id; `latest`, the most recently active
/// task (subagents aside); or a unique id prefix (a prefix that names a task
/// and its subagents means the task). `project` keeps the sessions recorded
/// in that directory; without it, `latest` prefers the current directory's
/// sessions when there are any. An ambiguous prefix lists the candidates.
pub fn find_task(store: &Store, name: &str, project: Option<&Path>) -> Result<String> {
    let reader = store.reader();
    if name != "latest" && reader.task(name)?.is_some() {
        return Ok(name.to_string());
    }
    let tasks = reader.tasks()?;
    let in_dir = |dir: &Path| -> Vec<&crate::store::TaskRecord> {
        let wanted = [
            dir.display().to_string(),
            std::fs::canonicalize(dir)
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        ];
        tasks
            .iter()
            .filter(|t| t.cwd.as_ref().is_some_and(|c| wanted.contains(c)))
            .collect()
    };
    let pool: Vec<&crate::store::TaskRecord> = match project {
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
            let parent = find_task(store, head, project).map_err(|_| unknown_task(name))?;
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

/// Write a view's canonical bytes atomically.
pub fn write_view(path: &Path, view: &View) -> Result<()> {
    write_atomic(path, &view.canonical_bytes(), "the view to ")
}

/// Every file a command writes goes through here: a temp file beside `path`,
/// renamed into place, so a killed command leaves the old file or the new
/// one, never half of one. `what` prefixes the path in the error message.
pub fn write_atomic(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    let fail = || format!("cannot write {what}{}", path.display());
    // A device or a pipe (`-o /dev/null`, `-o /dev/stdout`, a FIFO) is written
    // into: renaming a file over it would replace the device itself.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(fail)?;
        return std::io::Write::write_all(&mut out, bytes).with_context(fail);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(fail)?;
    std::io::Write::write_all(&mut tmp, bytes).with_context(fail)?;
    // A temp file is private (0600); the written file keeps the mode of the
    // one it replaces, else gets the mode of a file written in place (0644).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(fail)?;
    }
    tmp.persist(path).with_context(fail)?;
    Ok(())
}

/// A progress bar on stderr, drawn only when stderr is a terminal, the user
/// did not ask for quiet, and the work is `worth_it`.
pub fn progress(ui: &Ui, worth_it: bool, len: u64, template: &str) -> Option<ProgressBar> {
    (ui.stderr_terminal && !ui.quiet && worth_it).then(|| {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
        bar
    })
}

/// `1 part`, `2 parts`, `3 misses`, `0 entries`.
pub fn plural(n: impl Count, noun: &str) -> String {
    let n = n.count();
    format!("{n} {}", noun_for(n, noun))
}

/// A count of things, whatever integer type holds it.
pub trait Count: Copy {
    fn count(self) -> u64;
}

macro_rules! count_of {
    ($($t:ty),*) => {$(
        impl Count for $t {
            fn count(self) -> u64 {
                self as u64
            }
        }
    )*};
}
count_of!(u8, u16, u32, u64, usize);

/// `noun` as it goes after the count `n`: `call`, `calls`, `misses`,
/// `summaries` (the last word of a phrase is the one inflected).
pub fn noun_for(n: impl Count, noun: &str) -> String {
    if n.count() == 1 {
        return noun.to_string();
    }
    let consonant_y = noun.len() >= 2
        && noun.ends_with('y')
        && !noun[..noun.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if noun.ends_with(['s', 'x']) || noun.ends_with("ch") || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// An error with something the user can do about it, printed on its own
/// `hint:` line after the error.
#[derive(Debug)]
pub struct Hinted {
    pub message: String,
    pub hint: String,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Hinted {}

/// `message`, with `hint` on its own line.
pub fn hinted(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Hinted {
        message: message.into(),
        hint: hint.into(),
    })
}

/// The first hint anywhere in an error's chain.
pub fn hint_of(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|c| {
        if let Some(h) = c.downcast_ref::<Hinted>() {
            Some(h.hint.clone())
        } else if let Some(s) = c.downcast_ref::<StoreError>() {
            s.hint().map(str::to_string)
        } else if let Some(IngestError::Parse { error, .. }) = c.downcast_ref::<IngestError>() {
            error.hint.map(str::to_string)
        } else {
            c.downcast_ref::<LineError>()
                .and_then(|l| l.hint.map(str::to_string))
        }
    })
}

/// A corrupt store or a failing SQLite: exit status 3, not 2.
pub fn is_internal(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<StoreError>()
            .is_some_and(StoreError::is_internal)
            || c.downcast_ref::<rusqlite::Error>().is_some()
    })
}

/// No task of that name in the store.
pub fn unknown_task(task: &str) -> anyhow::Error {
    hinted(
        format!("unknown task {task:?}"),
        "`compactor tasks` lists the imported ones",
    )
}

/// The task a command runs and the budget it runs it under: the head of
/// `compact`, `preflight`, `step`, `replay`, `report` and `probe`.
#[derive(Debug, Args)]
pub struct RunTarget {
    #[command(flatten)]
    pub source: TaskSource,

    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// A task resolved for a command that runs it: the budget, the task and its
/// record.
pub struct Resolved {
    pub budget: Budget,
    /// The budget with where its window came from (the human report says).
    pub run_budget: RunBudget,
    pub task: String,
    /// The task's descriptive row (its model, the window it recorded).
    pub record: Option<TaskRecord>,
    pub index: TaskRecordIndex,
    pub calls: u32,
}

impl RunTarget {
    /// Checks the budget flags, resolves the task (importing a named file
    /// first) and loads its record, then fills in the budget the flags left
    /// to the task's model.
    pub fn resolve(&self, store: &mut Store, ui: &mut Ui) -> Result<Resolved> {
        defaults::precheck(&self.budget)?;
        let task = resolve_task(store, ui, &self.source)?;
        let record = store.reader().task(&task)?;
        let run_budget = defaults::budget_for(&self.budget, record.as_ref())?;
        defaults::note_window(ui, &run_budget);
        let index = TaskRecordIndex::load(store, &task)?;
        let calls = index.calls();
        Ok(Resolved {
            budget: run_budget.budget,
            run_budget,
            task,
            record,
            index,
            calls,
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

/// Run calls 1 to `to`, reporting them all, recording no progress.
pub fn from_start(to: u32, prices: Prices) -> ReplayOptions {
    ReplayOptions {
        from: 1,
        to,
        resume: false,
        prices,
        progress: None,
    }
}

/// Replays calls 1 to `to` of `r` on a scratch copy of the task with no
/// compaction state, so it shows what a live engine would have done and
/// repeats exactly; a bar (`template`) shows progress over 20 calls or more.
/// `each` sees every call, after the summarizer's events are attributed to it.
pub fn scratch_replay(
    store: &mut Store,
    ui: &Ui,
    r: &Resolved,
    summarizer: &Configured,
    (to, prices): (u32, Prices),
    template: &str,
    mut each: impl FnMut(&StepRow, &CallOutput) -> Result<()>,
) -> Result<Totals> {
    let est = CharsPerToken::default();
    let settings = RunSettings::new(r.budget, &est, summarizer.get());
    let bar = progress(ui, to >= 20, u64::from(to), template);
    let mut scratch = store.scratch_copy(&r.task)?;
    let totals = replay(
        &mut scratch,
        &r.index,
        settings,
        from_start(to, prices),
        |row, out| -> Result<()> {
            if let Some(b) = &bar {
                b.inc(1);
            }
            summarizer.note_call(row.call);
            each(row, out)
        },
    )?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_singular_only_at_one() {
        assert_eq!(plural(1u64, "line"), "1 line");
        assert_eq!(plural(0u64, "line"), "0 lines");
        assert_eq!(plural(2u64, "turn"), "2 turns");
        assert_eq!(plural(3u64, "miss"), "3 misses");
        assert_eq!(plural(2u64, "entry"), "2 entries");
        assert_eq!(plural(1u64, "summary"), "1 summary");
        assert_eq!(plural(2u64, "day"), "2 days");
        assert_eq!(plural(2u64, "model call"), "2 model calls");
        assert_eq!(noun_for(1u32, "call"), "call");
        assert_eq!(noun_for(7u32, "call"), "calls");
    }
}
