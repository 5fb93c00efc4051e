//! Ranked hits over the search index (`store::search`), what `compactor
//! search` and the MCP server's `search_history` both print: which tasks a
//! scope holds, each hit's place (task, call, row, tool call), its snippet
//! and the command that shows it whole, near-identical hits collapsed.
//!
//! A hit is one entry of the index: an ask, an answer, a tool call's input
//! or output, an error, a summary or a floor summary line. Two hits are
//! collapsed into the better one when they are the same text recorded
//! again (the same output of a command run twice, a conversation the proxy
//! and the hooks both recorded): the later places are listed under it
//! (`also`); and the input and the output of one tool call are one hit.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::model::{Block, Kind, Message, Role};
use crate::store::search::extract::{self, Column};
use crate::store::search::query::Query;
use crate::store::search::{
    Location, MARK_END, MARK_START, RawHit, SearchError, Searcher, Snippets, locate,
};
use crate::store::{Store, StoreError, TaskInfo};

/// How many entries a search ranks before collapsing and paging: the
/// deepest a page reaches.
pub const CANDIDATES: usize = 400;
/// How many hits past a page a search reads when hits in the asking
/// model's context go last: a page of hits it does not hold is looked for
/// that far, no further.
const IN_VIEW_DEPTH: usize = 40;

/// Every task linked to `current`: its parent chain's root and everything
/// linked under it, and every task recorded with one of their client
/// session ids (a conversation the client compacted or rewound goes on in a
/// linked task; a subagent's task is linked to its parent's), newest first
/// by `recency`.
pub fn linked_tasks(
    infos: &[TaskInfo],
    recency: &BTreeMap<String, i64>,
    current: &str,
) -> Vec<String> {
    let by_id: BTreeMap<&str, &TaskInfo> = infos.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut root = current;
    let mut seen = BTreeSet::new();
    while let Some(p) = by_id.get(root).and_then(|t| t.parent_id.as_deref())
        && by_id.contains_key(p)
        && seen.insert(p)
    {
        root = p;
    }
    grown(infos, BTreeSet::from([root, current]), recency)
}

/// `members` and every task linked to one of them (a child, or one
/// recorded with the same client session id), to a fixed point; newest
/// first.
fn grown<'a>(
    infos: &'a [TaskInfo],
    mut members: BTreeSet<&'a str>,
    recency: &BTreeMap<String, i64>,
) -> Vec<String> {
    let by_id: BTreeMap<&str, &TaskInfo> = infos.iter().map(|t| (t.id.as_str(), t)).collect();
    loop {
        let sessions: BTreeSet<&str> = members
            .iter()
            .filter_map(|m| by_id.get(m).and_then(|t| t.meta.session_id.as_deref()))
            .collect();
        let before = members.len();
        for t in infos {
            let linked = t.parent_id.as_deref().is_some_and(|p| members.contains(p));
            let same = t
                .meta
                .session_id
                .as_deref()
                .is_some_and(|s| sessions.contains(s));
            if linked || same {
                members.insert(&t.id);
            }
        }
        if members.len() == before {
            break;
        }
    }
    let mut out: Vec<String> = members.into_iter().map(str::to_string).collect();
    out.sort_by_key(|t| std::cmp::Reverse((recency.get(t).copied(), t.clone())));
    out
}

/// How recently each task was recorded: its last row's rowid (read through
/// the record's key, task by task: no scan of the record).
pub fn recency(store: &Store) -> Result<BTreeMap<String, i64>, StoreError> {
    let reader = store.reader();
    let mut out = BTreeMap::new();
    for t in reader.tasks()? {
        if let Some(row) = reader.last_rowid(&t.id)? {
            out.insert(t.id, row);
        }
    }
    Ok(out)
}

/// The ways `dir` may be recorded as a task's project directory: as given,
/// and with its links resolved.
fn dir_names(dir: &Path) -> [String; 2] {
    [
        dir.display().to_string(),
        std::fs::canonicalize(dir)
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
    ]
}

