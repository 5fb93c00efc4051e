//! What a tool call acts on, normalised into an action, read the same way by
//! the extractive summarizer (a failure whose action later succeeded is not
//! ruled out) and by `probe` (a `## Ruled out` line whose action later
//! succeeded is misleading). The two must agree, so both go through here.
//!
//! A call is named in a summary as `Tool `target``: its tool and its
//! target (the command, else a path, else a query-like field; one line,
//! capped). Its action is a function of those two strings alone, so a line
//! parsed back from a summary names the same action the call had:
//!
//! - a shell call's action is the command that does the work: `cd DIR &&`
//!   prefixes, environment assignments, wrappers (`timeout 60`), output
//!   redirections and the filters it pipes into are left out, and of the
//!   command itself the program and its subcommand words (`git add`,
//!   `mix test`, `npx vitest run`), or, when it has none, the program and
//!   its first operands (`node assets/build.js`, `ls /srv`);
//! - any other call's action is its tool and its target (`Read /repo/a.rs`).

use serde_json::Value;

use super::toolfacts::{patch_paths, strings_of};
use super::toolrules::shell_command;

/// A call's target as a summary shows it.
const TARGET_MAX_CHARS: usize = 100;
/// Subcommand words an action keeps after its program.
const SUBCOMMAND_WORDS: usize = 2;
/// Operands an action keeps when the program has no subcommand.
const OPERANDS: usize = 2;
/// An operand is cut here (an inline script is its first characters).
const OPERAND_MAX_CHARS: usize = 40;

/// Tools whose target is a shell command (the built-in tool table's shell tools).
const SHELL_TOOLS: [&str; 4] = ["Bash", "shell", "exec_command", "local_shell"];

/// Whether `name` runs shell commands.
pub(crate) fn is_shell_tool(name: &str) -> bool {
    SHELL_TOOLS.contains(&name)
}

/// What a call acted on: its command, else its patch's first path, else a
/// path-like or query-like field, else its first string. One line, capped,
/// backticks swapped out so the subject stays unambiguous.
pub(crate) fn call_target(name: &str, input: &Value) -> String {
    let raw = shell_command(input)
        .or_else(|| {
            patch_paths(&strings_of(input).collect::<Vec<_>>().join("\n"))
                .into_iter()
                .next()
                .map(|(p, _)| p)
        })
        .or_else(|| {
            const FIELDS: [&str; 8] = [
                "file_path",
                "notebook_path",
                "path",
                "pattern",
                "query",
                "url",
                "description",
                "prompt",
            ];
            FIELDS
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .map(str::to_string)
        })
        .or_else(|| strings_of(input).next().map(str::to_string))
        .unwrap_or_else(|| {
            if input.is_null() {
                name.to_string()
            } else {
                input.to_string()
            }
        });
    let first_line = raw
        .trim()
        .lines()
        .next()
        .unwrap_or_default()
        .replace('`', "'");
    clip(first_line.trim(), TARGET_MAX_CHARS)
}

/// A line that opens with a call's subject (`Tool `target` …`): the tool,
/// the target and the rest of the line.
pub(crate) fn parse_subject(line: &str) -> Option<(&str, &str, &str)> {
    let (tool, rest) = line.split_once(" `")?;
    if tool.is_empty() || tool.contains(char::is_whitespace) {
        return None;
    }
    let (target, rest) = rest.split_once('`')?;
    Some((tool, target, rest))
}

/// The action of a call named `Tool `target``: equal for the same action.
/// A shell command chaining several (`git add a && git commit`) is named by
/// its first.
pub(crate) fn action_of(name: &str, target: &str) -> String {
    if is_shell_tool(name) {
        format!("$ {}", ShellCommand::parse(target).action())
    } else {
        format!("{name} {}", target.trim().trim_end_matches('/'))
    }
}

/// Every action a call named `Tool `target`` performs when it succeeds: its
/// own, and for a shell command each command chained after the first with
/// `&&` or `;` (a success ran them all; one after `||` may not have run).
pub(crate) fn actions_of(name: &str, target: &str) -> Vec<String> {
    if !is_shell_tool(name) {
        return vec![action_of(name, target)];
    }
    let mut out = vec![action_of(name, target)];
    for c in ShellCommand::chain(target) {
        let action = format!("$ {}", c.action());
        if !out.contains(&action) {
            out.push(action);
        }
    }
    out
}

