# SPDX-License-Identifier: GPL-2.0
# bash completion for dynprobe (installed as
# /usr/share/bash-completion/completions/dynprobe by make install-command).

_dynprobe_events() { # GROUP/EVENT of dynprobe's events
	dynprobe show 2>/dev/null | awk '
		{ sub(/^[a-z_]+: /, "") }
		/^[a-z][0-9]*:/ { split($1, a, ":"); n = a[2]; if (n !~ /\//) next; sub(/^synthetic\//, "synthetic/", n); print n; next }
		/\(/ { f = $0; sub(/\(.*/, "", f); gsub(/\./, "_", f); print "functions/" f (index($0, "->") ? "__exit" : ""); next }
		{ print "synthetic/" $1 }'
}

_dynprobe() {
	local cur prev sub i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	sub=${COMP_WORDS[1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "list add del show check trace help --help" -- "$cur"))
		return
	fi
	# After `trace ... --`, complete the command to run.
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	case $sub in
	list)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-v --help" -- "$cur"))
		elif [ -r /sys/kernel/tracing/available_filter_functions ]; then
			COMPREPLY=($(awk -v p="$cur" 'index($1, p) == 1 { print $1 }' \
				/sys/kernel/tracing/available_filter_functions | sort -u | head -500))
		fi
		;;
	add | check | trace)
		if [ "$sub" = trace ] && [ "$prev" = --filter ]; then
			return
		fi
		case $cur in
		-*)
			local opts="--help"
			[ "$sub" = add ] && opts+=" --dry-run --no-check"
			[ "$sub" = trace ] && opts+=" --filter --json --no-check --"
			COMPREPLY=($(compgen -W "$opts" -- "$cur"))
			;;
		*)
			# A function name starts a function event or perf's shorthand.
			if [ -r /sys/kernel/tracing/available_filter_functions ]; then
				COMPREPLY=($(awk -v p="$cur" 'index($1, p) == 1 { print $1 }' \
					/sys/kernel/tracing/available_filter_functions | sort -u | head -500))
			fi
			;;
		esac
		;;
	del)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--dry-run --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_dynprobe_events)" -- "$cur"))
		fi
		;;
	help)
		COMPREPLY=($(compgen -W "list add del show check trace" -- "$cur"))
		;;
	esac
}
complete -F _dynprobe dynprobe
