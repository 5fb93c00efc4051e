//! `compact --write-session`, checked with the real clients: Claude Code and
//! Codex (pinned in `clients/package.json`, installed by `cd clients && npm
//! ci`) resume the written session against a loopback server written here,
//! and the request each sends carries the compacted view, in order, block for
//! block, apart from what the client injects on its own.
//!
//! Offline and bounded: the clients see only `127.0.0.1`, telemetry and
//! nonessential traffic are off, HOME is a temporary directory, and every
//! client process is killed (and the test fails) after [`CLIENT_TIMEOUT`].
//! Without the clients the tests are reported as ignored locally (see
//! `build.rs`) and fail under `CI=true`.

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use compactor::model::{Block, Format, ToolContent};
use compactor::view::View;
use compactor::view::session::{Vendor, adapt};
use serde_json::{Value, json};

use crate::util::{HttpRequest, TestEnv, corpus, crate_dir, read_request, under_ci};

const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);
const PROMPT: &str = "Carry on from the summary.";

// ---------------------------------------------------------------- clients

/// The installed client binary, or `None` (after saying how to install it).
pub fn client(name: &str, test: &str) -> Option<PathBuf> {
    let bin = crate_dir()
        .join("clients")
        .join("node_modules")
        .join(".bin")
        .join(name);
    if bin.exists() {
        return Some(bin);
    }
    if under_ci() {
        panic!(
            "{test}: {} is missing and CI is set: run `cd clients && npm ci` (clients/package-lock.json pins the versions)",
            bin.display()
        );
    }
    eprintln!(
        "SKIPPED {test}: the {name} client is not installed; run `cd clients && npm ci` to install the pinned clients"
    );
    None
}

/// Run a client to completion or kill it at the timeout; returns (status, stdout, stderr).
pub fn run_bounded(cmd: Command) -> (i32, String, String) {
    run_bounded_for(cmd, CLIENT_TIMEOUT)
}

/// [`run_bounded`] with its own timeout (a long scripted turn).
pub fn run_bounded_for(mut cmd: Command, timeout: Duration) -> (i32, String, String) {
    // stdin is a pipe closed at once (an empty stdin: `-p`/`exec` read it),
    // not /dev/null, so nothing but EOF can ever reach the client.
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the client starts");
    drop(child.stdin.take());
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait on the client") {
            break st;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the client did not finish within {timeout:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (
        status.code().unwrap_or(-1),
        o.join().unwrap_or_default(),
        e.join().unwrap_or_default(),
    )
}

/// A minimal PATH: the directory holding `node` (Codex's launcher needs it),
/// then the system directories; nothing else from the developer's setup.
pub fn client_path() -> String {
    let mut dirs: Vec<String> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| d.join("node").is_file())
                .take(1)
                .map(|d| d.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(String::from));
    dirs.join(":")
}

/// A hermetic environment for a client: nothing from the developer's own
/// environment but a minimal PATH.
pub fn client_command(bin: &Path, home: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", client_path())
        .env("HOME", home)
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("NO_COLOR", "1")
        .current_dir(cwd);
    cmd
}

// ---------------------------------------------------------------- server

/// A loopback model server: records every request body, answers Anthropic
/// Messages and OpenAI Responses requests with a short streamed text (and a
/// client's summarization request with the summary it was given, if any).
pub struct Stub {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<(String, Value)>>>,
}

/// What Claude Code's summarization request asks for.
pub const CLAUDE_SUMMARY_REQUEST: &str =
    "Your task is to create a detailed summary of the conversation so far";
/// What Codex's compaction request asks for.
pub const CODEX_SUMMARY_REQUEST: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION";

impl Stub {
    pub fn start() -> Stub {
        Stub::answering_summaries_with(None)
    }

    /// A stub that answers a client's summarization request with `summary`.
    pub fn answering_summaries_with(summary: Option<&str>) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let requests: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let log = Arc::clone(&requests);
        let summary: Arc<Option<String>> = Arc::new(summary.map(str::to_string));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let log = Arc::clone(&log);
                let summary = Arc::clone(&summary);
                std::thread::spawn(move || serve(conn, &log, summary.as_deref()));
            }
        });
        Stub { port, requests }
    }

    pub fn bodies(&self, path_prefix: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p.starts_with(path_prefix))
            .map(|(_, b)| b.clone())
            .collect()
    }
}

