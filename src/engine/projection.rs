//! Project parts back into messages: always a legal Messages request.

use super::parts::{NO_RESULT_TEXT, Part, PartBody, Side, SummaryHead, summary_block_text};
use crate::model::{Block, ToolContent};
use crate::view::text::block_text;
use crate::view::{StreamHash, View, ViewMessage, ViewRole};

/// What projection had to add to keep the view legal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProjectionStats {
    /// Tool calls without a recorded result, answered by a marked synthetic result.
    pub synthetic_results: u32,
}

/// The whole view when the history has nothing a request can carry.
pub(crate) const EMPTY_TEXT: &str = "[compactor: the history has no content yet]";

/// Stands first when a history would otherwise open with the assistant.
pub(crate) const OPENING_TEXT: &str = "[compactor: the history starts with an assistant message]";

pub(crate) fn project(parts: &[Part]) -> (View, ProjectionStats) {
    let mut p = Projector::default();
    p.run(parts);
    (View { messages: p.msgs }, p.stats)
}

/// [`project`] of parts given up: each block is moved into the view rather
/// than copied (the same view).
pub(crate) fn project_owned(parts: Vec<Part>) -> (View, ProjectionStats) {
    let mut p = Projector::default();
    for part in parts {
        p.part_owned(part);
    }
    p.end();
    (View { messages: p.msgs }, p.stats)
}

/// The blocks `parts` add to a view that already holds the projection of
/// the parts before them, when those end at a generation's end (no
/// generation on both sides): the whole history's blocks are the earlier
/// parts' then these, role for role (how they group into messages aside).
/// No opening or empty-history placeholder is added.
pub(crate) fn project_continued(parts: &[Part]) -> (View, ProjectionStats) {
    let mut p = Projector {
        continues: true,
        ..Projector::default()
    };
    p.run(parts);
    (View { messages: p.msgs }, p.stats)
}

/// [`project`]'s view hashed as it is projected, never held whole: a
/// message is hashed and dropped as soon as the next one starts (only the
/// last message can still grow). The same hash as the projected view's
/// [`View::hash`], with its number of messages and the stats.
pub(crate) fn project_hashed(parts: &[Part]) -> (String, usize, ProjectionStats) {
    let mut p = HashedProjection::default();
    for part in parts {
        p.push(part);
    }
    p.finish()
}

/// [`project_hashed`] fed one part at a time: the parts need not be held.
pub(crate) struct HashedProjection(Projector);

impl Default for HashedProjection {
    fn default() -> HashedProjection {
        HashedProjection(Projector {
            hashed: Some(StreamHash::default()),
            ..Projector::default()
        })
    }
}

impl HashedProjection {
    /// Project the next part (its messages are hashed once final).
    pub(crate) fn push(&mut self, part: &Part) {
        self.0.part(part);
    }

    /// The hash, the number of messages and the stats, after the last part.
    pub(crate) fn finish(mut self) -> (String, usize, ProjectionStats) {
        let p = &mut self.0;
        p.end();
        let mut h = p.hashed.take().unwrap_or_default();
        for m in &p.msgs {
            h.push(m);
        }
        let n = h.messages();
        (h.finish(), n, p.stats)
    }
}

impl Projector {
    fn run(&mut self, parts: &[Part]) {
        for part in parts {
            self.part(part);
        }
        self.end();
    }

    /// Project the next part: its body copied, a summary's read in place.
    fn part(&mut self, part: &Part) {
        match &part.body {
            PartBody::Summary(head) => self.summary(head),
            body => self.body(part.generation, body.clone()),
        }
    }

    /// [`Projector::part`] of a part given up: its blocks moved, not copied.
    fn part_owned(&mut self, part: Part) {
        self.body(part.generation, part.body);
    }

    fn summary(&mut self, head: &SummaryHead) {
        self.user(Block::Text {
            text: summary_block_text(&head.text),
        });
    }

