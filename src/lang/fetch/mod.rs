// SPDX-License-Identifier: GPL-2.0
//! Fetch-argument parser and compiler for probe events.
//!
//! The parser works on a kernel-shaped instruction array of 16 slots so that
//! every limit and every error position comes out as the kernel's
//! `traceprobe_parse_probe_arg()` computes them; the result is then turned
//! into the typed [`Program`].

use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::record::ProbeArg;
use crate::lang::resolver::{BtfFunc, BtfType, Resolver};
use crate::lang::text::{self, find, head, is_good_name, is_reserved_field, tail, Fields};
use crate::lang::types::FetchType;
use crate::lang::{FETCH_INSN_MAX, MAX_ARG_NAME_LEN, MAX_ARRAY_LEN, MAX_PROBE_EVENT_SIZE};
use btf_arg::{btf_fetch_type, check_btf_string};
use insn::{finalize, set, to_program, Code, END_SLOT, K};
use operand::parse_fetch;

/// An argument-level error: code, offset within the argument, errno.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AErr {
    pub(crate) code: ErrorCode,
    pub(crate) offset: usize,
    pub(crate) errno: i32,
    pub(crate) logged: bool,
}

fn err<T>(code: ErrorCode, offset: usize) -> Result<T, AErr> {
    Err(AErr {
        code,
        offset,
        errno: errno::EINVAL,
        logged: true,
    })
}

fn err_no<T>(code: ErrorCode, offset: usize, e: i32) -> Result<T, AErr> {
    Err(AErr {
        code,
        offset,
        errno: e,
        logged: true,
    })
}

/// Probe location flags (`TPARG_FL_*`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Flags {
    pub(crate) ret: bool,
    pub(crate) fentry: bool,
    pub(crate) fprobe: bool,
    pub(crate) tpoint: bool,
    /// An event probe's arguments (`TPARG_FL_TEVENT`): `$FIELD` names a
    /// field of the source event; no registers.
    pub(crate) tevent: bool,
    /// A watchpoint's arguments (`TPARG_FL_WPROBE` of the posted wprobe
    /// series): `$addr` and `$value` are its only variables; no registers.
    pub(crate) wprobe: bool,
    /// A uprobe's arguments (`TPARG_FL_USER`, without `TPARG_FL_KERNEL`):
    /// registers and memory are the probed process's, no BTF, no
    /// symbols, `@+OFFS` is an offset in the probed file.
    pub(crate) user: bool,
}

impl Flags {
    pub(crate) fn is_function_entry(self) -> bool {
        self.fentry && !self.ret && !self.user
    }
    pub(crate) fn is_function_return(self) -> bool {
        self.ret && !self.fentry && !self.user
    }
}

/// Parse context (`struct traceprobe_parse_context`).
pub(crate) struct Ctx<'a, R: Resolver> {
    pub(crate) r: &'a R,
    pub(crate) flags: Flags,
    pub(crate) funcname: Option<&'a str>,
    pub(crate) offset: usize,
    /// An event probe's source event: system and name.
    pub(crate) source: Option<(&'a str, &'a str)>,
    last_type: Option<(BtfType, u32)>,
    last_bitoffs: u32,
    last_bitsize: u32,
    btf: Option<BtfFunc>,
}

impl<'a, R: Resolver> Ctx<'a, R> {
    pub(crate) fn new(r: &'a R, flags: Flags, funcname: Option<&'a str>) -> Self {
        Ctx {
            r,
            flags,
            funcname,
            offset: 0,
            source: None,
            last_type: None,
            last_bitoffs: 0,
            last_bitsize: 0,
            btf: None,
        }
    }

    /// `query_btf_context()`: the prototype with tracepoint's hidden first
    /// parameter removed.
    pub(crate) fn query_btf(&mut self) -> Option<BtfFunc> {
        if let Some(b) = self.btf {
            return Some(b);
        }
        let f = self.funcname?;
        let b = if self.flags.tpoint {
            let mut b = self.r.btf_tracepoint(f)?;
            b.nr_params = b.nr_params.saturating_sub(1);
            b
        } else {
            self.r.btf_func(f)?
        };
        self.btf = Some(b);
        Some(b)
    }

    /// Name of BTF parameter `i` (tracepoint hidden parameter skipped).
    pub(crate) fn btf_param(&self, i: u32) -> Option<(&'a str, u32)> {
        let f = self.funcname?;
        if self.flags.tpoint {
            self.r.btf_tracepoint_param(f, i.checked_add(1)?)
        } else {
            self.r.btf_param(f, i)
        }
    }
}

mod btf_arg;
mod entry_arg;
mod insn;
mod operand;
mod symbols;
mod vars;

pub(crate) use symbols::{resolve_symbols, split_symbol_offset};

