//! Transcript formats: detection and one importer per format behind [`Importer`].
//!
//! An importer sees a file line by line (or, for whole-document JSON formats,
//! as one value) and pushes normalised [`Message`]s into a [`TaskSet`]. The
//! [`TaskBuilder`] assigns turn and step indices and pairs tool calls with
//! their results the same way for every format, so the engine never needs to
//! know where a message came from.

pub(crate) mod anthropic;
pub(crate) mod claude_code;
pub(crate) mod codex;
pub(crate) mod codex_names;
mod common;
pub(crate) mod detect;
pub(crate) mod discover;
pub(crate) mod gemini;
pub(crate) mod gemini_cli;
mod idtable;
pub(crate) mod ingest;
pub(crate) mod openai_chat;
pub(crate) mod opencode;
pub(crate) mod reader;
mod tokens;
mod typed;

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::model::{Block, Format, Kind, Message, Role};
use idtable::{IdTable, Packed};

pub use ingest::{BATCH_BYTES, FileReport, IngestError, IngestOptions, ingest_file};
pub use reader::{ParseOptions, ParsedFile, SkippedLine, parse_bytes};
pub(crate) use reader::{parse_reader, parse_stream};

/// The normalisation of one Anthropic content block and usage object, for
/// the live proxy (which reads them from requests and responses).
pub(crate) use common::{anthropic_block, anthropic_usage};

pub(crate) use crate::model::digest::{Digest, DigestMap};

/// A problem with one line of input, located by 1-based line and byte column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct LineError {
    pub line: u64,
    pub column: u64,
    pub message: String,
    /// What the user can do about it, printed on its own line.
    pub hint: Option<&'static str>,
    /// Raised before any format was recognised (none was given, and the first
    /// lines did not tell one): nothing says the file is a transcript at all.
    pub format_unknown: bool,
}

impl crate::model::Hint for LineError {
    fn hint(&self) -> Option<&str> {
        self.hint
    }
}

impl LineError {
    pub fn new(line: u64, column: u64, message: impl Into<String>) -> LineError {
        LineError {
            line,
            column,
            message: message.into(),
            hint: None,
            format_unknown: false,
        }
    }

    /// This error with `hint`, unless it has one already.
    pub fn or_hint(self, hint: &'static str) -> LineError {
        LineError {
            hint: self.hint.or(Some(hint)),
            ..self
        }
    }

    /// This error, raised before any format was recognised.
    pub fn before_any_format(self) -> LineError {
        LineError {
            format_unknown: true,
            ..self
        }
    }

    /// Turn a serde_json error on one line into a located, explained error.
    pub fn from_json(line: u64, err: &serde_json::Error, expected: &str) -> LineError {
        use serde_json::error::Category;
        let what = match err.classify() {
            Category::Eof => "truncated JSON (the line ends before the value does)".to_string(),
            Category::Syntax => format!("invalid JSON: {}", strip_location(err)),
            Category::Data => format!("unexpected shape: {}", strip_location(err)),
            Category::Io => format!("read error: {err}"),
        };
        LineError::new(
            line,
            err.column().max(1) as u64,
            format!("{what}; expected {expected}"),
        )
    }
}

/// serde_json appends " at line L column C"; we print our own location instead.
fn strip_location(err: &serde_json::Error) -> String {
    let s = err.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// What an importer makes of one line.
pub type LineResult = Result<LineOutcome, LineError>;

/// What an importer did with a line it did not turn into a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineOutcome {
    /// One or more messages were pushed.
    Imported,
    /// A known line type that is not conversation (progress, snapshots, telemetry...).
    NotConversation,
    /// A copy of something already imported (a duplicated line or an event stream copy).
    Duplicate,
    /// A line type this version does not know: skipped and counted.
    Unknown(String),
}

/// One importer per format. Importers keep whatever cross-line state their
/// format needs (open generations, uuid maps); the builder keeps the rest.
pub trait Importer {
    fn format(&self) -> Format;

    /// Handle one non-blank line of a JSONL file.
    fn line(&mut self, line: u64, text: &str, tasks: &mut TaskSet) -> LineResult;

    /// Handle a whole-file JSON document (formats that allow one). `value` was
    /// parsed from the whole file; errors should point at line 1 if no better
    /// location is known.
    fn document(&mut self, value: Value, tasks: &mut TaskSet) -> Result<(), LineError> {
        let _ = (value, tasks);
        Err(not_a_document(self.format()))
    }
}

/// A format whose every line is one JSON object: reading the line, and saying
/// what is wrong with one that is not an object, is the same for each.
pub(crate) trait ObjectLines {
    const FORMAT: Format;

