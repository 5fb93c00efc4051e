//! `compactor run claude|codex`: the real Claude Code and Codex (pinned in
//! `clients/`, offline, a hermetic HOME, as `proxy.rs` drives them) started
//! by `compactor run` against the scripted loopback model of `proxy.rs`. A
//! long tool-heavy turn compacts; the model then calls compactor's
//! `view_tool_call` with the id of an elided pointer, and the tool result
//! the client sends back holds the elided lines verbatim. And, with a stand-in
//! client, what `run` itself promises: the client's exit status, signals
//! passed on, the proxy stopped, nothing left installed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::proxy::{
    KEY, Model, assert_replay_equals_forwarded, assert_verified, contains, proxy_call_reports,
    store_bytes, write_notes,
};
use crate::resume::{client, client_command, client_path, run_bounded_for};
use crate::util::TestEnv;

/// A first ask holding this asks the scripted model, once its reads are
/// done, for one call of compactor's `view_tool_call` on the first elided
/// pointer the request carries.
const RECALL: &str = "[[recall]]";
/// The id of that call (Messages) and its call id (Responses).
const RECALL_ID: &str = "toolu_recall_1";
const RECALL_CALL: &str = "call_recall_1";
const ASK: &str = "Read every file in notes/ one by one, then look again at the first one. [[reads 12]] [[recall]] Never edit files outside notes/.";
const BUDGET: &[&str] = &["--window", "40000", "--output-reserved", "4000"];

/// The id in the first `view_tool_call("ID")` pointer of a request body
/// (its JSON text, where a string's quotes are escaped) that names a call
/// the body holds (the tools' descriptions show a pointer as an example).
fn first_pointer(text: &str) -> Option<String> {
    text.split("view_tool_call(\\\"")
        .skip(1)
        .filter_map(|rest| rest.split("\\\")").next())
        .find(|id| text.contains(&format!("\"{id}\"")))
        .map(str::to_string)
}

/// The request's tool whose name ends with `suffix` (a client prefixes an
/// MCP tool's name with its server's).
fn tool_named(tools: &Value, suffix: &str) -> Option<String> {
    tools
        .as_array()?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .find(|n| n.ends_with(suffix))
        .map(str::to_string)
}

/// The id of the scripted model's ToolSearch call.
const TOOL_SEARCH_ID: &str = "toolu_toolsearch_1";

/// One Messages answer calling compactor's tool `suffix` with `input` as
/// `id`. Claude Code defers MCP tools: it lists their names and a
/// `ToolSearch` tool that loads them, so the model asks ToolSearch for the
/// tool first (as a model does), then calls it.
pub fn claude_mcp_call(
    body: &Value,
    text: &str,
    suffix: &str,
    id: &str,
    input: Value,
    n: usize,
) -> Option<Vec<Value>> {
    let (call_id, name, input) = match tool_named(&body["tools"], suffix) {
        Some(name) => (id.to_string(), name, input),
        None => {
            let name = format!("mcp__compactor__{suffix}");
            if !text.contains(&name) {
                return None;
            }
            if text.contains(TOOL_SEARCH_ID) {
                // Loaded by the search: callable by its name.
                (id.to_string(), name, input)
            } else {
                let search = tool_named(&body["tools"], "ToolSearch")?;
                (
                    TOOL_SEARCH_ID.to_string(),
                    search,
                    json!({"query": format!("select:{name}")}),
                )
            }
        }
    };
    Some(vec![
        json!({"type": "message_start", "message": {"id": format!("msg_{call_id}_{n}"), "type": "message", "role": "assistant", "model": "claude-stub", "content": [], "usage": {"input_tokens": text.len() / 4, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ])
}

/// The scripted model's Messages answer for `[[recall]]`: the call, until
/// its result is in the request.
pub fn recall_in_messages(
    first_user: &str,
    body: &Value,
    text: &str,
    n: usize,
) -> Option<Vec<Value>> {
    if !first_user.contains(RECALL) || text.contains(RECALL_ID) {
        return None;
    }
    let id = first_pointer(text)?;
    claude_mcp_call(
        body,
        text,
        "view_tool_call",
        RECALL_ID,
        json!({"id": id}),
        n,
    )
}

/// The same for Responses.
pub fn recall_in_responses(
    first_user: &str,
    body: &Value,
    text: &str,
    n: usize,
) -> Option<Vec<Value>> {
    if !first_user.contains(RECALL) || text.contains(RECALL_CALL) {
        return None;
    }
    let id = first_pointer(text)?;
    // Codex offers an MCP server's tools as a namespace of functions.
    let (namespace, name) = body["tools"].as_array()?.iter().find_map(|t| {
        let f = tool_named(&t["tools"], "view_tool_call")?;
        Some((t["name"].as_str()?.to_string(), f))
    })?;
    let item = json!({"type": "function_call", "id": "fc_recall", "status": "completed", "name": name, "namespace": namespace, "arguments": json!({"id": id}).to_string(), "call_id": RECALL_CALL});
    let rid = format!("resp_recall_{n}");
    Some(vec![
        json!({"type": "response.created", "response": {"id": rid}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": rid, "usage": {"input_tokens": text.len() / 4, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": text.len() / 4 + 20}}}),
    ])
}

/// `compactor --db DB run ARGS` as a client would be started: a hermetic
/// environment whose PATH finds the pinned clients.
fn run_command(env: &TestEnv, bin_dir: &Path, cwd: &Path, args: &[&str]) -> std::process::Command {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_compactor"));
    let mut cmd = client_command(&exe, &env.home(), cwd);
    cmd.env("PATH", format!("{}:{}", bin_dir.display(), client_path()))
        .env("XDG_DATA_HOME", env.data_home())
        .arg("--db")
        .arg(env.db())
        .arg("run")
        .args(args);
    cmd
}

/// Every file under `dir`, with its bytes (what a run may not leave changed).
fn snapshot_tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(b) = std::fs::read(&p) {
                out.push((p, b));
            }
        }
    }
    out.sort();
    out
}