/// One keep-alive connection: requests with a Content-Length body.
fn serve(conn: TcpStream, log: &Mutex<Vec<(String, Value)>>, summary: Option<&str>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(60)));
    let mut writer = conn.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(conn);
    while let Some(HttpRequest {
        method, path, body, ..
    }) = read_request(&mut reader)
    {
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let body_copy = body.clone();
        let n = {
            let mut l = log.lock().unwrap();
            l.push((path.clone(), body));
            l.len()
        };
        let (kind, payload) = if method != "POST" {
            ("application/json", None)
        } else if path.starts_with("/v1/messages/count_tokens") {
            (
                "application/json",
                Some(json!({"input_tokens": 10}).to_string()),
            )
        } else if path.starts_with("/v1/messages") {
            let text = body_copy.to_string();
            let sse = match summary {
                Some(s) if text.contains(CLAUDE_SUMMARY_REQUEST) => anthropic_text_sse(n, s),
                _ => anthropic_sse(n, anthropic_tool_call(&body_copy)),
            };
            ("text/event-stream", Some(sse))
        } else if path.starts_with("/v1/responses") {
            let text = body_copy.to_string();
            let sse = match summary {
                Some(s) if text.contains(CODEX_SUMMARY_REQUEST) => responses_text_sse(n, s),
                _ => responses_sse(n, wants_codex_tool(&body_copy)),
            };
            ("text/event-stream", Some(sse))
        } else {
            ("application/json", None)
        };
        let (status, payload) = match payload {
            Some(p) => ("200 OK", p),
            None => ("404 Not Found", "{}".to_string()),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
            payload.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(payload.as_bytes()).is_err()
        {
            return;
        }
        let _ = writer.flush();
    }
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
        .collect()
}

/// One streamed answer: a text block, then a Read tool call when `tool` holds its input.
fn anthropic_sse(n: usize, tool: Option<Value>) -> String {
    let text = match tool {
        Some(_) => "Reading the notes.".to_string(),
        None => format!("stub answer {n}"),
    };
    anthropic_answer(n, &text, tool)
}

/// One streamed answer holding `text` alone.
fn anthropic_text_sse(n: usize, text: &str) -> String {
    anthropic_answer(n, text, None)
}

fn anthropic_answer(n: usize, text: &str, tool: Option<Value>) -> String {
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": format!("msg_stub{n}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
    ];
    let (stop_reason, output_tokens) = match &tool {
        Some(input) => {
            events.extend([
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": format!("toolu_stub{n:04}"), "name": "Read", "input": {}}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
                ),
                (
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 1}),
                ),
            ]);
            ("tool_use", 12)
        }
        None => ("end_turn", 3),
    };
    events.extend([
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    sse(&events)
}

/// A prompt containing this asks the stub for one tool call before it answers.
pub const TOOL_MARK: &str = "[read notes.txt]";

/// The Read input to ask for when the last message is a user prompt with
/// [`TOOL_MARK`] (not yet answered by a tool result).
fn anthropic_tool_call(body: &Value) -> Option<Value> {
    let last = body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user" || m["role"] == "assistant")?;
    if last["role"] != "user" {
        return None;
    }
    let text = last["content"].to_string();
    if text.contains("tool_result") || !text.contains(TOOL_MARK) {
        return None;
    }
    // The working directory is in the system prompt; Read wants an absolute path.
    let sys = body.to_string();
    let cwd = sys
        .split("Primary working directory: ")
        .nth(1)?
        .split("\\n")
        .next()?
        .to_string();
    Some(json!({"file_path": format!("{cwd}/notes.txt")}))
}

/// Whether the last input item is a user prompt with [`TOOL_MARK`].
fn wants_codex_tool(body: &Value) -> bool {
    let Some(last) = body["input"].as_array().and_then(|a| a.last()) else {
        return false;
    };
    last["type"] == "message"
        && last["role"] == "user"
        && last["content"].to_string().contains(TOOL_MARK)
}

/// One streamed Responses answer: an exec_command call when `tool`, else a text message.
fn responses_sse(n: usize, tool: bool) -> String {
    responses_answer(n, tool, &format!("stub answer {n}"))
}

/// One streamed Responses answer holding `text` alone.
fn responses_text_sse(n: usize, text: &str) -> String {
    responses_answer(n, false, text)
}

fn responses_answer(n: usize, tool: bool, text: &str) -> String {
    let mut events = vec![(
        "response.created",
        json!({"type": "response.created", "response": {"id": format!("resp_{n}")}}),
    )];
    let item = if tool {
        let item = json!({"type": "function_call", "id": format!("fc_{n}"), "status": "completed", "name": "exec_command", "arguments": json!({"cmd": "cat notes.txt"}).to_string(), "call_id": format!("call_stub{n:04}")});
        events.push((
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ));
        item
    } else {
        let item = json!({"type": "message", "role": "assistant", "id": format!("msg_{n}"), "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]});
        let mut added = item.clone();
        added["content"] = json!([]);
        added["status"] = json!("in_progress");
        events.extend([
            (
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
            ),
            (
                "response.output_text.delta",
                json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": format!("msg_{n}"), "delta": text}),
            ),
        ]);
        item
    };
    events.extend([
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": format!("resp_{n}"), "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 13}}}),
        ),
    ]);
    sse(&events)
}

// ---------------------------------------------------------------- comparison

