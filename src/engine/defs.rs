//! What an edit changed in a file, as definitions: the functions, methods,
//! modules, classes, types, constants, config keys and Markdown headings a
//! write or an edit added, changed or removed. Read the same way by the
//! extractive summarizer (a file's line in `## Deliverables`) and by `probe`
//! (a changed definition must still be named under its file).
//!
//! Pure and line-based: no parser per language, only the shapes a
//! definition's first line takes (`pub fn name`, `def name(a, b)`, `class
//! Name`, `func (r *T) Name(`, `## Heading`, `key = value`). A definition's
//! block runs from its line to the next definition at the same or a lower
//! indentation, so comparing the blocks of a file before and after an edit
//! tells a changed definition from an untouched one. Without the file's text
//! (an edit seen alone), the edit's own old and new text are compared, and
//! a change inside no definition names none.

use std::collections::BTreeMap;

/// The languages whose definitions are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Rust,
    Python,
    Script,
    Go,
    Ruby,
    Elixir,
    Json,
    Toml,
    Yaml,
    Markdown,
}

impl Lang {
    /// The language of a path, by its extension.
    pub(crate) fn of_path(path: &str) -> Option<Lang> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        Some(match ext.as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Lang::Script,
            "go" => Lang::Go,
            "rb" | "rake" => Lang::Ruby,
            "ex" | "exs" => Lang::Elixir,
            "json" => Lang::Json,
            "toml" => Lang::Toml,
            "yaml" | "yml" => Lang::Yaml,
            "md" | "markdown" | "mdx" => Lang::Markdown,
            _ => return None,
        })
    }
}

/// One definition found in a text: how a summary names it, and the lines it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Def {
    /// `fn parse`, `Config::new`, `mount/3`, `class Renderer`, `## Usage`, `deps.serde`.
    pub name: String,
    /// Its first line and one past its last, in the text's lines.
    pub lines: (usize, usize),
    /// It holds others (an `impl`, a class, a module): a change inside it
    /// is named by the member it touched.
    pub container: bool,
}

/// What one change did to a file's definitions, each list in the file's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DefChange {
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
}

