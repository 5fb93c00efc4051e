//! One module per subcommand; this one parses, opens the store once and dispatches.

pub mod args;
pub mod atomic;
mod call_report;
pub mod check;
pub mod compact;
pub mod completions;
pub mod db;
pub mod defaults;
pub mod diff;
pub mod errors;
pub mod exit;
pub mod export;
pub mod hook;
pub mod hook_log;
pub mod hooks;
pub mod import;
pub mod mcp;
pub mod preflight_step;
pub mod probe;
pub mod progress;
pub mod proxy;
pub mod replay;
pub mod report;
pub mod reset;
pub mod run;
pub mod runs;
pub mod search;
pub mod search_hits;
pub mod self_command;
pub mod session_dirs;
pub mod show;
mod storefault;
pub mod style;
mod summarizer;
pub mod sweep;
pub mod target;
pub mod tasks;
pub mod titles;
pub mod tool_call;
mod verify_forwarded;
pub mod visible;
pub mod watch;
pub mod words;
mod write_session;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use db::default_db_path;
use exit::Outcome;

use check::CheckArgs;
use compact::CompactArgs;
use completions::CompletionsArgs;
use diff::DiffArgs;
use export::ExportArgs;
use import::ImportArgs;
use preflight_step::StepArgs;
use replay::ReplayArgs;
use reset::ResetArgs;
use runs::RunsArgs;
use show::ShowArgs;
use tasks::TasksArgs;

use crate::engine::Mode;
use crate::store::{DbLocation, Store};

// The command line (clap derive): completions and the man pages are
// generated from these definitions.

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
    Watch(watch::WatchArgs),
    /// Run the engine live: a loopback proxy between an agent client (Claude Code,
    /// Codex, OpenCode, any OpenAI-compatible one) and its API.
    Proxy(proxy::ProxyArgs),
    /// Go live in one command: the proxy, then a client (Claude Code, Codex,
    /// OpenCode) pointed at it, with compactor's MCP server registered for this run only.
    Run(run::RunArgs),
    /// Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context.
    Mcp(mcp::McpArgs),
    /// Find what was said or done in the record: ranked hits (BM25) in a session, a project
    /// or every task.
    Search(search::SearchArgs),
    /// Walk a task call by call as a live engine would have, and print a timeline.
    Replay(ReplayArgs),
    /// Score a call's view with probes from the raw record: asks, rules, files
    /// written, errors, decisions and state kept, recoverable or lost.
    Probe(probe::ProbeArgs),
    /// Compact a saved session offline: replay it, then write the final view.
    Compact(CompactArgs),
    /// Replay a task and write one self-contained HTML page picturing it.
    Report(report::ReportArgs),
    /// Replay sessions under a grid of policies, priced and probed, beside what the
    /// client did and plain trimming: which window and trigger to use.
    Sweep(sweep::SweepArgs),
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
    Hooks(hooks::HooksArgs),
    /// Run one of compactor's hooks (what the client runs; see `compactor hooks`).
    #[command(hide = true)]
    Hook(hook::HookArgs),
    /// Print shell completions for SHELL.
    Completions(CompletionsArgs),
    /// Print the man page (roff): the main one, or one subcommand's.
    #[command(hide = true)]
    Man(completions::ManArgs),
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

/// Run compactor with these arguments; returns the exit status (the statuses
/// are listed in `src/cmd/exit.rs`).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    ExitCode::from(run(args))
}

fn run(args: impl IntoIterator<Item = OsString>) -> u8 {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // A client runs `compactor hook …`: a command line it cannot parse
        // (an entry from another compactor version) must not fail its session.
        Err(_) if hook::is_hook_command_line(&args) => return exit::OK,
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            return if code == 0 { exit::OK } else { exit::ERROR };
        }
    };
    let mut ui = Ui::new(&cli);
    let result = dispatch(&cli, &mut ui).and_then(|o| {
        ui.out.flush()?;
        Ok(o)
    });
    match result {
        Ok(outcome) => outcome.code(),
        Err(e) if is_broken_pipe(&e) => exit::OK,
        Err(e) => {
            let _ = ui.out.flush();
            let e = storefault::explain(&cli, e);
            ui.error(&e);
            // A store the user can fix (read-only, not a database, busy) is
            // an input error; a corrupt one or a failing SQLite is internal.
            if errors::is_internal(&e) && !storefault::is_user_fixable(&e) {
                exit::INTERNAL
            } else {
                exit::ERROR
            }
        }
    }
}

