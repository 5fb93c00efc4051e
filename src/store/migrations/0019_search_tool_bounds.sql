-- compactor store, version 19: version 3 of the search index, which indexes
-- the first 256 and last 128 bytes of a tool's input (512 and 256 before)
-- and the first 128 and last 64 of its output (256 and 128 before): tool
-- inputs and outputs are most of an index's terms, each about 1,500
-- instructions of an import (src/store/search/extract.rs; BENCHMARKS.md,
-- "Search").
--
-- As migration 18 did: the version-2 index is dropped. A store whose
-- record holds rows gets the new index when `compactor search` builds it
-- from the record (until then the writers leave it alone); a store without
-- rows starts with a current, empty one.
DROP TABLE IF EXISTS search_index;
CREATE VIRTUAL TABLE search_index USING fts5(
    ask, answer, tool, error, summary,
    content = '',
    tokenize = 'ascii'
);
INSERT INTO search_index (search_index, rank) VALUES ('automerge', 64);
INSERT INTO search_index (search_index, rank) VALUES ('crisismerge', 128);

DELETE FROM search_state;
INSERT INTO search_state (version)
SELECT CASE WHEN EXISTS (SELECT 1 FROM task_message) THEN 0 ELSE 3 END;
