//! The lists a sweep crosses (`--window`, `--output-reserved`,
//! `--trigger-ratio`, `--stop-ratio`, `--protect-recent-steps`,
//! `--summarizer`, and the one `--summary-budget`): one table of flags, each
//! a comma-separated list (or the flag repeated), read into [`PolicyLists`].

use clap::builder::{EnumValueParser, ValueParser};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches, value_parser};

use crate::model::decimal::Ratio;
use crate::summarize::llm::config::SummarizerKind;

/// The lists of a policy's settings; every combination is a policy.
#[derive(Debug, Clone, Default)]
pub struct PolicyLists {
    pub window: Vec<u64>,
    pub output_reserved: Vec<u64>,
    pub trigger_ratio: Vec<Ratio>,
    pub stop_ratio: Vec<Ratio>,
    pub protect_recent_steps: Vec<u32>,
    /// The one value every policy shares; `None`: each window's default.
    pub summary_budget: Option<u64>,
    pub summarizer: Vec<SummarizerKind>,
}

/// One flag: its id (the field's name), the env var (the engine
/// specification's names), whether it takes a list, its default, the value's name and the help line (without a
/// final period, as clap's derive writes a one-paragraph doc comment).
struct ListFlag {
    id: &'static str,
    long: &'static str,
    env: &'static str,
    list: bool,
    default: Option<&'static str>,
    value_name: &'static str,
    help: &'static str,
    parser: fn() -> ValueParser,
}

const FLAGS: [ListFlag; 7] = [
    ListFlag {
        id: "window",
        long: "window",
        env: "COMPACTION_CONTEXT_WINDOW",
        list: true,
        default: None,
        value_name: "TOKENS,...",
        help: "Context windows to sweep, in tokens. Default: each session's own (the window \
               it recorded, else its model's)",
        parser: || value_parser!(u64).into(),
    },
    ListFlag {
        id: "output_reserved",
        long: "output-reserved",
        env: "OUTPUT_RESERVED_TOKENS",
        list: true,
        default: None,
        value_name: "TOKENS,...",
        help: "Output reserves to sweep. Default: each window's, min(20000, window / 8)",
        parser: || value_parser!(u64).into(),
    },
    ListFlag {
        id: "trigger_ratio",
        long: "trigger-ratio",
        env: "COMPACTION_TRIGGER_RATIO",
        list: true,
        default: Some("0.65"),
        value_name: "RATIO,...",
        help: "Trigger ratios to sweep: compaction starts above w_eff × the ratio",
        parser: || value_parser!(Ratio).into(),
    },
    ListFlag {
        id: "stop_ratio",
        long: "stop-ratio",
        env: "COMPACTION_STOP_RATIO",
        list: true,
        default: Some("0.5"),
        value_name: "RATIO,...",
        help: "Stop ratios to sweep: shrinking aims at w_eff × the ratio (below the trigger)",
        parser: || value_parser!(Ratio).into(),
    },
    ListFlag {
        id: "protect_recent_steps",
        long: "protect-recent-steps",
        env: "COMPACTION_PROTECT_RECENT_STEPS",
        list: true,
        default: Some("5"),
        value_name: "N,...",
        help: "Protected recent steps to sweep",
        parser: || value_parser!(u32).into(),
    },
    ListFlag {
        id: "summary_budget",
        long: "summary-budget",
        env: "ROLLING_SUMMARY_BUDGET_TOKENS",
        list: false,
        default: None,
        value_name: "TOKENS",
        help: "Token cap of the floor summary (one value). Default: each window's (6% of window − reserve, 2000 to 8000)",
        parser: || value_parser!(u64).into(),
    },
    ListFlag {
        id: "summarizer",
        long: "summarizer",
        env: "COMPACTOR_SUMMARIZER",
        list: true,
        default: None,
        value_name: "SUMMARIZER,...",
        help: "Summarizers to sweep (default extractive, or the config file's `summarizer`)",
        parser: || EnumValueParser::<SummarizerKind>::new().into(),
    },
];

impl ListFlag {
    fn arg(&self) -> Arg {
        let arg = Arg::new(self.id)
            .long(self.long)
            .value_parser((self.parser)())
            .env(self.env)
            .value_name(self.value_name)
            .help(self.help);
        let arg = match self.default {
            Some(d) => arg.default_value(d),
            None => arg,
        };
        if self.list {
            arg.action(ArgAction::Append).value_delimiter(',')
        } else {
            arg.action(ArgAction::Set)
        }
    }
}

/// The values given for the flag `id`, in order (none: an empty list).
fn values<T: Clone + Send + Sync + 'static>(m: &mut ArgMatches, id: &str) -> Vec<T> {
    m.remove_many::<T>(id)
        .map(Iterator::collect)
        .unwrap_or_default()
}

impl FromArgMatches for PolicyLists {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut m.clone())
    }

    fn from_arg_matches_mut(m: &mut ArgMatches) -> Result<Self, clap::Error> {
        Ok(PolicyLists {
            window: values(m, "window"),
            output_reserved: values(m, "output_reserved"),
            trigger_ratio: values(m, "trigger_ratio"),
            stop_ratio: values(m, "stop_ratio"),
            protect_recent_steps: values(m, "protect_recent_steps"),
            summary_budget: m.remove_one("summary_budget"),
            summarizer: values(m, "summarizer"),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for PolicyLists {
    fn augment_args(cmd: Command) -> Command {
        FLAGS.iter().fold(cmd, |cmd, flag| cmd.arg(flag.arg()))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
