//! `compactor report`: replay a task and write one self-contained HTML page
//! picturing it (the page itself is drawn by `crate::htmlreport`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use super::Ui;
use super::args::RunTarget;
use super::atomic::write_atomic;
use super::defaults::{PriceArgs, prices_for};
use super::summarizer::summarizer_of;
use super::target::scratch_replay;
use super::titles::{TitleSearch, title_of};
use super::words::plural;
use crate::cmd::exit::Outcome;
use crate::engine::estimate::{CharsPerToken, Estimator};
use crate::htmlreport::{self, ClientPanel, Collector, Header};
use crate::session::run::ReplayOptions;
use crate::store::Store;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor report --task latest\n  compactor report session.jsonl --window 64000 -o report.html --open"
)]
pub struct ReportArgs {
    #[command(flatten)]
    pub run: RunTarget,

    #[command(flatten)]
    pub prices: PriceArgs,

    /// Write the page to FILE (`-` for standard output).
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,

    /// Open the page with the platform's opener once written.
    #[arg(long)]
    pub open: bool,
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &ReportArgs) -> Result<Outcome> {
    let r = args.run.replayable(store, ui, "report")?;
    let (budget, task, calls) = (r.budget, r.task.clone(), r.calls);
    let record = store
        .reader()
        .task(&task)?
        .with_context(|| format!("task {task} vanished from the store"))?;
    let est = CharsPerToken::default();
    let summarizer = summarizer_of(&args.run.budget, store)?;
    let run_prices = prices_for(ui, &args.prices, r.record.as_ref())?;
    let prices = run_prices.prices;
    let overhead = r.index.overhead(&est)?.unwrap_or(0);
    // The record read once, a row at a time: its probes, its largest tool
    // outputs and the title its asks give.
    let mut collector = Collector::new(&r.index, overhead, &est);
    let mut search = TitleSearch::default();
    let mut found = None;
    r.index.each_row(0, r.index.len(), |_, m| {
        collector.read_row(m);
        if found.is_none() && m.kind == crate::model::Kind::Ask {
            found = search.offer(&m.content);
        }
    })?;
    let title = title_of(record.meta.title.as_deref(), [])
        .or(found)
        .or_else(|| search.finish());
    // Like `replay`, on a scratch copy: the report shows what a live engine
    // would have done and repeats exactly.
    let opts = ReplayOptions {
        cache_ttl: run_prices.cache_ttl,
        ..ReplayOptions::from_start(calls, prices)
    };
    let totals = scratch_replay(
        store,
        ui,
        &r,
        &summarizer,
        &opts,
        "replaying {wide_bar} {pos}/{len} calls",
        |row, out| {
            collector.on_call(row, out, r.index.history_end(row.call));
            Ok(())
        },
    )?;
    let source = match &r.file {
        // The file name only: no machine path reaches the page.
        Some(f) => f
            .file_name()
            .map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into()),
        None => format!("task {task} in the store"),
    };
    let header = Header {
        task: task.clone(),
        title,
        source,
        format: record.format,
        model: record.meta.model,
        budget,
        summarizer: summarizer.get().name(),
        estimator: est.name(),
        prices,
        prices_from: run_prices.words(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let (mut collected, probes) = collector.finish();
    collected.client_compactions = client_panels(store, &r, &probes)?;
    let html = htmlreport::render(&header, &collected, &totals);
    if args.output.as_os_str() == "-" {
        ui.out.write_all(html.as_bytes())?;
        if args.open {
            ui.warn("--open needs a file: the page went to standard output");
        }
        return Ok(Outcome::Ok);
    }
    write_atomic(&args.output, html.as_bytes(), "the report to ")?;
    ui.note(format!(
        "wrote {} ({}, {})",
        args.output.display(),
        plural(calls, "call"),
        plural(html.len(), "byte")
    ));
    if args.open {
        open(ui, &args.output);
    }
    Ok(Outcome::Ok)
}

/// The client's own compactions of the task its hooks recorded, both sides scored.
fn client_panels(
    store: &Store,
    r: &super::target::Resolved,
    probes: &[crate::probe::Probe],
) -> Result<Vec<ClientPanel>> {
    let compactions = store.reader().client_compactions(&r.task)?;
    if compactions.is_empty() {
        return Ok(Vec::new());
    }
    Ok(crate::hooks::compare::compare(probes, &compactions)
        .into_iter()
        .map(|c| {
            let client = crate::hooks::Client::parse(&c.client)
                .map_or(c.client.clone(), |k| k.title().to_string());
            let side =
                |s: Option<crate::hooks::compare::ScoredSide>| s.map(|s| (s.text, s.evaluation));
            ClientPanel {
                after_call: c.after_call,
                trigger: c.trigger,
                sides: vec![
                    (format!("{client}'s summary"), side(c.client_summary)),
                    ("compactor's Task Context".to_string(), side(c.task_context)),
                ],
                client,
            }
        })
        .collect())
}

/// Hand the page to the platform's opener and wait for it (openers return once
/// the viewer is launched); a failure is a warning: the page is written.
fn open(ui: &mut Ui, path: &Path) {
    let (program, pre): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("cmd", &["/C", "start", ""])
    } else {
        ("xdg-open", &[])
    };
    let status = std::process::Command::new(program)
        .args(pre)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => ui.warn(format!("{program} could not open {}: {s}", path.display())),
        Err(e) => ui.warn(format!(
            "cannot open {} with {program}: {e}",
            path.display()
        )),
    }
}
