//! Parts: the unit of compaction. One tool call (tool_use + its result), one
//! text block, one reasoning block or one image each, addressed by what it is:
//! `tool:<toolCallId>`, or `text:`/`reasoning:`/`image:` plus a blake3 of a
//! canonical encoding of the content. No message ids anywhere.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use serde_json::Value;

use crate::model::digest::{Digest, DigestMap};

use super::estimate::{Estimator, block_tokens, tool_content_tokens};
use crate::model::{Block, Kind, Message, Role, ToolContent};
use crate::view::text::tool_content_text;

/// Which message side a plain block sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: ToolContent,
    pub is_error: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PartBody {
    /// A text, reasoning, image or other block.
    Block { side: Side, block: Block },
    /// A tool call and its result (`None`: no result was recorded).
    Tool {
        id: String,
        name: String,
        input: Value,
        output: Option<ToolOutput>,
    },
    /// The folded prefix: one `## Task Context` summary.
    Summary(SummaryHead),
}

/// What a folded prefix carries forward.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryHead {
    pub text: String,
    /// The coverage hash of the raw parts it folds.
    pub coverage: [u8; 32],
    /// How many raw parts it folds.
    pub covers: u64,
    pub summarizer: String,
    /// The call that minted it (turn, call).
    pub minted_at: (u32, u32),
}

/// What has been done to a part in this view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartState {
    Raw,
    /// A stored compacted form is swapped in.
    Shrunk {
        rule: String,
    },
    /// Disposable: only the legal empty shell is left.
    Dropped,
    /// A historical image replaced by a text placeholder.
    Placeholder,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub address: String,
    pub turn: u32,
    pub step: u32,
    /// The generation an assistant-side part belongs to (its step); `None` on the user side.
    pub generation: Option<u32>,
    /// The kind of the row the part came from.
    pub kind: Kind,
    pub body: PartBody,
    pub state: PartState,
    /// Estimated tokens as the part stands now.
    pub tokens: u64,
    /// A tool call's input as recorded, when a stored form replaced it: what
    /// the floor's summarizer reads (a file written is summarized whole).
    /// Never projected into a view.
    pub raw_input: Option<std::sync::Arc<serde_json::Value>>,
    /// A file read's output as recorded, when a stored form replaced it: the
    /// summarizer compares an edit with the whole file. Never projected.
    pub raw_output: Option<std::sync::Arc<ToolOutput>>,
}

impl Part {
    pub fn is_tool(&self) -> bool {
        matches!(self.body, PartBody::Tool { .. })
    }

    pub fn summary(&self) -> Option<&SummaryHead> {
        match &self.body {
            PartBody::Summary(h) => Some(h),
            _ => None,
        }
    }

    pub fn tool_id(&self) -> Option<&str> {
        match &self.body {
            PartBody::Tool { id, .. } => Some(id),
            _ => None,
        }
    }

    /// Recompute `tokens` after the body changed.
    pub fn measure(&mut self, est: &dyn Estimator) {
        self.tokens = part_tokens(est, &self.body);
    }
}

/// The text a tool call without a recorded result shows in a view.
pub(crate) const NO_RESULT_TEXT: &str =
    "[compactor: no result was recorded for this tool call; it was interrupted]";

pub(crate) fn part_tokens(est: &dyn Estimator, body: &PartBody) -> u64 {
    match body {
        PartBody::Block { block, .. } => block_tokens(est, block),
        PartBody::Tool {
            name,
            input,
            output,
            ..
        } => {
            est.text(name)
                + est.text(&serde_json::to_string(input).unwrap_or_default())
                + output.as_ref().map_or_else(
                    || est.text(NO_RESULT_TEXT),
                    |o| tool_content_tokens(est, &o.content),
                )
        }
        PartBody::Summary(h) => est.text(&summary_block_text(&h.text)),
    }
}

