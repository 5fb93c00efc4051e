//! The extractive floor summarizer: the seed's constitution filled by rules,
//! offline and deterministic (no IO, clock, randomness, hash-map order or
//! floats). It is the engine's default floor.
//!
//! Σn = fold(Σn-1, span): the prior summary is parsed back, every fact line is
//! re-emitted verbatim unless a later fact on its subject supersedes it, this
//! span's delta is appended, and only `## Current state` is recomputed. The
//! format is built to parse back:
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
//! Deliverable: delivered: <paths written>; still owed: <files the goal names, unwritten>
//! Status: <an open error, an interruption or a new ask at the end of the span>
//! Next: <the latest step not yet done>
//! ```
//!
//! `## Requests` and `## Current state` are always emitted; the other fact
//! sections only when they hold a line.
//!
//! Keys are subjects. A request's key is its ordinal, a deliverable's its
//! path. A call's facts are keyed by what its action is about (`mix-test`,
//! `read-big-jsonl`: the action as `engine::action` names it, the same for a
//! retry); a finding's or a decision's by the path or identifier it names
//! (`transcript-renderer`, `agent-id`). A later fact on the same subject
//! supersedes the earlier one in place; a key already held by a different
//! subject gets a `-2`, `-3`… suffix (the topic self-check). Constraints
//! (P0) never supersede: a taken key gets a suffix.
//!
//! Ruled out holds only what was abandoned. A failed (or interrupted) call is
//! ruled out with its error verbatim; once the same action succeeds (later in
//! the span, or in the calls the view keeps raw after it, which the request
//! lists), its line goes: if the retry shows what made it work (an option, a
//! field, the directory it ran in), one finding says so, else nothing stays
//! (the fix lives in the files). Findings are statements of fact that name
//! their subject: a sentence that narrates intent ("Let me…", "I'll…") or
//! names no path or identifier is not one.
//!
//! Current state is current: `Status` names an open error (the latest
//! failure since the latest ask whose action has not succeeded since, the
//! calls after the span included), an interruption, or a new ask; `Next` is
//! the plan's step in progress (a planning tool's), else the agent's last
//! stated intent that no call followed, else not stated.
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
//! before keeps its ordinal. Reasoning and injected context are process and
//! are not kept. A prior in another format (another summarizer's) and an
//! agent's own summary are mined: strong negative rules become constraints,
//! decisions and findings are read as in prose, and a foreign prior's head
//! is kept as one finding.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;

use serde_json::Value;

mod artifacts;
mod budget;
mod digest;
mod knowledge;
mod plan;
mod prose;
mod tools;
mod worklog;

use crate::engine::action::{added_modifiers, parse_subject};
use crate::engine::clean::strip_controls;
use crate::engine::estimate::Estimator;
use crate::engine::lexicon::narrates_intent;
use crate::engine::milestones::{CheckKind, Work, read_work};
use crate::engine::summarizer::{
    SpanEntry, SummarizeError, Summarizer, Summary, SummaryRequest, ToolCall,
};
use crate::engine::toolfacts::{error_excerpt, naming_line, same_path, strings_of, written_paths};
use artifacts::{FileNote, FileTexts};
use budget::{fit_to_budget, gist};
use digest::{COLLAPSED_KEY, CurrentState, Fact, Gist, Section, ordinal_of};
use knowledge::Candidate;
use plan::{Plan, Status as PlanStatus};
use prose::{
    DECISION_MARKERS, FINDING_MARKERS, REASON_MARKERS, anchor_date, ask_rule_marker, clip,
    clip_around, find_iso_date, flatten, has_marker, offset_in, owed_paths, sentences, slug,
    strong_negative_marker, subject_key, subject_of,
};
use tools::CallName;

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
        let digest = fold(req.prior, req.span, req.later, &ask_cap);
        let digest = fit_to_budget(digest, req.budget_tokens, req.estimator);
        Ok(Summary {
            text: digest.render(),
            summarizer: self.name(),
        })
    }

    /// A failure ruled out, or the open error, that a call kept after the
    /// summary has since retried with success: the line goes (or becomes
    /// what the retry shows made it work), and Status says the error was
    /// resolved. Everything else comes back verbatim.
    fn refresh(&self, prior: &str, later: &[ToolCall]) -> Option<String> {
        let d = Gist::parse(&strip_controls(prior));
        if !d.foreign.trim().is_empty()
            || (d.ruled_out.is_empty() && open_error_of_gist(&d).is_none())
        {
            return None;
        }
        let est = crate::engine::estimate::CharsPerToken::default();
        let ask_cap = AskCap::new(u64::MAX, &est);
        let mut folder = Folder::new(d, &ask_cap);
        let open_before = folder.open_error.as_ref().map(|e| e.action.clone());
        folder.settle_calls(later);
        let resolved = open_before.is_some() && folder.open_error.is_none();
        let mut d = folder.d;
        if resolved && let Some(status) = d.state.status.as_mut() {
            let step = status_step(status);
            *status = match step {
                Some(s) => {
                    format!("no open error: the error of step {s} was resolved by a later call")
                }
                None => "no open error: it was resolved by a later call".to_string(),
            };
        }
        let text = d.render();
        (text != prior).then_some(text)
    }
}

/// The open error an earlier fold's `Status` names.
fn open_error_of_gist(d: &Gist) -> Option<OpenError> {
    d.state.status.as_deref().and_then(open_error_of)
}

