//! Checking a model's summary: the required sections are there, and every
//! P0 line (the prior summary's `## Requests` and `## Constraints` lines and
//! the span's constraints, as the extractive summary carries them) survives
//! verbatim. A dropped line is re-inserted, and reported; a response without
//! the required sections is unusable.

/// Sections every summary has.
pub(crate) const REQUIRED_SECTIONS: &[&str] = &["## Requests", "## Current state"];
/// Sections whose lines must survive verbatim.
pub(crate) const P0_SECTIONS: &[&str] = &["## Requests", "## Constraints"];

/// The non-empty lines under `heading`, up to the next `## ` heading.
pub(crate) fn section_lines(text: &str, heading: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| l.trim_end() != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// The lines that must survive, by section: the prior summary's, then the
/// extractive summary's (which carries the span's asks and constraints), once each.
pub(crate) fn required_lines(prior: Option<&str>, extractive: &str) -> Vec<(String, Vec<String>)> {
    P0_SECTIONS
        .iter()
        .map(|&h| {
            let mut lines: Vec<String> = Vec::new();
            for l in prior
                .map(|p| section_lines(p, h))
                .unwrap_or_default()
                .into_iter()
                .chain(section_lines(extractive, h))
            {
                if !lines.contains(&l) {
                    lines.push(l);
                }
            }
            (h.to_string(), lines)
        })
        .collect()
}

/// A model response that cannot be used as a summary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unusable {
    #[error("the response is empty")]
    Empty,
    #[error("the response lacks the required section `{0}`")]
    MissingSection(&'static str),
}

/// Normalise a response (strip a code fence, a `## Task Context` heading,
/// preamble before `## Requests`), check it, and re-insert missing P0 lines.
/// Returns the summary text (ending in one newline) and the re-inserted lines.
pub(crate) fn validate(
    response: &str,
    required: &[(String, Vec<String>)],
) -> Result<(String, Vec<String>), Unusable> {
    let mut text = response.replace("\r\n", "\n");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(Unusable::Empty);
    }
    if trimmed.starts_with("```") {
        let inner: Vec<&str> = trimmed.lines().skip(1).collect();
        let mut inner = inner.join("\n");
        if let Some(stripped) = inner.trim_end().strip_suffix("```") {
            inner = stripped.to_string();
        }
        text = inner;
    }
    for &h in REQUIRED_SECTIONS {
        if !text.lines().any(|l| l.trim_end() == h) {
            return Err(Unusable::MissingSection(h));
        }
    }
    // Drop whatever precedes `## Requests` (a preamble, a Task Context heading).
    let start = text
        .lines()
        .position(|l| l.trim_end() == "## Requests")
        .expect("checked above");
    let mut lines: Vec<String> = text
        .lines()
        .skip(start)
        .map(|l| l.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut repaired = Vec::new();
    for (heading, want) in required {
        for line in want {
            if lines.iter().any(|l| l == line) {
                continue;
            }
            insert_line(&mut lines, heading, line);
            repaired.push(line.clone());
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok((out, repaired))
}

/// Append `line` at the end of section `heading`, creating the section just
/// before `## Current state` when the model left it out.
fn insert_line(lines: &mut Vec<String>, heading: &str, line: &str) {
    match lines.iter().position(|l| l == heading) {
        Some(h) => {
            let mut end = lines[h + 1..]
                .iter()
                .position(|l| l.starts_with("## "))
                .map_or(lines.len(), |i| h + 1 + i);
            while end > h + 1 && lines[end - 1].is_empty() {
                end -= 1;
            }
            lines.insert(end, line.to_string());
        }
        None => {
            let at = lines
                .iter()
                .position(|l| l == "## Current state")
                .unwrap_or(lines.len());
            lines.splice(
                at..at,
                [heading.to_string(), line.to_string(), String::new()],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXTRACTIVE: &str = "## Requests\n- #1: fix the build\n\n## Constraints\n- no-force-push: Never force-push.\n\n## Current state\nGoal: #1\n";

    #[test]
    fn a_complete_response_passes_unchanged() {
        let req = required_lines(None, EXTRACTIVE);
        let resp = "## Requests\n- #1: fix the build\n\n## Constraints\n- no-force-push: Never force-push.\n\n## Current state\nGoal: build green\n";
        assert_eq!(validate(resp, &req).unwrap(), (resp.to_string(), vec![]));
    }

    #[test]
    fn a_dropped_constraint_is_reinserted_and_reported() {
        let req = required_lines(None, EXTRACTIVE);
        let resp = "Here you go:\n## Requests\n- #1: fix the build\n\n## Current state\nGoal: build green\n";
        let (text, repaired) = validate(resp, &req).unwrap();
        assert_eq!(
            repaired,
            vec!["- no-force-push: Never force-push.".to_string()]
        );
        assert_eq!(
            text,
            "## Requests\n- #1: fix the build\n\n## Constraints\n- no-force-push: Never force-push.\n\n## Current state\nGoal: build green\n"
        );
    }

    #[test]
    fn prior_p0_lines_are_required_too() {
        let prior = "## Requests\n- #1: old ask\n\n## Constraints\n- keep-api: Keep the API stable.\n\n## Current state\nGoal: x\n";
        let req = required_lines(Some(prior), EXTRACTIVE);
        let resp = "```\n## Requests\n- #1: fix the build\n\n## Constraints\n\n## Current state\nGoal: y\n```";
        let (text, repaired) = validate(resp, &req).unwrap();
        assert_eq!(repaired.len(), 3, "{repaired:?}");
        assert!(
            text.contains("- #1: old ask\n- #1: fix the build")
                || text.contains("- #1: fix the build\n- #1: old ask"),
            "{text}"
        );
        assert!(text.contains("## Constraints\n- keep-api: Keep the API stable.\n- no-force-push: Never force-push.\n"), "{text}");
    }

    #[test]
    fn missing_sections_are_unusable() {
        let req = required_lines(None, EXTRACTIVE);
        assert_eq!(validate("  \n", &req), Err(Unusable::Empty));
        assert_eq!(
            validate("## Requests\n- #1: fix the build\n", &req),
            Err(Unusable::MissingSection("## Current state"))
        );
        assert_eq!(
            validate("The build is fixed.", &req),
            Err(Unusable::MissingSection("## Requests"))
        );
    }
}
