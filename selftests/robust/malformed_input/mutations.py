# SPDX-License-Identifier: GPL-2.0
"""Mutations of a valid line: truncation, odd numbers, deep
dereferences, long names and lines, bad types, binary bytes, many
arguments, duplicate names, word and blank edits, edits of the special
tokens. Each takes (rng, line, control file, Env) and returns bytes;
MUTATIONS weights them. Part of the malformed-input test (main.py beside
this file).
"""

import re


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
