# Shared settings of the set-up scripts: where the caches live and how
# they are keyed. Sourced, never run.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the settings are for the scripts that source this

DYNPROBE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$DYNPROBE_TOP/tools/setup/release-names.sh"
DYNPROBE_CACHE=${DYNPROBE_CACHE:-/var/cache/dynprobe}

# The kernel we build against: Debian's linux-source-7.2 package.
KERNEL_PKG=linux-source-7.2
KERNEL_SUITE=forky

# Roots are keyed by their package list and the script that makes them,
# so changing either makes a new root beside the old one.
root_key() { # package-list
	cat "$DYNPROBE_TOP/tools/setup/$1" "$DYNPROBE_TOP/tools/setup/root" |
		sha256sum | cut -c1-12
}
# The trixie root: build environment of the lockdep test kernel (rustc
# 1.85, the oldest a supported kernel uses) and the guests' root filesystem.
ROOT_DIR=$DYNPROBE_CACHE/root-trixie-$(root_key root-packages.txt)

# Debian's stock kernels, the ones users run (tools/setup/stock-kernels.txt),
# and a forky root set up like such a user's machine: the kernels'
# headers, source and toolchain as Debian packages, and dkms
# (tools/setup/root --stock, tools/setup/stock). Kernels from newer
# suites (sid, experimental) have their headers installed on top, as a
# user who upgrades gets them.
STOCK_SUITE=forky
STOCK_ROOT_DIR=$DYNPROBE_CACHE/root-$STOCK_SUITE-$(root_key stock-root-packages.txt)
# The stock kernel a command works with: DYNPROBE_STOCK_RELEASE, else
# the first kernel of the list that gets the full tests (the newest
# generic kernel of the oldest series).
STOCK_RELEASE=${DYNPROBE_STOCK_RELEASE:-$("$DYNPROBE_TOP/tools/setup/stock-kernels" --lane full --field 1 | sed -n 1p)}
# Its image, modules, seal list and guest initramfs.
STOCK_DIR=$DYNPROBE_CACHE/stock-$STOCK_RELEASE
# Its Rust build tree in the stock root (tools/setup/kbuild-rust, where a
# user's would be), and beside it the kernel's unpacked source.
STOCK_KBUILD=/var/lib/dynprobe/kbuild/$STOCK_RELEASE

# Kernel log lines that fail a guest run, whatever its command returned.
KERNEL_REPORTS='Oops|BUG:|WARNING:|INFO: (possible|inconsistent|task .* blocked)|KASAN|UBSAN|Kernel panic|general protection|Call Trace'

# The guests' ACPI setting. ACPI's PCI interrupt routing runs AML, which
# TCG interprets slowly: it took 6.5 of the default kernel's 12 s of
# boot, and on the debug kernel its loops time out (AE_AML_LOOP_TIMEOUT)
# and boot stalls. acpi=noirq routes interrupts by the BIOS's table
# instead and keeps ACPI's CPU list (with acpi=off SeaBIOS's MP table
# lists one CPU, and the guest has one).
GUEST_ACPI=acpi=noirq

# User programs at the same addresses in every process. QEMU 7.2's TCG
# finds a translated block by its virtual address, so with randomised
# maps each exec translated ld.so, libc and the program anew: 44 ms for
# an exec of /bin/true, against 17 ms with norandmaps. The tests fork
# and exec thousands of times and test nothing in user space.
GUEST_NORANDMAPS=norandmaps

# A kernel log ring buffer that holds a whole run's messages (the
# default 128 KiB of the test kernels held a few minutes of a stress
# run); tools/guest/init also copies the log as it is written.
GUEST_LOG_BUF=log_buf_len=16M

