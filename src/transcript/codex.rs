//! Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! `response_item` lines are the model-visible history and the only source of
//! messages; `event_msg` copies of them (`user_message`, `agent_message`,
//! `agent_reasoning`) are duplicates and skipped. A generation is a run of
//! assistant-side items (reasoning, assistant message, tool calls); a
//! `turn_context` line (written before every model call) or any input item
//! ends it. `token_count` events carry usage: repeated ones (same running
//! total) are dropped, and each is attributed to the generation it measures,
//! which older builds write after the usage event and newer ones before it.

use serde_json::{Map, Value};

use super::common::{image_from_url, opt_str, shape, type_name, typed_items};
use super::{LineError, LineOutcome, LineResult, ObjectLines, TaskSet, expected_line};
use crate::model::{Block, Format, Kind, Message, Role, ToolContent, Usage};

#[derive(Default)]
pub(crate) struct CodexImporter {
    /// Ordinal of the last generation started.
    generation: u32,
    /// Whether the last conversation item was assistant-side (the generation is open).
    in_generation: bool,
    /// A `turn_context` (a new model call) was seen since the last assistant item.
    boundary: bool,
    /// Whether the current generation already has its usage.
    generation_has_usage: bool,
    /// A usage seen before its generation started (older builds).
    usage_pending: bool,
    last_total: Option<Value>,
    meta_seen: bool,
}

impl ObjectLines for CodexImporter {
    const FORMAT: Format = Format::Codex;

    fn object(
        &mut self,
        line: u64,
        mut obj: Map<String, Value>,
        tasks: &mut TaskSet,
    ) -> LineResult {
        let timestamp = opt_str(&obj, "timestamp");
        // Taken out, so that a tool's output is moved into its row, not copied.
        let mut payload = obj.remove("payload");
        let ty = obj.get("type").and_then(Value::as_str);
        match (ty, payload.as_mut()) {
            (Some(ty), Some(payload)) => {
                let Value::Object(payload) = payload else {
                    return Err(shape(
                        line,
                        format!("\"payload\" is {}; expected an object", type_name(payload)),
                    ));
                };
                self.envelope(line, ty, payload, timestamp, tasks)
            }
            // The legacy format: a bare header, `record_type` markers, bare items.
            (None, None) if obj.contains_key("record_type") => Ok(LineOutcome::NotConversation),
            (None, None) if line == 1 && obj.contains_key("id") => {
                self.session_meta(line, &obj, tasks);
                Ok(LineOutcome::Imported)
            }
            (Some(_), None) if is_response_item(&obj) => {
                push_item(self.response_item(line, &mut obj)?, timestamp, tasks)
            }
            (Some(other), None) => Ok(LineOutcome::Unknown(other.to_string())),
            (None, _) => Err(shape(
                line,
                format!(
                    "the object has no \"type\"; expected {}",
                    expected_line(Self::FORMAT)
                ),
            )),
        }
    }
}

fn is_response_item(obj: &Map<String, Value>) -> bool {
    matches!(
        obj.get("type").and_then(Value::as_str),
        Some(
            "message"
                | "reasoning"
                | "function_call"
                | "function_call_output"
                | "custom_tool_call"
                | "custom_tool_call_output"
                | "local_shell_call"
                | "web_search_call"
        )
    )
}

