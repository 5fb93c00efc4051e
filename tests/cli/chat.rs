//! A loopback OpenAI Chat Completions model for the clients that speak it
//! (OpenCode through `@ai-sdk/openai-compatible`): `POST …/chat/completions`,
//! answered in JSON or streamed (SSE, with the usage chunk that
//! `stream_options.include_usage` asks for), scripted by what the request
//! holds. Every request is recorded with its headers.
//!
//! The script reads the last user message of a request that offers tools:
//! - `[[reads N]]`: a `read` of `notes/file_K.txt` (K = 1, 2, …) until N
//!   results follow that message (or, in a compacted request, the file
//!   `file_N.txt` was read), then text;
//! - `[[agent]]`: one `task` call starting a subagent whose prompt is
//!   [`AGENT_PROMPT`], then text;
//! - `[[missing]]`: one `read` of a file that is not there (a tool error);
//! - `[[overflow]]`: the answer's usage says the prompt filled the window,
//!   so the client compacts after it;
//! - `[[parallel]]`: two tool calls at once (`read` of `a.txt`, `grep` of
//!   `x`) streamed as Gemini's OpenAI-compatible endpoint streams them, each
//!   whole in a chunk of its own with its id and no `index`, then text;
//! - a request with `n` of 2 or more, answered with text: that many
//!   choices, their chunks interleaved (choice 0 says "stub answer 1",
//!   the others "second choice"), or listed whole.
//!
//! A request without tools is a client's side request: a title, or a
//! compaction's summary, answered with a short text.
//! Each call's usage: the prompt is 1,000 tokens plus 100 per message, half
//! of it cached; the completion 20 tokens, 5 of them reasoning.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{HttpRequest, read_request};

/// The prompt the `[[agent]]` script gives its subagent.
pub const AGENT_PROMPT: &str = "Find the batch size in the notes. [[reads 1]]";
/// The text of a compaction's summary.
pub const SUMMARY: &str = "## Summary\nThe notes were read; the export job batches reads.";
/// A prompt that fills any window, for `[[overflow]]`.
const OVERFLOW_TOKENS: u64 = 1_000_000;

/// One request the model received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A call of the agent's own loop (it offers tools), not a side request.
    pub fn is_agent_call(&self) -> bool {
        self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }
}

/// Held answers: how many calls to hold, and whether they may go on.
#[derive(Default)]
struct Hold {
    pending: usize,
    released: bool,
    /// Calls holding now.
    holding: usize,
}

pub struct ChatModel {
    pub port: u16,
    log: Arc<Mutex<Vec<Request>>>,
    hold: Arc<(Mutex<Hold>, Condvar)>,
}

impl ChatModel {
    pub fn start() -> ChatModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let hold: Arc<(Mutex<Hold>, Condvar)> = Arc::default();
        let (l, h) = (Arc::clone(&log), Arc::clone(&hold));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (l, h) = (Arc::clone(&l), Arc::clone(&h));
                std::thread::spawn(move || serve(conn, &l, &h));
            }
        });
        ChatModel { port, log, hold }
    }

    /// The base URL a client is given (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    /// Hold the next agent call after its first chunk until [`ChatModel::release`].
    pub fn hold_next(&self) {
        let (lock, _) = &*self.hold;
        let mut h = lock.lock().unwrap();
        h.pending += 1;
        h.released = false;
    }

    /// Wait until a call is being held (at most `timeout`).
    pub fn wait_holding(&self, timeout: Duration) -> bool {
        let (lock, cv) = &*self.hold;
        let h = lock.lock().unwrap();
        let (h, _) = cv
            .wait_timeout_while(h, timeout, |h| h.holding == 0)
            .unwrap();
        h.holding > 0
    }

    pub fn release(&self) {
        let (lock, cv) = &*self.hold;
        lock.lock().unwrap().released = true;
        cv.notify_all();
    }
}

