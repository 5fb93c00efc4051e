
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'compactor' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'compactor'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'compactor' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Import transcript files into the store (idempotent, incremental, atomic per file)')
            [CompletionResult]::new('tasks', 'tasks', [CompletionResultType]::ParameterValue, 'List imported tasks with their sizes and recorded usage')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a task''s messages, one message, or a tool call''s raw input and output')
            [CompletionResult]::new('preflight', 'preflight', [CompletionResultType]::ParameterValue, 'Restore the bounded checkpoint at a turn start (no reduction) and report it')
            [CompletionResult]::new('step', 'step', [CompletionResultType]::ParameterValue, 'Run the full operation at one model call and report which tiers fired')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Render a view file for other tools or people')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Follow a session file as it is written: one line per new model call')
            [CompletionResult]::new('proxy', 'proxy', [CompletionResultType]::ParameterValue, 'Run the engine live: a loopback proxy between an agent client (Claude Code, Codex, OpenCode, any OpenAI-compatible one) and its API')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Go live in one command: the proxy, then a client (Claude Code, Codex, OpenCode) pointed at it, with compactor''s MCP server registered for this run only')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find what was said or done in the record: ranked hits (BM25) in a session, a project or every task')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Walk a task call by call as a live engine would have, and print a timeline')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Score a call''s view with probes from the raw record: asks, rules, files written, errors, decisions and state kept, recoverable or lost')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Compact a saved session offline: replay it, then write the final view')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Replay a task and write one self-contained HTML page picturing it')
            [CompletionResult]::new('sweep', 'sweep', [CompletionResultType]::ParameterValue, 'Replay sessions under a grid of policies, priced and probed, beside what the client did and plain trimming: which window and trigger to use')
            [CompletionResult]::new('runs', 'runs', [CompletionResultType]::ParameterValue, 'List saved replay runs')
            [CompletionResult]::new('reset', 'reset', [CompletionResultType]::ParameterValue, 'Forget a task''s compaction state (all profiles, or one); never the raw record')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two views (files or saved runs): exit 0 identical, 1 different')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Prove on fixture transcripts that projection is deterministic (for CI)')
            [CompletionResult]::new('hooks', 'hooks', [CompletionResultType]::ParameterValue, 'Keep your rules through Claude Code''s and Codex''s own compaction: install, remove or check compactor''s hooks in the client''s settings')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'Run one of compactor''s hooks (what the client runs; see `compactor hooks`)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions for SHELL')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff): the main one, or one subcommand''s')
            [CompletionResult]::new('__complete-tasks', '__complete-tasks', [CompletionResultType]::ParameterValue, 'Print `latest` and every task id, one a line, for shell completion of `--task`')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'compactor;import' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'The files'' format; `auto` detects it from the first lines')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import as a task of this name (default: the session id in the file, else one derived from its first line): a new name, no existing task''s id or the start of one. Subagents become NAME/agent-ID. `--task` is an older name for it')
            [CompletionResult]::new('--tool-rules', '--tool-rules', [CompletionResultType]::ParameterName, 'JSON file of per-tool compaction rules, consulted before the built-in ones')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--claude', '--claude', [CompletionResultType]::ParameterName, 'Import every Claude Code session: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects')
            [CompletionResult]::new('--codex', '--codex', [CompletionResultType]::ParameterName, 'Import every Codex session: $CODEX_HOME/sessions, else ~/.codex/sessions')
            [CompletionResult]::new('--opencode', '--opencode', [CompletionResultType]::ParameterName, 'Import every OpenCode session: $OPENCODE_DB, else the opencode*.db stores in $XDG_DATA_HOME/opencode, else ~/.local/share/opencode')
            [CompletionResult]::new('--gemini', '--gemini', [CompletionResultType]::ParameterName, 'Import every Gemini CLI session: $GEMINI_CLI_HOME/.gemini/tmp/*/chats/session-*.jsonl, else ~/.gemini/tmp/*/chats/session-*.jsonl')
            [CompletionResult]::new('--skip-invalid', '--skip-invalid', [CompletionResultType]::ParameterName, 'Import the valid lines of a file that has invalid ones, listing each skipped line')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object per file instead of the human report')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;tasks' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON Lines: one record per task (by id), then the totals')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Full ids, titles and project paths, and every usage figure (wider than 100 columns)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;show' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;preflight' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'The model call to project (1 = the first). Default: the next call after the last recorded message')
            [CompletionResult]::new('--view', '--view', [CompletionResultType]::ParameterName, 'Write the view''s canonical bytes to FILE')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as one JSON object')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Run on the store itself, reading and keeping the compaction state of this profile (budget, summarizer, summary budget, tool rules). By default the call runs on a scratch copy of the task with no compaction state, and the store is left as it was found')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;step' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'The model call to project (1 = the first). Default: the next call after the last recorded message')
            [CompletionResult]::new('--view', '--view', [CompletionResultType]::ParameterName, 'Write the view''s canonical bytes to FILE')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as one JSON object')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Run on the store itself, reading and keeping the compaction state of this profile (budget, summarizer, summary budget, tool rules). By default the call runs on a scratch copy of the task with no compaction state, and the store is left as it was found')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;export' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to FILE instead of standard output')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to FILE instead of standard output')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;watch' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task whose file to follow: its id, a unique prefix of it, or `latest`')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory: `latest` and prefixes look only there. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--until-idle', '--until-idle', [CompletionResultType]::ParameterName, 'Stop once nothing was added for SECONDS (default: run until Ctrl-C)')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often to look at the file, in milliseconds')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON line per model call: the call''s record of `replay --jsonl`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;proxy' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Where to listen (port 0: a free one). Loopback only, unless --allow-remote')
            [CompletionResult]::new('--upstream', '--upstream', [CompletionResultType]::ParameterName, 'Where to forward every request: https://HOST[:PORT][/PREFIX] (plain http only to loopback). Default: the official endpoint of the API each request speaks (api.anthropic.com for Messages, api.openai.com for Responses and Chat Completions)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--max-body-mb', '--max-body-mb', [CompletionResultType]::ParameterName, 'Refuse a request body over this many MiB with 413 (a declared length at once, before reading it). The default is above the providers'' own limits')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Seconds to connect to the upstream (TCP and TLS)')
            [CompletionResult]::new('--first-byte-timeout', '--first-byte-timeout', [CompletionResultType]::ParameterName, 'Seconds from a request sent to its answer''s headers (a whole, not streamed, answer''s come once it is generated)')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'Seconds an answer may go without sending anything (between two stream events) before the proxy gives up on it')
            [CompletionResult]::new('--max-conversations', '--max-conversations', [CompletionResultType]::ParameterName, 'Conversations whose state is kept in memory; the least recently used beyond it is rebuilt from the store when it returns')
            [CompletionResult]::new('--conversation-idle', '--conversation-idle', [CompletionResultType]::ParameterName, 'Seconds without a call after which a conversation''s state leaves memory')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-remote', '--allow-remote', [CompletionResultType]::ParameterName, 'Listen on an address other machines can reach, and answer requests addressed to any host name (a warning is printed)')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON line per call (`compactor.proxy_call/1`) instead of the human line')
            [CompletionResult]::new('--stop-when-stdin-closes', '--stop-when-stdin-closes', [CompletionResultType]::ParameterName, 'Stop (as Ctrl-C stops it) when stdin ends: for a supervisor that holds a pipe to it, so the proxy goes when the supervisor does, even killed (`compactor run` starts it so)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;run' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;mcp' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task `search_history` and `task_context` answer for (an id, a unique prefix or `latest`). Default: the most recently recorded task in the client''s working directory, at each call')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;search' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'Search this task''s session: the task, its subagents and the tasks linked to it (an id, a unique prefix or `latest`)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Search every session recorded in this project directory (the PROJECT column of `compactor tasks`). Default: the current directory''s, when it has any; else every task')
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'Only hits of this kind: a user''s ask, the assistant''s answer, a tool call''s input or output, a tool''s error, or a summary (the client''s, or a line of compactor''s)')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'The most hits to print')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Search every task in the store')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (`"schema": "compactor.search/1"`)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;replay' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--price-input', '--price-input', [CompletionResultType]::ParameterName, 'USD per million uncached input tokens. Default: the model''s (docs/src/reference/models.md)')
            [CompletionResult]::new('--price-cache-write', '--price-cache-write', [CompletionResultType]::ParameterName, 'USD per million tokens written to the prompt cache. Default: the model''s')
            [CompletionResult]::new('--price-cache-read', '--price-cache-read', [CompletionResultType]::ParameterName, 'USD per million tokens read from the prompt cache. Default: the model''s')
            [CompletionResult]::new('--price-output', '--price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens. Default: the model''s')
            [CompletionResult]::new('--prices', '--prices', [CompletionResultType]::ParameterName, 'A JSON file of per-model prices, consulted before the built-in table (the format is in docs/src/reference/models.md)')
            [CompletionResult]::new('--cache-ttl', '--cache-ttl', [CompletionResultType]::ParameterName, 'How long the prompt cache lives: a call sent longer than this after the one before (by the transcript''s timestamps) reads nothing from it and writes its whole prompt. `1h` also prices an Anthropic cache write at twice the input price, as Anthropic bills the 1-hour cache')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'First call to show (earlier calls still run, unless --resume)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Last call to run and show')
            [CompletionResult]::new('--views', '--views', [CompletionResultType]::ParameterName, 'Write every call''s view to DIR/call-NNNN.json')
            [CompletionResult]::new('--save', '--save', [CompletionResultType]::ParameterName, 'Save the run''s reports and views in the store under NAME')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Replay on the store itself, keeping what the replay mints (as `compact` does). By default a replay runs on a scratch copy of the task with no compaction state, so it shows what a live engine would have done and repeats exactly')
            [CompletionResult]::new('--resume', '--resume', [CompletionResultType]::ParameterName, 'Continue an interrupted in-place replay (implies --in-place): start at the last call it committed (or at --from), re-deriving the checkpoint as a restarted engine would')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'With --save, replace an existing run of that name')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object: {"calls":[...],"totals":{...},"schema":"compactor.replay/1"}')
            [CompletionResult]::new('--jsonl', '--jsonl', [CompletionResultType]::ParameterName, 'Print one JSON object per call as soon as it completes (JSON Lines), then a totals record')
            [CompletionResult]::new('--probes', '--probes', [CompletionResultType]::ParameterName, 'Score every call''s view with probes from the raw record (as `compactor probe` does): critical and overall survival per call, and the worst call')
            [CompletionResult]::new('--verify-forwarded', '--verify-forwarded', [CompletionResultType]::ParameterName, 'Audit a task `compactor proxy` recorded: derive every view it forwarded again, from the record as it stood then and under the settings it ran with (budget flags are not needed), and compare hashes; exit 1 at the first mismatch')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;probe' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'The call whose view is scored (default: the last call)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--recorded', '--recorded', [CompletionResultType]::ParameterName, 'Score what the original agent sent instead of compactor''s view: the recorded history since the agent''s last own compaction summary')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object: {"categories":{...},"critical_lost":N,"lost":[...],...}')
            [CompletionResult]::new('--fail-on-loss', '--fail-on-loss', [CompletionResultType]::ParameterName, 'Exit 1 when a critical probe (ask, constraint, deliverable) is lost, or when a summary line of the view is misleading (contradicts the record)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;compact' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the final view to FILE (default: standard output)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the final view to FILE (default: standard output)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'The final view''s format')
            [CompletionResult]::new('--write-session', '--write-session', [CompletionResultType]::ParameterName, 'Write the final view as a new session of this agent, to resume from. The report then goes to stdout, and the view only to `-o FILE`')
            [CompletionResult]::new('--resume-dir', '--resume-dir', [CompletionResultType]::ParameterName, 'The directory the written session belongs to and is resumed in (Claude Code files it under that project). Default: the source session''s directory, else the current one')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the final call''s report as JSON (on stderr when the view goes to stdout)')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Compact on the store itself, keeping what the replay mints in this profile (budget, summarizer, summary budget, tool rules) and resuming where an earlier in-place run under the same profile stopped. By default the replay runs on a scratch copy of the task and the store is left as it was found (the llm summary cache excepted)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;report' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task')
            [CompletionResult]::new('--import-as', '--import-as', [CompletionResultType]::ParameterName, 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it')
            [CompletionResult]::new('--input-format', '--input-format', [CompletionResultType]::ParameterName, 'FILE''s transcript format')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (docs/src/reference/models.md), else 200000')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Compaction starts above w_eff × this ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Model steps at the end of the history that ordinary compaction never touches')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--price-input', '--price-input', [CompletionResultType]::ParameterName, 'USD per million uncached input tokens. Default: the model''s (docs/src/reference/models.md)')
            [CompletionResult]::new('--price-cache-write', '--price-cache-write', [CompletionResultType]::ParameterName, 'USD per million tokens written to the prompt cache. Default: the model''s')
            [CompletionResult]::new('--price-cache-read', '--price-cache-read', [CompletionResultType]::ParameterName, 'USD per million tokens read from the prompt cache. Default: the model''s')
            [CompletionResult]::new('--price-output', '--price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens. Default: the model''s')
            [CompletionResult]::new('--prices', '--prices', [CompletionResultType]::ParameterName, 'A JSON file of per-model prices, consulted before the built-in table (the format is in docs/src/reference/models.md)')
            [CompletionResult]::new('--cache-ttl', '--cache-ttl', [CompletionResultType]::ParameterName, 'How long the prompt cache lives: a call sent longer than this after the one before (by the transcript''s timestamps) reads nothing from it and writes its whole prompt. `1h` also prices an Anthropic cache write at twice the input price, as Anthropic bills the 1-hour cache')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the page to FILE (`-` for standard output)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the page to FILE (`-` for standard output)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--allow-over-window', '--allow-over-window', [CompletionResultType]::ParameterName, 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this')
            [CompletionResult]::new('--open', '--open', [CompletionResultType]::ParameterName, 'Open the page with the platform''s opener once written')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;sweep' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'A task to sweep besides the SOURCEs (its id, a unique prefix, `latest`); repeatable')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Context windows to sweep, in tokens. Default: each session''s own (the window it recorded, else its model''s)')
            [CompletionResult]::new('--output-reserved', '--output-reserved', [CompletionResultType]::ParameterName, 'Output reserves to sweep. Default: each window''s, min(20000, window / 8)')
            [CompletionResult]::new('--trigger-ratio', '--trigger-ratio', [CompletionResultType]::ParameterName, 'Trigger ratios to sweep: compaction starts above w_eff × the ratio')
            [CompletionResult]::new('--stop-ratio', '--stop-ratio', [CompletionResultType]::ParameterName, 'Stop ratios to sweep: shrinking aims at w_eff × the ratio (below the trigger)')
            [CompletionResult]::new('--protect-recent-steps', '--protect-recent-steps', [CompletionResultType]::ParameterName, 'Protected recent steps to sweep')
            [CompletionResult]::new('--summary-budget', '--summary-budget', [CompletionResultType]::ParameterName, 'Token cap of the floor summary (one value). Default: each window''s (6% of window − reserve, 2000 to 8000)')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'Summarizers to sweep (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--price-input', '--price-input', [CompletionResultType]::ParameterName, 'USD per million uncached input tokens. Default: the model''s (docs/src/reference/models.md)')
            [CompletionResult]::new('--price-cache-write', '--price-cache-write', [CompletionResultType]::ParameterName, 'USD per million tokens written to the prompt cache. Default: the model''s')
            [CompletionResult]::new('--price-cache-read', '--price-cache-read', [CompletionResultType]::ParameterName, 'USD per million tokens read from the prompt cache. Default: the model''s')
            [CompletionResult]::new('--price-output', '--price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens. Default: the model''s')
            [CompletionResult]::new('--prices', '--prices', [CompletionResultType]::ParameterName, 'A JSON file of per-model prices, consulted before the built-in table (the format is in docs/src/reference/models.md)')
            [CompletionResult]::new('--cache-ttl', '--cache-ttl', [CompletionResultType]::ParameterName, 'How long the prompt cache lives: a call sent longer than this after the one before (by the transcript''s timestamps) reads nothing from it and writes its whole prompt. `1h` also prices an Anthropic cache write at twice the input price, as Anthropic bills the 1-hour cache')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Runs at a time, each on its own scratch store (default: the number of cores). The output is the same for any N')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Runs at a time, each on its own scratch store (default: the number of cores). The output is the same for any N')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Also write one self-contained HTML page: a cost against fidelity chart and the sortable table of each session, and the totals (`-`: only the page, on standard output)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Also write one self-contained HTML page: a cost against fidelity chart and the sortable table of each session, and the totals (`-`: only the page, on standard output)')
            [CompletionResult]::new('--merge', '--merge', [CompletionResultType]::ParameterName, 'Total the JSON Lines (`sweep --json`) of sweeps run apart, such as shards of sources swept on several machines, instead of sweeping')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--skip-invalid', '--skip-invalid', [CompletionResultType]::ParameterName, 'Sweep only the valid combinations of the lists (each one left out is named); without it an invalid combination, such as stop ≥ trigger, is refused')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON Lines: one compactor.sweep_row/1 per run, then compactor.sweep_total/1')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;runs' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON Lines: one object a line, one line per saved run')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;reset' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task, as every command takes it')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Forget only this profile''s state: its id or a unique prefix, as `compactor show --task TASK compacted` lists them (`legacy` for state written before profiles existed)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;diff' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task whose saved runs `run:NAME` names (an id, a unique prefix or `latest`). Needed only when a name is saved for several tasks')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--across-tasks', '--across-tasks', [CompletionResultType]::ParameterName, 'Compare runs of two different tasks (different conversations: their views differ from the first call); refused without it')
            [CompletionResult]::new('--stat', '--stat', [CompletionResultType]::ParameterName, 'Print only counts')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object: the first divergence and the changed parts')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;check' {
            [CompletionResult]::new('--golden', '--golden', [CompletionResultType]::ParameterName, 'Compare every view with the golden files under DIR')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed that picks the call after which the interrupted run aborts')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--bless', '--bless', [CompletionResultType]::ParameterName, 'Rewrite the golden files from this run')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print a JSON summary')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;hooks' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add compactor''s hooks to a client''s settings (merged with yours; a backup is kept)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly compactor''s hooks: the file is as it was before install')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show where compactor''s hooks are installed, what they run and their last runs')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'compactor;hooks;install' {
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Whose settings: the user''s or the current directory''s project')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the change as a diff and write nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;hooks;uninstall' {
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Whose settings: the user''s or the current directory''s project')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the change as a diff and write nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;hooks;status' {
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Whose settings: the user''s or the current directory''s project')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;hooks;help' {
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add compactor''s hooks to a client''s settings (merged with yours; a backup is kept)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly compactor''s hooks: the file is as it was before install')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show where compactor''s hooks are installed, what they run and their last runs')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'compactor;hooks;help;install' {
            break
        }
        'compactor;hooks;help;uninstall' {
            break
        }
        'compactor;hooks;help;status' {
            break
        }
        'compactor;hooks;help;help' {
            break
        }
        'compactor;hook' {
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'The client running the hook: claude-code, codex or gemini-cli')
            [CompletionResult]::new('--summarizer', '--summarizer', [CompletionResultType]::ParameterName, 'How floor summaries are written (default extractive, or the config file''s `summarizer`)')
            [CompletionResult]::new('--llm-provider', '--llm-provider', [CompletionResultType]::ParameterName, 'The model server''s wire format (with --summarizer llm). Config key: llm_provider')
            [CompletionResult]::new('--llm-base-url', '--llm-base-url', [CompletionResultType]::ParameterName, 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API')
            [CompletionResult]::new('--llm-model', '--llm-model', [CompletionResultType]::ParameterName, 'The model name the server knows')
            [CompletionResult]::new('--llm-timeout', '--llm-timeout', [CompletionResultType]::ParameterName, 'Seconds one model request may take (default 60)')
            [CompletionResult]::new('--llm-api-key-env', '--llm-api-key-env', [CompletionResultType]::ParameterName, 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value')
            [CompletionResult]::new('--llm-fallback', '--llm-fallback', [CompletionResultType]::ParameterName, 'What the floor uses when the model fails (default extractive)')
            [CompletionResult]::new('--llm-price-input', '--llm-price-input', [CompletionResultType]::ParameterName, 'USD per million input tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--llm-price-output', '--llm-price-output', [CompletionResultType]::ParameterName, 'USD per million output tokens of the summarizer''s own calls (default 0)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;completions' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;man' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('--list', '--list', [CompletionResultType]::ParameterName, 'List the subcommands that have a page, one a line')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;__complete-tasks' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;help' {
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Import transcript files into the store (idempotent, incremental, atomic per file)')
            [CompletionResult]::new('tasks', 'tasks', [CompletionResultType]::ParameterValue, 'List imported tasks with their sizes and recorded usage')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a task''s messages, one message, or a tool call''s raw input and output')
            [CompletionResult]::new('preflight', 'preflight', [CompletionResultType]::ParameterValue, 'Restore the bounded checkpoint at a turn start (no reduction) and report it')
            [CompletionResult]::new('step', 'step', [CompletionResultType]::ParameterValue, 'Run the full operation at one model call and report which tiers fired')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Render a view file for other tools or people')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Follow a session file as it is written: one line per new model call')
            [CompletionResult]::new('proxy', 'proxy', [CompletionResultType]::ParameterValue, 'Run the engine live: a loopback proxy between an agent client (Claude Code, Codex, OpenCode, any OpenAI-compatible one) and its API')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Go live in one command: the proxy, then a client (Claude Code, Codex, OpenCode) pointed at it, with compactor''s MCP server registered for this run only')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find what was said or done in the record: ranked hits (BM25) in a session, a project or every task')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Walk a task call by call as a live engine would have, and print a timeline')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Score a call''s view with probes from the raw record: asks, rules, files written, errors, decisions and state kept, recoverable or lost')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Compact a saved session offline: replay it, then write the final view')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Replay a task and write one self-contained HTML page picturing it')
            [CompletionResult]::new('sweep', 'sweep', [CompletionResultType]::ParameterValue, 'Replay sessions under a grid of policies, priced and probed, beside what the client did and plain trimming: which window and trigger to use')
            [CompletionResult]::new('runs', 'runs', [CompletionResultType]::ParameterValue, 'List saved replay runs')
            [CompletionResult]::new('reset', 'reset', [CompletionResultType]::ParameterValue, 'Forget a task''s compaction state (all profiles, or one); never the raw record')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two views (files or saved runs): exit 0 identical, 1 different')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Prove on fixture transcripts that projection is deterministic (for CI)')
            [CompletionResult]::new('hooks', 'hooks', [CompletionResultType]::ParameterValue, 'Keep your rules through Claude Code''s and Codex''s own compaction: install, remove or check compactor''s hooks in the client''s settings')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'Run one of compactor''s hooks (what the client runs; see `compactor hooks`)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions for SHELL')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff): the main one, or one subcommand''s')
            [CompletionResult]::new('__complete-tasks', '__complete-tasks', [CompletionResultType]::ParameterValue, 'Print `latest` and every task id, one a line, for shell completion of `--task`')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'compactor;help;import' {
            break
        }
        'compactor;help;tasks' {
            break
        }
        'compactor;help;show' {
            break
        }
        'compactor;help;preflight' {
            break
        }
        'compactor;help;step' {
            break
        }
        'compactor;help;export' {
            break
        }
        'compactor;help;watch' {
            break
        }
        'compactor;help;proxy' {
            break
        }
        'compactor;help;run' {
            break
        }
        'compactor;help;mcp' {
            break
        }
        'compactor;help;search' {
            break
        }
        'compactor;help;replay' {
            break
        }
        'compactor;help;probe' {
            break
        }
        'compactor;help;compact' {
            break
        }
        'compactor;help;report' {
            break
        }
        'compactor;help;sweep' {
            break
        }
        'compactor;help;runs' {
            break
        }
        'compactor;help;reset' {
            break
        }
        'compactor;help;diff' {
            break
        }
        'compactor;help;check' {
            break
        }
        'compactor;help;hooks' {
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add compactor''s hooks to a client''s settings (merged with yours; a backup is kept)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly compactor''s hooks: the file is as it was before install')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show where compactor''s hooks are installed, what they run and their last runs')
            break
        }
        'compactor;help;hooks;install' {
            break
        }
        'compactor;help;hooks;uninstall' {
            break
        }
        'compactor;help;hooks;status' {
            break
        }
        'compactor;help;hook' {
            break
        }
        'compactor;help;completions' {
            break
        }
        'compactor;help;man' {
            break
        }
        'compactor;help;__complete-tasks' {
            break
        }
        'compactor;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
