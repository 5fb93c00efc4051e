use super::*;
use crate::engine::estimate::{CharsPerToken, Estimator};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::borrow::Cow;

const BUDGET: u64 = 2500;

fn ask(text: &str) -> SpanEntry<'static> {
    SpanEntry::Ask {
        turn: 1,
        text: text.to_string().into(),
    }
}

fn say(step: u32, text: &str) -> SpanEntry<'static> {
    SpanEntry::AssistantText {
        step,
        text: text.to_string().into(),
    }
}

fn tool(step: u32, name: &str, input: Value, output: &str, is_error: bool) -> SpanEntry<'static> {
    SpanEntry::ToolCall(ToolCall {
        step,
        id: format!("call-{step}"),
        name: name.to_string(),
        input: Cow::Owned(input),
        output: output.to_string().into(),
        is_error,
        interrupted: false,
    })
}

fn edit(step: u32, path: &str) -> SpanEntry<'static> {
    tool(step, "Edit", json!({"file_path": path}), "ok", false)
}

fn fold_with(prior: Option<&str>, span: &[SpanEntry], budget: u64) -> String {
    fold_later(prior, span, &[], budget)
}

/// A fold with the calls the view keeps raw after the span.
fn fold_later(prior: Option<&str>, span: &[SpanEntry], later: &[ToolCall], budget: u64) -> String {
    let est = CharsPerToken::default();
    Extractive
        .summarize(&SummaryRequest {
            prior,
            span,
            later,
            budget_tokens: budget,
            estimator: &est,
        })
        .unwrap()
        .text
}

fn fold_once(prior: Option<&str>, span: &[SpanEntry]) -> String {
    fold_with(prior, span, BUDGET)
}

/// The lines under `## name`, up to the next section.
fn section(text: &str, name: &str) -> Vec<String> {
    let heading = format!("## {name}");
    let under = format!("## {name} (");
    text.split('\n')
        .skip_while(|l| *l != heading && !l.starts_with(&under))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn tokens(s: &str) -> u64 {
    CharsPerToken::default().text(s)
}

fn example_span() -> Vec<SpanEntry<'static>> {
    let patch = "*** Begin Patch\n*** Add File: docs/schema.md\n+# Schema\n\
                 *** Update File: src/main.rs\n@@ fn main() {\n-    old();\n+    new();\n*** End Patch";
    vec![
        ask("Add a created_at column to the users table. Do not touch the tenant_registry table."),
        bash(
            1,
            "cargo clippy",
            "warning: unused import\nwarning: 3 warnings emitted",
            false,
        ),
        tool(
            1,
            "Write",
            json!({"file_path": "migrations/002_created_at.sql", "content": "ALTER TABLE users ..."}),
            "File created",
            false,
        ),
        tool(
            2,
            "Edit",
            json!({
                "file_path": "src/db.rs",
                "old_string": "pub fn connect() -> Pool {\n    Pool::eager()\n}",
                "new_string": "pub fn connect() -> Pool {\n    Pool::lazy()\n}\n\npub fn created_at(row: &Row) -> i64 {\n    row.get(\"created_at\")\n}"
            }),
            "ok",
            false,
        ),
        tool(3, "apply_patch", json!({"input": patch}), "Done", false),
        tool(
            4,
            "Bash",
            json!({"command": "cargo test --lib db"}),
            "Exit code 101\n   Compiling app v0.1.0\nerror[E0425]: cannot find value `pool` in this scope",
            true,
        ),
        say(
            4,
            "The issue is that the pool is created after `run_migrations` runs. \
             I'll use a lazy pool instead of an eager one. \
             `run_migrations` takes the pool and applies every file under migrations/. \
             Next I will rerun the tests.",
        ),
    ]
}

#[test]
fn example_summary_fills_every_section() {
    let out = fold_once(None, &example_span());
    let expected = "\
## Requests
- #1: Add a created_at column to the users table. Do not touch the tenant_registry table.

## Deliverables
- migrations/002_created_at.sql: written (step 1)
- src/db.rs: edited (step 2); adds `fn created_at`; changes `fn connect`
- docs/schema.md: created (step 3); adds `# Schema`
- src/main.rs: edited (step 3); changes `fn main`

## Work log
- step 1: #1 asked
- step 1: `cargo clippy` passed: warning: 3 warnings emitted
- step 4: `cargo test --lib db` failed — error[E0425]: cannot find value `pool` in this scope

## Decisions
- use-lazy-pool-instead: I'll use a lazy pool instead of an eager one.

## Constraints
- do-not-touch-tenant-registry: Do not touch the tenant_registry table.

## Ruled out
- cargo-test: Bash `cargo test --lib db` failed (step 4): Exit code 101
  error[E0425]: cannot find value `pool` in this scope

## Findings
- run-migrations: The issue is that the pool is created after `run_migrations` runs.

## Knowledge
- baseline `cargo clippy`: passed (step 1, before any file was written): warning: 3 warnings emitted
- run_migrations: `run_migrations` takes the pool and applies every file under migrations/.

## Current state
Goal: #1 — Add a created_at column to the users table. Do not touch the tenant_registry table.
Deliverable: delivered: src/main.rs, docs/schema.md, src/db.rs, +1 more; still owed: no file named in #1
Status: open error (step 4): Bash `cargo test --lib db` — error[E0425]: cannot find value `pool` in this scope
Last report: The issue is that the pool is created after `run_migrations` runs. `run_migrations` takes the pool and applies every file under migrations/.
Next: Next I will rerun the tests.
";
    assert_eq!(out, expected);
}

