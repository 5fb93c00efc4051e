//! Naming a task: an id prefix (as git takes commit prefixes), `latest` (also
//! what a command names by default), and `--project DIR` picking among one
//! project's sessions; an ambiguous prefix lists the candidates and exits 2.

use insta::assert_snapshot;
use serde_json::Value;

use crate::import::{CLAUDE_TASK, CODEX_TASK};
use crate::util::{TestEnv, testdata};

const SUBAGENT_SESSION: &str = "c2e8d4a1-9f3b-4c7e-b5a2-6e1d0f8c3b94";
const TALLY: &str = "/home/dev/projects/tally";

/// The task `step` worked on.
#[track_caller]
fn stepped(env: &TestEnv, args: &[&str]) -> String {
    let mut a = vec!["step", "--json"];
    a.extend_from_slice(args);
    let run = env.run(&a);
    run.success();
    let v: Value = run.json();
    v["task"].as_str().unwrap().to_string()
}

/// The three fixtures of project `tally`: Claude Code (14 Feb), its subagent
/// session (15 Feb) and Codex (26 Feb, the latest).
fn tally(env: &TestEnv) {
    env.import_fixture("claude-code/small-session.jsonl");
    env.import_fixture("codex/small-rollout.jsonl");
    let dir = env.fixture("claude-code/with-subagent");
    env.run(&["import", &dir]).success();
}

/// A copy of the Claude Code fixture as another session, recorded in `cwd`.
fn other_session(env: &TestEnv, cwd: &str, id: &str) {
    let text = std::fs::read_to_string(testdata("claude-code/small-session.jsonl"))
        .unwrap()
        .replace(TALLY, cwd)
        .replace(CLAUDE_TASK, id);
    let rel = env.write(&format!("{id}.jsonl"), text);
    env.run(&["import", &rel]).success();
}

#[test]
fn a_unique_prefix_names_the_task() {
    let env = TestEnv::new();
    tally(&env);
    assert_eq!(stepped(&env, &["--task", &CLAUDE_TASK[..4]]), CLAUDE_TASK);
    assert_eq!(stepped(&env, &["--task", &CODEX_TASK[..6]]), CODEX_TASK);
    // A prefix of a task and of its subagents names the task.
    assert_eq!(stepped(&env, &["--task", "c2e8"]), SUBAGENT_SESSION);
    let sub = format!("{SUBAGENT_SESSION}/agent-a5");
    assert_eq!(
        stepped(&env, &["--task", &sub]),
        format!("{SUBAGENT_SESSION}/agent-a5c31d7")
    );
    // A subagent under a short parent id, as `tasks` shows them.
    assert_eq!(
        stepped(&env, &["--task", "c2e8d4a1/agent-a5"]),
        format!("{SUBAGENT_SESSION}/agent-a5c31d7")
    );
    let run = env.run(&["step", "--task", "c2e8d4a1/agent-zz"]);
    run.failure(2)
        .stderr_has("unknown task \"c2e8d4a1/agent-zz\"");
    // show and reset take prefixes too.
    let full = env.run(&["show", "--task", CLAUDE_TASK, "0..2"]);
    let short = env.run(&["show", "--task", "7f3c", "0..2"]);
    short.success();
    assert_eq!(short.stdout, full.stdout);
    env.run(&["reset", "7f3c"]).success();
    let none = env.run(&["show", "--task", "zz", "0..2"]);
    none.failure(2).stderr_has("unknown task \"zz\"");
}

#[test]
fn an_ambiguous_prefix_lists_the_candidates_and_exits_2() {
    let env = TestEnv::new();
    let rel = env.fixture("claude-code/small-session.jsonl");
    for name in ["proj-alpha", "proj-beta"] {
        env.run(&["import", &rel, "--task", name]).success();
    }
    let run = env.run(&["step", "--task", "proj-"]);
    run.failure(2);
    assert_eq!(
        run.stderr,
        "error: task prefix \"proj-\" is ambiguous: 2 tasks match\n  proj-alpha\n  proj-beta\nhint: give more of the id\n"
    );
    assert_eq!(stepped(&env, &["--task", "proj-b"]), "proj-beta");
}

