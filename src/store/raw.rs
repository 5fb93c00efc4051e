//! `task_message` (the raw record), `task` and `import_source`.

use std::borrow::Cow;
use std::collections::HashMap;

use rusqlite::params;
use rusqlite::types::{Value as SqlValue, ValueRef};

use super::{Reader, Result, StoreError, Tx};
use crate::model::{
    Block, Format, Kind, Message, Role, Usage, blocks_from_json, blocks_from_owned_json,
};

mod content;
mod read;

pub use content::{CONTENT_JSON, decode_content};
#[cfg(test)]
pub use content::{CONTENT_LZ4, encode_content};
use content::{LARGE_ROW, Lz4};

/// One task's descriptive row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskInfo {
    pub id: String,
    pub format: String,
    pub parent_id: Option<String>,
    /// What the task's file states about it.
    pub meta: TaskMeta,
}

/// Facts about a task that its file states (all optional): what an
/// importer reads, and what the task's row keeps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskMeta {
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub cli_version: Option<String>,
    pub title: Option<String>,
    /// The context window the session recorded for itself (the latest one).
    pub context_window: Option<u64>,
    /// The git branch the session was on (the latest the file names; store
    /// version 9).
    pub git_branch: Option<String>,
}

/// A row read back from `task_message`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    pub seq: u64,
    pub source_path: Option<String>,
    pub message: Message,
}

/// What indexes a row of the record, without its content (see
/// [`Reader::each_row_head`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RowHead {
    pub kind: Kind,
    /// The turn the row belongs to.
    pub turn: u32,
    /// The generation it belongs to or follows.
    pub step: u32,
    /// Its generation's id, as [`Message::gen_id`].
    pub gen_id: Option<String>,
    /// The usage recorded on it.
    pub usage: Option<Usage>,
    /// When the source wrote it (RFC 3339, as the source has it).
    pub timestamp: Option<String>,
}

/// What appending a task's parsed rows did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AppendOutcome {
    /// Rows already in the store (identical to the parsed prefix).
    pub already: u64,
    pub added: u64,
}

/// Figures `compactor tasks` reports, computed from the record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskStats {
    /// Conversation rows (user and assistant; meta rows excluded).
    pub messages: u64,
    /// Every stored row, meta rows included (what `import` counts).
    pub rows: u64,
    pub turns: u64,
    /// Model calls: distinct generations.
    pub steps: u64,
    pub tool_calls: u64,
    /// Tool calls without a recorded result.
    pub interrupted_tool_calls: u64,
    /// Tool results without a matching call.
    pub orphan_tool_results: u64,
    /// Recorded usage summed over generations, each generation counted once.
    pub usage: Usage,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
}

/// The chain hash of a row: blake3 over the previous row's hash and the row's
/// identity (role, kind, generation, content, usage, uuid, timestamp). Source
/// line numbers are left out: identity comes from content, not location.
pub fn row_hash(
    prev: &[u8; 32],
    m: &Message,
    content_json: &str,
    usage_json: Option<&str>,
) -> [u8; 32] {
    chain_hash(prev, m, content_json.as_bytes(), usage_json)
}

/// [`row_hash`] over the content JSON's bytes.
fn chain_hash(prev: &[u8; 32], m: &Message, content: &[u8], usage_json: Option<&str>) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(prev);
    let mut field = |s: &[u8]| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s);
    };
    let absent = "\u{0}".as_bytes();
    field(m.role.as_str().as_bytes());
    field(m.kind.as_str().as_bytes());
    field(m.gen_id.as_deref().map_or(absent, str::as_bytes));
    field(content);
    field(usage_json.map_or(absent, str::as_bytes));
    field(m.source_uuid.as_deref().map_or(absent, str::as_bytes));
    field(m.timestamp.as_deref().map_or(absent, str::as_bytes));
    *h.finalize().as_bytes()
}

/// The chain hashes a task's rows would get, in order.
pub fn chain_of(msgs: &[Message]) -> Vec<[u8; 32]> {
    let mut prev = [0u8; 32];
    msgs.iter()
        .map(|m| {
            let usage = usage_json(&m.usage);
            prev = row_hash(&prev, m, &m.content_json(), usage.as_deref());
            prev
        })
        .collect()
}

/// A row's usage as stored and hashed: the bytes `serde_json::to_string`
/// writes for [`Usage`] (its four counts in field order), written directly
/// (serde escapes every key byte by byte).
fn usage_json(u: &Option<Usage>) -> Option<String> {
    use std::fmt::Write;
    u.as_ref().map(|u| {
        let mut s = String::with_capacity(128);
        let Usage {
            input_tokens,
            output_tokens,
            cache_read_input_tokens,
            cache_creation_input_tokens,
        } = u;
        write!(
            s,
            "{{\"input_tokens\":{input_tokens},\"output_tokens\":{output_tokens},\
             \"cache_read_input_tokens\":{cache_read_input_tokens},\
             \"cache_creation_input_tokens\":{cache_creation_input_tokens}}}"
        )
        .expect("writing to a String does not fail");
        s
    })
}

/// Rows per batch between the encoding and the inserting thread.
pub const PIPELINE_BATCH: usize = 64;
/// Batches that may wait in the channel: memory stays at a few batches.
pub const PIPELINE_DEPTH: usize = 4;

/// A row ready to insert: what `task_message` stores of it besides the
/// task, its position and its source (its message's metadata, its content
/// as stored, its usage JSON and its chain hash). It owns all of it, so the
/// inserting side needs nothing else of the message.
pub struct EncodedRow {
    role: &'static str,
    kind: &'static str,
    turn: u32,
    step: u32,
    gen_id: Option<String>,
    line: u64,
    source_uuid: Option<String>,
    timestamp: Option<String>,
    encoding: &'static str,
    content: SqlValue,
    usage: Option<String>,
    hash: [u8; 32],
    /// What the search index holds of it (none when it is not indexed).
    entries: Vec<super::search::extract::Entry>,
}

/// Encodes one task's rows in file order, each hash chained to the row
/// before it (the first to zeros). The first `skip` rows, which the store
/// already holds, are hashed only: they are compared, never inserted.
pub struct RowEncoder {
    prev: [u8; 32],
    skip: u64,
    seen: u64,
    /// The content JSON of the row being encoded: one buffer for all rows.
    json: Vec<u8>,
    lz4: Lz4,
    /// Whether the rows inserted are given their search index entries, and
    /// what makes them.
    index: Option<super::search::extract::Normaliser>,
}

