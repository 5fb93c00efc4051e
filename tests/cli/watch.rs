//! `compactor watch`: one record per model call, the one `replay` gives it.
//! The file is complete before watch starts and the idle timeout only ends
//! the run, so nothing here depends on timing (the file growing between
//! looks is tested look by look in `src/cmd/watch/tests.rs`).

use serde_json::Value;

use crate::import::CODEX_TASK;
use crate::util::{TestEnv, corpus};

/// `replay --jsonl`'s call records (its totals record left out).
fn replay_calls(env: &TestEnv, target: &[&str], budget: &[&str]) -> Vec<String> {
    let mut args = vec!["replay"];
    args.extend_from_slice(target);
    args.push("--jsonl");
    args.extend_from_slice(budget);
    let run = env.run(&args);
    // 1: a call over the window.
    assert!(matches!(run.status, 0 | 1), "{}", run.snapshot());
    run.stdout
        .lines()
        .filter(|l| !l.contains("\"compactor.replay_totals/1\""))
        .map(str::to_string)
        .collect()
}

#[track_caller]
fn assert_same_calls(watched: &str, replayed: &[String], what: &str) {
    let watched: Vec<&str> = watched.lines().collect();
    for (i, (w, r)) in watched.iter().zip(replayed).enumerate() {
        assert_eq!(w, r, "{what}: call {} differs from replay's", i + 1);
    }
    assert_eq!(watched.len(), replayed.len(), "{what}: calls reported");
}

