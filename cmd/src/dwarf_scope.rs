// SPDX-License-Identifier: GPL-2.0
//! perf's find_best_scope for a place named by source file: of the
//! function and inline copies holding an address, the one declared in
//! the file nearest before the line.

use gimli::UnitOffset;

use crate::dwarf::{Dwarf, Unit};

/// perf's find_best_scope_cb without a function name: of `chain`, the
/// function or copy declared in `fname` nearest before `line` (the
/// first of equals).
pub fn nearest_declared<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    chain: impl Iterator<Item = UnitOffset>,
    fname: &str,
    line: u64,
) -> Option<UnitOffset> {
    let mut best: Option<(u64, UnitOffset)> = None;
    for o in chain {
        if dw.decl_file(unit, o).as_deref() != Some(fname) {
            continue;
        }
        let Some(decl) = Dwarf::decl_line(unit, o).filter(|&d| d < line) else {
            continue;
        };
        if best.is_none_or(|(d, _)| line - decl < d) {
            best = Some((line - decl, o));
        }
    }
    best.map(|(_, o)| o)
}