impl RowEncoder {
    pub fn new(skip: u64) -> RowEncoder {
        RowEncoder {
            prev: [0u8; 32],
            skip,
            seen: 0,
            json: Vec::new(),
            lz4: Lz4::new(),
            index: None,
        }
    }

    /// Give each row inserted its search index entries (on this thread:
    /// the encoding one, not the one that holds the transaction), as the
    /// writer that inserts them wants ([`RowWriter::indexes`]).
    pub fn indexing(mut self, on: bool) -> RowEncoder {
        self.index = on.then(super::search::extract::Normaliser::new);
        self
    }

    /// Serialise, hash and (for a row to insert) compress the next row.
    pub fn encode(&mut self, m: &Message) -> EncodedRow {
        let mut row = self.encode_content(m);
        row.gen_id.clone_from(&m.gen_id);
        row.source_uuid.clone_from(&m.source_uuid);
        row.timestamp.clone_from(&m.timestamp);
        row
    }

    /// [`RowEncoder::encode`], moving the message's metadata strings into
    /// the row instead of copying them (`m` keeps its content).
    pub fn encode_taking(&mut self, m: &mut Message) -> EncodedRow {
        let mut row = self.encode_content(m);
        row.gen_id = m.gen_id.take();
        row.source_uuid = m.source_uuid.take();
        row.timestamp = m.timestamp.take();
        row
    }

    /// [`RowEncoder::encode`] of a row given up: its content is let go once
    /// serialised, before it is compressed (a large row's blocks, its JSON
    /// and its compressed form are never all held at once).
    pub fn encode_owned(&mut self, mut m: Message) -> EncodedRow {
        // What the search index holds of it is taken before it is let go.
        let entries = self.entries_of(&m);
        if !self.serialize_in_place(&mut m.content) {
            self.serialize(&m.content);
        }
        m.content = Vec::new();
        let mut row = self.encoded_with(&m, entries);
        row.gen_id = m.gen_id.take();
        row.source_uuid = m.source_uuid.take();
        row.timestamp = m.timestamp.take();
        row
    }

    /// The row without its metadata strings.
    fn encode_content(&mut self, m: &Message) -> EncodedRow {
        self.serialize(&m.content);
        self.encoded(m)
    }

    /// The bytes `Message::content_json` gives into the kept buffer, without
    /// a String per row, the buffer made large enough at once (a 55 MB
    /// answer would pass through buffers of 32 and 64 MB as it grew).
    fn serialize(&mut self, content: &[Block]) {
        self.json.clear();
        let hint = json_size_hint(content);
        // A large row's buffer is made its exact size (counted first): one
        // that grew would hold its old and new buffers at once as it did.
        let size = if hint >= LARGE_ROW / 2 {
            let mut count = Counter(0);
            serde_json::to_writer(&mut count, content).expect("blocks always serialise");
            count.0
        } else {
            hint
        };
        self.json.reserve_exact(size);
        crate::model::json::write_content(&mut self.json, content);
    }

    /// [`RowEncoder::serialize`] of a given-up row whose largest text is
    /// large (a pasted file, an image): that text's buffer becomes the JSON,
    /// escaped in place from its end and grown by what the escapes and the
    /// rest of the content add, so the text and its JSON are never held as
    /// two buffers. The same bytes as `serialize` (serde_json escapes each
    /// piece of the text as it would the whole). The text is taken out of
    /// `content`; false (nothing taken) when no text is large.
    fn serialize_in_place(&mut self, content: &mut [Block]) -> bool {
        let mut largest: Option<(usize, usize)> = None;
        let mut n = 0;
        each_text(content, &mut |s| {
            if largest.is_none_or(|(_, len)| s.len() > len) {
                largest = Some((n, s.len()));
            }
            n += 1;
        });
        let Some((at, len)) = largest.filter(|&(_, len)| len >= LARGE_ROW) else {
            return false;
        };
        let nth = |content: &mut [Block], with: String| {
            let (mut i, mut old) = (0, None);
            let mut with = Some(with);
            each_text(content, &mut |s| {
                if i == at {
                    old = with.take().map(|w| std::mem::replace(s, w));
                }
                i += 1;
            });
            old.expect("the text found above")
        };
        // The rest of the content's JSON, and where the text goes in it: the
        // first byte at which it differs with the text "x".
        let text = nth(content, String::new());
        let rest = serde_json::to_vec(&*content).expect("blocks always serialise");
        nth(content, "x".to_string());
        let with_x = serde_json::to_vec(&*content).expect("blocks always serialise");
        nth(content, String::new());
        let at = rest
            .iter()
            .zip(&with_x)
            .position(|(a, b)| a != b)
            .expect("the text is in the JSON");
        drop(with_x);
        let mut count = Counter(0);
        serde_json::to_writer(&mut count, text.as_str()).expect("a str always serialises");
        let escaped = count.0 - 2;
        let mut json = text.into_bytes();
        json.reserve_exact(rest.len() + escaped - len);
        json.resize(rest.len() + escaped, 0);
        // From the end: each piece's escaped bytes land at or after where
        // the piece was, over bytes already read.
        let (mut hi, mut end) = (len, at + escaped);
        let mut piece = Vec::with_capacity(2 + 6 * ESCAPE_PIECE);
        while hi > 0 {
            let mut lo = hi.saturating_sub(ESCAPE_PIECE);
            while lo > 0 && json[lo] & 0xC0 == 0x80 {
                lo -= 1;
            }
            let s = std::str::from_utf8(&json[lo..hi]).expect("a text's whole characters");
            piece.clear();
            serde_json::to_writer(&mut piece, s).expect("a str always serialises");
            let inner = &piece[1..piece.len() - 1];
            json[end - inner.len()..end].copy_from_slice(inner);
            end -= inner.len();
            hi = lo;
        }
        debug_assert_eq!(end, at);
        json[..at].copy_from_slice(&rest[..at]);
        json[at + escaped..].copy_from_slice(&rest[at..]);
        self.json = json;
        true
    }

    /// The search index's entries of the next row, `m` (none for a row
    /// not inserted, or when the rows are not indexed).
    fn entries_of(&mut self, m: &Message) -> Vec<super::search::extract::Entry> {
        match &mut self.index {
            Some(norm) if self.seen + 1 > self.skip => super::search::extract::entries(m, norm),
            _ => Vec::new(),
        }
    }

