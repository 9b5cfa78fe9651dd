# SPDX-License-Identifier: GPL-2.0
"""The summary a run prints (and writes to MALFORMED_REPORT). Part of the
malformed-input test (main.py beside this file).
"""

from forms import DP_FILES


def show_pieces(pieces, width=240):
    out = []
    for p in pieces[:6]:
        r = repr(p)
        out.append(r if len(r) <= width else r[:width] + '...(%d bytes)' % len(p))
    return ' + '.join(out)


def summary(c, seed, n, elapsed):
    s = []
    w = s.append
    w('== malformed-input summary: seed %s, %d definitions, %.0f s ==' % (seed, n, elapsed))
    w('files: ' + ', '.join('%s %d' % (f, c.stats['file ' + f]) for f in DP_FILES))
    w('writes: %d accepted, %d refused; definitions with something accepted: %d; '
      'round trips: %d (floor: %s)' % (c.stats['writes accepted'], c.stats['writes refused'],
                                       c.stats['definitions accepted'], c.stats['round trips'],
                                       getattr(c, 'floor', None)))
    w('uprobe lines: %d written (to dynprobe\'s files and the kernel\'s), %d accepted, '
      '%d refused' % (c.stats['uprobe lines'], c.stats['uprobe lines accepted'],
                      c.stats['uprobe lines refused']))
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
