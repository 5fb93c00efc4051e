//! Round trips: a session compacted and written as a client's own session
//! (`compact --write-session`), resumed (the lines its client appends,
//! `testdata/roundtrip/*-more.jsonl`, filled in as the client writes them),
//! imported and compacted again keeps every ask and rule it ever had, in each
//! client and across them (Claude Code → Codex → Claude Code); `probe` on the
//! written session counts the asks and rules its carried summary lists.
//! `tests/cli/resume.rs` makes the same trip with the real clients.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::TestEnv;

const BUDGET: &[&str] = &["--window", "16000", "--output-reserved", "2000"];

const CLAUDE: &str = "roundtrip/claude-code.jsonl";
const CLAUDE_MORE: &str = "roundtrip/claude-code-more.jsonl";
const CODEX: &str = "roundtrip/codex.jsonl";
const CODEX_MORE: &str = "roundtrip/codex-more.jsonl";

/// What each fixture asks, and the rules those asks state.
const CLAUDE_ASK: &str = "The payment webhook handler in app/payments/webhook.py drops events under load. Find out why and fix it. Never log the webhook signing secret, and do not change the public route /hooks/payment.";
const CLAUDE_RULE: &str =
    "Never log the webhook signing secret, and do not change the public route /hooks/payment.";
const CLAUDE_MORE_ASK: &str =
    "Now add retries with backoff to the event queue. Keep the retry count at 3 or fewer.";
const CLAUDE_MORE_RULE: &str = "Keep the retry count at 3 or fewer.";
const CODEX_ASK: &str = "The tenant quota report is wrong for accounts with more than 1000 seats. Find the bug and fix it. Only edit files under services/quota, and never run migrations against the production database.";
const CODEX_RULE: &str = "Only edit files under services/quota, and never run migrations against the production database.";
const CODEX_MORE_ASK: &str =
    "Add a regression test for the 1000-seat case. Do not add new dependencies.";
const CODEX_MORE_RULE: &str = "Do not add new dependencies.";

/// A session `compact --write-session` wrote.
struct Written {
    id: String,
    path: PathBuf,
    run: crate::util::Run,
}

impl Written {
    fn lines(&self) -> Vec<Value> {
        json_lines(&std::fs::read_to_string(&self.path).unwrap())
    }

    /// The path as the binary is given it (under the test's root).
    fn arg(&self) -> &str {
        self.path.to_str().unwrap()
    }
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `compact SOURCE --write-session KIND` with the session id pinned.
fn write_session(env: &TestEnv, source: &str, kind: &str, id: &str, extra: &[&str]) -> Written {
    let mut args = vec!["compact", source, "--write-session", kind, "--json"];
    args.extend_from_slice(BUDGET);
    args.extend_from_slice(extra);
    let mut cmd = env.command(&args);
    cmd.env("COMPACTOR_SESSION_ID", id)
        .env("COMPACTOR_SESSION_TIME", "1796084204");
    let run = env.finish(cmd);
    run.success();
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["session_id"], id);
    let path = report["session_path"]
        .as_str()
        .unwrap()
        .replace("[TMP]", &env.root().display().to_string());
    Written {
        id: id.to_string(),
        path: PathBuf::from(path),
        run,
    }
}

/// Resume `session` as its client would: append `more` (a fixture of the
/// lines the client writes) with the session's id, project directory and
/// last line's uuid filled in.
fn resume(session: &Written, more: &str) {
    let lines = session.lines();
    let cwd = lines
        .iter()
        .find_map(|l| l["cwd"].as_str().or(l["payload"]["cwd"].as_str()))
        .expect("the session names its directory");
    let parent = lines
        .iter()
        .rev()
        .find_map(|l| l["uuid"].as_str())
        .unwrap_or("");
    let quoted = |s: &str| {
        let q = serde_json::to_string(s).unwrap();
        q[1..q.len() - 1].to_string()
    };
    let text = std::fs::read_to_string(crate::util::testdata(more))
        .unwrap()
        .replace("@SESSION@", &quoted(&session.id))
        .replace("@CWD@", &quoted(cwd))
        .replace("@PARENT@", &quoted(parent));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&session.path)
        .unwrap();
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
}

/// The text of the view `compact FILE` ends with, whitespace-normalised.
fn final_view(env: &TestEnv, file: &str) -> String {
    let mut args = vec!["compact", file, "-o", "final.json", "-q"];
    args.extend_from_slice(BUDGET);
    env.run(&args).success();
    let view: Value =
        serde_json::from_slice(&std::fs::read(env.work().join("final.json")).unwrap()).unwrap();
    normalise(&view.to_string())
}

