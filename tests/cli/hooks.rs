//! `compactor hooks install|uninstall|status` and the hidden `compactor hook`:
//! the settings files they edit, what each hook prints and records, how a
//! failing hook stays out of the session's way, and, with the real clients
//! (pinned in `clients/`, offline against the loopback stub of `resume.rs`),
//! a rule that survives the client's own compaction.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::resume::{
    CLAUDE_SUMMARY_REQUEST, CODEX_SUMMARY_REQUEST, Stub, client, client_command, codex_config,
    only_jsonl, run_bounded,
};
use crate::util::{Run, TestEnv, testdata};

const RULE: &str = "Never touch the migrations directory.";
/// The fresh Claude Code fixture's session, and its first ask.
const CLAUDE_SESSION: &str = "4c941451-8106-4ee4-bb85-bbcabe9935e0";
const CLAUDE_ASK: &str = "Summarise the project notes.";
const CODEX_SESSION: &str = "01a22f25-2404-7942-913a-5dcba22ec5f1";

/// A user's own settings, laid out by hand: keys in their order, one of
/// their hooks on an event compactor uses, another on one it does not.
const USER_SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(npm test)"]},
  "hooks": {
    "PreCompact": [{"hooks": [{"type": "command", "command": "touch \"$HOME/user-hook-ran\""}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]
  },
  "env": {"Z_LAST": "1", "A_FIRST": "2"}
}
"#;

fn bin() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_compactor"))
        .unwrap()
        .display()
        .to_string()
}