/// One block reduced to what both wire formats can say: role, kind, and the
/// kind's payload (tool results as text).
fn simple(role: &str, b: &Block) -> Value {
    match b {
        Block::Text { text } => json!([role, "text", text]),
        Block::Thinking { thinking, .. } => json!([role, "thinking", thinking]),
        Block::RedactedThinking { .. } => json!([role, "redacted_thinking"]),
        Block::ToolUse { id, name, input } => json!([role, "tool_use", id, name, input]),
        Block::ToolResult {
            tool_use_id,
            content,
            ..
        } => json!([role, "tool_result", tool_use_id, content_text(content)]),
        Block::Image { .. } => json!([role, "image"]),
        Block::Other(v) => json!([role, "other", v]),
    }
}

fn content_text(c: &ToolContent) -> String {
    match c {
        ToolContent::Text(s) => s.clone(),
        ToolContent::Blocks(bs) => bs
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn view_blocks(view: &View) -> Vec<Value> {
    view.messages
        .iter()
        .flat_map(|m| {
            let role = match m.role {
                compactor::view::ViewRole::User => "user",
                compactor::view::ViewRole::Assistant => "assistant",
            };
            m.content.iter().map(move |b| simple(role, b))
        })
        .collect()
}

/// Claude Code's request messages as simple blocks, without what the client
/// injects on its own (`system` messages inside `messages`, system reminders).
fn claude_request_blocks(body: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().expect("messages") {
        let role = m["role"].as_str().unwrap_or("");
        if role != "user" && role != "assistant" {
            continue;
        }
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            _ => Vec::new(),
        };
        for b in blocks {
            let mut b = b;
            if let Some(o) = b.as_object_mut() {
                o.remove("cache_control");
            }
            let block: Block = serde_json::from_value(b).expect("a content block");
            if let Block::Text { text } = &block
                && text.trim_start().starts_with("<system-reminder>")
            {
                continue;
            }
            out.push(simple(role, &block));
        }
    }
    out
}

/// Codex's request input items as simple blocks, without what the client
/// injects (developer messages, environment and instruction context).
fn codex_request_blocks(body: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for it in body["input"].as_array().expect("input") {
        match it["type"].as_str().unwrap_or("") {
            "message" => {
                let role = it["role"].as_str().unwrap_or("");
                if role != "user" && role != "assistant" {
                    continue;
                }
                for c in it["content"].as_array().into_iter().flatten() {
                    let text = c["text"].as_str().unwrap_or("");
                    if [
                        "<environment_context>",
                        "<skills_instructions>",
                        "<user_instructions>",
                    ]
                    .iter()
                    .any(|p| text.trim_start().starts_with(p))
                    {
                        continue;
                    }
                    match c["type"].as_str() {
                        Some("input_image") => out.push(json!([role, "image"])),
                        _ => out.push(json!([role, "text", text])),
                    }
                }
            }
            "function_call" => {
                let args = it["arguments"].as_str().unwrap_or("");
                let input = match serde_json::from_str::<Value>(args) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => json!({"arguments": args}),
                };
                out.push(json!([
                    "assistant",
                    "tool_use",
                    it["call_id"],
                    it["name"],
                    input
                ]));
            }
            "custom_tool_call" => out.push(json!([
                "assistant",
                "tool_use",
                it["call_id"],
                it["name"],
                {"input": it["input"]}
            ])),
            "function_call_output" | "custom_tool_call_output" => {
                let text = match &it["output"] {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => a
                        .iter()
                        .filter_map(|c| c["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    other => other.to_string(),
                };
                out.push(json!(["user", "tool_result", it["call_id"], text]));
            }
            "reasoning" => {
                let text: Vec<&str> = it["summary"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["text"].as_str())
                    .collect();
                if text.is_empty() {
                    out.push(json!(["assistant", "redacted_thinking"]));
                } else {
                    out.push(json!(["assistant", "thinking", text.join("\n\n")]));
                }
            }
            other => out.push(json!(["?", other])),
        }
    }
    out
}

// ---------------------------------------------------------------- the checks

#[derive(Clone, Copy, PartialEq)]
enum Agent {
    Claude,
    Codex,
}

/// Compact `source` into `agent`'s session format, resume it with the real
/// client against the stub, and check the request against the view.
fn compact_and_resume_expecting_constraints(
    test: &str,
    source: &Path,
    source_format: Format,
    agent: Agent,
    budget: &[&str],
) {
    let out = compact_and_resume(test, source, source_format, agent, budget);
    if let Some(summary) = out {
        assert!(
            summary.contains("## Constraints\n- "),
            "{test}: the fixture's summary has constraints"
        );
    }
}

fn compact_and_resume(
    test: &str,
    source: &Path,
    source_format: Format,
    agent: Agent,
    budget: &[&str],
) -> Option<String> {
    let bin = client(
        match agent {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        },
        test,
    )?;
    let env = TestEnv::new();
    let project = env.root().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let stub = Stub::start();
    let home = env.home();
    let kind = match agent {
        Agent::Claude => "claude-code",
        Agent::Codex => "codex",
    };
    let view_path = env.root().join("view.json");
    let src = source.to_str().unwrap();
    let mut args = vec![
        "compact",
        src,
        "--write-session",
        kind,
        "--resume-dir",
        project.to_str().unwrap(),
        "-o",
        view_path.to_str().unwrap(),
        "--json",
        "-q",
    ];
    args.extend_from_slice(budget);
    let run = env.run(&args);
    run.success();
    let report = run.json();
    let id = report["session_id"]
        .as_str()
        .expect("session_id")
        .to_string();
    let session_path = report["session_path"]
        .as_str()
        .expect("session_path")
        .replace("[TMP]", &env.root().display().to_string());
    assert!(
        Path::new(&session_path).starts_with(&home),
        "{session_path} is under HOME"
    );
    let view = View::from_json(&std::fs::read(&view_path).unwrap()).unwrap();
    let target = match agent {
        Agent::Claude => Vendor::Anthropic,
        Agent::Codex => Vendor::OpenAi,
    };
    let adapted = adapt(&view, Vendor::of(source_format), target).view;
    let summary = compactor::view::session::summary_text(&view).map(str::to_string);

    let (status, stdout, stderr) = resume_with(agent, &bin, &home, &project, &stub, &id, PROMPT);
    assert_eq!(
        status, 0,
        "{test}: the client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let bodies = match agent {
        Agent::Claude => stub.bodies("/v1/messages?"),
        Agent::Codex => stub.bodies("/v1/responses"),
    };
    // The main request is the one that carries the new prompt.
    let sent = bodies
        .iter()
        .find(|b| b.to_string().contains(PROMPT))
        .unwrap_or_else(|| panic!("{test}: no request carried the prompt; got {bodies:?}"));
    let got = match agent {
        Agent::Claude => claude_request_blocks(sent),
        Agent::Codex => codex_request_blocks(sent),
    };
    let want = view_blocks(&adapted);
    assert!(
        got.len() > want.len(),
        "{test}: the request has {} blocks, the view {}",
        got.len(),
        want.len()
    );
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g, w,
            "{test}: block {i} of the request differs from the view"
        );
    }
    let rest = &got[want.len()..];
    assert!(
        rest.iter()
            .any(|b| b[2].as_str().is_some_and(|t| t.starts_with(PROMPT))),
        "{test}: the new prompt follows the view: {rest:?}"
    );
    // Claude Code puts its own "No response requested." between a view that
    // ends with a user message and the new prompt.
    assert!(
        rest.iter().all(|b| (b[0] == "user" && b[1] == "text")
            || *b == json!(["assistant", "text", "No response requested."])),
        "{test}: only the client's own user text follows the view: {rest:?}"
    );
    // Every constraint line of the summary reaches the model.
    let sent_text = sent.to_string();
    for c in summary
        .iter()
        .flat_map(|s| s.split("## Constraints").nth(1))
        .flat_map(|sec| sec.split("\n## ").next())
        .flat_map(|sec| sec.lines().filter(|l| l.starts_with("- ")))
    {
        let quoted = serde_json::to_string(c).unwrap();
        assert!(
            sent_text.contains(&quoted[1..quoted.len() - 1]),
            "{test}: the constraint {c:?} is in the request"
        );
    }
    if let Some(summary) = &summary {
        assert_eq!(
            got[0],
            json!(["user", "text", summary]),
            "{test}: the summary leads"
        );
    }
    // The source is untouched and the view still validates.
    assert_eq!(compactor::view::validate(&adapted), vec![]);
    summary
}

