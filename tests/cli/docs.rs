//! The docs cannot drift from the CLI: every `compactor …` example in README
//! and the guide (`docs/src/`) is checked, and every relative link in them
//! points at a file that exists.
//!
//! An example is a line of a ```sh or ```console block that starts with
//! `compactor ` or `$ compactor ` (or `cargo run [--release] -- `, the same
//! from a checkout; a trailing `\` joins the next line). Each
//! one is parsed by the CLI itself (`compactor::parse_command_line`), so a
//! renamed flag or subcommand fails here. Then, where it can, it runs, in
//! the order the file gives them, in one hermetic environment per file
//! (see [`DocEnv`]): it must exit 0, or with the status its comment states
//! (`# … (exit 1)`); a ```console example followed by output must print
//! exactly that. What cannot run here is only parsed: the live commands
//! (`proxy`, `run`, `mcp`, `watch`, `report --open`), a model server
//! (`--summarizer llm`), and anything naming the user's machine (`~`,
//! `$VAR`, `<id>`, `…`, a `live-` task).

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{TestEnv, crate_dir, testdata};

/// The documents checked: README and every page of the guide.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![crate_dir().join("README.md")];
    let mut stack = vec![crate_dir().join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    docs.sort();
    docs
}

fn relative(path: &Path) -> String {
    path.strip_prefix(crate_dir())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// One `compactor …` example of a document.
#[derive(Debug)]
struct Example {
    /// Where it is: `docs/src/sweep.md:42`.
    place: String,
    /// The command as written (continuations joined, without `$ `).
    text: String,
    /// The output a ```console block shows after it, if any.
    shown: Option<String>,
}

fn examples(path: &Path) -> Vec<Example> {
    let text = fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut found: Vec<Example> = Vec::new();
    let mut fence: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let number = i + 1;
        i += 1;
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(info.trim().to_string()),
            };
            continue;
        }
        let Some(lang) = fence.as_deref() else {
            continue;
        };
        if lang != "sh" && lang != "console" {
            continue;
        }
        let trimmed = line.trim_start();
        let command = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
        // `cargo run --release -- ARGS` from a checkout is `compactor ARGS`.
        let from_checkout = ["cargo run --release -- ", "cargo run -- "]
            .iter()
            .find_map(|p| command.strip_prefix(p));
        let command = &match from_checkout {
            Some(args) => format!("compactor {args}"),
            None => command.to_string(),
        };
        if !command.starts_with("compactor ") && command != "compactor" {
            // Output of the console example before it.
            if lang == "console"
                && !trimmed.starts_with("$ ")
                && let Some(last) = found.last_mut()
                && let Some(shown) = last.shown.as_mut()
            {
                shown.push_str(line);
                shown.push('\n');
            }
            continue;
        }
        let mut joined = command.to_string();
        while joined.ends_with('\\') && i < lines.len() {
            joined.pop();
            joined.push(' ');
            joined.push_str(lines[i].trim());
            i += 1;
        }
        found.push(Example {
            place: format!("{}:{number}", relative(path)),
            text: joined,
            shown: (lang == "console").then(String::new),
        });
    }
    found
}

/// The command's words, up to a shell operator (`>`, `|`, `&&`, `;`) or a
/// comment, with quotes removed; and the exit status its comment states.
fn words(command: &str) -> (Vec<String>, i32) {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut rest = "";
    let mut chars = command.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#' | '>' | '|' | ';') if !in_word || c != '#' => {
                rest = &command[at..];
                break;
            }
            (None, '&') if chars.peek().is_some_and(|&(_, n)| n == '&') => {
                rest = &command[at..];
                break;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    let comment = rest.find('#').map_or("", |at| &rest[at..]);
    let status = if comment.contains("(exit 1)") { 1 } else { 0 };
    (out, status)
}

/// The subcommand of `args` (after the global flags `--db PATH`, `--color
/// WHEN`, `-q`).
fn subcommand(args: &[String]) -> Option<&str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--db" | "--color" => {
                it.next();
            }
            a if a.starts_with('-') => {}
            a => return Some(a),
        }
    }
    None
}

