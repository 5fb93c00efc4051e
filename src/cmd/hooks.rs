//! `compactor hooks install|uninstall|status claude-code|codex|gemini-cli`: compactor's
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

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use similar::TextDiff;

use super::Cli;
use super::Ui;
use super::atomic::{write_atomic, write_atomic_as};
use super::errors::hinted;
use super::exit::Outcome;
use super::hook_log::log_path;
use super::self_command::SelfCommand;
use super::style;
use crate::hooks::mcp;
use crate::hooks::settings::{Entries, Settings};
use crate::hooks::{Client, HookEvent};

#[derive(Debug, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add compactor's hooks to a client's settings (merged with yours; a backup is kept).
    #[command(
        after_help = "Examples:\n  compactor hooks install claude-code\n  compactor hooks install claude-code --scope project --dry-run\n  compactor hooks install codex\n  compactor hooks install gemini-cli"
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
    GeminiCli,
}

impl ClientArg {
    fn client(self) -> Client {
        match self {
            ClientArg::ClaudeCode => Client::ClaudeCode,
            ClientArg::Codex => Client::Codex,
            ClientArg::GeminiCli => Client::GeminiCli,
        }
    }
}

/// Which settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The user's: `$CLAUDE_CONFIG_DIR` or `~/.claude/settings.json`; `$CODEX_HOME` or `~/.codex/hooks.json`; `$GEMINI_CLI_HOME/.gemini` or `~/.gemini/settings.json`.
    User,
    /// The project's in the current directory: `.claude/settings.json`; `.codex/hooks.json`; `.gemini/settings.json`.
    Project,
}

#[derive(Debug, Args)]
pub struct ChangeArgs {
    /// claude-code, codex or gemini-cli.
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
    /// claude-code, codex or gemini-cli (default: all three).
    #[arg(value_enum, value_name = "CLIENT")]
    pub client: Option<ClientArg>,

    /// Whose settings: the user's or the current directory's project.
    #[arg(long, value_enum, default_value_t = Scope::User, value_name = "SCOPE")]
    pub scope: Scope,
}