fn serve(conn: TcpStream, log: &Mutex<Vec<Request>>, hold: &(Mutex<Hold>, Condvar)) {
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
        let req = Request {
            method,
            path,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        };
        let n = {
            let mut l = log.lock().unwrap();
            l.push(req.clone());
            l.len()
        };
        if req.method != "POST" || !req.path.ends_with("/chat/completions") {
            let _ = write_response(&mut writer, "404 Not Found", "application/json", b"{}");
            continue;
        }
        let chunks = answer(&req.body, n);
        if req.body["stream"] != true {
            let whole = whole_answer(&chunks);
            let _ = write_response(&mut writer, "200 OK", "application/json", whole.as_bytes());
            continue;
        }
        let include_usage = req.body["stream_options"]["include_usage"] == true;
        let events: Vec<String> = chunks
            .iter()
            .filter(|c| include_usage || c.get("usage").is_none())
            .map(|c| format!("data: {c}\n\n"))
            .chain(std::iter::once("data: [DONE]\n\n".to_string()))
            .collect();
        let held = req.is_agent_call() && take_hold(hold);
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
        if writer.write_all(head.as_bytes()).is_err() {
            return;
        }
        for (i, e) in events.iter().enumerate() {
            if chunk(&mut writer, e.as_bytes()).is_err() {
                return;
            }
            if held && i == 0 {
                let (lock, cv) = hold;
                let mut h = lock.lock().unwrap();
                h.holding += 1;
                cv.notify_all();
                let (mut h, _) = cv
                    .wait_timeout_while(h, Duration::from_secs(120), |h| !h.released)
                    .unwrap();
                h.holding -= 1;
            }
        }
        if writer.write_all(b"0\r\n\r\n").is_err() || writer.flush().is_err() {
            return;
        }
    }
}

fn take_hold(hold: &(Mutex<Hold>, Condvar)) -> bool {
    let mut h = hold.0.lock().unwrap();
    if h.pending == 0 {
        return false;
    }
    h.pending -= 1;
    true
}

fn chunk(w: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
    w.write_all(bytes)?;
    w.write_all(b"\r\n")?;
    w.flush()
}

fn write_response(w: &mut TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    w.write_all(head.as_bytes())?;
    w.write_all(body)?;
    w.flush()
}

/// A message's text: a string, or its text parts joined.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The streamed chunks of the answer to request number `n`: deltas, the
/// finish reason, and last the usage chunk.
fn answer(body: &Value, n: usize) -> Vec<Value> {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let last_user = msgs.iter().rposition(|m| m["role"] == "user");
    let asked = last_user.map_or(String::new(), |i| content_text(&msgs[i]["content"]));
    // Results since the ask: counted, or (a compacting proxy may have
    // folded the earlier ones away) the highest file number read.
    let results = last_user.map_or(0, |i| {
        let counted = msgs[i..].iter().filter(|m| m["role"] == "tool").count();
        let highest = msgs[i..]
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| {
                let args = c["function"]["arguments"].as_str()?.to_string();
                let k = args
                    .split("file_")
                    .nth(1)?
                    .get(..2)?
                    .parse::<usize>()
                    .ok()?;
                Some(k)
            })
            .max()
            .unwrap_or(0);
        counted.max(highest)
    });
    let tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let reads = asked
        .split("[[reads ")
        .nth(1)
        .and_then(|r| r.split("]]").next())
        .and_then(|r| r.trim().parse::<usize>().ok());
    let id = format!("chatcmpl-stub-{n}");
    let delta = |d: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "stub-model",
               "choices": [{"index": 0, "delta": d, "finish_reason": finish}]})
    };
    let usage = json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "stub-model", "choices": [],
        "usage": {"prompt_tokens": 1_000, "completion_tokens": 20, "total_tokens": 1_020}});
    if tools && asked.contains("[[parallel]]") && results == 0 {
        let call = |id: &str, name: &str, args: Value| json!({"tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]});
        return vec![
            delta(json!({"role": "assistant", "content": null}), Value::Null),
            delta(
                call("call_par_a", "read", json!({"filePath": "a.txt"})),
                Value::Null,
            ),
            delta(
                call("call_par_b", "grep", json!({"pattern": "x"})),
                Value::Null,
            ),
            delta(json!({}), json!("tool_calls")),
            usage,
        ];
    }
    let choices = body["n"].as_u64().unwrap_or(1);
    if choices > 1 && results == 0 {
        let of = |i: u64, d: Value, finish: Value| {
            let mut c = delta(d, finish);
            c["choices"][0]["index"] = json!(i);
            c
        };
        let mut chunks = Vec::new();
        for i in 0..choices {
            chunks.push(of(
                i,
                json!({"role": "assistant", "content": if i == 0 { "stub " } else { "second " }}),
                Value::Null,
            ));
        }
        for i in (0..choices).rev() {
            chunks.push(of(
                i,
                json!({"content": if i == 0 { "answer 1" } else { "choice" }}),
                json!("stop"),
            ));
        }
        chunks.push(usage);
        return chunks;
    }
    let call = match () {
        _ if !tools => None,
        _ if reads.is_some_and(|want| results < want) => Some((
            "read",
            json!({"filePath": format!("notes/file_{:02}.txt", results + 1)}),
        )),
        _ if asked.contains("[[agent]]") && results == 0 => Some((
            "task",
            json!({"description": "find the batch size", "prompt": AGENT_PROMPT, "subagent_type": "general"}),
        )),
        _ if asked.contains("[[missing]]") && results == 0 => {
            Some(("read", json!({"filePath": "notes/missing.txt"})))
        }
        _ => None,
    };
    let mut chunks = Vec::new();
    let finish = match &call {
        Some((name, input)) => {
            chunks.push(delta(
                json!({"role": "assistant", "content": null, "reasoning_content": format!("The script asks for {name}.")}),
                Value::Null,
            ));
            chunks.push(delta(json!({"content": "Working on it."}), Value::Null));
            chunks.push(delta(
                json!({"tool_calls": [{"index": 0, "id": format!("call_stub_{n:03}"), "type": "function", "function": {"name": name, "arguments": ""}}]}),
                Value::Null,
            ));
            chunks.push(delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": input.to_string()}}]}),
                Value::Null,
            ));
            "tool_calls"
        }
        None => {
            let text = match () {
                _ if !tools
                    && content_text(&body["messages"][0]["content"])
                        .contains("title generator") =>
                {
                    "Reading the notes".to_string()
                }
                _ if !tools => SUMMARY.to_string(),
                _ if results > 0 => format!("Done: {results} tool results read."),
                _ => "Nothing to do.".to_string(),
            };
            chunks.push(delta(
                json!({"role": "assistant", "content": text}),
                Value::Null,
            ));
            "stop"
        }
    };
    chunks.push(delta(json!({}), json!(finish)));
    let prompt = if tools && asked.contains("[[overflow]]") && call.is_none() {
        OVERFLOW_TOKENS
    } else {
        1_000 + 100 * msgs.len() as u64
    };
    chunks.push(json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "stub-model", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20,
                  "prompt_tokens_details": {"cached_tokens": prompt / 2},
                  "completion_tokens_details": {"reasoning_tokens": 5}}}));
    chunks
}

