//! Fuzzing on stable Rust, end to end through the library: mutated fixtures
//! (bytes flipped, lines cut, duplicated or swapped, numbers made huge or
//! negative, strings given control characters) are imported into a store,
//! and every task imported is replayed under an arbitrary budget. Import
//! returns Ok or a located error; replay returns Ok (every view legal) or a
//! clear error; nothing panics.
//!
//! `PROPTEST_CASES` sets the case count (default 48); `fuzz/run` runs this
//! and the other property targets for a bounded time with many more cases.
//! A failure is saved under `proptest-regressions/` and replayed first by
//! every later run; crashes found so far are also pinned as plain tests below.

use std::path::Path;

use compactor::engine::budget::Budget;
use compactor::engine::estimate::CharsPerToken;
use compactor::session::record::TaskRecordIndex;
use compactor::session::run::{Placement, ReplayOptions, Run};
use compactor::session::settings::RunSettings;
use compactor::store::{Store, StoreError};
use compactor::summarize::Extractive;
use compactor::transcript::{IngestError, IngestOptions, ingest_file};
use compactor::view::validate;
use proptest::prelude::*;
use proptest::sample::Index;

use crate::util::{read_testdata, testdata};

/// The case count: `PROPTEST_CASES`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const FIXTURES: [&str; 7] = [
    "fixtures/claude-disposable-interrupt.jsonl",
    "fixtures/codex-tenant-registry.jsonl",
    "fixtures/anthropic-breakthrough.json",
    "claude-code/small-session.jsonl",
    "codex/small-rollout.jsonl",
    "openai-chat/conversation.jsonl",
    "anthropic/messages.jsonl",
];

#[derive(Debug, Clone)]
enum Mutation {
    FlipByte(Index, u8),
    CutLine(Index),
    DuplicateLine(Index),
    SwapLines(Index, Index),
    HugeNumber(Index, u8),
    ControlChars(Index),
    Truncate(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<(Index, u8)>().prop_map(|(i, b)| Mutation::FlipByte(i, b)),
        any::<Index>().prop_map(Mutation::CutLine),
        any::<Index>().prop_map(Mutation::DuplicateLine),
        any::<(Index, Index)>().prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<(Index, u8)>().prop_map(|(i, k)| Mutation::HugeNumber(i, k)),
        any::<Index>().prop_map(Mutation::ControlChars),
        any::<Index>().prop_map(Mutation::Truncate),
    ]
}

const NUMBERS: [&str; 6] = [
    "18446744073709551615",
    "-1",
    "99999999999999999999999",
    "1e308",
    "0.5",
    "1099511627776",
];

fn apply(data: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = data.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    match m {
        Mutation::FlipByte(i, b) => {
            let mut d = data;
            if !d.is_empty() {
                let at = i.index(d.len());
                d[at] = *b;
            }
            return d;
        }
        Mutation::Truncate(i) => {
            let mut d = data;
            d.truncate(i.index(d.len().max(1)));
            return d;
        }
        Mutation::CutLine(i) => {
            let at = i.index(lines.len());
            lines.remove(at);
        }
        Mutation::DuplicateLine(i) => {
            let at = i.index(lines.len());
            let l = lines[at].clone();
            lines.insert(at, l);
        }
        Mutation::SwapLines(a, b) => {
            let (a, b) = (a.index(lines.len()), b.index(lines.len()));
            lines.swap(a, b);
        }
        Mutation::HugeNumber(i, k) => {
            // Replace the i-th run of digits in the file with an odd number.
            let text = String::from_utf8_lossy(&data).into_owned();
            let runs: Vec<(usize, usize)> = digit_runs(&text);
            if runs.is_empty() {
                return data;
            }
            let (s, e) = runs[i.index(runs.len())];
            let n = NUMBERS[*k as usize % NUMBERS.len()];
            return format!("{}{n}{}", &text[..s], &text[e..]).into_bytes();
        }
        Mutation::ControlChars(i) => {
            // Put escapes into the i-th JSON string that has room.
            let text = String::from_utf8_lossy(&data).into_owned();
            let quotes: Vec<usize> = text.match_indices("\": \"").map(|(p, _)| p + 4).collect();
            let quotes = if quotes.is_empty() {
                text.match_indices("\":\"").map(|(p, _)| p + 3).collect()
            } else {
                quotes
            };
            if quotes.is_empty() {
                return data;
            }
            let at = quotes[i.index(quotes.len())];
            return format!("{}\\u001b[2J\\u0007\\u0000{}", &text[..at], &text[at..]).into_bytes();
        }
    }
    lines.join(&b'\n')
}

