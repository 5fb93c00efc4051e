//! Anthropic content and usage read in one pass, straight from a line's text
//! into [`Block`]s and [`Usage`], with no `serde_json::Value` tree between.
//!
//! This is a fast path only: it accepts exactly the input that
//! `common::anthropic_content` and `common::anthropic_usage` turn into blocks
//! and usage without an error, and gives the same result for it. Anything
//! else (a missing field, a field of another type, an unknown block type, a
//! duplicate key, a count out of range) fails the deserialisation, and the
//! caller reads the line again through the `Value` path, which keeps unknown
//! blocks verbatim and words every error as before.

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::tokens::MAX_TOKENS;
use crate::model::{Block, ImageSource, ToolContent, Usage};

/// Why the fast path gives up (never shown: the `Value` path runs instead).
const FALLBACK: &str = "left to the general reader";

/// A `content` field: a string, a list of blocks, or null (no blocks).
#[derive(Default)]
pub(super) struct Content(pub(super) Vec<Block>);

/// A tool result's `content`: a string or a list of blocks (null and absent
/// are handled by the `Option` around it).
struct ResultContent(ToolContent);

/// The block types the fast path builds; any other is left to the `Value`
/// path, which keeps it verbatim.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum BlockType {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
    ToolResult,
    Image,
    #[serde(other)]
    Other,
}

/// The fields of a block the known types read; others are skipped unread.
#[derive(Deserialize)]
struct RawBlock {
    #[serde(rename = "type")]
    ty: Option<BlockType>,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    data: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
    tool_use_id: Option<String>,
    content: Option<ResultContent>,
    is_error: Option<bool>,
    source: Option<RawSource>,
}

#[derive(Deserialize)]
struct RawSource {
    #[serde(rename = "type")]
    kind: Option<String>,
    media_type: Option<String>,
    data: Option<String>,
    url: Option<String>,
}

impl RawBlock {
    /// The block `common::anthropic_block` makes of the same object, or
    /// `None` where it would fail or keep the object verbatim.
    fn block(self) -> Option<Block> {
        Some(match self.ty? {
            BlockType::Text => Block::Text { text: self.text? },
            BlockType::Thinking => Block::Thinking {
                thinking: self.thinking?,
                signature: self.signature,
            },
            BlockType::RedactedThinking => Block::RedactedThinking { data: self.data? },
            BlockType::ToolUse => Block::ToolUse {
                id: self.id?,
                name: self.name?,
                input: self.input.unwrap_or_else(|| Value::Object(Map::new())),
            },
            BlockType::ToolResult => Block::ToolResult {
                tool_use_id: self.tool_use_id?,
                content: self
                    .content
                    .map_or(ToolContent::Text(String::new()), |c| c.0),
                is_error: self.is_error.unwrap_or(false),
            },
            BlockType::Image => {
                let s = self.source?;
                Block::Image {
                    source: ImageSource {
                        kind: s.kind.unwrap_or_else(|| "base64".to_string()),
                        media_type: s.media_type,
                        data: s.data,
                        url: s.url,
                    },
                }
            }
            BlockType::Other => return None,
        })
    }
}

/// Reads a string or a list of blocks; `T` is what each makes.
struct TextOrBlocks<T>(fn(String) -> T, fn(Vec<Block>) -> T);

impl<'de, T> Visitor<'de> for TextOrBlocks<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string or a list of content blocks")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        Ok((self.0)(s.to_string()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<T, E> {
        Ok((self.0)(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(b) = seq.next_element::<RawBlock>()? {
            blocks.push(b.block().ok_or_else(|| de::Error::custom(FALLBACK))?);
        }
        Ok((self.1)(blocks))
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Content, D::Error> {
        // null: no blocks, as the `Value` path reads it.
        Option::<ContentOrNull>::deserialize(d).map(|c| Content(c.map_or_else(Vec::new, |c| c.0)))
    }
}

/// `Content` without its null case.
struct ContentOrNull(Vec<Block>);

impl<'de> Deserialize<'de> for ContentOrNull {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ContentOrNull, D::Error> {
        d.deserialize_any(TextOrBlocks(
            |text| ContentOrNull(vec![Block::Text { text }]),
            ContentOrNull,
        ))
    }
}

impl<'de> Deserialize<'de> for ResultContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ResultContent, D::Error> {
        d.deserialize_any(TextOrBlocks(
            |text| ResultContent(ToolContent::Text(text)),
            |blocks| ResultContent(ToolContent::Blocks(blocks)),
        ))
    }
}

/// A usage object whose counts `common::anthropic_usage` accepts: each a
/// whole number up to [`MAX_TOKENS`], absent or null counting 0.
#[derive(Deserialize)]
#[serde(try_from = "Counts")]
pub(super) struct CheckedUsage(pub(super) Usage);

#[derive(Deserialize)]
struct Counts {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

impl TryFrom<Counts> for CheckedUsage {
    type Error = &'static str;

    fn try_from(c: Counts) -> Result<CheckedUsage, &'static str> {
        let n = |v: Option<u64>| match v.unwrap_or(0) {
            v if v <= MAX_TOKENS => Ok(v),
            _ => Err(FALLBACK),
        };
        Ok(CheckedUsage(Usage {
            input_tokens: n(c.input_tokens)?,
            output_tokens: n(c.output_tokens)?,
            cache_read_input_tokens: n(c.cache_read_input_tokens)?,
            cache_creation_input_tokens: n(c.cache_creation_input_tokens)?,
        }))
    }
}
