# SPDX-License-Identifier: GPL-2.0
"""The checks of every write to dynprobe's control files: refusals (errno,
error_log), acceptances (listed, format file, removal, round trip), the
definitions that were there before left alone. The comparison with the
kernel's own files is KernelComparison's (compare.py). Part of the
malformed-input test (main.py beside this file).
"""

import collections
import errno
import os
import re

from compare import KernelComparison
from forms import DP_FILES, MAX_LINE
from listings import event_of, lines_of, removal_line, snapshot
from mutations import split_words
from tracefs import DYNPROBE, TRACING, clear_error_log, error_log_entries, read, write_pieces


# errnos the kernel's probe-event files refuse definitions with.
REFUSAL_ERRNOS = {errno.EINVAL, errno.E2BIG, errno.ENOENT, errno.EEXIST,
                  errno.ENOSPC, errno.EBUSY, errno.EOPNOTSUPP,
                  errno.EADDRNOTAVAIL, errno.EILSEQ, errno.ENOMEM,
                  errno.ERANGE}


class Checker(KernelComparison):
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
            lost = (collections.Counter(lines_of(before[f]))
                    - collections.Counter(lines_of(after[f])))
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
            res = write_pieces(DYNPROBE + '/' + fname,
                               [removal_line(fname, grp, ev, rng_bit) + b'\n'])
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
                           {f: (before[f][-200:], now[f][-200:])
                            for f in DP_FILES if now[f] != before[f]})
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
