//! What the MCP server's three tools answer, read from the store (never
//! written): a tool call in full, paged; the lines of a session's record that
//! match a query; the session's `## Task Context`. Each answer is text for a
//! model, and the same store gives the same text.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};

use super::inview::InView;
use crate::cmd::search_hits::{self, Hit};
use crate::store::search::{Column, SearchError};

use crate::cmd::target::find_task;
use crate::cmd::tool_call::{ToolCall, ambiguous, ids_starting, split_pick};
use crate::cmd::visible::visible_line;
use crate::cmd::words::plural;
use crate::engine::toolrules::recovery_call;
use crate::hooks::context::{OutputLimit, task_context as derive_task_context};
use crate::model::{Block, Kind, Message, Role};
use crate::store::{Store, StoredMessage, TaskInfo};
use crate::summarize::Extractive;

/// Lines of a tool call's text in one page, unless `limit` says otherwise.
pub const PAGE_LINES: usize = 500;
/// The most characters one page holds (about 10K tokens, under what the
/// clients take whole from an MCP tool); a page stops before the line that
/// would pass it, holding at least one line.
pub const PAGE_CHARS: usize = 40_000;
/// Hits `search_history` returns unless `limit` says otherwise.
pub const SEARCH_HITS: usize = 10;
/// The most hits one page of `search_history` holds, whatever `limit` says.
pub const SEARCH_MAX: usize = 50;
/// Claude Code's hook output limit: the Task Context the hooks put back fits it.
const CONTEXT_LIMIT: OutputLimit = OutputLimit::Utf16Units(10_000);

/// The session a server answers for: the task it is working on now, and
/// every task of its session (the same client session id, or linked to it
/// through `parent_id`: a conversation the client compacted or rewound goes
/// on in a linked task), newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub current: String,
    pub tasks: Vec<String>,
}

/// The session: `--task`'s (a prefix or `latest`), else the most recently
/// recorded task whose project directory is `dir` (the client's).
pub fn session(store: &Store, task: Option<&str>, dirs: &[&Path]) -> Result<Session> {
    let reader = store.reader();
    let infos = reader.tasks()?;
    // How recently each task was recorded: its last row's rowid.
    let recency = search_hits::recency(store)?;
    let current = match task {
        Some(t) => find_task(store, t, None)?,
        None => latest_in(&infos, &recency, dirs)?,
    };
    Ok(Session {
        tasks: search_hits::linked_tasks(&infos, &recency, &current),
        current,
    })
}

