//! `compactor tasks`: one line per task, most recently active first, each
//! task's subagents indented under it, and with a session, the tasks the
//! proxy recorded live of that session.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::Ui;
use super::titles::{cut, title_of};
use crate::cmd::exit::Outcome;
use crate::model::{Kind, Usage};
use crate::store::{ProxyActivity, Store, TaskInfo, stats_of};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  compactor tasks                  the 100-column table, most recently active first
  compactor tasks --wide           full ids, projects, titles and usage
  compactor tasks --json | jq -r 'select(.cwd == \"/home/me/shop\") | .id'")]
pub struct TasksArgs {
    /// Print JSON Lines: one record per task (by id), then the totals.
    #[arg(long)]
    pub json: bool,

    /// Full ids, titles and project paths, and every usage figure (wider than 100 columns).
    #[arg(long, conflicts_with = "json")]
    pub wide: bool,
}

#[derive(Serialize)]
struct TaskRow {
    id: String,
    /// The shortest prefix (8 characters at least, after `live-` for a task
    /// the proxy recorded) that names the task alone.
    short_id: String,
    format: String,
    parent: Option<String>,
    /// The session's summary line, else its first ask (one line, at most 120 characters).
    title: Option<String>,
    /// The project directory the session was recorded in.
    cwd: Option<String>,
    model: Option<String>,
    /// Conversation messages (meta rows excluded).
    messages: u64,
    /// Every stored row, meta rows included: what `import` reports as added.
    rows: u64,
    turns: u64,
    /// Model calls recorded.
    calls: u64,
    /// The same as `calls`, under the name other tools read it by.
    steps: u64,
    tool_calls: u64,
    interrupted_tool_calls: u64,
    orphan_tool_results: u64,
    usage: Usage,
    /// The first and last recorded times: of its lines, and for a task the
    /// proxy recorded, of its calls and answers.
    first_timestamp: Option<String>,
    last_timestamp: Option<String>,
    /// For a task the proxy recorded live: the imported task of the same
    /// client session (its session file), which the table lists it under.
    session_task: Option<String>,
}

/// The widest the table gets without --wide.
const WIDTH: usize = 100;
const MIN_SHORT: usize = 8;
/// How the id of a task the proxy recorded starts.
const LIVE: &str = "live-";
pub fn run(store: &Store, ui: &mut Ui, args: &TasksArgs) -> Result<Outcome> {
    let reader = store.reader();
    let records = reader.tasks()?;
    let ids: Vec<&str> = records.iter().map(|t| t.id.as_str()).collect();
    let live: BTreeMap<String, ProxyActivity> = reader
        .proxy_activity()?
        .into_iter()
        .map(|a| (a.task_id.clone(), a))
        .collect();
    let mut rows = Vec::new();
    for t in &records {
        let msgs = reader.all_messages(&t.id)?;
        let st = stats_of(msgs.iter().map(|s| &s.message));
        let title = title_of(
            t.meta.title.as_deref(),
            msgs.iter()
                .filter(|m| m.message.kind == Kind::Ask)
                .map(|m| m.message.content.as_slice()),
        );
        rows.push(TaskRow {
            short_id: short_id(&t.id, &ids),
            id: t.id.clone(),
            format: t.format.clone(),
            parent: t.parent_id.clone(),
            title,
            cwd: t.meta.cwd.clone(),
            model: t.meta.model.clone(),
            messages: st.messages,
            rows: st.rows,
            turns: st.turns,
            calls: st.steps,
            steps: st.steps,
            tool_calls: st.tool_calls,
            interrupted_tool_calls: st.interrupted_tool_calls,
            orphan_tool_results: st.orphan_tool_results,
            usage: st.usage,
            first_timestamp: earliest(
                st.first_timestamp,
                live.get(&t.id).and_then(|a| a.first.clone()),
            ),
            last_timestamp: std::cmp::max(
                st.last_timestamp,
                live.get(&t.id).and_then(|a| a.last.clone()),
            ),
            session_task: live
                .get(&t.id)
                .and_then(|a| session_task(a.session_id.as_deref()?, &records, &live)),
        });
    }
    if args.json {
        // JSON Lines: one task a line (by id), then the totals record.
        for r in &rows {
            ui.json_kind("task", r)?;
        }
        ui.json_kind(
            "tasks_total",
            &serde_json::json!({
                "tasks": rows.len(),
                "messages": rows.iter().map(|r| r.messages).sum::<u64>(),
                "calls": rows.iter().map(|r| r.calls).sum::<u64>(),
            }),
        )?;
        return Ok(Outcome::Ok);
    }
    if rows.is_empty() {
        ui.note("no tasks yet: import your sessions with `compactor import`");
        return Ok(Outcome::Ok);
    }
    let ordered = by_activity(&rows);
    if args.wide {
        wide(ui, &ordered)?;
    } else {
        narrow(ui, &ordered)?;
    }
    Ok(Outcome::Ok)
}

