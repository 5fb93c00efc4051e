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
    /// The call after whose report the child replay was sent SIGKILL.
    interrupted_at: Option<u32>,
    /// Whether the child died of the signal (false: it had already finished).
    child_killed: Option<bool>,
    /// The call the new process resumed at: the last one the child committed.
    resumed_from: Option<u32>,
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

pub fn run(ui: &mut Ui, args: &CheckArgs, db: Option<DbLocation>) -> Result<Outcome> {
    let exe = std::env::current_exe()
        .context("cannot find the compactor executable to run the interrupted replay")?;
    // A model summarizer caches in the user's store (else in a scratch file),
    // shared with the child processes, so every run reads the same summaries.
    let scratch = tempfile::tempdir()?;
    let cache = match db {
        Some(DbLocation::File(p)) => p,
        _ => scratch.path().join("summary-cache.db"),
    };
    let summarizer = super::summarizer::Configured::new(
        args.summarizer,
        &args.llm,
        &DbLocation::File(cache.clone()),
    )?;
    let child_flags = Child {
        exe,
        flags: args.llm.to_flags(args.summarizer),
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
        let r = check_fixture(fixture, args, &summarizer, &child_flags)?;
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
        ui.json(&v)?;
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
    configured: &super::summarizer::Configured,
    child: &Child,
) -> Result<FixtureResult> {
    let summarizer = configured.get();
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
            progress: None,
        };
        if calls > 0 {
            replay(
                &mut mem,
                &index,
                settings(),
                opts,
                |row, out| -> Result<()> {
                    configured.note_call(row.step);
                    for t in &out.report.tiers_fired {
                        if !tiers_seen.contains(t) {
                            tiers_seen.push(t);
                        }
                    }
                    fresh.push(out.view.canonical_bytes());
                    Ok(())
                },
            )?;
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
            configured.note_call(k);
        }

        // (c) a replay killed at a pseudo-random call and resumed by a new process.
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

/// The call at which the interrupted run is killed: seeded, so a failure replays.
fn pick_call(seed: u64, fixture: &str, budget: &str, calls: u32) -> u32 {
    let h = blake3::hash(format!("{seed}\0{fixture}\0{budget}").as_bytes());
    let n = u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"));
    1 + (n % u64::from(calls)) as u32
}

/// Replay in a child process, SIGKILL it once call `at` is reported, then
/// resume in a new process; return the views of every call.
fn interrupted_run(
    how: &Child,
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
        let mut c = Command::new(&how.exe);
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
            .arg("--in-place")
            .args(&how.flags)
            .args(extra)
            .env_remove("COMPACTOR_DB")
            .env(crate::summarize::llm::CACHE_ENV, &how.cache)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    };
    let mut child = base(&[]).spawn().context("cannot start the child replay")?;
    let stdout = child.stdout.take().expect("piped");
    let mut reached = false;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        let v: serde_json::Value = serde_json::from_str(&line)
            .with_context(|| format!("the child replay printed {line:?}"))?;
        if v["step"].as_u64() == Some(u64::from(at)) {
            reached = true;
            child.kill().context("cannot kill the child replay")?; // SIGKILL on Unix
            break;
        }
    }
    let status = child.wait()?;
    let killed = killed_by_signal(&status);
    if !reached {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err)?;
        }
        bail!("the child replay ended ({status}) before call {at}: {err}");
    }
    // The killed child may have committed calls past the one it reported:
    // the new process resumes where the store says the replay got to.
    let resumed_from = Store::open(&DbLocation::File(db.clone()))?
        .reader()
        .replay_progress(task)?
        .map_or(1, |(k, _)| k);
    {
        let out = base(&["--resume".to_string()])
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
        killed,
        resumed_from,
    })
}

/// How to start a child replay: the executable and its summarizer settings.
struct Child {
    exe: PathBuf,
    flags: Vec<String>,
    /// The store file holding the summary cache.
    cache: PathBuf,
}