/// Every task recorded in project directory `dir`, and every task linked to
/// one (subagents, live tasks of the same client session), newest first;
/// empty when none was recorded there.
pub fn project_tasks(store: &Store, dir: &Path) -> Result<Vec<String>, StoreError> {
    let infos = store.reader().tasks()?;
    let names = dir_names(dir);
    let members: BTreeSet<&str> = infos
        .iter()
        .filter(|t| t.meta.cwd.as_ref().is_some_and(|c| names.contains(c)))
        .map(|t| t.id.as_str())
        .collect();
    if members.is_empty() {
        return Ok(Vec::new());
    }
    Ok(grown(&infos, members, &recency(store)?))
}

/// Where an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub task: String,
    /// The row (none for a floor summary line).
    pub seq: Option<u64>,
    /// The model call it belongs to: the one that wrote it, else the first
    /// that read it.
    pub call: u32,
}

/// A tool call a hit is part of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRef {
    pub id: String,
    /// Its tool's name, when the call is found.
    pub name: Option<String>,
    /// `input` or `output`.
    pub part: &'static str,
}

/// One hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// 1 for the best.
    pub rank: usize,
    pub place: Place,
    pub kind: Column,
    /// The row's role (`user`, `assistant`), or `summary` for a floor
    /// summary line.
    pub role: &'static str,
    pub tool: Option<ToolRef>,
    /// When the row was written, as its source stamped it.
    pub time: Option<String>,
    /// The floor summary a line belongs to: its coverage key.
    pub summary_key: Option<String>,
    /// The matched words between [`MARK_START`] and [`MARK_END`]; a cut end
    /// is `…`; one line.
    pub snippet: String,
    /// BM25 (lower is better).
    pub score: f64,
    /// Whether the model that asks has it in its context now.
    pub in_view: bool,
    /// The same text recorded again, or the other half of the tool call.
    pub also: Vec<Place>,
}

impl Hit {
    /// The address `show` and `view_tool_call` take: `tool:ID`, the row's
    /// `seq`, or the summary's `cov:` key.
    pub fn address(&self) -> String {
        match (&self.tool, self.place.seq, &self.summary_key) {
            (Some(t), _, _) => format!("tool:{}", t.id),
            (None, Some(seq), _) => seq.to_string(),
            (None, None, Some(key)) => key.chars().take(20).collect(),
            (None, None, None) => String::new(),
        }
    }

    /// The snippet without its marks, and where the marked words are (in
    /// characters).
    pub fn snippet_spans(&self) -> (String, Vec<[usize; 2]>) {
        let mut text = String::new();
        let mut spans = Vec::new();
        let mut start = 0;
        let mut n = 0;
        for c in self.snippet.chars() {
            match c {
                MARK_START => start = n,
                MARK_END => spans.push([start, n]),
                c => {
                    text.push(c);
                    n += 1;
                }
            }
        }
        (text, spans)
    }
}

/// Whether an entry is in the asking model's context (see [`Request`]).
pub type InViewFn<'a> = dyn Fn(&Place, Option<(Role, &Block)>) -> bool + 'a;

/// What to search.
pub struct Request<'a> {
    pub query: &'a Query,
    pub kind: Option<Column>,
    /// The tasks searched (`None`: every task).
    pub tasks: Option<&'a [String]>,
    pub offset: usize,
    pub limit: usize,
    /// Words of a snippet (at most 64).
    pub snippet_words: u32,
    /// Whether an entry (at a place; a row's block) is in the asking
    /// model's context: those hits are marked, and ranked after the others.
    pub in_view: Option<&'a InViewFn<'a>>,
    /// Set from another thread to stop the search.
    pub cancel: Option<&'a AtomicBool>,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The page of hits asked for.
    pub hits: Vec<Hit>,
    /// Entries that matched (before collapsing).
    pub matched: usize,
    /// Hits after collapsing, as far as the search looked.
    pub hits_seen: usize,
    /// Whether hits remain past the page.
    pub more: bool,
    /// The index was not current: the tasks searched were indexed in
    /// memory for this search.
    pub indexed_now: bool,
}

