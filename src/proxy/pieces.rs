//! The forwarded body as it is written: runs of the client's own body,
//! referred to by their place in it and sent from it (a large block the
//! view keeps is never copied), and text written here. The body is sent as
//! these pieces, with its exact length, so nothing is joined into one
//! buffer.

use std::ops::Range;

use bytes::Bytes;

/// A run this long or longer is sent from where it is; a shorter one is
/// copied into the piece being written (fewer, larger writes upstream).
const SHARED_RUN: usize = 64 << 10;

/// A piece of text the forwarded body carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Text {
    /// A run of the request's body.
    Body(Range<usize>),
    /// Text of its own.
    Own(Bytes),
}

impl Text {
    pub(crate) fn own(s: String) -> Text {
        Text::Own(Bytes::from(s))
    }

    /// A run of `body`: `part`, a slice of it.
    pub(crate) fn of(body: &str, part: &str) -> Text {
        let start = part.as_ptr() as usize - body.as_ptr() as usize;
        debug_assert!(start + part.len() <= body.len(), "a slice of the body");
        Text::Body(start..start + part.len())
    }

    /// Its text, a run of `body` for a run of it.
    pub(crate) fn as_str<'a>(&'a self, body: &'a str) -> &'a str {
        match self {
            Text::Body(r) => &body[r.clone()],
            Text::Own(b) => std::str::from_utf8(b).expect("written from text"),
        }
    }

    fn len(&self) -> usize {
        match self {
            Text::Body(r) => r.len(),
            Text::Own(b) => b.len(),
        }
    }

    /// Kept beyond this request (whose body goes): a run of the body copied.
    pub(crate) fn kept(&self, body: &str) -> Text {
        match self {
            Text::Body(r) => Text::Own(Bytes::copy_from_slice(body[r.clone()].as_bytes())),
            own => own.clone(),
        }
    }
}

/// The forwarded body being written.
#[derive(Default)]
pub(crate) struct Pieces {
    list: Vec<Text>,
    buf: Vec<u8>,
    len: usize,
}

impl Pieces {
    pub(crate) fn str(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
        self.len += s.len();
        if self.buf.len() >= SHARED_RUN {
            self.flush();
        }
    }

    pub(crate) fn char(&mut self, c: char) {
        self.str(c.encode_utf8(&mut [0; 4]));
    }

    /// `t`, whose runs are of `body`.
    pub(crate) fn text(&mut self, t: &Text, body: &str) {
        if t.len() < SHARED_RUN {
            self.str(t.as_str(body));
        } else {
            self.flush();
            self.len += t.len();
            self.list.push(t.clone());
        }
    }

    fn flush(&mut self) {
        if !self.buf.is_empty() {
            let buf = std::mem::take(&mut self.buf);
            self.list.push(Text::Own(Bytes::from(buf)));
        }
    }

    /// The length written so far.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// The pieces, the body's runs sliced out of `body` (shared, not copied).
    pub(crate) fn into_bytes(mut self, body: &Bytes) -> Vec<Bytes> {
        self.flush();
        self.list
            .into_iter()
            .map(|t| match t {
                Text::Body(r) => body.slice(r),
                Text::Own(b) => b,
            })
            .collect()
    }
}

/// Writes `items` onto `out` as a JSON array, each by `item`.
pub(crate) fn json_array<T>(out: &mut Pieces, items: &[T], mut item: impl FnMut(&mut Pieces, &T)) {
    out.char('[');
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.char(',');
        }
        item(out, it);
    }
    out.char(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_is_sent_from_the_body_and_a_short_one_copied() {
        let big = "x".repeat(SHARED_RUN + 5);
        let body = format!("{{\"a\":\"{big}\",\"b\":1}}");
        let mut out = Pieces::default();
        out.str("{\"a\":");
        let at = body.find('"').unwrap() + 4;
        let run = &body[at..at + big.len() + 2];
        out.text(&Text::of(&body, run), &body);
        out.str(",\"b\":");
        out.text(
            &Text::of(&body, &body[body.len() - 2..body.len() - 1]),
            &body,
        );
        out.char('}');
        assert_eq!(out.len(), body.len());
        let bytes = Bytes::from(body.clone());
        let pieces = out.into_bytes(&bytes);
        assert_eq!(pieces.len(), 3, "the long run alone between two copies");
        assert_eq!(pieces[1].as_ptr(), bytes[at..].as_ptr(), "not copied");
        assert_eq!(pieces.concat(), body.as_bytes());
    }
}
