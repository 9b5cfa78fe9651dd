# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
# shellcheck disable=SC2034 # UW_BIN and UW_LIB are for the tests
# Sourced by the uprobe tests that probe the uprobe workload
# (selftests/uprobe/workload/README): a copy of it in the test's own
# directory, the file offsets of its symbols and SDT markers as readelf
# and nm give them, and the comparison of dynprobe's records with the
# kernel's.

# The workload, copied whole (the program finds its library beside it):
# the tests replace and delete their copies, never the build.
uw_built=${DYNPROBE_TOP:?}/build/uprobe-workload
if [ ! -x "$uw_built/uprobe_workload" ]; then
	echo "no uprobe workload in $uw_built: run make workload (or make module)"
	exit_fail
fi
UW_DIR=$TMPDIR/uw
mkdir -p "$UW_DIR"
cp "$uw_built/uprobe_workload" "$uw_built/libuprobe_workload.so" "$UW_DIR/"
UW_BIN=$UW_DIR/uprobe_workload
UW_LIB=$UW_DIR/libuprobe_workload.so

# The file offset of an address of FILE: through the loadable segment
# that holds it (readelf's program headers: type offset vaddr paddr
# filesz ...), as a uprobe line takes it.
uw_file_offset() { # file address
	# (The loop runs in a subshell: its exit status says it found one.)
	if readelf -lW "$1" | grep '^ *LOAD ' | while read -r _ off va _ sz _; do
		if [ $(($2 >= va && $2 < va + sz)) = 1 ]; then
			printf '0x%x\n' $(($2 - va + off))
			exit 1
		fi
	done; then
		return 1
	fi
}

# The file offset of a symbol of FILE (nm's address, through the above).
uw_sym() { # file symbol
	uw_file_offset "$1" "0x$(nm "$1" | awk -v s="$2" '$3 == s { print $1; exit }')"
}

# The symbol's address as nm gives it (a link-time address: what @+OFFS
# takes, the file mapped as the link laid it out).
uw_addr() { # file symbol
	printf '0x%s\n' "$(nm "$1" | awk -v s="$2" '$3 == s { print $1; exit }' | sed 's/^0*//')"
}

# An SDT marker of FILE (readelf -n): "LOCATION SEMAPHORE ARGUMENTS" as
# file offsets and the note's argument specs.
uw_sdt() { # file name
	readelf -nW "$1" | awk -v n="$2" '
		$1 == "Name:" { here = ($2 == n) }
		here && $1 == "Location:" { loc = $2; sem = $6; sub(",", "", loc) }
		here && $1 == "Arguments:" { $1 = ""; args = $0; print loc, sem, args; exit }' |
	while read -r loc sem args; do
		echo "$(uw_file_offset "$1" "$loc") $(uw_file_offset "$1" "$sem") $args"
	done
}

# Waits (up to 60 s) for N (default 1) lines matching PATTERN in FILE.
uw_wait_line() { # file pattern [n]
	n=0
	until [ "$(grep -c "$2" "$1" 2> /dev/null)" -ge "${3:-1}" ]; do
		n=$((n + 1))
		if [ $n -gt 600 ]; then
			echo "no ${3:-1} '$2' in $1:"
			cat "$1"
			exit_fail
		fi
		sleep 0.1
	done
}

# dynprobe's records of EVENT against the kernel's: the trace's lines of
# that event name (dynprobe's group and the kernel's use the same event
# names), as "TASK-PID EVENT-PART", each as often in one as in the
# other (an even number of times: the two records of a hit are the
# same); at least MIN hits.
uw_same_records() { # event min
	grep " $1: " trace | sed "s/^ *\([^ ]*\) .* $1: /\1 /" | sort > "$TMPDIR/recs.$1"
	if [ "$(wc -l < "$TMPDIR/recs.$1")" -lt $(($2 * 2)) ] ||
	   [ "$(uniq -c < "$TMPDIR/recs.$1" | awk '$1 % 2' | wc -l)" -ne 0 ]; then
		echo "records of $1, dynprobe's and the kernel's, not in pairs (at least $2):"
		uniq -c < "$TMPDIR/recs.$1" | head -40
		exit_fail
	fi
}
