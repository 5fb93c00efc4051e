//! The extractive floor summarizer: the seed's constitution filled by rules,
//! offline and deterministic (no IO, clock, randomness, hash-map order or
//! floats). It is the engine's default floor.
//!
//! Σn = fold(Σn-1, span): the prior summary is parsed back, every fact line is
//! re-emitted verbatim, this span's delta is appended, and only
//! `## Current state` is recomputed. The format is built to parse back:
//!
//! ```text
//! ## Requests
//! - #1: <the ask, verbatim>
//!   <its next line, indented two spaces>
//!
//! ## Deliverables
//! - src/lib.rs: written (step 2); last edited (step 5)
//!
//! ## Decisions / ## Constraints / ## Ruled out / ## Findings / ## Archived
//! - <kebab-topic-key>: <statement>
//!
//! ## Current state
//! Goal: #1 — <the latest ask, shortened>
//! Deliverable: <paths written so far>
//! Status: <blocker or interruption at the end of the span>
//! Next: <the agent's last sentence>
//! ```
//!
//! `## Requests` and `## Current state` are always emitted; the other fact
//! sections only when they hold a line. Keys are stable: a request's is its
//! ordinal, a deliverable's its path, a ruled-out call's `tool-target-slug`,
//! every other fact's a slug of its first content words. Only deliverables
//! and ruled-out calls supersede (their key names the subject); a key already
//! held by a different subject gets a `-2`, `-3`… suffix (topic self-check).
//!
//! Under the token cap nothing is touched. Over it, lines are demoted, never
//! the P0 ones (requests, constraints): first the archive's own oldest lines
//! give way until it is within a fifth of the budget; then findings, ruled-out
//! calls and decisions move oldest-first to `## Archived` as gists; then gists
//! shrink to bare keys; then deliverable notes shrink to a verb (paths stay);
//! last, the oldest archived keys collapse into one counter line, so a long
//! task stays bounded by P0 + paths. See `budget`.
//!
//! Other rules: asks are trimmed, blank asks skipped, an ask logged verbatim
//! before keeps its ordinal. `Status` reports the span's last event (a new
//! ask, a failed or interrupted call — assistant prose after a failure does
//! not clear it). Reasoning and injected context are process and are not
//! kept. A prior in another format (another summarizer's) and an agent's own
//! summary are mined: strong negative rules become constraints, the head a
//! finding.

use std::collections::BTreeMap;
use std::ops::Bound;

mod budget;
mod digest;
mod prose;
mod tools;

use crate::engine::clean::strip_controls;
use crate::engine::estimate::Estimator;
use crate::engine::summarizer::{
    SpanEntry, SummarizeError, Summarizer, Summary, SummaryRequest, ToolCall,
};
use crate::engine::toolfacts::{error_excerpt, naming_line, written_paths};
use budget::{fit_to_budget, gist};
use digest::{COLLAPSED_KEY, CurrentState, Fact, Gist, Section, ordinal_of};
use prose::{
    DECISION_MARKERS, FINDING_MARKERS, anchor_date, ask_rule_marker, clip, clip_around,
    find_iso_date, flatten, has_marker, offset_in, sentences, slug, strong_negative_marker,
};
use tools::{call_key, call_subject};

/// The default floor summarizer. Stateless: everything it carries across
/// folds lives in its own previous output.
#[derive(Debug, Default, Clone, Copy)]
pub struct Extractive;

impl Summarizer for Extractive {
    fn name(&self) -> String {
        "extractive".to_string()
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let ask_cap = AskCap::new(req.budget_tokens, req.estimator);
        let digest = fold(req.prior, req.span, &ask_cap);
        let digest = fit_to_budget(digest, req.budget_tokens, req.estimator);
        Ok(Summary {
            text: digest.render(),
            summarizer: self.name(),
        })
    }
}

