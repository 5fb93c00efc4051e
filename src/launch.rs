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
    /// A provider in OpenCode's `OPENCODE_CONFIG_CONTENT` (the config it
    /// reads from its environment, over the user's files), of npm type
    /// `@ai-sdk/openai-compatible`, whose `baseURL` is the proxy (`/v1`),
    /// its key from the variable named; its model is the one the user's
    /// `-m compactor/MODEL` names.
    OpencodeProvider { env_key: &'static str },
    /// Gemini CLI's `GOOGLE_GEMINI_BASE_URL`, with the auth type that
    /// sends its `GEMINI_API_KEY` there (`security.auth.selectedType`
    /// `gemini-api-key`, in the settings [`gemini_settings`] writes: set
    /// alone, the base URL selects a `gateway` auth its non-interactive
    /// mode refuses).
    GeminiBaseUrl,
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
    /// A local server in OpenCode's `OPENCODE_CONFIG_CONTENT` (`mcp.NAME`).
    OpencodeConfig,
    /// `mcpServers.NAME` in the settings [`gemini_settings`] writes, trusted
    /// (its tools only read the record, and a headless run refuses a tool
    /// that asks for confirmation).
    GeminiSettings,
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
    LiveClient {
        name: "opencode",
        title: "OpenCode",
        program: "opencode",
        install: "npm install -g opencode-ai",
        endpoint: Endpoint::OpencodeProvider {
            env_key: "OPENAI_API_KEY",
        },
        mcp: McpFlag::OpencodeConfig,
    },
    LiveClient {
        name: "gemini",
        title: "Gemini CLI",
        program: "gemini",
        install: "npm install -g @google/gemini-cli",
        endpoint: Endpoint::GeminiBaseUrl,
        mcp: McpFlag::GeminiSettings,
    },
];

impl Endpoint {
    /// How a person points the client at the proxy at `proxy_url`
    /// (`http://127.0.0.1:PORT`) by hand, in a few words.
    pub fn by_hand(&self, program: &str, proxy_url: &str) -> String {
        match self {
            Endpoint::BaseUrlVar(var) => format!("{var}={proxy_url} {program}"),
            Endpoint::CodexProvider { .. } => format!(
                "a model provider with base_url = \"{proxy_url}/v1\" and wire_api = \"responses\""
            ),
            Endpoint::OpencodeProvider { .. } => format!(
                "a provider of npm type @ai-sdk/openai-compatible with baseURL \"{proxy_url}/v1\""
            ),
            Endpoint::GeminiBaseUrl => format!(
                "GOOGLE_GEMINI_BASE_URL={proxy_url} {program}, with security.auth.selectedType \"gemini-api-key\" in its settings"
            ),
        }
    }
}

