//! A view's probe text, built from per-block pieces cached across calls.
//!
//! `view_text` strips controls from and normalises the whole view at every
//! call, though most blocks repeat from one call to the next. Here each block's
//! piece (its text and the `\n` that follows it in `view_text`) is cleaned
//! once and kept with its block (a block is looked for first where it
//! follows the block before it in the latest view, then by a hash of its
//! text), and the view's text is the cleaned pieces joined. The join is exactly `view_text`'s result:
//!
//! - Controls: `strip_controls` of a concatenation is the concatenation of the
//!   pieces' results when each piece ends with the scanner in its ground state
//!   (every piece ends with `\n`, so the scanner never peeks past it). A piece
//!   is checked: one without `ESC` or `U+009B` starts no sequence; one with
//!   them is open at its end exactly when a character appended to it is
//!   swallowed (`strip(p + "Z") != strip(p) + "Z"`: an open CSI takes `Z` as
//!   its final byte, an open string takes it as content). A view with an open
//!   piece falls back to `view_text`.
//! - Whitespace: the tokens of `a + b` are those of `a` and of `b`, except that
//!   `a`'s last and `b`'s first token join when no whitespace separates them.
//!   Each piece keeps whether its cleaned text starts or ends with whitespace
//!   (a whitespace-only piece separates its neighbours).
//!
//! Only the pieces of the latest view are kept, so the cache holds one view.
//!
//! Scoring is incremental too. A probe's texts (expected, `also`, pointer)
//! are searched in units: each piece's text, and each junction, the stretch of
//! the view's text from the last `width` bytes of a long piece (at least
//! `width` bytes) over the short pieces after it to the first `width` bytes of
//! the next long piece (or from the view's start, or to its end). `width`
//! exceeds every text searched, so an occurrence not inside one piece lies
//! inside the junction around the boundaries it crosses, and every unit is a
//! stretch of the view's text, so what a unit holds the view holds. A unit
//! keeps its id (never reused) while it stays in consecutive views. A text
//! found in a unit remembers it (its witness) and is found at no cost while
//! the unit stays; one not found remembers that every unit up to an id lacks
//! it, so the next call searches only the units added since.
//!
//! A pointer counts only as a whole token, taken left to right without
//! overlap (`carries`): a unit finds an occurrence whose next character it
//! holds (a piece) or that ends the view (a junction at the end). Occurrences
//! that can overlap (a pointer with a border, such as `tool:at`) would make the
//! left-to-right taking matter, so such a pointer is judged on the whole text.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use memchr::memmem::Finder;

use crate::engine::clean::{normalise_whitespace, strip_controls};
use crate::model::{Block, ToolContent};
use crate::view::View;

use super::{
    Probe, Tally, Verdict, block_piece, carries, ends_token, judge, tally_with, view_text,
};

/// One block's piece, cleaned.
struct Piece {
    /// Controls stripped, whitespace normalised.
    text: String,
    /// The cleaned (not yet normalised) piece starts / ends with whitespace.
    lead: bool,
    trail: bool,
    /// The control scanner is in its ground state at the piece's end.
    closed: bool,
}

impl Piece {
    fn of(raw: &str) -> Piece {
        let mut with_break = String::with_capacity(raw.len() + 1);
        with_break.push_str(raw);
        with_break.push('\n');
        let stripped = strip_controls(&with_break);
        let closed = !with_break.contains(['\u{1b}', '\u{9b}']) || {
            with_break.push('Z');
            let probe = strip_controls(&with_break);
            probe.len() == stripped.len() + 1 && probe.ends_with('Z')
        };
        Piece {
            text: normalise_whitespace(&stripped),
            lead: stripped.starts_with(char::is_whitespace),
            trail: stripped.ends_with(char::is_whitespace),
            closed,
        }
    }
}

/// A block of the latest view, with its piece and unit id.
struct ViewBlock {
    /// Equal blocks give equal pieces (`block_piece` reads input maps in
    /// key order, the order `Value`'s equality compares them in).
    block: Block,
    piece: Piece,
    id: u64,
    /// `hash_block` of the block.
    hash: u64,
    /// Where it was in the latest view: the next block is likely the one
    /// after it there.
    at: Option<usize>,
}

