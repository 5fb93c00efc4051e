//! `compactor search QUERY`: ranked hits over the record (an FTS5 index
//! with BM25), in a session, a project or every task: each with a snippet,
//! its task, call and time, and the `show` command that prints it whole.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

use super::Ui;
use super::errors::hinted;
use super::exit::Outcome;
use super::progress::progress;
use super::search_hits::{self, Found, Hit, Request};
use super::style;
use super::target::find_task;
use super::visible::visible_line;
use super::words::plural;
use crate::store::Store;
use crate::store::search::query::{self, QUERY_TERMS};
use crate::store::search::{Column, IndexState};

#[derive(Debug, Args)]
#[command(after_help = "\
Plain words match any of them, ranked (BM25): a hit need not hold every word,
word forms match (`migration` finds `migrations`), identifiers split
(`tenant registry` finds `tenant_registry`), and stop words do not count.
FTS5's syntax is used when the query uses it: \"a phrase\", NEAR(a b, 5),
prefix*, a AND b, a OR b, a NOT b. Exit 1 when nothing matches.

Examples:
  compactor search git push failed no upstream     this project's sessions
  compactor search --task 7f3c '\"tenant registry\"'   one session, a phrase
  compactor search --all --kind error 'permission denied'")]
pub struct SearchArgs {
    /// What to look for: plain words (given as one argument or several) or FTS5 syntax.
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub query: Vec<String>,

    /// Search this task's session: the task, its subagents and the tasks linked to it (an id,
    /// a unique prefix or `latest`).
    #[arg(long, value_name = "TASK", conflicts_with_all = ["project", "all"])]
    pub task: Option<String>,

    /// Search every session recorded in this project directory (the PROJECT column of
    /// `compactor tasks`). Default: the current directory's, when it has any; else every task.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath, conflicts_with = "all")]
    pub project: Option<PathBuf>,

    /// Search every task in the store.
    #[arg(long)]
    pub all: bool,

    /// Only hits of this kind: a user's ask, the assistant's answer, a tool call's input or
    /// output, a tool's error, or a summary (the client's, or a line of compactor's).
    #[arg(long, value_enum, value_name = "KIND")]
    pub kind: Option<KindArg>,

    /// The most hits to print.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=200))]
    pub limit: u64,

    /// Print one JSON object (`"schema": "compactor.search/1"`).
    #[arg(long)]
    pub json: bool,
}

/// `--kind`'s values: the index's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    Ask,
    Answer,
    Tool,
    Error,
    Summary,
}

impl KindArg {
    fn column(self) -> Column {
        match self {
            KindArg::Ask => Column::Ask,
            KindArg::Answer => Column::Answer,
            KindArg::Tool => Column::Tool,
            KindArg::Error => Column::Error,
            KindArg::Summary => Column::Summary,
        }
    }
}

/// What was searched.
#[derive(Debug, Serialize)]
struct Scope {
    /// `session`, `project` or `all`.
    kind: &'static str,
    /// The task named (`session`).
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<String>,
    /// The project directory (`project`).
    #[serde(skip_serializing_if = "Option::is_none")]
    dir: Option<String>,
    /// The tasks searched (`all`: every task).
    tasks: usize,
}

impl Scope {
    fn words(&self) -> String {
        match self.kind {
            "session" => format!(
                "task {}'s session ({})",
                self.task.as_deref().unwrap_or("?"),
                plural(self.tasks, "task")
            ),
            "project" => format!(
                "project {} ({})",
                self.dir.as_deref().unwrap_or("?"),
                plural(self.tasks, "task")
            ),
            _ => format!("every task ({})", self.tasks),
        }
    }
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &SearchArgs) -> Result<Outcome> {
    let text = args.query.join(" ");
    let query = query::parse(&text).map_err(|e| {
        let hint = crate::model::Hint::hint(&e).map(str::to_string);
        match hint {
            Some(h) => hinted(e.to_string(), h),
            None => anyhow::Error::new(e),
        }
    })?;
    let (scope, tasks) = resolve_scope(store, ui, args)?;
    if store.search_state()? != IndexState::Current {
        rebuild(store, ui);
    }
    let kind = args.kind.map(KindArg::column);
    let req = Request {
        query: &query,
        kind,
        tasks: tasks.as_deref(),
        offset: 0,
        limit: args.limit as usize,
        snippet_words: 24,
        in_view: None,
        cancel: None,
    };
    let found = search_hits::search(store, &req).map_err(search_error)?;
    if query.dropped > 0 {
        ui.note(format!(
            "note: the query's first {QUERY_TERMS} distinct words were searched ({} left out)",
            query.dropped
        ));
    }
    if found.indexed_now {
        ui.note("note: the store's search index is not current and could not be rebuilt here: the tasks searched were indexed for this search only");
    }
    if args.json {
        print_json(ui, &text, &query.expr, kind, &scope, &found)?;
    } else {
        print_human(ui, &text, &scope, &found)?;
    }
    Ok(if found.hits.is_empty() {
        Outcome::Differs
    } else {
        Outcome::Ok
    })
}