/// `open error (step 7): …`: the step.
fn status_step(status: &str) -> Option<u32> {
    let (_, after) = status.split_once("(step ")?;
    after
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// Parse the prior, absorb the span, read what follows it, recompute the
/// current state.
fn fold<'c>(
    prior: Option<&str>,
    span: &'c [SpanEntry<'_>],
    later: &[ToolCall],
    ask_cap: &'c AskCap<'c>,
) -> Gist {
    // A prior minted before controls were stripped loses them here.
    let mut digest = prior
        .map(|p| Gist::parse(&strip_controls(p)))
        .unwrap_or_default();
    let foreign = std::mem::take(&mut digest.foreign);
    let mut folder = Folder::new(digest, ask_cap);
    if !foreign.trim().is_empty() {
        // A prior we did not write (another summarizer's): mine it like an
        // agent summary rather than drop it, keeping its head.
        folder.absorb_summary_text(&foreign);
        let head = clip(&flatten(&foreign), STATEMENT_MAX_CHARS);
        folder.add_fact(Section::Findings, "earlier-summary".to_string(), head);
    }
    for entry in span {
        folder.absorb(entry);
    }
    folder.look_ahead(later);
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
/// A finding pairing an error with the edits that made it go away:
/// `Tool `target` was fixed (step 9) after it failed (step 7): … — by editing …`.
const FIXED: &str = "was fixed ";
const FIXED_TRIMMED: &str = " was fixed";
/// Files a fix names before `and N more`.
const FIX_FILES_SHOWN: usize = 3;
/// The last report quoted, in whole sentences (a first sentence longer than
/// this is quoted whole up to [`REPORT_HARD_MAX_CHARS`]).
const REPORT_MAX_CHARS: usize = 600;
const REPORT_HARD_MAX_CHARS: usize = 1200;
/// An answer to the user's question, as Decisions keeps it.
const ANSWER_MAX_CHARS: usize = 400;
/// Texts a last report may join.
const REPORTS_JOINED: usize = 3;
const NOT_STATED: &str = "(not stated)";
/// `Next` once every step of the agent's plan is done.
const PLAN_DONE: &str = "every step of the plan is done";
/// The goal line's share of the latest ask.
const GOAL_MAX_CHARS: usize = 200;
/// Words in a slug key.
const KEY_WORDS: usize = 4;
const CONSTRAINT_KEY_WORDS: usize = 5;

// ---------------------------------------------------------------------------
// The fold: absorbing one span into the digest
// ---------------------------------------------------------------------------

/// What the span ended on, for `Status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastEvent {
    Asked(u32),
    Working,
    Interrupted,
}

/// What a fact is about: two facts on the same subject are one topic.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    /// A call's action (`engine::action`): its ruled-out line, or the
    /// finding its retry taught.
    Call(String),
    /// The path or identifier a statement names.
    Named(String),
}

/// A failure seen in this fold: what a retry of its action is compared with.
struct Failure {
    input: Value,
    target: String,
    step: u32,
    /// The line of its error that names it; `None` for an interruption.
    error: Option<String>,
}

/// The latest failure since the latest ask whose action has not succeeded since.
struct OpenError {
    action: String,
    status: String,
}

struct Folder<'c> {
    d: Gist,
    ask_cap: &'c AskCap<'c>,
    /// Where each slug key lives. A fold appends facts or rewrites them in
    /// place; a fact that moves or goes rebuilds it.
    slug_index: BTreeMap<String, (Section, usize)>,
    next_ordinal: u32,
    /// The ordinal of the span's most recent ask (even a repeated one).
    latest_ask: Option<u32>,
    last_event: Option<LastEvent>,
    /// This fold's failures, by action.
    failures: BTreeMap<String, Failure>,
    open_error: Option<OpenError>,
    /// The last intent the agent stated, while no call has followed it.
    pending_intent: Option<String>,
    /// The latest intent the agent stated in the span, and its step.
    latest_intent: Option<(u32, String)>,
    /// The first item of the latest "next steps" list the agent wrote.
    next_listed: Option<String>,
    /// The agent's latest report, carried until it reports again.
    last_report: Option<String>,
    /// The statements of each text since the latest ask, in order.
    reports: Vec<String>,
    /// The latest ask is a question not answered yet: its ordinal.
    question: Option<u32>,
    /// The latest plan (a planning tool's), carried from fold to fold.
    plan: Option<Plan>,
    /// The tracker task started and not closed since, carried.
    sub_task: Option<String>,
    /// Calls follow the span (the view keeps them raw).
    work_follows: bool,
    /// Paths the calls after the span wrote.
    written_later: Vec<String>,
    /// The files' texts as this span shows them (reads, writes, edits).
    texts: FileTexts,
    /// This span's writes in order: step, file name, definitions touched.
    edits: Vec<(u32, String, Vec<String>)>,
    /// The latest step seen (the prior's work log's included).
    last_step: u32,
    /// Knowledge candidates, and the texts that refer to them.
    candidates: Vec<Candidate>,
    /// Read in place from the span (a long ask or text is not copied).
    mentions: Vec<Cow<'c, str>>,
}

