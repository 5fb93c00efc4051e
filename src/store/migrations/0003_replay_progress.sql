-- compactor store, version 3: where an in-place replay got to, written in the
-- same transaction as each call's entries, so a killed replay resumes at the
-- call it last committed. Bookkeeping: the engine never reads it.

CREATE TABLE replay_progress (
    task_id      TEXT PRIMARY KEY,
    settings     TEXT NOT NULL,             -- JSON: the replay's budget and summarizer
    last_call    INTEGER NOT NULL
);
