//! What the search index holds of a row: one entry per block a model would
//! want to find again (a user's ask, the assistant's text, a tool call's
//! input, a tool's output or error, a client's compaction summary), each
//! in the column of its kind, its text bounded and normalised.
//!
//! Pure: the same row gives the same entries, so an index rebuilt from the
//! record equals the one kept as the record grew, and a hit's snippet is
//! made from the very text that was indexed.
//!
//! - **Bounded.** A long text is indexed by its head and its tail (an
//!   error is most often in the first or the last lines of an output), so
//!   the cost of the index grows with the number of entries, not with the
//!   size of the largest output: see [`Limits`].
//! - **Normalised here, not by FTS5.** An entry is handed to the index as
//!   its terms, separated by spaces, which FTS5's `ascii` tokenizer takes
//!   as they are: a word is a run of letters and digits (so
//!   `tenant_registry` and `src/store/raw.rs` are several words),
//!   lower-cased, and stemmed by Porter's algorithm (`porter.rs`:
//!   `migrations` and `migration` are one term); after them come the words
//!   of each mixed-case identifier (`TranscriptRenderer` adds `transcript
//!   render`), once per entry. This runs on the importer's encoding thread,
//!   beside the one that holds the transaction, and costs a fraction of
//!   FTS5's own `porter unicode61` tokenizer (BENCHMARKS.md, "Search"). A
//!   query's words go through the same [`Normaliser`] (`query.rs`).

use std::borrow::Cow;

use crate::model::{Block, Kind, Message, ToolContent};

/// The index's columns, one per kind of entry, in the table's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Column {
    /// What the user asked (a real ask: it starts a turn).
    Ask,
    /// What the assistant wrote (its text, not its reasoning).
    Answer,
    /// A tool call's input (its command, path or pattern) or a tool's output.
    Tool,
    /// A tool's output that the tool marked as an error.
    Error,
    /// A summary: the client's own compaction summary, or a line of a floor
    /// summary compactor made.
    Summary,
}

impl Column {
    pub const ALL: [Column; 5] = [
        Column::Ask,
        Column::Answer,
        Column::Tool,
        Column::Error,
        Column::Summary,
    ];

    /// Its name: the table's column, `--kind`'s value and JSON's `kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Column::Ask => "ask",
            Column::Answer => "answer",
            Column::Tool => "tool",
            Column::Error => "error",
            Column::Summary => "summary",
        }
    }

    pub fn parse(s: &str) -> Option<Column> {
        Column::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Its position among the table's columns.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How much of a long text is indexed: its first `head` and last `tail`
/// bytes (each cut at a character boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub head: usize,
    pub tail: usize,
}

/// What a person or a model wrote: asks, answers and summaries. A pasted
/// document past 40 KB is indexed by its ends.
pub const PROSE: Limits = Limits {
    head: 32 * 1024,
    tail: 8 * 1024,
};
/// A tool call's input: the command, the path and the pattern come first;
/// a file written whole (`Write`'s content) is indexed by its ends.
pub const TOOL_INPUT: Limits = Limits {
    head: 256,
    tail: 128,
};
/// A tool's output: its first and last lines, where a command's first
/// error, a test's summary and a file's head are. Tool inputs and outputs
/// are most of an index's terms (nine in ten on the 11,200-call session),
/// each about 1,500 instructions of an import; index version 3 halved both
/// bounds with the same recall (BENCHMARKS.md, "Search"), and the whole
/// output is a `view_tool_call` away.
pub const TOOL_OUTPUT: Limits = Limits {
    head: 128,
    tail: 64,
};
/// A tool's output the tool marked as an error: more of it, as errors are
/// what is searched for most, and are few.
pub const ERROR_OUTPUT: Limits = Limits {
    head: 2048,
    tail: 512,
};

/// The most entries a row's blocks give: blocks past it are not indexed
/// (an entry's number is 12 bits of its rowid).
pub const MAX_ENTRIES: usize = 4096;

/// One entry of a row: its block's position in the row, its column and the
/// terms indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub entry: u16,
    pub column: Column,
    /// The entry's terms, separated by spaces (see the module's doc).
    pub terms: String,
}

/// What a row's block is to the index, before its text is taken.
enum Source<'a> {
    Prose(Column, &'a str),
    Input(&'a str, &'a serde_json::Value),
    Output(bool, &'a ToolContent),
}

fn source<'a>(kind: Kind, b: &'a Block) -> Option<Source<'a>> {
    match (kind, b) {
        (Kind::Ask, Block::Text { text }) => Some(Source::Prose(Column::Ask, text)),
        (Kind::Generation, Block::Text { text }) => Some(Source::Prose(Column::Answer, text)),
        (Kind::CompactSummary | Kind::CarriedSummary, Block::Text { text }) => {
            Some(Source::Prose(Column::Summary, text))
        }
        (Kind::Generation, Block::ToolUse { name, input, .. }) => Some(Source::Input(name, input)),
        (
            _,
            Block::ToolResult {
                content, is_error, ..
            },
        ) => Some(Source::Output(*is_error, content)),
        _ => None,
    }
}

/// The entries of a row, in block order.
pub fn entries(m: &Message, norm: &mut Normaliser) -> Vec<Entry> {
    let mut out = Vec::new();
    for (i, b) in m.content.iter().enumerate().take(MAX_ENTRIES) {
        let Some((column, text)) = text_of(m.kind, b) else {
            continue;
        };
        let mut terms = String::new();
        norm.terms(&text, &mut terms);
        if !terms.is_empty() {
            out.push(Entry {
                entry: i as u16,
                column,
                terms,
            });
        }
    }
    out
}

