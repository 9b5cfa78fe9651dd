// SPDX-License-Identifier: GPL-2.0
//! The ELF reader (`lang::elf`) against files built here byte by byte, a
//! program compiled with the host's `cc` (with an SDT marker written the
//! way sys/sdt.h writes it), and the host's own binaries compared with
//! `readelf`; malformed files, which must be refused without a panic; and
//! SDT argument specs.

use dynprobe_lang::elf::*;
use std::process::Command;

// ---- A small ELF writer -------------------------------------------------

const SHT_PROGBITS: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_NOTE: u32 = 7;
const SHT_NOBITS: u32 = 8;
const SHT_DYNSYM: u32 = 11;
const SHT_GNU_VERSYM: u32 = 0x6fff_ffff;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;
const STT_GNU_IFUNC: u8 = 10;
const STB_LOCAL: u8 = 0;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;

/// Text: file 0x1000..0x1100 at 0x401000. Data: file 0x2000..0x2100 at
/// 0x403000, 0x200 in memory (the rest is bss). The two segments map
/// file offsets to addresses differently.
const TEXT_OFF: u64 = 0x1000;
const TEXT_ADDR: u64 = 0x401000;
const DATA_OFF: u64 = 0x2000;
const DATA_ADDR: u64 = 0x403000;
const SEG_FILESZ: u64 = 0x100;
const TEXT_INDEX: u16 = 1;
const DATA_INDEX: u16 = 2;

struct Sec {
    name: String,
    kind: u32,
    addr: u64,
    offset: Option<u64>,
    data: Vec<u8>,
    link: u32,
    entsize: u64,
}

struct Builder {
    sections: Vec<Sec>,
    machine: u16,
    file_type: u16,
}

#[derive(Default)]
struct Strings(Vec<u8>);

impl Strings {
    fn new() -> Self {
        Strings(vec![0])
    }
    fn add(&mut self, s: &str) -> u32 {
        let off = self.0.len() as u32;
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        off
    }
}

/// One `Elf64_Sym`.
fn sym(name: u32, kind: u8, bind: u8, shndx: u16, value: u64, size: u64) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&name.to_le_bytes());
    b.push((bind << 4) | kind);
    b.push(0);
    b.extend_from_slice(&shndx.to_le_bytes());
    b.extend_from_slice(&value.to_le_bytes());
    b.extend_from_slice(&size.to_le_bytes());
    b
}

/// A symbol table and its string table from (name, type, bind, section,
/// value, size), the null symbol first.
fn symbols(list: &[(&str, u8, u8, u16, u64, u64)]) -> (Vec<u8>, Vec<u8>) {
    let mut strings = Strings::new();
    let mut table = sym(0, 0, 0, 0, 0, 0);
    for &(name, kind, bind, shndx, value, size) in list {
        let n = strings.add(name);
        table.extend(sym(n, kind, bind, shndx, value, size));
    }
    (table, strings.0)
}

impl Builder {
    /// An executable with its text and data sections.
    fn new() -> Self {
        let mut b = Builder {
            sections: Vec::new(),
            machine: 62,
            file_type: 2,
        };
        b.add(
            ".text",
            SHT_PROGBITS,
            TEXT_ADDR,
            Some(TEXT_OFF),
            vec![0x90; 0x100],
            0,
            0,
        );
        b.add(
            ".data",
            SHT_PROGBITS,
            DATA_ADDR,
            Some(DATA_OFF),
            vec![0; 0x100],
            0,
            0,
        );
        b
    }

    /// Adds a section; returns its index.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        name: &str,
        kind: u32,
        addr: u64,
        offset: Option<u64>,
        data: Vec<u8>,
        link: u32,
        entsize: u64,
    ) -> u32 {
        self.sections.push(Sec {
            name: name.into(),
            kind,
            addr,
            offset,
            data,
            link,
            entsize,
        });
        self.sections.len() as u32
    }

    /// Adds a symbol table (`.symtab` or `.dynsym`) with its strings.
    fn add_symbols(&mut self, dynamic: bool, list: &[(&str, u8, u8, u16, u64, u64)]) -> u32 {
        let (table, strings) = symbols(list);
        let (tname, sname, kind) = if dynamic {
            (".dynsym", ".dynstr", SHT_DYNSYM)
        } else {
            (".symtab", ".strtab", SHT_SYMTAB)
        };
        let strtab = self.add(sname, SHT_STRTAB, 0, None, strings, 0, 0);
        self.add(tname, kind, 0, None, table, strtab, 24)
    }

    fn build(&self) -> Vec<u8> {
        let mut out = vec![0u8; 0x3000];
        let mut names = Strings::new();
        let mut headers = vec![0u8; 64];
        let place = |out: &mut Vec<u8>, s: &Sec| -> u64 {
            if s.kind == SHT_NOBITS {
                return s.offset.unwrap_or(0);
            }
            let off = match s.offset {
                Some(off) => off,
                None => (out.len() as u64 + 7) & !7,
            };
            let end = off as usize + s.data.len();
            if out.len() < end {
                out.resize(end, 0);
            }
            out[off as usize..end].copy_from_slice(&s.data);
            off
        };
        for s in &self.sections {
            let off = place(&mut out, s);
            let mut h = Vec::new();
            h.extend_from_slice(&names.add(&s.name).to_le_bytes());
            h.extend_from_slice(&s.kind.to_le_bytes());
            h.extend_from_slice(&0u64.to_le_bytes());
            h.extend_from_slice(&s.addr.to_le_bytes());
            h.extend_from_slice(&off.to_le_bytes());
            h.extend_from_slice(&(s.data.len() as u64).to_le_bytes());
            h.extend_from_slice(&s.link.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&8u64.to_le_bytes());
            h.extend_from_slice(&s.entsize.to_le_bytes());
            headers.extend(h);
        }
        // The section names last.
        let shstrndx = self.sections.len() + 1;
        let name = names.add(".shstrtab");
        let names_off = (out.len() as u64 + 7) & !7;
        out.resize(names_off as usize, 0);
        out.extend_from_slice(&names.0);
        let mut h = Vec::new();
        h.extend_from_slice(&name.to_le_bytes());
        h.extend_from_slice(&SHT_STRTAB.to_le_bytes());
        h.extend_from_slice(&[0; 16]);
        h.extend_from_slice(&names_off.to_le_bytes());
        h.extend_from_slice(&(names.0.len() as u64).to_le_bytes());
        h.extend_from_slice(&[0; 24]);
        headers.extend(h);
        let shoff = (out.len() as u64 + 7) & !7;
        out.resize(shoff as usize, 0);
        out.extend_from_slice(&headers);

        // Header and program headers.
        let phoff = 64u64;
        let mut e = Vec::new();
        e.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
        e.extend_from_slice(&self.file_type.to_le_bytes());
        e.extend_from_slice(&self.machine.to_le_bytes());
        e.extend_from_slice(&1u32.to_le_bytes());
        e.extend_from_slice(&TEXT_ADDR.to_le_bytes());
        e.extend_from_slice(&phoff.to_le_bytes());
        e.extend_from_slice(&shoff.to_le_bytes());
        e.extend_from_slice(&0u32.to_le_bytes());
        e.extend_from_slice(&64u16.to_le_bytes());
        e.extend_from_slice(&56u16.to_le_bytes());
        e.extend_from_slice(&2u16.to_le_bytes());
        e.extend_from_slice(&64u16.to_le_bytes());
        e.extend_from_slice(&(shstrndx as u16 + 1).to_le_bytes());
        e.extend_from_slice(&(shstrndx as u16).to_le_bytes());
        for (flags, off, addr, memsz) in [
            (5u32, TEXT_OFF, TEXT_ADDR, SEG_FILESZ),
            (6, DATA_OFF, DATA_ADDR, 2 * SEG_FILESZ),
        ] {
            e.extend_from_slice(&1u32.to_le_bytes());
            e.extend_from_slice(&flags.to_le_bytes());
            e.extend_from_slice(&off.to_le_bytes());
            e.extend_from_slice(&addr.to_le_bytes());
            e.extend_from_slice(&addr.to_le_bytes());
            e.extend_from_slice(&SEG_FILESZ.to_le_bytes());
            e.extend_from_slice(&memsz.to_le_bytes());
            e.extend_from_slice(&0x1000u64.to_le_bytes());
        }
        out[..e.len()].copy_from_slice(&e);
        out
    }
}

