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
//! A `compacted` item is a marker when the history it replaced is in the file
//! before it; when it opens the rollout, what it carries is the history.

use serde_json::{Map, Value};

use super::common::{image_from_url, shape, type_name, typed_items};
use super::typed::codex::Line;
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

const EXPECTED: &str = expected_line(Format::Codex);

impl ObjectLines for CodexImporter {
    const FORMAT: Format = Format::Codex;

    fn object(&mut self, line: u64, obj: Map<String, Value>, tasks: &mut TaskSet) -> LineResult {
        self.read(line, obj, tasks)
    }

    /// The line in one pass (`super::typed::codex`) when it reads whole: the
    /// same logic then runs over the typed object, and gives the same result
    /// as over the `Value` map.
    fn one_pass(&mut self, line: u64, text: &str, tasks: &mut TaskSet) -> Option<LineResult> {
        let obj = serde_json::from_str::<Line>(text).ok()?;
        Some(self.read(line, obj.0, tasks))
    }
}

/// Declares [`Key`]: the fields of a rollout object read as values.
macro_rules! keys {
    ($($key:ident = $name:literal,)*) => {
        /// The fields of a rollout object the importer reads as they are
        /// (a message's `content`, a tool's `output` and a token count's
        /// `info` have readers of their own: [`Rollout`]).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub(super) enum Key {
            $($key,)*
        }

        impl Key {
            #[cfg(test)]
            pub(super) const ALL: &[Key] = &[$(Key::$key,)*];

            pub(super) fn name(self) -> &'static str {
                match self {
                    $(Key::$key => $name,)*
                }
            }

            pub(super) fn of(name: &str) -> Option<Key> {
                match name {
                    $($name => Some(Key::$key),)*
                    _ => None,
                }
            }
        }
    };
}

keys! {
    Type = "type",
    Timestamp = "timestamp",
    RecordType = "record_type",
    Id = "id",
    SessionId = "session_id",
    Cwd = "cwd",
    CliVersion = "cli_version",
    Model = "model",
    Instructions = "instructions",
    BaseInstructions = "base_instructions",
    Source = "source",
    ForkedFromId = "forked_from_id",
    Role = "role",
    Summary = "summary",
    EncryptedContent = "encrypted_content",
    CallId = "call_id",
    Name = "name",
    Arguments = "arguments",
    Input = "input",
    Action = "action",
    Message = "message",
    ReplacementHistory = "replacement_history",
    Git = "git",
}

/// A rollout object as the importer reads it: a line, its payload, or (the
/// legacy format) a bare item. The importer's logic is written once over
/// this trait. A `serde_json` map is the general reader, which words every
/// error; `typed::codex::Object` is read in one pass and holds only what the
/// general reader takes without an error, so the two give the same result.
pub(super) trait Rollout {
    /// A field as it is; `None` when absent (null is a value).
    fn value(&self, key: Key) -> Option<&Value>;
    /// A field taken out (moved, not copied).
    fn take(&mut self, key: Key) -> Option<Value>;
    /// A message's (or an output's) content items as blocks.
    fn content(&mut self, line: u64) -> Result<Vec<Block>, LineError>;
    /// The texts of a reasoning item's `summary` and `content`, joined.
    fn reasoning(&self) -> String;
    /// A tool output and whether it failed.
    fn output(&mut self, line: u64) -> Result<(ToolContent, bool), LineError>;
    /// A `token_count` event's `info`, when it is an object.
    fn token_info(&mut self, line: u64) -> Option<TokenInfo>;

    /// A string field (`None` when absent or not a string).
    fn str(&self, key: Key) -> Option<&str> {
        self.value(key).and_then(Value::as_str)
    }

    /// A string field, taken.
    fn string(&mut self, key: Key) -> Option<String> {
        self.str(key).map(str::to_string)
    }

    fn has(&self, key: Key) -> bool {
        self.value(key).is_some()
    }
}

/// A line, which may carry a payload.
pub(super) trait Envelope: Rollout {
    type Payload: Rollout;

    /// The `payload`, taken: `Err` naming what it is when not an object.
    fn payload(&mut self) -> Option<Result<Self::Payload, &'static str>>;
}

