# SPDX-License-Identifier: GPL-2.0
# The run-time values of `dynprobe __complete` (complete.rs) after clap's
# options and subcommands (_dynprobe above; docs.rs puts this in place of
# the lines that bind it): function names for list, add, check and
# trace, dynprobe's events for del, and the command after `trace ... --`.
_dynprobe_values() {
    local what dashes=${words[(i)--]}
    local -a values
    if [[ $words[2] == trace ]] && (( dashes < CURRENT )); then
        shift $dashes words
        (( CURRENT -= dashes ))
        _normal
        return
    fi
    case $words[2] in
    (list|add|check|trace) what=functions ;;
    (del) what=events ;;
    esac
    if [[ -n $what && $PREFIX != -* && $words[CURRENT-1] != --filter ]] && (( CURRENT > 2 )); then
        values=(${(f)"$(dynprobe __complete $what "$PREFIX" 2>/dev/null)"})
    fi
    _dynprobe "$@"
    (( $#values )) && compadd -a values
    return 0
}

compdef _dynprobe_values dynprobe
if [ "$funcstack[1]" = "_dynprobe" ]; then
    _dynprobe_values "$@"
fi