/// Parse the prior, absorb the span, recompute the current state.
fn fold(prior: Option<&str>, span: &[SpanEntry], ask_cap: &AskCap<'_>) -> Gist {
    // A prior minted before controls were stripped loses them here.
    let mut digest = prior
        .map(|p| Gist::parse(&strip_controls(p)))
        .unwrap_or_default();
    let foreign = std::mem::take(&mut digest.foreign);
    let mut folder = Folder::new(digest, ask_cap);
    if !foreign.trim().is_empty() {
        // A prior we did not write (another summarizer's): mine it like an
        // agent summary rather than drop it.
        folder.absorb_summary_text(&foreign, "earlier-summary");
    }
    for entry in span {
        folder.absorb(entry);
    }
    folder.finish(span.is_empty())
}

/// An ask is logged whole while it takes at most this share (1/N) of the
/// summary budget; a longer one keeps a verbatim head and tail, each
/// 1/ASK_PART_DIVISOR of the budget, and every rule in between.
const ASK_WHOLE_DIVISOR: u64 = 4;
const ASK_PART_DIVISOR: u64 = 16;
/// The head and tail of a long ask are never shorter than this (characters).
const ASK_PART_MIN_CHARS: usize = 300;
/// A constraint sentence longer than this keeps a verbatim window around its marker.
const CONSTRAINT_MAX_CHARS: usize = 500;
/// Decisions, findings and the `Next` sentence are cut here.
const STATEMENT_MAX_CHARS: usize = 200;
/// The goal line's share of the latest ask.
const GOAL_MAX_CHARS: usize = 200;
/// Words in a slug key.
const KEY_WORDS: usize = 4;
const CONSTRAINT_KEY_WORDS: usize = 5;

// ---------------------------------------------------------------------------
// The fold: absorbing one span into the digest
// ---------------------------------------------------------------------------

/// What the span ended on, for `Status`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LastEvent {
    Asked(u32),
    Working,
    Failed(String),
    Interrupted,
}

struct Folder<'c> {
    d: Gist,
    ask_cap: &'c AskCap<'c>,
    /// Where each slug key lives. A fold only appends facts or rewrites them
    /// in place, so positions stay valid until the budget step.
    slug_index: BTreeMap<String, (Section, usize)>,
    next_ordinal: u32,
    /// The ordinal of the span's most recent ask (even a repeated one).
    latest_ask: Option<u32>,
    last_event: Option<LastEvent>,
    last_sentence: Option<String>,
}

