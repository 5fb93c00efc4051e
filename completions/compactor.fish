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
complete -c compactor -n "__fish_compactor_needs_command" -f -a "completions" -d 'Print shell completions for SHELL'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "man" -d 'Print the man page (roff)'
complete -c compactor -n "__fish_compactor_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l format -d 'The files\' format; `auto` detects it from the first lines' -r -f -a "auto\t''
claude-code\t''
codex\t''
openai-chat\t''
anthropic\t''"
complete -c compactor -n "__fish_compactor_using_subcommand import" -l task -d 'Task name (default: the session id in the file, else one derived from its first line). Subagents become NAME/agent-ID' -r
complete -c compactor -n "__fish_compactor_using_subcommand import" -l tool-rules -d 'JSON file of per-tool compaction rules, consulted before the built-in ones' -r -F
complete -c compactor -n "__fish_compactor_using_subcommand import" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand import" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand import" -l skip-invalid -d 'Import the valid lines of a file that has invalid ones, listing each skipped line'
complete -c compactor -n "__fish_compactor_using_subcommand import" -l json -d 'Print one JSON object per file instead of the human report'
complete -c compactor -n "__fish_compactor_using_subcommand import" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand import" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand import" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -l json -d 'Print a JSON array'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand tasks" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand show" -l task -d 'The task' -r
complete -c compactor -n "__fish_compactor_using_subcommand show" -l db -d 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user\'s data directory, created on first use' -r
complete -c compactor -n "__fish_compactor_using_subcommand show" -l color -d 'When to colour output. `auto` colours a terminal unless NO_COLOR is set' -r -f -a "auto\t''
always\t''
never\t''"
complete -c compactor -n "__fish_compactor_using_subcommand show" -l json -d 'Print JSON instead of text'
complete -c compactor -n "__fish_compactor_using_subcommand show" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand show" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand show" -s V -l version -d 'Print version'
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
complete -c compactor -n "__fish_compactor_using_subcommand man" -s q -l quiet -d 'Print only errors and the requested output: no progress, notes or warnings'
complete -c compactor -n "__fish_compactor_using_subcommand man" -s h -l help -d 'Print help'
complete -c compactor -n "__fish_compactor_using_subcommand man" -s V -l version -d 'Print version'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show completions man help" -f -a "import" -d 'Import transcript files into the store (idempotent, incremental, atomic per file)'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show completions man help" -f -a "tasks" -d 'List imported tasks with their sizes and recorded usage'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show completions man help" -f -a "show" -d 'Print a task\'s messages, one message, or a tool call\'s raw input and output'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show completions man help" -f -a "completions" -d 'Print shell completions for SHELL'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show completions man help" -f -a "man" -d 'Print the man page (roff)'
complete -c compactor -n "__fish_compactor_using_subcommand help; and not __fish_seen_subcommand_from import tasks show completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