/// Every client, and how to point it at the proxy at `proxy_url` by hand
/// (what `compactor proxy` prints when it starts): each of [`CLIENTS`],
/// then any client of the OpenAI Chat Completions API.
pub fn pointing_by_hand(proxy_url: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = CLIENTS
        .iter()
        .map(|c| (c.title, c.endpoint.by_hand(c.program, proxy_url)))
        .collect();
    out.push((
        "Any OpenAI-compatible client",
        format!("base URL {proxy_url}/v1 (Chat Completions)"),
    ));
    out
}

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
        // OpenCode's configuration, given whole in its environment.
        let mut opencode = serde_json::Map::new();
        match self.endpoint {
            Endpoint::BaseUrlVar(var) => env.push((var.to_string(), proxy_url.to_string())),
            Endpoint::GeminiBaseUrl => {
                env.push((GEMINI_BASE_URL_VAR.to_string(), proxy_url.to_string()));
            }
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
            Endpoint::OpencodeProvider { env_key } => {
                let mut models = serde_json::Map::new();
                if let Some(m) = opencode_model(user_args) {
                    models.insert(m.to_string(), serde_json::json!({ "name": m }));
                }
                opencode.insert(
                    "provider".into(),
                    serde_json::json!({SERVER_NAME: {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "OpenAI-compatible through compactor",
                        "options": {
                            "baseURL": format!("{proxy_url}/v1"),
                            "apiKey": format!("{{env:{env_key}}}"),
                        },
                        "models": models,
                    }}),
                );
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
            // In the settings `run` writes (see `gemini_settings`).
            McpFlag::GeminiSettings => {}
            McpFlag::OpencodeConfig => {
                let command: Vec<&str> = std::iter::once(server.program.as_str())
                    .chain(server.args.iter().map(String::as_str))
                    .collect();
                opencode.insert(
                    "mcp".into(),
                    serde_json::json!({SERVER_NAME: {
                        "type": "local",
                        "command": command,
                        "enabled": true,
                    }}),
                );
            }
        }
        if !opencode.is_empty() {
            env.push((
                OPENCODE_CONFIG_VAR.to_string(),
                serde_json::Value::Object(opencode).to_string(),
            ));
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

/// The variable Gemini CLI reads its API's base URL from.
pub const GEMINI_BASE_URL_VAR: &str = "GOOGLE_GEMINI_BASE_URL";

/// The variable Gemini CLI takes as the home its `.gemini/` is in.
pub const GEMINI_HOME_VAR: &str = "GEMINI_CLI_HOME";

/// The settings Gemini CLI runs with under `compactor run`: the user's own
/// (`user`, the text of `~/.gemini/settings.json`, if any; JSON with
/// comments, as the CLI reads it), every key kept, with the auth type that
/// sends the API key to the proxy and compactor's MCP server. Why it is not
/// in a file named by `GEMINI_CLI_SYSTEM_SETTINGS_PATH`: Gemini CLI 0.61
/// reads that file only when root owns it and every directory above it.
pub fn gemini_settings(user: Option<&str>, server: &ServerCommand) -> Result<String, String> {
    let mut settings = match user.map(strip_json_comments) {
        None => serde_json::Map::new(),
        Some(text) if text.trim().is_empty() => serde_json::Map::new(),
        Some(text) => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Object(o)) => o,
            Ok(_) => return Err("it is not a JSON object".into()),
            Err(e) => return Err(format!("it is not JSON: {e}")),
        },
    };
    let object = |m: &mut serde_json::Map<String, serde_json::Value>, key: &str| {
        if !m.get(key).is_some_and(serde_json::Value::is_object) {
            m.insert(key.to_string(), serde_json::json!({}));
        }
    };
    object(&mut settings, "security");
    let security = settings["security"].as_object_mut().expect("an object");
    object(security, "auth");
    security["auth"]["selectedType"] = serde_json::json!("gemini-api-key");
    object(&mut settings, "mcpServers");
    settings["mcpServers"][SERVER_NAME] = serde_json::json!({
        "command": server.program,
        "args": server.args,
        "trust": true,
    });
    let mut text = serde_json::to_string_pretty(&serde_json::Value::Object(settings))
        .expect("values serialise");
    text.push('\n');
    Ok(text)
}

/// JSON with `//` and `/* */` comments, as Gemini CLI writes its settings,
/// without them (strings kept whole).
fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => while chars.next_if(|n| *n != '\n').is_some() {},
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The variable OpenCode reads a whole configuration from.
pub const OPENCODE_CONFIG_VAR: &str = "OPENCODE_CONFIG_CONTENT";

