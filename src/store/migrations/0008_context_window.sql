-- compactor store, version 8: the context window a session recorded for
-- itself (Codex's `model_context_window`; a Claude Code request for the 1M
-- context), the default `--window` of a run on it. NULL: none recorded, or
-- imported by an older compactor.

ALTER TABLE task ADD COLUMN context_window INTEGER;
