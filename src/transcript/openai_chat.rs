//! OpenAI Chat Completions message lists: one message per line, or one JSON
//! document that is a list of messages, `{"messages":[...]}`, or a SWE-agent
//! style `{"history":[...]}`.

use serde_json::{Map, Value};

use super::common::{
    Generations, each_message, image_from_url, opt_str, shape, type_name, typed_items,
};
use super::{LineError, LineOutcome, LineResult, ObjectLines, TaskSet};
use crate::model::{Block, Format, Kind, Message, Role, ToolContent, Usage};

#[derive(Default)]
pub(crate) struct OpenAiChatImporter {
    generations: Generations,
}

impl ObjectLines for OpenAiChatImporter {
    const FORMAT: Format = Format::OpenaiChat;

    fn object(&mut self, line: u64, obj: Map<String, Value>, tasks: &mut TaskSet) -> LineResult {
        self.message(line, &obj, tasks)
    }

    fn document(&mut self, value: Value, tasks: &mut TaskSet) -> Result<(), LineError> {
        let list = match &value {
            Value::Array(items) => items,
            Value::Object(o) => o
                .get("messages")
                .or_else(|| o.get("history"))
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    shape(
                        1,
                        "the document has no \"messages\" (or \"history\") list; expected a list of chat messages",
                    )
                })?,
            other => {
                return Err(shape(
                    1,
                    format!(
                        "the document is {}; expected a list of chat messages",
                        type_name(other)
                    ),
                ));
            }
        };
        each_message(list, |n, obj| self.message(n, obj, tasks).map(drop))
    }
}

impl OpenAiChatImporter {
    fn message(&mut self, line: u64, obj: &Map<String, Value>, tasks: &mut TaskSet) -> LineResult {
        let role = obj.get("role").and_then(Value::as_str).ok_or_else(|| {
            shape(
                line,
                "message without a \"role\"; expected system, user, assistant or tool",
            )
        })?;
        let content = parts(line, obj.get("content"))?;
        let msg = match role {
            "system" | "developer" => Message::new(Role::Meta, Kind::System, content, line),
            "user" => {
                let kind = if content.is_empty() {
                    Kind::Context
                } else {
                    Kind::Ask
                };
                Message::new(Role::User, kind, content, line)
            }
            "assistant" => {
                let mut blocks = Vec::new();
                if let Some(r) = obj
                    .get("reasoning_content")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                {
                    blocks.push(Block::Thinking {
                        thinking: r.to_string(),
                        signature: None,
                    });
                }
                blocks.extend(content);
                if let Some(calls) = obj.get("tool_calls").and_then(Value::as_array) {
                    for call in calls {
                        blocks.push(tool_call(line, call)?);
                    }
                }
                if let Some(fc) = obj.get("function_call").and_then(Value::as_object) {
                    // The pre-tools API: one call, answered by a "function" message.
                    let name = opt_str(fc, "name").unwrap_or_else(|| "function".to_string());
                    blocks.push(Block::ToolUse {
                        id: format!("fn-{line}"),
                        name,
                        input: arguments(fc.get("arguments")),
                    });
                }
                let mut m = self.generations.message(blocks, line, None);
                m.usage = match obj.get("usage") {
                    Some(u) => openai_usage(line, u)?,
                    None => None,
                };
                m
            }
            "tool" | "function" => {
                let id = match role {
                    "tool" => opt_str(obj, "tool_call_id").ok_or_else(|| {
                        shape(
                            line,
                            "tool message without \"tool_call_id\"; expected the id of the call it answers",
                        )
                    })?,
                    _ => last_function_call_id(tasks).unwrap_or_else(|| format!("fn-{line}")),
                };
                let text_only = content.iter().all(|b| matches!(b, Block::Text { .. }));
                let content = if text_only {
                    ToolContent::Text(ToolContent::Blocks(content).text())
                } else {
                    ToolContent::Blocks(content)
                };
                Message::tool_result(id, content, false, line)
            }
            other => {
                return Err(shape(
                    line,
                    format!("message role \"{other}\"; expected system, user, assistant or tool"),
                ));
            }
        };
        tasks.main().push(msg);
        Ok(LineOutcome::Imported)
    }
}

/// The id of the most recent legacy `function_call` in the main task.
fn last_function_call_id(tasks: &mut TaskSet) -> Option<String> {
    tasks.main().messages.iter().rev().find_map(|m| {
        m.content.iter().rev().find_map(|b| match b {
            Block::ToolUse { id, .. } if id.starts_with("fn-") => Some(id.clone()),
            _ => None,
        })
    })
}

fn tool_call(line: u64, call: &Value) -> Result<Block, LineError> {
    let obj = call.as_object().ok_or_else(|| {
        shape(
            line,
            "a tool_calls entry is not an object; expected {\"id\",\"function\":{\"name\",\"arguments\"}}",
        )
    })?;
    let id = opt_str(obj, "id")
        .ok_or_else(|| shape(line, "a tool call without \"id\"; expected a string id"))?;
    let func = obj
        .get("function")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            shape(
                line,
                "a tool call without \"function\"; expected {\"name\",\"arguments\"}",
            )
        })?;
    let name = opt_str(func, "name")
        .ok_or_else(|| shape(line, "a tool call function without \"name\""))?;
    Ok(Block::ToolUse {
        id,
        name,
        input: arguments(func.get("arguments")),
    })
}

/// Arguments are a JSON string; an object is kept as the input, anything else wrapped.
fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                let mut m = Map::new();
                m.insert("arguments".to_string(), Value::String(s.clone()));
                Value::Object(m)
            }
        },
        Some(v @ Value::Object(_)) => v.clone(),
        _ => Value::Object(Map::new()),
    }
}

/// Content: a string, null, or a list of parts (`text`, `image_url`, `input_text`...).
fn parts(line: u64, v: Option<&Value>) -> Result<Vec<Block>, LineError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) if s.is_empty() => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![Block::Text { text: s.clone() }]),
        other => typed_items(
            line,
            other,
            "content",
            "a string, null or a list of parts",
            |ty, it| match ty {
                "text" | "input_text" | "output_text" => Some(Block::Text {
                    text: it
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                }),
                "image_url" => {
                    let url = it
                        .get("image_url")
                        .and_then(|u| u.get("url").or(Some(u)))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    Some(image_from_url(url))
                }
                _ => None,
            },
        ),
    }
}

fn openai_usage(line: u64, v: &Value) -> Result<Option<Usage>, LineError> {
    let Some(o) = v.as_object() else {
        return Ok(None);
    };
    let n = |k: &str| super::tokens::count(line, o, k);
    let cached = match o.get("prompt_tokens_details").and_then(Value::as_object) {
        Some(d) => super::tokens::count(line, d, "cached_tokens")?,
        None => 0,
    };
    Ok(Some(Usage {
        input_tokens: n("prompt_tokens")?.saturating_sub(cached),
        output_tokens: n("completion_tokens")?,
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    }))
}
