# SPDX-License-Identifier: GPL-2.0
# Sourced by selftests/neighbours/order_*.tc (dash, set -e, cwd tracefs).
# shellcheck shell=dash
# shellcheck disable=SC2034 # sample and the *_OPS lists are for the tests
#
# One holder of a dynprobe event (the kernel's event probe, hist triggers,
# perf, the in-kernel API, an enable) against each destructive operation
# (rmmod, a clear of each control file, -:GRP/EVENT, -:GRP/), in each
# order relative to the hold: the operation before the hold is taken,
# while it is held, after it is released. A test sets HOLDER and calls
# every_order with the operations and the events they are tried on.
#
# While the event is held the operation must be refused (EBUSY; rmmod
# "in use") and change nothing that lists (definitions, event ids,
# filters, triggers); once the hold is released it must succeed; in the
# other orders it succeeds. After each round nothing may be left.

ko=${DYNPROBE_KO:?path of dynprobe.ko}
sample=$(dirname "$ko")/samples/c/dynprobe_sample.ko

# The definitions each round starts from: a group dg with a probe before
# the held ones (a removal must not take it and then fail), the held
# fprobe event dg/ev (the kernel's event probes refuse kprobe events as
# sources) and kprobe event dg/kp (what kprobe_events clears), a function
# event, and two synthetic events, the free one first (a refused clear
# must not delete it and make it again: its filter and id would change).
# With "dep", dynprobe's own event probe on dg/ev, in the same group:
# removals that take both must remove it first.
setup() { # [dep]
	echo 'p:dg/first vfs_open' >> dynprobe/dynamic_events
	echo 'f:dg/ev vfs_read' >> dynprobe/dynamic_events
	echo 'p:dg/kp vfs_read' >> dynprobe/dynamic_events
	if [ "${1:-}" = dep ]; then
		echo 'e:dg/dep dg.ev' >> dynprobe/dynamic_events
	fi
	echo 'vfs_write(x64 file)' >> dynprobe/function_events
	echo 's:synthetic/dfree u64 x' >> dynprobe/dynamic_events
	echo 's:synthetic/dsyn u64 lat' >> dynprobe/dynamic_events
	echo 'common_pid != 1' > events/dg/ev/filter
	echo 'common_pid != 1' > events/dg/kp/filter
	echo 'common_pid != 1' > events/functions/vfs_write/filter
	echo 'x > 1' > events/synthetic/dfree/filter
	echo 'lat > 1' > events/synthetic/dsyn/filter
}

# Everything a refused operation must leave as it was (one grep: each
# command run costs a TCG guest tens of milliseconds).
state() {
	grep -s -H '' dynprobe/dynamic_events dynprobe/kprobe_events \
		dynprobe/function_events dynprobe/synthetic_events /proc/modules \
		events/dg/*/id events/dg/*/filter events/dg/*/trigger \
		events/functions/vfs_write/id events/functions/vfs_write/filter \
		events/functions/vfs_write/trigger events/synthetic/*/id \
		events/synthetic/*/filter events/synthetic/*/trigger || :
}

# Runs operation $1; its status, and its messages in $out.
do_op() { # op
	case $1 in
	rmmod) out=$(rmmod dynprobe 2>&1) ;;
	clear_dyn) out=$( (: > dynprobe/dynamic_events) 2>&1) ;;
	clear_kprobe) out=$( (: > dynprobe/kprobe_events) 2>&1) ;;
	clear_function) out=$( (: > dynprobe/function_events) 2>&1) ;;
	clear_synth) out=$( (: > dynprobe/synthetic_events) 2>&1) ;;
	rm_event) out=$(/bin/echo '-:dg/ev' 2>&1 >> dynprobe/dynamic_events) ;;
	rm_group) out=$(/bin/echo '-:dg/' 2>&1 >> dynprobe/dynamic_events) ;;
	rm_synth) out=$(/bin/echo '-:synthetic/dsyn' 2>&1 >> dynprobe/dynamic_events) ;;
	*) echo "no operation $1"; exit_fail ;;
	esac
}

# The refusal a hold must cause: EBUSY, or for rmmod the module in use.
busy_refusal() { # op
	case $1:$out in
	rmmod:*"in use"*) return 0 ;;
	rmmod:*) return 1 ;;
	*"resource busy"*) return 0 ;;
	esac
	return 1
}

refused() { # op
	if do_op "$1"; then
		echo "$1 accepted while $T is held ($HOLDER)"
		exit_fail
	fi
	if ! busy_refusal "$1"; then
		echo "$1 refused with: $out"
		exit_fail
	fi
}