/// The streamed chunks as one `chat.completion` object (a choice for each
/// `index` the chunks name, in order).
fn whole_answer(chunks: &[Value]) -> String {
    let mut usage = Value::Null;
    // index → (text, tool calls, finish reason)
    let mut choices: std::collections::BTreeMap<u64, (String, Vec<Value>, Value)> =
        Default::default();
    for c in chunks {
        for choice in c["choices"].as_array().into_iter().flatten() {
            let (text, calls, finish) = choices
                .entry(choice["index"].as_u64().unwrap_or(0))
                .or_insert_with(|| (String::new(), Vec::new(), Value::Null));
            let delta = &choice["delta"];
            if let Some(t) = delta["content"].as_str() {
                text.push_str(t);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                if call["id"].is_string() {
                    calls.push(json!({"id": call["id"], "type": "function",
                                      "function": {"name": call["function"]["name"], "arguments": ""}}));
                }
                if let (Some(last), Some(a)) =
                    (calls.last_mut(), call["function"]["arguments"].as_str())
                {
                    let so_far = last["function"]["arguments"]
                        .as_str()
                        .unwrap_or("")
                        .to_string();
                    last["function"]["arguments"] = Value::String(so_far + a);
                }
            }
            if !choice["finish_reason"].is_null() {
                *finish = choice["finish_reason"].clone();
            }
        }
        if !c["usage"].is_null() {
            usage = c["usage"].clone();
        }
    }
    let choices: Vec<Value> = choices
        .into_iter()
        .map(|(i, (text, calls, finish))| {
            json!({"index": i, "message": {"role": "assistant", "content": text, "tool_calls": calls}, "finish_reason": finish})
        })
        .collect();
    json!({"id": chunks[0]["id"], "object": "chat.completion", "created": 1_700_000_000, "model": "stub-model",
           "choices": choices, "usage": usage})
    .to_string()
}
