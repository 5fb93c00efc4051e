//! The hermetic harness every test goes through.
//!
//! Each [`TestEnv`] owns a temporary directory whose subdirectories are HOME and
//! XDG_DATA_HOME, holds the store (`--db`), and a `cwd/` directory the
//! binary runs in. Fixtures are copied into `cwd/` and named by relative
//! paths, so reports print the same paths on every machine; anything that
//! still mentions the temporary directory is redacted to `[TMP]`.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use rusqlite::Connection;
use serde_json::Value;
use tempfile::TempDir;

/// The crate root (where Cargo.toml, `testdata/` and `completions/` live).
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A committed fixture under `testdata/`.
/// The bytes of each of `files` under testdata/.
pub fn read_testdata(files: &[&str]) -> Vec<Vec<u8>> {
    files
        .iter()
        .map(|f| std::fs::read(testdata(f)).unwrap())
        .collect()
}

pub fn testdata(rel: &str) -> PathBuf {
    crate_dir().join("testdata").join(rel)
}

/// Variables that would leak the developer's setup into a test run.
fn is_leaky_var(name: &str) -> bool {
    name.starts_with("COMPACTOR_")
        || name.starts_with("COMPACTION_")
        || matches!(
            name,
            "NO_COLOR"
                | "CLICOLOR"
                | "CLICOLOR_FORCE"
                | "COLUMNS"
                | "LINES"
                | "RUST_LOG"
                | "GEMINI_CLI_HOME"
        )
}

pub struct TestEnv {
    _dir: TempDir,
    /// The temporary directory as created.
    raw_root: PathBuf,
    /// The same directory with symlinks resolved (what canonicalize() reports).
    root: PathBuf,
}

