//! A record's content JSON read back into blocks, each straight into its
//! variant: the same blocks as `serde_json::from_slice::<Vec<Block>>`,
//! without the copies its derived reading makes (an internally tagged enum
//! first buffers a block whole, and a string with escapes is unescaped into
//! a scratch buffer, then copied). A block's large text costs one buffer of
//! its size.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Block, ImageSource, ToolContent};

/// The blocks of a content JSON array.
pub fn blocks_from_json(json: &[u8]) -> serde_json::Result<Vec<Block>> {
    let raw: Vec<&RawValue> = serde_json::from_slice(json)?;
    raw.into_iter().map(block_from_raw).collect()
}

/// A JSON text read as `serde_json::from_str::<Value>` reads it (the same
/// value, or the same error), but each large string unescaped into one
/// buffer of its size: serde_json unescapes a string with escapes into a
/// scratch buffer that grows as it reads, then copies it (a request's 60 MB
/// pasted text cost three times its size).
pub fn value_from_json(raw: &str) -> serde_json::Result<Value> {
    let fast = serde_json::from_str::<&RawValue>(raw).and_then(|top| value_of(top.get()));
    fast.or_else(|_| serde_json::from_str(raw))
}

/// A value this large is read by [`value_of`] part by part; a smaller one
/// as serde_json reads it.
const VALUE_PARTS_MIN: usize = 64 << 10;

/// The value of a JSON token (`raw`, as serde_json checked it).
fn value_of(raw: &str) -> serde_json::Result<Value> {
    if raw.len() < VALUE_PARTS_MIN {
        return serde_json::from_str(raw);
    }
    match raw.as_bytes().first() {
        Some(b'"') => match json_string(raw) {
            Some(s) => Ok(Value::String(s)),
            None => serde_json::from_str(raw),
        },
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(raw)?;
            let items: serde_json::Result<Vec<Value>> =
                items.into_iter().map(|r| value_of(r.get())).collect();
            Ok(Value::Array(items?))
        }
        Some(b'{') => {
            // A key given twice keeps its last value, as serde_json's map does.
            let fields: std::collections::BTreeMap<String, &RawValue> = serde_json::from_str(raw)?;
            let mut map = serde_json::Map::new();
            for (k, v) in fields {
                map.insert(k, value_of(v.get())?);
            }
            Ok(Value::Object(map))
        }
        _ => serde_json::from_str(raw),
    }
}

/// A content JSON this large is read by [`blocks_from_owned_json`] in place.
const IN_PLACE_MIN: usize = 1 << 20;

/// [`blocks_from_json`] of a content JSON its caller gives up (a row read
/// back and decompressed): the same blocks, but the text that makes up most
/// of a large row (a pasted file, a tool's long output) is unescaped within
/// the JSON's own buffer, which becomes that text, rather than into a
/// buffer of its size beside it.
pub fn blocks_from_owned_json(json: Vec<u8>) -> serde_json::Result<Vec<Block>> {
    blocks_in_place(json, IN_PLACE_MIN)
}

fn blocks_in_place(json: Vec<u8>, min: usize) -> serde_json::Result<Vec<Block>> {
    if json.len() < min {
        return blocks_from_json(&json);
    }
    // The JSON string token (its offset and length, quotes left out) taken
    // out of the largest block, read as an empty text for now.
    let mut taken: Option<(usize, usize)> = None;
    let largest;
    let mut blocks = {
        let raw: Vec<&RawValue> = serde_json::from_slice(&json)?;
        largest = (0..raw.len()).max_by_key(|&i| (raw[i].get().len(), std::cmp::Reverse(i)));
        let base = json.as_ptr() as usize;
        let mut blocks = Vec::with_capacity(raw.len());
        for (i, r) in raw.into_iter().enumerate() {
            if Some(i) != largest {
                blocks.push(block_from_raw(r)?);
                continue;
            }
            let whole = r.get().len();
            let mut take = |token: &str| -> Option<String> {
                let inner = token.strip_prefix('"')?.strip_suffix('"')?;
                if taken.is_none() && 2 * inner.len() >= whole && unescape(inner, |_| {}).is_some()
                {
                    taken = Some((inner.as_ptr() as usize - base, inner.len()));
                    return Some(String::new());
                }
                json_string(token)
            };
            let typed = typed_with(r.get(), &mut take);
            match typed {
                Some(b) => blocks.push(b),
                None => {
                    taken = None;
                    blocks.push(serde_json::from_str(r.get())?);
                }
            }
        }
        blocks
    };
    let Some((start, len)) = taken else {
        return Ok(blocks);
    };
    let text = unescape_in_place(json, start, len).ok_or_else(|| {
        <serde_json::Error as serde::de::Error>::custom("a text does not unescape")
    })?;
    // The text left empty above: the largest block's only one.
    if let Some(slot) = largest
        .and_then(|i| blocks.get_mut(i))
        .and_then(Block::large_string_mut)
    {
        *slot = text;
    }
    Ok(blocks)
}

