use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::engine::restore::SHELL_TEXT;
use crate::model::ToolContent;
use crate::view::{ViewMessage, ViewRole};

fn msg(role: Role, kind: Kind, content: Vec<Block>, line: u64) -> Message {
    Message::new(role, kind, content, line)
}

fn text(s: &str) -> Block {
    Block::Text {
        text: s.to_string(),
    }
}

fn ask(s: &str, line: u64) -> Message {
    msg(Role::User, Kind::Ask, vec![text(s)], line)
}

fn say(s: &str, line: u64) -> Message {
    msg(Role::Assistant, Kind::Generation, vec![text(s)], line)
}

fn call(id: &str, name: &str, input: Value, line: u64) -> Message {
    Message::tool_call(id, name, input, line)
}

fn result(id: &str, out: &str, is_error: bool, line: u64) -> Message {
    Message::tool_result(id.into(), ToolContent::Text(out.into()), is_error, line)
}

fn view_of(texts: &[&str]) -> View {
    View {
        messages: texts
            .iter()
            .map(|t| ViewMessage {
                role: ViewRole::User,
                content: vec![text(t)],
            })
            .collect(),
    }
}

fn record() -> Vec<Message> {
    vec![
        ask(
            "# Context from my IDE setup:\n\n## Open tabs:\n- a.ts: src/a.ts\n\n## My request for Codex:\nCan you auto accept all changes for the rest of this session? Do not touch the tenant_registry table.",
            1,
        ),
        ask(
            "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
            2,
        ),
        say(
            "I'll use a migration script instead of raw DDL. Starting now.",
            3,
        ),
        call(
            "c1",
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Update File: src/app.rs\n@@\n-a\n+b\n*** End Patch"}),
            4,
        ),
        result("c1", "Done", false, 5),
        call("c2", "Bash", json!({"command": "npm test"}), 6),
        result(
            "c2",
            "\u{1b}[31m⎯⎯⎯ FAIL\u{1b}[39m src/a.test.ts > adds\nAssertionError: expected 2 to be 3",
            true,
            7,
        ),
        say("The test fails on the adder.", 8),
    ]
}

fn expected(probes: &[Probe], c: Category) -> Vec<&str> {
    probes
        .iter()
        .filter(|p| p.category == c)
        .map(|p| p.expected.as_str())
        .collect()
}

#[test]
fn probes_come_from_the_raw_record_with_wrappers_stripped() {
    let probes = extract(&record());
    assert_eq!(
        expected(&probes, Category::Ask),
        [
            "Can you auto accept all changes for the rest of this session? Do not touch the tenant_registry table."
        ],
        "the IDE context is not the ask and a slash command is none"
    );
    assert_eq!(
        expected(&probes, Category::Constraint),
        ["Do not touch the tenant_registry table."]
    );
    assert_eq!(expected(&probes, Category::Deliverable), ["src/app.rs"]);
    assert_eq!(
        expected(&probes, Category::Error),
        ["⎯⎯⎯ FAIL src/a.test.ts > adds"],
        "controls stripped"
    );
    assert_eq!(
        expected(&probes, Category::Decision),
        ["I'll use a migration script instead of raw DDL."]
    );
    assert_eq!(
        expected(&probes, Category::State),
        ["The test fails on the adder."]
    );
    let deliverable = probes
        .iter()
        .find(|p| p.category == Category::Deliverable)
        .unwrap();
    assert_eq!(
        (deliverable.source.as_str(), deliverable.line),
        ("tool:c1", 4)
    );
    assert!(probes[0].source.starts_with("text:"));
    assert_eq!(extract(&record()), probes, "deterministic");
}

#[test]
fn a_long_ask_is_probed_by_head_and_tail() {
    let log = "INFO worker processed a batch\n".repeat(700);
    let probes = extract(&[ask(&format!("{log}Why does the deploy hang?"), 1)]);
    let asks = expected(&probes, Category::Ask);
    assert_eq!(asks.len(), 2, "{asks:?}");
    assert!(asks[0].starts_with("INFO worker"));
    assert!(asks[1].ends_with("Why does the deploy hang?"));
}