/// The words of each command a shell command runs for sure (up to the first
/// `||`), setup (`cd`, `export`) and the filters it pipes into left out;
/// quotes taken off, wrappers and redirections dropped.
pub(crate) fn chained_commands(command: &str) -> Vec<Vec<String>> {
    ShellCommand::chain(command)
        .into_iter()
        .map(|c| c.tokens)
        .collect()
}

/// The words an action is named by in a key: the shell action's words, or
/// the tool and the target's last path component.
pub(crate) fn action_words(name: &str, target: &str) -> String {
    if is_shell_tool(name) {
        ShellCommand::parse(target).action()
    } else {
        let target = target.trim().trim_end_matches('/');
        let last = target.rsplit('/').next().unwrap_or(target);
        format!("{name} {last}")
    }
}

/// What a retry that succeeded added to the call that had failed, the same
/// action both: options for a shell call (`-f`, `--set-upstream origin
/// main`; a `cd` before it is not counted: the directory it left may be the
/// same), fields for any other (`limit: 5`). Empty when nothing the call
/// shows changed: what fixed it was done elsewhere (in a file the agent can
/// read again).
pub(crate) fn added_modifiers(
    name: &str,
    failed: &Value,
    succeeded: &Value,
    failed_target: &str,
    succeeded_target: &str,
) -> Vec<String> {
    if is_shell_tool(name) {
        // The whole first line of each command when the call is at hand
        // (a target is cut short), else the target a summary line kept.
        let command = |input: &Value, target: &str| {
            shell_command(input)
                .and_then(|c| c.trim().lines().next().map(str::to_string))
                .unwrap_or_else(|| target.to_string())
        };
        let f = ShellCommand::parse(&command(failed, failed_target));
        let s = ShellCommand::parse(&command(succeeded, succeeded_target));
        let mut out = Vec::new();
        let mut i = 0;
        while i < s.tokens.len() {
            let t = &s.tokens[i];
            i += 1;
            if !t.starts_with('-') || f.tokens.contains(t) {
                continue;
            }
            let mut added = clip(t, OPERAND_MAX_CHARS);
            while let Some(next) = s.tokens.get(i) {
                if next.starts_with('-') || f.tokens.contains(next) {
                    break;
                }
                added.push(' ');
                added.push_str(&clip(next, OPERAND_MAX_CHARS));
                i += 1;
            }
            out.push(added);
        }
        return out;
    }
    let (Some(f), Some(s)) = (failed.as_object(), succeeded.as_object()) else {
        return Vec::new();
    };
    s.iter()
        .filter(|(k, _)| !f.contains_key(*k))
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => clip(s, OPERAND_MAX_CHARS),
                other => clip(&other.to_string(), OPERAND_MAX_CHARS),
            };
            format!("{k}: {v}")
        })
        .collect()
}

/// At most `max` characters, with `…` when cut.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// The command of a shell call that does the work.
#[derive(Debug, Default, PartialEq, Eq)]
struct ShellCommand {
    /// Its words, quotes taken off, with no environment assignment, wrapper
    /// or redirection.
    tokens: Vec<String>,
}

/// Commands that only set up the shell for the next one.
const SETUP: [&str; 9] = [
    "cd", "pushd", "popd", "export", "source", ".", "set", "unset", "echo",
];
/// Wrappers that run the command after them.
const WRAPPERS: [&str; 7] = ["sudo", "time", "nice", "nohup", "env", "command", "exec"];
/// File extensions that make a word an operand, not a subcommand.
const FILE_EXTENSIONS: [&str; 26] = [
    "js", "mjs", "cjs", "ts", "tsx", "jsx", "py", "rs", "ex", "exs", "rb", "go", "java", "c", "h",
    "cpp", "md", "json", "jsonl", "toml", "yaml", "yml", "txt", "sh", "html", "css",
];

impl ShellCommand {
    fn parse(command: &str) -> ShellCommand {
        // A command made only of setup (`echo done`) is that setup.
        let mut fallback = None;
        for (sep, segment) in segments(command) {
            let tokens = strip_noise(words(&segment));
            let Some(first) = tokens.first() else {
                continue;
            };
            if first == "cd" || first == "pushd" {
                continue;
            }
            if sep == Sep::Pipe || SETUP.contains(&first.as_str()) {
                fallback.get_or_insert(tokens);
                continue;
            }
            return ShellCommand { tokens };
        }
        ShellCommand {
            tokens: fallback.unwrap_or_default(),
        }
    }