/// A junction's text and unit id.
struct Junction {
    id: u64,
    text: String,
    /// The text ends where the view's text ends.
    at_end: bool,
}

/// A text probes look for, with what the latest searches found.
struct Needle {
    finder: Finder<'static>,
    empty: bool,
    /// A pointer: found only as a whole token.
    pointer: bool,
    /// A pointer whose occurrences can overlap: judged on the whole text.
    overlaps: bool,
    /// A unit holding it, if one was found.
    witness: Option<u64>,
    /// Without a witness: no unit with a lower id holds it.
    absent_below: u64,
    /// The call whose answer `found` holds.
    call: u64,
    found: bool,
}

impl Needle {
    fn new(text: &str, pointer: bool) -> Needle {
        let b = text.as_bytes();
        Needle {
            finder: Finder::new(b).into_owned(),
            empty: b.is_empty(),
            pointer,
            overlaps: pointer && (1..b.len()).any(|k| b[..k] == b[b.len() - k..]),
            witness: None,
            absent_below: 0,
            call: 0,
            found: false,
        }
    }

    /// Whether a unit's text holds it (a pointer: ending a token there).
    fn in_unit(&self, text: &str, at_end: bool) -> bool {
        if !self.pointer {
            return self.finder.find(text.as_bytes()).is_some();
        }
        let len = self.finder.needle().len();
        let mut from = 0;
        while let Some(k) = self.finder.find(&text.as_bytes()[from..]) {
            let end = from + k + len;
            let whole = match text.get(end..) {
                Some("") => at_end,
                Some(rest) => ends_token(rest),
                None => false,
            };
            if whole {
                return true;
            }
            from += k + 1;
        }
        false
    }
}

/// The needles of one probe.
#[derive(Default)]
struct ProbeNeedles {
    expected: usize,
    also: Vec<usize>,
    pointer: Option<usize>,
}

/// A unit of the view being scored.
#[derive(Clone, Copy)]
enum Unit {
    /// A piece: its slot and id.
    Piece(usize, u64),
    /// A junction: its index in `Units::keys` and its id.
    Junction(usize, u64),
}

impl Unit {
    fn id(self) -> u64 {
        match self {
            Unit::Piece(_, id) | Unit::Junction(_, id) => id,
        }
    }
}

/// The units of the view being scored, in view order.
struct Units {
    order: Vec<Unit>,
    /// The units created for this view (ids from `first_new` on).
    new: Vec<Unit>,
    first_new: u64,
    keys: Vec<Vec<u64>>,
}

/// A junction key's ends: the view's start and end.
const START: u64 = u64::MAX;
const END: u64 = u64::MAX - 1;

/// Scores views call after call, cleaning each distinct block once and
/// searching each probe's texts only where the view changed. Probes can be
/// added between calls (a replay reads them as it reaches their rows).
pub(crate) struct Scorer {
    probes: Vec<Probe>,
    /// The latest probe of each slot (`super::link_slots`).
    latest_of: super::Slots,
    needles: Vec<Needle>,
    /// Each needle's index, by (pointer, text).
    needle_at: BTreeMap<(bool, String), usize>,
    of_probe: Vec<ProbeNeedles>,
    /// The longest text searched and the longest pointer, in bytes.
    longest: usize,
    longest_pointer: usize,
    /// A piece this long is long; junctions reach this far into it.
    width: usize,
    /// The latest view's blocks, in slots (`None`: free).
    slots: Vec<Option<ViewBlock>>,
    free: Vec<usize>,
    /// The slots of the latest view's blocks, in order.
    latest: Vec<usize>,
    /// Slots by `hash_block` (a bucket keeps blocks with equal hashes apart).
    by_hash: HashMap<u64, Vec<usize>, BuildHasherDefault<Mixed>>,
    /// The latest view's junctions, by the units they span.
    junctions: HashMap<Vec<u64>, Junction, BuildHasherDefault<Mixed>>,
    /// Per unit id: the latest call whose view holds it.
    live: Vec<u64>,
    call: u64,
    next_id: u64,
    /// The first id of the call's new units.
    call_first: u64,
}

