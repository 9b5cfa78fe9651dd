# SPDX-License-Identifier: GPL-2.0
"""The parent of the stress run: forks the roles, watches their
heartbeats, and checks ledgers, records, rmmod and kmemleak at the end."""
import errno
import glob
import json
import multiprocessing
import os
import re
import signal
import subprocess
import time

import tracefs
from tracefs import DYNPROBE, TRACING
from stress.common import (
    CANDIDATES, CONTROL_FILES, DYNAMIC_EVENTS, ENABLES_WITHOUT_RECORD,
    FUNCTION_EVENTS, GRACE, IN_USE, KIND_CLASS, KPROBE_EVENTS, PROFILE,
    RECORD_KIND, RETVAL_KINDS, Role, STALL, WORK, delete_module, errname,
    func_entry_line, func_exit_line, listing, module_loaded, module_refcnt,
    now, place_funcs, probe_line, read_text)
from stress.writers import RWLock, Writer, read_trunc_log, run_hammer
from stress.roles import run_file_reader, run_perf, run_pipe_reader

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
            self.log("no kprobe_events of the kernel's: "
                     "dynprobe's tell which functions return void")
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
        for _n, r in sorted(reports.items()):
            if "ledger" not in r:
                continue
            events = r["ledger"]
            # Truncations after this writer's last look.
            for entry in log[r["log_seen"]:]:
                if entry["type"] in ("quiesced", "attempt"):
                    continue
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
