// SPDX-License-Identifier: GPL-2.0
//! One fetch operand (`parse_probe_arg()`): registers, the stack,
//! memory and its dereferences, per-CPU variables, immediates, symbols.

use super::btf_arg::parse_btf_arg;
use super::insn::{op, range, set, Code, END_SLOT, K};
use super::vars::parse_vars;
use super::{err, err_no, AErr, Ctx};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::resolver::Resolver;
use crate::lang::text::{self, at, find, head, is_alpha, is_digit, rfind, tail};
use crate::lang::types::Reg;
use typecast::parse_typecast;

mod typecast;

/// `str_to_immediate()`: the error is the errno the write fails with
/// (`ERANGE` for a number that overflows).
pub(super) fn str_to_immediate(s: &[u8]) -> Result<u64, i32> {
    match at(s, 0) {
        c if is_digit(c) => text::kstrtoull_errno(s, 0),
        b'-' => text::kstrtoll_errno(s, 0).map(|v| v as u64),
        b'+' => text::kstrtoll_errno(tail(s, 1), 0).map(|v| v as u64),
        _ => Err(errno::EINVAL),
    }
}

/// 7.3's per-CPU forms: the per-CPU pointer of a fetch argument, and the
/// value there.
pub(super) const THIS_CPU_PTR: &[u8] = b"this_cpu_ptr(";
pub(super) const THIS_CPU_READ: &[u8] = b"this_cpu_read(";

/// `parse_probe_arg()`: returns the index of the last instruction.
pub(super) fn parse_fetch<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    code: &mut Code,
    pc: usize,
    arg: &[u8],
    abs: usize,
    depth: u32,
) -> Result<usize, AErr> {
    if depth > 32 {
        return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
    }
    let mut pc = pc;
    // A kernel without the per-CPU forms reads the name as any other
    // (a uprobe refuses it as a BTF name).
    let percpu_forms = !ctx.flags.user || ctx.r.kernel().percpu_forms();
    if percpu_forms && (arg.starts_with(THIS_CPU_PTR) || arg.starts_with(THIS_CPU_READ)) {
        return parse_this_cpu(ctx, def, code, pc, arg, abs, depth);
    }
    match at(arg, 0) {
        b'$' => {
            pc = parse_vars(ctx, def, code, pc, arg, abs)?;
        }
        b'%' => {
            if ctx.flags.fprobe || ctx.flags.tevent || ctx.flags.wprobe {
                // The kernel logs BAD_VAR and then BAD_FETCH_ARG at the same
                // place; report the first, more precise one.
                return err(ErrorCode::BadVar, ctx.offset);
            } else {
                match Reg::from_name(tail(arg, 1)) {
                    Some(r) => set(code, pc, K::Reg(r)),
                    None => return err(ErrorCode::BadRegName, ctx.offset),
                }
            }
        }
        b'@' => {
            let c1 = at(arg, 1);
            if is_digit(c1) {
                match text::kstrtoull_errno(tail(arg, 1), 0) {
                    Ok(v) => set(code, pc, K::Imm(v)),
                    Err(e) => return err_no(ErrorCode::BadMemAddr, ctx.offset, e),
                }
            } else if c1 == b'+' {
                if !ctx.flags.user {
                    return err(ErrorCode::FileOnKprobe, ctx.offset);
                }
                // kstrtol() of the offset in the probed file.
                match text::kstrtoll_errno(tail(arg, 2), 0) {
                    Ok(v) => set(code, pc, K::FileOffset(v as u64)),
                    Err(e) => return err_no(ErrorCode::BadFileOffs, ctx.offset, e),
                }
            } else if ctx.flags.user {
                return err(ErrorCode::SymOnUprobe, ctx.offset);
            } else {
                set(
                    code,
                    pc,
                    K::Symbol(range(abs + 1, arg.len().saturating_sub(1))),
                );
                pc += 1;
                if pc == END_SLOT {
                    return err(ErrorCode::TooManyOps, ctx.offset);
                }
                set(code, pc, K::Imm(0));
            }
            // (Out of slots, the kernel's memory fetches and dereferences
            // fail with EINVAL, its stores with E2BIG.)
            pc += 1;
            if pc == END_SLOT {
                return err(ErrorCode::TooManyOps, ctx.offset);
            }
            set(code, pc, K::Deref(0));
        }
        b'+' | b'-' => {
            check_nesting(ctx, depth)?;
            let sign = at(arg, 0);
            let user = at(arg, 1) == b'u';
            let skip = if user { 2 } else { 1 };
            let rest = tail(arg, skip);
            let p = match find(rest, b'(') {
                Some(p) => p,
                None => return err(ErrorCode::DerefNeedBrace, ctx.offset),
            };
            let num = head(rest, p);
            // kstrtol() of the offset, '-' included: `-+4(` and `--4(`
            // have no digits after the sign.
            let off = if sign == b'+' {
                text::kstrtoll_errno(num, 0)
            } else {
                text::negative_errno(num, 0)
            };
            let off = match off {
                Ok(o) => o,
                Err(e) => return err_no(ErrorCode::BadDerefOffs, ctx.offset, e),
            };
            ctx.offset = ctx.offset.saturating_add(p + 2);
            let inner_abs = abs + skip + p + 1;
            let inner = tail(rest, p + 1);
            let close = match rfind(inner, b')') {
                Some(c) => c,
                None => {
                    return err(ErrorCode::DerefOpenBrace, ctx.offset + inner.len());
                }
            };
            let cur = ctx.offset;
            pc = parse_fetch(ctx, def, code, pc, head(inner, close), inner_abs, depth + 1)?;
            ctx.offset = cur;
            if matches!(op(code, pc), K::Comm | K::Data(_)) {
                return err(ErrorCode::CommCantDeref, ctx.offset);
            }
            pc += 1;
            if pc == END_SLOT {
                return err(ErrorCode::TooManyOps, ctx.offset);
            }
            set(code, pc, if user { K::UDeref(off) } else { K::Deref(off) });
            ctx.last_type = None;
        }
        b'\\' => {
            if at(arg, 1) == b'"' {
                let s = tail(arg, 2);
                if s.last() != Some(&b'"') {
                    return err(ErrorCode::ImmstrNoClose, ctx.offset + 2 + s.len());
                }
                set(code, pc, K::Data(range(abs + 2, s.len() - 1)));
            } else {
                match str_to_immediate(tail(arg, 1)) {
                    Ok(v) => set(code, pc, K::Imm(v)),
                    Err(e) => return err_no(ErrorCode::BadImm, ctx.offset + 1, e),
                }
            }
        }
        b'(' => return parse_typecast(ctx, def, code, pc, arg, abs, depth),
        c if is_alpha(c) || c == b'_' => {
            if ctx.flags.tevent && ctx.r.kernel().eprobe_bare_fields() {
                // 7.3: a field of the source event, named without `$`.
                let field = core::str::from_utf8(arg)
                    .ok()
                    .zip(ctx.source)
                    .and_then(|(f, (sys, ev))| ctx.r.event_field(sys, ev, f));
                match field {
                    Some(f) => set(code, pc, K::TpArg(f)),
                    None => return err(ErrorCode::NoEventField, ctx.offset),
                }
                return Ok(pc);
            }
            if !ctx.flags.is_function_entry() && !ctx.flags.is_function_return() {
                return err(ErrorCode::NosupBtfarg, ctx.offset);
            }
            pc = parse_btf_arg(ctx, def, code, pc, arg)?;
        }
        _ => {}
    }
    if op(code, pc) == K::Nop {
        return err(ErrorCode::BadFetchArg, ctx.offset);
    }
    Ok(pc)
}

