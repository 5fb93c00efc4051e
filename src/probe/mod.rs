//! Fidelity as a number. Probes are facts read from the raw record, each with
//! its source address and the exact text a view must still carry; a view is
//! scored by looking for that text in it, raw or in the summary.
//!
//! Pure: messages in, probes out; a view in, a tally out. No IO, clock,
//! randomness or hash-map order. Categories:
//!
//! - `ask` (critical): every distinct user request, its client wrappers
//!   stripped (`engine::clean::request_text`); a long one is probed by its
//!   verbatim head and tail.
//! - `constraint` (critical): every sentence of a request that states a rule
//!   (`engine::lexicon::rule_marker`).
//! - `deliverable` (critical): every path a tool wrote, Codex `apply_patch`
//!   included (`engine::toolfacts::written_paths`).
//! - `error`: the key line of each distinct tool error.
//! - `decision`: assistant sentences stating a choice.
//! - `state`: the agent's latest closing sentence; only the latest one
//!   before a view is judged on it.
//! - `definition`, `outcome`, `reason`, `next`: what a model needs to
//!   continue (`work.rs`): per file written its latest changed definition,
//!   the latest check's counts, a decision's reason, the next step. Of
//!   `definition` (per file), `outcome` and `next` only the latest before a
//!   view is judged.
//!
//! A probe is judged only on views after its source. It passes when its
//! expected text (whitespace-normalised, controls stripped) is in the view;
//! a tool-derived probe that is not is `recoverable` when the view still
//! carries its call's recovery pointer (`view_tool_call("<id>")`, as a
//! shrunk form writes it), else `lost`.

mod cache;
mod pass;
pub(crate) mod precision;
#[cfg(test)]
mod tests;
mod work;

pub(crate) use cache::Scorer;
pub(crate) use pass::{ProbePass, ProbeWorker};

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use memchr::memmem;
use serde::Serialize;

use crate::engine::action::is_shell_tool;
use crate::engine::carried::{carried_facts, task_context_sections};
use crate::engine::clean::{normalise_whitespace, request_text, strip_controls};
use crate::engine::ladder::unwrap_envelope;
use crate::engine::lexicon::{DECISION_MARKERS, find_marker, rule_marker, words};
use crate::engine::parts::{Side, block_address};
use crate::engine::toolfacts::{error_excerpt, naming_line, strings_of, written_paths};
use crate::engine::toolrules::recovery_call;
use crate::engine::{Status, Tier};
use crate::model::{Block, Kind, Message, Role, ToolContent};
use crate::view::View;
use crate::view::text::{block_text, tool_content_text};

/// A request up to this many characters (normalised) is probed whole.
const ASK_WHOLE_CHARS: usize = 400;
/// A longer one is probed by this many raw leading and trailing characters.
const ASK_PART_CHARS: usize = 150;
/// A sentence longer than this is probed from its marker on, this long.
const SENTENCE_WHOLE_CHARS: usize = 300;
const SENTENCE_PART_CHARS: usize = 150;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Category {
    Ask,
    Constraint,
    Deliverable,
    Error,
    Decision,
    State,
    Definition,
    Outcome,
    Reason,
    Next,
}

impl Category {
    pub(crate) const ALL: [Category; 10] = [
        Category::Ask,
        Category::Constraint,
        Category::Deliverable,
        Category::Error,
        Category::Decision,
        Category::State,
        Category::Definition,
        Category::Outcome,
        Category::Reason,
        Category::Next,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Category::Ask => "ask",
            Category::Constraint => "constraint",
            Category::Deliverable => "deliverable",
            Category::Error => "error",
            Category::Decision => "decision",
            Category::State => "state",
            Category::Definition => "definition",
            Category::Outcome => "outcome",
            Category::Reason => "reason",
            Category::Next => "next",
        }
    }

    /// Losing one of these breaks the task: asks, rules and files written.
    pub(crate) fn critical(self) -> bool {
        matches!(
            self,
            Category::Ask | Category::Constraint | Category::Deliverable
        )
    }
}

