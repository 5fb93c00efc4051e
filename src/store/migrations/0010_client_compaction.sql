-- compactor store, version 10: the client's own compactions, as its hooks
-- report them (`compactor hook post-compact|session-start`). One row per
-- compaction: after which model call of the task it happened, the summary the
-- client wrote and the `## Task Context` compactor put back in its place, so
-- `probe --recorded` and `report` can set the two side by side. Bookkeeping:
-- the engine never reads it.

CREATE TABLE IF NOT EXISTS client_compaction (
    task_id        TEXT NOT NULL,
    after_call     INTEGER NOT NULL,  -- model calls recorded before the compaction
    history_rows   INTEGER NOT NULL,  -- rows of the task's record before it
    client         TEXT NOT NULL,     -- claude-code | codex
    trigger        TEXT,              -- manual | auto, as the client said
    client_summary TEXT,              -- the client's summary (post-compact)
    task_context   TEXT,              -- compactor's Task Context (session-start)
    summarizer     TEXT,              -- which summarizer wrote task_context
    PRIMARY KEY (task_id, after_call)
);
