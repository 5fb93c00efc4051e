//! Storage faults: each refused with a clear message (exit 2), and the store
//! file left exactly as it was: a read-only store, an unwritable directory, a
//! store from a newer compactor, a corrupted store, a file that is not
//! SQLite, a `--db` in a directory that does not exist.
//!
//! Permission tests need an unprivileged process: when the tests run as root
//! (who ignores file modes), the binary is run as `nobody` through
//! `setpriv`; without setpriv those two tests say they skipped.

use std::path::Path;
use std::process::Command;

use crate::reliability::{assert_integrity, store_dump};
use crate::util::{DISPOSABLE, DISPOSABLE_TASK, Run, SHRINK_FLOOR, TestEnv, blake3_hex};

fn file_hash(p: &Path) -> String {
    blake3_hex(&std::fs::read(p).unwrap())
}

fn no_side_files(db: &Path) {
    for ext in ["-wal", "-shm", "-journal"] {
        let mut side = db.as_os_str().to_owned();
        side.push(ext);
        assert!(
            !Path::new(&side).exists(),
            "{} was created",
            Path::new(&side).display()
        );
    }
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_untouched() {
    let env = TestEnv::new();
    let f = env.fixture(DISPOSABLE);
    for (name, bytes) in [
        (
            "text",
            b"this is a note, not a database; it is long enough to look like one\n".repeat(64),
        ),
        ("transcript", std::fs::read(env.work().join(&f)).unwrap()),
        (
            "binary",
            (0..8192u32).map(|i| (i * 7919 % 251) as u8).collect(),
        ),
    ] {
        let db = env.root().join(format!("{name}.db"));
        std::fs::write(&db, &bytes).unwrap();
        for a in [&["import", f.as_str()][..], &["tasks"][..]] {
            let mut cmd = env.bare_command();
            cmd.arg("--db").arg(&db).args(a);
            let run = env.finish(cmd);
            run.failure(2).stderr_has(format!(
                "the store [TMP]/{name}.db is not an SQLite database"
            ));
            assert_eq!(std::fs::read(&db).unwrap(), bytes, "{name} was modified");
            no_side_files(&db);
        }
    }
}

#[test]
fn a_corrupted_store_is_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    env.import_fixture(DISPOSABLE);
    let db = env.db();
    // Garbage over every page but the first (the header and the schema).
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 4 * 4096, "{}", bytes.len());
    for (i, b) in bytes.iter_mut().enumerate().skip(4096) {
        *b = (i * 31 % 253) as u8;
    }
    std::fs::write(&db, &bytes).unwrap();
    let before = file_hash(&db);
    let f = env.fixture(SHRINK_FLOOR);
    for a in [
        &["import", f.as_str()][..],
        &["tasks"][..],
        &["show", "--task", DISPOSABLE_TASK][..],
    ] {
        let run = env.run(a);
        run.failure(3); // a corrupt store is internal, not an input error
        assert!(
            run.stderr
                .contains("the store [TMP]/store.db is corrupt; nothing was written"),
            "{a:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        assert_eq!(file_hash(&db), before, "{a:?} changed the store file");
    }
}

#[test]
fn a_store_from_a_newer_compactor_is_refused_and_left_as_it_was() {
    let env = TestEnv::new();
    env.import_fixture(DISPOSABLE);
    env.conn().pragma_update(None, "user_version", 99).unwrap();
    let before = store_dump(&env, &env.db());
    let f = env.fixture(SHRINK_FLOOR);
    for a in [&["import", f.as_str()][..], &["tasks"][..]] {
        let run = env.run(a);
        run.failure(2).stderr_has(format!(
                "the store [TMP]/store.db has format version 99, newer than this compactor understands (version {})",
                compactor::store::STORE_VERSION
            ));
    }
    let version: u32 = env
        .conn()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 99);
    assert_eq!(store_dump(&env, &env.db()), before);
    assert_integrity(&env.db());
}

