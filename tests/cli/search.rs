//! `compactor search`: ranked hits over the record. Three sessions in the
//! real Claude Code format (`testdata/search/`): two of one project (a
//! rule stated as `tenant_registry`, a failed push and its fix; a LiveView
//! test that failed on the sandbox, a file read twice) and one elsewhere.

use insta::assert_snapshot;
use serde_json::Value;

use crate::util::{TestEnv, testdata};

const BILLING: &str = "a1b2c3d4-0000-4aaa-8aaa-000000000001";
const INVOICES: &str = "b2c3d4e5-0000-4bbb-8bbb-000000000002";
const ELSEWHERE: &str = "c3d4e5f6-0000-4ccc-8ccc-000000000003";
const SHOP: &str = "/home/dev/shop";

fn imported() -> TestEnv {
    let env = TestEnv::new();
    env.import_fixtures(&[
        "search/billing.jsonl",
        "search/invoices.jsonl",
        "search/elsewhere.jsonl",
    ])
    .success();
    env
}

/// `search --json ARGS`: its hits (exit 0), or none (exit 1).
fn hits(env: &TestEnv, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["search", "--json"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    assert!(
        run.status == 0 || run.status == 1,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let v = run.json();
    assert_eq!(v["schema"], "compactor.search/1");
    let hits = v["hits"].as_array().unwrap().clone();
    assert_eq!(run.status == 1, hits.is_empty(), "exit 1 means no hit");
    hits
}

/// (task, kind, tool id or seq) of each hit.
fn places(hits: &[Value]) -> Vec<(String, String, String)> {
    hits.iter()
        .map(|h| {
            let at = match h["tool_id"].as_str() {
                Some(id) => id.to_string(),
                None => h["seq"].to_string(),
            };
            (
                h["task"].as_str().unwrap().to_string(),
                h["kind"].as_str().unwrap().to_string(),
                at,
            )
        })
        .collect()
}

#[test]
fn a_hit_in_another_session_of_the_project() {
    let env = imported();
    // From the billing session, the sandbox error is in the other session of
    // its project.
    let in_session = hits(&env, &["--task", BILLING, "sandbox ownership error"]);
    assert!(in_session.is_empty(), "{in_session:?}");
    let in_project = hits(&env, &["--project", SHOP, "sandbox ownership error"]);
    assert_eq!(
        places(&in_project)[0],
        (INVOICES.into(), "error".into(), "toolu_test1".into())
    );
    assert_eq!(in_project[0]["tool_name"], "Bash");
    assert_eq!(in_project[0]["tool_part"], "output");
    assert_eq!(
        in_project[0]["show"],
        format!("compactor show --task {INVOICES} tool:toolu_test1")
    );
    // The other project's session is not in this one, and is in --all.
    let tasks = |h: &[Value]| -> Vec<String> {
        h.iter()
            .map(|h| h["task"].as_str().unwrap().to_string())
            .collect()
    };
    let project = hits(&env, &["--project", SHOP, "tenant registry"]);
    assert!(!tasks(&project).contains(&ELSEWHERE.to_string()));
    assert_eq!(tasks(&project)[0], BILLING);
    let all = hits(&env, &["--all", "tenant registry"]);
    assert!(tasks(&all).contains(&ELSEWHERE.to_string()));
    // In the project's directory, the project is the default scope.
    let env = TestEnv::new();
    let dir = env.work().join("shop");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["billing", "invoices", "elsewhere"] {
        let text = std::fs::read_to_string(testdata(&format!("search/{name}.jsonl")))
            .unwrap()
            .replace(SHOP, &dir.display().to_string());
        let file = env.write(&format!("{name}.jsonl"), text);
        env.run(&["import", &file]).success();
    }
    let mut cmd = env.command(&["search", "--json", "tenant registry"]);
    cmd.current_dir(&dir);
    let run = env.finish(cmd);
    run.success();
    let v = run.json();
    assert_eq!(v["scope"]["kind"], "project");
    assert_eq!(v["scope"]["tasks"], 2);
    assert_eq!(v["hits"][0]["task"], BILLING);
    // Where nothing was recorded: every task, said on stderr.
    let run = env.run(&["search", "tenant registry"]);
    run.success()
        .stderr_has("no session was recorded in [TMP]/cwd: searching every task");
}

#[test]
fn word_forms_and_identifiers_match() {
    let env = imported();
    let ask = (BILLING.to_string(), "ask".to_string(), "0".to_string());
    // `migration` finds `migrations`; `tracking` finds `track`.
    assert_eq!(
        places(&hits(&env, &["--project", SHOP, "migration"]))[0],
        ask
    );
    let tracking = hits(&env, &["--project", SHOP, "--kind", "tool", "tracking"]);
    assert_eq!(tracking[0]["tool_id"], "toolu_push2", "{tracking:#?}");
    // Identifiers split: snake case, camel case, and either way round.
    for q in [
        "tenant registry",
        "tenant_registry",
        "transcript renderer",
        "TranscriptRenderer",
        "renderer",
    ] {
        let h = hits(&env, &["--project", SHOP, q]);
        assert_eq!(places(&h)[0], ask, "{q}: {h:#?}");
    }
    // The snippet marks what matched, as text and as spans.
    let h = &hits(&env, &["--project", SHOP, "tenant registry"])[0];
    let snippet = h["snippet"].as_str().unwrap();
    assert!(
        snippet.contains("never edit the tenant_registry by hand"),
        "{snippet}"
    );
    let marked: Vec<String> = h["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let (a, b) = (
                s[0].as_u64().unwrap() as usize,
                s[1].as_u64().unwrap() as usize,
            );
            snippet.chars().skip(a).take(b - a).collect()
        })
        .collect();
    assert_eq!(marked, ["tenant", "registry"]);
    // A word inside an identifier is marked by the identifier.
    let h = &hits(&env, &["--project", SHOP, "renderer"])[0];
    let spans = h["highlights"].as_array().unwrap();
    let s = h["snippet"].as_str().unwrap();
    let (a, b) = (
        spans[0][0].as_u64().unwrap() as usize,
        spans[0][1].as_u64().unwrap() as usize,
    );
    assert_eq!(
        s.chars().skip(a).take(b - a).collect::<String>(),
        "TranscriptRenderer"
    );
}

