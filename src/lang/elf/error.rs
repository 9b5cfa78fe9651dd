// SPDX-License-Identifier: GPL-2.0
//! Why the ELF reader refuses a file, a symbol or an SDT argument spec:
//! the error enums and their messages.

use core::fmt;

/// Why an ELF file, or a question asked of it, is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// Shorter than its ELF header.
    Truncated,
    /// Not `\x7fELF`.
    BadMagic,
    /// Not ELF64 (`ELFCLASS64`).
    BadClass,
    /// Not little-endian (`ELFDATA2LSB`).
    BadEndian,
    /// Not version 1 (`EV_CURRENT`).
    BadVersion,
    /// Not x86_64 (`EM_X86_64`).
    BadMachine,
    /// Neither an executable nor a shared object (`ET_EXEC`, `ET_DYN`).
    BadType,
    /// The header's section or program header entries are not the ELF64
    /// size, or their table lies (partly) outside the file.
    BadHeaderTable,
    /// A section's contents lie (partly) outside the file.
    SectionOutOfFile,
    /// A section index (a link, the section names' index) names no
    /// section, or a section of the wrong type.
    BadSectionIndex,
    /// A string offset lies outside its string table, or the string there
    /// does not end inside it.
    StringOutOfTable,
    /// A symbol table's entry size or length is not whole ELF64 symbols.
    BadSymbolTable,
    /// A note in `.note.stapsdt` runs past its section, or its strings are
    /// not NUL-terminated inside it.
    BadNote,
    /// No function of that name in `.symtab` or `.dynsym`.
    SymbolNotFound,
    /// Several functions of that name at different addresses, none
    /// preferred (global over local, default version over hidden).
    AmbiguousSymbol,
    /// The offset after `+` is not a number, or does not fit 64 bits.
    BadOffset,
    /// `+OFFS` is at or past the end of the function (its `st_size`).
    OffsetPastSymbolEnd,
    /// No loadable segment (`PT_LOAD`) maps the address from the file.
    UnmappedAddress,
    /// A symbol of that name exists but is not a function (`STT_FUNC`,
    /// `STT_GNU_IFUNC`).
    NotAFunction,
    /// The file has neither `.symtab` nor `.dynsym`.
    NoSymbolTable,
    /// The answer needs the file's bytes `offset..offset + len`, which
    /// lie in the file but in none of the pieces the caller read
    /// ([`crate::lang::elf::Elf::from_pieces`]).
    NotRead {
        /// Where the range starts in the file.
        offset: u64,
        /// Its length.
        len: u64,
    },
}

impl ElfError {
    /// The message for the user.
    pub fn message(self) -> &'static str {
        match self {
            ElfError::Truncated => "file is shorter than an ELF header",
            ElfError::BadMagic => "not an ELF file (bad magic)",
            ElfError::BadClass => "not a 64-bit ELF file",
            ElfError::BadEndian => "not a little-endian ELF file",
            ElfError::BadVersion => "unknown ELF version",
            ElfError::BadMachine => "not an x86_64 ELF file",
            ElfError::BadType => "not an executable or shared object",
            ElfError::BadHeaderTable => "section or program header table out of file",
            ElfError::SectionOutOfFile => "section lies outside the file",
            ElfError::BadSectionIndex => "bad section index",
            ElfError::StringOutOfTable => "string offset outside its string table",
            ElfError::BadSymbolTable => "malformed symbol table",
            ElfError::BadNote => "malformed SDT note",
            ElfError::SymbolNotFound => "no such function in the symbol tables",
            ElfError::AmbiguousSymbol => "several functions of that name at different addresses",
            ElfError::BadOffset => "bad offset after the symbol",
            ElfError::OffsetPastSymbolEnd => "offset is past the end of the function",
            ElfError::UnmappedAddress => "no loadable segment maps the address",
            ElfError::NotAFunction => "the symbol is not a function",
            ElfError::NoSymbolTable => "no symbol table (.symtab or .dynsym)",
            ElfError::NotRead { .. } => "a range of the file was not read",
        }
    }
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// Why an SDT argument spec (`-4@-20(%rbp)`) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdtArgError {
    /// No `SIZE@` before the operand (notes older than sdt.h version 3).
    MissingSize,
    /// A size other than 1, 2, 4 or 8 bytes (with an optional `-`).
    BadSize,
    /// An operand that is none of `%REG`, `$IMM`, `OFFS(%REG)`,
    /// `SYM(%rip)`.
    BadOperand,
    /// A register that is not a general-purpose one (`%xmm0`, `%st`).
    UnknownRegister,
    /// `%ah`, `%bh`, `%ch`, `%dh`: bits 8-15 of a register, which a fetch
    /// argument cannot take.
    HighByteRegister,
    /// `OFFS(%BASE,%INDEX,SCALE)`: a fetch argument dereferences one
    /// register plus a constant, not a sum of registers.
    IndexedAddress,
    /// `NUMBER(%rip)`: the address depends on the instruction's length,
    /// which the note does not give.
    NumericRipRelative,
    /// A number that does not fit 64 bits.
    BadNumber,
}

impl SdtArgError {
    /// The message for the user.
    pub fn message(self) -> &'static str {
        match self {
            SdtArgError::MissingSize => "SDT argument has no SIZE@",
            SdtArgError::BadSize => "SDT argument size is not 1, 2, 4 or 8",
            SdtArgError::BadOperand => "SDT argument operand is not understood",
            SdtArgError::UnknownRegister => "SDT argument uses a register a fetch cannot read",
            SdtArgError::HighByteRegister => "SDT argument uses a high-byte register",
            SdtArgError::IndexedAddress => {
                "SDT argument uses indexed addressing, which a fetch cannot express"
            }
            SdtArgError::NumericRipRelative => {
                "SDT argument is %rip-relative to a number, not a symbol"
            }
            SdtArgError::BadNumber => "SDT argument number does not fit 64 bits",
        }
    }
}

impl fmt::Display for SdtArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}
