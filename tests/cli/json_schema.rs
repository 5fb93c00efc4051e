//! One schema: every `--json` output is compact JSON (one object a line)
//! carrying `"schema": "compactor.<kind>/1"`. The snapshot lists, per command,
//! each record's schema and its field names, so a renamed or dropped field
//! shows up in review.

use insta::assert_snapshot;
use serde_json::Value;

use crate::util::{FOLD, SHRINK_FLOOR, SHRINK_FLOOR_TASK, TestEnv, args, strings_of};

/// Every line of `text` is one JSON object with a `compactor.<kind>/1` schema;
/// returns `schema: field, field, …` per distinct record shape.
#[track_caller]
fn records(what: &str, text: &str) -> Vec<String> {
    assert!(!text.trim().is_empty(), "{what}: no JSON output");
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{what}: a line is not JSON ({e}): {line}"));
        let obj = v
            .as_object()
            .unwrap_or_else(|| panic!("{what}: not an object: {line}"));
        let schema = obj["schema"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: no schema: {line}"));
        assert!(
            schema.starts_with("compactor.") && schema.ends_with("/1"),
            "{what}: {schema}"
        );
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        let shape = format!("{schema}: {}", keys.join(", "));
        if !out.contains(&shape) {
            out.push(shape);
        }
    }
    out
}

#[test]
fn every_json_output_parses_and_carries_its_schema() {
    let env = TestEnv::new();
    let file = env.fixture(SHRINK_FLOOR);
    let t = SHRINK_FLOOR_TASK;
    let mut report = String::new();
    let mut add = |what: &str, text: &str| {
        report.push_str(&format!("{what}\n"));
        for r in records(what, text) {
            report.push_str(&format!("  {r}\n"));
        }
    };
    let run = env.run(&["import", &file, "--json"]);
    run.success();
    add("import --json", &run.stdout);
    for (what, a) in [
        ("tasks --json", vec!["tasks", "--json"]),
        ("show --json", vec!["show", "--task", t, "0..3", "--json"]),
        ("show SEQ --json", vec!["show", "--task", t, "1", "--json"]),
        ("preflight --json", vec!["preflight", "--task", t, "--json"]),
        ("step --json", vec!["step", "--task", t, "--json"]),
        (
            "compact -o --json",
            vec![
                "compact",
                "--task",
                t,
                "-o",
                "v.json",
                "--json",
                "--in-place",
            ],
        ),
        (
            "replay --json",
            vec!["replay", "--task", t, "--json", "--to", "3"],
        ),
        (
            "replay --jsonl",
            vec!["replay", "--task", t, "--jsonl", "--to", "3", "--save", "r"],
        ),
        ("runs --json", vec!["runs", "--json"]),
        (
            "search --json",
            vec!["search", "--task", t, "--json", "orders"],
        ),
        (
            "show compacted --json",
            vec!["show", "--task", t, "compacted", "--json"],
        ),
    ] {
        let budgeted = ["preflight", "step", "compact", "replay"].contains(&a[0]);
        let run = if budgeted {
            env.run(&args(&a, &FOLD))
        } else {
            env.run(&a)
        };
        assert!(run.status <= 1, "{what}: {}", run.snapshot());
        add(what, &run.stdout);
    }
    // A stored summary, and a tool call.
    let entries: Value = serde_json::from_str(
        &env.run(&["show", "--task", t, "compacted", "--json"])
            .stdout,
    )
    .unwrap();
    // A stored summary, then a stored form.
    let keys = strings_of(&entries["entries"], "key");
    for (prefix, what) in [
        ("cov:", "show cov:KEY --json"),
        ("tool:", "show tool:ID --json"),
    ] {
        let key = keys.iter().find(|k| k.starts_with(prefix));
        let key = key.unwrap_or_else(|| panic!("no {prefix} entry in {keys:?}"));
        let run = env.run(&["show", "--task", t, key, "--json"]);
        run.success();
        add(what, &run.stdout);
    }
    // compact with the view on stdout: the report goes to stderr, one line.
    let run = env.run(&args(&["compact", "--task", t, "--json"], &FOLD));
    run.success();
    let last = run.stderr.lines().last().unwrap_or_default();
    add("compact --json (report on stderr)", last);
    let run = env.run(&["diff", "v.json", "v.json", "--json"]);
    run.success();
    add("diff --json", &run.stdout);
    let run = env.run(&["reset", t, "--json"]);
    run.success();
    add("reset --json", &run.stdout);
    let run = env.run(&args(&["probe", "--task", t, "--json"], &FOLD));
    run.success();
    add("probe --json", &run.stdout);
    let run = env.run(&args(&["sweep", "--task", t, "--json"], &FOLD));
    assert!(run.status <= 1, "{}", run.snapshot());
    add("sweep --json", &run.stdout);
    let run = env.run(&["check", &file, "--json"]);
    assert!(run.status <= 1, "{}", run.snapshot());
    add("check --json", &run.stdout);
    assert_snapshot!(report);
}
