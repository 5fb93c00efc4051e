//! Property tests of the parser (the library directly): arbitrary bytes and
//! damaged fixtures never panic, under every `--format`, and an error always
//! points at a line that exists.

use compactor::model::Format;
use compactor::transcript::{ParseOptions, parse_bytes};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;

use crate::util::{read_testdata, testdata};

/// Every `--format` value: `auto` and the four formats.
const FORMATS: [Option<Format>; 5] = [
    None,
    Some(Format::ClaudeCode),
    Some(Format::Codex),
    Some(Format::OpenaiChat),
    Some(Format::Anthropic),
];

const FIXTURES: [&str; 12] = [
    "claude-code/small-session.jsonl",
    "claude-code/inline-sidechain.jsonl",
    "claude-code/with-subagent/c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94.jsonl",
    "codex/small-rollout.jsonl",
    "openai-chat/conversation.jsonl",
    "openai-chat/conversation.json",
    "anthropic/request.json",
    "anthropic/messages.jsonl",
    "invalid/truncated-line.jsonl",
    "invalid/bad-utf8.jsonl",
    "invalid/tool-use-without-id.jsonl",
    "invalid/orphan-tool-result.jsonl",
];

fn fixtures() -> &'static [Vec<u8>] {
    static DATA: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    DATA.get_or_init(|| read_testdata(&FIXTURES))
}

/// Lines in the input as an editor counts them (at least 1).
fn line_count(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    let unterminated = u64::from(bytes.last().is_some_and(|b| *b != b'\n'));
    (newlines + unterminated).max(1)
}

/// Parse under every format, with and without `--skip-invalid`.
fn parse_everywhere(bytes: &[u8]) -> Result<(), TestCaseError> {
    let lines = line_count(bytes);
    for format in FORMATS {
        for skip_invalid in [false, true] {
            let opts = ParseOptions {
                format,
                skip_invalid,
            };
            match parse_bytes(bytes, &opts) {
                Ok(parsed) => {
                    for s in &parsed.skipped {
                        prop_assert!(
                            (1..=lines).contains(&s.line),
                            "{format:?}: skipped line {} of {lines}: {s}",
                            s.line
                        );
                    }
                    for t in &parsed.tasks {
                        for m in &t.messages {
                            prop_assert!(
                                (1..=lines).contains(&m.line),
                                "{format:?}: message at line {} of {lines}",
                                m.line
                            );
                        }
                    }
                }
                Err(e) => {
                    prop_assert!(
                        (1..=lines).contains(&e.line),
                        "{format:?} skip_invalid={skip_invalid}: error at line {} of {lines}: {e}",
                        e.line
                    );
                    prop_assert!(e.column >= 1, "{format:?}: column {}: {e}", e.column);
                    prop_assert!(!e.message.is_empty());
                }
            }
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    InsertNewline(Index),
    Delete(Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), 1..=255u8).prop_map(|(i, x)| Mutation::Flip(i, x)),
        any::<Index>().prop_map(Mutation::InsertNewline),
        (any::<Index>(), 1..64usize).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

fn apply(mut data: Vec<u8>, m: &Mutation) -> Vec<u8> {
    if data.is_empty() {
        return data;
    }
    match m {
        Mutation::Truncate(i) => data.truncate(i.index(data.len())),
        Mutation::Flip(i, x) => {
            let at = i.index(data.len());
            data[at] ^= x;
        }
        Mutation::InsertNewline(i) => {
            let at = i.index(data.len() + 1);
            data.insert(at, b'\n');
        }
        Mutation::Delete(i, n) => {
            let at = i.index(data.len());
            let end = (at + n).min(data.len());
            data.drain(at..end);
        }
    }
    data
}

/// Bytes that look like JSON often enough to get past the first parse.
fn jsonish() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(&b"{"[..]),
        Just(&b"}"[..]),
        Just(&b"["[..]),
        Just(&b"]"[..]),
        Just(&b"\""[..]),
        Just(&b":"[..]),
        Just(&b","[..]),
        Just(&b"\n"[..]),
        Just(&b"\"type\""[..]),
        Just(&b"\"role\""[..]),
        Just(&b"\"content\""[..]),
        Just(&b"\"messages\""[..]),
        Just(&b"\"payload\""[..]),
        Just(&b"\"user\""[..]),
        Just(&b"\"assistant\""[..]),
        Just(&b"\"tool_use\""[..]),
        Just(&b"\"tool_result\""[..]),
        Just(&b"\"response_item\""[..]),
        Just(&b"\"message\""[..]),
        Just(&b"null"[..]),
        Just(&b"1"[..]),
        Just(&b"\xff"[..]),
    ];
    prop::collection::vec(token, 0..80).prop_map(|ts| ts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::fuzz::cases(96),
        // Failures are saved next to this file: tests/cli/parse_props.proptest-regressions.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        parse_everywhere(&bytes)?;
    }

    #[test]
    fn jsonish_bytes_never_panic(bytes in jsonish()) {
        parse_everywhere(&bytes)?;
    }

    #[test]
    fn damaged_fixtures_never_panic(
        which in any::<Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let all = fixtures();
        let mut data = all[which.index(all.len())].clone();
        for m in &mutations {
            data = apply(data, m);
        }
        parse_everywhere(&data)?;
    }
}

#[test]
fn line_count_counts_like_an_editor() {
    assert_eq!(line_count(b""), 1);
    assert_eq!(line_count(b"a"), 1);
    assert_eq!(line_count(b"a\n"), 1);
    assert_eq!(line_count(b"a\nb"), 2);
    assert_eq!(line_count(b"a\n\n"), 2);
}

#[test]
fn valid_fixtures_parse_under_auto() {
    for (name, data) in FIXTURES.iter().zip(fixtures()) {
        let parsed = parse_bytes(data, &ParseOptions::default());
        if name.starts_with("invalid/") && *name != "invalid/orphan-tool-result.jsonl" {
            let err = parsed.err().unwrap_or_else(|| panic!("{name} must fail"));
            assert!(
                err.line >= 1 && err.line <= line_count(data),
                "{name}: {err}"
            );
        } else {
            let parsed = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!parsed.tasks.is_empty(), "{name}");
        }
    }
}

#[test]
fn a_truncated_document_names_a_line_that_exists() {
    // serde_json puts the end of a newline-terminated document on the line
    // after it; the reported location must be a real line.
    for rel in ["anthropic/request.json", "openai-chat/conversation.json"] {
        let data = std::fs::read(testdata(rel)).unwrap();
        let text = std::str::from_utf8(&data).unwrap();
        let cut = text[..data.len() / 2].rfind('\n').unwrap() + 1;
        let truncated = &data[..cut];
        for format in FORMATS {
            let opts = ParseOptions {
                format,
                skip_invalid: false,
            };
            let err = parse_bytes(truncated, &opts)
                .err()
                .unwrap_or_else(|| panic!("{rel} cut in half must fail ({format:?})"));
            let lines = line_count(truncated);
            assert!(
                (1..=lines).contains(&err.line),
                "{rel} {format:?}: line {} of {lines}: {err}",
                err.line
            );
        }
    }
}
