//! `compactor mcp`: a Model Context Protocol server over stdio, named
//! `compactor`, through which a model takes back what compaction shrank or
//! dropped. Three tools, read from the store and never writing it:
//! `view_tool_call` (a recorded call in full: where a shrunk form's pointer
//! leads), `search_history` (the session's raw record, what the client's own
//! compaction dropped included) and `task_context` (the session's
//! `## Task Context`). The protocol is the official Rust SDK's (`rmcp`).
//!
//! The session: `--task`'s, else the most recently recorded task in the
//! client's working directory (the roots the client names, else the
//! directory it started the server in). The store is opened at the first
//! call that needs it, so a server started before anything was recorded
//! answers once something is.

pub mod inview;
pub mod recall;
mod stdio;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::schemars::JsonSchema;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde::Deserialize;

use super::Ui;
use super::db::open_store_to_read;
use super::exit::Outcome;
use crate::store::{DbLocation, Store};

#[derive(Debug, Args)]
#[command(after_help = "\
The server speaks MCP on stdin and stdout, for a client to start: Claude Code with
`claude mcp add compactor -- compactor mcp`, Codex with an [mcp_servers.compactor] table.

Examples:
  compactor mcp --task 7f3c                   serve one task (a client starts it)
  compactor hooks install claude-code         register it for every session, with the hooks
  compactor run codex                         register it for one run, with the proxy")]
pub struct McpArgs {
    /// The task `search_history` and `task_context` answer for (an id, a
    /// unique prefix or `latest`). Default: the most recently recorded task
    /// in the client's working directory, at each call.
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,
}

pub fn run(location: DbLocation, _ui: &mut Ui, args: &McpArgs) -> Result<Outcome> {
    let server = Recall::new(location, args.task.clone());
    let stdin = WatchedStdin {
        inner: tokio::io::stdin(),
        running: Arc::clone(&server.running),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    runtime.block_on(async move {
        // Every line answered: one that is not JSON too (see `stdio`).
        let (transport, pumps) = stdio::transport(stdin, tokio::io::stdout());
        let served = async {
            let service = server
                .serve(transport)
                .await
                .context("the MCP client did not complete the handshake")?;
            service
                .waiting()
                .await
                .context("the MCP connection failed")?;
            anyhow::Ok(())
        }
        .await;
        // rmcp is done: what it and the errors wrote goes out whole.
        pumps.finish().await;
        served
    })?;
    // A tool's work still running for a client that left is not waited for.
    runtime.shutdown_background();
    Ok(Outcome::Ok)
}

/// How long the server waits for the client to name its roots.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

const INSTRUCTIONS: &str = "compactor records this session and may shorten old tool \
outputs in your context. A shortened output ends in a pointer such as \
`[… 231 of 261 lines elided; view_tool_call(\"toolu_01A\") returns them]`: call \
view_tool_call with that id to read the lines that were cut rather than running the \
tool again. After the conversation was compacted, search_history finds what the \
summary left out, and task_context lists the user's requests and rules verbatim.";

const VIEW_TOOL_CALL: &str = "Read back, in full, an earlier tool call whose output was \
shortened or dropped from your context. Call it when a tool result you see carries a \
pointer like `[… 231 of 261 lines elided; view_tool_call(\"toolu_01A\") returns them]`, or \
when search_history names a call you need whole: pass that id (a unique prefix is \
enough). Prefer it to running the tool again: a command's output at that moment may be \
gone, and files change. Returns the call as recorded: a header line (tool name, id, \
turn, step), `input:` as JSON, then `output:` exactly as the tool returned it. A long \
call comes in pages of `limit` lines (default 500) from line `offset` (0-based); while \
lines remain, the answer ends with `next_offset: N`: call again with offset N for the \
rest.";

const SEARCH_HISTORY: &str = "Find what was said or done before your context was \
compacted: a ranked search (BM25) over this session's whole recorded history, including \
everything the client's own compaction (/compact, auto-compact) or compactor dropped \
from your context: the user's requests and rules, your earlier answers, tool inputs \
(commands, paths, patterns), tool outputs and errors, and summaries. Call it when you \
need something you no longer see (an instruction or constraint the user gave earlier, \
an error message and how it was fixed, a command that worked, a file's change, a \
decision) before guessing, running a tool again or asking the user again. `query`: \
plain words, as you would type them; a hit need not hold every word, word forms match \
(`migration` finds `migrations`) and identifiers split (`tenant registry` finds \
`tenant_registry`); \"a phrase\", NEAR(a b, 5) and prefix* work too. `scope`: \
\"session\" (default) or \"project\" (every recorded session of this project). `kind`: \
only ask, answer, tool, error or summary hits. Returns the best hits first, each with \
its call, a snippet (matched words in «»), and the id view_tool_call takes to return it \
whole; hits already in your context are marked and come last. Pages as view_tool_call \
does: `limit` hits (default 10, at most 50) from `offset`; while hits remain, the answer \
ends with `next_offset: N`.";

const TASK_CONTEXT: &str = "Get this session's `## Task Context` as compactor derives \
it from the whole recorded history (not from your possibly compacted context): every \
request the user made and every constraint they set, verbatim, then files written, \
errors, decisions and the latest state. Call it after the conversation was compacted, \
or whenever you are unsure what the user asked for or ruled out. Takes no arguments.";

/// `view_tool_call`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ViewToolCallArgs {
    /// The tool call's id, as the pointer names it (`toolu_01A…`, `call_…`); a unique prefix is enough.
    pub id: String,
    /// The first line to return, 0-based (the `next_offset` of the page before). Default 0.
    #[serde(default)]
    pub offset: Option<u64>,
    /// The most lines to return. Default 500.
    #[serde(default)]
    pub limit: Option<u64>,
}

