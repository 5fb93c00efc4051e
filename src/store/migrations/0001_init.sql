-- compactor store, version 1.
-- task_message is the append-only raw record; the two compaction stores are
-- content-addressed and upserted by key. Table names are a contract (DESIGN.md).

CREATE TABLE task (
    id           TEXT PRIMARY KEY,
    format       TEXT NOT NULL,
    parent_id    TEXT,
    session_id   TEXT,
    agent_id     TEXT,
    cwd          TEXT,
    model        TEXT,
    cli_version  TEXT,
    title        TEXT
);

CREATE TABLE task_message (
    task_id      TEXT NOT NULL,
    seq          INTEGER NOT NULL,          -- 0-based order within the task
    role         TEXT NOT NULL,             -- user | assistant | meta
    kind         TEXT NOT NULL,             -- ask | tool_result | context | generation | ...
    turn         INTEGER NOT NULL,
    step         INTEGER NOT NULL,
    gen_id       TEXT,                      -- groups the rows of one API response
    content      TEXT NOT NULL,             -- normalised JSON blocks (see content_encoding)
    content_encoding TEXT NOT NULL DEFAULT 'json',
    usage        TEXT,                      -- recorded provider usage (JSON), if any
    source_id    INTEGER,                   -- import_source.id
    source_line  INTEGER NOT NULL,
    source_uuid  TEXT,
    timestamp    TEXT,
    row_hash     BLOB NOT NULL,             -- blake3 chain over the task's rows
    PRIMARY KEY (task_id, seq)
);

CREATE INDEX task_message_by_gen ON task_message (task_id, gen_id);

CREATE TRIGGER task_message_no_update BEFORE UPDATE ON task_message
BEGIN
    SELECT RAISE(ABORT, 'task_message is append-only: rows cannot be updated');
END;

CREATE TRIGGER task_message_no_delete BEFORE DELETE ON task_message
BEGIN
    SELECT RAISE(ABORT, 'task_message is append-only: rows cannot be deleted');
END;

CREATE TABLE task_compaction_snapshot (
    task_id      TEXT NOT NULL,
    key          TEXT NOT NULL,             -- part address, summary coverage or meta:*
    entry        TEXT NOT NULL,             -- JSON
    PRIMARY KEY (task_id, key)
);

CREATE TABLE task_tool_compaction (
    task_id      TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    rule         TEXT NOT NULL,             -- which rule minted the form
    form         TEXT NOT NULL,             -- JSON: compacted input/content
    raw_tokens   INTEGER NOT NULL,
    form_tokens  INTEGER NOT NULL,
    pointer      TEXT NOT NULL,             -- recovery pointer: tool:<id>
    PRIMARY KEY (task_id, tool_call_id)
);

CREATE TABLE import_source (
    id           INTEGER PRIMARY KEY,
    path         TEXT NOT NULL UNIQUE,
    format       TEXT NOT NULL,
    bytes        INTEGER NOT NULL,          -- bytes consumed by the last import
    lines        INTEGER NOT NULL,
    hash         BLOB NOT NULL              -- blake3 of those bytes
);
