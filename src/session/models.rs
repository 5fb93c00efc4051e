//! What a model implies for a run: its context window and its prices. A data
//! table, not code paths: the built-in one (`models.json`, embedded) lists
//! current Anthropic and OpenAI models; `--prices FILE` puts a user's prices
//! ahead of it, in the same shape without the windows:
//!
//! ```json
//! {"models": [{"models": ["claude-opus-4-6", "my-proxy-model*"],
//!              "input": "5", "cache_write": "6.25", "cache_read": "0.50", "output": "25"}],
//!  "default": {"input": "3", "cache_write": "3.75", "cache_read": "0.30", "output": "15"}}
//! ```
//!
//! Prices are USD per million tokens, exact decimals (a string or a JSON
//! number, up to six decimals). A name matches the model of that name and
//! its dated snapshots (`claude-sonnet-4-5-20250929`, `…@20250929`,
//! `gpt-5-2025-08-07`); a trailing `*` matches a prefix. Names are compared
//! without case, after a provider path (`openai/`) and a `[1m]` suffix are
//! taken off; `[1m]` asks for the model's 1M variant.

use std::sync::OnceLock;

use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::value::RawValue;

use super::cost::Prices;
use crate::model::decimal::Micros;

/// The built-in table (documented in the guide, docs/src/reference/models.md).
const BUILT_IN: &str = include_str!("models.json");

/// One row of the table: the models it names, their window and prices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEntry {
    pub models: Vec<String>,
    /// The largest prompt plus output the provider accepts (OpenAI: the
    /// largest prompt, context minus the maximum output).
    pub window: u64,
    /// The window of the model's 1M variant, where it has one (asked for by
    /// `[1m]` or recorded by the session).
    pub window_1m: Option<u64>,
    pub prices: Prices,
}

/// The built-in table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelTable {
    pub entries: Vec<ModelEntry>,
    pub default_window: u64,
    pub default_prices: Prices,
}

/// A `--prices` file: prices that override the table's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PriceFile {
    pub entries: Vec<(Vec<String>, Prices)>,
    /// Prices of a model neither the file nor the table knows.
    pub default: Option<Prices>,
}

/// Where a run's window came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowFrom {
    /// `--window` (or `COMPACTION_CONTEXT_WINDOW`).
    Flag,
    /// What the session itself recorded (Codex's `model_context_window`, a
    /// Claude Code request for the 1M context).
    Recorded,
    /// The table's row for this model.
    Model(String),
    /// The table's 1M variant of this model.
    Model1m(String),
    /// A model the table does not know (`None`: the transcript names none).
    Unknown(Option<String>),
}

/// Where a run's prices came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PricesFrom {
    /// Every price given by a `--price-*` flag.
    Flags,
    /// The `--prices` file's row for the model.
    File(String),
    /// The built-in table's row for the model.
    Table(String),
    /// The defaults: the model is unknown (`None`: the transcript names none).
    Default(Option<String>),
}

/// Why a table does not parse; `line` and `column` locate it in the file.
#[derive(Debug, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct TableError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl From<serde_json::Error> for TableError {
    fn from(e: serde_json::Error) -> TableError {
        TableError {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        }
    }
}

/// A price: a decimal string or number, read from its JSON text (no float).
fn price<'de, D: Deserializer<'de>>(d: D) -> Result<Micros, D::Error> {
    let raw = Box::<RawValue>::deserialize(d)?;
    let text = raw.get();
    let digits = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    digits.parse::<Micros>().map_err(|e| {
        de::Error::custom(format!(
            "{e}: a price is USD per million tokens, such as \"3.75\" or 3.75"
        ))
    })
}

/// A row as a file writes it: its own fields, then the four prices, and no
/// other key; `prices()` gives the four as [`Prices`].
macro_rules! row_in {
    ($(#[$doc:meta])* $name:ident { $($field:ident: $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $name {
            $($field: $ty,)*
            #[serde(deserialize_with = "price")]
            input: Micros,
            #[serde(deserialize_with = "price")]
            cache_write: Micros,
            #[serde(deserialize_with = "price")]
            cache_read: Micros,
            #[serde(deserialize_with = "price")]
            output: Micros,
        }

        impl $name {
            fn prices(&self) -> Prices {
                Prices {
                    input: self.input,
                    cache_write: self.cache_write,
                    cache_read: self.cache_read,
                    output: self.output,
                }
            }
        }
    };
}