/// `search_history`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchHistoryArgs {
    /// What to find, in plain words (`tenant registry rule`), or FTS5 syntax (`"a phrase"`, `NEAR(a b, 5)`, `prefix*`). At most 1000 characters; the first 24 distinct words count.
    pub query: String,
    /// `session` (default): this session's tasks; `project`: every recorded session of this project.
    #[serde(default)]
    pub scope: Option<SearchScope>,
    /// Only hits of this kind.
    #[serde(default)]
    pub kind: Option<SearchKind>,
    /// The first hit to return, 0-based (the `next_offset` of the page before). Default 0.
    #[serde(default)]
    pub offset: Option<u64>,
    /// The most hits to return. Default 10, at most 50.
    #[serde(default)]
    pub limit: Option<u64>,
}

/// Where `search_history` looks.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(rename_all = "lowercase")]
pub enum SearchScope {
    Session,
    Project,
}

/// What kind of hit `search_history` keeps.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    /// What the user asked.
    Ask,
    /// What the assistant wrote.
    Answer,
    /// A tool call's input or output.
    Tool,
    /// A tool's error.
    Error,
    /// A summary of compacted history.
    Summary,
}

impl SearchKind {
    fn column(self) -> crate::store::search::Column {
        use crate::store::search::Column;
        match self {
            SearchKind::Ask => Column::Ask,
            SearchKind::Answer => Column::Answer,
            SearchKind::Tool => Column::Tool,
            SearchKind::Error => Column::Error,
            SearchKind::Summary => Column::Summary,
        }
    }
}

/// The last `InView` the server read, and the state it was read from.
type InViewRead = (inview::Key, Arc<inview::InView>);

/// The server: where the store is, the task it was started for, and the
/// store once opened.
#[derive(Clone)]
pub struct Recall {
    location: DbLocation,
    task: Option<String>,
    store: Arc<Mutex<Option<Store>>>,
    /// The tool call whose pages a client is reading.
    pages: Arc<Mutex<recall::CallPages>>,
    /// What the model holds of the session's current task, as last read.
    in_view: Arc<Mutex<Option<InViewRead>>>,
    /// The searches running, stopped when the client leaves.
    running: Arc<Running>,
    tool_router: ToolRouter<Self>,
}

/// A search running on a thread of its own, and how to stop it.
#[derive(Default)]
pub struct Stop {
    flag: AtomicBool,
    handle: Mutex<Option<rusqlite::InterruptHandle>>,
}

