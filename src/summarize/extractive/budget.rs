//! The token cap: demote, never delete P0. Each relief moves or shrinks the
//! oldest eligible lines; bisection finds the least relief that fits.

use super::artifacts::FileNote;
use super::digest::{COLLAPSED_KEY, Fact, Gist, Section};
use super::prose::{clip, flatten, sentences};
use super::worklog;
use crate::engine::estimate::Estimator;

/// An archived gist.
const GIST_MAX_CHARS: usize = 60;

/// A demoted fact's one-line headline.
pub(super) fn gist(text: &str) -> String {
    clip(&flatten(text), GIST_MAX_CHARS)
}

/// One way to free tokens, applied to the `k` oldest eligible lines.
struct Relief {
    eligible: fn(&Gist) -> usize,
    apply: fn(&mut Gist, usize),
}

/// The archive's share of the budget before its own oldest lines give way.
const ARCHIVE_SHARE_DIVISOR: u64 = 5;

const SHRINK_GISTS: Relief = Relief {
    eligible: |d| d.archived.iter().filter(|f| is_gist(f)).count(),
    apply: shrink_gists_to_keys,
};

const COLLAPSE_ARCHIVED: Relief = Relief {
    eligible: |d| d.archived.iter().filter(|f| f.key != COLLAPSED_KEY).count(),
    apply: collapse_archived,
};

/// Names a file's lists keep once they give way.
const NAMES_KEPT: usize = 2;

/// Live facts, lowest priority first. Requests and constraints (P0) appear
/// in no relief at all.
const LADDER: [Relief; 10] = [
    Relief {
        eligible: |d| d.knowledge.len(),
        apply: |d, k| archive_oldest(d, Section::Knowledge, k),
    },
    Relief {
        eligible: |d| d.findings.len(),
        apply: |d, k| archive_oldest(d, Section::Findings, k),
    },
    Relief {
        eligible: |d| worklog::mergeable(&d.work_log),
        apply: |d, k| worklog::merge_oldest(&mut d.work_log, k),
    },
    // A ruled-out call can be re-run to see its error again; a decision's
    // rationale has no other source, so decisions go last.
    Relief {
        eligible: |d| d.ruled_out.len(),
        apply: |d, k| archive_oldest(d, Section::RuledOut, k),
    },
    Relief {
        eligible: |d| usize::from(long_report(d)),
        apply: |d, _| shorten_report(d),
    },
    Relief {
        eligible: |d| d.decisions.len(),
        apply: |d, k| archive_oldest(d, Section::Decisions, k),
    },
    Relief {
        eligible: |d| d.deliverables.iter().filter(|f| long_lists(f)).count(),
        apply: shrink_definition_lists,
    },
    SHRINK_GISTS,
    Relief {
        eligible: |d| {
            d.deliverables
                .iter()
                .filter(|f| short_note(&f.text) != f.text)
                .count()
        },
        apply: shrink_deliverable_notes,
    },
    COLLAPSE_ARCHIVED,
];

/// Over budget, the archive's oldest lines give way first, down to its
/// share (already-demoted facts rank below live ones; without this, a long
/// task's archive would crowd every live fact out); then the ladder runs.
/// Under budget nothing is touched, so prior lines come back verbatim.
pub(super) fn fit_to_budget(mut d: Gist, budget: u64, est: &dyn Estimator) -> Gist {
    let fits = |d: &Gist| est.text(&d.render()) <= budget;
    if fits(&d) {
        return d;
    }
    let archive_share = budget / ARCHIVE_SHARE_DIVISOR;
    let archive_in_share = |d: &Gist| fits(d) || est.text(&d.render_archive()) <= archive_share;
    for relief in [&SHRINK_GISTS, &COLLAPSE_ARCHIVED] {
        d = relieve(d, relief, &archive_in_share);
    }
    for relief in &LADDER {
        d = relieve(d, relief, &fits);
    }
    d
}

/// The least relief after which `done` holds, found by bisection (each
/// relief only shrinks the text, so `done` is monotone in k); all of it when
/// even that is not enough.
fn relieve(d: Gist, relief: &Relief, done: &dyn Fn(&Gist) -> bool) -> Gist {
    let n = (relief.eligible)(&d);
    if n == 0 || done(&d) {
        return d;
    }
    let applied = |k: usize| {
        let mut c = d.clone();
        (relief.apply)(&mut c, k);
        c
    };
    let all = applied(n);
    if !done(&all) {
        return all;
    }
    let (mut lo, mut hi) = (1, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if done(&applied(mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    applied(lo)
}

fn archive_oldest(d: &mut Gist, from: Section, k: usize) {
    let moved: Vec<Fact> = d.facts_mut(from).drain(..k).collect();
    d.archived
        .extend(moved.into_iter().map(|f| Fact::new(f.key, gist(&f.text))));
}

fn is_gist(f: &Fact) -> bool {
    f.key != COLLAPSED_KEY && !f.text.is_empty()
}

fn shrink_gists_to_keys(d: &mut Gist, k: usize) {
    for f in d.archived.iter_mut().filter(|f| is_gist(f)).take(k) {
        f.text.clear();
    }
}

/// A report longer than its first sentence.
fn long_report(d: &Gist) -> bool {
    d.state
        .last_report
        .as_deref()
        .is_some_and(|r| sentences(r).len() > 1)
}

/// The last report down to its first sentence, whole.
fn shorten_report(d: &mut Gist) {
    if let Some(r) = d.state.last_report.as_mut()
        && let Some(first) = sentences(r).first()
    {
        *r = flatten(first);
    }
}

fn long_lists(f: &Fact) -> bool {
    let note = FileNote::parse(&f.text);
    [&note.added, &note.changed, &note.removed]
        .iter()
        .any(|l| l.len() > NAMES_KEPT)
}

/// The oldest files' definition lists down to their newest names, the rest counted.
fn shrink_definition_lists(d: &mut Gist, k: usize) {
    for f in d.deliverables.iter_mut().filter(|f| long_lists(f)).take(k) {
        let mut note = FileNote::parse(&f.text);
        for list in [&mut note.added, &mut note.changed, &mut note.removed] {
            list.shrink_to(NAMES_KEPT);
        }
        f.text = note.render();
    }
}

/// A deliverable note down to its first verb (`written`); the path stays.
fn short_note(note: &str) -> &str {
    note.split([' ', ';']).next().unwrap_or(note)
}

fn shrink_deliverable_notes(d: &mut Gist, k: usize) {
    let shrinkable = d
        .deliverables
        .iter_mut()
        .filter(|f| short_note(&f.text) != f.text)
        .take(k);
    for f in shrinkable {
        f.text = short_note(&f.text).to_string();
    }
}

/// The last resort against unbounded history: the oldest archived keys
/// become one counter line (the raw record still has them).
fn collapse_archived(d: &mut Gist, k: usize) {
    let prior_count = d
        .archived
        .iter()
        .find(|f| f.key == COLLAPSED_KEY)
        .and_then(|f| f.text.split_whitespace().next()?.parse::<usize>().ok())
        .unwrap_or(0);
    d.archived.retain(|f| f.key != COLLAPSED_KEY);
    d.archived.drain(..k);
    let text = format!(
        "{} entries folded away; the raw record keeps them",
        prior_count + k
    );
    d.archived.insert(0, Fact::new(COLLAPSED_KEY, text));
}
