//! The server's stdio, between the client and rmcp: every line the client
//! sends gets an answer. rmcp drops a line that is not JSON, or longer than
//! its 16 MiB cap, saying nothing (the client then waits for its own
//! timeout); here such a line is answered with a JSON-RPC parse error
//! (`-32700`, `id` null, as JSON-RPC 2.0 says for a message whose id cannot
//! be read) naming what was wrong, and only lines that are JSON reach rmcp.
//! A line's bytes are read up to the cap, never further: the rest of a line
//! over it is skipped as it comes.
//!
//! What goes out is whole lines, rmcp's answers and these errors, written
//! by one task in the order they are ready.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line read, its newline included (rmcp's own cap).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// Lines in flight to stdout.
const OUT_LINES: usize = 64;
/// The pipes' buffers between this layer and rmcp.
const PIPE_BYTES: usize = 1 << 16;

/// What one line read was.
#[derive(Debug, PartialEq)]
enum Line {
    /// A whole line (newline and a carriage return before it removed).
    Text(Vec<u8>),
    /// A line over [`MAX_LINE`], skipped: its length so far.
    Oversized(usize),
    End,
}

/// Reads lines of at most `max` bytes (newline included), skipping the rest
/// of a longer one without holding it.
struct Lines<R> {
    read: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    async fn next(&mut self) -> std::io::Result<Line> {
        let mut line = Vec::new();
        let mut over: Option<usize> = None;
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                // The end: a last line without its newline is a line.
                return Ok(match over {
                    Some(n) => Line::Oversized(n),
                    None if line.is_empty() => Line::End,
                    None => Line::Text(trimmed(line)),
                });
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            match &mut over {
                Some(n) => *n += take,
                None if line.len() + take > self.max => over = Some(line.len() + take),
                None => line.extend_from_slice(&available[..take]),
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(match over {
                    Some(n) => Line::Oversized(n),
                    None => Line::Text(trimmed(line)),
                });
            }
            if over.is_some() {
                line = Vec::new();
            }
        }
    }
}

/// A line without its newline, a carriage return before it, and a UTF-8
/// byte-order mark.
fn trimmed(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.starts_with(b"\xEF\xBB\xBF") {
        line.drain(..3);
    }
    line
}

/// The JSON-RPC parse error for a line that was dropped.
fn parse_error(message: &str) -> Vec<u8> {
    let mut v = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {message}")},
    }))
    .expect("JSON values serialise");
    v.push(b'\n');
    v
}

/// Why `line` cannot be a JSON-RPC message as JSON, if it cannot.
fn not_json(line: &[u8]) -> Option<String> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Some(format!(
                "the line is not UTF-8 (byte {}); a message is one line of JSON",
                e.valid_up_to() + 1
            ));
        }
    };
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .err()
        .map(|e| format!("the line is not JSON ({e}); a message is one line of JSON"))
}

/// The tasks behind a [`transport`].
pub struct Pumps {
    reader: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
}

impl Pumps {
    /// Once rmcp is done: stop reading (a client still sending is no longer
    /// answered) and wait until every answer is written.
    pub async fn finish(self) {
        self.reader.abort();
        let _ = self.reader.await;
        let _ = self.writer.await;
    }
}

/// The transport rmcp is given over `input` and `output` (the process's
/// stdin and stdout), and the tasks moving the bytes.
pub fn transport<I, O>(
    input: I,
    output: O,
) -> ((tokio::io::DuplexStream, tokio::io::DuplexStream), Pumps)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (out, mut lines_out) = mpsc::channel::<Vec<u8>>(OUT_LINES);
    // The client's lines: JSON on to rmcp, the rest answered here.
    let errors = out.clone();
    let reader = tokio::spawn(async move {
        let mut lines = Lines {
            read: BufReader::new(input),
            max: MAX_LINE,
        };
        loop {
            let answer = match lines.next().await {
                Ok(Line::End) | Err(_) => break,
                Ok(Line::Oversized(n)) => parse_error(&format!(
                    "the line is over {} MiB ({n} bytes) and was dropped; a message is one line of JSON of at most {} MiB",
                    MAX_LINE >> 20,
                    MAX_LINE >> 20
                )),
                Ok(Line::Text(t)) if t.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(Line::Text(t)) => match not_json(&t) {
                    Some(why) => parse_error(&why),
                    None => {
                        let mut t = t;
                        t.push(b'\n');
                        if to_rmcp.write_all(&t).await.is_err() {
                            break;
                        }
                        continue;
                    }
                },
            };
            if errors.send(answer).await.is_err() {
                break;
            }
        }
        // The client hung up: rmcp reads the end and stops.
        let _ = to_rmcp.shutdown().await;
    });
    // rmcp's answers, a line each.
    tokio::spawn(async move {
        let mut read = BufReader::new(from_rmcp);
        loop {
            let mut line = Vec::new();
            match read.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if out.send(line).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = lines_out.recv().await {
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    ((rmcp_in, rmcp_out), Pumps { reader, writer })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(bytes: &[u8], max: usize) -> Vec<Line> {
        let mut lines = Lines {
            read: BufReader::with_capacity(7, bytes),
            max,
        };
        let mut out = Vec::new();
        loop {
            let l = lines.next().await.unwrap();
            if l == Line::End {
                return out;
            }
            out.push(l);
        }
    }

    #[test]
    fn lines_are_read_up_to_the_cap_and_the_rest_of_a_longer_one_skipped() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let got = lines_of(
                b"{\"a\":1}\r\n0123456789ABCDEF\nok\n\xEF\xBB\xBF{}\nlast",
                10,
            )
            .await;
            assert_eq!(
                got,
                vec![
                    Line::Text(b"{\"a\":1}".to_vec()),
                    Line::Oversized(17),
                    Line::Text(b"ok".to_vec()),
                    Line::Text(b"{}".to_vec()),
                    Line::Text(b"last".to_vec()),
                ]
            );
            // Exactly the cap, newline included, is a line.
            assert_eq!(
                lines_of(b"123456789\n", 10).await,
                vec![Line::Text(b"123456789".to_vec())]
            );
        });
    }

    #[test]
    fn what_is_not_json_is_named() {
        assert_eq!(not_json(b"{\"jsonrpc\":\"2.0\"}"), None);
        assert!(not_json(b"{not json").unwrap().contains("not JSON"));
        assert!(
            not_json(b"{\"a\":\"\xff\"}")
                .unwrap()
                .contains("not UTF-8 (byte 7)")
        );
        let e: serde_json::Value = serde_json::from_slice(&parse_error("x")).unwrap();
        assert_eq!(e["error"]["code"], -32700);
        assert!(e["id"].is_null());
    }
}
