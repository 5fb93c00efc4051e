//! README as a newcomer reads it, top to bottom: the install command builds
//! what CI tested, no figure in it goes stale, and the tour says where the
//! sessions are before it uses one.

use crate::util::crate_dir;

fn readme() -> String {
    std::fs::read_to_string(crate_dir().join("README.md")).unwrap()
}

#[test]
fn the_install_command_builds_with_the_lock_file_ci_tested() {
    // `cargo install --path .` ignores Cargo.lock: it printed "Locking 136
    // packages to latest Rust 1.89 compatible versions" and built against
    // versions CI never ran.
    let readme = readme();
    let installs: Vec<&str> = readme
        .lines()
        .filter(|l| l.contains("cargo install"))
        .collect();
    assert!(!installs.is_empty(), "README says how to install");
    for line in installs {
        assert!(line.contains("--locked"), "without --locked: {line}");
    }
}

#[test]
fn readme_states_no_test_count_that_goes_stale() {
    // "157 unit and 225 integration tests" was out of date within a week.
    let readme = readme();
    let words: Vec<&str> = readme.split_whitespace().collect();
    for w in words.windows(3) {
        let counted = w[0].trim_matches(|c: char| !c.is_ascii_digit());
        let is_count = !counted.is_empty() && counted.chars().all(|c| c.is_ascii_digit());
        assert!(
            !(is_count
                && (w[1].starts_with("unit")
                    || w[1].starts_with("integration")
                    || (w[1] == "tests" || w[1] == "tests,"))),
            "a test count in README: {}",
            w.join(" ")
        );
    }
}

#[test]
fn the_tour_says_where_sessions_live_before_it_uses_one() {
    let readme = readme();
    let tour = readme
        .split("\n## A tour\n")
        .nth(1)
        .expect("README has a tour");
    let first_use = |needle: &str| {
        tour.find(needle)
            .unwrap_or_else(|| panic!("the tour uses {needle}"))
    };
    // Where the sessions are comes first; then what `session.jsonl` and `T`
    // stand for; then the commands that use them.
    let claude = first_use("~/.claude/projects");
    let codex = first_use("~/.codex/sessions");
    let file = first_use("`session.jsonl`");
    let task = first_use("`T`");
    let commands = first_use("```sh");
    assert!(
        claude < file && codex < file,
        "sessions used before they are found"
    );
    assert!(
        file < commands && task < commands,
        "session.jsonl or T used unexplained"
    );
    assert!(first_use("session.jsonl") > claude && first_use("--task T") > task);
}
