//! ANSI styling for terminal output. Colour is decided once (by `--color`,
//! NO_COLOR and whether the stream is a terminal) and passed in as a flag.

#[derive(Debug, Clone, Copy)]
pub struct Style(&'static str);

pub const ERROR: Style = Style("1;31");
pub const WARN: Style = Style("1;33");
pub const BOLD: Style = Style("1");
pub const DIM: Style = Style("2");
pub const GREEN: Style = Style("32");
pub const RED: Style = Style("31");
pub const CYAN: Style = Style("36");
pub const YELLOW: Style = Style("33");

/// `text` wrapped in the style's escape codes when `enabled`.
pub fn paint(enabled: bool, style: Style, text: &str) -> String {
    if enabled {
        format!("\x1b[{}m{text}\x1b[0m", style.0)
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_only_when_enabled() {
        assert_eq!(paint(false, ERROR, "x"), "x");
        assert_eq!(paint(true, ERROR, "x"), "\x1b[1;31mx\x1b[0m");
    }
}
