//! Runs that leave no trace: `compact`, `step` and `preflight` work on a
//! scratch copy unless `--in-place`, and in place each profile keeps its own
//! compaction state. So the same command gives the same view on a fresh store
//! and on a store used for anything else before.

use crate::util::{
    BREAKTHROUGH, DISPOSABLE, FOLD, SHRINK_FLOOR, SHRINK_FLOOR_TASK, TENANT, TIGHT, TestEnv, args,
    corpus, field_of, in_place_compact, jsonl_files,
};

/// `compact --task TASK` at the default budget, with `more`: the view's bytes.
fn default_view(env: &TestEnv, task: &str, more: &[&str]) -> Vec<u8> {
    let mut a = vec!["compact", "--task", task, "-o", "state.json"];
    a.extend_from_slice(more);
    let run = env.run(&a);
    assert!(run.status <= 1, "{}", run.snapshot());
    std::fs::read(env.work().join("state.json")).unwrap()
}

/// The state test on one store holding `task`, whose fresh default view is
/// `fresh`: what-if runs at 32k and 6k change nothing, and in place the
/// default profile restores nothing the 32k profile minted.
fn state_check(env: &TestEnv, task: &str, fresh: &[u8], what: &str) {
    for budget in [FOLD, TIGHT] {
        for cmd in ["compact", "step", "preflight"] {
            let mut a = vec![cmd, "--task", task];
            if cmd == "compact" {
                a.extend(["-o", "what-if.json"]);
            }
            let run = env.run(&args(&a, &budget));
            // A refused budget (the task's system prompt and tools alone
            // exceed it) leaves no trace either.
            assert!(
                run.status <= 1 || run.refused_below_overhead(),
                "{what} {cmd}: {}",
                run.snapshot()
            );
        }
    }
    assert!(
        env.snapshot_rows().is_empty(),
        "{what}: a what-if run wrote compaction state"
    );
    assert_eq!(
        default_view(env, task, &[]),
        fresh,
        "{what}: the default compact differs after runs at 32k and 6k"
    );

    // In place: 32k, then the default profile.
    let run = env.run(&args(
        &["compact", "--task", task, "-o", "fold.json", "--in-place"],
        &FOLD,
    ));
    assert!(
        run.status <= 1 || run.refused_below_overhead(),
        "{what}: {}",
        run.snapshot()
    );
    let fold_rows = env.snapshot_rows();
    assert_eq!(
        default_view(env, task, &["--in-place"]),
        fresh,
        "{what}: the default --in-place compact restored state of the 32k profile"
    );
    // The 32k profile's state is still there, untouched.
    let after = env.snapshot_rows();
    assert!(
        fold_rows.iter().all(|r| after.contains(r)),
        "{what}: the default run changed the 32k profile's state"
    );
    // And reset forgets it all, never the raw record.
    let [messages, _, forms] = env.counts();
    env.run(&["reset", task]).success();
    assert!(env.snapshot_rows().is_empty(), "{what}");
    let [m, _, f] = env.counts();
    assert_eq!(
        (m, f),
        (messages, forms),
        "{what}: reset touched the record"
    );
}

#[test]
fn what_if_runs_leave_no_trace_on_the_fixtures() {
    for f in [SHRINK_FLOOR, TENANT, DISPOSABLE, BREAKTHROUGH] {
        let fresh_env = TestEnv::new();
        fresh_env.import_fixture(f);
        let tasks = fresh_env.tasks();
        let env = TestEnv::new();
        env.import_fixture(f);
        for t in tasks.iter().filter(|t| t["parent"].is_null()) {
            let id = t["id"].as_str().unwrap();
            let fresh = default_view(&fresh_env, id, &[]);
            state_check(&env, id, &fresh, &format!("{f} {id}"));
        }
    }
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn what_if_runs_leave_no_trace_on_the_corpus() {
    let Some(dir) = corpus("what_if_runs_leave_no_trace_on_the_corpus") else {
        return;
    };
    let mut sessions = 0;
    for file in jsonl_files(&dir) {
        let file = file.display().to_string();
        let fresh_env = TestEnv::new();
        fresh_env.run(&["import", &file]).success();
        let env = TestEnv::new();
        env.run(&["import", &file]).success();
        for t in fresh_env.tasks().iter().filter(|t| t["parent"].is_null()) {
            let id = t["id"].as_str().unwrap();
            if t["steps"].as_u64().unwrap_or(0) == 0 {
                continue;
            }
            let fresh = default_view(&fresh_env, id, &[]);
            state_check(&env, id, &fresh, id);
            sessions += 1;
        }
    }
    assert!(sessions >= 20, "only {sessions} corpus sessions checked");
}

#[test]
fn reset_forgets_one_profile_or_all() {
    let env = TestEnv::new();
    env.import_fixture(SHRINK_FLOOR);
    for budget in [FOLD, TIGHT] {
        env.run(&in_place_compact(SHRINK_FLOOR_TASK, &budget))
            .success();
    }
    let profiles = |env: &TestEnv| -> Vec<String> {
        let conn = env.conn();
        let mut stmt = conn
            .prepare("SELECT DISTINCT profile FROM task_compaction_snapshot ORDER BY profile")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    let both = profiles(&env);
    assert_eq!(both.len(), 2, "{both:?}");
    let run = env.run(&[
        "reset",
        SHRINK_FLOOR_TASK,
        "--profile",
        &both[0][..8],
        "--json",
    ]);
    run.success();
    let r = run.json();
    assert_eq!(r["schema"], "compactor.reset/1");
    assert_eq!(r["profile"], both[0].as_str());
    assert!(r["entries_forgotten"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(profiles(&env), vec![both[1].clone()]);
    let run = env.run(&["reset", SHRINK_FLOOR_TASK]);
    run.success().stdout_has("the raw record is untouched");
    assert!(profiles(&env).is_empty());
    let run = env.run(&["reset", "nope"]);
    run.failure(2).stderr_has("unknown task \"nope\"");
}

#[test]
fn restored_counts_what_the_view_holds() {
    // A shrink at call 9 (in place), then call 10 within the same turn: its
    // view holds the three forms the previous call swapped in, carried from
    // that call rather than re-applied from the store, and says so.
    let env = TestEnv::new();
    env.import_fixture(TENANT);
    let task = env.tasks()[0]["id"].as_str().unwrap().to_string();
    let step = |k: &str| {
        let run = env.run(&args(
            &["step", "--task", &task, "--at", k, "--in-place", "--json"],
            &FOLD,
        ));
        run.success();
        run.json()
    };
    let nine = step("9");
    let shrunk: u64 = field_of(&nine["tiers"], "parts_shrunk", serde_json::Value::as_u64)
        .iter()
        .sum();
    assert!(shrunk > 0, "{nine}");
    let ten = step("10");
    assert_eq!(ten["tiers_fired"], serde_json::json!([]), "{ten}");
    assert_eq!(ten["restored"]["forms_applied"], shrunk, "{ten}");
}

#[test]
fn import_and_tasks_count_the_same_rows() {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let run = env.run(&["import", &file, "--json"]);
    run.success();
    let imported = run.json();
    let added = imported["tasks"][0]["added"].as_u64().unwrap();
    let task = env.task(SHRINK_FLOOR_TASK);
    assert_eq!(task["rows"], added, "{task}");
    assert!(task["messages"].as_u64().unwrap() <= added);
    assert_eq!(task["calls"], task["steps"]);
}