#[test]
fn status_reports_a_trailing_error_or_interruption() {
    let failing = vec![
        ask("run the tests"),
        tool(
            1,
            "Bash",
            json!({"command": "make test"}),
            "make: *** No rule to make target 'test'.  Stop.",
            true,
        ),
    ];
    let out = fold_once(None, &failing);
    assert!(
        out.contains("Status: open error (step 1): Bash `make test` — make: *** No rule"),
        "{out}"
    );
    let interrupted = vec![SpanEntry::Interrupt {
        text: "[Request interrupted by user]".into(),
    }];
    let out = fold_once(Some(&out), &interrupted);
    assert!(out.contains("Status: interrupted by the user"), "{out}");
}

#[test]
fn ordinals_are_stable_across_three_folds() {
    let first = fold_once(None, &[ask("build the parser"), ask("add tests")]);
    let second = fold_once(
        Some(&first),
        &[
            ask("document it"),
            ask("build the parser"),
            say(1, "On it."),
        ],
    );
    let third = fold_once(Some(&second), &[ask("ship a release")]);
    assert_eq!(
        section(&third, "Requests"),
        [
            "- #1: build the parser",
            "- #2: add tests",
            "- #3: document it",
            "- #4: ship a release"
        ]
    );
    // Earlier request lines come back verbatim, in place.
    for earlier in [&first, &second] {
        let lines = section(earlier, "Requests");
        assert_eq!(section(&third, "Requests")[..lines.len()], lines[..]);
    }
    // A repeated ask is the goal again, under its first ordinal.
    assert!(second.contains("Goal: #1 — build the parser"), "{second}");
    assert!(third.contains("Goal: #4 — ship a release"), "{third}");
}

/// One large span: an ask, many tool calls and long assistant texts.
fn large_span(fold: u32) -> Vec<SpanEntry<'static>> {
    let mut span = vec![ask(&format!(
        "Round {fold}: continue the migration of schema part {fold} and keep the changelog current."
    ))];
    for i in 0..30u32 {
        let step = fold * 100 + i;
        let path = format!("src/module_{}.rs", i % 8);
        span.push(match i % 3 {
            0 => edit(step, &path),
            1 => tool(
                step,
                "Read",
                json!({"file_path": path}),
                &"fn body() {}\n".repeat(200),
                false,
            ),
            _ => tool(
                step,
                "Bash",
                json!({"command": format!("cargo test case_{fold}_{i}")}),
                &format!(
                    "error: test case_{fold}_{i} failed\n{}",
                    "noise\n".repeat(50)
                ),
                true,
            ),
        });
        if i % 3 == 0 {
            span.push(say(
                step,
                &format!(
                    "The issue is that module {i} in round {fold} reads stale rows because the cache is warm. \
                     I'll use a fresh transaction for step {i} of round {fold} since the pool is shared. {}",
                    "This paragraph is long process narration that should not survive. ".repeat(10)
                ),
            ));
        }
    }
    span
}

#[test]
fn tenant_registry_rule_survives_twenty_large_folds_within_budget() {
    let rule = "Do not touch the tenant_registry table.";
    let mut prior: Option<String> = None;
    let mut first_rule_line = None;
    for fold in 1..=20 {
        let mut span = large_span(fold);
        if fold == 1 {
            span.insert(0, ask(&format!("Migrate the users schema to v2. {rule}")));
        }
        let out = fold_once(prior.as_deref(), &span);
        let constraints = section(&out, "Constraints");
        let line = constraints
            .iter()
            .find(|l| l.contains(rule))
            .unwrap_or_else(|| panic!("fold {fold} lost the rule:\n{out}"))
            .clone();
        let first = first_rule_line.get_or_insert(line.clone());
        assert_eq!(&line, first, "fold {fold} rewrote the rule");
        let p0 = tokens(&section(&out, "Requests").join("\n")) + tokens(&constraints.join("\n"));
        assert!(
            tokens(&out) <= BUDGET + p0,
            "fold {fold}: {} tokens > {BUDGET} + {p0}",
            tokens(&out)
        );
        prior = Some(out);
    }
    let last = prior.unwrap();
    assert!(
        tokens(&last) > BUDGET / 2,
        "the spans should press the budget"
    );
    assert!(
        !section(&last, "Archived").is_empty(),
        "pressure should archive"
    );
    assert_eq!(
        section(&last, "Requests").len(),
        21,
        "every ask stays logged"
    );
}

fn demotion_span() -> Vec<SpanEntry<'static>> {
    vec![
        ask("Fix the importer. Never log the api key."),
        edit(1, "src/importer.rs"),
        edit(2, "src/importer.rs"),
        say(
            2,
            "The issue is that `read_lines` drops the last line of every file whose final line has no newline. \
             It turns out `LineBuffer` is flushed too early, before the trailing bytes reach the line splitter. \
             I'll use a BufReader instead of manual reads, so line handling stays in the standard library. \
             We'll keep the old parser behind a flag until the new one has run on the full fixture set.",
        ),
    ]
}

#[test]
fn demotion_archives_findings_before_decisions_and_never_p0() {
    let full = fold_with(None, &demotion_span(), 100_000);
    // Just short of the full size: only the oldest finding must go.
    let tight = fold_with(None, &demotion_span(), tokens(&full) - 5);
    let findings = section(&tight, "Findings");
    assert_eq!(findings.len(), 1, "{tight}");
    assert!(findings[0].contains("turns out"), "{tight}");
    assert_eq!(section(&tight, "Decisions"), section(&full, "Decisions"));
    assert!(section(&tight, "Archived")[0].starts_with("- read-lines: The issue is"));

    // Far too small: everything demotable goes, P0 and paths stay.
    let starved = fold_with(None, &demotion_span(), 10);
    assert_eq!(section(&starved, "Requests"), section(&full, "Requests"));
    assert_eq!(
        section(&starved, "Constraints"),
        section(&full, "Constraints")
    );
    assert!(section(&starved, "Findings").is_empty());
    assert!(section(&starved, "Decisions").is_empty());
    assert_eq!(
        section(&starved, "Deliverables"),
        ["- src/importer.rs: edited"]
    );
    assert_eq!(
        section(&starved, "Archived"),
        ["- older-archived: 4 entries folded away; the raw record keeps them"]
    );
}

