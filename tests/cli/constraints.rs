//! Issue 3's "Early negative constraints survive": the tenant fixture's first
//! real ask says `Do not touch the tenant_registry table`; after enough tool
//! output to fold the history twice or more, the final view still carries
//! that sentence verbatim, inside the `## Task Context` summary.

use compactor::model::Block;
use serde_json::Value;

use crate::util::{
    FOLD, TENANT, TENANT_CALLS, TENANT_TASK, TIGHT, TestEnv, args, valid_view, view_texts,
};

const CONSTRAINT: &str = "Do not touch the tenant_registry table";
const FLOORS: [&str; 2] = ["floor", "breakthrough_floor"];

/// The calls of `replay --json` whose tiers include a floor tier.
fn floor_calls(replay: &Value) -> Vec<u64> {
    replay["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["tiers_fired"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| FLOORS.contains(&t.as_str().unwrap()))
        })
        .map(|s| s["call"].as_u64().unwrap())
        .collect()
}

/// Replay then compact the fixture under `budget`; check the constraint in
/// the final view, and return the calls that folded.
fn constraint_survives(budget: [&str; 4]) -> Vec<u64> {
    let env = TestEnv::new();
    let file = env.fixture(TENANT);
    let raw = std::fs::read_to_string(env.work().join(&file)).unwrap();
    assert!(raw.contains(CONSTRAINT), "the fixture lost its constraint");

    let run = env.run(&args(&["replay", &file, "--json"], &budget));
    run.success();
    let replay = run.json();
    assert_eq!(
        replay["calls"].as_array().unwrap().len() as u64,
        TENANT_CALLS
    );
    let folds = floor_calls(&replay);
    assert!(
        folds.len() >= 2,
        "{budget:?}: the floor must fire at least twice, fired at calls {folds:?}"
    );

    let run = env.run(&args(
        &[
            "compact",
            "--task",
            TENANT_TASK,
            "-o",
            "final.json",
            "--json",
        ],
        &budget,
    ));
    run.success();
    let report = run.json();
    let (_, view) = valid_view(&env.work().join("final.json"));

    // The head of the view is the summary, and it carries the sentence in
    // `## Constraints` (and the ask verbatim in `## Requests`).
    let Some(Block::Text { text: head }) = view.messages[0].content.first() else {
        panic!(
            "the view does not start with a text block: {:?}",
            view.messages[0]
        );
    };
    assert!(head.starts_with("## Task Context\n"), "{head}");
    assert!(report["restored"]["summary"].is_string(), "{report}");
    let section = |name: &str| -> String {
        let start = head
            .find(&format!("\n## {name}\n"))
            .unwrap_or_else(|| panic!("no ## {name} in\n{head}"));
        let rest = &head[start + 1..];
        let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
        rest[..end].to_string()
    };
    assert!(section("Constraints").contains(CONSTRAINT), "{head}");
    assert!(section("Requests").contains(CONSTRAINT), "{head}");
    // Not there only because the raw ask is still in the tail: the summary
    // is the sole place the sentence appears in the view.
    let holders: Vec<String> = view_texts(&view)
        .into_iter()
        .filter(|t| t.contains(CONSTRAINT))
        .collect();
    assert_eq!(holders.len(), 1, "{holders:#?}");
    assert!(holders[0].starts_with("## Task Context"), "{holders:#?}");
    folds
}

#[test]
fn the_constraint_survives_repeated_folds_under_the_fold_budget() {
    // --window 32000 --output-reserved 4000 (trigger 18200): the 25 calls of
    // ~2,000-token outputs fold at calls 12, 17, 18, 21, 22 and 24.
    let folds = constraint_survives(FOLD);
    assert!(folds.len() >= 5, "{folds:?}");
}

#[test]
fn the_constraint_survives_a_fold_at_every_call_under_the_tight_budget() {
    // --window 6000 --output-reserved 1000 (trigger 3250): the protected
    // window alone exceeds trigger, so ④ breakthrough_floor folds at almost
    // every call, each summary re-emitting the previous one's lines.
    let folds = constraint_survives(TIGHT);
    assert!(folds.len() as u64 >= TENANT_CALLS - 2, "{folds:?}");
}