/// The model a client's arguments name on compactor's provider: the
/// `MODEL` of `-m compactor/MODEL` (`--model`, `=` forms too), before any
/// `--` of the user's.
pub fn opencode_model(user_args: &[String]) -> Option<&str> {
    let mut it = user_args.iter().take_while(|a| *a != "--");
    let prefix = format!("{SERVER_NAME}/");
    while let Some(a) = it.next() {
        let value = match a.as_str() {
            "-m" | "--model" => it.next().map(String::as_str),
            _ => a.strip_prefix("--model=").or_else(|| a.strip_prefix("-m=")),
        };
        if let Some(m) = value.and_then(|v| v.strip_prefix(prefix.as_str()))
            && !m.is_empty()
        {
            return Some(m);
        }
    }
    None
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

    #[test]
    fn every_client_is_named_with_how_to_point_it_by_hand() {
        let lines = pointing_by_hand("http://127.0.0.1:8787");
        let names: Vec<&str> = lines.iter().map(|(c, _)| *c).collect();
        for c in CLIENTS {
            assert!(names.contains(&c.title), "{} is named", c.title);
        }
        assert_eq!(names.last(), Some(&"Any OpenAI-compatible client"));
        assert_eq!(
            lines[0].1,
            "ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude"
        );
        assert!(
            lines
                .iter()
                .all(|(_, how)| how.contains("http://127.0.0.1:8787"))
        );
    }

    fn server() -> ServerCommand {
        ServerCommand {
            program: "/opt/bin/compactor".into(),
            args: vec!["--db".into(), "/data/my \"c\".db".into(), "mcp".into()],
        }
    }

    #[test]
    fn gemini_cli_is_pointed_by_its_variable_and_its_settings_keep_the_users() {
        let c = LiveClient::find("gemini").unwrap();
        let l = c.launch(
            "http://127.0.0.1:4100",
            &server(),
            &["-p".into(), "hi".into()],
        );
        assert_eq!(l.program, "gemini");
        assert_eq!(
            l.env,
            vec![(
                "GOOGLE_GEMINI_BASE_URL".into(),
                "http://127.0.0.1:4100".into()
            )]
        );
        assert_eq!(l.args, ["-p", "hi"]);
        let user = "{\n  // the user's\n  \"model\": {\"name\": \"gemini-3-pro\"}, /* a note */\n  \"security\": {\"auth\": {\"selectedType\": \"oauth-personal\"}, \"folderTrust\": {\"enabled\": true}},\n  \"ui\": {\"theme\": \"a // b\"}\n}\n";
        let s: serde_json::Value =
            serde_json::from_str(&gemini_settings(Some(user), &server()).unwrap()).unwrap();
        assert_eq!(s["model"]["name"], "gemini-3-pro");
        assert_eq!(
            s["ui"]["theme"], "a // b",
            "a comment marker in a string is text"
        );
        assert_eq!(s["security"]["folderTrust"]["enabled"], true);
        assert_eq!(s["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(
            s["mcpServers"]["compactor"]["command"],
            "/opt/bin/compactor"
        );
        assert_eq!(s["mcpServers"]["compactor"]["trust"], true);
        assert!(gemini_settings(None, &server()).is_ok());
        assert!(gemini_settings(Some("[1]"), &server()).is_err());
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
    fn opencode_gets_a_provider_and_the_server_in_its_environment_and_keeps_the_users_words() {
        let c = LiveClient::find("opencode").unwrap();
        let user: Vec<String> = ["run", "-m", "compactor/gpt-4.1", "fix it"]
            .map(String::from)
            .to_vec();
        let l = c.launch("http://127.0.0.1:4100", &server(), &user);
        assert_eq!(l.program, "opencode");
        assert_eq!(l.args, user, "nothing on its command line but the user's");
        assert_eq!(l.env.len(), 1);
        assert_eq!(l.env[0].0, "OPENCODE_CONFIG_CONTENT");
        let config: serde_json::Value = serde_json::from_str(&l.env[0].1).unwrap();
        let p = &config["provider"]["compactor"];
        assert_eq!(p["npm"], "@ai-sdk/openai-compatible");
        assert_eq!(p["options"]["baseURL"], "http://127.0.0.1:4100/v1");
        assert_eq!(p["options"]["apiKey"], "{env:OPENAI_API_KEY}");
        assert_eq!(p["models"]["gpt-4.1"]["name"], "gpt-4.1");
        let m = &config["mcp"]["compactor"];
        assert_eq!(m["type"], "local");
        assert_eq!(
            m["command"],
            serde_json::json!(["/opt/bin/compactor", "--db", "/data/my \"c\".db", "mcp"])
        );
        assert_eq!(m["enabled"], true);
    }

    #[test]
    fn the_model_on_compactors_provider_is_read_from_the_users_words() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(opencode_model(&args(&["-m", "compactor/m1"])), Some("m1"));
        assert_eq!(
            opencode_model(&args(&["run", "--model=compactor/a/b", "x"])),
            Some("a/b")
        );
        assert_eq!(opencode_model(&args(&["--model", "openai/gpt-5"])), None);
        assert_eq!(opencode_model(&args(&["--", "-m", "compactor/m1"])), None);
        assert_eq!(opencode_model(&args(&["-m"])), None);
    }

    #[test]
    fn toml_strings_escape_what_they_must() {
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(toml_string("\u{1b}"), "\"\\u001B\"");
    }
}