/// The executable most tests use: functions, aliases, a versioned name,
/// an IFUNC, a static beside a global of the same name, variables.
fn sample() -> Vec<u8> {
    let mut b = Builder::new();
    b.add_symbols(
        false,
        &[
            ("helper", STT_FUNC, STB_LOCAL, TEXT_INDEX, 0x401000, 0x10),
            ("main", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401010, 0x20),
            ("main_alias", STT_FUNC, STB_WEAK, TEXT_INDEX, 0x401010, 0),
            ("dup", STT_FUNC, STB_LOCAL, TEXT_INDEX, 0x401030, 0x8),
            ("dup", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401038, 0x8),
            ("twice", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401040, 0x8),
            ("twice", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401048, 0x8),
            (
                "puts@@GLIBC_2.2.5",
                STT_FUNC,
                STB_GLOBAL,
                TEXT_INDEX,
                0x401050,
                0x10,
            ),
            (
                "memcpy",
                STT_GNU_IFUNC,
                STB_GLOBAL,
                TEXT_INDEX,
                0x401060,
                0x10,
            ),
            ("external", STT_FUNC, STB_GLOBAL, 0, 0, 0),
            ("counter", STT_OBJECT, STB_GLOBAL, DATA_INDEX, 0x403010, 4),
            ("in_bss", STT_FUNC, STB_GLOBAL, DATA_INDEX, 0x403150, 4),
            ("nowhere", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x500000, 4),
        ],
    );
    b.build()
}

// ---- Header -------------------------------------------------------------

#[test]
fn header_refusals() {
    let good = sample();
    assert!(Elf::parse(&good).is_ok());
    assert_eq!(Elf::parse(&good[..63]).unwrap_err(), ElfError::Truncated);
    assert_eq!(Elf::parse(&[]).unwrap_err(), ElfError::Truncated);
    let with = |off: usize, bytes: &[u8]| {
        let mut f = good.clone();
        f[off..off + bytes.len()].copy_from_slice(bytes);
        Elf::parse(&f).map(|_| ())
    };
    assert_eq!(with(0, b"\x7fELG"), Err(ElfError::BadMagic));
    assert_eq!(with(4, &[1]), Err(ElfError::BadClass));
    assert_eq!(with(5, &[2]), Err(ElfError::BadEndian));
    assert_eq!(with(6, &[0]), Err(ElfError::BadVersion));
    assert_eq!(with(16, &1u16.to_le_bytes()), Err(ElfError::BadType));
    assert_eq!(with(18, &183u16.to_le_bytes()), Err(ElfError::BadMachine));
    // Section header table beyond the file, and its size overflowing.
    assert_eq!(
        with(40, &u64::MAX.to_le_bytes()),
        Err(ElfError::BadHeaderTable)
    );
    assert_eq!(
        with(40, &(u64::MAX - 8).to_le_bytes()),
        Err(ElfError::BadHeaderTable)
    );
    assert_eq!(
        with(32, &u64::MAX.to_le_bytes()),
        Err(ElfError::BadHeaderTable)
    );
    assert_eq!(
        with(58, &40u16.to_le_bytes()),
        Err(ElfError::BadHeaderTable)
    );
    assert_eq!(
        with(54, &32u16.to_le_bytes()),
        Err(ElfError::BadHeaderTable)
    );
    assert_eq!(
        with(60, &0xfff0u16.to_le_bytes()),
        Err(ElfError::BadHeaderTable)
    );
    // Section names' index out of range, or not a string table.
    assert_eq!(
        with(62, &200u16.to_le_bytes()),
        Err(ElfError::BadSectionIndex)
    );
    assert_eq!(
        with(62, &1u16.to_le_bytes()),
        Err(ElfError::BadSectionIndex)
    );
    // Every message reads as a sentence fragment.
    assert_eq!(
        ElfError::OffsetPastSymbolEnd.to_string(),
        "offset is past the end of the function"
    );
}

#[test]
fn sections_and_segments() {
    let f = sample();
    let elf = Elf::parse(&f).unwrap();
    assert!(!elf.is_dyn());
    let text = elf.section_by_name(b".text").unwrap().unwrap();
    assert_eq!(
        (text.addr, text.offset, text.size),
        (TEXT_ADDR, TEXT_OFF, 0x100)
    );
    assert_eq!(elf.section_by_name(b".nothing").unwrap(), None);
    let segs: Vec<_> = elf.segments().collect();
    assert_eq!(segs.len(), 2);
    assert_eq!(elf.vaddr_to_offset(0x401234 - 0x200), Ok(0x1034));
    assert_eq!(elf.vaddr_to_offset(0x403020), Ok(0x2020));
    // bss: in memory, not in the file.
    assert_eq!(
        elf.vaddr_to_offset(0x403150),
        Err(ElfError::UnmappedAddress)
    );
    assert_eq!(elf.vaddr_to_offset(0), Err(ElfError::UnmappedAddress));
}

// ---- Symbols ------------------------------------------------------------

