//! compactor's MCP server in a client's own MCP configuration, so that a
//! client that keeps its own compaction can search what it dropped:
//!
//! - Claude Code: `mcpServers.compactor` in its user configuration
//!   (`~/.claude.json`, `$CLAUDE_CONFIG_DIR/.claude.json`) or a project's
//!   `.mcp.json`, `{"type": "stdio", "command": …, "args": […]}` as `claude
//!   mcp add` writes it; edited as a tree that keeps the file's key order.
//! - Codex: a `[mcp_servers.compactor]` table in `config.toml`, edited as
//!   text (no TOML tree: the user's comments and layout stay): the table is
//!   one block of lines compactor appends, headed by a comment naming it, and
//!   removes whole. Its tools are approved (`default_tools_approval_mode`):
//!   they only read the record, and `codex exec` refuses a tool that asks.
//!
//! Pure: text in, text out.

use super::json::Json;
use super::settings::Settings;

/// The name the server is registered under.
pub const NAME: &str = "compactor";

/// The command a client runs to start the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// An absolute path.
    pub command: String,
    pub args: Vec<String>,
}

impl Server {
    /// The command line, for people.
    pub fn shown(&self) -> String {
        std::iter::once(self.command.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(super::settings::shell_quote)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum McpConfigError {
    #[error("its \"mcpServers\" is {found}; expected an object of MCP servers")]
    ServersNotObject { found: &'static str },
    #[error(
        "it already defines an MCP server named compactor at line {line} that compactor did not add"
    )]
    ForeignEntry { line: usize },
    #[error(
        "its mcp_servers is an inline table (line {line}), which a [mcp_servers.compactor] table cannot extend"
    )]
    InlineServers { line: usize },
}

// ------------------------------------------------------------ Claude Code

/// The server entry `mcpServers.compactor` of a Claude Code configuration.
pub fn claude_entry(settings: &Settings) -> Option<&Json> {
    settings.tree.get("mcpServers")?.get(NAME)
}

