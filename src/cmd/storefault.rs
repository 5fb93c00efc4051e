//! Storage faults in words: an SQLite error that means the store file itself
//! is unusable (not a database, corrupt, read-only, unopenable, busy for too
//! long) gets a sentence naming the store and what to do. The command's
//! write transaction has rolled back by then, so nothing is half-written.

use rusqlite::ErrorCode;

use super::{Cli, Command};

fn code_of(e: &anyhow::Error) -> Option<ErrorCode> {
    e.chain().find_map(|c| {
        c.downcast_ref::<rusqlite::Error>()
            .and_then(rusqlite::Error::sqlite_error_code)
            .or_else(|| c.downcast_ref::<rusqlite::ffi::Error>().map(|f| f.code))
    })
}

/// `e` with a first line saying what is wrong with the store, when it is a
/// storage fault; else `e` unchanged.
pub fn explain(cli: &Cli, e: anyhow::Error) -> anyhow::Error {
    // Commands that use no store of the user's (check's stores are temporary).
    if matches!(
        cli.command,
        Command::Check(_) | Command::Export(_) | Command::Completions(_) | Command::Man(_)
    ) {
        return e;
    }
    let Some(code) = code_of(&e) else {
        return e;
    };
    let store = match super::db_location(cli) {
        Ok(l) => format!("the store {}", l.display()),
        Err(_) => "the store".to_string(),
    };
    let msg = match code {
        ErrorCode::NotADatabase => format!(
            "{store} is not an SQLite database (or is damaged beyond reading); compactor left it untouched: check --db"
        ),
        ErrorCode::DatabaseCorrupt => format!(
            "{store} is corrupt; nothing was written: restore it from a backup (PRAGMA integrity_check says where)"
        ),
        ErrorCode::ReadOnly => format!(
            "{store} is read-only (the file, its directory, or its -wal/-shm files); nothing was written: make them writable or use another --db"
        ),
        ErrorCode::CannotOpen | ErrorCode::PermissionDenied => format!(
            "cannot open {store}: check that it and its directory are readable and writable"
        ),
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => format!(
            "{store} stayed busy (another process is writing to it); nothing was written: try again"
        ),
        _ => return e,
    };
    e.context(msg)
}

/// A storage fault the user can fix (a read-only file, a file that is not a
/// store, a busy store): an input error, not an internal one. A corrupt
/// store stays internal (exit 3).
pub fn is_user_fixable(e: &anyhow::Error) -> bool {
    matches!(
        code_of(e),
        Some(
            ErrorCode::NotADatabase
                | ErrorCode::ReadOnly
                | ErrorCode::CannotOpen
                | ErrorCode::PermissionDenied
                | ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::DiskFull
        )
    )
}
