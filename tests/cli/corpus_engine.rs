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
