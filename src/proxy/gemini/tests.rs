//! Tests of the Gemini API.

use serde_json::json;

use super::*;

#[test]
fn a_path_names_its_model_and_whether_it_streams() {
    assert_eq!(
        route("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
        Some(("gemini-2.5-pro", true))
    );
    assert_eq!(
        route("/v1beta/models/gemini-2.5-flash:generateContent"),
        Some(("gemini-2.5-flash", false))
    );
    assert_eq!(route("/v1/models/m:generateContent"), Some(("m", false)));
    for not in [
        "/v1beta/models/m:countTokens",
        "/v1beta/models/:generateContent",
        "/v1beta/models/a/b:generateContent",
        "/v1/messages",
        "/v1beta/models/m",
    ] {
        assert_eq!(route(not), None, "{not}");
    }
}

#[test]
fn a_helper_asking_for_json_without_tools_is_a_side_call() {
    let helper =
        json!({"contents": [], "generationConfig": {"responseMimeType": "application/json"}});
    assert!(side_call(helper.to_string().as_bytes()));
    let schema = json!({"contents": [], "generationConfig": {"responseJsonSchema": {}}});
    assert!(side_call(schema.to_string().as_bytes()));
    // The CLI's compression: no tools, a text answer: a conversation.
    let compression = json!({"contents": [], "generationConfig": {"temperature": 0}});
    assert!(!side_call(compression.to_string().as_bytes()));
    let with_tools = json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "read_file"}]}], "generationConfig": {"responseMimeType": "application/json"}});
    assert!(!side_call(with_tools.to_string().as_bytes()));
    assert!(!side_call(b"not json"));
}

/// A model content's calls are named by their place, and the next user
/// content's responses answer them in order, whatever ids the client gave.
#[test]
fn calls_and_responses_are_paired_by_their_place() {
    let model = json!({"role": "model", "parts": [
        {"text": "Reading two files."},
        {"functionCall": {"id": "read_file_1_0", "name": "read_file", "args": {"file_path": "a"}}, "thoughtSignature": "c2ln"},
        {"functionCall": {"id": "read_file_1_1", "name": "read_file", "args": {"file_path": "b"}}},
    ]})
    .to_string();
    let user = json!({"role": "user", "parts": [
        {"functionResponse": {"id": "read_file_1_0", "name": "read_file", "response": {"output": "A"}}},
        {"functionResponse": {"id": "read_file_1_1", "name": "read_file", "response": {"error": "no b"}}},
    ]})
    .to_string();
    let m = content_rows(&model, 3).unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].kind, Kind::Generation);
    let calls: Vec<&str> = m[0]
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["gemini-call-3-0", "gemini-call-3-1"]);
    let u = content_rows(&user, 4).unwrap();
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].kind, Kind::ToolResult);
    let answered: Vec<(&str, bool)> = u[0]
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => Some((tool_use_id.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        answered,
        [("gemini-call-3-0", false), ("gemini-call-3-1", true)]
    );
    assert!(
        content_rows(&json!({"role": "robot", "parts": []}).to_string(), 0).is_err(),
        "an unknown role is refused"
    );
}

/// The streamed answer: its thought and every signature kept byte for byte,
/// its text merged, its calls named once its place is known, its usage read.
#[test]
fn an_answer_keeps_its_thought_and_signatures_byte_for_byte() {
    let sig = "c2lnLXN0dWI/+==";
    let thought_sig = "dGhvdWdodC1zaWc=";
    let chunks = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "I should ", "thought": true}]}}], "responseId": "r-1"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "read a.", "thought": true, "thoughtSignature": thought_sig}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Reading"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " a."}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"file_path": "a"}}, "thoughtSignature": sig}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1200, "cachedContentTokenCount": 200, "candidatesTokenCount": 30, "thoughtsTokenCount": 12}}),
    ];
    let mut a = GeminiAssembler::default();
    for c in &chunks {
        assert!(!a.complete());
        a.event("", c.to_string().as_bytes());
    }
    assert!(a.complete() && !a.errored());
    let mut m = Box::new(a).finish().unwrap();
    place_answer(&mut m, 5);
    assert_eq!(m.gen_id.as_deref(), Some("r-1"));
    let u = m.usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
        (1000, 200, 42)
    );
    let thinking = m
        .content
        .iter()
        .find_map(|b| match b {
            Block::Thinking {
                thinking,
                signature,
            } => Some((thinking.as_str(), signature.as_deref())),
            _ => None,
        })
        .unwrap();
    assert_eq!(thinking, ("I should read a.", Some(thought_sig)));
    assert!(m.content.contains(&Block::Text {
        text: "Reading a.".into()
    }));
    assert!(m.content.iter().any(
        |b| matches!(b, Block::ToolUse { id, name, .. } if id == "gemini-call-5-0" && name == "read_file")
    ));
    // The call's signature rides with it, byte for byte.
    let signed: Vec<_> = m.content.iter().filter_map(parts::signature_of).collect();
    assert!(
        signed.contains(&(Some(1), sig)),
        "{signed:?} in {:?}",
        m.content
    );
}

#[test]
fn an_error_chunk_is_the_answers_error() {
    let mut a = GeminiAssembler::default();
    a.event(
        "",
        json!({"error": {"code": 429, "message": "Resource exhausted"}})
            .to_string()
            .as_bytes(),
    );
    assert!(a.complete() && a.errored());
    let e = Box::new(a).finish().unwrap_err();
    assert!(e.contains("Resource exhausted"), "{e}");
}

#[test]
fn a_whole_answer_is_one_chunk_or_a_list_of_them() {
    let one = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}}]});
    let mut a = GeminiAssembler::default();
    a.whole(one.to_string().as_bytes()).unwrap();
    assert!(a.complete());
    let m = Box::new(a).finish().unwrap();
    assert_eq!(
        m.content,
        vec![Block::Text {
            text: "done".into()
        }]
    );
    let list = json!([one, {"candidates": [{"content": {"role": "model", "parts": [{"text": " twice"}]}, "finishReason": "STOP"}]}]);
    let mut a = GeminiAssembler::default();
    a.whole(list.to_string().as_bytes()).unwrap();
    let m = Box::new(a).finish().unwrap();
    assert_eq!(
        m.content,
        vec![Block::Text {
            text: "done twice".into()
        }]
    );
}