/// The command line of a Claude Code entry, for `status`.
pub fn claude_entry_shown(entry: &Json) -> String {
    let mut words = vec![
        entry
            .get("command")
            .and_then(Json::as_str)
            .unwrap_or("?")
            .to_string(),
    ];
    if let Some(Json::Array(args)) = entry.get("args") {
        words.extend(args.iter().filter_map(Json::as_str).map(str::to_string));
    }
    words
        .iter()
        .map(|w| super::settings::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// These settings with the server registered: `mcpServers.compactor`
/// replaced in place, or appended (and `mcpServers` after the user's keys).
pub fn with_claude_server(
    settings: &Settings,
    server: &Server,
) -> Result<Settings, McpConfigError> {
    let mut out = settings.clone();
    let Json::Object(pairs) = &mut out.tree else {
        unreachable!("a settings tree is an object")
    };
    if !pairs.iter().any(|(k, _)| k == "mcpServers") {
        pairs.push(("mcpServers".into(), Json::Object(Vec::new())));
    }
    let servers = pairs
        .iter_mut()
        .find(|(k, _)| k == "mcpServers")
        .map(|(_, v)| v)
        .expect("just ensured");
    let Json::Object(servers) = servers else {
        return Err(McpConfigError::ServersNotObject {
            found: servers.type_name(),
        });
    };
    let entry = Json::Object(vec![
        ("type".into(), Json::String("stdio".into())),
        ("command".into(), Json::String(server.command.clone())),
        (
            "args".into(),
            Json::Array(server.args.iter().cloned().map(Json::String).collect()),
        ),
        ("env".into(), Json::Object(Vec::new())),
    ]);
    match servers.iter_mut().find(|(k, _)| k == NAME) {
        Some((_, v)) => *v = entry,
        None => servers.push((NAME.into(), entry)),
    }
    Ok(out)
}

/// These settings without the server: `mcpServers` goes too when removing
/// the entry emptied it.
pub fn without_claude_server(settings: &Settings) -> Settings {
    let mut out = settings.clone();
    let Json::Object(pairs) = &mut out.tree else {
        return out;
    };
    let Some(at) = pairs.iter().position(|(k, _)| k == "mcpServers") else {
        return out;
    };
    if let Json::Object(servers) = &mut pairs[at].1 {
        let before = servers.len();
        servers.retain(|(k, _)| k != NAME);
        if servers.is_empty() && before > 0 {
            pairs.remove(at);
        }
    }
    out
}

// ------------------------------------------------------------ Codex

/// The comment that heads compactor's block in Codex's `config.toml`.
pub const CODEX_MARK: &str =
    "# compactor's MCP server: `compactor hooks uninstall codex` removes this table";

/// The block of lines compactor's table is in Codex's `config.toml`.
pub fn codex_block(server: &Server) -> String {
    let args: Vec<String> = server
        .args
        .iter()
        .map(|a| crate::launch::toml_string(a))
        .collect();
    format!(
        "{CODEX_MARK}\n[mcp_servers.{NAME}]\ncommand = {}\nargs = [{}]\ndefault_tools_approval_mode = \"approve\"\n",
        crate::launch::toml_string(&server.command),
        args.join(", ")
    )
}

/// Where compactor's block is in `text`: its byte range, from its mark to
/// the end of its last line (the next table's header, a blank line after
/// its keys, or the end).
fn codex_block_range(text: &str) -> Option<(usize, usize)> {
    let start = line_starts(text).find(|&i| text[i..].starts_with(CODEX_MARK))?;
    let mut end = start;
    let mut first = true;
    for line in text[start..].split_inclusive('\n') {
        let t = line.trim();
        let header_of_another = t.starts_with('[') && t != format!("[mcp_servers.{NAME}]");
        if !first && (t.is_empty() || header_of_another || t.starts_with('#')) {
            break;
        }
        first = false;
        end += line.len();
    }
    Some((start, end))
}

fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(
        text.match_indices('\n')
            .map(|(i, _)| i + 1)
            .filter(move |&i| i < text.len()),
    )
}

/// compactor's table in `text`, as it is written there.
pub fn codex_entry(text: &str) -> Option<&str> {
    codex_block_range(text).map(|(a, b)| &text[a..b])
}

/// The command line a `config.toml` block runs, for `status`.
pub fn codex_entry_shown(block: &str) -> String {
    let value = |key: &str| {
        block
            .lines()
            .find_map(|l| l.trim().strip_prefix(key)?.trim_start().strip_prefix('='))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    format!("command = {} · args = {}", value("command"), value("args"))
}

/// `config.toml`'s text with compactor's table: replaced in place, or
/// appended after a blank line. Refused when the file defines a server of
/// that name of its own, or `mcp_servers` as an inline table.
pub fn with_codex_server(text: &str, server: &Server) -> Result<String, McpConfigError> {
    let block = codex_block(server);
    if let Some((a, b)) = codex_block_range(text) {
        return Ok(format!("{}{block}{}", &text[..a], &text[b..]));
    }
    for (n, line) in text.lines().enumerate() {
        let t: String = line
            .split('#')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let ours = t.starts_with(&format!("[mcp_servers.{NAME}]"))
            || t.starts_with(&format!("[mcp_servers.{NAME}."))
            || t.starts_with(&format!("mcp_servers.{NAME}"))
            || t.starts_with(&format!("[mcp_servers.\"{NAME}\"]"));
        if ours {
            return Err(McpConfigError::ForeignEntry { line: n + 1 });
        }
        if t.starts_with("mcp_servers={") {
            return Err(McpConfigError::InlineServers { line: n + 1 });
        }
    }
    // One blank line before the block, which uninstall takes away with it.
    let sep = match text {
        "" => "",
        t if t.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    Ok(format!("{text}{sep}{block}"))
}

/// `config.toml`'s text without compactor's table (and the blank line
/// before it that install added).
pub fn without_codex_server(text: &str) -> String {
    let Some((a, b)) = codex_block_range(text) else {
        return text.to_string();
    };
    let before = &text[..a];
    let before = before
        .strip_suffix('\n')
        .filter(|b| b.is_empty() || b.ends_with('\n'))
        .unwrap_or(before);
    format!("{before}{}", &text[b..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server {
            command: "/opt/bin/compactor".into(),
            args: vec!["mcp".into()],
        }
    }

    #[test]
    fn claude_code_gets_an_entry_as_claude_mcp_add_writes_it_and_loses_it_whole() {
        let text = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  }\n}\n";
        let s = Settings::parse(Some(text)).unwrap();
        let with = with_claude_server(&s, &server()).unwrap();
        let t = with.text();
        assert!(t.find("other").unwrap() < t.find("compactor").unwrap());
        assert_eq!(
            claude_entry_shown(claude_entry(&with).unwrap()),
            "/opt/bin/compactor mcp"
        );
        assert_eq!(
            with_claude_server(&with, &server()).unwrap().tree,
            with.tree
        );
        assert_eq!(without_claude_server(&with).text(), text);
        // An mcpServers only compactor's entry was in goes with it.
        let bare = Settings::parse(Some("{\n  \"a\": 1\n}\n")).unwrap();
        let with = with_claude_server(&bare, &server()).unwrap();
        assert_eq!(without_claude_server(&with).text(), "{\n  \"a\": 1\n}\n");
        let bad = Settings::parse(Some("{\"mcpServers\": []}")).unwrap();
        assert!(with_claude_server(&bad, &server()).is_err());
    }

    #[test]
    fn codex_gets_a_table_appended_and_uninstall_gives_the_text_back() {
        for text in [
            "",
            "model = \"o3\"\n",
            "model = \"o3\"",
            "model = \"o3\"\n\n[tui]\nx = 1\n\n",
        ] {
            let with = with_codex_server(text, &server()).unwrap();
            assert!(
                with.contains(
                    "[mcp_servers.compactor]\ncommand = \"/opt/bin/compactor\"\nargs = [\"mcp\"]\n"
                ),
                "{with}"
            );
            assert!(codex_entry(&with).is_some());
            // Twice is once.
            assert_eq!(with_codex_server(&with, &server()).unwrap(), with);
            let back = without_codex_server(&with);
            assert!(
                back == text || back == format!("{text}\n"),
                "{text:?} → {back:?}"
            );
        }
    }

    #[test]
    fn codex_keeps_what_follows_compactors_table() {
        let with = with_codex_server("a = 1\n", &server()).unwrap();
        let more = format!("{with}\n[profiles.x]\nmodel = \"y\"\n");
        let back = without_codex_server(&more);
        assert_eq!(back, "a = 1\n\n[profiles.x]\nmodel = \"y\"\n");
        // A moved binary: the table is replaced in place.
        let moved = Server {
            command: "/usr/bin/compactor".into(),
            args: vec!["mcp".into()],
        };
        let again = with_codex_server(&more, &moved).unwrap();
        assert!(again.contains("\"/usr/bin/compactor\"") && !again.contains("/opt/bin"));
        assert!(again.ends_with("[profiles.x]\nmodel = \"y\"\n"));
    }

    #[test]
    fn codex_refuses_a_server_of_the_same_name_it_did_not_add() {
        let own = "[mcp_servers.compactor]\ncommand = \"mine\"\n";
        assert_eq!(
            with_codex_server(own, &server()),
            Err(McpConfigError::ForeignEntry { line: 1 })
        );
        assert_eq!(
            with_codex_server("mcp_servers = { a = { command = \"x\" } }\n", &server()),
            Err(McpConfigError::InlineServers { line: 1 })
        );
        assert!(with_codex_server("[mcp_servers.other]\ncommand = \"x\"\n", &server()).is_ok());
    }
}
