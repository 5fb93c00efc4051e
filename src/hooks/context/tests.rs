use serde_json::json;

use super::*;
use crate::engine::summarizer::{SummarizeError, Summary};
use crate::model::{Block, Role, ToolContent};

const RULE: &str = "Never touch the migrations directory.";

fn text(s: &str) -> Block {
    Block::Text { text: s.into() }
}

fn ask(s: &str, line: u64) -> Message {
    Message::new(Role::User, Kind::Ask, vec![text(s)], line)
}

fn say(s: &str, line: u64) -> Message {
    Message::new(Role::Assistant, Kind::Generation, vec![text(s)], line)
}

/// A session: a first ask with a rule, then `n` edits, each with a decision
/// and a failed test run (findings, ruled-out calls and decisions to demote).
fn session(n: usize) -> Vec<Message> {
    let mut rows = vec![ask(&format!("Fix the parser in src/parse.rs. {RULE}"), 1)];
    let mut line = 2;
    for i in 0..n {
        rows.push(say(
            &format!("I decided to split the tokenizer step {i} into its own function because the parser grew too long."),
            line,
        ));
        rows.push(Message::new(
            Role::Assistant,
            Kind::Generation,
            vec![Block::ToolUse {
                id: format!("t{i}"),
                name: "Bash".into(),
                input: json!({"command": format!("cargo test parse_{i}")}),
            }],
            line + 1,
        ));
        rows.push(Message::tool_result(
            format!("t{i}"),
            ToolContent::Text(format!(
                "error[E0{i:03}]: mismatched types in parse_{i}\n{}",
                "x".repeat(400)
            )),
            true,
            line + 2,
        ));
        line += 3;
    }
    rows.push(ask(
        "Now make the tests pass. Do not change the public API.",
        line,
    ));
    rows
}

#[test]
fn the_task_context_keeps_the_rules_verbatim_and_fits_each_clients_limit() {
    for limit in [
        OutputLimit::Utf16Units(10_000),
        OutputLimit::Utf8Bytes(10_000),
        OutputLimit::Utf8Bytes(3_000),
    ] {
        let tc = task_context(&session(200), &Extractive, limit).expect("a request");
        assert!(
            tc.size <= limit.max(),
            "{limit:?}: {} > {}",
            tc.size,
            limit.max()
        );
        assert_eq!(tc.size, limit.measure(&tc.text));
        assert!(!tc.over_limit);
        assert!(tc.text.starts_with(PREAMBLE));
        assert!(
            tc.text.contains("\n\n## Task Context\n\n## Constraints\n"),
            "{}",
            tc.text
        );
        assert!(tc.text.contains(RULE), "{limit:?}");
        assert!(tc.text.contains("Do not change the public API."));
        assert!(tc.text.contains("#1: Fix the parser in src/parse.rs."));
        assert!(tc.text.contains("#2: Now make the tests pass."));
        assert_eq!(tc.summarizer, "extractive");
    }
}

#[test]
fn a_small_session_is_summarized_whole_at_once() {
    let tc = task_context(&session(1), &Extractive, OutputLimit::Utf16Units(10_000)).unwrap();
    // Nothing had to go: the decision and the failed call are there.
    assert!(tc.text.contains("## Decisions"), "{}", tc.text);
    assert!(tc.text.contains("## Ruled out"), "{}", tc.text);
}

#[test]
fn no_request_means_nothing_to_put_back() {
    assert_eq!(
        task_context(
            &[say("hello", 1)],
            &Extractive,
            OutputLimit::Utf8Bytes(10_000)
        ),
        None
    );
    assert_eq!(
        summarizer_instructions(&[say("hello", 1)], OutputLimit::Utf16Units(10_000)),
        None
    );
}

#[test]
fn requests_alone_over_the_limit_are_printed_whole() {
    let asks: Vec<Message> = (0..60)
        .map(|i| ask(&format!("Request {i}: rename field_{i} to better_name_{i} everywhere. Never rename the table itself, keep the column {i}."), i + 1))
        .collect();
    let tc = task_context(&asks, &Extractive, OutputLimit::Utf8Bytes(2_000)).unwrap();
    assert!(tc.over_limit);
    assert!(tc.size > 2_000);
    for i in 0..60 {
        assert!(
            tc.text.contains(&format!("Request {i}: rename field_{i}")),
            "ask {i}"
        );
    }
    // The rules come first: a client's preview of the output keeps them.
    let rules = tc.text.find("## Constraints").unwrap();
    assert!(rules < tc.text.find("## Requests").unwrap());
}

/// A model summarizer whose summary is far over the limit.
struct Verbose;

impl Summarizer for Verbose {
    fn name(&self) -> String {
        "llm:test".into()
    }

    fn summarize(&self, _req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Ok(Summary {
            text: format!(
                "## Requests\n- #1: x\n\n## Findings\n{}",
                "- a-b: c\n".repeat(3_000)
            ),
            summarizer: "llm:test".into(),
        })
    }
}

/// A summarizer that fails.
struct Down;

impl Summarizer for Down {
    fn name(&self) -> String {
        "llm:down".into()
    }

    fn summarize(&self, _req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Err(SummarizeError::Timeout(10))
    }
}

#[test]
fn a_model_summary_over_the_limit_gives_way_to_the_extractive_one() {
    let tc = task_context(&session(5), &Verbose, OutputLimit::Utf16Units(10_000)).unwrap();
    assert!(tc.size <= 10_000);
    assert_eq!(tc.summarizer, "extractive (llm:test over the limit)");
    assert!(tc.text.contains(RULE));
    // A failing one falls back as the floor does.
    let tc = task_context(&session(5), &Down, OutputLimit::Utf16Units(10_000)).unwrap();
    assert!(tc.text.contains(RULE));
}

#[test]
fn the_history_before_a_compaction_leaves_out_the_clients_trailing_summary() {
    let mut rows = session(1);
    let n = rows.len();
    rows.push(Message::new(
        Role::User,
        Kind::CompactSummary,
        vec![text("CODEX-SUMMARY")],
        99,
    ));
    assert_eq!(before_compaction(&rows).len(), n);
    // An earlier summary, followed by more asks, is part of the history.
    rows.push(ask("and then this", 100));
    assert_eq!(before_compaction(&rows).len(), n + 2);
}

#[test]
fn the_instructions_name_the_rules_and_requests_under_the_limit() {
    let text = summarizer_instructions(&session(3), OutputLimit::Utf16Units(10_000)).unwrap();
    assert!(text.starts_with(INSTRUCTION));
    assert!(text.contains("## Constraints\n"));
    assert!(text.contains(RULE));
    assert!(text.contains("## Requests\n- #1: Fix the parser"));
    assert!(!text.contains("## Ruled out"), "{text}");
    let asks: Vec<Message> = (0..200)
        .map(|i| ask(&format!("Request {i}: never drop table_{i}."), i + 1))
        .collect();
    let cut = summarizer_instructions(&asks, OutputLimit::Utf16Units(2_000)).unwrap();
    assert!(cut.encode_utf16().count() <= 2_000, "{}", cut.len());
    assert!(
        cut.ends_with("compactor puts them back after the compaction"),
        "{cut}"
    );
}

#[test]
fn limits_count_in_the_clients_own_unit() {
    let s = "é😀a";
    assert_eq!(OutputLimit::Utf16Units(1).measure(s), 4);
    assert_eq!(OutputLimit::Utf8Bytes(1).measure(s), 7);
}
