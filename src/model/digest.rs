//! [`Digest`]: the fixed-size stand-in for an id that is remembered for a
//! whole file or record, and [`DigestMap`], a map keyed by it.

use std::collections::HashMap;

/// A 128-bit digest of an id, kept in place of the id wherever every id of
/// a file or record is remembered (an importer's uuids, generation ids and
/// tool calls; a replay's tool calls, generations and snapshot keys): 16
/// bytes against a `String`'s 24 and its text, so that memory grows by
/// less with the session. Two ids share a digest with a probability of
/// about n² / 2¹²⁹ (below 10⁻²⁶ for a million ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Digest(pub(crate) [u64; 2]);

impl Digest {
    pub(crate) fn of(id: &str) -> Digest {
        Digest::of_hash(&blake3::hash(id.as_bytes()))
    }

    /// The digest of bytes hashed elsewhere (a stream too large to hold
    /// whole): `Digest::of(s)` is `Digest::of_hash(&blake3::hash(s))`.
    pub(crate) fn of_hash(hash: &blake3::Hash) -> Digest {
        let word = |i: usize| u64::from_le_bytes(hash.as_bytes()[i..i + 8].try_into().expect("8"));
        Digest([word(0), word(8)])
    }
}

impl std::hash::Hash for Digest {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Already uniform: a table needs no second hash of it.
        state.write_u64(self.0[0]);
    }
}

/// The hasher of [`DigestMap`]: a [`Digest`]'s first word as it is.
#[derive(Default)]
pub(crate) struct FirstWord(u64);

impl std::hash::Hasher for FirstWord {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not reached by `Digest`; any other bytes still hash to something.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = word;
    }
}

/// A map keyed by [`Digest`].
pub(crate) type DigestMap<V> = HashMap<Digest, V, std::hash::BuildHasherDefault<FirstWord>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_is_the_same_for_the_same_id_only() {
        assert_eq!(Digest::of("toolu_01"), Digest::of("toolu_01"));
        assert_ne!(Digest::of("toolu_01"), Digest::of("toolu_02"));
        assert_ne!(Digest::of(""), Digest::of("\0"));
    }
}
