//! `compactor hooks install|uninstall|status claude-code|codex`: compactor's
//! entries in a client's hook settings (`crate::hooks::settings` edits the
//! text; this module finds the file, shows the change and writes it).
//!
//! Install merges with what is there and keeps a backup of the file as it
//! was (`<file>.compactor-backup`); installing twice is installing once.
//! Uninstall removes exactly compactor's entries: when nothing else changed
//! since, the file is the backup again, byte for byte (and a file install
//! created is removed). `--dry-run` prints the change as a diff.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use similar::TextDiff;

use super::Ui;
use super::atomic::write_atomic;
use super::errors::hinted;
use super::exit::Outcome;
use super::hook_log::log_path;
use super::style;
use crate::cli::Cli;
use crate::hooks::settings::{Entries, Settings};
use crate::hooks::{Client, HookEvent};
use crate::store::DbLocation;

#[derive(Debug, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add compactor's hooks to a client's settings (merged with yours; a backup is kept).
    #[command(
        after_help = "Examples:\n  compactor hooks install claude-code\n  compactor hooks install claude-code --scope project --dry-run\n  compactor hooks install codex"
    )]
    Install(ChangeArgs),
    /// Remove exactly compactor's hooks: the file is as it was before install.
    #[command(
        after_help = "Examples:\n  compactor hooks uninstall claude-code\n  compactor hooks uninstall codex --dry-run"
    )]
    Uninstall(ChangeArgs),
    /// Show where compactor's hooks are installed, what they run and their last runs.
    #[command(
        after_help = "Exit status 0 when the hooks are installed and their binary exists, 1 otherwise.\n\nExamples:\n  compactor hooks status\n  compactor hooks status claude-code --scope project"
    )]
    Status(StatusArgs),
}

/// The client whose settings are edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientArg {
    ClaudeCode,
    Codex,
}

impl ClientArg {
    fn client(self) -> Client {
        match self {
            ClientArg::ClaudeCode => Client::ClaudeCode,
            ClientArg::Codex => Client::Codex,
        }
    }
}

/// Which settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The user's: `$CLAUDE_CONFIG_DIR` or `~/.claude/settings.json`; `$CODEX_HOME` or `~/.codex/hooks.json`.
    User,
    /// The project's in the current directory: `.claude/settings.json`; `.codex/hooks.json`.
    Project,
}

#[derive(Debug, Args)]
pub struct ChangeArgs {
    /// claude-code or codex.
    #[arg(value_enum, value_name = "CLIENT")]
    pub client: ClientArg,

    /// Whose settings: the user's or the current directory's project.
    #[arg(long, value_enum, default_value_t = Scope::User, value_name = "SCOPE")]
    pub scope: Scope,

    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// claude-code or codex (default: both).
    #[arg(value_enum, value_name = "CLIENT")]
    pub client: Option<ClientArg>,

    /// Whose settings: the user's or the current directory's project.
    #[arg(long, value_enum, default_value_t = Scope::User, value_name = "SCOPE")]
    pub scope: Scope,
}

pub fn run(cli: &Cli, ui: &mut Ui, args: &HooksArgs) -> Result<Outcome> {
    match &args.action {
        HooksAction::Install(a) => install(cli, ui, a),
        HooksAction::Uninstall(a) => uninstall(ui, a),
        HooksAction::Status(a) => status(cli, ui, a),
    }
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The client's settings file for `scope`.
fn settings_path(client: Client, scope: Scope) -> Result<PathBuf> {
    let dir = match scope {
        Scope::Project => std::env::current_dir()
            .context("cannot find the current directory")?
            .join(client.project_dir()),
        Scope::User => {
            let (var, dot) = match client {
                Client::ClaudeCode => ("CLAUDE_CONFIG_DIR", ".claude"),
                Client::Codex => ("CODEX_HOME", ".codex"),
            };
            match env_dir(var).or_else(|| env_dir("HOME").map(|h| h.join(dot))) {
                Some(d) => d,
                None => {
                    return Err(hinted(
                        format!("cannot find {}'s settings: HOME is not set", client.title()),
                        format!("set {var} or HOME"),
                    ));
                }
            }
        }
    };
    let path = dir.join(client.settings_file());
    // A settings file kept elsewhere and linked here is edited where it lives.
    Ok(match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(&path).unwrap_or(path),
        _ => path,
    })
}

fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".compactor-backup");
    path.with_file_name(name)
}

/// The file's text, `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn parse(path: &Path, text: Option<&str>, verb: &str) -> Result<Settings> {
    Settings::parse(text).map_err(|e| {
        hinted(
            format!("cannot {verb} {}: {e}", path.display()),
            "the file was left as it was; fix it, or move it away, and run this again",
        )
    })
}

/// The hook commands this binary installs: its absolute path, and the store
/// it was told to use when that is not the default one.
fn entries(cli: &Cli, client: Client) -> Result<Entries> {
    let exe = std::env::current_exe().context("cannot find this compactor's own path")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let mut flags = Vec::new();
    if let Some(db) = &cli.db {
        match DbLocation::parse(db) {
            DbLocation::Memory => bail!(
                "--db :memory: keeps nothing after the hook exits; install the hooks with a store file"
            ),
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
    Ok(Entries::new(client, &exe.display().to_string(), &flags))
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "user",
        Scope::Project => "project",
    }
}

fn install(cli: &Cli, ui: &mut Ui, a: &ChangeArgs) -> Result<Outcome> {
    let client = a.client.client();
    let path = settings_path(client, a.scope)?;
    let old = read_text(&path)?;
    let settings = parse(&path, old.as_deref(), "install into")?;
    let entries = entries(cli, client)?;
    let new = settings.with_entries(&entries);
    if new.tree == settings.tree && old.is_some() {
        writeln!(
            ui.out,
            "compactor's hooks for {} are already installed in {}: nothing changed",
            client.title(),
            path.display()
        )?;
        return Ok(Outcome::Ok);
    }
    let new_text = new.text();
    if a.dry_run {
        print_diff(ui, &path, old.as_deref().unwrap_or(""), &new_text)?;
        return Ok(Outcome::Ok);
    }
    let backup = backup_path(&path);
    let backed_up = match &old {
        // The file as it was before compactor ever touched it.
        Some(text) if !settings.has_entries(client) => {
            write_atomic(&backup, text.as_bytes(), "the backup ")?;
            true
        }
        _ => false,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_atomic(&path, new_text.as_bytes(), "")?;
    writeln!(
        ui.out,
        "installed compactor's hooks for {} in {} ({} scope):",
        client.title(),
        path.display(),
        scope_name(a.scope)
    )?;
    for e in HookEvent::ALL {
        let matcher = e.matcher().map(|m| format!(" ({m})")).unwrap_or_default();
        writeln!(
            ui.out,
            "  {:<22} {}",
            format!("{}{matcher}", e.client_name()),
            entries.command(e)
        )?;
    }
    if backed_up {
        writeln!(ui.out, "backup of the file as it was: {}", backup.display())?;
    } else if old.is_none() {
        writeln!(ui.out, "the file is new (uninstall removes it again)")?;
    }
    if client == Client::Codex {
        writeln!(ui.out, "{}", CODEX_TRUST)?;
    }
    writeln!(
        ui.out,
        "check: compactor hooks status {} · remove: compactor hooks uninstall {}",
        client.name(),
        client.name()
    )?;
    Ok(Outcome::Ok)
}

const CODEX_TRUST: &str = "Codex runs a new or changed hook only once you trust it: start `codex`, type /hooks and trust compactor's three entries.";

fn uninstall(ui: &mut Ui, a: &ChangeArgs) -> Result<Outcome> {
    let client = a.client.client();
    let path = settings_path(client, a.scope)?;
    let Some(old) = read_text(&path)? else {
        writeln!(
            ui.out,
            "{} does not exist: nothing to remove",
            path.display()
        )?;
        return Ok(Outcome::Ok);
    };
    let settings = parse(&path, Some(&old), "uninstall from")?;
    if !settings.has_entries(client) {
        writeln!(
            ui.out,
            "compactor's hooks for {} are not in {}: nothing to remove",
            client.title(),
            path.display()
        )?;
        return Ok(Outcome::Ok);
    }
    let removed = settings.without_entries(client);
    let backup = backup_path(&path);
    let backup_text = read_text(&backup)?;
    let restores_backup = backup_text
        .as_deref()
        .and_then(|b| Settings::parse(Some(b)).ok())
        .is_some_and(|b| b.tree == removed.tree);
    // No backup: the file did not exist before install, so an empty one goes.
    let remove_file = backup_text.is_none() && removed.tree == Settings::parse(None)?.tree;
    let new_text = match (&backup_text, restores_backup) {
        (Some(b), true) => b.clone(),
        _ => removed.text(),
    };
    if a.dry_run {
        print_diff(ui, &path, &old, if remove_file { "" } else { &new_text })?;
        if remove_file {
            writeln!(ui.out, "(the file would be removed: install created it)")?;
        }
        return Ok(Outcome::Ok);
    }
    if remove_file {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        writeln!(
            ui.out,
            "removed compactor's hooks for {}: {} is gone, as before install",
            client.title(),
            path.display()
        )?;
        return Ok(Outcome::Ok);
    }
    write_atomic(&path, new_text.as_bytes(), "")?;
    if restores_backup {
        let _ = std::fs::remove_file(&backup);
        writeln!(
            ui.out,
            "removed compactor's hooks for {}: {} is as it was before install",
            client.title(),
            path.display()
        )?;
    } else {
        writeln!(
            ui.out,
            "removed compactor's hooks for {} from {}; the rest of the file is kept as it is now",
            client.title(),
            path.display()
        )?;
        if backup_text.is_some() {
            writeln!(
                ui.out,
                "the file changed since install, so the backup is kept: {}",
                backup.display()
            )?;
        }
    }
    Ok(Outcome::Ok)
}

fn print_diff(ui: &mut Ui, path: &Path, old: &str, new: &str) -> Result<()> {
    let shown = path.display().to_string();
    let diff = TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("{shown} (now)"), &format!("{shown} (after)"))
        .to_string();
    for line in text.lines() {
        let s = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => Some(style::GREEN),
            Some(b'-') if !line.starts_with("---") => Some(style::RED),
            Some(b'@') => Some(style::CYAN),
            _ => None,
        };
        match s {
            Some(s) => ui.line(s, line)?,
            None => writeln!(ui.out, "{line}")?,
        }
    }
    Ok(())
}

