# SPDX-License-Identifier: GPL-2.0
"""The valid lines of the three control files and their generators.

The symbols of the running kernel the lines may use (Env, from kallsyms,
available_filter_functions, the kprobe blacklist and the kernel's own
kprobe_events), and valid kprobe_events/dynamic_events lines (p, r, f) and
function_events lines built from them with a seeded random.Random. Part
of the malformed-input test (main.py beside this file).
"""

import collections
import re

import kallsyms
import tracefs
from tracefs import TRACING, clear_error_log, read


DP_FILES = ('kprobe_events', 'dynamic_events', 'function_events')
MAX_LINE = 4094


REGS = ('ax bx cx dx si di bp sp r8 r9 r10 r11 r12 r13 r14 r15 ip flags cs '
        'ss orig_ax').split()
NUM_TYPES = 'u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 char'.split()
FE_ATOMS = ('u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 char short int '
            'long size_t symbol string').split()


class Env:
    """Symbols of the running kernel the definitions may use."""

    def __init__(self, rng):
        text, data, modtext = collections.Counter(), {}, {}
        addr_of = {}
        for addr, kind, name, module in kallsyms.entries():
            if module is not None:
                if kind in 'tT':
                    modtext.setdefault(module, []).append(name)
                continue
            if kind in 'tT':
                text[name] += 1
                addr_of[name] = addr
            elif kind in 'dDbB':
                data[name] = data.get(name, 0) + 1
                addr_of[name] = addr
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
        # Functions of loaded modules a kprobe may take: traceable (not a
        # .cold part, not notrace) and not blacklisted, as for the pool.
        # Not dynprobe's: its own text is no place for a probe
        # (selftests/safety/own_text.tc).
        mods = sorted(m + ':' + s for m, syms in modtext.items() if m != 'dynprobe'
                      for s in syms if s in traceable and s not in blacklist and
                      re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', s))
        self.mod_syms = mods[:4]
        # A module that is not loaded: kprobes on it wait for it, and
        # neither file takes such a place for a function's entry.
        self.unloaded = 'sit:ipip6_rcv'
        self.mod_syms.append(self.unloaded)


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
    entry_place = not re.search(r'\+0x[1-9]|^0x', place) and not place.startswith(env.unloaded)
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