/// `run` with the binary's own path shown as `[BIN]` and timestamps as `[TIME]`.
fn shown(run: &Run) -> String {
    let s = run.snapshot().replace(&bin(), "[BIN]");
    let mut out = String::new();
    for line in s.lines() {
        let l = line.trim_start();
        let indent = &line[..line.len() - l.len()];
        // 2026-12-01T21:55:48.651Z at the start of a log line.
        if l.len() > 24 && l.as_bytes()[10] == b'T' && l.as_bytes()[23] == b'Z' {
            out.push_str(&format!("{indent}[TIME]{}\n", &l[24..]));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn claude_settings(env: &TestEnv) -> PathBuf {
    env.home().join(".claude").join("settings.json")
}

/// `compactor ARGS` with no `--db` (the hooks use the default store).
fn compactor(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.bare_command();
    cmd.args(args);
    env.finish(cmd)
}

/// The default store the hooks write (under the test's XDG_DATA_HOME).
fn default_db(env: &TestEnv) -> PathBuf {
    env.data_home().join("compactor").join("compactor.db")
}

fn log_lines(env: &TestEnv) -> Vec<String> {
    std::fs::read_to_string(env.data_home().join("compactor").join("hooks.log"))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Run `compactor hook EVENT --client CLIENT` with `stdin`.
fn hook(env: &TestEnv, event: &str, client: &str, stdin: &str, vars: &[(&str, &str)]) -> Run {
    let mut cmd = env.bare_command();
    cmd.args(["hook", event, "--client", client])
        .write_stdin(stdin.to_string());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    env.finish(cmd)
}

/// The fresh Claude Code fixture, its first ask given a rule, as a session of
/// the test's Claude Code home.
fn claude_transcript(env: &TestEnv) -> PathBuf {
    let text = std::fs::read_to_string(testdata("claude-code/client-2.1.332.jsonl"))
        .unwrap()
        .replace(CLAUDE_ASK, &format!("{CLAUDE_ASK} {RULE}"));
    let dir = env.home().join(".claude").join("projects").join("-p");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{CLAUDE_SESSION}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The fresh Codex fixture, its first ask given a rule, as a rollout of the
/// test's Codex home.
fn codex_transcript(env: &TestEnv) -> PathBuf {
    let text = std::fs::read_to_string(testdata("codex/client-0.171.0.jsonl"))
        .unwrap()
        .replace(CLAUDE_ASK, &format!("{CLAUDE_ASK} {RULE}"));
    let dir = env
        .home()
        .join(".codex")
        .join("sessions")
        .join("2026/12/01");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rollout-2026-12-01T01-08-12-{CODEX_SESSION}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

fn input(event: &str, session: &str, transcript: &Path, extra: Value) -> String {
    let mut v = json!({
        "session_id": session,
        "transcript_path": transcript,
        "cwd": "/p",
        "hook_event_name": event,
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v.to_string()
}

// ------------------------------------------------------------ settings files

#[test]
fn install_merges_with_the_users_settings_and_uninstall_gives_them_back_byte_for_byte() {
    let env = TestEnv::new();
    let path = claude_settings(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, USER_SETTINGS).unwrap();
    let run = compactor(&env, &["hooks", "install", "claude-code"]);
    run.success()
        .stdout_has("installed compactor's hooks for Claude Code in [TMP]/home/.claude/settings.json (user scope)")
        .stdout_has("backup of the file as it was: [TMP]/home/.claude/settings.json.compactor-backup");
    let backup = path.with_file_name("settings.json.compactor-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), USER_SETTINGS);
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    // The user's keys in their order (serde_json's Value sorts: read the text).
    let at = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
    assert!(
        at("model") < at("permissions")
            && at("permissions") < at("hooks")
            && at("hooks") < at("env")
    );
    assert!(at("Z_LAST") < at("A_FIRST"));
    assert!(at("PreCompact") < at("Stop") && at("Stop") < at("PostCompact"));
    // The user's hook stays first on its event; compactor's follows.
    let pre = v["hooks"]["PreCompact"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert_eq!(
        pre[0]["hooks"][0]["command"],
        "touch \"$HOME/user-hook-ran\""
    );
    assert_eq!(
        pre[1]["hooks"][0]["command"],
        format!("{} hook pre-compact --client claude-code", bin())
    );
    assert_eq!(v["hooks"]["SessionStart"][0]["matcher"], "compact");
    assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 1);
    assert_eq!(v["permissions"]["deny"][0], "Read(./.env)");

    // Twice is once.
    let again = compactor(&env, &["hooks", "install", "claude-code"]);
    again.success().stdout_has("already installed");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), USER_SETTINGS);

    let run = compactor(&env, &["hooks", "uninstall", "claude-code"]);
    run.success().stdout_has("is as it was before install");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), USER_SETTINGS);
    assert!(!backup.exists(), "the backup is not needed any more");
    compactor(&env, &["hooks", "uninstall", "claude-code"])
        .success()
        .stdout_has("nothing to remove");
}

#[test]
fn dry_run_prints_the_change_as_a_diff_and_writes_nothing() {
    let env = TestEnv::new();
    let path = claude_settings(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let before = "{\n  \"model\": \"opus\"\n}\n";
    std::fs::write(&path, before).unwrap();
    let run = compactor(&env, &["hooks", "install", "claude-code", "--dry-run"]);
    run.success();
    insta::assert_snapshot!(shown(&run));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    assert!(
        !path
            .with_file_name("settings.json.compactor-backup")
            .exists()
    );
    // The same for uninstall.
    compactor(&env, &["hooks", "install", "claude-code"]).success();
    let installed = std::fs::read_to_string(&path).unwrap();
    let run = compactor(&env, &["hooks", "uninstall", "claude-code", "--dry-run"]);
    run.success()
        .stdout_has("-  \"model\": \"opus\",")
        .stdout_has("+  \"model\": \"opus\"");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
}

#[test]
fn a_settings_file_that_is_not_json_is_refused_and_left_untouched() {
    let env = TestEnv::new();
    let path = claude_settings(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let bad = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n}\n";
    std::fs::write(&path, bad).unwrap();
    let run = compactor(&env, &["hooks", "install", "claude-code"]);
    run.failure(2);
    insta::assert_snapshot!(shown(&run));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
    // A shape it cannot merge into is refused the same way.
    std::fs::write(&path, "{\"hooks\": []}").unwrap();
    compactor(&env, &["hooks", "install", "claude-code"])
        .failure(2)
        .stderr_has("its \"hooks\" is an array; expected an object of hook events");
    compactor(&env, &["hooks", "uninstall", "claude-code"]).failure(2);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"hooks\": []}");
}

#[test]
fn a_missing_file_and_directory_are_created_and_uninstall_removes_the_file_again() {
    let env = TestEnv::new();
    let dir = env.root().join("claude-config");
    let codex_home = env.root().join("codex-home");
    for (client, var, home, file) in [
        ("claude-code", "CLAUDE_CONFIG_DIR", &dir, "settings.json"),
        ("codex", "CODEX_HOME", &codex_home, "hooks.json"),
    ] {
        let run = |args: &[&str]| {
            let mut cmd = env.bare_command();
            cmd.env(var, home).args(args);
            env.finish(cmd)
        };
        run(&["hooks", "install", client])
            .success()
            .stdout_has("the file is new (uninstall removes it again)");
        let path = home.join(file);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v["hooks"]["PostCompact"][0]["hooks"][0]["command"],
            format!("{} hook post-compact --client {client}", bin())
        );
        assert_eq!(v["hooks"]["PostCompact"][0]["hooks"][0]["timeout"], 60);
        run(&["hooks", "status", client])
            .success()
            .stdout_has("  installed");
        run(&["hooks", "uninstall", client])
            .success()
            .stdout_has("is gone, as before install");
        assert!(!path.exists());
        assert!(home.is_dir(), "the directory stays");
        run(&["hooks", "status", client])
            .failure(1)
            .stdout_has("not installed: the file does not exist");
    }
}

#[test]
fn codex_install_says_how_to_trust_the_hooks() {
    let env = TestEnv::new();
    let run = compactor(&env, &["hooks", "install", "codex"]);
    run.success()
        .stdout_has("[TMP]/home/.codex/hooks.json")
        .stdout_has("type /hooks and trust compactor's three entries");
}

#[test]
fn project_scope_edits_the_current_directorys_settings() {
    let env = TestEnv::new();
    for (client, rel) in [
        ("claude-code", ".claude/settings.json"),
        ("codex", ".codex/hooks.json"),
    ] {
        compactor(&env, &["hooks", "install", client, "--scope", "project"])
            .success()
            .stdout_has(format!("[TMP]/cwd/{rel} (project scope)"));
        assert!(env.work().join(rel).is_file());
        assert!(
            !env.home().join(rel).exists(),
            "the user's settings are not touched"
        );
        compactor(&env, &["hooks", "uninstall", client, "--scope", "project"]).success();
        assert!(!env.work().join(rel).exists());
    }
}

#[test]
fn uninstall_after_the_user_edited_the_file_keeps_their_edit() {
    let env = TestEnv::new();
    let path = claude_settings(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, USER_SETTINGS).unwrap();
    compactor(&env, &["hooks", "install", "claude-code"]).success();
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"model\": \"opus\"", "\"model\": \"sonnet\"");
    std::fs::write(&path, &edited).unwrap();
    compactor(&env, &["hooks", "uninstall", "claude-code"])
        .success()
        .stdout_has("the rest of the file is kept as it is now")
        .stdout_has("so its backup from before install is left: [TMP]/home/.claude/settings.json.compactor-backup");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["model"], "sonnet");
    assert_eq!(v["hooks"]["PreCompact"].as_array().unwrap().len(), 1);
    assert!(v["hooks"].get("PostCompact").is_none());
}

#[test]
fn status_says_what_is_installed_what_it_runs_and_the_last_runs() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    compactor(&env, &["hooks", "install", "claude-code"]).success();
    hook(
        &env,
        "pre-compact",
        "claude-code",
        &input(
            "PreCompact",
            CLAUDE_SESSION,
            &t,
            json!({"trigger": "manual"}),
        ),
        &[],
    )
    .success();
    let run = compactor(&env, &["hooks", "status"]);
    run.success();
    insta::assert_snapshot!(shown(&run));
}

// ------------------------------------------------------------ hook runs

#[test]
fn session_start_prints_the_task_context_with_the_rule_verbatim_and_records_it() {
    let env = TestEnv::new();
    for (client, t, session, limit_bytes) in [
        (
            "claude-code",
            claude_transcript(&env),
            CLAUDE_SESSION,
            false,
        ),
        ("codex", codex_transcript(&env), CODEX_SESSION, true),
    ] {
        let run = hook(
            &env,
            "session-start",
            client,
            &input(
                "SessionStart",
                session,
                &t,
                json!({"source": "compact", "model": "m"}),
            ),
            &[],
        );
        run.success();
        assert_eq!(run.stderr, "", "{client}: nothing on stderr");
        let out: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let context = out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(
            context.contains("## Task Context\n\n## Constraints\n"),
            "{context}"
        );
        assert!(context.contains(RULE), "{client}: {context}");
        assert!(
            context.contains(&format!("#1: {CLAUDE_ASK} {RULE}")),
            "{context}"
        );
        let size = if limit_bytes {
            context.len()
        } else {
            context.encode_utf16().count()
        };
        assert!(size <= 10_000);
        let conn = rusqlite::Connection::open(default_db(&env)).unwrap();
        let (after, tc, who): (u32, String, String) = conn
            .query_row(
                "SELECT after_call, task_context, client FROM client_compaction WHERE task_id = ?1",
                [session],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(after, 3, "{client}: the fixture's three calls");
        assert_eq!(tc, context);
        assert_eq!(who, client);
    }
    let log = log_lines(&env);
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log[0].contains(" session-start claude-code ok: task 4c941451"),
        "{}",
        log[0]
    );
    assert!(log[1].contains("printed the Task Context"), "{}", log[1]);
}

#[test]
fn pre_compact_asks_claude_codes_summarizer_to_keep_the_rules_and_prints_nothing_for_codex() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    let run = hook(
        &env,
        "pre-compact",
        "claude-code",
        &input(
            "PreCompact",
            CLAUDE_SESSION,
            &t,
            json!({"trigger": "manual", "custom_instructions": null}),
        ),
        &[],
    );
    run.success();
    assert!(
        run.stdout
            .starts_with("Keep every request and constraint of the user"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(RULE));
    assert!(
        !run.stdout.trim_start().starts_with('{'),
        "plain text: Claude Code appends it"
    );
    // Imported: the store holds the session.
    let mut cmd = env.bare_command();
    cmd.arg("--db")
        .arg(default_db(&env))
        .args(["tasks", "--json"]);
    env.finish(cmd).success().stdout_has(CLAUDE_SESSION);
    let c = codex_transcript(&env);
    let run = hook(
        &env,
        "pre-compact",
        "codex",
        &input(
            "PreCompact",
            CODEX_SESSION,
            &c,
            json!({"trigger": "auto", "turn_id": "x"}),
        ),
        &[],
    );
    run.success();
    assert_eq!(
        run.stdout, "",
        "Codex ignores a PreCompact hook's plain output"
    );
    assert!(log_lines(&env)[1].contains("pre-compact codex ok: task 01a22f25"));
}

#[test]
fn post_compact_records_the_clients_own_summary() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    let run = hook(
        &env,
        "post-compact",
        "claude-code",
        &input(
            "PostCompact",
            CLAUDE_SESSION,
            &t,
            json!({"trigger": "manual", "compact_summary": "<summary>The user wants notes.</summary>"}),
        ),
        &[],
    );
    run.success();
    assert_eq!(run.stdout, "");
    // Codex sends no summary: it is the rollout's `compacted` item.
    let c = codex_transcript(&env);
    let mut f = std::fs::OpenOptions::new().append(true).open(&c).unwrap();
    writeln!(
        f,
        "{}",
        json!({"timestamp": "2026-12-01T01:09:00.000Z", "type": "compacted", "payload": {"message": "CODEX SUMMARY of the notes"}})
    )
    .unwrap();
    hook(
        &env,
        "post-compact",
        "codex",
        &input(
            "PostCompact",
            CODEX_SESSION,
            &c,
            json!({"trigger": "auto", "turn_id": "t"}),
        ),
        &[],
    )
    .success();
    let conn = rusqlite::Connection::open(default_db(&env)).unwrap();
    let rows: Vec<(String, String, String)> = conn
        .prepare("SELECT task_id, trigger, client_summary FROM client_compaction ORDER BY task_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows,
        [
            (
                CODEX_SESSION.into(),
                "auto".into(),
                "CODEX SUMMARY of the notes".into()
            ),
            (
                CLAUDE_SESSION.into(),
                "manual".into(),
                "<summary>The user wants notes.</summary>".into()
            ),
        ]
    );
}

