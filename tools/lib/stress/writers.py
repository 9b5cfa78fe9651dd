# SPDX-License-Identifier: GPL-2.0
"""The workload on every CPU, the definition lock and the writers: each
defines, enables, removes and clears its own events and keeps a ledger
of them, checked against the control files after every change."""
import errno
import glob
import json
import os
import random
import re
import time

import tracefs
from tracefs import TRACING
from stress.common import (
    CLEARS, CONTROL_FILES, DYNAMIC_EVENTS, FUNCTION_EVENTS, KIND_CLASS,
    KPROBE_EVENTS, LOCK_TIMEOUT, PERF_PAUSE, RECORD_KIND, Role, TRUNC_LOG, WORK,
    errname, func_entry_line, func_exit_line, kernel_log_tail, line_owner,
    line_place, listing, now, perf_fd_holders, perf_pids, place_funcs, probe_line, read_text)

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

                def busy():
                    return self.writer.value or self.readers.value
            else:
                def busy():
                    return self.writer.value or self.waiting.value
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
        # When a truncator last disabled every event (the log's newest
        # "quiesced" entry seen).
        self.quiesced_at = float("-inf")
        # (start, end) of every truncation written by anyone.
        self.attempts = []
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
            if entry["type"] == "attempt":
                self.attempts.append((entry["start"], entry["end"]))
            elif entry["type"] == "quiesced":
                # A truncator disabled every event, whether or not its
                # truncation then succeeded: what I enabled before may
                # be off now (read again once the lock is mine).
                self.quiesced_at = max(self.quiesced_at, entry["at"])
            elif entry["type"] == "cleared":
                gone = [k for k, ev in self.events.items()
                        if ev.cls in entry["classes"]]
                for k in gone:
                    ev = self.events.pop(k)
                    # Enabled before a truncator disabled everything is
                    # fine; enabled after that, it had to refuse.
                    if ev.enabled and ev.enabled_at > self.quiesced_at:
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

    def removal_outcome(self, what, ev, rc, gone_lines, again=None):
        """Checks a removal of gone_lines of ev; updates the ledger.
        again: the (path, command) of the removal, written once more on an
        EBUSY nothing explains (write_again_with_perf_paused)."""
        if rc == errno.EBUSY:
            if ev.enabled:
                self.count("EBUSY refusals: removal of an enabled event")
            elif self.perf_holds(ev):
                self.count("EBUSY refusals: removal of an event perf holds")
            elif again is not None:
                rc = self.write_again_with_perf_paused(*again)
                return self.removal_outcome(what + " (retried)", ev, rc, gone_lines)
            else:
                self.error("%s: EBUSY, but the event is neither enabled nor used by perf "
                           "(perf: %s; %s)" % (what, self.perf_state(), self.hold_diagnosis(ev)))
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

    def write_again_with_perf_paused(self, path, cmd):
        """Pauses the perf roles (no new run starts), waits for the runs
        alive now to end, writes the removal cmd to path again and
        resumes them; the errno. perf reads an event's id itself, after
        its heartbeat named one: when events come and go in between, the
        id it opens can be another event's (ids are reused at once),
        which then stays busy until that perf ends. A hold that outlives
        every perf run, with none starting, is not perf's."""
        pause = "%s/%s.%s" % (WORK, PERF_PAUSE, self.name)
        with open(pause, "w"):
            pass
        try:
            # A role that looked before the pause starts its run now or never.
            time.sleep(0.5)
            pids = perf_pids()
            deadline = now() + 150
            while now() < deadline and any(os.path.exists("/proc/%d" % p) for p in pids):
                time.sleep(0.1)
            self.count("EBUSY refusals: retried after the perf runs of the time ended")
            return tracefs.write_errno(path, cmd + "\n")
        finally:
            os.unlink(pause)

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
                             (path, cmd))

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
                             (path, cmd))

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
        if not self.group_outcome(what, group, members, rc, may_retry=True):
            rc = self.write_again_with_perf_paused(path, cmd)
            members = [ev for ev in self.events.values() if ev.group == group]
            self.group_outcome(what + " (retried)", group, members, rc)

    def group_outcome(self, what, group, members, rc, may_retry=False):
        """Checks a group removal and updates the ledger. False when it
        was refused and nothing explains why and may_retry: the caller
        writes it again (write_again_with_perf_paused)."""
        unexplained = None
        if not members:
            self.expect("remove group of no event", rc, (errno.ENOENT,), " " + what)
            self.verify(what)
            return True
        # A removal is all or nothing: refused with EBUSY when one of the
        # group's events is in use, and then every one of them stays.
        left = [line_owner(l) for l in listing(DYNAMIC_EVENTS) if line_owner(l)[0] == group]
        left = list(dict.fromkeys(left))
        keys = [(ev.group, ev.name) for ev in members]
        removed = [k for k in keys if k not in left]
        if rc == 0:
            if left:
                self.error("%s: OK but %s remain" % (what, left))
        elif rc == errno.EBUSY:
            self.count("EBUSY refusals: group removal refused for a busy event")
            if removed:
                self.error("%s: EBUSY, yet it removed %s (left %s)" % (what, removed, left))
            elif not any(ev.enabled or self.perf_holds(ev) for ev in members):
                unexplained = members
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
        if may_retry:
            return False
        self.error("%s: refused, but none of %s is enabled or used by perf (perf: %s; %s)" %
                   (what, ["%s/%s" % (ev.group, ev.name) for ev in unexplained],
                    self.perf_state(),
                    "; ".join("%s: %s" % (ev.name, self.hold_diagnosis(ev)) for ev in unexplained)))
        return True

    @staticmethod
    def hold_diagnosis(ev):
        """What may hold ev: its enable file and the processes that have
        perf events open."""
        try:
            state = read_text(ev.path() + "/enable").strip()
        except OSError as e:
            state = str(e)
        return "enable reads %r; perf events open in: %s" % (
            state, ", ".join(perf_fd_holders()) or "no process")

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
                self.pending.append((ev.group, ev.name, what, rc, start, now()))
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
            append_trunc_log({"type": "quiesced", "by": self.name, "at": quiesced_at})
            self.count("truncations after disabling everything")
        before = listing(DYNAMIC_EVENTS) + listing(FUNCTION_EVENTS)
        self.hb("truncate %s" % path)
        started = now()
        rc = tracefs.write_errno(path, "", truncate=True)
        # While a clear runs, the events it is removing take no new
        # enable (EBUSY), even if it ends up refused.
        append_trunc_log({"type": "attempt", "by": self.name, "start": started, "end": now()})
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
        """Unlocked enables that failed: fine if the event is gone, or if
        it was refused (EBUSY) while someone's clear was running."""
        for group, name, what, rc, start, end in self.pending:
            ev = self.events.get((group, name))
            if ev is not None and rc == errno.EBUSY and any(
                    a_start <= end and a_end >= start for a_start, a_end in self.attempts):
                self.count("unlocked enable/disable refused during a clear")
            elif ev is not None:
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
