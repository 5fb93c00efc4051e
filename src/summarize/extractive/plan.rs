//! The agent's plan (a planning tool's list: Claude Code's `TodoWrite`,
//! Codex's `update_plan`) as `## Current state` carries it from fold to fold:
//!
//! ```text
//! Plan: [x] Extract the shared view; [>] Upgrade the renderer; [ ] Add the sidecar
//! ```
//!
//! `[x]` done, `[>]` in progress, `[ ]` pending. A new plan is compared with
//! the one held, so the work log can say which step started or finished.

use serde_json::Value;

use crate::engine::summarizer::ToolCall;

/// A step as the plan line shows it.
const STEP_MAX_CHARS: usize = 80;
/// Steps the line shows; past it, the done ones give way first.
const STEPS_SHOWN: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Done,
    Doing,
    Pending,
}

impl Status {
    fn mark(self) -> &'static str {
        match self {
            Status::Done => "[x]",
            Status::Doing => "[>]",
            Status::Pending => "[ ]",
        }
    }

    fn of_mark(mark: &str) -> Option<Status> {
        match mark {
            "[x]" => Some(Status::Done),
            "[>]" => Some(Status::Doing),
            "[ ]" => Some(Status::Pending),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Plan {
    pub steps: Vec<(Status, String)>,
    /// Steps the line left out, by status (done, pending).
    pub hidden_done: usize,
    pub hidden_pending: usize,
}

impl Plan {
    /// The plan a planning call states, if it states one with statuses.
    pub(super) fn of_call(call: &ToolCall) -> Option<Plan> {
        let steps = ["todos", "plan"]
            .iter()
            .find_map(|k| call.input.get(*k).and_then(Value::as_array))?;
        if !steps.iter().any(|s| s.get("status").is_some()) {
            return None;
        }
        let text = |s: &Value| {
            ["content", "step", "title", "description"]
                .iter()
                .find_map(|k| s.get(*k).and_then(Value::as_str))
                .map(step_text)
        };
        let status = |s: &Value| match s.get("status").and_then(Value::as_str) {
            Some("completed" | "done" | "complete") => Status::Done,
            Some("in_progress" | "in-progress" | "active") => Status::Doing,
            _ => Status::Pending,
        };
        Some(Plan {
            steps: steps
                .iter()
                .filter_map(|s| Some((status(s), text(s)?)))
                .collect(),
            ..Plan::default()
        })
    }

    /// The step in progress, else the first pending one.
    pub(super) fn next(&self) -> Option<(Status, &str)> {
        self.steps
            .iter()
            .find(|(s, _)| *s == Status::Doing)
            .or_else(|| self.steps.iter().find(|(s, _)| *s == Status::Pending))
            .map(|(s, t)| (*s, t.as_str()))
    }

    pub(super) fn all_done(&self) -> bool {
        self.hidden_pending == 0 && self.steps.iter().all(|(s, _)| *s == Status::Done)
    }

    /// What changed from `before`: the steps that started and finished, in order.
    pub(super) fn changes_from(&self, before: Option<&Plan>) -> Vec<String> {
        let was = |text: &str| {
            before.and_then(|b| b.steps.iter().find(|(_, t)| t == text).map(|(s, _)| *s))
        };
        let mut out = Vec::new();
        for (status, text) in &self.steps {
            let now = match (was(text), status) {
                (Some(Status::Done), _) | (_, Status::Pending) => None,
                (Some(Status::Doing), Status::Doing) => None,
                (_, Status::Done) => Some("done"),
                (_, Status::Doing) => Some("started"),
            };
            if let Some(verb) = now {
                out.push(format!("plan: \"{text}\" {verb}"));
            }
        }
        if out.is_empty() && before.is_none() {
            out.push(format!("plan set: {} steps", self.steps.len()));
        }
        out
    }

    pub(super) fn render(&self) -> String {
        let mut shown: Vec<usize> = (0..self.steps.len()).collect();
        let mut hidden_done = self.hidden_done;
        let mut hidden_pending = self.hidden_pending;
        // Done steps give way first (the oldest), then the last pending ones.
        while shown.len() > STEPS_SHOWN {
            if let Some(pos) = shown.iter().position(|&i| self.steps[i].0 == Status::Done) {
                shown.remove(pos);
                hidden_done += 1;
            } else {
                shown.pop();
                hidden_pending += 1;
            }
        }
        let mut parts: Vec<String> = shown
            .iter()
            .map(|&i| format!("{} {}", self.steps[i].0.mark(), self.steps[i].1))
            .collect();
        if hidden_done > 0 || hidden_pending > 0 {
            parts.push(format!("(+{hidden_done} done, +{hidden_pending} pending)"));
        }
        parts.join("; ")
    }

    pub(super) fn parse(line: &str) -> Plan {
        let mut plan = Plan::default();
        for part in line.split("; ") {
            if let Some(counts) = part
                .strip_prefix("(+")
                .and_then(|r| r.strip_suffix(" pending)"))
            {
                if let Some((done, pending)) = counts.split_once(" done, +") {
                    plan.hidden_done = done.parse().unwrap_or(0);
                    plan.hidden_pending = pending.parse().unwrap_or(0);
                }
                continue;
            }
            let Some(mark) = part.get(..3) else {
                continue;
            };
            if let Some(status) = Status::of_mark(mark) {
                plan.steps
                    .push((status, part[3..].trim_start().to_string()));
            }
        }
        plan
    }
}

/// A step's text on one line, `; ` kept out (it separates steps), capped.
fn step_text(s: &str) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = flat.replace("; ", ", ");
    match flat.char_indices().nth(STEP_MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn todo(statuses: &[&str]) -> ToolCall<'static> {
        let todos: Vec<Value> = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| json!({"content": format!("Step {i}; part"), "status": s}))
            .collect();
        ToolCall {
            step: 1,
            id: "t".into(),
            name: "TodoWrite".into(),
            input: std::borrow::Cow::Owned(json!({ "todos": todos })),
            output: std::borrow::Cow::Borrowed(""),
            is_error: false,
            interrupted: false,
        }
    }

    #[test]
    fn a_plan_renders_parses_back_and_tells_what_changed() {
        let first = Plan::of_call(&todo(&["in_progress", "pending"])).unwrap();
        assert_eq!(first.render(), "[>] Step 0, part; [ ] Step 1, part");
        assert_eq!(Plan::parse(&first.render()), first);
        assert_eq!(first.changes_from(None), ["plan: \"Step 0, part\" started"]);
        let second = Plan::of_call(&todo(&["completed", "in_progress"])).unwrap();
        assert_eq!(
            second.changes_from(Some(&first)),
            [
                "plan: \"Step 0, part\" done",
                "plan: \"Step 1, part\" started"
            ]
        );
        assert_eq!(second.next(), Some((Status::Doing, "Step 1, part")));
        let long = Plan::of_call(&todo(&["completed"; 12])).unwrap();
        assert_eq!(
            Plan::parse(&long.render()).hidden_done,
            2,
            "{}",
            long.render()
        );
        assert!(Plan::parse(&long.render()).all_done());
    }
}