/// The text block `entry` of a row was indexed from (bounded as it was),
/// and its column: what a hit on it shows.
pub fn entry_text(m: &Message, entry: u16) -> Option<(Column, Cow<'_, str>)> {
    text_of(m.kind, m.content.get(usize::from(entry))?)
}

fn text_of(kind: Kind, b: &Block) -> Option<(Column, Cow<'_, str>)> {
    Some(match source(kind, b)? {
        Source::Prose(column, text) => (column, bounded(text, PROSE)),
        Source::Input(name, input) => (Column::Tool, Cow::Owned(input_text(name, input))),
        Source::Output(is_error, content) => (
            if is_error {
                Column::Error
            } else {
                Column::Tool
            },
            output_text(content, is_error),
        ),
    })
}

/// A tool call's input as indexed: the tool's name, then each string of
/// its input (the command, the path, the pattern, the text written) on a
/// line, the whole bounded by [`TOOL_INPUT`].
fn input_text(name: &str, input: &serde_json::Value) -> String {
    let mut pieces = vec![name];
    crate::engine::toolfacts::strings_into(input, &mut pieces);
    joined_bounded(&pieces, TOOL_INPUT)
}

/// A tool's output as indexed: its text (images left out), bounded by
/// [`TOOL_OUTPUT`] ([`ERROR_OUTPUT`] for an error), without copying more
/// than that of a long output.
fn output_text(content: &ToolContent, is_error: bool) -> Cow<'_, str> {
    let limits = if is_error { ERROR_OUTPUT } else { TOOL_OUTPUT };
    match content {
        ToolContent::Text(s) => match codex_output(s) {
            Some(inner) => Cow::Owned(unescaped(&bounded(inner, limits))),
            None => bounded(s, limits),
        },
        ToolContent::Blocks(blocks) => {
            let pieces: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            Cow::Owned(joined_bounded(&pieces, limits))
        }
    }
}

/// The output a Codex CLI tool result wraps in JSON
/// (`{"output":"…","metadata":{…}}`), still escaped: its text is what a
/// search is for, not the escapes (`\n` would glue a line's last word to
/// the next line's first).
fn codex_output(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("{\"output\":\"")?;
    let end = inner.rfind("\",\"metadata\":").unwrap_or(inner.len());
    Some(&inner[..end])
}

/// A JSON string's escapes undone (`\n`, `\t`, `\"`, `\\`, `\/`, `\uXXXX`);
/// an escape cut short at either end of a bounded text is dropped.
fn unescaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    // The text between escapes is copied whole.
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let mut chars = rest[at + 1..].chars();
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    out.push(c);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
        rest = chars.as_str();
    }
    out.push_str(rest);
    out
}

/// `pieces` joined by newlines and [`bounded`], copying only the head and
/// the tail of a long whole.
fn joined_bounded(pieces: &[&str], limits: Limits) -> String {
    let total = pieces
        .iter()
        .map(|p| p.len() + 1)
        .sum::<usize>()
        .saturating_sub(1);
    if total <= limits.head + limits.tail + 8 {
        return pieces.join("\n");
    }
    let mut head = String::with_capacity(limits.head + limits.tail + 8);
    for (i, p) in pieces.iter().enumerate() {
        if i > 0 {
            head.push('\n');
        }
        let room = limits.head.saturating_sub(head.len());
        if p.len() >= room {
            head.push_str(&p[..floor_boundary(p, room)]);
            break;
        }
        head.push_str(p);
    }
    let mut tail: Vec<&str> = Vec::new();
    let mut len = 0;
    for p in pieces.iter().rev() {
        let room = limits.tail.saturating_sub(len);
        if p.len() >= room {
            tail.push(&p[ceil_boundary(p, p.len() - room)..]);
            break;
        }
        tail.push(p);
        len += p.len() + 1;
    }
    tail.reverse();
    head.push_str("\n…\n");
    head.push_str(&tail.join("\n"));
    head
}

/// `text` whole when it fits `limits`, else its head and its tail joined
/// by a line `…`.
pub fn bounded(text: &str, limits: Limits) -> Cow<'_, str> {
    if text.len() <= limits.head + limits.tail + 8 {
        return Cow::Borrowed(text);
    }
    let head = &text[..floor_boundary(text, limits.head)];
    let tail = &text[ceil_boundary(text, text.len() - limits.tail)..];
    let mut out = String::with_capacity(head.len() + "\n…\n".len() + tail.len());
    out.push_str(head);
    out.push_str("\n…\n");
    out.push_str(tail);
    Cow::Owned(out)
}

/// The largest character boundary of `s` at or before `at`.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of `s` at or after `at`.
fn ceil_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The longest identifier whose words are added: past it, a run of letters
/// is a hash or an encoded blob, not a name.
const IDENTIFIER_MAX: usize = 64;
/// The longest word indexed, in bytes: a longer run of letters and digits
/// (base64, a minified line) is no word anyone searches for.
pub const TERM_MAX: usize = 64;
/// The stems a [`Normaliser`] remembers: a direct-mapped table of this many
/// slots (a word's hash picks its slot; a new word takes it over).
const STEM_BITS: u32 = 13;
const STEM_SLOTS: usize = 1 << STEM_BITS;
/// The longest word whose stem is remembered, in bytes: three 8-byte
/// numbers (longer ones are stemmed each time: they are rare).
const STEM_KEY: usize = 24;

