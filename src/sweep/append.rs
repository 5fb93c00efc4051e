//! Probes scored on a view that grows at its end: the recorded view between
//! two of the client's own compactions only gains messages, so its probe
//! text only gains text at its end, and a probe's text found once stays
//! found. The text is not kept: each piece appended is run through one
//! automaton of every probe's texts (Aho-Corasick, every occurrence
//! reported), which marks the texts found and the pointers carried, for the
//! probes judged now and those judged at later calls alike; where
//! `Scorer::evaluate` walks the whole view at every call.
//!
//! The view's text is `view_text`'s: each appended stretch of blocks is
//! cleaned alone (controls stripped, whitespace normalised) and joined to
//! the text before it by one space when whitespace separated them. That
//! holds while every stretch ends with the control scanner in its ground
//! state (checked as `probe::cache` checks a piece: a character appended
//! after it is not swallowed); from a stretch that leaves a sequence open
//! on, the raw text of the stretches is kept and cleaned again as one at
//! each call (the scan going back to where they start), until it ends in
//! the ground state.

use std::collections::BTreeMap;

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::nfa::contiguous::NFA;
use aho_corasick::{Anchored, MatchKind};

use crate::engine::clean::{normalise_whitespace, strip_controls};
use crate::model::Block;
use crate::probe::{Category, Probe, block_piece, ends_token};
use crate::view::View;

use super::ProbeCounts;

/// What an occurrence of a searched text marks.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// A probe's expected or also-accepted text: found.
    Text(usize),
    /// A recovery pointer: carried when whole.
    Pointer(usize),
}

/// A recovery pointer, carried only as a whole token (as `probe` takes it:
/// occurrences left to right without overlap, one followed by the text's
/// end or a character that ends a token).
#[derive(Debug, Clone, Copy, Default)]
struct PointerScan {
    /// Where the last occurrence taken ends: the next starts at or after.
    next_free: usize,
    /// An occurrence followed by a character that ends a token: it stays
    /// whole as the text grows.
    kept: bool,
    /// An occurrence taken ends the text of this length (what follows it
    /// decides once the text grows).
    ends_at: Option<usize>,
}

/// The scan of the text so far.
#[derive(Debug, Clone)]
struct Scan {
    state: StateID,
    /// The text's length in bytes.
    len: usize,
    found: Vec<bool>,
    pointers: Vec<PointerScan>,
}

/// Every probe text in one automaton.
struct Texts {
    /// `None` when there is no text to look for.
    nfa: Option<NFA>,
    /// Per pattern, what its occurrence marks, and its length.
    targets: Vec<(Vec<Target>, usize)>,
    /// Texts and pointers that are empty: found and carried in any text.
    empty_texts: Vec<usize>,
    empty_pointers: Vec<usize>,
    texts: usize,
    pointers: usize,
}

