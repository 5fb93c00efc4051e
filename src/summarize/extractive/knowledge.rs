//! `## Knowledge`: what the agent learned by reading and said in its own
//! words, keyed by the identifier a sentence is about:
//!
//! ```text
//! ## Knowledge
//! - mount_computers/2: `mount_computers/2` initialises every attached computer's inputs on mount.
//! - baseline `mix credo --strict`: failed: found 5 code readability issues (step 3, before any edit)
//! ```
//!
//! A sentence is knowledge when it names an identifier in a code span and
//! says what it is or how it is used (`X is`, `X returns`, `X takes`,
//! `` `X` — … ``). Of each fold's candidates the most referred-to (by the
//! span's other texts and tool inputs) and then the most recent are kept;
//! the section holds at most [`KNOWLEDGE_MAX`] lines, the oldest giving way.

use std::borrow::Cow;
use std::collections::BTreeMap;

use memchr::memmem;

use super::digest::Fact;
use crate::engine::lexicon::narrates_intent;

/// New lines one fold adds at most.
const PER_FOLD: usize = 8;
/// Lines the section holds.
pub(super) const KNOWLEDGE_MAX: usize = 16;
/// How far into a sentence its subject may be named (characters).
const SUBJECT_WITHIN_CHARS: usize = 40;
/// A statement as kept.
const STATEMENT_MAX_CHARS: usize = 240;

/// Verbs that make a sentence say what something is or does.
const DEFINING: [&str; 36] = [
    " is ",
    " are ",
    " returns ",
    " return ",
    " takes ",
    " take ",
    " accepts ",
    " handles ",
    " provides ",
    " defines ",
    " uses ",
    " calls ",
    " expects ",
    " renders ",
    " stores ",
    " holds ",
    " contains ",
    " wraps ",
    " lives in ",
    " used to ",
    " used for ",
    " used by ",
    " requires ",
    " needs ",
    " must ",
    " supports ",
    " sets ",
    " builds ",
    " runs ",
    " emits ",
    " exposes ",
    " lets ",
    " allows ",
    " maps ",
    " computes ",
    " creates ",
];

/// A candidate seen in this fold.
pub(super) struct Candidate {
    pub key: String,
    pub statement: String,
}

/// The identifier a sentence says something about, with the sentence, when
/// it is knowledge.
pub(super) fn candidate(sentence: &str) -> Option<Candidate> {
    let flat = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.ends_with('?') || flat.ends_with(':') || narrates_intent(&flat) {
        return None;
    }
    if let Some(baseline) = baseline(&flat) {
        return Some(baseline);
    }
    let body = flat.trim_start_matches(['-', '*', '•', ' ']);
    let (span, at) = first_identifier_span(body)?;
    // The sentence is about it: it is named near the start, and what is
    // said of it follows it.
    if body[..at].chars().count() > SUBJECT_WITHIN_CHARS + span.chars().count() {
        return None;
    }
    let after = body[at..].trim_start();
    let bullet = after.starts_with(['-', '—', '–', ':', '(']);
    let lower = format!(" {}", after.to_lowercase());
    let defining = DEFINING.iter().any(|v| lower.contains(v));
    if !(bullet || defining) || flat.chars().count() < 20 {
        return None;
    }
    let statement = clip_sentence(flat.trim_start_matches(['-', '*', ' ']));
    Some(Candidate {
        key: span.to_string(),
        statement,
    })
}

/// Headings under which a task's spec lists its limits: every item counts.
const LIMIT_HEADINGS: [&str; 9] = [
    "no-gos",
    "no gos",
    "non-goals",
    "out of scope",
    "constraints",
    "architecture constraints",
    "guardrails",
    "limits",
    "do not",
];

/// How a spec line outside those headings opens when it states a rule.
const SPEC_RULE_OPENINGS: [&str; 9] = [
    "no ", "do not ", "don't ", "never ", "keep ", "only ", "avoid ", "must ", "without ",
];
/// Words that make a spec line a rule wherever they are.
const SPEC_RULE_WORDS: [&str; 5] = [" must not ", " do not ", " don't ", " never ", " must "];

