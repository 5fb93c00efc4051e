//! `compactor diff A B`: views side by side, as a unified diff per message
//! and part. A and B are view files or saved runs (`run:NAME[@CALL]`).
//! Exit 0 when identical, 1 when different, 2 on error.

use std::io::Write;

use anyhow::{Context, Result};
use clap::Args;
use similar::{ChangeTag, TextDiff};

use super::Ui;
use super::errors::hinted;
use super::words::{noun_for, plural};
use crate::cmd::exit::Outcome;
use crate::cmd::style::{self, paint};
use crate::store::{DbLocation, RunStep, Store};
use crate::view::text::block_text;
use crate::view::{View, ViewRole};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor diff before.json after.json\n  compactor diff run:baseline run:tighter --stat\n  compactor diff --task 7f3c run:baseline@40 run:tighter@40 --json"
)]
pub struct DiffArgs {
    /// A view file, or `run:NAME` / `run:NAME@CALL` (a saved run; without @CALL
    /// two runs are compared call by call). A run's name is its task's.
    #[arg(value_name = "A")]
    pub a: String,

    /// The other side.
    #[arg(value_name = "B")]
    pub b: String,

    /// The task whose saved runs `run:NAME` names (an id, a unique prefix
    /// or `latest`). Needed only when a name is saved for several tasks.
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,

    /// Compare runs of two different tasks (different conversations: their
    /// views differ from the first call); refused without it.
    #[arg(long)]
    pub across_tasks: bool,

    /// Print only counts.
    #[arg(long)]
    pub stat: bool,

    /// Print one JSON object: the first divergence and the changed parts.
    #[arg(long, conflicts_with = "stat")]
    pub json: bool,
}

/// One side of a diff.
enum DiffSide {
    /// A parsed view (from a file or a run step).
    View {
        label: String,
        view: View,
        bytes: Vec<u8>,
    },
    /// A file that is not a view: compared as text.
    Text { label: String, bytes: Vec<u8> },
    /// A whole saved run.
    Run { name: String, steps: Vec<RunStep> },
}

pub fn run(db: Option<&DbLocation>, ui: &mut Ui, args: &DiffArgs) -> Result<Outcome> {
    let runs: Vec<&str> = [&args.a, &args.b]
        .iter()
        .filter_map(|s| s.strip_prefix("run:"))
        .collect();
    if runs.is_empty() && (args.task.is_some() || args.across_tasks) {
        return Err(hinted(
            "--task and --across-tasks choose saved runs, and neither side is a run:NAME",
            "drop them to compare two view files",
        ));
    }
    let (store, tasks) = if runs.is_empty() {
        (None, Vec::new())
    } else {
        let loc =
            db.ok_or_else(|| hinted("run: needs a store", "pass --db or set COMPACTOR_DB"))?;
        let store = super::db::open_store_to_read(loc)?;
        let tasks = run_tasks(&store, &runs, args)?;
        (Some(store), tasks)
    };
    let mut tasks = tasks.into_iter();
    let mut load = |spec: &str| -> Result<DiffSide> {
        match spec.strip_prefix("run:") {
            Some(run) => load_run(
                store.as_ref().expect("opened for a run"),
                &tasks.next().expect("a task per run"),
                run,
            ),
            None => load_file(spec),
        }
    };
    let a = load(&args.a)?;
    let b = load(&args.b)?;
    if args.json {
        let (v, differs) = diff_json(a, b);
        ui.json_kind("diff", &v)?;
        return Ok(if differs {
            Outcome::Differs
        } else {
            Outcome::Ok
        });
    }
    let differs = match both_runs(&a, &b) {
        Some(((na, sa), (nb, sb))) => compare_runs(ui, na, sa, nb, sb, args.stat)?,
        None => {
            let (a, b) = (final_view(a), final_view(b));
            compare_sides(ui, &a, &b, args.stat)?
        }
    };
    Ok(if differs {
        Outcome::Differs
    } else {
        Outcome::Ok
    })
}

