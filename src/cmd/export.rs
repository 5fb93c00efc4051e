//! `compactor export VIEW --format anthropic|openai|markdown`

use anyhow::{Context, Result};

use super::Ui;
use crate::cli::{ExportArgs, ExportFormatArg};
use crate::exit::Outcome;
use crate::view::{ExportFormat, View, export};

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
    let format = match args.format {
        ExportFormatArg::Anthropic => ExportFormat::Anthropic,
        ExportFormatArg::Openai => ExportFormat::Openai,
        ExportFormatArg::Markdown => ExportFormat::Markdown,
    };
    let out = export(&view, format);
    match &args.output {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))?
        }
        // Markdown on stdout is for people (a terminal): control characters
        // from the transcript are made visible. JSON escapes them already.
        None if format == ExportFormat::Markdown => {
            ui.out.write_all(&crate::visible::visible_bytes(&out))?
        }
        None => ui.out.write_all(&out)?,
    }
    Ok(Outcome::Ok)
}
