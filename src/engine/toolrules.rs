//! Per-tool compaction rules: a data table, not code paths.
//!
//! A rule turns a tool call's raw input and output into its deterministic
//! compacted form (the seed's R1/R3 "stored compacted form"), or declares the
//! tool disposable (R2, the legal empty shell). The built-in table
//! (`toolrules/default.json`, embedded) knows Claude Code and Codex tool
//! names; a JSON file in the same format can override it:
//!
//! ```json
//! {"precompact_threshold_tokens": 500,
//!  "rules": [{"tools": ["Read", "mcp__fs__*"], "rule": "head_tail_lines", "head": 20, "tail": 10},
//!            {"tools": ["reflect"], "rule": "drop"}],
//!  "default": {"rule": "head_tail_chars", "head": 1500, "tail": 500}}
//! ```
//! User rules are consulted before the built-in ones.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::estimate::{Estimator, tool_content_tokens};
use crate::model::{Block, ToolContent};

/// What a rule does with a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Rule {
    /// Keep the first `head` and last `tail` lines; the middle is elided with a count.
    HeadTailLines { head: usize, tail: usize },
    /// Keep the first `n` entries (lines) of a listing.
    TopEntries { n: usize },
    /// Keep the first `head` and last `tail` characters.
    HeadTailChars { head: usize, tail: usize },
    /// The tool declares its output disposable: the part becomes an empty shell.
    Drop,
    /// Never compact this tool.
    Keep,
}

impl Rule {
    pub fn name(&self) -> &'static str {
        match self {
            Rule::HeadTailLines { .. } => "head_tail_lines",
            Rule::TopEntries { .. } => "top_entries",
            Rule::HeadTailChars { .. } => "head_tail_chars",
            Rule::Drop => "drop",
            Rule::Keep => "keep",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRule {
    /// Tool names; a trailing `*` matches a prefix (`mcp__github__*`).
    pub tools: Vec<String>,
    /// For shell tools: the programs the command must start with (`sed`,
    /// `rg`...). Empty: any call of the tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    #[serde(flatten)]
    pub rule: Rule,
}

/// The rules table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRules {
    /// Tool calls estimated below this are never compacted (they ride into the floor summary).
    #[serde(default = "default_threshold")]
    pub precompact_threshold_tokens: u64,
    #[serde(default)]
    pub rules: Vec<ToolRule>,
    #[serde(default = "default_rule")]
    pub default: Rule,
}

fn default_threshold() -> u64 {
    500
}

fn default_rule() -> Rule {
    Rule::HeadTailChars {
        head: 1500,
        tail: 500,
    }
}

/// String fields of an input longer than this are compacted too (a Write's content).
const INPUT_FIELD_KEEP_CHARS: usize = 400;

/// The built-in table, in the override format (documented in README).
const DEFAULT_RULES: &str = include_str!("toolrules/default.json");

/// A short id of the built-in rule table: part of a compaction profile, so
/// state minted under other rules is never restored.
pub(crate) fn default_rules_id() -> String {
    blake3::hash(DEFAULT_RULES.as_bytes()).to_hex()[..16].to_string()
}

impl Default for ToolRules {
    fn default() -> Self {
        serde_json::from_str(DEFAULT_RULES).expect("the built-in tool rules parse")
    }
}

impl ToolRules {
    /// Parse a user rules file and put its rules ahead of the built-in ones.
    pub fn with_overrides(json: &str) -> Result<ToolRules, serde_json::Error> {
        let user: ToolRules = serde_json::from_str(json)?;
        let mut rules = user.rules;
        rules.extend(ToolRules::default().rules);
        Ok(ToolRules {
            precompact_threshold_tokens: user.precompact_threshold_tokens,
            rules,
            default: user.default,
        })
    }

    /// The rule for a tool call: the first whose tool name (and, if it lists
    /// programs, shell command) matches.
    pub fn rule_for(&self, tool: &str, input: &Value) -> &Rule {
        let program = shell_program(input);
        self.rules
            .iter()
            .find(|r| {
                r.tools.iter().any(|p| name_matches(p, tool))
                    && (r.commands.is_empty()
                        || program
                            .as_deref()
                            .is_some_and(|prog| r.commands.iter().any(|c| c == prog)))
            })
            .map(|r| &r.rule)
            .unwrap_or(&self.default)
    }

