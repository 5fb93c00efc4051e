//! Codex keeps a session's name (`/rename`, and what `compact
//! --write-session codex` names a session) outside the rollout: in the
//! `session_index.jsonl` of its home, one `{"id","thread_name","updated_at"}`
//! entry a line, appended, the latest entry for an id winning. A rollout
//! filed under `<home>/sessions/YYYY/MM/DD/` (or `archived_sessions/`) is
//! named from its home's index.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

/// The index's file name, in the Codex home.
pub(crate) const CODEX_SESSION_INDEX: &str = "session_index.jsonl";

/// The Codex home a rollout is filed under, when it is.
fn home_of(rollout: &Path) -> Option<&Path> {
    rollout
        .ancestors()
        .skip(1)
        .take(4)
        .find(|dir| {
            dir.file_name()
                .is_some_and(|n| n == "sessions" || n == "archived_sessions")
        })
        .and_then(Path::parent)
}

#[derive(Deserialize)]
struct IndexEntry {
    id: String,
    thread_name: String,
}

/// The name the index gives session `id` of the rollout at `rollout`, if
/// any. An index that cannot be read, or a line that is not an entry, names
/// nothing: the name is a courtesy, never a reason for an import to fail.
pub(crate) fn thread_name(rollout: &Path, id: &str) -> Option<String> {
    let file = std::fs::File::open(home_of(rollout)?.join(CODEX_SESSION_INDEX)).ok()?;
    let mut name = None;
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        if let Ok(e) = serde_json::from_str::<IndexEntry>(&line)
            && e.id == id
            && !e.thread_name.trim().is_empty()
        {
            name = Some(e.thread_name.trim().to_string());
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollout_is_named_by_the_latest_entry_of_its_homes_index() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join("sessions/2026/03/21");
        std::fs::create_dir_all(&day).unwrap();
        let rollout = day.join("rollout-2026-03-21T15-00-00-01a1.jsonl");
        assert_eq!(thread_name(&rollout, "01a1"), None, "no index yet");
        std::fs::write(
            home.path().join(CODEX_SESSION_INDEX),
            concat!(
                "{\"id\":\"01a1\",\"thread_name\":\"first\",\"updated_at\":\"2026-03-21T15:00:00Z\"}\n",
                "not json\n",
                "{\"id\":\"other\",\"thread_name\":\"another session\",\"updated_at\":\"x\"}\n",
                "{\"id\":\"01a1\",\"thread_name\":\"renamed \",\"updated_at\":\"2026-03-21T16:00:00Z\"}\n",
                "{\"id\":\"01a1\",\"thread_name\":\"  \",\"updated_at\":\"2026-03-21T17:00:00Z\"}\n",
            ),
        )
        .unwrap();
        assert_eq!(thread_name(&rollout, "01a1").as_deref(), Some("renamed"));
        assert_eq!(thread_name(&rollout, "nobody"), None);
        // A rollout that is not filed under a Codex home has no index.
        assert_eq!(thread_name(&home.path().join("loose.jsonl"), "01a1"), None);
        let archived = home.path().join("archived_sessions/rollout-x.jsonl");
        assert_eq!(thread_name(&archived, "01a1").as_deref(), Some("renamed"));
    }
}
