//! Transcript lines read in one pass, straight from their text into the
//! importers' own types, with no `serde_json::Value` tree between: Anthropic
//! content and usage here (Claude Code lines), Codex rollout objects in
//! [`codex`].
//!
//! These are fast paths only: each accepts exactly input that the general
//! `Value` readers (`common::anthropic_content`, `common::anthropic_usage`,
//! the Codex importer over a `Map`) take without an error, and gives the same
//! result for it. Anything else (a missing field, a field of another type, an
//! unknown block type, a count out of range) fails the deserialisation, and
//! the caller reads the line again through the `Value` path, which keeps
//! unknown blocks verbatim and words every error.
//!
//! Three rules keep "accepts" exact:
//! - a struct is read from a JSON object only ([`Obj`]: serde's derived
//!   structs also take an array of their fields in order), and a type name
//!   from a string only ([`Name`]: a derived enum also takes `{"name":null}`);
//! - a field a struct does not keep is still read as strictly as a `Value`
//!   reads it ([`Strict`]: serde's `IgnoredAny` lets a lone surrogate escape,
//!   a number out of range and nesting of any depth through, which a `Value`
//!   refuses);
//! - a repeated key keeps its last value, as in a `Value` map.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::tokens::MAX_TOKENS;
use crate::model::{Block, ImageSource, ToolContent, Usage};

/// Why the fast path gives up (never shown: the `Value` path runs instead).
const FALLBACK: &str = "left to the general reader";

/// A struct read from a JSON object one field at a time (see [`Obj`]).
pub(super) trait Fields<'de>: Default {
    /// Reads the value of `key` into its field (a repeated key's later value
    /// replaces the earlier one); false for a key the struct does not keep,
    /// whose value is then read by [`Strict`] and dropped.
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;
}

/// A [`Fields`] struct, read from a JSON object and nothing else.
pub(super) struct Obj<T>(pub(super) T);

impl<'de, T: Fields<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Obj<T>, D::Error> {
        struct ObjVisit<T>(PhantomData<T>);

        impl<'de, T: Fields<'de>> Visitor<'de> for ObjVisit<T> {
            type Value = Obj<T>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                fields(map).map(Obj)
            }
        }

        d.deserialize_map(ObjVisit(PhantomData))
    }
}

/// The entries of an object, read into `T`.
fn fields<'de, T: Fields<'de>, A: MapAccess<'de>>(mut map: A) -> Result<T, A::Error> {
    let mut out = T::default();
    while let Some(key) = map.next_key::<Name>()? {
        if !out.field(&key.0, &mut map)? {
            map.next_value::<Strict>()?;
        }
    }
    Ok(out)
}

/// A field read as `T` (for an `Option`, null reads as absent).
fn read<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    slot: &mut T,
) -> Result<bool, A::Error> {
    *slot = map.next_value()?;
    Ok(true)
}

/// A field read as `T` and marked present (whatever `T` makes of null).
fn present<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
) -> Result<bool, A::Error> {
    *slot = Some(map.next_value()?);
    Ok(true)
}

/// Declares a [`Fields`] struct: each field with the key it is read from
/// and how ([`read`]: null is absent for an `Option`; [`present`]: null is
/// a value).
macro_rules! fields_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$fmeta:meta])* $key:literal => $how:ident $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Default)]
        $vis struct $name {
            $($(#[$fmeta])* $field: $ty,)*
        }

        impl<'de> Fields<'de> for $name {
            fn field<A: MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<bool, A::Error> {
                match key {
                    $($key => $how(map, &mut self.$field),)*
                    _ => Ok(false),
                }
            }
        }
    };
}

pub(super) mod codex;

/// A string (a key, a type name), borrowed from the line when it has no
/// escapes. Anything but a string is refused.
pub(super) struct Name<'de>(pub(super) Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Name<'de>, D::Error> {
        struct NameVisit;

        impl<'de> Visitor<'de> for NameVisit {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(s)))
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(s.to_string())))
            }
        }

        d.deserialize_str(NameVisit)
    }
}