impl<'c> Folder<'c> {
    fn new(d: Gist, ask_cap: &'c AskCap<'c>) -> Folder<'c> {
        let next_ordinal = d.max_ordinal() + 1;
        Folder {
            ask_cap,
            slug_index: d.slug_index(),
            d,
            next_ordinal,
            latest_ask: None,
            last_event: None,
            last_sentence: None,
        }
    }

    fn absorb(&mut self, entry: &SpanEntry) {
        match entry {
            SpanEntry::Ask { text, .. } => self.absorb_ask(text),
            SpanEntry::AssistantText { text, .. } => self.absorb_assistant_text(text),
            SpanEntry::ToolCall(call) => self.absorb_call(call),
            SpanEntry::Interrupt { .. } => self.last_event = Some(LastEvent::Interrupted),
            SpanEntry::AgentSummary { text } => self.absorb_summary_text(text, "agent-summary"),
            // Injected context is re-readable and reasoning is process: neither is kept.
            SpanEntry::Context { .. } | SpanEntry::Reasoning { .. } => {}
        }
    }

    /// A failed or interrupted call is ruled out; a successful one may deliver files.
    fn absorb_call(&mut self, call: &ToolCall) {
        if call.interrupted {
            self.rule_out(call, None);
            self.last_event = Some(LastEvent::Interrupted);
        } else if call.is_error {
            let excerpt = error_excerpt(&call.output);
            let failed = format!("{}— {}", call_subject(call), naming_line(&excerpt));
            self.rule_out(call, Some(&excerpt));
            self.last_event = Some(LastEvent::Failed(failed));
        } else {
            self.record_deliverables(call);
            self.last_event = Some(LastEvent::Working);
        }
    }

    fn absorb_ask(&mut self, ask: &str) {
        let ask = ask.trim();
        if ask.is_empty() {
            return;
        }
        let ordinal = self.log_request(ask);
        self.latest_ask = Some(ordinal);
        self.last_event = Some(LastEvent::Asked(ordinal));
        for sentence in sentences(ask) {
            if let Some(at) = ask_rule_marker(sentence) {
                self.add_constraint(sentence, at);
            }
        }
    }

    /// The ask's ordinal: a new one, or the existing one if logged verbatim before.
    fn log_request(&mut self, ask: &str) -> u32 {
        let logged = self.ask_cap.logged(ask);
        if let Some(n) = self
            .d
            .requests
            .iter()
            .find(|f| f.text == logged)
            .and_then(|f| ordinal_of(&f.key))
        {
            return n;
        }
        let n = self.next_ordinal;
        self.next_ordinal += 1;
        self.d.requests.push(Fact::new(format!("#{n}"), logged));
        n
    }

    fn absorb_assistant_text(&mut self, text: &str) {
        let date = find_iso_date(text);
        let all = sentences(text);
        for sentence in &all {
            self.classify_prose(sentence, date);
        }
        if let Some(last) = all.last() {
            self.last_sentence = Some(clip(&flatten(last), STATEMENT_MAX_CHARS));
        }
        if matches!(self.last_event, None | Some(LastEvent::Asked(_))) {
            self.last_event = Some(LastEvent::Working);
        }
    }

    /// A decision or a finding, by the marker words a sentence carries.
    fn classify_prose(&mut self, sentence: &str, date: Option<&str>) {
        if sentence.ends_with('?') {
            return; // a question decides and finds nothing
        }
        let statement = clip(&flatten(sentence), STATEMENT_MAX_CHARS);
        if has_marker(sentence, DECISION_MARKERS) {
            self.add_fact(Section::Decisions, slug(&statement, KEY_WORDS), statement);
        } else if has_marker(sentence, FINDING_MARKERS) {
            let statement = anchor_date(statement, sentence, date);
            self.add_fact(Section::Findings, slug(&statement, KEY_WORDS), statement);
        }
    }

    /// Text that summarizes history we no longer see: its strong negative
    /// rules become constraints, its decisions and findings are mined, and
    /// its head is kept as one finding.
    fn absorb_summary_text(&mut self, text: &str, key: &str) {
        let date = find_iso_date(text);
        for sentence in sentences(text) {
            if let Some(at) = strong_negative_marker(sentence) {
                self.add_constraint(sentence, at);
            } else {
                self.classify_prose(sentence, date);
            }
        }
        let head = clip(&flatten(text), STATEMENT_MAX_CHARS);
        self.add_fact(Section::Findings, key.to_string(), head);
    }

    /// Adds a free-text fact unless it is already known. Free text names no
    /// subject we could verify, so a taken key never supersedes: it gets a suffix.
    /// A rule sentence as a constraint: a window around its marker at `at`,
    /// keyed by its first words.
    fn add_constraint(&mut self, sentence: &str, at: usize) {
        let rule = clip_around(sentence, at, CONSTRAINT_MAX_CHARS);
        self.add_fact(
            Section::Constraints,
            slug(&rule, CONSTRAINT_KEY_WORDS),
            rule,
        );
    }

    fn add_fact(&mut self, section: Section, base_key: String, text: String) {
        if self.is_known(section, &base_key, &text) {
            return;
        }
        let key = self.free_key(&base_key);
        self.push_slug_fact(section, key, text);
    }

    /// The same statement is live in its section, or archived, under its key
    /// family (the same text always slugs to the same base key).
    fn is_known(&self, section: Section, base_key: &str, text: &str) -> bool {
        let gist = gist(text);
        self.key_family_facts(base_key).any(|(s, f)| {
            (s == section && f.text == text) || (s == Section::Archived && f.text == gist)
        })
    }

    /// The live and archived facts keyed `base` or `base-N`.
    fn key_family_facts<'a>(&'a self, base: &'a str) -> impl Iterator<Item = (Section, &'a Fact)> {
        self.slug_index
            .range::<str, _>((Bound::Included(base), Bound::Unbounded))
            .take_while(move |(key, _)| key.starts_with(base))
            .filter(move |(key, _)| in_key_family(key, base))
            .map(|(_, &(s, i))| (s, &self.d.facts(s)[i]))
    }

    fn free_key(&self, base: &str) -> String {
        key_family(base)
            .find(|k| k != COLLAPSED_KEY && !self.slug_index.contains_key(k))
            .unwrap_or_default()
    }

    fn push_slug_fact(&mut self, section: Section, key: String, text: String) {
        let facts = self.d.facts_mut(section);
        self.slug_index.insert(key.clone(), (section, facts.len()));
        facts.push(Fact::new(key, text));
    }

    /// Records a failed or interrupted call. The key names the tool and its
    /// target; a later failure of the same call with the same error
    /// supersedes in place (only its step moves on), a different error of
    /// that call or a key held by another call moves on to the next suffix,
    /// so distinct errors are never merged.
    fn rule_out(&mut self, call: &ToolCall, error: Option<&str>) {
        let subject = call_subject(call);
        let text = match error {
            Some(excerpt) => format!("{subject}failed (step {}): {excerpt}", call.step),
            None => format!("{subject}interrupted (step {})", call.step),
        };
        let base = call_key(call);
        for key in key_family(&base) {
            match self.slug_index.get(&key) {
                Some(&(Section::RuledOut, i))
                    if same_outcome(&self.d.ruled_out[i].text, &text, &subject) =>
                {
                    self.d.ruled_out[i].text = text;
                    return;
                }
                Some(_) => continue,
                None if key == COLLAPSED_KEY => continue,
                None => {
                    self.push_slug_fact(Section::RuledOut, key, text);
                    return;
                }
            }
        }
    }

    /// A path is its own key, so the same key is always the same subject:
    /// a second write supersedes the note in place.
    fn record_deliverables(&mut self, call: &ToolCall) {
        for (path, verb) in written_paths(&call.name, &call.input) {
            let key = path_key(&path);
            let change = format!("{verb} (step {})", call.step);
            match self.d.deliverables.iter_mut().find(|f| f.key == key) {
                Some(fact) => {
                    let head = fact.text.split("; last ").next().unwrap_or_default();
                    fact.text = format!("{head}; last {change}");
                }
                None => self.d.deliverables.push(Fact::new(key, change)),
            }
        }
    }

    /// Recomputes `## Current state`; a field the span says nothing about
    /// keeps its prior value, so an empty span changes nothing.
    fn finish(mut self, span_is_empty: bool) -> Gist {
        let goal_ordinal = self
            .latest_ask
            .or_else(|| self.d.state.goal_ordinal())
            .or_else(|| Some(self.d.max_ordinal()).filter(|n| *n > 0));
        let goal = goal_ordinal.and_then(|n| {
            let text = self.d.request_text(n)?;
            Some(format!("#{n} — {}", clip(&flatten(text), GOAL_MAX_CHARS)))
        });
        let prior = std::mem::take(&mut self.d.state);
        let deliverable = if span_is_empty {
            prior.deliverable
        } else {
            Some(deliverable_line(&self.d.deliverables))
        };
        self.d.state = CurrentState {
            goal: goal.or(prior.goal),
            deliverable,
            status: self.last_event.map(describe_event).or(prior.status),
            next: self.last_sentence.or(prior.next),
        };
        self.d
    }
}

