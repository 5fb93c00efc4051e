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
    ForwardedCall, ProxyEvent, ProxySettings, ServeOptions, SummarizerChoice, Upstream,
};
use crate::store::{DbLocation, Store};

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
    /// request speaks (api.anthropic.com for Messages, api.openai.com for Responses).
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,

    #[command(flatten)]
    pub budget: BudgetArgs,

    /// One JSON line per call (`compactor.proxy_call/1`) instead of the human line.
    #[arg(long)]
    pub json: bool,
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
                    eprintln!(
                        "  Claude Code: ANTHROPIC_BASE_URL=http://{addr} claude\n  Codex: a model provider with base_url = \"http://{addr}/v1\" and wire_api = \"responses\"\n  Ctrl-C stops; every call is recorded as it happens."
                    );
                }
            }
            ProxyEvent::Call(report) => {
                let mut stdout = std::io::stdout().lock();
                let line = if json {
                    super::with_schema("proxy_call", &report)
                        .and_then(|v| Ok(serde_json::to_string(&v)?))
                        .unwrap_or_default()
                } else {
                    human(&report)
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
    line
}
