//! The summarizer a command runs with, resolved from flags, environment and
//! the config file, and the `llm` summarizer's part of the reports.

use std::cell::RefCell;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::Ui;
use super::args::BudgetArgs;
use crate::engine::summarizer::{SummarizeError, Summarizer, Summary, SummaryRequest, ToolCall};
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

/// Declares [`LlmArgs`] from its field list, and with it the flag values
/// `to_flags` writes back (each field's flag is its name, dashed).
macro_rules! llm_args {
    ($($(#[$attr:meta])* pub $field:ident: Option<$ty:ty>,)*) => {
        /// The model summarizer's flags (each also an environment variable and a config-file key).
        #[derive(Debug, Clone, Default, Args)]
        pub struct LlmArgs {
            $($(#[$attr])* pub $field: Option<$ty>,)*
        }

        impl LlmArgs {
            /// Each flag's field name and its value as a flag, in declaration order.
            fn values(&self) -> Vec<(&'static str, Option<String>)> {
                vec![$((stringify!($field), self.$field.as_ref().map(FlagText::flag_text)),)*]
            }
        }
    };
}

llm_args! {
    /// The model server's wire format (with --summarizer llm). Config key: llm_provider.
    #[arg(long, env = "COMPACTOR_LLM_PROVIDER", value_enum, value_name = "FORMAT")]
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
    #[arg(long, env = "COMPACTOR_LLM_FALLBACK", value_enum, value_name = "SUMMARIZER")]
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
        let kind = kind.map(|k| ("summarizer", Some(k.flag_text())));
        kind.into_iter()
            .chain(self.values())
            .filter_map(|(field, v)| Some(format!("--{}={}", field.replace('_', "-"), v?)))
            .collect()
    }
}

/// A value as a flag takes it on the command line.
trait FlagText {
    fn flag_text(&self) -> String;
}

/// [`FlagText`] for each type of value: an enum by its value name, the rest as displayed.
macro_rules! flag_text {
    ($($ty:ty => $text:expr),*) => {
        $(impl FlagText for $ty {
            fn flag_text(&self) -> String {
                $text(self)
            }
        })*
    };
}

flag_text!(
    SummarizerKind => value_name,
    Provider => value_name,
    Fallback => value_name,
    String => String::clone,
    Micros => Micros::to_string
);

/// An enum value's name on the command line.
fn value_name(v: &impl ValueEnum) -> String {
    v.to_possible_value()
        .expect("no skipped values")
        .get_name()
        .to_string()
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

/// The configured summarizer as a run uses it: the one chosen, with the
/// model summarizer's work attributed call by call to the report.
impl Summarizer for Configured {
    fn name(&self) -> String {
        self.get().name()
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        self.get().summarize(req)
    }

    fn refresh(&self, prior: &str, later: &[ToolCall]) -> Option<String> {
        self.get().refresh(prior, later)
    }

    fn call_done(&self, call: u32) {
        if let Configured::Llm { summarizer, report } = self {
            let events = summarizer.drain_events();
            report.borrow_mut().add(summarizer, call, events);
        }
    }
}

/// The summarizer `args` configure (flags, environment, config file).
pub fn summarizer_of(args: &BudgetArgs, store: &Store) -> Result<Configured> {
    Configured::for_store(args.summary.summarizer, &args.summary.llm, store)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct SummarizerCli {
        #[command(flatten)]
        summary: SummarizerArgs,
    }

    fn parse<S: Into<String>>(flags: impl IntoIterator<Item = S>) -> SummarizerArgs {
        let args =
            std::iter::once("compactor".to_string()).chain(flags.into_iter().map(Into::into));
        SummarizerCli::try_parse_from(args).unwrap().summary
    }

    /// Every flag, set, is written back as given, and parsing what is written
    /// gives the same settings.
    #[test]
    fn to_flags_round_trips_every_flag() {
        let flags = [
            "--summarizer=llm",
            "--llm-provider=anthropic",
            "--llm-base-url=http://127.0.0.1:9/v1",
            "--llm-model=m",
            "--llm-timeout=2.5",
            "--llm-api-key-env=KEY",
            "--llm-fallback=static",
            "--llm-price-input=0.150000",
            "--llm-price-output=0.600000",
        ];
        let given = parse(flags);
        let written = given.llm.to_flags(given.summarizer);
        assert_eq!(written, flags);
        let again = parse(written);
        assert_eq!(again.summarizer, given.summarizer);
        assert_eq!(
            format!("{:?}", again.llm.overrides()),
            format!("{:?}", given.llm.overrides())
        );
        assert_eq!(LlmArgs::default().to_flags(None), Vec::<String>::new());
    }
}
