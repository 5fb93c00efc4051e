//! Restore: unconditional and free. Re-apply everything already minted, so
//! the measured size is the true size: the placeholders stored for
//! historical images and inline files, the longest stored summary whose
//! coverage is a prefix of the parts, and every stored per-part form.
//! Nothing is rewritten here that was not minted by an earlier call's
//! ladder: under the trigger, the view is the client's own bytes.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;
use serde_json::{Map, Value};

use super::entries::{Entry, placeholder_key};
use super::estimate::Estimator;
use super::parts::{
    ChainResume, Part, PartBody, PartState, SummaryHead, ToolOutput, coverage_key, coverage_start,
};
use super::toolrules::ToolForm;
use crate::model::{Block, Kind, ToolContent};
use crate::view::text::{image_label, inline_file_label, is_inline_file};

/// A task's `task_compaction_snapshot` entries, read by key: a decoded map,
/// or a caller's cache that reads some entries (a summary's long text) from
/// its store only when one is asked for.
pub trait Snapshot {
    /// The entry under `key`, if there is one that decodes; an error when
    /// the store could not be read.
    fn entry(&self, key: &str) -> Result<Option<Entry>, ReadError>;
}

impl Snapshot for BTreeMap<String, Entry> {
    fn entry(&self, key: &str) -> Result<Option<Entry>, ReadError> {
        Ok(self.get(key).cloned())
    }
}

/// A read of the caller's store that failed during a call: the store's own
/// error, carried through the engine unchanged (the call stops there) for
/// the caller to take back.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ReadError(pub Box<dyn std::error::Error + Send + Sync>);

/// A task's import-time tool forms (`task_tool_compaction`), read by tool
/// call id: a map in memory, or a caller's reader that reads one form from
/// its store when it is asked for.
pub trait ToolForms {
    /// The form minted for tool call `id`, if there is one; an error when
    /// the store could not be read.
    fn form(&self, id: &str) -> Result<Option<ToolForm>, ReadError>;
}

impl ToolForms for HashMap<String, ToolForm> {
    fn form(&self, id: &str) -> Result<Option<ToolForm>, ReadError> {
        Ok(self.get(id).cloned())
    }
}

/// The store entries one call reads, loaded by the caller.
#[derive(Clone, Copy)]
pub struct StoreView<'a> {
    /// `task_compaction_snapshot` entries of the task, by key.
    pub snapshot: &'a dyn Snapshot,
    /// The coverage hashes of the `cov:` keys among them, decoded
    /// ([`super::parts::decode_coverage_key`]).
    pub covers: &'a HashSet<[u8; 32]>,
    /// `task_tool_compaction` forms of the task, by tool call id.
    pub tool_forms: &'a dyn ToolForms,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RestoreReport {
    /// Raw parts folded into the `## Task Context` head.
    pub folded_parts: u64,
    /// The coverage key of the head, if a stored summary applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Stored compacted forms swapped in.
    pub forms_applied: u32,
    /// Disposable tool parts restored as empty shells.
    pub shells_applied: u32,
    /// Historical images replaced by placeholders.
    pub images_placeheld: u32,
}

/// The text an empty shell's result carries.
pub(crate) const SHELL_TEXT: &str =
    "[compactor: output dropped; this tool declares its output disposable]";

pub(crate) fn restore(
    mut parts: Vec<Part>,
    store: StoreView<'_>,
    est: &dyn Estimator,
    chain: &mut ChainResume,
) -> Result<(Vec<Part>, RestoreReport), ReadError> {
    let mut report = RestoreReport::default();
    for p in parts.iter_mut() {
        restore_placeholder(p, store, est, &mut report)?;
    }
    parts = fold_stored(parts, store, est, &mut report, chain)?;
    for p in parts.iter_mut() {
        apply_stored(p, store, est, &mut report)?;
    }
    Ok((parts, report))
}

/// [`restore`] of one part, for a history without stored summaries (none
/// to fold): the same part as `restore` makes of it, so parts can be
/// restored one by one as they are made.
pub(crate) fn restore_part(
    p: &mut Part,
    store: StoreView<'_>,
    est: &dyn Estimator,
) -> Result<(), ReadError> {
    let mut report = RestoreReport::default();
    restore_placeholder(p, store, est, &mut report)?;
    apply_stored(p, store, est, &mut report)
}

