-- compactor store, version 9: a session that began at a compaction keeps
-- its carried history as content. `task_message.kind` may now be
-- 'carried_summary': the summary that opens such a record (it reaches views
-- and starts a turn), where 'compact_summary' stays the marker of a client
-- compacting history the record holds. Rows written before are not rewritten
-- (the record is append-only); the version step makes an older compactor
-- refuse this store instead of misreading its rows.
-- `task.git_branch`: the git branch the session was on, as its file names
-- it, so a session written from it names the same branch.

ALTER TABLE task ADD COLUMN git_branch TEXT;
