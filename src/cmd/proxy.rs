//! `compactor proxy`: the engine live, between a client and its API.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use clap::Args;

use super::Ui;
use super::args::BudgetArgs;
use super::defaults::{budget_for, precheck};
use super::errors::hinted;
use super::summarizer::summarizer_of;
use crate::cmd::exit::Outcome;
use crate::engine::Tier;
use crate::proxy::{
    self, ForwardedCall, ProxyEvent, ProxyLimits, ProxySettings, ServeOptions, SummarizerChoice,
    Upstream,
};
use crate::store::{DbLocation, Store};
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  compactor proxy                         then: ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude
  compactor proxy --listen 127.0.0.1:0 --json --window 200000
  compactor replay --task live-3f2a --verify-forwarded   audit a live session afterwards")]
pub struct ProxyArgs {
    /// Where to listen (port 0: a free one). Loopback only, unless --allow-remote.
    #[arg(long, default_value = "127.0.0.1:8787", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,

    /// Listen on an address other machines can reach, and answer requests
    /// addressed to any host name (a warning is printed).
    #[arg(long)]
    pub allow_remote: bool,

    /// Where to forward every request: https://HOST[:PORT][/PREFIX] (plain http
    /// only to loopback). Default: the official endpoint of the API each
    /// request speaks (api.anthropic.com for Messages, api.openai.com for
    /// Responses and Chat Completions).
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// One JSON line per call (`compactor.proxy_call/1`) instead of the human line.
    #[arg(long)]
    pub json: bool,

    /// Refuse a request body over this many MiB with 413 (a declared length
    /// at once, before reading it). The default is above the providers' own limits.
    #[arg(long, value_name = "MB", default_value_t = proxy::DEFAULT_MAX_BODY_MB,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_body_mb: u64,

    /// Seconds to connect to the upstream (TCP and TLS).
    #[arg(long, value_name = "SECS", default_value_t = proxy::DEFAULT_CONNECT_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub connect_timeout: u64,

    /// Seconds from a request sent to its answer's headers (a whole, not
    /// streamed, answer's come once it is generated).
    #[arg(long, value_name = "SECS", default_value_t = proxy::DEFAULT_FIRST_BYTE_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub first_byte_timeout: u64,

    /// Seconds an answer may go without sending anything (between two stream
    /// events) before the proxy gives up on it.
    #[arg(long, value_name = "SECS", default_value_t = proxy::DEFAULT_IDLE_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout: u64,

    /// Conversations whose state is kept in memory; the least recently used
    /// beyond it is rebuilt from the store when it returns.
    #[arg(long, value_name = "N", default_value_t = proxy::DEFAULT_MAX_CONVERSATIONS,
          value_parser = clap::value_parser!(usize))]
    pub max_conversations: usize,

    /// Seconds without a call after which a conversation's state leaves memory.
    #[arg(long, value_name = "SECS", default_value_t = proxy::DEFAULT_CONVERSATION_IDLE_S,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub conversation_idle: u64,

    /// Stop (as Ctrl-C stops it) when stdin ends: for a supervisor that
    /// holds a pipe to it, so the proxy goes when the supervisor does, even
    /// killed (`compactor run` starts it so).
    #[arg(long)]
    pub stop_when_stdin_closes: bool,
}