/// The text of the summary part as the model sees it.
pub(crate) fn summary_block_text(sections: &str) -> String {
    format!(
        "{}\n\n{}",
        super::carried::TASK_CONTEXT_HEADING,
        sections.trim_end()
    )
}

fn short_hash(parts: &[&[u8]]) -> String {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().to_hex()[..32].to_string()
}

/// The address of a plain block part.
pub(crate) fn block_address(side: Side, block: &Block) -> String {
    let side_tag: &[u8] = match side {
        Side::User => b"user",
        Side::Assistant => b"assistant",
    };
    match block {
        Block::Text { text } => format!("text:{}", short_hash(&[side_tag, text.as_bytes()])),
        Block::Thinking {
            thinking,
            signature,
        } => format!(
            "reasoning:{}",
            short_hash(&[
                thinking.as_bytes(),
                signature.as_deref().unwrap_or("").as_bytes()
            ])
        ),
        Block::RedactedThinking { data } => {
            format!("reasoning:{}", short_hash(&[b"redacted", data.as_bytes()]))
        }
        Block::Image { source } => format!(
            "image:{}",
            short_hash(&[
                source.data.as_deref().unwrap_or("").as_bytes(),
                source.url.as_deref().unwrap_or("").as_bytes()
            ])
        ),
        other => format!(
            "other:{}",
            short_hash(&[
                side_tag,
                serde_json::to_string(other).unwrap_or_default().as_bytes()
            ])
        ),
    }
}

/// Coverage hashing: a chain over the addresses of the folded raw parts, so a
/// stored summary is found again whatever the message source.
pub(crate) fn coverage_start() -> [u8; 32] {
    *blake3::hash(b"compactor/coverage/v1").as_bytes()
}

pub(crate) fn coverage_next(h: &[u8; 32], address: &str) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(h);
    hasher.update(address.as_bytes());
    *hasher.finalize().as_bytes()
}

/// The coverage chain over the parts it was last walked over, from the hash
/// that walk started at: a cache of [`coverage_next`], never an input to it.
/// A walk reuses each link while its start and every address so far are the
/// same as the last walk's, and hashes from the first difference on.
#[derive(Default)]
pub struct ChainResume {
    start: [u8; 32],
    /// `(address, the chain hash through it)` for each part walked.
    links: Vec<(String, [u8; 32])>,
}

impl ChainResume {
    /// Walk from `start`: [`ChainWalk::next`] for each part, in order.
    pub(crate) fn walk(&mut self, start: [u8; 32]) -> ChainWalk<'_> {
        if self.links.is_empty() || self.start != start {
            self.links.clear();
            self.start = start;
        }
        ChainWalk {
            resume: self,
            at: 0,
            hash: start,
        }
    }
}

/// One walk along the coverage chain (see [`ChainResume`]).
pub(crate) struct ChainWalk<'a> {
    resume: &'a mut ChainResume,
    at: usize,
    hash: [u8; 32],
}

impl ChainWalk<'_> {
    /// The chain hash through the next part, whose address is `address`.
    pub(crate) fn next(&mut self, address: &str) -> [u8; 32] {
        let links = &mut self.resume.links;
        match links.get(self.at) {
            Some((a, h)) if a == address => self.hash = *h,
            _ => {
                links.truncate(self.at);
                self.hash = coverage_next(&self.hash, address);
                links.push((address.to_string(), self.hash));
            }
        }
        self.at += 1;
        self.hash
    }
}

/// The snapshot-store key of a summary covering up to a chain hash.
pub(crate) fn coverage_key(h: &[u8; 32]) -> String {
    format!("cov:{}", blake3::Hash::from_bytes(*h).to_hex())
}

