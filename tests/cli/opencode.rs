//! OpenCode's sessions (`--format opencode`): its SQLite store imported
//! read-only, one task per session. The fixture under `testdata/opencode/`
//! was written by the real OpenCode (pinned in `clients/package.json`)
//! against the loopback Chat Completions model of `chat.rs`, and holds the
//! requests that model received beside it; the live tests drive the real
//! client again, offline (HOME and XDG directories temporary, npm pointed
//! at a dead loopback port, autoupdate, sharing and models.dev off).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::chat::{ChatModel, Request, content_text};
use crate::resume::{client, client_command, run_bounded};
use crate::util::{TestEnv, testdata};

/// The recorded store and the agent calls its model received.
const FIXTURE_DB: &str = "opencode/opencode.db";
const FIXTURE_REQUESTS: &str = "opencode/requests.jsonl";
/// The temporary directory as committed fixtures write it.
const FIXTURE_ROOT: &str = "/tmp/compactor-fixture";
/// What OpenCode sends for a compaction part.
const COMPACTION_PROMPT: &str = "What did we do so far?";

/// The turns the fixture records: reads, a subagent, a failing tool and a
/// compaction.
const TURNS: [&str; 3] = [
    "Read the notes. [[reads 2]]",
    "Ask a helper. [[agent]]",
    "Now a missing one. [[missing]] [[overflow]]",
];

// ---------------------------------------------------------------- driving OpenCode

/// A project directory with the notes the script reads.
fn project(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("project");
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    for k in 1..=3 {
        std::fs::write(
            dir.join("notes").join(format!("file_{k:02}.txt")),
            format!("note {k}: the export job batches reads by 500.\n"),
        )
        .unwrap();
    }
    dir
}

/// `opencode run` pointed at `model`, its whole configuration in its
/// environment, nothing leaving the machine.
fn opencode_command(bin: &Path, env: &TestEnv, cwd: &Path, model: &ChatModel) -> Command {
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": "stub/stub-model",
        "provider": {"stub": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Stub",
            "options": {"baseURL": model.base_url(), "apiKey": "loopback"},
            "models": {"stub-model": {"name": "Stub model", "limit": {"context": 128000, "output": 8192}}}
        }}
    });
    let mut cmd = client_command(bin, &env.home(), cwd);
    offline(&mut cmd, env);
    cmd.env("OPENCODE_CONFIG_CONTENT", config.to_string());
    cmd
}

/// OpenCode's directories under the test's root, and nothing leaving the
/// machine.
fn offline(cmd: &mut Command, env: &TestEnv) {
    let home = env.home();
    cmd.env("XDG_DATA_HOME", opencode_data(env).parent().unwrap())
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local").join("state"))
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
        .env("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1")
        // OpenCode installs its plugin package into its config directory from
        // npm: a dead loopback registry keeps that on the machine.
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_offline", "true");
}

/// Where the driven OpenCode keeps its data (`$XDG_DATA_HOME/opencode`).
fn opencode_data(env: &TestEnv) -> PathBuf {
    env.root().join("xdg-data").join("opencode")
}

fn store_of(env: &TestEnv) -> PathBuf {
    opencode_data(env).join("opencode.db")
}

/// One `opencode run` turn, continuing the last session after the first.
fn run_turn(bin: &Path, env: &TestEnv, cwd: &Path, model: &ChatModel, prompt: &str, first: bool) {
    let mut cmd = opencode_command(bin, env, cwd, model);
    cmd.arg("run");
    if !first {
        cmd.arg("--continue");
    }
    cmd.arg(prompt);
    let (status, out, err) = run_bounded(cmd);
    assert_eq!(status, 0, "opencode failed:\n{out}\n{err}");
}

/// The agent calls a model received, as the fixture keeps them: the
/// session each names (`x-session-id`) and its messages but the system
/// prompt.
fn agent_calls(requests: &[Request]) -> Vec<Value> {
    requests
        .iter()
        .filter(|r| r.is_agent_call())
        .map(|r| {
            let messages: Vec<Value> = r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] != "system")
                .cloned()
                .collect();
            json!({"session": r.header("x-session-id"), "messages": messages})
        })
        .collect()
}

