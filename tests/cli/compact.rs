//! `compactor compact`: the one-shot offline compaction. The view it writes
//! validates, its report's status matches its numbers, running it again is a
//! no-op with the same view, and the view or the report can go to stdout.

use serde_json::Value;

use crate::util::{
    BREAKTHROUGH, BUDGETS, DISPOSABLE, FOLD, SHRINK_FLOOR, SHRINK_FLOOR_CALLS, SHRINK_FLOOR_TASK,
    TENANT, TIGHT, TestEnv, args, assert_report_fields, assert_status_consistent, blake3_hex,
    in_place_compact, valid_view,
};

/// `compact FILE -o view.json --json` under `budget`: the report, checked.
fn compact(env: &TestEnv, file: &str, budget: &[&str]) -> Value {
    compact_with(env, file, budget, &[])
}

/// The same with `--in-place`: the run keeps its profile's state in the store.
fn compact_in_place(env: &TestEnv, file: &str, budget: &[&str]) -> Value {
    compact_with(env, file, budget, &["--in-place"])
}

fn compact_with(env: &TestEnv, file: &str, budget: &[&str], extra: &[&str]) -> Value {
    let _ = std::fs::remove_file(env.work().join("view.json"));
    let mut argv = vec!["compact", file, "-o", "view.json", "--json"];
    argv.extend_from_slice(extra);
    let run = env.run(&args(&argv, budget));
    let r = run.json();
    let expected = if r["status"] == "over_window" { 1 } else { 0 };
    run.failure(expected);
    assert_report_fields(&r);
    assert_status_consistent(&r);
    let (bytes, _) = valid_view(&env.work().join("view.json"));
    assert_eq!(blake3_hex(&bytes), r["view_hash"]);
    r
}

/// The shrink-floor fixture compacted under the fold budget (with `extra`):
/// the environment, the file, the report and the view's bytes.
fn shrink_floor_compacted(extra: &[&str]) -> (TestEnv, String, Value, Vec<u8>) {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let r = compact_with(&env, &file, &FOLD, extra);
    let canonical = std::fs::read(env.work().join("view.json")).unwrap();
    (env, file, r, canonical)
}

#[test]
fn the_view_validates_and_the_status_matches_the_numbers() {
    let env = TestEnv::new();
    for f in [SHRINK_FLOOR, TENANT, DISPOSABLE, BREAKTHROUGH] {
        let file = env.fixture(f);
        for (name, budget) in BUDGETS {
            let r = compact(&env, &file, &budget);
            // over_trigger only when anti-thrash held this call (within the window).
            let status = r["status"].as_str().unwrap();
            assert!(
                ["ok", "breakthrough", "over_window"].contains(&status)
                    || (status == "over_trigger" && r["gated"] == true),
                "{f} {name}: {r}"
            );
            // The final call is the next one after the record.
            let task = env.task(r["task"].as_str().unwrap());
            assert_eq!(r["call"], task["steps"].as_u64().unwrap() + 1, "{f} {name}");
            assert_eq!(r["mode"], "step");
            if name != "tight" {
                // These fixtures fit under trigger at the default and fold budgets.
                assert_eq!(r["status"], "ok", "{f} {name}: {r}");
            }
        }
    }
}

#[test]
fn the_human_report_goes_to_stdout_with_o() {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let run = env.run(&args(&["compact", &file, "-o", "view.json"], &FOLD));
    run.success();
    // What the replay did first, then the final call's report.
    assert!(
        run.stdout
            .starts_with(&format!("replayed {SHRINK_FLOOR_CALLS} recorded calls: ")),
        "{}",
        run.stdout
    );
    // Headed as what it is, and ending with where the view went.
    run.stdout_has(format!(
        "\ncompact · task {SHRINK_FLOOR_TASK} · call 21 (turn 2)\n"
    ))
    .stdout_has("\nstatus: ok · ");
    assert!(!run.stdout.contains("step ·"), "{}", run.stdout);
    let (bytes, _) = valid_view(&env.work().join("view.json"));
    let hash = blake3_hex(&bytes);
    run.stdout_has(format!(
        "view {}\nwrote the view to view.json (anthropic, {} bytes)\n",
        &hash[..16],
        bytes.len()
    ));
}

