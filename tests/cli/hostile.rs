//! Hostile input: a table of bad inputs, each either refused with a clear
//! error (exit 2, naming the file and what was expected, the store left
//! byte-for-byte as it was) or imported under a documented tolerance that the
//! report shows (the guide, docs/src/import.md, "Bad input"). Never a panic (exit 101) or a hang: each
//! run has a generous deadline that only detects hangs, it is not a pass
//! condition. Transcript text holding terminal escape sequences never reaches
//! the terminal raw.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::reliability::{assert_integrity, claude_session, store_dump};
use crate::util::{DISPOSABLE, TestEnv};

/// A run that must end well before this; only a hang gets near it.
const HANG: Duration = Duration::from_secs(300);

struct Out {
    status: i32,
    stdout: Vec<u8>,
    stderr: String,
}

/// Run with a hang detector: the child is killed (and the test fails) at [`HANG`].
fn run_bounded(env: &TestEnv, db: &Path, args: &[&std::ffi::OsStr], what: &str) -> Out {
    let mut c: Command = env.std_command();
    c.arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn compactor");
    let start = Instant::now();
    // Drain the pipes in threads so a chatty child cannot block on them.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let to = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut b).ok();
        b
    });
    let te = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut b).ok();
        b
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            child.wait().unwrap();
            panic!("{what}: no answer after {HANG:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = to.join().unwrap();
    let stderr = env.redact(&String::from_utf8_lossy(&te.join().unwrap()));
    let status = status.code().unwrap_or(-1);
    assert_ne!(status, 101, "{what}: a panic:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{what}: a panic:\n{stderr}");
    assert!(status >= 0, "{what}: died of a signal:\n{stderr}");
    Out {
        status,
        stdout,
        stderr,
    }
}

enum Expect {
    /// Exit 2; stderr holds each of these; the store is unchanged.
    Refused(&'static [&'static str]),
    /// Exit 0; stdout+stderr hold each of these (the reported tolerance).
    Tolerated(&'static [&'static str]),
}
use Expect::{Refused, Tolerated};

/// One Claude Code line of session `hostile` (or `sid`), as text.
fn cc(kind: &str, uuid: &str, parent: Option<&str>, message: Value) -> String {
    json!({"parentUuid": parent, "isSidechain": false, "type": kind, "uuid": uuid,
        "sessionId": "hostile-0000", "timestamp": "2026-03-14T09:00:00.000Z", "message": message})
    .to_string()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn assistant(id: &str, content: Value, usage: Value) -> Value {
    json!({"model": "claude-opus-4-6", "id": id, "type": "message", "role": "assistant", "content": content, "usage": usage})
}

fn lines(ls: &[String]) -> Vec<u8> {
    let mut s = ls.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// A one-exchange session whose answer carries `usage`.
fn with_usage(usage: Value) -> Vec<u8> {
    lines(&[
        cc("user", "u1", None, user("hi")),
        cc(
            "assistant",
            "a1",
            Some("u1"),
            assistant("m1", json!([{"type": "text", "text": "ok"}]), usage),
        ),
    ])
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}})
}

fn tool_result(id: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "out"}]})
}

/// Pseudo-random bytes (no RNG: a fixed recurrence).
fn garbage(n: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

/// Write a 200 MB single line (a user message whose string never closes)
/// in `dir`, streamed in 1 MiB chunks.
fn huge_line(path: &Path) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(
        br#"{"type":"user","uuid":"u1","sessionId":"big","message":{"role":"user","content":""#,
    )
    .unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..200 {
        f.write_all(&chunk).unwrap();
    }
    f.flush().unwrap();
}

/// What a case imports: bytes to write to a file, or a prepared path.
enum Input {
    Bytes(Vec<u8>),
    Path(Box<dyn Fn(&Path) -> PathBuf>),
}

struct Case {
    name: &'static str,
    input: Input,
    extra: &'static [&'static str],
    expect: Expect,
}

