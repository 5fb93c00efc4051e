//! `compactor preflight` and `compactor step`: the human report, the JSON
//! contract, view files, what each boundary stores, parameter checks, the
//! specification's env vars, FILE sources, and `export` of a written view.

use insta::assert_snapshot;
use serde_json::Value;

use crate::util::{
    FOLD, Run, SHRINK_FLOOR, SHRINK_FLOOR_CALLS, SHRINK_FLOOR_TASK, TIGHT, TestEnv, args,
    assert_report_fields, assert_status_consistent, blake3_hex, field_of, valid_view,
};

/// A store holding the shrink/floor fixture (20 calls over 2 turns).
fn shrink_floor() -> TestEnv {
    let env = TestEnv::new();
    env.import_fixture(SHRINK_FLOOR);
    env
}

/// `step --json`: exit 0, or 1 exactly when the status is over_window.
fn step_json(env: &TestEnv, more: &[&str]) -> Value {
    let run = env.run(&args(
        &["step", "--task", SHRINK_FLOOR_TASK, "--json", "--in-place"],
        more,
    ));
    let r = run.json();
    let expected = if r["status"] == "over_window" { 1 } else { 0 };
    run.failure(expected);
    r
}

/// `COMMAND --at CALL` on the shrink-floor fixture under the fold budget.
fn at_call_under_fold(command: &str, call: &str) -> (TestEnv, Run) {
    let env = shrink_floor();
    let a = [command, "--task", SHRINK_FLOOR_TASK, "--at", call];
    let run = env.run(&args(&a, &FOLD));
    (env, run)
}

#[test]
fn human_report_of_a_step_that_folds() {
    // Call 8 under the fold budget on a fresh store: over trigger, the tools
    // outside the protected window are shrunk, the oldest prefix is folded,
    // then the window is breached.
    let (_env, run) = at_call_under_fold("step", "8");
    assert_snapshot!(run.snapshot());
}

#[test]
fn human_report_of_a_preflight() {
    // Preflight for call 9 restores the checkpoint at its turn's start (call 1),
    // and the recorded tokens it prints are call 1's.
    let (env, run) = at_call_under_fold("preflight", "9");
    assert_snapshot!(run.snapshot());
    let r = env.json_of(
        &args(
            &[
                "preflight",
                "--task",
                SHRINK_FLOOR_TASK,
                "--at",
                "9",
                "--json",
            ],
            &FOLD,
        ),
        0,
    );
    assert_eq!(r["call"], 1, "{r}");
    assert_eq!(
        r["recorded_prompt_tokens"], r["tokens_before"],
        "call 1 is measured by its own recorded usage: {r}"
    );
}