/// A row read for its hits, with the entry's text and the call it belongs to.
struct Resolved {
    place: Place,
    kind: Column,
    role: &'static str,
    tool: Option<ToolRef>,
    time: Option<String>,
    summary_key: Option<String>,
    text: String,
    score: f64,
    in_view: bool,
}

/// The model call a row belongs to: the one that wrote it (a generation),
/// else the first that read it (an ask, a tool result: the next call).
pub fn call_of(m: &Message) -> u32 {
    if m.kind == Kind::Generation {
        m.step
    } else {
        m.step + 1
    }
}

/// The rows read so far, by task and seq.
#[derive(Default)]
struct Rows {
    rows: HashMap<(String, u64), Option<Message>>,
}

impl Rows {
    fn get(&mut self, store: &Store, task: &str, seq: u64) -> Result<Option<&Message>, StoreError> {
        let key = (task.to_string(), seq);
        if !self.rows.contains_key(&key) {
            let m = store
                .reader()
                .messages(task, seq, seq + 1)?
                .pop()
                .map(|s| s.message);
            self.rows.insert(key.clone(), m);
        }
        Ok(self.rows.get(&key).and_then(Option::as_ref))
    }
}

/// How far back from a tool's output its call is looked for.
const CALL_LOOKBACK: u64 = 64;

