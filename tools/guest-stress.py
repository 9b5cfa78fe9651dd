#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Stress run of dynprobe inside the test guest (see tools/guest-stress).

For --seconds, at once: a workload on every CPU that keeps hitting the
probed functions; several writers defining, enabling, disabling, removing
and clearing kprobe, kretprobe, fprobe and function events, each keeping a
ledger of the definitions it believes exist; readers of the trace, the
control files and the events' format files; perf record/stat on the
events. Then: every ledger against the control files, rmmod refused while
an event is in use and accepted once all is cleared, kmemleak (when the
kernel has it) for leaks from dynprobe.

Ledger rules (the documented semantics the writers rely on):
- every writer owns its groups, event names and the functions of its
  function events; nobody else defines or removes them;
- definitions and removals happen under a shared lock, a truncating write
  (O_TRUNC) under the exclusive lock, so a truncation never overlaps a
  writer's change;
- a truncation refused with EBUSY removed nothing; a successful one removed
  every definition of the kinds that file owns (kprobe_events: p/r;
  dynamic_events: p/r/f; function_events: function events), whoever
  defined them. The truncating writer checks both against the listings and
  appends what was removed to a log that every writer applies the next
  time it takes the lock, so each ledger stays exact.

Enabling and disabling need no lock: a truncation racing with them must
either refuse (EBUSY, nothing removed) or come first (the enable fails);
writers check such failures against the log once they hold the lock.

Before the run, every line a writer may write (each line form on each
function it may be placed on) is defined once, alone, and must be accepted
and listed as written: in the run, a refusal counts as a bug. Return probes
fetching $retval go only on functions that return a value (the kernel's own
kprobe_events tell which); on the others dynprobe must refuse them as the
kernel does (NO_RETVAL, ENOENT). --check-lines does only these checks.

After the run: a run in which no probe fired fails, and so does one in
which a kind of definition (kprobe, kretprobe, fprobe entry and exit,
function entry and exit) was enabled ENABLES_WITHOUT_RECORD times or more
and left no record in trace_pipe.

Exit status 0 when no check failed. The roles are forked child processes;
the parent kills them and everything they started on exit.

--hostile (with --seed N, --steps M, --seconds S, --ko PATH) runs instead
a seeded sequence of holds on dynprobe's events from outside it against
rmmod, clears, truncations and removals, in one process: see "hostile"
below for its rules. The same seed gives the same sequence (its digest is
printed at the end); a failure prints the step and the steps before it.
"""

import argparse
import ctypes
import errno
import glob
import hashlib
import json
import multiprocessing
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time

# tools/lib/tracefs.py, found from this file wherever the project is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import tracefs  # noqa: E402
from tracefs import DYNPROBE, TRACING  # noqa: E402

KPROBE_EVENTS = DYNPROBE + "/kprobe_events"
DYNAMIC_EVENTS = DYNPROBE + "/dynamic_events"
FUNCTION_EVENTS = DYNPROBE + "/function_events"
PROFILE = DYNPROBE + "/kprobe_profile"
CONTROL_FILES = (KPROBE_EVENTS, DYNAMIC_EVENTS, FUNCTION_EVENTS)
WORK = "/tmp/dynprobe-stress"
TRUNC_LOG = WORK + "/truncations"
LOCK_TIMEOUT = 240.0     # waiting for the definition lock
STALL = 240.0            # a role that reports nothing for this long is stuck
GRACE = 240.0            # after the deadline, for the roles to finish

# Functions the workload calls on every iteration (directly or through the
# syscalls it makes); those the guest kernel can trace are probed.
CANDIDATES = ("vfs_read", "vfs_write", "do_sys_openat2", "getname_flags",
              "kfree", "ksys_read", "ksys_write", "do_filp_open", "vfs_open",
              "path_openat", "rw_verify_area", "security_file_open", "fput",
              "filp_close", "putname", "dput", "vfs_fstatat", "vfs_statx",
              "do_dentry_open")

# Kinds of definition, by which file clears them.
KIND_CLASS = {"p": "k", "r": "k", "fe": "f", "fx": "f", "F": "F", "FX": "F"}
# Kinds of definition, as the pipe reader names their records
# (classify_record): every kind the writers enable must leave records.
RECORD_KIND = {"p": "kprobe", "r": "kretprobe", "fe": "fentry", "fx": "fexit",
               "F": "function entry", "FX": "function exit"}
# Enables of one kind after which a run without any record of it fails.
ENABLES_WITHOUT_RECORD = 10
CLEARS = {KPROBE_EVENTS: {"k"}, DYNAMIC_EVENTS: {"k", "f"},
          FUNCTION_EVENTS: {"F"}}

# Function event lines of a few functions with meaningful arguments; any
# other function gets generic ones.
FUNC_ENTRY = {
    "do_sys_openat2": "do_sys_openat2(int dfd, string path)",
    "getname_flags": "getname_flags(string name, int flags)",
    "vfs_read": "vfs_read(x64 file, NULL, u64 count)",
    "vfs_write": "vfs_write(x64 file, NULL, u64 count)",
    "kfree": "kfree(x64 ptr)",
}


def func_entry_line(func):
    return FUNC_ENTRY.get(func, "%s(x64 first, NULL, u32 third)" % func)


def func_exit_line(func):
    return "%s(x64 first) -> s64 ret" % func


def probe_line(kind, group, name, func):
    if kind == "p":
        return "p:%s/%s %s a1=%%di:x64 a2=%%si:u32 comm=$comm" % (group, name, func)
    if kind == "r":
        return "r:%s/%s %s ret=$retval:s64" % (group, name, func)
    if kind == "fe":
        return "f:%s/%s %s a1=$arg1:x64 a2=$arg2:u32" % (group, name, func)
    if kind == "fx":
        return "f:%s/%s %s%%return ret=$retval:s64 a1=$arg1:x64" % (group, name, func)
    raise ValueError(kind)


# Kinds whose lines fetch $retval: the kernel's probe events (and
# dynprobe's) refuse them on a function that returns void (NO_RETVAL,
# ENOENT), so they go on functions that return a value only.
RETVAL_KINDS = ("r", "fx")


def place_funcs(kind, funcs, valued):
    """The functions a writer may place a probe of kind on (valued: those
    of funcs that return a value)."""
    return valued if kind in RETVAL_KINDS else funcs


def line_owner(line):
    """(group, event) of a listing line, the function events' included."""
    m = re.match(r"^[pfr]\d*:([^/\s]+)/(\S+)\s", line)
    if m:
        return m.group(1), m.group(2)
    m = re.match(r"^([A-Za-z0-9_.]+)\(.*\)( -> .*)?$", line)
    if m:
        func = m.group(1).replace(".", "_")
        return "functions", func + ("__exit" if m.group(2) else "")
    return None, None


def line_place(line):
    words = line.split()
    if len(words) < 2 or line_owner(line)[0] == "functions":
        return None
    return words[1].replace("%return", "")


VERBOSE = False


def now():
    return time.monotonic()


def read_text(path, limit=None):
    with open(path, "rb") as f:
        data = f.read() if limit is None else f.read(limit)
    return data.decode(errors="replace")