#[test]
fn json_report_has_the_contract_fields() {
    let env = shrink_floor();
    let r = step_json(&env, &args(&["--at", "8"], &FOLD));
    assert_report_fields(&r);
    assert_status_consistent(&r);
    assert_eq!(r["task"], SHRINK_FLOOR_TASK);
    assert_eq!(r["mode"], "step");
    assert_eq!(r["call"], 8);
    assert_eq!(
        r["tiers_fired"],
        serde_json::json!(["shrink", "floor", "breakthrough_shrink"])
    );
    // The worked example's budget: w_eff 28000, trigger 18200, stop 14000.
    assert_eq!(r["w_eff"], 28000);
    assert_eq!(r["trigger"], 18200);
    assert_eq!(r["stop"], 14000);
    let (before, after) = (
        r["tokens_before"].as_u64().unwrap(),
        r["tokens_after"].as_u64().unwrap(),
    );
    assert!(before > 18200 && after <= 18200, "{r}");
    assert_eq!(r["status"], "ok");
    // One tier report per fired tier, in firing order.
    let tiers: Vec<&Value> = r["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["tier"])
        .collect();
    assert_eq!(
        tiers,
        r["tiers_fired"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>()
    );
}

#[test]
fn the_view_file_holds_canonical_bytes_hashing_to_view_hash() {
    let env = shrink_floor();
    for (mode, at) in [("step", "7"), ("step", "21"), ("preflight", "18")] {
        for budget in [FOLD, TIGHT] {
            let _ = std::fs::remove_file(env.work().join("v.json"));
            let run = env.run(&args(
                &[
                    mode,
                    "--task",
                    SHRINK_FLOOR_TASK,
                    "--at",
                    at,
                    "--view",
                    "v.json",
                    "--json",
                ],
                &budget,
            ));
            assert!(run.status == 0 || run.status == 1, "{}", run.snapshot());
            let r = run.json();
            let (bytes, view) = valid_view(&env.work().join("v.json"));
            assert_eq!(blake3_hex(&bytes), r["view_hash"], "{mode} {at} {budget:?}");
            assert!(bytes.ends_with(b"}\n"), "one trailing newline");
            assert_eq!(view.messages.len() as u64, r["messages"].as_u64().unwrap());
        }
    }
}

#[test]
fn a_view_path_that_cannot_be_written_is_an_error() {
    let env = shrink_floor();
    let run = env.run(&[
        "step",
        "--task",
        SHRINK_FLOOR_TASK,
        "--view",
        "no/such/dir/v.json",
    ]);
    run.failure(2)
        .stderr_has("cannot write the view to no/such/dir/v.json");
}

#[test]
fn preflight_never_fires_a_tier_and_mints_nothing() {
    let env = shrink_floor();
    let calls = SHRINK_FLOOR_CALLS as u32;
    // On a fresh store, and again after steps have stored forms and summaries.
    for round in ["fresh", "after steps"] {
        for budget in [FOLD, TIGHT] {
            for at in 1..=calls + 1 {
                let before = env.snapshot_rows();
                let at = at.to_string();
                let run = env.run(&args(
                    &[
                        "preflight",
                        "--task",
                        SHRINK_FLOOR_TASK,
                        "--at",
                        &at,
                        "--json",
                        "--in-place",
                    ],
                    &budget,
                ));
                let r = run.json();
                assert_eq!(r["tiers_fired"], serde_json::json!([]), "{round} {at}: {r}");
                assert!(r["tiers"].as_array().unwrap().is_empty(), "{r}");
                assert_eq!(r["mode"], "preflight");
                assert_status_consistent(&r);
                assert!(
                    ["ok", "over_trigger", "over_window"].contains(&r["status"].as_str().unwrap()),
                    "a preflight never reports a breakthrough: {r}"
                );
                let expected = if r["status"] == "over_window" { 1 } else { 0 };
                assert_eq!(run.status, expected, "{}", run.snapshot());
                assert_eq!(
                    env.snapshot_rows(),
                    before,
                    "{round}: preflight --at {at} wrote to the store"
                );
            }
        }
        if round == "fresh" {
            assert!(env.snapshot_rows().is_empty());
            for at in [7, 15, 21] {
                env.run(&args(
                    &[
                        "step",
                        "--task",
                        SHRINK_FLOOR_TASK,
                        "--at",
                        &at.to_string(),
                        "--in-place",
                    ],
                    &FOLD,
                ))
                .success();
            }
            assert!(!env.snapshot_rows().is_empty());
        }
    }
}

#[test]
fn a_step_over_trigger_fires_tiers_and_stores_entries() {
    let env = shrink_floor();
    assert!(env.snapshot_rows().is_empty());
    // Under trigger: nothing fires, nothing but bookkeeping is stored.
    let r = step_json(&env, &args(&["--at", "3"], &FOLD));
    assert_eq!(r["tiers_fired"], serde_json::json!([]), "{r}");
    assert!(r["tokens_before"].as_u64().unwrap() <= 18200);
    assert!(
        env.snapshot_rows()
            .iter()
            .all(|(_, k, _)| k.starts_with("meta:")),
        "{:?}",
        env.snapshot_rows()
    );

    let r = step_json(&env, &args(&["--at", "15"], &FOLD));
    assert_eq!(
        r["tiers_fired"],
        serde_json::json!(["shrink", "floor", "breakthrough_shrink"]),
        "{r}"
    );
    let rows = env.snapshot_rows();
    assert!(rows.iter().all(|(t, _, _)| t == SHRINK_FLOOR_TASK));
    let kinds = |prefix: &str, kind: &str| {
        rows.iter()
            .filter(|(_, k, e)| {
                k.starts_with(prefix) && serde_json::from_str::<Value>(e).unwrap()["kind"] == kind
            })
            .count()
    };
    // Every part the tiers shrank got its form stored under its address, and
    // the fold its summary under its coverage key.
    let shrunk: u64 = field_of(&r["tiers"], "parts_shrunk", Value::as_u64)
        .iter()
        .sum();
    assert_eq!(kinds("tool:", "shrink") as u64, shrunk, "{rows:#?}");
    assert_eq!(kinds("cov:", "summary"), 1, "{rows:#?}");
    let coverage = r["tiers"][1]["coverage"].as_str().unwrap();
    assert!(
        rows.iter().any(|(_, k, _)| k == coverage),
        "{coverage} not stored"
    );
}

#[test]
fn the_same_step_twice_gives_the_same_view_and_mints_nothing_new() {
    for budget in [FOLD, TIGHT] {
        let env = shrink_floor();
        // Call by call, as a live engine: each call twice in a row.
        for at in 1..=SHRINK_FLOOR_CALLS + 1 {
            let at = at.to_string();
            let first = step_json(&env, &args(&["--at", &at], &budget));
            let rows = env.snapshot_rows();
            let again = step_json(&env, &args(&["--at", &at], &budget));
            assert_eq!(
                first["view_hash"], again["view_hash"],
                "call {at} {budget:?}"
            );
            assert_eq!(
                env.snapshot_rows(),
                rows,
                "the re-run of call {at} changed the store"
            );
        }
    }
}

#[test]
fn bad_parameters_are_refused_with_status_2() {
    let env = shrink_floor();
    let rows = env.snapshot_rows();
    let t = SHRINK_FLOOR_TASK;
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--stop-ratio", "0.7"],
            "the stop ratio (0.7) must be below the trigger ratio (0.65)",
        ),
        (
            vec!["--stop-ratio", "0.65"],
            "the stop ratio (0.65) must be below the trigger ratio (0.65)",
        ),
        (vec!["--trigger-ratio", "0"], "\"0\" is outside (0, 1]"),
        (vec!["--trigger-ratio", "1.5"], "\"1.5\" is outside (0, 1]"),
        (vec!["--stop-ratio", "0"], "\"0\" is outside (0, 1]"),
        (
            vec!["--trigger-ratio", "abc"],
            "\"abc\" is not a ratio; expected a decimal in (0, 1] such as 0.65",
        ),
        (
            vec!["--window", "4000", "--output-reserved", "4000"],
            "the window (4000) must be larger than the output reservation (4000)",
        ),
        (
            vec!["--window", "3000", "--output-reserved", "4000"],
            "the window (3000) must be larger than the output reservation (4000)",
        ),
        // No reserve to lower (it is 0 too): the window is the mistake.
        (
            vec!["--window", "0"],
            "error: the window must be at least 1 token, and it is 0: give --window the model's context window in tokens\n",
        ),
        (
            vec!["--at", "0"],
            "--at 0 is out of range: task 5b1e2d3c-7f4a-4e2b-9c1d-2a3b4c5d6e7f has 20 model calls, so CALL must be 1..=21",
        ),
        (
            vec!["--at", "22"],
            "--at 22 is out of range: task 5b1e2d3c-7f4a-4e2b-9c1d-2a3b4c5d6e7f has 20 model calls",
        ),
        (
            vec!["--window=-5"],
            "invalid value '-5' for '--window <TOKENS>'",
        ),
    ];
    for mode in ["preflight", "step"] {
        for (extra, message) in &cases {
            let run = env.run(&args(&[mode, "--task", t], extra));
            run.failure(2);
            assert!(run.stdout.is_empty(), "{mode} {extra:?}: {}", run.stdout);
            assert!(
                run.stderr.contains(message),
                "{mode} {extra:?}: expected {message:?} in\n{}",
                run.stderr
            );
        }
        let run = env.run(&[mode, "--task", "no-such-task"]);
        run.failure(2).stderr_has(
            "unknown task \"no-such-task\"\nhint: `compactor tasks` lists the imported ones",
        );
        // Neither FILE nor --task: the latest task, named in the report.
        let run = env.run(&[mode]);
        run.success()
            .stdout_has(format!("{mode} · task {SHRINK_FLOOR_TASK} · "));
    }
    assert_eq!(
        env.snapshot_rows(),
        rows,
        "a refused call wrote to the store"
    );
}

