//! Hooks: compactor inside the client's own compaction.
//!
//! Claude Code and Codex run hook commands around their compaction. The
//! three compactor runs (`compactor hook pre-compact|post-compact|session-start`)
//! import the session incrementally, record the client's own summary with the
//! task, and put compactor's `## Task Context` back into the context right
//! after the client's summary replaced the history. What the clients do, as
//! measured on Claude Code 2.1.332 and Codex 0.171.0 (offline, against a
//! loopback model server):
//!
//! | | Claude Code | Codex |
//! |---|---|---|
//! | settings | `settings.json` (`$CLAUDE_CONFIG_DIR`, `~/.claude`, or the project's `.claude/`) | `hooks.json` (`$CODEX_HOME`, `~/.codex`, or the project's `.codex/`); a new hook runs only once the user trusts it (`/hooks`) |
//! | order | PreCompact, SessionStart (`source: compact`), PostCompact | PreCompact, PostCompact, SessionStart (`source: compact`) |
//! | PreCompact stdin | `session_id`, `transcript_path`, `cwd`, `prompt_id`, `trigger`, `custom_instructions` | `session_id`, `turn_id`, `transcript_path`, `cwd`, `model`, `trigger` |
//! | PreCompact stdout | appended to the summarization prompt under "Additional Instructions:" (after the user's `/compact` text; cut at 10,000 characters) | ignored unless JSON (`continue`, `stopReason`, `systemMessage`) |
//! | PostCompact stdin | the same plus `compact_summary` | the same as PreCompact: no summary (it is the rollout's `compacted` item, already written) |
//! | SessionStart output | `additionalContext` reaches the next request (a `system` message); over 10,000 UTF-16 units it is replaced by a file path and a 2 KB preview | `additionalContext` reaches the next request (a `developer` message); over 10,000 bytes it is cut to its head and tail |
//! | the transcript during the hooks | holds the history before the compaction only | holds the `compacted` item from PostCompact on |
//! | hook timeout | `timeout` seconds (default 600), then killed; compaction goes on | the same |
//!
//! Gemini CLI (0.61.0) has no hook after its compression, and its
//! `PreCompress` is advisory: it fires before every turn's check of the
//! threshold (its output is ignored), so compactor imports the session there.
//! What puts the Task Context back is `BeforeModel`, which runs before every
//! model request with the request's text (`llm_request.messages`) on stdin
//! and may replace any message's text: once the history starts with the
//! CLI's summary (a user message answered by the model's fixed "Got it.
//! Thanks for the additional context!"), the hook appends compactor's Task
//! Context to that summary, in every request after the compression (the
//! change is the request's, not the CLI's history). A request with no summary
//! costs the hook a read of stdin and nothing else. `BeforeAgent`'s
//! `additionalContext` would reach only the next prompt (it fires before the
//! same prompt's compression), so it is not used.
//!
//! Layout: [`settings`] edits the clients' files (pure), [`json`] keeps their
//! key order, [`context`] fits the Task Context under a client's limit,
//! `compare` scores the client's summary and compactor's side by side, and
//! [`adapter`] is where the hooks call the rest of the library.

pub mod adapter;
pub(crate) mod compare;
pub mod context;
pub mod json;
pub mod mcp;
pub mod settings;

/// The client a hook runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    ClaudeCode,
    Codex,
    GeminiCli,
}

