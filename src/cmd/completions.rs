//! `compactor completions SHELL` and the hidden `compactor man`.

use anyhow::Result;
use clap::Args;

use super::Ui;
use crate::cli::Cli;
use crate::cmd::exit::Outcome;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(ui: &mut Ui, shell: clap_complete::Shell) -> Result<Outcome> {
    ui.out.write_all(&completion(shell))?;
    Ok(Outcome::Ok)
}

pub fn man(ui: &mut Ui) -> Result<Outcome> {
    ui.out.write_all(&man_page()?)?;
    Ok(Outcome::Ok)
}

/// The completion script for a shell, as committed under `completions/`.
pub fn completion(shell: clap_complete::Shell) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "compactor", &mut buf);
    buf
}

/// The man page, as committed under `completions/compactor.1`.
pub fn man_page() -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    Ok(buf)
}
