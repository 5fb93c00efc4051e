//! The recorded reference: what the client itself sent and paid, its own
//! compactions included.
//!
//! Tokens and cost are the transcript's recorded usage (uncached input,
//! cache reads and writes, output), priced at the session's model. Its
//! views are what `probe --recorded` scores: the record since the client's
//! last own compaction summary, with the Task Context a compactor hook put
//! back. Those views are also priced as the policies are (estimated tokens,
//! the same cache model), so a policy's saving is measured on one basis.
//!
//! The views are not held: between two of the client's summaries a view
//! only gains messages at its end, so each call needs only what it added
//! (its tokens, its probe text), and a summary needs the view before it
//! only for the blocks the two share at their start, read again from the
//! record. Memory is one call's messages and the probes' automaton
//! ([`AppendScorer`]), whatever the length of the history.

use std::ops::Range;

use crate::engine::Status;
use crate::engine::estimate::{Estimator, block_tokens};
use crate::hooks::compare::{place_task_context, recorded_message};
use crate::model::{Block, Kind, Message, Role, Usage};
use crate::probe::Probe;
use crate::session::cost::{Prices, Totals};
use crate::store::ClientCompaction;
use crate::view::{View, ViewMessage, ViewRole};

use super::append::AppendScorer;
use super::{CallTally, Estimated, ReadRows, ReferenceRecord, Row, RowKind};

/// The recorded row of `record`, its views scored with `probes`, its rows
/// read with `read` as the calls reach them.
pub(crate) fn recorded_row<E>(
    record: &ReferenceRecord<'_>,
    compactions: &[ClientCompaction],
    probes: Vec<Probe>,
    read: &mut ReadRows<'_, E>,
) -> Result<Row, E> {
    let p = &record.prices;
    let mut sent = SentTail::new(compactions);
    let mut scorer = AppendScorer::new(probes);
    let mut estimated = Totals::default();
    let mut tally = CallTally::default();
    let mut view_tokens = 0u64;
    let mut usage = RecordedUsage::default();
    let mut compacted = 0u32;
    let mut fed = 0;
    for (i, call) in record.calls.iter().enumerate() {
        let mut client_compacted = false;
        read(fed..call.history_end, &mut |m| {
            client_compacted |= matches!(m.kind, Kind::CompactSummary | Kind::CompactBoundary);
            sent.feed(m);
        })?;
        fed = call.history_end;
        // A compaction of the client's between two calls.
        if i > 0 && client_compacted {
            compacted += 1;
        }
        if let Some(u) = call.usage {
            usage.add(&u, p);
        }
        // The cache split against the call before, as `CacheSplitter` makes
        // it: the leading blocks shared with the last view are read.
        let step = sent.end_call();
        let added = sent.added();
        let (r, w) = match step {
            Step::Grew => {
                let added_tokens = tokens_from(added, 0, record.estimator);
                scorer.extend(added, 0);
                let read = record.overhead + view_tokens;
                view_tokens += added_tokens;
                (read, added_tokens)
            }
            Step::Rebuilt { before } => {
                let (shared, extends) = shared_with(&before, added, read)?;
                estimated.prefix_breaks += u32::from(!extends);
                let shared_tokens = tokens_to(added, shared, record.estimator);
                view_tokens = tokens_from(added, 0, record.estimator);
                scorer.rebuild(added);
                (record.overhead + shared_tokens, view_tokens - shared_tokens)
            }
        };
        let (r, w) = match i {
            0 => (0, r + w),
            _ => (r, w),
        };
        record.add_call(&mut estimated, i, r, w);
        let e = scorer.score(call.history_end);
        let tokens = call.usage.map_or(0, |u| u.prompt_tokens());
        tally.add_counts(i as u32 + 1, tokens, Status::Ok, &[], e);
    }
    Ok(usage.row(record, compacted, &tally, &estimated))
}

/// What the client's own calls recorded of their usage, summed, and priced
/// at the session's prices: the recorded row's figures.
#[derive(Debug, Default)]
pub(crate) struct RecordedUsage {
    prompt: u64,
    read: u64,
    write: u64,
    output: u64,
    cost: u64,
    calls: u32,
    peak: u64,
}

impl RecordedUsage {
    /// One call's usage.
    pub(crate) fn add(&mut self, u: &Usage, p: &Prices) {
        self.calls += 1;
        self.prompt += u.prompt_tokens();
        self.read += u.cache_read_input_tokens;
        self.write += u.cache_creation_input_tokens;
        self.output += u.output_tokens;
        self.peak = self.peak.max(u.prompt_tokens());
        self.cost += Prices::cost(p.input, u.input_tokens)
            + Prices::cost(p.cache_read, u.cache_read_input_tokens)
            + Prices::cost(p.cache_write, u.cache_creation_input_tokens)
            + Prices::cost(p.output, u.output_tokens);
    }

