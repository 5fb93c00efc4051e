//! Helpers shared by the importers: Anthropic-vocabulary block parsing and usage.

use serde_json::{Map, Value};

use super::LineError;
use crate::model::{Block, ImageSource, Kind, Message, Role, ToolContent, Usage};

/// Parse a `content` field that is a string or a list of Anthropic blocks.
pub(super) fn anthropic_content(line: u64, content: Value) -> Result<Vec<Block>, LineError> {
    match content {
        Value::String(text) => Ok(vec![Block::Text { text }]),
        Value::Array(items) => items
            .into_iter()
            .map(|b| anthropic_block(line, b))
            .collect(),
        Value::Null => Ok(Vec::new()),
        other => Err(shape(
            line,
            format!(
                "message content is {}; expected a string or a list of content blocks",
                type_name(&other)
            ),
        )),
    }
}

/// Parse one Anthropic content block, taking its strings rather than
/// copying them. Unknown block types are kept verbatim.
pub(crate) fn anthropic_block(line: u64, b: Value) -> Result<Block, LineError> {
    let mut obj = match b {
        Value::Object(obj) => obj,
        other => {
            return Err(shape(
                line,
                format!(
                    "a content block is {}; expected an object with a \"type\"",
                    type_name(&other)
                ),
            ));
        }
    };
    // The known types by a `'static` name: the fields are taken out of `obj` below.
    const KNOWN: [&str; 6] = [
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "image",
    ];
    let ty = obj.get("type").and_then(Value::as_str);
    let ty = KNOWN.into_iter().find(|k| Some(*k) == ty).unwrap_or("");
    Ok(match ty {
        "text" => Block::Text {
            text: take_str(line, &mut obj, "text", "text block")?,
        },
        "thinking" => Block::Thinking {
            thinking: take_str(line, &mut obj, "thinking", "thinking block")?,
            signature: match obj.remove("signature") {
                Some(Value::String(s)) => Some(s),
                _ => None,
            },
        },
        "redacted_thinking" => Block::RedactedThinking {
            data: take_str(line, &mut obj, "data", "redacted_thinking block")?,
        },
        "tool_use" => Block::ToolUse {
            id: take_str(line, &mut obj, "id", "tool_use block")?,
            name: take_str(line, &mut obj, "name", "tool_use block")?,
            input: match obj.remove("input") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(v) => v,
            },
        },
        "tool_result" => Block::ToolResult {
            tool_use_id: take_str(line, &mut obj, "tool_use_id", "tool_result block")?,
            content: tool_content(line, obj.remove("content"))?,
            is_error: obj
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        "image" => Block::Image {
            source: image_source(line, obj.remove("source"))?,
        },
        _ => Block::Other(Value::Object(obj)),
    })
}

/// A tool_result's content: a string, a list of blocks, or nothing.
pub(super) fn tool_content(line: u64, v: Option<Value>) -> Result<ToolContent, LineError> {
    match v {
        None | Some(Value::Null) => Ok(ToolContent::Text(String::new())),
        Some(Value::String(s)) => Ok(ToolContent::Text(s)),
        Some(Value::Array(items)) => Ok(ToolContent::Blocks(
            items
                .into_iter()
                .map(|b| anthropic_block(line, b))
                .collect::<Result<_, _>>()?,
        )),
        Some(other) => Err(shape(
            line,
            format!(
                "tool_result content is {}; expected a string or a list of blocks",
                type_name(&other)
            ),
        )),
    }
}

/// An image block's source, its strings taken (an image's data is often
/// the largest string of a request).
fn image_source(line: u64, v: Option<Value>) -> Result<ImageSource, LineError> {
    let Some(Value::Object(mut obj)) = v else {
        return Err(shape(
            line,
            "image block without a \"source\" object; expected {\"type\":\"base64\",\"media_type\",\"data\"}",
        ));
    };
    let mut take = |key: &str| match obj.remove(key) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    Ok(ImageSource {
        kind: take("type").unwrap_or_else(|| "base64".to_string()),
        media_type: take("media_type"),
        data: take("data"),
        url: take("url"),
    })
}

/// An image from a data URL (`data:image/png;base64,...`) or a plain URL.
pub(super) fn image_from_url(url: &str) -> Block {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((meta, data)) = rest.split_once(',')
    {
        let media = meta.strip_suffix(";base64").unwrap_or(meta);
        return Block::Image {
            source: ImageSource {
                kind: "base64".to_string(),
                media_type: Some(media.to_string()),
                data: Some(data.to_string()),
                url: None,
            },
        };
    }
    Block::Image {
        source: ImageSource {
            kind: "url".to_string(),
            media_type: None,
            data: None,
            url: Some(url.to_string()),
        },
    }
}

