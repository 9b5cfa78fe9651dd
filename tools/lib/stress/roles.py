# SPDX-License-Identifier: GPL-2.0
"""The readers of the trace, the control files and the format files, and
the perf roles."""
import glob
import os
import random
import re
import subprocess
import time

from tracefs import DYNPROBE, TRACING
from stress.common import (
    CONTROL_FILES, DYNAMIC_EVENTS, FUNCTION_EVENTS, PERF_PAUSE, PROFILE, WORK,
    errname, line_owner, listing, now, read_text)

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
        if glob.glob("%s/%s.*" % (WORK, PERF_PAUSE)):
            role.hb("paused: a writer retries a removal")
            time.sleep(0.1)
            continue
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
            role.count("perf %s failed (%s)"
                       % (mode, "event still there" if still else "event gone"))
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
