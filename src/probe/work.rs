//! The probes of what a model needs to continue (issue 43), read from the
//! record as the extractive summarizer reads it:
//!
//! - `definition`: per file written, the latest definition a write or an
//!   edit added or changed (`engine::defs`); only the latest of each file is
//!   judged.
//! - `outcome`: the latest test, build or lint run's counts (`410 tests, 0
//!   failures`), else its command (`engine::milestones`).
//! - `reason`: a decision's reason, from its marker on (`because …`,
//!   `so that …`).
//! - `next`: the latest plan's step in progress or next, else the agent's
//!   latest stated intent.
//!
//! None is critical: a continuation can do without each, at a cost.

use serde_json::Value;

use crate::engine::defs::{Lang, diff_texts};
use crate::engine::lexicon::{
    DECISION_MARKERS, REASON_MARKERS, find_marker, narrates_intent, words,
};
use crate::engine::milestones::{Work, read_work};
use crate::engine::toolfacts::strings_of;

/// A plan step or an intent is probed by its head, this long (the summary
/// keeps 80 characters of a step).
const NEXT_CHARS: usize = 60;
/// A reason is probed from its marker on, this long; only when the marker
/// is this early, so the summary's cut sentence still holds it.
const REASON_CHARS: usize = 50;
const REASON_MARKER_WITHIN: usize = 140;

/// The definition a successful write of `path` added or changed last that
/// is not a test's, when its own text shows one. `new_file` is whether the
/// record showed the file before (a read or a write): a whole write of a
/// file seen before is compared by the summarizer with the file, not here.
pub(crate) fn changed_definition(
    name: &str,
    input: &Value,
    path: &str,
    new_file: bool,
) -> Option<String> {
    let lang = Lang::of_path(path)?;
    let mut pairs: Vec<(String, String)> = Vec::new();
    let field = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
    };
    match name {
        "Write" | "write" | "write_file" | "create_file" if new_file => {
            pairs.extend(
                field(&["content", "file_text", "text"]).map(|c| (String::new(), c.to_string())),
            );
        }
        "Edit" | "edit" | "edit_file" | "str_replace_based_edit_tool" | "str_replace_editor" => {
            if let (Some(old), Some(new)) = (
                field(&["old_string", "oldString", "old_str"]),
                field(&["new_string", "newString", "new_str"]),
            ) {
                pairs.push((old.to_string(), new.to_string()));
            } else if let Some(text) = field(&["file_text"]).filter(|_| new_file) {
                pairs.push((String::new(), text.to_string()));
            }
        }
        "MultiEdit" => {
            for e in input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(old), Some(new)) = (
                    e.get("old_string").and_then(Value::as_str),
                    e.get("new_string").and_then(Value::as_str),
                ) {
                    pairs.push((old.to_string(), new.to_string()));
                }
            }
        }
        _ => {
            for s in strings_of(input).filter(|s| s.contains("*** Begin Patch")) {
                pairs.extend(patch_texts(s, path));
            }
        }
    }
    // The latest added, else the latest changed: a file's line names both.
    let (mut added, mut changed) = (None, None);
    for (old, new) in &pairs {
        let change = diff_texts(lang, old, new);
        added = change
            .added
            .iter()
            .rfind(|n| !is_test(n))
            .cloned()
            .or(added);
        changed = change
            .changed
            .iter()
            .rfind(|n| !is_test(n))
            .cloned()
            .or(changed);
    }
    added.or(changed)
}

/// The old and new text of `path`'s part of a patch (context in both).
fn patch_texts(patch: &str, path: &str) -> Option<(String, String)> {
    let mut inside = false;
    let (mut old, mut new) = (String::new(), String::new());
    for line in patch.lines() {
        if let Some(rest) = ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        {
            inside = rest.trim() == path;
            continue;
        }
        if !inside || line.starts_with("***") || line.starts_with("@@") {
            continue;
        }
        if let Some(l) = line.strip_prefix('-') {
            old.push_str(l);
            old.push('\n');
        } else if let Some(l) = line.strip_prefix('+') {
            new.push_str(l);
            new.push('\n');
        } else if let Some(l) = line.strip_prefix(' ') {
            old.push_str(l);
            old.push('\n');
            new.push_str(l);
            new.push('\n');
        }
    }
    (!old.is_empty() || !new.is_empty()).then_some((old, new))
}

