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
    Decisions,
    Constraints,
    RuledOut,
    Findings,
    Archived,
}

/// Fact sections in output order; `## Current state` always comes last.
const FACT_SECTIONS: [Section; 7] = [
    Section::Requests,
    Section::Deliverables,
    Section::Decisions,
    Section::Constraints,
    Section::RuledOut,
    Section::Findings,
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
            Section::Decisions => "Decisions",
            Section::Constraints => "Constraints",
            Section::RuledOut => "Ruled out",
            Section::Findings => "Findings",
            Section::Archived => "Archived",
        }
    }
}

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
        FACT_SECTIONS
            .into_iter()
            .find(|s| s.heading() == name)
            .map_or(Place::Foreign, Place::Facts)
    }
}

/// `## Current state`: four single-line fields, overwritten each fold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct CurrentState {
    pub(super) goal: Option<String>,
    pub(super) deliverable: Option<String>,
    pub(super) status: Option<String>,
    pub(super) next: Option<String>,
}

const GOAL: &str = "Goal: ";
const DELIVERABLE: &str = "Deliverable: ";
const STATUS: &str = "Status: ";
const NEXT: &str = "Next: ";

impl CurrentState {
    fn render(&self, out: &mut String) {
        out.push_str("## ");
        out.push_str(CURRENT_STATE);
        out.push('\n');
        let field = |v: &Option<String>, default: &str| v.clone().unwrap_or(default.into());
        for (label, value) in [
            (GOAL, field(&self.goal, NO_REQUESTS_YET)),
            (DELIVERABLE, field(&self.deliverable, "nothing written yet")),
            (STATUS, field(&self.status, "nothing happened yet")),
            (NEXT, field(&self.next, "(not stated)")),
        ] {
            out.push_str(label);
            out.push_str(&value);
            out.push('\n');
        }
    }

    /// Takes a known field line; false for anything else.
    fn parse_line(&mut self, line: &str) -> bool {
        let slots = [
            (GOAL, &mut self.goal),
            (DELIVERABLE, &mut self.deliverable),
            (STATUS, &mut self.status),
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
    pub(super) deliverables: Vec<Fact>,
    pub(super) decisions: Vec<Fact>,
    pub(super) constraints: Vec<Fact>,
    pub(super) ruled_out: Vec<Fact>,
    pub(super) findings: Vec<Fact>,
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
            Section::Decisions => &self.decisions,
            Section::Constraints => &self.constraints,
            Section::RuledOut => &self.ruled_out,
            Section::Findings => &self.findings,
            Section::Archived => &self.archived,
        }
    }

    pub(super) fn facts_mut(&mut self, s: Section) -> &mut Vec<Fact> {
        match s {
            Section::Requests => &mut self.requests,
            Section::Deliverables => &mut self.deliverables,
            Section::Decisions => &mut self.decisions,
            Section::Constraints => &mut self.constraints,
            Section::RuledOut => &mut self.ruled_out,
            Section::Findings => &mut self.findings,
            Section::Archived => &mut self.archived,
        }
    }

    pub(super) fn render(&self) -> String {
        let mut blocks = Vec::new();
        for section in FACT_SECTIONS {
            let facts = self.facts(section);
            if facts.is_empty() && section != Section::Requests {
                continue;
            }
            let mut block = format!("## {}\n", section.heading());
            if facts.is_empty() {
                block.push_str(NO_REQUESTS_YET);
                block.push('\n');
            }
            for fact in facts {
                render_fact(&mut block, fact);
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

    pub(super) fn parse(text: &str) -> Gist {
        let mut d = Gist::default();
        let mut place = Place::Foreign;
        let mut foreign = Vec::new();
        for line in text.split('\n') {
            if let Some(name) = line.strip_prefix("## ") {
                // An unknown heading starts foreign text; the heading itself is noise.
                place = Place::from_heading(name.trim_end());
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

fn parse_fact(s: Section, rest: &str) -> Fact {
    // A deliverable's key is a path, which may itself hold ": "; its note never does.
    let split = if s == Section::Deliverables {
        rest.rsplit_once(": ")
    } else {
        rest.split_once(": ")
    };
    match split {
        Some((key, text)) => Fact::new(key, text),
        None => Fact::new(rest, ""),
    }
}

pub(super) fn ordinal_of(key: &str) -> Option<u32> {
    key.strip_prefix('#')?.parse().ok()
}
