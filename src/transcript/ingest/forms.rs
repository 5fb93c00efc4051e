//! The tool forms an import mints: a tool result's shrunk form, written
//! beside its row in the import's transaction.

use super::*;

/// Mints the compacted forms of a task's tool results as its messages
/// arrive in file order. A result is minted against the first call of its
/// id; a result seen before its call waits for it (minted when the call
/// comes, before any later result of that id), and one whose call never
/// comes is not minted.
///
/// Only calls not answered yet are held whole, so memory does not grow with
/// the file. A call whose result was minted is remembered by a digest of its
/// id only: the form table keeps one form per id (`INSERT OR IGNORE`), so no
/// later result of it can store anything. A call answered without a form is
/// remembered by its id's digest and the row holding it: a later result of
/// it (rare: a result that answers an answered call) is minted by
/// [`put_forms`] against the call read back from the store.
pub(super) struct FormMinter<'r> {
    rules: &'r ToolRules,
    est: CharsPerToken,
    /// Calls not answered yet: tool name, input and the row holding the
    /// call. Also calls whose input holds a float, which need not read back
    /// from the store exactly as given (serde_json's default float parsing
    /// is not exact).
    open: HashMap<String, OpenCall>,
    /// Answered calls, by [`Digest`] of their id: the row
    /// holding the call, or [`FORMED`].
    answered: IdTable<u64>,
    waiting: HashMap<String, Vec<ToolContent>>,
}

/// A call held whole by the [`FormMinter`]: name, input, row.
pub(super) type OpenCall = (String, Value, u64);

/// In [`FormMinter::answered`]: the call's form is minted.
pub(super) const FORMED: u64 = u64::MAX;

/// A minted form, or a result to mint against a call already stored.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) enum Minted {
    Form(ToolForm),
    /// A result of the call with this id held in the task's row `call`.
    Late {
        call: u64,
        id: String,
        content: ToolContent,
    },
}

