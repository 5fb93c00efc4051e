//! Text as a summary may quote it: terminal control sequences stripped, and
//! a user ask cut down to its request (the wrappers a client injects around
//! it taken off). Pure; shared by the summarizers' span and by `probe`.

use std::borrow::Cow;

/// The marker after which the Codex IDE extension puts the request itself.
const CODEX_REQUEST_MARKER: &str = "## My request for Codex:";
/// How the Codex IDE extension opens an ask.
const CODEX_IDE_CONTEXT: &str = "# Context from my IDE setup:";

/// Blocks a client injects into a user line around what the user typed.
const INJECTED_BLOCKS: [&str; 4] = [
    "system-reminder",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
];

/// Tags of a slash-command wrapper (`<command-name>/clear</command-name>`).
const COMMAND_TAGS: [&str; 3] = ["<command-name>", "<command-message>", "<command-args>"];

/// How a user line opens when the client wrote it and no one typed it: a
/// background task's notification, the echo of a local (`!`) command, a
/// hook's output.
const CLIENT_NOTICES: [&str; 8] = [
    "<task-notification>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
];

/// What a task's title may quote from a user line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TitleText {
    /// Words the user typed: the request, or a slash command with its arguments.
    Ask(String),
    /// A slash command without arguments (`/init`): a title only when the
    /// task holds no ask.
    Command(String),
}

/// A user line as a title may quote it, on one line: slash-command wrappers
/// read as the command the user typed, client notices are nothing, and any
/// other ask is cut to its request ([`request_text`]).
pub(crate) fn title_text(ask: &str) -> Option<TitleText> {
    let text = strip_controls(ask);
    let t = text.trim_start();
    if CLIENT_NOTICES.iter().any(|tag| t.starts_with(tag)) {
        return None;
    }
    if COMMAND_TAGS.iter().any(|tag| t.starts_with(tag)) {
        let name = normalise_whitespace(tag_text(t, "command-name")?);
        if name.is_empty() {
            return None;
        }
        let args = tag_text(t, "command-args").map(normalise_whitespace);
        return Some(match args.filter(|a| !a.is_empty()) {
            Some(args) => TitleText::Ask(format!("{name} {args}")),
            None => TitleText::Command(name),
        });
    }
    request_text(&text)
        .map(|r| normalise_whitespace(&r))
        .filter(|r| !r.is_empty())
        .map(TitleText::Ask)
}

/// The text of the first `<tag>…</tag>` in `s`.
fn tag_text<'s>(s: &'s str, tag: &str) -> Option<&'s str> {
    let open = format!("<{tag}>");
    let start = s.find(&open)? + open.len();
    let end = s[start..].find(&format!("</{tag}>"))?;
    Some(&s[start..start + end])
}

/// ANSI escape sequences (CSI, OSC and two-byte escapes) and every other
/// control character except line breaks and tabs removed; `\r\n` and a lone
/// `\r` become `\n`. Text without any comes back unchanged.
pub(crate) fn strip_controls(s: &str) -> String {
    stripped(s).into_owned()
}

/// [`strip_controls`] of a text already owned: handed back as it is when it
/// has none to strip.
pub(crate) fn strip_controls_owned(s: String) -> String {
    match stripped(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(out) => out,
    }
}

/// [`strip_controls`], borrowing the text when it has none to strip (a
/// large text is not copied to be read).
pub(crate) fn stripped(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    chars.next();
                    for n in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&n) {
                            break;
                        }
                    }
                }
                // OSC (and DCS, SOS, PM, APC strings): up to BEL or ESC \.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    while let Some(n) = chars.next() {
                        if n == '\u{7}' {
                            break;
                        }
                        if n == '\u{1b}' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                // A two-byte escape (`ESC c`, `ESC (B` reads as two).
                Some(_) => {
                    chars.next();
                }
                None => {}
            },
            '\u{9b}' => {
                for n in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&n) {
                        break;
                    }
                }
            }
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// What the user asked, with the client's wrappers taken off: `None` when
/// nothing the user typed is left (a slash-command wrapper, injected context
/// alone, a client's notice). A Codex IDE ask keeps only what follows `## My request for Codex:`;
/// `<system-reminder>` and IDE blocks are removed; controls are stripped.
pub(crate) fn request_text(ask: &str) -> Option<String> {
    request(ask).map(Cow::into_owned)
}

/// [`request_text`], borrowed from `ask` when nothing but its ends is
/// taken off it.
pub(crate) fn request(ask: &str) -> Option<Cow<'_, str>> {
    let text = stripped(ask);
    let t = text.trim_start();
    // A slash-command wrapper, or a notice the client wrote (a background
    // task's notification, a local command's echo): nobody asked it.
    if COMMAND_TAGS.iter().any(|tag| t.starts_with(tag))
        || CLIENT_NOTICES.iter().any(|tag| t.starts_with(tag))
    {
        return None;
    }
    // Copied only where something is taken out of it.
    let mut text: Cow<'_, str> = match text.find(CODEX_REQUEST_MARKER) {
        Some(at) => Cow::Owned(text[at + CODEX_REQUEST_MARKER.len()..].to_string()),
        None if t.starts_with(CODEX_IDE_CONTEXT) => return None,
        None => text,
    };
    for tag in INJECTED_BLOCKS {
        if let Cow::Owned(removed) = remove_blocks(&text, tag) {
            text = Cow::Owned(removed);
        }
    }
    if text.trim().is_empty() {
        return None;
    }
    Some(match text {
        Cow::Borrowed(t) => Cow::Borrowed(t.trim()),
        Cow::Owned(t) => Cow::Owned(t.trim().to_string()),
    })
}

