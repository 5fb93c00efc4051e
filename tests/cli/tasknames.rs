//! Naming a task: an id prefix (as git takes commit prefixes), `latest`, and
//! `--cwd DIR` picking among one project's sessions; an ambiguous prefix lists
//! the candidates and exits 2.

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
fn cwd_picks_among_the_sessions_of_a_project() {
    let env = TestEnv::new();
    tally(&env);
    let other = "a1b2c3d4-0000-4000-8000-000000000001";
    other_session(&env, "/home/dev/projects/other", other);
    // The other project's only session, although Codex is more recent.
    assert_eq!(stepped(&env, &["--cwd", "/home/dev/projects/other"]), other);
    assert_eq!(
        stepped(
            &env,
            &["--cwd", "/home/dev/projects/other", "--task", "latest"]
        ),
        other
    );
    assert_eq!(stepped(&env, &["--cwd", TALLY]), CODEX_TASK);
    // A prefix is looked up among that project's sessions only.
    assert_eq!(
        stepped(&env, &["--cwd", TALLY, "--task", "7f"]),
        CLAUDE_TASK
    );
    let run = env.run(&["step", "--cwd", "/home/dev/projects/other", "--task", "7f"]);
    run.failure(2);
    let run = env.run(&["step", "--cwd", "/nowhere"]);
    run.failure(2)
        .stderr_has("no task was recorded in /nowhere");

    // Without --cwd, `latest` prefers the sessions of the current directory.
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
