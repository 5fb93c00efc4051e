//! `compactor report`: the HTML page's structure against `replay --json` of the
//! same fixture, its self-containment, its escaping of transcript text, and
//! byte-identical output.

use std::collections::BTreeMap;
use std::fs;

use serde_json::Value;

use crate::util::{
    FOLD, SHRINK_FLOOR, SHRINK_FLOOR_CALLS, SHRINK_FLOOR_TASK, TENANT, TENANT_TASK, TestEnv, args,
};

/// Render the report of a fixture (imported through FILE) into `out`, and return the page.
fn report(env: &TestEnv, fixture: &str, out: &str, budget: &[&str]) -> String {
    let path = env.fixture(fixture);
    let run = env.run(&args(&["report", &path, "-o", out], budget));
    run.success();
    assert!(
        run.stderr.contains(&format!("wrote {out}")),
        "{}",
        run.snapshot()
    );
    fs::read_to_string(env.work().join(out)).expect("the report was written")
}

fn replay_steps(env: &TestEnv, task: &str, budget: &[&str]) -> Vec<Value> {
    let run = env.run(&args(&["replay", "--task", task, "--json"], budget));
    run.success();
    run.json()["calls"].as_array().unwrap().clone()
}

/// The value of attribute `name` in a tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// Every start tag `<name …>` in the page, as its text.
fn tags<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&open) {
        let end = rest[i..].find('>').expect("tag closes") + i;
        out.push(&rest[i..=end]);
        rest = &rest[end..];
    }
    out
}

/// The `(x, y)` points of the polyline for `series` in the SVG with `svg_id`.
fn series(html: &str, svg_id: &str, series: &str) -> Vec<(u64, u64)> {
    let svg = svg_of(html, svg_id);
    let line = tags(svg, "polyline")
        .into_iter()
        .find(|t| attr(t, "data-series") == Some(series))
        .unwrap_or_else(|| panic!("no {series} polyline in #{svg_id}"));
    attr(line, "points")
        .unwrap()
        .split(' ')
        .map(|p| {
            let (x, y) = p.split_once(',').expect("x,y");
            (x.parse().expect("integer x"), y.parse().expect("integer y"))
        })
        .collect()
}

fn svg_of<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no svg #{id}"));
    let end = html[start..].find("</svg>").unwrap() + start;
    &html[start..end]
}

/// Every markup tag of the page (`<name …>`), lower-cased. Transcript text is
/// escaped, so a `<` followed by a letter is always compactor's own markup.
fn all_tags(html: &str) -> Vec<String> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let at = i + off;
        if b.get(at + 1).is_some_and(|c| c.is_ascii_alphabetic()) {
            let end = html[at..].find('>').expect("tag closes") + at;
            out.push(html[at..=end].to_ascii_lowercase());
            i = end;
        } else {
            i = at + 1;
        }
    }
    out
}