#[test]
fn the_specification_env_vars_are_honoured() {
    let env = shrink_floor();
    let json = |vars: &[(&str, &str)], more: &[&str]| -> Value {
        let mut cmd = env.command(&args(
            &["step", "--task", SHRINK_FLOOR_TASK, "--json"],
            more,
        ));
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let run = env.finish(cmd);
        run.success();
        run.json()
    };
    let default = json(&[], &[]);
    assert_eq!(default["trigger"], 117000);
    assert_eq!(default["stop"], 90000);
    assert_eq!(default["protected_from_step"], 16);

    let r = json(&[("COMPACTION_TRIGGER_RATIO", "0.8")], &[]);
    assert_eq!(r["trigger"], 144000, "{r}");
    assert_eq!(r["budget"]["trigger_ratio"], "0.8");
    let r = json(&[("COMPACTION_STOP_RATIO", "0.25")], &[]);
    assert_eq!(r["stop"], 45000, "{r}");
    let r = json(
        &[
            ("COMPACTION_CONTEXT_WINDOW", "32000"),
            ("OUTPUT_RESERVED_TOKENS", "4000"),
        ],
        &[],
    );
    assert_eq!(
        (r["w_eff"].as_u64(), r["trigger"].as_u64()),
        (Some(28000), Some(18200)),
        "{r}"
    );
    let r = json(&[("COMPACTION_PROTECT_RECENT_STEPS", "2")], &[]);
    assert_eq!(r["protected_from_step"], 19, "{r}");
    let r = json(&[("ROLLING_SUMMARY_BUDGET_TOKENS", "900")], &[]);
    assert_eq!(r["budget"]["summary_budget_tokens"], 900, "{r}");
    // A flag beats the env var.
    let r = json(
        &[("COMPACTION_TRIGGER_RATIO", "0.8")],
        &["--trigger-ratio", "0.7"],
    );
    assert_eq!(r["trigger"], 126000, "{r}");

    // A bad value in the environment is refused like a bad flag.
    let mut cmd = env.command(&["step", "--task", SHRINK_FLOOR_TASK]);
    cmd.env("COMPACTION_TRIGGER_RATIO", "1.5");
    let run = env.finish(cmd);
    run.failure(2);
    assert!(
        run.stderr.contains("\"1.5\" is outside (0, 1]"),
        "{}",
        run.stderr
    );
    let mut cmd = env.command(&["step", "--task", SHRINK_FLOOR_TASK]);
    cmd.env("COMPACTION_STOP_RATIO", "0.9");
    let run = env.finish(cmd);
    run.failure(2).stderr_has("must be below the trigger ratio");
}

