//! The raw history's measures without its content: what [`RawMeasure`]
//! needs of each part (its step, generation, tokens and, for a tool call,
//! its output's tokens), built row by row exactly as
//! [`super::parts::PartsBuilder`] builds the parts, but keeping no block,
//! input or output. Measuring a long history so costs a few words per part
//! instead of a second copy of every block.

use std::collections::HashMap;

use super::RawMeasure;
use super::estimate::{Estimator, block_tokens, tool_content_tokens};
use super::parts::{NO_RESULT_TEXT, ToolCalls};
use crate::model::{Block, Message, Role};
use crate::view::text::tool_content_text;

/// A part as the measures see it.
#[derive(Debug, Clone, Copy)]
struct PartMeasure {
    step: u32,
    generation: Option<u32>,
    tokens: u64,
    class: Class,
}

#[derive(Debug, Clone, Copy)]
enum Class {
    /// A tool call: the tokens of its name and input, and of its output once
    /// a result joined it.
    Tool {
        base: u64,
        output: Option<u64>,
    },
    User,
    Assistant,
}

/// Feeds rows in order; measures the parts they make so far. Mirrors
/// `PartsBuilder::push` rule for rule (a property test holds the two to the
/// same measures).
///
/// Measures are taken call after call, so the parts before the previous
/// call's step are never walked again and can be forgotten
/// ([`MeasureBuilder::forget_before`]): of each forgotten tool call still
/// waiting for its result it keeps what the result will change.
#[derive(Default)]
pub struct MeasureBuilder {
    /// The parts from `offset` on.
    parts: Vec<PartMeasure>,
    /// Tool call id → the index of its part among all parts made (shared
    /// with a parts builder fed the same record: the part indices agree).
    tool_index: ToolCalls,
    total: u64,
    last_generation: u32,
    /// `step_max[i - offset]`: the largest `step` of parts `..=i`.
    step_max: Vec<u32>,
    /// How many parts were forgotten from the front.
    offset: usize,
    /// Forgotten tool calls with no result yet, by part index: their
    /// `base` and tokens (a forgotten call not here has its result).
    waiting: HashMap<usize, (u64, u64)>,
}

impl MeasureBuilder {
    /// The tool call ids it looks its calls up in.
    pub fn tool_calls(&self) -> &ToolCalls {
        &self.tool_index
    }

    pub fn push(&mut self, m: &Message, est: &dyn Estimator) {
        if m.role == Role::Meta || !m.kind.reaches_view() {
            return;
        }
        let assistant = m.role == Role::Assistant;
        let generation = assistant.then_some(m.step);
        let side = if assistant {
            Class::Assistant
        } else {
            Class::User
        };
        for block in &m.content {
            match block {
                b if super::parts::leaves_no_part(b) => {}
                Block::ToolUse { id, name, input } if assistant => {
                    let input = serde_json::to_string(input).unwrap_or_default();
                    if !self
                        .tool_index
                        .first_call(id, self.offset + self.parts.len())
                    {
                        let text = format!("[tool call {name} reused id {id}; input: {input}]");
                        self.add(m, generation, est.text(&text), Class::Assistant);
                        continue;
                    }
                    let base = est.text(name) + est.text(&input);
                    let class = Class::Tool { base, output: None };
                    self.add(m, generation, base + est.text(NO_RESULT_TEXT), class);
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    let made = self.offset + self.parts.len();
                    if let Some(i) = self.tool_index.get(tool_use_id, made) {
                        if let Some(j) = i.checked_sub(self.offset) {
                            if let Class::Tool { base, output } = &mut self.parts[j].class
                                && output.is_none()
                            {
                                let o = tool_content_tokens(est, content);
                                *output = Some(o);
                                let tokens = *base + o;
                                self.total = self.total - self.parts[j].tokens + tokens;
                                self.parts[j].tokens = tokens;
                                continue;
                            }
                        } else if let Some((base, tokens)) = self.waiting.remove(&i) {
                            let o = tool_content_tokens(est, content);
                            self.total = self.total - tokens + base + o;
                            continue;
                        }
                    }
                    let text = format!(
                        "[tool result for {tool_use_id}, whose call is not in this history]\n{}",
                        tool_content_text(content)
                    );
                    self.add(m, None, est.text(&text), Class::User);
                }
                other => self.add(m, generation, block_tokens(est, other), side),
            }
        }
    }

    /// Forget the parts no measure with a previous call at or after
    /// `previous` walks (those before the previous call's step). Measures
    /// taken after this must not go back before `previous`.
    pub fn forget_before(&mut self, previous: u32) {
        let n = self.step_max.partition_point(|&s| s < previous);
        for (j, p) in self.parts.drain(..n).enumerate() {
            if let Class::Tool { base, output: None } = p.class {
                self.waiting.insert(self.offset + j, (base, p.tokens));
            }
        }
        self.step_max.drain(..n);
        self.offset += n;
    }

    fn add(&mut self, m: &Message, generation: Option<u32>, tokens: u64, class: Class) {
        self.total += tokens;
        self.last_generation = self.last_generation.max(generation.unwrap_or(0));
        let before = self.step_max.last().copied().unwrap_or(0);
        self.step_max.push(before.max(m.step));
        self.parts.push(PartMeasure {
            step: m.step,
            generation,
            tokens,
            class,
        });
    }

