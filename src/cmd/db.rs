//! Where the store is, and opening one a command only reads.

use std::path::PathBuf;

use anyhow::Result;

use super::errors::hinted;
use crate::store::{DbLocation, Store};

/// The default store: `$XDG_DATA_HOME/compactor/compactor.db`, else the
/// platform's user data directory.
pub fn default_db_path() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        env("LOCALAPPDATA").or_else(|| env("APPDATA"))
    } else if cfg!(target_os = "macos") {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join("Library/Application Support")))
    } else {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join(".local/share")))
    }?;
    Some(base.join("compactor").join("compactor.db"))
}

/// The store at `location`, which must exist: for a command that only reads
/// what was imported (an in-memory store is always there, empty).
pub fn open_existing_store(location: &DbLocation) -> Result<Store> {
    if let DbLocation::File(path) = location
        && !path.exists()
    {
        return Err(hinted(
            format!("no store at {}; import something first", path.display()),
            "`compactor import` creates it; --db PATH or COMPACTOR_DB names another store",
        ));
    }
    Ok(Store::open(location)?)
}

/// [`open_existing_store`] for a command that never writes the store: one
/// that cannot be written (a read-only file or directory) is opened
/// read-only instead of refused.
pub fn open_store_to_read(location: &DbLocation) -> Result<Store> {
    match open_existing_store(location) {
        Err(e)
            if e.downcast_ref::<crate::store::StoreError>()
                .is_some_and(crate::store::StoreError::is_read_only) =>
        {
            Ok(Store::open_read_only(location)?)
        }
        other => other,
    }
}