    /// The row of `m` whose content JSON was just serialised.
    fn encoded(&mut self, m: &Message) -> EncodedRow {
        let entries = self.entries_of(m);
        self.encoded_with(m, entries)
    }

    /// [`RowEncoder::encoded`], its search entries taken already.
    fn encoded_with(
        &mut self,
        m: &Message,
        entries: Vec<super::search::extract::Entry>,
    ) -> EncodedRow {
        let usage = usage_json(&m.usage);
        self.prev = chain_hash(&self.prev, m, &self.json, usage.as_deref());
        self.seen += 1;
        let inserted = self.seen > self.skip;
        let (encoding, content) = if !inserted {
            (CONTENT_JSON, SqlValue::Null)
        } else if let Some(compressed) = self.lz4.compress(&self.json) {
            compressed
        } else if self.json.len() >= LARGE_ROW {
            // A large row that does not shrink: its JSON as a BLOB, written
            // into the store in pieces (see [`RowWriter::push`]); its
            // buffer handed over, not copied.
            (CONTENT_JSON, SqlValue::Blob(std::mem::take(&mut self.json)))
        } else {
            // Checked only here: the rows too small to compress.
            let text = String::from_utf8(self.json.clone()).expect("serde_json writes UTF-8");
            (CONTENT_JSON, SqlValue::Text(text))
        };
        if self.json.capacity() >= LARGE_ROW {
            self.json = Vec::new();
        }
        EncodedRow {
            role: m.role.as_str(),
            kind: m.kind.as_str(),
            turn: m.turn,
            step: m.step,
            gen_id: None,
            line: m.line,
            source_uuid: None,
            timestamp: None,
            encoding,
            content,
            usage,
            hash: self.prev,
            entries,
        }
    }
}

/// A lower bound of the size of `content`'s JSON: its texts' lengths.
fn json_size_hint(content: &[Block]) -> usize {
    content
        .iter()
        .map(|b| match b {
            Block::Text { text } => text.len(),
            Block::Thinking { thinking, .. } => thinking.len(),
            Block::ToolResult {
                content: crate::model::ToolContent::Text(t),
                ..
            } => t.len(),
            Block::ToolResult {
                content: crate::model::ToolContent::Blocks(blocks),
                ..
            } => json_size_hint(blocks),
            Block::Image { source } => source.data.as_ref().map_or(0, String::len),
            _ => 0,
        })
        .sum()
}

/// The bytes of a large text [`RowEncoder::serialize_in_place`] escapes at a time.
const ESCAPE_PIECE: usize = 1 << 16;

/// Each text of `content` a large row may hold (its texts, thinking,
/// tool outputs, images' data), in order.
fn each_text(content: &mut [Block], f: &mut impl FnMut(&mut String)) {
    for b in content {
        if let Block::ToolResult {
            content: crate::model::ToolContent::Blocks(blocks),
            ..
        } = b
        {
            each_text(blocks, f);
        } else if let Some(s) = b.large_string_mut() {
            f(s);
        }
    }
}

/// Counts the bytes written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The encoding stage of [`Tx::append_messages`]: encode `msgs` in order,
/// sending them in batches until done or until the inserting side hangs up.
fn encode_rows(
    msgs: &[Message],
    mut enc: RowEncoder,
    send: std::sync::mpsc::SyncSender<Vec<EncodedRow>>,
) {
    for chunk in msgs.chunks(PIPELINE_BATCH) {
        let batch = chunk.iter().map(|m| enc.encode(m)).collect();
        if send.send(batch).is_err() {
            return;
        }
    }
}

/// How many of a file's rows already stored [`RowWriter`] holds the chain
/// hashes of before checking the last against the store (128 KB).
const PREFIX_CHECK: usize = 4096;

/// Rows inserted by one execution of [`RowWriter`]'s multi-row statement.
/// One statement for many rows keeps its B-tree cursors open from row to
/// row: the table and the indexes whose keys only grow (the primary key,
/// `task_message_by_source`) are appended to where the cursor already is,
/// rather than searched from the root for every row, and the statement's
/// start and end are paid once. Larger batches gain no more: SQLite copies
/// every bound text, and past about 16 rows those copies outgrow its
/// per-connection lookaside slots and go to `malloc` (the history of BENCHMARKS.md,
/// "Import, preflight and replay": encode and insert; 64 rows cost the
/// inserting thread 7% more instructions than 16).
pub const INSERT_BATCH: usize = 16;

/// The parameters of a row in [`insert_sql`] besides the two shared by all.
const ROW_PARAMS: usize = 13;

/// `INSERT` of `rows` rows into `task_message`: the task id is `?1` and the
/// source id `?2` for every row, row `r`'s own values are the [`ROW_PARAMS`]
/// parameters from `?(3 + 13 r)` on, in the order [`RowWriter::bind`] binds
/// them. `OR FAIL`: a statement of many rows that may stop half-way would
/// otherwise keep a statement journal (a copy of every page it touches) to
/// undo its own rows; a failure here fails the file's whole transaction, so
/// there is nothing to undo statement by statement. No row ever conflicts:
/// `seq` continues what is stored, under the write lock.
fn insert_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT OR FAIL INTO task_message (task_id, seq, role, kind, turn, step, gen_id, content,
           content_encoding, usage, source_id, source_line, source_uuid, timestamp, row_hash)
         VALUES ",
    );
    for r in 0..rows {
        let p = |i: usize| 3 + ROW_PARAMS * r + i;
        if r > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!(
            "(?1, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?2, ?{}, ?{}, ?{}, ?{})",
            p(0),
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            p(6),
            p(7),
            p(8),
            p(9),
            p(10),
            p(11),
            p(12)
        ));
    }
    sql
}

