// SPDX-License-Identifier: GPL-2.0
//! SDT (USDT) markers: the `.note.stapsdt` notes `sys/sdt.h` leaves in a
//! binary, with their addresses adjusted by `.stapsdt.base` and mapped to
//! the file offsets a uprobe and its reference counter take.

use super::error::ElfError;
use super::file::{sht, u32_at, u64_at, Elf};

/// The section holding the markers.
const NOTE_SECTION: &[u8] = b".note.stapsdt";
/// The section whose link-time address the notes' `base` field records.
const BASE_SECTION: &[u8] = b".stapsdt.base";
/// The notes' owner name, NUL included.
const NOTE_OWNER: &[u8] = b"stapsdt\0";
/// `NT_STAPSDT`: the note type of a marker (version 3 of sdt.h).
const NT_STAPSDT: u32 = 3;
/// Note header: `n_namesz`, `n_descsz`, `n_type`.
const NOTE_HEADER_LEN: usize = 12;
/// The descriptor's three addresses: pc, base, semaphore.
const DESC_ADDRS_LEN: usize = 24;

/// One SDT marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdtNote<'a> {
    /// The provider (`PROVIDER` in `STAP_PROBE(PROVIDER, NAME, ...)`).
    pub provider: &'a [u8],
    /// The marker's name.
    pub name: &'a [u8],
    /// The marker's address, adjusted by `.stapsdt.base`.
    pub pc: u64,
    /// The file offset of `pc`: where the uprobe goes.
    pub pc_offset: u64,
    /// The semaphore's address, adjusted like `pc` (0: none).
    pub semaphore: u64,
    /// The file offset of the semaphore, the reference counter offset a
    /// uprobe line takes as `(REF_CTR_OFFSET)`; `None` without one.
    pub semaphore_offset: Option<u64>,
    /// The argument specs, separated by spaces (`-4@-20(%rbp) 8@%rax`);
    /// [`super::SdtArgs`] reads them.
    pub args: &'a [u8],
}

/// Rounds `n` up to a multiple of 4, the alignment of note fields.
fn align4(n: usize) -> Option<usize> {
    n.checked_add(3).map(|n| n & !3)
}

/// Splits the NUL-terminated string off the front of `b`.
fn take_string(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = b.iter().position(|&c| c == 0)?;
    Some((&b[..end], &b[end + 1..]))
}

impl<'a> Elf<'a> {
    /// The SDT markers of the file, in note order (none when it has no
    /// `.note.stapsdt`).
    ///
    /// As sys/sdt.h documents, a note records the link-time addresses of
    /// the marker, of `.stapsdt.base` and of the semaphore; when the file's
    /// `.stapsdt.base` sits elsewhere (prelink moved the image), the
    /// marker and its semaphore moved with it by the same amount.
    pub fn sdt_notes(&self) -> Result<SdtNotes<'a>, ElfError> {
        let Some(section) = self.section_by_name(NOTE_SECTION)? else {
            return Ok(SdtNotes {
                elf: *self,
                notes: &[],
                base: None,
            });
        };
        if section.kind != sht::NOTE {
            return Err(ElfError::BadNote);
        }
        let notes = self.section_data(&section)?;
        let base = self.section_by_name(BASE_SECTION)?.map(|s| s.addr);
        Ok(SdtNotes {
            elf: *self,
            notes,
            base,
        })
    }
}

/// Iterator over a file's SDT markers, from [`Elf::sdt_notes`]. A
/// malformed note ends it with its error; notes of other owners or types
/// are skipped.
#[derive(Clone, Debug)]
pub struct SdtNotes<'a> {
    elf: Elf<'a>,
    notes: &'a [u8],
    base: Option<u64>,
}

impl<'a> SdtNotes<'a> {
    /// The next note's owner, type and descriptor, consumed.
    fn next_note(&mut self) -> Result<(&'a [u8], u32, &'a [u8]), ElfError> {
        let b = self.notes;
        let namesz = usize::try_from(u32_at(b, 0).ok_or(ElfError::BadNote)?)
            .map_err(|_| ElfError::BadNote)?;
        let descsz = usize::try_from(u32_at(b, 4).ok_or(ElfError::BadNote)?)
            .map_err(|_| ElfError::BadNote)?;
        let kind = u32_at(b, 8).ok_or(ElfError::BadNote)?;
        let name_end = NOTE_HEADER_LEN
            .checked_add(namesz)
            .ok_or(ElfError::BadNote)?;
        let desc_start = align4(name_end).ok_or(ElfError::BadNote)?;
        let desc_end = desc_start.checked_add(descsz).ok_or(ElfError::BadNote)?;
        let name = b.get(NOTE_HEADER_LEN..name_end).ok_or(ElfError::BadNote)?;
        let desc = b.get(desc_start..desc_end).ok_or(ElfError::BadNote)?;
        // The last note's padding may be cut by the section's end.
        let next = align4(desc_end).ok_or(ElfError::BadNote)?.min(b.len());
        self.notes = b.get(next..).ok_or(ElfError::BadNote)?;
        Ok((name, kind, desc))
    }

    fn marker(&self, desc: &'a [u8]) -> Result<SdtNote<'a>, ElfError> {
        let pc = u64_at(desc, 0).ok_or(ElfError::BadNote)?;
        let note_base = u64_at(desc, 8).ok_or(ElfError::BadNote)?;
        let semaphore = u64_at(desc, 16).ok_or(ElfError::BadNote)?;
        let strings = desc.get(DESC_ADDRS_LEN..).ok_or(ElfError::BadNote)?;
        let (provider, rest) = take_string(strings).ok_or(ElfError::BadNote)?;
        let (name, rest) = take_string(rest).ok_or(ElfError::BadNote)?;
        // A marker without arguments may end after its name.
        let args = match rest {
            [] => rest,
            _ => take_string(rest).ok_or(ElfError::BadNote)?.0,
        };
        let moved = |addr: u64| match self.base {
            Some(base) if note_base != 0 => addr.wrapping_add(base.wrapping_sub(note_base)),
            _ => addr,
        };
        let pc = moved(pc);
        let semaphore = if semaphore != 0 { moved(semaphore) } else { 0 };
        let semaphore_offset = match semaphore {
            0 => None,
            addr => Some(self.elf.vaddr_to_offset(addr)?),
        };
        Ok(SdtNote {
            provider,
            name,
            pc,
            pc_offset: self.elf.vaddr_to_offset(pc)?,
            semaphore,
            semaphore_offset,
            args,
        })
    }
}

impl<'a> Iterator for SdtNotes<'a> {
    type Item = Result<SdtNote<'a>, ElfError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.notes.is_empty() {
            let (owner, kind, desc) = match self.next_note() {
                Ok(note) => note,
                Err(e) => {
                    self.notes = &[];
                    return Some(Err(e));
                }
            };
            if owner != NOTE_OWNER || kind != NT_STAPSDT {
                continue;
            }
            let marker = self.marker(desc);
            if marker.is_err() {
                self.notes = &[];
            }
            return Some(marker);
        }
        None
    }
}
