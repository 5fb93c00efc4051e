//! compactor: import agent transcripts into an append-only SQLite record and
//! project bounded, deterministic views of them for a model's context window.
//!
//! Layers (ARCHITECTURE.md has the table and what each may import):
//! - core, pure: [`model`], [`view`] (canonical bytes, validation), [`engine`]
//!   (the projection, and the summarizer seam it owns), `probe` (fidelity:
//!   facts from the record, scored on a view);
//! - [`summarize`] implements that seam; [`store`] keeps the record and the
//!   compaction stores; [`transcript`] parses formats and ingests them;
//! - [`session`] drives the engine over a stored task call by call; `hooks`
//!   runs inside a client's own compaction (its settings, its Task Context);
//! - `cmd` (with `cli`) is the command line; [`main`] is all the binary calls.

pub(crate) mod cli;
pub(crate) mod cmd;
pub use cmd::main;
pub mod engine;
pub(crate) mod fault;
pub(crate) mod hooks;
pub(crate) mod htmlreport;
pub mod model;
pub(crate) mod probe;
pub mod proxy;
pub mod session;
pub mod store;
pub mod summarize;
pub(crate) mod sweep;
pub mod transcript;
pub mod view;
