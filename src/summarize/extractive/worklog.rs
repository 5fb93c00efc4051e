//! `## Work log`: the task's milestones in order, one line each, keyed by
//! the step they happened at:
//!
//! ```text
//! ## Work log
//! - steps 1–40: earlier: 2 asks, 6 check runs, 1 commit
//! - step 41: #3 asked
//! - step 44: plan: "Fix the guard" done
//! - step 45: `mix test` passed: 410 tests, 0 failures
//! - step 47: committed 3f2a1bc "fix: guard clause"
//! - step 48: closed spotter-dov.3
//! ```
//!
//! A check run again right after itself updates its line (`×3`). Past
//! [`WORKLOG_MAX`] lines, the oldest merge into the leading `earlier:` line,
//! which only counts them; the token cap merges more the same way.

use super::digest::Fact;

/// Lines the log keeps before its oldest merge.
pub(super) const WORKLOG_MAX: usize = 30;

const EARLIER: &str = "earlier: ";

/// What a line records, for the counts of a merged line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Entry {
    Ask,
    Plan,
    Check,
    Commit,
    Task,
    Other,
}

impl Entry {
    fn of(text: &str) -> Entry {
        if text.starts_with('#') {
            Entry::Ask
        } else if text.starts_with("plan") {
            Entry::Plan
        } else if text.starts_with("committed") {
            Entry::Commit
        } else if text.starts_with("closed") || text.starts_with("started") {
            Entry::Task
        } else if text.starts_with('`') && (text.contains(" passed") || text.contains(" failed")) {
            Entry::Check
        } else {
            Entry::Other
        }
    }

    /// `2 asks`: the count's noun.
    fn counted(self, n: usize) -> String {
        let (one, many) = match self {
            Entry::Ask => ("ask", "asks"),
            Entry::Plan => ("plan update", "plan updates"),
            Entry::Check => ("check run", "check runs"),
            Entry::Commit => ("commit", "commits"),
            Entry::Task => ("task started or closed", "tasks started or closed"),
            Entry::Other => ("other milestone", "other milestones"),
        };
        format!("{n} {}", if n == 1 { one } else { many })
    }

    const ALL: [Entry; 6] = [
        Entry::Ask,
        Entry::Plan,
        Entry::Check,
        Entry::Commit,
        Entry::Task,
        Entry::Other,
    ];
}

