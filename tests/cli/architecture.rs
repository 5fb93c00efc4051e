//! The module graph matches the layer table in ARCHITECTURE.md: every
//! `crate::` path under `src/` names the file's own layer or one its row
//! allows, and every row allows only layers listed above it (no cycle, no
//! upward import); and no command module under `src/cmd/` imports another
//! command module (what two commands share lives in one of the shared
//! modules ARCHITECTURE.md lists).

use crate::util::files_with_extension;
use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

struct Layer {
    name: String,
    modules: Vec<String>,
    may_import: Vec<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cells of each row of the table under `## HEADING` in ARCHITECTURE.md
/// (its header row, which starts with `| COLUMN`, and its rule left out).
fn table(heading: &str, column: &str) -> Vec<Vec<String>> {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text
        .split(&format!("## {heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has a `## {heading}` section"));
    section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| {
            l.starts_with('|') && !l.starts_with("|---") && !l.starts_with(&format!("| {column}"))
        })
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The rows of the table under `## Layers`.
fn layers() -> Vec<Layer> {
    let names = |cell: &str| -> Vec<String> {
        cell.split(',')
            .map(|s| s.trim().trim_matches('`').to_string())
            .filter(|s| !s.is_empty() && s != "none")
            .collect()
    };
    table("Layers", "layer")
        .into_iter()
        .map(|cells| {
            assert!(
                cells.len() >= 3,
                "a layer row needs name, modules and imports: {cells:?}"
            );
            Layer {
                name: cells[0].clone(),
                modules: names(&cells[1]),
                may_import: names(&cells[2]),
            }
        })
        .collect()
}

/// The top-level modules a file's code names through `crate::` paths
/// (comments skipped), with the line each first appears on.
fn crate_paths(src: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if rest.starts_with('{') {
                let inner = &rest[1..rest.find('}').unwrap_or(rest.len())];
                for item in inner.split(',') {
                    let m: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    found.push((i + 1, m));
                }
            } else {
                let m: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((i + 1, m));
            }
        }
    }
    found
}

/// Every `super::` chain in a file's code (comments skipped): its line, how
/// many levels it climbs above the file's own module (an inline `mod x {`
/// block, as rustfmt lays it out, adds one level while it is open, which is
/// not counted), and the module it names there.
fn super_chains(src: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    // The indentation of each open inline module.
    let mut open: Vec<usize> = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let indent = code.len() - code.trim_start().len();
        if code.trim() == "}" && open.last() == Some(&indent) {
            open.pop();
        }
        let mut rest = code;
        while let Some(at) = rest.find("super::") {
            let before = rest[..at].chars().last();
            rest = &rest[at..];
            let mut climbs: usize = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                climbs += 1;
                rest = r;
            }
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            if let Some(above) = climbs.checked_sub(open.len()) {
                let m: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((i + 1, above, m));
            }
        }
        let t = code.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or(t.strip_prefix("pub "))
            .unwrap_or(t);
        if t.starts_with("mod ") && t.trim_end().ends_with('{') {
            open.push(indent);
        }
    }
    found
}

/// The top-level modules a file's code reaches by climbing out of its own
/// top-level module with `super::` (the file's module sits `depth` levels
/// below the crate root).
fn super_paths(src: &str, depth: usize) -> Vec<(usize, String)> {
    super_chains(src)
        .into_iter()
        .filter(|(_, above, _)| *above >= depth)
        .map(|(line, _, m)| (line, m))
        .collect()
}

/// The module a path below a module's directory is in: `a` for `a.rs`,
/// `a/mod.rs` and `a/b.rs`.
fn first_module(rel: &std::path::Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn every_layer_imports_only_layers_listed_above_it() {
    let layers = layers();
    assert!(layers.len() >= 5, "the layer table was not found");
    for (i, l) in layers.iter().enumerate() {
        for dep in &l.may_import {
            let j = layers.iter().position(|o| &o.name == dep);
            assert!(
                j.is_some_and(|j| j < i),
                "layer {} may import {dep}, which is not a layer listed above it",
                l.name
            );
        }
    }
}

#[test]
fn crate_paths_follow_the_layer_table() {
    let layers = layers();
    let layer_of: BTreeMap<&str, &Layer> = layers
        .iter()
        .flat_map(|l| l.modules.iter().map(move |m| (m.as_str(), l)))
        .collect();
    let src = root().join("src");
    let files = files_with_extension(&src, "rs");
    let mut violations = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let top = first_module(rel);
        if top == "lib" || top == "main" {
            continue;
        }
        let own = layer_of
            .get(top.as_str())
            .unwrap_or_else(|| panic!("src/{} is in no layer of ARCHITECTURE.md", rel.display()));
        // src/a.rs and src/a/mod.rs are module `a`, one level down; src/a/b.rs two.
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        let text = fs::read_to_string(f).unwrap();
        let paths = crate_paths(&text)
            .into_iter()
            .chain(super_paths(&text, depth));
        for (line, m) in paths {
            seen += 1;
            let Some(target) = layer_of.get(m.as_str()) else {
                violations.push(format!(
                    "src/{}:{line}: crate::{m} is in no layer",
                    rel.display()
                ));
                continue;
            };
            if target.name != own.name && !own.may_import.contains(&target.name) {
                violations.push(format!(
                    "src/{}:{line}: layer {} imports crate::{m} (layer {})",
                    rel.display(),
                    own.name,
                    target.name
                ));
            }
        }
    }
    assert!(
        seen > 100,
        "only {seen} crate:: paths found; is the scan broken?"
    );
    assert!(
        violations.is_empty(),
        "upward or unlisted imports:\n{}",
        violations.join("\n")
    );
}

