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
    // With --task, FILE is imported under that name.
    let run = env.run(&["show", "--task", "renamed", &rel, "0"]);
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