    /// The commands a success of `command` ran for sure: each segment that
    /// does work, up to the first `||`.
    fn chain(command: &str) -> Vec<ShellCommand> {
        let mut out = Vec::new();
        for (sep, segment) in segments(command) {
            if sep == Sep::Or {
                break;
            }
            let tokens = strip_noise(words(&segment));
            let Some(first) = tokens.first() else {
                continue;
            };
            let setup = first == "cd" || first == "pushd" || SETUP.contains(&first.as_str());
            if sep != Sep::Pipe && !setup {
                out.push(ShellCommand { tokens });
            }
        }
        out
    }

    /// The program and its subcommand words, else the program and its
    /// first operands.
    fn action(&self) -> String {
        let Some(first) = self.tokens.first() else {
            return String::new();
        };
        let program = first.rsplit('/').next().unwrap_or(first);
        let mut out = vec![program.to_string()];
        let rest = &self.tokens[1..];
        let subcommands: Vec<&String> = rest
            .iter()
            .take_while(|t| is_subcommand_word(t))
            .take(SUBCOMMAND_WORDS)
            .collect();
        if subcommands.is_empty() {
            out.extend(
                rest.iter()
                    .filter(|t| !t.starts_with('-'))
                    .take(OPERANDS)
                    .map(|t| clip(t, OPERAND_MAX_CHARS)),
            );
        } else {
            out.extend(subcommands.into_iter().cloned());
        }
        out.join(" ")
    }
}

/// `test`, `deps.get`, `build:css`: a subcommand, not a path, a file or a
/// name (`Makefile`).
fn is_subcommand_word(t: &str) -> bool {
    let mut chars = t.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let shaped = t
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
    let file = t
        .rsplit_once('.')
        .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext));
    starts && shaped && !file && t.len() <= 30
}

/// What joins a segment to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// The first segment, or one after `;`, `&&` or a line break.
    Then,
    /// After `||`: it runs only when the one before failed.
    Or,
    /// After `|`: it reads the one before.
    Pipe,
}

/// The command's segments, split at `&&`, `||`, `;`, `|` and line breaks
/// outside quotes, each with what joins it to the one before.
fn segments(command: &str) -> Vec<(Sep, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut joined = Sep::Then;
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == q {
                    quote = None;
                } else if c == '\\' && q == '"' {
                    current.extend(chars.next());
                }
                continue;
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                current.push(c);
                continue;
            }
            None if c == '\\' => {
                current.push(c);
                current.extend(chars.next());
                continue;
            }
            None => {}
        }
        let next = match c {
            ';' | '\n' => Some(Sep::Then),
            '&' if chars.peek() == Some(&'&') => {
                chars.next();
                Some(Sep::Then)
            }
            '|' if chars.peek() == Some(&'|') => {
                chars.next();
                Some(Sep::Or)
            }
            '|' => Some(Sep::Pipe),
            _ => None,
        };
        match next {
            Some(sep) => {
                out.push((joined, std::mem::take(&mut current)));
                joined = sep;
            }
            None => current.push(c),
        }
    }
    out.push((joined, current));
    out
}