#[test]
fn a_file_source_is_imported_first() {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    assert_eq!(env.counts(), [0, 0, 0]);
    for mode in ["preflight", "step"] {
        let run = env.run(&[mode, &file, "--json"]);
        run.success();
        let r = run.json();
        assert_eq!(r["task"], SHRINK_FLOOR_TASK, "{r}");
        assert_eq!(r["call"], if mode == "step" { 21 } else { 18 }, "{r}");
        assert!(run.stderr.is_empty(), "{}", run.stderr);
    }
    let task = env.task(SHRINK_FLOOR_TASK);
    assert_eq!(task["steps"], SHRINK_FLOOR_CALLS);
    let messages = env.counts()[0];
    // Again: the import is a no-op, and the same view comes out.
    let a = step_json(&env, &[]);
    let run = env.run(&["step", &file, "--json"]);
    run.success();
    assert_eq!(run.json()["view_hash"], a["view_hash"]);
    assert_eq!(env.counts()[0], messages);
    // --import-as names the import.
    let run = env.run(&["step", &file, "--import-as", "renamed", "--json"]);
    run.success();
    assert_eq!(run.json()["task"], "renamed");
    // A FILE that does not exist is an error.
    let run = env.run(&["step", "missing.jsonl"]);
    run.failure(2).stderr_has("missing.jsonl");
}

/// A view with a folded head, tool calls and text: call 8 of the shrink fixture.
fn written_view(env: &TestEnv) -> Vec<u8> {
    let run = env.run(&args(
        &[
            "step",
            "--task",
            SHRINK_FLOOR_TASK,
            "--at",
            "8",
            "--view",
            "view.json",
        ],
        &FOLD,
    ));
    run.success();
    valid_view(&env.work().join("view.json")).0
}

