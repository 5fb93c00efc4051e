//! The command-line interface (clap derive). Completions and the man page are
//! generated from these definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::engine::budget::Ratio;
use crate::replay::Micros;

#[derive(Debug, Parser)]
#[command(
    name = "compactor",
    version,
    about = "Import agent transcripts into an append-only store and project bounded, deterministic context views",
    long_about = None,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db
    /// under the user's data directory, created on first use.
    #[arg(long, global = true, env = "COMPACTOR_DB", value_name = "PATH")]
    pub db: Option<String>,

    /// Print only errors and the requested output: no progress, notes or warnings.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// When to colour output. `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Import transcript files into the store (idempotent, incremental, atomic per file).
    Import(ImportArgs),
    /// List imported tasks with their sizes and recorded usage.
    Tasks(TasksArgs),
    /// Print a task's messages, one message, or a tool call's raw input and output.
    Show(ShowArgs),
    /// Restore the bounded checkpoint at a turn start (no reduction) and report it.
    Preflight(ProjectArgs),
    /// Run the full operation at one model call and report which tiers fired.
    Step(ProjectArgs),
    /// Render a view file for other tools or people.
    Export(ExportArgs),
    /// Walk a task call by call as a live engine would have, and print a timeline.
    Replay(ReplayArgs),
    /// Compact a saved session offline: replay it, then write the final view.
    Compact(CompactArgs),
    /// List saved replay runs.
    Runs(RunsArgs),
    /// Compare two views (files or saved runs): exit 0 identical, 1 different.
    Diff(DiffArgs),
    /// Prove on fixture transcripts that projection is deterministic (for CI).
    Check(CheckArgs),
    /// Print shell completions for SHELL.
    Completions(CompletionsArgs),
    /// Print the man page (roff).
    #[command(hide = true)]
    Man,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Auto,
    ClaudeCode,
    Codex,
    OpenaiChat,
    Anthropic,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Transcript files (JSONL, or a JSON document for openai-chat/anthropic).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The files' format; `auto` detects it from the first lines.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,

    /// Task name (default: the session id in the file, else one derived from its first line).
    /// Subagents become NAME/agent-ID.
    #[arg(long, value_name = "NAME")]
    pub task: Option<String>,

    /// Import the valid lines of a file that has invalid ones, listing each skipped line.
    #[arg(long)]
    pub skip_invalid: bool,

    /// JSON file of per-tool compaction rules, consulted before the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub tool_rules: Option<PathBuf>,

    /// Print one JSON object per file instead of the human report.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Print a JSON array.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The task.
    #[arg(long, value_name = "TASK")]
    pub task: String,

    /// What to show: `tool:ID` (a tool call's raw input and output), `N` (one
    /// message by seq), `A..B` (seq A up to, not including, B), `turn:N`,
    /// `step:N`, a part address (`text:HASH`, `reasoning:HASH`), a stored
    /// summary (`cov:HASH`, a prefix is enough), or `compacted` (what the
    /// compaction store holds). Default: the whole task.
    #[arg(value_name = "ADDRESS")]
    pub address: Option<String>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Which task to work on: a transcript FILE (imported first) or `--task`.
#[derive(Debug, Args)]
pub struct TaskSource {
    /// A transcript file: imported first (a no-op when unchanged), then its main task is used.
    #[arg(value_name = "FILE", required_unless_present = "task")]
    pub file: Option<PathBuf>,

    /// The task (`compactor tasks` lists them). With FILE, the name to import it as.
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,

    /// FILE's transcript format.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto, value_name = "FORMAT")]
    pub input_format: FormatArg,
}

/// The compaction budget. Env vars are named as in the engine specification.
#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// The model's context window, in tokens.
    #[arg(
        long,
        env = "COMPACTION_CONTEXT_WINDOW",
        default_value_t = 200_000,
        value_name = "TOKENS"
    )]
    pub window: u64,

    /// Tokens reserved for the model's output: w_eff = window − output_reserved.
    #[arg(
        long,
        env = "OUTPUT_RESERVED_TOKENS",
        default_value_t = 20_000,
        value_name = "TOKENS"
    )]
    pub output_reserved: u64,

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

    /// Token cap of the floor summary.
    #[arg(
        long,
        env = "ROLLING_SUMMARY_BUDGET_TOKENS",
        default_value_t = 2_500,
        value_name = "TOKENS"
    )]
    pub summary_budget: u64,

    /// How floor summaries are written (default extractive, or the config file's `summarizer`).
    #[arg(
        long,
        env = "COMPACTOR_SUMMARIZER",
        value_enum,
        value_name = "SUMMARIZER"
    )]
    pub summarizer: Option<SummarizerArg>,

    #[command(flatten)]
    pub llm: LlmArgs,
}

