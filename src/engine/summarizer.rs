//! The summarizer seam the engine owns. The floor folds the oldest span of
//! parts into one summary. A summarizer sees that span as [`SpanEntry`]s
//! (never raw store rows), plus the previous summary when the fold is
//! incremental: Σn = fold(Σn-1, span). Whatever it returns is stored
//! content-addressed by the fold's coverage, so a second run re-reads it
//! instead of summarizing again. Implementations live in `crate::summarize`.

use std::borrow::Cow;

use serde_json::Value;

use super::estimate::Estimator;

/// What the summarizer is shown of one part of the folded span, oldest first:
/// its text read in place where the part holds it as it is shown (a large
/// ask or output is not copied to be summarized).
#[derive(Debug, Clone, PartialEq)]
pub enum SpanEntry<'a> {
    /// A real user ask, verbatim.
    Ask { turn: u32, text: Cow<'a, str> },
    /// Text the model saw that nobody typed (injected context, command output).
    Context { text: Cow<'a, str> },
    /// The user interrupted the agent.
    Interrupt { text: Cow<'a, str> },
    /// Assistant prose.
    AssistantText { step: u32, text: Cow<'a, str> },
    /// Visible reasoning.
    Reasoning { step: u32, text: Cow<'a, str> },
    /// One tool call with its result (or none, if interrupted).
    ToolCall(ToolCall<'a>),
    /// The agent's own compaction summary found in the record.
    AgentSummary { text: Cow<'a, str> },
}

/// A tool call in the folded span, with its result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall<'a> {
    pub step: u32,
    pub id: String,
    pub name: String,
    pub input: Cow<'a, Value>,
    /// The result's text (a placeholder when there is none).
    pub output: Cow<'a, str>,
    pub is_error: bool,
    /// No result was recorded: the call was interrupted.
    pub interrupted: bool,
}

impl SpanEntry<'_> {
    /// The entry holding its own copy of what it borrowed.
    pub fn into_owned(self) -> SpanEntry<'static> {
        let own = |t: Cow<'_, str>| Cow::Owned(t.into_owned());
        match self {
            SpanEntry::Ask { turn, text } => SpanEntry::Ask {
                turn,
                text: own(text),
            },
            SpanEntry::Context { text } => SpanEntry::Context { text: own(text) },
            SpanEntry::Interrupt { text } => SpanEntry::Interrupt { text: own(text) },
            SpanEntry::AssistantText { step, text } => SpanEntry::AssistantText {
                step,
                text: own(text),
            },
            SpanEntry::Reasoning { step, text } => SpanEntry::Reasoning {
                step,
                text: own(text),
            },
            SpanEntry::ToolCall(c) => SpanEntry::ToolCall(ToolCall {
                step: c.step,
                id: c.id,
                name: c.name,
                input: Cow::Owned(c.input.into_owned()),
                output: own(c.output),
                is_error: c.is_error,
                interrupted: c.interrupted,
            }),
            SpanEntry::AgentSummary { text } => SpanEntry::AgentSummary { text: own(text) },
        }
    }
}

/// One fold request.
pub struct SummaryRequest<'a> {
    /// The previous summary's text (the sections, without the `## Task Context`
    /// heading the engine adds), when this fold extends an earlier one.
    pub prior: Option<&'a str>,
    /// The newly covered span, oldest first.
    pub span: &'a [SpanEntry<'a>],
    /// The tool calls after the span that the view keeps raw, oldest first,
    /// their outputs left out: never summarized, only read to tell a failure
    /// the agent has since retried with success (not ruled out: it was not
    /// abandoned) from one it gave up on, and what it has written since.
    pub later: &'a [ToolCall<'a>],
    /// ROLLING_SUMMARY_BUDGET_TOKENS: the summary's token cap.
    pub budget_tokens: u64,
    pub estimator: &'a dyn Estimator,
}

/// A minted summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The sections, starting with `## Requests` for the extractive summarizer.
    pub text: String,
    /// Which summarizer produced it (`extractive`, `static`, `llm:<model>`).
    pub summarizer: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SummarizeError {
    #[error("the summarizer timed out after {0} ms")]
    Timeout(u64),
    #[error("the summarizer failed: {0}")]
    Failed(String),
}

/// A way to fold a span into a summary. Implementations must be deterministic
/// for a given request, or their output must be stored before use (the engine
/// stores every summary it mints, so a re-run reads instead of re-asking).
pub trait Summarizer {
    fn name(&self) -> String;
    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError>;

    /// Model call `call` is over: what the summarizer did since the last one
    /// was for it. The session's run calls this after every call it runs, so
    /// that a summarizer that reports its own work (the llm summarizer's
    /// requests and costs) attributes it; the engine itself never does.
    fn call_done(&self, _call: u32) {}

    /// A stored summary `prior` read again at a later call, with the tool
    /// calls the view now keeps raw after it (`later`, as in
    /// [`SummaryRequest::later`]): its text brought up to date when they
    /// contradict it (a failure it rules out has since succeeded), else
    /// `None`. Deterministic; the engine stores what it returns under the
    /// same coverage, so the next call reads it back.
    fn refresh(&self, _prior: &str, _later: &[ToolCall]) -> Option<String> {
        None
    }
}
