//! `compactor proxy`: the compaction engine at every model call of a live
//! client. It listens on loopback between the client and its API; at each
//! `POST /v1/messages` (Claude Code), `POST /v1/responses` (Codex) and
//! `POST /v1/chat/completions` (OpenCode, any OpenAI-compatible client) it
//! finds the conversation, records what the request adds before forwarding
//! it, runs the engine's step over the record, forwards the request with
//! only `messages` / `input` replaced by the view, streams the answer back
//! as it arrives while assembling it, and records the answer and its usage,
//! which anchors the next call. Everything else passes through.
//!
//! What the pinned clients send (measured against a loopback stub; the
//! API-specific parts are in [`messages`], [`responses`] and [`chat`]):
//! - Every request carries the whole history; nothing refers to an earlier
//!   response (Codex sends no `previous_response_id` and `store: false`).
//! - Claude Code names its session in a header and in `metadata.user_id`;
//!   a subagent shares the session, with its own system prompt (a
//!   `cc_is_subagent` billing line) and tools, and its first ask is the
//!   prompt of the parent's `Agent` call. Without
//!   `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` it also sends `HEAD
//!   /api/hello`, passed through.
//! - Both accept compressed answers (`accept-encoding`); the proxy asks the
//!   upstream for identity, so that it can read what it passes on.
//!
//! The record of a conversation is its task (`live-…`), append-only, with
//! `proxy_conversation`, `proxy_call` and `proxy_response` beside it (see
//! `store::proxy`); `replay --verify-forwarded` derives every forwarded
//! view again from it.

mod body;
mod chat;
mod convo;
mod engine;
mod gemini;
mod messages;
mod pieces;
mod record;
mod render;
mod request;
mod responses;
mod run;
mod server;
mod sse;
mod upstream;
pub mod verify;

use std::net::SocketAddr;
use std::time::Duration;

pub use engine::ForwardedCall;
pub use server::serve;

use crate::engine::budget::Budget;
use crate::store::DbLocation;

/// How the proxy runs the engine.
#[derive(Debug, Clone)]
pub struct ProxySettings {
    /// The budget's ratios, protected steps and summary budget (its window
    /// and reserve stand in where `window` is not set and no model is known).
    pub budget: Budget,
    /// `--window`: every conversation's window; `None`: its model's.
    pub window: Option<u64>,
    /// `--output-reserved`; `None`: `min(20000, window / 8)`.
    pub output_reserved: Option<u64>,
    pub summarizer: SummarizerChoice,
    /// The store its conversations are recorded in.
    pub db: DbLocation,
}

impl ProxySettings {
    /// The budget of a conversation whose first request names `model`: the
    /// window given, else the model's (the built-in table), else 200000.
    pub(crate) fn budget_for(&self, model: Option<&str>) -> Budget {
        let window = self.window.unwrap_or_else(|| {
            crate::session::models::ModelTable::built_in()
                .window(model, None)
                .0
        });
        let output_reserved = self
            .output_reserved
            .unwrap_or_else(|| crate::engine::budget::default_output_reserved(window));
        let b = Budget {
            window,
            output_reserved,
            ..self.budget
        };
        // A model's window too small for the reserve given: the flags' own.
        if b.validate().is_ok() { b } else { self.budget }
    }
}

/// The summarizers the proxy runs (offline and deterministic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarizerChoice {
    Extractive,
    Static,
}

/// How the proxy listens and where it forwards.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// Requests addressed to names other than loopback ones are answered
    /// (`--allow-remote`).
    pub allow_remote: bool,
    /// Where every request goes; `None`: the official endpoint of the API
    /// each request speaks.
    pub upstream: Option<Upstream>,
    pub limits: ProxyLimits,
}