/// Regenerate `testdata/opencode/`: the pinned OpenCode runs [`TURNS`]
/// against the loopback model, and its store (copied with `VACUUM INTO`,
/// the temporary directory renamed, OpenCode's event log left out) and the
/// agent calls the model received are saved. Run by hand:
/// `cargo test --test cli -- --ignored regenerate_opencode_fixture`.
#[test]
#[ignore = "regenerates committed fixtures; run by hand"]
fn regenerate_opencode_fixture() {
    let Some(bin) = client("opencode", "regenerate_opencode_fixture") else {
        return;
    };
    let env = TestEnv::new();
    let cwd = project(&env);
    let model = ChatModel::start();
    for (i, t) in TURNS.iter().enumerate() {
        run_turn(&bin, &env, &cwd, &model, t, i == 0);
    }
    let root = env.root().display().to_string();
    let rename = |s: &str| {
        s.replace(&root, FIXTURE_ROOT).replace(
            root.trim_start_matches('/'),
            FIXTURE_ROOT.trim_start_matches('/'),
        )
    };
    let out = testdata(FIXTURE_DB);
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    let copy = env.root().join("copy.db");
    Connection::open(store_of(&env))
        .unwrap()
        .execute("VACUUM INTO ?1", [copy.display().to_string()])
        .unwrap();
    let conn = Connection::open(&copy).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for t in &tables {
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for c in columns {
            for (from, to) in [
                (root.clone(), FIXTURE_ROOT.to_string()),
                (
                    root.trim_start_matches('/').to_string(),
                    FIXTURE_ROOT.trim_start_matches('/').to_string(),
                ),
            ] {
                conn.execute(
                    &format!("UPDATE \"{t}\" SET \"{c}\" = replace(\"{c}\", ?1, ?2) WHERE typeof(\"{c}\") = 'text'"),
                    [&from, &to],
                )
                .unwrap();
            }
        }
    }
    // OpenCode's event log repeats what `message` and `part` hold and is no
    // part of what is imported: left out, and small pages, to keep it small.
    conn.execute_batch(
        "DELETE FROM event; DELETE FROM event_sequence; PRAGMA page_size = 1024; VACUUM",
    )
    .unwrap();
    drop(conn);
    std::fs::copy(&copy, &out).unwrap();
    let calls: String = agent_calls(&model.requests())
        .iter()
        .map(|c| rename(&c.to_string()) + "\n")
        .collect();
    std::fs::write(testdata(FIXTURE_REQUESTS), calls).unwrap();
}

// ---------------------------------------------------------------- what the model saw

/// One item of a conversation as a model is sent it, in words both sides
/// can be put in: `U:` user text, `R:` reasoning, `A:` assistant text,
/// `C:id:name:input` a tool call, `T:id:output` its result.
fn request_items(messages: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        match m["role"].as_str().unwrap_or("") {
            "user" => match &m["content"] {
                Value::Array(parts) => out.extend(
                    parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .map(|t| format!("U:{t}")),
                ),
                c => out.push(format!("U:{}", content_text(c))),
            },
            "assistant" => {
                if let Some(r) = m["reasoning_content"].as_str().filter(|r| !r.is_empty()) {
                    out.push(format!("R:{r}"));
                }
                let text = content_text(&m["content"]);
                if !text.is_empty() {
                    out.push(format!("A:{text}"));
                }
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    let args: Value =
                        serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
                    out.push(format!(
                        "C:{}:{}:{args}",
                        c["id"].as_str().unwrap(),
                        c["function"]["name"].as_str().unwrap()
                    ));
                }
            }
            "tool" => out.push(format!(
                "T:{}:{}",
                m["tool_call_id"].as_str().unwrap(),
                content_text(&m["content"])
            )),
            other => panic!("a {other} message in a request"),
        }
    }
    out
}

/// Per model call of a task's record, the conversation the record says
/// its model was sent, in [`request_items`]' words.
fn record_calls(env: &TestEnv, task: &str) -> Vec<Vec<String>> {
    let run = env.run(&["show", "--task", task, "--json"]);
    run.success();
    let mut sent: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    let mut last_step = 0;
    for row in run.json_lines() {
        let blocks = row["content"].as_array().cloned().unwrap_or_default();
        let texts = |ty: &str, key: &str| -> Vec<String> {
            blocks
                .iter()
                .filter(|b| b["type"] == ty)
                .map(|b| b[key].as_str().unwrap().to_string())
                .collect()
        };
        match row["kind"].as_str().unwrap() {
            "ask" | "context" => {
                sent.extend(texts("text", "text").into_iter().map(|t| format!("U:{t}")))
            }
            "compact_boundary" => {
                sent.clear();
                sent.push(format!("U:{COMPACTION_PROMPT}"));
            }
            "compact_summary" => {
                sent.extend(texts("text", "text").into_iter().map(|t| format!("A:{t}")))
            }
            "generation" => {
                let step = row["step"].as_u64().unwrap();
                if step != last_step {
                    calls.push(sent.clone());
                    last_step = step;
                }
                sent.extend(
                    texts("thinking", "thinking")
                        .into_iter()
                        .map(|t| format!("R:{t}")),
                );
                sent.extend(texts("text", "text").into_iter().map(|t| format!("A:{t}")));
                for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
                    sent.push(format!(
                        "C:{}:{}:{}",
                        b["id"].as_str().unwrap(),
                        b["name"].as_str().unwrap(),
                        b["input"]
                    ));
                }
            }
            "tool_result" => {
                for b in &blocks {
                    let content = match &b["content"] {
                        Value::String(s) => s.clone(),
                        c => content_text(c),
                    };
                    sent.push(format!(
                        "T:{}:{content}",
                        b["tool_use_id"].as_str().unwrap()
                    ));
                }
            }
            _ => {}
        }
    }
    calls
}