/// What one run of the binary did; stdout and stderr are already redacted.
#[derive(Debug)]
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout, stderr and the exit status in one string, for insta.
    pub fn snapshot(&self) -> String {
        format!(
            "{}------- stderr -------\n{}[exit status: {}]\n",
            self.stdout, self.stderr, self.status
        )
    }

    #[track_caller]
    pub fn success(&self) -> &Run {
        assert_eq!(self.status, 0, "expected success:\n{}", self.snapshot());
        self
    }

    #[track_caller]
    pub fn failure(&self, code: i32) -> &Run {
        assert_eq!(self.status, code, "unexpected status:\n{}", self.snapshot());
        self
    }

    /// Asserts stderr contains `needle`, showing stderr when it does not.
    #[track_caller]
    pub fn stderr_has(&self, needle: impl AsRef<str>) -> &Run {
        Run::has("stderr", &self.stderr, needle.as_ref());
        self
    }

    /// Asserts stdout contains `needle`, showing stdout when it does not.
    #[track_caller]
    pub fn stdout_has(&self, needle: impl AsRef<str>) -> &Run {
        Run::has("stdout", &self.stdout, needle.as_ref());
        self
    }

    #[track_caller]
    fn has(stream: &str, text: &str, needle: &str) {
        assert!(text.contains(needle), "{needle:?} not in {stream}:\n{text}");
    }

    /// Whether the run was refused because the task's system prompt and
    /// tools alone exceed the budget's w_eff: exit 2, one line naming them.
    pub fn refused_below_overhead(&self) -> bool {
        self.status == 2
            && self.stderr.lines().count() == 1
            && self.stderr.contains(
                "tokens for the prompt (w_eff), fewer than the system prompt and tools alone (",
            )
    }

    /// One JSON object, or JSON Lines as an array (without a totals record).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            if self.stdout.lines().count() > 1 {
                return Value::Array(self.json_list());
            }
            panic!("stdout is not JSON ({e}):\n{}", self.stdout)
        })
    }

    /// `replay --json`'s object, after checking the exit status it implies:
    /// 1 exactly when a call is `over_window`, else 0.
    #[track_caller]
    pub fn replay_json(&self) -> Value {
        let v = self.json();
        let over = v["calls"]
            .as_array()
            .unwrap_or_else(|| panic!("not a replay:\n{}", self.stdout))
            .iter()
            .any(|c| c["status"] == "over_window");
        self.failure(i32::from(over));
        v
    }

    /// JSON Lines output as a list, without its totals record (if any).
    pub fn json_list(&self) -> Vec<Value> {
        self.json_lines()
            .into_iter()
            .filter(|v| !v["schema"].as_str().is_some_and(|s| s.contains("total")))
            .collect()
    }

    /// The import report of `import --json` (one JSON object per line).
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// `import --json`: the per-file reports, after checking the closing
    /// totals record counts them (one named file has no totals record).
    pub fn import_reports(&self) -> Vec<Value> {
        let mut lines = self.json_lines();
        if lines.len() == 1 && lines[0]["schema"] == "compactor.import/1" {
            return lines;
        }
        let total = lines.pop().expect("the totals record");
        assert_eq!(total["schema"], "compactor.import_total/1", "{total}");
        assert_eq!(total["files"], lines.len() as u64, "{total}");
        let added: u64 = lines
            .iter()
            .flat_map(|r| r["tasks"].as_array().unwrap())
            .map(|t| t["added"].as_u64().unwrap())
            .sum();
        assert_eq!(total["rows_added"], added, "{total}");
        lines
    }
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let dir = tempfile::Builder::new()
            .prefix("compactor-test-")
            .tempdir()
            .expect("temp dir");
        let raw_root = dir.path().to_path_buf();
        let root = fs::canonicalize(&raw_root).expect("canonical temp dir");
        for sub in ["home", "data", "cwd"] {
            fs::create_dir_all(root.join(sub)).unwrap();
        }
        TestEnv {
            _dir: dir,
            raw_root,
            root,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub fn data_home(&self) -> PathBuf {
        self.root.join("data")
    }

    /// The directory commands run in; fixtures are copied here.
    pub fn work(&self) -> PathBuf {
        self.root.join("cwd")
    }

    /// The store every `run` passes with `--db`.
    pub fn db(&self) -> PathBuf {
        self.root.join("store.db")
    }

    /// The binary with a hermetic environment and no `--db`.
    pub fn bare_command(&self) -> Command {
        Command::from(self.std_command())
    }

    /// The same as a `std::process::Command`, for tests that manage the child.
    pub fn std_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_compactor"));
        for (name, _) in std::env::vars_os() {
            if let Some(n) = name.to_str()
                && is_leaky_var(n)
            {
                cmd.env_remove(n);
            }
        }
        cmd.env("HOME", self.home())
            .env("XDG_DATA_HOME", self.data_home())
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("LOCALAPPDATA", self.data_home())
            .env("APPDATA", self.data_home())
            .current_dir(self.work());
        cmd
    }

    /// The binary with `--db <store>` and `args`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.bare_command();
        cmd.arg("--db").arg(self.db()).args(args);
        cmd
    }

    /// Run with `--db <store>`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.finish(self.command(args))
    }

    /// Run a prepared command and capture what it did.
    pub fn finish(&self, mut cmd: Command) -> Run {
        let out = cmd.output().expect("run compactor");
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: self.redact(&String::from_utf8_lossy(&out.stdout)),
            stderr: self.redact(&String::from_utf8_lossy(&out.stderr)),
        }
    }

    /// Replace every spelling of the temporary directory with `[TMP]`.
    pub fn redact(&self, s: &str) -> String {
        let mut roots = vec![self.root.display().to_string()];
        let raw = self.raw_root.display().to_string();
        if !roots.contains(&raw) {
            roots.push(raw);
        }
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        let mut s = s.to_string();
        for r in roots {
            s = s.replace(&r, "[TMP]");
        }
        s
    }

    /// Copy `testdata/<rel>` (a file or a directory) into the working
    /// directory at the same relative path, and return that path.
    pub fn fixture(&self, rel: &str) -> String {
        copy_tree(&testdata(rel), &self.work().join(rel));
        rel.to_string()
    }

    /// Copy the fixtures `rels` in (as [`TestEnv::fixture`]) and import them
    /// in one `compactor import`.
    pub fn import_fixtures(&self, rels: &[&str]) -> Run {
        let paths: Vec<String> = rels.iter().map(|rel| self.fixture(rel)).collect();
        let args: Vec<&str> = std::iter::once("import")
            .chain(paths.iter().map(String::as_str))
            .collect();
        self.run(&args)
    }

    /// Write `bytes` to `<working directory>/<rel>` and return `rel`.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> String {
        let path = self.work().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
        rel.to_string()
    }

    /// Import fixtures, asserting success.
    pub fn import_fixture(&self, rel: &str) -> Run {
        let path = self.fixture(rel);
        let run = self.run(&["import", &path]);
        run.success();
        run
    }

    /// `tasks --json`, parsed.
    pub fn tasks(&self) -> Vec<Value> {
        let run = self.run(&["tasks", "--json"]);
        run.success();
        run.json_list()
    }

    /// One task of `tasks --json` by id.
    #[track_caller]
    pub fn task(&self, id: &str) -> Value {
        let tasks = self.tasks();
        tasks
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no task {id} in {tasks:#?}"))
    }

    /// A direct connection to the store, for checks the CLI does not expose.
    pub fn conn(&self) -> Connection {
        Connection::open(self.db()).expect("open the store")
    }

    /// Row counts of the three contract tables (0s when there is no store yet).
    pub fn counts(&self) -> [u64; 3] {
        if !self.db().exists() {
            return [0; 3];
        }
        let conn = self.conn();
        [
            "task_message",
            "task_compaction_snapshot",
            "task_tool_compaction",
        ]
        .map(|t| {
            conn.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap_or(0) as u64
        })
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(from, to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
    }
}

/// Where the shared corpus lives: `$COMPACTOR_CORPUS`, else `<crate>/../shared/corpus`.
/// Returns `None` (after saying so on stderr) when it is absent, so that corpus
/// tests can return early on machines without it; under CI (`CI=true`) an
/// absent corpus fails the test instead, so CI cannot pass without it.
pub fn corpus(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("COMPACTOR_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate_dir().join("..").join("shared").join("corpus"));
    if dir.is_dir() {
        Some(dir)
    } else if under_ci() {
        panic!(
            "{test}: the corpus is absent ({} is not a directory) and CI is set: corpus tests must not be skipped in CI; set COMPACTOR_CORPUS",
            dir.display()
        );
    } else {
        eprintln!(
            "SKIPPED {test}: the corpus is absent ({} is not a directory; set COMPACTOR_CORPUS to point at it)",
            dir.display()
        );
        None
    }
}

/// Whether this is a CI run (`CI` set to anything but empty, `0` or `false`).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Every transcript of the corpus at `dir`, checked to be all 29 of them.
pub fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let files = jsonl_files(dir);
    let n = files.len();
    assert!(n >= 29, "expected the 29 corpus files, found {n}");
    files
}

/// Every `.jsonl` file under `dir`, sorted.
pub fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    files_with_extension(dir, "jsonl")
}

