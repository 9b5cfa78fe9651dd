// SPDX-License-Identifier: GPL-2.0
//! The ELF file itself: its header, section headers, string tables and
//! loadable segments, and the address-to-file-offset mapping through them;
//! read from the whole file or from the pieces of it a caller read.

use super::error::ElfError;

/// `ELFCLASS64`.
const CLASS_64: u8 = 2;
/// `ELFDATA2LSB`.
const DATA_LSB: u8 = 1;
/// `EV_CURRENT`.
const VERSION_CURRENT: u8 = 1;
/// `ET_EXEC`.
const TYPE_EXEC: u16 = 2;
/// `ET_DYN`.
const TYPE_DYN: u16 = 3;
/// `EM_X86_64`.
const MACHINE_X86_64: u16 = 62;
/// `sizeof(Elf64_Ehdr)`.
const EHDR_LEN: usize = 64;
/// `sizeof(Elf64_Shdr)`.
const SHDR_LEN: usize = 64;
/// `sizeof(Elf64_Phdr)`.
const PHDR_LEN: usize = 56;
/// `SHN_XINDEX`: the section names' index is in section 0's `sh_link`.
const SHN_XINDEX: u16 = 0xffff;
/// `PN_XNUM`: the number of program headers is in section 0's `sh_info`.
const PN_XNUM: u16 = 0xffff;
/// `PT_LOAD`.
const PT_LOAD: u32 = 1;

/// Section types (`SHT_*`).
pub(super) mod sht {
    pub(crate) const SYMTAB: u32 = 2;
    pub(crate) const STRTAB: u32 = 3;
    pub(crate) const NOTE: u32 = 7;
    pub(crate) const NOBITS: u32 = 8;
    pub(crate) const DYNSYM: u32 = 11;
    pub(crate) const GNU_VERSYM: u32 = 0x6fff_ffff;
}

pub(super) fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    let bytes: [u8; 2] = b.get(off..off.checked_add(2)?)?.try_into().ok()?;
    Some(u16::from_le_bytes(bytes))
}

pub(super) fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let bytes: [u8; 4] = b.get(off..off.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

pub(super) fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    let bytes: [u8; 8] = b.get(off..off.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// `b[off..off + len]` for 64-bit file offsets and sizes.
fn range(b: &[u8], off: u64, len: u64) -> Option<&[u8]> {
    let off = usize::try_from(off).ok()?;
    let len = usize::try_from(len).ok()?;
    b.get(off..off.checked_add(len)?)
}

/// Bytes of the file a caller read: the file's own from `offset` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece<'a> {
    /// Where in the file `bytes` start.
    pub offset: u64,
    /// What the file holds there.
    pub bytes: &'a [u8],
}

/// Where the reader finds the file's bytes.
#[derive(Clone, Copy, Debug)]
enum Source<'a> {
    /// All of it.
    Whole(&'a [u8]),
    /// The pieces a caller read of a file of `size` bytes.
    Pieces { size: u64, pieces: &'a [Piece<'a>] },
}

impl<'a> Source<'a> {
    /// The file's bytes `off..off + len`: `Ok(None)` when they are not
    /// all in the file (the caller says which error that is),
    /// [`ElfError::NotRead`] when they are in the file but in no one
    /// piece the caller read.
    fn get(&self, off: u64, len: u64) -> Result<Option<&'a [u8]>, ElfError> {
        match *self {
            Source::Whole(data) => Ok(range(data, off, len)),
            Source::Pieces { size, pieces } => {
                match off.checked_add(len) {
                    Some(end) if end <= size => {}
                    _ => return Ok(None),
                }
                for piece in pieces {
                    if let Some(rel) = off.checked_sub(piece.offset) {
                        if let Some(bytes) = range(piece.bytes, rel, len) {
                            return Ok(Some(bytes));
                        }
                    }
                }
                Err(ElfError::NotRead { offset: off, len })
            }
        }
    }
}

/// The NUL-terminated string at `off` in the string table `table`.
pub(super) fn string_at(table: &[u8], off: u32) -> Result<&[u8], ElfError> {
    let start = usize::try_from(off).map_err(|_| ElfError::StringOutOfTable)?;
    let rest = table.get(start..).ok_or(ElfError::StringOutOfTable)?;
    let len = rest
        .iter()
        .position(|&c| c == 0)
        .ok_or(ElfError::StringOutOfTable)?;
    Ok(&rest[..len])
}

/// An ELF64 little-endian x86_64 executable or shared object, read from
/// the bytes of the whole file ([`Elf::parse`]) or from pieces of it
/// ([`Elf::from_pieces`]).
///
/// Parsing checks the header and that the section and program header
/// tables lie inside the file; sections and segments are read from them
/// on demand, each checked as it is read.
#[derive(Clone, Copy, Debug)]
pub struct Elf<'a> {
    source: Source<'a>,
    /// The section header table, whole entries.
    shdrs: &'a [u8],
    /// The program header table, whole entries.
    phdrs: &'a [u8],
    /// Index of the section names' string table (0: none).
    shstrndx: u32,
    /// `e_type`.
    file_type: u16,
}

