//! The shared corpus of real transcripts (Claude Code 1.0.98 to 2.1.152,
//! Codex 0.40 to 0.135). Figures are recomputed here from the raw files,
//! independently of the importers, and compared with what the store says.
//!
//! When the corpus is absent every test here says so and returns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{
    TestEnv, claude_usage, codex_model_calls, codex_usage, corpus, corpus_files, json_lines,
    jsonl_files, pairing_problems, usage_of,
};

const MAIN_4D: &str = "4d5611e5-241a-462a-8d15-5122611a9569";
const INLINE_FE: &str = "fe5e1c67-53e7-4862-81ae-d0e013e3270b";

fn rel(corpus: &Path, file: &Path) -> String {
    file.strip_prefix(corpus)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

fn is_codex(corpus: &Path, file: &Path) -> bool {
    rel(corpus, file).starts_with("codex/")
}

/// Import files in one run with `--json` and return each file's report.
fn import_json(env: &TestEnv, files: &[PathBuf]) -> Vec<Value> {
    let mut args = vec!["import".to_string(), "--json".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = env.run(&args);
    run.success();
    assert!(!run.stderr.contains("error"), "{}", run.stderr);
    let reports = run.import_reports();
    assert_eq!(reports.len(), files.len());
    reports
}

fn added(report: &Value) -> u64 {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["added"].as_u64().unwrap())
        .sum()
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn every_file_imports_and_importing_again_adds_nothing() {
    let Some(corpus) = corpus("every_file_imports_and_importing_again_adds_nothing") else {
        return;
    };
    let files = corpus_files(&corpus);
    let env = TestEnv::new();
    // One file per run: each must succeed on its own.
    for f in &files {
        let run = env.run(&["import", &f.display().to_string()]);
        assert_eq!(run.status, 0, "{}:\n{}", f.display(), run.snapshot());
        assert!(
            !run.stderr.contains("error"),
            "{}: {}",
            f.display(),
            run.stderr
        );
        assert!(
            run.stdout.contains(" added to "),
            "{}: {}",
            f.display(),
            run.stdout
        );
    }
    let before = env.counts();
    let tasks = env.tasks();
    assert!(before[0] > 5000, "{before:?}");
    assert!(before[2] > 0, "no tool form was minted: {before:?}");

    // The same files again: recognised as unchanged, nothing added.
    let reports = import_json(&env, &files);
    for r in &reports {
        assert_eq!(r["status"], "unchanged", "{r}");
    }
    assert_eq!(env.counts(), before);

    // Copies at other paths are parsed again, and found already stored.
    for f in &files {
        env.write(
            &format!("copy/{}", rel(&corpus, f)),
            std::fs::read(f).unwrap(),
        );
    }
    let copies: Vec<PathBuf> = files
        .iter()
        .map(|f| env.work().join("copy").join(rel(&corpus, f)))
        .collect();
    for (f, r) in files.iter().zip(import_json(&env, &copies)) {
        assert_eq!(r["status"], "imported", "{}", f.display());
        assert_eq!(added(&r), 0, "{}: {r}", f.display());
    }
    assert_eq!(env.counts(), before);
    assert_eq!(env.tasks(), tasks);
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn appending_lines_to_a_copy_adds_exactly_those_rows() {
    let Some(corpus) = corpus("appending_lines_to_a_copy_adds_exactly_those_rows") else {
        return;
    };
    let files = jsonl_files(&corpus);
    let full = TestEnv::new();
    let full_rows: Vec<u64> = import_json(&full, &files).iter().map(added).collect();

    let grown = TestEnv::new();
    let mut texts = Vec::new();
    let mut copies = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let half: String = lines[..lines.len().div_ceil(2)].concat();
        let r = format!("grown/{}", rel(&corpus, f));
        grown.write(&r, half);
        copies.push(grown.work().join(&r));
        texts.push((r, text));
    }
    let prefix_rows: Vec<u64> = import_json(&grown, &copies).iter().map(added).collect();
    for (r, text) in &texts {
        grown.write(r, text);
    }
    let reports = import_json(&grown, &copies);
    for (i, f) in files.iter().enumerate() {
        assert!(
            prefix_rows[i] < full_rows[i] || full_rows[i] < 2,
            "{}: the first half already has every row",
            f.display()
        );
        assert_eq!(
            added(&reports[i]),
            full_rows[i] - prefix_rows[i],
            "{}: rows added by the appended half",
            f.display()
        );
    }
    assert_eq!(grown.counts(), full.counts());
    assert_eq!(grown.tasks(), full.tasks());
    assert_eq!(row_hashes(&grown), row_hashes(&full));
}

fn row_hashes(env: &TestEnv) -> Vec<(String, i64, Vec<u8>)> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare("SELECT task_id, seq, row_hash FROM task_message ORDER BY task_id, seq")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn the_imported_record_refuses_update_and_delete() {
    let Some(corpus) = corpus("the_imported_record_refuses_update_and_delete") else {
        return;
    };
    let env = TestEnv::new();
    let file = corpus.join(format!(
        "claude-code/v2.1.39_spotter_compaction_subagents/{MAIN_4D}.jsonl"
    ));
    env.run(&["import", &file.display().to_string()]).success();
    let before = env.counts();
    let conn = env.conn();
    for sql in [
        "DELETE FROM task_message",
        "DELETE FROM task_message WHERE seq = 0",
        "UPDATE task_message SET content = '[]'",
        "UPDATE task_message SET kind = 'ask' WHERE seq = 3",
    ] {
        let err = conn.execute(sql, []).expect_err(sql);
        assert!(err.to_string().contains("append-only"), "{sql}: {err}");
    }
    drop(conn);
    assert_eq!(env.counts(), before);
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn every_tool_result_pairs_with_exactly_one_tool_use() {
    let Some(corpus) = corpus("every_tool_result_pairs_with_exactly_one_tool_use") else {
        return;
    };
    let env = TestEnv::new();
    let files = jsonl_files(&corpus);
    let reports = import_json(&env, &files);
    let warnings: Vec<&Value> = reports
        .iter()
        .flat_map(|r| r["warnings"].as_array().unwrap())
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
    assert_eq!(pairing_problems(&env.conn()), Vec::<String>::new());
    for t in env.tasks() {
        assert_eq!(t["orphan_tool_results"], 0, "{t}");
        assert!(
            t["tool_calls"].as_u64().unwrap() >= t["interrupted_tool_calls"].as_u64().unwrap(),
            "{t}"
        );
    }
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn claude_code_usage_counts_each_response_once() {
    let Some(corpus) = corpus("claude_code_usage_counts_each_response_once") else {
        return;
    };
    let env = TestEnv::new();
    let files: Vec<PathBuf> = jsonl_files(&corpus)
        .into_iter()
        .filter(|f| !is_codex(&corpus, f))
        .collect();
    let reports = import_json(&env, &files);
    let all = tasks_by_id(&env);
    let mut checked = 0;
    for (f, report) in files.iter().zip(&reports) {
        let lines = json_lines(f);
        let tasks: Vec<Value> = report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| all[t["id"].as_str().unwrap()].clone())
            .collect();
        let subagent_file = rel(&corpus, f).contains("/subagents/");
        let (main, side): (Vec<&Value>, Vec<&Value>) = tasks
            .iter()
            .partition(|t| subagent_file || !t["id"].as_str().unwrap().contains('/'));
        let sum = |ts: &[&Value]| {
            ts.iter().fold([0u64; 4], |mut acc, t| {
                for (a, u) in acc.iter_mut().zip(usage_of(t)) {
                    *a += u;
                }
                acc
            })
        };
        let (want_main, want_side) = if subagent_file {
            (claude_usage(&lines, None), [0; 4])
        } else {
            (
                claude_usage(&lines, Some(false)),
                claude_usage(&lines, Some(true)),
            )
        };
        assert_eq!(sum(&main), want_main, "{}", f.display());
        assert_eq!(sum(&side), want_side, "{} (sidechains)", f.display());

        // Steps: one per distinct API response.
        let responses: BTreeSet<&str> = lines
            .iter()
            .filter(|(_, l)| {
                l["type"] == "assistant"
                    && l["message"]["model"] != "<synthetic>"
                    && l["isApiErrorMessage"] != true
            })
            .filter_map(|(_, l)| l["message"]["id"].as_str())
            .collect();
        let steps: u64 = tasks.iter().map(|t| t["steps"].as_u64().unwrap()).sum();
        assert_eq!(steps, responses.len() as u64, "{}", f.display());
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
    // One task checked against numbers worked out by hand from the file.
    assert_eq!(usage_of(&all[MAIN_4D]), [177, 28_755, 11_618_567, 479_537]);
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn codex_steps_are_model_calls() {
    let Some(corpus) = corpus("codex_steps_are_model_calls") else {
        return;
    };
    let env = TestEnv::new();
    let files: Vec<PathBuf> = jsonl_files(&corpus)
        .into_iter()
        .filter(|f| is_codex(&corpus, f))
        .collect();
    assert!(files.len() >= 9, "{}", files.len());
    let reports = import_json(&env, &files);
    let all = tasks_by_id(&env);
    let mut versions = BTreeSet::new();
    for (f, report) in files.iter().zip(&reports) {
        assert_eq!(report["format"], "codex");
        let tasks = report["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 1, "{}", f.display());
        let t = &all[tasks[0]["id"].as_str().unwrap()];
        let lines = json_lines(f);
        let calls = codex_model_calls(&lines);
        let (events, usage) = codex_usage(&lines);
        let steps = t["steps"].as_u64().unwrap();
        assert!(steps > 0, "{}", f.display());
        assert_eq!(steps, calls, "{}: steps vs model calls", f.display());
        if events == calls {
            assert_eq!(steps, events, "{}", f.display());
            assert_eq!(usage_of(t), usage, "{}: usage", f.display());
        } else {
            eprintln!(
                "{}: {events} usage events for {calls} model calls; usage not compared",
                f.display()
            );
        }
        let version = lines
            .iter()
            .find(|(_, l)| l["type"] == "session_meta")
            .and_then(|(_, l)| l["payload"]["cli_version"].as_str())
            .unwrap()
            .to_string();
        versions.insert(version);
    }
    for v in ["0.40.0", "0.104.0-alpha.1"] {
        assert!(versions.contains(v), "Codex {v} not covered: {versions:?}");
    }
}

/// `tasks --json` rows by id.
fn tasks_by_id(env: &TestEnv) -> BTreeMap<String, Value> {
    env.tasks()
        .into_iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), t))
        .collect()
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn subagent_files_become_tasks_of_their_parent() {
    let Some(corpus) = corpus("subagent_files_become_tasks_of_their_parent") else {
        return;
    };
    for (dir, session) in [
        ("v2.1.39_spotter_compaction_subagents", MAIN_4D),
        (
            "v2.1.39_spotter_interrupts_biglines",
            "8463c716-a2ea-4c14-9efa-87158ebd9f20",
        ),
    ] {
        let env = TestEnv::new();
        let root = corpus.join("claude-code").join(dir);
        let subagents = jsonl_files(&root.join(session).join("subagents"));
        assert_eq!(subagents.len(), 2, "{dir}");
        let mut files = vec![root.join(format!("{session}.jsonl"))];
        files.extend(subagents.iter().cloned());
        import_json(&env, &files);
        let tasks = tasks_by_id(&env);
        assert_eq!(tasks.len(), 3, "{dir}: {:?}", tasks.keys());
        assert_eq!(tasks[session]["parent"], Value::Null);
        for sub in &subagents {
            let agent = sub.file_stem().unwrap().to_string_lossy().into_owned();
            let id = format!("{session}/{agent}");
            let t = tasks
                .get(&id)
                .unwrap_or_else(|| panic!("{dir}: no task {id}"));
            assert_eq!(t["parent"], session, "{id}");
            // Every line of a subagent file is its own conversation.
            let conversation = json_lines(sub)
                .iter()
                .filter(|(_, l)| l["type"] == "user" || l["type"] == "assistant")
                .count();
            assert_eq!(t["messages"], conversation, "{id}");
        }
    }
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn inline_sidechains_become_tasks_of_their_parent() {
    let Some(corpus) = corpus("inline_sidechains_become_tasks_of_their_parent") else {
        return;
    };
    let env = TestEnv::new();
    let file = corpus.join(format!(
        "claude-code/v1.0.98_inline_sidechains_summary/{INLINE_FE}.jsonl"
    ));
    import_json(&env, std::slice::from_ref(&file));
    let lines = json_lines(&file);
    let conversation = |side: bool| {
        lines
            .iter()
            .filter(|(_, l)| {
                (l["type"] == "user" || l["type"] == "assistant")
                    && l["isSidechain"].as_bool().unwrap_or(false) == side
            })
            .count() as u64
    };
    let roots: BTreeSet<String> = lines
        .iter()
        .filter(|(_, l)| l["isSidechain"] == true && l["parentUuid"].is_null())
        .map(|(_, l)| {
            format!(
                "{INLINE_FE}/sidechain-{}",
                &l["uuid"].as_str().unwrap()[..8]
            )
        })
        .collect();
    assert_eq!(roots.len(), 5, "the file has five subagent runs");
    let tasks = tasks_by_id(&env);
    let side: BTreeSet<String> = tasks
        .values()
        .filter(|t| t["parent"] == INLINE_FE)
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(side, roots);
    let side_messages: u64 = side
        .iter()
        .map(|id| tasks[id]["messages"].as_u64().unwrap())
        .sum();
    assert_eq!(side_messages, conversation(true));
    assert_eq!(side_messages, 405);
    assert_eq!(tasks[INLINE_FE]["messages"], conversation(false));
    assert_eq!(tasks[INLINE_FE]["parent"], Value::Null);
    // The title line names the main task.
    assert!(tasks[INLINE_FE]["title"].is_string());
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn agent_progress_lines_are_not_imported() {
    let Some(corpus) = corpus("agent_progress_lines_are_not_imported") else {
        return;
    };
    let env = TestEnv::new();
    let file = corpus.join("claude-code/v2.1.38_spotter_small/subagent.jsonl");
    let report = &import_json(&env, std::slice::from_ref(&file))[0];
    let lines = json_lines(&file);
    let progress: BTreeSet<u64> = lines
        .iter()
        .filter(|(_, l)| l["type"] == "progress" && l["data"]["type"] == "agent_progress")
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(progress.len(), 19);
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "agent_progress lines made tasks: {tasks:?}");
    let conn = env.conn();
    let mut stmt = conn
        .prepare("SELECT source_line FROM task_message")
        .unwrap();
    let stored: BTreeSet<u64> = stmt
        .query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|r| r.unwrap() as u64)
        .collect();
    assert!(
        stored.is_disjoint(&progress),
        "progress lines were imported"
    );
    let conversation = lines
        .iter()
        .filter(|(_, l)| l["type"] == "user" || l["type"] == "assistant")
        .count();
    assert_eq!(
        env.task(tasks[0]["id"].as_str().unwrap())["messages"],
        conversation
    );
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn each_version_is_read_with_auto_and_explicit_format() {
    let Some(corpus) = corpus("each_version_is_read_with_auto_and_explicit_format") else {
        return;
    };
    let files: Vec<PathBuf> = jsonl_files(&corpus)
        .into_iter()
        .filter(|f| !rel(&corpus, f).contains("/subagents/"))
        .collect();
    let auto = TestEnv::new();
    let reports = import_json(&auto, &files);
    // The same files with the format named: the same tasks.
    let explicit = TestEnv::new();
    for format in ["claude-code", "codex"] {
        let mut args = vec![
            "import".to_string(),
            "--format".to_string(),
            format.to_string(),
        ];
        args.extend(
            files
                .iter()
                .filter(|f| is_codex(&corpus, f) == (format == "codex"))
                .map(|f| f.display().to_string()),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        explicit.run(&args).success();
    }
    assert_eq!(auto.tasks(), explicit.tasks());

    let conn = auto.conn();
    let mut versions = BTreeSet::new();
    for (f, report) in files.iter().zip(&reports) {
        let lines = json_lines(f);
        let (format, version) = if is_codex(&corpus, f) {
            let v = lines[0].1["payload"]["cli_version"].as_str().unwrap();
            ("codex", v.to_string())
        } else {
            let v = lines
                .iter()
                .find(|(_, l)| {
                    (l["type"] == "user" || l["type"] == "assistant") && l["isSidechain"] != true
                })
                .map(|(_, l)| l["version"].as_str().unwrap().to_string())
                .unwrap();
            ("claude-code", v)
        };
        assert_eq!(report["format"], format, "{}", f.display());
        let main = report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .find(|id| !id.contains('/'))
            .unwrap_or_else(|| panic!("{}: no main task", f.display()));
        let stored: Option<String> = conn
            .query_row("SELECT cli_version FROM task WHERE id = ?1", [main], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(stored.as_deref(), Some(version.as_str()), "{}", f.display());
        versions.insert(format!("{format} {version}"));
    }
    eprintln!("versions covered: {versions:?}");
    for v in [
        "claude-code 1.0.98",
        "claude-code 2.0.14",
        "claude-code 2.1.14",
        "claude-code 2.1.38",
        "claude-code 2.1.39",
        "claude-code 2.1.152",
        "codex 0.40.0",
        "codex 0.104.0-alpha.1",
    ] {
        assert!(versions.contains(v), "{v} not covered: {versions:?}");
    }
}
