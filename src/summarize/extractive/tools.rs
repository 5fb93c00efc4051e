//! Reading tool calls: what a call acted on (its target and action are read
//! in `engine::action`, the paths it wrote and the lines of its error in
//! `engine::toolfacts`).

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call(name: &str, input: Value) -> ToolCall<'static> {
        ToolCall {
            step: 1,
            id: "c".into(),
            name: name.into(),
            input: std::borrow::Cow::Owned(input),
            output: std::borrow::Cow::Borrowed(""),
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
}