/// One fact a view should still carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Probe {
    pub category: Category,
    /// The text to find, whitespace-normalised.
    pub expected: String,
    /// The part it came from: `tool:<id>`, or `text:<hash>` of the block.
    pub source: String,
    /// The source line in the transcript.
    pub line: u64,
    /// Index of the source row in the task's record (views after it judge it).
    #[serde(skip)]
    pub row: usize,
    /// For tool-derived probes: the recovery pointer of the call, as a
    /// shrunk form carries it (`view_tool_call("<id>")`).
    #[serde(skip)]
    pub pointer: Option<String>,
    /// Other texts that count as the same fact: a deliverable's path with
    /// leading directories dropped, down to its last two components (a
    /// summary names `lib/a/b.ex` for `/home/u/repo/lib/a/b.ex`).
    #[serde(skip)]
    pub also: Vec<String>,
    /// Of the probes of one category and slot, only the latest before a
    /// view is judged (`outcome`, `next`: one slot; `definition`: a file's
    /// path). `None`: judged on every view after it.
    #[serde(skip)]
    pub slot: Option<String>,
    /// The row of the next probe in its slot: views whose history reaches
    /// it judge that one instead.
    #[serde(skip)]
    pub superseded_at: Option<usize>,
}

impl Probe {
    /// Whether a view of the record's first `history_rows` rows judges it
    /// (the `state` probes aside, which `tally_with` picks).
    pub(crate) fn judged_before(&self, history_rows: usize) -> bool {
        self.row < history_rows && self.superseded_at.is_none_or(|r| r >= history_rows)
    }
}

/// The latest probe of each slot among those linked so far, by index.
pub(crate) type Slots = BTreeMap<(Category, String), usize>;

/// Links the probes from `from` on to the earlier ones of their slots: an
/// earlier probe is superseded at the row of the next in its slot.
pub(crate) fn link_slots(probes: &mut [Probe], from: usize, slots: &mut Slots) {
    for i in from..probes.len() {
        let Some(slot) = probes[i].slot.clone() else {
            continue;
        };
        let row = probes[i].row;
        if let Some(prev) = slots.insert((probes[i].category, slot), i) {
            probes[prev].superseded_at = Some(row);
        }
    }
}

/// Every probe of a record, in record order.
pub(crate) fn extract(rows: &[Message]) -> Vec<Probe> {
    let mut x = Extractor::default();
    for (i, m) in rows.iter().enumerate() {
        x.row(i, m);
    }
    let mut probes = x.finish();
    link_slots(&mut probes, 0, &mut Slots::new());
    probes
}

#[derive(Default)]
struct Extractor {
    probes: Vec<Probe>,
    seen: BTreeSet<(Category, String)>,
    /// The latest assistant closing sentence, flushed at the next ask.
    state: Option<Probe>,
    /// Paths read or written so far: a whole write of one is compared with
    /// the file, not probed by its text.
    known_paths: BTreeSet<String>,
    /// Shell calls waiting for their result (a check's counts are in it).
    shell_calls: BTreeMap<String, (String, serde_json::Value)>,
}

impl Extractor {
    fn push(&mut self, p: Probe) {
        // A slotted probe may say again what an earlier one said: it is the
        // latest, so it is kept.
        let again = !self.seen.insert((p.category, p.expected.clone()));
        if p.expected.is_empty() || (again && p.slot.is_none()) {
            return;
        }
        self.probes.push(p);
    }

    /// A probe judged only while it is the latest of its slot.
    fn push_latest(&mut self, mut p: Probe, slot: &str) {
        p.slot = Some(slot.to_string());
        self.push(p);
    }

