//! This compactor as another program starts it: its absolute path, and the
//! global flags that reach the same store (`--db`, when one was given). What
//! the hooks, the MCP server's registration and `compactor run` write into a
//! client's command lines.

use anyhow::{Context, Result, bail};

use super::Cli;
use crate::store::DbLocation;

/// The program and the flags before a subcommand.
pub struct SelfCommand {
    /// This binary, an absolute path (links resolved).
    pub program: String,
    /// `--db ABSOLUTE-PATH` when the store is not the default one, else none.
    pub flags: Vec<String>,
}

impl SelfCommand {
    /// This binary with the store `cli` names; `what` says, in an error,
    /// what it was for (a store in memory lasts no longer than one process).
    pub fn of(cli: &Cli, what: &str) -> Result<SelfCommand> {
        let exe = std::env::current_exe().context("cannot find this compactor's own path")?;
        let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
        let mut flags = Vec::new();
        if let Some(db) = &cli.db {
            match DbLocation::parse(db) {
                DbLocation::Memory => {
                    bail!("--db :memory: keeps nothing after {what} exits; give a store file")
                }
                DbLocation::File(p) => {
                    let p = if p.is_absolute() {
                        p
                    } else {
                        std::env::current_dir()?.join(p)
                    };
                    flags.push("--db".to_string());
                    flags.push(p.display().to_string());
                }
            }
        }
        Ok(SelfCommand {
            program: exe.display().to_string(),
            flags,
        })
    }

    /// The arguments that run `subcommand` (its words) on this store.
    pub fn args(&self, subcommand: &[&str]) -> Vec<String> {
        self.flags
            .iter()
            .cloned()
            .chain(subcommand.iter().map(|s| s.to_string()))
            .collect()
    }
}
