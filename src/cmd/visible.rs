//! Transcript text on a terminal: control characters (escape sequences that
//! could move the cursor, retitle the window, clear the screen, hide text...)
//! are shown as visible escapes (`\u{1b}`) instead of being sent raw. Human
//! outputs (show, export markdown to stdout, diff, reports, warnings and
//! errors) go through here; JSON outputs keep the bytes exact, since JSON
//! escapes control characters itself.

use std::borrow::Cow;

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if c.is_control() && !keep(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text of several lines: newlines and tabs are kept, every other control
/// character (C0, DEL, C1) is escaped.
pub fn visible(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

/// One line (a path, a name): newlines are escaped too.
pub fn visible_line(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\t')
}

/// Bytes meant for a terminal: valid UTF-8 is escaped as [`visible`]; bytes
/// that are not UTF-8 are shown lossily.
pub fn visible_bytes(b: &[u8]) -> Vec<u8> {
    visible(&String::from_utf8_lossy(b))
        .into_owned()
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible_and_the_rest_is_kept() {
        assert!(matches!(
            visible("plain\ttext\nünïcode ✓"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            visible("a\u{1b}[31mred\u{1b}]0;t\u{7}\r\u{9b}2J\u{7f}\n"),
            "a\\u{1b}[31mred\\u{1b}]0;t\\u{7}\\u{d}\\u{9b}2J\\u{7f}\n"
        );
        assert_eq!(visible_line("new\nline"), "new\\u{a}line");
        assert_eq!(visible_bytes(b"x\x1by\xff"), "x\\u{1b}y\u{fffd}".as_bytes());
    }
}