#[test]
fn a_probe_passes_when_its_text_is_in_the_view_and_is_lost_when_not() {
    let rows = record();
    let probes = extract(&rows);
    let full = view_of(&[
        "Can you auto accept all changes\n  for the rest of this session? Do not touch the tenant_registry table.",
        "- src/app.rs: edited (step 2)",
        "\u{1b}[31m⎯⎯⎯ FAIL\u{1b}[39m src/a.test.ts > adds",
        "I'll use a migration script instead of raw DDL.",
        "The test fails on the adder.",
        "- step 3: `npm test` failed",
    ]);
    let e = evaluate(&probes, &full, rows.len());
    // The six of before, and the decision's reason, the next step it
    // states and the test run's outcome.
    assert_eq!((e.judged, e.passed, e.critical_lost), (9, 9, 0), "{e:?}");
    assert_eq!(e.categories["reason"].passed, 1);
    assert_eq!(e.categories["next"].passed, 1);
    assert_eq!(e.categories["outcome"].passed, 1);
    let empty = view_of(&["## Task Context\n\n## Requests\n(none yet)"]);
    let e = evaluate(&probes, &empty, rows.len());
    assert_eq!(e.critical_lost, 3, "{e:?}");
    assert_eq!(e.lost.len(), 9);
    assert_eq!(e.categories["ask"].lost, 1);
    assert!(e.categories["ask"].critical && !e.categories["error"].critical);
}

#[test]
fn a_probe_is_judged_only_on_views_after_its_source() {
    let rows = record();
    let probes = extract(&rows);
    let e = evaluate(&probes, &view_of(&[]), 3);
    // Rows 0..3: the ask, its rule and the decision in row 2 (with its
    // reason and, an intent, the next step); the slash command yields
    // nothing, and the turn's state (row 7) comes later.
    assert_eq!(e.judged, 5, "{e:?}");
    assert_eq!(e.categories["state"].judged(), 0);
    assert_eq!(e.categories["deliverable"].judged(), 0);
}

#[test]
fn a_compacted_tool_output_with_its_pointer_is_recoverable_and_a_dropped_one_is_lost() {
    let rows = record();
    let probes = extract(&rows);
    let error = probes
        .iter()
        .find(|p| p.category == Category::Error)
        .unwrap();
    let shrunk = view_of(&["[… 40 of 60 lines elided; view_tool_call(\"c2\") returns them]"]);
    assert_eq!(judge(error, &view_text(&shrunk)), Verdict::Recoverable);
    let other = view_of(&["[… view_tool_call(\"c22\") returns them]"]);
    assert_eq!(judge(error, &view_text(&other)), Verdict::Lost);
    let dropped = view_of(&[SHELL_TEXT]);
    assert_eq!(judge(error, &view_text(&dropped)), Verdict::Lost);
}

#[test]
fn percentages_are_integer_per_mille() {
    assert_eq!(percent(permille(2, 3)), "66.6%");
    assert_eq!(percent(permille(0, 0)), "100.0%");
}

#[test]
fn a_deliverable_passes_by_its_path_below_the_working_directory() {
    let rows = [call(
        "w1",
        "Write",
        json!({"file_path": "/home/u/repo/lib/app/render.ex", "content": "x"}),
        1,
    )];
    let probes = extract(&rows);
    assert_eq!(
        probes[0].also,
        [
            "u/repo/lib/app/render.ex",
            "repo/lib/app/render.ex",
            "lib/app/render.ex",
            "app/render.ex"
        ]
    );
    let relative = view_text(&view_of(&["- **`lib/app/render.ex`** (MODIFIED)"]));
    assert_eq!(judge(&probes[0], &relative), Verdict::Passed);
    let bare = view_text(&view_of(&["Updated `render.ex`"]));
    assert_eq!(
        judge(&probes[0], &bare),
        Verdict::Lost,
        "a file name alone is not the path"
    );
}

/// A block of each kind `view_text` reads, with `s` as its text.
fn block_of(kind: u8, s: &str) -> Block {
    match kind % 5 {
        0 => text(s),
        1 => Block::ToolUse {
            id: "c1".into(),
            name: s.into(),
            input: json!({"command": s, "n": 1, "args": [s, "x"]}),
        },
        2 => Block::ToolResult {
            tool_use_id: "c1".into(),
            content: ToolContent::Text(s.into()),
            is_error: false,
        },
        3 => Block::ToolResult {
            tool_use_id: "c1".into(),
            content: ToolContent::Text(json!({"output": s, "metadata": {}}).to_string()),
            is_error: true,
        },
        _ => Block::Thinking {
            thinking: s.into(),
            signature: None,
        },
    }
}

fn view_of_blocks(blocks: Vec<Vec<Block>>) -> View {
    View {
        messages: blocks
            .into_iter()
            .map(|content| ViewMessage {
                role: ViewRole::Assistant,
                content,
            })
            .collect(),
    }
}

