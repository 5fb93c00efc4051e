//! The normalised message model shared by importers, the store and the engine.
//!
//! Every importer turns its source format into [`Message`]s whose content is a
//! list of Anthropic-style [`Block`]s. One source line usually becomes one
//! message; an API response split over several lines stays split (its rows
//! share a `gen_id`), so that a file that grows is imported by appending rows,
//! never by rewriting one.

pub mod decimal;
pub(crate) mod digest;
mod hint;
pub mod json;
mod read;
pub(crate) mod time;

pub use hint::Hint;
pub use read::{blocks_from_json, blocks_from_owned_json, value_from_json};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who a row speaks for. `Meta` rows are part of the record but never of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    Meta,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Meta => "meta",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "meta" => Role::Meta,
            _ => return None,
        })
    }
}

/// What a row is. The kind decides turn boundaries and whether a row reaches a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A real user ask: starts a turn.
    Ask,
    /// Tool results answering the previous generation.
    ToolResult,
    /// Text the model saw but nobody typed: injected meta text, environment and
    /// developer context, command output.
    Context,
    /// "[Request interrupted by user]" and the like.
    Interrupt,
    /// One block (or, for formats without streaming, all blocks) of a model generation.
    Generation,
    /// The agent's own compaction summary (Claude Code `isCompactSummary`, Codex `compacted`)
    /// of history that is in the record before it. Kept in the record; compactor folds
    /// the raw history with its own summaries instead.
    CompactSummary,
    /// A summary that opens the record: the session began at a compaction (one compactor
    /// wrote, or one whose earlier lines are not in the file), so it stands for history the
    /// record does not hold. The first user message the model saw; it starts a turn.
    CarriedSummary,
    /// A synthetic assistant line: an API error or a client-side placeholder. Not a model call.
    Synthetic,
    /// A session title (`summary` line).
    Title,
    /// The agent's compaction boundary marker.
    CompactBoundary,
    /// Recorded provider usage that arrived on its own line (Codex `token_count`).
    Usage,
    /// A system prompt (OpenAI `system` messages, an Anthropic request's `system`).
    /// Views carry no system prompt: its size is part of the measured overhead.
    System,
    /// What the client noted beside the conversation and no model was sent
    /// (OpenCode's patch parts, files attached by reference, agent mentions).
    Note,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Ask => "ask",
            Kind::ToolResult => "tool_result",
            Kind::Context => "context",
            Kind::Interrupt => "interrupt",
            Kind::Generation => "generation",
            Kind::CompactSummary => "compact_summary",
            Kind::CarriedSummary => "carried_summary",
            Kind::Synthetic => "synthetic",
            Kind::Title => "title",
            Kind::CompactBoundary => "compact_boundary",
            Kind::Usage => "usage",
            Kind::System => "system",
            Kind::Note => "note",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "ask" => Kind::Ask,
            "tool_result" => Kind::ToolResult,
            "context" => Kind::Context,
            "interrupt" => Kind::Interrupt,
            "generation" => Kind::Generation,
            "compact_summary" => Kind::CompactSummary,
            "carried_summary" => Kind::CarriedSummary,
            "synthetic" => Kind::Synthetic,
            "title" => Kind::Title,
            "compact_boundary" => Kind::CompactBoundary,
            "usage" => Kind::Usage,
            "system" => Kind::System,
            "note" => Kind::Note,
            _ => return None,
        })
    }

    /// Whether rows of this kind are conversation the model was sent.
    pub fn reaches_view(self) -> bool {
        matches!(
            self,
            Kind::Ask
                | Kind::ToolResult
                | Kind::Context
                | Kind::Interrupt
                | Kind::Generation
                | Kind::CarriedSummary
        )
    }
}

/// An Anthropic-style content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolContent,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    Image {
        source: ImageSource,
    },
    /// A block type this version does not model (a document, a server tool block...).
    /// Kept verbatim in the record; rendered as text in a view.
    #[serde(untagged)]
    Other(Value),
}

