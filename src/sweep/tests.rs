use std::convert::Infallible;

use proptest::prelude::*;

use super::grid::{Lists, trim_specs};
use super::*;
use crate::engine::budget::BudgetError;
use crate::engine::estimate::CharsPerToken;
use crate::model::Message;
use crate::probe::{Probe, extract};
use crate::session::tests::Record as Transcript;
use crate::store::Store;

/// A row of `kind` for session `s` costing `cost`, with its worst call
/// keeping `crit` and `kept` per mille, `over` calls over the window.
fn row(kind: RowKind, s: &str, cost: u64, (crit, kept): (u64, u64), over: u32) -> Row {
    let policy = (kind != RowKind::Recorded).then(|| PolicyFields {
        window: 32_000 + cost,
        window_from: Origin::Flag,
        output_reserved: 4_000,
        output_reserved_from: Origin::Flag,
        trigger_ratio: Some("0.65".into()),
        stop_ratio: Some("0.5".into()),
        protect_recent_steps: Some(5),
        summary_budget: Some(2_500),
        summary_budget_from: Some(Origin::Flag),
        summarizer: Some("extractive".into()),
    });
    Row {
        kind,
        session: s.into(),
        model: None,
        policy,
        calls: 10,
        over_window_calls: (kind != RowKind::Recorded).then_some(over),
        breakthrough_calls: None,
        folds: Some(0),
        tiers: None,
        trimmed_calls: None,
        prompt_tokens: cost * 2,
        cache_read_tokens: cost,
        cache_write_tokens: cost,
        output_tokens: 0,
        cost_micros: if kind == RowKind::Recorded {
            cost * 3
        } else {
            cost
        },
        peak_tokens: 0,
        critical_lost: 0,
        worst: Some(WorstCall {
            call: 1,
            critical_lost: u64::from(crit < 1000),
            critical_kept_permille: crit,
            kept_permille: kept,
        }),
        basis: "estimate".into(),
        usage_calls: None,
        estimated: (kind == RowKind::Recorded).then_some(Estimated {
            cost_micros: cost,
            ..Estimated::default()
        }),
        prefix_breaks: 0,
    }
}

fn policy(s: &str, cost: u64, fid: (u64, u64), over: u32) -> Row {
    row(RowKind::Policy, s, cost, fid, over)
}

const FULL: (u64, u64) = (1000, 1000);

#[test]
fn the_recommendation_is_the_cheapest_policy_that_keeps_every_critical_probe_within_the_window() {
    let rows = [
        policy("a", 50, (900, 900), 0),
        policy("a", 60, FULL, 3),
        policy("a", 80, FULL, 0),
        policy("a", 80, (1000, 700), 0),
        row(RowKind::Trim, "a", 10, FULL, 0),
        row(RowKind::Recorded, "a", 100, FULL, 0),
    ];
    let refs: Vec<&Row> = rows.iter().collect();
    let r = recommend(&refs).unwrap();
    // Not the cheaper ones that lose a critical probe or go over the window,
    // nor the trim; the first of the two at 80.
    assert_eq!(r.row, 2);
    assert_eq!(r.cost_micros, 80);
    // Against the recording on the policies' basis (100), not what it paid (300).
    assert_eq!(r.recorded_micros, Some(100));
    assert_eq!(
        r.saving,
        Some(Saving {
            saving_micros: 20,
            saving_permille: Some(200)
        })
    );
    let none: Vec<&Row> = refs[..2].to_vec();
    assert_eq!(recommend(&none), None);
}

#[test]
fn a_saving_is_signed_and_says_so() {
    assert_eq!(
        Saving::of(120, 100),
        Saving {
            saving_micros: -20,
            saving_permille: Some(-200)
        }
    );
    assert_eq!(Saving::of(5, 0).saving_permille, None);
    assert_eq!(signed_percent(256), "25.6%");
    assert_eq!(signed_percent(-31), "-3.1%");
    assert_eq!(signed_percent(0), "0.0%");
    assert_eq!(signed_dollars(-320_000), "-$0.3200");
    assert_eq!(signed_dollars(1_100_000), "$1.10");
}

