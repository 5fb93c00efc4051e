//! `compactor tasks`: the table, the JSON contract, usage and step counts
//! computed independently from the fixtures, subagent links, store location.

use std::collections::BTreeSet;

use insta::assert_snapshot;
use serde_json::Value;

use crate::import::{CLAUDE_TASK, CODEX_TASK};
use crate::util::{
    TestEnv, USAGE_KEYS, claude_usage, codex_model_calls, codex_usage, json_lines,
    pairing_problems, testdata, usage_of,
};

const SUBAGENT_SESSION: &str = "c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94";
const SUBAGENT_MAIN: &str = "claude-code/with-subagent/c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94.jsonl";
const SUBAGENT_FILE: &str =
    "claude-code/with-subagent/c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94/subagents/agent-a5c31d7.jsonl";
const INLINE_SESSION: &str = "3d7a1f90-2c4b-4e61-9b8d-5f0e2a6c1d47";

#[test]
fn an_empty_store_says_how_to_start() {
    let env = TestEnv::new();
    // A store that imported nothing (a directory with no transcript).
    std::fs::create_dir(env.work().join("nothing")).unwrap();
    env.run(&["import", "nothing"]).success();
    let run = env.run(&["tasks"]);
    assert_snapshot!(run.snapshot());
    let run = env.run(&["tasks", "--json"]);
    run.success();
    // JSON Lines: no task, then the totals record.
    assert_eq!(
        run.stdout,
        "{\"calls\":0,\"messages\":0,\"schema\":\"compactor.tasks_total/1\",\"tasks\":0}\n"
    );
}

#[test]
fn table_of_the_fixture_tasks() {
    let env = TestEnv::new();
    for rel in [
        "claude-code/small-session.jsonl",
        "codex/small-rollout.jsonl",
        "openai-chat/conversation.jsonl",
        "anthropic/request.json",
    ] {
        env.import_fixture(rel);
    }
    let run = env.run(&["tasks"]);
    assert_snapshot!(run.snapshot());
}

#[test]
fn json_rows_have_the_contract_fields() {
    let env = TestEnv::new();
    for (rel, _) in crate::import::FIXTURES {
        env.import_fixture(rel);
    }
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 9, "{tasks:#?}");
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "tasks are listed by id");
    for t in &tasks {
        assert!(t["id"].is_string(), "{t}");
        assert!(
            ["claude-code", "codex", "openai-chat", "anthropic"]
                .contains(&t["format"].as_str().unwrap()),
            "{t}"
        );
        assert!(t["parent"].is_null() || t["parent"].is_string(), "{t}");
        assert!(t["messages"].as_u64().unwrap() > 0, "{t}");
        assert!(t["steps"].as_u64().unwrap() > 0, "{t}");
        assert!(t["turns"].is_u64(), "{t}");
        let usage = t["usage"].as_object().expect("usage object");
        let keys: BTreeSet<&str> = usage.keys().map(String::as_str).collect();
        assert_eq!(keys, BTreeSet::from(USAGE_KEYS), "{t}");
        assert!(usage.values().all(Value::is_u64), "{t}");
        assert_eq!(t["orphan_tool_results"], 0, "{t}");
    }
    assert_eq!(pairing_problems(&env.conn()), Vec::<String>::new());
}

#[test]
fn claude_code_usage_counts_each_response_once() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    let lines = json_lines(&testdata("claude-code/small-session.jsonl"));
    let expected = claude_usage(&lines, None);
    assert_eq!(usage_of(&env.task(CLAUDE_TASK)), expected);

    // The fixture must tell the right sum from the wrong ones: summing every
    // line's usage, or the first line's of each response, gives other totals.
    let mut every_line = [0u64; 4];
    let mut first_per_response = [0u64; 4];
    let mut seen = BTreeSet::new();
    for (_, l) in &lines {
        if l["type"] != "assistant" {
            continue;
        }
        let u = &l["message"]["usage"];
        let first = seen.insert(l["message"]["id"].as_str().unwrap().to_string());
        for (i, k) in USAGE_KEYS.iter().enumerate() {
            every_line[i] += u[k].as_u64().unwrap();
            if first {
                first_per_response[i] += u[k].as_u64().unwrap();
            }
        }
    }
    assert_ne!(every_line, expected);
    assert_ne!(first_per_response, expected);
    assert_eq!(expected, [11, 839, 160_571, 11_401]);
}

