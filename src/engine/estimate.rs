//! Token estimation. Pluggable; the default is the seed's chars/4.
//!
//! Integer arithmetic only: an estimate reaches reports and budgets, so it must
//! be the same on every machine.

use crate::model::{Block, ToolContent};

/// Estimates tokens for content the provider has not counted yet.
pub trait Estimator {
    fn text(&self, s: &str) -> u64;

    /// An image in a prompt. Providers charge by pixels; a flat figure keeps
    /// estimates deterministic without decoding the image.
    fn image(&self) -> u64 {
        1_600
    }

    /// A name for reports (`chars/4`).
    fn name(&self) -> String;
}

/// `ceil(chars / n)`, counting Unicode scalar values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CharsPerToken(pub u32);

impl Default for CharsPerToken {
    fn default() -> Self {
        CharsPerToken(4)
    }
}

impl Estimator for CharsPerToken {
    fn text(&self, s: &str) -> u64 {
        let chars = s.chars().count() as u64;
        chars.div_ceil(u64::from(self.0.max(1)))
    }

    fn name(&self) -> String {
        format!("chars/{}", self.0)
    }
}

/// Tokens of one block as it would be sent. Thinking signatures are opaque
/// and not counted as prompt text.
pub fn block_tokens(est: &dyn Estimator, b: &Block) -> u64 {
    match b {
        Block::Text { text } => est.text(text),
        Block::Thinking { thinking, .. } => est.text(thinking),
        Block::RedactedThinking { .. } => 0,
        Block::ToolUse { name, input, .. } => {
            est.text(name) + est.text(&serde_json::to_string(input).unwrap_or_default())
        }
        Block::ToolResult { content, .. } => tool_content_tokens(est, content),
        Block::Image { .. } => est.image(),
        Block::Other(v) => est.text(&serde_json::to_string(v).unwrap_or_default()),
    }
}

pub fn tool_content_tokens(est: &dyn Estimator, c: &ToolContent) -> u64 {
    match c {
        ToolContent::Text(s) => est.text(s),
        ToolContent::Blocks(bs) => bs.iter().map(|b| block_tokens(est, b)).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars_over_four_rounds_up_and_counts_scalars() {
        let e = CharsPerToken::default();
        assert_eq!(e.text(""), 0);
        assert_eq!(e.text("abcd"), 1);
        assert_eq!(e.text("abcde"), 2);
        assert_eq!(e.text("éééé"), 1, "four scalars, eight bytes");
    }
}
