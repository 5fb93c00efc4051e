//! `compactor import`: every format from the fixtures, idempotence and
//! appends, atomicity, and each error path.

use std::path::PathBuf;

use insta::assert_snapshot;
use serde_json::Value;

use crate::util::{Run, TestEnv, json_lines, testdata};

pub const CLAUDE_TASK: &str = "7f3c9a2e-5b1d-4e8f-a6c4-2d9e1b7f0a53";
pub const CODEX_TASK: &str = "019c9e3a-6b27-7d41-9f0c-3a5e8b1d2c74";

/// The valid fixtures and the format each must be detected as.
pub const FIXTURES: [(&str, &str); 8] = [
    ("claude-code/small-session.jsonl", "claude-code"),
    ("claude-code/inline-sidechain.jsonl", "claude-code"),
    ("codex/small-rollout.jsonl", "codex"),
    ("openai-chat/conversation.jsonl", "openai-chat"),
    ("openai-chat/conversation.json", "openai-chat"),
    ("anthropic/request.json", "anthropic"),
    ("anthropic/messages.jsonl", "anthropic"),
    (
        "claude-code/with-subagent/c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94.jsonl",
        "claude-code",
    ),
];

#[test]
fn claude_code_session_report() {
    let env = TestEnv::new();
    let run = env.import_fixtures(&["claude-code/small-session.jsonl"]);
    assert_snapshot!(run.snapshot());
    let t = env.task(CLAUDE_TASK);
    assert_eq!(t["format"], "claude-code");
    assert_eq!(
        t["title"],
        "Fix TALLY_MAX_ROWS env override in config loader"
    );
    assert_eq!(t["model"], "claude-opus-4-6");
    // 18 user/assistant lines; the title row is a meta row and not counted.
    assert_eq!(t["messages"], 18);
    assert_eq!(t["turns"], 2);
    assert_eq!(t["tool_calls"], 5);
}

#[test]
fn codex_rollout_report() {
    let env = TestEnv::new();
    let run = env.import_fixtures(&["codex/small-rollout.jsonl"]);
    assert_snapshot!(run.snapshot());
    let t = env.task(CODEX_TASK);
    assert_eq!(t["format"], "codex");
    assert_eq!(t["model"], "gpt-5.3-codex");
    assert_eq!(t["tool_calls"], 3);
    assert_eq!(t["interrupted_tool_calls"], 0);
}

#[test]
fn openai_chat_lines_and_document() {
    let env = TestEnv::new();
    let run = env.import_fixtures(&[
        "openai-chat/conversation.jsonl",
        "openai-chat/conversation.json",
    ]);
    assert_snapshot!(run.snapshot());
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 2, "two files, two tasks: {tasks:#?}");
    for t in &tasks {
        assert_eq!(t["format"], "openai-chat");
        assert_eq!(t["orphan_tool_results"], 0);
        assert_eq!(t["interrupted_tool_calls"], 0);
    }
    // The system messages are recorded but are not conversation.
    let doc_task = tasks.iter().find(|t| t["steps"] == 2).unwrap();
    assert_eq!(doc_task["messages"], 4);
    assert_eq!(doc_task["tool_calls"], 1);
}

#[test]
fn anthropic_request_body_and_message_lines() {
    let env = TestEnv::new();
    let run = env.import_fixtures(&["anthropic/request.json", "anthropic/messages.jsonl"]);
    assert_snapshot!(run.snapshot());
    let body_task = env.task("anthropic-f06e860f4518");
    assert_eq!(body_task["model"], "claude-sonnet-4-5-20250929");
    // system (meta) + 5 messages
    assert_eq!(body_task["messages"], 5);
    assert_eq!(body_task["tool_calls"], 1);
    // Response objects carry usage; each counts once.
    let lines_task = env.task("anthropic-3d806257e413");
    assert_eq!(lines_task["usage"]["input_tokens"], 1843 + 2011);
    assert_eq!(lines_task["usage"]["output_tokens"], 96 + 61);
}

#[test]
fn two_documents_of_one_format_are_two_tasks() {
    // A pretty-printed document's first line is only `{`: the task must be
    // named after the document, not after that line.
    let env = TestEnv::new();
    let body = std::fs::read_to_string(testdata("anthropic/request.json")).unwrap();
    let a = env.write("a/request.json", &body);
    let b = env.write(
        "b/request.json",
        body.replace(
            "How many orders were placed last week?",
            "How many refunds were issued last week?",
        ),
    );
    env.run(&["import", &a, &b]).success();
    let tasks = env.tasks();
    assert_eq!(tasks.len(), 2, "{tasks:#?}");
    assert!(tasks.iter().all(|t| t["messages"] == 5));
}

#[test]
fn explicit_format_gives_the_same_tasks_as_detection() {
    for (rel, format) in FIXTURES {
        let auto = TestEnv::new();
        auto.import_fixture(rel);
        let explicit = TestEnv::new();
        let path = explicit.fixture(rel);
        explicit
            .run(&["import", "--format", format, &path])
            .success();
        assert_eq!(
            auto.tasks(),
            explicit.tasks(),
            "{rel} with --format {format}"
        );
        assert!(
            auto.tasks().iter().all(|t| t["format"] == format),
            "{rel} detected as {format}"
        );
    }
}

#[test]
fn a_format_that_does_not_match_is_refused() {
    let env = TestEnv::new();
    let claude = env.fixture("claude-code/small-session.jsonl");
    let codex = env.fixture("codex/small-rollout.jsonl");
    let run = env.run(&["import", "--format", "codex", &claude]);
    run.failure(2).stderr_has("claude-code/small-session.jsonl:1:1: 24 lines, all of types a codex transcript does not have");
    env.run(&["import", "--format", "claude-code", &codex])
        .failure(2);
    env.run(&["import", "--format", "openai-chat", &codex])
        .failure(2);
    env.run(&["import", "--format", "anthropic", &claude])
        .failure(2);
    assert_eq!(env.counts(), [0, 0, 0]);
    // The refused attempt must not mark the file as imported.
    let run = env.run(&["import", &claude]);
    run.success().stdout_has("19 added");
}