/// `traceprobe_parse_probe_arg()`: parse `arg` as argument `i` of `def`.
pub(crate) fn parse_probe_arg<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    i: usize,
    arg: &[u8],
) -> Result<(), AErr> {
    let mut name: text::Str<{ crate::lang::MAX_EVENT_NAME_LEN }> = text::Str::new();
    let (body, body_off) = match find(arg, b'=') {
        Some(p) => {
            if p > MAX_ARG_NAME_LEN {
                return err(ErrorCode::ArgNameTooLong, 0);
            }
            if p == 0 {
                return err(ErrorCode::NoArgName, 0);
            }
            let n = head(arg, p);
            if name.push(text::as_str(n)).is_err() || name.len() != n.len() {
                return err(ErrorCode::BadArgName, 0);
            }
            (tail(arg, p + 1), p + 1)
        }
        None => {
            let end = find(arg, b':').unwrap_or(arg.len());
            let cand = head(arg, end);
            let good = is_good_name(cand) && name.push(text::as_str(cand)).is_ok();
            if !good {
                name.clear();
                // Cannot fail ("arg128" fits); an empty name is refused below.
                if core::fmt::write(&mut name, format_args!("arg{}", i.saturating_add(1))).is_err()
                {
                    name.clear();
                }
            }
            (arg, 0)
        }
    };
    if !is_good_name(name.as_bytes()) {
        return err(ErrorCode::BadArgName, 0);
    }
    let used = is_reserved_field(name.as_bytes(), Fields::Probe)
        || def.args().iter().take(i).any(|a| a.name == name);
    if used {
        return err(ErrorCode::UsedArgName, 0);
    }
    ctx.offset = body_off;
    let mut pa = ProbeArg::new_with_name(name);
    parse_body(ctx, def, &mut pa, body)?;
    match def.arg_mut(i) {
        Some(slot) => *slot = pa,
        None => return err_no(ErrorCode::TooManyArgs, 0, errno::E2BIG),
    }
    def.nargs = def.nargs.max(i.saturating_add(1));
    Ok(())
}

/// `traceprobe_parse_probe_arg_body()`.
fn parse_body<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    pa: &mut ProbeArg,
    body: &[u8],
) -> Result<(), AErr> {
    if body.len() > ctx.r.kernel().max_argstr_len() {
        return err_no(ErrorCode::ArgTooLong, ctx.offset, errno::E2BIG);
    } else if body.is_empty() {
        return err(ErrorCode::NoArgBody, ctx.offset);
    }
    if core::str::from_utf8(body).is_err() || pa.text.set(text::as_str(body)).is_err() {
        return err(ErrorCode::BadFetchArg, ctx.offset);
    }

    // Split the type (parse_probe_arg_type).
    let colon = find(body, b':');
    let argpart = match colon {
        Some(c) => head(body, c),
        None => body,
    };
    let mut count: u32 = 0;
    let mut tstr: Option<&[u8]> = None;
    if let Some(c) = colon {
        let t = tail(body, c + 1);
        let mut t_only = t;
        if let Some(b) = find(t, b'[') {
            let t2 = c + 1 + b + 1; // index of the number in body
            let after = tail(t, b + 1);
            match find(after, b']') {
                None => {
                    return err(ErrorCode::ArrayNoClose, ctx.offset + t2 + after.len());
                }
                Some(e) => {
                    if e + 1 < after.len() {
                        return err(ErrorCode::BadArraySuffix, ctx.offset + t2 + e + 1);
                    }
                    match text::kstrtouint(head(after, e), 0) {
                        Some(n) if n > 0 => count = n,
                        _ => return err(ErrorCode::BadArrayNum, ctx.offset + t2),
                    }
                    if count > MAX_ARRAY_LEN {
                        return err(ErrorCode::ArrayTooBig, ctx.offset + t2);
                    }
                }
            }
            t_only = head(t, b);
        }
        tstr = Some(t_only);
    }
    let type_off = colon.map(|c| c + 1).unwrap_or(0);
    // Event probes take `$comm` as any other `$FIELD` (a field of that
    // name comes first), typed as written.
    let is_comm = !ctx.flags.tevent
        && (argpart == b"$comm" || argpart == b"$COMM" || argpart.starts_with(b"\\\""));
    let mut ty = if is_comm {
        if count > 0 || tstr.is_some_and(|t| t != b"string") {
            return err(ErrorCode::NeedStringType, ctx.offset + type_off);
        }
        Some(FetchType::String)
    } else {
        FetchType::find(tstr)
    }
    // find_fetch_type() refuses the symbol types on uprobes.
    .filter(|t| !(ctx.flags.user && matches!(t, FetchType::Symbol | FetchType::SymStr)))
    .map_or_else(|| err(ErrorCode::BadType, ctx.offset + type_off), Ok)?;

    let mut code: Code = [K::Nop; FETCH_INSN_MAX];
    set(&mut code, END_SLOT, K::End);
    ctx.last_type = None;
    let mut pc = parse_fetch(ctx, def, &mut code, 0, argpart, 0, 0)?;

    if let Some((lt, _)) = ctx.last_type {
        match tstr {
            None => ty = btf_fetch_type(ctx, lt),
            Some(t) if text::find_sub(t, b"string").is_some() => {
                pc = check_btf_string(ctx, &mut code, pc, t)?;
            }
            Some(_) => {}
        }
    }
    pa.ty = ty;
    pa.count = u8::try_from(count).unwrap_or(0);
    pa.offset = def.size;
    let sz = ty.size().saturating_mul(count.max(1));
    def.size = def.size.saturating_add(sz);
    if def.size > MAX_PROBE_EVENT_SIZE {
        return err_no(ErrorCode::EventTooBig, ctx.offset, errno::E2BIG);
    }
    finalize(ctx, &mut code, pc, ty, tstr, type_off, count)?;
    pa.prog =
        to_program(&code, pa.count).map_or_else(|| err(ErrorCode::BadFetchArg, ctx.offset), Ok)?;
    if ctx.flags.user {
        // A uprobe's memory, dereferences and strings alike, is the
        // probed process's (trace_uprobe.c's probe_mem_read() and
        // fetch_store_string() read user memory for every operation).
        pa.prog.make_user_space();
    }
    Ok(())
}