impl<'c> Folder<'c> {
    fn new(d: Gist, ask_cap: &'c AskCap<'c>) -> Folder<'c> {
        let next_ordinal = d.max_ordinal() + 1;
        let open_error = d.state.status.as_deref().and_then(open_error_of);
        // A prior written before `Last report:` had its own line kept it in Status.
        let last_report = d.state.last_report.clone().or_else(|| {
            d.state
                .status
                .as_deref()
                .and_then(report_of)
                .map(str::to_string)
        });
        let plan = d.state.plan.as_deref().map(Plan::parse);
        let sub_task = d.state.sub_task.clone().filter(|_| plan.is_none());
        let last_step = d
            .work_log
            .last()
            .and_then(|f| f.key.rsplit([' ', '–']).next()?.parse().ok())
            .unwrap_or(0);
        Folder {
            ask_cap,
            slug_index: d.slug_index(),
            d,
            next_ordinal,
            latest_ask: None,
            last_event: None,
            failures: BTreeMap::new(),
            open_error,
            pending_intent: None,
            latest_intent: None,
            next_listed: None,
            last_report,
            reports: Vec::new(),
            question: None,
            plan,
            sub_task,
            work_follows: false,
            written_later: Vec::new(),
            texts: FileTexts::default(),
            edits: Vec::new(),
            last_step,
            candidates: Vec::new(),
            mentions: Vec::new(),
        }
    }

    fn absorb(&mut self, entry: &'c SpanEntry<'_>) {
        match entry {
            SpanEntry::Ask { text, .. } => self.absorb_ask(text),
            SpanEntry::AssistantText { step, text } => {
                self.last_step = self.last_step.max(*step);
                self.absorb_assistant_text(*step, text)
            }
            SpanEntry::ToolCall(call) => {
                self.last_step = self.last_step.max(call.step);
                self.absorb_call(call)
            }
            SpanEntry::Interrupt { .. } => self.last_event = Some(LastEvent::Interrupted),
            SpanEntry::AgentSummary { text } => self.absorb_summary_text(text),
            // Injected context is re-readable and reasoning is process: neither is kept.
            SpanEntry::Context { .. } | SpanEntry::Reasoning { .. } => {}
        }
    }

    /// A failed or interrupted call is ruled out (and a failure is the open
    /// error); a successful one may deliver files, state a plan, run a
    /// check or reach a milestone, and settles an earlier failure of its action.
    fn absorb_call(&mut self, call: &ToolCall) {
        let name = CallName::of(call);
        self.pending_intent = None;
        self.mentions.push(Cow::Owned(
            strings_of(&call.input).collect::<Vec<_>>().join(" "),
        ));
        if call.is_error && only_a_sibling_failed(&call.output) {
            // Never run: a parallel call failed. Nothing was tried.
            return;
        }
        let no_match = call.is_error && found_no_match(call);
        if call.interrupted {
            let text = format!("{}interrupted (step {})", name.subject, call.step);
            self.rule_out(call, &name, text, None);
            self.last_event = Some(LastEvent::Interrupted);
        } else if call.is_error && !no_match {
            self.record_work(call);
            let excerpt = error_excerpt(&call.output);
            let error = naming_line(&excerpt).to_string();
            let text = format!("{}failed (step {}): {excerpt}", name.subject, call.step);
            self.open_error = Some(OpenError {
                action: name.action.clone(),
                status: format!("open error (step {}): {}— {error}", call.step, name.subject),
            });
            self.rule_out(call, &name, text, Some(error));
            self.last_event = Some(LastEvent::Working);
        } else {
            self.texts.observe(call);
            self.record_deliverables(call);
            self.record_work(call);
            self.settle(call, &name);
            self.record_plan(call);
            if let Some(task) = viewed_task(call)
                && let Some(limits) = knowledge::spec_limits(&call.output)
            {
                // A task's spec, as the tracker shows it: its limits.
                knowledge::put(&mut self.d.knowledge, format!("spec {task}"), limits);
            }
            if matches!(call.name.as_str(), "Task" | "Agent" | "task") {
                // A helper's report: what it learned by reading.
                for sentence in sentences(&call.output) {
                    self.candidates.extend(knowledge::candidate(sentence));
                }
            }
            self.last_event = Some(LastEvent::Working);
        }
    }

    /// A planning call's plan: the work log says which steps started or
    /// finished, and it is the plan the current state shows.
    fn record_plan(&mut self, call: &ToolCall) {
        let Some(plan) = Plan::of_call(call) else {
            return;
        };
        for change in plan.changes_from(self.plan.as_ref()) {
            worklog::log(&mut self.d.work_log, call.step, change, None);
        }
        self.plan = Some(plan);
        self.sub_task = None;
    }

    /// A check run, a commit, a push or a tracked task: the work log's
    /// line; a commit marks the files it took, a tracked task is the
    /// sub-task, and a check run before any file was written is a baseline.
    fn record_work(&mut self, call: &ToolCall) {
        let Some(work) = read_work(&call.name, &call.input, &call.output, call.is_error) else {
            return;
        };
        let step = call.step;
        match work {
            Work::Check {
                kind,
                command,
                passed,
                counts,
                failure,
            } => {
                let shown = format!("`{command}`");
                let outcome = if passed { "passed" } else { "failed" };
                let mut text = match &counts {
                    Some(c) => format!("{shown} {outcome}: {c}"),
                    None => format!("{shown} {outcome}"),
                };
                // What failed, in the output's words: what the fix is for.
                if let Some(f) = &failure {
                    text.push_str(" — ");
                    text.push_str(f);
                }
                if self.d.deliverables.is_empty() {
                    let line = format!(
                        "{outcome} (step {step}, before any file was written){}",
                        counts
                            .as_ref()
                            .map(|c| format!(": {c}"))
                            .unwrap_or_default()
                    );
                    knowledge::put_once(&mut self.d.knowledge, format!("baseline {shown}"), line);
                }
                if passed && kind == CheckKind::Build {
                    knowledge::put(
                        &mut self.d.knowledge,
                        format!("{} {shown}", kind.noun()),
                        format!("works (step {step})"),
                    );
                }
                worklog::log(&mut self.d.work_log, step, text, Some(&shown));
            }
            Work::Commit { hash, message } => {
                for f in &mut self.d.deliverables {
                    let mut note = FileNote::parse(&f.text);
                    note.commit(step, hash.as_deref());
                    f.text = note.render();
                }
                let text = match (&hash, &message) {
                    (Some(h), Some(m)) => format!("committed {h} \"{m}\""),
                    (None, Some(m)) => format!("committed \"{m}\""),
                    (Some(h), None) => format!("committed {h}"),
                    (None, None) => "committed".to_string(),
                };
                worklog::log(&mut self.d.work_log, step, text, None);
            }
            Work::Shipped { command } => {
                worklog::log(&mut self.d.work_log, step, format!("`{command}`"), None);
            }
            Work::Tracked {
                command,
                closed,
                task,
            } => {
                let what = task.clone().unwrap_or_else(|| format!("`{command}`"));
                let verb = if closed { "closed" } else { "started" };
                worklog::log(&mut self.d.work_log, step, format!("{verb} {what}"), None);
                if closed {
                    let same = |held: &str| task.as_deref().is_none_or(|t| held.starts_with(t));
                    if self.sub_task.as_deref().is_some_and(same) {
                        self.sub_task = None;
                    }
                } else {
                    self.sub_task = Some(format!("{what} (started at step {step})"));
                }
            }
        }
    }

    /// The calls the view keeps raw after the span: a success settles an
    /// earlier failure of its action, a plan is the latest, files written
    /// are no longer owed. Nothing of them is summarized.
    fn look_ahead(&mut self, later: &[ToolCall]) {
        self.work_follows = !later.is_empty();
        if self.work_follows {
            self.pending_intent = None;
        }
        for call in later.iter().filter(|c| !c.is_error && !c.interrupted) {
            let name = CallName::of(call);
            self.settle_later(call, &name);
            if let Some(plan) = Plan::of_call(call) {
                self.plan = Some(plan);
            }
            self.written_later.extend(
                written_paths(&call.name, &call.input)
                    .into_iter()
                    .map(|(p, _)| p),
            );
        }
    }

    /// Settle what the calls kept after a summary retried with success
    /// (its refresh): nothing else of them is read.
    fn settle_calls(&mut self, later: &[ToolCall]) {
        for call in later.iter().filter(|c| !c.is_error && !c.interrupted) {
            let name = CallName::of(call);
            self.settle_later(call, &name);
        }
    }

    fn absorb_ask(&mut self, ask: &'c str) {
        let ask = ask.trim();
        if ask.is_empty() {
            return;
        }
        let ordinal = self.log_request(ask);
        worklog::log(
            &mut self.d.work_log,
            self.last_step + 1,
            format!("#{ordinal} asked"),
            None,
        );
        self.mentions.push(Cow::Borrowed(ask));
        // What was reported before the ask stays the last report until a new one.
        if let Some(r) = join_reports(&self.reports) {
            self.last_report = Some(r);
        }
        self.reports.clear();
        self.question = ask.trim_end().ends_with('?').then_some(ordinal);
        self.latest_ask = Some(ordinal);
        self.last_event = Some(LastEvent::Asked(ordinal));
        // A new ask moves on: what failed before it is no longer the open error.
        self.open_error = None;
        self.pending_intent = None;
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

    fn absorb_assistant_text(&mut self, step: u32, text: &'c str) {
        let date = find_iso_date(text);
        let all = sentences(text);
        for sentence in &all {
            // A sentence kept as a decision or a finding is not knowledge again.
            if !self.classify_prose(sentence, date) {
                self.candidates.extend(knowledge::candidate(sentence));
            }
        }
        self.mentions.push(Cow::Borrowed(text));
        // What it will do: a narration of intent, or the lead-in that ends
        // the text before a call (`Close this task:`).
        let lead_in = all.last().filter(|s| s.ends_with(':'));
        let intent = all
            .iter()
            .rev()
            .find(|s| !s.ends_with('?') && narrates_intent(s))
            .or(lead_in)
            .map(|s| clip(&flatten(s.trim_end_matches(':')), STATEMENT_MAX_CHARS));
        if let Some(intent) = &intent {
            self.latest_intent = Some((step, intent.clone()));
        }
        self.pending_intent = intent;
        if let Some(first) = listed_next_step(text) {
            self.next_listed = Some(first);
        }
        if let Some(report) = report_of_text(&all) {
            if let Some(n) = self.question.take() {
                // The user asked why or what: the answer is the agent's reasoning.
                let answer = clip(&report, ANSWER_MAX_CHARS);
                self.add_fact(
                    Section::Decisions,
                    format!("answer-{n}"),
                    format!("#{n} answered: {answer}"),
                );
            }
            self.reports.push(report);
        }
        if matches!(self.last_event, None | Some(LastEvent::Asked(_))) {
            self.last_event = Some(LastEvent::Working);
        }
    }

    /// A decision or a finding, by the marker words a sentence carries. A
    /// finding must state a fact about a path or identifier it names; an
    /// intent with its reason is a decision.
    fn classify_prose(&mut self, sentence: &str, date: Option<&str>) -> bool {
        if sentence.ends_with('?') {
            return false; // a question decides and finds nothing
        }
        let statement = clip(&flatten(sentence), STATEMENT_MAX_CHARS);
        let intent = narrates_intent(sentence);
        let reasoned_intent = intent && has_marker(sentence, REASON_MARKERS);
        if has_marker(sentence, DECISION_MARKERS) || reasoned_intent {
            match subject_of(&statement) {
                Some(subject) => {
                    let key = subject_key(&subject);
                    self.add_named(Section::Decisions, subject, key, statement);
                }
                None => self.add_fact(Section::Decisions, slug(&statement, KEY_WORDS), statement),
            }
            true
        } else if has_marker(sentence, FINDING_MARKERS) && !intent {
            let Some(subject) = subject_of(&statement) else {
                return false;
            };
            let statement = anchor_date(statement, sentence, date);
            let key = subject_key(&subject);
            self.add_named(Section::Findings, subject, key, statement);
            true
        } else {
            false
        }
    }

    /// Text that summarizes history we no longer see: its strong negative
    /// rules become constraints, its decisions and findings are mined.
    fn absorb_summary_text(&mut self, text: &str) {
        let date = find_iso_date(text);
        for sentence in sentences(text) {
            if let Some(at) = strong_negative_marker(sentence) {
                self.add_constraint(sentence, at);
            } else if !self.classify_prose(sentence, date) {
                self.candidates.extend(knowledge::candidate(sentence));
            }
        }
    }

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

    /// Adds a fact whose subject is not known (a constraint, a decision
    /// naming nothing) unless it is already known: a taken key never
    /// supersedes, it gets a suffix.
    fn add_fact(&mut self, section: Section, base_key: String, text: String) {
        if self.is_known(section, &base_key, &text) {
            return;
        }
        let key = self.free_key(&base_key);
        self.push_slug_fact(section, key, text);
    }

    /// A statement about a named subject, unless already known verbatim.
    fn add_named(&mut self, section: Section, subject: String, base_key: String, text: String) {
        if self.is_known(section, &base_key, &text) {
            return;
        }
        self.put_fact(section, &Subject::Named(subject), &base_key, text);
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

    /// The facts held about `subject` that a new fact in `section`
    /// supersedes: a call's facts in Ruled out, Findings or (under the same
    /// key family) Archived; a named subject's in its own section or Archived.
    fn held_about(&self, section: Section, subject: &Subject, base: &str) -> Vec<(Section, usize)> {
        let sections: &[Section] = match subject {
            Subject::Call(_) => &[Section::RuledOut, Section::Findings, Section::Archived],
            Subject::Named(_) => &[section, Section::Archived],
        };
        let mut held = Vec::new();
        for &s in sections {
            for (i, f) in self.d.facts(s).iter().enumerate() {
                let archived_elsewhere = s == Section::Archived && !in_key_family(&f.key, base);
                if !archived_elsewhere && fact_subject(s, &f.text).as_ref() == Some(subject) {
                    held.push((s, i));
                }
            }
        }
        held
    }

    /// The fact on `subject` now reads `text`, in `section`: it supersedes
    /// whatever was held on that subject (keeping its key, in place when in
    /// the same section); a new subject takes the first free key of `base`'s
    /// family (a key held by another subject is never reused).
    fn put_fact(&mut self, section: Section, subject: &Subject, base: &str, text: String) {
        let held = self.held_about(section, subject, base);
        let Some(&(s, i)) = held.first() else {
            let key = self.free_key(base);
            self.push_slug_fact(section, key, text);
            return;
        };
        if held.len() == 1 && s == section {
            self.d.facts_mut(s)[i].text = text;
            return;
        }
        let key = self.d.facts(s)[i].key.clone();
        self.remove(&held);
        self.d.facts_mut(section).push(Fact::new(key, text));
        self.slug_index = self.d.slug_index();
    }

    /// Drops facts by position; the slug index is rebuilt.
    fn remove(&mut self, at: &[(Section, usize)]) {
        // Back to front, so each position still points at its fact.
        let mut at = at.to_vec();
        at.sort_by_key(|&(s, i)| (s as u8, std::cmp::Reverse(i)));
        for (s, i) in at {
            self.d.facts_mut(s).remove(i);
        }
        self.slug_index = self.d.slug_index();
    }

    /// Records a failed or interrupted call: its line supersedes the one
    /// held on the same action (the latest failure is the fact).
    fn rule_out(&mut self, call: &ToolCall, name: &CallName, text: String, error: Option<String>) {
        self.put_fact(
            Section::RuledOut,
            &Subject::Call(name.action.clone()),
            &name.key,
            text,
        );
        self.failures.insert(
            name.action.clone(),
            Failure {
                input: call.input.clone().into_owned(),
                target: call_target_of(&name.subject),
                step: call.step,
                error,
            },
        );
    }

    /// `call` succeeded: an earlier failure of an action it performed was
    /// not abandoned, so its ruled-out line goes and it is no longer the
    /// open error. When the retry of the call's own action shows what made
    /// it work, one finding keeps that; when files were edited in between,
    /// one finding pairs the error with those edits.
    fn settle(&mut self, call: &ToolCall, name: &CallName) {
        self.settle_with(call, name, true);
    }

    /// `settle` for a call the view keeps raw after the span: what it
    /// settles goes, but the edits between are not all in this span.
    fn settle_later(&mut self, call: &ToolCall, name: &CallName) {
        self.settle_with(call, name, false);
    }

    fn settle_with(&mut self, call: &ToolCall, name: &CallName, in_span: bool) {
        for (n, action) in name.performs.iter().enumerate() {
            if self
                .open_error
                .as_ref()
                .is_some_and(|e| &e.action == action)
            {
                self.open_error = None;
            }
            let subject = Subject::Call(action.clone());
            let held: Vec<(Section, usize)> = self
                .held_about(Section::RuledOut, &subject, &name.key)
                .into_iter()
                .filter(|&(s, i)| {
                    s != Section::Findings && is_failure_line(&self.d.facts(s)[i].text)
                })
                .collect();
            let failure = self.failures.remove(action).or_else(|| {
                let &(s, i) = held.first()?;
                failure_of_line(&self.d.facts(s)[i].text)
            });
            let Some(failure) = failure else {
                continue;
            };
            let added = if n == 0 {
                let target = call_target_of(&name.subject);
                added_modifiers(
                    &call.name,
                    &failure.input,
                    &call.input,
                    &failure.target,
                    &target,
                )
            } else {
                Vec::new()
            };
            let fix = if in_span && n == 0 {
                self.edits_between(failure.step, call.step)
            } else {
                None
            };
            match (failure.error, fix) {
                (Some(error), _) if !added.is_empty() => {
                    let added: Vec<String> = added.iter().map(|a| format!("`{a}`")).collect();
                    let text = format!(
                        "{}works with {}; without, it failed (step {}): {error}",
                        name.subject,
                        added.join(", "),
                        failure.step
                    );
                    self.put_fact(Section::Findings, &subject, &name.key, text);
                }
                (Some(error), Some(fix)) => {
                    let text = format!(
                        "{}{FIXED}(step {}) after it failed (step {}): {error} — by editing {fix}",
                        name.subject, call.step, failure.step
                    );
                    self.put_fact(Section::Findings, &subject, &name.key, text);
                }
                _ => self.remove(&held),
            }
        }
    }

    /// The files (and definitions) this span edited after step `from` and
    /// before step `to`, when there are any.
    fn edits_between(&self, from: u32, to: u32) -> Option<String> {
        let mut files: Vec<(String, Vec<String>)> = Vec::new();
        for (step, file, defs) in &self.edits {
            if *step <= from || *step >= to {
                continue;
            }
            match files.iter_mut().find(|(f, _)| f == file) {
                Some((_, held)) => {
                    for d in defs {
                        if !held.contains(d) {
                            held.push(d.clone());
                        }
                    }
                }
                None => files.push((file.clone(), defs.clone())),
            }
        }
        if files.is_empty() {
            return None;
        }
        let shown: Vec<String> = files
            .iter()
            .take(FIX_FILES_SHOWN)
            .map(|(file, defs)| {
                if defs.is_empty() {
                    file.clone()
                } else {
                    let defs: Vec<String> = defs.iter().take(3).map(|d| format!("`{d}`")).collect();
                    format!("{file} ({})", defs.join(", "))
                }
            })
            .collect();
        let more = files.len().saturating_sub(FIX_FILES_SHOWN);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Some(format!("{}{more}", shown.join(", ")))
    }

    /// A path is its own key, so the same key is always the same subject:
    /// a second write supersedes the note in place, merging what it changed.
    fn record_deliverables(&mut self, call: &ToolCall) {
        let changes = self.texts.changes(call);
        for (path, verb) in written_paths(&call.name, &call.input) {
            let change = changes
                .iter()
                .find(|(p, _, _)| *p == path)
                .map(|(_, _, c)| c.clone())
                .unwrap_or_default();
            let key = path_key(&path);
            let mut note = match self.d.deliverables.iter().position(|f| f.key == key) {
                Some(i) => FileNote::parse(&self.d.deliverables[i].text),
                None => FileNote::default(),
            };
            note.record(verb, call.step, &change);
            match self.d.deliverables.iter_mut().find(|f| f.key == key) {
                Some(fact) => fact.text = note.render(),
                None => self
                    .d
                    .deliverables
                    .push(Fact::new(key.clone(), note.render())),
            }
            let touched: Vec<String> = change
                .changed
                .iter()
                .chain(&change.added)
                .chain(&change.removed)
                .cloned()
                .collect();
            let file = key.rsplit('/').next().unwrap_or(&key).to_string();
            self.edits.push((call.step, file, touched));
        }
    }

    /// Files the goal's ask names to be made that no call has written.
    fn owed(&self, goal: Option<u32>) -> Vec<String> {
        let Some(text) = goal.and_then(|n| self.d.request_text(n)) else {
            return Vec::new();
        };
        owed_paths(text)
            .into_iter()
            .filter(|p| {
                let delivered = self.d.deliverables.iter().any(|f| same_path(&f.key, p));
                let later = self.written_later.iter().any(|w| same_path(w, p));
                !delivered && !later
            })
            .collect()
    }

    /// What this fold learned that the agent said about identifiers.
    fn keep_knowledge(&mut self) {
        let candidates = std::mem::take(&mut self.candidates);
        for c in knowledge::choose(candidates, &self.mentions) {
            knowledge::put(&mut self.d.knowledge, c.key, c.statement);
        }
    }

    /// Recomputes `## Current state`; an empty span changes nothing.
    fn finish(mut self, span_is_empty: bool) -> Gist {
        self.keep_knowledge();
        let goal_ordinal = self
            .latest_ask
            .or_else(|| self.d.state.goal_ordinal())
            .or_else(|| Some(self.d.max_ordinal()).filter(|n| *n > 0));
        let goal = goal_ordinal.and_then(|n| {
            let text = self.d.request_text(n)?;
            Some(format!("#{n} — {}", clip(&flatten(text), GOAL_MAX_CHARS)))
        });
        let owed = self.owed(goal_ordinal);
        let prior = std::mem::take(&mut self.d.state);
        if span_is_empty {
            self.d.state = CurrentState {
                goal: goal.or(prior.goal),
                ..prior
            };
            return self.d;
        }
        let status = match self.last_event {
            Some(LastEvent::Asked(n)) if self.work_follows => format!("working on ask #{n}"),
            Some(LastEvent::Asked(n)) => format!("ask #{n} not yet worked on"),
            Some(LastEvent::Interrupted) => "interrupted by the user".to_string(),
            Some(LastEvent::Working) | None => match &self.open_error {
                Some(e) => e.status.clone(),
                None => "no open error at the end of the folded span".to_string(),
            },
        };
        let plan_next = self.plan.as_ref().and_then(|p| p.next());
        let sub_task = match plan_next {
            Some((PlanStatus::Doing, step)) => Some(step.to_string()),
            _ => self.sub_task.clone(),
        };
        let plan_done = self.plan.as_ref().is_some_and(Plan::all_done);
        let next = if let Some((status, step)) = plan_next {
            let which = match status {
                PlanStatus::Doing => "the plan's step in progress",
                _ => "the plan's next step",
            };
            format!("{step} ({which})")
        } else if let Some(intent) = self.pending_intent.take() {
            intent
        } else if let Some(listed) = self.next_listed.take() {
            format!("{listed} (the agent's list of what is left)")
        } else if plan_done && self.latest_ask.is_none() {
            PLAN_DONE.to_string()
        } else if let Some((step, intent)) = self.latest_intent.take() {
            format!("{intent} (stated at step {step})")
        } else if plan_done {
            PLAN_DONE.to_string()
        } else if let Some(task) = &self.sub_task {
            format!("go on with {task}")
        } else if let Some(prior) = prior
            .next
            .filter(|n| n != NOT_STATED && self.latest_ask.is_none())
        {
            // Nothing newer was said: what was said last still stands, with its step.
            prior
        } else {
            NOT_STATED.to_string()
        };
        let root = self.d.root();
        self.d.state = CurrentState {
            goal: goal.or(prior.goal),
            sub_task,
            plan: self.plan.as_ref().map(Plan::render),
            deliverable: Some(deliverable_line(
                &self.d.deliverables,
                root.as_deref(),
                &owed,
                goal_ordinal,
            )),
            status: Some(status),
            last_report: join_reports(&self.reports).or(self.last_report.take()),
            next: Some(next),
        };
        self.d
    }
}

/// The subject of a fact line read back: a call's action for the lines a
/// call makes (`Tool `target` failed (step …`, `… works with …`), else
/// the path or identifier it names. Requests, deliverables and constraints
/// have none here (their keys are their own).
fn fact_subject(section: Section, text: &str) -> Option<Subject> {
    match section {
        Section::Requests
        | Section::Deliverables
        | Section::Constraints
        | Section::WorkLog
        | Section::Knowledge => None,
        Section::RuledOut => call_action_of_line(text).map(Subject::Call),
        Section::Findings | Section::Archived => call_action_of_line(text)
            .map(Subject::Call)
            .or_else(|| subject_of(text).map(Subject::Named)),
        Section::Decisions => subject_of(text).map(Subject::Named),
    }
}

/// The action of a line a call made: `Tool `target`` then `failed`,
/// `interrupted` or `works with`.
fn call_action_of_line(text: &str) -> Option<String> {
    let (tool, target, rest) = parse_subject(text)?;
    let made_by_call = [" failed", " interrupted", " works with", FIXED_TRIMMED]
        .iter()
        .any(|v| rest.starts_with(v));
    made_by_call.then(|| CallName::named(tool, target).action)
}

/// A ruled-out line (live, or an archived gist of one).
fn is_failure_line(text: &str) -> bool {
    parse_subject(text)
        .is_some_and(|(_, _, rest)| rest.starts_with(" failed") || rest.starts_with(" interrupted"))
}

/// A failure as a ruled-out line of an earlier fold records it (its input
/// is not kept: only the target is compared).
fn failure_of_line(text: &str) -> Option<Failure> {
    let (_, target, rest) = parse_subject(text)?;
    let (_, after) = rest.split_once("(step ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    let error = rest
        .split_once("): ")
        .map(|(_, excerpt)| naming_line(excerpt).to_string());
    Some(Failure {
        input: Value::Null,
        target: target.to_string(),
        step: digits.parse().ok()?,
        error,
    })
}

/// The target inside a `Tool `target` ` subject.
fn call_target_of(subject: &str) -> String {
    parse_subject(subject)
        .map(|(_, target, _)| target.to_string())
        .unwrap_or_default()
}

/// How `Status` appends what the agent last said (the spec's `(reported)`:
/// a source stated it).
const LAST_REPORT: &str = "; the agent last reported: ";

/// The report an earlier fold's `Status` carries.
fn report_of(status: &str) -> Option<&str> {
    status.split_once(LAST_REPORT).map(|(_, report)| report)
}

/// An earlier fold's `Status` naming an open error, read back.
fn open_error_of(status: &str) -> Option<OpenError> {
    if !(status.starts_with("open error") || status.starts_with("the last tool call failed")) {
        return None;
    }
    let status = status.split(LAST_REPORT).next().unwrap_or(status);
    let (tool, target, _) = status
        .match_indices(' ')
        .find_map(|(at, _)| parse_subject(&status[at + 1..]))?;
    Some(OpenError {
        action: CallName::named(tool, target).action,
        status: status.to_string(),
    })
}

/// `delivered: …; still owed: …`: the paths written (the latest three,
/// relative to the directory `## Deliverables` shows them under), and the
/// files the goal names that no call has written.
fn deliverable_line(
    deliverables: &[Fact],
    root: Option<&str>,
    owed: &[String],
    goal: Option<u32>,
) -> String {
    let delivered = if deliverables.is_empty() {
        "nothing yet".to_string()
    } else {
        let shown: Vec<&str> = deliverables
            .iter()
            .rev()
            .take(3)
            .map(|f| {
                root.and_then(|r| f.key.strip_prefix(r))
                    .filter(|rest| rest.contains('/'))
                    .unwrap_or(f.key.as_str())
            })
            .collect();
        let more = deliverables.len() - shown.len();
        let more = if more > 0 {
            format!(", +{more} more")
        } else {
            String::new()
        };
        clip(&format!("{}{more}", shown.join(", ")), 300)
    };
    let owed = match goal {
        None => "nothing asked yet".to_string(),
        Some(n) if owed.is_empty() => format!("no file named in #{n}"),
        Some(n) => format!("{} (named in #{n})", clip(&owed.join(", "), 300)),
    };
    format!("delivered: {delivered}; still owed: {owed}")
}

/// The task a tracker's view command shows (`bd show spotter-dov.3`, `gh
/// issue view 42`, `gh pr view 7`).
fn viewed_task(call: &ToolCall) -> Option<String> {
    let command = crate::engine::toolrules::shell_command(&call.input)?;
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| matches!(*w, "bd" | "gh" | "glab" | "jira" | "linear"))?;
    let rest = &words[at + 1..];
    let verb_at = rest.iter().position(|w| matches!(*w, "show" | "view"))?;
    rest[verb_at + 1..]
        .iter()
        .find(|w| !w.starts_with('-'))
        .map(|w| clip(w, 60))
}

/// A call that never ran: Claude Code cancels the calls made beside one
/// that failed (`Sibling tool call errored`).
fn only_a_sibling_failed(output: &str) -> bool {
    output.contains("Sibling tool call errored") && output.trim().len() < 200
}

/// A search that found nothing: `grep` and `rg` exit 1 with no output,
/// which a client reports as an error. That is a finding, not a failure.
fn found_no_match(call: &ToolCall) -> bool {
    let Some(command) = crate::engine::toolrules::shell_command(&call.input) else {
        return false;
    };
    let searches = command
        .split(['|', '&', ';', '\n'])
        .filter_map(|seg| seg.split_whitespace().next())
        .any(|w| {
            let w = w.rsplit('/').next().unwrap_or(w);
            matches!(
                w,
                "grep" | "rg" | "egrep" | "fgrep" | "ag" | "ack" | "git-grep"
            )
        })
        || command.contains("git grep");
    let out = call.output.trim();
    let silent = matches!(
        out,
        "" | "Error" | "Exit code 1" | "exit code 1" | "(no output)"
    ) || out.starts_with("Exit code 1\n") && out.lines().count() <= 1;
    searches && silent
}

/// Headings of a list of what is left (`Next steps:`, `Still need to:`).
const NEXT_LIST_HEADINGS: [&str; 8] = [
    "next steps",
    "next step",
    "still need to",
    "remaining",
    "left to do",
    "todo",
    "to do",
    "what's left",
];

/// The first item of a list of what is left in the agent's text.
fn listed_next_step(text: &str) -> Option<String> {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let head = line
            .trim()
            .trim_start_matches(['#', '*', ' '])
            .trim_end_matches(['*', ':', ' '])
            .to_lowercase();
        if !NEXT_LIST_HEADINGS.contains(&head.as_str()) {
            continue;
        }
        for item in lines.by_ref() {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let body = item
                .trim_start_matches(['-', '*', '•', ' '])
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start_matches(['.', ')', ' ']);
            if body.len() == item.len() || body.is_empty() {
                break;
            }
            return Some(clip(&flatten(body), STATEMENT_MAX_CHARS));
        }
    }
    None
}

