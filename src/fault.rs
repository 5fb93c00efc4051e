//! Hidden fault injection for crash tests (not part of the user interface).
//!
//! `COMPACTOR_FAULT=abort-after-call:N` makes the process call
//! [`std::process::abort`] right after it commits call N of a run that
//! records its progress in the store (an in-place `replay`, `compact`, and
//! the child replay of `check`). `COMPACTOR_FAULT=abort-after-line:N` aborts
//! once the importer has read line N of its input (lines are counted across
//! every file one process imports, so a multi-file import can die in the
//! middle of any file). `compactor proxy` counts the requests it forwards
//! (across its conversations, 1 = the first): `abort-after-request:N` aborts
//! once the N-th is recorded, before it is forwarded;
//! `abort-mid-stream:N` once the first bytes of its answer have reached the
//! client, before the answer is recorded; `abort-after-response:N` right
//! after its answer is recorded. `COMPACTOR_FAULT=stall-in-hook` makes a
//! `compactor hook` run block for good once it has started, so a test can
//! see the hook's own deadline end it. `COMPACTOR_FAULT=stall-in-search`
//! makes each `search_history` of `compactor mcp` wait, once it has started,
//! until it is stopped (its request cancelled, or the client gone), so a
//! test can see the server answer meanwhile and stop it; `COMPACTOR_FAULT=stall-in-run` makes
//! `compactor run` stop once its proxy is up, before it starts the client,
//! until a signal comes (as a run stuck at its start would), so a test can
//! signal it there. Abort is a crash: no destructor, no flush, no
//! rollback beyond what SQLite itself guarantees, which is the point.
//!
//! A value that does not parse is reported on stderr and ignored.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that arms a fault.
pub(crate) const ENV: &str = "COMPACTOR_FAULT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    AfterCall(u32),
    AfterLine(u64),
    StallInHook,
    StallInSearch,
    StallInRun,
    /// The proxy's points, at its N-th forwarded request.
    Proxy(ProxyPoint, u64),
}

/// Where in a forwarded request the proxy can be made to abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProxyPoint {
    /// The request is recorded, not forwarded yet.
    AfterRequest,
    /// The answer's first bytes reached the client; the answer is not recorded.
    MidStream,
    /// The answer is recorded.
    AfterResponse,
}

impl ProxyPoint {
    fn name(self) -> &'static str {
        match self {
            ProxyPoint::AfterRequest => "abort-after-request",
            ProxyPoint::MidStream => "abort-mid-stream",
            ProxyPoint::AfterResponse => "abort-after-response",
        }
    }
}

impl Fault {
    pub(crate) fn parse(s: &str) -> Option<Fault> {
        if s.trim() == "stall-in-hook" {
            return Some(Fault::StallInHook);
        }
        if s.trim() == "stall-in-search" {
            return Some(Fault::StallInSearch);
        }
        if s.trim() == "stall-in-run" {
            return Some(Fault::StallInRun);
        }
        let (kind, n) = s.trim().split_once(':')?;
        match kind {
            "abort-after-call" => n.parse().ok().filter(|n| *n > 0).map(Fault::AfterCall),
            "abort-after-line" => n.parse().ok().filter(|n| *n > 0).map(Fault::AfterLine),
            _ => {
                let point = [
                    ProxyPoint::AfterRequest,
                    ProxyPoint::MidStream,
                    ProxyPoint::AfterResponse,
                ]
                .into_iter()
                .find(|p| p.name() == kind)?;
                let n: u64 = n.parse().ok().filter(|n| *n > 0)?;
                Some(Fault::Proxy(point, n))
            }
        }
    }

    /// The value of [`ENV`] that arms this fault.
    pub(crate) fn env_value(&self) -> String {
        match self {
            Fault::AfterCall(n) => format!("abort-after-call:{n}"),
            Fault::AfterLine(n) => format!("abort-after-line:{n}"),
            Fault::StallInHook => "stall-in-hook".to_string(),
            Fault::StallInSearch => "stall-in-search".to_string(),
            Fault::StallInRun => "stall-in-run".to_string(),
            Fault::Proxy(p, n) => format!("{}:{n}", p.name()),
        }
    }
}

