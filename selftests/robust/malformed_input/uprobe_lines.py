# SPDX-License-Identifier: GPL-2.0
"""Uprobe lines against the kernel's own uprobe_events and dynamic_events:
a fixed list of cases (broken offsets, reference counters and %return
suffixes, paths that are no regular file or none at all, fetch arguments
uprobes refuse: @SYM, $argN, BTF names, symbol types...) and seeded
mutations of valid uprobe lines. Each line is written to dynprobe's file
and then to the kernel's; the outcome (accepted, errno, error_log
message), the error_log entries (message, command, caret) and the
listing must be the same, or a kind known-differences.txt documents.
The probed file is /bin/bash (its real path), the offset that of a
function in it as binutils give it (selftests/uprobe/file_offset.sh). Part
of the malformed-input test (main.py beside this file).
"""

import collections
import errno
import os
import random
import subprocess

from definitions import Definition, is_removal
from listings import event_of, lines_of
from mutations import pick_mutation
from tracefs import DYNPROBE, TRACING, clear_error_log, error_log_entries, read, write_pieces

UPROBE_FILES = ('uprobe_events', 'dynamic_events')
# Indices of the uprobe lines in the report, apart from main.py's.
INDEX_BASE = 1000000


def probed_file():
    """(path, offset of a function) of the probed executable."""
    path = os.path.realpath('/bin/bash')
    here = os.path.dirname(os.path.abspath(__file__))
    oracle = os.path.join(here, '..', '..', 'uprobe', 'file_offset.sh')
    out = subprocess.run(
        ['sh', '-ec', '. "$1"; file_offset "$2" parse_and_execute', 'sh', oracle, path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return path, int(out, 16)


def valid_lines(path, off):
    """Valid uprobe lines of every form, the mutations' material."""
    place = '%s:0x%x' % (path, off)
    return [
        'p:mu/v1 %s' % place,
        'r:mu/v2 %s rv=$retval:s32 c=$comm' % place,
        'p:mu/v3 %s%%return rv=$retval:x64' % place,
        'p:mu/v4 %s(0x10) a=%%di b=+0(%%di):string c=+8(+0(%%si)):u16' % place,
        'p:mu/v5 %s s=$stack0 sp=$stack fo=@+0:x32 i=\\123 u=+0(%%di):ustring' % place,
        'p:mu/v6 %s arr=+0(%%di):u8[4] bf=%%ax:b3@4/32 at=@0x1000:s64' % place,
        'p %s %%ax' % place,
        'r %s %%bx' % place,
        'p:v7 %s %%cx:x8' % place,
        'p:mu/v8 %s:%d' % (path, off),
    ]


def fixed_cases(path, off):
    """Lines the kernel refuses (and a few it takes), each a kind of its
    own."""
    p = '%s:0x%x' % (path, off)
    long_missing = '/' + 'd' * 600 + '/x'
    return [
        # Offsets and their suffixes.
        'p:mu/e %s:' % path,
        'p:mu/e %s:0x' % path,
        'p:mu/e %s:-1' % path,
        'p:mu/e %s:+1' % path,
        'p:mu/e %s:1x' % path,
        'p:mu/e %s:0x1g' % path,
        'p:mu/e %s:99999999999999999999' % path,
        'p:mu/e %s:0xffffffffffffffff' % path,
        'p:mu/e %s:%d' % (path, os.path.getsize(path) + 4096),
        'p:mu/e %s(' % p,
        'p:mu/e %s()' % p,
        'p:mu/e %s(0x)' % p,
        'p:mu/e %s(-1)' % p,
        'p:mu/e %s(1)(2)' % p,
        'p:mu/e %s(1' % p,
        'p:mu/e %s(1)x' % p,
        'p:mu/e %s(1)%%return' % p,
        'p:mu/e %s%%return(1)' % p,
        'p:mu/e %s%%ret' % p,
        'p:mu/e %s%%return%%return' % p,
        'p:mu/e %s%%' % p,
        'r:mu/e %s%%return' % p,
        'p:mu/e %s (1)' % p,
        # Paths.
        'p:mu/e :10',
        'p:mu/e /nonexistent/file:10',
        'p:mu/e /:10',
        'p:mu/e /dev/null:10',
        'p:mu/e /proc:10',
        'p:mu/e bin/bash:10',
        'p:mu/e %s/:10' % path,
        'p:mu/e %s:10' % long_missing,
        'p:mu/e /bin/bash:10',
        'p:mu/e %s::10' % path,
        'p:mu/e %s:10:20' % path,
        # Fetch arguments uprobes refuse, or take differently.
        'p:mu/e %s @jiffies' % p,
        'p:mu/e %s @jiffies+8' % p,
        'p:mu/e %s x=+0(@vfs_read)' % p,
        'p:mu/e %s $arg1' % p,
        'p:mu/e %s $arg0' % p,
        'p:mu/e %s $args' % p,
        'p:mu/e %s a=+0($arg2):u32' % p,
        'p:mu/e %s $retval' % p,
        'r:mu/e %s $arg1' % p,
        'r:mu/e %s $retval:string' % p,
        'p:mu/e %s $stack' % p,
        'p:mu/e %s $stack99999' % p,
        'p:mu/e %s $stackx' % p,
        'p:mu/e %s $current' % p,
        'p:mu/e %s $comm:string' % p,
        'p:mu/e %s $comm:u32' % p,
        'p:mu/e %s count' % p,
        'p:mu/e %s file->f_mode' % p,
        'p:mu/e %s this_cpu_read(x)' % p,
        'p:mu/e %s %%ax:symbol' % p,
        'p:mu/e %s %%ax:symstr' % p,
        'p:mu/e %s %%ax:string' % p,
        'p:mu/e %s %%none' % p,
        'p:mu/e %s @+' % p,
        'p:mu/e %s @+-1' % p,
        'p:mu/e %s @+0x' % p,
        'p:mu/e %s @+ab' % p,
        'p:mu/e %s @-8' % p,
        'p:mu/e %s \\' % p,
        'p:mu/e %s \\"abc' % p,
        'p:mu/e %s \\"abc":u32' % p,
        'p:mu/e %s x=' % p,
        'p:mu/e %s =%%ax' % p,
        'p:mu/e %s 1a=%%ax' % p,
        'p:mu/e %s a=%%ax a=%%bx' % p,
        'p:mu/e %s ' % p + ' '.join('a%d=%%ax' % i for i in range(129)),
        'p:mu/e %s +0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%%di))))))))))))))))' % p,
        'p:mu/e %s %%ax:u8[65]' % p,
        'p:mu/e %s +0(%%di):string[2]' % p,
        'p:mu/e %s %%ax:b0@0/8' % p,
        # Names.
        'p:mu/ %s' % p,
        'p:/e %s' % p,
        'p:mu/1e %s' % p,
        'p:mu/e-x %s' % p,
        'p:mu-x/e %s' % p,
        'p:mu.e %s' % p,
        'p:%s/e %s' % ('g' * 64, p),
        'p:mu/%s %s' % ('e' * 64, p),
        'x:mu/e %s' % p,
        'p5:mu/e %s' % p,
        'p:mu/e',
        'p',
    ]


def write_and_list(root, fname, payload):
    """Writes payload to root's fname: (errno or None, error_log entries,
    the lines it added to the listing). The added definitions are removed
    again."""
    path = root + '/' + fname
    before = collections.Counter(lines_of(read(path)))
    clear_error_log()
    res = write_pieces(path, [payload])[0]
    entries = error_log_entries()
    clear_error_log()
    new = list((collections.Counter(lines_of(read(path))) - before).elements())
    for line in new:
        grp, ev = event_of(fname, line)
        write_pieces(path, [b'-:' + grp + b'/' + ev + b'\n'])
    clear_error_log()
    return (res if isinstance(res, int) else None), entries, new


def outcome(res, entries):
    if res is None:
        return 'ok'
    return '%s %s' % (errno.errorcode.get(res, res), entries[0][0] if entries else '(no log)')


def compare_line(checker, idx, fname, line, names):
    """One line through dynprobe's file and the kernel's."""
    payload = line.encode('latin-1') + b'\n'
    d = Definition(fname, [payload], names)
    dres, dlog, dnew = write_and_list(DYNPROBE, fname, payload)
    kres, klog, knew = write_and_list(TRACING, fname, payload)
    checker.stats['uprobe lines'] += 1
    checker.stats['uprobe lines accepted' if dres is None else 'uprobe lines refused'] += 1
    dout, kout = outcome(dres, dlog), outcome(kres, klog)
    shown = line if len(line) < 300 else line[:300] + '...'
    if dout != kout:
        checker.difference(idx, d, {'aspect': 'outcome', 'file': fname, 'line': shown,
                                    'dynprobe': dout, 'kernel': kout})
    elif dlog != klog:
        checker.difference(idx, d, {'aspect': 'error_log', 'file': fname, 'line': shown,
                                    'dynprobe': show_entries(dlog), 'kernel': show_entries(klog)})
    elif sorted(dnew) != sorted(knew):
        checker.difference(idx, d, {'aspect': 'listing', 'file': fname, 'line': shown,
                                    'dynprobe': b' | '.join(dnew).decode('latin-1'),
                                    'kernel': b' | '.join(knew).decode('latin-1')})


def show_entries(entries):
    return '; '.join('%s @%d in %r' % (m, caret.find('^') - len('  Command: '), cmd)
                     for m, cmd, caret in entries) or '-'


def run_uprobe_lines(checker, seed, mutated):
    """The fixed cases, then `mutated` mutations of the valid lines, each
    in both files. Returns the number of lines written to each."""
    path, off = probed_file()
    valid = valid_lines(path, off)
    lines = [(l, ['uprobe-valid']) for l in valid]
    lines += [(l, ['uprobe-case']) for l in fixed_cases(path, off)]
    rng = random.Random('%s:uprobe' % seed)
    while len(lines) < len(valid) + len(fixed_cases(path, off)) + mutated:
        line = rng.choice(valid).encode()
        names = []
        for _ in range(rng.choice([1, 1, 2])):
            fn = pick_mutation(rng)
            line = fn(rng, line, 'uprobe_events', None)
            names.append(fn.__name__[2:])
        # One command a line, no removals: the comparison is of
        # definitions.
        if b'\n' in line.rstrip(b'\n') or b'\0' in line or is_removal(line) or not line.strip():
            continue
        lines.append((line.decode('latin-1'), ['uprobe'] + names))
    for i, (line, names) in enumerate(lines):
        for fname in UPROBE_FILES:
            compare_line(checker, INDEX_BASE + i, fname, line, names)
    return len(lines)