#[test]
fn a_db_path_in_a_missing_directory_is_an_error_but_the_default_store_dir_is_created() {
    let env = TestEnv::new();
    let f = env.fixture(DISPOSABLE);
    let mut cmd = env.bare_command();
    cmd.args(["--db", "no/such/dir/store.db", "import", &f]);
    let run = env.finish(cmd);
    run.failure(2).stderr_has(
        "the store's directory no/such/dir does not exist; create it or use another --db",
    );
    assert!(!env.work().join("no").exists(), "the directory was created");
    // The same through COMPACTOR_DB.
    let mut cmd = env.bare_command();
    cmd.env("COMPACTOR_DB", "elsewhere/store.db")
        .args(["tasks"]);
    env.finish(cmd).failure(2);
    assert!(!env.work().join("elsewhere").exists());

    // The default store (no --db): its directory is made on first use.
    let default = env.data_home().join("compactor").join("compactor.db");
    assert!(!default.parent().unwrap().exists());
    let mut cmd = env.bare_command();
    cmd.args(["import", &f]);
    env.finish(cmd).success();
    assert!(default.is_file());
}

fn euid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// The binary as an unprivileged user (itself when not root; `nobody`
/// through setpriv when root), or `None` when that is not possible here.
fn unprivileged(env: &TestEnv, db: &Path, args: &[&str]) -> Option<Run> {
    unprivileged_command(env, db, args).map(|cmd| env.finish(cmd.into()))
}

