//! A recorded tool call, found by its id (a unique prefix will do) and
//! written out as text: what `show tool:ID` prints and what the MCP server's
//! `view_tool_call` returns, the same bytes.

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::errors::hinted;
use super::visible::{visible, visible_line};
use super::words::plural;
use crate::engine::toolrules::ToolForm;
use crate::model::{Block, Kind, ToolContent};
use crate::store::{Store, StoredMessage};
use crate::view::text::tool_content_text;

/// A tool call as the record holds it: its input, its output if one was
/// recorded, and the compacted form minted for it, if any.
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
    pub turn: u32,
    pub step: u32,
    pub line: u64,
    /// The result: its content, whether it is an error, its source line.
    pub result: Option<(ToolContent, bool, u64)>,
    pub form: Option<ToolForm>,
    /// Its place among the task's calls recorded with the same id (`ID@N`),
    /// when the task records several.
    pub pick: Option<usize>,
}

/// A tool call as text, in the three pieces `show` styles apart.
pub struct ToolCallText {
    /// `── tool call NAME ID · turn T · step S · line L`.
    pub header: String,
    /// The input and the output, each line ending with a newline.
    pub body: String,
    /// `compacted form: RULE · RAW → N tokens`, when a form was minted.
    pub form: Option<String>,
}

impl ToolCallText {
    /// The whole text, as `show tool:ID` prints it without colour.
    pub fn plain(&self) -> String {
        let mut out = format!("{}\n{}", self.header, self.body);
        if let Some(f) = &self.form {
            out.push_str(f);
            out.push('\n');
        }
        out
    }
}

impl ToolCall {
    /// The call `prefix` names among `rows` (a task's record): the id
    /// itself, or the one id that starts with it; with `pick` (`ID@N`), the
    /// N-th call recorded with that id. An id the task records for several
    /// calls, without `pick`, is ambiguous: the error lists them.
    pub fn in_rows(
        store: &Store,
        task: &str,
        rows: &[StoredMessage],
        prefix: &str,
        pick: Option<usize>,
    ) -> Result<ToolCall> {
        let id = tool_id(rows, task, prefix)?;
        let mut calls = calls_with_id(store, task, rows, id)?;
        match (pick, calls.len()) {
            (_, 0) => bail!("no tool call {id} in task {task}"),
            (None, 1) => Ok(calls.pop().expect("one")),
            (None, _) => Err(duplicated(id, &[(task, calls.as_slice())], false)),
            (Some(n), k) if (1..=k).contains(&n) => Ok(calls.swap_remove(n - 1)),
            (Some(n), k) => Err(hinted(
                format!(
                    "tool:{id}@{n}: task {task} records {} with the id {id}",
                    plural(k, "call")
                ),
                if k == 1 {
                    format!("name it as tool:{id}")
                } else {
                    format!("N runs from 1 to {k}")
                },
            )),
        }
    }

    /// The call as text (control characters made visible).
    pub fn text(&self) -> Result<ToolCallText> {
        let header = format!(
            "── tool call {} {}{} · turn {} · step {} · line {}",
            visible_line(&self.name),
            visible_line(&self.id),
            self.pick.map(|n| format!("@{n}")).unwrap_or_default(),
            self.turn,
            self.step,
            self.line
        );
        let mut body = format!(
            "input:\n{}\n",
            visible(&serde_json::to_string_pretty(&self.input)?)
        );
        match &self.result {
            Some((content, is_error, line)) => body.push_str(&format!(
                "output{} (line {line}):\n{}\n",
                if *is_error { " · error" } else { "" },
                visible(&tool_content_text(content))
            )),
            None => body.push_str("output: none recorded (the call was interrupted)\n"),
        }
        let form = self.form.as_ref().map(|f| {
            format!(
                "compacted form: {} · {} → {}",
                f.rule,
                f.raw_tokens,
                plural(f.form_tokens, "token")
            )
        });
        Ok(ToolCallText { header, body, form })
    }

    /// The call as `show --json` prints it.
    pub fn json(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "input": self.input,
            "turn": self.turn,
            "step": self.step,
            "line": self.line,
            "result": self.result.as_ref().map(|(c, e, line)| json!({"content": c, "is_error": e, "line": line})),
            "interrupted": self.result.is_none(),
            "compacted_form": self.form.as_ref().map(|f| json!({"rule": f.rule, "raw_tokens": f.raw_tokens, "form_tokens": f.form_tokens, "form": f.form})),
        })
    }
}