    /// The recorded row: these sums, the client's `compacted` compactions,
    /// the views' scores (`tally`) and what the views cost by the estimate.
    pub(crate) fn row(
        self,
        record: &ReferenceRecord<'_>,
        compacted: u32,
        tally: &CallTally,
        estimated: &Totals,
    ) -> Row {
        let c = &estimated.compacted;
        Row {
            kind: RowKind::Recorded,
            session: record.session.task.clone(),
            model: record.session.model.clone(),
            policy: None,
            calls: record.calls.len() as u32,
            over_window_calls: None,
            breakthrough_calls: None,
            folds: Some(compacted),
            tiers: None,
            trimmed_calls: None,
            prompt_tokens: self.prompt,
            cache_read_tokens: self.read,
            cache_write_tokens: self.write,
            output_tokens: self.output,
            cost_micros: self.cost,
            peak_tokens: self.peak,
            critical_lost: tally.last_critical_lost,
            worst: tally.worst,
            basis: "recorded".to_string(),
            usage_calls: Some(self.calls),
            estimated: Some(Estimated {
                prompt_tokens: c.prompt_tokens,
                cache_read_tokens: c.cache_read_tokens,
                cache_write_tokens: c.cache_write_tokens,
                cost_micros: c.cost_cached_usd.0 + estimated.cost_output_usd.0,
            }),
            prefix_breaks: estimated.prefix_breaks,
        }
    }
}

fn blocks(v: &View) -> impl Iterator<Item = (&ViewMessage, &Block)> {
    v.messages
        .iter()
        .flat_map(|m| m.content.iter().map(move |b| (m, b)))
}

/// Tokens of the view's blocks from block `from` on.
fn tokens_from(v: &View, from: usize, est: &dyn Estimator) -> u64 {
    blocks(v)
        .skip(from)
        .map(|(_, b)| block_tokens(est, b))
        .sum()
}

/// Tokens of the view's first `to` blocks.
fn tokens_to(v: &View, to: usize, est: &dyn Estimator) -> u64 {
    blocks(v).take(to).map(|(_, b)| block_tokens(est, b)).sum()
}

/// Leading blocks the view `before` spans and `view` share, role and block
/// alike, and whether `view` extends `before` (shares all of its blocks):
/// `before`'s blocks read again from the record, up to the first that
/// differs.
pub(crate) fn shared_with<E>(
    before: &Span,
    view: &View,
    read: &mut ReadRows<'_, E>,
) -> Result<(usize, bool), E> {
    let mut theirs = blocks(view);
    let (mut shared, mut extends) = (0, true);
    span_blocks(before, read, &mut |role, b| {
        let same = theirs
            .next()
            .is_some_and(|(m, theirs)| m.role == role && theirs == b);
        shared += usize::from(same);
        extends &= same;
        same
    })?;
    Ok((shared, extends))
}

/// The blocks of the view `span` spans, each with its message's role, read
/// from the record a row at a time while `f` asks for more (returns true).
pub(crate) fn span_blocks<E>(
    span: &Span,
    read: &mut ReadRows<'_, E>,
    f: &mut dyn FnMut(ViewRole, &Block) -> bool,
) -> Result<(), E> {
    let task_context = span.task_context.as_ref().map(|(role, text)| {
        let block = Block::Text { text: text.clone() };
        (*role, block)
    });
    let (mut more, mut first) = (true, true);
    for row in span.rows.clone() {
        if !more {
            break;
        }
        read(row..row + 1, &mut |m| {
            let Some(message) = recorded_message(m) else {
                return;
            };
            for b in &message.content {
                more = more && f(message.role, b);
            }
            // The Task Context follows the first message's blocks.
            if std::mem::take(&mut first)
                && let Some((role, b)) = &task_context
            {
                more = more && f(*role, b);
            }
        })?;
    }
    Ok(())
}

/// A view of the client's as the record makes it again: the rows it was
/// made from (from the client's summary it starts at, else the record's
/// start) and the Task Context put back after its first message, with the
/// role it was sent under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) rows: Range<usize>,
    pub(crate) task_context: Option<(ViewRole, String)>,
}

/// How the client's view changed since the call before.
#[derive(Debug)]
pub(crate) enum Step {
    /// It gained the messages [`SentTail::added`] at its end.
    Grew,
    /// It was made anew (the client compacted) as [`SentTail::added`]; the
    /// view before, to be read again.
    Rebuilt { before: Span },
}

/// What the client sent, as [`crate::hooks::compare::sent_view`] makes it
/// from the record up to a call, kept call by call as later calls need it:
/// between two of the client's summaries the view only gains the rows after
/// it, so a call needs only the messages it added; at a summary the view
/// starts again from that summary. Holds the messages of the latest call's
/// rows, where the view's rows start and the rows of the summaries.
pub(crate) struct SentTail<'c> {
    compactions: &'c [ClientCompaction],
    /// The messages the latest call added (all of the view when it was made
    /// anew); once handed on, the next row starts the next call's.
    added: View,
    handed_on: bool,
    /// Rows fed.
    rows: usize,
    /// Where the client's summaries are, in order.
    summaries: Vec<usize>,
    /// The latest summary's role.
    summary_role: Role,
    /// A Task Context due after the latest summary, not yet placed (the view
    /// was empty).
    due: Option<String>,
    /// The view the rows fed so far make (its end is the last call's until
    /// the call ends).
    span: Span,
    /// The view at the last call's end, when a summary since made it anew.
    before: Option<Span>,
}