impl Stop {
    fn stop(&self) {
        self.flag.store(true, Ordering::Relaxed);
        if let Some(h) = self
            .handle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            h.interrupt();
        }
    }
}

/// The searches running, and whether the client has left (its stdin closed).
#[derive(Default)]
pub struct Running {
    gone: AtomicBool,
    searches: Mutex<Vec<std::sync::Weak<Stop>>>,
}

impl Running {
    /// Track a search; `None` when the client has left already.
    fn start(&self) -> Option<Arc<Stop>> {
        if self.gone.load(Ordering::Relaxed) {
            return None;
        }
        let stop = Arc::new(Stop::default());
        let mut all = self.searches.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&stop));
        Some(stop)
    }

    /// Why a search was stopped.
    fn why_stopped(&self) -> &'static str {
        if self.gone.load(Ordering::Relaxed) {
            "the search was stopped: the client left"
        } else {
            "the search was stopped: its request was cancelled"
        }
    }

    /// The client left: stop every search.
    fn client_gone(&self) {
        self.gone.store(true, Ordering::Relaxed);
        for w in self
            .searches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            if let Some(s) = w.upgrade() {
                s.stop();
            }
        }
    }
}

/// The server's stdin, telling `running` when it ends (the client left):
/// a search under way stops then, rather than run on for nobody.
struct WatchedStdin {
    inner: tokio::io::Stdin,
    running: Arc<Running>,
}

impl tokio::io::AsyncRead for WatchedStdin {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            std::task::Poll::Ready(Ok(())) if buf.filled().len() == before => {
                self.running.client_gone()
            }
            std::task::Poll::Ready(Err(_)) => self.running.client_gone(),
            _ => {}
        }
        polled
    }
}

/// A u64 argument as a usize (saturating: a huge offset is past any end).
fn as_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// An error as the one paragraph a model reads (with the hint, if any).
fn for_model(e: anyhow::Error) -> String {
    let mut text = format!("{e:#}");
    if let Some(h) = super::errors::hint_of(&e) {
        text.push_str(&format!(" ({h})"));
    }
    text
}

#[tool_router]
impl Recall {
    pub fn new(location: DbLocation, task: Option<String>) -> Recall {
        Recall {
            location,
            task,
            store: Arc::new(Mutex::new(None)),
            pages: Arc::default(),
            in_view: Arc::new(Mutex::new(None)),
            running: Arc::new(Running::default()),
            tool_router: Self::tool_router(),
        }
    }