/// 7.3 caps typecast/dereference nesting (`TRACEPROBE_MAX_NESTED_LEVEL`)
/// before it reads the level; 7.2 has no cap of its own.
pub(super) fn check_nesting<R: Resolver>(ctx: &Ctx<'_, R>, depth: u32) -> Result<(), AErr> {
    match ctx.r.kernel().max_nested_level() {
        Some(max) if depth >= max => err_no(ErrorCode::TooManyNested, ctx.offset, errno::E2BIG),
        _ => Ok(()),
    }
}

/// `parse_this_cpu()` and its unwinding: `this_cpu_ptr(ARG)` is ARG's
/// value made this CPU's pointer; `this_cpu_read(ARG)` reads there. On
/// `@ADDR`/`@SYM` the pointer is taken of the address itself, in place of
/// the read `@` makes. 7.3's language, on every kernel; event probes
/// refuse it (`NOSUP_PERCPU`): their records are another event's.
#[inline(never)]
fn parse_this_cpu<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    code: &mut Code,
    pc: usize,
    arg: &[u8],
    abs: usize,
    depth: u32,
) -> Result<usize, AErr> {
    check_nesting(ctx, depth)?;
    // Kernel probes only: not event probes, whose records are another
    // event's, nor uprobes.
    if ctx.flags.tevent || ctx.flags.user {
        return err(ErrorCode::NosupPercpu, ctx.offset);
    }
    let (len, is_read) = if arg.starts_with(THIS_CPU_PTR) {
        (THIS_CPU_PTR.len(), false)
    } else {
        (THIS_CPU_READ.len(), true)
    };
    ctx.offset = ctx.offset.saturating_add(len);
    let inner = tail(arg, len);
    let close = match rfind(inner, b')') {
        Some(c) => c,
        None => return err(ErrorCode::DerefOpenBrace, ctx.offset + inner.len()),
    };
    let inner = head(inner, close);
    let cur = ctx.offset;
    let mut pc = parse_fetch(ctx, def, code, pc, inner, abs + len, depth + 1)?;
    ctx.offset = cur;
    if matches!(op(code, pc), K::Comm | K::Data(_)) {
        return err(ErrorCode::CommCantDeref, ctx.offset);
    }
    if at(inner, 0) != b'@' {
        pc += 1;
        if pc == END_SLOT {
            return err(ErrorCode::TooManyOps, ctx.offset);
        }
    }
    set(code, pc, K::CpuPtr);
    ctx.last_type = None;
    if is_read {
        pc += 1;
        if pc == END_SLOT {
            return err(ErrorCode::TooManyOps, ctx.offset);
        }
        set(code, pc, K::Deref(0));
    }
    Ok(pc)
}
