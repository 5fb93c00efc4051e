//! `compactor show`: whole tasks, addresses, tool calls with their raw
//! output and compacted form, and the error paths.

use insta::assert_snapshot;
use serde_json::Value;

use crate::import::{CLAUDE_TASK, CODEX_TASK};
use crate::util::{TestEnv, json_lines, testdata};

const READ_ID: &str = "toolu_01xpBq4VGKbSJmnS9uocCbty";
const BASH_ID: &str = "toolu_01B5mCl1PaZllNspiiPf3hXP";
const SED_ID: &str = "call_n3pJif7nYCBXsSqtKboPcjrs";
const MESSAGES_TASK: &str = "anthropic-3d806257e413";

fn claude_env() -> TestEnv {
    let env = TestEnv::new();
    env.import_fixture("claude-code/small-session.jsonl");
    env
}

/// `show --json` of a tool call of the Claude Code fixture.
fn show_tool_json(env: &TestEnv, id: &str) -> Value {
    let tool = format!("tool:{id}");
    env.json_of(&["show", "--task", CLAUDE_TASK, &tool, "--json"], 0)
}

/// The content of the tool_result for `id` in a fixture, as written there.
fn fixture_tool_result(rel: &str, id: &str) -> Value {
    for (_, l) in json_lines(&testdata(rel)) {
        for b in l["message"]["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" && b["tool_use_id"] == id {
                return b["content"].clone();
            }
        }
        let p = &l["payload"];
        if p["type"] == "function_call_output" && p["call_id"] == id {
            return p["output"].clone();
        }
    }
    panic!("no result for {id} in {rel}");
}

#[test]
fn a_whole_task() {
    let env = TestEnv::new();
    env.import_fixture("anthropic/messages.jsonl");
    let run = env.run(&["show", "--task", MESSAGES_TASK]);
    assert_snapshot!(run.snapshot());
}

#[test]
fn a_tool_call_with_its_raw_output() {
    let env = claude_env();
    let run = env.run(&["show", "--task", CLAUDE_TASK, &format!("tool:{BASH_ID}")]);
    assert_snapshot!(run.snapshot());
}