/// The most recently recorded main task (not a subagent's) of the first of
/// `dirs` that has one.
fn latest_in(
    infos: &[TaskInfo],
    recency: &BTreeMap<String, i64>,
    dirs: &[&Path],
) -> Result<String> {
    for dir in dirs {
        let wanted = [
            dir.display().to_string(),
            std::fs::canonicalize(dir)
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        ];
        let best = infos
            .iter()
            .filter(|t| {
                t.meta.agent_id.is_none() && t.meta.cwd.as_ref().is_some_and(|c| wanted.contains(c))
            })
            .max_by_key(|t| (recency.get(&t.id).copied(), t.id.clone()));
        if let Some(t) = best {
            return Ok(t.id.clone());
        }
    }
    // How a session gets there, or how to name one recorded elsewhere.
    const HOW: &str = "compactor records a session live (`compactor run`, the proxy or the hooks), or `compactor import FILE` records a saved transcript; a server started with `compactor mcp --task TASK` answers for that task wherever it was recorded";
    match dirs {
        [] => bail!(
            "no session to search: the server was given no --task and has no working directory; {HOW}"
        ),
        [one] => bail!("no session recorded in {} yet: {HOW}", one.display()),
        many => bail!(
            "no session recorded in any of {} yet: {HOW}",
            many.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A tool call's text kept between the pages of it a client reads, so that
/// a page costs what the page costs: rendered once (its rows read one at a
/// time, the output copied once), its lines found through the start of
/// every [`INDEX_EVERY`]th. One call at a time, let go once its last page
/// is read or another call is viewed.
#[derive(Default)]
pub struct CallPages {
    held: Option<Rendered>,
}

/// Lines between two entries of a rendered call's line index.
const INDEX_EVERY: usize = 64;

struct Rendered {
    task: String,
    id: String,
    /// What the text rests on besides the call and its result, which an
    /// append-only record never changes once read: its compacted form's
    /// line, and, when no result was recorded yet, how many rows the task
    /// held (a later row may bring it).
    form: Option<String>,
    rows_without_result: Option<u64>,
    text: String,
    /// The byte where line `k * INDEX_EVERY` starts.
    starts: Vec<usize>,
    /// Lines (as [`page`] splits them).
    total: usize,
}

impl Rendered {
    fn new(call: &ToolCall, task: &str, rows: Option<u64>) -> Result<Rendered> {
        let mut r = Rendered::of_text(call.plain()?);
        r.task = task.to_string();
        r.id = call.id.clone();
        r.form = call.form_line();
        r.rows_without_result = call.result.is_none().then_some(rows).flatten();
        Ok(r)
    }

    /// A text and its line index.
    fn of_text(text: String) -> Rendered {
        let mut starts = vec![0];
        let mut total = 0;
        let mut at = 0;
        while at < text.len() {
            total += 1;
            at = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |n| at + n + 1);
            if total % INDEX_EVERY == 0 && at < text.len() {
                starts.push(at);
            }
        }
        Rendered {
            task: String::new(),
            id: String::new(),
            form: None,
            rows_without_result: None,
            text,
            starts,
            total,
        }
    }

    /// Where line `k` (`k < total`) starts.
    fn line_start(&self, k: usize) -> usize {
        let mut at = self.starts[k / INDEX_EVERY];
        for _ in 0..k % INDEX_EVERY {
            at += memchr::memchr(b'\n', &self.text.as_bytes()[at..]).map_or(0, |n| n + 1);
        }
        at
    }

    /// [`page`] of the text, reading only the page's lines; and whether it
    /// is the last.
    fn page(&self, offset: usize, limit: Option<usize>) -> Result<(String, bool)> {
        let total = self.total;
        if offset >= total && !(offset == 0 && total == 0) {
            return Err(past_end(offset, total));
        }
        let limit = limit.unwrap_or(PAGE_LINES).max(1);
        let from = if total == 0 {
            0
        } else {
            self.line_start(offset)
        };
        let (mut end, mut at, mut chars) = (offset, from, 0);
        while end < total && end - offset < limit {
            let next = memchr::memchr(b'\n', &self.text.as_bytes()[at..])
                .map_or(self.text.len(), |n| at + n + 1);
            let n = self.text[at..next].chars().count();
            if end > offset && chars + n > PAGE_CHARS {
                break;
            }
            chars += n;
            end += 1;
            at = next;
        }
        let mut out = self.text[from..at].to_string();
        if end < total {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&next_page(offset, end, total));
        }
        Ok((out, end >= total))
    }
}

impl CallPages {
    /// A page of the call `id` (an id itself) of `task`: from the call kept
    /// if it is this one and nothing it rests on has changed, else rendered
    /// now (and kept while pages of it remain).
    fn page(
        &mut self,
        store: &Store,
        task: &str,
        id: &str,
        offset: usize,
        limit: Option<usize>,
    ) -> Result<String> {
        let reader = store.reader();
        let fresh = match &self.held {
            Some(r) if r.task == task && r.id == id => {
                let rows_now = match r.rows_without_result {
                    Some(_) => Some(reader.message_count(task)?),
                    None => None,
                };
                let form = reader.tool_form(task, id)?.map(|f| ToolCall::form_text(&f));
                rows_now == r.rows_without_result && form == r.form
            }
            _ => false,
        };
        if !fresh {
            // The call before is let go before this one is read.
            self.held = None;
            let rows = reader.message_count(task)?;
            let call = ToolCall::read(store, task, id)?;
            let rendered = Rendered::new(&call, task, Some(rows))?;
            drop(call);
            self.held = Some(rendered);
            crate::proxy::release_memory();
        }
        let held = self.held.as_ref().expect("kept above");
        let (out, last) = held.page(offset, limit)?;
        if last {
            // Its last page read: nothing is kept for a next.
            self.held = None;
            crate::proxy::release_memory();
        }
        Ok(out)
    }
}

/// `view_tool_call`: the call `id` names (a unique prefix will do), as
/// `show tool:ID` prints it, paged by lines. The id is looked for in the
/// session's tasks first, then among every compacted form's (where a
/// pointer leads), then in every other task.
pub fn view_tool_call(
    store: &Store,
    pages: &mut CallPages,
    session: Option<&Session>,
    id: &str,
    offset: usize,
    limit: Option<usize>,
) -> Result<String> {
    let spec = id.trim();
    if spec.is_empty() {
        bail!("give the id of a tool call, as a pointer names it: view_tool_call(\"toolu_01A…\")");
    }
    if let Some(address) = spec.strip_prefix("msg:") {
        return view_message(store, address, offset, limit);
    }
    // `ID@N`: the N-th call a task records with the id (an id a client or
    // server reused).
    let (id, pick) = split_pick(spec);
    let reader = store.reader();
    let session_tasks: Vec<String> = session.map(|s| s.tasks.clone()).unwrap_or_default();
    let rest: Vec<String> = {
        let mut by_recency = reader.task_activity()?;
        by_recency.sort_by_key(|(id, _, row)| std::cmp::Reverse((*row, id.clone())));
        by_recency
            .into_iter()
            .map(|(id, _, _)| id)
            .filter(|t| !session_tasks.contains(t))
            .collect()
    };
    let forms = reader.tool_form_ids_starting(id)?;
    let form_tasks: Vec<String> = forms
        .iter()
        .map(|(t, _)| t.clone())
        .filter(|t| !session_tasks.contains(t))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Where to look, in order; the first scope with a match decides.
    for scope in [
        session_tasks.as_slice(),
        form_tasks.as_slice(),
        rest.as_slice(),
    ] {
        let mut found: Vec<(String, String)> = Vec::new();
        for task in scope {
            // A call's id is in its generation: the tool results (the
            // largest rows) are not read to find it.
            let rows = reader.messages_of_kind(task, Kind::Generation)?;
            for m in ids_starting(&rows, id) {
                if m == id {
                    return page_of(store, pages, task, &rows, m, pick, offset, limit);
                }
                if !found.iter().any(|(_, f)| f == m) {
                    found.push((task.clone(), m.to_string()));
                }
            }
        }
        match found.as_slice() {
            [] => continue,
            [(task, one)] => {
                let rows = reader.messages_of_kind(task, Kind::Generation)?;
                return page_of(store, pages, task, &rows, one, pick, offset, limit);
            }
            many => {
                let ids: Vec<&str> = many.iter().map(|(_, i)| i.as_str()).collect();
                return Err(ambiguous(id, &ids));
            }
        }
    }
    bail!(
        "no tool call {id} is recorded in the store: check the id against the pointer (view_tool_call(\"ID\"))"
    )
}

/// A page of the call `id` (an id itself) of `task`, whose generations are
/// `generations`: kept from page to page ([`CallPages`]) when the task
/// records one call with the id and none is picked; else (`ID@N`, or an id
/// recorded for several calls: ambiguous) read from the whole record.
#[allow(clippy::too_many_arguments)]
fn page_of(
    store: &Store,
    pages: &mut CallPages,
    task: &str,
    generations: &[StoredMessage],
    id: &str,
    pick: Option<usize>,
    offset: usize,
    limit: Option<usize>,
) -> Result<String> {
    let uses = generations
        .iter()
        .flat_map(|r| &r.message.content)
        .filter(|b| matches!(b, Block::ToolUse { id: i, .. } if i == id))
        .count();
    if pick.is_none() && uses <= 1 {
        return pages.page(store, task, id, offset, limit);
    }
    let rows = store.reader().all_messages(task)?;
    let call = ToolCall::in_rows(store, task, &rows, id, pick)?;
    page(&call.plain()?, offset, limit)
}

/// Lines `offset..` of `text`, at most `limit` (default [`PAGE_LINES`]) and
/// [`PAGE_CHARS`] characters; while lines remain, a last line
/// `next_offset: N` says where the next page starts. The whole text, when it
/// fits one page from the start, is returned as it is.
fn page(text: &str, offset: usize, limit: Option<usize>) -> Result<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len();
    if offset >= total && !(offset == 0 && total == 0) {
        return Err(past_end(offset, total));
    }
    let limit = limit.unwrap_or(PAGE_LINES).max(1);
    let mut end = offset;
    let mut chars = 0;
    while end < total && end - offset < limit {
        let n = lines[end].chars().count();
        if end > offset && chars + n > PAGE_CHARS {
            break;
        }
        chars += n;
        end += 1;
    }
    let mut out: String = lines[offset..end].concat();
    if end < total {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&next_page(offset, end, total));
    }
    Ok(out)
}