/// What the proxy holds and how long it waits: bounds that hold however
/// many conversations pass.
#[derive(Debug, Clone)]
pub struct ProxyLimits {
    /// A request body over this many bytes is refused with 413 (a declared
    /// length at once, before any of it is read).
    pub max_body: u64,
    /// The upstream's TCP connection and TLS handshake.
    pub connect_timeout: Duration,
    /// From a request sent to its answer's status and headers.
    pub first_byte_timeout: Duration,
    /// Between two pieces of an answer's body (a stream's events).
    pub idle_timeout: Duration,
    /// Conversations whose state is kept in memory (the least recently used
    /// beyond it is dropped, and rebuilt from the record if it returns).
    pub max_conversations: usize,
    /// A conversation with no call for this long is dropped from memory.
    pub conversation_idle: Duration,
    /// Threads that run the engine (each with two store connections).
    pub engine_threads: usize,
    /// A conversation whose request body is over this many bytes keeps no
    /// state in memory once its call is over.
    pub large_body: usize,
}

impl Default for ProxyLimits {
    fn default() -> ProxyLimits {
        ProxyLimits {
            max_body: DEFAULT_MAX_BODY_MB << 20,
            connect_timeout: Duration::from_secs(DEFAULT_CONNECT_TIMEOUT_S),
            first_byte_timeout: Duration::from_secs(DEFAULT_FIRST_BYTE_TIMEOUT_S),
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_TIMEOUT_S),
            max_conversations: DEFAULT_MAX_CONVERSATIONS,
            conversation_idle: Duration::from_secs(DEFAULT_CONVERSATION_IDLE_S),
            engine_threads: 2,
            large_body: 16 << 20,
        }
    }
}

/// `--max-body-mb`: above the providers' own request limits (Anthropic's
/// Messages API takes 32 MB, OpenAI's 50 MB of inline files).
pub const DEFAULT_MAX_BODY_MB: u64 = 256;
/// `--connect-timeout`.
pub const DEFAULT_CONNECT_TIMEOUT_S: u64 = 30;
/// `--first-byte-timeout`: a whole (not streamed) answer's headers come once
/// it is generated, and the providers' SDKs wait 10 minutes for one.
pub const DEFAULT_FIRST_BYTE_TIMEOUT_S: u64 = 900;
/// `--idle-timeout`: twice Codex's own stream idle timeout (300 s); a
/// healthy stream sends an event (a ping at least) every few seconds.
pub const DEFAULT_IDLE_TIMEOUT_S: u64 = 600;
/// `--max-conversations`.
pub const DEFAULT_MAX_CONVERSATIONS: usize = 64;
/// `--conversation-idle`.
pub const DEFAULT_CONVERSATION_IDLE_S: u64 = 600;

/// An upstream: its origin (and a path prefix, if any) to which a
/// request's own path is appended, and the credentials its URL carried.
#[derive(Clone, PartialEq, Eq)]
pub struct Upstream {
    tls: bool,
    /// The host (an IPv6 address without its brackets).
    host: String,
    port: u16,
    /// `HOST[:PORT]` as written, for the `Host` header and messages.
    authority: String,
    /// A path prefix, without a trailing slash.
    prefix: String,
    /// `user:password` from the URL, sent as Basic authorization.
    credentials: Option<String>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Upstream({})", self.url(""))
    }
}

impl Upstream {
    pub fn anthropic() -> Upstream {
        Upstream::parse("https://api.anthropic.com").expect("a valid URL")
    }

    pub fn openai() -> Upstream {
        Upstream::parse("https://api.openai.com").expect("a valid URL")
    }

    /// Google's Gemini API (`generativelanguage`).
    pub fn gemini() -> Upstream {
        Upstream::parse("https://generativelanguage.googleapis.com").expect("a valid URL")
    }