/// No request leaves the page: no element that loads anything, no remote
/// src/href, no @import, no url() other than to a fragment of the page.
fn assert_self_contained(html: &str) {
    let tags = all_tags(html);
    assert!(tags.len() > 100, "the page has markup");
    for tag in &tags {
        let name: String = tag[1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        assert!(
            ![
                "link",
                "img",
                "iframe",
                "object",
                "embed",
                "video",
                "audio",
                "source",
                "base",
                "form",
                "image",
                "use",
                "foreignobject"
            ]
            .contains(&name.as_str()),
            "the page has a <{name}> element: {tag}"
        );
        for a in ["src", "href", "action", "srcset", "xlink:href", "data"] {
            if let Some(v) = attr(tag, a) {
                assert!(
                    !(v.starts_with("http:") || v.starts_with("https:") || v.starts_with("//")),
                    "remote {a} in {tag}"
                );
            }
        }
        for (i, _) in tag.match_indices("url(") {
            assert!(tag[i + 4..].starts_with('#'), "url() to a resource: {tag}");
        }
        if name == "script" {
            assert!(attr(tag, "src").is_none(), "an external script: {tag}");
        }
    }
    // Exactly the two scripts compactor writes: the data block and the inline code.
    assert_eq!(
        tags.iter().filter(|t| t.starts_with("<script")).count(),
        2,
        "unexpected <script>"
    );
    assert!(html.contains("<script type=\"application/json\" id=\"calls\">"));
    let style_start = html.find("<style>").expect("inline CSS") + "<style>".len();
    let style = &html[style_start..html.find("</style>").unwrap()];
    assert!(!style.contains("@import"), "the CSS imports");
    assert!(!style.contains("url("), "the CSS loads a resource");
}

#[test]
fn the_context_chart_has_one_point_per_call_and_markers_where_tiers_fired() {
    let env = TestEnv::new();
    let html = report(&env, SHRINK_FLOOR, "report.html", &FOLD);
    let steps = replay_steps(&env, SHRINK_FLOOR_TASK, &FOLD);
    assert_eq!(steps.len() as u64, SHRINK_FLOOR_CALLS);

    let view = series(&html, "ctx", "compacted");
    let raw = series(&html, "ctx", "raw-estimated");
    assert_eq!(view.len(), steps.len(), "one compacted point per call");
    assert_eq!(raw.len(), steps.len(), "one raw point per call");
    assert!(
        view.windows(2).all(|w| w[0].0 < w[1].0),
        "calls go left to right"
    );
    assert!(svg_of(&html, "ctx").contains(&format!("data-calls=\"{}\"", steps.len())));
    // Higher token counts are drawn higher (smaller y), call by call.
    for (i, a) in steps.iter().enumerate() {
        for (j, b) in steps.iter().enumerate() {
            if a["tokens_after"].as_u64() > b["tokens_after"].as_u64() {
                assert!(view[i].1 <= view[j].1, "calls {} and {}", i + 1, j + 1);
            }
        }
    }

    // The markers: exactly the calls where tiers fired, with those tiers, at the call's x.
    let expected: BTreeMap<u64, String> = steps
        .iter()
        .filter(|s| !s["tiers_fired"].as_array().unwrap().is_empty())
        .map(|s| {
            let tiers: Vec<&str> = s["tiers_fired"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            (s["call"].as_u64().unwrap(), tiers.join(","))
        })
        .collect();
    assert!(
        expected.len() >= 2,
        "the fixture fires tiers under this budget"
    );
    let mut markers = BTreeMap::new();
    for tag in tags(svg_of(&html, "ctx"), "path") {
        if !attr(tag, "class").is_some_and(|c| c.split(' ').any(|c| c == "tier")) {
            continue;
        }
        let call: u64 = attr(tag, "data-call").unwrap().parse().unwrap();
        let d = attr(tag, "d").unwrap();
        let x: u64 = d[1..d.find(',').unwrap()].parse().unwrap();
        assert_eq!(
            x,
            view[call as usize - 1].0,
            "the marker of call {call} sits at its x"
        );
        let dup = markers.insert(call, attr(tag, "data-tiers").unwrap().to_string());
        assert!(dup.is_none(), "two markers at call {call}");
    }
    assert_eq!(markers, expected);

    // The header names the last call's view hash; the embedded data has every call.
    let last_hash = steps.last().unwrap()["view_hash"].as_str().unwrap();
    assert!(html.contains(&format!("<code>{last_hash}</code>")));
    let data_start = html.find("id=\"calls\">").unwrap() + "id=\"calls\">".len();
    let data_end = html[data_start..].find("</script>").unwrap() + data_start;
    let data: Value = serde_json::from_str(&html[data_start..data_end]).unwrap();
    assert_eq!(data["comp"].as_array().unwrap().len(), steps.len());
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(data["after"][i], s["tokens_after"], "call {}", i + 1);
        assert_eq!(data["raw"][i], s["raw_tokens"], "call {}", i + 1);
        assert_eq!(data["cr"][i], s["cache_read_tokens"], "call {}", i + 1);
        // The composition adds up to the view's estimate plus the overhead.
        let comp: u64 = data["comp"][i]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(
            comp,
            s["cache_read_tokens"].as_u64().unwrap() + s["cache_write_tokens"].as_u64().unwrap(),
            "composition of call {}",
            i + 1
        );
    }
    // Folds happened under this budget: their summaries are shown.
    assert!(html.contains("<details class=\"fold\""));
    assert!(html.contains("## Task Context"));
    assert_self_contained(&html);
}

#[test]
fn a_codex_session_renders_too() {
    let env = TestEnv::new();
    let html = report(&env, TENANT, "codex.html", &FOLD);
    let steps = replay_steps(&env, TENANT_TASK, &FOLD);
    assert_eq!(series(&html, "ctx", "compacted").len(), steps.len());
    assert_eq!(
        series(&html, "cache-chart", "raw-prompt").len(),
        steps.len()
    );
    assert!(html.contains("codex"));
    assert_self_contained(&html);
}

#[test]
fn two_runs_give_the_same_bytes_whatever_the_store_or_directory() {
    let a = TestEnv::new();
    let first = report(&a, SHRINK_FLOOR, "a.html", &FOLD);
    let second = report(&a, SHRINK_FLOOR, "b.html", &FOLD);
    assert!(first == second, "two runs on one store differ");
    // A fresh store in another temporary directory gives the same page too.
    let b = TestEnv::new();
    let third = report(&b, SHRINK_FLOOR, "a.html", &FOLD);
    assert!(first == third, "runs on two stores differ");
    // Standard output carries the same bytes.
    let run = b.run(&[
        "report",
        "--task",
        SHRINK_FLOOR_TASK,
        "-o",
        "-",
        FOLD[0],
        FOLD[1],
        FOLD[2],
        FOLD[3],
    ]);
    run.success();
    // The source line names the task, not the file, when the page is made from --task.
    assert!(run.stdout.contains("in the store"));
    assert_eq!(
        run.stdout.replace(
            &format!("task {SHRINK_FLOOR_TASK} in the store</code> · claude-code"),
            "claude-shrink-floor.jsonl</code> · claude-code"
        ),
        first
    );
    // No temporary path reaches the page.
    assert!(!first.contains(&a.root().display().to_string()));
    assert!(!first.contains("[TMP]"));
}

#[test]
fn transcript_text_is_escaped_and_cannot_inject_script() {
    let env = TestEnv::new();
    let evil = "</script><script>alert(1)</script><img src=https://evil.example/x.png>";
    // The shrink-floor fixture with a hostile title, ask and tool name.
    let text = fs::read_to_string(crate::util::testdata(SHRINK_FLOOR)).unwrap();
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v["type"] == "summary" {
            v["summary"] = Value::from(format!("title {evil}"));
        }
        if i == 1 {
            v["message"]["content"] = Value::from(format!("Audit the handlers {evil}"));
        }
        if let Some(blocks) = v["message"]["content"].as_array_mut() {
            for b in blocks {
                if b["type"] == "tool_use" && b["name"] == "Read" {
                    b["name"] = Value::from("Read<script>x()</script>");
                }
            }
        }
        lines.push(serde_json::to_string(&v).unwrap());
    }
    let path = env.write("evil.jsonl", lines.join("\n") + "\n");
    let run = env.run(&args(&["report", &path, "-o", "evil.html"], &FOLD));
    run.success();
    let html = fs::read_to_string(env.work().join("evil.html")).unwrap();
    assert_self_contained(&html);
    assert!(!html.contains("alert(1)</script>"));
    assert!(!html.contains("<img"));
    assert!(!html.contains("<script>alert"));
    // The text is there, escaped: in the title, the summaries and the tool names.
    assert!(html.contains("<h1>title &lt;/script&gt;&lt;script&gt;alert(1)"));
    assert!(html.contains("Audit the handlers &lt;/script&gt;"));
    assert!(html.contains("Read&lt;script&gt;x()&lt;/script&gt;"));
    // Inside the data block the tool name is a JSON string with no raw angle brackets.
    assert!(html.contains("tool: Read\\u003cscript\\u003ex()"));
}