/// A spec's lines kept, and their length in all.
const SPEC_LINES: usize = 8;
const SPEC_LINE_CHARS: usize = 120;
const SPEC_MAX_CHARS: usize = 600;

/// The limits a task tracker's view of a task states (`bd show x`, `gh issue
/// view 4`): the items under a no-gos or constraints heading, and the lines
/// that state a rule, verbatim and capped. A task's spec is the user's
/// request delivered through a tool.
pub(super) fn spec_limits(output: &str) -> Option<String> {
    let mut kept: Vec<String> = Vec::new();
    let mut under_limits = false;
    for line in output.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let heading = t
            .trim_start_matches('#')
            .trim()
            .trim_end_matches(':')
            .to_lowercase();
        let is_heading = t.starts_with('#') || (t.ends_with(':') && !t.starts_with(['-', '*']));
        if is_heading {
            under_limits = LIMIT_HEADINGS.iter().any(|h| heading == *h);
            continue;
        }
        let item = t.trim_start_matches(['-', '*', '•', ' ']);
        let lower = item.to_lowercase();
        let spaced = format!(" {lower} ");
        let rule = SPEC_RULE_OPENINGS.iter().any(|r| lower.starts_with(r))
            || SPEC_RULE_WORDS.iter().any(|w| spaced.contains(w));
        if (under_limits || rule) && item.chars().count() >= 8 {
            let item = clip_to(item, SPEC_LINE_CHARS);
            if !kept.contains(&item) {
                kept.push(item);
            }
        }
        if kept.len() >= SPEC_LINES {
            break;
        }
    }
    let mut out = String::new();
    for k in kept {
        if !out.is_empty() && out.chars().count() + k.chars().count() + 2 > SPEC_MAX_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(k.trim_end_matches(['.', ';']));
    }
    (!out.is_empty()).then_some(out)
}

fn clip_to(s: &str, max: usize) -> String {
    let s = s.replace("; ", ", ");
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}

/// Words that say something was so before the work started.
const BASELINE_WORDS: [&str; 7] = [
    "pre-existing",
    "preexisting",
    "already failing",
    "were already",
    "was already broken",
    "existed before",
    "unrelated to our change",
];

/// A statement of what was so before the work (`the 5 credo issues are
/// pre-existing in `waiting_summary.ex``): kept under `pre-existing`.
fn baseline(flat: &str) -> Option<Candidate> {
    let lower = flat.to_lowercase();
    if !BASELINE_WORDS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    let about = first_identifier_span(flat).map(|(s, _)| s);
    Some(Candidate {
        key: match about {
            Some(s) => format!("pre-existing {s}"),
            None => "pre-existing".to_string(),
        },
        statement: clip_sentence(flat.trim_start_matches(['-', '*', '•', ' '])),
    })
}