#[test]
fn watch_json_lines_are_replays_call_records() {
    for rel in [
        "claude-code/small-session.jsonl",
        "codex/small-rollout.jsonl",
        "fixtures/claude-shrink-floor.jsonl",
    ] {
        for budget in [
            ["--window", "40000", "--output-reserved", "4000"],
            ["--window", "6000", "--output-reserved", "1000"],
        ] {
            let env = TestEnv::new();
            let file = env.fixture(rel);
            let mut args = vec!["watch", file.as_str(), "--json", "--until-idle", "0"];
            args.extend_from_slice(&budget);
            let run = env.run(&args);
            // A budget the system prompt and tools alone exceed: both refuse it.
            let mut replay = vec!["replay", file.as_str(), "--jsonl"];
            replay.extend_from_slice(&budget);
            let refused = env.run(&replay);
            if refused.status == 2 {
                run.failure(2);
                assert_eq!(run.stdout, "");
                assert_eq!(run.stderr, refused.stderr, "{rel} {budget:?}");
                continue;
            }
            run.success();
            let replayed = replay_calls(&env, &[&file], &budget);
            assert_same_calls(&run.stdout, &replayed, &format!("{rel} {budget:?}"));
            let v: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
            assert_eq!(v["schema"], "compactor.replay_call/1");
            run.stderr_has("(task ");
        }
    }
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn watch_reports_what_replay_does_on_a_corpus_session() {
    // A long session that compacts again and again at the default budget: a
    // watch that ran each call as a stateless what-if disagreed with replay
    // at 96 of its 139 calls.
    let Some(corpus) = corpus("watch_reports_what_replay_does_on_a_corpus_session") else {
        return;
    };
    let src = corpus.join(
        "claude-code/v2.1.39_spotter_compaction_subagents/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    );
    let file = src.display().to_string();
    // The default budget (no flags: watch and replay pick it the same way),
    // and one that folds.
    for budget in [
        &[][..],
        &["--window", "32000", "--output-reserved", "4000"][..],
    ] {
        let env = TestEnv::new();
        let mut args = vec!["watch", file.as_str(), "--json", "--until-idle", "0"];
        args.extend_from_slice(budget);
        let run = env.run(&args);
        run.success();
        let replayed = replay_calls(&env, &[&file], budget);
        assert_eq!(replayed.len(), 139);
        let fired = replayed
            .iter()
            .filter(|r| !r.contains("\"tiers_fired\":[]"))
            .count();
        assert!(fired > 1, "{budget:?}: tiers fire at {fired} calls");
        assert_same_calls(&run.stdout, &replayed, &format!("4d5611e5 {budget:?}"));
    }
}

#[test]
fn watch_a_task_by_name_prints_one_line_per_call() {
    let env = TestEnv::new();
    env.import_fixture("codex/small-rollout.jsonl");
    let run = env.run(&["watch", "019c", "--until-idle", "0"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    assert!(
        lines[0].starts_with("call 1 (turn 1) · ") && lines[0].ends_with(" · tiers none · ok"),
        "{}",
        lines[0]
    );
    // A window that compacts at call 2: each line names the tiers that fired
    // and the status, as replay's row of that call does, and call 3 restores
    // what call 2 shrank.
    let budget = ["--window", "20000", "--output-reserved", "1000"];
    let mut args = vec!["watch", "latest", "--until-idle", "0"];
    args.extend_from_slice(&budget);
    let run = env.run(&args);
    run.success();
    let replayed = replay_calls(&env, &["--task", CODEX_TASK], &budget);
    assert_eq!(run.stdout.lines().count(), replayed.len());
    for (line, row) in run.stdout.lines().zip(&replayed) {
        let v: Value = serde_json::from_str(row).unwrap();
        let tiers: Vec<&str> = v["tiers_fired"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let tiers = if tiers.is_empty() {
            "none".to_string()
        } else {
            tiers.join(", ")
        };
        let expected = format!(
            "call {} (turn {}) · {} → {} tokens (trigger 12350) · tiers {tiers} · {}",
            v["call"],
            v["turn"],
            v["tokens_before"],
            v["tokens_after"],
            v["status"].as_str().unwrap()
        );
        assert_eq!(line, expected);
    }
    insta::assert_snapshot!(run.snapshot());
}

#[test]
fn watch_of_an_unknown_task_is_an_input_error() {
    let env = TestEnv::new();
    env.import_fixture("codex/small-rollout.jsonl");
    let run = env.run(&["watch", "nope", "--until-idle", "0"]);
    run.failure(2).stderr_has("no file or task named \"nope\"");
    let run = env.run(&["watch", "--task", "nope", "--until-idle", "0"]);
    run.failure(2).stderr_has("unknown task \"nope\"");
}

/// Rows of the record, in order.
fn rows(db: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT task_id, seq, hex(row_hash) FROM task_message ORDER BY task_id, seq")
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{} {} {}",
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn a_watch_stopped_mid_import_leaves_the_last_whole_import() {
    // A stop while the grown file is being read (the crash switch, not a
    // timed kill): the store holds what the previous import committed, whole,
    // and the next watch catches up to what one import of the file gives.
    let env = TestEnv::new();
    let whole =
        std::fs::read_to_string(crate::util::testdata("claude-code/small-session.jsonl")).unwrap();
    let lines: Vec<&str> = whole.split_inclusive('\n').collect();
    let half = lines.len() / 2;
    env.write("live.jsonl", lines[..half].concat());
    env.run(&["watch", "live.jsonl", "--until-idle", "0"])
        .success();
    let before = rows(&env.db());
    assert!(!before.is_empty());
    env.write("live.jsonl", &whole);
    let mut cmd = env.command(&["watch", "live.jsonl", "--until-idle", "0"]);
    cmd.env("COMPACTOR_FAULT", format!("abort-after-line:{}", half + 2));
    let stopped = env.finish(cmd);
    assert_ne!(
        stopped.status,
        0,
        "the fault must stop it: {}",
        stopped.snapshot()
    );
    crate::reliability::assert_integrity(&env.db());
    assert_eq!(
        rows(&env.db()),
        before,
        "nothing of the interrupted import is stored"
    );
    let again = env.run(&["watch", "live.jsonl", "--until-idle", "0", "--json"]);
    again.success();
    let once = env.root().join("once.db");
    let mut cmd = env.bare_command();
    cmd.arg("--db").arg(&once).args(["import", "live.jsonl"]);
    env.finish(cmd).success();
    assert_eq!(rows(&env.db()), rows(&once));
    // Every call is reported once the file is whole: 7 in this session.
    assert_eq!(again.stdout.lines().count(), 7, "{}", again.stdout);
}

#[test]
fn without_a_window_watch_takes_the_sessions_as_replay_does() {
    let env = TestEnv::new();
    let file = env.fixture("codex/small-rollout.jsonl");
    let run = env.run(&["watch", &file, "--json", "--until-idle", "0"]);
    run.success();
    let replayed = replay_calls(&env, &[&file], &[]);
    assert_same_calls(&run.stdout, &replayed, "no budget flag");
    // The rollout recorded `model_context_window` 258400: the trigger is
    // (258400 − 20000) × 0.65.
    let run = env.run(&["watch", &file, "--until-idle", "0"]);
    run.success().stdout_has("(trigger 154960)");
}

/// What a newcomer hit: `watch` exited 130 silently on Ctrl-C while `proxy`
/// printed `stopped` and exited 0. One convention now: Ctrl-C is the usual
/// end of a long-running command, which finishes what it was writing,
/// prints `stopped` and exits 0. The signal is sent once watch says what it
/// watches (an event, not a timer).
#[cfg(unix)]
#[test]
fn ctrl_c_stops_watch_as_it_stops_the_proxy() {
    use std::io::{BufRead, Read};
    use std::process::Stdio;
    let env = TestEnv::new();
    let file = env.fixture("claude-code/small-session.jsonl");
    let mut child = env
        .std_command()
        .arg("--db")
        .arg(env.db())
        .args(["watch", &file, "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.starts_with("watching "), "{first}");
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{first}{rest}");
    assert!(rest.ends_with("stopped\n"), "{rest}");
    // What it printed before stopping is whole: replay's first records.
    let replayed = replay_calls(&env, &[&file], &[]);
    for (i, line) in stdout.lines().enumerate() {
        assert_eq!(line, replayed[i], "call {}", i + 1);
    }
}
