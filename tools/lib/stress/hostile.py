# SPDX-License-Identifier: GPL-2.0
"""--hostile: a seeded random sequence of holds on dynprobe's events from
outside it against rmmod, clears, truncations and removals."""
import ctypes
import errno
import hashlib
import os
import random
import re
import signal
import struct
import subprocess
import time

import tracefs
from tracefs import DYNPROBE, TRACING
from stress.common import (
    DYNAMIC_EVENTS, FUNCTION_EVENTS, IN_USE, KPROBE_EVENTS, WORK,
    delete_module, errname, kernel_log_tail, line_owner, listing,
    module_loaded, module_refcnt, now, read_text)

# ---------------------------------------------------------------- hostile

# --hostile: one process, a seeded random sequence of steps. Each step
# takes or releases a hold on one of dynprobe's events from outside
# dynprobe (the kernel's event probes, hist triggers and their onmatch()
# actions tracing a synthetic event, perf, the in-kernel API's C sample,
# an enable), defines a missing event, or tries something destructive
# (rmmod, a clear or truncation of a control file, a removal of an event
# or a group), and checks it against the rules:
# - a refusal is EBUSY (rmmod: the module is in use) and changes nothing:
#   the control files, the kernel's dynamic_events and every event's
#   enable, filter, trigger and id read the same before and after;
# - an operation on events nothing holds succeeds, and changes what it
#   names only;
# - rmmod is refused while anything outside holds an event, and works
#   (the module is then loaded again) once nothing does;
# - the kernel log shows no oops, BUG or WARNING.
# The same seed gives the same sequence: every choice comes from one
# random.Random(seed), over lists in a fixed order, and depends only on
# what the checks saw. A failure stops the sequence and prints the step
# and the steps before it; the end releases every hold, clears
# everything and checks that rmmod works and nothing is left behind.

SYNTHETIC_EVENTS = DYNPROBE + "/synthetic_events"
KERNEL_DYNAMIC_EVENTS = TRACING + "/dynamic_events"
HOSTILE_FILES = (KPROBE_EVENTS, DYNAMIC_EVENTS, FUNCTION_EVENTS, SYNTHETIC_EVENTS)
# Classes of definition each control file lists, and so clears: k kprobe
# and kretprobe, f fprobe, e event probe, s synthetic, F function event.
HOSTILE_CLEARS = {KPROBE_EVENTS: "k", DYNAMIC_EVENTS: "kfes",
                  FUNCTION_EVENTS: "F", SYNTHETIC_EVENTS: "s"}
# The kernel's own synthetic event, target of onmatch().trace() actions,
# and the group of the kernel's own event probes on dynprobe's events.
KERNEL_SYNTH = "hostile_lat"
KERNEL_EPROBES = "hostile"
# The kernel's tracepoint that may carry an onmatch() action.
SCHED_WAKING = ("sched", "sched_waking")

# dynprobe's events of the sequence: (group, event, class, definition,
# filter set after each definition). hg2/ep0 and hg/ep1 are dynprobe's own
# event probes on hg/kp0 and hg/fp0: holds from inside, which neither
# rmmod nor a clear of dynamic_events may count as busy (the event probe
# goes first), but a removal of the source alone or a clear of
# kprobe_events must; a removal of group hg removes hg/ep1 with its
# source, not hg2/ep0.
HOSTILE_POOL = (
    ("hg", "kp0", "k", "p:hg/kp0 vfs_read", "common_pid != 0"),
    ("hg", "kr0", "k", "r:hg/kr0 vfs_write ret=$retval:s64", "ret >= 0"),
    ("hg", "fp0", "f", "f:hg/fp0 vfs_read", "common_pid != 0"),
    ("hg2", "ko0", "k", "p:hg2/ko0 do_sys_openat2 dfd=%di:s32", "dfd != 12345"),
    ("hg2", "fx0", "f", "f:hg2/fx0 vfs_write%return ret=$retval:s64", "common_pid != 0"),
    ("hg2", "ep0", "e", "e:hg2/ep0 hg.kp0", "common_pid != 0"),
    ("hg", "ep1", "e", "e:hg/ep1 hg.fp0", "common_pid != 0"),
    ("functions", "vfs_write", "F", "vfs_write(x64 file, NULL, u64 count)", "count > 0"),
    ("synthetic", "hsyn", "s", "hsyn u64 lat", "lat > 10"),
)
POOL = {(g, e): (c, line, flt) for g, e, c, line, flt in HOSTILE_POOL}
# dynprobe's event probes of the pool, and their sources.
EPROBES = {("hg2", "ep0"): ("hg", "kp0"), ("hg", "ep1"): ("hg", "fp0")}
# The events samples/c/dynprobe_sample.ko makes at load; it holds (and
# enables) its synthetic event until it unloads.
SAMPLE_EVENTS = {("synthetic", "dynprobe_sample_c"): "s", ("functions", "vfs_read"): "F",
                 ("functions", "ksys_write__exit"): "F", ("dynprobe_sample_c", "open"): "k"}
SAMPLE_HELD = ("synthetic", "dynprobe_sample_c")
HOSTILE_GROUPS = ("dynprobe_sample_c", "hg", "hg2", "synthetic")
HOSTILE_TAKE_WEIGHTS = {"enable": 3, "eprobe": 3, "var": 3, "onmatch": 3, "perf": 0.5,
                        "perfopen": 2, "api": 1}
