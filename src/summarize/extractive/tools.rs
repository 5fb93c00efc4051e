//! Reading tool calls: what a call acted on (the paths it wrote and the
//! lines of its error are read in `engine::toolfacts`).

use serde_json::Value;

use super::prose::{EMPTY_SLUG, clip, slug};
use crate::engine::summarizer::ToolCall;
use crate::engine::toolfacts::{patch_paths, strings_of};
use crate::engine::toolrules::shell_command;

/// A ruled-out call's command or path.
const TARGET_MAX_CHARS: usize = 100;

/// `Tool `target` `: what a ruled-out line starts with, and how a later
/// failure of the same call is recognised.
pub(super) fn call_subject(call: &ToolCall) -> String {
    format!("{} `{}` ", call.name, call_target(&call.name, &call.input))
}

/// A ruled-out call's slug key: its tool and its target.
pub(super) fn call_key(call: &ToolCall) -> String {
    let tool = slug(&call.name, 2);
    let target = slug(&call_target(&call.name, &call.input), 3);
    if target == EMPTY_SLUG {
        tool
    } else {
        format!("{tool}-{target}")
    }
}

/// What a call acted on: its command, else its patch's first path, else a
/// path-like or query-like field, else its first string. One line, capped,
/// backticks swapped out so the subject stays unambiguous.
fn call_target(name: &str, input: &Value) -> String {
    let raw = shell_command(input)
        .or_else(|| {
            patch_paths(&strings_of(input).collect::<Vec<_>>().join("\n"))
                .into_iter()
                .next()
                .map(|(p, _)| p)
        })
        .or_else(|| {
            const FIELDS: [&str; 8] = [
                "file_path",
                "notebook_path",
                "path",
                "pattern",
                "query",
                "url",
                "description",
                "prompt",
            ];
            FIELDS
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .map(str::to_string)
        })
        .or_else(|| strings_of(input).next().map(str::to_string))
        .unwrap_or_else(|| {
            if input.is_null() {
                name.to_string()
            } else {
                input.to_string()
            }
        });
    let first_line = raw
        .trim()
        .lines()
        .next()
        .unwrap_or_default()
        .replace('`', "'");
    clip(first_line.trim(), TARGET_MAX_CHARS)
}