#[test]
fn an_unknown_task_is_a_usage_error_and_writes_nothing() {
    let env = TestEnv::new();
    env.import_fixture("codex/small-rollout.jsonl");
    let run = env.run(&["report", "--task", "nope", "-o", "r.html"]);
    run.failure(2).stderr_has("unknown task \"nope\"");
    assert!(!env.work().join("r.html").exists());
}

/// `--open` hands the written file to the platform opener (`xdg-open` here):
/// a stand-in on PATH records what it was given.
#[cfg(target_os = "linux")]
#[test]
fn open_hands_the_written_page_to_the_opener_only_when_asked() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let bin = env.root().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let opener = bin.join("xdg-open");
    fs::write(&opener, "#!/bin/sh\nprintf '%s\\n' \"$1\" >> opened.txt\n").unwrap();
    fs::set_permissions(&opener, fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let fixture = env.fixture(SHRINK_FLOOR);
    let mut cmd = env.command(&["report", &fixture, "-o", "page.html"]);
    cmd.env("PATH", &path);
    env.finish(cmd).success();
    assert!(
        !env.work().join("opened.txt").exists(),
        "opened without --open"
    );
    let mut cmd = env.command(&["report", &fixture, "-o", "page.html", "--open"]);
    cmd.env("PATH", &path);
    env.finish(cmd).success();
    let opened = fs::read_to_string(env.work().join("opened.txt")).expect("the opener ran");
    assert_eq!(opened, "page.html\n");
    // An opener that fails is a warning: the page is still written, exit 0.
    fs::write(&opener, "#!/bin/sh\nexit 3\n").unwrap();
    let mut cmd = env.command(&["report", &fixture, "-o", "again.html", "--open"]);
    cmd.env("PATH", &path);
    let run = env.finish(cmd);
    run.success().stderr_has("could not open again.html");
    assert!(env.work().join("again.html").exists());
}

