//! Helpers more than one command uses.

use std::path::PathBuf;

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
