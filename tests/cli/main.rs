//! Integration tests: one binary, one module per command.
//!
//! Every test runs the real `compactor` binary in a hermetic environment
//! (see `util`): a temporary HOME/XDG_DATA_HOME, its own store, no
//! COMPACTOR_*/NO_COLOR leftovers. Human reports are snapshotted with insta
//! (stdout, stderr and exit status together, temporary paths redacted).
//! Snapshots live in `tests/cli/snapshots/`; update them with
//! `INSTA_UPDATE=always cargo test` and review the diff.
//!
//! Corpus tests read `$COMPACTOR_CORPUS` (default `../shared/corpus`); those
//! and the tests that drive the real clients are compiled as ignored when
//! `build.rs` did not find what they need (see `skips`), and still return
//! early, saying so, if it went away since.

mod architecture;
mod chat;
mod check;
mod compact;
mod completions;
mod constraints;
mod corpus;
mod corpus_engine;
mod diff;
mod discover;
mod docs;
mod fuzz;
mod hooks;
mod hostile;
mod import;
mod json_schema;
mod llm;
mod mcp;
mod opencode;
mod parse_props;
mod probe;
mod project;
mod proxy;
mod readme;
mod reliability;
mod replay;
mod report;
mod resume;
mod roundtrip;
mod run;
mod search;
mod show;
mod skips;
mod state;
mod storage;
mod sweep;
mod tasknames;
mod tasks;
mod util;
mod watch;