# The operation succeeds, and did what it says. A released hold may be
# dropped a little later (the tracing core frees removed triggers from a
# worker after the tracepoint grace periods): EBUSY meanwhile is retried.
retried() { # op
	n=0
	while ! do_op "$1"; do
		if ! busy_refusal "$1"; then
			echo "$1 failed: $out"
			exit_fail
		fi
		n=$((n + 1))
		if [ $n -ge 150 ]; then
			echo "$1 still refused after the hold's release ($HOLDER on $T): $out"
			exit_fail
		fi
		sleep 0.1
	done
}

accepted() { # op
	retried "$1"
	test ! -d "events/$T"
	case $1 in
	rmmod)
		if grep -q '^dynprobe ' /proc/modules; then exit_fail; fi
		test ! -d events/dg
		insmod "$ko"
		;;
	clear_dyn)
		test -z "$(cat dynprobe/dynamic_events)"
		test ! -d events/dg
		test ! -d events/synthetic/dsyn
		;;
	clear_kprobe)
		test -z "$(cat dynprobe/kprobe_events)"
		test ! -d events/dg/first
		test -d events/dg/ev
		test -d events/synthetic/dsyn
		;;
	clear_function)
		test -z "$(cat dynprobe/function_events)"
		test -d events/dg/ev
		;;
	clear_synth)
		test -z "$(cat dynprobe/synthetic_events)"
		test ! -d events/synthetic/dfree
		test -d events/dg/ev
		;;
	rm_event)
		test -d events/dg/first
		test -d events/dg/kp
		;;
	rm_group) test ! -d events/dg ;;
	rm_synth) test -d events/synthetic/dfree ;;
	esac
}

# After each round: the module loaded, none of its definitions left, and
# nothing in the kernel's dynamic_events but what the test made there.
cleanup() {
	if ! grep -q '^dynprobe ' /proc/modules; then
		insmod "$ko"
	fi
	retried clear_dyn
	retried clear_function
	test -z "$(cat dynprobe/synthetic_events)"
	test -z "$(grep -v '^s:synthetic/ksyn[[:space:]]' dynamic_events || :)"
}

# Runs every pair OP:EVENT in the three orders. $HOLDER names take_X and
# release_X; take_X holds event $T (GROUP/EVENT) or fails.
every_order() { # OP:EVENT...
	for pair in "$@"; do
		op=${pair%%:*}
		T=${pair#*:}
		dep=
		case $op in rmmod | clear_dyn | rm_group) dep=dep ;; esac
		for order in before held after; do
			start=$(date +%s%N)
			setup $dep
			case $order in
			before)
				accepted "$op"
				# The event is gone: a hold on it is refused (the
				# sample's makes its own event again: it holds that).
				if take_$HOLDER; then
					if [ "$HOLDER" != api ]; then
						echo "$HOLDER took $T after $op"
						exit_fail
					fi
					release_$HOLDER
				fi
				;;
			held)
				take_$HOLDER
				before=$(state)
				refused "$op"
				after=$(state)
				if [ "$before" != "$after" ]; then
					echo "refused $op changed:"
					echo "$before" > "$TMPDIR/before"
					echo "$after" > "$TMPDIR/after"
					diff "$TMPDIR/before" "$TMPDIR/after" || :
					exit_fail
				fi
				release_$HOLDER
				accepted "$op"
				;;
			after)
				take_$HOLDER
				release_$HOLDER
				accepted "$op"
				;;
			esac
			cleanup
			echo "$HOLDER, $op on $T, $order: $((($(date +%s%N) - start) / 1000000)) ms"
		done
	done
}

# At the end: nothing of the rounds left (the test removes what it made
# in the kernel's files first); the module unloads.
finish() {
	test -z "$(cat dynamic_events)"
	rmmod dynprobe
	for e in dg functions/vfs_write synthetic/dfree synthetic/dsyn \
		synthetic/dynprobe_sample_c; do
		test ! -d events/$e
	done
	insmod "$ko"
}

# The operations on each event that they remove, as every_order takes
# them: the probe events dg/ev and dg/kp, the function event, the
# synthetic event.
PROBE_OPS='rmmod:dg/ev clear_dyn:dg/ev rm_event:dg/ev rm_group:dg/ev'
KPROBE_OPS='clear_kprobe:dg/kp'
FUNCTION_OPS='clear_function:functions/vfs_write'
SYNTH_OPS='clear_synth:synthetic/dsyn clear_dyn:synthetic/dsyn rm_synth:synthetic/dsyn'
