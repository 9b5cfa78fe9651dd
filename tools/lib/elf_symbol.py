#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The file offset of a function in an ELF64 little-endian file, for tests
that define uprobes (whose place is PATH:OFFSET): the symbol is looked up
in .symtab, else .dynsym, and its address mapped to the file through the
loadable segment that holds it. Usage: elf_symbol.py FILE SYMBOL; prints
0xOFFSET, or fails."""

import struct
import sys


def section_symbols(data, shoff, shentsize, shnum, kind):
    """(name, value) of the symbols of the first section of type kind."""
    for i in range(shnum):
        sh = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        if sh[1] != kind:
            continue
        offset, size, link, entsize = sh[4], sh[5], sh[6], sh[9]
        strtab = struct.unpack_from("<IIQQQQIIQQ", data, shoff + link * shentsize)
        str_off = strtab[4]
        for at in range(offset, offset + size, entsize or 24):
            name, _info, _other, _shndx, value, _size = struct.unpack_from("<IBBHQQ", data, at)
            end = data.index(b"\0", str_off + name)
            yield data[str_off + name:end].decode("latin-1"), value
        return


def file_offset(path, symbol):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit(f"{path}: not an ELF64 little-endian file")
    phoff, shoff = struct.unpack_from("<QQ", data, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 54)
    value = None
    for kind in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
        for name, v in section_symbols(data, shoff, shentsize, shnum, kind):
            if name == symbol and v:
                value = v
                break
        if value is not None:
            break
    if value is None:
        raise SystemExit(f"{path}: no symbol {symbol}")
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_vaddr <= value < p_vaddr + p_filesz:
            return value - p_vaddr + p_offset
    raise SystemExit(f"{path}: {symbol} is in no loadable segment")


if __name__ == "__main__":
    print(hex(file_offset(sys.argv[1], sys.argv[2])))