#[test]
fn reimporting_adds_nothing() {
    let env = TestEnv::new();
    for (rel, _) in FIXTURES {
        env.import_fixture(rel);
    }
    let before = env.counts();
    assert!(before[0] > 0 && before[2] > 0, "{before:?}");
    let tasks = env.tasks();
    for (rel, _) in FIXTURES {
        let run = env.run(&["import", rel]);
        run.success();
        assert_eq!(
            run.stdout,
            format!("{rel}: unchanged since the last import, nothing added\n")
        );
    }
    assert_eq!(env.counts(), before);
    assert_eq!(env.tasks(), tasks);
}

#[test]
fn a_copy_elsewhere_is_recognised_by_content() {
    let env = TestEnv::new();
    for (rel, _) in FIXTURES {
        env.import_fixture(rel);
    }
    let before = env.counts();
    for (rel, _) in FIXTURES {
        let copy = env.write(
            &format!("elsewhere/{}", rel.replace('/', "-")),
            std::fs::read(testdata(rel)).unwrap(),
        );
        let run = env.run(&["import", "--json", &copy]);
        run.success();
        let report = &run.json_lines()[0];
        assert_eq!(report["status"], "imported", "{rel}");
        for t in report["tasks"].as_array().unwrap() {
            assert_eq!(t["added"], 0, "{rel}: {t}");
            assert!(t["already"].as_u64().unwrap() > 0, "{rel}: {t}");
        }
    }
    assert_eq!(env.counts(), before);
}

#[test]
fn a_copy_elsewhere_still_names_its_task_the_second_time() {
    // A newcomer's walk: `compactor import` took the session from
    // ~/.claude, then `replay COPY` worked once and `probe COPY` said the
    // copy "holds no conversation to project": the copy's rows are stored
    // under the first path, so its unchanged second import named no task.
    let env = TestEnv::new();
    let rel = "fixtures/claude-shrink-floor.jsonl";
    env.import_fixture(rel);
    let copy = env.write(
        "elsewhere/session.jsonl",
        std::fs::read(testdata(rel)).unwrap(),
    );
    for _ in 0..3 {
        let run = env.run(&["import", "--json", &copy]);
        run.success();
        let tasks = run.json_lines()[0]["tasks"].clone();
        assert_eq!(tasks.as_array().map(Vec::len), Some(1), "{tasks}");
        env.run(&["probe", &copy]).success();
    }
    let before = env.counts();
    env.run(&["replay", &copy]).success();
    assert_eq!(env.counts(), before);
}

/// All rows of the record with everything that identifies them (not the source row id).
fn record(env: &TestEnv) -> Vec<Vec<String>> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare(
            "SELECT task_id, seq, role, kind, turn, step, gen_id, content, usage, source_line,
                    source_uuid, timestamp, hex(row_hash)
             FROM task_message ORDER BY task_id, seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        (0..13)
            .map(|i| {
                r.get::<_, rusqlite::types::Value>(i)
                    .map(|v| format!("{v:?}"))
            })
            .collect()
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

#[test]
fn appended_lines_add_exactly_those_rows() {
    for rel in [
        "claude-code/small-session.jsonl",
        "claude-code/inline-sidechain.jsonl",
        "codex/small-rollout.jsonl",
        "openai-chat/conversation.jsonl",
        "anthropic/messages.jsonl",
    ] {
        let full = TestEnv::new();
        full.import_fixture(rel);
        let total = full.counts()[0];

        let grown = TestEnv::new();
        let text = std::fs::read_to_string(testdata(rel)).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for cut in [1, lines.len() / 3, lines.len() * 2 / 3] {
            let prefix: String = lines[..cut].concat();
            let path = grown.write("growing.jsonl", &prefix);
            grown.run(&["import", &path]).success();
        }
        let before = grown.counts()[0];
        assert!(before < total, "{rel}: the prefix already has every row");
        grown.write("growing.jsonl", &text);
        let run = grown.run(&["import", "--json", "growing.jsonl"]);
        run.success();
        let added: u64 = run.json_lines()[0]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["added"].as_u64().unwrap())
            .sum();
        assert_eq!(added, total - before, "{rel}");
        assert_eq!(grown.counts()[0], total, "{rel}");
        assert_eq!(
            record(&grown),
            record(&full),
            "{rel}: appended record differs"
        );
    }
}

/// A session still being written: a last line with no newline that is not
/// whole JSON yet is left out, and every import that leaves it says so:
/// `import` (again, unchanged, too, and in `--json`), and a command that
/// imports its FILE first; once the line is finished it is imported.
#[test]
fn a_half_written_last_line_is_left_for_later_and_said_so() {
    let env = TestEnv::new();
    let text = std::fs::read_to_string(testdata("claude-code/small-session.jsonl")).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let n = lines.len();
    let last = lines[n - 1];
    let half = format!("{}{}", lines[..n - 1].concat(), &last[..last.len() / 2]);
    let path = env.write("growing.jsonl", &half);
    env.run(&["import", &path])
        .success()
        .stdout_has("1 incomplete line at the end, left for later");
    // Again, the file unchanged: still said.
    env.run(&["import", &path])
        .success()
        .stdout_has("unchanged since the last import, nothing added; its last line, with no newline and not whole JSON yet, is left for later");
    let run = env.run(&["import", "--json", &path]);
    assert_eq!(
        run.success().json()["incomplete_lines"],
        1,
        "{}",
        run.stdout
    );
    // A command that imports its FILE first says it on stderr.
    env.run(&["show", &path, "0"]).success().stderr_has(
        "note: growing.jsonl: its last line has no newline and is not whole JSON yet (a session still being written): left out until it is, and imported then",
    );
    // Finished: imported, and nothing is said.
    let path = env.write("growing.jsonl", &text);
    let run = env.run(&["import", "--json", &path]);
    assert_eq!(
        run.success().json()["incomplete_lines"],
        0,
        "{}",
        run.stdout
    );
    let whole = TestEnv::new();
    whole.import_fixture("claude-code/small-session.jsonl");
    assert_eq!(env.counts(), whole.counts());
}