/// The text of the JSON string token at `buf[start..start + len]` (quotes
/// left out, its escapes checked by [`unescape`]), written from the
/// buffer's start: no escape is shorter than what it stands for, so the
/// text never overtakes what is still to be read.
fn unescape_in_place(mut buf: Vec<u8>, start: usize, len: usize) -> Option<String> {
    let end = start + len;
    let (mut r, mut w) = (start, 0);
    while r < end {
        let n = memchr::memchr(b'\\', &buf[r..end]).unwrap_or(end - r);
        buf.copy_within(r..r + n, w);
        (r, w) = (r + n, w + n);
        if r == end {
            break;
        }
        let (c, next) = escape_at(&buf[..end], r + 1)?;
        let mut utf8 = [0u8; 4];
        let c = c.encode_utf8(&mut utf8).as_bytes();
        buf[w..w + c.len()].copy_from_slice(c);
        w += c.len();
        r = next;
    }
    buf.truncate(w);
    String::from_utf8(buf).ok()
}

/// One block: read into its variant where the fast reading applies, else
/// as the derived reading reads it (the same result, the slow way).
fn block_from_raw(raw: &RawValue) -> serde_json::Result<Block> {
    match typed(raw.get()) {
        Some(b) => Ok(b),
        None => serde_json::from_str(raw.get()),
    }
}

#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
}

#[derive(Deserialize)]
struct TextFields<'a> {
    #[serde(borrow)]
    text: &'a RawValue,
}

#[derive(Deserialize)]
struct ThinkingFields<'a> {
    #[serde(borrow)]
    thinking: &'a RawValue,
    #[serde(default)]
    signature: Option<String>,
}

#[derive(Deserialize)]
struct RedactedFields<'a> {
    #[serde(borrow)]
    data: &'a RawValue,
}

#[derive(Deserialize)]
struct ToolUseFields {
    id: String,
    name: String,
    input: serde_json::Value,
}

#[derive(Deserialize)]
struct ToolResultFields<'a> {
    tool_use_id: String,
    #[serde(borrow)]
    content: &'a RawValue,
    #[serde(default)]
    is_error: bool,
}

#[derive(Deserialize)]
struct ImageFields<'a> {
    #[serde(borrow)]
    source: ImageSourceFields<'a>,
}

/// [`ImageSource`]'s fields, its data (a base64 image, most of a large
/// row) left as its token.
#[derive(Deserialize)]
struct ImageSourceFields<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
    #[serde(default)]
    url: Option<String>,
}

/// An object block of a known type whose fields read as its variant's;
/// `None` for everything else (the derived reading decides).
fn typed(text: &str) -> Option<Block> {
    typed_with(text, &mut json_string)
}

/// [`typed`], its texts read by `string` (a JSON string token in, its text
/// out).
fn typed_with(text: &str, string: &mut dyn FnMut(&str) -> Option<String>) -> Option<Block> {
    if !text.starts_with('{') {
        return None;
    }
    let tag: Tag<'_> = serde_json::from_str(text).ok()?;
    Some(match &*tag.ty {
        "text" => {
            let f: TextFields<'_> = serde_json::from_str(text).ok()?;
            Block::Text {
                text: string(f.text.get())?,
            }
        }
        "thinking" => {
            let f: ThinkingFields<'_> = serde_json::from_str(text).ok()?;
            Block::Thinking {
                thinking: string(f.thinking.get())?,
                signature: f.signature,
            }
        }
        "redacted_thinking" => {
            let f: RedactedFields<'_> = serde_json::from_str(text).ok()?;
            Block::RedactedThinking {
                data: string(f.data.get())?,
            }
        }
        "tool_use" => {
            let f: ToolUseFields = serde_json::from_str(text).ok()?;
            Block::ToolUse {
                id: f.id,
                name: f.name,
                input: f.input,
            }
        }
        "tool_result" => {
            let f: ToolResultFields<'_> = serde_json::from_str(text).ok()?;
            let raw = f.content.get();
            let content = if raw.starts_with('"') {
                ToolContent::Text(string(raw)?)
            } else if raw.starts_with('[') {
                ToolContent::Blocks(blocks_from_json(raw.as_bytes()).ok()?)
            } else {
                return None;
            };
            Block::ToolResult {
                tool_use_id: f.tool_use_id,
                content,
                is_error: f.is_error,
            }
        }
        "image" => {
            let f: ImageFields<'_> = serde_json::from_str(text).ok()?;
            let s = f.source;
            let data = match s.data {
                Some(raw) => Some(string(raw.get())?),
                None => None,
            };
            Block::Image {
                source: ImageSource {
                    kind: s.kind,
                    media_type: s.media_type,
                    data,
                    url: s.url,
                },
            }
        }
        _ => return None,
    })
}

