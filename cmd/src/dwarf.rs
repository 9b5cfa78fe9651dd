// SPDX-License-Identifier: GPL-2.0
//! The DWARF of a debug file through gimli: the sections, units by
//! offset, and what a DIE says of itself (name, declaration, address
//! ranges, entry address). Every read is checked: malformed or truncated
//! debug info is an error, never a panic. References are followed within
//! the DIE's own unit (a vmlinux built without LTO has no others).

use std::collections::HashMap;

use gimli::{AttributeValue, DebugInfoOffset, EndianSlice, LittleEndian, UnitOffset};

use crate::debugfile::DebugFile;

/// The byte reader over the mapped file.
pub type R<'a> = EndianSlice<'a, LittleEndian>;
/// A unit of `.debug_info`.
pub type Unit<'a> = gimli::Unit<R<'a>>;
/// A DIE borrowed from its unit.
pub type Entry<'u, 'a> = gimli::DebuggingInformationEntry<'u, 'u, R<'a>>;

/// A file attribute's index into the line table's files.
fn file_index(v: AttributeValue<R<'_>>) -> Option<u64> {
    match v {
        AttributeValue::FileIndex(i) => Some(i),
        other => other.udata_value(),
    }
}

/// A DWARF error as the command says it.
pub fn bad(e: gimli::Error) -> String {
    format!("malformed debug info: {e}")
}

/// Calls `f` on each of `unit`'s top-level subprograms (the unit DIE's
/// children tagged DW_TAG_subprogram), in order; the first error stops.
pub fn each_top_level_subprogram<'a>(
    unit: &Unit<'a>,
    mut f: impl FnMut(&Entry<'_, 'a>) -> Result<(), String>,
) -> Result<(), String> {
    let mut tree = unit.entries_tree(None).map_err(bad)?;
    let root = tree.root().map_err(bad)?;
    let mut children = root.children();
    while let Some(child) = children.next().map_err(bad)? {
        let e = child.entry();
        if e.tag() == gimli::DW_TAG_subprogram {
            f(e)?;
        }
    }
    Ok(())
}

/// The DWARF sections of one debug file and the units read so far.
pub struct Dwarf<'a> {
    /// gimli's sections.
    pub dwarf: gimli::Dwarf<R<'a>>,
    /// `.debug_frame`, for the frame base (DW_OP_call_frame_cfa).
    pub frame: gimli::DebugFrame<R<'a>>,
    /// A user binary's `.eh_frame` with its section addresses, for the
    /// frame base where `.debug_frame` has no entry (set by the caller).
    pub eh_frame: Option<(gimli::EhFrame<R<'a>>, gimli::BaseAddresses)>,
    units: HashMap<usize, std::rc::Rc<Unit<'a>>>,
}

