//! How a block becomes text inside a view: part of the view contract. The
//! engine uses these when it projects, folds and restores, so they decide
//! the bytes (and the hash) of every view and golden file. Human output
//! (show, diff) may call them but lives in `cmd`, which nothing here reaches.

use crate::model::{Block, ImageSource, ToolContent};

/// A short description of an image, never its bytes.
pub fn image_label(src: &ImageSource) -> String {
    match (&src.data, &src.url) {
        (Some(d), _) => format!(
            "[image {} · {} base64 chars · blake3 {}]",
            src.media_type.as_deref().unwrap_or("?"),
            d.len(),
            &blake3::hash(d.as_bytes()).to_hex()[..12]
        ),
        (None, Some(u)) => format!("[image {u}]"),
        (None, None) => "[image]".to_string(),
    }
}

/// The source of an inline file: a `document` block whose source is its
/// content (`base64`, `text` or `content`), not a path, URL or file id,
/// which is small and can be read again. `None` for any other block.
fn inline_file_source(b: &Block) -> Option<(&str, &serde_json::Value)> {
    let Block::Other(v) = b else { return None };
    if v.get("type").and_then(|t| t.as_str()) != Some("document") {
        return None;
    }
    let source = v.get("source")?;
    let kind = source.get("type").and_then(|t| t.as_str())?;
    matches!(kind, "base64" | "text" | "content").then_some((kind, source))
}

/// Whether the block is an inline file (see [`inline_file_label`]).
pub fn is_inline_file(b: &Block) -> bool {
    inline_file_source(b).is_some()
}

/// An inline file described in one line, never its bytes (`None` for a
/// block that is not one).
pub fn inline_file_label(b: &Block) -> Option<String> {
    let (kind, source) = inline_file_source(b)?;
    let data: String = match source.get("data").and_then(|d| d.as_str()) {
        Some(d) => d.to_string(),
        // Content blocks: their JSON stands for their bytes.
        None => source
            .get("content")
            .map(|c| serde_json::to_string(c).unwrap_or_default())
            .unwrap_or_default(),
    };
    let media = source
        .get("media_type")
        .and_then(|m| m.as_str())
        .unwrap_or("?");
    let title = match b {
        Block::Other(v) => v
            .get("title")
            .and_then(|t| t.as_str())
            .map(|t| format!(" {t:?}"))
            .unwrap_or_default(),
        _ => String::new(),
    };
    Some(format!(
        "[document{title} {media} · {} {kind} chars · blake3 {}]",
        data.len(),
        &blake3::hash(data.as_bytes()).to_hex()[..12]
    ))
}

/// Render one block as text.
pub fn block_text(b: &Block) -> String {
    match b {
        Block::Text { text } => text.clone(),
        Block::Thinking { thinking, .. } => format!("[thinking]\n{thinking}"),
        Block::RedactedThinking { data } => format!("[redacted thinking · {} chars]", data.len()),
        Block::ToolUse { id, name, input } => format!(
            "[tool_use {name} {id}]\n{}",
            serde_json::to_string_pretty(input).unwrap_or_default()
        ),
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => format!(
            "[tool_result {tool_use_id}{}]\n{}",
            if *is_error { " · error" } else { "" },
            tool_content_text(content)
        ),
        Block::Image { source } => image_label(source),
        Block::Other(v) => format!(
            "[{} block]\n{}",
            v.get("type").and_then(|t| t.as_str()).unwrap_or("unknown"),
            serde_json::to_string(v).unwrap_or_default()
        ),
    }
}

/// A tool result's content as text, images described.
pub fn tool_content_text(c: &ToolContent) -> String {
    match c {
        ToolContent::Text(s) => s.clone(),
        ToolContent::Blocks(bs) => bs.iter().map(block_text).collect::<Vec<_>>().join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// These strings are view bytes: changing one changes view hashes and goldens.
    #[test]
    fn every_block_kind_has_a_fixed_text() {
        let image = ImageSource {
            kind: "base64".into(),
            media_type: Some("image/png".into()),
            data: Some("AAAA".into()),
            url: None,
        };
        let cases = [
            (Block::Text { text: "hi".into() }, "hi".to_string()),
            (
                Block::Thinking {
                    thinking: "hmm".into(),
                    signature: None,
                },
                "[thinking]\nhmm".to_string(),
            ),
            (
                Block::RedactedThinking { data: "xyz".into() },
                "[redacted thinking · 3 chars]".to_string(),
            ),
            (
                Block::ToolUse {
                    id: "t1".into(),
                    name: "Bash".into(),
                    input: json!({"command": "ls"}),
                },
                "[tool_use Bash t1]\n{\n  \"command\": \"ls\"\n}".to_string(),
            ),
            (
                Block::ToolResult {
                    tool_use_id: "t1".into(),
                    content: ToolContent::Text("out".into()),
                    is_error: true,
                },
                "[tool_result t1 · error]\nout".to_string(),
            ),
            (
                Block::Image {
                    source: image.clone(),
                },
                format!(
                    "[image image/png · 4 base64 chars · blake3 {}]",
                    &blake3::hash(b"AAAA").to_hex()[..12]
                ),
            ),
            (
                Block::Other(json!({"type": "x", "a": 1})),
                "[x block]\n{\"a\":1,\"type\":\"x\"}".to_string(),
            ),
        ];
        for (block, text) in cases {
            assert_eq!(block_text(&block), text, "{block:?}");
        }
        let blocks = ToolContent::Blocks(vec![
            Block::Text { text: "a".into() },
            Block::Image { source: image },
        ]);
        assert!(tool_content_text(&blocks).starts_with("a\n[image image/png"));
    }
}
