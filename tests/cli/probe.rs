//! `compactor probe`: fidelity as a number. The adversarial fixture
//! (`testdata/probe/codex-adversarial.jsonl`, written by
//! `scripts/gen-probe-fixtures.py`) keeps every critical probe through every
//! fold; a summarizer that forgets loses them, and `--fail-on-loss` says so.

use insta::assert_snapshot;
use serde_json::Value;

use crate::util::{FOLD, TENANT, TENANT_TASK, TestEnv, args};

const ADVERSARIAL: &str = "probe/codex-adversarial.jsonl";
const ADVERSARIAL_TASK: &str = "0199c0de-0000-7000-8000-00000000a14e";

fn probe_json(env: &TestEnv, more: &[&str]) -> (i32, Value) {
    let run = env.run(&args(
        &["probe", "--task", ADVERSARIAL_TASK, "--json"],
        more,
    ));
    (run.status, run.json())
}

fn adversarial() -> TestEnv {
    let env = TestEnv::new();
    env.import_fixture(ADVERSARIAL);
    env
}

#[test]
fn critical_probes_survive_every_fold_of_the_adversarial_fixture() {
    let env = adversarial();
    for budget in [
        ["--window", "12000", "--output-reserved", "2000"],
        ["--window", "8000", "--output-reserved", "1000"],
    ] {
        let (status, v) = probe_json(&env, &args(&["--fail-on-loss"], &budget));
        assert_eq!(status, 0, "{budget:?}: {v:#}");
        assert!(v["folds"].as_u64().unwrap() >= 2, "{budget:?}: {v:#}");
        assert_eq!(v["critical_lost"], 0, "{budget:?}: {v:#}");
        assert_eq!(v["worst_call"]["critical_lost"], 0, "{budget:?}: {v:#}");
        let cats = &v["categories"];
        // The shape: every category with passed/recoverable/lost/critical.
        for (name, critical) in [
            ("ask", true),
            ("constraint", true),
            ("deliverable", true),
            ("error", false),
            ("decision", false),
            ("state", false),
        ] {
            assert_eq!(cats[name]["critical"], critical, "{name}");
            for k in ["passed", "recoverable", "lost"] {
                assert!(cats[name][k].is_u64(), "{name}.{k}: {v:#}");
            }
        }
        // Four asks (the superseded one, the one after 20 KB of log: head
        // and tail), three rules stated once (one without a prohibition
        // word), three patched files. Of the two distinct errors of one
        // command, never retried with success, the later one is the fact
        // (keys are subjects: it supersedes the first) and is kept.
        assert_eq!(cats["ask"]["passed"], 4, "{v:#}");
        assert_eq!(cats["constraint"]["passed"], 3, "{v:#}");
        assert_eq!(cats["deliverable"]["passed"], 3, "{v:#}");
        assert_eq!(cats["error"]["passed"], 1, "{v:#}");
        assert_eq!(
            (v["abandoned_judged"].as_u64(), v["abandoned_lost"].as_u64()),
            (Some(1), Some(0)),
            "{v:#}"
        );
        let lost: Vec<&str> = v["lost"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["expected"].as_str().unwrap())
            .collect();
        assert_eq!(
            lost,
            ["⎯⎯⎯ FAIL tests/orders.test.ts > keeps totals"],
            "{v:#}"
        );
        assert_eq!(v["misleading"], 0, "{v:#}");
    }
}

#[test]
fn a_forgetful_summarizer_loses_critical_probes_and_fail_on_loss_exits_1() {
    let env = adversarial();
    let budget = ["--window", "8000", "--output-reserved", "1000"];
    let forgetful = args(&["--summarizer", "static"], &budget);
    let (status, v) = probe_json(&env, &forgetful);
    assert_eq!(
        status, 0,
        "without --fail-on-loss a loss is reported, not failed"
    );
    let lost = v["lost"].as_array().unwrap();
    assert!(v["critical_lost"].as_u64().unwrap() > 0, "{v:#}");
    assert!(
        lost.iter().any(|l| l["category"] == "constraint"
            && l["expected"] == "Leave the billing module alone."
            && l["source"].as_str().unwrap().starts_with("text:")),
        "{v:#}"
    );
    for l in lost {
        for k in ["category", "expected", "source"] {
            assert!(l[k].is_string(), "{l}");
        }
    }
    let (status, _) = probe_json(&env, &args(&["--fail-on-loss"], &forgetful));
    assert_eq!(status, 1);
}

#[test]
fn probes_are_judged_only_on_views_after_their_source() {
    let env = adversarial();
    let (_, first) = probe_json(&env, &["--at", "1"]);
    // Call 1 sees the first ask and its two rules, nothing written yet.
    assert_eq!(first["categories"]["ask"]["passed"], 1, "{first:#}");
    assert_eq!(first["categories"]["constraint"]["passed"], 2, "{first:#}");
    assert_eq!(first["categories"]["deliverable"]["passed"], 0, "{first:#}");
    assert_eq!(first["judged"], 3, "{first:#}");
}

