//! `compactor check FIXTURE... [--golden DIR] [--bless]`: the CI determinism
//! check. Every fixture is replayed under each budget of a small matrix
//! three ways, all of which must give byte-identical views at every call:
//! (a) a fresh in-memory store; (b) a file store reopened before every call;
//! (c) a file store replayed by a child process that aborts right after
//! committing a seeded call (the `COMPACTOR_FAULT` switch, see `fault`), then
//! resumed by a new process. With `--golden`, the
//! views must also equal the golden files (`--bless` rewrites them).
//! Check never touches the user's store: every store is temporary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;

mod drift;
mod golden;
mod harness;
mod matrix;

use drift::*;
use golden::*;
use harness::*;
use matrix::{budget_flags, matrix};

use super::Ui;
use super::errors::hinted;
use crate::cmd::exit::Outcome;
use crate::cmd::style::{self, paint};
use crate::cmd::summarizer::{Configured, SummarizerArgs};
use crate::engine::Tier;
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::session::record::TaskRecordIndex;
use crate::session::run::{Placement, ReplayOptions, Run};
use crate::session::settings::RunSettings;
use crate::store::{DbLocation, Store};
use crate::transcript::ingest::{IngestOptions, ingest_file};
use crate::view::View;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor check testdata/fixtures/* --golden testdata/golden\n  compactor check testdata/fixtures/claude-shrink-floor.jsonl --json"
)]
pub struct CheckArgs {
    /// Fixture transcripts.
    #[arg(required = true, value_name = "FIXTURE")]
    pub fixtures: Vec<PathBuf>,

    /// Compare every view with the golden files under DIR.
    #[arg(long, value_name = "DIR")]
    pub golden: Option<PathBuf>,

    /// Rewrite the golden files from this run.
    #[arg(long, requires = "golden")]
    pub bless: bool,

    #[command(flatten)]
    pub summary: SummarizerArgs,

    /// Seed that picks the call after which the interrupted run aborts.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,

    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct BudgetResult {
    budget: &'static str,
    calls: u32,
    /// The call after whose commit the child replay aborted.
    interrupted_at: Option<u32>,
    /// Whether the child died of the abort (it always does: else check fails).
    child_killed: Option<bool>,
    /// The call the new process resumed at: the last one the child committed.
    resumed_from: Option<u32>,
    tiers_seen: Vec<Tier>,
    /// `None` when all agree; else where the first drift is.
    drift: Option<String>,
}

#[derive(Debug, Serialize)]
struct FixtureResult {
    fixture: String,
    task: String,
    budgets: Vec<BudgetResult>,
}

pub fn run(ui: &mut Ui, args: &CheckArgs, db: Option<DbLocation>) -> Result<Outcome> {
    // A missing golden directory is a wrong path, not a drift: only --bless
    // makes one.
    if let Some(dir) = &args.golden
        && !args.bless
        && !dir.is_dir()
    {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(hinted(
            format!("the golden directory {} {what}", dir.display()),
            "check the path, or pass --bless to write the golden files there",
        ));
    }
    let exe = std::env::current_exe()
        .context("cannot find the compactor executable to run the interrupted replay")?;
    // A model summarizer caches in the user's store (else in a scratch file),
    // shared with the child processes, so every run reads the same summaries.
    let scratch = tempfile::tempdir()?;
    let cache = match db {
        Some(DbLocation::File(p)) => p,
        _ => scratch.path().join("summary-cache.db"),
    };
    let summarizer = Configured::new(
        args.summary.summarizer,
        &args.summary.llm,
        &DbLocation::File(cache.clone()),
    )?;
    let child = Child {
        exe,
        flags: args.summary.llm.to_flags(args.summary.summarizer),
        cache,
    };
    let mut results = Vec::new();
    let mut drifted = false;
    for fixture in &args.fixtures {
        if !fixture.is_file() {
            bail!(
                "fixture {} does not exist or is not a file",
                fixture.display()
            );
        }
        let r = check_fixture(fixture, args, &summarizer, &child)?;
        drifted |= r.budgets.iter().any(|b| b.drift.is_some());
        if !args.json {
            print_fixture(ui, &r, args.seed)?;
        }
        results.push(r);
    }
    if args.json {
        let mut v = serde_json::json!({"ok": !drifted, "seed": args.seed, "fixtures": results});
        if let Some(r) = summarizer.report() {
            v["llm"] = serde_json::to_value(r)?;
        }
        ui.json_kind("check", &v)?;
    } else {
        for l in summarizer.report().iter().flat_map(|r| r.human()) {
            writeln!(ui.out, "{l}")?;
        }
        let line = if drifted {
            paint(ui.color, style::RED, "check failed: a projection drifted")
        } else if args.bless {
            paint(
                ui.color,
                style::GREEN,
                "check passed; golden files rewritten",
            )
        } else {
            paint(
                ui.color,
                style::GREEN,
                "check passed: every view is byte-identical",
            )
        };
        writeln!(ui.out, "{line}")?;
    }
    Ok(if drifted {
        Outcome::Differs
    } else {
        Outcome::Ok
    })
}

fn check_fixture(
    fixture: &Path,
    args: &CheckArgs,
    configured: &Configured,
    child: &Child,
) -> Result<FixtureResult> {
    let name = fixture
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fixture".into());
    let mut budgets = Vec::new();
    let mut task = String::new();
    for (bname, budget) in matrix() {
        let est = CharsPerToken::default();
        let settings = RunSettings::new(budget, &est, configured);
        // A fresh store each way: its state is the run's own.
        let here = Placement::InPlace {
            record_progress: false,
        };

        // (a) a fresh in-memory store.
        let mut mem = Store::open_memory()?;
        task = import(&mut mem, fixture)?;
        let index = TaskRecordIndex::load(&mem, &task)?;
        let calls = index.calls();
        let mut fresh = Vec::new();
        let mut tiers_seen: Vec<Tier> = Vec::new();
        let opts = ReplayOptions::from_start(calls, Default::default());
        if calls > 0 {
            let mut run = Run::open(&mem, &index, settings, here)?;
            run.replay(&mut mem, &opts, |_, out| -> Result<()> {
                for t in &out.report.tiers_fired {
                    if !tiers_seen.contains(t) {
                        tiers_seen.push(*t);
                    }
                }
                fresh.push(out.view.canonical_bytes());
                Ok(())
            })?;
        }

        // (b) a file store reopened before every call.
        let dir = tempfile::tempdir()?;
        let loc = DbLocation::File(dir.path().join("reopened.db"));
        import(&mut Store::open(&loc)?, fixture)?;
        let mut reopened = Vec::new();
        for k in 1..=calls {
            let mut store = Store::open(&loc)?;
            let index = TaskRecordIndex::load(&store, &task)?;
            let mut run = Run::open(&store, &index, settings, here)?;
            reopened.push(run.step(&mut store, k)?.view.canonical_bytes());
        }

        // (c) a replay aborted after a seeded call and resumed by a new process.
        let interrupted_at = (calls > 0).then(|| pick_call(args.seed, &name, bname, calls));
        let interrupted = match interrupted_at {
            Some(at) => Some(interrupted_run(
                child,
                fixture,
                &task,
                &budget,
                at,
                calls,
                dir.path(),
            )?),
            None => None,
        };
        let resumed = interrupted
            .as_ref()
            .map_or_else(Vec::new, |i| i.views.clone());

        let mut drift = first_drift(&fresh, &reopened, "fresh", "reopened")
            .or_else(|| first_drift(&fresh, &resumed, "fresh", "resumed after the kill"));
        if let Some(golden) = &args.golden {
            let path = golden_path(golden, &name, bname);
            if args.bless {
                bless(&path, &fresh)?;
            } else if drift.is_none() {
                drift = golden_drift(&path, &fresh)?;
            }
        }
        budgets.push(BudgetResult {
            budget: bname,
            calls,
            interrupted_at,
            child_killed: interrupted.as_ref().map(|i| i.killed),
            resumed_from: interrupted.as_ref().map(|i| i.resumed_from),
            tiers_seen,
            drift,
        });
    }
    Ok(FixtureResult {
        fixture: fixture.display().to_string(),
        task,
        budgets,
    })
}

fn import(store: &mut Store, fixture: &Path) -> Result<String> {
    let report = ingest_file(store, fixture, &IngestOptions::default(), &mut |_| {})?;
    report
        .main_task()
        .map(str::to_string)
        .with_context(|| format!("{} holds no conversation", fixture.display()))
}
