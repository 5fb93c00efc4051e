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

pub mod recall;
mod stdio;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::schemars::JsonSchema;
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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    runtime.block_on(async move {
        // Every line answered: one that is not JSON too (see `stdio`).
        let (transport, pumps) = stdio::transport(tokio::io::stdin(), tokio::io::stdout());
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

const SEARCH_HISTORY: &str = "Search this session's whole recorded history, including \
everything the client's own compaction (/compact, auto-compact) dropped from your \
context: the user's requests and rules, your earlier messages, and tool inputs and \
outputs. Call it when you need something you no longer see (an instruction or \
constraint the user gave earlier, a file path, an error message, a decision) before \
guessing or asking the user again. `query`: words that must all appear in one line \
(case-insensitive). Returns the matching lines, newest first, each with the model call \
it belongs to and where it came from (user, assistant, a tool's input or output); a \
tool's line names the view_tool_call id that returns the whole call. `limit`: how many \
lines (default 20, at most 200).";

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
    /// Words that must all appear in a line, in any case: `migrations never`.
    pub query: String,
    /// The most matching lines to return, newest first. Default 20, at most 200.
    #[serde(default)]
    pub limit: Option<u64>,
}

/// The server: where the store is, the task it was started for, and the
/// store once opened.
#[derive(Clone)]
pub struct Recall {
    location: DbLocation,
    task: Option<String>,
    store: Arc<Mutex<Option<Store>>>,
    /// The tool call whose pages a client is reading.
    pages: Arc<Mutex<recall::CallPages>>,
    tool_router: ToolRouter<Self>,
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
        self.with_store(|store| {
            let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
            recall::view_tool_call(
                store,
                &mut pages,
                session.as_ref(),
                &a.id,
                a.offset.map_or(0, as_usize),
                a.limit.map(as_usize),
            )
        })
        .map_err(for_model)
    }

    #[tool(description = SEARCH_HISTORY)]
    async fn search_history(
        &self,
        Parameters(a): Parameters<SearchHistoryArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<String, String> {
        let session = self.session(&peer).await.map_err(for_model)?;
        self.with_store(|store| {
            recall::search_history(store, &session, &a.query, a.limit.map(as_usize))
        })
        .map_err(for_model)
    }

    #[tool(description = TASK_CONTEXT)]
    async fn task_context(&self, peer: Peer<RoleServer>) -> Result<String, String> {
        let session = self.session(&peer).await.map_err(for_model)?;
        self.with_store(|store| recall::task_context(store, &session))
            .map_err(for_model)
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