proptest! {
    /// Every policy on the front is beaten by no other on both cost and
    /// fidelity, and every other policy within the window is beaten by one
    /// on the front; a policy over the window is never on it.
    #[test]
    fn the_pareto_front_is_exactly_the_undominated_policies(
        points in prop::collection::vec((0u64..20, 0u64..5, 0u32..3), 1..12)
    ) {
        let rows: Vec<Row> = points
            .iter()
            .map(|&(cost, kept, over)| policy("s", cost, (1000, kept * 250), u32::from(over == 0)))
            .collect();
        let refs: Vec<&Row> = rows.iter().collect();
        let front = pareto_front(&refs);
        let beats = |a: &Row, b: &Row| {
            let (ka, kb) = (a.worst.unwrap().kept_permille, b.worst.unwrap().kept_permille);
            a.cost_micros <= b.cost_micros && ka >= kb && (a.cost_micros < b.cost_micros || ka > kb)
        };
        for (i, r) in rows.iter().enumerate() {
            let feasible = r.over_window_calls == Some(0);
            let beaten = rows.iter().any(|o| o.over_window_calls == Some(0) && beats(o, r));
            prop_assert_eq!(front.contains(&i), feasible && !beaten, "{}", i);
            if feasible && beaten {
                prop_assert!(front.iter().any(|&f| beats(&rows[f], r)));
            }
        }
    }

    /// The totals are the sums of the rows, whichever order the sessions
    /// come in, and the recommendation over sessions is a policy that is
    /// fit in every one of them.
    #[test]
    fn totals_sum_the_rows_in_any_session_order(
        costs in prop::collection::vec(prop::collection::vec((1u64..50, 0u64..2), 3), 1..4),
        flip in any::<bool>(),
    ) {
        let mut rows = Vec::new();
        for (s, per) in costs.iter().enumerate() {
            let name = format!("s{s}");
            for (p, &(cost, lost)) in per.iter().enumerate() {
                let mut r = policy(&name, cost, (1000 - lost * 500, 1000), 0);
                // The same policy in every session, as asked for.
                r.policy.as_mut().unwrap().window = 32_000 + p as u64;
                rows.push(r);
            }
            rows.push(row(RowKind::Recorded, &name, 40, FULL, 0));
        }
        let mut shuffled = rows.clone();
        if flip {
            shuffled.reverse();
        }
        let a = summarize(&rows);
        let b = summarize(&shuffled);
        prop_assert_eq!(a.policies.len(), 3);
        for p in 0..3 {
            let total: u64 = costs.iter().map(|per| per[p].0).sum();
            let losing = costs.iter().filter(|per| per[p].1 == 1).count() as u32;
            let ga = &a.policies[p];
            let gb = b.policies.iter().find(|g| g.policy == ga.policy).unwrap();
            prop_assert_eq!(ga.cost_micros, total);
            prop_assert_eq!(gb.cost_micros, total);
            prop_assert_eq!(ga.sessions_losing_critical, losing);
        }
        // The recordings keep every probe: they are a candidate, so the
        // recommendation never costs more than they do.
        let recorded = 40 * costs.len() as u64;
        let r = a.recommendation.as_ref().expect("the recordings are fit");
        prop_assert_eq!(r.recorded_micros, Some(recorded));
        prop_assert!(r.cost_micros <= recorded);
        let fit_cheapest = a
            .policies
            .iter()
            .filter(|g| g.sessions_losing_critical == 0)
            .map(|g| g.cost_micros)
            .min();
        match r.policy {
            Some(i) => {
                let g = &a.policies[i];
                prop_assert_eq!(g.sessions_losing_critical, 0);
                prop_assert_eq!(Some(g.cost_micros), fit_cheapest);
                prop_assert!(g.cost_micros < recorded, "a tie keeps the recordings");
            }
            None => prop_assert!(fit_cheapest.is_none_or(|c| c >= recorded)),
        }
    }
}

#[test]
fn a_policy_missing_from_a_session_is_not_recommended_for_all() {
    let mut only_a = policy("a", 1, FULL, 0);
    only_a.policy.as_mut().unwrap().window = 1;
    let rows = vec![only_a, policy("a", 5, FULL, 0), policy("b", 5, FULL, 0)];
    let s = summarize(&rows);
    let r = s.recommendation.unwrap();
    assert_eq!(s.policies[r.policy.unwrap()].sessions, 2);
    assert_eq!(r.cost_micros, 10);
}