/// With `--stop-when-stdin-closes`: a thread that reads stdin to its end,
/// then stops the proxy by the Ctrl-C it takes as "stop".
fn stop_when_stdin_closes() {
    std::thread::spawn(|| {
        let mut sink = [0u8; 512];
        let mut stdin = std::io::stdin().lock();
        while matches!(std::io::Read::read(&mut stdin, &mut sink), Ok(n) if n > 0) {}
        // SAFETY: raise(3) sends a signal to this process; its SIGINT
        // handler (the serve loop's Ctrl-C) stops the proxy, and before it
        // is installed the default action ends the process.
        unsafe { libc::raise(libc::SIGINT) };
    });
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &ProxyArgs) -> Result<Outcome> {
    precheck(&args.budget)?;
    // The window and reserve stand in for a conversation whose model is unknown.
    let budget = budget_for(&args.budget, None)?.budget;
    let summarizer = match summarizer_of(&args.budget, store)?.get().name().as_str() {
        "extractive" => SummarizerChoice::Extractive,
        "static" => SummarizerChoice::Static,
        other => {
            return Err(hinted(
                format!("compactor proxy runs the extractive or static summarizer, not {other}"),
                "pass --summarizer extractive (the default) or --summarizer static",
            ));
        }
    };
    let db = store.location().clone();
    if db == DbLocation::Memory {
        return Err(hinted(
            "compactor proxy records every call in a store file, and --db :memory: is none",
            "pass --db PATH, or leave --db out for the default store",
        ));
    }
    let upstream = match &args.upstream {
        Some(u) => Some(Upstream::parse(u).map_err(anyhow::Error::msg)?),
        None => None,
    };
    if !args.listen.ip().is_loopback() && !args.allow_remote {
        return Err(hinted(
            format!("--listen {} is not a loopback address", args.listen),
            "the proxy forwards your clients' API keys: pass --allow-remote to listen where other machines can reach it",
        ));
    }
    if args.allow_remote {
        ui.warn(format!(
            "--allow-remote: {} answers requests from other machines and forwards them with the keys they carry",
            args.listen
        ));
    }
    let settings = ProxySettings {
        budget,
        window: args.budget.window,
        output_reserved: args.budget.output_reserved,
        summarizer,
        db,
    };
    let opts = ServeOptions {
        listen: args.listen,
        allow_remote: args.allow_remote,
        upstream,
        limits: ProxyLimits {
            max_body: args.max_body_mb << 20,
            connect_timeout: Duration::from_secs(args.connect_timeout),
            first_byte_timeout: Duration::from_secs(args.first_byte_timeout),
            idle_timeout: Duration::from_secs(args.idle_timeout),
            max_conversations: args.max_conversations.max(1),
            conversation_idle: Duration::from_secs(args.conversation_idle),
            ..ProxyLimits::default()
        },
    };
    let json = args.json;
    let quiet = ui.quiet;
    let out = Arc::new(Mutex::new(()));
    let events = Arc::new(move |e: ProxyEvent| {
        let _guard = out.lock();
        match e {
            ProxyEvent::Listening(addr) => {
                eprintln!("listening on http://{addr}");
                if !quiet {
                    for (client, how) in crate::launch::pointing_by_hand(&format!("http://{addr}"))
                    {
                        eprintln!("  {client}: {how}");
                    }
                    eprintln!("  Ctrl-C stops; every call is recorded as it happens.");
                }
            }
            ProxyEvent::Call(report) => {
                let mut stdout = std::io::stdout().lock();
                let line = if json {
                    super::with_schema("proxy_call", &report)
                        .and_then(|v| Ok(serde_json::to_string(&v)?))
                        .unwrap_or_default()
                } else {
                    super::visible::visible_line(&human(&report)).into_owned()
                };
                let _ = writeln!(stdout, "{line}");
                let _ = stdout.flush();
            }
            ProxyEvent::Note(n) => {
                if !quiet {
                    eprintln!("note: {}", super::visible::visible(&n));
                }
            }
        }
    });
    if args.stop_when_stdin_closes {
        stop_when_stdin_closes();
    }
    crate::proxy::serve(settings, opts, events)
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    if !quiet {
        eprintln!("stopped");
    }
    Ok(Outcome::Ok)
}

/// The short id of a live task (its first 13 characters: `live-` and 8 hex digits).
fn short(task: &str) -> &str {
    &task[..task.len().min(13)]
}

/// A call as one line: task, call, tokens before → after, tiers fired,
/// the upstream's status and what was recorded.
fn human(r: &ForwardedCall) -> String {
    let tiers = if r.tiers_fired.is_empty() {
        "no tier".to_string()
    } else {
        Tier::list(&r.tiers_fired)
    };
    let status = r
        .upstream_status
        .map_or("no answer".to_string(), |s| s.to_string());
    let mut line = format!(
        "{} call {} · {} → {} tokens (trigger {}) · {} · {} · {} {}",
        short(&r.task),
        r.call,
        r.tokens_before,
        r.tokens_after,
        r.trigger,
        tiers,
        r.status.name(),
        status,
        r.outcome
    );
    if let (Some(parent), Some(reason)) = (&r.started_from, &r.reason) {
        line.push_str(&format!(" · new task from {}: {reason}", short(parent)));
    }
    if let Some(a) = r.supersedes {
        line.push_str(&format!(
            " · a retry: the recorded answer to attempt {a} superseded"
        ));
    }
    line
}