    /// Handle one line's object.
    fn object(&mut self, line: u64, obj: Map<String, Value>, tasks: &mut TaskSet) -> LineResult;

    /// A one-pass reading of the line, tried first: `None` leaves the line
    /// to [`ObjectLines::object`], which must give the same result for any
    /// line this takes (see `typed`).
    fn one_pass(&mut self, line: u64, text: &str, tasks: &mut TaskSet) -> Option<LineResult> {
        let _ = (line, text, tasks);
        None
    }

    /// As [`Importer::document`].
    fn document(&mut self, value: Value, tasks: &mut TaskSet) -> Result<(), LineError> {
        let _ = (value, tasks);
        Err(not_a_document(Self::FORMAT))
    }
}

impl<T: ObjectLines> Importer for T {
    fn format(&self) -> Format {
        T::FORMAT
    }

    fn line(&mut self, line: u64, text: &str, tasks: &mut TaskSet) -> LineResult {
        if let Some(result) = self.one_pass(line, text, tasks) {
            return result;
        }
        general_line(self, line, text, tasks)
    }

    fn document(&mut self, value: Value, tasks: &mut TaskSet) -> Result<(), LineError> {
        ObjectLines::document(self, value, tasks)
    }
}

/// A line read as a `Value` map and handed to [`ObjectLines::object`].
fn general_line<T: ObjectLines>(
    importer: &mut T,
    line: u64,
    text: &str,
    tasks: &mut TaskSet,
) -> LineResult {
    let obj = common::parse_object(line, text, expected_line(T::FORMAT))?;
    importer.object(line, obj, tasks)
}

/// Test support: a line through the one pass when it takes it (`typed`) or
/// through the general reader alone.
#[cfg(test)]
pub(crate) fn read_line<T: ObjectLines>(
    importer: &mut T,
    line: u64,
    text: &str,
    tasks: &mut TaskSet,
    typed: bool,
) -> LineResult {
    if typed {
        Importer::line(importer, line, text, tasks)
    } else {
        general_line(importer, line, text, tasks)
    }
}

/// What one line of a format should be, for error messages.
pub(crate) const fn expected_line(format: Format) -> &'static str {
    match format {
        Format::ClaudeCode => "one Claude Code JSON object per line",
        Format::Codex => "one Codex rollout JSON object per line ({\"type\",\"payload\"})",
        Format::OpenaiChat => "one OpenAI chat message object per line ({\"role\",\"content\"})",
        Format::Anthropic => {
            "one Anthropic message object per line ({\"role\":\"user\"|\"assistant\",\"content\"})"
        }
        Format::Opencode => "OpenCode's SQLite database (opencode.db), not lines",
        Format::GeminiCli => {
            "one Gemini CLI session JSON object per line (metadata, messages, {\"$set\"} updates)"
        }
    }
}

/// A format that has no whole-document form was given one.
fn not_a_document(format: Format) -> LineError {
    LineError::new(
        1,
        1,
        format!(
            "a single JSON document is not a {} transcript; expected one JSON object per line",
            format.as_str()
        ),
    )
}

/// Make the importer for a format.
pub fn importer_for(format: Format) -> Box<dyn Importer> {
    match format {
        Format::ClaudeCode => Box::new(claude_code::ClaudeCodeImporter::default()),
        Format::Codex => Box::new(codex::CodexImporter::default()),
        Format::OpenaiChat => Box::new(openai_chat::OpenAiChatImporter::default()),
        Format::Anthropic => Box::new(anthropic::AnthropicImporter::default()),
        Format::Opencode => Box::new(NotLines(format)),
        Format::GeminiCli => Box::new(gemini_cli::GeminiCliImporter::default()),
    }
}

/// The importer of a format that is no lines (OpenCode's database): given
/// lines anyway (standard input, `--format` on another file), it says where
/// the format is read from.
struct NotLines(Format);

impl Importer for NotLines {
    fn format(&self) -> Format {
        self.0
    }

    fn line(&mut self, line: u64, _text: &str, _tasks: &mut TaskSet) -> LineResult {
        Err(LineError {
            hint: Some(
                "import OpenCode's database by its path: compactor import ~/.local/share/opencode/opencode.db",
            ),
            ..LineError::new(line, 1, format!("expected {}", expected_line(self.0)))
        })
    }

    fn document(&mut self, _value: Value, tasks: &mut TaskSet) -> Result<(), LineError> {
        self.line(1, "", tasks).map(drop)
    }
}

