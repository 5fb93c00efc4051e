//! `--summarizer llm` against a real HTTP server on loopback, written here:
//! a std TcpListener on 127.0.0.1:0 speaking each provider's wire format and
//! recording every request. Its "model" follows the checklist the prompt
//! gives it (so its summaries are valid), unless a test scripts a failure.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{TestEnv, blake3_hex, field_of, strings_of};

const FIXTURE: &str = "fixtures/claude-shrink-floor.jsonl";
/// The tight budget: the floor folds at calls 4, 5, 6, …
const TIGHT: &[&str] = &["--window", "6000", "--output-reserved", "1000"];
const KEY: &str = "sk-test-LEAK-4f1c9a7e2b";
const CONSTRAINT: &str =
    "- do-not-change-public-api: Do not change the public API of app/orders/views.py.";

/// One request the server received.
#[derive(Debug, Clone)]
struct Recorded {
    path: String,
    /// Header lines, as sent.
    headers: Vec<String>,
    body: Value,
    at: Instant,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<String> {
        self.headers.iter().find_map(|h| {
            let (n, v) = h.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }

    /// The system prompt and the user message, whatever the wire format.
    fn prompt(&self) -> (String, String) {
        if self.body["system"].is_string() {
            (
                self.body["system"].as_str().unwrap().to_string(),
                self.body["messages"][0]["content"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        } else {
            (
                self.body["messages"][0]["content"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                self.body["messages"][1]["content"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        }
    }
}

/// A raw answer: a status, extra headers and a body.
fn raw(status: u16, headers: &[(&str, &str)], body: impl Into<String>) -> Answer {
    let headers = headers.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    Answer::Raw(status, headers.collect(), body.into())
}

/// What the server answers.
enum Answer {
    /// A summary text, in the request's wire format.
    Summary(String),
    /// A raw status, extra headers and body.
    Raw(u16, Vec<(String, String)>, String),
    /// Wait, then answer.
    Late(Duration, Box<Answer>),
}

type Script = dyn Fn(usize, &Recorded) -> Answer + Send + Sync;

struct ModelServer {
    base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl ModelServer {
    /// Serve on 127.0.0.1:0; `script` answers request `i` (0-based, in arrival order).
    fn start(script: impl Fn(usize, &Recorded) -> Answer + Send + Sync + 'static) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let reqs = requests.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let reqs = reqs.clone();
                let script = script.clone();
                thread::spawn(move || serve(stream, &reqs, script.as_ref()));
            }
        });
        ModelServer { base, requests }
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

fn serve(stream: TcpStream, reqs: &Mutex<Vec<Recorded>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut l = String::new();
        reader.read_line(&mut l).unwrap();
        let l = l.trim_end().to_string();
        if l.is_empty() {
            break;
        }
        if let Some((n, v)) = l.split_once(':')
            && n.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap();
        }
        headers.push(l);
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let rec = Recorded {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        at: Instant::now(),
    };
    let i = {
        let mut r = reqs.lock().unwrap();
        r.push(rec.clone());
        r.len() - 1
    };
    let mut answer = script(i, &rec);
    while let Answer::Late(d, inner) = answer {
        thread::sleep(d);
        answer = *inner;
    }
    let (status, extra, body) = match answer {
        Answer::Summary(text) => (200, vec![], wire_reply(&rec, &text)),
        Answer::Raw(s, h, b) => (s, h, b),
        Answer::Late(..) => unreachable!(),
    };
    let mut out = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (n, v) in extra {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    let mut stream = stream;
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
}

/// The summary in the wire format the request used.
fn wire_reply(rec: &Recorded, text: &str) -> String {
    if rec.path.ends_with("/v1/messages") {
        json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 1000, "output_tokens": 100},
        })
        .to_string()
    } else {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
        })
        .to_string()
    }
}

/// A model that follows the prompt: it copies the checklist and adds a finding
/// and a current state that name it. `drop` leaves out lines containing it.
fn obedient(rec: &Recorded, drop: Option<&str>) -> Answer {
    let (_, user) = rec.prompt();
    let checklist = user
        .split_once("CHECKLIST (these lines must appear verbatim under their sections):\n")
        .map_or("", |(_, c)| c);
    let mut out = String::new();
    for l in checklist.lines() {
        if l.starts_with("## ") && !out.is_empty() {
            out.push('\n');
        }
        if drop.is_some_and(|d| l.contains(d)) {
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    if !out.starts_with("## Requests") {
        out = format!("## Requests\n{out}");
    }
    out.push_str("\n## Findings\n- served-by: LOOPBACK-MODEL wrote this summary.\n\n## Current state\nGoal: LOOPBACK-SUMMARY\n");
    Answer::Summary(out)
}

fn llm_args(base: &str, provider: &str) -> Vec<String> {
    let url = if provider == "openai" {
        format!("{base}/v1")
    } else {
        base.to_string()
    };
    vec![
        "--summarizer".into(),
        "llm".into(),
        "--llm-provider".into(),
        provider.into(),
        "--llm-base-url".into(),
        url,
        "--llm-model".into(),
        "test-model".into(),
    ]
}

fn run_with(env: &TestEnv, args: &[String], key: Option<&str>) -> crate::util::Run {
    let mut cmd = command_of(env, args);
    match key {
        Some(k) => cmd.env("OPENAI_API_KEY", k).env("ANTHROPIC_API_KEY", k),
        None => cmd
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY"),
    };
    cmd.env("COMPACTOR_LLM_MAX_BACKOFF_MS", "20");
    env.finish(cmd)
}

/// `replay FIXTURE TIGHT --to N --json` plus `extra`.
fn replay_args(fixture: &str, to: u32, extra: &[String]) -> Vec<String> {
    let mut a: Vec<String> = vec!["replay".into(), fixture.into()];
    a.extend(TIGHT.iter().map(|s| s.to_string()));
    a.extend(["--to".to_string(), to.to_string(), "--json".into()]);
    a.extend(extra.iter().cloned());
    a
}

/// A fresh environment holding the fixture, and the fixture's path.
fn with_fixture() -> (TestEnv, String) {
    let env = TestEnv::new();
    let fixture = env.fixture(FIXTURE);
    (env, fixture)
}

/// The binary's command for owned arguments.
fn command_of(env: &TestEnv, args: &[String]) -> assert_cmd::Command {
    env.command(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn hashes(report: &Value) -> Vec<String> {
    strings_of(&report["calls"], "view_hash")
}

fn fallbacks(report: &Value) -> Vec<String> {
    strings_of(&report["llm"]["summarizer_fallback"], "reason")
}

/// The calls whose floor fell back.
fn fallback_calls(report: &Value) -> Vec<u64> {
    field_of(&report["llm"]["summarizer_fallback"], "call", Value::as_u64)
}

/// The extractive replay's view hashes, for comparison with fallbacks.
fn extractive_hashes(env: &TestEnv, fixture: &str, to: u32) -> Vec<String> {
    let r = run_with(env, &replay_args(fixture, to, &[]), None);
    r.success();
    hashes(&r.json())
}

#[test]
fn openai_wire_the_summary_lands_in_the_view_and_a_second_run_asks_nothing() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, rec| obedient(rec, None));
    let views = env.root().join("views");
    let mut extra = llm_args(&server.base, "openai");
    extra.extend(["--views".into(), views.display().to_string()]);
    let first = run_with(&env, &replay_args(&fixture, 6, &extra), Some(KEY));
    first.success();
    let r1 = first.json();
    let reqs = server.requests();
    assert!(!reqs.is_empty(), "no model request was made");
    assert_eq!(r1["llm"]["model_calls"], reqs.len() as u64);
    // The engine may ask for the same fold twice in one run: the second is read back.
    let asked = reqs.len() as u64 + r1["llm"]["summaries_read_back"].as_u64().unwrap();
    assert_eq!(r1["llm"]["input_tokens"], 1000 * reqs.len() as u64);
    for rec in &reqs {
        assert_eq!(rec.path, "/v1/chat/completions");
        assert_eq!(rec.body["model"], "test-model");
        assert_eq!(rec.header("authorization"), Some(format!("Bearer {KEY}")));
        let (system, user) = rec.prompt();
        for rule in [
            "ADMISSION GATE",
            "TOPIC SELF-CHECK",
            "P0",
            "## Current state",
        ] {
            assert!(system.contains(rule), "the constitution lacks {rule}");
        }
        assert!(user.contains("NEWLY COVERED SPAN"), "{user}");
    }
    // The covered span: tool calls with their outputs.
    assert!(reqs.iter().any(|r| r.prompt().1.contains("[tool ")));
    let (_, user0) = reqs[0].prompt();
    assert!(
        user0.contains("Audit the order handlers under app/orders for N+1 queries."),
        "{user0}"
    );
    assert!(
        user0.contains(CONSTRAINT),
        "the checklist carries the constraint"
    );
    // The returned summary is the floor of the view.
    let view4 = std::fs::read_to_string(views.join("call-0004.json")).unwrap();
    assert!(view4.contains("LOOPBACK-SUMMARY"), "{view4}");
    assert!(view4.contains("served-by: LOOPBACK-MODEL"));

    // Again, on the same store: no request, the same views.
    let n = server.count();
    let second = run_with(&env, &replay_args(&fixture, 6, &extra), Some(KEY));
    second.success();
    let r2 = second.json();
    assert_eq!(server.count(), n, "the second run asked the model again");
    assert_eq!(r2["llm"]["model_calls"], 0);
    assert_eq!(r2["llm"]["summaries_read_back"], asked);
    assert_eq!(hashes(&r1), hashes(&r2));
    assert_ne!(hashes(&r1), extractive_hashes(&env, &fixture, 6));
}

#[test]
fn anthropic_wire_compact_stores_before_use_and_reruns_byte_identical() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, rec| obedient(rec, None));
    let compact = |out: &str| -> Vec<String> {
        let mut a: Vec<String> = vec!["compact".into(), fixture.clone()];
        a.extend(TIGHT.iter().map(|s| s.to_string()));
        a.extend(llm_args(&server.base, "anthropic"));
        a.extend([
            "-o".into(),
            out.into(),
            "--json".into(),
            "--in-place".into(),
        ]);
        a
    };
    let first = run_with(&env, &compact("a.json"), Some(KEY));
    first.success();
    let reqs = server.requests();
    assert!(!reqs.is_empty());
    for rec in &reqs {
        assert_eq!(rec.path, "/v1/messages");
        assert_eq!(rec.header("x-api-key").as_deref(), Some(KEY));
        assert_eq!(
            rec.header("anthropic-version").as_deref(),
            Some("2023-06-01")
        );
        assert_eq!(rec.header("authorization"), None);
        let (system, user) = rec.prompt();
        // The window's default summary budget: 6% of 5000 is under the
        // floor of 2000.
        assert!(system.contains("TOKEN CAP") && system.contains("2000 tokens"));
        assert!(user.contains("NEWLY COVERED SPAN"));
    }
    let r1 = first.json();
    assert_eq!(r1["llm"]["model_calls"], reqs.len() as u64);
    let a = std::fs::read(env.work().join("a.json")).unwrap();
    assert!(String::from_utf8_lossy(&a).contains("LOOPBACK-SUMMARY"));
    // The summaries are in the store under their coverage.
    let stored: i64 = env
        .conn()
        .query_row(
            "SELECT count(*) FROM task_compaction_snapshot WHERE entry LIKE '%llm:anthropic:test-model%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(stored > 0);

    let second = run_with(&env, &compact("b.json"), Some(KEY));
    second.success();
    assert_eq!(server.count(), reqs.len(), "the re-run asked the model");
    let b = std::fs::read(env.work().join("b.json")).unwrap();
    assert_eq!(blake3_hex(&a), blake3_hex(&b));
    assert_eq!(second.json()["view_hash"], r1["view_hash"]);
}

/// A server whose first answer is `first`'s, and every later one obedient.
fn first_then_obedient(first: impl Fn(&Recorded) -> Answer + Send + Sync + 'static) -> ModelServer {
    ModelServer::start(move |i, rec| {
        if i == 0 {
            first(rec)
        } else {
            obedient(rec, None)
        }
    })
}

/// Run a two-fold replay (calls 4 and 5 fold) against `server` and return
/// the report; the run itself must succeed.
fn two_folds(env: &TestEnv, fixture: &str, server_base: &str, more: &[&str]) -> Value {
    let mut extra = llm_args(server_base, "openai");
    extra.extend(more.iter().map(|s| s.to_string()));
    let run = run_with(env, &replay_args(fixture, 5, &extra), None);
    run.success();
    run.json()
}

/// `two_folds`, checking that both folds fell back to the extractive
/// summary, each for a reason that holds every one of `why`.
fn fell_back(env: &TestEnv, fixture: &str, base: &str, why: &[&str]) -> Value {
    let r = two_folds(env, fixture, base, &[]);
    let reasons = fallbacks(&r);
    assert!(fallback_calls(&r).ends_with(&[4, 5]), "{r}");
    let explained = |x: &String| why.iter().all(|w| x.contains(w));
    assert!(reasons.iter().all(explained), "{reasons:?}");
    assert_eq!(hashes(&r), extractive_hashes(env, fixture, 5));
    r
}

#[test]
fn a_server_that_is_down_falls_back_to_the_extractive_summary() {
    let (env, fixture) = with_fixture();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let r = fell_back(&env, &fixture, &base, &["cannot connect"]);
    assert_eq!(r["llm"]["model_calls"], 0);
    // The human report says so too.
    let mut a = replay_args(
        &fixture,
        5,
        &llm_args(&format!("http://127.0.0.1:{port}"), "openai"),
    );
    a.retain(|x| x != "--json");
    let human = run_with(&env, &a, None);
    human
        .success()
        .stdout_has("summarizer_fallback at call 4: cannot connect");
}

#[test]
fn static_fallback_is_configurable() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, _| Answer::Raw(503, vec![], "down".into()));
    let views = env.root().join("v");
    let r = two_folds(
        &env,
        &fixture,
        &server.base,
        &[
            "--llm-fallback",
            "static",
            "--views",
            views.to_str().unwrap(),
        ],
    );
    assert!(fallback_calls(&r).ends_with(&[4, 5]), "{r}");
    let v = std::fs::read_to_string(views.join("call-0004.json")).unwrap();
    assert!(v.contains("Last ask:"), "{v}");
    assert!(!v.contains("## Requests"), "{v}");
}

#[test]
fn a_500_is_retried_three_times_then_falls_back() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, _| Answer::Raw(500, vec![], r#"{"error":"boom"}"#.into()));
    let r = fell_back(
        &env,
        &fixture,
        &server.base,
        &["HTTP 500", "after 3 attempts"],
    );
    let folds = fallbacks(&r).len();
    assert_eq!(server.count(), 3 * folds, "three attempts per fold");
    assert_eq!(r["llm"]["http_requests"], server.count() as u64);
}

#[test]
fn a_429_waits_for_retry_after_then_succeeds() {
    let (env, fixture) = with_fixture();
    let server = first_then_obedient(|_| raw(429, &[("retry-after", "1")], "slow down"));
    let mut extra = llm_args(&server.base, "openai");
    extra.extend([
        "--views".to_string(),
        env.root().join("v").display().to_string(),
    ]);
    // No backoff cap here: the wait is real.
    let mut cmd = command_of(&env, &replay_args(&fixture, 5, &extra));
    cmd.env_remove("COMPACTOR_LLM_MAX_BACKOFF_MS");
    let run = env.finish(cmd);
    run.success();
    let r = run.json();
    assert!(fallbacks(&r).is_empty(), "{r}");
    let minted = r["llm"]["model_calls"].as_u64().unwrap();
    assert!(minted >= 2);
    assert_eq!(r["llm"]["http_requests"], minted + 1);
    let reqs = server.requests();
    let waited = reqs[1].at.duration_since(reqs[0].at);
    assert!(
        waited >= Duration::from_millis(900),
        "retried after {waited:?}"
    );
    assert_eq!(
        reqs[0].body, reqs[1].body,
        "the retry sends the same request"
    );
    let v = std::fs::read_to_string(env.root().join("v/call-0004.json")).unwrap();
    assert!(v.contains("LOOPBACK-SUMMARY"));
}

#[test]
fn a_timeout_falls_back_with_the_reason() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, rec| {
        Answer::Late(Duration::from_millis(1500), Box::new(obedient(rec, None)))
    });
    let r = two_folds(&env, &fixture, &server.base, &["--llm-timeout", "0.2"]);
    let reasons = fallbacks(&r);
    assert!(reasons.len() >= 2, "{r}");
    assert!(
        reasons[0].contains("did not answer within 200 ms"),
        "{reasons:?}"
    );
    assert_eq!(hashes(&r), extractive_hashes(&env, &fixture, 5));
}

