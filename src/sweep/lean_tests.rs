//! The lean references held to the whole-record evaluation they replace:
//! the recorded view rebuilt from the record at every call, split against
//! the whole view before and scored whole, and the mask's whole history
//! masked and projected at every call. (The trim reference is its own
//! whole-record evaluation: it holds the trimmed history, as an oracle of
//! it would.) On generated records with the client's own compactions (summary
//! and boundary rows, summaries on either side or hidden), Task Contexts
//! the hooks recorded (or not, or for another history), tool errors,
//! written files, pointers that can overlap and escape sequences.

use proptest::prelude::*;
use serde_json::json;

use super::append::AppendScorer;
use super::recorded::{Change, RecordedUsage, SentView, recorded_row};
use super::recorded::{Span, shared_with, span_blocks};
use super::tests::from_memory;
use super::trim::WholeViews;
use super::*;
use crate::engine::estimate::CharsPerToken;
use crate::engine::parts::PartsBuilder;
use crate::engine::projection::project;
use crate::hooks::compare::sent_view;
use crate::model::{Block, Kind, Message, Role, ToolContent};
use crate::probe::{Probe, Scorer, evaluate, extract, view_text};
use crate::session::cost::CacheSplitter;
use crate::store::ClientCompaction;
use crate::view::View;

/// The recorded row as the whole-record evaluation makes it.
pub(crate) fn oracle_recorded(
    record: &ReferenceRecord<'_>,
    rows: &[Message],
    compactions: &[ClientCompaction],
    probes: Vec<Probe>,
) -> Row {
    let p = &record.prices;
    let mut scorer = Scorer::new(probes);
    let mut splitter = CacheSplitter::default();
    let mut estimated = Totals::default();
    let mut tally = CallTally::default();
    let mut prev: Option<View> = None;
    let mut usage = RecordedUsage::default();
    let mut compacted = 0u32;
    for (i, call) in record.calls.iter().enumerate() {
        let start = match i {
            0 => None,
            _ => Some(record.calls[i - 1].history_end),
        };
        if let Some(from) = start
            && rows[from..call.history_end]
                .iter()
                .any(|m| matches!(m.kind, Kind::CompactSummary | Kind::CompactBoundary))
        {
            compacted += 1;
        }
        if let Some(u) = call.usage {
            usage.add(&u, p);
        }
        let view = sent_view(&rows[..call.history_end], compactions);
        let (r, w) = splitter.split(prev.as_ref(), &view, record.overhead, record.estimator);
        estimated.prefix_breaks += u32::from(splitter.broke());
        record.add_call(&mut estimated, i, r, w);
        let e = scorer.evaluate(&view, call.history_end);
        let tokens = call.usage.map_or(0, |u| u.prompt_tokens());
        tally.add(i as u32 + 1, tokens, Status::Ok, &[], &e);
        prev = Some(view);
    }
    usage.row(record, compacted, &tally, &estimated)
}

/// The mask row as the whole-record evaluation makes it: at every call the
/// whole history, every output but the last `keep` masked (once masked,
/// for good), projected whole, split against the whole view before and
/// scored whole.
fn oracle_mask(
    record: &ReferenceRecord<'_>,
    rows: &[Message],
    (policy, w_eff, keep): (PolicyFields, u64, usize),
    probes: Vec<Probe>,
) -> Row {
    let est = record.estimator;
    let mut builder = PartsBuilder::default();
    let mut fed = 0;
    let mut views = WholeViews::new(probes);
    let mut masked_calls = 0;
    for (i, call) in record.calls.iter().enumerate() {
        for m in &rows[fed..call.history_end] {
            builder.push(m, est);
        }
        fed = call.history_end;
        masked_calls += u32::from(super::mask::mask_outputs(&mut builder, keep, est));
        let (view, _) = project(builder.parts());
        let tokens = record.overhead
            + view
                .messages
                .iter()
                .flat_map(|m| &m.content)
                .map(|b| crate::engine::estimate::block_tokens(est, b))
                .sum::<u64>();
        views.call(record, i, view, tokens, window_status(tokens, w_eff));
    }
    views.row(RowKind::Mask, record, policy, masked_calls)
}