/// Appends one task's rows, given in file order with their encoding, inside
/// the import's transaction. The rows the store already holds are compared
/// with the file's by their chain hash (the last stored one stands for all
/// before it); the rest are inserted, [`INSERT_BATCH`] at a time (see
/// [`RowWriter::flush`]). A file that does not extend what is stored is
/// refused at [`RowWriter::finish`], which names the first row that differs;
/// nothing is inserted for it.
pub struct RowWriter<'a> {
    tx: Tx<'a>,
    /// One row, and [`INSERT_BATCH`] rows (prepared when first needed).
    one: rusqlite::CachedStatement<'a>,
    many: Option<rusqlite::CachedStatement<'a>>,
    /// Rows taken and not inserted yet, with their `seq`.
    pending: Vec<(u64, EncodedRow)>,
    task_id: String,
    source_id: Option<i64>,
    /// Rows stored before this import, and the chain hash of the last one.
    stored: u64,
    last_stored: Vec<u8>,
    /// The chain hashes of the file's rows the store should hold since
    /// `prefix_start`, to name the first that differs. Every
    /// [`PREFIX_CHECK`] rows the last one is checked against the store: a
    /// chain hash that matches vouches for every row before it, so the
    /// window starts again after it and memory does not grow with the file.
    prefix: Vec<[u8; 32]>,
    prefix_start: u64,
    seen: u64,
    last: [u8; 32],
    diverged: bool,
    /// The search index's writer, when the store keeps a current index.
    index: Option<super::search::IndexWriter<'a>>,
}

impl RowWriter<'_> {
    /// Rows the store held for the task when the writer was made.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// Whether the rows it inserts are indexed for search: their encoder
    /// should then give them their entries ([`RowEncoder::indexing`]).
    pub fn indexes(&self) -> bool {
        self.index.is_some()
    }

    /// Take the task's next row: compared when the store holds it, else
    /// inserted (`true`), by the time of the next [`RowWriter::flush`] at
    /// the latest. Nothing is inserted after a divergence.
    pub fn push(&mut self, row: EncodedRow) -> Result<bool> {
        let seq = self.seen;
        self.seen += 1;
        self.last = row.hash;
        if self.diverged {
            return Ok(false);
        }
        if seq < self.stored {
            self.prefix.push(row.hash);
            if seq + 1 == self.stored {
                self.diverged |= self.last_stored[..] != row.hash[..];
            } else if !self.diverged && self.prefix.len() >= PREFIX_CHECK {
                // Once diverged, the window holds the first differing row:
                // no further check (a read per row) is needed.
                if self.stored_hash(seq)?[..] == row.hash[..] {
                    self.prefix.clear();
                    self.prefix_start = seq + 1;
                } else {
                    self.diverged = true;
                }
            }
            return Ok(false);
        }
        if matches!(&row.content, SqlValue::Blob(b) if b.len() >= LARGE_ROW) {
            self.flush()?;
            self.insert_large(seq, row)?;
            return Ok(true);
        }
        self.pending.push((seq, row));
        if self.pending.len() == INSERT_BATCH {
            self.flush()?;
        }
        Ok(true)
    }

    /// Insert a large row alone, its content written into the row in
    /// pieces after it is inserted as zeros: SQLite copies a value bound to
    /// a statement, then again into the record it inserts, where this
    /// costs the content once.
    fn insert_large(&mut self, seq: u64, mut row: EncodedRow) -> Result<()> {
        if let Some(index) = &mut self.index {
            index.add(seq, std::mem::take(&mut row.entries))?;
        }
        let SqlValue::Blob(content) = &row.content else {
            unreachable!("a large row's content is a BLOB");
        };
        Self::bind_shared(&mut self.one, &self.task_id, self.source_id)?;
        Self::bind(&mut self.one, 0, seq, &row)?;
        self.one
            .raw_bind_parameter(3 + 6, rusqlite::blob::ZeroBlob(content.len() as u64))?;
        self.one.raw_execute()?;
        let rowid = self.tx.tx.last_insert_rowid();
        let mut blob =
            self.tx
                .tx
                .blob_open(rusqlite::MAIN_DB, "task_message", "content", rowid, false)?;
        for (i, piece) in content.chunks(1 << 20).enumerate() {
            blob.write_at(piece, i << 20)?;
        }
        Ok(())
    }

    /// Insert the rows taken so far: a full batch with one statement, fewer
    /// one by one. A read of the task's rows in the transaction sees only
    /// what was flushed.
    pub fn flush(&mut self) -> Result<()> {
        if self.pending.len() == INSERT_BATCH {
            let stmt = match &mut self.many {
                Some(stmt) => stmt,
                none => none.insert(self.tx.tx.prepare_cached(&insert_sql(INSERT_BATCH))?),
            };
            Self::bind_shared(stmt, &self.task_id, self.source_id)?;
            for (r, (seq, row)) in self.pending.iter().enumerate() {
                Self::bind(stmt, r, *seq, row)?;
            }
            stmt.raw_execute()?;
        } else {
            Self::bind_shared(&mut self.one, &self.task_id, self.source_id)?;
            for (seq, row) in &self.pending {
                Self::bind(&mut self.one, 0, *seq, row)?;
                self.one.raw_execute()?;
            }
        }
        for (seq, row) in self.pending.drain(..) {
            if let Some(index) = &mut self.index {
                index.add(seq, row.entries)?;
            }
        }
        Ok(())
    }

    /// The parameters every row of [`insert_sql`] shares.
    fn bind_shared(
        stmt: &mut rusqlite::Statement<'_>,
        task_id: &str,
        source_id: Option<i64>,
    ) -> Result<()> {
        stmt.raw_bind_parameter(1, task_id)?;
        stmt.raw_bind_parameter(2, source_id)?;
        Ok(())
    }

    /// Row `r`'s own parameters of [`insert_sql`].
    fn bind(
        stmt: &mut rusqlite::Statement<'_>,
        r: usize,
        seq: u64,
        row: &EncodedRow,
    ) -> Result<()> {
        let p = 3 + ROW_PARAMS * r;
        stmt.raw_bind_parameter(p, seq as i64)?;
        stmt.raw_bind_parameter(p + 1, row.role)?;
        stmt.raw_bind_parameter(p + 2, row.kind)?;
        stmt.raw_bind_parameter(p + 3, row.turn)?;
        stmt.raw_bind_parameter(p + 4, row.step)?;
        stmt.raw_bind_parameter(p + 5, &row.gen_id)?;
        stmt.raw_bind_parameter(p + 6, &row.content)?;
        stmt.raw_bind_parameter(p + 7, row.encoding)?;
        stmt.raw_bind_parameter(p + 8, &row.usage)?;
        stmt.raw_bind_parameter(p + 9, row.line as i64)?;
        stmt.raw_bind_parameter(p + 10, &row.source_uuid)?;
        stmt.raw_bind_parameter(p + 11, &row.timestamp)?;
        stmt.raw_bind_parameter(p + 12, &row.hash[..])?;
        Ok(())
    }

    /// The chain hash the store holds for row `seq` of the task.
    fn stored_hash(&self, seq: u64) -> Result<Vec<u8>> {
        Ok(self.tx.tx.query_row(
            "SELECT row_hash FROM task_message WHERE task_id = ?1 AND seq = ?2",
            params![self.task_id, seq as i64],
            |r| r.get(0),
        )?)
    }

    /// What the rows did, or [`StoreError::Diverged`] when they do not
    /// extend (or are not a prefix of) the stored ones.
    pub fn finish(mut self) -> Result<AppendOutcome> {
        self.flush()?;
        let n = self.seen;
        if !self.diverged && n > 0 && n < self.stored {
            self.diverged = self.stored_hash(n - 1)?[..] != self.last[..];
        }
        if self.diverged {
            return Err(StoreError::Diverged {
                row: self
                    .tx
                    .first_divergence(&self.task_id, self.prefix_start, &self.prefix)?,
                task: self.task_id,
            });
        }
        Ok(AppendOutcome {
            already: n.min(self.stored),
            added: n.saturating_sub(self.stored),
        })
    }
}

