//! Terminal styling through anstyle. Whether to colour is decided once per
//! stream (by `--color`, then anstream's reading of CLICOLOR_FORCE, NO_COLOR,
//! TERM=dumb, CLICOLOR and whether the stream is a terminal) and passed in.

use std::io::IsTerminal;

use anstyle::{AnsiColor, Color, Style as Anstyle};

use super::ColorChoice;

#[derive(Debug, Clone, Copy)]
pub struct Style(Anstyle);

const fn fg(c: AnsiColor) -> Anstyle {
    Anstyle::new().fg_color(Some(Color::Ansi(c)))
}

pub const ERROR: Style = Style(fg(AnsiColor::Red).bold());
pub const WARN: Style = Style(fg(AnsiColor::Yellow).bold());
pub const HINT: Style = Style(fg(AnsiColor::Cyan).bold());
pub const BOLD: Style = Style(Anstyle::new().bold());
pub const DIM: Style = Style(Anstyle::new().dimmed());
pub const GREEN: Style = Style(fg(AnsiColor::Green));
pub const RED: Style = Style(fg(AnsiColor::Red));
pub const CYAN: Style = Style(fg(AnsiColor::Cyan));
pub const YELLOW: Style = Style(fg(AnsiColor::Yellow));

/// `text` wrapped in the style's escape codes when `enabled`.
pub fn paint(enabled: bool, style: Style, text: &str) -> String {
    if enabled {
        format!("{}{text}{}", style.0.render(), style.0.render_reset())
    } else {
        text.to_string()
    }
}

/// A table cell painted only `when` its value calls for it (a loss in red,
/// the chosen row in green), as every human table marks its cells.
pub fn paint_if(enabled: bool, when: bool, style: Style, text: String) -> String {
    if when {
        paint(enabled, style, &text)
    } else {
        text
    }
}

/// Whether to colour `stream` under `--color`.
pub fn enabled(
    choice: ColorChoice,
    stream: &(impl anstream::stream::RawStream + IsTerminal),
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => anstream::AutoStream::choice(stream) != anstream::ColorChoice::Never,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_only_when_enabled() {
        assert_eq!(paint(false, ERROR, "x"), "x");
        let painted = paint(true, ERROR, "x");
        assert!(
            painted.starts_with('\x1b') && painted.ends_with("\x1b[0m"),
            "{painted:?}"
        );
        assert!(painted.contains("1m") && painted.contains("31m") && painted.contains('x'));
    }

    #[test]
    fn never_and_always_override_the_environment() {
        assert!(!enabled(ColorChoice::Never, &std::io::stdout()));
        assert!(enabled(ColorChoice::Always, &std::io::stdout()));
    }
}