/// Why an example can only be parsed here, or None when it runs.
fn parse_only(args: &[String]) -> Option<&'static str> {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    match subcommand(args) {
        Some("proxy" | "run" | "mcp" | "hook") => return Some("a live command"),
        Some("watch") => return Some("runs until stopped"),
        _ => {}
    }
    if has("--open") {
        return Some("opens a browser");
    }
    if args
        .windows(2)
        .any(|w| w[0] == "--summarizer" && w[1] == "llm")
    {
        return Some("needs a model server");
    }
    if args.iter().any(|a| {
        a.contains('~')
            || a.contains('$')
            || a.contains('<')
            || a.contains('…')
            || a.contains("...")
            || a.starts_with("live-")
    }) {
        return Some("names something on the user's machine");
    }
    None
}

/// The CLI's own parse of `args`; for `run`, its proxy flags too.
fn parses(args: &[String]) -> Result<(), String> {
    let argv = |rest: &[String]| {
        std::iter::once("compactor".to_string())
            .chain(rest.iter().cloned())
            .collect::<Vec<_>>()
    };
    compactor::parse_command_line(argv(args))?;
    if subcommand(args) == Some("run") {
        let at = args.iter().position(|a| a == "run").expect("run");
        let flags: Vec<String> = args[at + 2..]
            .iter()
            .take_while(|a| *a != "--")
            .cloned()
            .collect();
        let proxy: Vec<String> = std::iter::once("proxy".to_string()).chain(flags).collect();
        compactor::parse_command_line(argv(&proxy))
            .map_err(|e| format!("the proxy's flags of `run`: {e}"))?;
    }
    Ok(())
}

/// The hermetic environment a document's examples run in, in their order:
/// the fixtures under `testdata/`, a Claude Code and a Codex session where
/// those clients keep them (so a bare `compactor import` finds them),
/// `session.jsonl` (a Claude Code session) imported as the task `T`, and
/// `rollout.jsonl` (a Codex one).
struct DocEnv {
    env: TestEnv,
}

impl DocEnv {
    fn new() -> DocEnv {
        let env = TestEnv::new();
        fs::create_dir_all(env.work().join("testdata")).unwrap();
        for dir in ["fixtures", "golden", "probe"] {
            env.fixture(dir);
            fs::rename(env.work().join(dir), env.work().join("testdata").join(dir)).unwrap();
        }
        let claude = "testdata/fixtures/claude-shrink-floor.jsonl";
        let codex = "testdata/fixtures/codex-tenant-registry.jsonl";
        let copy = |from: &str, to: PathBuf| {
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(testdata(&from["testdata/".len()..]), to).unwrap();
        };
        let home = env.home();
        copy(
            claude,
            home.join(".claude/projects/-home-dev-shop/5b1e2d3c-7f4a-4e2b-9c1d-2a3b4c5d6e7f.jsonl"),
        );
        copy(
            codex,
            home.join(".codex/sessions/2026/03/14/rollout-2026-03-14T09-00-00-codex.jsonl"),
        );
        copy(claude, env.work().join("session.jsonl"));
        copy(codex, env.work().join("rollout.jsonl"));
        env.run(&["import", "session.jsonl", "--import-as", "T"])
            .success();
        DocEnv { env }
    }

    /// `dir/*` as the shell expands it, in byte order.
    fn expand(&self, args: Vec<String>) -> Vec<String> {
        let mut out = Vec::new();
        for arg in args {
            match arg.strip_suffix("/*") {
                Some(dir) => {
                    let mut names: Vec<String> = fs::read_dir(self.env.work().join(dir))
                        .unwrap()
                        .map(|e| format!("{dir}/{}", e.unwrap().file_name().to_string_lossy()))
                        .collect();
                    names.sort();
                    out.extend(names);
                }
                None => out.push(arg),
            }
        }
        out
    }
}