/// Texts the generated rows are made of: rules, decisions, closing
/// sentences, paths, pointers (some of them a border of themselves) and
/// escape sequences, some left open.
const WORDS: &[&str] = &[
    "Fix the parser.",
    "Never touch the migrations directory.",
    "Always run the tests first.",
    "I will use the streaming reader.",
    "Done with the port.",
    "src/lib/a.rs",
    "tool:t1",
    "tool:tt",
    "error: file not found",
    "\u{1b}[31mred\u{1b}[0m",
    "\u{1b}]0;title",
    "\u{9b}1m",
    "  ",
    "\n\n",
    "x",
    "-y",
    "é",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(0..WORDS.len(), 0..5)
        .prop_map(|ws| ws.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" "))
}

/// One row of a generated record.
#[derive(Debug, Clone)]
enum Gen {
    Ask(String),
    Reply(String),
    /// A tool call (`Write` when the flag is set) and its result.
    Tool(u8, bool, String, bool),
    /// The client's summary, on the user side, the assistant's or hidden.
    Summary(u8, String),
    Boundary,
    Meta(String),
}

fn gen_row() -> impl Strategy<Value = Gen> {
    prop_oneof![
        3 => text().prop_map(Gen::Ask),
        3 => text().prop_map(Gen::Reply),
        4 => (0u8..4, any::<bool>(), text(), any::<bool>())
            .prop_map(|(id, write, out, err)| Gen::Tool(id, write, out, err)),
        1 => (0u8..3, text()).prop_map(|(r, t)| Gen::Summary(r, t)),
        1 => Just(Gen::Boundary),
        1 => text().prop_map(Gen::Meta),
    ]
}

fn rows_of(gens: &[Gen]) -> Vec<Message> {
    let mut rows = Vec::new();
    let mut line = 0;
    let mut generation = 0;
    for g in gens {
        line += 1;
        let t = |s: &str| vec![Block::Text { text: s.into() }];
        match g {
            Gen::Ask(s) => rows.push(Message::new(Role::User, Kind::Ask, t(s), line)),
            Gen::Reply(s) => {
                generation += 1;
                let mut m = Message::new(Role::Assistant, Kind::Generation, t(s), line);
                m.gen_id = Some(format!("g{generation}"));
                rows.push(m);
            }
            Gen::Tool(id, write, out, err) => {
                generation += 1;
                let id = ["t1", "tt", "t", "at"][usize::from(*id)];
                let (name, input) = if *write {
                    (
                        "Write",
                        json!({"file_path": "/repo/src/lib/a.rs", "content": out}),
                    )
                } else {
                    ("Read", json!({"file_path": "/repo/README.md"}))
                };
                let mut m = Message::tool_call(id, name, input, line);
                m.gen_id = Some(format!("g{generation}"));
                rows.push(m);
                line += 1;
                rows.push(Message::tool_result(
                    id.into(),
                    ToolContent::Text(out.clone()),
                    *err,
                    line,
                ));
            }
            Gen::Summary(r, s) => {
                let role = [Role::User, Role::Assistant, Role::Meta][usize::from(*r)];
                rows.push(Message::new(role, Kind::CompactSummary, t(s), line));
            }
            Gen::Boundary => rows.push(Message::new(
                Role::Meta,
                Kind::CompactBoundary,
                t("compacted"),
                line,
            )),
            Gen::Meta(s) => rows.push(Message::new(Role::Meta, Kind::Context, t(s), line)),
        }
    }
    rows
}

/// A generated session: its rows, its calls (where each call's history
/// ends, some calls on the same history) and the compactions the hooks
/// recorded.
#[derive(Debug, Clone)]
struct Session {
    rows: Vec<Message>,
    calls: Vec<CallInfo>,
    compactions: Vec<ClientCompaction>,
}

