-- compactor store, version 16: a saved run's name is its task's, not the
-- store's. Two tasks may each save a run `baseline`; `replay --save` no
-- longer replaces another task's run of that name, and `diff run:NAME` says
-- which task's it means. Existing runs keep their names under their task.

CREATE TABLE run_v16 (
    task_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    settings     TEXT NOT NULL,             -- JSON: budget and summarizer
    steps        INTEGER NOT NULL,
    final_view_hash TEXT,
    totals       TEXT NOT NULL,             -- JSON: cache and cost totals
    PRIMARY KEY (task_id, name)
);
INSERT INTO run_v16 (task_id, name, settings, steps, final_view_hash, totals)
    SELECT task_id, name, settings, steps, final_view_hash, totals FROM run;

-- One row per replayed call, as before, now under its run's task too.
CREATE TABLE run_step_v16 (
    task_id      TEXT NOT NULL,
    run          TEXT NOT NULL,
    step         INTEGER NOT NULL,
    turn         INTEGER NOT NULL,
    report       TEXT NOT NULL,             -- JSON, as replay --json prints it
    view_hash    TEXT NOT NULL,
    prefix_messages INTEGER NOT NULL,
    suffix       TEXT NOT NULL,             -- JSON array of messages
    PRIMARY KEY (task_id, run, step)
);
INSERT INTO run_step_v16 (task_id, run, step, turn, report, view_hash, prefix_messages, suffix)
    SELECT r.task_id, s.run, s.step, s.turn, s.report, s.view_hash, s.prefix_messages, s.suffix
    FROM run_step s JOIN run r ON r.name = s.run;

DROP TABLE run_step;
DROP TABLE run;
ALTER TABLE run_v16 RENAME TO run;
ALTER TABLE run_step_v16 RENAME TO run_step;
