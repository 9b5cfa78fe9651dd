// SPDX-License-Identifier: GPL-2.0
//! A unit's line table and its DIE tree, walked as perf probe's
//! dwarf-aux.c walks them (die_walk_lines, cu_find_lineinfo,
//! die_find_inlinefunc), so that lines and addresses are the ones perf
//! probe finds: a line is probe-able in a function when the table has a
//! statement row for it inside the function and outside the inlined
//! copies it holds (or at their call line), plus the function's own
//! declaration line and its inlined copies' call lines at their entry.

use std::collections::HashMap;

use gimli::UnitOffset;

use crate::dwarf::{bad, each_top_level_subprogram, Dwarf, Unit};

/// One row of the line table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The address.
    pub addr: u64,
    /// The file's index.
    pub file: u64,
    /// The line (0: none).
    pub line: u64,
    /// A statement (is_stmt).
    pub stmt: bool,
    /// The end of a sequence.
    pub end: bool,
}

/// A unit's rows, sorted by address as libdw sorts them (then by
/// sequence), with the files' paths.
pub struct Lines {
    /// The rows.
    pub rows: Vec<Row>,
    files: HashMap<u64, String>,
}

/// A DIE of a function's subtree, in depth-first order.
#[derive(Clone, Debug)]
pub struct Node {
    /// Its offset in the unit.
    pub off: UnitOffset,
    /// Its tag.
    pub tag: gimli::DwTag,
    /// Its parent's index in the list (None: the root).
    pub parent: Option<usize>,
    /// Its address ranges.
    pub ranges: Vec<(u64, u64)>,
}

impl Node {
    /// Whether it covers `addr`.
    pub fn has_pc(&self, addr: u64) -> bool {
        self.ranges.iter().any(|&(b, e)| b <= addr && addr < e)
    }
}

/// A top-level function: its DIE and address ranges.
pub type Function = (UnitOffset, Vec<(u64, u64)>);

/// Nesting deeper than this is malformed debug info.
const MAX_DEPTH: isize = 256;

impl Lines {
    /// Reads `unit`'s line table.
    pub fn read<'a>(dw: &Dwarf<'a>, unit: &Unit<'a>) -> Result<Lines, String> {
        let mut rows = Vec::new();
        let mut seqs = Vec::new();
        let mut files = HashMap::new();
        if let Some(program) = unit.line_program.clone() {
            let mut it = program.rows();
            let mut seq = 0u64;
            while let Some((_, r)) = it.next_row().map_err(bad)? {
                rows.push(Row {
                    addr: r.address(),
                    file: r.file_index(),
                    line: r.line().map(|l| l.get()).unwrap_or(0),
                    stmt: r.is_stmt(),
                    end: r.end_sequence(),
                });
                seqs.push(seq);
                if r.end_sequence() {
                    seq += 1;
                }
            }
        }
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| (rows[i].addr, seqs[i]));
        let rows: Vec<Row> = order.into_iter().map(|i| rows[i]).collect();
        for r in &rows {
            if let std::collections::hash_map::Entry::Vacant(v) = files.entry(r.file) {
                v.insert(dw.file_path(unit, r.file).unwrap_or_default());
            }
        }
        Ok(Lines { rows, files })
    }

    /// A file's path.
    pub fn file(&self, index: u64) -> &str {
        self.files.get(&index).map(String::as_str).unwrap_or("")
    }

    /// The row for `addr`, as perf's cu_getsrc_die: from the last row at
    /// or before it, back to the first row at that address, then on to
    /// the first statement row, which must not be past `addr`.
    pub fn at(&self, addr: u64) -> Option<&Row> {
        let mut l = self
            .rows
            .partition_point(|r| r.addr <= addr)
            .checked_sub(1)?;
        while l > 0 && self.rows.get(l - 1)?.addr == addr {
            l -= 1;
        }
        // perf's backward step reads the row before the first one.
        if l == 0 {
            return None;
        }
        self.rows[l..]
            .iter()
            .take_while(|r| r.addr <= addr)
            .find(|r| r.stmt)
    }
}

/// `a` ends with `b` at a path boundary or whole, as perf's strtailcmp
/// (which compares from the ends, the shorter one wholly).
pub fn tail_eq(a: &str, b: &str) -> bool {
    a.ends_with(b) || b.ends_with(a)
}

