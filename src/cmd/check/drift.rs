//! Drift reporting: where two runs first differ, and the per-fixture report.

use super::*;
use crate::cmd::words::plural;

/// Where two series of views first differ: call, message and byte.
pub(super) fn first_drift(a: &[Vec<u8>], b: &[Vec<u8>], la: &str, lb: &str) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!(
            "{la} has {}, {lb} has {}",
            plural(a.len(), "call"),
            b.len()
        ));
    }
    let k = a.iter().zip(b).position(|(x, y)| x != y)?;
    Some(format!(
        "call {}: {la} and {lb} differ {}",
        k + 1,
        where_differs(&a[k], &b[k])
    ))
}

pub(super) fn where_differs(x: &[u8], y: &[u8]) -> String {
    let byte = x
        .iter()
        .zip(y)
        .position(|(p, q)| p != q)
        .unwrap_or(x.len().min(y.len()));
    let part = match (View::from_json(x), View::from_json(y)) {
        (Ok(vx), Ok(vy)) => {
            let m = (0..vx.messages.len().max(vy.messages.len()))
                .find(|&i| vx.messages.get(i) != vy.messages.get(i))
                .unwrap_or(0);
            let p = match (vx.messages.get(m), vy.messages.get(m)) {
                (Some(a), Some(b)) => (0..a.content.len().max(b.content.len()))
                    .find(|&j| a.content.get(j) != b.content.get(j))
                    .unwrap_or(0),
                _ => 0,
            };
            format!(" (message {m}, part {p})")
        }
        _ => String::new(),
    };
    format!("at byte {byte}{part}")
}

pub(super) fn print_fixture(ui: &mut Ui, r: &FixtureResult, seed: u64) -> Result<()> {
    writeln!(
        ui.out,
        "{} (task {})",
        paint(ui.color, style::BOLD, &r.fixture),
        r.task
    )?;
    for b in &r.budgets {
        let tiers = if b.tiers_seen.is_empty() {
            "no tiers".to_string()
        } else {
            Tier::list(&b.tiers_seen)
        };
        let kill = match (b.interrupted_at, b.child_killed, b.resumed_from) {
            (Some(k), Some(true), Some(r)) => {
                format!(", aborted after call {k} (seed {seed}), resumed at call {r}")
            }
            (Some(k), _, Some(r)) => {
                format!(", child did not abort after call {k} (seed {seed}), resumed at call {r}")
            }
            _ => String::new(),
        };
        match &b.drift {
            None => writeln!(
                ui.out,
                "  {} {:<8} {} identical: fresh = reopened = resumed{kill} · {tiers}",
                paint(ui.color, style::GREEN, "ok  "),
                b.budget,
                plural(b.calls, "call")
            )?,
            Some(d) => writeln!(
                ui.out,
                "  {} {:<8} {d}",
                paint(ui.color, style::RED, "DRIFT"),
                b.budget
            )?,
        }
    }
    Ok(())
}
