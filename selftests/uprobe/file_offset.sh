# SPDX-License-Identifier: GPL-2.0
# Sourced by selftests/uprobe/*.tc (dash, set -e): the oracle for the file
# offset of a function, from binutils rather than dynprobe's ELF reader.
# shellcheck shell=dash

# The file offset of function $2 of file $1: its address (nm: .symtab,
# else .dynsym; `NAME@@VERSION` answers to NAME) through the loadable
# segment whose file part holds it (readelf -l), as 0xHEX.
file_offset() {
	fo_addr=$( (nm --defined-only "$1" 2> /dev/null; nm -D --defined-only "$1") |
		awk -v s="$2" '$2 ~ /^[TtWi]$/ && ($3 == s || index($3, s "@@") == 1) { print $1; exit }')
	test -n "$fo_addr"
	readelf -lW "$1" | while read -r type off va _pa fs _rest; do
		[ "$type" = LOAD ] || continue
		if [ $((0x$fo_addr)) -ge $((va)) ] && [ $((0x$fo_addr)) -lt $((va + fs)) ]; then
			printf '0x%x\n' $((0x$fo_addr - va + off))
			break
		fi
	done
}
