//! What a task's model implies for a run when the flags leave it open: the
//! window (what the session recorded, else the model's in the built-in
//! table, else 200000), the output reserve (`min(20000, window / 8)`) and the
//! prices (`--price-*`, else `--prices FILE`, else the table, else the
//! defaults). The table itself is `session::models`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use super::Ui;
use super::args::BudgetArgs;
use crate::engine::budget::{Budget, default_output_reserved, default_summary_budget};
use crate::model::decimal::Micros;
use crate::session::cost::{CacheTtl, Prices};
use crate::session::models::{ModelTable, PriceFile, PricesFrom, WindowFrom};
use crate::store::TaskInfo;

/// A run's budget and where its window came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunBudget {
    pub budget: Budget,
    pub window_from: WindowFrom,
}

impl RunBudget {
    /// The window's origin in a few words, for the human report (`None`
    /// when the flag set it).
    pub fn window_words(&self) -> Option<String> {
        match &self.window_from {
            WindowFrom::Flag => None,
            WindowFrom::Recorded => Some("recorded by the session".to_string()),
            WindowFrom::Model(m) => Some(m.clone()),
            WindowFrom::Model1m(m) => Some(format!("{m}, 1M context")),
            WindowFrom::Unknown(Some(m)) => Some(format!("default: model {m} unknown")),
            WindowFrom::Unknown(None) => Some("default: no model recorded".to_string()),
        }
    }
}

/// Budget flags checked before the task is known (and before a FILE is
/// imported): all of them when `--window` is given, else those that do not
/// depend on the window.
pub fn precheck(a: &BudgetArgs) -> Result<()> {
    let b = match a.window {
        Some(w) => budget(
            a,
            w,
            a.output_reserved
                .unwrap_or_else(|| default_output_reserved(w)),
        ),
        // The window is the model's: only the ratios and the summary budget
        // can be checked yet.
        None => budget(a, u64::MAX, 0),
    };
    b.validate()?;
    Ok(())
}

/// The budget of a run on `task` (its record, when stored).
pub fn budget_for(a: &BudgetArgs, task: Option<&TaskInfo>) -> Result<RunBudget> {
    let (window, window_from) = match a.window {
        Some(w) => (w, WindowFrom::Flag),
        None => ModelTable::built_in().window(
            task.and_then(|t| t.meta.model.as_deref()),
            task.and_then(|t| t.meta.context_window),
        ),
    };
    let reserved = a
        .output_reserved
        .unwrap_or_else(|| default_output_reserved(window));
    let b = budget(a, window, reserved);
    b.validate()?;
    Ok(RunBudget {
        budget: b,
        window_from,
    })
}

fn budget(a: &BudgetArgs, window: u64, output_reserved: u64) -> Budget {
    Budget {
        window,
        output_reserved,
        trigger_ratio: a.trigger_ratio,
        stop_ratio: a.stop_ratio,
        protect_recent_steps: a.protect_recent_steps,
        summary_budget_tokens: a
            .summary_budget
            .unwrap_or_else(|| default_summary_budget(window.saturating_sub(output_reserved))),
    }
}

/// Say so when the window is a guess: the model is unknown or unnamed.
pub fn note_window(ui: &mut Ui, b: &RunBudget) {
    let what = match &b.window_from {
        WindowFrom::Unknown(Some(m)) => format!("the model {m:?} is not in the built-in table"),
        WindowFrom::Unknown(None) => "the transcript names no model".to_string(),
        _ => return,
    };
    ui.note(format!(
        "note: {what}: window {} assumed; give --window to set it",
        b.budget.window
    ));
}

/// Refuse a budget whose prompt room (w_eff) the system prompt and tools
/// alone exceed: every view of the run would be over the window, whatever is
/// compacted, so the run could only report that (one line, exit status 2).
pub fn refuse_below_overhead(b: &Budget, overhead: Option<u64>) -> Result<()> {
    match overhead {
        Some(o) if o > b.w_eff() => anyhow::bail!(
            "window {} leaves {} tokens for the prompt (w_eff), fewer than the system prompt and tools alone ({o} tokens): no view could fit; raise --window or lower --output-reserved",
            b.window,
            b.w_eff()
        ),
        _ => Ok(()),
    }
}

/// When the system prompt and tools alone do not fit under the trigger (or
/// the window), no compaction can help: the line that says so, with what to
/// do about it.
pub fn overhead_warning(overhead: Option<u64>, b: &Budget) -> Option<String> {
    let o = overhead?;
    let (what, limit, consequence) = if o > b.w_eff() {
        (
            "w_eff",
            b.w_eff(),
            "every view is over the window, whatever is compacted",
        )
    } else if o > b.trigger() {
        (
            "the trigger",
            b.trigger(),
            "every call compacts and stays over trigger",
        )
    } else {
        return None;
    };
    Some(format!(
        "warning: the system prompt and tools alone ({o} tokens) exceed {what} ({limit}): {consequence}; raise --window or lower --output-reserved"
    ))
}

/// Per-million-token prices for the cache and cost columns.
#[derive(Debug, Args)]
pub struct PriceArgs {
    /// USD per million uncached input tokens. Default: the model's (docs/src/reference/models.md).
    #[arg(long, value_name = "USD")]
    pub price_input: Option<Micros>,

    /// USD per million tokens written to the prompt cache. Default: the model's.
    #[arg(long, value_name = "USD")]
    pub price_cache_write: Option<Micros>,

    /// USD per million tokens read from the prompt cache. Default: the model's.
    #[arg(long, value_name = "USD")]
    pub price_cache_read: Option<Micros>,

