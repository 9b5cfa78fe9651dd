# SPDX-License-Identifier: GPL-2.0
"""What one index of the run writes: a valid line, mutated or not,
written whole, in pieces or between two valid lines, as a Definition.
make_definition(seed, idx, env) is a function of its arguments only, so
MALFORMED_ONLY reruns one index as the full run wrote it. Part of the
malformed-input test (main.py beside this file).
"""

import random
import re

from forms import DP_FILES, gen_valid
from mutations import pick_mutation


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
