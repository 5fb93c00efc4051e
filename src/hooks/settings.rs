//! compactor's entries in a client's hook settings: Claude Code's
//! `settings.json`, Codex's `hooks.json` and Gemini CLI's `settings.json`
//! share one shape (Gemini CLI's `timeout` is in milliseconds),
//!
//! ```json
//! {"hooks": {"PreCompact": [{"matcher": "...", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}
//! ```
//!
//! An event holds a list of matcher groups, each a list of hook commands.
//! compactor's entry for an event is one group of its own, whose every hook
//! runs `compactor … hook EVENT --client CLIENT`; everything else in the file
//! is the user's and is kept as it is, in its order. Pure: text in, text out.

use super::json::{Json, Layout};
use super::{Client, HookEvent};

/// Seconds the client gives one of compactor's hooks before it kills it
/// (`timeout` in the entry; both clients default to 600). The hook's own
/// deadline ([`super::DEADLINE_SECS`]) is shorter, so it gives up cleanly first.
pub const ENTRY_TIMEOUT_SECS: u64 = 60;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SettingsError {
    #[error(
        "it is not valid JSON: line {line}, column {column}: {message}; expected a JSON object of settings"
    )]
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("its top level is {found}; expected a JSON object of settings")]
    NotObject { found: &'static str },
    #[error("its \"hooks\" is {found}; expected an object of hook events")]
    HooksNotObject { found: &'static str },
    #[error("its hooks.{event} is {found}; expected an array of matcher groups")]
    EventNotArray {
        event: &'static str,
        found: &'static str,
    },
}

/// The hook commands compactor installs for one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entries {
    pub client: Client,
    /// The program and any global flags, shell-quoted: `/usr/local/bin/compactor`,
    /// `'/opt/my tools/compactor' --db /var/lib/c.db`.
    pub program: String,
}

impl Entries {
    /// The entries that run `program` (an absolute path) with the global flags `flags`.
    pub fn new(client: Client, program: &str, flags: &[String]) -> Entries {
        let program = std::iter::once(program)
            .chain(flags.iter().map(String::as_str))
            .map(shell_quote)
            .collect::<Vec<_>>()
            .join(" ");
        Entries { client, program }
    }

    /// The command line the client runs for `event`.
    pub fn command(&self, event: HookEvent) -> String {
        format!("{}{}", self.program, command_tail(event, self.client))
    }

    /// The matcher group of `event`.
    fn group(&self, event: HookEvent) -> Json {
        let hook = Json::Object(vec![
            ("type".into(), Json::String("command".into())),
            ("command".into(), Json::String(self.command(event))),
            (
                "timeout".into(),
                Json::Number(self.client.entry_timeout(ENTRY_TIMEOUT_SECS).into()),
            ),
        ]);
        let mut group = Vec::new();
        if let Some(m) = event.matcher()
            && self.client != Client::GeminiCli
        {
            group.push(("matcher".into(), Json::String(m.into())));
        }
        group.push(("hooks".into(), Json::Array(vec![hook])));
        Json::Object(group)
    }
}

/// What every compactor command for `event` ends with.
fn command_tail(event: HookEvent, client: Client) -> String {
    format!(" hook {} --client {}", event.arg(), client.name())
}

/// `s` as one word of a POSIX shell command line.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@%,".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The first word of a shell command line, unquoted (single and double
/// quotes and backslashes, as far as a program path needs).
fn first_word(command: &str) -> String {
    let mut word = String::new();
    let mut chars = command.trim_start().chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, ' ' | '\t') => break,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            (_, c) => word.push(c),
        }
    }
    word
}

/// Whether `command` is compactor's hook command for `event` and `client`:
/// it ends with ` hook EVENT --client CLIENT` and its program is named
/// `compactor…` (wherever it lives: an entry naming a binary since moved is
/// still compactor's, and a new install replaces it).
pub fn is_compactor_command(command: &str, event: HookEvent, client: Client) -> bool {
    if !command.trim_end().ends_with(&command_tail(event, client)) {
        return false;
    }
    let program = first_word(command);
    std::path::Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("compactor"))
}

/// Whether a matcher group is compactor's for `event`: every hook in it is a
/// command hook running compactor's command (and there is at least one).
fn is_compactor_group(group: &Json, event: HookEvent, client: Client) -> bool {
    let Some(Json::Array(hooks)) = group.get("hooks") else {
        return false;
    };
    !hooks.is_empty()
        && hooks.iter().all(|h| {
            h.get("type").and_then(Json::as_str) == Some("command")
                && h.get("command")
                    .and_then(Json::as_str)
                    .is_some_and(|c| is_compactor_command(c, event, client))
        })
}

/// A settings file read for an edit: the tree and how the text was laid out.
#[derive(Debug, Clone)]
pub struct Settings {
    pub tree: Json,
    pub layout: Layout,
}