impl DefChange {
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// The definitions of a whole text, in order; a name defined twice (an
/// Elixir function's clauses, an overload) once, spanning from its first
/// line to the end of its last block.
pub(crate) fn definitions(lang: Lang, text: &str) -> Vec<Def> {
    let lines: Vec<&str> = text.lines().collect();
    match lang {
        Lang::Json => json_keys(text, &lines),
        Lang::Markdown => headings(&lines),
        _ => code_defs(lang, &lines),
    }
}

/// The definitions a file's change added, changed or removed, comparing the
/// whole text before and after.
pub(crate) fn diff_texts(lang: Lang, before: &str, after: &str) -> DefChange {
    let old = blocks(lang, before);
    let new = blocks(lang, after);
    let mut change = DefChange::default();
    for (name, (_, body)) in &new.by_name {
        match old.by_name.get(name) {
            None => change.added.push(name.clone()),
            Some((_, old_body)) if old_body != body && !new.containers.contains(name) => {
                change.changed.push(name.clone())
            }
            Some(_) => {}
        }
    }
    change.removed = old
        .by_name
        .keys()
        .filter(|n| !new.by_name.contains_key(*n))
        .cloned()
        .collect();
    let order = |names: &mut Vec<String>, b: &Blocks| {
        names.sort_by_key(|n| b.by_name.get(n).map_or(usize::MAX, |(at, _)| *at));
    };
    order(&mut change.added, &new);
    order(&mut change.changed, &new);
    order(&mut change.removed, &old);
    change
}

/// What an edit replacing `old` with `new` did, seen alone: definitions only
/// in the new text were added, only in the old removed, in both changed.
pub(crate) fn diff_snippets(lang: Lang, old: &str, new: &str) -> DefChange {
    let old_defs: Vec<String> = definitions(lang, old).into_iter().map(|d| d.name).collect();
    let new_defs: Vec<String> = definitions(lang, new).into_iter().map(|d| d.name).collect();
    let mut change = DefChange::default();
    for name in &new_defs {
        if old_defs.contains(name) {
            change.changed.push(name.clone());
        } else {
            change.added.push(name.clone());
        }
    }
    change.removed = old_defs
        .into_iter()
        .filter(|n| !new_defs.contains(n))
        .collect();
    change
}

/// The innermost definition of `text` whose block holds line `at`.
pub(crate) fn enclosing(lang: Lang, text: &str, at: usize) -> Option<String> {
    definitions(lang, text)
        .into_iter()
        .filter(|d| d.lines.0 <= at && at < d.lines.1)
        .min_by_key(|d| d.lines.1 - d.lines.0)
        .map(|d| d.name)
}

/// A text's definitions by name: where each starts and its block's text.
struct Blocks {
    by_name: BTreeMap<String, (usize, String)>,
    containers: Vec<String>,
}

fn blocks(lang: Lang, text: &str) -> Blocks {
    let lines: Vec<&str> = text.lines().collect();
    let mut by_name = BTreeMap::new();
    let mut containers = Vec::new();
    if lang == Lang::Json {
        // A key's block is its value, compared as parsed (formatting aside).
        if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(text) {
            for (at, (path, value)) in json_paths(&map).into_iter().enumerate() {
                by_name.insert(path, (at, value));
            }
            return Blocks {
                by_name,
                containers,
            };
        }
    }
    for def in definitions(lang, text) {
        if def.container {
            containers.push(def.name.clone());
        }
        let body = lines[def.lines.0..def.lines.1.min(lines.len())].join("\n");
        by_name
            .entry(def.name)
            .or_insert_with(|| (def.lines.0, String::new()))
            .1
            .push_str(&body);
    }
    Blocks {
        by_name,
        containers,
    }
}

// ---------------------------------------------------------------------------
// Code: one line shape per kind of definition
// ---------------------------------------------------------------------------

/// A definition line as read: its name, and whether it contains others.
struct Head {
    name: String,
    /// `impl`, `class`, `module`: members are named inside it.
    container: bool,
    /// Named at the top level only (a constant, a config key): never a member.
    top_only: bool,
}

fn code_defs(lang: Lang, lines: &[&str]) -> Vec<Def> {
    // (indent, name, start, container) of each definition, in order.
    let mut found: Vec<(usize, String, usize, bool)> = Vec::new();
    let mut containers: Vec<(usize, String)> = Vec::new();
    let mut section: Option<String> = None;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        let indent = indentation(line);
        while containers.last().is_some_and(|(at, _)| *at >= indent) {
            containers.pop();
        }
        let head = match lang {
            Lang::Rust => rust_head(trimmed),
            Lang::Python => python_head(trimmed, indent),
            Lang::Script => script_head(trimmed, indent, !containers.is_empty()),
            Lang::Go => go_head(trimmed, indent),
            Lang::Ruby => ruby_head(trimmed),
            Lang::Elixir => {
                // A head's arguments may run over several lines.
                let end = (i + 8).min(lines.len());
                let head = lines[i..end]
                    .iter()
                    .map(|l| l.trim())
                    .collect::<Vec<_>>()
                    .join(" ");
                elixir_head(&head)
            }
            Lang::Toml => toml_head(trimmed, &mut section),
            Lang::Yaml => yaml_head(line, indent, &mut section),
            Lang::Json | Lang::Markdown => None,
        };
        let Some(head) = head else { continue };
        // Members are named inside their container; containers and
        // constants by themselves, and Elixir's functions by name/arity.
        let name = match containers.last() {
            Some((_, outer)) if !head.top_only && !head.container && lang != Lang::Elixir => {
                member_name(lang, outer, &head.name)
            }
            _ => head.name.clone(),
        };
        if head.container {
            containers.push((indent, container_label(lang, &head.name)));
        }
        found.push((indent, name, i, head.container));
    }
    // A block runs to the next definition at the same or a lower indentation.
    let mut defs: Vec<Def> = Vec::new();
    for (n, (indent, name, start, container)) in found.iter().enumerate() {
        let end = found[n + 1..]
            .iter()
            .find(|(i, _, _, _)| i <= indent)
            .map_or(lines.len(), |(_, _, s, _)| *s);
        match defs.iter_mut().find(|d| &d.name == name) {
            Some(d) => d.lines.1 = d.lines.1.max(end),
            None => defs.push(Def {
                name: name.clone(),
                lines: (*start, end),
                container: *container,
            }),
        }
    }
    defs
}