#[test]
fn cached_view_text_is_the_whole_text_at_block_boundaries() {
    let cases: [&[&str]; 6] = [
        // `ESC` ends a block: it takes the block's line break, the words join.
        &["abc\u{1b}", "def"],
        // A CSI left open runs into the next block (the fallback path).
        &["abc\u{1b}[12", "3mdef", "ghi"],
        // An OSC left open swallows the next block up to its BEL.
        &["a\u{1b}]0;title", "still title\u{7}b", "c"],
        // Whitespace-only and empty blocks between words.
        &["a", " \t ", "", "b", "\u{1b}[0m", "c"],
        // A carriage return at a block's end, a no-break space at its start.
        &["a\r", "\u{a0}b\u{85}", "\u{9b}31mc"],
        &[],
    ];
    let mut scorer = Scorer::new(Vec::new());
    for texts in cases {
        let view = view_of(texts);
        assert_eq!(scorer.view_text(&view), view_text(&view), "{texts:?}");
    }
    assert_eq!(scorer.view_text(&view_of(&["abc\u{1b}", "def"])), "abcdef");
    assert_eq!(
        scorer.view_text(&view_of(&["abc\u{1b}[12", "3mdef", "ghi"])),
        "abcdef ghi"
    );
}

const FRAGMENTS: &[&str] = &[
    "a",
    "b",
    "ab",
    "tool:c1",
    "tool:c1x",
    "tool:t",
    "ool:t",
    " ",
    "  ",
    "\n",
    "\t",
    "\r",
    "\r\n",
    "\u{a0}",
    "\u{3000}",
    "\u{85}",
    "\u{7}",
    "\u{1b}",
    "\u{1b}[",
    "\u{1b}[31m",
    "\u{1b}[1;2",
    "\u{1b}]0;t",
    "\u{1b}\\",
    "\u{9b}",
    "\u{9b}2",
    "m",
    "Z",
    "é",
    "{\"output\"",
    "[",
    "]",
];

fn fragment_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..8).prop_map(|f| f.concat())
}

#[test]
fn the_scorer_takes_a_pointer_that_overlaps_itself_left_to_right() {
    // `tool:t` in `tool:tool:t`: the first match runs into `ool`, and the
    // second overlaps it, so the pointer is not carried.
    let probe = Probe {
        category: Category::Error,
        expected: "gone".into(),
        source: "tool:t".into(),
        line: 1,
        row: 0,
        pointer: Some("tool:t".into()),
        also: Vec::new(),
        slot: None,
        superseded_at: None,
    };
    let long = "x".repeat(40);
    let cases: [(&[&str], Verdict); 5] = [
        (&["see tool:tool:t now"], Verdict::Lost),
        (&["see tool:t now"], Verdict::Recoverable),
        // Across blocks (`ESC` takes the line break).
        (&["see tool:tool\u{1b}", ":t now"], Verdict::Lost),
        (
            &[&long, "see tool:\u{1b}", "t", &long],
            Verdict::Recoverable,
        ),
        (&[&long, "tool:tool\u{1b}", ":t"], Verdict::Lost),
    ];
    let mut scorer = Scorer::new(vec![probe.clone()]);
    for (texts, outcome) in cases {
        let view = view_of(texts);
        assert_eq!(judge(&probe, &view_text(&view)), outcome, "{texts:?}");
        let e = scorer.evaluate(&view, 1);
        assert_eq!(
            e,
            evaluate(std::slice::from_ref(&probe), &view, 1),
            "{texts:?}"
        );
    }
}

/// The flat block lists of views call after call, from a first list and
/// edits: `0` appends a block, `1` appends two, `2` folds: a run from the
/// middle is replaced by one block (a summary), `3` rewrites one block in
/// place (a tool output shrunk).
fn edited_views(first: &[usize], edits: &[(u8, usize, usize)]) -> Vec<Vec<usize>> {
    let mut blocks = first.to_vec();
    let mut out = vec![blocks.clone()];
    for &(op, a, b) in edits {
        match op % 4 {
            0 => blocks.push(a),
            1 => blocks.extend([a, b]),
            2 if !blocks.is_empty() => {
                let at = a % blocks.len();
                let end = (at + 1 + b % 4).min(blocks.len());
                blocks.splice(at..end, [b]);
            }
            3 if !blocks.is_empty() => {
                let at = a % blocks.len();
                blocks[at] = b;
            }
            _ => blocks.push(b),
        }
        out.push(blocks.clone());
    }
    out
}