/// Issue 34: keeping what the client does is a candidate. No policy is
/// recommended that costs more than the client's own sends: only a policy
/// fit to run (no critical probe lost, no call over the window) that costs
/// less is; on a tie the recording is kept. A recording that lost a
/// critical probe is still doing nothing: kept when it is cheapest, with
/// the cheapest fit policy named beside it (which keeps every probe for
/// more).
#[test]
fn the_recommendation_never_costs_more_than_the_clients_own_sends() {
    let recorded = |cost, fid| row(RowKind::Recorded, "a", cost, fid, 0);
    let pick = |rows: &[Row]| {
        let refs: Vec<&Row> = rows.iter().collect();
        recommend(&refs)
    };
    // Every fit policy dearer than the recording: keep what the client does.
    let rows = [
        policy("a", 120, FULL, 0),
        policy("a", 90, (900, 900), 0),
        row(RowKind::Mask, "a", 50, FULL, 0),
        row(RowKind::Trim, "a", 40, FULL, 0),
        recorded(100, FULL),
    ];
    let r = pick(&rows).unwrap();
    assert!(r.keeps_recorded);
    assert_eq!((r.row, r.cost_micros, r.dearer_fit), (4, 100, None));
    assert_eq!(r.saving.unwrap().saving_micros, 0);
    // A tie keeps the recording too.
    let rows = [policy("a", 100, FULL, 0), recorded(100, FULL)];
    assert!(pick(&rows).unwrap().keeps_recorded);
    // A cheaper fit policy is recommended.
    let rows = [policy("a", 99, FULL, 0), recorded(100, FULL)];
    let r = pick(&rows).unwrap();
    assert_eq!((r.row, r.keeps_recorded), (0, false));
    // The client lost a critical probe: still kept when cheapest, the fit
    // policy named beside it; a cheaper fit policy is recommended.
    let rows = [
        policy("a", 130, FULL, 0),
        policy("a", 120, FULL, 0),
        recorded(100, (500, 800)),
    ];
    let r = pick(&rows).unwrap();
    assert_eq!((r.row, r.keeps_recorded, r.dearer_fit), (2, true, Some(1)));
    let rows = [policy("a", 80, FULL, 0), recorded(100, (500, 800))];
    assert_eq!(pick(&rows).unwrap().row, 0);
    // No fit policy and no recording: nothing to recommend.
    let rows = [
        policy("a", 120, FULL, 2),
        row(RowKind::Trim, "a", 1, FULL, 0),
    ];
    assert_eq!(pick(&rows), None);

    // The same rule over sessions: the recordings in total, when every
    // session has one.
    let total = |rows: &[Row]| summarize(rows).recommendation.unwrap();
    // One policy, as asked for, in both sessions.
    let same = |s: &str, cost| {
        let mut p = policy(s, cost, FULL, 0);
        p.policy.as_mut().unwrap().window = 64_000;
        p
    };
    let mut rows = vec![
        same("a", 30),
        recorded(50, FULL),
        same("b", 80),
        row(RowKind::Recorded, "b", 50, FULL, 0),
    ];
    // 110 against 100: the recordings.
    let r = total(&rows);
    assert_eq!((r.policy, r.cost_micros, r.dearer_fit), (None, 100, None));
    rows[2].cost_micros = 60;
    let r = total(&rows);
    assert_eq!((r.policy, r.cost_micros), (Some(0), 90));
    // One recording lost a critical probe: the recordings still, the fit
    // policy named beside them.
    rows[2].cost_micros = 80;
    rows[3].worst.as_mut().unwrap().critical_lost = 1;
    let r = total(&rows);
    assert_eq!(
        (r.policy, r.cost_micros, r.dearer_fit),
        (None, 100, Some(0))
    );
    // A session without a recording: the fit policy alone.
    rows.pop();
    let r = total(&rows);
    assert_eq!((r.policy, r.recorded_micros), (Some(0), None));
}

proptest! {
    /// Whatever the rows, a session's recommendation is a policy fit to
    /// run or the recording, and never costs more than the recording.
    #[test]
    fn no_recommendation_is_dearer_than_the_recording(
        policies in prop::collection::vec((1u64..200, any::<bool>(), 0u32..2), 0..6),
        rec in (1u64..200, any::<bool>()),
    ) {
        let mut rows: Vec<Row> = policies
            .iter()
            .map(|&(cost, lost, over)| policy("a", cost, if lost { (500, 500) } else { FULL }, over))
            .collect();
        rows.push(row(RowKind::Recorded, "a", rec.0, if rec.1 { (500, 500) } else { FULL }, 0));
        let refs: Vec<&Row> = rows.iter().collect();
        let r = recommend(&refs).expect("the recording is a candidate");
        let chosen = refs[r.row];
        prop_assert!(chosen.eligible() || chosen.kind == RowKind::Recorded);
        prop_assert!(r.cost_micros <= rec.0);
        prop_assert_eq!(r.saving.unwrap().saving_micros >= 0, true);
        if let Some(i) = r.dearer_fit {
            prop_assert!(r.keeps_recorded && rec.1 && refs[i].eligible() && refs[i].cost_micros >= rec.0);
        }
    }
}