impl Scorer {
    pub(crate) fn new(probes: Vec<Probe>) -> Scorer {
        let mut scorer = Scorer {
            probes: Vec::new(),
            latest_of: super::Slots::new(),
            needles: Vec::new(),
            needle_at: BTreeMap::new(),
            of_probe: Vec::new(),
            longest: 0,
            longest_pointer: 0,
            width: 0,
            slots: Vec::new(),
            free: Vec::new(),
            latest: Vec::new(),
            by_hash: HashMap::default(),
            junctions: HashMap::default(),
            live: Vec::new(),
            call: 0,
            next_id: 0,
            call_first: 0,
        };
        scorer.add_probes(probes);
        scorer
    }

    /// Score these probes too, from the next view on.
    pub(crate) fn add_probes(&mut self, probes: impl IntoIterator<Item = Probe>) {
        let from = self.probes.len();
        for p in probes {
            let needles = ProbeNeedles {
                expected: self.intern(&p.expected, false),
                also: p.also.iter().map(|a| self.intern(a, false)).collect(),
                pointer: p.pointer.as_deref().map(|t| self.intern(t, true)),
            };
            self.of_probe.push(needles);
            self.probes.push(p);
        }
        super::link_slots(&mut self.probes, from, &mut self.latest_of);
        // Room for a text and the character after it, or for two
        // overlapping pointers.
        let width = self.longest.max(2 * self.longest_pointer) + 8;
        if width > self.width {
            // Junctions are cut to the width: the next view makes them
            // again, under new ids, so no text counts on an old one.
            self.width = width;
            self.junctions.clear();
        }
    }

    /// The needle of a text, made when first asked for.
    fn intern(&mut self, text: &str, pointer: bool) -> usize {
        if pointer {
            self.longest_pointer = self.longest_pointer.max(text.len());
        } else {
            self.longest = self.longest.max(text.len());
        }
        let needles = &mut self.needles;
        *self
            .needle_at
            .entry((pointer, text.to_string()))
            .or_insert_with(|| {
                needles.push(Needle::new(text, pointer));
                needles.len() - 1
            })
    }

    /// The probes scored.
    pub(crate) fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// `evaluate` of the view.
    pub(crate) fn evaluate(&mut self, view: &View, history_rows: usize) -> super::Evaluation {
        let mut t = Tally::default();
        self.tally(view, history_rows, &mut t);
        t.evaluation(&self.probes)
    }

    /// `evaluate` of the view, into `t`.
    pub(crate) fn tally(&mut self, view: &View, history_rows: usize, t: &mut Tally) {
        self.tally_after(view, 0, history_rows, t);
    }

    /// [`Scorer::tally`] of a view whose first `shared` blocks are those of
    /// the latest view scored, which need not be compared again.
    pub(crate) fn tally_after(
        &mut self,
        view: &View,
        shared: usize,
        history_rows: usize,
        t: &mut Tally,
    ) {
        let Some(seq) = self.pieces_of(view, shared) else {
            self.junctions.clear();
            let text = view_text(view);
            tally_with(&self.probes, history_rows, |_, p| judge(p, &text), t);
            return;
        };
        let units = self.units_of(&seq);
        let probes = std::mem::take(&mut self.probes);
        let of_probe = std::mem::take(&mut self.of_probe);
        let mut whole: Option<String> = None;
        tally_with(
            &probes,
            history_rows,
            |i, p| {
                let n = &of_probe[i];
                if self.found(n.expected, &units) || n.also.iter().any(|&a| self.found(a, &units)) {
                    return Verdict::Passed;
                }
                let carried = match (n.pointer, &p.pointer) {
                    (Some(k), Some(ptr)) if self.needles[k].overlaps => {
                        carries(whole.get_or_insert_with(|| self.join(&seq)), ptr)
                    }
                    (Some(k), _) => self.found(k, &units),
                    _ => false,
                };
                if carried {
                    Verdict::Recoverable
                } else {
                    Verdict::Lost
                }
            },
            t,
        );
        self.probes = probes;
        self.of_probe = of_probe;
    }