/// A `token_count` event's `info`, as the importer uses it.
pub(super) struct TokenInfo {
    /// `total_token_usage` as it is (null included), compared with the last.
    pub(super) total: Option<Value>,
    /// The usage of `last_token_usage` when it is an object, or why its
    /// counts are refused.
    pub(super) last: Option<Result<Usage, LineError>>,
    /// `model_context_window`: the window Codex ran the model with.
    pub(super) window: Option<u64>,
}

/// A recorded context window, when it is a token count (anything else is
/// not one, and ignored).
pub(super) fn context_window(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64)
        .filter(|w| (1..=super::tokens::MAX_TOKENS).contains(w))
}

/// A Codex usage: `input_tokens` counts the cached ones too.
pub(crate) fn codex_usage(input: u64, cached: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input.saturating_sub(cached),
        output_tokens: output,
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    }
}

impl Rollout for Map<String, Value> {
    fn value(&self, key: Key) -> Option<&Value> {
        self.get(key.name())
    }

    fn take(&mut self, key: Key) -> Option<Value> {
        self.remove(key.name())
    }

    fn content(&mut self, line: u64) -> Result<Vec<Block>, LineError> {
        message_content(line, self.get("content"))
    }

    fn reasoning(&self) -> String {
        join_texts(list_texts(self.get("summary")).chain(list_texts(self.get("content"))))
    }

    fn output(&mut self, line: u64) -> Result<(ToolContent, bool), LineError> {
        tool_output(line, self.remove("output"))
    }

    fn token_info(&mut self, line: u64) -> Option<TokenInfo> {
        let info = self.get("info")?.as_object()?;
        Some(TokenInfo {
            total: info.get("total_token_usage").cloned(),
            last: info
                .get("last_token_usage")
                .and_then(Value::as_object)
                .map(|last| {
                    let n = |k: &str| super::tokens::count(line, last, k);
                    let cached = n("cached_input_tokens")?;
                    Ok(codex_usage(n("input_tokens")?, cached, n("output_tokens")?))
                }),
            window: context_window(info.get("model_context_window")),
        })
    }
}

impl Envelope for Map<String, Value> {
    type Payload = Map<String, Value>;

    fn payload(&mut self) -> Option<Result<Map<String, Value>, &'static str>> {
        self.remove("payload").map(|p| match p {
            Value::Object(p) => Ok(p),
            other => Err(type_name(&other)),
        })
    }
}

/// The `text` of each item of a list (`None` and anything but a list: none).
pub(super) fn list_texts(v: Option<&Value>) -> impl Iterator<Item = &str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|it| it.get("text").and_then(Value::as_str))
}

/// Texts joined by a blank line (an empty one adds no separator first).
pub(super) fn join_texts<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::new();
    for t in texts {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(t);
    }
    text
}

impl CodexImporter {
    /// One line's object, read either way.
    fn read<L: Envelope>(&mut self, line: u64, mut obj: L, tasks: &mut TaskSet) -> LineResult {
        let timestamp = obj.string(Key::Timestamp);
        // Taken out, so that a tool's output is moved into its row, not copied.
        let payload = obj.payload();
        let no_type = || {
            shape(
                line,
                format!("the object has no \"type\"; expected {EXPECTED}"),
            )
        };
        match payload {
            Some(payload) => {
                let ty = obj.str(Key::Type).ok_or_else(no_type)?;
                let mut payload = payload.map_err(|found| {
                    shape(line, format!("\"payload\" is {found}; expected an object"))
                })?;
                self.envelope(line, ty, &mut payload, timestamp, tasks)
            }
            // The legacy format: a bare header, `record_type` markers, bare items.
            None => match obj.str(Key::Type) {
                None if obj.has(Key::RecordType) => Ok(LineOutcome::NotConversation),
                None if line == 1 && obj.has(Key::Id) => {
                    self.session_meta(line, &mut obj, tasks);
                    Ok(LineOutcome::Imported)
                }
                None => Err(no_type()),
                Some(ty) if is_response_item(ty) => {
                    push_item(self.response_item(line, &mut obj)?, timestamp, tasks)
                }
                Some(other) => Ok(LineOutcome::Unknown(other.to_string())),
            },
        }
    }
}