fn lists(windows: &[u64], triggers: &[&str], stops: &[&str]) -> Lists {
    Lists {
        windows: windows.to_vec(),
        reserves: Vec::new(),
        triggers: triggers.iter().map(|t| t.parse().unwrap()).collect(),
        stops: stops.iter().map(|t| t.parse().unwrap()).collect(),
        protects: vec![5],
        summary_budget: Some(2_500),
        summarizers: vec!["extractive".into()],
    }
}

#[test]
fn the_grid_is_every_combination_window_first() {
    let l = lists(&[32_000, 64_000], &["0.65", "0.8"], &["0.5"]);
    let specs = l.specs();
    assert_eq!(specs.len(), 4);
    let got: Vec<(Option<u64>, String)> = specs
        .iter()
        .map(|s| (s.window, s.trigger_ratio.to_string()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(32_000), "0.65".into()),
            (Some(32_000), "0.8".into()),
            (Some(64_000), "0.65".into()),
            (Some(64_000), "0.8".into())
        ]
    );
    // No window: each session's own, with its default reserve.
    let own = lists(&[], &["0.65"], &["0.5"]).specs();
    assert_eq!(own.len(), 1);
    let b = own[0].budget(258_400);
    assert_eq!((b.window, b.output_reserved), (258_400, 20_000));
    assert_eq!(trim_specs(&specs).len(), 2);
}

#[test]
fn an_invalid_combination_is_named_with_why() {
    let l = lists(&[32_000], &["0.5", "0.65"], &["0.5"]);
    let bad = l.invalid();
    assert_eq!(bad.len(), 1);
    assert!(matches!(
        bad[0].error,
        BudgetError::StopNotBelowTrigger { .. }
    ));
    assert_eq!(
        l.words(&bad[0].spec),
        "window 32000 · default reserve · trigger 0.5 · stop 0.5 · protect 5 · extractive"
    );
    // A reserve the window cannot hold, when both are given.
    let mut l = lists(&[4_000], &["0.65"], &["0.5"]);
    l.reserves = vec![4_000];
    assert!(matches!(
        l.invalid()[0].error,
        BudgetError::WindowTooSmall { .. }
    ));
    // Without a window only the ratios are checked before the session is known.
    let mut l = lists(&[], &["0.65"], &["0.5"]);
    l.reserves = vec![900_000];
    assert!(l.invalid().is_empty());
}

#[test]
fn a_label_names_what_varies_and_the_heading_the_rest() {
    let a = policy("s", 1, FULL, 0);
    let mut b = policy("s", 2, FULL, 0);
    b.policy.as_mut().unwrap().trigger_ratio = Some("0.8".into());
    let keys: Vec<PolicyKey> = [&a, &b]
        .iter()
        .map(|r| r.policy.as_ref().unwrap().key())
        .collect();
    let v = Varying::of(&keys);
    assert_eq!(
        label(a.policy.as_ref().unwrap(), Some(&v)),
        "window 32001 · trigger 0.65"
    );
    assert_eq!(
        shared_label(&keys[0], &v),
        "reserve 4000 · stop 0.5 · protect 5 · summary 2500 · extractive summarizer"
    );
}

/// Reads a record's rows from memory, as the reference runs read them.
pub(super) fn from_memory(
    rows: &[Message],
    range: Range<usize>,
    f: &mut dyn FnMut(&Message),
) -> Result<(), Infallible> {
    rows[range].iter().for_each(f);
    Ok(())
}

/// A session's record as the reference runs read it.
pub(super) fn record_of(t: &Transcript) -> (Vec<crate::model::Message>, Vec<CallInfo>) {
    let mut store = Store::open_memory().unwrap();
    let index = t.store_into(&mut store);
    let calls = call_infos(&index, crate::session::cost::CacheTtl::default());
    (index.all_rows().unwrap(), calls)
}