    fn row(&mut self, i: usize, m: &Message) {
        if m.role == Role::Meta || !m.kind.reaches_view() {
            return;
        }
        for block in &m.content {
            match (m.kind, block) {
                (Kind::Ask, Block::Text { text }) => self.ask(i, m.line, block, text),
                (Kind::CarriedSummary, Block::Text { text }) => {
                    self.carried(i, m.line, block, text)
                }
                (Kind::Generation, Block::Text { text }) => self.prose(i, m.line, block, text),
                (_, Block::ToolUse { id, name, input }) => {
                    for (path, _) in written_paths(name, input) {
                        let new_file = !self.known_paths.contains(&path);
                        if let Some(def) = work::changed_definition(name, input, &path, new_file) {
                            let p = tool_probe(Category::Definition, def, id, i, m.line);
                            self.push_latest(p, &path);
                        }
                        self.known_paths.insert(path.clone());
                        let mut p = tool_probe(Category::Deliverable, path, id, i, m.line);
                        p.also = path_suffixes(&p.expected);
                        self.push(p);
                    }
                    for k in ["file_path", "filePath", "path"] {
                        if let Some(path) = input.get(k).and_then(serde_json::Value::as_str) {
                            self.known_paths.insert(path.to_string());
                        }
                    }
                    if let Some(next) = work::plan_next(input) {
                        self.push_latest(
                            text_probe(Category::Next, next, format!("tool:{id}"), i, m.line),
                            "",
                        );
                    }
                    if is_shell_tool(name) {
                        self.shell_calls
                            .insert(id.clone(), (name.clone(), input.clone()));
                    }
                }
                (
                    _,
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    },
                ) => {
                    if let Some((name, input)) = self.shell_calls.remove(tool_use_id) {
                        let text = strip_controls(&unwrap_envelope(tool_content_text(content)));
                        if let Some(outcome) = work::outcome_of(&name, &input, &text, *is_error) {
                            let p = tool_probe(Category::Outcome, outcome, tool_use_id, i, m.line);
                            self.push_latest(p, "");
                        }
                    }
                    if !is_error {
                        continue;
                    }
                    let Some(key) = error_key(content) else {
                        continue;
                    };
                    self.push(tool_probe(Category::Error, key, tool_use_id, i, m.line));
                }
                _ => {}
            }
        }
    }

    fn ask(&mut self, i: usize, line: u64, block: &Block, text: &str) {
        let Some(request) = request_text(text) else {
            return;
        };
        if let Some(state) = self.state.take() {
            self.probes.push(state);
        }
        self.request(i, line, block, &request);
    }

    /// A `## Task Context` the session carried in: the requests and rules it
    /// lists are the session's own, probed as its asks are. (A summary in
    /// another format lists nothing in a form to read back.)
    fn carried(&mut self, i: usize, line: u64, block: &Block, text: &str) {
        let Some(sections) = task_context_sections(text) else {
            return;
        };
        let facts = carried_facts(&strip_controls(sections));
        for request in &facts.requests {
            self.request(i, line, block, request);
        }
        let source = block_address(Side::User, block);
        for rule in &facts.constraints {
            let ruled: Vec<String> = sentences(rule)
                .into_iter()
                .filter_map(|s| rule_marker(&s).map(|at| sentence_probe(&s, at)))
                .collect();
            // A rule line states its rule; one with no marker word is probed whole.
            let expected = if ruled.is_empty() {
                vec![head_chars(
                    &normalise_whitespace(rule),
                    SENTENCE_WHOLE_CHARS,
                )]
            } else {
                ruled
            };
            for expected in expected {
                self.push(text_probe(
                    Category::Constraint,
                    expected,
                    source.clone(),
                    i,
                    line,
                ));
            }
        }
    }

    /// A request's probes: the request (a long one by its head and tail)
    /// and each of its rule sentences.
    fn request(&mut self, i: usize, line: u64, block: &Block, request: &str) {
        let source = block_address(Side::User, block);
        let probe = |category, expected| text_probe(category, expected, source.clone(), i, line);
        let whole = normalise_whitespace(request);
        if whole.chars().count() <= ASK_WHOLE_CHARS {
            self.push(probe(Category::Ask, whole));
        } else {
            let head = normalise_whitespace(&head_chars(request, ASK_PART_CHARS));
            let tail = normalise_whitespace(&tail_chars(request, ASK_PART_CHARS));
            self.push(probe(Category::Ask, head));
            self.push(probe(Category::Ask, tail));
        }
        for sentence in sentences(request) {
            if let Some(at) = rule_marker(&sentence) {
                self.push(probe(Category::Constraint, sentence_probe(&sentence, at)));
            }
        }
    }

    fn prose(&mut self, i: usize, line: u64, block: &Block, text: &str) {
        let text = strip_controls(text);
        let source = block_address(Side::Assistant, block);
        let all = sentences(&text);
        for sentence in &all {
            if sentence.ends_with('?') {
                continue;
            }
            if find_marker(&words(sentence), DECISION_MARKERS).is_some() {
                self.push(text_probe(
                    Category::Decision,
                    head_chars(sentence, SENTENCE_PART_CHARS),
                    source.clone(),
                    i,
                    line,
                ));
            }
            if let Some(reason) = work::reason(sentence) {
                self.push(text_probe(
                    Category::Reason,
                    reason,
                    source.clone(),
                    i,
                    line,
                ));
            }
        }
        if let Some(next) = all.iter().rev().find_map(|s| work::intent(s)) {
            self.push_latest(
                text_probe(Category::Next, next, source.clone(), i, line),
                "",
            );
        }
        if let Some(last) = all.last() {
            self.state = Some(text_probe(
                Category::State,
                head_chars(last, SENTENCE_PART_CHARS),
                source,
                i,
                line,
            ));
        }
    }

    fn finish(mut self) -> Vec<Probe> {
        self.end();
        self.probes
    }

    /// The probes found since the last call.
    fn take_probes(&mut self) -> Vec<Probe> {
        std::mem::take(&mut self.probes)
    }

    /// After the last row: the latest closing sentence is the last state.
    fn end(&mut self) {
        if let Some(state) = self.state.take() {
            self.probes.push(state);
        }
    }

    /// The row of the closing sentence not yet flushed: a later closing
    /// sentence replaces it unless an ask comes first.
    fn pending_state_row(&self) -> Option<usize> {
        self.state.as_ref().map(|p| p.row)
    }
}