    /// What `view_text` gives for the view.
    #[cfg(test)]
    pub(crate) fn view_text(&mut self, view: &View) -> String {
        // Junctions are not followed here: drop them (an id is never live again).
        self.junctions.clear();
        match self.pieces_of(view, 0) {
            Some(seq) => self.join(&seq),
            None => view_text(view),
        }
    }

    /// Starts a call: the view's blocks as pieces (`None` when one leaves an
    /// escape sequence open), the pieces of other blocks dropped.
    fn pieces_of(&mut self, view: &View, shared: usize) -> Option<Vec<usize>> {
        self.call += 1;
        self.call_first = self.next_id;
        let latest = std::mem::take(&mut self.latest);
        let mut seq = Vec::with_capacity(latest.len() + 8);
        // Where in the latest view the next block is looked for first.
        let mut next = 0;
        let mut closed = true;
        for (i, b) in view.messages.iter().flat_map(|m| &m.content).enumerate() {
            let same = latest.get(i).filter(|_| i < shared);
            let slot = match same.or_else(|| latest.get(next)) {
                Some(&s) if same.is_some() => {
                    debug_assert!(self.entry(s).block == *b, "block {i} is shared");
                    s
                }
                Some(&s) if self.entry(s).block == *b => s,
                _ => {
                    let h = hash_block(b);
                    let known = self.by_hash.get(&h).and_then(|bucket| {
                        bucket.iter().copied().find(|&s| self.entry(s).block == *b)
                    });
                    known.unwrap_or_else(|| self.insert(h, b))
                }
            };
            let e = self.entry(slot);
            next = e.at.map_or(latest.len(), |at| at + 1);
            closed &= e.piece.closed;
            let id = e.id as usize;
            self.live[id] = self.call;
            seq.push(slot);
        }
        for (slot, e) in self.slots.iter_mut().enumerate() {
            let Some(entry) = e else { continue };
            if self.live[entry.id as usize] == self.call {
                entry.at = None;
                continue;
            }
            if let Some(bucket) = self.by_hash.get_mut(&entry.hash) {
                bucket.retain(|&s| s != slot);
                if bucket.is_empty() {
                    self.by_hash.remove(&entry.hash);
                }
            }
            *e = None;
            self.free.push(slot);
        }
        for (at, &slot) in seq.iter().enumerate() {
            if let Some(e) = &mut self.slots[slot] {
                e.at = Some(at);
            }
        }
        self.latest.clone_from(&seq);
        closed.then_some(seq)
    }