/// [`unprivileged`]'s command, not yet run.
fn unprivileged_command(env: &TestEnv, db: &Path, args: &[&str]) -> Option<std::process::Command> {
    let mut inner = env.std_command();
    inner.arg("--db").arg(db).args(args);
    if euid() != 0 {
        return Some(inner);
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).is_file())?;
    let mut cmd = Command::new(setpriv);
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(inner.get_program())
        .args(inner.get_args())
        .env_clear()
        .current_dir(inner.get_current_dir().unwrap());
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    for k in ["PATH", "TMPDIR"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    // nobody must reach the test's directories (modes are restored by the
    // permission changes each test makes on its own files).
    set_mode(env.root(), 0o755);
    set_mode(&env.work(), 0o755);
    Some(cmd)
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn skipped(test: &str) {
    eprintln!("SKIPPED {test}: running as root without setpriv, so file modes do not bind");
}

#[test]
fn a_read_only_store_is_refused_for_writes_and_left_untouched_but_can_be_read() {
    let env = TestEnv::new();
    env.import_fixture(DISPOSABLE);
    let f = env.fixture(SHRINK_FLOOR);
    let dir = env.root().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("store.db");
    std::fs::rename(env.db(), &db).unwrap();
    let before = store_dump(&env, &db);
    let hash = file_hash(&db);
    set_mode(&dir, 0o777);
    set_mode(&db, 0o444);
    let Some(run) = unprivileged(&env, &db, &["import", &f]) else {
        return skipped(
            "a_read_only_store_is_refused_for_writes_and_left_untouched_but_can_be_read",
        );
    };
    run.failure(2)
        .stderr_has("the store [TMP]/ro/store.db is read-only");
    assert_eq!(file_hash(&db), hash);
    // Reading needs no write: tasks works on a read-only file.
    let run = unprivileged(&env, &db, &["tasks", "--json"]).unwrap();
    run.success().stdout_has(DISPOSABLE_TASK);
    set_mode(&db, 0o644);
    assert_eq!(store_dump(&env, &db), before);
    assert_eq!(file_hash(&db), hash);
}

#[test]
fn an_unwritable_directory_is_refused_and_nothing_appears_in_it() {
    let env = TestEnv::new();
    let f = env.fixture(DISPOSABLE);
    // A new store in a directory that cannot be written.
    let dir = env.root().join("locked");
    std::fs::create_dir(&dir).unwrap();
    set_mode(&dir, 0o555);
    let db = dir.join("store.db");
    let Some(run) = unprivileged(&env, &db, &["import", &f]) else {
        return skipped("an_unwritable_directory_is_refused_and_nothing_appears_in_it");
    };
    run.failure(2)
        .stderr_has("cannot open the store [TMP]/locked/store.db");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

    // An existing, writable store file in a directory that cannot be
    // written (WAL needs its -wal and -shm files beside it).
    let dir2 = env.root().join("locked2");
    std::fs::create_dir(&dir2).unwrap();
    let db2 = dir2.join("store.db");
    let mut cmd = env.bare_command();
    cmd.arg("--db").arg(&db2).args(["import", &f]);
    env.finish(cmd).success();
    let hash = file_hash(&db2);
    set_mode(&db2, 0o666);
    set_mode(&dir2, 0o555);
    let g = env.fixture(SHRINK_FLOOR);
    let run = unprivileged(&env, &db2, &["import", &g]).unwrap();
    run.failure(2)
        .stderr_has("the store [TMP]/locked2/store.db is read-only");
    set_mode(&dir2, 0o755);
    assert_eq!(file_hash(&db2), hash);
    assert_eq!(std::fs::read_dir(&dir2).unwrap().count(), 1);
    set_mode(&dir, 0o755);
}

/// `path` with `suffix` added to its name (`-wal`, `-shm`).
fn side(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    p.into()
}

/// A store in a directory that cannot be written: the commands that only
/// read it (`tasks`, `show`, `runs`, the MCP server) read it, writing
/// nothing there; one that writes is refused as before. With a `-wal` and
/// its `-shm` left beside it (a writer that died), what only the WAL holds
/// is read too; a `-wal` whose `-shm` is gone cannot be read without
/// writing, and is refused saying so.
#[test]
fn a_store_in_a_read_only_directory_is_read_by_the_commands_that_only_read() {
    let env = TestEnv::new();
    env.import_fixture(DISPOSABLE);
    let id: String = env
        .conn()
        .query_row(
            "SELECT tool_call_id FROM task_tool_compaction ORDER BY tool_call_id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let dir = env.root().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("store.db");
    std::fs::rename(env.db(), &db).unwrap();
    set_mode(&db, 0o644);
    set_mode(&dir, 0o555);
    let hash = file_hash(&db);
    let tool = format!("tool:{id}");
    let Some(run) = unprivileged(&env, &db, &["tasks", "--json"]) else {
        set_mode(&dir, 0o755);
        return skipped("a_store_in_a_read_only_directory_is_read_by_the_commands_that_only_read");
    };
    run.success().stdout_has(DISPOSABLE_TASK);
    for args in [
        &["show", "0..2"][..],
        &["show", &tool],
        &["show", "--task", "latest", "compacted"],
        &["runs"],
    ] {
        let run = unprivileged(&env, &db, args).unwrap();
        assert_eq!(run.status, 0, "{args:?}: {}", run.snapshot());
    }
    unprivileged(&env, &db, &["show", &tool])
        .unwrap()
        .success()
        .stdout_has(&id);
    // The MCP server, over stdio.
    let mut cmd = unprivileged_command(&env, &db, &["mcp", "--task", "latest"]).unwrap();
    let out = mcp_exchange(
        &mut cmd,
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
            serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"view_tool_call","arguments":{"id":id}}}).to_string(),
            serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_context","arguments":{}}}).to_string(),
        ],
    );
    assert_eq!(out.len(), 3, "{out:?}");
    for a in &out[1..] {
        assert_eq!(a["result"]["isError"], false, "{a}");
    }
    assert!(out[1].to_string().contains(&id), "{}", out[1]);
    // A writing command is refused, as before.
    unprivileged(&env, &db, &["import", &env.fixture(SHRINK_FLOOR)])
        .unwrap()
        .failure(2)
        .stderr_has("is read-only");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "nothing written beside it"
    );
    assert_eq!(file_hash(&db), hash);

    // A writer that died, leaving its -wal (holding a task the database
    // file lacks) and -shm.
    set_mode(&dir, 0o755);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    conn.execute(
        "INSERT INTO task (id, format) VALUES ('wal-only', 'claude-code')",
        [],
    )
    .unwrap();
    std::mem::forget(conn);
    assert!(side(&db, "-wal").exists() && side(&db, "-shm").exists());
    for f in [side(&db, "-wal"), side(&db, "-shm")] {
        set_mode(&f, 0o644);
    }
    set_mode(&dir, 0o555);
    let run = unprivileged(&env, &db, &["tasks", "--json"]).unwrap();
    run.success().stdout_has("wal-only");
    // Its -shm gone: the WAL cannot be read without writing one.
    set_mode(&dir, 0o755);
    std::fs::remove_file(side(&db, "-shm")).unwrap();
    set_mode(&dir, 0o555);
    unprivileged(&env, &db, &["tasks"])
        .unwrap()
        .failure(2)
        .stderr_has("its -wal file holds changes the database file lacks");
    set_mode(&dir, 0o755);
}