#[test]
fn demotion_order_between_decisions_and_findings_across_budgets() {
    let full = fold_with(None, &demotion_span(), 100_000);
    let full_tokens = tokens(&full);
    // Scanning every budget downwards: no decision is archived while a finding is live.
    for budget in (1..full_tokens).rev() {
        let out = fold_with(None, &demotion_span(), budget);
        if section(&out, "Decisions").len() < 2 {
            assert!(
                section(&out, "Findings").is_empty(),
                "budget {budget}:\n{out}"
            );
        }
        assert!(out.contains("- src/importer.rs"), "budget {budget}:\n{out}");
        assert!(
            out.contains("Never log the api key."),
            "budget {budget}:\n{out}"
        );
    }
}

#[test]
fn a_path_is_one_deliverable_however_often_it_is_written() {
    let out = fold_once(None, &[edit(1, "src/a.rs"), edit(2, "src/a.rs")]);
    assert_eq!(
        section(&out, "Deliverables"),
        ["- src/a.rs: edited (step 1); last edited (step 2)"]
    );
    let out = fold_once(Some(&out), &[edit(7, "src/a.rs"), edit(8, "src/b.rs")]);
    assert_eq!(
        section(&out, "Deliverables"),
        [
            "- src/a.rs: edited (step 1); last edited (step 7)",
            "- src/b.rs: edited (step 8)"
        ]
    );
}

#[test]
fn a_key_is_superseded_only_by_the_same_subject() {
    let fail = |step, cmd: &str, err: &str| tool(step, "Bash", json!({"command": cmd}), err, true);
    let out = fold_once(
        None,
        &[
            fail(1, "cargo test --lib foo", "error: foo broke"),
            fail(2, "cargo test --lib bar", "error: bar broke"),
            fail(
                3,
                "cd /r && cargo test --lib foo 2>&1",
                "error: foo broke again",
            ),
        ],
    );
    // One action, one line: its latest failure, under the key of its subject.
    assert_eq!(
        section(&out, "Ruled out"),
        [
            "- cargo-test: Bash `cd /r && cargo test --lib foo 2>&1` failed (step 3): error: foo broke again"
        ]
    );
    // Two files of one name are two subjects: the second takes a suffix.
    let read = |step, path: &str| {
        tool(
            step,
            "Read",
            json!({"file_path": path}),
            "Error: EACCES: permission denied",
            true,
        )
    };
    let out = fold_once(
        Some(&out),
        &[read(4, "/a/config.rs"), read(5, "/b/config.rs")],
    );
    let keys: Vec<String> = section(&out, "Ruled out")
        .iter()
        .map(|l| l.split(':').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        keys,
        ["- cargo-test", "- read-config-rs", "- read-config-rs-2"]
    );
    let out = fold_once(Some(&out), &[read(6, "/b/config.rs")]);
    assert!(
        section(&out, "Ruled out")[2]
            .starts_with("- read-config-rs-2: Read `/b/config.rs` failed (step 6)"),
        "{out}"
    );
    // Free text never overwrites: two different decisions with one slug both stay.
    let out = fold_once(
        Some(&out),
        &[say(4, "I'll use serde for config. We'll use serde config.")],
    );
    let decisions = section(&out, "Decisions");
    assert_eq!(decisions.len(), 2, "{out}");
    assert!(decisions[0].starts_with("- use-serde-config: "));
    assert!(decisions[1].starts_with("- use-serde-config-2: "));
}

#[test]
fn codex_argv_patches_editor_creates_and_interrupted_calls_are_read() {
    let patch = "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch";
    let interrupted = SpanEntry::ToolCall(ToolCall {
        step: 3,
        id: "c3".into(),
        name: "shell".into(),
        input: Cow::Owned(json!({"command": ["bash", "-lc", "cargo bench"]})),
        output: Cow::Borrowed(""),
        is_error: false,
        interrupted: true,
    });
    let out = fold_once(
        None,
        &[
            tool(
                1,
                "shell",
                json!({"command": ["apply_patch", patch]}),
                "Done!",
                false,
            ),
            tool(
                2,
                "str_replace_based_edit_tool",
                json!({"command": "create", "path": "notes.md", "file_text": "x"}),
                "ok",
                false,
            ),
            interrupted,
        ],
    );
    assert_eq!(
        section(&out, "Deliverables"),
        [
            "- old.txt: deleted (step 1)",
            "- notes.md: created (step 2)"
        ]
    );
    assert_eq!(
        section(&out, "Ruled out"),
        ["- cargo-bench: shell `cargo bench` interrupted (step 3)"]
    );
    assert!(out.contains("Status: interrupted by the user"), "{out}");
}

#[test]
fn same_request_gives_identical_text() {
    let a = fold_once(None, &example_span());
    let b = fold_once(None, &example_span());
    assert_eq!(a, b);
    let a2 = fold_once(Some(&a), &large_span(3));
    let b2 = fold_once(Some(&b), &large_span(3));
    assert_eq!(a2, b2);
}

#[test]
fn an_empty_span_returns_the_prior_unchanged() {
    let prior = fold_once(None, &example_span());
    assert_eq!(fold_once(Some(&prior), &[]), prior);
    let pressed = fold_once(Some(&prior), &large_span(1));
    assert_eq!(fold_once(Some(&pressed), &[]), pressed);
}