/// The DIEs under (and including) `off`, depth first, with their ranges.
pub fn subtree<'a>(dw: &Dwarf<'a>, unit: &Unit<'a>, off: UnitOffset) -> Result<Vec<Node>, String> {
    let mut out: Vec<Node> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut cursor = unit.entries_at_offset(off).map_err(bad)?;
    let mut depth: isize = 0;
    let mut first = true;
    while let Some((delta, e)) = cursor.next_dfs().map_err(bad)? {
        if first {
            first = false;
        } else {
            depth += delta;
            if depth <= 0 {
                break;
            }
        }
        if depth > MAX_DEPTH {
            return Err("malformed debug info: DIEs nested too deep".into());
        }
        let d = depth.max(0) as usize;
        stack.truncate(d);
        let parent = stack.last().copied();
        let ranges = if matches!(
            e.tag(),
            gimli::DW_TAG_subprogram
                | gimli::DW_TAG_inlined_subroutine
                | gimli::DW_TAG_lexical_block
        ) {
            dw.ranges(unit, e)?
        } else {
            Vec::new()
        };
        out.push(Node {
            off: e.offset(),
            tag: e.tag(),
            parent,
            ranges,
        });
        stack.push(out.len() - 1);
    }
    Ok(out)
}

/// Whether node `i` is reached by a walk that descends only into DIEs
/// covering `addr` (perf's die_find_child with CONTINUE/SIBLING).
pub fn reached(nodes: &[Node], i: usize, addr: u64) -> bool {
    let mut p = nodes.get(i).and_then(|n| n.parent);
    while let Some(j) = p {
        let Some(n) = nodes.get(j) else { return false };
        if n.parent.is_some() && !n.has_pc(addr) {
            return false;
        }
        p = n.parent;
    }
    true
}

/// The innermost inlined copy under the root covering `addr` (perf's
/// die_find_inlinefunc): index into `nodes`.
pub fn inline_at(nodes: &[Node], addr: u64) -> Option<usize> {
    let mut found = None;
    for (i, n) in nodes.iter().enumerate().skip(1) {
        if n.tag == gimli::DW_TAG_inlined_subroutine && n.has_pc(addr) && reached(nodes, i, addr) {
            // Depth-first order: a later hit inside an earlier one is
            // deeper.
            match found {
                Some(f) if !descends(nodes, i, f) => {}
                _ => found = Some(i),
            }
        }
    }
    found
}

fn descends(nodes: &[Node], mut i: usize, anc: usize) -> bool {
    while let Some(p) = nodes.get(i).and_then(|n| n.parent) {
        if p == anc {
            return true;
        }
        i = p;
    }
    false
}

/// The unit's top-level functions with code: offset and ranges.
pub fn unit_functions<'a>(dw: &Dwarf<'a>, unit: &Unit<'a>) -> Result<Vec<Function>, String> {
    let mut out = Vec::new();
    each_top_level_subprogram(unit, |e| {
        let r = dw.ranges(unit, e)?;
        if !r.is_empty() {
            out.push((e.offset(), r));
        }
        Ok(())
    })?;
    Ok(out)
}

/// The unit's function covering `addr` (perf's die_find_realfunc).
pub fn real_function(funcs: &[Function], addr: u64) -> Option<UnitOffset> {
    funcs
        .iter()
        .find(|(_, r)| r.iter().any(|&(b, e)| b <= addr && addr < e))
        .map(|(o, _)| *o)
}

/// One (file, line, address) a walk reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineAt {
    /// The file's path.
    pub file: String,
    /// The line.
    pub line: u64,
    /// The address.
    pub addr: u64,
}

/// The unit's view for walks: lines, functions.
pub struct UnitView<'u, 'a> {
    /// The unit.
    pub unit: &'u Unit<'a>,
    /// Its lines.
    pub lines: Lines,
    /// Its top-level functions.
    pub funcs: Vec<Function>,
}

impl<'u, 'a> UnitView<'u, 'a> {
    /// Reads the unit's lines and functions.
    pub fn new(dw: &Dwarf<'a>, unit: &'u Unit<'a>) -> Result<Self, String> {
        Ok(UnitView {
            unit,
            lines: Lines::read(dw, unit)?,
            funcs: unit_functions(dw, unit)?,
        })
    }

    /// perf's cu_find_lineinfo: the file and line at `addr` (a
    /// function's declaration at its entry).
    pub fn line_info(&self, dw: &Dwarf<'a>, addr: u64) -> Option<(String, u64)> {
        if let Some(f) = real_function(&self.funcs, addr) {
            if let Ok(e) = self.unit.entry(f) {
                if dw.entry_pc(self.unit, &e) == Some(addr) {
                    let file = dw.decl_file(self.unit, f)?;
                    let line = Dwarf::decl_line(self.unit, f)?;
                    return (line != 0).then_some((file, line));
                }
            }
        }
        let r = self.lines.at(addr)?;
        let f = self.lines.file(r.file);
        (r.line != 0 && !f.is_empty()).then(|| (f.to_string(), r.line))
    }

