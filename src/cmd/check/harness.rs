//! The child harness: a second compactor process replays a fixture in place
//! and aborts right after committing a chosen call, so resuming can be
//! compared with a fresh run.

use super::*;
use crate::fault::{self, Fault};

/// The call after which the interrupted run aborts: seeded, so a failure replays.
pub(super) fn pick_call(seed: u64, fixture: &str, budget: &str, calls: u32) -> u32 {
    let h = blake3::hash(format!("{seed}\0{fixture}\0{budget}").as_bytes());
    let n = u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"));
    1 + (n % u64::from(calls)) as u32
}

/// Replay in a child process that aborts right after committing call `at`,
/// then resume in a new process; return the views of every call.
pub(super) fn interrupted_run(
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
            // A budget the system prompt and tools alone exceed is compared too.
            .arg("--allow-over-window")
            .args(&how.flags)
            .args(extra)
            .env_remove("COMPACTOR_DB")
            .env(crate::summarize::llm::CACHE_ENV, &how.cache)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    };
    // The child aborts right after committing call `at` (the hidden fault
    // switch): a crash at a chosen point, not a timed kill.
    let out = base(&[])
        .env(fault::ENV, Fault::AfterCall(at).env_value())
        .output()
        .context("cannot start the child replay")?;
    let killed = killed_by_signal(&out.status);
    if !killed {
        bail!(
            "the child replay ended ({}) instead of aborting after call {at}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The new process resumes where the store says the replay got to: the
    // call the child committed last.
    let resumed_from = Store::open(&DbLocation::File(db.clone()))?
        .reader()
        .any_replay_progress(task)?
        .map_or(1, |(k, _)| k);
    {
        let out = base(&["--resume".to_string()])
            .env_remove(fault::ENV)
            .output()
            .context("cannot start the resumed replay")?;
        // Exit status 1 is a replay that ran with a call over the window
        // (a tight budget): its views are what is compared.
        if !matches!(out.status.code(), Some(0 | 1)) {
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
pub(super) struct Child {
    pub(super) exe: PathBuf,
    pub(super) flags: Vec<String>,
    /// The store file holding the summary cache.
    pub(super) cache: PathBuf,
}

/// What the interrupted run did.
pub(super) struct Interrupted {
    pub(super) views: Vec<Vec<u8>>,
    /// The child died of the abort (it had not finished on its own).
    pub(super) killed: bool,
    /// The call the new process started at (the last one the child committed).
    pub(super) resumed_from: u32,
}

#[cfg(unix)]
pub(super) fn killed_by_signal(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal().is_some()
}

#[cfg(not(unix))]
pub(super) fn killed_by_signal(status: &std::process::ExitStatus) -> bool {
    !status.success()
}