#[test]
fn the_recorded_history_scores_every_probe() {
    let env = adversarial();
    let (status, v) = probe_json(&env, &["--recorded", "--fail-on-loss"]);
    assert_eq!(status, 0, "{v:#}");
    assert_eq!(v["view"], "recorded");
    assert_eq!(v["passed"], v["judged"], "the uncompacted record keeps all");
    assert!(v.get("folds").is_none());
}

#[test]
fn probe_report_of_the_tenant_fixture_under_the_fold_budget() {
    let env = TestEnv::new();
    env.import_fixture(TENANT);
    let run = env.run(&args(&["probe", "--task", TENANT_TASK], &FOLD));
    assert_snapshot!(run.snapshot());
}

#[test]
fn an_out_of_range_call_is_a_usage_error() {
    let env = adversarial();
    let run = env.run(&["probe", "--task", ADVERSARIAL_TASK, "--at", "999"]);
    run.failure(2).stderr_has("--at 999 is out of range");
}

#[test]
fn replay_probes_adds_per_call_survival_and_the_worst_call() {
    let env = adversarial();
    let budget = ["--window", "8000", "--output-reserved", "1000"];
    let replay = ["replay", "--task", ADVERSARIAL_TASK, "--json", "--probes"];
    let v = env.run(&args(&replay, &budget)).replay_json();
    let steps = v["calls"].as_array().unwrap();
    assert_eq!(steps.len(), 30);
    for s in steps {
        assert_eq!(s["probes"]["call"], s["call"], "{s}");
        assert_eq!(s["probes"]["critical_kept_permille"], 1000, "{s}");
    }
    assert!(v["probes"]["worst_call"]["call"].is_u64(), "{v:#}");
    // The forgetful summarizer's worst call is named, with its losses.
    let run = env.run(&args(
        &[
            "replay",
            "--task",
            ADVERSARIAL_TASK,
            "--probes",
            "--summarizer",
            "static",
        ],
        &budget,
    ));
    // Exit 1 exactly when the footer counts a call over the window.
    run.failure(i32::from(!run.stdout.contains(" · 0 over_window")));
    let last = run.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("probes: worst call ") && last.contains("lost)"),
        "{}",
        run.stdout
    );
    // Without --probes the JSON has no probe fields.
    let plain = env.run(&args(
        &["replay", "--task", ADVERSARIAL_TASK, "--json"],
        &budget,
    ));
    assert!(plain.json()["steps"][0].get("probes").is_none());
}

/// The `## Task Context` texts of every view in `dir`.
fn summaries(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let v: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        for m in v["messages"].as_array().unwrap() {
            for b in m["content"].as_array().into_iter().flatten() {
                if let Some(t) = b["text"].as_str()
                    && t.starts_with("## Task Context")
                {
                    out.push((f.display().to_string(), t.to_string()));
                }
            }
        }
    }
    out
}

/// Issue 14's four losses, on the corpus transcripts that showed them: Codex
/// IDE-context asks keep their request, slash commands are no asks, no
/// terminal escape reaches a summary, and every critical probe survives
/// every call at 32000/4000.
#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn corpus_summaries_keep_requests_and_drop_wrappers_and_escapes() {
    let Some(corpus) =
        crate::util::corpus("corpus_summaries_keep_requests_and_drop_wrappers_and_escapes")
    else {
        return;
    };
    let codex = "codex/v0.40.0_agentcmd_unredacted/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl";
    let files = [
        codex,
        "claude-code/v2.1.39_spotter_interrupts_biglines/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
        "claude-code/v2.0.x_agentcmd/full-session-four.jsonl",
        "claude-code/v1.0.98_inline_sidechains_summary/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    ];
    let env = TestEnv::new();
    for (i, rel) in files.iter().enumerate() {
        let file = corpus.join(rel);
        let file = file.to_str().unwrap();
        let dir = env.work().join(format!("views-{i}"));
        let run = env.run(&args(
            &[
                "replay",
                file,
                "--json",
                "--probes",
                "--views",
                dir.to_str().unwrap(),
            ],
            &FOLD,
        ));
        let v = run.replay_json();
        for s in v["calls"].as_array().unwrap() {
            assert_eq!(s["probes"]["critical_lost"], 0, "{rel} call {}", s["step"]);
        }
        let sums = summaries(&dir);
        assert!(!sums.is_empty(), "{rel}: expected folds at 32000/4000");
        for (view, text) in &sums {
            assert!(
                !text.contains('\u{1b}'),
                "{view}: an escape code in\n{text}"
            );
            assert!(
                !text.contains("<command-name>"),
                "{view}: a slash command in\n{text}"
            );
            assert!(
                !text.contains("# Context from my IDE setup"),
                "{view}: IDE context in\n{text}"
            );
        }
        if *rel == codex {
            let last = &sums.last().unwrap().1;
            for ask in [
                "Can you auto accept all changes for the rest of this session?",
                "can you run lint, test and check-types",
            ] {
                assert!(last.contains(ask), "{ask:?} lost from\n{last}");
            }
        }
    }
}