#[test]
fn claude_code_steps_are_distinct_responses() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    let lines = json_lines(&testdata("claude-code/small-session.jsonl"));
    let responses: BTreeSet<&str> = lines
        .iter()
        .filter(|(_, l)| l["type"] == "assistant")
        .map(|(_, l)| l["message"]["id"].as_str().unwrap())
        .collect();
    let asks = lines
        .iter()
        .filter(|(_, l)| l["type"] == "user" && l["message"]["content"].is_string())
        .count();
    let t = env.task(CLAUDE_TASK);
    assert_eq!(t["steps"], responses.len());
    assert_eq!(t["turns"], asks);
    assert_eq!(t["parent"], Value::Null);
}

#[test]
fn codex_steps_are_model_calls_and_usage_is_deduplicated() {
    let env = TestEnv::new();
    env.import_fixture("codex/small-rollout.jsonl");
    let lines = json_lines(&testdata("codex/small-rollout.jsonl"));
    let calls = codex_model_calls(&lines);
    let (events, usage) = codex_usage(&lines);
    assert_eq!(calls, 4);
    assert_eq!(events, calls, "one new usage event per model call");
    let t = env.task(CODEX_TASK);
    assert_eq!(t["steps"], calls);
    assert_eq!(usage_of(&t), usage);
    // Codex reports no cache writes.
    assert_eq!(t["usage"]["cache_creation_input_tokens"], 0);
}

#[test]
fn a_subagent_file_is_a_task_of_its_parent() {
    for order in [
        [SUBAGENT_MAIN, SUBAGENT_FILE],
        [SUBAGENT_FILE, SUBAGENT_MAIN],
    ] {
        let env = TestEnv::new();
        env.fixture("claude-code/with-subagent");
        for rel in order {
            env.run(&["import", rel]).success();
        }
        let tasks = env.tasks();
        let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
        let sub_id = format!("{SUBAGENT_SESSION}/agent-a5c31d7");
        assert_eq!(ids, [SUBAGENT_SESSION, sub_id.as_str()], "{order:?}");
        let main = &tasks[0];
        let sub = &tasks[1];
        assert_eq!(main["parent"], Value::Null);
        assert_eq!(sub["parent"], SUBAGENT_SESSION);
        assert_eq!(sub["model"], "claude-haiku-4-5-20251001");
        assert_eq!(sub["messages"], 4);
        assert_eq!(sub["steps"], 2);
        // The main file has 4 user/assistant lines; its agent_progress lines
        // (copies of the subagent's messages) are not conversation.
        assert_eq!(main["messages"], 4);
        assert_eq!(main["steps"], 2);
        assert_eq!(main["tool_calls"], 1);
        assert_eq!(main["interrupted_tool_calls"], 0);
    }
}

#[test]
fn agent_progress_lines_are_not_imported() {
    let env = TestEnv::new();
    env.fixture("claude-code/with-subagent");
    env.run(&["import", SUBAGENT_MAIN]).success();
    let progress: BTreeSet<u64> = json_lines(&testdata(SUBAGENT_MAIN))
        .into_iter()
        .filter(|(_, l)| l["type"] == "progress" && l["data"]["type"] == "agent_progress")
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        progress.len(),
        3,
        "the fixture has three agent_progress lines"
    );
    let conn = env.conn();
    let mut stmt = conn
        .prepare("SELECT source_line FROM task_message WHERE task_id = ?1")
        .unwrap();
    let stored: BTreeSet<u64> = stmt
        .query_map([SUBAGENT_SESSION], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|r| r.unwrap() as u64)
        .collect();
    assert_eq!(stored.len(), 4);
    assert!(stored.is_disjoint(&progress), "{stored:?} vs {progress:?}");
    // And no task was made from them.
    assert_eq!(env.tasks().len(), 1);
}