#[test]
fn a_long_ask_keeps_a_verbatim_head_its_later_rules_and_its_tail() {
    let filler =
        "We need the report to cover every region and every quarter in detail. ".repeat(100);
    let long = format!(
        "{filler}Never email the customer list to anyone. {filler}Then send me the summary table."
    );
    let out = fold_once(None, &[ask(&long)]);
    let d = Gist::parse(&out);
    let logged = &d.requests[0].text;
    let head = logged.split(ELISION).next().unwrap();
    assert!(
        long.starts_with(head) && head.chars().count() > 500,
        "{logged}"
    );
    assert!(
        logged.contains(" […] Never email the customer list to anyone. […] "),
        "{logged}"
    );
    let tail = logged.rsplit(ELISION).next().unwrap().trim_start();
    assert!(
        long.ends_with(tail) && tail.ends_with("Then send me the summary table."),
        "{logged}"
    );
    assert!(
        logged.chars().count() < long.chars().count() / 3,
        "{logged}"
    );
    assert!(
        section(&out, "Constraints")
            .iter()
            .any(|l| l.ends_with(": Never email the customer list to anyone.")),
        "{out}"
    );
}

#[test]
fn an_ask_within_its_share_of_the_budget_is_kept_whole() {
    // 1400 characters: well within a quarter of the 2500-token budget.
    let long = format!(
        "{}Then send me the summary table.",
        "We need the report to cover every region and every quarter in detail. ".repeat(20)
    );
    let out = fold_once(None, &[ask(&long)]);
    assert_eq!(Gist::parse(&out).requests[0].text, long);
    // The same ask under a small budget is cut, keeping head and tail.
    let out = fold_with(None, &[ask(&long)], 400);
    let logged = &Gist::parse(&out).requests[0].text;
    assert!(logged.contains(ELISION), "{logged}");
    assert!(
        logged.ends_with("Then send me the summary table."),
        "{logged}"
    );
}

#[test]
fn an_ask_after_a_long_paste_keeps_the_request() {
    let log = "2025-09-24T19:22:20Z INFO worker 7 processed batch 118 in 35ms\n".repeat(330);
    assert!(log.len() > 20_000);
    let request = "The build above fails on CI only. Do not change the lockfile; find why the tests time out.";
    let out = fold_once(None, &[ask(&format!("{log}\n{request}"))]);
    assert!(flatten(&out).contains(request), "{out}");
}

#[test]
fn controls_in_a_prior_are_stripped() {
    let prior = "## Requests\n- #1: fix \u{1b}[31mred\u{1b}[0m tests\n";
    let out = fold_once(Some(prior), &[]);
    assert!(out.contains("- #1: fix red tests"), "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
}

#[test]
fn a_time_bound_finding_is_dated_only_from_its_text() {
    let out = fold_once(
        None,
        &[say(
            1,
            "Checked the registry on 2026-03-01. The latest `serde` turns out to be 4.2.",
        )],
    );
    assert!(
        out.contains("- serde: The latest `serde` turns out to be 4.2. (as of 2026-03-01)"),
        "{out}"
    );
    let undated = fold_once(None, &[say(1, "The latest `serde` turns out to be 4.2.")]);
    assert!(!undated.contains("as of"), "{undated}");
}

#[test]
fn multi_line_asks_round_trip_without_forging_headings() {
    let tricky = "first line\n## Current state\n  indented\n\n- #9: fake\r\nend";
    let out = fold_once(None, &[ask(tricky)]);
    let d = Gist::parse(&out);
    assert_eq!(d.requests, [Fact::new("#1", tricky)]);
    assert_eq!(d.render(), out);
    assert_eq!(out.lines().filter(|l| *l == "## Current state").count(), 1);
}

#[test]
fn a_foreign_prior_is_mined_not_dropped() {
    let static_prior = "## Current state\nLast ask: fix the build\nActions so far: 3 tool calls in the folded history; read the record for details.\n";
    let out = fold_once(Some(static_prior), &[ask("now add docs")]);
    assert!(
        section(&out, "Findings")
            .iter()
            .any(|l| l.starts_with("- earlier-summary: Last ask: fix the build")),
        "{out}"
    );
    assert_eq!(section(&out, "Requests"), ["- #1: now add docs"]);
}

#[test]
fn an_agent_summary_keeps_its_negative_rules() {
    let summary = SpanEntry::AgentSummary {
        text:
            "The user is migrating a schema. The user said: never run DDL against tenant_registry. \
               It turns out `tenant_registry` is shared by three services. Let me continue. Tests pass."
                .into(),
    };
    let out = fold_once(None, &[summary]);
    assert!(
        section(&out, "Constraints")
            .iter()
            .any(|l| l.ends_with(": The user said: never run DDL against tenant_registry.")),
        "{out}"
    );
    // Its facts are mined as prose is; its head is no finding of its own.
    assert_eq!(
        section(&out, "Findings"),
        ["- tenant-registry: It turns out `tenant_registry` is shared by three services."]
    );
}

// ---- precision: what the summary says must be true -------------------

fn bash(step: u32, cmd: &str, output: &str, is_error: bool) -> SpanEntry<'static> {
    tool(step, "Bash", json!({"command": cmd}), output, is_error)
}

/// A call after the span (its output is never shown).
fn later(step: u32, name: &str, input: Value, is_error: bool) -> ToolCall<'static> {
    ToolCall {
        step,
        id: format!("later-{step}"),
        name: name.to_string(),
        input: Cow::Owned(input),
        output: Cow::Borrowed(""),
        is_error,
        interrupted: false,
    }
}

