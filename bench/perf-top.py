#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Self and inclusive share of samples per kernel function from
`perf script -F ip` of a `perf record -g` run, resolved against a copy of
/proc/kallsyms (perf in the guest cannot find dynprobe.ko's symbols on
disk). tools/bench/run --profile does this for every contender
(bench/profile.py). Usage: bench/perf-top.py KALLSYMS SCRIPT [TOP]"""
import collections
import os
import sys

# tools/lib of the project this file is in, wherever the project is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "lib"))
from kallsyms import Symbols, chains  # noqa: E402

syms = Symbols(sys.argv[1])
top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
self_c, incl_c = collections.Counter(), collections.Counter()
total = 0
for chain in chains(sys.argv[2]):
    names = [syms.name(ip) for ip in chain]
    self_c[names[0]] += 1
    for n in dict.fromkeys(names):
        incl_c[n] += 1
    total += 1


def most_common(counter, n):
    """The n largest counts, ties by name: the same order on every run
    (Counter.most_common keeps the order counts were first seen in)."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


print(f"{total} samples")
total = total or 1
print("self%   function")
for n, c in most_common(self_c, top):
    print(f"{100 * c / total:5.1f}   {n}")
print("incl%   function")
for n, c in most_common(incl_c, top + 10):
    print(f"{100 * c / total:5.1f}   {n}")