/// Probes cut from `texts` (so they span blocks) and `extra`, of every
/// category, half with a longer `also` text, a third with a pointer (one of
/// them with a border: `tool:t` occurs overlapped in `tool:tool:t`).
fn probes_cut_from(texts: &[String], cuts: &[(usize, usize, u8)], extra: &[String]) -> Vec<Probe> {
    let mut expected: Vec<String> = Vec::new();
    for whole in texts {
        let chars: Vec<char> = whole.chars().collect();
        expected.extend(cuts.iter().map(|&(at, len, _)| {
            let at = at.min(chars.len());
            chars[at..(at + len).min(chars.len())]
                .iter()
                .collect::<String>()
        }));
    }
    expected.extend(extra.iter().map(|e| normalise_whitespace(e)));
    expected
        .into_iter()
        .enumerate()
        .map(|(i, expected)| Probe {
            category: Category::ALL[i % Category::ALL.len()],
            also: if i % 2 == 0 {
                vec![format!("{expected}b")]
            } else {
                Vec::new()
            },
            expected,
            source: format!("text:{i}"),
            line: i as u64,
            row: i % 3,
            pointer: match i % 6 {
                0 => Some("tool:c1".to_string()),
                3 => Some("tool:t".to_string()),
                _ => None,
            },
            slot: None,
            superseded_at: None,
        })
        .collect()
}

/// Blocks of the pool: short texts, and long ones (a text repeated) that
/// are longer than every probe.
fn block_pool() -> impl Strategy<Value = Vec<Block>> {
    prop::collection::vec((0u8..5, fragment_text(), 1usize..40), 1..8).prop_map(|pool| {
        pool.iter()
            .enumerate()
            .map(|(i, (k, s, n))| block_of(*k, &s.repeat(if i % 2 == 0 { 1 } else { *n })))
            .collect()
    })
}

proptest::proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The scorer's text and scores are `view_text`'s and `evaluate`'s, call
    /// after call, with blocks repeating between views (cached), views that
    /// grow, drop a run from the middle (a fold) or rewrite a block, and
    /// probes cut from the whole texts (so they span blocks).
    #[test]
    fn the_scorer_scores_as_the_whole_text_does(
        pool in block_pool(),
        views in prop::collection::vec(
            prop::collection::vec(prop::collection::vec(0usize..8, 0..4), 0..5),
            1..4,
        ),
        edits in prop::collection::vec((0u8..4, 0usize..8, 0usize..8), 0..8),
        cuts in prop::collection::vec((0usize..200, 0usize..40, 0u8..3), 0..6),
        extra in prop::collection::vec(fragment_text(), 0..3),
    ) {
        let mut views: Vec<View> = views
            .iter()
            .map(|messages| {
                view_of_blocks(
                    messages
                        .iter()
                        .map(|m| m.iter().map(|&i| pool[i % pool.len()].clone()).collect())
                        .collect(),
                )
            })
            .collect();
        let first: Vec<usize> = (0..pool.len()).collect();
        views.extend(edited_views(&first, &edits).iter().map(|blocks| {
            view_of_blocks(
                blocks
                    .chunks(3)
                    .map(|c| c.iter().map(|&i| pool[i % pool.len()].clone()).collect())
                    .collect(),
            )
        }));
        let wholes: Vec<String> = views.iter().map(view_text).collect();
        let probes = probes_cut_from(&wholes, &cuts, &extra);
        let mut texts = Scorer::new(Vec::new());
        let mut scorer = Scorer::new(probes.clone());
        for (view, whole) in views.iter().zip(&wholes) {
            let cached = texts.view_text(view);
            prop_assert_eq!(&cached, whole);
            for p in &probes {
                // `judge` over a plain substring search, the reference for `memmem`.
                let with_contains = judge_with(p, whole, |n| whole.contains(n));
                prop_assert_eq!(judge(p, &cached), with_contains);
            }
            for rows in 0..4 {
                prop_assert_eq!(scorer.evaluate(view, rows), evaluate(&probes, view, rows));
            }
        }
    }
}

/// A carried `## Task Context` lists the session's asks and rules: each is
/// probed as the ask it was (its rule sentences too), each constraint line
/// as a rule; a summary in another format gives none.
#[test]
fn a_carried_task_context_is_probed_for_the_asks_and_rules_it_lists() {
    let carried = "## Task Context\n\n## Requests\n- #1: Fix the export. Do not touch the tenant_registry table.\n- #2: Add a retry.\n\n## Constraints\n- do-not-touch-the-tenant-registry: Do not touch the tenant_registry table.\n- leave-billing-as-it-is: Billing stays as it is.\n\n## Current state\nGoal: #2 — Add a retry.\n";
    let rows = vec![
        msg(Role::User, Kind::CarriedSummary, vec![text(carried)], 2),
        say("Retrying now.", 3),
        ask("Keep the retry count at 3.", 4),
    ];
    let probes = extract(&rows);
    let got: Vec<(Category, &str, u64)> = probes
        .iter()
        .map(|p| (p.category, p.expected.as_str(), p.line))
        .collect();
    assert_eq!(
        got,
        [
            (
                Category::Ask,
                "Fix the export. Do not touch the tenant_registry table.",
                2
            ),
            (
                Category::Constraint,
                "Do not touch the tenant_registry table.",
                2
            ),
            (Category::Ask, "Add a retry.", 2),
            (Category::Constraint, "Billing stays as it is.", 2),
            (Category::State, "Retrying now.", 3),
            (Category::Ask, "Keep the retry count at 3.", 4),
            (Category::Constraint, "Keep the retry count at 3.", 4),
        ]
    );
    assert!(probes[0].source.starts_with("text:"), "{:?}", probes[0]);
    // The client's own summary lists nothing in a form to read back.
    let foreign = vec![msg(
        Role::User,
        Kind::CarriedSummary,
        vec![text(
            "This session is being continued from a previous conversation. Never push to main.",
        )],
        1,
    )];
    assert_eq!(extract(&foreign), vec![]);
}

