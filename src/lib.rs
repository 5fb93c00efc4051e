//! compactor: import agent transcripts into an append-only SQLite record and
//! project bounded, deterministic views of them for a model's context window.
//!
//! Layout: `transcript` parses formats into the normalised `model`; `store`
//! keeps the record and the compaction stores; `engine` is the pure
//! projection; `cmd` holds one module per subcommand.

pub mod cli;
pub mod cmd;
pub mod decimal;
pub mod driver;
pub mod engine;
pub mod exit;
pub mod htmlreport;
pub mod ingest;
pub mod model;
pub mod render;
pub mod replay;
pub mod store;
pub mod style;
pub mod summarize;
pub mod transcript;
pub mod view;
