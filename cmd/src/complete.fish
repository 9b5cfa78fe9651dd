# SPDX-License-Identifier: GPL-2.0
# The run-time values of `dynprobe __complete` (complete.rs), added to
# clap's options and subcommands above (docs.rs appends this): function
# names for list, add, check and trace, dynprobe's events for del, and
# the command after `trace ... --`.
complete -c dynprobe -n "__fish_dynprobe_using_subcommand list add check trace; and not contains -- -- (commandline -opc)" -f -a "(dynprobe __complete functions (commandline -ct) 2>/dev/null)"
complete -c dynprobe -n "__fish_dynprobe_using_subcommand del" -f -a "(dynprobe __complete events (commandline -ct) 2>/dev/null)"
complete -c dynprobe -n "__fish_dynprobe_using_subcommand trace; and string match -q -- -- (commandline -opc)[-1]" -f -a "(__fish_complete_command)"
