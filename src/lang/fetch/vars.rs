// SPDX-License-Identifier: GPL-2.0
//! The `$` variables (`parse_probe_vars()`): `$retval`, `$stackN`,
//! `$current`, `$argN`, `$comm` and the entry data an exit event keeps.

use super::btf_arg::parse_btf_arg;
use super::entry_arg::store_entry_arg;
use super::insn::{set, Code, K};
use super::{err, err_no, AErr, Ctx};
use crate::lang::def::Definition;
use crate::lang::error::ErrorCode;
use crate::lang::resolver::Resolver;
use crate::lang::text::{self, at, is_digit, tail};
use crate::lang::PARAM_MAX_STACK;

/// `parse_probe_vars()`.
// Kept out of `parse_fetch`, which recurses once per dereference: its
// locals would otherwise be on the stack at every level.
#[inline(never)]
pub(super) fn parse_vars<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    code: &mut Code,
    pc: usize,
    orig: &[u8],
    _abs: usize,
) -> Result<usize, AErr> {
    let arg = tail(orig, 1);
    if ctx.flags.tevent {
        // parse_trace_event(): a field of the source event, else $comm.
        let field = core::str::from_utf8(arg)
            .ok()
            .zip(ctx.source)
            .and_then(|(f, (sys, ev))| ctx.r.event_field(sys, ev, f));
        if let Some(f) = field {
            set(code, pc, K::TpArg(f));
            return Ok(pc);
        }
        if arg == b"comm" || arg == b"COMM" {
            set(code, pc, K::Comm);
            return Ok(pc);
        }
        return err(ErrorCode::BadVar, ctx.offset);
    }
    if ctx.flags.wprobe {
        return watch_vars(ctx, def, code, pc, arg);
    }
    if arg.starts_with(b"retval") {
        if !ctx.flags.ret {
            return err(ErrorCode::RetvalOnProbe, ctx.offset);
        }
        if ctx.flags.user {
            // No BTF in user space: the return register as it is.
            set(code, pc, K::Retval);
            return Ok(pc);
        }
        return parse_btf_arg(ctx, def, code, pc, orig);
    }
    if let Some(rest) = arg.strip_prefix(b"stack") {
        if rest.is_empty() {
            set(code, pc, K::StackP);
            return Ok(pc);
        }
        if is_digit(at(rest, 0)) {
            let v = match text::kstrtoull_errno(rest, 10) {
                Ok(v) => v,
                Err(e) => {
                    let e = ctx.r.kernel().var_number_errno(e);
                    return err_no(ErrorCode::BadVar, ctx.offset, e);
                }
            };
            // A uprobe's stack is the process's, with no such bound.
            if v > PARAM_MAX_STACK && !ctx.flags.user {
                return err(ErrorCode::BadStackNum, ctx.offset);
            }
            set(code, pc, K::Stack(v as u32));
            return Ok(pc);
        }
        return err(ErrorCode::BadVar, ctx.offset);
    }
    if let Some(rest) = arg.strip_prefix(b"current").filter(|_| !ctx.flags.user) {
        // 7.3's `$current`, on every kernel (event probes refused it
        // above, as 7.3 does): the task's address, or with `->` a member
        // of its task_struct from BTF.
        if at(rest, 0) == b'-' {
            return parse_btf_arg(ctx, def, code, pc, orig);
        }
        if !rest.is_empty() {
            return err(ErrorCode::BadVar, ctx.offset);
        }
        set(code, pc, K::Current);
        return Ok(pc);
    }
    if arg == b"comm" || arg == b"COMM" {
        set(code, pc, K::Comm);
        return Ok(pc);
    }
    if let Some(rest) = arg.strip_prefix(b"arg") {
        let v = match text::kstrtoull_errno(rest, 10) {
            Ok(v) => v,
            Err(e) => {
                let e = ctx.r.kernel().var_number_errno(e);
                return err_no(ErrorCode::BadVar, ctx.offset, e);
            }
        };
        if v == 0 || v > PARAM_MAX_STACK {
            return err(ErrorCode::BadArgNum, ctx.offset);
        }
        let param = (v - 1) as u32;
        // Beyond the kernel, which refuses `$argN` on uprobes
        // (NOFENTRY_ARGS): a uprobe's are the x86_64 System V ABI's,
        // read from the user registers and stack as at a function's
        // first instruction; a uretprobe's are saved at entry.
        if ctx.flags.user && !ctx.flags.ret {
            set(code, pc, K::Arg(param));
        } else if ctx.flags.user {
            let slot = store_entry_arg(def, param)?;
            set(code, pc, K::Edata(slot));
        } else if ctx.flags.is_function_entry() {
            let p = if ctx.flags.tpoint {
                param.saturating_add(1)
            } else {
                param
            };
            set(code, pc, K::Arg(p));
        } else if ctx.flags.is_function_return() {
            let slot = store_entry_arg(def, param)?;
            set(code, pc, K::Edata(slot));
        } else {
            return err(ErrorCode::NofentryArgs, ctx.offset);
        }
        return Ok(pc);
    }
    err(ErrorCode::BadVar, ctx.offset)
}

/// A watchpoint's variables, its only ones: `$addr`, the accessed
/// address, and `$value`, the data there (`+0($addr)`). The posted series
/// reads `$addr` from the breakpoint that fired, which its triggers can
/// move; dynprobe has no triggers, so it is the address the line
/// resolved, a constant of the definition.
fn watch_vars<R: Resolver>(
    ctx: &Ctx<'_, R>,
    def: &Definition,
    code: &mut Code,
    pc: usize,
    arg: &[u8],
) -> Result<usize, AErr> {
    match arg {
        b"addr" => {
            set(code, pc, K::WatchAddr(def.addr));
            Ok(pc)
        }
        b"value" => {
            set(code, pc, K::WatchAddr(def.addr));
            let next = pc.saturating_add(1);
            set(code, next, K::Deref(0));
            Ok(next)
        }
        _ => err(ErrorCode::BadVar, ctx.offset),
    }
}
