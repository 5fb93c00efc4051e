//! The policy grid: every combination of the listed values, in a fixed
//! order (window, reserve, trigger, stop, protected steps, summarizer, each
//! list as given), and the checks a combination must pass.

use crate::engine::budget::{Budget, BudgetError, default_output_reserved, default_summary_budget};
use crate::model::decimal::Ratio;

use super::{Origin, PolicyFields};

/// The values a sweep combines. An empty window list means each session's
/// own window; an empty reserve list each window's default reserve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lists {
    pub windows: Vec<u64>,
    pub reserves: Vec<u64>,
    pub triggers: Vec<Ratio>,
    pub stops: Vec<Ratio>,
    pub protects: Vec<u32>,
    /// `None`: each window's default (`engine::budget::default_summary_budget`).
    pub summary_budget: Option<u64>,
    /// The summarizers' names, as the caller resolved them.
    pub summarizers: Vec<String>,
}

/// One combination of the grid, before a session fills in what it leaves
/// open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spec {
    pub window: Option<u64>,
    pub output_reserved: Option<u64>,
    pub trigger_ratio: Ratio,
    pub stop_ratio: Ratio,
    pub protect_recent_steps: u32,
    pub summary_budget: Option<u64>,
    /// Index into [`Lists::summarizers`].
    pub summarizer: usize,
}

/// A combination that cannot run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub spec: Spec,
    pub error: BudgetError,
}

impl Lists {
    /// Every combination, in order.
    pub(crate) fn specs(&self) -> Vec<Spec> {
        let windows: Vec<Option<u64>> = or_none(&self.windows);
        let reserves: Vec<Option<u64>> = or_none(&self.reserves);
        let mut out = Vec::new();
        for &window in &windows {
            for &output_reserved in &reserves {
                for &trigger_ratio in &self.triggers {
                    for &stop_ratio in &self.stops {
                        for &protect_recent_steps in &self.protects {
                            for summarizer in 0..self.summarizers.len() {
                                out.push(Spec {
                                    window,
                                    output_reserved,
                                    trigger_ratio,
                                    stop_ratio,
                                    protect_recent_steps,
                                    summary_budget: self.summary_budget,
                                    summarizer,
                                });
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The combinations that fail a check which needs no session (the
    /// ratios, the summary budget, a given window against a given or
    /// default reserve), in grid order.
    pub(crate) fn invalid(&self) -> Vec<Invalid> {
        self.specs()
            .into_iter()
            .filter_map(|spec| spec.precheck().err().map(|error| Invalid { spec, error }))
            .collect()
    }

    /// `spec` in words, for messages: every parameter.
    pub(crate) fn words(&self, spec: &Spec) -> String {
        let window = spec.window.map_or("the session's window".to_string(), |w| {
            format!("window {w}")
        });
        let reserve = spec
            .output_reserved
            .map_or("default reserve".to_string(), |r| format!("reserve {r}"));
        format!(
            "{window} · {reserve} · trigger {} · stop {} · protect {} · {}",
            spec.trigger_ratio,
            spec.stop_ratio,
            spec.protect_recent_steps,
            self.summarizers[spec.summarizer]
        )
    }
}

fn or_none(v: &[u64]) -> Vec<Option<u64>> {
    if v.is_empty() {
        vec![None]
    } else {
        v.iter().copied().map(Some).collect()
    }
}

impl Spec {
    /// What can be checked before the session is known: all of it when the
    /// window is given, else the ratios and the summary budget.
    pub(crate) fn precheck(&self) -> Result<(), BudgetError> {
        match self.window {
            Some(w) => self.budget(w).validate(),
            None => Budget {
                window: u64::MAX,
                output_reserved: 0,
                ..self.budget(u64::MAX)
            }
            .validate(),
        }
    }

    /// The budget in a session whose own window is `own`.
    pub(crate) fn budget(&self, own: u64) -> Budget {
        let window = self.window.unwrap_or(own);
        let output_reserved = self
            .output_reserved
            .unwrap_or_else(|| default_output_reserved(window));
        Budget {
            window,
            output_reserved,
            trigger_ratio: self.trigger_ratio,
            stop_ratio: self.stop_ratio,
            protect_recent_steps: self.protect_recent_steps,
            summary_budget_tokens: self
                .summary_budget
                .unwrap_or_else(|| default_summary_budget(window.saturating_sub(output_reserved))),
        }
    }

    /// The row's policy, run under `budget` with the summarizer `summarizer`.
    pub(crate) fn fields(&self, budget: &Budget, summarizer: &str) -> PolicyFields {
        PolicyFields {
            summarizer: Some(summarizer.to_string()),
            trigger_ratio: Some(self.trigger_ratio.to_string()),
            stop_ratio: Some(self.stop_ratio.to_string()),
            protect_recent_steps: Some(self.protect_recent_steps),
            summary_budget: Some(budget.summary_budget_tokens),
            summary_budget_from: Some(match self.summary_budget {
                Some(_) => Origin::Flag,
                None => Origin::Default,
            }),
            ..self.trim_fields(budget)
        }
    }

    /// The trim row's policy at this spec's window: the window and reserve.
    pub(crate) fn trim_fields(&self, budget: &Budget) -> PolicyFields {
        PolicyFields {
            window: budget.window,
            window_from: match self.window {
                Some(_) => Origin::Flag,
                None => Origin::Session,
            },
            output_reserved: budget.output_reserved,
            output_reserved_from: match self.output_reserved {
                Some(_) => Origin::Flag,
                None => Origin::Default,
            },
            trigger_ratio: None,
            stop_ratio: None,
            protect_recent_steps: None,
            summary_budget: None,
            summary_budget_from: None,
            summarizer: None,
        }
    }

    /// Whether trimming at `other`'s window is trimming at this one's.
    pub(crate) fn same_window(&self, other: &Spec) -> bool {
        self.window == other.window && self.output_reserved == other.output_reserved
    }
}

/// The specs with a window and reserve not seen before, in order: one trim
/// row each.
pub(crate) fn trim_specs(specs: &[Spec]) -> Vec<Spec> {
    let mut out: Vec<Spec> = Vec::new();
    for s in specs {
        if !out.iter().any(|o| o.same_window(s)) {
            out.push(*s);
        }
    }
    out
}
