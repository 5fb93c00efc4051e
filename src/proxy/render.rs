//! The forwarded conversation field, written from a view: the client's own
//! text for every block (Messages) or item (Responses, Chat Completions)
//! the view holds unchanged, the view's own for the rest (compacted forms, the summary),
//! and the client's instructions messages where it placed them.

use std::collections::HashMap;

use super::chat::ChatWriter;
use super::convo::{EntrySide, entry_digest};
use super::messages::{MAX_BREAKPOINTS, MessagesWriter, OutBlock, sent_blocks};
use super::record::Conversation;
use super::request::{Api, Request};
use super::responses::InputWriter;
use crate::model::Block;
use crate::view::{View, ViewMessage, ViewRole};

/// What the last forwarded conversation field was made of: the view's
/// messages and each one's text as written. A view shares its prefix with
/// the last one (that is what the prompt cache is paid for), so only the
/// messages after the shared prefix are written again.
#[derive(Default)]
pub(crate) struct Written {
    messages: Vec<ViewMessage>,
    /// Per message: its blocks' text (Messages) or its items' text and the
    /// freeform calls known after it (Responses).
    texts: Vec<(Vec<String>, Vec<String>)>,
}

impl Written {
    /// How many leading messages of `view` are the last view's.
    fn shared(&self, view: &View) -> usize {
        self.messages
            .iter()
            .zip(&view.messages)
            .take_while(|(a, b)| a == b)
            .count()
    }
}

/// The instructions messages of the request (Claude Code's `system`
/// messages, Codex's `developer` ones) and how many conversation items came
/// before each: those before the first come first, the others follow the
/// view's first message (the opening ask, or the summary standing for it).
fn instructions(conv: &Conversation) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut before = 0;
    for (i, it) in conv.items().iter().enumerate() {
        if it.system {
            out.push((i, before));
        } else if it.entries > 0 {
            before += 1;
        }
    }
    out
}

fn side_of(role: ViewRole) -> EntrySide {
    match role {
        ViewRole::User => EntrySide::User,
        ViewRole::Assistant => EntrySide::Assistant,
    }
}

fn role_name(role: ViewRole) -> &'static str {
    match role {
        ViewRole::User => "user",
        ViewRole::Assistant => "assistant",
    }
}

/// The conversation field's JSON text for `view`; `written` is what the
/// last call wrote (and becomes this one's).
pub(crate) fn conversation_field(
    req: &Request,
    conv: &Conversation,
    view: View,
    written: &mut Written,
) -> String {
    let shared = written.shared(&view);
    written.texts.truncate(shared);
    let out = match req.api {
        Api::Messages => messages_field(req, conv, &view, shared, written),
        Api::Responses => input_field(InputWriter::default(), req, conv, &view, shared, written),
        Api::Chat => input_field(ChatWriter::default(), req, conv, &view, shared, written),
    };
    written.messages = view.messages;
    out
}

fn messages_field(
    req: &Request,
    conv: &Conversation,
    view: &View,
    shared: usize,
    written: &mut Written,
) -> String {
    let system = instructions(conv);
    let mut w = MessagesWriter::new();
    for &(i, before) in &system {
        if before == 0 {
            w.system(req.item_text(i));
        }
    }
    let mut sent: HashMap<u32, Vec<String>> = HashMap::new();
    for (mi, m) in view.messages.iter().enumerate() {
        if mi < shared {
            w.written(role_name(m.role), written.texts[mi].0.clone());
            if mi == 0 {
                for &(i, before) in &system {
                    if before > 0 {
                        w.system(req.item_text(i));
                    }
                }
            }
            continue;
        }
        let side = side_of(m.role);
        let blocks = m
            .content
            .iter()
            .map(|b| {
                let place = conv.origin(&entry_digest(side, b));
                let raw = place.and_then(|p| {
                    let blocks = sent
                        .entry(p.item)
                        .or_insert_with(|| sent_blocks(req.item_text(p.item as usize)));
                    blocks.get(p.block as usize).cloned()
                });
                match raw {
                    Some(raw) => OutBlock::Sent(raw),
                    None => OutBlock::View(b.clone()),
                }
            })
            .collect();
        let texts = w.message(role_name(m.role), blocks).to_vec();
        written.texts.push((texts, Vec::new()));
        if mi == 0 {
            for &(i, before) in &system {
                if before > 0 {
                    w.system(req.item_text(i));
                }
            }
        }
    }
    // The client's message breakpoint moves to the view's last block, if
    // the limit leaves room for it.
    let breakpoint = req
        .message_breakpoint
        .clone()
        .filter(|_| req.head_breakpoints < MAX_BREAKPOINTS);
    w.finish(breakpoint)
}

