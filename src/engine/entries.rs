//! What the engine keeps in `task_compaction_snapshot`: reduced forms under a
//! part's address, summaries under their coverage key, and two fixed-key
//! metadata entries (`meta:anchor`, `meta:gate`). Never a decision: every
//! entry is an input the next call re-derives its view from.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The key of the cross-turn calibration anchor.
pub(crate) const ANCHOR_KEY: &str = "meta:anchor";
/// The key of the anti-thrash gate.
pub(crate) const GATE_KEY: &str = "meta:gate";

/// The key under which a part's placeholder (its historical images and
/// inline files replaced by a line of text) is kept: apart from the part's
/// own address, which a tool part's shrunk form or shell takes, and with
/// its turn, as a block's address is its content's: the same image sent
/// again in a later turn is not the one placeheld.
pub(crate) fn placeholder_key(turn: u32, address: &str) -> String {
    format!("placeholder:{turn}:{address}")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A tool part's compacted form, swapped in on every later call.
    Shrink {
        rule: String,
        /// `{"input": ..., "content": ...}` as minted into `task_tool_compaction`.
        form: Value,
    },
    /// A disposable tool part reduced to its legal empty shell.
    Drop,
    /// A part whose historical images and inline files are replaced by a
    /// line of text, minted when the ladder first ran over it and restored
    /// on every later call (the text is the part's own, so nothing else is
    /// kept).
    Placeholder,
    /// A floor summary folding the raw parts whose addresses chain to this key.
    Summary {
        text: String,
        covers: u64,
        summarizer: String,
        /// The coverage key this fold extended (Σn-1), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extends: Option<String>,
        /// The call that minted it: a re-run of that call must not fold again.
        minted_turn: u32,
        minted_call: u32,
    },
    /// The calibration anchor persisted at a turn's end.
    Anchor {
        turn: u32,
        /// The last call's whole real (or predicted) prompt plus output.
        real_tokens: u64,
        /// Measured overhead (system prompt, tools): recorded minus estimated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overhead: Option<u64>,
    },
    /// Anti-thrash state: consecutive ineffective compactions in a turn.
    Gate {
        turn: u32,
        call: u32,
        streak_before: u32,
        streak_after: u32,
    },
}

impl Entry {
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("entries serialise")
    }

    pub fn from_value(v: &Value) -> Option<Entry> {
        serde_json::from_value(v.clone()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_round_trip_with_a_kind_tag() {
        let e = Entry::Summary {
            text: "## Requests\n- #1: x".into(),
            covers: 12,
            summarizer: "extractive".into(),
            extends: None,
            minted_turn: 1,
            minted_call: 9,
        };
        let v = e.to_value();
        assert_eq!(v["kind"], "summary");
        assert_eq!(Entry::from_value(&v), Some(e));
        assert_eq!(Entry::Drop.to_value(), json!({"kind": "drop"}));
        assert_eq!(
            Entry::Placeholder.to_value(),
            json!({"kind": "placeholder"})
        );
        assert_eq!(Entry::from_value(&json!({"kind": "nonsense"})), None);
    }
}