/// An offset past a text of `total` lines.
fn past_end(offset: usize, total: usize) -> anyhow::Error {
    anyhow::anyhow!(
        "offset {offset} is past the end: the call's text has {} (offsets 0 to {})",
        plural(total, "line"),
        total.saturating_sub(1)
    )
}

/// The last lines of a page that is not the last: where the next starts.
fn next_page(offset: usize, end: usize, total: usize) -> String {
    format!(
        "[lines {} to {end} of {total}; call view_tool_call again with offset {end} for the rest]\nnext_offset: {end}\n",
        offset + 1
    )
}

/// What `search_history` searches: the session's tasks, or every task of
/// its project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    Session,
    Project,
}

/// `search_history`'s request.
pub struct SearchOptions<'a> {
    pub query: &'a str,
    pub scope: Scope,
    pub kind: Option<Column>,
    pub offset: usize,
    pub limit: Option<usize>,
    /// Set from another thread to stop the search (the client left).
    pub cancel: Option<&'a AtomicBool>,
    /// What the model holds now (its hits are marked and ranked last).
    pub in_view: Option<&'a InView>,
}

/// The id `view_tool_call` takes for a hit: the tool call's, or the row's
/// (`msg:TASK:SEQ`); none for a floor summary line.
pub fn view_id(h: &Hit) -> Option<String> {
    match (&h.tool, h.place.seq) {
        (Some(t), _) => Some(t.id.clone()),
        (None, Some(seq)) => Some(format!("msg:{}:{seq}", h.place.task)),
        (None, None) => None,
    }
}