fn armed() -> Option<Fault> {
    static FAULT: OnceLock<Option<Fault>> = OnceLock::new();
    *FAULT.get_or_init(|| {
        let v = std::env::var(ENV).ok().filter(|v| !v.is_empty())?;
        let f = Fault::parse(&v);
        if f.is_none() {
            eprintln!(
                "warning: ignoring {ENV}={v:?}; expected abort-after-call:N, abort-after-line:N, abort-after-request:N, abort-mid-stream:N, abort-after-response:N, stall-in-hook, stall-in-search or stall-in-run"
            );
        }
        f
    })
}

/// Call after committing call `k` of a run that records progress.
pub(crate) fn after_call(k: u32) {
    if armed() == Some(Fault::AfterCall(k)) {
        std::process::abort();
    }
}

/// Call after reading each input line of an import.
pub(crate) fn after_line() {
    static LINES: AtomicU64 = AtomicU64::new(0);
    if let Some(Fault::AfterLine(n)) = armed()
        && LINES.fetch_add(1, Ordering::Relaxed) + 1 == n
    {
        std::process::abort();
    }
}

/// Whether a fault is armed at `point` of the proxy's `n`-th forwarded request.
pub(crate) fn armed_at(point: ProxyPoint, n: u64) -> bool {
    armed() == Some(Fault::Proxy(point, n))
}

/// Call at `point` of the proxy's `n`-th forwarded request.
pub(crate) fn proxy(point: ProxyPoint, n: u64) {
    if armed_at(point, n) {
        std::process::abort();
    }
}

/// Call where a hook run starts its work.
pub(crate) fn in_hook() {
    if armed() == Some(Fault::StallInHook) {
        loop {
            std::thread::park();
        }
    }
}

/// Call where a search of the MCP server starts its work: armed, it waits
/// until `stopped` is set.
pub(crate) fn in_search(stopped: &std::sync::atomic::AtomicBool) {
    if armed() == Some(Fault::StallInSearch) {
        while !stopped.load(Ordering::Relaxed) {
            std::thread::park_timeout(std::time::Duration::from_millis(20));
        }
    }
}

/// Whether `compactor run` is to stall once its proxy is up (see the
/// module's doc); the caller waits for a signal.
pub(crate) fn stall_in_run() -> bool {
    armed() == Some(Fault::StallInRun)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_two_faults_and_refuses_the_rest() {
        assert_eq!(
            Fault::parse("abort-after-call:3"),
            Some(Fault::AfterCall(3))
        );
        assert_eq!(
            Fault::parse("abort-after-line:120"),
            Some(Fault::AfterLine(120))
        );
        for bad in [
            "",
            "abort-after-call",
            "abort-after-call:0",
            "abort-after-call:-1",
            "abort-after-line:x",
            "crash:3",
        ] {
            assert_eq!(Fault::parse(bad), None, "{bad}");
        }
        assert_eq!(Fault::AfterCall(7).env_value(), "abort-after-call:7");
        assert_eq!(
            Fault::parse("abort-mid-stream:2"),
            Some(Fault::Proxy(ProxyPoint::MidStream, 2))
        );
        for p in [
            ProxyPoint::AfterRequest,
            ProxyPoint::MidStream,
            ProxyPoint::AfterResponse,
        ] {
            let f = Fault::Proxy(p, 4);
            assert_eq!(Fault::parse(&f.env_value()), Some(f));
        }
        assert_eq!(Fault::parse("abort-after-response:0"), None);
        assert_eq!(
            Fault::parse(&Fault::AfterLine(9).env_value()),
            Some(Fault::AfterLine(9))
        );
        assert_eq!(Fault::parse("stall-in-hook"), Some(Fault::StallInHook));
        assert_eq!(Fault::parse("stall-in-run"), Some(Fault::StallInRun));
        assert_eq!(
            Fault::parse(&Fault::StallInHook.env_value()),
            Some(Fault::StallInHook)
        );
        assert_eq!(
            Fault::parse(&Fault::StallInSearch.env_value()),
            Some(Fault::StallInSearch)
        );
    }
}