    /// Project a part's body, its blocks moved into the view.
    fn body(&mut self, generation: Option<u32>, body: PartBody) {
        let p = self;
        match body {
            PartBody::Summary(head) => p.summary(&head),
            PartBody::Block {
                side: Side::User,
                block,
            } => p.user(view_block(block)),
            PartBody::Block {
                side: Side::Assistant,
                block,
            } => p.assistant(generation, view_block(block)),
            PartBody::Tool {
                id,
                name,
                input,
                output,
            } => {
                let result = match output {
                    Some(o) => Block::ToolResult {
                        tool_use_id: id.clone(),
                        content: non_empty(o.content),
                        is_error: o.is_error,
                    },
                    None => {
                        p.stats.synthetic_results += 1;
                        Block::ToolResult {
                            tool_use_id: id.clone(),
                            content: ToolContent::Text(NO_RESULT_TEXT.to_string()),
                            is_error: true,
                        }
                    }
                };
                // The call first: its message may flush the results owed.
                p.assistant(generation, Block::ToolUse { id, name, input });
                p.pending.push(result);
            }
        }
    }

    /// After the last part.
    fn end(&mut self) {
        let p = self;
        p.flush();
        if p.msgs.is_empty() && !p.continues {
            // A request needs a message even when the history has no content yet.
            p.user(Block::Text {
                text: EMPTY_TEXT.to_string(),
            });
        }
    }
}

#[derive(Default)]
struct Projector {
    /// The view's messages; with `hashed`, only the last one (the others are
    /// final and hashed).
    msgs: Vec<ViewMessage>,
    /// Where final messages go when the view is not kept.
    hashed: Option<StreamHash>,
    /// Results owed by the last assistant message; they open the next user message.
    pending: Vec<Block>,
    last_generation: Option<u32>,
    stats: ProjectionStats,
    /// Messages precede these (see [`project_continued`]).
    continues: bool,
}

impl Projector {
    /// Start a message: the last one is final from here on.
    fn push(&mut self, m: ViewMessage) {
        if let Some(h) = &mut self.hashed
            && let Some(done) = self.msgs.pop()
        {
            h.push(&done);
        }
        self.msgs.push(m);
    }

    fn last_role(&self) -> Option<ViewRole> {
        self.msgs.last().map(|m| m.role)
    }

    fn user(&mut self, b: Block) {
        if self.last_role() == Some(ViewRole::User) {
            self.msgs.last_mut().expect("checked").content.push(b);
        } else {
            let mut content = std::mem::take(&mut self.pending);
            content.push(b);
            self.push(ViewMessage {
                role: ViewRole::User,
                content,
            });
        }
    }

    fn assistant(&mut self, generation: Option<u32>, b: Block) {
        match self.last_role() {
            Some(ViewRole::Assistant)
                if self.pending.is_empty() || self.last_generation == generation =>
            {
                // Same generation, or two generations with nothing between them:
                // one assistant message either way keeps roles alternating.
                self.msgs.last_mut().expect("checked").content.push(b);
            }
            Some(ViewRole::Assistant) => {
                self.flush();
                self.push_assistant(b);
            }
            Some(ViewRole::User) => self.push_assistant(b),
            None if self.continues => self.push_assistant(b),
            None => {
                self.push(ViewMessage {
                    role: ViewRole::User,
                    content: vec![Block::Text {
                        text: OPENING_TEXT.to_string(),
                    }],
                });
                self.push_assistant(b);
            }
        }
        self.last_generation = generation;
    }

    fn push_assistant(&mut self, b: Block) {
        self.push(ViewMessage {
            role: ViewRole::Assistant,
            content: vec![b],
        });
    }

    /// Owed results become their own user message.
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let content = std::mem::take(&mut self.pending);
            self.push(ViewMessage {
                role: ViewRole::User,
                content,
            });
        }
    }
}

/// Blocks a view may carry; anything else is shown as text.
fn view_block(b: Block) -> Block {
    match b {
        Block::Other(_) => Block::Text {
            text: block_text(&b),
        },
        other => other,
    }
}