#[test]
fn a_response_missing_sections_is_asked_again_once_then_falls_back() {
    let (env, fixture) = with_fixture();
    let server =
        ModelServer::start(|_, _| Answer::Summary("I have summarized the session.".into()));
    let why = ["unusable response twice", "`## Requests`"];
    let r = fell_back(&env, &fixture, &server.base, &why);
    let folds = fallbacks(&r).len();
    assert_eq!(server.count(), 2 * folds, "two exchanges per fold");
}

#[test]
fn an_unusable_first_answer_is_retried_and_the_second_used() {
    let (env, fixture) = with_fixture();
    let server = first_then_obedient(|_| Answer::Summary("## Requests\n- #1: only this\n".into()));
    let r = two_folds(&env, &fixture, &server.base, &[]);
    assert!(fallbacks(&r).is_empty(), "{r}");
    let minted = r["llm"]["model_calls"].as_u64().unwrap();
    assert_eq!(server.count() as u64, minted + 1);
}

#[test]
fn a_dropped_constraint_is_reinserted_and_reported() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, rec| obedient(rec, Some("do-not-change-public-api")));
    let views = env.root().join("v");
    let r = two_folds(
        &env,
        &fixture,
        &server.base,
        &["--views", views.to_str().unwrap()],
    );
    assert!(fallbacks(&r).is_empty(), "{r}");
    let repaired = r["llm"]["repaired"].as_array().unwrap();
    assert!(!repaired.is_empty(), "{r}");
    for note in repaired {
        assert_eq!(note["lines"], json!([CONSTRAINT]));
    }
    let v = std::fs::read_to_string(views.join("call-0004.json")).unwrap();
    assert!(
        v.contains("LOOPBACK-SUMMARY"),
        "the model's summary is kept"
    );
    assert!(
        v.contains(&CONSTRAINT.replace('"', "\\\"")),
        "the constraint is back: {v}"
    );
}

