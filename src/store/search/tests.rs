use serde_json::json;

use super::query::parse;
use super::*;
use crate::model::{Block, Kind, Message, Role, ToolContent};

fn ask(text: &str, turn: u32) -> Message {
    let mut m = Message::new(
        Role::User,
        Kind::Ask,
        vec![Block::Text { text: text.into() }],
        0,
    );
    m.turn = turn;
    m
}

fn answer(text: &str, step: u32) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        Kind::Generation,
        vec![Block::Text { text: text.into() }],
        0,
    );
    m.step = step;
    m
}

/// A small conversation: a rule, a failed push and its fix.
fn conversation() -> Vec<Message> {
    let mut call = Message::tool_call(
        "toolu_push",
        "Bash",
        json!({"command": "git push origin feature/login"}),
        0,
    );
    call.step = 2;
    let mut out = Message::tool_result(
        "toolu_push".into(),
        ToolContent::Text("fatal: The current branch feature/login has no upstream branch.".into()),
        true,
        0,
    );
    out.step = 2;
    vec![
        ask(
            "Never edit the tenant_registry by hand; the TranscriptRenderer owns migrations.",
            1,
        ),
        answer("I will keep the registry as it is.", 1),
        call,
        out,
        answer("Pushed with --set-upstream after the migration ran.", 3),
    ]
}

fn store_with(tasks: &[(&str, Vec<Message>)]) -> Store {
    let mut s = Store::open_memory().unwrap();
    for (id, rows) in tasks {
        s.transaction(|tx| {
            tx.upsert_task(&crate::store::TaskInfo {
                id: id.to_string(),
                format: "anthropic".into(),
                ..Default::default()
            })?;
            tx.append_messages(id, None, rows)
        })
        .unwrap();
    }
    s
}

/// The hits of `query` in `tasks` (`None`: all), as (task, seq, entry).
fn hits(store: &Store, query: &str, tasks: Option<&[String]>) -> Vec<(String, Location)> {
    let all: Vec<String> = store.reader().recorded_tasks().unwrap();
    let searcher = Searcher::open(store, tasks.unwrap_or(&all)).unwrap();
    let q = parse(query).unwrap();
    let (raw, matched) = searcher.matches(&q.expr, tasks, 100).unwrap();
    assert_eq!(raw.len(), matched.min(100));
    raw.iter()
        .map(|h| {
            let loc = locate(h.rowid);
            let no = match loc {
                Location::Row { task_no, .. } | Location::SummaryLine { task_no } => task_no,
            };
            (searcher.task_of(no).unwrap().to_string(), loc)
        })
        .collect()
}

fn row(task_no: i64, seq: u64, entry: u16) -> Location {
    Location::Row {
        task_no,
        seq,
        entry,
    }
}

#[test]
fn the_bundled_sqlite_has_fts5() {
    let s = Store::open_memory().unwrap();
    let on: bool = s
        .conn
        .query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(on, "rusqlite's bundled SQLite is built with FTS5");
}

#[test]
fn a_rowid_names_its_task_row_and_block() {
    for (task, seq, entry) in [(1, 0, 0), (7, 123_456, 4095), (MAX_TASK_NO, MAX_SEQ, 3)] {
        let id = row_rowid(task, seq, entry).unwrap();
        assert!(id > 0);
        assert_eq!(locate(id), row(task, seq, entry));
        let (a, b) = task_bounds(task);
        assert!(a <= id && id <= b);
    }
    assert_eq!(row_rowid(1, MAX_SEQ + 1, 0), None);
    assert_eq!(row_rowid(MAX_TASK_NO + 1, 0, 0), None);
    assert_eq!(row_rowid(1, 0, 4096), None);
    let line = task_bounds(3).0 | LINE_FLAG | 17;
    assert_eq!(locate(line), Location::SummaryLine { task_no: 3 });
}