fn dispatch(cli: &Cli, ui: &mut Ui) -> Result<Outcome> {
    match &cli.command {
        Command::Import(args) => import::run(&mut open_store(cli)?, ui, args),
        Command::Tasks(args) => tasks::run(&open_store_to_read(cli)?, ui, args),
        Command::Show(args) => show::run(&mut open_store_to_read(cli)?, ui, args),
        Command::Preflight(args) => {
            preflight_step::run(&mut open_store(cli)?, ui, args, Mode::Preflight)
        }
        Command::Step(args) => preflight_step::run(&mut open_store(cli)?, ui, args, Mode::Step),
        Command::Export(args) => export::run(ui, args),
        Command::Replay(args) => replay::run(&mut open_store(cli)?, ui, args),
        Command::Probe(args) => probe::run(&mut open_store(cli)?, ui, args),
        Command::Compact(args) => compact::run(&mut open_store(cli)?, ui, args),
        Command::Report(args) => report::run(&mut open_store(cli)?, ui, args),
        Command::Runs(args) => runs::run(&open_store_to_read(cli)?, ui, args),
        Command::Reset(args) => reset::run(&mut open_store(cli)?, ui, args),
        Command::Watch(args) => watch::run(&mut open_store(cli)?, ui, args),
        Command::Sweep(args) if !args.merge.is_empty() => sweep::merge(ui, args),
        Command::Sweep(args) => sweep::run(&mut open_store(cli)?, ui, args),
        Command::Proxy(args) => proxy::run(&mut open_store(cli)?, ui, args),
        Command::Mcp(args) => mcp::run(db_location(cli)?, ui, args),
        Command::Search(args) => search::run(&mut open_store(cli)?, ui, args),
        Command::Run(args) => run::run(cli, ui, args),
        Command::Diff(args) => diff::run(db_location(cli).ok().as_ref(), ui, args),
        Command::Check(args) => check::run(ui, args, db_location(cli).ok()),
        Command::Hooks(args) => hooks::run(cli, ui, args),
        Command::Hook(args) => Ok(hook::run(cli, ui, args)),
        Command::Completions(args) => completions::run(ui, args.shell),
        Command::Man(args) => completions::man(ui, args),
        Command::CompleteTasks => completions::tasks(cli, ui),
    }
}

pub(crate) fn db_location(cli: &Cli) -> Result<DbLocation> {
    Ok(match &cli.db {
        Some(db) => DbLocation::parse(db),
        None => DbLocation::File(default_db_path().ok_or_else(|| {
            errors::hinted(
                "cannot find a user data directory (HOME is not set)",
                "pass --db PATH or set COMPACTOR_DB",
            )
        })?),
    })
}

/// The store a command works on. Only a command that may create it
/// ([`creates_store`]) opens a store file that is not there yet.
fn open_store(cli: &Cli) -> Result<Store> {
    let location = db_location(cli)?;
    if !creates_store(&cli.command) {
        return db::open_existing_store(&location);
    }
    if cli.db.is_none() {
        crate::store::create_default_dir(&location)?;
    }
    Ok(Store::open(&location)?)
}

/// [`open_store`] for a command that only reads the store (unless it
/// imports a FILE first): a store that cannot be written is read where it
/// is, read-only.
fn open_store_to_read(cli: &Cli) -> Result<Store> {
    if creates_store(&cli.command) {
        return open_store(cli);
    }
    db::open_store_to_read(&db_location(cli)?)
}

/// Whether a command may create the store: `import` and `proxy` (which
/// record), and a command given a transcript FILE that is there (it imports
/// it first; an argument that names no file can only name a task).
/// Every other command only reads what was imported, so a store that is not
/// there is a wrong path, never a new empty store.
fn creates_store(command: &Command) -> bool {
    match command {
        Command::Import(_) | Command::Proxy(_) => true,
        Command::Sweep(a) => a.imports(),
        _ => positional(command).is_some_and(|p| target::names_a_path(p) && !p.is_dir()),
    }
}