def perf_pids():
    """The perf processes alive now."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if read_text("/proc/%s/comm" % d).strip() == "perf":
                    pids.append(int(d))
            except OSError:
                pass
    return pids


def possible_cpus():
    """The number of possible CPUs (/sys/devices/system/cpu/possible: "0-1,4")."""
    n = 0
    for part in read_text("/sys/devices/system/cpu/possible").strip().split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


# A kretprobe defined without maxactive is listed with the kernel's default
# written out (r10:), as the kernel's own probe events list it. The writers
# define and track such lines as "r:": listings are read back in that form.
DEFAULT_MAXACTIVE_PREFIX = "r%d:" % max(10, 2 * possible_cpus())


def listing(path):
    return ["r:" + l[len(DEFAULT_MAXACTIVE_PREFIX):] if l.startswith(DEFAULT_MAXACTIVE_PREFIX) else l
            for l in read_text(path).split("\n") if l]


def kernel_log_tail(n=6):
    """The last lines of the kernel log, for errors the kernel may explain."""
    try:
        out = subprocess.run(["dmesg"], stdout=subprocess.PIPE, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return "\n    dmesg: " + "\n    dmesg: ".join(out.decode(errors="replace").splitlines()[-n:])


def errname(e):
    return "OK" if e == 0 else errno.errorcode.get(e, str(e))


class Heartbeat:
    """What a role is doing, and since when, for the parent's watchdog."""

    def __init__(self, name):
        self.name = name
        self.fd = os.open("%s/hb.%s" % (WORK, name),
                          os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        # --verbose: every step on the console too, which survives a
        # crash of the guest.
        self.verbose = VERBOSE and not name.startswith(("hammer", "pipe", "files"))

    def __call__(self, what):
        data = ("%.1f %s" % (now(), what)).encode()[:200].ljust(200)
        os.pwrite(self.fd, data, 0)
        if self.verbose:
            print("[%.1f %s] %s" % (now(), self.name, what), flush=True)


class Role:
    """Common state of a child: counters, errors, the report file."""

    def __init__(self, name, deadline):
        self.name = name
        self.deadline = deadline
        self.counts = {}
        self.errors = []
        self.hb = Heartbeat(name)
        self.extra = {}

    def count(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n

    def error(self, msg):
        self.errors.append("%s: %s" % (self.name, msg))
        print("[stress] ERROR %s: %s" % (self.name, msg), flush=True)

    def running(self):
        return now() < self.deadline

    def report(self):
        rep = {"name": self.name, "counts": self.counts, "errors": self.errors}
        rep.update(self.extra)
        tmp = "%s/report.%s.tmp" % (WORK, self.name)
        with open(tmp, "w") as f:
            json.dump(rep, f)
        os.rename(tmp, "%s/report.%s.json" % (WORK, self.name))


# ---------------------------------------------------------------- workload

def run_hammer(role, cpu):
    """Keeps calling open/read/write/stat/close on one CPU."""
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        pass
    data = "%s/hammer%d" % (WORK, cpu)
    with open(data, "wb") as f:
        f.write(b"dynprobe stress\n" * 64)
    buf = b"x" * 200
    while role.running():
        role.hb("hammering")
        for _ in range(200):
            fd = os.open(data, os.O_RDONLY)
            os.read(fd, 64)
            os.close(fd)
            fd = os.open("/dev/null", os.O_WRONLY)
            os.write(fd, buf)
            os.close(fd)
            os.stat(data)
        role.count("iterations", 200)


# ---------------------------------------------------------------- locking

class RWLock:
    """The definition lock: shared for a writer's own changes, exclusive
    for truncations; a waiting exclusive request holds new shared ones
    back. Built on multiprocessing's semaphores (futexes): the guest
    kernel has no file locks. Every wait is bounded."""

    def __init__(self, ctx):
        self.cond = ctx.Condition(ctx.Lock())
        self.readers = ctx.RawValue("i", 0)
        self.writer = ctx.RawValue("i", 0)
        self.waiting = ctx.RawValue("i", 0)

    def acquire(self, role, exclusive, idle=None):
        """Takes the lock within LOCK_TIMEOUT; while waiting for it, calls
        idle() now and then."""
        kind = "exclusive" if exclusive else "shared"
        role.hb("waiting for the %s lock" % kind)
        end = now() + LOCK_TIMEOUT
        if not self.cond.acquire(timeout=LOCK_TIMEOUT):
            role.error("lock state not acquired in %d s" % LOCK_TIMEOUT)
            return False
        try:
            if exclusive:
                self.waiting.value += 1
                busy = lambda: self.writer.value or self.readers.value
            else:
                busy = lambda: self.writer.value or self.waiting.value
            while busy():
                left = end - now()
                if left <= 0:
                    role.error("%s lock not acquired in %d s (readers %d, writer %d)" %
                               (kind, LOCK_TIMEOUT, self.readers.value, self.writer.value))
                    if exclusive:
                        self.waiting.value -= 1
                        self.cond.notify_all()
                    return False
                if idle:
                    self.cond.release()
                    try:
                        idle()
                    finally:
                        self.cond.acquire()
                    if not busy():
                        break
                self.cond.wait(min(left, 0.1 if idle else 1.0))
            if exclusive:
                self.waiting.value -= 1
                self.writer.value = 1
            else:
                self.readers.value += 1
            return True
        finally:
            self.cond.release()

    def release(self, exclusive):
        with self.cond:
            if exclusive:
                self.writer.value = 0
            else:
                self.readers.value -= 1
            self.cond.notify_all()


def read_trunc_log(start):
    """Entries of the truncation log from index start on."""
    try:
        with open(TRUNC_LOG) as f:
            entries = [json.loads(l) for l in f if l.strip()]
    except FileNotFoundError:
        entries = []
    return entries[start:]


def append_trunc_log(entry):
    with open(TRUNC_LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


# ---------------------------------------------------------------- writers

class Event:
    def __init__(self, kind, group, name, lines, funcs):
        self.kind = kind
        self.group = group
        self.name = name
        self.lines = lines          # listing lines, probe order
        self.funcs = funcs          # probed function of each line
        self.enabled = False
        self.enabled_at = 0.0       # when the write that enabled it began

    @property
    def cls(self):
        return KIND_CLASS[self.kind]

    def path(self):
        return "%s/events/%s/%s" % (TRACING, self.group, self.name)


class Writer(Role):
    def __init__(self, name, deadline, index, funcs, valued, my_funcs, lock):
        super().__init__(name, deadline)
        self.index = index
        self.funcs = funcs
        self.valued = valued
        self.my_funcs = my_funcs
        self.kgroup = "stress%dk" % index
        self.fgroup = "stress%df" % index
        self.events = {}            # (group, name) -> Event, creation order
        self.log_seen = 0
        self.lock = lock
        self.rng = random.Random(os.getpid() ^ int(time.time()))
        self.slots = []
        for n in range(3):
            self.slots.append(("p", self.kgroup, "w%dkprobe%d" % (index, n)))
            self.slots.append(("fe", self.fgroup, "w%dfentry%d" % (index, n)))
        for n in range(2):
            self.slots.append(("r", self.kgroup, "w%dkretprobe%d" % (index, n)))
            self.slots.append(("fx", self.fgroup, "w%dfexit%d" % (index, n)))
        for func in my_funcs:
            self.slots.append(("F", "functions", func))
            self.slots.append(("FX", "functions", func + "__exit"))

    # -- the ledger

    def owns_line(self, line):
        group, event = line_owner(line)
        if group in (self.kgroup, self.fgroup):
            return True
        if group == "functions":
            return event.replace("__exit", "") in self.my_funcs
        return False

    def expected(self, path):
        classes = {KPROBE_EVENTS: {"k"}, DYNAMIC_EVENTS: {"k", "f"},
                   FUNCTION_EVENTS: {"F"}}[path]
        return [l for ev in self.events.values() if ev.cls in classes
                for l in ev.lines]

    def apply_log(self):
        """Applies truncations done by anyone since the last look."""
        for entry in read_trunc_log(self.log_seen):
            self.log_seen += 1
            if entry["type"] == "cleared":
                gone = [k for k, ev in self.events.items()
                        if ev.cls in entry["classes"]]
                quiesced = entry.get("quiesced_at")
                for k in gone:
                    ev = self.events.pop(k)
                    # Enabled before a truncator disabled everything is
                    # fine; enabled after that, it had to refuse.
                    if ev.enabled and (quiesced is None or ev.enabled_at > quiesced):
                        self.error("%s cleared %s while %s/%s was enabled by me"
                                   % (entry["by"], entry["file"], ev.group, ev.name))
            elif entry["type"] == "lines":
                for line in entry["lines"]:
                    if self.owns_line(line):
                        self.drop_line(line)

    def drop_line(self, line):
        key = line_owner(line)
        ev = self.events.get(key)
        if ev is None or line not in ev.lines:
            return
        i = ev.lines.index(line)
        del ev.lines[i]
        del ev.funcs[i]
        if not ev.lines:
            del self.events[key]

    def verify(self, what):
        """Own lines of every control file equal the ledger, in order."""
        ok = True
        for path in CONTROL_FILES:
            actual = [l for l in listing(path) if self.owns_line(l)]
            want = self.expected(path)
            if actual != want:
                ok = False
                self.error("after %s: %s lists %s, ledger says %s" %
                           (what, os.path.basename(path), actual, want))
        if not ok:
            self.resync()
        return ok

    def resync(self):
        """After a reported mismatch: adopt what the files list, so that
        one bug is reported once."""
        old = self.events
        self.events = {}
        for line in listing(DYNAMIC_EVENTS) + listing(FUNCTION_EVENTS):
            if not self.owns_line(line):
                continue
            key = line_owner(line)
            ev = self.events.get(key)
            if ev is None:
                kind = next(k for k, g, n in self.slots if (g, n) == key)
                ev = Event(kind, key[0], key[1], [], [])
                ev.enabled = key in old and old[key].enabled
                self.events[key] = ev
            ev.lines.append(line)
            ev.funcs.append(line_place(line))

    def check_dir(self, ev, present, what):
        if os.path.isdir(ev.path()) != present:
            self.error("after %s: %s %s" % (what, ev.path(),
                       "missing" if present else "still exists"))

    def expect(self, what, rc, allowed, detail="", line=None):
        """Counts rc; an rc not allowed is an error, reported with the
        line written (if given), its error_log entry and the kernel log."""
        self.count("%s %s" % (what, errname(rc)))
        if self.hb.verbose:
            self.hb("  -> %s" % errname(rc))
        if rc not in allowed:
            if line is not None:
                detail += " %r (error_log: %s)" % (line, tracefs.error_log_message(line))
            self.error("%s%s: %s, expected %s%s" %
                       (what, detail, errname(rc), "/".join(errname(a) for a in allowed),
                        kernel_log_tail()))
            return False
        return True

    # -- operations (called with the shared lock held unless noted)

    def free_slots(self):
        return [s for s in self.slots if (s[1], s[2]) not in self.events]

    def op_define(self):
        free = self.free_slots()
        if not free:
            return self.op_remove()
        kind, group, name = self.rng.choice(free)
        if kind in ("F", "FX"):
            func = name.replace("__exit", "")
            line = func_entry_line(func) if kind == "F" else func_exit_line(func)
            path, place = FUNCTION_EVENTS, None
        else:
            func = self.rng.choice(place_funcs(kind, self.funcs, self.valued))
            line = probe_line(kind, group, name, func)
            path = DYNAMIC_EVENTS if KIND_CLASS[kind] == "f" or self.rng.random() < 0.5 \
                else KPROBE_EVENTS
            place = func
        self.hb("define %s" % line)
        rc = tracefs.write_errno(path, line + "\n")
        if self.expect("define %s" % kind, rc, (0,), line=line):
            ev = Event(kind, group, name, [line], [place])
            self.events[(group, name)] = ev
            self.check_dir(ev, True, "define")
        self.verify("define %s" % line)

    def op_append(self):
        multi = [ev for ev in self.events.values()
                 if ev.cls in ("k", "f") and len(ev.lines) < 3]
        if not multi:
            return self.op_define()
        ev = self.rng.choice(multi)
        others = [f for f in place_funcs(ev.kind, self.funcs, self.valued) if f not in ev.funcs]
        if not others:
            return
        func = self.rng.choice(others)
        line = probe_line(ev.kind, ev.group, ev.name, func)
        path = DYNAMIC_EVENTS if ev.cls == "f" or self.rng.random() < 0.5 else KPROBE_EVENTS
        self.hb("append %s" % line)
        rc = tracefs.write_errno(path, line + "\n")
        if self.expect("append probe", rc, (0,), line=line):
            ev.lines.append(line)
            ev.funcs.append(func)
        self.verify("append %s" % line)

    def op_duplicate(self):
        if not self.events:
            return self.op_define()
        ev = self.rng.choice(list(self.events.values()))
        path = FUNCTION_EVENTS if ev.cls == "F" else DYNAMIC_EVENTS
        self.hb("duplicate %s" % ev.lines[0])
        rc = tracefs.write_errno(path, ev.lines[0] + "\n")
        self.expect("duplicate definition", rc, (errno.EEXIST,), line=ev.lines[0])
        self.verify("duplicate %s" % ev.lines[0])

    def op_bad_line(self):
        group, name = self.kgroup, "w%dbad" % self.index
        line = "p:%s/%s %s a1=%%zz" % (group, name, self.rng.choice(self.funcs))
        rc = tracefs.write_errno(self.rng.choice((KPROBE_EVENTS, DYNAMIC_EVENTS)), line + "\n")
        self.expect("malformed line", rc, (errno.EINVAL,), line=line)
        self.verify("malformed line")

    def removal_outcome(self, what, ev, rc, gone_lines, retry=None):
        """Checks a removal of gone_lines of ev; updates the ledger.
        retry() writes the removal again (see busy_after_perf_runs)."""
        if rc == errno.EBUSY:
            if ev.enabled:
                self.count("EBUSY refusals: removal of an enabled event")
            elif self.perf_holds(ev):
                self.count("EBUSY refusals: removal of an event perf holds")
            elif retry is not None and self.await_perf_runs():
                self.count("EBUSY refusals: retried after the perf runs of the time ended")
                return self.removal_outcome(what + " (retried)", ev, retry(), gone_lines)
            else:
                self.error("%s: EBUSY, but the event is neither enabled nor used by perf "
                       "(perf: %s)" % (what, self.perf_state()))
        elif rc == 0:
            if ev.enabled:
                self.error("%s: OK although the event is enabled" % what)
            for line in gone_lines:
                self.drop_line(line)
        else:
            self.expect(what, rc, (0, errno.EBUSY))
        self.check_dir(ev, (ev.group, ev.name) in self.events, what)
        self.verify(what)

    @staticmethod
    def perf_holds(ev):
        """Whether a perf role is (or just was) using ev: it names its
        event, and the event's id, in its heartbeat before it starts perf."""
        try:
            ev_id = int(read_text(ev.path() + "/id"))
        except (OSError, ValueError):
            ev_id = None
        for role in ("perfrecord", "perfstat"):
            try:
                what = read_text("%s/hb.%s" % (WORK, role))
            except OSError:
                continue
            if (" %s:%s " % (ev.group, ev.name)) in what or \
                    (ev_id is not None and "[id=%d]" % ev_id in what):
                return True
        return False

    def await_perf_runs(self):
        """Waits for the perf processes running now to end; False if none
        ran. perf reads an event's id itself, after its heartbeat named
        one: when events come and go in between, the id it opens can be
        another event's (ids are reused at once), which then stays busy
        until that perf ends. A hold that outlives every perf run of its
        time is not perf's."""
        pids = perf_pids()
        if not pids:
            return False
        deadline = now() + 150
        while now() < deadline and any(os.path.exists("/proc/%d" % p) for p in pids):
            time.sleep(0.1)
        return True

    @staticmethod
    def perf_state():
        out = []
        for role in ("perfrecord", "perfstat"):
            try:
                t, what = read_text("%s/hb.%s" % (WORK, role)).strip().split(" ", 1)
                out.append("%s %.1f s ago: %s" % (role, now() - float(t), what))
            except (OSError, ValueError):
                pass
        return "; ".join(out)

    def op_remove(self):
        if not self.events:
            return self.op_define()
        ev = self.rng.choice(list(self.events.values()))
        if ev.cls == "F":
            cmd = self.rng.choice(("-:functions/%s", "-:%s")) % ev.name
            path = FUNCTION_EVENTS
        else:
            way = self.rng.choice(("group", "nogroup", "bang"))
            # "!f:G/E SYM%return ..." names no place the kernel's fprobe
            # matches (it compares the bare symbol): not used.
            if way == "bang" and len(ev.lines) == 1 and ev.kind != "fx":
                cmd, path = "!" + ev.lines[0], DYNAMIC_EVENTS
            else:
                cmd = ("-:%s/%s" % (ev.group, ev.name)) if way != "nogroup" \
                    else "-:%s" % ev.name
                path = self.rng.choice((KPROBE_EVENTS, DYNAMIC_EVENTS)) \
                    if ev.cls == "k" else DYNAMIC_EVENTS
        self.hb("remove %s" % cmd)
        rc = tracefs.write_errno(path, cmd + "\n")
        self.count("remove event")
        self.removal_outcome("remove %s in %s" % (cmd, os.path.basename(path)),
                             ev, rc, list(ev.lines),
                             lambda: tracefs.write_errno(path, cmd + "\n"))

    def op_remove_probe(self):
        multi = [ev for ev in self.events.values() if len(ev.lines) > 1]
        if not multi:
            return self.op_append()
        ev = self.rng.choice(multi)
        i = self.rng.randrange(len(ev.lines))
        if self.rng.random() < 0.5 or ev.kind == "fx":
            cmd = "-:%s/%s %s" % (ev.group, ev.name, ev.funcs[i])
        else:
            cmd = "!" + ev.lines[i]
        path = DYNAMIC_EVENTS if ev.cls == "f" or cmd[0] == "!" else \
            self.rng.choice((KPROBE_EVENTS, DYNAMIC_EVENTS))
        self.hb("remove probe %s" % cmd)
        rc = tracefs.write_errno(path, cmd + "\n")
        self.count("remove one probe")
        self.removal_outcome("remove probe %s" % cmd, ev, rc, [ev.lines[i]],
                             lambda: tracefs.write_errno(path, cmd + "\n"))

    def op_remove_group(self):
        group = self.rng.choice((self.kgroup, self.fgroup))
        members = [ev for ev in self.events.values() if ev.group == group]
        path = DYNAMIC_EVENTS if group == self.fgroup else \
            self.rng.choice((KPROBE_EVENTS, DYNAMIC_EVENTS))
        cmd = "-:%s/" % group
        self.hb("remove group %s" % cmd)
        rc = tracefs.write_errno(path, cmd + "\n")
        self.count("remove group")
        what = "remove group %s in %s" % (cmd, os.path.basename(path))
        if not self.group_outcome(what, group, members, rc, retry=self.await_perf_runs):
            self.count("EBUSY refusals: retried after the perf runs of the time ended")
            rc = tracefs.write_errno(path, cmd + "\n")
            members = [ev for ev in self.events.values() if ev.group == group]
            self.group_outcome(what + " (retried)", group, members, rc)

    def group_outcome(self, what, group, members, rc, retry=None):
        """Checks a group removal and updates the ledger. False when it
        stopped at an event nothing explains and retry() (run once the
        ledger is up to date) says to try again."""
        unexplained = None
        if not members:
            self.expect("remove group of no event", rc, (errno.ENOENT,), " " + what)
            self.verify(what)
            return True
        # Events go in creation order until the first busy one, which
        # stops the removal with EBUSY (as the kernel's dyn_event_release
        # does): what remains must be a suffix of the group.
        left = [line_owner(l) for l in listing(DYNAMIC_EVENTS) if line_owner(l)[0] == group]
        left = list(dict.fromkeys(left))
        keys = [(ev.group, ev.name) for ev in members]
        removed = [k for k in keys if k not in left]
        if rc == 0:
            if left:
                self.error("%s: OK but %s remain" % (what, left))
        elif rc == errno.EBUSY:
            self.count("EBUSY refusals: group removal stopped at a busy event")
            if keys[len(removed):] != left or not left:
                self.error("%s: EBUSY left %s of %s (not a suffix)" % (what, left, keys))
            elif left[0] in self.events:
                first = self.events[left[0]]
                if not first.enabled and not self.perf_holds(first):
                    unexplained = first
        else:
            self.expect(what, rc, (0, errno.EBUSY))
        for k in removed:
            ev = self.events[k]
            if ev.enabled:
                self.error("%s removed %s/%s, which I had enabled" % (what, k[0], k[1]))
            for line in list(ev.lines):
                self.drop_line(line)
            self.check_dir(ev, False, what)
        self.verify(what)
        if unexplained is None:
            return True
        if retry is not None and retry():
            return False
        self.error("%s: stopped at %s/%s, which is neither enabled nor used by perf "
                   "(perf: %s)" % (what, unexplained.group, unexplained.name,
                                   self.perf_state()))
        return True

    def op_wrong_file(self):
        fev = [ev for ev in self.events.values() if ev.cls == "f"]
        if not fev:
            return self.op_define()
        ev = self.rng.choice(fev)
        cmd = "-:%s/%s" % (ev.group, ev.name)
        rc = tracefs.write_errno(KPROBE_EVENTS, cmd + "\n")
        self.expect("fprobe removal through kprobe_events", rc, (errno.ENOENT,))
        self.verify("fprobe removal through kprobe_events")

    def op_remove_missing(self):
        free = self.free_slots()
        if not free:
            return self.op_remove()
        kind, group, name = self.rng.choice(free)
        if kind in ("F", "FX"):
            path, cmd = FUNCTION_EVENTS, "-:functions/%s" % name
        else:
            path, cmd = DYNAMIC_EVENTS, "-:%s/%s" % (group, name)
        rc = tracefs.write_errno(path, cmd + "\n")
        self.expect("removal of a missing event", rc, (errno.ENOENT,))
        self.verify("removal of a missing event")

    def set_enable(self, ev, on, unlocked=False):
        self.hb("enable %d %s/%s" % (on, ev.group, ev.name))
        start = now()
        rc = tracefs.write_errno(ev.path() + "/enable", "%d\n" % on, truncate=True)
        what = "%s event" % ("enable" if on else "disable")
        if unlocked:
            if rc != 0:
                # A truncation may have removed it since the ledger was
                # read: checked once the lock is held again.
                self.pending.append((ev.group, ev.name, what, rc))
            else:
                ev.enabled = bool(on)
                ev.enabled_at = start
                if on:
                    self.count("enabled: " + RECORD_KIND[ev.kind])
            return
        if self.expect(what, rc, (0,), " %s/%s" % (ev.group, ev.name)):
            ev.enabled = bool(on)
            ev.enabled_at = start
            if on:
                self.count("enabled: " + RECORD_KIND[ev.kind])
            state = read_text(ev.path() + "/enable").strip()
            if state != str(on):
                self.error("%s/%s: enable reads %r after writing %d" %
                           (ev.group, ev.name, state, on))

    def op_enable(self):
        off = [ev for ev in self.events.values() if not ev.enabled]
        if not off:
            return self.op_disable()
        if self.rng.random() < 0.2:
            # The whole group through its enable file.
            group = self.rng.choice((self.kgroup, self.fgroup))
            members = [ev for ev in self.events.values() if ev.group == group]
            if members:
                start = now()
                rc = tracefs.write_errno("%s/events/%s/enable" % (TRACING, group), "1\n", True)
                if self.expect("enable group", rc, (0,)):
                    for ev in members:
                        if not ev.enabled:
                            self.count("enabled: " + RECORD_KIND[ev.kind])
                        ev.enabled = True
                        ev.enabled_at = start
                return
        self.set_enable(self.rng.choice(off), 1)

    def op_disable(self):
        on = [ev for ev in self.events.values() if ev.enabled]
        if not on:
            return
        if self.rng.random() < 0.3:
            for ev in on:
                self.set_enable(ev, 0)
            return
        self.set_enable(self.rng.choice(on), 0)

    def op_truncate(self):
        """Clears one file under the exclusive lock (already held)."""
        path = self.rng.choice(CONTROL_FILES)
        classes = CLEARS[path]
        mine_on = [ev for ev in self.events.values()
                   if ev.cls in classes and ev.enabled]
        quiesced_at = None
        if self.rng.random() < 0.5:
            # Every writer's events of those kinds disabled first, so that
            # some truncations succeed; the owners read their events'
            # state again when they next take the lock. Unlocked enables
            # and perf may still make it fail.
            self.hb("disabling every event before truncating %s" % path)
            for d in glob.glob(TRACING + "/events/stress*/*/enable") + \
                    glob.glob(TRACING + "/events/functions/*/enable"):
                if self.line_class_of_dir(d) in classes:
                    tracefs.write_errno(d, "0\n", truncate=True)
            for ev in mine_on:
                ev.enabled = False
            mine_on = []
            quiesced_at = now()
            self.count("truncations after disabling everything")
        before = listing(DYNAMIC_EVENTS) + listing(FUNCTION_EVENTS)
        self.hb("truncate %s" % path)
        rc = tracefs.write_errno(path, "", truncate=True)
        after = listing(DYNAMIC_EVENTS) + listing(FUNCTION_EVENTS)
        name = os.path.basename(path)
        what = "truncate %s" % name
        self.count("%s %s" % (what, errname(rc)))
        of_classes = [l for l in after if self.line_class(l) in classes]
        if rc == errno.EBUSY:
            self.count("EBUSY refusals: truncation")
            if before != after:
                gone = [l for l in before if l not in after]
                new = [l for l in after if l not in before]
                self.error("%s refused with EBUSY but removed %d definitions: %s%s" %
                           (what, len(gone), gone, " (and added %s)" % new if new else ""))
                append_trunc_log({"type": "lines", "by": self.name, "file": name,
                                  "lines": gone})
        elif rc == 0:
            if mine_on:
                self.error("%s succeeded while I had %s enabled" %
                           (what, ["%s/%s" % (e.group, e.name) for e in mine_on]))
            if of_classes:
                self.error("%s succeeded but left %s" % (what, of_classes))
            append_trunc_log({"type": "cleared", "by": self.name, "file": name,
                              "classes": sorted(classes), "quiesced_at": quiesced_at})
            gone = [l for l in before if self.line_class(l) in classes]
            self.count("definitions removed by truncations", len(gone))
        else:
            self.error("%s: %s" % (what, errname(rc)))
        self.apply_log()
        self.verify(what)

    @staticmethod
    def line_class_of_dir(path):
        """Kind class of the event whose enable file is path."""
        group = path.split("/")[-3]
        if group == "functions":
            return "F"
        return "k" if group.endswith("k") else "f"

    @staticmethod
    def line_class(line):
        if re.match(r"^[pr]\d*:", line):
            return "k"
        if line.startswith("f:"):
            return "f"
        return "F"

    def run(self):
        self.pending = []
        ops = ((self.op_define, 22), (self.op_append, 6), (self.op_duplicate, 3),
               (self.op_bad_line, 1), (self.op_remove, 12), (self.op_remove_probe, 4),
               (self.op_remove_group, 2), (self.op_wrong_file, 1),
               (self.op_remove_missing, 1), (self.op_enable, 16), (self.op_disable, 14),
               (self.op_truncate, 8), ("unlocked", 6))
        funcs = [o for o, _ in ops]
        weights = [w for _, w in ops]
        while self.running():
            op = self.rng.choices(funcs, weights)[0]
            if op == "unlocked":
                self.unlocked_toggle()
                continue
            exclusive = op == self.op_truncate
            # Waiting for the lock means a truncation is under way (or
            # about to be): one enable at a random moment of the wait may
            # come after the truncation found nothing busy.
            self.idle_at = now() + self.rng.uniform(0, 2.5)
            if not self.lock.acquire(self, exclusive, self.while_waiting):
                continue
            try:
                self.apply_log()
                self.check_pending()
                op()
                self.count("ops")
            finally:
                self.lock.release(exclusive)
            time.sleep(self.rng.random() * 0.05)
        # Final state, for the parent's ledger check.
        if self.lock.acquire(self, False):
            try:
                self.apply_log()
                self.check_pending()
                self.verify("the end of the run")
            finally:
                self.lock.release(False)
        self.extra["ledger"] = [{"kind": ev.kind, "group": ev.group, "name": ev.name,
                                 "lines": ev.lines, "enabled": ev.enabled}
                                for ev in self.events.values()]
        self.extra["log_seen"] = self.log_seen

    def while_waiting(self):
        if self.idle_at is not None and now() >= self.idle_at:
            self.idle_at = None
            self.unlocked_toggle()

    def unlocked_toggle(self):
        """Enables (or, with all enabled, disables) one of my events
        without the lock: races with truncations by the others."""
        off = [ev for ev in self.events.values() if not ev.enabled]
        if off:
            self.set_enable(self.rng.choice(off), 1, unlocked=True)
        elif self.events:
            self.set_enable(self.rng.choice(list(self.events.values())), 0, unlocked=True)
        else:
            return
        self.count("unlocked enable/disable")

    def check_pending(self):
        """Unlocked enables that failed: fine only if the event is gone."""
        for group, name, what, rc in self.pending:
            ev = self.events.get((group, name))
            if ev is not None:
                self.error("%s %s/%s: %s while the event exists" %
                           (what, group, name, errname(rc)))
            else:
                self.count("unlocked enable/disable of an event cleared meanwhile")
        self.pending = []
        # A truncating writer may have disabled events; nobody enables them
        # but their owner.
        for ev in self.events.values():
            try:
                on = read_text(ev.path() + "/enable").strip() == "1"
            except OSError as e:
                self.error("%s/%s: enable file: %s" % (ev.group, ev.name, e))
                continue
            if on and not ev.enabled:
                self.error("%s/%s is enabled, but not by me" % (ev.group, ev.name))
            ev.enabled = on


# ---------------------------------------------------------------- readers

# After "TASK-PID [CPU] FLAGS TIMESTAMP: ": "EVENT: ..." for probe events,
# "CALLER->FUNC(...)" for function events, "CALLER <- FUNC(...)" at exit.
RECORD_RE = re.compile(rb"^\s*\S.*?\[\d+\]\s+\S+\s+[\d.]+: "
                       rb"(?:(?P<event>[\w.]+): |\S+?->(?P<func>[\w.]+)\(|"
                       rb"\S+ <- (?P<exit>[\w.]+)\()")


def classify_record(line):
    m = RECORD_RE.match(line)
    if not m:
        return None
    if m.group("func"):
        return "function entry"
    if m.group("exit"):
        return "function exit"
    name = m.group("event")
    k = re.match(rb"w\d+(kprobe|kretprobe|fentry|fexit)\d+$", name)
    return k.group(1).decode() if k else "other (%s)" % name.decode()


def run_pipe_reader(role):
    """trace_pipe (consuming) and, every 5 s, the first MiB of trace."""
    fd = os.open(TRACING + "/trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
    rest = b""
    last_trace = 0.0
    try:
        while role.running():
            role.hb("reading trace_pipe")
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                chunk = b""
            if not chunk:
                time.sleep(0.05)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                kind = classify_record(line)
                if kind:
                    role.count("trace_pipe records: " + kind)
            if now() - last_trace > 5:
                # The first MiB: a whole buffer takes minutes under TCG.
                role.hb("reading trace")
                with open(TRACING + "/trace", "rb") as f:
                    n = f.read(1 << 20).count(b"\n")
                role.count("trace reads")
                role.count("trace lines read", n)
                last_trace = now()
    finally:
        os.close(fd)


def run_file_reader(role, own_groups):
    """Control files, kprobe_profile, README and format files."""
    rng = random.Random(os.getpid())
    others = glob.glob(TRACING + "/events/*/*/format")
    while role.running():
        for path in CONTROL_FILES + (PROFILE, DYNPROBE + "/README"):
            role.hb("reading " + path)
            try:
                text = read_text(path)
                role.count("control file reads")
            except OSError as e:
                role.error("reading %s: %s" % (path, e))
                continue
            if path == PROFILE:
                for line in text.split("\n"):
                    if line and len(line.split()) != 3:
                        role.error("kprobe_profile line %r" % line)
        formats = []
        for g in own_groups + ["functions"]:
            formats += glob.glob("%s/events/%s/*/format" % (TRACING, g))
        formats += rng.sample(others, min(5, len(others)))
        for path in formats:
            role.hb("reading " + path)
            name = path.split("/")[-2]
            try:
                text = read_text(path)
            except OSError as e:
                # Removed between the listing and the open.
                role.count("format reads failed (%s)" % errname(e.errno))
                continue
            role.count("format reads")
            if text and not text.startswith("name: %s\n" % name):
                role.error("%s starts %r" % (path, text[:60]))
        time.sleep(0.02)


# ---------------------------------------------------------------- perf

def run_perf(role, mode):
    """perf record (mode "record") or perf stat (mode "stat") on one
    dynprobe event after another, system-wide for a second each."""
    rng = random.Random(os.getpid())
    out = "%s/%s.data" % (WORK, role.name)
    while role.running():
        events = []
        for line in listing(DYNAMIC_EVENTS) + listing(FUNCTION_EVENTS):
            group, event = line_owner(line)
            if group:
                events.append("%s:%s" % (group, event))
        events = sorted(set(events))
        if not events:
            time.sleep(0.5)
            continue
        ev = rng.choice(events)
        try:
            ev_id = int(read_text("%s/events/%s/id" % (TRACING, ev.replace(":", "/"))))
        except (OSError, ValueError):
            continue
        if mode == "record":
            # No build-id processing: it costs seconds under TCG.
            cmd = ["perf", "record", "-q", "-B", "-N", "-e", ev, "-a", "-o", out,
                   "--", "sleep", "1"]
        else:
            cmd = ["perf", "stat", "-x,", "-e", ev, "-a", "--", "sleep", "1"]
        # perf resolves the name to the event's id, then opens the id some
        # time later: if the event went and another got its id meanwhile,
        # perf holds that one. The heartbeat names both.
        role.hb("%s [id=%d]" % (" ".join(cmd), ev_id))
        try:
            p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120)
        except subprocess.TimeoutExpired:
            role.error("%s did not finish in 120 s" % " ".join(cmd))
            continue
        err = p.stderr.decode(errors="replace")
        if p.returncode != 0:
            # Mostly the event went away before perf opened it (perf takes
            # seconds to start under TCG, and the writers churn faster on
            # a kernel without lockdep). A failure on an event that is
            # still there, with the same id, is perf failing for real.
            try:
                still = int(read_text("%s/events/%s/id" % (TRACING, ev.replace(":", "/")))) == ev_id
            except (OSError, ValueError):
                still = False
            role.count("perf %s failed (%s)" % (mode, "event still there" if still else "event gone"))
            fails = role.extra.setdefault("perf failures", [])
            if len(fails) < 5:
                fails.append("%s: %s" % (" ".join(cmd), err.strip()[-300:]))
            continue
        role.count("perf %s runs" % mode)
        if mode == "record":
            role.hb("perf script " + ev)
            try:
                s = subprocess.run(["perf", "script", "-i", out, "-F", "event"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, timeout=120)
                role.count("perf record samples", s.stdout.count(b"\n"))
            except subprocess.TimeoutExpired:
                role.error("perf script -i %s did not finish in 120 s" % out)
        else:
            for line in err.split("\n"):
                f = line.split(",")
                if len(f) > 2 and f[2] == ev and f[0].isdigit():
                    role.count("perf stat counted", int(f[0]))
    if not role.counts.get("perf %s runs" % mode) and \
            role.counts.get("perf %s failed (event still there)" % mode, 0) > 0:
        role.error("perf %s never succeeded, also on events that stayed: %s" %
                   (mode, role.extra.get("perf failures")))


# ---------------------------------------------------------------- parent

def child_main(role_name, name, deadline, nice, kw):
    """Body of a child process (forked by Parent.spawn)."""
    try:
        os.nice(nice)
    except OSError:
        pass
    signal.signal(signal.SIGTERM, lambda *a: os._exit(3))
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if role_name == "writer":
        role = Writer(name, deadline, kw["index"], kw["funcs"], kw["valued"], kw["my_funcs"],
                      kw["lock"])
        body = role.run
    else:
        role = Role(name, deadline)
        body = {"hammer": lambda: run_hammer(role, kw["cpu"]),
                "pipe": lambda: run_pipe_reader(role),
                "files": lambda: run_file_reader(role, kw["groups"]),
                "perf": lambda: run_perf(role, kw["mode"])}[role_name]
    try:
        body()
    except Exception as e:  # reported, not raised: the parent counts it
        import traceback
        role.error("crashed: %r\n%s" % (e, traceback.format_exc()))
    role.hb("done")
    role.report()


def descendants(pid):
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def kill_tree(sig):
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def task_state(pid):
    out = []
    for f in ("comm", "wchan", "stack"):
        try:
            out.append("%s: %s" % (f, read_text("/proc/%d/%s" % (pid, f)).strip()))
        except OSError as e:
            out.append("%s: %s" % (f, e))
    return "\n    ".join(out)


# delete_module() refuses a module with references with EWOULDBLOCK (the
# rmmod tool prints "is in use"); EBUSY would be its answer for a module
# others depend on.
IN_USE = (errno.EWOULDBLOCK, errno.EBUSY)


def delete_module(name):
    libc = ctypes.CDLL(None, use_errno=True)
    ret = libc.syscall(176, name.encode(), os.O_NONBLOCK)   # delete_module
    return 0 if ret == 0 else ctypes.get_errno()


def module_loaded():
    return any(l.split()[0] == "dynprobe" for l in open("/proc/modules"))


def module_refcnt():
    return int(read_text("/sys/module/dynprobe/refcnt").strip())


class Parent:
    def __init__(self, seconds):
        self.seconds = seconds
        self.errors = []
        self.children = {}
        self.start = now()
        self.leaks = []
        self.ledger_ok = False
        self.expected_events = []

    def error(self, msg):
        self.errors.append("main: " + msg)
        print("[stress] ERROR main: %s" % msg, flush=True)

    def log(self, msg):
        print("[stress %5.0fs] %s" % (now() - self.start, msg), flush=True)

    def probeable(self):
        traceable = set(read_text(TRACING + "/available_filter_functions").split())
        syms = {}
        with open("/proc/kallsyms") as f:
            for line in f:
                w = line.split()
                if len(w) >= 3 and w[2] in CANDIDATES:
                    syms[w[2]] = syms.get(w[2], 0) + 1
        funcs = [f for f in CANDIDATES if f in traceable and syms.get(f) == 1]
        return funcs

    def returning_value(self, funcs):
        """Those of funcs that return a value, as the kernel's own kprobe
        events tell: they refuse $retval on a void function (NO_RETVAL)."""
        oracle = TRACING + "/kprobe_events"
        if not os.path.exists(oracle):
            self.log("no kprobe_events of the kernel's: dynprobe's tell which functions return void")
            oracle = DYNAMIC_EVENTS
        valued = []
        for func in funcs:
            line = probe_line("r", "stressretval", "probe", func)
            rc = tracefs.write_errno(oracle, line + "\n")
            if rc == 0:
                valued.append(func)
                tracefs.write_errno(oracle, "-:stressretval/probe\n")
            elif rc != errno.ENOENT or "void" not in (tracefs.error_log_message(line) or ""):
                self.error("%s refuses %r: %s (error_log: %s)" %
                           (oracle, line, errname(rc), tracefs.error_log_message(line)))
        return valued

    def check_templates(self, funcs, valued):
        """Every line a writer may write (each line form on each function
        it may be placed on) is accepted and listed as written: during
        the run, a refusal counts as a bug of dynprobe. The $retval forms
        on the void functions are refused as the kernel refuses them."""
        for i, func in enumerate(f for f in funcs if f not in valued):
            for kind in RETVAL_KINDS:
                line = probe_line(kind, "stresscheck", "void%s%d" % (kind, i), func)
                rc = tracefs.write_errno(DYNAMIC_EVENTS, line + "\n")
                why = tracefs.error_log_message(line)
                if rc != errno.ENOENT or "void" not in (why or ""):
                    self.error("defining %r (void function): %s (error_log: %s), "
                               "expected ENOENT as the kernel's" % (line, errname(rc), why))
        lines = [probe_line(kind, "stresscheck", "form%s%d" % (kind, i), func)
                 for kind in ("p", "r", "fe", "fx")
                 for i, func in enumerate(place_funcs(kind, funcs, valued))]
        flines = [func_entry_line(f) for f in funcs] + [func_exit_line(f) for f in funcs]
        accepted = []
        for path, batch in ((DYNAMIC_EVENTS, lines), (FUNCTION_EVENTS, flines)):
            for line in batch:
                rc = tracefs.write_errno(path, line + "\n")
                if rc:
                    self.error("defining %r: %s (error_log: %s)" %
                               (line, errname(rc), tracefs.error_log_message(line)))
                else:
                    accepted.append(line)
        got = listing(DYNAMIC_EVENTS) + listing(FUNCTION_EVENTS)
        if got != accepted:
            self.error("line forms not listed as written: %s, expected %s" % (got, accepted))
        self.log("line forms: %d of %d probe lines and %d of %d function event lines accepted" %
                 (len([l for l in accepted if l in lines]), len(lines),
                  len([l for l in accepted if l in flines]), len(flines)))
        for path in (DYNAMIC_EVENTS, FUNCTION_EVENTS):
            rc = tracefs.write_errno(path, "", truncate=True)
            if rc:
                self.error("clearing %s: %s" % (path, errname(rc)))

    def spawn(self, name, role, nice=0, **kw):
        p = self.ctx.Process(target=child_main, name=name,
                             args=(role, name, self.deadline, nice, kw))
        p.start()
        self.children[name] = p

    def watch(self):
        """Until every child is done or stuck; reports stalls."""
        reported = set()
        end = self.deadline + GRACE
        while now() < end:
            alive = [n for n, p in self.children.items() if p.is_alive()]
            if not alive:
                return
            for n in alive:
                try:
                    t, what = read_text("%s/hb.%s" % (WORK, n)).strip().split(" ", 1)
                except (OSError, ValueError):
                    continue
                if now() - float(t) > STALL and n not in reported:
                    reported.add(n)
                    self.error("%s made no progress for %d s, in: %s\n    %s" %
                               (n, STALL, what, task_state(self.children[n].pid)))
            time.sleep(2)
        for n, p in self.children.items():
            if p.is_alive():
                self.error("%s still running %d s after the deadline:\n    %s" %
                           (n, GRACE, task_state(p.pid)))

    def prepare(self):
        """Empty control files, the functions to probe, and the check of
        the lines the writers may write; None after an error."""
        if not os.path.isdir(DYNPROBE):
            raise SystemExit("dynprobe is not loaded (no %s)" % DYNPROBE)
        for path in CONTROL_FILES:
            rc = tracefs.write_errno(path, "", truncate=True)
            if rc:
                raise SystemExit("cannot clear %s at the start: %s" % (path, errname(rc)))
        tracefs.write_errno(TRACING + "/tracing_on", "1\n", truncate=True)
        funcs = self.probeable()
        if len(funcs) < 4:
            raise SystemExit("too few probeable functions: %s" % funcs)
        self.log("probed functions: %s" % " ".join(funcs))
        valued = self.returning_value(funcs)
        if len(valued) < 2 and not self.errors:
            raise SystemExit("too few probeable functions return a value: %s" % valued)
        self.log("returning void (no return probes with $retval): %s" %
                 (" ".join(f for f in funcs if f not in valued) or "none"))
        self.check_templates(funcs, valued)
        return None if self.errors else (funcs, valued)

    def check_lines(self):
        """--check-lines: only the start-up check of the writers' lines."""
        self.prepare()
        for e in self.errors:
            self.log("  " + e)
        self.log("FAILED" if self.errors else "PASSED")

    def run(self):
        if os.path.exists(WORK):
            subprocess.run(["rm", "-rf", WORK])
        os.makedirs(WORK)
        kmemleak = "/sys/kernel/debug/kmemleak"
        have_kmemleak = os.path.exists(kmemleak)
        if have_kmemleak:
            tracefs.write_errno(kmemleak, "clear", truncate=True)
        prepared = self.prepare()
        if prepared is None:
            return
        funcs, valued = prepared

        self.ctx = multiprocessing.get_context("fork")
        lock = RWLock(self.ctx)
        ncpu = os.cpu_count()
        nwriters = max(4, 2 * ncpu)
        self.deadline = now() + self.seconds
        self.log("running %d s: %d CPUs, %d writers, 2 readers, perf record, perf stat" %
                 (self.seconds, ncpu, nwriters))
        for cpu in range(ncpu):
            self.spawn("hammer%d" % cpu, "hammer", nice=5, cpu=cpu)
        groups = []
        for i in range(nwriters):
            # A function's events belong to one writer only.
            mine = funcs[i::nwriters]
            self.spawn("writer%d" % i, "writer", index=i, funcs=funcs, valued=valued,
                       my_funcs=mine, lock=lock)
            groups += ["stress%dk" % i, "stress%df" % i]
        self.spawn("pipe", "pipe")
        self.spawn("files", "files", groups=groups)
        self.spawn("perfrecord", "perf", mode="record")
        self.spawn("perfstat", "perf", mode="stat")
        self.watch()
        self.log("roles finished; checking")
        kill_tree(signal.SIGTERM)
        time.sleep(1)
        kill_tree(signal.SIGKILL)

        reports = {}
        for n in self.children:
            try:
                with open("%s/report.%s.json" % (WORK, n)) as f:
                    reports[n] = json.load(f)
            except (OSError, ValueError):
                self.error("%s left no report (exit status %s)" %
                           (n, self.children[n].exitcode))
        for r in reports.values():
            self.errors += r["errors"]
        self.check_records(reports)
        self.check_ledgers(reports)
        profile = self.profile_totals()
        self.check_rmmod(have_kmemleak)
        self.log("rmmod checks done")
        self.print_summary(reports, profile)

    def check_records(self, reports):
        """Probes that fired: every kind of definition that was enabled
        during the run must have left records in trace_pipe (the workload
        calls every probed function all the time on every CPU), and some
        must have. A kind the writers enabled only a few times (they pick
        at random, and another writer's truncation may disable it at
        once: a 25 s run on the stock kernel enabled kretprobes 2 to 8
        times, and once twice without a hit) is only reported."""
        total = {}
        for r in reports.values():
            for k, v in r["counts"].items():
                total[k] = total.get(k, 0) + v
        if "pipe" not in reports:
            return      # already an error: the pipe reader left no report
        for kind in RECORD_KIND.values():
            enabled = total.get("enabled: " + kind, 0)
            records = total.get("trace_pipe records: " + kind, 0)
            if enabled and not records:
                report = self.error if enabled >= ENABLES_WITHOUT_RECORD else self.log
                report("%s events were enabled %d times, but trace_pipe showed no "
                       "record of one" % (kind, enabled))
        if not any(total.get("trace_pipe records: " + k, 0) for k in RECORD_KIND.values()):
            self.error("no probe fired: trace_pipe showed no record of any event")
        self.log("records per kind (enabled / trace_pipe records): %s" % ", ".join(
            "%s %d/%d" % (kind, total.get("enabled: " + kind, 0),
                          total.get("trace_pipe records: " + kind, 0))
            for kind in RECORD_KIND.values()))

    def check_ledgers(self, reports):
        """What the ledgers say exists against what the files list."""
        log = read_trunc_log(0)
        want = {path: [] for path in CONTROL_FILES}
        self.expected_events = []
        for n, r in sorted(reports.items()):
            if "ledger" not in r:
                continue
            events = r["ledger"]
            # Truncations after this writer's last look.
            for entry in log[r["log_seen"]:]:
                if entry["type"] == "cleared":
                    events = [e for e in events if KIND_CLASS[e["kind"]] not in entry["classes"]]
                else:
                    for e in events:
                        e["lines"] = [l for l in e["lines"] if l not in entry["lines"]]
                    events = [e for e in events if e["lines"]]
            for e in events:
                cls = KIND_CLASS[e["kind"]]
                for path in CONTROL_FILES:
                    if cls in {KPROBE_EVENTS: "k", DYNAMIC_EVENTS: "kf",
                               FUNCTION_EVENTS: "F"}[path]:
                        want[path] += e["lines"]
                self.expected_events.append((e["group"], e["name"]))
        ok = True
        self.ledger_sizes = {}
        for path in CONTROL_FILES:
            got = sorted(listing(path))
            exp = sorted(want[path])
            self.ledger_sizes[os.path.basename(path)] = len(exp)
            if got != exp:
                ok = False
                self.error("ledger check: %s lists %d lines, the ledgers %d\n"
                           "    only listed: %s\n    only in ledgers: %s" %
                           (os.path.basename(path), len(got), len(exp),
                            [l for l in got if l not in exp], [l for l in exp if l not in got]))
        dirs = set()
        for d in glob.glob(TRACING + "/events/stress*/*/") + \
                glob.glob(TRACING + "/events/functions/*/"):
            parts = d.rstrip("/").split("/")
            dirs.add((parts[-2], parts[-1]))
        if dirs != set(self.expected_events):
            ok = False
            self.error("event directories %s, ledgers %s" %
                       (sorted(dirs - set(self.expected_events)),
                        sorted(set(self.expected_events) - dirs)))
        self.ledger_ok = ok
        self.log("ledger check: %s (%s definitions per file: %s; %d truncations logged)" %
                 ("OK" if ok else "FAILED", "expected", self.ledger_sizes, len(log)))

    def profile_totals(self):
        hits = misses = 0
        for line in listing(PROFILE):
            w = line.split()
            hits += int(w[1])
            misses += int(w[2])
        return hits, misses

    def rmmod_refused(self, what):
        """rmmod while the module must stay: an error unless refused as in
        use. Returns the answer's name ("OK" when it was accepted)."""
        rc = delete_module("dynprobe")
        if rc not in IN_USE:
            self.error("rmmod %s: %s, expected EWOULDBLOCK" % (what, errname(rc)))
        return errname(rc)

    def check_rmmod(self, have_kmemleak):
        # An enabled event keeps the module.
        if not self.expected_events:
            tracefs.write_errno(DYNAMIC_EVENTS, "p:stressfinal/finalprobe vfs_read\n")
            self.expected_events.append(("stressfinal", "finalprobe"))
        group, name = sorted(self.expected_events)[0]
        evdir = "%s/events/%s/%s" % (TRACING, group, name)
        for g in {g for g, _ in self.expected_events}:
            if g != "functions":
                tracefs.write_errno("%s/events/%s/enable" % (TRACING, g), "0\n", truncate=True)
        for g, n in self.expected_events:
            tracefs.write_errno("%s/events/%s/%s/enable" % (TRACING, g, n), "0\n", truncate=True)
        rc = tracefs.write_errno(evdir + "/enable", "1\n", truncate=True)
        if rc:
            self.error("enabling %s/%s for the rmmod check: %s" % (group, name, errname(rc)))
        self.rmmod_enabled = self.rmmod_refused("with %s/%s enabled" % (group, name))
        if self.rmmod_enabled == "OK":
            return
        tracefs.write_errno(evdir + "/enable", "0\n", truncate=True)

        # perf holding an event keeps it too.
        base = module_refcnt()
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "%s:%s" % (group, name), "-a",
                                 "-B", "-N", "-o", WORK + "/perf-final.data", "--", "sleep", "5"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        end = now() + 60
        while module_refcnt() <= base and perf.poll() is None and now() < end:
            time.sleep(0.2)
        if module_refcnt() > base:
            self.rmmod_perf = self.rmmod_refused("while perf records %s/%s" % (group, name))
            if self.rmmod_perf == "OK":
                return
        else:
            self.rmmod_perf = "not tried"
            self.error("perf record -e %s:%s took no module reference (refcnt %d)" %
                       (group, name, module_refcnt()))
        try:
            perf.wait(timeout=120)
        except subprocess.TimeoutExpired:
            perf.kill()
            self.error("final perf record did not end")

        # Disabled and cleared, it goes.
        for path in (DYNAMIC_EVENTS, FUNCTION_EVENTS, KPROBE_EVENTS):
            rc = tracefs.write_errno(path, "", truncate=True)
            if rc:
                self.error("final clear of %s: %s" % (path, errname(rc)))
            if listing(path):
                self.error("%s not empty after clearing: %s" % (path, listing(path)))
        left = glob.glob(TRACING + "/events/stress*") + glob.glob(TRACING + "/events/functions")
        if left:
            self.error("event directories left after clearing: %s" % left)
        self.leaks = []
        if have_kmemleak:
            self.leaks = self.kmemleak_scan(None)
        module_ranges = self.module_text()
        rc = delete_module("dynprobe")
        self.rmmod_clear = errname(rc)
        if rc != 0:
            self.error("rmmod after clearing everything: %s (refcnt %d)" %
                       (errname(rc), module_refcnt()))
        elif os.path.exists(DYNPROBE) or module_loaded():
            self.error("dynprobe still present after rmmod")
        if have_kmemleak and rc == 0:
            self.leaks += self.kmemleak_scan(module_ranges)

    @staticmethod
    def module_text():
        """Address range of dynprobe's symbols, for reports after unload."""
        addrs = []
        with open("/proc/kallsyms") as f:
            for line in f:
                if line.rstrip().endswith("[dynprobe]"):
                    a = int(line.split()[0], 16)
                    if a:
                        addrs.append(a)
        return (min(addrs), max(addrs) + 0x10000) if addrs else None

    def kmemleak_scan(self, module_range):
        path = "/sys/kernel/debug/kmemleak"
        # Objects younger than kmemleak's minimum age are not reported.
        time.sleep(6)
        tracefs.write_errno(path, "scan", truncate=True)
        time.sleep(5)
        tracefs.write_errno(path, "scan", truncate=True)
        text = read_text(path)
        reports = ["unreferenced object" + r for r in text.split("unreferenced object")[1:]]
        leaks = []
        for r in reports:
            mine = "dynprobe" in r
            if module_range and not mine:
                # After the unload, %pS prints dynprobe's addresses bare.
                trace = r.split("backtrace", 1)[-1]
                for a in re.findall(r"0x([0-9a-f]{16})\b", trace):
                    if module_range[0] <= int(a, 16) < module_range[1]:
                        mine = True
            if mine:
                leaks.append(r)
        self.log("kmemleak: %d reports, %d from dynprobe%s" %
                 (len(reports), len(leaks), " (after unload)" if module_range else ""))
        for r in leaks:
            self.error("kmemleak report from dynprobe:\n" + r)
        return leaks

    def print_summary(self, reports, profile):
        total = {}
        for r in reports.values():
            for k, v in r["counts"].items():
                total[k] = total.get(k, 0) + v
        self.log("==== summary (%d s)" % self.seconds)
        width = max([len(k) for k in total] + [10])
        for k in sorted(total):
            self.log("  %-*s %d" % (width, k, total[k]))
        ebusy = sum(v for k, v in total.items() if k.startswith("EBUSY refusals"))
        records = sum(v for k, v in total.items() if k.startswith("trace_pipe records"))
        self.log("  %-*s %d" % (width, "EBUSY refusals (all)", ebusy))
        self.log("  %-*s %d" % (width, "records seen in trace_pipe", records))
        self.log("  %-*s %d hits, %d misses" % (width, "kprobe_profile at the end",
                                                profile[0], profile[1]))
        self.log("  ledger check: %s; rmmod with an event enabled: %s, while perf "
                 "records: %s, after clearing: %s; kmemleak reports from dynprobe: %s" %
                 ("OK" if self.ledger_ok else "FAILED", getattr(self, "rmmod_enabled", "-"),
                  getattr(self, "rmmod_perf", "-"), getattr(self, "rmmod_clear", "-"),
                  len(self.leaks) if os.path.exists("/sys/kernel/debug/kmemleak")
                  else "no kmemleak"))
        for n, r in sorted(reports.items()):
            for msg in r.get("perf failures", [])[:3]:
                self.log("  (%s, a failed run: %s)" % (n, msg.replace("\n", " | ")))
        if self.errors:
            self.log("%d errors:" % len(self.errors))
            for e in self.errors[:100]:
                self.log("  " + e)
            self.log("FAILED")
        else:
            self.log("PASSED")


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
                 ("dynprobe_sample_c", "open"): "k"}
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
# summary. The last two are bugs being fixed in src/; the first (found by
# this sequence) is what src/shim/synth.c chose: an ownerless synthetic
# event pins nothing, and what holds it at unload is left to the kernel.
KNOWN_EXCEPTIONS = {
    "synth-left-to-kernel": "rmmod is accepted while only holds on dynprobe's synthetic "
                            "events remain; those events stay, as the kernel's (dmesg: "
                            "\"left to the kernel's synthetic_events\"), until the hold goes "
                            "and the kernel's dynamic_events removes them",
    "eprobe-group-source-first": "a removal of a group holding one of dynprobe's event "
                                 "probes and its source, the source listed first, is "
                                 "refused with EBUSY (it removes what comes before the "
                                 "source)",
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
        src/shim/synth.c makes them with no owner), or the API's sample,
        which depends on it."""
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
                "hist:keys=common_pid:%s=common_timestamp.usecs-$%s:onmatch(%s.%s).trace(%s,$%s)" % \
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
        # The members go in the order they are listed until the first busy
        # one, which stops the removal with EBUSY (the kernel's
        # dyn_event_release()); dynprobe's event probe of the group goes
        # before its source.
        busy = [k for k in order if self.busy_in_group(k, group)]
        if not busy and rc == errno.EBUSY and any(
                ep in order and src in order and order.index(src) < order.index(ep)
                for ep, src in EPROBES.items()):
            left = self.gone_in_group(group, order, before, what)
            self.known("eprobe-group-source-first", "%s: EBUSY, left %s" % (what, left))
            self.verify_model(what)
            return
        if not busy:
            self.succeeded(what, rc, before, gone=order)
            self.count("group removals accepted")
            return
        if rc != errno.EBUSY:
            self.fail("%s (busy: %s): %s, expected EBUSY" % (what, busy, errname(rc)))
        left = self.gone_in_group(group, order, before, what)
        if not set(busy) <= set(left):
            self.fail("%s (busy: %s) removed %s" % (what, busy, sorted(set(busy) - set(left))))
        if left and left[0] not in busy and not any(
                EPROBES.get(k) == left[0] for k in left):
            self.fail("%s (busy: %s): left %s, which starts with an event nothing holds" %
                      (what, busy, left))
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
            self.log("reproduce: tools/guest-stress.py --hostile --seed %d --steps %d "
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


def main():
    ap = argparse.ArgumentParser(description="dynprobe stress run (in the guest)")
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--verbose", action="store_true",
                    help="print every operation of the writers and perf")
    ap.add_argument("--check-lines", action="store_true",
                    help="only check that every line the writers may write is accepted")
    ap.add_argument("--hostile", action="store_true",
                    help="instead: a seeded random sequence of holds on dynprobe's events "
                    "from outside it, and rmmod, clears and removals tried against them")
    ap.add_argument("--seed", type=int, default=None,
                    help="--hostile: the sequence's seed (default: a random one, printed)")
    ap.add_argument("--steps", type=int, default=0,
                    help="--hostile: stop after this many steps (0: at --seconds)")
    ap.add_argument("--ko", default=os.environ.get("DYNPROBE_KO") or os.path.join(
                        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "dynprobe.ko"),
                    help="--hostile: dynprobe.ko, loaded again after an accepted rmmod "
                    "(its samples/c/dynprobe_sample.ko beside it is the API's holder)")
    args = ap.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    if args.hostile:
        seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
        hostile = Hostile(seed, args.steps, args.seconds, os.path.abspath(args.ko), args.verbose)
        try:
            ok = hostile.run()
        finally:
            for p in hostile.holders.values():
                if isinstance(p, subprocess.Popen) and p.poll() is None:
                    p.kill()
        return 0 if ok else 1
    # Orphans of the roles (a perf whose role was killed) stay ours to kill.
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    parent = Parent(args.seconds)

    def on_signal(sig, frame):
        parent.error("killed by signal %d" % sig)
        raise SystemExit(1)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        if args.check_lines:
            parent.check_lines()
        else:
            parent.run()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        kill_tree(signal.SIGTERM)
        time.sleep(0.5)
        kill_tree(signal.SIGKILL)
    return 1 if parent.errors else 0


if __name__ == "__main__":
    sys.exit(main())
