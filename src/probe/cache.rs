//! A view's probe text, built from per-block pieces cached across calls.
//!
//! `view_text` strips controls from and normalises the whole view at every
//! call, though most blocks repeat from one call to the next. Here each block's
//! piece (its text and the `\n` that follows it in `view_text`) is cleaned
//! once, kept under its raw text, and the view's text is the cleaned pieces
//! joined. The join is exactly `view_text`'s result:
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

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};

use crate::engine::clean::{normalise_whitespace, strip_controls};
use crate::view::View;

use super::{Evaluation, Probe, block_piece, evaluate_text, view_text};

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

/// Scores views call after call, cleaning each distinct block once.
#[derive(Default)]
pub(crate) struct Scorer {
    /// The pieces of the latest view, by the hash of their raw text (a
    /// bucket keeps each raw text with its piece: equal hashes, other texts).
    pieces: HashMap<u64, Vec<(String, Piece)>, BuildHasherDefault<Prehashed>>,
}

impl Scorer {
    /// `evaluate` of the view, with the view's text built from cached pieces.
    pub(crate) fn evaluate(
        &mut self,
        probes: &[Probe],
        view: &View,
        history_rows: usize,
    ) -> Evaluation {
        let text = self.view_text(view);
        evaluate_text(probes, &text, history_rows)
    }

    /// What `view_text` gives for the view.
    pub(crate) fn view_text(&mut self, view: &View) -> String {
        let mut old = std::mem::take(&mut self.pieces);
        let mut at: Vec<(u64, usize)> = Vec::new();
        for raw in view
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .map(block_piece)
        {
            let h = hash_text(&raw);
            let bucket = match self.pieces.entry(h) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(old.remove(&h).unwrap_or_default()),
            };
            let i = match bucket.iter().position(|(k, _)| *k == raw) {
                Some(i) => i,
                None => {
                    bucket.push((raw.to_string(), Piece::of(&raw)));
                    bucket.len() - 1
                }
            };
            at.push((h, i));
        }
        let pieces: Vec<&Piece> = at.iter().map(|(h, i)| &self.pieces[h][*i].1).collect();
        if pieces.iter().any(|p| !p.closed) {
            return view_text(view);
        }
        let mut out = String::with_capacity(pieces.iter().map(|p| p.text.len() + 1).sum());
        // Whitespace since the last token written.
        let mut gap = false;
        for p in pieces {
            if p.text.is_empty() {
                gap |= p.trail;
                continue;
            }
            if !out.is_empty() && (gap || p.lead) {
                out.push(' ');
            }
            out.push_str(&p.text);
            gap = p.trail;
        }
        out
    }
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
    // Spread the high bits down (the table indexes by the low ones).
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// The hasher of keys that are hashes already.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
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
        let mut scorer = Scorer::default();
        for texts in [&[&a][..], &[&b], &[&a, &b], &[&b, &a, &b]] {
            let v = view(&texts.iter().map(|t| t.as_str()).collect::<Vec<_>>());
            assert_eq!(scorer.view_text(&v), view_text(&v));
        }
    }
}
