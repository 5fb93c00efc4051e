//! The engine commands on every task of the shared corpus (each main session
//! and each subagent), at the default window and at one small enough to force
//! folding: preflight and step views validate as Anthropic Messages bodies,
//! replay has one row per model call, and compact writes a view that
//! validates and stays under trigger or says why not.
//!
//! When the corpus is absent every test here says so and returns. Each test
//! imports the corpus once per window into its own store.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util::{
    DEFAULT_BUDGET, FOLD, TestEnv, args, assert_report_fields, assert_status_consistent,
    blake3_hex, corpus, corpus_files, valid_view,
};

/// The two windows: (name, flags, w_eff, trigger).
const WINDOWS: [(&str, [&str; 4], u64, u64); 2] = [
    ("200000", DEFAULT_BUDGET, 180_000, 117_000),
    ("32000", FOLD, 28_000, 18_200),
];

/// A store holding the whole corpus, and its tasks (`tasks --json`).
fn corpus_store(test: &str) -> Option<(TestEnv, Vec<Value>)> {
    let dir = corpus(test)?;
    let files = corpus_files(&dir);
    let env = TestEnv::new();
    let mut a = vec!["import".to_string()];
    a.extend(files.iter().map(|f| f.display().to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    env.run(&a).success();
    let tasks = env.tasks();
    assert!(
        tasks.len() >= files.len(),
        "{} tasks from {} files",
        tasks.len(),
        files.len()
    );
    assert!(
        tasks.iter().any(|t| t["parent"].is_string()),
        "no subagent task"
    );
    Some((env, tasks))
}

/// Run a projecting command with `--json`: exit 0, or 1 exactly when the
/// status is over_window. Returns the report; None when the budget was
/// refused because the task's system prompt and tools alone exceed its
/// w_eff (a session with a large system prompt at the small window).
#[track_caller]
fn projected(env: &TestEnv, a: &[&str], what: &str) -> Option<Value> {
    let run = env.run(a);
    if run.refused_below_overhead() {
        return None;
    }
    assert!(
        run.status == 0 || run.status == 1,
        "{what}:\n{}",
        run.snapshot()
    );
    let r = run.json();
    let expected = if r["status"] == "over_window" { 1 } else { 0 };
    assert_eq!(run.status, expected, "{what}: {r}");
    assert_report_fields(&r);
    assert_status_consistent(&r);
    Some(r)
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn preflight_and_step_views_validate_on_every_task() {
    for (window, budget, _, trigger) in WINDOWS {
        let Some((env, tasks)) = corpus_store("preflight_and_step_views_validate_on_every_task")
        else {
            return;
        };
        let (mut fired, mut refused) = (0, 0);
        for t in &tasks {
            let id = t["id"].as_str().unwrap();
            for mode in ["preflight", "step"] {
                let what = format!("{mode} {id} --window {window}");
                let Some(r) = projected(
                    &env,
                    &args(&[mode, "--task", id, "--view", "v.json", "--json"], &budget),
                    &what,
                ) else {
                    refused += 1;
                    continue;
                };
                let (bytes, view) = valid_view(&env.work().join("v.json"));
                assert_eq!(blake3_hex(&bytes), r["view_hash"], "{what}");
                assert_eq!(
                    view.messages.len() as u64,
                    r["messages"].as_u64().unwrap(),
                    "{what}"
                );
                assert_eq!(r["trigger"], trigger, "{what}");
                if mode == "preflight" {
                    assert_eq!(r["tiers_fired"], serde_json::json!([]), "{what}: {r}");
                } else {
                    assert_eq!(r["call"], t["steps"].as_u64().unwrap() + 1, "{what}");
                    fired += usize::from(!r["tiers_fired"].as_array().unwrap().is_empty());
                }
            }
        }
        if window == "32000" {
            assert!(
                fired >= 5,
                "only {fired} tasks reduced anything at --window 32000"
            );
        } else {
            assert_eq!(refused, 0, "at the default window every task runs");
        }
        assert!(
            refused < tasks.len(),
            "{refused} of {} refused",
            tasks.len()
        );
    }
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn replay_and_compact_at_the_default_window() {
    replay_and_compact("replay_and_compact_at_the_default_window", WINDOWS[0]);
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn replay_and_compact_at_a_window_that_forces_folding() {
    replay_and_compact(
        "replay_and_compact_at_a_window_that_forces_folding",
        WINDOWS[1],
    );
}

/// Replay has a row per model call, and compact then writes a valid view.
fn replay_and_compact(test: &str, (window, budget, w_eff, trigger): (&str, [&str; 4], u64, u64)) {
    {
        let Some((env, tasks)) = corpus_store(test) else {
            return;
        };
        let mut tiers: BTreeMap<String, u64> = BTreeMap::new();
        for t in &tasks {
            let id = t["id"].as_str().unwrap();
            let what = format!("{id} --window {window}");
            let run = env.run(&args(&["replay", "--task", id, "--json"], &budget));
            if run.refused_below_overhead() {
                // So is compact, the same way.
                let run = env.run(&args(&["compact", "--task", id, "-o", "c.json"], &budget));
                assert!(
                    run.refused_below_overhead(),
                    "compact {what}: {}",
                    run.snapshot()
                );
                assert!(window != "200000", "{what}: {}", run.snapshot());
                continue;
            }
            let r = run.replay_json();
            let steps = r["calls"].as_array().unwrap();
            assert_eq!(steps.len() as u64, t["steps"].as_u64().unwrap(), "{what}");
            for (i, s) in steps.iter().enumerate() {
                assert_eq!(s["call"], i as u64 + 1, "{what}");
                let mut row = s.clone();
                row["trigger"] = trigger.into();
                row["stop"] = 0.into();
                row["w_eff"] = w_eff.into();
                assert_report_fields(&row);
                assert_status_consistent(&row);
                for tier in s["tiers_fired"].as_array().unwrap() {
                    *tiers.entry(tier.as_str().unwrap().to_string()).or_default() += 1;
                }
            }

            // compact replays on a scratch copy of its own and writes the
            // view of the next call.
            let r = projected(
                &env,
                &args(
                    &["compact", "--task", id, "-o", "c.json", "--json"],
                    &budget,
                ),
                &format!("compact {what}"),
            )
            .expect("replay ran, and so does compact");
            let (bytes, _) = valid_view(&env.work().join("c.json"));
            assert_eq!(blake3_hex(&bytes), r["view_hash"], "{what}");
            assert_eq!(r["call"], t["steps"].as_u64().unwrap() + 1, "{what}");
            // Under trigger, or a status that says why not: breakthrough or
            // over_window after the ladder, over_trigger only while the
            // anti-thrash gate holds.
            let status = r["status"].as_str().unwrap();
            if status == "over_trigger" {
                assert_eq!(r["gated"], true, "{what}: {r}");
            } else {
                assert!(
                    ["ok", "breakthrough", "over_window"].contains(&status),
                    "{what}: {r}"
                );
            }
        }
        if window == "32000" {
            // A window this small folds real sessions.
            assert!(tiers.get("floor").copied().unwrap_or(0) > 0, "{tiers:?}");
            assert!(tiers.get("shrink").copied().unwrap_or(0) > 0, "{tiers:?}");
        }
    }
}

/// The Codex session whose second turn once placeheld an image from its
/// first and so rewrote a cached prefix that no tier touched (issue 34).
const IMAGE_SESSION: &str = "01997ea4-a70d-7da3-8c20-c736db82a7c5";

/// Issue 34: compaction never costs more than doing nothing when it does
/// nothing. At a window no session reaches no tier fires, so every task's
/// views are its raw history's bytes: the same cost, call by call
/// extending the one before. And the session whose image rewrote its
/// prefix, at its own window (272,000, recorded), costs what its raw
/// history does, with no prefix break.
#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn compaction_that_does_nothing_costs_what_the_raw_history_does() {
    let Some((env, tasks)) =
        corpus_store("compaction_that_does_nothing_costs_what_the_raw_history_does")
    else {
        return;
    };
    let cost =
        |r: &Value, history: &str| r["totals"][history]["cost_cached_micros"].as_u64().unwrap();
    let mut priced = 0;
    for t in &tasks {
        let id = t["id"].as_str().unwrap();
        if t["steps"] == 0 {
            continue;
        }
        let r = env
            .run(&["replay", "--task", id, "--window", "2000000", "--json"])
            .replay_json();
        let fired = r["calls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| !c["tiers_fired"].as_array().unwrap().is_empty());
        assert!(!fired, "{id}: a tier fired at a window no session reaches");
        assert_eq!(
            cost(&r, "compacted"),
            cost(&r, "raw"),
            "{id}: {}",
            r["totals"]
        );
        assert_eq!(r["totals"]["prefix_breaks"], 0, "{id}");
        assert_eq!(r["totals"]["compacted"], r["totals"]["raw"], "{id}");
        priced += 1;
    }
    assert!(priced >= 29, "only {priced} tasks with calls");

    let r = env
        .run(&["replay", "--task", IMAGE_SESSION, "--json"])
        .replay_json();
    assert_eq!(r["budget"]["window"], 272_000);
    assert_eq!(cost(&r, "compacted"), cost(&r, "raw"), "{}", r["totals"]);
    assert_eq!(r["totals"]["prefix_breaks"], 0);
    let calls = r["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 18);
    // Call 18 starts turn 2: it reads all of call 17's view from the cache.
    assert_eq!(calls[17]["turn"], 2);
    assert_eq!(
        calls[17]["cache_read_tokens"].as_u64().unwrap(),
        calls[16]["cache_read_tokens"].as_u64().unwrap()
            + calls[16]["cache_write_tokens"].as_u64().unwrap()
    );
}

/// Issue 34: a sweep of the whole corpus at 32k, 64k and 200k recommends,
/// for each session and over all of them, nothing that costs more than
/// the client's own sends (priced the same way), and sets a `mask` row
/// (observation masking) beside every session at every window.
#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn a_corpus_sweep_recommends_nothing_dearer_than_the_clients_own_sends() {
    let Some(dir) = corpus("a_corpus_sweep_recommends_nothing_dearer_than_the_clients_own_sends")
    else {
        return;
    };
    let env = TestEnv::new();
    let dir = dir.display().to_string();
    let run = env.run(&["sweep", &dir, "--window", "32000,64000,200000", "--json"]);
    assert!(run.status == 0, "{}", run.snapshot());
    let lines = run.json_lines();
    let (rows, total): (Vec<&Value>, Vec<&Value>) = lines
        .iter()
        .partition(|v| v["schema"] == "compactor.sweep_row/1");
    let total = total.first().expect("a totals record");
    let sessions = total["sessions"].as_array().unwrap();
    assert!(sessions.len() >= 29, "{} sessions", sessions.len());
    for s in sessions {
        let id = s["session"].as_str().unwrap();
        let masks: Vec<u64> = rows
            .iter()
            .filter(|r| r["session"] == id && r["kind"] == "mask")
            .map(|r| r["policy"]["window"].as_u64().unwrap())
            .collect();
        assert_eq!(masks, [32_000, 64_000, 200_000], "{id}");
        let rec = &s["recommendation"];
        let cost = rec["cost_micros"].as_u64().expect("a recommendation");
        let recorded = rec["recorded_cost_micros"].as_u64().unwrap();
        assert!(cost <= recorded, "{id}: {rec}");
        assert!(rec["saving_micros"].as_i64().unwrap() >= 0, "{id}: {rec}");
    }
    let rec = &total["recommendation"];
    assert!(
        rec["cost_micros"].as_u64().unwrap() <= rec["recorded_cost_micros"].as_u64().unwrap(),
        "{rec}"
    );
    assert_eq!(total["mask"].as_array().unwrap().len(), 3);
}