/// Every call `rows` record with the id `id`, in record order (a task
/// should record one; a client or server that reuses ids records more).
/// Each result is the first recorded for the id after its call (before the
/// next call with the id, when there are several). The compacted form is
/// kept per id, so it is given only to an id recorded once.
pub fn calls_with_id(
    store: &Store,
    task: &str,
    rows: &[StoredMessage],
    id: &str,
) -> Result<Vec<ToolCall>> {
    let mut uses: Vec<(usize, &str, &Value)> = Vec::new();
    for (at, r) in rows.iter().enumerate() {
        if r.message.kind != Kind::Generation {
            continue;
        }
        for b in &r.message.content {
            if let Block::ToolUse { id: i, name, input } = b
                && i == id
            {
                uses.push((at, name, input));
            }
        }
    }
    let result_in = |from: usize, to: usize| {
        rows[from..to].iter().find_map(|r| {
            r.message.content.iter().find_map(|b| match b {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } if tool_use_id == id => Some((content.clone(), *is_error, r.message.line)),
                _ => None,
            })
        })
    };
    let several = uses.len() > 1;
    let form = match uses.len() {
        1 => store.reader().tool_form(task, id)?,
        _ => None,
    };
    let mut calls = Vec::with_capacity(uses.len());
    for (k, &(at, name, input)) in uses.iter().enumerate() {
        let r = &rows[at].message;
        let result = if several {
            let next = uses.get(k + 1).map_or(rows.len(), |u| u.0);
            result_in(at + 1, next)
        } else {
            result_in(0, rows.len())
        };
        calls.push(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            input: input.clone(),
            turn: r.turn,
            step: r.step,
            line: r.line,
            result,
            form: if several { None } else { form.clone() },
            pick: several.then_some(k + 1),
        });
    }
    Ok(calls)
}

/// `SPEC` as `ID@N` names it: the id (or its prefix) and N, when it ends in
/// `@` and a number from 1; else all of it is the id.
pub fn split_pick(spec: &str) -> (&str, Option<usize>) {
    match spec.rsplit_once('@') {
        Some((id, n))
            if !id.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            match n.parse::<usize>() {
                Ok(n) if n >= 1 => (id, Some(n)),
                _ => (spec, None),
            }
        }
        _ => (spec, None),
    }
}

/// An id recorded for several calls: the error, listing each (task, when
/// `with_task`; its `ID@N`; its tool, model call, turn and line) and how to
/// name one. `found` holds each task's calls with the id.
pub fn duplicated(id: &str, found: &[(&str, &[ToolCall])], with_task: bool) -> anyhow::Error {
    let total: usize = found.iter().map(|(_, c)| c.len()).sum();
    let mut lines = Vec::new();
    for (task, calls) in found {
        for c in calls.iter() {
            let name = match c.pick {
                Some(n) => format!("tool:{id}@{n}"),
                None => format!("tool:{id}"),
            };
            let name = if with_task {
                format!("--task {task} {name}")
            } else {
                name
            };
            lines.push(format!(
                "  {}  {} · model call {} · turn {} · line {}",
                visible_line(&name),
                visible_line(&c.name),
                c.step,
                c.turn,
                c.line
            ));
        }
    }
    let where_ = if with_task {
        format!(
            "{} in {} are recorded with it",
            plural(total, "call"),
            plural(found.len(), "task")
        )
    } else {
        format!(
            "task {} records {} with it",
            found.first().map_or("", |f| f.0),
            plural(total, "call")
        )
    };
    hinted(
        format!(
            "tool call id {} is ambiguous: {where_}\n{}",
            visible_line(id),
            lines.join("\n")
        ),
        if with_task {
            "name one with --task and tool:ID@N, as listed (N: its place among the task's calls with the id)"
        } else {
            "name one as tool:ID@N, as listed (N: its place in the record; view_tool_call takes \"ID@N\" too)"
        },
    )
}

/// The tool call ids of `rows` that start with `prefix`, each once, in
/// record order; the id itself alone when it is one of them.
pub fn ids_starting<'r>(rows: &'r [StoredMessage], prefix: &str) -> Vec<&'r str> {
    let mut ids: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.message.kind == Kind::Generation) {
        for b in &r.message.content {
            if let Block::ToolUse { id, .. } = b
                && id.starts_with(prefix)
            {
                if id == prefix {
                    return vec![id];
                }
                if !ids.contains(&id.as_str()) {
                    ids.push(id);
                }
            }
        }
    }
    ids
}

/// The tool call id a prefix names: the id itself, or the one id that starts
/// with it (as task ids take a unique prefix).
fn tool_id<'r>(rows: &'r [StoredMessage], task: &str, prefix: &str) -> Result<&'r str> {
    match ids_starting(rows, prefix).as_slice() {
        [one] => Ok(one),
        [] => bail!("no tool call {prefix} in task {task}"),
        many => Err(ambiguous(prefix, many)),
    }
}

/// A prefix that names several tool calls: the error, listing them.
pub fn ambiguous(prefix: &str, ids: &[&str]) -> anyhow::Error {
    let shown: Vec<String> = ids
        .iter()
        .take(20)
        .map(|id| format!("  tool:{id}"))
        .collect();
    hinted(
        format!(
            "tool id prefix {prefix:?} is ambiguous: {} match\n{}{}",
            plural(ids.len(), "tool call"),
            shown.join("\n"),
            if ids.len() > 20 { "\n  ..." } else { "" }
        ),
        "give more of the id",
    )
}