fn normalise(s: &str) -> String {
    // JSON escapes line breaks; a summary may wrap a long line.
    s.replace("\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[track_caller]
fn assert_holds(view: &str, texts: &[&str]) {
    for t in texts {
        assert!(view.contains(t), "the final view lost {t:?}");
    }
}

/// `probe FILE --json` (with `extra` flags).
fn probe(env: &TestEnv, file: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["probe", file, "--json"];
    args.extend_from_slice(BUDGET);
    args.extend_from_slice(extra);
    let run = env.run(&args);
    let v = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.snapshot()));
    (run.status, v)
}

/// The first compact folds: the written session opens with the summary.
#[track_caller]
fn opens_with_a_summary(session: &Written, kind: &str) {
    let lines = session.lines();
    match kind {
        "claude-code" => {
            assert_eq!(lines[0]["subtype"], "compact_boundary");
            assert_eq!(lines[1]["isCompactSummary"], true);
        }
        _ => {
            // session_meta, the turn_context naming the model (when known),
            // then the compacted item.
            let compacted = lines.last().unwrap();
            assert_eq!(compacted["type"], "compacted");
            let first = &compacted["payload"]["replacement_history"][0];
            assert!(
                first["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("## Task Context"),
                "{first}"
            );
        }
    }
}

#[test]
fn a_claude_code_session_keeps_its_asks_and_rules_through_a_claude_code_round_trip() {
    let env = TestEnv::new();
    let src = env.fixture(CLAUDE);
    let s = write_session(
        &env,
        &src,
        "claude-code",
        "7c3e9a10-0000-4000-8000-000000000001",
        &[],
    );
    opens_with_a_summary(&s, "claude-code");
    resume(&s, CLAUDE_MORE);
    let view = final_view(&env, s.arg());
    assert_holds(
        &view,
        &[CLAUDE_ASK, CLAUDE_RULE, CLAUDE_MORE_ASK, CLAUDE_MORE_RULE],
    );
    // The second compact folded again: the carried summary was its prior,
    // and the first ask kept its ordinal.
    assert!(view.contains(&format!("- #1: {CLAUDE_ASK}")), "{view:.600}");
    assert!(
        view.contains(&format!("- #2: {CLAUDE_MORE_ASK}")),
        "{view:.900}"
    );
}

#[test]
fn a_codex_session_keeps_its_asks_and_rules_through_a_codex_round_trip() {
    let env = TestEnv::new();
    let src = env.fixture(CODEX);
    let s = write_session(
        &env,
        &src,
        "codex",
        "01a1f0c2-0000-7000-8000-000000000002",
        &[],
    );
    opens_with_a_summary(&s, "codex");
    // The carried history is imported as content, not as 0 calls.
    let import = env.run(&["import", s.arg(), "--json"]);
    import.success();
    let r: Value = serde_json::from_str(&import.stdout).unwrap();
    let task = &r["tasks"][0];
    assert!(task["steps"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(
        task["turns"], 1,
        "the carried summary opens the one turn: {r}"
    );
    resume(&s, CODEX_MORE);
    let view = final_view(&env, s.arg());
    assert_holds(
        &view,
        &[CODEX_ASK, CODEX_RULE, CODEX_MORE_ASK, CODEX_MORE_RULE],
    );
    assert!(view.contains(&format!("- #1: {CODEX_ASK}")), "{view:.600}");
    assert!(
        view.contains(&format!("- #2: {CODEX_MORE_ASK}")),
        "{view:.900}"
    );
}

/// Claude Code → Codex → Claude Code, each written session resumed with
/// more work before the next compaction.
#[test]
fn asks_and_rules_survive_claude_code_to_codex_to_claude_code() {
    let env = TestEnv::new();
    let src = env.fixture(CLAUDE);
    let codex = write_session(
        &env,
        &src,
        "codex",
        "01a1f0c2-0000-7000-8000-000000000003",
        &[],
    );
    opens_with_a_summary(&codex, "codex");
    resume(&codex, CODEX_MORE);
    let claude = write_session(
        &env,
        codex.arg(),
        "claude-code",
        "7c3e9a10-0000-4000-8000-000000000004",
        &[],
    );
    opens_with_a_summary(&claude, "claude-code");
    resume(&claude, CLAUDE_MORE);
    let all = [
        CLAUDE_ASK,
        CLAUDE_RULE,
        CODEX_MORE_ASK,
        CODEX_MORE_RULE,
        CLAUDE_MORE_ASK,
        CLAUDE_MORE_RULE,
    ];
    let view = final_view(&env, claude.arg());
    assert_holds(&view, &all);
    for (n, ask) in [CLAUDE_ASK, CODEX_MORE_ASK, CLAUDE_MORE_ASK]
        .iter()
        .enumerate()
    {
        assert!(
            view.contains(&format!("- #{}: {ask}", n + 1)),
            "#{}: {view:.1200}",
            n + 1
        );
    }

    // probe reads the carried asks and rules as the session's own, and the
    // extractive fold loses none of them.
    let (status, p) = probe(&env, claude.arg(), &["--fail-on-loss"]);
    assert_eq!(status, 0, "{p}");
    assert_eq!(p["critical_lost"], 0, "{p}");
    assert_eq!(
        p["categories"]["ask"],
        json!({"passed": 3, "recoverable": 0, "lost": 0, "critical": true}),
        "the two carried asks and the new one: {p}"
    );
    assert_eq!(p["categories"]["constraint"]["passed"], 3, "{p}");
    assert_eq!(p["categories"]["constraint"]["lost"], 0, "{p}");

    // The static checkpoint keeps only the last ask: the carried rules are
    // dropped at the fold, and probe says so.
    let (status, p) = probe(
        &env,
        claude.arg(),
        &["--summarizer", "static", "--fail-on-loss"],
    );
    assert_eq!(status, 1, "{p}");
    let lost: Vec<&str> = p["lost"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["critical"] == true)
        .map(|l| l["expected"].as_str().unwrap())
        .collect();
    assert!(lost.contains(&CLAUDE_RULE), "{lost:?}");
    assert!(lost.contains(&CODEX_MORE_RULE), "{lost:?}");
    assert!(lost.contains(&CLAUDE_ASK), "{lost:?}");
}

/// A written session resumed with nothing new and compacted again under the
/// same budget is the view it was written from: its carried history is the
/// history, whole.
#[test]
fn a_written_session_compacted_again_is_the_view_it_was_written_from() {
    let env = TestEnv::new();
    let src = env.fixture(CLAUDE);
    let mut args = vec!["compact", src.as_str(), "--json", "-q", "-o", "first.json"];
    args.extend_from_slice(BUDGET);
    let first = env.run(&args);
    first.success();
    let s = write_session(
        &env,
        &src,
        "claude-code",
        "7c3e9a10-0000-4000-8000-000000000005",
        &[],
    );
    let mut args = vec!["compact", s.arg(), "--json", "-q", "-o", "second.json"];
    args.extend_from_slice(BUDGET);
    let second = env.run(&args);
    second.success();
    let hash = |r: &crate::util::Run| {
        serde_json::from_str::<Value>(&r.stdout).unwrap()["view_hash"].clone()
    };
    assert_eq!(hash(&first), hash(&second));
    assert_eq!(
        std::fs::read(env.work().join("first.json")).unwrap(),
        std::fs::read(env.work().join("second.json")).unwrap()
    );
}

/// Claude Code's lines name the client version and branch, and the title is
/// a `custom-title` line; importing the session gives that title.
#[test]
fn a_written_claude_code_session_names_its_source_s_version_branch_and_title() {
    let env = TestEnv::new();
    // Claude Code from Claude Code: the source's own version.
    let src = env.fixture(CLAUDE);
    let s = write_session(
        &env,
        &src,
        "claude-code",
        "7c3e9a10-0000-4000-8000-000000000006",
        &[],
    );
    let lines = s.lines();
    for l in lines.iter().filter(|l| l.get("uuid").is_some()) {
        assert_eq!(l["version"], "2.1.39", "{l}");
        assert_eq!(l["gitBranch"], "fix/webhook-retries", "{l}");
    }
    assert_eq!(
        lines.last().unwrap(),
        &json!({"type": "custom-title", "customTitle": "Payment webhook drops events", "sessionId": s.id})
    );
    env.run(&["import", s.arg()]).success();
    assert_eq!(env.task(&s.id)["title"], "Payment webhook drops events");

    // Claude Code from Codex: the pinned client's version, Codex's branch,
    // and (no title recorded) the first ask as the title.
    let src = env.fixture(CODEX);
    let s = write_session(
        &env,
        &src,
        "claude-code",
        "7c3e9a10-0000-4000-8000-000000000007",
        &[],
    );
    let lines = s.lines();
    assert!(
        lines
            .iter()
            .filter(|l| l.get("uuid").is_some())
            .all(|l| l["version"] == "2.1.332" && l["gitBranch"] == "fix/quota-seats")
    );
    let title = lines.last().unwrap()["customTitle"].as_str().unwrap();
    assert!(
        CODEX_ASK.starts_with(&title[..title.len() - '…'.len_utf8()]),
        "{title}"
    );
    env.run(&["import", s.arg()]).success();
    assert_eq!(env.task(&s.id)["title"], title);
}

/// Codex's `session_meta` names the version and branch; the title goes where
/// Codex keeps session names, its `session_index.jsonl`, and importing the
/// rollout from that home gives it.
#[test]
fn a_written_codex_session_names_its_source_s_version_branch_and_title() {
    let env = TestEnv::new();
    let src = env.fixture(CODEX);
    let s = write_session(
        &env,
        &src,
        "codex",
        "01a1f0c2-0000-7000-8000-000000000008",
        &[],
    );
    let meta = &s.lines()[0]["payload"];
    assert_eq!(meta["cli_version"], "0.169.0", "the source's own: {meta}");
    assert_eq!(meta["git"], json!({"branch": "fix/quota-seats"}));
    let claude_src = env.fixture(CLAUDE);
    let t = write_session(
        &env,
        &claude_src,
        "codex",
        "01a1f0c2-0000-7000-8000-000000000009",
        &[],
    );
    let meta = &t.lines()[0]["payload"];
    assert_eq!(
        meta["cli_version"], "0.171.0",
        "the pinned client's: {meta}"
    );
    assert_eq!(meta["git"], json!({"branch": "fix/webhook-retries"}));
    let index = std::fs::read_to_string(env.home().join(".codex/session_index.jsonl")).unwrap();
    let entries = json_lines(&index);
    assert_eq!(entries.len(), 2, "{index}");
    assert_eq!(entries[1]["id"], t.id);
    assert_eq!(entries[1]["thread_name"], "Payment webhook drops events");
    assert_eq!(entries[1]["updated_at"], "2026-12-01T00:16:44.000Z");
    env.run(&["import", t.arg()]).success();
    assert_eq!(env.task(&t.id)["title"], "Payment webhook drops events");
    // A copy outside the Codex home has no index to be named by.
    std::fs::copy(&t.path, env.work().join("loose.jsonl")).unwrap();
    env.run(&["import", "loose.jsonl", "--task", "loose"])
        .success();
    assert_ne!(env.task("loose")["title"], "Payment webhook drops events");
}

/// The printed `resume: cd DIR` must lead somewhere: a directory that does
/// not exist here is a warning; `--resume-dir` to one that does is not.
#[test]
fn a_resume_directory_that_does_not_exist_is_a_warning() {
    let env = TestEnv::new();
    let src = env.fixture(CLAUDE);
    let s = write_session(
        &env,
        &src,
        "claude-code",
        "7c3e9a10-0000-4000-8000-00000000000a",
        &[],
    );
    s.run.stderr_has(
        "warning: the session's project directory /home/dev/payments does not exist here",
    );
    let s = write_session(
        &env,
        &src,
        "claude-code",
        "7c3e9a10-0000-4000-8000-00000000000b",
        &["--resume-dir", "."],
    );
    assert!(!s.run.stderr.contains("warning:"), "{}", s.run.stderr);
    assert!(Path::new(&s.path).starts_with(env.home()));
}

/// What a newcomer hit: a Codex session written with `--write-session codex`
/// had no `turn_context`, so imported again it had no model, and was priced
/// at the defaults with a 200,000-token window; a Claude Code session
/// written the same way kept its model.
#[test]
fn a_written_session_keeps_its_model_when_imported_again() {
    for (source, kind, id, model) in [
        (
            CODEX,
            "codex",
            "01a1f0c2-0000-7000-8000-00000000000c",
            "gpt-5.1-codex",
        ),
        (
            CLAUDE,
            "claude-code",
            "7c3e9a10-0000-4000-8000-00000000000d",
            "claude-sonnet-4-5",
        ),
    ] {
        let env = TestEnv::new();
        let src = env.fixture(source);
        let w = write_session(&env, &src, kind, id, &[]);
        if kind == "codex" {
            let contexts: Vec<Value> = w
                .lines()
                .into_iter()
                .filter(|l| l["type"] == "turn_context")
                .collect();
            assert_eq!(contexts.len(), 1, "{kind}");
            assert_eq!(contexts[0]["payload"]["model"], model);
        }
        env.run(&["import", w.arg()]).success();
        assert_eq!(env.task(id)["model"], model, "{kind}");
        // Its budget comes from its model, as the source's does: no default
        // window, no note that the model is unknown.
        let run = env.run(&["step", "--task", id]);
        run.success().stdout_has(format!(" ({model}) − reserve"));
        assert!(!run.stderr.contains("note:"), "{kind}: {}", run.stderr);
        // And a model only the other client knows is not written: a Claude
        // Code source written for Codex names none.
        if kind == "codex" {
            let claude = env.fixture(CLAUDE);
            let other = write_session(
                &env,
                &claude,
                "codex",
                "01a1f0c2-0000-7000-8000-00000000000e",
                &[],
            );
            assert!(
                other.lines().iter().all(|l| l["type"] != "turn_context"),
                "no Codex model to name"
            );
        }
    }
}