impl Tx<'_> {
    /// Insert or refresh a task's descriptive row (known fields are never blanked).
    pub fn upsert_task(&self, t: &TaskInfo) -> Result<()> {
        self.tx.execute(
            "INSERT INTO task (id, format, parent_id, session_id, agent_id, cwd, model, cli_version, title,
               context_window, git_branch)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT(id) DO UPDATE SET
               parent_id = coalesce(excluded.parent_id, parent_id),
               session_id = coalesce(excluded.session_id, session_id),
               agent_id = coalesce(excluded.agent_id, agent_id),
               cwd = coalesce(excluded.cwd, cwd),
               model = coalesce(excluded.model, model),
               cli_version = coalesce(excluded.cli_version, cli_version),
               title = coalesce(excluded.title, title),
               context_window = coalesce(excluded.context_window, context_window),
               git_branch = coalesce(excluded.git_branch, git_branch)",
            params![
                t.id,
                t.format,
                t.parent_id,
                t.meta.session_id,
                t.meta.agent_id,
                t.meta.cwd,
                t.meta.model,
                t.meta.cli_version,
                t.meta.title,
                t.meta.context_window.map(|w| w as i64),
                t.meta.git_branch
            ],
        )?;
        Ok(())
    }

    /// Record a source file and what of it was consumed; returns its id.
    pub fn upsert_source(
        &self,
        path: &str,
        format: Format,
        bytes: u64,
        lines: u64,
        hash: &[u8; 32],
    ) -> Result<i64> {
        self.tx.execute(
            "INSERT INTO import_source (path, format, bytes, lines, hash) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(path) DO UPDATE SET format = excluded.format, bytes = excluded.bytes,
               lines = excluded.lines, hash = excluded.hash",
            params![path, format.as_str(), bytes as i64, lines as i64, &hash[..]],
        )?;
        Ok(self.tx.query_row(
            "SELECT id FROM import_source WHERE path = ?1",
            [path],
            |r| r.get(0),
        )?)
    }

    /// Record the size and modification time a source had when it was read
    /// (`None`: unknown, so the next import reads it again).
    pub fn set_source_stat(&self, path: &str, stat: Option<(u64, i64)>) -> Result<()> {
        self.tx.execute(
            "UPDATE import_source SET file_bytes = ?2, mtime_ns = ?3 WHERE path = ?1",
            params![path, stat.map(|s| s.0 as i64), stat.map(|s| s.1)],
        )?;
        Ok(())
    }

    /// Append a task's parsed rows. The rows must extend what is stored: the
    /// stored rows are compared with the parsed prefix by their chain hash, the
    /// rest is appended. Re-importing the same file adds nothing; a grown file
    /// adds its new rows; a rewritten one is refused.
    ///
    /// The rows go through two stages on two threads: one serialises,
    /// hashes and compresses them ([`RowEncoder`]), the other (this one, which
    /// holds the transaction) inserts them ([`RowWriter`]). A bounded channel
    /// of small batches joins them, so the encoded form of only a few batches
    /// is in memory.
    pub fn append_messages(
        &self,
        task_id: &str,
        source_id: Option<i64>,
        msgs: &[Message],
    ) -> Result<AppendOutcome> {
        let mut writer = self.row_writer(task_id, source_id)?;
        let enc = RowEncoder::new(writer.stored()).indexing(writer.indexes());
        std::thread::scope(|scope| -> Result<AppendOutcome> {
            let (send, batches) = std::sync::mpsc::sync_channel::<Vec<EncodedRow>>(PIPELINE_DEPTH);
            scope.spawn(move || encode_rows(msgs, enc, send));
            // Dropping the receiver on an error stops the encoder at its next batch.
            for batch in batches {
                for row in batch {
                    writer.push(row)?;
                }
            }
            writer.finish()
        })
    }

    /// Append `msgs` after the rows stored for `task_id`, their chain hashes
    /// going on from the last stored row's: for a recorder that holds only
    /// what is new (the live proxy), where an import passes the whole file.
    /// Returns how many rows the task holds now.
    pub fn append_rows(&self, task_id: &str, msgs: &[Message]) -> Result<u64> {
        self.append_encoded(task_id, |enc, writer| {
            for m in msgs {
                writer.push(enc.encode(m))?;
            }
            Ok(())
        })
    }

    /// [`Tx::append_rows`] of rows given up: each is let go as it is
    /// encoded (a large row's blocks, JSON and stored form are never all
    /// held at once).
    pub fn append_owned_rows(&self, task_id: &str, msgs: Vec<Message>) -> Result<u64> {
        self.append_encoded(task_id, |enc, writer| {
            for m in msgs {
                writer.push(enc.encode_owned(m))?;
            }
            Ok(())
        })
    }

    fn append_encoded(
        &self,
        task_id: &str,
        push: impl FnOnce(&mut RowEncoder, &mut RowWriter<'_>) -> Result<()>,
    ) -> Result<u64> {
        let mut writer = self.row_writer(task_id, None)?;
        let mut enc = RowEncoder::new(0).indexing(writer.indexes());
        if let Ok(prev) = <[u8; 32]>::try_from(&writer.last_stored[..]) {
            enc.prev = prev;
        }
        writer.seen = writer.stored;
        push(&mut enc, &mut writer)?;
        let stored = writer.stored;
        let outcome = writer.finish()?;
        Ok(stored + outcome.added)
    }

    /// A writer of `task_id`'s rows in file order (see [`RowWriter`]).
    pub fn row_writer(&self, task_id: &str, source_id: Option<i64>) -> Result<RowWriter<'_>> {
        let (stored, last_stored): (u64, Option<Vec<u8>>) = self.tx.query_row(
            "SELECT count(*), (SELECT row_hash FROM task_message WHERE task_id = ?1 ORDER BY seq DESC LIMIT 1)
             FROM task_message WHERE task_id = ?1",
            [task_id],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
        )?;
        Ok(RowWriter {
            tx: Tx {
                tx: self.tx,
                search: self.search,
                deferred: self.deferred,
            },
            one: self.tx.prepare_cached(&insert_sql(1))?,
            many: None,
            pending: Vec::with_capacity(INSERT_BATCH),
            task_id: task_id.to_string(),
            source_id,
            stored,
            last_stored: last_stored.unwrap_or_default(),
            prefix: Vec::new(),
            prefix_start: 0,
            seen: 0,
            last: [0u8; 32],
            diverged: false,
            index: self.index_writer(task_id)?,
        })
    }

    /// The first stored row from `start` on that `chain` (the chain hashes
    /// of the file's rows from `start` on) does not hold.
    fn first_divergence(&self, task_id: &str, start: u64, chain: &[[u8; 32]]) -> Result<u64> {
        let mut stmt = self.tx.prepare(
            "SELECT seq, row_hash FROM task_message WHERE task_id = ?1 AND seq >= ?2 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![task_id, start as i64], |r| {
            Ok((r.get::<_, i64>(0)? as u64, r.get::<_, Vec<u8>>(1)?))
        })?;
        for row in rows {
            let (seq, h) = row?;
            match chain.get((seq - start) as usize) {
                Some(c) if c[..] == h[..] => continue,
                _ => return Ok(seq),
            }
        }
        Ok(start + chain.len() as u64)
    }
}

