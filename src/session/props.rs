//! Property tests over generated transcripts and budgets: determinism,
//! idempotence, legality, and the trigger guarantee.

use proptest::prelude::*;
use serde_json::json;

use super::tests::{Sim, file_text};
use crate::engine::budget::Budget;
use crate::engine::parts::PartState;
use crate::engine::toolrules::ToolRules;
use crate::engine::{Mode, Status};
use crate::model::decimal::Ratio;
use crate::model::{Block, Kind, Role};
use crate::view::validate;

/// The case count: `PROPTEST_CASES` (set by `fuzz/run`), else `default`.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Debug, Clone)]
pub(crate) enum Ev {
    Ask(String),
    Tool { tool: usize, tokens: usize },
    Reply(String),
    Interrupted,
}

const TOOLS: [&str; 5] = ["Read", "Grep", "Bash", "reflect", "Keep"];

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        1 => "[a-z ]{1,40}( do not touch prod)?".prop_map(Ev::Ask),
        6 => (0..TOOLS.len(), 0usize..2_600).prop_map(|(tool, tokens)| Ev::Tool { tool, tokens }),
        2 => "\\PC{1,60}".prop_map(Ev::Reply),
        1 => Just(Ev::Interrupted),
    ]
}

pub(crate) fn transcript() -> impl Strategy<Value = Vec<Ev>> {
    ("[a-z ]{1,30}", prop::collection::vec(ev(), 1..28)).prop_map(|(first, mut rest)| {
        rest.insert(0, Ev::Ask(first));
        rest
    })
}

pub(crate) fn budget() -> impl Strategy<Value = Budget> {
    (
        2_000u64..40_000,
        100u64..2_000,
        300_000u32..950_000,
        0u32..8,
    )
        .prop_flat_map(|(window, reserve, trigger, protect)| {
            (
                Just((window, reserve, trigger, protect)),
                100_000u32..trigger,
            )
                .prop_map(|((window, reserve, trigger, protect), stop)| Budget {
                    window,
                    output_reserved: reserve,
                    trigger_ratio: Ratio::from_ppm(trigger),
                    stop_ratio: Ratio::from_ppm(stop),
                    protect_recent_steps: protect,
                    summary_budget_tokens: 300,
                })
        })
}

pub(crate) fn build(events: &[Ev]) -> Sim {
    let rules = ToolRules::with_overrides(r#"{"rules":[{"tools":["Keep"],"rule":"keep"}]}"#)
        .expect("valid rules");
    let mut sim = Sim::with_rules(rules);
    // Half the transcripts carry recorded usage, half are cold starts.
    sim.usage = events.len().is_multiple_of(2);
    for e in events {
        match e {
            Ev::Ask(t) => sim.ask(t),
            Ev::Tool { tool, tokens } => sim.tool_step(TOOLS[*tool], &file_text(*tokens)),
            Ev::Reply(t) => sim.reply(t),
            Ev::Interrupted => sim.interrupted_call(),
        }
    }
    sim
}

fn calls(sim: &Sim) -> u32 {
    sim.messages()
        .iter()
        .filter(|m| m.kind == Kind::Generation)
        .map(|m| m.step)
        .max()
        .unwrap_or(0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(96), ..ProptestConfig::default() })]

    /// (a) same raw + same store + same budget ⇒ byte-identical views;
    /// (b) re-running a call restores the same view and mints nothing;
    /// (c) every view is legal; (d) over trigger only with a status that says so.
    #[test]
    fn replay_properties(events in transcript(), b in budget()) {
        let mut first = build(&events);
        let mut second = build(&events);
        let n = calls(&first) + 1;
        for k in 1..=n {
            let a = first.call(k, b);
            let again = first.call(k, b);
            let other = second.call(k, b);
            prop_assert_eq!(a.view.canonical_bytes(), other.view.canonical_bytes(), "call {} differs between runs", k);
            prop_assert_eq!(&a.report, &other.report);
            prop_assert_eq!(&a.view, &again.view, "call {}: a re-run changed the view", k);
            prop_assert!(again.new_entries.is_empty(), "call {}: a re-run minted {:?}", k, again.new_entries);
            let v = validate(&a.view);
            prop_assert!(v.is_empty(), "call {}: illegal view {:?}", k, v);
            let r = &a.report;
            prop_assert_eq!(r.status == Status::Ok, r.tokens_after <= r.trigger);
            if r.tokens_after > r.trigger && !r.gated {
                prop_assert!(matches!(r.status, Status::Breakthrough | Status::OverWindow), "call {}: {:?}", k, r.status);
                // The ladder was exhausted: no tool with a stored form is left raw.
                for p in &a.parts {
                    if let Some(id) = p.tool_id() && first.forms.contains_key(id) {
                        prop_assert!(p.state != PartState::Raw, "call {}: {} left raw over trigger", k, p.address);
                    }
                }
            }
        }
    }

    /// Preflight never reduces and never mints.
    #[test]
    fn preflight_mints_nothing(events in transcript(), b in budget()) {
        let mut sim = build(&events);
        let n = calls(&sim) + 1;
        for k in 1..=n {
            sim.call(k, b);
            let pre = sim.peek(k, b, Mode::Preflight);
            prop_assert!(pre.new_entries.is_empty());
            prop_assert!(pre.report.tiers_fired.is_empty());
            prop_assert!(validate(&pre.view).is_empty());
        }
    }
}

impl Sim {
    /// A generation whose tool call never got a result.
    pub(crate) fn interrupted_call(&mut self) {
        let id = format!("toolu_int_{}", self.messages().len());
        self.push_generation(vec![Block::ToolUse {
            id,
            name: "Bash".into(),
            input: json!({"command": "sleep 600"}),
        }]);
        self.push_row(
            Role::User,
            Kind::Interrupt,
            vec![Block::Text {
                text: "[Request interrupted by user for tool use]".into(),
            }],
        );
    }
}