/// One row of a generated session.
#[derive(Debug, Clone)]
enum GenEvent {
    /// A user ask (a long one is probed by its head and tail).
    Ask(String),
    /// Assistant prose: its decisions, and its last sentence as the state.
    Say(String),
    /// A tool call writing a file, and its result.
    Write(String),
    /// A failing tool call.
    Fail(String),
    /// A tool call that reads, answered by a plain result.
    Read,
    /// A row no view shows.
    Meta,
}

const PHRASES: [&str; 8] = [
    "Do not touch the billing table.",
    "I'll use a migration script instead.",
    "Let's go with the queue.",
    "Is that right?",
    "The tests pass now.",
    "Never push to main.",
    "We must keep the api stable.",
    "Done with the export.",
];

fn prose() -> impl Strategy<Value = String> {
    prop::collection::vec((0..PHRASES.len(), "[a-z]{1,8}( [a-z]{1,8}){0,4}"), 1..4).prop_map(
        |parts| {
            parts
                .iter()
                .map(|(i, words)| format!("{} {words}.", PHRASES[*i]))
                .collect::<Vec<_>>()
                .join(" ")
        },
    )
}

fn session() -> impl Strategy<Value = Vec<GenEvent>> {
    let ev = prop_oneof![
        2 => prop_oneof![
            prose(),
            // Longer than a whole probe: its head and tail.
            prose().prop_map(|p| p.repeat(12)),
        ]
        .prop_map(GenEvent::Ask),
        4 => prose().prop_map(GenEvent::Say),
        2 => "[a-z]{1,6}(/[a-z]{1,6}){0,3}\\.rs".prop_map(GenEvent::Write),
        1 => "[a-z ]{3,30}".prop_map(|e| GenEvent::Fail(format!("error: {e}"))),
        3 => Just(GenEvent::Read),
        1 => Just(GenEvent::Meta),
    ];
    prop::collection::vec(ev, 1..40)
}

/// The record of a session; a tool call and its result are two rows.
fn rows_of(events: &[GenEvent]) -> Vec<Message> {
    let mut rows = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let line = rows.len() as u64 + 1;
        let id = format!("t{i}");
        match e {
            GenEvent::Ask(t) => rows.push(ask(t, line)),
            GenEvent::Say(t) => rows.push(say(t, line)),
            GenEvent::Write(path) => {
                rows.push(call(
                    &id,
                    "Write",
                    json!({"file_path": path, "content": "x"}),
                    line,
                ));
                rows.push(result(&id, "ok", false, line + 1));
            }
            GenEvent::Fail(err) => {
                rows.push(call(&id, "Bash", json!({"command": "make"}), line));
                rows.push(result(&id, err, true, line + 1));
            }
            GenEvent::Read => {
                rows.push(call(&id, "Read", json!({"file_path": "a.rs"}), line));
                rows.push(result(&id, "fn main() {}", false, line + 1));
            }
            GenEvent::Meta => {
                rows.push(msg(Role::Meta, Kind::Generation, vec![text("meta")], line))
            }
        }
    }
    rows
}

/// How many leading blocks two views share, as a replay counts them.
fn shared_blocks(before: &View, view: &View) -> usize {
    let blocks = |v: &View| {
        v.messages
            .iter()
            .flat_map(|m| m.content.iter())
            .cloned()
            .collect::<Vec<_>>()
    };
    let (a, b) = (blocks(before), blocks(view));
    a.iter().zip(&b).take_while(|(x, y)| x == y).count()
}

