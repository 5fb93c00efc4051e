use super::*;
use crate::engine::estimate::CharsPerToken;
use serde_json::json;

fn numbered(n: usize) -> String {
    (1..=n)
        .map(|i| format!("{i:>5}\tline number {i} of the file"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn read_keeps_head_and_tail_lines_with_count_and_pointer() {
    let rules = ToolRules::default();
    let out = numbered(300);
    let f = rules
        .compact(
            &CharsPerToken::default(),
            "toolu_1",
            "Read",
            &json!({"file_path":"/a.rs"}),
            &ToolContent::Text(out),
        )
        .expect("a 300-line read is compacted");
    assert_eq!(f.rule, "head_tail_lines");
    let c = f.form["content"].as_str().unwrap();
    assert!(c.starts_with("    1\tline number 1 "));
    assert!(c.contains("[… 270 of 300 lines elided; view_tool_call(\"toolu_1\") returns them]"));
    assert!(c.ends_with("  300\tline number 300 of the file"));
    assert!(f.form.get("input").is_none(), "a small input is kept as is");
    assert!(f.form_tokens < f.raw_tokens / 5);
}

#[test]
fn grep_keeps_top_entries() {
    let rules = ToolRules::default();
    let out: String = (0..200)
        .map(|i| format!("src/file_{i}.rs:{i}: match here with some text\n"))
        .collect();
    let f = rules
        .compact(
            &CharsPerToken::default(),
            "t",
            "Grep",
            &json!({"pattern":"x"}),
            &ToolContent::Text(out),
        )
        .unwrap();
    let c = f.form["content"].as_str().unwrap();
    assert_eq!(c.lines().count(), 26);
    assert!(
        c.ends_with("[… 175 more of 200 entries; view_tool_call(\"t\") returns the full list]")
    );
}

#[test]
fn write_input_content_is_compacted_too() {
    let rules = ToolRules::default();
    let f = rules
        .compact(
            &CharsPerToken::default(),
            "w",
            "Write",
            &json!({"file_path":"/x.py","content": numbered(400)}),
            &ToolContent::Text("File created successfully".into()),
        )
        .unwrap();
    let input = f.form["input"].as_object().unwrap();
    assert_eq!(input["file_path"], "/x.py");
    assert!(input["content"].as_str().unwrap().contains("lines elided"));
}

#[test]
fn small_outputs_and_keep_rules_miss() {
    let rules = ToolRules::default();
    let est = CharsPerToken::default();
    assert!(
        rules
            .compact(
                &est,
                "a",
                "Read",
                &json!({}),
                &ToolContent::Text("short".into())
            )
            .is_none()
    );
    let keep =
        ToolRules::with_overrides(r#"{"rules":[{"tools":["Read"],"rule":"keep"}]}"#).unwrap();
    assert!(
        keep.compact(
            &est,
            "a",
            "Read",
            &json!({}),
            &ToolContent::Text(numbered(500))
        )
        .is_none()
    );
}

#[test]
fn overrides_come_first_and_prefix_patterns_match() {
    let r = ToolRules::with_overrides(
        r#"{"precompact_threshold_tokens": 10, "rules":[{"tools":["mcp__fs__*"],"rule":"top_entries","n":3}]}"#,
    )
    .unwrap();
    assert_eq!(r.precompact_threshold_tokens, 10);
    assert_eq!(
        r.rule_for("mcp__fs__list", &json!({})),
        &Rule::TopEntries { n: 3 }
    );
    assert_eq!(
        r.rule_for("Read", &json!({})),
        &Rule::HeadTailLines { head: 20, tail: 10 }
    );
    assert_eq!(r.rule_for("reflect", &json!({})), &Rule::Drop);
    assert!(ToolRules::with_overrides(r#"{"rules":[{"tools":["x"],"rule":"shred"}]}"#).is_err());
}

#[test]
fn a_json_output_keeps_its_shape() {
    let rules = ToolRules::default();
    let inner = numbered(300);
    let envelope =
        serde_json::to_string(&json!({"output": inner, "metadata": {"exit_code": 0}})).unwrap();
    let f = rules
        .compact(
            &CharsPerToken::default(),
            "call_1",
            "shell",
            &json!({"command": ["bash", "-lc", "sed -n '1,300p' a.rs"]}),
            &ToolContent::Text(envelope),
        )
        .unwrap();
    let doc: Value = serde_json::from_str(f.form["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        doc["metadata"]["exit_code"], 0,
        "the envelope is still the envelope"
    );
    let out = doc["output"].as_str().unwrap();
    assert!(
        out.contains("[… 270 of 300 lines elided; view_tool_call(\"call_1\") returns them]"),
        "{out}"
    );
    assert!(out.starts_with("    1\tline number 1"));
}

#[test]
fn shell_calls_are_ruled_by_the_program_they_run() {
    let r = ToolRules::default();
    let codex = |script: &str| json!({"command": ["bash", "-lc", script], "workdir": "/w"});
    assert_eq!(
        r.rule_for("shell", &codex("sed -n '1,200p' src/lib.rs")),
        &Rule::HeadTailLines { head: 20, tail: 10 }
    );
    assert_eq!(
        r.rule_for("shell", &codex("cd app && rg -n tenant")),
        &Rule::TopEntries { n: 25 }
    );
    assert_eq!(
        r.rule_for("Bash", &json!({"command": "/usr/bin/cat a.txt"}))
            .name(),
        "head_tail_lines"
    );
    assert_eq!(
        r.rule_for("exec_command", &json!({"cmd": "ls -la"})).name(),
        "top_entries"
    );
    // Anything else a shell runs keeps head and tail characters.
    assert_eq!(
        r.rule_for("Bash", &json!({"command": "cargo test"})).name(),
        "head_tail_chars"
    );
    assert_eq!(r.rule_for("Read", &json!({})).name(), "head_tail_lines");
    assert_eq!(
        shell_program(&json!({"command": ["python3", "x.py"]})).as_deref(),
        Some("python3")
    );
    assert_eq!(shell_program(&json!({"file_path": "x"})), None);
}

#[test]
fn head_tail_chars_never_splits_a_character() {
    let s = "é".repeat(5000);
    let out = head_tail_chars(&s, 100, 50, "tool:x");
    assert!(out.starts_with(&"é".repeat(100)));
    assert!(out.contains("4850 of 5000 characters elided"));
}

#[test]
fn one_parser_reads_every_shape_of_shell_command() {
    let cmd = |v: Value| shell_command(&json!({ "command": v }));
    assert_eq!(cmd(json!("cd x && ls")).as_deref(), Some("cd x && ls"));
    assert_eq!(
        cmd(json!(["bash", "-lc", "rg foo"])).as_deref(),
        Some("rg foo")
    );
    assert_eq!(
        cmd(json!(["/bin/zsh", "-c", "ls", "extra"])).as_deref(),
        Some("ls")
    );
    assert_eq!(cmd(json!(["git", "status"])).as_deref(), Some("git status"));
    assert_eq!(cmd(json!([])), None);
    assert_eq!(
        shell_command(&json!({"cmd": "pwd"})).as_deref(),
        Some("pwd")
    );
    assert_eq!(shell_command(&json!({"path": "a"})), None);
    assert_eq!(
        shell_program(&json!({"command": ["bash", "-lc", "cd r && /usr/bin/rg x"]})).as_deref(),
        Some("rg")
    );
}

#[test]
fn the_built_in_table_is_the_embedded_file() {
    let rules = ToolRules::default();
    assert_eq!(rules.precompact_threshold_tokens, 500);
    assert_eq!(rules.rules.len(), 5);
    assert_eq!(rules.rule_for("Read", &json!({})).name(), "head_tail_lines");
    assert_eq!(rules.rule_for("think", &json!({})).name(), "drop");
    assert_eq!(
        rules.rule_for("Bash", &json!({"command": "rg x"})).name(),
        "top_entries"
    );
    assert_eq!(
        rules.rule_for("Bash", &json!({"command": "make"})).name(),
        "head_tail_chars"
    );
    // The override format reads the built-in file unchanged.
    assert_eq!(
        ToolRules::with_overrides(DEFAULT_RULES)
            .unwrap()
            .rules
            .len(),
        10
    );
}

/// `head_tail_lines` the plain way: split into every line, keep the first
/// and last ones. The newline search must give the same bytes.
fn head_tail_lines_by_splitting(s: &str, head: usize, tail: usize, pointer: &str) -> String {
    let lines: Vec<&str> = s.split('\n').collect();
    if lines.len() <= head + tail + 1 {
        return head_tail_chars(s, 1500, 500, pointer);
    }
    let elided = lines.len() - head - tail;
    let mut out = lines[..head].join("\n");
    out.push_str(&format!(
        "\n[… {elided} of {} lines elided; {pointer} returns them]\n",
        lines.len()
    ));
    out.push_str(&lines[lines.len() - tail..].join("\n"));
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Texts of short and empty lines, leading, trailing and doubled
    /// newlines, `\r` and multi-byte characters, with every head and tail
    /// from none to more than the text has.
    #[test]
    fn head_tail_lines_keeps_what_splitting_into_lines_kept(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("\n".to_string()),
                proptest::strategy::Just("\r\n".to_string()),
                "[a-zé€ \t]{0,12}",
                "[a-z]{1500,2100}",
            ],
            0..80,
        ),
        head in 0usize..12,
        tail in 0usize..12,
    ) {
        let s = pieces.concat();
        proptest::prop_assert_eq!(
            head_tail_lines(&s, head, tail, "tool:x"),
            head_tail_lines_by_splitting(&s, head, tail, "tool:x")
        );
    }
}
