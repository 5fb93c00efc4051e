//! The Gemini API's `contents` parts as the record's blocks, read the same
//! way by the `gemini-cli` importer (a session file keeps the parts it sent)
//! and by the live proxy (a request's `contents`, an answer's candidate).
//!
//! - A model turn's adjacent text parts are one text block, and its adjacent
//!   thought parts (`thought: true`) one thinking block: a client merges
//!   streamed text as it takes the answer (Gemini CLI does), so the answer
//!   and the turn the client sends back read the same.
//! - A `functionCall` is a `tool_use`, a `functionResponse` a `tool_result`.
//!   Gemini pairs them by order (a call's `id` is optional, and a client may
//!   set its own): the caller names each call and response (`ids`).
//! - A `thoughtSignature` on a part other than a thought is kept byte for
//!   byte in a redacted-thinking block, `gemini-signature T SIG`, T the
//!   index among the turn's other blocks of the one whose part carried it
//!   (`-`: an empty text part of its own). A turn's thinking and signature
//!   blocks come first, before the blocks they ride on, so that the blocks
//!   a client must send back are contiguous.
//! - Other parts (`fileData`, `executableCode`, non-image `inlineData`…)
//!   are kept verbatim as `Block::Other`.

use serde_json::{Map, Value};

use crate::model::{Block, ImageSource, ToolContent};

/// The prefix of a redacted-thinking block that carries a thought signature.
pub(crate) const SIGNATURE: &str = "gemini-signature ";

/// How the parts of one content name their calls and responses: from the
/// call's ordinal in its turn (`k`), the part's own `id` and its `name`.
pub(crate) trait Ids {
    fn call(&mut self, k: usize, id: Option<&str>, name: &str) -> String;
    fn response(&mut self, k: usize, id: Option<&str>, name: &str) -> String;
}

/// Why a part cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadPart(pub String);

fn obj(part: &Value, at: usize) -> Result<&Map<String, Value>, BadPart> {
    part.as_object().ok_or_else(|| {
        BadPart(format!(
            "part {at} is not an object; expected a Gemini part ({{\"text\"}}, {{\"functionCall\"}}…)"
        ))
    })
}

