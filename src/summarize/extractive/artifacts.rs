//! The artifact trail: for every file a call wrote or edited, what changed
//! in it as definitions (added, changed, removed; `engine::defs`), and
//! whether the change was committed. A file's line in `## Deliverables`
//! reads
//!
//! ```text
//! - lib/render.ex: written (step 9); last edited (step 12); adds `render/2`, `group/1`; changes `mount/3`; removes `@max_lines`; committed 3f2a1bc
//! ```
//!
//! and parses back into a [`FileNote`], so the next fold merges into it.
//!
//! The file's text, when the span shows it (a write's content, a read's
//! numbered lines, an edit applied to a text already known), lets an edit
//! be compared whole: a change inside a function's body names that
//! function. An edit seen alone compares its old and new text only.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::defs::{DefChange, Lang, diff_snippets, diff_texts, enclosing};
use crate::engine::summarizer::ToolCall;
use crate::engine::toolfacts::strings_of;

/// Names a list shows before `+N more`.
const NAMES_SHOWN: usize = 8;
/// A name as a list shows it.
const NAME_MAX_CHARS: usize = 60;
/// Texts held per fold, so a span of huge files stays bounded (bytes).
const TEXT_MAX_BYTES: usize = 2 << 20;

/// One file's note in `## Deliverables`, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct FileNote {
    /// `written (step 9); last edited (step 12)`: how and when.
    pub history: String,
    pub added: Names,
    pub changed: Names,
    pub removed: Names,
    /// `committed 3f2a1bc` or `committed (step 30)`, when no edit came after.
    pub committed: Option<String>,
    /// The step of its latest write or edit.
    pub last_step: Option<u32>,
}

/// A list of definition names with how many more were left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Names {
    pub shown: Vec<String>,
    pub more: usize,
}

impl Names {
    fn contains(&self, name: &str) -> bool {
        self.shown.iter().any(|n| n == name)
    }

    fn remove(&mut self, name: &str) -> bool {
        let before = self.shown.len();
        self.shown.retain(|n| n != name);
        before != self.shown.len()
    }

    /// Adds a name at the end (the most recent), moving it there if held;
    /// past the cap, a test gives way first, else the oldest, to the count.
    fn push(&mut self, name: &str) {
        self.remove(name);
        self.shown.push(name.to_string());
        while self.shown.len() > NAMES_SHOWN {
            let at = self.shown.iter().position(|n| is_test(n)).unwrap_or(0);
            self.shown.remove(at);
            self.more += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.shown.is_empty() && self.more == 0
    }

    fn render(&self, verb: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = self.shown.iter().map(|n| format!("`{n}`")).collect();
        if self.more > 0 {
            parts.push(format!("+{} more", self.more));
        }
        Some(format!("{verb} {}", parts.join(", ")))
    }

    fn parse(list: &str) -> Names {
        let mut names = Names::default();
        for item in list.split(", ") {
            let item = item.trim();
            if let Some(n) = item
                .strip_prefix('+')
                .and_then(|r| r.strip_suffix(" more"))
                .and_then(|n| n.parse::<usize>().ok())
            {
                names.more += n;
            } else if let Some(name) = item.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
                names.shown.push(name.to_string());
            }
        }
        names
    }

    /// Keeps only the newest `keep` names, counting the rest.
    pub(super) fn shrink_to(&mut self, keep: usize) {
        if self.shown.len() > keep {
            let over = self.shown.len() - keep;
            self.shown.drain(..over);
            self.more += over;
        }
    }

    pub(super) fn len(&self) -> usize {
        self.shown.len()
    }
}

const ADDS: &str = "adds ";
const CHANGES: &str = "changes ";
const REMOVES: &str = "removes ";
const COMMITTED: &str = "committed";

