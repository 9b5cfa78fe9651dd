#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Self and inclusive time per kernel function from `perf script -F ip` of
a `perf record -g` run, resolved against a copy of /proc/kallsyms (perf in
the guest cannot find dynprobe.ko's symbols on disk).
Usage: bench/perf-top.py KALLSYMS SCRIPT [TOP]"""
import bisect
import collections
import re
import sys

syms = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2] + (" " + f[3] if len(f) > 3 else "")))
syms.sort()
addrs = [a for a, _ in syms]


def name(ip):
    i = bisect.bisect_right(addrs, ip) - 1
    if i < 0:
        return hex(ip)
    n = syms[i][1]
    # Rust v0 mangling: keep the last identifier or two.
    if n.startswith("_R"):
        parts = re.findall(r"\d+([A-Za-z_][A-Za-z0-9_]*)", n.split()[0])
        n = "::".join(p for p in parts[-2:] if not p.startswith("Cs")) + " [rust]"
    return n


samples = []
cur = []
for line in open(sys.argv[2]):
    line = line.strip()
    if not line:
        if cur:
            samples.append(cur)
        cur = []
        continue
    try:
        cur.append(int(line.split()[0], 16))
    except ValueError:
        pass
if cur:
    samples.append(cur)

top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
self_c, incl_c = collections.Counter(), collections.Counter()
for s in samples:
    names = [name(ip) for ip in s]
    self_c[names[0]] += 1
    for n in set(names):
        incl_c[n] += 1
total = len(samples) or 1
print(f"{len(samples)} samples")
print("self%   function")
for n, c in self_c.most_common(top):
    print(f"{100 * c / total:5.1f}   {n}")
print("incl%   function")
for n, c in incl_c.most_common(top + 10):
    print(f"{100 * c / total:5.1f}   {n}")