    /// Run `f` on the store, opening it first if this is the first call.
    fn with_store<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        let mut guard = self.store.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(open_store_to_read(&self.location)?);
        }
        f(guard.as_ref().expect("just opened"))
    }

    /// The directories the client works in: the roots it names, else the
    /// directory it started the server in. (MCP deprecates roots for its
    /// next revision; the clients of today still name them.)
    #[allow(deprecated)]
    async fn client_dirs(&self, peer: &Peer<RoleServer>) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        let names_roots = peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if self.task.is_none() && names_roots {
            let listed = tokio::time::timeout(ROOTS_WAIT, peer.list_roots()).await;
            if let Ok(Ok(list)) = listed {
                dirs.extend(
                    list.roots
                        .iter()
                        .filter_map(|r| r.uri.strip_prefix("file://"))
                        .map(|p| PathBuf::from(percent_decoded(p))),
                );
            }
        }
        if let Ok(cwd) = std::env::current_dir() {
            dirs.push(cwd);
        }
        dirs
    }

    /// What the model holds of `task`, read again when the task's rows or
    /// compaction state changed since the last search.
    fn in_view_of(&self, store: &Store, task: &str) -> Result<Arc<inview::InView>> {
        let key = inview::key(store, task)?;
        let mut cached = self.in_view.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((k, v)) = cached.as_ref()
            && *k == key
        {
            return Ok(Arc::clone(v));
        }
        let v = Arc::new(inview::read(store, task)?);
        *cached = Some((key, Arc::clone(&v)));
        Ok(v)
    }

    async fn session(&self, peer: &Peer<RoleServer>) -> Result<recall::Session> {
        let dirs = self.client_dirs(peer).await;
        let dirs: Vec<&std::path::Path> = dirs.iter().map(PathBuf::as_path).collect();
        self.with_store(|store| recall::session(store, self.task.as_deref(), &dirs))
    }

    #[tool(description = VIEW_TOOL_CALL)]
    async fn view_tool_call(
        &self,
        Parameters(a): Parameters<ViewToolCallArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<String, String> {
        // The session only orders the search: ids are unique across sessions.
        let session = self.session(&peer).await.ok();
        self.blocking(move |server| {
            server.with_store(|store| {
                let mut pages = server.pages.lock().unwrap_or_else(|p| p.into_inner());
                recall::view_tool_call(
                    store,
                    &mut pages,
                    session.as_ref(),
                    &a.id,
                    a.offset.map_or(0, as_usize),
                    a.limit.map(as_usize),
                )
            })
        })
        .await
    }

    #[tool(description = SEARCH_HISTORY)]
    async fn search_history(
        &self,
        Parameters(a): Parameters<SearchHistoryArgs>,
        peer: Peer<RoleServer>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<String, String> {
        let session = self.session(&peer).await.map_err(for_model)?;
        let Some(stop) = self.running.start() else {
            return Err("the search was stopped: the client left".to_string());
        };
        let server = self.clone();
        let job_stop = Arc::clone(&stop);
        // On a thread of its own, with a connection of its own: the server
        // answers other requests meanwhile, and a search the client gave
        // up (its request cancelled, its stdin closed) is stopped.
        let job = tokio::task::spawn_blocking(move || -> Result<String> {
            let store = open_store_to_read(&server.location)?;
            *job_stop.handle.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(store.interrupt_handle());
            crate::fault::in_search(&job_stop.flag);
            if job_stop.flag.load(Ordering::Relaxed) {
                anyhow::bail!("{}", server.running.why_stopped());
            }
            let in_view = server.in_view_of(&store, &session.current)?;
            let found = recall::search_history(
                &store,
                &session,
                &recall::SearchOptions {
                    query: &a.query,
                    scope: match a.scope {
                        Some(SearchScope::Project) => recall::Scope::Project,
                        _ => recall::Scope::Session,
                    },
                    kind: a.kind.map(SearchKind::column),
                    offset: a.offset.map_or(0, as_usize),
                    limit: a.limit.map(as_usize),
                    cancel: Some(&job_stop.flag),
                    in_view: Some(&in_view),
                },
            );
            if job_stop.flag.load(Ordering::Relaxed) {
                anyhow::bail!("{}", server.running.why_stopped());
            }
            found
        });
        tokio::select! {
            done = job => done.map_err(|e| format!("the search failed: {e}"))?.map_err(for_model),
            _ = ctx.ct.cancelled() => {
                stop.stop();
                Err(self.running.why_stopped().to_string())
            }
        }
    }

    #[tool(description = TASK_CONTEXT)]
    async fn task_context(&self, peer: Peer<RoleServer>) -> Result<String, String> {
        let session = self.session(&peer).await.map_err(for_model)?;
        self.blocking(move |server| {
            server.with_store(|store| recall::task_context(store, &session))
        })
        .await
    }

    /// Run `f` on a thread of the blocking pool, so that the server answers
    /// other requests (a ping, another tool call) while it runs.
    async fn blocking(
        &self,
        f: impl FnOnce(&Recall) -> Result<String> + Send + 'static,
    ) -> Result<String, String> {
        let server = self.clone();
        match tokio::task::spawn_blocking(move || f(&server)).await {
            Ok(answer) => answer.map_err(for_model),
            Err(e) => Err(format!("the tool failed: {e}")),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Recall {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("compactor", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// A `file://` URI's path with its `%XX` escapes decoded.
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_uri_is_decoded() {
        assert_eq!(percent_decoded("/home/me/my%20repo"), "/home/me/my repo");
        assert_eq!(percent_decoded("/a%2"), "/a%2");
    }
}
