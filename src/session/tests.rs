//! Engine tests on small hand-built transcripts, run by the real session
//! driver over a real store: each tier fires exactly when the seed says, and
//! not otherwise.

use std::collections::HashMap;

use serde_json::json;

use crate::engine::budget::Budget;
use crate::engine::entries::{Entry, GATE_KEY};
use crate::engine::estimate::CharsPerToken;
use crate::engine::parts::{PartBody, PartState, reconstruct};
use crate::engine::restore::SHELL_TEXT;
use crate::engine::toolrules::{ToolForm, ToolRules};
use crate::engine::*;
use crate::model::{Block, Kind, Message, Role, ToolContent};
use crate::session::driver::Driver;
use crate::session::record::TaskRecordIndex;
use crate::session::settings::RunSettings;
use crate::store::{Store, StoreError, TaskInfo};
use crate::summarize::StaticCheckpoint;
use crate::transcript::TaskSet;
use crate::view::validate;

/// A transcript under construction, written into a real (in-memory) store
/// as import writes it, and run call by call by the real session [`Driver`].
pub(crate) struct Record {
    /// Record provider usage on generations (prompt = overhead + estimate).
    pub usage: bool,
    /// The floor's summarizer (the static checkpoint unless a test says otherwise).
    pub summarizer: Box<dyn crate::engine::summarizer::Summarizer>,
    tasks: TaskSet,
    line: u64,
    generations: u32,
    /// The tool forms minted as import mints them (also written to the store).
    pub forms: HashMap<String, ToolForm>,
    pub rules: ToolRules,
    store: Store,
}

/// The task id the record is stored under.
const TASK: &str = "t";

impl Record {
    pub fn new() -> Record {
        Record::with_rules(ToolRules::default())
    }

    /// A record whose Bash output no rule may shrink (`keep`).
    pub fn keeping_bash() -> Record {
        let keep = r#"{"rules":[{"tools":["Bash"],"rule":"keep"}]}"#;
        Record::with_rules(ToolRules::with_overrides(keep).unwrap())
    }

    pub fn with_rules(rules: ToolRules) -> Record {
        Record {
            usage: false,
            summarizer: Box::new(StaticCheckpoint),
            tasks: TaskSet::default(),
            line: 0,
            generations: 0,
            forms: HashMap::new(),
            rules,
            store: Store::open_memory().expect("in-memory store"),
        }
    }

    fn push(&mut self, role: Role, kind: Kind, content: Vec<Block>, gen_id: Option<String>) {
        self.line += 1;
        let mut m = Message::new(role, kind, content, self.line);
        if self.usage && kind == Kind::Generation {
            // What a provider would have counted: a fixed overhead, the
            // history (a little more than the estimate) and the output.
            let est = CharsPerToken::default();
            let history: u64 = reconstruct(self.messages_so_far(), &est)
                .iter()
                .map(|p| p.tokens)
                .sum();
            let output: u64 = m
                .content
                .iter()
                .map(|b| crate::engine::estimate::block_tokens(&est, b))
                .sum();
            m.usage = Some(crate::model::Usage {
                input_tokens: 3,
                cache_read_input_tokens: 1_000 + history * 11 / 10,
                cache_creation_input_tokens: 0,
                output_tokens: output,
            });
        }
        m.gen_id = gen_id;
        self.tasks.main().push(m);
    }

    fn messages_so_far(&self) -> &[Message] {
        self.tasks.get("").map_or(&[], |t| &t.messages)
    }

    pub fn ask(&mut self, text: &str) {
        self.push(
            Role::User,
            Kind::Ask,
            vec![Block::Text { text: text.into() }],
            None,
        );
    }

