//! The SQLite store: the append-only raw record (`task_message`), the
//! content-addressed compaction store (`task_compaction_snapshot`), the eager
//! tool store (`task_tool_compaction`) and import bookkeeping.
//!
//! The schema is versioned with `PRAGMA user_version`; numbered migrations are
//! embedded in the binary and applied on open. A file written by a newer
//! compactor is refused rather than guessed at.

mod client_compaction;
mod concurrency;
mod proxy;
mod raw;
mod runs;
pub mod search;
mod snapshot;
mod summary_cache;
mod tools;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rusqlite::Connection;

pub(crate) use client_compaction::{ClientCompaction, CompactionHalf};
pub(crate) use proxy::{
    ProxyActivity, ProxyCall, ProxyConversation, ProxyResponse, ProxySuperseded,
};
pub use raw::TaskMeta;
pub use raw::decode_content;
pub(crate) use raw::{
    AppendOutcome, EncodedRow, PIPELINE_BATCH, PIPELINE_DEPTH, RowEncoder, RowHead, StoredMessage,
    TaskInfo, stats_of,
};
pub(crate) use runs::{RunInfo, RunStep};
pub(crate) use snapshot::Forgotten;
pub(crate) use summary_cache::{CachedSummary, SummaryCache};

/// A task's import-time tool forms, by tool call id.
pub type ToolFormMap = HashMap<String, crate::engine::toolrules::ToolForm>;

/// Migrations in order; migration i brings the store to version i+1.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_runs.sql"),
    include_str!("migrations/0003_replay_progress.sql"),
    include_str!("migrations/0004_summary_cache.sql"),
    include_str!("migrations/0005_profiles.sql"),
    include_str!("migrations/0006_source_stat.sql"),
    include_str!("migrations/0007_compressed_content.sql"),
    include_str!("migrations/0008_context_window.sql"),
    include_str!("migrations/0009_carried_history.sql"),
    include_str!("migrations/0010_client_compaction.sql"),
    include_str!("migrations/0011_proxy.sql"),
    // Versions 12 and 13 were kept for changes that merged later under 14
    // and 15; stores made meanwhile are at 14, so the two stay empty.
    "",
    "",
    include_str!("migrations/0014_proxy_times.sql"),
    include_str!("migrations/0015_proxy_superseded.sql"),
    include_str!("migrations/0016_runs_per_task.sql"),
    include_str!("migrations/0017_search.sql"),
    include_str!("migrations/0018_search_stop_words.sql"),
    include_str!("migrations/0019_search_tool_bounds.sql"),
    include_str!("migrations/0020_search_large_rows.sql"),
];

/// The page size of a store this build creates (bytes). An import writes
/// every page twice (to the WAL, then to the database at the checkpoint,
/// which runs on one core after the file's commit), and each WAL frame takes
/// two `pwrite`s and its copy a `pread` and a `pwrite`: 32 KB pages make half
/// the calls of 16 KB ones for the same bytes. 64 KB pages made a quarter,
/// but cost the small commits of `compact --in-place` 12% and the import's
/// page cache more misses at 1 GB (measured in the history of BENCHMARKS.md, "Import, preflight and replay"). A
/// store keeps the page size it was created with.
pub const NEW_STORE_PAGE_SIZE: u32 = 32_768;
/// The page cache of an importing connection, in KiB
/// ([`Store::grow_cache_for_import`]): a bound on the memory it adds to an
/// import, whatever the file's size.
pub const IMPORT_CACHE_KIB: i64 = 8_192;

