//! `compactor proxy`: the compaction engine at every model call of a live
//! client. It listens on loopback between the client and its API; at each
//! `POST /v1/messages` (Claude Code) and `POST /v1/responses` (Codex) it
//! finds the conversation, records what the request adds before forwarding
//! it, runs the engine's step over the record, forwards the request with
//! only `messages` / `input` replaced by the view, streams the answer back
//! as it arrives while assembling it, and records the answer and its usage,
//! which anchors the next call. Everything else passes through.
//!
//! What the pinned clients send (measured against a loopback stub; the
//! API-specific parts are in [`messages`] and [`responses`]):
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
mod convo;
mod engine;
mod messages;
mod record;
mod render;
mod request;
mod responses;
mod run;
mod server;
mod sse;
pub mod verify;

use std::net::SocketAddr;

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
}

/// An upstream: its origin (and a path prefix, if any) to which a
/// request's own path is appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    base: String,
}

impl Upstream {
    pub fn anthropic() -> Upstream {
        Upstream {
            base: "https://api.anthropic.com".into(),
        }
    }

    pub fn openai() -> Upstream {
        Upstream {
            base: "https://api.openai.com".into(),
        }
    }

    /// `https://HOST[:PORT][/PREFIX]`, or plain `http` to a loopback host.
    pub fn parse(url: &str) -> Result<Upstream, String> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("{url:?} is not a URL; expected https://HOST[:PORT]"))?;
        let authority = rest.split('/').next().unwrap_or("");
        if authority.is_empty() {
            return Err(format!(
                "{url:?} names no host; expected https://HOST[:PORT]"
            ));
        }
        if rest.contains(['?', '#']) {
            return Err(format!(
                "{url:?} has a query or fragment; expected https://HOST[:PORT][/PREFIX]"
            ));
        }
        let host = match authority.strip_prefix('[') {
            Some(r) => r.split(']').next().unwrap_or(""),
            None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
        };
        match scheme {
            "https" => {}
            "http" if is_loopback(host) => {}
            "http" => {
                return Err(format!(
                    "{url:?}: plain http is allowed only to a loopback upstream (localhost, 127.0.0.1, ::1); use https"
                ));
            }
            other => {
                return Err(format!(
                    "{url:?}: the scheme {other:?} is not http or https"
                ));
            }
        }
        Ok(Upstream {
            base: url.trim_end_matches('/').to_string(),
        })
    }

    /// The upstream URL of a request's path and query.
    pub(crate) fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base)
    }
}

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
    Call(ForwardedCall),
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
