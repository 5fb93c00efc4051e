-- compactor store, version 20: version 4 of the search index, which also
-- holds the entries of a row too large to insert in one piece (1 MiB and
-- more stored, written into its row in pieces): the writers of version 3
-- dropped them, so an index kept as the record grew lacked what one
-- rebuilt from the record holds.
--
-- As migrations 18 and 19 did: the version-3 index is dropped. A store
-- whose record holds rows gets the new index when `compactor search`
-- builds it from the record (until then the writers leave it alone); a
-- store without rows starts with a current, empty one.
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
SELECT CASE WHEN EXISTS (SELECT 1 FROM task_message) THEN 0 ELSE 4 END;