/// Every failure a hook meets: exit 0, nothing on stdout or stderr, one line
/// in the log saying what went wrong.
#[test]
fn a_failing_hook_exits_0_prints_nothing_and_logs_one_line() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    let outside = env.work().join("elsewhere.jsonl");
    std::fs::copy(&t, &outside).unwrap();
    let malformed = t.with_file_name("0badc0de-0000-4000-8000-000000000000.jsonl");
    std::fs::write(&malformed, "{\"type\": \"user\", \"message\": \n").unwrap();
    let start = |p: &Path| {
        input(
            "SessionStart",
            CLAUDE_SESSION,
            p,
            json!({"source": "compact"}),
        )
    };
    let cases: Vec<(&str, String, String, &str)> = vec![
        (
            "a transcript outside the client's own directory",
            "session-start".into(),
            start(&outside),
            "is not under [TMP]/home/.claude/projects (Claude Code's session directory)",
        ),
        (
            "a malformed transcript",
            "session-start".into(),
            start(&malformed),
            "cannot import the transcript",
        ),
        (
            "no transcript",
            "post-compact".into(),
            json!({"session_id": "s"}).to_string(),
            "names no transcript_path",
        ),
        (
            "stdin that is not JSON",
            "pre-compact".into(),
            "not json".into(),
            "is not the JSON object a client sends",
        ),
        (
            "the wrong event",
            "pre-compact".into(),
            input("PostCompact", CLAUDE_SESSION, &t, json!({})),
            "for its PostCompact event; expected PreCompact",
        ),
        (
            "an unknown event",
            "mid-compact".into(),
            "{}".into(),
            "unknown hook event \"mid-compact\"",
        ),
    ];
    for (what, event, stdin, reason) in cases {
        let before = log_lines(&env).len();
        let run = hook(&env, &event, "claude-code", &stdin, &[]);
        assert_eq!(
            (run.status, run.stdout.as_str(), run.stderr.as_str()),
            (0, "", ""),
            "{what}"
        );
        let log = log_lines(&env);
        assert_eq!(log.len(), before + 1, "{what}: one line");
        let line = env.redact(log.last().unwrap());
        assert!(
            line.contains("failed: ") && line.contains(reason),
            "{what}: {line}"
        );
    }
    // A client claude-code does not know and a command line that does not parse.
    let run = hook(&env, "pre-compact", "vscode", "{}", &[]);
    assert_eq!((run.status, run.stdout.as_str()), (0, ""));
    assert!(
        log_lines(&env)
            .last()
            .unwrap()
            .contains("unknown client \"vscode\"")
    );
    let mut cmd = env.bare_command();
    cmd.args(["hook", "pre-compact", "--bogus"])
        .write_stdin("{}");
    let run = env.finish(cmd);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
}

#[test]
fn a_store_that_cannot_be_opened_fails_the_hook_quietly() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    // The store's path is a directory: nothing can open or write it.
    std::fs::create_dir_all(default_db(&env)).unwrap();
    let run = hook(
        &env,
        "session-start",
        "claude-code",
        &input(
            "SessionStart",
            CLAUDE_SESSION,
            &t,
            json!({"source": "compact"}),
        ),
        &[],
    );
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    let line = env.redact(&log_lines(&env)[0]);
    assert!(line.contains("session 4c941451-8106-4ee4-bb85-bbcabe9935e0 failed: cannot open the store [TMP]/data/compactor/compactor.db"), "{line}");
}

#[test]
fn a_hook_past_its_deadline_gives_up_cleanly() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    let stdin = input(
        "SessionStart",
        CLAUDE_SESSION,
        &t,
        json!({"source": "compact"}),
    );
    let run = hook(
        &env,
        "session-start",
        "claude-code",
        &stdin,
        &[
            ("COMPACTOR_FAULT", "stall-in-hook"),
            ("COMPACTOR_HOOK_TIMEOUT", "0.2"),
        ],
    );
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert!(
        log_lines(&env)[0].contains("failed: timed out after 0.2 s"),
        "{:?}",
        log_lines(&env)
    );
}

#[test]
fn a_locked_store_makes_the_hook_give_up_at_its_deadline() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    let stdin = input("PreCompact", CLAUDE_SESSION, &t, json!({"trigger": "auto"}));
    // A first run creates the store; another writer then holds its lock.
    hook(&env, "pre-compact", "claude-code", &stdin, &[]).success();
    std::fs::write(&t, std::fs::read_to_string(&t).unwrap() + "\n").unwrap();
    let lock = rusqlite::Connection::open(default_db(&env)).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE; CREATE TABLE held (x);")
        .unwrap();
    let run = hook(
        &env,
        "pre-compact",
        "claude-code",
        &stdin,
        &[("COMPACTOR_HOOK_TIMEOUT", "1")],
    );
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    lock.execute_batch("ROLLBACK").unwrap();
    let log = log_lines(&env);
    assert_eq!(log.len(), 2);
    assert!(log[1].contains("failed: timed out after 1 s"), "{}", log[1]);
}

