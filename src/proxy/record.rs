//! A live conversation's record: what of a request is new (compared with
//! the record entry by entry, one entry per content block), the new rows
//! appended in one transaction with the tool forms they mint, and the
//! answer recorded once its stream completed. A request whose history does
//! not extend the record (the client compacted, rewound or edited it)
//! starts a new task linked to the old one, with the reason; no row is ever
//! rewritten.
//!
//! A retry: a request that carries the record exactly up to its last row,
//! an answer the proxy recorded, leaving that answer out, is the client
//! sending the same request again because it did not take the answer whole
//! (the proxy died, or the connection broke, after the answer was
//! recorded). It is the same call of the same task: the answer is marked
//! superseded (`proxy_superseded`; it stays in the record, out of the
//! history) and the request is forwarded the view the call had. A request
//! that carries the whole record (no answer recorded since the call was
//! forwarded) is a retry too, and adds nothing.

use std::collections::HashMap;

use serde_json::Value;

use super::convo::{BadRequest, EntrySide, compared, entry_digest, system_rows};
use super::request::Request;
use crate::engine::estimate::CharsPerToken;
use crate::engine::toolrules::{ToolForm, ToolRules};
use crate::model::digest::{Digest, DigestMap};
use crate::model::{Block, Kind, Message};
use crate::store::{ProxyConversation, ProxySuperseded, Store, StoreError, TaskInfo, TaskMeta};
use crate::view::text::block_text;

/// Where an entry was in the latest request that carried it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryPlace {
    pub item: u32,
    /// Its block's index among the item's entries.
    pub block: u32,
}

/// What the latest request's item `i` was: its first entry and how many,
/// and whether it is instructions (system entries only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ItemSeen {
    pub first: u32,
    pub entries: u32,
    pub system: bool,
}

/// A live conversation: its task, and what is needed to compare requests
/// with its record and to write the forwarded request (a digest per entry;
/// the record's content stays in the store).
pub(crate) struct Conversation {
    pub meta: ProxyConversation,
    /// The record's entries after its head rows, in order.
    entries: Vec<Digest>,
    /// Where each entry was in the latest request (`None` until one carried it).
    places: Vec<Option<EntryPlace>>,
    /// An entry's digest, and the digest of the form a view gives it where
    /// that differs (a block the view shows as text), to its first index.
    origin: DigestMap<u32>,
    /// The latest request's items.
    items: Vec<ItemSeen>,
    /// The latest request's leading items whose text a request that sends
    /// them again need not read: how many, and the blake3 of their text
    /// (from the first's start to the last's end, as one run of bytes). The
    /// last two items are left out: a client moves its cache breakpoint
    /// from the last message to the new last one.
    prefix: Option<(usize, [u8; 32])>,
    /// Rows in the record.
    pub rows: u64,
    turn: u32,
    step: u32,
    /// Tool calls recorded without a result yet: name and input.
    open_calls: HashMap<String, (String, Value)>,
    /// Requests forwarded so far.
    pub attempts: u64,
    /// The record's last row, when it is an answer the proxy recorded (a
    /// retry of its call supersedes it).
    last_answer: Option<LastAnswer>,
    /// A Chat Completions conversation: see [`compared_entry`].
    chat: bool,
    /// A Gemini conversation: see [`Conversation::compares`].
    gemini: bool,
}

/// Whether a block is an entry the record and a request are compared on.
/// Chat Completions has no standard field for reasoning: a provider's
/// `reasoning_content` is recorded, but a client may send it back (OpenCode)
/// or not (most, as DeepSeek asks), so an unsigned reasoning block of an
/// assistant message is left out of the comparison.
pub(crate) fn compared_entry(chat: bool, side: EntrySide, b: &Block) -> bool {
    !(chat
        && side == EntrySide::Assistant
        && matches!(
            b,
            Block::Thinking {
                signature: None,
                ..
            }
        ))
}

/// What a recorded row adds to a conversation, in its order: an entry (its
/// digest, and its digest as a view shows it where that differs), a tool
/// call opened, a tool call answered.
enum Taken {
    Entry(Digest, Option<Digest>),
    Opened(String, String, Value),
    Closed(String),
}

