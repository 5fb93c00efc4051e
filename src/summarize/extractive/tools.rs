//! Reading tool calls: what a call acted on (its target and action are read
//! in `engine::action`, the paths it wrote and the lines of its error in
//! `engine::toolfacts`), and the plan a planning tool states.

use serde_json::Value;

use super::prose::{EMPTY_SLUG, slug};
use crate::engine::action::{action_of, action_words, actions_of, call_target};
use crate::engine::summarizer::ToolCall;

/// Words in an action's key.
const ACTION_KEY_WORDS: usize = 4;

/// What a call is named by in a summary line.
pub(super) struct CallName {
    /// `Tool `target` `: what its lines start with.
    pub subject: String,
    /// The action, as `engine::action` names it: the same for a retry.
    pub action: String,
    /// The key of its facts: what the action is about (`mix-test`).
    pub key: String,
    /// Every action a success of it performed, its own first (a chained
    /// shell command performs each of its commands).
    pub performs: Vec<String>,
}

impl CallName {
    pub(super) fn of(call: &ToolCall) -> CallName {
        let target = call_target(&call.name, &call.input);
        CallName::named(&call.name, &target)
    }

    /// A call named `Tool `target`` in a line read back.
    pub(super) fn named(tool: &str, target: &str) -> CallName {
        let key = match slug(&action_words(tool, target), ACTION_KEY_WORDS) {
            k if k == EMPTY_SLUG => slug(tool, 2),
            k => k,
        };
        CallName {
            subject: format!("{tool} `{target}` "),
            action: action_of(tool, target),
            key,
            performs: actions_of(tool, target),
        }
    }
}

/// A step of a plan (`TodoWrite`'s todos, Codex `update_plan`'s plan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PlanNext {
    /// The step in progress, else the first pending one.
    Step(String),
    /// Every step is done.
    Done,
}

/// The next step of the plan a call states, if it states one.
pub(super) fn plan_next(call: &ToolCall) -> Option<PlanNext> {
    let steps = ["todos", "plan"]
        .iter()
        .find_map(|k| call.input.get(*k).and_then(Value::as_array))?;
    fn status(s: &Value) -> &str {
        s.get("status").and_then(Value::as_str).unwrap_or_default()
    }
    let text = |s: &Value| {
        ["content", "step", "title", "description"]
            .iter()
            .find_map(|k| s.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    if !steps.iter().any(|s| s.get("status").is_some()) {
        return None;
    }
    let next = steps
        .iter()
        .find(|s| status(s) == "in_progress")
        .or_else(|| steps.iter().find(|s| status(s) == "pending"));
    Some(match next.and_then(text) {
        Some(step) => PlanNext::Step(step),
        None => PlanNext::Done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            step: 1,
            id: "c".into(),
            name: name.into(),
            input,
            output: String::new(),
            is_error: false,
            interrupted: false,
        }
    }

    #[test]
    fn a_call_is_keyed_by_what_its_action_is_about() {
        let n = CallName::of(&call("Bash", json!({"command": "cd /r && mix test 2>&1"})));
        assert_eq!(n.key, "mix-test");
        assert_eq!(n.subject, "Bash `cd /r && mix test 2>&1` ");
        let r = CallName::of(&call("Read", json!({"file_path": "/r/fixtures/big.jsonl"})));
        assert_eq!(r.key, "read-big-jsonl");
        assert_eq!(r.action, "Read /r/fixtures/big.jsonl");
    }

    #[test]
    fn a_plan_names_its_step_in_progress_else_its_first_pending() {
        let todo = |statuses: [&str; 2]| {
            call(
                "TodoWrite",
                json!({"todos": [
                    {"content": "Move the button", "status": statuses[0]},
                    {"content": "Test the layout", "status": statuses[1]},
                ]}),
            )
        };
        assert_eq!(
            plan_next(&todo(["completed", "in_progress"])),
            Some(PlanNext::Step("Test the layout".into()))
        );
        assert_eq!(
            plan_next(&todo(["pending", "pending"])),
            Some(PlanNext::Step("Move the button".into()))
        );
        assert_eq!(
            plan_next(&todo(["completed", "completed"])),
            Some(PlanNext::Done)
        );
        let codex = call(
            "update_plan",
            json!({"plan": [{"step": "Write the parser", "status": "in_progress"}]}),
        );
        assert_eq!(
            plan_next(&codex),
            Some(PlanNext::Step("Write the parser".into()))
        );
        assert_eq!(plan_next(&call("Read", json!({"file_path": "a"}))), None);
    }
}
