//! `compactor run claude|codex|opencode|gemini [PROXY_FLAGS] [-- CLIENT_ARGS]`: go live in
//! one command. It starts `compactor proxy` on a free loopback port (this
//! same binary, its own process group, its output into `run.log` beside the
//! store), then the client pointed at it with compactor's MCP server
//! registered for this run only (`crate::launch` says how, per client), and
//! gives the client the terminal. When the client exits, the proxy is
//! stopped and compactor exits with the client's status. Nothing is
//! installed or edited: every setting is on the client's command line or in
//! its environment.
//!
//! Signals: the client shares compactor's process group, so what the
//! terminal sends (Ctrl-C, Ctrl-\, Ctrl-Z, a resize) reaches it directly;
//! compactor itself ignores Ctrl-C while the client runs (it is the
//! client's to handle). SIGTERM and SIGHUP sent to compactor are passed on
//! to the client, and so are SIGINT and SIGQUIT when no terminal is there to
//! send them. The proxy, in its own group, hears none of them: it is stopped
//! once the client is gone, by the Ctrl-C it takes as "stop". The handlers
//! are in place before anything starts: a signal that comes before the
//! client does stops the proxy and ends run (128 + the signal).
//!
//! The proxy never outlives run, even killed (SIGKILL, a crash): it reads a
//! pipe from run as its stdin and stops when it closes
//! (`--stop-when-stdin-closes`), and on Linux the kernel also sends it the
//! Ctrl-C when run dies (a parent-death signal).
//!
//! An `--upstream` run cannot reach is reported before the client starts
//! (a TCP connect, no model call; exit 2), and each distinct upstream error
//! the proxy meets later is printed on the terminal once, not only logged.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use clap::builder::PossibleValuesParser;

use super::Cli;
use super::Ui;
use super::errors::hinted;
use super::exit::Outcome;
use super::hook_log::beside_store;
use super::self_command::SelfCommand;
use crate::launch::{
    CLIENTS, Endpoint, GEMINI_HOME_VAR, LiveClient, McpFlag, SERVER_NAME, ServerCommand,
    gemini_settings, opencode_model,
};

#[derive(Debug, Args)]
#[command(after_help = "\
The proxy's output is in run.log beside the store. Codex's and OpenCode's key comes from
OPENAI_API_KEY. OpenCode is given a provider named compactor (OpenAI-compatible, pointed at the
proxy): name its model with -m compactor/MODEL, the model your --upstream serves. Gemini CLI's
key comes from GEMINI_API_KEY; it runs with GEMINI_CLI_HOME set to a temporary home whose
settings are yours plus compactor's (the API-key auth type and the MCP server), everything else
linked to your ~/.gemini.

Examples:
  compactor run claude                                Claude Code, live, with compactor's MCP server
  compactor run codex --window 200000 -- exec \"fix the tests\"
  compactor run gemini -- -p \"summarise the open issues\"")]
pub struct RunArgs {
    /// The client to start: claude (Claude Code), codex, opencode or gemini (Gemini CLI).
    #[arg(value_name = "CLIENT", value_parser = client_names())]
    pub client: String,

    /// The proxy's flags (`compactor proxy --help`): --upstream URL, the budget
    /// flags (--window, --output-reserved, …) and the summarizer's. The
    /// listening address is run's own: a free loopback port.
    #[arg(value_name = "PROXY_FLAGS", allow_hyphen_values = true, num_args = 0..)]
    pub proxy: Vec<String>,

    /// The client's own arguments, after `--`, passed on as they are.
    #[arg(last = true, value_name = "CLIENT_ARGS")]
    pub client_args: Vec<String>,
}

