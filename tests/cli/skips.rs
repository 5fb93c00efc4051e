//! A test that cannot run here says so in the result: every test that needs
//! the pinned clients or the corpus is compiled as ignored when `build.rs`
//! did not find them (`cfg_attr(not(compactor_clients), ignore = "...")`),
//! so `cargo test` counts it as ignored, never as passed. Under CI both cfgs
//! are set and such a test runs, and fails when what it needs is missing.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::util::{crate_dir, files_with_extension};

/// A prerequisite: the helper that finds it, and the cfg that says it is here.
struct Needs {
    helper: &'static str,
    cfg: &'static str,
}

const NEEDS: [Needs; 5] = [
    Needs {
        helper: "corpus",
        cfg: "compactor_corpus",
    },
    Needs {
        helper: "client",
        cfg: "compactor_clients",
    },
    Needs {
        helper: "python_sdk",
        cfg: "compactor_python_sdk",
    },
    Needs {
        helper: "browser",
        cfg: "compactor_browser",
    },
    Needs {
        helper: "stand_in",
        cfg: "compactor_python",
    },
];

/// A top-level `fn` of a file: its name, what precedes it (doc comments and
/// attributes) and its body.
struct Item<'a> {
    name: &'a str,
    preamble: &'a str,
    body: &'a str,
}

/// The file's top-level functions: a line starting `fn `/`pub fn ` opens
/// one, the next line that is exactly `}` closes it.
fn items(text: &str) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    let mut last_end = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let head = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        let Some(rest) = head.strip_prefix("fn ") else {
            continue;
        };
        if start < last_end {
            continue;
        }
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let end = text[start..]
            .find("\n}\n")
            .map_or(text.len(), |e| start + e + 3);
        out.push(Item {
            name: &rest[..name_len],
            preamble: &text[last_end..start],
            body: &text[start..end],
        });
        last_end = end;
    }
    out
}

/// Whether `body` calls `name(` (not `other_name(` nor `.name(`).
fn calls(body: &str, name: &str) -> bool {
    let pat = format!("{name}(");
    body.match_indices(&pat).any(|(i, _)| {
        let before = body[..i].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && !body[..i].ends_with("fn ")
    })
}

/// The tests of `text` that reach `helper` (directly or through the file's
/// own functions) without saying, in their attributes, that they need `cfg`.
fn unmarked(text: &str, needs: &Needs) -> Vec<String> {
    let items = items(text);
    let mut reaching: BTreeSet<&str> = BTreeSet::new();
    loop {
        let before = reaching.len();
        for it in &items {
            if it.name != needs.helper
                && (calls(it.body, needs.helper) || reaching.iter().any(|r| calls(it.body, r)))
            {
                reaching.insert(it.name);
            }
        }
        if reaching.len() == before {
            break;
        }
    }
    items
        .iter()
        .filter(|it| it.preamble.contains("#[test]") && reaching.contains(it.name))
        .filter(|it| !it.preamble.contains(needs.cfg) && !it.preamble.contains("#[ignore"))
        .map(|it| it.name.to_string())
        .collect()
}

#[test]
fn every_test_that_needs_the_clients_or_the_corpus_is_ignored_without_them() {
    let mut files = files_with_extension(&crate_dir().join("tests"), "rs");
    files.extend(
        files_with_extension(&crate_dir().join("src"), "rs")
            .into_iter()
            .filter(|f| f.ends_with("tests.rs")),
    );
    let mut missing = Vec::new();
    let mut marked = 0;
    // This file's own sample text is not a test.
    for f in files.iter().filter(|f| !f.ends_with("tests/cli/skips.rs")) {
        let text = fs::read_to_string(f).unwrap();
        marked += text.matches("cfg_attr(").count();
        for needs in &NEEDS {
            for t in unmarked(&text, needs) {
                missing.push(format!("{}: {t} needs {}", rel(f), needs.cfg));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "mark these #[cfg_attr(not(CFG), ignore = \"...\")]:\n{}",
        missing.join("\n")
    );
    assert!(marked >= 20, "only {marked} tests are marked");
}

/// The scan itself finds a test that reaches the corpus through a helper.
#[test]
fn the_scan_finds_a_test_that_reaches_a_helper_through_another() {
    let text = "fn store(t: &str) -> Option<X> {\n    let d = corpus(t)?;\n}\n\n#[test]\nfn a() {\n    let Some(s) = store(\"a\") else { return };\n}\n\n#[test]\n#[cfg_attr(not(compactor_corpus), ignore = \"x\")]\nfn b() {\n    store(\"b\");\n}\n\n#[test]\nfn c() {\n    let my_corpus(1);\n}\n";
    assert_eq!(unmarked(text, &NEEDS[0]), ["a"]);
    assert!(unmarked(text, &NEEDS[1]).is_empty());
}

fn rel(f: &Path) -> String {
    f.strip_prefix(crate_dir())
        .unwrap_or(f)
        .display()
        .to_string()
}