    /// Mint the compacted form of a tool call, or `None` on a miss (below the
    /// threshold, a `keep` rule, or nothing to save).
    pub fn compact(
        &self,
        est: &dyn Estimator,
        tool_call_id: &str,
        name: &str,
        input: &Value,
        content: &ToolContent,
    ) -> Option<ToolForm> {
        let raw_tokens = call_tokens(est, name, input, content);
        if raw_tokens < self.precompact_threshold_tokens {
            return None;
        }
        let rule = self.rule_for(name, input);
        let call = recovery_call(tool_call_id);
        let (new_input, new_content) = match rule {
            Rule::Keep => return None,
            Rule::Drop => (None, ToolContent::Text(String::new())),
            _ => (
                compact_input(rule, input, &call),
                compact_content(rule, content, &call),
            ),
        };
        let form_tokens = call_tokens(est, name, new_input.as_ref().unwrap_or(input), &new_content);
        if form_tokens >= raw_tokens && *rule != Rule::Drop {
            return None;
        }
        let mut form = Map::new();
        if let Some(i) = new_input {
            form.insert("input".to_string(), i);
        }
        form.insert(
            "content".to_string(),
            serde_json::to_value(&new_content).expect("content serialises"),
        );
        Some(ToolForm {
            tool_call_id: tool_call_id.to_string(),
            tool_name: name.to_string(),
            rule: rule.name().to_string(),
            form: Value::Object(form),
            raw_tokens,
            form_tokens,
            pointer: format!("tool:{tool_call_id}"),
        })
    }
}

/// The pointer a shrunk form carries, as a model calls it back:
/// `view_tool_call("toolu_01A")` (the id quoted as a JSON string). The
/// bytes are the same whether or not a client has compactor's MCP server,
/// so views stay deterministic; `compactor show tool:ID` resolves the same
/// id offline.
pub fn recovery_call(tool_call_id: &str) -> String {
    format!(
        "view_tool_call({})",
        serde_json::to_string(tool_call_id).expect("a string serialises")
    )
}

/// A tool call's stored compacted form and its recovery pointer (a row of
/// `task_tool_compaction`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolForm {
    pub tool_call_id: String,
    pub tool_name: String,
    /// The rule that minted it (e.g. `head_tail_lines`).
    pub rule: String,
    /// `{"input": <compacted input>?, "content": <compacted result content>}`.
    pub form: Value,
    pub raw_tokens: u64,
    pub form_tokens: u64,
    /// Where the raw input and output can be read back offline: `tool:<id>`
    /// (`compactor show`'s address; the form's text carries
    /// [`recovery_call`], the same id as a model calls it back).
    pub pointer: String,
}

/// Estimated tokens of a tool call: its name, input JSON and result content.
pub(crate) fn call_tokens(
    est: &dyn Estimator,
    name: &str,
    input: &Value,
    content: &ToolContent,
) -> u64 {
    est.text(name)
        + est.text(&serde_json::to_string(input).unwrap_or_default())
        + tool_content_tokens(est, content)
}

/// The shell command of a call, the one parser for it (tool rules and the
/// summarizer both use it): `command` or `cmd`, a string or an argv;
/// `["bash", "-lc", SCRIPT, ...]` (any `*sh`, any `-…c` flag) is unwrapped to
/// SCRIPT, another argv is joined with spaces.
pub(crate) fn shell_command(input: &Value) -> Option<String> {
    let command = input.get("command").or_else(|| input.get("cmd"))?;
    if let Some(s) = command.as_str() {
        return Some(s.to_string());
    }
    let argv: Vec<&str> = command
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match argv.as_slice() {
        [] => None,
        [shell, flag, script, ..]
            if shell.rsplit('/').next().unwrap_or(shell).ends_with("sh")
                && flag.starts_with('-')
                && flag.ends_with('c') =>
        {
            Some(script.to_string())
        }
        _ => Some(argv.join(" ")),
    }
}

/// The program a shell call runs: the first word of the last `&&` segment of
/// its command (`cd repo && rg foo` runs `rg`), unwrapping `bash -lc "..."`.
pub(crate) fn shell_program(input: &Value) -> Option<String> {
    let text = shell_command(input)?;
    let last = text.rsplit("&&").next()?.trim();
    let word = last.split_whitespace().next()?;
    Some(word.rsplit('/').next().unwrap_or(word).to_string())
}

fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// Compact long string fields of an input, keeping its shape. `None` if unchanged.
fn compact_input(rule: &Rule, input: &Value, pointer: &str) -> Option<Value> {
    fn walk(rule: &Rule, v: &Value, pointer: &str, changed: &mut bool) -> Value {
        match v {
            Value::String(s) if s.chars().count() > INPUT_FIELD_KEEP_CHARS => {
                let small = match rule {
                    Rule::HeadTailLines { head, tail } => {
                        head_tail_lines(s, (*head).min(8), (*tail).min(4), pointer)
                    }
                    _ => head_tail_chars(
                        s,
                        INPUT_FIELD_KEEP_CHARS * 3 / 4,
                        INPUT_FIELD_KEEP_CHARS / 4,
                        pointer,
                    ),
                };
                if small.len() < s.len() {
                    *changed = true;
                    Value::String(small)
                } else {
                    v.clone()
                }
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|i| walk(rule, i, pointer, changed))
                    .collect(),
            ),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), walk(rule, v, pointer, changed)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    if matches!(rule, Rule::TopEntries { .. }) {
        return None;
    }
    let mut changed = false;
    let out = walk(rule, input, pointer, &mut changed);
    changed.then_some(out)
}

