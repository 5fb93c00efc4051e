//! The prompt: the seed's floor summary constitution as the system message;
//! the prior summary, the covered span, the calls the view keeps after it
//! and the extractive checklist as the user message. Everything here is a pure function of the request, so the
//! cache key (blake3 of the canonical request) is too.

use serde_json::json;

use crate::engine::action::call_target;
use crate::engine::summarizer::{SpanEntry, ToolCall};

/// Bumped whenever the prompt's wording or rendering changes: it is part of
/// the cache key, so an old cached summary is never served for a new prompt.
pub(crate) const PROMPT_VERSION: u32 = 2;

/// The longest tool output shown to the model (head and tail kept).
const TOOL_OUTPUT_CHARS: usize = 1_500;
/// The longest tool input shown.
const TOOL_INPUT_CHARS: usize = 400;
/// The longest prose or context block shown (asks are never clipped).
const PROSE_CHARS: usize = 3_000;

/// The summary constitution (seed: "The floor summary constitution").
pub(crate) fn system_prompt(budget_tokens: u64) -> String {
    format!(
        "\
You write the floor summary of a coding agent's session: a dense digest, re-sent at the head of \
every later model call as `## Task Context`. It is a digest, not a transcript: drop the process \
(how a thing was done, tool steps, search traces); keep every load-bearing conclusion, user \
intent, deliverable and safety rule.

ADMISSION GATE. Keep only what cannot be cheaply re-fetched. Current file contents are \
re-readable, so a bare list of files read earns nothing; a re-readable file path is a real handle; \
a URL is process. What has no real-time source must be preserved: the original intent, a decision \
and its rationale, an approach ruled out, a constraint the user imposed.

STRUCTURE. Append-only fact sections, then one overwrite. Every fact section re-emits each line of \
the prior summary VERBATIM and appends this span's delta; only `## Current state` is overwritten. \
Each fact is one line `- topic: statement`, where topic is a stable kebab-case key naming the \
fact's SUBJECT (`mix-test`, `transcript-renderer`, `tenant-registry`): a later fact on the same \
subject reuses the key and supersedes the earlier line, which is then not re-emitted.

TOPIC SELF-CHECK. Before writing a fact, check its key: if the key is already held by a \
different subject, do not reuse it (that silently overwrites a live fact); add a suffix such as \
`-2` instead.

SECTIONS, in this order (omit an empty fact section; `## Requests` and `## Current state` are \
always present):
## Requests — every distinct user ask, `- #1: ...`, `- #2: ...`, ordinal assigned once and never \
renumbered, load-bearing wording verbatim: the intent log.
## Deliverables — a file artifact shipped: `- path: one-line note` (keep the path, never the contents).
## Decisions — a choice made (approach / tool / format / convention) + why.
## Constraints — a standing limit or quota, or any safety / privacy / security rule in force; \
kept verbatim, never dropped.
## Ruled out — an approach tried and ABANDONED + why + the error verbatim. A failed call whose \
same action (same tool with the same command, path or target) later succeeded, in the span or in \
the LATER CALLS, was not abandoned: it is not ruled out (drop a prior line for it). When what made \
the retry succeed shows in the call (an added option or field), keep one Findings line saying so; \
otherwise keep nothing. A failure never retried, or worked around another way, stays.
## Findings — a discovered truth that cannot be cheaply re-read: a statement of fact that names \
its subject (a path or an identifier) and says what is true of it. Narration of intent (\"Now let \
me…\", \"Let me…\", \"I'll…\", \"Next…\") is never a finding. A time-bound value carries an \
`(as of <date>)` anchor.
## Archived — where an aged finding (or, under pressure, an aged non-safety decision) demotes: a \
`see <file>` pointer if a file backs it, else a terse gist. Demotion, not deletion.
## Current state — overwritten each fold, and current: `Goal: ...`, `Deliverable: delivered: ...; \
still owed: ...` (files written vs files asked for and not yet written), `Status: ...` (an open \
error only while it is unresolved at the end of the span and after it, blockers, awaiting input), \
`Next: ...` (the latest step not yet done; not a step the span or the LATER CALLS already took).

Confidence is tagged only by exception: verified is the unmarked default; `(reported)` when a \
source merely stated it, `(assumed)` when inferred.

TOKEN CAP. The summary must stay within {budget_tokens} tokens (about {chars} characters). Over \
it, demote, never delete, lowest tiers first:
P0 — safety / privacy constraints and the request log: never demoted, kept verbatim.
P1 — deliverable file paths: the note may shrink, the path stays.
P2 — non-safety decisions / constraints / ruled-out: supersede in place, then the oldest no \
longer bearing on the goal move to `## Archived`.
P3 — findings: the oldest move to `## Archived`.

CHECKLIST. The user message ends with lines that must survive: copy each of them verbatim, \
character for character, under its section.

Answer with the sections only, starting with `## Requests`: no preamble, no code fence, no \
`## Task Context` heading.",
        chars = budget_tokens.saturating_mul(4)
    )
}

/// The user message: prior summary, covered span, the calls after it,
/// checklist.
pub(crate) fn user_message(
    prior: Option<&str>,
    span: &str,
    later: &str,
    checklist: &[(String, Vec<String>)],
) -> String {
    let mut out = String::new();
    out.push_str("PRIOR SUMMARY (re-emit its fact lines verbatim):\n");
    match prior {
        Some(p) => {
            out.push_str(p.trim_end());
            out.push('\n');
        }
        None => out.push_str("(none: this is the first fold)\n"),
    }
    out.push_str("\nNEWLY COVERED SPAN (oldest first):\n");
    out.push_str(span);
    if !later.is_empty() {
        out.push_str(
            "\nLATER CALLS (after the span, kept raw in the view: do not summarize them; read \
             them only to tell which failures were since retried with success):\n",
        );
        out.push_str(later);
    }
    out.push_str("\nCHECKLIST (these lines must appear verbatim under their sections):\n");
    for (section, lines) in checklist {
        if lines.is_empty() {
            continue;
        }
        out.push_str(section);
        out.push('\n');
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The span, rendered compactly: one block per entry, tool outputs as the
/// engine holds them (their stored compacted forms when shrunk), clipped.
pub(crate) fn render_span(span: &[SpanEntry]) -> String {
    let mut out = String::new();
    for e in span {
        match e {
            SpanEntry::Ask { turn, text } => {
                out.push_str(&format!("[user ask, turn {turn}]\n{}\n\n", text.trim()));
            }
            SpanEntry::Context { text } => {
                out.push_str(&format!(
                    "[injected context]\n{}\n\n",
                    clip(text.trim(), 600)
                ));
            }
            SpanEntry::Interrupt { text } => {
                out.push_str(&format!(
                    "[user interrupted]\n{}\n\n",
                    clip(text.trim(), 600)
                ));
            }
            SpanEntry::AssistantText { step, text } => {
                out.push_str(&format!(
                    "[assistant, step {step}]\n{}\n\n",
                    clip(text.trim(), PROSE_CHARS)
                ));
            }
            SpanEntry::Reasoning { step, text } => {
                out.push_str(&format!(
                    "[reasoning, step {step}]\n{}\n\n",
                    clip(text.trim(), 600)
                ));
            }
            SpanEntry::ToolCall(call) => {
                let status = if call.interrupted {
                    " (interrupted, no result)"
                } else if call.is_error {
                    " (error)"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "[tool {}, step {}{status}] input: {}\n{}\n\n",
                    call.name,
                    call.step,
                    clip(&call.input.to_string(), TOOL_INPUT_CHARS),
                    clip(call.output.trim(), TOOL_OUTPUT_CHARS)
                ));
            }
            SpanEntry::AgentSummary { text } => {
                out.push_str(&format!(
                    "[the agent's own earlier summary]\n{}\n\n",
                    clip(text.trim(), PROSE_CHARS)
                ));
            }
        }
    }
    out
}

/// The calls after the span: one line each, its tool, target and outcome.
pub(crate) fn render_later(later: &[ToolCall]) -> String {
    let mut out = String::new();
    for call in later {
        let outcome = if call.interrupted {
            "interrupted"
        } else if call.is_error {
            "failed"
        } else {
            "succeeded"
        };
        out.push_str(&format!(
            "[tool {}, step {}] `{}` {outcome}\n",
            call.name,
            call.step,
            call_target(&call.name, &call.input)
        ));
    }
    out
}

/// Keep the head and tail of a long text, marking the cut.
fn clip(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max * 2 / 3).collect();
    let tail: String = s.chars().skip(n - max / 3).collect();
    format!(
        "{head}\n[… {} characters cut …]\n{tail}",
        n - head.chars().count() - tail.chars().count()
    )
}

/// The cache key: blake3 of the canonical request (everything that shapes
/// the answer; the server address and the key do not).
pub(crate) fn cache_key(
    provider: &str,
    model: &str,
    budget_tokens: u64,
    prior: Option<&str>,
    span: &str,
    later: &str,
) -> String {
    let canonical = json!({
        "summarizer": "llm",
        "provider": provider,
        "model": model,
        "prompt_version": PROMPT_VERSION,
        "budget_tokens": budget_tokens,
        "prior": prior,
        "span": span,
        "later": later,
    });
    blake3::hash(canonical.to_string().as_bytes())
        .to_hex()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::summarizer::ToolCall;

    #[test]
    fn the_constitution_names_every_rule() {
        let s = system_prompt(2500);
        for needle in [
            "ADMISSION GATE",
            "## Requests",
            "## Constraints",
            "## Current state",
            "## Archived",
            "TOPIC SELF-CHECK",
            "2500 tokens",
            "P0",
            "P3",
            "verbatim",
        ] {
            assert!(s.contains(needle), "missing {needle}");
        }
    }

    #[test]
    fn the_key_depends_on_every_part_of_the_request() {
        let base = cache_key("openai", "m", 2500, None, "span", "");
        assert_eq!(base, cache_key("openai", "m", 2500, None, "span", ""));
        for other in [
            cache_key("anthropic", "m", 2500, None, "span", ""),
            cache_key("openai", "m2", 2500, None, "span", ""),
            cache_key("openai", "m", 2000, None, "span", ""),
            cache_key("openai", "m", 2500, Some(""), "span", ""),
            cache_key("openai", "m", 2500, None, "span2", ""),
            cache_key("openai", "m", 2500, None, "span", "later"),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn long_tool_output_is_clipped_but_asks_are_not() {
        let long = "x".repeat(10_000);
        let span = vec![
            SpanEntry::Ask {
                turn: 1,
                text: long.clone().into(),
            },
            SpanEntry::ToolCall(ToolCall {
                step: 1,
                id: "t".into(),
                name: "Bash".into(),
                input: std::borrow::Cow::Owned(serde_json::json!({"command": "ls"})),
                output: long.clone().into(),
                is_error: false,
                interrupted: false,
            }),
        ];
        let r = render_span(&span);
        assert!(r.contains(&long));
        assert!(r.contains("characters cut"));
        assert!(r.len() < 10_000 + 2_500);
    }
}