    /// perf's die_walk_lines on function `root`: the rows inside it and
    /// outside its inlined copies, then its own and its copies' lines at
    /// their entries (`recursive`: the copies' copies too).
    pub fn function_lines(
        &self,
        dw: &Dwarf<'a>,
        root: UnitOffset,
        recursive: bool,
    ) -> Result<Vec<LineAt>, String> {
        let nodes = subtree(dw, self.unit, root)?;
        let mut out = Vec::new();
        let Some(top) = nodes.first() else {
            return Ok(out);
        };
        let decf = dw.decl_file(self.unit, root);
        let decl = Dwarf::decl_line(self.unit, root).unwrap_or(0);
        for r in &self.lines.rows {
            if r.end || !r.stmt || !top.has_pc(r.addr) {
                continue;
            }
            if let Some(i) = inline_at(&nodes, r.addr) {
                let inl = nodes[i].off;
                let e = self.unit.entry(inl).map_err(bad)?;
                let call_ok =
                    dw.call_file(self.unit, &e) == decf && Dwarf::call_line(&e) == Some(r.line);
                if !call_ok
                    && (Dwarf::decl_line(self.unit, inl).unwrap_or(0) != decl
                        || dw.decl_file(self.unit, inl) != decf)
                {
                    continue;
                }
            }
            out.push(LineAt {
                file: self.lines.file(r.file).to_string(),
                line: r.line,
                addr: r.addr,
            });
        }
        self.funclines(dw, root, &nodes, recursive, &mut out)?;
        Ok(out)
    }

    fn funclines(
        &self,
        dw: &Dwarf<'a>,
        root: UnitOffset,
        nodes: &[Node],
        recursive: bool,
        out: &mut Vec<LineAt>,
    ) -> Result<(), String> {
        let e = self.unit.entry(root).map_err(bad)?;
        if let (Some(file), Some(line), Some(addr)) = (
            dw.decl_file(self.unit, root),
            Dwarf::decl_line(self.unit, root),
            dw.entry_pc(self.unit, &e),
        ) {
            out.push(LineAt { file, line, addr });
        }
        for (i, n) in nodes.iter().enumerate().skip(1) {
            if n.tag != gimli::DW_TAG_inlined_subroutine {
                continue;
            }
            // Not recursive: no copy inside another copy.
            if !recursive && ancestors_have_inline(nodes, i) {
                continue;
            }
            let e = self.unit.entry(n.off).map_err(bad)?;
            let (Some(file), Some(line), Some(addr)) = (
                dw.call_file(self.unit, &e),
                Dwarf::call_line(&e),
                dw.entry_pc(self.unit, &e),
            ) else {
                continue;
            };
            if line > 0 {
                out.push(LineAt { file, line, addr });
            }
        }
        Ok(())
    }

    /// perf's die_walk_lines on the whole unit: every statement row, then
    /// each function's declaration and copies' call lines at their entry.
    pub fn unit_lines(&self, dw: &Dwarf<'a>) -> Result<Vec<LineAt>, String> {
        let mut out: Vec<LineAt> = self
            .lines
            .rows
            .iter()
            .filter(|r| !r.end && r.stmt)
            .map(|r| LineAt {
                file: self.lines.file(r.file).to_string(),
                line: r.line,
                addr: r.addr,
            })
            .collect();
        for (f, _) in &self.funcs {
            let nodes = subtree(dw, self.unit, *f)?;
            self.funclines(dw, *f, &nodes, true, &mut out)?;
        }
        Ok(out)
    }
}

fn ancestors_have_inline(nodes: &[Node], i: usize) -> bool {
    let mut p = nodes.get(i).and_then(|n| n.parent);
    while let Some(j) = p {
        let Some(n) = nodes.get(j) else { return false };
        if n.parent.is_some() && n.tag == gimli::DW_TAG_inlined_subroutine {
            return true;
        }
        p = n.parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails() {
        assert!(tail_eq("debian/build/fs/read_write.c", "fs/read_write.c"));
        assert!(tail_eq("read_write.c", "fs/read_write.c"));
        assert!(!tail_eq("fs/open.c", "fs/read_write.c"));
    }

    #[test]
    fn rows_by_address() {
        let row = |addr, line, end| Row {
            addr,
            file: 1,
            line,
            stmt: true,
            end,
        };
        let l = Lines {
            rows: vec![row(0x10, 3, false), row(0x10, 4, false), row(0x20, 5, true)],
            files: HashMap::new(),
        };
        // The first row before 0x10 is none: perf finds nothing.
        assert!(l.at(0x10).is_none());
        let l = Lines {
            rows: vec![
                row(0x8, 2, false),
                row(0x10, 3, false),
                row(0x10, 4, false),
                row(0x20, 5, true),
            ],
            files: HashMap::new(),
        };
        assert_eq!(l.at(0x10).unwrap().line, 3);
        assert_eq!(l.at(0x1f).unwrap().line, 4);
        assert_eq!(l.at(0x20).unwrap().line, 5);
        assert!(l.at(0x5).is_none());
    }
}