/// The text of a JSON string token (`raw`, quotes included, as serde_json
/// checked it), its escapes read into one buffer of its size; `None` where
/// serde_json should decide (not a string, a lone surrogate).
fn json_string(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    unescape(inner, |piece| out.push_str(piece))?;
    Some(out)
}

/// The text of a JSON string token's inside, handed to `push` piece by
/// piece; `None` where serde_json should decide (a lone surrogate).
fn unescape(inner: &str, mut push: impl FnMut(&str)) -> Option<()> {
    let bytes = inner.as_bytes();
    let mut at = 0;
    while let Some(n) = memchr::memchr(b'\\', &bytes[at..]) {
        push(&inner[at..at + n]);
        let (c, next) = escape_at(bytes, at + n + 1)?;
        push(c.encode_utf8(&mut [0u8; 4]));
        at = next;
    }
    push(&inner[at..]);
    Some(())
}

/// The character of the escape whose letter is `bytes[at]` (just past
/// its backslash), and where the bytes after it start; `None` where
/// serde_json should decide (an unknown escape, a lone surrogate).
fn escape_at(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let hex = |at: usize| hex4(std::str::from_utf8(bytes.get(at..at + 4)?).ok()?);
    let c = match *bytes.get(at)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hi = hex(at + 1)?;
            return match hi {
                0xD800..=0xDBFF => {
                    if bytes.get(at + 5..at + 7)? != b"\\u" {
                        return None;
                    }
                    let lo = hex(at + 7)?;
                    if !(0xDC00..=0xDFFF).contains(&lo) {
                        return None;
                    }
                    let c = char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?;
                    Some((c, at + 11))
                }
                0xDC00..=0xDFFF => None,
                c => Some((char::from_u32(c)?, at + 5)),
            };
        }
        _ => return None,
    };
    Some((c, at + 1))
}