fn load_file(path: &str) -> Result<DiffSide> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {path}"))?;
    Ok(match View::from_json(&bytes) {
        Ok(view) => DiffSide::View {
            label: path.to_string(),
            view,
            bytes,
        },
        Err(_) => DiffSide::Text {
            label: path.to_string(),
            bytes,
        },
    })
}

/// `run:NAME[@CALL]`'s name.
fn run_name(spec: &str) -> &str {
    spec.split_once('@').map_or(spec, |(n, _)| n)
}

/// The task each of `runs` (the `run:` sides, in order) is read from: the
/// `--task` given, else the one task that saved a run of each name (when a
/// name is saved for several tasks, the one task that saved both names of
/// two runs). Runs of two different tasks are refused unless
/// `--across-tasks`.
fn run_tasks(store: &Store, runs: &[&str], args: &DiffArgs) -> Result<Vec<String>> {
    let reader = store.reader();
    let holders = |name: &str| -> Result<Vec<String>> {
        let tasks: Vec<String> = reader
            .runs_named(name)?
            .into_iter()
            .map(|r| r.task_id)
            .collect();
        if tasks.is_empty() {
            return Err(hinted(
                format!("no saved run named {name:?}"),
                "`compactor runs` lists them",
            ));
        }
        Ok(tasks)
    };
    if let Some(t) = &args.task {
        let task = super::target::find_task(store, t, None)?;
        for spec in runs {
            let name = run_name(spec);
            if reader.run(&task, name)?.is_none() {
                let others = holders(name)?;
                return Err(hinted(
                    format!("task {task} has no saved run named {name:?}"),
                    format!(
                        "it is saved for {}; `compactor runs` lists them",
                        others.join(", ")
                    ),
                ));
            }
        }
        return Ok(vec![task; runs.len()]);
    }
    let found: Vec<Vec<String>> = runs
        .iter()
        .map(|spec| holders(run_name(spec)))
        .collect::<Result<_>>()?;
    let ambiguous = |name: &str, tasks: &[String]| {
        hinted(
            format!(
                "a run named {name:?} is saved for {} tasks: {}",
                tasks.len(),
                tasks.join(", ")
            ),
            "pass --task TASK to say whose",
        )
    };
    let chosen: Vec<String> = match found.as_slice() {
        [one] => match one.as_slice() {
            [t] => vec![t.clone()],
            many => return Err(ambiguous(run_name(runs[0]), many)),
        },
        [a, b] => {
            let both: Vec<&String> = a.iter().filter(|t| b.contains(t)).collect();
            match (both.as_slice(), a.as_slice(), b.as_slice()) {
                ([t], _, _) => vec![(*t).clone(), (*t).clone()],
                ([], [ta], [tb]) => vec![ta.clone(), tb.clone()],
                ([], [_], many) => return Err(ambiguous(run_name(runs[1]), many)),
                ([], many, _) => return Err(ambiguous(run_name(runs[0]), many)),
                (several, _, _) => {
                    return Err(hinted(
                        format!(
                            "runs named {:?} and {:?} are saved for {} tasks: {}",
                            run_name(runs[0]),
                            run_name(runs[1]),
                            several.len(),
                            several
                                .iter()
                                .map(|t| t.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        "pass --task TASK to say whose",
                    ));
                }
            }
        }
        _ => unreachable!("a diff has two sides"),
    };
    if let [ta, tb] = chosen.as_slice()
        && ta != tb
        && !args.across_tasks
    {
        return Err(hinted(
            format!(
                "run {:?} is task {ta}'s and run {:?} is task {tb}'s: runs of two tasks replay different conversations",
                run_name(runs[0]),
                run_name(runs[1])
            ),
            "pass --across-tasks to compare them all the same, or save both runs for one task",
        ));
    }
    Ok(chosen)
}

fn load_run(store: &Store, task: &str, spec: &str) -> Result<DiffSide> {
    let (name, step) = match spec.split_once('@') {
        Some((n, s)) => (
            n,
            Some(s.parse::<u32>().with_context(|| {
                format!("run:{spec}: {s:?} is not a call number; expected run:NAME@CALL")
            })?),
        ),
        None => (spec, None),
    };
    let steps = store.reader().run_steps(task, name)?;
    match step {
        None => Ok(DiffSide::Run {
            name: name.to_string(),
            steps,
        }),
        Some(k) => {
            let s = steps
                .into_iter()
                .find(|s| s.step == k)
                .with_context(|| format!("run {name:?} has no call {k}"))?;
            let bytes = s.view.canonical_bytes();
            Ok(DiffSide::View {
                label: format!("run:{name}@{k}"),
                view: s.view,
                bytes,
            })
        }
    }
}

/// A run compared with a single view stands for its last call.
fn final_view(side: DiffSide) -> DiffSide {
    match side {
        DiffSide::Run { name, mut steps } => match steps.pop() {
            Some(s) => {
                let bytes = s.view.canonical_bytes();
                DiffSide::View {
                    label: format!("run:{name}@{}", s.step),
                    view: s.view,
                    bytes,
                }
            }
            None => DiffSide::Text {
                label: format!("run:{name}"),
                bytes: Vec::new(),
            },
        },
        other => other,
    }
}

fn compare_runs(
    ui: &mut Ui,
    na: &str,
    sa: &[RunStep],
    nb: &str,
    sb: &[RunStep],
    stat: bool,
) -> Result<bool> {
    let common = sa.len().min(sb.len());
    let first = (0..common).find(|&i| sa[i].view != sb[i].view || sa[i].step != sb[i].step);
    let differing = (0..common).filter(|&i| sa[i].view != sb[i].view).count();
    match first {
        None if sa.len() == sb.len() => {
            writeln!(
                ui.out,
                "runs {na} and {nb} are identical over {}",
                plural(sa.len(), "call")
            )?;
            Ok(false)
        }
        None => {
            writeln!(
                ui.out,
                "runs agree over their first {}; {na} has {}, {nb} has {}",
                plural(common, "call"),
                plural(sa.len(), "call"),
                sb.len()
            )?;
            Ok(true)
        }
        Some(i) => {
            writeln!(
                ui.out,
                "runs {na} and {nb} first diverge at call {} (turn {}); {differing} of {} common {} {}",
                sa[i].step,
                sa[i].turn,
                common,
                noun_for(common, "call"),
                if differing == 1 { "differs" } else { "differ" }
            )?;
            let side = |name: &str, s: &RunStep| DiffSide::View {
                label: format!("run:{name}@{}", s.step),
                view: s.view.clone(),
                bytes: s.view.canonical_bytes(),
            };
            compare_sides(ui, &side(na, &sa[i]), &side(nb, &sb[i]), stat)?;
            Ok(true)
        }
    }
}

fn compare_sides(ui: &mut Ui, a: &DiffSide, b: &DiffSide, stat: bool) -> Result<bool> {
    let both_views = matches!((a, b), (DiffSide::View { .. }, DiffSide::View { .. }));
    // Render both sides the same way: per message and part when both are
    // views, else both as their raw text.
    let (la, ba, ta) = rendered(a, both_views);
    let (lb, bb, tb) = rendered(b, both_views);
    if ba == bb {
        if !stat {
            writeln!(ui.out, "{la} and {lb} are identical")?;
        } else {
            writeln!(ui.out, "0 messages differ, +0 −0 lines")?;
        }
        return Ok(false);
    }
    let first_byte = ba
        .iter()
        .zip(&bb)
        .position(|(x, y)| x != y)
        .unwrap_or(ba.len().min(bb.len()));
    let diff = TextDiff::from_lines(&ta, &tb);
    if stat {
        let (mut plus, mut minus) = (0u64, 0u64);
        for c in diff.iter_all_changes() {
            match c.tag() {
                ChangeTag::Insert => plus += 1,
                ChangeTag::Delete => minus += 1,
                ChangeTag::Equal => {}
            }
        }
        let messages = match (a, b) {
            (DiffSide::View { view: va, .. }, DiffSide::View { view: vb, .. }) => {
                let n = va.messages.len().max(vb.messages.len());
                let d = (0..n)
                    .filter(|&i| va.messages.get(i) != vb.messages.get(i))
                    .count();
                let verb = if d == 1 { "differs" } else { "differ" };
                format!("{d} of {} {verb}", plural(n, "message"))
            }
            _ => "compared as text".to_string(),
        };
        writeln!(
            ui.out,
            "{messages}, +{plus} −{minus} {}, first difference at byte {first_byte}",
            noun_for(plus + minus, "line")
        )?;
        return Ok(true);
    }
    if !both_views {
        writeln!(ui.out, "(not both views: compared as text)")?;
    }
    writeln!(ui.out, "first difference at byte {first_byte}")?;
    if !both_views {
        // A view file is one long line: show where it changes.
        let ex = |b: &[u8]| crate::cmd::visible::visible_line(&excerpt(b, first_byte)).into_owned();
        writeln!(ui.out, "  {la}: {}", ex(&ba))?;
        writeln!(ui.out, "  {lb}: {}", ex(&bb))?;
    }
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&la, &lb)
        .to_string();
    let text = crate::cmd::visible::visible(&text);
    for line in text.lines() {
        let styled = if line.starts_with("+++") || line.starts_with("---") {
            paint(ui.color, style::BOLD, line)
        } else if line.starts_with('+') {
            paint(ui.color, style::GREEN, line)
        } else if line.starts_with('-') {
            paint(ui.color, style::RED, line)
        } else if line.starts_with("@@") {
            paint(ui.color, style::CYAN, line)
        } else {
            line.to_string()
        };
        writeln!(ui.out, "{styled}")?;
    }
    Ok(true)
}

/// Up to 40 bytes either side of `at`, control characters escaped.
fn excerpt(bytes: &[u8], at: usize) -> String {
    let start = at.saturating_sub(40);
    let end = (at + 40).min(bytes.len());
    let text: String = String::from_utf8_lossy(&bytes[start.min(end)..end])
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    format!(
        "{}{text}{}",
        if start > 0 { "…" } else { "" },
        if end < bytes.len() { "…" } else { "" }
    )
}

/// A side's label, bytes, and text rendering: one section per message and
/// part for a view (`as_view`), else the raw text.
fn rendered(s: &DiffSide, as_view: bool) -> (String, Vec<u8>, String) {
    match s {
        DiffSide::View { label, view, bytes } if as_view => {
            (label.clone(), bytes.clone(), render_view(view))
        }
        DiffSide::View { label, bytes, .. } | DiffSide::Text { label, bytes } => (
            label.clone(),
            bytes.clone(),
            String::from_utf8_lossy(bytes).into_owned(),
        ),
        DiffSide::Run { name, .. } => (format!("run:{name}"), Vec::new(), String::new()),
    }
}

fn render_view(v: &View) -> String {
    let mut out = String::new();
    for (i, m) in v.messages.iter().enumerate() {
        let role = match m.role {
            ViewRole::User => "user",
            ViewRole::Assistant => "assistant",
        };
        out.push_str(&format!("=== message {i} · {role}\n"));
        for (j, b) in m.content.iter().enumerate() {
            out.push_str(&format!("--- part {i}.{j}\n"));
            out.push_str(&block_text(b));
            out.push('\n');
        }
    }
    out
}

/// A saved run: its name and steps.
type NamedRun<'a> = (&'a str, &'a [RunStep]);

/// Both sides, when both are saved runs.
fn both_runs<'a>(a: &'a DiffSide, b: &'a DiffSide) -> Option<(NamedRun<'a>, NamedRun<'a>)> {
    match (a, b) {
        (
            DiffSide::Run { name, steps },
            DiffSide::Run {
                name: nb,
                steps: sb,
            },
        ) => Some(((name, steps), (nb, sb))),
        _ => None,
    }
}