impl RunArgs {
    /// The proxy's flags and the client's arguments. Once a proxy flag was
    /// given, clap keeps the `--` after it among them: what follows it is
    /// the client's.
    fn split(&self) -> (Vec<String>, Vec<String>) {
        match self.proxy.iter().position(|a| a == "--") {
            Some(i) => (
                self.proxy[..i].to_vec(),
                self.proxy[i + 1..]
                    .iter()
                    .chain(&self.client_args)
                    .cloned()
                    .collect(),
            ),
            None => (self.proxy.clone(), self.client_args.clone()),
        }
    }
}

fn client_names() -> PossibleValuesParser {
    PossibleValuesParser::new(CLIENTS.iter().map(|c| c.name))
}

/// How long the proxy may take to say where it listens, and to stop.
const PROXY_START: Duration = Duration::from_secs(30);
const PROXY_STOP: Duration = Duration::from_secs(10);
/// The log of the proxy `run` starts, beside the store.
pub const RUN_LOG: &str = "run.log";

pub fn run(cli: &Cli, ui: &mut Ui, args: &RunArgs) -> Result<Outcome> {
    // First of all, so that no signal finds run without them.
    let mut signals = Signals::install()?;
    let client = LiveClient::find(&args.client).expect("clap checked the name");
    let (proxy_flags, client_args) = args.split();
    let proxy_args = check_proxy_flags(&proxy_flags)?;
    if matches!(client.endpoint, Endpoint::OpencodeProvider { .. })
        && opencode_model(&client_args).is_none()
    {
        return Err(hinted(
            format!(
                "{} needs its model named on compactor's provider",
                client.title
            ),
            format!(
                "pass `-- -m {SERVER_NAME}/MODEL` (the model your --upstream serves, e.g. `-m {SERVER_NAME}/gpt-4.1`)"
            ),
        ));
    }
    let me = SelfCommand::of(cli, "the run")?;
    let location = super::db_location(cli)?;
    let log_path = beside_store(&location, RUN_LOG).ok_or_else(|| {
        anyhow!("compactor run records in a store file, and --db :memory: is none")
    })?;

    if let Some(url) = &proxy_args.upstream {
        check_upstream(
            url,
            Duration::from_secs(proxy_args.connect_timeout),
            &client,
        )?;
    }
    let mut proxy = Proxy::start(&me, &proxy_flags)?;
    let server = ServerCommand {
        program: me.program.clone(),
        args: me.args(&["mcp"]),
    };
    let launch = client.launch(&proxy.url, &server, &client_args);
    let gemini_home = match client.mcp {
        McpFlag::GeminiSettings => match GeminiHome::prepare(&server) {
            Ok(h) => Some(h),
            Err(e) => {
                proxy.stop();
                return Err(e);
            }
        },
        _ => None,
    };
    let logged = proxy.log_to(&log_path, !ui.quiet);
    if !ui.quiet {
        ui.note(format!(
            "compactor: {} through the proxy at {} (its log: {})",
            client.title,
            proxy.url,
            log_path.display()
        ));
    }
    let stalled = crate::fault::stall_in_run().then(|| signals.wait_any());
    // A signal before the client starts: nothing to pass it to; run ends.
    if let Some(sig) = stalled.or_else(|| signals.pending()) {
        proxy.stop();
        return Ok(Outcome::Status((128 + sig).min(255) as u8));
    }
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args);
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    if let Some(h) = &gemini_home {
        cmd.env(GEMINI_HOME_VAR, h.dir.path());
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            proxy.stop();
            return Err(if e.kind() == std::io::ErrorKind::NotFound {
                hinted(
                    format!(
                        "cannot start {}: `{}` is not on PATH",
                        client.title, launch.program
                    ),
                    format!("install it ({}), or put it on PATH", client.install),
                )
            } else {
                anyhow::Error::new(e).context(format!("cannot start {}", launch.program))
            });
        }
    };
    let status = signals.wait_passing(child);
    proxy.stop();
    drop(gemini_home);
    if let Err(e) = logged {
        ui.warn(format!("the proxy's output was not logged: {e:#}"));
    }
    let status = status?;
    if !ui.quiet {
        let calls = proxy.calls.lock().map(|n| *n).unwrap_or(0);
        ui.note(format!(
            "compactor: {} exited; the proxy forwarded {} and has stopped",
            client.title,
            super::words::plural(calls, "call")
        ));
    }
    Ok(Outcome::Status(exit_status(status)))
}