#[test]
fn a_failure_fixed_by_an_edit_is_a_finding_that_names_the_fix() {
    let out = fold_once(
        None,
        &[
            ask("make the tests pass"),
            bash(
                1,
                "mix test 2>&1",
                "Exit code 2\n** (RuntimeError) no :secret_key_base",
                true,
            ),
            edit(2, "config/test.exs"),
            bash(
                3,
                "cd /repo && mix test test/a_test.exs",
                "3 tests, 0 failures",
                false,
            ),
        ],
    );
    // It was not abandoned: not ruled out. The error goes with what made it go away.
    assert!(section(&out, "Ruled out").is_empty(), "{out}");
    assert_eq!(
        section(&out, "Findings"),
        [
            "- mix-test: Bash `cd /repo && mix test test/a_test.exs` was fixed (step 3) after it failed (step 1): ** (RuntimeError) no :secret_key_base — by editing test.exs"
        ],
        "{out}"
    );
    assert!(
        out.contains("Status: no open error at the end of the folded span"),
        "{out}"
    );
}

#[test]
fn a_retry_that_shows_why_it_worked_leaves_one_finding() {
    let out = fold_once(
        None,
        &[
            bash(
                1,
                "git push 2>&1",
                "fatal: The current branch topic has no upstream branch.",
                true,
            ),
            bash(
                2,
                "git push 2>&1",
                "fatal: The current branch topic has no upstream branch.",
                true,
            ),
            bash(
                3,
                "git push --set-upstream origin topic 2>&1",
                "branch 'topic' set up",
                false,
            ),
            tool(
                4,
                "Read",
                json!({"file_path": "/r/big.jsonl"}),
                "File content (85812 tokens) exceeds maximum allowed tokens (25000).",
                true,
            ),
            tool(
                5,
                "Read",
                json!({"file_path": "/r/big.jsonl", "offset": 1, "limit": 5}),
                "line 1",
                false,
            ),
            tool(
                6,
                "Read",
                json!({"file_path": "/r/big.jsonl", "offset": 37, "limit": 1}),
                "line 37",
                false,
            ),
        ],
    );
    assert!(section(&out, "Ruled out").is_empty(), "{out}");
    assert_eq!(
        section(&out, "Findings"),
        [
            "- git-push: Bash `git push --set-upstream origin topic 2>&1` works with `--set-upstream origin topic`; \
             without, it failed (step 2): fatal: The current branch topic has no upstream branch.",
            "- read-big-jsonl: Read `/r/big.jsonl` works with `limit: 5`, `offset: 1`; without, it failed (step 4): \
             File content (85812 tokens) exceeds maximum allowed tokens (25000).",
        ]
    );
}

#[test]
fn a_failure_never_retried_or_worked_around_stays_verbatim() {
    let span = [
        bash(
            1,
            "node assets/build.js 2>&1",
            "Exit code 1\n✘ [ERROR] Could not resolve \"js/app.js\"",
            true,
        ),
        bash(2, "cd assets && node build.js 2>&1", "built in 40ms", false),
        bash(
            3,
            "terraform apply",
            "Error: insufficient privileges for tenant_registry",
            true,
        ),
        say(3, "I'll leave the registry as it is and ship the rest."),
    ];
    let out = fold_once(None, &span);
    assert_eq!(
        section(&out, "Ruled out"),
        [
            "- node-assets-build-js: Bash `node assets/build.js 2>&1` failed (step 1): Exit code 1",
            "  ✘ [ERROR] Could not resolve \"js/app.js\"",
            "- terraform-apply: Bash `terraform apply` failed (step 3): Error: insufficient privileges for tenant_registry",
        ]
    );
}

#[test]
fn a_retry_after_the_span_settles_a_failure_in_it_or_in_the_prior() {
    let span = [bash(
        1,
        "npx vitest run 2>&1",
        "Exit code 1\n FAIL  src/a.test.ts > renders",
        true,
    )];
    let held = fold_once(None, &span);
    assert!(
        section(&held, "Ruled out")[0]
            .starts_with("- npx-vitest-run: Bash `npx vitest run 2>&1` failed (step 1)"),
        "{held}"
    );
    assert!(
        held.contains("Status: open error (step 1): Bash `npx vitest run 2>&1`"),
        "{held}"
    );
    // The view keeps the retry raw after the span: the failure was not abandoned.
    let retried = [later(
        2,
        "Bash",
        json!({"command": "npx vitest run 2>&1"}),
        false,
    )];
    let out = fold_later(None, &span, &retried, BUDGET);
    assert!(section(&out, "Ruled out").is_empty(), "{out}");
    assert!(
        out.contains("Status: no open error at the end of the folded span"),
        "{out}"
    );
    // The same retry folded later drops the prior's line.
    let out = fold_once(
        Some(&held),
        &[bash(2, "npx vitest run", "12 passed", false)],
    );
    assert!(section(&out, "Ruled out").is_empty(), "{out}");
    // A failure after the span changes nothing.
    let failed_again = [later(
        2,
        "Bash",
        json!({"command": "npx vitest run 2>&1"}),
        true,
    )];
    let out = fold_later(None, &span, &failed_again, BUDGET);
    assert_eq!(section(&out, "Ruled out"), section(&held, "Ruled out"));
}

#[test]
fn a_chain_that_succeeded_settles_each_command_it_ran() {
    let out = fold_once(
        None,
        &[
            bash(
                1,
                "git commit -m wip",
                "Pre-commit validation failed: [CREDO]",
                true,
            ),
            bash(
                2,
                "git add lib/a.ex && git commit -m wip 2>&1",
                "[main 1a2b3c] wip",
                false,
            ),
        ],
    );
    assert!(section(&out, "Ruled out").is_empty(), "{out}");
}

