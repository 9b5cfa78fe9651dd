#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns OUTDIR/raw.csv (tools/bench/guest; OUTDIR is tools/bench/run's,
build/bench/KERNEL-CLOCK) into results.md and results.csv: per-hit overhead (probe run minus the baseline run right
before it), median and spread over the rounds, and the ratios of the
medians. Usage: bench/report.py OUTDIR"""
import csv
import datetime
import os
import statistics
import sys

# tools/lib of the project this file is in, wherever the project is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "lib"))
from contenders import LABEL  # noqa: E402

out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
# tools/bench/run writes "KERNEL CLOCK"; with the icount clock the guest's
# nanoseconds are instructions.
try:
    kernel, clock = open(os.path.join(out, "setting")).read().split()
except (OSError, ValueError):
    kernel, clock = "lockdep", "wall"
UNIT = "instructions" if clock == "icount" else "ns"

samples = {}  # (phase, contender) -> {round: (base_ns, probe_ns)}
for r in rows:
    key = (r["phase"], r["contender"])
    samples.setdefault(key, {})[int(r["round"])] = (
        int(r["base_ps"]) / 1000.0, int(r["probe_ps"]) / 1000.0)


def over(key):
    return {rd: p - b for rd, (b, p) in samples.get(key, {}).items()}


def med(d):
    return statistics.median(d.values()) if d else float("nan")


def fmt(x):
    return "n/a" if x != x else f"{x:.0f}"


base_all = [b for s in samples.values() for b, _ in s.values()]
lines = []
csvrows = [("phase", "contender", "rounds", "overhead_ns_median",
            "overhead_ns_min", "overhead_ns_max", "probe_ns_median")]
lines.append(f"| contender | overhead {UNIT}/hit, median | spread (min–max) | {UNIT}/call with probe |")
lines.append("| --- | ---: | ---: | ---: |")
lines.append(f"| no probe (baseline) | 0 | — | {fmt(statistics.median(base_all))} |")


def row(phase, c, label=None):
    o = over((phase, c))
    if not o:
        return
    p = statistics.median(p for _, p in samples[(phase, c)].values())
    lines.append(f"| {label or LABEL[c]} | {fmt(med(o))} | "
                 f"{fmt(min(o.values()))}–{fmt(max(o.values()))} | {fmt(p)} |")
    csvrows.append((phase, c, len(o), f"{med(o):.1f}", f"{min(o.values()):.1f}",
                    f"{max(o.values()):.1f}", f"{p:.1f}"))


for c in LABEL:
    row("main", c)
tiers = sorted({int(ph[5:]) for ph, _ in samples if ph.startswith("scale")})
for t in tiers:
    row(f"scale{t}", "k_fentry", f"kernel fprobe entry event, {t}+{t} others enabled")
    row(f"scale{t}", "d_func", f"dynprobe function event, {t}+{t} others enabled")
    row(f"scale{t}", "hook_ftrace_rb", f"bare ftrace_ops + raw write, {t}+{t} others enabled")


def norm(key, ref):
    """Overhead of key divided by that of ref in the same round."""
    o, r = over(key), over(ref)
    return {k: o[k] / r[k] for k in o if k in r and r[k] > 0}


def ratio(a, b, target, what, oa=None, ob=None):
    if oa is None:
        oa, ob = over(a), over(b)
    if not oa or not ob:
        return
    r = med(oa) / med(ob)
    per = [oa[k] / ob[k] for k in oa if k in ob and ob[k] > 0]
    spread = f"{min(per):.2f}–{max(per):.2f}" if per else "—"
    verdict = "" if target is None else ("yes" if r <= target else "**no**")
    tgt = "—" if target is None else f"≤ {target}"
    lines.append(f"| {what} | {r:.2f} | {spread} | {tgt} | {verdict} |")
    csvrows.append(("ratio", what, len(per), f"{r:.3f}", "", "", ""))


lines += ["", "| ratio of median overheads | ratio | per-round spread | target | met |",
          "| --- | ---: | ---: | ---: | :---: |"]


def M(c):
    return ("main", c)


ratio(M("d_kprobe"), M("k_kprobe"), 0.6, "kprobe event, 3 register args: dynprobe / kernel")
ratio(M("d_kprobe_str"), M("k_kprobe_str"), 0.35, "kprobe event + string: dynprobe / kernel")
ratio(M("d_kretprobe"), M("k_kretprobe"), None, "kretprobe event, $retval: dynprobe / kernel")
ratio(M("d_vfunc"), M("k_vfentry"), 0.5, "vmlinux target: function event / kernel fprobe entry event")
ratio(M("d_vfentry"), M("k_vfentry"), None, "vmlinux target: dynprobe `f` entry / kernel fprobe entry event")
ratio(M("d_func"), M("k_fentry"), None, "module target: function event / kernel fprobe entry event")
ratio(M("d_fentry"), M("k_fentry"), None, "module target: dynprobe `f` entry / kernel fprobe entry event")
ratio(M("d_func_exit"), M("k_fexit"), 0.7, "function exit event / kernel fprobe %return event")
ratio(M("d_fexit"), M("k_fexit"), None, "dynprobe `f` %return / kernel fprobe %return event")
if tiers:
    lo, hi = tiers[0], tiers[-1]
    ref = "hook_ftrace_rb"
    for c, what, tgt in (("d_func", "dynprobe function event", 1.05),
                         ("k_fentry", "kernel fprobe event", None)):
        ratio(None, None, tgt, f"scale: {what}, {hi} / {lo} others, "
              "each in units of the bare ftrace_ops + raw write beside it",
              norm((f"scale{hi}", c), (f"scale{hi}", ref)),
              norm((f"scale{lo}", c), (f"scale{lo}", ref)))
        ratio((f"scale{hi}", c), (f"scale{lo}", c), None,
              f"(scale: {what}, {hi} / {lo} others, raw)")
    for t in tiers:
        ratio((f"scale{t}", "d_func"), (f"scale{t}", "k_fentry"), None,
              f"{t}+{t} others: function event / kernel fprobe event")
ratio(M("d_uprobe"), M("k_uprobe"), 0.9, "uprobe event, 3 register args: dynprobe / kernel")
ratio(M("d_uprobe_str"), M("k_uprobe_str"), 0.9, "uprobe event + ustring: dynprobe / kernel")
ratio(M("d_uretprobe"), M("k_uretprobe"), 0.9, "uretprobe event, $retval: dynprobe / kernel")
ratio(M("d_uretprobe_arg"), M("k_uretprobe"), None,
      "(dynprobe uretprobe + entry $arg1 / kernel uretprobe, $retval alone)")
ratio(M("d_kprobe"), M("hook_kprobe_rb"), 1.15, "limit: dynprobe kprobe event / bare kprobe + raw write")
ratio(M("d_vfunc"), M("hook_vftrace_rb"), 1.25, "limit, vmlinux target: function event / bare ftrace_ops + raw write")
ratio(M("d_func"), M("hook_ftrace_rb"), None, "limit, module target: function event / bare ftrace_ops + raw write")
ratio(M("d_vfentry"), M("hook_vftrace_rb"), None, "limit, vmlinux target: dynprobe `f` entry / bare ftrace_ops + raw write")
ratio(M("d_fentry"), M("hook_ftrace_rb"), None, "limit, module target: dynprobe `f` entry / bare ftrace_ops + raw write")
ratio(M("k_vfentry"), M("hook_vftrace_rb"), None, "(vmlinux target: kernel fprobe event / bare ftrace_ops + raw write)")
ratio(M("k_kprobe"), M("hook_kprobe_rb"), None, "(kernel kprobe event / bare kprobe + raw write)")
ratio(M("k_fentry"), M("hook_ftrace_rb"), None, "(kernel fprobe event / bare ftrace_ops + raw write)")
ratio(M("hook_fprobe"), M("hook_ftrace"), None, "(bare fprobe / bare ftrace_ops)")
ratio(M("d_func"), M("hook_fprobe"), None, "(function event / bare fprobe)")
ratio(M("k_fentry"), M("hook_fprobe"), None, "(kernel fprobe event / bare fprobe)")

# The system-call target (__do_sys_getppid from user space, one 64-bit
# value a hit): bpftrace beside both sides; issue 46's targets.
ratio(M("d_gfunc"), M("bt_fentry"), 0.5,
      "getppid: function event / bpftrace fentry printf (its reader counted)")
ratio(M("d_gfentry"), M("bt_fentry"), None,
      "getppid: dynprobe `f` entry event / bpftrace fentry printf (its reader counted)")
ratio(M("d_gkprobe"), M("bt_kprobe"), 0.45,
      "getppid: dynprobe kprobe event / bpftrace kprobe printf (its reader counted)")
ratio(M("d_ghist"), M("bt_fentry_count"), 1.5,
      "getppid: hist keys=common_pid on the function event / bpftrace fentry @c[pid] = count()")
ratio(M("d_ghist"), M("k_ghist"), 0.4,
      "getppid: hist keys=common_pid, dynprobe function event / kernel fprobe event")
ratio(M("d_gfunc"), M("k_gfentry"), None, "getppid: function event / kernel fprobe entry event")
ratio(M("d_gfentry"), M("k_gfentry"), None, "getppid: dynprobe `f` entry / kernel fprobe entry event")
ratio(M("d_gkprobe"), M("k_gkprobe"), None, "getppid: dynprobe kprobe event / kernel kprobe event")
ratio(M("d_gfunc_pipe"), M("bt_fentry"), None,
      "(getppid, both read: function event + cat trace_pipe / bpftrace fentry printf)")
ratio(M("d_gfunc_pipe"), M("k_gfentry_pipe"), None,
      "(getppid, both read through trace_pipe: function event / kernel fprobe event)")
ratio(M("bt_fentry"), M("k_gfentry"), None, "(getppid: bpftrace fentry printf / kernel fprobe event)")
ratio(M("bt_kprobe_count"), M("bt_fentry_count"), None,
      "(getppid: bpftrace kprobe @c[reg(\"di\")] / fentry @c[pid] count())")

# The readers' side (tools/bench/guest's readers.csv): what the reader
# did after the loop, and whether every record reached it.
readers = {}
try:
    for r in csv.DictReader(open(os.path.join(out, "readers.csv"))):
        readers.setdefault(r["contender"], []).append(r)
except OSError:
    pass
if readers:
    lines += ["", f"| contender with a reader | {UNIT}/hit during the loop (the reader's share then "
              f"included), median | {UNIT}/hit of the reader after the loop, median | "
              "calls a sample | records received (min–max) | lost (calls − received, max) | "
              "lost, reported by bpftrace (max) |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c, rs in readers.items():
        after = statistics.median(int(r["reader_after_ps"]) / 1000.0 for r in rs)
        o = over((rs[0]["phase"], c))
        during = statistics.median(o[int(r["round"])] - int(r["reader_after_ps"]) / 1000.0
                                   for r in rs if int(r["round"]) in o) if o else float("nan")
        calls = max(int(r["calls"]) for r in rs)
        got = [int(r["records"]) for r in rs]
        lost = max(max(0, int(r["calls"]) - int(r["records"])) for r in rs)
        reported = max(int(r["lost_reported"]) for r in rs)
        lines.append(f"| {LABEL.get(c, c)} | {fmt(during)} | {fmt(after)} | {calls} | {min(got)}–{max(got)} | "
                     f"{lost} | {reported} |")
        csvrows.append(("reader", c, len(rs), f"{after:.1f}", "", "", ""))

# The command's look-up beside bpftrace's and perf probe's (lookups.csv).
looks = {}
try:
    for r in csv.DictReader(open(os.path.join(out, "lookups.csv"))):
        looks.setdefault(r["tool"], {})[int(r["round"])] = (int(r["ns"]), int(r["lines"]))
except OSError:
    pass
if looks:
    what = {"dynprobe": "`dynprobe list 'vfs_rea*'`", "bpftrace": "`bpftrace -l 'fentry:vfs_rea*'`",
            "perf": "`perf probe -F 'vfs_rea*'`"}
    lines += ["", "| look-up, warm, in this boot | seconds, median | spread (min–max) | lines |",
              "| --- | ---: | ---: | ---: |"]
    for t, d in looks.items():
        secs = [ns / 1e9 for ns, _ in d.values()]
        lines.append(f"| {what.get(t, t)} | {statistics.median(secs):.2f} | "
                     f"{min(secs):.2f}–{max(secs):.2f} | {max(n for _, n in d.values())} |")
        csvrows.append(("lookup", t, len(d), f"{statistics.median(secs):.3f}",
                        f"{min(secs):.3f}", f"{max(secs):.3f}", ""))
    lines += ["", "| look-up ratio (time) | ratio | per-round spread | target | met |",
              "| --- | ---: | ---: | ---: | :---: |"]

    def secs_of(t):
        return {rd: ns / 1e9 for rd, (ns, _) in looks.get(t, {}).items()}
    ratio(None, None, 1.0, "`dynprobe list` / `bpftrace -l`", secs_of("dynprobe"), secs_of("bpftrace"))
    ratio(None, None, None, "(`perf probe -F` / `dynprobe list`)", secs_of("perf"), secs_of("dynprobe"))

# Memory per event (tools/bench/guest's memory phase), if it ran.
mem = {}
try:
    for r in csv.DictReader(open(os.path.join(out, "memory.csv"))):
        n_ev = int(r["events"])
        b = [int(r[k]) / n_ev for k in ("slab_bytes", "vmalloc_bytes", "percpu_bytes", "used_bytes")]
        mem[(r["side"], r["kind"])] = (n_ev, b)
except OSError:
    pass
if mem:
    lines += ["", "| memory per defined and enabled event | events | slab B | vmalloc B | percpu B | used B (MemTotal - MemFree) |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for (side, kind), (n_ev, b) in sorted(mem.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lines.append(f"| {side} {kind} event | {n_ev} | {b[0]:.0f} | {b[1]:.0f} | {b[2]:.0f} | {b[3]:.0f} |")
        csvrows.append(("memory", f"{side} {kind}", n_ev, f"{b[3]:.1f}", "", "", ""))
    # Slab objects in use and MemTotal - MemFree: the first sees what
    # the events allocate from slab caches, the second also pages.
    lines += ["", "| memory ratio, dynprobe / kernel | ratio | target | met |", "| --- | ---: | ---: | :---: |"]
    for kind, tgt in (("function", 0.8), ("kprobe", 0.8)):
        d, k = mem.get(("dynprobe", kind)), mem.get(("kernel", kind))
        # The target is the slab objects' (issue 46); what the page
        # allocator's free lists show is reported beside it.
        for col, what, col_tgt in ((0, "slab objects", tgt), (3, "used", None)):
            if d and k and k[1][col] > 0:
                r = d[1][col] / k[1][col]
                verdict = "" if col_tgt is None else ("yes" if r <= col_tgt else "**no**")
                lines.append(f"| {kind} events, {what} | {r:.2f} | "
                             f"{'—' if col_tgt is None else f'≤ {col_tgt}'} | {verdict} |")

# Definition and enable time at scale (the memory phase's steps), if
# they were timed: each step over all the events, side by side.
phases = {}
try:
    for r in csv.DictReader(open(os.path.join(out, "phases.csv"))):
        phases[(r["side"], r["kind"])] = (int(r["events"]), [
            int(r[k]) for k in ("define_ns", "enable_ns", "disable_ns", "remove_ns")])
except OSError:
    pass
if phases:
    unit = "M instructions" if clock == "icount" else "s"
    scale = 1e6 if clock == "icount" else 1e9
    lines += ["", f"| steps over all events ({unit}) | events | define | enable | disable | remove |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for (side, kind), (n_ev, t) in sorted(phases.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lines.append(f"| {side} {kind} events | {n_ev} | " +
                     " | ".join(f"{x / scale:.2f}" for x in t) + " |")
        csvrows.append(("phases", f"{side} {kind}", n_ev, *[f"{x / scale:.3f}" for x in t]))
    lines += ["", "| time ratio, dynprobe / kernel | ratio | target | met |",
              "| --- | ---: | ---: | :---: |"]
    for kind in ("function", "kprobe"):
        d, k = phases.get(("dynprobe", kind)), phases.get(("kernel", kind))
        if not (d and k):
            continue
        for what, cols, tgt in (("define + enable", (0, 1), 0.1 if kind == "function" else None),
                                ("disable + remove", (2, 3), None)):
            kt = sum(k[1][c] for c in cols)
            if kt > 0:
                r = sum(d[1][c] for c in cols) / kt
                verdict = "" if tgt is None else ("yes" if r <= tgt else "**no**")
                lines.append(f"| {d[0]} {kind} events, {what} | {r:.3f} | "
                             f"{'—' if tgt is None else f'≤ {tgt}'} | {verdict} |")

rounds = max((len(s) for s in samples.values()), default=0)
n = rows[0]["n"] if rows else "?"
def first_line(name):
    try:
        return open(os.path.join(out, name)).read().split("\n")[0].strip()
    except OSError:
        return ""


release = first_line("kernel-release")
bpftrace = first_line("bpftrace-version")
head = (f"Measured {datetime.date.today()} on the {kernel} kernel"
        f"{f' ({release})' if release else ''}, {clock} clock"
        f"{f', {bpftrace}' if bpftrace else ''}: "
        f"{rounds} rounds, target called {n} times per run; overhead = {UNIT}/call "
        f"with the probe minus {UNIT}/call of the baseline run just before it.\n")
with open(os.path.join(out, "results.md"), "w") as f:
    f.write(head + "\n" + "\n".join(lines) + "\n")
with open(os.path.join(out, "results.csv"), "w", newline="") as f:
    csv.writer(f).writerows(csvrows)