/// What a newcomer hit: with another writer holding the store,
/// `session-start` and `post-compact` each sat out the store's 30 s busy
/// timeout on the client's critical path. A hook waits for the store 2 s at
/// most (configurable), then answers from the transcript alone, writes
/// nothing, and logs what it skipped. The hook's own deadline is set to 20 s
/// here: a hook that still waited 30 s would be cut off and print nothing.
#[test]
fn a_hook_answers_from_the_transcript_while_another_writer_holds_the_store() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    let start = input(
        "SessionStart",
        CLAUDE_SESSION,
        &t,
        json!({"source": "compact"}),
    );
    // The answer with the store free (it records the Task Context once).
    let free = hook(&env, "session-start", "claude-code", &start, &[]);
    free.success();
    assert!(free.stdout.contains(RULE), "{}", free.stdout);
    // Task Contexts and client summaries recorded.
    let recorded = |env: &TestEnv| -> (u32, u32) {
        rusqlite::Connection::open(default_db(env))
            .unwrap()
            .query_row(
                "SELECT count(task_context), count(client_summary) FROM client_compaction",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    };
    assert_eq!(recorded(&env), (1, 0));
    // The transcript grows, so an import would write; a second writer holds
    // the store's write lock meanwhile.
    std::fs::write(&t, std::fs::read_to_string(&t).unwrap() + "\n").unwrap();
    let writer = rusqlite::Connection::open(default_db(&env)).unwrap();
    writer
        .execute_batch("BEGIN IMMEDIATE; CREATE TABLE held (x);")
        .unwrap();
    let deadline = [("COMPACTOR_HOOK_TIMEOUT", "20")];
    let run = hook(&env, "session-start", "claude-code", &start, &deadline);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, free.stdout.as_str(), ""),
        "the same Task Context, from the transcript alone"
    );
    let post = input(
        "PostCompact",
        CLAUDE_SESSION,
        &t,
        json!({"trigger": "manual", "compact_summary": "The user wants the parser fixed."}),
    );
    let run = hook(&env, "post-compact", "claude-code", &post, &deadline);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    // The wait is configurable: none at all.
    let pre = input("PreCompact", CLAUDE_SESSION, &t, json!({"trigger": "auto"}));
    let run = hook(
        &env,
        "pre-compact",
        "claude-code",
        &pre,
        &[("COMPACTOR_HOOK_STORE_WAIT", "0"), deadline[0]],
    );
    assert_eq!(run.status, 0);
    assert!(run.stdout.contains(RULE), "{}", run.stdout);
    writer.execute_batch("ROLLBACK").unwrap();
    let log = log_lines(&env);
    assert_eq!(log.len(), 4, "{log:?}");
    let busy = "; the store was busy (another process writing it): after ";
    for (line, skipped) in [
        (
            &log[1],
            "skipped importing the transcript, recording the Task Context (the next import catches up)",
        ),
        (
            &log[2],
            "skipped importing the transcript, recording Claude Code's summary (the next import catches up)",
        ),
        (
            &log[3],
            "skipped importing the transcript (the next import catches up)",
        ),
    ] {
        assert!(line.contains(" ok: task "), "{line}");
        assert!(line.contains(busy) && line.ends_with(skipped), "{line}");
    }
    assert!(log[1].contains("printed the Task Context"), "{}", log[1]);
    // Each line says what was done, never "recorded" or "imported" beside
    // "skipped" for the same thing.
    assert!(
        log[2].contains(": did not record Claude Code's summary (")
            && !log[2].contains(" recorded "),
        "{}",
        log[2]
    );
    assert!(
        log[3].contains(": read ")
            && log[3].contains(" rows from the transcript; ")
            && !log[3].contains("imported"),
        "{}",
        log[3]
    );
    // Nothing was written while the store was held; the next hook catches up.
    assert_eq!(recorded(&env), (1, 0));
    hook(&env, "post-compact", "claude-code", &post, &[]).success();
    assert_eq!(recorded(&env), (1, 1));
    assert!(!log_lines(&env)[4].contains("busy"));
}

#[test]
fn session_start_for_another_source_does_nothing() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    let run = hook(
        &env,
        "session-start",
        "claude-code",
        &input(
            "SessionStart",
            CLAUDE_SESSION,
            &t,
            json!({"source": "resume"}),
        ),
        &[],
    );
    assert_eq!((run.status, run.stdout.as_str()), (0, ""));
    assert!(log_lines(&env)[0].contains("skipped: source resume, not compact"));
    assert!(!default_db(&env).exists(), "nothing imported");
}