#[test]
fn status_names_an_open_error_only_while_it_is_unresolved() {
    let failing = [
        ask("fix the build"),
        bash(
            1,
            "cargo build",
            "error[E0425]: cannot find value `pool`",
            true,
        ),
        edit(2, "src/db.rs"),
    ];
    // Another call succeeding does not resolve it.
    let out = fold_once(None, &failing);
    assert!(
        out.contains("Status: open error (step 1): Bash `cargo build` — error[E0425]: cannot find value `pool`"),
        "{out}"
    );
    // It carries over a fold that does not touch it, and goes once its action succeeds.
    let carried = fold_once(Some(&out), &[edit(3, "src/db.rs")]);
    assert!(carried.contains("Status: open error (step 1)"), "{carried}");
    let fixed = fold_once(
        Some(&carried),
        &[bash(4, "cargo build 2>&1", "Finished", false)],
    );
    assert!(
        fixed.contains("Status: no open error at the end of the folded span"),
        "{fixed}"
    );
    // A new ask moves on.
    let moved = fold_once(Some(&carried), &[ask("now write the docs")]);
    assert!(
        moved.contains("Status: ask #2 not yet worked on"),
        "{moved}"
    );
}

#[test]
fn status_quotes_what_the_agent_last_reported_until_it_reports_again() {
    let span = [
        ask("migrate the invoices"),
        bash(1, "npm run migrate", "done", false),
        say(2, "Invoices now use the v2 schema."),
    ];
    let out = fold_once(None, &span);
    let reported = "Status: no open error at the end of the folded span\n\
                    Last report: Invoices now use the v2 schema.\n";
    assert!(out.contains(reported), "{out}");
    // It carries over a fold that says nothing new, and an intent, a
    // question or a lead-in to a call is no report.
    let carried = fold_once(Some(&out), &[bash(3, "ls", "a", false)]);
    assert!(carried.contains(reported), "{carried}");
    let asked = fold_once(
        Some(&out),
        &[say(
            3,
            "Shall I also migrate the orders? Let me check the schema:",
        )],
    );
    assert!(
        asked.contains("Last report: Invoices now use the v2 schema.\n"),
        "{asked}"
    );
    // A new ask keeps what was last reported until the agent reports again.
    let moved = fold_once(Some(&out), &[ask("now the orders")]);
    assert!(
        moved.contains("Status: ask #2 not yet worked on\nLast report: Invoices now use"),
        "{moved}"
    );
    let again = fold_once(Some(&moved), &[say(4, "Orders use the v2 schema too.")]);
    assert!(
        again.contains("Last report: Orders use the v2 schema too.\n"),
        "{again}"
    );
    // Whole sentences, never cut mid-sentence; the latest texts joined.
    let long = fold_once(
        None,
        &[
            say(1, "All 72 tests pass."),
            say(
                2,
                "All 410 tests pass. No new credo issues. Close this task:",
            ),
        ],
    );
    assert!(
        long.contains("Last report: All 72 tests pass. All 410 tests pass. No new credo issues.\n"),
        "{long}"
    );
}

#[test]
fn deliverable_separates_what_was_written_from_what_is_owed() {
    let span = [
        ask(
            "Create src/report.rs and write the summary to docs/report.md. Read src/main.rs first.",
        ),
        tool(
            1,
            "Read",
            json!({"file_path": "src/main.rs"}),
            "fn main() {}",
            false,
        ),
        tool(
            2,
            "Write",
            json!({"file_path": "/repo/src/report.rs", "content": "x"}),
            "ok",
            false,
        ),
    ];
    let out = fold_once(None, &span);
    assert!(
        out.contains(
            "Deliverable: delivered: /repo/src/report.rs; still owed: docs/report.md (named in #1)"
        ),
        "{out}"
    );
    // Written after the span: no longer owed.
    let written = [later(
        3,
        "Write",
        json!({"file_path": "/repo/docs/report.md", "content": "y"}),
        false,
    )];
    let out = fold_later(None, &span, &written, BUDGET);
    assert!(out.contains("still owed: no file named in #1"), "{out}");
}

#[test]
fn next_is_the_latest_step_not_yet_done() {
    let todo = |step, a: &str, b: &str| {
        tool(
            step,
            "TodoWrite",
            json!({"todos": [
                {"content": "Move the button", "status": a},
                {"content": "Test the layout", "status": b},
            ]}),
            "ok",
            false,
        )
    };
    let out = fold_once(
        None,
        &[todo(1, "completed", "in_progress"), say(2, "Let me check.")],
    );
    assert!(
        out.contains("Next: Test the layout (the plan's step in progress)"),
        "{out}"
    );
    let out = fold_once(None, &[todo(1, "completed", "completed")]);
    assert!(
        out.contains("Next: every step of the plan is done"),
        "{out}"
    );
    // An intent no call followed is the next step; one a call followed is
    // the latest stated, with its step.
    let out = fold_once(
        None,
        &[say(1, "All green. Next, I'll wire the `--json` flag.")],
    );
    assert!(
        out.contains("Next: Next, I'll wire the `--json` flag."),
        "{out}"
    );
    let out = fold_once(None, &[say(1, "Let me check."), bash(2, "ls", "a", false)]);
    assert!(
        out.contains("Next: Let me check. (stated at step 1)"),
        "{out}"
    );
    let followed = [later(2, "Bash", json!({"command": "ls"}), false)];
    let out = fold_later(None, &[say(1, "Let me check.")], &followed, BUDGET);
    assert!(
        out.contains("Next: Let me check. (stated at step 1)"),
        "{out}"
    );
    // A list of what is left names its first item; nothing said is not stated.
    let out = fold_once(
        None,
        &[say(
            1,
            "Done with the parser.\n\nStill need to:\n- Wire the CLI flag\n- Update docs",
        )],
    );
    assert!(
        out.contains("Next: Wire the CLI flag (the agent's list of what is left)"),
        "{out}"
    );
    let out = fold_once(None, &[bash(1, "ls", "a", false)]);
    assert!(out.contains("Next: (not stated)"), "{out}");
    // Carried: a fold that says nothing new keeps what was said, with its step.
    let carried = fold_once(
        Some(&fold_once(None, &[say(1, "Next, I'll wire the flag.")])),
        &[bash(2, "ls", "a", false)],
    );
    assert!(
        carried.contains("Next: Next, I'll wire the flag."),
        "{carried}"
    );
}