/// The earlier of two optional times (None only when both are).
fn earliest(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The imported task a live conversation of client session `session`
/// records: a top-level task that is not live, named by that session (its
/// id, else its session id; the first by id).
fn session_task(
    session: &str,
    records: &[TaskInfo],
    live: &BTreeMap<String, ProxyActivity>,
) -> Option<String> {
    let imported = |t: &&TaskInfo| t.parent_id.is_none() && !live.contains_key(&t.id);
    records
        .iter()
        .filter(imported)
        .find(|t| t.id == session)
        .or_else(|| {
            records
                .iter()
                .filter(imported)
                .find(|t| t.meta.session_id.as_deref() == Some(session))
        })
        .map(|t| t.id.clone())
}

/// One line per conversation, most recently active first (then by id): a
/// top-level task, followed by what it is listed with, in the same order:
/// its subagents, and the tasks the proxy recorded live for its session
/// (with theirs). A task whose parent is not stored is listed at the top.
/// A conversation is as recent as its latest line, call or answer.
fn by_activity<'a>(rows: &'a [TaskRow]) -> Vec<(&'a TaskRow, bool)> {
    let key = |r: &TaskRow| (std::cmp::Reverse(r.last_timestamp.clone()), r.id.clone());
    let by_id: BTreeMap<&str, &TaskRow> = rows.iter().map(|r| (r.id.as_str(), r)).collect();
    let up = |r: &'a TaskRow| -> Option<&'a TaskRow> {
        [&r.parent, &r.session_task]
            .into_iter()
            .find_map(|p| by_id.get(p.as_deref()?).copied())
    };
    // Each row's top-level task: up and up again (a cycle, which no import
    // writes, ends where it closes).
    let top_of = |r: &'a TaskRow| -> &'a TaskRow {
        let mut top = r;
        for _ in 0..rows.len() {
            match up(top) {
                Some(p) if p.id != r.id => top = p,
                _ => break,
            }
        }
        top
    };
    let mut groups: BTreeMap<&str, Vec<&TaskRow>> = BTreeMap::new();
    for r in rows {
        groups.entry(top_of(r).id.as_str()).or_default().push(r);
    }
    let mut tops: Vec<(&TaskRow, Vec<&TaskRow>)> = groups
        .into_iter()
        .map(|(id, mut members)| {
            members.retain(|m| m.id != id);
            members.sort_by_key(|r| key(r));
            (by_id[id], members)
        })
        .collect();
    let latest = |(top, members): &(&TaskRow, Vec<&TaskRow>)| {
        members
            .iter()
            .map(|m| m.last_timestamp.clone())
            .fold(top.last_timestamp.clone(), std::cmp::max)
    };
    tops.sort_by_key(|g| (std::cmp::Reverse(latest(g)), g.0.id.clone()));
    let mut out = Vec::new();
    for (top, members) in tops {
        out.push((top, false));
        out.extend(members.into_iter().map(|m| (m, true)));
    }
    out
}

/// The shortest prefix of `id`, at least 8 characters (after `live-` for a
/// task the proxy recorded: 13 in all, as the proxy prints it), that is a
/// prefix of no other task id except the task's own subagents (`id/…`),
/// which a prefix naming the task does not make ambiguous.
fn short_id(id: &str, all: &[&str]) -> String {
    let chars: Vec<(usize, char)> = id.char_indices().collect();
    let min = if id.starts_with(LIVE) {
        LIVE.len() + MIN_SHORT
    } else {
        MIN_SHORT
    };
    for n in min..chars.len() {
        let prefix = &id[..chars[n].0];
        let clash = all.iter().any(|other| {
            *other != id && other.starts_with(prefix) && !other.starts_with(&format!("{id}/"))
        });
        if !clash {
            return prefix.to_string();
        }
    }
    id.to_string()
}

