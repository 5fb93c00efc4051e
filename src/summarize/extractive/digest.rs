//! The summary's structure: rendered as markdown sections of `- key: text`
//! lines, and parsed back so the next fold can re-emit every line verbatim.

use std::collections::BTreeMap;

pub(super) const NO_REQUESTS_YET: &str = "(no user ask yet)";
/// The key of the line that counts archived entries collapsed away.
pub(super) const COLLAPSED_KEY: &str = "older-archived";

/// One fact line: `- key: text`. Text may span lines (continuations are
/// indented two spaces); an empty text renders as a bare key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Fact {
    pub(super) key: String,
    pub(super) text: String,
}

impl Fact {
    pub(super) fn new(key: impl Into<String>, text: impl Into<String>) -> Fact {
        Fact {
            key: key.into(),
            text: text.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Requests,
    Deliverables,
    WorkLog,
    Decisions,
    Constraints,
    RuledOut,
    Findings,
    Knowledge,
    Archived,
}

/// Fact sections in output order; `## Current state` always comes last.
const FACT_SECTIONS: [Section; 9] = [
    Section::Requests,
    Section::Deliverables,
    Section::WorkLog,
    Section::Decisions,
    Section::Constraints,
    Section::RuledOut,
    Section::Findings,
    Section::Knowledge,
    Section::Archived,
];

/// Sections whose keys are slugs and share one key space.
const SLUG_SECTIONS: [Section; 5] = [
    Section::Decisions,
    Section::Constraints,
    Section::RuledOut,
    Section::Findings,
    Section::Archived,
];

impl Section {
    fn heading(self) -> &'static str {
        match self {
            Section::Requests => "Requests",
            Section::Deliverables => "Deliverables",
            Section::WorkLog => "Work log",
            Section::Decisions => "Decisions",
            Section::Constraints => "Constraints",
            Section::RuledOut => "Ruled out",
            Section::Findings => "Findings",
            Section::Knowledge => "Knowledge",
            Section::Archived => "Archived",
        }
    }
}

/// How `## Deliverables` names the directory its paths are relative to:
/// `## Deliverables (paths under /home/u/repo/)`.
const UNDER: &str = " (paths under ";

const CURRENT_STATE: &str = "Current state";

/// Where a parsed line belongs.
#[derive(Clone, Copy)]
enum Place {
    Facts(Section),
    State,
    /// Under a heading we do not know, or before any heading.
    Foreign,
}

impl Place {
    fn from_heading(name: &str) -> Place {
        if name == CURRENT_STATE {
            return Place::State;
        }
        if name.starts_with(Section::Deliverables.heading()) && name.contains(UNDER) {
            return Place::Facts(Section::Deliverables);
        }
        FACT_SECTIONS
            .into_iter()
            .find(|s| s.heading() == name)
            .map_or(Place::Foreign, Place::Facts)
    }
}

/// `## Current state`: single-line fields, overwritten each fold. Goal,
/// Deliverable, Status and Next are always written; the sub-task, the plan
/// and the last report when the record has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct CurrentState {
    pub(super) goal: Option<String>,
    pub(super) sub_task: Option<String>,
    pub(super) plan: Option<String>,
    pub(super) deliverable: Option<String>,
    pub(super) status: Option<String>,
    pub(super) last_report: Option<String>,
    pub(super) next: Option<String>,
}

const GOAL: &str = "Goal: ";
const SUB_TASK: &str = "Sub-task: ";
const PLAN: &str = "Plan: ";
const DELIVERABLE: &str = "Deliverable: ";
const STATUS: &str = "Status: ";
const LAST_REPORT: &str = "Last report: ";
const NEXT: &str = "Next: ";

impl CurrentState {
    fn render(&self, out: &mut String) {
        out.push_str("## ");
        out.push_str(CURRENT_STATE);
        out.push('\n');
        let field = |v: &Option<String>, default: &str| Some(v.clone().unwrap_or(default.into()));
        for (label, value) in [
            (GOAL, field(&self.goal, NO_REQUESTS_YET)),
            (SUB_TASK, self.sub_task.clone()),
            (PLAN, self.plan.clone()),
            (DELIVERABLE, field(&self.deliverable, "nothing written yet")),
            (STATUS, field(&self.status, "nothing happened yet")),
            (LAST_REPORT, self.last_report.clone()),
            (NEXT, field(&self.next, "(not stated)")),
        ] {
            let Some(value) = value else { continue };
            out.push_str(label);
            out.push_str(&value);
            out.push('\n');
        }
    }

