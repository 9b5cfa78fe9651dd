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
use crate::lang::text::{
    self, at, find, head, is_alpha, is_digit, is_good_name, is_reserved_field, rfind, tail, Fields,
};
use crate::lang::types::{
    Bitfield, Deref, EventField, FetchType, Load, Program, Reg, Space, Store, TextRange,
};
use crate::lang::{
    FETCH_INSN_MAX, MAX_ARG_NAME_LEN, MAX_ARRAY_LEN, MAX_PROBE_EVENT_SIZE, PARAM_MAX_STACK,
};

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
}

impl Flags {
    pub(crate) fn is_function_entry(self) -> bool {
        self.fentry && !self.ret
    }
    pub(crate) fn is_function_return(self) -> bool {
        self.ret && !self.fentry
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

/// Kernel-shaped instruction (`struct fetch_insn`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum K {
    Nop,
    End,
    Reg(Reg),
    Stack(u32),
    StackP,
    Retval,
    Imm(u64),
    Comm,
    TpArg(EventField),
    Arg(u32),
    Edata(u32),
    Data(TextRange),
    Symbol(TextRange),
    Deref(i64),
    UDeref(i64),
    StRaw,
    StMem(i64),
    StUMem(i64),
    StString(i64),
    StUString(i64),
    StSymstr(i64),
    ModBf(Bitfield),
    LpArray(u32),
}

type Code = [K; FETCH_INSN_MAX];
const END_SLOT: usize = FETCH_INSN_MAX - 1;

fn op(code: &Code, pc: usize) -> K {
    code.get(pc).copied().unwrap_or(K::End)
}

fn set(code: &mut Code, pc: usize, k: K) {
    if let Some(c) = code.get_mut(pc) {
        *c = k;
    }
}

fn range(abs: usize, len: usize) -> TextRange {
    TextRange {
        start: u8::try_from(abs).unwrap_or(u8::MAX),
        len: u8::try_from(len).unwrap_or(0),
    }
}

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
    Ok(())
}

fn btf_fetch_type<R: Resolver>(ctx: &mut Ctx<'_, R>, t: BtfType) -> FetchType {
    match t {
        BtfType::Enum => FetchType::S32,
        BtfType::Enum64 => FetchType::S64,
        BtfType::Ptr { .. } => FetchType::X64,
        BtfType::Int {
            bits,
            signed,
            offset,
        } => {
            if signed {
                match bits {
                    8 => FetchType::S8,
                    16 => FetchType::S16,
                    32 => FetchType::S32,
                    64 => FetchType::S64,
                    _ => FetchType::X64,
                }
            } else {
                match bits {
                    8 => FetchType::U8,
                    16 => FetchType::U16,
                    32 => FetchType::U32,
                    64 => FetchType::U64,
                    _ => {
                        ctx.last_bitsize = u32::from(bits);
                        ctx.last_bitoffs = ctx.last_bitoffs.saturating_add(u32::from(offset));
                        FetchType::U64
                    }
                }
            }
        }
        _ => FetchType::X64,
    }
}

fn is_uchar<R: Resolver>(ctx: &Ctx<'_, R>, id: u32) -> bool {
    matches!(
        ctx.r.btf_type(id),
        Some(BtfType::Int {
            bits: 8,
            signed: false,
            ..
        })
    )
}

/// `check_prepare_btf_string_fetch()`.
fn check_btf_string<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    code: &mut Code,
    pc: usize,
    typename: &[u8],
) -> Result<usize, AErr> {
    let lt = match ctx.last_type {
        None => return Ok(pc),
        Some((t, _)) => t,
    };
    if let BtfType::Array { elem } = lt {
        if is_uchar(ctx, elem) {
            return Ok(pc);
        }
    }
    if let BtfType::Ptr { target } = lt {
        if is_uchar(ctx, target) {
            let n = pc + 1;
            if op(code, n) == K::End {
                return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
            }
            let k = if at(typename, 0) == b'u' {
                K::UDeref(0)
            } else {
                K::Deref(0)
            };
            set(code, n, k);
            return Ok(n);
        }
    }
    err(ErrorCode::BadType4str, ctx.offset)
}

/// `str_to_immediate()`: the error is the errno the write fails with
/// (`ERANGE` for a number that overflows).
fn str_to_immediate(s: &[u8]) -> Result<u64, i32> {
    match at(s, 0) {
        c if is_digit(c) => text::kstrtoull_errno(s, 0),
        b'-' => text::kstrtoll_errno(s, 0).map(|v| v as u64),
        b'+' => text::kstrtoll_errno(tail(s, 1), 0).map(|v| v as u64),
        _ => Err(errno::EINVAL),
    }
}

