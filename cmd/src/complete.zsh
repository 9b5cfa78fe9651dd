# SPDX-License-Identifier: GPL-2.0
# The run-time values of `dynprobe __complete` (complete.rs) after clap's
# options and subcommands (_dynprobe above; docs.rs puts this in place of
# the lines that bind it): function names for list, add, check and
# trace (BIN's functions and markers after -x BIN), dynprobe's events for
# del, and the command after `trace ... --`.
_dynprobe_values() {
    local i what bin dashes=${words[(i)--]}
    local -a values exec
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
    for (( i = 3; i < CURRENT; i++ )); do
        case $words[i] in
        (-x|--exec) (( i + 1 < CURRENT )) && bin=$words[i+1] ;;
        (--exec=*) bin=${words[i]#--exec=} ;;
        (-x?*) bin=${words[i]#-x} ;;
        esac
    done
    [[ $what == functions && -n $bin ]] && exec=(--exec=$bin)
    # No names for an option's value: the filter's expression, BIN.
    if [[ -n $what && $PREFIX != -* && $words[CURRENT-1] != (--filter|-x|--exec) ]] && (( CURRENT > 2 )); then
        values=(${(f)"$(dynprobe __complete $what $exec "$PREFIX" 2>/dev/null)"})
    fi
    _dynprobe "$@"
    (( $#values )) && compadd -a values
    return 0
}

compdef _dynprobe_values dynprobe
if [ "$funcstack[1]" = "_dynprobe" ]; then
    _dynprobe_values "$@"
fi
