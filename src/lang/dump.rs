// SPDX-License-Identifier: GPL-2.0
//! What a definition compiled to, one line per argument, as a kernel
//! built with `CONFIG_PROBE_EVENTS_DUMP_FETCHARG` shows its fetch
//! instructions after each definition:
//! `#  NAME: LOAD -> DEREF(offset=8) -> ST_MEM(offset=0,size=4) -> END`.
//!
//! The names are the kernel's `FETCH_OP_*` where dynprobe's steps mean
//! the same; dynprobe's own steps have their own names: `DEREF_AUTO`,
//! `ST_MEM_AUTO`, `ST_STRING_AUTO` (function events: user memory below
//! the user/kernel split, kernel memory above), `EDATA(slot=N)`,
//! `TP_ARG(offset=O,size=S)` (the source record's field), `SYMBOL(NAME)`
//! (not the address: the file is no way around `kptr_restrict`), `NOP`
//! (a `NULL` argument of a function event, which records nothing).

use core::fmt::{self, Write};

use crate::lang::record::{ArgView, FetchArg};
use crate::lang::types::{DerefOp, Load, Space, Store};
use crate::lang::view::DefView;

impl DefView<'_> {
    /// Writes the `#  NAME: ...` line of each argument.
    pub fn write_fetch_programs<W: Write>(&self, w: &mut W) -> fmt::Result {
        for a in self.args() {
            write_program(a, w)?;
        }
        Ok(())
    }
}

fn suffix(space: Space) -> &'static str {
    match space {
        Space::Kernel => "",
        Space::User => "U",
        Space::Auto => "",
    }
}

fn auto(space: Space) -> &'static str {
    match space {
        Space::Auto => "_AUTO",
        _ => "",
    }
}

fn write_program<W: Write>(a: ArgView<'_>, w: &mut W) -> fmt::Result {
    write!(w, "#  {}: ", a.name())?;
    match *a.load() {
        Load::Reg(r) => write!(w, "REG({})", r.pt_regs_offset())?,
        Load::Stack(n) => write!(w, "STACK({n})")?,
        Load::StackPointer => w.write_str("STACKP")?,
        Load::RetVal => w.write_str("RETVAL")?,
        Load::Arg(n) => write!(w, "ARG({n})")?,
        Load::EntryData(s) => write!(w, "EDATA(slot={s})")?,
        Load::Imm(v) => write!(w, "IMM(0x{v:x})")?,
        Load::Comm => w.write_str("COMM")?,
        Load::Current => w.write_str("CURRENT")?,
        Load::FileOffset(off) => write!(w, "FOFFS(0x{off:x})")?,
        Load::Field(f) => write!(w, "TP_ARG(offset={},size={})", f.offset, f.size)?,
        Load::ImmString(r) => {
            w.write_str("IMMSTR(")?;
            for &c in a.text_range(r) {
                w.write_char(char::from(c))?;
            }
            w.write_char(')')?;
        }
        Load::Symbol { name, offset, .. } => {
            w.write_str("SYMBOL(")?;
            for &c in a.text_range(name) {
                w.write_char(char::from(c))?;
            }
            if offset != 0 {
                write!(w, "{offset:+}")?;
            }
            w.write_char(')')?;
        }
        Load::None => w.write_str("NOP")?,
    }
    for d in a.derefs() {
        match d.op {
            DerefOp::Read(space) => write!(
                w,
                " -> {}DEREF{}(offset={})",
                suffix(space),
                auto(space),
                d.offset
            )?,
            DerefOp::ThisCpuPtr => w.write_str(" -> CPU_PTR")?,
        }
    }
    let size = a.fetch_type().size();
    match *a.store() {
        Store::Raw => write!(w, " -> ST_RAW(size={size})")?,
        Store::Mem { space, offset } => write!(
            w,
            " -> ST_{}MEM{}(offset={offset},size={size})",
            suffix(space),
            auto(space)
        )?,
        Store::String { space, offset } => write!(
            w,
            " -> ST_{}STRING{}(offset={offset},size={size})",
            suffix(space),
            auto(space)
        )?,
        Store::SymStr { offset } => write!(w, " -> ST_SYMSTR(offset={offset},size={size})")?,
    }
    if let Some(bf) = a.bitfield() {
        write!(
            w,
            " -> MOD_BF(basesize={},lshift={},rshift={})",
            bf.basesize, bf.lshift, bf.rshift
        )?;
    }
    if a.prog_count() > 0 {
        write!(w, " -> LP_ARRAY({})", a.prog_count())?;
    }
    w.write_str(" -> END\n")
}