/// The latest reports, the newest last, as many whole as fit the report's
/// cap (the newest always, up to [`REPORT_HARD_MAX_CHARS`]).
fn join_reports(reports: &[String]) -> Option<String> {
    let mut kept: Vec<&str> = Vec::new();
    let mut len = 0;
    for r in reports.iter().rev().take(REPORTS_JOINED) {
        let n = r.chars().count() + 1;
        if !kept.is_empty() && len + n > REPORT_MAX_CHARS {
            break;
        }
        len += n;
        kept.push(r);
    }
    kept.reverse();
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// The statements of an assistant text, whole sentences, in order: what
/// it reports. Lead-ins (`Close this task:`), questions and narrations of
/// intent are not reports. A first sentence too long for the cap is kept
/// whole up to a hard cap, never cut mid-sentence below it.
fn report_of_text(sentences: &[&str]) -> Option<String> {
    let mut out = String::new();
    for s in sentences {
        let s = flatten(s);
        let lead_in = s.ends_with(':');
        if s.is_empty() || lead_in || s.ends_with('?') || narrates_intent(&s) {
            continue;
        }
        let len = out.chars().count() + 1 + s.chars().count();
        if !out.is_empty() && len > REPORT_MAX_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&s);
        if out.chars().count() > REPORT_MAX_CHARS {
            out = clip(&out, REPORT_HARD_MAX_CHARS);
            break;
        }
    }
    (!out.is_empty()).then_some(out)
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