fn case(name: &'static str, bytes: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        input: Input::Bytes(bytes.into()),
        extra: &[],
        expect,
    }
}

fn at_path(name: &'static str, make: impl Fn(&Path) -> PathBuf + 'static, expect: Expect) -> Case {
    Case {
        name,
        input: Input::Path(Box::new(make)),
        extra: &[],
        expect,
    }
}

fn cases(fixture: &[u8]) -> Vec<Case> {
    let fixture_text = String::from_utf8(fixture.to_vec()).unwrap();
    let utf16 = |be: bool| {
        let mut out = if be {
            vec![0xfe, 0xff]
        } else {
            vec![0xff, 0xfe]
        };
        for u in fixture_text.encode_utf16() {
            out.extend(if be { u.to_be_bytes() } else { u.to_le_bytes() });
        }
        out
    };
    let deep_array = format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = format!(
        "{{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\",\"message\":{}1{}}}\n",
        "{\"a\":".repeat(100_000),
        "}".repeat(100_000)
    );
    let nul_inside = fixture_text.replacen("Plan the", "Plan\u{0}the", 1);
    let with_nul_escape = fixture_text.replacen("Plan the", "Plan\\u0000the", 1);
    let ok_exchange = |id: &str| {
        assistant(
            id,
            json!([{"type": "text", "text": "ok"}]),
            json!({"input_tokens": 3, "output_tokens": 5}),
        )
    };
    let not_utf8 = ['\u{e9}'].iter().map(|_| 0xe9u8).collect::<Vec<u8>>();
    vec![
        // Encoding and framing.
        case("empty file", "", Refused(&["the file is empty"])),
        case("only whitespace", " \n\t\n\r\n\n", Refused(&["the file is empty"])),
        case("binary garbage", garbage(4096), Refused(&["expected"])),
        case("UTF-16 LE with BOM", utf16(false), Refused(&["the file is UTF-16", "expected UTF-8"])),
        case("UTF-16 BE with BOM", utf16(true), Refused(&["the file is UTF-16"])),
        case("NUL byte inside a string", nul_inside, Refused(&[":1:", "control character"])),
        case("only NUL bytes", vec![0u8; 512], Refused(&["expected"])),
        case("a Latin-1 byte", [b"{\"type\":\"user\",\"x\":\"caf".to_vec(), not_utf8, b"\"}\n".to_vec()].concat(), Refused(&["invalid UTF-8 (byte 0xe9)"])),
        case("JSON array nested 100,000 deep", deep_array, Refused(&["recursion limit exceeded"])),
        case("JSON object nested 100,000 deep", deep_object, Refused(&["recursion limit exceeded"])),
        at_path("a single 200 MB line", |dir| {
            let p = dir.join("huge-line.jsonl");
            huge_line(&p);
            p
        }, Refused(&["huge-line.jsonl:1:", "truncated JSON"])),
        case("a truncated line", format!("{}\n{}\n", cc("user", "u1", None, user("hi")), &cc("user", "u2", Some("u1"), user("again"))[..30]), Refused(&[":2:"])),
        // Without its newline, a truncated last line is a session still being written.
        case("a half-written last line", format!("{}\n{}", cc("user", "u1", None, user("hi")), &cc("user", "u2", Some("u1"), user("again"))[..30]), Tolerated(&["1 line, 1 added", "1 incomplete line at the end, left for later"])),
        case("a top-level string", "\"hello\"\n", Refused(&["could not tell the format"])),
        case("a number line", "42\n", Refused(&["could not tell the format"])),
        case("a null line", "null\n", Refused(&["could not tell the format"])),
        case("an empty object", "{}\n", Refused(&["could not tell the format"])),
        case("application log lines", "{\"level\":\"info\",\"msg\":\"started\"}\n{\"level\":\"warn\",\"msg\":\"slow\"}\n", Refused(&["could not tell the format"])),
        case("an array line among objects", lines(&[cc("user", "u1", None, user("hi")), "[1,2,3]".into()]), Refused(&[":2:1: the line is an array"])),
        case("an out-of-range number in an ignored field", lines(&[cc("user", "u1", None, user("hi")), r#"{"type":"user","uuid":"u2","sessionId":"hostile-0000","message":{"role":"user","content":"x"},"n":1e999999}"#.into()]), Tolerated(&["2 lines, 2 added"])),
        case("a lone surrogate escape", r#"{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"\ud800"}}"#.to_string() + "\n", Refused(&[":1:"])),
        // Wrong shapes and types.
        case("message is a string", lines(&[r#"{"type":"user","uuid":"u1","sessionId":"s","message":"just text"}"#.into()]), Refused(&[":1:1:", "expected"])),
        case("user line without message", "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\"}\n", Refused(&["without \"message\""])),
        case("content is a number", lines(&[cc("user", "u1", None, json!({"role": "user", "content": 42}))]), Refused(&["message content is a number"])),
        case("text block text is a number", lines(&[cc("user", "u1", None, user("hi")), cc("assistant", "a1", Some("u1"), assistant("m1", json!([{"type": "text", "text": 123}]), json!({})))]), Refused(&[":2:1: text block has \"text\" as a number"])),
        case("tool_use without a name", lines(&[cc("user", "u1", None, user("hi")), cc("assistant", "a1", Some("u1"), assistant("m1", json!([{"type": "tool_use", "id": "t"}]), json!({})))]), Refused(&["tool_use block has no \"name\""])),
        case("negative token count", with_usage(json!({"input_tokens": -5, "output_tokens": 1})), Refused(&[":2:1: usage field \"input_tokens\" is -5; expected a token count"])),
        case("fractional token count", with_usage(json!({"input_tokens": 1.5})), Refused(&["usage field \"input_tokens\" is 1.5"])),
        case("token count as a string", with_usage(json!({"output_tokens": "7"})), Refused(&["usage field \"output_tokens\" is \"7\""])),
        case("enormous token count", with_usage(json!({"input_tokens": 3, "cache_read_input_tokens": u64::MAX})), Refused(&["usage field \"cache_read_input_tokens\" is 18446744073709551615"])),
        case("token count over 2^40", with_usage(json!({"output_tokens": (1u64 << 40) + 1})), Refused(&["usage field \"output_tokens\""])),
        // Files that are not transcript files.
        at_path("a directory holding a broken transcript", |dir| {
            let p = dir.join("a-directory");
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(
                p.join("inside.jsonl"),
                "{\"type\":\"summary\",\"summary\":\"t\",\"leafUuid\":\"u\"}\n{broken\n",
            )
            .unwrap();
            p
        }, Refused(&["a-directory/inside.jsonl:2:", "1 of 1 file not imported"])),
        at_path("a directory holding no transcript", |dir| {
            let p = dir.join("not-sessions");
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("inside.jsonl"), "{}\n").unwrap();
            p
        }, Tolerated(&["1 not a transcript", "skipped 1 file that is not a transcript", "not-sessions/inside.jsonl"])),
        at_path("a directory holding a symlink loop", |dir| {
            let p = dir.join("looped");
            std::fs::create_dir_all(&p).unwrap();
            let _ = std::os::unix::fs::symlink("b.jsonl", p.join("a.jsonl"));
            let _ = std::os::unix::fs::symlink("a.jsonl", p.join("b.jsonl"));
            p
        }, Refused(&["looped/a.jsonl", "symbolic links"])),
        at_path("a symlink loop", |dir| {
            let _ = std::os::unix::fs::symlink("loop-b.jsonl", dir.join("loop-a.jsonl"));
            let _ = std::os::unix::fs::symlink("loop-a.jsonl", dir.join("loop-b.jsonl"));
            dir.join("loop-a.jsonl")
        }, Refused(&["loop-a.jsonl", "symbolic links"])),
        at_path("a dangling symlink", |dir| {
            let _ = std::os::unix::fs::symlink("nowhere.jsonl", dir.join("dangling.jsonl"));
            dir.join("dangling.jsonl")
        }, Refused(&["dangling.jsonl", "No such file"])),
        at_path("a FIFO (would block forever if opened)", |dir| {
            let p = dir.join("fifo.jsonl");
            if !p.exists() {
                let ok = Command::new("mkfifo").arg(&p).status().is_ok_and(|s| s.success());
                assert!(ok, "mkfifo failed");
            }
            p
        }, Refused(&["is not a regular file (a FIFO, socket or device)"])),
        at_path("/dev/zero", |_| PathBuf::from("/dev/zero"), Refused(&["is not a regular file"])),
        at_path("a file that vanished (removed before the read)", |dir| {
            let p = dir.join("vanished.jsonl");
            std::fs::write(&p, "x").unwrap();
            std::fs::remove_file(&p).unwrap();
            p
        }, Refused(&["vanished.jsonl", "No such file"])),
        Case {
            name: "a Codex file with --format claude-code",
            input: Input::Bytes(std::fs::read(crate::util::testdata("codex/small-rollout.jsonl")).unwrap()),
            extra: &["--format", "claude-code"],
            expect: Refused(&["expected a claude-code transcript: is --format right?"]),
        },
        case("a JSON document cut short", "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"assistant\"", Refused(&["expected a JSON document"])),
        // Tolerated, and reported.
        case("UTF-8 BOM", [vec![0xef, 0xbb, 0xbf], fixture.to_vec()].concat(), Tolerated(&["21 lines, 21 added"])),
        case("CRLF line ends", fixture_text.replace('\n', "\r\n"), Tolerated(&["21 lines, 21 added"])),
        case("a NUL written as an escape", with_nul_escape, Tolerated(&["21 added"])),
        case("duplicate message ids (one response split over lines)", lines(&[
            cc("user", "u1", None, user("hi")),
            cc("assistant", "a1", Some("u1"), ok_exchange("msg_same")),
            cc("user", "u2", Some("a1"), user("again")),
            cc("assistant", "a2", Some("u2"), ok_exchange("msg_same")),
        ]), Tolerated(&["4 lines, 4 added"])),
        case("duplicate tool ids", lines(&[
            cc("user", "u1", None, user("hi")),
            cc("assistant", "a1", Some("u1"), assistant("m1", json!([tool_use("toolu_1")]), json!({}))),
            cc("user", "r1", Some("a1"), tool_result("toolu_1")),
            cc("assistant", "a2", Some("r1"), assistant("m2", json!([tool_use("toolu_1")]), json!({}))),
            cc("user", "r2", Some("a2"), tool_result("toolu_1")),
        ]), Tolerated(&["tool_use toolu_1 appears twice", "answers a call already answered"])),
        case("a tool_result with no tool_use", lines(&[
            cc("user", "u1", None, user("hi")),
            cc("user", "r1", Some("u1"), tool_result("toolu_nope")),
        ]), Tolerated(&["tool_result for toolu_nope has no matching tool_use"])),
        case("an unknown line type", lines(&[
            cc("user", "u1", None, user("hi")),
            json!({"type": "telepathy", "sessionId": "hostile-0000", "uuid": "z"}).to_string(),
        ]), Tolerated(&["lines skipped: 1 of unknown type \"telepathy\""])),
        case("an unknown block type", lines(&[
            cc("user", "u1", None, user("hi")),
            cc("assistant", "a1", Some("u1"), assistant("m1", json!([{"type": "hologram", "data": "x"}]), json!({}))),
        ]), Tolerated(&["2 lines, 2 added"])),
        case("a tool input that is not an object", lines(&[
            cc("user", "u1", None, user("hi")),
            cc("assistant", "a1", Some("u1"), assistant("m1", json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": "ls"}]), json!({}))),
        ]), Tolerated(&["1 tool call without a result (interrupted): Bash t1 (line 2)"])),
        at_path("a path with a newline", |dir| {
            let p = dir.join("new\nline.jsonl");
            std::fs::write(&p, lines(&[cc("user", "u1", None, user("hi"))])).unwrap();
            p
        }, Tolerated(&["new\\u{a}line.jsonl (claude-code): 1 line,"])),
        at_path("a path with an escape sequence", |dir| {
            let p = dir.join("red\u{1b}[31m.jsonl");
            std::fs::write(&p, lines(&[cc("user", "u1", None, user("hi"))])).unwrap();
            p
        }, Tolerated(&["red\\u{1b}[31m.jsonl (claude-code)"])),
        case("terminal escape sequences in text", lines(&[
            cc("user", "u1", None, user("hi \u{1b}[31mRED\u{1b}]0;pwned\u{7} \u{1b}[2J\u{9b}1m")),
        ]), Tolerated(&["1 line, 1 added"])),
    ]
}

pub const MIN_CASES: usize = 40;

#[test]
fn every_bad_input_is_refused_clearly_or_tolerated_and_reported() {
    let env = TestEnv::new();
    let dir = env.root().join("inputs");
    std::fs::create_dir_all(&dir).unwrap();
    // The shared store holds a task already: refused inputs must leave it be.
    env.import_fixture(DISPOSABLE);
    let fixture = std::fs::read(env.work().join(DISPOSABLE)).unwrap();
    let before = store_dump(&env, &env.db());
    let table = cases(&fixture);
    assert!(table.len() >= MIN_CASES, "{} cases", table.len());
    let (mut refused, mut tolerated) = (0, 0);
    for (i, c) in table.iter().enumerate() {
        let path = match &c.input {
            Input::Bytes(b) => {
                let p = dir.join(format!("case-{i:02}.jsonl"));
                std::fs::write(&p, b).unwrap();
                p
            }
            Input::Path(make) => make(&dir),
        };
        let mut args: Vec<&std::ffi::OsStr> = vec!["import".as_ref()];
        args.extend(c.extra.iter().map(|s| std::ffi::OsStr::new(*s)));
        args.push(path.as_os_str());
        match c.expect {
            Refused(needles) => {
                let out = run_bounded(&env, &env.db(), &args, c.name);
                assert_eq!(out.status, 2, "{}: {}", c.name, out.stderr);
                assert!(
                    out.stderr.starts_with("error: "),
                    "{}: {}",
                    c.name,
                    out.stderr
                );
                for n in needles {
                    assert!(
                        out.stderr.contains(n),
                        "{}: no {n:?} in:\n{}",
                        c.name,
                        out.stderr
                    );
                }
                assert_eq!(
                    store_dump(&env, &env.db()),
                    before,
                    "{}: the store changed",
                    c.name
                );
                refused += 1;
            }
            Tolerated(needles) => {
                let db = env.root().join(format!("tolerated-{i:02}.db"));
                let out = run_bounded(&env, &db, &args, c.name);
                let text = String::from_utf8_lossy(&out.stdout).to_string() + &out.stderr;
                assert_eq!(out.status, 0, "{}: {text}", c.name);
                for n in needles {
                    assert!(text.contains(n), "{}: no {n:?} in:\n{text}", c.name);
                }
                assert_no_raw_controls(&out.stdout, c.name);
                assert_no_raw_controls(out.stderr.as_bytes(), c.name);
                assert_integrity(&db);
                tolerated += 1;
            }
        }
    }
    assert_integrity(&env.db());
    eprintln!(
        "hostile inputs: {} tried, {refused} refused, {tolerated} tolerated",
        table.len()
    );
}

/// No control byte but newline and tab (no ESC, BEL, CR, C1 CSI) in `out`.
#[track_caller]
fn assert_no_raw_controls(out: &[u8], what: &str) {
    let text = String::from_utf8_lossy(out);
    if let Some(c) = text
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
    {
        panic!("{what}: a raw control character {c:?} reached the output:\n{text:?}");
    }
}

#[test]
fn escape_sequences_in_a_transcript_never_reach_the_terminal_raw() {
    let env = TestEnv::new();
    let evil = "title \u{1b}]0;pwned\u{7} \u{1b}[2J\u{1b}[31mRED\u{9b}1m\r";
    let mut text = claude_session("e5c0e5c0-0000-4000-8000-000000000001", 3, 200);
    // Put escapes into the user text, a tool input and a tool output.
    text = text
        .replacen(
            "Step 0: list",
            &format!("Step 0 {}: list", evil.escape_default()),
            1,
        )
        .replacen(
            "wc -l src/module_1.rs",
            &format!("wc -l {}", evil.escape_default()),
            1,
        )
        .replacen(
            " src/module_2/file_0.rs lines",
            &format!(" {}", evil.escape_default()),
            1,
        );
    // escape_default writes \u{1b}, which is not JSON: make it a JSON escape.
    let text = text
        .replace("\\u{1b}", "\\u001b")
        .replace("\\u{7}", "\\u0007")
        .replace("\\u{9b}", "\\u009b");
    let f = env.write("evil.jsonl", &text);
    let run = env.run(&["import", &f]);
    run.success();
    let task = "e5c0e5c0-0000-4000-8000-000000000001";
    let view = env.work().join("v.json");
    let runs: Vec<Vec<&str>> = vec![
        vec!["show", "--task", task],
        vec!["show", "--task", task, "step:2"],
        vec!["tasks"],
        vec!["replay", "--task", task],
        vec!["compact", "--task", task, "-o", "v.json"],
    ];
    let mut shown_escape = false;
    for a in runs {
        let out = run_bounded(
            &env,
            &env.db(),
            &a.iter().map(std::ffi::OsStr::new).collect::<Vec<_>>(),
            &a.join(" "),
        );
        assert_eq!(out.status, 0, "{a:?}: {}", out.stderr);
        assert_no_raw_controls(&out.stdout, &a.join(" "));
        assert_no_raw_controls(out.stderr.as_bytes(), &a.join(" "));
        shown_escape |= String::from_utf8_lossy(&out.stdout).contains("\\u{1b}]0;pwned\\u{7}");
    }
    assert!(shown_escape, "show did not print the escapes visibly");
    // Markdown to stdout is escaped; the JSON view keeps the exact bytes.
    let md = run_bounded(
        &env,
        &env.db(),
        &[
            "export".as_ref(),
            view.as_os_str(),
            "--format".as_ref(),
            "markdown".as_ref(),
        ],
        "export markdown",
    );
    assert_eq!(md.status, 0, "{}", md.stderr);
    assert_no_raw_controls(&md.stdout, "export markdown");
    assert!(String::from_utf8_lossy(&md.stdout).contains("\\u{1b}[2J"));
    let json = std::fs::read_to_string(&view).unwrap();
    assert!(
        json.contains("\\u001b]0;pwned\\u0007"),
        "the view lost the exact text"
    );
    // A diff of two views that differ in escaped text prints it visibly.
    let other = json.replace("pwned", "owned");
    std::fs::write(env.work().join("w.json"), other).unwrap();
    let d = run_bounded(
        &env,
        &env.db(),
        &["diff".as_ref(), view.as_os_str(), "w.json".as_ref()],
        "diff",
    );
    assert_eq!(d.status, 1, "{}", d.stderr);
    assert_no_raw_controls(&d.stdout, "diff");
    assert!(String::from_utf8_lossy(&d.stdout).contains("owned"));
}
