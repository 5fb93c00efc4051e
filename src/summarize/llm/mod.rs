//! The `llm` floor summarizer: the seed's constitution sent to a model over
//! HTTP, the answer validated against the extractive summary of the same
//! fold, and stored before use.
//!
//! Per fold:
//! 1. the extractive summary of the fold is computed (the checklist, and the fallback);
//! 2. the request's cache key is looked up: a summary a model already wrote
//!    for this exact request is read back, no call is made;
//! 3. otherwise the model is asked (up to three HTTP attempts on 429/5xx); an
//!    unusable answer is asked again once; a usable one gets its dropped P0
//!    lines re-inserted and is committed to the cache *before* the engine sees it;
//! 4. on any failure the floor gets the fallback summary (extractive, or
//!    static) and the reason is recorded: the call never aborts.
//!
//! Everything the commands report (model calls, summaries read back, repairs,
//! fallbacks and their reasons, the summarizer's own usage) is collected as
//! [`Event`]s.

pub(crate) mod config;
pub(crate) mod prompt;
pub(crate) mod validate;
pub(crate) mod wire;

use std::cell::RefCell;

use serde::Serialize;

use super::{Extractive, StaticCheckpoint};
use crate::engine::summarizer::{SummarizeError, Summarizer, Summary, SummaryRequest};
use crate::model::decimal::Micros;
use crate::store::{CachedSummary, DbLocation, StoreError, SummaryCache};
use config::{Fallback, LlmConfig};
use wire::HttpClient;

/// Names a store file whose summary cache a run uses instead of its own
/// store's (set by `check` for its child replays, so all share one cache).
pub(crate) const CACHE_ENV: &str = "COMPACTOR_LLM_CACHE_DB";

/// Something the summarizer did, for the reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A summary was minted by the model (after `attempts` HTTP attempts over
    /// one or two exchanges), with these usage figures and re-inserted lines.
    Minted {
        attempts: u32,
        input_tokens: u64,
        output_tokens: u64,
        repaired: Vec<String>,
    },
    /// A summary was read back from the cache.
    ReadBack,
    /// The model failed; the fallback summary was used.
    Fallback {
        reason: String,
        attempts: u32,
        input_tokens: u64,
        output_tokens: u64,
    },
}

/// The `llm` summarizer.
pub struct LlmSummarizer {
    config: LlmConfig,
    client: HttpClient,
    cache: RefCell<SummaryCache>,
    events: RefCell<Vec<Event>>,
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error(
        "the API key variable {0} is not set; the model server is not on this machine, so it needs a key (set {0}, or name another variable with --llm-api-key-env)"
    )]
    NoKey(String),
    #[error("cannot open the summary cache")]
    Cache(#[source] StoreError),
}

impl LlmSummarizer {
    /// A summarizer for `config`, caching in the store at `db`. The key is
    /// read from the configured environment variable (optional for a loopback server).
    pub fn new(config: LlmConfig, db: &DbLocation) -> Result<LlmSummarizer, LlmError> {
        let key = std::env::var(&config.api_key_env)
            .ok()
            .filter(|k| !k.is_empty());
        let loopback = config
            .base_url
            .split_once("://")
            .and_then(|(_, r)| r.split('/').next())
            .map(|a| {
                let a = a.rsplit('@').next().unwrap_or(a);
                match a.strip_prefix('[') {
                    Some(v6) => v6.split(']').next().unwrap_or("").to_string(),
                    None => a.split(':').next().unwrap_or("").to_string(),
                }
            })
            .is_some_and(|h| config::is_loopback(&h));
        if key.is_none() && !loopback {
            return Err(LlmError::NoKey(config.api_key_env.clone()));
        }
        Ok(LlmSummarizer {
            client: HttpClient::new(config.clone(), key),
            config,
            cache: RefCell::new(SummaryCache::open(db).map_err(LlmError::Cache)?),
            events: RefCell::new(Vec::new()),
        })
    }

    /// The events since the last drain, oldest first.
    pub fn drain_events(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.borrow_mut())
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn fallback(&self, req: &SummaryRequest<'_>, draft: Summary) -> Summary {
        match self.config.fallback {
            Fallback::Extractive => draft,
            Fallback::Static => StaticCheckpoint
                .summarize(req)
                .expect("the static checkpoint cannot fail"),
        }
    }