/// A search's error as the command reports it: a malformed query is the
/// user's (exit 2), with what FTS5 accepts as the hint.
fn search_error(e: crate::store::search::SearchError) -> anyhow::Error {
    match e {
        crate::store::search::SearchError::Query(q) => {
            let hint = crate::model::Hint::hint(&q).map(str::to_string);
            match hint {
                Some(h) => hinted(q.to_string(), h),
                None => anyhow::Error::new(q),
            }
        }
        other => anyhow::Error::new(other),
    }
}

/// Build the index again from the record; a store this process may not
/// write is searched through an index made for the search.
fn rebuild(store: &mut Store, ui: &mut Ui) {
    let tasks = store.reader().tasks().map(|t| t.len()).unwrap_or(0);
    ui.note(format!(
        "note: building the search index from the record ({}); once",
        plural(tasks, "task")
    ));
    let bar = progress(
        ui,
        tasks >= 20,
        tasks as u64,
        "indexing {wide_bar} {pos}/{len} tasks",
    );
    let result = store.rebuild_search_index(&mut |done, _| {
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Err(e) = result {
        ui.note(format!("note: the search index was not rebuilt: {e}"));
    }
}

/// The tasks searched (`None`: every task) and how to name them.
fn resolve_scope(
    store: &Store,
    ui: &mut Ui,
    args: &SearchArgs,
) -> Result<(Scope, Option<Vec<String>>)> {
    let every = |store: &Store| -> Result<(Scope, Option<Vec<String>>)> {
        let n = store.reader().tasks()?.len();
        Ok((
            Scope {
                kind: "all",
                task: None,
                dir: None,
                tasks: n,
            },
            None,
        ))
    };
    if args.all {
        return every(store);
    }
    if let Some(t) = &args.task {
        let id = find_task(store, t, None)?;
        let infos = store.reader().tasks()?;
        let tasks = search_hits::linked_tasks(&infos, &search_hits::recency(store)?, &id);
        return Ok((
            Scope {
                kind: "session",
                task: Some(id),
                dir: None,
                tasks: tasks.len(),
            },
            Some(tasks),
        ));
    }
    let (dir, named) = match &args.project {
        Some(d) => (d.clone(), true),
        None => (
            std::env::current_dir().context("cannot read the current directory")?,
            false,
        ),
    };
    let tasks = search_hits::project_tasks(store, &dir)?;
    if tasks.is_empty() {
        if named {
            return Err(hinted(
                format!("no task was recorded in {}", dir.display()),
                "`compactor tasks` shows each task's project directory; --all searches every task",
            ));
        }
        if !args.json {
            ui.note(format!(
                "note: no session was recorded in {}: searching every task",
                dir.display()
            ));
        }
        return every(store);
    }
    Ok((
        Scope {
            kind: "project",
            task: None,
            dir: Some(dir.display().to_string()),
            tasks: tasks.len(),
        },
        Some(tasks),
    ))
}

/// What a hit is, in words: `ask`, `Bash output`, `summary line`.
pub fn hit_label(h: &Hit) -> String {
    match (&h.tool, h.kind) {
        (Some(t), Column::Error) => format!("{} error", t.name.as_deref().unwrap_or("tool")),
        (Some(t), _) => format!("{} {}", t.name.as_deref().unwrap_or("tool"), t.part),
        (None, Column::Summary) if h.summary_key.is_some() => "summary line".to_string(),
        (None, Column::Summary) => "client summary".to_string(),
        (None, c) => c.as_str().to_string(),
    }
}

/// The command that prints a hit whole.
fn show_command(h: &Hit) -> String {
    format!("compactor show --task {} {}", h.place.task, h.address())
}

fn print_human(ui: &mut Ui, text: &str, scope: &Scope, found: &Found) -> Result<()> {
    if found.hits.is_empty() {
        ui.line(
            style::DIM,
            &format!("no hit for {text:?} in {}", scope.words()),
        )?;
        return Ok(());
    }
    let head = format!(
        "{} for {text:?} in {}, best first",
        plural(found.hits.len(), "hit"),
        scope.words()
    );
    ui.line(style::BOLD, &head)?;
    let several = scope.tasks != 1;
    for h in &found.hits {
        let mut place = format!("{:>2}. call {} · {}", h.rank, h.place.call, hit_label(h));
        if several {
            place.push_str(&format!(" · task {}", short(&h.place.task)));
        }
        if let Some(t) = &h.time {
            place.push_str(&format!(" · {}", when(t)));
        }
        ui.line(style::CYAN, &place)?;
        let snippet = if ui.color {
            search_hits::render_snippet(&h.snippet, "\x1b[1;33m", "\x1b[0m")
        } else {
            search_hits::render_snippet(&h.snippet, "«", "»")
        };
        writeln!(ui.out, "    {snippet}")?;
        if !h.also.is_empty() {
            let shown: Vec<String> = h
                .also
                .iter()
                .take(3)
                .map(|p| {
                    if p.task == h.place.task {
                        format!("call {}", p.call)
                    } else {
                        format!("task {} call {}", short(&p.task), p.call)
                    }
                })
                .collect();
            let more = h.also.len().saturating_sub(3);
            ui.line(
                style::DIM,
                &format!(
                    "    also: {}{}",
                    shown.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ),
            )?;
        }
        ui.line(style::DIM, &format!("    {}", show_command(h)))?;
    }
    if found.more {
        ui.line(
            style::DIM,
            "… more hits: raise --limit, or narrow with --kind or more words",
        )?;
    }
    Ok(())
}

use std::io::Write;

/// The first 8 characters of a task id.
fn short(task: &str) -> &str {
    match task.char_indices().nth(8) {
        Some((i, _)) => &task[..i],
        None => task,
    }
}

/// A recorded time as a person reads it: `2026-03-10 09:00:04`.
fn when(t: &str) -> String {
    visible_line(&t.replace('T', " ").chars().take(19).collect::<String>()).into_owned()
}

#[derive(Serialize)]
struct JsonPlace<'a> {
    task: &'a str,
    call: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
}

#[derive(Serialize)]
struct JsonHit<'a> {
    rank: usize,
    task: &'a str,
    call: u32,
    /// The row (none for a floor summary line).
    seq: Option<u64>,
    kind: &'static str,
    role: &'static str,
    tool_id: Option<&'a str>,
    tool_name: Option<&'a str>,
    /// `input` or `output` of a tool call.
    tool_part: Option<&'static str>,
    summary_key: Option<&'a str>,
    time: Option<&'a str>,
    score: f64,
    snippet: String,
    /// Where the matched words are in `snippet`: [start, end) in characters.
    highlights: Vec<[usize; 2]>,
    show: String,
    also: Vec<JsonPlace<'a>>,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    query: &'a str,
    /// The FTS5 expression searched.
    expression: &'a str,
    kind: Option<&'static str>,
    scope: &'a Scope,
    /// Entries that matched, before near-identical hits were collapsed.
    matched: usize,
    more: bool,
    hits: Vec<JsonHit<'a>>,
}

