//! Cost accounting of a replay.
//!
//! Cache model (per call): the view's prefix that is byte-identical to the
//! previous call's view, plus the stable overhead, is re-read at the cache-read
//! price; the rest is written at the cache-write price. The raw, uncompacted
//! history is append-only, so all of the previous call is its cached prefix.
//! A call sent longer than the cache's lifetime after the previous one (by
//! the record's timestamps, [`CacheTtl`]) reads nothing and writes it all.
//! All money is integer micro-dollars: reports are deterministic too.

use serde::Serialize;

use crate::engine::estimate::{Estimator, block_tokens};
use crate::model::Block;
use crate::model::decimal::Micros;
use crate::view::{View, ViewRole};

/// Per-million-token prices. The built-in table of each model's prices is
/// `session::models`; these defaults price a model it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Prices {
    /// Uncached input.
    pub input: Micros,
    /// Input written to the prompt cache (OpenAI: the input price, no premium).
    pub cache_write: Micros,
    /// Input read from the prompt cache.
    pub cache_read: Micros,
    pub output: Micros,
}

impl Default for Prices {
    fn default() -> Self {
        Prices {
            input: Micros(3_000_000),
            cache_write: Micros(3_750_000),
            cache_read: Micros(300_000),
            output: Micros(15_000_000),
        }
    }
}

impl Prices {
    pub(crate) fn cost(price: Micros, tokens: u64) -> u64 {
        (u128::from(tokens) * u128::from(price.0) / 1_000_000) as u64
    }
}

/// How long a provider keeps a cached prefix after its last use: a call
/// sent longer than this after the one before reads nothing from the cache
/// and writes its whole prompt again. Anthropic's default breakpoints live
/// 5 minutes (1 hour at a higher write price); OpenAI's automatic prefix
/// cache lives 5 to 10 minutes of inactivity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum CacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

impl CacheTtl {
    pub fn millis(self) -> i64 {
        match self {
            CacheTtl::FiveMinutes => 5 * 60 * 1_000,
            CacheTtl::OneHour => 60 * 60 * 1_000,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
        }
    }
}

impl std::str::FromStr for CacheTtl {
    type Err = String;

    fn from_str(s: &str) -> Result<CacheTtl, String> {
        match s.trim() {
            "5m" => Ok(CacheTtl::FiveMinutes),
            "1h" => Ok(CacheTtl::OneHour),
            other => Err(format!(
                "{other:?} is not a cache lifetime; expected 5m or 1h"
            )),
        }
    }
}

/// A call's cache split `(read, write)` when its cache has expired (see
/// [`CacheTtl`]): nothing read, everything written.
pub(crate) fn expired(read: u64, write: u64) -> (u64, u64) {
    (0, read + write)
}

/// Money in JSON: integer micro-dollars.
fn micros<S: serde::Serializer>(m: &Micros, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(m.0)
}

/// Token and cost totals of a whole replay, for one history.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct CostTotals {
    pub prompt_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// With a prompt cache: reads at the read price, the rest at the write
    /// price. In JSON: integer micro-dollars (`cost_cached_micros`).
    #[serde(rename = "cost_cached_micros", serialize_with = "micros")]
    pub cost_cached_usd: Micros,
    /// Without a cache: every prompt token at the input price
    /// (`cost_uncached_micros`).
    #[serde(rename = "cost_uncached_micros", serialize_with = "micros")]
    pub cost_uncached_usd: Micros,
}

