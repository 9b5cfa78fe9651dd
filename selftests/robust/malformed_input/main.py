#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Malformed definitions for dynprobe's control files, checked one by one.

Runs inside the test guest with dynprobe.ko loaded (see
selftests/robust/malformed_input.tc). It builds valid lines for
dynprobe/kprobe_events, dynprobe/dynamic_events and
dynprobe/function_events from the symbols of the running kernel, mutates
them (truncation, odd numbers, deep dereferences, long names and lines, bad
types, binary bytes, many arguments, duplicate names, split and multi-line
writes) and writes each result. After every write:

  accepted: each new definition is listed by its control file, its
    event's format file reads, it can be removed, and the listed text,
    written again, defines the same listing (a round trip);
  refused: the errno is one the kernel uses for refusing definitions,
    and error_log has an entry unless the refusal is of a kind the
    kernel does not log either;
  always: the definitions that were there before (a few permanent ones in
    each file) are listed unchanged, and once the new ones are removed
    every file reads exactly as before.

For a sample of the kprobe_events/dynamic_events writes (and for every
unlogged refusal) the same bytes go to the kernel's own kprobe_events or
dynamic_events. A difference in acceptance, errno, error_log entry (message,
caret, command) or listing is a violation unless it is of a kind that
known-differences.txt (beside this file) documents, with the
reason it is accepted; every definition meant for the comparison must have
been compared.

Also violations: a valid-by-construction line (no mutation, written whole)
that is refused, and fewer round trips than ROUND_TRIP_FLOOR of the
definitions (a dynprobe that refused most lines would check nothing).

Then uprobe lines (uprobe_lines.py): a fixed list of cases and seeded
mutations of valid uprobe lines, each written to dynprobe's
uprobe_events and dynamic_events and to the kernel's; a difference in
outcome, error_log entry or listing is a violation unless documented
the same way.

Environment: MALFORMED_N (number of definitions, default 2000),
MALFORMED_SEED (default 1; "random" picks one), MALFORMED_ONLY (comma
separated indices to rerun; no floor), MALFORMED_KERNEL_EVERY (compare
every Nth definition with the kernel, default 4; 0: never, for runs
without the kernel's files only), MALFORMED_KNOWN (the list of documented
differences, default the one above), MALFORMED_REPORT (file for the
summary; default $DYNPROBE_RUN/malformed-input.txt), MALFORMED_UPROBE_N
(mutated uprobe lines, default 200; none with MALFORMED_ONLY or without
the kernel comparison).
Exits 1 on any violation.