fn print_json(
    ui: &mut Ui,
    text: &str,
    expr: &str,
    kind: Option<Column>,
    scope: &Scope,
    found: &Found,
) -> Result<()> {
    let hits = found
        .hits
        .iter()
        .map(|h| {
            let (snippet, highlights) = h.snippet_spans();
            JsonHit {
                rank: h.rank,
                task: &h.place.task,
                call: h.place.call,
                seq: h.place.seq,
                kind: h.kind.as_str(),
                role: h.role,
                tool_id: h.tool.as_ref().map(|t| t.id.as_str()),
                tool_name: h.tool.as_ref().and_then(|t| t.name.as_deref()),
                tool_part: h.tool.as_ref().map(|t| t.part),
                summary_key: h.summary_key.as_deref(),
                time: h.time.as_deref(),
                score: h.score,
                snippet,
                highlights,
                show: show_command(h),
                also: h
                    .also
                    .iter()
                    .map(|p| JsonPlace {
                        task: &p.task,
                        call: p.call,
                        seq: p.seq,
                    })
                    .collect(),
            }
        })
        .collect();
    ui.json_kind(
        "search",
        &JsonOut {
            query: text,
            expression: expr,
            kind: kind.map(Column::as_str),
            scope,
            matched: found.matched,
            more: found.more,
            hits,
        },
    )
}
