//! The budget: `w_eff = window − output_reserved`, `trigger = w_eff × trigger_ratio`,
//! `stop = w_eff × stop_ratio`. Ratios are exact decimals (parts per million),
//! never floats, so a budget computes the same everywhere.

use serde::Serialize;

use crate::model::decimal::Ratio;

/// The compaction budget of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub window: u64,
    pub output_reserved: u64,
    pub trigger_ratio: Ratio,
    pub stop_ratio: Ratio,
    pub protect_recent_steps: u32,
    /// ROLLING_SUMMARY_BUDGET_TOKENS: the floor summary's cap.
    pub summary_budget_tokens: u64,
}

pub const DEFAULT_WINDOW: u64 = 200_000;
pub const DEFAULT_OUTPUT_RESERVED: u64 = 20_000;
/// Without `--output-reserved`, a window keeps this share for the output at
/// most: `min(DEFAULT_OUTPUT_RESERVED, window / 8)`, so a small window is not
/// mostly reserve.
pub const DEFAULT_OUTPUT_RESERVED_DIVISOR: u64 = 8;
pub const DEFAULT_TRIGGER_RATIO: Ratio = Ratio::from_ppm(650_000);
pub const DEFAULT_STOP_RATIO: Ratio = Ratio::from_ppm(500_000);
pub const DEFAULT_PROTECT_RECENT_STEPS: u32 = 5;
/// The floor summary's cap when none is given: a share of the prompt room
/// (`w_eff`), within bounds ([`default_summary_budget`]).
pub const DEFAULT_SUMMARY_BUDGET_PPM: u64 = 60_000;
pub const MIN_DEFAULT_SUMMARY_BUDGET: u64 = 2_000;
pub const MAX_DEFAULT_SUMMARY_BUDGET: u64 = 8_000;
/// The cap at the default window (200,000, reserve 20,000): 8,000.
pub const DEFAULT_SUMMARY_BUDGET_TOKENS: u64 = 8_000;

impl Default for Budget {
    fn default() -> Self {
        Budget {
            window: DEFAULT_WINDOW,
            output_reserved: DEFAULT_OUTPUT_RESERVED,
            trigger_ratio: DEFAULT_TRIGGER_RATIO,
            stop_ratio: DEFAULT_STOP_RATIO,
            protect_recent_steps: DEFAULT_PROTECT_RECENT_STEPS,
            summary_budget_tokens: DEFAULT_SUMMARY_BUDGET_TOKENS,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error(
        "the window ({window}) must be larger than the output reservation ({reserved}); lower --output-reserved or raise --window"
    )]
    WindowTooSmall { window: u64, reserved: u64 },
    #[error(
        "the window must be at least 1 token, and it is 0: give --window the model's context window in tokens"
    )]
    NoWindow,
    #[error(
        "the stop ratio ({stop}) must be below the trigger ratio ({trigger}): stop is where a compaction aims, trigger is where it starts"
    )]
    StopNotBelowTrigger { stop: Ratio, trigger: Ratio },
    #[error("the summary budget must be at least 1 token")]
    NoSummaryBudget,
}

/// The summary budget when none is given: 6% of `w_eff`, at least 2,000
/// and at most 8,000 tokens (16k and 32k windows: 2,000; 64k: 3,360; 200k:
/// 8,000). Measured on the corpus: an unbounded head stays under 1,900
/// tokens at every window there, and the probes of what a model needs to
/// continue keep as much at 1,500 as unbounded, so the cap binds only on
/// long tasks, where it holds the head to a fixed share of the room.
pub fn default_summary_budget(w_eff: u64) -> u64 {
    let share = (u128::from(w_eff) * u128::from(DEFAULT_SUMMARY_BUDGET_PPM) / 1_000_000) as u64;
    share.clamp(MIN_DEFAULT_SUMMARY_BUDGET, MAX_DEFAULT_SUMMARY_BUDGET)
}

/// The output reserve when none is given: `min(20000, window / 8)` (a 32k
/// window keeps 28,000 tokens, a 200k one 180,000).
pub fn default_output_reserved(window: u64) -> u64 {
    DEFAULT_OUTPUT_RESERVED.min(window / DEFAULT_OUTPUT_RESERVED_DIVISOR)
}