fn hex4(s: &str) -> Option<u32> {
    if s.len() != 4 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn same(json: &str) {
        let derived = serde_json::from_str::<Vec<Block>>(json).map_err(|e| e.to_string());
        let fast = blocks_from_json(json.as_bytes()).map_err(|e| e.to_string());
        assert_eq!(fast, derived, "{json}");
        let in_place = blocks_in_place(json.as_bytes().to_vec(), 0).map_err(|e| e.to_string());
        assert_eq!(in_place, derived, "{json}");
    }

    #[test]
    fn blocks_read_as_the_derived_reading_reads_them() {
        for json in [
            r#"[]"#,
            r#"[{"type":"text","text":"plain"}]"#,
            r#"[{"type":"text","text":"a\nb \"q\" \\ \/ \b\f\r\t \u00e9 \ud83d\ude00 é"}]"#,
            r#"[{"text":"tag last","extra":1,"type":"text"}]"#,
            r#"[{"type":"text"}]"#,
            r#"[{"type":"text","text":3}]"#,
            r#"[{"type":"text","text":"a","text":"b"}]"#,
            r#"[{"type":"text","type":"text","text":"a"}]"#,
            r#"[{"type":"te\u0078t","text":"escaped tag"}]"#,
            r#"[{"type":"thinking","thinking":"hm"},{"type":"thinking","thinking":"x","signature":"s"}]"#,
            r#"[{"type":"thinking","thinking":"x","signature":null},{"type":"thinking","thinking":"x","signature":1}]"#,
            r#"[{"type":"redacted_thinking","data":"z"}]"#,
            r#"[{"type":"tool_use","id":"t1","name":"Read","input":{"p":"a\nb"}},{"type":"tool_use","id":"t2","name":"R"}]"#,
            r#"[{"type":"tool_result","tool_use_id":"t1","content":"out\n","is_error":true}]"#,
            r#"[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"y"},{"type":"image","source":{"type":"base64","data":"AA"}},{"type":"doc"}]}]"#,
            r#"[{"type":"tool_result","tool_use_id":"t1","content":null},{"type":"tool_result","tool_use_id":"t1"}]"#,
            r#"[{"type":"tool_result","tool_use_id":"t1","content":"x","is_error":null}]"#,
            r#"[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"image","source":{}}]"#,
            r#"[{"type":"image","source":{"type":"base64","data":"A\/A\u0041","extra":[1]}},{"type":"text","text":"x"}]"#,
            r#"[{"type":"image","source":{"type":"url","url":"https://x/y.png","media_type":null,"data":null}}]"#,
            r#"[{"type":"image","source":{"type":"base64","data":7}},{"type":"image","source":{"type":"b","data":"A","data":"B"}}]"#,
            r#"[{"type":"image","source":{"data":"AAAA"}},{"type":"image","source":"AAAA"},{"type":"image"}]"#,
            r#"[{"type":"document","source":{"type":"text","data":"d"}},{"type":null},{},"a string",7,["text","seq"],null]"#,
        ] {
            same(json);
        }
    }

    /// Lone and broken surrogates, a short and a bad `\u`: every reading
    /// refuses them as serde_json does (its error's column may differ: the
    /// fast reading hands serde_json the block, not the whole row).
    #[test]
    fn a_broken_escape_is_refused_by_every_reading() {
        for json in [
            r#"[{"type":"text","text":"lone \ud83d end"}]"#,
            r#"[{"type":"text","text":"low \ude00 first"}]"#,
            r#"[{"type":"text","text":"pair cut \ud83d\u0041"}]"#,
            r#"[{"type":"text","text":"short \u00e"}]"#,
            r#"[{"type":"text","text":"bad \uzzzz"}]"#,
            r#"[{"type":"text","text":"at the end \ud83d"}]"#,
        ] {
            assert!(serde_json::from_str::<Vec<Block>>(json).is_err(), "{json}");
            assert!(blocks_from_json(json.as_bytes()).is_err(), "{json}");
            assert!(
                blocks_in_place(json.as_bytes().to_vec(), 0).is_err(),
                "{json}"
            );
            let inner = &json[json.find("\"text\":\"").unwrap() + 8..json.len() - 3];
            assert_eq!(json_string(&format!("\"{inner}\"")), None, "{json}");
        }
    }

    /// A value read part by part equals serde_json's, and so does an error.
    #[test]
    fn values_read_as_serde_json_reads_them() {
        let long = "a\\nb \\\"q\\\" \\u00e9 \\ud83d\\ude00 é ".repeat(VALUE_PARTS_MIN / 8);
        for json in [
            format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"{long}"}},{{"type":"text","text":"x"}}]}}"#
            ),
            format!(r#" {{"b":1.5e3,"a":[null,true,"{long}",{{"k":"v","k":"w"}}],"a":"{long}"}} "#),
            format!(r#"["{long}", -0, 12345678901234567890, {{}}]"#),
            format!(r#""{long}""#),
            format!(r#"{{"lone":"{long}\ud800"}}"#),
            format!(r#"{{"cut":"{long}"#),
            format!(r#"{{"k":"{long}"}} trailing"#),
            "[1, 2".to_string(),
        ] {
            let derived = serde_json::from_str::<Value>(&json).map_err(|e| e.to_string());
            let read = value_from_json(&json).map_err(|e| e.to_string());
            assert_eq!(read, derived, "{}", &json[..80.min(json.len())]);
        }
    }

    proptest! {
        #[test]
        fn any_text_reads_as_the_derived_reading_reads_it(text in "\\PC*|[\\x00-\\x1f\"\\\\/é😀]*") {
            let blocks = vec![
                Block::Text { text: text.clone() },
                Block::ToolResult { tool_use_id: "t".into(), content: ToolContent::Text(text.clone()), is_error: false },
                Block::Image { source: ImageSource { kind: "base64".into(), media_type: None, data: Some(text), url: None } },
            ];
            let json = serde_json::to_string(&blocks).unwrap();
            prop_assert_eq!(blocks_from_json(json.as_bytes()).unwrap(), blocks.clone());
            // Read in place, each of them the largest in turn.
            for k in 0..blocks.len() {
                let mut some = blocks.clone();
                some.rotate_left(k);
                some.push(Block::Text { text: "short".into() });
                let json = serde_json::to_vec(&some).unwrap();
                prop_assert_eq!(blocks_in_place(json, 0).unwrap(), some);
            }
        }
    }
}