    /// A new block's entry: its slot.
    fn insert(&mut self, hash: u64, block: &Block) -> usize {
        let entry = ViewBlock {
            block: block.clone(),
            piece: Piece::of(&block_piece(block)),
            id: self.next_id,
            hash,
            at: None,
        };
        self.next_id += 1;
        self.live.push(0);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(entry);
                slot
            }
            None => {
                self.slots.push(Some(entry));
                self.slots.len() - 1
            }
        };
        self.by_hash.entry(hash).or_default().push(slot);
        slot
    }

    fn entry(&self, slot: usize) -> &ViewBlock {
        self.slots[slot].as_ref().expect("a live slot")
    }

    fn piece(&self, slot: usize) -> &Piece {
        &self.entry(slot).piece
    }

    /// The view's text: its pieces joined.
    fn join(&self, seq: &[usize]) -> String {
        let pieces: Vec<&Piece> = seq.iter().map(|&s| self.piece(s)).collect();
        let mut out = String::with_capacity(pieces.iter().map(|p| p.text.len() + 1).sum());
        for (i, sep) in separated(&pieces) {
            if sep {
                out.push(' ');
            }
            out.push_str(&pieces[i].text);
        }
        out
    }

    /// The view's units in order, its junctions made (the others dropped).
    fn units_of(&mut self, seq: &[usize]) -> Units {
        let mut units = Units {
            order: Vec::new(),
            new: Vec::new(),
            first_new: self.call_first,
            keys: Vec::new(),
        };
        // The pieces with text, with their separators: (slot, separator).
        let words: Vec<(usize, bool)> = {
            let pieces: Vec<&Piece> = seq.iter().map(|&s| self.piece(s)).collect();
            let words = separated(&pieces);
            words.into_iter().map(|(i, sep)| (seq[i], sep)).collect()
        };
        let ids: Vec<u64> = words.iter().map(|&(s, _)| self.entry(s).id).collect();
        let key_of = |k: usize| ids[k] << 1 | u64::from(words[k].1);
        let n = words.len();
        let mut left: Option<usize> = None;
        for k in 0..=n {
            if k < n && self.piece(words[k].0).text.len() < self.width {
                continue;
            }
            // A junction from `left` (or the start) over the short pieces
            // `lo..k` to `k` (or the end), when it has a boundary or the end.
            let lo = left.map_or(0, |l| l + 1);
            let count = usize::from(left.is_some()) + (k - lo) + usize::from(k < n);
            if count >= 2 || (k == n && count == 1) {
                let mut key = Vec::with_capacity(count + 1);
                key.push(left.map_or(START, |l| ids[l] << 1));
                key.extend((lo..k).map(key_of));
                key.push(if k < n { key_of(k) } else { END });
                let id = match self.junctions.get(&key) {
                    Some(j) => j.id,
                    None => {
                        let j = Junction {
                            id: self.next_id,
                            text: self.window(&words, left, lo..k, (k < n).then_some(k)),
                            at_end: k == n,
                        };
                        self.junctions.insert(key.clone(), j);
                        self.next_id += 1;
                        self.live.push(0);
                        self.next_id - 1
                    }
                };
                self.live[id as usize] = self.call;
                units.order.push(Unit::Junction(units.keys.len(), id));
                units.keys.push(key);
            }
            let upto = if k < n { k + 1 } else { n };
            units
                .order
                .extend((lo..upto).map(|j| Unit::Piece(words[j].0, ids[j])));
            if k < n {
                left = Some(k);
            }
        }
        let (live, call) = (&self.live, self.call);
        self.junctions.retain(|_, j| live[j.id as usize] == call);
        units.new = (units.order.iter().copied())
            .filter(|u| u.id() >= units.first_new)
            .collect();
        units
    }

    /// A junction's text: the end of `left`'s text (or nothing), the
    /// pieces of `run`, the start of `right`'s (or nothing), as joined.
    fn window(
        &self,
        words: &[(usize, bool)],
        left: Option<usize>,
        run: std::ops::Range<usize>,
        right: Option<usize>,
    ) -> String {
        let text = |k: usize| self.piece(words[k].0).text.as_str();
        let mut out = String::new();
        if let Some(l) = left {
            let t = text(l);
            let mut from = t.len() - self.width;
            while !t.is_char_boundary(from) {
                from -= 1;
            }
            out.push_str(&t[from..]);
        }
        for j in run {
            if words[j].1 {
                out.push(' ');
            }
            out.push_str(text(j));
        }
        if let Some(r) = right {
            let t = text(r);
            let mut to = self.width;
            while !t.is_char_boundary(to) {
                to += 1;
            }
            if words[r].1 {
                out.push(' ');
            }
            out.push_str(&t[..to]);
        }
        out
    }

    /// A unit's id and text, and whether the text ends the view's.
    fn unit(&self, u: Unit, units: &Units) -> (u64, &str, bool) {
        match u {
            Unit::Piece(slot, id) => (id, &self.piece(slot).text, false),
            Unit::Junction(k, _) => {
                let j = &self.junctions[&units.keys[k]];
                (j.id, &j.text, j.at_end)
            }
        }
    }

    /// Whether the view being scored holds needle `n`.
    fn found(&mut self, n: usize, units: &Units) -> bool {
        let needle = &self.needles[n];
        if needle.empty {
            return true;
        }
        if needle.call == self.call {
            return needle.found;
        }
        let hit = match needle.witness {
            Some(w) if self.live[w as usize] == self.call => Some(w),
            witness => {
                // Search the units that may hold it: all when its witness
                // left, else those added since it was last searched for.
                let from = if witness.is_some() {
                    0
                } else {
                    needle.absent_below
                };
                let scan = if from >= units.first_new {
                    &units.new
                } else {
                    &units.order
                };
                scan.iter().filter(|u| u.id() >= from).find_map(|&u| {
                    let (id, text, at_end) = self.unit(u, units);
                    needle.in_unit(text, at_end).then_some(id)
                })
            }
        };
        let needle = &mut self.needles[n];
        needle.witness = hit;
        needle.absent_below = self.next_id;
        needle.call = self.call;
        needle.found = hit.is_some();
        needle.found
    }
}