impl Block {
    /// The one string that can make a block large (a text, a thinking, a
    /// redacted thinking, a tool's output as text, an image's data): the
    /// slot a large row's text is read into or escaped from in place.
    pub fn large_string_mut(&mut self) -> Option<&mut String> {
        match self {
            Block::Text { text: s }
            | Block::Thinking { thinking: s, .. }
            | Block::RedactedThinking { data: s }
            | Block::ToolResult {
                content: ToolContent::Text(s),
                ..
            }
            | Block::Image {
                source: ImageSource { data: Some(s), .. },
            } => Some(s),
            _ => None,
        }
    }

    /// The block as a JSON value, its strings moved rather than copied: the
    /// same value as `serde_json::to_value(&block)` (a block of a pasted
    /// file or an image costs no second copy of its text).
    pub fn into_value(self) -> Value {
        let mut o = serde_json::Map::new();
        let mut put = |k: &str, v: Value| {
            o.insert(k.to_string(), v);
        };
        match self {
            Block::Text { text } => {
                put("type", "text".into());
                put("text", Value::String(text));
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                put("type", "thinking".into());
                put("thinking", Value::String(thinking));
                if let Some(s) = signature {
                    put("signature", Value::String(s));
                }
            }
            Block::RedactedThinking { data } => {
                put("type", "redacted_thinking".into());
                put("data", Value::String(data));
            }
            Block::ToolUse { id, name, input } => {
                put("type", "tool_use".into());
                put("id", Value::String(id));
                put("name", Value::String(name));
                put("input", input);
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                put("type", "tool_result".into());
                put("tool_use_id", Value::String(tool_use_id));
                put(
                    "content",
                    match content {
                        ToolContent::Text(t) => Value::String(t),
                        ToolContent::Blocks(bs) => {
                            Value::Array(bs.into_iter().map(Block::into_value).collect())
                        }
                    },
                );
                if is_error {
                    put("is_error", Value::Bool(true));
                }
            }
            Block::Image { source } => {
                let mut src = serde_json::Map::new();
                src.insert("type".into(), Value::String(source.kind));
                for (k, v) in [
                    ("media_type", source.media_type),
                    ("data", source.data),
                    ("url", source.url),
                ] {
                    if let Some(v) = v {
                        src.insert(k.into(), Value::String(v));
                    }
                }
                put("type", "image".into());
                put("source", Value::Object(src));
            }
            Block::Other(v) => return v,
        }
        Value::Object(o)
    }
}

/// A tool result's content: a plain string or a list of text/image blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolContent {
    Text(String),
    Blocks(Vec<Block>),
}