fn compact_content(rule: &Rule, content: &ToolContent, pointer: &str) -> ToolContent {
    let text = |s: &str| compact_text(rule, s, pointer);
    match content {
        ToolContent::Text(s) => ToolContent::Text(text(s)),
        ToolContent::Blocks(blocks) => ToolContent::Blocks(
            blocks
                .iter()
                .map(|b| match b {
                    Block::Text { text: t } => Block::Text { text: text(t) },
                    Block::Image { .. } => Block::Text {
                        text: format!("[image elided; {pointer} returns the full output]"),
                    },
                    other => other.clone(),
                })
                .collect(),
        ),
    }
}

/// Apply a rule to an output's text. An output that is a JSON object keeps
/// its shape: only its long string fields are compacted (Codex 0.40 wraps
/// shell output as `{"output": "...", "metadata": {...}}`, MCP tools return
/// JSON), so the form is still the same kind of document.
fn compact_text(rule: &Rule, s: &str, pointer: &str) -> String {
    if s.starts_with('{')
        && let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(s)
    {
        let fields = doc
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(inner) if inner.chars().count() > INPUT_FIELD_KEEP_CHARS => {
                    (k, Value::String(compact_plain(rule, &inner, pointer)))
                }
                other => (k, other),
            })
            .collect();
        return serde_json::to_string(&Value::Object(fields)).expect("JSON values serialise");
    }
    compact_plain(rule, s, pointer)
}

fn compact_plain(rule: &Rule, s: &str, pointer: &str) -> String {
    match rule {
        Rule::HeadTailLines { head, tail } => head_tail_lines(s, *head, *tail, pointer),
        Rule::TopEntries { n } => top_entries(s, *n, pointer),
        Rule::HeadTailChars { head, tail } => head_tail_chars(s, *head, *tail, pointer),
        Rule::Drop | Rule::Keep => s.to_string(),
    }
}

/// First `head` and last `tail` lines, with the elided count and the pointer.
///
/// The lines are counted and the two ends found by searching for newlines
/// (from the front for the head, from the back for the tail), never by
/// splitting the whole text into lines: tool outputs run to thousands of
/// lines and only a few dozen are kept. The bytes are those of joining
/// `s.split('\n')`'s first `head` and last `tail` pieces with newlines.
pub(crate) fn head_tail_lines(s: &str, head: usize, tail: usize, pointer: &str) -> String {
    let bytes = s.as_bytes();
    let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
    if lines <= head + tail + 1 {
        // Few long lines: fall back to characters so the form still shrinks.
        return head_tail_chars(s, 1500, 500, pointer);
    }
    // The `head`-th newline ends the head; the `tail`-th from the end starts
    // the tail. Both exist: there are more than `head + tail` newlines.
    let head_end = match head {
        0 => 0,
        n => memchr::memchr_iter(b'\n', bytes)
            .nth(n - 1)
            .unwrap_or(s.len()),
    };
    let tail_start = match tail {
        0 => s.len(),
        n => memchr::memrchr_iter(b'\n', bytes)
            .nth(n - 1)
            .map_or(0, |i| i + 1),
    };
    let elided = lines - head - tail;
    let mut out = String::with_capacity(head_end + (s.len() - tail_start) + 64 + pointer.len());
    out.push_str(&s[..head_end]);
    out.push_str(&format!(
        "\n[… {elided} of {lines} lines elided; {pointer} returns them]\n"
    ));
    out.push_str(&s[tail_start..]);
    out
}

/// The first `n` entries (non-empty lines) of a listing.
pub(crate) fn top_entries(s: &str, n: usize, pointer: &str) -> String {
    let entries: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    if entries.len() <= n {
        return head_tail_chars(s, 1500, 500, pointer);
    }
    let mut out = entries[..n].join("\n");
    out.push_str(&format!(
        "\n[… {} more of {} entries; {pointer} returns the full list]",
        entries.len() - n,
        entries.len()
    ));
    out
}

/// First `head` and last `tail` characters (never splitting a character).
pub(crate) fn head_tail_chars(s: &str, head: usize, tail: usize, pointer: &str) -> String {
    let total = s.chars().count();
    if total <= head + tail + 80 {
        return s.to_string();
    }
    let head_end = s.char_indices().nth(head).map_or(s.len(), |(i, _)| i);
    let tail_start = s
        .char_indices()
        .nth(total - tail)
        .map_or(s.len(), |(i, _)| i);
    format!(
        "{}\n[… {} of {total} characters elided; {pointer} returns them]\n{}",
        &s[..head_end],
        total - head - tail,
        &s[tail_start..]
    )
}

#[cfg(test)]
mod tests;
