# SPDX-License-Identifier: GPL-2.0
"""The stress run's shared words: the control files, the kinds of
definition and their lines, the heartbeat and report every role keeps,
the module's state (tools/stress/guest-stress.py)."""
import ctypes
import errno
import json
import os
import re
import subprocess
import time

from tracefs import DYNPROBE

KPROBE_EVENTS = DYNPROBE + "/kprobe_events"
DYNAMIC_EVENTS = DYNPROBE + "/dynamic_events"
FUNCTION_EVENTS = DYNPROBE + "/function_events"
PROFILE = DYNPROBE + "/kprobe_profile"
CONTROL_FILES = (KPROBE_EVENTS, DYNAMIC_EVENTS, FUNCTION_EVENTS)
WORK = "/tmp/dynprobe-stress"
TRUNC_LOG = WORK + "/truncations"
# WORK/PERF_PAUSE.WRITER exists while a writer retries a removal: the perf
# roles start no run meanwhile.
PERF_PAUSE = "perf-pause"
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


def perf_fd_holders():
    """Processes holding a perf event file open: "comm[pid]" each."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % d)
            n = sum(1 for fd in fds
                    if os.readlink("/proc/%s/fd/%s" % (d, fd)) == "anon_inode:[perf_event]")
            if n:
                out.append("%s[%s] %d" % (read_text("/proc/%s/comm" % d).strip(), d, n))
        except OSError:
            pass
    return out


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
    return ["r:" + l[len(DEFAULT_MAXACTIVE_PREFIX):]
            if l.startswith(DEFAULT_MAXACTIVE_PREFIX) else l
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


IN_USE = (errno.EWOULDBLOCK, errno.EBUSY)


def delete_module(name):
    libc = ctypes.CDLL(None, use_errno=True)
    ret = libc.syscall(176, name.encode(), os.O_NONBLOCK)   # delete_module
    return 0 if ret == 0 else ctypes.get_errno()


def module_loaded():
    return any(l.split()[0] == "dynprobe" for l in open("/proc/modules"))


def module_refcnt():
    return int(read_text("/sys/module/dynprobe/refcnt").strip())