/// `step 12` / `steps 1–40`: the first and last step a line covers.
fn steps_of(key: &str) -> Option<(u32, u32)> {
    if let Some(n) = key.strip_prefix("step ") {
        let n = n.parse().ok()?;
        return Some((n, n));
    }
    let (a, b) = key.strip_prefix("steps ")?.split_once('–')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn key_of(first: u32, last: u32) -> String {
    if first == last {
        format!("step {first}")
    } else {
        format!("steps {first}–{last}")
    }
}

/// Appends a milestone at `step`. A check (`same` its command) run again
/// right after its own line updates that line instead.
pub(super) fn log(facts: &mut Vec<Fact>, step: u32, text: String, same: Option<&str>) {
    if let (Some(same), Some(last)) = (same, facts.last_mut())
        && let Some(rest) = last.text.strip_prefix(same)
        && let Some((first, _)) = steps_of(&last.key)
    {
        let runs = rest
            .strip_prefix(" ×")
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(1);
        let outcome = text.strip_prefix(same).unwrap_or(&text);
        last.key = key_of(first, step.max(first));
        last.text = format!("{same} ×{}, last{outcome}", runs + 1);
        return;
    }
    facts.push(Fact::new(format!("step {step}"), text));
    if facts.len() > WORKLOG_MAX {
        let merged = usize::from(is_earlier(&facts[0]));
        merge_oldest(facts, facts.len() - WORKLOG_MAX + merged);
    }
}

/// A log of asks alone says nothing `## Requests` does not: not shown.
pub(super) fn only_asks(facts: &[Fact]) -> bool {
    facts
        .iter()
        .all(|f| !is_earlier(f) && Entry::of(&f.text) == Entry::Ask)
}

fn is_earlier(f: &Fact) -> bool {
    f.text.starts_with(EARLIER)
}

/// How many lines a merge can still take (the `earlier:` line aside).
pub(super) fn mergeable(facts: &[Fact]) -> usize {
    let merged = facts.first().is_some_and(is_earlier);
    let n = facts.len() - usize::from(merged);
    // Merging a single line saves nothing.
    if n >= 2 || merged && n >= 1 { n } else { 0 }
}

/// The oldest `k` lines (after the `earlier:` line) become counts in it.
pub(super) fn merge_oldest(facts: &mut Vec<Fact>, k: usize) {
    let merged = facts.first().is_some_and(is_earlier);
    let start = usize::from(merged);
    let k = k.min(facts.len() - start);
    if k == 0 {
        return;
    }
    let mut counts: Vec<(Entry, usize)> = Entry::ALL.iter().map(|e| (*e, 0)).collect();
    let mut span: Option<(u32, u32)> = None;
    let mut widen = |s: Option<(u32, u32)>| {
        if let Some((a, b)) = s {
            span = Some(match span {
                Some((x, y)) => (x.min(a), y.max(b)),
                None => (a, b),
            });
        }
    };
    if merged {
        let f = &facts[0];
        widen(steps_of(&f.key));
        for part in f.text.trim_start_matches(EARLIER).split(", ") {
            let mut words = part.splitn(2, ' ');
            let n: usize = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            let noun = words.next().unwrap_or_default();
            if let Some(slot) = counts.iter_mut().find(|(e, _)| {
                e.counted(1).split_once(' ').map(|(_, w)| w) == Some(noun)
                    || e.counted(2).split_once(' ').map(|(_, w)| w) == Some(noun)
            }) {
                slot.1 += n;
            }
        }
    }
    for f in &facts[start..start + k] {
        widen(steps_of(&f.key));
        let entry = Entry::of(&f.text);
        // A check line may stand for several runs (`×3`).
        let runs = f
            .text
            .split_once(" ×")
            .and_then(|(_, r)| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .filter(|_| entry == Entry::Check)
            .unwrap_or(1);
        if let Some(slot) = counts.iter_mut().find(|(e, _)| *e == entry) {
            slot.1 += runs;
        }
    }
    let (first, last) = span.unwrap_or((0, 0));
    let text = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(e, n)| e.counted(*n))
        .collect::<Vec<_>>()
        .join(", ");
    facts.drain(..start + k);
    facts.insert(
        0,
        Fact::new(key_of(first, last), format!("{EARLIER}{text}")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_check_updates_its_line_and_the_oldest_merge() {
        let mut facts = Vec::new();
        log(&mut facts, 1, "#1 asked".into(), None);
        log(
            &mut facts,
            3,
            "`mix test` failed: 1 failure".into(),
            Some("`mix test`"),
        );
        log(
            &mut facts,
            5,
            "`mix test` passed: 0 failures".into(),
            Some("`mix test`"),
        );
        assert_eq!(facts[1].key, "steps 3–5");
        assert_eq!(facts[1].text, "`mix test` ×2, last passed: 0 failures");
        log(&mut facts, 6, "committed 3f2a1bc \"fix\"".into(), None);
        merge_oldest(&mut facts, 2);
        assert_eq!(facts[0].key, "steps 1–5");
        assert_eq!(facts[0].text, "earlier: 1 ask, 2 check runs");
        merge_oldest(&mut facts, 1);
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].text, "earlier: 1 ask, 2 check runs, 1 commit");
        for step in 10..10 + WORKLOG_MAX as u32 + 5 {
            log(&mut facts, step, format!("#{step} asked"), None);
        }
        assert_eq!(facts.len(), WORKLOG_MAX);
        assert!(facts[0].text.starts_with(EARLIER));
    }
}
