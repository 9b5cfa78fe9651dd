# SPDX-License-Identifier: GPL-2.0
"""/proc/kallsyms for the project's Python tools: in the test guest, its
lines parsed and the address of a symbol of the kernel proper; on the
host, copies of it taken in the bench guest and the call chains sampled
there resolved against them (bench/perf-top.py, bench/profile.py: perf in
the guest cannot find dynprobe.ko's symbols on disk).

Imported as tracefs is (see tracefs.py beside this file).
"""
import bisect
import gzip
import re

KALLSYMS = '/proc/kallsyms'


def entries(path=KALLSYMS):
    """(address, type letter, name, module) per symbol, in the file's
    order; module is None for the kernel's own symbols (a module's lines
    end with its name in brackets). Lines of fewer than three words are
    skipped."""
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            module = parts[3].strip('[]') if len(parts) > 3 else None
            yield int(parts[0], 16), parts[1], parts[2], module


def address(name):
    """The address of the first symbol name of the kernel proper (not of a
    module); raises LookupError when there is none."""
    for addr, _, sym, module in entries():
        if module is None and sym == name:
            return addr
    raise LookupError(name)


class Symbols:
    """Text symbols of one or more /proc/kallsyms copies. Later files add
    to earlier ones: the ftrace and kprobe trampolines a contender makes
    appear in kallsyms only while it is enabled."""

    def __init__(self, *paths):
        table = {}
        for path in paths:
            for line in open(path):
                f = line.split()
                if len(f) >= 3 and f[1] in "tTwW" and not f[2].startswith("__pfx_"):
                    table[int(f[0], 16)] = f[2] + (" " + f[3] if len(f) > 3 else "")
        self.syms = sorted(table.items())
        self.addrs = [a for a, _ in self.syms]
        self.cache = {}

    def name(self, ip):
        if ip not in self.cache:
            self.cache[ip] = self._name(ip)
        return self.cache[ip]

    def _same_module_next(self, i):
        """Whether the symbol after symbol i is of the same module."""
        if i + 1 >= len(self.syms):
            return False
        module = self.syms[i][1].rpartition(" ")[2]
        return self.syms[i + 1][1].endswith(" " + module)

    def _name(self, ip):
        i = bisect.bisect_right(self.addrs, ip) - 1
        if i < 0:
            return hex(ip)
        n = self.syms[i][1]
        # Module text with no symbol of its own (an ftrace trampoline
        # made after the copy) lies past the last symbol of some module;
        # a large function (more than a page) is followed by another
        # symbol of its own module.
        if "[" in n and ip - self.syms[i][0] > 0x1000 and not self._same_module_next(i):
            return "(unnamed module text)"
        # Rust v0 mangling: keep the last identifier or two.
        if re.match(r"_R[A-Z]", n):
            n = "::".join(v0_identifiers(n.split()[0])[-2:]) + " [rust]"
        return n


def v0_identifiers(sym):
    """The identifiers of a Rust v0 symbol, roughly: each is its length in
    decimal, then that many characters, then another tag (a capital
    letter or the next length) or the end; the crate hashes and
    back-references fail that test."""
    out = []
    for m in re.finditer(r"(?<!\d)(\d+)", sym):
        end = m.end() + int(m.group(1))
        ident = sym[m.end():end]
        if end <= len(sym) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident) and \
                (end == len(sym) or sym[end].isupper() or sym[end].isdigit()):
            out.append(ident)
    return out


def chains(path):
    """The call chains of `perf script -F ip` of a `perf record -g` run
    (plain or gzipped), leaf first, one list of addresses a sample."""
    opener = gzip.open if path.endswith(".gz") else open
    cur = []
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if not line:
                if cur:
                    yield cur
                cur = []
                continue
            try:
                cur.append(int(line.split()[0], 16))
            except ValueError:
                pass
    if cur:
        yield cur
