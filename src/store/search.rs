//! The search index (`search_index`, an FTS5 table beside the record) and
//! how it is kept, rebuilt and queried. What an entry holds is
//! `search/extract.rs`; how a query reads, `search/query.rs`.
//!
//! **Kept with the record.** Every row the record gains goes through
//! [`RowWriter`](super::raw::RowWriter) (import, the proxy, the hooks'
//! imports): its entries are added in the row's own transaction, so the
//! index never holds a row the record lacks, nor misses one it holds. A
//! floor summary's lines are added where the summary is stored
//! ([`Tx::put_entry`]). A scratch store (a what-if run) keeps no index.
//!
//! **Rebuilt when it is not current.** `search_state` says which version
//! of the index the table holds ([`INDEX_VERSION`]); a store migrated from
//! before the index, a table dropped, or an index another version built is
//! not current: the writers then leave it alone, and a search builds it
//! again from the record ([`Store::rebuild_search_index`]) or, where it may
//! not write, indexes the tasks it searches in memory
//! ([`Searcher::open`]). Either way the hits are those of an index kept
//! from the start: the entries are a function of the rows.
//!
//! **Never part of a view.** Nothing in the engine or the session layer
//! reads it.
//!
//! An entry's rowid names it: bits 41 to 62 the task's number
//! (`search_task`), then either bit 40 clear, the row's `seq` (bits 12 to
//! 39) and the block's position in the row (bits 0 to 11), or bit 40 set
//! and a floor summary line (`search_summary`'s id). A task's entries are
//! one range of rowids, which FTS5 reads without touching the others.

pub mod extract;
mod porter;
pub mod query;

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{Reader, Result, Store, StoreError, Tx};
pub use extract::Column;
use query::QueryError;

/// The version of the index this build writes: what an entry holds and
/// how it is tokenized. An index of another version is built again.
/// Version 2 leaves stop words out; version 3 indexes half as much of a
/// tool's input and output ([`extract::TOOL_INPUT`], [`extract::TOOL_OUTPUT`]);
/// version 4 holds a large row's entries, which version 3's writers dropped.
pub const INDEX_VERSION: i64 = 4;

/// FTS5's tokenizer for the index: `ascii`, which takes the terms an entry
/// is handed as they are (they are lower-case words and stems separated by
/// spaces: `extract.rs` made them).
const INDEX_TOKENIZE: &str = "ascii";
/// FTS5's tokenizer for a snippet's text, the text itself: words split at
/// anything not a letter or a digit, and stemmed by Porter's algorithm,
/// as the index's terms were.
const SNIPPET_TOKENIZE: &str = "porter unicode61 remove_diacritics 0";

/// `CREATE VIRTUAL TABLE` of a table with the index's columns: the index
/// itself (contentless), or the snippet table (holding its texts).
fn create_table(name: &str, index: bool, extra: &str) -> String {
    let columns: Vec<&str> = Column::ALL.iter().map(|c| c.as_str()).collect();
    format!(
        "CREATE VIRTUAL TABLE {name} USING fts5({}{extra}, {}tokenize = '{}')",
        columns.join(", "),
        if index { "content = '', " } else { "" },
        if index {
            INDEX_TOKENIZE
        } else {
            SNIPPET_TOKENIZE
        },
    )
}

/// How many of the index's segments FTS5 merges at once (its default is
/// 4), and how many on one level make a writer merge them at once (its
/// default is 16): as migration 18 sets them.
const AUTOMERGE: u32 = 64;
const CRISISMERGE: u32 = 128;

const TASK_SHIFT: u32 = 41;
/// The most matches a search ranks (see [`Searcher::matches`]).
pub const RANKED_MAX: usize = 4000;
const LINE_FLAG: i64 = 1 << 40;
const SEQ_SHIFT: u32 = 12;
/// The largest `seq` a row's entries can name; rows past it are not indexed.
pub const MAX_SEQ: u64 = (1 << 28) - 1;
/// The largest task number: tasks past it are not indexed.
const MAX_TASK_NO: i64 = (1 << 22) - 1;

/// What an entry of the index is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Location {
    /// Block `entry` of row `seq` of the task.
    Row { task_no: i64, seq: u64, entry: u16 },
    /// A floor summary line of the task (its rowid is `search_summary.id`).
    SummaryLine { task_no: i64 },
}

