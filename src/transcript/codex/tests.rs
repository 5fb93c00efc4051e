//! The one-pass reader against the general one, line by line.

use std::path::PathBuf;

use super::*;
use crate::transcript::read_line;
use crate::transcript::typed::both_ways;

/// Whether the one pass takes a line whole.
fn taken(text: &str) -> bool {
    serde_json::from_str::<Line>(text).is_ok()
}

/// Every line through both readers (see `typed::both_ways`); how many the
/// one pass took.
fn compare(lines: &[String]) -> usize {
    both_ways(lines, read_line::<CodexImporter>, taken)
}

fn envelope(ty: &str, payload: &str) -> String {
    format!(r#"{{"timestamp":"2026-03-14T09:00:07.000Z","type":"{ty}","payload":{payload}}}"#)
}

/// A value nested 130 deep (`serde_json` stops at 128).
fn deep() -> String {
    format!("{}{}", "[".repeat(130), "]".repeat(130))
}

/// Response item payloads of every type, good and bad: content items of
/// each kind, outputs of each shape, missing and mistyped fields, repeated
/// keys, escapes, and values the one pass skips but must still read as
/// strictly as a `Value` (`DEEP` stands for [`deep`]).
const ITEMS: &[&str] = &[
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the \"cache\" \u00e9\u2028 \ud83d\ude00\ttab"}]}"#,
    r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}"#,
    r#"{"type":"message","role":"system","content":"plain system text"}"#,
    r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}],"phase":"final_answer","id":"msg_1"}"#,
    r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":"b"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AAAA"},{"type":"input_text","text":"see"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_image","image_url":"https://x/y.png"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_image"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_image","image_url":5}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"refusal","refusal":"no"}]}"#,
    r#"{"type":"message","role":"user","content":["a bare string"]}"#,
    r#"{"type":"message","role":"user","content":[["input_text","as an array"]]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":null}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":7}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":null,"text":"x"}]}"#,
    r#"{"type":"message","role":"user","content":[{"text":"type last","type":"input_text"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":{"input_text":null},"text":"x"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"first","text":"second"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"refusal","type":"input_text","text":"t"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","type":"refusal","text":"t"}]}"#,
    r#"{"type":"message","role":"user","content":[{"ty\u0070e":"input_te\u0078t","te\u0078t":"escaped"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"x","extra":"\udc00"}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"x","extra":1e400}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"x","extra":18446744073709551616}]}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"deep","x":DEEP}]}"#,
    r#"{"type":"message","role":"user","content":null}"#,
    r#"{"type":"message","role":"user"}"#,
    r#"{"type":"message","role":"user","content":5}"#,
    r#"{"type":"message","role":"user","content":{"type":"input_text","text":"x"}}"#,
    r#"{"type":"message","role":"bogus","content":"x"}"#,
    r#"{"type":"message","content":"no role"}"#,
    r#"{"type":"message","role":"bogus","content":5}"#,
    r#"{"type":"message","role":7,"content":"x"}"#,
    r#"{"type":"message","role":"user","content":"a","content":"b"}"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"[Request interrupted by user]"}]}"#,
    r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**"},{"type":"summary_text","text":"then"}],"content":null,"encrypted_content":"gAAAA"}"#,
    r#"{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"raw"}],"encrypted_content":"gAAAA"}"#,
    r#"{"type":"reasoning","summary":[],"encrypted_content":"gAAAA"}"#,
    r#"{"type":"reasoning","summary":[]}"#,
    r#"{"type":"reasoning","summary":"a string","content":"a string"}"#,
    r#"{"type":"reasoning","summary":[5,"x",{"text":3},{"text":"kept"},{"type":"odd","text":"odd kept"}]}"#,
    r#"{"type":"reasoning","summary":[{"type":"summary_text","text":""},{"type":"summary_text","text":"after an empty one"}]}"#,
    r#"{"type":"reasoning","content":[{"type":"odd","text":"odd content"}]}"#,
    r#"{"type":"reasoning","content":[{"type":"reasoning_text","text":5}]}"#,
    r#"{"type":"reasoning","content":7}"#,
    r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":5}"#,
    r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"],\"workdir\":\"/w\"}","call_id":"call_1"}"#,
    r#"{"type":"function_call","name":"shell","arguments":"[1,2]","call_id":"call_2"}"#,
    r#"{"type":"function_call","name":"shell","arguments":"not json","call_id":"call_3"}"#,
    r#"{"type":"function_call","name":"shell","arguments":{"a":1.5,"b":[true,null]},"call_id":"call_4"}"#,
    r#"{"type":"function_call","name":"shell","arguments":5,"call_id":"call_5"}"#,
    r#"{"type":"function_call","name":"shell","arguments":null,"call_id":"call_6"}"#,
    r#"{"type":"function_call","call_id":"call_7"}"#,
    r#"{"type":"function_call","name":7,"arguments":"{}","call_id":"call_8"}"#,
    r#"{"type":"function_call","name":"shell","arguments":"{}"}"#,
    r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":9}"#,
    r#"{"type":"function_call","name":"shell","arguments":"{\"n\":1e400}","call_id":"call_10"}"#,
    r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"}"#,
    r#"{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"bash: syntax error\\n\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":0.0}}"}"#,
    r#"{"type":"function_call_output","call_id":"call_2","output":"{\"output\":\"ok\\n\",\"metadata\":{\"exit_code\":0}}"}"#,
    r#"{"type":"function_call_output","call_id":"call_3","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":\"2\"}}"}"#,
    r#"{"type":"function_call_output","call_id":"call_4","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":2.5}} trailing"}"#,
    r#"{"type":"function_call_output","call_id":"call_5","output":"    1\tline one\n    2\tline two\n"}"#,
    r#"{"type":"function_call_output","call_id":"call_6","output":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:image/jpeg;base64,BB"}]}"#,
    r#"{"type":"function_call_output","call_id":"call_7","output":[{"type":"odd"}]}"#,
    r#"{"type":"function_call_output","call_id":"call_8","output":{"content":"nested","success":false}}"#,
    r#"{"type":"function_call_output","call_id":"call_9","output":{"content":{"content":"{\"output\":\"x\",\"metadata\":{\"exit_code\":1}}"},"success":true}}"#,
    r#"{"type":"function_call_output","call_id":"call_10","output":{"content":null,"success":"no"}}"#,
    r#"{"type":"function_call_output","call_id":"call_11","output":{"success":false,"success":true}}"#,
    r#"{"type":"function_call_output","call_id":"call_12","output":{"content":[{"type":"input_text","text":"listed"}]}}"#,
    r#"{"type":"function_call_output","call_id":"call_13","output":{"content":5}}"#,
    r#"{"type":"function_call_output","call_id":"call_14","output":null}"#,
    r#"{"type":"function_call_output","call_id":"call_15"}"#,
    r#"{"type":"function_call_output","call_id":"call_16","output":5}"#,
    r#"{"type":"function_call_output","call_id":"call_17","output":true}"#,
    r#"{"type":"function_call_output","output":"no call id"}"#,
    r#"{"type":"function_call_output","call_id":"nobody","output":"unanswered"}"#,
    r#"{"type":"function_call_output","call_id":"call_5","output":"answered twice"}"#,
    r#"{"type":"custom_tool_call","status":"completed","call_id":"call_c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"}"#,
    r#"{"type":"custom_tool_call","call_id":"call_c2"}"#,
    r#"{"type":"custom_tool_call","call_id":"call_c3","name":"apply_patch","input":{"a":1}}"#,
    r#"{"type":"custom_tool_call_output","call_id":"call_c1","output":"Success. Updated the following files:\nM a.rs\n"}"#,
    r#"{"type":"local_shell_call","call_id":"call_l1","status":"completed","action":{"type":"exec","command":["ls"]}}"#,
    r#"{"type":"local_shell_call","id":"call_l2","action":"ls"}"#,
    r#"{"type":"local_shell_call","call_id":5,"id":"call_l3"}"#,
    r#"{"type":"local_shell_call","action":{}}"#,
    r#"{"type":"web_search_call","status":"completed","action":{"type":"search","query":"rust serde","queries":["rust serde"]}}"#,
    r#"{"type":"web_search_call","status":"completed"}"#,
    r#"{"type":"web_search_call","action":"search"}"#,
    r#"{"type":"web_search_call","action":{"query":5}}"#,
    r#"{"type":"ghost_snapshot","ghost_commit":{"id":"abc"}}"#,
    r#"{"type":"compaction","encrypted_content":"gAAAA"}"#,
    r#"{"type":"agent_message","message":"x"}"#,
    r#"{"type":"some_new_item","content":5}"#,
    r#"{"role":"user","content":"no type"}"#,
    r#"{"type":5}"#,
];

