//! One module per subcommand; this one parses, opens the store once and dispatches.

mod check;
mod compact;
pub mod completions;
mod diff;
mod export;
mod import;
mod project;
mod replay;
mod report;
mod runs;
mod show;
mod summarizer;
mod tasks;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};

use anyhow::{Context, Result};
use clap::Parser;

use crate::cli::{Cli, ColorChoice, Command};
use crate::engine::Mode;
use crate::exit::{self, Outcome};
use crate::store::{DbLocation, Store, default_db_path};

/// Run compactor with these arguments; returns the exit status.
pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
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
            ui.error(&e);
            exit::ERROR
        }
    }
}

fn dispatch(cli: &Cli, ui: &mut Ui) -> Result<Outcome> {
    match &cli.command {
        Command::Import(args) => import::run(&mut open_store(cli)?, ui, args),
        Command::Tasks(args) => tasks::run(&open_store(cli)?, ui, args),
        Command::Show(args) => show::run(&open_store(cli)?, ui, args),
        Command::Preflight(args) => project::run(&mut open_store(cli)?, ui, args, Mode::Preflight),
        Command::Step(args) => project::run(&mut open_store(cli)?, ui, args, Mode::Step),
        Command::Export(args) => export::run(ui, args),
        Command::Replay(args) => replay::run(&mut open_store(cli)?, ui, args),
        Command::Compact(args) => compact::run(&mut open_store(cli)?, ui, args),
        Command::Runs(args) => runs::run(&open_store(cli)?, ui, args),
        Command::Diff(args) => diff::run(db_location(cli).ok().as_ref(), ui, args),
        Command::Check(args) => check::run(ui, args, db_location(cli).ok()),
        Command::Completions(args) => completions::run(ui, args.shell),
        Command::Man => completions::man(ui),
    }
}

fn db_location(cli: &Cli) -> Result<DbLocation> {
    Ok(match &cli.db {
        Some(db) => DbLocation::parse(db),
        None => DbLocation::File(default_db_path().context(
            "cannot find a user data directory (HOME is not set); pass --db PATH or set COMPACTOR_DB",
        )?),
    })
}

fn open_store(cli: &Cli) -> Result<Store> {
    Ok(Store::open(&db_location(cli)?)?)
}

/// `1 part`, `2 parts`, `3 misses`.
pub fn plural(n: u64, noun: &str) -> String {
    match (n, noun.ends_with('s')) {
        (1, _) => format!("{n} {noun}"),
        (_, true) => format!("{n} {noun}es"),
        _ => format!("{n} {noun}s"),
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
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let decide = |terminal: bool| match cli.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !no_color,
        };
        let stderr_terminal = io::stderr().is_terminal();
        Ui {
            out: Box::new(io::BufWriter::new(io::stdout())),
            err: Box::new(io::stderr()),
            quiet: cli.quiet,
            color: decide(io::stdout().is_terminal()),
            color_err: decide(stderr_terminal),
            stderr_terminal,
        }
    }

    /// A note on stderr (suppressed by --quiet).
    pub fn note(&mut self, msg: impl AsRef<str>) {
        if !self.quiet {
            let _ = writeln!(self.err, "{}", msg.as_ref());
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
            let label = crate::style::paint(self.color_err, crate::style::WARN, "warning:");
            let _ = writeln!(self.err, "{label} {}", msg.as_ref());
        }
    }

    /// An error on stderr (always shown).
    pub fn error(&mut self, e: &anyhow::Error) {
        let label = crate::style::paint(self.color_err, crate::style::ERROR, "error:");
        let _ = writeln!(self.err, "{label} {e:#}");
    }

    /// Write a JSON value as one line on stdout.
    pub fn json(&mut self, v: &impl serde::Serialize) -> Result<()> {
        serde_json::to_writer(&mut self.out, v)?;
        writeln!(self.out)?;
        Ok(())
    }
}
