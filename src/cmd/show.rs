//! `compactor show [FILE] [ADDRESS]`: the record, one message, or a tool
//! call's raw input and output (the offline `view_tool_call`), of FILE's
//! task, `--task`'s, or by default the latest.

use std::io::Write;

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use super::Ui;
use super::args::TaskSource;
use super::errors::hinted;
use super::target::resolve_task;
use super::tool_call::{self, ToolCall};
use super::words::plural;
use crate::cmd::exit::Outcome;
use crate::cmd::style::{self};
use crate::cmd::visible::{visible, visible_line};
use crate::engine::entries::Entry;
use crate::engine::estimate::CharsPerToken;
use crate::engine::parts::{PartBody, reconstruct};
use crate::model::{Block, Kind};
use crate::store::{Store, StoredMessage};
use crate::view::text::block_text;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor show session.jsonl 40..60    rows 40 to 59 of a transcript's task\n  compactor show --task 7f3c 40..60      rows 40 to 59 of a task named by a prefix\n  compactor show tool:toolu_01A          a tool call, in any task (an id prefix will do)"
)]
pub struct ShowArgs {
    #[command(flatten)]
    pub source: TaskSource,

    /// What to show: `tool:ID` (a tool call's raw input and output, found in
    /// any task when none is named; a unique prefix of the id is enough; a
    /// shrunk form's `view_tool_call("ID")` too; `tool:ID@N`, the N-th call
    /// recorded with an id a client reused), `N` (one message by seq), `A..B` (seq A up
    /// to, not including, B), `turn:N`, `step:N`, a part address (`text:HASH`,
    /// `reasoning:HASH`), a stored summary (`cov:HASH`, a prefix is enough), or
    /// `compacted` (what the compaction store holds). Default: the whole task.
    /// Given alone, an argument that reads as an ADDRESS is one (a file named
    /// like one: `./12`), and so is one beside --task that names no file;
    /// anything else is FILE.
    #[arg(value_name = "ADDRESS")]
    pub address: Option<String>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What an ADDRESS selects.
#[derive(Debug, PartialEq, Eq)]
enum Address {
    All,
    Seq(u64),
    Range(u64, u64),
    Turn(u32),
    Step(u32),
    Tool(String),
    /// A text, reasoning or image part by its content address.
    Part(String),
    /// A stored summary by its coverage key.
    Coverage(String),
    /// Everything the store holds for the task: forms, shells, summaries, metadata.
    Compacted,
}

/// What ADDRESS selects; a range must run forwards.
fn parse_address(s: Option<&str>) -> Result<Address> {
    let Some(s) = s else { return Ok(Address::All) };
    match address_syntax(s) {
        Some(Address::Range(a, b)) if a >= b => {
            let what = if a == b { "empty" } else { "reversed" };
            Err(hinted(
                format!("the range {s} is {what}: A..B shows seq A up to, not including, B"),
                if a == b {
                    format!("for the one message at {a}, give `{a}`")
                } else {
                    format!("did you mean {b}..{a}?")
                },
            ))
        }
        Some(address) => Ok(address),
        None => Err(anyhow::anyhow!(
            "unknown address {s:?}; expected tool:ID, N, A..B, turn:N, step:N, text:HASH, reasoning:HASH, cov:HASH or compacted"
        )),
    }
}

/// The address `s` spells, if it spells one (a range is not checked here).
fn address_syntax(s: &str) -> Option<Address> {
    let nonempty = |h: &str| (!h.is_empty()).then_some(());
    if s == "compacted" {
        return Some(Address::Compacted);
    }
    if let Some(h) = s.strip_prefix("cov:") {
        nonempty(h)?;
        return Some(Address::Coverage(s.to_string()));
    }
    for prefix in ["text:", "reasoning:", "image:", "other:"] {
        if let Some(h) = s.strip_prefix(prefix) {
            nonempty(h)?;
            return Some(Address::Part(s.to_string()));
        }
    }
    if let Some(id) = s.strip_prefix("tool:") {
        nonempty(id)?;
        return Some(Address::Tool(id.to_string()));
    }
    // A shrunk form's pointer, pasted whole: `view_tool_call("toolu_01A")`.
    if let Some(quoted) = s
        .strip_prefix("view_tool_call(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let id: String = serde_json::from_str(quoted).ok()?;
        nonempty(&id)?;
        return Some(Address::Tool(id));
    }
    if let Some(n) = s.strip_prefix("turn:") {
        return n.parse().ok().map(Address::Turn);
    }
    if let Some(n) = s.strip_prefix("step:") {
        return n.parse().ok().map(Address::Step);
    }
    if let Some((a, b)) = s.split_once("..") {
        let a = if a.is_empty() { 0 } else { a.parse().ok()? };
        let b = if b.is_empty() {
            u64::MAX
        } else {
            b.parse().ok()?
        };
        return Some(Address::Range(a, b));
    }
    s.parse().ok().map(Address::Seq)
}

/// FILE and ADDRESS as given: one positional is an ADDRESS when it reads as
/// one (or, beside `--task`, when no such file exists: a mistyped address),
/// else a FILE; two are FILE then ADDRESS.
pub(crate) fn file_and_address(args: &ShowArgs) -> (Option<&std::path::Path>, Option<&str>) {
    match (&args.source.file, &args.address) {
        (Some(one), None) => match one.to_str() {
            Some(s)
                if address_syntax(s).is_some() || (args.source.task.is_some() && !one.exists()) =>
            {
                (None, Some(s))
            }
            _ => (Some(one), None),
        },
        (file, address) => (file.as_deref(), address.as_deref()),
    }
}

pub fn run(store: &mut Store, ui: &mut Ui, args: &ShowArgs) -> Result<Outcome> {
    let (file, address_text) = file_and_address(args);
    let address = parse_address(address_text)?;
    let source = TaskSource {
        file: file.map(std::path::Path::to_path_buf),
        task: args.source.task.clone(),
        import_as: args.source.import_as.clone(),
        project: args.source.project.clone(),
        input_format: args.source.input_format,
    };
    // A tool call id is unique to its call: without a task named, it is
    // looked for in every task.
    if let Address::Tool(id) = &address
        && source.file.is_none()
        && source.task.is_none()
        && source.project.is_none()
    {
        return show_tool_anywhere(store, ui, id, args.json);
    }
    let task = resolve_task(store, ui, &source)?;
    let reader = store.reader();
    match &address {
        Address::Tool(id) => return show_tool(store, ui, &task, id, args.json),
        Address::Part(a) => return show_part(store, ui, &task, a, args.json),
        Address::Coverage(key) => return show_summary(store, ui, &task, key, args.json),
        Address::Compacted => return show_compacted(store, ui, &task, args.json),
        _ => {}
    }
    let rows: Vec<StoredMessage> = match address {
        Address::All => reader.all_messages(&task)?,
        Address::Seq(n) => reader.messages(&task, n, n.saturating_add(1))?,
        Address::Range(a, b) => reader.messages(&task, a, b)?,
        Address::Turn(t) => reader
            .all_messages(&task)?
            .into_iter()
            .filter(|m| m.message.turn == t)
            .collect(),
        Address::Step(s) => reader
            .all_messages(&task)?
            .into_iter()
            .filter(|m| m.message.step == s)
            .collect(),
        Address::Tool(_) | Address::Part(_) | Address::Coverage(_) | Address::Compacted => {
            unreachable!("handled above")
        }
    };
    if rows.is_empty() {
        let stored = reader.message_count(&task)?;
        bail!(
            "nothing at {} in task {} ({} stored{})",
            address_text.unwrap_or("(all)"),
            task,
            plural(stored, "message"),
            match stored {
                0 => String::new(),
                1 => ": seq 0".to_string(),
                n => format!(": seq 0 to {}", n - 1),
            }
        );
    }
    let superseded = superseded_rows(store, &task)?;
    if args.json {
        // JSON Lines: one message a line.
        for r in &rows {
            let mut v = row_json(r);
            if let Some(s) = superseded.get(&r.seq) {
                v["superseded_by_attempt"] = json!(s.by_attempt);
            }
            ui.json_kind("message", &v)?;
        }
        return Ok(Outcome::Ok);
    }
    for r in &rows {
        let m = &r.message;
        let mut header = format!(
            "#{} · turn {} · step {} · {}/{} · line {}",
            r.seq,
            m.turn,
            m.step,
            m.role.as_str(),
            m.kind.as_str(),
            m.line
        );
        if let Some(g) = &m.gen_id {
            header.push_str(&format!(" · {g}"));
        }
        if let Some(ts) = &m.timestamp {
            header.push_str(&format!(" · {ts}"));
        }
        if let Some(s) = superseded.get(&r.seq) {
            header.push_str(&format!(
                " · superseded: the answer to attempt {}, which the client sent again (attempt {}); not in the history",
                s.attempt, s.by_attempt
            ));
        }
        ui.line(style::CYAN, &visible_line(&format!("── {header}")))?;
        if let Some(u) = &m.usage {
            ui.line(
                style::DIM,
                &format!(
                    "usage: input {} · cache read {} · cache write {} · output {}",
                    u.input_tokens,
                    u.cache_read_input_tokens,
                    u.cache_creation_input_tokens,
                    u.output_tokens
                ),
            )?;
        }
        for b in &m.content {
            writeln!(ui.out, "{}", visible(&block_text(b)))?;
        }
    }
    Ok(Outcome::Ok)
}

/// One part, found by its address among the parts rebuilt from the record.
fn show_part(
    store: &Store,
    ui: &mut Ui,
    task: &str,
    address: &str,
    json_out: bool,
) -> Result<Outcome> {
    let rows = store.reader().history_rows(task)?;
    let parts = reconstruct(&rows, &CharsPerToken::default());
    let Some(p) = parts.iter().find(|p| p.address == address) else {
        bail!("no part {address} in task {task}");
    };
    let PartBody::Block { block, .. } = &p.body else {
        bail!("{address} is not a text, reasoning or image part");
    };
    if json_out {
        let v = json!({"address": p.address, "turn": p.turn, "step": p.step, "kind": p.kind, "tokens": p.tokens, "block": block});
        ui.json_kind("part", &v)?;
        return Ok(Outcome::Ok);
    }
    let header = format!(
        "── part {} · turn {} · step {} · {} · {}",
        p.address,
        p.turn,
        p.step,
        p.kind.as_str(),
        plural(p.tokens, "token")
    );
    ui.line(style::CYAN, &header)?;
    writeln!(ui.out, "{}", visible(&block_text(block)))?;
    Ok(Outcome::Ok)
}

/// A stored floor summary, in full.
fn show_summary(
    store: &Store,
    ui: &mut Ui,
    task: &str,
    key: &str,
    json_out: bool,
) -> Result<Outcome> {
    // Summaries are content-addressed: the same key in two profiles is one
    // summary (the first profile's copy is shown).
    let mut entries: std::collections::BTreeMap<String, Value> = Default::default();
    for (_, k, v) in store.reader().all_entries(task)? {
        entries.entry(k).or_insert(v);
    }
    let matches: Vec<_> = entries.iter().filter(|(k, _)| k.starts_with(key)).collect();
    let (key, v) = match matches.as_slice() {
        [one] => *one,
        [] => {
            return Err(hinted(
                format!("no stored summary {key} in task {task}"),
                format!("`compactor show --task {task} compacted` lists them"),
            ));
        }
        _ => {
            return Err(hinted(
                format!("{key} matches {} summaries", matches.len()),
                "give more of the hash",
            ));
        }
    };
    let Some(Entry::Summary {
        text,
        covers,
        summarizer,
        extends,
        minted_turn,
        minted_call,
    }) = Entry::from_value(v)
    else {
        bail!("{key} is not a summary");
    };
    if json_out {
        ui.json_kind("summary", &json!({"key": key, "entry": v}))?;
        return Ok(Outcome::Ok);
    }
    let mut header = format!(
        "── summary {key} · folds {} · {summarizer} · minted at call {minted_call} (turn {minted_turn})",
        plural(covers, "part")
    );
    if let Some(e) = extends {
        header.push_str(&format!(" · extends {e}"));
    }
    ui.line(style::CYAN, &header)?;
    writeln!(ui.out, "{}", visible(text.trim_end()))?;
    Ok(Outcome::Ok)
}

/// What the store holds for the task: the reduced forms and summaries every
/// later call restores, and the metadata entries.
fn show_compacted(store: &Store, ui: &mut Ui, task: &str, json_out: bool) -> Result<Outcome> {
    let reader = store.reader();
    let entries = reader.all_entries(task)?;
    let profiles = reader.profiles(task)?;
    let forms = reader.tool_forms(task)?;
    if json_out {
        let list: Vec<Value> = entries
            .iter()
            .map(|(p, k, v)| json!({"profile": p, "key": k, "entry": v}))
            .collect();
        ui.json_kind(
            "compacted",
            &json!({"entries": list, "tool_forms_minted": forms.len()}),
        )?;
        return Ok(Outcome::Ok);
    }
    writeln!(
        ui.out,
        "{} minted at import; {} in the compaction store",
        plural(forms.len(), "tool form"),
        plural(entries.len(), "entry")
    )?;
    let mut current: Option<&str> = None;
    for (profile, key, v) in &entries {
        if current != Some(profile.as_str()) {
            current = Some(profile);
            let settings = profiles
                .iter()
                .find(|p| &p.profile == profile)
                .and_then(|p| p.settings.as_ref())
                .map_or_else(
                    || "written before profiles existed".to_string(),
                    describe_profile,
                );
            ui.line(style::BOLD, &format!("profile {profile}: {settings}"))?;
        }
        let what = match Entry::from_value(v) {
            Some(Entry::Shrink { rule, .. }) => {
                let id = key.strip_prefix("tool:").unwrap_or(key);
                match forms.get(id) {
                    Some(f) => format!(
                        "shrunk by {rule}: {} → {}",
                        f.raw_tokens,
                        plural(f.form_tokens, "token")
                    ),
                    None => format!("shrunk by {rule}"),
                }
            }
            Some(Entry::Drop) => "dropped to its empty shell (disposable)".to_string(),
            Some(Entry::Placeholder) => {
                "historical images and inline files replaced by a line of text".to_string()
            }
            Some(Entry::Summary {
                covers,
                summarizer,
                minted_call,
                ..
            }) => format!(
                "summary of {} ({summarizer}), minted at call {minted_call}",
                plural(covers, "part")
            ),
            Some(Entry::Anchor {
                turn, real_tokens, ..
            }) => format!(
                "calibration anchor: {} at the end of turn {turn}",
                plural(real_tokens, "token")
            ),
            Some(Entry::Gate {
                turn,
                call,
                streak_after,
                ..
            }) => format!(
                "anti-thrash: {streak_after} ineffective in a row at call {call} (turn {turn})"
            ),
            None => "(unrecognised entry)".to_string(),
        };
        writeln!(ui.out, "{key}  {what}")?;
    }
    Ok(Outcome::Ok)
}

/// The rows of `task` a live client's retry superseded, by `seq`.
fn superseded_rows(
    store: &Store,
    task: &str,
) -> Result<std::collections::HashMap<u64, crate::store::ProxySuperseded>> {
    Ok(store
        .reader()
        .proxy_superseded(task)?
        .into_iter()
        .map(|s| (s.seq, s))
        .collect())
}

fn row_json(r: &StoredMessage) -> Value {
    let m = &r.message;
    json!({
        "seq": r.seq,
        "role": m.role,
        "kind": m.kind,
        "turn": m.turn,
        "step": m.step,
        "gen_id": m.gen_id,
        "usage": m.usage,
        "source": r.source_path,
        "line": m.line,
        "uuid": m.source_uuid,
        "timestamp": m.timestamp,
        "content": m.content,
    })
}

/// A task's rows less those a live client's retry superseded.
fn history_of(store: &Store, task: &str) -> Result<Vec<StoredMessage>> {
    let superseded = superseded_rows(store, task)?;
    Ok(store
        .reader()
        .all_messages(task)?
        .into_iter()
        .filter(|r| !superseded.contains_key(&r.seq))
        .collect())
}

fn show_tool(
    store: &Store,
    ui: &mut Ui,
    task: &str,
    spec: &str,
    json_out: bool,
) -> Result<Outcome> {
    let rows = history_of(store, task)?;
    let (prefix, pick) = tool_call::split_pick(spec);
    // An id that itself ends in `@N` is that id.
    let (prefix, pick) = if pick.is_some() && tool_call::ids_starting(&rows, spec) == [spec] {
        (spec, None)
    } else {
        (prefix, pick)
    };
    let call = ToolCall::in_rows(store, task, &rows, prefix, pick)?;
    print_tool(ui, &call, json_out)
}

/// `show tool:ID` with no task named: the call wherever it is recorded,
/// newest task first. The same call recorded in several tasks (a session
/// imported and recorded live, a conversation that went on in a linked
/// task) is one call; different calls under one id are listed to pick from.
fn show_tool_anywhere(store: &Store, ui: &mut Ui, spec: &str, json_out: bool) -> Result<Outcome> {
    let reader = store.reader();
    let mut tasks = reader.task_activity()?;
    tasks.sort_by_key(|(id, _, row)| std::cmp::Reverse((*row, id.clone())));
    let (prefix, pick) = tool_call::split_pick(spec);
    // Every tool call id starting with `prefix`, in any task.
    // The tasks holding one, with their rows, newest first.
    let mut ids: Vec<String> = Vec::new();
    let mut holders: Vec<(String, Vec<StoredMessage>)> = Vec::new();
    for (task, _, _) in &tasks {
        let rows = history_of(store, task)?;
        let mut holds = false;
        for r in rows.iter().filter(|r| r.message.kind == Kind::Generation) {
            for b in &r.message.content {
                if let Block::ToolUse { id, .. } = b
                    && id.starts_with(prefix)
                {
                    holds = true;
                    if !ids.contains(id) {
                        ids.push(id.clone());
                    }
                }
            }
        }
        if holds {
            holders.push((task.clone(), rows));
        }
    }
    // The id (the spec itself, else `ID` of `ID@N`, else the one id the
    // prefix starts) and N.
    let has = |id: &str| ids.iter().any(|i| i == id);
    let (id, pick) = if has(spec) {
        (spec.to_string(), None)
    } else if pick.is_some() && has(prefix) {
        (prefix.to_string(), pick)
    } else {
        match ids.as_slice() {
            [one] => (one.clone(), pick),
            [] => {
                return Err(hinted(
                    format!(
                        "no tool call {} is recorded in any task",
                        visible_line(spec)
                    ),
                    "check the id against the pointer (view_tool_call(\"ID\")); `compactor tasks` lists the tasks",
                ));
            }
            many => {
                let all: Vec<&str> = many.iter().map(String::as_str).collect();
                return Err(tool_call::ambiguous(prefix, &all));
            }
        }
    };
    // Every task's calls with the id, the same call in several tasks once.
    let mut found: Vec<(String, Vec<ToolCall>)> = Vec::new();
    let mut seen: Vec<CallKey> = Vec::new();
    for (task, rows) in &holders {
        let calls = tool_call::calls_with_id(store, task, rows, &id)?;
        if calls.is_empty() {
            continue;
        }
        let key = |c: &ToolCall| {
            (
                c.name.clone(),
                c.input.clone(),
                c.result.as_ref().map(|(r, e, _)| (r.clone(), *e)),
            )
        };
        if calls.iter().all(|c| seen.contains(&key(c))) {
            continue;
        }
        seen.extend(calls.iter().map(key));
        found.push((task.clone(), calls));
    }
    let call = match found.as_mut_slice() {
        [(task, calls)] => match pick {
            None if calls.len() == 1 => calls.pop().expect("one"),
            _ => {
                let rows = &holders.iter().find(|(t, _)| t == task).expect("a holder").1;
                ToolCall::in_rows(store, task, rows, &id, pick)?
            }
        },
        [] => bail!("no tool call {} is recorded in any task", visible_line(&id)),
        many => {
            let listed: Vec<(&str, &[ToolCall])> = many
                .iter()
                .map(|(t, c)| (t.as_str(), c.as_slice()))
                .collect();
            return Err(tool_call::duplicated(&id, &listed, true));
        }
    };
    print_tool(ui, &call, json_out)
}

/// What makes two recorded calls one call: tool, input and result.
type CallKey = (String, Value, Option<(crate::model::ToolContent, bool)>);

fn print_tool(ui: &mut Ui, call: &ToolCall, json_out: bool) -> Result<Outcome> {
    if json_out {
        ui.json_kind("tool", &call.json())?;
        return Ok(Outcome::Ok);
    }
    // The same bytes as the MCP server's view_tool_call, colour aside.
    let text = call.text()?;
    ui.line(style::CYAN, &text.header)?;
    write!(ui.out, "{}", text.body)?;
    if let Some(f) = &text.form {
        ui.line(style::DIM, f)?;
    }
    Ok(Outcome::Ok)
}

/// A profile's settings in words: the window, ratios, summary budget and summarizer.
pub fn describe_profile(settings: &Value) -> String {
    let b = &settings["budget"];
    format!(
        "window {} · output reserved {} · trigger {} · stop {} · protect {} · summary budget {} · summarizer {}",
        b["window"],
        b["output_reserved"],
        b["trigger_ratio"]
            .as_str()
            .map_or_else(|| b["trigger_ratio"].to_string(), str::to_string),
        b["stop_ratio"]
            .as_str()
            .map_or_else(|| b["stop_ratio"].to_string(), str::to_string),
        b["protect_recent_steps"],
        b["summary_budget_tokens"],
        settings["summarizer"].as_str().unwrap_or("?")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse() {
        assert_eq!(parse_address(None).unwrap(), Address::All);
        assert_eq!(parse_address(Some("12")).unwrap(), Address::Seq(12));
        assert_eq!(parse_address(Some("3..7")).unwrap(), Address::Range(3, 7));
        assert_eq!(parse_address(Some("..7")).unwrap(), Address::Range(0, 7));
        assert_eq!(parse_address(Some("turn:2")).unwrap(), Address::Turn(2));
        assert_eq!(parse_address(Some("step:9")).unwrap(), Address::Step(9));
        assert_eq!(
            parse_address(Some("tool:toolu_1")).unwrap(),
            Address::Tool("toolu_1".into())
        );
        assert!(parse_address(Some("tool:")).is_err());
        assert_eq!(
            parse_address(Some(r#"view_tool_call("toolu_1")"#)).unwrap(),
            Address::Tool("toolu_1".into())
        );
        assert!(parse_address(Some(r#"view_tool_call("")"#)).is_err());
        assert_eq!(
            parse_address(Some("compacted")).unwrap(),
            Address::Compacted
        );
        assert_eq!(
            parse_address(Some("cov:ab12")).unwrap(),
            Address::Coverage("cov:ab12".into())
        );
        assert_eq!(
            parse_address(Some("text:ff00")).unwrap(),
            Address::Part("text:ff00".into())
        );
        assert!(parse_address(Some("cov:")).is_err());
        assert!(parse_address(Some("banana")).is_err());
        let reversed = parse_address(Some("60..40")).unwrap_err();
        assert_eq!(
            reversed.to_string(),
            "the range 60..40 is reversed: A..B shows seq A up to, not including, B"
        );
        let empty = parse_address(Some("7..7")).unwrap_err();
        assert!(empty.to_string().contains("is empty"), "{empty}");
    }
}
