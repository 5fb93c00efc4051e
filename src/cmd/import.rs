//! `compactor import FILE...`

use std::io::{Read, Write};
use std::path::Path;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::Ui;
use super::args::format_or_auto;
use super::progress::progress;
use super::session_dirs::{
    OpencodeStores, claude_projects, codex_sessions, gemini_tmp, opencode_stores,
    opencode_stores_in,
};
use super::target::{PROGRESS_MIN_BYTES, check_import_name, import_one};
use super::words::plural;
use crate::cmd::exit::Outcome;
use crate::engine::toolrules::ToolRules;
use crate::model::Format;
use crate::store::Store;
use crate::transcript::discover::{Pick, gemini_chats, walk};
use crate::transcript::ingest::{
    BATCH_BYTES, FileReport, ImportStatus, IngestError, IngestOptions, ingest_bytes, ingest_file,
    source_path,
};

#[derive(Debug, Args)]
#[command(after_help = IMPORT_AFTER_HELP)]
pub struct ImportArgs {
    /// Transcript files or directories (walked recursively for *.jsonl and *.json),
    /// or OpenCode's opencode.db; `-` reads standard input. None: every session
    /// under the default locations.
    #[arg(value_name = "PATH")]
    pub files: Vec<PathBuf>,

    /// Import every Claude Code session: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects.
    #[arg(long)]
    pub claude: bool,

    /// Import every Codex session: $CODEX_HOME/sessions, else ~/.codex/sessions.
    #[arg(long)]
    pub codex: bool,

    /// Import every OpenCode session: $OPENCODE_DB, else the opencode*.db stores in
    /// $XDG_DATA_HOME/opencode, else ~/.local/share/opencode.
    #[arg(long)]
    pub opencode: bool,

    /// Import every Gemini CLI session: $GEMINI_CLI_HOME/.gemini/tmp/*/chats/session-*.jsonl,
    /// else ~/.gemini/tmp/*/chats/session-*.jsonl.
    #[arg(long)]
    pub gemini: bool,

    /// The files' format; `auto` detects it from the first lines.
    #[arg(long, default_value = "auto", value_parser = format_or_auto())]
    pub format: ::std::option::Option<Format>,

    /// Import as a task of this name (default: the session id in the file, else one derived
    /// from its first line): a new name, no existing task's id or the start of one. Subagents
    /// become NAME/agent-ID. `--task` is an older name for it.
    #[arg(long, alias = "task", value_name = "NAME")]
    pub import_as: Option<String>,

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

const IMPORT_AFTER_HELP: &str = "\
Default locations (no PATH):
  Claude Code  $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects
  Codex        $CODEX_HOME/sessions, else ~/.codex/sessions
  OpenCode     $OPENCODE_DB, else $XDG_DATA_HOME/opencode/opencode*.db,
               else ~/.local/share/opencode/opencode*.db (read-only, while OpenCode runs too)
  Gemini CLI   $GEMINI_CLI_HOME/.gemini/tmp/*/chats/session-*.jsonl,
               else ~/.gemini/tmp/*/chats/session-*.jsonl
A file whose size and modification time are as at its last import is skipped unread.
A last line still being written (no newline, not yet JSON) is left for the next import.

Examples:
  compactor import                        every Claude Code, Codex, OpenCode and Gemini CLI session
  compactor import --claude ~/agent-logs   Claude Code sessions, and a folder of logs
  cat chat.json | compactor import - --format openai-chat";

/// Where one import input comes from.
enum Input {
    File(PathBuf),
    Stdin,
}

/// An input to import, its size, and whether a directory walk found it
/// (rather than the command line naming it).
struct Queued {
    input: Input,
    bytes: u64,
    walked: bool,
    /// A walk found a symbolic link that leads nowhere.
    dangling: bool,
}

impl Queued {
    fn named(input: Input, bytes: u64) -> Queued {
        Queued {
            input,
            bytes,
            walked: false,
            dangling: false,
        }
    }

