// SPDX-License-Identifier: GPL-2.0
//! Symbols of an ELF file: functions and variables by name (`.symtab`,
//! else `.dynsym`) to the file offset a uprobe takes, and the functions
//! listed one by one.

use super::error::ElfError;
use super::file::{sht, string_at, u16_at, u32_at, u64_at, Elf, Section};

/// `sizeof(Elf64_Sym)`.
const SYM_LEN: usize = 24;
/// `SHN_UNDEF`: a symbol the file uses but does not define.
const SHN_UNDEF: u16 = 0;
/// `STT_OBJECT`.
const STT_OBJECT: u8 = 1;
/// `STT_FUNC`.
const STT_FUNC: u8 = 2;
/// `STT_GNU_IFUNC`: an indirect function; the symbol is its resolver.
const STT_GNU_IFUNC: u8 = 10;
/// `STB_LOCAL`.
const STB_LOCAL: u8 = 0;
/// `VERSYM_HIDDEN`: the symbol is not the default version of its name
/// (`memcpy@GLIBC_2.2.5` beside `memcpy@@GLIBC_2.14`).
const VERSYM_HIDDEN: u16 = 0x8000;

/// A defined function of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Function<'a> {
    /// Its name as the table has it (`.symtab` may carry `@VERSION`).
    pub name: &'a [u8],
    /// `st_value`: its virtual address in the file's image.
    pub address: u64,
    /// `st_size` (0 when the assembler gave none).
    pub size: u64,
    /// The file offset of its first byte, when a loadable segment maps
    /// it.
    pub offset: Option<u64>,
    /// An indirect function (`STT_GNU_IFUNC`): the code at its address is
    /// the resolver that picks the implementation at load time.
    pub ifunc: bool,
    /// Global or weak, not local to one object file.
    pub global: bool,
}

/// Where a uprobe on `SYMBOL[+OFFS]` goes, from [`Elf::lookup_function`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionPlace<'a> {
    /// The function found (its `offset` is set).
    pub function: Function<'a>,
    /// The file offset of the probed byte: the function's plus `OFFS`.
    pub offset: u64,
}

/// A defined variable (`STT_OBJECT`) of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable<'a> {
    /// Its name as the table has it.
    pub name: &'a [u8],
    /// `st_value`: its virtual address in the file's image.
    pub address: u64,
    /// `st_size`.
    pub size: u64,
}

/// One symbol table with its strings and, for `.dynsym`, its version
/// indices (`.gnu.version`).
#[derive(Clone, Copy, Debug)]
struct SymbolTable<'a> {
    entries: &'a [u8],
    strings: &'a [u8],
    versions: &'a [u8],
}

/// One entry of a symbol table.
#[derive(Clone, Copy, Debug)]
struct Sym<'a> {
    name: &'a [u8],
    kind: u8,
    global: bool,
    defined: bool,
    value: u64,
    size: u64,
    hidden_version: bool,
}

impl<'a> SymbolTable<'a> {
    fn of(elf: &Elf<'a>, section: &Section) -> Result<Self, ElfError> {
        if section.entsize != SYM_LEN as u64 || section.size % SYM_LEN as u64 != 0 {
            return Err(ElfError::BadSymbolTable);
        }
        let entries = elf.section_data(section)?;
        let strings = elf.string_table(section.link)?;
        // `.gnu.version` holds one u16 per `.dynsym` entry; one that does
        // not (or lies outside the file) is ignored: it only breaks ties.
        // A piece not read yet is asked for, so that a file read in
        // pieces answers as the whole file does.
        let mut versions: &[u8] = &[];
        if section.kind == sht::DYNSYM {
            let count = entries.len() / SYM_LEN;
            let versym = elf
                .sections()
                .find(|s| s.kind == sht::GNU_VERSYM && s.link == section.index);
            if let Some(versym) = versym {
                match elf.section_data(&versym) {
                    Ok(data) if Some(data.len()) == count.checked_mul(2) => versions = data,
                    Err(e @ ElfError::NotRead { .. }) => return Err(e),
                    _ => {}
                }
            }
        }
        Ok(SymbolTable {
            entries,
            strings,
            versions,
        })
    }

    fn len(&self) -> usize {
        self.entries.len() / SYM_LEN
    }