/// A tool's output as a view carries it: blank text blocks left out, and
/// an output with nothing left says so.
fn non_empty(c: ToolContent) -> ToolContent {
    match c {
        ToolContent::Text(s) if s.trim().is_empty() => ToolContent::Text("(no output)".to_string()),
        ToolContent::Blocks(bs) if bs.is_empty() => ToolContent::Text("(no output)".to_string()),
        ToolContent::Blocks(bs) => {
            let kept: Vec<Block> = bs
                .into_iter()
                .filter(|b| !matches!(b, Block::Text { text } if text.trim().is_empty()))
                .map(view_block)
                .collect();
            if kept.is_empty() {
                ToolContent::Text("(no output)".to_string())
            } else {
                ToolContent::Blocks(kept)
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty history projects to one placeholder message, hashed the
    /// same whether the view is kept or not.
    #[test]
    fn an_empty_history_hashes_the_same_unkept() {
        let (view, stats) = project(&[]);
        let (hash, messages, hashed_stats) = project_hashed(&[]);
        assert_eq!(messages, 1);
        assert_eq!(view.messages.len(), 1);
        assert_eq!(hash, view.hash());
        assert_eq!(hashed_stats, stats);
    }

    /// Parts given up project to the view their copies project to, in
    /// every order: summaries, blocks of both sides and of other types,
    /// tool calls with and without results (empty, whitespace, blocks),
    /// generations that follow one another.
    #[test]
    fn parts_given_up_project_to_the_same_view() {
        use super::super::parts::{PartState, SummaryHead, ToolOutput};
        use serde_json::json;
        let part = |generation: Option<u32>, body: PartBody| Part {
            address: String::new(),
            turn: 1,
            step: 1,
            generation,
            kind: crate::model::Kind::Ask,
            body,
            state: PartState::Raw,
            tokens: 1,
            raw_input: None,
            raw_output: None,
        };
        let block = |side, block| PartBody::Block { side, block };
        let text = |t: &str| Block::Text { text: t.into() };
        let tool = |id: &str, output: Option<ToolContent>| PartBody::Tool {
            id: id.into(),
            name: "Bash".into(),
            input: json!({"command": id}),
            output: output.map(|content| ToolOutput {
                content,
                is_error: id.ends_with('e'),
            }),
        };
        let parts = vec![
            part(
                None,
                PartBody::Summary(SummaryHead {
                    text: "## Task Context".into(),
                    coverage: [1; 32],
                    covers: 2,
                    summarizer: "s".into(),
                    minted_at: (1, 1),
                }),
            ),
            part(None, block(Side::User, text("ask"))),
            part(
                None,
                block(Side::User, Block::Other(json!({"type": "doc", "x": 1}))),
            ),
            part(
                Some(1),
                block(
                    Side::Assistant,
                    Block::Thinking {
                        thinking: "hm".into(),
                        signature: Some("s".into()),
                    },
                ),
            ),
            part(Some(1), tool("t1", Some(ToolContent::Text("out".into())))),
            part(Some(1), tool("t2e", Some(ToolContent::Text(" \n".into())))),
            part(Some(2), tool("t3", None)),
            part(Some(2), tool("t4", Some(ToolContent::Blocks(vec![])))),
            part(
                Some(3),
                tool(
                    "t5",
                    Some(ToolContent::Blocks(vec![
                        text(" "),
                        text("kept"),
                        Block::Other(json!({"type": "doc"})),
                    ])),
                ),
            ),
            part(
                Some(3),
                tool("t6", Some(ToolContent::Blocks(vec![text("")]))),
            ),
            part(Some(4), block(Side::Assistant, text("answer"))),
            part(Some(5), block(Side::Assistant, text("again"))),
            part(None, block(Side::User, text("next"))),
        ];
        for k in 0..parts.len() {
            let mut some = parts.clone();
            some.rotate_left(k);
            for n in 0..=some.len() {
                let copied = project(&some[..n]);
                let taken = project_owned(some[..n].to_vec());
                assert_eq!(taken.0, copied.0, "rotated {k}, {n} parts");
                assert_eq!(taken.1, copied.1, "rotated {k}, {n} parts");
            }
        }
    }
}