row_in!(
    /// The four prices alone: a `--prices` file's `default`.
    PricesIn {}
);
row_in!(
    /// A `--prices` file's row.
    PriceRowIn { models: Vec<String> }
);
row_in!(
    /// A row of the built-in table.
    ModelRowIn { models: Vec<String>, window: u64, window_1m: Option<u64> }
);
row_in!(
    /// The built-in table's `default`.
    DefaultRowIn { window: u64 }
);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PriceFileIn {
    #[serde(default)]
    models: Vec<PriceRowIn>,
    default: Option<PricesIn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelTableIn {
    default: DefaultRowIn,
    models: Vec<ModelRowIn>,
}

/// A model name as the table compares it, and whether it asks for the 1M
/// variant: lower case, without a provider path or a `[1m]` suffix.
fn normalise(model: &str) -> (String, bool) {
    let name = model.trim().to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name).to_string();
    match name.strip_suffix("[1m]") {
        Some(base) => (base.to_string(), true),
        None => (name, false),
    }
}

/// A dated snapshot's suffix: `-20250929`, `@20250929` or `-2025-08-07`.
fn is_snapshot_suffix(rest: &str) -> bool {
    let Some(date) = rest.strip_prefix('-').or_else(|| rest.strip_prefix('@')) else {
        return false;
    };
    let b = date.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    match b.len() {
        8 => digits(0..8),
        10 => digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10),
        _ => false,
    }
}

/// Whether a table name (`claude-opus-4-6`, `my-model*`) names `model` (normalised).
fn name_matches(pattern: &str, model: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    match pattern.strip_suffix('*') {
        Some(prefix) => model.starts_with(prefix),
        None => {
            model == pattern
                || model
                    .strip_prefix(pattern.as_str())
                    .is_some_and(is_snapshot_suffix)
        }
    }
}

fn matches_any(patterns: &[String], model: &str) -> bool {
    patterns.iter().any(|p| name_matches(p, model))
}

impl ModelTable {
    /// The built-in table.
    pub fn built_in() -> &'static ModelTable {
        static TABLE: OnceLock<ModelTable> = OnceLock::new();
        TABLE.get_or_init(|| ModelTable::parse(BUILT_IN).expect("the built-in model table parses"))
    }

    /// A table in the built-in format.
    pub fn parse(json: &str) -> Result<ModelTable, TableError> {
        let t: ModelTableIn = serde_json::from_str(json)?;
        let d = t.default;
        Ok(ModelTable {
            default_window: d.window,
            default_prices: d.prices(),
            entries: t
                .models
                .into_iter()
                .map(|r| ModelEntry {
                    prices: r.prices(),
                    models: r.models,
                    window: r.window,
                    window_1m: r.window_1m,
                })
                .collect(),
        })
    }

    /// The first row naming `model`.
    pub fn entry(&self, model: &str) -> Option<&ModelEntry> {
        let (name, _) = normalise(model);
        self.entries.iter().find(|e| matches_any(&e.models, &name))
    }

    /// The window of a run not given one: what the session recorded, else
    /// the model's (its 1M variant when the name asks for it), else the
    /// default.
    pub fn window(&self, model: Option<&str>, recorded: Option<u64>) -> (u64, WindowFrom) {
        if let Some(w) = recorded.filter(|w| *w > 0) {
            return (w, WindowFrom::Recorded);
        }
        let Some(model) = model else {
            return (self.default_window, WindowFrom::Unknown(None));
        };
        let (_, wants_1m) = normalise(model);
        match self.entry(model) {
            Some(e) => match e.window_1m.filter(|_| wants_1m) {
                Some(w) => (w, WindowFrom::Model1m(model.to_string())),
                None => (e.window, WindowFrom::Model(model.to_string())),
            },
            None => (
                self.default_window,
                WindowFrom::Unknown(Some(model.to_string())),
            ),
        }
    }

    /// A model's prices: the `--prices` file's row, else the table's, else
    /// the file's default, else the table's.
    pub fn prices(&self, model: Option<&str>, file: Option<&PriceFile>) -> (Prices, PricesFrom) {
        if let Some(model) = model {
            let (name, _) = normalise(model);
            let from_file = file.and_then(|f| {
                f.entries
                    .iter()
                    .find(|(patterns, _)| matches_any(patterns, &name))
            });
            if let Some((_, p)) = from_file {
                return (*p, PricesFrom::File(model.to_string()));
            }
            if let Some(e) = self.entry(model) {
                return (e.prices, PricesFrom::Table(model.to_string()));
            }
        }
        let default = file.and_then(|f| f.default).unwrap_or(self.default_prices);
        (default, PricesFrom::Default(model.map(str::to_string)))
    }
}