/// The client resumes session `id` in `project` with one prompt, against
/// the stub; (status, stdout, stderr).
fn resume_with(
    agent: Agent,
    bin: &Path,
    home: &Path,
    project: &Path,
    stub: &Stub,
    id: &str,
    prompt: &str,
) -> (i32, String, String) {
    match agent {
        Agent::Claude => {
            let mut cmd = client_command(bin, home, project);
            cmd.env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", stub.port),
            )
            .env("ANTHROPIC_API_KEY", "sk-ant-loopback")
            .args(["--resume", id, "-p", prompt]);
            run_bounded(cmd)
        }
        Agent::Codex => {
            codex_config(home, stub.port);
            let mut cmd = client_command(bin, home, project);
            cmd.env("STUB_API_KEY", "loopback").args([
                "exec",
                "--skip-git-repo-check",
                "resume",
                id,
                prompt,
            ]);
            run_bounded(cmd)
        }
    }
}

/// The whole loop with a real client: compact a fixture into the client's
/// session, let the client resume it (it appends its own lines: the new
/// prompt, which states a rule, and its answer), then import the session and
/// compact it again, folding the carried summary. The final view and `probe`
/// keep the fixture's first ask and rule and the new one.
fn resume_then_compact_again(test: &str, source: &str, agent: Agent, first: [&str; 2]) {
    let Some(bin) = client(
        match agent {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        },
        test,
    ) else {
        return;
    };
    const RULE: &str = "Never push to the main branch.";
    let prompt = format!("{PROMPT} {RULE}");
    let env = TestEnv::new();
    let project = env.root().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let stub = Stub::start();
    let home = env.home();
    let src = fixture(source);
    let kind = match agent {
        Agent::Claude => "claude-code",
        Agent::Codex => "codex",
    };
    let mut args = vec!["compact", src.to_str().unwrap(), "--write-session", kind];
    args.extend(["--resume-dir", project.to_str().unwrap(), "--json", "-q"]);
    args.extend_from_slice(SMALL);
    let run = env.run(&args);
    run.success();
    let report = run.json();
    let id = report["session_id"].as_str().unwrap().to_string();
    let session = report["session_path"]
        .as_str()
        .unwrap()
        .replace("[TMP]", &env.root().display().to_string());
    let before = std::fs::read(&session).unwrap().len();
    let (status, stdout, stderr) = resume_with(agent, &bin, &home, &project, &stub, &id, &prompt);
    assert_eq!(status, 0, "{test}: the client failed\n{stdout}\n{stderr}");
    assert!(
        std::fs::read(&session).unwrap().len() > before,
        "{test}: the client appended to the session it resumed"
    );
    // Small enough that the carried summary is folded with what the client
    // added: smaller than the client's own system prompt and tools, which a
    // run refuses unless told (`--allow-over-window`, as `check` runs such
    // budgets), so that every call folds as hard as the ladder can.
    let again = [
        "--window",
        "2400",
        "--output-reserved",
        "400",
        "--protect-recent-steps",
        "1",
        "--allow-over-window",
    ];
    let mut args = vec![
        "compact",
        session.as_str(),
        "-o",
        "final.json",
        "--json",
        "-q",
    ];
    args.extend_from_slice(&again);
    let run = env.run(&args);
    assert!(run.status == 0 || run.status == 1, "{}", run.snapshot());
    let report = run.json();
    // A summary this run minted (the replay runs on a scratch store).
    assert!(
        report["restored"]["summary"].is_string()
            || report["tiers_fired"].to_string().contains("floor"),
        "{test}: the second compaction folded: {report}"
    );
    let view = std::fs::read_to_string(env.work().join("final.json")).unwrap();
    let view = view.replace("\\n", " ");
    let view = view.split_whitespace().collect::<Vec<_>>().join(" ");
    for text in first.iter().chain([&RULE]) {
        assert!(view.contains(text), "{test}: the final view lost {text:?}");
    }
    let mut args = vec!["probe", session.as_str(), "--json", "--fail-on-loss"];
    args.extend_from_slice(&again);
    let probe = env.run(&args);
    let p = probe.json();
    assert_eq!(probe.status, 0, "{test}: {p}");
    assert_eq!(p["critical_lost"], 0, "{test}: {p}");
    assert!(
        p["categories"]["ask"]["passed"].as_u64().unwrap() >= 2,
        "{test}: {p}"
    );
    assert!(
        p["categories"]["constraint"]["passed"].as_u64().unwrap() >= 2,
        "{test}: {p}"
    );
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn claude_code_resumes_a_written_session_that_compacts_again_keeping_every_rule() {
    resume_then_compact_again(
        "claude_round_trip",
        "fixtures/claude-shrink-floor.jsonl",
        Agent::Claude,
        [
            "Audit the order handlers under app/orders for N+1 queries.",
            "Do not change the public API of app/orders/views.py.",
        ],
    );
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn codex_resumes_a_written_session_that_compacts_again_keeping_every_rule() {
    resume_then_compact_again(
        "codex_round_trip",
        "fixtures/codex-tenant-registry.jsonl",
        Agent::Codex,
        [
            "The tenant export job times out.",
            "Do not touch the tenant_registry table: it is shared with billing and must never be migrated from here.",
        ],
    );
}

fn fixture(rel: &str) -> PathBuf {
    crate::util::testdata(rel)
}

const SMALL: &[&str] = &["--window", "8000", "--output-reserved", "1000"];

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn claude_code_resumes_a_compacted_claude_fixture() {
    let src = fixture("fixtures/claude-shrink-floor.jsonl");
    let before = std::fs::read(&src).unwrap();
    compact_and_resume_expecting_constraints(
        "claude_fixture",
        &src,
        Format::ClaudeCode,
        Agent::Claude,
        SMALL,
    );
    assert_eq!(
        std::fs::read(&src).unwrap(),
        before,
        "the source is untouched"
    );
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn codex_resumes_a_compacted_codex_fixture() {
    compact_and_resume_expecting_constraints(
        "codex_fixture",
        &fixture("fixtures/codex-tenant-registry.jsonl"),
        Format::Codex,
        Agent::Codex,
        SMALL,
    );
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn claude_code_resumes_a_codex_session() {
    compact_and_resume_expecting_constraints(
        "codex_in_claude",
        &fixture("fixtures/codex-tenant-registry.jsonl"),
        Format::Codex,
        Agent::Claude,
        SMALL,
    );
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn codex_resumes_a_claude_session() {
    compact_and_resume_expecting_constraints(
        "claude_in_codex",
        &fixture("fixtures/claude-shrink-floor.jsonl"),
        Format::ClaudeCode,
        Agent::Codex,
        SMALL,
    );
}

#[test]
#[cfg_attr(
    not(all(compactor_clients, compactor_corpus)),
    ignore = "needs the pinned agent clients (cd clients && npm ci) and the corpus (../shared/corpus, or set COMPACTOR_CORPUS)"
)]
fn claude_code_resumes_a_compacted_corpus_session() {
    let Some(root) = corpus("claude_corpus_resume") else {
        return;
    };
    let src = root.join("claude-code/v2.1.38_spotter_small/tool_heavy.jsonl");
    compact_and_resume(
        "claude_corpus",
        &src,
        Format::ClaudeCode,
        Agent::Claude,
        &["--window", "30000", "--output-reserved", "2000"],
    );
}

#[test]
#[cfg_attr(
    not(all(compactor_clients, compactor_corpus)),
    ignore = "needs the pinned agent clients (cd clients && npm ci) and the corpus (../shared/corpus, or set COMPACTOR_CORPUS)"
)]
fn codex_resumes_a_compacted_corpus_session() {
    let Some(root) = corpus("codex_corpus_resume") else {
        return;
    };
    let src = root.join(
        "codex/v0.104.0-alpha.1_localpush_redacted/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    );
    compact_and_resume(
        "codex_corpus",
        &src,
        Format::Codex,
        Agent::Codex,
        // Its first recorded prompt is already 42,772 tokens (instructions and
        // tools), so the window must hold that; the history still folds.
        &["--window", "70000", "--output-reserved", "2000"],
    );
}

/// Two runs write two files that differ only in the session id and the
/// timestamps; the view hash is the same. No client needed.
#[test]
fn two_written_sessions_differ_only_in_id_and_time() {
    for kind in ["claude-code", "codex"] {
        let env = TestEnv::new();
        let src = env.fixture("fixtures/codex-tenant-registry.jsonl");
        let mut reports = Vec::new();
        for (id, time) in [
            ("0199a1b2-0000-7000-8000-000000000001", "1796084204"),
            ("0199a1b2-0000-7000-8000-000000000002", "1796090000"),
        ] {
            let mut cmd = env.command(&[
                "compact",
                &src,
                "--write-session",
                kind,
                "--json",
                "-q",
                "--window",
                "8000",
                "--output-reserved",
                "1000",
            ]);
            cmd.env("COMPACTOR_SESSION_ID", id)
                .env("COMPACTOR_SESSION_TIME", time);
            let run = env.finish(cmd);
            run.success();
            reports.push(run.json());
        }
        assert_eq!(reports[0]["view_hash"], reports[1]["view_hash"]);
        let text = |r: &Value| {
            let path = r["session_path"]
                .as_str()
                .unwrap()
                .replace("[TMP]", &env.root().display().to_string());
            std::fs::read_to_string(path).unwrap()
        };
        let (a, b) = (text(&reports[0]), text(&reports[1]));
        assert_ne!(a, b);
        let mask = |s: &str, id: &str| {
            let s = s.replace(id, "ID");
            // Timestamps: 2026-12-01T00:16:44.000Z and the like.
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find("\"20") {
                out.push_str(&rest[..i]);
                let tail = &rest[i + 1..];
                if tail.len() >= 24 && tail.as_bytes()[10] == b'T' && tail.as_bytes()[23] == b'Z' {
                    out.push_str("\"TIME");
                    rest = &tail[24..];
                } else {
                    out.push('"');
                    rest = tail;
                }
            }
            out.push_str(rest);
            out
        };
        assert_eq!(
            mask(&a, reports[0]["session_id"].as_str().unwrap()),
            mask(&b, reports[1]["session_id"].as_str().unwrap()),
            "{kind}: the two files differ beyond id and time"
        );
        assert!(a.contains("0199a1b2-0000-7000-8000-000000000001"));
    }
}

// ---------------------------------------------------------------- fresh fixtures

/// Where the generator writes the sessions the pinned clients wrote.
const CLAUDE_FIXTURE: &str = "claude-code/client-2.1.332.jsonl";
const CODEX_FIXTURE: &str = "codex/client-0.171.0.jsonl";
/// The temporary directory is written as this in committed fixtures.
const FIXTURE_ROOT: &str = "/tmp/compactor-fixture";

/// Regenerate the fresh client fixtures: each pinned client runs two turns
/// (the first with a tool call served by the stub) in a temporary HOME, and
/// its session file is copied under `testdata/` with the temporary directory
/// renamed. Run by hand: `cargo test --test cli -- --ignored regenerate_client_fixtures`.
#[test]
#[ignore = "regenerates committed fixtures; run by hand"]
fn regenerate_client_fixtures() {
    let (Some(claude), Some(codex)) = (
        client("claude", "regenerate_client_fixtures"),
        client("codex", "regenerate_client_fixtures"),
    ) else {
        return;
    };
    let turns = [
        format!("Summarise the project notes. {TOOL_MARK}"),
        "Now say it in one line.".to_string(),
    ];
    // Claude Code.
    {
        let env = TestEnv::new();
        let project = env.root().join("project");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("notes.txt"), "The export job batches reads.\n").unwrap();
        let stub = Stub::start();
        let mut id: Option<String> = None;
        for t in &turns {
            let mut cmd = client_command(&claude, &env.home(), &project);
            cmd.env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", stub.port),
            )
            .env("ANTHROPIC_API_KEY", "sk-ant-loopback");
            if let Some(id) = &id {
                cmd.args(["--resume", id]);
            }
            cmd.args(["-p", t]);
            let (status, out, err) = run_bounded(cmd);
            assert_eq!(status, 0, "claude failed:\n{out}\n{err}");
            let file = only_jsonl(&env.home().join(".claude").join("projects"));
            id = Some(file.file_stem().unwrap().to_string_lossy().to_string());
        }
        let file = only_jsonl(&env.home().join(".claude").join("projects"));
        save_fixture(&file, &env, CLAUDE_FIXTURE);
    }
    // Codex.
    {
        let env = TestEnv::new();
        let home = env.home();
        let project = env.root().join("project");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("notes.txt"), "The export job batches reads.\n").unwrap();
        let stub = Stub::start();
        codex_config(&home, stub.port);
        let mut id: Option<String> = None;
        for t in &turns {
            let mut cmd = client_command(&codex, &home, &project);
            cmd.env("STUB_API_KEY", "loopback")
                .args(["exec", "--skip-git-repo-check"]);
            if let Some(id) = &id {
                cmd.args(["resume", id]);
            }
            cmd.arg(t);
            let (status, out, err) = run_bounded(cmd);
            assert_eq!(status, 0, "codex failed:\n{out}\n{err}");
            let file = only_jsonl(&home.join(".codex").join("sessions"));
            let stem = file.file_stem().unwrap().to_string_lossy().to_string();
            id = Some(stem[stem.len() - 36..].to_string());
        }
        let file = only_jsonl(&home.join(".codex").join("sessions"));
        save_fixture(&file, &env, CODEX_FIXTURE);
    }
}

