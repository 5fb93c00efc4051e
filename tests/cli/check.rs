//! `compactor check`: the CI determinism check over the fixtures: fresh,
//! reopened and aborted-then-resumed replays agree; golden files; failures
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
                l.contains(" calls identical: fresh = reopened = resumed, aborted after call "),
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
fn the_interrupted_run_aborts_at_the_seeded_call_and_resumes_in_a_new_process() {
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
        // The child aborted (COMPACTOR_FAULT) right after committing call
        // `at`, not by finishing; the new process resumes at exactly that call.
        assert_eq!(b["child_killed"], true, "{b}");
        assert_eq!(b["resumed_from"].as_u64(), Some(at), "{b}");
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
    let name = "claude-disposable-interrupt";
    // A golden directory without this fixture's files yet: a drift that says
    // how to make them.
    std::fs::create_dir(&golden).unwrap();
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.failure(1).stdout_has(format!(
        "no golden file golden/{name}/default.jsonl; run with --bless to write it"
    ));

    let run = env.run(&["check", DISPOSABLE, "--golden", "golden", "--bless"]);
    run.success();
    assert!(
        run.stdout
            .ends_with("check passed; golden files rewritten\n"),
        "{}",
        run.stdout
    );
    // One JSONL file per budget, one line per call: the view as a delta
    // against the previous call's, with its hash.
    for budget in ["default", "fold", "tight"] {
        let text =
            std::fs::read_to_string(golden.join(name).join(format!("{budget}.jsonl"))).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len() as u64, DISPOSABLE_CALLS, "{budget}");
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(l["call"], i as u64 + 1);
            assert_eq!(l["view_hash"].as_str().unwrap().len(), 64);
            assert!(l["suffix"].is_array() && l["prefix_messages"].is_u64());
        }
        assert_eq!(lines[0]["prefix_messages"], 0, "the first view is whole");
    }
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.success();
    assert!(
        run.stdout
            .ends_with("check passed: every view is byte-identical\n"),
        "{}",
        run.stdout
    );

    // One byte of one golden file: a text in the first line from call 4 on
    // (under the fold budget) whose delta carries one.
    let file = golden.join(name).join("fold.jsonl");
    let original = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    let edited = (3..lines.len())
        .find(|&i| lines[i].contains("\"text\":\""))
        .expect("a call with text in its delta");
    let call = edited + 1;
    let at = lines[edited].find("\"text\":\"").unwrap() + 8;
    let mut bytes = lines[edited].clone().into_bytes();
    bytes[at] = if bytes[at] == b'#' { b'%' } else { b'#' };
    lines[edited] = String::from_utf8(bytes).unwrap();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
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
            "  DRIFT fold     call {call}: the view differs from the golden file golden/{name}/fold.jsonl:{call} at byte "
        )) && drift.contains("(message "),
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
            .contains(&format!("call {call}:"))
    );

    // A golden file missing its last call, or with one call too many, drifts too.
    env.run(&["check", DISPOSABLE, "--golden", "golden", "--bless"])
        .success();
    let tight = golden.join(name).join("tight.jsonl");
    let text = std::fs::read_to_string(&tight).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&tight, kept[..kept.len() - 1].join("\n") + "\n").unwrap();
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.failure(1).stdout_has(format!(
            "DRIFT tight    the golden file golden/{name}/tight.jsonl has {} calls, the replay {DISPOSABLE_CALLS}",
            DISPOSABLE_CALLS - 1
        ));
    std::fs::write(&tight, format!("{text}{}\n", kept[kept.len() - 1])).unwrap();
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden"]);
    run.failure(1)
        .stdout_has("the golden file has more calls than the replay");
}

#[test]
fn a_missing_golden_directory_is_a_usage_error_until_bless_creates_it() {
    let env = TestEnv::new();
    env.fixture(DISPOSABLE);
    let run = env.run(&["check", DISPOSABLE, "--golden", "goldne"]);
    run.failure(2);
    insta::assert_snapshot!(run.snapshot());
    assert!(!env.work().join("goldne").exists(), "nothing is created");
    env.write("golden.txt", "not a directory");
    let run = env.run(&["check", DISPOSABLE, "--golden", "golden.txt"]);
    run.failure(2)
        .stderr_has("error: the golden directory golden.txt is not a directory");
    // --bless makes the directory and writes the files; then the check passes.
    let run = env.run(&["check", DISPOSABLE, "--golden", "new/golden", "--bless"]);
    run.success();
    let written = env
        .work()
        .join("new/golden/claude-disposable-interrupt/default.jsonl");
    assert!(written.is_file(), "{}", written.display());
    env.run(&["check", DISPOSABLE, "--golden", "new/golden"])
        .success();
}

#[test]
fn a_missing_fixture_is_an_error() {
    let env = TestEnv::new();
    env.fixture(DISPOSABLE);
    let run = env.run(&["check", DISPOSABLE, "fixtures/absent.jsonl"]);
    run.failure(2)
        .stderr_has("fixture fixtures/absent.jsonl does not exist or is not a file");
    let run = env.run(&["check"]);
    run.failure(2);
    let run = env.run(&["check", "--bless", DISPOSABLE]);
    run.failure(2).stderr_has("--golden <DIR>");
}

#[test]
fn a_budget_whose_calls_are_over_the_window_still_compares_the_views() {
    // The recorded prompts 6000 tokens larger: the system prompt and tools
    // alone are over the tight budget's w_eff, so `replay` refuses the
    // budget and every replay `check` runs of it is over the window, the
    // resumed child's included; its views are still compared.
    let env = TestEnv::new();
    let text = std::fs::read_to_string(crate::util::testdata(DISPOSABLE)).unwrap();
    let from = "\"cache_creation_input_tokens\":436,";
    assert!(text.contains(from));
    let heavy = env.write(
        "heavy.jsonl",
        text.replace(from, "\"cache_creation_input_tokens\":6436,"),
    );
    let tight = [
        "--window",
        "6000",
        "--output-reserved",
        "1000",
        "--db",
        ":memory:",
    ];
    let replay = env.run(&[&["replay", &heavy, "--json"][..], &tight].concat());
    replay
        .failure(2)
        .stderr_has("error: window 6000 leaves 5000 tokens for the prompt (w_eff), fewer than the system prompt and tools alone (");
    let (status, r) = check_json(&env, &[&heavy], &[]);
    assert_eq!(status, 0, "{r}");
    assert_eq!(r["ok"], true, "{r}");
}
