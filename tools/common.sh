# Shared settings of the set-up scripts: where the caches live and how
# they are keyed. Sourced, never run.

DYNPROBE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DYNPROBE_CACHE=${DYNPROBE_CACHE:-/var/cache/dynprobe}

# The kernel we build against: Debian's linux-source-7.2 package.
KERNEL_PKG=linux-source-7.2
KERNEL_SUITE=forky

# The root is keyed by its package list, so changing the list rebuilds it.
root_key() {
	cat "$DYNPROBE_TOP/tools/root-packages.txt" "$DYNPROBE_TOP/tools/setup-root" |
		sha256sum | cut -c1-12
}
ROOT_DIR=$DYNPROBE_CACHE/root-trixie-$(root_key)

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

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