pub use crate::store::TaskMeta;

/// A problem worth telling the user that does not stop the import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub line: u64,
    pub message: String,
}

/// A tool call with no recorded result (interrupted, or the file ends before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenToolCall {
    pub id: String,
    pub name: String,
    pub line: u64,
}

#[derive(Clone, Copy)]
struct ToolCallInfo {
    step: u32,
    line: u64,
    answered: bool,
}

impl Packed for ToolCallInfo {
    const SIZE: usize = 13;
    fn pack(&self, out: &mut [u8]) {
        self.step.pack(&mut out[..4]);
        self.line.pack(&mut out[4..12]);
        out[12] = u8::from(self.answered);
    }
    fn unpack(bytes: &[u8]) -> ToolCallInfo {
        ToolCallInfo {
            step: u32::unpack(&bytes[..4]),
            line: u64::unpack(&bytes[4..12]),
            answered: bytes[12] != 0,
        }
    }
}

/// Accumulates one task's messages and assigns turn and step indices.
pub struct TaskBuilder {
    /// "" for the file's main task, else a suffix such as `agent-a2898e3`.
    pub key: String,
    pub meta: TaskMeta,
    /// Session id of the parent session when the file says so (subagents, forks).
    pub parent_session: Option<String>,
    /// The messages pushed and not taken out yet (see
    /// [`reader::parse_stream`]): all of them unless a caller streams them.
    pub messages: Vec<Message>,
    /// Whether a message other than a meta row was ever pushed.
    conversation: bool,
    pub warnings: Vec<Warning>,
    turn: u32,
    step: u32,
    /// Each generation's step, by [`Digest`] of its id.
    gen_steps: IdTable<u32>,
    /// Each tool call, by [`Digest`] of its id.
    tool_calls: IdTable<ToolCallInfo>,
    /// The first failure of the tables above, at a line: the file's import
    /// fails with it.
    failure: Option<LineError>,
    /// The calls not answered yet, by their place among the task's calls,
    /// for a deterministic interrupted list.
    open_calls: BTreeMap<u64, OpenToolCall>,
    /// The place of each call in `open_calls`, by id.
    open_order: HashMap<String, u64>,
    /// Tool calls seen.
    calls_seen: u64,
}

impl TaskBuilder {
    fn new(key: &str) -> TaskBuilder {
        TaskBuilder {
            key: key.to_string(),
            meta: TaskMeta::default(),
            parent_session: None,
            messages: Vec::new(),
            conversation: false,
            warnings: Vec::new(),
            turn: 0,
            step: 0,
            gen_steps: IdTable::default(),
            tool_calls: IdTable::default(),
            failure: None,
            open_calls: BTreeMap::new(),
            open_order: HashMap::new(),
            calls_seen: 0,
        }
    }

    /// A builder whose id tables spill every `budget` ids.
    #[cfg(test)]
    fn with_budget(key: &str, budget: usize) -> TaskBuilder {
        TaskBuilder {
            gen_steps: IdTable::with_budget(budget),
            tool_calls: IdTable::with_budget(budget),
            ..TaskBuilder::new(key)
        }
    }

    pub fn steps(&self) -> u32 {
        self.step
    }

    /// The turn of the last message pushed (0 before any).
    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// Append a message, assigning its turn and step.
    pub fn push(&mut self, mut msg: Message) {
        match msg.kind {
            // A carried summary opens the history as an ask does.
            Kind::Ask | Kind::CarriedSummary => self.turn += 1,
            Kind::Generation => {
                msg.step = self.generation_step(&msg);
                self.open_calls_of(&msg);
            }
            _ => {}
        }
        if msg.kind != Kind::Generation {
            msg.step = self.step;
        }
        if msg.kind == Kind::ToolResult
            && let Some(s) = self.answer_tool_calls(&msg)
        {
            msg.step = s;
        }
        msg.turn = self.turn;
        self.conversation |= msg.role != Role::Meta;
        self.messages.push(msg);
    }

    /// The step of a generation row: its generation id's, else the next one.
    fn generation_step(&mut self, msg: &Message) -> u32 {
        match &msg.gen_id {
            Some(id) => {
                let found = self.gen_steps.get_or_insert_with(Digest::of(id), || {
                    self.step += 1;
                    self.step
                });
                self.held(msg.line, found).map_or(self.step, |(s, _)| s)
            }
            None => {
                self.step += 1;
                self.step
            }
        }
    }