/// Whole lines of every envelope type, good and bad.
fn envelopes() -> Vec<String> {
    let mut lines = vec![
        envelope(
            "session_meta",
            r#"{"id":"019c8a4c-ed82","timestamp":"2026-02-23T11:40:23.298Z","cwd":"/w","originator":"Codex Desktop","cli_version":"0.104.0","source":{"subagent":{"thread_spawn":{"parent_thread_id":"019c-parent"}}},"model_provider":"openai","base_instructions":{"text":"You are Codex."},"instructions":"ignored","git":{"commit_hash":"1cdf","branch":"main"}}"#,
        ),
        envelope(
            "session_meta",
            r#"{"id":"second","cwd":"/elsewhere","instructions":"a resumed rollout repeats its meta"}"#,
        ),
        envelope(
            "turn_context",
            r#"{"turn_id":"t1","cwd":"/w","approval_policy":"never","sandbox_policy":{"type":"read-only"},"model":"gpt-5-codex","effort":"high","summary":"auto","truncation_policy":{"mode":"tokens","limit":10000}}"#,
        ),
        envelope(
            "turn_context",
            r#"{"model":"later-model","summary":{"odd":1}}"#,
        ),
        envelope("turn_context", r#"{"model":7}"#),
    ];
    // Usage events between items, so that each is attributed to a generation
    // opened before or after it.
    let counts = [
        r#"{"input_tokens":14025,"cached_input_tokens":9761,"output_tokens":29,"reasoning_output_tokens":0,"total_tokens":14054}"#,
        r#"{"input_tokens":5,"cached_input_tokens":9,"output_tokens":null}"#,
        r#"{"input_tokens":1099511627776}"#,
        r#"{"input_tokens":1099511627777}"#,
        r#"{"cached_input_tokens":-1,"input_tokens":"x"}"#,
        r#"{"output_tokens":2.0}"#,
        r#"{"output_tokens":"7"}"#,
        r#"{"input_tokens":1,"input_tokens":2}"#,
        r#"{"input_tokens":3,"extra":"\ud800"}"#,
        "[1,2,3]",
        "null",
        r#""none""#,
    ];
    for (i, last) in counts.iter().enumerate() {
        lines.push(envelope("response_item", ITEMS[i * 7 % ITEMS.len()]));
        lines.push(envelope("turn_context", "{}"));
        lines.push(envelope("response_item", ITEMS[i * 5 % ITEMS.len()]));
        lines.push(envelope(
            "event_msg",
            &format!(
                r#"{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{i}}},"last_token_usage":{last},"model_context_window":272000}},"rate_limits":{{"primary":{{"used_percent":1.5}}}}}}"#
            ),
        ));
    }
    for info in [
        "null",
        r#"{"total_token_usage":{"input_tokens":3},"last_token_usage":{"input_tokens":9}}"#,
        r#"{"total_token_usage":{"input_tokens":3},"last_token_usage":{"input_tokens":9}}"#,
        r#"{"total_token_usage":null,"last_token_usage":{"input_tokens":1}}"#,
        r#"{"total_token_usage":null,"last_token_usage":{"input_tokens":1}}"#,
        r#"{"last_token_usage":{"input_tokens":2}}"#,
        r#"{"last_token_usage":{"input_tokens":2}}"#,
        r#"{"total_token_usage":{"input_tokens":4}}"#,
        r#"{"total_token_usage":{"input_tokens":5},"last_token_usage":{"input_tokens":1},"last_token_usage":null}"#,
        r#"{"total_token_usage":{"input_tokens":6},"total_token_usage":{"input_tokens":5},"last_token_usage":{"input_tokens":1}}"#,
        "[1]",
        "5",
        r#"{"last_token_usage":{"input_tokens":2},"model_context_window":"big"}"#,
        r#"{"model_context_window":-5}"#,
        r#"{"model_context_window":1.5e5}"#,
        r#"{"model_context_window":0}"#,
        r#"{"model_context_window":null}"#,
        r#"{"model_context_window":99999999999999999}"#,
        r#"{"model_context_window":128000,"model_context_window":258400}"#,
    ] {
        lines.push(envelope(
            "event_msg",
            &format!(r#"{{"type":"token_count","info":{info}}}"#),
        ));
    }
    lines.push(envelope("event_msg", r#"{"type":"token_count"}"#));
    lines.push(envelope(
        "event_msg",
        r#"{"type":"token_count","info":{"last_token_usage":{"input_tokens":8}},"rate_limits":"\udc00"}"#,
    ));
    for payload in [
        r#"{"type":"user_message","message":"Fix it","images":[],"kind":"plain"}"#,
        r#"{"type":"agent_message","message":"Done","phase":"final_answer"}"#,
        r#"{"type":"agent_reasoning","text":"**Plan**"}"#,
        r#"{"type":"agent_reasoning_raw_content","text":"raw"}"#,
        r#"{"type":"task_started","turn_id":"t","model_context_window":258400}"#,
        r#"{"type":"exec_command_end","stdout":"x","content":5,"output":true,"info":"odd"}"#,
        r#"{"type":5}"#,
        r#"{}"#,
    ] {
        lines.push(envelope("event_msg", payload));
    }
    for payload in [
        r#"{"message":"Summary of the work so far."}"#,
        r#"{"message":"","replacement_history":[{"type":"message","role":"user","content":[]},{"type":"compaction"}]}"#,
        r#"{"message":"","replacement_history":{"a":1}}"#,
        r#"{"message":5}"#,
        r#"{}"#,
        r###"{"message":"## Task Context\n\n## Requests\n- #1: go","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"## Task Context\n\n## Requests\n- #1: go"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Going."}]},{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_r1"},{"type":"function_call_output","call_id":"call_r1","output":"ok"}]}"###,
        r#"{"message":"","replacement_history":[{"type":"message","role":"user","content":"x"},5]}"#,
        r#"{"message":"","replacement_history":[{"type":"message","role":"bogus","content":"x"}]}"#,
        r#"{"message":"","replacement_history":[{"type":"some_new_item"},{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}]}]}"#,
    ] {
        lines.push(envelope("compacted", payload));
    }
    for ty in [
        "world_state",
        "token_usage_record",
        "realtime_item",
        "some_new_line_type",
    ] {
        lines.push(envelope(ty, r#"{"anything":[1,{"x":null}]}"#));
    }
    for payload in ["null", r#""text""#, "[1]", "5"] {
        lines.push(envelope("response_item", payload));
    }
    lines.extend(
        [
            r#"{"timestamp":"t","payload":{"type":"message"}}"#,
            r#"{"timestamp":"t","type":5,"payload":{"type":"message","role":"user","content":"x"}}"#,
            r#"{"payload":{"type":"message","role":"user","content":"payload first"},"type":"response_item","ordinal":7}"#,
            r#"{"timestamp":5,"type":"response_item","payload":{"type":"message","role":"user","content":"odd timestamp"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":"x","payload":{"type":"message","role":"user","content":"last payload wins"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"},"payload":null}"#,
            r#"{"timestamp":"t","t\u0079pe":"response_item","p\u0061yload":{"type":"message","role":"user","content":"escaped keys"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"},"extra":"\udc00"}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"},"extra":-1e400}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"},"extra":DEEP}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"}} trailing"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"}"#,
            r#"["response_item",{"type":"message"}]"#,
            r#""a string""#,
            "5",
            "null",
            "{}",
            r#"{"record_type":"state"}"#,
            r#"{"id":"not the first line"}"#,
            r#"{"type":"message","role":"user","content":"a bare item after the envelope format"}"#,
        ]
        .map(str::to_string),
    );
    lines.extend(ITEMS.iter().map(|p| envelope("response_item", p)));
    let deep = deep();
    lines.iter().map(|l| l.replace("DEEP", &deep)).collect()
}

/// The legacy format: a bare header on line 1, `record_type` markers and
/// bare items; then headers of other shapes, each opening a file.
fn legacy() -> Vec<Vec<String>> {
    let mut file = vec![
        r#"{"id":"0197-legacy","timestamp":"2025-06-01T10:00:00.000Z","instructions":"Be brief.","git":{"branch":"main"}}"#.to_string(),
        r#"{"record_type":"state"}"#.to_string(),
        r#"{"record_type":null,"other":1}"#.to_string(),
    ];
    let deep = deep();
    file.extend(ITEMS.iter().map(|p| p.replace("DEEP", &deep)));
    file.push(r#"{"id":"no type past line 1"}"#.to_string());
    let headers = [
        r#"{"id":5,"instructions":" "}"#,
        r#"{"id":null,"base_instructions":{"text":null},"instructions":"not used"}"#,
        r#"{"id":"x","base_instructions":"odd","instructions":"used","source":{"subagent":{"parent_thread_id":"p"}}}"#,
        r#"{"id":"x","forked_from_id":"f","session_id":"s"}"#,
        r#"{"session_id":"s"}"#,
    ];
    let mut files = vec![file];
    files.extend(headers.iter().map(|h| {
        vec![
            h.to_string(),
            r#"{"type":"message","role":"user","content":"hi"}"#.to_string(),
        ]
    }));
    files
}

#[test]
fn the_typed_reader_reads_every_codex_line_as_the_general_one_does() {
    let lines = envelopes();
    let typed = compare(&lines);
    // Both paths are exercised: the typed one takes most lines whole.
    assert!(
        typed > lines.len() / 2 && typed < lines.len(),
        "{typed} of {}",
        lines.len()
    );
    for file in legacy() {
        let typed = compare(&file);
        assert!(typed > 0 && typed <= file.len());
    }
    // Each line on its own as well: a fresh importer (line 1 may be a bare
    // header), no state from earlier lines to hide a difference.
    for text in lines.iter().chain(legacy().iter().flatten()) {
        compare(std::slice::from_ref(text));
    }
}

#[test]
fn the_task_keeps_the_latest_window_the_rollout_recorded() {
    let count = |window: &str| {
        envelope(
            "event_msg",
            &format!(
                r#"{{"type":"token_count","info":{{"last_token_usage":{{"input_tokens":1}},"model_context_window":{window}}}}}"#
            ),
        )
    };
    let lines = [
        envelope("session_meta", r#"{"id":"s","cwd":"/w"}"#),
        count("272000"),
        count("258400"),
        // Not a token count: no window recorded by this one.
        count(r#""large""#),
        envelope("event_msg", r#"{"type":"token_count","info":null}"#),
    ];
    for typed in [true, false] {
        let mut importer = CodexImporter::default();
        let mut tasks = crate::transcript::TaskSet::default();
        for (i, text) in lines.iter().enumerate() {
            read_line(&mut importer, i as u64 + 1, text, &mut tasks, typed).unwrap();
        }
        let tasks = tasks.into_tasks();
        assert_eq!(tasks[0].meta.context_window, Some(258_400), "typed {typed}");
    }
}

/// The Codex files under `dir`, the corpus's `codex` folder.
fn corpus_files(dir: PathBuf) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn the_typed_reader_reads_every_corpus_codex_line_as_the_general_one_does() {
    let Some(dir) = crate::test_corpus::corpus(
        "the_typed_reader_reads_every_corpus_codex_line_as_the_general_one_does",
    ) else {
        return;
    };
    let files = corpus_files(dir.join("codex"));
    assert!(
        !files.is_empty(),
        "the corpus holds no Codex file under {}",
        dir.join("codex").display()
    );
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        let typed = compare(&lines);
        // Real rollouts are all on the fast path.
        assert_eq!(typed, lines.len(), "{}", f.display());
    }
}

#[test]
fn every_key_reads_back_by_its_name() {
    for k in Key::ALL {
        assert_eq!(Key::of(k.name()), Some(*k));
    }
    assert_eq!(Key::of("payload"), None);
}

/// The main task's rows after `lines`, read as an import reads them.
fn rows_of(lines: &[String]) -> Vec<crate::model::Message> {
    let mut importer = CodexImporter::default();
    let mut tasks = TaskSet::default();
    for (i, l) in lines.iter().enumerate() {
        read_line(&mut importer, i as u64 + 1, l, &mut tasks, true).expect("the line imports");
    }
    tasks
        .into_tasks()
        .into_iter()
        .next()
        .map_or_else(Vec::new, |t| t.messages)
}

const META: &str = r#"{"id":"01a1","cwd":"/w","cli_version":"0.171.0","git":{"branch":"feat/x"}}"#;
const SUMMARY: &str =
    "## Task Context\n\n## Requests\n- #1: Fix the quota report. Do not add new dependencies.";

fn compacted_with(history: &str) -> String {
    envelope(
        "compacted",
        &format!(
            r#"{{"message":{},"replacement_history":{history}}}"#,
            serde_json::to_string(SUMMARY).unwrap()
        ),
    )
}

/// The carried history is the replacement history, in order, its summary
/// the carried summary that opens the record (and its first turn); what
/// Codex appends after it is a new model call, whose usage is its own.
#[test]
fn a_compacted_item_that_opens_the_rollout_is_its_history() {
    let history = format!(
        r#"[{{"type":"message","role":"user","content":[{{"type":"input_text","text":{}}}]}},
            {{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"Reading the report."}}]}},
            {{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"ls\"}}","call_id":"call_1"}},
            {{"type":"function_call_output","call_id":"call_1","output":"report.py"}},
            {{"type":"compaction","encrypted_content":"gAAAA"}}]"#,
        serde_json::to_string(SUMMARY).unwrap()
    )
    .replace('\n', "");
    let lines = vec![
        envelope("session_meta", META),
        compacted_with(&history),
        envelope("turn_context", r#"{"model":"gpt-5.1-codex"}"#),
        envelope(
            "response_item",
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"Add a test."}]}"#,
        ),
        envelope(
            "event_msg",
            r#"{"type":"token_count","info":{"total_token_usage":{"input_tokens":9},"last_token_usage":{"input_tokens":900,"cached_input_tokens":0,"output_tokens":9}}}"#,
        ),
        envelope(
            "response_item",
            r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Added."}]}"#,
        ),
    ];
    let rows = rows_of(&lines);
    let shape: Vec<(Kind, u32, Option<&str>)> = rows
        .iter()
        .map(|m| (m.kind, m.turn, m.gen_id.as_deref()))
        .collect();
    assert_eq!(
        shape,
        [
            (Kind::CarriedSummary, 1, None),
            (Kind::Generation, 1, Some("gen-1")),
            (Kind::Generation, 1, Some("gen-1")),
            (Kind::ToolResult, 1, None),
            (Kind::Ask, 2, None),
            (Kind::Usage, 2, Some("gen-2")),
            (Kind::Generation, 2, Some("gen-2")),
        ]
    );
    assert_eq!(
        rows[0].content,
        vec![Block::Text {
            text: SUMMARY.into()
        }]
    );
    assert_eq!(rows[0].line, 2);
    assert_eq!(
        rows[0].timestamp.as_deref(),
        Some("2026-03-14T09:00:07.000Z")
    );
}

/// The same item after the conversation it compacted: the raw stays the
/// record, the item one marker that reaches no view.
#[test]
fn a_compacted_item_after_its_raw_history_stays_a_marker() {
    let ask = envelope(
        "response_item",
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the quota report."}]}"#,
    );
    let history = format!(
        r#"[{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Fix the quota report."}}]}},{{"type":"message","role":"user","content":[{{"type":"input_text","text":{}}}]}}]"#,
        serde_json::to_string(SUMMARY).unwrap()
    );
    let rows = rows_of(&[
        envelope("session_meta", META),
        ask,
        compacted_with(&history),
    ]);
    let kinds: Vec<Kind> = rows.iter().map(|m| m.kind).collect();
    assert_eq!(kinds, [Kind::Ask, Kind::CompactSummary]);
    assert_eq!(
        rows[1].content,
        vec![Block::Text {
            text: SUMMARY.into()
        }]
    );
    // Injected context first is conversation too: the raw is in the record.
    let context = envelope(
        "response_item",
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n</environment_context>"}]}"#,
    );
    let rows = rows_of(&[context, compacted_with(&history)]);
    assert_eq!(rows[1].kind, Kind::CompactSummary);
}

/// An older `compacted` item holds only its `message`: one user message.
/// Codex's own summary among replacement items is the carried summary,
/// the user messages it kept before it asks.
#[test]
fn older_and_codex_written_compactions_open_the_record_too() {
    let rows = rows_of(&[envelope(
        "compacted",
        r#"{"message":"We fixed the report."}"#,
    )]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].kind, Kind::CarriedSummary);
    assert_eq!(
        rows[0].content,
        vec![Block::Text {
            text: "We fixed the report.".into()
        }]
    );
    let codex = r#"[{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the quota report."}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"Another language model started to solve this problem and produced a summary of its thinking process. The report sums seats as 16 bits."}]}]"#;
    let rows = rows_of(&[envelope(
        "compacted",
        &format!(r#"{{"message":"","replacement_history":{codex}}}"#),
    )]);
    let kinds: Vec<(Kind, u32)> = rows.iter().map(|m| (m.kind, m.turn)).collect();
    assert_eq!(kinds, [(Kind::Ask, 1), (Kind::CarriedSummary, 2)]);
    // Nothing carried at all: the marker of today, reaching no view.
    let rows = rows_of(&[envelope("compacted", r#"{"message":""}"#)]);
    assert_eq!(rows[0].kind, Kind::CompactSummary);
}

/// A carried item that is not an item is an error naming the line and the item.
#[test]
fn a_bad_replacement_item_names_its_line_and_place() {
    let mut importer = CodexImporter::default();
    let mut tasks = TaskSet::default();
    let line = envelope(
        "compacted",
        r#"{"message":"","replacement_history":[{"type":"message","role":"user","content":"ok"},5]}"#,
    );
    let err = read_line(&mut importer, 3, &line, &mut tasks, true).unwrap_err();
    assert_eq!(err.line, 3);
    assert!(
        err.message
            .contains("replacement_history item 2 is a number"),
        "{}",
        err.message
    );
    let line = envelope(
        "compacted",
        r#"{"message":"","replacement_history":[{"type":"message","role":"bogus","content":"x"}]}"#,
    );
    let err = read_line(
        &mut CodexImporter::default(),
        4,
        &line,
        &mut TaskSet::default(),
        false,
    )
    .unwrap_err();
    assert!(
        err.message
            .starts_with("replacement_history item 1: message role \"bogus\""),
        "{}",
        err.message
    );
}

#[test]
fn the_session_meta_names_the_git_branch() {
    let mut importer = CodexImporter::default();
    let mut tasks = TaskSet::default();
    read_line(
        &mut importer,
        1,
        &envelope("session_meta", META),
        &mut tasks,
        true,
    )
    .unwrap();
    assert_eq!(tasks.main().meta.git_branch.as_deref(), Some("feat/x"));
    assert_eq!(tasks.main().meta.cli_version.as_deref(), Some("0.171.0"));
}
