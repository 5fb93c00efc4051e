//! `compactor sweep`: every session under every policy of a grid, priced and
//! probed. A policy row carries what `replay --json` and `probe --json`
//! report at that policy; the output is the same for any `--jobs`; shards
//! merge into what one sweep prints; the page makes no request.

use insta::assert_snapshot;
use serde_json::Value;

use crate::util::{
    DISPOSABLE, SHRINK_FLOOR, TENANT, TENANT_TASK, TestEnv, args, corpus, crate_dir,
};

const ADVERSARIAL: &str = "probe/codex-adversarial.jsonl";

/// The `compactor.sweep_row/1` records of a `--json` run, and its total.
#[track_caller]
fn rows_and_total(stdout: &str) -> (Vec<Value>, Value) {
    let mut rows = Vec::new();
    let mut total = None;
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        match v["schema"].as_str() {
            Some("compactor.sweep_row/1") => rows.push(v),
            Some("compactor.sweep_total/1") => {
                assert!(total.is_none(), "two totals:\n{stdout}");
                total = Some(v);
            }
            other => panic!("unexpected schema {other:?}: {line}"),
        }
    }
    let total = total.unwrap_or_else(|| panic!("no total:\n{stdout}"));
    assert!(
        stdout.lines().last().unwrap().contains("sweep_total"),
        "the total comes last"
    );
    (rows, total)
}

fn of_kind<'a>(rows: &'a [Value], kind: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["kind"] == kind).collect()
}

/// The budget flags of a row's policy.
fn budget_flags(p: &Value) -> Vec<String> {
    let mut out = vec![
        "--window".to_string(),
        p["window"].to_string(),
        "--output-reserved".to_string(),
        p["output_reserved"].to_string(),
    ];
    if !p["trigger_ratio"].is_null() {
        out.extend([
            "--trigger-ratio".to_string(),
            p["trigger_ratio"].as_str().unwrap().to_string(),
            "--stop-ratio".to_string(),
            p["stop_ratio"].as_str().unwrap().to_string(),
            "--protect-recent-steps".to_string(),
            p["protect_recent_steps"].to_string(),
            "--summarizer".to_string(),
            p["summarizer"].as_str().unwrap().to_string(),
        ]);
    }
    out
}

/// Every policy row of `rows` against `replay --json` and `probe --json` of
/// its task at its policy; the recorded row against the recorded usage; a
/// trim that dropped nothing against a replay that compacted nothing.
#[track_caller]
fn assert_rows_match_replay_and_probe(env: &TestEnv, rows: &[Value]) {
    let policies = of_kind(rows, "policy");
    assert!(!policies.is_empty());
    for r in &policies {
        let task = r["session"].as_str().unwrap();
        let flags = budget_flags(&r["policy"]);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let replay = env.run(&args(&["replay", "--task", task, "--json"], &flags));
        let replay = replay.replay_json();
        let t = &replay["totals"];
        let what = format!("{task} {flags:?}");
        assert_eq!(r["calls"], t["calls"], "{what}");
        for k in ["prompt_tokens", "cache_read_tokens", "cache_write_tokens"] {
            assert_eq!(r[k], t["compacted"][k], "{what}: {k}");
        }
        assert_eq!(r["output_tokens"], t["output_tokens"], "{what}");
        assert_eq!(r["prefix_breaks"], t["prefix_breaks"], "{what}");
        let cost = t["compacted"]["cost_cached_micros"].as_u64().unwrap()
            + t["cost_output_micros"].as_u64().unwrap();
        assert_eq!(r["cost_micros"], cost, "{what}: cost");
        let calls = replay["calls"].as_array().unwrap();
        let status = |s: &str| calls.iter().filter(|c| c["status"] == s).count();
        assert_eq!(r["over_window_calls"], status("over_window"), "{what}");
        assert_eq!(r["breakthrough_calls"], status("breakthrough"), "{what}");
        let peak = calls
            .iter()
            .map(|c| c["tokens_after"].as_u64().unwrap())
            .max();
        assert_eq!(r["peak_tokens"].as_u64(), peak, "{what}");
        let probe = env.run(&args(&["probe", "--task", task, "--json"], &flags));
        probe.success();
        let p = probe.json();
        assert_eq!(r["critical_lost"], p["critical_lost"], "{what}");
        assert_eq!(r["folds"], p["folds"], "{what}");
        assert_eq!(r["worst"], p["worst_call"], "{what}");
    }
    for rec in of_kind(rows, "recorded") {
        let task = rec["session"].as_str().unwrap();
        let replay = env.run(&["replay", "--task", task, "--json"]).replay_json();
        let recorded: u64 = replay["calls"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["recorded_prompt_tokens"].as_u64())
            .sum();
        assert_eq!(rec["prompt_tokens"], recorded, "{task}");
        assert_eq!(rec["basis"], "recorded");
        // A client that never compacted sent the raw history: priced as the
        // policies are, that is the replay's raw history.
        if rec["folds"] == 0 {
            let raw = &replay["totals"]["raw"];
            let e = &rec["estimated"];
            assert_eq!(e["prompt_tokens"], raw["prompt_tokens"], "{task}");
            let cost = raw["cost_cached_micros"].as_u64().unwrap()
                + replay["totals"]["cost_output_micros"].as_u64().unwrap();
            assert_eq!(e["cost_micros"], cost, "{task}");
        }
    }
    for trim in of_kind(rows, "trim") {
        if trim["trimmed_calls"] != 0 {
            continue;
        }
        let same_window = policies.iter().find(|p| {
            p["session"] == trim["session"]
                && p["policy"]["window"] == trim["policy"]["window"]
                && p["folds"] == 0
                && p["tiers"]["shrink"] == 0
        });
        if let Some(p) = same_window {
            assert_eq!(trim["prompt_tokens"], p["prompt_tokens"], "{trim}");
            assert_eq!(trim["cost_micros"], p["cost_micros"], "{trim}");
        }
    }
}

