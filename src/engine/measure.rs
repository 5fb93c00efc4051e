//! The raw history's measures without its content: what [`RawMeasure`]
//! needs of each part (its step, generation, tokens and, for a tool call,
//! its output's tokens), built row by row exactly as
//! [`super::parts::PartsBuilder`] builds the parts, but keeping no block,
//! input or output. Measuring a long history so costs a few words per part
//! instead of a second copy of every block.

use std::collections::HashMap;

use super::RawMeasure;
use super::estimate::{Estimator, block_tokens, tool_content_tokens};
use super::parts::NO_RESULT_TEXT;
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
#[derive(Default)]
pub struct MeasureBuilder {
    parts: Vec<PartMeasure>,
    tool_index: HashMap<String, usize>,
    total: u64,
    last_generation: u32,
    /// `step_max[i]`: the largest `step` of `parts[..=i]`.
    step_max: Vec<u32>,
}

impl MeasureBuilder {
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
                    if self.tool_index.contains_key(id) {
                        let text = format!("[tool call {name} reused id {id}; input: {input}]");
                        self.add(m, generation, est.text(&text), Class::Assistant);
                        continue;
                    }
                    self.tool_index.insert(id.clone(), self.parts.len());
                    let base = est.text(name) + est.text(&input);
                    let class = Class::Tool { base, output: None };
                    self.add(m, generation, base + est.text(NO_RESULT_TEXT), class);
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    if let Some(&i) = self.tool_index.get(tool_use_id)
                        && let Class::Tool { base, output } = &mut self.parts[i].class
                        && output.is_none()
                    {
                        let o = tool_content_tokens(est, content);
                        *output = Some(o);
                        let tokens = *base + o;
                        self.total = self.total - self.parts[i].tokens + tokens;
                        self.parts[i].tokens = tokens;
                        continue;
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