#[test]
fn functions_by_name() {
    let f = sample();
    let elf = Elf::parse(&f).unwrap();
    let main = elf.resolve(b"main").unwrap();
    assert_eq!(main.offset, 0x1010);
    assert_eq!(main.function.size, 0x20);
    assert_eq!(main.function.offset, Some(0x1010));
    assert_eq!(elf.resolve(b"main+4").unwrap().offset, 0x1014);
    assert_eq!(elf.resolve(b"main+0x1f").unwrap().offset, 0x102f);
    assert_eq!(
        elf.resolve(b"main+0x20").unwrap_err(),
        ElfError::OffsetPastSymbolEnd
    );
    assert_eq!(elf.resolve(b"main+x").unwrap_err(), ElfError::BadOffset);
    assert_eq!(elf.resolve(b"main+").unwrap_err(), ElfError::BadOffset);
    assert_eq!(
        elf.resolve(b"main+99999999999999999999").unwrap_err(),
        ElfError::BadOffset
    );
    assert_eq!(
        elf.lookup_function(b"main", u64::MAX).unwrap_err(),
        ElfError::OffsetPastSymbolEnd
    );
    // An alias without a size: only its first byte.
    assert_eq!(elf.resolve(b"main_alias").unwrap().offset, 0x1010);
    assert_eq!(
        elf.resolve(b"main_alias+1").unwrap_err(),
        ElfError::OffsetPastSymbolEnd
    );
    assert_eq!(elf.resolve(b"helper").unwrap().offset, 0x1000);
    // A size that lies, running past the text into the data: an offset
    // that another segment maps is outside the function.
    let mut b = Builder::new();
    b.add_symbols(
        false,
        &[("spans", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x4010f0, 0x2000)],
    );
    let lying = b.build();
    let lying = Elf::parse(&lying).unwrap();
    assert_eq!(lying.resolve(b"spans+8").unwrap().offset, 0x10f8);
    assert_eq!(
        lying.resolve(b"spans+0x1f10").unwrap_err(),
        ElfError::UnmappedAddress
    );
    // A global beats a static of the same name; two globals are refused.
    assert_eq!(elf.resolve(b"dup").unwrap().offset, 0x1038);
    assert_eq!(
        elf.resolve(b"twice").unwrap_err(),
        ElfError::AmbiguousSymbol
    );
    // Versioned names answer to the plain one, and to themselves.
    assert_eq!(elf.resolve(b"puts").unwrap().offset, 0x1050);
    assert_eq!(elf.resolve(b"puts@@GLIBC_2.2.5").unwrap().offset, 0x1050);
    assert_eq!(
        elf.resolve(b"puts@GLIBC_2.2.5").unwrap_err(),
        ElfError::SymbolNotFound
    );
    assert_eq!(elf.resolve(b"put").unwrap_err(), ElfError::SymbolNotFound);
    // An IFUNC is its resolver.
    let memcpy = elf.resolve(b"memcpy").unwrap();
    assert!(memcpy.function.ifunc);
    assert_eq!(memcpy.offset, 0x1060);
    // Undefined, not a function, unmapped.
    assert_eq!(
        elf.resolve(b"external").unwrap_err(),
        ElfError::SymbolNotFound
    );
    assert_eq!(elf.resolve(b"counter").unwrap_err(), ElfError::NotAFunction);
    assert_eq!(
        elf.resolve(b"in_bss").unwrap_err(),
        ElfError::UnmappedAddress
    );
    assert_eq!(
        elf.resolve(b"nowhere").unwrap_err(),
        ElfError::UnmappedAddress
    );
    assert_eq!(elf.resolve(b"").unwrap_err(), ElfError::SymbolNotFound);
    // Variables.
    let counter = elf.lookup_variable(b"counter").unwrap();
    assert_eq!((counter.address, counter.size), (0x403010, 4));
    assert_eq!(elf.vaddr_to_offset(counter.address), Ok(0x2010));
    assert_eq!(
        elf.lookup_variable(b"main").unwrap_err(),
        ElfError::SymbolNotFound
    );
}

#[test]
fn functions_listed() {
    let f = sample();
    let elf = Elf::parse(&f).unwrap();
    let list: Vec<_> = elf.functions().unwrap().map(Result::unwrap).collect();
    let names: Vec<_> = list
        .iter()
        .map(|f| String::from_utf8_lossy(f.name))
        .collect();
    assert_eq!(
        names,
        [
            "helper",
            "main",
            "main_alias",
            "dup",
            "dup",
            "twice",
            "twice",
            "puts@@GLIBC_2.2.5",
            "memcpy",
            "in_bss",
            "nowhere"
        ]
    );
    assert_eq!(list[1].offset, Some(0x1010));
    assert!(!list[0].global && list[1].global && list[8].ifunc);
    assert_eq!(list[9].offset, None);
    // A file without symbol tables lists nothing.
    let bare = Builder::new().build();
    assert_eq!(Elf::parse(&bare).unwrap().functions().unwrap().count(), 0);
    assert_eq!(
        Elf::parse(&bare).unwrap().resolve(b"main").unwrap_err(),
        ElfError::NoSymbolTable
    );
}

/// A shared object with only `.dynsym`: two versions of one name, the
/// hidden one first.
#[test]
fn dynsym_and_versions() {
    let mut b = Builder::new();
    b.file_type = 3;
    let dynsym = b.add_symbols(
        true,
        &[
            ("memcpy", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401000, 0x10),
            ("memcpy", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401020, 0x10),
            ("malloc", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401040, 0x10),
        ],
    );
    let versions: Vec<u8> = [0u16, 0x8002, 3, 2]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    b.add(".gnu.version", SHT_GNU_VERSYM, 0, None, versions, dynsym, 2);
    let f = b.build();
    let elf = Elf::parse(&f).unwrap();
    assert!(elf.is_dyn());
    assert_eq!(elf.resolve(b"memcpy").unwrap().offset, 0x1020);
    assert_eq!(elf.resolve(b"malloc+8").unwrap().offset, 0x1048);
    assert_eq!(elf.functions().unwrap().count(), 3);

    // Without the versions the two are ambiguous.
    let mut b = Builder::new();
    b.add_symbols(
        true,
        &[
            ("memcpy", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401000, 0x10),
            ("memcpy", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401020, 0x10),
        ],
    );
    let f = b.build();
    assert_eq!(
        Elf::parse(&f).unwrap().resolve(b"memcpy").unwrap_err(),
        ElfError::AmbiguousSymbol
    );
}

/// `.symtab` first, `.dynsym` for what it lacks.
#[test]
fn symtab_then_dynsym() {
    let mut b = Builder::new();
    b.add_symbols(
        false,
        &[("main", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401010, 0x10)],
    );
    b.add_symbols(
        true,
        &[
            ("main", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401080, 0x10),
            ("exported", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401090, 0x10),
        ],
    );
    let f = b.build();
    let elf = Elf::parse(&f).unwrap();
    assert_eq!(elf.resolve(b"main").unwrap().offset, 0x1010);
    assert_eq!(elf.resolve(b"exported").unwrap().offset, 0x1090);
    // The listing is `.symtab`'s.
    assert_eq!(elf.functions().unwrap().count(), 1);
}