    /// USD per million output tokens. Default: the model's.
    #[arg(long, value_name = "USD")]
    pub price_output: Option<Micros>,

    /// A JSON file of per-model prices, consulted before the built-in table
    /// (the format is in docs/src/reference/models.md).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,

    /// How long the prompt cache lives: a call sent longer than this after the
    /// one before (by the transcript's timestamps) reads nothing from it and
    /// writes its whole prompt. `1h` also prices an Anthropic cache write at
    /// twice the input price, as Anthropic bills the 1-hour cache.
    #[arg(long, value_name = "5m|1h", default_value = "5m")]
    pub cache_ttl: CacheTtl,
}

/// A run's prices and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPrices {
    pub prices: Prices,
    pub from: PricesFrom,
    /// How long the prompt cache lives.
    pub cache_ttl: CacheTtl,
}

impl RunPrices {
    /// Where the prices came from, in a few words.
    pub fn words(&self) -> String {
        match &self.from {
            PricesFrom::Flags => "--price-* flags".to_string(),
            PricesFrom::File(m) => format!("{m}, from --prices"),
            PricesFrom::Table(m) => m.clone(),
            PricesFrom::Default(Some(m)) => format!("defaults: {m} is not in the table"),
            PricesFrom::Default(None) => "defaults: no model recorded".to_string(),
        }
    }
}

/// A `--prices` file, read and checked.
pub fn load_price_file(path: &Path) -> Result<PriceFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the prices file {}", path.display()))?;
    PriceFile::parse(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: {}; expected {{\"models\":[{{\"models\":[NAME...],\"input\":USD,\"cache_write\":USD,\"cache_read\":USD,\"output\":USD}}],\"default\":{{...}}}}",
            path.display(),
            e.line,
            e.column,
            e.message
        )
    })
}

/// The prices of a run on `task`, with a note when they are the defaults
/// because the model is unknown.
pub fn prices_for(ui: &mut Ui, p: &PriceArgs, task: Option<&TaskInfo>) -> Result<RunPrices> {
    let file = p.prices.as_deref().map(load_price_file).transpose()?;
    let model = task.and_then(|t| t.meta.model.as_deref());
    let (table, from) = ModelTable::built_in().prices(model, file.as_ref());
    let input = p.price_input.unwrap_or(table.input);
    let prices = Prices {
        input,
        cache_write: p
            .price_cache_write
            .unwrap_or_else(|| cache_write_price(&table, input, p.cache_ttl)),
        cache_read: p.price_cache_read.unwrap_or(table.cache_read),
        output: p.price_output.unwrap_or(table.output),
    };
    let all_flags = p.price_input.is_some()
        && p.price_cache_write.is_some()
        && p.price_cache_read.is_some()
        && p.price_output.is_some();
    let from = if all_flags { PricesFrom::Flags } else { from };
    if let PricesFrom::Default(m) = &from {
        let what = match m {
            Some(m) => format!("the model {m:?} has no price in the built-in table"),
            None => "the transcript names no model".to_string(),
        };
        ui.note(format!(
            "note: {what}: priced at the defaults (USD per million: input {}, cache write {}, cache read {}, output {}); give --prices FILE or --price-* to set them",
            prices.input.rate(),
            prices.cache_write.rate(),
            prices.cache_read.rate(),
            prices.output.rate()
        ));
    }
    Ok(RunPrices {
        prices,
        from,
        cache_ttl: p.cache_ttl,
    })
}

/// The price of a cache write under `ttl`. A provider with a write premium
/// (explicit breakpoints: Anthropic, 1.25 × input for the 5-minute cache)
/// bills the 1-hour cache at 2 × input; one without (OpenAI's automatic
/// prefix cache) writes at the input price whatever the lifetime.
fn cache_write_price(table: &Prices, input: Micros, ttl: CacheTtl) -> Micros {
    match ttl {
        CacheTtl::OneHour if table.cache_write > table.input => Micros(input.0 * 2),
        _ => table.cache_write,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(window: u64, reserved: u64) -> Budget {
        Budget {
            window,
            output_reserved: reserved,
            ..Budget::default()
        }
    }

    #[test]
    fn an_overhead_over_the_trigger_or_the_window_is_named_with_what_to_do() {
        // 32000/4000: w_eff 28000, trigger 18200.
        let b = budget(32_000, 4_000);
        assert_eq!(overhead_warning(None, &b), None);
        assert_eq!(overhead_warning(Some(18_200), &b), None);
        let w = overhead_warning(Some(18_201), &b).unwrap();
        assert!(
            w.contains("(18201 tokens) exceed the trigger (18200)"),
            "{w}"
        );
        assert!(
            w.contains("raise --window or lower --output-reserved"),
            "{w}"
        );
        let w = overhead_warning(Some(28_001), &b).unwrap();
        assert!(w.contains("exceed w_eff (28000)"), "{w}");
    }

    #[test]
    fn a_window_the_overhead_alone_exceeds_is_refused_naming_the_overhead() {
        // --window 100: w_eff 88 (the reserve is 100 / 8).
        let b = budget(100, 12);
        let e = refuse_below_overhead(&b, Some(17_633))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "window 100 leaves 88 tokens for the prompt (w_eff), fewer than the system prompt and tools alone (17633 tokens): no view could fit; raise --window or lower --output-reserved"
        );
        assert!(!e.contains('\n'));
        assert!(refuse_below_overhead(&b, Some(88)).is_ok());
        assert!(refuse_below_overhead(&b, None).is_ok());
    }
}
