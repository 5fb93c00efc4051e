//! `compactor diff A B`: view files and saved runs; exit 0 identical,
//! 1 different (showing where), 2 error.

use crate::util::{FOLD, SHRINK_FLOOR, SHRINK_FLOOR_TASK, TIGHT, TestEnv, args, valid_view};

/// A store with the shrink fixture and the final view of a fold-budget
/// compaction written to `view.json`.
fn with_view() -> (TestEnv, Vec<u8>) {
    let env = TestEnv::new();
    env.import_fixture(SHRINK_FLOOR);
    env.run(&args(
        &["compact", "--task", SHRINK_FLOOR_TASK, "-o", "view.json"],
        &FOLD,
    ))
    .success();
    let (bytes, _) = valid_view(&env.work().join("view.json"));
    (env, bytes)
}

#[test]
fn a_view_and_itself_are_identical() {
    let (env, bytes) = with_view();
    env.write("copy.json", &bytes);
    for (a, b) in [("view.json", "view.json"), ("view.json", "copy.json")] {
        let run = env.run(&["diff", a, b]);
        run.success();
        assert_eq!(run.stdout, format!("{a} and {b} are identical\n"));
        let run = env.run(&["diff", "--stat", a, b]);
        run.success();
        assert_eq!(run.stdout, "0 messages differ, +0 −0 lines\n");
    }
}

#[test]
fn a_one_byte_change_inside_a_text_is_shown() {
    let (env, bytes) = with_view();
    // "Reading module 8." → "Reading module 9.": still a valid view.
    let at = bytes
        .windows(16)
        .position(|w| w == b"Reading module 8")
        .expect("the view has call 8's text")
        + 15;
    let mut changed = bytes.clone();
    changed[at] = b'9';
    env.write("changed.json", &changed);
    valid_view(&env.work().join("changed.json"));

    let run = env.run(&["diff", "view.json", "changed.json"]);
    run.failure(1);
    assert!(
        run.stdout.starts_with(&format!(
            "first difference at byte {at}\n--- view.json\n+++ changed.json\n"
        )),
        "{}",
        run.stdout
    );
    run.stdout_has("\n-Reading module 8.\n+Reading module 9.\n");
    // The message and part are named in the hunk's context.
    run.stdout_has("--- part 1.0\n");
    let minus = run
        .stdout
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .count();
    assert_eq!(minus, 1, "{}", run.stdout);

    let run = env.run(&["diff", "--stat", "view.json", "changed.json"]);
    run.failure(1);
    let messages = compactor::view::View::from_json(&bytes)
        .unwrap()
        .messages
        .len();
    assert_eq!(
        run.stdout,
        format!("1 of {messages} messages differs, +1 −1 lines, first difference at byte {at}\n")
    );
}

