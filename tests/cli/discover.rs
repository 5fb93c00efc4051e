//! `compactor import` where sessions live: the default locations under a fake
//! home, directories walked, standard input, unchanged files skipped unread,
//! and a session file that is still being written.

use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use crate::import::{CLAUDE_TASK, CODEX_TASK};
use crate::util::{TestEnv, copy_tree, corpus, testdata};

const SUBAGENT_SESSION: &str = "c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94";

/// A fake home: Claude Code projects holding the subagent fixture and a plain
/// session, and a Codex sessions tree holding a rollout.
pub fn fake_home(env: &TestEnv) -> PathBuf {
    let home = env.home();
    let projects = home.join(".claude/projects");
    copy_tree(
        &testdata("claude-code/with-subagent"),
        &projects.join("-home-dev-projects-tally"),
    );
    copy_tree(
        &testdata("claude-code/small-session.jsonl"),
        &projects.join("-home-dev-projects-tally/small-session.jsonl"),
    );
    copy_tree(
        &testdata("codex/small-rollout.jsonl"),
        &home.join(".codex/sessions/2026/02/26/rollout-small.jsonl"),
    );
    home
}

fn statuses(run: &crate::util::Run) -> Vec<String> {
    run.import_reports()
        .iter()
        .map(|v| v["status"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn import_with_no_path_imports_every_session_of_the_fake_home() {
    let env = TestEnv::new();
    fake_home(&env);
    let run = env.run(&["import"]);
    run.success();
    assert!(
        run.stdout.ends_with("4 files: 4 imported, 0 unchanged\n"),
        "{}",
        run.stdout
    );
    let tasks = env.tasks();
    let mut ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    ids.sort();
    let sub = format!("{SUBAGENT_SESSION}/agent-a5c31d7");
    let mut expected = vec![CODEX_TASK, CLAUDE_TASK, SUBAGENT_SESSION, sub.as_str()];
    expected.sort();
    assert_eq!(ids, expected);
    assert_eq!(env.task(&sub)["parent"], SUBAGENT_SESSION);
    assert_eq!(env.task(SUBAGENT_SESSION)["parent"], Value::Null);

    // A second run reads nothing: every file is unchanged, and says so.
    let again = env.run(&["import", "--json"]);
    again.success();
    assert_eq!(statuses(&again), ["unchanged"; 4]);
    let human = env.run(&["import"]);
    assert_eq!(human.stdout, "4 files: 0 imported, 4 unchanged\n");
}

#[test]
fn claude_and_codex_pick_one_location_and_the_env_vars_move_them() {
    let env = TestEnv::new();
    fake_home(&env);
    let run = env.run(&["import", "--codex", "--json"]);
    run.success();
    let ids: Vec<String> = env
        .tasks()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, [CODEX_TASK]);

    // CLAUDE_CONFIG_DIR replaces ~/.claude; a location that is missing when
    // asked for by name is an error with a hint.
    let elsewhere = env.root().join("claude-config");
    copy_tree(
        &testdata("claude-code/small-session.jsonl"),
        &elsewhere.join("projects/p/s.jsonl"),
    );
    let mut cmd = env.command(&["import", "--claude"]);
    cmd.env("CLAUDE_CONFIG_DIR", &elsewhere);
    let run = env.finish(cmd);
    run.success().stdout_has("claude-config/projects/p/s.jsonl");
    assert!(
        run.stdout.ends_with("1 file: 1 imported, 0 unchanged\n"),
        "{}",
        run.stdout
    );

    let mut cmd = env.command(&["import", "--codex"]);
    cmd.env("CODEX_HOME", env.root().join("no-codex"));
    let run = env.finish(cmd);
    run.failure(2)
        .stderr_has("no Codex sessions: [TMP]/no-codex/sessions does not exist")
        .stderr_has("hint: set CODEX_HOME");
}

/// The Gemini CLI session of `testdata/gemini-cli/`.
pub const GEMINI_TASK: &str = "5b0e2c7a-91d4-4f0e-8a36-2f7d1c9e4b10";

#[test]
fn gemini_cli_sessions_are_found_in_each_projects_chats_and_under_gemini_cli_home() {
    let env = TestEnv::new();
    let tmp = env.home().join(".gemini/tmp");
    copy_tree(
        &testdata("gemini-cli/session-2026-12-06T09-00-5b0e2c7a.jsonl"),
        &tmp.join("ledger/chats/session-2026-12-06T09-00-5b0e2c7a.jsonl"),
    );
    // What the CLI keeps beside its chats is no session.
    fs::create_dir_all(tmp.join("ledger/logs")).unwrap();
    fs::write(
        tmp.join("ledger/logs/session-5b0e2c7a.jsonl"),
        "{\"sessionId\":\"5b0e2c7a\",\"type\":\"user\",\"message\":\"hi\"}\n",
    )
    .unwrap();
    let run = env.run(&["import", "--gemini", "--json"]);
    run.success();
    let reports = run.import_reports();
    assert_eq!(reports.len(), 1, "{}", run.stdout);
    assert_eq!(reports[0]["format"], "gemini-cli");
    assert_eq!(reports[0]["unknown_line_types"], serde_json::json!({}));
    assert_eq!(env.task(GEMINI_TASK)["format"], "gemini-cli");
    // Every session, the Gemini CLI ones among them.
    let all = env.run(&["import"]);
    all.success().stdout_has("0 imported, 1 unchanged");

    // GEMINI_CLI_HOME replaces the home the CLI keeps .gemini/ in.
    let elsewhere = env.root().join("gemini-home");
    copy_tree(
        &testdata("gemini-cli/session-2026-12-06T09-00-5b0e2c7a.jsonl"),
        &elsewhere.join(".gemini/tmp/p/chats/session-2026-12-06T09-00-5b0e2c7a.jsonl"),
    );
    let mut cmd = env.command(&["import", "--gemini"]);
    cmd.env("GEMINI_CLI_HOME", &elsewhere);
    env.finish(cmd)
        .success()
        .stdout_has("gemini-home/.gemini/tmp/p/chats/session-2026-12-06T09-00-5b0e2c7a.jsonl");
    let mut cmd = env.command(&["import", "--gemini"]);
    cmd.env("GEMINI_CLI_HOME", env.root().join("no-gemini"));
    env.finish(cmd)
        .failure(2)
        .stderr_has("no Gemini CLI sessions: [TMP]/no-gemini/.gemini/tmp does not exist")
        .stderr_has("hint: set GEMINI_CLI_HOME");
}

#[test]
fn no_path_and_no_sessions_is_an_input_error() {
    let env = TestEnv::new();
    let run = env.run(&["import"]);
    run.failure(2)
        .stderr_has("no sessions found")
        .stderr_has("hint: name a file or directory");
}

#[test]
fn a_directory_is_walked_and_its_subagents_linked() {
    let env = TestEnv::new();
    env.fixture("claude-code/with-subagent");
    let run = env.run(&["import", "claude-code"]);
    run.success();
    // The session file before its subagent, in a fixed order.
    let first = run.stdout.find("with-subagent/c2e8d4a1").unwrap();
    let sub = run.stdout.find("subagents/agent-a5c31d7.jsonl").unwrap();
    assert!(first < sub, "{}", run.stdout);
    run.stdout_has(format!("parent {SUBAGENT_SESSION}"));
    assert!(
        run.stdout.ends_with("2 files: 2 imported, 0 unchanged\n"),
        "{}",
        run.stdout
    );
}

/// A project tree: one session, and files that are no transcript (a
/// `package.json`, a commented config, an empty file, another tool's JSON
/// lines).
fn project_tree(env: &TestEnv) {
    env.fixture("claude-code/small-session.jsonl");
    env.write(
        "claude-code/package.json",
        "{\n  \"name\": \"tally\",\n  \"version\": \"1.0.0\"\n}\n",
    );
    env.write(
        "claude-code/conf/tsconfig.json",
        "// compiler options\n{\"strict\": true,}\n",
    );
    env.write("claude-code/conf/empty.jsonl", "");
    env.write(
        "claude-code/logs/server.jsonl",
        "{\"level\":\"info\",\"msg\":\"listening\"}\n{\"level\":\"warn\",\"msg\":\"slow\"}\n",
    );
}

#[test]
fn a_walk_skips_what_is_not_a_transcript_in_one_note() {
    let env = TestEnv::new();
    project_tree(&env);
    let run = env.run(&["import", "claude-code"]);
    run.success();
    insta::assert_snapshot!(run.snapshot());
    assert_eq!(env.tasks().len(), 1);
    // JSON: the totals record counts them.
    let run = env.run(&["import", "claude-code", "--json"]);
    run.success();
    let total: Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(total["not_transcripts"], 4, "{total}");
    assert_eq!(total["failed"], 0, "{total}");
    assert_eq!(total["files"], 5, "{total}");
    // Named on the command line, each still fails, saying why.
    for (file, why) in [
        ("claude-code/package.json", "could not tell the format"),
        ("claude-code/conf/tsconfig.json", "expected a JSON document"),
        ("claude-code/conf/empty.jsonl", "the file is empty"),
        ("claude-code/logs/server.jsonl", "could not tell the format"),
    ] {
        env.run(&["import", file])
            .failure(2)
            .stderr_has(format!("error: {file}:"))
            .stderr_has(why);
    }
}

/// What a newcomer hit: one stale link under `~/.claude/projects` (its
/// session deleted) failed every bare `compactor import` with exit 2.
#[cfg(unix)]
#[test]
fn a_link_that_leads_nowhere_is_skipped_with_the_same_note() {
    let env = TestEnv::new();
    let home = fake_home(&env);
    let project = home.join(".claude/projects/-home-dev-projects-tally");
    std::os::unix::fs::symlink(
        project.join("deleted-session.jsonl"),
        project.join("stale-link.jsonl"),
    )
    .unwrap();
    let run = env.run(&["import"]);
    run.success();
    let stale = project.join("stale-link.jsonl").display().to_string();
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("note: skipped"))
        .collect();
    assert_eq!(
        notes,
        [env
            .redact(&format!(
                "note: skipped 1 file that is not a transcript (no transcript format in the first lines, or a link that leads nowhere; import one by name to see why): {stale}"
            ))
            .as_str()],
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("error"), "{}", run.stderr);
    assert!(
        run.stdout
            .ends_with("5 files: 4 imported, 0 unchanged, 1 not a transcript\n"),
        "{}",
        run.stdout
    );
    assert_eq!(env.tasks().len(), 4, "every session was imported");
    // A walk the user named skips it the same way, and so does sweep.
    let run = env.run(&["import", project.to_str().unwrap(), "--json"]);
    run.success();
    let total: Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(total["not_transcripts"], 1, "{total}");
    assert_eq!(total["failed"], 0, "{total}");
    let run = env.run(&[
        "sweep",
        project.to_str().unwrap(),
        "--window",
        "40000",
        "--json",
    ]);
    assert!(matches!(run.status, 0 | 1), "{}", run.snapshot());
    run.stderr_has("stale-link.jsonl");
    // Named on the command line, it still fails, saying why.
    env.run(&["import", &stale])
        .failure(2)
        .stderr_has("stale-link.jsonl");
}

#[test]
fn a_walked_transcript_with_a_bad_line_still_fails_the_file() {
    // Its first lines say Claude Code: a bad line later is a broken
    // transcript, not a file that is none.
    let env = TestEnv::new();
    project_tree(&env);
    let whole = std::fs::read_to_string(testdata("claude-code/small-session.jsonl")).unwrap();
    let head: String = whole.split_inclusive('\n').take(3).collect();
    env.write(
        "claude-code/broken.jsonl",
        format!("{head}{{\"type\":\"user\",\"uuid\":\"u9\", broken\n"),
    );
    let run = env.run(&["import", "claude-code"]);
    run.failure(2)
        .stderr_has("error: claude-code/broken.jsonl:4:")
        .stderr_has("note: skipped 4 files that are not transcripts");
    assert!(
        run.stdout
            .ends_with("6 files: 1 imported, 0 unchanged, 4 not transcripts, 1 failed\n"),
        "{}",
        run.stdout
    );
    // With --format given, nothing is left to detect: a file of another
    // format fails as a bad transcript.
    let run = env.run(&["import", "claude-code/logs", "--format", "claude-code"]);
    run.failure(2).stderr_has("claude-code/logs/server.jsonl:");
}

#[test]
fn standard_input_is_read_and_needs_format_when_undetectable() {
    let env = TestEnv::new();
    let text = fs::read(testdata("openai-chat/conversation.jsonl")).unwrap();
    let run = env.finish({
        let mut c = env.command(&["import", "-", "--json"]);
        c.write_stdin(text.clone());
        c
    });
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["path"], "-");
    assert_eq!(v["format"], "openai-chat");
    assert!(v["tasks"][0]["added"].as_u64().unwrap() > 0, "{v}");
    // The same text again adds nothing.
    let again = env.finish({
        let mut c = env.command(&["import", "-", "--json"]);
        c.write_stdin(text);
        c
    });
    let v: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(v["tasks"][0]["added"], 0, "{v}");

    let run = env.finish({
        let mut c = env.command(&["import", "-"]);
        c.write_stdin("{\"what\":1}\n");
        c
    });
    run.failure(2)
        .stderr_has("error: -:1:1: could not tell the format")
        .stderr_has("hint: pass --format");
}