/// `<tag ...>…</tag>` removed wherever it occurs (an unclosed one runs to
/// the end); the text borrowed when it holds no `<tag`.
fn remove_blocks<'t>(text: &'t str, tag: &str) -> Cow<'t, str> {
    let open = format!("<{tag}");
    if !text.contains(&open) {
        return Cow::Borrowed(text);
    }
    let close = format!("</{tag}>");
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(&open) {
        let after = &rest[at + open.len()..];
        if !after.starts_with(['>', ' ', '\n']) {
            out.push_str(&rest[..at + open.len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        rest = match after.find(&close) {
            Some(end) => &after[end + close.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Whitespace runs (line breaks included) become one space; ends trimmed.
pub(crate) fn normalise_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_runs_become_one_space_and_ends_are_trimmed() {
        assert_eq!(normalise_whitespace(" a\n\n b\u{a0}c\t"), "a b c");
        for s in [
            "",
            " \t\n",
            "a",
            "\r\nx  y\r\n",
            " é\u{3000}\u{85}ü \u{2028}z ",
        ] {
            let words: Vec<&str> = s.split_whitespace().collect();
            assert_eq!(normalise_whitespace(s), words.join(" "), "{s:?}");
        }
    }

    #[test]
    fn ansi_and_controls_are_stripped() {
        assert_eq!(
            strip_controls("\u{1b}[31m⎯⎯⎯ FAIL\u{1b}[39m src/a.test.ts\r\nok\u{7}"),
            "⎯⎯⎯ FAIL src/a.test.ts\nok"
        );
        assert_eq!(
            strip_controls("a\u{1b}]0;title\u{7}b\u{1b}]8;;http://x\u{1b}\\c"),
            "abc"
        );
        assert_eq!(strip_controls("tab\tand\nline"), "tab\tand\nline");
        assert_eq!(strip_controls("progress\r50%\r100%"), "progress\n50%\n100%");
    }

    #[test]
    fn a_codex_ide_ask_keeps_its_request() {
        let ask = "# Context from my IDE setup:\n\n## Active file: src/a.ts\n\n## Open tabs:\n- a.ts: src/a.ts\n\n## My request for Codex:\nCan you auto accept all changes for the rest of this session?\n";
        assert_eq!(
            request_text(ask).as_deref(),
            Some("Can you auto accept all changes for the rest of this session?")
        );
        assert_eq!(
            request_text("# Context from my IDE setup:\n## Open tabs:\n- a"),
            None
        );
    }

    #[test]
    fn slash_commands_are_not_asks() {
        let ask = "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>";
        assert_eq!(request_text(ask), None);
        assert_eq!(
            request_text(
                "<command-message>review</command-message>\n<command-name>/review</command-name>"
            ),
            None
        );
    }

    #[test]
    fn a_title_reads_a_slash_command_as_typed_and_skips_client_notices() {
        let ask = |s: &str| Some(TitleText::Ask(s.to_string()));
        assert_eq!(
            title_text(
                "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>create TODO app\n by Next.js</command-args>"
            ),
            ask("/orchestrator create TODO app by Next.js")
        );
        assert_eq!(
            title_text(
                "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>"
            ),
            Some(TitleText::Command("/clear".to_string()))
        );
        assert_eq!(
            title_text(
                "<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>"
            ),
            Some(TitleText::Command("/init".to_string()))
        );
        assert_eq!(
            title_text(
                "<task-notification>\n<task-id>b7636e2</task-id>\n<status>completed</status>\n<summary>Background command \"Run tests\" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result: /home/dev/.claude/tasks/x.output"
            ),
            None
        );
        assert_eq!(
            title_text("<local-command-stdout></local-command-stdout>"),
            None
        );
        assert_eq!(title_text("<bash-input>ls</bash-input>"), None);
        assert_eq!(
            title_text("<system-reminder>x</system-reminder>\n  fix   the\nbuild "),
            ask("fix the build")
        );
        assert_eq!(title_text("<command-name></command-name>"), None);
        assert_eq!(title_text("<command-args>x</command-args>"), None);
    }

    #[test]
    fn injected_blocks_are_removed_and_plain_asks_kept() {
        let ask = "<system-reminder>\nThe user opened x.\n</system-reminder>\nfix the build<ide_selection>lines 1-3</ide_selection>";
        assert_eq!(request_text(ask).as_deref(), Some("fix the build"));
        assert_eq!(
            request_text("  keep <system-reminderish> as typed ").as_deref(),
            Some("keep <system-reminderish> as typed")
        );
        assert_eq!(
            request_text("<system-reminder>only</system-reminder>"),
            None
        );
    }
}