/// Words of a segment, quotes taken off (a quoted word keeps its spaces).
fn words(segment: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some('"') if c == '\\' => word.extend(chars.next()),
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c == '\\' => {
                word.extend(chars.next());
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// Environment assignments and wrappers before the command, redirections
/// anywhere, taken out.
fn strip_noise(tokens: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut leading = true;
    let mut skip_next = false;
    for t in tokens {
        if skip_next {
            skip_next = false;
            continue;
        }
        if let Some(attached) = redirection(&t) {
            // `> file` takes the next word as its target; `2>&1` does not.
            skip_next = !attached;
            continue;
        }
        if leading {
            if is_assignment(&t) || WRAPPERS.contains(&t.as_str()) {
                continue;
            }
            if t == "timeout" {
                skip_next = true;
                continue;
            }
            leading = false;
        }
        out.push(t);
    }
    out
}

/// `2>&1`, `>/dev/null`, `>`, `<in`: a redirection, and whether its target
/// is attached to it.
fn redirection(t: &str) -> Option<bool> {
    let rest = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    let op = ["<<", ">>", ">&", "<", ">"]
        .into_iter()
        .find(|op| rest.starts_with(op))?;
    Some(rest.len() > op.len())
}

/// `NAME=value`.
fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sh(command: &str) -> String {
        action_of("Bash", command)
    }

    #[test]
    fn a_shell_action_is_its_program_and_subcommand() {
        assert_eq!(sh("mix test 2>&1"), "$ mix test");
        assert_eq!(
            sh("mix test test/spotter_web/live/x_test.exs 2>&1"),
            "$ mix test"
        );
        assert_eq!(sh("cd /home/u/repo && mix test test/a.exs"), "$ mix test");
        assert_eq!(
            sh("git add -f priv/a.css && git add lib/b.ex"),
            sh("git add lib/b.ex priv/a.css")
        );
        assert_eq!(sh("git push --set-upstream origin main 2>&1"), "$ git push");
        assert_eq!(sh("npx vitest run 2>&1"), "$ npx vitest run");
        assert_eq!(sh("mix deps.get 2>&1 | tail -5"), "$ mix deps.get");
        assert_eq!(
            sh("npm install highlight.js 2>&1 | tail -5"),
            "$ npm install"
        );
        assert_eq!(sh("FOO=1 timeout 60 cargo test --lib"), "$ cargo test");
        assert_eq!(
            sh("git diff --stat && echo \"---\" && git log"),
            "$ git diff"
        );
    }

    #[test]
    fn a_program_without_subcommand_keeps_its_operands() {
        assert_eq!(sh("node assets/build.js 2>&1"), "$ node assets/build.js");
        assert_ne!(
            sh("node assets/build.js"),
            sh("cd assets && node build.js 2>&1")
        );
        assert_eq!(sh("ls /srv/data"), "$ ls /srv/data");
        assert_ne!(sh("ls /srv/data"), sh("ls /srv/other"));
        assert_eq!(sh("python3 -m pytest tests/ -q"), "$ python3 pytest tests/");
        assert_ne!(sh("python3 -c \"import a\""), sh("python3 -c \"import b\""));
    }

    #[test]
    fn quotes_and_escapes_do_not_split_a_command() {
        assert_eq!(sh("git commit -m \"fix: a && b; c | d\""), "$ git commit");
        assert_eq!(sh("echo 'x' | grep -c x"), "$ echo x");
        assert_eq!(words("a 'b c' \"d\\\"e\""), vec!["a", "b c", "d\"e"]);
    }

    #[test]
    fn other_tools_act_on_their_target() {
        assert_eq!(action_of("Read", "/r/a.rs"), "Read /r/a.rs");
        assert_ne!(action_of("Read", "/r/a.rs"), action_of("Edit", "/r/a.rs"));
        assert_eq!(action_words("Read", "/r/lib/a.rs"), "Read a.rs");
        assert_eq!(action_words("Bash", "cd x && mix test 2>&1"), "mix test");
    }

    #[test]
    fn a_chain_that_succeeded_ran_each_of_its_commands() {
        assert_eq!(
            actions_of(
                "Bash",
                "cd /r && git add lib/a.ex && git commit -m \"x\" 2>&1 | tail -3"
            ),
            vec!["$ git add", "$ git commit"]
        );
        assert_eq!(
            actions_of("Bash", "make test || echo failed; ls"),
            vec!["$ make test"]
        );
        assert_eq!(actions_of("Read", "/r/a.rs"), vec!["Read /r/a.rs"]);
    }

    #[test]
    fn a_subject_parses_back_to_its_tool_and_target() {
        let input = json!({"command": "git push 2>&1"});
        let subject = format!("Bash `{}`", call_target("Bash", &input));
        assert_eq!(subject, "Bash `git push 2>&1`");
        let line = format!("{subject} failed (step 3): fatal: no upstream");
        assert_eq!(
            parse_subject(&line),
            Some((
                "Bash",
                "git push 2>&1",
                " failed (step 3): fatal: no upstream"
            ))
        );
        assert_eq!(parse_subject("no subject here"), None);
        assert_eq!(parse_subject("two words `x` y"), None);
    }

    #[test]
    fn what_made_a_retry_succeed_is_what_it_added() {
        let added = |f: &str, s: &str| {
            added_modifiers("Bash", &json!({"command": f}), &json!({"command": s}), f, s)
        };
        assert_eq!(
            added("git push 2>&1", "git push --set-upstream origin main 2>&1"),
            vec!["--set-upstream origin main"]
        );
        assert_eq!(
            added(
                "git add lib/a priv/b.css",
                "git add -f priv/b.css && git add lib/a"
            ),
            vec!["-f"]
        );
        assert_eq!(
            added("mix test test/a.exs 2>&1", "mix test 2>&1"),
            Vec::<String>::new()
        );
        assert_eq!(added("mix test", "cd /r && mix test"), Vec::<String>::new());
        let read = added_modifiers(
            "Read",
            &json!({"file_path": "/r/big.jsonl"}),
            &json!({"file_path": "/r/big.jsonl", "limit": 5}),
            "/r/big.jsonl",
            "/r/big.jsonl",
        );
        assert_eq!(read, vec!["limit: 5"]);
    }
}
