//! A task's title: the one its session recorded, else its first real ask.

use crate::engine::clean::{TitleText, normalise_whitespace, title_text};
use crate::model::Block;

const TITLE_MAX: usize = 120;

/// A task's title, one line of at most `TITLE_MAX` characters: the one its
/// session recorded, else its first real ask (the content of its ask rows,
/// in order; slash-command wrappers read as the command typed, client
/// notices skipped), else the first slash command it ran (`/init`).
pub(crate) fn title_of<'a>(
    recorded: Option<&str>,
    asks: impl IntoIterator<Item = &'a [Block]>,
) -> Option<String> {
    if let Some(title) = recorded.map(normalise_whitespace).filter(|s| !s.is_empty()) {
        return Some(cut(&title, TITLE_MAX));
    }
    let mut search = TitleSearch::default();
    for content in asks {
        if let Some(title) = search.offer(content) {
            return Some(title);
        }
    }
    search.finish()
}

/// A task's asks read in order for its title (see [`title_of`]), for a
/// caller that reads them one at a time.
#[derive(Default)]
pub(crate) struct TitleSearch {
    command: Option<String>,
}

impl TitleSearch {
    /// The title, once an ask holds a real one.
    pub(crate) fn offer(&mut self, content: &[Block]) -> Option<String> {
        for b in content {
            if let Block::Text { text } = b {
                match title_text(text) {
                    Some(TitleText::Ask(ask)) => return Some(cut(&ask, TITLE_MAX)),
                    Some(TitleText::Command(c)) => {
                        self.command.get_or_insert(c);
                    }
                    None => {}
                }
            }
        }
        None
    }

    /// After the last ask: the first slash command, when no real ask came.
    pub(crate) fn finish(self) -> Option<String> {
        self.command.map(|c| cut(&c, TITLE_MAX))
    }
}

/// `s` in at most `n` characters, an ellipsis marking a cut.
pub(super) fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}