/// The scanner sees grouped and nested paths, so the check above can fail.
#[test]
fn the_scanner_reads_grouped_paths() {
    let found = crate_paths(
        "use crate::{model::Block, view::View};\nlet x = crate::engine::run(); // crate::cmd\n",
    );
    let names: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(names, ["model", "view", "engine"]);
}

/// `super::` chains that climb out of the file's top-level module are seen,
/// and those that stay inside it (counting inline modules) are not.
#[test]
fn the_scanner_reads_super_paths_that_leave_the_module() {
    let src = "use super::super::session::Driver;\nuse super::budget::Budget;\n\
               mod tests {\n    use super::super::budget::Budget;\n    \
               use super::super::super::cmd::Ui;\n}\nuse super::super::store;\n";
    let found = super_paths(src, 2);
    assert_eq!(
        found,
        [
            (1, "session".to_string()),
            (5, "cmd".to_string()),
            (7, "store".to_string())
        ]
    );
}

/// What a view contains is decided in the core: the human renderers in
/// `cmd` cannot change a view's bytes, because nothing below `cmd` can reach
/// them, and the block-to-text functions are defined only in `view::text`.
#[test]
fn human_rendering_cannot_change_a_view_hash() {
    let layers = layers();
    let cmd = layers
        .iter()
        .find(|l| l.name == "cmd")
        .expect("a cmd layer");
    for l in layers.iter().filter(|l| l.name != "cmd") {
        assert!(
            !l.may_import.contains(&cmd.name),
            "{} may import cmd",
            l.name
        );
    }
    let src = root().join("src");
    let files = files_with_extension(&src, "rs");
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        for def in ["fn block_text(", "fn tool_content_text(", "fn image_label("] {
            if text.contains(def) {
                assert!(
                    f.ends_with("view/text.rs"),
                    "{def} is defined in {}, outside view::text",
                    f.strip_prefix(&src).unwrap().display()
                );
            }
        }
    }
}

/// The modules of `src/cmd/` that are not commands: the first column of the
/// table under `## Commands and what they share`.
fn shared_cmd_modules() -> Vec<String> {
    table("Commands and what they share", "shared")
        .into_iter()
        .map(|cells| cells[0].trim_matches('`').to_string())
        .collect()
}

/// The modules of `src/cmd/` a file's code names: `crate::cmd::X` paths, and
/// `super::` chains that climb to `cmd` itself (`cmd_depth` levels above the
/// file's module).
fn cmd_paths(src: &str, cmd_depth: usize) -> Vec<(usize, String)> {
    let mut found: Vec<(usize, String)> = crate_paths(&src.replace("crate::cmd::", "crate::"))
        .into_iter()
        .filter(|(line, _)| {
            let code = src.lines().nth(line - 1).unwrap_or("");
            code.split("//")
                .next()
                .unwrap_or("")
                .contains("crate::cmd::")
        })
        .collect();
    found.extend(
        super_chains(src)
            .into_iter()
            .filter(|(_, above, _)| *above == cmd_depth)
            .map(|(line, _, m)| (line, m)),
    );
    found
}

#[test]
fn no_command_module_imports_another() {
    let shared = shared_cmd_modules();
    assert!(shared.len() >= 5, "the shared modules' table was not found");
    let cmd = root().join("src/cmd");
    let module_of = |f: &std::path::Path| first_module(f.strip_prefix(&cmd).unwrap());
    let files = files_with_extension(&cmd, "rs");
    let modules: std::collections::BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f))
        .filter(|m| m != "mod")
        .collect();
    for m in &shared {
        assert!(
            modules.contains(m),
            "ARCHITECTURE.md lists src/cmd/{m} as shared, but there is no such module"
        );
    }
    let commands: Vec<&String> = modules.iter().filter(|m| !shared.contains(m)).collect();
    assert!(
        commands.len() >= 10,
        "only {} command modules found",
        commands.len()
    );
    let mut violations = Vec::new();
    for f in &files {
        let own = module_of(f);
        if own == "mod" {
            continue;
        }
        let rel = f.strip_prefix(&cmd).unwrap();
        // src/cmd/a.rs climbs once to cmd, src/cmd/a/b.rs twice, src/cmd/a/mod.rs once.
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        let text = fs::read_to_string(f).unwrap();
        for (line, m) in cmd_paths(&text, depth) {
            if m != own && commands.contains(&&m) {
                violations.push(format!(
                    "src/cmd/{}:{line}: imports the command module {m}",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "a module of src/cmd imports a command module (move what they share to a shared module):\n{}",
        violations.join("\n")
    );
}

/// The command-module scanner sees `crate::cmd::` paths and `super::` chains
/// that climb to `cmd` (counting inline modules), and no others.
#[test]
fn the_scanner_reads_paths_into_cmd() {
    let src = "use super::Ui;\nuse super::import::import_one;\nuse crate::cmd::tasks::title_of;\n\
               use crate::store::Store;\nmod tests {\n    use super::super::show::run;\n    \
               use super::helper;\n}\n";
    let found = cmd_paths(src, 1);
    let names: Vec<(usize, &str)> = found.iter().map(|(l, m)| (*l, m.as_str())).collect();
    assert_eq!(names, [(3, "tasks"), (1, "Ui"), (2, "import"), (6, "show")]);
}