/// The key line of a failed call's result, as its `error` probe expects it
/// (`None` for a result with no text).
pub(crate) fn error_key(content: &ToolContent) -> Option<String> {
    let text = strip_controls(&unwrap_envelope(tool_content_text(content)));
    if text.trim().is_empty() {
        return None;
    }
    Some(head_chars(
        &normalise_whitespace(naming_line(&error_excerpt(&text))),
        SENTENCE_PART_CHARS,
    ))
}

/// A probe of text the session said (an ask, a rule, a decision, a closing
/// sentence): read back from the view, with no call to recover it by.
fn text_probe(
    category: Category,
    expected: String,
    source: String,
    row: usize,
    line: u64,
) -> Probe {
    Probe {
        category,
        expected,
        source,
        line,
        row,
        pointer: None,
        also: Vec::new(),
        slot: None,
        superseded_at: None,
    }
}

fn tool_probe(category: Category, expected: String, id: &str, row: usize, line: u64) -> Probe {
    Probe {
        category,
        expected: normalise_whitespace(&expected),
        source: format!("tool:{id}"),
        line,
        row,
        pointer: Some(recovery_call(id)),
        also: Vec::new(),
        slot: None,
        superseded_at: None,
    }
}

/// `a/b/c/d.rs` → `b/c/d.rs`, `c/d.rs`: shorter forms of a path, each at
/// least a directory and a file name.
fn path_suffixes(path: &str) -> Vec<String> {
    let trimmed = path.trim_start_matches('/');
    let parts: Vec<&str> = trimmed.split('/').filter(|p| !p.is_empty()).collect();
    (1..parts.len().saturating_sub(1))
        .map(|k| parts[k..].join("/"))
        .filter(|s| s != path)
        .collect()
}

/// A rule sentence whole, or a long one from its marker on.
fn sentence_probe(sentence: &str, at: usize) -> String {
    if sentence.chars().count() <= SENTENCE_WHOLE_CHARS {
        sentence.to_string()
    } else {
        head_chars(&sentence[at..], SENTENCE_PART_CHARS)
    }
}

/// The first `n` characters, trailing whitespace trimmed.
fn head_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect::<String>().trim_end().to_string()
}

/// The last `n` characters, leading whitespace trimmed.
fn tail_chars(s: &str, n: usize) -> String {
    let total = s.chars().count();
    s.chars()
        .skip(total.saturating_sub(n))
        .collect::<String>()
        .trim_start()
        .to_string()
}