impl Texts {
    fn new<'p>(watched: &[Watched], probes: &'p [Probe]) -> Texts {
        let mut patterns: Vec<&'p str> = Vec::new();
        let mut index: BTreeMap<&'p str, usize> = BTreeMap::new();
        let mut targets: Vec<(Vec<Target>, usize)> = Vec::new();
        let (mut empty_texts, mut empty_pointers) = (Vec::new(), Vec::new());
        let mut add = |s: &'p str, t: Target| {
            if s.is_empty() {
                match t {
                    Target::Text(i) => empty_texts.push(i),
                    Target::Pointer(i) => empty_pointers.push(i),
                }
                return;
            }
            match index.get(s) {
                Some(&k) => targets[k].0.push(t),
                None => {
                    index.insert(s, patterns.len());
                    patterns.push(s);
                    targets.push((vec![t], s.len()));
                }
            }
        };
        let (mut texts, mut pointers) = (0, 0);
        for (p, w) in probes.iter().zip(watched) {
            add(&p.expected, Target::Text(w.expected));
            for (a, &k) in p.also.iter().zip(&w.also) {
                add(a, Target::Text(k));
            }
            texts += 1 + w.also.len();
            if let (Some(ptr), Some(k)) = (&p.pointer, w.pointer) {
                add(ptr, Target::Pointer(k));
                pointers += 1;
            }
        }
        let nfa = (!patterns.is_empty()).then(|| {
            NFA::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .expect("probe texts make an automaton")
        });
        Texts {
            nfa,
            targets,
            empty_texts,
            empty_pointers,
            texts,
            pointers,
        }
    }

    /// The scan of an empty text.
    fn start(&self) -> Scan {
        let mut scan = Scan {
            state: match &self.nfa {
                Some(nfa) => nfa.start_state(Anchored::No).expect("an unanchored search"),
                None => StateID::ZERO,
            },
            len: 0,
            found: vec![false; self.texts],
            pointers: vec![PointerScan::default(); self.pointers],
        };
        for &k in &self.empty_texts {
            scan.found[k] = true;
        }
        for &k in &self.empty_pointers {
            scan.pointers[k].kept = true;
        }
        scan
    }

    /// Scan `piece`, appended to the text.
    fn scan(&self, scan: &mut Scan, piece: &str) {
        if piece.is_empty() {
            return;
        }
        let base = scan.len;
        // An occurrence that ended the text: what follows it now decides.
        for p in &mut scan.pointers {
            if p.ends_at.take() == Some(base) && ends_token(piece) {
                p.kept = true;
            }
        }
        scan.len += piece.len();
        let Some(nfa) = &self.nfa else {
            return;
        };
        let mut state = scan.state;
        for (i, &byte) in piece.as_bytes().iter().enumerate() {
            state = nfa.next_state(Anchored::No, state, byte);
            if !(nfa.is_special(state) && nfa.is_match(state)) {
                continue;
            }
            for m in 0..nfa.match_len(state) {
                let (targets, len) = &self.targets[nfa.match_pattern(state, m).as_usize()];
                let end = base + i + 1;
                for t in targets {
                    match *t {
                        Target::Text(k) => scan.found[k] = true,
                        Target::Pointer(k) => {
                            let p = &mut scan.pointers[k];
                            if end - len < p.next_free {
                                continue;
                            }
                            p.next_free = end;
                            match piece.get(i + 1..) {
                                Some("") => p.ends_at = Some(end),
                                Some(rest) if ends_token(rest) => p.kept = true,
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
        scan.state = state;
    }
}

impl Scan {
    fn carried(&self, pointer: usize) -> bool {
        let p = &self.pointers[pointer];
        p.kept || p.ends_at == Some(self.len)
    }
}

/// Stretches whose raw text leaves an escape sequence open, with the scan
/// and the gap before them.
#[derive(Clone)]
struct OpenTail {
    raw: String,
    scan: Scan,
    gap: bool,
}

/// One probe's texts: where their marks are.
struct Watched {
    expected: usize,
    also: Vec<usize>,
    pointer: Option<usize>,
}

/// Scores the views of a run whose view grows at its end between rebuilds,
/// with the counts `probe::evaluate` gives on the whole view.
pub(crate) struct AppendScorer {
    probes: Vec<Probe>,
    watched: Vec<Watched>,
    texts: Texts,
    scan: Scan,
    /// Whitespace ended the cleaned text so far (before normalising).
    gap: bool,
    /// The stretches since one left an escape sequence open.
    open: Option<OpenTail>,
    /// The text itself, for the tests to hold to `view_text`.
    #[cfg(test)]
    text: String,
}

impl AppendScorer {
    pub(crate) fn new(probes: Vec<Probe>) -> AppendScorer {
        let (mut texts, mut pointers) = (0, 0);
        let watched: Vec<Watched> = probes
            .iter()
            .map(|p| {
                let expected = texts;
                let also = (texts + 1..texts + 1 + p.also.len()).collect();
                texts += 1 + p.also.len();
                let pointer = p.pointer.as_ref().map(|_| {
                    pointers += 1;
                    pointers - 1
                });
                Watched {
                    expected,
                    also,
                    pointer,
                }
            })
            .collect();
        let texts = Texts::new(&watched, &probes);
        let scan = texts.start();
        AppendScorer {
            probes,
            watched,
            texts,
            scan,
            gap: false,
            open: None,
            #[cfg(test)]
            text: String::new(),
        }
    }

    /// The view is new: score it from scratch.
    pub(crate) fn rebuild(&mut self, view: &View) {
        self.scan = self.texts.start();
        self.gap = false;
        self.open = None;
        #[cfg(test)]
        self.text.clear();
        self.append(view, 0);
    }

    /// The view gained blocks at its end: those from block `from` on.
    pub(crate) fn extend(&mut self, view: &View, from: usize) {
        self.append(view, from);
    }

    /// Append the blocks of `view` from block `from` on (blocks counted
    /// across messages) to the text.
    fn append(&mut self, view: &View, from: usize) {
        self.append_blocks(view.messages.iter().flat_map(|m| &m.content).skip(from));
    }

    /// The view gained `blocks` at its end.
    pub(crate) fn extend_blocks<'b>(&mut self, blocks: impl IntoIterator<Item = &'b Block>) {
        self.append_blocks(blocks);
    }

    /// The counts of the view made of the text so far and then `tail`, a
    /// view of a call whose history is the record's first `history_rows`
    /// rows, leaving the text as it was: a view whose end changes from call
    /// to call while its start only grows.
    pub(crate) fn score_with_tail<'b>(
        &mut self,
        tail: impl IntoIterator<Item = &'b Block>,
        history_rows: usize,
    ) -> ProbeCounts {
        let scan = self.scan.clone();
        let (gap, open) = (self.gap, self.open.clone());
        #[cfg(test)]
        let text = self.text.clone();
        self.append_blocks(tail);
        let counts = self.score(history_rows);
        (self.scan, self.gap, self.open) = (scan, gap, open);
        #[cfg(test)]
        {
            self.text = text;
        }
        counts
    }

    /// Append `blocks` to the text.
    fn append_blocks<'b>(&mut self, blocks: impl IntoIterator<Item = &'b Block>) {
        let mut raw = String::new();
        if let Some(open) = self.open.take() {
            // Cleaned again with the stretches after it, as one.
            self.scan = open.scan;
            self.gap = open.gap;
            raw = open.raw;
            #[cfg(test)]
            self.text.truncate(self.scan.len);
        }
        for b in blocks {
            raw.push_str(&block_piece(b));
            raw.push('\n');
        }
        let stripped = strip_controls(&raw);
        let closed = !raw.contains(['\u{1b}', '\u{9b}']) || {
            raw.push('Z');
            let probe = strip_controls(&raw);
            raw.pop();
            probe.len() == stripped.len() + 1 && probe.ends_with('Z')
        };
        if !closed {
            self.open = Some(OpenTail {
                raw,
                scan: self.scan.clone(),
                gap: self.gap,
            });
        }
        let cleaned = normalise_whitespace(&stripped);
        let trail = stripped.ends_with(char::is_whitespace);
        if cleaned.is_empty() {
            self.gap |= trail;
            return;
        }
        if self.scan.len > 0 && (self.gap || stripped.starts_with(char::is_whitespace)) {
            self.push(" ");
        }
        self.push(&cleaned);
        self.gap = trail;
    }

    fn push(&mut self, piece: &str) {
        self.texts.scan(&mut self.scan, piece);
        #[cfg(test)]
        self.text.push_str(piece);
    }

    #[cfg(test)]
    pub(crate) fn text_for_test(&self) -> String {
        self.text.clone()
    }

    /// The counts of the latest view, a view of a call whose history is the
    /// record's first `history_rows` rows (as `probe::evaluate` judges it).
    pub(crate) fn score(&mut self, history_rows: usize) -> ProbeCounts {
        let latest_state = self
            .probes
            .iter()
            .rposition(|p| p.category == Category::State && p.row < history_rows);
        let scan = &self.scan;
        let mut c = ProbeCounts::default();
        for (i, (p, w)) in self.probes.iter().zip(&self.watched).enumerate() {
            if !p.judged_before(history_rows)
                || (p.category == Category::State && Some(i) != latest_state)
            {
                continue;
            }
            c.judged += 1;
            let critical = p.category.critical();
            c.critical_judged += u64::from(critical);
            let passed = scan.found[w.expected] || w.also.iter().any(|&a| scan.found[a]);
            if passed || w.pointer.is_some_and(|k| scan.carried(k)) {
                c.kept += 1;
            } else if critical {
                c.critical_lost += 1;
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::probe::carries;

    const PIECES: &[&str] = &["tool:", "t", "tool:t", "a", "at", ":", " ", "-", "é", "tt"];

    fn probe(expected: &str, pointer: &str) -> Probe {
        Probe {
            category: Category::Constraint,
            expected: expected.to_string(),
            source: String::new(),
            line: 1,
            row: 0,
            pointer: Some(pointer.to_string()),
            also: vec![format!("{expected}a")],
            slot: None,
            superseded_at: None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Text scanned piece by piece: a text is found and a pointer
        /// carried exactly when the whole text so far has it (pointers
        /// that overlap themselves taken left to right, as `carries` does).
        #[test]
        fn the_scan_finds_what_the_whole_text_holds(
            pieces in prop::collection::vec(prop::collection::vec(0..PIECES.len(), 0..6), 1..12),
            wanted in prop::collection::vec((0..PIECES.len(), 0..PIECES.len()), 1..6),
        ) {
            let probes: Vec<Probe> = wanted
                .iter()
                .map(|&(e, p)| probe(PIECES[e], PIECES[p]))
                .chain([probe("", "")])
                .collect();
            let scorer = AppendScorer::new(probes.clone());
            let (texts, mut scan) = (&scorer.texts, scorer.texts.start());
            let mut text = String::new();
            for piece in &pieces {
                let piece: String = piece.iter().map(|&k| PIECES[k]).collect();
                texts.scan(&mut scan, &piece);
                text.push_str(&piece);
                for (p, w) in probes.iter().zip(&scorer.watched) {
                    prop_assert_eq!(scan.found[w.expected], text.contains(p.expected.as_str()));
                    prop_assert_eq!(scan.found[w.also[0]], text.contains(p.also[0].as_str()));
                    let pointer = p.pointer.as_deref().unwrap();
                    prop_assert_eq!(
                        scan.carried(w.pointer.unwrap()),
                        carries(&text, pointer),
                        "{:?} in {:?}", pointer, text
                    );
                }
            }
        }
    }
}