/// The store format version this build reads and writes.
pub const STORE_VERSION: u32 = MIGRATIONS.len() as u32;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the store {path} has format version {found}, newer than this compactor understands (version {supported})"
    )]
    TooNew {
        path: String,
        found: u32,
        supported: u32,
    },
    #[error("cannot open the store {path}")]
    Open {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot create the store's directory {path}")]
    CreateDir {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the store's directory {path} does not exist; create it or use another --db (only the default store's directory is created on first use)"
    )]
    NoDir { path: String },
    #[error(
        "the store {path} is read-only and at format version {found}; this compactor reads version {supported}, and upgrading it writes it"
    )]
    ReadOnlyOld {
        path: String,
        found: u32,
        supported: u32,
    },
    #[error(
        "the store {path} is read-only, and its -wal file holds changes the database file lacks: SQLite reads them only through an -shm index it cannot create there"
    )]
    UnreadableWal { path: String },
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error("corrupt entry in the store: {0}")]
    Corrupt(String),
    #[error(
        "task {task}: the transcript no longer starts with what was imported before (row {row} differs) and the record is append-only"
    )]
    Diverged { task: String, row: u64 },
}

impl crate::model::Hint for StoreError {
    fn hint(&self) -> Option<&str> {
        match self {
            StoreError::TooNew { .. } => Some("upgrade compactor or use another --db"),
            StoreError::Diverged { .. } => Some("import the changed file under another --task"),
            StoreError::ReadOnlyOld { .. } | StoreError::UnreadableWal { .. } => Some(
                "open it once where it can be written (any command), or copy the file and its -wal somewhere writable and pass --db",
            ),
            _ => None,
        }
    }
}

impl StoreError {
    /// Not the user's input but the store itself (or SQLite) failing.
    pub fn is_internal(&self) -> bool {
        matches!(self, StoreError::Sql(_) | StoreError::Corrupt(_))
    }

    /// The store could not be opened for writing because it is read-only:
    /// the file, its directory, or its `-wal`/`-shm` files.
    pub fn is_read_only(&self) -> bool {
        use rusqlite::ErrorCode;
        match self {
            StoreError::Sql(e) | StoreError::Open { source: e, .. } => matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied)
            ),
            _ => false,
        }
    }

    /// The store stayed busy: another process held the lock it needed for
    /// longer than the wait allowed.
    pub fn is_busy(&self) -> bool {
        match self {
            StoreError::Sql(e) | StoreError::Open { source: e, .. } => {
                concurrency::is_busy_error(e)
            }
            _ => false,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Where the store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbLocation {
    Memory,
    File(PathBuf),
}

impl DbLocation {
    pub fn parse(s: &str) -> DbLocation {
        if s == ":memory:" {
            DbLocation::Memory
        } else {
            DbLocation::File(PathBuf::from(s))
        }
    }

    pub fn display(&self) -> String {
        match self {
            DbLocation::Memory => ":memory:".to_string(),
            DbLocation::File(p) => p.display().to_string(),
        }
    }
}

/// `path` as an SQLite URI that opens it immutable (no locks, no WAL
/// index): its `%`, `?` and `#` escaped, as a URI's path needs.
fn immutable_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Create the directory of the default store (first use). A --db path's
/// directory is never created: see [`StoreError::NoDir`].
pub fn create_default_dir(location: &DbLocation) -> Result<()> {
    if let DbLocation::File(p) = location
        && let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.display().to_string(),
            source,
        })?;
    }
    Ok(())
}

pub struct Store {
    conn: Connection,
    location: DbLocation,
    /// Unique among the stores this process opened: a cache of what one
    /// connection read is never used with another.
    instance: u64,
    /// A scratch store's task and the tool forms it was handed (see
    /// [`Store::scratch_copy`]).
    lent_forms: Option<(String, Arc<ToolFormMap>)>,
    /// Whether its transactions keep the search index (a scratch store's
    /// do not: a what-if run is searched by nobody).
    search: bool,
    /// The batch open on the connection, if any (see [`Store::begin_batch`]).
    batch: Option<Batch>,
}

/// One transaction over several [`Store::transaction`]s, each a savepoint
/// of it, committed at once ([`Store::begin_batch`]).
#[derive(Default)]
struct Batch {
    /// The search index's entries of the batch's savepoints released so
    /// far, added when the batch commits.
    entries: Vec<search::Deferred>,
}

