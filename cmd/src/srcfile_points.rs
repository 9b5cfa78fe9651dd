// SPDX-License-Identifier: GPL-2.0
//! The points of places named by source file, `SRC:ALN` and `SRC;PTN`,
//! as perf probe finds them without a function: every unit whose line
//! table has a file ending in SRC (perf's cu_find_realpath), the unit's
//! line rows of that line or of the lines the pattern matches, and at
//! each address the scope declared nearest before the line (perf's
//! find_best_scope with no function name).

use crate::dwarf::{bad, Dwarf, Unit};
use crate::dwarf_lines::{tail_eq, UnitView};
use crate::srcplace::{SourceProbe, Spot};
use crate::srcprobe::{Ctx, Point, Scope};

/// The first of a unit's line-table files whose path ends in `want`
/// (or that `want` ends in), as perf's cu_find_realpath.
pub fn unit_file<'a>(dw: &Dwarf<'a>, unit: &Unit<'a>, want: &str) -> Option<String> {
    let header = unit.line_program.as_ref()?.header();
    let count = header.file_names().len() as u64;
    // DWARF 5 numbers the files from 0 (the unit's own), older from 1.
    let first = u64::from(header.version() < 5);
    (first..first + count)
        .filter_map(|i| dw.file_path(unit, i))
        .find(|p| tail_eq(p, want))
}

/// The `.debug_info` offsets of the units with a file ending in `want`,
/// each with that file's path as the unit names it.
pub fn units_with_file(dw: &Dwarf<'_>, want: &str) -> Result<Vec<(usize, String)>, String> {
    let mut out = Vec::new();
    let mut headers = dw.dwarf.units();
    while let Some(h) = headers.next().map_err(bad)? {
        let Some(cu) = h.offset().as_debug_info_offset() else {
            continue;
        };
        let unit = dw.dwarf.unit(h).map_err(bad)?;
        if let Some(path) = unit_file(dw, &unit, want) {
            out.push((cu.0, path));
        }
    }
    Ok(out)
}

impl Ctx<'_> {
    /// The points of `SRC:ALN` or `SRC;PTN`.
    pub(crate) fn file_points(&mut self, sp: &SourceProbe) -> Result<Vec<Point>, String> {
        let want = sp.place.file.clone().unwrap_or_default();
        let units = units_with_file(&self.dw, &want)?;
        let mut out = Vec::new();
        // The pattern's lines, read once from the first unit's file (as
        // perf keeps them for the whole search).
        let mut wanted = None;
        for (cu, fname) in units {
            let unit = self.dw.unit(cu)?;
            let view = UnitView::new(&self.dw, &unit)?;
            let lines = view.unit_lines(&self.dw)?;
            match &sp.place.spot {
                Spot::AbsLine(lno) => {
                    for l in lines {
                        if l.line != *lno || !tail_eq(&l.file, &fname) {
                            continue;
                        }
                        if let Some((f2, l2)) = view.line_info(&self.dw, l.addr) {
                            if f2 == l.file && l2 != *lno {
                                return Err(format!(
                                    "This line is sharing the address with other lines: try {f2}:{l2} instead"
                                ));
                            }
                        }
                        let at = Scope::Line(&fname, *lno);
                        out.extend(self.point_at(&unit, &view, cu, l.addr, *lno, at, false)?);
                    }
                }
                Spot::Pattern(pat) => {
                    if wanted.is_none() {
                        wanted = Some(self.pattern_lines(&unit, &fname, pat)?);
                    }
                    let set = wanted.as_ref().ok_or("no pattern lines")?;
                    for l in lines {
                        if !set.contains(&l.line) || !tail_eq(&l.file, &fname) {
                            continue;
                        }
                        let at = Scope::Line(&fname, l.line);
                        out.extend(self.point_at(&unit, &view, cu, l.addr, l.line, at, false)?);
                    }
                }
                _ => return Err(format!("`{want}`: a source file takes :LINE or ;PATTERN")),
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|p| seen.insert(p.addr));
        if out.is_empty() {
            return Err(format!("Probe point '@{want}' not found."));
        }
        Ok(out)
    }
}
