//! Probes scored on a view that grows at its end: the recorded view between
//! two of the client's own compactions only gains messages, so its probe
//! text only gains text at its end, and a probe's text found once stays
//! found. Each call searches only the text added since the one before (and
//! the few bytes before it an occurrence can start in), where
//! `Scorer::evaluate` walks the whole view at every call.
//!
//! The view's text is `view_text`'s: each appended stretch of blocks is
//! cleaned alone (controls stripped, whitespace normalised) and joined to
//! the text before it by one space when whitespace separated them. That
//! holds while every stretch ends with the control scanner in its ground
//! state (checked as `probe::cache` checks a piece: a character appended
//! after it is not swallowed); from a stretch that leaves a sequence open
//! on, the raw text of the stretches is kept and cleaned again as one at
//! each call, until it ends in the ground state.

use memchr::memmem;

use crate::engine::clean::{normalise_whitespace, strip_controls};
use crate::probe::{Category, Probe, block_piece, carries, ends_token};
use crate::view::View;

use super::ProbeCounts;

/// The probe text of a view that grows at its end.
#[derive(Default)]
struct ViewText {
    text: String,
    /// Whitespace ended the cleaned text so far (before normalising).
    gap: bool,
    /// The stretches since one left an escape sequence open.
    open: Option<OpenTail>,
}

/// Stretches whose raw text leaves an escape sequence open, with the text
/// before them.
struct OpenTail {
    raw: String,
    /// `text`'s length and `gap` before them.
    text_len: usize,
    gap: bool,
}

impl ViewText {
    fn clear(&mut self) {
        self.text.clear();
        self.gap = false;
        self.open = None;
    }

    /// Append the blocks of `view` from block `from` on (blocks counted
    /// across messages). True when the text was made again rather than
    /// grown (an escape sequence was left open).
    fn append(&mut self, view: &View, from: usize) -> bool {
        let mut raw = String::new();
        let reopened = self.open.take().map(|open| {
            self.text.truncate(open.text_len);
            self.gap = open.gap;
            raw = open.raw;
        });
        for b in view.messages.iter().flat_map(|m| &m.content).skip(from) {
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
        let opened = !closed;
        if opened {
            self.open = Some(OpenTail {
                raw,
                text_len: self.text.len(),
                gap: self.gap,
            });
        }
        self.push_stretch(&stripped);
        reopened.is_some() || opened
    }

    /// Join a stretch's text, controls stripped, to the text.
    fn push_stretch(&mut self, stripped: &str) {
        let cleaned = normalise_whitespace(stripped);
        let trail = stripped.ends_with(char::is_whitespace);
        if cleaned.is_empty() {
            self.gap |= trail;
            return;
        }
        if !self.text.is_empty() && (self.gap || stripped.starts_with(char::is_whitespace)) {
            self.text.push(' ');
        }
        self.text.push_str(&cleaned);
        self.gap = trail;
    }
}

/// A text a probe looks for, with how far the growing text was searched.
struct Needle {
    text: String,
    found: bool,
    /// Every occurrence inside the text's first `searched` bytes was
    /// looked for.
    searched: usize,
}

impl Needle {
    fn new(text: &str) -> Needle {
        Needle {
            text: text.to_string(),
            found: false,
            searched: 0,
        }
    }

    fn reset(&mut self) {
        self.found = false;
        self.searched = 0;
    }

    fn found_in(&mut self, text: &str) -> bool {
        if !self.found {
            let len = self.text.len();
            let from = self.searched.saturating_sub(len.saturating_sub(1));
            // From the end: a probe's text is mostly found in the rows that
            // made it, which are the text's latest when it is first judged.
            self.found = memmem::rfind(&text.as_bytes()[from..], self.text.as_bytes()).is_some();
            self.searched = text.len();
        }
        self.found
    }
}

/// A recovery pointer, found only as a whole token (as `probe` takes it:
/// occurrences left to right without overlap, one followed by the text's
/// end or a character that ends a token).
struct Pointer {
    text: String,
    /// Its occurrences can overlap (a border, such as `tool:at`): the
    /// left-to-right taking matters, so the whole text is searched.
    overlaps: bool,
    /// A whole occurrence with text after it: it stays whole as the text
    /// grows.
    kept: bool,
    /// Occurrences ending inside the first `searched` bytes were looked at.
    searched: usize,
}

impl Pointer {
    fn new(text: &str) -> Pointer {
        let b = text.as_bytes();
        Pointer {
            text: text.to_string(),
            overlaps: b.is_empty() || (1..b.len()).any(|k| b[..k] == b[b.len() - k..]),
            kept: false,
            searched: 0,
        }
    }

