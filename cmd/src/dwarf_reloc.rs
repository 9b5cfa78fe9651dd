// SPDX-License-Identifier: GPL-2.0
//! The relocations of a relocatable debug file (ET_REL: a kernel
//! module's `.ko`): its DWARF's addresses and its offsets into other
//! debug sections are relocations, applied here to copies of the debug
//! sections. Each allocated section is placed at its file offset, as perf
//! places a module's symbols, so the code of different sections (`.text`,
//! `.init.text`) never shares an address and no function is at 0; a
//! probe names its place by symbol and offset, which the placement does
//! not change.

use std::collections::HashMap;

use object::read::elf::{ElfFile64, SectionHeader};
use object::{
    Endianness, Object, ObjectSection, ObjectSymbol, RelocationKind, RelocationTarget, SectionIndex,
};

/// The debug sections of a relocatable file, relocated, and where its
/// allocated sections are placed.
#[derive(Debug, Default)]
pub struct Relocated {
    sections: HashMap<String, Vec<u8>>,
    bases: HashMap<usize, u64>,
}

impl Relocated {
    /// The relocated debug sections of `obj`; `None` for a file that is
    /// not relocatable (a vmlinux, whose addresses are final).
    pub fn of(obj: &object::File<'_>) -> Result<Option<Relocated>, String> {
        if obj.kind() != object::ObjectKind::Relocatable {
            return Ok(None);
        }
        let object::File::Elf64(elf) = obj else {
            return Err("a relocatable debug file that is not 64-bit ELF".into());
        };
        let mut out = Relocated {
            bases: bases(elf),
            ..Relocated::default()
        };
        for sec in obj.sections() {
            let Ok(name) = sec.name() else { continue };
            if !name.starts_with(".debug_") {
                continue;
            }
            let mut data = sec.data().map_err(|e| format!("{name}: {e}"))?.to_vec();
            for (at, r) in sec.relocations() {
                out.apply(obj, name, &mut data, at, &r)?;
            }
            out.sections.insert(name.to_string(), data);
        }
        Ok(Some(out))
    }

    /// One relocation: the symbol's placed address plus the addend,
    /// written over the field at `at`.
    fn apply(
        &self,
        obj: &object::File<'_>,
        name: &str,
        data: &mut [u8],
        at: u64,
        r: &object::Relocation,
    ) -> Result<(), String> {
        let value = match r.target() {
            RelocationTarget::Symbol(i) => {
                let s = obj
                    .symbol_by_index(i)
                    .map_err(|e| format!("{name}: relocation symbol: {e}"))?;
                match s.section_index() {
                    Some(sec) => s.address().wrapping_add(self.base(sec)),
                    // Undefined or absolute: its own value.
                    None => s.address(),
                }
            }
            RelocationTarget::Section(sec) => self.base(sec),
            _ => 0,
        }
        .wrapping_add(r.addend() as u64);
        let bad = || format!("malformed debug info: a relocation outside {name}");
        let at = usize::try_from(at).map_err(|_| bad())?;
        match (r.kind(), r.size()) {
            (RelocationKind::Absolute, 64) => data
                .get_mut(at..at.checked_add(8).ok_or_else(bad)?)
                .ok_or_else(bad)?
                .copy_from_slice(&value.to_le_bytes()),
            (RelocationKind::Absolute, 32) => data
                .get_mut(at..at.checked_add(4).ok_or_else(bad)?)
                .ok_or_else(bad)?
                .copy_from_slice(&(value as u32).to_le_bytes()),
            // R_X86_64_NONE.
            (_, 0) => {}
            (k, s) => {
                return Err(format!(
                    "{name}: a relocation dynprobe cannot apply ({k:?}, {s} bits)"
                ))
            }
        }
        Ok(())
    }

    /// A relocated debug section.
    pub fn section(&self, name: &str) -> Option<&[u8]> {
        self.sections.get(name).map(Vec::as_slice)
    }

    /// Where section `sec` is placed (0 for one that is not allocated).
    pub fn base(&self, sec: SectionIndex) -> u64 {
        self.bases.get(&sec.0).copied().unwrap_or(0)
    }
}

/// Each allocated section's placement: its file offset.
fn bases(elf: &ElfFile64<'_, Endianness>) -> HashMap<usize, u64> {
    let endian = elf.endian();
    let mut out = HashMap::new();
    for (i, sh) in elf.elf_section_table().iter().enumerate() {
        if sh.sh_flags(endian) & u64::from(object::elf::SHF_ALLOC) != 0 {
            out.insert(i, sh.sh_offset(endian));
        }
    }
    out
}