    fn mint(
        &self,
        req: &SummaryRequest<'_>,
        draft: &Summary,
    ) -> Result<Summary, (String, u32, u64, u64)> {
        let span = prompt::render_span(req.span);
        let later = prompt::render_later(req.later);
        let key = prompt::cache_key(
            self.config.provider.name(),
            &self.config.model,
            req.budget_tokens,
            req.prior,
            &span,
            &later,
        );
        let name = self.name();
        match self.cache.borrow().get(&key) {
            Ok(Some(hit)) => {
                self.events.borrow_mut().push(Event::ReadBack);
                return Ok(Summary {
                    text: hit.summary,
                    summarizer: hit.summarizer,
                });
            }
            Ok(None) => {}
            Err(e) => return Err((format!("cannot read the summary cache: {e}"), 0, 0, 0)),
        }
        let required = validate::required_lines(req.prior, &draft.text);
        let system = prompt::system_prompt(req.budget_tokens);
        let user = prompt::user_message(req.prior, &span, &later, &required);
        let max_tokens = req.budget_tokens.saturating_mul(2).clamp(1024, 8192);
        let (mut attempts, mut input, mut output) = (0, 0, 0);
        let mut last = String::new();
        // An unusable answer is asked for once more; then it is a failure.
        for exchange in 0..2 {
            let reply = self
                .client
                .complete(&system, &user, max_tokens)
                .map_err(|e| (e.reason, attempts + e.attempts, input, output))?;
            attempts += reply.attempts;
            input += reply.input_tokens;
            output += reply.output_tokens;
            match validate::validate(&reply.text, &required) {
                Ok((text, repaired)) => {
                    let entry = CachedSummary {
                        summarizer: name.clone(),
                        summary: text.clone(),
                        repaired: repaired.clone(),
                        input_tokens: input,
                        output_tokens: output,
                    };
                    // Stored before use: a re-run reads it instead of asking again.
                    self.cache.borrow_mut().put(&key, &entry).map_err(|e| {
                        (
                            format!("cannot store the model's summary: {e}"),
                            attempts,
                            input,
                            output,
                        )
                    })?;
                    self.events.borrow_mut().push(Event::Minted {
                        attempts,
                        input_tokens: input,
                        output_tokens: output,
                        repaired,
                    });
                    return Ok(Summary {
                        text,
                        summarizer: name,
                    });
                }
                Err(why) => {
                    last = if exchange == 0 {
                        format!("unusable response: {why}")
                    } else {
                        format!("unusable response twice: {why}")
                    };
                }
            }
        }
        Err((last, attempts, input, output))
    }
}

impl Summarizer for LlmSummarizer {
    fn name(&self) -> String {
        format!("llm:{}:{}", self.config.provider.name(), self.config.model)
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let draft = Extractive.summarize(req)?;
        match self.mint(req, &draft) {
            Ok(s) => Ok(s),
            Err((reason, attempts, input_tokens, output_tokens)) => {
                self.events.borrow_mut().push(Event::Fallback {
                    reason: self.client.scrub(reason),
                    attempts,
                    input_tokens,
                    output_tokens,
                });
                Ok(self.fallback(req, draft))
            }
        }
    }
}

/// One fallback or repair, attributed to the model call (of the replayed
/// task) whose floor it happened in.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FallbackNote {
    pub call: u32,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RepairNote {
    pub call: u32,
    pub lines: Vec<String>,
}

/// What the summarizer did over a run, as reported by replay, compact and check.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct LlmReport {
    pub summarizer: String,
    /// Summaries the model wrote in this run.
    pub model_calls: u64,
    /// HTTP requests sent (retries included).
    pub http_requests: u64,
    /// Summaries read back from the cache instead of asking.
    pub summaries_read_back: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The summarizer's own cost at the configured prices.
    pub cost_usd: Micros,
    pub summarizer_fallback: Vec<FallbackNote>,
    pub repaired: Vec<RepairNote>,
}

impl LlmReport {
    pub fn new(s: &LlmSummarizer) -> LlmReport {
        LlmReport {
            summarizer: s.name(),
            ..LlmReport::default()
        }
    }

    /// Account `events`, which happened during model call `call`.
    pub fn add(&mut self, s: &LlmSummarizer, call: u32, events: Vec<Event>) {
        for e in events {
            let (i, o) = match e {
                Event::Minted {
                    attempts,
                    input_tokens,
                    output_tokens,
                    repaired,
                } => {
                    self.model_calls += 1;
                    self.http_requests += u64::from(attempts);
                    if !repaired.is_empty() {
                        self.repaired.push(RepairNote {
                            call,
                            lines: repaired,
                        });
                    }
                    (input_tokens, output_tokens)
                }
                Event::ReadBack => {
                    self.summaries_read_back += 1;
                    (0, 0)
                }
                Event::Fallback {
                    reason,
                    attempts,
                    input_tokens,
                    output_tokens,
                } => {
                    self.http_requests += u64::from(attempts);
                    self.summarizer_fallback.push(FallbackNote { call, reason });
                    (input_tokens, output_tokens)
                }
            };
            self.input_tokens += i;
            self.output_tokens += o;
        }
        let cost = |price: Micros, tokens: u64| {
            (u128::from(tokens) * u128::from(price.0) / 1_000_000) as u64
        };
        let c = s.config();
        self.cost_usd = Micros(
            cost(c.price_input, self.input_tokens) + cost(c.price_output, self.output_tokens),
        );
    }

    /// The human lines (for stderr notes).
    pub fn human(&self) -> Vec<String> {
        let mut out = vec![format!(
            "summarizer {}: {} model {} ({} HTTP {}), {} read back from the store · {} input + {} output tokens · ${}",
            self.summarizer,
            self.model_calls,
            if self.model_calls == 1 {
                "call"
            } else {
                "calls"
            },
            self.http_requests,
            if self.http_requests == 1 {
                "request"
            } else {
                "requests"
            },
            self.summaries_read_back,
            self.input_tokens,
            self.output_tokens,
            self.cost_usd.dollars()
        )];
        for r in &self.repaired {
            out.push(format!(
                "summarizer repaired at call {}: re-inserted {} {} the model dropped: {}",
                r.call,
                r.lines.len(),
                if r.lines.len() == 1 { "line" } else { "lines" },
                r.lines.join(" | ")
            ));
        }
        for f in &self.summarizer_fallback {
            out.push(format!(
                "summarizer_fallback at call {}: {}",
                f.call, f.reason
            ));
        }
        out
    }
}
