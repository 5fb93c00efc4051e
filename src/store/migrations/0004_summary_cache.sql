-- compactor store, version 4: summaries a model wrote, keyed by the exact
-- request that produced them (blake3 of the canonical request: summarizer,
-- provider, model, prompt version, prior summary, covered span). Every run,
-- a what-if replay on a scratch copy included, reads and fills it, so the
-- same request is never sent twice. Nothing secret is stored here.

CREATE TABLE summary_cache (
    request_key   TEXT PRIMARY KEY,         -- blake3 hex of the canonical request
    summarizer    TEXT NOT NULL,            -- e.g. llm:openai:qwen2.5
    summary       TEXT NOT NULL,            -- the validated (and repaired) sections
    repaired      TEXT NOT NULL,            -- JSON array: lines re-inserted from the extractive summary
    input_tokens  INTEGER NOT NULL,         -- the model call's own usage, as reported
    output_tokens INTEGER NOT NULL
);
