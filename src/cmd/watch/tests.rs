//! A watch driven look by look over a session file written in pieces (the
//! test is the clock: a look follows each piece, so nothing depends on
//! timing): every call's record equals the one `replay --jsonl` prints for
//! the whole file, `view_hash` included, wherever the pieces were cut: between
//! calls, inside a turn, between a Codex call's items and its usage, inside a
//! line.

use std::cell::RefCell;
use std::io::{self, Write};
use std::path::Path;
use std::rc::Rc;

use super::*;
use crate::cmd::defaults;
use crate::cmd::summarizer::LlmArgs;
use crate::cmd::with_schema;
use crate::session::cost::Prices;
use crate::store::DbLocation;
use crate::summarize::llm::config::SummarizerKind;
use crate::test_corpus::corpus;

/// What the watch printed, shared with the [`Ui`] it printed through.
#[derive(Clone, Default)]
struct Captured(Rc<RefCell<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.borrow().clone()).unwrap()
    }
}

fn quiet_ui(out: &Captured) -> Ui {
    Ui {
        out: Box::new(out.clone()),
        err: Box::new(io::sink()),
        quiet: true,
        color: false,
        color_err: false,
        stderr_terminal: false,
    }
}

fn extractive() -> Configured {
    Configured::new(
        Some(SummarizerKind::Extractive),
        &LlmArgs::default(),
        &DbLocation::Memory,
    )
    .unwrap()
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata")
            .join(rel),
    )
    .unwrap()
}

/// What `replay --jsonl` prints for the calls (its totals record aside) of
/// the task `bytes` hold, imported whole.
fn replayed(dir: &Path, bytes: &[u8], flags: &BudgetArgs) -> String {
    let path = dir.join("whole.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let mut store = Store::open(&DbLocation::File(dir.join("whole.db"))).unwrap();
    let report = ingest_file(&mut store, &path, &IngestOptions::default(), &mut |_| {}).unwrap();
    let task = report.main_task().unwrap().to_string();
    let index = TaskRecordIndex::load(&store, &task).unwrap();
    let record = store.reader().task(&task).unwrap();
    let budget = defaults::budget_for(flags, record.as_ref()).unwrap().budget;
    let (est, summarizer) = (CharsPerToken::default(), extractive());
    let settings = RunSettings::new(budget, &est, &summarizer);
    let mut run = Run::open(&store, &index, settings, Placement::Scratch).unwrap();
    let opts = ReplayOptions::from_start(index.calls(), Prices::default());
    let mut out = String::new();
    run.replay(&mut store, &opts, |row, _| -> Result<()> {
        out.push_str(&serde_json::to_string(&with_schema("replay_call", row)?)?);
        out.push('\n');
        Ok(())
    })
    .unwrap();
    out
}

/// What `watch --json` prints when `bytes` are written in pieces ending at
/// `cuts` (the file starts empty), with one look after each piece, then the
/// end of the watch, importing into a store file in `dir`.
fn watched(dir: &Path, bytes: &[u8], cuts: &[usize], flags: &BudgetArgs) -> String {
    let db = DbLocation::File(dir.join("live.db"));
    watched_into(&db, dir, bytes, cuts, flags)
}

/// [`watched`], importing into the store at `db`.
fn watched_into(
    db: &DbLocation,
    dir: &Path,
    bytes: &[u8],
    cuts: &[usize],
    flags: &BudgetArgs,
) -> String {
    let path = dir.join("live.jsonl");
    std::fs::write(&path, b"").unwrap();
    let mut store = Store::open(db).unwrap();
    let (est, summarizer) = (CharsPerToken::default(), extractive());
    let out = Captured::default();
    let mut ui = quiet_ui(&out);
    let mut watch = json_watch(&path, flags, &est, &summarizer);
    watch.look(&mut store, &mut ui).unwrap();
    for &cut in cuts {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        watch.look(&mut store, &mut ui).unwrap();
    }
    watch.finish(&mut store, &mut ui).unwrap();
    out.text()
}

/// `watch --json` of the file at `path`, from its first look.
fn json_watch<'a>(
    path: &Path,
    flags: &'a BudgetArgs,
    estimator: &'a CharsPerToken,
    summarizer: &'a Configured,
) -> Watch<'a> {
    Watch {
        path: path.to_path_buf(),
        task: None,
        format: None,
        flags,
        estimator,
        summarizer,
        json: true,
        announced: false,
        followed: None,
    }
}

/// Cuts after every line and in the middle of every line.
fn every_line_and_half_line(bytes: &[u8]) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            let mid = start + (i - start) / 2;
            if mid > start {
                cuts.push(mid);
            }
            cuts.push(i + 1);
            start = i + 1;
        }
    }
    if start < bytes.len() {
        cuts.push(bytes.len());
    }
    cuts
}

/// The budget flags `--window WINDOW --output-reserved RESERVED`, every
/// other one at its default, given explicitly so that no environment
/// variable reaches them.
fn budget(window: u64, output_reserved: u64) -> BudgetArgs {
    #[derive(clap::Parser)]
    struct Flags {
        #[command(flatten)]
        budget: BudgetArgs,
    }
    let (window, reserved) = (window.to_string(), output_reserved.to_string());
    <Flags as clap::Parser>::parse_from([
        "watch",
        "--window",
        &window,
        "--output-reserved",
        &reserved,
        "--trigger-ratio",
        "0.65",
        "--stop-ratio",
        "0.5",
        "--protect-recent-steps",
        "5",
        "--summary-budget",
        "2500",
        // Tight budgets compact the most, which is what these compare; some
        // are below a fixture's system prompt and tools.
        "--allow-over-window",
    ])
    .budget
}