/// A path in at most `n` characters, keeping its end (the project's name).
fn cut_left(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let tail: String = s.chars().skip(count - n + 1).collect();
    format!("…{tail}")
}

/// A project directory under $HOME as `~/…` (the table only; JSON keeps the path).
fn home_relative(cwd: Option<&str>) -> String {
    let Some(cwd) = cwd else {
        return "-".to_string();
    };
    let home = std::env::var("HOME").unwrap_or_default();
    let home = home.trim_end_matches('/');
    match cwd.strip_prefix(home) {
        Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => cwd.to_string(),
    }
}

/// `2026-02-14T09:42:18.245Z` as `2026-02-14 09:42`.
fn minute(ts: Option<&str>) -> String {
    match ts {
        Some(t) if t.len() >= 16 && t.is_char_boundary(16) => t[..16].replacen('T', " ", 1),
        Some(t) => t.to_string(),
        None => "-".to_string(),
    }
}

/// Every recorded token: input, output, cache reads and cache writes.
fn total(u: &Usage) -> u64 {
    u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
}

/// 950, 12.3k, 4.1M: integer arithmetic, so no float formatting.
fn human(n: u64) -> String {
    let scaled = |unit: u64, suffix: &str| {
        let tenths = (n * 10 + unit / 2) / unit;
        if tenths >= 100 {
            format!("{}{suffix}", (n + unit / 2) / unit)
        } else {
            format!("{}.{}{suffix}", tenths / 10, tenths % 10)
        }
    };
    match n {
        0..=999 => n.to_string(),
        1_000..=999_499 => scaled(1_000, "k"),
        999_500..=999_499_999 => scaled(1_000_000, "M"),
        _ => scaled(1_000_000_000, "G"),
    }
}

fn short_format(f: &str) -> &str {
    match f {
        "claude-code" => "claude",
        "openai-chat" => "openai",
        other => other,
    }
}

fn pad(s: &str, n: usize) -> String {
    let len = s.chars().count();
    format!("{s}{}", " ".repeat(n.saturating_sub(len)))
}