impl<'c> SentTail<'c> {
    pub(crate) fn new(compactions: &'c [ClientCompaction]) -> SentTail<'c> {
        SentTail {
            compactions,
            added: View {
                messages: Vec::new(),
            },
            handed_on: false,
            rows: 0,
            summaries: Vec::new(),
            summary_role: Role::User,
            due: None,
            span: Span {
                rows: 0..0,
                task_context: None,
            },
            before: None,
        }
    }

    fn start_call(&mut self) {
        if std::mem::take(&mut self.handed_on) {
            self.added.messages.clear();
        }
    }

    /// The record's next row.
    pub(crate) fn feed(&mut self, m: &Message) {
        self.start_call();
        if m.kind == Kind::CompactSummary {
            self.summaries.push(self.rows);
            self.summary_role = m.role;
            // The rows fed since the last call are no part of its view.
            self.added.messages.clear();
            let last = std::mem::replace(
                &mut self.span,
                Span {
                    rows: self.rows..self.rows,
                    task_context: None,
                },
            );
            self.before.get_or_insert(last);
        }
        self.rows += 1;
        if let Some(message) = recorded_message(m) {
            self.added.messages.push(message);
        }
    }

    /// A call's history is fed: its view is complete. How it changed; what
    /// it added is [`SentTail::added`].
    pub(crate) fn end_call(&mut self) -> Step {
        self.start_call();
        let step = match self.before.take() {
            Some(before) => {
                self.due = self.task_context().map(str::to_string);
                Step::Rebuilt { before }
            }
            None => Step::Grew,
        };
        // A Task Context is due only while the view is empty, so the view's
        // first message is one this call added.
        if let Some(first) = self.added.messages.first()
            && let Some(text) = self.due.take()
        {
            let role = match self.summary_role {
                Role::Assistant => ViewRole::User,
                _ => first.role,
            };
            place_task_context(&mut self.added, self.summary_role, &text);
            self.span.task_context = Some((role, text));
        }
        self.span.rows.end = self.rows;
        self.handed_on = true;
        step
    }

    /// The messages the latest call added at the view's end (all of the
    /// view when it was made anew).
    pub(crate) fn added(&self) -> &View {
        &self.added
    }

    /// The view at the latest call, as the record makes it again.
    #[cfg(test)]
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// The Task Context a hook put back after the latest summary: that of
    /// the latest compaction the hooks saw whose summary it is (the first
    /// summary at or after the history the compaction replaced).
    fn task_context(&self) -> Option<&'c str> {
        let last = *self.summaries.last()?;
        let summaries = &self.summaries;
        self.compactions
            .iter()
            .rev()
            .find(|c| {
                let from = c.history_rows as usize;
                from <= last && summaries.iter().find(|&&s| s >= from) == Some(&last)
            })
            .and_then(|c| c.task_context.as_deref())
    }
}

/// The client's whole view, put together from [`SentTail`]'s steps: what
/// the tests hold to `sent_view` call by call.
#[cfg(test)]
pub(crate) struct SentView<'c> {
    tail: SentTail<'c>,
    pub(crate) view: View,
}

/// How the whole view changed since the call before.
#[cfg(test)]
pub(crate) enum Change {
    /// It gained blocks at its end, those from block `from` on.
    Grew { from: usize },
    /// It was made anew (the client compacted): the view before.
    Rebuilt { before: View },
}

#[cfg(test)]
impl<'c> SentView<'c> {
    pub(crate) fn new(compactions: &'c [ClientCompaction]) -> SentView<'c> {
        SentView {
            tail: SentTail::new(compactions),
            view: View {
                messages: Vec::new(),
            },
        }
    }

    pub(crate) fn feed(&mut self, m: &Message) {
        self.tail.feed(m);
    }

    /// The view at the latest call, as the record makes it again.
    pub(crate) fn span(&self) -> &Span {
        self.tail.span()
    }

    pub(crate) fn end_call(&mut self) -> Change {
        let step = self.tail.end_call();
        let added = self.tail.added().messages.iter().cloned();
        match step {
            Step::Grew => {
                let from = blocks(&self.view).count();
                self.view.messages.extend(added);
                Change::Grew { from }
            }
            Step::Rebuilt { .. } => {
                let before = std::mem::replace(&mut self.view.messages, added.collect());
                Change::Rebuilt {
                    before: View { messages: before },
                }
            }
        }
    }
}