# Weights of the kinds of step ("take" and "release": run_step()'s, from
# the number of holds).
HOSTILE_WEIGHTS = {"define": 14, "take": 0, "release": 0, "rmmod": 6, "clear": 12,
                   "remove": 12, "group": 6}
# A kernel log line that fails the run.
KERNEL_REPORT_RE = re.compile(r"Oops|BUG[: ]|WARNING:|general protection fault|Kernel panic|"
                              r"KASAN|UBSAN|refcount_t:|list_(add|del) corruption|"
                              r"Call Trace:|RIP: ")
# Known departures from the rules above: each lets the sequence go on
# past it, is printed every time it is used, and is counted in the
# summary. The last is a narrow race left in src/ (Documentation/
# reliability.md); the first (found by this sequence) is what
# src/event/synth/tracing_core.rs chose: an ownerless synthetic
# event pins nothing, and what holds it at unload is left to the kernel.
KNOWN_EXCEPTIONS = {
    "synth-left-to-kernel": "rmmod is accepted while only holds on dynprobe's synthetic "
                            "events remain; those events stay, as the kernel's (dmesg: "
                            "\"left to the kernel's synthetic_events\"), until the hold goes "
                            "and the kernel's dynamic_events removes them",
    "synth-clear-recreates": "a clear refused with EBUSY while a synthetic event is busy "
                             "deletes and recreates dynprobe's other synthetic events "
                             "(new ids, filters lost)",
}


def owner_of(line):
    """(group, event) of a line of a dynprobe control file or of the
    kernel's dynamic_events (r10: and the function events' forms too)."""
    m = re.match(r"^[a-z]\d*:([^/\s]+)/(\S+)", line)
    if m:
        return m.group(1), m.group(2)
    return line_owner(line)


def ev_dir(key):
    return "%s/events/%s/%s" % (TRACING, key[0], key[1])


def try_read(path):
    try:
        return read_text(path)
    except OSError as e:
        return "<%s>" % errname(e.errno)


class HostileFailure(Exception):
    pass