/// A checkpoint `compact -o` wrote beside the transcripts (a view: it reads
/// as an Anthropic request) is no transcript: `import DIR` skips it with a
/// note, as does naming it; `--format anthropic` imports it all the same.
#[test]
fn a_view_compactor_wrote_is_skipped_with_a_note() {
    let env = TestEnv::new();
    let f = env.fixture(crate::util::SHRINK_FLOOR);
    env.run(&["import", &f]).success();
    std::fs::create_dir_all(env.work().join("sessions")).unwrap();
    env.run(&[
        "compact",
        "--task",
        crate::util::SHRINK_FLOOR_TASK,
        "-o",
        "sessions/checkpoint.json",
    ])
    .success();
    std::fs::copy(
        env.work().join(&f),
        env.work().join("sessions/session.jsonl"),
    )
    .unwrap();
    let tasks = env.tasks().len();
    let run = env.run(&["import", "sessions"]);
    run.success()
        .stderr_has("note: skipped 1 file compactor wrote (a view, as `compact -o` and `replay --views` write them: a checkpoint, not a transcript;")
        .stderr_has("sessions/checkpoint.json")
        .stdout_has(", 1 compactor's own view\n");
    assert_eq!(env.tasks().len(), tasks, "no task made of the view");
    let run = env.run(&["import", "--json", "sessions"]);
    assert_eq!(
        run.success().json_lines().last().unwrap()["compactor_views"],
        1
    );
    env.run(&["import", "sessions/checkpoint.json"])
        .success()
        .stderr_has("note: skipped 1 file compactor wrote");
    assert_eq!(env.tasks().len(), tasks);
    env.run(&[
        "import",
        "--format",
        "anthropic",
        "sessions/checkpoint.json",
    ])
    .success()
    .stdout_has("1 task");
    assert_eq!(env.tasks().len(), tasks + 1);
}

#[test]
fn a_rewritten_file_is_refused() {
    let env = TestEnv::new();
    let text = std::fs::read_to_string(testdata("openai-chat/conversation.jsonl")).unwrap();
    let path = env.write("chat.jsonl", &text);
    env.run(&["import", &path]).success();
    let before = env.counts();
    // Same first line (so the same task), but an earlier message changed.
    let edited = text.replace("Bump it to 2.32.3.", "Bump it to 2.32.4.");
    env.write("chat.jsonl", edited);
    let run = env.run(&["import", &path]);
    run.failure(2)
        .stderr_has("no longer starts with what was imported before (row 5 differs)");
    assert_eq!(env.counts(), before);
}

#[test]
fn the_record_is_append_only() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    let before = env.counts();
    let conn = env.conn();
    let err = conn
        .execute("DELETE FROM task_message", [])
        .expect_err("DELETE must fail");
    assert!(err.to_string().contains("append-only"), "{err}");
    let err = conn
        .execute("UPDATE task_message SET content = '[]' WHERE seq = 1", [])
        .expect_err("UPDATE must fail");
    assert!(err.to_string().contains("append-only"), "{err}");
    let err = conn
        .execute("UPDATE task_message SET turn = turn + 1", [])
        .expect_err("UPDATE of bookkeeping columns must fail too");
    assert!(err.to_string().contains("append-only"), "{err}");
    drop(conn);
    assert_eq!(env.counts(), before);
}

#[test]
fn tool_forms_are_minted_at_import() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    env.import_fixture("codex/small-rollout.jsonl");
    let conn = env.conn();
    let mut stmt = conn
        .prepare(
            "SELECT task_id, tool_call_id, tool_name, rule, pointer FROM task_tool_compaction ORDER BY task_id",
        )
        .unwrap();
    let rows: Vec<[String; 5]> = stmt
        .query_map([], |r| {
            Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?])
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    // Only the two big file reads are over the precompact threshold.
    assert_eq!(
        rows,
        [
            [
                CODEX_TASK.to_string(),
                "call_n3pJif7nYCBXsSqtKboPcjrs".to_string(),
                "exec_command".to_string(),
                "head_tail_lines".to_string(),
                "tool:call_n3pJif7nYCBXsSqtKboPcjrs".to_string(),
            ],
            [
                CLAUDE_TASK.to_string(),
                "toolu_01xpBq4VGKbSJmnS9uocCbty".to_string(),
                "Read".to_string(),
                "head_tail_lines".to_string(),
                "tool:toolu_01xpBq4VGKbSJmnS9uocCbty".to_string(),
            ],
        ]
    );
}

#[test]
fn import_json_reports_each_file() {
    let env = TestEnv::new();
    let path = env.fixture("codex/small-rollout.jsonl");
    let run = env.run(&["import", "--json", &path]);
    run.success();
    let reports = run.json_lines();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!(r["path"], "codex/small-rollout.jsonl");
    assert_eq!(r["format"], "codex");
    assert_eq!(r["status"], "imported");
    assert_eq!(r["lines"], 36);
    assert_eq!(
        r["bytes"],
        std::fs::metadata(testdata("codex/small-rollout.jsonl"))
            .unwrap()
            .len()
    );
    assert_eq!(r["duplicate_lines"], 9);
    assert_eq!(r["skipped_lines"], Value::Array(vec![]));
    let t = &r["tasks"][0];
    assert_eq!(t["id"], CODEX_TASK);
    assert_eq!(t["added"], env.counts()[0]);
    assert_eq!(t["steps"], 4);
    assert_eq!(t["tool_forms_minted"], 1);
}

// ---------------------------------------------------------------- errors