    /// One generation calling `tool`, answered by `output`; forms minted as import does.
    pub fn tool_step(&mut self, tool: &str, output: &str) {
        self.generations += 1;
        let id = format!("toolu_{:03}", self.generations);
        let input = json!({"file_path": format!("/src/file_{}.rs", self.generations)});
        self.push(
            Role::Assistant,
            Kind::Generation,
            vec![
                Block::Text {
                    text: format!("Looking at file {}.", self.generations),
                },
                Block::ToolUse {
                    id: id.clone(),
                    name: tool.into(),
                    input: input.clone(),
                },
            ],
            Some(format!("msg_{}", self.generations)),
        );
        let content = ToolContent::Text(output.to_string());
        self.push(
            Role::User,
            Kind::ToolResult,
            vec![Block::ToolResult {
                tool_use_id: id.clone(),
                content: content.clone(),
                is_error: false,
            }],
            None,
        );
        if let Some(f) = self
            .rules
            .compact(&CharsPerToken::default(), &id, tool, &input, &content)
        {
            self.forms.insert(id, f);
        }
    }

    /// `n` calls of `tool`, each answered by a file of about `tokens` tokens.
    /// A record of one ask answered by `n` calls of `tool`, each returning
    /// about `tokens` tokens.
    pub fn of_tool_steps(ask: &str, tool: &str, n: usize, tokens: usize) -> Record {
        let mut rec = Record::new();
        rec.ask(ask);
        rec.tool_steps(tool, n, tokens);
        rec
    }

    pub fn tool_steps(&mut self, tool: &str, n: usize, tokens: usize) {
        for _ in 0..n {
            self.tool_step(tool, &file_text(tokens));
        }
    }

    /// A generation with the given blocks.
    pub fn push_generation(&mut self, content: Vec<Block>) {
        self.generations += 1;
        let id = Some(format!("msg_{}", self.generations));
        self.push(Role::Assistant, Kind::Generation, content, id);
    }

    /// A row outside any generation.
    pub fn push_row(&mut self, role: Role, kind: Kind, content: Vec<Block>) {
        self.push(role, kind, content, None);
    }

    pub fn reply(&mut self, text: &str) {
        self.push_generation(vec![Block::Text { text: text.into() }]);
    }

    pub fn messages(&self) -> &[Message] {
        &self.tasks.get("").expect("main task").messages
    }

    /// The record before model call `k` (the k-th generation).
    pub fn history(&self, k: u32) -> &[Message] {
        let msgs = self.messages();
        let end = msgs
            .iter()
            .position(|m| m.kind == Kind::Generation && m.step == k)
            .unwrap_or(msgs.len());
        &msgs[..end]
    }

    /// Write the record into `store` as import writes it and index it.
    pub fn store_into(&self, store: &mut Store) -> TaskRecordIndex {
        write_record(self.messages(), &self.forms, store)
    }

    /// Write what was added since the last call into the record's own store.
    fn sync(&mut self) -> TaskRecordIndex {
        let msgs = &self.tasks.get("").expect("main task").messages;
        write_record(msgs, &self.forms, &mut self.store)
    }

    /// `f` with a driver over the record as it stands now, under `budget`.
    fn drive<T>(&mut self, budget: Budget, f: impl FnOnce(&mut Driver, &mut Store) -> T) -> T {
        let index = self.sync();
        let est = CharsPerToken::default();
        let settings = RunSettings::new(budget, &est, self.summarizer.as_ref());
        let mut d = Driver::new(&self.store, &index, settings).expect("driver");
        f(&mut d, &mut self.store)
    }

    /// Model call `k` as the driver steps it; its entries are committed.
    pub fn call(&mut self, k: u32, budget: Budget) -> CallOutput {
        self.drive(budget, |d, store| d.step(store, k).expect("step"))
    }

    /// [`Record::call`], whose view must be legal.
    pub fn legal_call(&mut self, k: u32, budget: Budget) -> CallOutput {
        let out = self.call(k, budget);
        assert_legal(&out);
        out
    }

    /// The driver's preflight for the turn of call `k`; stores nothing.
    pub fn preflight(&mut self, k: u32, budget: Budget) -> CallOutput {
        self.drive(budget, |d, store| d.preflight(store, k).expect("preflight"))
    }

