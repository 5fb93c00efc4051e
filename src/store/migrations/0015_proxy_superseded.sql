-- compactor store, version 15: the answers `compactor proxy` recorded that a
-- client's retry of the same request superseded. The answer stays in
-- task_message (append-only); a row here takes it out of the history every
-- view of the task is derived from (TaskRecordIndex leaves it out), so the
-- retry's own answer is the call's. Append-only too. Written to run again
-- over a store that already has it, as every statement says IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS proxy_superseded (
    task_id      TEXT NOT NULL,
    seq          INTEGER NOT NULL,          -- the answer's row in task_message
    attempt      INTEGER NOT NULL,          -- the forwarded request it answered (proxy_call.attempt)
    by_attempt   INTEGER NOT NULL,          -- the retry that superseded it
    PRIMARY KEY (task_id, seq)
);

CREATE TRIGGER IF NOT EXISTS proxy_superseded_no_update BEFORE UPDATE ON proxy_superseded
BEGIN SELECT RAISE(ABORT, 'proxy_superseded is append-only'); END;
CREATE TRIGGER IF NOT EXISTS proxy_superseded_no_delete BEFORE DELETE ON proxy_superseded
BEGIN SELECT RAISE(ABORT, 'proxy_superseded is append-only'); END;