impl<'r> FormMinter<'r> {
    pub(super) fn new(rules: &'r ToolRules) -> FormMinter<'r> {
        FormMinter {
            rules,
            est: CharsPerToken::default(),
            open: HashMap::new(),
            answered: IdTable::default(),
            waiting: HashMap::new(),
        }
    }

    /// A minter whose table of answered calls spills every `budget` ids.
    #[cfg(test)]
    pub(super) fn with_budget(rules: &'r ToolRules, budget: usize) -> FormMinter<'r> {
        FormMinter {
            answered: IdTable::with_budget(budget),
            ..FormMinter::new(rules)
        }
    }

    /// Take the task's next message, its row `seq`, and return the forms of
    /// the results it lets be minted; `mint`: its results are new rows (the
    /// results of rows stored before are not minted again).
    pub(super) fn take(
        &mut self,
        m: &Message,
        seq: u64,
        mint: bool,
    ) -> std::io::Result<Vec<Minted>> {
        let mut out = Vec::new();
        for b in &m.content {
            match b {
                Block::ToolUse { id, name, input } => {
                    let key = Digest::of(id);
                    if self.open.contains_key(id) || self.answered.get(&key)?.is_some() {
                        continue;
                    }
                    let call = (name.clone(), input.clone(), seq);
                    let waiting = self.waiting.remove(id).unwrap_or_default();
                    if waiting.is_empty() {
                        self.open.insert(id.clone(), call);
                        continue;
                    }
                    // Later waiting results of a minted call would store nothing.
                    let form = waiting.iter().find_map(|content| {
                        self.rules.compact(&self.est, id, name, input, content)
                    });
                    self.retire(id, key, call, form.is_some())?;
                    out.extend(form.map(Minted::Form));
                }
                Block::ToolResult {
                    tool_use_id: id,
                    content,
                    ..
                } => {
                    let key = Digest::of(id);
                    if let Some(call) = self.open.remove(id) {
                        let (name, input, _) = &call;
                        let form = mint
                            .then(|| self.rules.compact(&self.est, id, name, input, content))
                            .flatten();
                        self.retire(id, key, call, form.is_some())?;
                        out.extend(form.map(Minted::Form));
                    } else if let Some(call) = self.answered.get(&key)? {
                        if mint && call != FORMED {
                            out.push(Minted::Late {
                                call,
                                id: id.clone(),
                                content: content.clone(),
                            });
                        }
                    } else if mint {
                        self.waiting
                            .entry(id.clone())
                            .or_default()
                            .push(content.clone());
                    }
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// An answered call leaves memory, unless its input has a float.
    pub(super) fn retire(
        &mut self,
        id: &str,
        key: Digest,
        call: OpenCall,
        formed: bool,
    ) -> std::io::Result<()> {
        if formed {
            self.answered.insert(key, FORMED)
        } else if has_float(&call.1) {
            self.open.insert(id.to_string(), call);
            Ok(())
        } else {
            self.answered.insert(key, call.2)
        }
    }
}

/// Whether a value holds a number that is not an integer.
pub(super) fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(a) => a.iter().any(has_float),
        Value::Object(o) => o.values().any(has_float),
        _ => false,
    }
}

/// A late result's form: minted against the call as the store holds it in
/// row `call` of the task (already written: a call comes before its
/// results). `None` when that row holds no such call (the rows diverge
/// from the store's, and the import is refused at its end).
pub(super) fn mint_late(
    tx: &Tx<'_>,
    task_id: &str,
    rules: &ToolRules,
    call: u64,
    id: &str,
    content: &ToolContent,
) -> Result<Option<ToolForm>, StoreError> {
    let rows = tx.reader().messages(task_id, call, call + 1)?;
    let input = rows
        .iter()
        .flat_map(|r| &r.message.content)
        .find_map(|b| match b {
            Block::ToolUse {
                id: i, name, input, ..
            } if i == id => Some((name, input)),
            _ => None,
        });
    Ok(input.and_then(|(name, input)| {
        rules.compact(&CharsPerToken::default(), id, name, input, content)
    }))
}

/// Store a task's minted forms; how many were new.
pub(super) fn put_forms(
    tx: &Tx<'_>,
    task_id: &str,
    rules: &ToolRules,
    forms: &[Minted],
) -> Result<u64, StoreError> {
    let mut stored = 0;
    for f in forms {
        let late;
        let form = match f {
            Minted::Form(form) => form,
            Minted::Late { call, id, content } => {
                late = mint_late(tx, task_id, rules, *call, id, content)?;
                match &late {
                    Some(form) => form,
                    None => continue,
                }
            }
        };
        stored += u64::from(tx.put_tool_form(task_id, form)?);
    }
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::{Kind, Role};

    fn call(id: &str, input: Value) -> Message {
        let name = "Bash".to_string();
        let block = Block::ToolUse {
            id: id.to_string(),
            name,
            input,
        };
        Message::new(Role::Assistant, Kind::Generation, vec![block], 1)
    }

    fn result(id: &str, text: &str) -> Message {
        Message::tool_result(id.to_string(), ToolContent::Text(text.into()), false, 1)
    }

    #[test]
    fn the_form_minter_holds_only_the_calls_not_answered_yet() {
        let rules = ToolRules::default();
        let big: String = (0..300).map(|k| format!("line {k}\n")).collect();
        let mut minter = FormMinter::new(&rules);
        let mut seq = 0;
        let mut take = |minter: &mut FormMinter<'_>, m: Message| {
            seq += 1;
            minter
                .take(&m, seq - 1, true)
                .expect("no spill at this size")
        };
        for i in 0..200 {
            let id = format!("toolu_{i}");
            take(
                &mut minter,
                call(&id, json!({"command": format!("seq {i}")})),
            );
            let text = if i % 2 == 0 { "ok" } else { &big };
            let minted = take(&mut minter, result(&id, text));
            assert_eq!(minted.len(), i % 2, "{i}");
        }
        take(&mut minter, call("open", json!({"command": "sleep"})));
        take(&mut minter, call("float", json!({"ratio": 0.5})));
        take(&mut minter, result("float", "ok"));
        // The interrupted call and the one whose input need not read back
        // exactly are held whole; the others by their ids' digests.
        let mut open: Vec<&str> = minter.open.keys().map(String::as_str).collect();
        open.sort();
        assert_eq!(open, ["float", "open"]);
        let answered = minter.answered.entries().expect("in memory");
        assert_eq!(answered.len(), 200);
        let formed = answered.iter().filter(|&&(_, v)| v == FORMED).count();
        assert_eq!(formed, 100);
        // A result of a call answered without a form waits for the store;
        // one of a call whose form is minted stores nothing more.
        let late = take(&mut minter, result("toolu_0", &big));
        assert!(matches!(&late[..], [Minted::Late { call: 0, .. }]));
        assert!(take(&mut minter, result("toolu_1", &big)).is_empty());
        assert!(minter.waiting.is_empty());
    }

    proptest::proptest! {
        /// A minter whose answered calls spill (a budget of a few ids)
        /// mints the same forms and late results as one that holds them:
        /// calls answered, answered again far later, results before their
        /// calls, calls repeated.
        #[test]
        fn a_minter_whose_ids_spill_mints_the_same(
            budget in 1usize..6,
            events in proptest::collection::vec((proptest::bool::ANY, 0u8..40, 0u8..4), 0..300),
        ) {
            let rules = ToolRules::default();
            let big: String = (0..300).map(|k| format!("line {k}\n")).collect();
            let mut plain = FormMinter::new(&rules);
            let mut spilling = FormMinter::with_budget(&rules, budget);
            for (seq, &(is_call, k, shape)) in events.iter().enumerate() {
                let id = format!("toolu_{k}");
                let m = if is_call {
                    let input = if shape == 0 { json!({"ratio": 0.5}) } else { json!({"command": format!("seq {k}")}) };
                    call(&id, input)
                } else {
                    result(&id, if shape < 2 { "ok" } else { &big })
                };
                let seq = seq as u64;
                let mint = seq % 7 != 3;
                let want = plain.take(&m, seq, mint).expect("in memory");
                proptest::prop_assert_eq!(spilling.take(&m, seq, mint).expect("spills"), want, "{}", seq);
            }
        }
    }
}
