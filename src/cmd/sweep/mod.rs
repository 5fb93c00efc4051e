//! `compactor sweep SOURCE...`: every session replayed under every policy
//! of a grid, priced and probed, beside what the client did and plain
//! trimming; a table per session, totals, and the policy to use.
//! `compactor sweep --merge FILE...` totals the JSON Lines of shards.
//!
//! The rows, totals and page are `crate::sweep`'s; this module reads the
//! flags, resolves the sessions, runs the jobs (`run`) and prints (`table`).

mod lists;
mod run;
mod table;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;

use super::Ui;
use super::atomic::write_atomic;
use super::defaults::{PriceArgs, prices_for};
use super::errors::hinted;
use super::exit::Outcome;
use super::progress::progress;
use super::summarizer::{Configured, LlmArgs};
use super::target::find_task;
use super::words::plural;
use crate::session::models::{ModelTable, WindowFrom};
use crate::session::record::TaskRecordIndex;
use crate::store::Store;
use crate::summarize::llm::config::SummarizerKind;
use crate::sweep::grid::{Lists, Spec, trim_specs};
use crate::sweep::{Row, SessionInfo, summarize};
use crate::transcript::discover::{Pick, walk};
use crate::transcript::ingest::{IngestError, IngestOptions, ingest_file};
use lists::PolicyLists;
use run::{Planned, SweepJob, SweepPlan, run_jobs};

#[derive(Debug, Args)]
#[command(after_help = "\
Every list is comma-separated (or the flag repeated); the grid is every combination.
Each policy is replayed on a scratch copy of the session and probed, as `replay` and
`probe` do; `recorded` is what the client sent and paid, `trim` drop-oldest trimming
at the same window.

Examples:
  compactor sweep session.jsonl --window 32000,64000,200000 --trigger-ratio 0.65,0.8
  compactor sweep ~/.claude/projects --json > shard-1.jsonl
  compactor sweep --merge shard-*.jsonl -o sweep.html")]
pub struct SweepArgs {
    /// Transcript files, directories (walked for transcripts, each file's session
    /// swept) or tasks (an id, a unique prefix, `latest`). Default: the latest task.
    #[arg(value_name = "SOURCE")]
    pub sources: Vec<String>,

    /// A task to sweep besides the SOURCEs (its id, a unique prefix, `latest`); repeatable.
    #[arg(long, value_name = "TASK")]
    pub task: Vec<String>,

    #[command(flatten)]
    pub lists: PolicyLists,

    #[command(flatten)]
    pub llm: LlmArgs,

    #[command(flatten)]
    pub prices: PriceArgs,

    /// Sweep only the valid combinations of the lists (each one left out is named);
    /// without it an invalid combination, such as stop ≥ trigger, is refused.
    #[arg(long)]
    pub skip_invalid: bool,

    /// Runs at a time, each on its own scratch store (default: the number of cores).
    /// The output is the same for any N.
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Print JSON Lines: one compactor.sweep_row/1 per run, then compactor.sweep_total/1.
    #[arg(long)]
    pub json: bool,

    /// Also write one self-contained HTML page: a cost against fidelity chart and the
    /// sortable table of each session, and the totals (`-`: only the page, on standard
    /// output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Total the JSON Lines (`sweep --json`) of sweeps run apart, such as shards of
    /// sources swept on several machines, instead of sweeping.
    #[arg(long, num_args = 1.., value_name = "FILE", conflicts_with_all = [
        "sources", "task", "window", "output_reserved", "trigger_ratio", "stop_ratio",
        "protect_recent_steps", "summary_budget", "summarizer", "skip_invalid", "jobs",
    ])]
    pub merge: Vec<PathBuf>,
}

