# SPDX-License-Identifier: GPL-2.0
"""The same writes to the kernel's own kprobe_events and dynamic_events,
and what differs: acceptance, errno, error_log entry or listing. A
difference is counted under its documented kind (known.py) or is a
violation. Part of the malformed-input test (main.py beside this file).
"""

import collections
import errno
import os

from known import known_kind
from listings import event_of, lines_of
from tracefs import TRACING, clear_error_log, error_log_entries, read, write_pieces


class KernelComparison:
    """Checker's methods that write to the kernel's own files (Checker in
    checker.py holds the state they use)."""

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