    fn get(&self, i: usize) -> Result<Sym<'a>, ElfError> {
        let start = i.checked_mul(SYM_LEN).ok_or(ElfError::BadSymbolTable)?;
        let e = start
            .checked_add(SYM_LEN)
            .and_then(|end| self.entries.get(start..end))
            .ok_or(ElfError::BadSymbolTable)?;
        let bad = ElfError::BadSymbolTable;
        let info = *e.get(4).ok_or(bad)?;
        let shndx = u16_at(e, 6).ok_or(bad)?;
        let version = i
            .checked_mul(2)
            .and_then(|off| u16_at(self.versions, off))
            .unwrap_or(0);
        Ok(Sym {
            name: string_at(self.strings, u32_at(e, 0).ok_or(bad)?)?,
            kind: info & 0xf,
            global: info >> 4 != STB_LOCAL,
            defined: shndx != SHN_UNDEF,
            value: u64_at(e, 8).ok_or(bad)?,
            size: u64_at(e, 16).ok_or(bad)?,
            hidden_version: version & VERSYM_HIDDEN != 0,
        })
    }
}

/// Whether the symbol name `sym` answers to `query`: the same name, or
/// for a query without a version, the name before `@` in a `.symtab`
/// name that carries one (`malloc@@GLIBC_2.2.5`).
fn name_matches(sym: &[u8], query: &[u8]) -> bool {
    if sym == query {
        return true;
    }
    if query.contains(&b'@') {
        return false;
    }
    sym.len() > query.len() && sym.starts_with(query) && sym[query.len()] == b'@'
}

fn is_function(kind: u8) -> bool {
    kind == STT_FUNC || kind == STT_GNU_IFUNC
}

/// The symbol of `table` called `name` whose type `wanted` accepts: one
/// pass, keeping the best candidate (default version over hidden, global
/// over local); several at one address are aliases, several best ones at
/// different addresses are refused.
fn find<'a>(
    table: &SymbolTable<'a>,
    name: &[u8],
    wanted: fn(u8) -> bool,
) -> Result<Sym<'a>, ElfError> {
    let mut best: Option<(u8, Sym<'a>)> = None;
    let mut ambiguous = false;
    for i in 0..table.len() {
        let sym = table.get(i)?;
        if !sym.defined || !wanted(sym.kind) || !name_matches(sym.name, name) {
            continue;
        }
        let rank = u8::from(!sym.hidden_version) * 2 + u8::from(sym.global);
        match best {
            Some((best_rank, _)) if rank < best_rank => {}
            Some((best_rank, ref mut kept)) if rank == best_rank => {
                if kept.value != sym.value {
                    ambiguous = true;
                } else if kept.size == 0 {
                    kept.size = sym.size;
                }
            }
            _ => {
                best = Some((rank, sym));
                ambiguous = false;
            }
        }
    }
    match best {
        _ if ambiguous => Err(ElfError::AmbiguousSymbol),
        Some((_, sym)) => Ok(sym),
        None => Err(ElfError::SymbolNotFound),
    }
}

/// Parses `OFFS` after `+`: decimal, or hexadecimal after `0x`.
fn parse_offset(text: &[u8]) -> Result<u64, ElfError> {
    let (digits, radix) = match text {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
        _ => (text, 10),
    };
    if digits.is_empty() {
        return Err(ElfError::BadOffset);
    }
    let mut value: u64 = 0;
    for &c in digits {
        let d = char::from(c).to_digit(radix).ok_or(ElfError::BadOffset)?;
        value = value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or(ElfError::BadOffset)?;
    }
    Ok(value)
}

impl<'a> Elf<'a> {
    /// The symbol tables to search, in order: `.symtab` (`SHT_SYMTAB`),
    /// then `.dynsym` (`SHT_DYNSYM`), each when present.
    fn symbol_tables(&self) -> Result<[Option<SymbolTable<'a>>; 2], ElfError> {
        let mut tables = [None, None];
        for (slot, kind) in tables.iter_mut().zip([sht::SYMTAB, sht::DYNSYM]) {
            if let Some(section) = self.section_by_type(kind) {
                *slot = Some(SymbolTable::of(self, &section)?);
            }
        }
        Ok(tables)
    }

