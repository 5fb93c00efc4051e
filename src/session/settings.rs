//! What a run's stored state depends on besides the record: its settings,
//! the profile they name, and the replay progress recorded under it.

use crate::engine::budget::Budget;
use crate::engine::estimate::Estimator;
use crate::engine::summarizer::Summarizer;
use crate::store::{Store, StoreError};
use crate::summarize::StaticCheckpoint;

/// Engine settings for a run.
#[derive(Clone, Copy)]
pub struct RunSettings<'a> {
    pub budget: Budget,
    pub estimator: &'a dyn Estimator,
    pub summarizer: &'a dyn Summarizer,
    /// Stands in when `summarizer` fails (the static checkpoint in practice).
    pub fallback: &'a dyn Summarizer,
}

impl<'a> RunSettings<'a> {
    /// Settings with the static checkpoint as the fallback summarizer.
    pub fn new(
        budget: Budget,
        estimator: &'a dyn Estimator,
        summarizer: &'a dyn Summarizer,
    ) -> Self {
        RunSettings {
            budget,
            estimator,
            summarizer,
            fallback: &StaticCheckpoint,
        }
    }

    /// What stored state depends on besides the record: the budget (the
    /// summary budget included), the summarizer and the tool rules. State is
    /// kept apart per profile, and progress only trusted under equal settings.
    pub fn identity(&self) -> serde_json::Value {
        serde_json::json!({
            "budget": self.budget,
            "summarizer": self.summarizer.name(),
            "tool_rules": crate::engine::toolrules::default_rules_id(),
        })
    }

    /// The compaction profile these settings run under: a short blake3 of
    /// [`RunSettings::identity`]'s canonical JSON (serde_json sorts keys).
    pub fn profile(&self) -> String {
        profile_of(&self.identity())
    }
}

/// The profile id of a settings identity.
pub fn profile_of(identity: &serde_json::Value) -> String {
    blake3::hash(identity.to_string().as_bytes()).to_hex()[..16].to_string()
}

/// The replay progress an in-place run recorded for a task under a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The last call it committed.
    pub call: u32,
    /// The settings it ran under ([`RunSettings::identity`]).
    pub settings: serde_json::Value,
}

impl Progress {
    /// Whether the run that recorded it ran under `settings`: only then is
    /// what it stored trusted to resume from.
    pub fn ran_under(&self, settings: &RunSettings<'_>) -> bool {
        self.settings == settings.identity()
    }
}

/// The progress recorded for `task` under the profile of `settings`.
pub fn recorded_progress(
    store: &Store,
    task: &str,
    settings: &RunSettings<'_>,
) -> Result<Option<Progress>, StoreError> {
    Ok(store
        .reader()
        .replay_progress(task, &settings.profile())?
        .map(|(call, settings)| Progress { call, settings }))
}

/// The last call an in-place run of `task` committed under these settings.
pub fn resume_point(
    store: &Store,
    task: &str,
    settings: &RunSettings<'_>,
) -> Result<Option<u32>, StoreError> {
    Ok(recorded_progress(store, task, settings)?
        .filter(|p| p.ran_under(settings))
        .map(|p| p.call))
}