/// The one `.jsonl` file under `dir` (recursively).
pub fn only_jsonl(dir: &Path) -> PathBuf {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                found.push(p);
            }
        }
    }
    assert_eq!(
        found.len(),
        1,
        "one session file under {}: {found:?}",
        dir.display()
    );
    found.pop().unwrap()
}

fn save_fixture(file: &Path, env: &TestEnv, rel: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let root = env.root().display().to_string();
    let slug: String = root
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let fixture_slug: String = FIXTURE_ROOT
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let text = text
        .replace(&root, FIXTURE_ROOT)
        .replace(&slug, &fixture_slug);
    std::fs::write(crate::util::testdata(rel), text).unwrap();
}

/// The fresh sessions the pinned clients wrote import with no unknown line type.
#[test]
fn fresh_client_fixtures_import_with_no_unknown_lines() {
    for (rel, format) in [(CLAUDE_FIXTURE, "claude-code"), (CODEX_FIXTURE, "codex")] {
        let env = TestEnv::new();
        let f = env.fixture(rel);
        let run = env.run(&["import", &f, "--json"]);
        run.success();
        let r = run.json();
        assert_eq!(r["format"], format, "{rel}");
        assert_eq!(r["unknown_line_types"], json!({}), "{rel}: {r}");
        assert_eq!(r["skipped_lines"], json!([]), "{rel}: {r}");
        let task = &r["tasks"][0];
        assert_eq!(task["turns"], 2, "{rel}: two turns: {r}");
        assert!(
            task["steps"].as_u64().unwrap() >= 3,
            "{rel}: a tool call and two answers: {r}"
        );
        assert_eq!(task["interrupted_tool_calls"], json!([]), "{rel}");
    }
}

