//! JSON that keeps its key order: a client's settings file is edited, never
//! re-sorted. `serde_json::Map` sorts its keys in this crate (the canonical
//! view bytes rely on it), so the settings merge works on this small tree
//! instead: objects are lists of (key, value) pairs in file order, duplicates
//! included, and the file's indentation is kept when it is written back.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// One JSON value, objects in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value under `key` of an object (the first, if a key repeats).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(pairs) => pairs.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The JSON type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    /// Parse JSON text; the error carries serde_json's line and column.
    pub fn parse(text: &str) -> Result<Json, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The value as text: pretty, with `indent` per level (the file's own),
    /// and a trailing newline when `newline`.
    pub fn to_text(&self, indent: &str, newline: bool) -> String {
        let mut out = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
        self.serialize(&mut ser).expect("a tree always serialises");
        let mut text = String::from_utf8(out).expect("serde_json writes UTF-8");
        if newline {
            text.push('\n');
        }
        text
    }
}

/// How a JSON file is laid out, so that writing it back changes no more than
/// the edit: its indentation unit and whether it ends with a newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub indent: String,
    pub newline: bool,
}

impl Layout {
    /// The layout of `text`: the first indented line's leading whitespace
    /// (two spaces when no line is indented, as Claude Code writes it).
    pub fn of(text: &str) -> Layout {
        let indent = text
            .lines()
            .skip(1)
            .map(|l| {
                let n = l.len() - l.trim_start_matches([' ', '\t']).len();
                &l[..n]
            })
            .find(|w| !w.is_empty())
            .unwrap_or("  ")
            .to_string();
        Layout {
            indent,
            newline: text.is_empty() || text.ends_with('\n'),
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(t) => s.serialize_str(t),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Json::Object(pairs) => {
                let mut map = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut pairs = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            pairs.push((k, v));
        }
        Ok(Json::Object(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_file_order_and_the_text_comes_back_the_same() {
        let text = "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"b\": [true, null],\n    \"a\": \"x\"\n  }\n}\n";
        let v = Json::parse(text).unwrap();
        let Json::Object(pairs) = &v else {
            panic!("an object")
        };
        assert_eq!(pairs[0].0, "zeta");
        assert_eq!(pairs[1].0, "alpha");
        let layout = Layout::of(text);
        assert_eq!(layout.indent, "  ");
        assert!(layout.newline);
        // serde_json's pretty printer puts each array item on its own line.
        let back = v.to_text(&layout.indent, layout.newline);
        assert_eq!(Json::parse(&back).unwrap(), v);
        assert!(back.find("zeta").unwrap() < back.find("alpha").unwrap());
    }

    #[test]
    fn the_layout_is_the_files_own() {
        assert_eq!(Layout::of("{\n\t\"a\": 1\n}").indent, "\t");
        assert!(!Layout::of("{\n\t\"a\": 1\n}").newline);
        assert_eq!(Layout::of("{\n    \"a\": 1\n}\n").indent, "    ");
        assert_eq!(Layout::of("{\"a\": 1}").indent, "  ");
    }

    #[test]
    fn a_repeated_key_is_kept_twice() {
        let v = Json::parse(r#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!(
            v,
            Json::Object(vec![
                ("a".into(), Json::Number(1.into())),
                ("a".into(), Json::Number(2.into()))
            ])
        );
    }
}