#[test]
fn a_touched_file_is_checked_by_its_hash_and_stays_unchanged() {
    let env = TestEnv::new();
    let rel = env.fixture("claude-code/small-session.jsonl");
    env.run(&["import", &rel]).success();
    let path = env.work().join(&rel);
    let f = fs::File::options().append(true).open(&path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(86_400))
        .unwrap();
    drop(f);
    let run = env.run(&["import", &rel, "--json"]);
    assert_eq!(statuses(&run), ["unchanged"]);
    // A grown file is read again.
    let mut bytes = fs::read(&path).unwrap();
    bytes.extend_from_slice(b"\n");
    fs::write(&path, &bytes).unwrap();
    let run = env.run(&["import", &rel, "--json"]);
    assert_eq!(statuses(&run), ["imported"]);
}

/// The rows of the record and the tasks, in a fixed order.
fn record(db: &Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut out = Vec::new();
    for q in [
        "SELECT task_id, seq, role, kind, turn, step, gen_id, content, usage, source_line,
                source_uuid, timestamp, hex(row_hash) FROM task_message ORDER BY task_id, seq",
        "SELECT id, format, parent_id, session_id, agent_id, cwd, model, cli_version, title
           FROM task ORDER BY id",
        "SELECT * FROM task_tool_compaction ORDER BY 1, 2",
    ] {
        let mut stmt = conn.prepare(q).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut s = String::new();
                for i in 0..n {
                    let v: rusqlite::types::Value = r.get(i)?;
                    s.push_str(&format!("{v:?} "));
                }
                Ok(s)
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

#[test]
fn repeated_imports_of_a_growing_session_equal_one_import_of_the_finished_file() {
    for rel in [
        "claude-code/small-session.jsonl",
        "codex/small-rollout.jsonl",
    ] {
        let env = TestEnv::new();
        let whole = fs::read_to_string(testdata(rel)).unwrap();
        let live = env.work().join("live.jsonl");
        fs::write(&live, "").unwrap();
        let mut incomplete_seen = 0;
        let lines: Vec<&str> = whole.split_inclusive('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            // The writer appends a line in two writes: half of it, an import
            // in between, then the rest with its newline.
            // (A byte cut: it may fall inside a multi-byte character.)
            let (line, cut) = (line.as_bytes(), line.len() / 2);
            let mut f = fs::File::options().append(true).open(&live).unwrap();
            use std::io::Write;
            f.write_all(&line[..cut]).unwrap();
            drop(f);
            if i > 0 {
                let run = env.run(&["import", "live.jsonl", "--json"]);
                run.success();
                let v: Value = serde_json::from_str(&run.stdout).unwrap();
                incomplete_seen += v["incomplete_lines"].as_u64().unwrap();
            }
            let mut f = fs::File::options().append(true).open(&live).unwrap();
            f.write_all(&line[cut..]).unwrap();
            drop(f);
            env.run(&["import", "live.jsonl"]).success();
        }
        assert_eq!(fs::read_to_string(&live).unwrap(), whole);
        assert_eq!(incomplete_seen, lines.len() as u64 - 1, "{rel}");
        let once = env.root().join("once.db");
        let mut cmd = env.bare_command();
        cmd.arg("--db").arg(&once).args(["import", "live.jsonl"]);
        env.finish(cmd).success();
        let grown = record(&env.db());
        assert!(grown.len() > 5, "{rel}: {grown:?}");
        assert_eq!(grown, record(&once), "{rel}");
    }
}

#[test]
fn a_half_written_last_line_is_reported_and_left_for_later() {
    let env = TestEnv::new();
    let whole = fs::read_to_string(testdata("claude-code/small-session.jsonl")).unwrap();
    let cut = whole[..whole.len() - 40].to_string();
    env.write("live.jsonl", &cut);
    let run = env.run(&["import", "live.jsonl"]);
    run.success()
        .stdout_has("  1 incomplete line at the end, left for later\n");
    env.write("live.jsonl", &whole);
    let run = env.run(&["import", "live.jsonl"]);
    run.success();
    assert!(!run.stdout.contains("incomplete"), "{}", run.stdout);
    run.stdout_has("+1 row");
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn corpus_sessions_in_a_fake_home_import_with_subagents_linked() {
    let Some(corpus) = corpus("corpus_sessions_in_a_fake_home_import_with_subagents_linked") else {
        return;
    };
    let env = TestEnv::new();
    let projects = env.home().join(".claude/projects");
    let sessions = env.home().join(".codex/sessions/2026/02/23");
    for (from, to) in [
        (
            "claude-code/v2.1.39_spotter_interrupts_biglines",
            projects.join("-work-spotter"),
        ),
        (
            "claude-code/v2.1.38_spotter_small/short.jsonl",
            projects.join("-work-small/short.jsonl"),
        ),
        (
            "claude-code/v2.1.14_claude_reliability/coverage-test-fix.jsonl",
            projects.join("-work-rel/coverage-test-fix.jsonl"),
        ),
        (
            "codex/v0.104.0-alpha.1_localpush_redacted/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
            sessions.join("rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"),
        ),
    ] {
        copy_tree(&corpus.join(from), &to);
    }
    let run = env.run(&["import", "--json"]);
    run.success();
    assert_eq!(statuses(&run), ["imported"; 6]);
    let tasks = env.tasks();
    let subs: Vec<&Value> = tasks.iter().filter(|t| t["parent"].is_string()).collect();
    assert_eq!(subs.len(), 2, "{tasks:#?}");
    for s in subs {
        assert_eq!(s["parent"], "8463c716-a2ea-4c14-9efa-87158ebd9f20");
    }
    let again = env.run(&["import", "--json"]);
    assert_eq!(statuses(&again), ["unchanged"; 6]);
}

#[test]
fn a_file_that_only_gained_half_a_line_is_not_parsed_again() {
    let env = TestEnv::new();
    let whole = fs::read_to_string(testdata("claude-code/small-session.jsonl")).unwrap();
    let lines: Vec<&str> = whole.split_inclusive('\n').collect();
    let first: String = lines[..6].concat();
    env.write("live.jsonl", &first);
    env.run(&["import", "live.jsonl"]).success();
    // Half of the next line: the stored prefix hash still matches, so the
    // file is not read as a transcript again; the half line waits.
    let half = &lines[6][..lines[6].len() / 2];
    env.write("live.jsonl", format!("{first}{half}"));
    let run = env.run(&["import", "live.jsonl", "--json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["status"], "unchanged", "{v}");
    assert_eq!(v["incomplete_lines"], 1, "{v}");
    // A whole new line and half of another: parsed.
    env.write(
        "live.jsonl",
        format!("{first}{}{}", lines[6], &lines[7][..10]),
    );
    let run = env.run(&["import", "live.jsonl", "--json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["status"], "imported", "{v}");
    assert_eq!(v["incomplete_lines"], 1, "{v}");
    // A rewritten start is not taken for growth: parsed (and refused, the
    // record being append-only).
    let rewritten = format!("{}{}", whole.replacen("Fix", "Fax", 1), "{\"x\":");
    env.write("live.jsonl", rewritten);
    let run = env.run(&["import", "live.jsonl", "--json"]);
    assert!(!run.stdout.contains("\"unchanged\""), "{}", run.stdout);
}