    /// Open the tool calls a generation row (its step set) makes; a call id
    /// seen before is kept in the record but answers nothing.
    fn open_calls_of(&mut self, msg: &Message) {
        for b in &msg.content {
            if let Block::ToolUse { id, name, .. } = b {
                let info = ToolCallInfo {
                    step: msg.step,
                    line: msg.line,
                    answered: false,
                };
                let found = self.tool_calls.get_or_insert_with(Digest::of(id), || info);
                if let Some((_, false)) = self.held(msg.line, found) {
                    self.warnings.push(Warning {
                        line: msg.line,
                        message: format!(
                            "tool_use {id} appears twice; the second one is kept in the record but answers nothing"
                        ),
                    });
                    continue;
                }
                let order = self.calls_seen;
                self.calls_seen += 1;
                let open = OpenToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    line: msg.line,
                };
                self.open_calls.insert(order, open);
                self.open_order.insert(id.clone(), order);
            }
        }
    }

    /// Answer the open calls a tool result row answers: the step of the
    /// latest of them (the row's step), if it answers any; a result for an
    /// unknown or an answered call is a warning.
    fn answer_tool_calls(&mut self, msg: &Message) -> Option<u32> {
        let mut step = None;
        for b in &msg.content {
            if let Block::ToolResult { tool_use_id, .. } = b {
                let key = Digest::of(tool_use_id);
                let found = self.tool_calls.get(&key);
                match self.held(msg.line, found).flatten() {
                    Some(info) if !info.answered => {
                        let answered = ToolCallInfo {
                            answered: true,
                            ..info
                        };
                        let done = self.tool_calls.insert(key, answered);
                        self.held(msg.line, done);
                        if let Some(order) = self.open_order.remove(tool_use_id) {
                            self.open_calls.remove(&order);
                        }
                        step = Some(step.map_or(info.step, |s: u32| s.max(info.step)));
                    }
                    Some(info) => self.warnings.push(Warning {
                        line: msg.line,
                        message: format!(
                            "tool_result for {tool_use_id} answers a call already answered at or after line {}; kept, shown as text in views",
                            info.line
                        ),
                    }),
                    None => self.warnings.push(Warning {
                        line: msg.line,
                        message: format!(
                            "tool_result for {tool_use_id} has no matching tool_use in this task; kept, shown as text in views"
                        ),
                    }),
                }
            }
        }
        step
    }

    /// What a table answered, its first failure kept (the answers after it
    /// do not matter: the import fails).
    fn held<T>(&mut self, line: u64, answer: std::io::Result<T>) -> Option<T> {
        match answer {
            Ok(v) => Some(v),
            Err(e) => {
                self.failure
                    .get_or_insert_with(|| idtable::failure(line, &e));
                None
            }
        }
    }

    /// Tool calls that never got a result, in the order they were made.
    pub fn open_tool_calls(&self) -> Vec<OpenToolCall> {
        self.open_calls.values().cloned().collect()
    }

    pub fn has_conversation(&self) -> bool {
        self.conversation
    }
}

/// The tasks one file produces, in first-seen order.
#[derive(Default)]
pub struct TaskSet {
    tasks: Vec<TaskBuilder>,
    index: HashMap<String, usize>,
}

impl TaskSet {
    /// The task with this key, created on first use. "" is the main task.
    pub fn task(&mut self, key: &str) -> &mut TaskBuilder {
        let i = match self.index.get(key) {
            Some(i) => *i,
            None => {
                self.tasks.push(TaskBuilder::new(key));
                self.index.insert(key.to_string(), self.tasks.len() - 1);
                self.tasks.len() - 1
            }
        };
        &mut self.tasks[i]
    }

    pub fn main(&mut self) -> &mut TaskBuilder {
        self.task("")
    }

    pub(crate) fn get(&self, key: &str) -> Option<&TaskBuilder> {
        self.index.get(key).map(|i| &self.tasks[*i])
    }

    /// The first task seen, the first one stored.
    pub(crate) fn first_mut(&mut self) -> Option<&mut TaskBuilder> {
        self.tasks.first_mut()
    }

    #[cfg(test)]
    pub fn into_tasks(self) -> Vec<TaskBuilder> {
        self.tasks
    }