/// The rowid of block `entry` of row `seq` of task `task_no`.
fn row_rowid(task_no: i64, seq: u64, entry: u16) -> Option<i64> {
    (task_no <= MAX_TASK_NO && seq <= MAX_SEQ && usize::from(entry) < extract::MAX_ENTRIES)
        .then(|| (task_no << TASK_SHIFT) | ((seq as i64) << SEQ_SHIFT) | i64::from(entry))
}

/// What `rowid` names.
pub fn locate(rowid: i64) -> Location {
    let task_no = rowid >> TASK_SHIFT;
    if rowid & LINE_FLAG != 0 {
        Location::SummaryLine { task_no }
    } else {
        Location::Row {
            task_no,
            seq: ((rowid & (LINE_FLAG - 1)) >> SEQ_SHIFT) as u64,
            entry: (rowid & ((1 << SEQ_SHIFT) - 1)) as u16,
        }
    }
}

/// The rowids of a task's entries: the first and the last.
fn task_bounds(task_no: i64) -> (i64, i64) {
    let first = task_no << TASK_SHIFT;
    (first, first | ((1 << TASK_SHIFT) - 1))
}

/// Whether the index can be searched and kept as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexState {
    Current,
    /// Built by another version, or not built yet over rows stored before it.
    Outdated,
    /// Its tables are gone.
    Missing,
}

fn state(conn: &Connection) -> Result<IndexState> {
    // Asked for each task a transaction writes: the statements are kept.
    let tables: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'
             AND name IN ('search_index', 'search_state', 'search_task', 'search_summary')",
        )?
        .query_row([], |r| r.get(0))?;
    if tables < 4 {
        return Ok(IndexState::Missing);
    }
    let version: Option<i64> = conn
        .prepare_cached("SELECT max(version) FROM search_state")?
        .query_row([], |r| r.get(0))?;
    Ok(match version {
        Some(INDEX_VERSION) => IndexState::Current,
        _ => IndexState::Outdated,
    })
}

/// The number `search_task` gives `task_id`, given now if it has none.
fn task_no(conn: &Connection, task_id: &str) -> Result<i64> {
    conn.prepare_cached("INSERT OR IGNORE INTO search_task (task_id) VALUES (?1)")?
        .execute([task_id])?;
    Ok(conn
        .prepare_cached("SELECT no FROM search_task WHERE task_id = ?1")?
        .query_row([task_id], |r| r.get(0))?)
}

/// `INSERT` of one entry into `column` of the index.
fn insert_sql(column: Column) -> String {
    format!(
        "INSERT INTO search_index (rowid, {}) VALUES (?1, ?2)",
        column.as_str()
    )
}

/// Adds a task's rows' entries to the index, inside the transaction that
/// stores the rows.
pub struct IndexWriter<'a> {
    conn: &'a Connection,
    task_no: i64,
    /// Each column's `INSERT`, prepared when first needed.
    inserts: Inserts<'a>,
    /// Where the entries wait for their batch's end instead (see
    /// [`Store::transaction`](super::Store::transaction)).
    deferred: Option<&'a std::cell::RefCell<Vec<Deferred>>>,
}

/// An entry of the index held back until its batch commits: its rowid,
/// column and terms, inserted as they would have been.
pub(crate) struct Deferred {
    rowid: i64,
    column: Column,
    terms: String,
}

/// Each column's `INSERT` of an entry, prepared when first needed.
struct Inserts<'a>([Option<rusqlite::CachedStatement<'a>>; 5]);

impl<'a> Inserts<'a> {
    fn new() -> Inserts<'a> {
        Inserts([None, None, None, None, None])
    }

    fn insert(
        &mut self,
        conn: &'a Connection,
        rowid: i64,
        column: Column,
        terms: &str,
    ) -> Result<()> {
        let stmt = match &mut self.0[column.index()] {
            Some(stmt) => stmt,
            none => none.insert(conn.prepare_cached(&insert_sql(column))?),
        };
        stmt.raw_bind_parameter(1, rowid)?;
        stmt.raw_bind_parameter(2, terms)?;
        stmt.raw_execute()?;
        Ok(())
    }
}

