#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Probes that read bad memory on purpose, dynprobe against the kernel.

Runs inside the test guest with dynprobe.ko loaded (see
selftests/robust/fault_reads.tc). Every fetch argument below is defined
twice on ksys_write(fd, buf, count): in the kernel's kprobe_events and
dynamic_events (groups kfr, kff) and in dynprobe's (groups dfr, dff), one
tested argument per event so that no other string of the record changes
what a faulting one shows. This process then calls write() on /dev/null
with buf pointing at good and bad places (NULL, user memory with and
without a terminator before an unmapped page, kernel text, non-canonical
addresses, an unused hole of the kernel half, a vmalloc guard page) and a
count that marks the call. The kernel's events trace into one instance,
dynprobe's into another, both filtered on this process; for each marker
and event the two records must print alike. Where Linux 7.2 leaves a field
unwritten (a dereference that faults before a string is reached, see
Documentation/definition-language.md) the difference is expected and
listed as such.

dynprobe's function events have no kernel counterpart: their values are
checked against what the buffers hold.

The compared set is fixed: every event below, on both sides, on every
target (the vmalloc guard page included), so EVENTS x TARGETS pairs. An
event either side refuses, a missing target, or a pair without a record on
a side is a problem, except the few pairs both sides drop by design
(DROPPED); the summary counts the pairs compared and fails when they fall
short of the full set.