    fn walked(f: crate::transcript::discover::Found) -> Queued {
        Queued {
            input: Input::File(f.path),
            bytes: f.bytes,
            walked: true,
            dangling: f.dangling,
        }
    }

    /// An OpenCode store found in its default place.
    fn store(path: PathBuf) -> Queued {
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        Queued {
            input: Input::File(path),
            bytes,
            walked: true,
            dangling: false,
        }
    }
}

/// A default session location.
struct Location {
    what: &'static str,
    path: PathBuf,
    /// A directory of session files walked, or OpenCode's stores.
    kind: LocationKind,
}

enum LocationKind {
    Walked,
    /// `$OPENCODE_DB`'s one store.
    Store,
    /// OpenCode's data directory: its `opencode*.db` stores.
    Stores,
    /// Gemini CLI's `tmp` directory: each project's `chats/session-*.jsonl`.
    GeminiChats,
}

impl Location {
    fn exists(&self) -> bool {
        match self.kind {
            LocationKind::Walked | LocationKind::GeminiChats => self.path.is_dir(),
            LocationKind::Store => self.path.is_file(),
            LocationKind::Stores => {
                opencode_stores_in(&self.path).is_ok_and(|found| !found.is_empty())
            }
        }
    }

    /// What is missing, for the note or error.
    fn missing(&self) -> String {
        match self.kind {
            LocationKind::Stores => self.path.join("opencode.db").display().to_string(),
            _ => self.path.display().to_string(),
        }
    }
}

/// The inputs the arguments name, directories walked, in order.
fn inputs(ui: &mut Ui, args: &ImportArgs) -> Result<(Vec<Queued>, bool)> {
    let mut out = Vec::new();
    let mut discovered = false;
    let defaults =
        args.files.is_empty() || args.claude || args.codex || args.opencode || args.gemini;
    if defaults {
        let all = !args.claude && !args.codex && !args.opencode && !args.gemini;
        let mut locations = Vec::new();
        if all || args.claude {
            locations.extend(claude_projects().map(|path| Location {
                what: "Claude Code",
                path,
                kind: LocationKind::Walked,
            }));
        }
        if all || args.codex {
            locations.extend(codex_sessions().map(|path| Location {
                what: "Codex",
                path,
                kind: LocationKind::Walked,
            }));
        }
        if all || args.opencode {
            locations.extend(opencode_stores().map(|stores| match stores {
                OpencodeStores::File(path) => Location {
                    what: "OpenCode",
                    path,
                    kind: LocationKind::Store,
                },
                OpencodeStores::Dir(path) => Location {
                    what: "OpenCode",
                    path,
                    kind: LocationKind::Stores,
                },
            }));
        }
        if all || args.gemini {
            locations.extend(gemini_tmp().map(|path| Location {
                what: "Gemini CLI",
                path,
                kind: LocationKind::GeminiChats,
            }));
        }
        let mut any = false;
        for l in &locations {
            if !l.exists() {
                if !all {
                    anyhow::bail!(hinted_missing(l));
                }
                ui.note(format!(
                    "no {} sessions: {} does not exist",
                    l.what,
                    l.missing()
                ));
                continue;
            }
            any = true;
            discovered = true;
            let cannot = || format!("cannot read the {} sessions", l.what);
            match l.kind {
                LocationKind::Walked => {
                    for f in walk(&l.path, Pick::Jsonl).with_context(cannot)? {
                        out.push(Queued::walked(f));
                    }
                }
                LocationKind::GeminiChats => {
                    for f in gemini_chats(&l.path).with_context(cannot)? {
                        out.push(Queued::walked(f));
                    }
                }
                LocationKind::Store => out.push(Queued::store(l.path.clone())),
                LocationKind::Stores => {
                    for path in opencode_stores_in(&l.path).with_context(cannot)? {
                        out.push(Queued::store(path));
                    }
                }
            }
        }
        if !any && args.files.is_empty() {
            return Err(super::errors::hinted(
                format!(
                    "no sessions found: {} does not exist",
                    locations
                        .iter()
                        .map(Location::missing)
                        .collect::<Vec<_>>()
                        .join(" nor ")
                ),
                "name a file or directory to import, or set CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_DATA_HOME or GEMINI_CLI_HOME",
            ));
        }
    }
    for p in &args.files {
        if p.as_os_str() == "-" {
            out.push(Queued::named(Input::Stdin, 0));
        } else if p.is_dir() {
            discovered = true;
            let found = walk(p, Pick::Transcripts)
                .with_context(|| format!("cannot read the directory {}", p.display()))?;
            if found.is_empty() {
                ui.note(format!(
                    "{}: no transcript files (*.jsonl, *.json) in it",
                    p.display()
                ));
            }
            out.extend(found.into_iter().map(Queued::walked));
        } else {
            let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            out.push(Queued::named(Input::File(p.clone()), size));
        }
    }
    Ok((out, discovered))
}

fn hinted_missing(l: &Location) -> anyhow::Error {
    super::errors::hinted(
        format!("no {} sessions: {} does not exist", l.what, l.missing()),
        match l.what {
            "Codex" => "set CODEX_HOME to the Codex home directory",
            "Gemini CLI" => "set GEMINI_CLI_HOME to the directory holding Gemini CLI's .gemini/",
            "OpenCode" => {
                "set XDG_DATA_HOME to the directory holding opencode/, or OPENCODE_DB to OpenCode's store"
            }
            _ => "set CLAUDE_CONFIG_DIR to the Claude Code configuration directory",
        },
    )
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &ImportArgs) -> Result<Outcome> {
    // The WAL is copied into the database once, after the last file.
    store.defer_checkpoints()?;
    store.grow_cache_for_import()?;
    let outcome = import_all(store, ui, args);
    // A batch left open by an error is not stored (its files were not said
    // to be imported), and the checkpoint needs no transaction open.
    store.rollback_batch()?;
    store.checkpoint()?;
    outcome
}

fn import_all(store: &mut Store, ui: &mut Ui, args: &ImportArgs) -> Result<Outcome> {
    let opts = IngestOptions {
        format: args.format,
        task: args.import_as.clone(),
        skip_invalid: args.skip_invalid,
        rules: load_rules(args.tool_rules.as_deref())?,
    };
    let (inputs, discovered) = inputs(ui, args)?;
    if inputs
        .iter()
        .filter(|q| matches!(q.input, Input::Stdin))
        .count()
        > 1
    {
        anyhow::bail!("`-` (standard input) can be named only once");
    }
    if let Some(name) = &args.import_as {
        // Importing the same inputs under the same name again is a no-op.
        let sources: Vec<String> = inputs
            .iter()
            .map(|q| match &q.input {
                Input::File(p) => source_path(p).display().to_string(),
                Input::Stdin => String::new(),
            })
            .collect();
        let stdin = inputs.iter().any(|q| matches!(q.input, Input::Stdin));
        check_import_name(store, name, &sources, stdin)?;
        if inputs.len() > 1 {
            ui.note(
                "note: --import-as names every file's task the same; files are appended to it in order",
            );
        }
    }
    // A view compactor wrote is no transcript (unless --format says to read
    // it as one).
    let is_view = |input: &Input| match input {
        Input::File(p) if opts.format.is_none() => {
            crate::transcript::detect::is_compactor_view(p).unwrap_or(false)
        }
        _ => false,
    };
    if let [Queued { input, .. }] = inputs.as_slice()
        && !discovered
    {
        if is_view(input) {
            ui.note(views_note(&[shown_input(input)]));
            return Ok(Outcome::Ok);
        }
        let report = match input {
            Input::File(path) => import_one(store, ui, path, &opts)?,
            Input::Stdin => import_stdin(store, &opts)?,
        };
        print_report(ui, &report, args.json)?;
        return Ok(Outcome::Ok);
    }
    let total: u64 = inputs.iter().map(|q| q.bytes).sum();
    let bar = progress(
        ui,
        total >= PROGRESS_MIN_BYTES || inputs.len() >= 20,
        total,
        "{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} ETA {eta}",
    );
    let mut said = Outcomes {
        bar: bar.as_ref(),
        json: args.json,
        discovered,
        ..Outcomes::default()
    };
    // Views compactor wrote: skipped, named in a note of their own.
    let mut views = Vec::new();
    let mut done = 0u64;
    for (i, q) in inputs.iter().enumerate() {
        let (input, bytes) = (&q.input, &q.bytes);
        if let Some(b) = &bar {
            b.set_message(format!("{}/{} files", i, inputs.len()));
        }
        if let (true, Input::File(p)) = (q.dangling, input) {
            // A stale link (its session deleted) is no transcript to import.
            said.not_transcripts.push(p.display().to_string());
            continue;
        }
        if is_view(input) {
            views.push(shown_input(input));
            done += bytes;
            continue;
        }
        let batched = matches!(input, Input::File(_)) && *bytes < BATCH_BYTES;
        if batched {
            store.begin_batch()?;
        } else {
            said.commit(store, ui)?;
        }
        let result = match input {
            Input::File(path) => ingest_file(store, path, &opts, &mut |n| {
                if let Some(b) = &bar {
                    b.set_position(done + n.min(*bytes));
                }
            })
            .map_err(anyhow::Error::from),
            Input::Stdin => import_stdin(store, &opts),
        };
        done += bytes;
        if let Some(b) = &bar {
            b.set_position(done);
        }
        let outcome = Held {
            shown: shown_input(input),
            walked: q.walked,
            result,
        };
        if batched {
            said.hold(store, ui, outcome, *bytes)?;
        } else {
            said.settle(ui, outcome)?;
        }
    }
    said.commit(store, ui)?;
    let Outcomes {
        failed,
        not_transcripts,
        imported,
        unchanged,
        rows_added,
        ..
    } = said;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !not_transcripts.is_empty() {
        ui.note(skipped_note(&not_transcripts));
    }
    if !views.is_empty() {
        ui.note(views_note(&views));
    }
    if args.json {
        // JSON Lines end with the totals record.
        ui.json_kind(
            "import_total",
            &serde_json::json!({
                "files": inputs.len(),
                "imported": imported,
                "unchanged": unchanged,
                "failed": failed.len(),
                "not_transcripts": not_transcripts.len(),
                "compactor_views": views.len(),
                "rows_added": rows_added,
            }),
        )?;
    } else if discovered {
        writeln!(
            ui.out,
            "{}: {} imported, {} unchanged{}{}{}",
            plural(inputs.len() as u64, "file"),
            imported,
            unchanged,
            match not_transcripts.len() {
                0 => String::new(),
                1 => ", 1 not a transcript".to_string(),
                n => format!(", {n} not transcripts"),
            },
            match views.len() {
                0 => String::new(),
                n => format!(
                    ", {n} compactor's own {}",
                    if n == 1 { "view" } else { "views" }
                ),
            },
            if failed.is_empty() {
                String::new()
            } else {
                format!(", {} failed", failed.len())
            }
        )?;
    }
    if failed.is_empty() {
        Ok(Outcome::Ok)
    } else {
        anyhow::bail!(
            "{} of {} not imported (nothing of them was stored): {}",
            failed.len(),
            plural(inputs.len(), "file"),
            failed.join(", ")
        )
    }
}

/// What became of one input, said once its batch has committed.
struct Held {
    shown: String,
    walked: bool,
    result: Result<FileReport>,
}

/// What the inputs became: counted, and said as each is settled (a
/// batched file's once its batch has committed, in file order).
#[derive(Default)]
struct Outcomes<'a> {
    bar: Option<&'a indicatif::ProgressBar>,
    json: bool,
    /// The inputs were found by a walk: only what changed is listed.
    discovered: bool,
    failed: Vec<String>,
    /// Files a walk found that are no transcript: skipped, named in one note.
    not_transcripts: Vec<String>,
    imported: u64,
    unchanged: u64,
    rows_added: u64,
    /// The open batch's files, and their bytes.
    held: Vec<Held>,
    held_bytes: u64,
}