fn indentation(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// How a container names its members: `Type::` (Rust), `Class.` (Python,
/// JavaScript, Go), `Class#` (Ruby).
fn member_name(lang: Lang, outer: &str, name: &str) -> String {
    let bare = name
        .strip_prefix("fn ")
        .or_else(|| name.strip_prefix("def "))
        .or_else(|| name.strip_prefix("function "))
        .unwrap_or(name);
    match lang {
        Lang::Rust => format!("{outer}::{bare}"),
        Lang::Ruby => format!("{outer}#{bare}"),
        _ => format!("{outer}.{bare}"),
    }
}

/// The part of a container's name its members are prefixed with.
fn container_label(lang: Lang, name: &str) -> String {
    let last_word = |s: &str| s.split_whitespace().last().unwrap_or(s).to_string();
    match lang {
        // `impl Display for Config` → `Config`; `impl<T> Stack<T>` → `Stack`.
        Lang::Rust => {
            let sig = name.strip_prefix("impl").unwrap_or(name).trim();
            let sig = skip_generics(sig);
            let target = sig.rsplit(" for ").next().unwrap_or(sig).trim();
            let target = target.split('<').next().unwrap_or(target);
            target.rsplit("::").next().unwrap_or(target).to_string()
        }
        Lang::Elixir => name.to_string(),
        _ => last_word(name),
    }
}

/// `<T: Ord> Stack<T>` → `Stack<T>`: the impl's own parameters skipped.
fn skip_generics(s: &str) -> &str {
    let Some(rest) = s.strip_prefix('<') else {
        return s;
    };
    let mut depth = 1;
    for (i, c) in rest.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return rest[i + 1..].trim_start();
                }
            }
            _ => {}
        }
    }
    s
}

/// An identifier at the start of `s` (letters, digits, `_`; `?`/`!` kept
/// at its end for Ruby and Elixir).
fn ident(s: &str) -> Option<&str> {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
        .map_or(s.len(), |(i, _)| i);
    let end = match s[end..].chars().next() {
        Some(c @ ('?' | '!')) if end > 0 => end + c.len_utf8(),
        _ => end,
    };
    let id = &s[..end];
    (!id.is_empty() && !id.starts_with(|c: char| c.is_ascii_digit())).then_some(id)
}

/// `s` after `word` and at least one space, if it starts so.
fn after_word<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let rest = s.strip_prefix(word)?;
    rest.starts_with([' ', '\t']).then(|| rest.trim_start())
}

fn strip_words<'a>(mut s: &'a str, words: &[&str]) -> &'a str {
    loop {
        let before = s;
        for w in words {
            if let Some(rest) = after_word(s, w) {
                s = rest;
            }
        }
        if s == before {
            return s;
        }
    }
}

fn head(name: impl Into<String>) -> Option<Head> {
    Some(Head {
        name: name.into(),
        container: false,
        top_only: false,
    })
}

fn container(name: impl Into<String>) -> Option<Head> {
    Some(Head {
        name: name.into(),
        container: true,
        top_only: false,
    })
}

fn top_only(name: impl Into<String>) -> Option<Head> {
    Some(Head {
        name: name.into(),
        container: false,
        top_only: true,
    })
}

fn rust_head(line: &str) -> Option<Head> {
    let mut s = line;
    if let Some(rest) = s.strip_prefix("pub(") {
        s = rest.split_once(')')?.1.trim_start();
    }
    let s = strip_words(
        s,
        &[
            "pub", "async", "unsafe", "default", "extern", "\"C\"", "\"Rust\"",
        ],
    );
    if let Some(rest) = after_word(s, "const") {
        if let Some(rest) = after_word(rest, "fn") {
            return head(format!("fn {}", ident(rest)?));
        }
        return top_only(ident(rest).filter(|n| *n != "_")?.to_string());
    }
    for (kw, container_kind) in [
        ("fn", false),
        ("struct", false),
        ("enum", false),
        ("union", false),
        ("type", false),
        ("trait", true),
        ("mod", false),
        ("static", false),
    ] {
        if let Some(rest) = after_word(s, kw) {
            let rest = rest.strip_prefix("mut ").unwrap_or(rest);
            let name = ident(rest)?;
            let shown = match kw {
                "static" => name.to_string(),
                _ => format!("{kw} {name}"),
            };
            return if container_kind {
                Some(Head {
                    name: shown,
                    container: true,
                    top_only: false,
                })
            } else {
                head(shown)
            };
        }
    }
    if let Some(rest) = s.strip_prefix("impl")
        && (rest.starts_with([' ', '<']))
    {
        let sig = rest.split('{').next().unwrap_or(rest);
        let sig = sig.split(" where").next().unwrap_or(sig).trim();
        return container(format!("impl {}", normalise_space(sig)));
    }
    if let Some(rest) = s.strip_prefix("macro_rules!") {
        return head(format!("macro {}!", ident(rest.trim_start())?));
    }
    None
}

