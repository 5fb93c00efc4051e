//! compactor: import agent transcripts into an append-only SQLite record and
//! project bounded, deterministic views of them for a model's context window.
//!
//! The library surface, what a harness embeds (the binary is [`main`]):
//! - the pure core: [`model`] (normalised messages, exact decimals),
//!   [`view`] (a view's canonical bytes, its hash, validation, a view as a
//!   client's session file) and [`engine`] (one model call: reconstruct,
//!   restore, measure, reduce, project; the [`Summarizer`] seam);
//! - [`store`] ([`store::Store`]: the record, append-only, and the
//!   compaction state) and [`transcript`] ([`transcript::ingest_file`]:
//!   a transcript file into the store; [`transcript::parse_bytes`]);
//! - [`session`]: the one way to run a stored task, as the commands and the
//!   live proxy do ([`session::run`]: a [`Run`](session::run::Run) opened
//!   on a scratch copy or in place, stepped or replayed call by call, grown
//!   as the record grows), with [`session::settings::RunSettings`] and the
//!   record index it reads ([`session::record::TaskRecordIndex`]);
//! - [`summarize`]: the summarizers that implement the seam
//!   ([`summarize::Extractive`], [`summarize::StaticCheckpoint`]).
//!
//! Everything else is the crate's own (`pub(crate)`): the command line
//! (`cmd`), the proxy's server, the hooks, the report page, the
//! probes. ARCHITECTURE.md has the layers and what each may import.
//!
//! [`Summarizer`]: engine::summarizer::Summarizer

/// The binary's global allocator (mimalloc, large blocks mapped on their own).
pub mod allocator;
pub(crate) mod cmd;
pub use cmd::main;

/// Parses `args` (the program name first) as the `compactor` binary would,
/// without running anything: the error clap prints when they do not parse.
/// The docs test holds every example in README and the guide to it.
#[doc(hidden)]
pub fn parse_command_line<I, T>(args: I) -> Result<(), String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    <cmd::Cli as clap::Parser>::try_parse_from(args)
        .map(drop)
        .map_err(|e| e.to_string())
}
pub mod engine;
pub(crate) mod fault;
pub(crate) mod hooks;
pub(crate) mod htmlreport;
pub(crate) mod launch;
pub mod model;
pub(crate) mod probe;
pub(crate) mod proxy;
/// How the binary's allocator returns freed memory to the system (the live
/// proxy calls it after a large request or answer).
pub use proxy::release_memory_with;
pub mod session;
pub mod store;
pub mod summarize;
pub(crate) mod sweep;
#[cfg(test)]
pub(crate) mod test_corpus;
pub mod transcript;
pub mod view;