impl Settings {
    /// Parse a settings file's text; `None` (a missing file) and blank text
    /// are an empty object.
    pub fn parse(text: Option<&str>) -> Result<Settings, SettingsError> {
        let text = text.unwrap_or("");
        if text.trim().is_empty() {
            return Ok(Settings {
                tree: Json::Object(Vec::new()),
                layout: Layout {
                    indent: "  ".into(),
                    newline: true,
                },
            });
        }
        let tree = Json::parse(text).map_err(|e| SettingsError::NotJson {
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })?;
        if !matches!(tree, Json::Object(_)) {
            return Err(SettingsError::NotObject {
                found: tree.type_name(),
            });
        }
        let settings = Settings {
            tree,
            layout: Layout::of(text),
        };
        settings.check_shape()?;
        Ok(settings)
    }

    /// The file's text.
    pub fn text(&self) -> String {
        self.tree.to_text(&self.layout.indent, self.layout.newline)
    }

    fn check_shape(&self) -> Result<(), SettingsError> {
        let Some(hooks) = self.tree.get("hooks") else {
            return Ok(());
        };
        let Json::Object(events) = hooks else {
            return Err(SettingsError::HooksNotObject {
                found: hooks.type_name(),
            });
        };
        for name in HookEvent::SETTINGS_NAMES {
            if let Some((_, v)) = events.iter().find(|(k, _)| k == name)
                && !matches!(v, Json::Array(_))
            {
                return Err(SettingsError::EventNotArray {
                    event: name,
                    found: v.type_name(),
                });
            }
        }
        Ok(())
    }

    /// compactor's commands found for each event (in event order), for `client`.
    pub fn installed(&self, client: Client) -> Vec<(HookEvent, Vec<String>)> {
        client
            .events()
            .iter()
            .map(|&e| {
                let commands = self
                    .groups(e, client)
                    .iter()
                    .filter(|g| is_compactor_group(g, e, client))
                    .flat_map(|g| match g.get("hooks") {
                        Some(Json::Array(hooks)) => hooks
                            .iter()
                            .filter_map(|h| h.get("command").and_then(Json::as_str))
                            .map(str::to_string)
                            .collect(),
                        _ => Vec::new(),
                    })
                    .collect();
                (e, commands)
            })
            .collect()
    }

    /// Whether any of compactor's entries for `client` is in the file.
    pub fn has_entries(&self, client: Client) -> bool {
        self.installed(client).iter().any(|(_, c)| !c.is_empty())
    }

    fn groups(&self, e: HookEvent, client: Client) -> &[Json] {
        match self
            .tree
            .get("hooks")
            .and_then(|h| h.get(e.name_for(client)))
        {
            Some(Json::Array(groups)) => groups,
            _ => &[],
        }
    }

    /// These settings with `entries` installed: each event's compactor group
    /// is replaced in place, or appended after the user's groups; missing
    /// `hooks` and event keys are appended after the user's keys. Installing
    /// twice gives the same settings.
    pub fn with_entries(&self, entries: &Entries) -> Settings {
        let mut out = self.clone();
        let pairs = object_mut(&mut out.tree);
        if !pairs.iter().any(|(k, _)| k == "hooks") {
            pairs.push(("hooks".into(), Json::Object(Vec::new())));
        }
        let hooks = object_mut(out.tree.get_mut("hooks").expect("just ensured"));
        let client = entries.client;
        for &e in client.events() {
            let name = e.name_for(client);
            if !hooks.iter().any(|(k, _)| k == name) {
                hooks.push((name.into(), Json::Array(Vec::new())));
            }
            let (_, groups) = hooks
                .iter_mut()
                .find(|(k, _)| k == name)
                .expect("just ensured");
            let Json::Array(groups) = groups else {
                unreachable!("the shape was checked on parse")
            };
            let ours = groups
                .iter()
                .position(|g| is_compactor_group(g, e, entries.client));
            let wanted = entries.group(e);
            match ours {
                Some(i) => {
                    groups[i] = wanted;
                    let mut n = 0;
                    groups.retain(|g| {
                        n += 1;
                        n - 1 <= i || !is_compactor_group(g, e, entries.client)
                    });
                }
                None => groups.push(wanted),
            }
        }
        out
    }

    /// These settings without compactor's entries for `client`. An event
    /// left with no group, and `hooks` left with no event, are removed only
    /// when removing compactor's entries emptied them.
    pub fn without_entries(&self, client: Client) -> Settings {
        let mut out = self.clone();
        let Some(Json::Object(hooks)) = out.tree.get_mut("hooks") else {
            return out;
        };
        let mut emptied_any = false;
        for &e in client.events() {
            let Some(idx) = hooks.iter().position(|(k, _)| k == e.name_for(client)) else {
                continue;
            };
            let Json::Array(groups) = &mut hooks[idx].1 else {
                continue;
            };
            let before = groups.len();
            groups.retain(|g| !is_compactor_group(g, e, client));
            if groups.is_empty() && before > 0 {
                hooks.remove(idx);
                emptied_any = true;
            }
        }
        if emptied_any && hooks.is_empty() {
            object_mut(&mut out.tree).retain(|(k, _)| k != "hooks");
        }
        out
    }
}

fn object_mut(v: &mut Json) -> &mut Vec<(String, Json)> {
    match v {
        Json::Object(pairs) => pairs,
        _ => unreachable!("the shape was checked on parse"),
    }
}

/// serde_json's message without its trailing " at line L column C".
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests;