    fn reset(&mut self) {
        self.kept = false;
        self.searched = 0;
    }

    fn carried_by(&mut self, text: &str) -> bool {
        if self.overlaps {
            return carries(text, &self.text);
        }
        if self.kept {
            return true;
        }
        let len = self.text.len();
        // An occurrence that ended the text last time is looked at again:
        // what follows it now decides.
        let from = self.searched.saturating_sub(len);
        self.searched = text.len();
        let mut at_end = false;
        for at in memmem::find_iter(&text.as_bytes()[from..], self.text.as_bytes()) {
            let end = from + at + len;
            match text.get(end..) {
                Some("") => at_end = true,
                Some(rest) if ends_token(rest) => {
                    self.kept = true;
                    return true;
                }
                _ => {}
            }
        }
        at_end
    }
}

/// One probe's texts.
struct Watched {
    expected: Needle,
    also: Vec<Needle>,
    pointer: Option<Pointer>,
}

/// Scores the views of a run whose view grows at its end between rebuilds,
/// with the counts `probe::evaluate` gives on the whole view.
pub(crate) struct AppendScorer {
    probes: Vec<Probe>,
    watched: Vec<Watched>,
    text: ViewText,
}

impl AppendScorer {
    pub(crate) fn new(probes: Vec<Probe>) -> AppendScorer {
        let watched = probes
            .iter()
            .map(|p| Watched {
                expected: Needle::new(&p.expected),
                also: p.also.iter().map(|a| Needle::new(a)).collect(),
                pointer: p.pointer.as_deref().map(Pointer::new),
            })
            .collect();
        AppendScorer {
            probes,
            watched,
            text: ViewText::default(),
        }
    }

    /// The view is new: score it from scratch.
    pub(crate) fn rebuild(&mut self, view: &View) {
        self.text.clear();
        self.forget_found();
        self.text.append(view, 0);
    }

    /// The view gained blocks at its end: those from block `from` on.
    pub(crate) fn extend(&mut self, view: &View, from: usize) {
        if self.text.append(view, from) {
            // The text was made again, not grown: search it whole.
            self.forget_found();
        }
    }

    fn forget_found(&mut self) {
        for w in &mut self.watched {
            w.expected.reset();
            w.also.iter_mut().for_each(Needle::reset);
            if let Some(p) = &mut w.pointer {
                p.reset();
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn text_for_test(&self) -> String {
        self.text.text.clone()
    }

    /// The counts of the latest view, a view of a call whose history is the
    /// record's first `history_rows` rows (as `probe::evaluate` judges it).
    pub(crate) fn score(&mut self, history_rows: usize) -> ProbeCounts {
        let latest_state = self
            .probes
            .iter()
            .rposition(|p| p.category == Category::State && p.row < history_rows);
        let text = &self.text.text;
        let mut c = ProbeCounts::default();
        for (i, (p, w)) in self.probes.iter().zip(&mut self.watched).enumerate() {
            if p.row >= history_rows || (p.category == Category::State && Some(i) != latest_state) {
                continue;
            }
            c.judged += 1;
            let critical = p.category.critical();
            c.critical_judged += u64::from(critical);
            let passed = w.expected.found_in(text) || w.also.iter_mut().any(|a| a.found_in(text));
            if passed || w.pointer.as_mut().is_some_and(|ptr| ptr.carried_by(text)) {
                c.kept += 1;
            } else if critical {
                c.critical_lost += 1;
            }
        }
        c
    }
}
