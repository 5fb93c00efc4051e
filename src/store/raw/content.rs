//! How a row's content is stored: its canonical JSON, LZ4-compressed when
//! that is smaller.

use std::borrow::Cow;

use lz4_flex::block::CompressTable;
use rusqlite::types::Value as SqlValue;

/// `task_message.content_encoding` of a row whose `content` is the canonical
/// JSON text itself (every row a store before version 7 holds).
pub const CONTENT_JSON: &str = "json";

/// `content_encoding` of a row whose `content` is a BLOB: the canonical JSON
/// compressed as one LZ4 block, prefixed with its length (4 bytes, little
/// endian).
pub const CONTENT_LZ4: &str = "lz4";

/// How a row's canonical content JSON is stored: compressed when that is
/// smaller (small rows, a few dozen bytes, do not shrink and stay text).
/// The row hash is always over the canonical JSON, never over these bytes.
/// The tests' reference for what [`RowEncoder`] writes.
#[cfg(test)]
pub fn encode_content(json: String) -> (&'static str, SqlValue) {
    compressed(&json).unwrap_or((CONTENT_JSON, SqlValue::Text(json)))
}

/// The LZ4 form of a row's content JSON, when it is smaller than the JSON.
#[cfg(test)]
fn compressed(json: &str) -> Option<(&'static str, SqlValue)> {
    Lz4::new().compress(json.as_bytes())
}

/// A row whose content JSON is this large has buffers of its own, handed
/// over or let go once it is encoded, rather than kept for the next row.
pub(super) const LARGE_ROW: usize = 1 << 20;

/// An LZ4 block encoder kept from row to row: the bytes of
/// `lz4_flex::compress_prepend_size` (the same hash table for the same
/// input size, cleared before each row), without a zeroed buffer of the
/// largest possible output, two tables and a shrinking copy allocated for
/// every row.
pub(super) struct Lz4 {
    /// For inputs under 64 KiB, as `lz4_flex` picks it.
    small: CompressTable,
    large: CompressTable,
    out: Vec<u8>,
}

impl Lz4 {
    pub(super) fn new() -> Lz4 {
        Lz4 {
            small: CompressTable::small(),
            large: CompressTable::large(),
            out: Vec::new(),
        }
    }

    /// `(lz4, the length-prefixed block)` when that is shorter than `input`.
    /// The buffer of a large row is handed over as the block (its length
    /// cut, not copied) or let go, never kept for the next row.
    pub(super) fn compress(&mut self, input: &[u8]) -> Option<(&'static str, SqlValue)> {
        let out = self.compress_kept(input);
        if input.len() >= LARGE_ROW {
            let mut block = std::mem::take(&mut self.out);
            let (encoding, n) = out?;
            block.truncate(n);
            return Some((encoding, SqlValue::Blob(block)));
        }
        out.map(|(encoding, n)| (encoding, SqlValue::Blob(self.out[..n].to_vec())))
    }

    /// Compress into the kept buffer: `(lz4, the block's length)` when it
    /// is shorter than `input`.
    fn compress_kept(&mut self, input: &[u8]) -> Option<(&'static str, usize)> {
        let len = u32::try_from(input.len()).ok()?;
        if input.len() >= LARGE_ROW && !self.probe_shrinks(&input[..PROBE]) {
            return None;
        }
        let max = 4 + lz4_flex::block::get_maximum_output_size(input.len());
        if self.out.len() < max {
            // A new zeroed buffer rather than a grown one: the allocator
            // hands over memory known to be zero without writing it, so only
            // the pages the compressed bytes reach are touched (a 55 MB row
            // that compresses well costs no 55 MB of zeros).
            self.out = vec![0u8; max];
        }
        let table = if input.len() < usize::from(u16::MAX) {
            &mut self.small
        } else {
            &mut self.large
        };
        let n =
            lz4_flex::block::compress_into_with_table(input, &mut self.out[4..max], table).ok()?;
        self.out[..4].copy_from_slice(&len.to_le_bytes());
        (4 + n < input.len()).then_some((CONTENT_LZ4, 4 + n))
    }

    /// Whether the leading part of a large row compresses to at most
    /// 7/8 of its size. A row whose start does not (a base64 image or
    /// document, already compressed data) is stored as its JSON without
    /// trying the rest: compressing it whole would write a buffer as large
    /// as the row only to let it go.
    fn probe_shrinks(&mut self, probe: &[u8]) -> bool {
        let max = lz4_flex::block::get_maximum_output_size(probe.len());
        let mut out = vec![0u8; max];
        lz4_flex::block::compress_into_with_table(probe, &mut out, &mut self.large)
            .is_ok_and(|n| n <= probe.len() / 8 * 7)
    }
}

/// How much of a large row [`Lz4::probe_shrinks`] compresses first.
const PROBE: usize = 1 << 18;

/// The canonical content JSON of a stored row, from its `content_encoding`
/// and the bytes of its `content` (TEXT or BLOB). Every read of a row's
/// content goes through here.
pub fn decode_content<'a>(
    encoding: &str,
    bytes: &'a [u8],
) -> std::result::Result<Cow<'a, [u8]>, String> {
    match encoding {
        CONTENT_JSON => Ok(Cow::Borrowed(bytes)),
        CONTENT_LZ4 => lz4_flex::decompress_size_prepended(bytes)
            .map(Cow::Owned)
            .map_err(|e| format!("content does not decompress: {e}")),
        other => Err(format!("unknown content encoding {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes LZ4 cannot shrink (as base64 of random data), `n` of them.
    fn noise(n: usize) -> Vec<u8> {
        let mut rng = 11u64;
        (0..n)
            .map(|_| {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b'!' + (rng >> 58) as u8
            })
            .collect()
    }

    /// A large row whose start does not shrink is left as its JSON without
    /// a buffer of its size ever being written, even where its rest would
    /// compress; one whose start does is compressed whole, to the
    /// library's bytes, as before.
    #[test]
    fn a_large_row_is_compressed_only_when_its_start_shrinks() {
        let mut lz4 = Lz4::new();
        let mut row = noise(PROBE);
        row.extend(std::iter::repeat_n(b'a', 4 * LARGE_ROW));
        assert!(lz4_flex::compress_prepend_size(&row).len() < row.len() / 2);
        assert!(lz4.compress(&row).is_none());
        assert_eq!(lz4.out.capacity(), 0, "no output buffer was allocated");

        let mut row = vec![b'a'; PROBE];
        row.extend(noise(LARGE_ROW));
        let Some((CONTENT_LZ4, SqlValue::Blob(block))) = lz4.compress(&row) else {
            panic!("a row whose start shrinks is compressed")
        };
        assert_eq!(block, lz4_flex::compress_prepend_size(&row));
        assert_eq!(decode_content(CONTENT_LZ4, &block).unwrap(), &row[..]);
    }
}
