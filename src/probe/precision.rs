//! Precision as a number: the lines of a view's `## Task Context` that
//! contradict the record before the view (`misleading`), beside the probes
//! it keeps. Three kinds are read:
//!
//! - `ruled_out_succeeded`: a `## Ruled out` line whose action (as
//!   `engine::action` names it) succeeded after the failure the line names
//!   (the record's failure of that action at the step the line gives; a
//!   line naming no failure the record holds, as a summary carried in from
//!   another session does, is contradicted by any success of the action);
//! - `open_error_resolved`: a `Status` naming a failed call whose action
//!   succeeded after it, read the same way;
//! - `owed_written`: a `Deliverable` field calling a path still owed that
//!   a call had written.
//!
//! It also counts the abandoned approaches the view still carries: the
//! `error` probe of each action whose latest outcome before the view is that
//! failure (never retried with success, nor failing otherwise since), kept
//! (passed or recoverable) or lost.
//!
//! The record's facts are read row by row ([`LedgerReader`]) as the probes
//! are, and a view is checked against the rows before it. Pure: no IO,
//! clock or hash-map order.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Category, Probe, error_key};
use crate::engine::action::{action_of, actions_of, call_target, parse_subject};
use crate::engine::carried::{section_facts, state_field, task_context_sections};
use crate::engine::toolfacts::{same_path, written_paths};
use crate::model::{Block, Message};
use crate::view::View;

/// How a line misleads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MisleadingKind {
    RuledOutSucceeded,
    OpenErrorResolved,
    OwedWritten,
}

impl MisleadingKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            MisleadingKind::RuledOutSucceeded => "ruled_out_succeeded",
            MisleadingKind::OpenErrorResolved => "open_error_resolved",
            MisleadingKind::OwedWritten => "owed_written",
        }
    }

    /// The section (`Ruled out`) or field (`Status`, `Deliverable`) whose
    /// line it is.
    fn section(self) -> &'static str {
        match self {
            MisleadingKind::RuledOutSucceeded => "Ruled out",
            MisleadingKind::OpenErrorResolved => "Status",
            MisleadingKind::OwedWritten => "Deliverable",
        }
    }
}

/// A summary line that contradicts the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Misleading {
    pub kind: MisleadingKind,
    /// The section (`Ruled out`) or field (`Status`, `Deliverable`) holding it.
    pub section: &'static str,
    /// The line's text (its first line).
    pub text: String,
    /// What the record says instead, with the source line of the proof.
    pub why: String,
    /// The transcript line of the call that proves it wrong.
    pub line: u64,
    /// That call is in the view itself (kept raw after the summary, which
    /// was folded before it happened), so the view shows the correction.
    pub proof_in_view: bool,
}

/// One view's precision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Precision {
    pub misleading: Vec<Misleading>,
    /// `error` probes of calls whose action did not succeed afterwards
    /// (abandoned approaches), judged on the view, and how many of them
    /// the view lost.
    pub abandoned_judged: u64,
    pub abandoned_lost: u64,
}

/// One fact of the record a summary line may contradict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RecordFact {
    /// A call's result: the actions it performed (its own first; a
    /// success of a chained shell command performed each), and whether it
    /// succeeded, with its error's key line when it did not.
    Outcome {
        row: usize,
        line: u64,
        step: u32,
        id: String,
        actions: Vec<String>,
        error: Option<String>,
        ok: bool,
    },
    /// A path a successful call (`id`) wrote.
    Written {
        row: usize,
        line: u64,
        id: String,
        path: String,
    },
}

/// Reads the record's rows into [`RecordFact`]s: a call's action is known
/// from its `tool_use`, its outcome from its `tool_result`.
#[derive(Debug, Default)]
pub(crate) struct LedgerReader {
    /// Calls seen and not yet answered: id → (actions, paths it writes).
    pending: BTreeMap<String, (Vec<String>, Vec<String>)>,
    facts: Vec<RecordFact>,
}

impl LedgerReader {
    pub(crate) fn row(&mut self, i: usize, m: &Message) {
        for block in &m.content {
            match block {
                Block::ToolUse { id, name, input } => {
                    let actions = actions_of(name, &call_target(name, input));
                    let paths = written_paths(name, input)
                        .into_iter()
                        .map(|(p, _)| p)
                        .collect();
                    self.pending.insert(id.clone(), (actions, paths));
                }
                Block::ToolResult {
                    tool_use_id,
                    is_error,
                    content,
                } => {
                    let Some((mut actions, paths)) = self.pending.remove(tool_use_id) else {
                        continue;
                    };
                    let ok = !is_error;
                    if !ok {
                        // A failure is its first action's.
                        actions.truncate(1);
                    }
                    self.facts.push(RecordFact::Outcome {
                        row: i,
                        line: m.line,
                        step: m.step,
                        id: tool_use_id.clone(),
                        actions,
                        error: is_error.then(|| error_key(content)).flatten(),
                        ok,
                    });
                    if ok {
                        self.facts
                            .extend(paths.into_iter().map(|path| RecordFact::Written {
                                row: i,
                                line: m.line,
                                id: tool_use_id.clone(),
                                path,
                            }));
                    }
                }
                _ => {}
            }
        }
    }

