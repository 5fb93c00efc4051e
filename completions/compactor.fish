# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_compactor_global_optspecs
    string join \n db= q/quiet color= h/help V/version
end

function __fish_compactor_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_compactor_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_compactor_using_subcommand
    set -l cmd (__fish_compactor_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c compactor -n "__fish_compactor_needs_command" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_needs_command" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_needs_command" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_needs_command" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_needs_command" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "import" -d 'Import transcript files into the store (idempotent, incremental, atomic per file)'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "tasks" -d 'List imported tasks with their sizes and recorded usage'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "show" -d 'Print a task\'s messages, one message, or a tool call\'s raw input and output'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "preflight" -d 'Restore the bounded checkpoint at a turn start (no reduction) and report it'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "step" -d 'Run the full operation at one model call and report which tiers fired'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "export" -d 'Render a view file for other tools or people'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "watch" -d 'Follow a session file as it is written: one line per new model call'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "proxy" -d 'Run the engine live: a loopback proxy between an agent client (Claude Code, Codex, OpenCode, any OpenAI-compatible one) and its API'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "run" -d 'Go live in one command: the proxy, then a client (Claude Code, Codex, OpenCode) pointed at it, with compactor\'s MCP server registered for this run only'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "mcp" -d 'Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "search" -d 'Find what was said or done in the record: ranked hits (BM25) in a session, a project or every task'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "replay" -d 'Walk a task call by call as a live engine would have, and print a timeline'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "probe" -d 'Score a call\'s view with probes from the raw record: asks, rules, files written, errors, decisions and state kept, recoverable or lost'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "compact" -d 'Compact a saved session offline: replay it, then write the final view'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "report" -d 'Replay a task and write one self-contained HTML page picturing it'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "sweep" -d 'Replay sessions under a grid of policies, priced and probed, beside what the client did and plain trimming: which window and trigger to use'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "runs" -d 'List saved replay runs'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "reset" -d 'Forget a task\'s compaction state (all profiles, or one); never the raw record'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "diff" -d 'Compare two views (files or saved runs): exit 0 identical, 1 different'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "check" -d 'Prove on fixture transcripts that projection is deterministic (for CI)'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "hooks" -d 'Keep your rules through Claude Code\'s and Codex\'s own compaction: install, remove or check compactor\'s hooks in the client\'s settings'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "hook" -d 'Run one of compactor\'s hooks (what the client runs; see `compactor hooks`)'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "completions" -d 'Print shell completions for SHELL'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "man" -d 'Print the man page (roff): the main one, or one subcommand\'s'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "__complete-tasks" -d 'Print `latest` and every task id, one a line, for shell completion of `--task`'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l format -d 'The files\' format; `auto` detects it from the first lines' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand import" -l import-as -d 'Import as a task of this name (default: the session id in the file, else one derived from its first line): a new name, no existing task\'s id or the start of one. Subagents become NAME/agent-ID. `--task` is an older name for it' -r
complete -c compactor -n "__fish_compactor_using_subcommand import" -l tool-rules -d 'JSON file of per-tool compaction rules, consulted before the built-in ones' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand import" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand import" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand import" -l claude -d 'Import every Claude Code session: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l codex -d 'Import every Codex session: $CODEX_HOME/sessions, else ~/.codex/sessions'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l opencode -d 'Import every OpenCode session: $OPENCODE_DB, else the opencode*.db stores in $XDG_DATA_HOME/opencode, else ~/.local/share/opencode'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l gemini -d 'Import every Gemini CLI session: $GEMINI_CLI_HOME/.gemini/tmp/*/chats/session-*.jsonl, else ~/.gemini/tmp/*/chats/session-*.jsonl'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l skip-invalid -d 'Import the valid lines of a file that has invalid ones, listing each skipped line'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l json -d 'Print one JSON object per file instead of the human report'
complete -c compactor -n "__fish_compactor_using_subcommand import" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand import" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand import" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -l json -d 'Print JSON Lines: one record per task (by id), then the totals'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -l wide -d 'Full ids, titles and project paths, and every usage figure (wider than 100 columns)'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand show" -l task -d 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand show" -l import-as -d 'Import FILE as a task of this name instead of its session id: a new name, no existing task\'s id or the start of one (so no prefix in use changes meaning)' -r
complete -c compactor -n "__fish_compactor_using_subcommand show" -l project -d 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand show" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand show" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand show" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand show" -l json -d 'Print JSON instead of text'
complete -c compactor -n "__fish_compactor_using_subcommand show" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand show" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand show" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l task -d 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l import-as -d 'Import FILE as a task of this name instead of its session id: a new name, no existing task\'s id or the start of one (so no prefix in use changes meaning)' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l project -d 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l at -d 'The model call to project (1 = the first). Default: the next call after the last recorded message' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l view -d 'Write the view\'s canonical bytes to FILE' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l json -d 'Print the report as one JSON object'
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -l in-place -d 'Run on the store itself, reading and keeping the compaction state of this profile (budget, summarizer, summary budget, tool rules). By default the call runs on a scratch copy of the task with no compaction state, and the store is left as it was found'
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand preflight" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand step" -l task -d 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand step" -l import-as -d 'Import FILE as a task of this name instead of its session id: a new name, no existing task\'s id or the start of one (so no prefix in use changes meaning)' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l project -d 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand step" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand step" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l at -d 'The model call to project (1 = the first). Default: the next call after the last recorded message' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l view -d 'Write the view\'s canonical bytes to FILE' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand step" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand step" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand step" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand step" -l json -d 'Print the report as one JSON object'
complete -c compactor -n "__fish_compactor_using_subcommand step" -l in-place -d 'Run on the store itself, reading and keeping the compaction state of this profile (budget, summarizer, summary budget, tool rules). By default the call runs on a scratch copy of the task with no compaction state, and the store is left as it was found'
complete -c compactor -n "__fish_compactor_using_subcommand step" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand step" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand step" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand export" -l format -r -f -a "anthropic\t'The canonical Anthropic Messages body'
openai\t'OpenAI Chat Completions messages'
markdown\t'A readable transcript'"
complete -c compactor -n "__fish_compactor_using_subcommand export" -s o -l output -d 'Write to FILE instead of standard output' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand export" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand export" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand export" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand export" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l task -d 'The task whose file to follow: its id, a unique prefix of it, or `latest`' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l project -d 'Pick among the sessions recorded in this project directory: `latest` and prefixes look only there. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l until-idle -d 'Stop once nothing was added for SECONDS (default: run until Ctrl-C)' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l interval -d 'How often to look at the file, in milliseconds' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand watch" -l json -d 'One JSON line per model call: the call\'s record of `replay --jsonl`'
complete -c compactor -n "__fish_compactor_using_subcommand watch" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand watch" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l listen -d 'Where to listen (port 0: a free one). Loopback only, unless --allow-remote' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l upstream -d 'Where to forward every request: https://HOST[:PORT][/PREFIX] (plain http only to loopback). Default: the official endpoint of the API each request speaks (api.anthropic.com for Messages, api.openai.com for Responses and Chat Completions)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l max-body-mb -d 'Refuse a request body over this many MiB with 413 (a declared length at once, before reading it). The default is above the providers\' own limits' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l connect-timeout -d 'Seconds to connect to the upstream (TCP and TLS)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l first-byte-timeout -d 'Seconds from a request sent to its answer\'s headers (a whole, not streamed, answer\'s come once it is generated)' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l idle-timeout -d 'Seconds an answer may go without sending anything (between two stream events) before the proxy gives up on it' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l max-conversations -d 'Conversations whose state is kept in memory; the least recently used beyond it is rebuilt from the store when it returns' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l conversation-idle -d 'Seconds without a call after which a conversation\'s state leaves memory' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l allow-remote -d 'Listen on an address other machines can reach, and answer requests addressed to any host name (a warning is printed)'
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l json -d 'One JSON line per call (`compactor.proxy_call/1`) instead of the human line'
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -l stop-when-stdin-closes -d 'Stop (as Ctrl-C stops it) when stdin ends: for a supervisor that holds a pipe to it, so the proxy goes when the supervisor does, even killed (`compactor run` starts it so)'
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand proxy" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand run" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand run" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand run" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand run" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand run" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand mcp" -l task -d 'The task `search_history` and `task_context` answer for (an id, a unique prefix or `latest`). Default: the most recently recorded task in the client\'s working directory, at each call' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand mcp" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand mcp" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand mcp" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand search" -l task -d 'Search this task\'s session: the task, its subagents and the tasks linked to it (an id, a unique prefix or `latest`)' -r
complete -c compactor -n "__fish_compactor_using_subcommand search" -l project -d 'Search every session recorded in this project directory (the PROJECT column of `compactor tasks`). Default: the current directory\'s, when it has any; else every task' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand search" -l kind -d 'Only hits of this kind: a user\'s ask, the assistant\'s answer, a tool call\'s input or output, a tool\'s error, or a summary (the client\'s, or a line of compactor\'s)' -r -f -a "ask\t''
answer\t''
tool\t''
error\t''
summary\t''"
complete -c compactor -n "__fish_compactor_using_subcommand search" -l limit -d 'The most hits to print' -r
complete -c compactor -n "__fish_compactor_using_subcommand search" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand search" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand search" -l all -d 'Search every task in the store'
complete -c compactor -n "__fish_compactor_using_subcommand search" -l json -d 'Print one JSON object (`"schema": "compactor.search/1"`)'
complete -c compactor -n "__fish_compactor_using_subcommand search" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand search" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand search" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l task -d 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l import-as -d 'Import FILE as a task of this name instead of its session id: a new name, no existing task\'s id or the start of one (so no prefix in use changes meaning)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l project -d 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l price-input -d 'USD per million uncached input tokens. Default: the model\'s (docs/src/reference/models.md)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l price-cache-write -d 'USD per million tokens written to the prompt cache. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l price-cache-read -d 'USD per million tokens read from the prompt cache. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l price-output -d 'USD per million output tokens. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l prices -d 'A JSON file of per-model prices, consulted before the built-in table (the format is in docs/src/reference/models.md)' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l cache-ttl -d 'How long the prompt cache lives: a call sent longer than this after the one before (by the transcript\'s timestamps) reads nothing from it and writes its whole prompt. `1h` also prices an Anthropic cache write at twice the input price, as Anthropic bills the 1-hour cache' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l from -d 'First call to show (earlier calls still run, unless --resume)' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l to -d 'Last call to run and show' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l views -d 'Write every call\'s view to DIR/call-NNNN.json' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l save -d 'Save the run\'s reports and views in the store under NAME' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l in-place -d 'Replay on the store itself, keeping what the replay mints (as `compact` does). By default a replay runs on a scratch copy of the task with no compaction state, so it shows what a live engine would have done and repeats exactly'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l resume -d 'Continue an interrupted in-place replay (implies --in-place): start at the last call it committed (or at --from), re-deriving the checkpoint as a restarted engine would'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l force -d 'With --save, replace an existing run of that name'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l json -d 'Print one JSON object: {"calls":[...],"totals":{...},"schema":"compactor.replay/1"}'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l jsonl -d 'Print one JSON object per call as soon as it completes (JSON Lines), then a totals record'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l probes -d 'Score every call\'s view with probes from the raw record (as `compactor probe` does): critical and overall survival per call, and the worst call'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -l verify-forwarded -d 'Audit a task `compactor proxy` recorded: derive every view it forwarded again, from the record as it stood then and under the settings it ran with (budget flags are not needed), and compare hashes; exit 1 at the first mismatch'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand replay" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l task -d 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l import-as -d 'Import FILE as a task of this name instead of its session id: a new name, no existing task\'s id or the start of one (so no prefix in use changes meaning)' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l project -d 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l at -d 'The call whose view is scored (default: the last call)' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l recorded -d 'Score what the original agent sent instead of compactor\'s view: the recorded history since the agent\'s last own compaction summary'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l json -d 'Print one JSON object: {"categories":{...},"critical_lost":N,"lost":[...],...}'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -l fail-on-loss -d 'Exit 1 when a critical probe (ask, constraint, deliverable) is lost, or when a summary line of the view is misleading (contradicts the record)'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand probe" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l task -d 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l import-as -d 'Import FILE as a task of this name instead of its session id: a new name, no existing task\'s id or the start of one (so no prefix in use changes meaning)' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l project -d 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -s o -l output -d 'Write the final view to FILE (default: standard output)' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l format -d 'The final view\'s format' -r -f -a "anthropic\t'The canonical Anthropic Messages body'
openai\t'OpenAI Chat Completions messages'
markdown\t'A readable transcript'"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l write-session -d 'Write the final view as a new session of this agent, to resume from. The report then goes to stdout, and the view only to `-o FILE`' -r -f -a "claude-code\t'A Claude Code session (`claude --resume <id>`)'
codex\t'A Codex rollout (`codex resume <id>`)'"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l resume-dir -d 'The directory the written session belongs to and is resumed in (Claude Code files it under that project). Default: the source session\'s directory, else the current one' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l json -d 'Print the final call\'s report as JSON (on stderr when the view goes to stdout)'
complete -c compactor -n "__fish_compactor_using_subcommand compact" -l in-place -d 'Compact on the store itself, keeping what the replay mints in this profile (budget, summarizer, summary budget, tool rules) and resuming where an earlier in-place run under the same profile stopped. By default the replay runs on a scratch copy of the task and the store is left as it was found (the llm summary cache excepted)'
complete -c compactor -n "__fish_compactor_using_subcommand compact" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand compact" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand compact" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand report" -l task -d 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand report" -l import-as -d 'Import FILE as a task of this name instead of its session id: a new name, no existing task\'s id or the start of one (so no prefix in use changes meaning)' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l project -d 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it' -r -f -a "(__fish_complete_directories)"
complete -c compactor -n "__fish_compactor_using_subcommand report" -l input-format -d 'FILE\'s transcript format' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''
opencode\t''
gemini-cli\t''"
complete -c compactor -n "__fish_compactor_using_subcommand report" -l window -d 'The model\'s context window, in tokens. Default: the window the session recorded, else the recorded model\'s (docs/src/reference/models.md), else 200000' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l output-reserved -d 'Tokens reserved for the model\'s output: w_eff = window − output_reserved. Default: min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l trigger-ratio -d 'Compaction starts above w_eff × this ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l stop-ratio -d 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l protect-recent-steps -d 'Model steps at the end of the history that ordinary compaction never touches' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l summary-budget -d 'Token cap of the floor summary. Default: 6% of the prompt room (window − reserve), at least 2000 and at most 8000' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l price-input -d 'USD per million uncached input tokens. Default: the model\'s (docs/src/reference/models.md)' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l price-cache-write -d 'USD per million tokens written to the prompt cache. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l price-cache-read -d 'USD per million tokens read from the prompt cache. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l price-output -d 'USD per million output tokens. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l prices -d 'A JSON file of per-model prices, consulted before the built-in table (the format is in docs/src/reference/models.md)' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand report" -l cache-ttl -d 'How long the prompt cache lives: a call sent longer than this after the one before (by the transcript\'s timestamps) reads nothing from it and writes its whole prompt. `1h` also prices an Anthropic cache write at twice the input price, as Anthropic bills the 1-hour cache' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -s o -l output -d 'Write the page to FILE (`-` for standard output)' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand report" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand report" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand report" -l allow-over-window -d 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs\' views too, and its child replays pass this'
complete -c compactor -n "__fish_compactor_using_subcommand report" -l open -d 'Open the page with the platform\'s opener once written'
complete -c compactor -n "__fish_compactor_using_subcommand report" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand report" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l task -d 'A task to sweep besides the SOURCEs (its id, a unique prefix, `latest`); repeatable' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l window -d 'Context windows to sweep, in tokens. Default: each session\'s own (the window it recorded, else its model\'s)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l output-reserved -d 'Output reserves to sweep. Default: each window\'s, min(20000, window / 8)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l trigger-ratio -d 'Trigger ratios to sweep: compaction starts above w_eff × the ratio' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l stop-ratio -d 'Stop ratios to sweep: shrinking aims at w_eff × the ratio (below the trigger)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l protect-recent-steps -d 'Protected recent steps to sweep' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l summary-budget -d 'Token cap of the floor summary (one value). Default: each window\'s (6% of window − reserve, 2000 to 8000)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l summarizer -d 'Summarizers to sweep (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l price-input -d 'USD per million uncached input tokens. Default: the model\'s (docs/src/reference/models.md)' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l price-cache-write -d 'USD per million tokens written to the prompt cache. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l price-cache-read -d 'USD per million tokens read from the prompt cache. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l price-output -d 'USD per million output tokens. Default: the model\'s' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l prices -d 'A JSON file of per-model prices, consulted before the built-in table (the format is in docs/src/reference/models.md)' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l cache-ttl -d 'How long the prompt cache lives: a call sent longer than this after the one before (by the transcript\'s timestamps) reads nothing from it and writes its whole prompt. `1h` also prices an Anthropic cache write at twice the input price, as Anthropic bills the 1-hour cache' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -s j -l jobs -d 'Runs at a time, each on its own scratch store (default: the number of cores). The output is the same for any N' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -s o -l output -d 'Also write one self-contained HTML page: a cost against fidelity chart and the sortable table of each session, and the totals (`-`: only the page, on standard output)' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l merge -d 'Total the JSON Lines (`sweep --json`) of sweeps run apart, such as shards of sources swept on several machines, instead of sweeping' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l skip-invalid -d 'Sweep only the valid combinations of the lists (each one left out is named); without it an invalid combination, such as stop ≥ trigger, is refused'
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -l json -d 'Print JSON Lines: one compactor.sweep_row/1 per run, then compactor.sweep_total/1'
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand sweep" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand runs" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand runs" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand runs" -l json -d 'Print JSON Lines: one object a line, one line per saved run'
complete -c compactor -n "__fish_compactor_using_subcommand runs" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand runs" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand runs" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand reset" -l task -d 'The task, as every command takes it' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand reset" -l profile -d 'Forget only this profile\'s state: its id or a unique prefix, as `compactor show --task TASK compacted` lists them (`legacy` for state written before profiles existed)' -r
complete -c compactor -n "__fish_compactor_using_subcommand reset" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand reset" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand reset" -l json -d 'Print one JSON object'
complete -c compactor -n "__fish_compactor_using_subcommand reset" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand reset" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand reset" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand diff" -l task -d 'The task whose saved runs `run:NAME` names (an id, a unique prefix or `latest`). Needed only when a name is saved for several tasks' -r -f -a '(compactor __complete-tasks 2>/dev/null)'
complete -c compactor -n "__fish_compactor_using_subcommand diff" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand diff" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand diff" -l across-tasks -d 'Compare runs of two different tasks (different conversations: their views differ from the first call); refused without it'
complete -c compactor -n "__fish_compactor_using_subcommand diff" -l stat -d 'Print only counts'
complete -c compactor -n "__fish_compactor_using_subcommand diff" -l json -d 'Print one JSON object: the first divergence and the changed parts'
complete -c compactor -n "__fish_compactor_using_subcommand diff" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand diff" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand diff" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand check" -l golden -d 'Compare every view with the golden files under DIR' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand check" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l seed -d 'Seed that picks the call after which the interrupted run aborts' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand check" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand check" -l bless -d 'Rewrite the golden files from this run'
complete -c compactor -n "__fish_compactor_using_subcommand check" -l json -d 'Print a JSON summary'
complete -c compactor -n "__fish_compactor_using_subcommand check" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand check" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "install" -d 'Add compactor\'s hooks to a client\'s settings (merged with yours; a backup is kept)'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "uninstall" -d 'Remove exactly compactor\'s hooks: the file is as it was before install'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "status" -d 'Show where compactor\'s hooks are installed, what they run and their last runs'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from install" -l scope -d 'Whose settings: the user\'s or the current directory\'s project' -r -f -a "user\t'The user\'s: `$CLAUDE_CONFIG_DIR` or `~/.claude/settings.json`; `$CODEX_HOME` or `~/.codex/hooks.json`; `$GEMINI_CLI_HOME/.gemini` or `~/.gemini/settings.json`'
project\t'The project\'s in the current directory: `.claude/settings.json`; `.codex/hooks.json`; `.gemini/settings.json`'"
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from install" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from install" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from install" -l dry-run -d 'Print the change as a diff and write nothing'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from install" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from install" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l scope -d 'Whose settings: the user\'s or the current directory\'s project' -r -f -a "user\t'The user\'s: `$CLAUDE_CONFIG_DIR` or `~/.claude/settings.json`; `$CODEX_HOME` or `~/.codex/hooks.json`; `$GEMINI_CLI_HOME/.gemini` or `~/.gemini/settings.json`'
project\t'The project\'s in the current directory: `.claude/settings.json`; `.codex/hooks.json`; `.gemini/settings.json`'"
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l dry-run -d 'Print the change as a diff and write nothing'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from status" -l scope -d 'Whose settings: the user\'s or the current directory\'s project' -r -f -a "user\t'The user\'s: `$CLAUDE_CONFIG_DIR` or `~/.claude/settings.json`; `$CODEX_HOME` or `~/.codex/hooks.json`; `$GEMINI_CLI_HOME/.gemini` or `~/.gemini/settings.json`'
project\t'The project\'s in the current directory: `.claude/settings.json`; `.codex/hooks.json`; `.gemini/settings.json`'"
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from status" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from status" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "install" -d 'Add compactor\'s hooks to a client\'s settings (merged with yours; a backup is kept)'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove exactly compactor\'s hooks: the file is as it was before install'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show where compactor\'s hooks are installed, what they run and their last runs'
complete -c compactor -n "__fish_compactor_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l client -d 'The client running the hook: claude-code, codex or gemini-cli' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l summarizer -d 'How floor summaries are written (default extractive, or the config file\'s `summarizer`)' -r -f -a "extractive\t'Deterministic, offline: the constitution\'s sections filled by rules'
llm\t'A model over HTTP, validated against the extractive summary and stored before use'
static\t'The last ask and an action count'"
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-provider -d 'The model server\'s wire format (with --summarizer llm). Config key: llm_provider' -r -f -a "openai\t'OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)'
anthropic\t'Anthropic Messages'"
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-base-url -d 'The server\'s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider\'s public API' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-model -d 'The model name the server knows' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-timeout -d 'Seconds one model request may take (default 60)' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-api-key-env -d 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-fallback -d 'What the floor uses when the model fails (default extractive)' -r -f -a "extractive\t''
static\t''"
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-price-input -d 'USD per million input tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l llm-price-output -d 'USD per million output tokens of the summarizer\'s own calls (default 0)' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand hook" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand hook" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand hook" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c compactor -n "__fish_compactor_using_subcommand hook" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand completions" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand completions" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand completions" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand completions" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand completions" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand man" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand man" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand man" -l list -d 'List the subcommands that have a page, one a line'
complete -c compactor -n "__fish_compactor_using_subcommand man" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand man" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand man" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand __complete-tasks" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand __complete-tasks" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand __complete-tasks" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand __complete-tasks" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand __complete-tasks" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "import" -d 'Import transcript files into the store (idempotent, incremental, atomic per file)'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "tasks" -d 'List imported tasks with their sizes and recorded usage'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "show" -d 'Print a task\'s messages, one message, or a tool call\'s raw input and output'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "preflight" -d 'Restore the bounded checkpoint at a turn start (no reduction) and report it'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "step" -d 'Run the full operation at one model call and report which tiers fired'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "export" -d 'Render a view file for other tools or people'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "watch" -d 'Follow a session file as it is written: one line per new model call'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "proxy" -d 'Run the engine live: a loopback proxy between an agent client (Claude Code, Codex, OpenCode, any OpenAI-compatible one) and its API'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "run" -d 'Go live in one command: the proxy, then a client (Claude Code, Codex, OpenCode) pointed at it, with compactor\'s MCP server registered for this run only'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "mcp" -d 'Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "search" -d 'Find what was said or done in the record: ranked hits (BM25) in a session, a project or every task'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "replay" -d 'Walk a task call by call as a live engine would have, and print a timeline'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "probe" -d 'Score a call\'s view with probes from the raw record: asks, rules, files written, errors, decisions and state kept, recoverable or lost'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "compact" -d 'Compact a saved session offline: replay it, then write the final view'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "report" -d 'Replay a task and write one self-contained HTML page picturing it'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "sweep" -d 'Replay sessions under a grid of policies, priced and probed, beside what the client did and plain trimming: which window and trigger to use'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "runs" -d 'List saved replay runs'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "reset" -d 'Forget a task\'s compaction state (all profiles, or one); never the raw record'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "diff" -d 'Compare two views (files or saved runs): exit 0 identical, 1 different'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "check" -d 'Prove on fixture transcripts that projection is deterministic (for CI)'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "hooks" -d 'Keep your rules through Claude Code\'s and Codex\'s own compaction: install, remove or check compactor\'s hooks in the client\'s settings'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "hook" -d 'Run one of compactor\'s hooks (what the client runs; see `compactor hooks`)'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "completions" -d 'Print shell completions for SHELL'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "man" -d 'Print the man page (roff): the main one, or one subcommand\'s'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "__complete-tasks" -d 'Print `latest` and every task id, one a line, for shell completion of `--task`'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c compactor -n "__fish_compactor_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "install" -d 'Add compactor\'s hooks to a client\'s settings (merged with yours; a backup is kept)'
complete -c compactor -n "__fish_compactor_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "uninstall" -d 'Remove exactly compactor\'s hooks: the file is as it was before install'
complete -c compactor -n "__fish_compactor_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "status" -d 'Show where compactor\'s hooks are installed, what they run and their last runs'