/// `parse_probe_arg()`: returns the index of the last instruction.
fn parse_fetch<R: Resolver>(
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
    match at(arg, 0) {
        b'$' => {
            pc = parse_vars(ctx, def, code, pc, arg, abs)?;
        }
        b'%' => {
            if ctx.flags.fprobe || ctx.flags.tevent {
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
                return err(ErrorCode::FileOnKprobe, ctx.offset);
            } else {
                set(
                    code,
                    pc,
                    K::Symbol(range(abs + 1, arg.len().saturating_sub(1))),
                );
                pc += 1;
                if pc == END_SLOT {
                    return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
                }
                set(code, pc, K::Imm(0));
            }
            pc += 1;
            if pc == END_SLOT {
                return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
            }
            set(code, pc, K::Deref(0));
        }
        b'+' | b'-' => {
            // 7.3 caps typecast/dereference nesting
            // (`TRACEPROBE_MAX_NESTED_LEVEL`) before it reads the level.
            if let Some(max) = ctx.r.kernel().max_nested_level() {
                if depth >= max {
                    return err_no(ErrorCode::TooManyNested, ctx.offset, errno::E2BIG);
                }
            }
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
                return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
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
        b'(' => return err(ErrorCode::TypecastNotEvent, ctx.offset),
        c if is_alpha(c) || c == b'_' => {
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

/// `parse_probe_vars()`.
// Kept out of `parse_fetch`, which recurses once per dereference: its
// locals would otherwise be on the stack at every level.
#[inline(never)]
fn parse_vars<R: Resolver>(
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
    if arg.starts_with(b"retval") {
        if !ctx.flags.ret {
            return err(ErrorCode::RetvalOnProbe, ctx.offset);
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
            if v > PARAM_MAX_STACK {
                return err(ErrorCode::BadStackNum, ctx.offset);
            }
            set(code, pc, K::Stack(v as u32));
            return Ok(pc);
        }
        return err(ErrorCode::BadVar, ctx.offset);
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
        if ctx.flags.is_function_entry() {
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

/// `__store_entry_arg()`: the entry-data slot of parameter `argnum`.
fn store_entry_arg(def: &mut Definition, argnum: u32) -> Result<u32, AErr> {
    let a = u16::try_from(argnum).unwrap_or(u16::MAX);
    if let Some(p) = def.entry_args().iter().position(|&x| x == a) {
        return Ok(p as u32);
    }
    let n = def.n_entry;
    match def.entry_args.get_mut(n) {
        Some(s) => *s = a,
        None => return err_no(ErrorCode::TooManyEargs, 0, errno::E2BIG),
    }
    def.n_entry = n + 1;
    Ok(n as u32)
}

/// `split_next_field()`: (name length, next field start, is arrow).
fn split_next_field<R: Resolver>(
    ctx: &Ctx<'_, R>,
    s: &[u8],
) -> Result<(usize, Option<usize>, bool), AErr> {
    match s.iter().position(|&c| c == b'.' || c == b'-') {
        None => Ok((s.len(), None, false)),
        Some(p) => {
            if at(s, p) == b'-' {
                if at(s, p + 1) == b'>' {
                    Ok((p, Some(p + 2), true))
                } else {
                    err(ErrorCode::BadHyphen, ctx.offset + p)
                }
            } else {
                Ok((p, Some(p + 1), false))
            }
        }
    }
}

/// `parse_btf_arg()`.
fn parse_btf_arg<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    code: &mut Code,
    pc: usize,
    varname: &[u8],
) -> Result<usize, AErr> {
    if ctx.funcname.is_none() {
        return Err(AErr {
            code: ErrorCode::BadFetchArg,
            offset: ctx.offset,
            errno: errno::EINVAL,
            logged: false,
        });
    }
    let (nlen, field, is_ptr) = split_next_field(ctx, varname)?;
    if !is_ptr {
        if let Some(f) = field {
            return err_no(ErrorCode::NosupDatArg, ctx.offset + f, errno::EOPNOTSUPP);
        }
    }
    let name = head(varname, nlen);
    let tid;
    if ctx.flags.ret && name == b"$retval" {
        set(code, pc, K::Retval);
        match ctx.query_btf() {
            Some(b) => {
                if b.ret_type == 0 {
                    return err_no(ErrorCode::NoRetval, ctx.offset, errno::ENOENT);
                }
                tid = b.ret_type;
            }
            None => {
                if let Some(f) = field {
                    return err_no(ErrorCode::NoBtfEntry, ctx.offset + f, errno::ENOENT);
                }
                return Ok(pc);
            }
        }
    } else {
        let b = match ctx.query_btf() {
            Some(b) if b.nr_params > 0 => b,
            _ => return err_no(ErrorCode::NoBtfEntry, ctx.offset, errno::ENOENT),
        };
        let mut found = None;
        for i in 0..b.nr_params {
            if let Some((pn, t)) = ctx.btf_param(i) {
                if pn.as_bytes() == name {
                    found = Some((i, t));
                    break;
                }
            }
        }
        let (i, t) = match found {
            Some(x) => x,
            None => return err_no(ErrorCode::NoBtfarg, ctx.offset, errno::ENOENT),
        };
        if ctx.flags.is_function_entry() {
            let p = if ctx.flags.tpoint {
                i.saturating_add(1)
            } else {
                i
            };
            set(code, pc, K::Arg(p));
        } else if ctx.flags.is_function_return() {
            let slot = store_entry_arg(def, i)?;
            set(code, pc, K::Edata(slot));
        }
        tid = t;
    }
    let ty = match ctx.r.btf_type(tid) {
        Some(t) => t,
        None => return err(ErrorCode::BadBtfTid, ctx.offset),
    };
    ctx.last_type = Some((ty, tid));
    ctx.last_bitoffs = 0;
    ctx.last_bitsize = 0;
    match field {
        Some(f) => {
            ctx.offset += f;
            parse_btf_field(ctx, code, pc, tail(varname, f))
        }
        None => Ok(pc),
    }
}

/// `parse_btf_field()`.
fn parse_btf_field<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    code: &mut Code,
    pc: usize,
    fieldname: &[u8],
) -> Result<usize, AErr> {
    let mut pc = pc;
    let (mut ty, _) = match ctx.last_type {
        Some(t) => t,
        None => return err(ErrorCode::BadBtfTid, ctx.offset),
    };
    let mut fieldname = Some(fieldname);
    let mut guard = 0u32;
    while let Some(fname) = fieldname {
        guard += 1;
        if guard > 64 {
            return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
        }
        let mut cur_id = match ty {
            BtfType::Ptr { target } => target,
            _ => return err(ErrorCode::NoPtrStrct, ctx.offset),
        };
        if ctx.r.btf_type(cur_id).is_none() {
            return err(ErrorCode::BadBtfTid, ctx.offset);
        }
        let mut bitoffs: u32 = 0;
        let mut fname = fname;
        loop {
            guard += 1;
            if guard > 64 {
                return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
            }
            let (nlen, next, is_ptr) = split_next_field(ctx, fname)?;
            let name = text::as_str(head(fname, nlen));
            let m = match ctx.r.btf_member(cur_id, name) {
                Err(_) => return err(ErrorCode::BadBtfTid, ctx.offset),
                Ok(None) => return err_no(ErrorCode::NoBtfField, ctx.offset, errno::ENOENT),
                Ok(Some(m)) => m,
            };
            bitoffs = bitoffs.saturating_add(m.bit_offset);
            ctx.last_bitsize = m.bitfield_size;
            ty = match ctx.r.btf_type(m.ty) {
                Some(t) => t,
                None => return err(ErrorCode::BadBtfTid, ctx.offset),
            };
            cur_id = m.ty;
            match next {
                Some(n) => {
                    ctx.offset += n;
                    fname = tail(fname, n);
                    fieldname = Some(fname);
                }
                None => fieldname = None,
            }
            if is_ptr || next.is_none() {
                break;
            }
        }
        pc += 1;
        if pc == END_SLOT {
            return err(ErrorCode::TooManyOps, ctx.offset);
        }
        set(code, pc, K::Deref(i64::from(bitoffs / 8)));
        ctx.last_bitoffs = bitoffs % 8;
        ctx.last_type = Some((ty, cur_id));
    }
    Ok(pc)
}

/// `finalize_fetch_insn()`.
fn finalize<R: Resolver>(
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
            pc += 1;
            if op(code, pc) != K::Nop {
                return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
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
        pc += 1;
        if op(code, pc) != K::Nop {
            return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
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
fn to_program(code: &Code, count: u8) -> Option<Program> {
    let mut p = Program::empty();
    let mut i = 0usize;
    p.load = match op(code, 0) {
        K::Reg(r) => Load::Reg(r),
        K::Stack(n) => Load::Stack(n),
        K::StackP => Load::StackPointer,
        K::Retval => Load::RetVal,
        K::Imm(v) => Load::Imm(v),
        K::Comm => Load::Comm,
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
            K::Deref(o) => p
                .push_deref(Deref {
                    space: Space::Kernel,
                    offset: o,
                })
                .ok()?,
            K::UDeref(o) => p
                .push_deref(Deref {
                    space: Space::User,
                    offset: o,
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

/// Split `SYM[+|-OFFS]` (`traceprobe_split_symbol_offset`).
pub(crate) fn split_symbol_offset(s: &[u8]) -> Option<(&[u8], i64)> {
    match s.iter().position(|&c| c == b'+' || c == b'-') {
        None => Some((s, 0)),
        Some(p) => Some((head(s, p), text::kstrtoll(tail(s, p), 0)?)),
    }
}

/// Resolve `@SYM` loads; `Err(())` when the offset is malformed (register
/// failure) and `Ok(false)` when a symbol is unknown.
pub(crate) fn resolve_symbols<R: Resolver>(r: &R, def: &mut Definition) -> Result<bool, ()> {
    let n = def.nargs;
    for a in def.args.iter_mut().take(n) {
        if let Load::Symbol { name, .. } = a.prog.load {
            let s = usize::from(name.start);
            let full = text::mid(
                a.text.as_bytes(),
                s,
                s.saturating_add(usize::from(name.len)),
            );
            let (sym, off) = split_symbol_offset(full).ok_or(())?;
            let sym_r = range(s, sym.len());
            match r.symbol_address(text::as_str(sym)) {
                Some(addr) => {
                    a.prog.load = Load::Symbol {
                        name: sym_r,
                        offset: off,
                        addr: addr.wrapping_add(off as u64),
                    }
                }
                None => return Ok(false),
            }
        }
    }
    Ok(true)
}
