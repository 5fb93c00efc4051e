//! `compactor proxy`, run as the real binary between a client and a
//! loopback stub model: the real Claude Code and Codex (pinned, offline, a
//! hermetic HOME, as `resume.rs` drives them) through a long tool-heavy
//! turn, and a plain HTTP client for what a client cannot be made to do on
//! cue (errors, faults, bad bodies, concurrency).
//!
//! Crash points are injected faults (`COMPACTOR_FAULT=abort-...:N`), never
//! timed kills; the proxy process is stopped by its id once a test is done.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use compactor::model::Block;
use compactor::view::{View, ViewMessage, ViewRole};
use serde_json::{Value, json};

use crate::resume::{client, client_command, codex_config, run_bounded_for};
use crate::util::{HttpRequest, TestEnv, read_request};

// ---------------------------------------------------------------- the stub model

/// One request the stub received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn is_model_call(&self) -> bool {
        self.method == "POST"
            && (self.path.starts_with("/v1/messages?") || self.path == "/v1/messages")
            || self.path == "/v1/responses"
            || self.is_gemini_call()
    }

    /// A Gemini model call, streamed or not.
    pub fn is_gemini_call(&self) -> bool {
        self.method == "POST"
            && self.path.starts_with("/v1beta/models/")
            && self.path.contains("enerateContent")
    }
}

/// How the stub answers its next model call.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A status and a JSON body, as given.
    Status(u16, String),
    /// The normal answer, cut off after this many bytes (the connection closed).
    CutAfter(usize),
    /// The normal answer's first bytes, then the rest once released.
    HoldAfter(usize),
    /// Nothing at all, until the proxy closes the connection.
    Stall,
    /// The normal answer's first bytes, then nothing until the proxy
    /// closes the connection.
    StallAfter(usize),
}

/// A loopback model: records every request, answers Messages and Responses
/// calls with a streamed answer whose usage is the request's size / 4. A
/// conversation whose first user message holds `[[reads N]]` is answered
/// with a file-reading tool call until N results are in, then text.
pub struct Model {
    pub port: u16,
    pub log: Arc<Mutex<Vec<Received>>>,
    next: Arc<Mutex<VecDeque<Answer>>>,
    /// Set to let a held answer go on.
    release: Arc<(Mutex<bool>, std::sync::Condvar)>,
    /// Stalled answers whose connection the proxy closed.
    pub dropped: Arc<std::sync::atomic::AtomicUsize>,
}

impl Model {
    pub fn start() -> Model {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let log: Arc<Mutex<Vec<Received>>> = Arc::default();
        let next: Arc<Mutex<VecDeque<Answer>>> = Arc::default();
        let release: Arc<(Mutex<bool>, std::sync::Condvar)> = Arc::default();
        let dropped: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let (l, n, r, d) = (
            Arc::clone(&log),
            Arc::clone(&next),
            Arc::clone(&release),
            Arc::clone(&dropped),
        );
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (l, n, r, d) = (
                    Arc::clone(&l),
                    Arc::clone(&n),
                    Arc::clone(&r),
                    Arc::clone(&d),
                );
                std::thread::spawn(move || serve(conn, &l, &n, &r, &d));
            }
        });
        Model {
            port,
            log,
            next,
            release,
            dropped,
        }
    }

    /// Let a held answer go on.
    pub fn release(&self) {
        let (lock, cv) = &*self.release;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    }

    /// Answer the next model call this way.
    pub fn then(&self, a: Answer) {
        self.next.lock().unwrap().push_back(a);
    }

    pub fn model_calls(&self) -> Vec<Received> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.is_model_call())
            .cloned()
            .collect()
    }
}

fn serve(
    conn: TcpStream,
    log: &Mutex<Vec<Received>>,
    next: &Mutex<VecDeque<Answer>>,
    release: &(Mutex<bool>, std::sync::Condvar),
    dropped: &std::sync::atomic::AtomicUsize,
) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(120)));
    let mut writer = conn.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(conn);
    while let Some(HttpRequest {
        method,
        path,
        headers,
        body,
    }) = read_request(&mut reader)
    {
        let req = Received {
            method,
            path,
            headers,
            body,
        };
        log.lock().unwrap().push(req.clone());
        let model_call = req.is_model_call();
        let special = if model_call {
            next.lock().unwrap().pop_front()
        } else {
            None
        };
        let (status, kind, payload) = match (&special, req.method.as_str(), req.path.as_str()) {
            (Some(Answer::Status(s, b)), _, _) => (*s, "application/json", b.clone()),
            (_, "POST", p) if p.starts_with("/v1/messages/count_tokens") => (
                200,
                "application/json",
                json!({"input_tokens": req.body.len() / 4}).to_string(),
            ),
            (_, "POST", p) if p.starts_with("/v1/messages") => {
                (200, "text/event-stream", messages_answer(&req))
            }
            (_, "POST", "/v1/responses") => (200, "text/event-stream", responses_answer(&req)),
            (_, "POST", p) if p.contains(":streamGenerateContent") => {
                (200, "text/event-stream", gemini_answer(&req))
            }
            (_, "POST", p) if p.contains(":generateContent") => {
                (200, "application/json", gemini_helper_answer(&req))
            }
            (_, "GET", "/v1/models") => (
                200,
                "application/json",
                json!({"data": [{"id": "stub-model", "type": "model"}]}).to_string(),
            ),
            _ => (404, "application/json", "{}".to_string()),
        };
        if let Some(Answer::Stall | Answer::StallAfter(_)) = special {
            if let Some(Answer::StallAfter(n)) = special {
                let _ = writer.write_all(chunked_head(kind).as_bytes());
                write_chunk(&mut writer, &payload.as_bytes()[..n.min(payload.len())]);
            }
            // Nothing more: wait for the proxy to close the connection
            // (bounded by the read timeout).
            let mut buf = [0u8; 64];
            if let Ok(0) = reader.read(&mut buf) {
                dropped.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            return;
        }
        if let Some(Answer::HoldAfter(n)) = special {
            // The first bytes as a chunk of their own, the rest once released.
            let (first, rest) = payload.as_bytes().split_at(n.min(payload.len()));
            let _ = writer.write_all(chunked_head(kind).as_bytes());
            write_chunk(&mut writer, first);
            let (lock, cv) = release;
            let released = cv
                .wait_timeout_while(lock.lock().unwrap(), Duration::from_secs(60), |r| !*r)
                .unwrap();
            drop(released);
            write_chunk(&mut writer, rest);
            let _ = writer.write_all(b"0\r\n\r\n");
            return;
        }
        if let Some(Answer::CutAfter(n)) = special {
            // A chunked answer that stops mid-way: the connection closes.
            let _ = writer.write_all(chunked_head(kind).as_bytes());
            write_chunk(&mut writer, &payload.as_bytes()[..n.min(payload.len())]);
            return;
        }
        let head = format!(
            "HTTP/1.1 {status} {}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nx-stub: yes\r\nretry-after: 0\r\n\r\n",
            if status == 200 { "OK" } else { "Stub" },
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

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect()
}

/// How many of the stub's tool calls a request has answered: one more than
/// the highest call number it holds (a compacted view may have folded the
/// earlier ones away, so they cannot be counted).
fn answered(body: &str, prefix: &str) -> usize {
    body.split(prefix)
        .skip(1)
        .filter_map(|rest| rest.get(..3)?.parse::<usize>().ok())
        .max()
        .map_or(0, |n| n + 1)
}

/// `[[reads N]]` in a text: N.
fn reads_asked(text: &str) -> Option<usize> {
    let rest = text.split("[[reads ").nth(1)?;
    rest.split("]]").next()?.trim().parse().ok()
}

/// The directory a request names (Claude Code's environment, Codex's context).
fn cwd_named(body: &str) -> String {
    if let Some(rest) = body.split("Primary working directory: ").nth(1) {
        return rest.split("\\n").next().unwrap_or("").to_string();
    }
    body.split("<cwd>")
        .nth(1)
        .and_then(|r| r.split("</cwd>").next())
        .unwrap_or("")
        .to_string()
}

fn messages_answer(req: &Received) -> String {
    let body = req.json();
    let text = String::from_utf8_lossy(&req.body).to_string();
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let first_user = msgs
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    let results = answered(&text, "toolu_stub_");
    let n = 1 + req.body.len() % 100_000;
    // `[[agent PROMPT]]`: one subagent call first.
    if results == 0
        && let Some(prompt) = first_user
            .split("[[agent ")
            .nth(1)
            .and_then(|r| r.split("]]").next())
    {
        return sse(&[
            json!({"type": "message_start", "message": {"id": format!("msg_agent_{n}"), "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": req.body.len() / 4, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_stub_000", "name": "Agent", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json!({"description": "look", "prompt": prompt, "subagent_type": "general-purpose"}).to_string()}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
            json!({"type": "message_stop"}),
        ]);
    }
    let tool = reads_asked(&first_user)
        .filter(|&want| results < want)
        .map(|_| {
            let cwd = cwd_named(&text);
            let file = format!("{cwd}/notes/file_{:02}.txt", results + 1);
            json!({"file_path": file})
        });
    // `[[recall]]`: once the reads are done, one call of compactor's
    // view_tool_call on an elided pointer (see `run.rs`).
    if tool.is_none()
        && let Some(events) = crate::run::recall_in_messages(&first_user, &body, &text, n)
    {
        return sse(&events);
    }
    // `[[search WORDS]]` in the last ask: one call of search_history (see `mcp.rs`).
    if let Some(events) = crate::mcp::search_in_messages(&body, &text, n) {
        return sse(&events);
    }
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": format!("msg_stub_{n}_{results}"), "type": "message", "role": "assistant", "model": "claude-stub", "content": [], "usage": {"input_tokens": req.body.len() / 4, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": if tool.is_some() { "Reading the next file." } else { "All files read." }}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    if let Some(input) = &tool {
        events.extend([
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": format!("toolu_stub_{results:03}"), "name": "Read", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            json!({"type": "content_block_stop", "index": 1}),
        ]);
    }
    events.extend([
        json!({"type": "message_delta", "delta": {"stop_reason": if tool.is_some() { "tool_use" } else { "end_turn" }}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ]);
    sse(&events)
}

/// The Gemini stand-in's answer to a main turn: `[[reads N]]` in the first
/// ask is answered with a `read_file` call (after a thought, its text
/// streamed in two pieces, the call signed) until the request carries the
/// N-th file's call, then text. The files read so far are counted by the
/// highest `notes/file_NN.txt` a call of the request names (a compacted
/// request may have folded the earlier ones away).
pub fn gemini_answer(req: &Received) -> String {
    let body = req.json();
    let text = String::from_utf8_lossy(&req.body).to_string();
    let first_user = body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["role"] == "user" && c.to_string().contains("[[reads"))
        .map(|c| c.to_string())
        .unwrap_or_else(|| text.clone());
    let done = text
        .split("\"notes/file_")
        .skip(1)
        .filter_map(|rest| rest.get(..2)?.parse::<usize>().ok())
        .max()
        .unwrap_or(0);
    let usage = json!({"promptTokenCount": req.body.len() / 4, "candidatesTokenCount": 20, "totalTokenCount": req.body.len() / 4 + 20});
    let chunk = |parts: Value, last: bool| {
        let mut c = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}], "modelVersion": "gemini-stub", "responseId": format!("resp_gemini_{done}")});
        if last {
            c["candidates"][0]["finishReason"] = json!("STOP");
            c["usageMetadata"] = usage.clone();
        }
        format!("data: {c}\r\n\r\n")
    };
    match reads_asked(&first_user).filter(|&want| done < want) {
        Some(_) => [
            chunk(json!([{"text": "The next file.", "thought": true}]), false),
            chunk(json!([{"text": "Reading"}]), false),
            chunk(json!([{"text": " the next file."}]), false),
            chunk(
                json!([{"functionCall": {"name": "read_file", "args": {"file_path": format!("notes/file_{:02}.txt", done + 1)}}, "thoughtSignature": format!("c2lnLXN0dWI{done}")}]),
                true,
            ),
        ]
        .concat(),
        None => [
            chunk(json!([{"text": "All files"}]), false),
            chunk(json!([{"text": " read."}]), true),
        ]
        .concat(),
    }
}

/// The Gemini stand-in's answer to a helper (`:generateContent`): one JSON
/// text that the CLI's routing, loop and next-speaker checks each take.
pub fn gemini_helper_answer(req: &Received) -> String {
    let answer = json!({"complexity_reasoning": "a plain read", "complexity_score": 10, "unproductive_state_confidence": 0.0, "unproductive_state_analysis": "each call reads another file", "reasoning": "the model has more to do", "next_speaker": "model"});
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": answer.to_string()}]}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": req.body.len() / 4, "candidatesTokenCount": 20, "totalTokenCount": req.body.len() / 4 + 20}, "modelVersion": "gemini-stub"}).to_string()
}

