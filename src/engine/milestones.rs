//! What a shell call did for the work, beyond its files: a check run (a
//! test suite, a build, a linter) with its outcome and counts (`410 tests,
//! 0 failures`), or a milestone (a commit with its message, a push, a task
//! closed in a tracker). Read the same way by the extractive summarizer
//! (its work log) and by `probe` (the last check's outcome must be carried).
//!
//! Pure: a call's tool name, input and output in, a reading out.

use serde_json::Value;

use super::action::{chained_commands, is_shell_tool};
use super::toolfacts::{error_excerpt, naming_line};
use super::toolrules::shell_command;

/// What kind of check a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CheckKind {
    Test,
    Build,
    Lint,
}

impl CheckKind {
    pub(crate) fn noun(self) -> &'static str {
        match self {
            CheckKind::Test => "tests",
            CheckKind::Build => "build",
            CheckKind::Lint => "lint",
        }
    }
}

/// What a call did for the work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Work {
    /// A check ran: `command` the check itself (its words, without the
    /// `cd` before it or the filters after it; capped), whether it passed,
    /// the output's count line when it has one, and, when it failed, the
    /// line that names the failure (`FAILED test_list - AssertionError: …`).
    Check {
        kind: CheckKind,
        command: String,
        passed: bool,
        counts: Option<String>,
        failure: Option<String>,
    },
    /// A commit: its hash when the output shows it, and its message's first line.
    Commit {
        hash: Option<String>,
        message: Option<String>,
    },
    /// A push, a pull request, a release: `command` as typed.
    Shipped { command: String },
    /// A task tracker's task closed or started (`bd close x`, `gh issue close 4`).
    Tracked {
        command: String,
        closed: bool,
        task: Option<String>,
    },
}

/// A command's line as a summary shows it.
const COMMAND_MAX_CHARS: usize = 100;
/// A count line as a summary shows it.
const COUNTS_MAX_CHARS: usize = 120;
/// A commit message's first line as a summary shows it.
const MESSAGE_MAX_CHARS: usize = 100;

/// What a call did for the work, if anything: the first check or milestone
/// among the commands it ran (a failed call ran up to the one that failed;
/// it is read as that check failing, or as nothing).
pub(crate) fn read_work(name: &str, input: &Value, output: &str, is_error: bool) -> Option<Work> {
    if !is_shell_tool(name) {
        return None;
    }
    let command = shell_command(input)?;
    let shown = first_line(&command);
    let commands = chained_commands(&command);
    // A check decides over a milestone in the same line (`mix test && git commit`).
    for words in &commands {
        if let Some(kind) = check_kind(words) {
            let passed = !is_error && !reports_failure(output);
            let counts = count_line(output);
            let failure = (!passed)
                .then(|| failure_line(output))
                .flatten()
                .filter(|l| Some(l) != counts.as_ref());
            return Some(Work::Check {
                kind,
                command: first_line(&words.join(" ")),
                passed,
                counts,
                failure,
            });
        }
    }
    if is_error {
        return None;
    }
    for words in &commands {
        let program = program_of(words);
        let sub = words.get(1).map(String::as_str).unwrap_or_default();
        match (program, sub) {
            ("git", "commit") => {
                let (hash, from_output) = commit_of_output(output);
                let message = from_output.or_else(|| commit_message(words));
                return Some(Work::Commit { hash, message });
            }
            ("git", "push") | ("gh", "release") | ("npm", "publish") | ("cargo", "publish") => {
                return Some(Work::Shipped { command: shown });
            }
            ("gh", "pr")
                if matches!(words.get(2).map(String::as_str), Some("create" | "merge")) =>
            {
                return Some(Work::Shipped { command: shown });
            }
            _ => {}
        }
        if let Some(closed) = tracker_verb(words) {
            let task = tracked_task(words).map(|w| clip(w, 60));
            return Some(Work::Tracked {
                command: shown,
                closed,
                task,
            });
        }
    }
    None
}

/// The line of a failed check's output that names its failure, as the
/// error probes read it.
fn failure_line(output: &str) -> Option<String> {
    if output.trim().is_empty() {
        return None;
    }
    let line = naming_line(&error_excerpt(output)).trim().to_string();
    (!line.is_empty()).then_some(line)
}