/// A tool result's content as text: a string, or its text blocks joined.
fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `show --task T ARGS… tool:ID` of the task that recorded the call `id`
/// (a run records a task per conversation): the run, and the task.
fn show_tool(env: &TestEnv, id: &str, json: bool) -> (crate::util::Run, String) {
    for t in env.tasks() {
        let task = t["id"].as_str().unwrap().to_string();
        let address = format!("tool:{id}");
        let mut args = vec!["show", "--task", task.as_str()];
        if json {
            args.push("--json");
        }
        args.push(&address);
        let run = env.run(&args);
        if run.status == 0 {
            return (run, task);
        }
    }
    panic!("no task recorded the call {id}: {:#?}", env.tasks());
}

/// The lines of `id`'s raw output that its compacted form left out, read
/// from the store (`show --json tool:ID`).
fn elided_lines(env: &TestEnv, id: &str) -> Vec<String> {
    let v = show_tool(env, id, true).0.json();
    let raw = content_text(&v["result"]["content"]);
    let form = content_text(&v["compacted_form"]["form"]["content"]);
    assert!(!form.is_empty(), "{id} has a compacted form: {v}");
    let lines: Vec<String> = raw
        .lines()
        .filter(|l| l.trim().len() > 10 && !form.contains(*l))
        .map(str::to_string)
        .collect();
    assert!(
        lines.len() >= 10,
        "the pointer's call {id} has elided lines: {} found",
        lines.len()
    );
    lines
}

/// The text of the result the client recorded for the recall call.
fn recalled_text(env: &TestEnv, id: &str) -> String {
    let v = show_tool(env, id, true).0.json();
    let text = content_text(&v["result"]["content"]);
    assert!(!text.is_empty(), "no result recorded for {id}: {v}");
    text
}

