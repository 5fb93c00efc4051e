//! Where the clients keep their sessions: `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`,
//! else under `$HOME`.

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