impl PriceFile {
    /// A `--prices` file's text.
    pub fn parse(json: &str) -> Result<PriceFile, TableError> {
        let f: PriceFileIn = serde_json::from_str(json)?;
        Ok(PriceFile {
            entries: f
                .models
                .into_iter()
                .map(|r| {
                    let prices = r.prices();
                    (r.models, prices)
                })
                .collect(),
            default: f.default.map(|d| d.prices()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(usd: &str) -> Micros {
        usd.parse().unwrap()
    }

    #[test]
    fn every_model_the_corpus_records_is_in_the_table() {
        let t = ModelTable::built_in();
        // Each model named by the corpus transcripts and the fixtures, with
        // the window and the input and cache-read prices it is given.
        for (model, window, input, read) in [
            ("claude-opus-4-6", 200_000, "5", "0.5"),
            ("claude-opus-4-7", 1_000_000, "5", "0.5"),
            ("claude-opus-4-5-20251101", 200_000, "5", "0.5"),
            ("claude-sonnet-4-5-20250929", 200_000, "3", "0.3"),
            ("claude-sonnet-4-20250514", 200_000, "3", "0.3"),
            ("claude-sonnet-4-6", 200_000, "3", "0.3"),
            ("claude-haiku-4-5-20251001", 200_000, "1", "0.1"),
            ("claude-opus-5-5", 1_000_000, "4", "0.2"),
            ("gpt-5-codex", 272_000, "1.25", "0.125"),
            ("gpt-5.1-codex", 272_000, "1.25", "0.125"),
            ("gpt-5.3-codex", 272_000, "1.75", "0.175"),
            ("gpt-5.5", 922_000, "5", "0.5"),
            ("gpt-4o-2024-08-06", 111_616, "2.5", "1.25"),
        ] {
            let (w, from) = t.window(Some(model), None);
            assert_eq!(
                (w, from),
                (window, WindowFrom::Model(model.into())),
                "{model}"
            );
            let (p, from) = t.prices(Some(model), None);
            assert_eq!(from, PricesFrom::Table(model.into()), "{model}");
            assert_eq!((p.input, p.cache_read), (m(input), m(read)), "{model}");
        }
    }

    #[test]
    fn openai_charges_no_cache_write_premium_and_anthropic_does() {
        for e in &ModelTable::built_in().entries {
            // OpenAI's (`gpt-*`, the `o` reasoning models) and DeepSeek's.
            let no_premium = e
                .models
                .iter()
                .all(|n| n.starts_with("gpt-") || n.starts_with('o') || n.starts_with("deepseek-"));
            if no_premium {
                assert_eq!(e.prices.cache_write, e.prices.input, "{:?}", e.models);
            } else {
                assert!(e.prices.cache_write > e.prices.input, "{:?}", e.models);
            }
            assert!(e.prices.cache_read < e.prices.input, "{:?}", e.models);
            assert!(e.prices.output > e.prices.input, "{:?}", e.models);
            assert!(e.window_1m.is_none_or(|w| w > e.window), "{:?}", e.models);
        }
    }

    #[test]
    fn common_chat_completions_models_are_in_the_table_under_their_routers_names() {
        let t = ModelTable::built_in();
        // What an OpenAI-compatible client names them: plain, dated, or with
        // the provider path a router (OpenRouter) puts before them.
        for (model, window, input, read, output) in [
            ("gpt-4.1-mini", 1_014_808, "0.4", "0.1", "1.6"),
            ("openai/gpt-4.1-nano", 1_014_808, "0.1", "0.025", "0.4"),
            ("gpt-4o-2024-08-06", 111_616, "2.5", "1.25", "10"),
            ("o3-2025-04-16", 100_000, "2", "0.5", "8"),
            ("openai/o4-mini", 100_000, "1.1", "0.275", "4.4"),
            ("o3-mini", 100_000, "1.1", "0.55", "4.4"),
            ("gpt-5-nano", 272_000, "0.05", "0.005", "0.4"),
            ("deepseek-chat", 128_000, "0.28", "0.028", "0.42"),
            (
                "deepseek/deepseek-reasoner",
                128_000,
                "0.28",
                "0.028",
                "0.42",
            ),
        ] {
            let (w, from) = t.window(Some(model), None);
            assert_eq!(w, window, "{model}");
            assert!(matches!(from, WindowFrom::Model(_)), "{model}: {from:?}");
            let (p, _) = t.prices(Some(model), None);
            assert_eq!(p.input, input.parse::<Micros>().unwrap(), "{model}");
            assert_eq!(p.cache_read, read.parse::<Micros>().unwrap(), "{model}");
            assert_eq!(p.output, output.parse::<Micros>().unwrap(), "{model}");
        }
        // A model the table does not know is handled as before: the default
        // window and prices, said so.
        let (w, from) = t.window(Some("qwen/qwen3-coder"), None);
        assert_eq!(
            (w, from),
            (
                200_000,
                WindowFrom::Unknown(Some("qwen/qwen3-coder".into()))
            )
        );
        assert_eq!(
            t.prices(Some("llama-3.3-70b-instruct"), None).0,
            t.default_prices
        );
    }

    #[test]
    fn names_match_their_snapshots_but_not_other_versions() {
        let t = ModelTable::built_in();
        let row = |model: &str| t.entry(model).map(|e| e.models[0].clone());
        assert_eq!(row("claude-opus-4-6").as_deref(), Some("claude-opus-4-6"));
        assert_eq!(
            row("claude-opus-4-20250514").as_deref(),
            Some("claude-opus-4-1")
        );
        assert_eq!(
            row("claude-sonnet-4-5@20250929").as_deref(),
            Some("claude-sonnet-4-6")
        );
        assert_eq!(
            row("gpt-5-2025-08-07").as_deref(),
            Some("gpt-5.1-codex-max")
        );
        assert_eq!(row("openai/gpt-5.5").as_deref(), Some("gpt-5.5"));
        assert_eq!(row("Claude-Fable-5-1").as_deref(), Some("claude-fable-5-1"));
        // A later version is not an earlier one's snapshot.
        assert_eq!(row("claude-opus-4-9"), None);
        assert_eq!(row("claude-fable-5-2"), None);
        assert_eq!(row("gpt-5.9"), None);
        assert_eq!(row("claude-opus-4-6-fast"), None);
    }

    #[test]
    fn the_1m_variant_when_named_or_recorded_else_the_default_for_an_unknown_model() {
        let t = ModelTable::built_in();
        assert_eq!(
            t.window(Some("claude-sonnet-4-5[1m]"), None),
            (
                1_000_000,
                WindowFrom::Model1m("claude-sonnet-4-5[1m]".into())
            )
        );
        // No 1M variant: the model's own window.
        assert_eq!(t.window(Some("claude-opus-4-5[1m]"), None).0, 200_000);
        // What the session recorded wins over the table.
        assert_eq!(
            t.window(Some("gpt-5.3-codex"), Some(258_400)),
            (258_400, WindowFrom::Recorded)
        );
        assert_eq!(
            t.window(Some("llama-3-70b"), None),
            (200_000, WindowFrom::Unknown(Some("llama-3-70b".into())))
        );
        assert_eq!(t.window(None, None), (200_000, WindowFrom::Unknown(None)));
    }

    #[test]
    fn a_price_file_comes_before_the_table_and_its_default_before_the_table_default() {
        let t = ModelTable::built_in();
        let file = PriceFile::parse(
            r#"{"models": [{"models": ["claude-opus-4-6", "local-*"], "input": 1, "cache_write": "1.5", "cache_read": 0.1, "output": "2"}],
                "default": {"input": "9", "cache_write": "9", "cache_read": "9", "output": "9"}}"#,
        )
        .unwrap();
        let (p, from) = t.prices(Some("claude-opus-4-6"), Some(&file));
        assert_eq!(from, PricesFrom::File("claude-opus-4-6".into()));
        assert_eq!(
            (p.input, p.cache_write, p.cache_read, p.output),
            (m("1"), m("1.5"), m("0.1"), m("2"))
        );
        assert_eq!(t.prices(Some("local-llama"), Some(&file)).0.input, m("1"));
        // The table still prices what the file does not name.
        let (p, from) = t.prices(Some("claude-haiku-4-5"), Some(&file));
        assert_eq!(
            (p.input, from),
            (m("1"), PricesFrom::Table("claude-haiku-4-5".into()))
        );
        let (p, from) = t.prices(Some("mystery"), Some(&file));
        assert_eq!(
            (p.input, from),
            (m("9"), PricesFrom::Default(Some("mystery".into())))
        );
        let (p, _) = t.prices(Some("mystery"), None);
        assert_eq!(p, Prices::default());
        assert_eq!(t.default_prices, Prices::default());
        assert_eq!(t.default_window, 200_000);
    }

    #[test]
    fn a_bad_price_file_is_refused_at_its_line() {
        let err = |json: &str| PriceFile::parse(json).unwrap_err();
        let e = err(
            "{\"models\": [\n {\"models\": [\"x\"], \"input\": \"-1\", \"cache_write\": 1, \"cache_read\": 1, \"output\": 1}]}",
        );
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("\"-1\" is not a price"), "{e}");
        let e = err(
            "{\"models\": [{\"models\": [\"x\"], \"input\": 1.1234567, \"cache_write\": 1, \"cache_read\": 1, \"output\": 1}]}",
        );
        assert!(e.message.contains("more than six decimals"), "{e}");
        let e = err(
            "{\"models\": [{\"models\": [\"x\"], \"input\": 1, \"cache_read\": 1, \"output\": 1}]}",
        );
        assert!(e.message.contains("missing field `cache_write`"), "{e}");
        let e = err("{\n\"models\": [],\n\"window\": 5}");
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("unknown field `window`"), "{e}");
        let e = err(
            "{\"models\": [{\"models\": [\"x\"], \"input\": 1e3, \"cache_write\": 1, \"cache_read\": 1, \"output\": 1}]}",
        );
        assert!(e.message.contains("is not a price"), "{e}");
        assert!(err("not json").line == 1);
    }
}