/// The coverage hash of a `cov:<64 hex>` key, exactly as [`coverage_key`]
/// writes it (lowercase); any other key is none.
pub(crate) fn decode_coverage_key(key: &str) -> Option<[u8; 32]> {
    let hex = key.strip_prefix("cov:")?.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// Rebuild parts from record rows (in order). Rows that never reach a view
/// (meta, titles, the agent's own summaries, usage) are skipped; tool results
/// join their call; results with no call become user text.
pub(crate) fn reconstruct<'a>(
    msgs: impl IntoIterator<Item = &'a Message>,
    est: &dyn Estimator,
) -> Vec<Part> {
    let mut b = PartsBuilder::default();
    for m in msgs {
        b.push(m, est);
    }
    b.parts
}

/// Every tool call id of a record, each with the part of its first call
/// among all the parts made from the record's first row: a function of the
/// record alone, so builders fed the same record from its first row (the raw
/// history's parts and its measures) share one, each id kept once (a tool
/// call id is the one thing these builders hold per call of the whole
/// history: a reused id must still be told apart).
///
/// An id is kept as its [`Digest`], as an importer keeps the ids it
/// remembers.
#[derive(Default, Clone)]
pub struct ToolCalls(Rc<RefCell<DigestMap<usize>>>);

impl ToolCalls {
    /// The part of `id`'s first call, if it is among the first `made` parts.
    pub(crate) fn get(&self, id: &str, made: usize) -> Option<usize> {
        let ids = self.0.borrow();
        ids.get(&Digest::of(id)).copied().filter(|&i| i < made)
    }

    /// A call with `id` makes part `at`: whether it is the first call with
    /// that id (kept then), not a reused id.
    pub(crate) fn first_call(&self, id: &str, at: usize) -> bool {
        // Made already: by a builder ahead, or by this one before a rebuild.
        *self.0.borrow_mut().entry(Digest::of(id)).or_insert(at) >= at
    }
}

/// Where a parts builder looks its tool calls up.
enum ToolIndex {
    /// Its own, of the parts it was given and made (see
    /// [`PartsBuilder::continuing`]).
    Own(HashMap<String, usize>),
    /// The record's, shared (see [`ToolCalls`]): for a builder fed from the
    /// first row.
    Shared(ToolCalls),
}

impl Default for ToolIndex {
    fn default() -> Self {
        ToolIndex::Own(HashMap::new())
    }
}

/// Incremental reconstruction: feed rows one by one (growth after a checkpoint).
/// (The raw history's measures come from `measure::MeasureBuilder`, which
/// follows the same rules without keeping content.)
///
/// A builder can drop parts from its front ([`PartsBuilder::drop_front`])
/// once nothing will show them again (a stored summary folds them): it keeps
/// only which dropped tool calls still wait for their result, so later rows
/// make the same parts as if nothing had been dropped.
#[derive(Default)]
pub struct PartsBuilder {
    /// The parts from [`PartsBuilder::offset`] on.
    parts: Vec<Part>,
    /// Tool call id → the index of its part among all parts made.
    tool_index: ToolIndex,
    /// How many parts were dropped from the front.
    offset: usize,
    /// The dropped tool calls with no result yet, by part index (one not
    /// here had its result).
    waiting: HashSet<usize>,
}

impl PartsBuilder {
    /// Continue after existing parts (a checkpoint): their tool calls can still
    /// receive results. `tool_index` is a cache of their index (the one the
    /// previous builder gave back through [`PartsBuilder::into_parts`], or
    /// empty): it is checked against the parts and built again unless it
    /// maps each tool call to its place and nothing else (a fold moves them).
    pub fn continuing(parts: Vec<Part>, mut tool_index: HashMap<String, usize>) -> PartsBuilder {
        let mut tools = 0;
        let current = parts.iter().enumerate().all(|(i, p)| {
            p.tool_id().is_none_or(|id| {
                tools += 1;
                tool_index.get(id) == Some(&i)
            })
        }) && tools == tool_index.len();
        if !current {
            tool_index.clear();
            for (i, p) in parts.iter().enumerate() {
                if let Some(id) = p.tool_id() {
                    tool_index.insert(id.to_string(), i);
                }
            }
        }
        PartsBuilder {
            parts,
            tool_index: ToolIndex::Own(tool_index),
            ..PartsBuilder::default()
        }
    }