/// Sentences, whitespace-normalised: fenced code skipped, every line its own
/// block (finer than the summarizer's split, so a probe is never longer than
/// the sentence a summary keeps), split after `.`, `!` or `?` and a space.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let body = line.trim();
        if body.starts_with("```") || body.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let body = body.trim_start_matches(['-', '*', '+', '•', '>', '#', ' ']);
        let mut start = 0;
        for (i, c) in body.char_indices() {
            let after = i + c.len_utf8();
            let ends =
                matches!(c, '.' | '!' | '?') && body[after..].starts_with(char::is_whitespace);
            if ends {
                push_sentence(&body[start..after], &mut out);
                start = after;
            }
        }
        push_sentence(&body[start..], &mut out);
    }
    out
}

fn push_sentence(s: &str, out: &mut Vec<String>) {
    let s = normalise_whitespace(s);
    if s.chars().any(char::is_alphanumeric) {
        out.push(s);
    }
}

/// What a view says, as probes look for it: every block's text, tool inputs'
/// strings, tool output out of its Codex envelope, controls stripped,
/// whitespace normalised.
pub(crate) fn view_text(view: &View) -> String {
    let mut out = String::new();
    for b in view.messages.iter().flat_map(|m| &m.content) {
        out.push_str(&block_piece(b));
        out.push('\n');
    }
    normalise_whitespace(&strip_controls(&out))
}

/// The raw text a block contributes to a view's probe text (before its
/// `\n`): a tool call's name and the strings of its input, a tool result's
/// text out of its `{"output": ...}` envelope, any other block's view text.
pub(crate) fn block_piece(b: &Block) -> Cow<'_, str> {
    match b {
        Block::Text { text } => Cow::Borrowed(text),
        Block::ToolUse { name, input, .. } => {
            let mut out = name.clone();
            for s in strings_of(input) {
                out.push('\n');
                out.push_str(s);
            }
            Cow::Owned(out)
        }
        // Only a text starting with the envelope is unwrapped.
        Block::ToolResult {
            content: ToolContent::Text(t),
            ..
        } if !t.starts_with("{\"output\"") => Cow::Borrowed(t),
        Block::ToolResult { content, .. } => {
            Cow::Owned(unwrap_envelope(tool_content_text(content)))
        }
        other => Cow::Owned(block_text(other)),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Passed,
    Recoverable,
    Lost,
}

/// One category's counts on one view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Counts {
    pub passed: u64,
    pub recoverable: u64,
    pub lost: u64,
    pub critical: bool,
}

impl Counts {
    #[cfg(test)]
    pub(crate) fn judged(&self) -> u64 {
        self.passed + self.recoverable + self.lost
    }
}

/// A lost probe, as reports list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Lost {
    pub category: Category,
    pub expected: String,
    pub source: String,
    pub line: u64,
    pub critical: bool,
}

/// The score of one view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Evaluation {
    pub categories: BTreeMap<&'static str, Counts>,
    pub judged: u64,
    pub passed: u64,
    pub recoverable: u64,
    pub critical_judged: u64,
    pub critical_lost: u64,
    pub lost: Vec<Lost>,
}

impl Evaluation {
    /// Critical probes kept (passed or recoverable), per mille of those judged.
    pub(crate) fn critical_kept_permille(&self) -> u64 {
        permille(
            self.critical_judged - self.critical_lost,
            self.critical_judged,
        )
    }

    /// All probes kept (passed or recoverable), per mille of those judged.
    pub(crate) fn kept_permille(&self) -> u64 {
        permille(self.passed + self.recoverable, self.judged)
    }

    /// How well the view fares, worst first when sorted: critical probes
    /// kept, then all probes kept.
    pub(crate) fn survival(&self) -> (u64, u64) {
        (self.critical_kept_permille(), self.kept_permille())
    }
}

/// The worst call up to the scored one, by critical probes kept.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Worst {
    pub call: u32,
    pub critical_lost: u64,
    pub critical_kept_permille: u64,
    pub kept_permille: u64,
}