fn digit_runs(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || b[i - 1] == b':' || b[i - 1] == b' ') {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

fn budget() -> impl Strategy<Value = Budget> {
    (2_000u64..250_000, 0u64..30_000, 0u32..8).prop_map(|(window, reserved, protect)| Budget {
        window,
        output_reserved: reserved.min(window / 2),
        protect_recent_steps: protect,
        ..Budget::default()
    })
}

/// Import `bytes` (written to `dir`) and replay every imported task.
fn import_and_replay(dir: &Path, bytes: &[u8], budget: Budget) -> Result<(), TestCaseError> {
    let path = dir.join("input.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let mut store = Store::open_memory().unwrap();
    let report = match ingest_file(&mut store, &path, &IngestOptions::default(), &mut |_| {}) {
        Ok(r) => r,
        Err(IngestError::Parse { error, .. }) => {
            // A located error: a line that exists, and a message.
            let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
            prop_assert!(
                error.line >= 1 && error.line <= lines,
                "line {} of {lines}",
                error.line
            );
            prop_assert!(!error.message.is_empty());
            return Ok(());
        }
        Err(IngestError::Io { .. }) => return Ok(()),
        // Bytes that open as an SQLite database are read as OpenCode's store.
        Err(IngestError::Row { error, .. }) => {
            prop_assert!(!error.message.is_empty());
            return Ok(());
        }
        Err(e @ IngestError::Store { .. }) => {
            // Only the append-only guard may refuse at store level here.
            let s = format!("{e:#}");
            prop_assert!(!s.is_empty());
            return Ok(());
        }
    };
    let est = CharsPerToken::default();
    for t in &report.tasks {
        let index = TaskRecordIndex::load(&store, &t.id).unwrap();
        let calls = index.calls();
        if calls == 0 {
            continue;
        }
        let settings = RunSettings::new(budget, &est, &Extractive);
        let opts = ReplayOptions::from_start(calls, Default::default());
        let here = Placement::InPlace {
            record_progress: false,
        };
        let mut bad = Vec::new();
        let out = Run::open(&store, &index, settings, here).and_then(|mut run| {
            run.replay(&mut store, &opts, |row, out| -> Result<(), StoreError> {
                let v = validate(&out.view);
                if !v.is_empty() {
                    bad.push(format!("call {}: {v:?}", row.call));
                }
                Ok(())
            })
        });
        prop_assert!(out.is_ok(), "replay of {}: {:?}", t.id, out.err());
        prop_assert!(bad.is_empty(), "illegal views: {bad:?}");
    }
    Ok(())
}

fn fixtures() -> &'static [Vec<u8>] {
    static DATA: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    DATA.get_or_init(|| read_testdata(&FIXTURES))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(48),
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct("proptest-regressions/fuzz.txt"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_transcripts_import_and_replay_without_panicking(
        which in 0..FIXTURES.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
        b in budget(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut data = fixtures()[which].clone();
        for m in &mutations {
            data = apply(data, m);
        }
        import_and_replay(dir.path(), &data, b)?;
    }

    #[test]
    fn arbitrary_bytes_import_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempfile::tempdir().unwrap();
        import_and_replay(dir.path(), &bytes, Budget::default())?;
    }
}

/// Crash found by fuzzing: a usage count of u64::MAX overflowed the prompt
/// sum in replay (debug builds panicked). Such counts are now refused at import.
#[test]
fn regression_enormous_token_counts_are_refused_not_summed() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(testdata("fixtures/claude-disposable-interrupt.jsonl")).unwrap();
    let text = String::from_utf8(data).unwrap().replacen(
        "\"cache_read_input_tokens\":3017",
        "\"cache_read_input_tokens\":18446744073709551615",
        1,
    );
    assert!(text.contains("18446744073709551615"));
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, &text).unwrap();
    let mut store = Store::open_memory().unwrap();
    let err = ingest_file(&mut store, &path, &IngestOptions::default(), &mut |_| {}).unwrap_err();
    assert!(
        format!("{err:#}")
            .contains(":2:1: usage field \"cache_read_input_tokens\" is 18446744073709551615"),
        "{err:#}"
    );
    import_and_replay(dir.path(), text.as_bytes(), Budget::default()).unwrap();
}
