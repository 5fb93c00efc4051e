//! `compactor check FIXTURE... [--golden DIR] [--bless]`: the CI determinism
//! check. Every fixture is replayed under each budget of a small matrix
//! three ways, all of which must give byte-identical views at every call:
//! (a) a fresh in-memory store; (b) a file store reopened before every call;
//! (c) a file store replayed by a child process that is killed (SIGKILL) at a
//! pseudo-random call, then resumed by a new process. With `--golden`, the
//! views must also equal the golden files (`--bless` rewrites them).
//! Check never touches the user's store: every store is temporary.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::Ui;
use crate::cli::CheckArgs;
use crate::driver::{Driver, RunSettings, TaskRecordIndex};
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::exit::Outcome;
use crate::ingest::{IngestOptions, ingest_file};
use crate::replay::{ReplayOptions, replay};
use crate::store::{DbLocation, Store};
use crate::style::{self, paint};
use crate::summarize::Summarizer;
use crate::view::View;

/// The budget matrix: the default window, one that forces folding on
/// medium sessions, and one tight enough to reach the breakthrough tiers.
pub fn matrix() -> Vec<(&'static str, Budget)> {
    let b = |window, reserved| Budget {
        window,
        output_reserved: reserved,
        ..Budget::default()
    };
    vec![
        ("default", Budget::default()),
        ("fold", b(32_000, 4_000)),
        ("tight", b(6_000, 1_000)),
    ]
}

#[derive(Debug, Serialize)]
struct BudgetResult {
    budget: &'static str,
    calls: u32,
    /// The (seeded) call after whose report the child replay was killed.
    interrupted_at: Option<u32>,
    /// The last call the child reported before it died (it may run ahead of the kill).
    last_reported_before_kill: Option<u32>,
    /// The call the new process resumed at (`None` when nothing was left).
    resumed_from: Option<u32>,
    /// The signal that ended the child (9: SIGKILL), if it did not exit by itself first.
    killed_by_signal: Option<i32>,
    tiers_seen: Vec<&'static str>,
    /// `None` when all agree; else where the first drift is.
    drift: Option<String>,
}

#[derive(Debug, Serialize)]
struct FixtureResult {
    fixture: String,
    task: String,
    budgets: Vec<BudgetResult>,
}