/// The FILE|TASK argument of a command that takes one, as it reads it.
fn positional(command: &Command) -> Option<&std::path::Path> {
    match command {
        Command::Preflight(a) | Command::Step(a) => a.run.source.file.as_deref(),
        Command::Replay(a) => a.run.source.file.as_deref(),
        Command::Probe(a) => a.run.source.file.as_deref(),
        Command::Compact(a) => a.run.source.file.as_deref(),
        Command::Report(a) => a.run.source.file.as_deref(),
        Command::Show(a) => show::file_and_address(a).0,
        Command::Watch(a) => a.target.as_deref().map(std::path::Path::new),
        _ => None,
    }
}

/// A closed output pipe (`compactor tasks | head`), however it was wrapped.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
    })
}

/// Where commands write: buffered stdout for results, stderr for notes,
/// warnings, progress and errors.
pub struct Ui {
    pub out: Box<dyn Write>,
    err: Box<dyn Write>,
    pub quiet: bool,
    /// Colour on stdout.
    pub color: bool,
    color_err: bool,
    /// Whether stderr is a terminal (progress bars only draw there).
    pub stderr_terminal: bool,
}

impl Ui {
    fn new(cli: &Cli) -> Ui {
        let stderr_terminal = io::stderr().is_terminal();
        Ui {
            out: Box::new(io::BufWriter::new(io::stdout())),
            err: Box::new(io::stderr()),
            quiet: cli.quiet,
            color: style::enabled(cli.color, &io::stdout()),
            color_err: style::enabled(cli.color, &io::stderr()),
            stderr_terminal,
        }
    }

    /// One line of stdout in a style (plain when colour is off), its
    /// control characters made visible (it may name a task, a path, a model).
    pub fn line(&mut self, style: style::Style, text: &str) -> io::Result<()> {
        let text = visible::visible(text);
        writeln!(self.out, "{}", style::paint(self.color, style, &text))
    }

    /// A note on stderr (suppressed by --quiet).
    pub fn note(&mut self, msg: impl AsRef<str>) {
        if !self.quiet {
            let _ = writeln!(self.err, "{}", visible::visible(msg.as_ref()));
        }
    }

    /// Output the user asked for that goes to stderr because stdout is taken
    /// (a report beside a view): printed even with --quiet.
    pub fn requested_on_stderr(&mut self, msg: impl AsRef<str>) {
        let _ = writeln!(self.err, "{}", msg.as_ref());
    }

    /// A warning on stderr (suppressed by --quiet).
    pub fn warn(&mut self, msg: impl AsRef<str>) {
        if !self.quiet {
            let label =
                crate::cmd::style::paint(self.color_err, crate::cmd::style::WARN, "warning:");
            let _ = writeln!(self.err, "{label} {}", visible::visible(msg.as_ref()));
        }
    }

    /// An error on stderr (always shown).
    pub fn error(&mut self, e: &anyhow::Error) {
        let label = crate::cmd::style::paint(self.color_err, crate::cmd::style::ERROR, "error:");
        let _ = writeln!(self.err, "{label} {}", visible::visible(&format!("{e:#}")));
        if let Some(hint) = errors::hint_of(e) {
            let label = crate::cmd::style::paint(self.color_err, crate::cmd::style::HINT, "hint:");
            let _ = writeln!(self.err, "{label} {hint}");
        }
    }

    /// Write a JSON value as one line on stdout.
    /// One compact JSON object (one line) carrying `"schema": "compactor.<kind>/1"`.
    pub fn json_kind(&mut self, kind: &str, v: &impl serde::Serialize) -> Result<()> {
        let v = with_schema(kind, v)?;
        // Serialise first: a closed pipe must surface as an io::Error (exit 0).
        let text = serde_json::to_string(&v)?;
        writeln!(self.out, "{text}")?;
        Ok(())
    }

    pub fn json(&mut self, v: &impl serde::Serialize) -> Result<()> {
        serde_json::to_writer(&mut self.out, v)?;
        writeln!(self.out)?;
        Ok(())
    }
}

/// The schema name of a JSON output kind.
pub fn schema(kind: &str) -> String {
    format!("compactor.{kind}/1")
}

/// `v` as a JSON object with its `schema` field.
pub fn with_schema(kind: &str, v: &impl serde::Serialize) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(v)?;
    if let serde_json::Value::Object(m) = &mut v {
        m.insert("schema".to_string(), schema(kind).into());
    }
    Ok(v)
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
