//! Codex rollout objects read in one pass (see `super`): a line, its payload
//! or a legacy bare item, each an [`Object`], which the importer reads
//! through the same `codex::Rollout` trait as a `serde_json` map.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{FALLBACK, Fields, Name, Obj, Strict, UsageCounts, fields, n, present, read};
use crate::model::{Block, ToolContent};
use crate::transcript::LineError;
use crate::transcript::codex::{
    Envelope, ItemKind, Key, Rollout, TokenInfo, codex_usage, context_window, join_texts,
    list_texts, text_output,
};

/// A whole line; its payload is an [`Object`] too.
pub(in crate::transcript) type Line = Obj<Object<Obj<Object<Strict>>>>;

/// A rollout object: every field that any line type reads, absent where
/// this one has none. `P` is how its `payload` is read.
pub(in crate::transcript) struct Object<P> {
    /// The fields read as values, by [`Key`], each once (a few: a list
    /// keeps the object small to move, where an array of every key did not).
    values: Vec<(Key, Value)>,
    payload: Option<P>,
    content: Option<Items>,
    output: Option<Output>,
    info: Option<Obj<Info>>,
}

impl<P> Default for Object<P> {
    fn default() -> Self {
        Object {
            values: Vec::new(),
            payload: None,
            content: None,
            output: None,
            info: None,
        }
    }
}

impl<'de, P: Deserialize<'de>> Fields<'de> for Object<P> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            // A payload that is null or not an object fails `P`: the
            // general reader words that error.
            "payload" => present(map, &mut self.payload),
            "content" => read(map, &mut self.content),
            "output" => read(map, &mut self.output),
            "info" => read(map, &mut self.info),
            _ => match Key::of(key) {
                Some(k) => {
                    let v = map.next_value()?;
                    match self.values.iter_mut().find(|(at, _)| *at == k) {
                        Some((_, old)) => *old = v,
                        None => self.values.push((k, v)),
                    }
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }
}

impl<P> Rollout for Object<P> {
    fn value(&self, key: Key) -> Option<&Value> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    fn take(&mut self, key: Key) -> Option<Value> {
        let i = self.values.iter().position(|(k, _)| *k == key)?;
        Some(self.values.swap_remove(i).1)
    }