#[test]
fn running_it_again_gives_the_same_view_and_stores_nothing_new() {
    // Under each budget of the check matrix, on every fixture: the second and
    // third in-place runs resume after the first and re-run only its final call.
    for f in [SHRINK_FLOOR, DISPOSABLE, TENANT] {
        for (name, budget) in BUDGETS {
            let env = TestEnv::new();
            let file = env.fixture(f);
            let first = compact_in_place(&env, &file, &budget);
            let view = std::fs::read(env.work().join("view.json")).unwrap();
            let rows = env.snapshot_rows();
            assert!(!rows.is_empty());
            for _ in 0..2 {
                let again = compact_in_place(&env, &file, &budget);
                assert_eq!(again["view_hash"], first["view_hash"], "{f} {name}");
                assert_eq!(again["status"], first["status"], "{f} {name}");
                assert_eq!(again["tokens_after"], first["tokens_after"], "{f} {name}");
                assert_eq!(std::fs::read(env.work().join("view.json")).unwrap(), view);
                assert_eq!(env.snapshot_rows(), rows, "{f} {name}: the store changed");
            }
        }
    }
}

#[test]
fn compact_equals_a_replay_then_the_next_step() {
    // compact = replay every recorded call keeping the store, then the next call.
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let r = compact_in_place(&env, &file, &FOLD);
    let other = TestEnv::new();
    other.import_fixture(SHRINK_FLOOR);
    other
        .run(&args(
            &[
                "replay",
                "--task",
                SHRINK_FLOOR_TASK,
                "--in-place",
                "--json",
            ],
            &FOLD,
        ))
        .success();
    let run = other.run(&args(
        &["step", "--task", SHRINK_FLOOR_TASK, "--json", "--in-place"],
        &FOLD,
    ));
    run.success();
    assert_eq!(run.json()["view_hash"], r["view_hash"]);
    assert_eq!(other.snapshot_rows(), env.snapshot_rows());
    // And a compact after that replay resumes: nothing new, the same view.
    let run = other.run(&args(
        &[
            "compact",
            "--task",
            SHRINK_FLOOR_TASK,
            "--json",
            "--in-place",
            "-o",
            "v.json",
        ],
        &FOLD,
    ));
    run.success().stderr_has(format!(
            "calls 1 to {} of {SHRINK_FLOOR_TASK} already ran on this store with these settings: resuming at call {}",
            SHRINK_FLOOR_CALLS, SHRINK_FLOOR_CALLS
        ));
    assert_eq!(run.json()["view_hash"], r["view_hash"]);
    assert_eq!(other.snapshot_rows(), env.snapshot_rows());
}

#[test]
fn other_settings_replay_from_the_start() {
    // Progress is kept per settings: a compact under another budget does not
    // resume after the first one's calls.
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    compact_in_place(&env, &file, &FOLD);
    let run = env.run(&["compact", &file, "-o", "default.json", "--in-place"]);
    run.success();
    assert!(!run.stderr.contains("resuming"), "{}", run.stderr);
    let run = env.run(&args(
        &[
            "compact",
            &file,
            "-o",
            "fold.json",
            "--summarizer",
            "static",
            "--in-place",
        ],
        &FOLD,
    ));
    run.success();
    assert!(!run.stderr.contains("resuming"), "{}", run.stderr);
}

#[test]
fn export_formats() {
    let (env, file, r, canonical) = shrink_floor_compacted(&[]);
    let view = compactor::view::View::from_json(&canonical).unwrap();

    let run = env.run(&args(&["compact", &file, "--format", "anthropic"], &FOLD));
    run.success();
    assert_eq!(run.stdout.as_bytes(), &canonical[..]);

    let run = env.run(&args(
        &["compact", &file, "--format", "openai", "-o", "openai.json"],
        &FOLD,
    ));
    run.success();
    let openai: Value =
        serde_json::from_slice(&std::fs::read(env.work().join("openai.json")).unwrap()).unwrap();
    let msgs = openai["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "user");
    let tool_messages = msgs.iter().filter(|m| m["role"] == "tool").count();
    let results = view
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| matches!(b, compactor::model::Block::ToolResult { .. }))
        .count();
    assert_eq!(tool_messages, results);
    assert!(
        msgs.iter()
            .filter(|m| m["role"] == "tool")
            .all(|m| m["tool_call_id"].is_string())
    );
    // Same as exporting the anthropic view.
    let run = env.run(&["export", "view.json", "--format", "openai"]);
    assert_eq!(
        run.stdout.as_bytes(),
        &std::fs::read(env.work().join("openai.json")).unwrap()[..]
    );

    let run = env.run(&args(&["compact", &file, "--format", "markdown"], &FOLD));
    run.success();
    assert!(
        run.stdout.starts_with("### 1 · user\n\n## Task Context\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout, env.run(&["export", "view.json"]).stdout);
    assert!(
        run.stderr
            .contains(r["view_hash"].as_str().unwrap().get(..16).unwrap())
    );
}

#[test]
fn without_o_the_view_goes_to_stdout_and_the_report_to_stderr() {
    let (env, file, r, canonical) = shrink_floor_compacted(&["--in-place"]);

    let run = env.run(&args(&["compact", &file, "--in-place"], &FOLD));
    run.success();
    assert_eq!(run.stdout.as_bytes(), &canonical[..]);
    let last = run.stderr.lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "compacted {SHRINK_FLOOR_TASK}: replayed 0 recorded calls: no tier fired; final view {} → {} tokens, tiers -, status ok, view {}",
            r["tokens_before"],
            r["tokens_after"],
            &r["view_hash"].as_str().unwrap()[..16]
        )
    );
    // --json without -o: the JSON report on stderr, the view on stdout.
    let run = env.run(&args(&["compact", &file, "--json"], &FOLD));
    run.success();
    assert_eq!(run.stdout.as_bytes(), &canonical[..]);
    let json_line = run.stderr.lines().last().unwrap();
    let report: Value = serde_json::from_str(json_line).unwrap();
    assert_eq!(report["view_hash"], r["view_hash"]);
    // --quiet keeps stdout clean and stderr empty.
    let mut cmd = env.command(&args(&["--quiet", "compact", &file], &FOLD));
    cmd.env("NO_COLOR", "1");
    let run = env.finish(cmd);
    run.success();
    assert_eq!(run.stdout.as_bytes(), &canonical[..]);
    assert!(run.stderr.is_empty(), "{}", run.stderr);

    // On a fresh store the whole record is replayed.
    let fresh = TestEnv::new();
    let file = fresh.fixture(SHRINK_FLOOR);
    let run = fresh.run(&args(&["compact", &file], &FOLD));
    run.success().stderr_has(format!(
        "compacted {SHRINK_FLOOR_TASK}: replayed {SHRINK_FLOOR_CALLS} recorded calls: "
    ));
    assert_eq!(run.stdout.as_bytes(), &canonical[..]);
}