#[test]
fn a_one_byte_change_that_breaks_the_json_is_shown() {
    let (env, bytes) = with_view();
    // The ':' after the first "text" key becomes 'X': no longer JSON.
    let at = bytes.windows(7).position(|w| w == b"\"text\":").unwrap() + 6;
    let mut broken = bytes.clone();
    broken[at] = b'X';
    env.write("broken.json", &broken);
    assert!(compactor::view::View::from_json(&broken).is_err());

    let run = env.run(&["diff", "view.json", "broken.json"]);
    run.failure(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "(not both views: compared as text)");
    assert_eq!(lines[1], format!("first difference at byte {at}"));
    // The excerpt shows the bytes around the change on each side.
    assert!(
        lines[2].starts_with("  view.json: ") && lines[2].contains("\"text\":\"## Task Context"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with("  broken.json: ") && lines[3].contains("\"text\"X\"## Task Context"),
        "{}",
        lines[3]
    );
    // Both sides are diffed as the same kind of text (the raw bytes).
    run.stdout_has("\n--- view.json\n+++ broken.json\n");
    assert!(!run.stdout.contains("=== message"), "{}", run.stdout);

    let run = env.run(&["diff", "--stat", "view.json", "broken.json"]);
    run.failure(1);
    assert_eq!(
        run.stdout,
        format!("compared as text, +1 −1 lines, first difference at byte {at}\n")
    );
}

#[test]
fn a_missing_file_is_an_error() {
    let (env, _) = with_view();
    for (a, b) in [("view.json", "absent.json"), ("absent.json", "view.json")] {
        let run = env.run(&["diff", a, b]);
        run.failure(2);
        assert!(run.stdout.is_empty());
        assert!(
            run.stderr.starts_with("error: cannot read absent.json"),
            "{}",
            run.stderr
        );
    }
    let run = env.run(&["diff", "view.json"]);
    run.failure(2);
}

/// Saved runs of the shrink fixture's task (each replays a scratch copy,
/// so no run replays over what another stored): `fold` and `fold2` under the
/// fold budget, `tight` under the tight one. Returns the store and each
/// run's `replay --json` output.
fn with_runs() -> (TestEnv, Vec<serde_json::Value>) {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    env.run(&["import", &file]).success();
    let mut outs = Vec::new();
    for (name, task, budget) in [
        ("fold", SHRINK_FLOOR_TASK, FOLD),
        ("fold2", SHRINK_FLOOR_TASK, FOLD),
        ("tight", SHRINK_FLOOR_TASK, TIGHT),
    ] {
        let run = env.run(&args(
            &[
                "replay", "--task", task, "--json", "--save", name, "--views", name,
            ],
            &budget,
        ));
        run.success();
        outs.push(run.json());
    }
    (env, outs)
}

fn view_hashes(r: &serde_json::Value) -> Vec<&str> {
    r["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["view_hash"].as_str().unwrap())
        .collect()
}

/// The saved runs, the first call where the fold and tight runs differ, and
/// how many calls differ.
fn fold_and_tight() -> (TestEnv, usize, usize) {
    let (env, outs) = with_runs();
    let (fold, tight) = (view_hashes(&outs[0]), view_hashes(&outs[2]));
    let pairs = || fold.iter().zip(&tight);
    let first = pairs().position(|(a, b)| a != b).unwrap() + 1;
    let differing = pairs().filter(|(a, b)| a != b).count();
    (env, first, differing)
}

#[test]
fn runs_with_different_budgets_report_the_first_diverging_call() {
    let (env, first, differing) = fold_and_tight();
    let run = env.run(&["diff", "run:fold", "run:tight"]);
    run.failure(1);
    let mut lines = run.stdout.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "runs fold and tight first diverge at call {first} (turn 1); {differing} of 20 common calls differ"
        )
    );
    assert_eq!(lines.next().unwrap(), "first difference at byte 62");
    run.stdout_has(format!("--- run:fold@{first}\n+++ run:tight@{first}\n"));
    let run = env.run(&["diff", "--stat", "run:fold", "run:tight"]);
    run.failure(1);
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .unwrap()
            .contains(" messages differ, +"),
        "{}",
        run.stdout
    );
}

#[test]
fn identical_runs_and_single_calls_compare() {
    let (env, outs) = with_runs();
    assert_eq!(view_hashes(&outs[0]), view_hashes(&outs[1]));
    let run = env.run(&["diff", "run:fold", "run:fold2"]);
    run.success();
    assert_eq!(
        run.stdout,
        "runs fold and fold2 are identical over 20 calls\n"
    );
    let run = env.run(&["diff", "--stat", "run:fold", "run:fold2"]);
    run.success();

    // run:NAME@CALL is that call's view: equal to the file written then.
    let run = env.run(&["diff", "run:fold@7", "fold/call-0007.json"]);
    run.success();
    assert_eq!(
        run.stdout,
        "run:fold@7 and fold/call-0007.json are identical\n"
    );
    let run = env.run(&["diff", "run:fold@7", "run:fold2@7"]);
    run.success();
    let run = env.run(&["diff", "run:fold@7", "fold/call-0008.json"]);
    run.failure(1);
    assert!(
        run.stdout.starts_with("first difference at byte "),
        "{}",
        run.stdout
    );
    let run = env.run(&["diff", "run:fold@5", "run:tight@5"]);
    run.failure(1)
        .stdout_has("--- run:fold@5\n+++ run:tight@5\n");
    // A whole run against one view stands for its last call.
    let run = env.run(&["diff", "run:tight", "tight/call-0020.json"]);
    run.success();
    assert_eq!(
        run.stdout,
        "run:tight@20 and tight/call-0020.json are identical\n"
    );
}

#[test]
fn unknown_runs_and_calls_are_errors() {
    let (env, _) = with_runs();
    for (a, b, message) in [
        (
            "run:fold",
            "run:nope",
            "no saved run named \"nope\"\nhint: `compactor runs` lists them",
        ),
        ("run:nope@3", "run:fold", "no saved run named \"nope\""),
        ("run:fold@99", "run:fold", "run \"fold\" has no call 99"),
        (
            "run:fold@x",
            "run:fold",
            "\"x\" is not a call number; expected run:NAME@CALL",
        ),
    ] {
        let run = env.run(&["diff", a, b]);
        run.failure(2);
        assert!(run.stderr.contains(message), "{a} {b}: {}", run.stderr);
    }
}