impl Outcomes<'_> {
    /// Count one input's outcome and say it.
    fn settle(&mut self, ui: &mut Ui, held: Held) -> Result<()> {
        match held.result {
            Ok(report) => {
                self.rows_added += report.added();
                if report.status == ImportStatus::Unchanged {
                    self.unchanged += 1;
                } else {
                    self.imported += 1;
                }
                // A walked tree lists what changed; unchanged files are counted.
                if self.json || !self.discovered || report.status != ImportStatus::Unchanged {
                    let json = self.json;
                    if let Some(b) = self.bar {
                        b.suspend(|| print_report(ui, &report, json))?;
                    } else {
                        print_report(ui, &report, json)?;
                    }
                }
            }
            Err(e)
                if held.walked
                    && e.downcast_ref::<IngestError>()
                        .is_some_and(IngestError::is_not_a_transcript) =>
            {
                self.not_transcripts.push(held.shown);
            }
            Err(e) => {
                // Each file is atomic: report and go on with the next one.
                ui.error(&e);
                self.failed.push(held.shown);
            }
        }
        Ok(())
    }

    /// Hold a batched file's outcome until its batch commits, and commit
    /// the batch once it holds [`BATCH_BYTES`].
    fn hold(&mut self, store: &mut Store, ui: &mut Ui, held: Held, bytes: u64) -> Result<()> {
        self.held.push(held);
        self.held_bytes += bytes;
        if self.held_bytes >= BATCH_BYTES {
            self.commit(store, ui)?;
        }
        Ok(())
    }

    /// Commit the open batch, if any, and say what became of its files;
    /// when the commit fails, none of them was stored, and each has failed.
    fn commit(&mut self, store: &mut Store, ui: &mut Ui) -> Result<()> {
        let committed = store.commit_batch();
        if let Err(e) = &committed {
            let lost: Vec<&str> = self
                .held
                .iter()
                .filter(|h| h.result.is_ok())
                .map(|h| h.shown.as_str())
                .collect();
            ui.error(&anyhow::anyhow!(
                "cannot store the import of {} (nothing of them was stored): {}: {e}",
                plural(lost.len() as u64, "file"),
                lost.join(", ")
            ));
        }
        self.held_bytes = 0;
        for h in std::mem::take(&mut self.held) {
            if committed.is_err() && h.result.is_ok() {
                self.failed.push(h.shown);
            } else {
                self.settle(ui, h)?;
            }
        }
        Ok(())
    }
}

