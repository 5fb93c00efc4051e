//! The logs the hooks and `run` write beside the store they use.

use std::path::{Path, PathBuf};

use crate::store::DbLocation;

/// The hook log's name, beside the store.
pub const LOG_FILE: &str = "hooks.log";

/// The log of the hooks that use the store at `location` (none for `:memory:`).
pub fn log_path(location: &DbLocation) -> Option<PathBuf> {
    beside_store(location, LOG_FILE)
}

/// The file `name` in the store's directory (none for `:memory:`): where the
/// hooks and `run` keep their logs.
pub fn beside_store(location: &DbLocation, name: &str) -> Option<PathBuf> {
    match location {
        DbLocation::File(p) => Some(
            p.parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .join(name),
        ),
        DbLocation::Memory => None,
    }
}