#[test]
fn json_gives_the_first_divergence_and_the_changed_parts() {
    let (env, first, differing) = fold_and_tight();
    let run = env.run(&["diff", "run:fold", "run:tight", "--json"]);
    run.failure(1);
    assert_eq!(run.stdout.lines().count(), 1, "compact JSON");
    let v = run.json();
    assert_eq!(v["schema"], "compactor.diff/1");
    assert_eq!(v["identical"], false);
    assert_eq!(v["first_divergence"]["call"], first as u64);
    assert_eq!(v["calls_differing"], differing as u64);
    assert_eq!(v["first_byte"], 62);
    let changed = v["changed"].as_array().unwrap();
    assert!(!changed.is_empty(), "{v}");
    for c in changed {
        assert_ne!(c["a"], c["b"], "{c}");
    }
    // Identical runs: no divergence, nothing changed, exit 0.
    let run = env.run(&["diff", "run:fold", "run:fold2", "--json"]);
    run.success();
    let v = run.json();
    assert_eq!(v["identical"], true);
    assert_eq!(v["first_divergence"], serde_json::Value::Null);
    assert_eq!(v["changed"], serde_json::json!([]));
    // Two view files.
    let a = format!("fold/call-{first:04}.json");
    let b = format!("tight/call-{first:04}.json");
    let run = env.run(&["diff", &a, &b, "--json"]);
    run.failure(1);
    let v = run.json();
    assert_eq!(v["a"], a.as_str());
    assert!(!v["changed"].as_array().unwrap().is_empty(), "{v}");
}

/// A run's name is its task's: two tasks each save `fold` and `tight`,
/// neither replacing the other's. `diff run:fold run:tight` then needs
/// `--task` (both tasks saved both); two runs found in different tasks are
/// refused (they replay different conversations) unless `--across-tasks`.
#[test]
fn run_names_are_their_tasks_and_a_diff_across_tasks_is_asked_for() {
    let (env, outs) = with_runs();
    let file = env.fixture(SHRINK_FLOOR);
    env.run(&["import", &file, "--task", "other"]).success();
    for (name, budget) in [("fold", FOLD), ("tight", TIGHT), ("only-other", TIGHT)] {
        env.run(&args(
            &["replay", "--task", "other", "--save", name, "--to", "12"],
            &budget,
        ))
        .success();
    }
    // The first task's run is as it was saved.
    let runs = env.run(&["runs", "--json"]).json_list();
    let fold: Vec<&serde_json::Value> = runs.iter().filter(|r| r["name"] == "fold").collect();
    assert_eq!(fold.len(), 2, "{runs:?}");
    let mine = fold
        .iter()
        .find(|r| r["task"] == SHRINK_FLOOR_TASK)
        .unwrap();
    assert_eq!(mine["calls"], outs[0]["calls"].as_array().unwrap().len());
    // Both tasks saved both names: whose?
    env.run(&["diff", "run:fold", "run:tight"])
        .failure(2)
        .stderr_has("runs named \"fold\" and \"tight\" are saved for 2 tasks: ")
        .stderr_has("hint: pass --task TASK");
    env.run(&["diff", "--task", SHRINK_FLOOR_TASK, "run:fold", "run:fold2"])
        .success();
    env.run(&["diff", "--task", "other", "run:fold@12", "run:tight@12"])
        .failure(1);
    env.run(&["diff", "--task", "other", "run:fold2", "run:fold"])
        .failure(2)
        .stderr_has("task other has no saved run named \"fold2\"");
    // One name in each task: refused, unless asked for.
    env.run(&["diff", "run:fold2", "run:only-other"])
        .failure(2)
        .stderr_has(format!(
            "run \"fold2\" is task {SHRINK_FLOOR_TASK}'s and run \"only-other\" is task other's"
        ))
        .stderr_has("hint: pass --across-tasks");
    env.run(&[
        "diff",
        "--across-tasks",
        "--stat",
        "run:fold2@12",
        "run:only-other@12",
    ])
    .failure(1);
    // A name saved for two tasks, beside a file: whose?
    env.run(&["diff", "run:fold@7", "fold/call-0007.json"])
        .failure(2)
        .stderr_has("a run named \"fold\" is saved for 2 tasks");
    // --force replaces only the task's own run.
    env.run(&args(
        &["replay", "--task", "other", "--save", "fold"],
        &FOLD,
    ))
    .failure(2)
    .stderr_has("task other already has a run named \"fold\"");
}