#[test]
fn an_inline_sidechain_is_a_task_of_its_parent() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/inline-sidechain.jsonl");
    let lines = json_lines(&testdata("claude-code/inline-sidechain.jsonl"));
    let sidechain_lines = lines
        .iter()
        .filter(|(_, l)| l["isSidechain"] == true)
        .count();
    let root = lines
        .iter()
        .find(|(_, l)| l["isSidechain"] == true && l["parentUuid"].is_null())
        .map(|(_, l)| l["uuid"].as_str().unwrap().to_string())
        .unwrap();
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 2);
    let side = tasks
        .iter()
        .find(|t| t["parent"] == INLINE_SESSION)
        .expect("a sidechain task");
    assert_eq!(
        side["id"],
        format!("{INLINE_SESSION}/sidechain-{}", &root[..8])
    );
    assert_eq!(side["messages"], sidechain_lines);
    let main = env.task(INLINE_SESSION);
    assert_eq!(main["parent"], Value::Null);
    assert_eq!(main["messages"], lines.len() - sidechain_lines);
    // The subagent's prompt is an ask of the sidechain, not of the main task.
    assert_eq!(main["turns"], 1);
    assert_eq!(side["turns"], 1);
    assert_eq!(pairing_problems(&env.conn()), Vec::<String>::new());
}

#[test]
fn the_store_can_be_named_by_compactor_db() {
    let env = TestEnv::new();
    let path = env.fixture("anthropic/messages.jsonl");
    let db = env.root().join("from-env.db");
    let mut cmd = env.bare_command();
    cmd.env("COMPACTOR_DB", &db).args(["import", &path]);
    env.finish(cmd).success();
    assert!(db.exists());
    let run = env.finish({
        let mut c = env.bare_command();
        c.arg("--db").arg(&db).args(["tasks", "--json"]);
        c
    });
    run.success();
    assert_eq!(run.json().as_array().unwrap().len(), 1);
    assert!(!env.db().exists(), "nothing went to the --db store");
}

#[test]
fn the_default_store_is_under_the_data_directory() {
    let env = TestEnv::new();
    let path = env.fixture("anthropic/messages.jsonl");
    let mut cmd = env.bare_command();
    cmd.args(["import", &path]);
    env.finish(cmd).success();
    let default = env.data_home().join("compactor").join("compactor.db");
    assert!(default.exists(), "{} missing", default.display());
    let mut cmd = env.bare_command();
    cmd.args(["tasks", "--json"]);
    let run = env.finish(cmd);
    assert_eq!(run.json().as_array().unwrap().len(), 1);
}

#[test]
fn a_memory_store_keeps_nothing() {
    let env = TestEnv::new();
    let path = env.fixture("anthropic/messages.jsonl");
    let mut cmd = env.bare_command();
    cmd.args(["--db", ":memory:", "import", &path]);
    let run = env.finish(cmd);
    run.success().stdout_has("4 added");
    let mut cmd = env.bare_command();
    cmd.args(["--db", ":memory:", "tasks", "--json"]);
    assert_eq!(
        env.finish(cmd).stdout,
        "{\"calls\":0,\"messages\":0,\"schema\":\"compactor.tasks_total/1\",\"tasks\":0}\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(env.work())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("memory"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(!env.data_home().join("compactor").exists());
}

#[test]
fn a_closed_output_pipe_is_not_an_error() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    for args in [
        vec!["tasks", "--json"],
        vec!["tasks"],
        vec!["show", "--task", CLAUDE_TASK, "--json"],
        vec!["show", "--task", CLAUDE_TASK],
    ] {
        let mut cmd = env.std_command();
        cmd.arg("--db")
            .arg(env.db())
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // Close the reading end before the command writes (`compactor ... | head -0`).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }
}

#[test]
fn a_broken_store_is_an_internal_error_with_status_3() {
    let env = TestEnv::new();
    env.import_fixture("anthropic/messages.jsonl").success();
    // Input errors stay 2.
    env.run(&["show", "--task", "no-such-task"]).failure(2);
    // A store whose tables were damaged behind compactor's back is not the
    // user's input: SQLite fails, and the status says so.
    env.conn().execute_batch("DROP TABLE task_message").unwrap();
    let run = env.run(&["tasks"]);
    run.failure(3);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
}

#[test]
fn the_table_over_a_fake_home_has_titles_projects_and_subagents_indented() {
    let env = TestEnv::new();
    crate::discover::fake_home(&env);
    env.run(&["import"]).success();
    // One task with its summary line as the title; the rest take their first ask.
    env.fixture("claude-code/inline-sidechain.jsonl");
    env.run(&["import", "claude-code/inline-sidechain.jsonl"])
        .success();
    let run = env.run(&["tasks"]);
    run.success();
    for line in run.stdout.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert_snapshot!(run.snapshot());
    let wide = env.run(&["tasks", "--wide"]);
    wide.success()
        .stdout_has(format!("└ {SUBAGENT_SESSION}/agent-a5c31d7"));
    // Every short id names its task.
    for t in env.tasks().iter().filter(|t| t["parent"].is_null()) {
        let short = t["short_id"].as_str().unwrap();
        assert!(
            run.stdout.contains(&format!("\n{short} ")),
            "{short}: {}",
            run.stdout
        );
        let shown = env.run(&["show", "--task", short, "0..1"]);
        let full = env.run(&["show", "--task", t["id"].as_str().unwrap(), "0..1"]);
        shown.success();
        assert_eq!(shown.stdout, full.stdout);
        assert_eq!(t["cwd"], "/home/dev/projects/tally", "{t}");
        assert!(t["title"].is_string(), "{t}");
    }
}

#[test]
fn a_project_under_home_is_shown_from_tilde() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    let mut cmd = env.command(&["tasks"]);
    cmd.env("HOME", "/home/dev");
    let run = env.finish(cmd);
    run.success().stdout_has("  ~/projects/tally  ");
    // JSON keeps the path as recorded.
    assert_eq!(env.task(CLAUDE_TASK)["cwd"], "/home/dev/projects/tally");
}

