//! The command-line interface (clap derive). Completions and the man page are
//! generated from these definitions.

use clap::{Parser, Subcommand, ValueEnum};

use crate::cmd::{
    check::CheckArgs, compact::CompactArgs, completions::CompletionsArgs, diff::DiffArgs,
    export::ExportArgs, import::ImportArgs, preflight_step::StepArgs, replay::ReplayArgs,
    reset::ResetArgs, runs::RunsArgs, show::ShowArgs, tasks::TasksArgs,
};

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
    #[command(
        after_help = "Examples:\n  compactor preflight --window 32000                the latest task\n  compactor preflight session.jsonl --at 12 --json\n  compactor preflight --project . --view checkpoint.json"
    )]
    Preflight(StepArgs),
    /// Run the full operation at one model call and report which tiers fired.
    #[command(
        after_help = "Examples:\n  compactor step --window 32000                   the next call of the latest task\n  compactor step --task 7f3c --at 57 --json       call 57, as JSON\n  compactor step session.jsonl --in-place         keep the compaction state it mints"
    )]
    Step(StepArgs),
    /// Render a view file for other tools or people.
    Export(ExportArgs),
    /// Follow a session file as it is written: one line per new model call.
    Watch(crate::cmd::watch::WatchArgs),
    /// Run the engine live: a loopback proxy between Claude Code or Codex and its API.
    Proxy(crate::cmd::proxy::ProxyArgs),
    /// Go live in one command: the proxy, then Claude Code or Codex pointed at it,
    /// with compactor's MCP server registered for this run only.
    Run(crate::cmd::run::RunArgs),
    /// Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context.
    Mcp(crate::cmd::mcp::McpArgs),
    /// Walk a task call by call as a live engine would have, and print a timeline.
    Replay(ReplayArgs),
    /// Score a call's view with probes from the raw record: asks, rules, files
    /// written, errors, decisions and state kept, recoverable or lost.
    Probe(crate::cmd::probe::ProbeArgs),
    /// Compact a saved session offline: replay it, then write the final view.
    Compact(CompactArgs),
    /// Replay a task and write one self-contained HTML page picturing it.
    Report(crate::cmd::report::ReportArgs),
    /// Replay sessions under a grid of policies, priced and probed, beside what the
    /// client did and plain trimming: which window and trigger to use.
    Sweep(crate::cmd::sweep::SweepArgs),
    /// List saved replay runs.
    Runs(RunsArgs),
    /// Forget a task's compaction state (all profiles, or one); never the raw record.
    Reset(ResetArgs),
    /// Compare two views (files or saved runs): exit 0 identical, 1 different.
    Diff(DiffArgs),
    /// Prove on fixture transcripts that projection is deterministic (for CI).
    Check(CheckArgs),
    /// Keep your rules through Claude Code's and Codex's own compaction: install,
    /// remove or check compactor's hooks in the client's settings.
    #[command(
        after_help = "Examples:\n  compactor hooks install claude-code     keep the rules through /compact\n  compactor hooks status                  what is installed, and the last runs\n  compactor hooks uninstall claude-code   settings.json as it was before"
    )]
    Hooks(crate::cmd::hooks::HooksArgs),
    /// Run one of compactor's hooks (what the client runs; see `compactor hooks`).
    #[command(hide = true)]
    Hook(crate::cmd::hook::HookArgs),
    /// Print shell completions for SHELL.
    Completions(CompletionsArgs),
    /// Print the man page (roff): the main one, or one subcommand's.
    #[command(hide = true)]
    Man(crate::cmd::completions::ManArgs),
    /// Print `latest` and every task id, one a line, for shell completion of `--task`.
    #[command(hide = true, name = "__complete-tasks")]
    CompleteTasks,
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