impl<'a> Dwarf<'a> {
    /// The sections of `file`.
    pub fn load(file: &'a DebugFile, obj: &object::File<'a>) -> Result<Dwarf<'a>, String> {
        let dwarf = gimli::Dwarf::load(|id| -> Result<R<'a>, String> {
            Ok(EndianSlice::new(file.section(obj, id.name()), LittleEndian))
        })?;
        let mut frame = gimli::DebugFrame::new(file.section(obj, ".debug_frame"), LittleEndian);
        frame.set_address_size(8);
        Ok(Dwarf {
            dwarf,
            frame,
            eh_frame: None,
            units: HashMap::new(),
        })
    }

    /// The unit starting at `.debug_info` offset `cu`, read once.
    pub fn unit(&mut self, cu: usize) -> Result<std::rc::Rc<Unit<'a>>, String> {
        if let Some(u) = self.units.get(&cu) {
            return Ok(u.clone());
        }
        let header = self
            .dwarf
            .debug_info
            .header_from_offset(DebugInfoOffset(cu))
            .map_err(bad)?;
        let unit = std::rc::Rc::new(self.dwarf.unit(header).map_err(bad)?);
        self.units.insert(cu, unit.clone());
        Ok(unit)
    }

    /// A string attribute's value.
    pub fn string(&self, unit: &Unit<'a>, v: AttributeValue<R<'a>>) -> Option<String> {
        let s = self.dwarf.attr_string(unit, v).ok()?;
        Some(String::from_utf8_lossy(s.slice()).into_owned())
    }

    /// The unit's compile directory and name.
    pub fn unit_dirs(&self, unit: &Unit<'a>) -> (Option<String>, Option<String>) {
        let s = |o: Option<R<'a>>| o.map(|r| String::from_utf8_lossy(r.slice()).into_owned());
        (s(unit.comp_dir), s(unit.name))
    }

    /// The path of the line table's file `index`: its directory (when
    /// not the compile directory) and its name, as the source tree has it
    /// (`fs/read_write.c`).
    pub fn file_path(&self, unit: &Unit<'a>, index: u64) -> Option<String> {
        let header = unit.line_program.as_ref()?.header();
        let f = header.file(index)?;
        let name = self.string(unit, f.path_name())?;
        if name.starts_with('/') {
            return Some(name);
        }
        let dir = match f.directory(header) {
            Some(d) if f.directory_index() != 0 || header.version() < 5 => self.string(unit, d),
            _ => None,
        };
        Some(match dir {
            Some(d) if !d.is_empty() => format!("{d}/{name}"),
            _ => name,
        })
    }

    /// The DIE a reference attribute names, within the same unit.
    pub fn reference(unit: &Unit<'a>, v: AttributeValue<R<'a>>) -> Option<UnitOffset> {
        match v {
            AttributeValue::UnitRef(o) => Some(o),
            AttributeValue::DebugInfoRef(o) => {
                let base = unit.header.offset().as_debug_info_offset()?.0;
                let off = o.0.checked_sub(base)?;
                let off = UnitOffset(off);
                Some(off)
            }
            _ => None,
        }
    }

    /// A DIE's attribute, or its abstract origin's or specification's
    /// (two steps at most, as libdw's dwarf_attr_integrate).
    pub fn attr_integrate(
        unit: &Unit<'a>,
        off: UnitOffset,
        at: gimli::DwAt,
    ) -> Option<AttributeValue<R<'a>>> {
        let mut off = off;
        for _ in 0..3 {
            let e = unit.entry(off).ok()?;
            if let Ok(Some(v)) = e.attr_value(at) {
                return Some(v);
            }
            let next = e
                .attr_value(gimli::DW_AT_abstract_origin)
                .ok()
                .flatten()
                .or_else(|| e.attr_value(gimli::DW_AT_specification).ok().flatten())?;
            off = Self::reference(unit, next)?;
        }
        None
    }

    /// A DIE's name (integrated).
    pub fn name(&self, unit: &Unit<'a>, off: UnitOffset) -> Option<String> {
        let v = Self::attr_integrate(unit, off, gimli::DW_AT_name)?;
        self.string(unit, v)
    }

    /// A DIE's declaration file (integrated).
    pub fn decl_file(&self, unit: &Unit<'a>, off: UnitOffset) -> Option<String> {
        let v = Self::attr_integrate(unit, off, gimli::DW_AT_decl_file)?;
        self.file_path(unit, file_index(v)?)
    }

    /// A DIE's declaration line (integrated).
    pub fn decl_line(unit: &Unit<'a>, off: UnitOffset) -> Option<u64> {
        Self::attr_integrate(unit, off, gimli::DW_AT_decl_line)?.udata_value()
    }

    /// An inlined copy's call file.
    pub fn call_file(&self, unit: &Unit<'a>, e: &Entry<'_, 'a>) -> Option<String> {
        let v = e.attr_value(gimli::DW_AT_call_file).ok()??;
        self.file_path(unit, file_index(v)?)
    }

    /// An inlined copy's call line.
    pub fn call_line(e: &Entry<'_, 'a>) -> Option<u64> {
        e.attr_value(gimli::DW_AT_call_line).ok()??.udata_value()
    }

    /// The address ranges a DIE covers (none for one without code).
    pub fn ranges(&self, unit: &Unit<'a>, e: &Entry<'_, 'a>) -> Result<Vec<(u64, u64)>, String> {
        let mut out = Vec::new();
        let mut it = self.die_ranges(unit, e)?;
        while let Some(r) = it.next().map_err(bad)? {
            if r.begin < r.end {
                out.push((r.begin, r.end));
            }
            if out.len() > 1 << 16 {
                return Err("malformed debug info: too many address ranges".into());
            }
        }
        Ok(out)
    }

    /// gimli's iterator of a DIE's ranges, with one check of its own:
    /// gimli adds a DW_AT_high_pc size to DW_AT_low_pc unchecked (an
    /// overflow panics in the command's builds), so an end past 2^64 is
    /// malformed debug info here.
    fn die_ranges(
        &self,
        unit: &Unit<'a>,
        e: &Entry<'_, 'a>,
    ) -> Result<gimli::RangeIter<R<'a>>, String> {
        let low = e
            .attr_value(gimli::DW_AT_low_pc)
            .ok()
            .flatten()
            .and_then(|v| self.dwarf.attr_address(unit, v).ok().flatten());
        if let (Some(low), Ok(Some(AttributeValue::Udata(size)))) =
            (low, e.attr_value(gimli::DW_AT_high_pc))
        {
            if low.checked_add(size).is_none() {
                return Err("malformed debug info: an address range ends past 2^64".into());
            }
        }
        self.dwarf.die_ranges(unit, e).map_err(bad)
    }

    /// Whether a DIE covers `addr`.
    pub fn has_pc(&self, unit: &Unit<'a>, e: &Entry<'_, 'a>, addr: u64) -> bool {
        self.ranges(unit, e)
            .map(|r| r.iter().any(|&(b, e)| b <= addr && addr < e))
            .unwrap_or(false)
    }

    /// A DIE's entry address, as libdw's: DW_AT_entry_pc, DW_AT_low_pc,
    /// else the first of its ranges.
    pub fn entry_pc(&self, unit: &Unit<'a>, e: &Entry<'_, 'a>) -> Option<u64> {
        let low = e
            .attr_value(gimli::DW_AT_low_pc)
            .ok()
            .flatten()
            .and_then(|v| self.dwarf.attr_address(unit, v).ok().flatten());
        if let Ok(Some(v)) = e.attr_value(gimli::DW_AT_entry_pc) {
            if let Ok(Some(a)) = self.dwarf.attr_address(unit, v) {
                return Some(a);
            }
            // DWARF 5: a constant is an offset from the low address.
            if let (Some(l), Some(o)) = (low, v.udata_value()) {
                return l.checked_add(o);
            }
        }
        if low.is_some() {
            return low;
        }
        e.attr_value(gimli::DW_AT_ranges).ok().flatten()?;
        let mut it = self.die_ranges(unit, e).ok()?;
        it.next().ok().flatten().map(|r| r.begin)
    }
}
