//! `compactor check`: the CI determinism check over the fixtures: fresh,
//! reopened and killed-then-resumed replays agree; golden files; failures
//! name the fixture, budget, call and byte.

use serde_json::Value;

use crate::util::{
    BREAKTHROUGH, DISPOSABLE, DISPOSABLE_CALLS, DISPOSABLE_TASK, SHRINK_FLOOR, TENANT, TestEnv,
};

const ALL: [&str; 4] = [BREAKTHROUGH, DISPOSABLE, SHRINK_FLOOR, TENANT];

fn check_json(env: &TestEnv, fixtures: &[&str], more: &[&str]) -> (i32, Value) {
    let mut a = vec!["check", "--json"];
    a.extend_from_slice(fixtures);
    a.extend_from_slice(more);
    let run = env.run(&a);
    (run.status, run.json())
}

#[test]
fn every_fixture_passes_and_every_view_is_identical() {
    let env = TestEnv::new();
    for f in ALL {
        env.fixture(f);
    }
    let mut a = vec!["check"];
    a.extend_from_slice(&ALL);
    let run = env.run(&a);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    // Per fixture: a title and one line per budget of the matrix.
    assert_eq!(lines.len(), ALL.len() * 4 + 1, "{}", run.stdout);
    for (i, f) in ALL.iter().enumerate() {
        assert!(
            lines[i * 4].starts_with(&format!("{f} (task ")),
            "{}",
            lines[i * 4]
        );
        for (j, budget) in ["default", "fold", "tight"].iter().enumerate() {
            let l = lines[i * 4 + 1 + j];
            assert!(l.starts_with(&format!("  ok   {budget:<8} ")), "{l}");
            assert!(
                l.contains(" calls identical: fresh = reopened = resumed, killed at call "),
                "{l}"
            );
            assert!(l.contains("(seed 1"), "{l}");
        }
    }
    assert_eq!(
        lines.last().unwrap(),
        &"check passed: every view is byte-identical"
    );
    // Every tier of the ladder is exercised somewhere in the matrix.
    let seen: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter(|l| l.starts_with("  ok "))
        .flat_map(|l| l.rsplit("· ").next().unwrap().split(','))
        .collect();
    for tier in [
        "shrink",
        "floor",
        "breakthrough_shrink",
        "breakthrough_floor",
    ] {
        assert!(seen.contains(tier), "no fixture fires {tier}: {seen:?}");
    }
    // check never touches the user's store.
    assert!(!env.db().exists());
}