fn normalise_space(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn python_head(line: &str, indent: usize) -> Option<Head> {
    let s = line.strip_prefix("async ").unwrap_or(line);
    if let Some(rest) = after_word(s, "def") {
        return head(format!("def {}", ident(rest)?));
    }
    if let Some(rest) = after_word(s, "class") {
        return container(format!("class {}", ident(rest)?));
    }
    if indent == 0 {
        return upper_constant(line);
    }
    None
}

/// `MAX_LINES = 10`, `MAX_LINES: int = 10`: a constant by its shouted name.
fn upper_constant(line: &str) -> Option<Head> {
    let name = ident(line)?;
    let rest = line[name.len()..].trim_start();
    let assigns = rest.starts_with('=') && !rest.starts_with("==")
        || rest.starts_with(':') && rest.contains('=');
    let shouted = name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (assigns && shouted && name.len() > 1).then(|| Head {
        name: name.to_string(),
        container: false,
        top_only: true,
    })
}

/// Words a line may start with that are not a method's name.
const SCRIPT_KEYWORDS: [&str; 16] = [
    "if", "for", "while", "switch", "catch", "return", "function", "new", "await", "else", "do",
    "try", "with", "typeof", "delete", "throw",
];

fn script_head(line: &str, indent: usize, in_container: bool) -> Option<Head> {
    let s = strip_words(line, &["export", "default", "declare", "abstract"]);
    let s2 = strip_words(s, &["async"]);
    if let Some(rest) = s2.strip_prefix("function") {
        let rest = rest.trim_start_matches('*').trim_start();
        return head(format!("function {}", ident(rest)?));
    }
    if let Some(rest) = after_word(s, "class") {
        return container(format!("class {}", ident(rest)?));
    }
    for kw in ["interface", "enum"] {
        if let Some(rest) = after_word(s, kw) {
            return head(format!("{kw} {}", ident(rest)?));
        }
    }
    if let Some(rest) = after_word(s, "type") {
        let name = ident(rest)?;
        let after = rest[name.len()..].trim_start();
        if after.starts_with('=') || after.starts_with('<') {
            return head(format!("type {name}"));
        }
    }
    // Top-level bindings: `export const handler = …`.
    if indent == 0 || s.len() != line.len() {
        for kw in ["const", "let", "var"] {
            if let Some(rest) = after_word(s, kw) {
                let name = ident(rest)?;
                let after = rest[name.len()..].trim_start();
                if after.starts_with('=') || after.starts_with(':') {
                    return top_only(name.to_string());
                }
            }
        }
    }
    if in_container {
        // A method: `name(args) {`, `async name(`, `static name(`, `get name(`.
        let s = strip_words(
            line,
            &[
                "public",
                "private",
                "protected",
                "static",
                "async",
                "readonly",
                "override",
                "get",
                "set",
            ],
        );
        let s = s.trim_start_matches('#');
        let name = ident(s)?;
        let after = s[name.len()..].trim_start();
        let after = after.strip_prefix('?').unwrap_or(after);
        let is_method = (after.starts_with('(') || after.starts_with('<'))
            && (line.trim_end().ends_with('{') || line.contains(") {") || line.contains("): "));
        if is_method && !SCRIPT_KEYWORDS.contains(&name) {
            return head(name.to_string());
        }
    }
    None
}

fn go_head(line: &str, indent: usize) -> Option<Head> {
    if let Some(rest) = after_word(line, "func") {
        if let Some(recv) = rest.strip_prefix('(') {
            // `func (r *Renderer) Render(`: `Renderer.Render`.
            let (receiver, after) = recv.split_once(')')?;
            let ty = receiver.split_whitespace().last()?.trim_start_matches('*');
            let ty = ty.split('[').next().unwrap_or(ty);
            return head(format!("{ty}.{}", ident(after.trim_start())?));
        }
        return head(format!("func {}", ident(rest)?));
    }
    if indent == 0 {
        if let Some(rest) = after_word(line, "type") {
            return head(format!("type {}", ident(rest)?));
        }
        for kw in ["const", "var"] {
            if let Some(rest) = after_word(line, kw) {
                return top_only(ident(rest)?.to_string());
            }
        }
    }
    None
}

fn ruby_head(line: &str) -> Option<Head> {
    if let Some(rest) = after_word(line, "def") {
        let rest = rest.strip_prefix("self.").unwrap_or(rest);
        return head(format!("def {}", ident(rest)?));
    }
    for kw in ["class", "module"] {
        if let Some(rest) = after_word(line, kw) {
            if rest.starts_with("<<") {
                return None;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            return (!name.is_empty()).then(|| Head {
                name: format!("{kw} {name}"),
                container: true,
                top_only: false,
            });
        }
    }
    upper_constant(line)
}

/// Module attributes that are annotations, not constants.
const ELIXIR_ANNOTATIONS: [&str; 24] = [
    "doc",
    "moduledoc",
    "typedoc",
    "spec",
    "impl",
    "type",
    "typep",
    "opaque",
    "callback",
    "macrocallback",
    "behaviour",
    "derive",
    "tag",
    "describetag",
    "moduletag",
    "dialyzer",
    "compile",
    "before_compile",
    "after_compile",
    "external_resource",
    "on_load",
    "deprecated",
    "since",
    "optional_callbacks",
];

fn elixir_head(line: &str) -> Option<Head> {
    if let Some(rest) = after_word(line, "defmodule") {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        return (!name.is_empty()).then_some(Head {
            name,
            container: true,
            top_only: false,
        });
    }
    for kw in [
        "def",
        "defp",
        "defmacro",
        "defmacrop",
        "defguard",
        "defguardp",
        "defdelegate",
    ] {
        if let Some(rest) = after_word(line, kw) {
            let name = ident(rest)?;
            let arity = elixir_arity(&rest[name.len()..]);
            return head(format!("{name}/{arity}"));
        }
    }
    if let Some(rest) = line.strip_prefix('@') {
        let name = ident(rest)?;
        let value = rest[name.len()..].trim_start();
        let is_value = !value.is_empty() && !value.starts_with("do");
        if is_value && !ELIXIR_ANNOTATIONS.contains(&name) {
            return top_only(format!("@{name}"));
        }
    }
    None
}

/// The arguments of `(a, %{b: c}, [d | e]) when …` counted at the top level;
/// `name do` and `name, do:` take none.
fn elixir_arity(after_name: &str) -> usize {
    let Some(args) = after_name.strip_prefix('(') else {
        return 0;
    };
    let mut depth = 0i32;
    let mut count = 0;
    let mut seen = false;
    let mut quote: Option<char> = None;
    for c in args.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                seen = true;
            }
            '(' | '[' | '{' => {
                depth += 1;
                seen = true;
            }
            ')' | ']' | '}' if depth == 0 => break,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => count += 1,
            c if !c.is_whitespace() => seen = true,
            _ => {}
        }
    }
    if seen { count + 1 } else { 0 }
}

