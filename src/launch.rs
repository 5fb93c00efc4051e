//! How `compactor run` points each client at the proxy and gives it
//! compactor's MCP server for one run, without touching the client's own
//! configuration: a table with a row per client (what it is called, what is
//! run, how it is told the proxy's address and the server's command). A new
//! client is a row, and a new way of telling it, an arm. Pure: data in, a
//! command line and its environment out.

/// How a client is told where its API is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// An environment variable holding the proxy's base URL
    /// (Claude Code's `ANTHROPIC_BASE_URL`).
    BaseUrlVar(&'static str),
    /// A model provider given with `-c` on Codex's command line, whose
    /// `base_url` is the proxy (`/v1`), speaking the Responses API, its key
    /// from the variable named.
    CodexProvider { env_key: &'static str },
}

/// How a client is given an MCP server for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpFlag {
    /// Claude Code's `--mcp-config JSON`, with the server's tools allowed
    /// (`--allowedTools mcp__compactor`: they only read the record).
    ClaudeMcpConfig,
    /// Codex's `-c mcp_servers.NAME.command=…` and `.args=[…]`, its tools
    /// approved (`default_tools_approval_mode = "approve"`: they only read
    /// the record, and `codex exec` refuses a tool that needs approval).
    CodexConfigOverride,
}

/// A client `compactor run` can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveClient {
    /// Its name on compactor's command line.
    pub name: &'static str,
    /// The name people know it by.
    pub title: &'static str,
    /// The program run (looked up on PATH).
    pub program: &'static str,
    /// How to install it, for the error when it is not there.
    pub install: &'static str,
    pub endpoint: Endpoint,
    pub mcp: McpFlag,
}

/// Every client `compactor run` knows.
pub const CLIENTS: &[LiveClient] = &[
    LiveClient {
        name: "claude",
        title: "Claude Code",
        program: "claude",
        install: "npm install -g @anthropic-ai/claude-code",
        endpoint: Endpoint::BaseUrlVar("ANTHROPIC_BASE_URL"),
        mcp: McpFlag::ClaudeMcpConfig,
    },
    LiveClient {
        name: "codex",
        title: "Codex",
        program: "codex",
        install: "npm install -g @openai/codex",
        endpoint: Endpoint::CodexProvider {
            env_key: "OPENAI_API_KEY",
        },
        mcp: McpFlag::CodexConfigOverride,
    },
];

/// The name compactor's server and provider take in a client.
pub const SERVER_NAME: &str = "compactor";

/// A command a client starts: compactor's MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// An absolute path.
    pub program: String,
    pub args: Vec<String>,
}