/// Import a broken fixture into a store that already holds a task, and check
/// that it fails with status 2 and leaves the store as it was.
fn refused(env: &TestEnv, rel: &str) -> Run {
    env.import_fixture("openai-chat/conversation.jsonl");
    let before = env.counts();
    let tasks = env.tasks();
    let path = env.fixture(rel);
    let run = env.run(&["import", &path]);
    run.failure(2);
    assert_eq!(env.counts(), before, "{rel} changed the store");
    assert_eq!(env.tasks(), tasks, "{rel} changed the task list");
    run
}

#[test]
fn a_truncated_line_aborts_the_whole_file() {
    let env = TestEnv::new();
    let run = refused(&env, "invalid/truncated-line.jsonl");
    // FILE:LINE:COLUMN, the column being where the line ends.
    let line3 = std::fs::read_to_string(testdata("invalid/truncated-line.jsonl"))
        .unwrap()
        .lines()
        .nth(2)
        .unwrap()
        .len();
    run.stderr_has(format!(
        "error: invalid/truncated-line.jsonl:3:{line3}: truncated JSON"
    ));
    assert_snapshot!(run.snapshot());
}

#[test]
fn skip_invalid_imports_the_rest_and_lists_what_it_skipped() {
    let env = TestEnv::new();
    let path = env.fixture("invalid/truncated-line.jsonl");
    let run = env.run(&["import", "--skip-invalid", &path]);
    assert_snapshot!(run.snapshot());
    assert_eq!(env.counts()[0], 3);
    // With --json the skipped lines are listed with their location too.
    let env = TestEnv::new();
    let path = env.fixture("invalid/truncated-line.jsonl");
    let run = env.run(&["import", "--skip-invalid", "--json", &path]);
    run.success();
    let skipped = &run.json_lines()[0]["skipped_lines"];
    assert_eq!(skipped.as_array().unwrap().len(), 1);
    assert_eq!(skipped[0]["line"], 3);
    assert_eq!(skipped[0]["column"], 360);
}

#[test]
fn bad_utf8_is_located_by_line_and_byte_column() {
    let env = TestEnv::new();
    let run = refused(&env, "invalid/bad-utf8.jsonl");
    let bytes = std::fs::read(testdata("invalid/bad-utf8.jsonl")).unwrap();
    let line4 = bytes.split(|b| *b == b'\n').nth(3).unwrap();
    let column = line4.iter().position(|b| *b == 0xe9).unwrap() + 1;
    run.stderr_has(format!(
        "error: invalid/bad-utf8.jsonl:4:{column}: invalid UTF-8 (byte 0xe9); expected UTF-8 text"
    ));
}

#[test]
fn a_tool_use_without_id_is_a_shape_error() {
    let env = TestEnv::new();
    let run = refused(&env, "invalid/tool-use-without-id.jsonl");
    assert_snapshot!(run.snapshot());
}

#[test]
fn an_undetectable_file_asks_for_format() {
    let env = TestEnv::new();
    let run = refused(&env, "invalid/undetectable.jsonl");
    assert_snapshot!(run.snapshot());
}

#[test]
fn an_empty_file_is_refused() {
    let env = TestEnv::new();
    let path = env.write("empty.jsonl", "\n\n");
    let run = env.run(&["import", &path]);
    run.failure(2)
        .stderr_has("error: empty.jsonl:1:1: the file is empty (no JSON lines)");
    assert_eq!(env.counts(), [0, 0, 0]);
}

#[test]
fn an_unknown_format_value_is_a_usage_error() {
    let env = TestEnv::new();
    let path = env.fixture("claude-code/small-session.jsonl");
    let run = env.run(&["import", "--format", "yaml", &path]);
    assert_snapshot!(run.snapshot());
    assert!(
        !env.db().exists(),
        "a usage error must not create the store"
    );
}

#[test]
fn a_missing_file_is_named_once() {
    let env = TestEnv::new();
    let run = env.run(&["import", "no-such-session.jsonl"]);
    run.failure(2);
    let first = run.stderr.lines().next().unwrap_or("");
    assert!(
        first.starts_with("error: no-such-session.jsonl: "),
        "{}",
        run.stderr
    );
    // The OS error text is printed once, not once per layer of the error chain.
    assert_eq!(run.stderr.matches("os error").count(), 1, "{}", run.stderr);
    assert_eq!(env.counts(), [0, 0, 0]);
}

#[test]
fn with_several_files_the_good_ones_are_kept() {
    let env = TestEnv::new();
    let good = env.fixture("anthropic/messages.jsonl");
    let bad = env.fixture("invalid/truncated-line.jsonl");
    let run = env.run(&["import", &bad, &good]);
    run.failure(2).stderr_has("error: invalid/truncated-line.jsonl:3:360: truncated JSON")
        .stderr_has("error: 1 of 2 files not imported (nothing of them was stored): invalid/truncated-line.jsonl");
    assert!(run.stdout.contains("anthropic/messages.jsonl (anthropic)"));
    assert_eq!(env.counts()[0], 4);
    assert_eq!(env.tasks().len(), 1);
}

