-- compactor store, version 5: compaction state kept apart per profile.
-- A profile is what stored state depends on besides the record: the budget
-- (summary budget included), the summarizer and the tool rules; its id is
-- blake3 of their canonical JSON (see `RunSettings::profile`). A run under
-- one profile never reads what another profile minted. State written before
-- version 5 has no known profile: it moves to profile 'legacy', which no run
-- reads, and `compactor reset` forgets it. The raw record is untouched.

CREATE TABLE task_compaction_snapshot_v5 (
    task_id      TEXT NOT NULL,
    profile      TEXT NOT NULL,             -- profile id, or 'legacy'
    key          TEXT NOT NULL,             -- part address, summary coverage or meta:*
    entry        TEXT NOT NULL,             -- JSON
    PRIMARY KEY (task_id, profile, key)
);
INSERT INTO task_compaction_snapshot_v5 (task_id, profile, key, entry)
    SELECT task_id, 'legacy', key, entry FROM task_compaction_snapshot;
DROP TABLE task_compaction_snapshot;
ALTER TABLE task_compaction_snapshot_v5 RENAME TO task_compaction_snapshot;

CREATE TABLE replay_progress_v5 (
    task_id      TEXT NOT NULL,
    profile      TEXT NOT NULL,
    settings     TEXT NOT NULL,             -- JSON: the profile's settings
    last_call    INTEGER NOT NULL,
    PRIMARY KEY (task_id, profile)
);
INSERT INTO replay_progress_v5 (task_id, profile, settings, last_call)
    SELECT task_id, 'legacy', settings, last_call FROM replay_progress;
DROP TABLE replay_progress;
ALTER TABLE replay_progress_v5 RENAME TO replay_progress;

-- Which settings a profile id stands for (written with its first entry).
CREATE TABLE compaction_profile (
    profile      TEXT PRIMARY KEY,
    settings     TEXT NOT NULL              -- JSON
);
