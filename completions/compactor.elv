
use builtin;
use str;

set edit:completion:arg-completer[compactor] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'compactor'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'compactor'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand import 'Import transcript files into the store (idempotent, incremental, atomic per file)'
            cand tasks 'List imported tasks with their sizes and recorded usage'
            cand show 'Print a task''s messages, one message, or a tool call''s raw input and output'
            cand preflight 'Restore the bounded checkpoint at a turn start (no reduction) and report it'
            cand step 'Run the full operation at one model call and report which tiers fired'
            cand export 'Render a view file for other tools or people'
            cand watch 'Follow a session file as it is written: one line per new model call'
            cand proxy 'Run the engine live: a loopback proxy between Claude Code or Codex and its API'
            cand run 'Go live in one command: the proxy, then Claude Code or Codex pointed at it, with compactor''s MCP server registered for this run only'
            cand mcp 'Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context'
            cand replay 'Walk a task call by call as a live engine would have, and print a timeline'
            cand probe 'Score a call''s view with probes from the raw record: asks, rules, files written, errors, decisions and state kept, recoverable or lost'
            cand compact 'Compact a saved session offline: replay it, then write the final view'
            cand report 'Replay a task and write one self-contained HTML page picturing it'
            cand sweep 'Replay sessions under a grid of policies, priced and probed, beside what the client did and plain trimming: which window and trigger to use'
            cand runs 'List saved replay runs'
            cand reset 'Forget a task''s compaction state (all profiles, or one); never the raw record'
            cand diff 'Compare two views (files or saved runs): exit 0 identical, 1 different'
            cand check 'Prove on fixture transcripts that projection is deterministic (for CI)'
            cand hooks 'Keep your rules through Claude Code''s and Codex''s own compaction: install, remove or check compactor''s hooks in the client''s settings'
            cand hook 'Run one of compactor''s hooks (what the client runs; see `compactor hooks`)'
            cand completions 'Print shell completions for SHELL'
            cand man 'Print the man page (roff): the main one, or one subcommand''s'
            cand __complete-tasks 'Print `latest` and every task id, one a line, for shell completion of `--task`'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'compactor;import'= {
            cand --format 'The files'' format; `auto` detects it from the first lines'
            cand --import-as 'Import as a task of this name (default: the session id in the file, else one derived from its first line): a new name, no existing task''s id or the start of one. Subagents become NAME/agent-ID. `--task` is an older name for it'
            cand --tool-rules 'JSON file of per-tool compaction rules, consulted before the built-in ones'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --claude 'Import every Claude Code session: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects'
            cand --codex 'Import every Codex session: $CODEX_HOME/sessions, else ~/.codex/sessions'
            cand --opencode 'Import every OpenCode session: $OPENCODE_DB, else the opencode*.db stores in $XDG_DATA_HOME/opencode, else ~/.local/share/opencode'
            cand --skip-invalid 'Import the valid lines of a file that has invalid ones, listing each skipped line'
            cand --json 'Print one JSON object per file instead of the human report'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;tasks'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --json 'Print JSON Lines: one record per task (by id), then the totals'
            cand --wide 'Full ids, titles and project paths, and every usage figure (wider than 100 columns)'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;show'= {
            cand --task 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task'
            cand --import-as 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)'
            cand --project 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --json 'Print JSON instead of text'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;preflight'= {
            cand --task 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task'
            cand --import-as 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)'
            cand --project 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --at 'The model call to project (1 = the first). Default: the next call after the last recorded message'
            cand --view 'Write the view''s canonical bytes to FILE'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --json 'Print the report as one JSON object'
            cand --in-place 'Run on the store itself, reading and keeping the compaction state of this profile (budget, summarizer, summary budget, tool rules). By default the call runs on a scratch copy of the task with no compaction state, and the store is left as it was found'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;step'= {
            cand --task 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task'
            cand --import-as 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)'
            cand --project 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --at 'The model call to project (1 = the first). Default: the next call after the last recorded message'
            cand --view 'Write the view''s canonical bytes to FILE'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --json 'Print the report as one JSON object'
            cand --in-place 'Run on the store itself, reading and keeping the compaction state of this profile (budget, summarizer, summary budget, tool rules). By default the call runs on a scratch copy of the task with no compaction state, and the store is left as it was found'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;export'= {
            cand --format 'format'
            cand -o 'Write to FILE instead of standard output'
            cand --output 'Write to FILE instead of standard output'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;watch'= {
            cand --task 'The task whose file to follow: its id, a unique prefix of it, or `latest`'
            cand --project 'Pick among the sessions recorded in this project directory: `latest` and prefixes look only there. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --until-idle 'Stop once nothing was added for SECONDS (default: run until Ctrl-C)'
            cand --interval 'How often to look at the file, in milliseconds'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --json 'One JSON line per model call: the call''s record of `replay --jsonl`'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;proxy'= {
            cand --listen 'Where to listen (port 0: a free one). Loopback only, unless --allow-remote'
            cand --upstream 'Where to forward every request: https://HOST[:PORT][/PREFIX] (plain http only to loopback). Default: the official endpoint of the API each request speaks (api.anthropic.com for Messages, api.openai.com for Responses)'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --max-body-mb 'Refuse a request body over this many MiB with 413 (a declared length at once, before reading it). The default is above the providers'' own limits'
            cand --connect-timeout 'Seconds to connect to the upstream (TCP and TLS)'
            cand --first-byte-timeout 'Seconds from a request sent to its answer''s headers (a whole, not streamed, answer''s come once it is generated)'
            cand --idle-timeout 'Seconds an answer may go without sending anything (between two stream events) before the proxy gives up on it'
            cand --max-conversations 'Conversations whose state is kept in memory; the least recently used beyond it is rebuilt from the store when it returns'
            cand --conversation-idle 'Seconds without a call after which a conversation''s state leaves memory'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-remote 'Listen on an address other machines can reach, and answer requests addressed to any host name (a warning is printed)'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --json 'One JSON line per call (`compactor.proxy_call/1`) instead of the human line'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;run'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;mcp'= {
            cand --task 'The task `search_history` and `task_context` answer for (an id, a unique prefix or `latest`). Default: the most recently recorded task in the client''s working directory, at each call'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;replay'= {
            cand --task 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task'
            cand --import-as 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)'
            cand --project 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --price-input 'USD per million uncached input tokens. Default: the model''s (README, "Models and prices")'
            cand --price-cache-write 'USD per million tokens written to the prompt cache. Default: the model''s'
            cand --price-cache-read 'USD per million tokens read from the prompt cache. Default: the model''s'
            cand --price-output 'USD per million output tokens. Default: the model''s'
            cand --prices 'A JSON file of per-model prices, consulted before the built-in table (the format is in README, "Models and prices")'
            cand --from 'First call to show (earlier calls still run, unless --resume)'
            cand --to 'Last call to run and show'
            cand --views 'Write every call''s view to DIR/call-NNNN.json'
            cand --save 'Save the run''s reports and views in the store under NAME'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --in-place 'Replay on the store itself, keeping what the replay mints (as `compact` does). By default a replay runs on a scratch copy of the task with no compaction state, so it shows what a live engine would have done and repeats exactly'
            cand --resume 'Continue an interrupted in-place replay (implies --in-place): start at the last call it committed (or at --from), re-deriving the checkpoint as a restarted engine would'
            cand --force 'With --save, replace an existing run of that name'
            cand --json 'Print one JSON object: {"calls":[...],"totals":{...},"schema":"compactor.replay/1"}'
            cand --jsonl 'Print one JSON object per call as soon as it completes (JSON Lines), then a totals record'
            cand --probes 'Score every call''s view with probes from the raw record (as `compactor probe` does): critical and overall survival per call, and the worst call'
            cand --verify-forwarded 'Audit a task `compactor proxy` recorded: derive every view it forwarded again, from the record as it stood then and under the settings it ran with (budget flags are not needed), and compare hashes; exit 1 at the first mismatch'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;probe'= {
            cand --task 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task'
            cand --import-as 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)'
            cand --project 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --at 'The call whose view is scored (default: the last call)'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --recorded 'Score what the original agent sent instead of compactor''s view: the recorded history since the agent''s last own compaction summary'
            cand --json 'Print one JSON object: {"categories":{...},"critical_lost":N,"lost":[...],...}'
            cand --fail-on-loss 'Exit 1 when a critical probe (ask, constraint, deliverable) is lost'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;compact'= {
            cand --task 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task'
            cand --import-as 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)'
            cand --project 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand -o 'Write the final view to FILE (default: standard output)'
            cand --output 'Write the final view to FILE (default: standard output)'
            cand --format 'The final view''s format'
            cand --write-session 'Write the final view as a new session of this agent, to resume from. The report then goes to stdout, and the view only to `-o FILE`'
            cand --resume-dir 'The directory the written session belongs to and is resumed in (Claude Code files it under that project). Default: the source session''s directory, else the current one'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --json 'Print the final call''s report as JSON (on stderr when the view goes to stdout)'
            cand --in-place 'Compact on the store itself, keeping what the replay mints in this profile (budget, summarizer, summary budget, tool rules) and resuming where an earlier in-place run under the same profile stopped. By default the replay runs on a scratch copy of the task and the store is left as it was found (the llm summary cache excepted)'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;report'= {
            cand --task 'The task: its id, a unique prefix of it, or `latest` (the default: the most recently active; `compactor tasks` lists them). Not with FILE: FILE names the task'
            cand --import-as 'Import FILE as a task of this name instead of its session id: a new name, no existing task''s id or the start of one (so no prefix in use changes meaning)'
            cand --project 'Pick among the sessions recorded in this project directory (the PROJECT column of `compactor tasks`): `latest` and id prefixes look only there; alone, its latest session. `--cwd` is an older name for it'
            cand --input-format 'FILE''s transcript format'
            cand --window 'The model''s context window, in tokens. Default: the window the session recorded, else the recorded model''s (README, "Models and prices"), else 200000'
            cand --output-reserved 'Tokens reserved for the model''s output: w_eff = window − output_reserved. Default: min(20000, window / 8)'
            cand --trigger-ratio 'Compaction starts above w_eff × this ratio'
            cand --stop-ratio 'Shrinking aims at w_eff × this ratio (must be below the trigger ratio)'
            cand --protect-recent-steps 'Model steps at the end of the history that ordinary compaction never touches'
            cand --summary-budget 'Token cap of the floor summary'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --price-input 'USD per million uncached input tokens. Default: the model''s (README, "Models and prices")'
            cand --price-cache-write 'USD per million tokens written to the prompt cache. Default: the model''s'
            cand --price-cache-read 'USD per million tokens read from the prompt cache. Default: the model''s'
            cand --price-output 'USD per million output tokens. Default: the model''s'
            cand --prices 'A JSON file of per-model prices, consulted before the built-in table (the format is in README, "Models and prices")'
            cand -o 'Write the page to FILE (`-` for standard output)'
            cand --output 'Write the page to FILE (`-` for standard output)'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --allow-over-window 'Run even when the system prompt and tools alone exceed w_eff (every view over the window), which is otherwise refused: `check` compares such runs'' views too, and its child replays pass this'
            cand --open 'Open the page with the platform''s opener once written'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;sweep'= {
            cand --task 'A task to sweep besides the SOURCEs (its id, a unique prefix, `latest`); repeatable'
            cand --window 'Context windows to sweep, in tokens. Default: each session''s own (the window it recorded, else its model''s)'
            cand --output-reserved 'Output reserves to sweep. Default: each window''s, min(20000, window / 8)'
            cand --trigger-ratio 'Trigger ratios to sweep: compaction starts above w_eff × the ratio'
            cand --stop-ratio 'Stop ratios to sweep: shrinking aims at w_eff × the ratio (below the trigger)'
            cand --protect-recent-steps 'Protected recent steps to sweep'
            cand --summary-budget 'Token cap of the floor summary (one value)'
            cand --summarizer 'Summarizers to sweep (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --price-input 'USD per million uncached input tokens. Default: the model''s (README, "Models and prices")'
            cand --price-cache-write 'USD per million tokens written to the prompt cache. Default: the model''s'
            cand --price-cache-read 'USD per million tokens read from the prompt cache. Default: the model''s'
            cand --price-output 'USD per million output tokens. Default: the model''s'
            cand --prices 'A JSON file of per-model prices, consulted before the built-in table (the format is in README, "Models and prices")'
            cand -j 'Runs at a time, each on its own scratch store (default: the number of cores). The output is the same for any N'
            cand --jobs 'Runs at a time, each on its own scratch store (default: the number of cores). The output is the same for any N'
            cand -o 'Also write one self-contained HTML page: a cost against fidelity chart and the sortable table of each session, and the totals (`-`: only the page, on standard output)'
            cand --output 'Also write one self-contained HTML page: a cost against fidelity chart and the sortable table of each session, and the totals (`-`: only the page, on standard output)'
            cand --merge 'Total the JSON Lines (`sweep --json`) of sweeps run apart, such as shards of sources swept on several machines, instead of sweeping'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --skip-invalid 'Sweep only the valid combinations of the lists (each one left out is named); without it an invalid combination, such as stop ≥ trigger, is refused'
            cand --json 'Print JSON Lines: one compactor.sweep_row/1 per run, then compactor.sweep_total/1'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;runs'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --json 'Print JSON Lines: one object a line, one line per saved run'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;reset'= {
            cand --task 'The task, as every command takes it'
            cand --profile 'Forget only this profile''s state: its id or a unique prefix, as `compactor show --task TASK compacted` lists them (`legacy` for state written before profiles existed)'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --json 'Print one JSON object'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;diff'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --stat 'Print only counts'
            cand --json 'Print one JSON object: the first divergence and the changed parts'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;check'= {
            cand --golden 'Compare every view with the golden files under DIR'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --seed 'Seed that picks the call after which the interrupted run aborts'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --bless 'Rewrite the golden files from this run'
            cand --json 'Print a JSON summary'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;hooks'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand install 'Add compactor''s hooks to a client''s settings (merged with yours; a backup is kept)'
            cand uninstall 'Remove exactly compactor''s hooks: the file is as it was before install'
            cand status 'Show where compactor''s hooks are installed, what they run and their last runs'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'compactor;hooks;install'= {
            cand --scope 'Whose settings: the user''s or the current directory''s project'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --dry-run 'Print the change as a diff and write nothing'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;hooks;uninstall'= {
            cand --scope 'Whose settings: the user''s or the current directory''s project'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --dry-run 'Print the change as a diff and write nothing'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;hooks;status'= {
            cand --scope 'Whose settings: the user''s or the current directory''s project'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;hooks;help'= {
            cand install 'Add compactor''s hooks to a client''s settings (merged with yours; a backup is kept)'
            cand uninstall 'Remove exactly compactor''s hooks: the file is as it was before install'
            cand status 'Show where compactor''s hooks are installed, what they run and their last runs'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'compactor;hooks;help;install'= {
        }
        &'compactor;hooks;help;uninstall'= {
        }
        &'compactor;hooks;help;status'= {
        }
        &'compactor;hooks;help;help'= {
        }
        &'compactor;hook'= {
            cand --client 'The client running the hook: claude-code or codex'
            cand --summarizer 'How floor summaries are written (default extractive, or the config file''s `summarizer`)'
            cand --llm-provider 'The model server''s wire format (with --summarizer llm). Config key: llm_provider'
            cand --llm-base-url 'The server''s base URL, e.g. http://127.0.0.1:11434/v1. Plain http only to loopback. Default: the provider''s public API'
            cand --llm-model 'The model name the server knows'
            cand --llm-timeout 'Seconds one model request may take (default 60)'
            cand --llm-api-key-env 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself is never a flag or a config value'
            cand --llm-fallback 'What the floor uses when the model fails (default extractive)'
            cand --llm-price-input 'USD per million input tokens of the summarizer''s own calls (default 0)'
            cand --llm-price-output 'USD per million output tokens of the summarizer''s own calls (default 0)'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;completions'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;man'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand --list 'List the subcommands that have a page, one a line'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;__complete-tasks'= {
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;help'= {
            cand import 'Import transcript files into the store (idempotent, incremental, atomic per file)'
            cand tasks 'List imported tasks with their sizes and recorded usage'
            cand show 'Print a task''s messages, one message, or a tool call''s raw input and output'
            cand preflight 'Restore the bounded checkpoint at a turn start (no reduction) and report it'
            cand step 'Run the full operation at one model call and report which tiers fired'
            cand export 'Render a view file for other tools or people'
            cand watch 'Follow a session file as it is written: one line per new model call'
            cand proxy 'Run the engine live: a loopback proxy between Claude Code or Codex and its API'
            cand run 'Go live in one command: the proxy, then Claude Code or Codex pointed at it, with compactor''s MCP server registered for this run only'
            cand mcp 'Serve the record to a model over MCP (stdio): view_tool_call, search_history, task_context'
            cand replay 'Walk a task call by call as a live engine would have, and print a timeline'
            cand probe 'Score a call''s view with probes from the raw record: asks, rules, files written, errors, decisions and state kept, recoverable or lost'
            cand compact 'Compact a saved session offline: replay it, then write the final view'
            cand report 'Replay a task and write one self-contained HTML page picturing it'
            cand sweep 'Replay sessions under a grid of policies, priced and probed, beside what the client did and plain trimming: which window and trigger to use'
            cand runs 'List saved replay runs'
            cand reset 'Forget a task''s compaction state (all profiles, or one); never the raw record'
            cand diff 'Compare two views (files or saved runs): exit 0 identical, 1 different'
            cand check 'Prove on fixture transcripts that projection is deterministic (for CI)'
            cand hooks 'Keep your rules through Claude Code''s and Codex''s own compaction: install, remove or check compactor''s hooks in the client''s settings'
            cand hook 'Run one of compactor''s hooks (what the client runs; see `compactor hooks`)'
            cand completions 'Print shell completions for SHELL'
            cand man 'Print the man page (roff): the main one, or one subcommand''s'
            cand __complete-tasks 'Print `latest` and every task id, one a line, for shell completion of `--task`'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'compactor;help;import'= {
        }
        &'compactor;help;tasks'= {
        }
        &'compactor;help;show'= {
        }
        &'compactor;help;preflight'= {
        }
        &'compactor;help;step'= {
        }
        &'compactor;help;export'= {
        }
        &'compactor;help;watch'= {
        }
        &'compactor;help;proxy'= {
        }
        &'compactor;help;run'= {
        }
        &'compactor;help;mcp'= {
        }
        &'compactor;help;replay'= {
        }
        &'compactor;help;probe'= {
        }
        &'compactor;help;compact'= {
        }
        &'compactor;help;report'= {
        }
        &'compactor;help;sweep'= {
        }
        &'compactor;help;runs'= {
        }
        &'compactor;help;reset'= {
        }
        &'compactor;help;diff'= {
        }
        &'compactor;help;check'= {
        }
        &'compactor;help;hooks'= {
            cand install 'Add compactor''s hooks to a client''s settings (merged with yours; a backup is kept)'
            cand uninstall 'Remove exactly compactor''s hooks: the file is as it was before install'
            cand status 'Show where compactor''s hooks are installed, what they run and their last runs'
        }
        &'compactor;help;hooks;install'= {
        }
        &'compactor;help;hooks;uninstall'= {
        }
        &'compactor;help;hooks;status'= {
        }
        &'compactor;help;hook'= {
        }
        &'compactor;help;completions'= {
        }
        &'compactor;help;man'= {
        }
        &'compactor;help;__complete-tasks'= {
        }
        &'compactor;help;help'= {
        }
    ]
    $completions[$command]
}
