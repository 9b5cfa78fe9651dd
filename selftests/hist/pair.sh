# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
# The hist tests' pair of events (sourced by selftests/hist/*.tc): the
# same events on filename_mkdirat() in the kernel's dynamic_events (group
# hk) and in dynprobe's (group hd), the same triggers on both, one
# workload (mkdirs.py) both see, and the hist files compared byte for
# byte once what necessarily differs is made equal: the group and
# synthetic event names, and in a stacktrace key the frames of each
# side's probe handler (hp_norm()).
#   mk:  function entry (fprobe / dynprobe's f event): dfd, name, mode
#   kmk: the same as a kprobe event
#   mkx: function exit: ret
HP_DIR=$TMPDIR/hist-mkdirs
HP_LIST=$TMPDIR/hist-triggers

hp_clear() {
	echo 0 > events/enable
	# The triggers hp_trigger wrote, last first (an action refers to
	# another trigger's variables), by the text they were written with.
	if [ -e "$HP_LIST" ]; then
		tac "$HP_LIST" | while IFS='	' read -r f t; do
			[ ! -e "$f" ] || echo "!$t" >> "$f" || :
		done
		rm -f "$HP_LIST"
	fi
	# Any other, by the text its trigger file shows.
	for i in . instances/*; do
		[ -d "$i/events" ] || continue
		for e in hk/mkx hk/kmk hk/mk hd/mkx hd/kmk hd/mk; do
			[ -d "$i/events/$e" ] || continue
			echo 0 > "$i/events/$e/filter"
			tac "$i/events/$e/trigger" | grep -v '^#' | while read -r t; do
				echo "!${t% \[*\]}" >> "$i/events/$e/trigger" || :
			done
		done
	done
	# Each event by name (a truncating write would also take the
	# synthetic events, and fail while one is in use). Removed triggers
	# are freed by a kthread (trigger_data_free), and until then an
	# enable_hist trigger holds its event.
	for e in mk kmk mkx; do
		[ ! -d events/hk/$e ] || hp_retry sh -c "echo -:hk/$e >> dynamic_events"
		[ ! -d events/hd/$e ] || hp_retry sh -c "echo -:hd/$e >> dynprobe/dynamic_events"
	done
	echo > trace
}

hp_retry() { # COMMAND...: until it succeeds, for 10 s at most
	for _ in $(seq 100); do
		"$@" 2> /dev/null && return 0
		sleep 0.1
	done
	"$@"
}

hp_define() {
	hp_clear
	for side in "dynamic_events hk" "dynprobe/dynamic_events hd"; do
		set -- $side
		cat >> "$1" <<HPEOF
f:$2/mk filename_mkdirat dfd=\$arg1:s32 name=+0(\$arg2):string mode=\$arg3:u16
p:$2/kmk filename_mkdirat dfd=%di:s32 name=+0(%si):string mode=%dx:u16
f:$2/mkx filename_mkdirat%return ret=\$retval:s32
HPEOF
	done
}

# hp_trigger EVENT TRIGGER [INSTANCE]: TRIGGER on the event of each side,
# in the top instance or in instances/INSTANCE-k and -d; %G% in TRIGGER
# is the side's group, %S% its synthetic event's suffix.
hp_trigger() {
	for g in hk hd; do
		s=${g#h}
		d=.
		[ -z "${3:-}" ] || d=instances/$3-$s
		t=$(echo "$2" | sed -e "s/%G%/$g/g" -e "s/%S%/$s/g")
		echo "$t" >> "$d/events/$g/$1/trigger"
		printf '%s\t%s\n' "$d/events/$g/$1/trigger" "$t" >> "$HP_LIST"
	done
}

hp_run() {
	rm -rf "$HP_DIR"
	python3 "${DYNPROBE_TOP:?}/selftests/hist/mkdirs.py" "$HP_DIR"
	rm -rf "$HP_DIR"
}

# The hist file of a side, with the names each side has made equal, and
# in a stacktrace key (common_stacktrace on newer kernels) only the frames
# of the syscall's path to the probed function, once each: the frames
# above it are each side's probe handler, and the unwinder walks through
# the ftrace trampolines' frames (the probed function's among them) in
# ways of their own.
hp_norm() { # FILE
	sed -E -e 's/\bh[kd]([.:/])/hX\1/g' -e 's/\bsyn_[kd]\b/syn_X/g' "$1" |
		awk '/^\{ (common_)?stacktrace:/ { print; stack = 1; last = ""; next }
			stack && /^\}/ { stack = 0 }
			stack && !/^ +(__x64_sys_mkdir|__x64_sys_mkdirat|x64_sys_call|do_syscall_64|entry_SYSCALL_64_after_hwframe)\+/ { next }
			stack && $0 == last { next }
			stack { last = $0 }
			{ print }'
}

# hp_compare EVENT [INSTANCE]: the two sides' hist of EVENT equal, and
# not empty.
hp_compare() {
	k=events/hk/$1/hist
	d=events/hd/$1/hist
	if [ -n "${2:-}" ]; then
		k=instances/$2-k/$k
		d=instances/$2-d/$d
	fi
	hp_norm "$k" > "$TMPDIR/hist-k"
	hp_norm "$d" > "$TMPDIR/hist-d"
	if ! cmp -s "$TMPDIR/hist-k" "$TMPDIR/hist-d"; then
		echo "hist of $1 differs (kernel -, dynprobe +):"
		diff -u "$TMPDIR/hist-k" "$TMPDIR/hist-d" || :
		return 1
	fi
	grep -q '^    Hits: [1-9]' "$TMPDIR/hist-d"
}