# A new directory for one guest run (runs may overlap), in $run:
# build/guest-runs/DATE-XXXX; build/guest points to the latest and the
# last few are kept.
new_run_dir() {
	local runs=$DYNPROBE_TOP/build/guest-runs
	mkdir -p "$runs"
	run=$(mktemp -d "$runs/$(date +%Y%m%d-%H%M%S)-XXXX")
	[ -L "$DYNPROBE_TOP/build/guest" ] || rm -rf "$DYNPROBE_TOP/build/guest"
	ln -sfn "$run" "$DYNPROBE_TOP/build/guest"
	# Keeps the newest six finished runs (a finished run has its status).
	# A run still going has none and is left alone: guests run side by
	# side for minutes. Runs that never finished go after a day. (Another
	# run may be pruning at the same time.)
	{ ls -1d "$runs"/*/status 2>/dev/null || true; } | head -n -6 | xargs -r dirname | xargs -r rm -rf
	find "$runs" -mindepth 1 -maxdepth 1 -mtime +1 -exec rm -rf {} + 2>/dev/null || true
}

# Copies the project's files as they are in the work tree (tracked or new,
# never build products or ignored files) into DEST, with their times.
#   copy_project DEST [PATH...]   (PATHs limit the copy, as for git)
copy_project() {
	local dest=$1 list
	shift
	list=$(mktemp)
	(cd "$DYNPROBE_TOP" && git ls-files -z --cached --others --exclude-standard -- "$@") >"$list"
	(cd "$DYNPROBE_TOP" && tar --null -T "$list" -cf - --ignore-failed-read 2>/dev/null) |
		tar -C "$dest" -xf -
	# A file the checkout no longer has must not stay beside the build
	# products (Rust would find both fetch.rs and fetch/mod.rs): what the
	# last copy brought and this one does not is removed.
	if [ -f "$dest/.dynprobe-copied" ]; then
		LC_ALL=C comm -z -23 <(LC_ALL=C sort -z "$dest/.dynprobe-copied") \
			<(LC_ALL=C sort -z "$list") | (cd "$dest" && xargs -0 -r rm -f --)
	fi
	cp "$list" "$dest/.dynprobe-copied"
	rm -f "$list"
}

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

# The project and the cache may live at any absolute path, but not one
# with white space, quotes or backslashes: Kbuild cannot build in such a
# directory, and the guest learns the paths from the kernel command line.
check_path() { # what path
	case "$2" in
	/*) ;;
	*) die "$1 must be an absolute path: $2" ;;
	esac
	case "$2" in
	*[[:space:]\\\"\']*) die "$1 path has white space, a quote or a backslash, which Kbuild and the guest cannot take: '$2'; use another directory" ;;
	esac
	return 0
}
check_path project "$DYNPROBE_TOP"
check_path cache "$DYNPROBE_CACHE"

# The number for "# of WHAT:" in ftracetest's summaries in LOG, summed
# over all of them; 0 when there is none.
#   ftracetest_count WHAT LOG
ftracetest_count() {
	local sum
	sum=$(guest_last_run "$2" | sed -n "s/^# of $1:[[:space:]]*\([0-9]\+\).*/\1/p" | paste -sd+ | bc)
	echo "${sum:-0}"
}

# LOG from its last "[guest] retry:" line on (tools/guest/run runs a guest
# again when its boot went wrong; what came before does not count).
guest_last_run() {
	awk '/^\[guest\] retry: / { n = 0; next } { line[n++] = $0 }
		END { for (i = 0; i < n; i++) print line[i] }' "$1"
}

# The one reading of an ftracetest LOG (a guest's output or ftracetest's
# own log), summed over every summary in it, into ftracetest_passed,
# ftracetest_failed and ftracetest_skipped. Failed: failed, untested and
# undefined (test bug) tests, and one more when LOG has no summary (the
# suite never finished, whatever else it said). Skipped: xfailed tests.
# Unsupported and unresolved tests are failed or skipped as UNSUPPORTED_IS
# says: dynprobe's own suite fails them (an unsupported test would hide a
# missing file); the kernel's suites skip them (unsupported: tests for
# other event types, eprobe, synthetic, tracepoint probes, or features
# this kernel lacks; unresolved: a precondition it lacks, such as the
# .isra. function kprobe_eventname.tc needs, of which a Clang-built
# kernel has none).
#   ftracetest_tally LOG failed|skipped
ftracetest_tally() {
	local log=$1 unsupported_is=$2 not_run no_summary=0
	# grep -c reads to the end: grep -q would stop at the first summary
	# and, under pipefail, a long log's reader killed by SIGPIPE would
	# fail the pipeline as if there were none.
	if [ "$(guest_last_run "$log" | grep -c '^# of passed:')" = 0 ]; then
		echo "FAILED: no ftracetest summary in $log"
		no_summary=1
	fi
	ftracetest_passed=$(ftracetest_count passed "$log")
	ftracetest_failed=$((no_summary + $(ftracetest_count failed "$log") +
		$(ftracetest_count untested "$log") +
		$(ftracetest_count 'undefined(test bug)' "$log")))
	ftracetest_skipped=$(ftracetest_count xfailed "$log")
	not_run=$(($(ftracetest_count unsupported "$log") + $(ftracetest_count unresolved "$log")))
	case "$unsupported_is" in
	failed) ftracetest_failed=$((ftracetest_failed + not_run)) ;;
	skipped) ftracetest_skipped=$((ftracetest_skipped + not_run)) ;;
	*) die "ftracetest_tally: unsupported tests are failed or skipped, not '$unsupported_is'" ;;
	esac
}

# Filter for ftracetest's output: each result line ("[N] ... [PASS]") gets
# the seconds its test took, so a slow check shows which test to look at.
time_results() {
	local start=$SECONDS line
	while IFS= read -r line; do
		if [[ $line == \[[0-9]*\]* ]]; then
			printf '%s (%d s)\n' "$line" $((SECONDS - start))
			start=$SECONDS
		else
			printf '%s\n' "$line"
		fi
	done
}

# Set-up steps fill a cache that every clone and worktree on the machine
# shares: one run of a step at a time; a second waits, then finds the
# work done and leaves it alone.
setup_lock() { # step name
	mkdir -p "$DYNPROBE_CACHE/locks"
	exec 9>"$DYNPROBE_CACHE/locks/$1.lock"
	flock 9
}