impl CostTotals {
    pub(crate) fn add(&mut self, read: u64, write: u64, prices: &Prices) {
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
    /// Calls whose compacted view does not extend the previous call's (the
    /// cache is written again from the first block that differs); the raw
    /// history, append-only, has none.
    pub prefix_breaks: u32,
    /// Calls sent longer than the cache lives after the call before (by the
    /// record's timestamps): under both histories they read nothing.
    pub cache_expired_calls: u32,
    /// The recorded output tokens of the calls replayed: the same under both
    /// histories (compaction changes what the model reads, not what it wrote).
    pub output_tokens: u64,
    /// Those tokens at the output price (`cost_output_micros`).
    #[serde(rename = "cost_output_micros", serialize_with = "micros")]
    pub cost_output_usd: Micros,
}

impl Totals {
    pub(crate) fn add_output(&mut self, tokens: u64, prices: &Prices) {
        self.output_tokens += tokens;
        self.cost_output_usd = Micros(self.cost_output_usd.0 + Prices::cost(prices.output, tokens));
    }
}

fn blocks(v: &View) -> Vec<(ViewRole, &Block)> {
    v.messages
        .iter()
        .flat_map(|m| m.content.iter().map(move |b| (m.role, b)))
        .collect()
}

/// Splits each view of a run into the cached prefix (shared block for block
/// with the previous view, plus the overhead) and the rest. The previous
/// view's cumulative block tokens are kept, so only the blocks after the
/// shared prefix are estimated.
#[derive(Default)]
pub(crate) struct CacheSplitter {
    /// `cum[i]`: the tokens of the last view's first `i` blocks.
    cum: Vec<u64>,
    /// The leading blocks the last view split shares with the one before.
    shared: Option<usize>,
    /// The last view split does not extend the one before.
    broke: bool,
}

impl CacheSplitter {
    /// How many leading blocks the last view split shares with the one
    /// split before it (`None` after a first view).
    pub(crate) fn shared_blocks(&self) -> Option<usize> {
        self.shared
    }

    /// Whether the last view split does not extend the one split before it
    /// (some block of that one is not the new view's at its place): a prefix
    /// break, where a prompt cache is written again.
    pub(crate) fn broke(&self) -> bool {
        self.broke
    }

    /// `prev` must be the view this splitter split last (or `None`).
    pub(crate) fn split(
        &mut self,
        prev: Option<&View>,
        view: &View,
        overhead: u64,
        est: &dyn Estimator,
    ) -> (u64, u64) {
        let now = blocks(view);
        let (shared, before) = match prev {
            Some(p) => {
                let before = blocks(p);
                let shared = before.iter().zip(&now).take_while(|(a, b)| a == b).count();
                (shared, before.len())
            }
            None => (0, 0),
        };
        self.shared = prev.map(|_| shared);
        self.broke = shared < before;
        if self.cum.is_empty() || prev.is_none() {
            self.cum = vec![0];
        }
        self.cum.truncate(shared + 1);
        for (_, b) in &now[shared..] {
            let last = *self.cum.last().expect("starts with 0");
            self.cum.push(last + block_tokens(est, b));
        }
        let total = overhead + self.cum[now.len()];
        if prev.is_none() {
            return (0, total);
        }
        let read = overhead + self.cum[shared];
        (read, total - read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::CharsPerToken;
    use crate::view::ViewMessage;

    /// The reference the splitter is held to: the shared leading blocks
    /// (and the overhead of 1000) are read from the cache, the rest written.
    fn cache_split(prev: Option<&View>, view: &View, est: &dyn Estimator) -> (u64, u64) {
        let now = blocks(view);
        let total: u64 = 1000 + now.iter().map(|(_, b)| block_tokens(est, b)).sum::<u64>();
        let Some(prev) = prev else { return (0, total) };
        let shared: u64 = blocks(prev)
            .iter()
            .zip(&now)
            .take_while(|(a, b)| a == b)
            .map(|(_, (_, b))| block_tokens(est, b))
            .sum();
        (1000 + shared, total - 1000 - shared)
    }

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
        assert_eq!(cache_split(None, &a, &est), (0, 1110));
        assert_eq!(cache_split(Some(&a), &b, &est), (1110, 20));
        let changed = View {
            messages: vec![m(ViewRole::User, "summary")],
        };
        assert_eq!(cache_split(Some(&b), &changed, &est), (1000, 2));
        // The splitter gives the same figures over a run of views.
        let mut s = CacheSplitter::default();
        let mut prev: Option<&View> = None;
        for v in [&a, &b, &changed, &a, &a, &b] {
            assert_eq!(s.split(prev, v, 1000, &est), cache_split(prev, v, &est));
            prev = Some(v);
        }
    }
}
