//! Token counts from a transcript's usage objects, checked: a count is a
//! whole number from 0 to [`MAX_TOKENS`]. An absent or null field counts 0.
//! A negative, fractional, non-numeric or absurdly large count is a located
//! error rather than a silent 0 or an overflow in the sums made from it.

use serde_json::{Map, Value};

use super::LineError;

/// 2^40 tokens: far beyond any context window or session, and small enough
/// that sums over millions of rows cannot overflow a u64.
pub(super) const MAX_TOKENS: u64 = 1 << 40;

/// The token count `obj[key]` on line `line`.
pub(super) fn count(line: u64, obj: &Map<String, Value>, key: &str) -> Result<u64, LineError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v <= MAX_TOKENS) => {
            Ok(n.as_u64().unwrap_or(0))
        }
        Some(v) => {
            let mut shown = v.to_string();
            if shown.len() > 40 {
                shown = format!("{}…", shown.chars().take(40).collect::<String>());
            }
            Err(LineError::new(
                line,
                1,
                format!(
                    "usage field \"{key}\" is {shown}; expected a token count (a whole number from 0 to {MAX_TOKENS})"
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_whole_numbers_in_range() {
        let obj: Map<String, Value> = serde_json::from_str(
            r#"{"a": 5, "b": null, "neg": -1, "frac": 1.5, "str": "7", "huge": 18446744073709551615, "max": 1099511627776}"#,
        )
        .unwrap();
        assert_eq!(count(3, &obj, "a").unwrap(), 5);
        assert_eq!(count(3, &obj, "b").unwrap(), 0);
        assert_eq!(count(3, &obj, "absent").unwrap(), 0);
        assert_eq!(count(3, &obj, "max").unwrap(), MAX_TOKENS);
        for k in ["neg", "frac", "str", "huge"] {
            let e = count(3, &obj, k).unwrap_err();
            assert_eq!(e.line, 3);
            assert!(
                e.message.contains(&format!("usage field \"{k}\" is ")),
                "{}",
                e.message
            );
        }
    }
}