/// What a hooked compaction leaves: the record, then the client's own
/// compaction lines (as Claude Code writes them after the hooks ran).
fn compact_through_the_hooks(env: &TestEnv, t: &Path) {
    let summary = "<summary>The user wants the notes summarised.</summary>";
    hook(
        env,
        "pre-compact",
        "claude-code",
        &input(
            "PreCompact",
            CLAUDE_SESSION,
            t,
            json!({"trigger": "manual"}),
        ),
        &[],
    )
    .success();
    hook(
        env,
        "session-start",
        "claude-code",
        &input(
            "SessionStart",
            CLAUDE_SESSION,
            t,
            json!({"source": "compact"}),
        ),
        &[],
    )
    .success();
    hook(
        env,
        "post-compact",
        "claude-code",
        &input(
            "PostCompact",
            CLAUDE_SESSION,
            t,
            json!({"trigger": "manual", "compact_summary": summary}),
        ),
        &[],
    )
    .success();
    let lines = [
        json!({"parentUuid": null, "isSidechain": false, "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "timestamp": "2026-12-01T01:09:00.000Z", "uuid": "aaaaaaaa-0000-4000-8000-000000000001", "compactMetadata": {"trigger": "manual", "preTokens": 100}, "sessionId": CLAUDE_SESSION}),
        json!({"parentUuid": "aaaaaaaa-0000-4000-8000-000000000001", "isSidechain": false, "type": "user", "isCompactSummary": true, "message": {"role": "user", "content": format!("This session is being continued from a previous conversation.\nSummary:\n{summary}")}, "uuid": "aaaaaaaa-0000-4000-8000-000000000002", "timestamp": "2026-12-01T01:09:00.001Z", "sessionId": CLAUDE_SESSION}),
        json!({"parentUuid": "aaaaaaaa-0000-4000-8000-000000000002", "isSidechain": false, "type": "user", "message": {"role": "user", "content": "What next?"}, "uuid": "aaaaaaaa-0000-4000-8000-000000000003", "timestamp": "2026-12-01T01:09:01.000Z", "sessionId": CLAUDE_SESSION}),
        json!({"parentUuid": "aaaaaaaa-0000-4000-8000-000000000003", "isSidechain": false, "type": "assistant", "message": {"id": "msg_after", "type": "message", "role": "assistant", "model": "claude-opus-5-5", "content": [{"type": "text", "text": "Carrying on."}], "usage": {"input_tokens": 10, "output_tokens": 3}}, "uuid": "aaaaaaaa-0000-4000-8000-000000000004", "timestamp": "2026-12-01T01:09:02.000Z", "sessionId": CLAUDE_SESSION}),
    ];
    let mut f = std::fs::OpenOptions::new().append(true).open(t).unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

#[test]
fn probe_recorded_sets_the_clients_summary_beside_compactors() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    compact_through_the_hooks(&env, &t);
    let mut cmd = env.bare_command();
    cmd.arg("--db")
        .arg(default_db(&env))
        .arg("probe")
        .arg(&t)
        .arg("--recorded");
    let run = env.finish(cmd);
    run.success();
    insta::assert_snapshot!(shown(&run));
}

#[test]
fn report_shows_the_clients_compactions_side_by_side() {
    let env = TestEnv::new();
    let t = claude_transcript(&env);
    compact_through_the_hooks(&env, &t);
    let mut cmd = env.bare_command();
    cmd.arg("--db")
        .arg(default_db(&env))
        .arg("report")
        .arg(&t)
        .args(["-o", "-"]);
    let run = env.finish(cmd);
    run.success();
    let html = &run.stdout;
    let at = html
        .find("The client's own compactions")
        .expect("the section");
    let section = &html[at..];
    assert!(
        section.contains("after call 3 · Claude Code · manual"),
        "{section:.600}"
    );
    assert!(section.contains("The user wants the notes summarised."));
    assert!(section.contains("Never touch the migrations directory."));
    assert!(section.contains("<b>Claude Code&#39;s summary</b>: critical probes kept <b>0.0%</b>"));
    assert!(
        section.contains("<b>compactor&#39;s Task Context</b>: critical probes kept <b>100.0%</b>")
    );
}

// ------------------------------------------------------------ the real clients

/// The summary the stub writes for a client's compaction: the rule is gone.
const LOSSY_SUMMARY: &str = "<analysis>short</analysis>\n<summary>\n1. Primary Request and Intent:\n   The user wants the parser fixed.\n</summary>";
const FIRST_PROMPT: &str = "Fix the parser in src/parse.rs. Never touch the migrations directory.";
const NEXT_PROMPT: &str = "What is next?";

/// The texts of one request, for searching: every string in its body.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

fn texts(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    strings(v, &mut out);
    out
}

/// Claude Code in print mode against `stub`, in the test's HOME.
fn claude_run(
    env: &TestEnv,
    bin: &Path,
    stub: &Stub,
    project: &Path,
    args: &[&str],
) -> (i32, String, String) {
    let mut cmd = client_command(bin, &env.home(), project);
    cmd.env(
        "ANTHROPIC_BASE_URL",
        format!("http://127.0.0.1:{}", stub.port),
    )
    .env("ANTHROPIC_API_KEY", "sk-ant-loopback")
    .env("XDG_DATA_HOME", env.data_home())
    .args(args);
    run_bounded(cmd)
}

/// A Claude Code session of one prompt with the rule, then `/compact`; the
/// session id.
fn claude_session_then_compact(env: &TestEnv, bin: &Path, stub: &Stub, project: &Path) -> String {
    let (status, out, err) = claude_run(env, bin, stub, project, &["-p", FIRST_PROMPT]);
    assert_eq!(status, 0, "claude failed:\n{out}\n{err}");
    let file = only_jsonl(&env.home().join(".claude").join("projects"));
    let id = file.file_stem().unwrap().to_string_lossy().to_string();
    let (status, out, err) = claude_run(
        env,
        bin,
        stub,
        project,
        &["--resume", &id, "-p", "/compact"],
    );
    assert_eq!(status, 0, "/compact failed:\n{out}\n{err}");
    id
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn claude_code_keeps_a_rule_through_its_own_compaction() {
    let Some(claude) = client(
        "claude",
        "claude_code_keeps_a_rule_through_its_own_compaction",
    ) else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let settings = claude_settings(&env);
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, USER_SETTINGS).unwrap();
    compactor(&env, &["hooks", "install", "claude-code"]).success();
    let stub = Stub::answering_summaries_with(Some(LOSSY_SUMMARY));
    let id = claude_session_then_compact(&env, &claude, &stub, &project);

    let bodies = stub.bodies("/v1/messages?");
    let summarize = bodies
        .iter()
        .find(|b| b.to_string().contains(CLAUDE_SUMMARY_REQUEST))
        .expect("Claude Code asked for a summary");
    // The PreCompact hook's output reached the summarizer's prompt.
    let prompt = texts(summarize)
        .into_iter()
        .find(|t| t.contains(CLAUDE_SUMMARY_REQUEST))
        .unwrap();
    let extra = prompt
        .split("Additional Instructions:")
        .nth(1)
        .expect("compactor's instructions");
    assert!(
        extra.contains("Keep every request and constraint of the user"),
        "{extra:.400}"
    );
    assert!(extra.contains(RULE));
    assert!(
        env.home().join("user-hook-ran").exists(),
        "the user's own PreCompact hook ran too"
    );

    let (status, out, err) = claude_run(
        &env,
        &claude,
        &stub,
        &project,
        &["--resume", &id, "-p", NEXT_PROMPT],
    );
    assert_eq!(status, 0, "the next turn failed:\n{out}\n{err}");
    let bodies = stub.bodies("/v1/messages?");
    let next = bodies
        .iter()
        .find(|b| b.to_string().contains(NEXT_PROMPT))
        .expect("the next turn's request");
    let all = texts(next);
    // The client's summary, which lost the rule, replaced the history...
    assert!(
        all.iter()
            .any(|t| t.contains("The user wants the parser fixed."))
    );
    assert!(
        !all.iter().any(|t| t.contains(FIRST_PROMPT)
            && !t.contains("## Task Context")
            && !t.contains("Keep every request")),
        "the first prompt itself is no longer sent"
    );
    // ...and compactor's Task Context carries the rule verbatim.
    let tc = all
        .iter()
        .find(|t| t.contains("## Task Context"))
        .unwrap_or_else(|| panic!("no Task Context in the next request: {next}"));
    assert!(tc.contains("## Constraints\n- "), "{tc}");
    assert!(tc.contains(RULE), "{tc}");
    assert!(tc.contains(&format!("#1: {FIRST_PROMPT}")), "{tc}");

    // The hooks logged their runs, and probe sets the two summaries side by side.
    let log = log_lines(&env);
    assert_eq!(log.len(), 3, "{log:?}");
    for e in ["pre-compact", "session-start", "post-compact"] {
        assert!(
            log.iter()
                .any(|l| l.contains(&format!(" {e} claude-code ok: "))),
            "{e}: {log:?}"
        );
    }
    let transcript = only_jsonl(&env.home().join(".claude").join("projects"));
    let mut cmd = env.bare_command();
    cmd.arg("--db")
        .arg(default_db(&env))
        .arg("probe")
        .arg(&transcript)
        .arg("--recorded");
    let run = env.finish(cmd);
    run.success()
        .stdout_has("the client's own compaction after call 1 (Claude Code, manual)")
        .stdout_has("Claude Code's summary     0.0% (0 of 2)")
        .stdout_has("compactor's Task Context  100.0% (2 of 2)")
        .stdout_has(format!("!constraint  line 3      {RULE}"));

    compactor(&env, &["hooks", "uninstall", "claude-code"]).success();
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn claude_code_compacts_and_goes_on_when_the_store_cannot_be_written() {
    let Some(claude) = client(
        "claude",
        "claude_code_compacts_and_goes_on_when_the_store_cannot_be_written",
    ) else {
        return;
    };
    let env = TestEnv::new();
    let project = env.root().join("project");
    std::fs::create_dir_all(&project).unwrap();
    compactor(&env, &["hooks", "install", "claude-code"]).success();
    // The store's path is a directory: no hook can open or write it.
    std::fs::create_dir_all(default_db(&env)).unwrap();
    let stub = Stub::answering_summaries_with(Some(LOSSY_SUMMARY));
    let id = claude_session_then_compact(&env, &claude, &stub, &project);
    let (status, out, err) = claude_run(
        &env,
        &claude,
        &stub,
        &project,
        &["--resume", &id, "-p", NEXT_PROMPT],
    );
    assert_eq!(status, 0, "the next turn failed:\n{out}\n{err}");
    let bodies = stub.bodies("/v1/messages?");
    assert!(
        bodies
            .iter()
            .any(|b| b.to_string().contains(CLAUDE_SUMMARY_REQUEST)),
        "compacted"
    );
    let next = bodies
        .iter()
        .find(|b| b.to_string().contains(NEXT_PROMPT))
        .expect("the next turn");
    assert!(
        texts(next)
            .iter()
            .any(|t| t.contains("The user wants the parser fixed."))
    );
    let log = log_lines(&env);
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(
        log.iter()
            .all(|l| l.contains("failed: cannot open the store")),
        "{log:?}"
    );
}

#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn codex_keeps_a_rule_through_its_own_compaction() {
    let Some(codex) = client("codex", "codex_keeps_a_rule_through_its_own_compaction") else {
        return;
    };
    let env = TestEnv::new();
    let home = env.home();
    let project = env.root().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let stub =
        Stub::answering_summaries_with(Some("CODEX-SUMMARY: the user wants the parser fixed."));
    codex_config(&home, stub.port);
    // Compact before the second turn: its history (13 tokens) is over the limit.
    let config = home.join(".codex").join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("model_auto_compact_token_limit = 10\n{text}"),
    )
    .unwrap();
    let hooks_json = home.join(".codex").join("hooks.json");
    let user_hooks = "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}}\n";
    std::fs::write(&hooks_json, user_hooks).unwrap();
    compactor(&env, &["hooks", "install", "codex"]).success();
    let exec = |args: &[&str]| {
        let mut cmd = client_command(&codex, &home, &project);
        // A test vets the hooks it installs; a user trusts them once in `/hooks`.
        cmd.env("STUB_API_KEY", "loopback")
            .env("XDG_DATA_HOME", env.data_home())
            .args([
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-hook-trust",
            ])
            .args(args);
        run_bounded(cmd)
    };
    let (status, out, err) = exec(&[FIRST_PROMPT]);
    assert_eq!(status, 0, "codex failed:\n{out}\n{err}");
    let file = only_jsonl(&home.join(".codex").join("sessions"));
    let stem = file.file_stem().unwrap().to_string_lossy().to_string();
    let id = stem[stem.len() - 36..].to_string();
    let (status, out, err) = exec(&["resume", &id, NEXT_PROMPT]);
    assert_eq!(status, 0, "codex failed:\n{out}\n{err}");

    let bodies = stub.bodies("/v1/responses");
    assert!(
        bodies
            .iter()
            .any(|b| b.to_string().contains(CODEX_SUMMARY_REQUEST)),
        "Codex compacted: {} requests",
        bodies.len()
    );
    let next = bodies
        .iter()
        .rfind(|b| {
            b.to_string().contains(NEXT_PROMPT) && !b.to_string().contains(CODEX_SUMMARY_REQUEST)
        })
        .expect("the request after the compaction");
    let input = next["input"].as_array().unwrap();
    let tc = input
        .iter()
        .find(|it| it["role"] == "developer" && it.to_string().contains("## Task Context"))
        .unwrap_or_else(|| panic!("no Task Context in {next}"));
    let tc = texts(tc).join("\n");
    assert!(tc.contains(RULE), "{tc}");
    assert!(tc.contains(&format!("#1: {FIRST_PROMPT}")), "{tc}");
    assert!(
        texts(next)
            .iter()
            .any(|t| t.contains("CODEX-SUMMARY: the user wants the parser fixed."))
    );

    let log = log_lines(&env);
    for e in ["pre-compact", "post-compact", "session-start"] {
        assert!(
            log.iter().any(|l| l.contains(&format!(" {e} codex ok: "))),
            "{e}: {log:?}"
        );
    }
    let conn = rusqlite::Connection::open(default_db(&env)).unwrap();
    let (summary, context): (String, String) = conn
        .query_row(
            "SELECT client_summary, task_context FROM client_compaction",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(summary.contains("CODEX-SUMMARY"), "{summary}");
    assert!(context.contains(RULE));

    compactor(&env, &["hooks", "uninstall", "codex"]).success();
    assert_eq!(std::fs::read_to_string(&hooks_json).unwrap(), user_hooks);
}

#[test]
fn status_says_when_claude_code_runs_no_hook_at_all() {
    let env = TestEnv::new();
    let path = claude_settings(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\"disableAllHooks\": true}\n").unwrap();
    compactor(&env, &["hooks", "install", "claude-code"]).success();
    compactor(&env, &["hooks", "status", "claude-code"])
        .failure(1)
        .stdout_has("\"disableAllHooks\": true, so Claude Code runs no hook at all");
}

// ------------------------------------------------------------ the MCP server

/// Claude Code's own state file as it writes it, with a server of the user's.
const CLAUDE_STATE: &str = "{\n  \"numStartups\": 4,\n  \"mcpServers\": {\n    \"notes\": {\n      \"type\": \"stdio\",\n      \"command\": \"notes-mcp\",\n      \"args\": []\n    }\n  },\n  \"projects\": {}\n}\n";
/// A Codex config with the user's comments and tables.
const CODEX_CONFIG: &str =
    "# my settings\nmodel = \"o3\"  # the default\n\n[tui]\nnotifications = true\n";

fn mode_of(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn install_registers_the_mcp_server_and_uninstall_gives_the_files_back_byte_for_byte() {
    let env = TestEnv::new();
    let claude = env.home().join(".claude.json");
    std::fs::create_dir_all(env.home().join(".codex")).unwrap();
    let codex = env.home().join(".codex").join("config.toml");
    std::fs::write(&claude, CLAUDE_STATE).unwrap();
    std::fs::write(&codex, CODEX_CONFIG).unwrap();
    // Claude Code keeps its state (account data included) private.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    compactor(&env, &["hooks", "install", "claude-code"])
        .success()
        .stdout_has(format!(
            "registered compactor's MCP server for Claude Code in [TMP]/home/.claude.json: {} mcp",
            bin()
        ))
        .stdout_has("backup of the file as it was: [TMP]/home/.claude.json.compactor-backup");
    let backup = claude.with_file_name(".claude.json.compactor-backup");
    assert_eq!(
        mode_of(&backup),
        0o600,
        "the backup is as private as the file"
    );
    assert_eq!(mode_of(&claude), 0o600);
    compactor(&env, &["hooks", "install", "codex"])
        .success()
        .stdout_has("registered compactor's MCP server for Codex in [TMP]/home/.codex/config.toml");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["compactor"]["command"], bin());
    assert_eq!(v["mcpServers"]["compactor"]["args"], json!(["mcp"]));
    assert_eq!(
        v["mcpServers"]["notes"]["command"], "notes-mcp",
        "the user's server stays"
    );
    let toml = std::fs::read_to_string(&codex).unwrap();
    assert!(toml.starts_with(CODEX_CONFIG), "{toml}");
    assert!(
        toml.ends_with(&format!(
            "\n[mcp_servers.compactor]\ncommand = \"{}\"\nargs = [\"mcp\"]\ndefault_tools_approval_mode = \"approve\"\n",
            bin()
        )),
        "{toml}"
    );
    // Twice is once; status shows it.
    compactor(&env, &["hooks", "install", "codex"])
        .success()
        .stdout_has("compactor's MCP server is already registered for Codex");
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), toml);
    let status = compactor(&env, &["hooks", "status"]);
    status.success();
    assert!(
        status
            .stdout
            .contains(&format!("  MCP server             {} mcp\n", bin())),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("                         in [TMP]/home/.codex/config.toml"),
        "{}",
        status.stdout
    );
    // The client rewrote its state since (as Claude Code does at every start):
    // the server goes, and what the client wrote stays.
    let mut v = v;
    v["numStartups"] = json!(5);
    let rewritten = serde_json::to_string_pretty(&v).unwrap() + "\n";
    std::fs::write(&claude, &rewritten).unwrap();
    // The backup as an earlier compactor wrote it, readable by everyone:
    // the one uninstall leaves is no more readable than the file.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&backup, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    compactor(&env, &["hooks", "uninstall", "claude-code"])
        .success()
        .stdout_has("removed compactor's MCP server from [TMP]/home/.claude.json; the rest of the file is kept as it is now")
        .stdout_has("the file changed since install, so its backup from before install is left: [TMP]/home/.claude.json.compactor-backup (compactor no longer needs it; delete it when you wish)");
    assert_eq!(mode_of(&backup), 0o600);
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
    assert_eq!(after["numStartups"], 5);
    assert!(after["mcpServers"].get("compactor").is_none());
    assert_eq!(after["mcpServers"]["notes"]["command"], "notes-mcp");
    compactor(&env, &["hooks", "uninstall", "codex"])
        .success()
        .stdout_has("removed compactor's MCP server: [TMP]/home/.codex/config.toml is as it was before install");
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), CODEX_CONFIG);
    assert!(
        !codex
            .with_file_name("config.toml.compactor-backup")
            .exists()
    );
}