/// The name of tool call `id`, from its call among the generation rows
/// before `seq` (only those are read whole).
fn tool_name(store: &Store, task: &str, seq: u64, id: &str) -> Result<Option<String>, StoreError> {
    let reader = store.reader();
    for at in reader.generation_rows_before(task, seq, CALL_LOOKBACK)? {
        let Some(row) = reader.messages(task, at, at + 1)?.pop() else {
            continue;
        };
        let found = row.message.content.iter().find_map(|b| match b {
            Block::ToolUse { id: i, name, .. } if i == id => Some(name.clone()),
            _ => None,
        });
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

fn resolve(
    store: &Store,
    searcher: &Searcher<'_>,
    rows: &mut Rows,
    hit: RawHit,
    in_view: Option<&InViewFn<'_>>,
) -> Result<Option<Resolved>, StoreError> {
    match locate(hit.rowid) {
        Location::SummaryLine { .. } => {
            let Some(line) = searcher.summary_line(hit.rowid)? else {
                return Ok(None);
            };
            let place = Place {
                task: line.task,
                seq: None,
                call: line.call,
            };
            Ok(Some(Resolved {
                in_view: in_view.is_some_and(|f| f(&place, None)),
                place,
                kind: Column::Summary,
                role: "summary",
                tool: None,
                time: None,
                summary_key: Some(line.key),
                text: line.line,
                score: hit.score,
            }))
        }
        Location::Row {
            task_no,
            seq,
            entry,
        } => {
            let Some(task) = searcher.task_of(task_no).map(str::to_string) else {
                return Ok(None);
            };
            let Some(m) = rows.get(store, &task, seq)? else {
                return Ok(None);
            };
            let Some((column, text)) = extract::entry_text(m, entry) else {
                return Ok(None);
            };
            let text = text.into_owned();
            let tool = match m.content.get(usize::from(entry)) {
                Some(Block::ToolUse { id, name, .. }) => Some(ToolRef {
                    id: id.clone(),
                    name: Some(name.clone()),
                    part: "input",
                }),
                Some(Block::ToolResult { tool_use_id, .. }) => Some(ToolRef {
                    id: tool_use_id.clone(),
                    name: None,
                    part: "output",
                }),
                _ => None,
            };
            let place = Place {
                task,
                seq: Some(seq),
                call: call_of(m),
            };
            let block = m.content.get(usize::from(entry)).map(|b| (m.role, b));
            Ok(Some(Resolved {
                in_view: in_view.is_some_and(|f| f(&place, block)),
                place,
                kind: column,
                role: m.role.as_str(),
                tool,
                time: m.timestamp.clone(),
                summary_key: None,
                text,
                score: hit.score,
            }))
        }
    }
}

/// What two hits must share to be one: the text (white space aside).
fn text_key(text: &str) -> [u8; 16] {
    let mut h = blake3::Hasher::new();
    for w in text.split_whitespace() {
        h.update(w.as_bytes());
        h.update(b" ");
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

/// Search (see the module's doc).
pub fn search(store: &Store, req: &Request<'_>) -> Result<Found, SearchError> {
    let all: Vec<String>;
    let tasks: &[String] = match req.tasks {
        Some(t) => t,
        None => {
            all = store.reader().recorded_tasks()?;
            &all
        }
    };
    let searcher = Searcher::open(store, tasks)?;
    let cancelled = || req.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let (raw, matched) = searcher.matches(&req.query.in_column(req.kind), req.tasks, CANDIDATES)?;
    let want = req.offset + req.limit;
    let mut rows = Rows::default();
    let mut hits: Vec<(Resolved, Vec<Place>)> = Vec::new();
    let mut by_text: HashMap<[u8; 16], usize> = HashMap::new();
    let mut by_tool: HashMap<(String, String), usize> = HashMap::new();
    let mut out_of_view = 0usize;
    for h in raw {
        if cancelled() {
            return Err(SearchError::Interrupted);
        }
        // Past what the page needs, unless hits in view go last.
        if req.in_view.is_none() && hits.len() > want {
            break;
        }
        if req.in_view.is_some() && (out_of_view > want || hits.len() > want + IN_VIEW_DEPTH) {
            break;
        }
        let Some(r) = resolve(store, &searcher, &mut rows, h, req.in_view)? else {
            continue;
        };
        let key = text_key(&r.text);
        let tool_key = r
            .tool
            .as_ref()
            .map(|t| (r.place.task.clone(), t.id.clone()));
        // The other half of a tool call already shown is that hit (its
        // `show` prints both); the same text elsewhere is listed under it.
        if tool_key.as_ref().is_some_and(|k| by_tool.contains_key(k)) {
            continue;
        }
        if let Some(&i) = by_text.get(&key) {
            let (first, also) = &mut hits[i];
            if !also.contains(&r.place) && first.place != r.place {
                also.push(r.place);
            }
            if let Some(k) = tool_key {
                by_tool.insert(k, i);
            }
            continue;
        }
        if !r.in_view {
            out_of_view += 1;
        }
        by_text.insert(key, hits.len());
        if let Some(k) = tool_key {
            by_tool.insert(k, hits.len());
        }
        hits.push((r, Vec::new()));
    }
    // Hits the model holds already go after the others, each side in rank order.
    let mut order: Vec<usize> = (0..hits.len()).collect();
    order.sort_by_key(|&i| hits[i].0.in_view);
    let hits_seen = hits.len();
    let more = hits_seen > want;
    let page: Vec<usize> = order.into_iter().skip(req.offset).take(req.limit).collect();
    let snippets = Snippets::new()?;
    for &i in &page {
        let r = &hits[i].0;
        snippets.add(i as i64, r.kind, &r.text)?;
    }
    let snippet_expr = req
        .query
        .words
        .iter()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ");
    let made = if snippet_expr.is_empty() {
        BTreeMap::new()
    } else {
        snippets.make(&snippet_expr, req.snippet_words)?
    };
    let mut out = Vec::with_capacity(page.len());
    let mut slots: Vec<Option<(Resolved, Vec<Place>)>> = hits.into_iter().map(Some).collect();
    for (n, i) in page.into_iter().enumerate() {
        let (r, also) = slots[i].take().expect("each hit is paged once");
        let snippet = match made.get(&(i as i64)) {
            Some(s) if s.contains(MARK_START) => one_line(s),
            _ => fallback_snippet(&r.text, &req.query.words, req.snippet_words),
        };
        let tool = match r.tool {
            Some(t) if t.name.is_none() => {
                let name = match r.place.seq {
                    Some(seq) => tool_name(store, &r.place.task, seq, &t.id)?,
                    None => None,
                };
                Some(ToolRef { name, ..t })
            }
            other => other,
        };
        out.push(Hit {
            rank: req.offset + n + 1,
            place: r.place,
            kind: r.kind,
            role: r.role,
            tool,
            time: r.time,
            summary_key: r.summary_key,
            snippet,
            score: r.score,
            in_view: r.in_view,
            also,
        });
    }
    Ok(Found {
        hits: out,
        matched,
        hits_seen,
        more,
        indexed_now: searcher.in_memory(),
    })
}

/// A hit's snippet for a terminal or a model: control characters made
/// visible, the matched words between `open` and `close`.
pub fn render_snippet(snippet: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(snippet.len() + 16);
    for (i, piece) in snippet.split([MARK_START, MARK_END]).enumerate() {
        if i > 0 {
            // Pieces alternate: outside a mark, inside one, outside...
            out.push_str(if i % 2 == 1 { open } else { close });
        }
        out.push_str(&crate::cmd::visible::visible_line(piece));
    }
    out
}

/// A snippet on one line: its line breaks and runs of white space made
/// single spaces.
fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    out
}

/// A snippet where FTS5's found no word of the query in the text itself
/// (a match on an identifier's words): the first `words` words around the
/// first word that starts with one of the query's, those marked.
fn fallback_snippet(text: &str, query_words: &[String], words: u32) -> String {
    let flat = one_line(text);
    let tokens: Vec<&str> = flat.split(' ').collect();
    let matches = |t: &str| {
        let lower = t.to_lowercase();
        query_words
            .iter()
            .any(|w| !w.is_empty() && lower.contains(w.as_str()))
    };
    let first = tokens.iter().position(|t| matches(t)).unwrap_or(0);
    let n = words.max(1) as usize;
    let start = first.saturating_sub(n / 4);
    let end = (start + n).min(tokens.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    for (i, t) in tokens[start..end].iter().enumerate() {
        if i > 0 || start > 0 {
            out.push(' ');
        }
        if matches(t) {
            out.push(MARK_START);
            out.push_str(t);
            out.push(MARK_END);
        } else {
            out.push_str(t);
        }
    }
    if end < tokens.len() {
        out.push_str(" …");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_is_one_line_and_its_marks_become_spans() {
        assert_eq!(one_line(" a\n\n b\tc "), "a b c");
        let hit = Hit {
            rank: 1,
            place: Place {
                task: "t".into(),
                seq: Some(1),
                call: 1,
            },
            kind: Column::Ask,
            role: "user",
            tool: None,
            time: None,
            summary_key: None,
            snippet: format!(
                "never edit the {MARK_START}tenant{MARK_END}_{MARK_START}registry{MARK_END} é"
            ),
            score: -1.0,
            in_view: false,
            also: Vec::new(),
        };
        let (text, spans) = hit.snippet_spans();
        assert_eq!(text, "never edit the tenant_registry é");
        assert_eq!(spans, [[15, 21], [22, 30]]);
        assert_eq!(hit.address(), "1");
    }

    #[test]
    fn a_fallback_snippet_marks_words_holding_the_querys() {
        let s = fallback_snippet(
            "one two three\nTranscriptRenderer draws it four five",
            &["renderer".to_string()],
            4,
        );
        assert_eq!(
            s,
            format!("… three {MARK_START}TranscriptRenderer{MARK_END} draws it …")
        );
    }
}