/// The next [`Store::instance`] to hand out.
static NEXT_INSTANCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Store {
    /// Open (creating if needed) and migrate the store.
    pub fn open(location: &DbLocation) -> Result<Store> {
        Store::open_waiting(location, concurrency::BUSY_WAIT)
    }

    /// As [`Store::open`], waiting at most `busy_wait` whenever the store is
    /// busy (another process holds the lock a step needs), here and in
    /// every later transaction (see [`Store::set_busy_wait`]).
    pub fn open_waiting(location: &DbLocation, busy_wait: std::time::Duration) -> Result<Store> {
        let path_str = location.display();
        let conn = match location {
            DbLocation::Memory => Connection::open_in_memory(),
            DbLocation::File(p) => {
                // Only the default store's directory is created (by the caller,
                // `create_default_dir`): a --db naming a missing directory is
                // most likely a typo, which must not become a new empty store.
                if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty())
                    && !dir.is_dir()
                {
                    return Err(StoreError::NoDir {
                        path: dir.display().to_string(),
                    });
                }
                Connection::open(p)
            }
        }
        .map_err(|source| StoreError::Open {
            path: path_str.clone(),
            source,
        })?;
        Store::with_connection(conn, location, busy_wait)
    }

    /// The store file at `location` opened read-only, for a command that
    /// only reads it where it cannot be written (a read-only file or
    /// directory). Nothing is written: no WAL switch, no migration (a store
    /// older than this build is refused, as upgrading it writes it). A store
    /// in WAL mode needs its `-shm` index beside it; where that cannot be
    /// made (a read-only directory) and no `-wal` file holds changes the
    /// database file lacks, the file is read as immutable.
    pub fn open_read_only(location: &DbLocation) -> Result<Store> {
        use rusqlite::OpenFlags;
        let DbLocation::File(path) = location else {
            return Store::open(location);
        };
        let path_str = location.display();
        let open_err = |source| StoreError::Open {
            path: path_str.clone(),
            source,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let readable = |conn: &Connection| {
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
        };
        let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        let conn = match readable(&conn) {
            Ok(()) => conn,
            // No -shm index, and none can be made here (SQLite says
            // READONLY_DIRECTORY, CANTINIT or CANTOPEN).
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
                ) =>
            {
                drop(conn);
                let mut wal = path.as_os_str().to_os_string();
                wal.push("-wal");
                if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                    return Err(StoreError::UnreadableWal {
                        path: path_str.clone(),
                    });
                }
                let conn = Connection::open_with_flags(
                    immutable_uri(path),
                    flags | OpenFlags::SQLITE_OPEN_URI,
                )
                .map_err(open_err)?;
                readable(&conn).map_err(open_err)?;
                conn
            }
            Err(e) => return Err(open_err(e)),
        };
        let store = Store {
            conn,
            location: location.clone(),
            instance: NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            lent_forms: None,
            // Nothing is written through it.
            search: false,
            batch: None,
        };
        let found = store.version()?;
        if found > STORE_VERSION {
            return Err(StoreError::TooNew {
                path: path_str,
                found,
                supported: STORE_VERSION,
            });
        }
        if found < STORE_VERSION {
            return Err(StoreError::ReadOnlyOld {
                path: path_str,
                found,
                supported: STORE_VERSION,
            });
        }
        Ok(store)
    }

    /// A private store in SQLite's temporary database (an empty file name):
    /// like an in-memory one it has no second connection and is gone when
    /// closed, but what outgrows its page cache spills to a temporary file
    /// (`temp_store = FILE`), so the state a long what-if run writes (each
    /// floor summary extends the last: over a GB at 100K calls) is not held
    /// in memory.
    fn open_temp() -> Result<Store> {
        let location = DbLocation::Memory;
        let conn = Connection::open("").map_err(|source| StoreError::Open {
            path: "a temporary store".to_string(),
            source,
        })?;
        conn.pragma_update(None, "temp_store", "FILE")?;
        let mut store = Store::with_connection(conn, &location, concurrency::BUSY_WAIT)?;
        store.search = false;
        Ok(store)
    }

    /// The store over an open connection to `location`, migrated.
    fn with_connection(
        conn: Connection,
        location: &DbLocation,
        busy_wait: std::time::Duration,
    ) -> Result<Store> {
        let path_str = location.display();
        conn.busy_timeout(busy_wait)?;
        if matches!(location, DbLocation::File(_)) {
            // A brand-new file gets larger pages: transcript rows run to
            // kilobytes, and 4 KB pages spread one over a chain of overflow
            // pages (more pages to write, and a larger file). A no-op on a
            // store that already has pages: its page size stays.
            conn.pragma_update(None, "page_size", NEW_STORE_PAGE_SIZE)?;
            // WAL: readers never block the writer; NORMAL sync is durable across
            // process crashes, which is what interruption tests exercise.
            concurrency::set_wal(&conn, busy_wait).map_err(|source| StoreError::Open {
                path: path_str.clone(),
                source,
            })?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
        }
        let mut store = Store {
            conn,
            location: location.clone(),
            instance: NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            lent_forms: None,
            search: true,
            batch: None,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Wait at most `wait` whenever the store is busy from now on.
    pub fn set_busy_wait(&self, wait: std::time::Duration) -> Result<()> {
        self.conn.busy_timeout(wait)?;
        Ok(())
    }

    pub fn open_memory() -> Result<Store> {
        Store::open(&DbLocation::Memory)
    }

    pub fn version(&self) -> Result<u32> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))?)
    }

    fn migrate(&mut self) -> Result<()> {
        let too_new = |found| StoreError::TooNew {
            path: self.location.display(),
            found,
            supported: STORE_VERSION,
        };
        let found = self.version()?;
        if found > STORE_VERSION {
            return Err(too_new(found));
        }
        if found == STORE_VERSION {
            return Ok(());
        }
        // Several processes may open a brand-new store at once: take the write
        // lock first, then re-read the version under it, so exactly one of them
        // migrates and the others see the result.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let found = tx.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))?;
        if found > STORE_VERSION {
            return Err(too_new(found));
        }
        for sql in MIGRATIONS.iter().skip(found as usize) {
            tx.execute_batch(sql)?;
        }
        tx.pragma_update(None, "user_version", STORE_VERSION)?;
        tx.commit()?;
        Ok(())
    }

    /// Run `f` in one transaction: all of it is stored, or none of it.
    /// In a batch ([`Store::begin_batch`]) it is a savepoint of the batch's
    /// transaction: all of it is kept, or none, and it is stored when the
    /// batch commits.
    pub fn transaction<T, E>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        if let Some(batch) = &mut self.batch {
            // Its index entries wait for the batch's end: FTS5 writes its
            // pending terms out at each savepoint of a transaction it is
            // part of, a segment a file, which the batch is there to save.
            let deferred = std::cell::RefCell::new(Vec::new());
            let savepoint = self.conn.savepoint().map_err(StoreError::from)?;
            let out = f(&Tx {
                tx: &savepoint,
                search: self.search,
                deferred: Some(&deferred),
            })?;
            savepoint.commit().map_err(StoreError::from)?;
            batch.entries.append(&mut deferred.into_inner());
            return Ok(out);
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let out = f(&Tx {
            tx: &tx,
            search: self.search,
            deferred: None,
        })?;
        tx.commit().map_err(StoreError::from)?;
        Ok(out)
    }

    /// Open a batch: the [`Store::transaction`]s that follow are savepoints
    /// of one transaction, stored together by [`Store::commit_batch`] (or
    /// not at all: a batch not committed is rolled back when the store is
    /// closed, as a crash leaves it). An import of many small files commits
    /// once a batch of them instead of once a file: each commit writes the
    /// pages the files share again, and the search index a segment of its
    /// own (BENCHMARKS.md, "Search").
    pub fn begin_batch(&mut self) -> Result<()> {
        if self.batch.is_none() {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.batch = Some(Batch::default());
        }
        Ok(())
    }

    /// Roll the open batch back, if any: what a command that stopped on an
    /// error leaves (nothing of the batch is stored).
    pub fn rollback_batch(&mut self) -> Result<()> {
        if self.batch.take().is_some() && !self.conn.is_autocommit() {
            self.conn.execute_batch("ROLLBACK")?;
        }
        Ok(())
    }

    /// Add the batch's search index entries and commit it; on an error,
    /// roll it back whole. No-op without a batch.
    pub fn commit_batch(&mut self) -> Result<()> {
        let Some(batch) = self.batch.take() else {
            return Ok(());
        };
        let stored = search::add_deferred(&self.conn, batch.entries)
            .and_then(|()| Ok(self.conn.execute_batch("COMMIT")?));
        if stored.is_err() && !self.conn.is_autocommit() {
            // The error is the one to report; a failed rollback leaves the
            // transaction to SQLite's own rollback when the store closes.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        stored
    }

    /// A temporary store for a what-if run over one task: its task record,
    /// no compaction state, and none of its rows. A run reads the rows from
    /// the store itself (a `TaskRecordIndex` loaded before) and writes its
    /// state here. The task's import-time tool forms are never written to
    /// the scratch store: a run reads them by id from the store file itself
    /// (through its index's connection), and an in-memory store, which has
    /// no second connection, hands them over in memory
    /// ([`Store::tool_forms`]). A what-if costs its own state only.
    pub fn scratch_copy(&self, task: &str) -> Result<Store> {
        self.scratch(task, true)
    }

    /// [`Store::scratch_copy`] for a run that never shrinks a tool part (a
    /// preflight: only the ladder reads tool forms): none are read or lent,
    /// so the scratch store's tool forms are an empty set.
    pub fn scratch_copy_formless(&self, task: &str) -> Result<Store> {
        self.scratch(task, false)
    }

    fn scratch(&self, task: &str, forms: bool) -> Result<Store> {
        let reader = self.reader();
        let record = reader
            .task(task)?
            .ok_or_else(|| StoreError::Corrupt(format!("no task {task}")))?;
        let mut scratch = Store::open_temp()?;
        scratch.transaction(|tx| tx.upsert_task(&record))?;
        if forms && matches!(self.location, DbLocation::Memory) {
            let forms = reader.tool_forms(task)?;
            scratch.lent_forms = Some((task.to_string(), Arc::new(forms)));
        }
        Ok(scratch)
    }

    /// Hand a scratch store the tool forms `source` holds now for its task
    /// (those imported since it was made included); a no-op for a scratch
    /// store that was lent none.
    pub fn lend_forms_again(&mut self, source: &Store) -> Result<()> {
        if let Some((task, _)) = &self.lent_forms {
            let forms = source.reader().tool_forms(task)?;
            self.lent_forms = Some((task.clone(), Arc::new(forms)));
        }
        Ok(())
    }

    /// A second connection to the same store file, for reading while this
    /// one writes; `None` for an in-memory store (it has no second
    /// connection).
    pub fn reopen(&self) -> Result<Option<Store>> {
        match &self.location {
            DbLocation::Memory => Ok(None),
            file => Store::open(file).map(Some),
        }
    }

    /// Stop SQLite from checkpointing the WAL after each commit of this
    /// connection (its `wal_autocheckpoint`): an import of many files, or of
    /// one large file, then copies its pages into the database once, at
    /// [`Store::checkpoint`] or when the last connection closes, instead of
    /// right after every file's commit. Other connections keep their own
    /// setting.
    pub fn defer_checkpoints(&self) -> Result<()> {
        self.conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        Ok(())
    }

    /// Let this connection's commits checkpoint the WAL only once it holds
    /// `pages` pages (SQLite's default is 1,000): a connection whose
    /// checkpoints another one runs keeps this as a backstop.
    pub fn checkpoint_after_pages(&self, pages: u32) -> Result<()> {
        self.conn.pragma_update(None, "wal_autocheckpoint", pages)?;
        Ok(())
    }

    /// Give this connection a page cache of [`IMPORT_CACHE_KIB`] (SQLite's
    /// default is 2 MB) for a large import. A file's one transaction
    /// outgrows the default after a few MB; SQLite then spills dirty pages
    /// into the WAL before the commit and writes and reads them again when
    /// the B-tree comes back to them (the `task_message_by_gen` index, whose
    /// Claude Code message ids arrive in no order, is touched all over): a
    /// 100 MB Claude Code session made 40% more WAL writes and 80% more
    /// reads than with this cache. Other connections keep their own setting.
    pub fn grow_cache_for_import(&self) -> Result<()> {
        self.conn
            .pragma_update(None, "cache_size", -IMPORT_CACHE_KIB)?;
        Ok(())
    }

    /// Copy what the WAL holds into the database and truncate the WAL, as far
    /// as readers allow (never waiting for them: a PASSIVE checkpoint). A
    /// no-op for an in-memory store.
    pub fn checkpoint(&self) -> Result<()> {
        if matches!(self.location, DbLocation::File(_)) {
            self.conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        }
        Ok(())
    }

    /// The import-time tool forms of `task`: those a scratch store was handed
    /// for its task, else the stored ones.
    pub fn tool_forms(&self, task: &str) -> Result<Arc<ToolFormMap>> {
        match &self.lent_forms {
            Some((t, forms)) if t == task => Ok(Arc::clone(forms)),
            _ => Ok(Arc::new(self.reader().tool_forms(task)?)),
        }
    }

    /// This open store's identity within the process (see the field).
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// SQLite's `PRAGMA data_version`: it changes when another connection
    /// commits to the database, never for this connection's own commits. A
    /// cache of what this connection read is stale when it changed.
    pub fn data_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0))?)
    }

    /// Where this store lives.
    pub fn location(&self) -> &DbLocation {
        &self.location
    }

    /// Read-only access outside an explicit transaction.
    pub fn reader(&self) -> Reader<'_> {
        Reader { conn: &self.conn }
    }
}