// ---- SDT notes ----------------------------------------------------------

/// One `.note.stapsdt` note as sys/sdt.h lays it out.
fn sdt_note(pc: u64, base: u64, semaphore: u64, provider: &str, name: &str, args: &str) -> Vec<u8> {
    let mut desc = Vec::new();
    for a in [pc, base, semaphore] {
        desc.extend_from_slice(&a.to_le_bytes());
    }
    for s in [provider, name, args] {
        desc.extend_from_slice(s.as_bytes());
        desc.push(0);
    }
    note(b"stapsdt\0", 3, &desc)
}

fn note(owner: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
    let mut n = Vec::new();
    n.extend_from_slice(&(owner.len() as u32).to_le_bytes());
    n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    n.extend_from_slice(&kind.to_le_bytes());
    n.extend_from_slice(owner);
    while n.len() % 4 != 0 {
        n.push(0);
    }
    n.extend_from_slice(desc);
    while n.len() % 4 != 0 {
        n.push(0);
    }
    n
}

fn with_notes(notes: Vec<u8>, base_addr: Option<u64>) -> Vec<u8> {
    let mut b = Builder::new();
    b.add(".note.stapsdt", SHT_NOTE, 0, None, notes, 0, 0);
    if let Some(addr) = base_addr {
        b.add(
            ".stapsdt.base",
            SHT_PROGBITS,
            addr,
            Some(0x10f0),
            vec![0],
            0,
            0,
        );
    }
    b.add_symbols(
        false,
        &[("sema_var", STT_OBJECT, STB_GLOBAL, DATA_INDEX, 0x403040, 8)],
    );
    b.build()
}

#[test]
fn sdt_markers() {
    let mut notes = sdt_note(
        0x401020,
        0x4010f0,
        0x403008,
        "app",
        "start",
        "-4@-20(%rbp) 8@%rdi",
    );
    notes.extend(note(b"GNU\0", 1, &[1, 2, 3, 4]));
    notes.extend(sdt_note(0x401030, 0x4010f0, 0, "app", "stop", ""));
    // A marker without arguments may end after its name.
    let mut desc = Vec::new();
    for a in [0x401040u64, 0x4010f0, 0] {
        desc.extend_from_slice(&a.to_le_bytes());
    }
    desc.extend_from_slice(b"app\0tick\0");
    notes.extend(note(b"stapsdt\0", 3, &desc));
    let f = with_notes(notes.clone(), Some(0x4010f0));
    let elf = Elf::parse(&f).unwrap();
    let list: Vec<_> = elf.sdt_notes().unwrap().map(Result::unwrap).collect();
    assert_eq!(list.len(), 3);
    let start = list[0];
    assert_eq!((start.provider, start.name), (&b"app"[..], &b"start"[..]));
    assert_eq!((start.pc, start.pc_offset), (0x401020, 0x1020));
    assert_eq!(
        (start.semaphore, start.semaphore_offset),
        (0x403008, Some(0x2008))
    );
    assert_eq!(start.args, b"-4@-20(%rbp) 8@%rdi");
    assert_eq!((list[1].semaphore_offset, list[1].args), (None, &b""[..]));
    assert_eq!((list[2].name, list[2].args), (&b"tick"[..], &b""[..]));

    // `.stapsdt.base` 0x10 above the note's: marker and semaphore move.
    let f = with_notes(notes.clone(), Some(0x401100));
    let elf = Elf::parse(&f).unwrap();
    let start = elf.sdt_notes().unwrap().next().unwrap().unwrap();
    assert_eq!((start.pc, start.pc_offset), (0x401030, 0x1030));
    assert_eq!(start.semaphore_offset, Some(0x2018));

    // No base section: the addresses as written. No notes: none.
    let f = with_notes(notes, None);
    let start = Elf::parse(&f)
        .unwrap()
        .sdt_notes()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(start.pc_offset, 0x1020);
    let bare = Builder::new().build();
    assert_eq!(Elf::parse(&bare).unwrap().sdt_notes().unwrap().count(), 0);
}

