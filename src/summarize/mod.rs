//! Floor summaries: implementations of the engine's
//! [`Summarizer`](crate::engine::summarizer::Summarizer) seam. The extractive
//! summarizer is the default; the static checkpoint is the fallback the
//! caller hands the engine for when a richer summarizer fails.

pub(crate) mod extractive;
pub(crate) mod llm;
pub(crate) mod static_checkpoint;

pub use extractive::Extractive;
pub use static_checkpoint::StaticCheckpoint;