#[test]
fn word_forms_identifiers_and_kinds_are_found() {
    let s = store_with(&[("t", conversation())]);
    assert_eq!(s.search_state().unwrap(), IndexState::Current);
    // `migrations` in the ask, `migration` in the last answer.
    let h = hits(&s, "migrations", None);
    let rows: Vec<Location> = h.iter().map(|(_, l)| *l).collect();
    assert!(
        rows.contains(&row(1, 0, 0)) && rows.contains(&row(1, 4, 0)),
        "{rows:?}"
    );
    // An identifier's words find it, snake or camel case.
    assert_eq!(hits(&s, "tenant registry", None)[0].1, row(1, 0, 0));
    assert_eq!(hits(&s, "renderer", None)[0].1, row(1, 0, 0));
    assert_eq!(hits(&s, "transcriptrenderer", None)[0].1, row(1, 0, 0));
    // The failed push: its error ranks first for the error's words, its
    // command for the command's.
    assert_eq!(hits(&s, "no upstream branch", None)[0].1, row(1, 3, 0));
    assert_eq!(hits(&s, "git push", None)[0].1, row(1, 2, 0));
    // A column holds one kind.
    let searcher = Searcher::open(&s, &["t".to_string()]).unwrap();
    let q = parse("branch").unwrap();
    let (only_errors, _) = searcher
        .matches(&q.in_column(Some(Column::Error)), None, 10)
        .unwrap();
    assert_eq!(
        only_errors
            .iter()
            .map(|h| locate(h.rowid))
            .collect::<Vec<_>>(),
        [row(1, 3, 0)]
    );
    let (asks, _) = searcher
        .matches(&q.in_column(Some(Column::Ask)), None, 10)
        .unwrap();
    assert!(asks.is_empty());
}

#[test]
fn a_task_range_holds_only_that_tasks_hits() {
    let s = store_with(&[("a", conversation()), ("b", conversation())]);
    let a = vec!["a".to_string()];
    let found = hits(&s, "upstream", Some(&a));
    assert!(!found.is_empty());
    assert!(found.iter().all(|(t, _)| t == "a"), "{found:?}");
    assert_eq!(hits(&s, "upstream", None).len(), 2 * found.len());
    // More tasks than ranges: filtered after the match, with the same result.
    let names: Vec<String> = (0..6).map(|i| format!("t{i}")).collect();
    let many: Vec<(&str, Vec<Message>)> =
        names.iter().map(|n| (n.as_str(), conversation())).collect();
    let s = store_with(&many);
    let five: Vec<String> = names[..5].to_vec();
    let found = hits(&s, "upstream", Some(&five));
    assert_eq!(
        found.len(),
        5 * hits(&s, "upstream", Some(&names[..1])).len()
    );
    assert!(found.iter().all(|(t, _)| t != "t5"));
}

#[test]
fn a_malformed_query_is_a_query_error_never_an_sql_one() {
    let s = store_with(&[("t", conversation())]);
    let searcher = Searcher::open(&s, &["t".to_string()]).unwrap();
    for expr in ["\"a\" AND", "NEAR(\"a\" \"b\"", "AND \"a\""] {
        let err = searcher.matches(expr, None, 10).unwrap_err();
        assert!(matches!(err, SearchError::Query(_)), "{expr}: {err:?}");
    }
}

/// Rows handed over (as the proxy records a request's) are indexed as rows
/// lent are: their content is let go only once its entries are taken.
#[test]
fn rows_handed_over_are_indexed_as_rows_lent() {
    let mut lent = store_with(&[]);
    let mut owned = store_with(&[]);
    lent.transaction(|tx| tx.append_rows("t", &conversation()))
        .unwrap();
    owned
        .transaction(|tx| tx.append_owned_rows("t", conversation()))
        .unwrap();
    let kept = contents(&lent);
    assert!(!kept.is_empty());
    assert_eq!(contents(&owned), kept);
}