#[test]
fn bad_parameters_are_refused() {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let run = env.run(&["compact", &file, "--stop-ratio", "0.8"]);
    run.failure(2).stderr_has("must be below the trigger ratio");
    assert_eq!(
        env.counts(),
        [0, 0, 0],
        "nothing imported before the budget is checked"
    );
    let run = env.run(&["compact", "--task", "nope"]);
    run.failure(2).stderr_has("unknown task \"nope\"");
    let run = env.run(&["compact", &file, "--format", "yaml"]);
    run.failure(2);
}

/// The replay progress of the shrink fixture's task under a window:
/// (last call, settings).
fn progress(env: &TestEnv, window: u64) -> Option<(u64, Value)> {
    if !env.db().exists() {
        return None;
    }
    env.conn()
        .query_row(
            "SELECT last_call, settings FROM replay_progress WHERE task_id = ?1
               AND json_extract(settings, '$.budget.window') = ?2",
            rusqlite::params![SHRINK_FLOOR_TASK, window as i64],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)),
        )
        .ok()
        .map(|(k, s)| (k, serde_json::from_str(&s).unwrap()))
}

#[test]
fn progress_records_in_place_runs_under_their_settings() {
    let env = TestEnv::new();
    env.import_fixture(SHRINK_FLOOR);
    // A one-off step is not a run from the start: it records no progress.
    env.run(&args(
        &["step", "--task", SHRINK_FLOOR_TASK, "--at", "5"],
        &FOLD,
    ))
    .success();
    assert_eq!(progress(&env, 32000), None);
    // A default replay works on a scratch copy: no progress either.
    env.run(&args(
        &["replay", "--task", SHRINK_FLOOR_TASK, "--json"],
        &FOLD,
    ))
    .success();
    assert_eq!(progress(&env, 32000), None);
    // A default compact works on a scratch copy too.
    env.run(&args(
        &["compact", "--task", SHRINK_FLOOR_TASK, "-o", "v.json"],
        &FOLD,
    ))
    .success();
    assert_eq!(progress(&env, 32000), None);
    assert!(env.snapshot_rows().is_empty());
    // An in-place replay records the last call it committed, with its settings.
    env.run(&args(
        &[
            "replay",
            "--task",
            SHRINK_FLOOR_TASK,
            "--in-place",
            "--to",
            "3",
            "--json",
        ],
        &FOLD,
    ))
    .success();
    let (k, settings) = progress(&env, 32000).unwrap();
    assert_eq!(k, 3);
    assert_eq!(settings["budget"]["window"], 32000);
    assert_eq!(settings["summarizer"], "extractive");
    // compact under the same settings resumes there...
    let run = env.run(&in_place_compact(SHRINK_FLOOR_TASK, &FOLD));
    run.success().stderr_has("resuming at call 3");
    assert_eq!(progress(&env, 32000).unwrap().0, SHRINK_FLOOR_CALLS + 1);
    // ...and under other settings starts over from call 1, in its own profile.
    let run = env.run(&[
        "compact",
        "--task",
        SHRINK_FLOOR_TASK,
        "-o",
        "w.json",
        "--in-place",
    ]);
    run.success();
    assert!(!run.stderr.contains("resuming"), "{}", run.stderr);
    let (k, settings) = progress(&env, 200000).unwrap();
    assert_eq!(k, SHRINK_FLOOR_CALLS + 1);
    assert_eq!(settings["budget"]["window"], 200000);
    assert_eq!(progress(&env, 32000).unwrap().0, SHRINK_FLOOR_CALLS + 1);
}

