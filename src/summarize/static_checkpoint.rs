//! The static checkpoint: the most recent user ask and an action count. The
//! floor's last guard when a richer summarizer fails: it always produces
//! something, and it never needs anything but the span.

use crate::engine::summarizer::{SpanEntry, SummarizeError, Summarizer, Summary, SummaryRequest};

#[derive(Debug, Default, Clone, Copy)]
pub struct StaticCheckpoint;

impl Summarizer for StaticCheckpoint {
    fn name(&self) -> String {
        "static".to_string()
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let prior_actions = req.prior.and_then(prior_action_count).unwrap_or(0);
        let prior_ask = req.prior.and_then(prior_last_ask);
        let mut last_ask = None;
        let mut actions = 0u64;
        let mut errors = 0u64;
        for e in req.span {
            match e {
                SpanEntry::Ask { text, .. } => last_ask = Some(text.as_ref()),
                SpanEntry::ToolCall(call) => {
                    actions += 1;
                    errors += u64::from(call.is_error);
                }
                _ => {}
            }
        }
        let ask = last_ask
            .or(prior_ask.as_deref())
            .unwrap_or("(no user ask in the folded span)");
        let total = prior_actions + actions;
        let mut text = String::from("## Current state\n");
        text.push_str(&format!("Last ask: {ask}\n"));
        text.push_str(&format!("{ACTIONS_PREFIX}{total} tool calls"));
        if errors > 0 {
            text.push_str(&format!(" ({errors} failed in the last span)"));
        }
        text.push_str(" in the folded history; read the record for details.\n");
        Ok(Summary {
            text,
            summarizer: self.name(),
        })
    }
}

const ACTIONS_PREFIX: &str = "Actions so far: ";

fn prior_action_count(prior: &str) -> Option<u64> {
    prior
        .lines()
        .find_map(|l| l.strip_prefix(ACTIONS_PREFIX))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

fn prior_last_ask(prior: &str) -> Option<String> {
    prior
        .lines()
        .find_map(|l| l.strip_prefix("Last ask: "))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::CharsPerToken;
    use crate::engine::summarizer::ToolCall;
    use serde_json::json;

    fn call(step: u32, is_error: bool) -> SpanEntry<'static> {
        SpanEntry::ToolCall(ToolCall {
            step,
            id: format!("t{step}"),
            name: "Bash".into(),
            input: std::borrow::Cow::Owned(json!({"command":"ls"})),
            output: "x".into(),
            is_error,
            interrupted: false,
        })
    }

    #[test]
    fn keeps_last_ask_and_accumulates_actions() {
        let est = CharsPerToken::default();
        let span = vec![
            SpanEntry::Ask {
                turn: 1,
                text: "fix the build".into(),
            },
            call(1, false),
            call(2, true),
        ];
        let first = StaticCheckpoint
            .summarize(&SummaryRequest {
                prior: None,
                span: &span,
                later: &[],
                budget_tokens: 2500,
                estimator: &est,
            })
            .unwrap();
        assert!(first.text.contains("Last ask: fix the build"));
        assert!(
            first
                .text
                .contains("Actions so far: 2 tool calls (1 failed")
        );
        let more = vec![call(3, false)];
        let second = StaticCheckpoint
            .summarize(&SummaryRequest {
                prior: Some(&first.text),
                span: &more,
                later: &[],
                budget_tokens: 2500,
                estimator: &est,
            })
            .unwrap();
        assert!(
            second.text.contains("Last ask: fix the build"),
            "{}",
            second.text
        );
        assert!(second.text.contains("Actions so far: 3 tool calls"));
    }
}