fn status(cli: &Cli, ui: &mut Ui, a: &StatusArgs) -> Result<Outcome> {
    let clients: Vec<Client> = match a.client {
        Some(c) => vec![c.client()],
        None => Client::ALL.to_vec(),
    };
    let mut any_installed = false;
    let location = super::db_location(cli).ok();
    let log = location.as_ref().and_then(log_path);
    for (i, client) in clients.iter().enumerate() {
        if i > 0 {
            writeln!(ui.out)?;
        }
        any_installed |= client_status(ui, *client, a.scope, log.as_deref())?;
    }
    if let Some(l) = &location {
        writeln!(ui.out)?;
        writeln!(ui.out, "store: {}", l.display())?;
    }
    if let Some(log) = &log {
        writeln!(ui.out, "log:   {}", log.display())?;
    }
    Ok(if any_installed {
        Outcome::Ok
    } else {
        Outcome::Differs
    })
}

/// Lines of the log that name `client`, the last `n`.
fn last_runs(log: &Path, client: Client, n: usize) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    let tag = format!(" {} ", client.name());
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(&tag)).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

/// One client's status; whether its hooks are installed and can run.
fn client_status(ui: &mut Ui, client: Client, scope: Scope, log: Option<&Path>) -> Result<bool> {
    let path = settings_path(client, scope)?;
    ui.line(
        style::BOLD,
        &format!(
            "{} ({} scope): {}",
            client.title(),
            scope_name(scope),
            path.display()
        ),
    )?;
    let text = match read_text(&path) {
        Ok(t) => t,
        Err(e) => {
            writeln!(ui.out, "  cannot read it: {e:#}")?;
            return Ok(false);
        }
    };
    let Some(text) = text else {
        writeln!(ui.out, "  not installed: the file does not exist")?;
        writeln!(
            ui.out,
            "  install: compactor hooks install {}",
            client.name()
        )?;
        return Ok(false);
    };
    let settings = match Settings::parse(Some(&text)) {
        Ok(s) => s,
        Err(e) => {
            writeln!(ui.out, "  cannot read it: {e}")?;
            return Ok(false);
        }
    };
    let mut all = true;
    let mut missing_bins = Vec::new();
    for (event, commands) in settings.installed(client) {
        let name = match event.matcher() {
            Some(m) => format!("{} ({m})", event.client_name()),
            None => event.client_name().to_string(),
        };
        if commands.is_empty() {
            all = false;
            writeln!(ui.out, "  {name:<22} not installed")?;
        }
        for c in commands {
            let program = program_of(&c);
            if !Path::new(&program).is_file() && !missing_bins.contains(&program) {
                missing_bins.push(program);
            }
            writeln!(ui.out, "  {name:<22} {c}")?;
        }
    }
    let disabled = client == Client::ClaudeCode
        && settings.tree.get("disableAllHooks") == Some(&crate::hooks::json::Json::Bool(true));
    if disabled {
        writeln!(
            ui.out,
            "  the file sets \"disableAllHooks\": true, so Claude Code runs no hook at all"
        )?;
    }
    let ok = all && missing_bins.is_empty() && !disabled;
    if !settings.has_entries(client) {
        writeln!(
            ui.out,
            "  not installed: compactor hooks install {}",
            client.name()
        )?;
    } else if !all {
        writeln!(
            ui.out,
            "  partly installed: compactor hooks install {} adds the rest",
            client.name()
        )?;
    }
    for b in &missing_bins {
        writeln!(
            ui.out,
            "  the hooks run {b}, which is not there: run `compactor hooks install {}` with the compactor you use",
            client.name()
        )?;
    }
    if ok {
        writeln!(ui.out, "  installed")?;
        if client == Client::Codex {
            writeln!(ui.out, "  {CODEX_TRUST}")?;
        }
    }
    if let Some(log) = log {
        let runs = last_runs(log, client, 3);
        if runs.is_empty() {
            writeln!(ui.out, "  no run logged yet")?;
        } else {
            writeln!(ui.out, "  last runs:")?;
            for r in runs {
                writeln!(ui.out, "    {}", super::visible::visible(&r))?;
            }
        }
    }
    Ok(ok)
}

/// A hook command's program, unquoted.
fn program_of(command: &str) -> String {
    let t = command.trim_start();
    match t.strip_prefix('\'') {
        Some(rest) => {
            let mut out = String::new();
            let mut r = rest;
            // 'a'\''b' quoting: a quote closes, \' is a literal quote, ' reopens.
            while let Some(i) = r.find('\'') {
                out.push_str(&r[..i]);
                r = &r[i + 1..];
                match r.strip_prefix("\\''") {
                    Some(more) => {
                        out.push('\'');
                        r = more;
                    }
                    None => return out,
                }
            }
            out.push_str(r);
            out
        }
        None => t.split_whitespace().next().unwrap_or("").to_string(),
    }
}