#[test]
fn export_anthropic_is_the_canonical_bytes() {
    let env = shrink_floor();
    let bytes = written_view(&env);
    let run = env.run(&["export", "view.json", "--format", "anthropic"]);
    run.success();
    assert_eq!(run.stdout.as_bytes(), &bytes[..]);
    env.run(&[
        "export",
        "view.json",
        "--format",
        "anthropic",
        "-o",
        "again.json",
    ])
    .success();
    assert_eq!(std::fs::read(env.work().join("again.json")).unwrap(), bytes);
}

#[test]
fn export_openai_answers_each_tool_call_with_a_tool_message() {
    let env = shrink_floor();
    let bytes = written_view(&env);
    let view = compactor::view::View::from_json(&bytes).unwrap();
    let run = env.run(&["export", "view.json", "--format", "openai"]);
    run.success();
    let msgs = run.json()["messages"].as_array().unwrap().clone();
    let results: usize = view
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| matches!(b, compactor::model::Block::ToolResult { .. }))
        .count();
    let tools: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert!(results > 0);
    assert_eq!(tools.len(), results);
    // Every assistant tool call is answered, in order, by the tool messages
    // that follow it, each naming its tool_call_id.
    for (i, m) in msgs.iter().enumerate() {
        assert!(
            ["user", "assistant", "tool"].contains(&m["role"].as_str().unwrap()),
            "{m}"
        );
        let Some(calls) = m["tool_calls"].as_array() else {
            continue;
        };
        for (j, c) in calls.iter().enumerate() {
            let answer = &msgs[i + 1 + j];
            assert_eq!(answer["role"], "tool", "{answer}");
            assert_eq!(answer["tool_call_id"], c["id"], "{answer}");
            assert!(answer["content"].as_str().is_some_and(|s| !s.is_empty()));
            assert_eq!(c["type"], "function");
            let args: Value =
                serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
            assert!(args.is_object());
        }
    }
    assert_eq!(msgs[0]["role"], "user");
    assert!(
        msgs[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("## Task Context"),
        "{}",
        msgs[0]
    );
}

#[test]
fn export_markdown_is_readable() {
    let env = shrink_floor();
    let bytes = written_view(&env);
    let view = compactor::view::View::from_json(&bytes).unwrap();
    let run = env.run(&["export", "view.json"]);
    run.success();
    let md = &run.stdout;
    // One heading per message, in order, with its role.
    for (i, m) in view.messages.iter().enumerate() {
        let role = if m.role == compactor::view::ViewRole::User {
            "user"
        } else {
            "assistant"
        };
        assert!(
            md.contains(&format!("### {} · {role}\n", i + 1)),
            "message {}",
            i + 1
        );
    }
    assert!(md.starts_with("### 1 · user\n\n## Task Context\n"), "{md}");
    assert!(md.contains("[tool_use Read "), "{md}");
    // Not JSON: text is unescaped.
    assert!(!md.contains("\\n"));
    assert!(!md.contains("{\"messages\""));
}

#[test]
fn export_refuses_a_file_that_is_not_a_view() {
    let env = shrink_floor();
    // A transcript is JSON but not a view.
    let run = env.run(&["export", SHRINK_FLOOR]);
    run.failure(2);
    assert!(
        run.stderr.starts_with(&format!("error: {SHRINK_FLOOR}:1:")),
        "{}",
        run.stderr
    );
    run.stderr_has("missing field `messages`")
        .stderr_has("expected a view");
    // Broken JSON is located by line and column.
    env.write(
        "broken.json",
        "{\"messages\":[\n{\"role\":\"user\",\n\"content\":[}\n",
    );
    let run = env.run(&["export", "broken.json", "--format", "openai"]);
    run.failure(2);
    assert!(
        run.stderr.starts_with("error: broken.json:3:"),
        "{}",
        run.stderr
    );
    let run = env.run(&["export", "absent.json"]);
    run.failure(2)
        .stderr_has("cannot read the view absent.json");
}