/// What run reads of the proxy's flags: where it forwards, and how long a
/// connect may take there.
#[derive(Debug)]
struct ProxyFlags {
    upstream: Option<String>,
    connect_timeout: u64,
}

/// The home Gemini CLI runs in under `compactor run` (`GEMINI_CLI_HOME`): a
/// temporary directory whose `.gemini/settings.json` is the user's own with
/// compactor's auth type and MCP server added (`launch::gemini_settings`),
/// and whose every other entry links to the user's `.gemini/` (sessions,
/// history, credentials, trusted folders, extensions), so the CLI's own
/// files are written where they always are and the user's settings file is
/// never edited. Removed when the run ends.
struct GeminiHome {
    dir: tempfile::TempDir,
}

impl GeminiHome {
    fn prepare(server: &ServerCommand) -> Result<GeminiHome> {
        let home = std::env::var_os(GEMINI_HOME_VAR)
            .filter(|v| !v.is_empty())
            .or_else(|| std::env::var_os("HOME"))
            .map(PathBuf::from)
            .ok_or_else(|| {
                anyhow!(
                    "neither {GEMINI_HOME_VAR} nor HOME is set: where is Gemini CLI's .gemini/?"
                )
            })?;
        let real = home.join(".gemini");
        let settings_path = real.join("settings.json");
        let user = match std::fs::read_to_string(&settings_path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("cannot read {}", settings_path.display())));
            }
        };
        let settings = gemini_settings(user.as_deref(), server).map_err(|why| {
            hinted(
                format!(
                    "cannot read Gemini CLI's settings {}: {why}",
                    settings_path.display()
                ),
                "fix the file (Gemini CLI reads JSON with comments), or move it away for this run",
            )
        })?;
        // The CLI's own folders, shared with its runs outside compactor.
        for d in ["tmp", "history"] {
            std::fs::create_dir_all(real.join(d))
                .with_context(|| format!("cannot create {}", real.join(d).display()))?;
        }
        let dir = tempfile::Builder::new()
            .prefix("compactor-gemini-")
            .tempdir()
            .context("cannot create a temporary home for Gemini CLI")?;
        let ours = dir.path().join(".gemini");
        std::fs::create_dir(&ours).with_context(|| format!("cannot create {}", ours.display()))?;
        let entries =
            std::fs::read_dir(&real).with_context(|| format!("cannot read {}", real.display()))?;
        for e in entries {
            let e = e.with_context(|| format!("cannot read {}", real.display()))?;
            if e.file_name() == "settings.json" {
                continue;
            }
            std::os::unix::fs::symlink(e.path(), ours.join(e.file_name()))
                .with_context(|| format!("cannot link {}", e.path().display()))?;
        }
        std::fs::write(ours.join("settings.json"), settings)
            .with_context(|| format!("cannot write {}", ours.join("settings.json").display()))?;
        Ok(GeminiHome { dir })
    }
}

/// The proxy's flags, checked as `compactor proxy` would parse them (so a
/// typo is reported before anything starts); the address is run's own.
fn check_proxy_flags(flags: &[String]) -> Result<ProxyFlags> {
    for own in ["--listen", "--allow-remote", "--json"] {
        if flags
            .iter()
            .any(|f| f == own || f.starts_with(&format!("{own}=")))
        {
            return Err(hinted(
                format!("{own} is run's to choose"),
                "run listens on a free loopback port and logs the proxy's output; start `compactor proxy` yourself for another address",
            ));
        }
    }
    let argv = ["compactor", "proxy"]
        .into_iter()
        .map(String::from)
        .chain(flags.iter().cloned());
    match <Cli as clap::Parser>::try_parse_from(argv) {
        Ok(Cli {
            command: super::Command::Proxy(args),
            ..
        }) => Ok(ProxyFlags {
            upstream: args.upstream,
            connect_timeout: args.connect_timeout,
        }),
        Ok(_) => unreachable!("parsed as `compactor proxy`"),
        Err(e) => Err(hinted(
            format!(
                "the proxy's flags do not parse: {}",
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
            ),
            "give the client's own arguments after `--`; `compactor proxy --help` lists the proxy's flags",
        )),
    }
}

