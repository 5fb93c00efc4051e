//! Exit statuses, in one place.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success; also a closed output pipe (`compactor tasks \| head`) |
//! | 1 | ran fine but the answer is "no": views differ (`diff`), a fixture drifted (`check`), the view cannot fit the window (`over_window`) |
//! | 2 | usage or input error: bad flags or parameters, unreadable or malformed input, unknown task, store problems |

/// Success.
pub const OK: i32 = 0;
/// The command ran, and the result differs or falls short.
pub const DIFFERS: i32 = 1;
/// Usage or input error.
pub const ERROR: i32 = 2;

/// What a command reports besides errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Differs / falls short: exit status 1.
    Differs,
}

impl Outcome {
    pub fn code(self) -> i32 {
        match self {
            Outcome::Ok => OK,
            Outcome::Differs => DIFFERS,
        }
    }
}
