-- compactor store, version 14: when `compactor proxy` received each call
-- and when its answer ended, as transcripts stamp their lines (ISO-8601
-- UTC with milliseconds), so that a live task is listed, sorted and picked
-- as `latest` by its activity like an imported one. NULL on calls recorded
-- before this version. The tables stay append-only: each time is written
-- with its row, never after.

ALTER TABLE proxy_call ADD COLUMN received_at TEXT;
ALTER TABLE proxy_response ADD COLUMN answered_at TEXT;