#[test]
fn latest_is_the_most_recently_active_task() {
    let env = TestEnv::new();
    tally(&env);
    assert_eq!(stepped(&env, &["--task", "latest"]), CODEX_TASK);
    // With no task at all: a store that imported nothing.
    let empty = TestEnv::new();
    std::fs::create_dir(empty.work().join("nothing")).unwrap();
    empty.run(&["import", "nothing"]).success();
    let run = empty.run(&["step", "--task", "latest"]);
    run.failure(2).stderr_has("no task yet");
}

#[test]
fn project_picks_among_the_sessions_of_a_project() {
    let env = TestEnv::new();
    tally(&env);
    let other = "a1b2c3d4-0000-4000-8000-000000000001";
    other_session(&env, "/home/dev/projects/other", other);
    // The other project's only session, although Codex is more recent.
    assert_eq!(
        stepped(&env, &["--project", "/home/dev/projects/other"]),
        other
    );
    assert_eq!(
        stepped(
            &env,
            &["--project", "/home/dev/projects/other", "--task", "latest"]
        ),
        other
    );
    assert_eq!(stepped(&env, &["--project", TALLY]), CODEX_TASK);
    // The older spelling means the same.
    assert_eq!(stepped(&env, &["--cwd", TALLY]), CODEX_TASK);
    // A prefix is looked up among that project's sessions only.
    assert_eq!(
        stepped(&env, &["--project", TALLY, "--task", "7f"]),
        CLAUDE_TASK
    );
    let run = env.run(&[
        "step",
        "--project",
        "/home/dev/projects/other",
        "--task",
        "7f",
    ]);
    run.failure(2);
    let run = env.run(&["step", "--project", "/nowhere"]);
    run.failure(2)
        .stderr_has("no task was recorded in /nowhere");
    // watch and show pick the same way.
    let shown = env.run(&["show", "--project", "/home/dev/projects/other", "0"]);
    let named = env.run(&["show", "--task", other, "0"]);
    shown.success();
    assert_eq!(shown.stdout, named.stdout);

    // Without --project, `latest` prefers the sessions of the current directory.
    let here = "a1b2c3d4-0000-4000-8000-000000000002";
    let work = env.work().display().to_string();
    other_session(&env, &work, here);
    other_session(
        &env,
        "/home/dev/projects/later",
        "a1b2c3d4-0000-4000-8000-000000000003",
    );
    assert_eq!(stepped(&env, &["--task", "latest"]), here);
}

/// `step`, `preflight`, `replay`, `probe`, `compact`, `report` and `show`
/// given no FILE and no `--task` work on `latest`, as `watch` does.
#[test]
fn a_command_given_no_task_works_on_the_latest() {
    let env = TestEnv::new();
    tally(&env);
    let json_task = |a: &[&str]| -> Value {
        let run = env.run(a);
        run.success();
        run.json()["task"].clone()
    };
    for command in [
        &["step", "--json"][..],
        &["preflight", "--json"],
        &["replay", "--json"],
        &["probe", "--json"],
        &["compact", "--json", "-o", "view.json"],
    ] {
        assert_eq!(json_task(command), CODEX_TASK, "{command:?}");
    }
    let run = env.run(&["report", "-o", "report.html"]);
    run.success();
    let page = std::fs::read_to_string(env.work().join("report.html")).unwrap();
    assert!(page.contains(&format!("<code>{CODEX_TASK}</code>")));
    // `show` alone is the latest task's record; an ADDRESS alone is its address.
    let latest = env.run(&["show", "--task", "latest"]);
    latest.success();
    assert_eq!(env.run(&["show"]).stdout, latest.stdout);
    let named = env.run(&["show", "--task", CODEX_TASK, "2..4"]);
    named.success();
    assert_eq!(env.run(&["show", "2..4"]).stdout, named.stdout);
}

