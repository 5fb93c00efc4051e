//! `compactor completions SHELL` and the hidden `compactor man`.

use std::io::Write;

use anyhow::Result;
use clap::Args;

use super::Cli;
use super::Ui;
use crate::cmd::exit::Outcome;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor completions bash > ~/.local/share/bash-completion/completions/compactor\n  compactor completions zsh > ~/.zfunc/_compactor\n  compactor completions fish > ~/.config/fish/completions/compactor.fish"
)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(ui: &mut Ui, shell: clap_complete::Shell) -> Result<Outcome> {
    ui.out.write_all(&completion(shell))?;
    Ok(Outcome::Ok)
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A subcommand: print its page (`compactor-SUBCOMMAND(1)`).
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "list")]
    pub subcommand: Option<String>,

    /// List the subcommands that have a page, one a line.
    #[arg(long)]
    pub list: bool,
}

pub fn man(ui: &mut Ui, args: &ManArgs) -> Result<Outcome> {
    if args.list {
        for name in man_subcommands() {
            writeln!(ui.out, "{name}")?;
        }
        return Ok(Outcome::Ok);
    }
    let page = match &args.subcommand {
        None => man_page()?,
        Some(name) => subcommand_page(name)?,
    };
    ui.out.write_all(&page)?;
    Ok(Outcome::Ok)
}

/// The subcommands with a page: every one that is not hidden.
pub fn man_subcommands() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

/// `compactor-NAME(1)`, as committed under `completions/man/`.
pub fn subcommand_page(name: &str) -> Result<Vec<u8>> {
    let mut cmd = Cli::command();
    // Building names the subcommands as the main page refers to them
    // (`compactor-import`), with `compactor import` in their synopsis.
    cmd.build();
    let Some(sub) = cmd
        .get_subcommands()
        .find(|c| c.get_name() == name && !c.is_hide_set())
    else {
        anyhow::bail!(
            "no subcommand {name:?}; expected one of: {}",
            man_subcommands().join(", ")
        );
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(sub.clone()).render(&mut buf)?;
    Ok(buf)
}

/// `compactor __complete-tasks`: what the completion scripts offer for
/// `--task`. Never an error: a missing or unreadable store offers `latest` only.
pub fn tasks(cli: &super::Cli, ui: &mut Ui) -> Result<Outcome> {
    writeln!(ui.out, "latest")?;
    let location = match &cli.db {
        Some(db) => crate::store::DbLocation::parse(db),
        None => match super::db::default_db_path() {
            Some(p) => crate::store::DbLocation::File(p),
            None => return Ok(Outcome::Ok),
        },
    };
    let exists = match &location {
        crate::store::DbLocation::File(p) => p.is_file(),
        crate::store::DbLocation::Memory => false,
    };
    if !exists {
        return Ok(Outcome::Ok);
    }
    if let Ok(store) = crate::store::Store::open(&location)
        && let Ok(tasks) = store.reader().tasks()
    {
        for t in tasks {
            writeln!(ui.out, "{}", t.id)?;
        }
    }
    Ok(Outcome::Ok)
}

/// The completion script for a shell, as committed under `completions/`.
/// clap's static script, with `--task` values completed by `compactor
/// __complete-tasks` (task ids and `latest`) in bash, zsh and fish.
pub fn completion(shell: clap_complete::Shell) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "compactor", &mut buf);
    let text = String::from_utf8(buf).expect("clap writes UTF-8");
    let text = match shell {
        clap_complete::Shell::Bash => text.replace(
            "--task)\n                    COMPREPLY=($(compgen -f \"${cur}\"))",
            "--task)\n                    COMPREPLY=($(compgen -W \"$(compactor __complete-tasks 2>/dev/null)\" -- \"${cur}\"))",
        ),
        clap_complete::Shell::Zsh => text
            .replace(":TASK:_default'", ":TASK:_compactor_task_ids'")
            .replacen(
                "\n_compactor() {",
                "\n_compactor_task_ids() {\n    local -a ids\n    ids=(${(f)\"$(compactor __complete-tasks 2>/dev/null)\"})\n    compadd -a ids\n}\n\n_compactor() {",
                1,
            ),
        // `--task TASK` (not import's `--task NAME`): ids, not files.
        clap_complete::Shell::Fish => text
            .lines()
            .map(|l| {
                if l.contains(" -l task -d 'The task") && l.ends_with(" -r") {
                    format!("{l} -f -a '(compactor __complete-tasks 2>/dev/null)'\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect(),
        _ => text,
    };
    text.into_bytes()
}

/// The man page, as committed under `completions/compactor.1`.
pub fn man_page() -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    Ok(buf)
}
