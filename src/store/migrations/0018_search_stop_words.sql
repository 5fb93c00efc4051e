-- compactor store, version 18: version 2 of the search index, which leaves
-- English stop words out (src/store/search/extract.rs) and merges its
-- segments 64 at a time (crisis merges at 128) rather than 16: an import
-- of many small files, a transaction each, writes a segment for each, and
-- merging them 16 at a time rewrote the index again and again (on the
-- corpus, a sixth of what the import wrote to the WAL). A query reads at
-- most some dozens of segments more (BENCHMARKS.md, "Search").
--
-- The version-1 index is dropped. A store whose record holds rows gets
-- the new index when `compactor search` builds it from the record (until
-- then the writers leave it alone); a store without rows starts with a
-- current, empty one.
DROP TABLE IF EXISTS search_index;
CREATE VIRTUAL TABLE search_index USING fts5(
    ask, answer, tool, error, summary,
    content = '',
    tokenize = 'ascii'
);
INSERT INTO search_index (search_index, rank) VALUES ('automerge', 64);
INSERT INTO search_index (search_index, rank) VALUES ('crisismerge', 128);

CREATE TABLE IF NOT EXISTS search_state (
    version      INTEGER NOT NULL
);
DELETE FROM search_state;
INSERT INTO search_state (version)
SELECT CASE WHEN EXISTS (SELECT 1 FROM task_message) THEN 0 ELSE 2 END;
