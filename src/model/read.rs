//! A record's content JSON read back into blocks, each straight into its
//! variant: the same blocks as `serde_json::from_slice::<Vec<Block>>`,
//! without the copies its derived reading makes (an internally tagged enum
//! first buffers a block whole, and a string with escapes is unescaped into
//! a scratch buffer, then copied). A block's large text costs one buffer of
//! its size.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Block, ImageSource, ToolContent};

/// The blocks of a content JSON array.
pub fn blocks_from_json(json: &[u8]) -> serde_json::Result<Vec<Block>> {
    let raw: Vec<&RawValue> = serde_json::from_slice(json)?;
    raw.into_iter().map(block_from_raw).collect()
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
struct ImageFields {
    source: ImageSource,
}

/// An object block of a known type whose fields read as its variant's;
/// `None` for everything else (the derived reading decides).
fn typed(text: &str) -> Option<Block> {
    if !text.starts_with('{') {
        return None;
    }
    let tag: Tag<'_> = serde_json::from_str(text).ok()?;
    Some(match &*tag.ty {
        "text" => {
            let f: TextFields<'_> = serde_json::from_str(text).ok()?;
            Block::Text {
                text: json_string(f.text.get())?,
            }
        }
        "thinking" => {
            let f: ThinkingFields<'_> = serde_json::from_str(text).ok()?;
            Block::Thinking {
                thinking: json_string(f.thinking.get())?,
                signature: f.signature,
            }
        }
        "redacted_thinking" => {
            let f: RedactedFields<'_> = serde_json::from_str(text).ok()?;
            Block::RedactedThinking {
                data: json_string(f.data.get())?,
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
                ToolContent::Text(json_string(raw)?)
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
            let f: ImageFields = serde_json::from_str(text).ok()?;
            Block::Image { source: f.source }
        }
        _ => return None,
    })
}

/// The text of a JSON string token (`raw`, quotes included, as serde_json
/// checked it), its escapes read into one buffer of its size; `None` where
/// serde_json should decide (not a string, a lone surrogate).
fn json_string(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = inner.as_bytes();
    let mut out = String::with_capacity(inner.len());
    let mut at = 0;
    while let Some(n) = memchr::memchr(b'\\', &bytes[at..]) {
        out.push_str(&inner[at..at + n]);
        at += n + 1;
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
                let hi = hex4(inner.get(at + 1..at + 5)?)?;
                at += 4;
                match hi {
                    0xD800..=0xDBFF => {
                        if inner.get(at + 1..at + 3)? != "\\u" {
                            return None;
                        }
                        let lo = hex4(inner.get(at + 3..at + 7)?)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return None;
                        }
                        at += 6;
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                    }
                    0xDC00..=0xDFFF => return None,
                    c => char::from_u32(c)?,
                }
            }
            _ => return None,
        };
        out.push(c);
        at += 1;
    }
    out.push_str(&inner[at..]);
    Some(out)
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
            r#"[{"type":"document","source":{"type":"text","data":"d"}},{"type":null},{},"a string",7,["text","seq"],null]"#,
        ] {
            same(json);
        }
    }

    proptest! {
        #[test]
        fn any_text_reads_as_the_derived_reading_reads_it(text in "\\PC*|[\\x00-\\x1f\"\\\\/é😀]*") {
            let blocks = vec![
                Block::Text { text: text.clone() },
                Block::ToolResult { tool_use_id: "t".into(), content: ToolContent::Text(text), is_error: false },
            ];
            let json = serde_json::to_string(&blocks).unwrap();
            prop_assert_eq!(blocks_from_json(json.as_bytes()).unwrap(), blocks);
        }
    }
}
