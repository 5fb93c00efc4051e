//! The recorded reference: what the client itself sent and paid, its own
//! compactions included.
//!
//! Tokens and cost are the transcript's recorded usage (uncached input,
//! cache reads and writes, output), priced at the session's model. Its
//! views are what `probe --recorded` scores: the record since the client's
//! last own compaction summary, with the Task Context a compactor hook put
//! back. Those views are also priced as the policies are (estimated tokens,
//! the same cache model), so a policy's saving is measured on one basis.

use crate::engine::Status;
use crate::engine::estimate::{Estimator, block_tokens};
use crate::hooks::compare::{place_task_context, recorded_message};
use crate::model::{Kind, Message, Role};
use crate::probe::Probe;
use crate::session::cost::{Prices, Totals};
use crate::store::ClientCompaction;
use crate::view::{View, ViewMessage};

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
    let mut sent = SentView::new(compactions);
    let mut scorer = AppendScorer::new(probes);
    let mut estimated = Totals::default();
    let mut tally = CallTally::default();
    let mut view_tokens = 0u64;
    let (mut prompt, mut read_tokens, mut write, mut output, mut cost) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut usage_calls, mut compacted) = (0u32, 0u32);
    let mut peak = 0;
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
            usage_calls += 1;
            prompt += u.prompt_tokens();
            read_tokens += u.cache_read_input_tokens;
            write += u.cache_creation_input_tokens;
            output += u.output_tokens;
            peak = peak.max(u.prompt_tokens());
            cost += Prices::cost(p.input, u.input_tokens)
                + Prices::cost(p.cache_read, u.cache_read_input_tokens)
                + Prices::cost(p.cache_write, u.cache_creation_input_tokens)
                + Prices::cost(p.output, u.output_tokens);
        }
        // The cache split against the call before, as `CacheSplitter` makes
        // it: the leading blocks shared with the last view are read.
        let (r, w) = match sent.end_call() {
            Change::Grew { from } => {
                let added = tokens_from(&sent.view, from, record.estimator);
                scorer.extend(&sent.view, from);
                let read = record.overhead + view_tokens;
                view_tokens += added;
                (read, added)
            }
            Change::Rebuilt { before } => {
                let shared = shared_blocks(&before, &sent.view);
                let shared_tokens = tokens_to(&sent.view, shared, record.estimator);
                view_tokens = tokens_from(&sent.view, 0, record.estimator);
                scorer.rebuild(&sent.view);
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
    let c = &estimated.compacted;
    Ok(Row {
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
        prompt_tokens: prompt,
        cache_read_tokens: read_tokens,
        cache_write_tokens: write,
        output_tokens: output,
        cost_micros: cost,
        peak_tokens: peak,
        critical_lost: tally.last_critical_lost,
        worst: tally.worst,
        basis: "recorded".to_string(),
        usage_calls: Some(usage_calls),
        estimated: Some(Estimated {
            prompt_tokens: c.prompt_tokens,
            cache_read_tokens: c.cache_read_tokens,
            cache_write_tokens: c.cache_write_tokens,
            cost_micros: c.cost_cached_usd.0 + estimated.cost_output_usd.0,
        }),
    })
}

fn blocks(v: &View) -> impl Iterator<Item = (&ViewMessage, &crate::model::Block)> {
    v.messages
        .iter()
        .flat_map(|m| m.content.iter().map(move |b| (m, b)))
}

/// Leading blocks two views share, role and block alike.
fn shared_blocks(a: &View, b: &View) -> usize {
    blocks(a)
        .zip(blocks(b))
        .take_while(|((ma, a), (mb, b))| ma.role == mb.role && a == b)
        .count()
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

/// How the client's view changed since the call before.
pub(crate) enum Change {
    /// It gained blocks at its end, those from block `from` on.
    Grew { from: usize },
    /// It was made anew (the client compacted): the view before.
    Rebuilt { before: View },
}

/// What the client sent, as [`crate::hooks::compare::sent_view`] makes it
/// from the record up to a call, kept call by call: between two of the
/// client's summaries the view only gains the rows after it, so it grows;
/// at a summary it starts again from that summary. Holds the latest view,
/// the rows of the summaries and nothing else of the record.
pub(crate) struct SentView<'c> {
    compactions: &'c [ClientCompaction],
    pub(crate) view: View,
    /// Rows fed.
    rows: usize,
    /// Where the client's summaries are, in order.
    summaries: Vec<usize>,
    /// The latest summary's role.
    summary_role: Role,
    /// A Task Context due after the latest summary, not yet placed (the view
    /// was empty).
    due: Option<String>,
    /// Messages and blocks of the view at the last call's end.
    messages_before: usize,
    blocks_before: usize,
    /// The view at the last call's end, when a summary since made it anew.
    before: Option<View>,
}

impl<'c> SentView<'c> {
    pub(crate) fn new(compactions: &'c [ClientCompaction]) -> SentView<'c> {
        SentView {
            compactions,
            view: View {
                messages: Vec::new(),
            },
            rows: 0,
            summaries: Vec::new(),
            summary_role: Role::User,
            due: None,
            messages_before: 0,
            blocks_before: 0,
            before: None,
        }
    }

    /// The record's next row.
    pub(crate) fn feed(&mut self, m: &Message) {
        if m.kind == Kind::CompactSummary {
            self.summaries.push(self.rows);
            self.summary_role = m.role;
            let mut old = std::mem::replace(
                &mut self.view,
                View {
                    messages: Vec::new(),
                },
            );
            if self.before.is_none() {
                // The rows fed since the last call are no part of its view.
                old.messages.truncate(self.messages_before);
                self.before = Some(old);
            }
        }
        self.rows += 1;
        if let Some(message) = recorded_message(m) {
            self.view.messages.push(message);
        }
    }

    /// A call's history is fed: its view is complete. How it changed.
    pub(crate) fn end_call(&mut self) -> Change {
        let change = match self.before.take() {
            Some(before) => {
                self.due = self.task_context().map(str::to_string);
                Change::Rebuilt { before }
            }
            None => Change::Grew {
                from: self.blocks_before,
            },
        };
        if !self.view.messages.is_empty()
            && let Some(text) = self.due.take()
        {
            place_task_context(&mut self.view, self.summary_role, &text);
        }
        self.messages_before = self.view.messages.len();
        self.blocks_before = self.view.messages.iter().map(|m| m.content.len()).sum();
        change
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
