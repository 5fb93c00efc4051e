//! Human-readable rendering of blocks and messages (show, export markdown).

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
