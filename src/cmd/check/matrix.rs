//! The budget matrix every fixture is checked under, and the flags that name a budget on the command line.

use super::*;

/// The budget matrix: the default window, one that forces folding on
/// medium sessions, and one tight enough to reach the breakthrough tiers.
pub(super) fn matrix() -> Vec<(&'static str, Budget)> {
    let b = |window, reserved| Budget {
        window,
        output_reserved: reserved,
        ..Budget::default()
    };
    vec![
        ("default", Budget::default()),
        ("fold", b(32_000, 4_000)),
        ("tight", b(6_000, 1_000)),
    ]
}

pub(super) fn budget_flags(b: &Budget) -> Vec<String> {
    vec![
        format!("--window={}", b.window),
        format!("--output-reserved={}", b.output_reserved),
        format!("--trigger-ratio={}", b.trigger_ratio),
        format!("--stop-ratio={}", b.stop_ratio),
        format!("--protect-recent-steps={}", b.protect_recent_steps),
        format!("--summary-budget={}", b.summary_budget_tokens),
    ]
}