#[test]
fn an_untouched_claude_state_file_comes_back_byte_for_byte_and_a_new_one_goes() {
    let env = TestEnv::new();
    let claude = env.home().join(".claude.json");
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(&claude, CLAUDE_STATE).unwrap();
    compactor(&env, &["hooks", "install", "claude-code"]).success();
    compactor(&env, &["hooks", "uninstall", "claude-code"])
        .success()
        .stdout_has(
            "removed compactor's MCP server: [TMP]/home/.claude.json is as it was before install",
        );
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), CLAUDE_STATE);
    // A Codex home with no config: install creates it, uninstall removes it.
    let codex = env.home().join(".codex").join("config.toml");
    compactor(&env, &["hooks", "install", "codex"])
        .success()
        .stdout_has("the file is new (uninstall removes it again)");
    assert!(codex.exists());
    compactor(&env, &["hooks", "uninstall", "codex"])
        .success()
        .stdout_has("removed compactor's MCP server: [TMP]/home/.codex/config.toml is gone, as before install");
    assert!(!codex.exists());
}

#[test]
fn a_server_named_compactor_of_the_users_stops_install_before_anything_is_written() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home().join(".codex")).unwrap();
    let codex = env.home().join(".codex").join("config.toml");
    let own = "[mcp_servers.compactor]\ncommand = \"my-compactor\"\n";
    std::fs::write(&codex, own).unwrap();
    compactor(&env, &["hooks", "install", "codex"])
        .failure(2)
        .stderr_has(
            "it already defines an MCP server named compactor at line 1 that compactor did not add",
        );
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), own);
    assert!(
        !env.home().join(".codex").join("hooks.json").exists(),
        "no hook was installed either"
    );
}

