//! `compactor mcp`: the MCP server over stdio. A client that is not ours,
//! the official TypeScript SDK's (pinned in `clients/`), lists the tools and
//! calls each against a fixture store; the protocol spoken line by line
//! without any client; and, with the hooks path and the real Claude Code,
//! after a `/compact` whose summary dropped a rule, the model's
//! `search_history` call finds it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::proxy::Model;
use crate::resume::{client, client_command, only_jsonl, run_bounded};
use crate::util::{TestEnv, crate_dir, under_ci};

const FIXTURE: &str = "fixtures/claude-shrink-floor.jsonl";
/// The fixture's task, its project directory and a rule of its first ask.
const TASK: &str = "5b1e2d3c-7f4a-4e2b-9c1d-2a3b4c5d6e7f";
const CWD: &str = "/home/dev/shop";
const RULE: &str = "Do not change the public API of app/orders/views.py.";

/// A tool call of the fixture that has a compacted form: its id.
fn compacted_id(env: &TestEnv) -> String {
    env.conn()
        .query_row(
            "SELECT tool_call_id FROM task_tool_compaction WHERE task_id = ?1 ORDER BY raw_tokens DESC LIMIT 1",
            [TASK],
            |r| r.get(0),
        )
        .unwrap()
}

/// Speak the protocol to `compactor mcp` line by line: each request in
/// turn, its answer read before the next is sent.
fn converse(env: &TestEnv, args: &[&str], cwd: &Path, requests: &[Value]) -> Vec<Value> {
    let mut child = env
        .std_command()
        .arg("--db")
        .arg(env.db())
        .arg("mcp")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for r in requests {
        writeln!(stdin, "{r}").unwrap();
        stdin.flush().unwrap();
        if r.get("id").is_none() {
            continue;
        }
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        answers.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "the server ends cleanly when its client hangs up"
    );
    answers
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

fn handshake() -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "line-by-line", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

/// An id the session's task records for two calls: `view_tool_call` says
/// it is ambiguous and lists them; `ID@N` returns the N-th, as `show
/// tool:ID@N` prints it.
#[test]
fn view_tool_call_lists_the_calls_an_id_names_and_takes_id_at_n() {
    let env = TestEnv::new();
    let f = env.write("reused.jsonl", crate::show::reused_ids("one"));
    env.run(&["import", "--task", "reused", &f]).success();
    let mut requests = handshake();
    requests.extend([
        call(1, "view_tool_call", json!({"id": "call_0"})),
        call(2, "view_tool_call", json!({"id": "call_0@2"})),
    ]);
    let a = converse(&env, &["--task", "reused"], env.root(), &requests);
    assert_eq!(a[1]["result"]["isError"], true, "{}", a[1]);
    let listing = text_of(&a[1]["result"]);
    for line in [
        "tool call id call_0 is ambiguous: task reused records 2 calls with it",
        "tool:call_0@1  read_file · model call 1",
        "tool:call_0@2  grep · model call 3",
        "view_tool_call takes \"ID@N\" too",
    ] {
        assert!(listing.contains(line), "{line:?} in {listing}");
    }
    assert_eq!(a[2]["result"]["isError"], false, "{}", a[2]);
    let shown = env.run(&["show", "--task", "reused", "tool:call_0@2"]);
    assert_eq!(text_of(&a[2]["result"]), shown.success().stdout);
}

#[test]
fn the_server_answers_each_tool_over_stdio() {
    let env = TestEnv::new();
    env.import_fixture(FIXTURE).success();
    let id = compacted_id(&env);
    let mut requests = handshake();
    requests.extend([
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        call(2, "view_tool_call", json!({"id": id})),
        call(
            3,
            "view_tool_call",
            json!({"id": &id[..12], "offset": 2, "limit": 3}),
        ),
        call(4, "search_history", json!({"query": "PUBLIC api"})),
        call(5, "task_context", json!({})),
        call(6, "view_tool_call", json!({"id": "toolu_nothing_like_it"})),
        call(7, "search_history", json!({"query": "   "})),
        call(8, "view_tool_call", json!({"id": format!("msg:{TASK}:1")})),
    ]);
    let a = converse(&env, &["--task", TASK], env.root(), &requests);
    assert_eq!(a[0]["result"]["serverInfo"]["name"], "compactor");
    let mut names: Vec<&str> = a[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["search_history", "task_context", "view_tool_call"]);
    // search_history's description and arguments state its order once (it
    // said "newest first" twice).
    let search = a[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search_history")
        .unwrap()
        .to_string();
    assert_eq!(search.matches("best hits first").count(), 1, "{search}");
    assert_eq!(search.matches("newest first").count(), 0, "{search}");
    // view_tool_call: the same bytes as `show tool:ID`.
    let shown = env.run(&["show", &format!("tool:{id}")]);
    shown.success();
    assert_eq!(text_of(&a[2]["result"]), shown.stdout);
    assert_eq!(a[2]["result"]["isError"], false);
    // A prefix, and a page: lines 2 to 4, then where the next starts.
    let page = text_of(&a[3]["result"]);
    let lines: Vec<&str> = shown.stdout.lines().collect();
    assert!(
        page.starts_with(&format!("{}\n{}\n{}\n", lines[2], lines[3], lines[4])),
        "{page}"
    );
    assert!(page.ends_with("next_offset: 5\n"), "{page}");
    // search_history: the rule first, with its call and the id that
    // returns the ask whole.
    let found = text_of(&a[4]["result"]);
    assert!(
        found.starts_with(&format!(
            "1 hit for \"PUBLIC api\" in this session (task {TASK}), best first; what is already in your context is marked and comes last:\n1. call 1 · user ask · view_tool_call(\"msg:{TASK}:1\") · in your context already\n"
        )),
        "{found}"
    );
    assert!(
        found.contains("the «public» «API» of app/orders/views.py"),
        "{found}"
    );
    // That id returns the ask whole.
    let ask = text_of(&a[8]["result"]);
    assert!(
        ask.starts_with(&format!(
            "task {TASK} · row 1 · call 1 · turn 1 · user ask\n"
        )),
        "{ask}"
    );
    assert!(ask.contains(RULE), "{ask}");
    // task_context: the rule verbatim under its heading.
    let tc = text_of(&a[5]["result"]);
    assert!(
        tc.starts_with("## Task Context\n\n## Constraints\n"),
        "{tc}"
    );
    assert!(tc.contains(RULE), "{tc}");
    // Errors are tool results the model reads, not protocol errors.
    assert_eq!(a[6]["result"]["isError"], true);
    assert!(text_of(&a[6]["result"]).contains("no tool call toolu_nothing_like_it"));
    assert_eq!(a[7]["result"]["isError"], true);
}

#[test]
fn without_a_task_the_server_answers_for_the_latest_session_of_its_directory() {
    let env = TestEnv::new();
    // Nothing recorded yet: the server starts all the same, and says so.
    let work = env.root().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut requests = handshake();
    requests.push(call(1, "task_context", json!({})));
    let a = converse(&env, &[], &work, &requests);
    assert_eq!(a[1]["result"]["isError"], true);
    assert!(text_of(&a[1]["result"]).contains("no store at"), "{}", a[1]);
    // A session recorded in that directory: the fixture, its cwd made ours.
    let text = std::fs::read_to_string(crate_dir().join("testdata").join(FIXTURE))
        .unwrap()
        .replace(CWD, &work.display().to_string());
    let file = env.write("session.jsonl", text);
    env.run(&["import", &file]).success();
    let a = converse(&env, &[], &work, &requests);
    assert!(text_of(&a[1]["result"]).contains(RULE), "{}", a[1]);
    // Another directory has none.
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let a = converse(&env, &[], &elsewhere, &requests);
    assert!(
        text_of(&a[1]["result"]).contains("no session recorded in")
            && text_of(&a[1]["result"]).contains("`compactor import FILE`")
            && text_of(&a[1]["result"]).contains("`compactor mcp --task TASK`"),
        "{}",
        a[1]
    );
}

/// A Claude Code session whose one tool call's output is `lines` lines of
/// log: the id of that call.
fn session_with_a_long_output(env: &TestEnv, lines: usize) -> &'static str {
    let id = "toolu_01LongOutputOfTheBuild";
    let output: String = (0..lines)
        .map(|i| {
            format!(
                "{i:06} | step {} of the build: compiled {} units\r\n",
                i % 13,
                i * 7
            )
        })
        .collect();
    let line = |n: u32, kind: &str, parent: Option<String>, message: Value| {
        json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": CWD,
               "sessionId": "5b1e2d3c-0000-4e2b-9c1d-00000000a11f", "version": "2.1.39",
               "type": kind, "uuid": format!("00000000-0000-4000-a000-{n:012}"),
               "timestamp": format!("2026-03-14T09:00:{n:02}.000Z"), "message": message})
        .to_string()
    };
    let uuid = |n: u32| Some(format!("00000000-0000-4000-a000-{n:012}"));
    let usage = json!({"input_tokens": 10, "output_tokens": 10});
    let text = [
        line(1, "user", None, json!({"role": "user", "content": "Show me the build log."})),
        line(2, "assistant", uuid(1), json!({"id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-opus-4-6", "usage": usage,
            "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "cat build.log"}}]})),
        line(3, "user", uuid(2), json!({"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": output}]})),
        line(4, "assistant", uuid(3), json!({"id": "msg_2", "type": "message", "role": "assistant",
            "model": "claude-opus-4-6", "usage": usage, "content": [{"type": "text", "text": "It built."}]})),
    ]
    .join("\n");
    let file = env.write("long.jsonl", text + "\n");
    env.run(&["import", &file]).success();
    id
}