fn session() -> impl Strategy<Value = Session> {
    prop::collection::vec(gen_row(), 1..40).prop_flat_map(|gens| {
        let rows = rows_of(&gens);
        let n = rows.len();
        (
            Just(rows),
            prop::collection::vec(
                (1..=n, any::<bool>(), 0u64..2_000, prop::bool::weighted(0.2)),
                1..24,
            ),
            prop::collection::vec((0..n + 3, prop::option::of(text())), 0..4),
        )
            .prop_map(|(rows, mut cuts, compactions)| {
                cuts.sort_by_key(|c| c.0);
                let calls = cuts
                    .iter()
                    .map(|&(end, used, tokens, expired)| CallInfo {
                        history_end: end,
                        cache_expired: expired,
                        usage: used.then_some(Usage {
                            input_tokens: tokens,
                            output_tokens: tokens / 3,
                            cache_read_input_tokens: tokens * 2,
                            cache_creation_input_tokens: tokens / 2,
                        }),
                    })
                    .collect();
                let compactions = compactions
                    .into_iter()
                    .map(|(history_rows, tc)| ClientCompaction {
                        task_id: "t".into(),
                        after_call: 1,
                        history_rows: history_rows as u64,
                        client: "claude-code".into(),
                        trigger: None,
                        client_summary: Some("summary".into()),
                        task_context: tc.map(|t| format!("## Task Context\n{t}")),
                        summarizer: None,
                    })
                    .collect();
                Session {
                    rows,
                    calls,
                    compactions,
                }
            })
    })
}

fn record<'a>(s: &Session, info: &'a SessionInfo, est: &'a CharsPerToken) -> ReferenceRecord<'a> {
    ReferenceRecord {
        session: info,
        calls: s.calls.clone(),
        overhead: 700,
        prices: Prices::default(),
        estimator: est,
    }
}

pub(crate) fn info() -> SessionInfo {
    SessionInfo {
        task: "t".into(),
        model: Some("claude-sonnet-4-5".into()),
    }
}