    /// Takes a known field line; false for anything else.
    fn parse_line(&mut self, line: &str) -> bool {
        let slots = [
            (GOAL, &mut self.goal),
            (SUB_TASK, &mut self.sub_task),
            (PLAN, &mut self.plan),
            (DELIVERABLE, &mut self.deliverable),
            (STATUS, &mut self.status),
            (LAST_REPORT, &mut self.last_report),
            (NEXT, &mut self.next),
        ];
        for (label, slot) in slots {
            if let Some(value) = line.strip_prefix(label) {
                *slot = Some(value.to_string());
                return true;
            }
        }
        false
    }

    /// The ordinal the goal line points at (`Goal: #3 — …`).
    pub(super) fn goal_ordinal(&self) -> Option<u32> {
        let goal = self.goal.as_deref()?.strip_prefix('#')?;
        let digits: String = goal.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Gist {
    pub(super) requests: Vec<Fact>,
    /// Keyed by the path as written (absolute when the call gave it so);
    /// rendered relative to their common directory.
    pub(super) deliverables: Vec<Fact>,
    pub(super) work_log: Vec<Fact>,
    pub(super) decisions: Vec<Fact>,
    pub(super) constraints: Vec<Fact>,
    pub(super) ruled_out: Vec<Fact>,
    pub(super) findings: Vec<Fact>,
    pub(super) knowledge: Vec<Fact>,
    pub(super) archived: Vec<Fact>,
    pub(super) state: CurrentState,
    /// Prior text that is not in our format (parse only; never rendered).
    pub(super) foreign: String,
}

impl Gist {
    pub(super) fn facts(&self, s: Section) -> &Vec<Fact> {
        match s {
            Section::Requests => &self.requests,
            Section::Deliverables => &self.deliverables,
            Section::WorkLog => &self.work_log,
            Section::Decisions => &self.decisions,
            Section::Constraints => &self.constraints,
            Section::RuledOut => &self.ruled_out,
            Section::Findings => &self.findings,
            Section::Knowledge => &self.knowledge,
            Section::Archived => &self.archived,
        }
    }

    pub(super) fn facts_mut(&mut self, s: Section) -> &mut Vec<Fact> {
        match s {
            Section::Requests => &mut self.requests,
            Section::Deliverables => &mut self.deliverables,
            Section::WorkLog => &mut self.work_log,
            Section::Decisions => &mut self.decisions,
            Section::Constraints => &mut self.constraints,
            Section::RuledOut => &mut self.ruled_out,
            Section::Findings => &mut self.findings,
            Section::Knowledge => &mut self.knowledge,
            Section::Archived => &mut self.archived,
        }
    }

    pub(super) fn render(&self) -> String {
        let mut blocks = Vec::new();
        let root = self.root();
        for section in FACT_SECTIONS {
            let facts = self.facts(section);
            if facts.is_empty() && section != Section::Requests
                || section == Section::WorkLog && super::worklog::only_asks(facts)
            {
                continue;
            }
            let mut block = match (&root, section) {
                (Some(root), Section::Deliverables) => {
                    format!("## {}{UNDER}{root})\n", section.heading())
                }
                _ => format!("## {}\n", section.heading()),
            };
            if facts.is_empty() {
                block.push_str(NO_REQUESTS_YET);
                block.push('\n');
            }
            for fact in facts {
                match (&root, section) {
                    (Some(root), Section::Deliverables) => {
                        // A file right in the root stays whole: a path keeps
                        // a directory and its name.
                        let key = fact
                            .key
                            .strip_prefix(root.as_str())
                            .filter(|rest| rest.contains('/'))
                            .unwrap_or(&fact.key);
                        render_fact(&mut block, &Fact::new(key, fact.text.as_str()));
                    }
                    _ => render_fact(&mut block, fact),
                }
            }
            blocks.push(block);
        }
        let mut state = String::new();
        self.state.render(&mut state);
        blocks.push(state);
        blocks.join("\n")
    }

    /// The `## Archived` section alone, as `render` writes it.
    pub(super) fn render_archive(&self) -> String {
        let mut out = String::new();
        for fact in &self.archived {
            render_fact(&mut out, fact);
        }
        out
    }

    /// The directory every deliverable's path is under, when there are at
    /// least two and all are absolute: their paths are shown relative to it.
    pub(super) fn root(&self) -> Option<String> {
        common_root(self.deliverables.iter().map(|f| f.key.as_str()))
    }

    pub(super) fn parse(text: &str) -> Gist {
        let mut d = Gist::default();
        let mut place = Place::Foreign;
        let mut foreign = Vec::new();
        let mut root: Option<String> = None;
        for line in text.split('\n') {
            if let Some(name) = line.strip_prefix("## ") {
                // An unknown heading starts foreign text; the heading itself is noise.
                let name = name.trim_end();
                place = Place::from_heading(name);
                if let Some((_, under)) = name.split_once(UNDER) {
                    root = under.strip_suffix(')').map(str::to_string);
                }
                continue;
            }
            let taken = match place {
                Place::State => d.state.parse_line(line),
                Place::Facts(s) => d.parse_fact_line(s, line),
                Place::Foreign => false,
            };
            if !taken && !line.trim().is_empty() && line != NO_REQUESTS_YET {
                foreign.push(line);
            }
        }
        d.foreign = foreign.join("\n");
        if let Some(root) = root {
            // Under a root, only the paths outside it are shown absolute.
            for f in d
                .deliverables
                .iter_mut()
                .filter(|f| !f.key.starts_with('/'))
            {
                f.key = format!("{root}{}", f.key);
            }
        }
        d
    }

    /// A fact line or a continuation of the section's last fact.
    fn parse_fact_line(&mut self, s: Section, line: &str) -> bool {
        if let Some(rest) = line.strip_prefix("- ") {
            let fact = parse_fact(s, rest);
            self.facts_mut(s).push(fact);
            return true;
        }
        match (line.strip_prefix("  "), self.facts_mut(s).last_mut()) {
            (Some(cont), Some(last)) => {
                last.text.push('\n');
                last.text.push_str(cont);
                true
            }
            _ => false,
        }
    }

    pub(super) fn max_ordinal(&self) -> u32 {
        self.requests
            .iter()
            .filter_map(|f| ordinal_of(&f.key))
            .max()
            .unwrap_or(0)
    }

    pub(super) fn request_text(&self, ordinal: u32) -> Option<&str> {
        self.requests
            .iter()
            .find(|f| ordinal_of(&f.key) == Some(ordinal))
            .map(|f| f.text.as_str())
    }

    /// Every slug key, with the section and position holding it.
    pub(super) fn slug_index(&self) -> BTreeMap<String, (Section, usize)> {
        SLUG_SECTIONS
            .into_iter()
            .flat_map(|s| {
                self.facts(s)
                    .iter()
                    .enumerate()
                    .map(move |(i, f)| (f.key.clone(), (s, i)))
            })
            .collect()
    }
}

fn render_fact(out: &mut String, fact: &Fact) {
    out.push_str("- ");
    out.push_str(&fact.key);
    if !fact.text.is_empty() {
        out.push_str(": ");
        let mut lines = fact.text.split('\n');
        out.push_str(lines.next().unwrap_or_default());
        for line in lines {
            out.push_str("\n  ");
            out.push_str(line);
        }
    }
    out.push('\n');
}

/// How a deliverable's note starts: a path may itself hold `": "`.
const NOTE_VERBS: [&str; 6] = ["written", "edited", "created", "deleted", "moved", "last "];

fn parse_fact(s: Section, rest: &str) -> Fact {
    let split = if s == Section::Deliverables {
        rest.match_indices(": ")
            .find(|(at, _)| NOTE_VERBS.iter().any(|v| rest[at + 2..].starts_with(v)))
            .map(|(at, _)| (&rest[..at], &rest[at + 2..]))
            .or_else(|| rest.rsplit_once(": "))
    } else {
        rest.split_once(": ")
    };
    match split {
        Some((key, text)) => Fact::new(key, text),
        None => Fact::new(rest, ""),
    }
}

/// The directory most deliverables are under, shown once in the heading:
/// of those holding at least two paths and [`ROOT_SHARE`] of them all, the
/// one that saves the most characters (outliers stay absolute). Only when every path is absolute, so a
/// path shown relative is always under it.
pub(super) fn common_root<'a>(paths: impl Iterator<Item = &'a str>) -> Option<String> {
    let paths: Vec<&str> = paths.collect();
    if paths.len() < 2
        || paths
            .iter()
            .any(|p| !p.starts_with('/') || p.contains('\n'))
    {
        return None;
    }
    let need = (paths.len() * ROOT_SHARE.0).div_ceil(ROOT_SHARE.1).max(2);
    // Every ancestor directory of every path, with how many paths it holds.
    // A path shown under a root keeps a directory and its name (`lib/a.ex`,
    // never `a.ex`), as a probe of its path reads it.
    let mut under: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &paths {
        let dirs: Vec<usize> = p.match_indices('/').map(|(at, _)| at).collect();
        for &at in dirs.iter().skip(1).take(dirs.len().saturating_sub(2)) {
            *under.entry(&p[..=at]).or_default() += 1;
        }
    }
    under
        .into_iter()
        // Worth its heading: it saves more than it costs.
        .filter(|(dir, n)| *n >= need && (n - 1) * dir.len() > UNDER.len() + 1)
        .max_by_key(|(dir, n)| ((n - 1) * dir.len(), *n, std::cmp::Reverse(*dir)))
        .map(|(dir, _)| dir.to_string())
}

/// The share of the paths (numerator, denominator) a root must hold.
const ROOT_SHARE: (usize, usize) = (3, 5);

pub(super) fn ordinal_of(key: &str) -> Option<u32> {
    key.strip_prefix('#')?.parse().ok()
}