#[test]
fn a_command_given_no_task_on_an_empty_store_says_how_to_start() {
    let env = TestEnv::new();
    // An empty store: an import of an empty directory creates it.
    std::fs::create_dir_all(env.work().join("empty")).unwrap();
    env.run(&["import", "empty"]).success();
    assert_snapshot!(env.run(&["step"]).snapshot(), @r"
    ------- stderr -------
    error: no task yet, so none is the latest
    hint: import a transcript with `compactor import`
    [exit status: 2]
    ");
}

/// `show` takes a FILE like the other commands: imported first, then shown.
#[test]
fn show_takes_a_file_and_an_address() {
    let env = TestEnv::new();
    let rel = env.fixture("claude-code/small-session.jsonl");
    let run = env.run(&["show", &rel, "1..3"]);
    run.success();
    let named = env.run(&["show", "--task", CLAUDE_TASK, "1..3"]);
    assert_eq!(run.stdout, named.stdout);
    assert!(run.stdout.starts_with("── #1 · "), "{}", run.stdout);
    // FILE alone: the whole record.
    let whole = env.run(&["show", &rel]);
    whole.success();
    assert_eq!(
        whole.stdout,
        env.run(&["show", "--task", CLAUDE_TASK]).stdout
    );
    // With --import-as, FILE is imported under that name.
    let run = env.run(&["show", "--import-as", "renamed", &rel, "0"]);
    run.success();
    assert!(env.tasks().iter().any(|t| t["id"] == "renamed"));
}

/// A filter has nothing to pick when FILE names the task: refused, naming
/// the flag that writes a session for another directory.
#[test]
fn project_with_a_file_is_a_usage_error() {
    let env = TestEnv::new();
    let rel = env.fixture("claude-code/small-session.jsonl");
    let run = env.run(&["step", &rel, "--project", "/home/dev/projects/tally"]);
    assert_snapshot!(run.snapshot(), @r"
    ------- stderr -------
    error: --project /home/dev/projects/tally picks among the sessions recorded in a directory, but claude-code/small-session.jsonl already names the task
    hint: drop --project (alias --cwd); `compact --write-session` writes the session for another directory with --resume-dir DIR
    [exit status: 2]
    ");
    assert_eq!(env.tasks().len(), 0, "nothing was imported");
}

/// What a newcomer hit: `compact FILE --task 2d98` imported FILE as a new
/// task named `2d98`, which from then on took over the prefix (`--task 2d98`
/// had meant `2d984148…`), and the append-only store cannot take it back.
#[test]
fn task_with_a_file_is_refused_and_the_prefix_keeps_its_meaning() {
    let env = TestEnv::new();
    tally(&env);
    let other = env.write(
        "other.jsonl",
        std::fs::read_to_string(testdata("claude-code/small-session.jsonl"))
            .unwrap()
            .replace(CLAUDE_TASK, "a1b2c3d4-0000-4000-8000-000000000009"),
    );
    let before = env.tasks().len();
    let prefix = &CODEX_TASK[..4];
    let run = env.run(&["compact", &other, "--task", prefix, "-o", "v.json"]);
    run.failure(2)
        .stderr_has(format!(
            "error: other.jsonl and --task {prefix} both name the task to work on: give one of them"
        ))
        .stderr_has("hint: --task only picks a task already in the store; to import FILE under a name of your own, use --import-as NAME");
    assert_eq!(env.tasks().len(), before, "nothing was imported");
    assert_eq!(stepped(&env, &["--task", prefix]), CODEX_TASK);
    // The flag of its own refuses a name that would take over a prefix
    // (or an id), and `import` does the same.
    for command in [
        vec!["compact", &other, "--import-as", prefix, "-o", "v.json"],
        vec!["import", &other, "--import-as", prefix],
        vec!["import", &other, "--task", prefix],
    ] {
        let run = env.run(&command);
        run.failure(2)
            .stderr_has(format!(
                "error: cannot import as \"{prefix}\": it is the start of 1 task id ({CODEX_TASK}), which `--task {prefix}` names today"
            ))
            .stderr_has("hint: pick a new name");
    }
    let run = env.run(&["import", &other, "--import-as", CLAUDE_TASK]);
    run.failure(2)
        .stderr_has(format!("task {CLAUDE_TASK} exists already"));
    let run = env.run(&["import", &other, "--import-as", "latest"]);
    run.failure(2)
        .stderr_has("`latest` names the most recently active task");
    assert_eq!(env.tasks().len(), before, "nothing was imported");
    assert_eq!(stepped(&env, &["--task", prefix]), CODEX_TASK);
    // A new name is taken, and taking it again is the same import (a no-op).
    for _ in 0..2 {
        let run = env.run(&[
            "compact",
            &other,
            "--import-as",
            "mine",
            "--json",
            "-o",
            "v.json",
        ]);
        run.success();
        assert_eq!(run.json()["task"], "mine");
    }
    assert_eq!(env.tasks().len(), before + 1);
    // --import-as needs a FILE to import.
    let run = env.run(&["compact", "--import-as", "x"]);
    run.failure(2).stderr_has("--import-as <NAME>");
}

/// What a newcomer hit: README says `probe TASK|FILE`, yet `probe 2f93a73b`
/// and `replay 2d98` answered `No such file or directory`, and `watch --task
/// c64c` was an unexpected argument.
#[test]
fn an_argument_that_is_no_file_but_names_a_task_is_that_task() {
    let env = TestEnv::new();
    tally(&env);
    let prefix = &CLAUDE_TASK[..8];
    for command in ["step", "preflight", "replay", "probe", "compact"] {
        let mut named = vec![command, "--task", prefix, "--json"];
        let mut given = vec![command, prefix, "--json"];
        if command == "compact" {
            named.extend(["-o", "a.json"]);
            given.extend(["-o", "b.json"]);
        }
        let named = env.run(&named);
        named.success();
        let given = env.run(&given);
        given.success();
        assert_eq!(given.stdout, named.stdout, "{command}");
        assert_eq!(given.json()["task"], CLAUDE_TASK, "{command}");
    }
    let run = env.run(&["report", &CLAUDE_TASK[..4], "-o", "r.html"]);
    run.success();
    let page = std::fs::read_to_string(env.work().join("r.html")).unwrap();
    assert!(page.contains(&format!("task {CLAUDE_TASK} in the store")));
    // `latest` too, and a prefix within --project.
    assert_eq!(
        env.run(&["step", "latest", "--json"]).json()["task"],
        CODEX_TASK
    );
    assert_eq!(
        env.run(&["step", "7f", "--project", TALLY, "--json"])
            .json()["task"],
        CLAUDE_TASK
    );
    // Neither a file nor a task: one error saying so, and how to name a task.
    let run = env.run(&["probe", "2f93a73b"]);
    assert_snapshot!(run.snapshot(), @r#"
    ------- stderr -------
    error: no file or task named "2f93a73b"
    hint: a FILE is imported first; a task is named by its id, a unique prefix or `latest` (also with --task ID); `compactor tasks` lists them
    [exit status: 2]
    "#);
    // A task name and --task both: refused, as FILE and --task are.
    let run = env.run(&["replay", prefix, "--task", prefix]);
    run.failure(2).stderr_has("both name the task");
    // With no store at all, there is no task to name: none is created.
    let empty = TestEnv::new();
    let run = empty.run(&["replay", "2d98"]);
    run.failure(2).stderr_has("import something first");
    assert!(!empty.db().exists(), "no store was created");
    // watch and reset take --task like every command that takes a task.
    let watched = env.run(&[
        "watch",
        "--task",
        &CLAUDE_TASK[..4],
        "--json",
        "--until-idle",
        "0",
    ]);
    watched.success();
    let given = env.run(&["watch", &CLAUDE_TASK[..4], "--json", "--until-idle", "0"]);
    assert_eq!(watched.stdout, given.stdout);
    assert!(!watched.stdout.is_empty());
    let run = env.run(&["watch", "nosuch", "--until-idle", "0"]);
    run.failure(2)
        .stderr_has("no file or task named \"nosuch\"");
    env.run(&["reset", "--task", prefix]).success();
    env.run(&["reset", prefix]).success();
    env.run(&["reset"]).failure(2);
}

/// Every command that takes a task takes `--task`, and says so in its help.
#[test]
fn every_command_that_takes_a_task_accepts_task() {
    let env = TestEnv::new();
    for command in [
        "show",
        "preflight",
        "step",
        "watch",
        "replay",
        "probe",
        "compact",
        "report",
        "sweep",
        "reset",
    ] {
        let run = env.run(&[command, "--help"]);
        run.success();
        assert!(
            run.stdout.contains("--task <TASK>"),
            "{command} --help:\n{}",
            run.stdout
        );
    }
}
