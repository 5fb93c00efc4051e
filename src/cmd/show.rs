//! `compactor show --task T [ADDRESS]`: the record, one message, or a tool
//! call's raw input and output (the offline `view_tool_call`).

use std::io::Write;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::Ui;
use crate::cli::ShowArgs;
use crate::exit::Outcome;
use crate::model::{Block, Kind};
use crate::render::{block_text, tool_content_text};
use crate::store::{Store, StoredMessage};
use crate::style::{self, paint};

/// What an ADDRESS selects.
#[derive(Debug, PartialEq, Eq)]
enum Address {
    All,
    Seq(u64),
    Range(u64, u64),
    Turn(u32),
    Step(u32),
    Tool(String),
}

fn parse_address(s: Option<&str>) -> Result<Address> {
    let Some(s) = s else { return Ok(Address::All) };
    let bad =
        || anyhow::anyhow!("unknown address {s:?}; expected tool:ID, N, A..B, turn:N or step:N");
    if let Some(id) = s.strip_prefix("tool:") {
        if id.is_empty() {
            return Err(bad());
        }
        return Ok(Address::Tool(id.to_string()));
    }
    if let Some(n) = s.strip_prefix("turn:") {
        return Ok(Address::Turn(n.parse().map_err(|_| bad())?));
    }
    if let Some(n) = s.strip_prefix("step:") {
        return Ok(Address::Step(n.parse().map_err(|_| bad())?));
    }
    if let Some((a, b)) = s.split_once("..") {
        let a = if a.is_empty() {
            0
        } else {
            a.parse().map_err(|_| bad())?
        };
        let b = if b.is_empty() {
            u64::MAX
        } else {
            b.parse().map_err(|_| bad())?
        };
        return Ok(Address::Range(a, b));
    }
    Ok(Address::Seq(s.parse().map_err(|_| bad())?))
}

pub fn run(store: &Store, ui: &mut Ui, args: &ShowArgs) -> Result<Outcome> {
    let reader = store.reader();
    if reader.task(&args.task)?.is_none() {
        bail!(
            "unknown task {:?}; `compactor tasks` lists the imported ones",
            args.task
        );
    }
    let address = parse_address(args.address.as_deref())?;
    if let Address::Tool(id) = &address {
        return show_tool(store, ui, &args.task, id, args.json);
    }
    let rows: Vec<StoredMessage> = match address {
        Address::All => reader.all_messages(&args.task)?,
        Address::Seq(n) => reader.messages(&args.task, n, n.saturating_add(1))?,
        Address::Range(a, b) => reader.messages(&args.task, a, b)?,
        Address::Turn(t) => reader
            .all_messages(&args.task)?
            .into_iter()
            .filter(|m| m.message.turn == t)
            .collect(),
        Address::Step(s) => reader
            .all_messages(&args.task)?
            .into_iter()
            .filter(|m| m.message.step == s)
            .collect(),
        Address::Tool(_) => unreachable!("handled above"),
    };
    if rows.is_empty() {
        bail!(
            "nothing at {} in task {} ({} messages stored)",
            args.address.as_deref().unwrap_or("(all)"),
            args.task,
            reader.message_count(&args.task)?
        );
    }
    if args.json {
        let v: Vec<Value> = rows.iter().map(row_json).collect();
        // Serialise first: a closed pipe must surface as an io::Error (exit 0).
        let text = serde_json::to_string_pretty(&v)?;
        writeln!(ui.out, "{text}")?;
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
        writeln!(
            ui.out,
            "{}",
            paint(ui.color, style::CYAN, &format!("── {header}"))
        )?;
        if let Some(u) = &m.usage {
            writeln!(
                ui.out,
                "{}",
                paint(
                    ui.color,
                    style::DIM,
                    &format!(
                        "usage: input {} · cache read {} · cache write {} · output {}",
                        u.input_tokens,
                        u.cache_read_input_tokens,
                        u.cache_creation_input_tokens,
                        u.output_tokens
                    )
                )
            )?;
        }
        for b in &m.content {
            writeln!(ui.out, "{}", block_text(b))?;
        }
    }
    Ok(Outcome::Ok)
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

fn show_tool(store: &Store, ui: &mut Ui, task: &str, id: &str, json_out: bool) -> Result<Outcome> {
    let reader = store.reader();
    let rows = reader.all_messages(task)?;
    let mut call = None;
    let mut result = None;
    for r in &rows {
        for b in &r.message.content {
            match b {
                Block::ToolUse { id: i, name, input }
                    if i == id && r.message.kind == Kind::Generation =>
                {
                    call.get_or_insert((r, name.clone(), input.clone()));
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } if tool_use_id == id => {
                    result.get_or_insert((r, content.clone(), *is_error));
                }
                _ => {}
            }
        }
    }
    let Some((call_row, name, input)) = call else {
        bail!("no tool call {id} in task {task}");
    };
    let form = reader.tool_form(task, id)?;
    if json_out {
        let v = json!({
            "id": id,
            "name": name,
            "input": input,
            "turn": call_row.message.turn,
            "step": call_row.message.step,
            "line": call_row.message.line,
            "result": result.as_ref().map(|(r, c, e)| json!({"content": c, "is_error": e, "line": r.message.line})),
            "interrupted": result.is_none(),
            "compacted_form": form.as_ref().map(|f| json!({"rule": f.rule, "raw_tokens": f.raw_tokens, "form_tokens": f.form_tokens, "form": f.form})),
        });
        // Serialise first: a closed pipe must surface as an io::Error (exit 0).
        let text = serde_json::to_string_pretty(&v)?;
        writeln!(ui.out, "{text}")?;
        return Ok(Outcome::Ok);
    }
    writeln!(
        ui.out,
        "{}",
        paint(
            ui.color,
            style::CYAN,
            &format!(
                "── tool call {name} {id} · turn {} · step {} · line {}",
                call_row.message.turn, call_row.message.step, call_row.message.line
            )
        )
    )?;
    writeln!(ui.out, "input:\n{}", serde_json::to_string_pretty(&input)?)?;
    match &result {
        Some((r, content, is_error)) => {
            writeln!(
                ui.out,
                "output{} (line {}):\n{}",
                if *is_error { " · error" } else { "" },
                r.message.line,
                tool_content_text(content)
            )?;
        }
        None => writeln!(ui.out, "output: none recorded (the call was interrupted)")?,
    }
    if let Some(f) = form {
        writeln!(
            ui.out,
            "{}",
            paint(
                ui.color,
                style::DIM,
                &format!(
                    "compacted form: {} · {} → {} tokens",
                    f.rule, f.raw_tokens, f.form_tokens
                )
            )
        )?;
    }
    Ok(Outcome::Ok)
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
        assert!(parse_address(Some("banana")).is_err());
    }
}
