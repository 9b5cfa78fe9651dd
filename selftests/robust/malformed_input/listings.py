# SPDX-License-Identifier: GPL-2.0
"""The control files' listings: read, cut into lines, and the event a
listed line defines (and the line that removes it). Part of the
malformed-input test (main.py beside this file).
"""

import re

from forms import DP_FILES
from tracefs import DYNPROBE, read


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