/// An answer the proxy recorded, as the record's last row.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LastAnswer {
    seq: u64,
    /// The forwarded request it answered.
    attempt: u64,
    /// Its first entry.
    entry: u32,
    /// The step before it.
    step_before: u32,
    /// The tool calls it opened.
    calls: Vec<String>,
}

/// What a request adds to a conversation's record.
pub(crate) struct Plan {
    items: Vec<ItemSeen>,
    /// The prefix this request leaves for the next (see [`Conversation::prefix`]).
    prefix: Option<(usize, [u8; 32])>,
    /// `(entry, place)` for the entries this request carried.
    places: Vec<(u32, EntryPlace)>,
    /// The items whose rows are new, in order (their rows kept in the
    /// request for [`Conversation::record`] to take).
    new_items: Vec<usize>,
    /// The record's last answer, which this request (a retry of its call)
    /// supersedes.
    supersedes: Option<LastAnswer>,
}

impl Plan {
    /// The attempt whose recorded answer this request (a retry) supersedes.
    pub(crate) fn superseded_attempt(&self) -> Option<u64> {
        self.supersedes.as_ref().map(|a| a.attempt)
    }

    /// The rows the plan appends, taken from `req` (the request it was
    /// made for), which kept them.
    pub(crate) fn take_rows(&self, req: &Request) -> Result<Vec<Message>, BadRequest> {
        let mut rows = Vec::new();
        for &i in &self.new_items {
            rows.extend(req.take_rows(i)?);
        }
        Ok(rows)
    }
}

/// Why a request's history does not extend a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Divergence {
    /// Entries the request shares with the record before it differs.
    pub shared: u32,
    pub reason: String,
}

impl Conversation {
    /// A conversation whose task holds no row yet.
    pub(crate) fn empty(meta: ProxyConversation) -> Conversation {
        Conversation {
            entries: Vec::new(),
            places: Vec::new(),
            origin: DigestMap::default(),
            items: Vec::new(),
            prefix: None,
            rows: 0,
            turn: 0,
            step: 0,
            open_calls: HashMap::new(),
            attempts: 0,
            last_answer: None,
            chat: meta.api == super::request::Api::Chat.name(),
            gemini: meta.api == super::request::Api::Gemini.name(),
            meta,
        }
    }

    /// A conversation recorded before (by this proxy or an earlier run),
    /// read back from its record.
    pub(crate) fn load(store: &Store, meta: ProxyConversation) -> Result<Conversation, StoreError> {
        let mut c = Conversation::empty(meta);
        let reader = store.reader();
        c.attempts = reader.proxy_last_attempt(&c.meta.task_id)?;
        let head = c.meta.head_rows;
        let mut rows = 0u64;
        let task = c.meta.task_id.clone();
        let superseded = reader.proxy_superseded(&task)?;
        let mut skip = superseded.iter().map(|s| s.seq).peekable();
        reader.each_stored(&task, 0, u64::MAX, |s| {
            rows += 1;
            if skip.next_if_eq(&s.seq).is_some() {
                return Ok(());
            }
            let m = s.message;
            c.last_answer = None;
            if s.seq >= head && m.kind == Kind::Generation && recorded_by_proxy(&m) {
                c.last_answer = Some(LastAnswer {
                    seq: s.seq,
                    attempt: 0,
                    entry: c.entries.len() as u32,
                    step_before: c.step,
                    calls: opened_calls(&m),
                });
            }
            c.turn = m.turn;
            c.step = c.step.max(m.step);
            if s.seq >= head {
                c.take_row(&m);
            }
            Ok::<(), StoreError>(())
        })?;
        c.rows = rows;
        if let Some(a) = &mut c.last_answer {
            a.attempt = reader
                .proxy_responses(&task)?
                .iter()
                .rev()
                .find(|r| r.outcome == "recorded")
                .map_or(0, |r| r.attempt);
        }
        Ok(c)
    }

    /// Note a recorded row: its entries, its tool calls and results.
    fn take_row(&mut self, m: &Message) {
        let taken = self.taken(m);
        self.take(taken);
    }