/// One call's score, as `replay --probes` and `probe` report it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CallScore {
    pub call: u32,
    pub status: Status,
    pub tiers_fired: Vec<Tier>,
    pub critical_lost: u64,
    pub critical_kept_permille: u64,
    pub kept_permille: u64,
}

impl CallScore {
    pub(crate) fn of(call: u32, status: Status, tiers: &[Tier], s: Survival) -> CallScore {
        CallScore {
            call,
            status,
            tiers_fired: tiers.to_vec(),
            critical_lost: s.critical_lost,
            critical_kept_permille: s.critical_kept_permille,
            kept_permille: s.kept_permille,
        }
    }
}

impl Worst {
    pub(crate) fn of(call: u32, e: &Evaluation) -> Worst {
        Worst {
            call,
            critical_lost: e.critical_lost,
            critical_kept_permille: e.critical_kept_permille(),
            kept_permille: e.kept_permille(),
        }
    }
}

/// The worst of the scores: fewest critical probes kept, then fewest kept
/// overall, the earliest call on a tie (what [`ProbePass`] keeps as it goes).
#[cfg(test)]
pub(crate) fn worst(scores: &[CallScore]) -> Option<Worst> {
    scores
        .iter()
        .min_by_key(|s| ((s.critical_kept_permille, s.kept_permille), s.call))
        .map(|s| Worst {
            call: s.call,
            critical_lost: s.critical_lost,
            critical_kept_permille: s.critical_kept_permille,
            kept_permille: s.kept_permille,
        })
}

/// `part / whole` in thousandths, rounded down; 1000 when nothing was judged.
pub(crate) fn permille(part: u64, whole: u64) -> u64 {
    (part * 1000).checked_div(whole).unwrap_or(1000)
}

/// Integer per mille as a percentage with one decimal: `987` → `98.7%`.
pub(crate) fn percent(permille: u64) -> String {
    format!("{}.{}%", permille / 10, permille % 10)
}

/// Judge `probes` on `view`, the view of a call whose history is the
/// record's first `history_rows` rows: probes from later rows are not judged,
/// and of the `state` probes only the latest one before the view is.
pub(crate) fn evaluate(probes: &[Probe], view: &View, history_rows: usize) -> Evaluation {
    evaluate_text(probes, &view_text(view), history_rows)
}

/// `evaluate`, with the view's precision: its summary lines checked against
/// `rows`, the record whose first `history_rows` rows the view's history is.
pub(crate) fn evaluate_with_precision(
    probes: &[Probe],
    view: &View,
    rows: &[Message],
    history_rows: usize,
) -> (Evaluation, precision::Precision) {
    let text = view_text(view);
    let mut t = Tally::default();
    tally_with(probes, history_rows, |_, p| judge(p, &text), &mut t);
    let mut reader = precision::LedgerReader::default();
    for (i, m) in rows.iter().enumerate() {
        reader.row(i, m);
    }
    let mut ledger = precision::Ledger::default();
    ledger.add(reader.take());
    let p = ledger.check(view, history_rows, probes, t.lost());
    (t.evaluation(probes), p)
}

/// `evaluate` on the view's text (as `view_text` made it).
fn evaluate_text(probes: &[Probe], text: &str, history_rows: usize) -> Evaluation {
    evaluate_with(probes, history_rows, |_, p| judge(p, text))
}

/// `evaluate`, with `judge` giving the outcome of the probe at an index.
fn evaluate_with(
    probes: &[Probe],
    history_rows: usize,
    judge: impl FnMut(usize, &Probe) -> Verdict,
) -> Evaluation {
    let mut t = Tally::default();
    tally_with(probes, history_rows, judge, &mut t);
    t.evaluation(probes)
}

/// An evaluation's counts, its lost probes by index: what scoring a view
/// costs when only the worst one is listed in full.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// In `Category::ALL` order.
    categories: [Counts; Category::ALL.len()],
    judged: u64,
    passed: u64,
    recoverable: u64,
    critical_judged: u64,
    critical_lost: u64,
    lost: Vec<usize>,
}