#[test]
fn trimming_drops_the_oldest_history_to_fit_and_loses_the_ask() {
    let t = Transcript::of_tool_steps(
        "Port the parser to Rust. Never touch the migrations directory.",
        "Read",
        30,
        400,
    );
    let (rows, calls) = record_of(&t);
    let est = CharsPerToken::default();
    let session = SessionInfo {
        task: "t".into(),
        model: None,
    };
    let record = ReferenceRecord {
        session: &session,
        calls: calls.clone(),
        overhead: 1_000,
        prices: Prices::default(),
        estimator: &est,
    };
    let probes = extract(&rows);
    let trim = |w: u64, probes: Vec<Probe>| {
        trim::trim_row(
            &record,
            super::lean_tests::trim_policy(w),
            w,
            probes,
            &mut |r, f| from_memory(&rows, r, f),
        )
        .unwrap()
    };
    let tight = trim(4_000, probes.clone());
    assert_eq!(tight.calls, 30);
    assert!(tight.peak_tokens <= 4_000, "{tight:?}");
    assert_eq!(tight.over_window_calls, Some(0));
    assert!(tight.trimmed_calls.unwrap() > 20, "{tight:?}");
    // The ask went first: its probes are lost.
    assert!(tight.critical_lost >= 2, "{tight:?}");
    assert!(tight.loses_critical());
    // Room for everything: nothing is dropped, nothing lost, and the history
    // only grows, so every call re-reads the one before.
    let roomy = trim(1_000_000, probes.clone());
    assert_eq!(roomy.trimmed_calls, Some(0));
    assert_eq!(roomy.critical_lost, 0);
    assert!(roomy.prompt_tokens > tight.prompt_tokens);
    assert!(roomy.cache_read_tokens > roomy.cache_write_tokens);
    // A window the last step alone does not fit: over the window.
    let tiny = trim(1_200, probes);
    assert!(tiny.over_window_calls.unwrap() > 0, "{tiny:?}");
}

#[test]
fn the_recorded_row_prices_the_recorded_usage() {
    let mut t = Transcript::new();
    t.usage = true;
    t.ask("Fix the parser.");
    t.tool_steps("Read", 6, 300);
    let (rows, calls) = record_of(&t);
    let est = CharsPerToken::default();
    let session = SessionInfo {
        task: "t".into(),
        model: None,
    };
    let prices = Prices::default();
    let record = ReferenceRecord {
        session: &session,
        calls: calls.clone(),
        overhead: 1_000,
        prices,
        estimator: &est,
    };
    let r = recorded::recorded_row(&record, &[], extract(&rows), &mut |r, f| {
        from_memory(&rows, r, f)
    })
    .unwrap();
    let usage: Vec<Usage> = calls.iter().filter_map(|c| c.usage).collect();
    assert_eq!(usage.len(), 6);
    assert_eq!(r.usage_calls, Some(6));
    assert_eq!(
        r.prompt_tokens,
        usage.iter().map(|u| u.prompt_tokens()).sum::<u64>()
    );
    let cost: u64 = usage
        .iter()
        .map(|u| {
            Prices::cost(prices.input, u.input_tokens)
                + Prices::cost(prices.cache_read, u.cache_read_input_tokens)
                + Prices::cost(prices.cache_write, u.cache_creation_input_tokens)
                + Prices::cost(prices.output, u.output_tokens)
        })
        .sum();
    assert_eq!(r.cost_micros, cost);
    assert_eq!(r.folds, Some(0));
    assert_eq!(r.critical_lost, 0);
    // Its views priced as the policies are: an append-only history re-read.
    let e = r.estimated.unwrap();
    assert!(e.cache_read_tokens > e.cache_write_tokens, "{e:?}");
}

#[test]
fn point_labels_stay_above_the_cost_axis_and_a_shared_trim_mark_names_each_window() {
    let mut wide = row(RowKind::Trim, "s", 500, (0, 0), 3);
    wide.policy.as_mut().unwrap().window = 200_000;
    let rows = [
        policy("s", 100, FULL, 0),
        row(RowKind::Trim, "s", 500, (0, 0), 3),
        wide,
        row(RowKind::Trim, "s", 900, (0, 0), 3),
        row(RowKind::Recorded, "s", 300, FULL, 0),
    ];
    let page = html::render(&summarize(&rows), "test");
    let labels: Vec<(i64, &str)> = page
        .split("<text class=\"plabel ")
        .skip(1)
        .map(|t| {
            let y = t.split("y=\"").nth(1).unwrap();
            let y: i64 = y[..y.find('"').unwrap()].parse().unwrap();
            let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            (y, text)
        })
        .collect();
    assert!(
        labels.iter().any(|(_, t)| *t == "trim 32500, 200000"),
        "{labels:?}"
    );
    assert!(labels.iter().any(|(_, t)| *t == "trim 32900"), "{labels:?}");
    // The 0% line is at y 320, the cost labels under it.
    assert!(labels.iter().all(|(y, _)| *y < 320), "{labels:?}");
}