    /// What [`Conversation::take_row`] notes of a row, read while the row
    /// is at hand (the row itself need not be kept until it is recorded).
    fn taken(&self, m: &Message) -> Vec<Taken> {
        let mut out = Vec::new();
        if !compared(m) {
            return out;
        }
        let side = EntrySide::of(m);
        for b in &m.content {
            if !self.compares(side, b) {
                continue;
            }
            let shown = matches!(b, Block::Other(_)).then(|| {
                let text = block_text(b);
                entry_digest(side, &Block::Text { text })
            });
            out.push(Taken::Entry(entry_digest(side, b), shown));
            match b {
                Block::ToolUse { id, name, input } => {
                    out.push(Taken::Opened(id.clone(), name.clone(), input.clone()));
                }
                Block::ToolResult { tool_use_id, .. } => {
                    out.push(Taken::Closed(tool_use_id.clone()));
                }
                _ => {}
            }
        }
        out
    }

    fn take(&mut self, taken: Vec<Taken>) {
        for t in taken {
            match t {
                Taken::Entry(d, shown) => {
                    let i = self.entries.len() as u32;
                    self.entries.push(d);
                    self.places.push(None);
                    self.origin.entry(d).or_insert(i);
                    if let Some(shown) = shown {
                        self.origin.entry(shown).or_insert(i);
                    }
                }
                Taken::Opened(id, name, input) => {
                    self.open_calls.insert(id, (name, input));
                }
                Taken::Closed(id) => {
                    self.open_calls.remove(&id);
                }
            }
        }
    }

    /// Whether an entry is compared: as [`compared_entry`] says, and for
    /// Gemini not a model turn's thoughts and thought signatures (a client
    /// drops the thoughts, and sets a signature of its own on a call that
    /// had none: Gemini CLI does both).
    fn compares(&self, side: EntrySide, b: &Block) -> bool {
        compared_entry(self.chat, side, b)
            && !(self.gemini
                && side == EntrySide::Assistant
                && matches!(b, Block::Thinking { .. } | Block::RedactedThinking { .. }))
    }

    /// Compare `req` with the record: what it adds, or where it diverges.
    pub(crate) fn plan(&self, req: &Request) -> Result<Result<Plan, Divergence>, BadRequest> {
        let mut plan = Plan {
            items: Vec::with_capacity(req.items.len()),
            prefix: None,
            places: Vec::new(),
            new_items: Vec::new(),
            supersedes: None,
        };
        let recorded = self.entries.len() as u32;
        let mut at = 0u32;
        // The leading items the last request sent, as it sent them: known.
        let text = req.text().as_bytes();
        let end_of = |k: usize| req.items[k - 1].span.end;
        let keep = if req.bare_string {
            0
        } else {
            req.items.len().saturating_sub(2)
        };
        let mut hasher = blake3::Hasher::new();
        let mut hashed = 0usize;
        let mut skip = 0usize;
        if let Some((k, digest)) = self.prefix
            && k > 0
            && k <= req.items.len()
            && k <= self.items.len()
            && !req.bare_string
        {
            let start = req.items[0].span.start;
            hasher.update(&text[start..end_of(k)]);
            hashed = k;
            if *hasher.finalize().as_bytes() == digest {
                let last = self.items[k - 1];
                if last.first + last.entries <= recorded {
                    plan.items.extend_from_slice(&self.items[..k]);
                    at = last.first + last.entries;
                    skip = k;
                }
            }
            if skip == 0 {
                hasher = blake3::Hasher::new();
                hashed = 0;
            }
        }
        if keep > 0 {
            let start = if hashed == 0 {
                req.items[0].span.start
            } else {
                end_of(hashed)
            };
            if keep > hashed {
                hasher.update(&text[start..end_of(keep)]);
            }
            if keep >= hashed {
                plan.prefix = Some((keep, *hasher.finalize().as_bytes()));
            }
        }
        for i in skip..req.items.len() {
            let i32 = i as u32;
            // An item past the record is new from here on: its rows are kept
            // for the record to take.
            let new = at >= recorded;
            let compared = req.with_rows(i, new, |rows| {
                let side_of: Vec<(EntrySide, &Block)> = rows
                    .iter()
                    .flat_map(|r| r.content.iter().map(move |b| (EntrySide::of(r), b)))
                    .filter(|(side, b)| self.compares(*side, b))
                    .collect();
                let n = side_of.len() as u32;
                let system = !rows.is_empty()
                    && rows.iter().all(|r| EntrySide::of(r) == EntrySide::System);
                plan.items.push(ItemSeen {
                    first: at,
                    entries: n,
                    system,
                });
                if new {
                    return Ok(n);
                }
                for (k, (side, b)) in side_of.iter().enumerate() {
                    let e = at + k as u32;
                    if e >= recorded {
                        return Err(Divergence {
                            shared: recorded,
                            reason: format!(
                                "item {i} of the request goes on past the record's last entry: the client changed a message the proxy recorded"
                            ),
                        });
                    }
                    if self.entries[e as usize] != entry_digest(*side, b) {
                        return Err(Divergence {
                            shared: e,
                            reason: format!(
                                "item {i} of the request differs from the record at entry {}: the client edited, rewound or compacted its history",
                                e + 1
                            ),
                        });
                    }
                    plan.places.push((
                        e,
                        EntryPlace {
                            item: i32,
                            block: k as u32,
                        },
                    ));
                }
                Ok(n)
            })?;
            match compared {
                Ok(n) => at += n,
                Err(d) => return Ok(Err(d)),
            }
            if new {
                plan.new_items.push(i);
            }
        }
        if at < recorded {
            if let Some(a) = self.last_answer.as_ref().filter(|a| a.entry == at) {
                // The record up to its last answer, which the client did not
                // keep: a retry of that answer's call.
                plan.supersedes = Some(a.clone());
                return Ok(Ok(plan));
            }
            return Ok(Err(Divergence {
                shared: at,
                reason: format!(
                    "the request holds {at} of the record's {recorded} entries: the client went back (a rewind, or a retry of an answer it did not keep)"
                ),
            }));
        }
        Ok(Ok(plan))
    }