    /// A builder fed from the record's first row, looking its tool calls
    /// up in the record's shared `ids`.
    pub fn sharing(ids: ToolCalls) -> PartsBuilder {
        PartsBuilder {
            tool_index: ToolIndex::Shared(ids),
            ..PartsBuilder::default()
        }
    }

    /// The parts, and the tool call index for the next
    /// [`PartsBuilder::continuing`] (of no use after parts were dropped;
    /// empty for a builder [`PartsBuilder::sharing`] its ids).
    pub fn into_parts(self) -> (Vec<Part>, HashMap<String, usize>) {
        match self.tool_index {
            ToolIndex::Own(index) => (self.parts, index),
            ToolIndex::Shared(_) => (self.parts, HashMap::new()),
        }
    }

    /// The part index of `id`'s call, if this builder made it.
    fn call_index(&self, id: &str) -> Option<usize> {
        match &self.tool_index {
            ToolIndex::Own(index) => index.get(id).copied(),
            ToolIndex::Shared(ids) => ids.get(id, self.offset + self.parts.len()),
        }
    }

    /// A call with `id` makes the next part: whether it is the first call
    /// with that id (noted then), not a reused id.
    fn first_call(&mut self, id: &str) -> bool {
        let at = self.offset + self.parts.len();
        match &mut self.tool_index {
            ToolIndex::Own(index) if index.contains_key(id) => false,
            ToolIndex::Own(index) => {
                index.insert(id.to_string(), at);
                true
            }
            ToolIndex::Shared(ids) => ids.first_call(id, at),
        }
    }