impl Client {
    pub const ALL: [Client; 3] = [Client::ClaudeCode, Client::Codex, Client::GeminiCli];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::GeminiCli => "gemini-cli",
        }
    }

    /// The name people know it by.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Codex => "Codex",
            Client::GeminiCli => "Gemini CLI",
        }
    }

    pub fn parse(s: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The hook settings file, relative to the client's configuration directory.
    pub fn settings_file(self) -> &'static str {
        match self {
            Client::ClaudeCode | Client::GeminiCli => "settings.json",
            Client::Codex => "hooks.json",
        }
    }

    /// A project's configuration directory, relative to the project.
    pub fn project_dir(self) -> &'static str {
        match self {
            Client::ClaudeCode => ".claude",
            Client::Codex => ".codex",
            Client::GeminiCli => ".gemini",
        }
    }

    /// How the client measures a hook's context output, and its limit.
    pub fn context_limit(self) -> context::OutputLimit {
        match self {
            // Gemini CLI takes a request's text whole; the same size as
            // Claude Code's keeps the Task Context a small part of it.
            Client::ClaudeCode | Client::GeminiCli => context::OutputLimit::Utf16Units(10_000),
            Client::Codex => context::OutputLimit::Utf8Bytes(10_000),
        }
    }

    /// The events compactor's hooks run on for this client, in order.
    pub fn events(self) -> &'static [HookEvent] {
        match self {
            Client::ClaudeCode | Client::Codex => &[
                HookEvent::PreCompact,
                HookEvent::PostCompact,
                HookEvent::SessionStart,
            ],
            Client::GeminiCli => &[HookEvent::PreCompact, HookEvent::BeforeModel],
        }
    }

    /// An entry's `timeout`, in the client's unit: seconds for Claude Code
    /// and Codex, milliseconds for Gemini CLI.
    pub fn entry_timeout(self, secs: u64) -> u64 {
        match self {
            Client::ClaudeCode | Client::Codex => secs,
            Client::GeminiCli => secs * 1000,
        }
    }

    /// Whether the client takes PreCompact's plain output as extra
    /// instructions for its summarizer.
    pub fn takes_pre_compact_instructions(self) -> bool {
        matches!(self, Client::ClaudeCode)
    }
}

/// The hook events compactor runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    PreCompact,
    PostCompact,
    SessionStart,
    /// Gemini CLI's, before every model request.
    BeforeModel,
}

impl HookEvent {
    pub const ALL: [HookEvent; 4] = [
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::SessionStart,
        HookEvent::BeforeModel,
    ];

    /// The event's name in `client`'s settings (Gemini CLI calls its
    /// PreCompact `PreCompress`).
    pub fn name_for(self, client: Client) -> &'static str {
        match (self, client) {
            (HookEvent::PreCompact, Client::GeminiCli) => "PreCompress",
            (HookEvent::PreCompact, _) => "PreCompact",
            (HookEvent::PostCompact, _) => "PostCompact",
            (HookEvent::SessionStart, _) => "SessionStart",
            (HookEvent::BeforeModel, _) => "BeforeModel",
        }
    }

    /// Every name an event of compactor's has in some client's settings.
    pub const SETTINGS_NAMES: [&'static str; 5] = [
        "PreCompact",
        "PostCompact",
        "SessionStart",
        "PreCompress",
        "BeforeModel",
    ];

    /// The argument of `compactor hook`.
    pub fn arg(self) -> &'static str {
        match self {
            HookEvent::PreCompact => "pre-compact",
            HookEvent::PostCompact => "post-compact",
            HookEvent::SessionStart => "session-start",
            HookEvent::BeforeModel => "before-model",
        }
    }

    pub fn parse(s: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.arg() == s)
    }

    /// The matcher compactor's group carries: SessionStart runs for compaction
    /// only; the compaction events for either trigger (manual or auto).
    pub fn matcher(self) -> Option<&'static str> {
        match self {
            HookEvent::SessionStart => Some("compact"),
            _ => None,
        }
    }
}

/// Seconds a hook run may take before it gives up (exit 0, nothing printed,
/// a line in the log); `COMPACTOR_HOOK_TIMEOUT` overrides it. Shorter than
/// the client's own timeout in the entry, so the hook stops cleanly first.
pub const DEADLINE_SECS: u64 = 45;

/// Seconds a hook waits, in all, for a store another process is writing;
/// `COMPACTOR_HOOK_STORE_WAIT` overrides it. The client waits for the hook,
/// so past this the hook answers from the transcript alone and logs what it
/// skipped (the next import catches up).
pub const STORE_WAIT_SECS: u64 = 2;