    /// The facts read since the last call.
    pub(crate) fn take(&mut self) -> Vec<RecordFact> {
        std::mem::take(&mut self.facts)
    }
}

/// A call's outcome, as the ledger keeps it.
#[derive(Debug, Clone)]
struct Outcome {
    row: usize,
    line: u64,
    step: u32,
    /// The call's id.
    id: String,
    ok: bool,
    /// A failure's error key line.
    error: Option<String>,
}

/// The record's facts, and the parsed head of the latest view checked.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// Each action's outcomes, in record order.
    outcomes: BTreeMap<String, Vec<Outcome>>,
    /// Each call's action, by tool call id.
    actions: BTreeMap<String, String>,
    /// Paths successful calls wrote, in record order.
    written: Vec<Write>,
    /// The latest head checked and its claims.
    head: Option<(String, Claims)>,
}

/// A path a successful call wrote.
#[derive(Debug, Clone)]
struct Write {
    row: usize,
    line: u64,
    id: String,
    path: String,
}

/// The call that proves a line wrong.
struct Proof<'l> {
    line: u64,
    id: &'l str,
}

/// What a `## Task Context` claims that the record can contradict.
#[derive(Debug, Clone, Default)]
struct Claims {
    /// `## Ruled out` lines: (text, action, step named).
    ruled_out: Vec<(String, String, Option<u32>)>,
    /// The `Status` field, when it names a failed call: (text, action, step).
    open_error: Option<(String, String, Option<u32>)>,
    /// The `Deliverable` field and the paths it calls still owed.
    owed: Option<(String, Vec<String>)>,
}

impl Ledger {
    pub(crate) fn add(&mut self, facts: Vec<RecordFact>) {
        for f in facts {
            match f {
                RecordFact::Outcome {
                    row,
                    line,
                    step,
                    id,
                    actions,
                    error,
                    ok,
                } => {
                    if let Some(first) = actions.first() {
                        self.actions.insert(id.clone(), first.clone());
                    }
                    for action in actions {
                        self.outcomes.entry(action).or_default().push(Outcome {
                            row,
                            line,
                            step,
                            id: id.clone(),
                            ok,
                            error: error.clone(),
                        });
                    }
                }
                RecordFact::Written {
                    row,
                    line,
                    id,
                    path,
                } => self.written.push(Write {
                    row,
                    line,
                    id,
                    path,
                }),
            }
        }
    }

