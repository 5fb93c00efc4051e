
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
            cand completions 'Print shell completions for SHELL'
            cand man 'Print the man page (roff)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'compactor;import'= {
            cand --format 'The files'' format; `auto` detects it from the first lines'
            cand --task 'Task name (default: the session id in the file, else one derived from its first line). Subagents become NAME/agent-ID'
            cand --tool-rules 'JSON file of per-tool compaction rules, consulted before the built-in ones'
            cand --db 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use'
            cand --color 'When to colour output. `auto` colours a terminal unless NO_COLOR is set'
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
            cand --json 'Print a JSON array'
            cand -q 'Print only errors and the requested output: no progress, notes or warnings'
            cand --quiet 'Print only errors and the requested output: no progress, notes or warnings'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'compactor;show'= {
            cand --task 'The task'
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
            cand completions 'Print shell completions for SHELL'
            cand man 'Print the man page (roff)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'compactor;help;import'= {
        }
        &'compactor;help;tasks'= {
        }
        &'compactor;help;show'= {
        }
        &'compactor;help;completions'= {
        }
        &'compactor;help;man'= {
        }
        &'compactor;help;help'= {
        }
    ]
    $completions[$command]
}
