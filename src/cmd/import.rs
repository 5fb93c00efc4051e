//! `compactor import FILE...`

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::Ui;
use super::common::{plural, progress};
use crate::cmd::exit::Outcome;
use crate::engine::toolrules::ToolRules;
use crate::model::Format;
use crate::store::Store;
use crate::transcript::ingest::{FileReport, ImportStatus, IngestOptions, ingest_file};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Auto,
    ClaudeCode,
    Codex,
    OpenaiChat,
    Anthropic,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Transcript files (JSONL, or a JSON document for openai-chat/anthropic).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The files' format; `auto` detects it from the first lines.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,

    /// Task name (default: the session id in the file, else one derived from its first line).
    /// Subagents become NAME/agent-ID.
    #[arg(long, value_name = "NAME")]
    pub task: Option<String>,

    /// Import the valid lines of a file that has invalid ones, listing each skipped line.
    #[arg(long)]
    pub skip_invalid: bool,

    /// JSON file of per-tool compaction rules, consulted before the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub tool_rules: Option<PathBuf>,

    /// Print one JSON object per file instead of the human report.
    #[arg(long)]
    pub json: bool,
}

/// Files at least this large get a progress bar (on a terminal, without --quiet).
const PROGRESS_MIN_BYTES: u64 = 4 << 20;

pub fn run(store: &mut Store, ui: &mut Ui, args: &ImportArgs) -> Result<Outcome> {
    let opts = IngestOptions {
        format: format_of(args.format),
        task: args.task.clone(),
        skip_invalid: args.skip_invalid,
        rules: load_rules(args.tool_rules.as_deref())?,
    };
    if args.task.is_some() && args.files.len() > 1 {
        ui.note("note: --task names every file's task the same; files are appended to it in order");
    }
    if let [path] = args.files.as_slice() {
        let report = import_one(store, ui, path, &opts)?;
        print_report(ui, &report, args.json)?;
        return Ok(Outcome::Ok);
    }
    let mut failed = Vec::new();
    for path in &args.files {
        match import_one(store, ui, path, &opts) {
            Ok(report) => print_report(ui, &report, args.json)?,
            Err(e) => {
                // Each file is atomic: report and go on with the next one.
                ui.error(&e);
                failed.push(path.display().to_string());
            }
        }
    }
    if failed.is_empty() {
        Ok(Outcome::Ok)
    } else {
        anyhow::bail!(
            "{} of {} files not imported (nothing of them was stored): {}",
            failed.len(),
            args.files.len(),
            failed.join(", ")
        )
    }
}

pub fn format_of(f: FormatArg) -> Option<Format> {
    match f {
        FormatArg::Auto => None,
        FormatArg::ClaudeCode => Some(Format::ClaudeCode),
        FormatArg::Codex => Some(Format::Codex),
        FormatArg::OpenaiChat => Some(Format::OpenaiChat),
        FormatArg::Anthropic => Some(Format::Anthropic),
    }
}

pub fn load_rules(path: Option<&Path>) -> Result<ToolRules> {
    let Some(path) = path else {
        return Ok(ToolRules::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the tool rules file {}", path.display()))?;
    ToolRules::with_overrides(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: {}; expected {{\"rules\":[{{\"tools\":[NAME...],\"rule\":\"head_tail_lines|top_entries|head_tail_chars|drop|keep\",...}}]}}",
            path.display(),
            e.line(),
            e.column(),
            e
        )
    })
}

/// Import one file, with a progress bar for large files on a terminal.
pub fn import_one(
    store: &mut Store,
    ui: &mut Ui,
    path: &Path,
    opts: &IngestOptions,
) -> Result<FileReport> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let bar = progress(
        ui,
        size >= PROGRESS_MIN_BYTES,
        size,
        "{msg} {wide_bar} {bytes}/{total_bytes} {bytes_per_sec}",
    );
    if let Some(b) = &bar {
        b.set_message(format!("importing {}", path.display()));
    }
    let result = ingest_file(store, path, opts, &mut |n| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(result?)
}

fn print_report(ui: &mut Ui, r: &FileReport, json: bool) -> Result<()> {
    if json {
        for w in &r.warnings {
            ui.warn(format!(
                "{}:{}: {} (task {})",
                r.path, w.line, w.message, w.task
            ));
        }
        for s in &r.skipped_lines {
            ui.warn(format!(
                "{}:{}:{}: skipped: {}",
                r.path, s.line, s.column, s.message
            ));
        }
        return ui.json_kind("import", r);
    }
    // A path may hold a newline or an escape sequence: one visible line.
    let shown = FileReport {
        path: crate::cmd::visible::visible_line(&r.path).into_owned(),
        ..r.clone()
    };
    let r = &shown;
    for w in &r.warnings {
        ui.warn(format!(
            "{}:{}: {} (task {})",
            r.path, w.line, w.message, w.task
        ));
    }
    for s in &r.skipped_lines {
        ui.warn(format!(
            "{}:{}:{}: skipped: {}",
            r.path, s.line, s.column, s.message
        ));
    }
    if json {
        return ui.json_kind("import", r);
    }
    if r.status == ImportStatus::Unchanged {
        writeln!(
            ui.out,
            "{}: unchanged since the last import, nothing added",
            r.path
        )?;
        return Ok(());
    }
    writeln!(
        ui.out,
        "{} ({}): {} lines, {} added to {} task{}",
        r.path,
        r.format,
        r.lines,
        r.added(),
        r.tasks.len(),
        if r.tasks.len() == 1 { "" } else { "s" }
    )?;
    for t in &r.tasks {
        let mut line = format!(
            "  {}: +{} ({} already stored, meta rows included), {}, {}",
            t.id,
            plural(t.added, "row"),
            t.already,
            plural(t.turns.into(), "turn"),
            plural(t.steps.into(), "model call")
        );
        if t.tool_forms_minted > 0 {
            line.push_str(&format!(
                ", {} minted",
                plural(t.tool_forms_minted, "tool form")
            ));
        }
        if let Some(p) = &t.parent {
            line.push_str(&format!(", parent {p}"));
        }
        writeln!(ui.out, "{line}")?;
        if !t.interrupted_tool_calls.is_empty() {
            let lines: Vec<String> = t
                .interrupted_tool_calls
                .iter()
                .map(|c| format!("{} {} (line {})", c.name, c.id, c.line))
                .collect();
            writeln!(
                ui.out,
                "    {} tool call{} without a result (interrupted): {}",
                lines.len(),
                if lines.len() == 1 { "" } else { "s" },
                lines.join(", ")
            )?;
        }
    }
    let mut skipped = Vec::new();
    if r.not_conversation_lines > 0 {
        skipped.push(format!("{} not conversation", r.not_conversation_lines));
    }
    if r.duplicate_lines > 0 {
        skipped.push(format!("{} duplicates", r.duplicate_lines));
    }
    for (t, n) in &r.unknown_line_types {
        skipped.push(format!("{n} of unknown type {t:?}"));
    }
    if !r.skipped_lines.is_empty() {
        skipped.push(format!("{} invalid", r.skipped_lines.len()));
    }
    if !skipped.is_empty() {
        writeln!(ui.out, "  lines skipped: {}", skipped.join(", "))?;
    }
    Ok(())
}