#[test]
fn the_interrupted_run_is_killed_and_resumed_in_a_new_process() {
    let env = TestEnv::new();
    env.fixture(DISPOSABLE);
    let (status, r) = check_json(&env, &[DISPOSABLE], &[]);
    assert_eq!(status, 0, "{r}");
    assert_eq!(r["ok"], true);
    assert_eq!(r["seed"], 1);
    assert_eq!(r["fixtures"][0]["task"], DISPOSABLE_TASK);
    assert_eq!(r["fixtures"][0]["fixture"], DISPOSABLE);
    let budgets = r["fixtures"][0]["budgets"].as_array().unwrap();
    assert_eq!(budgets.len(), 3);
    for b in budgets {
        assert_eq!(b["calls"], DISPOSABLE_CALLS, "{b}");
        assert!(b["drift"].is_null(), "{b}");
        let at = b["interrupted_at"].as_u64().expect("interrupted_at");
        assert!((1..=DISPOSABLE_CALLS).contains(&at), "{b}");
        // The child was ended by SIGKILL, not by finishing.
        assert_eq!(b["killed_by_signal"], 9, "{b}");
        // It may run a little past the call the kill was sent at; the new
        // process resumes right after the last call it reported.
        let last = b["last_reported_before_kill"].as_u64().unwrap();
        assert!(last >= at && last <= DISPOSABLE_CALLS, "{b}");
        if last < DISPOSABLE_CALLS {
            assert_eq!(b["resumed_from"], last + 1, "{b}");
        } else {
            assert!(b["resumed_from"].is_null(), "{b}");
        }
    }
    // The kill point is seeded: the same seed picks the same calls, another
    // seed (usually) others.
    let (_, again) = check_json(&env, &[DISPOSABLE], &[]);
    let ats = |r: &Value| -> Vec<Value> {
        r["fixtures"][0]["budgets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["interrupted_at"].clone())
            .collect()
    };
    assert_eq!(ats(&again), ats(&r));
    let (status, other) = check_json(&env, &[DISPOSABLE], &["--seed", "7"]);
    assert_eq!(status, 0, "{other}");
    assert_eq!(other["seed"], 7);
    let seeds: Vec<Vec<Value>> = (2..6)
        .map(|s| ats(&check_json(&env, &[DISPOSABLE], &["--seed", &s.to_string()]).1))
        .collect();
    assert!(seeds.iter().any(|s| *s != ats(&r)), "{seeds:?}");
}

#[test]
fn golden_files_bless_pass_and_catch_a_one_byte_edit() {
    let env = TestEnv::new();
    env.fixture(DISPOSABLE);
    let golden = env.work().join("golden");
    // Without golden files yet: a drift that says how to make them.
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.failure(1);
    assert!(
        run.stdout.contains("run with --bless to write them"),
        "{}",
        run.stdout
    );

    let run = env.run(&["check", DISPOSABLE, "--golden", "golden", "--bless"]);
    run.success();
    assert!(
        run.stdout
            .ends_with("check passed; golden files rewritten\n"),
        "{}",
        run.stdout
    );
    let name = "claude-disposable-interrupt";
    for budget in ["default", "fold", "tight"] {
        let dir = golden.join(name).join(budget);
        let n = std::fs::read_dir(&dir).unwrap().count() as u64;
        assert_eq!(n, DISPOSABLE_CALLS, "{}", dir.display());
        for k in 1..=DISPOSABLE_CALLS {
            crate::util::valid_view(&dir.join(format!("call-{k:04}.json")));
        }
    }
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.success();
    assert!(
        run.stdout
            .ends_with("check passed: every view is byte-identical\n"),
        "{}",
        run.stdout
    );

    // One byte of one golden file: call 4 under the fold budget.
    let file = golden.join(name).join("fold").join("call-0004.json");
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(8).position(|w| w == b"\"text\":\"").unwrap() + 8;
    bytes[at] = if bytes[at] == b'#' { b'%' } else { b'#' };
    std::fs::write(&file, &bytes).unwrap();
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.failure(1);
    let drift = run
        .stdout
        .lines()
        .find(|l| l.contains("DRIFT"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        run.stdout.starts_with(&format!("{DISPOSABLE} (task ")),
        "{}",
        run.stdout
    );
    assert!(
        drift.starts_with(&format!(
            "  DRIFT fold     call 4: the view differs from the golden file golden/{name}/fold/call-0004.json at byte {at} (message 0, part 0)"
        )),
        "{drift}"
    );
    assert_eq!(run.stdout.matches("DRIFT").count(), 1, "{}", run.stdout);
    assert!(
        run.stdout.ends_with("check failed: a projection drifted\n"),
        "{}",
        run.stdout
    );
    let (status, r) = check_json(&env, &[DISPOSABLE], &["--golden", "golden"]);
    assert_eq!(status, 1);
    assert_eq!(r["ok"], false);
    assert!(
        r["fixtures"][0]["budgets"][1]["drift"]
            .as_str()
            .unwrap()
            .contains("call 4")
    );

    // A missing golden file and an extra one are drifts too.
    std::fs::write(
        &file,
        std::fs::read(golden.join(name).join("fold").join("call-0005.json")).unwrap(),
    )
    .unwrap();
    env.run(&["check", DISPOSABLE, "--golden", "golden", "--bless"])
        .success();
    std::fs::remove_file(golden.join(name).join("tight").join("call-0010.json")).unwrap();
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.failure(1);
    assert!(
        run.stdout
            .contains("DRIFT tight    call 10: no golden file golden/"),
        "{}",
        run.stdout
    );
    env.run(&["check", DISPOSABLE, "--golden", "golden", "--bless"])
        .success();
    std::fs::write(
        golden.join(name).join("default").join("call-0011.json"),
        "{}\n",
    )
    .unwrap();
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.failure(1);
    assert!(
        run.stdout
            .contains("the golden files have more calls than the replay"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_missing_fixture_is_an_error() {
    let env = TestEnv::new();
    env.fixture(DISPOSABLE);
    let run = env.run(&["check", DISPOSABLE, "fixtures/absent.jsonl"]);
    run.failure(2);
    assert!(
        run.stderr
            .contains("fixture fixtures/absent.jsonl does not exist or is not a file"),
        "{}",
        run.stderr
    );
    let run = env.run(&["check"]);
    run.failure(2);
    let run = env.run(&["check", "--bless", DISPOSABLE]);
    run.failure(2);
    assert!(run.stderr.contains("--golden <DIR>"), "{}", run.stderr);
}