impl SweepArgs {
    /// Whether the command may create the store: a SOURCE that is a file or
    /// directory is imported first.
    pub fn imports(&self) -> bool {
        self.sources.iter().any(|s| Path::new(s).exists())
    }
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &SweepArgs) -> Result<Outcome> {
    let quiet_stdout = page_on_stdout(args);
    let threads = match args.jobs {
        Some(0) => bail!("--jobs 0 runs nothing; give 1 or more"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let kinds: Vec<Option<SummarizerKind>> = if args.lists.summarizer.is_empty() {
        vec![None]
    } else {
        args.lists.summarizer.iter().copied().map(Some).collect()
    };
    let mut summarizers = Vec::new();
    for kind in kinds {
        let name = Configured::for_store(kind, &args.llm, store)?.get().name();
        summarizers.push((kind, name));
    }
    let lists = Lists {
        windows: args.lists.window.clone(),
        reserves: args.lists.output_reserved.clone(),
        triggers: args.lists.trigger_ratio.clone(),
        stops: args.lists.stop_ratio.clone(),
        protects: args.lists.protect_recent_steps.clone(),
        summary_budget: args.lists.summary_budget,
        summarizers: summarizers.iter().map(|(_, n)| n.clone()).collect(),
    };
    let specs = valid_specs(ui, &lists, args.skip_invalid)?;
    let named: Vec<String> = args.sources.iter().chain(&args.task).cloned().collect();
    let tasks = sessions(store, ui, &named)?;
    let plan = plan(store, ui, args, &lists, &specs, tasks, summarizers)?;
    let bar = progress(
        ui,
        plan.jobs.len() > 1,
        plan.jobs.len() as u64,
        "sweeping {wide_bar} {pos}/{len} runs",
    );
    let mut rows: Vec<Row> = Vec::with_capacity(plan.jobs.len());
    let mut printed = 0;
    run_jobs(store, &plan, threads, bar.as_ref(), |_, (row, notes)| {
        let out = |ui: &mut Ui| -> Result<()> {
            for n in notes {
                ui.note(format!("{} {}: {n}", row.kind.name(), row.session));
            }
            if args.json && !quiet_stdout {
                ui.json_kind("sweep_row", &row)?;
            }
            Ok(())
        };
        match &bar {
            Some(b) => b.suspend(|| out(ui))?,
            None => out(ui)?,
        }
        rows.push(row);
        // A session's table once its last row is in (the jobs run session by session).
        if !args.json && !quiet_stdout && plan_session_done(&plan, rows.len()) {
            let done: Vec<&Row> = rows[printed..].iter().collect();
            let first = printed == 0;
            let print = |ui: &mut Ui| -> Result<()> {
                if first {
                    table::legend(ui)?;
                }
                table::session(ui, &done)
            };
            match &bar {
                Some(b) => b.suspend(|| print(ui))?,
                None => print(ui)?,
            }
            printed = rows.len();
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    finish(ui, args, &rows, !args.json)
}

/// Whether the first `n` jobs end a session's jobs.
fn plan_session_done(plan: &SweepPlan, n: usize) -> bool {
    n == plan.jobs.len() || plan.jobs[n].session() != plan.jobs[n - 1].session()
}

/// The totals (human or JSON), the page, and the exit status: 1 when no
/// policy of the grid is fit for every session (whatever the recommendation).
fn finish(ui: &mut Ui, args: &SweepArgs, rows: &[Row], sessions_printed: bool) -> Result<Outcome> {
    let summary = summarize(rows);
    if page_on_stdout(args) {
        // Only the page goes to standard output.
    } else if args.json {
        ui.json_kind("sweep_total", &summary.to_json())?;
    } else {
        if !sessions_printed {
            table::legend(ui)?;
            for s in &summary.sessions {
                table::session(ui, &s.rows)?;
            }
        }
        if summary.sessions.len() > 1 {
            table::totals(ui, &summary)?;
        }
    }
    if let Some(path) = &args.output {
        let html = crate::sweep::html::render(&summary, env!("CARGO_PKG_VERSION"));
        if path.as_os_str() == "-" {
            ui.out.write_all(html.as_bytes())?;
        } else {
            write_atomic(path, html.as_bytes(), "the sweep page to ")?;
            ui.note(format!(
                "wrote {} ({}, {})",
                path.display(),
                plural(summary.sessions.len(), "session"),
                plural(html.len(), "byte")
            ));
        }
    }
    // Keeping what the clients do is always at hand: the status says
    // whether the grid itself has a policy fit for every session.
    Ok(if summary.has_fit_policy() {
        Outcome::Ok
    } else {
        Outcome::Differs
    })
}

/// `-o -`: the page is all that standard output gets.
fn page_on_stdout(args: &SweepArgs) -> bool {
    args.output.as_ref().is_some_and(|p| p.as_os_str() == "-")
}

/// The grid's combinations that can run: an invalid one is refused, or with
/// `skip` left out with a note.
fn valid_specs(ui: &mut Ui, lists: &Lists, skip: bool) -> Result<Vec<Spec>> {
    let invalid = lists.invalid();
    if !invalid.is_empty() && !skip {
        let shown: Vec<String> = invalid
            .iter()
            .take(5)
            .map(|i| format!("  {}: {}", lists.words(&i.spec), i.error))
            .collect();
        return Err(hinted(
            format!(
                "{} of the {} policies of the grid cannot run:\n{}{}",
                invalid.len(),
                lists.specs().len(),
                shown.join("\n"),
                if invalid.len() > 5 { "\n  ..." } else { "" }
            ),
            "drop those values from the lists, or pass --skip-invalid to sweep the valid combinations only",
        ));
    }
    let specs: Vec<Spec> = lists
        .specs()
        .into_iter()
        .filter(|s| s.precheck().is_ok())
        .collect();
    if !invalid.is_empty() {
        ui.note(format!(
            "note: left out {} that cannot run: {}",
            plural(invalid.len(), "policy"),
            invalid
                .iter()
                .map(|i| format!("{} ({})", lists.words(&i.spec), i.error))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if specs.is_empty() {
        bail!("no policy of the grid can run");
    }
    Ok(specs)
}

/// The tasks the sources name, each once, in order: a file's main task
/// (imported first), each transcript's under a directory, or a task name.
fn sessions(store: &mut Store, ui: &mut Ui, sources: &[String]) -> Result<Vec<String>> {
    let mut tasks: Vec<String> = Vec::new();
    let mut not_transcripts = Vec::new();
    if sources.is_empty() {
        tasks.push(find_task(store, "latest", None)?);
    }
    for s in sources {
        let path = Path::new(s);
        if path.is_dir() {
            let found = walk(path, Pick::Transcripts)
                .with_context(|| format!("cannot read the directory {s}"))?;
            if found.is_empty() {
                ui.note(format!("{s}: no transcript files (*.jsonl, *.json) in it"));
            }
            for f in found {
                if f.dangling {
                    not_transcripts.push(f.path.display().to_string());
                    continue;
                }
                match import(store, ui, &f.path) {
                    Ok(task) => tasks.extend(task),
                    Err(e)
                        if e.downcast_ref::<IngestError>()
                            .is_some_and(IngestError::is_not_a_transcript) =>
                    {
                        not_transcripts.push(f.path.display().to_string());
                    }
                    Err(e) => return Err(e),
                }
            }
        } else if path.is_file() {
            match import(store, ui, path)? {
                Some(task) => tasks.push(task),
                None => bail!("{s} holds no conversation to sweep"),
            }
        } else if s.ends_with(".jsonl") || s.ends_with(".json") {
            bail!("no such file: {s}");
        } else {
            tasks.push(find_task(store, s, None)?);
        }
    }
    if !not_transcripts.is_empty() {
        ui.note(format!(
            "note: skipped {} that {} not a transcript: {}",
            plural(not_transcripts.len(), "file"),
            if not_transcripts.len() == 1 {
                "is"
            } else {
                "are"
            },
            not_transcripts.join(", ")
        ));
    }
    let mut seen = BTreeSet::new();
    tasks.retain(|t| seen.insert(t.clone()));
    Ok(tasks)
}

/// Import `path` (a no-op when unchanged): its main task.
fn import(store: &mut Store, ui: &mut Ui, path: &Path) -> Result<Option<String>> {
    let report = ingest_file(store, path, &IngestOptions::default(), &mut |_| {})?;
    for w in &report.warnings {
        ui.warn(format!(
            "{}:{}: {} (task {})",
            report.path, w.line, w.message, w.task
        ));
    }
    Ok(report.main_task().map(str::to_string))
}

/// The jobs: per session, each policy, each trim window, then the recording.
fn plan(
    store: &Store,
    ui: &mut Ui,
    args: &SweepArgs,
    lists: &Lists,
    specs: &[Spec],
    tasks: Vec<String>,
    summarizers: Vec<(Option<SummarizerKind>, String)>,
) -> Result<SweepPlan> {
    let mut sessions = Vec::new();
    let mut jobs = Vec::new();
    for task in tasks {
        let index = TaskRecordIndex::load(store, &task)?;
        if index.calls() == 0 {
            ui.note(format!(
                "note: task {task} has no model calls to sweep; left out"
            ));
            continue;
        }
        let record = store.reader().task(&task)?;
        let model = record.as_ref().and_then(|r| r.meta.model.clone());
        let (own, from) = ModelTable::built_in().window(
            model.as_deref(),
            record.as_ref().and_then(|r| r.meta.context_window),
        );
        if args.lists.window.is_empty()
            && let WindowFrom::Unknown(m) = &from
        {
            let what = match m {
                Some(m) => format!("the model {m:?} is not in the built-in table"),
                None => "the transcript names no model".to_string(),
            };
            ui.note(format!(
                "note: task {task}: {what}: window {own} assumed; give --window to set it"
            ));
        }
        let prices = prices_for(ui, &args.prices, record.as_ref())?.prices;
        let session = sessions.len();
        let mut ran: Vec<Spec> = Vec::new();
        for spec in specs {
            let budget = spec.budget(own);
            if let Err(e) = budget.validate() {
                if !args.skip_invalid {
                    return Err(hinted(
                        format!("task {task}: {} cannot run: {e}", lists.words(spec)),
                        "drop that value from the lists, or pass --skip-invalid to sweep the valid combinations only",
                    ));
                }
                ui.note(format!(
                    "note: task {task}: left out {} ({e})",
                    lists.words(spec)
                ));
                continue;
            }
            ran.push(*spec);
            jobs.push(SweepJob::Policy {
                session,
                spec: *spec,
                budget,
            });
        }
        if ran.is_empty() {
            ui.note(format!(
                "note: task {task}: no policy of the grid can run on it; left out"
            ));
            jobs.retain(|j| !matches!(j, SweepJob::Policy { session: s, .. } if *s == session));
            continue;
        }
        // The trims, then the masks, at each window the policies ran at.
        let windows: Vec<_> = trim_specs(&ran)
            .iter()
            .map(|spec| {
                let budget = spec.budget(own);
                (budget, spec.trim_fields(&budget))
            })
            .collect();
        for (budget, fields) in &windows {
            jobs.push(SweepJob::Trim {
                session,
                budget: *budget,
                fields: fields.clone(),
            });
        }
        for (budget, fields) in windows {
            jobs.push(SweepJob::Mask {
                session,
                budget,
                fields,
            });
        }
        jobs.push(SweepJob::Recorded { session });
        sessions.push(Planned {
            info: SessionInfo { task, model },
            prices,
        });
    }
    if sessions.is_empty() {
        bail!("no session to sweep");
    }
    Ok(SweepPlan {
        sessions,
        jobs,
        summarizers,
        llm: args.llm.clone(),
        cache_ttl: args.prices.cache_ttl,
    })
}

/// `sweep --merge FILE...`: the rows of every file, in order, totalled and
/// printed as one sweep over all their sessions prints them.
pub fn merge(ui: &mut Ui, args: &SweepArgs) -> Result<Outcome> {
    let mut rows: Vec<Row> = Vec::new();
    // Each row's session, kind and policy: a second one is refused.
    let mut seen: BTreeSet<(String, &str, String)> = BTreeSet::new();
    for path in &args.merge {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = || format!("{}:{}", path.display(), i + 1);
            let mut v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                anyhow::anyhow!(
                    "{}: not JSON ({e}); expected a line of `compactor sweep --json`",
                    at()
                )
            })?;
            let schema = v.get("schema").and_then(|s| s.as_str()).unwrap_or("");
            match schema {
                "compactor.sweep_total/1" => continue,
                "compactor.sweep_row/1" => {}
                other => bail!(
                    "{}: expected a compactor.sweep_row/1 or compactor.sweep_total/1 record, found {}",
                    at(),
                    if other.is_empty() {
                        "no schema".to_string()
                    } else {
                        format!("{other:?}")
                    }
                ),
            }
            if let Some(m) = v.as_object_mut() {
                m.remove("schema");
            }
            let row: Row = serde_json::from_value(v)
                .map_err(|e| anyhow::anyhow!("{}: not a sweep row: {e}", at()))?;
            let policy = serde_json::to_string(&row.policy)?;
            if !seen.insert((row.session.clone(), row.kind.name(), policy)) {
                bail!(
                    "{}: task {} has this {} row already (in this file or an earlier one); each session belongs to one shard",
                    at(),
                    row.session,
                    row.kind.name()
                );
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        bail!("no sweep rows in {}", plural(args.merge.len(), "file"));
    }
    // Each session's rows together, as one sweep prints them.
    let ordered: Vec<Row> = summarize(&rows)
        .sessions
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| (*r).clone()))
        .collect();
    if args.json && !page_on_stdout(args) {
        for r in &ordered {
            ui.json_kind("sweep_row", r)?;
        }
    }
    finish(ui, args, &ordered, false)
}
