-- compactor store, version 6: what the file system said of a source when it
-- was last imported (its size and modification time, in nanoseconds since the
-- epoch), so a re-import over an unchanged tree skips a file without reading
-- it. `bytes` and `hash` stay what was consumed: a half-written last line left
-- for later is not in them, so the size on disk may be larger.

ALTER TABLE import_source ADD COLUMN file_bytes INTEGER;
ALTER TABLE import_source ADD COLUMN mtime_ns INTEGER;

-- Which rows a source holds (the report of a file skipped as unchanged).
CREATE INDEX task_message_by_source ON task_message (source_id);