// ------------------------------------------------------------ Gemini CLI

/// A Gemini CLI user's own settings: the auth type the loopback run needs,
/// and a compression threshold low enough (1% of the window) that the CLI
/// compresses by itself a few reads into the turn.
const GEMINI_USER_SETTINGS: &str = r#"{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "model": {"compressionThreshold": 0.01},
  "hooks": {
    "AfterAgent": [{"hooks": [{"type": "command", "command": "true"}]}]
  }
}
"#;

const GEMINI_RULE: &str = "Never edit files outside notes/.";

/// The text of a Gemini content's parts.
fn gemini_text(content: &Value) -> String {
    content["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

#[test]
fn install_for_gemini_cli_adds_pre_compress_and_before_model_and_uninstall_gives_the_file_back() {
    let env = TestEnv::new();
    let settings = env.home().join(".gemini").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, GEMINI_USER_SETTINGS).unwrap();
    let run = env.run(&["hooks", "install", "gemini-cli"]);
    run.success();
    assert!(run.stdout.contains("PreCompress"), "{}", run.stdout);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let hooks = &v["hooks"];
    assert_eq!(hooks["AfterAgent"][0]["hooks"][0]["command"], "true");
    for (event, arg) in [
        ("PreCompress", "pre-compact"),
        ("BeforeModel", "before-model"),
    ] {
        let h = &hooks[event][0]["hooks"][0];
        let c = h["command"].as_str().unwrap();
        assert!(
            c.ends_with(&format!(" hook {arg} --client gemini-cli")),
            "{c}"
        );
        assert_eq!(
            h["timeout"], 60_000,
            "Gemini CLI's timeout is in milliseconds"
        );
        assert!(hooks[event][0].get("matcher").is_none());
    }
    for e in ["PreCompact", "PostCompact", "SessionStart"] {
        assert!(hooks.get(e).is_none(), "{e} is not Gemini CLI's");
    }
    assert_eq!(v["security"]["auth"]["selectedType"], "gemini-api-key");
    // Installing again changes nothing; status sees both.
    let before = std::fs::read(&settings).unwrap();
    env.run(&["hooks", "install", "gemini-cli"]).success();
    assert_eq!(std::fs::read(&settings).unwrap(), before);
    let status = env.run(&["hooks", "status", "gemini-cli"]);
    status.success();
    assert!(status.stdout.contains("BeforeModel"), "{}", status.stdout);
    env.run(&["hooks", "uninstall", "gemini-cli"]).success();
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        GEMINI_USER_SETTINGS,
        "byte for byte"
    );
}

/// A Gemini CLI session with one ask holding the rule, under the test's home.
fn gemini_transcript(env: &TestEnv) -> PathBuf {
    let dir = env
        .home()
        .join(".gemini")
        .join("tmp")
        .join("p")
        .join("chats");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session-2026-12-06T09-00-5b0e2c7a.jsonl");
    let text = std::fs::read_to_string(testdata(
        "gemini-cli/session-2026-12-06T09-00-5b0e2c7a.jsonl",
    ))
    .unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn before_model_input(transcript: &Path, messages: Value) -> String {
    input(
        "BeforeModel",
        "5b0e2c7a",
        transcript,
        json!({"llm_request": {"model": "gemini-2.5-pro", "messages": messages}}),
    )
}

#[test]
fn before_model_says_nothing_and_logs_nothing_without_the_clis_summary() {
    let env = TestEnv::new();
    let t = gemini_transcript(&env);
    let stdin = before_model_input(
        &t,
        json!([{"role": "user", "content": "hello"}, {"role": "model", "content": "hi"}]),
    );
    let run = env.finish({
        let mut cmd = env.command(&["hook", "before-model", "--client", "gemini-cli"]);
        cmd.write_stdin(stdin);
        cmd
    });
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "");
    assert!(!env.root().join("hooks.log").exists(), "nothing logged");
    assert!(!env.db().exists(), "the store is not touched");
}