#[test]
fn plain_words_rank_and_fts5_syntax_is_used_when_given() {
    let env = imported();
    // Any of the words, ranked: the hit need not hold them all.
    let h = hits(&env, &["--all", "git push failed no upstream branch"]);
    assert_eq!(h[0]["tool_id"], "toolu_push1", "{h:#?}");
    assert_eq!(h[0]["kind"], "error");
    // --kind keeps one kind.
    let h = hits(&env, &["--all", "--kind", "tool", "git push"]);
    assert!(h.iter().all(|h| h["kind"] == "tool"), "{h:#?}");
    let h = hits(&env, &["--all", "--kind", "ask", "upstream"]);
    assert!(h.is_empty());
    // A phrase: only where its words are in order.
    let h = hits(&env, &["--all", "\"set up to track\""]);
    assert_eq!(places(&h).len(), 1);
    assert_eq!(h[0]["tool_id"], "toolu_push2");
    // A prefix, and NEAR.
    assert!(!hits(&env, &["--all", "ownersh*"]).is_empty());
    let near = hits(&env, &["--all", "NEAR(sandbox mount, 5)"]);
    assert_eq!(near.len(), 1, "{near:#?}");
    assert_eq!(near[0]["kind"], "answer");
}

#[test]
fn the_same_output_recorded_again_is_one_hit() {
    let env = imported();
    let h = hits(&env, &["--all", "ConnCase setup_sandbox"]);
    let reads: Vec<&Value> = h
        .iter()
        .filter(|h| h["tool_name"] == "Read" && h["tool_part"] == "output")
        .collect();
    assert_eq!(reads.len(), 1, "{h:#?}");
    // The other read, and the call's input, are listed under it.
    let also = reads[0]["also"].as_array().unwrap();
    assert!(
        also.iter()
            .any(|p| p["task"] == INVOICES && p["seq"] != reads[0]["seq"]),
        "{h:#?}"
    );
}

#[test]
fn a_malformed_query_is_refused_naming_its_fault() {
    let env = imported();
    for (query, fault) in [
        ("\"no upstream", "quote at character 1 is never closed"),
        ("(git OR push", "parenthesis at character 1 is never closed"),
        ("git push AND", "malformed as FTS5 syntax"),
        ("a* AND b", "needs at least two characters before `*`"),
        ("{ask bogus}: git AND push", "unknown column \"bogus\""),
        (
            "what was it",
            "only stop words (what was it), which are not indexed",
        ),
        (
            "\"of the\" AND push",
            "only stop words (of the), which are not indexed",
        ),
    ] {
        let run = env.run(&["search", "--all", query]);
        run.failure(2).stderr_has(fault);
        assert!(
            !run.stderr.contains("SQL") && !run.stderr.contains("fts5:"),
            "{query}: {}",
            run.stderr
        );
    }
    // A query of 10,000 words is refused at once; a long one is cut to its
    // first distinct words, and says so.
    let huge = "word ".repeat(10_000);
    env.run(&["search", "--all", &huge])
        .failure(2)
        .stderr_has("at most 1000 are searched");
    let many: String = (0..40).map(|i| format!("w{i} ")).collect();
    env.run(&["search", "--all", &many])
        .failure(1)
        .stderr_has("the query's first 24 distinct words were searched (16 left out)");
    env.run(&["search", "--all", "  "])
        .failure(2)
        .stderr_has("the query is empty");
}

#[test]
fn an_index_deleted_is_rebuilt_with_the_same_hits() {
    let env = imported();
    let queries = [
        "tenant registry",
        "git push no upstream",
        "sandbox",
        "\"set up to track\"",
        "ConnCase",
    ];
    let before: Vec<Vec<Value>> = queries.iter().map(|q| hits(&env, &["--all", q])).collect();
    assert!(before.iter().all(|h| !h.is_empty()));
    env.conn().execute_batch("DROP TABLE search_index").unwrap();
    let run = env.run(&["search", "--all", "--json", "tenant registry"]);
    run.success()
        .stderr_has("note: building the search index from the record (3 tasks); once");
    let after: Vec<Vec<Value>> = queries.iter().map(|q| hits(&env, &["--all", q])).collect();
    assert_eq!(after, before);
    // Once rebuilt, it is current: no note the next time.
    let run = env.run(&["search", "--all", "sandbox"]);
    assert!(!run.stderr.contains("building"), "{}", run.stderr);
}

#[test]
fn the_human_report_names_each_hit_and_its_show_command() {
    let env = imported();
    let run = env.run(&[
        "search",
        "--project",
        SHOP,
        "--limit",
        "3",
        "push",
        "upstream",
    ]);
    assert_snapshot!(run.snapshot());
    // Each show command prints the item whole.
    let run = env.run(&[
        "search",
        "--json",
        "--project",
        SHOP,
        "--limit",
        "3",
        "push upstream",
    ]);
    for h in run.json()["hits"].as_array().unwrap() {
        let show: Vec<&str> = h["show"].as_str().unwrap().split(' ').skip(1).collect();
        env.run(&show).success();
    }
    // Nothing found: exit 1, said.
    env.run(&["search", "--all", "zebra"])
        .failure(1)
        .stdout_has("no hit for \"zebra\" in every task (3)");
}
