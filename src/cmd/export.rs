//! `compactor export VIEW --format anthropic|openai|markdown`

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::Ui;
use super::atomic::write_atomic;
use crate::cmd::exit::Outcome;
use crate::view::{ExportFormat, RequestHead, View, export_request};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor export checkpoint.json                       Markdown for people\n  compactor export checkpoint.json --format anthropic -o messages.json"
)]
pub struct ExportArgs {
    /// A view file (as written by --view).
    #[arg(value_name = "VIEW")]
    pub view: PathBuf,

    #[arg(long, value_enum, default_value_t = ExportFormat::Markdown)]
    pub format: ExportFormat,

    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(ui: &mut Ui, args: &ExportArgs) -> Result<Outcome> {
    let bytes = std::fs::read(&args.view)
        .with_context(|| format!("cannot read the view {}", args.view.display()))?;
    let view = View::from_json(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: {}; expected a view ({{\"messages\":[...]}} as written by --view)",
            args.view.display(),
            e.line(),
            e.column(),
            e
        )
    })?;
    // A checkpoint written by `compact -o` may carry the request's system
    // prompt and tools next to the messages.
    let head = serde_json::from_slice::<serde_json::Value>(&bytes)
        .map(|v| RequestHead::from_checkpoint(&v))
        .unwrap_or_default();
    let format = args.format;
    let (out, notes) = export_request(&view, &head, format);
    for n in notes {
        ui.note(n);
    }
    match &args.output {
        Some(path) => write_atomic(path, &out, "")?,
        // Markdown on stdout is for people (a terminal): control characters
        // from the transcript are made visible. JSON escapes them already.
        None if format == ExportFormat::Markdown => ui
            .out
            .write_all(&crate::cmd::visible::visible_bytes(&out))?,
        None => ui.out.write_all(&out)?,
    }
    Ok(Outcome::Ok)
}