/// One section header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// Its index in the section header table.
    pub index: u32,
    /// `sh_name`: offset of its name in the section names' table.
    pub name: u32,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_addr`.
    pub addr: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`.
    pub info: u32,
    /// `sh_entsize`.
    pub entsize: u64,
}

/// One loadable segment (`PT_LOAD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `p_flags` (`PF_X` 1, `PF_W` 2, `PF_R` 4).
    pub flags: u32,
    /// `p_offset`.
    pub offset: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_filesz`.
    pub filesz: u64,
    /// `p_memsz`.
    pub memsz: u64,
}

impl<'a> Elf<'a> {
    /// Reads the header of `data`, the whole file, and checks it.
    pub fn parse(data: &'a [u8]) -> Result<Self, ElfError> {
        Self::parse_source(Source::Whole(data))
    }

    /// [`Elf::parse`] for a file of `size` bytes of which the caller read
    /// `pieces`. Every question answers as it would from the whole file,
    /// or fails with [`ElfError::NotRead`] naming the range it needs that
    /// no one piece holds: the caller reads it, adds it to the pieces and
    /// asks again (the ranges are the ELF header, the section and program
    /// header tables, and the sections asked about, each lying in the
    /// file).
    pub fn from_pieces(size: u64, pieces: &'a [Piece<'a>]) -> Result<Self, ElfError> {
        Self::parse_source(Source::Pieces { size, pieces })
    }

    fn parse_source(source: Source<'a>) -> Result<Self, ElfError> {
        let ident = source.get(0, EHDR_LEN as u64)?.ok_or(ElfError::Truncated)?;
        if ident[..4] != *b"\x7fELF" {
            return Err(ElfError::BadMagic);
        }
        if ident[4] != CLASS_64 {
            return Err(ElfError::BadClass);
        }
        if ident[5] != DATA_LSB {
            return Err(ElfError::BadEndian);
        }
        if ident[6] != VERSION_CURRENT {
            return Err(ElfError::BadVersion);
        }
        let field16 = |off| u16_at(ident, off).ok_or(ElfError::Truncated);
        let field64 = |off| u64_at(ident, off).ok_or(ElfError::Truncated);
        let file_type = field16(16)?;
        if file_type != TYPE_EXEC && file_type != TYPE_DYN {
            return Err(ElfError::BadType);
        }
        if field16(18)? != MACHINE_X86_64 {
            return Err(ElfError::BadMachine);
        }
        let phoff = field64(32)?;
        let shoff = field64(40)?;
        let phentsize = field16(54)?;
        let phnum = field16(56)?;
        let shentsize = field16(58)?;
        let shnum = field16(60)?;
        let shstrndx = field16(62)?;

        // Section 0 carries the counts that do not fit the header's 16
        // bits (extended numbering).
        let mut shdrs: &[u8] = &[];
        let mut section0: Option<&[u8]> = None;
        if shoff != 0 {
            if usize::from(shentsize) != SHDR_LEN {
                return Err(ElfError::BadHeaderTable);
            }
            let first = source
                .get(shoff, SHDR_LEN as u64)?
                .ok_or(ElfError::BadHeaderTable)?;
            section0 = Some(first);
            let count = if shnum == 0 {
                u64_at(first, 32).ok_or(ElfError::BadHeaderTable)?
            } else {
                u64::from(shnum)
            };
            let len = count
                .checked_mul(SHDR_LEN as u64)
                .ok_or(ElfError::BadHeaderTable)?;
            shdrs = source.get(shoff, len)?.ok_or(ElfError::BadHeaderTable)?;
        }
        let shstrndx = match (shstrndx, section0) {
            (SHN_XINDEX, Some(first)) => u32_at(first, 40).ok_or(ElfError::BadHeaderTable)?,
            (SHN_XINDEX, None) => return Err(ElfError::BadSectionIndex),
            (i, _) => u32::from(i),
        };
        let phnum = match (phnum, section0) {
            (PN_XNUM, Some(first)) => u64::from(u32_at(first, 44).ok_or(ElfError::BadHeaderTable)?),
            (n, _) => u64::from(n),
        };
        let mut phdrs: &[u8] = &[];
        if phnum != 0 {
            if usize::from(phentsize) != PHDR_LEN {
                return Err(ElfError::BadHeaderTable);
            }
            let len = phnum
                .checked_mul(PHDR_LEN as u64)
                .ok_or(ElfError::BadHeaderTable)?;
            phdrs = source.get(phoff, len)?.ok_or(ElfError::BadHeaderTable)?;
        }
        let elf = Elf {
            source,
            shdrs,
            phdrs,
            shstrndx,
            file_type,
        };
        if shstrndx != 0 {
            let names = elf.section(shstrndx)?;
            if names.kind != sht::STRTAB {
                return Err(ElfError::BadSectionIndex);
            }
            elf.section_data(&names)?;
        }
        Ok(elf)
    }

    /// Whether the file is a shared object or position-independent
    /// executable (`ET_DYN`) rather than a fixed-address one (`ET_EXEC`).
    pub fn is_dyn(&self) -> bool {
        self.file_type == TYPE_DYN
    }

    /// Number of section headers.
    pub fn nr_sections(&self) -> u32 {
        // The table lies in the file, so its entry count fits 32 bits on
        // the targets this builds for unless the file is over 256 GiB.
        u32::try_from(self.shdrs.len() / SHDR_LEN).unwrap_or(u32::MAX)
    }

    /// The section header at `index`.
    pub fn section(&self, index: u32) -> Result<Section, ElfError> {
        let start = usize::try_from(index)
            .ok()
            .and_then(|i| i.checked_mul(SHDR_LEN))
            .ok_or(ElfError::BadSectionIndex)?;
        let h = start
            .checked_add(SHDR_LEN)
            .and_then(|end| self.shdrs.get(start..end))
            .ok_or(ElfError::BadSectionIndex)?;
        let f32 = |off| u32_at(h, off).ok_or(ElfError::BadSectionIndex);
        let f64 = |off| u64_at(h, off).ok_or(ElfError::BadSectionIndex);
        Ok(Section {
            index,
            name: f32(0)?,
            kind: f32(4)?,
            addr: f64(16)?,
            offset: f64(24)?,
            size: f64(32)?,
            link: f32(40)?,
            info: f32(44)?,
            entsize: f64(56)?,
        })
    }

    /// The section headers in order.
    pub fn sections(&self) -> Sections<'a> {
        Sections {
            elf: *self,
            next: 0,
        }
    }

    /// The contents of `section`: empty for `SHT_NOBITS` (`.bss`).
    pub fn section_data(&self, section: &Section) -> Result<&'a [u8], ElfError> {
        if section.kind == sht::NOBITS {
            return Ok(&[]);
        }
        self.source
            .get(section.offset, section.size)?
            .ok_or(ElfError::SectionOutOfFile)
    }

    /// The name of `section` (empty when the file has no section names).
    pub fn section_name(&self, section: &Section) -> Result<&'a [u8], ElfError> {
        if self.shstrndx == 0 {
            return Ok(&[]);
        }
        let names = self.section_data(&self.section(self.shstrndx)?)?;
        string_at(names, section.name)
    }

    /// The first section named `name`.
    pub fn section_by_name(&self, name: &[u8]) -> Result<Option<Section>, ElfError> {
        for section in self.sections() {
            if self.section_name(&section)? == name {
                return Ok(Some(section));
            }
        }
        Ok(None)
    }

    /// The first section of type `kind` (`SHT_SYMTAB`, `SHT_DYNSYM`).
    pub(super) fn section_by_type(&self, kind: u32) -> Option<Section> {
        self.sections().find(|s| s.kind == kind)
    }

    /// The string table `index` names (a symbol table's `sh_link`).
    pub(super) fn string_table(&self, index: u32) -> Result<&'a [u8], ElfError> {
        let section = self.section(index)?;
        if section.kind != sht::STRTAB {
            return Err(ElfError::BadSectionIndex);
        }
        self.section_data(&section)
    }

    /// The loadable segments (`PT_LOAD`) in order.
    pub fn segments(&self) -> Segments<'a> {
        Segments {
            phdrs: self.phdrs,
            next: 0,
        }
    }

    /// The file offset where the image at virtual address `vaddr` comes
    /// from: through the loadable segment whose file part holds it, as
    /// perf and bpftrace map a symbol to the offset a uprobe takes.
    pub fn vaddr_to_offset(&self, vaddr: u64) -> Result<u64, ElfError> {
        for seg in self.segments() {
            let Some(delta) = vaddr.checked_sub(seg.vaddr) else {
                continue;
            };
            if delta < seg.filesz {
                return seg
                    .offset
                    .checked_add(delta)
                    .ok_or(ElfError::UnmappedAddress);
            }
        }
        Err(ElfError::UnmappedAddress)
    }
}

/// Iterator over the section headers, from [`Elf::sections`].
#[derive(Clone, Debug)]
pub struct Sections<'a> {
    elf: Elf<'a>,
    next: u32,
}

impl Iterator for Sections<'_> {
    type Item = Section;

    fn next(&mut self) -> Option<Section> {
        let section = self.elf.section(self.next).ok()?;
        self.next = self.next.saturating_add(1);
        Some(section)
    }
}

/// Iterator over the loadable segments, from [`Elf::segments`].
#[derive(Clone, Debug)]
pub struct Segments<'a> {
    phdrs: &'a [u8],
    next: usize,
}

impl Iterator for Segments<'_> {
    type Item = Segment;

    fn next(&mut self) -> Option<Segment> {
        loop {
            let start = self.next;
            let end = start.checked_add(PHDR_LEN)?;
            let h = self.phdrs.get(start..end)?;
            self.next = end;
            if u32_at(h, 0)? != PT_LOAD {
                continue;
            }
            return Some(Segment {
                flags: u32_at(h, 4)?,
                offset: u64_at(h, 8)?,
                vaddr: u64_at(h, 16)?,
                filesz: u64_at(h, 32)?,
                memsz: u64_at(h, 40)?,
            });
        }
    }
}
