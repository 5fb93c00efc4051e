//! Importing OpenCode's store (`opencode.db`): one task per session, read in
//! one read transaction of the store and written in one transaction of ours.
//!
//! The store is skipped unread when it and its WAL have the size and
//! modification time they had at the last import (OpenCode's commits go to
//! the WAL, so the database file alone says nothing). A session OpenCode
//! rewrote after its last import (a revert, an edit) keeps its stored record
//! and is named in a warning; the other sessions are imported.

use std::path::{Path, PathBuf};

use super::{Failed, FileReport, ImportStatus, IngestError, IngestOptions, LocatedWarning};
use super::{SkippedReport, mtime_ns, store_task, unchanged_report};
use crate::model::Format;
use crate::store::{Store, StoreError};
use crate::transcript::TaskSet;
use crate::transcript::opencode::{self, Database, RowError, read_session, task_ids};

/// Import OpenCode's store at `path` (shown as `shown`, recorded as `canonical`).
pub(super) fn ingest_opencode(
    store: &mut Store,
    path: &Path,
    canonical: &str,
    shown: &str,
    opts: &IngestOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<FileReport, IngestError> {
    let row_err = |error: RowError| IngestError::Row {
        path: shown.to_string(),
        error,
    };
    let store_err = |source| IngestError::Store {
        path: shown.to_string(),
        source,
    };
    if opts.task.is_some() {
        return Err(row_err(RowError {
            row: "--task".to_string(),
            message: "names one task, and an OpenCode database holds one per session; import it without --task".to_string(),
        }));
    }
    let io_err = |source| IngestError::Io {
        path: shown.to_string(),
        source,
    };
    if !opencode::is_sqlite(path).map_err(io_err)? {
        return Err(row_err(RowError {
            row: "the file".to_string(),
            message: format!("is not an SQLite database; {}", opencode::EXPECTED),
        }));
    }
    // Opened first: SQLite makes the WAL and its index beside a store that
    // has none when it is first read, which must not count as a change.
    let db = Database::open(path).map_err(row_err)?;
    // Taken before reading: a commit after it changes it, so the next
    // import reads the store again.
    let (bytes, stat) = fingerprint(path).map_err(io_err)?;
    if store.reader().source(canonical).map_err(store_err)? == Some((bytes, stat.to_vec())) {
        return unchanged_report(store, canonical, bytes, shown);
    }
    let snapshot = db.snapshot().map_err(row_err)?;
    let sessions = snapshot.sessions().map_err(row_err)?;
    let ids = task_ids(&sessions);
    let mut report = FileReport::empty(
        shown,
        Format::Opencode.as_str().to_string(),
        ImportStatus::Imported,
        bytes,
    );
    let mut read_bytes = 0u64;
    store
        .transaction(|tx| -> Result<(), Failed> {
            let format = Format::Opencode;
            let source_id = tx.upsert_source(canonical, format, bytes, 0, &stat)?;
            // The size-and-time shortcut of line files never applies here.
            tx.set_source_stat(canonical, None)?;
            for s in &sessions {
                let rows = snapshot
                    .messages(&s.id)
                    .map_err(|e| Failed::Ingest(row_err(e)))?;
                let mut set = TaskSet::default();
                let read = read_session(s, &rows, opts.skip_invalid, set.main())
                    .map_err(|e| Failed::Ingest(row_err(e)))?;
                let mut t = set
                    .finish()
                    .map_err(|e| {
                        Failed::Ingest(row_err(RowError {
                            row: format!("session {}", s.id),
                            message: e.message,
                        }))
                    })?
                    .pop()
                    .expect("one task per session");
                report.lines += read.parts;
                report.not_conversation_lines += read.not_conversation;
                report.incomplete_lines += read.held_back;
                for (k, n) in read.unknown {
                    *report.unknown_line_types.entry(k).or_default() += n;
                }
                report
                    .skipped_lines
                    .extend(read.skipped.into_iter().map(|(line, message)| SkippedReport {
                        line,
                        column: 0,
                        message: format!("session {}: {message}", s.id),
                    }));
                read_bytes += read.bytes;
                progress(read_bytes);
                if !t.has_conversation() {
                    continue;
                }
                let id = &ids[&s.id];
                t.parent_session = s.parent_id.as_ref().and_then(|p| ids.get(p)).cloned();
                match store_task(tx, source_id, format, id, &t, &opts.rules, &mut report) {
                    Err(Failed::Store(StoreError::Diverged { row, .. })) => {
                        report.warnings.push(LocatedWarning {
                            task: id.clone(),
                            line: row,
                            message: format!(
                                "OpenCode rewrote session {} after its last import (a revert or an edit), from stored row {row} on: its record is kept as it was and nothing of it is added",
                                s.id
                            ),
                        });
                    }
                    other => other?,
                }
            }
            tx.upsert_source(canonical, format, bytes, report.lines, &stat)?;
            Ok(())
        })
        .map_err(|e| e.into_ingest(shown))?;
    Ok(report)
}

/// The store's and its WAL's sizes added up, and a hash of both files' size
/// and modification time: what says the store changed.
fn fingerprint(path: &Path) -> std::io::Result<(u64, [u8; 32])> {
    let mut wal = path.as_os_str().to_os_string();
    wal.push("-wal");
    let mut h = blake3::Hasher::new();
    h.update(b"opencode store stat\0");
    let mut bytes = 0u64;
    for p in [path.to_path_buf(), PathBuf::from(wal)] {
        match std::fs::metadata(&p) {
            Ok(m) => {
                bytes += m.len();
                h.update(&m.len().to_le_bytes());
                h.update(&mtime_ns(&m).unwrap_or(0).to_le_bytes());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                h.update(b"absent\0");
            }
            Err(e) => return Err(e),
        }
    }
    Ok((bytes, *h.finalize().as_bytes()))
}