/// The Claude Code fixture, then the agent compacting itself (a boundary and
/// its summary) and one more exchange: written to `cwd/compacted.jsonl`.
fn compacted_session(env: &TestEnv) -> String {
    let mut text =
        std::fs::read_to_string(crate::util::testdata("claude-code/small-session.jsonl")).unwrap();
    let base = serde_json::json!({
        "isSidechain": false, "userType": "external", "cwd": "/home/dev/projects/tally",
        "sessionId": "7f3c9a2e-5b1d-4e8f-a6c4-2d9e1b7f0a53", "version": "2.1.39",
    });
    let line = |extra: Value| {
        let mut v = base.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        format!("{v}\n")
    };
    text.push_str(&line(serde_json::json!({
        "parentUuid": null, "logicalParentUuid": "6067a0b9-6401-4c31-bd7f-b210e9506a02",
        "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
        "uuid": "c0000000-0000-4000-8000-000000000001", "timestamp": "2026-02-14T10:00:00.000Z",
        "compactMetadata": {"trigger": "manual", "preTokens": 30000}})));
    text.push_str(&line(serde_json::json!({
        "parentUuid": "c0000000-0000-4000-8000-000000000001", "type": "user", "isCompactSummary": true,
        "message": {"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nThe user asked why TALLY_MAX_ROWS is ignored."},
        "uuid": "c0000000-0000-4000-8000-000000000002", "timestamp": "2026-02-14T10:00:01.000Z"})));
    text.push_str(&line(serde_json::json!({
        "parentUuid": "c0000000-0000-4000-8000-000000000002", "type": "user",
        "message": {"role": "user", "content": "Now add a test for the override."},
        "uuid": "c0000000-0000-4000-8000-000000000003", "timestamp": "2026-02-14T10:01:00.000Z"})));
    text.push_str(&line(serde_json::json!({
        "parentUuid": "c0000000-0000-4000-8000-000000000003", "type": "assistant",
        "message": {"model": "claude-opus-4-6", "id": "msg_c000000000000000000000001", "type": "message",
            "role": "assistant", "content": [{"type": "text", "text": "Added the test."}],
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 100, "output_tokens": 20}},
        "uuid": "c0000000-0000-4000-8000-000000000004", "timestamp": "2026-02-14T10:01:30.000Z"})));
    env.write("compacted.jsonl", text)
}

#[test]
fn probe_recorded_names_the_agents_compaction_only_when_there_was_one() {
    let env = TestEnv::new();
    let file = compacted_session(&env);
    let first_line = |more: &[&str]| {
        let run = env.run(&args(&["probe", &file, "--recorded"], more));
        run.success();
        run.stdout.lines().next().unwrap().to_string()
    };
    let last = first_line(&[]);
    assert!(
        last.ends_with("· the recorded history since the agent's own compaction (line 26)"),
        "{last}"
    );
    let before = first_line(&["--at", "1"]);
    assert!(
        before.ends_with(
            "· call 1 · the recorded history (the agent did not compact it before this call)"
        ),
        "{before}"
    );
    // A session the agent never compacted never says it did.
    let env = adversarial();
    let run = env.run(&["probe", "--task", ADVERSARIAL_TASK, "--recorded"]);
    run.success();
    assert!(!run.stdout.contains("own compaction"), "{}", run.stdout);
    run.stdout_has("the recorded history (the agent did not compact it before this call)");
}

// ---- precision (issue 35): a Task Context says only what is true --------
//
// The fixtures are written by `testdata/gen/make_precision.py` in the real
// Claude Code and Codex formats.

const RETRIES: [&str; 2] = [
    "precision/claude-code-retries.jsonl",
    "precision/codex-retries.jsonl",
];
const STALE: [&str; 2] = [
    "precision/claude-code-stale-context.jsonl",
    "precision/codex-stale-context.jsonl",
];