#[test]
fn a_call_that_never_ran_or_found_nothing_is_no_failure() {
    let out = fold_once(
        None,
        &[
            bash(
                1,
                "npm test",
                "<tool_use_error>Sibling tool call errored</tool_use_error>",
                true,
            ),
            bash(2, "rg tenant_registry src", "Exit code 1", true),
            bash(3, "cd /r && grep -rn TODO lib | head", "", true),
        ],
    );
    assert!(section(&out, "Ruled out").is_empty(), "{out}");
    assert!(
        out.contains("Status: no open error at the end of the folded span"),
        "{out}"
    );
    assert!(section(&out, "Work log").is_empty(), "{out}");
}

#[test]
fn a_commit_marks_the_files_it_took_and_the_log_keeps_its_message() {
    let out = fold_once(
        None,
        &[
            ask("fix the parser"),
            tool(
                1,
                "Write",
                json!({"file_path": "/r/src/parse.rs", "content": "pub fn parse() {}\n"}),
                "ok",
                false,
            ),
            bash(
                2,
                "cargo test",
                "test result: ok. 4 passed; 0 failed",
                false,
            ),
            bash(
                3,
                "git commit -am 'fix: parse empty input'",
                "[main 1a2b3c4] fix: parse empty input\n 1 file changed",
                false,
            ),
            edit(4, "/r/src/lib.rs"),
            bash(5, "bd close parser-1", "✓ Closed", false),
        ],
    );
    assert_eq!(
        section(&out, "Deliverables"),
        [
            "- /r/src/parse.rs: written (step 1); adds `fn parse`; committed 1a2b3c4",
            "- /r/src/lib.rs: edited (step 4)",
        ],
        "{out}"
    );
    assert_eq!(
        section(&out, "Work log"),
        [
            "- step 1: #1 asked",
            "- step 2: `cargo test` passed: test result: ok. 4 passed; 0 failed",
            "- step 3: committed 1a2b3c4 \"fix: parse empty input\"",
            "- step 5: closed parser-1",
        ],
        "{out}"
    );
    // It parses back: a later fold keeps the lines verbatim.
    let again = fold_once(Some(&out), &[bash(6, "ls", "a", false)]);
    assert_eq!(
        section(&again, "Deliverables"),
        section(&out, "Deliverables")
    );
    assert_eq!(section(&again, "Work log"), section(&out, "Work log"));
}

#[test]
fn deliverables_under_one_directory_are_shown_relative_to_it() {
    let write = |step, path: &str| {
        tool(
            step,
            "Write",
            json!({"file_path": path, "content": "x"}),
            "ok",
            false,
        )
    };
    let out = fold_once(
        None,
        &[
            write(1, "/home/user/projects/repo/lib/a.ex"),
            write(2, "/home/user/projects/repo/test/a_test.exs"),
            write(3, "/home/user/.claude/plans/p.md"),
        ],
    );
    assert_eq!(
        section(&out, "Deliverables"),
        [
            "- lib/a.ex: written (step 1)",
            "- test/a_test.exs: written (step 2)",
            "- /home/user/.claude/plans/p.md: written (step 3)",
        ],
        "{out}"
    );
    assert!(
        out.contains("## Deliverables (paths under /home/user/projects/repo/)"),
        "{out}"
    );
    // Parsed back, the paths are whole again: a later edit updates its line.
    let again = fold_once(Some(&out), &[edit(4, "/home/user/projects/repo/lib/a.ex")]);
    assert!(
        again.contains("- lib/a.ex: written (step 1); last edited (step 4)"),
        "{again}"
    );
}

#[test]
fn the_answer_to_a_users_question_is_kept_as_a_decision() {
    let out = fold_once(
        None,
        &[
            ask("Why do we need stats for the team?"),
            say(
                1,
                "TeamSheet renders a summary that reads `stats.totalMembers`. Returning them from the API avoids recomputing counts on the client.",
            ),
        ],
    );
    assert_eq!(
        section(&out, "Decisions"),
        [
            "- answer-1: #1 answered: TeamSheet renders a summary that reads `stats.totalMembers`. Returning them from the API avoids recomputing counts on the client."
        ],
        "{out}"
    );
}

#[test]
fn a_harness_notice_is_no_request() {
    // The span shows what `engine::clean::request_text` left of a user line:
    // a notice leaves nothing, so it reaches the summarizer as context.
    assert_eq!(
        crate::engine::clean::request_text(
            "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"
        ),
        None
    );
}

#[test]
fn findings_are_facts_that_name_their_subject() {
    let out = fold_once(
        None,
        &[say(
            1,
            "Now let me also file a bead for the discovered bug in `load_session_messages`. \
             Now file the refinement bead because the bug is real. \
             The tests fail because the map drops a field. \
             The subagent tests fail because `load_session_messages` drops `agent_id`. \
             It turns out src/live/session.ex renders badges twice.",
        )],
    );
    assert_eq!(
        section(&out, "Findings"),
        [
            "- load-session-messages: The subagent tests fail because `load_session_messages` drops `agent_id`.",
            "- session: It turns out src/live/session.ex renders badges twice.",
        ]
    );
    // A later fact on the same subject supersedes it, in place.
    let out = fold_once(
        Some(&out),
        &[say(
            2,
            "Confirmed: `load_session_messages` now keeps `agent_id`.",
        )],
    );
    assert_eq!(
        section(&out, "Findings"),
        [
            "- load-session-messages: Confirmed: `load_session_messages` now keeps `agent_id`.",
            "- session: It turns out src/live/session.ex renders badges twice.",
        ]
    );
}

