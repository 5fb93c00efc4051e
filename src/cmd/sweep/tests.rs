//! Sweep's recorded reference on transcripts in the clients' own formats,
//! imported as `sweep` imports them and read from the store as its jobs
//! read it: Claude Code and Codex compacting themselves, and the corpus's
//! sessions that did.

use serde_json::json;

use crate::engine::estimate::CharsPerToken;
use crate::probe::extract;
use crate::session::cost::{CacheTtl, Prices};
use crate::session::record::TaskRecordIndex;
use crate::store::{ClientCompaction, Store};
use crate::sweep::lean_tests::{info, oracle_recorded};
use crate::sweep::recorded::recorded_row;
use crate::sweep::{CallInfo, ReferenceRecord, Row, call_infos};
use crate::transcript::ingest::{IngestOptions, ingest_bytes};

/// A transcript in a real format, imported into a store: its recorded row,
/// its rows read from the store as sweep reads them, is the whole-record
/// evaluation. Returns the row.
fn recorded_of_import(shown: &str, text: &str, task_context_at: &[u64]) -> Row {
    let mut store = Store::open_memory().unwrap();
    let report = ingest_bytes(
        &mut store,
        shown,
        text.as_bytes(),
        &IngestOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{shown}: {e}"));
    let task = report.main_task().expect("a task").to_string();
    let index = TaskRecordIndex::load(&store, &task).unwrap();
    let rows = index.all_rows().unwrap();
    let calls: Vec<CallInfo> = call_infos(&index, CacheTtl::default());
    let compactions: Vec<ClientCompaction> = task_context_at
        .iter()
        .map(|&history_rows| ClientCompaction {
            task_id: task.clone(),
            after_call: 1,
            history_rows,
            client: "claude-code".into(),
            trigger: None,
            client_summary: None,
            task_context: Some("## Task Context\n- #1: Fix it. Never log the secret.".into()),
            summarizer: None,
        })
        .collect();
    let (info, est) = (info(), CharsPerToken::default());
    let record = ReferenceRecord {
        session: &info,
        calls,
        overhead: index.overhead(&est).unwrap().unwrap_or(0),
        prices: Prices::default(),
        estimator: &est,
    };
    let probes = extract(&rows);
    let want = oracle_recorded(&record, &rows, &compactions, probes.clone());
    let got = recorded_row(&record, &compactions, probes, &mut |r, f| {
        index.each_row(r.start, r.end, |_, m| f(m))
    })
    .unwrap();
    assert_eq!(got, want, "{shown}");
    got
}

fn testdata(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A JSON line: `base`'s fields and `extra`'s.
fn line_of(base: &serde_json::Value, extra: serde_json::Value) -> String {
    let mut v = base.clone();
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    format!("{v}\n")
}

/// Claude Code compacting itself twice (a `compact_boundary`, then its
/// `isCompactSummary` user line), with an exchange after each.
#[test]
fn a_claude_code_session_that_compacts_itself_scores_as_the_whole_record() {
    let mut text = testdata("claude-code/small-session.jsonl");
    let base = json!({
        "isSidechain": false, "userType": "external", "cwd": "/home/dev/projects/tally",
        "sessionId": "7f3c9a2e-5b1d-4e8f-a6c4-2d9e1b7f0a53", "version": "2.1.39",
    });
    let mut parent = json!("6067a0b9-6401-4c31-bd7f-b210e9506a02");
    for round in 1..=2 {
        let uuid = |k: u32| format!("c000000{round}-0000-4000-8000-00000000000{k}");
        text.push_str(&line_of(
            &base,
            json!({
            "parentUuid": null, "logicalParentUuid": parent,
            "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "uuid": uuid(1), "timestamp": format!("2026-02-14T1{round}:00:00.000Z"),
            "compactMetadata": {"trigger": "manual", "preTokens": 30000}}),
        ));
        text.push_str(&line_of(&base, json!({
            "parentUuid": uuid(1), "type": "user", "isCompactSummary": true,
            "message": {"role": "user", "content": "This session is being continued from a previous conversation.\n\nThe user asked why TALLY_MAX_ROWS is ignored. Never log the secret."},
            "uuid": uuid(2), "timestamp": format!("2026-02-14T1{round}:00:01.000Z")})));
        text.push_str(&line_of(
            &base,
            json!({
            "parentUuid": uuid(2), "type": "user",
            "message": {"role": "user", "content": "Now add a test for the override."},
            "uuid": uuid(3), "timestamp": format!("2026-02-14T1{round}:01:00.000Z")}),
        ));
        text.push_str(&line_of(&base, json!({
            "parentUuid": uuid(3), "type": "assistant",
            "message": {"model": "claude-opus-4-6", "id": format!("msg_c00000000000000000000000{round}"), "type": "message",
                "role": "assistant", "content": [{"type": "text", "text": "Added the test."}],
                "usage": {"input_tokens": 5, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 100, "output_tokens": 20}},
            "uuid": uuid(4), "timestamp": format!("2026-02-14T1{round}:01:30.000Z")})));
        parent = json!(uuid(4));
    }
    // The hooks saw the second compaction only, then both.
    let rows = text.lines().count() as u64;
    for task_context_at in [&[][..], &[rows - 4], &[0, rows - 4]] {
        let row = recorded_of_import("compacted.jsonl", &text, task_context_at);
        assert_eq!(row.folds, Some(2), "{row:?}");
    }
}

/// Codex compacting itself: a `compacted` item after the history it
/// replaced, then the conversation going on.
#[test]
fn a_codex_rollout_that_compacts_itself_scores_as_the_whole_record() {
    let rollout = testdata("codex/small-rollout.jsonl");
    let lines: Vec<&str> = rollout.lines().collect();
    let summary = "## Task Context\n\n## Requests\n- #1: Why does `tally list` ignore TALLY_MAX_ROWS? Fix it.";
    let compacted = json!({
        "timestamp": "2026-02-26T09:00:00.000Z", "type": "compacted",
        "payload": {"message": summary, "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}]}});
    let mut text = String::new();
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(&format!("{compacted}\n"));
    // The turn again, after the compaction.
    for l in &lines[4..] {
        text.push_str(l);
        text.push('\n');
    }
    let row = recorded_of_import("rollout.jsonl", &text, &[]);
    assert_eq!(row.folds, Some(1), "{row:?}");
}

/// The corpus's sessions whose client compacted itself (Claude Code and
/// Codex), when the corpus is here.
#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn the_corpus_sessions_that_compact_themselves_score_as_the_whole_record() {
    let Some(dir) = crate::test_corpus::corpus(
        "the_corpus_sessions_that_compact_themselves_score_as_the_whole_record",
    ) else {
        return;
    };
    let files = [
        "claude-code/v2.1.39_spotter_interrupts_biglines/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
        "claude-code/v2.1.39_spotter_compaction_subagents/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        "codex/v0.104.0-alpha.1_localpush_redacted/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    ];
    for f in files {
        let path = dir.join(f);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let row = recorded_of_import(f, &text, &[0]);
        assert!(row.folds.unwrap() > 0, "{f}: {row:?}");
    }
}

/// Issue 34: every reference row prices a pause longer than the cache
/// lives as the replay does. The fixture pauses ten and a half minutes
/// before call 3: under the 5-minute cache that call reads nothing (the
/// client's own usage shows it too), under the 1-hour one it reads the
/// prefix, and each reference's estimated history costs the difference.
#[test]
fn the_references_read_nothing_from_a_cache_that_expired_during_a_pause() {
    use crate::sweep::lean_tests::trim_policy;
    use crate::sweep::mask::{KEEP_OUTPUTS, mask_row};
    use crate::sweep::trim::trim_row;

    let mut store = Store::open_memory().unwrap();
    let text = testdata("claude-code/pause-10min.jsonl");
    let report = ingest_bytes(
        &mut store,
        "pause.jsonl",
        text.as_bytes(),
        &IngestOptions::default(),
    )
    .unwrap();
    let task = report.main_task().unwrap().to_string();
    let index = TaskRecordIndex::load(&store, &task).unwrap();
    let expired = |ttl| -> Vec<bool> {
        call_infos(&index, ttl)
            .iter()
            .map(|c| c.cache_expired)
            .collect()
    };
    assert_eq!(expired(CacheTtl::FiveMinutes), [false, false, true, false]);
    assert_eq!(expired(CacheTtl::OneHour), [false; 4]);

    let (info, est) = (info(), CharsPerToken::default());
    let rows = index.all_rows().unwrap();
    let fields = trim_policy(200_000);
    let run = |ttl| -> [Row; 3] {
        let record = ReferenceRecord {
            session: &info,
            calls: call_infos(&index, ttl),
            overhead: index.overhead(&est).unwrap().unwrap_or(0),
            prices: Prices::default(),
            estimator: &est,
        };
        let mut read = |r: std::ops::Range<usize>, f: &mut dyn FnMut(&crate::model::Message)| {
            index.each_row(r.start, r.end, |_, m| f(m))
        };
        let probes = extract(&rows);
        [
            trim_row(&record, fields.clone(), 180_000, probes.clone(), &mut read).unwrap(),
            mask_row(
                &record,
                (fields.clone(), 180_000, KEEP_OUTPUTS),
                probes.clone(),
                &mut read,
            )
            .unwrap(),
            recorded_row(&record, &[], probes, &mut read).unwrap(),
        ]
    };
    let (short, long) = (run(CacheTtl::FiveMinutes), run(CacheTtl::OneHour));
    let estimated = |r: &Row| match &r.estimated {
        Some(e) => (e.cache_read_tokens, e.cache_write_tokens, e.cost_micros),
        None => (r.cache_read_tokens, r.cache_write_tokens, r.cost_micros),
    };
    // The same record, the same views: only the pause's call differs.
    for (s, l) in short.iter().zip(&long) {
        let (sr, sw, sc) = estimated(s);
        let (lr, lw, lc) = estimated(l);
        assert_eq!(sr + sw, lr + lw, "{:?}", s.kind);
        assert!(sr < lr && sc > lc, "{:?}: {sr} < {lr}, {sc} > {lc}", s.kind);
        assert_eq!(s.prefix_breaks, 0, "a pause is no prefix break");
    }
    // What the client paid is its usage, whatever the model of the cache.
    assert_eq!(short[2].cost_micros, long[2].cost_micros);
}