    /// The parts held (from [`PartsBuilder::offset`] on).
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The parts held, to change in place (a reference run's own rewrite of
    /// a tool's output; the parts stay where they are).
    pub fn parts_mut(&mut self) -> &mut [Part] {
        &mut self.parts
    }

    /// How many parts were dropped from the front: `parts[0]` is part
    /// number `offset()` of all the parts made.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Drop the first `n` parts held (their content is no longer needed).
    pub fn drop_front(&mut self, n: usize) {
        self.take_front(n);
    }

    /// [`PartsBuilder::drop_front`], handing the parts over.
    pub fn take_front(&mut self, n: usize) -> Vec<Part> {
        let taken: Vec<Part> = self.parts.drain(..n).collect();
        for (j, p) in taken.iter().enumerate() {
            if let PartBody::Tool { output: None, .. } = &p.body {
                self.waiting.insert(self.offset + j);
            }
        }
        self.offset += n;
        taken
    }

    /// How many parts from the front are complete: no later row changes
    /// them (a tool call is complete once it has its result).
    pub fn complete(&self) -> usize {
        self.parts
            .iter()
            .position(|p| matches!(&p.body, PartBody::Tool { output: None, .. }))
            .unwrap_or(self.parts.len())
    }

    pub fn push(&mut self, m: &Message, est: &dyn Estimator) {
        if m.role == Role::Meta || !m.kind.reaches_view() {
            return;
        }
        let side = match m.role {
            Role::Assistant => Side::Assistant,
            _ => Side::User,
        };
        let generation = (side == Side::Assistant).then_some(m.step);
        for block in &m.content {
            match block {
                b if leaves_no_part(b) => {}
                Block::ToolUse { id, name, input } if side == Side::Assistant => {
                    if !self.first_call(id) {
                        // A reused id cannot be paired twice; keep it visible as text.
                        let text = format!(
                            "[tool call {name} reused id {id}; input: {}]",
                            serde_json::to_string(input).unwrap_or_default()
                        );
                        self.plain(m, Side::Assistant, generation, Block::Text { text }, est);
                        continue;
                    }
                    let body = PartBody::Tool {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                        output: None,
                    };
                    self.push_part(m, generation, format!("tool:{id}"), body, est);
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    if let Some(i) = self.call_index(tool_use_id) {
                        if let Some(i) = i.checked_sub(self.offset) {
                            if let PartBody::Tool { output, .. } = &mut self.parts[i].body
                                && output.is_none()
                            {
                                *output = Some(ToolOutput {
                                    content: content.clone(),
                                    is_error: *is_error,
                                });
                                self.parts[i].measure(est);
                                continue;
                            }
                        } else if self.waiting.remove(&i) {
                            // Its call was dropped: the result joins it unseen.
                            continue;
                        }
                    }
                    // No call to answer in this view: keep the text, as user text.
                    let text = format!(
                        "[tool result for {tool_use_id}, whose call is not in this history]\n{}",
                        tool_content_text(content)
                    );
                    self.plain(m, Side::User, None, Block::Text { text }, est);
                }
                other => self.plain(m, side, generation, other.clone(), est),
            }
        }
    }

    fn plain(
        &mut self,
        m: &Message,
        side: Side,
        generation: Option<u32>,
        block: Block,
        est: &dyn Estimator,
    ) {
        let address = block_address(side, &block);
        self.push_part(m, generation, address, PartBody::Block { side, block }, est);
    }

    fn push_part(
        &mut self,
        m: &Message,
        generation: Option<u32>,
        address: String,
        body: PartBody,
        est: &dyn Estimator,
    ) {
        let tokens = part_tokens(est, &body);
        let part = Part {
            address,
            turn: m.turn,
            step: m.step,
            generation,
            kind: m.kind,
            body,
            state: PartState::Raw,
            tokens,
            raw_input: None,
            raw_output: None,
        };
        self.parts.push(part);
    }
}

/// A block that makes no part: blank text, or thinking with neither text nor
/// signature. The parts builder and the raw measures skip the same blocks.
pub(crate) fn leaves_no_part(block: &Block) -> bool {
    match block {
        Block::Text { text } => text.trim().is_empty(),
        Block::Thinking {
            thinking,
            signature,
        } => thinking.is_empty() && signature.is_none(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::CharsPerToken;
    use serde_json::json;

    fn msg(role: Role, kind: Kind, content: Vec<Block>, step: u32) -> Message {
        let mut m = Message::new(role, kind, content, 1);
        m.step = step;
        m.turn = 1;
        m
    }

    /// A `Read` call `id` at step 1.
    fn call(id: &str) -> Message {
        let b = Block::ToolUse {
            id: id.into(),
            name: "Read".into(),
            input: json!({"file_path": id}),
        };
        msg(Role::Assistant, Kind::Generation, vec![b], 1)
    }

    /// An ask at step 1.
    fn text(t: &str) -> Message {
        msg(
            Role::User,
            Kind::Ask,
            vec![Block::Text { text: t.into() }],
            1,
        )
    }

    /// A text tool result for `id` at step 1.
    fn result(id: &str, text: &str) -> Message {
        let content = ToolContent::Text(text.into());
        let r = Message::tool_result(id.into(), content, false, 1);
        msg(r.role, r.kind, r.content, 1)
    }

    /// An ask, two calls answered out of order (the first twice), more
    /// text between, and a third call.
    fn two_calls() -> Vec<Message> {
        vec![
            text("go"),
            call("t1"),
            call("t2"),
            result("t2", "two"),
            text("more"),
            result("t1", "one"),
            result("t1", "again"),
            call("t3"),
        ]
    }

    /// Parts dropped from the front, a tool call still waiting for its
    /// result among them: the parts kept are those built whole from there
    /// on, the dropped call's first result joining it unseen and a second
    /// one, like a late result for a dropped call that had one, kept as text.
    #[test]
    fn dropped_calls_take_their_results_as_when_built_whole() {
        let est = CharsPerToken::default();
        let mut msgs = two_calls();
        msgs.insert(7, result("t2", "late"));
        let mut b = PartsBuilder::default();
        for (i, m) in msgs.iter().enumerate() {
            if i == 5 {
                // Dropped: "go", t1 (no result yet) and t2 (answered).
                b.drop_front(3);
            }
            b.push(m, &est);
        }
        let whole = reconstruct(&msgs, &est);
        assert_eq!(b.offset(), 3);
        assert_eq!(b.parts, whole[3..]);
        assert_eq!(b.parts.len(), 4, "more, again, late, t3");
    }

    /// Parts taken from the front as soon as they are complete, then the
    /// rest: the same parts as built whole, and a tool call waiting for
    /// its result holds back everything after it.
    #[test]
    fn parts_taken_as_they_complete_are_the_parts_built_whole() {
        let est = CharsPerToken::default();
        let msgs = two_calls();
        let mut b = PartsBuilder::default();
        let mut taken = Vec::new();
        let mut complete_after = Vec::new();
        for m in &msgs {
            b.push(m, &est);
            complete_after.push(b.complete());
            taken.extend(b.take_front(b.complete()));
        }
        // "go" at once; t1 holds back t2 and "more" until its result.
        assert_eq!(complete_after, vec![1, 0, 0, 0, 0, 3, 1, 0]);
        taken.extend(b.into_parts().0);
        assert_eq!(taken, reconstruct(&msgs, &est));
        assert!(
            matches!(&taken[4].body, PartBody::Block { block: Block::Text { text }, .. } if text.contains("again")),
            "a second result for a taken call is kept as text, as when built whole"
        );
    }

    #[test]
    fn tool_calls_pair_with_results_and_addresses_are_content_based() {
        let est = CharsPerToken::default();
        let msgs = vec![
            msg(
                Role::User,
                Kind::Ask,
                vec![Block::Text {
                    text: "read it".into(),
                }],
                0,
            ),
            msg(
                Role::Assistant,
                Kind::Generation,
                vec![
                    Block::Text {
                        text: "\n\n".into(),
                    },
                    Block::ToolUse {
                        id: "t1".into(),
                        name: "Read".into(),
                        input: json!({"file_path":"a"}),
                    },
                ],
                1,
            ),
            result("t1", "contents"),
            result("ghost", "lost"),
        ];
        let parts = reconstruct(&msgs, &est);
        assert_eq!(parts.len(), 3, "whitespace text is not a part");
        assert!(parts[0].address.starts_with("text:"));
        assert_eq!(parts[1].address, "tool:t1");
        assert!(matches!(
            &parts[1].body,
            PartBody::Tool {
                output: Some(_),
                ..
            }
        ));
        assert!(
            matches!(&parts[2].body, PartBody::Block { side: Side::User, block: Block::Text { text } } if text.contains("ghost"))
        );
        // The same content has the same address; a different side does not.
        let again = reconstruct(&msgs, &est);
        assert_eq!(again[0].address, parts[0].address);
        assert_ne!(
            block_address(Side::User, &Block::Text { text: "x".into() }),
            block_address(Side::Assistant, &Block::Text { text: "x".into() })
        );
    }

    /// A stale tool index (the parts moved since it was built: a fold) is
    /// built again, so a later result still joins its own call; a current
    /// one is kept as it is.
    #[test]
    fn a_continuing_builder_checks_the_tool_index_it_is_given() {
        let est = CharsPerToken::default();
        let call = |id: &str, step| {
            let input = json!({ "file_path": id });
            let block = Block::ToolUse {
                id: id.into(),
                name: "Read".into(),
                input,
            };
            msg(Role::Assistant, Kind::Generation, vec![block], step)
        };
        let result = |id: &str, step| {
            let content = ToolContent::Text(format!("contents of {id}"));
            let block = Block::ToolResult {
                tool_use_id: id.into(),
                content,
                is_error: false,
            };
            msg(Role::User, Kind::ToolResult, vec![block], step)
        };
        let mut b = PartsBuilder::default();
        for m in [
            call("a", 1),
            result("a", 1),
            call("x", 2),
            result("x", 2),
            call("b", 3),
            call("c", 3),
        ] {
            b.push(&m, &est);
        }
        let (parts, index) = b.into_parts();
        assert_eq!(index.len(), 4);
        // Kept: the same parts again.
        let kept = PartsBuilder::continuing(parts.clone(), index.clone());
        assert!(matches!(&kept.tool_index, ToolIndex::Own(i) if *i == index));
        // A fold put one part where the first two were: the later calls moved.
        let mut folded = parts[1..].to_vec();
        folded[0].body = PartBody::Block {
            side: Side::User,
            block: Block::Text {
                text: "summary".into(),
            },
        };
        let mut stale = PartsBuilder::continuing(folded.clone(), index);
        let mut fresh = PartsBuilder::continuing(folded, HashMap::new());
        for m in [result("c", 3), result("b", 3), call("a", 4)] {
            stale.push(&m, &est);
            fresh.push(&m, &est);
        }
        assert_eq!(stale.parts, fresh.parts);
        assert!(
            matches!(&stale.parts[1].body, PartBody::Tool { id, output: Some(_), .. } if id == "b")
        );
        // "a" is no longer in the view: a new call with its id is a tool part again.
        assert_eq!(stale.parts.last().and_then(Part::tool_id), Some("a"));
    }

    /// A resumed walk gives the chain hash by hash, whatever the walks
    /// before it: the same parts, more parts, a changed part, another start.
    #[test]
    fn a_resumed_coverage_walk_equals_the_chain() {
        let chain = |start: [u8; 32], addresses: &[&str]| {
            let mut h = start;
            addresses
                .iter()
                .map(|a| {
                    h = coverage_next(&h, a);
                    h
                })
                .collect::<Vec<_>>()
        };
        let other = coverage_next(&coverage_start(), "head");
        let walks: [([u8; 32], &[&str]); 6] = [
            (coverage_start(), &["a", "b", "c"]),
            (coverage_start(), &["a", "b", "c", "d"]),
            (coverage_start(), &["a", "x", "c", "d"]),
            (other, &["a", "x", "c", "d"]),
            (other, &["a"]),
            (coverage_start(), &["a", "x", "c", "d", "e"]),
        ];
        let mut resume = ChainResume::default();
        for (start, addresses) in walks {
            let mut walk = resume.walk(start);
            let resumed: Vec<_> = addresses.iter().map(|a| walk.next(a)).collect();
            assert_eq!(resumed, chain(start, addresses), "{addresses:?}");
        }
    }

    proptest::proptest! {
        /// Any sequence of walks (two starts, three addresses, so the same
        /// addresses follow different starts and parts change anywhere)
        /// resumes to the chain hash by hash.
        #[test]
        fn resumed_coverage_walks_equal_the_chain(
            walks in proptest::collection::vec(
                (proptest::bool::ANY, proptest::collection::vec(0usize..3, 0..8)),
                1..10,
            ),
        ) {
            let mut resume = ChainResume::default();
            for (other, addresses) in walks {
                let start = match other {
                    true => coverage_next(&coverage_start(), "head"),
                    false => coverage_start(),
                };
                let mut walk = resume.walk(start);
                let mut h = start;
                for a in addresses.iter().map(|&i| ["a", "b", "c"][i]) {
                    h = coverage_next(&h, a);
                    proptest::prop_assert_eq!(walk.next(a), h);
                }
            }
        }
    }

    #[test]
    fn coverage_chain_depends_on_order() {
        let s = coverage_start();
        let ab = coverage_next(&coverage_next(&s, "a"), "b");
        let ba = coverage_next(&coverage_next(&s, "b"), "a");
        assert_ne!(ab, ba);
        assert!(coverage_key(&ab).starts_with("cov:"));
        assert_eq!(coverage_key(&ab).len(), 4 + 64);
    }
}