/// Compute a task's figures from its messages (in order).
pub fn stats_of<'a>(msgs: impl Iterator<Item = &'a Message>) -> TaskStats {
    let mut st = TaskStats::default();
    let mut usage_by_gen: HashMap<&str, Usage> = HashMap::new();
    let mut calls: HashMap<&str, bool> = HashMap::new();
    for m in msgs {
        st.rows += 1;
        if m.role != Role::Meta {
            st.messages += 1;
        }
        st.turns = st.turns.max(u64::from(m.turn));
        if m.kind == Kind::Generation {
            // Steps are numbered 1.. per generation by the task builder.
            st.steps = st.steps.max(u64::from(m.step));
        }
        if let (Some(u), Some(g)) = (&m.usage, m.gen_id.as_deref()) {
            // The last usage written for a generation is its final one.
            usage_by_gen.insert(g, *u);
        }
        for b in &m.content {
            match b {
                Block::ToolUse { id, .. } if m.kind == Kind::Generation => {
                    st.tool_calls += 1;
                    calls.entry(id).or_insert(false);
                }
                Block::ToolResult { tool_use_id, .. } => {
                    match calls.get_mut(tool_use_id.as_str()) {
                        Some(answered) if !*answered => *answered = true,
                        _ => st.orphan_tool_results += 1,
                    }
                }
                _ => {}
            }
        }
        if let Some(ts) = &m.timestamp {
            if st.first_timestamp.as_ref().is_none_or(|f| ts < f) {
                st.first_timestamp = Some(ts.clone());
            }
            if st.last_timestamp.as_ref().is_none_or(|l| ts > l) {
                st.last_timestamp = Some(ts.clone());
            }
        }
    }
    st.interrupted_tool_calls = calls.values().filter(|a| !**a).count() as u64;
    for u in usage_by_gen.values() {
        st.usage.add(u);
    }
    st
}

/// The `task` table's columns that [`TaskInfo::from_row`] reads (by name).
const TASK_COLUMNS: &str = "id, format, parent_id, session_id, agent_id, cwd, model, cli_version, title, context_window, git_branch";

impl TaskInfo {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskInfo> {
        Ok(TaskInfo {
            id: r.get("id")?,
            format: r.get("format")?,
            parent_id: r.get("parent_id")?,
            meta: TaskMeta {
                session_id: r.get("session_id")?,
                agent_id: r.get("agent_id")?,
                cwd: r.get("cwd")?,
                model: r.get("model")?,
                cli_version: r.get("cli_version")?,
                title: r.get("title")?,
                context_window: r
                    .get::<_, Option<i64>>("context_window")?
                    .and_then(|w| u64::try_from(w).ok()),
                git_branch: r.get("git_branch")?,
            },
        })
    }
}

/// The columns of a `task_message` row (`m`, joined with its `import_source`
/// `s`) that [`StoredMessage::from_row`] reads, by position (a lookup by
/// name costs a search of the column names per value, per row).
const MESSAGE_COLUMNS: &str = "m.seq AS seq, m.role AS role, m.kind AS kind, m.turn AS turn,
    m.step AS step, m.gen_id AS gen_id, m.content AS content,
    m.content_encoding AS content_encoding, m.usage AS usage, s.path AS source_path,
    m.source_line AS source_line, m.source_uuid AS source_uuid, m.timestamp AS timestamp";