#[test]
fn a_watch_over_a_file_written_in_pieces_reports_every_call_as_replay_does() {
    for (rel, window, reserved) in [
        ("claude-code/small-session.jsonl", 6_000, 1_000),
        ("fixtures/claude-shrink-floor.jsonl", 32_000, 4_000),
        ("fixtures/claude-shrink-floor.jsonl", 6_000, 1_000),
        ("fixtures/claude-disposable-interrupt.jsonl", 6_000, 1_000),
        // Usage written after the call's items (Codex 0.171).
        ("codex/client-0.171.0.jsonl", 6_000, 1_000),
        ("codex/small-rollout.jsonl", 6_000, 1_000),
        ("fixtures/codex-tenant-registry.jsonl", 32_000, 4_000),
    ] {
        let bytes = fixture(rel);
        let budget = budget(window, reserved);
        let dir = tempfile::tempdir().unwrap();
        let expected = replayed(dir.path(), &bytes, &budget);
        let rows: Vec<serde_json::Value> = expected
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(
            rows.iter()
                .any(|r| !r["tiers_fired"].as_array().unwrap().is_empty()),
            "{rel} at {window}: no tier fires, so no state is carried"
        );
        let cuts = every_line_and_half_line(&bytes);
        let piecewise = watched(dir.path(), &bytes, &cuts, &budget);
        assert_lines_eq(
            &piecewise,
            &expected,
            &format!("{rel} at {window}, line by line"),
        );
        // A few large pieces: several calls arrive in one look.
        let thirds = [bytes.len() / 3, bytes.len() * 2 / 3, bytes.len()];
        let dir = tempfile::tempdir().unwrap();
        let coarse = watched(dir.path(), &bytes, &thirds, &budget);
        assert_lines_eq(&coarse, &expected, &format!("{rel} at {window}, in thirds"));
    }
}

#[test]
fn a_watch_into_an_in_memory_store_sees_the_tool_forms_each_look_imports() {
    // An in-memory store lends its tool forms to the scratch copy the watch
    // replays on; the forms of results imported later must reach it too.
    let bytes = fixture("fixtures/claude-shrink-floor.jsonl");
    let budget = budget(6_000, 1_000);
    let dir = tempfile::tempdir().unwrap();
    let expected = replayed(dir.path(), &bytes, &budget);
    let cuts = every_line_and_half_line(&bytes);
    let got = watched_into(&DbLocation::Memory, dir.path(), &bytes, &cuts, &budget);
    assert_lines_eq(&got, &expected, "claude-shrink-floor into :memory:");
}

#[test]
fn a_codex_call_waits_for_its_usage_unless_the_watch_ends() {
    // Codex 0.171 writes a call's usage after its items: a look between the
    // two reports the call only once its usage is in, so that its row (with
    // `recorded_prompt_tokens`) is replay's.
    let bytes = fixture("codex/client-0.171.0.jsonl");
    let text = std::str::from_utf8(&bytes).unwrap();
    let usage_at = text.find("\"token_count\"").unwrap();
    let before_usage = text[..usage_at].rfind('\n').unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    let flags = budget(6_000, 1_000);
    let path = dir.path().join("live.jsonl");
    std::fs::write(&path, &bytes[..before_usage]).unwrap();
    let mut store = Store::open(&DbLocation::File(dir.path().join("live.db"))).unwrap();
    let (est, summarizer) = (CharsPerToken::default(), extractive());
    let out = Captured::default();
    let mut ui = quiet_ui(&out);
    let mut watch = json_watch(&path, &flags, &est, &summarizer);
    watch.look(&mut store, &mut ui).unwrap();
    assert_eq!(out.text(), "", "call 1 has no usage yet");
    let whole = replayed(dir.path(), &bytes, &flags);
    let first = whole.lines().next().unwrap();
    let row: serde_json::Value = serde_json::from_str(first).unwrap();
    assert!(row["recorded_prompt_tokens"].is_u64(), "{first}");
    // The end of the watch reports the call as the file has it.
    watch.finish(&mut store, &mut ui).unwrap();
    let ended: serde_json::Value = serde_json::from_str(out.text().trim_end()).unwrap();
    assert_eq!(ended["call"], 1);
    assert!(ended["recorded_prompt_tokens"].is_null(), "{ended}");
    assert_eq!(ended["view_hash"], row["view_hash"]);
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn a_corpus_session_written_in_pieces_is_reported_as_replay_reports_it() {
    let Some(dir) = corpus("a_corpus_session_written_in_pieces_is_reported_as_replay_reports_it")
    else {
        return;
    };
    let bytes = std::fs::read(dir.join(
        "claude-code/v2.1.39_spotter_compaction_subagents/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    ))
    .unwrap();
    // Every 37th line (a look lands inside turns and between a call's
    // lines), each time also in the middle of the next line.
    let cuts: Vec<usize> = every_line_and_half_line(&bytes)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 74 < 2)
        .map(|(_, c)| c)
        .chain([bytes.len()])
        .collect();
    let budget = budget(32_000, 4_000);
    let tmp = tempfile::tempdir().unwrap();
    let expected = replayed(tmp.path(), &bytes, &budget);
    assert_eq!(expected.lines().count(), 139);
    let got = watched(tmp.path(), &bytes, &cuts, &budget);
    assert_lines_eq(&got, &expected, "4d5611e5 in pieces");
}

#[track_caller]
fn assert_lines_eq(got: &str, expected: &str, what: &str) {
    let (g, e): (Vec<&str>, Vec<&str>) = (got.lines().collect(), expected.lines().collect());
    for (i, (a, b)) in g.iter().zip(&e).enumerate() {
        assert_eq!(a, b, "{what}: call {} differs", i + 1);
    }
    assert_eq!(g.len(), e.len(), "{what}: calls reported");
}
