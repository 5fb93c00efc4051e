//! Where sessions live: walking a directory for transcript files.
//!
//! The walk is deterministic: entries are visited in byte order of their
//! names, a directory's files before its subdirectories, so a session file
//! (`<id>.jsonl`) comes before its subagents (`<id>/subagents/agent-*.jsonl`).
//! Hidden entries (a leading `.`) and symbolic links to directories are not
//! followed, so a link loop cannot make the walk endless.

use std::io;
use std::path::{Path, PathBuf};

/// Which files a walk picks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pick {
    /// `*.jsonl` only: an agent's own session folder (Claude Code, Codex).
    Jsonl,
    /// `*.jsonl` and `*.json`: a directory the user named.
    Transcripts,
}

impl Pick {
    fn wants(self, name: &str) -> bool {
        name.ends_with(".jsonl") || (self == Pick::Transcripts && name.ends_with(".json"))
    }
}

/// One file found by a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub path: PathBuf,
    pub bytes: u64,
    /// A symbolic link that leads nowhere (a session deleted, a stale link):
    /// a walk skips it as it skips a file that is no transcript.
    pub dangling: bool,
}

/// Every transcript file under `dir`, recursively, in a fixed order.
pub(crate) fn walk(dir: &Path, pick: Pick) -> io::Result<Vec<Found>> {
    let mut out = Vec::new();
    walk_into(dir, pick, &mut out)?;
    Ok(out)
}

fn walk_into(dir: &Path, pick: Pick, out: &mut Vec<Found>) -> io::Result<()> {
    let mut entries: Vec<(Vec<u8>, PathBuf, std::fs::FileType)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| located(dir, e))? {
        let entry = entry.map_err(|e| located(dir, e))?;
        let name = entry.file_name();
        let key = name.as_encoded_bytes().to_vec();
        if key.first() == Some(&b'.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| located(&entry.path(), e))?;
        entries.push((key, entry.path(), kind));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut dirs = Vec::new();
    for (key, path, kind) in entries {
        if kind.is_dir() {
            dirs.push(path);
            continue;
        }
        if !pick.wants(&String::from_utf8_lossy(&key)) {
            continue;
        }
        // A symbolic link counts when it leads to a regular file; one that
        // leads nowhere is kept, marked, for the walk's note to name.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => out.push(Found {
                path,
                bytes: m.len(),
                dangling: false,
            }),
            Ok(_) => {}
            Err(e) => {
                let dangling = e.kind() == io::ErrorKind::NotFound && kind.is_symlink();
                out.push(Found {
                    path,
                    bytes: 0,
                    dangling,
                })
            }
        }
    }
    for d in dirs {
        walk_into(&d, pick, out)?;
    }
    Ok(())
}

/// Gemini CLI's sessions under its `tmp` directory: each project's
/// `chats/session-*.jsonl`, projects and files in name order. Its other
/// files there (activity logs, tool outputs, subagents' chats in a folder
/// of their parent's) are no sessions.
pub(crate) fn gemini_chats(tmp: &Path) -> io::Result<Vec<Found>> {
    let mut projects: Vec<PathBuf> = std::fs::read_dir(tmp)
        .map_err(|e| located(tmp, e))?
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
        .map(|e| e.path().join("chats"))
        .filter(|p| p.is_dir())
        .collect();
    projects.sort();
    let mut out = Vec::new();
    for chats in projects {
        let mut found: Vec<Found> = walk_flat(&chats)?
            .into_iter()
            .filter(|f| {
                f.path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("session-"))
            })
            .collect();
        out.append(&mut found);
    }
    Ok(out)
}

/// The `*.jsonl` files of `dir` itself, in name order.
fn walk_flat(dir: &Path) -> io::Result<Vec<Found>> {
    let mut out = Vec::new();
    walk_into_flat(dir, &mut out)?;
    Ok(out)
}

fn walk_into_flat(dir: &Path, out: &mut Vec<Found>) -> io::Result<()> {
    let mut all = Vec::new();
    walk_into(dir, Pick::Jsonl, &mut all)?;
    out.extend(all.into_iter().filter(|f| f.path.parent() == Some(dir)));
    Ok(())
}

fn located(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_come_before_subdirectories_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "p/b.jsonl",
            "p/a.jsonl",
            "p/a/subagents/agent-2.jsonl",
            "p/a/subagents/agent-1.jsonl",
            "p/a/tool-results/x.txt",
            "p/.hidden.jsonl",
            "p/doc.json",
            "c/2026/01/rollout-1.jsonl",
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"{}\n").unwrap();
        }
        let rel = |found: Vec<Found>| -> Vec<String> {
            found
                .into_iter()
                .map(|f| {
                    f.path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/")
                })
                .collect()
        };
        assert_eq!(
            rel(walk(root, Pick::Jsonl).unwrap()),
            [
                "c/2026/01/rollout-1.jsonl",
                "p/a.jsonl",
                "p/b.jsonl",
                "p/a/subagents/agent-1.jsonl",
                "p/a/subagents/agent-2.jsonl",
            ]
        );
        let all = rel(walk(&root.join("p"), Pick::Transcripts).unwrap());
        assert!(all.contains(&"p/doc.json".to_string()), "{all:?}");
        assert!(
            !all.iter()
                .any(|p| p.contains("hidden") || p.ends_with(".txt"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_that_leads_nowhere_is_marked_dangling() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.jsonl"), b"{}\n").unwrap();
        std::os::unix::fs::symlink(root.join("gone.jsonl"), root.join("b.jsonl")).unwrap();
        std::os::unix::fs::symlink(root.join("a.jsonl"), root.join("c.jsonl")).unwrap();
        let found = walk(root, Pick::Jsonl).unwrap();
        let marks: Vec<(String, bool)> = found
            .iter()
            .map(|f| {
                let name = f.path.file_name().unwrap().to_string_lossy().into_owned();
                (name, f.dangling)
            })
            .collect();
        assert_eq!(
            marks,
            [
                ("a.jsonl".to_string(), false),
                ("b.jsonl".to_string(), true),
                ("c.jsonl".to_string(), false)
            ]
        );
    }

    #[test]
    fn gemini_sessions_are_each_projects_chats_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "proj-b/chats/session-2026-12-06T09-00-bbbbbbbb.jsonl",
            "proj-a/chats/session-2026-12-06T10-00-aaaaaaaa.jsonl",
            "proj-a/chats/session-2026-12-06T09-00-cccccccc.jsonl",
            "proj-a/chats/5b0e2c7a/subagent-1.jsonl",
            "proj-a/logs/session-5b0e2c7a.jsonl",
            "proj-a/tool-outputs/session-5b0e2c7a/out.txt",
            "proj-c/.project_root",
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"{}\n").unwrap();
        }
        let found: Vec<String> = gemini_chats(root)
            .unwrap()
            .into_iter()
            .map(|f| {
                f.path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        assert_eq!(
            found,
            [
                "proj-a/chats/session-2026-12-06T09-00-cccccccc.jsonl",
                "proj-a/chats/session-2026-12-06T10-00-aaaaaaaa.jsonl",
                "proj-b/chats/session-2026-12-06T09-00-bbbbbbbb.jsonl",
            ]
        );
    }

    #[test]
    fn a_missing_directory_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let err = walk(&gone, Pick::Jsonl).unwrap_err();
        assert!(err.to_string().contains("gone"), "{err}");
    }
}