impl FileNote {
    pub(super) fn parse(text: &str) -> FileNote {
        let mut note = FileNote::default();
        let mut history = Vec::new();
        for part in text.split("; ") {
            if let Some(list) = part.strip_prefix(ADDS) {
                note.added = Names::parse(list);
            } else if let Some(list) = part.strip_prefix(CHANGES) {
                note.changed = Names::parse(list);
            } else if let Some(list) = part.strip_prefix(REMOVES) {
                note.removed = Names::parse(list);
            } else if part.starts_with(COMMITTED) {
                note.committed = Some(part.to_string());
            } else {
                history.push(part);
            }
        }
        note.history = history.join("; ");
        note.last_step = last_step_of(&note.history);
        note
    }

    pub(super) fn render(&self) -> String {
        let mut parts = vec![self.history.clone()];
        parts.extend(self.added.render(ADDS.trim_end()));
        parts.extend(self.changed.render(CHANGES.trim_end()));
        parts.extend(self.removed.render(REMOVES.trim_end()));
        parts.extend(self.committed.clone());
        parts.join("; ")
    }

    /// A write or an edit at `step`: how it is logged, and what it did to
    /// the definitions, merged into what the note says.
    pub(super) fn record(&mut self, verb: &str, step: u32, change: &DefChange) {
        let entry = format!("{verb} (step {step})");
        self.history = match self.history.split("; last ").next() {
            Some(head) if !head.is_empty() => format!("{head}; last {entry}"),
            _ => entry,
        };
        self.last_step = Some(step);
        self.committed = None;
        for name in &change.added {
            let name = clip_name(name);
            if self.removed.remove(&name) {
                self.changed.push(&name);
            } else if !self.added.contains(&name) {
                self.added.push(&name);
            }
        }
        for name in &change.changed {
            let name = clip_name(name);
            // A definition this work added stays added; one it changed moves last.
            if !self.added.contains(&name) {
                self.changed.push(&name);
            }
        }
        for name in &change.removed {
            let name = clip_name(name);
            let was_new = self.added.remove(&name);
            self.changed.remove(&name);
            if !was_new {
                self.removed.push(&name);
            }
        }
    }

    /// A commit at `step` took this file's changes, if it was written before.
    pub(super) fn commit(&mut self, step: u32, hash: Option<&str>) {
        if self.last_step.is_some_and(|s| s < step) && self.committed.is_none() {
            self.committed = Some(match hash {
                Some(h) => format!("{COMMITTED} {h}"),
                None => format!("{COMMITTED} (step {step})"),
            });
        }
    }
}

/// A test's definition (`fn test_parse`, `mod tests`, `TestRenderer`,
/// `describe …`): the first to give way in a list.
fn is_test(name: &str) -> bool {
    let last = name.rsplit([' ', ':', '.', '#']).next().unwrap_or(name);
    let lower = last.to_ascii_lowercase();
    lower.starts_with("test") || lower.ends_with("_test") || lower.ends_with("test")
}

