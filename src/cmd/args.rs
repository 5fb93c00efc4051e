//! The flags several commands share: which task, under which budget.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};

use super::summarizer::SummarizerArgs;
use crate::model::Format;
use crate::model::decimal::Ratio;

/// Which task to work on: a transcript FILE (imported first), `--task`, or
/// by default `latest` (as `watch` follows the latest session).
#[derive(Debug, Args)]
pub struct TaskSource {
    /// A transcript file: imported first (a no-op when unchanged), then its main task is used.
    /// An argument that names no file but a task (an id, a unique prefix, `latest`) is that
    /// task. Without FILE and --task: the latest task.
    #[arg(value_name = "FILE|TASK")]
    pub file: Option<PathBuf>,

    /// The task: its id, a unique prefix of it, or `latest` (the default: the most recently
    /// active; `compactor tasks` lists them). Not with FILE: FILE names the task.
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,

    /// Import FILE as a task of this name instead of its session id: a new name, no
    /// existing task's id or the start of one (so no prefix in use changes meaning).
    #[arg(long, value_name = "NAME", requires = "file")]
    pub import_as: Option<String>,

    /// Pick among the sessions recorded in this project directory (the PROJECT column of
    /// `compactor tasks`): `latest` and id prefixes look only there; alone, its latest
    /// session. `--cwd` is an older name for it.
    #[arg(long, alias = "cwd", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub project: Option<PathBuf>,

    /// FILE's transcript format.
    #[arg(long, default_value = "auto", value_parser = format_or_auto(), value_name = "FORMAT")]
    pub input_format: ::std::option::Option<Format>,
}

/// The compaction budget. Env vars are named as in the engine specification.
#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// The model's context window, in tokens. Default: the window the session
    /// recorded, else the recorded model's (docs/src/reference/models.md), else 200000.
    #[arg(long, env = "COMPACTION_CONTEXT_WINDOW", value_name = "TOKENS")]
    pub window: Option<u64>,

    /// Tokens reserved for the model's output: w_eff = window − output_reserved.
    /// Default: min(20000, window / 8).
    #[arg(long, env = "OUTPUT_RESERVED_TOKENS", value_name = "TOKENS")]
    pub output_reserved: Option<u64>,

    /// Compaction starts above w_eff × this ratio.
    #[arg(
        long,
        env = "COMPACTION_TRIGGER_RATIO",
        default_value = "0.65",
        value_name = "RATIO"
    )]
    pub trigger_ratio: Ratio,

    /// Shrinking aims at w_eff × this ratio (must be below the trigger ratio).
    #[arg(
        long,
        env = "COMPACTION_STOP_RATIO",
        default_value = "0.5",
        value_name = "RATIO"
    )]
    pub stop_ratio: Ratio,

    /// Model steps at the end of the history that ordinary compaction never touches.
    #[arg(
        long,
        env = "COMPACTION_PROTECT_RECENT_STEPS",
        default_value_t = 5,
        value_name = "N"
    )]
    pub protect_recent_steps: u32,

    /// Token cap of the floor summary. Default: 6% of the prompt room
    /// (window − reserve), at least 2000 and at most 8000
    #[arg(long, env = "ROLLING_SUMMARY_BUDGET_TOKENS", value_name = "TOKENS")]
    pub summary_budget: Option<u64>,

    #[command(flatten)]
    pub summary: SummarizerArgs,

    /// Run even when the system prompt and tools alone exceed w_eff (every
    /// view over the window), which is otherwise refused: `check` compares
    /// such runs' views too, and its child replays pass this.
    #[arg(long, hide = true)]
    pub allow_over_window: bool,
}

/// The task a command runs and the budget it runs it under: the head of
/// `compact`, `preflight`, `step`, `replay`, `report` and `probe`.
#[derive(Debug, Args)]
pub struct RunTarget {
    #[command(flatten)]
    pub source: TaskSource,

    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// The parser of a format flag: `auto` (None: detect from the first lines) or a
/// [`Format`]'s name. The flag's type is written `::std::option::Option<Format>` so
/// that clap takes the value as a whole rather than making the flag optional.
pub fn format_or_auto() -> impl TypedValueParser<Value = Option<Format>> {
    let names = std::iter::once("auto").chain(Format::value_variants().iter().map(|f| f.as_str()));
    PossibleValuesParser::new(names.map(PossibleValue::new)).map(|s| Format::parse(&s))
}