    /// The tasks, or the first failure of their id tables.
    pub(crate) fn finish(self) -> Result<Vec<TaskBuilder>, LineError> {
        match self
            .tasks
            .iter()
            .filter_map(|t| t.failure.clone())
            .min_by_key(|e| e.line)
        {
            Some(e) => Err(e),
            None => Ok(self.tasks),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolContent;

    fn calls(ids: &[&str], gen_id: &str, line: u64) -> Message {
        let content = ids
            .iter()
            .map(|id| Block::ToolUse {
                id: id.to_string(),
                name: format!("tool-{id}"),
                input: Value::Null,
            })
            .collect();
        let mut m = Message::new(Role::Assistant, Kind::Generation, content, line);
        m.gen_id = Some(gen_id.to_string());
        m
    }

    fn result(id: &str, line: u64) -> Message {
        Message::tool_result(id.to_string(), ToolContent::Text("ok".into()), false, line)
    }

    #[test]
    fn calls_and_generations_are_told_apart_by_their_ids_digests() {
        let mut t = TaskBuilder::new("");
        t.push(calls(&["a", "b"], "g1", 1));
        t.push(calls(&["c"], "g1", 2));
        t.push(result("b", 3));
        t.push(calls(&["d", "a"], "g2", 4));
        t.push(result("b", 5));
        t.push(result("zz", 6));
        t.push(result("d", 7));
        t.push(calls(&["e"], "g1", 8));
        // One step per generation id, whatever lines it spreads over.
        let steps: Vec<u32> = t.messages.iter().map(|m| m.step).collect();
        assert_eq!(steps, [1, 1, 1, 2, 2, 2, 2, 1]);
        assert_eq!(t.steps(), 2);
        // Unanswered calls in the order they were made, answered ones gone.
        let open: Vec<(String, String, u64)> = t
            .open_tool_calls()
            .into_iter()
            .map(|c| (c.id, c.name, c.line))
            .collect();
        assert_eq!(
            open,
            [
                ("a".into(), "tool-a".into(), 1),
                ("c".into(), "tool-c".into(), 2),
                ("e".into(), "tool-e".into(), 8),
            ]
        );
        let warnings: Vec<(u64, &str)> = t
            .warnings
            .iter()
            .map(|w| (w.line, &w.message[..w.message.find(' ').unwrap()]))
            .collect();
        assert_eq!(
            warnings,
            [(4, "tool_use"), (5, "tool_result"), (6, "tool_result")]
        );
        assert!(t.warnings[0].message.contains("tool_use a appears twice"));
        assert!(
            t.warnings[1]
                .message
                .contains("answered at or after line 1")
        );
        assert!(t.warnings[2].message.contains("zz has no matching"));
    }

    #[derive(Debug, Clone)]
    enum PushEvent {
        Ask,
        Calls(Vec<u8>, u8),
        Result(u8),
    }

    fn event() -> impl proptest::strategy::Strategy<Value = PushEvent> {
        use proptest::prelude::*;
        prop_oneof![
            1 => Just(PushEvent::Ask),
            4 => (proptest::collection::vec(0u8..60, 0..3), 0u8..40)
                .prop_map(|(ids, g)| PushEvent::Calls(ids, g)),
            4 => (0u8..60).prop_map(PushEvent::Result),
        ]
    }

    fn build(t: &mut TaskBuilder, events: &[PushEvent]) {
        for (i, e) in events.iter().enumerate() {
            let line = i as u64 + 1;
            match e {
                PushEvent::Ask => t.push(Message::new(
                    Role::User,
                    Kind::Ask,
                    vec![Block::Text { text: "go".into() }],
                    line,
                )),
                PushEvent::Calls(ids, g) => {
                    let ids: Vec<String> = ids.iter().map(|k| format!("toolu_{k}")).collect();
                    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                    t.push(calls(&ids, &format!("msg_{g}"), line));
                }
                PushEvent::Result(k) => t.push(result(&format!("toolu_{k}"), line)),
            }
        }
    }

    proptest::proptest! {
        /// Steps, warnings and the interrupted list are the same whether
        /// the builder's id tables spill (a budget of a few ids) or not:
        /// ids come back at any distance, calls are answered after being
        /// spilled, twice, or never.
        #[test]
        fn a_builder_whose_ids_spill_builds_the_same_task(
            budget in 1usize..6,
            events in proptest::collection::vec(event(), 0..400),
        ) {
            let mut plain = TaskBuilder::new("");
            let mut spilling = TaskBuilder::with_budget("", budget);
            build(&mut plain, &events);
            build(&mut spilling, &events);
            proptest::prop_assert_eq!(&spilling.messages, &plain.messages);
            proptest::prop_assert_eq!(&spilling.warnings, &plain.warnings);
            proptest::prop_assert_eq!(spilling.open_tool_calls(), plain.open_tool_calls());
            proptest::prop_assert_eq!(spilling.steps(), plain.steps());
            proptest::prop_assert!(spilling.failure.is_none());
        }
    }
}