impl<'a> IndexWriter<'a> {
    fn new(
        conn: &'a Connection,
        task_no: i64,
        deferred: Option<&'a std::cell::RefCell<Vec<Deferred>>>,
    ) -> IndexWriter<'a> {
        IndexWriter {
            conn,
            task_no,
            inserts: Inserts::new(),
            deferred,
        }
    }

    /// Index row `seq`'s entries.
    pub fn add(&mut self, seq: u64, entries: Vec<extract::Entry>) -> Result<()> {
        for e in entries {
            let Some(rowid) = row_rowid(self.task_no, seq, e.entry) else {
                continue;
            };
            match self.deferred {
                Some(deferred) => deferred.borrow_mut().push(Deferred {
                    rowid,
                    column: e.column,
                    terms: e.terms,
                }),
                None => self.inserts.insert(self.conn, rowid, e.column, &e.terms)?,
            }
        }
        Ok(())
    }
}

/// Add a batch's entries held back ([`Deferred`]), in the order they came.
pub(crate) fn add_deferred(conn: &Connection, entries: Vec<Deferred>) -> Result<()> {
    let mut inserts = Inserts::new();
    for e in entries {
        inserts.insert(conn, e.rowid, e.column, &e.terms)?;
    }
    Ok(())
}

impl Tx<'_> {
    /// A writer of `task_id`'s entries, when this store keeps a current
    /// index (a scratch store keeps none; an index that is not current is
    /// left for a search to build again).
    pub(crate) fn index_writer(&self, task_id: &str) -> Result<Option<IndexWriter<'_>>> {
        if !self.search || state(self.tx)? != IndexState::Current {
            return Ok(None);
        }
        Ok(Some(IndexWriter::new(
            self.tx,
            task_no(self.tx, task_id)?,
            self.deferred,
        )))
    }

    /// Index the lines of a floor summary stored under `key` (a `cov:` key
    /// holding a summary entry; any other entry is no summary).
    pub(crate) fn index_summary(&self, task_id: &str, key: &str, entry: &Value) -> Result<()> {
        if !self.search || !key.starts_with("cov:") {
            return Ok(());
        }
        let Some((text, call)) = summary_of(entry) else {
            return Ok(());
        };
        if state(self.tx)? != IndexState::Current {
            return Ok(());
        }
        let no = task_no(self.tx, task_id)?;
        add_summary_lines(self.tx, no, task_id, key, call, text)
    }
}

impl Tx<'_> {
    /// Index again the floor summary lines of `task_id` from what the
    /// snapshot stores now (after `reset` forgot some of them).
    pub(crate) fn reindex_summaries(&self, task_id: &str) -> Result<()> {
        if !self.search || state(self.tx)? != IndexState::Current {
            return Ok(());
        }
        let lines: Vec<(i64, String)> = self
            .tx
            .prepare_cached("SELECT id, line FROM search_summary WHERE task_id = ?1")?
            .query_map([task_id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut norm = extract::Normaliser::new();
        for (id, line) in lines {
            // A contentless table forgets an entry given what was indexed.
            let mut indexed = String::new();
            norm.terms(&line, &mut indexed);
            self.tx.execute(
                "INSERT INTO search_index (search_index, rowid, summary) VALUES ('delete', ?1, ?2)",
                params![id, indexed],
            )?;
        }
        self.tx
            .execute("DELETE FROM search_summary WHERE task_id = ?1", [task_id])?;
        let no = task_no(self.tx, task_id)?;
        for (key, text, call) in stored_summaries(self.tx, task_id)? {
            add_summary_lines(self.tx, no, task_id, &key, call, &text)?;
        }
        Ok(())
    }
}

/// A summary entry's text and the call that minted it.
fn summary_of(entry: &Value) -> Option<(&str, i64)> {
    if entry.get("kind")?.as_str()? != "summary" {
        return None;
    }
    Some((
        entry.get("text")?.as_str()?,
        entry
            .get("minted_call")
            .and_then(Value::as_i64)
            .unwrap_or(0),
    ))
}

/// The lines of a summary the index holds: each line with words, once per
/// task (a later summary repeats most of an earlier one's lines); a
/// section's heading alone is no line.
fn summary_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| {
        !(l.is_empty() || l.starts_with('#') && l.len() < 48)
            && l.chars().any(char::is_alphanumeric)
    })
}

