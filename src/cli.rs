//! The command-line interface (clap derive). Completions and the man page are
//! generated from these definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// message by seq), `A..B` (seq A up to, not including, B), `turn:N`, `step:N`.
    /// Default: the whole task.
    #[arg(value_name = "ADDRESS")]
    pub address: Option<String>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
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
