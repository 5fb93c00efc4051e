//! What the engine keeps in `task_compaction_snapshot`: reduced forms under a
//! part's address, summaries under their coverage key, and two fixed-key
//! metadata entries (`meta:anchor`, `meta:gate`). Never a decision: every
//! entry is an input the next call re-derives its view from.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::restore::{ReadError, ToolForms};

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

/// An entry one call minted, as the call hands it to its caller to write:
/// its JSON, or a `shrink` entry whose rule and form are those of a tool
/// call's import-time form ([`ToolForms::form`]), read again when it is
/// written: the form was restored into the call's parts, and a request of
/// 20,000 tool results held each form twice, in the parts and in its
/// entry, while the call ran (the same bytes are written either way).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Minted {
    Value(Value),
    StoredForm { tool_id: String },
}

impl Minted {
    /// The entry's `kind`.
    pub fn kind(&self) -> Option<&str> {
        match self {
            Minted::Value(v) => v.get("kind").and_then(Value::as_str),
            Minted::StoredForm { .. } => Some("shrink"),
        }
    }

    /// The entry's JSON, when it is held whole.
    pub fn as_value(&self) -> Option<&Value> {
        match self {
            Minted::Value(v) => Some(v),
            Minted::StoredForm { .. } => None,
        }
    }

    /// The entry's JSON: a stored form's read from `forms` (an error when
    /// the form is no longer there, which the store never lets happen).
    pub fn value(&self, forms: &dyn ToolForms) -> Result<Cow<'_, Value>, ReadError> {
        match self {
            Minted::Value(v) => Ok(Cow::Borrowed(v)),
            Minted::StoredForm { tool_id } => {
                let form = forms.form(tool_id)?.ok_or_else(|| {
                    ReadError(
                        format!("the tool form of {tool_id} shrunk by this call is gone").into(),
                    )
                })?;
                Ok(Cow::Owned(
                    Entry::Shrink {
                        rule: form.rule,
                        form: form.form,
                    }
                    .to_value(),
                ))
            }
        }
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

    #[test]
    fn a_stored_form_entry_is_written_as_the_shrink_of_the_form() {
        use crate::engine::toolrules::ToolForm;
        use std::collections::HashMap;
        let form = json!({"content": "line 1\n[... 40 lines elided ...]\nline 42"});
        let stored = ToolForm {
            tool_call_id: "toolu_1".into(),
            tool_name: "Read".into(),
            rule: "head_tail_lines".into(),
            form: form.clone(),
            raw_tokens: 900,
            form_tokens: 20,
            pointer: "tool:toolu_1".into(),
        };
        let forms = HashMap::from([("toolu_1".to_string(), stored)]);
        let minted = Minted::StoredForm {
            tool_id: "toolu_1".into(),
        };
        assert_eq!(minted.kind(), Some("shrink"));
        assert_eq!(minted.as_value(), None);
        let shrink = Entry::Shrink {
            rule: "head_tail_lines".into(),
            form,
        };
        assert_eq!(
            minted.value(&forms).unwrap().into_owned(),
            shrink.to_value()
        );
        // A value is handed back as it is.
        let drop = Minted::Value(Entry::Drop.to_value());
        assert_eq!(drop.kind(), Some("drop"));
        assert_eq!(*drop.value(&forms).unwrap(), json!({"kind": "drop"}));
        // A form that is gone is an error, never an entry without it.
        let gone = Minted::StoredForm {
            tool_id: "toolu_2".into(),
        };
        let err = gone.value(&forms).unwrap_err().to_string();
        assert!(err.contains("toolu_2"), "{err}");
    }
}