const ADVERSARIAL_TASK: &str = "0199c0de-0000-7000-8000-00000000a14e";

/// Section 5 agrees with `replay --probes`: one point per call on each probe
/// line, the same worst call, and the lost probes named (the forgetful static
/// summarizer on the adversarial fixture loses critical ones).
#[test]
fn the_probe_section_agrees_with_replay_probes() {
    let env = TestEnv::new();
    let budget = [
        "--window",
        "8000",
        "--output-reserved",
        "1000",
        "--summarizer",
        "static",
    ];
    let html = report(&env, "probe/codex-adversarial.jsonl", "p.html", &budget);
    assert!(!html.contains("does not exist yet"));
    let replay = ["replay", "--task", ADVERSARIAL_TASK, "--json", "--probes"];
    let v = env.run(&args(&replay, &budget)).replay_json();
    let calls = v["calls"].as_array().unwrap();
    let crit = series(&html, "probes", "critical-kept");
    let kept = series(&html, "probes", "all-kept");
    assert_eq!(crit.len(), calls.len());
    assert_eq!(kept.len(), calls.len());
    let worst = &v["probes"]["worst_call"];
    assert_eq!(worst["critical_kept_permille"], 0, "{worst}");
    assert!(
        html.contains(&format!("Worst call <b>{}</b>", worst["call"])),
        "the page names replay's worst call {}",
        worst["call"]
    );
    assert!(html.contains("<b>constraint</b> (critical) <q>Leave the billing module alone.</q>"));
    // The same page under the default summarizer keeps every critical probe.
    let html = report(
        &env,
        "probe/codex-adversarial.jsonl",
        "q.html",
        &["--window", "8000", "--output-reserved", "1000"],
    );
    assert!(
        html.contains("critical probes kept <b>100.0%</b>"),
        "{}",
        &html[html.find("id=\"probe\"").unwrap()..][..800]
    );
}

/// The calls the chart marks as the original agent's own compactions.
fn agent_compaction_marks(html: &str) -> Vec<&str> {
    tags(html, "line")
        .into_iter()
        .filter(|t| attr(t, "class") == Some("agent-compact"))
        .filter_map(|t| attr(t, "data-call"))
        .collect()
}

