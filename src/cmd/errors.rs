//! Errors in words: the `hint:` line under an error, and which errors are
//! the store's own failing (exit status 3) rather than the user's input.

use crate::model::Hint;
use crate::store::StoreError;
use crate::transcript::LineError;
use crate::transcript::ingest::IngestError;

/// An error with something the user can do about it, printed on its own
/// `hint:` line after the error.
#[derive(Debug)]
pub struct Hinted {
    pub message: String,
    pub hint: String,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Hinted {}

impl Hint for Hinted {
    fn hint(&self) -> Option<&str> {
        Some(&self.hint)
    }
}

/// `message`, with `hint` on its own line.
pub fn hinted(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Hinted {
        message: message.into(),
        hint: hint.into(),
    })
}

/// The first hint anywhere in an error's chain.
pub fn hint_of(e: &anyhow::Error) -> Option<String> {
    e.chain()
        .find_map(|c| as_hint(c)?.hint().map(str::to_string))
}

/// An error of the chain as a [`Hint`], when its type implements it.
fn as_hint<'e>(e: &'e (dyn std::error::Error + 'static)) -> Option<&'e dyn Hint> {
    if let Some(h) = e.downcast_ref::<Hinted>() {
        return Some(h);
    }
    if let Some(h) = e.downcast_ref::<StoreError>() {
        return Some(h);
    }
    if let Some(h) = e.downcast_ref::<IngestError>() {
        return Some(h);
    }
    e.downcast_ref::<LineError>().map(|h| h as &dyn Hint)
}

/// A corrupt store or a failing SQLite: exit status 3, not 2.
pub fn is_internal(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<StoreError>()
            .is_some_and(StoreError::is_internal)
            || c.downcast_ref::<rusqlite::Error>().is_some()
    })
}
