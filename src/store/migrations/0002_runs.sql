-- compactor store, version 2: saved replay runs. The engine never reads these.

CREATE TABLE run (
    name         TEXT PRIMARY KEY,
    task_id      TEXT NOT NULL,
    settings     TEXT NOT NULL,             -- JSON: budget and summarizer
    steps        INTEGER NOT NULL,
    final_view_hash TEXT,
    totals       TEXT NOT NULL              -- JSON: cache and cost totals
);

-- One row per replayed call. A view is stored as a delta against the
-- previous call's view: its first prefix_messages messages, then `suffix`.
CREATE TABLE run_step (
    run          TEXT NOT NULL,
    step         INTEGER NOT NULL,
    turn         INTEGER NOT NULL,
    report       TEXT NOT NULL,             -- JSON, as replay --json prints it
    view_hash    TEXT NOT NULL,
    prefix_messages INTEGER NOT NULL,
    suffix       TEXT NOT NULL,             -- JSON array of messages
    PRIMARY KEY (run, step)
);