#[test]
fn a_scratch_store_keeps_no_index() {
    let s = store_with(&[("t", vec![ask("hello", 1)])]);
    let mut scratch = s.scratch_copy("t").unwrap();
    scratch
        .transaction(|tx| tx.append_rows("t", &conversation()))
        .unwrap();
    let n: i64 = scratch
        .conn
        .query_row("SELECT count(*) FROM search_task", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

/// Every entry of the index, by rowid, with what the index holds of it
/// (its terms), for comparing two indexes.
fn contents(s: &Store) -> Vec<(String, i64, i64, String)> {
    s.conn
        .execute_batch(
            "DROP TABLE IF EXISTS temp.v;
             CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'search_index', 'instance');",
        )
        .unwrap();
    let mut stmt = s
        .conn
        .prepare(
            "SELECT t.task_id, v.doc, v.offset, v.term || '/' || v.col
             FROM temp.v v JOIN search_task t ON t.no = v.doc >> 41
             ORDER BY t.task_id, v.doc & ((1 << 41) - 1), v.offset, v.term",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get::<_, i64>(1)? & ((1 << 41) - 1),
            r.get(2)?,
            r.get(3)?,
        ))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

#[test]
fn an_index_rebuilt_after_it_is_deleted_holds_what_was_kept() {
    let mut s = store_with(&[("a", conversation())]);
    // A floor summary stored for the task: its lines are indexed too.
    let summary = json!({"kind": "summary", "text": "## Constraints\n- Never edit the tenant_registry.\n- Keep it.",
        "covers": 3, "summarizer": "extractive", "minted_turn": 1, "minted_call": 2});
    s.transaction(|tx| tx.put_entry("a", "p", "cov:00", &summary))
        .unwrap();
    // The same lines again (a later summary repeats them) are indexed once.
    s.transaction(|tx| tx.put_entry("a", "p", "cov:01", &summary))
        .unwrap();
    s.transaction(|tx| tx.append_rows("b", &conversation()[..2]))
        .unwrap();
    let kept = contents(&s);
    assert!(
        kept.iter().any(|(_, _, _, t)| t == "registri/summary"),
        "{kept:?}"
    );
    let lines: i64 = s
        .conn
        .query_row("SELECT count(*) FROM search_summary", [], |r| r.get(0))
        .unwrap();
    assert_eq!(lines, 2);
    let before = hits(&s, "tenant registry", None);
    s.conn.execute_batch("DROP TABLE search_index").unwrap();
    assert_eq!(s.search_state().unwrap(), IndexState::Missing);
    // Rows stored meanwhile are not indexed (the table is gone) ...
    s.transaction(|tx| tx.append_rows("c", &conversation()[..1]))
        .unwrap();
    // ... and a search of a few tasks indexes them in memory.
    assert_eq!(
        hits(&s, "tenant registry", Some(&["c".to_string()])).len(),
        1
    );
    s.rebuild_search_index(&mut |_, _| {}).unwrap();
    assert_eq!(s.search_state().unwrap(), IndexState::Current);
    let c: Vec<(String, i64, i64, String)> =
        contents(&s).into_iter().filter(|e| e.0 != "c").collect();
    assert_eq!(c, kept);
    let after: Vec<(String, Location)> = hits(&s, "tenant registry", None)
        .into_iter()
        .filter(|(t, _)| t != "c")
        .collect();
    assert_eq!(after, before);
}

#[test]
fn an_outdated_index_is_left_alone_until_a_search_builds_it() {
    let mut s = store_with(&[("a", conversation())]);
    s.conn
        .execute("UPDATE search_state SET version = 0", [])
        .unwrap();
    assert_eq!(s.search_state().unwrap(), IndexState::Outdated);
    s.transaction(|tx| tx.append_rows("b", &conversation()))
        .unwrap();
    let b_indexed: i64 = s
        .conn
        .query_row(
            "SELECT count(*) FROM search_task WHERE task_id = 'b'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(b_indexed, 0, "an outdated index is not written to");
    // Searched in memory meanwhile, the same hits as once rebuilt.
    let b = vec!["b".to_string()];
    let in_memory: Vec<Location> = hits(&s, "upstream", Some(&b))
        .into_iter()
        .map(|h| h.1)
        .collect();
    s.rebuild_search_index(&mut |_, _| {}).unwrap();
    let searcher = Searcher::open(&s, &b).unwrap();
    assert!(!searcher.in_memory());
    let (raw, _) = searcher
        .matches(&parse("upstream").unwrap().expr, Some(&b), 10)
        .unwrap();
    let rebuilt: Vec<(u64, u16)> = raw
        .iter()
        .map(|h| match locate(h.rowid) {
            Location::Row { seq, entry, .. } => (seq, entry),
            other => panic!("{other:?}"),
        })
        .collect();
    let memory: Vec<(u64, u16)> = in_memory
        .iter()
        .map(|l| match l {
            Location::Row { seq, entry, .. } => (*seq, *entry),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(rebuilt, memory);
}

#[test]
fn reset_takes_a_forgotten_summarys_lines_out_of_the_index() {
    let s0 = store_with(&[("a", conversation())]);
    let mut s = s0;
    let summary = |text: &str| {
        json!({"kind": "summary", "text": text, "covers": 3, "summarizer": "extractive",
            "minted_turn": 1, "minted_call": 2})
    };
    s.transaction(|tx| {
        tx.put_entry("a", "p", "cov:00", &summary("- Quokka rule."))?;
        tx.put_entry("a", "q", "cov:00", &summary("- Wombat rule."))
    })
    .unwrap();
    assert_eq!(hits(&s, "quokka", None).len(), 1);
    s.transaction(|tx| tx.forget_compaction("a", Some("p")))
        .unwrap();
    assert!(hits(&s, "quokka", None).is_empty());
    assert_eq!(hits(&s, "wombat", None).len(), 1);
    let searcher = Searcher::open(&s, &["a".to_string()]).unwrap();
    let (raw, _) = searcher.matches("\"wombat\"", None, 10).unwrap();
    let line = searcher.summary_line(raw[0].rowid).unwrap().unwrap();
    assert_eq!(
        (line.line.as_str(), line.call, line.key.as_str()),
        ("- Wombat rule.", 2, "cov:00")
    );
}

#[test]
fn snippets_mark_the_matched_words_from_the_texts_own_column() {
    let sn = Snippets::new().unwrap();
    sn.add(1, Column::Ask, "Never edit the tenant_registry by hand.")
        .unwrap();
    sn.add(2, Column::Tool, "nothing here").unwrap();
    // The query's words as typed: the snippet table stems them itself.
    let made = sn.make("\"registries\" OR \"renderer\"", 16).unwrap();
    assert_eq!(
        made.get(&1).map(String::as_str),
        Some("Never edit the tenant_\u{1}registry\u{2} by hand.")
    );
    assert!(!made.contains_key(&2));
}

#[test]
fn past_the_ranking_cap_the_newest_matches_are_ranked_and_every_match_counted() {
    // Six tasks of three answers holding "wombat", the later ones more
    // often (BM25 puts them first). A search of two tasks reads their
    // rowid ranges; of five, every rowid, keeping theirs; of all, every one.
    let rows = || -> Vec<Message> {
        (0..3)
            .map(|i| {
                answer(
                    &format!("{} and a burrow", "wombat ".repeat(i + 1)),
                    i as u32,
                )
            })
            .collect()
    };
    let names = ["a", "b", "c", "d", "e", "f"];
    let tasks: Vec<(&str, Vec<Message>)> = names.iter().map(|n| (*n, rows())).collect();
    let store = store_with(&tasks);
    let all: Vec<String> = store.reader().recorded_tasks().unwrap();
    let searcher = Searcher::open(&store, &all).unwrap();
    let expr = parse("wombat").unwrap().expr;
    let two: Vec<String> = ["b", "e"].iter().map(|s| s.to_string()).collect();
    let five: Vec<String> = names[..5].iter().map(|s| s.to_string()).collect();
    for (scope, expected) in [(None, 18), (Some(&two[..]), 6), (Some(&five[..]), 15)] {
        let (uncapped, matched) = searcher.matches_ranking(&expr, scope, 100, 1000).unwrap();
        assert_eq!((uncapped.len(), matched), (expected, expected));
        // A cap at the count ranks the same hits.
        let (same, _) = searcher
            .matches_ranking(&expr, scope, 100, expected)
            .unwrap();
        assert_eq!(same, uncapped);
        // A cap of 4: the four highest rowids, in the order the uncapped
        // ranking gives them, and every match counted.
        let (capped, matched) = searcher.matches_ranking(&expr, scope, 100, 4).unwrap();
        assert_eq!(matched, expected);
        let mut newest: Vec<i64> = uncapped.iter().map(|h| h.rowid).collect();
        newest.sort_unstable_by(|a, b| b.cmp(a));
        newest.truncate(4);
        let order: Vec<i64> = uncapped
            .iter()
            .map(|h| h.rowid)
            .filter(|r| newest.contains(r))
            .collect();
        assert_eq!(capped.iter().map(|h| h.rowid).collect::<Vec<_>>(), order);
    }
}

/// Each new version of the index comes with a migration that drops the
/// old one: a store of the version before, whose index is of the version
/// before, is migrated to an empty, outdated index (the writers leave it
/// alone), which a rebuild makes current with the hits of an index kept
/// from the start; a new store's is current.
#[test]
fn an_index_of_the_version_before_is_dropped_by_the_migration_and_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let location = crate::store::DbLocation::File(dir.path().join("s.db"));
    let kept_from_the_start = {
        let mut s = Store::open(&location).unwrap();
        assert_eq!(s.search_state().unwrap(), IndexState::Current);
        assert_eq!(merging(&s), (AUTOMERGE, CRISISMERGE));
        s.transaction(|tx| tx.append_rows("a", &conversation()))
            .unwrap();
        let hits = hits(&s, "tenant registry upstream", None);
        assert!(!hits.is_empty());
        // As the store version before left it: an index of the version before.
        s.conn
            .execute_batch(&format!(
                "UPDATE search_state SET version = {}; PRAGMA user_version = {};",
                INDEX_VERSION - 1,
                crate::store::STORE_VERSION - 1
            ))
            .unwrap();
        hits
    };
    let mut s = Store::open(&location).unwrap();
    assert_eq!(s.search_state().unwrap(), IndexState::Outdated);
    let entries: i64 = s
        .conn
        .query_row("SELECT count(*) FROM search_index_docsize", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(entries, 0, "the older entries are gone");
    s.rebuild_search_index(&mut |_, _| {}).unwrap();
    assert_eq!(s.search_state().unwrap(), IndexState::Current);
    assert_eq!(
        hits(&s, "tenant registry upstream", None),
        kept_from_the_start
    );
    assert_eq!(merging(&s), (AUTOMERGE, CRISISMERGE));
}

/// The index's `automerge` and `crisismerge`, as its table holds them.
fn merging(s: &Store) -> (u32, u32) {
    let get = |k: &str| {
        s.conn
            .query_row("SELECT v FROM search_index_config WHERE k = ?1", [k], |r| {
                r.get(0)
            })
            .unwrap()
    };
    (get("automerge"), get("crisismerge"))
}

/// A batch's transactions are savepoints whose index entries wait for the
/// batch's end: the index then holds what the same transactions make one
/// by one, and nothing of one rolled back.
#[test]
fn a_batch_indexes_what_its_transactions_kept_and_nothing_of_one_rolled_back() {
    let one_by_one = store_with(&[("a", conversation()), ("b", conversation()[2..].to_vec())]);
    let mut batched = Store::open_memory().unwrap();
    batched.begin_batch().unwrap();
    assert!(batched.batch.is_some());
    batched
        .transaction(|tx| tx.append_rows("a", &conversation()))
        .unwrap();
    let failed: std::result::Result<u64, StoreError> = batched.transaction(|tx| {
        tx.append_rows("x", &[ask("a zanzibar only the failed file holds", 1)])?;
        Err(StoreError::Corrupt("a bad line after its rows".into()))
    });
    assert!(failed.is_err());
    batched
        .transaction(|tx| tx.append_rows("b", &conversation()[2..]))
        .unwrap();
    // Nothing of the batch is in the index before it commits.
    assert!(contents(&batched).is_empty());
    batched.commit_batch().unwrap();
    assert!(batched.batch.is_none());
    let kept = contents(&one_by_one);
    assert!(!kept.is_empty());
    assert_eq!(contents(&batched), kept);
    assert!(hits(&batched, "zanzibar", None).is_empty());
    assert_eq!(batched.reader().task_rows("x").unwrap(), vec![]);
    for q in ["tenant registry", "upstream", "\"git push\""] {
        assert_eq!(hits(&batched, q, None), hits(&one_by_one, q, None), "{q}");
    }
}

/// A row too large to insert in one piece (written into its row in
/// pieces) is indexed as any other: before, its entries were dropped, and
/// the index kept differed from the one rebuilt from the record.
#[test]
fn a_large_row_is_indexed_as_a_rebuilt_index_holds_it() {
    let mut rng = 11u64;
    // Noise does not compress, so the row stays past the large-row size.
    let noise: String = (0..(3 << 19))
        .map(|_| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(b'a' + (rng >> 59) as u8)
        })
        .collect();
    let pasted = format!("the zanzibar deployment notes follow {noise} and end with quokka");
    let mut rows = conversation();
    rows.insert(1, ask(&pasted, 1));
    let mut s = store_with(&[("t", rows)]);
    let encoding: String = s
        .conn
        .query_row(
            "SELECT content_encoding FROM task_message WHERE task_id = 't' AND seq = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        encoding,
        crate::store::raw::CONTENT_JSON,
        "the row is stored large"
    );
    for word in ["zanzibar", "quokka"] {
        assert_eq!(
            hits(&s, word, None),
            vec![("t".into(), row(1, 1, 0))],
            "{word}"
        );
    }
    let kept = contents(&s);
    s.conn.execute_batch("DROP TABLE search_index").unwrap();
    s.rebuild_search_index(&mut |_, _| {}).unwrap();
    assert_eq!(contents(&s), kept);
}