fn narrow(ui: &mut Ui, rows: &[(&TaskRow, bool)]) -> Result<()> {
    let id_w = rows
        .iter()
        .filter(|(_, sub)| !sub)
        .map(|(r, _)| r.short_id.chars().count())
        .max()
        .unwrap_or(MIN_SHORT)
        .clamp(MIN_SHORT, 24);
    // ID TITLE PROJECT FORMAT CALLS LAST TOKENS, two spaces apart.
    let (project_w, format_w, calls_w, last_w, tokens_w) = (16, 9, 5, 16, 6);
    let fixed = id_w + project_w + format_w + calls_w + last_w + tokens_w + 2 * 6;
    let title_w = WIDTH.saturating_sub(fixed).max(12);
    let header = format!(
        "{}  {}  {}  {}  {:>calls_w$}  {}  {:>tokens_w$}",
        pad("ID", id_w),
        pad("TITLE", title_w),
        pad("PROJECT", project_w),
        pad("FORMAT", format_w),
        "CALLS",
        pad("LAST", last_w),
        "TOKENS"
    );
    bold_line(ui, &header)?;
    for (r, sub) in rows {
        let (id, title) = if *sub {
            // A subagent: its own part of the id leads the title; a task
            // recorded live, its short id.
            let own = match r.id.rsplit_once('/') {
                Some((_, own)) => own,
                None => &r.short_id,
            };
            let t = match &r.title {
                Some(t) => format!("└ {own}: {t}"),
                None => format!("└ {own}"),
            };
            (String::new(), t)
        } else {
            (r.short_id.clone(), r.title.clone().unwrap_or_default())
        };
        let id = crate::cmd::visible::visible_line(&id).into_owned();
        let title = crate::cmd::visible::visible_line(&title).into_owned();
        let project =
            crate::cmd::visible::visible_line(&home_relative(r.cwd.as_deref())).into_owned();
        let line = format!(
            "{}  {}  {}  {}  {:>calls_w$}  {}  {:>tokens_w$}",
            pad(&cut(&id, id_w), id_w),
            pad(&cut(&title, title_w), title_w),
            pad(&cut_left(&project, project_w), project_w),
            pad(short_format(&r.format), format_w),
            r.calls,
            pad(&minute(r.last_timestamp.as_deref()), last_w),
            human(total(&r.usage)),
        );
        writeln!(ui.out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn wide(ui: &mut Ui, rows: &[(&TaskRow, bool)]) -> Result<()> {
    let id_w = rows
        .iter()
        .map(|(r, sub)| {
            crate::cmd::visible::visible_line(&r.id).chars().count() + if *sub { 2 } else { 0 }
        })
        .max()
        .unwrap_or(4)
        .max(2);
    let vis = |s: &str| crate::cmd::visible::visible_line(s).into_owned();
    let project_w = rows
        .iter()
        .map(|(r, _)| vis(r.cwd.as_deref().unwrap_or("-")).chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    let title_w = 60;
    let header = format!(
        "{}  {}  {}  {:<11}  {:>5}  {:>5}  {:>5}  {:>10}  {:>9}  {:>11}  {:>11}  {:<24}  {:<24}  {}",
        pad("ID", id_w),
        pad("PROJECT", project_w),
        pad("TITLE", title_w),
        "FORMAT",
        "CALLS",
        "TURNS",
        "MSGS",
        "INPUT",
        "OUTPUT",
        "CACHE_READ",
        "CACHE_WRITE",
        "FIRST",
        "LAST",
        "MODEL"
    );
    bold_line(ui, &header)?;
    for (r, sub) in rows {
        let id = if *sub {
            format!("└ {}", r.id)
        } else {
            r.id.clone()
        };
        let line = format!(
            "{}  {}  {}  {:<11}  {:>5}  {:>5}  {:>5}  {:>10}  {:>9}  {:>11}  {:>11}  {:<24}  {:<24}  {}",
            pad(&vis(&id), id_w),
            pad(&vis(r.cwd.as_deref().unwrap_or("-")), project_w),
            pad(
                &cut(&vis(r.title.as_deref().unwrap_or("")), title_w),
                title_w
            ),
            r.format,
            r.calls,
            r.turns,
            r.messages,
            r.usage.input_tokens,
            r.usage.output_tokens,
            r.usage.cache_read_input_tokens,
            r.usage.cache_creation_input_tokens,
            vis(r.first_timestamp.as_deref().unwrap_or("-")),
            vis(r.last_timestamp.as_deref().unwrap_or("-")),
            vis(r.model.as_deref().unwrap_or("-")),
        );
        writeln!(ui.out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// A table's header line, bold on a colour terminal.
fn bold_line(ui: &mut Ui, header: &str) -> Result<()> {
    let line = crate::cmd::style::paint(ui.color, crate::cmd::style::BOLD, header.trim_end());
    writeln!(ui.out, "{line}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_token_counts_round_without_floats() {
        for (n, s) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1.0k"),
            (12_345, "12k"),
            (9_949, "9.9k"),
            (9_950, "10k"),
            (999_499, "999k"),
            (999_500, "1.0M"),
            (172_345, "172k"),
            (16_043_815, "16M"),
            (2_500_000_000, "2.5G"),
        ] {
            assert_eq!(human(n), s, "{n}");
        }
    }

    #[test]
    fn a_short_id_is_unique_but_a_task_and_its_subagents_share_it() {
        let all = [
            "7f3c9a2e-aaaa",
            "7f3c9a2e-bbbb",
            "c2e8d4a1-9f3b",
            "c2e8d4a1-9f3b/agent-a5",
            "proj",
        ];
        assert_eq!(short_id("7f3c9a2e-aaaa", &all), "7f3c9a2e-a");
        assert_eq!(short_id("c2e8d4a1-9f3b", &all), "c2e8d4a1");
        assert_eq!(short_id("proj", &all), "proj");
        let live = ["live-3f2a8c1d9e0b4a77", "live-3f2a8c1d00000000"];
        assert_eq!(short_id(live[0], &live), "live-3f2a8c1d9");
        assert_eq!(short_id("live-0123456789abcdef", &live), "live-01234567");
    }

    #[test]
    fn paths_keep_their_end_and_titles_their_start() {
        assert_eq!(cut_left("/home/dev/projects/tally", 12), "…jects/tally");
        assert_eq!(cut("Fix the rounding bug", 8), "Fix the…");
        assert_eq!(minute(Some("2026-02-14T09:42:18.245Z")), "2026-02-14 09:42");
    }
}