/// A session that never compacted itself has no mark where the agent did.
#[test]
fn a_session_the_agent_never_compacted_has_no_such_mark() {
    let env = TestEnv::new();
    let html = report(&env, SHRINK_FLOOR, "none.html", &FOLD);
    assert!(agent_compaction_marks(&html).is_empty());
}

/// Where the original agent compacted itself is marked, at the first call
/// after it: Claude Code compacted the corpus session 8463c716 after 71 model
/// calls (its `isCompactSummary` line 715).
#[test]
#[cfg_attr(
    not(compactor_corpus),
    ignore = "needs the corpus: ../shared/corpus, or set COMPACTOR_CORPUS"
)]
fn the_agents_own_compaction_is_marked_at_the_call_after_it() {
    let env = TestEnv::new();
    let test = "the_agents_own_compaction_is_marked_at_the_call_after_it";
    let Some(corpus) = crate::util::corpus(test) else {
        return;
    };
    let file = corpus.join(
        "claude-code/v2.1.39_spotter_interrupts_biglines/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    );
    let run = env.run(&["report", file.to_str().unwrap(), "-o", "own.html"]);
    run.success();
    let html = fs::read_to_string(env.work().join("own.html")).unwrap();
    assert_eq!(agent_compaction_marks(&html), ["72"]);
}

/// The header's title is the task's title as `tasks` shows it (the first
/// real ask here: the slash command and the notification before it are
/// skipped), and its counts are in words.
#[test]
fn the_header_shows_the_title_and_counts_in_words() {
    use crate::tasks::{INIT, NOTIFICATION, session_of_asks};
    let env = TestEnv::new();
    let id = "d0000000-0000-4000-8000-0000000000aa";
    let rel = env.write(
        "titled.jsonl",
        session_of_asks(id, &[INIT, NOTIFICATION, "Rename the config loader"]),
    );
    let run = env.run(&["report", &rel, "-o", "titled.html"]);
    run.success().stderr_has("wrote titled.html (1 call, ");
    let html = fs::read_to_string(env.work().join("titled.html")).unwrap();
    assert_eq!(env.task(id)["title"], "Rename the config loader");
    assert!(
        html.contains("<header>\n<h1>Rename the config loader</h1>"),
        "{}",
        &html[html.find("<header>").unwrap()..][..300]
    );
    assert!(
        html.contains("<title>compactor report · Rename the config loader</title>"),
        "the page's title"
    );
    let turns = env.task(id)["turns"].as_u64().unwrap();
    let turns = if turns == 1 {
        "1 turn".to_string()
    } else {
        format!("{turns} turns")
    };
    assert!(
        html.contains(&format!("<dt>calls</dt><dd>1 model call · {turns}</dd>")),
        "{}",
        &html[html.find("<dt>calls").unwrap()..][..80]
    );
    assert!(
        html.contains("Tiers fired at <b>0</b> of 1 call."),
        "one call"
    );
}

#[test]
fn the_cost_section_prices_the_model_and_agrees_with_replay() {
    let env = TestEnv::new();
    let html = report(&env, TENANT, "codex.html", &FOLD);
    assert!(
        html.contains("Prices in USD per million tokens (gpt-5-codex): input 1.25, cache write 1.25, cache read 0.125, output 10.00."),
        "{html}"
    );
    let run = env.run(&args(&["replay", "--task", TENANT_TASK, "--json"], &FOLD));
    let totals = run.replay_json()["totals"].clone();
    // The amounts are replay's micro-dollars, printed for people.
    let dollars = |m: &Value| compactor::model::decimal::Micros(m.as_u64().unwrap()).dollars();
    let c = &totals["compacted"];
    assert!(
        html.contains(&format!(
            "<td class=\"num\">${}</td><td class=\"num\">${}</td>",
            dollars(&c["cost_cached_micros"]),
            dollars(&c["cost_uncached_micros"])
        )),
        "{totals}"
    );
    assert!(html.contains(&format!(
        "recorded output tokens cost ${} under both",
        dollars(&totals["cost_output_micros"])
    )));
    // A prices file is named as the source.
    let prices = env.write(
        "prices.json",
        r#"{"models": [{"models": ["gpt-5*"], "input": 2, "cache_write": 2, "cache_read": 0.2, "output": 8}]}"#,
    );
    let html = report(
        &env,
        TENANT,
        "priced.html",
        &args(&["--prices", &prices], &FOLD),
    );
    assert!(html.contains(
        "(gpt-5-codex, from --prices): input 2.00, cache write 2.00, cache read 0.20, output 8.00."
    ));
}

/// An OpenAI chat log of `calls` model calls: an ask every ten calls, each
/// call reading a file whose size varies, so the history grows and folds.
fn long_chat_log(calls: u64) -> String {
    let mut out =
        String::from("{\"role\":\"system\",\"content\":\"You are a coding assistant.\"}\n");
    for i in 0..calls {
        if i % 10 == 0 {
            let ask = format!("Step {i}: read the next files. Do not touch the billing table.");
            out.push_str(&serde_json::json!({"role": "user", "content": ask}).to_string());
            out.push('\n');
        }
        let id = format!("call_{i:06}");
        let args = format!("{{\"path\": \"src/f{i}.py\"}}");
        let call = serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "read_file", "arguments": args}}]});
        out.push_str(&call.to_string());
        out.push('\n');
        let body =
            format!("def f{i}(x):\n    return x + {i}\n").repeat(4 + (i * 7919 % 97) as usize);
        let result = serde_json::json!({"role": "tool", "tool_call_id": id, "content": body});
        out.push_str(&result.to_string());
        out.push('\n');
    }
    out.push_str("{\"role\":\"assistant\",\"content\":\"Done with every file.\"}\n");
    out
}

