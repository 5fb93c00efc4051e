//! The summarizer a command runs with, resolved from flags, environment and
//! the config file, and the `llm` summarizer's part of the reports.

use std::cell::RefCell;

use anyhow::{Context, Result};

use super::Ui;
use super::report::{CallJson, print_call};
use crate::engine::Report;
use crate::engine::budget::Budget;
use crate::store::{DbLocation, Store};
use crate::summarize::llm::config::{Choice, FileConfig, LlmArgs, SummarizerKind, resolve};
use crate::summarize::llm::{LlmReport, LlmSummarizer};
use crate::summarize::{Extractive, StaticCheckpoint, Summarizer};

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
        Ok(match resolve(kind, llm, &file)? {
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

/// `print_call`, plus the model summarizer's report when there is one
/// (an `llm` key in JSON; lines after the human report).
pub fn print_call_with(
    ui: &mut Ui,
    task: &str,
    report: &Report,
    budget: &Budget,
    recorded: Option<u64>,
    json: bool,
    llm: Option<&LlmReport>,
) -> Result<()> {
    let Some(llm) = llm else {
        return print_call(ui, task, report, budget, recorded, json);
    };
    if json {
        let mut v = serde_json::to_value(CallJson {
            task,
            report,
            recorded_prompt_tokens: recorded,
            budget,
        })?;
        v["llm"] = serde_json::to_value(llm)?;
        return ui.json(&v);
    }
    print_call(ui, task, report, budget, recorded, false)?;
    for l in llm.human() {
        std::io::Write::write_all(&mut ui.out, format!("{l}\n").as_bytes())?;
    }
    Ok(())
}