/// A client's exit status as compactor's: its code, or 128 + the signal
/// that ended it.
fn exit_status(s: ExitStatus) -> u8 {
    match (s.code(), s.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => (128 + sig).min(255) as u8,
        (None, None) => 1,
    }
}

/// The signals run handles (see the module's doc), installed before it
/// starts anything.
struct Signals {
    runtime: tokio::runtime::Runtime,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start run's signal watcher")?;
        let _in = runtime.enter();
        let fail = "cannot install run's signal handlers";
        let term = signal(SignalKind::terminate()).context(fail)?;
        let hup = signal(SignalKind::hangup()).context(fail)?;
        let int = signal(SignalKind::interrupt()).context(fail)?;
        let quit = signal(SignalKind::quit()).context(fail)?;
        drop(_in);
        Ok(Signals {
            runtime,
            term,
            hup,
            int,
            quit,
        })
    }

    /// A signal that came, if one did (not waiting for one).
    fn pending(&mut self) -> Option<libc::c_int> {
        let Signals {
            runtime,
            term,
            hup,
            int,
            quit,
        } = self;
        runtime.block_on(async {
            tokio::select! {
                biased;
                _ = term.recv() => Some(libc::SIGTERM),
                _ = hup.recv() => Some(libc::SIGHUP),
                _ = int.recv() => Some(libc::SIGINT),
                _ = quit.recv() => Some(libc::SIGQUIT),
                // Twice yielded, the runtime has read what its signal
                // handler wrote before the branches above are polled again.
                _ = async {
                    tokio::task::yield_now().await;
                    tokio::task::yield_now().await;
                } => None,
            }
        })
    }

    /// Wait for a signal: which.
    fn wait_any(&mut self) -> libc::c_int {
        let Signals {
            runtime,
            term,
            hup,
            int,
            quit,
        } = self;
        runtime.block_on(async {
            tokio::select! {
                _ = term.recv() => libc::SIGTERM,
                _ = hup.recv() => libc::SIGHUP,
                _ = int.recv() => libc::SIGINT,
                _ = quit.recv() => libc::SIGQUIT,
            }
        })
    }

    /// Wait for the client, passing on the signals meant for it (see the
    /// module's doc).
    fn wait_passing(self, mut child: Child) -> Result<ExitStatus> {
        let Signals {
            runtime,
            mut term,
            mut hup,
            mut int,
            mut quit,
        } = self;
        let pid = child.id() as libc::pid_t;
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
        runtime.block_on(async move {
            let mut waited = tokio::task::spawn_blocking(move || child.wait());
            let pass = |sig: libc::c_int| {
                // SAFETY: kill(2) with the pid of a child not yet reaped (the
                // waiting thread reaps it only once it has exited).
                unsafe { libc::kill(pid, sig) };
            };
            loop {
                tokio::select! {
                    done = &mut waited => {
                        return done.context("the wait for the client failed")?.context("cannot wait for the client");
                    }
                    _ = term.recv() => pass(libc::SIGTERM),
                    _ = hup.recv() => pass(libc::SIGHUP),
                    _ = int.recv() => if !terminal { pass(libc::SIGINT) },
                    _ = quit.recv() => if !terminal { pass(libc::SIGQUIT) },
                }
            }
        })
    }
}

