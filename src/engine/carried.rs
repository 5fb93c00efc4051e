//! compactor's own `## Task Context` when a session carries it in: a
//! session written by `compact --write-session` opens with the summary of a
//! history its record does not hold. The next fold takes it as the prior
//! summary (Σn = fold(Σn−1, new)), and `probe` reads the asks and rules it
//! lists, which stay that session's asks and rules.

/// The heading of every summary compactor folds into a view.
pub(crate) const TASK_CONTEXT_HEADING: &str = "## Task Context";

/// The sections of a `## Task Context` block (what follows the heading),
/// or `None` when the text is not one.
pub(crate) fn task_context_sections(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix(TASK_CONTEXT_HEADING)?;
    // The heading is a line of its own: `## Task Contexts` is something else.
    if !(rest.is_empty() || rest.starts_with(['\n', '\r'])) {
        return None;
    }
    Some(rest.trim_start_matches(['\n', '\r']))
}

/// What a carried summary says was asked and ruled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CarriedFacts {
    /// The `## Requests` lines' texts, in order (ordinals dropped).
    pub requests: Vec<String>,
    /// The `## Constraints` lines' texts, in order (keys dropped).
    pub constraints: Vec<String>,
}

/// The requests and constraints a summary's sections list: `- key: text`
/// lines, a fact's further lines indented two spaces (joined with `\n`, as
/// the summarizer reads them back).
pub(crate) fn carried_facts(sections: &str) -> CarriedFacts {
    let mut facts = CarriedFacts {
        requests: section_facts(sections, "Requests"),
        constraints: section_facts(sections, "Constraints"),
    };
    facts.requests.retain(|t| !t.trim().is_empty());
    facts.constraints.retain(|t| !t.trim().is_empty());
    facts
}

/// The texts of the `- key: text` lines under `## {section}` (keys dropped,
/// further lines indented two spaces joined with `\n`), in order.
pub(crate) fn section_facts(sections: &str, section: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut inside = false;
    // Whether the last line began a fact of the section.
    let mut open = false;
    for line in sections.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(name) = line.strip_prefix("## ") {
            inside = name.trim_end() == section;
            open = false;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(fact) = line.strip_prefix("- ") {
            let text = fact.split_once(": ").map_or("", |(_, text)| text);
            out.push(text.to_string());
            open = true;
        } else if let (Some(more), true, Some(last)) =
            (line.strip_prefix("  "), open, out.last_mut())
        {
            last.push('\n');
            last.push_str(more);
        } else {
            open = false;
        }
    }
    out
}

/// The value of a `## Current state` field (`Status`, `Deliverable`, …).
pub(crate) fn state_field<'t>(sections: &'t str, field: &str) -> Option<&'t str> {
    let mut inside = false;
    for line in sections.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(name) = line.strip_prefix("## ") {
            inside = name.trim_end() == "Current state";
            continue;
        }
        if inside
            && let Some(value) = line
                .strip_prefix(field)
                .and_then(|rest| rest.strip_prefix(": "))
        {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sections_of_a_task_context_and_nothing_else() {
        assert_eq!(
            task_context_sections("## Task Context\n\n## Requests\n- #1: go"),
            Some("## Requests\n- #1: go")
        );
        assert_eq!(task_context_sections("## Task Context"), Some(""));
        assert_eq!(task_context_sections("## Task Contexts\n\nx"), None);
        assert_eq!(
            task_context_sections("This session is being continued from a previous conversation"),
            None
        );
    }

    #[test]
    fn requests_and_constraints_are_read_back_with_their_further_lines() {
        let facts = carried_facts(
            "## Requests\n- #1: Fix the export.\n  Keep the registry: it is shared.\n- #2: Add a retry.\n\n\
             ## Deliverables\n- src/a.rs: written (step 2)\n\n\
             ## Constraints\n- keep-the-registry-it-is: Keep the registry: it is shared.\n\n\
             ## Current state\nGoal: #2 — Add a retry.\n",
        );
        assert_eq!(
            facts.requests,
            [
                "Fix the export.\nKeep the registry: it is shared.",
                "Add a retry."
            ]
        );
        assert_eq!(facts.constraints, ["Keep the registry: it is shared."]);
    }

    #[test]
    fn any_section_and_state_field_is_read_back() {
        let sections = "## Ruled out\n- mix-test: Bash `mix test` failed (step 4): boom\n  second line\n\n\
                        ## Current state\nGoal: #1 — x\nStatus: open error\nNext: y\n";
        assert_eq!(
            section_facts(sections, "Ruled out"),
            ["Bash `mix test` failed (step 4): boom\nsecond line"]
        );
        assert_eq!(state_field(sections, "Status"), Some("open error"));
        assert_eq!(state_field(sections, "Deliverable"), None);
    }

    #[test]
    fn a_summary_with_no_request_yet_lists_none() {
        let facts = carried_facts("## Requests\n(no user ask yet)\n\n## Current state\nGoal: x\n");
        assert_eq!(facts, CarriedFacts::default());
    }
}
