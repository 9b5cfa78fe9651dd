# SPDX-License-Identifier: GPL-2.0
"""Kernel symbols and sampled call chains for the guest profiles
(bench/perf-top.py, bench/profile.py): perf in the guest cannot find
dynprobe.ko's symbols on disk, so the chains are resolved here against
copies of /proc/kallsyms."""
import bisect
import gzip
import re


class Symbols:
    """Text symbols of one or more /proc/kallsyms copies. Later files add
    to earlier ones: the ftrace and kprobe trampolines a contender makes
    appear in kallsyms only while it is enabled."""

    def __init__(self, *paths):
        table = {}
        for path in paths:
            for line in open(path):
                f = line.split()
                if len(f) >= 3 and f[1] in "tTwW" and not f[2].startswith("__pfx_"):
                    table[int(f[0], 16)] = f[2] + (" " + f[3] if len(f) > 3 else "")
        self.syms = sorted(table.items())
        self.addrs = [a for a, _ in self.syms]
        self.cache = {}

    def name(self, ip):
        if ip not in self.cache:
            self.cache[ip] = self._name(ip)
        return self.cache[ip]

    def _name(self, ip):
        i = bisect.bisect_right(self.addrs, ip) - 1
        if i < 0:
            return hex(ip)
        n = self.syms[i][1]
        # Rust v0 mangling: keep the last identifier or two.
        if n.startswith("_R"):
            parts = re.findall(r"\d+([A-Za-z_][A-Za-z0-9_]*)", n.split()[0])
            n = "::".join(p for p in parts[-2:] if not p.startswith("Cs")) + " [rust]"
        return n


def chains(path):
    """The call chains of `perf script -F ip` of a `perf record -g` run
    (plain or gzipped), leaf first, one list of addresses a sample."""
    opener = gzip.open if path.endswith(".gz") else open
    cur = []
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if not line:
                if cur:
                    yield cur
                cur = []
                continue
            try:
                cur.append(int(line.split()[0], 16))
            except ValueError:
                pass
    if cur:
        yield cur
