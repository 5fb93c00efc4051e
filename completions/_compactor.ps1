
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
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions for SHELL')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'compactor;import' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'The files'' format; `auto` detects it from the first lines')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'Task name (default: the session id in the file, else one derived from its first line). Subagents become NAME/agent-ID')
            [CompletionResult]::new('--tool-rules', '--tool-rules', [CompletionResultType]::ParameterName, 'JSON file of per-tool compaction rules, consulted before the built-in ones')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The SQLite store (`:memory:` for a throwaway one). Default: compactor/compactor.db under the user''s data directory, created on first use')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output. `auto` colours a terminal unless NO_COLOR is set')
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
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print a JSON array')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors and the requested output: no progress, notes or warnings')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'compactor;show' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task')
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
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions for SHELL')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff)')
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
        'compactor;help;completions' {
            break
        }
        'compactor;help;man' {
            break
        }
        'compactor;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
