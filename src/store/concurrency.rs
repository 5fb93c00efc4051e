//! Several processes sharing one store file: switching a brand-new file to WAL
//! can meet another process doing the same, and SQLite may then answer
//! SQLITE_BUSY without waiting on the busy handler. Retry those for a while.

use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

/// How long a busy store is waited for before the error is reported.
pub const BUSY_WAIT: Duration = Duration::from_secs(30);

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Whether an error is the store being busy: another process holds the
/// lock it needs.
pub fn is_busy_error(e: &rusqlite::Error) -> bool {
    is_busy(e)
}

/// Run `f`, retrying while the store is busy, for up to `wait`.
pub fn retry_busy<T>(
    wait: Duration,
    mut f: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < wait => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Put the store in WAL mode (a no-op when it already is), waiting up to
/// `wait` for a busy store.
pub fn set_wal(conn: &Connection, wait: Duration) -> rusqlite::Result<()> {
    retry_busy(wait, || {
        conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            .map(|_| ())
    })
}
