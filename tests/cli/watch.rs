//! `compactor watch`: one report per model call, the same as `step --at CALL`.
//! The file is complete before watch starts and the idle timeout only ends
//! the run, so nothing here depends on timing.

use serde_json::Value;

use crate::import::{CLAUDE_TASK, CODEX_TASK};
use crate::util::TestEnv;

#[test]
fn watch_json_lines_equal_step_json_of_each_call() {
    for (rel, task, calls) in [
        ("claude-code/small-session.jsonl", CLAUDE_TASK, 7),
        ("codex/small-rollout.jsonl", CODEX_TASK, 4),
    ] {
        let env = TestEnv::new();
        let file = env.fixture(rel);
        let run = env.run(&[
            "watch",
            &file,
            "--json",
            "--until-idle",
            "2",
            "--window",
            "40000",
        ]);
        run.success();
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), calls, "{rel}: {}", run.stdout);
        for (i, line) in lines.iter().enumerate() {
            let k = (i + 1).to_string();
            let step = env.run(&[
                "step", "--task", task, "--at", &k, "--json", "--window", "40000",
            ]);
            assert_eq!(*line, step.stdout.trim_end(), "{rel} call {k}");
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["call"], i + 1);
        }
        run.stderr_has(format!("(task {task})"));
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
    // A tight window: the step report names the tiers that fire and the status.
    let run = env.run(&[
        "watch",
        "latest",
        "--until-idle",
        "0",
        "--window",
        "12000",
        "--output-reserved",
        "1000",
    ]);
    let last = run.stdout.lines().last().unwrap().to_string();
    let step = env.run(&[
        "step",
        "--task",
        CODEX_TASK,
        "--at",
        "4",
        "--json",
        "--window",
        "12000",
        "--output-reserved",
        "1000",
    ]);
    let v: Value = step.json();
    let status = v["status"].as_str().unwrap();
    assert!(
        last.ends_with(&format!(" · {status}")),
        "{last} vs {status}"
    );
    let after = v["tokens_after"].as_u64().unwrap();
    assert!(last.contains(&format!("→ {after} tokens")), "{last}");
}

#[test]
fn watch_of_an_unknown_task_is_an_input_error() {
    let env = TestEnv::new();
    let run = env.run(&["watch", "nope", "--until-idle", "0"]);
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
fn without_a_window_watch_takes_the_sessions_as_step_does() {
    let env = TestEnv::new();
    let file = env.fixture("codex/small-rollout.jsonl");
    let run = env.run(&["watch", &file, "--json", "--until-idle", "0"]);
    run.success();
    let first: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    // The rollout recorded `model_context_window` 258400.
    assert_eq!(first["budget"]["window"], 258400, "{first}");
    assert_eq!(first["budget"]["output_reserved"], 20000, "{first}");
    let step = env.run(&["step", "--task", CODEX_TASK, "--at", "1", "--json"]);
    assert_eq!(run.stdout.lines().next().unwrap(), step.stdout.trim_end());
}