/// A test's definition (`fn test_parse`, `mod tests`), as a file's list
/// lets it give way first.
fn is_test(name: &str) -> bool {
    let last = name
        .rsplit([' ', ':', '.', '#'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    last.starts_with("test") || last.ends_with("test") || last.ends_with("tests")
}

/// What a check's run shows: its counts, else its command.
pub(crate) fn outcome_of(
    name: &str,
    input: &Value,
    output: &str,
    is_error: bool,
) -> Option<String> {
    match read_work(name, input, output, is_error)? {
        Work::Check {
            command, counts, ..
        } => Some(counts.unwrap_or(command)),
        _ => None,
    }
}

/// The step a plan names next (in progress, else the first pending).
pub(crate) fn plan_next(input: &Value) -> Option<String> {
    let steps = ["todos", "plan"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_array))?;
    fn status(s: &Value) -> &str {
        s.get("status").and_then(Value::as_str).unwrap_or_default()
    }
    fn text(s: &Value) -> Option<&str> {
        ["content", "step", "title", "description"]
            .iter()
            .find_map(|k| s.get(*k).and_then(Value::as_str))
    }
    let next = steps
        .iter()
        .find(|s| matches!(status(s), "in_progress" | "in-progress" | "active"))
        .or_else(|| steps.iter().find(|s| status(s) == "pending"))?;
    Some(head(&flat(text(next)?), NEXT_CHARS))
}

/// The agent's stated intent, by its head: a narration of what it will do.
pub(crate) fn intent(sentence: &str) -> Option<String> {
    (!sentence.ends_with('?') && narrates_intent(sentence))
        .then(|| head(&flat(sentence.trim_end_matches(':')), NEXT_CHARS))
}

/// A decision's reason, from its marker on.
pub(crate) fn reason(sentence: &str) -> Option<String> {
    let flat = flat(sentence);
    let ws = words(&flat);
    let decision = find_marker(&ws, DECISION_MARKERS).is_some() || narrates_intent(&flat);
    let at = find_marker(&ws, REASON_MARKERS)?;
    (decision && flat[..at].chars().count() <= REASON_MARKER_WITHIN)
        .then(|| head(&flat[at..], REASON_CHARS))
}

fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn head(s: &str, n: usize) -> String {
    s.chars().take(n).collect::<String>().trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_probes_read_what_the_summary_writes() {
        let edit = json!({
            "file_path": "/r/lib/a.ex",
            "old_string": "def a(x), do: x",
            "new_string": "def a(x), do: x + 1\n\ndef b(y), do: y\n\ntest \"b\" do\nend",
        });
        assert_eq!(
            changed_definition("Edit", &edit, "/r/lib/a.ex", false).as_deref(),
            Some("b/1")
        );
        let write = json!({"file_path": "/r/src/m.rs", "content": "pub fn go() {}\n#[cfg(test)]\nmod tests {\n    fn test_go() {}\n}\n"});
        assert_eq!(
            changed_definition("Write", &write, "/r/src/m.rs", true).as_deref(),
            Some("fn go")
        );
        assert_eq!(
            changed_definition("Write", &write, "/r/src/m.rs", false),
            None
        );
        assert_eq!(
            outcome_of(
                "Bash",
                &json!({"command": "mix test"}),
                "Finished\n410 tests, 0 failures",
                false
            )
            .as_deref(),
            Some("410 tests, 0 failures")
        );
        assert_eq!(
            plan_next(&json!({"todos": [{"content": "A", "status": "completed"}, {"content": "B", "status": "pending"}]}))
                .as_deref(),
            Some("B")
        );
        assert_eq!(
            intent("Now let me check the schema:").as_deref(),
            Some("Now let me check the schema")
        );
        assert_eq!(
            reason("I'll use a BufReader instead of manual reads, so line handling stays in std.")
                .as_deref(),
            Some("instead of manual reads, so line handling stays in")
        );
        assert_eq!(reason("The test failed because of a typo."), None);
    }
}
