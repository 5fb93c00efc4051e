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
        // word), three patched files, two distinct errors of one command.
        assert_eq!(cats["ask"]["passed"], 4, "{v:#}");
        assert_eq!(cats["constraint"]["passed"], 3, "{v:#}");
        assert_eq!(cats["deliverable"]["passed"], 3, "{v:#}");
        assert_eq!(cats["error"]["passed"], 2, "{v:#}");
        assert!(v["lost"].as_array().unwrap().is_empty(), "{v:#}");
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