    /// `https://[USER:PASSWORD@]HOST[:PORT][/PREFIX]`, or plain `http` to a
    /// loopback host. An error never repeats the password.
    pub fn parse(url: &str) -> Result<Upstream, String> {
        let shown = redact_url(url);
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("{shown:?} is not a URL; expected https://HOST[:PORT]"))?;
        if rest.contains(['?', '#']) {
            return Err(format!(
                "{shown:?} has a query or fragment; expected https://HOST[:PORT][/PREFIX]"
            ));
        }
        let (authority, prefix) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let (credentials, authority) = match authority.rsplit_once('@') {
            Some((user, host)) => (Some(percent_decode(user)), host),
            None => (None, authority),
        };
        if authority.is_empty() {
            return Err(format!(
                "{shown:?} names no host; expected https://HOST[:PORT]"
            ));
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(r) => {
                let (h, after) = r
                    .split_once(']')
                    .ok_or_else(|| format!("{shown:?}: an IPv6 host without its closing ]"))?;
                (h, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        let tls = match scheme {
            "https" => true,
            "http" if is_loopback(host) => false,
            "http" => {
                return Err(format!(
                    "{shown:?}: plain http is allowed only to a loopback upstream (localhost, 127.0.0.1, ::1); use https"
                ));
            }
            other => {
                return Err(format!(
                    "{shown:?}: the scheme {other:?} is not http or https"
                ));
            }
        };
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| format!("{shown:?}: the port {p:?} is not a number up to 65535"))?,
            None if tls => 443,
            None => 80,
        };
        if host.is_empty() {
            return Err(format!(
                "{shown:?} names no host; expected https://HOST[:PORT]"
            ));
        }
        Ok(Upstream {
            tls,
            host: host.to_string(),
            port,
            authority: authority.to_string(),
            prefix: prefix.to_string(),
            credentials,
        })
    }

    /// `https://HOST[:PORT]`: never the credentials.
    pub(crate) fn origin(&self) -> String {
        format!(
            "{}://{}",
            if self.tls { "https" } else { "http" },
            self.authority
        )
    }

    /// The upstream URL of a request's path and query, as shown (never the
    /// credentials).
    pub(crate) fn url(&self, path_and_query: &str) -> String {
        format!("{}{}", self.origin(), self.target(path_and_query))
    }

    /// The request target sent upstream for a request's path and query: the
    /// path under the prefix. An OpenAI-compatible base URL is given with or
    /// without its version (`…/v1`, OpenRouter's `…/api/v1`): a prefix that
    /// ends in a version segment (`v1`, `v1beta`, `v4`) takes the path
    /// without its own leading `/v1`, and a Chat Completions path sent
    /// without `/v1` (a client whose base URL is the proxy's root) gains
    /// it under a prefix that names no version.
    pub(crate) fn target(&self, path_and_query: &str) -> String {
        let versioned = self.prefix.rsplit('/').next().is_some_and(|last| {
            last.len() > 1 && last.starts_with('v') && last.as_bytes()[1].is_ascii_digit()
        });
        let rest = path_and_query
            .strip_prefix("/v1")
            .filter(|r| r.is_empty() || r.starts_with(['/', '?']));
        match rest {
            Some(rest) if versioned => format!("{}{rest}", self.prefix),
            None if !versioned && path_and_query.starts_with("/chat/completions") => {
                format!("{}/v1{path_and_query}", self.prefix)
            }
            _ => format!("{}{path_and_query}", self.prefix),
        }
    }

    pub(crate) fn tls(&self) -> bool {
        self.tls
    }

    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The `Host` header.
    pub(crate) fn authority(&self) -> &str {
        &self.authority
    }

    /// `Basic …` for the URL's credentials, if it carried any.
    pub(crate) fn basic_authorization(&self) -> Option<String> {
        self.credentials
            .as_ref()
            .map(|c| format!("Basic {}", base64(c.as_bytes())))
    }
}

/// A URL with the credentials it may carry (`user:password@`) shown as
/// `***@`, for every message that repeats it.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// `%XX` escapes decoded (a URL's user information).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding.
fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// How the allocator is told to return freed memory to the system (the
/// binary's choice of allocator; none in a library test).
static RELEASE_MEMORY: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Set how the proxy returns freed memory after a large transfer.
pub fn release_memory_with(release: fn()) {
    let _ = RELEASE_MEMORY.set(release);
}

/// Asks to return freed memory: every thread does it once, when it next
/// goes idle (an allocator keeps each thread's freed memory until that
/// thread collects it).
static RELEASE_ASKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