fn responses_answer(req: &Received) -> String {
    let body = req.json();
    let text = String::from_utf8_lossy(&req.body).to_string();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let first_user = input
        .iter()
        .filter(|i| i["role"] == "user")
        .map(|i| i["content"].to_string())
        .find(|c| !c.contains("environment_context"))
        .unwrap_or_default();
    let results = answered(&text, "call_stub_");
    let tool = reads_asked(&first_user).filter(|&want| results < want);
    if tool.is_none()
        && let Some(events) = crate::run::recall_in_responses(&first_user, &body, &text, results)
    {
        return sse(&events);
    }
    let id = format!("resp_stub_{}_{results}", req.body.len() % 100_000);
    let item = match tool {
        Some(_) => {
            json!({"type": "function_call", "id": format!("fc_{results}"), "status": "completed", "name": "exec_command", "arguments": json!({"cmd": format!("cat notes/file_{:02}.txt", results + 1)}).to_string(), "call_id": format!("call_stub_{results:03}")})
        }
        None => {
            json!({"type": "message", "role": "assistant", "id": format!("msg_{results}"), "status": "completed", "content": [{"type": "output_text", "text": "All files read.", "annotations": []}]})
        }
    };
    let _ = text;
    sse(&[
        json!({"type": "response.created", "response": {"id": id}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": id, "usage": {"input_tokens": req.body.len() / 4, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": req.body.len() / 4 + 20}}}),
    ])
}

// ---------------------------------------------------------------- the proxy process

/// A running `compactor proxy`, stopped (by its id) when dropped.
pub struct Proxy {
    child: Child,
    pub port: u16,
    /// Its stdout lines (`--json`: one call each).
    lines: Arc<Mutex<Vec<String>>>,
    pub stderr: Arc<Mutex<String>>,
}

impl Proxy {
    pub fn start(env: &TestEnv, upstream: u16, extra: &[&str], fault: Option<&str>) -> Proxy {
        let mut cmd = proxy_command(env, &format!("http://127.0.0.1:{upstream}"));
        cmd.args(extra);
        Proxy::start_command(cmd, fault)
    }

