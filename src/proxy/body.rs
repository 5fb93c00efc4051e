//! A request body read as its top-level fields, each kept as the exact JSON
//! text the client sent, in the client's order: the proxy replaces one field
//! (`messages` or `input`) and writes every other one back byte for byte.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The top-level fields of a JSON object body, in order, and its
/// conversation field read into its items in the same pass.
pub(crate) struct BodyFields<'a> {
    /// Each field as sent (`None`: the conversation field, read into `conversation`).
    pub fields: Vec<(String, Option<&'a RawValue>)>,
    pub conversation: Option<ConversationField<'a>>,
}

/// A conversation field as sent.
pub(crate) enum ConversationField<'a> {
    /// A list: each item as sent.
    Items(Vec<&'a RawValue>),
    /// A bare string (Responses `input`), as JSON text.
    Text(String),
    /// Neither: what it is, for the error.
    Other(&'static str),
}

impl<'a> BodyFields<'a> {
    /// Read a body that must be one JSON object; `conversation` names the
    /// field whose items are read.
    pub(crate) fn parse(body: &'a [u8], conversation: &str) -> Result<BodyFields<'a>, String> {
        let text = std::str::from_utf8(body)
            .map_err(|e| format!("the body is not UTF-8 (byte {})", e.valid_up_to()))?;
        let mut de = serde_json::Deserializer::from_str(text);
        let fields = de
            .deserialize_map(FieldsVisitor { conversation })
            .map_err(|e| format!("the body is not a JSON object: {e}"))?;
        de.end()
            .map_err(|e| format!("the body has more after its JSON object: {e}"))?;
        Ok(fields)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| *v)
    }

    /// A field read as a value (`None` when absent or not of that shape).
    pub(crate) fn value<T: serde::Deserialize<'a>>(&self, key: &str) -> Option<T> {
        self.get(key)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    }
}

struct FieldsVisitor<'k> {
    conversation: &'k str,
}

impl<'de> Visitor<'de> for FieldsVisitor<'_> {
    type Value = BodyFields<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BodyFields {
            fields: Vec::new(),
            conversation: None,
        };
        while let Some(k) = map.next_key::<String>()? {
            if out.fields.iter().any(|(seen, _)| *seen == k) {
                return Err(serde::de::Error::custom(format!(
                    "the field {k:?} appears twice"
                )));
            }
            if k == self.conversation {
                out.conversation = Some(map.next_value_seed(ConversationSeed)?);
                out.fields.push((k, None));
            } else {
                let v = map.next_value::<&'de RawValue>()?;
                out.fields.push((k, Some(v)));
            }
        }
        Ok(out)
    }
}

struct ConversationSeed;

impl<'de> DeserializeSeed<'de> for ConversationSeed {
    type Value = ConversationField<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(ConversationVisitor)
    }
}

struct ConversationVisitor;

impl<'de> Visitor<'de> for ConversationVisitor {
    type Value = ConversationField<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(it) = seq.next_element::<&'de RawValue>()? {
            items.push(it);
        }
        Ok(ConversationField::Items(items))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(ConversationField::Text(
            serde_json::to_string(s).expect("a string serialises"),
        ))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ConversationField::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ConversationField::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ConversationField::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ConversationField::Other("a number"))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(ConversationField::Other("null"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(ConversationField::Other("an object"))
    }
}

/// The items of a JSON array, each as the exact text sent.
pub(crate) fn array_items(raw: &RawValue) -> Result<Vec<&RawValue>, String> {
    serde_json::from_str::<Vec<&RawValue>>(raw.get()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_kept_in_order_as_sent_and_the_conversation_read_into_items() {
        let body = br#"{"model":"m", "messages" : [1, {"a":2}], "system":[{"type":"text","text":"s\u00e9"}],"stream":true}"#;
        let f = BodyFields::parse(body, "messages").unwrap();
        let keys: Vec<&str> = f.fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["model", "messages", "system", "stream"]);
        assert_eq!(f.value::<bool>("stream"), Some(true));
        assert_eq!(
            f.get("system").unwrap().get(),
            r#"[{"type":"text","text":"s\u00e9"}]"#
        );
        assert!(f.get("messages").is_none());
        let Some(ConversationField::Items(items)) = &f.conversation else {
            panic!("a list")
        };
        let texts: Vec<&str> = items.iter().map(|i| i.get()).collect();
        assert_eq!(texts, ["1", r#"{"a":2}"#]);
        let f = BodyFields::parse(br#"{"input":"hi \"you\""}"#, "input").unwrap();
        assert!(
            matches!(f.conversation, Some(ConversationField::Text(t)) if t == r#""hi \"you\"""#)
        );
        let f = BodyFields::parse(br#"{"messages":{"x":[1]}}"#, "messages").unwrap();
        assert!(matches!(
            f.conversation,
            Some(ConversationField::Other("an object"))
        ));
    }

    #[test]
    fn a_body_that_is_not_one_object_is_refused_with_a_reason() {
        for (body, want) in [
            (&b"[1]"[..], "not a JSON object"),
            (b"{\"a\":1} x", "more after"),
            (b"{\"a\":1,\"a\":2}", "appears twice"),
            (b"{\"a\":", "not a JSON object"),
            (b"\xff", "not UTF-8"),
        ] {
            let err = BodyFields::parse(body, "messages").err().unwrap();
            assert!(err.contains(want), "{err}");
        }
    }
}
