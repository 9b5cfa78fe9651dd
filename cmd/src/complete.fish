# SPDX-License-Identifier: GPL-2.0
# The run-time values of `dynprobe __complete` (complete.rs), added to
# clap's options and subcommands above (docs.rs appends this): function
# names for list, add, check and trace (BIN's functions and markers after
# -x BIN), dynprobe's events for del, and the command after `trace ... --`.
function __fish_dynprobe_exec --description 'The -x BIN of the command line, as --exec=BIN'
    set -l words (commandline -opc)
    set -l bin
    for i in (seq (count $words))
        switch $words[$i]
            case -x --exec
                set -q words[(math $i + 1)]; and set bin $words[(math $i + 1)]
            case '--exec=*'
                set bin (string replace -- --exec= '' $words[$i])
            case '-x?*'
                set bin (string sub -s 3 -- $words[$i])
        end
    end
    test -n "$bin"; and printf '%s\n' "--exec=$bin"
end
complete -c dynprobe -n "__fish_dynprobe_using_subcommand list add check trace; and not contains -- -- (commandline -opc); and not contains -- (commandline -opc)[-1] -x --exec" -f -a "(dynprobe __complete functions (__fish_dynprobe_exec) (commandline -ct) 2>/dev/null)"
complete -c dynprobe -n "__fish_dynprobe_using_subcommand del" -f -a "(dynprobe __complete events (commandline -ct) 2>/dev/null)"
complete -c dynprobe -n "__fish_dynprobe_using_subcommand trace; and string match -q -- -- (commandline -opc)[-1]" -f -a "(__fish_complete_command)"