#[test]
fn the_api_key_never_reaches_the_store_reports_or_errors() {
    let (env, fixture) = with_fixture();
    // A hostile server: it answers the first request with an error whose
    // body echoes the Authorization header back.
    let server = first_then_obedient(|rec| {
        let echoed = rec.header("authorization").unwrap_or_default();
        raw(400, &[], format!("bad auth: {echoed}"))
    });
    let mut outputs = String::new();
    for args in [
        replay_args(&fixture, 6, &llm_args(&server.base, "openai")),
        {
            let mut a = replay_args(&fixture, 6, &llm_args(&server.base, "openai"));
            a.retain(|x| x != "--json");
            a.push("--in-place".into());
            a
        },
        {
            let mut a: Vec<String> = vec!["compact".into(), fixture.clone()];
            a.extend(TIGHT.iter().map(|s| s.to_string()));
            a.extend(llm_args(&server.base, "openai"));
            a.extend(["--json".into()]);
            a
        },
    ] {
        let run = run_with(&env, &args, Some(KEY));
        run.success();
        outputs.push_str(&run.stdout);
        outputs.push_str(&run.stderr);
    }
    // The key did go to the server, and its echo came back in an error.
    assert!(
        server.requests()[0]
            .header("authorization")
            .unwrap()
            .contains(KEY)
    );
    assert!(outputs.contains("bad auth: Bearer [redacted]"), "{outputs}");
    assert!(!outputs.contains(KEY), "the key leaked into a report");
    assert!(!outputs.contains("sk-test-LEAK"), "part of the key leaked");
    drop(env.conn());
    for entry in std::fs::read_dir(env.root()).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            let bytes = std::fs::read(&p).unwrap();
            assert!(
                !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
                "the key is in {}",
                p.display()
            );
        }
    }
}

