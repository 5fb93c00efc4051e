-- compactor store, version 17: the search index, an FTS5 index beside the
-- record of what a model would want to find again (asks, answers, tool
-- inputs, outputs and errors, summaries). Derived from the record, kept in
-- the same transaction as the rows it indexes, never read by a view; it can
-- be dropped and built again from the record (`compactor search` does so
-- when it is missing or was built by another version of the index).
--
-- search_index is contentless: it holds the words, not the texts (a hit's
-- text is read from its row). Its rowid names the entry: the task's number
-- in search_task, then the row's seq and the block's position in the row,
-- or one line of a floor summary (search_summary holds those lines). See
-- src/store/search.rs.

CREATE TABLE IF NOT EXISTS search_task (
    no           INTEGER PRIMARY KEY,       -- the task's number in search_index's rowids
    task_id      TEXT NOT NULL UNIQUE
);

CREATE TABLE IF NOT EXISTS search_summary (
    id           INTEGER PRIMARY KEY,       -- its rowid in search_index
    task_id      TEXT NOT NULL,
    line         TEXT NOT NULL,             -- one line of a floor summary, as indexed
    call         INTEGER NOT NULL,          -- the model call that minted the summary
    key          TEXT NOT NULL,             -- the summary's coverage key (task_compaction_snapshot)
    UNIQUE (task_id, line)
);

-- Its texts are the entries' terms, lower-cased and stemmed already
-- (src/store/search/extract.rs): the `ascii` tokenizer takes them as they are.
CREATE VIRTUAL TABLE IF NOT EXISTS search_index USING fts5(
    ask, answer, tool, error, summary,
    content = '',
    tokenize = 'ascii'
);
-- Merge its segments 16 at a time rather than 4: an import of many files
-- (a transaction each) spends less time merging what the last ones wrote.
INSERT INTO search_index (search_index, rank) VALUES ('automerge', 16);

-- Which version of the index search_index holds (0: none yet, for a store
-- that held rows before this version: `compactor search` builds it).
CREATE TABLE IF NOT EXISTS search_state (
    version      INTEGER NOT NULL
);
INSERT INTO search_state (version)
SELECT CASE WHEN EXISTS (SELECT 1 FROM task_message) THEN 0 ELSE 1 END
WHERE NOT EXISTS (SELECT 1 FROM search_state);
