//! Anthropic Messages JSON: one message (or one response object) per line, or
//! one request body `{"model","system","messages":[...]}` as a whole document.

use serde_json::{Map, Value};

use super::common::{
    Generations, anthropic_content, anthropic_usage, each_message, opt_str, shape, type_name,
};
use super::{LineError, LineOutcome, LineResult, ObjectLines, TaskSet};
use crate::model::{Block, Format, Kind, Message, Role};

#[derive(Default)]
pub(crate) struct AnthropicImporter {
    generations: Generations,
}

impl ObjectLines for AnthropicImporter {
    const FORMAT: Format = Format::Anthropic;

    fn object(
        &mut self,
        line: u64,
        mut obj: Map<String, Value>,
        tasks: &mut TaskSet,
    ) -> LineResult {
        if obj.contains_key("messages") {
            // A request body on one line.
            self.body(line, &obj, tasks)?;
            return Ok(LineOutcome::Imported);
        }
        // Taken, not copied: the line's object is this message alone.
        let content = obj.remove("content").unwrap_or(Value::Null);
        self.message(line, &obj, content, tasks)
    }

    fn document(&mut self, value: Value, tasks: &mut TaskSet) -> Result<(), LineError> {
        match &value {
            Value::Object(o) if o.contains_key("messages") => self.body(1, o, tasks),
            Value::Array(items) => each_message(items, |n, obj| {
                self.message(n, obj, content_of(obj), tasks).map(drop)
            }),
            other => Err(shape(
                1,
                format!(
                    "the document is {}; expected a request body with \"messages\" or a list of messages",
                    type_name(other)
                ),
            )),
        }
    }
}

/// A message's `content`, copied out of an object that stays whole.
fn content_of(obj: &Map<String, Value>) -> Value {
    obj.get("content").cloned().unwrap_or(Value::Null)
}

impl AnthropicImporter {
    fn body(
        &mut self,
        line: u64,
        body: &Map<String, Value>,
        tasks: &mut TaskSet,
    ) -> Result<(), LineError> {
        if let Some(model) = opt_str(body, "model") {
            tasks.main().meta.model.get_or_insert(model);
        }
        match body.get("system") {
            None | Some(Value::Null) => {}
            Some(sys) => {
                let content = anthropic_content(line, sys.clone())?;
                if !content.is_empty() {
                    tasks
                        .main()
                        .push(Message::new(Role::Meta, Kind::System, content, line));
                }
            }
        }
        let messages = body
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                shape(
                    line,
                    "\"messages\" is not a list; expected a list of messages",
                )
            })?;
        for (i, m) in messages.iter().enumerate() {
            let obj = m.as_object().ok_or_else(|| {
                shape(
                    line,
                    format!("messages[{i}] is {}; expected an object", type_name(m)),
                )
            })?;
            // Messages inside one body share its line; keep the body's location.
            self.message(line, obj, content_of(obj), tasks)?;
        }
        Ok(())
    }

    /// A message whose `content` (taken out of `obj`, or copied from it) is `content`.
    fn message(
        &mut self,
        line: u64,
        obj: &Map<String, Value>,
        content: Value,
        tasks: &mut TaskSet,
    ) -> LineResult {
        let role = obj.get("role").and_then(Value::as_str).ok_or_else(|| {
            shape(
                line,
                "message without a \"role\"; expected \"user\" or \"assistant\"",
            )
        })?;
        let content = anthropic_content(line, content)?;
        let msg = match role {
            "user" => {
                let kind = if content
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult { .. }))
                {
                    Kind::ToolResult
                } else if content.is_empty() {
                    Kind::Context
                } else {
                    Kind::Ask
                };
                Message::new(Role::User, kind, content, line)
            }
            "assistant" => {
                // A response object carries its id; a bare message gets an ordinal.
                let mut m = self.generations.message(content, line, opt_str(obj, "id"));
                m.usage = match obj.get("usage") {
                    Some(u) => anthropic_usage(line, u)?,
                    None => None,
                };
                if let Some(model) = opt_str(obj, "model") {
                    tasks.main().meta.model.get_or_insert(model);
                }
                m
            }
            other => {
                return Err(shape(
                    line,
                    format!("message role \"{other}\"; expected \"user\" or \"assistant\""),
                ));
            }
        };
        tasks.main().push(msg);
        Ok(LineOutcome::Imported)
    }
}
