# SPDX-License-Identifier: GPL-2.0
# The run-time values of `dynprobe __complete` (complete.rs) after clap's
# options and subcommands (_dynprobe above; docs.rs appends this):
# function names for list, add, check and trace (BIN's functions and
# markers after -x BIN), dynprobe's events for del, and the command to
# run after `trace ... --`.
_dynprobe_values() {
	local i what bin='' exec=()
	COMPREPLY=()
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[1]} == trace && ${COMP_WORDS[i]} == -- ]]; then
			# The command; its arguments are bash's default, files.
			((i == COMP_CWORD - 1)) && mapfile -t COMPREPLY < <(compgen -c -- "$2")
			return 0
		fi
	done
	for ((i = 2; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-x | --exec)
			# bash splits --exec=BIN at the =.
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
			((i + 1 < COMP_CWORD)) && bin=${COMP_WORDS[i + 1]}
			;;
		-x?*) bin=${COMP_WORDS[i]#-x} ;;
		esac
	done
	_dynprobe "$@"
	case ${COMP_WORDS[1]} in
	list | add | check | trace) what=functions ;;
	del) what=events ;;
	*) return 0 ;;
	esac
	# No names for an option's value: the filter's expression, BIN.
	if ((COMP_CWORD >= 2)) && [[ $2 != -* && $3 != @(--filter|-x|--exec|=) ]]; then
		[[ $what == functions && -n $bin ]] && exec=("--exec=$bin")
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(dynprobe __complete "$what" "${exec[@]}" "$2" 2>/dev/null)
	fi
	return 0
}
complete -F _dynprobe_values -o nosort -o bashdefault -o default dynprobe
