# SPDX-License-Identifier: GPL-2.0
# Debian kernel release names, read one way everywhere (sourced by
# tools/lib/common.sh and tools/setup/stock-kernels).
# shellcheck shell=bash
# 7.2.13+deb14-rt-amd64: version 7.2.13, series 7.2, flavour rt-amd64;
# 7.3-amd64: version 7.3, series 7.3, flavour amd64.
version_of() { echo "${1%%[+-]*}"; }
series_of() { version_of "$1" | cut -d. -f1-2; }
flavour_of() { local f=${1#"$(version_of "$1")"}; f=${f#+deb*-}; echo "${f#-}"; }
# Whether version (or series) $1 is newer than $2.
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]; }