pub(crate) fn trim_policy(window: u64) -> PolicyFields {
    PolicyFields {
        window,
        window_from: Origin::Flag,
        output_reserved: 0,
        output_reserved_from: Origin::Flag,
        trigger_ratio: None,
        stop_ratio: None,
        protect_recent_steps: None,
        summary_budget: None,
        summary_budget_from: None,
        summarizer: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_lean_recorded_row_is_the_whole_record_evaluation(s in session()) {
        let (info, est) = (info(), CharsPerToken::default());
        let record = record(&s, &info, &est);
        let probes = extract(&s.rows);
        let want = oracle_recorded(&record, &s.rows, &s.compactions, probes.clone());
        let got = recorded_row(&record, &s.compactions, probes, &mut |r, f| from_memory(&s.rows, r, f)).unwrap();
        prop_assert_eq!(got, want);
    }

    /// The mask reference, which holds only the view's tail and scans the
    /// rest once, is the whole-history evaluation: the same costs, breaks,
    /// peaks and probes, whatever is kept (the literature's ten, or a few).
    #[test]
    fn the_lean_mask_row_is_the_whole_record_evaluation(
        s in session(),
        w_eff in prop::sample::select(vec![750u64, 900, 100_000]),
        keep in prop::sample::select(vec![0usize, 1, 2, 3, super::mask::KEEP_OUTPUTS]),
    ) {
        let (info, est) = (info(), CharsPerToken::default());
        let record = record(&s, &info, &est);
        let probes = extract(&s.rows);
        let args = (trim_policy(w_eff), w_eff, keep);
        let want = oracle_mask(&record, &s.rows, args.clone(), probes.clone());
        let got = super::mask::mask_row(&record, args, probes, &mut |r, f| from_memory(&s.rows, r, f)).unwrap();
        prop_assert_eq!(got, want);
    }

    /// The same on the driver's generated sessions, whose calls are
    /// generations as an importer numbers them (images, interrupted calls,
    /// the client's own compactions), so the view's start settles.
    #[test]
    fn the_lean_mask_row_is_the_whole_record_evaluation_on_imported_sessions(
        events in crate::session::props::transcript(),
        keep in prop::sample::select(vec![0usize, 2, super::mask::KEEP_OUTPUTS]),
    ) {
        let (rows, calls) = super::tests::record_of(&crate::session::props::build(&events));
        let (info, est) = (info(), CharsPerToken::default());
        let record = ReferenceRecord { session: &info, calls, overhead: 700, prices: Prices::default(), estimator: &est };
        let probes = extract(&rows);
        let args = (trim_policy(4_000), 4_000, keep);
        let want = oracle_mask(&record, &rows, args.clone(), probes.clone());
        let got = super::mask::mask_row(&record, args, probes, &mut |r, f| from_memory(&rows, r, f)).unwrap();
        prop_assert_eq!(got, want);
    }

    /// Call by call: the view kept is the view rebuilt, its change is what
    /// the views say, and its score is the whole view's.
    #[test]
    fn the_sent_view_grows_as_the_record_does(s in session()) {
        let probes = extract(&s.rows);
        let mut sent = SentView::new(&s.compactions);
        let mut scorer = AppendScorer::new(probes.clone());
        let mut fed = 0;
        let mut before = View { messages: Vec::new() };
        for call in &s.calls {
            for m in &s.rows[fed..call.history_end] {
                sent.feed(m);
            }
            fed = call.history_end;
            let change = sent.end_call();
            let want = sent_view(&s.rows[..call.history_end], &s.compactions);
            prop_assert_eq!(&sent.view, &want);
            match change {
                Change::Grew { from } => {
                    let blocks = |v: &View| -> Vec<(crate::view::ViewRole, Block)> {
                        v.messages
                            .iter()
                            .flat_map(|m| m.content.iter().map(move |b| (m.role, b.clone())))
                            .collect()
                    };
                    let (old, new) = (blocks(&before), blocks(&want));
                    prop_assert_eq!(from, old.len());
                    prop_assert_eq!(&new[..from], &old[..]);
                    scorer.extend(&sent.view, from);
                }
                Change::Rebuilt { before: b } => {
                    prop_assert_eq!(&b, &before);
                    scorer.rebuild(&sent.view);
                }
            }
            prop_assert_eq!(&scorer.text_for_test(), &view_text(&want));
            let e = evaluate(&probes, &want, call.history_end);
            let counts = ProbeCounts {
                judged: e.judged,
                kept: e.passed + e.recoverable,
                critical_judged: e.critical_judged,
                critical_lost: e.critical_lost,
            };
            prop_assert_eq!(scorer.score(call.history_end), counts);
            before = want;
        }
    }
}

#[test]
fn a_recorded_view_grows_between_compactions_and_starts_again_at_one() {
    let gens = vec![
        Gen::Ask("Fix the parser. Never touch the migrations directory.".into()),
        Gen::Tool(0, true, "written".into(), false),
        Gen::Summary(0, "The user wants the parser fixed.".into()),
        Gen::Ask("go on".into()),
        Gen::Reply("Done with the port.".into()),
    ];
    let rows = rows_of(&gens);
    let compactions = vec![ClientCompaction {
        task_id: "t".into(),
        after_call: 1,
        history_rows: 3,
        client: "claude-code".into(),
        trigger: None,
        client_summary: Some("s".into()),
        task_context: Some("## Task Context\nNever touch the migrations directory.".into()),
        summarizer: None,
    }];
    let mut sent = SentView::new(&compactions);
    let mut kinds = Vec::new();
    for (fed, end) in [(0, 2), (2, 3), (3, 5), (5, 6)] {
        rows[fed..end].iter().for_each(|m| sent.feed(m));
        kinds.push(match sent.end_call() {
            Change::Grew { from } => format!("grew from {from}"),
            Change::Rebuilt { .. } => "rebuilt".to_string(),
        });
        assert_eq!(sent.view, sent_view(&rows[..end], &compactions));
    }
    assert_eq!(
        kinds,
        ["grew from 0", "grew from 2", "rebuilt", "grew from 3"]
    );
    // The Task Context follows the summary, in its message.
    assert_eq!(sent.view.messages[0].content.len(), 2);
}

/// The blocks of a view, each with its message's role.
fn view_blocks(v: &View) -> Vec<(crate::view::ViewRole, Block)> {
    v.messages
        .iter()
        .flat_map(|m| m.content.iter().map(move |b| (m.role, b.clone())))
        .collect()
}

/// Leading blocks two whole views share, role and block alike.
fn whole_shared(a: &View, b: &View) -> usize {
    view_blocks(a)
        .iter()
        .zip(&view_blocks(b))
        .take_while(|(a, b)| a == b)
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Call by call: the view read again from the record is the view, and
    /// at a rebuild the blocks it shares with the view before, read again,
    /// are those the two whole views share.
    #[test]
    fn the_view_before_a_rebuild_is_read_again_from_the_record(s in session()) {
        let mut sent = SentView::new(&s.compactions);
        let mut read = |r, f: &mut dyn FnMut(&Message)| from_memory(&s.rows, r, f);
        let mut fed = 0;
        let mut last = Span { rows: 0..0, task_context: None };
        for call in &s.calls {
            for m in &s.rows[fed..call.history_end] {
                sent.feed(m);
            }
            fed = call.history_end;
            if let Change::Rebuilt { before } = sent.end_call() {
                let (shared, extends) = shared_with(&last, &sent.view, &mut read).unwrap();
                prop_assert_eq!(shared, whole_shared(&before, &sent.view));
                prop_assert_eq!(extends, shared == view_blocks(&before).len());
            }
            let mut again = Vec::new();
            span_blocks(sent.span(), &mut read, &mut |role, b| {
                again.push((role, b.clone()));
                true
            })
            .unwrap();
            prop_assert_eq!(again, view_blocks(&sent.view));
            last = sent.span().clone();
        }
    }
}

/// Two compactions with the same summary and Task Context: the view after
/// the second starts as the one before it did, the Task Context included,
/// and that much of it is read from the cache.
#[test]
fn a_rebuild_shares_the_summary_and_task_context_it_repeats() {
    let gens = vec![
        Gen::Ask("Fix the parser.".into()),
        Gen::Summary(0, "The user wants the parser fixed.".into()),
        Gen::Ask("go on".into()),
        Gen::Summary(0, "The user wants the parser fixed.".into()),
        Gen::Ask("go on".into()),
        Gen::Reply("Done with the port.".into()),
    ];
    let rows = rows_of(&gens);
    let compaction = |history_rows| ClientCompaction {
        task_id: "t".into(),
        after_call: 1,
        history_rows,
        client: "claude-code".into(),
        trigger: None,
        client_summary: Some("s".into()),
        task_context: Some("## Task Context\nNever touch the migrations directory.".into()),
        summarizer: None,
    };
    let compactions = vec![compaction(1), compaction(3)];
    let mut sent = SentView::new(&compactions);
    let mut read = |r, f: &mut dyn FnMut(&Message)| from_memory(&rows, r, f);
    let mut last = Span {
        rows: 0..0,
        task_context: None,
    };
    let mut shared = Vec::new();
    for (fed, end) in [(0, 1), (1, 3), (3, 6)] {
        rows[fed..end].iter().for_each(|m| sent.feed(m));
        if let Change::Rebuilt { .. } = sent.end_call() {
            shared.push(shared_with(&last, &sent.view, &mut read).unwrap().0);
        }
        last = sent.span().clone();
    }
    // The summary, its Task Context and `go on`.
    assert_eq!(shared, [0, 3]);
}