/// `compact FILE -o checkpoint.json`, read back.
fn checkpoint(env: &TestEnv, file: &str) -> Value {
    env.run(&["compact", file, "-o", "checkpoint.json", "-q"])
        .success();
    let bytes = std::fs::read(env.work().join("checkpoint.json")).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The checkpoint is a whole request: `compact -o` carries the recorded system
/// prompt and tools, and `export --format openai` turns it into a standard
/// Chat Completions body (system message first, function tools, no reasoning
/// field).
#[test]
fn the_checkpoint_carries_system_prompt_and_tools() {
    let env = TestEnv::new();
    let f = env.fixture(CLAUDE_FIXTURE);
    let cp = checkpoint(&env, &f);
    let system = cp["system"].as_str().expect("a system prompt");
    assert!(system.contains("Claude"), "{system:.200}");
    let tools = cp["tools"].as_array().expect("tools");
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "Read" && t["input_schema"].is_object()),
        "the Read tool is defined"
    );
    // The view part is unchanged: the same messages as the plain view.
    let plain = env.run(&["compact", &f, "--json", "-q", "-o", "v.json"]);
    plain.success();
    assert_eq!(
        View::from_json(&std::fs::read(env.work().join("checkpoint.json")).unwrap()).unwrap(),
        View::from_json(&std::fs::read(env.work().join("v.json")).unwrap()).unwrap()
    );
    let run = env.run(&["export", "checkpoint.json", "--format", "openai"]);
    run.success();
    let body: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][0]["content"], system);
    assert!(!run.stdout.contains("reasoning_content"));
    let fns = body["tools"].as_array().expect("function tools");
    assert!(
        fns.iter()
            .all(|t| t["type"] == "function" && t["function"]["parameters"].is_object())
    );
    assert!(fns.iter().any(|t| t["function"]["name"] == "Read"));
}

