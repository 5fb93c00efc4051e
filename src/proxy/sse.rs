//! Server-sent events read as they arrive, for every upstream format: one
//! reader that splits a stream into events however the chunks fall (the
//! field lines of the SSE format: `event:`, `data:` joined over several
//! lines, comments and other fields skipped, an event dispatched at its
//! blank line), and the seam each API's answer assembler implements
//! ([`Assemble`]). A format is one assembler: what its events mean.

use crate::model::Message;

/// Splits a stream of server-sent events into events.
#[derive(Default)]
pub(crate) struct SseReader {
    /// The part of a line the last chunk ended in.
    line: Vec<u8>,
    /// The event being read: its name and its data so far.
    event: String,
    data: Vec<u8>,
    has_data: bool,
}

impl SseReader {
    /// Read `bytes`, handing each complete event to `on` (its name, empty
    /// when it has none, and its data).
    pub(crate) fn feed(&mut self, mut bytes: &[u8], on: &mut dyn FnMut(&str, &[u8])) {
        while let Some(at) = memchr::memchr(b'\n', bytes) {
            if self.line.is_empty() {
                self.line_done(&bytes[..at], on);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&bytes[..at]);
                self.line_done(&line, on);
                line.clear();
                self.line = line;
            }
            bytes = &bytes[at + 1..];
        }
        self.line.extend_from_slice(bytes);
    }

    /// The stream ended: its last line and event, if they were not ended.
    pub(crate) fn end(&mut self, on: &mut dyn FnMut(&str, &[u8])) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, on);
        }
        self.line_done(b"", on);
    }

    fn line_done(&mut self, line: &[u8], on: &mut dyn FnMut(&str, &[u8])) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            if self.has_data {
                on(&self.event, &self.data);
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            _ => {}
        }
    }
}

/// What an API's answer assembler does: take a streamed answer's events, or
/// a whole answer, and make the assistant row.
pub(crate) trait Assemble: Send {
    /// One event of a streamed answer: its name (empty when none) and data.
    fn event(&mut self, name: &str, data: &[u8]);
    /// A whole answer (JSON).
    fn whole(&mut self, body: &[u8]) -> Result<(), String>;
    /// Whether the answer has ended (completed or failed).
    fn complete(&self) -> bool;
    /// Whether the upstream sent an error in the stream.
    fn errored(&self) -> bool;
    /// Whether a stream that ends here (without the event that completes
    /// it) holds a whole answer all the same.
    fn complete_at_end(&self) -> bool {
        false
    }
    /// What the record leaves out of the answer the client got, in words
    /// (a note the proxy prints), if anything.
    fn note(&self) -> Option<String> {
        None
    }
    /// The assistant row, if the answer completed; else why not.
    fn finish(self: Box<Self>) -> Result<Message, String>;
}

/// A whole answer's JSON.
pub(crate) fn answer_json(body: &[u8]) -> Result<serde_json::Value, String> {
    serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON: {e}"))
}

/// An answer being assembled as its bytes arrive.
pub(crate) struct Answer {
    sse: SseReader,
    assembler: Box<dyn Assemble>,
}

impl Answer {
    pub(crate) fn streamed(assembler: Box<dyn Assemble>) -> Answer {
        Answer {
            sse: SseReader::default(),
            assembler,
        }
    }

    /// Read the next bytes of the stream.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let a = &mut self.assembler;
        self.sse.feed(bytes, &mut |name, data| a.event(name, data));
    }

    pub(crate) fn complete(&self) -> bool {
        self.assembler.complete()
    }

    pub(crate) fn errored(&self) -> bool {
        self.assembler.errored()
    }

    /// The stream ended here: whether its answer is whole all the same.
    pub(crate) fn complete_at_end(&mut self) -> bool {
        let a = &mut self.assembler;
        self.sse.end(&mut |name, data| a.event(name, data));
        self.assembler.complete() || self.assembler.complete_at_end()
    }

    /// What the record leaves out of the answer, if anything (see
    /// [`Assemble::note`]).
    pub(crate) fn note(&self) -> Option<String> {
        self.assembler.note()
    }

    /// The stream ended: the row, or why there is none.
    pub(crate) fn finish(mut self) -> Result<Message, String> {
        let a = &mut self.assembler;
        self.sse.end(&mut |name, data| a.event(name, data));
        self.assembler.finish()
    }

    /// A whole answer's row, and what the record leaves out of it.
    pub(crate) fn whole(
        mut assembler: Box<dyn Assemble>,
        body: &[u8],
    ) -> Result<(Message, Option<String>), String> {
        assembler.whole(body)?;
        let note = assembler.note();
        Ok((assembler.finish()?, note))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(stream: &[u8], size: usize) -> Vec<(String, String)> {
        let mut r = SseReader::default();
        let mut got = Vec::new();
        let mut on =
            |n: &str, d: &[u8]| got.push((n.to_string(), String::from_utf8_lossy(d).into_owned()));
        for c in stream.chunks(size) {
            r.feed(c, &mut on);
        }
        r.end(&mut on);
        got
    }

    #[test]
    fn events_are_whole_however_the_chunks_fall() {
        let stream = b"event: a\ndata: {\"x\":1}\n\n: a comment\nid: 7\r\ndata:two\r\ndata: lines\r\n\r\nevent: b\ndata: 2";
        for size in 1..stream.len() {
            assert_eq!(
                events(stream, size),
                [
                    ("a".to_string(), "{\"x\":1}".to_string()),
                    (String::new(), "two\nlines".to_string()),
                    ("b".to_string(), "2".to_string()),
                ],
                "chunks of {size}"
            );
        }
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        assert!(events(b"event: ping\n\n\n", 3).is_empty());
    }
}
