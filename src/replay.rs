//! Replay a stored task call by call as a live engine would have, keeping the
//! store between calls, and account for what a prompt cache would have done.
//!
//! Cache model (per call): the view's prefix that is byte-identical to the
//! previous call's view, plus the stable overhead, is re-read at the cache-read
//! price; the rest is written at the cache-write price. The raw, uncompacted
//! history is append-only, so all of the previous call is its cached prefix.
//! All money is integer micro-dollars: reports are deterministic too.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::decimal::{DecimalError, parse_millionths};

use crate::driver::{Driver, RunSettings, TaskRecordIndex};
use crate::engine::estimate::{Estimator, block_tokens};
use crate::engine::parts::PartsBuilder;
use crate::engine::{CallOutput, Report, Status};
use crate::store::{Store, StoreError};
use crate::view::View;

/// A price or amount in micro-dollars, parsed from a decimal such as `3.75`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Micros(pub u64);

impl FromStr for Micros {
    type Err = String;

    fn from_str(s: &str) -> Result<Micros, String> {
        parse_millionths(s.trim().trim_start_matches('$'))
            .map(Micros)
            .map_err(|e| match e {
                DecimalError::TooPrecise => format!("{s:?} has more than six decimals"),
                _ => format!("{s:?} is not a price; expected a decimal such as 3.75"),
            })
    }
}

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

impl Serialize for Micros {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Per-million-token prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Prices {
    pub input: Micros,
    pub cache_write: Micros,
    pub cache_read: Micros,
}

impl Default for Prices {
    fn default() -> Self {
        Prices {
            input: Micros(3_000_000),
            cache_write: Micros(3_750_000),
            cache_read: Micros(300_000),
        }
    }
}

impl Prices {
    fn cost(price: Micros, tokens: u64) -> u64 {
        (u128::from(tokens) * u128::from(price.0) / 1_000_000) as u64
    }
}

/// One row of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    pub turn: u32,
    pub step: u32,
    pub tiers_fired: Vec<&'static str>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub status: Status,
    pub view_hash: String,
    pub recorded_prompt_tokens: Option<u64>,
    pub parts_shrunk: u32,
    pub parts_dropped: u32,
    pub parts_folded: u64,
    /// Tokens a prompt cache would re-read (the prefix shared with the previous view).
    pub cache_read_tokens: u64,
    /// Tokens it would write (everything after that prefix).
    pub cache_write_tokens: u64,
    /// The raw, uncompacted history at this call (overhead + estimate).
    pub raw_tokens: u64,
    pub synthetic_results: u32,
    pub messages: usize,
}

/// Token and cost totals of a whole replay, for one history.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct CostTotals {
    pub prompt_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// With a prompt cache: reads at the read price, the rest at the write price.
    pub cost_cached_usd: Micros,
    /// Without a cache: every prompt token at the input price.
    pub cost_uncached_usd: Micros,
}

impl CostTotals {
    fn add(&mut self, read: u64, write: u64, prices: &Prices) {
        self.prompt_tokens += read + write;
        self.cache_read_tokens += read;
        self.cache_write_tokens += write;
        self.cost_cached_usd = Micros(
            self.cost_cached_usd.0
                + Prices::cost(prices.cache_read, read)
                + Prices::cost(prices.cache_write, write),
        );
        self.cost_uncached_usd =
            Micros(self.cost_uncached_usd.0 + Prices::cost(prices.input, read + write));
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub calls: u32,
    pub compacted: CostTotals,
    pub raw: CostTotals,
}

#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// First call to report (and, with `resume`, to run).
    pub from: u32,
    /// Last call to run and report.
    pub to: u32,
    /// Calls before `from` already ran on this store: do not run them again
    /// (what a restarted engine does; the checkpoint is re-derived).
    pub resume: bool,
    pub prices: Prices,
    /// Record progress after every call (in-place replays), under these settings.
    pub progress: Option<serde_json::Value>,
}