/// Past four calls a pixel column the charts are drawn per column: at most
/// four points a column, each column's highest point that of its peak call,
/// the page's data per column by its peak call, every call where tiers fired
/// under a marker, and the probe section's worst call replay's.
#[test]
fn a_long_session_is_drawn_per_pixel_column_with_its_peaks_exact() {
    const LEFT: u64 = 72;
    const RIGHT: u64 = 1110;
    let env = TestEnv::new();
    let path = env.write("long.jsonl", long_chat_log(4_400));
    let run = env.run(&args(&["report", &path, "-o", "long.html"], &FOLD));
    run.success();
    let html = fs::read_to_string(env.work().join("long.html")).unwrap();
    let v = env
        .run(&args(&["replay", &path, "--json", "--probes"], &FOLD))
        .replay_json();
    let steps = v["calls"].as_array().unwrap();
    let n = steps.len() as u64;
    assert!(n > 4 * (RIGHT - LEFT + 1), "{n} calls are drawn per column");
    let x_of = |k: u64| LEFT + ((k - 1) * (RIGHT - LEFT) + (n - 1) / 2) / (n - 1);
    let after = |k: u64| steps[k as usize - 1]["tokens_after"].as_u64().unwrap();

    let view = series(&html, "ctx", "compacted");
    let mut per_x: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for &(x, y) in &view {
        per_x.entry(x).or_default().push(y);
    }
    assert_eq!(
        per_x.len() as u64,
        RIGHT - LEFT + 1,
        "a point in every column"
    );
    assert!(
        per_x.values().all(|ys| ys.len() <= 4),
        "at most four points a column"
    );
    // Each column's highest point (smallest y) is its peak call's, and a
    // higher peak is drawn no lower.
    let mut peaks: BTreeMap<u64, u64> = BTreeMap::new();
    for k in 1..=n {
        let p = peaks.entry(x_of(k)).or_default();
        *p = (*p).max(after(k));
    }
    let top = |x: u64| *per_x[&x].iter().min().unwrap();
    for (&a, &pa) in &peaks {
        for (&b, &pb) in peaks.range(a..).take(40) {
            if pa > pb {
                assert!(top(a) <= top(b), "columns {a} and {b}");
            }
        }
    }
    let highest = (1..=n)
        .max_by_key(|&k| (after(k), std::cmp::Reverse(k)))
        .unwrap();
    let y_top = view.iter().map(|p| p.1).min().unwrap();
    assert_eq!(
        top(x_of(highest)),
        y_top,
        "the highest point is call {highest}'s"
    );

    // The data: per column, its first call and its peak call's numbers.
    let data_start = html.find("id=\"calls\">").unwrap() + "id=\"calls\">".len();
    let data_end = html[data_start..].find("</script>").unwrap() + data_start;
    let data: Value = serde_json::from_str(&html[data_start..data_end]).unwrap();
    assert_eq!(data["n"], n);
    let from: Vec<u64> = serde_json::from_value(data["from"].clone()).unwrap();
    assert_eq!(from.len() as u64, RIGHT - LEFT + 1);
    for (i, &f) in from.iter().enumerate() {
        let to = from.get(i + 1).map_or(n, |next| next - 1);
        assert!((f..=to).all(|k| x_of(k) == LEFT + i as u64), "column {i}");
        let peak = (f..=to)
            .max_by_key(|&k| (after(k), std::cmp::Reverse(k)))
            .unwrap();
        assert_eq!(data["call"][i], peak, "column {i}'s peak call");
        assert_eq!(data["after"][i], after(peak));
        let fired = (f..=to)
            .filter(|&k| {
                !steps[k as usize - 1]["tiers_fired"]
                    .as_array()
                    .unwrap()
                    .is_empty()
            })
            .count();
        assert_eq!(
            data["fired"][i], fired,
            "column {i}'s calls that fired a tier"
        );
    }

    // Every call where tiers fired sits under a marker at its x.
    let marked: Vec<u64> = tags(svg_of(&html, "ctx"), "path")
        .into_iter()
        .filter(|t| attr(t, "class").is_some_and(|c| c.split(' ').any(|c| c == "tier")))
        .map(|t| attr(t, "data-call").unwrap().parse().unwrap())
        .collect();
    let fired: Vec<u64> = (1..=n)
        .filter(|&k| {
            !steps[k as usize - 1]["tiers_fired"]
                .as_array()
                .unwrap()
                .is_empty()
        })
        .collect();
    assert!(fired.len() >= 2, "tiers fire under this budget");
    assert!(marked.iter().all(|k| fired.contains(k)));
    let marked_x: Vec<u64> = marked.iter().map(|&k| x_of(k)).collect();
    assert!(
        fired.iter().all(|&k| marked_x.contains(&x_of(k))),
        "every fired call is marked"
    );

    // Tables and headline figures stay exact.
    let worst = &v["probes"]["worst_call"];
    assert!(html.contains(&format!("Worst call <b>{}</b>", worst["call"])));
    let last_hash = steps.last().unwrap()["view_hash"].as_str().unwrap();
    assert!(html.contains(&format!("<code>{last_hash}</code>")));
    assert!(html.len() < 1_500_000, "the page is {} bytes", html.len());
    assert_self_contained(&html);
}