impl Budget {
    pub fn validate(&self) -> Result<(), BudgetError> {
        // No reserve to lower: a window of 0 is the mistake.
        if self.window == 0 {
            return Err(BudgetError::NoWindow);
        }
        if self.window <= self.output_reserved {
            return Err(BudgetError::WindowTooSmall {
                window: self.window,
                reserved: self.output_reserved,
            });
        }
        if self.stop_ratio >= self.trigger_ratio {
            return Err(BudgetError::StopNotBelowTrigger {
                stop: self.stop_ratio,
                trigger: self.trigger_ratio,
            });
        }
        if self.summary_budget_tokens == 0 {
            return Err(BudgetError::NoSummaryBudget);
        }
        Ok(())
    }

    pub fn w_eff(&self) -> u64 {
        self.window.saturating_sub(self.output_reserved)
    }

    pub fn trigger(&self) -> u64 {
        self.trigger_ratio.of(self.w_eff())
    }

    pub fn stop(&self) -> u64 {
        self.stop_ratio.of(self.w_eff())
    }

    /// A compaction that reclaims less than a tenth of the hysteresis band
    /// (trigger − stop) is ineffective for anti-thrash purposes.
    pub fn min_effective_saving(&self) -> u64 {
        ((self.trigger() - self.stop()) / 10).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_parse_exactly() {
        assert_eq!("0.65".parse::<Ratio>().unwrap().ppm(), 650_000);
        assert_eq!(".5".parse::<Ratio>().unwrap().ppm(), 500_000);
        assert_eq!("1".parse::<Ratio>().unwrap().ppm(), 1_000_000);
        assert_eq!("0.000001".parse::<Ratio>().unwrap().ppm(), 1);
        for bad in ["0", "1.5", "-0.2", "abc", "", ".", "0.1234567", "1e-1"] {
            assert!(bad.parse::<Ratio>().is_err(), "{bad} should be refused");
        }
        assert_eq!("0.650".parse::<Ratio>().unwrap().to_string(), "0.65");
        assert_eq!("1.0".parse::<Ratio>().unwrap().to_string(), "1");
    }

    #[test]
    fn the_worked_example_budget() {
        let b = Budget {
            window: 32_000,
            output_reserved: 4_000,
            ..Budget::default()
        };
        assert_eq!(b.w_eff(), 28_000);
        assert_eq!(b.trigger(), 18_200);
        assert_eq!(b.stop(), 14_000);
        assert_eq!(Budget::default().trigger(), 117_000);
    }

    #[test]
    fn the_default_reserve_is_an_eighth_of_the_window_up_to_20000() {
        assert_eq!(default_output_reserved(32_000), 4_000);
        assert_eq!(32_000 - default_output_reserved(32_000), 28_000);
        assert_eq!(default_output_reserved(160_000), 20_000);
        assert_eq!(default_output_reserved(200_000), DEFAULT_OUTPUT_RESERVED);
        assert_eq!(default_output_reserved(1_000_000), 20_000);
        assert_eq!(default_output_reserved(7), 0);
        // The default budget is the default reserve of the default window.
        assert_eq!(
            default_output_reserved(DEFAULT_WINDOW),
            Budget::default().output_reserved
        );
    }

    #[test]
    fn bad_budgets_are_refused() {
        let b = Budget {
            window: 4_000,
            output_reserved: 4_000,
            ..Budget::default()
        };
        assert!(matches!(
            b.validate(),
            Err(BudgetError::WindowTooSmall { .. })
        ));
        // A window of 0 says nothing of the reserve (which is 0 too).
        for output_reserved in [0, 10] {
            let b = Budget {
                window: 0,
                output_reserved,
                ..Budget::default()
            };
            assert_eq!(b.validate(), Err(BudgetError::NoWindow));
            assert!(!b.validate().unwrap_err().to_string().contains("lower"));
        }
        let b = Budget {
            stop_ratio: DEFAULT_TRIGGER_RATIO,
            ..Budget::default()
        };
        assert!(matches!(
            b.validate(),
            Err(BudgetError::StopNotBelowTrigger { .. })
        ));
        assert!(Budget::default().validate().is_ok());
    }
}