impl ToolContent {
    /// The text of the content, images left out, blocks joined by newlines.
    pub fn text(&self) -> String {
        match self {
            ToolContent::Text(s) => s.clone(),
            ToolContent::Blocks(blocks) => {
                let mut out = String::new();
                for b in blocks {
                    if let Block::Text { text } = b {
                        if !out.is_empty() {
                            out.push('\n');
                        }
                        out.push_str(text);
                    }
                }
                out
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageSource {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Recorded provider usage for one generation, in Anthropic's terms.
/// `input_tokens` excludes cached tokens, as Anthropic reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// The whole prompt the provider counted: fresh + cache read + cache write.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }
}

/// One normalised row of the record.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub kind: Kind,
    pub content: Vec<Block>,
    /// Identity of the generation (API response) an assistant row belongs to;
    /// on a `Usage` row, the generation the usage belongs to.
    pub gen_id: Option<String>,
    pub usage: Option<Usage>,
    /// 1-based line in the source file where the row starts.
    pub line: u64,
    /// The source's own id for the line (Claude Code `uuid`), when it has one.
    pub source_uuid: Option<String>,
    pub timestamp: Option<String>,
    /// Turn index: 0 before the first ask, then 1, 2, ... (assigned by the task builder).
    pub turn: u32,
    /// Step index: the ordinal of the generation the row belongs to or follows (0 before any).
    pub step: u32,
}

impl Message {
    pub fn new(role: Role, kind: Kind, content: Vec<Block>, line: u64) -> Message {
        Message {
            role,
            kind,
            content,
            gen_id: None,
            usage: None,
            line,
            source_uuid: None,
            timestamp: None,
            turn: 0,
            step: 0,
        }
    }

    /// One tool call, as the assistant's generation carries it.
    pub fn tool_call(id: &str, name: &str, input: Value, line: u64) -> Message {
        let call = Block::ToolUse {
            id: id.to_string(),
            name: name.to_string(),
            input,
        };
        Message::new(Role::Assistant, Kind::Generation, vec![call], line)
    }

    /// A tool's result, as the user side of the conversation carries it.
    pub fn tool_result(
        tool_use_id: String,
        content: ToolContent,
        is_error: bool,
        line: u64,
    ) -> Message {
        let result = Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        };
        Message::new(Role::User, Kind::ToolResult, vec![result], line)
    }

    /// The content as compact JSON (the form stored in `task_message.content`).
    pub fn content_json(&self) -> String {
        let mut out = Vec::new();
        json::write_content(&mut out, &self.content);
        String::from_utf8(out).expect("JSON of strings is UTF-8")
    }
}

/// The source format of a transcript. Its flag values (`--format`, `--input-format`)
/// are the same kebab-case names as `as_str`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    ClaudeCode,
    Codex,
    OpenaiChat,
    Anthropic,
    /// OpenCode's SQLite store (`opencode.db`), not a line format.
    Opencode,
    /// Gemini CLI's session files (`~/.gemini/tmp/*/chats/session-*.jsonl`).
    GeminiCli,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::OpenaiChat => "openai-chat",
            Format::Anthropic => "anthropic",
            Format::Opencode => "opencode",
            Format::GeminiCli => "gemini-cli",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "claude-code" => Format::ClaudeCode,
            "codex" => Format::Codex,
            "openai-chat" => Format::OpenaiChat,
            "anthropic" => Format::Anthropic,
            "opencode" => Format::Opencode,
            "gemini-cli" => Format::GeminiCli,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_in_anthropic_shape() {
        let json = r#"[{"type":"text","text":"hi"},{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a"}},{"type":"tool_result","tool_use_id":"t1","content":"x","is_error":true},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"y"}]},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}},{"type":"document","source":{"type":"text","data":"d"}}]"#;
        let blocks: Vec<Block> = serde_json::from_str(json).unwrap();
        assert!(matches!(blocks[6], Block::Other(_)));
        // Modelled blocks keep their field order; unknown ones come back with
        // sorted keys (serde_json's map is ordered, never insertion or hash order).
        let expected = json.replace(
            r#"{"type":"document","source":{"type":"text","data":"d"}}"#,
            r#"{"source":{"data":"d","type":"text"},"type":"document"}"#,
        );
        assert_eq!(serde_json::to_string(&blocks).unwrap(), expected);
        // Moved into a value, each is the value it serialises to.
        let more: Vec<Block> = serde_json::from_str(r#"[{"type":"thinking","thinking":"no sig"},{"type":"redacted_thinking","data":"x"},{"type":"tool_result","tool_use_id":"t3","content":[{"type":"image","source":{"type":"url","url":"https://e/x.png"}}]}]"#).unwrap();
        for b in blocks.into_iter().chain(more) {
            let want = serde_json::to_value(&b).unwrap();
            assert_eq!(b.into_value(), want);
        }
    }

    #[test]
    fn usage_prompt_tokens_sums_cache() {
        let u = Usage {
            input_tokens: 3,
            output_tokens: 9,
            cache_read_input_tokens: 11442,
            cache_creation_input_tokens: 15005,
        };
        assert_eq!(u.prompt_tokens(), 26450);
    }

    #[test]
    fn kinds_and_roles_parse_back() {
        for k in [
            Kind::Ask,
            Kind::ToolResult,
            Kind::Context,
            Kind::Interrupt,
            Kind::Generation,
            Kind::CompactSummary,
            Kind::CarriedSummary,
            Kind::Synthetic,
            Kind::Title,
            Kind::CompactBoundary,
            Kind::Usage,
            Kind::System,
            Kind::Note,
        ] {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        for r in [Role::User, Role::Assistant, Role::Meta] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
    }
}