/// Every agent call the model received matches, item for item, the
/// conversation the imported record says was sent at that call of that
/// session's task; every call of every task was received.
fn assert_calls_match(env: &TestEnv, received: &[Value]) {
    let tasks = env.tasks();
    let by_session: BTreeSet<&str> = received
        .iter()
        .map(|c| c["session"].as_str().expect("each call names its session"))
        .collect();
    assert!(
        by_session.len() >= 2,
        "a session and its subagent's: {by_session:?}"
    );
    for session in &by_session {
        let task = tasks
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .find(|id| id.rsplit('/').next() == Some(*session))
            .unwrap_or_else(|| panic!("no task for session {session}: {tasks:#?}"));
        assert_calls_match_one(env, task, received);
    }
}

fn fixture_requests() -> Vec<Value> {
    std::fs::read_to_string(testdata(FIXTURE_REQUESTS))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ---------------------------------------------------------------- the recorded store

/// The store the real OpenCode wrote imports with no unknown part, one
/// task per session, the subagent's linked to its parent.
#[test]
fn the_recorded_store_imports_every_part_with_its_subagent_linked() {
    let env = TestEnv::new();
    let db = env.fixture(FIXTURE_DB);
    let run = env.run(&["import", &db, "--json"]);
    run.success();
    let r = run.json();
    assert_eq!(r["format"], "opencode", "{r}");
    assert_eq!(r["unknown_line_types"], json!({}), "{r}");
    assert_eq!(r["skipped_lines"], json!([]), "{r}");
    assert_eq!(r["incomplete_lines"], 0, "{r}");
    assert_eq!(r["warnings"], json!([]), "{r}");
    let tasks = r["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2, "{r}");
    let (main, sub) = (&tasks[0], &tasks[1]);
    let main_id = main["id"].as_str().unwrap();
    assert!(
        main_id.starts_with("ses_") && !main_id.contains('/'),
        "{main}"
    );
    assert_eq!(main["turns"], TURNS.len() as u64, "{main}");
    assert_eq!(main["interrupted_tool_calls"], json!([]), "{main}");
    assert!(
        sub["id"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{main_id}/ses_")),
        "{sub}"
    );
    assert_eq!(sub["parent"], main_id, "{sub}");
    assert_eq!(
        sub["steps"], 2,
        "the subagent reads one file and answers: {sub}"
    );
    let listed = env.task(sub["id"].as_str().unwrap());
    assert_eq!(listed["parent"], main_id);
    assert_eq!(listed["format"], "opencode");
    let main_row = env.task(main_id);
    assert_eq!(main_row["model"], "stub-model");
    assert_eq!(main_row["title"], "Reading the notes");
    // Tokens as Anthropic counts them: the stub's prompt of 1,000 + 100 per
    // message, half cached; 20 completion tokens (reasoning included).
    let rows = env.run(&["show", "--task", main_id, "--json"]);
    let usage: Vec<Value> = rows
        .json_lines()
        .into_iter()
        .filter(|m| m["kind"] == "usage")
        .collect();
    assert!(!usage.is_empty());
    for u in &usage {
        let u = &u["usage"];
        let prompt =
            u["input_tokens"].as_u64().unwrap() + u["cache_read_input_tokens"].as_u64().unwrap();
        assert!(prompt == 1_000_000 || (prompt - 1_000) % 100 == 0, "{u}");
        assert_eq!(
            u["cache_read_input_tokens"].as_u64().unwrap(),
            prompt / 2,
            "{u}"
        );
        assert_eq!(u["output_tokens"], 20, "{u}");
    }
    // The failing read's error is a tool error, the compaction a boundary
    // and the agent's own summary.
    let kinds: Vec<String> = rows
        .json_lines()
        .iter()
        .map(|m| m["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(kinds.contains(&"compact_boundary".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"compact_summary".to_string()), "{kinds:?}");
    assert!(
        rows.stdout.contains("\"is_error\":true") && rows.stdout.contains("missing.txt"),
        "{}",
        rows.stdout
    );
}

/// Each call of the recorded sessions is the request the model received,
/// item for item: texts, reasoning, tool calls with their input, results
/// and errors, the compaction's question and summary.
#[test]
fn the_recorded_calls_match_the_requests_the_model_saw() {
    let env = TestEnv::new();
    let db = env.fixture(FIXTURE_DB);
    env.run(&["import", &db]).success();
    assert_calls_match(&env, &fixture_requests());
}

/// Importing the store again adds nothing (the same file unchanged, and a
/// copy of it read anew); a store whose sessions grew appends only their
/// new messages, and the record equals one imported whole.
#[test]
fn importing_again_adds_nothing_and_a_grown_session_appends_only_its_new_rows() {
    let env = TestEnv::new();
    let db = env.fixture(FIXTURE_DB);
    // The store as it was before the last turn: its messages removed.
    let early = env.work().join("early.db");
    std::fs::copy(env.work().join(&db), &early).unwrap();
    let conn = Connection::open(&early).unwrap();
    let last_ask: i64 = conn
        .query_row(
            "SELECT m.time_created FROM message m JOIN part p ON p.message_id = m.id
             WHERE p.data LIKE '%Now a missing one%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // The last turn's messages, of every session.
    let removed = conn
        .execute("DELETE FROM message WHERE time_created >= ?1", [last_ask])
        .unwrap();
    assert!(removed >= 3, "the last turn's ask, call and answer");
    drop(conn);
    let first = env.run(&["import", "early.db", "--json"]);
    first.success();
    let before: u64 = first.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["added"].as_u64().unwrap())
        .sum();
    // The grown store, under the early one's name.
    std::fs::copy(env.work().join(&db), &early).unwrap();
    let grown = env.run(&["import", "early.db", "--json"]);
    grown.success();
    let g = grown.json();
    let main = &g["tasks"][0];
    assert_eq!(
        main["already"].as_u64().unwrap() + main["added"].as_u64().unwrap(),
        env.task(main["id"].as_str().unwrap())["rows"]
            .as_u64()
            .unwrap()
    );
    assert!(
        main["already"].as_u64().unwrap() > 0 && main["added"].as_u64().unwrap() > 0,
        "{g}"
    );
    let added: u64 = g["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["added"].as_u64().unwrap())
        .sum();
    // Unchanged: not read again; a copy read anew adds nothing either.
    let again = env.run(&["import", "early.db", "--json"]);
    again.success();
    assert_eq!(again.json()["status"], "unchanged");
    let copy = env.run(&["import", &db, "--json"]);
    copy.success();
    let c = copy.json();
    assert_eq!(c["status"], "imported");
    assert!(
        c["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["added"] == 0),
        "{c}"
    );
    // The grown record is the record of the whole store.
    let whole = TestEnv::new();
    let db2 = whole.fixture(FIXTURE_DB);
    let all = whole.run(&["import", &db2, "--json"]);
    let total: u64 = all.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["added"].as_u64().unwrap())
        .sum();
    assert_eq!(before + added, total);
    let main_id = main["id"].as_str().unwrap();
    let strip = |run: crate::util::Run| -> Vec<Value> {
        run.json_lines()
            .into_iter()
            .map(|mut m| {
                m.as_object_mut().unwrap().remove("source");
                m
            })
            .collect()
    };
    assert_eq!(
        strip(env.run(&["show", "--task", main_id, "--json"])),
        strip(whole.run(&["show", "--task", main_id, "--json"]))
    );
}

/// A part whose JSON is broken fails the import naming the store, the
/// session, the message and the part, and stores nothing; with
/// `--skip-invalid` the rest is imported and the part listed.
#[test]
fn a_broken_part_is_named_and_nothing_is_stored() {
    let env = TestEnv::new();
    let db = env.fixture(FIXTURE_DB);
    let conn = Connection::open(env.work().join(&db)).unwrap();
    let (part, message): (String, String) = conn
        .query_row(
            "SELECT id, message_id FROM part WHERE data LIKE '%\"type\":\"tool\"%' ORDER BY id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    conn.execute(
        "UPDATE part SET data = '{\"type\":\"tool\",' WHERE id = ?1",
        [&part],
    )
    .unwrap();
    drop(conn);
    let run = env.run(&["import", &db]);
    run.failure(2);
    run.stderr_has(&db)
        .stderr_has(format!("message {message}, part {part}"))
        .stderr_has("invalid JSON")
        .stderr_has("expected OpenCode's part JSON");
    assert_eq!(env.counts(), [0, 0, 0], "nothing stored");
    let run = env.run(&["import", &db, "--skip-invalid", "--json"]);
    run.success();
    let r = run.json();
    assert_eq!(r["skipped_lines"].as_array().unwrap().len(), 1, "{r}");
    assert!(
        r["skipped_lines"][0]["message"]
            .as_str()
            .unwrap()
            .contains(&part),
        "{r}"
    );
}

/// A row whose `data` is a BLOB (SQLite keeps what was stored, whatever
/// the column's type), a part's and a message's: the import fails naming
/// the row and what was expected; `--skip-invalid` skips each (a message
/// with its parts) and imports the rest.
#[test]
fn a_row_whose_data_is_a_blob_is_named_or_skipped() {
    let env = TestEnv::new();
    let db = env.fixture(FIXTURE_DB);
    let conn = Connection::open(env.work().join(&db)).unwrap();
    let part: String = conn
        .query_row(
            "SELECT id FROM part WHERE data LIKE '%\"type\":\"tool\"%' ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE part SET data = CAST(data AS BLOB) WHERE id = ?1",
        [&part],
    )
    .unwrap();
    let run = env.run(&["import", &db]);
    run.failure(2)
        .stderr_has(format!("part {part}"))
        .stderr_has("`data` is a BLOB of ")
        .stderr_has("expected OpenCode's part JSON");
    assert_eq!(env.counts(), [0, 0, 0], "nothing stored");
    // A message's too: the last user message of the first session.
    let message: String = conn
        .query_row(
            "SELECT id FROM message WHERE data LIKE '%\"role\":\"user\"%' ORDER BY time_created DESC, id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE message SET data = zeroblob(16) WHERE id = ?1",
        [&message],
    )
    .unwrap();
    drop(conn);
    let run = env.run(&["import", &db, "--skip-invalid", "--json"]);
    run.success();
    let r = run.json();
    let skipped: Vec<String> = r["skipped_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(skipped.len(), 2, "{r}");
    assert!(
        skipped.iter().any(|m| m.contains(&format!("part {part}"))),
        "{skipped:?}"
    );
    assert!(
        skipped
            .iter()
            .any(|m| m.contains(&format!("message {message}"))
                && m.contains("`data` is a BLOB of 16 bytes")),
        "{skipped:?}"
    );
    assert!(env.counts()[0] > 0, "the rest is imported");
}

/// An SQLite file that is not OpenCode's, and a file that is no SQLite
/// database given as `--format opencode`, are refused saying what was
/// expected.
#[test]
fn what_is_not_an_opencode_store_is_refused() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    std::fs::copy(env.db(), env.work().join("other.db")).unwrap();
    let fresh = TestEnv::new();
    std::fs::copy(env.work().join("other.db"), fresh.work().join("other.db")).unwrap();
    let run = fresh.run(&["import", "other.db"]);
    run.failure(2);
    run.stderr_has("other.db: the database: no table `session`; expected OpenCode's opencode.db");
    let jsonl = fresh.fixture("claude-code/small-session.jsonl");
    let run = fresh.run(&["import", &jsonl, "--format", "opencode"]);
    run.failure(2);
    run.stderr_has("is not an SQLite database; expected OpenCode's opencode.db");
    let run = fresh.run(&["import", "other.db", "--task", "mine"]);
    run.failure(2);
    run.stderr_has("an OpenCode database holds one per session");
    assert_eq!(fresh.counts(), [0, 0, 0]);
}

/// A bare `compactor import` finds OpenCode's store beside the other
/// clients' sessions, in `$XDG_DATA_HOME/opencode`, and `--opencode` alone.
#[test]
fn a_bare_import_finds_opencode_beside_the_other_clients() {
    let env = TestEnv::new();
    let dir = env.data_home().join("opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(testdata(FIXTURE_DB), dir.join("opencode.db")).unwrap();
    let run = env.run(&["import", "--json"]);
    run.success();
    let reports = run.import_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0]["format"], "opencode");
    assert_eq!(reports[0]["tasks"].as_array().unwrap().len(), 2);
    run.stderr_has("no Claude Code sessions")
        .stderr_has("no Codex sessions");
    let again = env.run(&["import", "--opencode"]);
    again.success();
    again.stdout_has("1 file: 0 imported, 1 unchanged");
    let none = TestEnv::new();
    let run = none.run(&["import", "--opencode"]);
    run.failure(2);
    run.stderr_has("no OpenCode sessions")
        .stderr_has("XDG_DATA_HOME");
}

/// The real OpenCode after its first turn in a project of its own,
/// against a scripted model: what the live tests go on from.
struct FirstTurn {
    bin: PathBuf,
    env: TestEnv,
    cwd: PathBuf,
    model: ChatModel,
    /// OpenCode's store, as `import` takes it.
    store: String,
}

/// [`FirstTurn`], or `None` (said) when the pinned clients are missing.
fn first_turn(test: &str) -> Option<FirstTurn> {
    let bin = client("opencode", test)?;
    let env = TestEnv::new();
    let cwd = project(&env);
    let model = ChatModel::start();
    let store = store_of(&env).display().to_string();
    run_turn(&bin, &env, &cwd, &model, TURNS[0], true);
    Some(FirstTurn {
        bin,
        env,
        cwd,
        model,
        store,
    })
}

// ---------------------------------------------------------------- the live client

/// The real OpenCode, two turns: each import of its store adds only what
/// the turn added, and every call matches what the model received.
#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned clients: cd clients && npm ci"
)]
fn opencode_live_sessions_import_incrementally_and_match_their_requests() {
    let Some(FirstTurn {
        bin,
        env,
        cwd,
        model,
        store,
    }) = first_turn("opencode_live_sessions_import_incrementally_and_match_their_requests")
    else {
        return;
    };
    let first = env.run(&["import", &store, "--json"]);
    first.success();
    let f = first.json();
    let stored = f["tasks"][0]["added"].as_u64().unwrap();
    run_turn(&bin, &env, &cwd, &model, TURNS[1], false);
    let second = env.run(&["import", &store, "--json"]);
    second.success();
    let s = second.json();
    assert_eq!(s["tasks"][0]["already"], stored, "{s}");
    assert!(s["tasks"][0]["added"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(
        s["tasks"].as_array().unwrap().len(),
        2,
        "the subagent's task: {s}"
    );
    assert_eq!(s["unknown_line_types"], json!({}), "{s}");
    assert_calls_match(&env, &agent_calls(&model.requests()));
    // What OpenCode sends: Chat Completions, streamed with the usage chunk,
    // the session named in a header.
    for r in model.requests().iter().filter(|r| r.is_agent_call()) {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.body["stream"], true);
        assert_eq!(r.body["stream_options"]["include_usage"], true);
        assert!(
            r.header("x-session-id")
                .is_some_and(|s| s.starts_with("ses_"))
        );
        assert_eq!(r.header("authorization"), Some("Bearer loopback"));
    }
}

/// OpenCode holds its store open in WAL mode and is mid-call (the model
/// holds its answer): an import reads one consistent snapshot, stores what
/// is final and leaves the unfinished message for later; once OpenCode is
/// done, the next import appends the rest, and the record equals one made
/// after the fact.
#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned clients: cd clients && npm ci"
)]
fn an_import_while_opencode_writes_reads_a_consistent_snapshot() {
    let Some(FirstTurn {
        bin,
        env,
        cwd,
        model,
        store,
    }) = first_turn("an_import_while_opencode_writes_reads_a_consistent_snapshot")
    else {
        return;
    };
    // The second turn's first call is held after its first chunk.
    model.hold_next();
    let mut cmd = opencode_command(&bin, &env, &cwd, &model);
    cmd.args(["run", "--continue", "Read the notes again. [[reads 3]]"]);
    let turn = std::thread::spawn(move || run_bounded(cmd));
    assert!(
        model.wait_holding(Duration::from_secs(60)),
        "OpenCode made its call"
    );
    let wal = PathBuf::from(format!("{store}-wal"));
    assert!(wal.exists(), "OpenCode holds its store in WAL mode");
    let during = env.run(&["import", &store, "--json"]);
    during.success();
    let d = during.json();
    assert!(
        d["incomplete_lines"].as_u64().unwrap() >= 1,
        "the call in progress is left: {d}"
    );
    let main = d["tasks"][0]["id"].as_str().unwrap().to_string();
    let held_rows = env.task(&main)["rows"].as_u64().unwrap();
    model.release();
    let (status, out, err) = turn.join().unwrap();
    assert_eq!(status, 0, "opencode failed:\n{out}\n{err}");
    let after = env.run(&["import", &store, "--json"]);
    after.success();
    let a = after.json();
    assert_eq!(a["tasks"][0]["already"], held_rows, "{a}");
    assert!(a["tasks"][0]["added"].as_u64().unwrap() > 0, "{a}");
    assert_eq!(a["incomplete_lines"], 0, "{a}");
    let whole = TestEnv::new();
    let all = whole.run(&["import", &store, "--json"]);
    all.success();
    assert_eq!(all.json()["tasks"][0]["added"], env.task(&main)["rows"]);
    assert_calls_match_one(&env, &main, &agent_calls(&model.requests()));
}

/// [`assert_calls_match`] for one session's task.
fn assert_calls_match_one(env: &TestEnv, task: &str, received: &[Value]) {
    let session = task.rsplit('/').next().unwrap();
    let want: Vec<Vec<String>> = received
        .iter()
        .filter(|c| c["session"] == session)
        .map(|c| {
            request_items(c["messages"].as_array().unwrap())
                .iter()
                .map(|i| env.redact(i))
                .collect()
        })
        .collect();
    let got = record_calls(env, task);
    assert_eq!(got.len(), want.len(), "{task}: one model call per request");
    for (k, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(g, w, "{task}: call {}", k + 1);
    }
}

// ---------------------------------------------------------------- through compactor run

/// The long turn's ask: its constraint must reach every call.
const LONG_ASK: &str =
    "Read every note and report the batch size. [[reads 30]] Never edit files outside notes/.";
const CONSTRAINT: &str = "Never edit files outside notes/.";
/// The proxy's budget: a window the 30 reads pass several times over.
const RUN_BUDGET: [&str; 4] = ["--window", "24000", "--output-reserved", "2000"];

/// Chat Completions messages: every `tool` message answers a call of the
/// assistant message before it, and every call is answered before the next
/// assistant or user message.
pub fn assert_chat_pairs(messages: &[Value], what: &str) {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        match m["role"].as_str().unwrap_or("") {
            "assistant" | "user" => {
                assert!(open.is_empty(), "{what}: calls without results {open:?}");
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    open.push(c["id"].as_str().unwrap().to_string());
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap();
                assert!(
                    open.iter().any(|o| o == id),
                    "{what}: a result without its call {id}"
                );
                open.retain(|o| o != id);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "{what}: calls without results {open:?}");
}

/// The tool calls of a task's record, in order: id, name and input.
fn recorded_tool_calls(env: &TestEnv, task: &str) -> Vec<(String, String, Value)> {
    let run = env.run(&["show", "--task", task, "--json"]);
    run.success();
    run.json_lines()
        .iter()
        .flat_map(|row| row["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            (
                b["id"].as_str().unwrap().to_string(),
                b["name"].as_str().unwrap().to_string(),
                b["input"].clone(),
            )
        })
        .collect()
}

/// The real OpenCode through `compactor run opencode` on a 30-read turn
/// against the loopback model, with a window the reads pass several times
/// over: the proxy compacts; every request the model receives fits the
/// window, carries the first ask's constraint and pairs its tool calls;
/// every forwarded view is derived again offline (`--verify-forwarded`,
/// and a plain replay at the proxy's budget); OpenCode's side requests are
/// tasks of their own; the user's config file is left as it was; and the
/// session OpenCode stored imports whole, its calls those the model made.
#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned clients: cd clients && npm ci"
)]
fn opencode_through_compactor_run_compacts_a_long_tool_heavy_turn() {
    let Some(bin) = client(
        "opencode",
        "opencode_through_compactor_run_compacts_a_long_tool_heavy_turn",
    ) else {
        return;
    };
    let env = TestEnv::new();
    let cwd = env.root().join("project");
    crate::proxy::write_notes(&cwd, 30, 40);
    let model = ChatModel::start();
    // The user's own config file: no provider of compactor's.
    let config_dir = env.home().join(".config").join("opencode");
    std::fs::create_dir_all(&config_dir).unwrap();
    let user_config = r#"{"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled"}"#;
    std::fs::write(config_dir.join("opencode.json"), user_config).unwrap();
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_compactor"));
    let mut cmd = client_command(&exe, &env.home(), &cwd);
    offline(&mut cmd, &env);
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        crate::resume::client_path()
    );
    cmd.env("PATH", path)
        .env("OPENAI_API_KEY", "loopback-key")
        .arg("--db")
        .arg(env.db())
        .args(["run", "opencode", "--upstream", &model.base_url()])
        .args(RUN_BUDGET)
        .args(["--", "run", "-m", "compactor/stub-model", LONG_ASK]);
    let (status, out, err) = crate::resume::run_bounded_for(cmd, Duration::from_secs(600));
    assert_eq!(status, 0, "compactor run opencode failed:\n{out}\n{err}");
    assert!(out.contains("Done: 30 tool results read."), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(config_dir.join("opencode.json")).unwrap(),
        user_config,
        "the user's config is never edited"
    );

    let requests = model.requests();
    let agent: Vec<&Request> = requests.iter().filter(|r| r.is_agent_call()).collect();
    assert_eq!(agent.len(), 31, "30 reads and the closing answer");
    let window: u64 = RUN_BUDGET[1].parse().unwrap();
    for (k, r) in agent.iter().enumerate() {
        let what = format!("agent call {}", k + 1);
        assert_eq!(r.path, "/v1/chat/completions", "{what}");
        assert_eq!(r.header("authorization"), Some("Bearer loopback-key"));
        let text = r.body.to_string();
        assert!(
            (text.len() as u64) / 4 <= window,
            "{what}: {} bytes, over the window",
            text.len()
        );
        let messages = r.body["messages"].as_array().unwrap();
        assert!(text.contains(CONSTRAINT), "{what}: the constraint is lost");
        assert_eq!(messages[0]["role"], "system", "{what}: system first");
        assert_chat_pairs(messages, &what);
    }
    // OpenCode started compactor's MCP server from the same variable: its
    // tools are offered to the model.
    let names: Vec<String> = agent[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        names.iter().any(|n| n.contains("view_tool_call")),
        "compactor's tools are offered: {names:?}"
    );
    // The proxy compacted: a later call was sent fewer messages than the
    // client holds.
    let held = |r: &Request| r.body["messages"].as_array().unwrap().len();
    assert!(
        agent.windows(2).any(|w| held(w[1]) < held(w[0])),
        "the views shrank at least once"
    );

    // The live tasks: the agent's conversation and OpenCode's side requests.
    let tasks = env.tasks();
    let live: Vec<&Value> = tasks
        .iter()
        .filter(|t| t["id"].as_str().unwrap().starts_with("live-"))
        .collect();
    let conn = env.conn();
    let forwarded = |task: &str| -> Vec<(u64, String)> {
        conn.prepare("SELECT call, view_hash FROM proxy_call WHERE task_id = ?1 ORDER BY attempt")
            .unwrap()
            .query_map([task], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let main = live
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .max_by_key(|t| forwarded(t).len())
        .unwrap()
        .to_string();
    assert_eq!(
        forwarded(&main).len(),
        31,
        "one task holds the agent's calls"
    );
    for t in &live {
        let id = t["id"].as_str().unwrap();
        let calls = forwarded(id);
        let run = env.run(&["replay", "--task", id, "--verify-forwarded", "--json"]);
        run.success();
        let v = run.json();
        assert_eq!(v["ok"], true, "{id}: {v}");
        assert_eq!(v["verified"], calls.len() as u64, "{id}: {v}");
        let mut args = vec!["replay", "--task", id, "--json"];
        args.extend(RUN_BUDGET);
        let replay = env.run(&args).replay_json();
        for c in replay["calls"].as_array().unwrap() {
            let k = c["call"].as_u64().unwrap();
            for (call, hash) in calls.iter().filter(|(call, _)| *call == k) {
                assert_eq!(
                    c["view_hash"].as_str().unwrap(),
                    hash,
                    "{id}: call {call}: plain replay is not what was forwarded"
                );
            }
        }
        if id != main {
            // A side request (a title: no tools, its own system prompt) is a
            // task of its own, linked with the agent's (the one that came
            // first of the session is the other's parent).
            let main_parent = env.task(&main)["parent"].clone();
            assert!(
                t["parent"] == main.as_str() || main_parent == id,
                "a side request is linked to the session's task: {t}"
            );
            assert_eq!(t["tool_calls"], 0, "{t}");
        }
    }
    let fired: i64 = conn
        .query_row(
            "SELECT count(*) FROM proxy_call WHERE task_id = ?1 AND json_array_length(report, '$.tiers_fired') > 0",
            [&main],
            |r| r.get(0),
        )
        .unwrap();
    assert!(fired > 0, "tiers fired");
    let largest = agent
        .iter()
        .map(|r| r.body.to_string().len())
        .max()
        .unwrap();
    eprintln!(
        "{} agent calls, {} live tasks, tiers fired at {fired} calls, largest request {largest} bytes (window {window} tokens)",
        agent.len(),
        live.len()
    );

    // The session OpenCode stored: every part known, its calls those the
    // model made and the proxy recorded.
    let store = store_of(&env).display().to_string();
    let import = env.run(&["import", &store, "--json"]);
    import.success();
    let r = import.json();
    assert_eq!(r["unknown_line_types"], json!({}), "{r}");
    assert_eq!(r["skipped_lines"], json!([]), "{r}");
    let session_task = r["tasks"][0]["id"].as_str().unwrap().to_string();
    let stored = recorded_tool_calls(&env, &session_task);
    assert_eq!(stored.len(), 30, "{stored:?}");
    assert_eq!(stored, recorded_tool_calls(&env, &main));
    let mut seen: Vec<String> = Vec::new();
    for r in &agent {
        for m in r.body["messages"].as_array().unwrap() {
            for c in m["tool_calls"].as_array().into_iter().flatten() {
                let id = c["id"].as_str().unwrap().to_string();
                if !seen.contains(&id) {
                    seen.push(id);
                }
            }
        }
    }
    let ids: Vec<String> = stored.iter().map(|(id, _, _)| id.clone()).collect();
    assert_eq!(ids, seen, "OpenCode's calls are those the model made");
    let steps = r["tasks"][0]["steps"].as_u64().unwrap();
    assert_eq!(steps, agent.len() as u64, "a step per agent call");
}