fn add_summary_lines(
    conn: &Connection,
    task_no: i64,
    task_id: &str,
    key: &str,
    call: i64,
    text: &str,
) -> Result<()> {
    if task_no > MAX_TASK_NO {
        return Ok(());
    }
    let (first, last) = task_bounds(task_no);
    let base = first | LINE_FLAG;
    let mut next: i64 = conn
        .prepare_cached("SELECT max(id) FROM search_summary WHERE id BETWEEN ?1 AND ?2")?
        .query_row(params![base, last], |r| r.get::<_, Option<i64>>(0))?
        .map_or(base, |m| m + 1);
    let mut norm = extract::Normaliser::new();
    for line in summary_lines(text) {
        let line = extract::bounded(line, extract::PROSE);
        let added = conn
            .prepare_cached(
                "INSERT OR IGNORE INTO search_summary (id, task_id, line, call, key)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![next, task_id, line, call, key])?;
        if added == 0 || next > last {
            continue;
        }
        let mut indexed = String::new();
        norm.terms(&line, &mut indexed);
        if indexed.is_empty() {
            continue;
        }
        conn.prepare_cached(&insert_sql(Column::Summary))?
            .execute(params![next, indexed])?;
        next += 1;
    }
    Ok(())
}

/// The floor summaries stored for a task, under every profile: (key, text,
/// minted call), in the order they were minted.
fn stored_summaries(conn: &Connection, task_id: &str) -> Result<Vec<(String, String, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT key, entry FROM task_compaction_snapshot
         WHERE task_id = ?1 AND key LIKE 'cov:%' ORDER BY key",
    )?;
    let rows = stmt.query_map([task_id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (key, entry) = row?;
        let Ok(v) = serde_json::from_str::<Value>(&entry) else {
            continue;
        };
        if let Some((text, call)) = summary_of(&v) {
            out.push((key, text.to_string(), call));
        }
    }
    out.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
    Ok(out)
}

/// The schema of the index's tables, as migration 17 creates them.
fn create_tables(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS search_task (no INTEGER PRIMARY KEY, task_id TEXT NOT NULL UNIQUE);
         CREATE TABLE IF NOT EXISTS search_summary (id INTEGER PRIMARY KEY, task_id TEXT NOT NULL,
           line TEXT NOT NULL, call INTEGER NOT NULL, key TEXT NOT NULL, UNIQUE (task_id, line));
         CREATE TABLE IF NOT EXISTS search_state (version INTEGER NOT NULL);",
    )?;
    conn.execute_batch(&create_table("search_index", true, ""))?;
    conn.execute_batch(&format!(
        "INSERT INTO search_index (search_index, rank) VALUES ('automerge', {AUTOMERGE});
         INSERT INTO search_index (search_index, rank) VALUES ('crisismerge', {CRISISMERGE});"
    ))?;
    Ok(())
}

/// Index task `task_id`'s rows (read through `source`) and stored
/// summaries into `dest`'s index: what the writers would have added.
fn index_task(source: &Reader<'_>, dest: &Connection, task_id: &str) -> Result<()> {
    let no = task_no(dest, task_id)?;
    let mut writer = IndexWriter::new(dest, no, None);
    let mut norm = extract::Normaliser::new();
    source.each_stored(task_id, 0, MAX_SEQ + 1, |m| {
        writer.add(m.seq, extract::entries(&m.message, &mut norm))
    })?;
    for (key, text, call) in stored_summaries(source.conn, task_id)? {
        add_summary_lines(dest, no, task_id, &key, call, &text)?;
    }
    Ok(())
}

impl Reader<'_> {
    /// Every task the record holds rows of, by id.
    pub fn recorded_tasks(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT task_id FROM task_message ORDER BY task_id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Store {
    /// Whether the index is current (see the module's doc).
    pub fn search_state(&self) -> Result<IndexState> {
        state(&self.conn)
    }

    /// Build the index again from the record, in one transaction:
    /// `progress(done, total)` after each task.
    pub fn rebuild_search_index(&mut self, progress: &mut dyn FnMut(usize, usize)) -> Result<()> {
        let tasks = self.reader().recorded_tasks()?;
        self.transaction(|tx| -> Result<()> {
            let conn = tx.tx;
            conn.execute_batch(
                "DROP TABLE IF EXISTS search_index;
                 DROP TABLE IF EXISTS search_summary;
                 DROP TABLE IF EXISTS search_state;",
            )?;
            create_tables(conn)?;
            let reader = tx.reader();
            for (i, task) in tasks.iter().enumerate() {
                index_task(&reader, conn, task)?;
                progress(i + 1, tasks.len());
            }
            conn.execute(
                "INSERT INTO search_state (version) VALUES (?1)",
                [INDEX_VERSION],
            )?;
            Ok(())
        })
    }

    /// A handle that stops what this store's connection is running from
    /// another thread (the query then fails as interrupted).
    pub fn interrupt_handle(&self) -> rusqlite::InterruptHandle {
        self.conn.get_interrupt_handle()
    }
}

/// One entry a query matched, with its BM25 score (lower is better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawHit {
    pub rowid: i64,
    pub score: f64,
}