/// A Claude Code session `id` whose user lines are `asks`, in order, the
/// last one answered once (one model call).
pub fn session_of_asks(id: &str, asks: &[&str]) -> String {
    let mut out = String::new();
    let mut parent = Value::Null;
    for (i, ask) in asks.iter().enumerate() {
        let uuid = format!("a0000000-0000-4000-8000-{i:012}");
        let line = serde_json::json!({"parentUuid": parent, "isSidechain": false,
            "userType": "external", "cwd": "/home/dev/projects/tally", "sessionId": id,
            "version": "2.1.39", "type": "user", "uuid": uuid,
            "timestamp": format!("2026-03-01T10:00:{i:02}.000Z"),
            "message": {"role": "user", "content": ask}});
        out.push_str(&format!("{line}\n"));
        parent = Value::String(uuid);
    }
    let answer = serde_json::json!({"parentUuid": parent, "isSidechain": false,
        "userType": "external", "cwd": "/home/dev/projects/tally", "sessionId": id,
        "version": "2.1.39", "type": "assistant", "uuid": "b0000000-0000-4000-8000-000000000001",
        "timestamp": "2026-03-01T10:01:00.000Z",
        "message": {"model": "claude-opus-4-6", "id": "msg_b00000000000000000000001",
            "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 900, "output_tokens": 3}}});
    out.push_str(&format!("{answer}\n"));
    out
}

pub const INIT: &str = "<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>";
pub const NOTIFICATION: &str = "<task-notification>\n<task-id>b7636e2</task-id>\n<status>completed</status>\n<summary>Background command \"Run the tests\" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result: /home/dev/.claude/tasks/b7636e2.output";

#[test]
fn titles_skip_client_markup_and_take_the_first_real_ask() {
    let env = TestEnv::new();
    let sessions = [
        (
            "e1000000-0000-4000-8000-000000000000",
            vec![
                INIT,
                NOTIFICATION,
                "<system-reminder>x</system-reminder>Rename the\n config loader",
            ],
            "Rename the config loader",
        ),
        (
            "e2000000-0000-4000-8000-000000000000",
            vec![
                "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>create a TODO app</command-args>",
                "thanks",
            ],
            "/orchestrator create a TODO app",
        ),
        (
            "e3000000-0000-4000-8000-000000000000",
            vec![INIT, NOTIFICATION],
            "/init",
        ),
    ];
    for (id, asks, _) in &sessions {
        let rel = env.write(&format!("{id}.jsonl"), session_of_asks(id, asks));
        env.run(&["import", &rel]).success();
    }
    for (id, _, title) in &sessions {
        assert_eq!(env.task(id)["title"], *title, "{id}");
    }
    let run = env.run(&["tasks"]);
    run.success()
        .stdout_has("e3000000  /init ")
        .stdout_has("Rename the config loader");
    assert!(!run.stdout.contains('<'), "{}", run.stdout);
}

/// A Claude Code-shaped call of session `session` with `messages`, through
/// the proxy; the answer's text.
fn live_call(proxy: &crate::proxy::Proxy, session: &str, messages: &[Value]) -> String {
    let body = serde_json::json!({
        "model": "claude-stub",
        "system": [{"type": "text", "text": "You are a test agent."}],
        "metadata": {"user_id": format!("{{\"session_id\":\"{session}\"}}")},
        "max_tokens": 1000,
        "messages": messages,
        "stream": true,
    });
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into();
    let mut resp = agent
        .post(proxy.url("/v1/messages"))
        .header("content-type", "application/json")
        .header("x-api-key", "sk-ant-tasks-test")
        .send(body.to_string().as_bytes())
        .expect("the proxy answers");
    assert_eq!(resp.status().as_u16(), 200);
    resp.body_mut().read_to_string().unwrap()
}

/// What a newcomer hit: the tasks the proxy recorded sorted last, LAST `-`,
/// since the proxy stamped nothing; and the same Claude Code session was
/// listed twice, as `live-…` and, once imported, as its session file.
#[test]
fn a_live_task_shows_its_activity_and_is_listed_with_its_session() {
    use crate::proxy::{Model, Proxy};
    let env = TestEnv::new();
    env.import_fixture("codex/small-rollout.jsonl");
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let mut messages = vec![
        serde_json::json!({"role": "user", "content": "Fix the rounding bug. Never touch the tests."}),
    ];
    for next in ["Go on.", "And the docs."] {
        live_call(&proxy, CLAUDE_TASK, &messages);
        messages.push(serde_json::json!({"role": "assistant", "content": "All files read."}));
        messages.push(serde_json::json!({"role": "user", "content": next}));
    }
    proxy.wait_calls(2);
    drop(proxy);
    // Each call and answer is stamped; the task's first and last times are theirs.
    let conn = env.conn();
    let stamps: Vec<String> = conn
        .prepare("SELECT received_at FROM proxy_call UNION ALL SELECT answered_at FROM proxy_response ORDER BY 1")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stamps.len(), 4, "{stamps:?}");
    assert!(
        stamps.iter().all(|s| s.len() == 24 && s.ends_with('Z')),
        "{stamps:?}"
    );
    let tasks = env.tasks();
    let live = tasks
        .iter()
        .find(|t| t["id"].as_str().unwrap().starts_with("live-"))
        .expect("the live task")
        .clone();
    let id = live["id"].as_str().unwrap().to_string();
    assert_eq!(live["first_timestamp"], stamps[0].as_str());
    assert_eq!(live["last_timestamp"], stamps[3].as_str());
    assert_eq!(
        live["session_task"],
        Value::Null,
        "no session file imported yet"
    );
    // The table lists it by that activity, LAST its last minute.
    let codex_last = env.task(CODEX_TASK)["last_timestamp"]
        .as_str()
        .unwrap()
        .to_string();
    let live_first = stamps[3] > codex_last;
    let minute = stamps[3][..16].replacen('T', " ", 1);
    let run = env.run(&["tasks"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().skip(1).collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    let at = if live_first { 0 } else { 1 };
    assert!(lines[at].starts_with(&id[..13]), "{}", run.stdout);
    assert!(lines[at].contains(&minute), "{}", run.stdout);
    if live_first {
        // The most recently active task, as `latest`.
        assert_eq!(env.run(&["step", "--json"]).json()["task"], id.as_str());
    }
    // The session's own file, imported: one conversation, the live task
    // listed under the session as a subagent is.
    env.import_fixture("claude-code/small-session.jsonl");
    assert_eq!(env.task(&id)["session_task"], CLAUDE_TASK);
    assert_eq!(env.task(CLAUDE_TASK)["session_task"], Value::Null);
    let run = env.run(&["tasks"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().skip(1).collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    let session = lines
        .iter()
        .position(|l| l.starts_with(&CLAUDE_TASK[..8]))
        .expect("the session");
    let child = lines[session + 1];
    assert!(
        child.trim_start().starts_with(&format!("└ {}", &id[..13])),
        "the live task right under its session:\n{}",
        run.stdout
    );
    assert!(child.contains(&minute), "{child}");
    // The conversation is as recent as its live calls.
    assert_eq!(session == 0, live_first, "{}", run.stdout);
    let wide = env.run(&["tasks", "--wide"]);
    wide.success();
    let wide_lines: Vec<&str> = wide.stdout.lines().collect();
    let at = wide_lines
        .iter()
        .position(|l| l.starts_with(CLAUDE_TASK))
        .unwrap();
    assert!(
        wide_lines[at + 1].starts_with(&format!("└ {id}")),
        "{}",
        wide.stdout
    );
}