/// `1234567` as the page writes it: `1,234,567`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a newcomer hit: section 2 said "36,186 tokens after compaction"
/// while its table totalled 25,385 (estimated), and nothing said why.
#[test]
fn what_fills_the_window_shows_both_totals_and_says_why_they_differ() {
    let env = TestEnv::new();
    let html = report(&env, SHRINK_FLOOR, "report.html", &FOLD);
    let last = replay_steps(&env, SHRINK_FLOOR_TASK, &FOLD).last().unwrap()["tokens_after"]
        .as_u64()
        .unwrap();
    let section = html
        .split("<section id=\"composition\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("section 2");
    // The title's figure, and the same figure under the table, named.
    assert!(
        section.contains(&format!("{} tokens after compaction", grouped(last))),
        "{section}"
    );
    assert!(
        section.contains(&format!(
            "<tr><td>predicted after compaction</td><td class=\"num\" id=\"segs-predicted\">{}</td>",
            grouped(last)
        )),
        "{section}"
    );
    // The estimated total is the table's sum, and it is not the prediction.
    let estimated: u64 = section
        .split("<tr><td>estimated total</td><td class=\"num\" id=\"segs-total\">")
        .nth(1)
        .and_then(|s| s.split('<').next())
        .map(|n| n.replace(',', "").parse().unwrap())
        .expect("the estimated total");
    assert_ne!(estimated, last, "the fixture shows two different figures");
    // Why they differ, said where both are shown.
    assert!(section.contains("Two figures, two measures."), "{section}");
    assert!(section.contains("They differ by the estimator's error."));
}

/// Every `id` in the page is unique (the "Cache and cost" section and its
/// chart once shared `cache`, so the chart's script found the section).
#[test]
fn every_id_in_the_page_is_unique() {
    let env = TestEnv::new();
    let html = report(&env, SHRINK_FLOOR, "report.html", &FOLD);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for part in html.split(" id=\"").skip(1) {
        let id = part.split('"').next().unwrap();
        *seen.entry(id).or_default() += 1;
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "ids used twice: {twice:?}");
    for id in ["cache", "cache-chart", "cache-chart-hit", "ctx", "ctx-hit"] {
        assert!(seen.contains_key(id), "#{id}");
    }
}

/// Debian's chromium (or `$CHROMIUM`) and playwright-core from `clients/`,
/// or `None` (said plainly) when either is absent; under CI that fails.
fn browser(test: &str) -> Option<std::path::PathBuf> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    let driver = crate::util::crate_dir().join("clients/node_modules/playwright-core");
    if chromium.exists() && driver.exists() {
        return Some(chromium);
    }
    if crate::util::under_ci() {
        panic!(
            "{test}: chromium ({}) or playwright-core is missing and CI is set: apt-get install chromium; cd clients && npm ci",
            chromium.display()
        );
    }
    eprintln!(
        "SKIPPED {test}: needs chromium ({}) and playwright-core: apt-get install chromium; cd clients && npm ci",
        chromium.display()
    );
    None
}