Exits 1 on any unexpected difference, missing record or pair not compared.
"""

import ctypes
import mmap
import os
import re
import sys

# tools/lib of the project this file is in, wherever the project is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', '..', 'tools', 'lib'))
import kallsyms  # noqa: E402
import tracefs  # noqa: E402
from tracefs import DYNPROBE, TRACING  # noqa: E402

PAGE = mmap.PAGESIZE
MARK = 7000

libc = ctypes.CDLL(None, use_errno=True)
libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
libc.write.restype = ctypes.c_ssize_t
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mmap.restype = ctypes.c_void_p
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

# Tested arguments; BASE is the buffer argument (%si for kprobes, $arg2 for
# fprobes). One event each.
BASE_ARGS = [
    ('num', 'v=+0(BASE):x64'),
    ('unum', 'v=+u0(BASE):x64'),
    ('off', 'v=+8(BASE):u32'),
    ('neg', 'v=-8(BASE):s64'),
    ('str', 's=+0(BASE):string'),
    ('ustr', 's=+0(BASE):ustring'),
    ('dstr', 's=+0(+0(BASE)):string'),
    ('udstr', 's=+0(+u0(BASE)):ustring'),
    ('arr', 'v=+0(BASE):u8[4]'),
    ('bits', 'v=+0(BASE):b4@2/32'),
    ('sym', 'v=+0(BASE):symbol'),
    ('symstr', 'v=+0(BASE):symstr'),
    ('chain', 'v=+0(+8(+0(BASE))):x32'),
]
# Arguments that do not depend on the call (kprobes only).
FIXED_ARGS = [
    ('i_null', 'v=+0(\\0):u64'),
    ('i_noncanon', 'v=+0(\\0xdead000000000000):u64'),
    ('i_hole', 'v=+0(\\0xfffffc0000000000):u64'),
    ('i_str', 's=+0(\\0):string'),
    ('i_ustr', 's=+0(\\0xdead000000000000):ustring'),
    ('i_at0', 'v=@0:u64'),
    ('i_chain', 'v=+8(+0(\\0)):u64'),
    ('i_wrap', 'v=+16(\\0xfffffffffffffff8):u64'),
    ('i_arr', 'v=+0(\\0xdead000000000000):u32[2]'),
    ('i_bits', 'v=+0(\\0):b1@0/8'),
    ('i_symstr', 'v=+0(\\0xfffffc0000000000):symstr'),
]
# Every event compared: kprobes, their fprobe twins (f_), the fixed ones.
EVENTS = [n for n, _ in BASE_ARGS] + ['f_' + n for n, _ in BASE_ARGS] + \
    [n for n, _ in FIXED_ARGS]
# The targets every run passes, in order (see Buffers).
TARGETS = ('null', 'small', 'user_hello', 'user_u64', 'user_ptr', 'user_unterminated',
           'user_3000', 'user_5000', 'kernel_banner', 'noncanonical', 'kernel_hole',
           'top', 'vmalloc_guard')
# (event, target) pairs that both sides drop: a 4096-byte string makes a
# record larger than a ring buffer page.
DROPPED = {(ev, 'user_5000') for ev in ('str', 'ustr', 'f_str', 'f_ustr')}


class Buffers:
    """User memory laid out for the calls, and the addresses to pass."""

    def __init__(self):
        prot = mmap.PROT_READ | mmap.PROT_WRITE
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        base = libc.mmap(None, 5 * PAGE, prot, flags, -1, 0)
        if base in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), 'mmap')
        # The fifth page goes: a string running into it has no terminator.
        if libc.munmap(base + 4 * PAGE, PAGE) != 0:
            raise OSError(ctypes.get_errno(), 'munmap')
        mem = (ctypes.c_char * (4 * PAGE)).from_address(base)
        self.hello = b'hello fault test'
        ctypes.memmove(base, self.hello + b'\0', len(self.hello) + 1)
        self.u64 = 0x1122334455667788
        ctypes.c_uint64.from_address(base + 64).value = self.u64
        ctypes.c_uint64.from_address(base + 128).value = base
        ctypes.memmove(base + 256, b'B' * 3000 + b'\0', 3001)
        ctypes.memmove(base + PAGE, b'C' * 5000 + b'\0', 5001)
        ctypes.memmove(base + 3 * PAGE, b'A' * PAGE, PAGE)
        self.mem = mem
        self.base = base
        self.targets = [
            ('null', 0),
            ('small', 0x10),
            ('user_hello', base),
            ('user_u64', base + 64),
            ('user_ptr', base + 128),
            ('user_unterminated', base + 4 * PAGE - 10),
            ('user_3000', base + 256),
            ('user_5000', base + PAGE),
            ('kernel_banner', kallsyms.address('linux_banner')),
            ('noncanonical', 0xdead000000000000),
            # Unused in the 4- and 5-level layouts alike, and above the
            # KASAN shadow, which maps the hole below the kernel half
            # (0xffff800000000000) to zero pages on a 5-level KASAN kernel.
            ('kernel_hole', 0xfffffc0000000000),
            ('top', 0xfffffffffffffff8),
        ]
        guard = vmalloc_guard_page()
        if guard:
            self.targets.append(('vmalloc_guard', guard))
        missing = set(TARGETS) - set(n for n, _ in self.targets)
        if missing or len(self.targets) != len(TARGETS):
            raise SystemExit('fault-reads: targets %s not found: the compared set would shrink'
                             % sorted(missing))


def vmalloc_guard_page():
    """The guard page that ends a vmalloc area allocated at boot, or None.

    /proc/vmallocinfo shows each area with its guard page included; root
    sees real addresses when kptr_restrict is 1.
    """
    path = '/proc/sys/kernel/kptr_restrict'
    try:
        old = open(path).read().strip()
        with open(path, 'w') as f:
            f.write('1')
        try:
            lines = open('/proc/vmallocinfo').read().splitlines()
        finally:
            with open(path, 'w') as f:
                f.write(old)
    except OSError:
        return None
    for line in lines:
        m = re.match(r'0x([0-9a-f]+)-0x([0-9a-f]+)\s+(\d+) irq_init_percpu_irqstack', line)
        if m and int(m.group(1), 16) >= 0x8000000000000000:
            return int(m.group(2), 16) - PAGE
    return None


def definitions(group_k, group_f):
    """(event, kprobe_events lines, dynamic_events lines) for one side."""
    kp, fp = [], []
    for name, arg in BASE_ARGS:
        kp.append('p:%s/%s ksys_write n=%%dx:u64 %s' % (group_k, name, arg.replace('BASE', '%si')))
        fp.append('f:%s/f_%s ksys_write n=$arg3:u64 %s'
                  % (group_f, name, arg.replace('BASE', '$arg2')))
    for name, arg in FIXED_ARGS:
        kp.append('p:%s/%s ksys_write n=%%dx:u64 %s' % (group_k, name, arg))
    return kp, fp


def shorten(text, width=300):
    """Long strings (the 3000-byte buffers) cut for the log."""
    return text if len(text) <= width else text[:width] + '...(%d chars)' % len(text)


def define(path, line):
    try:
        tracefs.write(path, line + '\n')
        return True
    except OSError as e:
        why = ['%s | Command: %s' % (message, command)
               for message, command, _ in tracefs.error_log_entries()[-1:]]
        print('  %s refused (%s): %s' % (path, e.strerror, ''.join(why)))
        tracefs.clear_error_log()
        return False


def parse_trace(text, pid):
    """{(event, marker): [record text]} of this process's lines."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'^\s*\S+-(\d+)\s+\[\d+\]\s+\S+\s+[\d.]+: (\w+): \((.*?)\) n=(\d+)(.*)$', line)
        if not m or int(m.group(1)) != pid:
            continue
        out.setdefault((m.group(2), int(m.group(4))), []).append(m.group(5).strip())
    return out


