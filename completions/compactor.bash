_compactor() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="compactor"
                ;;
            compactor,__complete-tasks)
                cmd="compactor__subcmd____complete__subcmd__tasks"
                ;;
            compactor,check)
                cmd="compactor__subcmd__check"
                ;;
            compactor,compact)
                cmd="compactor__subcmd__compact"
                ;;
            compactor,completions)
                cmd="compactor__subcmd__completions"
                ;;
            compactor,diff)
                cmd="compactor__subcmd__diff"
                ;;
            compactor,export)
                cmd="compactor__subcmd__export"
                ;;
            compactor,help)
                cmd="compactor__subcmd__help"
                ;;
            compactor,hook)
                cmd="compactor__subcmd__hook"
                ;;
            compactor,hooks)
                cmd="compactor__subcmd__hooks"
                ;;
            compactor,import)
                cmd="compactor__subcmd__import"
                ;;
            compactor,man)
                cmd="compactor__subcmd__man"
                ;;
            compactor,mcp)
                cmd="compactor__subcmd__mcp"
                ;;
            compactor,preflight)
                cmd="compactor__subcmd__preflight"
                ;;
            compactor,probe)
                cmd="compactor__subcmd__probe"
                ;;
            compactor,proxy)
                cmd="compactor__subcmd__proxy"
                ;;
            compactor,replay)
                cmd="compactor__subcmd__replay"
                ;;
            compactor,report)
                cmd="compactor__subcmd__report"
                ;;
            compactor,reset)
                cmd="compactor__subcmd__reset"
                ;;
            compactor,run)
                cmd="compactor__subcmd__run"
                ;;
            compactor,runs)
                cmd="compactor__subcmd__runs"
                ;;
            compactor,search)
                cmd="compactor__subcmd__search"
                ;;
            compactor,show)
                cmd="compactor__subcmd__show"
                ;;
            compactor,step)
                cmd="compactor__subcmd__step"
                ;;
            compactor,sweep)
                cmd="compactor__subcmd__sweep"
                ;;
            compactor,tasks)
                cmd="compactor__subcmd__tasks"
                ;;
            compactor,watch)
                cmd="compactor__subcmd__watch"
                ;;
            compactor__subcmd__help,__complete-tasks)
                cmd="compactor__subcmd__help__subcmd____complete__subcmd__tasks"
                ;;
            compactor__subcmd__help,check)
                cmd="compactor__subcmd__help__subcmd__check"
                ;;
            compactor__subcmd__help,compact)
                cmd="compactor__subcmd__help__subcmd__compact"
                ;;
            compactor__subcmd__help,completions)
                cmd="compactor__subcmd__help__subcmd__completions"
                ;;
            compactor__subcmd__help,diff)
                cmd="compactor__subcmd__help__subcmd__diff"
                ;;
            compactor__subcmd__help,export)
                cmd="compactor__subcmd__help__subcmd__export"
                ;;
            compactor__subcmd__help,help)
                cmd="compactor__subcmd__help__subcmd__help"
                ;;
            compactor__subcmd__help,hook)
                cmd="compactor__subcmd__help__subcmd__hook"
                ;;
            compactor__subcmd__help,hooks)
                cmd="compactor__subcmd__help__subcmd__hooks"
                ;;
            compactor__subcmd__help,import)
                cmd="compactor__subcmd__help__subcmd__import"
                ;;
            compactor__subcmd__help,man)
                cmd="compactor__subcmd__help__subcmd__man"
                ;;
            compactor__subcmd__help,mcp)
                cmd="compactor__subcmd__help__subcmd__mcp"
                ;;
            compactor__subcmd__help,preflight)
                cmd="compactor__subcmd__help__subcmd__preflight"
                ;;
            compactor__subcmd__help,probe)
                cmd="compactor__subcmd__help__subcmd__probe"
                ;;
            compactor__subcmd__help,proxy)
                cmd="compactor__subcmd__help__subcmd__proxy"
                ;;
            compactor__subcmd__help,replay)
                cmd="compactor__subcmd__help__subcmd__replay"
                ;;
            compactor__subcmd__help,report)
                cmd="compactor__subcmd__help__subcmd__report"
                ;;
            compactor__subcmd__help,reset)
                cmd="compactor__subcmd__help__subcmd__reset"
                ;;
            compactor__subcmd__help,run)
                cmd="compactor__subcmd__help__subcmd__run"
                ;;
            compactor__subcmd__help,runs)
                cmd="compactor__subcmd__help__subcmd__runs"
                ;;
            compactor__subcmd__help,search)
                cmd="compactor__subcmd__help__subcmd__search"
                ;;
            compactor__subcmd__help,show)
                cmd="compactor__subcmd__help__subcmd__show"
                ;;
            compactor__subcmd__help,step)
                cmd="compactor__subcmd__help__subcmd__step"
                ;;
            compactor__subcmd__help,sweep)
                cmd="compactor__subcmd__help__subcmd__sweep"
                ;;
            compactor__subcmd__help,tasks)
                cmd="compactor__subcmd__help__subcmd__tasks"
                ;;
            compactor__subcmd__help,watch)
                cmd="compactor__subcmd__help__subcmd__watch"
                ;;
            compactor__subcmd__help__subcmd__hooks,install)
                cmd="compactor__subcmd__help__subcmd__hooks__subcmd__install"
                ;;
            compactor__subcmd__help__subcmd__hooks,status)
                cmd="compactor__subcmd__help__subcmd__hooks__subcmd__status"
                ;;
            compactor__subcmd__help__subcmd__hooks,uninstall)
                cmd="compactor__subcmd__help__subcmd__hooks__subcmd__uninstall"
                ;;
            compactor__subcmd__hooks,help)
                cmd="compactor__subcmd__hooks__subcmd__help"
                ;;
            compactor__subcmd__hooks,install)
                cmd="compactor__subcmd__hooks__subcmd__install"
                ;;
            compactor__subcmd__hooks,status)
                cmd="compactor__subcmd__hooks__subcmd__status"
                ;;
            compactor__subcmd__hooks,uninstall)
                cmd="compactor__subcmd__hooks__subcmd__uninstall"
                ;;
            compactor__subcmd__hooks__subcmd__help,help)
                cmd="compactor__subcmd__hooks__subcmd__help__subcmd__help"
                ;;
            compactor__subcmd__hooks__subcmd__help,install)
                cmd="compactor__subcmd__hooks__subcmd__help__subcmd__install"
                ;;
            compactor__subcmd__hooks__subcmd__help,status)
                cmd="compactor__subcmd__hooks__subcmd__help__subcmd__status"
                ;;
            compactor__subcmd__hooks__subcmd__help,uninstall)
                cmd="compactor__subcmd__hooks__subcmd__help__subcmd__uninstall"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        compactor)
            opts="-q -h -V --db --quiet --color --help --version import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd____complete__subcmd__tasks)
            opts="-q -h -V --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__check)
            opts="-q -h -V --golden --bless --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --seed --json --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --golden)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__compact)
            opts="-o -q -h -V --task --import-as --project --input-format --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --output --format --json --in-place --write-session --resume-dir --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "anthropic openai markdown" -- "${cur}"))
                    return 0
                    ;;
                --write-session)
                    COMPREPLY=($(compgen -W "claude-code codex" -- "${cur}"))
                    return 0
                    ;;
                --resume-dir)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__completions)
            opts="-q -h -V --db --quiet --color --help --version bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__diff)
            opts="-q -h -V --task --across-tasks --stat --json --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__export)
            opts="-o -q -h -V --format --output --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "anthropic openai markdown" -- "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help)
            opts="import tasks show preflight step export watch proxy run mcp search replay probe compact report sweep runs reset diff check hooks hook completions man __complete-tasks help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd____complete__subcmd__tasks)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__compact)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__diff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__export)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__hook)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__hooks)
            opts="install uninstall status"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__hooks__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__hooks__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__hooks__subcmd__uninstall)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__import)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__man)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__mcp)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__preflight)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__probe)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__proxy)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__replay)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__report)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__reset)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__runs)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__search)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__step)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__sweep)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__tasks)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__help__subcmd__watch)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hook)
            opts="-q -h -V --client --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --client)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks)
            opts="-q -h -V --db --quiet --color --help --version install uninstall status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__help)
            opts="install uninstall status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__help__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__help__subcmd__uninstall)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__install)
            opts="-q -h -V --scope --dry-run --db --quiet --color --help --version claude-code codex gemini-cli"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --scope)
                    COMPREPLY=($(compgen -W "user project" -- "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__status)
            opts="-q -h -V --scope --db --quiet --color --help --version claude-code codex gemini-cli"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --scope)
                    COMPREPLY=($(compgen -W "user project" -- "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__hooks__subcmd__uninstall)
            opts="-q -h -V --scope --dry-run --db --quiet --color --help --version claude-code codex gemini-cli"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --scope)
                    COMPREPLY=($(compgen -W "user project" -- "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__import)
            opts="-q -h -V --claude --codex --opencode --gemini --format --import-as --skip-invalid --tool-rules --json --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tool-rules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__man)
            opts="-q -h -V --list --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__mcp)
            opts="-q -h -V --task --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__preflight)
            opts="-q -h -V --task --import-as --project --input-format --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --at --view --json --in-place --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --at)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --view)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__probe)
            opts="-q -h -V --task --import-as --project --input-format --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --at --recorded --json --fail-on-loss --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --at)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__proxy)
            opts="-q -h -V --listen --allow-remote --upstream --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --json --max-body-mb --connect-timeout --first-byte-timeout --idle-timeout --max-conversations --conversation-idle --stop-when-stdin-closes --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --upstream)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-body-mb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --first-byte-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-conversations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --conversation-idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__replay)
            opts="-q -h -V --task --import-as --project --input-format --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --price-input --price-cache-write --price-cache-read --price-output --prices --cache-ttl --from --to --in-place --resume --views --save --force --json --jsonl --probes --verify-forwarded --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-cache-write)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-cache-read)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --views)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --save)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__report)
            opts="-o -q -h -V --task --import-as --project --input-format --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --price-input --price-cache-write --price-cache-read --price-output --prices --cache-ttl --output --open --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-cache-write)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-cache-read)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__reset)
            opts="-q -h -V --task --profile --json --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__run)
            opts="-q -h -V --db --quiet --color --help --version claude codex opencode gemini"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__runs)
            opts="-q -h -V --json --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__search)
            opts="-q -h -V --task --project --all --kind --limit --json --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --kind)
                    COMPREPLY=($(compgen -W "ask answer tool error summary" -- "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__show)
            opts="-q -h -V --task --import-as --project --input-format --json --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__step)
            opts="-q -h -V --task --import-as --project --input-format --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --at --view --json --in-place --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --import-as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --at)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --view)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__sweep)
            opts="-j -o -q -h -V --task --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --price-input --price-cache-write --price-cache-read --price-output --prices --cache-ttl --skip-invalid --jobs --json --output --merge --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-cache-write)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-cache-read)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --merge)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__tasks)
            opts="-q -h -V --json --wide --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        compactor__subcmd__watch)
            opts="-q -h -V --task --project --input-format --window --output-reserved --trigger-ratio --stop-ratio --protect-recent-steps --summary-budget --summarizer --llm-provider --llm-base-url --llm-model --llm-timeout --llm-api-key-env --llm-fallback --llm-price-input --llm-price-output --allow-over-window --json --until-idle --interval --db --quiet --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --task)
                    COMPREPLY=($(compgen -W "$(compactor __complete-tasks 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --project)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --input-format)
                    COMPREPLY=($(compgen -W "auto claude-code codex openai-chat anthropic opencode gemini-cli" -- "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-reserved)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trigger-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --protect-recent-steps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summarizer)
                    COMPREPLY=($(compgen -W "extractive llm static" -- "${cur}"))
                    return 0
                    ;;
                --llm-provider)
                    COMPREPLY=($(compgen -W "openai anthropic" -- "${cur}"))
                    return 0
                    ;;
                --llm-base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-fallback)
                    COMPREPLY=($(compgen -W "extractive static" -- "${cur}"))
                    return 0
                    ;;
                --llm-price-input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llm-price-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _compactor -o nosort -o bashdefault -o default compactor
else
    complete -F _compactor -o bashdefault -o default compactor
fi