fn clip_sentence(s: &str) -> String {
    match s.char_indices().nth(STATEMENT_MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// The first code span that reads as an identifier (`mount_computers/2`,
/// `AshComputer.LiveView`, `attach_computer`, `mix assets.build`), and the
/// byte offset just past it.
fn first_identifier_span(text: &str) -> Option<(&str, usize)> {
    let mut rest = text;
    let mut offset = 0;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let close = after.find('`')?;
        let span = after[..close].trim();
        let end = offset + open + 1 + close + 1;
        if is_identifier(span) {
            return Some((span, end));
        }
        offset = end;
        rest = &text[end..];
    }
    None
}

fn is_identifier(span: &str) -> bool {
    let n = span.chars().count();
    if !(2..=60).contains(&n) || span.contains('\n') || span.contains(": ") {
        return false;
    }
    if !span.chars().any(char::is_alphabetic) {
        return false;
    }
    let shaped = span.contains(['_', '.', '/', '(', ':', '#', '@', '!', '?']);
    let camel = span
        .chars()
        .zip(span.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let capital =
        span.starts_with(|c: char| c.is_uppercase()) && span.chars().any(char::is_lowercase);
    // A command (`mix assets.build`) reads as one through its shaped words.
    shaped || camel || capital
}

/// Picks this fold's lines from its candidates: the most referred-to in
/// `mentions` (the span's other texts and tool inputs), then the latest.
pub(super) fn choose(candidates: Vec<Candidate>, mentions: &[Cow<'_, str>]) -> Vec<Candidate> {
    // The latest statement of each key.
    let mut latest: BTreeMap<String, (usize, Candidate)> = BTreeMap::new();
    for (order, c) in candidates.into_iter().enumerate() {
        latest.insert(c.key.clone(), (order, c));
    }
    let mut scored: Vec<(usize, usize, Candidate)> = latest
        .into_values()
        .map(|(order, c)| {
            let finder = memmem::Finder::new(c.key.as_bytes());
            let refs = mentions
                .iter()
                .filter(|m| finder.find(m.as_bytes()).is_some())
                .count();
            (refs, order, c)
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    scored.truncate(PER_FOLD);
    // Back in the order they were said.
    scored.sort_by_key(|(_, order, _)| *order);
    scored.into_iter().map(|(_, _, c)| c).collect()
}

/// Adds a line, superseding the one held on the same key (it moves last:
/// the most recent); past the cap, the oldest lines give way.
pub(super) fn put(facts: &mut Vec<Fact>, key: String, text: String) {
    facts.retain(|f| f.key != key);
    facts.push(Fact::new(key, text));
    if facts.len() > KNOWLEDGE_MAX {
        let over = facts.len() - KNOWLEDGE_MAX;
        facts.drain(..over);
    }
}

/// Adds a line only if its key is not held (a baseline is said once).
pub(super) fn put_once(facts: &mut Vec<Fact>, key: String, text: String) {
    if !facts.iter().any(|f| f.key == key) {
        put(facts, key, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_saying_what_an_identifier_is_is_knowledge() {
        let c = candidate("`mount_computers/2` initialises the inputs and is called from mount.")
            .unwrap();
        assert_eq!(c.key, "mount_computers/2");
        let bullet =
            candidate("- `update_computer_inputs/3` — updates one computer's inputs").unwrap();
        assert_eq!(bullet.key, "update_computer_inputs/3");
        assert!(candidate("Let me read `lib/app.ex` to see how it is used.").is_none());
        assert!(candidate("What does `foo_bar` return?").is_none());
        assert!(
            candidate("The file is `done`.").is_none(),
            "a plain word is no identifier"
        );
        let base = candidate("All tests pass and no new credo issues (the 5 are pre-existing in `waiting_summary.ex`).").unwrap();
        assert_eq!(base.key, "pre-existing waiting_summary.ex");
    }

    #[test]
    fn a_specs_limits_are_its_no_gos_and_its_rule_lines() {
        let out = "DESCRIPTION\n## Solution\n- emit richer metadata\n\n## No-gos\n- No new route/page for subagent transcripts.\n- No scope expansion to `PaneViewLive`.\n\nArchitecture constraints:\n- SessionLive scope only; do not edit `pane_view_live.ex`.\n\nComponent usage:\n- Keep renderer pure and side-effect free.\n- Use the hook architecture.\n";
        assert_eq!(
            spec_limits(out).as_deref(),
            Some(
                "No new route/page for subagent transcripts; No scope expansion to `PaneViewLive`; SessionLive scope only, do not edit `pane_view_live.ex`; Keep renderer pure and side-effect free"
            )
        );
        assert_eq!(spec_limits("Status: open\nOwner: me"), None);
    }

    #[test]
    fn the_most_referred_to_are_chosen() {
        let cands: Vec<Candidate> = (0..12)
            .map(|i| Candidate {
                key: format!("fn_{i}"),
                statement: format!("`fn_{i}` is a function."),
            })
            .collect();
        let mentions = vec![Cow::from("fn_0 fn_1"), Cow::from("fn_1")];
        let chosen = choose(cands, &mentions);
        assert_eq!(chosen.len(), PER_FOLD);
        assert_eq!(chosen[0].key, "fn_0");
        assert_eq!(chosen[1].key, "fn_1");
        assert_eq!(chosen.last().unwrap().key, "fn_11");
    }
}
