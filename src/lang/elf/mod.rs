// SPDX-License-Identifier: GPL-2.0
//! Reader of ELF64 little-endian x86_64 executables and shared objects,
//! for uprobes: functions by name to the file offset a uprobe takes, the
//! functions listed, and SDT (USDT) markers with their semaphores and
//! argument specs.
//!
//! It works from the bytes of the whole file, which the caller reads (a
//! `&[u8]`, [`Elf::parse`]), or from pieces of it ([`Elf::from_pieces`]):
//! every offset is a file offset. What it touches are the ELF header (64
//! bytes), the section header table, the program header table, and the
//! sections it is asked about: the symbol tables with their string tables
//! and `.gnu.version`, `.note.stapsdt`, and the section names; code and
//! data are never read. A caller that reads the file in pieces (the
//! kernel) starts with none: each question that needs a range no piece
//! holds fails with [`ElfError::NotRead`] naming it, and the caller reads
//! it and asks again, so it reads those ranges and nothing else.
//! Nothing is allocated and every offset and size is checked against the
//! slice, so a malformed file is refused with an [`ElfError`], never a
//! panic; a question costs a pass or two over the headers and one over
//! each table it reads.
//!
//! ```text
//! let elf = Elf::parse(bytes)?;                 // header and tables
//! let place = elf.resolve(b"malloc+4")?;        // SYMBOL[+OFFS]
//! // or, in pieces: loop { match Elf::from_pieces(size, &pieces)
//! //     .and_then(|elf| elf.resolve(b"malloc")) {
//! //     Err(ElfError::NotRead { offset, len }) => pieces.push(read(offset, len)),
//! //     done => break done } }
//! place.offset                                  // the uprobe's offset
//! for f in elf.functions()? { let f = f?; /* f.name, f.offset, f.size */ }
//! for n in elf.sdt_notes()? {
//!     let n = n?;            // n.provider, n.name, n.pc_offset, n.semaphore_offset
//!     for (spec, arg) in SdtArgs::new(n.args) { arg?.write_fetch(&mut w, None)?; }
//! }
//! ```
//!
//! A uprobe's offset is a file offset: a symbol's address maps to it
//! through the loadable segment (`PT_LOAD`) whose file part holds it, as
//! perf and bpftrace do.

mod error;
mod file;
mod sdt;
mod sdt_arg;
mod symbols;

pub use error::{ElfError, SdtArgError};
pub use file::{Elf, Piece, Section, Sections, Segment, Segments};
pub use sdt::{SdtNote, SdtNotes};
pub use sdt_arg::{parse_sdt_arg, SdtArg, SdtArgs, SdtPlace, SdtReg};
pub use symbols::{Function, FunctionPlace, Functions, Variable};