fn first_line(command: &str) -> String {
    let line = command.trim().lines().next().unwrap_or_default().trim();
    clip(&line.replace('`', "'"), COMMAND_MAX_CHARS)
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

fn program_of(words: &[String]) -> &str {
    let first = words.first().map(String::as_str).unwrap_or_default();
    first.rsplit('/').next().unwrap_or(first)
}

/// Programs that are a check by themselves.
const CHECK_PROGRAMS: [(&str, CheckKind); 24] = [
    ("pytest", CheckKind::Test),
    ("jest", CheckKind::Test),
    ("vitest", CheckKind::Test),
    ("rspec", CheckKind::Test),
    ("phpunit", CheckKind::Test),
    ("ctest", CheckKind::Test),
    ("tox", CheckKind::Test),
    ("nox", CheckKind::Test),
    ("playwright", CheckKind::Test),
    ("tsc", CheckKind::Build),
    ("webpack", CheckKind::Build),
    ("esbuild", CheckKind::Build),
    ("eslint", CheckKind::Lint),
    ("prettier", CheckKind::Lint),
    ("biome", CheckKind::Lint),
    ("ruff", CheckKind::Lint),
    ("flake8", CheckKind::Lint),
    ("mypy", CheckKind::Lint),
    ("pylint", CheckKind::Lint),
    ("black", CheckKind::Lint),
    ("rubocop", CheckKind::Lint),
    ("shellcheck", CheckKind::Lint),
    ("golangci-lint", CheckKind::Lint),
    ("credo", CheckKind::Lint),
];

/// Programs whose subcommand (or script name) says what they run.
const RUNNERS: [&str; 20] = [
    "cargo", "mix", "go", "npm", "yarn", "pnpm", "bun", "deno", "make", "rake", "bundle", "npx",
    "bunx", "python", "python3", "uv", "poetry", "dotnet", "mvn", "gradle",
];

/// A word naming a check, by its kind (`test`, `test:unit`, `lint:fix`, `assets.build`).
fn word_kind(word: &str) -> Option<CheckKind> {
    let w = word.to_ascii_lowercase();
    let parts: Vec<&str> = w.split([':', '.', '-', '_']).collect();
    let has = |names: &[&str]| parts.iter().any(|p| names.contains(p));
    if has(&[
        "test", "tests", "spec", "specs", "nextest", "pytest", "jest", "vitest", "rspec",
    ]) {
        Some(CheckKind::Test)
    } else if has(&[
        "lint",
        "clippy",
        "credo",
        "fmt",
        "format",
        "vet",
        "typecheck",
        "dialyzer",
        "eslint",
        "ruff",
        "mypy",
        "prettier",
        "rubocop",
        "types",
    ]) {
        Some(CheckKind::Lint)
    } else if has(&[
        "build", "compile", "check", "tsc", "assemble", "bundle", "deploy",
    ]) {
        Some(CheckKind::Build)
    } else {
        None
    }
}

fn check_kind(words: &[String]) -> Option<CheckKind> {
    let program = program_of(words);
    if let Some((_, kind)) = CHECK_PROGRAMS.iter().find(|(p, _)| *p == program) {
        return Some(*kind);
    }
    let program = program.trim_start_matches("./");
    if program == "gradlew" || program == "mvnw" || RUNNERS.contains(&program) {
        // The runner's subcommand, past `run`/`exec`/`-m` and options.
        let args: Vec<&str> = words[1..]
            .iter()
            .map(String::as_str)
            .filter(|w| !w.starts_with('-'))
            .filter(|w| !matches!(*w, "run" | "exec" | "x" | "run-script"))
            .take(2)
            .collect();
        if program == "make" && args.is_empty() {
            return Some(CheckKind::Build);
        }
        return args.first().and_then(|w| {
            // `npx vitest run`, `python -m pytest`, `bundle exec rspec`.
            CHECK_PROGRAMS
                .iter()
                .find(|(p, _)| p == w)
                .map(|(_, k)| *k)
                .or_else(|| word_kind(w))
        });
    }
    None
}

/// Output that says a check failed although the call did not (a runner
/// that exits 0, a `| tail` that hides the status).
fn reports_failure(output: &str) -> bool {
    let Some(counts) = count_line(output) else {
        return false;
    };
    let lower = counts.to_lowercase();
    let failing = ["failure", "failed", "error"];
    lower
        .split([',', ';', '(', ')'])
        .map(str::trim)
        .any(|part| {
            let mut words = part.split_whitespace();
            let n = words.next().and_then(|w| w.parse::<u64>().ok());
            let noun = words.next().unwrap_or_default();
            n.is_some_and(|n| n > 0) && failing.iter().any(|f| noun.starts_with(f))
        })
}

/// Nouns a count line counts.
const COUNTED: [&str; 20] = [
    "test",
    "tests",
    "passed",
    "failed",
    "failure",
    "failures",
    "error",
    "errors",
    "warning",
    "warnings",
    "issue",
    "issues",
    "problem",
    "problems",
    "skipped",
    "examples",
    "example",
    "offenses",
    "doctests",
    "properties",
];

/// The last line of an output that states counts (`410 tests, 0 failures`,
/// `test result: ok. 12 passed; 0 failed`, `found no issues`), trimmed of
/// decoration and capped.
pub(crate) fn count_line(output: &str) -> Option<String> {
    output
        .lines()
        .rev()
        .take(400)
        .map(|l| {
            l.trim()
                .trim_matches(|c: char| c == '=' || c == '-' || c.is_whitespace())
        })
        .find(|l| is_count_line(l))
        .map(|l| {
            clip(
                &l.split_whitespace().collect::<Vec<_>>().join(" "),
                COUNTS_MAX_CHARS,
            )
        })
}

fn is_count_line(line: &str) -> bool {
    if line.len() > 400 {
        return false;
    }
    let lower = line.to_lowercase();
    if [
        "no issues",
        "no problems",
        "no offenses",
        "no warnings",
        "no errors",
    ]
    .iter()
    .any(|p| lower.contains(p))
    {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|pair| {
        pair[0].chars().all(|c| c.is_ascii_digit())
            && COUNTED.contains(&pair[1].trim_end_matches(['.', ':']))
    })
}

/// `[main 3f2a1bc] Add the parser`: a commit's hash and message as git printed them.
fn commit_of_output(output: &str) -> (Option<String>, Option<String>) {
    for line in output.lines().take(20) {
        let Some(rest) = line.trim().strip_prefix('[') else {
            continue;
        };
        let Some((inside, message)) = rest.split_once("] ") else {
            continue;
        };
        let hash = inside.split_whitespace().last().unwrap_or_default();
        if (7..=40).contains(&hash.len()) && hash.chars().all(|c| c.is_ascii_hexdigit()) {
            let message = clip(message.trim(), MESSAGE_MAX_CHARS);
            return (Some(hash.to_string()), Some(message));
        }
    }
    (None, None)
}

/// The first line of a commit's `-m` message (a heredoc's first line too).
fn commit_message(words: &[String]) -> Option<String> {
    let at = words
        .iter()
        .position(|w| w == "-m" || w == "--message" || w.starts_with("--message="))?;
    let raw = match words[at].strip_prefix("--message=") {
        Some(inline) => inline.to_string(),
        None => words.get(at + 1)?.clone(),
    };
    let text = match raw.trim_start().strip_prefix("$(cat <<") {
        // `"$(cat <<'EOF'\nmessage\nEOF\n)"`: the message starts on the next line.
        Some(rest) => rest.split_once('\n')?.1.to_string(),
        None => raw,
    };
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(clip(line, MESSAGE_MAX_CHARS))
}

/// Subcommand words of a tracker, never a task's name.
const TRACKER_WORDS: [&str; 12] = [
    "issue", "pr", "task", "close", "done", "resolve", "complete", "update", "start", "claim",
    "edit", "set",
];

/// The task a tracker command names: its first operand that is neither a
/// subcommand nor an option or an option's value.
fn tracked_task(words: &[String]) -> Option<&str> {
    let mut skip_value = false;
    for w in &words[1..] {
        if skip_value {
            skip_value = false;
            continue;
        }
        if w.starts_with('-') {
            skip_value = !w.contains('=');
            continue;
        }
        if !TRACKER_WORDS.contains(&w.as_str()) {
            return Some(w);
        }
    }
    None
}

/// Task trackers whose subcommands close or start a task.
const TRACKERS: [&str; 6] = ["bd", "gh", "glab", "jira", "linear", "todo"];

/// `Some(true)` for a command closing a task, `Some(false)` for one starting it.
fn tracker_verb(words: &[String]) -> Option<bool> {
    let program = program_of(words);
    if !TRACKERS.contains(&program) {
        return None;
    }
    let rest: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let has = |w: &str| rest.contains(&w);
    if has("close") || has("done") || has("resolve") || has("complete") {
        return Some(true);
    }
    let status = rest
        .iter()
        .position(|w| *w == "--status" || *w == "-s")
        .and_then(|i| rest.get(i + 1))
        .copied()
        .or_else(|| rest.iter().find_map(|w| w.strip_prefix("--status=")));
    match status {
        Some("closed" | "done" | "completed" | "resolved") => Some(true),
        Some("in_progress" | "in-progress" | "started" | "doing") => Some(false),
        _ if has("start") || has("claim") => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bash(command: &str, output: &str, is_error: bool) -> Option<Work> {
        read_work("Bash", &json!({ "command": command }), output, is_error)
    }

    #[test]
    fn a_check_is_read_with_its_counts() {
        let out = "Compiling...\n..........\nFinished in 2.1 seconds\n1 doctest, 410 tests, 0 failures\n\nRandomized with seed 1";
        assert_eq!(
            bash("cd /r && mix test 2>&1 | tail -20", out, false),
            Some(Work::Check {
                kind: CheckKind::Test,
                command: "mix test".into(),
                passed: true,
                counts: Some("1 doctest, 410 tests, 0 failures".into()),
                failure: None,
            })
        );
        let pytest = "F.......\nFAILED tests/test_views.py::test_list - AssertionError: expected 3 queries, got 51\n1 failed, 40 passed in 3.21s";
        assert!(matches!(
            bash("pytest tests -q", pytest, true),
            Some(Work::Check { passed: false, failure: Some(f), counts: Some(c), .. })
                if f == "FAILED tests/test_views.py::test_list - AssertionError: expected 3 queries, got 51"
                    && c == "1 failed, 40 passed in 3.21s"
        ));
        let cargo = "running 3 tests\ntest result: FAILED. 2 passed; 1 failed; 0 ignored";
        assert!(matches!(
            bash("cargo test --lib", cargo, false),
            Some(Work::Check { kind: CheckKind::Test, passed: false, counts: Some(c), .. })
                if c == "test result: FAILED. 2 passed; 1 failed; 0 ignored"
        ));
        let credo = "Analysis took 0.2 seconds\n123 mods/funs, found 2 code readability issues.";
        assert!(matches!(
            bash("mix credo --strict", credo, true),
            Some(Work::Check {
                kind: CheckKind::Lint,
                passed: false,
                ..
            })
        ));
        assert!(matches!(
            bash("npm run build", "built in 2s", false),
            Some(Work::Check {
                kind: CheckKind::Build,
                passed: true,
                counts: None,
                ..
            })
        ));
        assert!(matches!(
            bash("python -m pytest -q", "===== 5 passed, 1 warning in 0.12s =====", false),
            Some(Work::Check { kind: CheckKind::Test, counts: Some(c), .. }) if c == "5 passed, 1 warning in 0.12s"
        ));
        assert_eq!(bash("ls -la", "a\nb", false), None);
        assert_eq!(bash("rg test src", "", false), None);
    }

    #[test]
    fn commits_pushes_and_tracked_tasks_are_milestones() {
        let heredoc = "git add -A && git commit -m \"$(cat <<'EOF'\nfeat: shared transcript view\n\nCo-Authored-By: x\nEOF\n)\"";
        assert_eq!(
            bash(heredoc, "", false),
            Some(Work::Commit {
                hash: None,
                message: Some("feat: shared transcript view".into())
            })
        );
        assert_eq!(
            bash(
                "git commit -m 'wip'",
                "[spotter-dov 3f2a1bc] fix: guard\n 2 files changed",
                false
            ),
            Some(Work::Commit {
                hash: Some("3f2a1bc".into()),
                message: Some("fix: guard".into())
            })
        );
        assert_eq!(bash("git commit -m x", "nothing to commit", true), None);
        assert!(matches!(
            bash("git push -u origin main", "", false),
            Some(Work::Shipped { .. })
        ));
        assert_eq!(
            bash("bd close spotter-dov.1", "✓ Closed", false),
            Some(Work::Tracked {
                command: "bd close spotter-dov.1".into(),
                closed: true,
                task: Some("spotter-dov.1".into())
            })
        );
        assert_eq!(
            bash("bd update spotter-dov.2 --status in_progress", "", false),
            Some(Work::Tracked {
                command: "bd update spotter-dov.2 --status in_progress".into(),
                closed: false,
                task: Some("spotter-dov.2".into())
            })
        );
        assert!(matches!(
            bash("gh issue close 42 --comment done", "", false),
            Some(Work::Tracked { closed: true, task: Some(t), .. }) if t == "42"
        ));
    }
}