/// Every file under `dir` whose name ends in `.{ext}`, sorted.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, ext, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, ext, &mut out);
    out.sort();
    out
}

/// The JSON objects of a JSONL file, with their 1-based line numbers.
pub fn json_lines(path: &Path) -> Vec<(u64, Value)> {
    let text = fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            (
                i as u64 + 1,
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1)),
            )
        })
        .collect()
}

/// Anthropic-style usage summed the way a bill counts it: each API response
/// (Claude Code `message.id`) once, with the usage of its last line.
pub fn claude_usage(lines: &[(u64, Value)], sidechain: Option<bool>) -> [u64; 4] {
    let mut per_message: Vec<(String, Value)> = Vec::new();
    for (_, l) in lines {
        if l["type"] != "assistant" {
            continue;
        }
        if let Some(want) = sidechain
            && l["isSidechain"].as_bool().unwrap_or(false) != want
        {
            continue;
        }
        let m = &l["message"];
        if m["model"] == "<synthetic>" || l["isApiErrorMessage"] == true || m["usage"].is_null() {
            continue;
        }
        let id = m["id"]
            .as_str()
            .expect("assistant lines have message.id")
            .to_string();
        match per_message.iter_mut().find(|(i, _)| *i == id) {
            Some(slot) => slot.1 = m["usage"].clone(),
            None => per_message.push((id, m["usage"].clone())),
        }
    }
    let mut sum = [0u64; 4];
    for (_, u) in &per_message {
        for (i, k) in USAGE_KEYS.iter().enumerate() {
            sum[i] += u[k].as_u64().unwrap_or(0);
        }
    }
    sum
}