/// A client's command line and the variables set for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl LiveClient {
    pub fn find(name: &str) -> Option<LiveClient> {
        CLIENTS.iter().copied().find(|c| c.name == name)
    }

    /// The client started against the proxy at `proxy_url`
    /// (`http://127.0.0.1:PORT`) with `server` registered, and the user's
    /// own arguments `user_args` (kept in their order).
    pub fn launch(&self, proxy_url: &str, server: &ServerCommand, user_args: &[String]) -> Launch {
        let mut ours: Vec<String> = Vec::new();
        let mut env = Vec::new();
        let mut leading = true;
        match self.endpoint {
            Endpoint::BaseUrlVar(var) => env.push((var.to_string(), proxy_url.to_string())),
            Endpoint::CodexProvider { env_key } => {
                let provider = format!(
                    "{{name = {}, base_url = {}, wire_api = \"responses\", env_key = {}}}",
                    toml_string("OpenAI through compactor"),
                    toml_string(&format!("{proxy_url}/v1")),
                    toml_string(env_key)
                );
                ours.extend([
                    "-c".into(),
                    format!("model_provider={}", toml_string(SERVER_NAME)),
                    "-c".into(),
                    format!("model_providers.{SERVER_NAME}={provider}"),
                ]);
            }
        }
        match self.mcp {
            McpFlag::ClaudeMcpConfig => {
                let config = serde_json::json!({"mcpServers": {SERVER_NAME: {
                    "type": "stdio",
                    "command": server.program,
                    "args": server.args,
                }}});
                ours.extend([
                    "--mcp-config".into(),
                    config.to_string(),
                    "--allowedTools".into(),
                    format!("mcp__{SERVER_NAME}"),
                ]);
                // Its options take several values: ours go after the user's
                // words, so none of theirs is read as one of our values.
                leading = false;
            }
            McpFlag::CodexConfigOverride => {
                let args: Vec<String> = server.args.iter().map(|a| toml_string(a)).collect();
                ours.extend([
                    "-c".into(),
                    format!(
                        "mcp_servers.{SERVER_NAME}.command={}",
                        toml_string(&server.program)
                    ),
                    "-c".into(),
                    format!("mcp_servers.{SERVER_NAME}.args=[{}]", args.join(", ")),
                    "-c".into(),
                    format!("mcp_servers.{SERVER_NAME}.default_tools_approval_mode=\"approve\""),
                ]);
            }
        }
        let args = if leading {
            ours.into_iter().chain(user_args.iter().cloned()).collect()
        } else {
            // Before a `--` of the user's (what follows it is not options).
            let at = user_args
                .iter()
                .position(|a| a == "--")
                .unwrap_or(user_args.len());
            let mut all = user_args[..at].to_vec();
            all.extend(ours);
            all.extend_from_slice(&user_args[at..]);
            all
        };
        Launch {
            program: self.program.to_string(),
            args,
            env,
        }
    }
}

/// `s` as a TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ServerCommand {
        ServerCommand {
            program: "/opt/bin/compactor".into(),
            args: vec!["--db".into(), "/data/my \"c\".db".into(), "mcp".into()],
        }
    }

    #[test]
    fn claude_code_is_pointed_by_its_variable_and_given_the_server_after_the_users_words() {
        let c = LiveClient::find("claude").unwrap();
        let l = c.launch(
            "http://127.0.0.1:4100",
            &server(),
            &["-p".into(), "hi".into(), "--".into(), "--x".into()],
        );
        assert_eq!(l.program, "claude");
        assert_eq!(
            l.env,
            vec![("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:4100".into())]
        );
        assert_eq!(&l.args[..2], &["-p", "hi"]);
        assert_eq!(l.args[2], "--mcp-config");
        let config: serde_json::Value = serde_json::from_str(&l.args[3]).unwrap();
        assert_eq!(
            config["mcpServers"]["compactor"]["command"],
            "/opt/bin/compactor"
        );
        assert_eq!(
            config["mcpServers"]["compactor"]["args"][1],
            "/data/my \"c\".db"
        );
        assert_eq!(
            &l.args[4..],
            &["--allowedTools", "mcp__compactor", "--", "--x"]
        );
    }

    #[test]
    fn codex_gets_a_provider_and_the_server_on_its_command_line_before_the_users_words() {
        let c = LiveClient::find("codex").unwrap();
        let l = c.launch(
            "http://127.0.0.1:4100",
            &server(),
            &["exec".into(), "go".into()],
        );
        assert!(l.env.is_empty());
        assert_eq!(
            l.args,
            vec![
                "-c",
                "model_provider=\"compactor\"",
                "-c",
                "model_providers.compactor={name = \"OpenAI through compactor\", base_url = \"http://127.0.0.1:4100/v1\", wire_api = \"responses\", env_key = \"OPENAI_API_KEY\"}",
                "-c",
                "mcp_servers.compactor.command=\"/opt/bin/compactor\"",
                "-c",
                "mcp_servers.compactor.args=[\"--db\", \"/data/my \\\"c\\\".db\", \"mcp\"]",
                "-c",
                "mcp_servers.compactor.default_tools_approval_mode=\"approve\"",
                "exec",
                "go",
            ]
        );
    }

    #[test]
    fn toml_strings_escape_what_they_must() {
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(toml_string("\u{1b}"), "\"\\u001B\"");
    }
}