    /// Store `entry` under `key` in the compaction state the driver reads
    /// under `budget`, after forgetting what that state held.
    pub fn seed(&mut self, budget: Budget, key: &str, entry: &Entry) {
        self.sync();
        let est = CharsPerToken::default();
        let settings = RunSettings::new(budget, &est, self.summarizer.as_ref());
        let (profile, identity) = (settings.profile(), settings.identity());
        self.store
            .transaction(|tx| -> Result<(), StoreError> {
                tx.forget_compaction(TASK, Some(&profile))?;
                tx.put_profile(&profile, &identity)?;
                tx.put_entry(TASK, &profile, key, &entry.to_value())
            })
            .expect("seeded");
    }
}

/// Write a task's rows and tool forms as import does (rows extend the stored
/// ones, as a re-import of a grown file adds them), then index the task.
pub(crate) fn write_record(
    msgs: &[Message],
    forms: &HashMap<String, ToolForm>,
    store: &mut Store,
) -> TaskRecordIndex {
    store
        .transaction(|tx| -> Result<(), StoreError> {
            tx.upsert_task(&TaskInfo {
                id: TASK.into(),
                format: "anthropic".into(),
                ..Default::default()
            })?;
            tx.append_messages(TASK, None, msgs)?;
            for f in forms.values() {
                tx.put_tool_form(TASK, f)?;
            }
            Ok(())
        })
        .expect("the record is stored");
    TaskRecordIndex::load(store, TASK).expect("the record is indexed")
}