#[test]
fn sdt_malformed_notes() {
    let notes_of = |notes: Vec<u8>| {
        let f = with_notes(notes, Some(0x4010f0));
        let elf = Elf::parse(&f).unwrap();
        elf.sdt_notes()
            .unwrap()
            .map(|n| n.map(|_| ()))
            .collect::<Vec<_>>()
    };
    let good = sdt_note(0x401020, 0x4010f0, 0x403008, "app", "start", "8@%rdi");
    // Cut anywhere: an error, then the end.
    for cut in 1..good.len() - 1 {
        let list = notes_of(good[..cut].to_vec());
        assert!(list.len() <= 1, "cut {cut}");
        if cut < good.len() - 3 {
            assert_eq!(list.last(), Some(&Err(ElfError::BadNote)), "cut {cut}");
        }
    }
    // Lying sizes.
    let mut huge = good.clone();
    huge[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(notes_of(huge), [Err(ElfError::BadNote)]);
    let mut huge = good.clone();
    huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(notes_of(huge), [Err(ElfError::BadNote)]);
    // Strings without their NUL.
    let mut desc = 0x401020u64.to_le_bytes().to_vec();
    desc.extend_from_slice(&[0; 16]);
    desc.extend_from_slice(b"app");
    assert_eq!(
        notes_of(note(b"stapsdt\0", 3, &desc)),
        [Err(ElfError::BadNote)]
    );
    // A marker outside the file's segments.
    let unmapped = sdt_note(0x900000, 0x4010f0, 0, "app", "x", "");
    assert_eq!(notes_of(unmapped), [Err(ElfError::UnmappedAddress)]);
}

// ---- SDT argument specs -------------------------------------------------

fn fetch(spec: &str) -> Result<String, SdtArgError> {
    let arg = parse_sdt_arg(spec.as_bytes())?;
    let mut s = String::new();
    arg.write_fetch(&mut s, Some(0x2010)).unwrap();
    Ok(s)
}

#[test]
fn sdt_arg_specs() {
    assert_eq!(fetch("-4@-20(%rbp)").unwrap(), "-20(%bp):s32");
    assert_eq!(fetch("8@%rdi").unwrap(), "%di:u64");
    assert_eq!(fetch("-4@%esi").unwrap(), "%si:s32");
    assert_eq!(fetch("2@%ax").unwrap(), "%ax:u16");
    assert_eq!(fetch("1@%dil").unwrap(), "%di:u8");
    assert_eq!(fetch("-1@%r9b").unwrap(), "%r9:s8");
    assert_eq!(fetch("4@%r15d").unwrap(), "%r15:u32");
    assert_eq!(fetch("8@%r10").unwrap(), "%r10:u64");
    assert_eq!(fetch("4@$5").unwrap(), "\\5:u32");
    assert_eq!(fetch("-4@$-5").unwrap(), "\\-5:s32");
    assert_eq!(fetch("8@$0x10").unwrap(), "\\16:u64");
    assert_eq!(fetch("8@16(%rax)").unwrap(), "+16(%ax):u64");
    assert_eq!(fetch("8@(%rsp)").unwrap(), "+0(%sp):u64");
    assert_eq!(fetch("-8@foo(%rip)").unwrap(), "@+8208:s64");
    assert_eq!(fetch("4@foo+8(%rip)").unwrap(), "@+8216:u32");
    assert_eq!(fetch("4@foo-4(%rip)").unwrap(), "@+8204:u32");
    let arg = parse_sdt_arg(b"-8@foo.bar(%rip)").unwrap();
    assert_eq!(
        arg.place,
        SdtPlace::Symbol {
            name: b"foo.bar",
            offset: 0
        }
    );
    assert_eq!((arg.size, arg.signed), (8, true));
    let mut s = String::new();
    assert!(arg.write_fetch(&mut s, None).is_err());
    let arg = parse_sdt_arg(b"-4@-20(%rbp)").unwrap();
    assert_eq!(
        arg.place,
        SdtPlace::Memory {
            base: SdtReg::Bp,
            offset: -20
        }
    );

    // Refused forms.
    assert_eq!(fetch("%rdi"), Err(SdtArgError::MissingSize));
    assert_eq!(fetch("3@%rdi"), Err(SdtArgError::BadSize));
    assert_eq!(fetch("16@%xmm0"), Err(SdtArgError::BadSize));
    assert_eq!(fetch("8f@%rdi"), Err(SdtArgError::BadSize));
    assert_eq!(fetch("@%rdi"), Err(SdtArgError::BadSize));
    assert_eq!(fetch("8@%xmm0"), Err(SdtArgError::UnknownRegister));
    assert_eq!(fetch("8@%r16"), Err(SdtArgError::UnknownRegister));
    assert_eq!(fetch("8@%r7"), Err(SdtArgError::UnknownRegister));
    assert_eq!(fetch("8@%r1\u{ff}"), Err(SdtArgError::UnknownRegister));
    assert_eq!(fetch("8@%r1/"), Err(SdtArgError::UnknownRegister));
    assert_eq!(fetch("8@%r:"), Err(SdtArgError::UnknownRegister));
    assert_eq!(fetch("8@%"), Err(SdtArgError::UnknownRegister));
    assert_eq!(fetch("1@%ah"), Err(SdtArgError::HighByteRegister));
    assert_eq!(fetch("8@16(%rax,%rbx,8)"), Err(SdtArgError::IndexedAddress));
    assert_eq!(fetch("8@(,%rbx,8)"), Err(SdtArgError::IndexedAddress));
    assert_eq!(fetch("8@16(%rip)"), Err(SdtArgError::NumericRipRelative));
    assert_eq!(fetch("8@foo(%rax)"), Err(SdtArgError::BadOperand));
    assert_eq!(fetch("8@16(%rax"), Err(SdtArgError::BadOperand));
    assert_eq!(fetch("8@$"), Err(SdtArgError::BadOperand));
    assert_eq!(fetch("8@$0x"), Err(SdtArgError::BadOperand));
    assert_eq!(
        fetch("8@$99999999999999999999"),
        Err(SdtArgError::BadNumber)
    );
    assert_eq!(fetch("8@foo*2(%rip)"), Err(SdtArgError::BadOperand));
    assert_eq!(fetch("8@"), Err(SdtArgError::BadOperand));
    assert_eq!(
        SdtArgError::IndexedAddress.to_string(),
        "SDT argument uses indexed addressing, which a fetch cannot express"
    );

    // Several, separated by spaces.
    let specs: Vec<_> = SdtArgs::new(b"  -4@-20(%rbp) 8@%rdi\t4@$5 ")
        .map(|(spec, arg)| (String::from_utf8_lossy(spec).into_owned(), arg.is_ok()))
        .collect();
    assert_eq!(
        specs,
        [
            ("-4@-20(%rbp)".into(), true),
            ("8@%rdi".into(), true),
            ("4@$5".into(), true)
        ]
    );
    assert_eq!(SdtArgs::new(b"").count(), 0);
}

// ---- Read in pieces -----------------------------------------------------

/// What `question` answers of `file` read in pieces, as the kernel reads
/// it: no piece at first, then each range the reader names as not read,
/// read and added, until it answers otherwise. Also the bytes read and
/// the number of reads. Every range asked for lies in the file and is
/// asked for once.
fn in_pieces<T>(
    file: &[u8],
    question: impl Fn(&Elf<'_>) -> Result<T, ElfError>,
) -> (Result<T, ElfError>, u64, usize) {
    let mut read: Vec<(u64, Vec<u8>)> = Vec::new();
    loop {
        let pieces: Vec<Piece<'_>> = read
            .iter()
            .map(|(offset, bytes)| Piece {
                offset: *offset,
                bytes,
            })
            .collect();
        match Elf::from_pieces(file.len() as u64, &pieces).and_then(|elf| question(&elf)) {
            Err(ElfError::NotRead { offset, len }) => {
                let start = usize::try_from(offset).unwrap();
                let end = start + usize::try_from(len).unwrap();
                assert!(end <= file.len(), "asked for {offset:#x}+{len:#x}");
                assert!(
                    !read
                        .iter()
                        .any(|(o, b)| *o == offset && b.len() as u64 == len),
                    "asked twice for {offset:#x}+{len:#x}"
                );
                assert!(read.len() < 16, "too many pieces");
                read.push((offset, file[start..end].to_vec()));
            }
            done => {
                let bytes = read.iter().map(|(_, b)| b.len() as u64).sum();
                return (done, bytes, read.len());
            }
        }
    }
}

/// `SYMBOL[+OFFS]` resolved from the whole file and in pieces, which
/// must agree; the pieces' answer.
fn resolve_both(file: &[u8], spec: &[u8]) -> Result<u64, ElfError> {
    let whole = Elf::parse(file).and_then(|elf| elf.resolve(spec).map(|p| p.offset));
    let (pieces, _, _) = in_pieces(file, |elf| elf.resolve(spec).map(|p| p.offset));
    assert_eq!(whole, pieces, "{}", String::from_utf8_lossy(spec));
    pieces
}

#[test]
fn pieces_answer_as_the_whole_file() {
    let f = sample();
    for spec in [
        &b"main"[..],
        b"main+4",
        b"main+0x20",
        b"main_alias+1",
        b"dup",
        b"twice",
        b"puts",
        b"memcpy",
        b"external",
        b"counter",
        b"in_bss",
        b"nowhere",
        b"",
        b"main+x",
    ] {
        resolve_both(&f, spec).ok();
    }
    assert_eq!(resolve_both(&f, b"main+4"), Ok(0x1014));
    assert_eq!(resolve_both(&f, b"counter"), Err(ElfError::NotAFunction));
    // The header, both header tables, the section names, the symbol
    // table and its strings: no code, no data.
    let (_, bytes, reads) = in_pieces(&f, |elf| elf.resolve(b"main").map(|p| p.offset));
    assert!(reads <= 7, "{reads} reads");
    assert!(bytes < f.len() as u64 / 2, "{bytes} of {} bytes", f.len());
    // Versions come from `.gnu.version`, which is read too.
    let mut b = Builder::new();
    b.add_symbols(
        true,
        &[
            ("memcpy", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401000, 0x10),
            ("memcpy", STT_FUNC, STB_GLOBAL, TEXT_INDEX, 0x401010, 0x10),
        ],
    );
    let f = b.build();
    resolve_both(&f, b"memcpy").ok();
}

#[test]
fn pieces_of_malformed_files() {
    let notes = sdt_note(0x401020, 0x4010f0, 0x403008, "app", "start", "8@%rdi");
    let f = with_notes(notes, Some(0x4010f0));
    for len in 0..f.len() {
        for spec in [&b"main"[..], b"main+4", b"counter"] {
            resolve_both(&f[..len], spec).ok();
        }
    }
    // A file with no symbol table.
    let f = Builder::new().build();
    assert_eq!(resolve_both(&f, b"main"), Err(ElfError::NoSymbolTable));
}

#[test]
fn pieces_of_host_libc() {
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    let Ok(bytes) = std::fs::read(libc) else {
        return;
    };
    let whole = Elf::parse(&bytes).unwrap().resolve(b"malloc").unwrap();
    let (place, read, reads) = in_pieces(&bytes, |elf| elf.resolve(b"malloc").map(|p| p.offset));
    assert_eq!(place, Ok(whole.offset));
    // The symbol tables and their strings, a small part of the file.
    assert!(
        read < bytes.len() as u64 / 4,
        "{read} of {} bytes",
        bytes.len()
    );
    assert!(reads <= 9, "{reads} reads");
    for spec in [&b"free"[..], b"malloc+4", b"no_such_function", b"environ"] {
        resolve_both(&bytes, spec).ok();
    }
}

// ---- Malformed files ----------------------------------------------------

/// Every question a caller may ask, results thrown away: none may panic.
fn ask_everything(bytes: &[u8]) {
    let Ok(elf) = Elf::parse(bytes) else {
        return;
    };
    for name in [&b"main"[..], b"main+4", b"memcpy", b"dup", b"x+0x10"] {
        let _ = elf.resolve(name);
        let _ = elf.lookup_variable(name);
    }
    if let Ok(functions) = elf.functions() {
        for f in functions {
            let _ = f;
        }
    }
    if let Ok(notes) = elf.sdt_notes() {
        for n in notes.flatten() {
            for (_, arg) in SdtArgs::new(n.args) {
                let _ = arg;
            }
        }
    }
    for s in elf.sections() {
        let _ = elf.section_data(&s);
        let _ = elf.section_name(&s);
    }
}

#[test]
fn truncated_files() {
    let notes = sdt_note(
        0x401020,
        0x4010f0,
        0x403008,
        "app",
        "start",
        "-4@-20(%rbp) 8@%rdi",
    );
    let f = with_notes(notes, Some(0x4010f0));
    // The section header table is at the end: any cut loses it.
    for len in 0..f.len() {
        let cut = &f[..len];
        if len >= 64 {
            assert!(Elf::parse(cut).is_err(), "cut at {len}");
        }
        ask_everything(cut);
    }
}

/// The byte offset of section `name`'s header in `f`.
fn section_header(f: &[u8], name: &[u8]) -> usize {
    let elf = Elf::parse(f).unwrap();
    let s = elf.section_by_name(name).unwrap().unwrap();
    let shoff = u64::from_le_bytes(f[40..48].try_into().unwrap()) as usize;
    shoff + s.index as usize * 64
}

#[test]
fn lying_sections() {
    let good = sample();
    let patched = |name: &[u8], field: usize, value: u64| {
        let mut f = good.clone();
        let at = section_header(&f, name) + field;
        let width = if field == 40 || field == 4 || field == 0 {
            4
        } else {
            8
        };
        f[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        f
    };
    // A symbol table longer than the file, or at an offset that overflows.
    // (Sizes are whole symbols, so the size check is not what refuses.)
    let whole = u64::MAX - u64::MAX % 24;
    for (field, value) in [
        (32, 0x1_0000_0008u64),
        (32, whole),
        (24, u64::MAX),
        (24, u64::MAX - 4),
    ] {
        let f = patched(b".symtab", field, value);
        let elf = Elf::parse(&f).unwrap();
        assert_eq!(
            elf.resolve(b"main").unwrap_err(),
            ElfError::SectionOutOfFile
        );
        assert_eq!(elf.functions().unwrap_err(), ElfError::SectionOutOfFile);
        ask_everything(&f);
    }
    // Not whole symbols.
    let f = patched(b".symtab", 32, 25);
    assert_eq!(
        Elf::parse(&f).unwrap().resolve(b"main").unwrap_err(),
        ElfError::BadSymbolTable
    );
    let f = patched(b".symtab", 56, 16);
    assert_eq!(
        Elf::parse(&f).unwrap().resolve(b"main").unwrap_err(),
        ElfError::BadSymbolTable
    );
    // Linked to no section, or to one that is not a string table.
    let f = patched(b".symtab", 40, 999);
    assert_eq!(
        Elf::parse(&f).unwrap().resolve(b"main").unwrap_err(),
        ElfError::BadSectionIndex
    );
    let f = patched(b".symtab", 40, 1);
    assert_eq!(
        Elf::parse(&f).unwrap().resolve(b"main").unwrap_err(),
        ElfError::BadSectionIndex
    );
    // A huge string table, and a string table cut short of its strings.
    let f = patched(b".strtab", 32, u64::MAX / 2);
    assert_eq!(
        Elf::parse(&f).unwrap().resolve(b"main").unwrap_err(),
        ElfError::SectionOutOfFile
    );
    let f = patched(b".strtab", 32, 3);
    let elf = Elf::parse(&f).unwrap();
    assert_eq!(
        elf.resolve(b"main").unwrap_err(),
        ElfError::StringOutOfTable
    );
    let listed: Vec<_> = elf.functions().unwrap().collect();
    assert_eq!(listed.last(), Some(&Err(ElfError::StringOutOfTable)));
    // A section name outside the names' table.
    let f = patched(b".symtab", 0, 0xffff_0000);
    let elf = Elf::parse(&f).unwrap();
    assert_eq!(
        elf.section_by_name(b".note.stapsdt").unwrap_err(),
        ElfError::StringOutOfTable
    );
    assert_eq!(elf.sdt_notes().unwrap_err(), ElfError::StringOutOfTable);
    // The section names' table itself out of the file.
    let f = patched(b".shstrtab", 24, u64::MAX);
    assert_eq!(Elf::parse(&f).unwrap_err(), ElfError::SectionOutOfFile);
}

/// Random single-byte and word changes all over a file: never a panic.
#[test]
fn scrambled_files() {
    let mut notes = sdt_note(
        0x401020,
        0x4010f0,
        0x403008,
        "app",
        "start",
        "-4@-20(%rbp) 8@%rdi",
    );
    notes.extend(sdt_note(
        0x401030,
        0x4010f0,
        0,
        "app",
        "stop",
        "8@foo(%rip)",
    ));
    let good = with_notes(notes, Some(0x4010f0));
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..5_000 {
        let mut f = good.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % f.len() as u64) as usize;
            let value = next();
            let width = [1, 2, 4, 8][(next() % 4) as usize].min(f.len() - at);
            f[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        }
        ask_everything(&f);
    }
}

// ---- Programs from the host --------------------------------------------

fn tool(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `readelf -lW`'s loadable segments: (offset, vaddr, filesz).
fn readelf_loads(path: &str) -> Vec<(u64, u64, u64)> {
    let out = tool("readelf", &["-lW", path]).unwrap();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    out.lines()
        .filter(|l| l.trim_start().starts_with("LOAD "))
        .map(|l| {
            let w: Vec<_> = l.split_whitespace().collect();
            (hex(w[1]), hex(w[2]), hex(w[4]))
        })
        .collect()
}

/// `readelf -sW`'s defined functions of `table` (`.symtab`, `.dynsym`):
/// (name without version, value, size).
fn readelf_functions(path: &str, table: &str) -> Vec<(String, u64, u64)> {
    let out = tool("readelf", &["-sW", path]).unwrap();
    let mut inside = false;
    let mut list = Vec::new();
    for l in out.lines() {
        if l.starts_with("Symbol table ") {
            inside = l.contains(&format!("'{table}'"));
            continue;
        }
        let w: Vec<_> = l.split_whitespace().collect();
        if !inside || w.len() < 8 || !w[0].ends_with(':') {
            continue;
        }
        if !(w[3] == "FUNC" || w[3] == "IFUNC") || w[6] == "UND" {
            continue;
        }
        let size = match w[2].strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
            None => w[2].parse().unwrap(),
        };
        let name = w[7].split('@').next().unwrap().to_string();
        list.push((name, u64::from_str_radix(w[1], 16).unwrap(), size));
    }
    list
}

/// The functions of a host binary as the reader lists them, and where
/// their names lead, against readelf's tables and segments.
fn compare_with_readelf(path: &str) {
    if tool("readelf", &["--version"]).is_none() {
        eprintln!("no readelf: skipped");
        return;
    }
    let Ok(bytes) = std::fs::read(path) else {
        eprintln!("no {path}: skipped");
        return;
    };
    let elf = Elf::parse(&bytes).unwrap();
    let has_symtab = elf.sections().any(|s| s.kind == SHT_SYMTAB);
    let table = if has_symtab { ".symtab" } else { ".dynsym" };
    let expected = readelf_functions(path, table);
    // (A stripped executable may define no function at all.)
    let loads = readelf_loads(path);
    let offset_of = |vaddr: u64| {
        loads
            .iter()
            .find(|&&(_, v, filesz)| vaddr >= v && vaddr - v < filesz)
            .map(|&(off, v, _)| vaddr - v + off)
    };
    let listed: Vec<_> = elf.functions().unwrap().map(Result::unwrap).collect();
    assert_eq!(listed.len(), expected.len(), "{path}");
    for (f, (name, value, size)) in listed.iter().zip(&expected) {
        let ours = String::from_utf8_lossy(f.name);
        assert_eq!(ours.split('@').next().unwrap(), name, "{path}");
        assert_eq!((f.address, f.size), (*value, *size), "{path}: {name}");
        assert_eq!(f.offset, offset_of(*value), "{path}: {name}");
    }
    // Each name that is one function leads to it (a hundred of them:
    // each lookup is a pass over the table).
    let mut looked_up = 0;
    let step = (expected.len() / 100).max(1);
    for (name, value, size) in expected.iter().step_by(step) {
        let same_name: Vec<_> = expected.iter().filter(|e| &e.0 == name).collect();
        if same_name.iter().any(|e| e.1 != *value) {
            continue;
        }
        let place = elf.resolve(name.as_bytes()).unwrap();
        assert_eq!(Some(place.offset), offset_of(*value), "{path}: {name}");
        if *size > 1 {
            let plus = elf.resolve(format!("{name}+1").as_bytes()).unwrap();
            assert_eq!(plus.offset, place.offset + 1);
            let past = elf.lookup_function(name.as_bytes(), *size);
            assert_eq!(past.unwrap_err(), ElfError::OffsetPastSymbolEnd);
        }
        looked_up += 1;
    }
    assert_eq!(looked_up > 0, !expected.is_empty());
}

#[test]
fn host_bin_true() {
    compare_with_readelf("/bin/true");
}

#[test]
fn host_libc() {
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    compare_with_readelf(libc);
    let Ok(bytes) = std::fs::read(libc) else {
        return;
    };
    let elf = Elf::parse(&bytes).unwrap();
    assert!(elf.is_dyn());
    // malloc has one version; memcpy has two, the default one wins.
    let malloc = elf.resolve(b"malloc").unwrap();
    assert!(malloc.function.size > 0);
    assert!(elf.resolve(b"memcpy").is_ok());
    // nm -D agrees on malloc's address.
    if let Some(nm) = tool("nm", &["-D", "--defined-only", libc]) {
        let line = nm
            .lines()
            .find(|l| l.ends_with(" malloc@@GLIBC_2.2.5") || l.ends_with(" malloc"))
            .unwrap();
        let addr = u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap();
        assert_eq!(malloc.function.address, addr);
    }
}

/// A program compiled here: a static and a global function, a global
/// variable, and an SDT marker with a semaphore written the way
/// sys/sdt.h writes it (which the host may not have).
const PROGRAM: &str = r#"
unsigned short app_tick_semaphore __attribute__((section(".probes"), used));
int counter;

static int __attribute__((noinline)) helper(int x) { return x * 3 + counter; }

int __attribute__((noinline)) work(int a, long b)
{
	int local = a + 1;
	__asm__ __volatile__ (
		"990: nop\n"
		".pushsection .note.stapsdt,\"?\",\"note\"\n"
		".balign 4\n"
		".4byte 992f-991f, 994f-993f, 3\n"
		"991: .asciz \"stapsdt\"\n"
		"992: .balign 4\n"
		"993: .8byte 990b\n"
		".8byte _.stapsdt.base\n"
		".8byte app_tick_semaphore\n"
		".asciz \"app\"\n"
		".asciz \"tick\"\n"
		".asciz \"%n[s1]@%[a1] %n[s2]@%[a2] -4@%[a3]\"\n"
		"994: .balign 4\n"
		".popsection\n"
		".ifndef _.stapsdt.base\n"
		".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
		".weak _.stapsdt.base\n"
		".hidden _.stapsdt.base\n"
		"_.stapsdt.base: .space 1\n"
		".size _.stapsdt.base, 1\n"
		".popsection\n"
		".endif\n"
		:: [s1] "n" (4), [a1] "nor" (local), [s2] "n" (-8), [a2] "nor" (b),
		   [a3] "nor" (counter));
	return helper(local);
}

int main(int argc, char **argv) { (void)argv; return work(argc, 2) == 7; }
"#;

#[test]
fn compiled_program() {
    if tool("cc", &["--version"]).is_none() || tool("readelf", &["--version"]).is_none() {
        eprintln!("no cc or readelf: skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("dynprobe-elf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("app.c");
    std::fs::write(&src, PROGRAM).unwrap();
    for (flags, name) in [
        (&["-O1", "-pie", "-fPIE"][..], "app-pie"),
        (&["-O0", "-no-pie"][..], "app"),
    ] {
        let bin = dir.join(name);
        let status = Command::new("cc")
            .args(flags)
            .arg("-o")
            .arg(&bin)
            .arg(&src)
            .status()
            .unwrap();
        assert!(status.success());
        let path = bin.to_str().unwrap();
        compare_with_readelf(path);
        let bytes = std::fs::read(&bin).unwrap();
        let elf = Elf::parse(&bytes).unwrap();
        assert!(elf.resolve(b"helper").is_ok());
        assert!(elf.resolve(b"work+1").is_ok());
        let counter = elf.lookup_variable(b"counter").unwrap();
        assert_eq!(counter.size, 4);
        let sema = elf.lookup_variable(b"app_tick_semaphore").unwrap();
        let notes: Vec<_> = elf.sdt_notes().unwrap().map(Result::unwrap).collect();
        assert_eq!(notes.len(), 1, "{path}");
        let tick = notes[0];
        assert_eq!((tick.provider, tick.name), (&b"app"[..], &b"tick"[..]));
        assert_eq!(tick.semaphore, sema.address);
        assert_eq!(
            tick.semaphore_offset,
            Some(elf.vaddr_to_offset(sema.address).unwrap())
        );
        // The marker is a nop inside `work`.
        let work = elf.resolve(b"work").unwrap().function;
        assert!(tick.pc >= work.address && tick.pc < work.address + work.size);
        assert_eq!(bytes[tick.pc_offset as usize], 0x90);
        // Its arguments read as sizes and places the compiler chose.
        let args: Vec<_> = SdtArgs::new(tick.args).map(|(_, a)| a.unwrap()).collect();
        assert_eq!(args.len(), 3, "{}", String::from_utf8_lossy(tick.args));
        assert_eq!((args[0].size, args[0].signed), (4, true));
        assert_eq!((args[1].size, args[1].signed), (8, false));
        // `counter` is read %rip-relative or through a register.
        for a in &args {
            let mut s = String::new();
            let at = match a.place {
                SdtPlace::Symbol { name, .. } => {
                    let v = elf.lookup_variable(name).unwrap();
                    Some(v.address - tick.pc + tick.pc_offset)
                }
                _ => None,
            };
            a.write_fetch(&mut s, at).unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The SDT markers of host binaries that have some (libstdc++ and what
/// links it statically), against `readelf -n`.
#[test]
fn host_sdt_notes() {
    if tool("readelf", &["--version"]).is_none() {
        eprintln!("no readelf: skipped");
        return;
    }
    let mut compared = 0;
    for path in [
        "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/bin/gcc",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ] {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let elf = Elf::parse(&bytes).unwrap();
        let ours: Vec<_> = elf.sdt_notes().unwrap().map(Result::unwrap).collect();
        let out = tool("readelf", &["-nW", path]).unwrap();
        // (provider, name, location, base, semaphore, arguments)
        let mut theirs: Vec<[String; 6]> = Vec::new();
        for l in out.lines().map(str::trim) {
            // (-W puts the provider on the note's own line.)
            let field = |key: &str| l.find(key).map(|i| l[i + key.len()..].trim().to_string());
            if let Some(p) = field("Provider:") {
                theirs.push(Default::default());
                theirs.last_mut().unwrap()[0] = p;
            } else if let (Some(n), Some(t)) = (field("Name:"), theirs.last_mut()) {
                t[1] = n;
            } else if let (Some(loc), Some(t)) = (field("Location:"), theirs.last_mut()) {
                let parts: Vec<_> = loc
                    .split(',')
                    .map(|p| p.split(':').nth(1).unwrap_or(p).trim().to_string())
                    .collect();
                t[2] = parts[0].clone();
                t[3] = parts[1].clone();
                t[4] = parts[2].clone();
            } else if let (Some(a), Some(t)) = (field("Arguments:"), theirs.last_mut()) {
                t[5] = a;
            }
        }
        assert_eq!(ours.len(), theirs.len(), "{path}");
        let base = elf
            .section_by_name(b".stapsdt.base")
            .unwrap()
            .map(|s| s.addr);
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
        for (n, t) in ours.iter().zip(&theirs) {
            assert_eq!(String::from_utf8_lossy(n.provider), t[0]);
            assert_eq!(String::from_utf8_lossy(n.name), t[1]);
            // Not prelinked: the note's base is the section's address.
            assert_eq!(Some(hex(&t[3])), base, "{path}");
            assert_eq!(n.pc, hex(&t[2]));
            assert_eq!(n.semaphore, hex(&t[4]));
            assert_eq!(n.pc_offset, elf.vaddr_to_offset(n.pc).unwrap());
            assert_eq!(String::from_utf8_lossy(n.args), t[5]);
            for (spec, arg) in SdtArgs::new(n.args) {
                assert!(arg.is_ok(), "{path}: {}", String::from_utf8_lossy(spec));
            }
            compared += 1;
        }
    }
    eprintln!("{compared} markers compared");
}