fn describe_event(event: LastEvent) -> String {
    match event {
        LastEvent::Asked(n) => format!("ask #{n} not yet worked on"),
        LastEvent::Working => "no open error at the end of the folded span".to_string(),
        LastEvent::Failed(what) => format!("the last tool call failed: {what}"),
        LastEvent::Interrupted => "interrupted by the user".to_string(),
    }
}

fn deliverable_line(deliverables: &[Fact]) -> String {
    if deliverables.is_empty() {
        return "nothing written yet".to_string();
    }
    let shown: Vec<&str> = deliverables
        .iter()
        .rev()
        .take(3)
        .map(|f| f.key.as_str())
        .collect();
    let more = deliverables.len() - shown.len();
    let more = if more > 0 {
        format!(", +{more} more")
    } else {
        String::new()
    };
    let list = clip(&format!("{}{more}", shown.join(", ")), 300);
    format!("written so far: {list}; anything else the goal asks for is still owed")
}

/// Whether two ruled-out lines record the same outcome of the call `subject`:
/// the same error lines (or both an interruption), whatever the step.
fn same_outcome(held: &str, new: &str, subject: &str) -> bool {
    fn outcome<'t>(text: &'t str, subject: &str) -> Option<(&'t str, &'t str)> {
        let rest = text.strip_prefix(subject)?;
        let (verb, rest) = rest.split_once(" (step ")?;
        let (_, after) = rest.split_once(')')?;
        Some((verb, after))
    }
    // An archived gist cannot be compared; only live lines are held here.
    outcome(held, subject).is_some_and(|h| Some(h) == outcome(new, subject))
}