/// What is wrong with `example`, run (or parsed) in `env`.
fn check(example: &Example, env: &DocEnv, ran: &mut usize) -> Option<String> {
    let (args, status) = words(&example.text);
    let args: Vec<String> = args.into_iter().skip(1).collect();
    if let Err(e) = parses(&args) {
        return Some(format!("does not parse:\n{e}"));
    }
    if parse_only(&args).is_some() {
        return None;
    }
    *ran += 1;
    let args = env.expand(args);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    // An example that names its store (a scratch one, for a sample) runs
    // in it, in the document's directory.
    let run = if args.iter().any(|a| a == "--db" || a.starts_with("--db=")) {
        let mut cmd = env.env.bare_command();
        cmd.args(&argv);
        env.env.finish(cmd)
    } else {
        env.env.run(&argv)
    };
    if run.status != status {
        return Some(format!(
            "exit status {} where the doc says {status}:\n{}",
            run.status,
            run.snapshot()
        ));
    }
    match &example.shown {
        Some(shown) if !shown.trim().is_empty() && run.stdout.trim_end() != shown.trim_end() => {
            Some(format!(
                "prints other than the doc shows:\n{}",
                similar::TextDiff::from_lines(shown.trim_end(), run.stdout.trim_end())
                    .unified_diff()
                    .header("the doc", "compactor")
            ))
        }
        _ => None,
    }
}

