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
    run.failure(2);
    assert!(
        run.stderr.contains("invalid value 'tcsh' for '<SHELL>'"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
}