/// Each of `lines` written to `cmd` (an MCP server) in turn, the answer to
/// each request read before the next: the answers.
fn mcp_exchange(cmd: &mut std::process::Command, lines: &[String]) -> Vec<serde_json::Value> {
    use std::io::{BufRead, Write};
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut out = Vec::new();
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
        stdin.flush().unwrap();
        if !l.contains("\"id\"") {
            continue;
        }
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        out.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
    }
    drop(stdin);
    child.wait().unwrap();
    out
}

/// Every command that only reads what was imported, each naming a task or a
/// run, never a transcript file.
const READ_ONLY: [&[&str]; 18] = [
    &["tasks"],
    &["show"],
    &["show", "0..2"],
    &["tasks", "--json"],
    &["show", "--task", "latest"],
    &["runs"],
    &["diff", "run:a", "run:b"],
    &["reset", "latest"],
    &["preflight", "--task", "latest"],
    &["step", "--task", "latest"],
    &["replay", "--task", "latest"],
    &["probe", "--task", "latest"],
    &["compact", "--task", "latest"],
    &["report", "--task", "latest", "-o", "r.html"],
    &["step", "--cwd", "."],
    &["watch", "latest", "--until-idle", "0"],
    &["watch", "--until-idle", "0"],
    &["watch", "no-such-file.jsonl", "--until-idle", "0"],
];

#[test]
fn a_read_only_command_on_a_missing_store_is_an_input_error_and_creates_nothing() {
    let env = TestEnv::new();
    for args in READ_ONLY {
        let mut cmd = env.bare_command();
        cmd.args(["--db", "typo.db"]).args(args);
        let run = env.finish(cmd);
        run.failure(2)
            .stderr_has("error: no store at typo.db; import something first");
        assert!(!env.work().join("typo.db").exists(), "{args:?} created it");
        // Nor the default store, nor its directory.
        let mut cmd = env.bare_command();
        cmd.args(args);
        let run = env.finish(cmd);
        run.failure(2).stderr_has(
            "error: no store at [TMP]/data/compactor/compactor.db; import something first",
        );
        assert!(
            !env.data_home().join("compactor").exists(),
            "{args:?} created the default store's directory"
        );
    }
    let mut cmd = env.bare_command();
    cmd.args(["--db", "typo.db", "tasks"]);
    insta::assert_snapshot!(env.finish(cmd).snapshot());
    // An in-memory store is always there: empty.
    let mut cmd = env.bare_command();
    cmd.args(["--db", ":memory:", "tasks"]);
    env.finish(cmd)
        .success()
        .stderr_has("no tasks yet: import your sessions with `compactor import`");
}

#[test]
fn import_and_a_command_given_a_file_create_the_store() {
    let env = TestEnv::new();
    let f = env.fixture(DISPOSABLE);
    for (db, args) in [
        ("import.db", vec!["import", f.as_str()]),
        ("step.db", vec!["step", f.as_str()]),
        ("replay.db", vec!["replay", f.as_str()]),
        ("watch.db", vec!["watch", f.as_str(), "--until-idle", "0"]),
        ("show.db", vec!["show", f.as_str()]),
        ("show-range.db", vec!["show", f.as_str(), "0..2"]),
    ] {
        let mut cmd = env.bare_command();
        cmd.args(["--db", db]).args(&args);
        env.finish(cmd).success();
        assert!(env.work().join(db).is_file(), "{args:?} made no store");
        // Then the read-only commands read it.
        let mut cmd = env.bare_command();
        cmd.args(["--db", db, "tasks", "--json"]);
        let run = env.finish(cmd);
        run.success().stdout_has(DISPOSABLE_TASK);
    }
    // The default store's directory too, on first use.
    let mut cmd = env.bare_command();
    cmd.args(["step", &f]);
    env.finish(cmd).success();
    assert!(
        env.data_home()
            .join("compactor")
            .join("compactor.db")
            .is_file()
    );
}