/// One remembered word and its stem, as numbers: the word's bytes,
/// lower-cased and padded with zeros to [`STEM_KEY`] (`[0..3]`), its
/// stem's bytes padded the same (`[3..6]`), and the stem's length (`[6]`:
/// 0 for a stop word, which has none). A slot never used holds no word:
/// zeros are no word's bytes. Eight-byte numbers, compared and copied as
/// numbers: all zeros, so a table of them is allocated zeroed.
type StemSlot = [u64; 7];

/// A word of at most [`STEM_KEY`] ASCII letters as the stem table keys it.
type Key = [u64; 3];

/// Turns text into the index's terms (see the module's doc). It remembers
/// the stems of the words it met, which changes only its speed: the terms
/// are a function of the text.
pub struct Normaliser {
    stems: Box<[StemSlot]>,
    word: Vec<u8>,
    stem: Vec<u8>,
    /// The mixed-case identifiers of the text being read: byte ranges.
    identifiers: Vec<(usize, usize)>,
    split: String,
}

/// The stem tables of the [`Normaliser`]s dropped, taken again by the next
/// ones: a table is 448 KB to allocate and zero, and one that remembers
/// stems stems fewer words again (an import makes a [`Normaliser`] for each
/// task it stores, a search one for each query). The terms do not depend
/// on what a table holds. At most [`TABLES_KEPT`] are kept (1.8 MB).
static TABLES: std::sync::Mutex<Vec<Box<[StemSlot]>>> = std::sync::Mutex::new(Vec::new());
const TABLES_KEPT: usize = 4;

impl Drop for Normaliser {
    fn drop(&mut self) {
        let stems = std::mem::take(&mut self.stems);
        if stems.len() == STEM_SLOTS
            && let Ok(mut kept) = TABLES.lock()
            && kept.len() < TABLES_KEPT
        {
            kept.push(stems);
        }
    }
}

impl Default for Normaliser {
    fn default() -> Normaliser {
        let kept = TABLES.lock().ok().and_then(|mut kept| kept.pop());
        Normaliser {
            stems: kept.unwrap_or_else(|| vec![[0u64; 7]; STEM_SLOTS].into_boxed_slice()),
            word: Vec::new(),
            stem: Vec::new(),
            identifiers: Vec::new(),
            split: String::new(),
        }
    }
}

impl Normaliser {
    pub fn new() -> Normaliser {
        Normaliser::default()
    }