/// Swap a tool part's stored form or shell in, if it has one.
fn apply_stored(
    p: &mut Part,
    store: StoreView<'_>,
    est: &dyn Estimator,
    report: &mut RestoreReport,
) -> Result<(), ReadError> {
    if p.state != PartState::Raw || !p.is_tool() {
        return Ok(());
    }
    match store.snapshot.entry(&p.address)? {
        Some(Entry::Shrink { rule, form }) => {
            apply_form(p, &rule, &form, est);
            report.forms_applied += 1;
        }
        Some(Entry::Drop) => {
            apply_shell(p, est);
            report.shells_applied += 1;
        }
        _ => {}
    }
    Ok(())
}

/// What a part holds from earlier calls, whichever path put it there
/// (restored from the store now, or carried from the previous call's view),
/// added to `r`: the report's `restored` counts what the view actually holds.
pub(crate) fn hold(r: &mut RestoreReport, p: &Part) {
    match &p.state {
        PartState::Shrunk { .. } => r.forms_applied += 1,
        PartState::Dropped => r.shells_applied += 1,
        PartState::Placeholder => r.images_placeheld += 1,
        PartState::Raw => {}
    }
    if let Some(h) = p.summary() {
        r.summary = Some(coverage_key(&h.coverage));
        r.folded_parts = h.covers;
    }
}

/// The line a historical image or inline file becomes.
fn placeholder_block(b: &Block) -> Option<Block> {
    let label = match b {
        Block::Image { source } => format!(
            "[compactor: historical image omitted] {}",
            image_label(source)
        ),
        other => format!(
            "[compactor: historical file omitted] {}",
            inline_file_label(other)?
        ),
    };
    Some(Block::Text { text: label })
}

/// Whether the part holds an image or an inline file (in a block, or in a
/// tool's result) that a placeholder would replace.
pub(crate) fn holds_inline_media(p: &Part) -> bool {
    let is_media = |b: &Block| matches!(b, Block::Image { .. }) || is_inline_file(b);
    match &p.body {
        PartBody::Block { block, .. } => is_media(block),
        PartBody::Tool {
            output:
                Some(ToolOutput {
                    content: ToolContent::Blocks(blocks),
                    ..
                }),
            ..
        } => blocks.iter().any(is_media),
        _ => false,
    }
}

/// Replace the part's images and inline files by their placeholder line
/// (a text part is marked as placeheld; a tool part stays raw, so that a
/// stored form can still be swapped in).
pub(crate) fn apply_placeholder(p: &mut Part, est: &dyn Estimator) {
    let mut changed = false;
    match &mut p.body {
        PartBody::Block { block, .. } => {
            if let Some(b) = placeholder_block(block) {
                *block = b;
                changed = true;
            }
        }
        PartBody::Tool {
            output:
                Some(ToolOutput {
                    content: ToolContent::Blocks(blocks),
                    ..
                }),
            ..
        } => {
            for b in blocks.iter_mut() {
                if let Some(line) = placeholder_block(b) {
                    *b = line;
                    changed = true;
                }
            }
        }
        _ => {}
    }
    if changed {
        if p.state == PartState::Raw && !p.is_tool() {
            p.state = PartState::Placeholder;
        }
        p.measure(est);
    }
}

/// Put back the placeholder stored for the part, if one is: minted by an
/// earlier call's ladder, it stays (monotonic, as every stored form).
/// Under the trigger nothing else rewrites the client's bytes.
fn restore_placeholder(
    p: &mut Part,
    store: StoreView<'_>,
    est: &dyn Estimator,
    report: &mut RestoreReport,
) -> Result<(), ReadError> {
    if !holds_inline_media(p) {
        return Ok(());
    }
    if let Some(Entry::Placeholder) = store.snapshot.entry(&placeholder_key(p.turn, &p.address))? {
        apply_placeholder(p, est);
        report.images_placeheld += 1;
    }
    Ok(())
}

