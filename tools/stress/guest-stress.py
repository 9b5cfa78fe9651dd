#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Stress run of dynprobe inside the test guest (see tools/stress/guest).

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
printed at the end); a failure prints the step and the steps before it
("hostile" is tools/lib/stress/hostile.py).

The run's parts are in tools/lib/stress/: common (the shared words),
writers (workload, lock, ledgers), roles (readers, perf), parent (the
run and its final checks) and hostile.
"""
import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time

# tools/lib (tracefs.py and the stress run's parts), found from this file
# wherever the project is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import stress.common  # noqa: E402
from stress.hostile import Hostile  # noqa: E402
from stress.parent import Parent, kill_tree  # noqa: E402


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
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "dynprobe.ko"),
                    help="--hostile: dynprobe.ko, loaded again after an accepted rmmod "
                    "(its samples/c/dynprobe_sample.ko beside it is the API's holder)")
    args = ap.parse_args()
    stress.common.VERBOSE = args.verbose
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
