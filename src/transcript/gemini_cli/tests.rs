//! Tests of the Gemini CLI importer.

use crate::model::{Block, Format, Kind, Message, Role, ToolContent};
use crate::transcript::{ParseOptions, parse_bytes};

const SESSION: &str =
    include_str!("../../../testdata/gemini-cli/session-2026-12-06T09-00-5b0e2c7a.jsonl");

fn rows(text: &str) -> Vec<Message> {
    let mut parsed = parse_bytes(text.as_bytes(), &ParseOptions::default()).unwrap();
    assert_eq!(parsed.format, Format::GeminiCli);
    assert!(parsed.unknown.is_empty(), "{:?}", parsed.unknown);
    parsed.tasks.remove(0).messages
}

fn kinds(rows: &[Message]) -> Vec<Kind> {
    rows.iter().map(|m| m.kind).collect()
}

#[test]
fn a_session_reads_as_its_messages_calls_and_results() {
    let mut parsed = parse_bytes(SESSION.as_bytes(), &ParseOptions::default()).unwrap();
    assert_eq!(parsed.format, Format::GeminiCli);
    // Re-written messages and the results the CLI sent back are duplicates.
    assert_eq!(parsed.duplicates, 3);
    let task = parsed.tasks.remove(0);
    assert_eq!(
        task.meta.session_id.as_deref(),
        Some("5b0e2c7a-91d4-4f0e-8a36-2f7d1c9e4b10")
    );
    assert_eq!(task.meta.cwd.as_deref(), Some("/home/dev/src/ledger"));
    assert_eq!(task.meta.model.as_deref(), Some("gemini-3.1-pro-preview"));
    assert_eq!(
        task.meta.title.as_deref(),
        Some("Banker's rounding in the ledger")
    );
    let m = &task.messages;
    use Kind::*;
    assert_eq!(
        kinds(m),
        [
            Context, Ask, Generation, Generation, ToolResult, Usage, Generation, ToolResult,
            ToolResult, Generation, Generation, ToolResult, Generation, Note, Ask, Generation
        ]
    );
    // The thought is kept as the CLI shows it; the call joins its message's generation.
    assert!(
        matches!(&m[2].content[0], Block::Thinking { thinking, .. } if thinking.starts_with("**Locating rounding**"))
    );
    assert_eq!(m[2].gen_id, m[3].gen_id);
    assert!(matches!(&m[3].content[0], Block::ToolUse { name, .. } if name == "grep_search"));
    // Usage: input counts the cached tokens; thoughts are output.
    let u = m[2].usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cache_read_input_tokens),
        (9812, 149, 0)
    );
    // The failed read is an error result, paired with its call.
    let failed = m
        .iter()
        .flat_map(|r| &r.content)
        .find_map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                is_error: true,
                content: ToolContent::Text(t),
            } => Some((tool_use_id.clone(), t.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(failed.0, "read_file__read_file_1796540409003_1");
    assert!(failed.1.contains("File not found"));
    assert!(task.open_tool_calls().is_empty(), "every call answered");
    assert!(m.iter().any(|r| r.kind == Note && r.role == Role::Meta));
    assert_eq!(task.turns(), 2);
}

#[test]
fn a_growing_file_appends_rows_and_never_rewrites_one() {
    let whole = rows(SESSION);
    let lines: Vec<&str> = SESSION.lines().collect();
    for n in 1..lines.len() {
        let prefix = lines[..n].join("\n") + "\n";
        let Ok(parsed) = parse_bytes(prefix.as_bytes(), &ParseOptions::default()) else {
            continue;
        };
        let some = parsed
            .tasks
            .into_iter()
            .next()
            .map(|t| t.messages)
            .unwrap_or_default();
        assert!(some.len() <= whole.len());
        assert_eq!(some[..], whole[..some.len()], "after {n} lines");
    }
}

#[test]
fn a_rewritten_history_adds_what_is_new_and_says_what_it_dropped() {
    let meta = r#"{"sessionId":"s1","projectHash":"h","startTime":"t","kind":"main"}"#;
    let ask = r#"{"id":"u1","type":"user","content":[{"text":"Read a.txt. Never push."}]}"#;
    let answer = r#"{"id":"g1","type":"gemini","content":"Reading.","toolCalls":[{"id":"c1","name":"read_file","args":{"file_path":"a.txt"},"result":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"alpha"}}}],"status":"success"}],"tokens":{"input":100,"output":5,"cached":0,"thoughts":0,"tool":0,"total":105}}"#;
    // The CLI's compression: its summary and acknowledgement, then the kept turns.
    let compressed = r#"{"$set":{"messages":[{"id":"s9","type":"user","content":[{"text":"<state_snapshot>the user asked to read a.txt</state_snapshot>"}]},{"id":"ack","type":"gemini","content":[{"text":"Got it. Thanks for the additional context!"}]},{"id":"g1","type":"gemini","content":[{"text":"Reading."},{"functionCall":{"id":"x","name":"read_file","args":{"file_path":"a.txt"}},"thoughtSignature":"c2ln"}]}]}}"#;
    let rewind = r#"{"$rewindTo":"ack"}"#;
    let text = [meta, ask, answer, compressed, rewind].join("\n") + "\n";
    let mut parsed = parse_bytes(text.as_bytes(), &ParseOptions::default()).unwrap();
    let task = parsed.tasks.remove(0);
    use Kind::*;
    assert_eq!(
        kinds(&task.messages),
        [Ask, Generation, ToolResult, CompactSummary, Generation]
    );
    let warnings: Vec<&str> = task.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(warnings[0].contains("without 1 message"), "{warnings:?}");
    assert!(
        warnings[1].contains("rewound to message ack"),
        "{warnings:?}"
    );
    // A session that begins at a summary carries it.
    let carried = [
        meta,
        r#"{"id":"s9","type":"user","content":[{"text":"<state_snapshot>before</state_snapshot>"}]}"#,
    ]
    .join("\n");
    assert_eq!(kinds(&rows(&carried)), [CarriedSummary]);
}

#[test]
fn a_line_that_is_no_message_is_an_error_or_unknown() {
    let meta = r#"{"sessionId":"s1","projectHash":"h","startTime":"t","kind":"main"}"#;
    let bad = [
        meta,
        r#"{"id":"g1","type":"gemini","toolCalls":[{"id":"c"}]}"#,
    ]
    .join("\n");
    let e = parse_bytes(bad.as_bytes(), &ParseOptions::default())
        .err()
        .unwrap();
    assert_eq!(e.line, 2);
    assert!(e.message.contains("toolCalls[0] has no \"name\""), "{e}");
    let odd = [meta, r#"{"id":"x","type":"compression","content":"?"}"#].join("\n");
    let parsed = parse_bytes(odd.as_bytes(), &ParseOptions::default()).unwrap();
    assert_eq!(parsed.unknown.get("compression"), Some(&1));
}