/// A file read of about `tokens` estimated tokens (40 chars a line).
pub(crate) fn file_text(tokens: usize) -> String {
    let lines = tokens * 4 / 40;
    (1..=lines)
        .map(|i| format!("{i:>5}\tlet value_{i:<6} = compute({i:<5});  //"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The default budget with another window and output reserve.
fn budget(window: u64, output_reserved: u64) -> Budget {
    Budget {
        window,
        output_reserved,
        ..Budget::default()
    }
}

fn small_budget() -> Budget {
    // The worked example: w_eff 28000, trigger 18200, stop 14000, protect 5.
    budget(32_000, 4_000)
}

fn assert_legal(out: &CallOutput) {
    let v = validate(&out.view);
    assert!(v.is_empty(), "illegal view: {v:?}");
}

#[test]
fn under_trigger_nothing_fires_and_the_view_is_the_raw_history() {
    let mut rec = Record::of_tool_steps("read the files", "Read", 5, 2_000);
    let out = rec.call(6, small_budget());
    assert!(out.report.tokens_before <= out.report.trigger);
    assert!(out.report.tiers_fired.is_empty());
    assert_eq!(out.report.status, Status::Ok);
    assert!(
        out.new_entries.is_empty(),
        "nothing is minted under trigger"
    );
    let raw = projection::project(&reconstruct(rec.history(6), &CharsPerToken::default())).0;
    assert_eq!(*out.view, raw);
    assert_legal(&out);
}

/// Issue 34: an image and an inline file of an earlier turn reach the view
/// as the client sent them while the view is under the trigger; the first
/// call whose ladder runs mints their placeholders (stored, before any
/// tier), and every later call restores them.
#[test]
fn historical_media_is_placeheld_only_once_the_ladder_runs_then_restored() {
    use crate::session::props::{image, inline_file};
    let mut rec = Record::new();
    rec.push_row(
        Role::User,
        Kind::Ask,
        vec![
            Block::Text {
                text: "what is on this screen".into(),
            },
            image(7),
            inline_file(900),
        ],
    );
    rec.reply("A login form.");
    rec.ask("now read the files");
    rec.tool_steps("Read", 12, 2_000);
    let b = small_budget();
    let media = |v: &crate::view::View| {
        v.messages
            .iter()
            .flat_map(|m| &m.content)
            .any(|b| matches!(b, Block::Image { .. }) || crate::view::text::is_inline_file(b))
    };
    let placeheld =
        |v: &crate::view::View| {
            v.messages.iter().flat_map(|m| &m.content).filter(|b| {
            matches!(b, Block::Text { text } if text.starts_with("[compactor: historical"))
        }).count()
        };
    let mut minted_at = None;
    for k in 2..=14 {
        let out = rec.legal_call(k, b);
        match minted_at {
            None if out.report.tokens_before <= b.trigger() => {
                assert!(
                    media(&out.view),
                    "call {k}: under the trigger the media stays"
                );
                assert_eq!(placeheld(&out.view), 0);
                assert!(out.new_entries.is_empty(), "call {k} minted under trigger");
            }
            None => {
                assert_eq!(out.report.placeholders_minted, 2, "call {k}");
                let keys: Vec<&str> = out
                    .new_entries
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .filter(|k| k.starts_with("placeholder:1:"))
                    .collect();
                assert_eq!(keys.len(), 2, "{:?}", out.new_entries);
                assert!(!media(&out.view));
                assert_eq!(placeheld(&out.view), 2);
                minted_at = Some(k);
            }
            Some(_) => {
                assert_eq!(out.report.placeholders_minted, 0, "call {k}");
                assert!(!media(&out.view), "call {k}: the placeholders are restored");
                assert_eq!(placeheld(&out.view), 2);
                assert_eq!(out.report.restored.images_placeheld, 2);
            }
        }
    }
    assert!(minted_at.is_some(), "the reads push the view over trigger");
}

#[test]
fn shrink_fires_over_trigger_outside_the_protected_window_toward_stop() {
    let mut rec = Record::of_tool_steps("read the files", "Read", 14, 2_000);
    let b = small_budget();
    let mut first = None;
    for k in 1..=15 {
        let out = rec.legal_call(k, b);
        if out.report.tokens_before > b.trigger() && first.is_none() {
            first = Some((k, out));
        }
    }
    let (k, out) = first.expect("the reads push the view over trigger");
    assert_eq!(out.report.tiers_fired, vec![Tier::Shrink]);
    assert!(
        out.report.tokens_after <= b.stop(),
        "shrink aims at stop: {}",
        out.report.tokens_after
    );
    let protect_from = k - b.protect_recent_steps;
    assert_eq!(out.report.protected_from_step, protect_from);
    for p in &out.parts {
        if p.step >= protect_from {
            assert_eq!(
                p.state,
                PartState::Raw,
                "protected part {} touched",
                p.address
            );
        }
    }
    let shrunk: Vec<u32> = out
        .parts
        .iter()
        .filter(|p| matches!(p.state, PartState::Shrunk { .. }))
        .map(|p| p.step)
        .collect();
    assert!(!shrunk.is_empty());
    assert_eq!(shrunk[0], 1, "oldest first");
    // Forms are stored under the part's address.
    assert!(
        out.new_entries
            .iter()
            .any(|(k, v)| k == "tool:toolu_001" && v.kind() == Some("shrink"))
    );
    // Written whole, read again from the tool's stored form (the entry
    // the call hands back names it only).
    let profile = RunSettings::new(b, &CharsPerToken::default(), rec.summarizer.as_ref()).profile();
    let reader = rec.store.reader();
    let form = reader
        .tool_form(TASK, "toolu_001")
        .unwrap()
        .expect("stored form");
    let shrink = Entry::Shrink {
        rule: form.rule,
        form: form.form,
    };
    assert_eq!(
        reader.entry(TASK, &profile, "tool:toolu_001").unwrap(),
        Some(shrink.to_value())
    );
}

#[test]
fn the_dead_zone_holds_and_restore_keeps_the_prefix_stable() {
    let mut rec = Record::of_tool_steps("read the files", "Read", 20, 2_000);
    let b = small_budget();
    let mut prev: Option<CallOutput> = None;
    let mut dead_zone_calls = 0;
    for k in 1..=21 {
        let out = rec.legal_call(k, b);
        let before = out.report.tokens_before;
        if before > b.stop() && before <= b.trigger() {
            assert!(
                out.report.tiers_fired.is_empty(),
                "call {k} fired inside the dead zone"
            );
            dead_zone_calls += 1;
            // Restore re-applied the earlier forms: the previous view is a prefix.
            if let Some(p) = &prev {
                let n = p.view.messages.len();
                assert_eq!(&out.view.messages[..n - 1], &p.view.messages[..n - 1]);
            }
        }
        if out.report.tokens_before <= b.trigger() {
            assert!(out.report.tiers_fired.is_empty());
        }
        prev = Some(out);
    }
    assert!(
        dead_zone_calls >= 2,
        "the scenario passes through the dead zone"
    );
}

#[test]
fn a_shrink_miss_is_skipped_never_dropped_and_the_floor_absorbs_it() {
    // Outputs below the precompact threshold have no form: shrink misses them.
    let mut rec = Record::of_tool_steps(
        "do not touch the tenant_registry table; list the modules",
        "Bash",
        40,
        450,
    );
    let b = budget(16_000, 2_000);
    let mut floor_seen = false;
    for k in 1..=41 {
        let out = rec.legal_call(k, b);
        for p in &out.parts {
            assert_ne!(p.state, PartState::Dropped, "a miss must never drop");
            if let PartBody::Tool {
                output: Some(o), ..
            } = &p.body
            {
                assert_ne!(o.content, ToolContent::Text(SHELL_TEXT.into()));
            }
        }
        if out.report.tokens_before > b.trigger() {
            assert!(
                !out.report.tiers_fired.contains(&Tier::Shrink),
                "nothing to shrink"
            );
            if out.report.tiers_fired.contains(&Tier::Floor) {
                floor_seen = true;
                let tier_misses: u32 = out.report.tiers.iter().map(|t| t.misses).sum();
                assert_eq!(
                    tier_misses, 0,
                    "no shrink tier fired, so none reports misses"
                );
                assert!(
                    out.report.shrink_misses > 0,
                    "but the report says what was skipped"
                );
                assert!(out.parts[0].summary().is_some(), "the fold stands first");
                // The protected window is kept raw, every one of its steps.
                let protect_from = out.report.protected_from_step;
                for step in protect_from..k {
                    assert!(
                        out.parts
                            .iter()
                            .any(|p| p.step == step && p.is_tool() && p.state == PartState::Raw),
                        "call {k}: protected step {step} was folded"
                    );
                }
                assert!(out.parts.iter().skip(1).all(|p| p.summary().is_none()));
                assert!(out.report.tokens_after <= out.report.trigger);
            }
        }
    }
    assert!(floor_seen, "the floor fired");
}

#[test]
fn breakthrough_shrink_breaches_the_window_only_when_needed() {
    let mut rec = Record::of_tool_steps("read everything", "Read", 12, 2_000);
    // w_eff 10000, trigger 6500: the five protected reads alone are ~10000.
    let b = budget(12_000, 2_000);
    let mut seen = false;
    for k in 1..=13 {
        let out = rec.legal_call(k, b);
        let breached = out.parts.iter().any(|p| {
            p.step >= out.report.protected_from_step && p.state != PartState::Raw && p.is_tool()
        });
        let reported = out
            .report
            .tiers_fired
            .iter()
            .any(|t| t.name().starts_with("breakthrough"));
        // Restored forms minted by an earlier breakthrough may sit in the window.
        if breached && out.report.restored.forms_applied == 0 {
            assert!(
                reported,
                "call {k}: the protected window was touched without a breakthrough"
            );
        }
        if out.report.tiers_fired.contains(&Tier::BreakthroughShrink) {
            seen = true;
            assert!(
                out.report.tokens_after <= out.report.trigger || out.report.status != Status::Ok
            );
        }
    }
    assert!(seen, "③ fired");
}

#[test]
fn breakthrough_floor_fires_when_nothing_else_can_and_over_window_is_reported() {
    let mut rec = Record::keeping_bash();
    rec.ask("run the suite");
    rec.tool_steps("Bash", 4, 2_500);
    let b = budget(12_000, 2_000);
    // Call 5: every step is protected, nothing has a form: ① ② ③ cannot act.
    let out = rec.legal_call(5, b);
    assert_eq!(out.report.tiers_fired, vec![Tier::BreakthroughFloor]);
    assert!(out.parts[0].summary().is_some());
    // The last step is never folded.
    assert!(out.parts.iter().any(|p| p.step == 4 && p.is_tool()));

    // One step larger than the whole window: even ④ cannot fit.
    let mut rec = Record::keeping_bash();
    rec.ask("dump the database");
    rec.tool_step("Bash", &file_text(15_000));
    let out = rec.legal_call(2, b);
    assert_eq!(out.report.status, Status::OverWindow);
    assert!(out.report.tokens_after > out.report.w_eff);
}

#[test]
fn disposable_tools_become_the_legal_empty_shell() {
    let mut rec = Record::of_tool_steps("think it through", "reflect", 10, 2_500);
    let out = rec.legal_call(11, small_budget());
    assert!(out.report.tiers_fired.contains(&Tier::Shrink));
    let dropped: Vec<_> = out
        .parts
        .iter()
        .filter(|p| p.state == PartState::Dropped)
        .collect();
    assert!(!dropped.is_empty());
    for p in dropped {
        let PartBody::Tool {
            id, input, output, ..
        } = &p.body
        else {
            panic!("a tool part")
        };
        assert!(id.starts_with("toolu_"), "the call id is kept");
        assert_eq!(input, &json!({}));
        assert_eq!(
            output.as_ref().unwrap().content,
            ToolContent::Text(SHELL_TEXT.into())
        );
    }
    assert!(
        out.new_entries
            .iter()
            .any(|(_, v)| v.as_value() == Some(&Entry::Drop.to_value()))
    );
}

#[test]
fn a_rerun_restores_the_same_view_and_mints_nothing() {
    let mut rec = Record::of_tool_steps("read everything", "Read", 14, 2_000);
    let b = budget(12_000, 2_000);
    for k in 1..=15 {
        let first = rec.call(k, b);
        let second = rec.call(k, b);
        assert_eq!(
            first.view, second.view,
            "call {k}: a re-run changed the view"
        );
        assert!(
            second.new_entries.is_empty(),
            "call {k}: a re-run minted {:?}",
            second.new_entries.iter().map(|e| &e.0).collect::<Vec<_>>()
        );
    }
}

#[test]
fn anti_thrash_holds_after_two_ineffective_compactions_in_a_turn() {
    let mut rec = Record::keeping_bash();
    rec.ask("go");
    rec.tool_step("Bash", &file_text(12_000));
    rec.tool_step("Bash", &file_text(100));
    let b = budget(12_000, 2_000);
    // Seed the gate as if two ineffective compactions already happened this turn.
    let gate = |turn| Entry::Gate {
        turn,
        call: 1,
        streak_before: 1,
        streak_after: 2,
    };
    rec.seed(b, GATE_KEY, &gate(1));
    // Over the window the gate never holds: the provider would reject the call.
    let out = rec.call(3, b);
    assert!(!out.report.gated);
    assert!(out.report.tokens_before > b.w_eff());
    // Over trigger but within the window, it holds.
    let roomy = budget(20_000, 2_000);
    rec.seed(roomy, GATE_KEY, &gate(1));
    let out = rec.call(3, roomy);
    assert!(
        out.report.tokens_before > roomy.trigger() && out.report.tokens_before <= roomy.w_eff()
    );
    assert!(out.report.gated);
    assert!(out.report.tiers_fired.is_empty());
    assert_eq!(out.report.status, Status::OverTrigger);
    assert!(out.new_entries.is_empty());
    // A new turn resets the streak.
    rec.seed(b, GATE_KEY, &gate(0));
    let out = rec.call(3, b);
    assert!(!out.report.gated);
    assert!(!out.report.tiers_fired.is_empty());
    // An effective compaction writes a zero streak; an ineffective one counts up.
    let gate = out
        .new_entries
        .iter()
        .find(|(k, _)| k == GATE_KEY)
        .expect("gate written");
    let Some(Entry::Gate { streak_after, .. }) =
        Entry::from_value(gate.1.as_value().expect("whole"))
    else {
        panic!()
    };
    let saved = out.report.tokens_before - out.report.tokens_after;
    assert_eq!(streak_after == 0, saved >= b.min_effective_saving());
}

#[test]
fn preflight_restores_without_reducing() {
    let mut rec = Record::of_tool_steps("read the files", "Read", 14, 2_000);
    let b = small_budget();
    for k in 1..=15 {
        rec.call(k, b);
    }
    let step = rec.call(15, b);
    rec.ask("now summarise");
    let pre = rec.preflight(16, b);
    assert!(pre.report.tiers_fired.is_empty());
    assert!(pre.new_entries.is_empty());
    assert!(
        pre.report.restored.forms_applied > 0,
        "stored forms are restored"
    );
    // The checkpoint starts with the same bytes the last step sent.
    let n = step.view.messages.len();
    assert_eq!(&pre.view.messages[..n - 1], &step.view.messages[..n - 1]);
}

#[test]
fn interrupted_calls_get_a_marked_synthetic_result() {
    let mut rec = Record::new();
    rec.ask("run it");
    rec.tool_step("Bash", "ok");
    rec.interrupted_call();
    rec.ask("try again");
    rec.reply("Retrying with a shorter timeout.");
    let out = rec.preflight(99, Budget::default());
    assert_legal(&out);
    assert_eq!(out.report.synthetic_results, 1);
    let json = String::from_utf8(out.view.canonical_bytes()).unwrap();
    assert!(json.contains("no result was recorded"));
}

#[test]
fn an_early_negative_constraint_survives_two_folds_verbatim() {
    use crate::summarize::Extractive;
    const RULE: &str = "do not touch the tenant_registry table";
    let mut rec = Record::keeping_bash();
    rec.ask(&format!("Speed up the nightly export; {RULE}."));
    rec.tool_steps("Bash", 40, 700);
    let b = budget(16_000, 2_000);
    rec.summarizer = Box::new(Extractive);
    let (out, folds) = calls_folding(&mut rec, 41, |rec, k| rec.call(k, b));
    assert!(folds >= 2, "the floor folded {folds} times");
    let head = out.parts[0].summary().expect("the history is folded");
    assert!(head.summarizer == "extractive");
    // The ask itself is long gone from the raw tail; the summary keeps the rule.
    assert!(!out.parts[1..].iter().any(|p| p.kind == Kind::Ask));
    let json = String::from_utf8(out.view.canonical_bytes()).unwrap();
    assert!(json.contains(RULE), "the rule is in the view verbatim");
    assert!(head.text.contains("## Constraints"));
    let constraints = &head.text[head.text.find("## Constraints").unwrap()..];
    assert!(constraints.contains(RULE));
}

/// compactor's own `## Task Context`, as a written session carries it in.
const CARRIED: &str = "## Task Context\n\n## Requests\n- #1: Speed up the nightly export. Do not touch the tenant_registry table.\n- #2: Batch the reads.\n\n## Deliverables\n- services/export/run.py: edited (step 4)\n\n## Constraints\n- do-not-touch-tenant-registry: Do not touch the tenant_registry table.\n\n## Current state\nGoal: #2 — Batch the reads.\nDeliverable: written so far: services/export/run.py; anything else the goal asks for is still owed\nStatus: no open error at the end of the folded span\nNext: Reading the batch loader.\n";

/// A record that opens with the carried summary, then `asks` more work.
fn carried_record(summarizer: Box<dyn crate::engine::summarizer::Summarizer>) -> Record {
    let mut rec = Record::keeping_bash();
    rec.summarizer = summarizer;
    rec.push_row(
        Role::User,
        Kind::CarriedSummary,
        vec![Block::Text {
            text: CARRIED.into(),
        }],
    );
    rec.tool_steps("Bash", 4, 700);
    rec.ask("Now add retries to the loader. Keep the retry count at 3 or fewer.");
    rec.tool_steps("Bash", 30, 700);
    rec
}

/// The folds of a record run call after call; the last call's output.
fn fold_through(rec: &mut Record, b: Budget) -> CallOutput {
    let calls = rec
        .messages()
        .iter()
        .filter(|m| m.kind == Kind::Generation)
        .count() as u32;
    let (out, folds) = calls_folding(rec, calls + 1, |rec, k| rec.legal_call(k, b));
    assert!(folds >= 1, "the floor folded");
    out
}

/// Calls 1 to `calls` of `rec`, each made by `call`: the last one's output
/// and how many times the floor folded on the way.
fn calls_folding(
    rec: &mut Record,
    calls: u32,
    mut call: impl FnMut(&mut Record, u32) -> CallOutput,
) -> (CallOutput, usize) {
    let mut folds = 0;
    let mut last = None;
    for k in 1..=calls {
        let out = call(rec, k);
        folds += out
            .report
            .tiers_fired
            .iter()
            .filter(|t| t.name().ends_with("floor"))
            .count();
        last = Some(out);
    }
    (last.expect("at least one call"), folds)
}

/// Σn = fold(Σn−1, new) across a round trip: the carried `## Task Context`
/// is the first fold's prior. Its requests keep their ordinals and its
/// constraints their words, the new ask is #3, and `## Current state` is
/// the fold's own.
#[test]
fn a_carried_task_context_is_the_prior_of_the_first_fold() {
    let mut rec = carried_record(Box::new(crate::summarize::Extractive));
    let out = fold_through(&mut rec, budget(16_000, 2_000));
    let head = out.parts[0].summary().expect("the history is folded");
    // The carried part itself is folded: the summary covers it.
    assert!(!out.parts.iter().any(|p| p.kind == Kind::CarriedSummary));
    let text = &head.text;
    for line in [
        "- #1: Speed up the nightly export. Do not touch the tenant_registry table.\n",
        "- #2: Batch the reads.\n",
        "- #3: Now add retries to the loader. Keep the retry count at 3 or fewer.\n",
        "- do-not-touch-tenant-registry: Do not touch the tenant_registry table.\n",
        "- services/export/run.py: edited (step 4)\n",
    ] {
        assert!(text.contains(line), "{line:?} not carried forward:\n{text}");
    }
    let requests = &text[..text.find("\n\n").unwrap()];
    assert_eq!(requests.matches("\n- #").count(), 3, "{requests}");
    let constraints = &text[text.find("## Constraints").unwrap()..];
    assert!(
        constraints.contains("Keep the retry count at 3 or fewer."),
        "{text}"
    );
    let state = &text[text.find("## Current state").unwrap()..];
    assert!(
        state.starts_with("## Current state\nGoal: #3 — Now add retries"),
        "{state}"
    );
    assert!(
        !state.contains("Reading the batch loader"),
        "overwritten: {state}"
    );
    // One carried state, not two: the old one is not kept as a finding.
    assert_eq!(text.matches("## Current state").count(), 1, "{text}");
}

/// The static checkpoint keeps the last ask only: a fold over a carried
/// summary drops its constraints, the loss `probe` reports.
#[test]
fn the_static_checkpoint_drops_a_carried_constraint() {
    let mut rec = carried_record(Box::new(StaticCheckpoint));
    let out = fold_through(&mut rec, budget(16_000, 2_000));
    let head = out.parts[0].summary().expect("the history is folded");
    assert!(!head.text.contains("tenant_registry"), "{}", head.text);
}

mod driver;