/// What both real clients' runs must show: the turn compacted, the model's
/// recall carried an elided pointer's id, and the result the client sent
/// back holds every elided line verbatim; nothing installed.
fn check_recall(env: &TestEnv, model: &Model) {
    let calls = model.model_calls();
    assert!(
        calls.len() >= 13,
        "a long turn: {} model calls",
        calls.len()
    );
    // The call that asked for the recall, and the id it asked for.
    assert!(
        calls.iter().any(|c| {
            let t = String::from_utf8_lossy(&c.body);
            !t.contains(RECALL_ID) && !t.contains(RECALL_CALL) && first_pointer(&t).is_some()
        }),
        "a request carried an elided pointer: the turn compacted"
    );
    // The request after the recall carries the result the client sent back.
    let recall_id = if calls
        .iter()
        .any(|c| String::from_utf8_lossy(&c.body).contains(RECALL_ID))
    {
        RECALL_ID
    } else {
        RECALL_CALL
    };
    // The id the model asked for: the recall's input, as the client recorded it.
    let call = show_tool(env, recall_id, true).0.json();
    let input: Value = match &call["input"] {
        Value::String(s) => serde_json::from_str(s).unwrap(),
        v => v.clone(),
    };
    let id = input["id"]
        .as_str()
        .expect("the recall names an id")
        .to_string();
    let got = recalled_text(env, recall_id);
    let elided = elided_lines(env, &id);
    for line in &elided {
        assert!(
            got.contains(line.as_str()),
            "the recalled result holds the elided line {line:?}:\n{}",
            &got[..got.len().min(2000)]
        );
    }
    // The same bytes as `show tool:ID` prints.
    let shown = show_tool(env, &id, false).0;
    assert!(
        got.contains(shown.stdout.trim_end()) || got.trim_end() == shown.stdout.trim_end(),
        "view_tool_call gives show's text:\n{got}\n---\n{}",
        shown.stdout
    );
    eprintln!(
        "recalled {id}: {} elided lines back, verbatim",
        elided.len()
    );
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn claude_code_through_compactor_run_takes_back_the_lines_compaction_elided() {
    let Some(bin) = client("claude", "claude_code_through_compactor_run") else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    write_notes(&project, 12, 160);
    let model = Model::start();
    std::fs::create_dir_all(env.home()).unwrap();
    let upstream = format!("http://127.0.0.1:{}", model.port);
    let mut args = vec!["claude", "--upstream", upstream.as_str()];
    args.extend(BUDGET);
    args.extend(["--", "-p", ASK, "--allowedTools", "Read"]);
    let mut cmd = run_command(&env, bin.parent().unwrap(), &project, &args);
    cmd.env("ANTHROPIC_API_KEY", KEY);
    let (status, out, err) = run_bounded_for(cmd, Duration::from_secs(600));
    assert_eq!(status, 0, "compactor run claude failed:\n{out}\n{err}");
    assert!(out.contains("All files read."), "{out}\n{err}");
    // Claude Code writes its own state under HOME (sessions, .claude.json,
    // its MCP logs): no compactor server entry is among it.
    for (p, b) in &snapshot_tree(&env.home()) {
        let text = String::from_utf8_lossy(b);
        assert!(
            !text.contains("mcp_servers.compactor") && !text.contains("\"compactor\": {"),
            "{} holds compactor's server after the run",
            p.display()
        );
    }
    check_recall(&env, &model);
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn codex_through_compactor_run_takes_back_the_lines_compaction_elided() {
    let Some(bin) = client("codex", "codex_through_compactor_run") else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    write_notes(&project, 12, 160);
    let model = Model::start();
    // The user's own config: a model, no provider of compactor's.
    let codex_home = env.home().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        "model = \"gpt-5.1-codex\"\n",
    )
    .unwrap();
    let upstream = format!("http://127.0.0.1:{}", model.port);
    let mut args = vec!["codex", "--upstream", upstream.as_str()];
    args.extend(BUDGET);
    args.extend(["--", "exec", "--skip-git-repo-check", ASK]);
    let mut cmd = run_command(&env, bin.parent().unwrap(), &project, &args);
    cmd.env("OPENAI_API_KEY", KEY);
    let (status, out, err) = run_bounded_for(cmd, Duration::from_secs(600));
    assert_eq!(status, 0, "compactor run codex failed:\n{out}\n{err}");
    assert!(out.contains("All files read."), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(codex_home.join("config.toml")).unwrap(),
        "model = \"gpt-5.1-codex\"\n",
        "the user's config is never edited"
    );
    check_recall(&env, &model);
}

/// A stand-in client: a script that records what it was given, answers
/// SIGTERM by exiting 143 after noting it, and otherwise exits 7.
fn fake_client(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let script = "#!/bin/sh\necho $$ > \"$PWD/client.pid\"\nprintf '%s\\n' \"$@\" > \"$PWD/args.txt\"\nenv > \"$PWD/env.txt\"\ntrap 'echo term > \"$PWD/signal.txt\"; exit 143' TERM\ncase \" $* \" in *\" wait \"*) touch \"$PWD/ready\"; while :; do sleep 0.05; done;; esac\nexit 7\n";
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The port of the proxy a stand-in client was pointed at.
fn proxy_port_seen(cwd: &Path, client: &str) -> u16 {
    let (file, key) = match client {
        "claude" => ("env.txt", "ANTHROPIC_BASE_URL=http://127.0.0.1:"),
        _ => ("args.txt", "base_url = \"http://127.0.0.1:"),
    };
    let text = std::fs::read_to_string(cwd.join(file)).unwrap();
    let rest = text
        .split(key)
        .nth(1)
        .expect("the client was pointed at the proxy");
    rest.chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

fn listening(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

#[test]
fn run_passes_the_clients_status_on_and_stops_its_proxy() {
    for client in ["claude", "codex"] {
        let env = TestEnv::new();
        let bin = env.root().join("bin");
        fake_client(&bin, client);
        let cwd = env.root().join("work");
        std::fs::create_dir_all(&cwd).unwrap();
        let before = snapshot_tree(&env.home());
        let out = run_command(
            &env,
            &bin,
            &cwd,
            &[client, "--window", "50000", "--", "hello", "--flag"],
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(7), "{client}: {out:?}");
        let args = std::fs::read_to_string(cwd.join("args.txt")).unwrap();
        let env_text = std::fs::read_to_string(cwd.join("env.txt")).unwrap();
        match client {
            "claude" => {
                assert!(args.starts_with("hello\n--flag\n--mcp-config\n"), "{args}");
                assert!(
                    args.contains("\"mcp\"]") && args.contains("--allowedTools\nmcp__compactor\n"),
                    "{args}"
                );
                assert!(env_text.contains("ANTHROPIC_BASE_URL=http://127.0.0.1:"));
            }
            _ => {
                assert!(
                    args.starts_with(
                        "-c\nmodel_provider=\"compactor\"\n-c\nmodel_providers.compactor={"
                    ),
                    "{args}"
                );
                assert!(
                    args.contains("mcp_servers.compactor.args=[\"--db\", "),
                    "{args}"
                );
                assert!(args.ends_with("hello\n--flag\n"), "{args}");
            }
        }
        let port = proxy_port_seen(&cwd, client);
        assert!(
            !listening(port),
            "{client}: the proxy stopped with the client"
        );
        assert_eq!(
            snapshot_tree(&env.home()),
            before,
            "{client}: nothing installed"
        );
        let log = std::fs::read_to_string(env.db().with_file_name("run.log")).unwrap();
        assert!(log.contains("stopped"), "{client}: the proxy's log: {log}");
    }
}

#[test]
fn run_passes_sigterm_on_to_the_client_and_stops_its_proxy() {
    let env = TestEnv::new();
    let bin = env.root().join("bin");
    fake_client(&bin, "claude");
    let cwd = env.root().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let mut child = run_command(&env, &bin, &cwd, &["claude", "--", "wait"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The client says it is up by a file (no timed wait decides the outcome).
    let start = Instant::now();
    while !cwd.join("ready").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the client never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let port = proxy_port_seen(&cwd, "claude");
    assert!(listening(port), "the proxy runs while the client does");
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("compactor run did not end after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(143), "the client's status");
    assert_eq!(
        std::fs::read_to_string(cwd.join("signal.txt"))
            .unwrap()
            .trim(),
        "term",
        "the client got the SIGTERM"
    );
    assert!(!listening(port), "the proxy stopped");
}

#[test]
fn run_refuses_what_is_its_own_to_choose_and_a_missing_client() {
    let env = TestEnv::new();
    env.run(&["run", "claude", "--listen", "0.0.0.0:9"])
        .failure(2)
        .stderr_has("--listen is run's to choose");
    env.run(&["run", "claude", "--windw", "9"])
        .failure(2)
        .stderr_has("the proxy's flags do not parse");
    let cwd = env.root().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let empty = env.root().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut cmd = run_command(&env, &empty, &cwd, &["codex"]);
    cmd.env("PATH", &empty);
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`codex` is not on PATH"), "{err}");
}

/// The processes whose parent is `pid`: (pid, command line).
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // The fields after the command name (which may hold spaces) in parens.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let ppid: Option<u32> = rest.split_whitespace().nth(1).and_then(|f| f.parse().ok());
        if ppid == Some(pid) {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            out.push((p, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    out
}

/// The proxy `compactor run` (process `run`) started.
fn proxy_of(run: u32) -> u32 {
    let start = Instant::now();
    loop {
        if let Some((p, _)) = children_of(run)
            .into_iter()
            .find(|(_, c)| c.contains(" proxy --listen 127.0.0.1:0"))
        {
            return p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "run started no proxy"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rfind(')')
            .is_some_and(|i| stat[i + 2..].starts_with('Z')),
    }
}

/// Wait (bounded) until process `pid` has ended.
#[track_caller]
fn wait_ended(pid: u32, what: &str) {
    let start = Instant::now();
    while !ended(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} (pid {pid}) did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait (bounded) until the client a run started says it is up.
fn wait_ready(cwd: &Path) {
    let start = Instant::now();
    while !cwd.join("ready").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the client never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `compactor run` killed outright (SIGKILL: no handler runs) while its
/// client works: the proxy it started stops all the same (the pipe it
/// reads from run closes; on Linux the parent-death signal too), instead of
/// serving on, orphaned.
#[test]
fn a_killed_run_takes_its_proxy_with_it() {
    let env = TestEnv::new();
    let bin = env.root().join("bin");
    fake_client(&bin, "claude");
    let cwd = env.root().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let mut child = run_command(&env, &bin, &cwd, &["claude", "--", "wait"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The chosen point: the proxy announced itself, the client is up.
    wait_ready(&cwd);
    let proxy = proxy_of(child.id());
    let port = proxy_port_seen(&cwd, "claude");
    assert!(listening(port), "the proxy serves while run lives");
    child.kill().unwrap();
    child.wait().unwrap();
    wait_ended(proxy, "the proxy of a killed run");
    assert!(!listening(port), "no proxy serves on, orphaned");
    // The stand-in client is run's to stop; killed, run could not.
    let client: i32 = std::fs::read_to_string(cwd.join("client.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the stand-in client this test started.
    unsafe { libc::kill(client, libc::SIGKILL) };
}

/// A SIGTERM that reaches `run` before its client started (held there by
/// `COMPACTOR_FAULT=stall-in-run`, once the proxy is up): run stops its
/// proxy and ends with 128 + 15; the client is never started.
#[test]
fn a_signal_before_the_client_starts_stops_the_proxy_and_ends_run() {
    let env = TestEnv::new();
    let bin = env.root().join("bin");
    fake_client(&bin, "claude");
    let cwd = env.root().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let mut child = run_command(&env, &bin, &cwd, &["claude", "--", "wait"])
        .env("COMPACTOR_FAULT", "stall-in-run")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut err, &mut line).unwrap();
        assert!(n > 0, "run ended before its proxy was up: {seen}");
        seen.push_str(&line);
        if line.contains("through the proxy at") {
            break;
        }
    }
    let proxy = proxy_of(child.id());
    // SAFETY: kill(2) on the run process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "run did not end after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(143), "{seen}");
    wait_ended(proxy, "the proxy");
    assert!(
        !cwd.join("args.txt").exists(),
        "the client was never started"
    );
}

/// An `--upstream` nothing listens at: run says so before it starts the
/// client (a connect, no model call) and exits 2; no proxy is left.
#[test]
fn an_unreachable_upstream_is_said_before_the_client_starts() {
    let env = TestEnv::new();
    let bin = env.root().join("bin");
    fake_client(&bin, "claude");
    let cwd = env.root().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let upstream = format!("http://127.0.0.1:{closed}");
    let child = run_command(
        &env,
        &bin,
        &cwd,
        &["claude", "--upstream", &upstream, "--", "wait"],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "compactor run cannot reach the upstream {upstream}: "
        )) && err.contains("Claude Code was not started"),
        "{err}"
    );
    assert!(err.contains("hint: check --upstream"), "{err}");
    assert!(!cwd.join("args.txt").exists(), "the client never started");
    assert!(children_of(pid).is_empty(), "no proxy left");
}

/// An upstream that takes connections and drops them: every request
/// through the proxy fails the same way, and run prints that error on the
/// terminal once (not only in run.log), however many requests meet it.
#[test]
fn the_proxys_upstream_errors_reach_the_terminal_once_each() {
    let env = TestEnv::new();
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A client that makes two requests through the proxy (bash's /dev/tcp).
    let script = "#!/bin/bash\nport=${ANTHROPIC_BASE_URL##*:}\nfor i in 1 2 3; do\n  exec 3<>/dev/tcp/127.0.0.1/$port\n  printf 'GET /v1/models HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3\n  cat <&3 > \"$PWD/answer$i.txt\"\n  exec 3<&-\ndone\nexit 0\n";
    let path = bin.join("claude");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cwd = env.root().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // It reads each request's head, then closes without an answer.
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let mut r = std::io::BufReader::new(conn);
            let mut line = String::new();
            while std::io::BufRead::read_line(&mut r, &mut line).unwrap_or(0) > 0 && line != "\r\n"
            {
                line.clear();
            }
        }
    });
    let upstream = format!("http://127.0.0.1:{port}");
    let out = run_command(&env, &bin, &cwd, &["claude", "--upstream", &upstream])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for i in 1..=3 {
        let answer = std::fs::read_to_string(cwd.join(format!("answer{i}.txt"))).unwrap();
        assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    }
    // Each distinct error once (how hyper words a dropped connection may
    // vary from one request to the next).
    let shown = format!("compactor: compactor proxy cannot reach the upstream {upstream}: ");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with(&shown)).collect();
    assert!(!lines.is_empty(), "shown on the terminal: {err}");
    let distinct: std::collections::BTreeSet<&str> = lines.iter().copied().collect();
    assert_eq!(distinct.len(), lines.len(), "each once: {err}");
    assert!(lines.len() < 3, "not once per request: {err}");
    let log = std::fs::read_to_string(env.db().with_file_name("run.log")).unwrap();
    assert_eq!(
        log.matches("cannot reach the upstream").count(),
        3,
        "every one logged: {log}"
    );
}

/// `scripts/stand-in-model.py`, running on a free loopback port.
pub struct StandIn {
    child: std::process::Child,
    pub port: u16,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The stand-in model the guide offers for a first live run, started; or
/// `None` (said plainly) when python3 is absent; under CI that fails.
pub fn stand_in(test: &str) -> Option<StandIn> {
    let script = crate::util::crate_dir().join("scripts/stand-in-model.py");
    let spawned = std::process::Command::new("python3")
        .arg(&script)
        .args(["--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) if crate::util::under_ci() => {
            panic!("{test}: python3 is missing and CI is set: {e}")
        }
        Err(_) => {
            eprintln!("SKIPPED {test}: python3 is not installed");
            return None;
        }
    };
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    let port = first
        .trim()
        .strip_prefix("stand-in model listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("the stand-in says where it listens: {first:?}"))
        .parse()
        .unwrap();
    Some(StandIn { child, port })
}

/// What the guide offers to try a live run without a model: the real
/// Claude Code and Codex through `compactor run` against the stand-in
/// model, each answered, recorded as a live task, and every forwarded view
/// derived again offline.
#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
#[cfg_attr(not(compactor_python), ignore = "needs python3")]
fn claude_code_and_codex_run_live_against_the_stand_in_model() {
    let Some(model) = stand_in("claude_code_and_codex_run_live_against_the_stand_in_model") else {
        return;
    };
    let upstream = format!("http://127.0.0.1:{}", model.port);
    for (name, key, args) in [
        ("claude", "ANTHROPIC_API_KEY", vec!["-p", "Say hello."]),
        (
            "codex",
            "OPENAI_API_KEY",
            vec!["exec", "--skip-git-repo-check", "Say hello."],
        ),
    ] {
        let Some(bin) = client(
            name,
            "claude_code_and_codex_run_live_against_the_stand_in_model",
        ) else {
            return;
        };
        let env = TestEnv::new();
        let project = env.root().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let mut run_args = vec![name, "--upstream", upstream.as_str(), "--"];
        run_args.extend(&args);
        let mut cmd = run_command(&env, bin.parent().unwrap(), &project, &run_args);
        cmd.env(key, "stand-in");
        let (status, out, err) = run_bounded_for(cmd, Duration::from_secs(300));
        assert_eq!(status, 0, "{name}:\n{out}\n{err}");
        assert!(
            out.contains("compactor's stand-in model: no model ran"),
            "{name}:\n{out}\n{err}"
        );
        let live: Vec<String> = env
            .tasks()
            .iter()
            .filter_map(|t| t["id"].as_str().map(str::to_string))
            .filter(|t| t.starts_with("live-"))
            .collect();
        assert!(!live.is_empty(), "{name}: a live task: {:#?}", env.tasks());
        for task in live {
            let v = env
                .run(&["replay", "--task", &task, "--verify-forwarded", "--json"])
                .json();
            assert_eq!(v["ok"], true, "{name} {task}: {v}");
        }
    }
}

/// Every `session-*.jsonl` Gemini CLI wrote under `home`.
fn gemini_sessions(home: &Path) -> Vec<PathBuf> {
    snapshot_tree(&home.join(".gemini").join("tmp"))
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| {
            p.parent().and_then(Path::file_name) == Some(std::ffi::OsStr::new("chats"))
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("session-"))
        })
        .collect()
}

/// The functionCalls of a Gemini request body, in order: (name, args).
fn gemini_calls(body: &Value) -> Vec<(String, Value)> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| {
            let fc = p.get("functionCall")?;
            Some((fc["name"].as_str()?.to_string(), fc["args"].clone()))
        })
        .collect()
}

/// Gemini `contents`: every content of functionResponses follows a model
/// content with as many functionCalls of the same names, in order.
fn assert_gemini_pairs(body: &Value, call: &Value) {
    let contents = body["contents"].as_array().unwrap();
    let names = |c: &Value, key: &str| -> Vec<String> {
        c["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p[key]["name"].as_str().map(str::to_string))
            .collect()
    };
    for (i, c) in contents.iter().enumerate() {
        let responses = names(c, "functionResponse");
        if responses.is_empty() {
            continue;
        }
        let before = i.checked_sub(1).map(|j| &contents[j]);
        assert_eq!(
            before.map(|b| names(b, "functionCall")),
            Some(responses),
            "call {call}: contents[{i}] answers calls the content before does not make"
        );
    }
    // The last model content's calls are answered by the content after it.
    if let Some((i, last)) = contents
        .iter()
        .enumerate()
        .rev()
        .find(|(_, c)| c["role"] == "model")
    {
        let calls = names(last, "functionCall");
        if !calls.is_empty() {
            assert_eq!(
                contents.get(i + 1).map(|c| names(c, "functionResponse")),
                Some(calls),
                "call {call}: contents[{i}]'s calls are answered"
            );
        }
    }
}

const GEMINI_ASK: &str = "Read every file in notes/ one by one and summarise them. [[reads 40]] Never edit files outside notes/.";

/// The real Gemini CLI (pinned) through `compactor run gemini` against the
/// loopback Gemini stand-in, on a long tool-heavy turn: every request
/// within the window and holding the first ask's constraint, its calls
/// paired, every forwarded view derived again, a plain replay equal to
/// what was forwarded, the key never stored; the session file the CLI
/// wrote imports with no unknown line type and holds the calls the model
/// made; the user's own settings are left as they were.
#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn gemini_cli_through_compactor_run_keeps_a_long_turn_within_the_window() {
    let Some(bin) = client("gemini", "gemini_cli_through_compactor_run") else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    write_notes(&project, 40, 160);
    let model = Model::start();
    // The user's own settings: kept, and never edited.
    let gemini_dir = env.home().join(".gemini");
    std::fs::create_dir_all(&gemini_dir).unwrap();
    let user_settings = "{\n  // mine\n  \"ui\": {\"hideBanner\": true}\n}\n";
    std::fs::write(gemini_dir.join("settings.json"), user_settings).unwrap();
    let upstream = format!("http://127.0.0.1:{}", model.port);
    let mut args = vec!["gemini", "--upstream", upstream.as_str()];
    args.extend(BUDGET);
    args.extend(["--", "--skip-trust", "-p", GEMINI_ASK]);
    let mut cmd = run_command(&env, bin.parent().unwrap(), &project, &args);
    cmd.env("GEMINI_API_KEY", KEY);
    let (status, out, err) = run_bounded_for(cmd, Duration::from_secs(600));
    assert_eq!(status, 0, "compactor run gemini failed:\n{out}\n{err}");
    assert!(out.contains("All files read."), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(gemini_dir.join("settings.json")).unwrap(),
        user_settings,
        "the user's settings are never edited"
    );

    let calls: Vec<crate::proxy::Received> = model
        .model_calls()
        .into_iter()
        .filter(|c| c.path.contains(":streamGenerateContent"))
        .collect();
    assert!(
        calls.len() >= 41,
        "a long turn: {} model calls",
        calls.len()
    );
    // One conversation; a history the client edits (Gemini CLI masks old
    // tool outputs once they grow) goes on in a task linked to it.
    let tasks = env.tasks();
    let live: Vec<String> = tasks
        .iter()
        .filter_map(|t| t["id"].as_str())
        .filter(|id| id.starts_with("live-"))
        .map(str::to_string)
        .collect();
    assert!(!live.is_empty(), "{tasks:?}");
    let mut reports = Vec::new();
    for task in &live {
        let r = proxy_call_reports(&env, task);
        assert_verified(&env, task, r.len());
        // The conversation's first task was forwarded every call it holds;
        // a linked one holds the client's earlier turns too, as calls it
        // never forwarded (`replay --verify-forwarded` checks what it did).
        if r.first().is_some_and(|f| f["call"] == 1) {
            let replayed = assert_replay_equals_forwarded(&env, task, BUDGET, &r);
            assert_eq!(replayed.len(), r.len());
        }
        reports.extend(r);
    }
    eprintln!("{} calls in {} tasks: {live:?}", reports.len(), live.len());
    assert_eq!(reports.len(), calls.len(), "every main call is recorded");
    assert!(
        reports
            .iter()
            .any(|r| !r["tiers_fired"].as_array().unwrap().is_empty()),
        "tiers fired"
    );
    // The stored report names the budget it ran on: w_eff = window - output_reserved.
    let budget = &reports[0]["settings"]["budget"];
    let w_eff = budget["window"].as_u64().unwrap() - budget["output_reserved"].as_u64().unwrap();
    assert!(
        reports.iter().all(|r| r["status"] != "over_window"),
        "no call reported over the window: {reports:?}"
    );
    for (n, c) in calls.iter().enumerate() {
        let body = c.json();
        let sent = c.body.len() as u64 / 4;
        assert!(
            sent <= w_eff,
            "request {n}: {sent} tokens sent, over the window of {w_eff}"
        );
        assert!(
            body.to_string()
                .contains("Never edit files outside notes/."),
            "request {n}: the first ask's constraint is forwarded"
        );
        assert_eq!(
            c.headers
                .iter()
                .find(|(k, _)| k == "x-goog-api-key")
                .map(|(_, v)| v.as_str()),
            Some(KEY),
            "the key reaches the model"
        );
        assert_gemini_pairs(&body, &json!(n));
    }
    assert!(
        !contains(&store_bytes(&env), KEY),
        "the key is never stored"
    );

    // The session the CLI wrote: it imports whole, and its calls are the
    // calls the model made, in order.
    let sessions = gemini_sessions(&env.home());
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let import = env.run(&["import", "--json", sessions[0].to_str().unwrap()]);
    import.success();
    let report = &import.import_reports()[0];
    assert_eq!(report["format"], "gemini-cli");
    assert_eq!(report["unknown_line_types"], json!({}), "{report}");
    assert_eq!(report["skipped_lines"], json!([]), "{report}");
    let imported = report["tasks"][0]["id"].as_str().unwrap().to_string();
    let view = env.root().join("session-view.json");
    env.run(&[
        "compact",
        "--task",
        &imported,
        "--window",
        "2000000",
        "--output",
        view.to_str().unwrap(),
    ])
    .success();
    let view: Value = serde_json::from_slice(&std::fs::read(&view).unwrap()).unwrap();
    let recorded: Vec<(String, Value)> = view["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_use")
        .map(|b| (b["name"].as_str().unwrap().to_string(), b["input"].clone()))
        .collect();
    let seen = gemini_calls(&calls.last().unwrap().json());
    let made: Vec<(String, Value)> = (1..=40)
        .map(|k| {
            (
                "read_file".to_string(),
                json!({"file_path": format!("notes/file_{k:02}.txt")}),
            )
        })
        .collect();
    assert_eq!(recorded, made, "the session's calls are the model's");
    for call in seen {
        assert!(made.contains(&call), "a request carried {call:?}");
    }
}