/// Read access, usable on a plain connection or inside a transaction.
pub struct Reader<'a> {
    conn: &'a Connection,
}

/// Write access inside one transaction.
pub struct Tx<'a> {
    tx: &'a Connection,
    /// Whether this transaction keeps the search index (see [`Store`]).
    search: bool,
    /// Where its search index entries wait, in a batch (see
    /// [`Store::transaction`]); `None`: they are added as they come.
    deferred: Option<&'a std::cell::RefCell<Vec<search::Deferred>>>,
}

impl Tx<'_> {
    pub fn reader(&self) -> Reader<'_> {
        Reader { conn: self.tx }
    }
}

#[cfg(test)]
mod tests {
    use super::raw::{CONTENT_JSON, CONTENT_LZ4, encode_content};
    use super::*;

    #[test]
    fn the_import_cache_is_the_importing_connections_own() {
        let dir = tempfile::tempdir().unwrap();
        let location = DbLocation::File(dir.path().join("s.db"));
        let cache = |s: &Store| {
            s.conn
                .query_row("PRAGMA cache_size", [], |r| r.get::<_, i64>(0))
                .unwrap()
        };
        let s = Store::open(&location).unwrap();
        let default = cache(&s);
        assert_ne!(default, -IMPORT_CACHE_KIB);
        s.grow_cache_for_import().unwrap();
        assert_eq!(cache(&s), -IMPORT_CACHE_KIB);
        let other = s.reopen().unwrap().unwrap();
        assert_eq!(cache(&other), default);
    }

