use serde_json::json;

use super::*;
use crate::transcript::TaskSet;

fn session(id: &str, parent: Option<&str>) -> SessionRow {
    SessionRow {
        id: id.to_string(),
        parent_id: parent.map(str::to_string),
        title: Some("New session - 2026-01-01T00:00:00.000Z".to_string()),
        directory: Some("/p".to_string()),
        version: Some("1.18.33".to_string()),
        agent: Some("general".to_string()),
    }
}

fn message(id: &str, info: Value, parts: &[Value]) -> MessageRow {
    MessageRow {
        id: id.to_string(),
        data: Ok(info.to_string()),
        parts: parts
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("{id}_p{i}"), Ok(p.to_string())))
            .collect(),
    }
}

fn user(id: &str, parts: &[Value]) -> MessageRow {
    message(
        id,
        json!({"role": "user", "time": {"created": 1_000}}),
        parts,
    )
}

fn assistant(id: &str, completed: bool, parts: &[Value]) -> MessageRow {
    let time = if completed {
        json!({"created": 2_000, "completed": 3_000})
    } else {
        json!({"created": 2_000})
    };
    message(
        id,
        json!({"role": "assistant", "time": time, "modelID": "gpt-4.1", "path": {"cwd": "/p"}}),
        parts,
    )
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn finish(input: u64) -> Value {
    json!({"type": "step-finish", "reason": "stop", "cost": 0.25,
           "tokens": {"input": input, "output": 15, "reasoning": 5, "cache": {"read": 100, "write": 7}}})
}

fn read(rows: &[MessageRow]) -> (Vec<Message>, SessionRead, TaskMeta) {
    let mut set = TaskSet::default();
    let out = read_session(&session("ses_a", None), rows, false, set.main()).unwrap();
    let t = set.finish().unwrap().pop().unwrap();
    (t.messages, out, t.meta)
}

fn kinds(msgs: &[Message]) -> Vec<(Role, Kind)> {
    msgs.iter().map(|m| (m.role, m.kind)).collect()
}

use crate::transcript::TaskMeta;

#[test]
fn a_call_is_a_generation_its_tool_results_and_its_usage() {
    let rows = [
        user("m1", &[text("go")]),
        assistant(
            "m2",
            true,
            &[
                json!({"type": "step-start"}),
                json!({"type": "reasoning", "text": "hm", "time": {"start": 1}}),
                text("reading"),
                json!({"type": "tool", "tool": "read", "callID": "c1",
                       "state": {"status": "completed", "input": {"filePath": "a"}, "output": "A",
                                 "title": "", "metadata": {}, "time": {"start": 1, "end": 2, "compacted": 9}}}),
                json!({"type": "tool", "tool": "bash", "callID": "c2",
                       "state": {"status": "error", "input": {}, "error": "boom", "time": {"start": 1, "end": 2}}}),
                json!({"type": "patch", "hash": "h", "files": ["/p/a"]}),
                finish(1_000),
            ],
        ),
        user("m3", &[text("next")]),
    ];
    let (msgs, out, meta) = read(&rows);
    // The last ask has nothing after it yet: it waits.
    assert_eq!(out.held_back, 1);
    assert_eq!(
        kinds(&msgs),
        [
            (Role::User, Kind::Ask),
            (Role::Assistant, Kind::Generation),
            (Role::User, Kind::ToolResult),
            (Role::Meta, Kind::Usage),
            (Role::Meta, Kind::Note),
        ]
    );
    assert_eq!(
        msgs[1].content,
        [
            Block::Thinking {
                thinking: "hm".into(),
                signature: None
            },
            Block::Text {
                text: "reading".into()
            },
            Block::ToolUse {
                id: "c1".into(),
                name: "read".into(),
                input: json!({"filePath": "a"})
            },
            Block::ToolUse {
                id: "c2".into(),
                name: "bash".into(),
                input: json!({})
            },
        ]
    );
    // A cleared output (`time.compacted`) is kept whole; an error is one.
    assert_eq!(
        msgs[2].content,
        [
            Block::ToolResult {
                tool_use_id: "c1".into(),
                content: ToolContent::Text("A".into()),
                is_error: false
            },
            Block::ToolResult {
                tool_use_id: "c2".into(),
                content: ToolContent::Text("boom".into()),
                is_error: true
            },
        ]
    );
    // Usage in Anthropic's terms: output includes reasoning.
    assert_eq!(
        msgs[3].usage,
        Some(Usage {
            input_tokens: 1_000,
            output_tokens: 20,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 7,
        })
    );
    assert_eq!(msgs[3].gen_id, msgs[1].gen_id);
    assert_eq!(msgs[1].gen_id.as_deref(), Some("m2_p0"));
    assert_eq!(
        msgs[0].timestamp.as_deref(),
        Some("1970-01-01T00:00:01.000Z")
    );
    assert_eq!(meta.model.as_deref(), Some("gpt-4.1"));
    assert_eq!(meta.title, None, "a placeholder title is no title");
}

#[test]
fn only_what_is_final_is_read() {
    let rows = [
        user("m1", &[text("go")]),
        assistant("m2", false, &[json!({"type": "step-start"}), text("half")]),
    ];
    let (msgs, out, _) = read(&rows);
    assert_eq!(kinds(&msgs), [(Role::User, Kind::Ask)]);
    assert_eq!(out.held_back, 1);
    // A failed call is final, and never sent again: a synthetic row.
    let failed = message(
        "m2",
        json!({"role": "assistant", "time": {"created": 2}, "error": {"name": "APIError", "data": {"message": "503"}}}),
        &[json!({"type": "step-start"})],
    );
    let (msgs, out, _) = read(&[
        user("m1", &[text("go")]),
        failed,
        user("m3", &[text("again")]),
        assistant("m4", true, &[text("ok")]),
    ]);
    assert_eq!(out.held_back, 0);
    assert_eq!(
        kinds(&msgs),
        [
            (Role::User, Kind::Ask),
            (Role::Assistant, Kind::Synthetic),
            (Role::User, Kind::Ask),
            (Role::Assistant, Kind::Generation),
        ]
    );
    assert_eq!(
        msgs[1].content,
        [Block::Text {
            text: "APIError: 503".into()
        }]
    );
}

#[test]
fn an_aborted_call_that_streamed_is_sent_again_its_tools_interrupted() {
    let aborted = message(
        "m2",
        json!({"role": "assistant", "time": {"created": 2}, "error": {"name": "MessageAbortedError", "data": {"message": "stop"}}}),
        &[
            json!({"type": "step-start"}),
            json!({"type": "tool", "tool": "bash", "callID": "c1", "state": {"status": "running", "input": {"command": "ls"}, "time": {"start": 1}}}),
        ],
    );
    let (msgs, _, _) = read(&[
        user("m1", &[text("go")]),
        aborted,
        user("m3", &[text("?")]),
        assistant("m4", true, &[text("ok")]),
    ]);
    assert_eq!(msgs[1].kind, Kind::Generation);
    assert_eq!(
        msgs[2].content,
        [Block::ToolResult {
            tool_use_id: "c1".into(),
            content: ToolContent::Text(INTERRUPTED.into()),
            is_error: true
        }]
    );
}

#[test]
fn what_was_never_sent_is_a_note_and_synthetic_text_is_context() {
    let rows = [
        user(
            "m1",
            &[
                json!({"type": "text", "text": "Called the Read tool", "synthetic": true}),
                json!({"type": "file", "mime": "text/plain", "filename": "a.rs", "url": "file:///p/a.rs",
                       "source": {"type": "file", "path": "/p/a.rs", "text": {"value": "@a.rs", "start": 0, "end": 5}}}),
                json!({"type": "text", "text": "hidden", "ignored": true}),
                json!({"type": "agent", "name": "explore"}),
                json!({"type": "file", "mime": "image/png", "filename": "x.png", "url": "data:image/png;base64,AA=="}),
            ],
        ),
        assistant("m2", true, &[text("ok")]),
        message(
            "m3",
            json!({"role": "user", "time": {"created": 5}}),
            &[json!({"type": "compaction", "auto": true})],
        ),
        message(
            "m4",
            json!({"role": "assistant", "summary": true, "time": {"created": 6, "completed": 7}}),
            &[
                json!({"type": "step-start"}),
                text("the summary"),
                finish(10),
            ],
        ),
        user(
            "m5",
            &[json!({"type": "text", "text": "Continue", "synthetic": true})],
        ),
        assistant(
            "m6",
            true,
            &[
                json!({"type": "snapshot", "snapshot": "abc"}),
                json!({"type": "holo"}),
                text("done"),
            ],
        ),
    ];
    let (msgs, out, _) = read(&rows);
    assert_eq!(
        kinds(&msgs),
        [
            (Role::User, Kind::Context),
            (Role::Meta, Kind::Note),
            (Role::Assistant, Kind::Generation),
            (Role::Meta, Kind::CompactBoundary),
            (Role::Assistant, Kind::CompactSummary),
            (Role::User, Kind::Context),
            (Role::Assistant, Kind::Generation),
        ]
    );
    assert!(matches!(msgs[0].content[1], Block::Image { .. }));
    let notes: Vec<&str> = msgs[1]
        .content
        .iter()
        .map(|b| match b {
            Block::Other(v) => v["type"].as_str().unwrap(),
            _ => "",
        })
        .collect();
    assert_eq!(
        notes,
        ["opencode.file", "opencode.ignored_text", "opencode.agent"]
    );
    // A note reads back as a note, never as a conversation block.
    let back: Vec<Block> = serde_json::from_str(&msgs[1].content_json()).unwrap();
    assert!(back.iter().all(|b| matches!(b, Block::Other(_))));
    assert_eq!(out.not_conversation, 1);
    assert_eq!(out.unknown, BTreeMap::from([("holo".to_string(), 1)]));
}

#[test]
fn a_broken_part_is_named_or_skipped() {
    let rows = [
        user("m1", &[text("go")]),
        MessageRow {
            id: "m2".into(),
            data: Ok(
                json!({"role": "assistant", "time": {"created": 2, "completed": 3}}).to_string(),
            ),
            parts: vec![
                ("p1".into(), Ok("{\"type\":".into())),
                ("p2".into(), Ok(text("ok").to_string())),
            ],
        },
    ];
    let mut set = TaskSet::default();
    let err = read_session(&session("ses_a", None), &rows, false, set.main()).unwrap_err();
    assert_eq!(err.row, "session ses_a, message m2, part p1");
    assert!(err.message.contains("invalid JSON"), "{err}");
    let mut set = TaskSet::default();
    let out = read_session(&session("ses_a", None), &rows, true, set.main()).unwrap();
    assert_eq!(out.skipped.len(), 1);
    assert_eq!(out.skipped[0].0, 2, "the part's place in the session");
    assert_eq!(set.main().messages.len(), 2);
    // A known part of the wrong shape.
    let rows = [
        user("m1", &[json!({"type": "text"})]),
        assistant("m2", true, &[text("x")]),
    ];
    let mut set = TaskSet::default();
    let err = read_session(&session("ses_a", None), &rows, false, set.main()).unwrap_err();
    assert_eq!(err.row, "session ses_a, message m1, part m1_p0");
    assert!(
        err.message
            .contains("a text part without a string \"text\""),
        "{err}"
    );
}

#[test]
fn subagents_are_named_under_their_parents() {
    let sessions = [
        session("a", None),
        session("b", Some("a")),
        session("c", Some("b")),
        session("d", Some("gone")),
    ];
    let ids = task_ids(&sessions);
    assert_eq!(ids["a"], "a");
    assert_eq!(ids["b"], "a/b");
    assert_eq!(ids["c"], "a/b/c");
    assert_eq!(ids["d"], "d", "a parent not in the store names nothing");
}

#[test]
fn milliseconds_become_iso_timestamps() {
    assert_eq!(iso_millis(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso_millis(1_796_407_973_966), "2026-12-04T18:12:53.966Z");
    assert_eq!(iso_millis(951_782_400_123), "2000-02-29T00:00:00.123Z");
}