fn is_response_item(ty: &str) -> bool {
    matches!(
        ty,
        "message"
            | "reasoning"
            | "function_call"
            | "function_call_output"
            | "custom_tool_call"
            | "custom_tool_call_output"
            | "local_shell_call"
            | "web_search_call"
    )
}

/// A message item's `role`, read before its content (whose error comes first).
enum ItemRole {
    Assistant,
    User,
    Context,
    Other(String),
}

impl CodexImporter {
    fn envelope(
        &mut self,
        line: u64,
        ty: &str,
        payload: &mut impl Rollout,
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
                    task.meta.model = payload.string(Key::Model);
                }
                Ok(LineOutcome::NotConversation)
            }
            "response_item" => push_item(self.response_item(line, payload)?, timestamp, tasks),
            "event_msg" => match payload.str(Key::Type) {
                Some("token_count") => {
                    let info = payload.token_info(line);
                    if let Some(w) = info.as_ref().and_then(|i| i.window) {
                        tasks.main().meta.context_window = Some(w);
                    }
                    push_item(self.token_count(line, info)?, timestamp, tasks)
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
                self.close_generation();
                if !tasks.main().has_conversation() {
                    return self.carried(line, payload, timestamp, tasks);
                }
                let message = payload.string(Key::Message).unwrap_or_default();
                let text = if message.is_empty() {
                    let n = payload
                        .value(Key::ReplacementHistory)
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
                push_item(RolloutItem::Message(m), timestamp, tasks)
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

    /// A `compacted` item that opens the record: the history it replaced is
    /// not in the file, so what it carries is the history. Its
    /// `replacement_history` items are read in order as the rollout's own
    /// items are, the summary among them (the item's `message`, compactor's
    /// `## Task Context` or Codex's own summary) as the carried summary; an
    /// older item with only a `message` is that one user message.
    fn carried(
        &mut self,
        line: u64,
        payload: &mut impl Rollout,
        timestamp: Option<String>,
        tasks: &mut TaskSet,
    ) -> LineResult {
        let message = payload.string(Key::Message).unwrap_or_default();
        let history = match payload.take(Key::ReplacementHistory) {
            Some(Value::Array(items)) if !items.is_empty() => items,
            _ => {
                // An item that carries nothing stays the marker it always was.
                let (kind, text) = if message.trim().is_empty() {
                    let none =
                        "[Codex compacted the conversation: 0 items in its replacement history]";
                    (Kind::CompactSummary, none.to_string())
                } else {
                    (Kind::CarriedSummary, message)
                };
                let m = Message::new(Role::User, kind, vec![Block::Text { text }], line);
                return push_item(RolloutItem::Message(m), timestamp, tasks);
            }
        };
        for (i, item) in history.into_iter().enumerate() {
            let Value::Object(mut item) = item else {
                return Err(shape(
                    line,
                    format!(
                        "replacement_history item {} is {}; expected a response item object",
                        i + 1,
                        type_name(&item)
                    ),
                ));
            };
            let mut m = match self.response_item(line, &mut item) {
                Ok(RolloutItem::Message(m)) => m,
                // Encrypted compaction items and the like carry nothing readable.
                Ok(RolloutItem::Skip(_)) => continue,
                Err(e) => {
                    return Err(LineError {
                        message: format!("replacement_history item {}: {}", i + 1, e.message),
                        ..e
                    });
                }
            };
            if m.kind == Kind::Ask && is_carried_summary(&m.content, &message) {
                m.kind = Kind::CarriedSummary;
            }
            m.timestamp = timestamp.clone();
            tasks.main().push(m);
        }
        // What follows is another model call, and the carried generations
        // recorded no usage: none is attributed to them.
        self.close_generation();
        self.generation_has_usage = true;
        Ok(LineOutcome::Imported)
    }

    fn session_meta(&mut self, line: u64, p: &mut impl Rollout, tasks: &mut TaskSet) {
        if self.meta_seen {
            return; // a resumed rollout repeats its meta; the first one names the task
        }
        self.meta_seen = true;
        let task = tasks.main();
        // The base instructions are the request's system prompt: a meta row the
        // checkpoint carries as `system`, never part of the view.
        let instructions = p
            .value(Key::BaseInstructions)
            .and_then(|b| b.get("text"))
            .or_else(|| p.value(Key::Instructions))
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
        task.meta.session_id = p.string(Key::Id).or_else(|| p.string(Key::SessionId));
        task.meta.cwd = p.string(Key::Cwd);
        task.meta.cli_version = p.string(Key::CliVersion);
        task.meta.git_branch = p
            .value(Key::Git)
            .and_then(|g| g.get("branch"))
            .and_then(Value::as_str)
            .filter(|b| !b.is_empty())
            .map(str::to_string);
        task.parent_session = p.string(Key::ForkedFromId).or_else(|| {
            // Subagent threads name their parent inside `source`.
            p.value(Key::Source)
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

    fn token_count(&mut self, line: u64, info: Option<TokenInfo>) -> ItemResult {
        let Some(info) = info else {
            return Ok(RolloutItem::Skip(LineOutcome::NotConversation));
        };
        if info.total.is_some() && info.total == self.last_total {
            return Ok(RolloutItem::Skip(LineOutcome::Duplicate));
        }
        self.last_total = info.total;
        let Some(usage) = info.last else {
            return Ok(RolloutItem::Skip(LineOutcome::NotConversation));
        };
        let usage = usage?;
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
        Ok(RolloutItem::Message(m))
    }

    fn response_item(&mut self, line: u64, p: &mut impl Rollout) -> ItemResult {
        let ty = p.str(Key::Type).unwrap_or("");
        let msg = match ty {
            "message" => {
                let role = match p.str(Key::Role).unwrap_or("") {
                    "assistant" => ItemRole::Assistant,
                    "user" => ItemRole::User,
                    "developer" | "system" => ItemRole::Context,
                    other => ItemRole::Other(other.to_string()),
                };
                let content = p.content(line)?;
                match role {
                    ItemRole::Assistant => self.generation_message(content, line),
                    ItemRole::User => {
                        self.close_generation();
                        let kind = classify_user(&content);
                        Message::new(Role::User, kind, content, line)
                    }
                    ItemRole::Context => {
                        self.close_generation();
                        Message::new(Role::User, Kind::Context, content, line)
                    }
                    ItemRole::Other(other) => {
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
                let text = p.reasoning();
                let encrypted = p.string(Key::EncryptedContent);
                let block = if text.is_empty() {
                    match encrypted {
                        Some(data) => Block::RedactedThinking { data },
                        None => return Ok(RolloutItem::Skip(LineOutcome::NotConversation)),
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
                let name = p
                    .string(Key::Name)
                    .unwrap_or_else(|| "function".to_string());
                let input = match p.take(Key::Arguments) {
                    Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                        Ok(v @ Value::Object(_)) => v,
                        _ => single("arguments", Value::String(s)),
                    },
                    Some(v @ Value::Object(_)) => v,
                    Some(other) => single("arguments", other),
                    None => Value::Object(Map::new()),
                };
                self.generation_message(vec![Block::ToolUse { id, name, input }], line)
            }
            "custom_tool_call" => {
                let id = call_id(line, p)?;
                let name = p
                    .string(Key::Name)
                    .unwrap_or_else(|| "custom_tool".to_string());
                let input = single("input", p.take(Key::Input).unwrap_or(Value::Null));
                self.generation_message(vec![Block::ToolUse { id, name, input }], line)
            }
            "local_shell_call" => {
                let id = p
                    .string(Key::CallId)
                    .or_else(|| p.string(Key::Id))
                    .ok_or_else(|| {
                        shape(
                            line,
                            "local_shell_call without \"call_id\"; expected a call id",
                        )
                    })?;
                let input = p.take(Key::Action).unwrap_or(Value::Null);
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
                let action = p.value(Key::Action);
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
                let (content, is_error) = p.output(line)?;
                Message::tool_result(id, content, is_error, line)
            }
            "ghost_snapshot"
            | "compaction"
            | "additional_tools"
            | "image_generation_call"
            | "agent_message" => return Ok(RolloutItem::Skip(LineOutcome::NotConversation)),
            other => {
                return Ok(RolloutItem::Skip(LineOutcome::Unknown(format!(
                    "response_item/{other}"
                ))));
            }
        };
        Ok(RolloutItem::Message(msg))
    }

    fn generation_message(&mut self, content: Vec<Block>, line: u64) -> Message {
        let mut m = Message::new(Role::Assistant, Kind::Generation, content, line);
        m.gen_id = Some(self.generation_id());
        m
    }
}

/// What one rollout item makes: a message, or an outcome and no message.
enum RolloutItem {
    Message(Message),
    Skip(LineOutcome),
}

type ItemResult = Result<RolloutItem, LineError>;

/// Push an item's message, stamped with its line's time; an outcome passes through.
fn push_item(item: RolloutItem, timestamp: Option<String>, tasks: &mut TaskSet) -> LineResult {
    match item {
        RolloutItem::Message(mut m) => {
            m.timestamp = timestamp;
            tasks.main().push(m);
            Ok(LineOutcome::Imported)
        }
        RolloutItem::Skip(outcome) => Ok(outcome),
    }
}

fn single(key: &str, v: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.to_string(), v);
    Value::Object(m)
}

fn call_id(line: u64, p: &mut impl Rollout) -> Result<String, LineError> {
    p.string(Key::CallId).ok_or_else(|| {
        shape(
            line,
            format!(
                "{} without \"call_id\"; expected a string call id",
                p.str(Key::Type).unwrap_or("item")
            ),
        )
    })
}

/// What a content item's `type` makes of it (any other type: the item is
/// kept verbatim).
#[derive(Clone, Copy)]
pub(super) enum ItemKind {
    Text,
    Image,
}

impl ItemKind {
    pub(super) fn of(ty: &str) -> Option<ItemKind> {
        match ty {
            "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text" => {
                Some(ItemKind::Text)
            }
            "input_image" => Some(ItemKind::Image),
            _ => None,
        }
    }

    /// The block of an item of this kind, from its `text` or `image_url`
    /// (each `None` when absent or not a string).
    pub(super) fn block(self, text: Option<String>, image_url: Option<&str>) -> Block {
        match self {
            ItemKind::Text => Block::Text {
                text: text.unwrap_or_default(),
            },
            ItemKind::Image => image_from_url(image_url.unwrap_or("")),
        }
    }
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
            |ty, it| {
                let str = |k: &str| it.get(k).and_then(Value::as_str);
                ItemKind::of(ty)
                    .map(|kind| kind.block(str("text").map(str::to_string), str("image_url")))
            },
        ),
    }
}

/// A tool output: plain text, the 0.40 JSON envelope (kept verbatim, exit code
/// read for `is_error`), or a list of content items.
fn tool_output(line: u64, v: Option<Value>) -> Result<(ToolContent, bool), LineError> {
    match v {
        None | Some(Value::Null) => Ok((ToolContent::Text(String::new()), false)),
        Some(Value::String(s)) => Ok(text_output(s)),
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

/// A tool output that is text: verbatim, failed when it is the 0.40 JSON
/// envelope with a nonzero exit code.
pub(super) fn text_output(s: String) -> (ToolContent, bool) {
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
    (ToolContent::Text(s), is_error)
}

/// The text Codex puts at the head of its own compaction summary.
const CODEX_SUMMARY_PREFIX: &str =
    "Another language model started to solve this problem and produced a summary";

/// Whether a carried user message is the summary of what came before it:
/// the `compacted` item's own `message`, compactor's `## Task Context` or
/// Codex's summary.
fn is_carried_summary(content: &[Block], message: &str) -> bool {
    let text = super::common::first_text(content).unwrap_or("");
    let t = text.trim_start();
    (!message.trim().is_empty() && text.trim() == message.trim())
        || t.starts_with(crate::engine::carried::TASK_CONTEXT_HEADING)
        || t.starts_with(CODEX_SUMMARY_PREFIX)
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

#[cfg(test)]
mod tests;
