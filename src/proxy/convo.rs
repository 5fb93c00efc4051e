//! A request's conversation, API-neutral: its items (Anthropic messages or
//! Responses input items) as the exact text sent, each normalised into the
//! record's rows by the importers' own normalisation, and the conversation
//! as a sequence of entries (one per content block, with its side) that is
//! compared with the record to find what is new.

use std::ops::Range;

use serde_json::{Map, Value};

use crate::model::digest::Digest;
use crate::model::{Block, Kind, Message, Role};

/// Which side of the conversation an entry is on. `System` entries are the
/// instructions a client sends among its messages (Claude Code's `system`
/// messages, Codex's `developer` ones): recorded, never part of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum EntrySide {
    User,
    Assistant,
    System,
}

impl EntrySide {
    pub(crate) fn of(m: &Message) -> EntrySide {
        match (m.role, m.kind) {
            (Role::Assistant, _) => EntrySide::Assistant,
            (Role::Meta, _) => EntrySide::System,
            (Role::User, _) => EntrySide::User,
        }
    }

    fn tag(self) -> &'static str {
        match self {
            EntrySide::User => "u",
            EntrySide::Assistant => "a",
            EntrySide::System => "s",
        }
    }
}

/// The identity of one entry: its side and its block's canonical JSON
/// (hashed as it is written: a block of any size costs no copy of it).
pub(crate) fn entry_digest(side: EntrySide, block: &Block) -> Digest {
    let mut h = blake3::Hasher::new();
    h.update(side.tag().as_bytes());
    h.update(b"\0");
    crate::view::hash_json(&mut h, block);
    Digest::of_hash(&h.finalize())
}

/// Whether a row of the record is part of the compared conversation (the
/// rows the proxy writes: conversation, and system rows among them).
pub(crate) fn compared(m: &Message) -> bool {
    m.kind.reaches_view() || m.kind == Kind::System
}

/// The system row (instructions) holding `blocks`; none when there are none.
pub(crate) fn system_rows(blocks: Vec<Block>) -> Vec<Message> {
    if blocks.is_empty() {
        Vec::new()
    } else {
        vec![Message::new(Role::Meta, Kind::System, blocks, 0)]
    }
}

/// One item of a request's conversation field (`what`, e.g. `messages[3]`)
/// read as the JSON object it must be; `expected` says what it should be.
pub(crate) fn item_object(
    raw: &str,
    what: &str,
    expected: &str,
) -> Result<Map<String, Value>, BadRequest> {
    // A large text is read into one buffer of its size.
    match crate::model::value_from_json(raw) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(other) => Err(BadRequest(format!(
            "{what} is {}; expected {expected}",
            kind_of(&other)
        ))),
        Err(e) => Err(BadRequest(format!("{what}: {e}"))),
    }
}

/// What a JSON value is, in words for an error.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// One item of a request: where its text is in the body.
#[derive(Debug, Clone)]
pub(crate) struct ItemSpan {
    pub span: Range<usize>,
}

impl ItemSpan {
    pub(crate) fn of(body: &str, raw: &str) -> ItemSpan {
        let start = raw.as_ptr() as usize - body.as_ptr() as usize;
        ItemSpan {
            span: start..start + raw.len(),
        }
    }
}

/// A bad request body, in words for the client's 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_its_side_and_block() {
        let b = Block::Text { text: "hi".into() };
        assert_eq!(
            entry_digest(EntrySide::User, &b),
            entry_digest(EntrySide::User, &b)
        );
        assert_ne!(
            entry_digest(EntrySide::User, &b),
            entry_digest(EntrySide::Assistant, &b)
        );
        assert_ne!(
            entry_digest(EntrySide::User, &b),
            entry_digest(EntrySide::User, &Block::Text { text: "ho".into() })
        );
        // Hashed as it is written: the digest of the side's tag, a NUL and
        // the block's JSON, as a records' entries were always digested.
        let big = Block::Text {
            text: "line \"quoted\"\n".repeat(5000),
        };
        let json = serde_json::to_string(&big).unwrap();
        assert_eq!(
            entry_digest(EntrySide::Assistant, &big),
            Digest::of(&format!("a\0{json}"))
        );
    }
}
