#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Disabling, removing and rmdir of an instance with each allocation of
the write failing in turn (/proc/thread-self/fail-nth): the 1st, the 2nd,
... until one runs without reaching the failing one. Each time the
operation either did all it was asked, or failed with an errno and
changed nothing: the event's enable files, which instances record a hit,
the listing. A disable never fails (the tracing core ignores its error).

An event enabled in one, two and three trace instances is disabled in
each in turn (one instance left, none: the sink's single-file state;
two and three: the set of instances), and enabled with each allocation
of the enable failing; then an instance it is enabled in is removed
(rmdir) and the event itself (`-:`). A kernel report (the NULL pointer
the unfixed module wrote through when its disable could not allocate)
fails the guest run; a hang fails it by its time limit.

Prints the number of operations and failure points tried.
"""

import errno
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', '..', 'tools', 'lib'))
import tracefs  # noqa: E402

T = tracefs.TRACING
FAIL_NTH = '/proc/thread-self/fail-nth'
FAILSLAB = '/sys/kernel/debug/failslab'
GROUP, EVENT = 'dnm', 'rd'
# An entry probe on dynprobe's shared ftrace_ops. Not a kprobe at a
# function's entry: the kernel's kprobes arm those through ftrace, and a
# disable_kprobe() whose ftrace filter cannot be allocated leaves the
# kprobe marked enabled with its ftrace_ops unregistered (7.2's
# __disarm_kprobe_ftrace()), so it never fires again, whatever dynprobe
# does; dynprobe's own disable allocates nothing either way.
DEFINITION = 'f:%s/%s vfs_read count=$arg3' % (GROUP, EVENT)
LISTING = tracefs.DYNPROBE + '/dynamic_events'
INSTANCES = ['dnm0', 'dnm1', 'dnm2']

tried = {'operations': 0, 'failures': 0}


def kmsg(text):
    with open('/dev/kmsg', 'w') as f:
        f.write('dynprobe-selftest: %s\n' % text)


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def inst_dir(name):
    return '%s/instances/%s' % (T, name)


def make_instance(name):
    os.mkdir(inst_dir(name))
    # Reading its trace stops it meanwhile: the reads (vfs_read) would
    # otherwise feed the reader its own records.
    tracefs.write(inst_dir(name) + '/options/pause-on-trace', b'1', truncate=True)


def enable_path(name):
    return '%s/events/%s/%s/enable' % (inst_dir(name), GROUP, EVENT)


def enabled(name):
    return tracefs.read(enable_path(name)).strip() == b'1'


def set_enable(name, on):
    tracefs.write(enable_path(name), b'1' if on else b'0')


def recording(names):
    """Which of the instances `names` record a hit of the event."""
    for name in names:
        tracefs.write(inst_dir(name) + '/trace', b'', truncate=True)
    with open('/etc/hostname', 'rb') as f:
        f.read(16)
    return {name for name in names
            if (' %s: ' % EVENT).encode() in tracefs.read(inst_dir(name) + '/trace')}


def failing(n, syscall):
    """Runs syscall() with the n-th allocation (slab) of this thread
    failing: its errno (0 when it succeeded) and whether the n-th
    allocation was reached. Only the syscall runs between arming and
    reading fail-nth: the files it uses are opened before."""
    nth = os.open(FAIL_NTH, os.O_RDWR)
    arm = b'%d' % n
    try:
        os.write(nth, arm)
        try:
            syscall()
            err = 0
        except OSError as e:
            err = e.errno
        left = int(os.pread(nth, 32, 0) or b'0')
        os.write(nth, b'0')
    finally:
        os.close(nth)
    return err, left == 0


def write_failing(n, path, data):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        return failing(n, lambda: os.write(fd, data))
    finally:
        os.close(fd)


def each_failure(what, prepare, operation, check):
    """prepare(), then operation(n) with its n-th allocation failing, for
    n = 1, 2, ... until it does not reach the n-th; check(err) after
    each."""
    n = 1
    while True:
        prepare()
        err, reached = operation(n)
        if err and err != errno.ENOMEM:
            fail('%s with allocation %d failing: errno %d, not ENOMEM' % (what, n, err))
        check(err)
        tried['failures'] += reached
        if not reached:
            break
        n += 1
    tried['operations'] += 1
    if n == 1:
        print('%s: no allocation' % what)
    else:
        print('%s: %d allocations failed in turn' % (what, n - 1))


def expect(names, want_enabled, want_recording, what):
    got = {name for name in names if enabled(name)}
    if got != set(want_enabled):
        fail('%s: enabled in %s, expected %s' % (what, sorted(got), sorted(want_enabled)))
    rec = recording(names)
    if rec != set(want_recording):
        fail('%s: recorded in %s, expected %s' % (what, sorted(rec), sorted(want_recording)))


def disable_each(count):
    """Enabled in `count` instances, disabled in each in turn (the middle
    one first), each disable with every allocation failing in turn."""
    names = INSTANCES[:count]
    order = names[1:2] + names[:1] + names[2:]
    for i, victim in enumerate(order):
        before = set(order[i:])
        after = before - {victim}
        what = 'disable in %s of %d' % (victim, len(before))

        def prepare():
            for name in before:
                if not enabled(name):
                    set_enable(name, True)

        def check(err):
            # The tracing core may fail the write before it asks
            # dynprobe; dynprobe's disable itself never fails.
            now = before if err else after
            expect(names, now, now, what)

        each_failure(what, prepare,
                     lambda n: write_failing(n, enable_path(victim), b'0'), check)


def enable_each(count):
    """Enables the event in `count` instances one by one, each enable
    with every allocation failing in turn: enabled and recording, or
    refused with nothing changed."""
    names = INSTANCES[:count]
    for i, name in enumerate(names):
        before = set(names[:i])
        what = 'enable in %s beside %d' % (name, len(before))

        def prepare():
            if enabled(name):
                set_enable(name, False)

        def check(err):
            now = before if err else before | {name}
            expect(names, now, now, what)

        each_failure(what, prepare,
                     lambda n: write_failing(n, enable_path(name), b'1'), check)
    for name in names:
        set_enable(name, False)


def rmdir_enabled():
    """rmdir of an instance the event is enabled in, beside another one
    it is enabled in."""
    gone, stays = INSTANCES[0], INSTANCES[1]
    what = 'rmdir of an instance the event is enabled in'

    def prepare():
        if not os.path.isdir(inst_dir(gone)):
            make_instance(gone)
        for name in (gone, stays):
            if not enabled(name):
                set_enable(name, True)

    def check(err):
        if err:
            if not os.path.isdir(inst_dir(gone)):
                fail('%s: errno %d, but the instance is gone' % (what, err))
            expect([gone, stays], {gone, stays}, {gone, stays}, what)
        else:
            if os.path.isdir(inst_dir(gone)):
                fail('%s: succeeded, but the instance is there' % what)
            expect([stays], {stays}, {stays}, what)

    each_failure(what, prepare,
                 lambda n: failing(n, lambda: os.rmdir(inst_dir(gone))), check)
    make_instance(gone)
    set_enable(stays, False)


def remove_event():
    """-:GROUP/EVENT of an event enabled and disabled before."""
    listing = LISTING
    event_dir = '%s/events/%s/%s' % (T, GROUP, EVENT)
    what = 'removal of a disabled event'

    def prepare():
        if not os.path.isdir(event_dir):
            tracefs.write(listing, DEFINITION)
        set_enable(INSTANCES[0], True)
        set_enable(INSTANCES[0], False)

    def check(err):
        there = os.path.isdir(event_dir)
        listed = ('%s/%s ' % (GROUP, EVENT)).encode() in tracefs.read(listing)
        if bool(err) != there or there != listed:
            fail('%s: errno %d, event directory %s, listed %s'
                 % (what, err, there, listed))

    each_failure(what, prepare,
                 lambda n: write_failing(n, listing, ('-:%s/%s' % (GROUP, EVENT)).encode()),
                 check)


def main():
    if not os.path.exists(FAIL_NTH):
        print('no %s: the kernel has no fault injection' % FAIL_NTH)
        return 2
    saved = {name: tracefs.read('%s/%s' % (FAILSLAB, name)).strip()
             for name in ('ignore-gfp-wait', 'verbose')}
    try:
        # Sleeping allocations fail too (GFP_KERNEL is all dynprobe
        # uses), and quietly: an injected failure is not a report.
        tracefs.write('%s/ignore-gfp-wait' % FAILSLAB, b'N', truncate=True)
        tracefs.write('%s/verbose' % FAILSLAB, b'0', truncate=True)
        tracefs.write(LISTING, DEFINITION, truncate=True)
        for name in INSTANCES:
            make_instance(name)
        # The guest runner leaves out, between these markers, what the
        # kernel itself warns of when an allocation made to fail was its
        # own (tools/guest/run).
        kmsg('fault injection on')
        for count in (1, 2, 3):
            for name in INSTANCES[:count]:
                set_enable(name, True)
            disable_each(count)
            enable_each(count)
        rmdir_enabled()
        remove_event()
    finally:
        kmsg('fault injection off')
        for name, value in saved.items():
            tracefs.write('%s/%s' % (FAILSLAB, name), value, truncate=True)
    for name in INSTANCES:
        os.rmdir(inst_dir(name))
    print('%d operations, %d failure points'
          % (tried['operations'], tried['failures']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