#[test]
fn every_example_in_readme_and_the_guide_parses_and_runs() {
    let mut failures = Vec::new();
    let (mut checked, mut ran) = (0, 0);
    for doc in documents() {
        let examples = examples(&doc);
        if examples.is_empty() {
            continue;
        }
        let env = DocEnv::new();
        for example in &examples {
            checked += 1;
            if let Some(why) = check(example, &env, &mut ran) {
                failures.push(format!(
                    "{}: `compactor {}`\n{why}",
                    example.place,
                    &example.text["compactor ".len().min(example.text.len())..]
                ));
            }
        }
    }
    eprintln!("{checked} examples: {ran} run, the rest parsed");
    assert!(checked > 50, "only {checked} examples found");
    assert!(
        failures.is_empty(),
        "{} of {checked} examples in the docs are wrong:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A newcomer trying the guide's examples filled their own store with demo
/// tasks (a store keeps what it imports for good): every example that hands
/// a command a sample of `testdata/` to import names a store of its own
/// (`--db`). `check` imports into temporary stores of its own.
#[test]
fn every_example_that_imports_a_sample_names_a_scratch_store() {
    let mut bare = Vec::new();
    let mut samples = 0;
    for doc in documents() {
        for example in examples(&doc) {
            let (args, _) = words(&example.text);
            let args = &args[1..];
            let sample = args.iter().any(|a| a.starts_with("testdata/"));
            if !sample || matches!(subcommand(args), Some("check" | "export")) {
                continue;
            }
            samples += 1;
            if !args.iter().any(|a| a == "--db" || a.starts_with("--db=")) {
                bare.push(format!("{}: {}", example.place, example.text));
            }
        }
    }
    assert!(samples >= 5, "only {samples} examples import a sample");
    assert!(
        bare.is_empty(),
        "these import a sample into the user's own store; give them --db demo.db:\n{}",
        bare.join("\n")
    );
}

/// A newcomer found no Node.js version for the client tests in README.
/// README, the development page and `.ci/run` name one minimum ("Node.js N
/// or later"), and any pinned package of `clients/` that declares a newer
/// one (`engines.node` in the lock file; Claude Code declares 22) is named
/// in README and the development page too.
#[test]
fn readme_names_the_node_js_the_client_tests_need() {
    let flat = |path: &str| {
        fs::read_to_string(crate_dir().join(path))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    // The first "Node.js N or later" of a text.
    let minimum = |text: &str, path: &str| -> u32 {
        text.match_indices("Node.js ")
            .find_map(|(i, m)| {
                let rest = &text[i + m.len()..];
                let digits = rest.find(|c: char| !c.is_ascii_digit())?;
                rest[digits..]
                    .starts_with(" or later")
                    .then(|| rest[..digits].parse().ok())?
            })
            .unwrap_or_else(|| panic!("{path} names no Node.js version (\"Node.js N or later\")"))
    };
    let docs = ["README.md", "docs/src/development.md"];
    let texts: Vec<String> = docs.iter().map(|d| flat(d)).collect();
    let m = minimum(&texts[0], docs[0]);
    assert_eq!(minimum(&texts[1], docs[1]), m, "{}", docs[1]);
    assert!(
        flat(".ci/run").contains(&format!("Node.js ({m} or later)")),
        ".ci/run names another Node.js than README's {m}"
    );

    let manifest: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(crate_dir().join("clients/package.json")).unwrap(),
    )
    .unwrap();
    let lock: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(crate_dir().join("clients/package-lock.json")).unwrap(),
    )
    .unwrap();
    let mut declared = 0;
    for name in manifest["dependencies"].as_object().unwrap().keys() {
        let entry = &lock["packages"][format!("node_modules/{name}")];
        assert!(entry.is_object(), "{name} is not in the lock file");
        let Some(range) = entry["engines"]["node"].as_str() else {
            continue;
        };
        declared += 1;
        let major: u32 = range
            .trim()
            .strip_prefix(">=")
            .and_then(|v| v.trim().split('.').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} declares node {range:?}, not >=N"));
        if major > m {
            for (doc, text) in docs.iter().zip(&texts) {
                assert!(
                    text.contains(&format!("Node.js {major}")),
                    "{name} declares Node.js {major} or later, above the {m} {doc} names, and {doc} does not say so"
                );
            }
        }
    }
    assert!(
        declared >= 2,
        "only {declared} pinned packages declare a Node.js"
    );
}

#[test]
fn the_example_reader_finds_commands_comments_and_output() {
    let (args, status) =
        words(r#"compactor show 'view_tool_call("ID")' --json > out.txt # (exit 1)"#);
    assert_eq!(
        args,
        ["compactor", "show", r#"view_tool_call("ID")"#, "--json"]
    );
    assert_eq!(status, 1);
    let (args, status) = words("compactor tasks   # every task, id and title");
    assert_eq!((args.len(), status), (2, 0));
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("page.md");
    fs::write(
        &doc,
        "text\n```console\n$ compactor tasks --json\n{\"a\":1}\n```\n```sh\ncompactor replay x \\\n  --window 1\nls\n```\n```json\ncompactor no\n```\n",
    )
    .unwrap();
    let found = examples(&doc);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].shown.as_deref(), Some("{\"a\":1}\n"));
    assert_eq!(found[1].text, "compactor replay x  --window 1");
    assert!(found[1].place.ends_with("page.md:7"), "{}", found[1].place);
    // A renamed flag is caught by the parse alone.
    let (args, _) = words("compactor replay session.jsonl --windw 32000");
    assert!(parses(&args[1..]).unwrap_err().contains("--windw"));
    let (args, _) = words("compactor run claude --windw 2 -- --model opus");
    assert!(parses(&args[1..]).is_err());
}

/// Every relative link of README and the guide, and every SUMMARY entry,
/// names a file that exists, and a heading of it when it names one.
#[test]
fn every_relative_link_in_the_docs_points_at_a_file() {
    let mut broken = Vec::new();
    let summary = crate_dir().join("docs/src/SUMMARY.md");
    assert!(summary.is_file(), "docs/src/SUMMARY.md");
    assert!(
        crate_dir().join("docs/book.toml").is_file(),
        "docs/book.toml"
    );
    let mut linked_pages = 0;
    for doc in documents() {
        let text = fs::read_to_string(&doc).unwrap();
        let mut fenced = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if fenced {
                continue;
            }
            for target in link_targets(line) {
                if target.contains("://")
                    || target.starts_with('#')
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let path = doc.parent().unwrap().join(file);
                if doc == summary {
                    linked_pages += 1;
                }
                if !path.exists() {
                    broken.push(format!("{}:{}: {target}", relative(&doc), n + 1));
                } else if !anchor.is_empty() && !headings(&path).iter().any(|h| h == anchor) {
                    broken.push(format!(
                        "{}:{}: {target} (no such heading)",
                        relative(&doc),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(linked_pages >= 9, "SUMMARY.md links {linked_pages} pages");
    assert!(
        broken.is_empty(),
        "links to no file:\n{}",
        broken.join("\n")
    );
}

/// The anchors of a Markdown file's headings, as GitHub and mdBook make
/// them: lower case, punctuation dropped, spaces as hyphens.
fn headings(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        if fenced {
            continue;
        }
        let title = title.trim_start_matches('#').trim();
        out.push(
            title
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => {
                        Some(c.to_ascii_lowercase())
                    }
                    _ => None,
                })
                .collect(),
        );
    }
    out
}

/// The targets of `[text](target)` and `![alt](target)` on a line, outside
/// inline code.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut code = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => code = !code,
            b']' if !code && bytes.get(i + 1) == Some(&b'(') => {
                if let Some(end) = line[i + 2..].find(')') {
                    out.push(line[i + 2..i + 2 + end].to_string());
                    i += end + 2;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}