def main():
    pid = os.getpid()
    bufs = Buffers()
    print('fault-reads: buffers at 0x%x; targets: %s' % (
        bufs.base, ', '.join('%s=0x%x' % t for t in bufs.targets)), flush=True)
    instances = {}
    try:
        problems, defined = define_all()
        traces = trace_calls(pid, bufs, instances)
    finally:
        clean_up(instances)

    kern = parse_trace(traces['kern'], pid)
    dyn = parse_trace(traces['dyn'], pid)
    expected, same, dropped = [], 0, 0
    # Every event on every target: one not defined on both sides is a
    # problem (define_all), and its pairs count as not compared.
    for ev in EVENTS:
        if ev not in defined:
            problems.append('%s: not defined on both sides, not compared' % ev)
    events = [e for e in EVENTS if e in defined]
    for i, (target, addr) in enumerate(bufs.targets):
        for ev in events:
            key = (ev, MARK + i)
            k, d = kern.get(key), dyn.get(key)
            if k is None and d is None and (ev, target) in DROPPED:
                dropped += 1
                continue
            if k is None or d is None or len(k) != len(d):
                problems.append('%s on %s: kernel %r, dynprobe %r' % (ev, target, k, d))
                continue
            for kl, dl in zip(k, d):
                if kl == dl:
                    same += 1
                    continue
                why = documented(ev, addr, kl, dl, bufs)
                if why:
                    expected.append('%s on %s: kernel %s | dynprobe %s (%s)' %
                                    (ev, target, kl, dl, why))
                else:
                    problems.append('%s on %s: kernel %s | dynprobe %s' % (ev, target, kl, dl))
    problems += check_function_events(traces['dyn'], pid, bufs)
    # Pairs whose records were compared (alike or a documented
    # difference) or dropped by both as DROPPED says: the full set.
    want = len(EVENTS) * len(TARGETS)
    compared = same + len(expected) + dropped
    if compared != want:
        problems.append('%d of %d event/target pairs compared (%d events x %d targets)' %
                        (compared, want, len(EVENTS), len(TARGETS)))

    print('pairs compared: %d of %d (%d events of %d on %d calls); records alike: %d; '
          'documented differences: %d; dropped by both: %d; problems: %d' %
          (compared, want, len(events), len(EVENTS), len(bufs.targets), same, len(expected),
           dropped, len(problems)))
    for e in expected:
        print('  expected: ' + shorten(e))
    for p in problems:
        print('  PROBLEM: ' + shorten(p))
    if '-v' in sys.argv:
        print(traces['kern'])
        print(traces['dyn'])
    return 1 if problems or not same else 0


def define_all():
    """Defines every event on both sides; (problems, events defined on
    both)."""
    kern_kp, kern_fp = definitions('kfr', 'kff')
    dyn_kp, dyn_fp = definitions('dfr', 'dff')
    problems, defined = [], set()
    for (kf, klines), (df, dlines) in (
            (('kprobe_events', kern_kp), ('dynprobe/kprobe_events', dyn_kp)),
            (('dynamic_events', kern_fp), ('dynprobe/dynamic_events', dyn_fp))):
        for kl, dl in zip(klines, dlines):
            event = kl.split()[0].split('/')[1]
            k_ok, d_ok = define(TRACING + '/' + kf, kl), define(TRACING + '/' + df, dl)
            if k_ok and d_ok:
                defined.add(event)
            elif k_ok != d_ok:
                problems.append('%s: the kernel %s it, dynprobe %s it' % (
                    dl, 'accepts' if k_ok else 'refuses', 'accepts' if d_ok else 'refuses'))
            else:
                problems.append('refused by both: %s' % kl)
    # dynprobe's function event on the same call (no kernel counterpart).
    tracefs.write(DYNPROBE + '/function_events',
               'ksys_write(u32 fd, x64 buf[0] | string s | char[4] c | '
               'x64 p[0][1], u64 count)\n')
    return problems, defined


def trace_calls(pid, bufs, instances):
    """Traces this process's write() calls, the kernel's events into one
    instance and dynprobe's into another; returns both traces."""
    for side, groups in (('kern', ('kfr', 'kff')), ('dyn', ('dfr', 'dff', 'functions'))):
        inst = '%s/instances/fault_%s' % (TRACING, side)
        os.mkdir(inst)
        instances[side] = inst
        tracefs.write(inst + '/set_event_pid', str(pid), truncate=True)
        for g in groups:
            if os.path.isdir('%s/events/%s' % (inst, g)):
                tracefs.write('%s/events/%s/enable' % (inst, g), '1', truncate=True)
    devnull = os.open('/dev/null', os.O_WRONLY)
    for i, (_name, addr) in enumerate(bufs.targets):
        libc.write(devnull, addr, MARK + i)
    os.close(devnull)
    for inst in instances.values():
        tracefs.write(inst + '/tracing_on', '0', truncate=True)
    return {side: open(inst + '/trace', errors='replace').read()
            for side, inst in instances.items()}