impl Tally {
    /// The evaluation in full, its lost probes named.
    pub(crate) fn evaluation(&self, probes: &[Probe]) -> Evaluation {
        Evaluation {
            categories: Category::ALL
                .iter()
                .zip(self.categories)
                .map(|(c, n)| (c.name(), n))
                .collect(),
            judged: self.judged,
            passed: self.passed,
            recoverable: self.recoverable,
            critical_judged: self.critical_judged,
            critical_lost: self.critical_lost,
            lost: self
                .lost
                .iter()
                .map(|&i| {
                    let p = &probes[i];
                    Lost {
                        category: p.category,
                        expected: p.expected.clone(),
                        source: p.source.clone(),
                        line: p.line,
                        critical: p.category.critical(),
                    }
                })
                .collect(),
        }
    }

    /// The indices of the probes lost, ascending.
    pub(crate) fn lost(&self) -> &[usize] {
        &self.lost
    }

    /// As [`Evaluation::survival`].
    pub(crate) fn survival(&self) -> Survival {
        Survival {
            critical_lost: self.critical_lost,
            critical_kept_permille: permille(
                self.critical_judged - self.critical_lost,
                self.critical_judged,
            ),
            kept_permille: permille(self.passed + self.recoverable, self.judged),
        }
    }
}

/// How well one view fares, in the numbers a timeline shows per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Survival {
    pub critical_lost: u64,
    pub critical_kept_permille: u64,
    pub kept_permille: u64,
}

impl Survival {
    /// Worst first when sorted: critical probes kept, then all probes kept.
    fn key(&self) -> (u64, u64) {
        (self.critical_kept_permille, self.kept_permille)
    }
}

/// Judge `probes` into `t` (cleared first): see [`evaluate`].
fn tally_with(
    probes: &[Probe],
    history_rows: usize,
    mut judge: impl FnMut(usize, &Probe) -> Verdict,
    t: &mut Tally,
) {
    let latest_state = probes
        .iter()
        .rposition(|p| p.category == Category::State && p.row < history_rows);
    let mut lost = std::mem::take(&mut t.lost);
    lost.clear();
    *t = Tally::default();
    for (c, n) in Category::ALL.iter().zip(&mut t.categories) {
        n.critical = c.critical();
    }
    for (i, p) in probes.iter().enumerate() {
        if !p.judged_before(history_rows)
            || (p.category == Category::State && Some(i) != latest_state)
        {
            continue;
        }
        let outcome = judge(i, p);
        let c = &mut t.categories[p.category as usize];
        t.judged += 1;
        if p.category.critical() {
            t.critical_judged += 1;
        }
        match outcome {
            Verdict::Passed => {
                c.passed += 1;
                t.passed += 1;
            }
            Verdict::Recoverable => {
                c.recoverable += 1;
                t.recoverable += 1;
            }
            Verdict::Lost => {
                c.lost += 1;
                if p.category.critical() {
                    t.critical_lost += 1;
                }
                lost.push(i);
            }
        }
    }
    t.lost = lost;
}

/// One probe on a view's text (as `view_text` made it).
pub(crate) fn judge(p: &Probe, view_text: &str) -> Verdict {
    judge_with(p, view_text, |needle| {
        memmem::find(view_text.as_bytes(), needle.as_bytes()).is_some()
    })
}

/// `judge`, with `has` telling whether a text is in the view's text.
fn judge_with(p: &Probe, view_text: &str, has: impl Fn(&str) -> bool) -> Verdict {
    if has(&p.expected) || p.also.iter().any(|a| has(a)) {
        Verdict::Passed
    } else if p
        .pointer
        .as_deref()
        .is_some_and(|ptr| carries(view_text, ptr))
    {
        Verdict::Recoverable
    } else {
        Verdict::Lost
    }
}

/// The pointer occurs as a whole token (`tool:a` is not in `tool:ab`; a
/// pointer that ends in `)`, as a shrunk form's does, is whole wherever it occurs).
pub(crate) fn carries(text: &str, pointer: &str) -> bool {
    text.match_indices(pointer)
        .any(|(at, _)| ends_token(&text[at + pointer.len()..]))
}

/// A token ends before `rest`: it is empty or starts with a character that
/// is not alphanumeric, `_` or `-`.
pub(crate) fn ends_token(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'))
}