impl StoredMessage {
    /// A row of [`MESSAGE_COLUMNS`] of task `task_id`, decoded; a value the
    /// store should never hold is [`StoreError::Corrupt`].
    fn from_row(task_id: &str, r: &rusqlite::Row<'_>) -> Result<StoredMessage> {
        let seq: i64 = r.get(0)?;
        let corrupt = |what: &str| StoreError::Corrupt(format!("task {task_id} row {seq}: {what}"));
        let role: String = r.get(1)?;
        let role = Role::parse(&role).ok_or_else(|| corrupt(&format!("unknown role {role:?}")))?;
        let kind: String = r.get(2)?;
        let kind = Kind::parse(&kind).ok_or_else(|| corrupt(&format!("unknown kind {kind:?}")))?;
        let encoding: String = r.get(7)?;
        let bytes = match r.get_ref(6)? {
            ValueRef::Text(b) | ValueRef::Blob(b) => b,
            other => return Err(corrupt(&format!("content is {}", other.data_type()))),
        };
        let content = match decode_content(&encoding, bytes).map_err(|e| corrupt(&e))? {
            // Decompressed: its buffer may become the row's largest text.
            Cow::Owned(json) => blocks_from_owned_json(json),
            Cow::Borrowed(json) => blocks_from_json(json),
        }
        .map_err(|e| corrupt(&format!("content: {e}")))?;
        let usage: Option<Usage> = match r.get::<_, Option<String>>(8)? {
            Some(u) => Some(serde_json::from_str(&u).map_err(|e| corrupt(&format!("usage: {e}")))?),
            None => None,
        };
        Ok(StoredMessage {
            seq: seq as u64,
            source_path: r.get(9)?,
            message: Message {
                role,
                kind,
                content,
                gen_id: r.get(5)?,
                usage,
                line: r.get::<_, i64>(10)? as u64,
                source_uuid: r.get(11)?,
                timestamp: r.get(12)?,
                turn: r.get(3)?,
                step: r.get(4)?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reused encoder writes the bytes `lz4_flex::compress_prepend_size`
    /// writes, whatever came before: rows of every size, a large one (its
    /// own table) between small ones, and one that does not shrink.
    #[test]
    fn the_reused_lz4_encoder_writes_the_librarys_bytes() {
        let text = |n: usize| -> String {
            (0..n)
                .map(|i| char::from(b'a' + ((i * 7 + i / 13) % 26) as u8))
                .collect()
        };
        let mut lz4 = Lz4::new();
        for n in [40, 2_000, 70_000, 300, 66_000, 5, 65_534, 65_535, 1_000] {
            let json = serde_json::to_string(&vec![text(n); 3]).unwrap();
            let packed = lz4_flex::compress_prepend_size(json.as_bytes());
            let expected = (packed.len() < json.len()).then_some(packed);
            let got = match lz4.compress(json.as_bytes()) {
                Some((CONTENT_LZ4, SqlValue::Blob(b))) => Some(b),
                None => None,
                Some(other) => panic!("unexpected {other:?}"),
            };
            assert_eq!(got, expected, "{n}");
            if let Some(b) = got {
                assert_eq!(decode_content(CONTENT_LZ4, &b).unwrap(), json.as_bytes());
            }
        }
        assert!(lz4.compress(b"[]").is_none());
    }

    /// The usage JSON written directly is serde's, to the last digit.
    #[test]
    fn usage_json_is_what_serde_writes() {
        for (a, b, c, d) in [
            (0, 0, 0, 0),
            (1, 22, 333, 4_444),
            (u64::MAX, 9, u64::MAX - 1, 10_000_000_000),
        ] {
            let u = Usage {
                input_tokens: a,
                output_tokens: b,
                cache_read_input_tokens: c,
                cache_creation_input_tokens: d,
            };
            assert_eq!(
                usage_json(&Some(u)).unwrap(),
                serde_json::to_string(&u).unwrap()
            );
        }
        assert_eq!(usage_json(&None), None);
    }

    /// A large row is written into its row in pieces: one that shrinks as
    /// an LZ4 block, one that does not as a BLOB of its JSON; both read
    /// back as given, between small rows written as ever, the chain the
    /// same as `chain_of`'s.
    #[test]
    fn a_large_row_is_stored_in_pieces_and_read_back_whole() {
        let mut s = super::super::Store::open(&super::super::DbLocation::Memory).unwrap();
        let mut rng = 7u64;
        let noise: String = (0..(LARGE_ROW + 4_000))
            .map(|_| {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from(b'!' + (rng >> 58) as u8)
            })
            .collect();
        let big = |text: String| Message::new(Role::User, Kind::Ask, vec![Block::Text { text }], 1);
        let mut rows = varied_rows(3);
        rows.insert(1, big("line of a pasted file\n".repeat(LARGE_ROW / 10)));
        rows.push(big(noise));
        rows.extend(varied_rows(2));
        let total = s
            .transaction(|tx| tx.append_owned_rows("t", rows.clone()))
            .unwrap();
        assert_eq!(total, rows.len() as u64);
        assert_eq!(s.reader().task_rows("t").unwrap(), rows);
        let stored: Vec<(String, String)> = s
            .conn
            .prepare("SELECT content_encoding, typeof(content) FROM task_message WHERE task_id = 't' ORDER BY seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(stored[1], (CONTENT_LZ4.to_string(), "blob".to_string()));
        assert_eq!(stored[4], (CONTENT_JSON.to_string(), "blob".to_string()));
        let hashes: Vec<Vec<u8>> = s
            .conn
            .prepare("SELECT row_hash FROM task_message WHERE task_id = 't' ORDER BY seq")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let chain: Vec<Vec<u8>> = chain_of(&rows).iter().map(|h| h.to_vec()).collect();
        assert_eq!(hashes, chain);
    }

    /// A given-up row's largest text, escaped in place into its JSON, gives
    /// the bytes `content_json` gives, wherever that text sits (a text, a
    /// thinking with its signature after it, a tool output among blocks, an
    /// image's data) and whatever it holds: escapes, control characters and
    /// characters of several bytes across the pieces it is escaped in.
    #[test]
    fn a_large_text_escaped_in_place_is_the_rows_json() {
        use crate::model::{ImageSource, ToolContent};
        let mut text = String::new();
        let mut i = 0u32;
        while text.len() < LARGE_ROW + 3 * ESCAPE_PIECE {
            text.push_str(match i % 7 {
                0 => "a \"quoted\" \\path\\ ",
                1 => "\n\t\r\u{1}\u{1f}\u{7f}",
                2 => "é",
                3 => "日本語",
                4 => "🦀",
                5 => "</script>",
                _ => "plain words ",
            });
            i += 1;
        }
        // The first character boundary at or after `n`.
        let cut = |n: usize| (n..).find(|&i| text.is_char_boundary(i)).unwrap();
        let small = |t: &str| Block::Text {
            text: t.to_string(),
        };
        let shapes: Vec<Box<dyn Fn(String) -> Vec<Block>>> = vec![
            Box::new(|t| vec![Block::Text { text: t }]),
            Box::new(move |t| {
                vec![
                    small("before"),
                    Block::Thinking {
                        thinking: t,
                        signature: Some("sig\"".into()),
                    },
                    small("after"),
                ]
            }),
            Box::new(move |t| {
                vec![Block::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: ToolContent::Blocks(vec![small("x"), small(&t), small("y")]),
                    is_error: true,
                }]
            }),
            Box::new(|t| {
                vec![Block::Image {
                    source: ImageSource {
                        kind: "base64".into(),
                        media_type: Some("image/png".into()),
                        data: Some(t),
                        url: None,
                    },
                }]
            }),
        ];
        for (n, shape) in shapes.iter().enumerate() {
            for t in [text.clone(), text[..cut(LARGE_ROW)].to_string()] {
                let m = Message::new(Role::User, Kind::Ask, shape(t), 1);
                let expected = m.content_json();
                let mut enc = RowEncoder::new(0);
                let mut content = m.content.clone();
                assert!(enc.serialize_in_place(&mut content), "{n}");
                assert!(
                    enc.json == expected.as_bytes(),
                    "shape {n}: the JSON escaped in place differs"
                );
            }
        }
        // A row with no large text is left to `serialize`.
        let mut enc = RowEncoder::new(0);
        let under = (0..LARGE_ROW)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap();
        let mut content = vec![small(&text[..under])];
        assert!(!enc.serialize_in_place(&mut content));
        assert_eq!(content, vec![small(&text[..under])]);
    }

    /// `n` rows of every shape a row takes: metadata present and absent,
    /// usage or none, content that compresses and content too small to.
    fn varied_rows(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| {
                let text = match i % 3 {
                    0 => "ok".to_string(),
                    _ => format!("row {i}: ").repeat(20 + i % 7),
                };
                let (role, kind) = match i % 4 {
                    0 => (Role::User, Kind::Ask),
                    3 => (Role::User, Kind::ToolResult),
                    _ => (Role::Assistant, Kind::Generation),
                };
                let mut m = Message::new(role, kind, vec![Block::Text { text }], i as u64 + 1);
                m.gen_id = (i % 4 != 0).then(|| format!("msg_{}", i / 4));
                m.source_uuid = (i % 5 != 0).then(|| format!("uuid-{i}"));
                m.timestamp = (i % 6 != 0).then(|| format!("2026-01-01T00:00:{:02}Z", i % 60));
                m.usage = (i % 4 == 2).then_some(Usage {
                    input_tokens: i as u64,
                    output_tokens: 7,
                    cache_read_input_tokens: 1_000 * i as u64,
                    cache_creation_input_tokens: 0,
                });
                m.turn = (i / 10) as u32;
                m.step = (i / 4) as u32;
                m
            })
            .collect()
    }

    /// Rows inserted a batch at a time and the rest one by one, across
    /// imports of a growing file, are the rows given, numbered and chained
    /// in order, their content stored as `encode_content` stores it; a
    /// flush makes the rows taken so far readable in the transaction.
    #[test]
    fn rows_inserted_in_batches_are_the_rows_given_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut s =
            super::super::Store::open(&super::super::DbLocation::File(dir.path().join("s.db")))
                .unwrap();
        let n = 3 * INSERT_BATCH + 5;
        let rows = varied_rows(n + INSERT_BATCH + 2);
        for upto in [n, n, n + INSERT_BATCH + 2] {
            let outcome = s
                .transaction(|tx| tx.append_messages("t", None, &rows[..upto]))
                .unwrap();
            assert_eq!(outcome.added + outcome.already, upto as u64);
        }
        let stored = s.reader().task_rows("t").unwrap();
        assert_eq!(stored, rows);
        let chain = chain_of(&rows);
        let mut stmt = s
            .conn
            .prepare(
                "SELECT seq, rowid, row_hash, content, content_encoding, typeof(content),
                 source_id FROM task_message WHERE task_id = 't' ORDER BY rowid",
            )
            .unwrap();
        let mut q = stmt.query([]).unwrap();
        let mut seq = 0;
        while let Some(r) = q.next().unwrap() {
            assert_eq!(r.get::<_, i64>(0).unwrap(), seq as i64);
            assert_eq!(r.get::<_, i64>(1).unwrap(), seq as i64 + 1);
            assert_eq!(r.get::<_, Vec<u8>>(2).unwrap(), chain[seq].to_vec());
            let (encoding, value) = encode_content(rows[seq].content_json());
            assert_eq!(r.get::<_, SqlValue>(3).unwrap(), value, "row {seq}");
            assert_eq!(r.get::<_, String>(4).unwrap(), encoding);
            let ty = if encoding == CONTENT_LZ4 {
                "blob"
            } else {
                "text"
            };
            assert_eq!(r.get::<_, String>(5).unwrap(), ty);
            assert_eq!(r.get::<_, Option<i64>>(6).unwrap(), None);
            seq += 1;
        }
        assert_eq!(seq, rows.len());
        drop(q);
        drop(stmt);

        // Rows taken are readable once flushed, and a part batch is
        // inserted at `finish`.
        let more = varied_rows(INSERT_BATCH + 3);
        s.transaction(|tx| -> Result<()> {
            let mut writer = tx.row_writer("u", None)?;
            let mut enc = RowEncoder::new(0);
            for m in &more[..3] {
                assert!(writer.push(enc.encode(m))?);
            }
            assert_eq!(tx.reader().message_count("u")?, 0);
            writer.flush()?;
            assert_eq!(tx.reader().message_count("u")?, 3);
            for m in &more[3..] {
                writer.push(enc.encode(m))?;
            }
            assert_eq!(writer.finish()?.added, more.len() as u64);
            Ok(())
        })
        .unwrap();
        assert_eq!(s.reader().task_rows("u").unwrap(), more);
    }

    #[test]
    fn the_last_row_of_some_kinds_is_found_by_its_seq() {
        let mut s = super::super::Store::open_memory().unwrap();
        let rows = varied_rows(12);
        s.transaction(|tx| -> Result<()> {
            let mut writer = tx.row_writer("u", None)?;
            let mut enc = RowEncoder::new(0);
            for m in &rows {
                writer.push(enc.encode(m))?;
            }
            writer.finish()?;
            Ok(())
        })
        .unwrap();
        let r = s.reader();
        // Asks at 0, 4, 8; tool results at 3, 7, 11.
        assert_eq!(r.last_seq_of_kinds("u", &[Kind::Ask]).unwrap(), Some(8));
        assert_eq!(
            r.last_seq_of_kinds("u", &[Kind::Ask, Kind::ToolResult])
                .unwrap(),
            Some(11)
        );
        assert_eq!(
            r.last_seq_of_kinds("u", &[Kind::CompactBoundary]).unwrap(),
            None
        );
        assert_eq!(r.last_seq_of_kinds("u", &[]).unwrap(), None);
        assert_eq!(r.last_seq_of_kinds("other", &[Kind::Ask]).unwrap(), None);
    }
}
