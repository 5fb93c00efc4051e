use super::*;

const BIN: &str = "/usr/local/bin/compactor";

fn claude() -> Entries {
    Entries::new(Client::ClaudeCode, BIN, &[])
}

/// A user's settings, laid out as Claude Code writes them (two spaces, one
/// array item a line): their own keys in a non-alphabetical order and their
/// own hooks on two of compactor's events.
const USER: &str = r#"{
  "model": "opus",
  "permissions": {
    "deny": [
      "Read(./.env)"
    ],
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "PreCompact": [
      {
        "matcher": "manual",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/save-notes.sh"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "say done"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "cat ~/notes.md"
          }
        ]
      }
    ]
  },
  "env": {
    "Z_LAST": "1",
    "A_FIRST": "2"
  }
}
"#;

fn keys(v: &Json) -> Vec<&str> {
    match v {
        Json::Object(pairs) => pairs.iter().map(|(k, _)| k.as_str()).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn install_keeps_the_users_hooks_first_and_every_key_in_its_order() {
    let before = Settings::parse(Some(USER)).unwrap();
    let after = before.with_entries(&claude());
    let t = &after.tree;
    assert_eq!(keys(t), ["model", "permissions", "hooks", "env"]);
    assert_eq!(keys(t.get("permissions").unwrap()), ["deny", "allow"]);
    assert_eq!(keys(t.get("env").unwrap()), ["Z_LAST", "A_FIRST"]);
    // The user's events keep their order; PostCompact is new, so it comes last.
    assert_eq!(
        keys(t.get("hooks").unwrap()),
        ["PreCompact", "Stop", "SessionStart", "PostCompact"]
    );
    let groups = |e: &str| match t.get("hooks").unwrap().get(e) {
        Some(Json::Array(g)) => g.clone(),
        _ => panic!("{e} is an array"),
    };
    // The user's group stays first and untouched; compactor's follows.
    let pre = groups("PreCompact");
    assert_eq!(pre.len(), 2);
    assert_eq!(
        pre[0],
        before
            .tree
            .get("hooks")
            .unwrap()
            .get("PreCompact")
            .map(|a| match a {
                Json::Array(g) => g[0].clone(),
                _ => unreachable!(),
            })
            .unwrap()
    );
    let start = groups("SessionStart");
    assert_eq!(
        start[0].get("matcher").and_then(Json::as_str),
        Some("startup")
    );
    assert_eq!(
        start[1].get("matcher").and_then(Json::as_str),
        Some("compact")
    );
    assert_eq!(groups("Stop").len(), 1);
    let text = after.text();
    assert!(text.contains(
        "\"command\": \"/usr/local/bin/compactor hook session-start --client claude-code\""
    ));
    assert!(text.contains("\"timeout\": 60"));
    // Everything of the user's is still there, byte for byte, in the same order.
    let user_lines: Vec<&str> = USER.lines().collect();
    let mut it = text.lines();
    for l in &user_lines {
        assert!(it.any(|x| x == *l), "{l:?} kept in order");
    }
}

#[test]
fn installing_twice_is_installing_once() {
    let once = Settings::parse(Some(USER)).unwrap().with_entries(&claude());
    let twice = Settings::parse(Some(&once.text()))
        .unwrap()
        .with_entries(&claude());
    assert_eq!(twice.text(), once.text());
}

#[test]
fn uninstall_gives_back_the_settings_as_they_were() {
    let before = Settings::parse(Some(USER)).unwrap();
    let installed = Settings::parse(Some(&before.with_entries(&claude()).text())).unwrap();
    let removed = installed.without_entries(Client::ClaudeCode);
    assert_eq!(removed.tree, before.tree);
    assert_eq!(removed.text(), USER);
    assert!(!removed.has_entries(Client::ClaudeCode));
}

#[test]
fn a_missing_file_is_empty_settings_and_uninstall_empties_it_again() {
    let none = Settings::parse(None).unwrap();
    let installed = none.with_entries(&claude());
    assert_eq!(keys(&installed.tree), ["hooks"]);
    assert_eq!(
        keys(installed.tree.get("hooks").unwrap()),
        ["PreCompact", "PostCompact", "SessionStart"]
    );
    let removed = installed.without_entries(Client::ClaudeCode);
    assert_eq!(removed.tree, Json::Object(Vec::new()));
    // Blank text is no settings either.
    assert_eq!(Settings::parse(Some(" \n")).unwrap().tree, none.tree);
}

#[test]
fn an_entry_naming_a_moved_binary_is_replaced_in_place() {
    let old = Entries::new(Client::ClaudeCode, "/old/place/compactor", &[]);
    let first = Settings::parse(Some(USER)).unwrap().with_entries(&old);
    let moved = Settings::parse(Some(&first.text()))
        .unwrap()
        .with_entries(&claude());
    let text = moved.text();
    assert!(!text.contains("/old/place"), "{text}");
    assert_eq!(
        text.matches("hook pre-compact --client claude-code")
            .count(),
        1
    );
    // Same places as the first install.
    assert_eq!(first.text().replace("/old/place/compactor", BIN), text);
}

#[test]
fn entries_of_the_other_client_and_lookalikes_are_left_alone() {
    let both = Settings::parse(Some(USER))
        .unwrap()
        .with_entries(&claude())
        .with_entries(&Entries::new(Client::Codex, BIN, &[]));
    let only_codex = both.without_entries(Client::ClaudeCode);
    assert!(only_codex.has_entries(Client::Codex));
    assert!(!only_codex.has_entries(Client::ClaudeCode));
    for (cmd, ours) in [
        (
            "/usr/bin/compactor hook pre-compact --client claude-code",
            true,
        ),
        (
            "'/opt/my tools/compactor' --db /x.db hook pre-compact --client claude-code",
            true,
        ),
        ("compactor hook pre-compact --client claude-code", true),
        (
            "/usr/bin/other hook pre-compact --client claude-code",
            false,
        ),
        (
            "/usr/bin/compactor hook post-compact --client claude-code",
            false,
        ),
        ("/usr/bin/compactor hook pre-compact --client codex", false),
        (
            "echo compactor hook pre-compact --client claude-code",
            false,
        ),
    ] {
        assert_eq!(
            is_compactor_command(cmd, HookEvent::PreCompact, Client::ClaudeCode),
            ours,
            "{cmd}"
        );
    }
}

#[test]
fn a_group_the_user_shares_with_compactors_command_is_the_users() {
    let text = r#"{"hooks": {"PreCompact": [{"hooks": [
        {"type": "command", "command": "/usr/bin/compactor hook pre-compact --client claude-code"},
        {"type": "command", "command": "mine.sh"}]}]}}"#;
    let s = Settings::parse(Some(text)).unwrap();
    assert!(!s.has_entries(Client::ClaudeCode));
    assert_eq!(s.without_entries(Client::ClaudeCode).tree, s.tree);
}

