//! Property tests over generated transcripts and budgets, run by the real
//! session driver over real stores: determinism, idempotence, legality, and
//! the trigger guarantee.

use proptest::prelude::*;
use serde_json::json;

use super::driver::Driver;
use super::settings::RunSettings;
use super::tests::{Record, file_text, write_record};
use crate::engine::Status;
use crate::engine::budget::Budget;
use crate::engine::estimate::CharsPerToken;
use crate::engine::parts::PartState;
use crate::engine::toolrules::ToolRules;
use crate::model::decimal::Ratio;
use crate::model::{Block, Kind, Role};
use crate::store::{DbLocation, Store};
use crate::summarize::StaticCheckpoint;
use crate::view::validate;

/// The case count: `PROPTEST_CASES` (set by `fuzz/run`), else `default`.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Debug, Clone)]
pub(crate) enum Ev {
    Ask(String),
    Tool {
        tool: usize,
        tokens: usize,
    },
    Reply(String),
    Interrupted,
    AgentCompaction(String),
    /// An ask with an image (`seed` picks its bytes, so some repeat) and,
    /// when `file` is set, an inline file.
    MediaAsk {
        text: String,
        seed: u8,
        file: bool,
    },
    /// A tool answered with text and an image.
    ImageTool {
        seed: u8,
    },
}

const TOOLS: [&str; 5] = ["Read", "Grep", "Bash", "reflect", "Keep"];

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        1 => "[a-z ]{1,40}( do not touch prod)?".prop_map(Ev::Ask),
        6 => (0..TOOLS.len(), 0usize..2_600).prop_map(|(tool, tokens)| Ev::Tool { tool, tokens }),
        2 => "\\PC{1,60}".prop_map(Ev::Reply),
        1 => Just(Ev::Interrupted),
        1 => "[a-z ]{1,40}".prop_map(Ev::AgentCompaction),
        1 => ("[a-z ]{1,30}", 0u8..4, any::<bool>())
            .prop_map(|(text, seed, file)| Ev::MediaAsk { text, seed, file }),
        1 => (0u8..4).prop_map(|seed| Ev::ImageTool { seed }),
    ]
}

pub(crate) fn transcript() -> impl Strategy<Value = Vec<Ev>> {
    ("[a-z ]{1,30}", prop::collection::vec(ev(), 1..28)).prop_map(|(first, mut rest)| {
        rest.insert(0, Ev::Ask(first));
        rest
    })
}

pub(crate) fn budget() -> impl Strategy<Value = Budget> {
    (
        2_000u64..40_000,
        100u64..2_000,
        300_000u32..950_000,
        0u32..8,
    )
        .prop_flat_map(|(window, reserve, trigger, protect)| {
            (
                Just((window, reserve, trigger, protect)),
                100_000u32..trigger,
            )
                .prop_map(|((window, reserve, trigger, protect), stop)| Budget {
                    window,
                    output_reserved: reserve,
                    trigger_ratio: Ratio::from_ppm(trigger),
                    stop_ratio: Ratio::from_ppm(stop),
                    protect_recent_steps: protect,
                    summary_budget_tokens: 300,
                })
        })
}