/// Small files are one batch, each a savepoint of its transaction: a file
/// that fails after many of its rows were inserted leaves nothing of itself,
/// neither rows nor search entries, and the files around it are stored.
#[test]
fn a_file_failing_late_in_a_batch_leaves_nothing_and_the_others_are_stored() {
    use crate::reliability::{claude_session, session_id};
    let env = TestEnv::new();
    let good = |i: usize| {
        env.write(
            &format!("good-{i}.jsonl"),
            claude_session(&session_id(i), 30, 40),
        )
    };
    let (first, last) = (good(1), good(3));
    // 120 lines; line 101 cut short, after 100 lines of rows were stored.
    let whole = claude_session(&session_id(2), 30, 40).replace("module", "zanzibar");
    let mut lines: Vec<String> = whole.lines().map(str::to_string).collect();
    let half = lines[100].len() / 2;
    lines[100].truncate(half);
    let bad = env.write("bad.jsonl", lines.join("\n") + "\n");
    let run = env.run(&["import", &first, &bad, &last]);
    run.failure(2)
        .stderr_has("error: bad.jsonl:101:")
        .stderr_has("error: 1 of 3 files not imported (nothing of them was stored): bad.jsonl");
    let tasks: Vec<String> = env
        .tasks()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert!(
        tasks.contains(&session_id(1)) && tasks.contains(&session_id(3)),
        "{tasks:?}"
    );
    assert!(!tasks.contains(&session_id(2)), "{tasks:?}");
    // The good files hold what they hold imported alone.
    let alone = TestEnv::new();
    let copy = alone.write("good-1.jsonl", claude_session(&session_id(1), 30, 40));
    alone.run(&["import", &copy]).success();
    assert_eq!(env.counts()[0], 2 * alone.counts()[0]);
    // The failed file's words are in no search entry; the others' are.
    let search = |q: &str| env.run(&["search", "--all", "--json", q]);
    search("zanzibar").failure(1);
    let found = search("module");
    found.success();
    assert!(!found.json()["hits"].as_array().unwrap().is_empty());
}

#[test]
fn a_store_from_a_newer_compactor_is_refused() {
    let env = TestEnv::new();
    env.import_fixture("anthropic/messages.jsonl");
    let before = env.counts();
    let newer = compactor::store::STORE_VERSION + 1;
    env.conn()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    let path = env.fixture("openai-chat/conversation.jsonl");
    for args in [vec!["import", path.as_str()], vec!["tasks"]] {
        let run = env.run(&args);
        run.failure(2).stderr_has(format!(
                "error: the store [TMP]/store.db has format version {newer}, newer than this compactor understands (version {})",
                compactor::store::STORE_VERSION
            ))
        .stderr_has("upgrade compactor");
    }
    let version: u32 = env
        .conn()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, newer, "the store must not be migrated down");
    assert_eq!(env.counts(), before);
}

#[test]
fn an_orphan_tool_result_is_a_located_warning() {
    let env = TestEnv::new();
    let path = env.fixture("invalid/orphan-tool-result.jsonl");
    let run = env.run(&["import", &path]);
    assert_snapshot!(run.snapshot());
    let t = env.task("e4b7c1d9-0a2f-4d63-8e5b-9c1f7a3d2e60");
    assert_eq!(t["orphan_tool_results"], 1);
    assert_eq!(t["interrupted_tool_calls"], 0);
    // The orphan is kept in the record.
    assert_eq!(t["messages"], 5);

    // --quiet drops the warning but not the error status or the result.
    let env = TestEnv::new();
    let path = env.fixture("invalid/orphan-tool-result.jsonl");
    let run = env.run(&["--quiet", "import", &path]);
    run.success();
    assert_eq!(run.stderr, "");
    assert_eq!(env.counts()[0], 5);
}

#[test]
fn the_orphan_fixture_really_has_one_orphan() {
    // Guard the fixture itself: exactly one tool_result answers no tool_use.
    let lines = json_lines(&testdata("invalid/orphan-tool-result.jsonl"));
    let mut uses = Vec::new();
    let mut results = Vec::new();
    for (_, l) in &lines {
        for b in l["message"]["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("tool_use") => uses.push(b["id"].as_str().unwrap().to_string()),
                Some("tool_result") => results.push(b["tool_use_id"].as_str().unwrap().to_string()),
                _ => {}
            }
        }
    }
    let orphans: Vec<_> = results.iter().filter(|r| !uses.contains(r)).collect();
    assert_eq!(orphans, ["toolu_01Fz8RkT3nQw6YbLc2VmXp9D"]);
}

