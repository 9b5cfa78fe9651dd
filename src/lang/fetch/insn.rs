// SPDX-License-Identifier: GPL-2.0
//! The kernel-shaped instruction array (`struct fetch_insn[]`) an
//! argument is parsed into, its last step (`finalize_fetch_insn()`) and
//! its translation into the typed [`Program`].

use super::{err, err_no, AErr, Ctx};
use crate::lang::error::{errno, ErrorCode};
use crate::lang::resolver::Resolver;
use crate::lang::text::{self, at, tail};
use crate::lang::types::{
    Bitfield, Deref, DerefOp, EventField, FetchType, Load, Program, Reg, Space, Store, TextRange,
};
use crate::lang::FETCH_INSN_MAX;

/// Kernel-shaped instruction (`struct fetch_insn`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum K {
    Nop,
    End,
    Reg(Reg),
    Stack(u32),
    StackP,
    Retval,
    Imm(u64),
    Comm,
    Current,
    /// A uprobe's `@+OFFS` (`FETCH_OP_FOFFS`).
    FileOffset(u64),
    /// A watchpoint's `$addr`: the watched address, which no trigger
    /// moves in dynprobe (see vars.rs).
    WatchAddr(u64),
    TpArg(EventField),
    Arg(u32),
    Edata(u32),
    Data(TextRange),
    Symbol(TextRange),
    Deref(i64),
    UDeref(i64),
    CpuPtr,
    StRaw,
    StMem(i64),
    StUMem(i64),
    StString(i64),
    StUString(i64),
    StSymstr(i64),
    ModBf(Bitfield),
    LpArray(u32),
}

pub(super) type Code = [K; FETCH_INSN_MAX];
pub(super) const END_SLOT: usize = FETCH_INSN_MAX - 1;

pub(super) fn op(code: &Code, pc: usize) -> K {
    code.get(pc).copied().unwrap_or(K::End)
}

pub(super) fn set(code: &mut Code, pc: usize, k: K) {
    if let Some(c) = code.get_mut(pc) {
        *c = k;
    }
}

pub(super) fn range(abs: usize, len: usize) -> TextRange {
    TextRange {
        start: u8::try_from(abs).unwrap_or(u8::MAX),
        len: u8::try_from(len).unwrap_or(0),
    }
}

/// `finalize_fetch_insn()`.
pub(super) fn finalize<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    code: &mut Code,
    pc: usize,
    ty: FetchType,
    tstr: Option<&[u8]>,
    type_off: usize,
    count: u32,
) -> Result<(), AErr> {
    let mut pc = pc;
    let last = op(code, pc);
    if ty.is_string() {
        if ty == FetchType::SymStr {
            if !matches!(
                last,
                K::Reg(_) | K::Stack(_) | K::Retval | K::Arg(_) | K::Deref(_) | K::TpArg(_)
            ) {
                return err(ErrorCode::BadSymstring, ctx.offset + type_off);
            }
        } else if !matches!(
            last,
            K::Deref(_) | K::UDeref(_) | K::Imm(_) | K::Comm | K::Data(_) | K::TpArg(_)
        ) {
            return err(ErrorCode::BadString, ctx.offset + type_off);
        }
        let mut cur = last;
        if ty == FetchType::SymStr
            || matches!(last, K::Imm(_) | K::Comm | K::Data(_) | K::TpArg(_))
            || count > 0
        {
            // (EINVAL here, as the kernel's; E2BIG for the raw store and
            // the array below.)
            pc += 1;
            if op(code, pc) != K::Nop {
                return err(ErrorCode::TooManyOps, ctx.offset);
            }
            cur = K::Nop;
        }
        let off = match cur {
            K::Deref(o) | K::UDeref(o) => o,
            _ => 0,
        };
        let st = if ty == FetchType::UString || matches!(cur, K::UDeref(_)) {
            K::StUString(off)
        } else if ty == FetchType::SymStr {
            K::StSymstr(off)
        } else {
            K::StString(off)
        };
        set(code, pc, st);
    } else if let K::Deref(o) = last {
        set(code, pc, K::StMem(o));
    } else if let K::UDeref(o) = last {
        set(code, pc, K::StUMem(o));
    } else {
        pc += 1;
        if op(code, pc) != K::Nop {
            return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
        }
        set(code, pc, K::StRaw);
    }
    let scode = op(code, pc);

    if let Some(t) = tstr {
        if at(t, 0) == b'b' {
            let bad = || err(ErrorCode::BadBitfield, ctx.offset + type_off);
            let (bw, n1) = text::simple_strtoul(tail(t, 1), 0);
            if bw == 0 || at(t, 1 + n1) != b'@' {
                return bad();
            }
            let bf = tail(t, 2 + n1);
            let (bo, n2) = text::simple_strtoul(bf, 0);
            if n2 == 0 || at(bf, n2) != b'/' {
                return bad();
            }
            pc += 1;
            if op(code, pc) != K::Nop {
                return bad();
            }
            let bits = u64::from(ty.size()) * 8;
            let used = bw.saturating_add(bo);
            if used > bits {
                return bad();
            }
            set(
                code,
                pc,
                K::ModBf(Bitfield {
                    basesize: ty.size() as u8,
                    lshift: (bits - used) as u8,
                    rshift: (bits - bw) as u8,
                }),
            );
        }
    } else if ctx.last_type.is_some() && !(ctx.last_bitsize % 8 == 0 && ctx.last_bitoffs == 0) {
        // parse_btf_bitfield(): EINVAL.
        pc += 1;
        if op(code, pc) != K::Nop {
            return err(ErrorCode::TooManyOps, ctx.offset);
        }
        let used = ctx.last_bitsize.saturating_add(ctx.last_bitoffs);
        if used > 64 || ctx.last_bitsize > 64 {
            return err(ErrorCode::BadBitfield, ctx.offset);
        }
        set(
            code,
            pc,
            K::ModBf(Bitfield {
                basesize: 8,
                lshift: (64 - used) as u8,
                rshift: (64 - ctx.last_bitsize) as u8,
            }),
        );
    }

    if count > 0 {
        if !matches!(scode, K::StMem(_) | K::StString(_) | K::StUString(_)) {
            return err(ErrorCode::BadString, ctx.offset + type_off);
        }
        pc += 1;
        if op(code, pc) != K::Nop {
            return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
        }
        set(code, pc, K::LpArray(count));
    }
    pc += 1;
    set(code, pc, K::End);
    Ok(())
}