fn signature(o: &Map<String, Value>) -> Option<&str> {
    o.get("thoughtSignature")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A text part that may be merged with its neighbours (Gemini CLI's rule:
/// text, not a thought, nothing else of substance on it).
fn plain_text(o: &Map<String, Value>) -> Option<&str> {
    let text = o.get("text")?.as_str()?;
    let other = ["functionCall", "functionResponse", "inlineData", "fileData"];
    (o.get("thought") != Some(&Value::Bool(true)) && !other.iter().any(|k| o.contains_key(*k)))
        .then_some(text)
}

fn thought_text(o: &Map<String, Value>) -> Option<&str> {
    (o.get("thought") == Some(&Value::Bool(true)))
        .then(|| o.get("text").and_then(Value::as_str).unwrap_or(""))
}

/// An image part's block; anything else kept as it is.
fn inline_data(part: &Value, o: &Map<String, Value>) -> Block {
    let d = o.get("inlineData").and_then(Value::as_object);
    let mime = d.and_then(|d| d.get("mimeType")).and_then(Value::as_str);
    let data = d.and_then(|d| d.get("data")).and_then(Value::as_str);
    match (mime, data) {
        (Some(m), Some(data)) if m.starts_with("image/") => Block::Image {
            source: ImageSource {
                kind: "base64".into(),
                media_type: Some(m.to_string()),
                data: Some(data.to_string()),
                url: None,
            },
        },
        _ => Block::Other(part.clone()),
    }
}

/// A model turn's parts as blocks: thinking and signatures first, then the
/// text, calls and other parts in order.
pub(crate) fn model_blocks(parts: &[Value], ids: &mut dyn Ids) -> Result<Vec<Block>, BadPart> {
    let mut lead: Vec<Block> = Vec::new();
    let mut body: Vec<Block> = Vec::new();
    // The text being merged and the signatures of its parts.
    let mut text: Option<(String, Vec<String>)> = None;
    let mut thought: Option<(String, Option<String>)> = None;
    let mut calls = 0;
    fn flush_text(
        text: &mut Option<(String, Vec<String>)>,
        lead: &mut Vec<Block>,
        body: &mut Vec<Block>,
    ) {
        if let Some((t, sigs)) = text.take() {
            let keep = !t.trim().is_empty();
            let target = if keep {
                body.len().to_string()
            } else {
                "-".into()
            };
            for s in sigs {
                lead.push(Block::RedactedThinking {
                    data: format!("{SIGNATURE}{target} {s}"),
                });
            }
            if keep {
                body.push(Block::Text { text: t });
            }
        }
    }
    fn flush_thought(thought: &mut Option<(String, Option<String>)>, lead: &mut Vec<Block>) {
        if let Some((t, sig)) = thought.take() {
            if t.is_empty() {
                if let Some(s) = sig {
                    lead.push(Block::RedactedThinking {
                        data: format!("{SIGNATURE}- {s}"),
                    });
                }
            } else {
                lead.push(Block::Thinking {
                    thinking: t,
                    signature: sig,
                });
            }
        }
    }
    for (at, part) in parts.iter().enumerate() {
        let o = obj(part, at)?;
        let sig = signature(o).map(str::to_string);
        if let Some(t) = thought_text(o) {
            flush_text(&mut text, &mut lead, &mut body);
            if thought.as_ref().is_some_and(|(_, s)| s.is_some()) {
                flush_thought(&mut thought, &mut lead);
            }
            let (all, s) = thought.get_or_insert_with(|| (String::new(), None));
            all.push_str(t);
            if sig.is_some() {
                *s = sig;
            }
            continue;
        }
        flush_thought(&mut thought, &mut lead);
        if let Some(t) = plain_text(o) {
            let (all, sigs) = text.get_or_insert_with(|| (String::new(), Vec::new()));
            all.push_str(t);
            sigs.extend(sig);
            continue;
        }
        flush_text(&mut text, &mut lead, &mut body);
        if let Some(s) = &sig {
            lead.push(Block::RedactedThinking {
                data: format!("{SIGNATURE}{} {s}", body.len()),
            });
        }
        if let Some(fc) = o.get("functionCall") {
            let fc = fc.as_object().ok_or_else(|| {
                BadPart(format!(
                    "part {at}: \"functionCall\" is not an object; expected {{\"name\",\"args\"}}"
                ))
            })?;
            let name = fc.get("name").and_then(Value::as_str).ok_or_else(|| {
                BadPart(format!(
                    "part {at}: a functionCall without a \"name\"; expected the function's name"
                ))
            })?;
            let input = match fc.get("args") {
                Some(v @ Value::Object(_)) => v.clone(),
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(other) => {
                    let mut m = Map::new();
                    m.insert("args".into(), other.clone());
                    Value::Object(m)
                }
            };
            let id = ids.call(calls, fc.get("id").and_then(Value::as_str), name);
            calls += 1;
            body.push(Block::ToolUse {
                id,
                name: name.to_string(),
                input,
            });
        } else if o.contains_key("inlineData") {
            body.push(inline_data(part, o));
        } else {
            body.push(Block::Other(part.clone()));
        }
    }
    flush_thought(&mut thought, &mut lead);
    flush_text(&mut text, &mut lead, &mut body);
    lead.extend(body);
    Ok(lead)
}

/// A `functionResponse`'s `response` as a tool result's content, and whether
/// it reports an error (`{"error": …}` without an `output`).
pub(crate) fn response_content(response: Option<&Value>) -> (ToolContent, bool) {
    match response {
        None | Some(Value::Null) => (ToolContent::Text(String::new()), false),
        Some(Value::String(s)) => (ToolContent::Text(s.clone()), false),
        Some(Value::Object(o)) => match (o.get("output"), o.get("error")) {
            (Some(Value::String(s)), _) if o.len() == 1 => (ToolContent::Text(s.clone()), false),
            (None, Some(Value::String(e))) if o.len() == 1 => (ToolContent::Text(e.clone()), true),
            (None, Some(_)) => (
                ToolContent::Text(Value::Object(o.clone()).to_string()),
                true,
            ),
            _ => (
                ToolContent::Text(Value::Object(o.clone()).to_string()),
                false,
            ),
        },
        Some(other) => (ToolContent::Text(other.to_string()), false),
    }
}

/// A user turn's parts as blocks, in order: each text part a text block (a
/// client's context and its ask are parts of their own), each
/// `functionResponse` a tool result.
pub(crate) fn user_blocks(parts: &[Value], ids: &mut dyn Ids) -> Result<Vec<Block>, BadPart> {
    let mut out = Vec::with_capacity(parts.len());
    let mut responses = 0;
    for (at, part) in parts.iter().enumerate() {
        let o = obj(part, at)?;
        if let Some(fr) = o.get("functionResponse") {
            let fr = fr.as_object().ok_or_else(|| {
                BadPart(format!(
                    "part {at}: \"functionResponse\" is not an object; expected {{\"name\",\"response\"}}"
                ))
            })?;
            let name = fr.get("name").and_then(Value::as_str).unwrap_or("");
            let id = ids.response(responses, fr.get("id").and_then(Value::as_str), name);
            responses += 1;
            let (content, is_error) = response_content(fr.get("response"));
            out.push(Block::ToolResult {
                tool_use_id: id,
                content,
                is_error,
            });
        } else if let Some(t) = o.get("text").and_then(Value::as_str)
            && o.len() == 1
        {
            if !t.trim().is_empty() {
                out.push(Block::Text {
                    text: t.to_string(),
                });
            }
        } else if o.contains_key("inlineData") {
            out.push(inline_data(part, o));
        } else {
            out.push(Block::Other(part.clone()));
        }
    }
    Ok(out)
}

/// A content's `parts`: a list, or a bare string (one text part).
pub(crate) fn parts_of(content: &Value) -> Result<Vec<Value>, BadPart> {
    match content {
        Value::Array(parts) => Ok(parts.clone()),
        Value::String(s) => Ok(vec![serde_json::json!({ "text": s })]),
        Value::Null => Ok(Vec::new()),
        Value::Object(_) => Ok(vec![content.clone()]),
        _ => Err(BadPart(
            "the parts are neither a list nor a string; expected a list of Gemini parts".into(),
        )),
    }
}

/// A signature block's target (the index of the block whose part carried
/// it, `None` for a part of its own) and the signature.
pub(crate) fn signature_of(b: &Block) -> Option<(Option<usize>, &str)> {
    let Block::RedactedThinking { data } = b else {
        return None;
    };
    let rest = data.strip_prefix(SIGNATURE)?;
    let (target, sig) = rest.split_once(' ')?;
    Some((target.parse().ok(), sig))
}

/// Where a thing is said to start a text the client injected (its context,
/// a hook's, a compression summary): not an ask.
pub(crate) fn context_text(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<session_context>") || t.starts_with("<hook_context>")
}

/// A compression summary Gemini CLI puts in place of the history it folded.
pub(crate) fn state_snapshot(text: &str) -> bool {
    text.trim_start().starts_with("<state_snapshot>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Calls and responses named by their ordinal.
    struct ByOrder;

    impl Ids for ByOrder {
        fn call(&mut self, k: usize, _id: Option<&str>, _name: &str) -> String {
            format!("c{k}")
        }
        fn response(&mut self, k: usize, _id: Option<&str>, _name: &str) -> String {
            format!("c{k}")
        }
    }

    #[test]
    fn a_streamed_turn_and_the_turn_a_client_sends_back_read_the_same() {
        // As the model streamed it: thoughts, text in pieces, a signed call.
        let streamed = [
            json!({"text": "Let me think", "thought": true}),
            json!({"text": " about it.", "thought": true, "thoughtSignature": "dGhv"}),
            json!({"text": "Reading"}),
            json!({"text": " the file."}),
            json!({"functionCall": {"name": "read_file", "args": {"file_path": "a.txt"}}, "thoughtSignature": "c2ln"}),
        ];
        let blocks = model_blocks(&streamed, &mut ByOrder).unwrap();
        assert_eq!(
            blocks,
            vec![
                Block::Thinking {
                    thinking: "Let me think about it.".into(),
                    signature: Some("dGhv".into())
                },
                Block::RedactedThinking {
                    data: "gemini-signature 1 c2ln".into()
                },
                Block::Text {
                    text: "Reading the file.".into()
                },
                Block::ToolUse {
                    id: "c0".into(),
                    name: "read_file".into(),
                    input: json!({"file_path": "a.txt"})
                },
            ]
        );
        // As Gemini CLI sends it back: thoughts dropped, text merged, its own id.
        let sent = [
            json!({"text": "Reading the file."}),
            json!({"functionCall": {"id": "read_file_17_0", "args": {"file_path": "a.txt"}, "name": "read_file"}, "thoughtSignature": "c2ln"}),
        ];
        let back = model_blocks(&sent, &mut ByOrder).unwrap();
        assert_eq!(back[..], blocks[1..]);
        assert_eq!(signature_of(&back[0]), Some((Some(1), "c2ln")));
    }

    #[test]
    fn responses_are_results_and_errors_are_told() {
        let parts = [
            json!({"text": "<session_context>\nhere</session_context>"}),
            json!({"functionResponse": {"name": "read_file", "response": {"output": "x"}}}),
            json!({"functionResponse": {"id": "i", "name": "glob", "response": {"error": "no such dir"}}}),
        ];
        let b = user_blocks(&parts, &mut ByOrder).unwrap();
        assert!(matches!(&b[0], Block::Text { text } if context_text(text)));
        assert_eq!(
            b[1],
            Block::ToolResult {
                tool_use_id: "c0".into(),
                content: ToolContent::Text("x".into()),
                is_error: false
            }
        );
        assert!(
            matches!(&b[2], Block::ToolResult { is_error: true, tool_use_id, .. } if tool_use_id == "c1")
        );
        let bad = model_blocks(&[json!({"functionCall": {"args": {}}})], &mut ByOrder);
        assert!(bad.unwrap_err().0.contains("without a \"name\""));
    }
}