pub fn run(ui: &mut Ui, args: &CheckArgs) -> Result<Outcome> {
    let exe = std::env::current_exe()
        .context("cannot find the compactor executable to run the interrupted replay")?;
    let summarizer = super::project::summarizer_of(crate::cli::SummarizerArg::Extractive);
    let mut results = Vec::new();
    let mut drifted = false;
    for fixture in &args.fixtures {
        if !fixture.is_file() {
            bail!(
                "fixture {} does not exist or is not a file",
                fixture.display()
            );
        }
        let r = check_fixture(&exe, fixture, args, summarizer.as_ref())?;
        drifted |= r.budgets.iter().any(|b| b.drift.is_some());
        if !args.json {
            print_fixture(ui, &r, args.seed)?;
        }
        results.push(r);
    }
    if args.json {
        ui.json(&serde_json::json!({"ok": !drifted, "seed": args.seed, "fixtures": results}))?;
    } else {
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
    exe: &Path,
    fixture: &Path,
    args: &CheckArgs,
    summarizer: &dyn Summarizer,
) -> Result<FixtureResult> {
    let name = fixture
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fixture".into());
    let mut budgets = Vec::new();
    let mut task = String::new();
    for (bname, budget) in matrix() {
        let est = CharsPerToken::default();
        let settings = || RunSettings {
            budget,
            estimator: &est,
            summarizer,
        };

        // (a) a fresh in-memory store.
        let mut mem = Store::open_memory()?;
        task = import(&mut mem, fixture)?;
        let index = TaskRecordIndex::load(&mem, &task)?;
        let calls = index.calls();
        let mut fresh = Vec::new();
        let mut tiers_seen: Vec<&'static str> = Vec::new();
        let opts = ReplayOptions {
            from: 1,
            to: calls,
            resume: false,
            prices: Default::default(),
        };
        if calls > 0 {
            replay(&mut mem, &index, settings(), opts, |_, out| -> Result<()> {
                for t in &out.report.tiers_fired {
                    if !tiers_seen.contains(t) {
                        tiers_seen.push(t);
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
            let mut driver = Driver::new(&store, &index, settings())?;
            reopened.push(driver.step(&mut store, k)?.view.canonical_bytes());
        }

        // (c) a replay killed at a pseudo-random call and resumed by a new process.
        let interrupted_at = (calls > 0).then(|| pick_call(args.seed, &name, bname, calls));
        let interrupted = match interrupted_at {
            Some(at) => Some(interrupted_run(
                exe,
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
            let gdir = golden.join(&name).join(bname);
            if args.bless {
                bless(&gdir, &fresh)?;
            } else if drift.is_none() {
                drift = golden_drift(&gdir, &fresh)?;
            }
        }
        budgets.push(BudgetResult {
            budget: bname,
            calls,
            interrupted_at,
            last_reported_before_kill: interrupted.as_ref().map(|i| i.last_reported),
            resumed_from: interrupted.as_ref().and_then(|i| i.resumed_from),
            killed_by_signal: interrupted.as_ref().and_then(|i| i.killed_by),
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

/// The call at which the interrupted run is killed: seeded, so a failure replays.
fn pick_call(seed: u64, fixture: &str, budget: &str, calls: u32) -> u32 {
    let h = blake3::hash(format!("{seed}\0{fixture}\0{budget}").as_bytes());
    let n = u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"));
    1 + (n % u64::from(calls)) as u32
}

/// Replay in a child process, SIGKILL it once call `at` is reported, then
/// resume in a new process; return the views of every call.
fn interrupted_run(
    exe: &Path,
    fixture: &Path,
    task: &str,
    budget: &Budget,
    at: u32,
    calls: u32,
    dir: &Path,
) -> Result<Interrupted> {
    let db = dir.join("interrupted.db");
    let views = dir.join("views");
    import(&mut Store::open(&DbLocation::File(db.clone()))?, fixture)?;
    let base = |extra: &[String]| {
        let mut c = Command::new(exe);
        c.arg("--db")
            .arg(&db)
            .arg("--quiet")
            .arg("--color=never")
            .arg("replay")
            .arg("--task")
            .arg(task)
            .args(budget_flags(budget))
            .arg("--views")
            .arg(&views)
            .arg("--jsonl")
            .args(extra)
            .env_remove("COMPACTOR_DB")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    };
    let mut child = base(&[]).spawn().context("cannot start the child replay")?;
    let stdout = child.stdout.take().expect("piped");
    // The child runs ahead of what this process has read: by the time the
    // kill lands it may have finished (and stored) later calls. Read what it
    // printed up to its death; the resumed process starts after the last call
    // it reported (re-running the one it may have stored but not reported).
    let mut killed = false;
    let mut last = None;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            if killed {
                break; // a line cut short by the kill
            }
            bail!("the child replay printed {line:?}");
        };
        let step = v["step"].as_u64().and_then(|s| u32::try_from(s).ok());
        last = step.or(last);
        if !killed && step == Some(at) {
            child.kill().context("cannot kill the child replay")?; // SIGKILL on Unix
            killed = true;
        }
    }
    let status = child.wait()?;
    if !killed {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err)?;
        }
        bail!("the child replay ended ({status}) before call {at}: {err}");
    }
    let last = last.expect("the child reported call `at`");
    let resumed_from = (last < calls).then_some(last + 1);
    if let Some(from) = resumed_from {
        let out = base(&[
            "--from".to_string(),
            from.to_string(),
            "--resume".to_string(),
        ])
        .output()
        .context("cannot start the resumed replay")?;
        if !out.status.success() {
            bail!(
                "the resumed replay failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let views = (1..=calls)
        .map(|k| {
            let p = views.join(format!("call-{k:04}.json"));
            std::fs::read(&p)
                .with_context(|| format!("the interrupted run wrote no view for call {k}"))
        })
        .collect::<Result<_>>()?;
    Ok(Interrupted {
        views,
        last_reported: last,
        resumed_from,
        killed_by: kill_signal(&status),
    })
}

/// What the interrupted run did.
struct Interrupted {
    views: Vec<Vec<u8>>,
    /// The last call the killed process reported.
    last_reported: u32,
    /// Where the new process resumed (`None`: the killed one had reported every call).
    resumed_from: Option<u32>,
    /// The signal that ended the killed process (`None`: it exited by itself first).
    killed_by: Option<i32>,
}

#[cfg(unix)]
fn kill_signal(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

#[cfg(not(unix))]
fn kill_signal(status: &std::process::ExitStatus) -> Option<i32> {
    (!status.success()).then_some(9)
}

pub fn budget_flags(b: &Budget) -> Vec<String> {
    vec![
        format!("--window={}", b.window),
        format!("--output-reserved={}", b.output_reserved),
        format!("--trigger-ratio={}", b.trigger_ratio),
        format!("--stop-ratio={}", b.stop_ratio),
        format!("--protect-recent-steps={}", b.protect_recent_steps),
        format!("--summary-budget={}", b.summary_budget_tokens),
    ]
}

/// Where two series of views first differ: call, message and byte.
fn first_drift(a: &[Vec<u8>], b: &[Vec<u8>], la: &str, lb: &str) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{la} has {} calls, {lb} has {}", a.len(), b.len()));
    }
    let k = a.iter().zip(b).position(|(x, y)| x != y)?;
    Some(format!(
        "call {}: {la} and {lb} differ {}",
        k + 1,
        where_differs(&a[k], &b[k])
    ))
}

fn where_differs(x: &[u8], y: &[u8]) -> String {
    let byte = x
        .iter()
        .zip(y)
        .position(|(p, q)| p != q)
        .unwrap_or(x.len().min(y.len()));
    let part = match (View::from_json(x), View::from_json(y)) {
        (Ok(vx), Ok(vy)) => {
            let m = (0..vx.messages.len().max(vy.messages.len()))
                .find(|&i| vx.messages.get(i) != vy.messages.get(i))
                .unwrap_or(0);
            let p = match (vx.messages.get(m), vy.messages.get(m)) {
                (Some(a), Some(b)) => (0..a.content.len().max(b.content.len()))
                    .find(|&j| a.content.get(j) != b.content.get(j))
                    .unwrap_or(0),
                _ => 0,
            };
            format!(" (message {m}, part {p})")
        }
        _ => String::new(),
    };
    format!("at byte {byte}{part}")
}

fn bless(dir: &Path, views: &[Vec<u8>]) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (i, v) in views.iter().enumerate() {
        std::fs::write(golden_path(dir, i as u32 + 1), v)?;
    }
    Ok(())
}

fn golden_path(dir: &Path, k: u32) -> PathBuf {
    dir.join(format!("call-{k:04}.json"))
}

fn golden_drift(dir: &Path, views: &[Vec<u8>]) -> Result<Option<String>> {
    if !dir.is_dir() {
        return Ok(Some(format!(
            "no golden files in {}; run with --bless to write them",
            dir.display()
        )));
    }
    for (i, v) in views.iter().enumerate() {
        let k = i as u32 + 1;
        let path = golden_path(dir, k);
        let Ok(golden) = std::fs::read(&path) else {
            return Ok(Some(format!("call {k}: no golden file {}", path.display())));
        };
        if &golden != v {
            return Ok(Some(format!(
                "call {k}: the view differs from the golden file {} {}",
                path.display(),
                where_differs(&golden, v)
            )));
        }
    }
    let extra = golden_path(dir, views.len() as u32 + 1);
    if extra.exists() {
        return Ok(Some(format!(
            "the golden files have more calls than the replay ({} exists)",
            extra.display()
        )));
    }
    Ok(None)
}

fn print_fixture(ui: &mut Ui, r: &FixtureResult, seed: u64) -> Result<()> {
    writeln!(
        ui.out,
        "{} (task {})",
        paint(ui.color, style::BOLD, &r.fixture),
        r.task
    )?;
    for b in &r.budgets {
        let tiers = if b.tiers_seen.is_empty() {
            "no tiers".to_string()
        } else {
            b.tiers_seen.join(",")
        };
        let kill = match (b.interrupted_at, b.last_reported_before_kill) {
            (Some(k), Some(last)) => {
                let ahead = if last > k {
                    format!("; it had reported call {last}")
                } else {
                    String::new()
                };
                match b.resumed_from {
                    Some(r) => {
                        format!(", killed at call {k} (seed {seed}{ahead}) and resumed at call {r}")
                    }
                    None => format!(
                        ", killed at call {k} (seed {seed}{ahead}) with no call left to resume"
                    ),
                }
            }
            _ => String::new(),
        };
        match &b.drift {
            None => writeln!(
                ui.out,
                "  {} {:<8} {} calls identical: fresh = reopened = resumed{kill} · {tiers}",
                paint(ui.color, style::GREEN, "ok  "),
                b.budget,
                b.calls
            )?,
            Some(d) => writeln!(
                ui.out,
                "  {} {:<8} {d}",
                paint(ui.color, style::RED, "DRIFT"),
                b.budget
            )?,
        }
    }
    Ok(())
}