fn toml_head(line: &str, section: &mut Option<String>) -> Option<Head> {
    if let Some(rest) = line.strip_prefix('[') {
        let name = rest.trim_start_matches('[').split(']').next()?.trim();
        *section = Some(name.to_string());
        return top_only(format!("[{name}]"));
    }
    if line.starts_with('#') {
        return None;
    }
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    top_only(match section {
        Some(s) => format!("{s}.{key}"),
        None => key.to_string(),
    })
}

fn yaml_head(line: &str, indent: usize, parent: &mut Option<String>) -> Option<Head> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with('-') || indent > 2 {
        return None;
    }
    let (key, _) = t.split_once(':')?;
    let key = key.trim().trim_matches(['"', '\'']);
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    if indent == 0 {
        *parent = Some(key.to_string());
        return top_only(key.to_string());
    }
    top_only(match parent {
        Some(p) => format!("{p}.{key}"),
        None => key.to_string(),
    })
}

fn headings(lines: &[&str]) -> Vec<Def> {
    let mut found: Vec<(usize, String, usize)> = Vec::new();
    let mut fenced = false;
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&level) && line[level..].starts_with(' ') {
            let title = normalise_space(line[level..].trim().trim_end_matches('#'));
            if !title.is_empty() {
                found.push((level, format!("{} {title}", "#".repeat(level)), i));
            }
        }
    }
    let mut defs: Vec<Def> = Vec::new();
    for (n, (level, name, start)) in found.iter().enumerate() {
        let end = found[n + 1..]
            .iter()
            .find(|(l, _, _)| l <= level)
            .map_or(lines.len(), |(_, _, s)| *s);
        if !defs.iter().any(|d| &d.name == name) {
            defs.push(Def {
                name: name.clone(),
                lines: (*start, end),
                container: false,
            });
        }
    }
    defs
}