/// Connect to the upstream `url` names (TCP only: no request, no model
/// call), so that one run cannot reach is said before the client starts
/// rather than in its retries.
fn check_upstream(url: &str, timeout: Duration, client: &LiveClient) -> Result<()> {
    use std::net::ToSocketAddrs;
    let upstream = crate::proxy::Upstream::parse(url).map_err(anyhow::Error::msg)?;
    let origin = upstream.origin();
    let unreachable = |why: String| {
        hinted(
            format!(
                "compactor run cannot reach the upstream {origin}: {why}; {} was not started",
                client.title
            ),
            "check --upstream (is the server running, and listening there?)",
        )
    };
    let addrs: Vec<std::net::SocketAddr> = (upstream.host(), upstream.port())
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("cannot resolve {}: {e}", upstream.host())))?
        .collect();
    let mut last = None;
    for a in &addrs {
        match std::net::TcpStream::connect_timeout(a, timeout) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(unreachable(match last {
        Some(e) if e.kind() == std::io::ErrorKind::TimedOut => format!(
            "no answer to a connect within {} s (--connect-timeout)",
            timeout.as_secs()
        ),
        Some(e) => e.to_string(),
        None => format!("{} resolves to no address", upstream.host()),
    }))
}

/// The proxy `run` started: its process, where it listens, and how many
/// calls it reported.
struct Proxy {
    child: Child,
    /// The pipe the proxy stops at the end of (`--stop-when-stdin-closes`).
    stdin: Option<std::process::ChildStdin>,
    /// The threads copying its output: joined once it has stopped, so that
    /// its last lines reach the log and the terminal before run ends.
    copying: Vec<std::thread::JoinHandle<()>>,
    url: String,
    /// Its stderr after the first line, until the log takes over.
    stderr: Option<BufReader<std::process::ChildStderr>>,
    calls: Arc<Mutex<usize>>,
}

