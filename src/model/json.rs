//! A row's content JSON, and a tool form's, written directly: the bytes
//! serde_json's compact serialisation gives (the stored form, which the
//! chain hashes cover), with strings escaped eight bytes at a time.
//!
//! serde_json escapes a string byte by byte; a transcript's rows are mostly
//! long strings with few escapes, and their escaping took 14% of an
//! import's instructions (the generated 11,200-call session). Numbers are
//! still written by serde_json. The property tests hold every byte to
//! `serde_json::to_vec`; the variants and fields are matched whole, so that
//! one added to the model stops the build here.

use serde_json::Value;

use super::{Block, ImageSource, ToolContent};

/// Append `content`'s JSON to `out`: `serde_json::to_writer(out, content)`.
pub fn write_content(out: &mut Vec<u8>, content: &[Block]) {
    write_array(out, content, write_block);
}

/// `[`, the items written by `write` and separated by commas, `]`.
fn write_array<T>(out: &mut Vec<u8>, items: &[T], write: fn(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

/// The block as `#[serde(tag = "type", rename_all = "snake_case")]` writes
/// it: the tag, then the fields in order, the skipped ones left out.
fn write_block(out: &mut Vec<u8>, b: &Block) {
    match b {
        Block::Text { text } => {
            out.extend_from_slice(br#"{"type":"text","text":"#);
            write_str(out, text);
        }
        Block::Thinking {
            thinking,
            signature,
        } => {
            out.extend_from_slice(br#"{"type":"thinking","thinking":"#);
            write_str(out, thinking);
            if let Some(signature) = signature {
                out.extend_from_slice(br#","signature":"#);
                write_str(out, signature);
            }
        }
        Block::RedactedThinking { data } => {
            out.extend_from_slice(br#"{"type":"redacted_thinking","data":"#);
            write_str(out, data);
        }
        Block::ToolUse { id, name, input } => {
            out.extend_from_slice(br#"{"type":"tool_use","id":"#);
            write_str(out, id);
            out.extend_from_slice(br#","name":"#);
            write_str(out, name);
            out.extend_from_slice(br#","input":"#);
            write_value(out, input);
        }
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            out.extend_from_slice(br#"{"type":"tool_result","tool_use_id":"#);
            write_str(out, tool_use_id);
            out.extend_from_slice(br#","content":"#);
            match content {
                ToolContent::Text(s) => write_str(out, s),
                ToolContent::Blocks(blocks) => write_content(out, blocks),
            }
            if *is_error {
                out.extend_from_slice(br#","is_error":true"#);
            }
        }
        Block::Image { source } => {
            out.extend_from_slice(br#"{"type":"image","source":"#);
            write_image_source(out, source);
        }
        // Untagged: the value as it is, no tag and no braces of ours.
        Block::Other(v) => return write_value(out, v),
    }
    out.push(b'}');
}

fn write_image_source(out: &mut Vec<u8>, s: &ImageSource) {
    // Taken apart whole, so that a field added to the type stops the build here.
    let ImageSource {
        kind,
        media_type,
        data,
        url,
    } = s;
    out.extend_from_slice(br#"{"type":"#);
    write_str(out, kind);
    for (key, field) in [
        (&br#","media_type":"#[..], media_type),
        (br#","data":"#, data),
        (br#","url":"#, url),
    ] {
        if let Some(v) = field {
            out.extend_from_slice(key);
            write_str(out, v);
        }
    }
    out.push(b'}');
}

/// A JSON value as serde_json writes it compactly: an object's members in
/// the map's own order.
pub fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => serde_json::to_writer(&mut *out, n).expect("a Vec never fails a write"),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => write_array(out, items, write_value),
        Value::Object(map) => {
            out.push(b'{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// `s` as a JSON string, quoted and escaped as serde_json escapes it: `"`
/// and `\` with a backslash, the control characters as `\b \t \n \f \r`
/// or `\u00xx` (lower-case hex), everything else (DEL and non-ASCII
/// included) as it is.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let at = next_escape(b, start);
        out.extend_from_slice(&b[start..at]);
        let Some(&c) = b.get(at) else { break };
        push_escape(out, c);
        start = at + 1;
    }
    out.push(b'"');
}

/// Whether serde_json escapes the byte.
fn escaped(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `w` that is zero. Only the lowest set bit
/// is certain (a borrow may set bits above it), which is all the scan reads.
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// The index of the first byte at or after `i` that is escaped, or the
/// length: eight bytes at a time, then one at a time for the tail.
fn next_escape(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // Below 0x20: the subtraction sets the high bit, and the byte's own
        // is clear (a byte of 0x80 and over has its own set).
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
        let found = control
            | zero_bytes(w ^ (ONES * u64::from(b'"')))
            | zero_bytes(w ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !escaped(b[i]) {
        i += 1;
    }
    i
}

fn push_escape(out: &mut Vec<u8>, c: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match c {
        b'"' => out.extend_from_slice(br#"\""#),
        b'\\' => out.extend_from_slice(br"\\"),
        0x08 => out.extend_from_slice(br"\b"),
        b'\t' => out.extend_from_slice(br"\t"),
        b'\n' => out.extend_from_slice(br"\n"),
        0x0C => out.extend_from_slice(br"\f"),
        b'\r' => out.extend_from_slice(br"\r"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(c >> 4)],
            HEX[usize::from(c & 0xF)],
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Strings dense in what is escaped and in multi-byte characters, at
    /// every offset from an eight-byte boundary.
    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                4 => proptest::char::range('a', 'z'),
                1 => proptest::char::range('\u{0}', '\u{20}'),
                1 => prop::sample::select(vec!['"', '\\', '/', '\u{7f}', 'é', '€', '😀', ' ']),
                1 => proptest::char::any(),
            ],
            0..40,
        )
        .prop_map(|cs| cs.into_iter().collect())
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((text(), inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn block() -> impl Strategy<Value = Block> {
        let opt = || proptest::option::of(text());
        let leaf = prop_oneof![
            text().prop_map(|text| Block::Text { text }),
            (text(), opt()).prop_map(|(thinking, signature)| Block::Thinking {
                thinking,
                signature
            }),
            text().prop_map(|data| Block::RedactedThinking { data }),
            (text(), text(), value()).prop_map(|(id, name, input)| Block::ToolUse {
                id,
                name,
                input
            }),
            (text(), text(), any::<bool>()).prop_map(|(tool_use_id, s, is_error)| {
                Block::ToolResult {
                    tool_use_id,
                    content: ToolContent::Text(s),
                    is_error,
                }
            }),
            (text(), opt(), opt(), opt()).prop_map(|(kind, media_type, data, url)| {
                Block::Image {
                    source: ImageSource {
                        kind,
                        media_type,
                        data,
                        url,
                    },
                }
            }),
            value().prop_map(Block::Other),
        ];
        leaf.prop_recursive(2, 12, 3, |inner| {
            (text(), prop::collection::vec(inner, 0..3), any::<bool>()).prop_map(
                |(tool_use_id, blocks, is_error)| Block::ToolResult {
                    tool_use_id,
                    content: ToolContent::Blocks(blocks),
                    is_error,
                },
            )
        })
    }

    proptest! {
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(s in text()) {
            let mut out = Vec::new();
            write_str(&mut out, &s);
            prop_assert_eq!(out, serde_json::to_vec(&s).unwrap());
        }

        #[test]
        fn content_is_written_as_serde_json_writes_it(content in prop::collection::vec(block(), 0..4)) {
            let mut out = Vec::new();
            write_content(&mut out, &content);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&content).unwrap());
        }
    }

    #[test]
    fn every_byte_is_escaped_or_kept_as_serde_json_does_it() {
        // Each ASCII byte alone and at each position of a sixteen-byte run
        // (the word scan and the tail), and non-ASCII beside it.
        for c in 0u8..0x80 {
            for at in 0..16 {
                let mut s = "x".repeat(16);
                s.replace_range(at..at + 1, std::str::from_utf8(&[c]).unwrap());
                s.push('é');
                let mut out = Vec::new();
                write_str(&mut out, &s);
                assert_eq!(out, serde_json::to_vec(&s).unwrap(), "byte {c:#x} at {at}");
            }
        }
    }
}