pub const USAGE_KEYS: [&str; 4] = [
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];

/// The `usage` object of a `tasks --json` row as an array in [`USAGE_KEYS`] order.
pub fn usage_of(task: &Value) -> [u64; 4] {
    USAGE_KEYS.map(|k| {
        task["usage"][k]
            .as_u64()
            .unwrap_or_else(|| panic!("usage.{k} missing in {task}"))
    })
}

/// Codex model calls: `turn_context`-delimited spans with at least one
/// assistant-side response item.
pub fn codex_model_calls(lines: &[(u64, Value)]) -> u64 {
    let mut calls = 0;
    let mut open = false;
    let mut answered = false;
    for (_, l) in lines {
        let p = &l["payload"];
        match l["type"].as_str() {
            Some("turn_context") => {
                if open && answered {
                    calls += 1;
                }
                open = true;
                answered = false;
            }
            Some("response_item") => {
                let ty = p["type"].as_str().unwrap_or("");
                if matches!(
                    ty,
                    "reasoning"
                        | "function_call"
                        | "custom_tool_call"
                        | "local_shell_call"
                        | "web_search_call"
                ) || (ty == "message" && p["role"] == "assistant")
                {
                    answered = true;
                }
            }
            _ => {}
        }
    }
    if open && answered {
        calls += 1;
    }
    calls
}

/// Codex `token_count` events that report new usage (a repeated running total is a copy),
/// and the sum of their `last_token_usage` in Anthropic terms (input excludes cached).
pub fn codex_usage(lines: &[(u64, Value)]) -> (u64, [u64; 4]) {
    let mut last_total: Option<Value> = None;
    let mut events = 0;
    let mut sum = [0u64; 4];
    for (_, l) in lines {
        let p = &l["payload"];
        if l["type"] != "event_msg" || p["type"] != "token_count" || p["info"].is_null() {
            continue;
        }
        let total = p["info"]["total_token_usage"].clone();
        if last_total.as_ref() == Some(&total) {
            continue;
        }
        last_total = Some(total);
        events += 1;
        let u = &p["info"]["last_token_usage"];
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        sum[0] += n("input_tokens") - n("cached_input_tokens");
        sum[1] += n("output_tokens");
        sum[2] += n("cached_input_tokens");
    }
    (events, sum)
}

/// Tool pairing in the stored record: for every task, each tool_result must
/// answer exactly one tool_use of the same task. Returns the problems found.
pub fn pairing_problems(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT task_id, seq, content_encoding, content FROM task_message ORDER BY task_id, seq",
        )
        .unwrap();
    let rows: Vec<(String, i64, String, Vec<u8>)> = stmt
        .query_map([], |r| {
            let content = match r.get_ref(3)? {
                rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => {
                    b.to_vec()
                }
                other => panic!("content is {:?}", other.data_type()),
            };
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, content))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let mut problems = Vec::new();
    let mut by_task: std::collections::BTreeMap<&str, Vec<(i64, Value)>> = Default::default();
    for (task, seq, encoding, content) in &rows {
        let json = compactor::store::decode_content(encoding, content)
            .unwrap_or_else(|e| panic!("task {task} row {seq}: {e}"));
        let v: Value = serde_json::from_slice(&json)
            .unwrap_or_else(|e| panic!("task {task} row {seq}: content is not JSON: {e}"));
        by_task.entry(task).or_default().push((*seq, v));
    }
    for (task, msgs) in by_task {
        let blocks = || {
            msgs.iter()
                .flat_map(|(seq, v)| v.as_array().into_iter().flatten().map(move |b| (*seq, b)))
        };
        for (seq, b) in blocks() {
            if b["type"] != "tool_result" {
                continue;
            }
            let id = &b["tool_use_id"];
            let uses: Vec<i64> = blocks()
                .filter(|(_, u)| u["type"] == "tool_use" && &u["id"] == id)
                .map(|(s, _)| s)
                .collect();
            match uses.as_slice() {
                [u] if *u < seq => {}
                [u] => problems.push(format!(
                    "{task}: tool_result {id} (row {seq}) comes before its tool_use (row {u})"
                )),
                other => problems.push(format!(
                    "{task}: tool_result {id} (row {seq}) matches {} tool_use blocks",
                    other.len()
                )),
            }
        }
    }
    problems
}

