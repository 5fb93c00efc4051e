//! What the user can do about an error: the one way an error carries the
//! `hint:` line printed under it. The store's, the importers' and the
//! command line's own errors implement [`Hint`]; `cmd` looks for the first
//! hint in an error's chain.

/// An error that may say what the user can do about it.
pub trait Hint {
    /// The hint, printed on its own line after the error.
    fn hint(&self) -> Option<&str>;
}