/// Any JSON value, read and dropped: the same parse as a `Value`'s (strings
/// checked, numbers in range, nesting limited), without building it.
#[derive(Default)]
pub(super) struct Strict;

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(Strict)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Strict;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Strict, E> {
        Ok(Strict)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Strict, E> {
        Ok(Strict)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Strict, E> {
        Ok(Strict)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Strict, E> {
        Ok(Strict)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Strict, E> {
        Ok(Strict)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Strict, E> {
        Ok(Strict)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        while seq.next_element::<Strict>()?.is_some() {}
        Ok(Strict)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        while map.next_key::<Strict>()?.is_some() {
            map.next_value::<Strict>()?;
        }
        Ok(Strict)
    }
}

/// A `content` field: a string, a list of blocks, or null (no blocks).
#[derive(Default)]
pub(super) struct Content(pub(super) Vec<Block>);

/// A tool result's `content`: a string or a list of blocks (null and absent
/// are handled by the `Option` around it).
struct ResultContent(ToolContent);

/// The block types the fast path builds; any other is left to the `Value`
/// path, which keeps it verbatim.
enum BlockType {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
    ToolResult,
    Image,
    Other,
}

impl<'de> Deserialize<'de> for BlockType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BlockType, D::Error> {
        Ok(match &*Name::deserialize(d)?.0 {
            "text" => BlockType::Text,
            "thinking" => BlockType::Thinking,
            "redacted_thinking" => BlockType::RedactedThinking,
            "tool_use" => BlockType::ToolUse,
            "tool_result" => BlockType::ToolResult,
            "image" => BlockType::Image,
            _ => BlockType::Other,
        })
    }
}

fields_struct! {
    /// The fields of a block the known types read.
    struct RawBlock {
        "type" => read ty: Option<BlockType>,
        "text" => read text: Option<String>,
        "thinking" => read thinking: Option<String>,
        "signature" => read signature: Option<String>,
        "data" => read data: Option<String>,
        "id" => read id: Option<String>,
        "name" => read name: Option<String>,
        "input" => read input: Option<Value>,
        "tool_use_id" => read tool_use_id: Option<String>,
        "content" => read content: Option<ResultContent>,
        "is_error" => read is_error: Option<bool>,
        "source" => read source: Option<Obj<RawSource>>,
    }
}

fields_struct! {
    struct RawSource {
        "type" => read kind: Option<String>,
        "media_type" => read media_type: Option<String>,
        "data" => read data: Option<String>,
        "url" => read url: Option<String>,
    }
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
                let Obj(s) = self.source?;
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
        while let Some(Obj(b)) = seq.next_element::<Obj<RawBlock>>()? {
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

/// A token count `tokens::count` accepts: a whole number up to
/// [`MAX_TOKENS`].
#[derive(Clone, Copy)]
pub(super) struct TokenCount(u64);

impl<'de> Deserialize<'de> for TokenCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TokenCount, D::Error> {
        match u64::deserialize(d)? {
            n if n <= MAX_TOKENS => Ok(TokenCount(n)),
            _ => Err(de::Error::custom(FALLBACK)),
        }
    }
}

fields_struct! {
    /// The counts of a usage object, Anthropic's and Codex's names both; an
    /// absent or null count is 0.
    pub(super) struct UsageCounts {
        "input_tokens" => read input_tokens: Option<TokenCount>,
        "output_tokens" => read output_tokens: Option<TokenCount>,
        "cache_read_input_tokens" => read cache_read_input_tokens: Option<TokenCount>,
        "cache_creation_input_tokens" => read cache_creation_input_tokens: Option<TokenCount>,
        "cached_input_tokens" => read cached_input_tokens: Option<TokenCount>,
    }
}

/// A count's value, 0 when absent or null.
fn n(c: Option<TokenCount>) -> u64 {
    c.map_or(0, |c| c.0)
}

/// A usage object whose counts `common::anthropic_usage` accepts.
pub(super) struct CheckedUsage(pub(super) Usage);

impl<'de> Deserialize<'de> for CheckedUsage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CheckedUsage, D::Error> {
        let Obj(c) = Obj::<UsageCounts>::deserialize(d)?;
        Ok(CheckedUsage(Usage {
            input_tokens: n(c.input_tokens),
            output_tokens: n(c.output_tokens),
            cache_read_input_tokens: n(c.cache_read_input_tokens),
            cache_creation_input_tokens: n(c.cache_creation_input_tokens),
        }))
    }
}

/// Test support: every line through an importer's one-pass reader and its
/// general one (`read(importer, line, text, tasks, typed)`), asserting the
/// same outcome or error for each line and the same tasks, messages,
/// metadata and warnings at the end. Returns how many lines the one pass
/// took whole (`taken`).
#[cfg(test)]
pub(super) fn both_ways<I: Default>(
    lines: &[String],
    read: fn(&mut I, u64, &str, &mut super::TaskSet, bool) -> super::LineResult,
    taken: impl Fn(&str) -> bool,
) -> usize {
    use super::TaskSet;
    let mut typed = (I::default(), TaskSet::default());
    let mut general = (I::default(), TaskSet::default());
    for (i, text) in lines.iter().enumerate() {
        let n = i as u64 + 1;
        let a = read(&mut typed.0, n, text, &mut typed.1, true);
        let b = read(&mut general.0, n, text, &mut general.1, false);
        assert_eq!(a, b, "line {n}: {text}");
    }
    let (a, b) = (typed.1.into_tasks(), general.1.into_tasks());
    assert_eq!(a.len(), b.len());
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a.key, b.key);
        assert_eq!(a.meta, b.meta);
        assert_eq!(a.messages, b.messages);
        assert_eq!(a.warnings, b.warnings);
        assert_eq!(a.open_tool_calls(), b.open_tool_calls());
    }
    lines.iter().filter(|t| taken(t)).count()
}
