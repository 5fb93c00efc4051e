//! Server-sent events read as they arrive: the lines of a stream, split
//! across chunks, and whether a chunk ends the answer.

use memchr::memmem;

/// Hand each complete line of `bytes` to `f`, `pending` holding the part of
/// a line a chunk ended in (before and after).
pub(crate) fn lines(pending: &mut Vec<u8>, mut bytes: &[u8], mut f: impl FnMut(&[u8])) {
    while let Some(at) = memchr::memchr(b'\n', bytes) {
        if pending.is_empty() {
            f(&bytes[..at]);
        } else {
            pending.extend_from_slice(&bytes[..at]);
            f(pending);
            pending.clear();
        }
        bytes = &bytes[at + 1..];
    }
    pending.extend_from_slice(bytes);
}

/// The events that end an answer (or fail it), in either API.
const ENDS: [&[u8]; 5] = [
    b"message_stop",
    b"response.completed",
    b"response.failed",
    b"response.incomplete",
    b"\"error\"",
];

/// The longest of [`ENDS`]: how much of the previous chunk is looked at again.
pub(crate) const END_OVERLAP: usize = 24;

/// Whether `tail` (the end of the previous chunk) and `chunk` hold an
/// event that may end the answer: such a chunk is read before it is sent,
/// so that the answer is recorded before the client has all of it.
pub(crate) fn may_end(tail: &[u8], chunk: &[u8]) -> bool {
    let joined;
    let hay: &[u8] = if tail.is_empty() {
        chunk
    } else {
        let n = chunk.len().min(END_OVERLAP);
        joined = [tail, &chunk[..n]].concat();
        if ENDS.iter().any(|e| memmem::find(&joined, e).is_some()) {
            return true;
        }
        chunk
    };
    ENDS.iter().any(|e| memmem::find(hay, e).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_whole_however_the_chunks_fall() {
        let stream = b"event: a\ndata: {\"x\":1}\n\nevent: b\ndata: 2\n";
        for size in 1..stream.len() {
            let mut pending = Vec::new();
            let mut got: Vec<Vec<u8>> = Vec::new();
            for c in stream.chunks(size) {
                lines(&mut pending, c, |l| got.push(l.to_vec()));
            }
            let want: Vec<&[u8]> = vec![
                b"event: a",
                b"data: {\"x\":1}",
                b"",
                b"event: b",
                b"data: 2",
            ];
            assert_eq!(got, want, "chunks of {size}");
        }
    }

    #[test]
    fn an_end_split_over_two_chunks_is_seen() {
        assert!(may_end(b"", b"data: {\"type\":\"message_stop\"}"));
        assert!(may_end(b"{\"type\":\"message_s", b"top\"}"));
        assert!(!may_end(b"text_delta", b"{\"text\":\"more\"}"));
    }
}