class Hostile:
    def __init__(self, seed, steps, seconds, ko, verbose):
        self.seed = seed
        self.rng = random.Random(seed)
        self.steps = steps
        self.seconds = seconds
        self.ko = ko
        self.sample = os.path.join(os.path.dirname(ko), "samples", "c", "dynprobe_sample.ko")
        self.verbose = verbose
        self.events = {}        # dynprobe's events that exist: key -> class
        self.holders = {}       # holder id (tuple) -> perf's Popen or fd, or None
        self.orphans = set()    # synthetic events left to the kernel at rmmod
        # Of every step's description: two runs of one seed that print the
        # same digest ran the same sequence.
        self.digest = hashlib.sha256()
        self.step = 0
        self.history = []       # the last steps, for the report of a failure
        self.errors = []
        self.counts = {}
        self.exceptions = {}
        self.start = now()
        self.kmsg = None

    # -- reporting

    def log(self, msg):
        print("[hostile %5.0fs] %s" % (now() - self.start, msg), flush=True)

    def count(self, key):
        self.counts[key] = self.counts.get(key, 0) + 1

    def fail(self, msg):
        raise HostileFailure(msg)

    def known(self, name, detail):
        self.exceptions[name] = self.exceptions.get(name, 0) + 1
        self.log("KNOWN EXCEPTION %s at step %d (%s): %s" %
                 (name, self.step, KNOWN_EXCEPTIONS[name], detail))

    def note(self, what):
        self.digest.update(("%d %s\n" % (self.step, what)).encode())
        self.history.append("step %d: %s" % (self.step, what))
        del self.history[:-12]
        if self.verbose:
            self.log("step %d: %s" % (self.step, what))

    # -- the kernel log

    def open_kmsg(self):
        self.kmsg = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.kmsg, 0, os.SEEK_END)

    def check_kmsg(self):
        """New kernel log records since the last look: a report fails."""
        bad = self.kmsg_reports()
        if bad:
            self.fail("kernel log reports:\n    " + "\n    ".join(bad[:40]))

    def kmsg_reports(self):
        """The kernel log's new lines that report a bug."""
        bad = []
        while True:
            try:
                rec = os.read(self.kmsg, 8192)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:      # overwritten: read on
                    continue
                raise
            if not rec:
                break
            text = rec.decode(errors="replace").split(";", 1)[-1].split("\n", 1)[0]
            if KERNEL_REPORT_RE.search(text):
                bad.append(text)
        return bad

    # -- what exists, and what holds what

    def holder_keys(self, hid):
        """dynprobe's events a holder holds."""
        kind = hid[0]
        if kind == "api":
            return {SAMPLE_HELD}
        if kind == "onmatch":
            _, host, matched, target = hid
            keys = {matched}
            if host != SCHED_WAKING:
                keys.add(host)
            if target != KERNEL_SYNTH:
                keys.add(("synthetic", target))
            return keys
        return {hid[1]}

    def pins(self, hid):
        """Whether a holder keeps the module: a hold on one of its events
        that is not a synthetic event (those run only the kernel's code:
        src/event/synth/tracing_core.rs makes them with no owner), or the
        API's sample, which depends on it."""
        return hid[0] == "api" or any(k[0] != "synthetic" for k in self.holder_keys(hid))

    def held_outside(self, key):
        return any(key in self.holder_keys(h) for h in self.holders)

    def busy(self, key, clearing=""):
        """Whether a removal of key must be refused: held from outside,
        or the source of dynprobe's event probe hg2/ep0, unless the clear
        (of classes clearing) removes that event probe too."""
        if self.held_outside(key):
            return True
        return any(src == key and ep in self.events and
                   ("e" not in clearing or self.held_outside(ep))
                   for ep, src in EPROBES.items())

    def busy_in_group(self, key, group):
        """Whether a removal of group must keep key: held from outside,
        or the source of an event probe that stays (of another group, or
        itself kept)."""
        if self.held_outside(key):
            return True
        return any(src == key and ep in self.events and
                   (ep[0] != group or self.busy_in_group(ep, group))
                   for ep, src in EPROBES.items())

    def known_keys(self):
        keys = set(POOL) | set(SAMPLE_EVENTS) | set(self.events)
        for path in (DYNAMIC_EVENTS, FUNCTION_EVENTS):
            for line in self.listing(path):
                keys.add(owner_of(line))
        keys.discard((None, None))
        return sorted(keys)

    @staticmethod
    def listing(path):
        try:
            return listing(path)
        except OSError:
            return []

    def snapshot(self):
        """What a refusal must leave as it was."""
        snap = {}
        for path in HOSTILE_FILES + (KERNEL_DYNAMIC_EVENTS,):
            snap[path] = try_read(path)
        snap["sched_waking trigger"] = try_read(ev_dir(SCHED_WAKING) + "/trigger")
        events = {}
        for key in self.known_keys():
            if os.path.isdir(ev_dir(key)):
                events[key] = {f: try_read(ev_dir(key) + "/" + f)
                               for f in ("enable", "filter", "trigger", "id")}
        snap["events"] = events
        return snap

    def compare(self, before, after, changed=(), ordered=True):
        """Differences between two snapshots outside the events changed
        (with ordered False, a listing's order does not count)."""
        diffs = []
        for path in before:
            if path == "events":
                continue
            if path in HOSTILE_FILES + (KERNEL_DYNAMIC_EVENTS,):
                # dynprobe's synthetic events are the kernel's too: its
                # dynamic_events lists them.
                owner = owner_of if path != SYNTHETIC_EVENTS else \
                    lambda l: ("synthetic", l.split()[0]) if l.split() else None
                b = [l for l in before[path].split("\n") if owner(l) not in changed]
                a = [l for l in after[path].split("\n") if owner(l) not in changed]
                if not ordered:
                    a, b = sorted(a), sorted(b)
            else:
                b, a = before[path], after[path]
            if b != a:
                diffs.append("%s: %r -> %r" % (path.replace(TRACING + "/", ""), b, a))
        be, ae = before["events"], after["events"]
        for key in sorted(set(be) | set(ae)):
            if key in changed:
                continue
            if be.get(key) != ae.get(key):
                diffs.append("events/%s/%s: %s -> %s" % (key[0], key[1], be.get(key), ae.get(key)))
        return diffs

    def verify_model(self, what):
        """The control files list what the model says exists, and only
        that; each event has its directory."""
        got = set()
        for path in (DYNAMIC_EVENTS, FUNCTION_EVENTS):
            got |= {owner_of(l) for l in self.listing(path)}
        want = set(self.events)
        if got != want:
            self.fail("after %s: the control files list %s, expected %s (only listed: %s, "
                      "missing: %s)" % (what, sorted(got), sorted(want),
                                        sorted(got - want), sorted(want - got)))
        kp = {owner_of(l) for l in self.listing(KPROBE_EVENTS)}
        if kp != {k for k, c in self.events.items() if c == "k"}:
            self.fail("after %s: kprobe_events lists %s" % (what, sorted(kp)))
        syn = {("synthetic", l.split()[0]) for l in self.listing(SYNTHETIC_EVENTS)}
        if syn != {k for k, c in self.events.items() if c == "s"}:
            self.fail("after %s: synthetic_events lists %s" % (what, sorted(syn)))
        for key in self.known_keys():
            if os.path.isdir(ev_dir(key)) != (key in self.events or key in self.orphans):
                self.fail("after %s: events/%s/%s %s" % (what, key[0], key[1],
                          "still exists" if key not in self.events else "is missing"))

    def refused(self, what, rc, before, busy=()):
        """A refusal (for the events busy): EBUSY, and nothing changed."""
        after = self.snapshot()
        if rc != errno.EBUSY:
            self.fail("%s: %s, expected EBUSY%s" % (what, errname(rc), kernel_log_tail()))
        diffs = self.compare(before, after)
        if diffs:
            self.known_or_fail(what, diffs, before, after, busy=busy)
        self.count("EBUSY refusals: " + what.split()[0])

    def known_or_fail(self, what, diffs, before, after, changed=(), busy=()):
        """A refusal that changed something: the known synthetic-event
        bug when it is that (a clear refused for busy synthetic events
        only, the listings the same but for their order, only synthetic
        events' ids, filters, triggers or enables differing), else a
        failure. A busy probe event must refuse a clear of
        dynamic_events before any synthetic event is touched."""
        clear = what.startswith("clear") and ("dynamic_events" in what or
                                              "synthetic_events" in what)
        busy_synth = busy and all(k[0] == "synthetic" for k in busy)
        only_synth = all(d.startswith("events/synthetic/")
                         for d in self.compare(before, after, changed, ordered=False))
        if clear and busy_synth and only_synth:
            self.known("synth-clear-recreates", "%s: %s" % (what, "; ".join(diffs)))
            return
        self.fail("%s was refused but changed:\n    %s" % (what, "\n    ".join(diffs)))

    def succeeded(self, what, rc, before, gone=(), added=()):
        """A success: OK, what it names changed and nothing else."""
        if rc != 0:
            self.fail("%s: %s, expected OK (nothing holds what it removes)%s" %
                      (what, errname(rc), kernel_log_tail()))
        for key in gone:
            self.events.pop(key, None)
        for key, cls in added:
            self.events[key] = cls
        after = self.snapshot()
        diffs = self.compare(before, after, set(gone) | {k for k, _ in added})
        if diffs:
            self.fail("%s changed what it does not name:\n    %s" % (what, "\n    ".join(diffs)))
        self.verify_model(what)

    # -- steps

    def choose(self, options):
        """One of options (a list in a fixed order): the seed's choice."""
        return options[self.rng.randrange(len(options))]

    def candidates(self):
        c = {}
        c["define"] = [k for k in sorted(POOL) if k not in self.events and
                       k not in self.orphans and (k not in EPROBES or EPROBES[k] in self.events)]
        c["take"] = self.take_candidates()
        c["release"] = [h for h in sorted(self.holders) if not (
            h[0] == "var" and any(o[0] == "onmatch" and o[2] == h[1] for o in self.holders))]
        c["rmmod"] = [("rmmod",)]
        c["clear"] = [(p, how) for p in HOSTILE_FILES for how in ("echo", "trunc", "replace")
                      if how != "replace" or self.replacements(p)]
        c["remove"] = []
        for key in sorted(self.events):
            for way in self.removal_ways(key):
                c["remove"].append((key, way))
        c["group"] = [(g, p) for g in HOSTILE_GROUPS for p in (DYNAMIC_EVENTS, KPROBE_EVENTS)]
        return c

    def take_candidates(self):
        pool = [k for k in sorted(self.events) if k in POOL]
        hists = {h[1] for h in self.holders if h[0] == "var"} | \
                {h[1] for h in self.holders if h[0] == "onmatch"}
        out = []
        for k in pool:
            if ("enable", k) not in self.holders:
                out.append(("enable", k))
            # The kernel's event probes skip probe events as sources
            # (find_and_get_event(): TRACE_EVENT_FL_KPROBE, _EPROBE):
            # dynprobe's kprobe events and event probes as the kernel's.
            if ("eprobe", k) not in self.holders and self.events[k] in "fFs":
                out.append(("eprobe", k))
            if k not in hists:
                out.append(("var", k))
            # perf record's hold shows in the module's reference count,
            # which a synthetic event does not take.
            if ("perf", k) not in self.holders and self.events[k] != "s" and \
                    sum(1 for h in self.holders if h[0] == "perf") < 2:
                out.append(("perf", k))
            if ("perfopen", k) not in self.holders:
                out.append(("perfopen", k))
        targets = [KERNEL_SYNTH] + (["hsyn"] if ("synthetic", "hsyn") in self.events else [])
        for m in sorted(h[1] for h in self.holders if h[0] == "var"):
            for host in [SCHED_WAKING] + pool:
                if host in hists or host == m or (host != SCHED_WAKING and
                                                  self.events[host] == "s"):
                    continue
                for t in targets:
                    out.append(("onmatch", host, m, t))
        if ("api",) not in self.holders and os.path.exists(self.sample) and \
                not any(k in self.events for k in SAMPLE_EVENTS):
            out.append(("api",))
        return out

    @staticmethod
    def removal_ways(key):
        cls = POOL.get(key, (SAMPLE_EVENTS.get(key),))[0]
        e = key[1]
        if cls == "k":
            return [(DYNAMIC_EVENTS, "-:%s/%s" % key), (KPROBE_EVENTS, "-:%s/%s" % key)]
        if cls in "fe":
            return [(DYNAMIC_EVENTS, "-:%s/%s" % key)]
        if cls == "F":
            return [(FUNCTION_EVENTS, "-:%s" % e), (FUNCTION_EVENTS, "-:functions/%s" % e)]
        return [(SYNTHETIC_EVENTS, "!%s" % e), (DYNAMIC_EVENTS, "-:synthetic/%s" % e)]

    def run_step(self):
        c = self.candidates()
        kinds = [k for k in sorted(HOSTILE_WEIGHTS) if c[k]]
        # Holds are taken less and released more as they pile up, so that
        # destructive steps meet every number of them, none included.
        n = len(self.holders)
        weights = dict(HOSTILE_WEIGHTS, take=max(4, 30 - 8 * n), release=6 * n)
        kind = self.rng.choices(kinds, [weights[k] for k in kinds])[0]
        refcnt = module_refcnt()
        if kind == "take":
            types = sorted({h[0] for h in c["take"]})
            t = self.rng.choices(types, [HOSTILE_TAKE_WEIGHTS[x] for x in types])[0]
            self.take(self.choose([h for h in c["take"] if h[0] == t]))
        elif kind == "release":
            # What a release gives back depends on the other holds of the
            # event (its first perf user takes two references, and the
            # last gives both back): the count is checked once none is left.
            self.release(self.choose(c["release"]))
        elif kind == "define":
            self.define(self.choose(c["define"]))
        elif kind == "rmmod":
            self.rmmod()
        elif kind == "clear":
            self.clear(*self.choose(c["clear"]))
        elif kind == "remove":
            key, (path, cmd) = self.choose(c["remove"])
            self.remove(key, path, cmd)
        else:
            self.remove_group(*self.choose(c["group"]))
        self.check_kmsg()
        if kind not in ("take", "release", "rmmod"):
            self.check_refcnt(kind, refcnt)

    def check_refcnt(self, kind, want):
        """A step that takes or releases no hold leaves the module's
        reference count as it was (waited for up to 3 s, for the tracing
        core's late frees)."""
        end = now() + 3
        while module_refcnt() != want and now() < end:
            time.sleep(0.1)
        if module_refcnt() != want:
            self.fail("dynprobe's refcnt is %d after this %s step, expected %d" %
                      (module_refcnt(), kind, want))

    def write(self, path, data, truncate=False):
        rc = tracefs.write_errno(path, data, truncate)
        if self.verbose:
            # Each write as a shell command, for a reproduction by hand.
            self.log("  %s %s %s  # %s" % ("echo %r" % data.rstrip("\n") if data else ":",
                                           ">" if truncate else ">>",
                                           path.replace(TRACING + "/", ""), errname(rc)))
        return rc

    def define(self, key, path=None):
        cls, line, _ = POOL[key]
        if path is None:
            if cls == "k":
                path = self.choose([KPROBE_EVENTS, DYNAMIC_EVENTS])
            elif cls == "F":
                path = FUNCTION_EVENTS
            elif cls == "s":
                path = self.choose([SYNTHETIC_EVENTS, DYNAMIC_EVENTS])
            else:
                path = DYNAMIC_EVENTS
        if path == DYNAMIC_EVENTS and cls == "s":
            line = "s:" + line
        what = "define %r in %s" % (line, os.path.basename(path))
        self.note(what)
        before = self.snapshot()
        rc = self.write(path, line + "\n")
        if rc:
            self.fail("%s: %s (error_log: %s)" % (what, errname(rc),
                                                  tracefs.error_log_message(line)))
        self.succeeded(what, rc, before, added=[(key, cls)])
        self.set_filter(key)
        self.count("definitions")

    def set_filter(self, key):
        flt = POOL[key][2]
        rc = self.write(ev_dir(key) + "/filter", flt + "\n", truncate=True)
        if rc:
            self.fail("filter %r on %s/%s: %s" % (flt, key[0], key[1], errname(rc)))

    # -- holders

    @staticmethod
    def var_name(key):
        return "t_%s_%s" % key

    def holder_command(self, hid):
        """(file, command) that takes the hold; its release is the
        command with "!" (triggers) or "-:" (event probes) before it."""
        kind = hid[0]
        if kind == "eprobe":
            g, e = hid[1]
            return KERNEL_DYNAMIC_EVENTS, "e:%s/ep_%s_%s %s.%s" % (KERNEL_EPROBES, g, e, g, e)
        if kind == "var":
            return ev_dir(hid[1]) + "/trigger", \
                "hist:keys=common_pid:%s=common_timestamp.usecs" % self.var_name(hid[1])
        if kind == "onmatch":
            _, host, m, t = hid
            lat = "l_%s_%s" % host
            return ev_dir(host) + "/trigger", \
                "hist:keys=common_pid:%s=common_timestamp.usecs-$%s" \
                ":onmatch(%s.%s).trace(%s,$%s)" % \
                (lat, self.var_name(m), m[0], m[1], t, lat)
        return None, None

    def take(self, hid):
        what = "take %s" % (hid,)
        self.note(what)
        kind = hid[0]
        before = self.snapshot()
        if kind == "enable":
            rc = self.write(ev_dir(hid[1]) + "/enable", "1\n", truncate=True)
        elif kind == "perf":
            rc = self.start_perf(hid)
        elif kind == "perfopen":
            rc = self.perf_open(hid)
        elif kind == "api":
            p = subprocess.run(["insmod", self.sample], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=120)
            rc = 0 if p.returncode == 0 else -1
            if rc:
                self.fail("%s: insmod %s: %s" % (what, self.sample, p.stdout.decode().strip()))
        else:
            path, cmd = self.holder_command(hid)
            rc = self.write(path, cmd + "\n")
            if rc:
                self.fail("%s: %r in %s: %s (error_log: %s)" %
                          (what, cmd, path, errname(rc), tracefs.error_log_message(cmd)))
        if rc:
            self.fail("%s: %s" % (what, errname(rc)))
        self.holders.setdefault(hid, None)
        if kind == "api":
            self.events.update(SAMPLE_EVENTS)
        self.check_hold_change(what, hid, before)
        self.count("holds taken: " + kind)

    def check_hold_change(self, what, hid, before):
        """A hold taken or released changes the holder's own files (the
        kernel's dynamic_events, the trigger and enable files of the
        events it holds, the sample's events) and nothing of dynprobe's
        other events."""
        changed = set(self.holder_keys(hid))
        if hid[0] == "api":
            changed |= set(SAMPLE_EVENTS)
        after = self.snapshot()
        diffs = [d for d in self.compare(before, after, changed)
                 if not d.startswith(("dynamic_events:", "sched_waking trigger:"))]
        if diffs:
            self.fail("%s changed:\n    %s" % (what, "\n    ".join(diffs)))
        self.verify_model(what)

    def start_perf(self, hid):
        g, e = hid[1]
        base = module_refcnt()
        out = "%s/perf-%s-%s.data" % (WORK, g, e)
        p = subprocess.Popen(["perf", "record", "-q", "-B", "-N", "-e", "%s:%s" % (g, e),
                              "-a", "-o", out, "--", "sleep", "3600"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        self.holders[hid] = p
        # The hold is there once perf has registered the event: the
        # module's reference count shows it. perf starts in seconds
        # under TCG.
        end = now() + 60
        while module_refcnt() <= base and p.poll() is None and now() < end:
            time.sleep(0.1)
        if module_refcnt() <= base:
            err = p.stderr.read().decode(errors="replace") if p.poll() is not None else ""
            self.fail("perf record -e %s:%s took no hold in 60 s (exit %s): %s" %
                      (g, e, p.poll(), err.strip()[-300:]))
        return 0

    def perf_open(self, hid):
        """perf_event_open() on the event's id, CPU 0, all tasks: the
        hold is there when the call returns."""
        try:
            ev_id = int(read_text(ev_dir(hid[1]) + "/id"))
        except (OSError, ValueError) as e:
            self.fail("take %s: no id: %s" % (hid, e))
        # struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): type
        # PERF_TYPE_TRACEPOINT, size, config (the id), sample_period 1;
        # the rest 0 (enabled at once).
        attr = ctypes.create_string_buffer(struct.pack("=IIQQ40x", 2, 64, ev_id, 1), 64)
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.syscall(298, attr, -1, 0, -1, 8)      # perf_event_open, FD_CLOEXEC
        if fd < 0:
            return ctypes.get_errno()
        self.holders[hid] = fd
        return 0

    def release(self, hid):
        what = "release %s" % (hid,)
        self.note(what)
        kind = hid[0]
        before = self.snapshot()
        if kind == "enable":
            rc = self.write(ev_dir(hid[1]) + "/enable", "0\n", truncate=True)
        elif kind == "perf":
            p = self.holders[hid]
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=120)
                rc = 0
            except subprocess.TimeoutExpired:
                p.kill()
                self.fail("%s: perf did not end in 120 s after SIGINT" % what)
        elif kind == "perfopen":
            os.close(self.holders[hid])
            rc = 0
        elif kind == "api":
            rc = delete_module("dynprobe_sample")
            if rc == 0:
                for key in SAMPLE_EVENTS:
                    self.events.pop(key, None)
        elif kind == "eprobe":
            path, cmd = self.holder_command(hid)
            rc = self.write(path, "-:%s\n" % cmd.split()[0][2:])
        else:
            path, cmd = self.holder_command(hid)
            rc = self.write(path, "!%s\n" % cmd)
        if rc:
            self.fail("%s: %s%s" % (what, errname(rc), kernel_log_tail()))
        keys = self.holder_keys(hid)
        del self.holders[hid]
        for key in sorted(keys & self.orphans):
            if not self.held_outside(key):
                self.remove_orphan(key)
        self.check_hold_change(what, hid, before)
        if not self.holders:
            self.check_unpinned(what)
        self.count("holds released: " + kind)

    def check_unpinned(self, what):
        """With no hold left, the module has no reference: one left is a
        hold that outlived its release (waited for up to 3 s, for the
        tracing core's late frees)."""
        end = now() + 3
        while module_refcnt() and now() < end:
            time.sleep(0.1)
        if module_refcnt():
            self.fail("after %s, the last hold, dynprobe's refcnt is %d" % (what, module_refcnt()))

    def remove_orphan(self, key):
        """A synthetic event left to the kernel at an rmmod, no longer
        held: the kernel's dynamic_events removes it."""
        cmd = "-:synthetic/%s" % key[1]
        rc = self.write(KERNEL_DYNAMIC_EVENTS, cmd + "\n")
        if rc:
            self.fail("%r in the kernel's dynamic_events (%s was left to the kernel at "
                      "rmmod, now unheld): %s" % (cmd, key[1], errname(rc)))
        self.orphans.discard(key)

    # -- destructive operations

    def rmmod(self):
        # Holds on synthetic events left to the kernel are not on
        # dynprobe's any more.
        held = sorted(h for h in self.holders if h[0] == "api" or
                      self.holder_keys(h) - self.orphans)
        what = "rmmod dynprobe (holders: %s)" % (held or "none")
        self.note(what)
        before = self.snapshot()
        rc = delete_module("dynprobe")
        synth_only = held and not any(self.pins(h) for h in held)
        if synth_only and rc == 0:
            left = sorted({k for h in held for k in self.holder_keys(h)})
            self.known("synth-left-to-kernel", "%s accepted, %s left" % (what, left))
            self.orphans |= set(left)
            held = []
        if held:
            if rc not in IN_USE:
                self.fail("%s: %s, expected in use (EWOULDBLOCK)" % (what, errname(rc)))
            diffs = self.compare(before, self.snapshot())
            if diffs:
                self.fail("%s was refused but changed:\n    %s" % (what, "\n    ".join(diffs)))
            self.count("EBUSY refusals: rmmod")
            return
        if rc:
            self.fail("%s: %s, expected OK (refcnt %s)" %
                      (what, errname(rc), try_read("/sys/module/dynprobe/refcnt").strip()))
        if os.path.exists(DYNPROBE) or module_loaded():
            self.fail("%s: dynprobe still there after rmmod" % what)
        self.events = {}
        left = [k for k in self.known_keys() if os.path.isdir(ev_dir(k)) and k not in self.orphans]
        if left:
            self.fail("%s: event directories left after rmmod: %s" % (what, left))
        self.count("rmmod accepted")
        self.load()

    def load(self):
        p = subprocess.run(["insmod", self.ko], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        if p.returncode or not os.path.isdir(DYNPROBE):
            self.fail("insmod %s: %s" % (self.ko, p.stdout.decode().strip()))
        self.verify_model("insmod dynprobe")

    def clear(self, path, how):
        classes = HOSTILE_CLEARS[path]
        name = os.path.basename(path)
        line = None
        if how == "replace":
            key = self.choose(self.replacements(path))
            line = POOL[key][1]
            if path == DYNAMIC_EVENTS and POOL[key][0] == "s":
                line = "s:" + line
            what = "clear %s by writing %r with '>'" % (name, line)
        else:
            what = "clear %s (%s)" % (name, "'echo >'" if how == "echo" else "O_TRUNC alone")
        self.note(what)
        mine = [k for k, c in self.events.items() if c in classes]
        busy = sorted(k for k in mine if self.busy(k, classes))
        before = self.snapshot()
        rc = self.write(path, {"echo": "\n", "trunc": "", "replace": (line or "") + "\n"}[how],
                        truncate=True)
        if busy:
            self.refused("%s (busy: %s)" % (what, busy), rc, before, busy)
            return
        added = [(key, POOL[key][0])] if line else []
        self.succeeded(what, rc, before, gone=mine, added=added)
        if line:
            self.set_filter(key)
        self.count("clears accepted")

    def replacements(self, path):
        """The definitions a truncating write to path may carry."""
        return [k for k in sorted(POOL) if POOL[k][0] in HOSTILE_CLEARS[path] and
                POOL[k][0] != "e" and k not in self.orphans]

    def remove(self, key, path, cmd):
        what = "remove %r in %s" % (cmd, os.path.basename(path))
        self.note(what)
        before = self.snapshot()
        rc = self.write(path, cmd + "\n")
        if self.busy(key):
            self.refused(what, rc, before)
        else:
            self.succeeded(what, rc, before, gone=[key])
            self.count("removals accepted")

    def remove_group(self, group, path):
        cmd = "-:%s/" % group
        what = "remove group %r in %s" % (cmd, os.path.basename(path))
        self.note(what)
        classes = HOSTILE_CLEARS[path]
        # The kernel's synthetic events match no group removal (its
        # synth_event_match() compares the event's name): "-:synthetic/"
        # finds nothing, as in the kernel's dynamic_events.
        order = []
        for l in self.listing(DYNAMIC_EVENTS):
            k = owner_of(l)
            if k[0] == group and self.events.get(k, "s") in classes.replace("s", "") \
                    and k not in order:
                order.append(k)
        before = self.snapshot()
        rc = self.write(path, cmd + "\n")
        if not order:
            if rc != errno.ENOENT:
                self.fail("%s, a group with no event: %s, expected ENOENT" % (what, errname(rc)))
            if self.compare(before, self.snapshot()):
                self.fail("%s, a group with no event, changed something" % what)
            return
        # All or nothing: refused with EBUSY, removing none, while one
        # member is held from outside the group; dynprobe's event probe of
        # the group goes before its source, whose only hold it is.
        busy = [k for k in order if self.busy_in_group(k, group)]
        if not busy:
            self.succeeded(what, rc, before, gone=order)
            self.count("group removals accepted")
            return
        if rc != errno.EBUSY:
            self.fail("%s (busy: %s): %s, expected EBUSY" % (what, busy, errname(rc)))
        left = self.gone_in_group(group, order, before, what)
        if left != order:
            self.fail("%s (busy: %s): refused, yet left only %s of %s" %
                      (what, busy, left, order))
        self.verify_model(what)
        self.count("EBUSY refusals: group removal")

    def gone_in_group(self, group, order, before, what):
        """After a partial group removal: what is left of the group (in
        listing order); the model drops the rest. Nothing else changed."""
        left = [k for k in order if k in {owner_of(l) for l in self.listing(DYNAMIC_EVENTS)}]
        gone = [k for k in order if k not in left]
        for key in gone:
            self.events.pop(key, None)
        after = self.snapshot()
        diffs = self.compare(before, after, set(gone))
        if diffs:
            self.known_or_fail(what, diffs, before, after, set(gone))
        return left

    # -- the run

    def setup(self):
        if os.path.exists(WORK):
            subprocess.run(["rm", "-rf", WORK])
        os.makedirs(WORK)
        if not os.path.isdir(DYNPROBE):
            raise SystemExit("dynprobe is not loaded (no %s)" % DYNPROBE)
        for path in HOSTILE_FILES:
            rc = tracefs.write_errno(path, "", truncate=True)
            if rc:
                raise SystemExit("cannot clear %s at the start: %s" % (path, errname(rc)))
        tracefs.write_errno(TRACING + "/tracing_on", "1\n", truncate=True)
        rc = tracefs.write_errno(KERNEL_DYNAMIC_EVENTS, "s:%s u64 lat\n" % KERNEL_SYNTH)
        if rc:
            raise SystemExit("the kernel's synthetic event %s: %s" % (KERNEL_SYNTH, errname(rc)))
        if not os.path.exists(self.sample):
            self.log("no %s: the in-kernel API's holder is left out" % self.sample)
        self.open_kmsg()

    def run(self):
        self.log("seed %d; %s steps, at most %d s; module %s" %
                 (self.seed, self.steps or "unlimited", self.seconds, self.ko))
        self.setup()
        deadline = now() + self.seconds
        t0 = now()
        try:
            while (not self.steps or self.step < self.steps) and now() < deadline:
                self.step += 1
                self.run_step()
                if self.step % 50 == 0:
                    self.log("%d steps" % self.step)
        except Exception as e:      # a failure, or a bug of this script
            if not isinstance(e, HostileFailure):
                import traceback
                e = "%r\n%s" % (e, traceback.format_exc())
            self.errors.append("step %d: %s" % (self.step, e))
            self.log("FAILED at step %d (seed %d): %s" % (self.step, self.seed, e))
            self.log("the last steps:\n    " + "\n    ".join(self.history))
            bad = self.kmsg_reports()
            if bad:
                self.log("the kernel log reports:\n    " + "\n    ".join(bad[:40]))
            self.diagnose()
            self.log("reproduce: tools/stress/guest-stress.py --hostile --seed %d --steps %d "
                     "(make stress-hostile SEED=%d STEPS=%d)" %
                     (self.seed, self.step, self.seed, self.step))
        elapsed = now() - t0
        done = self.step if not self.errors else self.step - 1
        self.step += 1
        try:
            self.finish()
        except Exception as e:
            if not isinstance(e, HostileFailure):
                import traceback
                e = "%r\n%s" % (e, traceback.format_exc())
            self.errors.append("at the end: %s" % e)
            self.log("FAILED at the end: %s" % e)
            self.log("the last steps:\n    " + "\n    ".join(self.history))
            if module_loaded():
                self.diagnose()
        self.log("==== %d steps in %.1f s (seed %d, sequence digest %s)" %
                 (done, elapsed, self.seed, self.digest.hexdigest()[:16]))
        for k in sorted(self.counts):
            self.log("  %-40s %d" % (k, self.counts[k]))
        for name, n in sorted(self.exceptions.items()):
            self.log("  known exception %s used %d times" % (name, n))
        self.log("FAILED" if self.errors else "PASSED")
        return not self.errors

    def diagnose(self):
        """After a failure: the state a reader needs, and whether a hold
        that should be gone goes by itself a few seconds later (the
        tracing core frees some references late)."""
        self.log("holds: %s; orphans: %s" % (sorted(self.holders), sorted(self.orphans)))
        refcnt = try_read("/sys/module/dynprobe/refcnt").strip()
        for key, st in sorted(self.snapshot()["events"].items()):
            self.log("  events/%s/%s: enable %s, trigger %s" %
                     (key[0], key[1], st["enable"].strip(),
                      [l for l in st["trigger"].split("\n") if l and not l.startswith("#")]))
        self.log("kernel dynamic_events: %r" % try_read(KERNEL_DYNAMIC_EVENTS))
        time.sleep(5)
        self.log("dynprobe's refcnt %s, 5 s later %s" %
                 (refcnt, try_read("/sys/module/dynprobe/refcnt").strip()))

    def finish(self):
        """Every hold released, everything cleared, rmmod, nothing left."""
        self.note("the end: release every hold")
        for hid in sorted(self.holders, key=lambda h: h[0] != "onmatch"):
            self.release(hid)
        if self.orphans:
            self.fail("synthetic events left to the kernel, still there: %s" % sorted(self.orphans))
        if not os.path.isdir(DYNPROBE):
            self.load()
        for path in (DYNAMIC_EVENTS, FUNCTION_EVENTS, SYNTHETIC_EVENTS, KPROBE_EVENTS):
            before = self.snapshot()
            rc = self.write(path, "", truncate=True)
            self.succeeded("the final clear of %s" % os.path.basename(path), rc, before,
                           gone=[k for k, c in self.events.items()
                                 if c in HOSTILE_CLEARS[path]])
        rc = self.write(KERNEL_DYNAMIC_EVENTS, "-:synthetic/%s\n" % KERNEL_SYNTH)
        if rc:
            self.fail("removing the kernel's synthetic event %s: %s" % (KERNEL_SYNTH, errname(rc)))
        left = [l for l in try_read(KERNEL_DYNAMIC_EVENTS).split("\n")
                if KERNEL_EPROBES + "/" in l or KERNEL_SYNTH in l]
        if left:
            self.fail("the kernel's dynamic_events still lists %s" % left)
        if "hist:" in try_read(ev_dir(SCHED_WAKING) + "/trigger"):
            self.fail("a hist trigger is left on sched_waking")
        rc = delete_module("dynprobe")
        if rc:
            self.fail("rmmod at the end, nothing held: %s" % errname(rc))
        if os.path.exists(DYNPROBE) or module_loaded():
            self.fail("dynprobe still there after the final rmmod")
        left = [k for k in self.known_keys() if os.path.isdir(ev_dir(k))]
        if left:
            self.fail("event directories left after rmmod: %s" % left)
        self.check_kmsg()