#[test]
fn text_that_is_not_settings_is_refused_with_where_and_what() {
    match Settings::parse(Some("{\n  \"model\": \"opus\",\n  \"hooks\": {\n}\n,")) {
        Err(SettingsError::NotJson { line, column, .. }) => {
            assert_eq!((line, column), (5, 1));
        }
        other => panic!("{other:?}"),
    }
    let e = Settings::parse(Some("{\"model\": opus}")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("it is not valid JSON: line 1, column 11"),
        "{e}"
    );
    assert_eq!(
        Settings::parse(Some("[1]")).unwrap_err(),
        SettingsError::NotObject { found: "an array" }
    );
    assert_eq!(
        Settings::parse(Some(r#"{"hooks": "none"}"#)).unwrap_err(),
        SettingsError::HooksNotObject { found: "a string" }
    );
    assert_eq!(
        Settings::parse(Some(r#"{"hooks": {"PostCompact": {}}}"#)).unwrap_err(),
        SettingsError::EventNotArray {
            event: "PostCompact",
            found: "an object"
        }
    );
}

#[test]
fn the_files_indentation_is_kept() {
    let four = "{\n    \"model\": \"opus\"\n}";
    let s = Settings::parse(Some(four)).unwrap().with_entries(&claude());
    let text = s.text();
    assert!(
        text.starts_with("{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreCompact\"")
    );
    assert!(!text.ends_with('\n'), "no newline at the end, as before");
    let back = Settings::parse(Some(&text))
        .unwrap()
        .without_entries(Client::ClaudeCode);
    assert_eq!(back.text(), four);
}

#[test]
fn program_paths_are_quoted_for_the_shell() {
    assert_eq!(shell_quote("/usr/bin/compactor"), "/usr/bin/compactor");
    assert_eq!(shell_quote("/opt/my tools/c"), "'/opt/my tools/c'");
    assert_eq!(shell_quote("/o'k/c"), r"'/o'\''k/c'");
    let e = Entries::new(
        Client::Codex,
        "/opt/my tools/compactor",
        &["--db".into(), "/var/x y.db".into()],
    );
    let cmd = e.command(HookEvent::SessionStart);
    assert_eq!(
        cmd,
        "'/opt/my tools/compactor' --db '/var/x y.db' hook session-start --client codex"
    );
    assert_eq!(first_word(&cmd), "/opt/my tools/compactor");
    assert!(is_compactor_command(
        &cmd,
        HookEvent::SessionStart,
        Client::Codex
    ));
}