/// A JSON text's keys to depth two (`scripts`, `scripts.test`): parsed when
/// the text is whole, else read off its `"key":` lines by indentation.
fn json_keys(text: &str, lines: &[&str]) -> Vec<Def> {
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(text) {
        // Whole: the lines are not tracked, only the names.
        return json_paths(&map)
            .into_iter()
            .map(|(name, _)| Def {
                name,
                lines: (0, lines.len()),
                container: false,
            })
            .collect();
    }
    let keyed: Vec<(usize, &str, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim_start().strip_prefix('"')?;
            let (key, rest) = t.split_once('"')?;
            rest.trim_start()
                .starts_with(':')
                .then_some((indentation(l), key, i))
        })
        .collect();
    let Some(min) = keyed.iter().map(|(i, _, _)| *i).min() else {
        return Vec::new();
    };
    keyed
        .iter()
        .filter(|(i, _, _)| *i == min)
        .map(|(_, key, at)| Def {
            name: (*key).to_string(),
            lines: (*at, at + 1),
            container: false,
        })
        .collect()
}

/// `(path, value)` of each key to depth two, values as compact JSON.
fn json_paths(map: &serde_json::Map<String, serde_json::Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (key, value) in map {
        match value {
            serde_json::Value::Object(inner) if !inner.is_empty() && inner.len() <= 64 => {
                for (k, v) in inner {
                    out.push((format!("{key}.{k}"), v.to_string()));
                }
            }
            _ => out.push((key.clone(), value.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(lang: Lang, text: &str) -> Vec<String> {
        definitions(lang, text)
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    #[test]
    fn every_language_names_its_definitions() {
        let rust = "pub(crate) struct Config {\n    a: u8,\n}\nimpl Config {\n    pub fn new() -> Self {\n        todo!()\n    }\n}\nconst MAX: usize = 3;\npub async fn run() {}\nmacro_rules! m { () => {} }\n";
        assert_eq!(
            names(Lang::Rust, rust),
            [
                "struct Config",
                "impl Config",
                "Config::new",
                "MAX",
                "fn run",
                "macro m!"
            ]
        );
        let py = "import os\nMAX_LINES = 10\nclass Renderer:\n    def render(self, x):\n        pass\nasync def main():\n    pass\n";
        assert_eq!(
            names(Lang::Python, py),
            ["MAX_LINES", "class Renderer", "Renderer.render", "def main"]
        );
        let ts = "export interface Props { a: number }\nexport const handler = async () => {};\nexport default class View {\n  render(): string {\n    if (x) {\n    }\n  }\n}\ntype Id = string;\nfunction helper(a) {\n}\n";
        assert_eq!(
            names(Lang::Script, ts),
            [
                "interface Props",
                "handler",
                "class View",
                "View.render",
                "type Id",
                "function helper"
            ]
        );
        let go = "package x\nfunc (r *Renderer) Render(w io.Writer) error {\n}\nfunc New() *Renderer {\n}\ntype Renderer struct {\n}\n";
        assert_eq!(
            names(Lang::Go, go),
            ["Renderer.Render", "func New", "type Renderer"]
        );
        let rb = "module Spotter\n  class Renderer\n    MAX = 5\n    def self.call(x)\n    end\n    def valid?\n    end\n  end\nend\n";
        assert_eq!(
            names(Lang::Ruby, rb),
            [
                "module Spotter",
                "class Renderer",
                "MAX",
                "Renderer#call",
                "Renderer#valid?"
            ]
        );
        let ex = "defmodule Spotter.Renderer do\n  @default_visible_lines 10\n  @doc \"x\"\n  def render(messages, opts \\\\ []) do\n  end\n  defp extract(%{a: 1, b: 2}) do\n  end\n  defp extract(_), do: nil\n  def ping, do: :pong\nend\n";
        assert_eq!(
            names(Lang::Elixir, ex),
            [
                "Spotter.Renderer",
                "@default_visible_lines",
                "render/2",
                "extract/1",
                "ping/0"
            ]
        );
        let toml = "[package]\nname = \"x\"\n[dependencies]\nserde = \"1\"\n";
        assert_eq!(
            names(Lang::Toml, toml),
            [
                "[package]",
                "package.name",
                "[dependencies]",
                "dependencies.serde"
            ]
        );
        let yaml = "jobs:\n  test:\n    runs-on: x\n  lint:\nname: ci\n";
        assert_eq!(
            names(Lang::Yaml, yaml),
            ["jobs", "jobs.test", "jobs.lint", "name"]
        );
        let md = "# Title\ntext\n## Usage\n```\n# not a heading\n```\n### Flags\n";
        assert_eq!(
            names(Lang::Markdown, md),
            ["# Title", "## Usage", "### Flags"]
        );
        let json = "{\"name\": \"x\", \"scripts\": {\"test\": \"jest\"}}";
        assert_eq!(names(Lang::Json, json), ["name", "scripts.test"]);
    }

    #[test]
    fn a_whole_text_diff_tells_added_changed_and_removed() {
        let before =
            "defmodule M do\n  def a(x) do\n    x\n  end\n\n  def b do\n    1\n  end\nend\n";
        let after = "defmodule M do\n  def a(x) do\n    x + 1\n  end\n\n  def c(y), do: y\nend\n";
        let change = diff_texts(Lang::Elixir, before, after);
        assert_eq!(change.added, ["c/1"]);
        assert_eq!(change.changed, ["a/1"]);
        assert_eq!(change.removed, ["b/0"]);
    }

    #[test]
    fn a_snippet_diff_and_the_enclosing_definition() {
        let change = diff_snippets(
            Lang::Python,
            "def old():\n    pass\n",
            "def new():\n    pass\n",
        );
        assert_eq!(change.added, ["def new"]);
        assert_eq!(change.removed, ["def old"]);
        let text = "class A:\n    def f(self):\n        x = 1\n        return x\n";
        assert_eq!(enclosing(Lang::Python, text, 2).as_deref(), Some("A.f"));
        assert_eq!(enclosing(Lang::Python, text, 0).as_deref(), Some("class A"));
    }

    #[test]
    fn json_keys_diff_as_values() {
        let change = diff_texts(
            Lang::Json,
            "{\"scripts\": {\"test\": \"jest\"}, \"name\": \"a\"}",
            "{\"scripts\": {\"test\": \"vitest\", \"lint\": \"eslint\"}, \"name\": \"a\"}",
        );
        assert_eq!(change.added, ["scripts.lint"]);
        assert_eq!(change.changed, ["scripts.test"]);
        assert!(change.removed.is_empty());
    }

    #[test]
    fn elixir_arity_counts_top_level_arguments() {
        assert_eq!(elixir_arity("(a, %{b: c, d: e}, [f | g])"), 3);
        assert_eq!(elixir_arity("()"), 0);
        assert_eq!(elixir_arity(" do"), 0);
        assert_eq!(elixir_arity("(socket, \"a,b\")"), 2);
        let multi =
            "  defp render_block(\n    %{\"type\" => t} = block,\n    opts\n  ) do\n  end\n";
        assert_eq!(definitions(Lang::Elixir, multi)[0].name, "render_block/2");
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    #[test]
    fn rust_items_after_doc_comments_and_one_line_impls() {
        let text = "//! Math.\n\nuse std::fmt;\n\n/// Error.\n#[derive(Debug)]\npub struct NegativeInputError;\n\nimpl fmt::Display for NegativeInputError {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"x\")\n    }\n}\n\nimpl Error for NegativeInputError {}\n\n/// Doc.\n///\n/// ```\n/// use x::factorial;\n/// ```\npub fn factorial(n: i64) -> Result<u64, NegativeInputError> {\n    Ok(1)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_factorial() {\n    }\n}\n";
        let names: Vec<String> = definitions(Lang::Rust, text)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(
            names,
            [
                "struct NegativeInputError",
                "impl fmt::Display for NegativeInputError",
                "NegativeInputError::fmt",
                "impl Error for NegativeInputError",
                "fn factorial",
                "mod tests",
                "fn test_factorial"
            ]
        );
    }
}