    /// The symbol called `name` of a type `wanted` accepts, from
    /// `.symtab`, else from `.dynsym`: [`ElfError::NoSymbolTable`] when
    /// the file has neither.
    fn find_symbol(&self, name: &[u8], wanted: fn(u8) -> bool) -> Result<Sym<'a>, ElfError> {
        let tables = self.symbol_tables()?;
        if tables.iter().all(Option::is_none) {
            return Err(ElfError::NoSymbolTable);
        }
        for table in tables.iter().flatten() {
            match find(table, name, wanted) {
                Err(ElfError::SymbolNotFound) => continue,
                found => return found,
            }
        }
        Err(ElfError::SymbolNotFound)
    }

    /// Where a uprobe on function `name` plus `offs` bytes goes.
    ///
    /// `name` is looked up among the defined functions (`STT_FUNC`, and
    /// `STT_GNU_IFUNC` as perf and bpftrace take them: the probe is on the
    /// resolver the symbol points at) of `.symtab`, else of `.dynsym`. A
    /// name without `@` also finds `name@VERSION` and `name@@VERSION`
    /// in `.symtab`; in `.dynsym` the default version (`.gnu.version`)
    /// wins over hidden ones. `offs` must lie inside the function
    /// (`st_size`; only 0 when the size is 0). A name that only other
    /// symbols have (a variable) is [`ElfError::NotAFunction`].
    pub fn lookup_function(&self, name: &[u8], offs: u64) -> Result<FunctionPlace<'a>, ElfError> {
        let sym = match self.find_symbol(name, is_function) {
            Err(ElfError::SymbolNotFound) => {
                return Err(match self.find_symbol(name, |kind| !is_function(kind)) {
                    Err(e @ (ElfError::SymbolNotFound | ElfError::NotRead { .. })) => e,
                    _ => ElfError::NotAFunction,
                })
            }
            found => found?,
        };
        if offs != 0 && offs >= sym.size {
            return Err(ElfError::OffsetPastSymbolEnd);
        }
        let start = self.vaddr_to_offset(sym.value)?;
        let address = sym
            .value
            .checked_add(offs)
            .ok_or(ElfError::UnmappedAddress)?;
        let offset = self.vaddr_to_offset(address)?;
        // A function lies in one segment: an offset into it that another
        // segment maps (a size that lies) is no place of the function.
        if offset != start.wrapping_add(offs) {
            return Err(ElfError::UnmappedAddress);
        }
        Ok(FunctionPlace {
            function: Function {
                name: sym.name,
                address: sym.value,
                size: sym.size,
                offset: Some(start),
                ifunc: sym.kind == STT_GNU_IFUNC,
                global: sym.global,
            },
            offset,
        })
    }

    /// [`Elf::lookup_function`] for `SYMBOL[+OFFS]` as written in a uprobe
    /// line (`OFFS` decimal or `0x` hexadecimal).
    pub fn resolve(&self, spec: &[u8]) -> Result<FunctionPlace<'a>, ElfError> {
        match spec.iter().rposition(|&c| c == b'+') {
            Some(plus) => self.lookup_function(&spec[..plus], parse_offset(&spec[plus + 1..])?),
            None => self.lookup_function(spec, 0),
        }
    }

    /// The variable (`STT_OBJECT`) called `name`, found as functions are.
    pub fn lookup_variable(&self, name: &[u8]) -> Result<Variable<'a>, ElfError> {
        let sym = self.find_symbol(name, |kind| kind == STT_OBJECT)?;
        Ok(Variable {
            name: sym.name,
            address: sym.value,
            size: sym.size,
        })
    }

    /// The defined functions of `.symtab`, else of `.dynsym`, in table
    /// order, one at a time (aliases at one address each appear).
    pub fn functions(&self) -> Result<Functions<'a>, ElfError> {
        let [symtab, dynsym] = self.symbol_tables()?;
        Ok(Functions {
            elf: *self,
            table: symtab.or(dynsym),
            next: 0,
        })
    }
}

/// Iterator over a file's functions, from [`Elf::functions`]. A malformed
/// entry ends it with its error.
#[derive(Clone, Debug)]
pub struct Functions<'a> {
    elf: Elf<'a>,
    table: Option<SymbolTable<'a>>,
    next: usize,
}

impl<'a> Iterator for Functions<'a> {
    type Item = Result<Function<'a>, ElfError>;

    fn next(&mut self) -> Option<Self::Item> {
        let table = self.table?;
        while self.next < table.len() {
            let i = self.next;
            self.next += 1;
            let sym = match table.get(i) {
                Ok(sym) => sym,
                Err(e) => {
                    self.next = table.len();
                    return Some(Err(e));
                }
            };
            if !sym.defined || !is_function(sym.kind) {
                continue;
            }
            return Some(Ok(Function {
                name: sym.name,
                address: sym.value,
                size: sym.size,
                offset: self.elf.vaddr_to_offset(sym.value).ok(),
                ifunc: sym.kind == STT_GNU_IFUNC,
                global: sym.global,
            }));
        }
        None
    }
}