// ---- property tests ---------------------------------------------------

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 .,!?'’_/-]{0,80}",
        "[\\PC\n]{0,120}",
        Just("## Requests\n- #1: forged".to_string()),
        Just("Do not touch the tenant_registry table.".to_string()),
        "(I'll use|The issue is|Never|It turns out|No) [a-zé漢😀 ]{0,40}\\.",
    ]
}

fn call_strategy() -> impl Strategy<Value = SpanEntry<'static>> {
    let name = prop::sample::select(vec![
        "Write",
        "Edit",
        "apply_patch",
        "Bash",
        "Read",
        "shell",
    ]);
    let path = "[a-zé漢]{1,6}(/[a-z_: ]{1,6}){0,2}\\.rs";
    (name, path, text_strategy(), any::<bool>(), any::<bool>(), 0u32..50).prop_map(
        |(name, path, output, is_error, interrupted, step)| {
            let input = match name {
                "apply_patch" => json!({"input": format!("*** Begin Patch\n*** Update File: {path}\n*** End Patch")}),
                "Bash" => json!({"command": output.clone()}),
                "shell" => json!({"command": ["bash", "-lc", path]}),
                _ => json!({"file_path": path}),
            };
            SpanEntry::ToolCall(ToolCall {
                step,
                id: format!("c{step}"),
                name: name.to_string(),
                input: Cow::Owned(input),
                output: output.into(),
                is_error,
                interrupted,
            })
        },
    )
}

fn entry_strategy() -> impl Strategy<Value = SpanEntry<'static>> {
    prop_oneof![
        3 => text_strategy().prop_map(|text| SpanEntry::Ask { turn: 1, text: text.into() }),
        3 => text_strategy().prop_map(|text| SpanEntry::AssistantText { step: 1, text: text.into() }),
        3 => call_strategy(),
        1 => text_strategy().prop_map(|text| SpanEntry::Reasoning { step: 1, text: text.into() }),
        1 => text_strategy().prop_map(|text| SpanEntry::Context { text: text.into() }),
        1 => text_strategy().prop_map(|text| SpanEntry::Interrupt { text: text.into() }),
        1 => text_strategy().prop_map(|text| SpanEntry::AgentSummary { text: text.into() }),
    ]
}

fn fold_all(spans: &[Vec<SpanEntry<'static>>], budget: u64) -> Vec<String> {
    let mut outs: Vec<String> = Vec::new();
    for span in spans {
        let out = fold_with(outs.last().map(String::as_str), span, budget);
        outs.push(out);
    }
    outs
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn folds_are_deterministic_and_keep_every_ask(
        spans in prop::collection::vec(prop::collection::vec(entry_strategy(), 0..12), 1..4),
        budget in 40u64..3000,
    ) {
        let outs = fold_all(&spans, budget);
        prop_assert_eq!(&outs, &fold_all(&spans, budget));
        let last = outs.last().unwrap();

        // Ordinals 1..=n, in order.
        let d = Gist::parse(last);
        let ordinals: Vec<u32> = d.requests.iter().filter_map(|f| ordinal_of(&f.key)).collect();
        prop_assert_eq!(ordinals, (1..=d.requests.len() as u32).collect::<Vec<_>>());

        // Every ask is logged verbatim, or as a verbatim prefix before an elision.
        for entry in spans.iter().flatten() {
            let SpanEntry::Ask { text, .. } = entry else { continue };
            let ask = text.trim();
            if ask.is_empty() {
                continue;
            }
            let logged = d.requests.iter().any(|r| {
                r.text == ask
                    || (r.text.contains(ELISION)
                        && ask.starts_with(r.text.split(ELISION).next().unwrap()))
            });
            prop_assert!(logged, "ask {:?} missing from\n{}", ask, last);
        }

        // No heading twice, and our own format parses back exactly.
        for out in &outs {
            let mut seen = std::collections::BTreeSet::new();
            for heading in out.split('\n').filter(|l| l.starts_with("## ")) {
                prop_assert!(seen.insert(heading), "{} twice in\n{}", heading, out);
            }
            let reparsed = Gist::parse(out);
            prop_assert_eq!(&reparsed.foreign, "");
            prop_assert_eq!(&reparsed.render(), out);
        }

        // Idempotent on an empty span.
        prop_assert_eq!(&fold_with(Some(last), &[], budget), last);
    }
}

/// Issue 14: demotion never cuts a critical line. Over many folds under a
/// small budget every request, every rule and every path written stays
/// verbatim, whatever else is demoted.
#[test]
fn demotion_never_cuts_a_request_a_rule_or_a_path() {
    let mut prior: Option<String> = None;
    for fold in 1..=6u32 {
        let mut span = vec![ask(&format!(
            "Round {fold}: port module {fold}. Leave the billing module alone. Never push to main from round {fold}."
        ))];
        span.extend(large_span(fold));
        span.push(edit(
            fold * 100 + 99,
            &format!("src/round_{fold}/deep/path.rs"),
        ));
        prior = Some(fold_with(prior.as_deref(), &span, 600));
    }
    let out = prior.unwrap();
    for fold in 1..=6u32 {
        assert!(
            out.contains(&format!("Round {fold}: port module {fold}.")),
            "request {fold} cut:\n{out}"
        );
        assert!(
            out.contains(&format!("Never push to main from round {fold}.")),
            "rule {fold} cut:\n{out}"
        );
        assert!(
            out.contains(&format!("- src/round_{fold}/deep/path.rs: ")),
            "path {fold} cut:\n{out}"
        );
    }
    assert!(out.contains("Leave the billing module alone."), "{out}");
    assert!(out.contains("## Archived"), "the budget did demote:\n{out}");
}