/// Turn the kernel-shaped array into the typed program.
pub(super) fn to_program(code: &Code, count: u8) -> Option<Program> {
    let mut p = Program::empty();
    let mut i = 0usize;
    p.load = match op(code, 0) {
        K::Reg(r) => Load::Reg(r),
        K::Stack(n) => Load::Stack(n),
        K::StackP => Load::StackPointer,
        K::Retval => Load::RetVal,
        K::Imm(v) => Load::Imm(v),
        K::Comm => Load::Comm,
        K::Current => Load::Current,
        K::FileOffset(off) => Load::FileOffset(off),
        K::WatchAddr(a) => Load::Imm(a),
        K::TpArg(f) => Load::Field(f),
        K::Arg(n) => Load::Arg(n),
        K::Edata(n) => Load::EntryData(n),
        K::Data(r) => Load::ImmString(r),
        K::Symbol(r) => {
            i += 1;
            if !matches!(op(code, 1), K::Imm(_)) {
                return None;
            }
            Load::Symbol {
                name: r,
                offset: 0,
                addr: 0,
            }
        }
        _ => return None,
    };
    i += 1;
    loop {
        match op(code, i) {
            K::Deref(o) => p.push_deref(Deref::read(Space::Kernel, o)).ok()?,
            K::UDeref(o) => p.push_deref(Deref::read(Space::User, o)).ok()?,
            K::CpuPtr => p
                .push_deref(Deref {
                    op: DerefOp::ThisCpuPtr,
                    offset: 0,
                })
                .ok()?,
            _ => break,
        }
        i += 1;
    }
    p.store = match op(code, i) {
        K::StRaw => Store::Raw,
        K::StMem(o) => Store::Mem {
            space: Space::Kernel,
            offset: o,
        },
        K::StUMem(o) => Store::Mem {
            space: Space::User,
            offset: o,
        },
        K::StString(o) => Store::String {
            space: Space::Kernel,
            offset: o,
        },
        K::StUString(o) => Store::String {
            space: Space::User,
            offset: o,
        },
        K::StSymstr(o) => Store::SymStr { offset: o },
        _ => return None,
    };
    i += 1;
    if let K::ModBf(b) = op(code, i) {
        p.bitfield = Some(b);
        i += 1;
    }
    if let K::LpArray(n) = op(code, i) {
        if u32::from(count) != n {
            return None;
        }
        p.count = count;
        i += 1;
    }
    if op(code, i) != K::End {
        return None;
    }
    Some(p)
}
