//! Format detection from the first lines of a file (or its whole JSON document).

use serde_json::Value;

use crate::model::Format;

const CLAUDE_TYPES: [&str; 11] = [
    "user",
    "assistant",
    "summary",
    "system",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "custom-title",
    "last-prompt",
    "attachment",
    "tag",
];

const CODEX_TYPES: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// Whether the file at `path` is a view compactor wrote (`compact -o`,
/// `replay --views`): a view's canonical bytes exactly, `{"messages":[…]}`
/// and a newline. Such a file reads as an Anthropic request, but it is no
/// transcript: a checkpoint, importing which would make a task of it. Only
/// a file that starts as a view does is read whole.
pub(crate) fn is_compactor_view(path: &std::path::Path) -> std::io::Result<bool> {
    use std::io::Read;
    const HEAD: &[u8] = b"{\"messages\":[";
    // Only a regular file is opened (a FIFO would wait for a writer).
    if !std::fs::metadata(path)?.is_file() {
        return Ok(false);
    }
    let mut f = std::fs::File::open(path)?;
    let mut head = Vec::with_capacity(HEAD.len());
    (&mut f).take(HEAD.len() as u64).read_to_end(&mut head)?;
    if head != HEAD {
        return Ok(false);
    }
    let mut bytes = head;
    f.read_to_end(&mut bytes)?;
    Ok(crate::view::View::from_json(&bytes).is_ok_and(|v| v.canonical_bytes() == bytes))
}

/// Guess the format from sample JSON values (the first lines, or the items of
/// a whole document). `None` when nothing in the sample decides it.
pub(crate) fn detect(samples: &[Value]) -> Option<Format> {
    let mut chat_votes = 0;
    let mut anthropic_votes = 0;
    let mut saw_plain_message = false;
    for v in samples {
        let Some(o) = v.as_object() else { continue };
        let ty = o.get("type").and_then(Value::as_str);
        // Gemini CLI: its metadata line, its update lines, its own message type.
        if (o.contains_key("sessionId") && o.contains_key("projectHash"))
            || o.get("$set").is_some_and(Value::is_object)
            || o.get("$rewindTo").is_some_and(Value::is_string)
            || (ty == Some("gemini") && o.get("id").is_some_and(Value::is_string))
        {
            return Some(Format::GeminiCli);
        }
        if let Some(t) = ty {
            if CODEX_TYPES.contains(&t) && o.contains_key("payload") {
                return Some(Format::Codex);
            }
            if CLAUDE_TYPES.contains(&t)
                && (o.contains_key("uuid")
                    || o.contains_key("sessionId")
                    || o.contains_key("leafUuid")
                    || o.contains_key("messageId")
                    || o.contains_key("parentUuid"))
            {
                return Some(Format::ClaudeCode);
            }
        }
        if o.contains_key("record_type") || (o.contains_key("instructions") && o.contains_key("id"))
        {
            return Some(Format::Codex); // the legacy rollout header
        }
        if let Some(msgs) = o
            .get("messages")
            .or_else(|| o.get("history"))
            .and_then(Value::as_array)
        {
            if o.contains_key("system") || o.contains_key("max_tokens") {
                anthropic_votes += 1;
            }
            if let Some(f) = detect(msgs) {
                return Some(f);
            }
            continue;
        }
        let Some(role) = o.get("role").and_then(Value::as_str) else {
            continue;
        };
        saw_plain_message = true;
        match role {
            "system" | "tool" | "developer" | "function" => chat_votes += 2,
            _ => {}
        }
        if o.contains_key("tool_calls") || o.contains_key("tool_call_id") {
            chat_votes += 2;
        }
        if let Some(parts) = o.get("content").and_then(Value::as_array) {
            for p in parts {
                match p.get("type").and_then(Value::as_str) {
                    Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking") => {
                        anthropic_votes += 2
                    }
                    Some("image") if p.get("source").is_some() => anthropic_votes += 1,
                    Some("image_url" | "input_text") => chat_votes += 1,
                    _ => {}
                }
            }
        }
        if o.get("type").and_then(Value::as_str) == Some("message") {
            anthropic_votes += 1; // a Messages API response object
        }
    }
    if chat_votes > anthropic_votes {
        Some(Format::OpenaiChat)
    } else if anthropic_votes > 0 || saw_plain_message {
        // Plain {role, content:string} lines read the same in both formats.
        Some(Format::Anthropic)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detects_each_format_from_typical_first_lines() {
        assert_eq!(
            detect(&[json!({"type":"session_meta","payload":{"id":"x"},"timestamp":"t"})]),
            Some(Format::Codex)
        );
        assert_eq!(
            detect(&[json!({"type":"summary","summary":"t","leafUuid":"u"})]),
            Some(Format::ClaudeCode)
        );
        assert_eq!(
            detect(&[json!({"role":"system","content":"be brief"})]),
            Some(Format::OpenaiChat)
        );
        assert_eq!(
            detect(&[
                json!({"role":"assistant","content":[{"type":"tool_use","id":"a","name":"n","input":{}}]})
            ]),
            Some(Format::Anthropic)
        );
        assert_eq!(
            detect(&[
                json!({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})
            ]),
            Some(Format::Anthropic)
        );
        assert_eq!(
            detect(&[json!({"sessionId":"s","projectHash":"h","startTime":"t","kind":"main"})]),
            Some(Format::GeminiCli)
        );
        assert_eq!(
            detect(&[json!({"id":"m1","type":"gemini","content":"hi"})]),
            Some(Format::GeminiCli)
        );
        assert_eq!(detect(&[json!({"hello":"world"})]), None);
        assert_eq!(detect(&[json!([1, 2])]), None);
    }

    #[test]
    fn a_view_compactor_wrote_is_told_from_a_request() {
        let dir = tempfile::tempdir().unwrap();
        let view = crate::view::View::from_json(
            br#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#,
        )
        .unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let canonical = write("view.json", &view.canonical_bytes());
        assert!(is_compactor_view(&canonical).unwrap());
        // The same messages in a request a client sent, or pretty-printed:
        // not compactor's bytes.
        let request = write(
            "request.json",
            br#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#,
        );
        assert!(!is_compactor_view(&request).unwrap());
        let pretty = serde_json::to_vec_pretty(&view).unwrap();
        assert!(!is_compactor_view(&write("pretty.json", &pretty)).unwrap());
        let mut no_newline = view.canonical_bytes();
        no_newline.pop();
        assert!(!is_compactor_view(&write("cut.json", &no_newline)).unwrap());
    }
}