/// How a list of whole items is written (Responses input items, Chat
/// Completions messages): the client's own items, items made from view
/// blocks, and those a view message was written as before.
trait ItemWriter {
    /// An assistant item the client sends stands for the reasoning before
    /// it, carried in it or not (Chat Completions' `reasoning_content`,
    /// which the record is not compared on).
    const ITEM_HOLDS_ITS_REASONING: bool = false;
    fn sent(&mut self, raw: &str);
    fn view(&mut self, role: ViewRole, blocks: Vec<Block>);
    fn len(&self) -> usize;
    /// The items written from `from` on, and what the writer must know
    /// again when they are written from memory (Codex's freeform calls).
    fn since(&self, from: usize) -> (Vec<String>, Vec<String>);
    fn written(&mut self, items: &[String], known: &[String]);
    fn finish(self) -> String;
}

impl ItemWriter for InputWriter {
    fn sent(&mut self, raw: &str) {
        InputWriter::sent(self, raw)
    }
    fn view(&mut self, role: ViewRole, blocks: Vec<Block>) {
        InputWriter::view(self, role, blocks)
    }
    fn len(&self) -> usize {
        InputWriter::len(self)
    }
    fn since(&self, from: usize) -> (Vec<String>, Vec<String>) {
        InputWriter::since(self, from)
    }
    fn written(&mut self, items: &[String], known: &[String]) {
        InputWriter::written(self, items, known)
    }
    fn finish(self) -> String {
        InputWriter::finish(self)
    }
}

impl ItemWriter for ChatWriter {
    const ITEM_HOLDS_ITS_REASONING: bool = true;
    fn sent(&mut self, raw: &str) {
        ChatWriter::sent(self, raw)
    }
    fn view(&mut self, role: ViewRole, blocks: Vec<Block>) {
        ChatWriter::view(self, role, blocks)
    }
    fn len(&self) -> usize {
        ChatWriter::len(self)
    }
    fn since(&self, from: usize) -> (Vec<String>, Vec<String>) {
        (ChatWriter::since(self, from), Vec::new())
    }
    fn written(&mut self, items: &[String], _known: &[String]) {
        ChatWriter::written(self, items)
    }
    fn finish(self) -> String {
        ChatWriter::finish(self)
    }
}

fn input_field<W: ItemWriter>(
    mut w: W,
    req: &Request,
    conv: &Conversation,
    view: &View,
    shared: usize,
    written: &mut Written,
) -> String {
    let system = instructions(conv);
    for &(i, before) in &system {
        if before == 0 {
            w.sent(req.item_text(i));
        }
    }
    let items = conv.items();
    for (mi, m) in view.messages.iter().enumerate() {
        if mi < shared {
            let (texts, custom) = &written.texts[mi];
            w.written(texts, custom);
            if mi == 0 {
                for &(i, before) in &system {
                    if before > 0 {
                        w.sent(req.item_text(i));
                    }
                }
            }
            continue;
        }
        let from = w.len();
        let side = side_of(m.role);
        let places: Vec<_> = m
            .content
            .iter()
            .map(|b| {
                conv.origin(&entry_digest(side, b))
                    .filter(|_| !req.bare_string)
            })
            .collect();
        let mut pending: Vec<Block> = Vec::new();
        let mut j = 0;
        while j < m.content.len() {
            // An item the client sent, whole and in order: its own text.
            if let Some(p) = places[j]
                && p.block == 0
                && let Some(it) = items.get(p.item as usize)
                && it.entries > 0
                && j + it.entries as usize <= m.content.len()
                && (1..it.entries as usize)
                    .all(|k| places[j + k].is_some_and(|q| q.item == p.item && q.block == k as u32))
            {
                if W::ITEM_HOLDS_ITS_REASONING {
                    while matches!(
                        pending.last(),
                        Some(Block::Thinking {
                            signature: None,
                            ..
                        })
                    ) {
                        pending.pop();
                    }
                }
                w.view(m.role, std::mem::take(&mut pending));
                w.sent(req.item_text(p.item as usize));
                j += it.entries as usize;
                continue;
            }
            pending.push(m.content[j].clone());
            j += 1;
        }
        w.view(m.role, pending);
        written.texts.push(w.since(from));
        if mi == 0 {
            for &(i, before) in &system {
                if before > 0 {
                    w.sent(req.item_text(i));
                }
            }
        }
    }
    w.finish()
}
