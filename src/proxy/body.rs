//! A request body read as its top-level fields, each kept as the exact JSON
//! text the client sent, in the client's order: the proxy replaces one field
//! (`messages` or `input`) and writes every other one back byte for byte.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The top-level fields of a JSON object body, in order.
pub(crate) struct Fields<'a> {
    pub fields: Vec<(String, &'a RawValue)>,
}

impl<'a> Fields<'a> {
    /// Read a body that must be one JSON object.
    pub(crate) fn parse(body: &'a [u8]) -> Result<Fields<'a>, String> {
        let text = std::str::from_utf8(body)
            .map_err(|e| format!("the body is not UTF-8 (byte {})", e.valid_up_to()))?;
        let mut de = serde_json::Deserializer::from_str(text);
        let fields = de
            .deserialize_map(FieldsVisitor)
            .map_err(|e| format!("the body is not a JSON object: {e}"))?;
        de.end()
            .map_err(|e| format!("the body has more after its JSON object: {e}"))?;
        Ok(Fields { fields })
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// A field read as a value (`None` when absent or not of that shape).
    pub(crate) fn value<T: serde::Deserialize<'a>>(&self, key: &str) -> Option<T> {
        self.get(key)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = Vec<(String, &'de RawValue)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(String, &'de RawValue)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
            if out.iter().any(|(seen, _)| *seen == k) {
                return Err(serde::de::Error::custom(format!(
                    "the field {k:?} appears twice"
                )));
            }
            out.push((k, v));
        }
        Ok(out)
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
    fn fields_are_kept_in_order_as_sent() {
        let body = br#"{"model":"m", "messages" : [1,2], "system":[{"type":"text","text":"s\u00e9"}],"stream":true}"#;
        let f = Fields::parse(body).unwrap();
        let keys: Vec<&str> = f.fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["model", "messages", "system", "stream"]);
        assert_eq!(f.value::<bool>("stream"), Some(true));
        assert_eq!(
            f.get("system").unwrap().get(),
            r#"[{"type":"text","text":"s\u00e9"}]"#
        );
        assert_eq!(array_items(f.get("messages").unwrap()).unwrap().len(), 2);
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
            let err = Fields::parse(body).err().unwrap();
            assert!(err.contains(want), "{err}");
        }
    }
}