impl CodexImporter {
    fn envelope(
        &mut self,
        line: u64,
        ty: &str,
        payload: &mut Map<String, Value>,
        timestamp: Option<String>,
        tasks: &mut TaskSet,
    ) -> LineResult {
        match ty {
            "session_meta" => {
                self.session_meta(line, payload, tasks);
                Ok(LineOutcome::NotConversation)
            }
            "turn_context" => {
                self.boundary = true;
                let task = tasks.main();
                if task.meta.model.is_none() {
                    task.meta.model = opt_str(payload, "model");
                }
                Ok(LineOutcome::NotConversation)
            }
            "response_item" => push_item(self.response_item(line, payload)?, timestamp, tasks),
            "event_msg" => match payload.get("type").and_then(Value::as_str) {
                Some("token_count") => {
                    push_item(self.token_count(line, payload)?, timestamp, tasks)
                }
                Some(
                    "user_message"
                    | "agent_message"
                    | "agent_reasoning"
                    | "agent_reasoning_raw_content",
                ) => Ok(LineOutcome::Duplicate),
                _ => Ok(LineOutcome::NotConversation),
            },
            "compacted" => {
                let message = opt_str(payload, "message").unwrap_or_default();
                let text = if message.is_empty() {
                    let n = payload
                        .get("replacement_history")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    format!(
                        "[Codex compacted the conversation: {n} items in its replacement history]"
                    )
                } else {
                    message
                };
                let m = Message::new(
                    Role::User,
                    Kind::CompactSummary,
                    vec![Block::Text { text }],
                    line,
                );
                self.close_generation();
                push_item(Item::Message(m), timestamp, tasks)
            }
            "world_state"
            | "inter_agent_communication"
            | "inter_agent_communication_metadata"
            | "token_usage_record"
            | "security_risk_score"
            | "retained_context"
            | "realtime_item" => Ok(LineOutcome::NotConversation),
            other => Ok(LineOutcome::Unknown(other.to_string())),
        }
    }

