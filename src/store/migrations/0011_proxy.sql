-- compactor store, version 11: what `compactor proxy` records beside the raw
-- record of each live conversation. Append-only, as the record is. Written to
-- run again over a store that already has them (one whose version was set
-- back), as every statement here says IF NOT EXISTS.

-- A live conversation: the task that records it, found again by what the
-- client's requests carry (its session id, system prompt and first message).
CREATE TABLE IF NOT EXISTS proxy_conversation (
    task_id      TEXT PRIMARY KEY,
    api          TEXT NOT NULL,             -- messages | responses
    identity     TEXT NOT NULL,             -- blake3 (hex) of the session, system prompt and first message
    lineage      TEXT NOT NULL,             -- blake3 (hex) of the session and system prompt alone
    session_id   TEXT,
    head_rows    INTEGER NOT NULL,          -- leading rows that hold the system prompt and tools
    parent_id    TEXT,                      -- the task it was started from, if any
    reason       TEXT                       -- why: a divergence, a subagent, a side request
);

CREATE INDEX IF NOT EXISTS proxy_conversation_by_identity ON proxy_conversation (identity);
CREATE INDEX IF NOT EXISTS proxy_conversation_by_lineage ON proxy_conversation (lineage);

-- Every request the proxy forwarded: which call it projected, over how many
-- rows of the record, under which profile, and the hash of the view it sent,
-- so that `replay --verify-forwarded` can derive each one again.
CREATE TABLE IF NOT EXISTS proxy_call (
    task_id      TEXT NOT NULL,
    attempt      INTEGER NOT NULL,          -- 1, 2, ... in the order forwarded (retries included)
    call         INTEGER NOT NULL,          -- the model call projected (the record's calls + 1)
    rows         INTEGER NOT NULL,          -- rows of the record the view was derived from
    profile      TEXT NOT NULL,
    view_hash    TEXT NOT NULL,
    report       TEXT NOT NULL,             -- JSON: tokens, tiers fired, status
    PRIMARY KEY (task_id, attempt)
);

-- How a forwarded request ended: the upstream's status and whether its
-- answer was recorded (one row per attempt, once it is over).
CREATE TABLE IF NOT EXISTS proxy_response (
    task_id      TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    status       INTEGER,                   -- the upstream's HTTP status; NULL when it never answered
    outcome      TEXT NOT NULL,             -- recorded | upstream_error | upstream_failed | client_gone | superseded | unparsed
    PRIMARY KEY (task_id, attempt)
);

CREATE TRIGGER IF NOT EXISTS proxy_conversation_no_update BEFORE UPDATE ON proxy_conversation
BEGIN SELECT RAISE(ABORT, 'proxy_conversation is append-only'); END;
CREATE TRIGGER IF NOT EXISTS proxy_conversation_no_delete BEFORE DELETE ON proxy_conversation
BEGIN SELECT RAISE(ABORT, 'proxy_conversation is append-only'); END;
CREATE TRIGGER IF NOT EXISTS proxy_call_no_update BEFORE UPDATE ON proxy_call
BEGIN SELECT RAISE(ABORT, 'proxy_call is append-only'); END;
CREATE TRIGGER IF NOT EXISTS proxy_call_no_delete BEFORE DELETE ON proxy_call
BEGIN SELECT RAISE(ABORT, 'proxy_call is append-only'); END;
CREATE TRIGGER IF NOT EXISTS proxy_response_no_update BEFORE UPDATE ON proxy_response
BEGIN SELECT RAISE(ABORT, 'proxy_response is append-only'); END;
CREATE TRIGGER IF NOT EXISTS proxy_response_no_delete BEFORE DELETE ON proxy_response
BEGIN SELECT RAISE(ABORT, 'proxy_response is append-only'); END;