/// The tokens line names the call its anchor came from and the call it
/// compares with, so a recorded basis never meets "no usage recorded".
#[test]
fn the_calibration_line_names_the_calls_it_speaks_of() {
    let env = shrink_floor();
    let tokens_line = |more: &[&str]| {
        let run = env.run(&args(&["step", "--task", SHRINK_FLOOR_TASK], more));
        run.success();
        run.stdout
            .lines()
            .find(|l| l.starts_with("tokens: "))
            .unwrap()
            .to_string()
    };
    // The next, unrecorded call: anchored on call 20's usage, nothing to compare with.
    let next = tokens_line(&[]);
    assert!(
        next.contains("basis recorded: call 20's usage − removed + added"),
        "{next}"
    );
    assert!(
        next.ends_with("· call 21 has no recorded usage to compare with"),
        "{next}"
    );
    assert!(!next.contains("no usage recorded"), "{next}");
    // The first call: nothing earlier to anchor on, its own usage recorded.
    let first = tokens_line(&["--at", "1"]);
    assert!(
        first.contains("basis estimate: overhead + view (not anchored on recorded usage)"),
        "{first}"
    );
    assert!(first.contains("· recorded at call 1: "), "{first}");
    assert!(!first.contains("no usage to anchor on"), "{first}");
}

/// `step FILE --json` on a copy of testdata `rel` with `edits` applied.
fn step_on_edited(env: &TestEnv, rel: &str, edits: &[(&str, &str)], more: &[&str]) -> Run {
    let mut text = std::fs::read_to_string(crate::util::testdata(rel)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{rel} has no {from:?}");
        text = text.replace(from, to);
    }
    let name = rel.rsplit('/').next().unwrap();
    let file = env.write(name, text);
    env.run(&args(&["step", &file], more))
}

#[test]
fn without_flags_the_window_is_the_models_and_the_reserve_an_eighth_of_it_up_to_20000() {
    let env = shrink_floor();
    // The fixture's model is claude-opus-4-6: 200000, reserve 20000.
    let r = step_json(&env, &[]);
    assert_eq!(r["budget"]["window"], 200000, "{r}");
    assert_eq!(r["budget"]["output_reserved"], 20000, "{r}");
    assert_eq!(
        (r["w_eff"].as_u64(), r["trigger"].as_u64()),
        (Some(180000), Some(117000))
    );
    // A 32k window keeps 28,000 tokens: the reserve is 32000 / 8.
    let r = step_json(&env, &["--window", "32000"]);
    assert_eq!(r["budget"]["output_reserved"], 4000, "{r}");
    assert_eq!(
        (r["w_eff"].as_u64(), r["trigger"].as_u64()),
        (Some(28000), Some(18200))
    );
    let r = step_json(&env, &["--window", "1000000"]);
    assert_eq!(r["budget"]["output_reserved"], 20000, "{r}");
    // The human report says where the window came from (nothing when given).
    let t = SHRINK_FLOOR_TASK;
    env.run(&["step", "--task", t])
        .success()
        .stdout_has("budget: window 200000 (claude-opus-4-6) − reserve 20000 = w_eff 180000 ·");
    env.run(&["step", "--task", t, "--window", "32000"])
        .success()
        .stdout_has("budget: window 32000 − reserve 4000 = w_eff 28000 ·");
    // A reserve given alone is checked against the model's window.
    env.run(&["step", "--task", t, "--output-reserved", "250000"])
        .failure(2)
        .stderr_has("the window (200000) must be larger than the output reservation (250000)");
}