#[test]
fn before_model_appends_the_task_context_to_the_clis_summary_and_reuses_it() {
    let env = TestEnv::new();
    let t = gemini_transcript(&env);
    let messages = json!([
        {"role": "user", "content": "<session_context>env</session_context>"},
        {"role": "user", "content": "<state_snapshot>the CLI's summary</state_snapshot>"},
        {"role": "model", "content": "Got it. Thanks for the additional context!"},
        {"role": "user", "content": "later"},
    ]);
    let once = |stdin: String| {
        let mut cmd = env.command(&["hook", "before-model", "--client", "gemini-cli"]);
        cmd.write_stdin(stdin);
        let run = env.finish(cmd);
        run.success();
        run.stdout
    };
    let first = once(before_model_input(&t, messages.clone()));
    let out: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "BeforeModel");
    let sent = out["hookSpecificOutput"]["llm_request"]["messages"]
        .as_array()
        .unwrap();
    assert_eq!(
        sent.len(),
        2,
        "only the messages up to the summary: {sent:?}"
    );
    assert_eq!(
        sent[0], messages[0],
        "the one before is sent back as it was"
    );
    let summary = sent[1]["content"].as_str().unwrap();
    assert!(summary.starts_with("<state_snapshot>the CLI's summary</state_snapshot>\n\n"));
    assert!(summary.contains("## Task Context"), "{summary}");
    // The session's first ask's rule is in it, in its words.
    assert!(
        summary.contains("Never edit files outside src/."),
        "{summary}"
    );
    // The next request after the same compression gets the same text.
    let again = once(before_model_input(&t, messages.clone()));
    assert_eq!(again, first);
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let rows: Vec<(String, String, String)> = conn
        .prepare("SELECT client, client_summary, task_context FROM client_compaction")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "gemini-cli");
    assert!(rows[0].1.contains("the CLI's summary"));
    assert!(summary.ends_with(&rows[0].2));
    let log = std::fs::read_to_string(env.root().join("hooks.log")).unwrap();
    assert!(
        log.contains("put the Task Context after Gemini CLI's summary"),
        "{log}"
    );
    assert!(log.contains("put the recorded Task Context"), "{log}");
}

#[test]
fn a_failing_gemini_hook_exits_0_prints_nothing_and_logs_one_line() {
    let env = TestEnv::new();
    // A transcript outside Gemini CLI's own session directory.
    let outside = env.root().join("elsewhere.jsonl");
    std::fs::write(&outside, "{}\n").unwrap();
    let messages = json!([
        {"role": "user", "content": "summary"},
        {"role": "model", "content": "Got it. Thanks for the additional context!"},
    ]);
    let mut cmd = env.command(&["hook", "before-model", "--client", "gemini-cli"]);
    cmd.write_stdin(before_model_input(&outside, messages));
    let run = env.finish(cmd);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "");
    let log = std::fs::read_to_string(env.root().join("hooks.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(
        log.contains("before-model gemini-cli") && log.contains("failed"),
        "{log}"
    );
}

/// The real Gemini CLI (pinned), its hooks installed by `compactor hooks
/// install gemini-cli`, against the loopback Gemini stand-in on a
/// tool-heavy turn with a compression threshold that makes the CLI compress
/// by itself: every request after its compression holds compactor's Task
/// Context after the CLI's summary (with the first ask's rule), the same
/// text each time; the store records the summary and the Task Context; the
/// turn goes on to the end; uninstall gives the settings back byte for byte.
#[test]
#[cfg_attr(
    not(compactor_clients),
    ignore = "needs the pinned agent clients: cd clients && npm ci"
)]
fn gemini_cli_gets_the_task_context_back_after_its_own_compression() {
    let Some(bin) = client("gemini", "gemini_cli_gets_the_task_context_back") else {
        return;
    };
    let env = TestEnv::new();
    let home = env.home();
    let project = env.root().join("project");
    crate::proxy::write_notes(&project, 12, 160);
    let settings = home.join(".gemini").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, GEMINI_USER_SETTINGS).unwrap();
    env.run(&["hooks", "install", "gemini-cli"]).success();
    let model = crate::proxy::Model::start();
    let gemini = |args: &[&str]| {
        let mut cmd = client_command(&bin, &home, &project);
        cmd.env("GEMINI_API_KEY", "loopback-key")
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", model.port),
            )
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .arg("--skip-trust")
            .args(args);
        let (status, out, err) = run_bounded(cmd);
        assert_eq!(status, 0, "gemini failed:\n{out}\n{err}");
        assert!(out.contains("All files read."), "{out}\n{err}");
    };
    // The CLI compresses at a user prompt's boundary: the first prompt's
    // reads go over the threshold, and the next prompt (the session
    // resumed) starts with the compression.
    gemini(&[
        "-p",
        &format!(
            "Read every file in notes/ one by one and summarise them. [[reads 12]] {GEMINI_RULE}"
        ),
    ]);
    gemini(&["--resume", "latest", "-p", "Now list the files you read."]);

    let main: Vec<Value> = model
        .model_calls()
        .iter()
        .filter(|c| c.path.contains(":streamGenerateContent"))
        .map(|c| c.json())
        .collect();
    let ack = "Got it. Thanks for the additional context!";
    let mut after = Vec::new();
    for (n, body) in main.iter().enumerate() {
        let contents = body["contents"].as_array().unwrap();
        let Some(i) = contents
            .iter()
            .position(|c| c["role"] == "model" && gemini_text(c) == ack)
        else {
            continue;
        };
        let summary = gemini_text(&contents[i - 1]);
        let tc = summary
            .split_once("## Task Context")
            .unwrap_or_else(|| {
                panic!("request {n} after the compression: no Task Context in {summary}")
            })
            .1;
        assert!(tc.contains(GEMINI_RULE), "request {n}: {tc}");
        assert!(
            tc.contains("[[reads 12]]"),
            "request {n}: the first ask: {tc}"
        );
        after.push((n, summary));
    }
    assert!(
        !after.is_empty(),
        "Gemini CLI compressed: {} main requests, none after a compression",
        main.len()
    );
    // Every request after a compression up to the end holds it.
    let first = after[0].0;
    assert_eq!(
        after.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        (first..main.len()).collect::<Vec<_>>(),
        "every request from the first compression on"
    );
    let log = std::fs::read_to_string(env.root().join("hooks.log")).unwrap();
    assert!(log.contains(" pre-compact gemini-cli ok: "), "{log}");
    assert!(
        log.contains(" before-model gemini-cli ok: ") && log.contains("put the Task Context"),
        "{log}"
    );
    assert!(!log.contains("failed"), "{log}");
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let recorded: Vec<(String, String)> = conn
        .prepare("SELECT client_summary, task_context FROM client_compaction WHERE client = 'gemini-cli'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!recorded.is_empty());
    // Each request sends the Task Context recorded with its summary.
    for (n, summary) in &after {
        assert!(
            recorded
                .iter()
                .any(|(s, tc)| *summary == format!("{s}\n\n{tc}")),
            "request {n}: the recorded text"
        );
    }
    env.run(&["hooks", "uninstall", "gemini-cli"]).success();
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        GEMINI_USER_SETTINGS
    );
}