    #[test]
    fn a_new_store_gets_the_new_page_size_and_an_old_store_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let page_size = |s: &Store| {
            s.conn
                .query_row("PRAGMA page_size", [], |r| r.get::<_, u32>(0))
                .unwrap()
        };
        let record = |id: &str| TaskInfo {
            id: id.into(),
            format: "anthropic".into(),
            ..Default::default()
        };
        let fresh = DbLocation::File(dir.path().join("new.db"));
        let mut s = Store::open(&fresh).unwrap();
        s.transaction(|tx| tx.upsert_task(&record("t"))).unwrap();
        assert_eq!(page_size(&s), NEW_STORE_PAGE_SIZE);
        drop(s);
        assert_eq!(
            page_size(&Store::open(&fresh).unwrap()),
            NEW_STORE_PAGE_SIZE
        );
        // A store created with the previous page size (16 KB) keeps it, and
        // its rows, and takes new ones.
        let old = dir.path().join("old.db");
        let conn = Connection::open(&old).unwrap();
        conn.pragma_update(None, "page_size", 16_384).unwrap();
        conn.execute_batch("CREATE TABLE before_migration(x)")
            .unwrap();
        drop(conn);
        let old = DbLocation::File(old);
        let mut s = Store::open(&old).unwrap();
        assert_eq!(page_size(&s), 16_384);
        s.transaction(|tx| tx.upsert_task(&record("t"))).unwrap();
        drop(s);
        let mut s = Store::open(&old).unwrap();
        assert_eq!(page_size(&s), 16_384);
        s.transaction(|tx| tx.upsert_task(&record("u"))).unwrap();
        assert!(s.reader().task("t").unwrap().is_some());
        assert!(s.reader().task("u").unwrap().is_some());
    }

    #[test]
    fn a_scratch_store_spills_to_a_temporary_file_and_has_no_second_connection() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
        let record = TaskInfo {
            id: "t".into(),
            format: "anthropic".into(),
            ..Default::default()
        };
        s.transaction(|tx| tx.upsert_task(&record)).unwrap();
        let scratch = s.scratch_copy("t").unwrap();
        let pragma = |name: &str| {
            scratch
                .conn
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
                .unwrap()
        };
        // 1 = FILE: pages past the cache spill to a temporary file.
        assert_eq!(pragma("temp_store"), 1);
        assert_eq!(scratch.version().unwrap(), STORE_VERSION);
        assert!(scratch.reader().task("t").unwrap().is_some());
        assert!(scratch.reopen().unwrap().is_none());
    }

    #[test]
    fn fresh_store_has_current_version() {
        let s = Store::open_memory().unwrap();
        assert_eq!(s.version().unwrap(), STORE_VERSION);
    }

    #[test]
    fn content_round_trips_and_bad_bytes_are_errors() {
        let json = serde_json::to_string(&vec!["a long enough text block "; 8]).unwrap();
        let (encoding, value) = encode_content(json.clone());
        assert_eq!(encoding, CONTENT_LZ4);
        let rusqlite::types::Value::Blob(bytes) = value else {
            panic!("compressed content is a BLOB")
        };
        assert!(bytes.len() < json.len());
        assert_eq!(decode_content(encoding, &bytes).unwrap(), json.as_bytes());
        // Too small to shrink: kept as text.
        let (encoding, value) = encode_content("[]".to_string());
        assert_eq!(encoding, CONTENT_JSON);
        assert_eq!(value, rusqlite::types::Value::Text("[]".to_string()));
        // Damaged or unknown: an error, never a panic.
        for bad in [
            &bytes[..3],
            &bytes[..bytes.len() / 2],
            b"\xff\xff\xff\x7fxyz",
        ] {
            assert!(decode_content(CONTENT_LZ4, bad).is_err());
        }
        let err = decode_content("zip", b"[]").unwrap_err();
        assert!(err.contains("unknown content encoding"), "{err}");
    }

    /// Row heads come without reading any row's content, and a record
    /// that is not numbered from 0 without gaps, or holds usage that does
    /// not parse, is an error naming the row, never a panic.
    #[test]
    fn row_heads_read_no_content_and_refuse_a_damaged_record() {
        let s = Store::open_memory().unwrap();
        let insert = |seq: i64, kind: &str, usage: Option<&str>| {
            s.conn
                .execute(
                    "INSERT INTO task_message (task_id, seq, role, kind, turn, step, gen_id,
                     content, content_encoding, usage, source_line, row_hash)
                     VALUES ('t', ?1, 'assistant', ?2, 3, 1, 'g', 'not json', 'json', ?3, 1, x'00')",
                    rusqlite::params![seq, kind, usage],
                )
                .unwrap();
        };
        insert(
            0,
            "generation",
            Some(r#"{"input_tokens":5,"output_tokens":1}"#),
        );
        let heads = s.reader().row_heads("t").unwrap();
        assert_eq!(heads.len(), 1);
        assert_eq!(heads[0].kind, crate::model::Kind::Generation);
        assert_eq!((heads[0].turn, heads[0].step), (3, 1));
        assert_eq!(heads[0].gen_id.as_deref(), Some("g"));
        assert_eq!(heads[0].usage.map(|u| u.input_tokens), Some(5));
        // The content itself does not parse: reading it is the error.
        assert!(matches!(
            s.reader().task_rows("t"),
            Err(StoreError::Corrupt(e)) if e.contains("row 0")
        ));
        insert(2, "generation", None);
        assert!(matches!(
            s.reader().row_heads("t"),
            Err(StoreError::Corrupt(e)) if e.contains("row 2")
        ));
        let s = Store::open_memory().unwrap();
        s.conn
            .execute(
                "INSERT INTO task_message (task_id, seq, role, kind, turn, step, content,
                 usage, source_line, row_hash) VALUES ('t', 0, 'user', 'ask', 1, 0, '[]',
                 '{\"input_tokens\":\"many\"}', 1, x'00')",
                [],
            )
            .unwrap();
        assert!(matches!(
            s.reader().row_heads("t"),
            Err(StoreError::Corrupt(e)) if e.contains("usage")
        ));
    }

    #[test]
    fn newer_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        {
            let s = Store::open(&DbLocation::File(path.clone())).unwrap();
            s.conn
                .pragma_update(None, "user_version", STORE_VERSION + 1)
                .unwrap();
        }
        let err = Store::open(&DbLocation::File(path)).err().unwrap();
        assert!(matches!(err, StoreError::TooNew { found, .. } if found == STORE_VERSION + 1));
        assert!(err.to_string().contains("newer than this compactor"));
    }

    #[test]
    fn reopening_does_not_migrate_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = DbLocation::File(dir.path().join("nested/dir/s.db"));
        assert!(matches!(Store::open(&path), Err(StoreError::NoDir { .. })));
        assert!(!dir.path().join("nested").exists());
        create_default_dir(&path).unwrap();
        Store::open(&path).unwrap();
        let s = Store::open(&path).unwrap();
        assert_eq!(s.version().unwrap(), STORE_VERSION);
    }

    /// A batch not committed stores nothing: rolled back by the command
    /// that stopped, or by SQLite when the store closes (as a crash leaves
    /// it); a batch committed stores each of its transactions.
    #[test]
    fn a_batch_is_stored_when_it_commits_and_never_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = DbLocation::File(dir.path().join("s.db"));
        let rows = |s: &Store, task: &str| s.reader().task_rows(task).unwrap().len();
        let ask = |text: &str| {
            vec![crate::model::Message::new(
                crate::model::Role::User,
                crate::model::Kind::Ask,
                vec![crate::model::Block::Text { text: text.into() }],
                0,
            )]
        };
        {
            let mut s = Store::open(&path).unwrap();
            s.begin_batch().unwrap();
            s.transaction(|tx| tx.append_rows("closed", &ask("left open")))
                .unwrap();
            // Dropped with its batch open.
        }
        let mut s = Store::open(&path).unwrap();
        assert_eq!(rows(&s, "closed"), 0);
        s.begin_batch().unwrap();
        s.transaction(|tx| tx.append_rows("stopped", &ask("rolled back")))
            .unwrap();
        s.rollback_batch().unwrap();
        assert!(s.batch.is_none());
        s.checkpoint().unwrap();
        assert_eq!(rows(&s, "stopped"), 0);
        s.begin_batch().unwrap();
        for task in ["one", "two"] {
            s.transaction(|tx| tx.append_rows(task, &ask(task)))
                .unwrap();
        }
        s.commit_batch().unwrap();
        // A rollback after the commit is a no-op.
        s.rollback_batch().unwrap();
        let reopened = Store::open(&path).unwrap();
        assert_eq!((rows(&reopened, "one"), rows(&reopened, "two")), (1, 1));
    }
}
