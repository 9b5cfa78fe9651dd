// SPDX-License-Identifier: GPL-2.0
//! Fuzz the ELF reader: any bytes as a whole file, and the same bytes
//! behind a valid ELF header whose section and program header tables the
//! first bytes place inside them, through every question a uprobe line or
//! `dynprobe list -x` asks: functions by name with offsets, variables,
//! the function listing, SDT markers and their argument specs turned into
//! fetch arguments; and functions by name asked of the file read in
//! pieces, as the kernel reads it, which must answer as the whole file.
#![no_main]

use dynprobe_lang::elf::*;
use libfuzzer_sys::fuzz_target;

const NAMES: &[&[u8]] = &[
    b"main",
    b"work",
    b"work+1",
    b"helper+0x4",
    b"malloc",
    b"memcpy@@GLIBC_2.14",
    b"x+99999999999999999999",
    b"",
];

/// `spec` resolved from `file` read in pieces: no piece at first, then
/// each range the reader names, until it answers (at most 16 reads).
fn resolve_in_pieces(file: &[u8], spec: &[u8]) -> Option<Result<u64, ElfError>> {
    let mut read: Vec<(u64, &[u8])> = Vec::new();
    for _ in 0..16 {
        let pieces: Vec<Piece<'_>> = read
            .iter()
            .map(|&(offset, bytes)| Piece { offset, bytes })
            .collect();
        match Elf::from_pieces(file.len() as u64, &pieces).and_then(|elf| elf.resolve(spec)) {
            Err(ElfError::NotRead { offset, len }) => {
                let start = usize::try_from(offset).ok()?;
                let end = start.checked_add(usize::try_from(len).ok()?)?;
                read.push((offset, file.get(start..end).expect("range in the file")));
            }
            done => return Some(done.map(|place| place.offset)),
        }
    }
    None
}

fn exercise(file: &[u8]) {
    for name in NAMES {
        if let Some(pieces) = resolve_in_pieces(file, name) {
            let whole = Elf::parse(file).and_then(|elf| elf.resolve(name).map(|p| p.offset));
            assert_eq!(whole, pieces);
        }
    }
    let Ok(elf) = Elf::parse(file) else {
        return;
    };
    let _ = elf.is_dyn();
    for section in elf.sections() {
        let _ = elf.section_data(&section);
        let _ = elf.section_name(&section);
    }
    for segment in elf.segments() {
        let _ = elf.vaddr_to_offset(segment.vaddr);
        let _ = elf.vaddr_to_offset(segment.vaddr.wrapping_add(segment.filesz));
    }
    for name in NAMES {
        if let Ok(place) = elf.resolve(name) {
            assert!(place.function.offset.is_some());
            assert!(place.offset >= place.function.offset.unwrap_or(0) || place.function.size == 0);
        }
        let _ = elf.lookup_variable(name);
    }
    if let Ok(functions) = elf.functions() {
        for function in functions.take(4096) {
            let Ok(function) = function else { break };
            let _ = elf.lookup_function(function.name, 0);
        }
    }
    if let Ok(notes) = elf.sdt_notes() {
        for note in notes.take(4096) {
            let Ok(note) = note else { break };
            for (_, arg) in SdtArgs::new(note.args) {
                let Ok(arg) = arg else { continue };
                let at = match arg.place {
                    SdtPlace::Symbol { name, .. } => elf
                        .lookup_variable(name)
                        .ok()
                        .map(|v| v.address.wrapping_sub(note.pc).wrapping_add(note.pc_offset)),
                    _ => None,
                };
                let mut text = String::new();
                let _ = arg.write_fetch(&mut text, at);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    for (_, arg) in SdtArgs::new(data) {
        let _ = arg;
    }
    // The same bytes behind a header: data[0..2] section count,
    // data[2..4] section table offset, data[4] program header count,
    // data[5..7] their offset, data[7..9] the section names' index; the
    // offsets count from the start of the file (the header is 64 bytes).
    if data.len() < 9 {
        return;
    }
    let u16_at = |i: usize| u16::from_le_bytes([data[i], data[i + 1]]);
    let mut file = Vec::with_capacity(64 + data.len());
    file.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    file.extend_from_slice(&(2 + u16::from(data[0] & 1)).to_le_bytes());
    file.extend_from_slice(&62u16.to_le_bytes());
    file.extend_from_slice(&1u32.to_le_bytes());
    file.extend_from_slice(&0u64.to_le_bytes());
    file.extend_from_slice(&u64::from(u16_at(5)).to_le_bytes());
    file.extend_from_slice(&u64::from(u16_at(2)).to_le_bytes());
    file.extend_from_slice(&0u32.to_le_bytes());
    file.extend_from_slice(&64u16.to_le_bytes());
    file.extend_from_slice(&56u16.to_le_bytes());
    file.extend_from_slice(&u16::from(data[4] % 16).to_le_bytes());
    file.extend_from_slice(&64u16.to_le_bytes());
    file.extend_from_slice(&(u16_at(0) % 64).to_le_bytes());
    file.extend_from_slice(&(u16_at(7) % 64).to_le_bytes());
    file.extend_from_slice(&data[9..]);
    exercise(&file);
});
