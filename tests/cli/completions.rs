//! The committed shell completions and man page under `completions/` must be
//! what the current binary prints.

use crate::util::{TestEnv, crate_dir};

/// Each committed file and the arguments that print it.
const GENERATED: [(&str, &[&str]); 6] = [
    ("compactor.bash", &["completions", "bash"]),
    ("_compactor", &["completions", "zsh"]),
    ("compactor.fish", &["completions", "fish"]),
    ("compactor.elv", &["completions", "elvish"]),
    ("_compactor.ps1", &["completions", "powershell"]),
    ("compactor.1", &["man"]),
];

#[test]
fn committed_completions_match_the_binary() {
    let env = TestEnv::new();
    let mut stale = Vec::new();
    for (file, args) in GENERATED {
        let out = env
            .bare_command()
            .args(args)
            .output()
            .expect("run compactor");
        assert!(
            out.status.success(),
            "compactor {}: {:?}",
            args.join(" "),
            out
        );
        assert!(
            !out.stdout.is_empty(),
            "compactor {} printed nothing",
            args.join(" ")
        );
        let path = crate_dir().join("completions").join(file);
        match std::fs::read(&path) {
            Ok(committed) if committed == out.stdout => {}
            Ok(_) => stale.push(format!(
                "completions/{file} differs from `compactor {}`",
                args.join(" ")
            )),
            Err(e) => stale.push(format!("completions/{file} cannot be read: {e}")),
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nThe CLI changed: regenerate with `completions/generate.sh` and commit the result.",
        stale.join("\n")
    );
}

#[test]
fn the_generator_script_writes_every_file() {
    let script = std::fs::read_to_string(crate_dir().join("completions/generate.sh")).unwrap();
    for (file, args) in GENERATED {
        let line = format!("run {} > completions/{file}", args.join(" "));
        assert!(
            script.lines().any(|l| l.trim() == line),
            "completions/generate.sh lacks `{line}`"
        );
    }
}

#[test]
fn completions_mention_every_subcommand() {
    let bash = std::fs::read_to_string(crate_dir().join("completions/compactor.bash")).unwrap();
    let fish = std::fs::read_to_string(crate_dir().join("completions/compactor.fish")).unwrap();
    for sub in ["import", "tasks", "show", "completions"] {
        assert!(
            bash.contains(&format!("compactor,{sub})")),
            "bash completions lack {sub}"
        );
        assert!(
            fish.contains(&format!("-a \"{sub}\"")),
            "fish completions lack {sub}"
        );
    }
    // Format names are completed for --format.
    assert!(bash.contains("auto claude-code codex openai-chat anthropic"));
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let env = TestEnv::new();
    let mut cmd = env.bare_command();
    cmd.args(["completions", "tcsh"]);
    let run = env.finish(cmd);
    run.failure(2)
        .stderr_has("invalid value 'tcsh' for '<SHELL>'");
    assert_eq!(run.stdout, "");
}

/// `compactor man --list`: the subcommands with a page.
fn man_subcommands(env: &TestEnv) -> Vec<String> {
    let run = env.finish({
        let mut c = env.bare_command();
        c.args(["man", "--list"]);
        c
    });
    run.success();
    run.stdout.lines().map(str::to_string).collect()
}

#[test]
fn every_subcommand_has_its_committed_man_page() {
    let env = TestEnv::new();
    let subs = man_subcommands(&env);
    assert!(
        subs.contains(&"watch".to_string()) && subs.len() >= 15,
        "{subs:?}"
    );
    let dir = crate_dir().join("completions/man");
    let mut stale = Vec::new();
    for sub in &subs {
        let run = env.finish({
            let mut c = env.bare_command();
            c.args(["man", sub]);
            c
        });
        run.success();
        assert!(
            run.stdout.contains(&format!(".TH compactor-{sub} 1")),
            "{sub}"
        );
        let file = dir.join(format!("compactor-{sub}.1"));
        if std::fs::read_to_string(&file).ok().as_deref() != Some(run.stdout.as_str()) {
            stale.push(format!("completions/man/compactor-{sub}.1"));
        }
    }
    // No page of a subcommand that is gone.
    let mut committed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    committed.sort();
    let mut expected: Vec<String> = subs.iter().map(|s| format!("compactor-{s}.1")).collect();
    expected.sort();
    assert_eq!(committed, expected);
    assert!(
        stale.is_empty(),
        "{stale:?} differ from `compactor man SUBCOMMAND`: regenerate with completions/generate.sh"
    );
    // The main page names them.
    let main = std::fs::read_to_string(crate_dir().join("completions/compactor.1")).unwrap();
    for sub in &subs {
        assert!(main.contains(&format!("compactor\\-{sub}(1)")), "{sub}");
    }
}

#[test]
fn every_subcommand_help_ends_with_examples() {
    let env = TestEnv::new();
    for sub in man_subcommands(&env) {
        let run = env.finish({
            let mut c = env.bare_command();
            c.args([sub.as_str(), "--help"]);
            c
        });
        run.success();
        let (_, examples) = run
            .stdout
            .rsplit_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("{sub} --help has no examples:\n{}", run.stdout));
        let lines: Vec<&str> = examples.lines().collect();
        assert!((2..=3).contains(&lines.len()), "{sub}: {lines:?}");
        for l in lines {
            assert!(
                l.starts_with("  compactor ") || l.starts_with("  cat "),
                "{sub}: {l}"
            );
        }
    }
}