#[test]
fn conversations_sharing_a_system_prompt_are_separate_tasks() {
    let env = TestEnv::new();
    let system = r#"{"role":"system","content":"You are a careful assistant."}"#;
    let a = format!(
        "{system}\n{}\n",
        r#"{"role":"user","content":"Rename the config loader."}"#
    );
    let b = format!(
        "{system}\n{}\n",
        r#"{"role":"user","content":"Why is CI red?"}"#
    );
    let pa = env.write("a.jsonl", &a);
    let pb = env.write("b.jsonl", &b);
    env.run(&["import", &pa]).success();
    env.run(&["import", &pb]).success();
    let tasks = env.run(&["tasks", "--json"]);
    tasks.success();
    let ids: Vec<String> = tasks
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "two conversations, two tasks: {ids:?}");
    // A copy of the first at another path is the same conversation: nothing added.
    let copy = env.write("copy-of-a.jsonl", &a);
    let run = env.run(&["import", "--json", &copy]);
    run.success();
    assert_eq!(run.json_lines()[0]["tasks"][0]["added"], 0);
    assert_eq!(
        env.run(&["tasks", "--json"])
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Every row with its content decoded to the canonical JSON (whatever its
/// `content_encoding`), and what identifies it.
fn decoded_record(env: &TestEnv) -> Vec<(String, i64, String, String)> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare(
            "SELECT task_id, seq, content_encoding, content, hex(row_hash)
             FROM task_message ORDER BY task_id, seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let encoding: String = r.get(2)?;
        let bytes = match r.get_ref(3)? {
            rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => b.to_vec(),
            other => panic!("content is {:?}", other.data_type()),
        };
        let json = compactor::store::decode_content(&encoding, &bytes).unwrap();
        Ok((
            r.get(0)?,
            r.get(1)?,
            String::from_utf8(json.into_owned()).unwrap(),
            r.get(4)?,
        ))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// Turn the store into what a compactor before store version 7 wrote: every
/// row's content as JSON text (the triggers lifted for it, then put back).
fn downgrade_to_json_rows(env: &TestEnv) {
    let record = decoded_record(env);
    let conn = env.conn();
    let trigger: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'task_message_no_update'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute_batch("DROP TRIGGER task_message_no_update")
        .unwrap();
    for (task, seq, json, _) in &record {
        conn.execute(
            "UPDATE task_message SET content = ?3, content_encoding = 'json'
             WHERE task_id = ?1 AND seq = ?2",
            rusqlite::params![task, seq, json],
        )
        .unwrap();
    }
    conn.execute_batch(&trigger).unwrap();
    // Versions 8 and 9 added the recorded context window and the git branch:
    // a version-6 store has neither.
    // Version 14 stamped the proxy's calls and answers.
    conn.execute_batch(
        "ALTER TABLE task DROP COLUMN context_window; ALTER TABLE task DROP COLUMN git_branch;
         ALTER TABLE proxy_call DROP COLUMN received_at;
         ALTER TABLE proxy_response DROP COLUMN answered_at",
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 6).unwrap();
}

#[test]
fn content_is_stored_compressed_and_decodes_to_the_canonical_json() {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    let conn = env.conn();
    let (lz4, blobs, json): (i64, i64, i64) = conn
        .query_row(
            "SELECT sum(content_encoding = 'lz4'), sum(typeof(content) = 'blob'),
                    sum(content_encoding = 'json')
             FROM task_message",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert!(lz4 > 0, "no row was compressed");
    assert_eq!(lz4, blobs, "every lz4 row is a BLOB, every json row text");
    assert!(json > 0, "rows too small to shrink stay text");
    // The decoded content is the compact JSON of the blocks the importer made.
    for (task, seq, content, _) in decoded_record(&env) {
        let blocks: Vec<compactor::model::Block> = serde_json::from_str(&content).unwrap();
        assert_eq!(
            serde_json::to_string(&blocks).unwrap(),
            content,
            "{task} {seq}"
        );
    }
}

#[test]
fn a_store_written_before_compression_still_recognises_its_files() {
    let rel = "claude-code/small-session.jsonl";
    let text = std::fs::read_to_string(testdata(rel)).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let fresh = TestEnv::new();
    fresh.import_fixture(rel);

    // An old store holding the first two thirds of the file as JSON text.
    let old = TestEnv::new();
    let path = old.write("growing.jsonl", lines[..lines.len() * 2 / 3].concat());
    old.run(&["import", &path]).success();
    let before = old.counts();
    downgrade_to_json_rows(&old);

    // The same bytes elsewhere: parsed again, recognised row for row.
    let copy = old.write("copy.jsonl", lines[..lines.len() * 2 / 3].concat());
    let run = old.run(&["import", "--json", &copy]);
    run.success();
    for t in run.json_lines()[0]["tasks"].as_array().unwrap() {
        assert_eq!(t["added"], 0, "{t}");
        assert!(t["already"].as_u64().unwrap() > 0, "{t}");
    }
    assert_eq!(old.counts(), before);
    let version: u32 = old
        .conn()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, compactor::store::STORE_VERSION);

    // The grown file appends compressed rows after the JSON ones, and the
    // record and a view over it are those of a fresh import.
    old.write("growing.jsonl", &text);
    old.run(&["import", &path]).success();
    let mixed = decoded_record(&old);
    assert_eq!(mixed, decoded_record(&fresh));
    let encodings: Vec<String> = old
        .conn()
        .prepare("SELECT DISTINCT content_encoding FROM task_message ORDER BY 1")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(encodings, ["json", "lz4"]);
    let view = |env: &TestEnv| env.run(&["compact", "--task", CLAUDE_TASK]).stdout.clone();
    assert_eq!(view(&old), view(&fresh));
}

/// What a store holds after an import, in the order it was stored: every
/// row (its content as stored, not its source row id), the task records and
/// the tool forms.
fn stored(env: &TestEnv) -> Vec<String> {
    let conn = env.conn();
    let mut out = Vec::new();
    for sql in [
        "SELECT task_id, seq, role, kind, turn, step, gen_id, content_encoding, hex(content),
                usage, source_line, source_uuid, timestamp, hex(row_hash)
         FROM task_message ORDER BY rowid",
        "SELECT * FROM task ORDER BY rowid",
        "SELECT * FROM task_tool_compaction ORDER BY task_id, tool_call_id",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| r.get::<_, rusqlite::types::Value>(i))
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map(|v| format!("{v:?}"))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

/// A Claude Code session of `asks` tool calls, long enough to cross many
/// batches of the import pipeline: every seventh result comes before its
/// call and is answered again after it (the first result of an id mints its
/// form), and a subagent's lines run inline between the main session's.
fn long_session(asks: usize) -> String {
    let output: String = (0..300)
        .map(|k| format!("line {k} of the output\n"))
        .collect();
    let line = |uuid: String, sidechain: bool, message: Value| {
        let ty = message["role"].as_str().unwrap().to_string();
        serde_json::json!({
            "type": ty, "sessionId": "s-stream", "uuid": uuid, "isSidechain": sidechain,
            "agentId": if sidechain { Some("a1") } else { None },
            "timestamp": "2026-01-01T00:00:00Z", "message": message,
        })
        .to_string()
    };
    let mut lines = Vec::new();
    for i in 0..asks {
        let sidechain = i % 11 == 5;
        let ask = line(
            format!("u{i}"),
            sidechain,
            serde_json::json!({"role": "user", "content": format!("ask {i}")}),
        );
        let call = line(
            format!("a{i}"),
            sidechain,
            serde_json::json!({"id": format!("msg_{i}"), "role": "assistant", "model": "m",
                "content": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash",
                             "input": {"command": format!("seq {i}")}}],
                "usage": {"input_tokens": 10 + i, "output_tokens": 5}}),
        );
        let result = |uuid: String, text: String| {
            line(
                uuid,
                sidechain,
                serde_json::json!({"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": format!("toolu_{i}"), "content": text}]}),
            )
        };
        if i % 7 == 3 {
            lines.extend([
                ask,
                result(format!("r{i}"), format!("{output}{i}")),
                call,
                result(format!("s{i}"), format!("again\n{output}")),
            ]);
        } else {
            lines.extend([ask, call, result(format!("r{i}"), format!("{output}{i}"))]);
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn a_file_stored_as_it_is_parsed_is_stored_as_a_whole_file_would_be() {
    // A file's first task is stored while the file is parsed; standard
    // input is parsed whole first. Both must store the same rows, in the
    // same order, with the same tasks, forms and reports.
    let scratch = TestEnv::new();
    let long = scratch.work().join("long-session.jsonl");
    std::fs::write(&long, long_session(400)).unwrap();
    let mut files: Vec<PathBuf> = [
        "claude-code/small-session.jsonl",
        "claude-code/inline-sidechain.jsonl",
        "claude-code/client-2.1.332.jsonl",
        "claude-code/with-subagent/c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94.jsonl",
        "claude-code/with-subagent/c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94/subagents/agent-a5c31d7.jsonl",
        "codex/client-0.171.0.jsonl",
        "codex/small-rollout.jsonl",
        "probe/codex-adversarial.jsonl",
        "invalid/orphan-tool-result.jsonl",
        "invalid/truncated-line.jsonl",
        "fixtures/claude-disposable-interrupt.jsonl",
        "fixtures/claude-shrink-floor.jsonl",
        "fixtures/codex-tenant-registry.jsonl",
        "openai-chat/conversation.jsonl",
    ]
    .iter()
    .map(|rel| testdata(rel))
    .collect();
    files.push(long);
    for file in &files {
        let (streamed, whole) = (TestEnv::new(), TestEnv::new());
        let a = streamed.run(&["import", "--json", file.to_str().unwrap()]);
        let b = whole.finish({
            let mut c = whole.command(&["import", "-", "--json"]);
            c.write_stdin(std::fs::read(file).unwrap());
            c
        });
        assert_eq!(
            a.status,
            b.status,
            "{}:\n{}\n{}",
            file.display(),
            a.snapshot(),
            b.snapshot()
        );
        assert_eq!(
            a.stderr,
            b.stderr.replace("-:", &format!("{}:", file.display()))
        );
        if a.status == 0 {
            let (a, b) = (a.json(), b.json());
            assert_eq!(a["tasks"], b["tasks"], "{}", file.display());
            assert_eq!(a["lines"], b["lines"], "{}", file.display());
        }
        let rows = stored(&streamed);
        assert_eq!(rows, stored(&whole), "{}", file.display());
        assert_eq!(rows.is_empty(), a.status != 0, "{}", file.display());
    }
    // The long session crossed batches, minted forms and kept its subagent.
    let env = TestEnv::new();
    let report = env
        .run(&["import", "--json", files.last().unwrap().to_str().unwrap()])
        .success()
        .json();
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2, "{report}");
    assert!(tasks[0]["added"].as_u64().unwrap() > 1000, "{report}");
    assert!(
        tasks[0]["tool_forms_minted"].as_u64().unwrap() > 300,
        "{report}"
    );
}

/// The lines of a Claude Code session: for each step, either a call of
/// `toolu_x` (`Ok(input)`) or a result of it (`Err(text)`), each after an ask.
fn answered_again(steps: &[Result<Value, String>]) -> String {
    let mut lines = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let (role, content) = match step {
            Ok(input) => (
                "assistant",
                serde_json::json!([{"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": input}]),
            ),
            Err(text) => (
                "user",
                serde_json::json!([{"type": "tool_result", "tool_use_id": "toolu_x", "content": text}]),
            ),
        };
        for (uuid, role, content) in [
            (format!("q{i}"), "user", Value::from(format!("ask {i}"))),
            (format!("m{i}"), role, content),
        ] {
            let line = serde_json::json!({
                "type": role, "sessionId": "s-again", "uuid": uuid,
                "timestamp": "2026-01-01T00:00:00Z",
                "message": {"id": format!("msg_{i}"), "role": role, "content": content},
            });
            lines.push(line.to_string() + "\n");
        }
    }
    lines.concat()
}

/// The tool forms a store holds, every column.
fn forms(env: &TestEnv) -> Vec<String> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare("SELECT * FROM task_tool_compaction ORDER BY rowid")
        .unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        (0..n)
            .map(|i| r.get::<_, rusqlite::types::Value>(i))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map(|v| format!("{v:?}"))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn a_result_answering_an_answered_call_is_minted_against_the_first_call() {
    // The form minter forgets a call's input once it is answered; a later
    // result of that id (answered without a form the first time) is minted
    // against the call as stored, which must be the first call, whether the
    // call came in this import or an earlier one, with an input a float in
    // it or not.
    let big: String = (0..300)
        .map(|k| format!("line {k} of the output\n"))
        .collect();
    let long = |ratio: Value| serde_json::json!({"command": "x".repeat(900), "ratio": ratio});
    let short = serde_json::json!({"command": "y"});
    for first in [long(Value::from(1)), long(serde_json::json!(0.1))] {
        let minted = |steps: &[Result<Value, String>]| {
            let env = TestEnv::new();
            let path = env.write("again.jsonl", answered_again(steps));
            env.run(&["import", &path]).success();
            forms(&env)
        };
        let control = minted(&[Ok(first.clone()), Err(big.clone())]);
        assert_eq!(control.len(), 1, "{control:?}");
        // The control tells the two calls apart.
        assert_ne!(control, minted(&[Ok(short.clone()), Err(big.clone())]));
        let again = [
            Ok(first.clone()),
            Err("ok".to_string()),
            Ok(short.clone()),
            Err(big.clone()),
        ];
        assert_eq!(minted(&again), control, "{first}");
        // A result of a call whose form is minted stores nothing more.
        let formed = [
            Ok(first.clone()),
            Err(big.clone()),
            Err(format!("{big}{big}")),
        ];
        assert_eq!(minted(&formed), control, "{first}");
        // The call and its first result stored by an earlier import.
        let env = TestEnv::new();
        let path = env.write("again.jsonl", answered_again(&again[..2]));
        env.run(&["import", &path]).success();
        assert!(forms(&env).is_empty());
        env.write("again.jsonl", answered_again(&again));
        env.run(&["import", &path]).success();
        assert_eq!(forms(&env), control, "{first}");
    }
}

#[test]
fn a_long_rewritten_file_names_its_first_differing_row() {
    // The rows already stored are checked against the store every few
    // thousand rows rather than all kept; the refusal must still name the
    // first row that differs, in the first window, a later one or the last.
    let text: String = (0..9000)
        .map(|i| {
            let role = ["user", "assistant"][i % 2];
            let line = serde_json::json!({
                "type": role, "sessionId": "s-long", "uuid": format!("u{i}"),
                "message": {"id": format!("msg_{i}"), "role": role, "content": format!("say {i}")},
            });
            line.to_string() + "\n"
        })
        .collect();
    let env = TestEnv::new();
    let path = env.write("long.jsonl", &text);
    env.run(&["import", &path]).success();
    let record = decoded_record(&env);
    assert!(record.len() > 2 * 4096, "{} rows", record.len());
    for k in [7, 5000, 8999] {
        let say = format!("\"say {k}\"");
        let row = record.iter().find(|r| r.2.contains(&say)).unwrap().1;
        env.write("long.jsonl", text.replace(&say, &format!("\"say {k}!\"")));
        env.run(&["import", &path])
            .failure(2)
            .stderr_has(format!("(row {row} differs)"));
    }
}

/// What a newcomer hit: `trunc.jsonl:16:12730: truncated JSON …` and no word
/// of `--skip-invalid`, the flag that imports the rest.
#[test]
fn a_truncated_line_hints_at_skip_invalid() {
    let env = TestEnv::new();
    let whole =
        std::fs::read_to_string(crate::util::testdata("claude-code/small-session.jsonl")).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    let cut = &lines[4][..lines[4].len() / 2];
    let mut text = String::new();
    for (i, l) in lines.iter().enumerate() {
        text.push_str(if i == 4 { cut } else { l });
        text.push('\n');
    }
    let rel = env.write("trunc.jsonl", text);
    for command in [vec!["import", rel.as_str()], vec!["compact", rel.as_str()]] {
        let run = env.run(&command);
        run.failure(2);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert!(
            lines[0].starts_with("error: trunc.jsonl:5:") && lines[0].contains("truncated JSON"),
            "{}",
            run.stderr
        );
        assert_eq!(
            lines[1..],
            [
                "hint: `compactor import --skip-invalid FILE` imports the other lines and lists each skipped one"
            ],
            "{command:?}"
        );
    }
    // And the hint holds: the other lines are imported, the cut one listed.
    let run = env.run(&["import", &rel, "--skip-invalid"]);
    run.success().stderr_has("trunc.jsonl:5:");
    assert_eq!(env.tasks().len(), 1);
}

/// An imported Gemini CLI session goes through every command that reads a
/// task: `sweep` prices its policies, `probe` scores its views, `report`
/// draws it, and `compact --write-session` writes its view as a Claude Code
/// or Codex session (there is no Gemini CLI writer: asking for one is a
/// usage error that names the agents there are).
#[test]
fn an_imported_gemini_cli_session_sweeps_probes_reports_and_is_written_for_another_agent() {
    let env = TestEnv::new();
    let file = testdata("gemini-cli/session-2026-12-06T09-00-5b0e2c7a.jsonl");
    env.run(&["import", file.to_str().unwrap()]).success();
    let task = "5b0e2c7a-91d4-4f0e-8a36-2f7d1c9e4b10";

    let sweep = env.run(&["sweep", "--task", task, "--json"]);
    sweep.success();
    let rows: Vec<Value> = sweep
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let recorded = rows
        .iter()
        .find(|r| r["kind"] == "policy" && r["calls"] == 5)
        .unwrap_or_else(|| panic!("a policy over the 5 calls: {rows:?}"));
    assert_eq!(recorded["model"], "gemini-3.1-pro-preview");
    assert_eq!(recorded["critical_lost"], 0);

    let probe = env.run(&["probe", task, "--json"]);
    probe.success();
    let p: Value = serde_json::from_str(probe.stdout.trim()).unwrap();
    // The two asks and the constraint ("Never edit files outside src/.") kept.
    assert_eq!(p["categories"]["ask"]["passed"], 2, "{p}");
    assert_eq!(p["categories"]["constraint"]["passed"], 1, "{p}");
    assert_eq!(p["critical_lost"], 0, "{p}");

    let html = env.root().join("report.html");
    env.run(&["report", "--task", task, "-o", html.to_str().unwrap()])
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("gemini-3.1-pro-preview"),
        "the report names the model"
    );

    let dir = env.root().join("app");
    std::fs::create_dir_all(&dir).unwrap();
    let claude = env.run(&[
        "compact",
        "--task",
        task,
        "--write-session",
        "claude-code",
        "--resume-dir",
        dir.to_str().unwrap(),
    ]);
    claude.success();
    assert!(
        claude.stdout.contains("claude --resume "),
        "{}",
        claude.stdout
    );
    let written = crate::resume::only_jsonl(&env.home().join(".claude").join("projects"));
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(
        text.contains("Never edit files outside src/."),
        "the ask is in it"
    );
    // It imports back as a Claude Code session.
    let back = env.run(&["import", "--json", written.to_str().unwrap()]);
    back.success();
    assert!(back.stdout.contains("\"claude-code\""), "{}", back.stdout);
    env.run(&["compact", "--task", task, "--write-session", "codex"])
        .success()
        .stdout_has("codex resume ");

    env.run(&["compact", "--task", task, "--write-session", "gemini-cli"])
        .failure(2)
        .stderr_has("[possible values: claude-code, codex]");
}
