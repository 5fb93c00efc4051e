//! The client's summary and compactor's Task Context, side by side: each
//! compaction the hooks recorded, both texts scored with the probes of the
//! history they replaced (`probe --recorded`, `report`). Pure.

use crate::model::{Block, Kind, Message, Role};
use crate::probe::{Evaluation, Probe, evaluate};
use crate::store::ClientCompaction;
use crate::view::{View, ViewMessage, ViewRole};

/// One side of a compaction: a text and how it scores.
#[derive(Debug, Clone)]
pub(crate) struct ScoredSide {
    pub text: String,
    pub evaluation: Evaluation,
}

/// One compaction of the client's, with what the hooks recorded of it.
#[derive(Debug, Clone)]
pub(crate) struct Compared {
    pub after_call: u32,
    pub client: String,
    pub trigger: Option<String>,
    /// Rows of the record before it: the probes judged are theirs.
    pub history_rows: usize,
    pub client_summary: Option<ScoredSide>,
    pub task_context: Option<ScoredSide>,
}

fn text_view(text: &str) -> View {
    View {
        messages: vec![ViewMessage {
            role: ViewRole::User,
            content: vec![Block::Text {
                text: text.to_string(),
            }],
        }],
    }
}

/// Every recorded compaction, both sides scored with `probes`.
pub(crate) fn compare(probes: &[Probe], compactions: &[ClientCompaction]) -> Vec<Compared> {
    compactions
        .iter()
        .map(|c| {
            let rows = c.history_rows as usize;
            let side = |t: &Option<String>| {
                t.as_ref().map(|text| ScoredSide {
                    text: text.clone(),
                    evaluation: evaluate(probes, &text_view(text), rows),
                })
            };
            Compared {
                after_call: c.after_call,
                client: c.client.clone(),
                trigger: c.trigger.clone(),
                history_rows: rows,
                client_summary: side(&c.client_summary),
                task_context: side(&c.task_context),
            }
        })
        .collect()
}

/// The compaction a view at call `at` follows: the latest before it.
pub(crate) fn before_call(compared: &[Compared], at: u32) -> Option<&Compared> {
    compared.iter().rev().find(|c| c.after_call < at)
}

/// What the original agent sent at a call whose history is `rows`: the
/// record since its last own compaction summary (that summary first).
pub(crate) fn recorded_view(rows: &[Message]) -> View {
    let from = rows
        .iter()
        .rposition(|m| m.kind == Kind::CompactSummary)
        .unwrap_or(0);
    let messages = rows[from..].iter().filter_map(recorded_message).collect();
    View { messages }
}

/// The message a row of the record adds to [`recorded_view`], if any.
pub(crate) fn recorded_message(m: &Message) -> Option<ViewMessage> {
    (m.role != Role::Meta && (m.kind.reaches_view() || m.kind == Kind::CompactSummary)).then(|| {
        ViewMessage {
            role: match m.role {
                Role::Assistant => ViewRole::Assistant,
                _ => ViewRole::User,
            },
            content: m.content.clone(),
        }
    })
}

/// What the client sent at a call whose history is `rows`, as `probe
/// --recorded` scores it: [`recorded_view`] with the Task Context a hook put
/// back ([`with_task_context`]).
pub(crate) fn sent_view(rows: &[Message], compactions: &[ClientCompaction]) -> View {
    with_task_context(recorded_view(rows), rows, compactions)
}

/// What the client sent after its own last compaction, as `probe --recorded`
/// scores it: `view` (the record from the client's summary on) with the Task
/// Context the hook put back right after that summary, when the hooks saw
/// that compaction (its summary is the first one at or after the history the
/// compaction replaced).
pub(crate) fn with_task_context(
    mut view: View,
    rows: &[Message],
    compactions: &[ClientCompaction],
) -> View {
    let Some(last) = rows.iter().rposition(|m| m.kind == Kind::CompactSummary) else {
        return view;
    };
    let seen = compactions.iter().rev().find(|c| {
        let from = (c.history_rows as usize).min(rows.len());
        rows[from..]
            .iter()
            .position(|m| m.kind == Kind::CompactSummary)
            .is_some_and(|p| from + p == last)
    });
    if let Some(text) = seen.and_then(|c| c.task_context.as_ref()) {
        place_task_context(&mut view, rows[last].role, text);
    }
    view
}

/// Put a Task Context back into a non-empty `view` after the client's
/// summary, a row of `summary_role`: in the summary's own message when the
/// user side carries it, else as a user message after it. An empty view
/// stays empty.
pub(crate) fn place_task_context(view: &mut View, summary_role: Role, text: &str) {
    if view.messages.is_empty() {
        return;
    }
    let block = Block::Text {
        text: text.to_string(),
    };
    if summary_role != Role::Assistant {
        view.messages[0].content.push(block);
    } else {
        view.messages.insert(
            1,
            ViewMessage {
                role: ViewRole::User,
                content: vec![block],
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::extract;

    fn ask(s: &str, line: u64) -> Message {
        Message::new(
            Role::User,
            Kind::Ask,
            vec![Block::Text { text: s.into() }],
            line,
        )
    }

    fn compaction(rows: u64, client: &str, tc: &str) -> ClientCompaction {
        ClientCompaction {
            task_id: "t".into(),
            after_call: 1,
            history_rows: rows,
            client: "claude-code".into(),
            trigger: Some("manual".into()),
            client_summary: Some(client.into()),
            task_context: Some(tc.into()),
            summarizer: Some("extractive".into()),
        }
    }

    #[test]
    fn each_side_is_scored_on_the_history_it_replaced() {
        let rows = vec![
            ask("Fix the parser. Never touch the migrations directory.", 1),
            ask("Later: also never delete the fixtures.", 9),
        ];
        let probes = extract(&rows);
        let c = compaction(
            1,
            "The user wants the parser fixed.",
            "## Constraints\n- never-touch: Never touch the migrations directory.\n## Requests\n- #1: Fix the parser. Never touch the migrations directory.",
        );
        let got = compare(&probes, &[c]);
        let client = &got[0].client_summary.as_ref().unwrap().evaluation;
        let ours = &got[0].task_context.as_ref().unwrap().evaluation;
        // The second ask came after the compaction: judged on neither.
        assert_eq!(client.critical_judged, ours.critical_judged);
        assert!(client.critical_lost > 0);
        assert_eq!(ours.critical_lost, 0);
        assert!(before_call(&got, 1).is_none());
        assert_eq!(before_call(&got, 2).unwrap().after_call, 1);
    }

    #[test]
    fn the_recorded_view_carries_the_task_context_after_the_summary_it_followed() {
        let mut rows = vec![ask("Fix it. Never push.", 1)];
        rows.push(Message::new(
            Role::User,
            Kind::CompactSummary,
            vec![Block::Text {
                text: "client summary".into(),
            }],
            5,
        ));
        rows.push(ask("go on", 6));
        // The record from the client's summary on, as `probe --recorded` takes it.
        let view = View {
            messages: rows[1..]
                .iter()
                .map(|m| ViewMessage {
                    role: ViewRole::User,
                    content: m.content.clone(),
                })
                .collect(),
        };
        let with = with_task_context(view.clone(), &rows, &[compaction(1, "s", "TASK CONTEXT")]);
        let text = serde_json::to_string(&with).unwrap();
        assert!(text.contains("client summary"));
        assert!(text.find("client summary") < text.find("TASK CONTEXT"));
        // A compaction the hooks recorded for a later history does not apply.
        let other = with_task_context(view.clone(), &rows, &[compaction(3, "s", "TASK CONTEXT")]);
        assert_eq!(other, view);
    }
}