/// What the interrupted run did.
struct Interrupted {
    views: Vec<Vec<u8>>,
    /// The child died of the signal (it had not finished on its own).
    killed: bool,
    /// The call the new process started at (the last one the child committed).
    resumed_from: u32,
}

#[cfg(unix)]
fn killed_by_signal(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal().is_some()
}

#[cfg(not(unix))]
fn killed_by_signal(status: &std::process::ExitStatus) -> bool {
    !status.success()
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

/// One line of a golden file: a call's view as a delta against the previous
/// call's (its first `prefix_messages` messages, then `suffix`), with its hash.
#[derive(Serialize, serde::Deserialize)]
struct GoldenLine {
    call: u32,
    view_hash: String,
    prefix_messages: usize,
    suffix: Vec<crate::view::ViewMessage>,
}

fn golden_path(golden: &Path, fixture: &str, budget: &str) -> PathBuf {
    golden.join(fixture).join(format!("{budget}.jsonl"))
}

fn bless(path: &Path, views: &[Vec<u8>]) -> Result<()> {
    let dir = path
        .parent()
        .expect("golden files live in a fixture directory");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = Vec::new();
    let mut prev: Vec<crate::view::ViewMessage> = Vec::new();
    for (i, bytes) in views.iter().enumerate() {
        let view = View::from_json(bytes).context("a replayed view does not parse back")?;
        let shared = prev
            .iter()
            .zip(&view.messages)
            .take_while(|(a, b)| a == b)
            .count();
        let line = GoldenLine {
            call: i as u32 + 1,
            view_hash: view.hash(),
            prefix_messages: shared,
            suffix: view.messages[shared..].to_vec(),
        };
        serde_json::to_writer(&mut out, &line)?;
        out.push(b'\n');
        prev = view.messages;
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}

fn golden_drift(path: &Path, views: &[Vec<u8>]) -> Result<Option<String>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Some(format!(
            "no golden file {}; run with --bless to write it",
            path.display()
        )));
    };
    let mut prev: Vec<crate::view::ViewMessage> = Vec::new();
    let mut calls = 0usize;
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), n + 1);
        let g: GoldenLine = match serde_json::from_str(line) {
            Ok(g) => g,
            Err(e) => {
                return Ok(Some(format!(
                    "{}: the golden line does not parse ({e})",
                    at()
                )));
            }
        };
        if g.prefix_messages > prev.len() {
            return Ok(Some(format!(
                "{}: prefix_messages {} exceeds the previous view",
                at(),
                g.prefix_messages
            )));
        }
        let mut messages: Vec<_> = prev[..g.prefix_messages].to_vec();
        messages.extend(g.suffix);
        let golden = View { messages };
        let bytes = golden.canonical_bytes();
        let Some(fresh) = views.get(n) else {
            return Ok(Some(format!(
                "{}: the golden file has more calls than the replay ({})",
                at(),
                views.len()
            )));
        };
        if &bytes != fresh {
            return Ok(Some(format!(
                "call {}: the view differs from the golden file {} {}",
                g.call,
                at(),
                where_differs(&bytes, fresh)
            )));
        }
        if golden.hash() != g.view_hash {
            return Ok(Some(format!(
                "{}: call {}: the golden line's view_hash was edited",
                at(),
                g.call
            )));
        }
        prev = golden.messages;
        calls += 1;
    }
    if calls < views.len() {
        return Ok(Some(format!(
            "the golden file {} has {calls} calls, the replay {}",
            path.display(),
            views.len()
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
        let kill = match (b.interrupted_at, b.child_killed, b.resumed_from) {
            (Some(k), Some(true), Some(r)) => {
                format!(", SIGKILL after call {k} (seed {seed}), resumed at call {r}")
            }
            (Some(k), _, Some(r)) => format!(
                ", child done before the kill after call {k} (seed {seed}), resumed at call {r}"
            ),
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