/// A floor summary line the index holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryLine {
    pub task: String,
    pub line: String,
    pub call: u32,
    pub key: String,
}

/// Why a search failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the search was stopped")]
    Interrupted,
}

impl From<rusqlite::Error> for SearchError {
    fn from(e: rusqlite::Error) -> SearchError {
        if let rusqlite::Error::SqliteFailure(f, msg) = &e {
            if f.code == rusqlite::ErrorCode::OperationInterrupted {
                return SearchError::Interrupted;
            }
            if let Some(q) = msg.as_deref().and_then(query::fts5_error) {
                return SearchError::Query(q);
            }
        }
        SearchError::Store(StoreError::Sql(e))
    }
}

/// Searches an index: the store's own when it is current, else one built in
/// memory over the tasks to search (a store opened only to read, or not
/// yet rebuilt, is never written).
pub struct Searcher<'s> {
    store: &'s Store,
    own: Option<Connection>,
    /// `search_task`, both ways.
    numbers: BTreeMap<String, i64>,
    names: BTreeMap<i64, String>,
}

impl<'s> Searcher<'s> {
    /// The index of `store`, or, when it is not current, one of `tasks` in
    /// memory.
    pub fn open(store: &'s Store, tasks: &[String]) -> Result<Searcher<'s>> {
        let own = match store.search_state()? {
            IndexState::Current => None,
            _ => {
                let conn = Connection::open_in_memory()?;
                create_tables(&conn)?;
                let reader = store.reader();
                conn.execute_batch("BEGIN")?;
                for t in tasks {
                    index_task(&reader, &conn, t)?;
                }
                conn.execute_batch("COMMIT")?;
                Some(conn)
            }
        };
        let mut s = Searcher {
            store,
            own,
            numbers: BTreeMap::new(),
            names: BTreeMap::new(),
        };
        let mut stmt = s.conn().prepare("SELECT no, task_id FROM search_task")?;
        let rows: Vec<(i64, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        for (no, id) in rows {
            s.numbers.insert(id.clone(), no);
            s.names.insert(no, id);
        }
        Ok(s)
    }

    fn conn(&self) -> &Connection {
        self.own.as_ref().unwrap_or(&self.store.conn)
    }

    /// Whether this is an index of a few tasks built in memory.
    pub fn in_memory(&self) -> bool {
        self.own.is_some()
    }

    /// The task a task number names.
    pub fn task_of(&self, no: i64) -> Option<&str> {
        self.names.get(&no).map(String::as_str)
    }

    /// The entries matching `expr` (an FTS5 expression, see
    /// [`query::Query::in_column`]) among `tasks`' (`None`: every task's),
    /// best first, at most `max`, ties to the later entry; and how many
    /// matched.
    ///
    /// BM25 costs a read of each entry's sizes: a query of words that fill
    /// most of a long session would rank tens of thousands of entries. Past
    /// [`RANKED_MAX`] matches, the newest [`RANKED_MAX`] (the highest
    /// rowids: the latest rows of the latest task) are ranked; the count
    /// is of every match all the same.
    pub fn matches(
        &self,
        expr: &str,
        tasks: Option<&[String]>,
        max: usize,
    ) -> std::result::Result<(Vec<RawHit>, usize), SearchError> {
        self.matches_ranking(expr, tasks, max, RANKED_MAX)
    }

    /// [`Searcher::matches`], ranking at most the newest `ranked` matches.
    pub(crate) fn matches_ranking(
        &self,
        expr: &str,
        tasks: Option<&[String]>,
        max: usize,
        ranked: usize,
    ) -> std::result::Result<(Vec<RawHit>, usize), SearchError> {
        let ranked = ranked.max(1);
        // The rowid ranges to read, and whether a rowid is kept.
        let nos: Option<Vec<i64>> = tasks.map(|ts| {
            let mut nos: Vec<i64> = ts
                .iter()
                .filter_map(|t| self.numbers.get(t).copied())
                .collect();
            nos.sort_unstable();
            nos.dedup();
            nos
        });
        // A range of rowids each for a few tasks: FTS5 reads only theirs.
        let ranges: Vec<(i64, i64)> = match &nos {
            Some(nos) if nos.len() <= 4 => nos.iter().map(|&no| task_bounds(no)).collect(),
            _ => vec![(i64::MIN, i64::MAX)],
        };
        let keep = |rowid: i64| match &nos {
            Some(nos) if nos.len() > 4 => nos.binary_search(&(rowid >> TASK_SHIFT)).is_ok(),
            _ => true,
        };
        // Newest first: the first `ranked` matches are ranked, the rest of
        // each range only counted (no BM25: it reads each entry's sizes).
        let mut ranking = self.conn().prepare_cached(
            "SELECT rowid, bm25(search_index) FROM search_index
             WHERE search_index MATCH ?1 AND rowid BETWEEN ?2 AND ?3 ORDER BY rowid DESC",
        )?;
        let mut counting = self.conn().prepare_cached(
            "SELECT rowid FROM search_index WHERE search_index MATCH ?1 AND rowid BETWEEN ?2 AND ?3",
        )?;
        let mut hits: Vec<RawHit> = Vec::new();
        let mut matched = 0usize;
        for &(a, b) in ranges.iter().rev() {
            // The range's rowids not ranked yet: `a..=to`.
            let mut to = b;
            if hits.len() < ranked {
                let mut rows = ranking.query(rusqlite::params![expr, a, b])?;
                while let Some(r) = rows.next()? {
                    let rowid: i64 = r.get(0)?;
                    to = rowid - 1;
                    if !keep(rowid) {
                        continue;
                    }
                    matched += 1;
                    hits.push(RawHit {
                        rowid,
                        score: r.get(1)?,
                    });
                    if hits.len() == ranked {
                        break;
                    }
                }
                if hits.len() < ranked {
                    continue;
                }
            }
            if to < a {
                continue;
            }
            let mut rows = counting.query(rusqlite::params![expr, a, to])?;
            while let Some(r) = rows.next()? {
                if keep(r.get(0)?) {
                    matched += 1;
                }
            }
        }
        hits.sort_by(|a, b| a.score.total_cmp(&b.score).then(b.rowid.cmp(&a.rowid)));
        hits.truncate(max);
        Ok((hits, matched))
    }

    /// The floor summary line an entry names.
    pub fn summary_line(&self, rowid: i64) -> Result<Option<SummaryLine>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT task_id, line, call, key FROM search_summary WHERE id = ?1")?
            .query_row([rowid], |r| {
                Ok(SummaryLine {
                    task: r.get(0)?,
                    line: r.get(1)?,
                    call: u32::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                    key: r.get(3)?,
                })
            })
            .optional()?)
    }