def clean_up(instances):
    """Disables and removes everything defined, whatever failed."""
    for inst in instances.values():
        for g in ('kfr', 'kff', 'dfr', 'dff', 'functions'):
            if os.path.isdir('%s/events/%s' % (inst, g)):
                tracefs.write('%s/events/%s/enable' % (inst, g), '0', truncate=True)
    for f in ('kprobe_events', 'dynamic_events'):
        tracefs.write(TRACING + '/' + f, '', truncate=True)
    for f in ('kprobe_events', 'dynamic_events', 'function_events'):
        tracefs.write(DYNPROBE + '/' + f, '', truncate=True)
    for inst in instances.values():
        os.rmdir(inst)


# Numeric events: (offset from the buffer argument, bytes read).
READS = {
    'num': (0, 8), 'sym': (0, 8), 'arr': (0, 4), 'bits': (0, 4),
    'off': (8, 4), 'neg': (-8, 8),
}


def faults(addr, size, bufs):
    """True when a read of size bytes at addr touches unmapped memory:
    anything outside the four mapped user pages and linux_banner's page."""
    banner = [a for n, a in bufs.targets if n == 'kernel_banner'][0]
    for lo, hi in ((bufs.base, bufs.base + 4 * PAGE), (banner, banner + PAGE)):
        if lo <= addr and addr + size <= hi:
            return False
    return True


def documented(event, target_addr, kern, dyn, bufs):
    """Why a difference is expected, or None.

    Both are differences of Linux 7.2 that Documentation/
    definition-language.md lists: a dereference that faults before a
    string is reached leaves a data location over unwritten bytes where
    dynprobe records a fault; and a number read that faults shows what the
    failed copy left in the field (the bytes before the fault of a user
    read; on this GCC-built kernel the faulting address itself for a kernel
    read) where dynprobe records zero.
    """
    base = event[2:] if event.startswith('f_') else event
    if base in ('dstr', 'udstr') and dyn.endswith('=(fault)') and \
            re.search(r'="[^"]*"$', kern):
        return 'dereference faulted before the string'
    if base == 'i_hole':
        addr, size = 0xfffffc0000000000, 8
    elif base in READS:
        off, size = READS[base]
        addr = (target_addr + off) % (1 << 64)
    else:
        return None
    # Below the guard page lies the top of an interrupt stack: mapped, and
    # written by any interrupt that comes between the kernel's probe and
    # dynprobe's on the same call, so the two may read different values.
    if [target_addr] == [a for n, a in bufs.targets if n == 'vmalloc_guard'] and \
            addr + size <= target_addr:
        return 'live interrupt stack below the guard page'
    if faults(addr, size, bufs) and re.fullmatch(r'v=(0x0|0|\{0(,0)*\})', dyn):
        return 'read faulted: the kernel shows what the failed copy left'
    return None


def check_function_events(trace, pid, bufs):
    """function_events reads with the accessor the address needs."""
    problems = []
    want = {
        'null': ('0', '(fault)', '', '0'),
        'user_hello': ('%x' % int.from_bytes(bufs.hello[:8], 'little'), bufs.hello.decode(),
                       'hell', None),
        'user_u64': ('%x' % bufs.u64, None, None, None),
        'user_unterminated': ('4141414141414141', '(fault)', 'AAAA', None),
        'user_3000': ('4242424242424242', 'B' * 511, 'BBBB', None),
        'user_5000': ('4343434343434343', 'C' * 511, 'CCCC', None),
        'kernel_banner': (None, None, 'Linu', None),
        'noncanonical': ('0', '(fault)', '', '0'),
        'kernel_hole': ('0', '(fault)', '', '0'),
    }
    lines = {}
    # Strings may hold newlines (linux_banner ends with one): match across.
    for m in re.finditer(r'^\s*\S+-(\d+)\s[^\n]*?ksys_write\(fd=\d+, buf=(\w+), s=(.*?), '
                         r'c=(.*?), p=(\w+), count=(\d+)\)$', trace, re.M | re.S):
        if int(m.group(1)) == pid:
            lines[int(m.group(6)) - MARK] = m.groups()[1:5]
    for i, (target, _addr) in enumerate(bufs.targets):
        got = lines.get(i)
        if got is None:
            problems.append('function event on %s: no record' % target)
            continue
        for field, exp, val in zip(('buf', 's', 'c', 'p'), want.get(target, ()), got):
            if exp is not None and val != exp:
                problems.append('function event on %s: %s=%s, expected %s'
                                % (target, field, val, exp))
    return problems


if __name__ == '__main__':
    sys.exit(main())