/// A page's lines without the two that say where the next starts.
fn page_body(page: &str) -> &str {
    match page.rfind("\n[lines ") {
        Some(at) if page.ends_with('\n') && page.contains("\nnext_offset: ") => &page[..at + 1],
        _ => page,
    }
}

#[test]
fn the_pages_of_a_long_call_put_together_are_the_call() {
    let env = TestEnv::new();
    let id = session_with_a_long_output(&env, 40_000);
    let shown = env.run(&["show", &format!("tool:{id}")]);
    shown.success();
    let whole = shown.stdout.clone();
    let total = whole.split_inclusive('\n').count();
    assert!(total > 40_000, "{total}");
    // Every page in order (500 lines each: each is well under the
    // character cap), then pages out of order and past the end.
    let mut requests = handshake();
    let offsets: Vec<usize> = (0..total).step_by(500).collect();
    for (k, at) in offsets.iter().enumerate() {
        requests.push(call(
            k as u64 + 1,
            "view_tool_call",
            json!({"id": id, "offset": at}),
        ));
    }
    let n = offsets.len() as u64;
    requests.extend([
        call(
            n + 1,
            "view_tool_call",
            json!({"id": id, "offset": 20_017, "limit": 3}),
        ),
        call(
            n + 2,
            "view_tool_call",
            json!({"id": &id[..14], "offset": 3, "limit": 2}),
        ),
        call(n + 3, "view_tool_call", json!({"id": id, "offset": total})),
    ]);
    let a = converse(&env, &[], env.root(), &requests);
    let pages: Vec<&str> = (1..=offsets.len())
        .map(|k| text_of(&a[k]["result"]))
        .collect();
    for (k, p) in pages.iter().enumerate() {
        let next = offsets.get(k + 1);
        match next {
            Some(next) => assert!(p.ends_with(&format!("\nnext_offset: {next}\n")), "page {k}"),
            None => assert!(!p.contains("next_offset:"), "the last page says no more"),
        }
    }
    let joined: String = pages.iter().map(|p| page_body(p)).collect();
    assert!(
        joined == whole,
        "the pages put together are `show tool:ID`, byte for byte"
    );
    // A page is the slice of the whole text's lines, wherever it starts.
    let lines: Vec<&str> = whole.split_inclusive('\n').collect();
    let k = offsets.len() + 1;
    assert_eq!(
        page_body(text_of(&a[k]["result"])),
        lines[20_017..20_020].concat()
    );
    assert_eq!(
        page_body(text_of(&a[k + 1]["result"])),
        lines[3..5].concat()
    );
    assert_eq!(a[k + 2]["result"]["isError"], true);
    assert!(
        text_of(&a[k + 2]["result"]).contains(&format!("offset {total} is past the end")),
        "{}",
        a[k + 2]
    );
}

