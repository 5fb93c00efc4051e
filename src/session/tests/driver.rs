//! The driver's own tests: its caches held to the derivation, the store
//! adapters, the record index.

use proptest::prelude::*;

use std::collections::HashMap;

use crate::engine::entries::Entry;
use crate::engine::estimate::CharsPerToken;
use crate::engine::parts::{coverage_key, coverage_next, coverage_start, reconstruct};
use crate::engine::restore::{Snapshot, ToolForms};
use crate::engine::{CallOutput, Minted, RawMeasure};
use crate::model::{Kind, Usage};
use crate::session::driver::Driver;
use crate::session::props::{budget, build, transcript};
use crate::session::record::{HeadsBuilder, RowSource, TaskRecordIndex, is_agent_compaction};
use crate::session::settings::RunSettings;
use crate::session::stored::{FormReader, FormSource, Held, SnapshotCache, cached};
use crate::store::{DbLocation, Store};
use crate::store::{RowHead, StoreError};
use crate::summarize::StaticCheckpoint;

#[test]
fn the_snapshot_cache_holds_no_summary_text_nor_tool_form_and_reads_them_by_key() {
    let mut store = Store::open_memory().unwrap();
    let summary = |text: &str| Entry::Summary {
        text: text.into(),
        covers: 3,
        summarizer: "extractive".into(),
        extends: None,
        minted_turn: 1,
        minted_call: 2,
    };
    let (key, later) = (coverage_key(&[7; 32]), coverage_key(&[8; 32]));
    let shrink = Entry::Shrink {
        rule: "r".into(),
        form: serde_json::json!({"input": {"a": 1}}),
    };
    store
        .transaction(|tx| -> Result<(), StoreError> {
            tx.upsert_task(&task_t())?;
            tx.put_entry("t", "p", &key, &summary("## Requests\n- #1: a").to_value())?;
            tx.put_entry("t", "p", "tool:x", &shrink.to_value())?;
            tx.put_entry("t", "p", "meta:x", &serde_json::json!({"kind": "nonsense"}))
        })
        .unwrap();
    let mut cache = SnapshotCache::read((0, 0), &store, "t", "p").unwrap();
    assert_eq!(
        cache.entries.len(),
        2,
        "an entry that does not decode is left out"
    );
    assert_eq!(cache.held(&key), Some(&Held::Summary));
    assert_eq!(cache.held("tool:x"), Some(&Held::Shrink));
    assert!(cache.covers.contains(&[7; 32]));
    // The driver's own write is held the same way, and read back whole.
    let text = "## Requests\n- #1: a\n- #2: b";
    store
        .transaction(|tx| tx.put_entry("t", "p", &later, &summary(text).to_value()))
        .unwrap();
    cache.put(&later, &Minted::Value(summary(text).to_value()));
    assert_eq!(cache.held(&later), Some(&Held::Summary));
    // A shrink entry written from a stored form is held by its kind.
    let shrunk = Minted::StoredForm {
        tool_id: "y".into(),
    };
    cache.put("tool:y", &shrunk);
    assert_eq!(cache.held("tool:y"), Some(&Held::Shrink));
    let stored = cached(&cache, &store, "t", "p");
    assert_eq!(
        stored.entry(&key).unwrap(),
        Some(summary("## Requests\n- #1: a"))
    );
    assert_eq!(stored.entry(&later).unwrap(), Some(summary(text)));
    assert_eq!(stored.entry("tool:x").unwrap(), Some(shrink));
    assert_eq!(stored.entry("meta:x").unwrap(), None);
}

/// The record of the tests' task `t`.
fn task_t() -> crate::store::TaskInfo {
    crate::store::TaskInfo {
        id: "t".into(),
        format: "anthropic".into(),
        ..Default::default()
    }
}

/// Put a simulated transcript into a store the way import does.
fn stored(events: &[crate::session::props::Ev], store: &mut Store) -> TaskRecordIndex {
    let sim = build(events);
    store
        .transaction(|tx| -> Result<(), StoreError> {
            tx.upsert_task(&task_t())?;
            tx.append_messages("t", None, sim.messages())?;
            for f in sim.forms.values() {
                tx.put_tool_form("t", f)?;
            }
            Ok(())
        })
        .unwrap();
    TaskRecordIndex::load(store, "t").unwrap()
}