    /// Append `text`'s terms to `out`, separated by spaces, then the words
    /// of its mixed-case identifiers.
    pub fn terms(&mut self, text: &str, out: &mut String) {
        // Built as bytes, checked as UTF-8 once at the end: the terms are
        // ASCII stems and lower-cased runs of whole characters.
        let mut bytes = std::mem::take(out).into_bytes();
        self.identifiers.clear();
        // The terms are most often shorter than the text; a remembered
        // stem is copied as its [`STEM_KEY`] bytes, then cut.
        bytes.reserve(text.len() + STEM_KEY + 1);
        let b = text.as_bytes();
        let n = b.len();
        let mut i = 0;
        while i < n {
            i = separators_end(b, i);
            if i == n {
                break;
            }
            // A run of letters and digits: which classes it holds, and
            // whether a lower-case letter or a digit is followed by an
            // upper-case one (a camel-case identifier).
            let start = i;
            let mut seen = 0u8;
            let mut camel = false;
            let mut prev = SEP;
            // How many upper-case letters came last (`HTTPServer` is
            // mixed-case at its `Se`).
            let mut uppers = 0u32;
            while i < n {
                let c = CLASS[usize::from(b[i])];
                if c == LOWER {
                    // Lower-case letters, most of any text, eight at a
                    // time: after the first, they change neither the case
                    // nor a camel.
                    camel |= uppers >= 2;
                    uppers = 0;
                    i = lower_end(b, i + 1);
                    seen |= 1 << LOWER;
                    prev = LOWER;
                    continue;
                }
                if c == SEP {
                    break;
                }
                if c == HIGH {
                    let ch = text[i..].chars().next().expect("a char starts here");
                    if !is_word_char(ch) {
                        break;
                    }
                    i += ch.len_utf8();
                    seen |= 1 << HIGH;
                    prev = SEP;
                    continue;
                }
                camel |= c == UPPER && (prev == LOWER || prev == DIGIT);
                uppers = if c == UPPER { uppers + 1 } else { 0 };
                seen |= 1 << c;
                prev = c;
                i += 1;
            }
            if i == start {
                // A character that is neither ASCII nor a letter or digit.
                i += text[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            if seen & (1 << HIGH) != 0 {
                // Past ASCII: no identifier, and never stemmed.
                push_lowered(&text[start..i], &mut bytes);
                continue;
            }
            self.push_ascii(b, start, i, seen, &mut bytes);
            // Mixed-case ([`is_mixed_case`]): the scan saw it.
            let run = &b[start..i];
            let identifier = camel && run.len() <= IDENTIFIER_MAX;
            if identifier && !self.identifiers.iter().any(|&(s, e)| &b[s..e] == run) {
                self.identifiers.push((start, i));
            }
        }
        for k in 0..self.identifiers.len() {
            let (s, e) = self.identifiers[k];
            let mut split = std::mem::take(&mut self.split);
            split.clear();
            split_identifier(&text[s..e], &mut split);
            let w = split.as_bytes();
            let mut at = 0;
            while at < w.len() {
                let end = w[at..]
                    .iter()
                    .position(|&c| c == b' ')
                    .map_or(w.len(), |p| at + p);
                self.push_ascii(w, at, end, classes(&w[at..end]), &mut bytes);
                at = end + 1;
            }
            self.split = split;
        }
        *out = String::from_utf8(bytes).expect("terms are whole characters");
    }

    /// Append the term of the run of ASCII letters and digits `b[start..end]`,
    /// whose classes are `seen` (bits of [`CLASS`]'s values): nothing for a
    /// stop word. Most runs are a word of letters met before: its stem is
    /// remembered, and found here without a call.
    #[inline(always)]
    fn push_ascii(&mut self, b: &[u8], start: usize, end: usize, seen: u8, out: &mut Vec<u8>) {
        let len = end - start;
        if seen & (1 << DIGIT) != 0 && seen & !(1 << LOWER | 1 << UPPER | 1 << DIGIT) == 0 {
            // Not stemmed, and no stop word: a word with digits.
            if len <= TERM_MAX {
                push_space(out);
                out.extend(b[start..end].iter().map(u8::to_ascii_lowercase));
            }
            return;
        }
        if seen & !(1 << LOWER | 1 << UPPER) != 0 || len > STEM_KEY {
            // Digits (not stemmed), a long word, or what no run of the
            // text holds (a query's word): not remembered.
            self.push_plain(&b[start..end], out);
            return;
        }
        if len <= 2 {
            // Not stemmed: a short word.
            let run = &b[start..end];
            if !is_short_stop_word(run) {
                push_space(out);
                out.extend(run.iter().map(u8::to_ascii_lowercase));
            }
            return;
        }
        let key = key_of(b, start, len);
        let slot = slot_of(&key);
        let s = &self.stems[slot];
        if [s[0], s[1], s[2]] == key {
            // A stop word is remembered with no stem.
            let stem_len = s[6] as usize;
            if stem_len > 0 {
                push_space(out);
                let mark = out.len();
                out.extend_from_slice(&bytes_of([s[3], s[4], s[5]]));
                out.truncate(mark + stem_len);
            }
            return;
        }
        self.remember(key, len, slot, out);
    }

    /// Append the term of a word of `len` letters not remembered (its
    /// [`key_of`]), and remember it in `slot`.
    #[inline(never)]
    fn remember(&mut self, key: Key, len: usize, slot: usize, out: &mut Vec<u8>) {
        let word = bytes_of(key);
        let word = &word[..len];
        if is_stop_word(word) {
            self.stem.clear();
        } else {
            super::porter::stem(word, &mut self.stem);
            push_space(out);
            out.extend_from_slice(&self.stem);
        }
        let mut stem = [0u8; STEM_KEY];
        stem[..self.stem.len()].copy_from_slice(&self.stem);
        let stem = key_from(&stem);
        self.stems[slot] = [
            key[0],
            key[1],
            key[2],
            stem[0],
            stem[1],
            stem[2],
            self.stem.len() as u64,
        ];
    }

    /// [`Normaliser::push_ascii`] of a run not remembered: lower-cased,
    /// then stemmed when it is letters only, nothing when a stop word.
    #[inline(never)]
    fn push_plain(&mut self, run: &[u8], out: &mut Vec<u8>) {
        if run.len() > TERM_MAX {
            return;
        }
        self.word.clear();
        self.word.extend(run.iter().map(u8::to_ascii_lowercase));
        if is_stop_word(&self.word) {
            return;
        }
        push_space(out);
        if run.len() <= 2 || !run.iter().all(u8::is_ascii_alphabetic) {
            out.extend_from_slice(&self.word);
        } else {
            super::porter::stem(&self.word, &mut self.stem);
            out.extend_from_slice(&self.stem);
        }
    }

    /// The term of one word (a run of letters and digits) as a query
    /// holds it.
    pub fn term(&mut self, run: &str) -> String {
        let mut out = Vec::new();
        if !run.is_ascii() {
            push_lowered(run, &mut out);
        } else {
            let b = run.as_bytes();
            self.push_ascii(b, 0, b.len(), classes(b), &mut out);
        }
        String::from_utf8(out).expect("a term is whole characters")
    }
}

/// Whether `c`, past ASCII, is a letter or a digit
/// ([`char::is_alphanumeric`]), answered at once for the blocks that hold
/// neither and that transcripts hold most: dashes, quotes and bullets, the
/// arrow of a file read's numbered lines (`42→`), box drawing and shapes
/// (a test checks them against the standard library's tables).
fn is_word_char(c: char) -> bool {
    !matches!(u32::from(c), 0x2010..=0x206F | 0x218A..=0x245F | 0x2500..=0x2775)
        && c.is_alphanumeric()
}

/// A space before a term that is not the first.
fn push_space(out: &mut Vec<u8>) {
    if !out.is_empty() {
        out.push(b' ');
    }
}

/// Append a run holding characters past ASCII, lower-cased (never stemmed,
/// never a stop word); nothing when it is longer than [`TERM_MAX`].
fn push_lowered(run: &str, out: &mut Vec<u8>) {
    if run.len() > TERM_MAX {
        return;
    }
    push_space(out);
    let mut buf = [0u8; 4];
    for c in run.chars().flat_map(char::to_lowercase) {
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}

/// Eight bytes, each `0x01`: a number's bytes all at once (`0x20 * ONES`
/// is `0x20` in every byte).
const ONES: u64 = u64::MAX / 255;
const HIGH_BITS: u64 = 0x80 * ONES;

/// The first `len` (1 to 8) bytes of `b` from `at`, as a little-endian
/// number whose bytes past them are zeros.
#[inline(always)]
fn load(b: &[u8], at: usize, len: usize) -> u64 {
    match b.get(at..at + 8) {
        Some(eight) => u64::from_le_bytes(eight.try_into().expect("8 bytes")) & mask(len),
        None => b[at..at + len]
            .iter()
            .rev()
            .fold(0, |w, &c| w << 8 | u64::from(c)),
    }
}

/// The bits of a number's first `len` (1 to 8) bytes.
#[inline(always)]
fn mask(len: usize) -> u64 {
    u64::MAX >> (64 - 8 * len)
}

/// The stem table's key of the run of `len` (3 to [`STEM_KEY`]) ASCII
/// letters at `b[start..]`: its bytes lower-cased (a letter's case is its
/// bit `0x20`), eight to a number, zeros past them.
#[inline(always)]
fn key_of(b: &[u8], start: usize, len: usize) -> Key {
    let lower = |at: usize, n: usize| load(b, start + at, n) | ((0x20 * ONES) & mask(n));
    if len <= 8 {
        [lower(0, len), 0, 0]
    } else if len <= 16 {
        [lower(0, 8), lower(8, len - 8), 0]
    } else {
        [lower(0, 8), lower(8, 8), lower(16, len - 16)]
    }
}

/// The slot of the stem table a key takes (FxHash's multiplier: a word
/// that collides costs only speed).
#[inline(always)]
fn slot_of(key: &Key) -> usize {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let h = (key[0] ^ key[1].rotate_left(21) ^ key[2].rotate_left(42)).wrapping_mul(K);
    (h >> (64 - STEM_BITS)) as usize
}

fn bytes_of(key: Key) -> [u8; STEM_KEY] {
    let mut out = [0u8; STEM_KEY];
    for (chunk, w) in out.chunks_exact_mut(8).zip(key) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    out
}

fn key_from(bytes: &[u8; STEM_KEY]) -> Key {
    let mut key = [0u64; 3];
    for (w, chunk) in key.iter_mut().zip(bytes.chunks_exact(8)) {
        *w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
    }
    key
}

/// The end of the lower-case ASCII letters of `b` from `i`: eight bytes
/// at a time, a byte being a letter when, its high bit clear, adding
/// `0x80 - b'a'` sets it and adding `0x80 - b'z' - 1` does not (no sum
/// carries into the next byte: each is below `0x100`).
fn lower_end(b: &[u8], mut i: usize) -> usize {
    while let Some(eight) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
        let y = x & !HIGH_BITS;
        let lower = y.wrapping_add((0x80 - u64::from(b'a')) * ONES)
            & !y.wrapping_add((0x80 - u64::from(b'z') - 1) * ONES)
            & !x
            & HIGH_BITS;
        let other = !lower & HIGH_BITS;
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i].is_ascii_lowercase() {
        i += 1;
    }
    i
}

/// The end of the separators of `b` from `i`: up to four a byte at a time
/// (most often one or two: a space, a comma and a space), then eight at a
/// time (a line's indentation, a rule of dashes), a byte being no
/// separator when it has its high bit set, or is a digit, or a letter once
/// `0x20` is set in it (see [`lower_end`] for a range of bytes tested at
/// once).
fn separators_end(b: &[u8], mut i: usize) -> usize {
    for _ in 0..4 {
        if i < b.len() && CLASS[usize::from(b[i])] == SEP {
            i += 1;
        } else {
            return i;
        }
    }
    let in_range = |y: u64, first: u8, last: u8| {
        y.wrapping_add((0x80 - u64::from(first)) * ONES)
            & !y.wrapping_add((0x80 - u64::from(last) - 1) * ONES)
    };
    while let Some(eight) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
        let y = x & !HIGH_BITS;
        let word = in_range(y, b'0', b'9') | in_range(y | (0x20 * ONES), b'a', b'z') | x;
        let word = word & HIGH_BITS;
        if word != 0 {
            return i + (word.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && CLASS[usize::from(b[i])] == SEP {
        i += 1;
    }
    i
}

/// Words that carry no meaning of their own in a search: they are not
/// indexed, and a query's words do not count them (a phrase is matched
/// without them: `"out of memory"` is `"memory"`'s phrase, and a phrase's
/// words meet across one the text held). Negations are not among them:
/// "never touch the migrations" is a rule because of `never`.
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
    "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from",
    "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
    "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "of",
    "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "would", "you", "your", "yours",
];

/// The longest stop word, in bytes.
const STOP_WORD_MAX: usize = 7;

/// Whether `w` (lower case) is a stop word. It compares numbers: each
/// stop word's bytes and length packed into one (a word of at most
/// [`STOP_WORD_MAX`] bytes is one), sorted when the program is built.
pub fn is_stop_word(w: &[u8]) -> bool {
    w.len() <= STOP_WORD_MAX && STOP_KEYS.binary_search(&packed(w)).is_ok()
}

/// A word of at most 7 bytes as one number: its bytes, then its length.
const fn packed(w: &[u8]) -> u64 {
    let mut k = w.len() as u64;
    let mut i = 0;
    while i < w.len() {
        k = k << 8 | w[i] as u64;
        i += 1;
    }
    k
}

/// The stop words [`packed`], in order.
static STOP_KEYS: [u64; STOP_WORDS.len()] = {
    let mut keys = [0u64; STOP_WORDS.len()];
    let mut i = 0;
    while i < keys.len() {
        let k = packed(STOP_WORDS[i].as_bytes());
        // Insertion sort: the list is short, and sorted once.
        let mut j = i;
        while j > 0 && keys[j - 1] > k {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = k;
        i += 1;
    }
    keys
};

/// The stop words of one or two letters, as bits: bit 26 of `[x]` is the
/// word `x`, bit `y - b'a'` of `[x]` the word `xy`.
static SHORT_STOP_WORDS: [u32; 26] = {
    let mut t = [0u32; 26];
    let mut i = 0;
    while i < STOP_WORDS.len() {
        let w = STOP_WORDS[i].as_bytes();
        if w.len() == 1 {
            t[(w[0] - b'a') as usize] |= 1 << 26;
        } else if w.len() == 2 {
            t[(w[0] - b'a') as usize] |= 1 << (w[1] - b'a');
        }
        i += 1;
    }
    t
};

/// Whether a run of one or two ASCII letters, of either case, is a stop
/// word: a table lookup, where [`is_stop_word`] searches.
fn is_short_stop_word(run: &[u8]) -> bool {
    let letter = |c: u8| usize::from((c | 0x20).wrapping_sub(b'a'));
    let bit = run.get(1).map_or(26, |&c| letter(c));
    SHORT_STOP_WORDS
        .get(letter(run[0]))
        .is_some_and(|&bits| bit < 32 && bits >> bit & 1 != 0)
}

/// What a byte is to the tokenizer: a separator (ASCII that is no letter
/// or digit), a lower-case or upper-case ASCII letter, an ASCII digit, or
/// part of a character past ASCII (a letter or not: decoded to know).
const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 3;
const HIGH: u8 = 4;

static CLASS: [u8; 256] = {
    let mut t = [SEP; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            0x80..=0xff => HIGH,
            _ => SEP,
        };
        c += 1;
    }
    t
};

/// The classes of a run's bytes, as bits.
fn classes(run: &[u8]) -> u8 {
    run.iter()
        .fold(0, |seen, &c| seen | 1 << CLASS[usize::from(c)])
}

/// Whether a run of ASCII letters and digits changes from a lower-case to
/// an upper-case letter somewhere (`parseArgs`, `TranscriptRenderer`,
/// `HTTPServer`).
pub fn is_mixed_case(run: &str) -> bool {
    let b = run.as_bytes();
    b.windows(2)
        .any(|w| (w[0].is_ascii_lowercase() || w[0].is_ascii_digit()) && w[1].is_ascii_uppercase())
        || b.windows(3).any(|w| {
            w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase() && w[2].is_ascii_lowercase()
        })
}

/// The words of a mixed-case identifier, lower-cased, separated by spaces,
/// appended to `out`: a word starts at an upper-case letter after a
/// lower-case letter or a digit, and at the last upper-case letter of a
/// run of them before a lower-case one (`HTTPServer` → `http server`).
pub fn split_identifier(run: &str, out: &mut String) {
    let b = run.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            let prev = b[i - 1];
            let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push(' ');
            }
        }
        out.push(c.to_ascii_lowercase() as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use serde_json::json;

    fn split(s: &str) -> String {
        let mut out = String::new();
        split_identifier(s, &mut out);
        out
    }

    /// The terms as the module's doc states them, written plainly: the
    /// runs of letters and digits, each lower-cased, stemmed unless short
    /// or holding digits or non-ASCII, stop words and overlong runs left
    /// out; then the words of each distinct mixed-case identifier.
    fn reference_terms(text: &str) -> String {
        fn term(run: &str, out: &mut Vec<String>) {
            if run.len() > TERM_MAX {
                return;
            }
            if !run.is_ascii() {
                out.push(run.chars().flat_map(char::to_lowercase).collect());
                return;
            }
            let lower = run.to_ascii_lowercase();
            if run.bytes().any(|b| b.is_ascii_digit()) {
                out.push(lower);
            } else if !is_stop_word(lower.as_bytes()) {
                let mut stem = Vec::new();
                super::super::porter::stem(lower.as_bytes(), &mut stem);
                out.push(String::from_utf8(stem).unwrap());
            }
        }
        let runs: Vec<&str> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|r| !r.is_empty())
            .collect();
        let mut out = Vec::new();
        for run in &runs {
            term(run, &mut out);
        }
        let mut identifiers: Vec<&str> = Vec::new();
        for run in runs {
            if run.is_ascii()
                && run.len() <= IDENTIFIER_MAX
                && is_mixed_case(run)
                && !identifiers.contains(&run)
            {
                identifiers.push(run);
            }
        }
        for id in identifiers {
            let mut split = String::new();
            split_identifier(id, &mut split);
            for w in split.split(' ') {
                term(w, &mut out);
            }
        }
        out.join(" ")
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// The scanner's shortcuts (a class table, a run of lower-case
        /// letters at a time, remembered stems and stop words) make the
        /// terms the plain reading makes, whatever the stems remembered.
        #[test]
        fn the_terms_are_those_of_the_plain_reading(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("[a-zA-Z0-9]{1,12}").unwrap(),
                    proptest::string::string_regex("[ _./:()\\-]{1,3}").unwrap(),
                    proptest::sample::select(vec![
                        "The", "of", "THE", "because", "TranscriptRenderer", "HTTPServer",
                        "utf8Decode", "tenant_registry", "Migrations", "failing", "é", "Straße",
                        "İstanbul", "naïve", "—", "«x»", "日本語", "x2Y", "aB", "ßA",
                    ]).prop_map(|w: &str| w.to_string()),
                ],
                0..40,
            )
        ) {
            let text: String = pieces.concat();
            let mut n = Normaliser::new();
            let mut first = String::new();
            n.terms(&text, &mut first);
            proptest::prop_assert_eq!(&first, &reference_terms(&text));
            let mut again = String::new();
            n.terms(&text, &mut again);
            proptest::prop_assert_eq!(first, again);
        }
    }

    /// The scanner's fast paths at their edges, against the plain
    /// reading: runs of every length around the eight bytes read at once
    /// and the [`STEM_KEY`] bytes remembered, of each case, at the text's
    /// end or before each kind of byte, after separators as many as make
    /// the eight-at-a-time skip start and stop anywhere; each text read
    /// twice (the second time from the remembered stems).
    #[test]
    fn the_fast_paths_make_the_terms_of_the_plain_reading_at_their_edges() {
        let mut n = Normaliser::new();
        for len in 1..=TERM_MAX + 2 {
            let lower: String = "relationalizingness".chars().cycle().take(len).collect();
            let mut capital = lower.clone();
            capital[..1].make_ascii_uppercase();
            let mut camel = lower.clone();
            camel[len / 2..].make_ascii_uppercase();
            for word in [lower.clone(), lower.to_ascii_uppercase(), capital, camel] {
                for (before, after) in [
                    ("", ""),
                    (" ", " x"),
                    ("   ", "9"),
                    ("          ", "Q"),
                    ("\t-_", "é"),
                    ("é ", "_b"),
                    ("- - - - - - - - - - - - - -", "—x"),
                    ("0", "@[`{~"),
                ] {
                    let text = format!("{before}{word}{after}");
                    for _ in 0..2 {
                        let mut got = String::new();
                        n.terms(&text, &mut got);
                        assert_eq!(got, reference_terms(&text), "{text:?}");
                    }
                }
            }
        }
        // Every separator ASCII has, and every byte a run may hold.
        let all: String = (0u8..128).map(char::from).collect();
        let mut got = String::new();
        n.terms(&all, &mut got);
        assert_eq!(got, reference_terms(&all));
        assert_eq!(
            got,
            "0123456789 abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz"
        );
        // A query's word is a term as the text's is.
        for w in [
            "Migrations",
            "of",
            "OF",
            "X2",
            "Straße",
            "ab",
            "Ab",
            "RELATIONAL",
        ] {
            assert_eq!(n.term(w), reference_terms(w), "{w}");
        }
    }

    #[test]
    fn the_blocks_answered_at_once_hold_no_letter_or_digit() {
        for range in [0x2010..=0x206F, 0x218A..=0x245F, 0x2500..=0x2775] {
            for c in range.filter_map(char::from_u32) {
                assert!(!c.is_alphanumeric(), "{c:?}");
                assert!(!is_word_char(c));
            }
        }
        for c in ['é', 'ß', '日', 'Ⅻ', '❶', '²', 'ⁱ'] {
            assert_eq!(is_word_char(c), c.is_alphanumeric(), "{c:?}");
        }
        assert_eq!(terms("1→fn main() → 42│x ─── a—b"), "1 fn main 42 x b");
    }

    #[test]
    fn the_stop_word_list_is_sorted_for_its_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
        assert_eq!(
            STOP_WORDS.iter().map(|w| w.len()).max(),
            Some(STOP_WORD_MAX)
        );
        assert!(is_stop_word(b"the") && is_stop_word(b"because"));
        assert!(!is_stop_word(b"never") && !is_stop_word(b"not") && !is_stop_word(b"no"));
    }

    #[test]
    fn stop_words_are_not_indexed_and_a_remembered_one_stays_out() {
        let mut n = Normaliser::new();
        let mut a = String::new();
        n.terms("The cache of THE Loader and the CacheOfTheLoader", &mut a);
        assert_eq!(a, "cach loader cacheoftheload cach loader");
        // The second time the words come from the remembered stems.
        let mut b = String::new();
        n.terms("The cache of THE Loader and the CacheOfTheLoader", &mut b);
        assert_eq!(a, b);
        assert_eq!(n.term("Because"), "");
        assert_eq!(n.term("of"), "");
        let mut c = String::new();
        n.terms("the of and", &mut c);
        assert_eq!(c, "");
    }

    #[test]
    fn identifiers_split_into_their_words() {
        assert_eq!(split("TranscriptRenderer"), "transcript renderer");
        assert_eq!(split("parseArgs"), "parse args");
        assert_eq!(split("HTTPServer"), "http server");
        assert_eq!(split("utf8Decode"), "utf8 decode");
        assert!(is_mixed_case("TranscriptRenderer"));
        assert!(is_mixed_case("HTTPServer"));
        assert!(!is_mixed_case("tenant_registry"));
        assert!(!is_mixed_case("Renderer"));
        assert!(!is_mixed_case("HTTP"));
    }

    fn terms(text: &str) -> String {
        let mut out = String::new();
        Normaliser::new().terms(text, &mut out);
        out
    }

    #[test]
    fn text_becomes_lower_case_stems_then_identifier_words() {
        assert_eq!(
            terms("Never touch the migrations: tenant_registry, TranscriptRenderer!"),
            "never touch migrat tenant registri transcriptrender transcript render"
        );
        // Paths and flags split; digits and non-ASCII words are kept whole.
        assert_eq!(
            terms("src/store/raw.rs --set-upstream"),
            "src store raw rs set upstream"
        );
        assert_eq!(terms("UTF8 café Ünïcode E0308"), "utf8 café ünïcode e0308");
        // An identifier's words once, however often it appears.
        assert_eq!(terms("parseArgs(parseArgs)"), "parsearg parsearg pars arg");
        // A run past the longest term is no term.
        assert_eq!(
            terms(&format!("ok {} ok", "x".repeat(TERM_MAX + 1))),
            "ok ok"
        );
        // Punctuation outside ASCII separates words.
        assert_eq!(terms("x—b «c»"), "x b c");
        // The same text gives the same terms whatever the cache holds.
        let mut n = Normaliser::new();
        let mut a = String::new();
        n.terms("failing tests failed", &mut a);
        let mut b = String::new();
        n.terms("failing tests failed", &mut b);
        assert_eq!(a, b);
        assert_eq!(a, "fail test fail");
        assert_eq!(n.term("Migrations"), "migrat");
    }

    #[test]
    fn a_rows_blocks_become_entries_in_their_columns() {
        let mut norm = Normaliser::new();
        let mut ask = Message::new(
            Role::User,
            Kind::Ask,
            vec![Block::Text {
                text: "Keep the TranscriptRenderer and the tenant_registry".into(),
            }],
            1,
        );
        ask.turn = 1;
        let e = entries(&ask, &mut norm);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].column, Column::Ask);
        assert_eq!(
            e[0].terms,
            "keep transcriptrender tenant registri transcript render"
        );
        let (column, text) = entry_text(&ask, 0).unwrap();
        assert_eq!(
            (column, &*text),
            (
                Column::Ask,
                "Keep the TranscriptRenderer and the tenant_registry"
            )
        );
        let call = Message::tool_call(
            "toolu_1",
            "Bash",
            json!({"command": "git push", "description": "push"}),
            2,
        );
        let e = entries(&call, &mut norm);
        assert_eq!(
            (e[0].column, e[0].terms.as_str()),
            (Column::Tool, "bash git push push")
        );
        let out = Message::tool_result(
            "toolu_1".into(),
            ToolContent::Text("fatal: no upstream branch".into()),
            true,
            3,
        );
        let e = entries(&out, &mut norm);
        assert_eq!(e[0].column, Column::Error);
        assert_eq!(entry_text(&out, 0).map(|(c, _)| c), Some(Column::Error));
        assert_eq!(entry_text(&out, 1), None);
        // Thinking, context and text without words are not indexed.
        let mut answer = Message::new(
            Role::Assistant,
            Kind::Generation,
            vec![
                Block::Thinking {
                    thinking: "hmm".into(),
                    signature: None,
                },
                Block::Text {
                    text: " ?! ".into(),
                },
                Block::Text {
                    text: "Done.".into(),
                },
            ],
            4,
        );
        answer.step = 1;
        let e = entries(&answer, &mut norm);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].entry, e[0].column), (2, Column::Answer));
        let ctx = Message::new(
            Role::User,
            Kind::Context,
            vec![Block::Text {
                text: "<system-reminder>".into(),
            }],
            5,
        );
        assert!(entries(&ctx, &mut norm).is_empty());
    }

    #[test]
    fn a_codex_output_is_indexed_unescaped() {
        let raw = r#"{"output":"Traceback:\n  File \"run.py\"\nTimeoutError: tenant \u00e9","metadata":{"exit_code":1}}"#;
        let out = Message::tool_result("call_1".into(), ToolContent::Text(raw.into()), true, 1);
        let (_, text) = entry_text(&out, 0).unwrap();
        assert_eq!(
            text,
            "Traceback:\n  File \"run.py\"\nTimeoutError: tenant é"
        );
        // Anything else is indexed as it is.
        assert_eq!(unescaped("a\\nb"), "a\nb");
        // An escape cut short at the end is dropped; the text between
        // escapes is kept whole, past ASCII too.
        assert_eq!(unescaped("é\\t«x»\\"), "é\t«x»");
        assert_eq!(unescaped("x\\u"), "x");
        assert_eq!(unescaped("\\\\\\/\\u00e9"), "\\/é");
        assert_eq!(codex_output("{\"other\":1}"), None);
    }

    #[test]
    fn a_long_output_is_indexed_by_its_head_and_its_tail() {
        let body: String = (0..2000).map(|i| format!("line {i} é\n")).collect();
        let text = format!("HEADWORD\n{body}TAILWORD");
        let b = bounded(&text, TOOL_OUTPUT);
        assert!(b.len() <= TOOL_OUTPUT.head + TOOL_OUTPUT.tail + 8);
        assert!(b.starts_with("HEADWORD\n") && b.ends_with("TAILWORD"));
        assert!(b.contains("\n…\n"));
        // Short texts are kept whole, borrowed.
        assert!(matches!(
            bounded("short", TOOL_OUTPUT),
            Cow::Borrowed("short")
        ));
        // A huge input is cut without copying it whole.
        let big = "x".repeat(1 << 20);
        let t = input_text("Write", &json!({"file_path": "a.rs", "content": big}));
        assert!(
            t.starts_with("Write\nxxx") && t.ends_with("xxx\na.rs"),
            "{}",
            &t[..20]
        );
        assert!(t.len() <= TOOL_INPUT.head + TOOL_INPUT.tail + 8);
    }
}