#[test]
fn a_policy_row_is_what_replay_and_probe_report_at_that_policy() {
    let env = TestEnv::new();
    let file = env.fixture(TENANT);
    let run = env.run(&[
        "sweep",
        &file,
        "--window",
        "6000,32000,200000",
        "--trigger-ratio",
        "0.65,0.8",
        "--summarizer",
        "extractive,static",
        "--json",
    ]);
    run.success();
    let (rows, total) = rows_and_total(&run.stdout);
    assert_eq!(of_kind(&rows, "policy").len(), 12);
    assert_eq!(of_kind(&rows, "trim").len(), 3);
    assert_eq!(of_kind(&rows, "mask").len(), 3);
    assert_eq!(of_kind(&rows, "recorded").len(), 1);
    assert!(rows.iter().all(|r| r["session"] == TENANT_TASK));
    // The windows compact differently: not every row is the same.
    let costs: std::collections::BTreeSet<u64> = rows
        .iter()
        .map(|r| r["cost_micros"].as_u64().unwrap())
        .collect();
    assert!(costs.len() >= 6, "{costs:?}");
    assert!(
        of_kind(&rows, "policy")
            .iter()
            .any(|r| r["folds"].as_u64().unwrap() > 0)
    );
    assert_rows_match_replay_and_probe(&env, &rows);
    // The recommendation is a policy row of the session, and fit.
    let rec = &total["recommendation"];
    assert_eq!(rec["kind"], "policy", "{total}");
    assert!(rec["policy"].is_object(), "{total}");
    assert_eq!(total["sessions"][0]["session"], TENANT_TASK);
    let chosen = &total["sessions"][0]["recommendation"];
    let row = of_kind(&rows, "policy")
        .into_iter()
        .find(|r| r["policy"] == chosen["policy"])
        .expect("the recommended policy is a row");
    assert_eq!(row["over_window_calls"], 0);
    assert_eq!(row["worst"]["critical_lost"], 0);
    assert_eq!(row["cost_micros"], chosen["cost_micros"]);
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn a_corpus_sessions_rows_are_what_replay_and_probe_report() {
    let Some(dir) = corpus("a_corpus_sessions_rows_are_what_replay_and_probe_report") else {
        return;
    };
    let env = TestEnv::new();
    // A Codex session, and a Claude Code one that compacted itself.
    let files = [
        "codex/v0.40.0_agentcmd_unredacted/rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
        "claude-code/v2.1.39_spotter_interrupts_biglines/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    ];
    let paths: Vec<String> = files
        .iter()
        .map(|f| dir.join(f).display().to_string())
        .collect();
    let mut a: Vec<&str> = vec!["sweep"];
    a.extend(paths.iter().map(String::as_str));
    a.extend(["--window", "32000,200000", "--json"]);
    let run = env.run(&a);
    assert!(run.status <= 1, "{}", run.snapshot());
    let (rows, total) = rows_and_total(&run.stdout);
    assert_eq!(total["sessions"].as_array().unwrap().len(), 2);
    let recorded = of_kind(&rows, "recorded");
    assert!(
        recorded.iter().any(|r| r["folds"].as_u64().unwrap() > 0),
        "the Claude Code session compacted itself: {recorded:?}"
    );
    assert_rows_match_replay_and_probe(&env, &rows);
}

/// A sweep of three fixtures over a grid of four policies.
fn three_fixtures(env: &TestEnv) -> Vec<String> {
    [TENANT, SHRINK_FLOOR, DISPOSABLE]
        .iter()
        .map(|f| env.fixture(f))
        .collect()
}

const GRID: [&str; 4] = ["--window", "6000,32000", "--trigger-ratio", "0.65,0.8"];

#[test]
fn jobs_1_and_jobs_2_give_the_same_bytes() {
    let env = TestEnv::new();
    let files = three_fixtures(&env);
    let sweep = |jobs: &str, more: &[&str]| {
        let mut a: Vec<&str> = vec!["sweep", "--jobs", jobs];
        a.extend(files.iter().map(String::as_str));
        a.extend(GRID);
        a.extend(more);
        let run = env.run(&a);
        assert!(run.status <= 1, "{}", run.snapshot());
        run
    };
    for more in [&["--json"][..], &[][..]] {
        let one = sweep("1", more);
        let two = sweep("2", more);
        assert_eq!(one.stdout, two.stdout, "{more:?}");
        assert_eq!(one.status, two.status);
    }
    sweep("1", &["-o", "one.html"]);
    sweep("2", &["-o", "two.html"]);
    let one = std::fs::read(env.work().join("one.html")).unwrap();
    let two = std::fs::read(env.work().join("two.html")).unwrap();
    assert!(one == two, "the pages differ");
    let (rows, _) = rows_and_total(&sweep("2", &["--json"]).stdout);
    // Three sessions × (4 policies, 2 trims, 2 masks, the recording),
    // session by session.
    assert_eq!(rows.len(), 27);
    let sessions: Vec<&str> = rows
        .iter()
        .map(|r| r["session"].as_str().unwrap())
        .collect();
    let mut grouped = sessions.clone();
    grouped.dedup();
    assert_eq!(grouped.len(), 3, "{sessions:?}");
}

#[test]
fn the_page_is_self_contained_with_a_chart_and_a_sortable_table_per_session() {
    let env = TestEnv::new();
    let files = three_fixtures(&env);
    let mut a: Vec<&str> = vec!["sweep"];
    a.extend(files.iter().map(String::as_str));
    a.extend(GRID);
    a.extend(["-o", "sweep.html"]);
    let run = env.run(&a);
    assert!(run.status <= 1, "{}", run.snapshot());
    run.stderr_has("wrote sweep.html (3 sessions, ");
    let html = std::fs::read_to_string(env.work().join("sweep.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    for external in [
        "http://", "https://", "//cdn", "src=", "@import", "url(http",
    ] {
        assert!(!html.contains(external), "{external} in the page");
    }
    // One chart per session, each with its points and the references.
    assert_eq!(html.matches("<svg id=\"scatter-").count(), 3);
    assert_eq!(html.matches("class=\"pt recorded\"").count(), 3);
    assert_eq!(html.matches("class=\"pt trim\"").count(), 6);
    // Masking costs the same at every window: one point per session for
    // its two rows, named with both windows.
    assert_eq!(html.matches("class=\"pt mask\"").count(), 3);
    assert_eq!(html.matches(">mask 6000, 32000</text>").count(), 3);
    assert!(html.contains("class=\"ring front\""));
    assert!(html.contains("class=\"ring chosen\""));
    // The totals and each session's table sort; the script is inline.
    assert_eq!(html.matches("<table class=\"sortable sweep\">").count(), 4);
    assert!(html.contains("table.sortable"));
    assert!(html.contains("<script>"));
}

#[test]
fn dash_as_the_page_file_puts_only_the_page_on_stdout() {
    let env = TestEnv::new();
    let file = env.fixture(TENANT);
    let sweep = |more: &[&str]| {
        let mut a: Vec<&str> = vec!["sweep", &file, "--window", "6000,32000"];
        a.extend(more);
        let run = env.run(&a);
        run.success();
        run
    };
    sweep(&["-o", "sweep.html"]);
    let page = std::fs::read_to_string(env.work().join("sweep.html")).unwrap();
    for more in [&["-o", "-"][..], &["-o", "-", "--json"][..]] {
        let run = sweep(more);
        assert_eq!(run.stdout, page, "{more:?}");
        assert!(!run.stderr.contains("wrote "), "{more:?}: {}", run.stderr);
    }
}

#[test]
fn an_invalid_combination_is_refused_and_skip_invalid_sweeps_the_rest() {
    let env = TestEnv::new();
    let file = env.fixture(TENANT);
    // The default stop ratio is 0.5: trigger 0.5 cannot run.
    let run = env.run(&["sweep", &file, "--trigger-ratio", "0.5,0.65"]);
    run.failure(2);
    run.stderr_has("1 of the 2 policies of the grid cannot run")
        .stderr_has("trigger 0.5 · stop 0.5")
        .stderr_has("must be below the trigger ratio")
        .stderr_has("--skip-invalid");
    assert_eq!(env.counts(), [0; 3], "refused before anything was imported");
    let run = env.run(&[
        "sweep",
        &file,
        "--trigger-ratio",
        "0.5,0.65",
        "--skip-invalid",
        "--json",
    ]);
    run.success();
    run.stderr_has("left out 1 policy that cannot run");
    let (rows, _) = rows_and_total(&run.stdout);
    let policies = of_kind(&rows, "policy");
    assert_eq!(policies.len(), 1);
    assert_eq!(policies[0]["policy"]["trigger_ratio"], "0.65");
    // A reserve the session's own window cannot hold is known only then.
    let run = env.run(&["sweep", &file, "--output-reserved", "900000"]);
    run.failure(2);
    run.stderr_has(format!("task {TENANT_TASK}: "))
        .stderr_has("must be larger than the output reservation");
    let run = env.run(&["sweep", &file, "--jobs", "0"]);
    run.failure(2);
    run.stderr_has("--jobs 0");
}

#[test]
fn no_fit_policy_is_said_and_exits_1() {
    let env = TestEnv::new();
    let file = env.fixture(ADVERSARIAL);
    let run = env.run(&[
        "sweep",
        &file,
        "--window",
        "8000,12000",
        "--output-reserved",
        "1000",
        "--summarizer",
        "static",
    ]);
    run.failure(1);
    run.stdout_has("no policy keeps every critical probe at every call with no call over the window; the closest: ");
}

#[test]
fn shards_merge_into_what_one_sweep_prints() {
    let env = TestEnv::new();
    let files = three_fixtures(&env);
    let sweep = |files: &[String], more: &[&str]| {
        let mut a: Vec<&str> = vec!["sweep"];
        a.extend(files.iter().map(String::as_str));
        a.extend(GRID);
        a.extend(more);
        let run = env.run(&a);
        assert!(run.status <= 1, "{}", run.snapshot());
        run
    };
    let whole = sweep(&files, &["--json"]);
    let first = sweep(&files[..1], &["--json"]);
    let rest = sweep(&files[1..], &["--json"]);
    env.write("a.jsonl", &first.stdout);
    env.write("b.jsonl", &rest.stdout);
    let merged = env.run(&["sweep", "--merge", "a.jsonl", "b.jsonl", "--json"]);
    assert_eq!(merged.status, whole.status, "{}", merged.snapshot());
    assert_eq!(merged.stdout, whole.stdout);
    // The tables and the page too.
    let human = sweep(&files, &["-o", "whole.html"]);
    let merged = env.run(&[
        "sweep",
        "--merge",
        "a.jsonl",
        "b.jsonl",
        "-o",
        "merged.html",
    ]);
    assert_eq!(merged.stdout, human.stdout);
    let read = |f: &str| std::fs::read(env.work().join(f)).unwrap();
    assert!(
        read("whole.html") == read("merged.html"),
        "the pages differ"
    );
    assert!(human.stdout.contains("totals · 3 sessions · 4 policies"));
    assert!(human.stdout.contains("recommended for all 3 sessions: "));
}

#[test]
fn a_merge_names_the_line_it_cannot_take() {
    let env = TestEnv::new();
    let file = env.fixture(TENANT);
    let run = env.run(&["sweep", &file, "--json"]);
    run.success();
    env.write("shard.jsonl", &run.stdout);
    let first = run.stdout.lines().next().unwrap();
    env.write(
        "bad.jsonl",
        format!("{first}\n{{\"schema\":\"compactor.replay/1\"}}\n"),
    );
    let run = env.run(&["sweep", "--merge", "bad.jsonl"]);
    run.failure(2);
    run.stderr_has("bad.jsonl:2: expected a compactor.sweep_row/1 or compactor.sweep_total/1 record, found \"compactor.replay/1\"");
    env.write("torn.jsonl", &first[..first.len() / 2]);
    let run = env.run(&["sweep", "--merge", "torn.jsonl"]);
    run.failure(2);
    run.stderr_has("torn.jsonl:1: not JSON");
    // One session in two shards is counted once or not at all: refused.
    let run = env.run(&["sweep", "--merge", "shard.jsonl", "shard.jsonl"]);
    run.failure(2);
    run.stderr_has("shard.jsonl:1: task ")
        .stderr_has("each session belongs to one shard");
    // Merging is no sweep: sources and grid flags are refused beside it.
    let run = env.run(&["sweep", "--merge", "shard.jsonl", "--window", "32000"]);
    run.failure(2);
}

#[test]
fn table_of_the_tenant_fixture_under_three_windows() {
    let env = TestEnv::new();
    let file = env.fixture(TENANT);
    let run = env.run(&["sweep", &file, "--window", "6000,32000,200000"]);
    run.success();
    assert_snapshot!(run.snapshot());
}

#[test]
fn a_directory_sweeps_each_transcript_and_a_task_name_works_as_a_source() {
    let env = TestEnv::new();
    env.fixture("fixtures");
    let run = env.run(&["sweep", "fixtures", "--window", "32000", "--json"]);
    assert!(run.status <= 1, "{}", run.snapshot());
    let (_, total) = rows_and_total(&run.stdout);
    assert_eq!(total["sessions"].as_array().unwrap().len(), 4);
    // Imported now: the task by a prefix of its id, the same rows.
    let by_file = env.run(&["sweep", TENANT, "--window", "32000", "--json"]);
    let by_name = env.run(&["sweep", &TENANT_TASK[..8], "--window", "32000", "--json"]);
    by_name.success();
    assert_eq!(by_file.stdout, by_name.stdout);
    let run = env.run(&["sweep", "missing.jsonl"]);
    run.failure(2);
    run.stderr_has("no such file: missing.jsonl");
}

#[test]
fn the_guide_example_is_what_sweep_prints() {
    let readme = std::fs::read_to_string(crate_dir().join("docs/src/sweep.md")).unwrap();
    let command = "$ compactor --db demo.db sweep testdata/fixtures/claude-shrink-floor.jsonl ";
    let at = readme.find(command).expect("the guide's worked example");
    let block = &readme[at..];
    let (line, rest) = block.split_once('\n').unwrap();
    let shown = &rest[..rest.find("```").unwrap()];
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let mut a: Vec<&str> = vec!["sweep", &file];
    a.extend(line[command.len()..].split_whitespace());
    let run = env.run(&a);
    run.success();
    assert_eq!(
        run.stdout.trim_end(),
        shown.trim_end(),
        "docs/src/sweep.md's worked example"
    );
}
