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

/// Run `f`, retrying while the store is busy, for up to [`BUSY_WAIT`].
pub fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_WAIT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Put the store in WAL mode (a no-op when it already is).
pub fn set_wal(conn: &Connection) -> rusqlite::Result<()> {
    retry_busy(|| {
        conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            .map(|_| ())
    })
}