The run in files, each one concern: forms.py (the valid lines and the
kernel symbols they use), mutations.py, definitions.py (what one index
writes), listings.py (reading the control files), checker.py (the checks
of every write), compare.py (the same writes to the kernel's own files),
known.py (the documented differences), report.py (the summary). They
import each other by name: this file's directory is the first entry of
sys.path when Python runs it.
"""

import os
import random
import sys
import time

# tools/lib of the project this file is in, wherever the project is.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', '..', 'tools', 'lib'))
import tracefs  # noqa: E402
from checker import Checker  # noqa: E402
from definitions import make_definition  # noqa: E402
from forms import DP_FILES, Env  # noqa: E402
from known import KNOWN_DIFFERENCES, load_known  # noqa: E402
from listings import snapshot  # noqa: E402
from report import summary  # noqa: E402
from uprobe_lines import run_uprobe_lines  # noqa: E402
from tracefs import DYNPROBE, TRACING, read, write_pieces  # noqa: E402


# Round trips per definition below which a run fails. On the stock
# 7.2.12 kernel with the default N (2000), seeds 1 to 5 made 509, 488,
# 490, 493 and 478 round trips (0.24 to 0.25 per definition); 0.18 (360)
# leaves a quarter below the lowest for other seeds and kernels.
ROUND_TRIP_FLOOR = 0.18
# Fewer definitions than this make the share too uncertain for the floor.
FLOOR_MIN_DEFINITIONS = 500


def permanent_definitions(env):
    f1, f2 = env.perm_funcs
    return {
        'kprobe_events': [
            'p:keep/kp1 %s a=%%di b=+0(%%si):u32 s=$stack0' % env.funcs[0],
            'r:keep/kr1 %s ret=$retval:s64' % env.funcs[1],
        ],
        'dynamic_events': [
            'f:keep/f1 %s a=$arg1 c=$comm' % env.funcs[0],
            'f:keep/f2 %s%%return r=$retval:x32' % env.funcs[1],
        ],
        'function_events': [
            '%s(x64 a, u32 b)' % f1,
            '%s(x64 a) -> s32 ret' % f2,
        ],
    }


def main():
    n = int(os.environ.get('MALFORMED_N', '2000'))
    seed = os.environ.get('MALFORMED_SEED', '1')
    if seed == 'random':
        seed = str(random.SystemRandom().randrange(1 << 32))
    only = os.environ.get('MALFORMED_ONLY')
    kernel_every = int(os.environ.get('MALFORMED_KERNEL_EVERY', '4'))
    report = os.environ.get('MALFORMED_REPORT')
    if not report and os.environ.get('DYNPROBE_RUN'):
        report = os.environ['DYNPROBE_RUN'] + '/malformed-input.txt'
    indices = [int(i) for i in only.split(',')] if only else range(n)
    known_path = os.environ.get('MALFORMED_KNOWN', KNOWN_DIFFERENCES)
    try:
        known = load_known(known_path)
    except (OSError, ValueError) as e:
        print('malformed-input: the list of documented differences: %s' % e)
        return 1

    print('malformed-input: seed %s (MALFORMED_SEED=%s MALFORMED_ONLY=<index> '
          'reproduces one), %d definitions' % (seed, seed, len(indices)), flush=True)
    env = Env(random.Random('%s:env' % seed))
    print('functions: %s' % ' '.join(env.funcs))
    print('permanent function events on: %s' % ' '.join(env.perm_funcs))

    for f in DP_FILES:
        tracefs.write(DYNPROBE + '/' + f, '', truncate=True)
    perm = permanent_definitions(env)
    for f, lines in perm.items():
        res = write_pieces(DYNPROBE + '/' + f, [l.encode() + b'\n' for l in lines])
        if any(r is not None for r in res):
            print('cannot write the permanent definitions to %s: %r' % (f, res))
            return 1
    perm_state = snapshot()
    perm_formats = {}
    for grp in ('keep', 'functions'):
        for ev in sorted(os.listdir('%s/events/%s' % (TRACING, grp))):
            p = '%s/events/%s/%s/format' % (TRACING, grp, ev)
            if os.path.exists(p):
                perm_formats[p] = read(p)

    checker = Checker(seed, kernel_every, report, known)
    start = time.monotonic()
    for count, idx in enumerate(indices):
        d = make_definition(seed, idx, env)
        try:
            checker.run(idx, d)
        except Exception as e:  # a checker bug must not hide the summary
            checker.violation(idx, d, 'checker error: %r' % e)
            checker.state = snapshot()
        if count % 500 == 499:
            print('  %d done, %.0f s, %d violations' %
                  (count + 1, time.monotonic() - start, len(checker.violations)), flush=True)
            if snapshot() != perm_state:
                checker.violation(idx, d, 'permanent definitions changed')
    # Uprobe lines, where both dynprobe and the kernel take them.
    if kernel_every and not only and os.path.exists(DYNPROBE + '/uprobe_events') and \
            os.path.exists(TRACING + '/uprobe_events'):
        n_up = run_uprobe_lines(checker, seed, int(os.environ.get('MALFORMED_UPROBE_N', '200')))
        print('  uprobe lines: %d, each in two files, %.0f s, %d violations' %
              (n_up, time.monotonic() - start, len(checker.violations)), flush=True)
    elapsed = time.monotonic() - start

    end_state = snapshot()
    if end_state != perm_state:
        checker.violations.append(
            (-1, '', [], [], 'final state differs from the permanent definitions'))
    for p, fmt in perm_formats.items():
        if read(p) != fmt:
            checker.violations.append((-1, '', [], [], 'format of %s changed' % p))
    for f in DP_FILES:
        tracefs.write(DYNPROBE + '/' + f, '', truncate=True)
    # The run must have checked something: the comparisons it meant to
    # make, and round trips for a share of the definitions (a dynprobe
    # that refused every line would otherwise pass).
    # (First in the list: the summary shows the first 40.)
    if checker.kcompared != checker.kcompare_due:
        checker.violations.insert(0, (-1, '', [], [], 'compared %d definitions with the kernel, '
                                      'meant to compare %d' % (checker.kcompared,
                                                               checker.kcompare_due)))
    floor = int(ROUND_TRIP_FLOOR * len(indices))
    if not only and len(indices) >= FLOOR_MIN_DEFINITIONS and \
            checker.stats['round trips'] < floor:
        checker.violations.insert(0, (-1, '', [], [], 'only %d round trips, the floor is %d '
                                      '(%.2f per definition)' % (checker.stats['round trips'],
                                                                 floor, ROUND_TRIP_FLOOR)))
    checker.floor = floor if not only and len(indices) >= FLOOR_MIN_DEFINITIONS else None

    out = summary(checker, seed, len(indices), elapsed)
    print(out)
    if report:
        with open(report, 'w') as f:
            f.write(out)
    return 1 if checker.violations else 0


if __name__ == '__main__':
    sys.exit(main())