/// Anthropic usage (`input_tokens`, `cache_*`, `output_tokens`); absent fields count 0.
pub(crate) fn anthropic_usage(line: u64, v: &Value) -> Result<Option<Usage>, LineError> {
    let Some(obj) = v.as_object() else {
        return Ok(None);
    };
    let n = |k: &str| super::tokens::count(line, obj, k);
    Ok(Some(Usage {
        input_tokens: n("input_tokens")?,
        output_tokens: n("output_tokens")?,
        cache_read_input_tokens: n("cache_read_input_tokens")?,
        cache_creation_input_tokens: n("cache_creation_input_tokens")?,
    }))
}

/// A required string field, taken out of `obj` (not copied).
fn take_str(
    line: u64,
    obj: &mut Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<String, LineError> {
    match obj.remove(key) {
        Some(Value::String(s)) => Ok(s),
        v => Err(not_a_string(line, v.as_ref(), key, what)),
    }
}

/// The error for a required string field that is absent or not a string.
fn not_a_string(line: u64, v: Option<&Value>, key: &str, what: &str) -> LineError {
    match v {
        Some(other) => shape(
            line,
            format!(
                "{what} has \"{key}\" as {}; expected a string",
                type_name(other)
            ),
        ),
        None => shape(
            line,
            format!("{what} has no \"{key}\"; expected a string field \"{key}\""),
        ),
    }
}

pub(super) fn opt_str(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A shape error: the JSON is valid but not what the format says.
pub(super) fn shape(line: u64, message: impl Into<String>) -> LineError {
    LineError::new(line, 1, message)
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A content list of typed items: `block` makes a block of an item by its
/// `type` (`None`: the item is kept verbatim as `Block::Other`). Anything but
/// a list is an error naming `field` and what it should be (`expected`).
pub(super) fn typed_items(
    line: u64,
    v: Option<&Value>,
    field: &str,
    expected: &str,
    block: impl Fn(&str, &Value) -> Option<Block>,
) -> Result<Vec<Block>, LineError> {
    let Some(Value::Array(items)) = v else {
        let found = type_name(v.unwrap_or(&Value::Null));
        return Err(shape(
            line,
            format!("{field} is {found}; expected {expected}"),
        ));
    };
    Ok(items
        .iter()
        .map(|it| {
            let ty = it.get("type").and_then(Value::as_str).unwrap_or("");
            block(ty, it).unwrap_or_else(|| Block::Other(it.clone()))
        })
        .collect())
}

/// Numbers the assistant generations of a format whose messages may carry
/// no id of their own.
#[derive(Default)]
pub(super) struct Generations(u32);

impl Generations {
    /// The next generation's message, with its own `id` as its generation
    /// id, else `gen-N` (N counts every generation, with an id or not).
    pub(super) fn message(
        &mut self,
        content: Vec<Block>,
        line: u64,
        id: Option<String>,
    ) -> Message {
        self.0 += 1;
        let mut m = Message::new(Role::Assistant, Kind::Generation, content, line);
        m.gen_id = Some(id.unwrap_or_else(|| format!("gen-{}", self.0)));
        m
    }
}

/// Parse a line that must be a JSON object.
pub(super) fn parse_object(
    line: u64,
    text: &str,
    expected: &str,
) -> Result<Map<String, Value>, LineError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(shape(
            line,
            format!("the line is {}; expected {expected}", type_name(&other)),
        )),
        Err(e) => Err(LineError::from_json(line, &e, expected)),
    }
}

/// Text of the first text block (or the string content), for classification.
pub(super) fn first_text(blocks: &[crate::model::Block]) -> Option<&str> {
    blocks.iter().find_map(|b| match b {
        Block::Text { text } => Some(text.as_str()),
        _ => None,
    })
}

/// The messages of a whole JSON document, each an object. A document has no
/// per-message lines: message i is reported as "line" i+1.
pub(super) fn each_message(
    items: &[Value],
    mut f: impl FnMut(u64, &Map<String, Value>) -> Result<(), LineError>,
) -> Result<(), LineError> {
    for (i, item) in items.iter().enumerate() {
        let n = i as u64 + 1;
        let obj = item.as_object().ok_or_else(|| {
            shape(
                n,
                format!("message {n} is {}; expected an object", type_name(item)),
            )
        })?;
        f(n, obj)?;
    }
    Ok(())
}
