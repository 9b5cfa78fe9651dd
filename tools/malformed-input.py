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
selftests/robust/malformed-input-known-differences.txt documents, with the
reason it is accepted; every definition meant for the comparison must have
been compared.

Also violations: a valid-by-construction line (no mutation, written whole)
that is refused, and fewer round trips than ROUND_TRIP_FLOOR of the
definitions (a dynprobe that refused most lines would check nothing).

Environment: MALFORMED_N (number of definitions, default 2000),
MALFORMED_SEED (default 1; "random" picks one), MALFORMED_ONLY (comma
separated indices to rerun; no floor), MALFORMED_KERNEL_EVERY (compare
every Nth definition with the kernel, default 4; 0: never, for runs
without the kernel's files only), MALFORMED_KNOWN (the list of documented
differences, default the one above), MALFORMED_REPORT (file for the
summary; default $DYNPROBE_RUN/malformed-input.txt).
Exits 1 on any violation.
"""

import collections
import errno
import os
import random
import re
import sys
import time

# tools/tracefs.py, beside this file wherever the project is.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracefs  # noqa: E402
from tracefs import (DYNPROBE, TRACING, clear_error_log,  # noqa: E402
                     error_log_entries, write_pieces)

DP_FILES = ('kprobe_events', 'dynamic_events', 'function_events')
MAX_LINE = 4094

# errnos the kernel's probe-event files refuse definitions with.
REFUSAL_ERRNOS = {errno.EINVAL, errno.E2BIG, errno.ENOENT, errno.EEXIST,
                  errno.ENOSPC, errno.EBUSY, errno.EOPNOTSUPP,
                  errno.EADDRNOTAVAIL, errno.EILSEQ, errno.ENOMEM,
                  errno.ERANGE}

REGS = ('ax bx cx dx si di bp sp r8 r9 r10 r11 r12 r13 r14 r15 ip flags cs '
        'ss orig_ax').split()
NUM_TYPES = 'u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 char'.split()
FE_ATOMS = ('u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 char short int '
            'long size_t symbol string').split()
RESERVED_NAMES = ('common_pid', 'common_type', 'common_flags',
                  'common_preempt_count', '__probe_ip', '__probe_func',
                  '__probe_ret_ip', '__parent_ip', '__ip', 'ip', 'a0')
WEIRD_NUMBERS = (
    '0', '-0', '-1', '1', '7', '8', '63', '64', '65', '127', '128', '129',
    '255', '256', '2048', '2049', '4095', '4096', '4097', '65535', '65536',
    '2147483647', '2147483648', '-2147483649', '4294967295', '4294967296',
    '9223372036854775807', '9223372036854775808', '-9223372036854775808',
    '-9223372036854775809', '18446744073709551615', '18446744073709551616',
    '99999999999999999999999999999999', '0x', '0x-1', '-0x1', '0xg',
    '0x7fffffff', '0xffffffff', '0x7fffffffffffffff', '0xffffffffffffffff',
    '0x10000000000000000', '0xdead000000000000', '00', '08', '0777',
    '0b101', '1e3', '+1', '--1', '+-1', '1_000', '', ' ', '0x0000000000000000001')
BAD_TYPES = (
    'x99', 'u128', 's0', 'u', 'u7', 'x', 'string[0]', 'u8[0]', 'u8[65]',
    'u8[64]', 'u8[-1]', 'u8[]', 'u8[1', 'u8]', 'u8[1][2]', 'b0@0/8',
    'b9@0/8', 'b8@1/8', 'b65@0/64', 'b1@64/64', 'b1@63/64', 'b1@0/7',
    'b1@0/128', 'b@/', 'b1@0', 'b1/8', 'b4@2/32[2]', 'symbol[2]',
    'symstr[2]', 'ustring[3]', 'string[65]', '%pd', '%pD', '%px', '%p',
    'char[0]', 'unsigned', 'unsigned float', 'unsigned unsigned int',
    'long long', 'size_t[99999]', 'int[9223372036854775808]',
    'string string', 'u8 u8', 'U8', 'S64', 'u8 ', ':u8', 'u8:u8', '')
SPECIAL_CHARS = b':/=()+-%$@\\"[],|.>#!\'*'
SEPARATORS = (b' ', b'\t', b'\v', b'\f', b'\r', b'  ', b'')

# Round trips per definition below which a run fails. On the stock
# 7.2.12 kernel with the default N (2000), seeds 1 to 5 made 509, 488,
# 490, 493 and 478 round trips (0.24 to 0.25 per definition); 0.18 (360)
# leaves a quarter below the lowest for other seeds and kernels.
ROUND_TRIP_FLOOR = 0.18
# Fewer definitions than this make the share too uncertain for the floor.
FLOOR_MIN_DEFINITIONS = 500

KNOWN_DIFFERENCES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    'selftests', 'robust', 'malformed-input-known-differences.txt')
KNOWN_FIELDS = ('kind', 'aspect', 'file', 'dynprobe', 'kernel', 'line', 'series', 'reason', 'bug')
# The running kernel's series ("7.3" for 7.3-amd64), which an entry's
# series: field is matched against.
RUNNING_SERIES = '.'.join(re.match(r'(\d+)\.(\d+)', os.uname().release).groups())
PATTERN_FIELDS = ('aspect', 'file', 'dynprobe', 'kernel', 'line')


def load_known(path):
    """The documented kinds of difference from the kernel: blocks of
    'field: value' lines separated by blank lines ('#' starts a comment
    line). kind and reason are required; every other field is a Python
    regular expression searched in that part of a difference (see
    Checker.difference), and all given must match. Raises ValueError on a
    malformed list."""
    entries, cur = [], {}

    def close(lineno):
        if not cur:
            return
        for f in ('kind', 'reason'):
            if not cur.get(f):
                raise ValueError('%s:%d: entry without %s' % (path, lineno, f))
        if not any(f in cur for f in PATTERN_FIELDS):
            raise ValueError('%s:%d: entry %s matches everything' % (path, lineno, cur['kind']))
        if cur.get('bug', 'yes') != 'yes':
            raise ValueError('%s:%d: bug: takes "yes" only' % (path, lineno))
        if any(e['kind'] == cur['kind'] for e in entries):
            raise ValueError('%s:%d: kind %s twice' % (path, lineno, cur['kind']))
        entries.append(dict(cur))
        cur.clear()

    with open(path) as f:
        lines = f.read().split('\n')
    for n, line in enumerate(lines, 1):
        if line.startswith('#'):
            continue
        if not line.strip():
            close(n)
            continue
        key, sep, value = line.partition(': ')
        if not sep or key not in KNOWN_FIELDS:
            raise ValueError('%s:%d: not a "field: value" line: %r' % (path, n, line))
        if key in cur:
            raise ValueError('%s:%d: %s twice in one entry' % (path, n, key))
        value = value.rstrip()
        if key in PATTERN_FIELDS or key == 'series':
            try:
                cur[key + '_re'] = re.compile(value)
            except re.error as e:
                raise ValueError('%s:%d: %s: %s' % (path, n, key, e))
        cur[key] = value
    close(len(lines))
    return entries


def known_kind(known, diff):
    """The first documented kind the difference is of, or None. An entry
    with a series applies on the kernels of that series only."""
    for e in known:
        if 'series_re' in e and not e['series_re'].search(RUNNING_SERIES):
            continue
        if all(e[f + '_re'].search(diff[f]) for f in PATTERN_FIELDS if f in e):
            return e['kind']
    return None


class Env:
    """Symbols of the running kernel the definitions may use."""

    def __init__(self, rng):
        text, data, modtext = collections.Counter(), {}, {}
        addr_of = {}
        with open('/proc/kallsyms') as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                addr, kind, name = parts[0], parts[1], parts[2]
                if len(parts) > 3:
                    if kind in 'tT':
                        modtext.setdefault(parts[3].strip('[]'), []).append(name)
                    continue
                if kind in 'tT':
                    text[name] += 1
                    addr_of[name] = int(addr, 16)
                elif kind in 'dDbB':
                    data[name] = data.get(name, 0) + 1
                    addr_of[name] = int(addr, 16)
        with open(TRACING + '/available_filter_functions') as f:
            traceable = set(l.split()[0] for l in f if l.strip())

        def usable(name):
            return text.get(name) == 1 and name in traceable

        preferred = ['vfs_read', 'vfs_write', 'ksys_read', 'ksys_write',
                     'do_sys_openat2', 'vfs_open', 'kernel_clone',
                     'getname_flags', 'schedule_timeout', 'copy_process',
                     'do_nanosleep', '__x64_sys_getpid', 'filp_close',
                     'vfs_getattr']
        # kprobes refuse the functions on the kprobe blacklist.
        blacklist = set()
        try:
            # Lines read 'START-END<TAB>NAME [MODULE]'.
            with open('/sys/kernel/debug/kprobes/blacklist') as f:
                blacklist = set(l.split()[1] for l in f if len(l.split()) > 1)
        except OSError:
            pass
        funcs = [f for f in preferred if usable(f)]
        # The permanent function events take two functions of their own.
        self.perm_funcs = funcs[-2:]
        funcs = funcs[:-2]
        # A few more, different with each seed; valid lines on them must
        # be valid for kprobes too.
        pool = sorted(f for f in traceable if usable(f) and f not in blacklist and
                      re.fullmatch(r'[A-Za-z_][A-Za-z0-9_.]*', f))
        funcs += rng.sample(pool, min(6, len(pool)))
        self.funcs = funcs
        self.void = set(f for f in funcs if returns_void(f))
        self.nargs = {f: btf_params(f) for f in funcs}
        self.addr = {f: addr_of[f] for f in funcs}
        self.data = [d for d in ('jiffies', 'total_forks', 'nr_threads',
                                 'init_task', 'linux_banner', 'jiffies_64')
                     if data.get(d) == 1]
        self.data_addr = {d: addr_of[d] for d in self.data}
        # Functions of dynprobe's a kprobe may take: traceable (not a
        # .cold part, not notrace) and not blacklisted, as for the pool.
        dp = [s for s in modtext.get('dynprobe', [])
              if s.startswith('dynprobe_') and s in traceable and s not in blacklist]
        self.mod_syms = ['dynprobe:' + s for s in sorted(dp)[:4]]
        # A module that is not loaded: kprobes on it wait for it.
        self.mod_syms.append('sit:ipip6_rcv')


def returns_void(func):
    """Whether func returns void, as the kernel's own kprobe_events tell:
    with BTF they refuse $retval there (NO_RETVAL), and so does dynprobe."""
    line = 'r:mivoid/probe %s ret=$retval\n' % func
    if tracefs.write_errno(TRACING + '/kprobe_events', line) == 0:
        tracefs.write_errno(TRACING + '/kprobe_events', '-:mivoid/probe\n')
        return False
    clear_error_log()
    return True


def btf_params(func):
    """How many parameters func has in BTF, as the kernel's own
    kprobe_events count them (they expand $arg* to one argument each, and
    refuse $argN past the last), or None when it has no BTF."""
    line = 'p:minargs/probe %s $arg*\n' % func
    if tracefs.write_errno(TRACING + '/kprobe_events', line) != 0:
        clear_error_log()
        return None
    listed = [l for l in read(TRACING + '/kprobe_events').decode().split('\n')
              if l.split(' ', 1)[0].endswith(':minargs/probe')]
    tracefs.write_errno(TRACING + '/kprobe_events', '-:minargs/probe\n')
    return len(listed[0].split()) - 2 if listed else None


class Ctx:
    """What kind of probe the fetch arguments are for."""

    def __init__(self, kprobe, entry, ret, retval=None, nargs=None):
        self.kprobe = kprobe      # registers allowed
        self.entry = entry        # $argN allowed
        self.nargs = nargs        # the highest N of $argN, None: no limit
        self.ret = ret            # a return probe
        # $retval allowed: at a return, unless the function returns void.
        self.retval = ret if retval is None else retval


# ---------------------------------------------------------------------------
# Valid lines


def gen_base_value(rng, env, ctx):
    opts = ['stack', 'stackn', 'sym', 'addr', 'imm']
    if ctx.kprobe:
        opts += ['reg'] * 5
    if ctx.entry and ctx.nargs != 0:
        opts += ['arg'] * 4
    if ctx.retval:
        opts += ['retval'] * 3
    k = rng.choice(opts)
    if k == 'reg':
        return '%' + rng.choice(REGS)
    if k == 'stack':
        return '$stack'
    if k == 'stackn':
        return '$stack%d' % rng.choice([0, 1, 2, 3, 8, 16])
    if k == 'sym':
        d = rng.choice(env.data)
        off = rng.choice(['', '', '+8', '-8', '+0x10'])
        return '@' + d + off
    if k == 'addr':
        return '@0x%x' % env.data_addr[rng.choice(env.data)]
    if k == 'imm':
        return '\\' + rng.choice(['0', '123', '-5', '0x1f', '4096'])
    if k == 'arg':
        return '$arg%d' % rng.randint(1, 6 if ctx.nargs is None else min(ctx.nargs, 6))
    return '$retval'


def gen_value(rng, env, ctx, depth=0):
    """A fetch argument, and how its last step reads: 'mem' (kernel
    memory), 'umem' (user memory) or None (no memory read)."""
    if depth < 3 and rng.random() < (0.45 if depth == 0 else 0.25):
        off = rng.choice([0, 8, 16, 0x10, -8, 40, 24, 4])
        sign = '-' if off < 0 else '+'
        user = 'u' if rng.random() < 0.15 else ''
        offs = rng.choice(['%d', '0x%x']) % abs(off)
        inner, _ = gen_value(rng, env, ctx, depth + 1)
        return '%s%s%s(%s)' % (sign, user, offs, inner), 'umem' if user else 'mem'
    return gen_base_value(rng, env, ctx), None


def gen_type(rng, memref, value, ctx):
    r = rng.random()
    if r < 0.25:
        return ''
    if r < 0.55:
        return ':' + rng.choice(NUM_TYPES)
    if r < 0.62:
        # symstr takes registers, stack entries, $retval, arguments at
        # entry (at exit they are saved data) and kernel memory only.
        symstr_ok = memref == 'mem' or re.fullmatch(r'%\w+|\$stack\d+|\$retval', value) or \
            (value.startswith('$arg') and not ctx.ret)
        return ':' + ('symstr' if symstr_ok and rng.random() < 0.5 else 'symbol')
    if r < 0.72:
        cont = rng.choice([8, 16, 32, 64])
        width = rng.randint(1, cont)
        offs = rng.randint(0, cont - width)
        return ':b%d@%d/%d' % (width, offs, cont)
    if not memref:
        return ':' + rng.choice(NUM_TYPES)
    if r < 0.85 or memref == 'umem':
        # Arrays only of kernel memory: the kernel refuses them on +u.
        return ':' + rng.choice(['string', 'ustring'])
    base = rng.choice(NUM_TYPES + ['string'])
    return ':%s[%d]' % (base, rng.choice([1, 2, 3, 4, 8, 16]))


def gen_arg(rng, env, ctx, i):
    name = rng.choice(['', 'a%d=' % i, 'a%d=' % i, 'arg_%d_x=' % i])
    r = rng.random()
    if r < 0.05:
        return name + '$comm' + rng.choice(['', ':string'])
    if r < 0.08:
        return name + '\\"s%d"' % i + ':string'
    if r < 0.11 and ((ctx.entry and ctx.nargs != 0) or ctx.kprobe):
        base = '$arg1' if ctx.entry and ctx.nargs != 0 else '%di'
        return name + base + rng.choice([':%pd', ':%pD'])
    value, memref = gen_value(rng, env, ctx)
    return name + value + gen_type(rng, memref, value, ctx)


def gen_probe_line(rng, env, idx, fprobe):
    """A valid p/r (or f) line; group 'mi' so it meets no other definition."""
    if fprobe:
        kind = rng.choice(['f', 'f', 'f%return'])
    else:
        kind = rng.choice(['p', 'p', 'p', 'r', 'r', 'p%return'])
    is_ret = kind in ('r', 'p%return', 'f%return')
    letter = kind[0]
    if letter == 'r' and rng.random() < 0.3:
        letter += str(rng.choice([1, 8, 100, 4096]))
    name = rng.choice([':mi/e%d' % idx, ':mi/e%d' % idx, ':mi.e%d' % idx,
                       ':e%d' % idx, '', ':mi/'])
    if fprobe:
        place = rng.choice(env.funcs)
    else:
        r = rng.random()
        if r < 0.6:
            place = rng.choice(env.funcs)
        elif r < 0.7:
            place = rng.choice(env.funcs) + '+0'
        elif r < 0.8:
            place = rng.choice(env.mod_syms)
        elif r < 0.9 and not is_ret:
            place = '0x%x' % env.addr[rng.choice(env.funcs)]
        else:
            place = rng.choice(env.funcs) + ('' if is_ret else '+0x0')
    if kind.endswith('%return'):
        place += '%return'
    entry_place = not re.search(r'\+0x[1-9]|^0x', place)
    func = re.sub(r'(\+0x0|\+0)?(%return)?$', '', place)
    ctx = Ctx(kprobe=not fprobe, entry=fprobe or entry_place, ret=is_ret,
              retval=is_ret and func not in env.void, nargs=env.nargs.get(func))
    args = [gen_arg(rng, env, ctx, i) for i in range(rng.choice([0, 1, 2, 3, 4, 6, 8]))]
    # Names must differ: number the unnamed ones implicitly, drop clashes.
    return ' '.join([letter + name, place] + args)


def gen_fe_type(rng, allow_array=True):
    if rng.random() < 0.15:
        t = 'unsigned ' + rng.choice(['char', 'short', 'int', 'long'])
    else:
        t = rng.choice(FE_ATOMS)
    if allow_array and t != 'string' and rng.random() < 0.2:
        t += '[%d]' % rng.choice([1, 2, 3, 4, 6, 8, 16, 64])
    return t


def gen_indirection(rng):
    out = ''
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4])):
        if rng.random() < 0.5:
            out += '[%d]' % rng.choice([0, 0, 1, 2, 3, 16])
        else:
            out += '+%s' % rng.choice(['8', '16', '40', '0x18', '4'])
    return out


def gen_fe_alt(rng, env, i):
    t = gen_fe_type(rng)
    r = rng.random()
    if r < 0.1:
        return '%s 0x%x' % (t, env.data_addr[rng.choice(env.data)])
    if r < 0.2:
        return '%s n%d=0x%x' % (t, i, env.data_addr[rng.choice(env.data)])
    return '%s n%d%s' % (t, i, gen_indirection(rng))


def gen_fe_line(rng, env, func=None):
    func = func or rng.choice(env.funcs)
    args, k = [], 0
    for _ in range(rng.choice([0, 1, 2, 3, 4, 6, 7])):
        if rng.random() < 0.1:
            args.append('NULL')
            continue
        alts = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            alts.append(gen_fe_alt(rng, env, k))
            k += 1
        args.append(rng.choice([' | ', '|']).join(alts))
    line = '%s(%s)' % (func, rng.choice([', ', ',', ' , ']).join(args))
    if rng.random() < 0.3:
        line += ' -> %s ret%s' % (gen_fe_type(rng), gen_indirection(rng))
    return line


def gen_valid(rng, env, fname, idx):
    if fname == 'function_events':
        return gen_fe_line(rng, env)
    fprobe = fname == 'dynamic_events' and rng.random() < 0.5
    return gen_probe_line(rng, env, idx, fprobe)


# ---------------------------------------------------------------------------
# Mutations: each takes and returns bytes.


def m_truncate(rng, s, fname, env):
    cuts = {}
    for i, c in enumerate(s):
        if c in SPECIAL_CHARS or c in b' \t0123456789':
            cuts.setdefault(c, []).append(i)
    if cuts and rng.random() < 0.8:
        c = rng.choice(sorted(cuts))
        pos = rng.choice(cuts[c]) + rng.choice([0, 1, 1, 2])
    else:
        pos = rng.randrange(len(s) + 1)
    return s[:pos]


NUM_RE = re.compile(rb'(?<![A-Za-z_0-9])-?(?:0[xX][0-9a-fA-F]+|[0-9]+)')


def m_number(rng, s, fname, env):
    found = list(NUM_RE.finditer(s))
    new = rng.choice(WEIRD_NUMBERS).encode()
    if not found:
        return s + new
    m = rng.choice(found)
    return s[:m.start()] + new + s[m.end():]


def split_words(s):
    return [w for w in re.split(rb'[ \t\v\f\r]+', s) if w]


ARG_RE = re.compile(rb'^(?P<name>[^=()]*=)?(?P<value>.*?)(?P<type>:[^:()]*)?$', re.S)


def m_deep(rng, s, fname, env):
    k = rng.choice([2, 5, 10, 11, 12, 13, 14, 15, 16, 17, 20, 40, 200])
    if fname == 'function_events':
        ids = list(re.finditer(rb'\b(n[0-9]+|ret)\b((?:\[[0-9]+\]|\+[0-9x]+)*)', s))
        chain = rng.choice([b'[0]', b'+0', b'[0]+8', b'[1]'])
        if not ids:
            return s + chain * k
        m = rng.choice(ids)
        return s[:m.end()] + chain * k + s[m.end():]
    words = split_words(s)
    while len(words) < 3:
        words.append(b'%di')
    i = rng.randrange(2, len(words))
    m = ARG_RE.match(words[i])
    name, value, typ = m.group('name') or b'', m.group('value'), m.group('type') or b''
    form = rng.random()
    if form < 0.6:
        value = b'+0(' * k + value + b')' * k
    elif form < 0.75:
        value = b'+u8(' * k + value + b')' * k
    elif form < 0.85:
        value = b'+0(' * k + value + b')' * (k - 1)   # one short
    else:
        value = b'+0(' * k + value + b')' * (k + 1)   # one over
    words[i] = name + value + typ
    return b' '.join(words)


ID_RE = re.compile(rb'[A-Za-z_][A-Za-z0-9_]*')


def m_long_name(rng, s, fname, env):
    length = rng.choice([31, 32, 33, 62, 63, 64, 65, 127, 128, 255, 256, 511,
                         512, 1000, 4000])
    ids = list(ID_RE.finditer(s))
    fill = rng.choice([b'x', b'a_', b'Z9'])
    name = (b'n' + fill * length)[:length]
    if not ids:
        return s + name
    m = rng.choice(ids)
    return s[:m.start()] + name + s[m.end():]


def m_bad_type(rng, s, fname, env):
    bad = rng.choice(BAD_TYPES).encode()
    if fname == 'function_events':
        types = list(re.finditer(
            rb'\b(?:unsigned +[a-z]+|[a-z_0-9]+)(?:\[[0-9]+\])?(?= +[A-Za-z_0-9])', s))
        if not types:
            return s.replace(b'(', b'(' + bad + b' n0', 1)
        m = rng.choice(types)
        return s[:m.start()] + bad + s[m.end():]
    words = split_words(s)
    if len(words) < 3:
        return s + b' %di:' + bad
    i = rng.randrange(2, len(words))
    m = ARG_RE.match(words[i])
    words[i] = (m.group('name') or b'') + m.group('value') + b':' + bad
    return b' '.join(words)


def random_byte(rng):
    r = rng.random()
    if r < 0.35:
        return bytes([rng.randrange(256)])
    if r < 0.5:
        return b'\0'
    if r < 0.7:
        return bytes([rng.randrange(0x80, 0x100)])
    if r < 0.9:
        return bytes([rng.choice(SPECIAL_CHARS)])
    return rng.choice([b' ', b'\t', b'\v', b'\f', b'\r', b'\n'])


def m_bytes(rng, s, fname, env):
    s = bytearray(s)
    for _ in range(rng.choice([1, 1, 2, 3, 5, 8])):
        op = rng.random()
        pos = rng.randrange(len(s) + 1)
        if op < 0.4:
            s[pos:pos] = random_byte(rng)
        elif op < 0.8 and pos < len(s):
            s[pos:pos + 1] = random_byte(rng)
        elif pos < len(s):
            del s[pos]
    return bytes(s)


def m_utf8(rng, s, fname, env):
    ids = list(ID_RE.finditer(s))
    seq = rng.choice([b'\xc3\xa9', b'\xe2\x82\xac', b'\xf0\x9f\x98\x80',
                      b'\xc3', b'\xff\xfe', b'\x80', b'\xed\xa0\x80'])
    if not ids:
        return s + seq
    m = rng.choice(ids)
    pos = rng.randint(m.start(), m.end())
    return s[:pos] + seq + s[pos:]


def m_long_line(rng, s, fname, env):
    target = rng.choice([4093, 4094, 4095, 4096, 4097, 4200, 5000, 8190,
                         8191, 8192, 8193, 12000])
    how = rng.random()
    if how < 0.3:
        # Blanks in the middle of the line.
        pad = target - len(s)
        if pad <= 0:
            return s[:target]
        words = split_words(s)
        return words[0] + b' ' * pad + b' '.join([b''] + words[1:])[1:] \
            if len(words) > 1 else s + b' ' * pad
    if how < 0.5:
        # A comment making up the rest.
        pad = target - len(s) - 2
        return s + b' #' + b'c' * max(pad, 0)
    if how < 0.7:
        # One long token.
        pad = max(target - len(s) - 1, 1)
        tok = rng.choice([b'x' * pad, (b'\\"' + b'A' * pad)[:pad] + b'"',
                          b'+0(' * (pad // 4) + b'%di'])
        if fname == 'function_events':
            return s.replace(b'(', b'(u8 ' + tok[:pad] + b', ', 1)
        return s + b' ' + tok
    # Arguments up to the length.
    out = s
    i = 0
    while len(out) < target:
        if fname == 'function_events':
            pos = out.rfind(b')')
            pos = pos if pos >= 0 else len(out)
            out = out[:pos] + b', u8 L%d' % i + out[pos:]
        else:
            out += b' L%d=%%di' % i
        i += 1
    return out


def m_many_args(rng, s, fname, env):
    k = rng.choice([120, 125, 126, 127, 128, 129, 130, 135, 200, 300])
    if fname == 'function_events':
        sep = rng.choice([b', u8 M%d', b' | u8 M%d', b', NULL'])
        extra = b''.join(sep % i if b'%' in sep else sep for i in range(k))
        pos = s.rfind(b')')
        if pos < 0:
            return s + extra
        if s[pos - 1:pos] == b'(':
            extra = extra[2:] if extra.startswith(b', ') else extra[3:]
        return s[:pos] + extra + s[pos:]
    arg = rng.choice([b'M%d=%%di', b'M%d=$stack', b'M%d=+0(%%di):string',
                      b'M%d=@jiffies', b'$stack%d', b'M%d=$comm'])
    return s + b''.join(b' ' + (arg % i if b'%d' in arg else arg) for i in range(k))


def m_dup_name(rng, s, fname, env):
    reserved = rng.choice(RESERVED_NAMES).encode()
    if fname == 'function_events':
        names = re.findall(rb'\b(n[0-9]+)\b', s)
        name = rng.choice(names) if names and rng.random() < 0.6 else reserved
        pos = s.rfind(b')')
        pos = pos if pos >= 0 else len(s)
        glue = b' | ' if s[pos - 1:pos] != b'(' else b''
        return s[:pos] + glue + b'u32 ' + name + s[pos:]
    words = split_words(s)
    named = [w for w in words[2:] if b'=' in w]
    if named and rng.random() < 0.6:
        w = rng.choice(named)
        other = w.split(b'=', 1)[0] + b'=' + rng.choice([b'%si', b'$stack', b'@jiffies'])
        return s + b' ' + rng.choice([w, other])
    return s + b' ' + reserved + b'=%di'


def m_words(rng, s, fname, env):
    sep = b',' if fname == 'function_events' and rng.random() < 0.5 else None
    parts = s.split(sep) if sep else split_words(s)
    if len(parts) < 2:
        return s + s
    i, j = rng.randrange(len(parts)), rng.randrange(len(parts))
    op = rng.random()
    if op < 0.35:
        del parts[i]
    elif op < 0.7:
        parts.insert(j, parts[i])
    else:
        parts[i], parts[j] = parts[j], parts[i]
    return (sep or b' ').join(parts)


def m_blanks(rng, s, fname, env):
    out = bytearray()
    for c in s:
        if c == 0x20 and rng.random() < 0.5:
            out += rng.choice(SEPARATORS)
        else:
            out.append(c)
    if rng.random() < 0.3:
        out[0:0] = rng.choice([b' ', b'\t', b'   '])
    return bytes(out)


SPECIAL_EDITS = (
    (b'%return', (b'%retur', b'%RETURN', b'%return%return', b'% return',
                  b'%returnx', b'%', b'%return+0')),
    (b'->', (b'- >', b'->>', b'=>', b'-> ->', b'>', b'-')),
    (b'$arg', (b'$arg0', b'$arg-1', b'$args', b'$arg*', b'$', b'$arg99999',
               b'$argument')),
    (b'$stack', (b'$stack-1', b'$stack2049', b'$stack99999999999',
                 b'$stak', b'$stack0x10')),
    (b'$retval', (b'$retva', b'$retval1', b'$RETVAL', b'$retval$retval')),
    (b'$comm', (b'$com', b'$comm1', b'$COMM')),
    (b'@', (b'@@', b'@+', b'@-1', b'@0x', b'@ ', b'@nonexistent_symbol_xyz')),
    (b'%', (b'%%', b'%zz', b'%r16', b'%eax', b'%')),
    (b'\\', (b'\\\\', b'\\x', b'\\"', b'\\-', b'\\0x')),
    (b':', (b'::', b':/', b': ', b'')),
    (b'/', (b'//', b'/ ', b'', b'/.')),
    (b'=', (b'==', b'', b'= ', b'=:')),
    (b'(', (b'((', b'', b'()', b'( ')),
    (b')', (b'))', b'', b') )')),
    (b'[', (b'[[', b'', b'[-', b'[0x')),
    (b']', (b']]', b'', b'] [')),
    (b'|', (b'||', b'| |', b'')),
    (b',', (b',,', b', ,', b'')),
    (b'NULL', (b'NUL', b'null', b'NULL NULL', b'NULL[0]')),
)


def m_special(rng, s, fname, env):
    present = [(tok, alts) for tok, alts in SPECIAL_EDITS if tok in s]
    if not present:
        return m_bytes(rng, s, fname, env)
    tok, alts = rng.choice(present)
    starts = [m.start() for m in re.finditer(re.escape(tok), s)]
    pos = rng.choice(starts)
    return s[:pos] + rng.choice(alts) + s[pos + len(tok):]


MUTATIONS = (
    (m_truncate, 14), (m_number, 12), (m_deep, 8), (m_long_name, 7),
    (m_bad_type, 9), (m_bytes, 14), (m_utf8, 3), (m_long_line, 5),
    (m_many_args, 4), (m_dup_name, 6), (m_words, 6), (m_blanks, 4),
    (m_special, 10),
)


def pick_mutation(rng):
    total = sum(w for _, w in MUTATIONS)
    x = rng.uniform(0, total)
    for fn, w in MUTATIONS:
        x -= w
        if x <= 0:
            return fn
    return MUTATIONS[-1][0]


# ---------------------------------------------------------------------------
# Definitions: what one index writes.


class Definition:
    """The writes of one test definition."""

    def __init__(self, fname, pieces, mutations, goods=(), valid=False):
        self.fname = fname          # control file written
        self.pieces = pieces        # list of bytes, one write() each
        self.mutations = mutations  # names of the mutations applied
        self.goods = goods          # (before, after) valid lines around a bad one
        self.valid = valid          # every line valid by construction, written whole


def is_removal(payload):
    """True when some command in the write would remove definitions."""
    for seg in re.split(rb'[\n\0]', payload):
        seg = seg.lstrip(b' \t\n\r\v\f')
        if seg[:1] in (b'-', b'!'):
            return True
    return False


def make_definition(seed, idx, env):
    rng = random.Random('%s:%d' % (seed, idx))
    fname = rng.choice(DP_FILES)
    for _ in range(100):
        line = gen_valid(rng, env, fname, idx).encode()
        names = []
        valid = rng.random() < 0.06
        if not valid:
            for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
                fn = pick_mutation(rng)
                line = fn(rng, line, fname, env)
                names.append(fn.__name__[2:])
        mode = rng.random()
        if mode < 0.1 and line:
            payload = line + b'\n'
            cuts = sorted(set(rng.randrange(1, len(payload))
                              for _ in range(rng.randint(1, 5)) if len(payload) > 1))
            pieces = [payload[a:b] for a, b in zip([0] + cuts, cuts + [len(payload)])]
            names.append('split%d' % len(pieces))
            goods = ()
            # The pieces but the last end mid-line: each is a command.
            valid = valid and len(pieces) == 1
        elif mode < 0.2:
            goods = good_lines(rng, env, fname, idx, line)
            pieces = [goods[0] + b'\n' + line + b'\n' + goods[1] + b'\n']
            names.append('multiline')
        else:
            end = rng.choice([b'\n', b'\n', b'\n', b'', b'\n\n', b'\r\n'])
            pieces = [line + end]
            goods = ()
        if not any(is_removal(p) for p in pieces) and all(pieces):
            return Definition(fname, pieces, names, goods, valid)
    return Definition(fname, [b'# nothing\n'], ['none'])


def good_lines(rng, env, fname, idx, bad):
    """Two valid lines with names of their own around a bad line."""
    if fname == 'function_events':
        funcs = [f for f in env.funcs if f.encode() not in bad]
        a, b = rng.sample(funcs, 2)
        return (('%s(x64 g%d)' % (a, idx)).encode(),
                ('%s(u32 g%d)' % (b, idx)).encode())
    f = rng.choice(env.funcs)
    return (('p:mg/g%da %s a=%%di' % (idx, f)).encode(),
            ('p:mg/g%db %s b=%%si' % (idx, f)).encode())


# ---------------------------------------------------------------------------
# The checker


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def listing(fname, root=DYNPROBE):
    return read(root + '/' + fname)


def snapshot():
    return {f: listing(f) for f in DP_FILES}


def lines_of(text):
    return [l for l in text.split(b'\n') if l]


def event_of(fname, line):
    """(group, event) a listed line defines."""
    if fname == 'function_events':
        func = line.split(b'(', 1)[0].strip()
        close = line.rfind(b')')
        is_exit = line[close + 1:].lstrip().startswith(b'->')
        ev = func + (b'__exit' if is_exit else b'')
        ev = re.sub(rb'[.:*]', b'_', ev[:63])
        return b'functions', ev
    head = line.split(None, 1)[0]
    grp_ev = head.split(b':', 1)[1]
    grp, ev = grp_ev.split(b'/', 1)
    return grp, ev


def removal_line(fname, grp, ev, rng_bit):
    if fname == 'function_events':
        return b'!' + ev if rng_bit else b'-:functions/' + ev
    if fname == 'dynamic_events' and rng_bit:
        return b'!:' + grp + b'/' + ev
    return b'-:' + grp + b'/' + ev


class Checker:
    def __init__(self, seed, kernel_every, report, known):
        self.seed = seed
        self.kernel_every = kernel_every
        self.report = report
        self.known = known          # documented kinds of difference
        self.kinds_seen = collections.Counter()
        self.kcompare_due = 0       # definitions to compare with the kernel
        self.stats = collections.Counter()
        self.refused_errno = collections.Counter()
        self.refused_msg = collections.Counter()
        self.unlogged = collections.Counter()
        self.violations = []
        self.kdiff = collections.OrderedDict()
        self.kcompared = 0
        self.kdiff_count = 0
        self.caret_past_end = []
        self.valid_refused = []
        self.round_trip_as_kernel = []
        self.mutation_count = collections.Counter()
        self.state = snapshot()

    def violation(self, idx, d, what):
        self.violations.append((idx, d.fname, d.pieces, d.mutations, what))
        self.log('VIOLATION #%d %s %s: %s\n   writes: %r' %
                 (idx, d.fname, '+'.join(d.mutations), what, d.pieces[:8]))

    def log(self, msg):
        print(msg, flush=True)

    def check_preserved(self, idx, d, before, after, when):
        for f in DP_FILES:
            lost = collections.Counter(lines_of(before[f])) - collections.Counter(lines_of(after[f]))
            if lost:
                self.violation(idx, d, '%s: %s lost %r' % (when, f, list(lost)[:3]))
        kp = collections.Counter(lines_of(after['kprobe_events']))
        dyn = collections.Counter(lines_of(after['dynamic_events']))
        if kp - dyn:
            self.violation(idx, d, '%s: kprobe_events lists %r, dynamic_events not' %
                           (when, list(kp - dyn)[:3]))

    def check_event_files(self, idx, d, grp, ev):
        base = '%s/events/%s/%s' % (TRACING, grp.decode('latin-1'), ev.decode('latin-1'))
        try:
            fmt = read(base + '/format')
            read(base + '/id')
        except OSError as e:
            self.violation(idx, d, 'event %s/%s: format unreadable: %s' % (grp, ev, e))
            return
        if b'name: ' + ev + b'\n' not in fmt or b'print fmt: ' not in fmt:
            self.violation(idx, d, 'event %s/%s: odd format %r' % (grp, ev, fmt[:200]))

    def remove_new(self, idx, d, fname, new_lines, rng_bit):
        events = []
        for l in new_lines:
            e = event_of(fname, l)
            if e not in events:
                events.append(e)
        for grp, ev in events:
            res = write_pieces(DYNPROBE + '/' + fname, [removal_line(fname, grp, ev, rng_bit) + b'\n'])
            if res != [None]:
                self.violation(idx, d, 'removing %s/%s failed: %r' % (grp, ev, res))
            if os.path.exists('%s/events/%s/%s' % (TRACING, grp.decode('latin-1'),
                                                   ev.decode('latin-1'))):
                self.violation(idx, d, 'event %s/%s still there after removal' % (grp, ev))
        return events

    def new_lines(self, before, after, f):
        new = collections.Counter(lines_of(after[f])) - collections.Counter(lines_of(before[f]))
        return list(new.elements())

    def check_accepted(self, idx, d, before, after, fname, new):
        """New definitions: listed, format readable, removable, round trip."""
        # The other files show what they own of it, nothing else.
        for f in DP_FILES:
            if f == fname:
                continue
            other = self.new_lines(before, after, f)
            if fname == 'function_events' or f == 'function_events':
                expect = []
            elif f == 'dynamic_events':
                expect = new
            else:
                expect = [l for l in new if l[:1] in (b'p', b'r')]
            if collections.Counter(other) != collections.Counter(expect):
                self.violation(idx, d, '%s lists %r for %r' % (f, other[:3], new[:3]))
        for l in new:
            try:
                grp, ev = event_of(fname, l)
            except (IndexError, ValueError):
                self.violation(idx, d, 'listed line unparsable: %r' % l)
                continue
            self.check_event_files(idx, d, grp, ev)
        self.remove_new(idx, d, fname, new, idx & 1)
        now = snapshot()
        if now != before:
            self.violation(idx, d, 'state after removal differs: %r' %
                           {f: (before[f][-200:], now[f][-200:]) for f in DP_FILES if now[f] != before[f]})
            return now
        # Round trip: the listed text defines the same listing again.
        res = write_pieces(DYNPROBE + '/' + fname, [l + b'\n' for l in new])
        if any(r is not None for r in res):
            self.round_trip_refused(idx, d, fname, new, res)
        again = snapshot()
        back = self.new_lines(before, again, fname)
        if collections.Counter(back) != collections.Counter(new) and not any(res):
            self.violation(idx, d, 'round trip changed the listing: %r -> %r' % (new[:3], back[:3]))
        self.stats['round trips'] += 1
        self.remove_new(idx, d, fname, back, (idx >> 1) & 1)
        now = snapshot()
        if now != before:
            self.violation(idx, d, 'state after round trip differs')
        return now

    def round_trip_refused(self, idx, d, fname, new, res):
        """A listed line that is refused when written back is a violation
        unless the kernel refuses the same text too (a default event name
        made from a symbol that is no C identifier, say)."""
        entries = error_log_entries()
        clear_error_log()
        what = 'listed text refused when written back: %r -> %r %r' % (new[:3], res, entries[:1])
        if fname == 'function_events' or not self.kernel_every:
            self.violation(idx, d, what)
            return
        before = self.kernel_dyn_events()
        kres = write_pieces(TRACING + '/' + fname, [l + b'\n' for l in new])
        self.kernel_remove(self.kernel_new_since(before))
        kentries = error_log_entries()
        clear_error_log()
        if any(r is not None for r in kres):
            self.round_trip_as_kernel.append((idx, new[:2], kres, kentries[:1]))
        else:
            self.violation(idx, d, what + '; the kernel takes that text')

    def kernel_new_since(self, before):
        return list((collections.Counter(self.kernel_dyn_events()) -
                     collections.Counter(before)).elements())

    def kernel_remove(self, lines):
        for l in lines:
            grp, ev = event_of('dynamic_events', l)
            write_pieces(TRACING + '/dynamic_events', [b'-:' + grp + b'/' + ev + b'\n'])

    def classify_unlogged(self, d, piece, err):
        """Why the kernel would refuse this piece without an error_log entry."""
        if b'\0' in piece:
            return 'NUL byte in the write'
        segs = piece.split(b'\n')
        # The kernel's write buffer holds 4095 bytes and the NUL: a line
        # fits with its newline up to 4094 bytes, the last one without a
        # newline up to 4095.
        if any(len(s) > MAX_LINE for s in segs[:-1]) or len(segs[-1]) > MAX_LINE + 1:
            return 'line longer than %d bytes' % MAX_LINE
        if err == errno.ENOMEM and re.search(rb':%p[dD]', piece):
            return 'expanded %pd/%pD arguments too long (ENOMEM)'
        if d.fname == 'kprobe_events':
            for s in segs:
                s = s.split(b'#', 1)[0]
                words = split_words(s)
                if words and (words[0][:1] not in (b'p', b'r') or len(words) < 2):
                    return 'not a p/r line (kprobe_events)'
        return None

    def run(self, idx, d):
        self.stats['definitions'] += 1
        self.stats['file ' + d.fname] += 1
        for m in d.mutations:
            self.mutation_count[m] += 1
        path = DYNPROBE + '/' + d.fname
        before = self.state
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        results = []
        try:
            for p in d.pieces:
                clear_error_log()
                try:
                    n = os.write(fd, p)
                    err = None if n == len(p) else 'short'
                except OSError as e:
                    err = e.errno
                results.append(err)
                self.after_write(idx, d, p, err, before)
                before = self.state
        finally:
            os.close(fd)
        compare = (d.fname != 'function_events' and self.kernel_every and
                   (idx % self.kernel_every == 0 or getattr(d, 'unlogged', False)))
        if compare:
            self.kcompare_due += 1
            self.compare_kernel(idx, d, results)
        if d.goods:
            self.check_goods(idx, d, results)

    def after_write(self, idx, d, piece, err, before):
        after = snapshot()
        self.check_preserved(idx, d, before, after, 'after write')
        new = self.new_lines(before, after, d.fname)
        d.dyn_new = getattr(d, 'dyn_new', []) + new
        d.dyn_errlog = getattr(d, 'dyn_errlog', [])
        if err == 'short':
            self.violation(idx, d, 'short write')
        if err is None:
            self.stats['writes accepted'] += 1
            commands = [s for s in piece.split(b'\n')
                        if split_words(s.split(b'#', 1)[0].split(b'\0', 1)[0])]
            if len(new) != len(commands):
                self.violation(idx, d, '%d command(s) accepted, %d new listed line(s): %r' %
                               (len(commands), len(new), new[:3]))
            d.dyn_errlog.append(())
        else:
            self.stats['writes refused'] += 1
            name = errno.errorcode.get(err, str(err))
            self.refused_errno[name] += 1
            if err not in REFUSAL_ERRNOS:
                self.violation(idx, d, 'refused with unexpected errno %s' % name)
            entries = error_log_entries()
            d.dyn_errlog.append(tuple(entries))
            if entries:
                for msg, cmd, caret in entries:
                    self.refused_msg[(name, msg)] += 1
                    if caret and caret.index('^') > len('  Command: ') + len(cmd):
                        self.caret_past_end.append((msg, cmd, caret))
            else:
                why = self.classify_unlogged(d, piece, err)
                if why is None and d.fname != 'function_events' and self.kernel_every:
                    # Judged by the kernel's own answer (compare_kernel).
                    d.unlogged = True
                    why = 'other (compared with the kernel)'
                elif why is None:
                    self.violation(idx, d, 'refused (%s) without error_log' % name)
                    why = 'other'
                self.unlogged[(name, why)] += 1
            if d.valid:
                # Built valid and written whole: the kernel's syntax
                # takes it, so must dynprobe.
                self.valid_refused.append((idx, d.fname, piece, name, entries[:1]))
                self.violation(idx, d, 'valid-by-construction line refused (%s %s)' %
                               (name, entries[0][0] if entries else 'without error_log'))
        if new:
            self.stats['definitions accepted'] += 1
            after = self.check_accepted(idx, d, before, after, d.fname, new)
        elif after != before:
            self.violation(idx, d, 'files changed without a new definition')
        self.state = after

    def check_goods(self, idx, d, results):
        first, second = d.goods
        new = d.dyn_new
        ev_first = event_of(d.fname, first)
        ev_second = event_of(d.fname, second)
        listed = [event_of(d.fname, l) for l in new]
        if ev_first not in listed:
            self.violation(idx, d, 'the valid line before the bad one was not applied')
        if results[0] is not None and ev_second in listed:
            self.violation(idx, d, 'a line after the failing one was applied')

    # -- the kernel's own files ----------------------------------------

    def kernel_dyn_events(self):
        return lines_of(read(TRACING + '/dynamic_events'))

    def compare_kernel(self, idx, d, dyn_results):
        before = self.kernel_dyn_events()
        results, errlogs, new_all = [], [], []
        path = TRACING + '/' + d.fname
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            for p in d.pieces:
                clear_error_log()
                try:
                    os.write(fd, p)
                    results.append(None)
                    errlogs.append(())
                except OSError as e:
                    results.append(e.errno)
                    errlogs.append(tuple(error_log_entries()))
                new = self.kernel_new_since(before)
                new_all += new
                self.kernel_remove(new)
                before = self.kernel_dyn_events()
        finally:
            os.close(fd)
        clear_error_log()
        self.kcompared += 1
        if getattr(d, 'unlogged', False):
            # A refusal without error_log is the kernel's way only if the
            # kernel does the same.
            for i, (dr, kr) in enumerate(zip(dyn_results, results)):
                if dr is not None and not d.dyn_errlog[i] and (kr is None or errlogs[i]):
                    self.violation(idx, d, 'refused (%s) without error_log; the kernel %s' %
                                   (errno.errorcode.get(dr, dr),
                                    'accepts' if kr is None else 'logs %r' % (errlogs[i],)))
        def outcome(r, log):
            if r is None:
                return 'ok'
            return '%s %s' % (errno.errorcode.get(r, r), log[0][0] if log else '(no log)')
        dyn = [outcome(r, l) for r, l in zip(dyn_results, d.dyn_errlog)]
        ker = [outcome(r, l) for r, l in zip(results, errlogs)]
        line = b''.join(d.pieces).decode('latin-1')
        if dyn != ker:
            self.difference(idx, d, {'aspect': 'outcome', 'file': d.fname, 'line': line,
                                     'dynprobe': ' / '.join(dyn), 'kernel': ' / '.join(ker)})
        elif list(d.dyn_errlog) != errlogs:
            self.difference(idx, d, {'aspect': 'error_log', 'file': d.fname, 'line': line,
                                     'dynprobe': show_logs(d.dyn_errlog, True),
                                     'kernel': show_logs(errlogs, True)})
        elif collections.Counter(d.dyn_new) != collections.Counter(new_all):
            dw, kw = differing_words(d.dyn_new, new_all)
            self.difference(idx, d, {'aspect': 'listing', 'file': d.fname, 'line': line,
                                     'dynprobe': dw, 'kernel': kw})

    def difference(self, idx, d, diff):
        """A difference from the kernel: counted under its documented kind,
        or a violation."""
        self.kdiff_count += 1
        kind = known_kind(self.known, diff)
        if kind is None:
            self.violation(idx, d, 'differs from the kernel (%s), not a documented kind: '
                           'dynprobe %s | kernel %s' % (diff['aspect'], diff['dynprobe'],
                                                        diff['kernel']))
        key = (kind or 'UNDOCUMENTED', diff['aspect'], diff['file'], diff['dynprobe'][:300],
               diff['kernel'][:300])
        ent = self.kdiff.setdefault(key, [0, []])
        ent[0] += 1
        if len(ent[1]) < 2:
            ent[1].append((idx, d.pieces))
        self.kinds_seen[kind or 'UNDOCUMENTED'] += 1


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
    elapsed = time.monotonic() - start

    end_state = snapshot()
    if end_state != perm_state:
        checker.violations.append((-1, '', [], [], 'final state differs from the permanent definitions'))
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


def show_pieces(pieces, width=240):
    out = []
    for p in pieces[:6]:
        r = repr(p)
        out.append(r if len(r) <= width else r[:width] + '...(%d bytes)' % len(p))
    return ' + '.join(out)


def show_logs(logs, commands=False):
    """error_log entries per write: message, caret column and (with
    commands) the command as logged."""
    out = []
    for entries in logs:
        out.append('; '.join('%s @%d%s' % (m, caret.find('^') - len('  Command: '),
                                           ' in %r' % cmd if commands else '')
                             for m, cmd, caret in entries) or '-')
    return ' / '.join(out)


def differing_words(dyn, ker):
    """The words of two listings that differ: (dynprobe's, the kernel's),
    each joined by blanks; whole lines where the listings have different
    numbers of lines or words."""
    dw, kw = [], []
    dyn, ker = sorted(dyn), sorted(ker)
    if len(dyn) != len(ker):
        return ' | '.join(l.decode('latin-1') for l in dyn), \
            ' | '.join(l.decode('latin-1') for l in ker)
    for a, b in zip(dyn, ker):
        wa, wb = a.split(), b.split()
        if len(wa) != len(wb):
            dw.append(a.decode('latin-1'))
            kw.append(b.decode('latin-1'))
            continue
        for x, y in zip(wa, wb):
            if x != y:
                dw.append(x.decode('latin-1'))
                kw.append(y.decode('latin-1'))
    return ' '.join(dw), ' '.join(kw)


def summary(c, seed, n, elapsed):
    s = []
    w = s.append
    w('== malformed-input summary: seed %s, %d definitions, %.0f s ==' % (seed, n, elapsed))
    w('files: ' + ', '.join('%s %d' % (f, c.stats['file ' + f]) for f in DP_FILES))
    w('writes: %d accepted, %d refused; definitions with something accepted: %d; '
      'round trips: %d (floor: %s)' % (c.stats['writes accepted'], c.stats['writes refused'],
                                       c.stats['definitions accepted'], c.stats['round trips'],
                                       getattr(c, 'floor', None)))
    w('mutations: ' + ', '.join('%s %d' % kv for kv in sorted(c.mutation_count.items())))
    w('refused, by errno: ' + ', '.join('%s %d' % kv for kv in c.refused_errno.most_common()))
    w('refused with an error_log entry, by message:')
    for (e, msg), k in c.refused_msg.most_common():
        w('  %6d  %s  %s' % (k, e, msg))
    w('refused without an error_log entry (%d):' % sum(c.unlogged.values()))
    for (e, why), k in c.unlogged.most_common():
        w('  %6d  %s  %s' % (k, e, why))
    if c.valid_refused:
        w('valid-by-construction writes refused (%d; violations):' % len(c.valid_refused))
        for v in c.valid_refused[:10]:
            w('  #%d %s %r -> %s %r' % v)
    if c.round_trip_as_kernel:
        w('listed lines refused when written back, as the kernel refuses its own (%d):'
          % len(c.round_trip_as_kernel))
        for v in c.round_trip_as_kernel[:5]:
            w('  #%d %r: kernel %r %r' % v)
    if c.caret_past_end:
        w('error_log carets past the end of the command (%d):' % len(c.caret_past_end))
        for v in c.caret_past_end[:5]:
            w('  %r' % (v,))
    w('kernel comparison: %d of %d definitions meant for it written to the kernel\'s '
      'files too, %d differ' % (c.kcompared, c.kcompare_due, c.kdiff_count))
    # Kinds marked "bug: yes" are dynprobe's bugs, listed until fixed, not
    # accepted differences: counted apart.
    bugs = {e['kind'] for e in c.known if e.get('bug')}
    seen_bugs = sorted((k, n) for k, n in c.kinds_seen.items() if k in bugs)
    w('known bugs: %d' % sum(n for _, n in seen_bugs) + (' (%s)' % ', '.join(
        '%s %d' % kv for kv in seen_bugs) if seen_bugs else ''))
    w('differences by documented kind: ' + (', '.join(
        '%s %d' % kv for kv in sorted(c.kinds_seen.items()) if kv[0] not in bugs) or 'none'))
    for (kind, aspect, f, dyn, ker), (k, ex) in sorted(c.kdiff.items(),
                                                      key=lambda kv: (kv[0][0], -kv[1][0])):
        w('  %5d  [%s] %s %s: dynprobe %s | kernel %s' % (k, kind, aspect, f, dyn, ker))
        for idx, pieces in ex:
            w('         e.g. #%d writes %s' % (idx, show_pieces(pieces)))
    w('violations: %d' % len(c.violations))
    for idx, fname, pieces, muts, what in c.violations[:40]:
        w('  #%d %s %s: %s' % (idx, fname, '+'.join(muts), what))
        w('     writes %r' % (pieces[:6],))
    return '\n'.join(s) + '\n'


if __name__ == '__main__':
    sys.exit(main())