pub fn run(cli: &Cli, ui: &mut Ui, args: &HooksArgs) -> Result<Outcome> {
    match &args.action {
        // Gemini CLI keeps its MCP servers in the settings file the hooks go
        // in; `compactor run gemini` registers the server for its run, and
        // install leaves the file's servers alone (one edit to undo).
        HooksAction::Install(a) if a.client == ClientArg::GeminiCli => install(cli, ui, a),
        HooksAction::Uninstall(a) if a.client == ClientArg::GeminiCli => uninstall(ui, a),
        HooksAction::Install(a) => {
            // A configuration the server cannot go into stops install before
            // any file is written.
            server_change(cli, a)?;
            let o = install(cli, ui, a)?;
            register_server(cli, ui, a)?;
            Ok(o)
        }
        HooksAction::Uninstall(a) => {
            let o = uninstall(ui, a)?;
            unregister_server(ui, a)?;
            Ok(o)
        }
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
                // The CLI takes GEMINI_CLI_HOME for its home: `.gemini` is under it.
                Client::GeminiCli => ("GEMINI_CLI_HOME", ".gemini"),
            };
            let from_var = env_dir(var).map(|d| match client {
                Client::GeminiCli => d.join(".gemini"),
                _ => d,
            });
            match from_var.or_else(|| env_dir("HOME").map(|h| h.join(dot))) {
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
    let me = SelfCommand::of(cli, "the hook")?;
    Ok(Entries::new(client, &me.program, &me.flags))
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
            write_atomic_as(&backup, text.as_bytes(), "the backup ", &path)?;
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
    for &e in client.events() {
        writeln!(
            ui.out,
            "  {:<22} {}",
            event_shown(e, client),
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
    if client == Client::GeminiCli {
        writeln!(ui.out, "{}", GEMINI_NOTE)?;
    }
    writeln!(
        ui.out,
        "check: compactor hooks status {} · remove: compactor hooks uninstall {}",
        client.name(),
        client.name()
    )?;
    Ok(Outcome::Ok)
}

const GEMINI_NOTE: &str = "Gemini CLI has no hook after its compression: BeforeModel puts the Task Context after the CLI's summary in every request that starts with one (PreCompress only imports). compactor's MCP server is not added to this file: `compactor run gemini` registers it for its run.";

/// An event as `install` and `status` show it: its name in the client's
/// settings, and the matcher compactor's group carries.
fn event_shown(e: HookEvent, client: Client) -> String {
    match e.matcher().filter(|_| client != Client::GeminiCli) {
        Some(m) => format!("{} ({m})", e.name_for(client)),
        None => e.name_for(client).to_string(),
    }
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
            kept_backup(ui, &backup, &path)?;
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
        let hooks = client_status(ui, *client, a.scope, log.as_deref())?;
        let server = *client == Client::GeminiCli || server_status(ui, *client, a.scope)?;
        any_installed |= hooks && server;
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

// ------------------------------------------------------------ the MCP server

/// Where a client keeps the MCP servers of `scope`: Claude Code's user
/// configuration (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`)
/// or a project's `.mcp.json`; Codex's `config.toml` (`$CODEX_HOME`, else
/// `~/.codex`, or the project's `.codex/`).
fn server_config_path(client: Client, scope: Scope) -> Result<PathBuf> {
    let path = match (client, scope) {
        (Client::ClaudeCode, Scope::Project) => std::env::current_dir()
            .context("cannot find the current directory")?
            .join(".mcp.json"),
        (Client::ClaudeCode, Scope::User) => match env_dir("CLAUDE_CONFIG_DIR") {
            Some(d) => d.join(".claude.json"),
            None => env_dir("HOME")
                .ok_or_else(|| {
                    hinted(
                        "cannot find Claude Code's configuration: HOME is not set",
                        "set CLAUDE_CONFIG_DIR or HOME",
                    )
                })?
                .join(".claude.json"),
        },
        (Client::Codex, _) => settings_path(client, scope)?.with_file_name("config.toml"),
        // Its `mcpServers` are in its settings (not edited by install).
        (Client::GeminiCli, _) => settings_path(client, scope)?,
    };
    Ok(match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(&path).unwrap_or(path),
        _ => path,
    })
}

/// The command that starts this compactor's MCP server on its store.
fn server_of(cli: &Cli) -> Result<mcp::Server> {
    let me = SelfCommand::of(cli, "the MCP server")?;
    Ok(mcp::Server {
        args: me.args(&["mcp"]),
        command: me.program,
    })
}

/// A client's MCP configuration's text with the server registered
/// (`Some(server)`) or removed (`None`), and whether it held it before.
fn server_edit(
    client: Client,
    old: Option<&str>,
    server: Option<&mcp::Server>,
) -> Result<(String, bool), String> {
    match client {
        Client::ClaudeCode | Client::GeminiCli => {
            let s = Settings::parse(old).map_err(|e| e.to_string())?;
            let had = mcp::claude_entry(&s).is_some();
            let new = match server {
                Some(srv) => mcp::with_claude_server(&s, srv).map_err(|e| e.to_string())?,
                None => mcp::without_claude_server(&s),
            };
            // Nothing changed: the text as it is.
            let text = match old {
                Some(t) if new.tree == s.tree => t.to_string(),
                _ => new.text(),
            };
            Ok((text, had))
        }
        Client::Codex => {
            let old = old.unwrap_or("");
            let had = mcp::codex_entry(old).is_some();
            let text = match server {
                Some(srv) => mcp::with_codex_server(old, srv).map_err(|e| e.to_string())?,
                None => mcp::without_codex_server(old),
            };
            Ok((text, had))
        }
    }
}

/// What registering the server changes: the file, its text now and after,
/// whether it held the server before, and the server.
struct ServerChange {
    path: PathBuf,
    old: Option<String>,
    new: String,
    had: bool,
    server: mcp::Server,
}

fn server_change(cli: &Cli, a: &ChangeArgs) -> Result<ServerChange> {
    let client = a.client.client();
    let path = server_config_path(client, a.scope)?;
    let server = server_of(cli)?;
    let old = read_text(&path)?;
    let (new, had) = server_edit(client, old.as_deref(), Some(&server)).map_err(|e| {
        hinted(
            format!(
                "cannot register compactor's MCP server in {}: {e}",
                path.display()
            ),
            "nothing was written; fix the file, or move it away, and run this again",
        )
    })?;
    Ok(ServerChange {
        path,
        old,
        new,
        had,
        server,
    })
}

/// `install`'s second half: the server in the client's MCP configuration,
/// with a backup of the file as it was before compactor first touched it.
fn register_server(cli: &Cli, ui: &mut Ui, a: &ChangeArgs) -> Result<()> {
    let client = a.client.client();
    let ServerChange {
        path,
        old,
        new,
        had,
        server,
    } = server_change(cli, a)?;
    if old.as_deref() == Some(new.as_str()) {
        writeln!(
            ui.out,
            "compactor's MCP server is already registered for {} in {}: nothing changed",
            client.title(),
            path.display()
        )?;
        return Ok(());
    }
    if a.dry_run {
        print_diff(ui, &path, old.as_deref().unwrap_or(""), &new)?;
        return Ok(());
    }
    let backup = backup_path(&path);
    if let Some(text) = &old
        && !had
    {
        write_atomic_as(&backup, text.as_bytes(), "the backup ", &path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_atomic(&path, new.as_bytes(), "")?;
    writeln!(
        ui.out,
        "registered compactor's MCP server for {} in {}: {}",
        client.title(),
        path.display(),
        server.shown()
    )?;
    writeln!(
        ui.out,
        "  its tools: view_tool_call, search_history, task_context (they only read the store)"
    )?;
    if old.is_none() {
        writeln!(ui.out, "  the file is new (uninstall removes it again)")?;
    } else if !had {
        writeln!(
            ui.out,
            "  backup of the file as it was: {}",
            backup.display()
        )?;
    }
    Ok(())
}

/// `uninstall`'s second half: the server out of the client's MCP
/// configuration; the file is its backup again, byte for byte, when
/// nothing else changed since install.
fn unregister_server(ui: &mut Ui, a: &ChangeArgs) -> Result<()> {
    let client = a.client.client();
    let path = server_config_path(client, a.scope)?;
    let Some(old) = read_text(&path)? else {
        return Ok(());
    };
    let (removed, had) = server_edit(client, Some(&old), None).map_err(|e| {
        hinted(
            format!(
                "cannot remove compactor's MCP server from {}: {e}",
                path.display()
            ),
            "the file was left as it was; fix it, or move it away, and run this again",
        )
    })?;
    if !had {
        writeln!(
            ui.out,
            "compactor's MCP server is not registered in {}: nothing to remove",
            path.display()
        )?;
        return Ok(());
    }
    let backup = backup_path(&path);
    let backup_text = read_text(&backup)?;
    let same = |a: &str, b: &str| match client {
        Client::ClaudeCode | Client::GeminiCli => {
            Settings::parse(Some(a)).ok().map(|s| s.tree)
                == Settings::parse(Some(b)).ok().map(|s| s.tree)
        }
        Client::Codex => a.trim_end_matches('\n') == b.trim_end_matches('\n'),
    };
    let restores_backup = backup_text.as_deref().is_some_and(|b| same(b, &removed));
    let remove_file = backup_text.is_none()
        && same(
            &removed,
            match client {
                Client::ClaudeCode | Client::GeminiCli => "{}",
                Client::Codex => "",
            },
        );
    let new_text = match (&backup_text, restores_backup) {
        (Some(b), true) => b.clone(),
        _ => removed,
    };
    if a.dry_run {
        print_diff(ui, &path, &old, if remove_file { "" } else { &new_text })?;
        return Ok(());
    }
    if remove_file {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        writeln!(
            ui.out,
            "removed compactor's MCP server: {} is gone, as before install",
            path.display()
        )?;
        return Ok(());
    }
    write_atomic(&path, new_text.as_bytes(), "")?;
    if restores_backup {
        let _ = std::fs::remove_file(&backup);
        writeln!(
            ui.out,
            "removed compactor's MCP server: {} is as it was before install",
            path.display()
        )?;
    } else {
        writeln!(
            ui.out,
            "removed compactor's MCP server from {}; the rest of the file is kept as it is now",
            path.display()
        )?;
        if backup_text.is_some() {
            kept_backup(ui, &backup, &path)?;
        }
    }
    Ok(())
}

/// Uninstall leaves the backup when the file changed since install (a
/// client that rewrites its state file: the backup is then the only copy
/// of the file as it was before compactor touched it, so it is not deleted
/// unasked): named, and no more readable than the file.
fn kept_backup(ui: &mut Ui, backup: &Path, file: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let (Ok(b), Ok(f)) = (std::fs::metadata(backup), std::fs::metadata(file)) {
            let (bm, fm) = (
                b.permissions().mode() & 0o777,
                f.permissions().mode() & 0o777,
            );
            if bm & !fm != 0 {
                let _ = std::fs::set_permissions(backup, std::fs::Permissions::from_mode(bm & fm));
            }
        }
    }
    writeln!(
        ui.out,
        "the file changed since install, so its backup from before install is left: {} (compactor no longer needs it; delete it when you wish)",
        backup.display()
    )?;
    Ok(())
}

/// The server's line in `status`; whether it is registered and its binary is there.
fn server_status(ui: &mut Ui, client: Client, scope: Scope) -> Result<bool> {
    let path = server_config_path(client, scope)?;
    let text = match read_text(&path) {
        Ok(t) => t,
        Err(e) => {
            writeln!(
                ui.out,
                "  {:<22} cannot read {}: {e:#}",
                "MCP server",
                path.display()
            )?;
            return Ok(false);
        }
    };
    let shown = match (client, text.as_deref()) {
        (_, None) => None,
        (Client::ClaudeCode | Client::GeminiCli, Some(t)) => Settings::parse(Some(t))
            .ok()
            .and_then(|s| mcp::claude_entry(&s).map(mcp::claude_entry_shown)),
        (Client::Codex, Some(t)) => mcp::codex_entry(t).map(mcp::codex_entry_shown),
    };
    match shown {
        Some(line) => {
            writeln!(ui.out, "  {:<22} {line}", "MCP server")?;
            writeln!(ui.out, "  {:<22} in {}", "", path.display())?;
            Ok(true)
        }
        None => {
            writeln!(
                ui.out,
                "  {:<22} not registered in {}: compactor hooks install {} adds it",
                "MCP server",
                path.display(),
                client.name()
            )?;
            Ok(false)
        }
    }
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
        let name = event_shown(event, client);
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
