use serde_json::{Value, json};

use super::*;

fn msg(role: ViewRole, content: Vec<Block>) -> ViewMessage {
    ViewMessage { role, content }
}

/// A JSON Lines file's values.
fn json_lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// The user's message carrying the text result of tool call `id`.
fn result(id: &str, text: &str) -> ViewMessage {
    let content = ToolContent::Text(text.into());
    let block = Block::ToolResult {
        tool_use_id: id.into(),
        content,
        is_error: false,
    };
    msg(ViewRole::User, vec![block])
}

fn sample() -> View {
    View {
        messages: vec![
            msg(
                ViewRole::User,
                vec![Block::Text {
                    text: "## Task Context\n\n## Requests\n- #1: fix it".into(),
                }],
            ),
            msg(
                ViewRole::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "plan".into(),
                        signature: Some("gAAAAenc".into()),
                    },
                    Block::Text {
                        text: "Reading.".into(),
                    },
                    Block::ToolUse {
                        id: "call.1".into(),
                        name: "shell".into(),
                        input: json!({"command": ["ls"]}),
                    },
                ],
            ),
            result("call.1", "a\nb"),
            msg(
                ViewRole::Assistant,
                vec![Block::RedactedThinking { data: "x".into() }],
            ),
        ],
    }
}

fn params<'a>(id: &'a str) -> SessionParams<'a> {
    SessionParams {
        session_id: id,
        timestamp: "2026-01-02T03:04:05.000Z",
        cwd: "/w",
        model: None,
        pre_tokens: 9,
        version: "2.1.9",
        git_branch: Some("feat/x"),
        title: Some("Fix \"it\""),
    }
}

#[test]
fn foreign_reasoning_is_dropped_with_a_note_and_ids_are_made_safe() {
    let a = adapt(&sample(), Vendor::OpenAi, Vendor::Anthropic);
    assert_eq!(a.notes.len(), 2, "{:?}", a.notes);
    assert!(a.notes[0].contains("2 reasoning blocks dropped"));
    let m1 = &a.view.messages[1].content;
    assert!(matches!(&m1[1], Block::ToolUse { id, .. } if id == "call_1"));
    assert!(
        matches!(&a.view.messages[2].content[0], Block::ToolResult { tool_use_id, .. } if tool_use_id == "call_1")
    );
    // A message left empty gets a placeholder, so the view stays legal.
    assert_eq!(
        a.view.messages[3].content,
        vec![Block::Text {
            text: OMITTED.into()
        }]
    );
    assert_eq!(crate::view::validate(&a.view), vec![]);
    // Same provider: reasoning stays, ids are untouched for OpenAI.
    let same = adapt(&sample(), Vendor::OpenAi, Vendor::OpenAi);
    assert_eq!(same.view, sample());
    assert!(same.notes.is_empty());
}

#[test]
fn claude_code_session_has_boundary_summary_and_chained_lines() {
    let view = adapt(&sample(), Vendor::OpenAi, Vendor::Anthropic).view;
    let bytes = claude_code_session(&view, &params("s-1"));
    let lines = json_lines(&bytes);
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["subtype"], "compact_boundary");
    assert_eq!(lines[0]["parentUuid"], Value::Null);
    assert_eq!(lines[1]["isCompactSummary"], true);
    for w in lines[..5].windows(2) {
        assert_eq!(w[1]["parentUuid"], w[0]["uuid"]);
    }
    assert_eq!(lines[2]["message"]["stop_reason"], "tool_use");
    assert_eq!(lines[3]["message"]["content"][0]["type"], "tool_result");
    // Every conversation line names the client version and the branch; the
    // title comes last, as Claude Code writes a session's name.
    for l in &lines[..5] {
        assert_eq!(l["version"], "2.1.9");
        assert_eq!(l["gitBranch"], "feat/x");
    }
    assert_eq!(
        lines[5],
        json!({"type": "custom-title", "customTitle": "Fix \"it\"", "sessionId": "s-1"})
    );
    let untitled = SessionParams {
        title: None,
        git_branch: None,
        ..params("s-1")
    };
    let lines = json_lines(&claude_code_session(&view, &untitled));
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["gitBranch"], "");
    // Another session id changes only the session id.
    let other = claude_code_session(&view, &params("s-2"));
    let other = String::from_utf8(other).unwrap().replace("s-2", "s-1");
    assert_eq!(other.as_bytes(), bytes.as_slice());
}

#[test]
fn codex_session_is_meta_then_one_compacted_item() {
    let bytes = codex_session(&sample(), &params("s-1"));
    let lines = json_lines(&bytes);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["payload"]["id"], "s-1");
    assert_eq!(lines[0]["payload"]["cli_version"], "2.1.9");
    assert_eq!(lines[0]["payload"]["git"], json!({"branch": "feat/x"}));
    let branchless = SessionParams {
        git_branch: None,
        ..params("s-1")
    };
    let meta = &json_lines(&codex_session(&sample(), &branchless))[0];
    assert!(meta["payload"].get("git").is_none(), "{meta}");
    assert_eq!(
        json_lines(&codex_index_entry(
            "s-1",
            "Fix it",
            "2026-01-02T03:04:05.000Z"
        )),
        [json!({"id": "s-1", "thread_name": "Fix it", "updated_at": "2026-01-02T03:04:05.000Z"})]
    );
    let c = &lines[1]["payload"];
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .starts_with("## Task Context")
    );
    let types: Vec<&str> = c["replacement_history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call_output",
            "reasoning"
        ]
    );
    assert_eq!(
        c["replacement_history"][3]["arguments"],
        "{\"command\":[\"ls\"]}"
    );
}

#[test]
fn freeform_tools_go_back_as_custom_tool_calls() {
    let view = View {
        messages: vec![
            msg(ViewRole::User, vec![Block::Text { text: "p".into() }]),
            msg(
                ViewRole::Assistant,
                vec![Block::ToolUse {
                    id: "c1".into(),
                    name: "apply_patch".into(),
                    input: json!({"input": "*** Begin Patch"}),
                }],
            ),
            result("c1", "ok"),
        ],
    };
    let items = responses_items(&view);
    assert_eq!(items[1]["type"], "custom_tool_call");
    assert_eq!(items[1]["input"], "*** Begin Patch");
    assert_eq!(items[2]["type"], "custom_tool_call_output");
}

#[test]
fn uuids_are_derived_and_shaped() {
    let u = uuid_from(b"x");
    assert_eq!(u, uuid_from(b"x"));
    assert_ne!(u, uuid_from(b"y"));
    assert_eq!(u.len(), 36);
    assert_eq!(&u[14..15], "4");
}

/// The versions a session for the other client names are the pinned
/// clients' (`clients/package.json`), the ones the resume tests run.
#[test]
fn the_pinned_versions_are_the_clients_the_resume_tests_run() {
    let pins: Value = serde_json::from_str(include_str!("../../../clients/package.json")).unwrap();
    assert_eq!(
        pins["dependencies"]["@anthropic-ai/claude-code"],
        CLAUDE_CODE_VERSION
    );
    assert_eq!(pins["dependencies"]["@openai/codex"], CODEX_VERSION);
}