/// Every call's view, report and new entries, as one string.
fn outcome(out: &CallOutput) -> String {
    format!(
        "{}\n{}\n{}",
        String::from_utf8(out.view.canonical_bytes()).unwrap(),
        serde_json::to_string(&out.report).unwrap(),
        serde_json::to_string(&out.new_entries).unwrap()
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::session::props::cases(32), ..ProptestConfig::default() })]

    /// The caches are caches of the derivation: a cached driver (its
    /// snapshot, raw history and measures, view hash resumed) gives
    /// byte-identical views, reports and entries to one that re-derives
    /// everything at every call, also when the driver forgets its
    /// checkpoint, and when another connection forgets the compaction
    /// state between calls (the cache must see `data_version` move).
    #[test]
    fn cached_and_uncached_drivers_agree(
        events in transcript(),
        b in budget(),
        forget_at in 0u32..30,
        wipe_at in 0u32..30,
    ) {
        let est = CharsPerToken::default();
        let settings = || RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint };
        let dir = tempfile::tempdir().unwrap();
        let loc = DbLocation::File(dir.path().join("cached.db"));
        let mut cached_store = Store::open(&loc).unwrap();
        let index = stored(&events, &mut cached_store);
        let mut reference_store = Store::open_memory().unwrap();
        let reference_index = stored(&events, &mut reference_store);
        let mut cached = Driver::new(&cached_store, &index, settings()).unwrap();
        let mut reference = Driver::uncached(&reference_store, &reference_index, settings()).unwrap();
        for k in 1..=index.calls() + 1 {
            if k == wipe_at {
                // Another writer: a second connection to the cached store.
                let mut other = Store::open(&loc).unwrap();
                other.transaction(|tx| tx.forget_compaction("t", None)).unwrap();
                reference_store.transaction(|tx| tx.forget_compaction("t", None)).unwrap();
            }
            if k == forget_at {
                cached.forget();
                reference.forget();
            }
            let a = outcome(&cached.step(&mut cached_store, k).unwrap());
            let r = outcome(&reference.step(&mut reference_store, k).unwrap());
            prop_assert_eq!(a, r, "call {}", k);
            let a = outcome(&cached.preflight(&cached_store, k).unwrap());
            let r = outcome(&reference.preflight(&reference_store, k).unwrap());
            prop_assert_eq!(a, r, "preflight at call {}", k);
            prop_assert_eq!(cached.raw_estimate(k).unwrap(), reference.raw_estimate(k).unwrap());
        }
    }

    /// A one-shot preflight that never holds its view (hashed as it is
    /// projected, the raw history handed over uncopied, rows read from
    /// the store as they are needed) reports exactly what a preflight
    /// that builds its view does: the same hash of the same bytes, the
    /// same messages, parts and measures, at every call, also once calls
    /// have stored summaries and forms for it to restore.
    #[test]
    fn unkept_one_shot_preflight_reports_what_the_built_view_gives(events in transcript(), b in budget()) {
        let est = CharsPerToken::default();
        let settings = || RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint };
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
        let index = stored(&events, &mut store);
        let mut stepper = Driver::new(&store, &index, settings()).unwrap();
        for k in 1..=index.calls() + 1 {
            let built = stepper.preflight(&store, k).unwrap();
            let mut once = Driver::new(&store, &index, settings()).unwrap();
            once.one_shot_unkept();
            let unkept = once.preflight(&store, k).unwrap();
            // With no summary stored it streams its parts and keeps none.
            let no_summary = once.snapshot.as_ref().unwrap().covers.is_empty();
            prop_assert_eq!(unkept.parts.is_empty(), no_summary || built.parts.is_empty(), "call {}", k);
            prop_assert_eq!(&unkept.report.view_hash, &built.view.hash(), "call {}", k);
            prop_assert_eq!(unkept.report.messages, built.view.messages.len());
            prop_assert_eq!(
                serde_json::to_string(&unkept.report).unwrap(),
                serde_json::to_string(&built.report).unwrap(),
                "call {}", k
            );
            if !no_summary {
                prop_assert_eq!(&unkept.parts[..], &built.parts[..]);
            }
            prop_assert_eq!(&unkept.new_entries, &built.new_entries);
            prop_assert!(unkept.view.messages.is_empty());
            stepper.step(&mut store, k).unwrap();
        }
    }

    /// A proxy's last call over a large body: a one-shot driver whose view
    /// takes its parts' blocks rather than copies gives the view, report
    /// and entries a one-shot driver that copies them gives, at every call,
    /// and its output holds no parts; the same driver's later calls (no
    /// checkpoint kept, so derived again) give them too.
    #[test]
    fn a_view_that_takes_its_parts_is_the_view_that_copies_them(events in transcript(), b in budget()) {
        let est = CharsPerToken::default();
        let settings = || RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint };
        let dir = tempfile::tempdir().unwrap();
        let open = |name: &str| Store::open(&DbLocation::File(dir.path().join(name))).unwrap();
        let (mut copied_store, mut taken_store) = (open("c.db"), open("t.db"));
        let copied_index = stored(&events, &mut copied_store);
        let taken_index = stored(&events, &mut taken_store);
        let mut takes = Driver::new(&taken_store, &taken_index, settings()).unwrap();
        takes.one_shot_view_only();
        for k in 1..=copied_index.calls() + 1 {
            let mut copies = Driver::new(&copied_store, &copied_index, settings()).unwrap();
            copies.one_shot();
            let c = copies.step(&mut copied_store, k).unwrap();
            let t = takes.step(&mut taken_store, k).unwrap();
            prop_assert!(!c.view.messages.is_empty());
            prop_assert_eq!(outcome(&t), outcome(&c), "call {}", k);
            prop_assert!(t.parts.is_empty(), "call {}", k);
        }
    }

    /// A tool form read by id through the index's own connection (the
    /// ids that have one kept as hashes) is the one the whole map holds,
    /// for every id that has one, and none for an id that has none; an
    /// index of rows in memory holds the map itself.
    #[test]
    fn tool_forms_read_by_id_agree_with_the_whole_map(events in transcript(), other in "[a-z0-9_]{1,12}") {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
        let index = stored(&events, &mut store);
        let all = store.reader().tool_forms("t").unwrap();
        let mut source = FormSource::of(&store, &index).unwrap();
        prop_assert!(matches!(source, FormSource::ByKey(None)));
        // Before the first step prepares it, nothing is read.
        prop_assert_eq!(all.keys().find_map(|id| FormReader::new(&source, &index).form(id).unwrap()), None);
        source.prepare(&index).unwrap();
        let forms = FormReader::new(&source, &index);
        for (id, f) in &all {
            prop_assert_eq!(forms.form(id).unwrap(), Some(f.clone()));
        }
        prop_assert_eq!(forms.form(&other).unwrap(), all.get(&other).cloned());
        let mut mem = Store::open_memory().unwrap();
        let held_index = stored(&events, &mut mem);
        let held = FormSource::of(&mem, &held_index).unwrap();
        prop_assert!(matches!(held, FormSource::InMemory(_)));
        let held = FormReader::new(&held, &held_index);
        for (id, f) in &all {
            prop_assert_eq!(held.form(id).unwrap(), Some(f.clone()));
        }
        prop_assert_eq!(held.form(&other).unwrap(), all.get(&other).cloned());
    }

    /// After every call of a run, the snapshot cache read by key (a
    /// summary's text and a tool entry's form read from the store) gives
    /// every stored entry exactly as decoding them all does, and the raw
    /// history keeps its parts and its coverage chain only from its last
    /// fold: the chain is the whole history's chain from there on, and
    /// its first hash is a stored coverage.
    #[test]
    fn the_cache_read_by_key_agrees_with_every_entry_decoded_and_the_chain_starts_at_the_last_fold(
        events in transcript(),
        b in budget(),
    ) {
        let est = CharsPerToken::default();
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
        let index = stored(&events, &mut store);
        let mut d = Driver::new(&store, &index, RunSettings::new(b, &est, &StaticCheckpoint)).unwrap();
        let rows = index.all_rows().unwrap();
        for k in 1..=index.calls() + 1 {
            d.step(&mut store, k).unwrap();
            let snap = d.snapshot.as_ref().unwrap();
            let by_key = cached(snap, &store, "t", &d.profile);
            let all = store.reader().entries("t", &d.profile).unwrap();
            for (key, v) in &all {
                prop_assert_eq!(by_key.entry(key).unwrap(), Entry::from_value(v), "call {} key {}", k, key);
            }
            prop_assert_eq!(by_key.entry("tool:none").unwrap(), None);
            let Some(raw) = d.raw_history.as_ref() else { continue };
            let parts = reconstruct(&rows[..raw.fed], &est);
            let mut h = coverage_start();
            let full: Vec<_> = parts.iter().map(|p| { h = coverage_next(&h, &p.address); h }).collect();
            let offset = raw.parts.offset();
            let (chain, indexed) = raw.parts.chain();
            prop_assert_eq!(chain.len(), raw.parts.parts().len());
            prop_assert_eq!(indexed, chain.len());
            prop_assert!(chain.iter().eq(full[offset..].iter()), "call {}", k);
            prop_assert!(offset == 0 || snap.covers.contains(&full[offset]), "call {}", k);
        }
    }

    /// The index built from the rows' heads one at a time (a run of
    /// rows of one generation keeping its last usage) equals the index
    /// built from all the heads at once, whatever the order of
    /// generations, usage rows and reused generation ids.
    #[test]
    fn heads_indexed_one_at_a_time_equal_all_at_once(
        rows in prop::collection::vec((0u8..6, 0u32..4, prop::option::of(0u8..4), prop::option::of(1u64..50)), 0..60),
    ) {
        let mut step = 0;
        let heads: Vec<RowHead> = rows
            .into_iter()
            .enumerate()
            .map(|(i, (kind, advance, gen_id, usage))| {
                let kind = [Kind::Generation, Kind::Usage, Kind::ToolResult, Kind::CompactBoundary, Kind::Ask, Kind::CompactSummary][kind as usize];
                // A generation's rows share its step; others follow it.
                if kind == Kind::Generation {
                    step += advance.min(1);
                }
                RowHead {
                    kind,
                    // Runs of turns, not always ascending.
                    turn: (i as u32 / 5) % 3,
                    step,
                    gen_id: gen_id.map(|g| format!("g{g}")),
                    // Some counts past 32 bits, or at their largest.
                    usage: usage.map(|n| Usage {
                        input_tokens: n,
                        output_tokens: i as u64,
                        cache_read_input_tokens: [0, u64::from(u32::MAX), 1 << 40][n as usize % 3],
                        cache_creation_input_tokens: [n, u64::from(u32::MAX) - 1][i % 2],
                    }),
                    timestamp: None,
                }
            })
            .collect();
        // All at once, as the index was built before it streamed.
        let mut first_row = Vec::new();
        let mut step_of_gen: HashMap<&str, u32> = HashMap::new();
        for (i, m) in heads.iter().enumerate() {
            if m.kind == Kind::Generation && m.step as usize > first_row.len() {
                first_row.push(i);
                if let Some(g) = &m.gen_id {
                    step_of_gen.insert(g, m.step);
                }
            }
        }
        let mut usage = vec![None; first_row.len()];
        for m in &heads {
            if let (Some(u), Some(g)) = (&m.usage, &m.gen_id)
                && let Some(&s) = step_of_gen.get(g.as_str())
            {
                usage[s as usize - 1] = Some(*u);
            }
        }
        // A compaction row counts once a conversation row came before it.
        let compacted: Vec<bool> = first_row
            .iter()
            .map(|&r| {
                (0..r).any(|j| {
                    is_agent_compaction(heads[j].kind)
                        && heads[..j].iter().any(|h| h.kind.reaches_view())
                })
            })
            .collect();
        let kinds: Vec<(Kind, u32)> = heads.iter().map(|h| (h.kind, h.turn)).collect();
        let turns: Vec<u32> = (1..=first_row.len() + 1)
            .map(|k| first_row.get(k - 1).copied().unwrap_or(heads.len()))
            .map(|end| end.checked_sub(1).map_or(0, |i| heads[i].turn))
            .collect();
        let mut b = HeadsBuilder::default();
        for h in heads.iter().cloned() {
            b.push(h);
        }
        let index = b.finish("t", RowSource::Memory(Vec::new()));
        prop_assert_eq!(&index.first_row, &first_row);
        let indexed: Vec<_> = (1..=index.calls()).map(|k| index.usage(k)).collect();
        prop_assert_eq!(&indexed, &usage);
        prop_assert_eq!(&index.agent_compacted_before, &compacted);
        let indexed: Vec<_> = (0..index.len()).map(|i| (index.kind(i), index.turn_at(i))).collect();
        prop_assert_eq!(&indexed, &kinds);
        let indexed: Vec<_> = (1..=index.calls() + 1).map(|k| index.turn_of(k)).collect();
        prop_assert_eq!(&indexed, &turns);
        let raw: Vec<u32> = (1..=first_row.len() as u32)
            .filter(|&k| !compacted[k as usize - 1] && usage[k as usize - 1].is_some())
            .collect();
        prop_assert_eq!(&index.raw_calls, &raw);
    }

    /// An index that reads its rows from the store by block (a file
    /// store) and one that holds them (the same rows in memory) agree on
    /// every call's boundaries, turn, usage and measures, on the
    /// overhead and the system rows, and on any range of rows read.
    #[test]
    fn a_store_read_index_agrees_with_rows_in_memory(
        events in transcript(),
        from in 0usize..40,
        len in 0usize..40,
    ) {
        let est = CharsPerToken::default();
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&DbLocation::File(dir.path().join("s.db"))).unwrap();
        let read = stored(&events, &mut store);
        let rows = store.reader().task_rows("t").unwrap();
        let from_store = matches!(read.rows, RowSource::Store { .. });
        prop_assert!(from_store, "a file store's index reads its rows");
        let held = TaskRecordIndex::new("t", rows.clone());
        prop_assert_eq!(read.len(), rows.len());
        prop_assert_eq!(read.calls(), held.calls());
        for k in 1..=held.calls() + 1 {
            prop_assert_eq!(read.history_end(k), held.history_end(k));
            prop_assert_eq!(read.turn_of(k), held.turn_of(k));
            prop_assert_eq!(read.usage(k), held.usage(k));
            prop_assert_eq!(read.ends_turn(k), held.ends_turn(k));
        }
        prop_assert_eq!(read.raw_measures(&est).unwrap(), held.raw_measures(&est).unwrap());
        prop_assert_eq!(read.overhead(&est).unwrap(), held.overhead(&est).unwrap());
        prop_assert_eq!(read.system_rows().unwrap(), held.system_rows().unwrap());
        prop_assert_eq!(read.all_rows().unwrap(), rows.clone());
        let from = from.min(rows.len());
        let to = (from + len).min(rows.len());
        prop_assert_eq!(read.read_rows(from, to).unwrap(), rows[from..to].to_vec());
        // Backwards after forwards: a block read before is not trusted
        // for rows outside it.
        prop_assert_eq!(read.read_rows(0, from).unwrap(), rows[..from].to_vec());
    }

    /// The raw measures from running totals equal a walk over the parts,
    /// and the ratio from the indexed raw calls equals a scan of them.
    #[test]
    fn raw_measures_and_ratios_equal_a_whole_walk(events in transcript()) {
        let est = CharsPerToken::default();
        let mut mem = Store::open_memory().unwrap();
        let index = stored(&events, &mut mem);
        let measures = index.raw_measures(&est).unwrap();
        let rows = index.all_rows().unwrap();
        for k in 1..=index.calls() + 1 {
            let parts = reconstruct(&rows[..index.history_end(k)], &est);
            prop_assert_eq!(measures[k as usize - 1], RawMeasure::of(&parts, k - 1, &est), "call {}", k);
            let raw = |j: u32| index.raw_recorded(j).map(|p| (p, measures[j as usize - 1].estimate));
            let scanned = (|| {
                let first = (1..k).find_map(raw)?;
                let last = (1..k).rev().find_map(raw)?;
                Some((first, last))
            })();
            let indexed = index.raw_calls.iter().filter(|&&j| j < k).map(|&j| raw(j).unwrap()).collect::<Vec<_>>();
            prop_assert_eq!(scanned, indexed.first().copied().zip(indexed.last().copied()));
        }
    }

    /// Calibration in real-token space: a compacted view is never
    /// predicted above its raw history's prediction, nor below the
    /// overhead plus the unscaled estimate of the view; a raw view is
    /// predicted as its raw history.
    #[test]
    fn compacted_predictions_stay_between_the_floor_and_the_raw_prediction(events in transcript(), b in budget()) {
        let est = CharsPerToken::default();
        let mut mem = Store::open_memory().unwrap();
        let index = stored(&events, &mut mem);
        let mut d = Driver::new(&mem, &index, RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint }).unwrap();
        for k in 1..=index.calls() + 1 {
            let out = d.step(&mut mem, k).unwrap();
            let r = &out.report;
            let floor = r.overhead.unwrap_or(0) + r.estimated_messages;
            prop_assert!(r.tokens_after >= floor, "call {}: {} below the floor {}", k, r.tokens_after, floor);
            prop_assert!(r.tokens_after <= r.raw_predicted, "call {}: {} above the raw prediction {}", k, r.tokens_after, r.raw_predicted);
            prop_assert!(r.tokens_before <= r.raw_predicted, "call {}", k);
            // Only a tier, or the placeholders a ladder mints before any
            // (not a tier), reduce.
            if r.tiers_fired.is_empty() && r.placeholders_minted == 0 {
                prop_assert_eq!(r.tokens_after, r.tokens_before, "call {}", k);
            }
            if !r.ratio_measured {
                prop_assert_eq!(r.ratio, crate::engine::UNIT_RATIO);
            }
        }
    }

    /// Keeping the previous call's parts in memory, re-deriving the
    /// checkpoint before every call, and reopening a file store between
    /// calls all give byte-identical views.
    #[test]
    fn continuous_rederived_and_reopened_runs_agree(events in transcript(), b in budget()) {
        let est = CharsPerToken::default();
        let settings = || RunSettings { budget: b, estimator: &est, summarizer: &StaticCheckpoint, fallback: &StaticCheckpoint };
        let mut mem = Store::open_memory().unwrap();
        let index = stored(&events, &mut mem);
        let mut continuous = Driver::new(&mem, &index, settings()).unwrap();
        let mut views = Vec::new();
        for k in 1..=index.calls() + 1 {
            views.push(String::from_utf8(continuous.step(&mut mem, k).unwrap().view.canonical_bytes()).unwrap());
        }

        let mut mem2 = Store::open_memory().unwrap();
        let index2 = stored(&events, &mut mem2);
        let mut forgetful = Driver::new(&mem2, &index2, settings()).unwrap();
        for k in 1..=index2.calls() + 1 {
            forgetful.forget();
            let v = String::from_utf8(forgetful.step(&mut mem2, k).unwrap().view.canonical_bytes()).unwrap();
            prop_assert_eq!(&v, &views[k as usize - 1], "call {} differs when re-derived", k);
        }

        let dir = tempfile::tempdir().unwrap();
        let loc = DbLocation::File(dir.path().join("s.db"));
        let mut file = Store::open(&loc).unwrap();
        let index3 = stored(&events, &mut file);
        drop(file);
        for k in 1..=index3.calls() + 1 {
            let mut store = Store::open(&loc).unwrap();
            let mut d = Driver::new(&store, &index3, settings()).unwrap();
            let v = String::from_utf8(d.step(&mut store, k).unwrap().view.canonical_bytes()).unwrap();
            prop_assert_eq!(&v, &views[k as usize - 1], "call {} differs after reopening", k);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::session::props::cases(24), ..ProptestConfig::default() })]

    /// Rows a live client's retry superseded (`proxy_superseded`) are left
    /// out of the history: an index of the record that holds them, read
    /// from a file store by block or held in memory, reads as the record
    /// without them, and a run over it makes the same views; a fresh
    /// driver re-running a call over what the first run stored makes that
    /// call's view again (a retry after a restart).
    #[test]
    fn superseded_rows_are_left_out_of_the_history(
        events in transcript(),
        b in budget(),
        at in proptest::collection::vec(0usize..64, 0..4),
    ) {
        let sim = build(&events);
        let rows = sim.messages().to_vec();
        let mut at: Vec<usize> = at.into_iter().map(|i| i % (rows.len() + 1)).collect();
        at.sort_unstable();
        let mut with = Vec::new();
        let mut holes = Vec::new();
        for i in 0..=rows.len() {
            for _ in at.iter().filter(|&&j| j == i) {
                let mut extra = crate::model::Message::new(
                    crate::model::Role::Assistant,
                    Kind::Generation,
                    vec![crate::model::Block::Text { text: format!("an answer superseded at row {i}") }],
                    0,
                );
                extra.gen_id = Some(format!("superseded-{i}"));
                if let Some(next) = rows.get(i).or(rows.last()) {
                    (extra.turn, extra.step) = (next.turn, next.step);
                }
                holes.push(with.len() as u64);
                with.push(extra);
            }
            if let Some(m) = rows.get(i) {
                with.push(m.clone());
            }
        }
        let write = |store: &mut Store, rows: &[crate::model::Message], holes: &[u64]| {
            store
                .transaction(|tx| -> Result<(), StoreError> {
                    tx.upsert_task(&task_t())?;
                    tx.append_messages("t", None, rows)?;
                    for f in sim.forms.values() {
                        tx.put_tool_form("t", f)?;
                    }
                    for (n, &seq) in holes.iter().enumerate() {
                        let s = crate::store::ProxySuperseded { seq, attempt: n as u64 + 1, by_attempt: n as u64 + 2 };
                        tx.put_proxy_superseded("t", &s)?;
                    }
                    Ok(())
                })
                .unwrap();
        };
        let dir = tempfile::tempdir().unwrap();
        let mut file = Store::open(&DbLocation::File(dir.path().join("with.db"))).unwrap();
        write(&mut file, &with, &holes);
        let mut mem = Store::open_memory().unwrap();
        write(&mut mem, &with, &holes);
        let mut clean = Store::open(&DbLocation::File(dir.path().join("clean.db"))).unwrap();
        write(&mut clean, &rows, &[]);
        let from_file = TaskRecordIndex::load(&file, "t").unwrap();
        let from_mem = TaskRecordIndex::load(&mem, "t").unwrap();
        let want = TaskRecordIndex::load(&clean, "t").unwrap();
        for read in [&from_file, &from_mem] {
            prop_assert_eq!(read.len(), rows.len());
            prop_assert_eq!(read.stored_len(), with.len() as u64);
            prop_assert_eq!(read.superseded_rows(), holes.len());
            prop_assert_eq!(read.calls(), want.calls());
            prop_assert_eq!(read.all_rows().unwrap(), rows.clone());
            for k in 1..=want.calls() + 1 {
                prop_assert_eq!(read.history_end(k), want.history_end(k));
                prop_assert_eq!(read.usage(k), want.usage(k));
            }
        }
        let est = CharsPerToken::default();
        let settings = || RunSettings::new(b, &est, &StaticCheckpoint);
        let mut ours = Driver::new(&file, &from_file, settings()).unwrap();
        let mut theirs = Driver::new(&clean, &want, settings()).unwrap();
        for k in 1..=want.calls() + 1 {
            let a = ours.step(&mut file, k).unwrap();
            let w = theirs.step(&mut clean, k).unwrap();
            prop_assert_eq!(&a.report.view_hash, &w.report.view_hash, "call {}", k);
            let mut again = Driver::new(&file, &from_file, settings()).unwrap();
            let r = again.step(&mut file, k).unwrap();
            prop_assert_eq!(&r.report.view_hash, &a.report.view_hash, "call {} re-run by a fresh driver", k);
        }
    }
}
