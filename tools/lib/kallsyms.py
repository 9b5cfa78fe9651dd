# SPDX-License-Identifier: GPL-2.0
"""/proc/kallsyms for the Python tools that run in the test guest: its
lines parsed, and the address of a symbol of the kernel proper.

Imported as tracefs is (see tracefs.py beside this file).
"""

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
