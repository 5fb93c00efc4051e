//! Where the clients keep their sessions: `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`,
//! `$OPENCODE_DB`, `$XDG_DATA_HOME` and `$GEMINI_CLI_HOME`, else under `$HOME`.

use std::path::PathBuf;

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home_dir() -> Option<PathBuf> {
    env_dir("HOME").or_else(|| env_dir("USERPROFILE"))
}

/// `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
pub fn claude_projects() -> Option<PathBuf> {
    env_dir("CLAUDE_CONFIG_DIR")
        .or_else(|| home_dir().map(|h| h.join(".claude")))
        .map(|d| d.join("projects"))
}

/// `$CODEX_HOME/sessions`, else `~/.codex/sessions`.
pub fn codex_sessions() -> Option<PathBuf> {
    env_dir("CODEX_HOME")
        .or_else(|| home_dir().map(|h| h.join(".codex")))
        .map(|d| d.join("sessions"))
}

/// Gemini CLI's temporary directory, which holds each project's chats:
/// `$GEMINI_CLI_HOME/.gemini/tmp` (the CLI takes that variable for its home),
/// else `~/.gemini/tmp`.
pub fn gemini_tmp() -> Option<PathBuf> {
    env_dir("GEMINI_CLI_HOME")
        .or_else(home_dir)
        .map(|h| h.join(".gemini").join("tmp"))
}

/// OpenCode's data directory: `$XDG_DATA_HOME/opencode`, else
/// `~/.local/share/opencode` (OpenCode uses these on every platform).
pub fn opencode_data() -> Option<PathBuf> {
    env_dir("XDG_DATA_HOME")
        .or_else(|| home_dir().map(|h| h.join(".local").join("share")))
        .map(|d| d.join("opencode"))
}

/// Where OpenCode's stores are: the one `$OPENCODE_DB` names (absolute, or
/// relative to its data directory), else its data directory, which holds
/// `opencode.db` and one `opencode-CHANNEL.db` per other release channel.
pub enum OpencodeStores {
    File(PathBuf),
    Dir(PathBuf),
}

pub fn opencode_stores() -> Option<OpencodeStores> {
    let data = opencode_data();
    match env_dir("OPENCODE_DB").filter(|p| p.as_os_str() != ":memory:") {
        Some(p) if p.is_absolute() => Some(OpencodeStores::File(p)),
        Some(p) => data.map(|d| OpencodeStores::File(d.join(p))),
        None => data.map(OpencodeStores::Dir),
    }
}

/// The stores in OpenCode's data directory, in name order.
pub fn opencode_stores_in(dir: &std::path::Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("opencode") && n.ends_with(".db"))
        })
        .collect();
    found.sort();
    Ok(found)
}