fn clip_name(name: &str) -> String {
    let flat: String = name
        .chars()
        .map(|c| if c.is_control() || c == '`' { ' ' } else { c })
        .collect();
    let flat = flat.replace("; ", ", ");
    match flat.char_indices().nth(NAME_MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// The last `(step N)` of a history.
fn last_step_of(history: &str) -> Option<u32> {
    let at = history.rfind("(step ")?;
    let digits: String = history[at + 6..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A file's text as the span shows it: whole, or only the lines a read
/// showed (enough to find the definition around an edit, not to compare).
struct Known {
    text: String,
    whole: bool,
}

/// The files' texts as this fold's span shows them.
#[derive(Default)]
pub(super) struct FileTexts {
    texts: BTreeMap<String, Known>,
    bytes: usize,
}

impl FileTexts {
    fn set(&mut self, path: &str, text: String, whole: bool) {
        self.forget(path);
        if self.bytes + text.len() <= TEXT_MAX_BYTES {
            self.bytes += text.len();
            self.texts.insert(path.to_string(), Known { text, whole });
        }
    }

    /// A read's numbered lines (`    12→text`, `12\ttext`) become the file's
    /// known text: the whole file when read from its first line, else the
    /// lines shown (enough to find the definition around an edit).
    pub(super) fn observe(&mut self, call: &ToolCall) {
        if call.is_error || !matches!(call.name.as_str(), "Read" | "read" | "view") {
            return;
        }
        let Some(path) = field(&call.input, &["file_path", "filePath", "path"]) else {
            return;
        };
        if Lang::of_path(path).is_none() {
            return;
        }
        let mut lines = Vec::new();
        let mut first = None;
        for line in call.output.lines() {
            match numbered(line) {
                Some((n, text)) => {
                    first.get_or_insert(n);
                    lines.push(text);
                }
                None if lines.is_empty() => continue,
                None => break,
            }
        }
        let ranged = ["offset", "limit"].iter().any(|k| {
            call.input
                .get(*k)
                .is_some_and(|v| !v.is_null() && v != 1 && v != 0)
        });
        if !lines.is_empty() {
            self.set(path, lines.join("\n"), first == Some(1) && !ranged);
        }
    }

    /// What a successful call wrote, per path, with what it did to the
    /// definitions; the known texts follow the change.
    pub(super) fn changes(&mut self, call: &ToolCall) -> Vec<(String, &'static str, DefChange)> {
        let input = &call.input;
        let path = field(input, &["file_path", "filePath", "path", "notebook_path"]);
        match call.name.as_str() {
            "Write" | "write" | "write_file" | "create_file" => {
                let (Some(path), Some(content)) =
                    (path, field(input, &["content", "file_text", "text"]))
                else {
                    return self.patches(call);
                };
                vec![self.whole(path, "written", content)]
            }
            "Edit" | "edit" | "edit_file" => {
                let Some(path) = path else {
                    return Vec::new();
                };
                let pair = (
                    field(input, &["old_string", "oldString", "old_str"]),
                    field(input, &["new_string", "newString", "new_str"]),
                );
                let (Some(old), Some(new)) = pair else {
                    return vec![(path.to_string(), "edited", DefChange::default())];
                };
                vec![self.replace(path, &[(old, new)])]
            }
            "MultiEdit" => {
                let Some(path) = path else {
                    return Vec::new();
                };
                let edits: Vec<(&str, &str)> = input
                    .get("edits")
                    .and_then(Value::as_array)
                    .map(|edits| {
                        edits
                            .iter()
                            .filter_map(|e| {
                                Some((
                                    e.get("old_string")?.as_str()?,
                                    e.get("new_string")?.as_str()?,
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                vec![self.replace(path, &edits)]
            }
            "str_replace_based_edit_tool" | "str_replace_editor" => {
                let Some(path) = path else {
                    return Vec::new();
                };
                match input.get("command").and_then(Value::as_str) {
                    Some("create") => {
                        let content = field(input, &["file_text"]).unwrap_or_default();
                        vec![self.whole(path, "created", content)]
                    }
                    Some("str_replace") => {
                        let old = field(input, &["old_str"]).unwrap_or_default();
                        let new = field(input, &["new_str"]).unwrap_or_default();
                        vec![self.replace(path, &[(old, new)])]
                    }
                    Some("insert") => {
                        let new = field(input, &["new_str"]).unwrap_or_default();
                        let change = Lang::of_path(path)
                            .map(|l| diff_snippets(l, "", new))
                            .unwrap_or_default();
                        self.forget(path);
                        vec![(path.to_string(), "edited", change)]
                    }
                    _ => Vec::new(),
                }
            }
            _ => self.patches(call),
        }
    }

    fn forget(&mut self, path: &str) {
        if let Some(old) = self.texts.remove(path) {
            self.bytes -= old.text.len();
        }
    }

    /// A whole new text for `path`: compared with the known one; a file
    /// never seen is new, every definition added. Over a file seen only in
    /// part, only what the part showed and the new text lacks is known
    /// (removed): it was rewritten.
    fn whole(
        &mut self,
        path: &str,
        verb: &'static str,
        content: &str,
    ) -> (String, &'static str, DefChange) {
        let mut verb = verb;
        let change = match (Lang::of_path(path), self.texts.get(path)) {
            (Some(lang), None) => diff_texts(lang, "", content),
            (Some(lang), Some(k)) if k.whole => diff_texts(lang, &k.text, content),
            (Some(lang), Some(k)) => {
                verb = "rewritten";
                let mut c = diff_texts(lang, &k.text, content);
                c.added.clear();
                c.changed.clear();
                c
            }
            (None, _) => DefChange::default(),
        };
        self.set(path, content.to_string(), true);
        (path.to_string(), verb, change)
    }

    /// Replacements applied in order: against the known text when each
    /// one's old string is in it, else each compared alone.
    fn replace(&mut self, path: &str, edits: &[(&str, &str)]) -> (String, &'static str, DefChange) {
        let Some(lang) = Lang::of_path(path) else {
            return (path.to_string(), "edited", DefChange::default());
        };
        let known = self.texts.get(path).map(|k| (k.text.clone(), k.whole));
        if let Some((before, whole_text)) = known {
            let mut after = before.clone();
            let mut whole = true;
            let mut touched_lines = Vec::new();
            for (old, new) in edits {
                match after.find(old).filter(|_| !old.is_empty()) {
                    Some(at) => {
                        touched_lines.push(after[..at].matches('\n').count());
                        after.replace_range(at..at + old.len(), new);
                    }
                    None => whole = false,
                }
            }
            if whole {
                // A text seen only in part: what the edit's own text says,
                // and the definition around it.
                let mut change = if whole_text {
                    diff_texts(lang, &before, &after)
                } else {
                    let mut c = DefChange::default();
                    for (old, new) in edits {
                        let one = diff_snippets(lang, old, new);
                        c.added.extend(one.added);
                        c.changed.extend(one.changed);
                        c.removed.extend(one.removed);
                    }
                    c
                };
                if change.is_empty() {
                    // A change in no definition's own text: name the one around it.
                    for line in touched_lines {
                        if let Some(name) = enclosing(lang, &after, line) {
                            change.changed.push(name);
                        }
                    }
                    change.changed.dedup();
                }
                self.set(path, after, whole_text);
                return (path.to_string(), "edited", change);
            }
            self.forget(path);
        }
        let mut change = DefChange::default();
        for (old, new) in edits {
            let one = diff_snippets(lang, old, new);
            change.added.extend(one.added);
            change.changed.extend(one.changed);
            change.removed.extend(one.removed);
        }
        (path.to_string(), "edited", change)
    }

    /// Codex `apply_patch` (in any string of the input): each file's hunks,
    /// their `-` and `+` lines compared, and the `@@` line naming the
    /// definition a hunk is in.
    fn patches(&mut self, call: &ToolCall) -> Vec<(String, &'static str, DefChange)> {
        let mut out = Vec::new();
        for s in strings_of(&call.input).filter(|s| s.contains("*** Begin Patch")) {
            for file in parse_patch(s) {
                let Some(lang) = Lang::of_path(&file.path) else {
                    out.push((file.path, file.verb, DefChange::default()));
                    continue;
                };
                let change = match file.verb {
                    "created" => diff_texts(lang, "", &file.new),
                    "deleted" => DefChange::default(),
                    _ => {
                        let mut c = diff_snippets(lang, &file.old, &file.new);
                        for header in &file.headers {
                            if let Some(d) = crate::engine::defs::definitions(lang, header).first()
                                && !c.added.contains(&d.name)
                                && !c.changed.contains(&d.name)
                                && !c.removed.contains(&d.name)
                            {
                                c.changed.push(d.name.clone());
                            }
                        }
                        c
                    }
                };
                self.forget(&file.path);
                out.push((file.path, file.verb, change));
            }
        }
        out
    }
}

fn field<'a>(input: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
}

/// `    12→text` (Claude Code's Read) or `    12\ttext`: the number and the text.
fn numbered(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start();
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let n = t[..digits].parse().ok()?;
    let rest = &t[digits..];
    let text = rest.strip_prefix('→').or_else(|| rest.strip_prefix('\t'))?;
    Some((n, text))
}

struct PatchFile {
    path: String,
    verb: &'static str,
    old: String,
    new: String,
    headers: Vec<String>,
}

fn parse_patch(patch: &str) -> Vec<PatchFile> {
    let mut files: Vec<PatchFile> = Vec::new();
    for line in patch.lines() {
        let op = [
            ("*** Add File: ", "created"),
            ("*** Update File: ", "edited"),
            ("*** Delete File: ", "deleted"),
        ]
        .into_iter()
        .find_map(|(prefix, verb)| line.strip_prefix(prefix).map(|p| (p.trim(), verb)));
        if let Some((path, verb)) = op {
            files.push(PatchFile {
                path: path.to_string(),
                verb,
                old: String::new(),
                new: String::new(),
                headers: Vec::new(),
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if line.starts_with("***") {
            continue;
        }
        if let Some(header) = line.strip_prefix("@@") {
            let header = header.trim();
            if !header.is_empty() {
                file.headers.push(header.to_string());
            }
        } else if let Some(l) = line.strip_prefix('-') {
            file.old.push_str(l);
            file.old.push('\n');
        } else if let Some(l) = line.strip_prefix('+') {
            file.new.push_str(l);
            file.new.push('\n');
        } else if let Some(l) = line.strip_prefix(' ') {
            // Context: in both, so a definition around the change is in both.
            file.old.push_str(l);
            file.old.push('\n');
            file.new.push_str(l);
            file.new.push('\n');
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, input: Value, output: &str) -> ToolCall<'static> {
        ToolCall {
            step: 3,
            id: "c".into(),
            name: name.into(),
            input: std::borrow::Cow::Owned(input),
            output: output.to_string().into(),
            is_error: false,
            interrupted: false,
        }
    }

    #[test]
    fn an_edit_inside_a_read_function_names_that_function() {
        let mut texts = FileTexts::default();
        texts.observe(&call(
            "Read",
            json!({"file_path": "/r/lib/a.ex"}),
            "     1→defmodule A do\n     2→  def f(x) do\n     3→    x + 1\n     4→  end\n     5→end\n",
        ));
        let got = texts.changes(&call(
            "Edit",
            json!({"file_path": "/r/lib/a.ex", "old_string": "x + 1", "new_string": "x + 2"}),
            "ok",
        ));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].2.changed, ["f/1"]);
        // Seen alone, an edit in no definition's text names none.
        let mut cold = FileTexts::default();
        let got = cold.changes(&call(
            "Edit",
            json!({"file_path": "/r/lib/b.ex", "old_string": "x + 1", "new_string": "x + 2"}),
            "ok",
        ));
        assert!(got[0].2.is_empty());
    }

    #[test]
    fn a_patch_names_its_files_definitions() {
        let patch = "*** Begin Patch\n*** Add File: src/new.rs\n+pub fn hello() {}\n*** Update File: src/main.rs\n@@ fn main() {\n-    old();\n+    new();\n*** End Patch";
        let mut texts = FileTexts::default();
        let got = texts.changes(&call("apply_patch", json!({"input": patch}), ""));
        assert_eq!(got[0].0, "src/new.rs");
        assert_eq!(got[0].2.added, ["fn hello"]);
        assert_eq!(got[1].0, "src/main.rs");
        assert_eq!(got[1].2.changed, ["fn main"]);
    }

    #[test]
    fn a_note_merges_and_parses_back() {
        let mut note = FileNote::default();
        note.record(
            "written",
            9,
            &DefChange {
                added: vec!["render/2".into(), "group/1".into()],
                ..Default::default()
            },
        );
        note.record(
            "edited",
            12,
            &DefChange {
                changed: vec!["render/2".into(), "mount/3".into()],
                removed: vec!["group/1".into(), "@max".into()],
                ..Default::default()
            },
        );
        note.commit(20, Some("3f2a1bc"));
        let text = note.render();
        assert_eq!(
            text,
            "written (step 9); last edited (step 12); adds `render/2`; changes `mount/3`; removes `@max`; committed 3f2a1bc"
        );
        assert_eq!(FileNote::parse(&text), note);
        note.record("edited", 25, &DefChange::default());
        assert_eq!(note.committed, None);
    }
}