    /// The first success of `action` before row `before` that follows the
    /// failure a line names: the record's failure of it at step `step`, or,
    /// when the record holds none (a line carried in from another session),
    /// anywhere.
    fn success_after(&self, action: &str, step: Option<u32>, before: usize) -> Option<Proof<'_>> {
        let outcomes = self.outcomes.get(action)?;
        let upto = || outcomes.iter().take_while(|o| o.row < before);
        let failed_at = step
            .and_then(|s| upto().find(|o| !o.ok && o.step == s))
            .map(|o| o.row);
        upto()
            .find(|o| o.ok && failed_at.is_none_or(|r| o.row > r))
            .map(|o| Proof {
                line: o.line,
                id: &o.id,
            })
    }

    /// The view's precision, whose history is the record's first
    /// `history_rows` rows; `lost` holds the indices of the probes it lost.
    pub(crate) fn check(
        &mut self,
        view: &View,
        history_rows: usize,
        probes: &[Probe],
        lost: &[usize],
    ) -> Precision {
        let mut p = Precision::default();
        self.count_abandoned(probes, lost, history_rows, &mut p);
        let Some(sections) = head_sections(view) else {
            return p;
        };
        if self.head.as_ref().is_none_or(|(text, _)| text != sections) {
            self.head = Some((sections.to_string(), Claims::of(sections)));
        }
        let Some((_, claims)) = &self.head else {
            return p;
        };
        // Each claim the record contradicts: its kind, its line, what the
        // record says instead and the call that says it.
        let mut wrong: Vec<(MisleadingKind, &str, String, Proof<'_>)> = Vec::new();
        for (text, action, step) in &claims.ruled_out {
            if let Some(proof) = self.success_after(action, *step, history_rows) {
                let why = "the same action succeeded later".to_string();
                wrong.push((MisleadingKind::RuledOutSucceeded, text, why, proof));
            }
        }
        if let Some((text, action, step)) = &claims.open_error
            && let Some(proof) = self.success_after(action, *step, history_rows)
        {
            let why = "the failed action succeeded later".to_string();
            wrong.push((MisleadingKind::OpenErrorResolved, text, why, proof));
        }
        if let Some((text, owed)) = &claims.owed {
            for path in owed {
                let written = self
                    .written
                    .iter()
                    .take_while(|w| w.row < history_rows)
                    .find(|w| same_path(&w.path, path));
                if let Some(w) = written {
                    let proof = Proof {
                        line: w.line,
                        id: &w.id,
                    };
                    let why = format!("{} was written", w.path);
                    wrong.push((MisleadingKind::OwedWritten, text, why, proof));
                }
            }
        }
        p.misleading.extend(
            wrong
                .into_iter()
                .map(|(kind, text, why, proof)| Misleading {
                    kind,
                    section: kind.section(),
                    text: first_line(text),
                    why: format!("{why} (line {})", proof.line),
                    line: proof.line,
                    proof_in_view: view_calls(view).any(|c| c == proof.id),
                }),
        );
        p
    }

    /// `error` probes of calls not followed by a success of their action.
    fn count_abandoned(
        &self,
        probes: &[Probe],
        lost: &[usize],
        history_rows: usize,
        p: &mut Precision,
    ) {
        for (i, probe) in probes.iter().enumerate() {
            if probe.category != Category::Error || probe.row >= history_rows {
                continue;
            }
            let Some(id) = probe.source.strip_prefix("tool:") else {
                continue;
            };
            let Some(action) = self.actions.get(id) else {
                continue;
            };
            // The action's latest outcome before the view is this failure.
            let latest = self
                .outcomes
                .get(action)
                .and_then(|os| os.iter().take_while(|o| o.row < history_rows).last());
            let abandoned = latest.is_some_and(|o| {
                !o.ok && o.row >= probe.row && o.error.as_deref() == Some(probe.expected.as_str())
            });
            if !abandoned {
                continue;
            }
            p.abandoned_judged += 1;
            if lost.binary_search(&i).is_ok() {
                p.abandoned_lost += 1;
            }
        }
    }
}

impl Claims {
    fn of(sections: &str) -> Claims {
        let ruled_out = section_facts(sections, "Ruled out")
            .into_iter()
            .filter_map(|text| {
                let (tool, target, rest) = named_call(&text)?;
                let action = action_of(tool, target);
                let step = step_named(rest);
                Some((text, action, step))
            })
            .collect();
        let open_error = state_field(sections, "Status").and_then(|status| {
            // What the agent last reported is quoted, not claimed.
            let status = status.split("; the agent last reported: ").next()?;
            let lower = status.to_lowercase();
            let names_error = lower.contains("fail") || lower.contains("error");
            if !names_error || lower.starts_with("no ") {
                return None;
            }
            let (tool, target, rest) = named_call(status)?;
            let step = step_named(status).or_else(|| step_named(rest));
            Some((status.to_string(), action_of(tool, target), step))
        });
        let owed = state_field(sections, "Deliverable").and_then(|field| {
            let (_, owed) = field.split_once("still owed")?;
            let paths: Vec<String> = owed
                .split([',', ';', ' ', '`', '(', ')'])
                .map(|w| w.trim_matches(|c: char| c == ':' || c == '.' || c == '"'))
                .filter(|w| looks_like_path(w))
                .map(str::to_string)
                .collect();
            (!paths.is_empty()).then(|| (field.to_string(), paths))
        });
        Claims {
            ruled_out,
            open_error,
            owed,
        }
    }
}

/// The first `Tool `target`` a text names: at its start, or after a space.
fn named_call(text: &str) -> Option<(&str, &str, &str)> {
    if let Some(found) = parse_subject(text) {
        return Some(found);
    }
    text.match_indices(' ')
        .find_map(|(at, _)| parse_subject(&text[at + 1..]))
}

/// `(step N)` in a text.
fn step_named(text: &str) -> Option<u32> {
    let (_, rest) = text.split_once("(step ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A word with a directory or a file extension in it.
fn looks_like_path(w: &str) -> bool {
    let has_dir = w.contains('/') && w.chars().any(char::is_alphanumeric);
    let has_ext = w.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    });
    has_dir || has_ext
}

/// The ids of the tool calls a view holds.
fn view_calls(view: &View) -> impl Iterator<Item = &str> {
    view.messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
}

/// The sections of the view's `## Task Context`, if it opens with one.
fn head_sections(view: &View) -> Option<&str> {
    let first = view.messages.first()?;
    first.content.iter().find_map(|b| match b {
        Block::Text { text } => task_context_sections(text),
        _ => None,
    })
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}