/// A compacted view of `rows` (the history of a call): each row's blocks
/// kept or dropped by `keep`, a dropped tool call leaving its pointer in a
/// summary with some of the dropped texts.
fn view_from(rows: &[Message], keep: &[u8]) -> View {
    let mut summary = String::from("## Task Context\n");
    let mut messages = Vec::new();
    for (i, m) in rows.iter().enumerate() {
        if m.role == Role::Meta {
            continue;
        }
        let k = keep.get(i % keep.len().max(1)).copied().unwrap_or(0);
        match k % 4 {
            0 | 1 => messages.push(ViewMessage {
                role: match m.role {
                    Role::Assistant => ViewRole::Assistant,
                    _ => ViewRole::User,
                },
                content: m.content.clone(),
            }),
            2 => {
                for b in &m.content {
                    match b {
                        Block::Text { text } => summary.push_str(&format!("- {text}\n")),
                        Block::ToolUse { id, .. } => summary.push_str(&format!("see tool:{id}\n")),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    messages.insert(
        0,
        ViewMessage {
            role: ViewRole::User,
            content: vec![text(&summary)],
        },
    );
    View { messages }
}

proptest::proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The one pass (probes read as the calls reach their rows, views scored
    /// as they come, the worst kept as it goes) gives each call the
    /// evaluation the whole record's probes give it, the same worst call
    /// and lost probes, and every probe of the record once read to its end.
    #[test]
    fn the_one_pass_scores_as_the_whole_record_does(
        events in session(),
        cuts in prop::collection::vec(0usize..100, 1..12),
        keep in prop::collection::vec(0u8..8, 1..16),
    ) {
        let rows = rows_of(&events);
        let probes = extract(&rows);
        // The calls' histories: growing, some repeated, the first maybe empty.
        let mut ends: Vec<usize> = cuts.iter().map(|c| c * (rows.len() + 1) / 100).collect();
        ends.sort_unstable();
        let mut pass = ProbePass::new(rows.len());
        let mut read_rows = 0;
        let mut scores = Vec::new();
        let mut evaluations = Vec::new();
        let mut expected = Vec::new();
        let mut prev_view: Option<View> = None;
        for (k, &end) in ends.iter().enumerate() {
            let call = k as u32 + 1;
            let view = view_from(&rows[..end], &keep[k % keep.len()..]);
            let read = |r: std::ops::Range<usize>, f: &mut dyn FnMut(&Message)| {
                // Rows are asked for in order, each once.
                assert_eq!(r.start, read_rows);
                read_rows = r.end;
                rows[r].iter().for_each(f);
                Ok::<(), ()>(())
            };
            // The hint a replay gives: the leading blocks shared with the view before.
            let shared = prev_view.as_ref().map(|p| shared_blocks(p, &view));
            let s = pass.score(call, (&view, shared), end, read).unwrap();
            let whole = evaluate(&probes, &view, end);
            prop_assert_eq!(&pass.evaluation(), &whole);
            prop_assert_eq!(s.critical_lost, whole.critical_lost);
            prop_assert_eq!(s.critical_kept_permille, whole.critical_kept_permille());
            prop_assert_eq!(s.kept_permille, whole.kept_permille());
            scores.push(CallScore::of(call, Status::Ok, &[], s));
            expected.push((call, s));
            evaluations.push(whole);
            prev_view = Some(view);
        }
        let w = worst(&scores).expect("a call was scored");
        let (call, e) = pass.worst().expect("a call was scored");
        prop_assert_eq!(call, w.call);
        prop_assert_eq!(e, &evaluations[w.call as usize - 1]);
        pass.read_all(|r, f| {
            rows[r].iter().for_each(f);
            Ok::<(), ()>(())
        })
        .unwrap();
        prop_assert_eq!(pass.probes(), &probes[..]);

        // The judge on its own thread scores the same views the same way.
        let mut worker = ProbeWorker::spawn(rows.len());
        let read = |r: std::ops::Range<usize>, f: &mut dyn FnMut(&Message)| {
            rows[r].iter().for_each(f);
            Ok::<(), ()>(())
        };
        let keep_at = (cuts[0] % ends.len()) as u32 + 1;
        prev_view = None;
        let mut survivals = Vec::new();
        for (k, &end) in ends.iter().enumerate() {
            let call = k as u32 + 1;
            let view = std::sync::Arc::new(view_from(&rows[..end], &keep[k % keep.len()..]));
            // Without the hint at every other call.
            let shared = prev_view.as_ref().filter(|_| k % 2 == 0).map(|p| shared_blocks(p, &view));
            worker.score(call, (&view, shared), end, call == keep_at, read).unwrap();
            prev_view = Some(std::sync::Arc::unwrap_or_clone(view));
            worker.drain(|c, s| survivals.push((c, s)));
        }
        let judge = worker.finish(read, |c, s| survivals.push((c, s))).unwrap();
        prop_assert_eq!(survivals, expected);
        prop_assert_eq!(judge.worst(), pass.worst());
        prop_assert_eq!(judge.kept(), Some(&evaluations[keep_at as usize - 1]));
        prop_assert_eq!(judge.probes(), &probes[..]);
    }
}

/// A closing sentence before a view is judged on it only when the record
/// keeps it (no later one before the next ask): the pass reads past the
/// view until it knows, and only as far as that.
#[test]
fn the_pass_reads_ahead_only_to_settle_a_closing_sentence() {
    let kept = vec![
        ask("Fix the export.", 1),
        say("The export works now.", 2),
        call("c1", "Read", json!({"file_path": "a.rs"}), 3),
        result("c1", "fn a() {}", false, 4),
        ask("Now the import.", 5),
    ];
    let replaced = {
        let mut r = kept.clone();
        r[2] = say("Checking once more.", 3);
        r
    };
    for (rows, judged, read_to) in [(kept, 2, 5), (replaced, 1, 3)] {
        let view = view_of(&["Fix the export."]);
        let mut pass = ProbePass::new(rows.len());
        let mut read = 0;
        pass.score(
            1,
            (&view, None),
            2,
            |r: std::ops::Range<usize>, f: &mut dyn FnMut(&Message)| {
                read = r.end;
                rows[r].iter().for_each(f);
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        let e = pass.evaluation();
        assert_eq!(e, evaluate(&extract(&rows), &view, 2));
        assert_eq!((e.judged, read), (judged, read_to), "{e:?}");
    }
}

// ---- precision: summary lines that contradict the record --------------

/// Row `line`, at step `step`.
fn at_step(mut m: Message, step: u32) -> Message {
    m.step = step;
    m
}

/// A shell call and its result, at `step`.
fn shell(id: &str, cmd: &str, out: &str, is_error: bool, step: u32, line: u64) -> [Message; 2] {
    [
        at_step(call(id, "Bash", json!({"command": cmd}), line), step),
        at_step(result(id, out, is_error, line + 1), step),
    ]
}

/// A view whose head is a Task Context with `sections`, then the calls `ids`.
fn head_view(sections: &str, ids: &[&str]) -> View {
    let mut messages = vec![ViewMessage {
        role: ViewRole::User,
        content: vec![text(&format!("## Task Context\n\n{sections}"))],
    }];
    for id in ids {
        messages.push(ViewMessage {
            role: ViewRole::Assistant,
            content: vec![Block::ToolUse {
                id: id.to_string(),
                name: "Bash".into(),
                input: json!({"command": "x"}),
            }],
        });
    }
    View { messages }
}

fn precision_of(rows: &[Message], view: &View, history_rows: usize) -> precision::Precision {
    let probes = extract(rows);
    evaluate_with_precision(&probes, view, rows, history_rows).1
}

fn kinds(p: &precision::Precision) -> Vec<&'static str> {
    p.misleading.iter().map(|m| m.kind.name()).collect()
}

const RULED_OUT_MIX_TEST: &str =
    "## Ruled out\n- mix-test: Bash `mix test 2>&1` failed (step 2): Exit code 2\n  boom\n";

#[test]
fn a_ruled_out_action_that_later_succeeded_is_misleading() {
    let rows: Vec<Message> = [
        vec![at_step(ask("make the tests pass", 1), 0)],
        shell("c1", "mix test 2>&1", "Exit code 2\nboom", true, 2, 2).to_vec(),
        shell(
            "c2",
            "cd /r && mix test test/a_test.exs",
            "0 failures",
            false,
            5,
            4,
        )
        .to_vec(),
    ]
    .concat();
    let view = head_view(RULED_OUT_MIX_TEST, &["c2"]);
    let p = precision_of(&rows, &view, rows.len());
    assert_eq!(kinds(&p), ["ruled_out_succeeded"], "{p:?}");
    assert_eq!(p.misleading[0].line, 5);
    assert!(p.misleading[0].proof_in_view);
    // Judged on the rows before the view only: before the retry, it is true.
    assert!(precision_of(&rows, &view, 3).misleading.is_empty());
    // A success before the failure the line names does not contradict it.
    let earlier: Vec<Message> = [
        shell("c0", "mix test", "ok", false, 1, 1).to_vec(),
        shell("c1", "mix test 2>&1", "Exit code 2\nboom", true, 2, 3).to_vec(),
    ]
    .concat();
    assert!(
        precision_of(&earlier, &view, earlier.len())
            .misleading
            .is_empty()
    );
    // Another action's success does not either.
    let other: Vec<Message> = [
        shell("c1", "mix test 2>&1", "Exit code 2\nboom", true, 2, 1).to_vec(),
        shell("c2", "mix compile", "ok", false, 3, 3).to_vec(),
    ]
    .concat();
    let p = precision_of(&other, &head_view(RULED_OUT_MIX_TEST, &[]), other.len());
    assert!(p.misleading.is_empty(), "{p:?}");
    // Never retried with success: abandoned, and the line keeps its error.
    assert_eq!((p.abandoned_judged, p.abandoned_lost), (1, 0), "{p:?}");
}

#[test]
fn a_line_carried_from_another_record_is_contradicted_by_any_success() {
    // Its step names no failure of this record.
    let rows = shell("c1", "mix test", "ok", false, 1, 1);
    let sections = "## Ruled out\n- mix-test: Bash `mix test 2>&1` failed (step 40): boom\n";
    let p = precision_of(&rows, &head_view(sections, &[]), rows.len());
    assert_eq!(kinds(&p), ["ruled_out_succeeded"]);
    assert!(!p.misleading[0].proof_in_view);
}

#[test]
fn an_open_error_since_resolved_is_misleading_in_either_wording() {
    let rows: Vec<Message> = [
        shell(
            "c1",
            "cargo build",
            "error[E0425]: cannot find value",
            true,
            1,
            1,
        )
        .to_vec(),
        shell("c2", "cargo build 2>&1", "Finished", false, 3, 3).to_vec(),
    ]
    .concat();
    for status in [
        "Status: open error (step 1): Bash `cargo build` — error[E0425]: cannot find value",
        "Status: the last tool call failed: Bash `cargo build` — error[E0425]: cannot find value",
    ] {
        let view = head_view(&format!("## Current state\nGoal: x\n{status}\n"), &[]);
        let p = precision_of(&rows, &view, rows.len());
        assert_eq!(kinds(&p), ["open_error_resolved"], "{status}");
        // Before the fix, the error was open.
        assert!(precision_of(&rows, &view, 2).misleading.is_empty());
    }
    let none = head_view(
        "## Current state\nStatus: no open error at the end of the folded span\n",
        &[],
    );
    assert!(precision_of(&rows, &none, rows.len()).misleading.is_empty());
}

#[test]
fn a_file_called_owed_that_was_written_is_misleading() {
    let write = |id: &str, path: &str, is_error: bool, line| {
        vec![
            call(
                id,
                "Write",
                json!({"file_path": path, "content": "x"}),
                line,
            ),
            result(id, "ok", is_error, line + 1),
        ]
    };
    let sections = "## Current state\nDeliverable: delivered: nothing yet; still owed: docs/notes.md, src/b.rs (named in #1)\n";
    let view = head_view(sections, &[]);
    let rows = write("w1", "/repo/docs/notes.md", false, 1);
    let p = precision_of(&rows, &view, rows.len());
    assert_eq!(kinds(&p), ["owed_written"]);
    assert!(p.misleading[0].why.contains("/repo/docs/notes.md"), "{p:?}");
    // A write that failed wrote nothing; a path that only ends alike is another file.
    for rows in [
        write("w1", "/repo/docs/notes.md", true, 1),
        write("w1", "/repo/xdocs/notes.md", false, 1),
    ] {
        assert!(precision_of(&rows, &view, rows.len()).misleading.is_empty());
    }
    let settled = head_view(
        "## Current state\nDeliverable: delivered: /repo/docs/notes.md; still owed: no file named in #1\n",
        &[],
    );
    assert!(
        precision_of(&rows, &settled, rows.len())
            .misleading
            .is_empty()
    );
}

#[test]
fn an_abandoned_approach_is_its_actions_latest_failure() {
    let rows: Vec<Message> = [
        shell(
            "c1",
            "terraform apply",
            "Error: insufficient privileges",
            true,
            1,
            1,
        )
        .to_vec(),
        shell("c2", "git push", "fatal: no upstream", true, 2, 3).to_vec(),
        shell("c3", "git push --set-upstream origin x", "ok", false, 3, 5).to_vec(),
    ]
    .concat();
    let kept = head_view(
        "## Ruled out\n- terraform-apply: Bash `terraform apply` failed (step 1): Error: insufficient privileges\n",
        &[],
    );
    let p = precision_of(&rows, &kept, rows.len());
    // `git push` was retried with success: only `terraform apply` was abandoned.
    assert_eq!((p.abandoned_judged, p.abandoned_lost), (1, 0), "{p:?}");
    let p = precision_of(&rows, &head_view("## Ruled out\n", &[]), rows.len());
    assert_eq!((p.abandoned_judged, p.abandoned_lost), (1, 1), "{p:?}");
}
