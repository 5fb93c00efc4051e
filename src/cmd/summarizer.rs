//! The summarizer a command runs with, resolved from flags, environment and
//! the config file, and the `llm` summarizer's part of the reports.

use std::cell::RefCell;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::Ui;
use crate::engine::summarizer::Summarizer;
use crate::model::decimal::Micros;
use crate::store::{DbLocation, Store};
use crate::summarize::llm::config::{
    Choice, Fallback, FileConfig, LlmOverrides, Provider, SummarizerKind, resolve,
};
use crate::summarize::llm::{LlmReport, LlmSummarizer};
use crate::summarize::{Extractive, StaticCheckpoint};

/// Which summarizer writes floor summaries, and the model summarizer's settings.
#[derive(Debug, Args)]
pub struct SummarizerArgs {
    /// How floor summaries are written (default extractive, or the config file's `summarizer`).
    #[arg(
        long,
        env = "COMPACTOR_SUMMARIZER",
        value_enum,
        value_name = "SUMMARIZER"
    )]
    pub summarizer: Option<SummarizerKind>,

    #[command(flatten)]
    pub llm: LlmArgs,
}

/// The model summarizer's flags (each also an environment variable and a config-file key).
#[derive(Debug, Clone, Default, Args)]
pub struct LlmArgs {
    /// The model server's wire format (with --summarizer llm). Config key: llm_provider.
    #[arg(
        long,
        env = "COMPACTOR_LLM_PROVIDER",
        value_enum,
        value_name = "FORMAT"
    )]
    pub llm_provider: Option<Provider>,

    /// The server's base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to
    /// loopback. Default: the provider's public API.
    #[arg(long, env = "COMPACTOR_LLM_BASE_URL", value_name = "URL")]
    pub llm_base_url: Option<String>,

    /// The model name the server knows.
    #[arg(long, env = "COMPACTOR_LLM_MODEL", value_name = "MODEL")]
    pub llm_model: Option<String>,

    /// Seconds one model request may take (default 60).
    #[arg(long, env = "COMPACTOR_LLM_TIMEOUT", value_name = "SECONDS")]
    pub llm_timeout: Option<String>,

    /// The environment variable holding the API key (default OPENAI_API_KEY or
    /// ANTHROPIC_API_KEY). The key itself is never a flag or a config value.
    #[arg(long, env = "COMPACTOR_LLM_API_KEY_ENV", value_name = "VAR")]
    pub llm_api_key_env: Option<String>,

    /// What the floor uses when the model fails (default extractive).
    #[arg(
        long,
        env = "COMPACTOR_LLM_FALLBACK",
        value_enum,
        value_name = "SUMMARIZER"
    )]
    pub llm_fallback: Option<Fallback>,

    /// USD per million input tokens of the summarizer's own calls (default 0).
    #[arg(long, env = "COMPACTOR_LLM_PRICE_INPUT", value_name = "USD")]
    pub llm_price_input: Option<Micros>,

    /// USD per million output tokens of the summarizer's own calls (default 0).
    #[arg(long, env = "COMPACTOR_LLM_PRICE_OUTPUT", value_name = "USD")]
    pub llm_price_output: Option<Micros>,
}

impl LlmArgs {
    /// The settings these flags (or their environment variables) fix.
    pub fn overrides(&self) -> LlmOverrides {
        LlmOverrides {
            provider: self.llm_provider,
            base_url: self.llm_base_url.clone(),
            model: self.llm_model.clone(),
            timeout: self.llm_timeout.clone(),
            api_key_env: self.llm_api_key_env.clone(),
            fallback: self.llm_fallback,
            price_input: self.llm_price_input,
            price_output: self.llm_price_output,
        }
    }

    /// The flags that reproduce this configuration, for a child process.
    pub fn to_flags(&self, kind: Option<SummarizerKind>) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(k) = kind {
            out.push(format!(
                "--summarizer={}",
                k.to_possible_value().expect("no skipped values").get_name()
            ));
        }
        let mut push = |name: &str, v: Option<String>| {
            if let Some(v) = v {
                out.push(format!("--{name}={v}"));
            }
        };
        push("llm-provider", self.llm_provider.map(|p| p.name().into()));
        push("llm-base-url", self.llm_base_url.clone());
        push("llm-model", self.llm_model.clone());
        push("llm-timeout", self.llm_timeout.clone());
        push("llm-api-key-env", self.llm_api_key_env.clone());
        push(
            "llm-fallback",
            self.llm_fallback.map(|f| {
                f.to_possible_value()
                    .expect("no skipped values")
                    .get_name()
                    .to_string()
            }),
        );
        push(
            "llm-price-input",
            self.llm_price_input.map(|p| p.to_string()),
        );
        push(
            "llm-price-output",
            self.llm_price_output.map(|p| p.to_string()),
        );
        out
    }
}

/// The summarizer of one command run.
pub enum Configured {
    Plain(Box<dyn Summarizer>),
    Llm {
        summarizer: Box<LlmSummarizer>,
        report: RefCell<LlmReport>,
    },
}

impl Configured {
    /// Resolve `--summarizer` and the `--llm-*` settings (flag > env > config
    /// file > default); the model summarizer caches in the store at `db`.
    pub fn new(kind: Option<SummarizerKind>, llm: &LlmArgs, db: &DbLocation) -> Result<Configured> {
        let file = match FileConfig::default_path() {
            Some(p) => FileConfig::load(&p)?,
            None => FileConfig::default(),
        };
        Ok(match resolve(kind, &llm.overrides(), &file)? {
            Choice::Extractive => Configured::Plain(Box::new(Extractive)),
            Choice::Static => Configured::Plain(Box::new(StaticCheckpoint)),
            Choice::Llm(config) => {
                let summarizer = Box::new(
                    LlmSummarizer::new(config, db).context("cannot set up the llm summarizer")?,
                );
                let report = RefCell::new(LlmReport::new(&summarizer));
                Configured::Llm { summarizer, report }
            }
        })
    }

    /// The summarizer for a command on `store`: its cache is that store's
    /// (or the one COMPACTOR_LLM_CACHE_DB names).
    pub fn for_store(
        kind: Option<SummarizerKind>,
        llm: &LlmArgs,
        store: &Store,
    ) -> Result<Configured> {
        match std::env::var_os(crate::summarize::llm::CACHE_ENV).filter(|v| !v.is_empty()) {
            Some(p) => Configured::new(kind, llm, &DbLocation::File(p.into())),
            None => Configured::new(kind, llm, store.location()),
        }
    }

    pub fn get(&self) -> &dyn Summarizer {
        match self {
            Configured::Plain(s) => s.as_ref(),
            Configured::Llm { summarizer, .. } => summarizer.as_ref(),
        }
    }

    /// Attribute what the summarizer did since the last call to model call `call`.
    pub fn note_call(&self, call: u32) {
        if let Configured::Llm { summarizer, report } = self {
            let events = summarizer.drain_events();
            report.borrow_mut().add(summarizer, call, events);
        }
    }

    /// The model summarizer's report so far (`None` for the offline ones).
    pub fn report(&self) -> Option<LlmReport> {
        match self {
            Configured::Plain(_) => None,
            Configured::Llm { report, .. } => Some(report.borrow().clone()),
        }
    }

    /// The report as notes on stderr.
    pub fn note(&self, ui: &mut Ui) {
        if let Some(r) = self.report() {
            for l in r.human() {
                ui.note(l);
            }
        }
    }
}