// ---------------------------------------------------------------------------
// Engine commands: the check fixtures, budgets, views and the snapshot store.

/// The check fixtures (`testdata/fixtures/`) with their main task ids and
/// model calls, as `tasks --json` reports them.
pub const SHRINK_FLOOR: &str = "fixtures/claude-shrink-floor.jsonl";
pub const SHRINK_FLOOR_TASK: &str = "5b1e2d3c-7f4a-4e2b-9c1d-2a3b4c5d6e7f";
pub const SHRINK_FLOOR_CALLS: u64 = 20;
pub const TENANT: &str = "fixtures/codex-tenant-registry.jsonl";
pub const TENANT_TASK: &str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
pub const TENANT_CALLS: u64 = 25;
pub const DISPOSABLE: &str = "fixtures/claude-disposable-interrupt.jsonl";
pub const DISPOSABLE_TASK: &str = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";
pub const DISPOSABLE_CALLS: u64 = 10;
pub const BREAKTHROUGH: &str = "fixtures/anthropic-breakthrough.json";

/// The `check` budget matrix as flags: default, fold and tight.
pub const DEFAULT_BUDGET: [&str; 4] = ["--window", "200000", "--output-reserved", "20000"];
pub const FOLD: [&str; 4] = ["--window", "32000", "--output-reserved", "4000"];
pub const TIGHT: [&str; 4] = ["--window", "6000", "--output-reserved", "1000"];
pub const BUDGETS: [(&str, [&str; 4]); 3] = [
    ("default", DEFAULT_BUDGET),
    ("fold", FOLD),
    ("tight", TIGHT),
];

/// `args` followed by `more`, for building argument lists from constants.
/// An in-place `compact` of `task` writing v.json, then `more`.
pub fn in_place_compact<'a>(task: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let a = ["compact", "--task", task, "-o", "v.json", "--in-place"];
    args(&a, more)
}

pub fn args<'a>(args: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    v.extend_from_slice(more);
    v
}

