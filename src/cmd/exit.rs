//! Exit statuses, in one place.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success; also a closed output pipe (`compactor tasks \| head`), and a long-running command (`watch`, `proxy`) stopped by Ctrl-C, its usual end: it finishes the write under way, prints `stopped` on stderr and exits 0 (a second Ctrl-C ends it at once, status 130) |
//! | 1 | ran fine but the answer is "no": views differ (`diff`), a fixture drifted (`check`), the view cannot fit the window (`over_window`: `preflight`, `step`, `compact`, and `replay` when any call it reports is), a critical probe was lost (`probe --fail-on-loss`), nothing matched (`search`) |
//! | 2 | usage or input error: bad flags or parameters, unreadable or malformed input, unknown task, a store that cannot be opened or is too new |
//! | 3 | internal error: the store is corrupt or SQLite failed; not the user's input |
//!
//! `compactor run` exits with its client's status instead (128 + N when the
//! client was ended by signal N, as a shell reports it).

use std::process::ExitCode;

use crate::engine::Status;

/// Success.
pub const OK: u8 = 0;
/// The command ran, and the result differs or falls short.
pub const DIFFERS: u8 = 1;
/// Usage or input error.
pub const ERROR: u8 = 2;
/// Internal error: a corrupt store or a failing SQLite.
pub const INTERNAL: u8 = 3;

/// What a command reports besides errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Differs / falls short: exit status 1.
    Differs,
    /// Another program's exit status, passed on (`run`'s client).
    Status(u8),
}

impl Outcome {
    pub fn code(self) -> u8 {
        match self {
            Outcome::Ok => OK,
            Outcome::Differs => DIFFERS,
            Outcome::Status(s) => s,
        }
    }
}

impl From<Outcome> for ExitCode {
    fn from(o: Outcome) -> ExitCode {
        ExitCode::from(o.code())
    }
}

/// `over_window` is the one result that falls short: exit status 1.
pub fn outcome_of(status: Status) -> Outcome {
    match status {
        Status::OverWindow => Outcome::Differs,
        _ => Outcome::Ok,
    }
}
