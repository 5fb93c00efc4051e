//! Where the hooks call the rest of the library: import a session, load its
//! record, record what a hook saw of the client's compaction. Kept in one
//! place so the hooks follow the library's seams as they move.

use std::path::Path;

use crate::model::{Block, Format, Kind, Message};
use crate::session::record::TaskRecordIndex;
use crate::store::{CompactionHalf, Store, StoreError};
use crate::transcript::ingest::{IngestError, IngestOptions, ingest_file};
use crate::transcript::{ParseOptions, parse_bytes};

use super::Client;

#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("cannot import the transcript {0}")]
    Import(String, #[source] Box<IngestError>),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the transcript {0} holds no conversation yet")]
    NoTask(String),
    #[error("cannot read the transcript {0}")]
    Read(String, #[source] Box<dyn std::error::Error + Send + Sync>),
}

impl AdapterError {
    /// The store stayed busy (another process writing) past the wait allowed.
    pub fn is_busy(&self) -> bool {
        match self {
            AdapterError::Import(_, e) => e.is_busy(),
            AdapterError::Store(e) => e.is_busy(),
            AdapterError::NoTask(_) | AdapterError::Read(..) => false,
        }
    }
}

/// A session's record after the hook imported it (or, when the store is
/// busy, as its transcript alone holds it).
pub struct Session {
    pub task: String,
    /// Model calls recorded so far: the compaction follows the last of them.
    pub calls: u32,
    /// The task's whole record.
    pub rows: Vec<Message>,
}

fn format_of(client: Client) -> Format {
    match client {
        Client::ClaudeCode => Format::ClaudeCode,
        Client::Codex => Format::Codex,
        Client::GeminiCli => Format::GeminiCli,
    }
}

/// Import `transcript` into `store` (only what was added since the last
/// import) and load its main task's record.
pub fn import_session(
    store: &mut Store,
    transcript: &Path,
    client: Client,
) -> Result<Session, AdapterError> {
    let shown = transcript.display().to_string();
    let opts = IngestOptions {
        format: Some(format_of(client)),
        ..IngestOptions::default()
    };
    let report = ingest_file(store, transcript, &opts, &mut |_| {})
        .map_err(|e| AdapterError::Import(shown.clone(), Box::new(e)))?;
    let task = report
        .main_task()
        .ok_or(AdapterError::NoTask(shown))?
        .to_string();
    let index = TaskRecordIndex::load(store, &task)?;
    Ok(Session {
        calls: index.calls(),
        rows: index.all_rows()?,
        task,
    })
}

/// The session as its transcript alone holds it, nothing stored: what a
/// hook answers from when the store stays busy. `name` names it when the
/// transcript names no session.
pub fn read_session(
    transcript: &Path,
    client: Client,
    name: &str,
) -> Result<Session, AdapterError> {
    let shown = transcript.display().to_string();
    let bytes =
        std::fs::read(transcript).map_err(|e| AdapterError::Read(shown.clone(), e.into()))?;
    let opts = ParseOptions {
        format: Some(format_of(client)),
        skip_invalid: false,
    };
    let parsed = parse_bytes(&bytes, &opts)
        .map_err(|e| AdapterError::Read(shown.clone(), e.to_string().into()))?;
    let main = parsed
        .tasks
        .into_iter()
        .find(|t| t.key.is_empty())
        .filter(|t| !t.messages.is_empty())
        .ok_or(AdapterError::NoTask(shown))?;
    let calls = main
        .messages
        .iter()
        .filter(|m| m.kind == Kind::Generation)
        .map(|m| m.step)
        .max()
        .unwrap_or(0);
    Ok(Session {
        task: main
            .meta
            .session_id
            .clone()
            .unwrap_or_else(|| name.to_string()),
        calls,
        rows: main.messages,
    })
}

/// The text of the client's own latest summary in the record, if any.
pub fn latest_client_summary(rows: &[Message]) -> Option<String> {
    let m = rows.iter().rev().find(|m| m.kind == Kind::CompactSummary)?;
    let text: Vec<&str> = m
        .content
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    Some(text.join("\n"))
}

/// Record one half of the compaction that followed call `session.calls`.
pub fn record(
    store: &mut Store,
    session: &Session,
    history_rows: usize,
    client: Client,
    half: &CompactionHalf<'_>,
) -> Result<(), AdapterError> {
    store.transaction(|tx| {
        tx.record_client_compaction(
            &session.task,
            session.calls,
            history_rows as u64,
            client.name(),
            half,
        )
    })?;
    Ok(())
}