/// A hit's kind in words: `user ask`, `Bash output`, `compactor's summary`.
fn hit_label(h: &Hit) -> String {
    match (&h.tool, h.kind) {
        (Some(t), Column::Error) => format!("{} error", t.name.as_deref().unwrap_or("tool")),
        (Some(t), _) => format!("{} {}", t.name.as_deref().unwrap_or("tool"), t.part),
        (None, Column::Ask) => "user ask".into(),
        (None, Column::Answer) => "assistant".into(),
        (None, Column::Summary) if h.summary_key.is_some() => {
            "a line of compactor's summary".into()
        }
        (None, Column::Summary) => "the client's compaction summary".into(),
        (None, c) => c.as_str().into(),
    }
}

/// `search_history`: the session's (or its project's) record ranked for
/// `query` (see `crate::cmd::search_hits`), a page of hits from `offset`,
/// each with its snippet and the id `view_tool_call` takes.
pub fn search_history(
    store: &Store,
    session: &Session,
    opts: &SearchOptions<'_>,
) -> Result<String> {
    let query = crate::store::search::query::parse(opts.query).map_err(anyhow::Error::new)?;
    let limit = opts.limit.unwrap_or(SEARCH_HITS).clamp(1, SEARCH_MAX);
    let (tasks, scope) = match opts.scope {
        Scope::Session => {
            let scope = match session.tasks.len() {
                1 => format!("this session (task {})", session.current),
                n => format!("this session's {n} tasks (current: {})", session.current),
            };
            (session.tasks.clone(), scope)
        }
        Scope::Project => {
            let cwd = store
                .reader()
                .task(&session.current)?
                .and_then(|t| t.meta.cwd);
            let Some(cwd) = cwd else {
                bail!(
                    "task {} records no project directory, so its project cannot be searched: scope \"session\" searches its session",
                    session.current
                );
            };
            let mut tasks = search_hits::project_tasks(store, Path::new(&cwd))?;
            for t in &session.tasks {
                if !tasks.contains(t) {
                    tasks.push(t.clone());
                }
            }
            let scope = format!("project {cwd} ({})", plural(tasks.len(), "task"));
            (tasks, scope)
        }
    };
    let in_view = opts
        .in_view
        .map(|v| move |p: &search_hits::Place, b: Option<(Role, &Block)>| v.holds(p, b));
    let in_view_fn: Option<&search_hits::InViewFn<'_>> =
        in_view.as_ref().map(|f| f as &search_hits::InViewFn<'_>);
    let req = search_hits::Request {
        query: &query,
        kind: opts.kind,
        tasks: Some(&tasks),
        offset: opts.offset,
        limit,
        snippet_words: 32,
        in_view: in_view_fn,
        cancel: opts.cancel,
    };
    let found = search_hits::search(store, &req).map_err(|e| match e {
        SearchError::Query(q) => anyhow::Error::new(q),
        other => anyhow::Error::new(other),
    })?;
    let mut out = String::new();
    if query.dropped > 0 {
        out.push_str(&format!(
            "(the query's first {} distinct words were searched; {} left out)\n",
            crate::store::search::query::QUERY_TERMS,
            query.dropped
        ));
    }
    if found.hits.is_empty() {
        if opts.offset > 0 && found.hits_seen > 0 {
            bail!(
                "offset {} is past the last hit ({} found): call again with a smaller offset",
                opts.offset,
                found.hits_seen
            );
        }
        out.push_str(&format!(
            "no hit for {:?} in {scope}; try other words (or fewer){}\n",
            opts.query,
            if opts.scope == Scope::Session {
                ", or scope \"project\" for the project's other sessions"
            } else {
                ""
            }
        ));
        return Ok(out);
    }
    let last = opts.offset + found.hits.len();
    out.push_str(&format!(
        "{} for {:?} in {scope}, best first{}{}:\n",
        if found.more || opts.offset > 0 {
            format!("hits {} to {last}", opts.offset + 1)
        } else {
            plural(found.hits.len(), "hit")
        },
        opts.query,
        if opts.in_view.is_some() && found.hits.iter().any(|h| h.in_view) {
            "; what is already in your context is marked and comes last"
        } else {
            ""
        },
        if found.indexed_now {
            " (indexed for this search)"
        } else {
            ""
        },
    ));
    let several = tasks.len() > 1;
    for h in &found.hits {
        let mut head = format!(
            "{}. call {} · {}",
            h.rank,
            h.place.call,
            visible_line(&hit_label(h))
        );
        if several {
            head.push_str(&format!(" · task {}", visible_line(&h.place.task)));
        }
        if let Some(id) = view_id(h) {
            head.push_str(&format!(" · {}", visible_line(&recovery_call(&id))));
        }
        if h.in_view {
            head.push_str(" · in your context already");
        }
        out.push_str(&head);
        out.push('\n');
        let snippet = search_hits::render_snippet(&h.snippet, "«", "»");
        out.push_str(&format!("   {snippet}\n"));
        if !h.also.is_empty() {
            let places: Vec<String> = h
                .also
                .iter()
                .take(5)
                .map(|p| {
                    if p.task == h.place.task {
                        format!("call {}", p.call)
                    } else {
                        format!("task {} call {}", visible_line(&p.task), p.call)
                    }
                })
                .collect();
            let more = h.also.len().saturating_sub(5);
            out.push_str(&format!(
                "   the same also at {}{}\n",
                places.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
    if found.more {
        out.push_str(&format!(
            "[more hits: call search_history again with offset {last}]\nnext_offset: {last}\n"
        ));
    }
    Ok(out)
}

/// `view_tool_call("msg:TASK:SEQ")`: a recorded message whole (a search
/// hit's ask, answer or summary), as text, paged.
fn view_message(
    store: &Store,
    address: &str,
    offset: usize,
    limit: Option<usize>,
) -> Result<String> {
    let Some((task, seq)) = address.rsplit_once(':') else {
        bail!("a message id reads msg:TASK:SEQ, as search_history names it");
    };
    let Ok(seq) = seq.parse::<u64>() else {
        bail!(
            "a message id reads msg:TASK:SEQ, as search_history names it: {seq:?} is no row number"
        );
    };
    let task = find_task(store, task, None)?;
    let Some(row) = store.reader().messages(&task, seq, seq + 1)?.pop() else {
        bail!("task {task} has no row {seq}");
    };
    let m = &row.message;
    let mut text = format!(
        "task {task} · row {seq} · call {} · turn {} · {} {}\n",
        search_hits::call_of(m),
        m.turn,
        m.role.as_str(),
        m.kind.as_str()
    );
    for b in &m.content {
        text.push_str(&crate::view::text::block_text(b));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    page(&text, offset, limit)
}

/// `task_context`: compactor's `## Task Context` of the session's current
/// task, derived now from its whole record (and, before it, the records of
/// the tasks it was started from) by the extractive summarizer.
pub fn task_context(store: &Store, session: &Session) -> Result<String> {
    let reader = store.reader();
    let infos = reader.tasks()?;
    let parent = |t: &str| -> Option<String> {
        infos
            .iter()
            .find(|i| i.id == t)
            .and_then(|i| i.parent_id.clone())
    };
    let mut chain = vec![session.current.clone()];
    while let Some(p) = parent(chain.last().expect("never empty")) {
        if chain.contains(&p) || reader.task(&p)?.is_none() {
            break;
        }
        chain.push(p);
    }
    let mut rows: Vec<Message> = Vec::new();
    for t in chain.iter().rev() {
        rows.extend(reader.task_rows(t)?);
    }
    match derive_task_context(&rows, &Extractive, CONTEXT_LIMIT) {
        Some(tc) => Ok(format!(
            "## Task Context\n\n{}\n\n(task {}; derived from the whole recorded history, not from your context)\n",
            tc.sections, session.current
        )),
        None => Ok(format!(
            "task {} records no request yet, so there is no Task Context\n",
            session.current
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_that_fits_one_page_comes_back_as_it_is() {
        let text = "a\nb\nc\n";
        assert_eq!(page(text, 0, None).unwrap(), text);
        assert_eq!(page(text, 1, None).unwrap(), "b\nc\n");
        assert!(page(text, 3, None).is_err());
    }

    #[test]
    fn pages_say_where_the_next_starts_until_none_is_left() {
        let text: String = (0..10).map(|i| format!("line {i}\n")).collect();
        let first = page(&text, 0, Some(4)).unwrap();
        assert!(first.starts_with("line 0\nline 1\nline 2\nline 3\n[lines 1 to 4 of 10;"));
        assert!(first.ends_with("next_offset: 4\n"));
        let last = page(&text, 8, Some(4)).unwrap();
        assert_eq!(last, "line 8\nline 9\n");
        // Pages put together are the text.
        let mut joined = String::new();
        let mut at = 0;
        loop {
            let p = page(&text, at, Some(3)).unwrap();
            match p.rsplit_once("next_offset: ") {
                Some((_, n)) => {
                    let body: String = p
                        .lines()
                        .take_while(|l| !l.starts_with("[lines "))
                        .map(|l| format!("{l}\n"))
                        .collect();
                    joined.push_str(&body);
                    at = n.trim().parse().unwrap();
                }
                None => {
                    joined.push_str(&p);
                    break;
                }
            }
        }
        assert_eq!(joined, text);
    }

    #[test]
    fn a_page_stops_at_its_character_cap_but_holds_a_line() {
        let long = "x".repeat(PAGE_CHARS + 10);
        let text = format!("{long}\nshort\n");
        let p = page(&text, 0, None).unwrap();
        assert!(p.starts_with(&long));
        assert!(p.ends_with("next_offset: 1\n"), "{}", &p[p.len() - 40..]);
    }

    #[test]
    fn a_page_of_a_kept_call_is_the_page_of_its_whole_text() {
        let long = "y".repeat(PAGE_CHARS - 3);
        let texts = [
            String::new(),
            "one line, no newline".to_string(),
            "a\n\nb\n".to_string(),
            (0..1000)
                .map(|i| format!("line {i}{}\n", "x".repeat(i % 97)))
                .collect(),
            (0..300)
                .map(|i| {
                    if i % 7 == 0 {
                        format!("{long}\n")
                    } else {
                        format!("é {i}\n")
                    }
                })
                .collect::<String>()
                + "no end",
        ];
        for text in texts {
            let kept = Rendered::of_text(text.clone());
            let total = text.split_inclusive('\n').count();
            assert_eq!(kept.total, total);
            for limit in [None, Some(1), Some(3), Some(64), Some(65), Some(700)] {
                for offset in (0..=total + 1).step_by(if total > 200 { 7 } else { 1 }) {
                    let whole = page(&text, offset, limit).map_err(|e| e.to_string());
                    let paged = kept
                        .page(offset, limit)
                        .map(|(p, _)| p)
                        .map_err(|e| e.to_string());
                    assert_eq!(paged, whole, "offset {offset}, limit {limit:?}");
                }
            }
        }
    }
}
