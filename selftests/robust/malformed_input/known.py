# SPDX-License-Identifier: GPL-2.0
"""The documented kinds of difference from the kernel's own files
(known-differences.txt beside this file): the list read, and a difference
matched against it. Part of the malformed-input test (main.py beside this
file).
"""

import os
import re


KNOWN_DIFFERENCES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 'known-differences.txt')
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
                raise ValueError('%s:%d: %s: %s' % (path, n, key, e)) from e
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