    fn session_meta(&mut self, line: u64, p: &Map<String, Value>, tasks: &mut TaskSet) {
        if self.meta_seen {
            return; // a resumed rollout repeats its meta; the first one names the task
        }
        self.meta_seen = true;
        let task = tasks.main();
        // The base instructions are the request's system prompt: a meta row the
        // checkpoint carries as `system`, never part of the view.
        let instructions = p
            .get("base_instructions")
            .and_then(|b| b.get("text"))
            .or_else(|| p.get("instructions"))
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty());
        if let Some(text) = instructions {
            let text = text.to_string();
            task.push(Message::new(
                Role::Meta,
                Kind::System,
                vec![Block::Text { text }],
                line,
            ));
        }
        task.meta.session_id = opt_str(p, "id").or_else(|| opt_str(p, "session_id"));
        task.meta.cwd = opt_str(p, "cwd");
        task.meta.cli_version = opt_str(p, "cli_version");
        task.meta.parent_session = opt_str(p, "forked_from_id").or_else(|| {
            // Subagent threads name their parent inside `source`.
            p.get("source")
                .and_then(Value::as_object)
                .and_then(|s| s.get("subagent"))
                .and_then(|s| {
                    s.get("parent_thread_id").or_else(|| {
                        s.get("thread_spawn")
                            .and_then(|t| t.get("parent_thread_id"))
                    })
                })
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    }

    fn close_generation(&mut self) {
        self.in_generation = false;
    }

    /// The gen id for an assistant-side item, opening a new generation if needed.
    fn generation_id(&mut self) -> String {
        if !self.in_generation || self.boundary {
            self.generation += 1;
            self.in_generation = true;
            self.boundary = false;
            self.generation_has_usage = self.usage_pending;
            self.usage_pending = false;
        }
        format!("gen-{}", self.generation)
    }

    fn token_count(&mut self, line: u64, p: &Map<String, Value>) -> ItemResult {
        let Some(info) = p.get("info").and_then(Value::as_object) else {
            return Ok(Item::Skip(LineOutcome::NotConversation));
        };
        let total = info.get("total_token_usage").cloned();
        if total.is_some() && total == self.last_total {
            return Ok(Item::Skip(LineOutcome::Duplicate));
        }
        self.last_total = total;
        let Some(last) = info.get("last_token_usage").and_then(Value::as_object) else {
            return Ok(Item::Skip(LineOutcome::NotConversation));
        };
        let n = |k: &str| super::tokens::count(line, last, k);
        let cached = n("cached_input_tokens")?;
        let usage = Usage {
            input_tokens: n("input_tokens")?.saturating_sub(cached),
            output_tokens: n("output_tokens")?,
            cache_read_input_tokens: cached,
            cache_creation_input_tokens: 0,
        };
        // Attribute to the open generation if it has no usage yet, else to the next one.
        let gen_ordinal = if self.generation > 0 && !self.generation_has_usage {
            self.generation_has_usage = true;
            self.generation
        } else {
            self.usage_pending = true;
            self.generation + 1
        };
        let mut m = Message::new(Role::Meta, Kind::Usage, Vec::new(), line);
        m.gen_id = Some(format!("gen-{gen_ordinal}"));
        m.usage = Some(usage);
        Ok(Item::Message(m))
    }

    fn response_item(&mut self, line: u64, p: &mut Map<String, Value>) -> ItemResult {
        let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
        let msg = match ty {
            "message" => {
                let role = p.get("role").and_then(Value::as_str).unwrap_or("");
                let content = message_content(line, p.get("content"))?;
                match role {
                    "assistant" => self.generation_message(content, line),
                    "user" => {
                        self.close_generation();
                        let kind = classify_user(&content);
                        Message::new(Role::User, kind, content, line)
                    }
                    "developer" | "system" => {
                        self.close_generation();
                        Message::new(Role::User, Kind::Context, content, line)
                    }
                    other => {
                        return Err(shape(
                            line,
                            format!(
                                "message role \"{other}\"; expected user, assistant, developer or system"
                            ),
                        ));
                    }
                }
            }
            "reasoning" => {
                let mut text = String::new();
                for key in ["summary", "content"] {
                    if let Some(items) = p.get(key).and_then(Value::as_array) {
                        for it in items {
                            if let Some(t) = it.get("text").and_then(Value::as_str) {
                                if !text.is_empty() {
                                    text.push_str("\n\n");
                                }
                                text.push_str(t);
                            }
                        }
                    }
                }
                let encrypted = opt_str(p, "encrypted_content");
                let block = if text.is_empty() {
                    match encrypted {
                        Some(data) => Block::RedactedThinking { data },
                        None => return Ok(Item::Skip(LineOutcome::NotConversation)),
                    }
                } else {
                    Block::Thinking {
                        thinking: text,
                        signature: encrypted,
                    }
                };
                self.generation_message(vec![block], line)
            }
            "function_call" => {
                let id = call_id(line, p)?;
                let name = opt_str(p, "name").unwrap_or_else(|| "function".to_string());
                let args = p.get("arguments");
                let input = match args {
                    Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                        Ok(v @ Value::Object(_)) => v,
                        _ => single("arguments", Value::String(s.clone())),
                    },
                    Some(v @ Value::Object(_)) => v.clone(),
                    Some(other) => single("arguments", other.clone()),
                    None => Value::Object(Map::new()),
                };
                self.generation_message(vec![Block::ToolUse { id, name, input }], line)
            }
            "custom_tool_call" => {
                let id = call_id(line, p)?;
                let name = opt_str(p, "name").unwrap_or_else(|| "custom_tool".to_string());
                let input = single("input", p.get("input").cloned().unwrap_or(Value::Null));
                self.generation_message(vec![Block::ToolUse { id, name, input }], line)
            }
            "local_shell_call" => {
                let id = opt_str(p, "call_id")
                    .or_else(|| opt_str(p, "id"))
                    .ok_or_else(|| {
                        shape(
                            line,
                            "local_shell_call without \"call_id\"; expected a call id",
                        )
                    })?;
                let input = p.get("action").cloned().unwrap_or(Value::Null);
                let input = if input.is_object() {
                    input
                } else {
                    single("action", input)
                };
                self.generation_message(
                    vec![Block::ToolUse {
                        id,
                        name: "local_shell".to_string(),
                        input,
                    }],
                    line,
                )
            }
            "web_search_call" => {
                // A server-side search with no result item: kept as a visible note.
                let action = p.get("action");
                let query = action
                    .and_then(|a| a.get("query"))
                    .and_then(Value::as_str)
                    .map(|q| format!(": {q}"))
                    .unwrap_or_default();
                self.generation_message(
                    vec![Block::Text {
                        text: format!("[web search{query}]"),
                    }],
                    line,
                )
            }
            "function_call_output" | "custom_tool_call_output" => {
                self.close_generation();
                let id = call_id(line, p)?;
                let (content, is_error) = tool_output(line, p.remove("output"))?;
                Message::tool_result(id, content, is_error, line)
            }
            "ghost_snapshot"
            | "compaction"
            | "additional_tools"
            | "image_generation_call"
            | "agent_message" => return Ok(Item::Skip(LineOutcome::NotConversation)),
            other => {
                return Ok(Item::Skip(LineOutcome::Unknown(format!(
                    "response_item/{other}"
                ))));
            }
        };
        Ok(Item::Message(msg))
    }