    /// Record what `plan` adds (one transaction, with the tool forms the new
    /// results mint), then take it in. `created`: the task's record and
    /// conversation row, written in the same transaction when this is its
    /// first request.
    pub(crate) fn record(
        &mut self,
        store: &mut Store,
        mut plan: Plan,
        new_rows: Vec<Message>,
        created: Option<(&TaskInfo, Vec<Message>)>,
    ) -> Result<(), StoreError> {
        let mut rows = Vec::new();
        if let Some((_, head)) = &created {
            rows.extend(head.iter().cloned());
        }
        // A retry's rows follow the record without the answer it supersedes.
        let step_now = plan
            .supersedes
            .as_ref()
            .map_or(self.step, |a| a.step_before);
        let (mut turn, mut step) = (self.turn, step_now);
        let mut prev_generation = false;
        let first_seq = self.rows + rows.len() as u64;
        for (j, mut m) in new_rows.into_iter().enumerate() {
            match m.kind {
                Kind::Ask => turn += 1,
                Kind::Generation if !prev_generation => step += 1,
                _ => {}
            }
            if m.kind == Kind::Generation {
                if !prev_generation || m.gen_id.is_none() {
                    m.gen_id = Some(format!("client-{}", first_seq + j as u64));
                }
            } else {
                m.gen_id = None;
            }
            prev_generation = m.kind == Kind::Generation;
            m.turn = turn;
            m.step = step;
            rows.push(m);
        }
        // Consecutive client-sent assistant rows are one generation.
        let mut last_gen: Option<String> = None;
        for m in &mut rows {
            if m.kind == Kind::Generation {
                match &last_gen {
                    Some(g) => m.gen_id = Some(g.clone()),
                    None => last_gen = m.gen_id.clone(),
                }
            } else {
                last_gen = None;
            }
        }
        // What the conversation takes of the new rows, noted now: the rows
        // go to the store one at a time, each let go once it is written.
        // One list for all of them, in order (a list a row held 23 MB
        // beside 20,000 tool results' rows).
        let head = self.meta.head_rows;
        let taken: Vec<Taken> = rows
            .iter()
            .enumerate()
            .filter(|(j, _)| self.rows + *j as u64 >= head)
            .flat_map(|(_, m)| self.taken(m))
            .collect();
        let added = !rows.is_empty();
        let task = self.meta.task_id.clone();
        let meta = &self.meta;
        let superseded = plan.supersedes.take().map(|a| {
            let mark = ProxySuperseded {
                seq: a.seq,
                attempt: a.attempt,
                // The attempt this retry is forwarded as.
                by_attempt: self.attempts + 1,
            };
            (a, mark)
        });
        let total = store.transaction(|tx| -> Result<u64, StoreError> {
            if let Some((record, _)) = &created {
                tx.upsert_task(record)?;
                tx.put_proxy_conversation(meta)?;
            }
            if let Some((_, mark)) = &superseded {
                tx.put_proxy_superseded(&task, mark)?;
            }
            // Each form written as it is made, before the rows are let go
            // (20,000 results' forms were all held at once).
            self.each_form(&rows, |f| tx.put_tool_form(&task, &f).map(drop))?;
            tx.append_owned_rows(&task, rows)
        })?;
        if let Some((a, _)) = superseded {
            self.forget_answer(&a);
        }
        if added {
            self.last_answer = None;
        }
        self.take(taken);
        self.rows = total;
        self.turn = turn;
        self.step = step;
        for (e, p) in plan.places {
            self.places[e as usize] = Some(p);
        }
        // The new entries were carried by this request too.
        for it in &plan.items {
            for k in 0..it.entries {
                let e = (it.first + k) as usize;
                if e < self.places.len() && self.places[e].is_none() {
                    self.places[e] = Some(EntryPlace {
                        item: plan.items.iter().position(|x| x == it).unwrap_or(0) as u32,
                        block: k,
                    });
                }
            }
        }
        self.items = plan.items;
        self.prefix = plan.prefix;
        Ok(())
    }