thread_local! {
    static RELEASED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Return this thread's freed memory to the system, if the binary said how,
/// and ask every other thread to do the same when it next goes idle.
pub(crate) fn release_memory() {
    let asked = RELEASE_ASKED.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    RELEASED.with(|r| r.set(asked));
    if let Some(f) = RELEASE_MEMORY.get() {
        f();
    }
}

/// How many times returning freed memory was asked so far.
pub(crate) fn release_memory_asked() -> u64 {
    RELEASE_ASKED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Called by a thread going idle: return its freed memory if asked since
/// it last did.
pub(crate) fn release_memory_if_asked() {
    let asked = RELEASE_ASKED.load(std::sync::atomic::Ordering::SeqCst);
    if RELEASED.with(|r| r.replace(asked)) != asked
        && let Some(f) = RELEASE_MEMORY.get()
    {
        f();
    }
}

/// A request or answer this large is followed by returning freed memory.
pub(crate) const LARGE_TRANSFER: usize = 1 << 20;

/// Whether a host name is loopback.
pub fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// What the proxy tells its command as it runs.
#[derive(Debug, Clone)]
pub enum ProxyEvent {
    /// Listening on this address.
    Listening(SocketAddr),
    /// A forwarded call ended.
    Call(Box<ForwardedCall>),
    /// Something worth a line on stderr (never a header or a key).
    Note(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_is_https_or_loopback_http() {
        assert_eq!(
            Upstream::parse("https://api.anthropic.com/")
                .unwrap()
                .url("/v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            Upstream::parse("http://127.0.0.1:9/gw")
                .unwrap()
                .url("/v1/responses"),
            "http://127.0.0.1:9/gw/v1/responses"
        );
        assert!(Upstream::parse("http://[::1]:9").is_ok());
        let u = Upstream::parse("https://me:p%40ss@gw.example:8443/v").unwrap();
        assert_eq!(
            (u.host(), u.port(), u.authority()),
            ("gw.example", 8443, "gw.example:8443")
        );
        assert_eq!(
            u.url("/v1/messages"),
            "https://gw.example:8443/v/v1/messages"
        );
        assert_eq!(u.target("/v1/messages"), "/v/v1/messages");
        // An OpenAI-compatible base URL, with or without its version.
        for (base, path, want) in [
            (
                "https://openrouter.ai/api/v1",
                "/v1/chat/completions",
                "/api/v1/chat/completions",
            ),
            (
                "https://openrouter.ai/api",
                "/v1/chat/completions",
                "/api/v1/chat/completions",
            ),
            (
                "http://127.0.0.1:11434/v1",
                "/chat/completions",
                "/v1/chat/completions",
            ),
            (
                "http://127.0.0.1:11434",
                "/chat/completions",
                "/v1/chat/completions",
            ),
            (
                "http://127.0.0.1:11434/",
                "/v1/chat/completions",
                "/v1/chat/completions",
            ),
            (
                "https://api.z.ai/api/paas/v4",
                "/v1/chat/completions",
                "/api/paas/v4/chat/completions",
            ),
            ("https://gw.example/v1", "/v1/models?x=1", "/v1/models?x=1"),
            ("https://gw.example/v1", "/v1beta/x", "/v1/v1beta/x"),
        ] {
            assert_eq!(
                Upstream::parse(base).unwrap().target(path),
                want,
                "{base} {path}"
            );
        }
        assert_eq!(
            u.basic_authorization().as_deref(),
            Some("Basic bWU6cEBzcw==")
        );
        assert!(!format!("{u:?}").contains("p%40ss") && !format!("{u:?}").contains("p@ss"));
        assert_eq!(
            Upstream::parse("https://api.anthropic.com").unwrap().port(),
            443
        );
        assert_eq!(
            redact_url("https://u:secret@h:1/p?q"),
            "https://***@h:1/p?q"
        );
        let e = Upstream::parse("http://u:secret@example.com").unwrap_err();
        assert!(!e.contains("secret"), "{e}");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b"a"), "YQ==");
        for (bad, want) in [
            ("http://api.example.com", "only to a loopback"),
            ("ftp://x", "not http or https"),
            ("api.example.com", "not a URL"),
            ("https://", "no host"),
            ("https://h/x?y", "query or fragment"),
        ] {
            let e = Upstream::parse(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