/// `diff --json`: where two sides first diverge and which parts changed.
fn diff_json(a: DiffSide, b: DiffSide) -> (serde_json::Value, bool) {
    use serde_json::json;
    let mut out = json!({"a": label(&a), "b": label(&b)});
    let (a, b) = match both_runs(&a, &b) {
        Some(((na, sa), (nb, sb))) => {
            let common = sa.len().min(sb.len());
            let first = (0..common).find(|&i| sa[i].view != sb[i].view || sa[i].step != sb[i].step);
            out["calls_compared"] = common.into();
            out["calls_differing"] = (0..common)
                .filter(|&i| sa[i].view != sb[i].view)
                .count()
                .into();
            out["calls"] = json!({"a": sa.len(), "b": sb.len()});
            match first {
                None => {
                    let differs = sa.len() != sb.len();
                    out["identical"] = (!differs).into();
                    out["first_divergence"] = serde_json::Value::Null;
                    out["changed"] = json!([]);
                    return (out, differs);
                }
                Some(i) => {
                    out["first_divergence"] = json!({"call": sa[i].step, "turn": sa[i].turn});
                    let side = |name: &str, s: &RunStep| DiffSide::View {
                        label: format!("run:{name}@{}", s.step),
                        view: s.view.clone(),
                        bytes: s.view.canonical_bytes(),
                    };
                    (side(na, &sa[i]), side(nb, &sb[i]))
                }
            }
        }
        None => (final_view(a), final_view(b)),
    };
    let (_, ba, _) = rendered(&a, false);
    let (_, bb, _) = rendered(&b, false);
    let differs = ba != bb;
    out["identical"] = (!differs).into();
    out["first_byte"] = if differs {
        ba.iter()
            .zip(&bb)
            .position(|(x, y)| x != y)
            .unwrap_or(ba.len().min(bb.len()))
            .into()
    } else {
        serde_json::Value::Null
    };
    if out.get("first_divergence").is_none() {
        out["first_divergence"] = serde_json::Value::Null;
    }
    let mut changed = Vec::new();
    if let (DiffSide::View { view: va, .. }, DiffSide::View { view: vb, .. }) = (&a, &b) {
        let role = |m: Option<&crate::view::ViewMessage>| {
            m.map(|m| match m.role {
                ViewRole::User => "user",
                ViewRole::Assistant => "assistant",
            })
        };
        for i in 0..va.messages.len().max(vb.messages.len()) {
            let (ma, mb) = (va.messages.get(i), vb.messages.get(i));
            if ma == mb {
                continue;
            }
            if role(ma) != role(mb) {
                changed.push(json!({"message": i, "part": null, "a": role(ma), "b": role(mb)}));
            }
            let n = ma
                .map_or(0, |m| m.content.len())
                .max(mb.map_or(0, |m| m.content.len()));
            for j in 0..n {
                let pa = ma.and_then(|m| m.content.get(j)).map(block_text);
                let pb = mb.and_then(|m| m.content.get(j)).map(block_text);
                if pa != pb {
                    changed.push(json!({"message": i, "part": j, "a": pa, "b": pb}));
                }
            }
        }
    } else {
        out["compared_as"] = "text".into();
    }
    out["changed"] = changed.into();
    (out, differs)
}

fn label(s: &DiffSide) -> String {
    match s {
        DiffSide::View { label, .. } | DiffSide::Text { label, .. } => label.clone(),
        DiffSide::Run { name, .. } => format!("run:{name}"),
    }
}
