//! The forwarded conversation field, written from a view: the client's own
//! text for every block (Messages) or item (Responses) the view holds
//! unchanged, the view's own for the rest (compacted forms, the summary),
//! and the client's instructions messages where it placed them.

use std::collections::HashMap;

use super::convo::{Side, entry_digest};
use super::messages::{MAX_BREAKPOINTS, MessagesWriter, OutBlock, sent_blocks};
use super::record::Conversation;
use super::request::{Api, Request};
use super::responses::InputWriter;
use crate::model::Block;
use crate::view::{View, ViewRole};

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

fn side_of(role: ViewRole) -> Side {
    match role {
        ViewRole::User => Side::User,
        ViewRole::Assistant => Side::Assistant,
    }
}

fn role_name(role: ViewRole) -> &'static str {
    match role {
        ViewRole::User => "user",
        ViewRole::Assistant => "assistant",
    }
}

/// The conversation field's JSON text for `view`.
pub(crate) fn conversation_field(req: &Request, conv: &Conversation, view: &View) -> String {
    match req.api {
        Api::Messages => messages_field(req, conv, view),
        Api::Responses => input_field(req, conv, view),
    }
}

fn messages_field(req: &Request, conv: &Conversation, view: &View) -> String {
    let system = instructions(conv);
    let mut w = MessagesWriter::new();
    for &(i, before) in &system {
        if before == 0 {
            w.system(req.item_text(i));
        }
    }
    let mut sent: HashMap<u32, Vec<String>> = HashMap::new();
    for (mi, m) in view.messages.iter().enumerate() {
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
        w.message(role_name(m.role), blocks);
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

fn input_field(req: &Request, conv: &Conversation, view: &View) -> String {
    let system = instructions(conv);
    let mut w = InputWriter::default();
    for &(i, before) in &system {
        if before == 0 {
            w.sent(req.item_text(i));
        }
    }
    let items = conv.items();
    for (mi, m) in view.messages.iter().enumerate() {
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
                w.view(m.role, std::mem::take(&mut pending));
                w.sent(req.item_text(p.item as usize));
                j += it.entries as usize;
                continue;
            }
            pending.push(m.content[j].clone());
            j += 1;
        }
        w.view(m.role, pending);
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