/// The `## Task Context` the last call's view opens with (`compact`).
fn final_task_context(env: &TestEnv, file: &str, window: &str) -> String {
    let out = format!("{file}.view.json");
    env.run(&["compact", file, "--window", window, "-o", &out])
        .success();
    let view: Value =
        serde_json::from_str(&std::fs::read_to_string(env.work().join(&out)).unwrap()).unwrap();
    let head = view["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(head.starts_with("## Task Context"), "{head}");
    head
}

/// The lines under `## name`.
fn section_of(text: &str, name: &str) -> Vec<String> {
    let heading = format!("## {name}");
    text.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_task_context_rules_out_only_what_was_abandoned() {
    let env = TestEnv::new();
    for (fixture, window) in RETRIES.iter().flat_map(|f| [(f, "16000"), (f, "32000")]) {
        let file = env.fixture(fixture);
        let run = env.run(&[
            "probe",
            &file,
            "--window",
            window,
            "--json",
            "--fail-on-loss",
        ]);
        let v = run.json();
        assert_eq!(run.status, 0, "{fixture} at {window}: {v:#}");
        assert!(v["folds"].as_u64().unwrap() >= 2, "{fixture}: {v:#}");
        assert_eq!(v["misleading"], 0, "{fixture} at {window}: {v:#}");
        assert_eq!(v["critical_lost"], 0, "{fixture} at {window}: {v:#}");
        // The abandoned approaches are kept, error verbatim.
        assert!(v["abandoned_judged"].as_u64().unwrap() >= 1, "{v:#}");
        assert_eq!(v["abandoned_lost"], 0, "{fixture} at {window}: {v:#}");

        let head = final_task_context(&env, &file, window);
        let ruled_out = section_of(&head, "Ruled out").join("\n");
        for retried in ["mix test", "cargo test", "git push", "nightly.jsonl"] {
            assert!(
                !ruled_out.contains(retried),
                "{fixture}: {retried} in\n{head}"
            );
        }
        let abandoned = if fixture.contains("claude") {
            [
                "Bash `terraform apply -target=module.export_bucket` failed (step",
                "): Error: insufficient privileges to modify module.export_bucket (role export-ci)",
            ]
        } else {
            [
                "shell `psql -c 'ALTER TABLE exports ADD COLUMN batch int'` failed (step",
                "): ERROR:  permission denied for table exports",
            ]
        };
        for part in abandoned {
            assert!(ruled_out.contains(part), "{fixture}: {part} not in\n{head}");
        }
        // What made a retry work is one finding; narration is none.
        let findings = section_of(&head, "Findings");
        assert!(
            findings.iter().any(|l| l.starts_with("- git-push: ")
                && l.contains("works with `--set-upstream origin fix/export`")),
            "{fixture}: {head}"
        );
        for l in &findings {
            let statement = l.split_once(": ").map_or("", |(_, s)| s).to_lowercase();
            for narration in ["let me", "now let", "i'll", "next"] {
                assert!(!statement.starts_with(narration), "{fixture}: {l}");
            }
        }
        // Current state is current: the notes were written, nothing is open.
        assert!(
            head.contains("still owed: no file named in #1"),
            "{fixture}: {head}"
        );
        assert!(head.contains("docs/export-notes.md"), "{fixture}: {head}");
    }
}

#[test]
fn each_kind_of_misleading_line_is_reported_and_fails_the_probe() {
    let env = TestEnv::new();
    for fixture in STALE {
        let file = env.fixture(fixture);
        // Unfolded, the view opens with the carried Task Context, which the
        // record then contradicts three ways.
        let run = env.run(&["probe", &file, "--window", "200000", "--json"]);
        let v = run.json();
        assert_eq!(run.status, 0, "reported, not failed: {v:#}");
        assert_eq!(v["critical_lost"], 0, "{fixture}: {v:#}");
        assert_eq!(v["misleading"], 3, "{fixture}: {v:#}");
        let lines = v["misleading_lines"].as_array().unwrap();
        let kinds: Vec<&str> = lines.iter().map(|m| m["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            ["ruled_out_succeeded", "open_error_resolved", "owed_written"],
            "{fixture}: {v:#}"
        );
        let sections: Vec<&str> = lines
            .iter()
            .map(|m| m["section"].as_str().unwrap())
            .collect();
        assert_eq!(sections, ["Ruled out", "Status", "Deliverable"]);
        assert!(lines.iter().all(|m| m["proof_in_view"] == true), "{v:#}");
        assert!(v["misleading_calls"].as_u64().unwrap() >= 1, "{v:#}");
        // --fail-on-loss fails on a misleading line alone.
        let run = env.run(&["probe", &file, "--window", "200000", "--fail-on-loss"]);
        run.failure(1);
        for kind in ["ruled_out_succeeded", "open_error_resolved", "owed_written"] {
            run.stdout_has(kind);
        }
        run.stdout_has("misleading summary lines at call");
        // Before the record contradicts it, the same Task Context misleads nobody.
        let run = env.run(&["probe", &file, "--window", "200000", "--at", "1", "--json"]);
        assert_eq!(run.json()["misleading"], 0, "{fixture}");
    }
}