#[test]
fn a_window_the_session_recorded_or_named_wins_over_the_models() {
    let env = TestEnv::new();
    let window = |run: &Run| {
        run.success();
        let r = run.json();
        (
            r["budget"]["window"].as_u64().unwrap(),
            r["budget"]["output_reserved"].as_u64().unwrap(),
        )
    };
    // Codex records `model_context_window` (258400) for gpt-5.3-codex,
    // which the table gives 272000.
    let run = step_on_edited(&env, "codex/small-rollout.jsonl", &[], &["--json"]);
    assert_eq!(window(&run), (258_400, 20_000));
    let run = step_on_edited(
        &env,
        "codex/small-rollout.jsonl",
        &[("258400", "128000")],
        &[],
    );
    run.success()
        .stdout_has("budget: window 128000 (recorded by the session) − reserve 16000 =");
    // Claude Code asking for the 1M context (the `context-1m` beta) of a
    // model the table gives 200000.
    let sonnet = [("claude-opus-5-5", "claude-sonnet-4-6")];
    let run = step_on_edited(
        &env,
        "claude-code/client-2.1.332.jsonl",
        &sonnet,
        &["--json"],
    );
    assert_eq!(window(&run), (200_000, 20_000));
    let one_m = [
        sonnet[0],
        (r#""betas":["#, r#""betas":["context-1m-2025-08-07","#),
    ];
    let run = step_on_edited(
        &env,
        "claude-code/client-2.1.332.jsonl",
        &one_m,
        &["--json"],
    );
    assert_eq!(window(&run), (1_000_000, 20_000));
    // A model named with `[1m]`.
    let named = [("claude-sonnet-4-5-20250929", "claude-sonnet-4-5[1m]")];
    let run = step_on_edited(&env, "anthropic/request.json", &named, &[]);
    run.success()
        .stdout_has("budget: window 1000000 (claude-sonnet-4-5[1m], 1M context) − reserve 20000 =");
    // --window beats what the session recorded.
    let run = step_on_edited(
        &env,
        "codex/small-rollout.jsonl",
        &[],
        &["--json", "--window", "64000"],
    );
    assert_eq!(window(&run), (64_000, 8_000));
}

#[test]
fn an_unknown_or_unnamed_model_gets_a_200000_window_with_a_note() {
    let env = TestEnv::new();
    let unknown = [("claude-sonnet-4-5-20250929", "llama-local")];
    let run = step_on_edited(&env, "anthropic/request.json", &unknown, &[]);
    run.success()
        .stdout_has("budget: window 200000 (default: model llama-local unknown) − reserve 20000")
        .stderr_has("note: the model \"llama-local\" is not in the built-in table: window 200000 assumed; give --window to set it");
    let run = step_on_edited(&env, "openai-chat/conversation.jsonl", &[], &[]);
    run.success()
        .stdout_has("budget: window 200000 (default: no model recorded) −")
        .stderr_has("note: the transcript names no model: window 200000 assumed");
    // Given a window, there is nothing to say.
    let run = step_on_edited(
        &env,
        "anthropic/request.json",
        &unknown,
        &["--window", "100000"],
    );
    run.success();
    assert!(!run.stderr.contains("note:"), "{}", run.stderr);
}

#[test]
fn an_overhead_over_the_trigger_or_w_eff_is_named_with_what_to_do() {
    let env = shrink_floor();
    let t = SHRINK_FLOOR_TASK;
    let r = step_json(&env, &TIGHT);
    let overhead = r["overhead"].as_u64().unwrap();
    assert!(
        overhead > r["trigger"].as_u64().unwrap() && overhead <= r["w_eff"].as_u64().unwrap(),
        "{r}"
    );
    let run = env.run(&args(&["step", "--task", t], &TIGHT));
    run.stdout_has(format!(
        "warning: the system prompt and tools alone ({overhead} tokens) exceed the trigger (3250): every call compacts and stays over trigger; raise --window or lower --output-reserved"
    ));
    // Over w_eff itself: no view could fit, so the run is refused, in one
    // line naming the overhead.
    let small = ["--window", "4000", "--output-reserved", "1000"];
    let run = env.run(&args(&["step", "--task", t], &small));
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.clone()),
        (
            2,
            "",
            format!(
                "error: window 4000 leaves 3000 tokens for the prompt (w_eff), fewer than the system prompt and tools alone ({overhead} tokens): no view could fit; raise --window or lower --output-reserved\n"
            )
        )
    );
    // Run anyway (as `check`'s children do), the report says why every view
    // is over the window.
    let run = env.run(&args(&["step", "--task", t, "--allow-over-window"], &small));
    run.failure(1).stdout_has(format!(
        "warning: the system prompt and tools alone ({overhead} tokens) exceed w_eff (3000): every view is over the window, whatever is compacted; raise --window or lower --output-reserved"
    ));
    // Where it fits, nothing is said.
    let run = env.run(&args(&["step", "--task", t], &FOLD));
    assert!(!run.stdout.contains("warning:"), "{}", run.stdout);
}