pub use crate::summarize::llm::config::{LlmArgs, SummarizerKind as SummarizerArg};

#[derive(Debug, Args)]
pub struct ProjectArgs {
    #[command(flatten)]
    pub source: TaskSource,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// The model call to project (1 = the first). Default: the next call after
    /// the last recorded message.
    #[arg(long, value_name = "STEP")]
    pub at: Option<u32>,

    /// Write the view's canonical bytes to FILE.
    #[arg(long, value_name = "FILE")]
    pub view: Option<PathBuf>,

    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Per-million-token prices for the cache and cost columns.
#[derive(Debug, Args)]
pub struct PriceArgs {
    /// USD per million uncached input tokens.
    #[arg(long, default_value = "3.00", value_name = "USD")]
    pub price_input: Micros,

    /// USD per million tokens written to the prompt cache.
    #[arg(long, default_value = "3.75", value_name = "USD")]
    pub price_cache_write: Micros,

    /// USD per million tokens read from the prompt cache.
    #[arg(long, default_value = "0.30", value_name = "USD")]
    pub price_cache_read: Micros,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub source: TaskSource,

    #[command(flatten)]
    pub budget: BudgetArgs,

    #[command(flatten)]
    pub prices: PriceArgs,

    /// First call to show (earlier calls still run, unless --resume).
    #[arg(long, value_name = "STEP")]
    pub from: Option<u32>,

    /// Last call to run and show.
    #[arg(long, value_name = "STEP")]
    pub to: Option<u32>,

    /// Replay on the store itself, keeping what the replay mints (as `compact`
    /// does). By default a replay runs on a scratch copy of the task with no
    /// compaction state, so it shows what a live engine would have done and
    /// repeats exactly.
    #[arg(long)]
    pub in_place: bool,

    /// Continue an interrupted in-place replay (implies --in-place): start at
    /// the last call it committed (or at --from), re-deriving the checkpoint
    /// as a restarted engine would.
    #[arg(long)]
    pub resume: bool,

    /// Write every call's view to DIR/call-NNNN.json.
    #[arg(long, value_name = "DIR")]
    pub views: Option<PathBuf>,

    /// Save the run's reports and views in the store under NAME.
    #[arg(long, value_name = "NAME")]
    pub save: Option<String>,

    /// With --save, replace an existing run of that name.
    #[arg(long, requires = "save")]
    pub force: bool,

    /// Print one JSON object: {"steps":[...],"totals":{...}}.
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,

    /// Print one JSON object per call as soon as it completes.
    #[arg(long)]
    pub jsonl: bool,
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    #[command(flatten)]
    pub source: TaskSource,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// Write the final view to FILE (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The final view's format.
    #[arg(long, value_enum, default_value_t = ExportFormatArg::Anthropic)]
    pub format: ExportFormatArg,

    /// Print the final call's report as JSON (on stderr when the view goes to stdout).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Print a JSON array.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A view file, or `run:NAME` / `run:NAME@STEP` (a saved run; without @STEP
    /// two runs are compared call by call).
    #[arg(value_name = "A")]
    pub a: String,

    /// The other side.
    #[arg(value_name = "B")]
    pub b: String,

    /// Print only counts.
    #[arg(long)]
    pub stat: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Fixture transcripts.
    #[arg(required = true, value_name = "FIXTURE")]
    pub fixtures: Vec<PathBuf>,

    /// Compare every view with the golden files under DIR.
    #[arg(long, value_name = "DIR")]
    pub golden: Option<PathBuf>,

    /// Rewrite the golden files from this run.
    #[arg(long, requires = "golden")]
    pub bless: bool,

    /// How floor summaries are written (default extractive, or the config file's `summarizer`).
    #[arg(
        long,
        env = "COMPACTOR_SUMMARIZER",
        value_enum,
        value_name = "SUMMARIZER"
    )]
    pub summarizer: Option<SummarizerArg>,

    #[command(flatten)]
    pub llm: LlmArgs,

    /// Seed of the pseudo-random call at which the interrupted run is killed.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,

    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    /// The canonical Anthropic Messages body.
    Anthropic,
    /// OpenAI Chat Completions messages.
    Openai,
    /// A readable transcript.
    Markdown,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A view file (as written by --view).
    #[arg(value_name = "VIEW")]
    pub view: PathBuf,

    #[arg(long, value_enum, default_value_t = ExportFormatArg::Markdown)]
    pub format: ExportFormatArg,

    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl Cli {
    /// The clap command, for completions and the man page.
    pub fn command() -> clap::Command {
        <Cli as clap::CommandFactory>::command()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        // clap's own checks: unique names, valid defaults, sound requirements.
        Cli::command().debug_assert();
    }
}
