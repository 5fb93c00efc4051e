//! Reading the raw record: a task's rows, their heads, usage and sources.

use rusqlite::{OptionalExtension, params};

use super::*;

impl Reader<'_> {
    pub fn task(&self, id: &str) -> Result<Option<TaskInfo>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {TASK_COLUMNS} FROM task WHERE id = ?1"),
                [id],
                TaskInfo::from_row,
            )
            .optional()?)
    }

    /// All tasks, ordered by id.
    pub fn tasks(&self) -> Result<Vec<TaskInfo>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {TASK_COLUMNS} FROM task ORDER BY id"))?;
        let rows = stmt.query_map([], TaskInfo::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The source file a task's latest row was imported from.
    pub fn task_source(&self, task_id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT s.path FROM task_message m JOIN import_source s ON s.id = m.source_id
                 WHERE m.task_id = ?1 ORDER BY m.rowid DESC LIMIT 1",
                [task_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Per task: its latest recorded timestamp (a live task's calls and
    /// answers count, as the proxy stamps them) and its last row's rowid
    /// (how recently it was imported), for "the most recently active task".
    pub fn task_activity(&self) -> Result<Vec<(String, Option<String>, i64)>> {
        let mut stmt = self.conn.prepare(
            "SELECT task_id, max(timestamp), max(rowid) FROM task_message GROUP BY task_id ORDER BY task_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        let mut out: Vec<(String, Option<String>, i64)> = rows.collect::<rusqlite::Result<_>>()?;
        let live: std::collections::BTreeMap<String, String> = self
            .proxy_activity()?
            .into_iter()
            .filter_map(|a| Some((a.task_id, a.last?)))
            .collect();
        for (task, at, _) in &mut out {
            if let Some(last) = live.get(task) {
                *at = std::cmp::max(at.take(), Some(last.clone()));
            }
        }
        Ok(out)
    }

    /// The rowid of a task's last row (how recently it was recorded), read
    /// through the record's primary key: no scan of the table.
    pub fn last_rowid(&self, task_id: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT rowid FROM task_message WHERE task_id = ?1 ORDER BY seq DESC LIMIT 1",
            )?
            .query_row([task_id], |r| r.get(0))
            .optional()?)
    }

    /// The generation rows among the `n` rows before `seq`, latest first
    /// (their seqs: no content is read).
    pub fn generation_rows_before(&self, task_id: &str, seq: u64, n: u64) -> Result<Vec<u64>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq FROM task_message WHERE task_id = ?1 AND seq < ?2 AND seq >= ?3
             AND kind = 'generation' ORDER BY seq DESC",
        )?;
        let rows = stmt.query_map(
            params![task_id, seq as i64, seq.saturating_sub(n) as i64],
            |r| r.get::<_, i64>(0),
        )?;
        Ok(rows
            .map(|r| r.map(|s| s as u64))
            .collect::<rusqlite::Result<_>>()?)
    }

    /// Whether `msgs` would extend (or be a prefix of) what is stored for the
    /// task: true when the task is absent or agrees with them row for row.
    pub fn consistent_with(&self, task_id: &str, msgs: &[Message]) -> Result<bool> {
        let stored = self.message_count(task_id)?;
        let n = stored.min(msgs.len() as u64);
        if n == 0 {
            return Ok(true);
        }
        let h: Vec<u8> = self.conn.query_row(
            "SELECT row_hash FROM task_message WHERE task_id = ?1 AND seq = ?2",
            params![task_id, (n - 1) as i64],
            |r| r.get(0),
        )?;
        Ok(chain_of(&msgs[..n as usize])
            .last()
            .is_some_and(|c| c[..] == h[..]))
    }

    /// The `seq` of the task's last row of one of `kinds` (`None`: it has
    /// none). One query that reads each row's kind only, rather than every
    /// row's head.
    pub fn last_seq_of_kinds(&self, task_id: &str, kinds: &[Kind]) -> Result<Option<u64>> {
        if kinds.is_empty() {
            return Ok(None);
        }
        let marks = vec!["?"; kinds.len()].join(", ");
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT max(seq) FROM task_message WHERE task_id = ? AND kind IN ({marks})"
        ))?;
        let args = std::iter::once(task_id).chain(kinds.iter().map(|k| k.as_str()));
        let seq: Option<i64> = stmt.query_row(rusqlite::params_from_iter(args), |r| r.get(0))?;
        Ok(seq.map(|s| s as u64))
    }

    /// Number of rows stored for a task.
    pub fn message_count(&self, task_id: &str) -> Result<u64> {
        Ok(self.conn.query_row(
            "SELECT count(*) FROM task_message WHERE task_id = ?1",
            [task_id],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// Rows with `from <= seq < to`, in order.
    pub fn messages(&self, task_id: &str, from: u64, to: u64) -> Result<Vec<StoredMessage>> {
        let mut out = Vec::new();
        self.each_stored(task_id, from, to, |m| {
            out.push(m);
            Ok::<(), StoreError>(())
        })?;
        Ok(out)
    }

    /// The whole record of a task.
    pub fn all_messages(&self, task_id: &str) -> Result<Vec<StoredMessage>> {
        self.messages(task_id, 0, u64::MAX)
    }

    /// A task's rows of one kind, in order (the others not read: a task's
    /// tool calls are found among its generations without decoding its
    /// tool results).
    pub fn messages_of_kind(&self, task_id: &str, kind: Kind) -> Result<Vec<StoredMessage>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS}
             FROM task_message m LEFT JOIN import_source s ON s.id = m.source_id
             WHERE m.task_id = ?1 AND m.kind = ?2 ORDER BY m.seq"
        ))?;
        let mut rows = stmt.query(params![task_id, kind.as_str()])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(StoredMessage::from_row(task_id, r)?);
        }
        Ok(out)
    }

    /// The whole record of a task, its rows only.
    pub fn task_rows(&self, task_id: &str) -> Result<Vec<Message>> {
        let mut out = Vec::new();
        self.each_stored(task_id, 0, u64::MAX, |s| {
            out.push(s.message);
            Ok::<(), StoreError>(())
        })?;
        Ok(out)
    }

    /// Rows with `from <= seq < to`, in order, each handed to `f` as it is
    /// decoded: one row in memory at a time, however long the range.
    pub fn each_stored<E: From<StoreError>>(
        &self,
        task_id: &str,
        from: u64,
        to: u64,
        mut f: impl FnMut(StoredMessage) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MESSAGE_COLUMNS}
                 FROM task_message m LEFT JOIN import_source s ON s.id = m.source_id
                 WHERE m.task_id = ?1 AND m.seq >= ?2 AND m.seq < ?3 ORDER BY m.seq"
            ))
            .map_err(StoreError::from)?;
        let to = to.min(i64::MAX as u64);
        let mut rows = stmt
            .query(params![task_id, from as i64, to as i64])
            .map_err(StoreError::from)?;
        while let Some(r) = rows.next().map_err(StoreError::from)? {
            f(StoredMessage::from_row(task_id, r)?)?;
        }
        Ok(())
    }

    /// Every row's [`RowHead`], in order, without reading any content.
    #[cfg(test)]
    pub fn row_heads(&self, task_id: &str) -> Result<Vec<RowHead>> {
        let mut out = Vec::new();
        self.each_row_head(task_id, |h| out.push(h))?;
        Ok(out)
    }

    /// Every row's [`RowHead`], in order, without reading any content, handed
    /// to `f` one at a time.
    pub fn each_row_head(&self, task_id: &str, mut f: impl FnMut(RowHead)) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, kind, turn, step, gen_id, usage, timestamp FROM task_message
             WHERE task_id = ?1 ORDER BY seq",
        )?;
        let mut rows = stmt.query(params![task_id])?;
        let mut n = 0i64;
        while let Some(r) = rows.next()? {
            let seq: i64 = r.get(0)?;
            let corrupt =
                |what: &str| StoreError::Corrupt(format!("task {task_id} row {seq}: {what}"));
            if seq != n {
                return Err(corrupt("rows are not numbered from 0 without gaps"));
            }
            let kind: String = r.get(1)?;
            let kind =
                Kind::parse(&kind).ok_or_else(|| corrupt(&format!("unknown kind {kind:?}")))?;
            let usage = match r.get::<_, Option<String>>(5)? {
                Some(u) => {
                    Some(serde_json::from_str(&u).map_err(|e| corrupt(&format!("usage: {e}")))?)
                }
                None => None,
            };
            f(RowHead {
                kind,
                turn: r.get(2)?,
                step: r.get(3)?,
                gen_id: r.get(4)?,
                usage,
                timestamp: r.get(6)?,
            });
            n += 1;
        }
        Ok(())
    }

    /// The last import of a source path: (bytes consumed, hash).
    pub fn source(&self, path: &str) -> Result<Option<(u64, Vec<u8>)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT bytes, hash FROM import_source WHERE path = ?1",
                [path],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, Vec<u8>>(1)?)),
            )
            .optional()?)
    }

    /// The size and modification time a source had at its last import.
    pub fn source_stat(&self, path: &str) -> Result<Option<(u64, i64)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT file_bytes, mtime_ns FROM import_source WHERE path = ?1",
                [path],
                |r| Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?)),
            )
            .optional()?
            .and_then(|(b, m)| Some((b? as u64, m?))))
    }

    /// The tasks that have rows from a source path, in first-row order.
    pub fn tasks_of_source(&self, path: &str) -> Result<Vec<(String, u64)>> {
        let mut stmt = self.conn.prepare(
            "SELECT m.task_id, count(*), min(m.rowid) AS first FROM task_message m
             JOIN import_source s ON s.id = m.source_id WHERE s.path = ?1
             GROUP BY m.task_id ORDER BY first",
        )?;
        let rows = stmt.query_map([path], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Figures for `compactor tasks`, computed from the record's history
    /// (an answer a retry superseded left out).
    pub fn task_stats(&self, task_id: &str) -> Result<TaskStats> {
        Ok(stats_of(self.history_rows(task_id)?.iter()))
    }

    /// The task's history: its rows, less the answers a live client's retry
    /// superseded (`proxy_superseded`).
    pub fn history_rows(&self, task_id: &str) -> Result<Vec<Message>> {
        let superseded: std::collections::HashSet<u64> = self
            .proxy_superseded(task_id)?
            .into_iter()
            .map(|s| s.seq)
            .collect();
        let mut out = Vec::new();
        self.each_stored(task_id, 0, u64::MAX, |s| {
            if !superseded.contains(&s.seq) {
                out.push(s.message);
            }
            Ok::<(), StoreError>(())
        })?;
        Ok(out)
    }
}