#[test]
fn a_grown_session_is_compacted_incrementally_to_the_fresh_result() {
    // The tenant rollout cut before a turn_context line (an unfinished
    // session), compacted; then the file grows to its full length and is
    // compacted again: only the new calls run, and the view is the one a
    // fresh store gives for the whole file.
    let full = std::fs::read_to_string(crate::util::testdata(TENANT)).unwrap();
    for (cut, budget) in [(64, FOLD), (118, TIGHT)] {
        let lines: Vec<&str> = full.lines().collect();
        assert!(lines[cut].contains("\"turn_context\""));
        let env = TestEnv::new();
        env.write("s.jsonl", format!("{}\n", lines[..cut].join("\n")));
        let early = compact_in_place(&env, "s.jsonl", &budget);
        let fewer = early["call"].as_u64().unwrap() - 1;
        assert!(fewer < 25, "{early}");
        env.write("s.jsonl", &full);
        let run = env.run(&args(
            &[
                "compact",
                "s.jsonl",
                "-o",
                "view.json",
                "--json",
                "--in-place",
            ],
            &budget,
        ));
        run.success()
            .stderr_has(format!("calls 1 to {} of ", fewer + 1));
        let grown = run.json();
        let fresh = TestEnv::new();
        let file = fresh.fixture(TENANT);
        let r = compact(&fresh, &file, &budget);
        assert_eq!(grown["view_hash"], r["view_hash"], "cut at line {cut}");
    }
}

#[test]
fn a_requested_json_report_survives_quiet() {
    // The view owns stdout; --json asks for the report, so --quiet keeps it on stderr.
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let run = env.run(&args(&["--quiet", "compact", &file, "--json"], &FOLD));
    run.success();
    compactor::view::View::from_json(run.stdout.as_bytes()).expect("stdout is the view");
    let report: Value = serde_json::from_str(run.stderr.trim()).expect("stderr is the report");
    assert_eq!(report["call"], SHRINK_FLOOR_CALLS + 1);
    assert_eq!(report["mode"], "step");
}

/// A written view is an ordinary file: 0644 when new (not the temp file's
/// private 0600), and a replaced file keeps its mode.
#[cfg(unix)]
#[test]
fn a_written_view_gets_an_ordinary_mode_and_a_replaced_one_keeps_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let f = env.fixture(TENANT);
    let mode = |p: &str| {
        std::fs::metadata(env.work().join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    env.run(&["compact", &f, "-o", "view.json", "-q"]).success();
    assert_eq!(mode("view.json"), 0o644);
    std::fs::set_permissions(
        env.work().join("view.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    env.run(&["compact", &f, "-o", "view.json", "-q"]).success();
    assert_eq!(mode("view.json"), 0o600);
    env.run(&[
        "export",
        "view.json",
        "--format",
        "openai",
        "-o",
        "body.json",
        "-q",
    ])
    .success();
    assert_eq!(mode("body.json"), 0o644);
}

#[cfg(unix)]
#[test]
fn o_naming_a_pipe_writes_into_it_and_leaves_it_a_pipe() {
    use std::os::unix::fs::FileTypeExt;
    // `-o /dev/null` once replaced the device with a file (a temp file renamed
    // over it). A FIFO stands in for a device: renaming over it would leave a
    // regular file and the reader would get nothing.
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let pipe = env.work().join("view.pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let reader = {
        let pipe = pipe.clone();
        std::thread::spawn(move || std::fs::read(pipe).unwrap())
    };
    env.run(&args(&["compact", &file, "-o", "view.pipe"], &FOLD))
        .success();
    // Checked before joining: a reader left on a replaced pipe never returns.
    assert!(std::fs::metadata(&pipe).unwrap().file_type().is_fifo());
    let through_pipe = reader.join().unwrap();
    env.run(&args(&["compact", &file, "-o", "view.json"], &FOLD))
        .success();
    assert_eq!(
        through_pipe,
        std::fs::read(env.work().join("view.json")).unwrap()
    );
}