    fn string(&mut self, key: Key) -> Option<String> {
        let i = self
            .values
            .iter()
            .position(|(k, v)| *k == key && v.is_string())?;
        match self.values.swap_remove(i).1 {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    fn content(&mut self, _: u64) -> Result<Vec<Block>, LineError> {
        Ok(match self.content.take() {
            None => Vec::new(),
            Some(Items::Text(text)) => vec![Block::Text { text }],
            Some(Items::List(items)) => items.into_iter().map(ContentItem::block).collect(),
        })
    }

    fn reasoning(&self) -> String {
        let content = match &self.content {
            Some(Items::List(items)) => items.as_slice(),
            _ => &[],
        };
        join_texts(
            list_texts(self.value(Key::Summary))
                .chain(content.iter().filter_map(|it| it.text.as_deref())),
        )
    }

    fn output(&mut self, _: u64) -> Result<(ToolContent, bool), LineError> {
        Ok(self
            .output
            .take()
            .map_or((ToolContent::Text(String::new()), false), Output::read))
    }

    fn token_info(&mut self, _: u64) -> Option<TokenInfo> {
        let Obj(info) = self.info.take()?;
        Some(TokenInfo {
            total: info.total,
            last: info.last.map(|Obj(c)| {
                Ok(codex_usage(
                    n(c.input_tokens),
                    n(c.cached_input_tokens),
                    n(c.output_tokens),
                ))
            }),
            window: context_window(info.window.as_ref()),
        })
    }
}

impl Envelope for Object<Obj<Object<Strict>>> {
    type Payload = Object<Strict>;

    fn payload(&mut self) -> Option<Result<Object<Strict>, &'static str>> {
        self.payload.take().map(|Obj(p)| Ok(p))
    }
}

/// A `content` field: a string or a list of content items (null is the
/// `Option` around it; anything else is left to the general reader).
enum Items {
    Text(String),
    List(Vec<ContentItem>),
}

impl<'de> Deserialize<'de> for Items {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Items, D::Error> {
        d.deserialize_any(ItemsOr {
            items: |items| items,
            nested: None,
        })
    }
}

/// Reads [`Items`] and, where `nested` is given, a nested output's object;
/// `T` is what each makes.
struct ItemsOr<T> {
    items: fn(Items) -> T,
    nested: Option<fn(Nested) -> T>,
}

impl<'de, T> Visitor<'de> for ItemsOr<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string or a list of content items")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        Ok((self.items)(Items::Text(s.to_string())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<T, E> {
        Ok((self.items)(Items::Text(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        items(seq).map(|list| (self.items)(Items::List(list)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        match self.nested {
            Some(nested) => fields(map).map(nested),
            None => Err(de::Error::custom(FALLBACK)),
        }
    }
}

/// A list of content items, each an object of a type `ItemKind` knows (any
/// other is kept verbatim by the general reader).
fn items<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Vec<ContentItem>, A::Error> {
    let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
    while let Some(Obj(item)) = seq.next_element::<Obj<RawItem>>()? {
        let kind = item.kind.ok_or_else(|| de::Error::custom(FALLBACK))?;
        items.push(ContentItem {
            kind,
            text: item.text,
            image_url: item.image_url,
        });
    }
    Ok(items)
}

fields_struct! {
    /// A content item as read.
    struct RawItem {
        "type" => read kind: Option<ItemKind>,
        "text" => read text: Option<String>,
        "image_url" => read image_url: Option<String>,
    }
}

/// A known type of content item; any other fails the one pass (the general
/// reader keeps the item verbatim).
impl<'de> Deserialize<'de> for ItemKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ItemKind, D::Error> {
        ItemKind::of(&Name::deserialize(d)?.0).ok_or_else(|| de::Error::custom(FALLBACK))
    }
}

/// A content item of a known kind.
struct ContentItem {
    kind: ItemKind,
    text: Option<String>,
    image_url: Option<String>,
}

impl ContentItem {
    fn block(self) -> Block {
        self.kind.block(self.text, self.image_url.as_deref())
    }
}

/// A tool's `output`: text or a list of content items, or (some builds) an
/// object `{content, success}` (null is the `Option` around it).
enum Output {
    Items(Items),
    Nested {
        content: Option<Box<Output>>,
        failed: bool,
    },
}

impl Output {
    /// The output's content and whether it failed, as `codex::tool_output`
    /// reads it.
    fn read(self) -> (ToolContent, bool) {
        match self {
            Output::Items(Items::Text(s)) => text_output(s),
            Output::Items(Items::List(items)) => (
                ToolContent::Blocks(items.into_iter().map(ContentItem::block).collect()),
                false,
            ),
            Output::Nested { content, failed } => (
                content.map_or(ToolContent::Text(String::new()), |c| c.read().0),
                failed,
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Output {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Output, D::Error> {
        d.deserialize_any(ItemsOr {
            items: Output::Items,
            nested: Some(|n| Output::Nested {
                content: n.content,
                failed: n.success.as_ref().and_then(Value::as_bool) == Some(false),
            }),
        })
    }
}

fields_struct! {
    /// The fields of a nested output.
    struct Nested {
        "content" => read content: Option<Box<Output>>,
        "success" => read success: Option<Value>,
    }
}

fields_struct! {
    /// A `token_count` event's `info`.
    struct Info {
        /// Null included: it is compared with the last event's as a value.
        "total_token_usage" => present total: Option<Value>,
        /// Null reads as absent; anything but an object or null is left to
        /// the general reader.
        "last_token_usage" => read last: Option<Obj<UsageCounts>>,
        /// Kept as a value: `codex::context_window` reads it, either way.
        "model_context_window" => read window: Option<Value>,
    }
}