    fn generation_message(&mut self, content: Vec<Block>, line: u64) -> Message {
        let mut m = Message::new(Role::Assistant, Kind::Generation, content, line);
        m.gen_id = Some(self.generation_id());
        m
    }
}

/// What one rollout item makes: a message, or an outcome and no message.
enum Item {
    Message(Message),
    Skip(LineOutcome),
}

type ItemResult = Result<Item, LineError>;

/// Push an item's message, stamped with its line's time; an outcome passes through.
fn push_item(item: Item, timestamp: Option<String>, tasks: &mut TaskSet) -> LineResult {
    match item {
        Item::Message(mut m) => {
            m.timestamp = timestamp;
            tasks.main().push(m);
            Ok(LineOutcome::Imported)
        }
        Item::Skip(outcome) => Ok(outcome),
    }
}

fn single(key: &str, v: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.to_string(), v);
    Value::Object(m)
}

fn call_id(line: u64, p: &Map<String, Value>) -> Result<String, LineError> {
    opt_str(p, "call_id").ok_or_else(|| {
        shape(
            line,
            format!(
                "{} without \"call_id\"; expected a string call id",
                p.get("type").and_then(Value::as_str).unwrap_or("item")
            ),
        )
    })
}

/// Codex content items (`input_text`, `output_text`, `input_image`) as blocks.
fn message_content(line: u64, v: Option<&Value>) -> Result<Vec<Block>, LineError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![Block::Text { text: s.clone() }]),
        other => typed_items(
            line,
            other,
            "message content",
            "a list of content items",
            |ty, it| match ty {
                "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text" => {
                    let text = it.get("text").and_then(Value::as_str).unwrap_or("");
                    Some(Block::Text {
                        text: text.to_string(),
                    })
                }
                "input_image" => {
                    let url = it.get("image_url").and_then(Value::as_str).unwrap_or("");
                    Some(image_from_url(url))
                }
                _ => None,
            },
        ),
    }
}

/// A tool output: plain text, the 0.40 JSON envelope (kept verbatim, exit code
/// read for `is_error`), or a list of content items.
fn tool_output(line: u64, v: Option<Value>) -> Result<(ToolContent, bool), LineError> {
    match v {
        None | Some(Value::Null) => Ok((ToolContent::Text(String::new()), false)),
        Some(Value::String(s)) => {
            let mut is_error = false;
            if s.starts_with("{\"output\"")
                && let Ok(Value::Object(env)) = serde_json::from_str::<Value>(&s)
            {
                is_error = env
                    .get("metadata")
                    .and_then(|m| m.get("exit_code"))
                    .and_then(Value::as_i64)
                    .is_some_and(|c| c != 0);
            }
            Ok((ToolContent::Text(s), is_error))
        }
        Some(v @ Value::Array(_)) => {
            Ok((ToolContent::Blocks(message_content(line, Some(&v))?), false))
        }
        Some(Value::Object(mut o)) => {
            // Some builds nest {content, success}.
            let content = o.remove("content").unwrap_or(Value::Null);
            let failed = o.get("success").and_then(Value::as_bool) == Some(false);
            let (c, _) = tool_output(line, Some(content))?;
            Ok((c, failed))
        }
        Some(other) => Err(shape(
            line,
            format!(
                "tool output is {}; expected a string or a list of content items",
                type_name(&other)
            ),
        )),
    }
}

/// Codex injects environment and instruction blocks as user messages.
fn classify_user(content: &[Block]) -> Kind {
    let text = super::common::first_text(content)
        .unwrap_or("")
        .trim_start();
    const CONTEXT_PREFIXES: [&str; 6] = [
        "<environment_context>",
        "<user_instructions>",
        "<INSTRUCTIONS>",
        "# AGENTS.md instructions",
        "<user_shell_command>",
        "<turn_aborted>",
    ];
    if CONTEXT_PREFIXES.iter().any(|p| text.starts_with(p)) || content.is_empty() {
        Kind::Context
    } else {
        Kind::Ask
    }
}