impl Proxy {
    /// `compactor [--db PATH] proxy --listen 127.0.0.1:0 FLAGS`, in a process
    /// group of its own, read until it says where it listens.
    fn start(me: &SelfCommand, flags: &[String]) -> Result<Proxy> {
        let mut cmd = Command::new(&me.program);
        cmd.args(me.args(&[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--stop-when-stdin-closes",
        ]))
        .args(flags)
        // A pipe only run holds (close-on-exec: the client does not): it
        // closes when run ends, however it ends, and the proxy stops.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        #[cfg(target_os = "linux")]
        {
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: between fork and exec only async-signal-safe calls:
            // prctl(2) and getppid(2).
            unsafe {
                cmd.pre_exec(move || {
                    // The kernel sends the Ctrl-C the proxy stops at when the
                    // thread that started it (run's main thread) ends.
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // run died before the line above: the proxy never starts.
                    if libc::getppid() != parent {
                        return Err(std::io::Error::other("compactor run has ended"));
                    }
                    Ok(())
                });
            }
        }
        let mut child = cmd.spawn().context("cannot start compactor proxy")?;
        let mut err = BufReader::new(child.stderr.take().expect("piped"));
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut first = String::new();
            let read = err.read_line(&mut first);
            let _ = tx.send(());
            (read.map(|_| first), err)
        });
        let started = rx.recv_timeout(PROXY_START).is_ok();
        if !started {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "compactor proxy did not say where it listens within {} s",
                PROXY_START.as_secs()
            );
        }
        let (first, err) = reader
            .join()
            .map_err(|_| anyhow!("the proxy's reader failed"))?;
        let first = first.context("cannot read the proxy's output")?;
        let Some(url) = first
            .trim_end()
            .strip_prefix("listening on ")
            .filter(|u| u.starts_with("http://"))
            .map(str::to_string)
        else {
            // It stopped at once (a bad flag, a store it cannot open): its
            // own words say why.
            let mut rest = String::new();
            let mut err = err;
            let _ = err.read_to_string(&mut rest);
            let status = child.wait().ok();
            bail!(
                "compactor proxy did not start{}:\n{}{}",
                status
                    .and_then(|s| s.code())
                    .map(|c| format!(" (exit status {c})"))
                    .unwrap_or_default(),
                first,
                rest.trim_end()
            );
        };
        Ok(Proxy {
            stdin: child.stdin.take(),
            copying: Vec::new(),
            child,
            url,
            stderr: Some(err),
            calls: Arc::new(Mutex::new(0)),
        })
    }

    /// Copy the proxy's stdout (a line per call) and stderr into `path`,
    /// appended to, while it runs; with `show`, each distinct upstream
    /// error among its notes on the terminal too, once.
    fn log_to(&mut self, path: &PathBuf, show: bool) -> Result<()> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let file = Arc::new(Mutex::new(file));
        let out = self.child.stdout.take().expect("piped");
        let (f, calls) = (Arc::clone(&file), Arc::clone(&self.calls));
        self.copying.push(std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                *calls.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                let _ = writeln!(f.lock().unwrap_or_else(|p| p.into_inner()), "{line}");
            }
        }));
        if let Some(err) = self.stderr.take() {
            let f = Arc::clone(&file);
            self.copying.push(std::thread::spawn(move || {
                let mut shown: Vec<String> = Vec::new();
                for line in err.lines().map_while(Result::ok) {
                    let _ = writeln!(f.lock().unwrap_or_else(|p| p.into_inner()), "{line}");
                    if show
                        && let Some(e) = upstream_error(&line)
                        && !shown.iter().any(|s| s == e)
                    {
                        eprintln!("compactor: {e} (in {} too)", RUN_LOG);
                        shown.push(e.to_string());
                    }
                }
            }));
        }
        Ok(())
    }

    /// Stop the proxy as Ctrl-C stops it, and wait for it; kill it if it
    /// has not stopped in time.
    fn stop(&mut self) {
        self.stdin.take();
        self.end();
        // Its output closed with it: the copies end.
        for t in self.copying.drain(..) {
            let _ = t.join();
        }
    }

    fn end(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        // SAFETY: kill(2) with the pid of our child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        let start = Instant::now();
        while start.elapsed() < PROXY_STOP {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The upstream error a line of the proxy's stderr reports, if it is one:
/// the upstream out of reach, or its answer cut off.
fn upstream_error(line: &str) -> Option<&str> {
    let note = line.strip_prefix("note: ")?;
    (note.starts_with("compactor proxy cannot reach the upstream")
        || note.starts_with("the upstream's answer broke off"))
    .then_some(note)
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_flags_are_checked_before_anything_starts() {
        let a = check_proxy_flags(&["--window".into(), "40000".into()]).unwrap();
        assert_eq!(a.upstream, None);
        assert!(check_proxy_flags(&["--upstream".into(), "http://127.0.0.1:9".into()]).is_ok());
        let e = check_proxy_flags(&["--listen".into(), "0.0.0.0:1".into()]).unwrap_err();
        assert!(e.to_string().contains("--listen is run's to choose"), "{e}");
        let e = check_proxy_flags(&["-p".into(), "hi".into()]).unwrap_err();
        assert!(e.to_string().contains("do not parse"), "{e}");
    }

    #[test]
    fn upstream_errors_are_picked_from_the_proxys_notes() {
        assert_eq!(
            upstream_error(
                "note: compactor proxy cannot reach the upstream http://127.0.0.1:9: connect refused"
            ),
            Some("compactor proxy cannot reach the upstream http://127.0.0.1:9: connect refused")
        );
        assert!(upstream_error("note: the upstream's answer broke off: reset").is_some());
        assert_eq!(upstream_error("listening on http://127.0.0.1:3"), None);
        assert_eq!(upstream_error("note: accept failed: too many files"), None);
    }

    #[test]
    fn a_signal_ends_as_a_shell_reports_it() {
        assert_eq!(exit_status(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_status(ExitStatus::from_raw(libc::SIGTERM)), 143);
    }
}
