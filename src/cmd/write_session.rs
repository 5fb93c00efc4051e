//! `compact --write-session`: where an agent keeps its sessions, and the one
//! place a session id and a clock enter. The file's bytes come from
//! `view::session`; this module picks the id, the time and the path, and
//! writes the file without ever replacing one.
//!
//! Tests pin the id and the time with `COMPACTOR_SESSION_ID` and
//! `COMPACTOR_SESSION_TIME` (seconds since the Unix epoch).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use crate::model::time::civil_from_days;
use crate::transcript::codex_names::CODEX_SESSION_INDEX;
use crate::view::session::{SessionKind, codex_index_entry, uuid_from};

/// The new session's id and time.
pub struct Stamp {
    pub session_id: String,
    /// Milliseconds since the Unix epoch.
    pub unix_ms: u64,
}

impl Stamp {
    /// From `COMPACTOR_SESSION_ID`/`COMPACTOR_SESSION_TIME` when set, else a
    /// fresh id (UUIDv7 layout for Codex, v4 for Claude Code) and the clock.
    pub fn new(kind: SessionKind, seed: &str) -> Result<Stamp> {
        let unix_ms = match std::env::var("COMPACTOR_SESSION_TIME") {
            Ok(s) => {
                s.trim().parse::<u64>().with_context(|| {
                    format!("COMPACTOR_SESSION_TIME={s:?}: expected seconds since the Unix epoch")
                })? * 1000
            }
            Err(_) => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
        };
        let session_id = match std::env::var("COMPACTOR_SESSION_ID") {
            Ok(id) if is_uuid(&id) => id,
            Ok(id) => {
                bail!("COMPACTOR_SESSION_ID={id:?}: expected a UUID (8-4-4-4-12 hex digits)")
            }
            Err(_) => {
                let nanos = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                let v4 = uuid_from(format!("{seed}:{nanos}:{}", std::process::id()).as_bytes());
                match kind {
                    SessionKind::ClaudeCode => v4,
                    // UUIDv7: 48 bits of milliseconds, then version 7.
                    SessionKind::Codex => {
                        let ms = format!("{:012x}", unix_ms & 0xffff_ffff_ffff);
                        format!("{}-{}-7{}", &ms[..8], &ms[8..], &v4[15..])
                    }
                }
            }
        };
        Ok(Stamp {
            session_id,
            unix_ms,
        })
    }

    /// ISO-8601 UTC with milliseconds: `2026-12-01T00:16:44.767Z`.
    pub fn iso(&self) -> String {
        let (y, mo, d, h, mi, s) = civil(self.unix_ms / 1000);
        format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
            self.unix_ms % 1000
        )
    }
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Seconds since the epoch as (year, month, day, hour, minute, second), UTC.
fn civil(secs: u64) -> (i64, u32, u32, u64, u64, u64) {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Claude Code's project directory name for a cwd: every character that is
/// not an ASCII letter or digit becomes `-`.
pub fn claude_slug(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn home() -> Result<PathBuf> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(PathBuf::from(h)),
        _ => bail!("HOME is not set: cannot find the agent's session directory"),
    }
}

/// Where the new session file goes.
pub fn session_path(kind: SessionKind, stamp: &Stamp, cwd: &str) -> Result<PathBuf> {
    Ok(match kind {
        SessionKind::ClaudeCode => {
            let root = match std::env::var_os("CLAUDE_CONFIG_DIR") {
                Some(d) if !d.is_empty() => PathBuf::from(d),
                _ => home()?.join(".claude"),
            };
            root.join("projects")
                .join(claude_slug(cwd))
                .join(format!("{}.jsonl", stamp.session_id))
        }
        SessionKind::Codex => {
            let (y, mo, d, h, mi, s) = civil(stamp.unix_ms / 1000);
            codex_home()?
                .join("sessions")
                .join(format!("{y:04}"))
                .join(format!("{mo:02}"))
                .join(format!("{d:02}"))
                .join(format!(
                    "rollout-{y:04}-{mo:02}-{d:02}T{h:02}-{mi:02}-{s:02}-{}.jsonl",
                    stamp.session_id
                ))
        }
    })
}

/// Where Codex keeps its state: `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Result<PathBuf> {
    Ok(match std::env::var_os("CODEX_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => home()?.join(".codex"),
    })
}

/// Name a written Codex session as Codex names one (`/rename`): an entry
/// appended to its `session_index.jsonl`, which `codex resume` lists
/// sessions by (and finds one by, `codex resume NAME`).
pub fn name_codex_session(id: &str, title: &str, timestamp: &str) -> Result<()> {
    let path = codex_home()?.join(CODEX_SESSION_INDEX);
    let fail = || format!("cannot name the session in {}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(fail)?;
    std::io::Write::write_all(&mut file, &codex_index_entry(id, title, timestamp))
        .with_context(fail)?;
    Ok(())
}

/// Write a new session file; an existing file is never replaced.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail = || format!("cannot write the session to {}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(fail)?;
    }
    let mut tmp = tempfile::NamedTempFile::new_in(path.parent().unwrap_or(Path::new(".")))
        .with_context(fail)?;
    std::io::Write::write_all(&mut tmp, bytes).with_context(fail)?;
    tmp.persist_noclobber(path).with_context(fail)?;
    Ok(())
}

/// The command that resumes the session.
pub fn resume_command(kind: SessionKind, id: &str) -> String {
    match kind {
        SessionKind::ClaudeCode => format!("claude --resume {id}"),
        SessionKind::Codex => format!("codex resume {id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_and_slugs() {
        assert_eq!(civil(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil(1_796_084_204), (2026, 12, 1, 0, 16, 44));
        assert_eq!(civil(951_782_400), (2000, 2, 29, 0, 0, 0));
        assert_eq!(claude_slug("/tmp/x.y z/p_q"), "-tmp-x-y-z-p-q");
        let s = Stamp {
            session_id: "x".into(),
            unix_ms: 1_796_084_204_767,
        };
        assert_eq!(s.iso(), "2026-12-01T00:16:44.767Z");
        assert!(is_uuid("01a22ef6-6d29-7f43-82c1-9ea867b1e584"));
        assert!(!is_uuid("01a22ef6-6d29-7f43-82c1"));
    }
}