#[test]
fn task_ids_complete_from_the_store() {
    let env = TestEnv::new();
    let complete = |db: &std::path::Path| {
        env.finish({
            let mut c = env.bare_command();
            c.arg("--db").arg(db).arg("__complete-tasks");
            c
        })
    };
    // No store yet: `latest` only, and no store is created.
    let run = complete(&env.db());
    run.success();
    assert_eq!(run.stdout, "latest\n");
    assert!(!env.db().exists());
    env.import_fixture("codex/small-rollout.jsonl");
    let run = complete(&env.db());
    assert_eq!(
        run.stdout,
        format!("latest\n{}\n", crate::import::CODEX_TASK)
    );

    // The bash script asks the binary for them.
    let bash = std::process::Command::new("bash").arg("--version").output();
    if bash.is_err() {
        eprintln!("SKIPPED the bash half of task_ids_complete_from_the_store: no bash");
        return;
    }
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_compactor"), bin.join("compactor")).unwrap();
    let script = crate_dir().join("completions/compactor.bash");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}'; COMP_WORDS=(compactor step --task 019c); COMP_CWORD=3; _compactor compactor 019c --task; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("COMPACTOR_DB", env.db())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", crate::import::CODEX_TASK),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn zsh_and_fish_scripts_parse_and_fish_completes_task_ids() {
    let has = |shell: &str| {
        std::process::Command::new(shell)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let dir = crate_dir().join("completions");
    if has("zsh") {
        let out = std::process::Command::new("zsh")
            .arg("-n")
            .arg(dir.join("_compactor"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        eprintln!("SKIPPED the zsh half: no zsh");
    }
    if !has("fish") {
        eprintln!("SKIPPED the fish half: no fish");
        return;
    }
    let env = TestEnv::new();
    env.import_fixture("codex/small-rollout.jsonl");
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_compactor"), bin.join("compactor")).unwrap();
    let out = std::process::Command::new("fish")
        .arg("-c")
        .arg(format!(
            "source '{}'; complete -C 'compactor step --task '",
            dir.join("compactor.fish").display()
        ))
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("COMPACTOR_DB", env.db())
        .env("HOME", env.home())
        .output()
        .unwrap();
    let offered: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    assert_eq!(
        offered,
        [crate::import::CODEX_TASK, "latest"],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