#[test]
fn a_big_tool_output_has_a_compacted_form_and_its_raw_text() {
    let env = claude_env();
    let v = show_tool_json(&env, READ_ID);
    assert_eq!(v["id"], READ_ID);
    assert_eq!(v["name"], "Read");
    assert_eq!(v["interrupted"], false);
    assert_eq!(v["turn"], 1);
    assert_eq!(v["step"], 1);
    assert_eq!(
        v["input"]["file_path"],
        "/home/dev/projects/tally/src/config.rs"
    );
    // The recovery pointer gives back the raw output byte for byte.
    let raw = fixture_tool_result("claude-code/small-session.jsonl", READ_ID);
    assert_eq!(v["result"]["content"], raw);
    assert_eq!(v["result"]["is_error"], false);
    let form = &v["compacted_form"];
    assert_eq!(form["rule"], "head_tail_lines");
    let (raw_tokens, form_tokens) = (
        form["raw_tokens"].as_u64().unwrap(),
        form["form_tokens"].as_u64().unwrap(),
    );
    assert!(
        raw_tokens >= 500,
        "over the precompact threshold: {raw_tokens}"
    );
    assert!(
        form_tokens * 4 < raw_tokens,
        "{form_tokens} vs {raw_tokens}"
    );
    let text = form["form"]["content"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "lines elided; view_tool_call(\"{READ_ID}\") returns them]"
        )),
        "{text}"
    );
    assert!(
        text.starts_with("     1\u{2192}//! Configuration"),
        "{text}"
    );

    // The human form ends with the compacted form's figures.
    let run = env.run(&["show", "--task", CLAUDE_TASK, &format!("tool:{READ_ID}")]);
    run.success();
    assert!(
        run.stdout.ends_with(&format!(
            "compacted form: head_tail_lines · {raw_tokens} → {form_tokens} tokens\n"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn a_small_tool_output_has_no_compacted_form() {
    let env = claude_env();
    let v = show_tool_json(&env, BASH_ID);
    assert_eq!(v["compacted_form"], Value::Null);
    assert_eq!(
        v["result"]["content"],
        fixture_tool_result("claude-code/small-session.jsonl", BASH_ID)
    );
}

#[test]
fn codex_tool_calls_keep_their_arguments_and_output() {
    let env = TestEnv::new();
    env.import_fixture("codex/small-rollout.jsonl");
    let run = env.run(&[
        "show",
        "--task",
        CODEX_TASK,
        &format!("tool:{SED_ID}"),
        "--json",
    ]);
    run.success();
    let v = run.json();
    assert_eq!(v["name"], "exec_command");
    // `arguments` is a JSON string in the rollout; the input is the parsed object.
    let lines = json_lines(&testdata("codex/small-rollout.jsonl"));
    let args = lines
        .iter()
        .find(|(_, l)| l["payload"]["call_id"] == SED_ID && l["payload"]["type"] == "function_call")
        .map(|(_, l)| l["payload"]["arguments"].as_str().unwrap().to_string())
        .unwrap();
    assert_eq!(v["input"], serde_json::from_str::<Value>(&args).unwrap());
    assert_eq!(
        v["result"]["content"],
        fixture_tool_result("codex/small-rollout.jsonl", SED_ID)
    );
    // A shell call running `sed` reads a file: head and tail lines.
    assert_eq!(v["compacted_form"]["rule"], "head_tail_lines");
    assert!(
        v["compacted_form"]["form_tokens"].as_u64().unwrap()
            < v["compacted_form"]["raw_tokens"].as_u64().unwrap()
    );
    // apply_patch is a custom tool call whose input is raw patch text.
    let patch = lines
        .iter()
        .find(|(_, l)| l["payload"]["type"] == "custom_tool_call")
        .map(|(_, l)| l["payload"].clone())
        .unwrap();
    let run = env.run(&[
        "show",
        "--task",
        CODEX_TASK,
        &format!("tool:{}", patch["call_id"].as_str().unwrap()),
        "--json",
    ]);
    run.success();
    let v = run.json();
    assert_eq!(v["name"], "apply_patch");
    assert_eq!(v["input"]["input"], patch["input"]);
    assert_eq!(v["result"]["is_error"], false);
}

#[test]
fn an_interrupted_tool_call_says_so() {
    let env = TestEnv::new();
    let path = env.fixture("invalid/truncated-line.jsonl");
    env.run(&["import", "--skip-invalid", &path]).success();
    let task = "e4b7c1d9-0a2f-4d63-8e5b-9c1f7a3d2e60";
    // Line 3 (the Bash result) is skipped, so the Bash call on line 2 has no result.
    let run = env.run(&["show", "--task", task, "--json"]);
    let rows = run.json();
    let call = rows
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["content"].as_array().unwrap().iter())
        .find(|b| b["type"] == "tool_use")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let run = env.run(&["show", "--task", task, &format!("tool:{call}"), "--json"]);
    run.success();
    assert_eq!(run.json()["interrupted"], true);
    assert_eq!(run.json()["result"], Value::Null);
    let run = env.run(&["show", "--task", task, &format!("tool:{call}")]);
    run.stdout_has("output: none recorded (the call was interrupted)");
}

fn seqs(env: &TestEnv, address: &str) -> Vec<u64> {
    let run = env.run(&["show", "--task", CLAUDE_TASK, address, "--json"]);
    run.success();
    run.json_list()
        .iter()
        .map(|r| r["seq"].as_u64().unwrap())
        .collect()
}

#[test]
fn addresses_select_rows() {
    let env = claude_env();
    let all = env.run(&["show", "--task", CLAUDE_TASK, "--json"]).json();
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 19);
    let by = |key: &str, n: u64| -> Vec<u64> {
        all.iter()
            .filter(|r| r[key] == n)
            .map(|r| r["seq"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(seqs(&env, "3"), [3]);
    assert_eq!(seqs(&env, "2..5"), [2, 3, 4]);
    assert_eq!(seqs(&env, "17.."), [17, 18]);
    assert_eq!(seqs(&env, "..2"), [0, 1]);
    // Turn 2 starts at the second ask and runs to the end.
    let turn2 = seqs(&env, "turn:2");
    assert_eq!(turn2, by("turn", 2));
    assert_eq!(turn2, (12..19).collect::<Vec<_>>());
    // Step 1: the three lines of the first response and the Read result.
    let step1 = seqs(&env, "step:1");
    assert_eq!(step1, by("step", 1));
    assert_eq!(step1, [2, 3, 4, 5]);
    for r in all {
        if (2..5).contains(&r["seq"].as_u64().unwrap()) {
            assert_eq!(r["gen_id"], all[2]["gen_id"], "one response, one gen_id");
            assert_eq!(r["kind"], "generation");
        }
    }
}

#[test]
fn json_rows_locate_their_source() {
    let env = claude_env();
    let run = env.run(&["show", "--task", CLAUDE_TASK, "4", "--json"]);
    run.success();
    let rows = run.json_list();
    let row = &rows[0];
    assert_eq!(row["schema"], "compactor.message/1");
    assert_eq!(row["source"], "[TMP]/cwd/claude-code/small-session.jsonl");
    assert_eq!(row["line"], 7);
    assert_eq!(row["role"], "assistant");
    assert_eq!(row["kind"], "generation");
    assert_eq!(row["content"][0]["type"], "tool_use");
    assert_eq!(row["content"][0]["id"], READ_ID);
    // The line's own uuid and usage are kept.
    let line7 = &json_lines(&testdata("claude-code/small-session.jsonl"))[6].1;
    assert_eq!(row["uuid"], line7["uuid"]);
    assert_eq!(row["timestamp"], line7["timestamp"]);
    assert_eq!(
        row["usage"]["output_tokens"],
        line7["message"]["usage"]["output_tokens"]
    );
}

#[test]
fn an_unknown_task_is_an_error() {
    let env = claude_env();
    let run = env.run(&["show", "--task", "no-such-task"]);
    assert_snapshot!(run.snapshot());
}

#[test]
fn a_bad_address_is_an_error() {
    let env = claude_env();
    let run = env.run(&["show", "--task", CLAUDE_TASK, "banana"]);
    assert_snapshot!(run.snapshot());
    for bad in ["tool:", "turn:x", "step:-1", "1..b", "x..3", "4x"] {
        let run = env.run(&["show", "--task", CLAUDE_TASK, bad]);
        run.failure(2);
        assert!(
            run.stderr
                .contains(&format!("error: unknown address {bad:?}; expected tool:ID")),
            "{bad}: {}",
            run.stderr
        );
    }
}

#[test]
fn an_address_with_nothing_there_is_an_error() {
    let env = claude_env();
    let run = env.run(&["show", "--task", CLAUDE_TASK, "999"]);
    run.failure(2);
    assert_eq!(
        run.stderr,
        format!("error: nothing at 999 in task {CLAUDE_TASK} (19 messages stored: seq 0 to 18)\n")
    );
    let run = env.run(&["show", "--task", CLAUDE_TASK, "tool:toolu_nope"]);
    run.failure(2);
    assert_eq!(
        run.stderr,
        format!("error: no tool call toolu_nope in task {CLAUDE_TASK}\n")
    );
    assert_eq!(run.stdout, "");
}

#[test]
fn a_reversed_or_empty_range_says_so() {
    let env = claude_env();
    let run = env.run(&["show", "--task", CLAUDE_TASK, "12..4"]);
    assert_snapshot!(run.snapshot(), @r"
    ------- stderr -------
    error: the range 12..4 is reversed: A..B shows seq A up to, not including, B
    hint: did you mean 4..12?
    [exit status: 2]
    ");
    let run = env.run(&["show", "--task", CLAUDE_TASK, "5..5"]);
    assert_snapshot!(run.snapshot(), @r"
    ------- stderr -------
    error: the range 5..5 is empty: A..B shows seq A up to, not including, B
    hint: for the one message at 5, give `5`
    [exit status: 2]
    ");
    // Past the end is still "nothing at", with where the rows are.
    let run = env.run(&["show", "--task", CLAUDE_TASK, "40..60"]);
    run.failure(2).stderr_has(format!(
        "nothing at 40..60 in task {CLAUDE_TASK} (19 messages stored: seq 0 to 18)"
    ));
}

#[test]
fn a_tool_id_prefix_names_its_call() {
    let env = claude_env();
    let full = env.run(&["show", "--task", CLAUDE_TASK, &format!("tool:{BASH_ID}")]);
    full.success();
    // `toolu_01B` is this fixture's only id with that prefix.
    let short = env.run(&["show", "--task", CLAUDE_TASK, "tool:toolu_01B"]);
    short.success();
    assert_eq!(short.stdout, full.stdout);
    assert_eq!(
        show_tool_json(&env, "toolu_01x")["id"],
        READ_ID,
        "the JSON names the whole id"
    );
    // A prefix several ids share lists them, in the record's order.
    let run = env.run(&["show", "--task", CLAUDE_TASK, "tool:toolu_01"]);
    assert_snapshot!(run.snapshot(), @r#"
    ------- stderr -------
    error: tool id prefix "toolu_01" is ambiguous: 5 tool calls match
      tool:toolu_01xpBq4VGKbSJmnS9uocCbty
      tool:toolu_013zDbmPtT78wBB1oe7fBLHh
      tool:toolu_01B5mCl1PaZllNspiiPf3hXP
      tool:toolu_01LDfVCXQnD2QctJQJJvYUwa
      tool:toolu_01XJUxV7IGlVjNYjmr4E2qBX
    hint: give more of the id
    [exit status: 2]
    "#);
}

/// An OpenAI chat log whose two tool calls share the id `call_0` (as some
/// local servers number their calls), each with its result; `tag` makes
/// the first ask its own.
pub fn reused_ids(tag: &str) -> String {
    let lines = [
        serde_json::json!({"role": "user", "content": format!("Look at a.txt. {tag}")}),
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}}]}),
        serde_json::json!({"role": "tool", "tool_call_id": "call_0", "content": "alpha\nbeta\n"}),
        serde_json::json!({"role": "assistant", "content": "Read it."}),
        serde_json::json!({"role": "user", "content": "Now find x."}),
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\": \"x\"}"}}]}),
        serde_json::json!({"role": "tool", "tool_call_id": "call_0", "content": "a.txt:3: x marks it"}),
        serde_json::json!({"role": "assistant", "content": "Found it."}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// One task records two calls under one id: `show tool:ID` says the id is
/// ambiguous and lists both (`tool:ID@N`, tool, model call, turn, line);
/// `tool:ID@N` shows the N-th, with its own result; an N past the calls
/// is refused saying how many there are.
#[test]
fn an_id_a_task_records_twice_is_ambiguous_and_each_call_can_be_named() {
    let env = TestEnv::new();
    let f = env.write("reused.jsonl", reused_ids("one"));
    env.run(&["import", "--task", "reused", &f]).success();
    let run = env.run(&["show", "--task", "reused", "tool:call_0"]);
    run.failure(2)
        .stderr_has("tool call id call_0 is ambiguous: task reused records 2 calls with it")
        .stderr_has("  tool:call_0@1  read_file · model call 1 · turn 1 · line 2")
        .stderr_has("  tool:call_0@2  grep · model call 3 · turn 2 · line 6")
        .stderr_has("hint: name one as tool:ID@N");
    let v = env.json_of(&["show", "--task", "reused", "tool:call_0@2", "--json"], 0);
    assert_eq!(v["name"], "grep");
    assert_eq!(v["input"]["pattern"], "x");
    assert_eq!(v["result"]["content"], "a.txt:3: x marks it");
    let v = env.json_of(&["show", "--task", "reused", "tool:call_0@1", "--json"], 0);
    assert_eq!(v["result"]["content"], "alpha\nbeta\n", "its own result");
    env.run(&["show", "--task", "reused", "tool:call_0@2"])
        .success()
        .stdout_has("── tool call grep call_0@2 · turn 2 · step 3 · line 6");
    env.run(&["show", "--task", "reused", "tool:call_0@3"])
        .failure(2)
        .stderr_has("tool:call_0@3: task reused records 2 calls with the id call_0");
}

/// Without `--task`, `show tool:ID` finds the call in whichever task holds
/// it (not only the latest), as the MCP server's `view_tool_call` does; the
/// same call recorded in two tasks is one; different calls under one id in
/// two tasks are listed with the `--task` that names each.
#[test]
fn without_a_task_a_tool_id_is_found_in_any_task() {
    let env = claude_env();
    env.import_fixture("codex/small-rollout.jsonl").success();
    assert_eq!(env.tasks().len(), 2);
    // The Claude Code task is not the latest: found all the same.
    let anywhere = env.run(&["show", &format!("tool:{BASH_ID}")]);
    anywhere.success();
    let in_task = env.run(&["show", "--task", CLAUDE_TASK, &format!("tool:{BASH_ID}")]);
    assert_eq!(anywhere.stdout, in_task.stdout);
    // As a pasted pointer too, and by a prefix.
    env.run(&["show", &format!("view_tool_call(\"{SED_ID}\")")])
        .success()
        .stdout_has(SED_ID);
    env.run(&["show", &format!("tool:{}", &READ_ID[..14])])
        .success()
        .stdout_has(READ_ID);
    env.run(&["show", "tool:toolu_nothing"])
        .failure(2)
        .stderr_has("no tool call toolu_nothing is recorded in any task");

    // The same conversation in two tasks: one call, shown.
    let env = TestEnv::new();
    let f = env.write("one.jsonl", reused_ids("one"));
    env.run(&["import", "--task", "first", &f]).success();
    let g = env.write(
        "copy.jsonl",
        reused_ids("one") + "{\"role\":\"user\",\"content\":\"Thanks.\"}\n",
    );
    env.run(&["import", "--task", "second", &g]).success();
    let run = env.run(&["show", "tool:call_0@2", "--json"]);
    assert_eq!(
        run.success().json()["input"]["pattern"],
        "x",
        "{}",
        run.stdout
    );
    // Another conversation reusing the id: its calls differ, so each is listed.
    let h = env.write("other.jsonl", reused_ids("two").replace("a.txt", "b.txt"));
    env.run(&["import", "--task", "third", &h]).success();
    let run = env.run(&["show", "tool:call_0"]);
    run.failure(2)
        .stderr_has("tool call id call_0 is ambiguous: 4 calls in 2 tasks are recorded with it")
        .stderr_has("  --task third tool:call_0@1  read_file · model call 1")
        .stderr_has("  --task second tool:call_0@2  grep · model call 3")
        .stderr_has("hint: name one with --task and tool:ID@N");
    env.run(&["show", "tool:call_0@1"])
        .failure(2)
        .stderr_has("is ambiguous");
}
