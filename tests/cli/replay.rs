//! `compactor replay`: the timeline, its JSON and JSONL forms, ranges, view
//! files, saved runs, and a replay aborted mid-way (COMPACTOR_FAULT) and run again.

use std::collections::BTreeMap;

use insta::assert_snapshot;
use serde_json::Value;

use crate::util::{
    BREAKTHROUGH, BUDGETS, DISPOSABLE, DISPOSABLE_CALLS, DISPOSABLE_TASK, FOLD, SHRINK_FLOOR,
    SHRINK_FLOOR_CALLS, SHRINK_FLOOR_TASK, TENANT, TENANT_TASK, TIGHT, TestEnv, args,
    assert_report_fields, assert_status_consistent, blake3_hex, in_place_compact, valid_view,
};

fn shrink_floor() -> TestEnv {
    let env = TestEnv::new();
    env.import_fixture(SHRINK_FLOOR);
    env
}

fn replay_json(env: &TestEnv, task: &str, more: &[&str]) -> Value {
    let run = env.run(&args(&["replay", "--task", task, "--json"], more));
    run.success();
    run.json()
}

fn steps(r: &Value) -> &Vec<Value> {
    r["calls"].as_array().expect("calls is an array")
}

fn hashes(r: &Value) -> Vec<String> {
    steps(r)
        .iter()
        .map(|s| s["view_hash"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn timeline_of_the_shrink_floor_fixture_under_the_fold_budget() {
    let env = shrink_floor();
    let run = env.run(&args(&["replay", "--task", SHRINK_FLOOR_TASK], &FOLD));
    assert_snapshot!(run.snapshot());
    // One row per model call, between the header lines and the totals.
    let rows = run
        .stdout
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(rows as u64, SHRINK_FLOOR_CALLS);
}

#[test]
fn json_has_one_step_object_per_call_and_totals() {
    let env = shrink_floor();
    let r = replay_json(&env, SHRINK_FLOOR_TASK, &FOLD);
    assert_eq!(r["task"], SHRINK_FLOOR_TASK);
    assert_eq!(r["budget"]["window"], 32000);
    let steps = steps(&r);
    assert_eq!(steps.len() as u64, SHRINK_FLOOR_CALLS);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["call"], i as u64 + 1, "{s}");
        for k in [
            "turn",
            "call",
            "tokens_before",
            "tokens_after",
            "raw_tokens",
        ] {
            assert!(s[k].is_u64(), "{k}: {s}");
        }
        // Rows carry the report's contract fields; the budget is the run's.
        let mut report = s.clone();
        report["trigger"] = 18200.into();
        report["stop"] = 14000.into();
        report["w_eff"] = 28000.into();
        assert_report_fields(&report);
        assert_status_consistent(&report);
        let (read, write) = (
            s["cache_read_tokens"].as_u64().unwrap(),
            s["cache_write_tokens"].as_u64().unwrap(),
        );
        assert!(write > 0, "every call writes something new: {s}");
        if i == 0 {
            assert_eq!(read, 0, "nothing is cached before the first call");
        }
    }
    // Turns: 17 calls in turn 1, 3 in turn 2.
    let turns: Vec<u64> = steps.iter().map(|s| s["turn"].as_u64().unwrap()).collect();
    assert_eq!(turns.iter().filter(|t| **t == 1).count(), 17);
    assert_eq!(turns.iter().filter(|t| **t == 2).count(), 3);
    // Some calls reduced, and the fold budget reached the floor.
    let fired: Vec<&str> = steps
        .iter()
        .flat_map(|s| s["tiers_fired"].as_array().unwrap())
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(fired.contains(&"floor"), "{fired:?}");
    let totals = &r["totals"];
    assert_eq!(totals["calls"], SHRINK_FLOOR_CALLS);
    for side in ["compacted", "raw"] {
        for k in ["prompt_tokens", "cache_read_tokens", "cache_write_tokens"] {
            assert!(totals[side][k].is_u64(), "{side}.{k}: {totals}");
        }
        // Money in integer micro-dollars.
        for k in ["cost_cached_micros", "cost_uncached_micros"] {
            assert!(totals[side][k].is_u64(), "{side}.{k}: {totals}");
        }
        assert!(
            totals[side]["cost_cached_micros"].as_u64()
                <= totals[side]["cost_uncached_micros"].as_u64(),
            "{totals}"
        );
    }
    let sum: u64 = steps
        .iter()
        .map(|s| {
            s["cache_read_tokens"].as_u64().unwrap() + s["cache_write_tokens"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(totals["compacted"]["prompt_tokens"], sum);
    // Compaction made the prompts smaller than the raw history's.
    assert!(
        totals["compacted"]["prompt_tokens"].as_u64() < totals["raw"]["prompt_tokens"].as_u64(),
        "{totals}"
    );
}

#[test]
fn step_count_equals_the_tasks_model_calls() {
    let env = TestEnv::new();
    for f in [SHRINK_FLOOR, TENANT, DISPOSABLE, BREAKTHROUGH] {
        env.import_fixture(f);
    }
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 4);
    for t in &tasks {
        let id = t["id"].as_str().unwrap();
        for (name, budget) in BUDGETS {
            let r = replay_json(&env, id, &budget);
            assert_eq!(
                steps(&r).len() as u64,
                t["steps"].as_u64().unwrap(),
                "{id} under {name}"
            );
        }
    }
}

#[test]
fn from_and_to_limit_the_rows_not_the_calls_run() {
    let env = shrink_floor();
    let full = replay_json(&env, SHRINK_FLOOR_TASK, &FOLD);
    let fresh = shrink_floor();
    let part = replay_json(
        &fresh,
        SHRINK_FLOOR_TASK,
        &args(&["--from", "7", "--to", "12"], &FOLD),
    );
    let rows: Vec<u64> = steps(&part)
        .iter()
        .map(|s| s["call"].as_u64().unwrap())
        .collect();
    assert_eq!(rows, (7..=12).collect::<Vec<_>>());
    assert_eq!(part["totals"]["calls"], 6);
    // Calls before --from still ran: the rows equal the full replay's.
    assert_eq!(hashes(&part), hashes(&full)[6..12].to_vec());
    let run = fresh.run(&args(
        &["replay", "--task", SHRINK_FLOOR_TASK, "--to", "3"],
        &FOLD,
    ));
    run.success().stdout_has("totals over 3 calls");
}

#[test]
fn bad_ranges_and_flags_are_refused() {
    let env = shrink_floor();
    let t = SHRINK_FLOOR_TASK;
    for (extra, message) in [
        (
            vec!["--from", "0"],
            "--from 0 --to 20 is out of range: task 5b1e2d3c-7f4a-4e2b-9c1d-2a3b4c5d6e7f has calls 1..=20",
        ),
        (vec!["--to", "21"], "--from 1 --to 21 is out of range"),
        (
            vec!["--from", "9", "--to", "8"],
            "--from 9 --to 8 is out of range",
        ),
        (vec!["--json", "--jsonl"], "cannot be used with"),
        (vec!["--force"], "--save <NAME>"),
        (
            vec!["--stop-ratio", "0.9"],
            "must be below the trigger ratio",
        ),
    ] {
        let run = env.run(&args(&["replay", "--task", t], &extra));
        run.failure(2);
        assert!(run.stderr.contains(message), "{extra:?}: {}", run.stderr);
    }
    let run = env.run(&["replay", "--task", "nope"]);
    run.failure(2).stderr_has("unknown task \"nope\"");
}

#[test]
fn views_dir_holds_one_file_per_call_hashing_to_its_row() {
    let env = shrink_floor();
    let r = replay_json(&env, SHRINK_FLOOR_TASK, &args(&["--views", "views"], &FOLD));
    let dir = env.work().join("views");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let expected: Vec<String> = (1..=SHRINK_FLOOR_CALLS)
        .map(|k| format!("call-{k:04}.json"))
        .collect();
    assert_eq!(files, expected);
    for s in steps(&r) {
        let k = s["call"].as_u64().unwrap();
        let (bytes, view) = valid_view(&dir.join(format!("call-{k:04}.json")));
        assert_eq!(blake3_hex(&bytes), s["view_hash"], "call {k}");
        assert_eq!(view.messages.len() as u64, s["messages"].as_u64().unwrap());
    }
}

#[test]
fn saved_runs_are_listed_and_not_overwritten_without_force() {
    let env = shrink_floor();
    let run = env.run(&["runs"]);
    run.success().stderr_has("no saved runs");

    let r = replay_json(&env, SHRINK_FLOOR_TASK, &args(&["--save", "fold"], &FOLD));
    let final_hash = hashes(&r).last().unwrap().clone();
    let run = env.run(&["runs"]);
    run.success();
    assert!(
        run.stdout.starts_with(&format!(
            "fold  task {SHRINK_FLOOR_TASK} · 20 calls · window 32000 reserve 4000 trigger 0.65 stop 0.5 protect 5 · extractive · final view {}",
            &final_hash[..16]
        )),
        "{}",
        run.stdout
    );
    let runs = env.run(&["runs", "--json"]).json_list();
    let runs = runs.as_slice();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["name"], "fold");
    assert_eq!(runs[0]["task"], SHRINK_FLOOR_TASK);
    assert_eq!(runs[0]["calls"], SHRINK_FLOOR_CALLS);
    assert_eq!(runs[0]["final_view_hash"], final_hash.as_str());
    assert_eq!(runs[0]["settings"]["budget"]["window"], 32000);
    assert_eq!(runs[0]["totals"], r["totals"]);

    // The name is taken: refused, and the saved run is unchanged.
    let run = env.run(&["replay", "--task", SHRINK_FLOOR_TASK, "--save", "fold"]);
    run.failure(2).stderr_has(format!(
        "task {SHRINK_FLOOR_TASK} already has a run named \"fold\"\nhint: pass --force"
    ));
    assert_eq!(
        env.run(&["runs", "--json"]).json_list()[0]["settings"]["budget"]["window"],
        32000
    );
    // --force replaces it.
    let run = env.run(&[
        "replay",
        "--task",
        SHRINK_FLOOR_TASK,
        "--save",
        "fold",
        "--force",
        "--to",
        "4",
    ]);
    run.success().stderr_has("saved as run \"fold\" (4 calls)");
    let runs = env.run(&["runs", "--json"]).json_list();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["calls"], 4);
    assert_eq!(runs[0]["settings"]["budget"]["window"], 200000);
}

#[test]
fn jsonl_prints_one_object_per_call() {
    let env = shrink_floor();
    let full = replay_json(&env, SHRINK_FLOOR_TASK, &FOLD);
    let fresh = shrink_floor();
    let run = fresh.run(&args(
        &["replay", "--task", SHRINK_FLOOR_TASK, "--jsonl"],
        &FOLD,
    ));
    run.success();
    let mut lines = run.json_lines();
    // One record per call, then the totals record.
    assert_eq!(lines.len() as u64, SHRINK_FLOOR_CALLS + 1);
    let totals = lines.pop().unwrap();
    assert_eq!(totals["schema"], "compactor.replay_totals/1");
    assert_eq!(totals["totals"], full["totals"]);
    for (line, row) in lines.iter_mut().zip(steps(&full)) {
        assert!(line.is_object());
        assert_eq!(line["schema"], "compactor.replay_call/1");
        line.as_object_mut().unwrap().remove("schema");
        assert_eq!(line, row, "the JSONL rows are the --json calls");
    }
}

/// Run an in-place `replay --jsonl` on `env`'s store that aborts right after
/// committing call `at` (the hidden `COMPACTOR_FAULT` switch), and return the
/// call the store says it committed last.
fn aborted_replay(env: &TestEnv, task: &str, budget: &[&str], at: u64) -> u64 {
    let out = env
        .std_command()
        .arg("--db")
        .arg(env.db())
        .args(args(
            &["replay", "--task", task, "--in-place", "--jsonl"],
            budget,
        ))
        .env("COMPACTOR_FAULT", format!("abort-after-call:{at}"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the replay");
    assert!(
        !out.status.success() && out.status.code().is_none(),
        "the replay did not abort: {}",
        out.status
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(6), "SIGABRT: {}", out.status);
    }
    env.conn()
        .query_row(
            "SELECT last_call FROM replay_progress WHERE task_id = ?1",
            [task],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as u64
}

/// An in-place `compact` after an interrupted run resumes it and ends on `view_hash`.
fn compact_resumes_to(env: &TestEnv, budget: &[&str], view_hash: &Value) {
    let run = env.run(&in_place_compact(TENANT_TASK, &args(&["--json"], budget)));
    run.success().stderr_has("resuming at call");
    assert_eq!(&run.json()["view_hash"], view_hash);
}

#[test]
fn a_replay_aborted_mid_way_and_run_again_ends_on_the_same_view() {
    let budget = FOLD;
    // The uninterrupted reference, on a fresh store.
    let reference = TestEnv::new();
    reference.import_fixture(TENANT);
    let full = replay_json(&reference, TENANT_TASK, &budget);
    let full_hashes = hashes(&full);
    let run = reference.run(&args(
        &["compact", "--task", TENANT_TASK, "--json", "-o", "v.json"],
        &budget,
    ));
    run.success();
    let compacted = run.json()["view_hash"].clone();

    // Aborted right after committing call 5 of 25, then resumed by a new
    // process at the call the aborted one committed last.
    let env = TestEnv::new();
    env.import_fixture(TENANT);
    let committed = aborted_replay(&env, TENANT_TASK, &budget, 5);
    assert_eq!(committed, 5, "progress is not the aborted call");
    let resumed = replay_json(&env, TENANT_TASK, &args(&["--resume"], &budget));
    assert_eq!(steps(&resumed)[0]["call"], committed);
    assert_eq!(
        hashes(&resumed),
        full_hashes[committed as usize - 1..].to_vec()
    );
    // compact then resumes after the replay and ends on the reference's view.
    compact_resumes_to(&env, &budget, &compacted);

    // Aborted again on another store, then replayed again: a replay starts
    // from a scratch copy, so it is the uninterrupted one, row for row.
    let env = TestEnv::new();
    env.import_fixture(TENANT);
    assert_eq!(aborted_replay(&env, TENANT_TASK, &budget, 9), 9);
    let again = replay_json(&env, TENANT_TASK, &budget);
    assert_eq!(hashes(&again), full_hashes);
    // In place without --resume it says that it is re-running stored calls.
    let run = env.run(&args(
        &["replay", "--task", TENANT_TASK, "--in-place", "--json"],
        &budget,
    ));
    run.success()
        .stderr_has("already ran in place on this store");

    // A compact after an aborted replay resumes and ends on the same view too.
    let env = TestEnv::new();
    env.import_fixture(TENANT);
    assert_eq!(aborted_replay(&env, TENANT_TASK, &budget, 13), 13);
    compact_resumes_to(&env, &budget, &compacted);
}

#[test]
fn replays_on_fresh_stores_are_byte_identical() {
    // The determinism contract at the CLI: same raw, same (empty) store, same
    // budget ⇒ the same rows, hashes and totals.
    for (name, budget) in BUDGETS {
        let a = shrink_floor();
        let b = shrink_floor();
        let ra = a.run(&args(
            &["replay", "--task", SHRINK_FLOOR_TASK, "--json"],
            &budget,
        ));
        let rb = b.run(&args(
            &["replay", "--task", SHRINK_FLOOR_TASK, "--json"],
            &budget,
        ));
        assert_eq!(ra.stdout, rb.stdout, "{name}");
        assert_eq!(a.snapshot_rows(), b.snapshot_rows(), "{name}");
    }
    // And every budget ends on its own view.
    let mut finals = BTreeMap::new();
    for (name, budget) in BUDGETS {
        let env = shrink_floor();
        finals.insert(
            name,
            hashes(&replay_json(&env, SHRINK_FLOOR_TASK, &budget)).pop(),
        );
    }
    let distinct: std::collections::BTreeSet<_> = finals.values().collect();
    assert_eq!(distinct.len(), 3, "{finals:?}");
}

/// `runs --json` prints JSON Lines, and its help says so.
#[test]
fn runs_json_is_json_lines_as_its_help_says() {
    let env = shrink_floor();
    let help = env.run(&["runs", "--help"]);
    help.success().stdout_has("JSON Lines");
    assert!(!help.stdout.contains("array"), "{}", help.stdout);
    for name in ["one", "two"] {
        replay_json(&env, SHRINK_FLOOR_TASK, &["--save", name, "--to", "1"]);
    }
    let run = env.run(&["runs", "--json"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    for l in lines {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["schema"], "compactor.run/1", "{l}");
    }
    // One call is one call, in the table as in the note.
    let run = env.run(&["runs"]);
    run.success().stdout_has("· 1 call ·");
}

/// The counts of each status among a replay's rows, as its footer lists them.
fn status_counts(r: &Value) -> String {
    let n = |status: &str| steps(r).iter().filter(|s| s["status"] == status).count();
    format!(
        "status: {} ok · {} over_trigger · {} breakthrough · {} over_window",
        n("ok"),
        n("over_trigger"),
        n("breakthrough"),
        n("over_window")
    )
}

#[test]
fn each_row_shows_its_status_the_footer_counts_them_and_over_the_window_exits_1() {
    let env = TestEnv::new();
    env.import_fixtures(&[TENANT, DISPOSABLE]);
    // Tight: most calls break through, none is over the window: exit 0.
    let run = env.run(&args(&["replay", "--task", TENANT_TASK], &TIGHT));
    run.success();
    let r = env
        .run(&args(&["replay", "--task", TENANT_TASK, "--json"], &TIGHT))
        .replay_json();
    let counts = status_counts(&r);
    assert!(!counts.contains(" 0 breakthrough"), "{counts}");
    run.stdout_has(format!("{counts}\n"));
    run.stdout_has("  RECORDED  STATUS        TIERS  ");
    for (line, s) in run
        .stdout
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .zip(steps(&r))
    {
        assert_eq!(
            line.split_whitespace().nth(6),
            s["status"].as_str(),
            "{line}"
        );
    }
    // Smaller than the system prompt and tools: refused, unless run as
    // `check`'s children run it; then every call is over the window.
    let refused = ["--window", "4000", "--output-reserved", "1000"];
    env.run(&args(&["replay", "--task", DISPOSABLE_TASK], &refused))
        .failure(2)
        .stderr_has("fewer than the system prompt and tools alone");
    let small = [
        "--window",
        "4000",
        "--output-reserved",
        "1000",
        "--allow-over-window",
    ];
    let run = env.run(&args(&["replay", "--task", DISPOSABLE_TASK], &small));
    run.failure(1)
        .stdout_has("warning: the system prompt and tools alone (")
        .stdout_has("exceed w_eff (3000)")
        .stdout_has(format!(
            "status: 0 ok · 0 over_trigger · 0 breakthrough · {DISPOSABLE_CALLS} over_window (over the window: a provider would refuse those calls; exit status 1)\n"
        ));
    assert_eq!(
        run.stdout.matches("  over_window   ").count() as u64,
        DISPOSABLE_CALLS
    );
    let r = env
        .run(&args(
            &["replay", "--task", DISPOSABLE_TASK, "--json"],
            &small,
        ))
        .replay_json();
    assert_eq!(steps(&r).len() as u64, DISPOSABLE_CALLS);
    env.run(&args(
        &["replay", "--task", DISPOSABLE_TASK, "--jsonl"],
        &small,
    ))
    .failure(1);
    // One call over the window is enough.
    let r = env
        .run(&args(
            &["replay", "--task", DISPOSABLE_TASK, "--json", "--to", "1"],
            &small,
        ))
        .replay_json();
    assert_eq!(steps(&r)[0]["status"], "over_window");
}

/// Every call's cost recomputed from its row: tokens × price per million,
/// rounded down per call, as the totals add them.
fn expected_costs(r: &Value, [input, write, read]: [u64; 3]) -> (u64, u64) {
    let cost = |tokens: &Value, price: u64| tokens.as_u64().unwrap() * price / 1_000_000;
    let mut cached = 0;
    let mut uncached = 0;
    for s in steps(r) {
        let prompt = serde_json::json!(
            s["cache_read_tokens"].as_u64().unwrap() + s["cache_write_tokens"].as_u64().unwrap()
        );
        cached += cost(&s["cache_read_tokens"], read) + cost(&s["cache_write_tokens"], write);
        uncached += cost(&prompt, input);
    }
    (cached, uncached)
}

#[test]
fn costs_are_priced_at_the_models_prices_and_a_prices_file_or_flag_overrides_them() {
    let env = TestEnv::new();
    env.import_fixtures(&[TENANT, SHRINK_FLOOR]);
    let totals = |r: &Value| {
        let c = &r["totals"]["compacted"];
        (
            c["cost_cached_micros"].as_u64().unwrap(),
            c["cost_uncached_micros"].as_u64().unwrap(),
        )
    };
    // claude-opus-4-6: $5 input, $6.25 cache write, $0.50 cache read, $25 output.
    let r = replay_json(&env, SHRINK_FLOOR_TASK, &FOLD);
    assert_eq!(
        totals(&r),
        expected_costs(&r, [5_000_000, 6_250_000, 500_000])
    );
    let out = r["totals"]["output_tokens"].as_u64().unwrap();
    assert!(out > 0);
    assert_eq!(r["totals"]["cost_output_micros"], out * 25);
    // gpt-5-codex: $1.25 input, no cache-write premium, $0.125 cached input.
    let r = replay_json(&env, TENANT_TASK, &FOLD);
    assert_eq!(
        totals(&r),
        expected_costs(&r, [1_250_000, 1_250_000, 125_000])
    );
    let run = env.run(&args(&["replay", "--task", TENANT_TASK], &FOLD));
    run.success().stdout_has(
        "USD per million, gpt-5-codex: input 1.25, cache write 1.25, cache read 0.125, output 10.00; cache lifetime 5m: ",
    );
    // Amounts to the cent from a dollar up, else four significant digits.
    for amount in run.stdout.split('$').skip(1) {
        let amount: String = amount
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let (int, frac) = amount.split_once('.').unwrap();
        if int == "0" {
            let significant = frac.trim_start_matches('0');
            assert!(significant.len() == 4 || frac.len() == 6, "${amount}");
        } else {
            assert_eq!(frac.len(), 2, "${amount}");
        }
    }

    // A prices file before the table; a flag before the file.
    let file = env.write(
        "prices.json",
        r#"{"models": [{"models": ["gpt-5-codex"], "input": "2", "cache_write": 2, "cache_read": "0.2", "output": 8}]}"#,
    );
    let r = replay_json(&env, TENANT_TASK, &args(&["--prices", &file], &FOLD));
    assert_eq!(
        totals(&r),
        expected_costs(&r, [2_000_000, 2_000_000, 200_000])
    );
    assert_eq!(
        r["totals"]["cost_output_micros"],
        r["totals"]["output_tokens"].as_u64().unwrap() * 8
    );
    let r = replay_json(
        &env,
        TENANT_TASK,
        &args(&["--prices", &file, "--price-input", "3"], &FOLD),
    );
    assert_eq!(
        totals(&r),
        expected_costs(&r, [3_000_000, 2_000_000, 200_000])
    );
    env.run(&args(&["replay", "--task", TENANT_TASK, "--prices", &file], &FOLD))
        .success()
        .stdout_has("USD per million, gpt-5-codex, from --prices: input 2.00, cache write 2.00, cache read 0.20, output 8.00; cache lifetime 5m: ");

    // A bad file: its line, what was expected, exit 2.
    let bad = env.write(
        "bad.json",
        "{\"models\": [\n  {\"models\": [\"gpt-5-codex\"], \"input\": \"two\", \"cache_write\": 2, \"cache_read\": 1, \"output\": 8}]}",
    );
    let run = env.run(&args(
        &["replay", "--task", TENANT_TASK, "--prices", &bad],
        &FOLD,
    ));
    run.failure(2)
        .stderr_has("bad.json:2:")
        .stderr_has("\"two\" is not a price")
        .stderr_has("expected {\"models\":[{\"models\":[NAME...],\"input\":USD,");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let missing = env.work().join("nowhere.json");
    env.run(&args(
        &[
            "replay",
            "--task",
            TENANT_TASK,
            "--prices",
            missing.to_str().unwrap(),
        ],
        &FOLD,
    ))
    .failure(2)
    .stderr_has("cannot read the prices file");
}

#[test]
fn an_unknown_model_is_priced_at_the_defaults_with_a_note() {
    let env = TestEnv::new();
    let file = env.fixture("openai-chat/conversation.jsonl");
    let run = env.run(&["replay", &file, "--json"]);
    let r = run.replay_json();
    assert_eq!(
        totals_uncached(&r),
        expected_costs(&r, [3_000_000, 3_750_000, 300_000]).1
    );
    run.stderr_has(
        "note: the transcript names no model: priced at the defaults (USD per million: input 3.00, cache write 3.75, cache read 0.30, output 15.00); give --prices FILE or --price-* to set them",
    );
    // A default in the prices file prices what neither it nor the table names.
    let prices = env.write(
        "prices.json",
        r#"{"default": {"input": "1", "cache_write": "1", "cache_read": "0.1", "output": "2"}}"#,
    );
    let r = env
        .run(&["replay", &file, "--json", "--prices", &prices])
        .replay_json();
    assert_eq!(
        totals_uncached(&r),
        expected_costs(&r, [1_000_000, 1_000_000, 100_000]).1
    );
}

fn totals_uncached(r: &Value) -> u64 {
    r["totals"]["compacted"]["cost_uncached_micros"]
        .as_u64()
        .unwrap()
}

/// Issue 34: a call sent more than the cache's lifetime after the one
/// before reads nothing from the cache and writes its whole prompt, under
/// both histories. The fixture pauses ten minutes and a half before call 3
/// (the client's own usage shows the same: call 3 read 0 tokens from its
/// cache); with `--cache-ttl 1h` the cache outlives the pause, and a cache
/// write is priced as Anthropic bills the 1-hour cache (2 × input).
#[test]
fn a_pause_longer_than_the_cache_lives_reads_nothing_and_writes_the_whole_prompt() {
    let env = TestEnv::new();
    let file = env.fixture("claude-code/pause-10min.jsonl");
    let replay = |ttl: &[&str]| {
        let run = env.run(&args(&["replay", &file, "--json"], ttl));
        run.replay_json()
    };
    let five = replay(&[]);
    assert_eq!(five, replay(&["--cache-ttl", "5m"]), "5m is the default");
    let hour = replay(&["--cache-ttl", "1h"]);
    let (short, long) = (steps(&five), steps(&hour));
    assert_eq!(short.len(), 4);
    for (k, (s, l)) in short.iter().zip(long).enumerate() {
        let prompt = |r: &Value| {
            r["cache_read_tokens"].as_u64().unwrap() + r["cache_write_tokens"].as_u64().unwrap()
        };
        assert_eq!(prompt(s), prompt(l), "call {}: the same prompt", k + 1);
        assert_eq!(s["prefix_breaks"], 0, "a pause is no prefix break: {s}");
        match k + 1 {
            1 => assert_eq!(s["cache_read_tokens"], 0),
            3 => {
                assert_eq!(s["cache_read_tokens"], 0, "{s}");
                assert!(l["cache_read_tokens"].as_u64().unwrap() > 17_000, "{l}");
            }
            _ => {
                assert!(s["cache_read_tokens"].as_u64().unwrap() > 17_000, "{s}");
                assert_eq!(s["cache_read_tokens"], l["cache_read_tokens"]);
            }
        }
    }
    let (t5, t1) = (&five["totals"], &hour["totals"]);
    assert_eq!(t5["cache_expired_calls"], 1);
    assert_eq!(t1["cache_expired_calls"], 0);
    assert_eq!(t5["prefix_breaks"], 0);
    // Both histories pay for the pause alike; priced as the model is.
    assert_eq!(t5["compacted"], t5["raw"]);
    assert_eq!(
        t5["compacted"]["cost_cached_micros"],
        expected_costs(&five, [5_000_000, 6_250_000, 500_000]).0
    );
    assert_eq!(
        t1["compacted"]["cost_cached_micros"],
        expected_costs(&hour, [5_000_000, 10_000_000, 500_000]).0
    );
    // A flag's own write price stands whatever the lifetime.
    let flagged = replay(&["--cache-ttl", "1h", "--price-cache-write", "6.25"]);
    assert_eq!(
        flagged["totals"]["compacted"]["cost_cached_micros"],
        expected_costs(&hour, [5_000_000, 6_250_000, 500_000]).0
    );
    // The human totals say how many calls the lifetime cost.
    env.run(&["replay", &file])
        .success()
        .stdout_has("cache lifetime 5m: 1 call after a longer pause read nothing");
    env.run(&["replay", &file, "--cache-ttl", "2h"])
        .failure(2)
        .stderr_has("expected 5m or 1h");
}

/// What a newcomer hit: `breakthrough_shrink,breakthrough_floor` ran over
/// the TIERS column, pushing the rest of its row out of line.
#[test]
fn every_tier_list_fits_the_tiers_column() {
    let env = TestEnv::new();
    env.import_fixture(TENANT);
    let run = env.run(&args(&["replay", "--task", TENANT_TASK], &TIGHT));
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = lines
        .iter()
        .find(|l| l.starts_with(" CALL "))
        .expect("the header");
    let column = |line: &str, name: &str| line.find(name).unwrap();
    let shrunk = column(header, "SHRUNK");
    let rows: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .collect();
    assert!(
        rows.iter()
            .any(|l| l.contains("breakthrough_shrink,breakthrough_floor")),
        "the fixture fires both breakthrough tiers in one call:\n{}",
        run.stdout
    );
    for row in rows {
        // The tier list ends before the space that opens SHRUNK's column
        // (byte offsets: header and row hold the same one `→` before it).
        let tiers = row.split_whitespace().nth(7).unwrap();
        let end = row.find(&format!(" {tiers} ")).unwrap() + 1 + tiers.len();
        assert!(
            end < shrunk && row.as_bytes()[shrunk - 1] == b' ',
            "a tier list runs into SHRUNK:\n{header}\n{row}"
        );
    }
}

/// What a newcomer hit: `--window 100` printed a table with every call
/// `over_window`, one warning and exit 1. Refused now, in one line naming
/// the system prompt and tools, by every command that runs a task.
#[test]
fn a_window_the_system_prompt_and_tools_alone_exceed_is_refused_in_one_line() {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let header = env.run(&args(&["replay", &file], &FOLD));
    header.success();
    let before = env.counts();
    let mut lines = Vec::new();
    for command in [
        vec!["replay", file.as_str()],
        vec!["step", file.as_str()],
        vec!["preflight", file.as_str()],
        vec!["compact", file.as_str(), "-o", "v.json"],
        vec!["probe", file.as_str()],
        vec!["report", file.as_str(), "-o", "r.html"],
        vec!["watch", file.as_str(), "--until-idle", "0"],
    ] {
        let run = env.run(&args(&command, &["--window", "100"]));
        run.failure(2);
        assert_eq!(run.stdout, "", "{command:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{command:?}: {}", run.stderr);
        lines.push(run.stderr.clone());
    }
    let overhead: u64 = lines[0]
        .split("alone (")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the overhead, named");
    assert!(overhead > 88);
    for line in &lines {
        assert_eq!(
            line,
            &format!(
                "error: window 100 leaves 88 tokens for the prompt (w_eff), fewer than the system prompt and tools alone ({overhead} tokens): no view could fit; raise --window or lower --output-reserved\n"
            )
        );
    }
    assert!(!env.work().join("v.json").exists() && !env.work().join("r.html").exists());
    assert_eq!(env.counts(), before, "the store is as it was");
}