    /// Start `cmd` (a `compactor proxy` listening on a free loopback port
    /// with `--json`).
    pub fn start_command(mut cmd: std::process::Command, fault: Option<&str>) -> Proxy {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(f) = fault {
            cmd.env("COMPACTOR_FAULT", f);
        }
        let mut child = cmd.spawn().expect("the proxy starts");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        err.read_line(&mut first).unwrap();
        let port = first
            .trim()
            .strip_prefix("listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("the first stderr line names the address: {first:?}"))
            .parse()
            .unwrap();
        let stderr: Arc<Mutex<String>> = Arc::new(Mutex::new(first));
        let s = Arc::clone(&stderr);
        std::thread::spawn(move || {
            // Line by line, so that a test sees a note while the proxy runs.
            let mut line = String::new();
            while err.read_line(&mut line).unwrap_or(0) > 0 {
                s.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let l = Arc::clone(&lines);
        let out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                l.lock().unwrap().push(line);
            }
        });
        Proxy {
            child,
            port,
            lines,
            stderr,
        }
    }

    /// The proxy's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The calls reported so far (`compactor.proxy_call/1` lines).
    pub fn calls(&self) -> Vec<Value> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// Wait until `n` calls are reported (bounded).
    pub fn wait_calls(&self, n: usize) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let calls = self.calls();
            if calls.len() >= n {
                return calls;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{} of {n} calls reported; stderr:\n{}",
                calls.len(),
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait for the process to end by itself (an injected abort), bounded.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the proxy did not stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------- a plain client

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into()
}

/// POST `body` to the proxy; (status, body text, or the read error).
fn post(
    proxy: &Proxy,
    path: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> (u16, Result<String, String>) {
    try_post(proxy, path, body, headers).expect("the proxy answers")
}

/// [`post`], or why no answer came at all.
fn try_post(
    proxy: &Proxy,
    path: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> Result<(u16, Result<String, String>), String> {
    let mut req = agent()
        .post(proxy.url(path))
        .header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut resp = req
        .send(body.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let mut text = String::new();
    let read = resp
        .body_mut()
        .as_reader()
        .read_to_string(&mut text)
        .map_err(|e| e.to_string());
    Ok((status, read.map(|_| text)))
}

pub const KEY: &str = "sk-ant-proxy-test-key-0042";

/// A Messages request body over `messages` (a Claude Code-like shape).
fn messages_body(messages: &[Value]) -> Value {
    json!({
        "model": "claude-stub",
        "system": [{"type": "text", "text": "You are a test agent.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}],
        "metadata": {"user_id": "{\"session_id\":\"session-1\"}"},
        "max_tokens": 1000,
        "messages": messages,
        "stream": true,
    })
}

fn read_output(k: usize) -> String {
    (1..=60)
        .map(|i| format!("{i:>6}\tfile {k} line {i}: let value_{i} = compute({i}, {k});"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drive one conversation through the proxy for `calls` model calls as a
/// client would: each answer's tool call answered with a file's text.
/// Returns the messages the client holds at the end.
/// The head of the stub's chunked 200 answer of content type `kind`.
fn chunked_head(kind: &str) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nTransfer-Encoding: chunked\r\n\r\n")
}

/// One chunk of a chunked body, sent at once.
fn write_chunk(w: &mut TcpStream, bytes: &[u8]) {
    let _ = w.write_all(format!("{:x}\r\n", bytes.len()).as_bytes());
    let _ = w.write_all(bytes);
    let _ = w.write_all(b"\r\n");
    let _ = w.flush();
}

/// One conversation per name, all at once, each [`drive`]n 20 calls through
/// a job that reads 12 files (the session is the name).
fn drive_jobs_at_once(proxy: &Arc<Proxy>, names: &[&str]) {
    let threads: Vec<_> = names
        .iter()
        .map(|name| {
            let proxy = Arc::clone(proxy);
            let name = name.to_string();
            std::thread::spawn(move || {
                drive(&proxy, &format!("The {name} job. [[reads 12]]"), 20, &name);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

fn drive(proxy: &Proxy, ask: &str, calls: usize, session: &str) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": ask}]})];
    for k in 0..calls {
        let mut body = messages_body(&messages);
        body["metadata"]["user_id"] = Value::String(format!("{{\"session_id\":\"{session}\"}}"));
        let (status, text) = post(
            proxy,
            "/v1/messages?beta=true",
            &body,
            &[("x-api-key", KEY)],
        );
        assert_eq!(status, 200, "call {k}: {text:?}");
        let text = text.unwrap();
        let id = text
            .split("\"toolu_stub_")
            .nth(1)
            .map(|r| format!("toolu_stub_{}", &r[..3]));
        let mut content = vec![json!({"type": "text", "text": "Reading the next file."})];
        if let Some(id) = &id {
            let file = text
                .split("\"file_path\\\":\\\"")
                .nth(1)
                .map_or("", |r| r.split("\\\"").next().unwrap_or(""));
            content.push(
                json!({"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": file}}),
            );
        } else {
            content = vec![json!({"type": "text", "text": "All files read."})];
        }
        messages.push(json!({"role": "assistant", "content": content}));
        match id {
            Some(id) => messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": read_output(k)}]})),
            None => break,
        }
    }
    messages
}

pub fn store_bytes(env: &TestEnv) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let p = format!("{}{suffix}", env.db().display());
        if let Ok(b) = std::fs::read(&p) {
            all.extend(b);
        }
    }
    all
}

pub fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

// ---------------------------------------------------------------- what every live run must show

/// A forwarded Messages body's conversation as a view (system messages and
/// breakpoints set aside), for the legality check.
fn forwarded_view(body: &Value) -> View {
    let messages = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let role = if m["role"] == "user" {
                ViewRole::User
            } else {
                ViewRole::Assistant
            };
            let blocks = match &m["content"] {
                Value::String(s) => vec![Block::Text { text: s.clone() }],
                Value::Array(a) => a
                    .iter()
                    .map(|b| {
                        let mut b = b.clone();
                        b.as_object_mut().unwrap().remove("cache_control");
                        serde_json::from_value(b).unwrap()
                    })
                    .collect(),
                _ => Vec::new(),
            };
            ViewMessage {
                role,
                content: blocks,
            }
        })
        .collect();
    View { messages }
}

/// A Messages body's messages without their breakpoints, for prefix checks.
fn without_breakpoints(body: &Value, field: &str) -> Vec<Value> {
    let mut items = body[field].as_array().cloned().unwrap_or_default();
    for m in &mut items {
        if let Some(Value::Array(blocks)) = m.get_mut("content") {
            for b in blocks {
                if let Some(o) = b.as_object_mut() {
                    o.remove("cache_control");
                }
            }
        }
    }
    items
}

/// The share of consecutive calls with no tier fired at the later one whose
/// forwarded conversation is a prefix of the later one's; every such pair
/// must be one.
fn assert_prefix_stable(reports: &[Value], bodies: &[Value], field: &str) -> (usize, usize) {
    let mut pairs = 0;
    for i in 1..reports.len().min(bodies.len()) {
        let (a, b) = (&reports[i - 1], &reports[i]);
        if a["task"] != b["task"] || !b["tiers_fired"].as_array().unwrap().is_empty() {
            continue;
        }
        let (x, y) = (
            without_breakpoints(&bodies[i - 1], field),
            without_breakpoints(&bodies[i], field),
        );
        pairs += 1;
        assert!(
            y.len() >= x.len() && y[..x.len()] == x[..],
            "call {} → {}: no tier fired, yet the forwarded {field} are not a prefix",
            a["call"],
            b["call"]
        );
    }
    (pairs, reports.len().saturating_sub(1))
}

/// `replay --verify-forwarded` over the proxy's store: every forwarded view derived again.
pub fn assert_verified(env: &TestEnv, task: &str, forwarded: usize) {
    let run = env.run(&["replay", "--task", task, "--verify-forwarded", "--json"]);
    run.success();
    let v = run.json();
    assert_eq!(v["schema"], "compactor.verify_forwarded/1");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(
        v["verified"], forwarded as u64,
        "every forwarded call is checked: {v}"
    );
}

/// A plain `replay` at the proxy's budget derives every call's forwarded
/// view, hash for hash (every attempt's: a retry is forwarded the view its
/// call had), with the prediction and status of the call's first attempt (a
/// retry re-derives the view over what the first attempt stored, so it
/// reports the restored forms, not the tiers that made them). Returns the
/// replay's calls.
pub fn assert_replay_equals_forwarded(
    env: &TestEnv,
    task: &str,
    budget: &[&str],
    reports: &[Value],
) -> Vec<Value> {
    let mut args = vec!["replay", "--task", task, "--json"];
    args.extend_from_slice(budget);
    let run = env.run(&args);
    let replay = run.replay_json();
    let calls = replay["calls"].as_array().unwrap().clone();
    let mut forwarded: std::collections::BTreeMap<u64, Vec<&Value>> = Default::default();
    for r in reports.iter().filter(|r| r["task"] == task) {
        forwarded
            .entry(r["call"].as_u64().unwrap())
            .or_default()
            .push(r);
    }
    assert!(!calls.is_empty());
    for c in &calls {
        let k = c["call"].as_u64().unwrap();
        let attempts = forwarded
            .get(&k)
            .unwrap_or_else(|| panic!("call {k} was never forwarded"));
        for a in attempts {
            assert_eq!(
                c["view_hash"], a["view_hash"],
                "call {k}: an attempt's view"
            );
        }
        let f = attempts[0];
        for field in [
            "view_hash",
            "tokens_before",
            "tokens_after",
            "status",
            "tiers_fired",
        ] {
            assert_eq!(
                c[field], f[field],
                "call {k}: the replay's {field} is not the forwarded one\nreplay: {c}\nforwarded: {f}"
            );
        }
    }
    calls
}

// ---------------------------------------------------------------- plain-client tests

/// A conversation of 30 calls through the proxy with a small window: it
/// records every row, compacts (tiers fire), forwards only what changed in
/// `messages`, keeps the key out of the store, and every forwarded view is
/// derived again offline.
#[test]
fn a_long_conversation_is_recorded_compacted_and_verified() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(
        &env,
        model.port,
        &["--window", "12000", "--output-reserved", "2000"],
        None,
    );
    let ask = "Read every file in notes/ and summarise them. [[reads 30]] Never edit files outside notes/.";
    drive(&proxy, ask, 40, "session-1");
    let reports = proxy.wait_calls(31);
    let calls = model.model_calls();
    assert_eq!(calls.len(), 31, "30 tool calls and the closing answer");
    let tasks: std::collections::BTreeSet<&str> = reports
        .iter()
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks.len(), 1, "one conversation, one task: {tasks:?}");
    let task = *tasks.iter().next().unwrap();
    assert!(task.starts_with("live-"), "{task}");
    let fired: Vec<&Value> = reports
        .iter()
        .filter(|r| !r["tiers_fired"].as_array().unwrap().is_empty())
        .collect();
    assert!(
        !fired.is_empty(),
        "the window is passed several times over: tiers fire"
    );
    for (r, c) in reports.iter().zip(&calls) {
        assert_eq!(r["schema"], "compactor.proxy_call/1");
        assert_eq!(r["outcome"], "recorded", "{r}");
        assert_eq!(r["upstream_status"], 200);
        let body = c.json();
        // Only the conversation changed: every other field as the client sent it.
        for k in [
            "model",
            "system",
            "tools",
            "metadata",
            "max_tokens",
            "stream",
        ] {
            assert_eq!(body[k], messages_body(&[])[k], "{k}");
        }
        assert_eq!(
            c.header("x-api-key"),
            Some(KEY),
            "the key reaches the model"
        );
        assert!(
            body.to_string()
                .contains("Never edit files outside notes/."),
            "call {}: the constraint is forwarded",
            r["call"]
        );
        let v = forwarded_view(&body);
        assert_eq!(
            compactor::view::validate(&v),
            vec![],
            "call {}: tool calls pair legally",
            r["call"]
        );
        let sent = c.body.len() as u64 / 4;
        if r["status"] != "over_window" {
            assert!(
                sent <= r["w_eff"].as_u64().unwrap(),
                "call {}: {sent} tokens sent over the window",
                r["call"]
            );
        }
    }
    let bodies: Vec<Value> = calls.iter().map(Received::json).collect();
    let (stable, pairs) = assert_prefix_stable(&reports, &bodies, "messages");
    assert!(stable > 0 && pairs == 30, "{stable} of {pairs}");
    assert!(
        !contains(&store_bytes(&env), KEY),
        "the key is never stored"
    );
    assert_verified(&env, task, 31);
    let replayed = assert_replay_equals_forwarded(
        &env,
        task,
        &["--window", "12000", "--output-reserved", "2000"],
        &reports,
    );
    assert_eq!(replayed.len(), 31);
    // The record holds the whole conversation: the head, 31 answers, the ask, 30 results.
    let rows: i64 = env
        .conn()
        .query_row(
            "SELECT count(*) FROM task_message WHERE task_id = ?1",
            [task],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 1 + 1 + 31 + 30);
}

/// The issue's budget (window 12000, reserve 1500) over a 30-call
/// conversation that shrinks and folds: a plain replay at that budget
/// reads the live task's usage as the proxy did and derives all 30
/// forwarded views (it diverged at call 9 when it read the usage as
/// measuring the raw history), and at another budget it is a what-if on the
/// same basis.
#[test]
fn plain_replay_derives_every_forwarded_view_of_a_compacting_conversation() {
    let env = TestEnv::new();
    let model = Model::start();
    let budget = ["--window", "12000", "--output-reserved", "1500"];
    let proxy = Proxy::start(&env, model.port, &budget, None);
    let ask = "Read every file in notes/ and summarise them. [[reads 29]] Never edit files outside notes/.";
    drive(&proxy, ask, 40, "replay-session");
    let reports = proxy.wait_calls(30);
    let task = reports[0]["task"].as_str().unwrap().to_string();
    let fired: std::collections::BTreeSet<String> = reports
        .iter()
        .flat_map(|r| r["tiers_fired"].as_array().unwrap().clone())
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert!(
        fired.contains("shrink") && fired.contains("floor"),
        "the conversation shrinks and folds: {fired:?}"
    );
    let replayed = assert_replay_equals_forwarded(&env, &task, &budget, &reports);
    assert_eq!(replayed.len(), 30);
    assert!(
        replayed.iter().all(|c| c["status"] == "ok"),
        "every call within the trigger, as forwarded"
    );
    assert_verified(&env, &task, 30);
    // `sweep` (as `probe` and `report`, built on the same driver) reads the
    // live task as replay does: at the proxy's policy, every call within
    // the trigger, none over the window, none a breakthrough.
    let sweep = env.run(&[
        "sweep",
        "--task",
        &task,
        "--window",
        "12000",
        "--output-reserved",
        "1500",
        "--summarizer",
        "extractive",
        "--json",
    ]);
    sweep.success();
    let rows: Vec<Value> = sweep
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["schema"] == "compactor.sweep_row/1" && v["kind"] == "policy")
        .collect();
    assert!(!rows.is_empty(), "{}", sweep.stdout);
    for row in &rows {
        assert_eq!(row["calls"], 30, "{row}");
        assert_eq!(row["over_window_calls"], 0, "{row}");
        assert_eq!(row["breakthrough_calls"], 0, "{row}");
    }
    // Another budget: a what-if over the same record, on the same anchors.
    let wider = env.run(&[
        "replay",
        "--task",
        &task,
        "--json",
        "--window",
        "40000",
        "--output-reserved",
        "1500",
    ]);
    let wider = wider.replay_json();
    assert_eq!(wider["calls"].as_array().unwrap().len(), 30);
}

/// Upstream errors reach the client as they came (status, body, headers),
/// so that its own retry runs; the request stays recorded, and the retry
/// forwards the same view.
#[test]
fn upstream_429_and_500_pass_through() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let body = messages_body(&[json!({"role": "user", "content": "hello"})]);
    let limited = r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
    let failed = r#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#;
    model.then(Answer::Status(429, limited.into()));
    model.then(Answer::Status(500, failed.into()));
    let mut resp = agent()
        .post(proxy.url("/v1/messages"))
        .header("x-api-key", KEY)
        .send(body.to_string().as_bytes())
        .unwrap();
    assert_eq!(resp.status().as_u16(), 429);
    assert_eq!(
        resp.headers().get("x-stub").unwrap(),
        "yes",
        "headers pass through"
    );
    assert_eq!(resp.headers().get("retry-after").unwrap(), "0");
    assert_eq!(
        resp.body_mut().read_to_string().unwrap(),
        limited,
        "the body byte for byte"
    );
    let (status, text) = post(&proxy, "/v1/messages", &body, &[]);
    assert_eq!((status, text.unwrap().as_str()), (500, failed));
    let (status, text) = post(&proxy, "/v1/messages", &body, &[]);
    assert_eq!(status, 200, "{text:?}");
    let reports = proxy.wait_calls(3);
    let outcome: Vec<(&Value, &Value)> = reports
        .iter()
        .map(|r| (&r["upstream_status"], &r["outcome"]))
        .collect();
    assert_eq!(
        outcome,
        [
            (&json!(429), &json!("upstream_error")),
            (&json!(500), &json!("upstream_error")),
            (&json!(200), &json!("recorded"))
        ]
    );
    assert!(
        reports
            .iter()
            .all(|r| r["call"] == 1 && r["view_hash"] == reports[0]["view_hash"]),
        "a retry forwards the same view"
    );
    assert_eq!(
        reports
            .iter()
            .map(|r| r["attempt"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let task = reports[0]["task"].as_str().unwrap();
    assert_verified(&env, task, 3);
    // In words: each request, the second and third a retry of call 1.
    let run = env.run(&["replay", "--task", task, "--verify-forwarded"]);
    let lines: Vec<&str> = run.success().stdout.lines().collect();
    assert!(
        lines[0].starts_with("call    1 · request    1 · ") && lines[0].ends_with(" · ok"),
        "{}",
        run.stdout
    );
    for l in &lines[1..3] {
        assert!(
            l.starts_with("call    1 · request    ") && l.ends_with(" · ok · a retry"),
            "{}",
            run.stdout
        );
    }
}

/// The upstream breaks off mid-stream: the client's read fails (no clean
/// end), and no half assistant message is recorded.
#[test]
fn an_upstream_disconnect_mid_stream_reaches_the_client_and_records_nothing() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let body = messages_body(&[json!({"role": "user", "content": "hello [[reads 3]]"})]);
    model.then(Answer::CutAfter(300));
    // The client sees the stream break: the connection ends before the
    // answer does (the status and some bytes may have reached it first).
    match try_post(&proxy, "/v1/messages", &body, &[]) {
        Err(_) | Ok((200, Err(_))) => {}
        other => panic!("a broken answer reached the client as a whole one: {other:?}"),
    }
    let reports = proxy.wait_calls(1);
    assert_eq!(reports[0]["outcome"], "upstream_failed", "{}", reports[0]);
    let task = reports[0]["task"].as_str().unwrap();
    let generations: i64 = env
        .conn()
        .query_row(
            "SELECT count(*) FROM task_message WHERE task_id = ?1 AND kind = 'generation'",
            [task],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(generations, 0, "no half answer is recorded");
    // The client retries: the same call, the same view, now answered.
    let (status, text) = post(&proxy, "/v1/messages", &body, &[]);
    assert_eq!(status, 200);
    assert!(text.unwrap().contains("message_stop"));
    let reports = proxy.wait_calls(2);
    assert_eq!(
        (&reports[1]["call"], &reports[1]["outcome"]),
        (&json!(1), &json!("recorded"))
    );
    assert_eq!(reports[1]["view_hash"], reports[0]["view_hash"]);
}

/// A body that is not a request: 400 with a JSON error saying what is
/// wrong, and the store unchanged; nothing reaches the upstream.
#[test]
fn a_malformed_body_is_a_400_and_changes_nothing() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    drive(&proxy, "hello", 1, "s");
    let before = env.counts();
    let conv_rows = |env: &TestEnv| -> i64 {
        env.conn()
            .query_row("SELECT count(*) FROM proxy_call", [], |r| r.get(0))
            .unwrap()
    };
    let calls_before = conv_rows(&env);
    for (path, raw, want) in [
        ("/v1/messages", "{not json", "not a JSON object"),
        ("/v1/messages", r#"{"model":"m"}"#, "no \"messages\""),
        (
            "/v1/messages",
            r#"{"messages":[{"role":"robot","content":"x"}]}"#,
            "messages[0] has role \"robot\"",
        ),
        (
            "/v1/messages",
            r#"{"messages":[{"role":"user","content":[{"type":"text"}]}]}"#,
            "messages[0]",
        ),
        ("/v1/responses", r#"{"input":[3]}"#, "input[0] is a number"),
    ] {
        let mut resp = agent()
            .post(proxy.url(path))
            .header("content-type", "application/json")
            .send(raw.as_bytes())
            .unwrap();
        assert_eq!(resp.status().as_u16(), 400, "{raw}");
        let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(want), "{raw}: {message}");
        assert!(
            message.starts_with("compactor proxy: the request body is malformed"),
            "{message}"
        );
    }
    assert_eq!(env.counts(), before, "the store is unchanged");
    assert_eq!(conv_rows(&env), calls_before);
    assert_eq!(
        model.model_calls().len(),
        1,
        "nothing malformed was forwarded"
    );
}

/// Everything but the two model-call routes passes through as it came.
#[test]
fn other_requests_pass_through_unchanged() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let body = messages_body(&[json!({"role": "user", "content": "count me"})]);
    let (status, text) = post(
        &proxy,
        "/v1/messages/count_tokens?beta=true",
        &body,
        &[("x-api-key", KEY)],
    );
    assert_eq!(status, 200);
    let log = model.log.lock().unwrap().clone();
    let got = log.last().unwrap();
    assert_eq!(got.path, "/v1/messages/count_tokens?beta=true");
    assert_eq!(got.body, body.to_string().into_bytes(), "the body as sent");
    assert_eq!(
        text.unwrap(),
        json!({"input_tokens": body.to_string().len() / 4}).to_string()
    );
    let mut resp = agent().get(proxy.url("/v1/models")).call().unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        resp.body_mut()
            .read_to_string()
            .unwrap()
            .contains("stub-model")
    );
    let resp = agent().get(proxy.url("/nowhere")).call().unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    assert_eq!(env.counts(), [0, 0, 0], "nothing of it is recorded");
}

/// This is no open proxy and listens on loopback only unless told.
#[test]
fn requests_for_other_hosts_and_remote_listening_are_refused() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    // An absolute-form request line (a proxy request for another host).
    let mut s = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    s.write_all(
        b"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(
        answer.contains("no proxy request") || answer.contains("only to its configured upstream"),
        "{answer}"
    );
    // A page that rebinds a name to 127.0.0.1 sends its own Host.
    let mut s = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    s.write_all(b"GET /v1/models HTTP/1.1\r\nHost: evil.example:8787\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(
        model.log.lock().unwrap().is_empty(),
        "neither was forwarded"
    );
    let run = env.run(&["proxy", "--listen", "0.0.0.0:0"]);
    run.failure(2)
        .stderr_has("not a loopback address")
        .stderr_has("--allow-remote");
    let run = env.run(&["proxy", "--upstream", "http://api.example.com"]);
    run.failure(2)
        .stderr_has("plain http is allowed only to a loopback upstream");
    let mut cmd = env.bare_command();
    cmd.args(["--db", ":memory:", "proxy"]);
    env.finish(cmd).failure(2).stderr_has("store file");
}

/// Two conversations at once, their calls interleaved: each task's record
/// and views are what it gets alone.
#[test]
fn concurrent_conversations_do_not_interfere() {
    let alone: Vec<Vec<String>> = ["first", "second"]
        .iter()
        .map(|name| {
            let env = TestEnv::new();
            let model = Model::start();
            let proxy = Proxy::start(
                &env,
                model.port,
                &["--window", "12000", "--output-reserved", "2000"],
                None,
            );
            drive(&proxy, &format!("The {name} job. [[reads 12]]"), 20, name);
            proxy
                .wait_calls(13)
                .iter()
                .map(|r| r["view_hash"].as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Arc::new(Proxy::start(
        &env,
        model.port,
        &["--window", "12000", "--output-reserved", "2000"],
        None,
    ));
    drive_jobs_at_once(&proxy, &["first", "second"]);
    let reports = proxy.wait_calls(26);
    let mut by_task: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for r in &reports {
        by_task
            .entry(r["task"].as_str().unwrap().to_string())
            .or_default()
            .push(r["view_hash"].as_str().unwrap().to_string());
    }
    assert_eq!(by_task.len(), 2);
    let mut got: Vec<Vec<String>> = by_task.into_values().collect();
    let mut want = alone;
    got.sort();
    want.sort();
    assert_eq!(
        got, want,
        "each conversation's views are those it gets alone"
    );
}

/// The record reaches the database file while the proxy runs: its
/// checkpointer copies the WAL in, off the calls' path (no call waits for a
/// checkpoint's fsyncs), long before a call's own commit would (SQLite's
/// threshold, raised for the engine's connections to a backstop).
#[test]
fn the_proxy_checkpoints_its_record_off_the_calls_path() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Arc::new(Proxy::start(&env, model.port, &[], None));
    let before = std::fs::metadata(env.db()).unwrap().len();
    drive_jobs_at_once(&proxy, &["first"]);
    proxy.wait_calls(13);
    let wal = env.db().with_extension("db-wal");
    assert!(
        std::fs::metadata(&wal).unwrap().len() > 0,
        "the calls were committed to the WAL"
    );
    // The checkpointer runs within a second of a commit; allow far more.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(env.db()).unwrap().len() <= before {
        assert!(
            Instant::now() < deadline,
            "the database file never grew past {before} bytes while the proxy ran"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A request whose history no longer extends the record (the client went
/// back and edited) starts a new task, linked to the old one with the
/// reason; the old task's rows stay as they were.
#[test]
fn a_diverging_history_starts_a_linked_task() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let held = drive(&proxy, "Look at the notes. [[reads 3]]", 2, "s");
    let reports = proxy.wait_calls(2);
    let task = reports[0]["task"].as_str().unwrap().to_string();
    let rows_before: Vec<(i64, Vec<u8>)> = {
        let conn = env.conn();
        let mut st = conn
            .prepare("SELECT seq, row_hash FROM task_message WHERE task_id = ?1 ORDER BY seq")
            .unwrap();
        st.query_map([&task], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    // The client edits its second message (a rewind and edit).
    let mut edited = held[..3].to_vec();
    edited[2] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_stub_000", "content": "the file changed"}]});
    let mut body = messages_body(&edited);
    body["metadata"]["user_id"] = json!("{\"session_id\":\"s\"}");
    let (status, _) = post(&proxy, "/v1/messages", &body, &[]);
    assert_eq!(status, 200);
    let r = &proxy.wait_calls(3)[2];
    assert_ne!(r["task"], task.as_str(), "a new task");
    assert_eq!(r["started_from"], task.as_str());
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("differs from the record"),
        "{r}"
    );
    let conn = env.conn();
    let parent: Option<String> = conn
        .query_row(
            "SELECT parent_id FROM task WHERE id = ?1",
            [r["task"].as_str().unwrap()],
            |x| x.get(0),
        )
        .unwrap();
    assert_eq!(parent.as_deref(), Some(task.as_str()));
    let mut st = conn
        .prepare("SELECT seq, row_hash FROM task_message WHERE task_id = ?1 ORDER BY seq")
        .unwrap();
    let after: Vec<(i64, Vec<u8>)> = st
        .query_map([&task], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(after, rows_before, "no row of the old task was rewritten");
    assert_verified(&env, r["task"].as_str().unwrap(), 1);
    assert_verified(&env, &task, 2);
}

/// A crash at each of the proxy's chosen points (an injected abort, never a
/// timed kill), then a restart: what was recorded is whole (the store is
/// sound, no half answer), the client's retry forwards the view the engine
/// derives from the record, and the whole session verifies.
#[test]
fn a_crash_at_a_chosen_point_then_a_restart_re_derives_the_same_views() {
    for point in [
        "abort-after-request:3",
        "abort-mid-stream:3",
        "abort-after-response:3",
    ] {
        let env = TestEnv::new();
        let model = Model::start();
        let budget = ["--window", "9000", "--output-reserved", "1000"];
        let mut proxy = Proxy::start(&env, model.port, &budget, Some(point));
        let ask = "Read the notes. [[reads 8]] Never delete anything.";
        let mut messages = vec![json!({"role": "user", "content": ask})];
        let step = |proxy: &Proxy, messages: &mut Vec<Value>| -> Result<(), String> {
            let (status, text) = try_post(proxy, "/v1/messages", &messages_body(messages), &[])?;
            let text = text?;
            if status != 200 || !text.contains("message_stop") {
                return Err(format!("{status}: {text}"));
            }
            let k = messages.len() / 2;
            let id = format!("toolu_stub_{k:03}");
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Reading the next file."}, {"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("/notes/file_{:02}.txt", k + 1)}}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": read_output(k)}]}));
            Ok(())
        };
        step(&proxy, &mut messages).unwrap();
        step(&proxy, &mut messages).unwrap();
        if point.starts_with("abort-mid-stream") {
            // Part of the answer reaches the client; the rest is held back.
            model.then(Answer::HoldAfter(200));
        }
        assert!(
            step(&proxy, &mut messages).is_err(),
            "{point}: the third call did not complete"
        );
        let st = proxy.wait_exit();
        model.release();
        assert!(!st.success(), "{point}: the proxy aborted");
        let conn = env.conn();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "{point}");
        let generations: i64 = conn
            .query_row(
                "SELECT count(*) FROM task_message WHERE kind = 'generation'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let want = if point.starts_with("abort-after-response") {
            3
        } else {
            2
        };
        assert_eq!(generations, want, "{point}: whole answers only");
        drop(conn);
        // Restart on the same store; the client retries where it was.
        let proxy = Proxy::start(&env, model.port, &budget, None);
        step(&proxy, &mut messages).unwrap();
        let r = &proxy.wait_calls(1)[0];
        assert_eq!(r["call"], 3, "{point}: the retry is the same call");
        assert!(
            r.get("started_from").is_none(),
            "{point}: of the same task: {r}"
        );
        if point.starts_with("abort-after-response") {
            // The answer was recorded but never reached the client whole:
            // the retry superseded it, and it stays in the record, marked.
            assert_eq!(r["supersedes"], 3, "{r}");
            let conn = env.conn();
            let (seq, attempt, by): (i64, i64, i64) = conn
                .query_row(
                    "SELECT seq, attempt, by_attempt FROM proxy_superseded",
                    [],
                    |x| Ok((x.get(0)?, x.get(1)?, x.get(2)?)),
                )
                .unwrap();
            assert_eq!((attempt, by), (3, 4));
            let kind: String = conn
                .query_row(
                    "SELECT kind FROM task_message WHERE task_id = ?1 AND seq = ?2",
                    rusqlite::params![r["task"].as_str().unwrap(), seq],
                    |x| x.get(0),
                )
                .unwrap();
            assert_eq!(kind, "generation", "the superseded answer stays");
        }
        let recorded: Vec<String> = {
            let conn = env.conn();
            let mut st = conn
                .prepare("SELECT view_hash FROM proxy_call WHERE call = 3 ORDER BY attempt")
                .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert_eq!(recorded.len(), 2, "{point}: the first try and the retry");
        assert_eq!(
            recorded[0], recorded[1],
            "{point}: the restarted proxy derives the same view"
        );
        step(&proxy, &mut messages).unwrap();
        let after = proxy.wait_calls(2);
        let task = r["task"].as_str().unwrap();
        assert_eq!(after[1]["task"], task, "{point}: one task");
        assert_verified(&env, task, 5);
        let all = proxy_call_reports(&env, task);
        assert_replay_equals_forwarded(&env, task, &budget, &all);
    }
}

/// A small seeded generator (xorshift64*): the chaos test's fault plan is
/// the same at every run of a seed.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What a client that retries took from a conversation: the bodies the
/// upstream received (in order) and the ids of the answers it took whole.
struct Driven {
    received: Vec<Vec<u8>>,
    taken: Vec<String>,
    restarts: usize,
    faults: Vec<String>,
}

/// A client that plays `calls` model calls of one conversation and, as
/// Claude Code does, sends the same request again when an answer did not
/// come whole; `faults` are armed one per proxy process (the next one when
/// the proxy it was armed in has died and is started again).
fn drive_retrying(
    env: &TestEnv,
    model: &Model,
    budget: &[&str],
    calls: usize,
    mut faults: VecDeque<String>,
) -> Driven {
    let start = |fault: Option<&str>| Proxy::start(env, model.port, budget, fault);
    let mut armed = faults.pop_front();
    let mut used = Vec::new();
    used.extend(armed.clone());
    let mut proxy = start(armed.as_deref());
    let mut restarts = 0;
    let mut messages = vec![
        json!({"role": "user", "content": "Read the notes one by one. [[reads 99]] Never delete anything."}),
    ];
    let mut taken = Vec::new();
    for k in 0..calls {
        let mut tries = 0;
        let text = loop {
            tries += 1;
            assert!(tries < 10, "call {k}: no answer after {tries} tries");
            match try_post(&proxy, "/v1/messages", &messages_body(&messages), &[]) {
                Ok((200, Ok(text))) if text.contains("message_stop") => break text,
                _ => {}
            }
            // The answer did not come whole: the proxy died (an armed
            // fault), so start it again, the next fault armed, and retry.
            proxy.wait_exit();
            drop(proxy);
            restarts += 1;
            armed = faults.pop_front();
            used.extend(armed.clone());
            proxy = start(armed.as_deref());
        };
        let id = text
            .split("\"id\":\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .to_string();
        taken.push(id);
        let tool = format!("toolu_stub_{k:03}");
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Reading the next file."}, {"type": "tool_use", "id": tool, "name": "Read", "input": {"file_path": format!("/notes/file_{:02}.txt", k + 1)}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool, "content": read_output(k)}]}));
    }
    drop(proxy);
    Driven {
        received: model.model_calls().into_iter().map(|r| r.body).collect(),
        taken,
        restarts,
        faults: used,
    }
}

/// Chaos: one conversation of 24 calls at a budget that shrinks and folds,
/// the proxy aborted at seeded fault points (after recording a request,
/// mid-stream, after recording an answer), started again each time, the
/// client retrying. The upstream receives the sequence of requests an
/// uninterrupted run sends (each call's request the same bytes, however
/// often it was retried); there is one task; every answer the client took
/// is the record's answer to its call; the audit passes; and a plain replay
/// equals what was forwarded.
#[test]
fn faults_restarts_and_retries_converge_on_the_uninterrupted_views() {
    let budget = ["--window", "12000", "--output-reserved", "1500"];
    let calls = 24;
    let quiet_env = TestEnv::new();
    let quiet_model = Model::start();
    let quiet = drive_retrying(&quiet_env, &quiet_model, &budget, calls, VecDeque::new());
    assert_eq!(quiet.received.len(), calls);
    assert_eq!(quiet.restarts, 0);
    let mut points_fired = std::collections::BTreeSet::new();
    for seed in [7u64, 1_000_003, 0x5eed_cafe] {
        let mut rng = Seeded(seed);
        let faults: VecDeque<String> = (0..5)
            .map(|_| {
                let point = [
                    "abort-after-request",
                    "abort-mid-stream",
                    "abort-after-response",
                ][rng.below(3) as usize];
                format!("{point}:{}", 1 + rng.below(6))
            })
            .collect();
        let env = TestEnv::new();
        let model = Model::start();
        let run = drive_retrying(&env, &model, &budget, calls, faults);
        let label = format!("seed {seed}, faults {:?}", run.faults);
        assert!(
            run.restarts >= 3,
            "{label}: the faults fired ({} restarts)",
            run.restarts
        );
        // The faults that fired: one per restart, in the order armed.
        for f in &run.faults[..run.restarts] {
            points_fired.insert(f.split(':').next().unwrap().to_string());
        }
        // Each request the upstream received is the uninterrupted run's
        // request for some call, the calls in order, none left out.
        let mut last = 0usize;
        for (i, body) in run.received.iter().enumerate() {
            let k = quiet
                .received
                .iter()
                .position(|q| q == body)
                .unwrap_or_else(|| {
                    let table = |env: &TestEnv| -> String {
                        let task: String = env
                            .conn()
                            .query_row("SELECT task_id FROM proxy_conversation", [], |r| r.get(0))
                            .unwrap();
                        proxy_call_reports(env, &task)
                            .iter()
                            .map(|r| {
                                format!(
                                    "{} {} {} {} {} {} {}\n",
                                    r["call"],
                                    r["tokens_before"],
                                    r["tokens_after"],
                                    r["tiers_fired"],
                                    r["status"],
                                    r["estimated_messages"],
                                    &r["view_hash"].as_str().unwrap()[..8]
                                )
                            })
                            .collect()
                    };
                    panic!(
                        "{label}: request {i} is none the uninterrupted run sent:\n{}\ncall, tokens before and after, tiers, status, view estimate and hash; uninterrupted:\n{}\nwith faults:\n{}",
                        first_difference(body, &quiet.received),
                        table(&quiet_env),
                        table(&env)
                    )
                });
            assert!(
                k == last || k == last + 1 || (i == 0 && k == 0),
                "{label}: request {i} is call {k} after call {last}"
            );
            last = k;
        }
        assert_eq!(last, calls - 1, "{label}");
        assert_eq!(
            run.taken, quiet.taken,
            "{label}: the client took the same answers"
        );
        let conn = env.conn();
        let tasks: Vec<String> = conn
            .prepare("SELECT task_id FROM proxy_conversation")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(tasks.len(), 1, "{label}: one task");
        let task = &tasks[0];
        // The record's answers (those no retry superseded) are the ones the
        // client took, in order: no acknowledged answer lost.
        let answers: Vec<String> = conn
            .prepare(
                "SELECT gen_id FROM task_message WHERE task_id = ?1 AND kind = 'generation'
                 AND seq NOT IN (SELECT seq FROM proxy_superseded WHERE task_id = ?1) ORDER BY seq",
            )
            .unwrap()
            .query_map([task], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(answers, run.taken, "{label}");
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "{label}");
        let forwarded: i64 = conn
            .query_row("SELECT count(*) FROM proxy_call", [], |r| r.get(0))
            .unwrap();
        drop(conn);
        assert_verified(&env, task, forwarded as usize);
        let reports = proxy_call_reports(&env, task);
        let replayed = assert_replay_equals_forwarded(&env, task, &budget, &reports);
        assert_eq!(replayed.len(), calls, "{label}");
    }
    assert_eq!(
        points_fired.len(),
        3,
        "the seeds fire every kind of fault: {points_fired:?}"
    );
}

/// Where a request differs from the closest one of `among` (the same
/// number of messages, or the most), for a failure message.
fn first_difference(body: &[u8], among: &[Vec<u8>]) -> String {
    let parse = |b: &[u8]| -> Vec<Value> {
        serde_json::from_slice::<Value>(b).unwrap()["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let got = parse(body);
    let best = among
        .iter()
        .map(|b| parse(b))
        .min_by_key(|m| {
            let shared = m.iter().zip(&got).take_while(|(a, b)| a == b).count();
            (m.len().abs_diff(got.len()), usize::MAX - shared)
        })
        .unwrap_or_default();
    let i = best.iter().zip(&got).take_while(|(a, b)| a == b).count();
    let cut = |v: Option<&Value>| {
        let t = v.map_or("(none)".to_string(), Value::to_string);
        t.chars().take(1500).collect::<String>()
    };
    format!(
        "{} messages, the closest has {}; message {i} differs:\n got: {}\nwant: {}",
        got.len(),
        best.len(),
        cut(got.get(i)),
        cut(best.get(i))
    )
}

/// The forwarded calls of `task` as the store keeps them, shaped as the
/// proxy's `--json` lines (call, view hash, tokens, tiers, status).
pub fn proxy_call_reports(env: &TestEnv, task: &str) -> Vec<Value> {
    env.conn()
        .prepare(
            "SELECT call, view_hash, report FROM proxy_call WHERE task_id = ?1 ORDER BY attempt",
        )
        .unwrap()
        .query_map([task], |x| {
            let report: String = x.get(2)?;
            let mut v: Value = serde_json::from_str(&report).unwrap();
            v["call"] = json!(x.get::<_, i64>(0)?);
            v["view_hash"] = json!(x.get::<_, String>(1)?);
            v["task"] = json!(task);
            Ok(v)
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

// ---------------------------------------------------------------- the real clients

/// Write `n` files of about `lines` lines under `dir/notes`.
pub fn write_notes(dir: &Path, n: usize, lines: usize) {
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    for k in 1..=n {
        let text: String = (1..=lines)
            .map(|i| format!("note {k} line {i}: the export job batches reads by tenant {i}\n"))
            .collect();
        std::fs::write(dir.join("notes").join(format!("file_{k:02}.txt")), text).unwrap();
    }
}

const LIVE_ASK: &str = "Read every file in notes/ one by one and summarise them. [[reads 40]] Never edit files outside notes/.";
const CONSTRAINT: &str = "Never edit files outside notes/.";

/// What both clients' runs must show, from the stub's side and the proxy's.
fn check_live_run(env: &TestEnv, proxy: &Proxy, model: &Model, key: &str, field: &str) {
    let calls = model.model_calls();
    let reports = proxy.wait_calls(calls.len());
    assert!(
        calls.len() >= 41,
        "a long turn: {} model calls",
        calls.len()
    );
    assert!(
        reports
            .iter()
            .any(|r| !r["tiers_fired"].as_array().unwrap().is_empty()),
        "tiers fired"
    );
    let tasks: std::collections::BTreeSet<&str> = reports
        .iter()
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    let over: Vec<&Value> = reports
        .iter()
        .filter(|r| r["status"] == "over_window")
        .collect();
    eprintln!(
        "{} calls, {} tasks, {} over_window: {over:?}",
        reports.len(),
        tasks.len(),
        over.len()
    );
    let mut bodies = Vec::new();
    for (r, c) in reports.iter().zip(&calls) {
        let body = c.json();
        let sent = c.body.len() as u64 / 4;
        if r["status"] != "over_window" {
            assert!(
                sent <= r["w_eff"].as_u64().unwrap(),
                "call {}: {sent} tokens sent, w_eff {}",
                r["call"],
                r["w_eff"]
            );
        }
        if r["task"] == reports[0]["task"] {
            assert!(
                body.to_string().contains(CONSTRAINT),
                "call {}: the first ask's constraint is forwarded",
                r["call"]
            );
        }
        match field {
            "messages" => {
                assert_eq!(c.header("x-api-key"), Some(key));
                assert_eq!(
                    compactor::view::validate(&forwarded_view(&body)),
                    vec![],
                    "call {}",
                    r["call"]
                );
            }
            _ => {
                assert_eq!(
                    c.header("authorization"),
                    Some(format!("Bearer {key}").as_str())
                );
                assert_pairs(&body, r);
            }
        }
        bodies.push(body);
    }
    let (stable, pairs) = assert_prefix_stable(&reports, &bodies, field);
    eprintln!("prefix-stable pairs: {stable} of {pairs}");
    // How far the engine's prediction is from what the model counted.
    let mut errors: Vec<i64> = reports
        .iter()
        .zip(&calls)
        .map(|(r, c)| {
            let sent = (c.body.len() / 4) as i64;
            (r["tokens_after"].as_i64().unwrap() - sent) * 1000 / sent.max(1)
        })
        .collect();
    errors.sort();
    eprintln!(
        "prediction error (per mille of the tokens sent): median {}, range {} to {}",
        errors[errors.len() / 2],
        errors[0],
        errors[errors.len() - 1]
    );
    assert!(!contains(&store_bytes(env), key), "the key is never stored");
    for t in tasks {
        let n = reports.iter().filter(|r| r["task"] == t).count();
        assert_verified(env, t, n);
    }
}

/// Responses input: every call's output follows its call.
fn assert_pairs(body: &Value, r: &Value) {
    let mut open: Vec<String> = Vec::new();
    for it in body["input"].as_array().unwrap() {
        let id = it["call_id"].as_str().unwrap_or("").to_string();
        match it["type"].as_str().unwrap_or("") {
            "function_call" | "custom_tool_call" => open.push(id),
            "function_call_output" | "custom_tool_call_output" => {
                assert!(
                    open.contains(&id),
                    "call {}: an output without its call {id}",
                    r["call"]
                );
                open.retain(|o| *o != id);
            }
            _ => {}
        }
    }
    assert!(
        open.is_empty(),
        "call {}: calls without output {open:?}",
        r["call"]
    );
}

const LIVE_BUDGET: &[&str] = &["--window", "40000", "--output-reserved", "4000"];

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn claude_code_runs_a_long_tool_heavy_turn_through_the_proxy() {
    let Some(bin) = client("claude", "claude_code_through_the_proxy") else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    write_notes(&project, 40, 160);
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, LIVE_BUDGET, None);
    let mut cmd = client_command(&bin, &env.home(), &project);
    cmd.env(
        "ANTHROPIC_BASE_URL",
        format!("http://127.0.0.1:{}", proxy.port),
    )
    .env("ANTHROPIC_API_KEY", KEY)
    .args(["-p", LIVE_ASK, "--allowedTools", "Read"]);
    let (status, out, err) = run_bounded_for(cmd, Duration::from_secs(600));
    assert_eq!(
        status,
        0,
        "claude failed:\n{out}\n{err}\nproxy:\n{}",
        proxy.stderr.lock().unwrap()
    );
    assert!(out.contains("All files read."), "{out}");
    check_live_run(&env, &proxy, &model, KEY, "messages");
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn codex_runs_a_long_tool_heavy_turn_through_the_proxy() {
    let Some(bin) = client("codex", "codex_through_the_proxy") else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    write_notes(&project, 40, 160);
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, LIVE_BUDGET, None);
    let home = env.home();
    codex_config(&home, proxy.port);
    let mut cmd = client_command(&bin, &home, &project);
    cmd.env("STUB_API_KEY", KEY)
        .args(["exec", "--skip-git-repo-check", LIVE_ASK]);
    let (status, out, err) = run_bounded_for(cmd, Duration::from_secs(600));
    assert_eq!(
        status,
        0,
        "codex failed:\n{out}\n{err}\nproxy:\n{}",
        proxy.stderr.lock().unwrap()
    );
    assert!(out.contains("All files read."), "{out}");
    check_live_run(&env, &proxy, &model, KEY, "input");
}

/// A conversation whose first ask is the prompt of another's `Agent` call is
/// its subagent; another first message in the same session is a side
/// request; both are tasks of their own, linked to their parent.
#[test]
fn subagents_and_side_requests_are_linked_to_their_parent() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let with_session = |messages: &[Value]| {
        let mut b = messages_body(messages);
        b["metadata"]["user_id"] = json!("{\"session_id\":\"parent-session\"}");
        b
    };
    // The parent's call: its answer calls a subagent.
    let ask = json!({"role": "user", "content": "Plan the migration. [[agent Survey the schema files.]]"});
    let (status, text) = post(
        &proxy,
        "/v1/messages",
        &with_session(std::slice::from_ref(&ask)),
        &[],
    );
    assert_eq!(status, 200);
    assert!(text.unwrap().contains("Survey the schema files."));
    let parent = proxy.wait_calls(1)[0]["task"].as_str().unwrap().to_string();
    // The subagent's own conversation: its system prompt, its first ask the prompt.
    let subagent = |first: &str| {
        let mut b = with_session(&[
            json!({"role": "user", "content": [{"type": "text", "text": "<system-reminder>r</system-reminder>"}, {"type": "text", "text": first}]}),
        ]);
        b["system"] = json!([{"type": "text", "text": "You are a subagent."}]);
        b
    };
    let (status, _) = post(
        &proxy,
        "/v1/messages",
        &subagent("Survey the schema files."),
        &[],
    );
    assert_eq!(status, 200);
    let r = &proxy.wait_calls(2)[1];
    assert_eq!(r["started_from"], parent.as_str(), "{r}");
    assert!(
        r["reason"].as_str().unwrap().starts_with("a subagent of"),
        "{r}"
    );
    // Another first message in the session: a side request.
    let mut title = subagent("Write a title for this session.");
    title["system"] = json!([{"type": "text", "text": "You write titles."}]);
    let (status, _) = post(&proxy, "/v1/messages", &title, &[]);
    assert_eq!(status, 200);
    let r = &proxy.wait_calls(3)[2];
    assert_eq!(r["started_from"], parent.as_str(), "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .starts_with("a side request of the session"),
        "{r}"
    );
    let parent_of = |task: &str| -> Option<String> {
        env.conn()
            .query_row("SELECT parent_id FROM task WHERE id = ?1", [task], |x| {
                x.get(0)
            })
            .unwrap()
    };
    assert_eq!(
        parent_of(r["task"].as_str().unwrap()).as_deref(),
        Some(parent.as_str())
    );
    // The same session and system prompt with another first message: the
    // client started anew (it compacted or cleared), linked to the first.
    let (status, _) = post(
        &proxy,
        "/v1/messages",
        &with_session(&[
            json!({"role": "user", "content": "This session continues from a summary."}),
        ]),
        &[],
    );
    assert_eq!(status, 200);
    let r = &proxy.wait_calls(4)[3];
    assert_eq!(r["started_from"], parent.as_str(), "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("started its history anew"),
        "{r}"
    );
    // `tasks` lists the linked tasks under their parent.
    let tasks = env.tasks();
    let children: Vec<&Value> = tasks
        .iter()
        .filter(|t| t["parent"] == parent.as_str())
        .collect();
    assert_eq!(children.len(), 3, "{tasks:#?}");
}

// ---------------------------------------------------------------- limits, timeouts and targets

/// Wait (bounded) until `f` holds.
fn eventually(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A raw HTTP exchange with the proxy: what it answered (up to the end of
/// the connection, or the first 4 KB when it keeps it open).
fn raw_exchange(proxy: &Proxy, request: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.len() >= 12 {
                    let text = String::from_utf8_lossy(&answer);
                    // A head and a body whose length it declares.
                    if let Some(len) = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                    {
                        let head = text.find("\r\n\r\n").unwrap() + 4;
                        if answer.len() >= head + len {
                            break;
                        }
                    }
                }
            }
            Err(e) => panic!("no answer from the proxy: {e}"),
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// Targets not in origin form are answered by the proxy itself: never sent
/// to the upstream (nor to port 80 of its host), the key with them.
#[test]
fn targets_that_are_not_a_path_are_answered_by_the_proxy() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let key = format!("x-api-key: {KEY}\r\n");
    let options = raw_exchange(
        &proxy,
        format!("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n{key}Connection: close\r\n\r\n")
            .as_bytes(),
    );
    assert!(options.starts_with("HTTP/1.1 204"), "{options}");
    assert!(options.contains("allow: "), "{options}");
    let star = raw_exchange(
        &proxy,
        format!("GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n{key}Connection: close\r\n\r\n").as_bytes(),
    );
    assert!(star.starts_with("HTTP/1.1 400"), "{star}");
    let connect = raw_exchange(
        &proxy,
        format!("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n{key}Connection: close\r\n\r\n").as_bytes(),
    );
    assert!(connect.starts_with("HTTP/1.1 403"), "{connect}");
    let absolute = raw_exchange(
        &proxy,
        format!("GET http://127.0.0.1:{}/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n{key}Connection: close\r\n\r\n", model.port).as_bytes(),
    );
    assert!(absolute.starts_with("HTTP/1.1 403"), "{absolute}");
    assert!(
        model.log.lock().unwrap().is_empty(),
        "nothing reached the upstream"
    );
    // An origin-form request still goes through.
    let resp = agent().get(proxy.url("/v1/models")).call().unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(model.log.lock().unwrap().len(), 1);
}

/// A declared body over the cap gets 413 at once, before any of it is sent;
/// one that outgrows the cap as it arrives gets 413 too; neither is
/// recorded or forwarded.
#[test]
fn a_body_over_the_cap_is_refused_at_once() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &["--max-body-mb", "1"], None);
    let declared = raw_exchange(
        &proxy,
        b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 629145600\r\n\r\n",
    );
    assert!(declared.starts_with("HTTP/1.1 413"), "{declared}");
    assert!(declared.contains("--max-body-mb"), "{declared}");
    // Sent in chunks with no declared length: refused once it passes 1 MiB.
    let big = "x".repeat(2 << 20);
    let body = messages_body(&[json!({"role": "user", "content": big})]).to_string();
    let mut req = b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for piece in body.as_bytes().chunks(64 << 10) {
        req.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        req.extend_from_slice(piece);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let mut s = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // The proxy may answer and close before all of it is written.
    let _ = s.write_all(&req);
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // The default cap takes this body.
    let proxy = Proxy::start(&env, model.port, &[], None);
    let (status, _) = post(
        &proxy,
        "/v1/messages",
        &messages_body(&[json!({"role": "user", "content": big})]),
        &[],
    );
    assert_eq!(status, 200);
    assert_eq!(model.model_calls().len(), 1, "only the last was forwarded");
}

/// Credentials in `--upstream` are sent to the upstream as Basic
/// authorization (when the client sends none of its own) and never shown:
/// not on stderr, not in a 502 body, not in an error about the URL.
#[test]
fn credentials_in_the_upstream_url_are_never_shown() {
    let env = TestEnv::new();
    let model = Model::start();
    let secret = "s3cret-pass";
    let proxy = Proxy::start_command(
        proxy_command(
            &env,
            &format!("http://me:{secret}@127.0.0.1:{}", model.port),
        ),
        None,
    );
    let (status, _) = one_ask(&proxy, "hi");
    assert_eq!(status, 200);
    let got = model.model_calls();
    assert_eq!(
        got[0].header("authorization"),
        Some("Basic bWU6czNjcmV0LXBhc3M=")
    );
    // A client's own authorization is kept.
    let (status, _) = post(
        &proxy,
        "/v1/models",
        &json!({}),
        &[("authorization", "Bearer sk-own")],
    );
    assert_eq!(status, 404);
    let last = model.log.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last.header("authorization"), Some("Bearer sk-own"));
    drop(proxy);
    // An upstream that is not there: a 502 that names it without the password.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let proxy = Proxy::start_command(
        proxy_command(&env, &format!("http://me:{secret}@127.0.0.1:{port}")),
        None,
    );
    for path in ["/v1/messages", "/v1/models"] {
        let (status, text) = post(
            &proxy,
            path,
            &messages_body(&[json!({"role": "user", "content": "hi"})]),
            &[],
        );
        let text = text.unwrap();
        assert_eq!(status, 502, "{text}");
        assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
        assert!(!text.contains(secret) && !text.contains("me:"), "{text}");
    }
    proxy.wait_calls(1);
    let stderr = Arc::clone(&proxy.stderr);
    eventually("the proxy notes the upstream it cannot reach", || {
        stderr.lock().unwrap().contains("cannot reach the upstream")
    });
    let text = stderr.lock().unwrap().clone();
    assert!(!text.contains(secret), "{text}");
    drop(proxy);
    let run = env.run(&[
        "proxy",
        "--upstream",
        &format!("http://me:{secret}@api.example.com"),
    ]);
    run.failure(2).stderr_has("***@api.example.com");
    assert!(!run.stderr.contains(secret), "{}", run.stderr);
}

/// The upstream's timeouts, and a client that leaves: a stalled upstream is
/// given up at the first-byte timeout (504) or the idle timeout (the stream
/// ends in an error), and when the client goes away its upstream request
/// is dropped at once (the stub sees its connection closed), whatever the
/// timeouts; each call's end is recorded.
#[test]
fn a_stalled_upstream_times_out_and_a_departed_client_frees_it() {
    let env = TestEnv::new();
    let model = Model::start();
    let quick = ["--first-byte-timeout", "1", "--idle-timeout", "1"];
    let proxy = Proxy::start(&env, model.port, &quick, None);
    let body = |text: &str| messages_body(&[json!({"role": "user", "content": text})]);
    model.then(Answer::Stall);
    let (status, text) = post(&proxy, "/v1/messages", &body("no head"), &[]);
    let text = text.unwrap();
    assert_eq!(status, 504, "{text}");
    assert!(text.contains("--first-byte-timeout"), "{text}");
    eventually("the stalled request is dropped", || {
        model.dropped.load(std::sync::atomic::Ordering::SeqCst) == 1
    });
    model.then(Answer::StallAfter(150));
    match try_post(&proxy, "/v1/messages", &body("a head, then nothing"), &[]) {
        Ok((200, Err(_))) | Err(_) => {}
        other => panic!("a stalled stream reached the client as a whole answer: {other:?}"),
    }
    eventually("the idle stream is dropped", || {
        model.dropped.load(std::sync::atomic::Ordering::SeqCst) == 2
    });
    let reports = proxy.wait_calls(2);
    assert_eq!(reports[0]["outcome"], "upstream_failed", "{}", reports[0]);
    assert_eq!(reports[0]["upstream_status"], Value::Null);
    assert_eq!(reports[1]["outcome"], "upstream_failed", "{}", reports[1]);
    drop(proxy);

    // Long timeouts (the defaults): the client leaving is what frees them.
    let proxy = Proxy::start(&env, model.port, &[], None);
    for (i, stall) in [Answer::StallAfter(150), Answer::Stall]
        .into_iter()
        .enumerate()
    {
        model.then(stall);
        let mut s = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
        let b = body(&format!("the client leaves {i}")).to_string();
        s.write_all(
            format!(
                "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
                b.len()
            )
            .as_bytes(),
        )
        .unwrap();
        eventually("the request reaches the upstream", || {
            model.model_calls().len() == 3 + i
        });
        if i == 0 {
            // The head and the first bytes arrive, then the client leaves.
            let mut buf = [0u8; 64];
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            assert!(s.read(&mut buf).unwrap() > 0);
        }
        drop(s);
        eventually(
            "the upstream request of a departed client is dropped",
            || model.dropped.load(std::sync::atomic::Ordering::SeqCst) == 3 + i,
        );
        let r = &proxy.wait_calls(i + 1)[i];
        assert_eq!(r["outcome"], "client_gone", "{r}");
    }
}

/// The same command run under an open-file limit (`ulimit -n`).
fn under_file_limit(cmd: std::process::Command, limit: u32) -> std::process::Command {
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        sh.current_dir(dir);
    }
    sh
}

/// A process's thread count and open files, from /proc.
fn threads_and_files(pid: u32) -> (usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let files = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    (threads, files)
}

/// A process's CPU time so far (user and system), in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name (which may hold spaces) in parens.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after it.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// The one task the proxy `reports` are of, checking that a tier fired at
/// one of its calls at least.
fn one_task_that_compacted(reports: &[Value]) -> String {
    let task = reports[0]["task"].as_str().unwrap().to_string();
    assert!(
        reports.iter().all(|r| r["task"] == task.as_str()),
        "one task"
    );
    assert!(
        reports
            .iter()
            .any(|r| !r["tiers_fired"].as_array().unwrap().is_empty()),
        "tiers fired"
    );
    task
}

/// A one-message Messages request, `text` its ask: the status and body.
fn one_ask(proxy: &Proxy, text: &str) -> (u16, Result<String, String>) {
    post(
        proxy,
        "/v1/messages",
        &messages_body(&[json!({"role": "user", "content": text})]),
        &[],
    )
}

/// `compactor proxy` on a free loopback port of `env`'s store, its calls
/// reported as JSON, in front of the upstream at `url`.
fn proxy_command(env: &TestEnv, url: &str) -> std::process::Command {
    let mut cmd = env.std_command();
    cmd.arg("--db").arg(env.db()).args([
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--json",
        "--upstream",
        url,
    ]);
    cmd
}

/// Threads and open files a proxy may hold, whatever the conversations:
/// its runtime's two, the body parsers (4), the engine's two, its
/// checkpointer and the process's own; three standard streams, the
/// listener, the runtime's event queue and the engine's four store
/// connections and the checkpointer's, with their WAL files, and the
/// connections in flight.
const THREAD_BOUND: usize = 12;
const FILE_BOUND: usize = 96;

/// Soak: 300 conversations (12 clients at a time) through a proxy whose
/// open files are limited to 128: every one is answered, and the proxy's
/// threads and open files stay under a fixed bound, well below the limit;
/// conversations pushed out of memory by the cap are rebuilt from the
/// record when they return (the same task, the next call).
#[test]
fn three_hundred_conversations_under_an_open_file_limit_of_128() {
    let env = TestEnv::new();
    let model = Model::start();
    let mut cmd = proxy_command(&env, &format!("http://127.0.0.1:{}", model.port));
    cmd.args(["--max-conversations", "16"]);
    let proxy = Arc::new(Proxy::start_command(under_file_limit(cmd, 128), None));
    let pid = proxy.pid();
    let limit = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    assert!(
        limit
            .lines()
            .any(|l| l.starts_with("Max open files") && l.split_whitespace().nth(3) == Some("128")),
        "{limit}"
    );
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let peak = Arc::new(Mutex::new((0usize, 0usize)));
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let (t, f) = threads_and_files(pid);
                let mut p = peak.lock().unwrap();
                *p = (p.0.max(t), p.1.max(f));
                drop(p);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let one = |proxy: &Proxy, c: usize, history: &[Value]| -> Result<(), String> {
        let mut body = messages_body(history);
        body["metadata"]["user_id"] = Value::String(format!("{{\"session_id\":\"soak-{c}\"}}"));
        match try_post(proxy, "/v1/messages", &body, &[])? {
            (200, Ok(text)) if text.contains("message_stop") => Ok(()),
            other => Err(format!("conversation {c}: {other:?}")),
        }
    };
    let ask = |c: usize| json!({"role": "user", "content": format!("Conversation {c}: summarise the notes.")});
    let clients: Vec<_> = (0..12)
        .map(|w| {
            let proxy = Arc::clone(&proxy);
            std::thread::spawn(move || -> Vec<String> {
                (0..25)
                    .filter_map(|i| one(&proxy, w * 25 + i, &[ask(w * 25 + i)]).err())
                    .collect()
            })
        })
        .collect();
    let failed: Vec<String> = clients
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(
        failed.is_empty(),
        "{} unanswered: {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
    let first = proxy.wait_calls(300);
    // Every tenth conversation returns, long pushed out of memory.
    for c in (0..300).step_by(10) {
        let history = [
            ask(c),
            json!({"role": "assistant", "content": [{"type": "text", "text": "All files read."}]}),
            json!({"role": "user", "content": "And now the next step."}),
        ];
        one(&proxy, c, &history).unwrap();
    }
    let all = proxy.wait_calls(330);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    sampler.join().unwrap();
    let tasks: std::collections::BTreeSet<&str> =
        first.iter().map(|r| r["task"].as_str().unwrap()).collect();
    assert_eq!(tasks.len(), 300, "one task per conversation");
    for r in &all[300..] {
        assert_eq!(r["call"], 2, "a returning conversation goes on: {r}");
        assert!(tasks.contains(r["task"].as_str().unwrap()), "{r}");
        assert!(r.get("started_from").is_none(), "{r}");
    }
    let (threads, files) = *peak.lock().unwrap();
    eprintln!("peak over 300 conversations: {threads} threads, {files} open files");
    assert!(threads > 0 && threads <= THREAD_BOUND, "{threads} threads");
    assert!(files > 0 && files <= FILE_BOUND, "{files} open files");
    let now = threads_and_files(pid);
    assert!(now.0 <= THREAD_BOUND && now.1 <= FILE_BOUND, "{now:?}");
}

/// Out of files, the accept loop waits before accepting again and says so
/// at most once per interval (not once per attempt); once files are free
/// again it serves as before.
#[test]
fn out_of_files_the_accept_loop_backs_off_and_recovers() {
    let env = TestEnv::new();
    let model = Model::start();
    let cmd = proxy_command(&env, &format!("http://127.0.0.1:{}", model.port));
    let proxy = Proxy::start_command(under_file_limit(cmd, 64), None);
    // Idle connections until the proxy can open no more files.
    let idle: Vec<TcpStream> = (0..90)
        .map(|_| TcpStream::connect(("127.0.0.1", proxy.port)).unwrap())
        .collect();
    let stderr = Arc::clone(&proxy.stderr);
    eventually("the proxy runs out of files", || {
        stderr.lock().unwrap().contains("accept failed")
    });
    // Two seconds of failing accepts: one note, not thousands, and the loop
    // waits between attempts instead of spinning (a spinning loop burns
    // the whole two seconds of a core; one that waits, next to nothing).
    let cpu_before = cpu_ticks(proxy.pid());
    std::thread::sleep(Duration::from_secs(2));
    let cpu = cpu_ticks(proxy.pid()) - cpu_before;
    let notes = stderr.lock().unwrap().matches("accept failed").count();
    assert_eq!(notes, 1, "{}", stderr.lock().unwrap());
    assert!(
        cpu < 25,
        "{cpu} clock ticks of CPU in two seconds of failing accepts"
    );
    drop(idle);
    let (status, _) = one_ask(&proxy, "files again");
    assert_eq!(status, 200);
}

/// A recorded model name (or any recorded text a table shows) holding
/// terminal escapes is printed with them made visible, in `tasks` and
/// `tasks --wide`.
#[test]
fn recorded_escapes_are_shown_visibly_in_task_tables() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let mut body =
        messages_body(&[json!({"role": "user", "content": "title \u{1b}]0;owned\u{7} here"})]);
    body["model"] = json!("claude-\u{1b}[31mred\u{1b}[0m");
    let (status, _) = post(&proxy, "/v1/messages", &body, &[]);
    assert_eq!(status, 200);
    proxy.wait_calls(1);
    for args in [&["tasks"][..], &["tasks", "--wide"]] {
        let run = env.run(args);
        run.success();
        assert!(
            !run.stdout.contains('\u{1b}') && !run.stdout.contains('\u{7}'),
            "{args:?}:\n{}",
            run.stdout
        );
    }
    let wide = env.run(&["tasks", "--wide"]);
    assert!(
        wide.stdout.contains("claude-\\u{1b}[31mred"),
        "{}",
        wide.stdout
    );
}

/// Conversations pushed out of memory at every call (a cap of one) are
/// rebuilt from the record each time and forward the views they forward
/// when kept.
#[test]
fn conversations_rebuilt_from_the_record_forward_the_same_views() {
    let budget = ["--window", "12000", "--output-reserved", "2000"];
    let views = |extra: &[&str]| -> Vec<(String, String)> {
        let env = TestEnv::new();
        let model = Model::start();
        let mut args = budget.to_vec();
        args.extend_from_slice(extra);
        let proxy = Arc::new(Proxy::start(&env, model.port, &args, None));
        drive_jobs_at_once(&proxy, &["first", "second", "third"]);
        let mut out: Vec<(String, String)> = proxy
            .wait_calls(39)
            .iter()
            .map(|r| {
                (
                    format!("{}/{:02}", r["task"].as_str().unwrap(), r["call"]),
                    r["view_hash"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        out.sort();
        out
    };
    let kept = views(&[]);
    assert_eq!(kept.len(), 39);
    assert_eq!(views(&["--max-conversations", "1"]), kept);
}

// ---------------------------------------------------------------- Chat Completions

/// A Chat Completions answer as a client reads it (SSE chunks or one
/// JSON object): the assistant message it sends back.
fn chat_message(text: &str, streamed: bool) -> Value {
    if !streamed {
        let v: Value = serde_json::from_str(text).unwrap();
        let mut m = v["choices"][0]["message"].clone();
        if m["tool_calls"].as_array().is_some_and(|c| c.is_empty()) {
            m.as_object_mut().unwrap().remove("tool_calls");
        }
        return m;
    }
    let (mut content, mut reasoning) = (String::new(), String::new());
    let mut calls: Vec<Value> = Vec::new();
    let mut done = false;
    for data in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        if data == "[DONE]" {
            done = true;
            continue;
        }
        let c: Value = serde_json::from_str(data).unwrap();
        let d = &c["choices"][0]["delta"];
        content.push_str(d["content"].as_str().unwrap_or(""));
        reasoning.push_str(d["reasoning_content"].as_str().unwrap_or(""));
        for t in d["tool_calls"].as_array().into_iter().flatten() {
            if t["id"].is_string() {
                calls.push(json!({"id": t["id"], "type": "function",
                    "function": {"name": t["function"]["name"], "arguments": ""}}));
            }
            let last = calls.last_mut().unwrap();
            let so_far = last["function"]["arguments"].as_str().unwrap().to_string();
            last["function"]["arguments"] =
                Value::String(so_far + t["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    assert!(done, "the stream ends with [DONE]");
    let mut m = json!({"role": "assistant", "content": content});
    if !reasoning.is_empty() {
        m["reasoning_content"] = Value::String(reasoning);
    }
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls);
    }
    m
}

/// A Chat Completions body as OpenCode sends it.
fn chat_body(messages: &[Value], stream: bool) -> Value {
    json!({
        "model": "stub-model",
        "max_tokens": 1000,
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": "read", "description": "read a file",
                   "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}}}}],
        "tool_choice": "auto",
        "stream": stream,
        "stream_options": {"include_usage": true},
    })
}

const CHAT_SYSTEM: &str = "You are a test agent.";
const CHAT_BUDGET: [&str; 4] = ["--window", "12000", "--output-reserved", "2000"];

/// A proxy forwarding to `upstream` (a base URL).
fn chat_proxy(env: &TestEnv, upstream: &str) -> Proxy {
    let mut cmd = env.std_command();
    cmd.arg("--db")
        .arg(env.db())
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--json",
            "--upstream",
            upstream,
        ])
        .args(CHAT_BUDGET);
    Proxy::start_command(cmd, None)
}

/// Drive a Chat Completions conversation as OpenCode does: system message,
/// ask, then each call's tool result (a file's text) until the model
/// answers with text; every other call whole (not streamed) and sent to
/// the path without `/v1`. Returns the messages the client holds.
fn drive_chat(proxy: &Proxy, ask: &str, session: &str) -> Vec<Value> {
    let mut messages = vec![
        json!({"role": "system", "content": CHAT_SYSTEM}),
        json!({"role": "user", "content": ask}),
    ];
    for k in 0..60 {
        let stream = k % 2 == 0;
        let path = if stream {
            "/v1/chat/completions"
        } else {
            "/chat/completions"
        };
        let bearer = format!("Bearer {KEY}");
        let (status, text) = post(
            proxy,
            path,
            &chat_body(&messages, stream),
            &[("authorization", &bearer), ("x-session-id", session)],
        );
        assert_eq!(status, 200, "call {k}: {text:?}");
        let m = chat_message(&text.unwrap(), stream);
        let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
        messages.push(m);
        if calls.is_empty() {
            return messages;
        }
        for c in calls {
            messages
                .push(json!({"role": "tool", "tool_call_id": c["id"], "content": read_output(k)}));
        }
    }
    panic!("the model never finished");
}

/// A Chat Completions conversation of 31 calls through the proxy (streamed
/// with `include_usage`, and whole) to an upstream given as a base URL with
/// its `/v1`: recorded with its reasoning, compacted, its tool calls
/// paired and its system message first in every forwarded request, the key
/// never stored; `--verify-forwarded` and a plain replay at the proxy's
/// budget derive every forwarded view; and a side request of the session
/// (no tools, another system prompt) is a task of its own, linked, that
/// leaves the conversation's task as it was.
#[test]
fn a_chat_completions_conversation_is_recorded_compacted_and_verified() {
    let env = TestEnv::new();
    let model = crate::chat::ChatModel::start();
    let proxy = chat_proxy(&env, &model.base_url());
    let ask = format!("Read the notes. [[reads 30]] {CONSTRAINT}");
    let held = drive_chat(&proxy, &ask, "ses_chat_1");
    assert_eq!(
        held.last().unwrap()["content"],
        "Done: 30 tool results read."
    );
    let reports = proxy.wait_calls(31);
    let received = model.requests();
    assert_eq!(received.len(), 31);
    let task = one_task_that_compacted(&reports);
    for (r, c) in reports.iter().zip(&received) {
        assert_eq!(r["api"], "chat");
        assert_eq!(r["outcome"], "recorded", "{r}");
        assert_eq!(c.path, "/v1/chat/completions", "the upstream's /v1 once");
        assert_eq!(
            c.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        let messages = c.body["messages"].as_array().unwrap();
        assert_eq!(
            messages[0],
            json!({"role": "system", "content": CHAT_SYSTEM})
        );
        crate::opencode::assert_chat_pairs(messages, &format!("call {}", r["call"]));
        assert!(
            c.body.to_string().contains(CONSTRAINT),
            "call {}",
            r["call"]
        );
        for k in [
            "model",
            "max_tokens",
            "tools",
            "tool_choice",
            "stream_options",
        ] {
            assert_eq!(c.body[k], chat_body(&[], true)[k], "{k}");
        }
        if r["status"] != "over_window" {
            let sent = serde_json::to_string(&c.body).unwrap().len() as u64 / 4;
            assert!(
                sent <= r["w_eff"].as_u64().unwrap(),
                "call {}: {sent}",
                r["call"]
            );
        }
    }
    // The reasoning the model sent is recorded, and sent back where the
    // client's own message is forwarded.
    let rows = env.run(&["show", "--task", &task, "--json"]);
    assert!(rows.stdout.contains("The script asks for read."));
    assert!(
        received
            .last()
            .unwrap()
            .body
            .to_string()
            .contains("reasoning_content")
    );
    assert!(
        !contains(&store_bytes(&env), KEY),
        "the key is never stored"
    );
    assert_verified(&env, &task, 31);
    // In words: call k is request k, none of them a retry.
    let run = env.run(&["replay", "--task", &task, "--verify-forwarded"]);
    let lines: Vec<&str> = run.success().stdout.lines().collect();
    assert!(
        lines[1].starts_with("call    2 · request    2 · "),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("retry"), "{}", run.stdout);
    assert_replay_equals_forwarded(&env, &task, &CHAT_BUDGET, &reports);

    // A side request of the same session: its own task, linked.
    let rows_before = env.task(&task)["rows"].clone();
    let side = vec![
        json!({"role": "system", "content": "You are a title generator."}),
        json!({"role": "user", "content": ask}),
    ];
    let mut body = chat_body(&side, true);
    body.as_object_mut().unwrap().remove("tools");
    let (status, text) = post(
        &proxy,
        "/v1/chat/completions",
        &body,
        &[("x-session-id", "ses_chat_1")],
    );
    assert_eq!(status, 200, "{text:?}");
    let side_report = &proxy.wait_calls(32)[31];
    assert_ne!(side_report["task"], task.as_str());
    assert_eq!(side_report["started_from"], task.as_str(), "{side_report}");
    assert_eq!(
        env.task(&task)["rows"],
        rows_before,
        "the conversation's task is untouched"
    );
    // The conversation goes on in its task.
    let mut more = held.clone();
    more.push(json!({"role": "user", "content": "Thanks."}));
    let (status, _) = post(
        &proxy,
        "/v1/chat/completions",
        &chat_body(&more, true),
        &[("x-session-id", "ses_chat_1")],
    );
    assert_eq!(status, 200);
    assert_eq!(proxy.wait_calls(33)[32]["task"], task.as_str());
}

/// The pinned `openai` Python SDK's agent script (`clients/`), or `None`
/// (said plainly) when Python or the SDK is absent; under CI that fails.
fn python_sdk(test: &str) -> Option<std::path::PathBuf> {
    let script = crate::util::crate_dir()
        .join("clients")
        .join("openai_chat_agent.py");
    let found = std::process::Command::new("python3")
        .args(["-c", "import openai"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(script);
    }
    if crate::util::under_ci() {
        panic!(
            "{test}: python3 with the openai SDK is missing and CI is set: run `python3 -m pip install -r clients/requirements.txt`"
        );
    }
    eprintln!(
        "SKIPPED {test}: python3 or its openai SDK is not installed; run `python3 -m pip install -r clients/requirements.txt`"
    );
    None
}

/// The official `openai` Python SDK, streaming with tools through the proxy
/// (`user` names its conversation): a long tool loop compacted, every
/// forwarded request legal and within the window, the SDK reading every
/// streamed answer and its usage chunk, and every forwarded view derived
/// again offline.
#[test]
#[cfg_attr(
    not(compactor_python_sdk),
    ignore = "needs the openai Python SDK: python3 -m pip install -r clients/requirements.txt"
)]
fn the_openai_python_sdk_streams_tools_through_the_proxy() {
    let Some(script) = python_sdk("the_openai_python_sdk_streams_tools_through_the_proxy") else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    write_notes(&project, 30, 40);
    let model = crate::chat::ChatModel::start();
    let proxy = chat_proxy(&env, &format!("http://127.0.0.1:{}", model.port));
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(&script)
        .args([
            &proxy.url("/v1"),
            "stub-model",
            "py-user-1",
            &format!("Read every note. [[reads 30]] {CONSTRAINT}"),
        ])
        .current_dir(&project)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("OPENAI_BASE_URL")
        .env("NO_PROXY", "127.0.0.1");
    let (status, out, err) = run_bounded_for(cmd, Duration::from_secs(300));
    assert_eq!(status, 0, "the SDK's agent failed:\n{out}\n{err}");
    assert!(out.contains("Done: 30 tool results read."), "{out}\n{err}");
    // The SDK read each answer's usage chunk: the stub's prompt count.
    let usages = out.lines().filter(|l| l.starts_with("usage ")).count();
    assert_eq!(usages, 31, "{out}");
    let reports = proxy.wait_calls(31);
    let received = model.requests();
    let task = one_task_that_compacted(&reports);
    for (r, c) in reports.iter().zip(&received) {
        assert_eq!(r["outcome"], "recorded", "{r}");
        assert_eq!(c.body["user"], "py-user-1");
        assert_eq!(c.body["stream_options"]["include_usage"], true);
        let messages = c.body["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "system");
        crate::opencode::assert_chat_pairs(messages, &format!("call {}", r["call"]));
        assert!(
            c.body.to_string().contains(CONSTRAINT),
            "call {}",
            r["call"]
        );
        if r["status"] != "over_window" {
            let sent = c.body.to_string().len() as u64 / 4;
            assert!(
                sent <= r["w_eff"].as_u64().unwrap(),
                "call {}: {sent}",
                r["call"]
            );
        }
    }
    assert!(
        !contains(&store_bytes(&env), KEY),
        "the key is never stored"
    );
    assert_verified(&env, &task, 31);
    assert_replay_equals_forwarded(&env, &task, &CHAT_BUDGET, &reports);
}

/// Choice 0 of a Chat Completions answer, as a client that reads one
/// choice takes it: streamed, the chunks of choice 0; whole, its message.
fn choice_0(text: &str, streamed: bool) -> Value {
    if !streamed {
        let v: Value = serde_json::from_str(text).unwrap();
        let m = v["choices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["index"] == 0)
            .unwrap()["message"]
            .clone();
        return json!({"role": "assistant", "content": m["content"]});
    }
    let mut content = String::new();
    for data in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        let Ok(c) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        for choice in c["choices"].as_array().into_iter().flatten() {
            if choice["index"] == 0 {
                content.push_str(choice["delta"]["content"].as_str().unwrap_or(""));
            }
        }
    }
    json!({"role": "assistant", "content": content})
}

/// A Chat Completions request asking for two choices (`n`: 2), streamed
/// and whole: the client gets both choices untouched, the record holds
/// choice 0 alone, the proxy says so, and the conversation's next request
/// (choice 0 sent back) goes on in the same task instead of opening one.
#[test]
fn of_an_answer_with_several_choices_choice_0_alone_is_recorded() {
    for streamed in [true, false] {
        let env = TestEnv::new();
        let model = crate::chat::ChatModel::start();
        let proxy = chat_proxy(&env, &model.base_url());
        let session = [("x-session-id", "ses_n2")];
        let mut messages = vec![
            json!({"role": "system", "content": CHAT_SYSTEM}),
            json!({"role": "user", "content": "Say it twice."}),
        ];
        let mut body = chat_body(&messages, streamed);
        body["n"] = json!(2);
        let (status, text) = post(&proxy, "/v1/chat/completions", &body, &session);
        assert_eq!(status, 200, "{text:?}");
        let text = text.unwrap();
        assert!(
            text.contains("second ") && text.contains("choice"),
            "the client gets every choice: {text}"
        );
        let answer = choice_0(&text, streamed);
        assert_eq!(answer["content"], "stub answer 1");
        let first = &proxy.wait_calls(1)[0];
        assert_eq!(first["outcome"], "recorded", "{first}");
        let task = first["task"].as_str().unwrap().to_string();
        eventually("the proxy's note", || {
            proxy.stderr.lock().unwrap().contains("answered 2 choices")
        });
        assert!(
            proxy
                .stderr
                .lock()
                .unwrap()
                .contains(&format!("{task} call 1: the upstream answered 2 choices")),
            "{}",
            proxy.stderr.lock().unwrap()
        );
        let rows = env.run(&["show", "--task", &task, "--json"]);
        rows.success().stdout_has("stub answer 1");
        assert!(
            !rows.stdout.contains("second"),
            "never merged: {}",
            rows.stdout
        );
        // The next turn, choice 0 sent back: the same task, no new one.
        messages.push(answer);
        messages.push(json!({"role": "user", "content": "Thanks."}));
        let (status, _) = post(
            &proxy,
            "/v1/chat/completions",
            &chat_body(&messages, streamed),
            &session,
        );
        assert_eq!(status, 200);
        let second = &proxy.wait_calls(2)[1];
        assert_eq!(second["task"], task.as_str(), "{second}");
        assert!(second.get("started_from").is_none(), "{second}");
        assert_eq!(env.tasks().len(), 1, "{:#?}", env.tasks());
    }
}

/// Two tool calls streamed at once without `index` (as Gemini's
/// OpenAI-compatible endpoint sends them): recorded as two calls, each with
/// its own arguments, so that the client's next request (both calls and
/// both results) goes on in the same task.
#[test]
fn parallel_tool_calls_streamed_without_index_are_two_calls() {
    let env = TestEnv::new();
    let model = crate::chat::ChatModel::start();
    let proxy = chat_proxy(&env, &model.base_url());
    let session = [("x-session-id", "ses_par")];
    let mut messages = vec![
        json!({"role": "system", "content": CHAT_SYSTEM}),
        json!({"role": "user", "content": "Look around. [[parallel]]"}),
    ];
    let (status, text) = post(
        &proxy,
        "/v1/chat/completions",
        &chat_body(&messages, true),
        &session,
    );
    assert_eq!(status, 200, "{text:?}");
    let m = chat_message(&text.unwrap(), true);
    let calls = m["tool_calls"].as_array().cloned().unwrap();
    assert_eq!(calls.len(), 2, "{m}");
    messages.push(m);
    for c in &calls {
        messages.push(json!({"role": "tool", "tool_call_id": c["id"], "content": "found"}));
    }
    let (status, _) = post(
        &proxy,
        "/v1/chat/completions",
        &chat_body(&messages, true),
        &session,
    );
    assert_eq!(status, 200);
    let reports = proxy.wait_calls(2);
    let task = reports[0]["task"].as_str().unwrap();
    assert_eq!(reports[1]["task"], task, "{:#?}", reports);
    assert!(reports[1].get("started_from").is_none(), "{:#?}", reports);
    for (id, input) in [
        ("call_par_a", json!({"filePath": "a.txt"})),
        ("call_par_b", json!({"pattern": "x"})),
    ] {
        let shown = env.run(&["show", "--task", task, "--json", &format!("tool:{id}")]);
        assert_eq!(shown.success().json()["input"], input, "{id}");
    }
}

/// The proxy's first lines name every client and how to point it here:
/// Claude Code, Codex, OpenCode and any OpenAI-compatible client.
#[test]
fn the_banner_names_every_client() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let url = proxy.url("");
    eventually("the banner", || {
        proxy.stderr.lock().unwrap().contains("Ctrl-C stops")
    });
    let banner = proxy.stderr.lock().unwrap().clone();
    for line in [
        format!("  Claude Code: ANTHROPIC_BASE_URL={url} claude\n"),
        format!(
            "  Codex: a model provider with base_url = \"{url}/v1\" and wire_api = \"responses\"\n"
        ),
        format!(
            "  OpenCode: a provider of npm type @ai-sdk/openai-compatible with baseURL \"{url}/v1\"\n"
        ),
        format!("  Any OpenAI-compatible client: base URL {url}/v1 (Chat Completions)\n"),
    ] {
        assert!(banner.contains(&line), "{line:?} in {banner}");
    }
}

/// The guide's stand-in model through the proxy: each API the clients
/// speak (Messages, Responses, Chat Completions), streamed and whole, is
/// answered with its text and recorded.
#[test]
#[cfg_attr(not(compactor_python), ignore = "needs python3")]
fn the_stand_in_model_answers_every_api_through_the_proxy() {
    let Some(model) =
        crate::run::stand_in("the_stand_in_model_answers_every_api_through_the_proxy")
    else {
        return;
    };
    let env = TestEnv::new();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let ask = |text: &str| json!({"role": "user", "content": text});
    let mut n = 0;
    for stream in [true, false] {
        let mut messages = messages_body(&[ask(&format!("Messages, stream {stream}"))]);
        messages["stream"] = json!(stream);
        let responses = json!({"model": "stand-in", "stream": stream,
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("Responses, stream {stream}")}]}]});
        let chat = chat_body(&[ask(&format!("Chat, stream {stream}"))], stream);
        for (path, body) in [
            ("/v1/messages", messages),
            ("/v1/responses", responses),
            ("/v1/chat/completions", chat),
        ] {
            let (status, text) = post(&proxy, path, &body, &[]);
            let text = text.unwrap();
            assert_eq!(status, 200, "{path}: {text}");
            assert!(
                text.contains("stand-in model: no model ran"),
                "{path}: {text}"
            );
            n += 1;
            let report = &proxy.wait_calls(n)[n - 1];
            assert_eq!(
                report["outcome"], "recorded",
                "{path} stream {stream}: {report}"
            );
        }
    }
}

// ---------------------------------------------------------------- Gemini

/// The Gemini API through the proxy, as Gemini CLI speaks it: the key in
/// `?key=` on one call and in `x-goog-api-key` on the next reaches the model
/// each time and is stored nowhere; the model's thought and signatures, sent
/// back by the client, reach the model byte for byte; the call and its
/// response stay paired.
#[test]
fn gemini_keeps_thoughts_and_signatures_and_forwards_the_key_it_never_stores() {
    let env = TestEnv::new();
    let model = Model::start();
    let proxy = Proxy::start(&env, model.port, &[], None);
    let query_key = "AIza-query-key-0042";
    let header_key = "AIza-header-key-0042";
    let ask = json!({"role": "user", "parts": [{"text": "Read every file in notes/ one by one. [[reads 2]] Never edit files outside notes/."}]});
    let body = |contents: Vec<Value>| {
        json!({
            "contents": contents,
            "systemInstruction": {"role": "user", "parts": [{"text": "You are a test agent."}]},
            "tools": [{"functionDeclarations": [{"name": "read_file", "description": "read a file", "parameters": {"type": "object"}}]}],
            "generationConfig": {"temperature": 0},
        })
    };
    let path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
    let (status, answer) = post(
        &proxy,
        &format!("{path}&key={query_key}"),
        &body(vec![ask.clone()]),
        &[],
    );
    assert_eq!(status, 200);
    let answer = answer.unwrap();
    assert!(
        answer.contains("c2lnLXN0dWI0"),
        "the stand-in's signed call: {answer}"
    );
    // The client's turn back: its thought and the signed call, then the result.
    let turn = json!({"role": "model", "parts": [
        {"text": "The next file.", "thought": true, "thoughtSignature": "dGhvdWdodC0xLw+=="},
        {"text": "Reading the next file."},
        {"functionCall": {"id": "read_file_1_0", "name": "read_file", "args": {"file_path": "notes/file_01.txt"}}, "thoughtSignature": "c2lnLXN0dWI0"},
    ]});
    let result = json!({"role": "user", "parts": [
        {"functionResponse": {"id": "read_file_1_0", "name": "read_file", "response": {"output": "note 1 line 1"}}},
    ]});
    let (status, _) = post(
        &proxy,
        path,
        &body(vec![ask.clone(), turn.clone(), result.clone()]),
        &[("x-goog-api-key", header_key)],
    );
    assert_eq!(status, 200);
    let calls = model.model_calls();
    assert_eq!(calls.len(), 2);
    assert!(
        calls[0].path.contains(&format!("key={query_key}")),
        "?key= is forwarded: {}",
        calls[0].path
    );
    assert_eq!(
        calls[1]
            .headers
            .iter()
            .find(|(k, _)| k == "x-goog-api-key")
            .map(|(_, v)| v.as_str()),
        Some(header_key)
    );
    let sent = calls[1].json();
    assert_eq!(
        sent["contents"],
        json!([ask, turn, result]),
        "the contents reach the model as the client sent them"
    );
    let stored = store_bytes(&env);
    assert!(!contains(&stored, query_key), "the ?key= is never stored");
    assert!(
        !contains(&stored, header_key),
        "the header key is never stored"
    );
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 1, "one conversation, one task: {tasks:?}");
    let task = tasks[0]["id"].as_str().unwrap();
    env.run(&["replay", "--task", task, "--verify-forwarded"])
        .success();
    let proxy_stderr = proxy.stderr.lock().unwrap().clone();
    drop(proxy);
    let logged = format!(
        "{}{}",
        proxy_stderr,
        std::fs::read_to_string(env.root().join("proxy.log")).unwrap_or_default()
    );
    assert!(
        !logged.contains(query_key) && !logged.contains(header_key),
        "never logged"
    );
}