/// Replay `opts.from..=opts.to`, calling `on_call` after each reported call
/// (its row and output) so callers can print, write views or draw progress.
pub fn replay<E: From<StoreError>>(
    store: &mut Store,
    index: &TaskRecordIndex,
    settings: RunSettings<'_>,
    opts: ReplayOptions,
    mut on_call: impl FnMut(&StepRow, &CallOutput) -> Result<(), E>,
) -> Result<(Vec<StepRow>, Totals), E> {
    let est = settings.estimator;
    let overhead = index.overhead(est).unwrap_or(0);
    let mut driver = Driver::new(store, index, settings)?;
    if let Some(p) = &opts.progress {
        driver.record_progress(p.clone());
    }
    let mut raw = PartsBuilder::default();
    let mut raw_fed = 0usize;
    let mut raw_prev: Option<u64> = None;
    let mut prev_view: Option<View> = None;
    let mut rows = Vec::new();
    let mut totals = Totals::default();
    let start = if opts.resume { opts.from.max(1) } else { 1 };
    for k in start..=opts.to {
        let out = driver.step(store, k)?;
        // The raw history at this call, for comparison.
        let end = index.history_end(k);
        for m in &index.rows[raw_fed..end] {
            raw.push(m, est);
        }
        raw_fed = end;
        let raw_tokens = overhead + raw.parts.iter().map(|p| p.tokens).sum::<u64>();
        let (read, write) = cache_split(prev_view.as_ref(), &out.view, overhead, est);
        if k >= opts.from {
            let raw_read = raw_prev.map_or(0, |p| p.min(raw_tokens));
            totals.calls += 1;
            totals.compacted.add(read, write, &opts.prices);
            totals
                .raw
                .add(raw_read, raw_tokens - raw_read, &opts.prices);
            let row = step_row(
                &out.report,
                index.recorded_prompt(k),
                read,
                write,
                raw_tokens,
            );
            on_call(&row, &out)?;
            rows.push(row);
        }
        raw_prev = Some(raw_tokens);
        prev_view = Some(out.view);
    }
    Ok((rows, totals))
}

fn step_row(r: &Report, recorded: Option<u64>, read: u64, write: u64, raw_tokens: u64) -> StepRow {
    StepRow {
        turn: r.turn,
        step: r.call,
        tiers_fired: r.tiers_fired.clone(),
        tokens_before: r.tokens_before,
        tokens_after: r.tokens_after,
        status: r.status,
        view_hash: r.view_hash.clone(),
        recorded_prompt_tokens: recorded,
        parts_shrunk: r.tiers.iter().map(|t| t.parts_shrunk).sum(),
        parts_dropped: r.tiers.iter().map(|t| t.parts_dropped).sum(),
        parts_folded: r.tiers.iter().map(|t| t.parts_folded).sum(),
        cache_read_tokens: read,
        cache_write_tokens: write,
        raw_tokens,
        synthetic_results: r.synthetic_results,
        messages: r.messages,
    }
}

/// Split a view's tokens into the cached prefix (shared block for block with
/// the previous view, plus the overhead) and the rest.
fn blocks(v: &View) -> Vec<(crate::view::ViewRole, &crate::model::Block)> {
    v.messages
        .iter()
        .flat_map(|m| m.content.iter().map(move |b| (m.role, b)))
        .collect()
}

pub fn cache_split(
    prev: Option<&View>,
    view: &View,
    overhead: u64,
    est: &dyn Estimator,
) -> (u64, u64) {
    let now = blocks(view);
    let total: u64 = overhead + now.iter().map(|(_, b)| block_tokens(est, b)).sum::<u64>();
    let Some(prev) = prev else { return (0, total) };
    let before = blocks(prev);
    let shared: u64 = before
        .iter()
        .zip(&now)
        .take_while(|(a, b)| a == b)
        .map(|(_, (_, b))| block_tokens(est, b))
        .sum();
    let read = overhead + shared;
    (read, total - read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::CharsPerToken;
    use crate::model::Block;
    use crate::view::{ViewMessage, ViewRole};

    #[test]
    fn prices_parse_and_print_exactly() {
        assert_eq!("3.75".parse::<Micros>().unwrap(), Micros(3_750_000));
        assert_eq!("0.3".parse::<Micros>().unwrap(), Micros(300_000));
        assert_eq!("$2".parse::<Micros>().unwrap(), Micros(2_000_000));
        assert!("-1".parse::<Micros>().is_err());
        assert!("1.1234567".parse::<Micros>().is_err());
        assert_eq!(Micros(1_234_567).to_string(), "1.234567");
        // A million tokens at $3.00 cost $3.
        assert_eq!(Prices::cost(Micros(3_000_000), 1_000_000), 3_000_000);
    }

    #[test]
    fn the_cached_prefix_is_the_shared_leading_blocks_plus_overhead() {
        let est = CharsPerToken::default();
        let m = |role, t: &str| ViewMessage {
            role,
            content: vec![Block::Text { text: t.into() }],
        };
        let a = View {
            messages: vec![
                m(ViewRole::User, &"a".repeat(400)),
                m(ViewRole::Assistant, &"b".repeat(40)),
            ],
        };
        let b = View {
            messages: vec![
                m(ViewRole::User, &"a".repeat(400)),
                m(ViewRole::Assistant, &"b".repeat(40)),
                m(ViewRole::User, &"c".repeat(80)),
            ],
        };
        assert_eq!(cache_split(None, &a, 1000, &est), (0, 1110));
        assert_eq!(cache_split(Some(&a), &b, 1000, &est), (1110, 20));
        let changed = View {
            messages: vec![m(ViewRole::User, "summary")],
        };
        assert_eq!(cache_split(Some(&b), &changed, 1000, &est), (1000, 2));
    }
}