    /// Take the record's last answer out of what requests are compared
    /// with (it was superseded): its entries, the tool calls it opened and
    /// its step.
    fn forget_answer(&mut self, a: &LastAnswer) {
        let from = a.entry as usize;
        self.entries.truncate(from);
        self.origin.retain(|_, i| (*i as usize) < from);
        self.places.truncate(from);
        for id in &a.calls {
            self.open_calls.remove(id);
        }
        self.step = a.step_before;
        self.last_answer = None;
    }

    /// The forms the tool results among `rows` mint (their calls recorded
    /// before, or among `rows`), each handed to `put` as it is made.
    fn each_form<E>(
        &self,
        rows: &[Message],
        mut put: impl FnMut(ToolForm) -> Result<(), E>,
    ) -> Result<(), E> {
        let rules = ToolRules::default();
        let est = CharsPerToken::default();
        let mut calls: HashMap<&str, (&str, &Value)> = self
            .open_calls
            .iter()
            .map(|(id, (n, i))| (id.as_str(), (n.as_str(), i)))
            .collect();
        for m in rows {
            for b in &m.content {
                match b {
                    Block::ToolUse { id, name, input } => {
                        calls.insert(id, (name, input));
                    }
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } => {
                        if let Some((name, input)) = calls.remove(tool_use_id.as_str())
                            && let Some(f) = rules.compact(&est, tool_use_id, name, input, content)
                        {
                            put(f)?;
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Record the answer to a forwarded request, unless the record grew
    /// since (`rows` rows when it was forwarded) or a later request of the
    /// task was forwarded (a retry while it was in flight): then that
    /// request came first, and the answer no longer follows it.
    pub(crate) fn record_answer(
        &mut self,
        store: &mut Store,
        rows: u64,
        mut answer: Message,
        response: &crate::store::ProxyResponse,
    ) -> Result<bool, StoreError> {
        let overtaken = rows != self.rows || response.attempt != self.attempts;
        if overtaken || answer.content.is_empty() {
            let mut r = response.clone();
            r.outcome = if overtaken {
                "superseded".into()
            } else {
                "unparsed".into()
            };
            store.transaction(|tx| tx.put_proxy_response(&r))?;
            return Ok(false);
        }
        if self.gemini {
            // The answer is the content after the request's last.
            super::gemini::place_answer(&mut answer, self.items.len());
        }
        let step = self.step + 1;
        answer.turn = self.turn;
        answer.step = step;
        if answer.gen_id.as_deref().is_none_or(str::is_empty) {
            answer.gen_id = Some(format!("proxy-{}", response.attempt));
        }
        let task = self.meta.task_id.clone();
        let total = store.transaction(|tx| -> Result<u64, StoreError> {
            let total = tx.append_rows(&task, std::slice::from_ref(&answer))?;
            self.each_form(std::slice::from_ref(&answer), |f| {
                tx.put_tool_form(&task, &f).map(drop)
            })?;
            tx.put_proxy_response(response)?;
            Ok(total)
        })?;
        let entry = self.entries.len() as u32;
        self.take_row(&answer);
        self.last_answer = Some(LastAnswer {
            seq: total - 1,
            attempt: response.attempt,
            entry,
            step_before: self.step,
            calls: opened_calls(&answer),
        });
        self.rows = total;
        self.step = step;
        Ok(true)
    }

    /// The record's entry `digest` stands for, and where the latest request
    /// carried it: the item and block whose text the forwarded request can
    /// reuse.
    pub(crate) fn origin(&self, digest: &Digest) -> Option<EntryPlace> {
        let e = *self.origin.get(digest)?;
        self.places.get(e as usize).copied().flatten()
    }

    /// The digest of the record's entry `e`.
    pub(crate) fn entry(&self, e: u32) -> Option<Digest> {
        self.entries.get(e as usize).copied()
    }

    /// The latest request's items.
    pub(crate) fn items(&self) -> &[ItemSeen] {
        &self.items
    }
}

/// Whether an assistant row is an answer the proxy recorded (the client's
/// own assistant messages are recorded as `client-…` generations).
fn recorded_by_proxy(m: &Message) -> bool {
    m.gen_id
        .as_deref()
        .is_some_and(|g| !g.starts_with("client-"))
}

/// The tool calls a row opens.
fn opened_calls(m: &Message) -> Vec<String> {
    m.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

/// The rows a conversation's record starts with: its system prompt and
/// tool definitions, as one system row.
pub(crate) fn head_rows(req: &Request) -> Vec<Message> {
    let mut blocks = req.system.clone();
    if let Some(tools @ Value::Array(list)) = &req.tools
        && !list.is_empty()
    {
        blocks.push(Block::Other(
            serde_json::json!({"type": "tools", "tools": tools}),
        ));
    }
    system_rows(blocks)
}

/// The task record of a new conversation whose first rows are `rows`.
pub(crate) fn task_record(req: &Request, meta: &ProxyConversation, rows: &[Message]) -> TaskInfo {
    TaskInfo {
        id: meta.task_id.clone(),
        format: req.api.format().as_str().to_string(),
        parent_id: meta.parent_id.clone(),
        meta: TaskMeta {
            session_id: meta.session_id.clone(),
            cwd: cwd_of(rows),
            model: req.model.clone(),
            ..TaskMeta::default()
        },
    }
}

/// The project directory a conversation names (Claude Code's environment
/// message, Codex's environment context).
fn cwd_of(rows: &[Message]) -> Option<String> {
    for r in rows.iter().take(16) {
        {
            for b in &r.content {
                let Block::Text { text } = b else { continue };
                if let Some(rest) = text.split("Primary working directory: ").nth(1) {
                    return rest.lines().next().map(|l| l.trim().to_string());
                }
                if let Some(rest) = text.split("<cwd>").nth(1)
                    && let Some((cwd, _)) = rest.split_once("</cwd>")
                {
                    return Some(cwd.trim().to_string());
                }
            }
        }
    }
    None
}

/// The id of a conversation's task: `live-` and 16 hex digits of its
/// identity (and, for the n-th conversation of one identity, n).
pub(crate) fn task_id(identity: &str, nth: usize) -> String {
    let hex = if nth == 0 {
        identity[..16].to_string()
    } else {
        let h = blake3::hash(format!("{identity}/{nth}").as_bytes());
        h.to_hex()[..16].to_string()
    };
    format!("live-{hex}")
}
