//! The forwarded conversation field, written from a view: the client's own
//! text for every block (Messages) or item (Responses, Chat Completions)
//! the view holds unchanged, the view's own for the rest (compacted forms, the summary),
//! and the client's instructions messages where it placed them.

use std::collections::HashMap;

use super::chat::ChatWriter;
use super::convo::{EntrySide, entry_digest};
use super::gemini::GeminiWriter;
use super::messages::{MAX_BREAKPOINTS, MessagesWriter, OutBlock, sent_blocks};
use super::pieces::{Pieces, Text, json_array};
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
    /// freeform calls known after it (Responses), each its own copy (never
    /// a run of a request's body, which goes with its call).
    texts: Vec<(Vec<Text>, Vec<String>)>,
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

/// One piece of the forwarded conversation field.
enum Piece<'v> {
    /// An instructions message the client sent (Claude Code's `system`
    /// messages, Codex's `developer` ones): its item's index.
    Instructions(usize),
    /// A view message the last view shared (its index): written as it was.
    Written(usize, &'v ViewMessage),
    /// A view message to write.
    New(&'v ViewMessage),
}

/// The pieces of the conversation field in the order they are written, for
/// every API: the instructions messages before the first conversation item
/// come first, the others follow the view's first message (the opening ask,
/// or the summary standing for it).
fn pieces<'v>(conv: &Conversation, view: &'v View, shared: usize) -> Vec<Piece<'v>> {
    let mut out = Vec::new();
    let mut after_first = Vec::new();
    let mut before = 0;
    for (i, it) in conv.items().iter().enumerate() {
        if it.system {
            if before == 0 {
                out.push(Piece::Instructions(i));
            } else {
                after_first.push(Piece::Instructions(i));
            }
        } else if it.entries > 0 {
            before += 1;
        }
    }
    for (mi, m) in view.messages.iter().enumerate() {
        out.push(if mi < shared {
            Piece::Written(mi, m)
        } else {
            Piece::New(m)
        });
        if mi == 0 {
            out.append(&mut after_first);
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

/// The conversation field's JSON text for `view`, written onto `out`;
/// `written` is what the last call wrote and, when `keep`, becomes this
/// one's (a call whose conversation is let go after it keeps nothing).
/// Returns how many items (messages) the field holds.
pub(crate) fn conversation_field(
    req: &Request,
    conv: &Conversation,
    view: View,
    written: &mut Written,
    keep: bool,
    out: &mut Pieces,
) -> usize {
    let shared = written.shared(&view);
    written.texts.truncate(shared);
    let pieces = pieces(conv, &view, shared);
    let items = match req.api {
        Api::Messages => messages_field(req, conv, pieces, written, keep, out),
        Api::Responses => input_field(
            InputWriter::default(),
            req,
            conv,
            pieces,
            written,
            keep,
            out,
        ),
        Api::Chat => input_field(ChatWriter::default(), req, conv, pieces, written, keep, out),
        Api::Gemini => {
            let w = GeminiWriter::new(req, &view);
            input_field(w, req, conv, pieces, written, keep, out)
        }
    };
    if keep {
        written.messages = view.messages;
    } else {
        *written = Written::default();
    }
    items
}

fn messages_field(
    req: &Request,
    conv: &Conversation,
    pieces: Vec<Piece<'_>>,
    written: &mut Written,
    keep: bool,
    out: &mut Pieces,
) -> usize {
    let body = req.text();
    let mut w = MessagesWriter::new();
    let mut sent: HashMap<u32, Vec<Text>> = HashMap::new();
    for piece in pieces {
        match piece {
            Piece::Instructions(i) => w.system(req.item_text(i)),
            Piece::Written(mi, m) => w.written(role_name(m.role), written.texts[mi].0.clone()),
            Piece::New(m) => {
                let blocks = view_blocks(req, conv, m, &mut sent);
                let texts = w.message(role_name(m.role), blocks, body);
                if keep {
                    let kept = texts.iter().map(|t| t.kept(body)).collect();
                    written.texts.push((kept, Vec::new()));
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
    let items = w.len();
    w.finish(breakpoint, body, out);
    items
}

/// The blocks of view message `m` as forwarded: each the client's own block
/// where it sent it (`sent` keeps the blocks of the items read so far).
fn view_blocks(
    req: &Request,
    conv: &Conversation,
    m: &ViewMessage,
    sent: &mut HashMap<u32, Vec<Text>>,
) -> Vec<OutBlock> {
    let side = side_of(m.role);
    m.content
        .iter()
        .map(|b| {
            let place = conv.origin(&entry_digest(side, b));
            let raw = place.and_then(|p| {
                let blocks = sent
                    .entry(p.item)
                    .or_insert_with(|| sent_blocks(req.text(), req.item_text(p.item as usize)));
                blocks.get(p.block as usize).cloned()
            });
            match raw {
                Some(raw) => OutBlock::Sent(raw),
                None => OutBlock::View(b.clone()),
            }
        })
        .collect()
}

/// How a list of whole items is written (Responses input items, Chat
/// Completions messages): the client's own items, items made from view
/// blocks, and those a view message was written as before.
pub(super) trait ItemWriter {
    /// An assistant item the client sends stands for the reasoning before
    /// it, carried in it or not (Chat Completions' `reasoning_content`,
    /// which the record is not compared on).
    const ITEM_HOLDS_ITS_REASONING: bool = false;
    /// Which blocks recorded before a sent item the item stands for
    /// (unsigned reasoning; Gemini's thoughts and signatures too).
    fn held_by_item(b: &Block) -> bool {
        matches!(
            b,
            Block::Thinking {
                signature: None,
                ..
            }
        )
    }
    /// The items written so far, each its JSON text.
    fn items(&self) -> &[Text];
    /// An item the client sent: `raw`, written as `text` (a run of the
    /// body, or its own copy).
    fn sent(&mut self, raw: &str, text: Text);
    /// The items of `fragment`, a view of one message's blocks.
    fn view_items(&mut self, fragment: &View);
    /// The items written from `from` on, and what the writer must know
    /// again when they are written from memory (Codex's freeform calls).
    fn since(&self, from: usize) -> (Vec<Text>, Vec<String>);
    fn written(&mut self, items: &[Text], known: &[String]);

    /// Blocks of one view message the client did not send as they are.
    fn view(&mut self, role: ViewRole, blocks: Vec<Block>) {
        if blocks.is_empty() {
            return;
        }
        let fragment = View {
            messages: vec![ViewMessage {
                role,
                content: blocks,
            }],
        };
        self.view_items(&fragment);
    }

    fn len(&self) -> usize {
        self.items().len()
    }

    /// The items onto `out`, their runs of `body`.
    fn finish(self, body: &str, out: &mut Pieces)
    where
        Self: Sized,
    {
        json_array(out, self.items(), |out, t| out.text(t, body));
    }
}

fn input_field<W: ItemWriter>(
    mut w: W,
    req: &Request,
    conv: &Conversation,
    pieces: Vec<Piece<'_>>,
    written: &mut Written,
    keep: bool,
    out: &mut Pieces,
) -> usize {
    let body = req.text();
    for piece in pieces {
        match piece {
            Piece::Instructions(i) => w.sent(req.item_text(i), req.item_piece(i)),
            Piece::Written(mi, _) => {
                let (texts, custom) = &written.texts[mi];
                w.written(texts, custom);
            }
            Piece::New(m) => {
                let from = w.len();
                write_view_message(&mut w, req, conv, m);
                if keep {
                    let (texts, known) = w.since(from);
                    let kept = texts.iter().map(|t| t.kept(body)).collect();
                    written.texts.push((kept, known));
                }
            }
        }
    }
    let items = w.len();
    w.finish(body, out);
    items
}

/// The item of the latest request whose entries are the blocks of
/// `content` from `j` on, in order, if any. A block's place names the first
/// entry of its digest, which may be another item's (two turns that say the
/// same text): each block that names its place in an item is a candidate,
/// and a candidate counts when every block matches its entry.
fn sent_item_at(
    conv: &Conversation,
    side: EntrySide,
    content: &[Block],
    places: &[Option<super::record::EntryPlace>],
    j: usize,
) -> Option<usize> {
    let items = conv.items();
    let mut tried: Vec<u32> = Vec::new();
    for x in 0..content.len() - j {
        // An item's blocks are compared entries, each with a place.
        let Some(q) = places[j + x] else { break };
        if q.block != x as u32 || tried.contains(&q.item) {
            continue;
        }
        tried.push(q.item);
        let Some(it) = items.get(q.item as usize) else {
            continue;
        };
        let n = it.entries as usize;
        if n == 0 || j + n > content.len() {
            continue;
        }
        let whole = (0..n)
            .all(|k| conv.entry(it.first + k as u32) == Some(entry_digest(side, &content[j + k])));
        if whole {
            return Some(q.item as usize);
        }
    }
    None
}

/// View message `m` as items: each item the client sent whole and in order
/// as it sent it, the blocks between as items made from the view.
fn write_view_message<W: ItemWriter>(
    w: &mut W,
    req: &Request,
    conv: &Conversation,
    m: &ViewMessage,
) {
    let items = conv.items();
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
        if let Some(item) = sent_item_at(conv, side, &m.content, &places, j)
            && let Some(it) = items.get(item)
        {
            if W::ITEM_HOLDS_ITS_REASONING {
                while pending.last().is_some_and(W::held_by_item) {
                    pending.pop();
                }
            }
            w.view(m.role, std::mem::take(&mut pending));
            w.sent(req.item_text(item), req.item_piece(item));
            j += it.entries as usize;
            continue;
        }
        pending.push(m.content[j].clone());
        j += 1;
    }
    w.view(m.role, pending);
}
