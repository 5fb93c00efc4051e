//! `summary_cache`: summaries a model wrote, keyed by the exact request.
//!
//! The cache has its own connection to the store file, so a run whose engine
//! works on a scratch copy (a what-if replay, `check`) still reads and fills
//! the user's store. Each put commits at once: a summary is stored before the
//! engine uses it, so a killed run never pays for the same request twice.

use rusqlite::{OptionalExtension, params};

use super::{DbLocation, Result, Store};

/// One cached model summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedSummary {
    pub summarizer: String,
    pub summary: String,
    /// Lines re-inserted from the extractive summary when it was minted.
    pub repaired: Vec<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The request-keyed summary cache of one store.
pub struct SummaryCache {
    store: Store,
}

impl SummaryCache {
    /// Open the cache of the store at `location` (migrating it if needed). An
    /// in-memory location gets a private cache that lives as long as this value.
    pub fn open(location: &DbLocation) -> Result<SummaryCache> {
        Ok(SummaryCache {
            store: Store::open(location)?,
        })
    }

    pub fn get(&self, key: &str) -> Result<Option<CachedSummary>> {
        self.store
            .conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM summary_cache WHERE request_key = ?1"
            ))?
            .query_row([key], SummaryRow::decode)
            .optional()?
            .map(SummaryRow::into_summary)
            .transpose()
    }

    /// Store `entry` under `key` (first write wins: the cache is append-only).
    pub fn put(&mut self, key: &str, entry: &CachedSummary) -> Result<()> {
        let repaired = serde_json::to_string(&entry.repaired).expect("strings serialise");
        self.store.transaction(|tx| -> Result<()> {
            tx.tx
                .prepare_cached(&format!(
                    "INSERT INTO summary_cache ({COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(request_key) DO NOTHING"
                ))?
                .execute(params![
                    key,
                    entry.summarizer,
                    entry.summary,
                    repaired,
                    entry.input_tokens as i64,
                    entry.output_tokens as i64
                ])?;
            Ok(())
        })
    }
}

/// The columns of `summary_cache`, in one place (written and read in this order).
const COLUMNS: &str = "request_key, summarizer, summary, repaired, input_tokens, output_tokens";

/// One row of `summary_cache`, decoded by column name.
struct SummaryRow {
    request_key: String,
    summarizer: String,
    summary: String,
    repaired: String,
    input_tokens: i64,
    output_tokens: i64,
}

impl SummaryRow {
    fn decode(r: &rusqlite::Row<'_>) -> rusqlite::Result<SummaryRow> {
        Ok(SummaryRow {
            request_key: r.get("request_key")?,
            summarizer: r.get("summarizer")?,
            summary: r.get("summary")?,
            repaired: r.get("repaired")?,
            input_tokens: r.get("input_tokens")?,
            output_tokens: r.get("output_tokens")?,
        })
    }

    fn into_summary(self) -> Result<CachedSummary> {
        let repaired: Vec<String> = serde_json::from_str(&self.repaired).map_err(|e| {
            super::StoreError::Corrupt(format!("summary cache entry {}: {e}", self.request_key))
        })?;
        Ok(CachedSummary {
            summarizer: self.summarizer,
            summary: self.summary,
            repaired,
            input_tokens: self.input_tokens.max(0) as u64,
            output_tokens: self.output_tokens.max(0) as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_put_is_read_back_by_another_connection_and_the_first_write_wins() {
        let dir = tempfile::tempdir().unwrap();
        let loc = DbLocation::File(dir.path().join("s.db"));
        let e = CachedSummary {
            summarizer: "llm:openai:m".into(),
            summary: "## Requests\n- #1: x\n".into(),
            repaired: vec!["- #1: x".into()],
            input_tokens: 10,
            output_tokens: 5,
        };
        SummaryCache::open(&loc).unwrap().put("k", &e).unwrap();
        let mut other = SummaryCache::open(&loc).unwrap();
        assert_eq!(other.get("k").unwrap(), Some(e.clone()));
        assert_eq!(other.get("nope").unwrap(), None);
        let mut changed = e.clone();
        changed.summary = "## Requests\n- #1: y\n".into();
        other.put("k", &changed).unwrap();
        assert_eq!(other.get("k").unwrap().unwrap().summary, e.summary);
    }
}