    /// A handle that stops a query running on this searcher's connection.
    pub fn interrupt_handle(&self) -> rusqlite::InterruptHandle {
        self.conn().get_interrupt_handle()
    }
}

/// Snippets of a few texts: a small in-memory FTS5 table holding them, so
/// that the words a query matched are found by the index's own tokenizer.
pub struct Snippets {
    conn: Connection,
}

/// Marks the start and the end of a matched word in a snippet.
pub const MARK_START: char = '\u{1}';
pub const MARK_END: char = '\u{2}';

impl Snippets {
    pub fn new() -> Result<Snippets> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(&create_table("snippet", false, ", col UNINDEXED"))?;
        Ok(Snippets { conn })
    }

    /// Hold `text` (what an entry was indexed from) as number `id` in
    /// `column`.
    pub fn add(&self, id: i64, column: Column, text: &str) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO snippet (rowid, {}, col) VALUES (?1, ?2, ?3)",
                column.as_str()
            ))?
            .execute(params![id, text, column.index() as i64])?;
        Ok(())
    }

    /// The snippet of each text `expr` (the query's words, which the
    /// snippet table's tokenizer stems as the index's terms were) matches:
    /// at most `tokens` words, the matched ones between [`MARK_START`] and
    /// [`MARK_END`], a cut end marked `…`; by id.
    pub fn make(
        &self,
        expr: &str,
        tokens: u32,
    ) -> std::result::Result<BTreeMap<i64, String>, SearchError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid, snippet(snippet, col, char(1), char(2), '…', ?2) FROM snippet
             WHERE snippet MATCH ?1",
        )?;
        let rows = stmt.query_map(params![expr, i64::from(tokens.min(64))], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = BTreeMap::new();
        for r in rows {
            let (id, s) = r?;
            out.insert(id, s);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