    /// The raw measure of the parts so far, the previous call being
    /// `previous` (0 when none): the same as [`RawMeasure::of`] over the
    /// parts `PartsBuilder` would hold. Only the tail of parts at or after
    /// the previous call's step is walked.
    pub fn measure(&self, previous: u32) -> RawMeasure {
        RawMeasure {
            estimate: self.total,
            increment: if previous > 0 {
                let from = self.step_max.partition_point(|&s| s < previous);
                self.parts[from..]
                    .iter()
                    .filter(|p| p.step >= previous)
                    .map(|p| match p.class {
                        Class::Tool { output, .. } if p.generation == Some(previous) => {
                            output.unwrap_or(0)
                        }
                        Class::Assistant if p.generation == Some(previous) => 0,
                        _ => p.tokens,
                    })
                    .sum()
            } else {
                0
            },
            last_step: self.last_generation,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::engine::estimate::CharsPerToken;
    use crate::engine::parts::{PartsBuilder, reconstruct};
    use crate::model::{Kind, ToolContent};

    /// A generated row at `step`: `op` 0 an assistant text (a call's first
    /// row), 1 a `Read` call with tool id `t<id>`, 2 a result for that id,
    /// any other an ask.
    fn row(op: u8, id: usize, len: usize, step: u32) -> Message {
        let id = format!("t{id}");
        let mut m = match op {
            0 => Message::new(
                Role::Assistant,
                Kind::Generation,
                vec![Block::Text {
                    text: "x".repeat(len + 1),
                }],
                1,
            ),
            1 => Message::new(
                Role::Assistant,
                Kind::Generation,
                vec![Block::ToolUse {
                    id,
                    name: "Read".into(),
                    input: json!({"n": len}),
                }],
                1,
            ),
            2 => Message::tool_result(id, ToolContent::Text("y".repeat(len)), false, 1),
            _ => Message::new(
                Role::User,
                Kind::Ask,
                vec![Block::Text {
                    text: "z".repeat(len + 1),
                }],
                1,
            ),
        };
        m.step = step;
        m.turn = 1;
        m
    }

    proptest! {
        /// Measures taken call after call, forgetting what each call's
        /// measure no longer walks, equal [`RawMeasure::of`] over the whole
        /// history's parts: also when a result arrives calls after its tool
        /// call was forgotten, arrives twice, or a forgotten call's id is
        /// used again.
        #[test]
        fn forgetting_keeps_every_measure(ops in prop::collection::vec((0u8..4, 0usize..4, 0usize..300), 1..60)) {
            let est = CharsPerToken::default();
            let (mut msgs, mut step) = (Vec::new(), 0u32);
            let mut b = MeasureBuilder::default();
            let mut fed = 0;
            let check = |msgs: &[Message], b: &mut MeasureBuilder, fed: &mut usize, k: u32| {
                for m in &msgs[*fed..] {
                    b.push(m, &est);
                }
                *fed = msgs.len();
                let got = b.measure(k - 1);
                b.forget_before(k - 1);
                RawMeasure::of(&reconstruct(msgs, &est), k - 1, &est) == got
            };
            for (op, id, len) in ops {
                if op == 0 {
                    // The next call starts: measure the history before it.
                    prop_assert!(check(&msgs, &mut b, &mut fed, step + 1), "call {}", step + 1);
                    step += 1;
                }
                msgs.push(row(op, id, len, step));
            }
            prop_assert!(check(&msgs, &mut b, &mut fed, step + 1), "call {}", step + 1);
        }

        /// Parts built from the first row sharing the record's tool call ids
        /// with measures fed the whole record first (ahead of them), parts
        /// dropped from their front on the way, are the parts built whole
        /// with ids of their own; so are parts built again over the same ids
        /// (a rebuilt raw history); and the measures are those of the whole
        /// parts. Also with reused ids, results arriving twice, and results
        /// arriving before any call of their id.
        #[test]
        fn parts_sharing_tool_ids_with_measures_ahead_are_the_parts_built_whole(
            ops in prop::collection::vec((0u8..4, 0usize..4, 0usize..50), 1..60),
            drop_at in 0usize..60,
            dropped in 0usize..8,
        ) {
            let est = CharsPerToken::default();
            let mut step = 1u32;
            let msgs: Vec<Message> = ops
                .into_iter()
                .map(|(op, id, len)| {
                    step += u32::from(op == 0);
                    row(op, id, len, step)
                })
                .collect();
            let whole = reconstruct(&msgs, &est);
            let mut measures = MeasureBuilder::default();
            for m in &msgs {
                measures.push(m, &est);
            }
            prop_assert_eq!(measures.measure(step), RawMeasure::of(&whole, step, &est));
            let mut b = PartsBuilder::sharing(measures.tool_calls().clone());
            for (i, m) in msgs.iter().enumerate() {
                if i == drop_at {
                    b.drop_front(dropped.min(b.parts().len()));
                }
                b.push(m, &est);
            }
            prop_assert_eq!(b.parts(), &whole[b.offset()..]);
            let mut again = PartsBuilder::sharing(measures.tool_calls().clone());
            for m in &msgs {
                again.push(m, &est);
            }
            prop_assert_eq!(again.parts(), &whole);
        }
    }
}