/// The pieces with text, by index, each with whether a space precedes it in
/// the joined text: when whitespace ends the text before it (or fills a
/// piece between) or starts its own, and it is not the first.
fn separated(pieces: &[&Piece]) -> Vec<(usize, bool)> {
    let mut out: Vec<(usize, bool)> = Vec::new();
    // Whitespace since the last text.
    let mut gap = false;
    for (i, p) in pieces.iter().enumerate() {
        if p.text.is_empty() {
            gap |= p.trail;
            continue;
        }
        out.push((i, !out.is_empty() && (gap || p.lead)));
        gap = p.trail;
    }
    out
}

/// `hash_text` of a block's longest strings: a cache key (equal blocks hash
/// equal; a collision costs a comparison).
fn hash_block(b: &Block) -> u64 {
    let (kind, main, other): (u64, &str, &str) = match b {
        Block::Text { text } => (0, text, ""),
        Block::Thinking { thinking, .. } => (1, thinking, ""),
        Block::RedactedThinking { data } => (2, data, ""),
        Block::ToolUse { id, name, .. } => (3, id, name),
        Block::ToolResult {
            tool_use_id,
            content,
            ..
        } => match content {
            ToolContent::Text(t) => (4, t, tool_use_id),
            ToolContent::Blocks(_) => (5, "", tool_use_id),
        },
        Block::Image { .. } => (6, "", ""),
        Block::Other(_) => (7, "", ""),
    };
    hash_text(main) ^ hash_text(other).rotate_left(29) ^ kind
}

/// A 64-bit hash of a text's length and of a sample of its bytes (its ends
/// and 16 evenly spaced words): a cache key, so a collision costs a
/// comparison, never a wrong piece, and hashing costs the same at any length.
fn hash_text(s: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let bytes = s.as_bytes();
    let mut h = bytes.len() as u64;
    let mut mix = |chunk: &[u8]| {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    };
    if bytes.len() <= 256 {
        bytes.chunks(8).for_each(&mut mix);
    } else {
        bytes[..32].chunks(8).for_each(&mut mix);
        bytes[bytes.len() - 32..].chunks(8).for_each(&mut mix);
        let step = (bytes.len() - 8) / 16;
        (0..16).for_each(|k| mix(&bytes[k * step..k * step + 8]));
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// A hasher of integer keys: each word mixed in by a multiply, the high
/// bits spread down at the end (the table indexes by the low ones).
#[derive(Default)]
struct Mixed(u64);

impl Hasher for Mixed {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Block;
    use crate::view::{ViewMessage, ViewRole};

    fn view(texts: &[&str]) -> View {
        View {
            messages: vec![ViewMessage {
                role: ViewRole::User,
                content: texts
                    .iter()
                    .map(|t| Block::Text {
                        text: t.to_string(),
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn texts_with_one_hash_keep_their_own_pieces() {
        let long = |c: &str| format!("{}{c}{}", "x ".repeat(145), "y ".repeat(155));
        let (a, b) = (long("A"), long("B"));
        assert_eq!(hash_text(&a), hash_text(&b), "byte 290 is not sampled");
        assert_ne!(hash_text(&a), hash_text(&a[1..]));
        let mut scorer = Scorer::new(Vec::new());
        for texts in [&[&a][..], &[&b], &[&a, &b], &[&b, &a, &b]] {
            let v = view(&texts.iter().map(|t| t.as_str()).collect::<Vec<_>>());
            assert_eq!(scorer.view_text(&v), view_text(&v));
        }
    }
}