/// The server while a search runs: `COMPACTOR_FAULT=stall-in-search` holds
/// each search until it is stopped, so what the server does meanwhile is
/// seen without a clock.
#[test]
fn a_search_under_way_leaves_the_server_answering_and_stops_when_the_client_leaves() {
    let env = TestEnv::new();
    env.import_fixture(FIXTURE).success();
    let id = compacted_id(&env);
    let mut child = env
        .std_command()
        .arg("--db")
        .arg(env.db())
        .args(["mcp", "--task", TASK])
        .env("COMPACTOR_FAULT", "stall-in-search")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    let mut read = || -> Value {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    for r in handshake() {
        let answered = r.get("id").is_some();
        send(r);
        if answered {
            read();
        }
    }
    // A search that holds; a ping and a tool call are answered meanwhile.
    send(call(1, "search_history", json!({"query": "public api"})));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    let pong = read();
    assert_eq!(pong["id"], 2, "the ping is answered first: {pong}");
    send(call(3, "view_tool_call", json!({"id": id})));
    let viewed = read();
    assert_eq!(viewed["id"], 3, "{viewed}");
    assert_eq!(viewed["result"]["isError"], false);
    // The client gives the search up: it stops.
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    // Another search holds; the client leaves (stdin closed): it stops, and
    // the server ends.
    send(call(4, "search_history", json!({"query": "orders"})));
    drop(stdin);
    let mut rest = Vec::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 {
        rest.push(serde_json::from_str::<Value>(&line).unwrap());
        line.clear();
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    let last = rest
        .iter()
        .find(|v| v["id"] == 4)
        .unwrap_or_else(|| panic!("the held search is answered: {rest:?}"));
    assert_eq!(last["result"]["isError"], true, "{last}");
    assert_eq!(
        text_of(&last["result"]),
        "the search was stopped: the client left"
    );
}

/// A query past the bounds is answered at once with what the bound is, or
/// cut to its first words and said so; a page goes on at `next_offset`.
#[test]
fn search_history_is_bounded_ranked_and_paged() {
    let env = TestEnv::new();
    env.import_fixture(FIXTURE).success();
    let mut requests = handshake();
    let huge = "word ".repeat(10_000);
    let many: String = (0..40).map(|i| format!("orders{i} ")).collect();
    requests.extend([
        call(1, "search_history", json!({"query": huge})),
        call(2, "search_history", json!({"query": many})),
        call(
            3,
            "search_history",
            json!({"query": "orders views", "limit": 2}),
        ),
        call(
            4,
            "search_history",
            json!({"query": "orders views", "limit": 2, "offset": 2}),
        ),
        call(5, "search_history", json!({"query": "\"unclosed"})),
        call(
            6,
            "search_history",
            json!({"query": "orders", "scope": "project", "kind": "ask"}),
        ),
        call(7, "search_history", json!({"query": "zebra"})),
    ]);
    let a = converse(&env, &["--task", TASK], env.root(), &requests);
    assert_eq!(a[1]["result"]["isError"], true);
    assert!(
        text_of(&a[1]["result"]).contains("50000 characters long; at most 1000 are searched"),
        "{}",
        a[1]
    );
    let cut = text_of(&a[2]["result"]);
    assert!(
        cut.starts_with("(the query's first 24 distinct words were searched; 16 left out)\n"),
        "{cut}"
    );
    let first = text_of(&a[3]["result"]);
    assert!(
        first.starts_with("hits 1 to 2 for \"orders views\""),
        "{first}"
    );
    assert!(first.ends_with("next_offset: 2\n"), "{first}");
    let second = text_of(&a[4]["result"]);
    assert!(second.starts_with("hits 3 to 4 for"), "{second}");
    assert!(second.contains("\n3. call "), "{second}");
    assert_eq!(a[5]["result"]["isError"], true);
    assert!(
        text_of(&a[5]["result"]).contains("is never closed"),
        "{}",
        a[5]
    );
    let asks = text_of(&a[6]["result"]);
    assert!(asks.contains("in project /home/dev/shop"), "{asks}");
    assert!(
        asks.lines()
            .filter(|l| l.contains(" · "))
            .all(|l| l.contains("user ask")),
        "{asks}"
    );
    let none = text_of(&a[7]["result"]);
    assert!(
        none.starts_with("no hit for \"zebra\" in this session"),
        "{none}"
    );
    assert!(none.contains("scope \"project\""), "{none}");
}

/// `node clients/mcp-check.mjs PLAN compactor --db DB mcp ARGS`: the official
/// SDK's client; its JSON report.
fn official_client(env: &TestEnv, plan: Value, args: &[&str], cwd: &Path) -> Option<Value> {
    let sdk = crate_dir().join("clients/node_modules/@modelcontextprotocol/sdk");
    if !sdk.exists() {
        assert!(
            !under_ci(),
            "{} is missing and CI is set: cd clients && npm ci",
            sdk.display()
        );
        eprintln!("SKIPPED: the MCP SDK is not installed; cd clients && npm ci");
        return None;
    }
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_compactor")).unwrap();
    let out = Command::new("node")
        .arg(crate_dir().join("clients/mcp-check.mjs"))
        .arg(plan.to_string())
        .arg(&exe)
        .arg("--db")
        .arg(env.db())
        .arg("mcp")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the SDK client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned clients (the official MCP SDK): cd clients && npm ci"
)]
fn the_official_mcp_sdk_client_lists_the_tools_and_calls_each() {
    let env = TestEnv::new();
    env.import_fixture(FIXTURE).success();
    let id = compacted_id(&env);
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    // No --task: the session is found from the root the client names.
    let plan = json!({"roots": [CWD], "calls": [
        {"name": "view_tool_call", "arguments": {"id": id}},
        {"name": "view_tool_call", "arguments": {"id": id, "offset": 1, "limit": 2}},
        {"name": "search_history", "arguments": {"query": "public api", "limit": 1}},
        {"name": "task_context", "arguments": {}},
    ]});
    let Some(r) = official_client(&env, plan, &[], &elsewhere) else {
        return;
    };
    assert_eq!(r["server"]["name"], "compactor");
    assert!(
        r["instructions"]
            .as_str()
            .unwrap()
            .contains("view_tool_call")
    );
    let tools = r["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3);
    for t in tools {
        assert!(
            t["description"].as_str().unwrap().len() > 200,
            "{} is described for a model",
            t["name"]
        );
        assert_eq!(t["inputSchema"]["type"], "object");
    }
    let schema = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["inputSchema"].clone())
            .unwrap()
    };
    assert_eq!(schema("view_tool_call")["required"], json!(["id"]));
    assert_eq!(schema("search_history")["required"], json!(["query"]));
    let results = r["results"].as_array().unwrap();
    let shown = env.run(&["show", &format!("tool:{id}")]);
    assert_eq!(text_of(&results[0]["result"]), shown.stdout);
    let page = text_of(&results[1]["result"]);
    let second: Vec<&str> = shown.stdout.lines().skip(1).take(2).collect();
    assert!(
        page.starts_with(&format!("{}\n{}\n", second[0], second[1])),
        "{page}"
    );
    assert!(page.ends_with("next_offset: 3\n"), "{page}");
    let found = text_of(&results[2]["result"]);
    assert!(
        found.starts_with("1 hit for \"public api\" in this session"),
        "{found}"
    );
    assert!(found.contains("«public» «API»"), "{found}");
    let tc = text_of(&results[3]["result"]);
    assert!(tc.contains("## Constraints") && tc.contains(RULE), "{tc}");
    for res in results {
        assert_eq!(res["result"]["isError"], false, "{res}");
    }
}

