#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a hit's instructions go, per function, for each pair of
contenders behind a target (tools/bench/run --profile), and where an event's
slab memory goes, per slab cache and (bench/alloc_sites.py) allocation by
allocation. Writes OUTDIR/profile-PAIR.md, OUTDIR/profile-memory.md and
OUTDIR/profile-allocations.md and prints them.

A contender's samples are those taken in the hook: below the target
(dpbench_target) or, for return probes, below the loop that called it
(ctl_write in dpbench) in the call chain, leaving out the loop and the
target themselves, which run with no probe too. With the instruction
clock each sample stands for the same number of instructions, so a
function's instructions per hit are its share of the hook's samples
times the contender's overhead, measured without perf just before.
Self: samples whose leaf is the function. Inclusive: samples with the
function anywhere in the hook's part of the chain.
Usage: bench/profile.py OUTDIR"""
import collections
import csv
import glob
import math
import os
import sys

# tools/lib of the project this file is in, wherever the project is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "lib"))
from contenders import LABEL  # noqa: E402
from kallsyms import Symbols, chains  # noqa: E402
from alloc_sites import alloc_report  # noqa: E402

LOOP = "ctl_write [dpbench]"
# The targets: a function of the bench module, one of the kernel image,
# and the system call bench/sysloop.c makes (its probes sit on
# __do_sys_getppid, whose caller is the first frame the unwinder gives
# from a probe's handler).
TARGETS = ("dpbench_target [dpbench]", "mktime64", "__x64_sys_getppid")
TOP = 15

# file name, what is compared, reference contender, dynprobe's, target
PAIRS = [
    ("kprobe", "kprobe event, 3 register args: dynprobe / kernel",
     "k_kprobe", "d_kprobe", 0.6),
    ("kprobe-string", "kprobe event + string: dynprobe / kernel",
     "k_kprobe_str", "d_kprobe_str", 0.35),
    ("function-entry-vmlinux", "vmlinux target: function event / kernel fprobe entry event",
     "k_vfentry", "d_vfunc", 0.5),
    ("function-entry", "module target: function event / kernel fprobe entry event",
     "k_fentry", "d_func", None),
    ("function-exit", "function exit event / kernel fprobe %return event",
     "k_fexit", "d_func_exit", 0.7),
    ("limit-kprobe", "limit: dynprobe kprobe event / bare kprobe + raw write",
     "hook_kprobe_rb", "d_kprobe", 1.15),
    ("limit-function-vmlinux", "limit, vmlinux target: function event / bare ftrace_ops + raw write",
     "hook_vftrace_rb", "d_vfunc", 1.25),
    ("limit-function", "limit, module target: function event / bare ftrace_ops + raw write",
     "hook_ftrace_rb", "d_func", None),
    ("limit-f-entry", "limit, module target: dynprobe `f` entry / bare ftrace_ops + raw write",
     "hook_ftrace_rb", "d_fentry", None),
    ("f-exit", "dynprobe `f` %return / kernel fprobe %return event",
     "k_fexit", "d_fexit", None),
    ("hist", "getppid: hist keys=common_pid, dynprobe function event / kernel fprobe event",
     "k_ghist", "d_ghist", 0.4),
    ("hist-bpftrace", "getppid: hist keys=common_pid on the function event / bpftrace fentry @c[pid] = count()",
     "bt_fentry_count", "d_ghist", 1.5),
]


class Profile:
    """One contender: instructions per call with and without it, and its
    samples in the loop counted per function, self and inclusive."""

    def __init__(self, out, contender, timing, base_syms):
        pd = os.path.join(out, "profile")
        syms = Symbols(base_syms, os.path.join(pd, contender + ".modsyms"))
        self.base, self.probe = timing[contender]
        self.overhead = self.probe - self.base
        self.self_c, self.incl_c = collections.Counter(), collections.Counter()
        self.samples = self.loop = self.outside = 0
        for chain in chains(os.path.join(pd, contender + ".ips.gz")):
            names = [syms.name(ip) for ip in chain]
            cut = [i for i, n in enumerate(names) if n == LOOP or n in TARGETS]
            if not cut:
                self.outside += 1
                continue
            hook = names[:cut[0]]
            if not hook:
                self.loop += 1
                continue
            self.samples += 1
            self.self_c[hook[0]] += 1
            for n in set(hook):
                self.incl_c[n] += 1

    def per_hit(self, count):
        return count * self.overhead / self.samples if self.samples else float("nan")

    def top(self, counter):
        return [(n, self.per_hit(c)) for n, c in counter.most_common(TOP)]


def side_by_side(a_name, a_rows, b_name, b_rows):
    lines = [f"| # | {a_name} | instr/hit | {b_name} | instr/hit |",
             "| ---: | --- | ---: | --- | ---: |"]
    for i in range(max(len(a_rows), len(b_rows))):
        cells = []
        for rows in (a_rows, b_rows):
            cells += [f"`{rows[i][0]}`", f"{rows[i][1]:.0f}"] if i < len(rows) else ["", ""]
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    return lines


def difference(a, b):
    """Self instructions per hit of every function on either side, the
    largest differences first."""
    rows = []
    for n in set(a.self_c) | set(b.self_c):
        x, y = a.per_hit(a.self_c[n]), b.per_hit(b.self_c[n])
        rows.append((n, x, y, y - x))
    rows.sort(key=lambda r: -abs(r[3]))
    lines = ["| function (self) | reference | dynprobe side | difference |",
             "| --- | ---: | ---: | ---: |"]
    for n, x, y, d in rows[:TOP]:
        lines.append(f"| `{n}` | {x:.0f} | {y:.0f} | {d:+.0f} |")
    rest = sum(r[3] for r in rows[TOP:])
    lines.append(f"| (all others) | | | {rest:+.0f} |")
    lines.append(f"| overhead per hit | {a.overhead:.0f} | {b.overhead:.0f} | {b.overhead - a.overhead:+.0f} |")
    return lines


def pair_report(out, key, what, ref, dyn, target, profiles, period, calls):
    a, b = profiles[ref], profiles[dyn]
    ratio = b.overhead / a.overhead
    verdict = "" if target is None else f", target ≤ {target}: {'met' if ratio <= target else 'not met'}"
    # One standard error of the instructions of a function with a tenth
    # of the samples.
    err = max(math.sqrt(0.1 * 0.9 / p.samples) * p.overhead for p in (a, b))
    lines = [
        f"# Where the cost goes: {what}", "",
        f"Overhead measured without perf, instructions per hit: {LABEL[ref]} "
        f"{a.overhead:.0f}, {LABEL[dyn]} {b.overhead:.0f}: ratio {ratio:.2f}{verdict}.",
        "",
        f"Profile: `perf record -g -e cpu-clock -c {period}` (a sample every {period} "
        f"instructions) over {calls} calls of the target, with pseudo-random pauses "
        f"between the calls; {a.samples} and {b.samples} samples in the hook "
        f"({a.loop} and {b.loop} in the loop and the target themselves, {a.outside} and "
        f"{b.outside} elsewhere, left out). A function's instructions per hit = its "
        f"share of the hook's samples × the overhead; a function with a tenth of the "
        f"samples is known to ±{err:.0f} (one standard error).", "",
        "## Self", ""]
    lines += side_by_side(LABEL[ref], a.top(a.self_c), LABEL[dyn], b.top(b.self_c))
    lines += ["", "## Inclusive (below the target: the hook and everything it calls)", ""]
    lines += side_by_side(LABEL[ref], a.top(a.incl_c), LABEL[dyn], b.top(b.incl_c))
    lines += ["", "## Difference, self", ""]
    lines += difference(a, b)
    path = os.path.join(out, f"profile-{key}.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def slabinfo(path):
    caches = {}
    for line in open(path):
        f = line.split()
        if len(f) > 4 and not line.startswith(("slabinfo", "#")):
            caches[f[0]] = (int(f[1]), int(f[3]))  # active objects, object size
    return caches


def memory_report(out):
    """Growth of each slab cache's objects in use per defined and enabled
    event, from the memory phase's /proc/slabinfo snapshots."""
    events, growth = {}, {}
    try:
        for r in csv.DictReader(open(os.path.join(out, "memory.csv"))):
            events[(r["side"], r["kind"])] = int(r["events"])
    except OSError:
        return None
    for side, kind in events:
        base = os.path.join(out, "slabinfo", f"{side}-{kind}")
        if not os.path.exists(base + "-after"):
            return None
        before, after = slabinfo(base + "-before"), slabinfo(base + "-after")
        n = events[(side, kind)]
        growth[(side, kind)] = {
            c: ((after[c][0] - before.get(c, (0, 0))[0]) / n, size)
            for c, (_, size) in after.items()}
    lines = ["# Where the memory goes: slab objects in use per defined and enabled event", "",
             "From the memory phase's `/proc/slabinfo` before and after defining and "
             "enabling the events (tools/bench/guest), per event: objects and their bytes "
             "(objects × object size), caches that moved by at least 8 bytes and a "
             "twentieth of an object an event. "
             "Caches with the same object size and flags may be merged into one, which "
             "slabinfo names after one of them.", ""]
    for kind in ("function", "kprobe"):
        d, k = growth.get(("dynprobe", kind)), growth.get(("kernel", kind))
        if not d or not k:
            continue
        lines += [f"## {kind} events ({events[('dynprobe', kind)]} on each side)", "",
                  "| slab cache | object B | dynprobe objects | dynprobe B | kernel objects | kernel B | difference B |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        rows = []
        for c in set(d) | set(k):
            size = (d.get(c) or k.get(c))[1]
            do, ko = d.get(c, (0, size))[0], k.get(c, (0, size))[0]
            # (A few objects of a cache that moved by chance, in 1000
            # events, are no part of an event.)
            if max(abs(do), abs(ko)) * size >= 8 and max(abs(do), abs(ko)) >= 0.05:
                rows.append((c, size, do, ko))
        rows.sort(key=lambda r: -max(abs(r[2]), abs(r[3])) * r[1])
        for c, size, do, ko in rows:
            lines.append(f"| {c} | {size} | {do:.2f} | {do * size:.0f} | {ko:.2f} | {ko * size:.0f} | {(do - ko) * size:+.0f} |")
        td = sum(o * s for o, s in d.values())
        tk = sum(o * s for o, s in k.values())
        lines += [f"| all caches | | | {td:.0f} | | {tk:.0f} | {td - tk:+.0f} |", ""]
    path = os.path.join(out, "profile-memory.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main():
    out = sys.argv[1]
    timing = {}
    for r in csv.DictReader(open(os.path.join(out, "raw.csv"))):
        if r["phase"] == "profile":
            timing[r["contender"]] = (int(r["base_ps"]) / 1000, int(r["probe_ps"]) / 1000)
    # tools/bench/guest's arguments, for the header.
    cmd = open(os.path.join(out, "guest", "cmd")).read().split()
    period, calls = cmd[-2], cmd[-1]
    base_syms = os.path.join(out, "profile", "kallsyms")
    profiles = {}
    for path in sorted(glob.glob(os.path.join(out, "profile", "*.ips.gz"))):
        c = os.path.basename(path)[:-len(".ips.gz")]
        if c in timing:
            profiles[c] = Profile(out, c, timing, base_syms)
    written = []
    for key, what, ref, dyn, target in PAIRS:
        if ref in profiles and dyn in profiles:
            written.append(pair_report(out, key, what, ref, dyn, target, profiles, period, calls))
    for report in (memory_report(out), alloc_report(out)):
        if report:
            written.append(report)
    for path in written:
        print(open(path).read())


main()