/// blake3 of `bytes`, hex: how `view_hash` is defined.
pub fn blake3_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Read a view file, check that it is canonical (parsing and re-serialising
/// gives the same bytes) and a legal Anthropic Messages body; return its
/// bytes and the view.
#[track_caller]
pub fn valid_view(path: &Path) -> (Vec<u8>, compactor::view::View) {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let view = compactor::view::View::from_json(&bytes)
        .unwrap_or_else(|e| panic!("{} is not a view: {e}", path.display()));
    // A checkpoint may carry the recorded request's system prompt and tools
    // before the messages; the messages part is the canonical view, and the
    // canonical bytes are what `view_hash` hashes.
    let canonical = view.canonical_bytes();
    let whole = canonical == bytes
        || ((bytes.starts_with(b"{\"system\":") || bytes.starts_with(b"{\"tools\":"))
            && bytes.ends_with(&canonical[1..]));
    assert!(whole, "{} is not in canonical form", path.display());
    let bytes = canonical;
    let problems = compactor::view::validate(&view);
    assert!(
        problems.is_empty(),
        "{} is not a legal Messages body: {problems:?}",
        path.display()
    );
    (bytes, view)
}

/// Every text of a view (text blocks, tool results' text), in order.
pub fn view_texts(view: &compactor::view::View) -> Vec<String> {
    use compactor::model::Block;
    view.messages
        .iter()
        .flat_map(|m| m.content.iter())
        .map(|b| match b {
            Block::Text { text } => text.clone(),
            other => compactor::view::text::block_text(other),
        })
        .collect()
}

/// The contract fields every projecting report has, with their JSON types.
#[track_caller]
pub fn assert_report_fields(r: &Value) {
    assert!(r["tiers_fired"].is_array(), "tiers_fired: {r}");
    for t in r["tiers_fired"].as_array().unwrap() {
        assert!(
            [
                "shrink",
                "floor",
                "breakthrough_shrink",
                "breakthrough_floor"
            ]
            .contains(&t.as_str().unwrap_or("")),
            "unknown tier {t} in {r}"
        );
    }
    for k in ["tokens_before", "tokens_after", "trigger", "stop"] {
        assert!(r[k].is_u64(), "{k}: {r}");
    }
    let hash = r["view_hash"].as_str().expect("view_hash is a string");
    assert!(
        hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
        "view_hash: {hash}"
    );
    assert!(
        ["ok", "over_trigger", "breakthrough", "over_window"]
            .contains(&r["status"].as_str().unwrap_or("")),
        "status: {r}"
    );
}

/// The status a report must carry given its numbers: `ok` exactly when the
/// view is at or under trigger, `over_window` exactly when it is over the
/// effective window; in between, `breakthrough` after the ladder ran, or
/// `over_trigger` when nothing was reduced (preflight, or anti-thrash held).
#[track_caller]
pub fn assert_status_consistent(r: &Value) {
    let after = r["tokens_after"].as_u64().unwrap();
    let trigger = r["trigger"].as_u64().unwrap();
    let status = r["status"].as_str().unwrap();
    let w_eff = r["w_eff"].as_u64().unwrap_or(u64::MAX);
    if after <= trigger {
        assert_eq!(status, "ok", "{r}");
    } else if after > w_eff {
        assert_eq!(status, "over_window", "{r}");
    } else {
        assert!(
            ["breakthrough", "over_trigger"].contains(&status),
            "{status} with {after} tokens over trigger {trigger}: {r}"
        );
        if status == "over_trigger" && r["mode"] == "step" {
            assert_eq!(
                r["gated"], true,
                "over_trigger on a step without the gate: {r}"
            );
        }
    }
}

impl TestEnv {
    /// The whole `task_compaction_snapshot` table, ordered: (task, key, entry).
    pub fn snapshot_rows(&self) -> Vec<(String, String, String)> {
        if !self.db().exists() {
            return Vec::new();
        }
        let conn = self.conn();
        let Ok(mut stmt) = conn.prepare(
            "SELECT task_id, key, entry FROM task_compaction_snapshot ORDER BY task_id, profile, key",
        ) else {
            return Vec::new();
        };
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// Run and parse stdout as one JSON object, asserting the exit status.
    #[track_caller]
    pub fn json_of(&self, args: &[&str], status: i32) -> Value {
        let run = self.run(args);
        run.failure(status);
        run.json()
    }
}

/// The field `key` of every item of the JSON array `list`, read by `get`.
#[track_caller]
pub fn field_of<T>(list: &Value, key: &str, get: impl Fn(&Value) -> Option<T>) -> Vec<T> {
    let items = list.as_array();
    let items = items.unwrap_or_else(|| panic!("not an array: {list}"));
    items
        .iter()
        .map(|item| get(&item[key]).unwrap_or_else(|| panic!("no {key} in {item}")))
        .collect()
}

/// `field_of` for string fields.
#[track_caller]
pub fn strings_of(list: &Value, key: &str) -> Vec<String> {
    field_of(list, key, |v| v.as_str().map(String::from))
}

/// One request a loopback test server read: its method, path, headers
/// (names in lower case) and Content-Length body.
pub struct HttpRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// The next request on a keep-alive connection; `None` once the client has
/// closed it (or sent less than it declared).
pub fn read_request(reader: &mut impl std::io::BufRead) -> Option<HttpRequest> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                length = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(HttpRequest {
        method,
        path,
        headers,
        body,
    })
}