/// An input as its report names it.
fn shown_input(input: &Input) -> String {
    match input {
        Input::File(p) => p.display().to_string(),
        Input::Stdin => "-".to_string(),
    }
}

/// The note for the views compactor wrote that an import skipped.
fn views_note(paths: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut names = paths[..paths.len().min(SHOWN)].join(", ");
    if paths.len() > SHOWN {
        names.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    format!(
        "note: skipped {} compactor wrote (a view, as `compact -o` and `replay --views` write them: a checkpoint, not a transcript; `compactor diff` compares views; --format anthropic imports one as a conversation all the same): {names}",
        plural(paths.len() as u64, "file")
    )
}

/// The one note for the files a walk skipped as no transcript: how many, and
/// the first few by name (naming one on the command line says why).
fn skipped_note(paths: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut names = paths[..paths.len().min(SHOWN)].join(", ");
    if paths.len() > SHOWN {
        names.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    let verb = match paths.len() {
        1 => "is not a transcript",
        _ => "are not transcripts",
    };
    format!(
        "note: skipped {} that {verb} (no transcript format in the first lines, or a link that leads nowhere; import one by name to see why): {names}",
        plural(paths.len() as u64, "file")
    )
}

/// `import -`: the whole of standard input, recorded under a name made from its content.
fn import_stdin(store: &mut Store, opts: &IngestOptions) -> Result<FileReport> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(super::errors::hinted(
            "`-` reads a transcript from standard input, which is a terminal",
            "pipe one in: `cat session.jsonl | compactor import -`",
        ));
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .context("cannot read standard input")?;
    Ok(ingest_bytes(store, "-", &bytes, opts)?)
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

fn print_report(ui: &mut Ui, r: &FileReport, json: bool) -> Result<()> {
    // A path may hold a newline or an escape sequence: one visible line
    // (JSON escapes it by itself).
    let shown;
    let r = if json {
        r
    } else {
        shown = FileReport {
            path: crate::cmd::visible::visible_line(&r.path).into_owned(),
            ..r.clone()
        };
        &shown
    };
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
            "{}: unchanged since the last import, nothing added{}",
            r.path,
            if r.incomplete_lines > 0 {
                "; its last line, with no newline and not whole JSON yet, is left for later"
            } else {
                ""
            }
        )?;
        return Ok(());
    }
    // A database source counts the parts it read, a line format its lines.
    let unit = if r.format == Format::Opencode.as_str() {
        "part"
    } else {
        "line"
    };
    writeln!(
        ui.out,
        "{} ({}): {}, {} added to {}",
        r.path,
        r.format,
        plural(r.lines, unit),
        r.added(),
        plural(r.tasks.len(), "task")
    )?;
    for t in &r.tasks {
        let mut line = format!(
            "  {}: +{} ({} already stored, meta rows included), {}, {}",
            crate::cmd::visible::visible_line(&t.id),
            plural(t.added, "row"),
            t.already,
            plural(t.turns, "turn"),
            plural(t.steps, "model call")
        );
        if t.tool_forms_minted > 0 {
            line.push_str(&format!(
                ", {} minted",
                plural(t.tool_forms_minted, "tool form")
            ));
        }
        if let Some(p) = &t.parent {
            line.push_str(&format!(
                ", parent {}",
                crate::cmd::visible::visible_line(p)
            ));
        }
        writeln!(ui.out, "{line}")?;
        if !t.interrupted_tool_calls.is_empty() {
            let lines: Vec<String> = t
                .interrupted_tool_calls
                .iter()
                .map(|c| {
                    let v = |s: &str| crate::cmd::visible::visible_line(s).into_owned();
                    format!("{} {} ({unit} {})", v(&c.name), v(&c.id), c.line)
                })
                .collect();
            writeln!(
                ui.out,
                "    {} without a result (interrupted): {}",
                plural(lines.len(), "tool call"),
                lines.join(", ")
            )?;
        }
    }
    let mut skipped = Vec::new();
    if r.not_conversation_lines > 0 {
        skipped.push(format!("{} not conversation", r.not_conversation_lines));
    }
    if r.duplicate_lines > 0 {
        skipped.push(plural(r.duplicate_lines, "duplicate"));
    }
    for (t, n) in &r.unknown_line_types {
        skipped.push(format!("{n} of unknown type {t:?}"));
    }
    if !r.skipped_lines.is_empty() {
        skipped.push(format!("{} invalid", r.skipped_lines.len()));
    }
    if !skipped.is_empty() {
        writeln!(ui.out, "  {unit}s skipped: {}", skipped.join(", "))?;
    }
    if r.incomplete_lines > 0 {
        writeln!(
            ui.out,
            "  {} at the end, left for later",
            plural(
                r.incomplete_lines,
                if unit == "part" {
                    "unfinished message"
                } else {
                    "incomplete line"
                }
            )
        )?;
    }
    Ok(())
}
