//! Canonical form, hashing, validation and exports of views.

use super::*;

fn user(content: Vec<Block>) -> ViewMessage {
    ViewMessage {
        role: ViewRole::User,
        content,
    }
}
fn assistant(content: Vec<Block>) -> ViewMessage {
    ViewMessage {
        role: ViewRole::Assistant,
        content,
    }
}
fn text(t: &str) -> Block {
    Block::Text { text: t.into() }
}
fn call(id: &str) -> Block {
    Block::ToolUse {
        id: id.into(),
        name: "Read".into(),
        input: json!({"file_path": "a"}),
    }
}
fn result(id: &str) -> Block {
    Block::ToolResult {
        tool_use_id: id.into(),
        content: ToolContent::Text("ok".into()),
        is_error: false,
    }
}

#[test]
fn a_resumed_hash_equals_the_whole_hash() {
    let a = View {
        messages: vec![user(vec![text("hi")]), assistant(vec![text("yes \"q\"")])],
    };
    let b = View {
        messages: vec![
            user(vec![text("hi")]),
            assistant(vec![text("no")]),
            user(vec![text("x")]),
        ],
    };
    let empty = View { messages: vec![] };
    let mut r = HashResume::default();
    let mut off = HashResume::off();
    for v in [&a, &b, &a, &empty, &b, &b] {
        // The streamed hash is the hash of the canonical bytes.
        let whole = blake3::hash(&v.canonical_bytes()).to_hex().to_string();
        assert_eq!(v.hash(), whole);
        assert_eq!(v.hash_resuming(&mut r), whole);
        assert_eq!(v.hash_resuming(&mut off), whole);
        assert!(off.messages.is_empty() && off.states.is_empty());
    }
}

#[test]
fn canonical_bytes_are_compact_ordered_and_newline_terminated() {
    let v = View {
        messages: vec![user(vec![text("hi")])],
    };
    assert_eq!(
        v.canonical_bytes(),
        b"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}\n"
    );
    assert_eq!(View::from_json(&v.canonical_bytes()).unwrap(), v);
    assert_eq!(v.hash().len(), 64);
}

#[test]
fn a_legal_tool_exchange_validates() {
    let v = View {
        messages: vec![
            user(vec![text("read a")]),
            assistant(vec![text("sure"), call("t1"), call("t2")]),
            user(vec![result("t1"), result("t2"), text("thanks")]),
        ],
    };
    assert_eq!(validate(&v), vec![]);
}

#[test]
fn each_rule_is_enforced() {
    let cases: Vec<(View, &str)> = vec![
        (View::default(), "no messages"),
        (
            View {
                messages: vec![assistant(vec![text("x")])],
            },
            "first message",
        ),
        (
            View {
                messages: vec![user(vec![text("a")]), user(vec![text("b")])],
            },
            "in a row",
        ),
        (
            View {
                messages: vec![user(vec![text("  ")])],
            },
            "whitespace-only",
        ),
        (
            View {
                messages: vec![user(vec![text("a")]), assistant(vec![call("t1")])],
            },
            "not answered",
        ),
        (
            View {
                messages: vec![
                    user(vec![text("a")]),
                    assistant(vec![call("t1")]),
                    user(vec![text("x"), result("t1")]),
                ],
            },
            "comes after other content",
        ),
        (
            View {
                messages: vec![user(vec![result("t9")])],
            },
            "answers no tool_use",
        ),
        (
            View {
                messages: vec![
                    user(vec![text("a")]),
                    assistant(vec![call("t1")]),
                    user(vec![result("t1")]),
                    assistant(vec![call("t1")]),
                    user(vec![result("t1")]),
                ],
            },
            "used twice",
        ),
    ];
    for (view, expected) in cases {
        let errs = validate(&view);
        assert!(
            errs.iter().any(|e| e.what.contains(expected)),
            "expected {expected:?} in {errs:?}"
        );
    }
}

#[test]
fn openai_export_maps_tools_and_roles() {
    let v = View {
        messages: vec![
            user(vec![text("read a")]),
            assistant(vec![call("t1")]),
            user(vec![result("t1")]),
        ],
    };
    let msgs = chat_messages(&v, false).0;
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[1]["tool_calls"][0]["function"]["name"], "Read");
    assert_eq!(
        msgs[1]["tool_calls"][0]["function"]["arguments"],
        "{\"file_path\":\"a\"}"
    );
    assert_eq!(msgs[2]["role"], "tool");
    assert_eq!(msgs[2]["tool_call_id"], "t1");
    let md = to_markdown(&v);
    assert!(md.contains("### 2 · assistant"));
    assert!(md.contains("[tool_use Read t1]"));
}

#[test]
fn a_request_head_makes_a_whole_request() {
    let v = View {
        messages: vec![
            user(vec![text("read a")]),
            assistant(vec![
                Block::Thinking {
                    thinking: "hm".into(),
                    signature: None,
                },
                call("t1"),
            ]),
            user(vec![result("t1")]),
        ],
    };
    // No head: the canonical bytes, so the hash is the view's.
    let (plain, notes) = export_request(&v, &RequestHead::default(), ExportFormat::Anthropic);
    assert_eq!(plain, v.canonical_bytes());
    assert!(notes.is_empty());
    let head = RequestHead {
        system: Some("be brief".into()),
        tools: vec![
            json!({"name": "Read", "description": "read", "input_schema": {"type": "object"}}),
            json!({"type": "web_search_20250305", "name": "web_search"}),
        ],
    };
    let (a, _) = export_request(&v, &head, ExportFormat::Anthropic);
    let a: Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(a["system"], "be brief");
    assert_eq!(a["tools"].as_array().unwrap().len(), 2);
    assert_eq!(
        View::from_json(&serde_json::to_vec(&a).unwrap()).unwrap(),
        v
    );
    let (o, notes) = export_request(&v, &head, ExportFormat::Openai);
    let o: Value = serde_json::from_slice(&o).unwrap();
    assert_eq!(
        o["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(o["tools"][0]["function"]["name"], "Read");
    assert_eq!(o["tools"].as_array().unwrap().len(), 1);
    assert!(o["messages"][2].get("reasoning_content").is_none());
    assert_eq!(notes.len(), 2, "{notes:?}");
    let head2 = RequestHead::from_checkpoint(&a);
    assert_eq!(head2, head);
}
