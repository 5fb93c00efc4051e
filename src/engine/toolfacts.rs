//! What a tool call says about the work, read the same way by the
//! extractive summarizer and by `probe`: the paths it wrote (Claude Code file
//! tools, the Anthropic text editor tool, Codex `apply_patch`) and the
//! verbatim lines of its error.

use serde_json::Value;

/// Each verbatim error line of a failed call.
const ERROR_LINE_MAX_CHARS: usize = 200;

/// At most `max` characters, with `…` when cut.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// Paths a successful call wrote, with how: Claude Code file tools, the
/// Anthropic text editor tool, and Codex patches (in any string of the input).
pub(crate) fn written_paths(name: &str, input: &Value) -> Vec<(String, &'static str)> {
    let field = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let mut out = Vec::new();
    let single = match name {
        "Write" | "write_file" | "create_file" => {
            field(&["file_path", "path"]).map(|p| (p, "written"))
        }
        "Edit" | "MultiEdit" | "NotebookEdit" | "edit_file" => {
            field(&["file_path", "notebook_path", "path"]).map(|p| (p, "edited"))
        }
        "str_replace_based_edit_tool" | "str_replace_editor" => {
            let verb = match input.get("command").and_then(Value::as_str) {
                Some("create") => Some("created"),
                Some("str_replace" | "insert" | "undo_edit") => Some("edited"),
                _ => None,
            };
            verb.and_then(|v| field(&["path"]).map(|p| (p, v)))
        }
        _ => None,
    };
    out.extend(single);
    if name == "apply_patch" || strings_of(input).any(|s| s.contains("*** Begin Patch")) {
        for s in strings_of(input) {
            out.extend(patch_paths(s));
        }
    }
    out
}

/// Two paths name the same file: equal, or one is the other with leading
/// directories dropped (a summary may shorten `/home/u/repo/src/a.rs`).
pub(crate) fn same_path(a: &str, b: &str) -> bool {
    let ends = |long: &str, short: &str| {
        long.strip_suffix(short)
            .is_some_and(|head| head.ends_with('/'))
    };
    a == b || ends(a, b) || ends(b, a)
}

/// `*** Add File:` / `*** Update File:` / `*** Delete File:` / `*** Move to:` lines.
pub(crate) fn patch_paths(patch: &str) -> Vec<(String, &'static str)> {
    const OPS: [(&str, &str); 4] = [
        ("*** Add File: ", "created"),
        ("*** Update File: ", "edited"),
        ("*** Delete File: ", "deleted"),
        ("*** Move to: ", "moved here"),
    ];
    patch
        .lines()
        .filter_map(|line| {
            OPS.iter().find_map(|(prefix, verb)| {
                let path = line.strip_prefix(prefix)?.trim();
                (!path.is_empty()).then(|| (path.to_string(), *verb))
            })
        })
        .collect()
}

/// Every string in a JSON value, depth-first in the value's own key order.
pub(crate) fn strings_of(v: &Value) -> std::vec::IntoIter<&str> {
    let mut out = Vec::new();
    strings_into(v, &mut out);
    out.into_iter()
}

/// [`strings_of`] appended to `out` (no iterator boxed for each value: the
/// search index takes every tool input's strings this way).
pub(crate) fn strings_into<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => {
            for item in items {
                strings_into(item, out);
            }
        }
        Value::Object(map) => {
            for value in map.values() {
                strings_into(value, out);
            }
        }
        _ => {}
    }
}

const ERROR_WORDS: [&str; 14] = [
    "error",
    "fail",
    "panic",
    "denied",
    "not found",
    "no such",
    "cannot",
    "can't",
    "invalid",
    "exception",
    "traceback",
    "fatal",
    "refused",
    "timed out",
];

fn has_error_word(line: &str) -> bool {
    let lower = line.to_lowercase();
    ERROR_WORDS.iter().any(|w| lower.contains(w))
}

/// Up to two verbatim lines of an error: the first, plus the first line that
/// names the error when the first does not (`Exit code 1`), else the second.
pub(crate) fn error_excerpt(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(40)
        .collect();
    let Some(first) = lines.first() else {
        return "(no error text)".to_string();
    };
    let second = if first.starts_with("Traceback") {
        // A Python traceback names its error on its last line.
        lines.iter().skip(1).rev().find(|l| names_exception(l))
    } else if has_error_word(first) {
        lines.get(1)
    } else {
        lines[1..].iter().find(|l| has_error_word(l))
    };
    std::iter::once(first)
        .chain(second)
        .map(|l| clip(l, ERROR_LINE_MAX_CHARS))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `TimeoutError: export exceeded 30s`, `ValueError`, `my.pkg.Oops: ...`.
fn names_exception(line: &str) -> bool {
    let head = line.split(':').next().unwrap_or("");
    !head.contains(' ') && (head.ends_with("Error") || head.ends_with("Exception"))
}

/// The excerpt line that names the error (`Exit code 1` rarely does).
pub(crate) fn naming_line(excerpt: &str) -> &str {
    excerpt
        .lines()
        .find(|l| has_error_word(l))
        .or_else(|| excerpt.lines().next())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_traceback_is_named_by_its_last_line() {
        let out = "Traceback (most recent call last):\n  File \"run.py\", line 88, in run\nTimeoutError: export of tenant 4411 exceeded 30s";
        assert_eq!(
            super::error_excerpt(out),
            "Traceback (most recent call last):\nTimeoutError: export of tenant 4411 exceeded 30s"
        );
    }
}