/// Fold the longest stored coverage that is a prefix of the parts.
fn fold_stored(
    parts: Vec<Part>,
    store: StoreView<'_>,
    est: &dyn Estimator,
    report: &mut RestoreReport,
    chain: &mut ChainResume,
) -> Result<Vec<Part>, ReadError> {
    let (start, h) = match parts.first().and_then(Part::summary) {
        Some(head) => (1, head.coverage),
        None => (0, coverage_start()),
    };
    // Each part's chain hash is looked up decoded, its key never formatted,
    // and the chain resumed where it runs over the same parts as before.
    let mut best: Option<(usize, [u8; 32])> = None;
    if !store.covers.is_empty() {
        let mut walk = chain.walk(h);
        for (i, p) in parts.iter().enumerate().skip(start) {
            let h = walk.next(&p.address);
            if store.covers.contains(&h) {
                best = Some((i + 1, h));
            }
        }
    }
    let Some((end, coverage)) = best else {
        if let Some(head) = parts.first().and_then(Part::summary) {
            report.folded_parts = head.covers;
            report.summary = Some(coverage_key(&head.coverage));
        }
        return Ok(parts);
    };
    let key = coverage_key(&coverage);
    let Some(Entry::Summary {
        text,
        covers,
        summarizer,
        minted_turn,
        minted_call,
        ..
    }) = store.snapshot.entry(&key)?
    else {
        return Ok(parts); // a corrupt entry is skipped, never trusted
    };
    report.folded_parts = covers;
    report.summary = Some(key);
    let head = summary_part(
        &parts[end - 1],
        SummaryHead {
            text,
            coverage,
            covers,
            summarizer,
            minted_at: (minted_turn, minted_call),
        },
        est,
    );
    let mut out = Vec::with_capacity(parts.len() - end + 1);
    out.push(head);
    out.extend(parts.into_iter().skip(end));
    Ok(out)
}

/// A summary part standing where `last` (the last folded part) was.
pub(crate) fn summary_part(last: &Part, head: SummaryHead, est: &dyn Estimator) -> Part {
    let address = format!(
        "summary:{}",
        &blake3::Hash::from_bytes(head.coverage).to_hex()[..32]
    );
    let mut p = Part {
        address,
        turn: last.turn,
        step: last.step,
        generation: None,
        kind: Kind::Context,
        body: PartBody::Summary(head),
        state: PartState::Raw,
        tokens: 0,
        raw_input: None,
        raw_output: None,
    };
    p.measure(est);
    p
}

/// Tools that read a file whole or in part.
const FILE_READS: [&str; 5] = ["Read", "read", "view", "read_file", "NotebookRead"];

/// Programs whose `show`/`view` prints a task's spec (`bd show x`, `gh issue view 4`).
const TRACKERS: [&str; 5] = ["bd", "gh", "glab", "jira", "linear"];

/// Outputs the summarizer reads whole even when the view shows a form: a
/// file read (what an edit of it changed), a tracker's view of a task (its
/// spec's limits).
fn keeps_raw_output(name: &str, input: &Value) -> bool {
    if FILE_READS.contains(&name) {
        return true;
    }
    let Some(command) = super::toolrules::shell_command(input) else {
        return false;
    };
    let words: Vec<&str> = command.split_whitespace().take(6).collect();
    words.windows(2).any(|w| TRACKERS.contains(&w[0]))
        && words.iter().any(|w| matches!(*w, "show" | "view"))
}

/// Swap a stored compacted form into a tool part.
pub(crate) fn apply_form(p: &mut Part, rule: &str, form: &Value, est: &dyn Estimator) {
    if let PartBody::Tool {
        name,
        input,
        output,
        ..
    } = &mut p.body
    {
        if let Some(i) = form.get("input") {
            let raw = std::mem::replace(input, i.clone());
            if p.raw_input.is_none() && raw != *i {
                p.raw_input = Some(std::sync::Arc::new(raw));
            }
        }
        if let Some(c) = form.get("content")
            && let Ok(content) = serde_json::from_value::<ToolContent>(c.clone())
        {
            let is_error = output.as_ref().is_some_and(|o| o.is_error);
            let raw = output.replace(ToolOutput { content, is_error });
            // A file read is kept as recorded for the summarizer (what an
            // edit of it changed); other outputs are summarized as shown.
            if p.raw_output.is_none() && keeps_raw_output(name, input) {
                p.raw_output = raw.map(std::sync::Arc::new);
            }
        }
        p.state = PartState::Shrunk {
            rule: rule.to_string(),
        };
        p.measure(est);
    }
}

/// Reduce a tool part to its legal empty shell: id and name kept, content elided.
pub(crate) fn apply_shell(p: &mut Part, est: &dyn Estimator) {
    if let PartBody::Tool { input, output, .. } = &mut p.body {
        *input = Value::Object(Map::new());
        *output = Some(ToolOutput {
            content: ToolContent::Text(SHELL_TEXT.to_string()),
            is_error: false,
        });
        p.state = PartState::Dropped;
        p.measure(est);
    }
}