/// `base`, `base-2`, `base-3`, …
fn key_family(base: &str) -> impl Iterator<Item = String> + '_ {
    std::iter::once(base.to_string()).chain((2u32..).map(move |n| format!("{base}-{n}")))
}

fn in_key_family(key: &str, base: &str) -> bool {
    key == base
        || key
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// Paths are keys verbatim, minus line breaks that would break the format.
fn path_key(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

// ---------------------------------------------------------------------------
// Requests: verbatim, with long asks elided but their constraints kept
// ---------------------------------------------------------------------------

const ELISION: &str = " […]";

/// How much of an ask the summary keeps verbatim, from the summary budget.
struct AskCap<'e> {
    budget: u64,
    est: &'e dyn Estimator,
}

impl<'e> AskCap<'e> {
    fn new(budget: u64, est: &'e dyn Estimator) -> AskCap<'e> {
        AskCap { budget, est }
    }

    /// The ask as logged: whole while it fits its share of the budget, else
    /// a verbatim head, every rule sentence between head and tail (each
    /// after an elision marker) and a verbatim tail, so a request typed
    /// after a long paste is kept.
    fn logged(&self, ask: &str) -> String {
        let tokens = self.est.text(ask);
        if tokens <= self.budget / ASK_WHOLE_DIVISOR {
            return ask.to_string();
        }
        let chars = ask.chars().count();
        let part_tokens = u128::from(self.budget / ASK_PART_DIVISOR);
        let part = (chars as u128 * part_tokens / u128::from(tokens.max(1))) as usize;
        let part = part.max(ASK_PART_MIN_CHARS);
        if 2 * part >= chars {
            return ask.to_string();
        }
        let head = ask_head(ask, part);
        let tail = ask_tail(ask, part);
        let tail_start = ask.len() - tail.len();
        let mut out = head.to_string();
        out.push_str(ELISION);
        for sentence in sentences(ask) {
            let start = offset_in(ask, sentence);
            let in_middle = start + sentence.len() > head.len() && start < tail_start;
            if !in_middle {
                continue;
            }
            if let Some(at) = ask_rule_marker(sentence) {
                out.push(' ');
                out.push_str(&clip_around(sentence, at, CONSTRAINT_MAX_CHARS));
                out.push_str(ELISION);
            }
        }
        out.push(' ');
        out.push_str(tail);
        out
    }
}

/// The first `max` characters, pulled back to a word boundary when one is near.
fn ask_head(ask: &str, max: usize) -> &str {
    let cut = ask.char_indices().nth(max).map_or(ask.len(), |(i, _)| i);
    let head = &ask[..cut];
    match head.rfind(char::is_whitespace) {
        Some(ws) if head[ws..].chars().count() < 80 => head[..ws].trim_end(),
        _ => head,
    }
}

/// The last `max` characters, pushed forward to a word boundary when one is near.
fn ask_tail(ask: &str, max: usize) -> &str {
    let chars = ask.chars().count();
    let cut = ask
        .char_indices()
        .nth(chars.saturating_sub(max))
        .map_or(ask.len(), |(i, _)| i);
    let tail = &ask[cut..];
    match tail.find(char::is_whitespace) {
        Some(ws) if tail[..ws].chars().count() < 80 => tail[ws..].trim_start(),
        _ => tail,
    }
}

#[cfg(test)]
mod tests;