// ------------------------------------------------------------ the hooks path

/// A request that holds `[[search WORDS]]` (its latest ask) is answered
/// with one call of compactor's `search_history` on WORDS, until its result
/// is in (the scripted model of `proxy.rs` asks this module).
pub fn search_in_messages(body: &Value, text: &str, n: usize) -> Option<Vec<Value>> {
    const ID: &str = "toolu_search_1";
    if text.contains(ID) {
        return None;
    }
    let words = text
        .split("[[search ")
        .nth(1)?
        .split("]]")
        .next()?
        .to_string();
    crate::run::claude_mcp_call(body, text, "search_history", ID, json!({"query": words}), n)
}

const FIRST_PROMPT: &str =
    "Fix the parser in src/parse.rs. Never migrate the tenant_registry table: billing shares it.";
const HOOK_RULE: &str = "Never migrate the tenant_registry table: billing shares it.";

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn after_claude_codes_own_compaction_search_history_finds_the_rule_its_summary_dropped() {
    let Some(claude) = client("claude", "search_history_after_compaction") else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    std::fs::create_dir_all(&project).unwrap();
    // The hooks, and the server in Claude Code's user configuration.
    let mut cmd = env.bare_command();
    cmd.args(["hooks", "install", "claude-code"]);
    env.finish(cmd)
        .success()
        .stdout_has("registered compactor's MCP server for Claude Code in [TMP]/home/.claude.json");
    let model = Model::start();
    let run = |args: &[&str]| {
        let mut cmd = client_command(&claude, &env.home(), &project);
        cmd.env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("ANTHROPIC_API_KEY", "sk-ant-loopback")
        .env("XDG_DATA_HOME", env.data_home())
        .args(args);
        let (status, out, err) = run_bounded(cmd);
        assert_eq!(status, 0, "claude {args:?} failed:\n{out}\n{err}");
        out
    };
    run(&["-p", FIRST_PROMPT]);
    let file = only_jsonl(&env.home().join(".claude").join("projects"));
    let id = file.file_stem().unwrap().to_string_lossy().to_string();
    // The scripted model's summary ("All files read.") drops the rule.
    run(&["--resume", &id, "-p", "/compact"]);
    let next = "What did I say about the tenant registry? [[search tenant registry]]";
    run(&[
        "--resume",
        &id,
        "-p",
        next,
        "--allowedTools",
        "mcp__compactor",
    ]);
    let calls = model.model_calls();
    let summary_request = calls
        .iter()
        .map(|c| c.json())
        .find(|b| {
            b.to_string()
                .contains("Your task is to create a detailed summary")
        })
        .expect("Claude Code compacted");
    assert!(summary_request.to_string().contains(HOOK_RULE));
    // The request that carries the search's result, as Claude Code sent it back.
    let answered = calls
        .iter()
        .map(|c| c.json())
        .find(|b| b.to_string().contains("toolu_search_1") && b.to_string().contains("tool_result"))
        .expect("Claude Code sent the search's result back");
    let result = answered["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == "toolu_search_1")
        .unwrap();
    let text = match &result["content"] {
        Value::String(s) => s.clone(),
        blocks => blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    // The rule, stated as `tenant_registry`, is the first hit for the words
    // `tenant registry`, and is not in the context Claude Code kept.
    let first = text
        .lines()
        .skip_while(|l| !l.starts_with("1. "))
        .take(2)
        .collect::<Vec<_>>();
    assert!(
        first.len() == 2
            && first[0].starts_with("1. call 1 · user ask · view_tool_call(\"msg:")
            && !first[0].contains("in your context")
            && first[1].contains("Never migrate the «tenant»_«registry» table"),
        "search_history found the rule the summary dropped, first: {text}"
    );
    // The summary Claude Code kept did not hold it.
    let kept_summary = answered.to_string();
    assert!(
        kept_summary.contains("All files read."),
        "the lossy summary replaced the history"
    );
}

/// Bytes no JSON-RPC message is made of, sent over the server's real stdin:
/// each line is answered (a JSON-RPC parse error, `-32700`, `id` null,
/// saying what was wrong), the line over 16 MiB without being held, and
/// the server goes on answering.
#[test]
fn every_line_the_server_drops_is_answered_with_a_parse_error() {
    let env = TestEnv::new();
    env.import_fixture(FIXTURE).success();
    let mut child = env
        .std_command()
        .arg("--db")
        .arg(env.db())
        .args(["mcp", "--task", TASK])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let hs = handshake();
    writeln!(stdin, "{}", hs[0]).unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"compactor\""), "{line}");
    writeln!(stdin, "{}", hs[1]).unwrap();
    let mut answer = |bytes: &[u8]| -> Value {
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let parse_error = |v: &Value, says: &str| {
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert!(v["id"].is_null(), "{v}");
        assert_eq!(v["error"]["code"], -32700, "{v}");
        let m = v["error"]["message"].as_str().unwrap();
        assert!(m.contains(says), "{says:?} in {m}");
    };
    parse_error(&answer(b"{not json\n"), "the line is not JSON");
    parse_error(
        &answer(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"p\xffng\"}\n"),
        "not UTF-8",
    );
    // Over 16 MiB (a real request, padded).
    let mut big = br#"{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', 16 << 20));
    big.extend_from_slice(b"\"}}\n");
    parse_error(
        &answer(&big),
        "the line is over 16 MiB (16777277 bytes) and was dropped",
    );
    // JSON that is no message: rmcp's own Invalid Request.
    let v = answer(b"[1,2]\n");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    // And the server still answers.
    let v = answer(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n");
    assert_eq!(v["id"], 5, "{v}");
    assert!(v["result"].is_object(), "{v}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