/// A Codex rollout's base instructions (`session_meta`) are the checkpoint's
/// system prompt; Codex records no tool definitions, so there are none.
#[test]
fn a_codex_checkpoint_carries_the_base_instructions() {
    let env = TestEnv::new();
    let f = env.fixture("codex/client-0.171.0.jsonl");
    let cp = checkpoint(&env, &f);
    let system = cp["system"].as_str().expect("a system prompt");
    assert!(
        system.starts_with("You are a coding agent running in the Codex CLI"),
        "{system:.200}"
    );
    assert!(
        cp.get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "{:.200}",
        cp["tools"]
    );
    // Never a message of the view: the first message is the session's own.
    let first = &cp["messages"][0];
    assert!(
        !first
            .to_string()
            .contains("You are a coding agent running in the Codex CLI"),
        "{first:.200}"
    );
}

/// A written session never replaces a file; a bad `--resume-dir` or session
/// id is a usage error (exit 2) that writes nothing, and so is `--cwd`, which
/// now only picks a project's sessions and has nothing to pick when a FILE
/// names the task.
#[test]
fn write_session_refuses_to_overwrite_and_rejects_bad_input() {
    let env = TestEnv::new();
    let src = env.fixture("fixtures/codex-tenant-registry.jsonl");
    let id = "0199a1b2-0000-7000-8000-00000000000a";
    let write = |extra: &[&str], id: &str| {
        let mut a = vec![
            "compact",
            src.as_str(),
            "--write-session",
            "claude-code",
            "-q",
        ];
        a.extend_from_slice(extra);
        let mut cmd = env.command(&a);
        cmd.env("COMPACTOR_SESSION_ID", id);
        env.finish(cmd)
    };
    write(&["--resume-dir", "."], id).success();
    let projects = env.home().join(".claude").join("projects");
    let file = only_jsonl(&projects);
    let before = std::fs::read(&file).unwrap();
    let again = write(&["--resume-dir", "."], id);
    again.failure(2).stderr_has("cannot write the session");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the first file is untouched"
    );
    let bad_dir = write(
        &["--resume-dir", "no/such/dir"],
        "0199a1b2-0000-7000-8000-00000000000b",
    );
    bad_dir.failure(2).stderr_has("--resume-dir no/such/dir");
    let old_flag = write(&["--cwd", "."], "0199a1b2-0000-7000-8000-00000000000c");
    old_flag
        .failure(2)
        .stderr_has("already names the task")
        .stderr_has("--resume-dir DIR");
    // --resume-dir means nothing without a session to write.
    let run = env.run(&["compact", src.as_str(), "--resume-dir", "."]);
    run.failure(2).stderr_has("--write-session <AGENT>");
    let bad_id = write(&["--resume-dir", "."], "not-a-uuid");
    bad_id.failure(2).stderr_has("COMPACTOR_SESSION_ID");
    assert_eq!(only_jsonl(&projects), file, "nothing else was written");
}

/// A Codex home whose model provider is the loopback stub on `port`.
pub fn codex_config(home: &Path, port: u16) {
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(
        home.join(".codex").join("config.toml"),
        format!(
            "model_provider = \"stub\"\nmodel = \"gpt-5.1-codex\"\n\n[model_providers.stub]\nname = \"stub\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"STUB_API_KEY\"\n"
        ),
    )
    .unwrap();
}