pub(crate) fn build(events: &[Ev]) -> Record {
    let rules = ToolRules::with_overrides(r#"{"rules":[{"tools":["Keep"],"rule":"keep"}]}"#)
        .expect("valid rules");
    let mut rec = Record::with_rules(rules);
    // Half the transcripts carry recorded usage, half are cold starts.
    rec.usage = events.len().is_multiple_of(2);
    for e in events {
        match e {
            Ev::Ask(t) => rec.ask(t),
            Ev::Tool { tool, tokens } => rec.tool_step(TOOLS[*tool], &file_text(*tokens)),
            Ev::Reply(t) => rec.reply(t),
            Ev::Interrupted => rec.interrupted_call(),
            Ev::AgentCompaction(t) => rec.agent_compaction(t),
            Ev::MediaAsk { text, seed, file } => rec.media_ask(text, *seed, *file),
            Ev::ImageTool { seed } => rec.image_tool_step(*seed),
        }
    }
    rec
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    /// The real driver, call by call, over a file store and an in-memory one:
    /// (a) the same record, store and budget give byte-identical views;
    /// (b) re-running a call restores the same view and mints nothing;
    /// (c) every view is legal, the preflight at each turn start too, and a
    ///     preflight neither reduces nor mints;
    /// (d) over trigger only with a status that says so, and then with the
    ///     ladder exhausted.
    #[test]
    fn driver_properties(events in transcript(), b in budget()) {
        let rec = build(&events);
        let est = CharsPerToken::default();
        let settings = || RunSettings::new(b, &est, &StaticCheckpoint);
        let dir = tempfile::tempdir().unwrap();
        let mut file = Store::open(&DbLocation::File(dir.path().join("props.db"))).unwrap();
        let index = rec.store_into(&mut file);
        let mut mem = Store::open_memory().unwrap();
        let other_index = rec.store_into(&mut mem);
        let mut first = Driver::new(&file, &index, settings()).unwrap();
        let mut second = Driver::new(&mem, &other_index, settings()).unwrap();
        for k in 1..=index.calls() + 1 {
            if index.turn_first_call(k) == k {
                let pre = first.preflight(&file, k).unwrap();
                prop_assert!(pre.new_entries.is_empty(), "call {}: a preflight minted", k);
                prop_assert!(pre.report.tiers_fired.is_empty(), "call {}: a preflight reduced", k);
                let v = validate(&pre.view);
                prop_assert!(v.is_empty(), "call {}: illegal preflight {:?}", k, v);
            }
            let a = first.step(&mut file, k).unwrap();
            let other = second.step(&mut mem, k).unwrap();
            prop_assert_eq!(a.view.canonical_bytes(), other.view.canonical_bytes(), "call {} differs between stores", k);
            prop_assert_eq!(&a.report, &other.report);
            let again = first.step(&mut file, k).unwrap();
            prop_assert_eq!(&a.view, &again.view, "call {}: a re-run changed the view", k);
            prop_assert!(again.new_entries.is_empty(), "call {}: a re-run minted {:?}", k, again.new_entries);
            let v = validate(&a.view);
            prop_assert!(v.is_empty(), "call {}: illegal view {:?}", k, v);
            let r = &a.report;
            prop_assert_eq!(r.status == Status::Ok, r.tokens_after <= r.trigger);
            if r.tokens_after > r.trigger && !r.gated {
                prop_assert!(matches!(r.status, Status::Breakthrough | Status::OverWindow), "call {}: {:?}", k, r.status);
                // The ladder was exhausted: no tool with a stored form is left raw.
                for p in &a.parts {
                    if let Some(id) = p.tool_id() && rec.forms.contains_key(id) {
                        prop_assert!(p.state != PartState::Raw, "call {}: {} left raw over trigger", k, p.address);
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    /// A driver handed the grown record between calls (as `watch` hands it
    /// the rows each look imported) makes every call as a driver that ran
    /// over the whole record from the start: the same views and reports,
    /// wherever the record was cut (inside a turn, between a tool call and
    /// its result, before the first call).
    #[test]
    fn a_driver_grown_between_calls_equals_one_over_the_whole_record(
        events in transcript(),
        b in budget(),
        cuts in prop::collection::vec(0u32..=1000, 1..5),
    ) {
        let rec = build(&events);
        let msgs = rec.messages();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| msgs.len() * *c as usize / 1000).collect();
        cuts.sort_unstable();
        cuts.push(msgs.len());
        let est = CharsPerToken::default();
        let settings = || RunSettings::new(b, &est, &StaticCheckpoint);
        let dir = tempfile::tempdir().unwrap();
        let mut whole = Store::open(&DbLocation::File(dir.path().join("whole.db"))).unwrap();
        let whole_index = write_record(msgs, &rec.forms, &mut whole);
        let mut reference = Driver::new(&whole, &whole_index, settings()).unwrap();
        // A form is minted when its result is imported.
        let forms_of = |rows: &[crate::model::Message]| -> std::collections::HashMap<_, _> {
            rec.forms
                .iter()
                .filter(|(id, _)| {
                    rows.iter().flat_map(|m| &m.content).any(|b| {
                        matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == *id)
                    })
                })
                .map(|(id, f)| (id.clone(), f.clone()))
                .collect()
        };
        let mut live = Store::open(&DbLocation::File(dir.path().join("live.db"))).unwrap();
        let first = write_record(&msgs[..cuts[0]], &forms_of(&msgs[..cuts[0]]), &mut live);
        let mut grown = Driver::new(&live, Box::new(first), settings()).unwrap();
        let mut k = 1;
        for cut in cuts {
            if cut > grown.index.len() {
                let index = write_record(&msgs[..cut], &forms_of(&msgs[..cut]), &mut live);
                grown.grow(&live, Box::new(index)).unwrap();
            }
            while k <= grown.index.calls() {
                let a = grown.step(&mut live, k).unwrap();
                let e = reference.step(&mut whole, k).unwrap();
                prop_assert_eq!(a.view.canonical_bytes(), e.view.canonical_bytes(), "call {} after a cut at row {}", k, cut);
                prop_assert_eq!(&a.report, &e.report, "call {}", k);
                k += 1;
            }
            // What the raw history holds for the next call, not recorded yet.
            grown.raw_estimate(k).unwrap();
        }
        prop_assert_eq!(k, whole_index.calls() + 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(24), ..ProptestConfig::default() })]

    /// A live run: the record grows call by call (the rows before each call
    /// appended just before it with `Tx::append_rows`, as `compactor proxy`
    /// appends them), one driver carried on over it with `grow`, and each
    /// call equals what a new driver derives over the same record and store
    /// at that call; appended a call at a time, the rows chain as they do
    /// imported whole.
    #[test]
    fn a_driver_grown_call_by_call_equals_a_new_one_at_every_call(
        events in transcript(),
        b in budget(),
    ) {
        let rec = build(&events);
        let est = CharsPerToken::default();
        let settings = || RunSettings::new(b, &est, &StaticCheckpoint);
        let mut mem = Store::open_memory().unwrap();
        let whole = rec.store_into(&mut mem);
        let rows = whole.all_rows().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let open = |name: &str| {
            let mut s = Store::open(&DbLocation::File(dir.path().join(name))).unwrap();
            s.transaction(|tx| -> Result<(), crate::store::StoreError> {
                for f in rec.forms.values() {
                    tx.put_tool_form("t", f)?;
                }
                Ok(())
            })
            .unwrap();
            s
        };
        let load = |s: &Store| Box::new(crate::session::record::TaskRecordIndex::load(s, "t").unwrap());
        let (mut live_store, mut fresh_store) = (open("live.db"), open("fresh.db"));
        let mut live: Option<Driver<'_, Box<crate::session::record::TaskRecordIndex>>> = None;
        let mut appended = 0;
        for k in 1..=whole.calls() + 1 {
            let end = whole.history_end(k);
            for s in [&mut live_store, &mut fresh_store] {
                s.transaction(|tx| tx.append_rows("t", &rows[appended..end])).unwrap();
            }
            appended = end;
            // Every other call grown with an index loaded anew, the others
            // in place (read again through the index's own connection).
            match live.as_mut() {
                Some(d) if k % 2 == 0 => d.grow_in_place(&live_store).unwrap(),
                Some(d) => d.grow(&live_store, load(&live_store)).unwrap(),
                None => live = Some(Driver::new(&live_store, load(&live_store), settings()).unwrap()),
            }
            let d = live.as_mut().unwrap();
            prop_assert_eq!(d.index.calls() + 1, k);
            let a = d.step(&mut live_store, k).unwrap();
            let fresh_index = load(&fresh_store);
            let mut fresh = Driver::new(&fresh_store, fresh_index, settings()).unwrap();
            let f = fresh.step(&mut fresh_store, k).unwrap();
            prop_assert_eq!(a.view.canonical_bytes(), f.view.canonical_bytes(), "call {}", k);
            prop_assert_eq!(&a.report, &f.report, "call {}", k);
        }
        let live_rows = live_store.reader().task_rows("t").unwrap();
        prop_assert_eq!(live_rows.len(), rows.len());
        prop_assert!(mem.reader().consistent_with("t", &live_rows).unwrap());
    }
}

/// An image whose bytes `seed` picks (estimated at the flat image figure,
/// far more than its placeholder line).
pub(crate) fn image(seed: u8) -> Block {
    Block::Image {
        source: crate::model::ImageSource {
            kind: "base64".into(),
            media_type: Some("image/png".into()),
            data: Some(format!("{seed}").repeat(100)),
            url: None,
        },
    }
}

/// An inline text file of about `tokens` tokens (its bytes in the request).
pub(crate) fn inline_file(tokens: usize) -> Block {
    Block::Other(json!({
        "type": "document",
        "title": "notes.txt",
        "source": {"type": "text", "media_type": "text/plain", "data": file_text(tokens)},
    }))
}

/// Whether `now`'s messages extend `prev`'s byte for byte: every message of
/// `prev` is `now`'s at the same place, the last one perhaps continued with
/// more blocks (what a prompt cache reads again). The view of a history
/// with nothing to send yet (one placeholder message) is extended by any.
pub(crate) fn extends(prev: &crate::view::View, now: &crate::view::View) -> bool {
    let (p, n) = (&prev.messages, &now.messages);
    let empty = Block::Text {
        text: crate::engine::projection::EMPTY_TEXT.to_string(),
    };
    if p.len() == 1 && p[0].content == [empty] {
        return true;
    }
    let Some((last, before)) = p.split_last() else {
        return true;
    };
    n.len() >= p.len()
        && before.iter().zip(n).all(|(a, b)| a == b)
        && n[before.len()].role == last.role
        && n[before.len()].content.starts_with(&last.content)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    /// Under the trigger the view is the client's own bytes: across
    /// consecutive calls at which no tier fires and nothing is minted (the
    /// gate's bookkeeping aside), each call's forwarded messages extend the
    /// previous call's byte for byte, turn starts included, whatever the
    /// history holds (images, inline files, interrupted calls, the client's
    /// own compactions) and whatever earlier calls minted.
    #[test]
    fn a_call_that_mints_nothing_extends_the_view_before_it(events in transcript(), b in budget()) {
        let rec = build(&events);
        let est = CharsPerToken::default();
        let mut store = Store::open_memory().unwrap();
        let index = rec.store_into(&mut store);
        let mut d = Driver::new(&store, &index, RunSettings::new(b, &est, &StaticCheckpoint)).unwrap();
        let mut prev: Option<std::sync::Arc<crate::view::View>> = None;
        for k in 1..=index.calls() + 1 {
            let out = d.step(&mut store, k).unwrap();
            let minted = out
                .new_entries
                .iter()
                .any(|(key, _)| key != crate::engine::entries::GATE_KEY);
            if let Some(prev) = &prev && !minted && out.report.tiers_fired.is_empty() {
                prop_assert!(
                    extends(prev, &out.view),
                    "call {} minted nothing and fired no tier, yet does not extend call {}:\n{}\n{}",
                    k, k - 1,
                    String::from_utf8_lossy(&prev.canonical_bytes()),
                    String::from_utf8_lossy(&out.view.canonical_bytes())
                );
            }
            prev = Some(out.view.clone());
        }
    }
}

impl Record {
    /// An ask carrying an image and, with `file`, an inline file.
    pub(crate) fn media_ask(&mut self, text: &str, seed: u8, file: bool) {
        let mut content = vec![Block::Text { text: text.into() }, image(seed)];
        if file {
            content.push(inline_file(800));
        }
        self.push_row(Role::User, Kind::Ask, content);
    }

    /// A generation calling a screenshot tool, answered with text and an image.
    pub(crate) fn image_tool_step(&mut self, seed: u8) {
        let id = format!("toolu_img_{}", self.messages().len());
        self.push_generation(vec![Block::ToolUse {
            id: id.clone(),
            name: "Screenshot".into(),
            input: json!({"url": "http://localhost/"}),
        }]);
        self.push_row(
            Role::User,
            Kind::ToolResult,
            vec![Block::ToolResult {
                tool_use_id: id,
                content: crate::model::ToolContent::Blocks(vec![
                    Block::Text {
                        text: "the page as rendered".into(),
                    },
                    image(seed),
                ]),
                is_error: false,
            }],
        );
    }

    /// A generation whose tool call never got a result.
    pub(crate) fn interrupted_call(&mut self) {
        let id = format!("toolu_int_{}", self.messages().len());
        self.push_generation(vec![Block::ToolUse {
            id,
            name: "Bash".into(),
            input: json!({"command": "sleep 600"}),
        }]);
        self.push_row(
            Role::User,
            Kind::Interrupt,
            vec![Block::Text {
                text: "[Request interrupted by user for tool use]".into(),
            }],
        );
    }

    /// The agent compacted its own context: a boundary, then its summary.
    pub(crate) fn agent_compaction(&mut self, summary: &str) {
        self.push_row(
            Role::Meta,
            Kind::CompactBoundary,
            vec![Block::Text {
                text: "Conversation compacted (manual)".into(),
            }],
        );
        self.push_row(
            Role::User,
            Kind::CompactSummary,
            vec![Block::Text {
                text: format!(
                    "This session is being continued from a previous conversation. {summary}"
                ),
            }],
        );
    }
}