/// The page in a real browser: the pointer over each chart moves its guide
/// to the call under it (a quarter of the way along), the context chart's
/// report line follows, and nothing throws (hovering the cache chart threw
/// `svg.createSVGPoint is not a function`).
#[test]
#[cfg_attr(
    not(compactor_browser),
    ignore = "needs chromium and playwright-core: apt-get install chromium; cd clients && npm ci"
)]
fn hovering_the_charts_in_a_browser_moves_their_guides_and_throws_nothing() {
    let Some(chromium) = browser("hovering_the_charts_in_a_browser") else {
        return;
    };
    let env = TestEnv::new();
    report(&env, SHRINK_FLOOR, "report.html", &FOLD);
    let script = crate::util::crate_dir().join("clients/report-hover.mjs");
    let out = std::process::Command::new("node")
        .arg(&script)
        .arg(env.work().join("report.html"))
        .arg("0.25")
        .env("CHROMIUM", &chromium)
        .env("HOME", env.home())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(v["errors"], serde_json::json!([]), "the page threw: {v}");
    assert_eq!(v["ids"], serde_json::json!([]), "ids used twice: {v}");
    // x of call k, as the page places it (72 to 1110 over N calls).
    let n = SHRINK_FLOOR_CALLS;
    let x_of = |k: u64| 72 + ((k - 1) * (1110 - 72) + (n - 1) / 2) / (n - 1);
    let near = (n - 1) as f64 * 0.25 + 1.0;
    for chart in ["ctx", "cache-chart"] {
        assert_eq!(v["before"][chart], "-10", "{chart} parked: {v}");
        let x: u64 = v["guides"][chart].as_str().unwrap().parse().unwrap();
        let k = (1..=n)
            .find(|&k| x_of(k).abs_diff(x) <= 1)
            .unwrap_or_else(|| panic!("{chart}: the guide at {x} is on no call: {v}"));
        assert!(
            (k as f64 - near).abs() <= 1.0,
            "{chart}: call {k}, not near {near}: {v}"
        );
    }
    let line = v["line"].as_str().unwrap();
    assert!(
        line.starts_with("call ") && line.contains(" · turn "),
        "{v}"
    );
}