#[test]
fn plain_http_to_another_host_is_refused_and_a_model_is_required() {
    let (env, fixture) = with_fixture();
    let mut a = replay_args(&fixture, 5, &llm_args("http://192.0.2.1:8080", "openai"));
    let run = run_with(&env, &a, Some(KEY));
    run.failure(2).stderr_has("needs https");
    a = replay_args(&fixture, 5, &["--summarizer".into(), "llm".into()]);
    let run = run_with(&env, &a, Some(KEY));
    run.failure(2).stderr_has("--llm-model");
    // A remote https server needs a key.
    a = replay_args(
        &fixture,
        5,
        &[
            "--summarizer=llm".into(),
            "--llm-model=m".into(),
            "--llm-api-key-env=COMPACTOR_TEST_NO_SUCH_KEY".into(),
        ],
    );
    let run = run_with(&env, &a, None);
    run.failure(2)
        .stderr_has("COMPACTOR_TEST_NO_SUCH_KEY is not set");
}

#[test]
fn the_config_file_configures_the_summarizer_and_flags_win() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, rec| obedient(rec, None));
    let dir = env.root().join("config/compactor");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "# set once\nsummarizer = \"llm\"\nllm_provider = \"openai\"\nllm_base_url = \"{}/v1\"\nllm_model = \"from-file\"\nllm_price_input = \"2.00\"\nllm_price_output = \"10\"\n",
            server.base
        ),
    )
    .unwrap();
    let run = run_with(&env, &replay_args(&fixture, 5, &[]), None);
    run.success();
    let r = run.json();
    assert_eq!(server.requests()[0].body["model"], "from-file");
    assert_eq!(r["llm"]["summarizer"], "llm:openai:from-file");
    // Each call: 1000 in at $2/M + 100 out at $10/M = $0.003.
    let minted = r["llm"]["model_calls"].as_u64().unwrap();
    assert!(minted > 0);
    assert_eq!(r["llm"]["cost_usd"], format!("0.{:06}", minted * 3000));
    // The environment beats the file, a flag beats both.
    for (extra, summarizer) in [
        (vec!["--summarizer".to_string(), "extractive".into()], None),
        (vec![], Some("llm:openai:from-env")),
    ] {
        let mut cmd = command_of(&env, &replay_args(&fixture, 5, &extra));
        cmd.env("COMPACTOR_LLM_MODEL", "from-env");
        let run = env.finish(cmd);
        run.success();
        let llm = run.json().get("llm").map(|l| l["summarizer"].clone());
        assert_eq!(llm, summarizer.map(Value::from));
    }
    // A broken file is a clear error naming the line.
    std::fs::write(
        dir.join("config.toml"),
        "summarizer = \"llm\"\nllm_api_key = \"x\"\n",
    )
    .unwrap();
    let run = run_with(&env, &replay_args(&fixture, 5, &[]), None);
    run.failure(2).stderr_has("config.toml:2:");
}

#[test]
fn check_with_the_llm_summarizer_is_byte_identical_and_never_asks_twice() {
    let (env, fixture) = with_fixture();
    let server = ModelServer::start(|_, rec| obedient(rec, None));
    let mut a: Vec<String> = vec!["check".into(), fixture.clone(), "--json".into()];
    a.extend(llm_args(&server.base, "openai"));
    let run = run_with(&env, &a, None);
    run.success();
    let r = run.json();
    assert_eq!(r["ok"], true, "{r}");
    let reqs = server.requests();
    assert!(!reqs.is_empty());
    assert!(fallbacks(&r).is_empty());
    // Fresh, reopened and the killed-then-resumed child share one cache: no
    // request was ever sent twice, so no stored coverage was asked for again.
    let mut bodies: Vec<String> = reqs.iter().map(|q| q.body.to_string()).collect();
    bodies.sort();
    let n = bodies.len();
    bodies.dedup();
    assert_eq!(bodies.len(), n, "a request was repeated");
    assert!(r["llm"]["summaries_read_back"].as_u64().unwrap() > 0);
    // A second check asks nothing at all.
    let again = run_with(&env, &a, None);
    again.success();
    assert_eq!(server.count(), n);
}
