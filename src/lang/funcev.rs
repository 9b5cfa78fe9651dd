// SPDX-License-Identifier: GPL-2.0
//! Parser and compiler for `function_events` lines.
//!
//! ```text
//! LINE     := FUNCTION '(' ARGS ')' [ '->' TYPE NAME INDIRECT ]
//! ARGS     := '' | ARG | ARG ',' ARGS
//! ARG      := 'NULL' | ALT | ALT '|' ARG
//! ALT      := TYPE FIELD | TYPE NAME '=' ADDR | TYPE ADDR
//! TYPE     := ['unsigned'] ATOM ['[' N ']']
//! FIELD    := NAME INDIRECT
//! INDIRECT := { '[' N ']' | '+' N }
//! ```
//!
//! The `->` part is dynprobe's exit event: it creates `functions/FUNC__exit`
//! recording the listed entry arguments and the return value.

use core::fmt::Write;

use crate::lang::def::{Command, Definition, ProbeArg, ProbeKind};
use crate::lang::error::{errno, ErrorCode, ParseError, Subsystem};
use crate::lang::resolver::Resolver;
use crate::lang::text::{
    self, at, is_alnum, is_alpha, is_digit, is_reserved_field, is_space, Fields, Str,
};
use crate::lang::types::{Deref, FetchType, Load, Program, Space, Store};
use crate::lang::{MAX_ARRAY_LEN, MAX_PROBE_EVENT_SIZE, MAX_TRACE_ARGS};

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

fn fe_err(code: ErrorCode, col: usize) -> ParseError {
    ParseError {
        code,
        column: col,
        errno: if matches!(code, ErrorCode::TooManyArgs | ErrorCode::EventTooBig) {
            errno::E2BIG
        } else {
            errno::EINVAL
        },
        subsystem: Subsystem::Function,
        logged: true,
    }
}

impl<'a> P<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && is_space(at(self.s, self.i)) {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> u8 {
        self.ws();
        at(self.s, self.i)
    }
    /// A word of identifier/number characters starting at the cursor.
    fn word(&mut self) -> (usize, &'a [u8]) {
        self.ws();
        let st = self.i;
        while self.i < self.s.len() && (is_alnum(at(self.s, self.i)) || at(self.s, self.i) == b'_')
        {
            self.i += 1;
        }
        (st, text::mid(self.s, st, self.i))
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == c {
            self.i += 1;
            true
        } else {
            false
        }
    }
    /// An integer as `kstrtol()` accepts it (with an optional sign).
    fn number(&mut self) -> Result<(usize, i64), ParseError> {
        self.ws();
        let st = self.i;
        if matches!(at(self.s, self.i), b'-' | b'+') {
            self.i += 1;
        }
        while self.i < self.s.len() && is_alnum(at(self.s, self.i)) {
            self.i += 1;
        }
        let t = text::mid(self.s, st, self.i);
        match text::kstrtoll(t, 0) {
            Some(v) => Ok((st, v)),
            None => Err(fe_err(ErrorCode::FeBadIndex, st)),
        }
    }
}

impl P<'_> {
    /// A kernel address (`0x...`, unsigned 64-bit).
    fn address(&mut self) -> Result<u64, ParseError> {
        self.ws();
        let st = self.i;
        while self.i < self.s.len() && is_alnum(at(self.s, self.i)) {
            self.i += 1;
        }
        let t = text::mid(self.s, st, self.i);
        let hex = t.len() > 2 && at(t, 0) == b'0' && at(t, 1).eq_ignore_ascii_case(&b'x');
        match text::kstrtoull(t, 0) {
            Some(v) if hex => Ok(v),
            _ => Err(fe_err(ErrorCode::BadMemAddr, st)),
        }
    }
}

fn atom(w: &[u8]) -> Option<FetchType> {
    use FetchType::*;
    Some(match w {
        b"u8" => U8,
        b"u16" => U16,
        b"u32" => U32,
        b"u64" => U64,
        b"s8" => S8,
        b"s16" => S16,
        b"s32" => S32,
        b"s64" => S64,
        b"x8" => X8,
        b"x16" => X16,
        b"x32" => X32,
        b"x64" => X64,
        b"char" => CChar,
        b"short" => CShort,
        b"int" => CInt,
        b"long" => CLong,
        b"size_t" => SizeT,
        b"symbol" => Symbol,
        b"string" => String,
        _ => return None,
    })
}

/// A parsed type.
#[derive(Clone, Copy)]
struct Ty {
    t: FetchType,
    count: u32,
}

fn parse_type(p: &mut P<'_>) -> Result<Ty, ParseError> {
    let (st, w) = p.word();
    if w.is_empty() {
        return Err(fe_err(ErrorCode::BadType, st));
    }
    let t = if w == b"unsigned" {
        let (st2, w2) = p.word();
        match w2 {
            b"char" => FetchType::UChar,
            b"short" => FetchType::UShort,
            b"int" => FetchType::UInt,
            b"long" => FetchType::ULong,
            _ => return Err(fe_err(ErrorCode::FeBadUnsigned, st2)),
        }
    } else {
        match atom(w) {
            Some(t) => t,
            None => return Err(fe_err(ErrorCode::BadType, st)),
        }
    };
    let mut count = 0u32;
    if p.peek() == b'[' {
        let lb = p.i;
        p.i += 1;
        let (nst, n) = p.number()?;
        if !p.eat(b']') {
            return Err(fe_err(ErrorCode::ArrayNoClose, p.i));
        }
        if t == FetchType::String {
            return Err(fe_err(ErrorCode::BadString, lb));
        }
        if n <= 0 {
            return Err(fe_err(ErrorCode::BadArrayNum, nst));
        }
        if n > i64::from(MAX_ARRAY_LEN) {
            return Err(fe_err(ErrorCode::ArrayTooBig, nst));
        }
        count = n as u32;
    }
    Ok(Ty { t, count })
}

fn write_type<W: Write>(w: &mut W, t: Ty) -> core::fmt::Result {
    w.write_str(t.t.name())?;
    if t.count > 0 {
        write!(w, "[{}]", t.count)?;
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Ind {
    Off(i64),
    Idx(i64),
}

/// Compile a value source plus indirections into a program.
fn compile(
    load: Load,
    ty: Ty,
    inds: &[(usize, Ind)],
    start_col: usize,
) -> Result<Program, ParseError> {
    let mut p = Program::empty();
    p.load = load;
    let esize = if ty.t.is_string() {
        1
    } else {
        i64::from(ty.t.size())
    };
    let is_str = ty.t.is_string();
    let array = ty.count > 0;
    p.count = u8::try_from(ty.count).unwrap_or(0);
    if inds.is_empty() {
        p.store = if is_str {
            Store::String {
                space: Space::Auto,
                offset: 0,
            }
        } else if array || matches!(load, Load::Imm(_)) {
            Store::Mem {
                space: Space::Auto,
                offset: 0,
            }
        } else {
            Store::Raw
        };
        return Ok(p);
    }
    let mut pending: i64 = 0;
    let n = inds.len();
    for (k, &(col, ind)) in inds.iter().enumerate() {
        let last = k + 1 == n;
        match ind {
            Ind::Off(o) => {
                pending = pending
                    .checked_add(o)
                    .ok_or_else(|| fe_err(ErrorCode::FeBadIndex, col))?;
            }
            Ind::Idx(i) => {
                let off = i
                    .checked_mul(esize)
                    .and_then(|x| x.checked_add(pending))
                    .ok_or_else(|| fe_err(ErrorCode::FeBadIndex, col))?;
                if last && !is_str {
                    p.store = Store::Mem {
                        space: Space::Auto,
                        offset: off,
                    };
                    return Ok(p);
                }
                p.push_deref(Deref {
                    space: Space::Auto,
                    offset: off,
                })
                .map_err(|_| fe_err(ErrorCode::TooManyOps, col))?;
                pending = 0;
            }
        }
    }
    let _ = start_col;
    p.store = if is_str {
        Store::String {
            space: Space::Auto,
            offset: pending,
        }
    } else {
        Store::Mem {
            space: Space::Auto,
            offset: pending,
        }
    };
    Ok(p)
}

fn parse_inds<W: Write>(
    p: &mut P<'_>,
    out: &mut [(usize, Ind); 32],
    text: &mut W,
) -> Result<usize, ParseError> {
    let mut n = 0usize;
    loop {
        let c = p.peek();
        let col = p.i;
        let ind = if c == b'[' {
            p.i += 1;
            let (_, v) = p.number()?;
            if !p.eat(b']') {
                return Err(fe_err(ErrorCode::ArrayNoClose, p.i));
            }
            let _ = write!(text, "[{}]", v);
            Ind::Idx(v)
        } else if c == b'+' {
            p.i += 1;
            let (_, v) = p.number()?;
            let _ = write!(text, "+{}", v);
            Ind::Off(v)
        } else {
            return Ok(n);
        };
        match out.get_mut(n) {
            Some(s) => *s = (col, ind),
            None => return Err(fe_err(ErrorCode::TooManyOps, col)),
        }
        n += 1;
    }
}

struct Builder<'d> {
    def: &'d mut Definition,
    exit: bool,
}

impl Builder<'_> {
    fn add(
        &mut self,
        name: &[u8],
        name_col: usize,
        ty: Ty,
        prog: Program,
        text: &str,
    ) -> Result<(), ParseError> {
        if is_reserved_field(name, Fields::Function) {
            return Err(fe_err(ErrorCode::UsedArgName, name_col));
        }
        let mut a = ProbeArg::new();
        if a.name.set(text::as_str(name)).is_err() || name.len() > crate::lang::MAX_ARG_NAME_LEN {
            return Err(fe_err(ErrorCode::ArgNameTooLong, name_col));
        }
        let _ = a.text.set(
            text.get(..text.len().min(crate::lang::MAX_ARGSTR_LEN))
                .unwrap_or(""),
        );
        a.ty = ty.t;
        a.count = u8::try_from(ty.count).unwrap_or(0);
        a.fixed_string = ty.count > 0 && matches!(ty.t, FetchType::CChar | FetchType::UChar);
        a.prog = prog;
        a.offset = self.def.size;
        let size = a.size();
        let n = self.def.nargs;
        if n >= MAX_TRACE_ARGS {
            return Err(fe_err(ErrorCode::TooManyArgs, name_col));
        }
        let new_size = self.def.size.saturating_add(size);
        if new_size > MAX_PROBE_EVENT_SIZE {
            return Err(fe_err(ErrorCode::EventTooBig, name_col));
        }
        match self.def.arg_mut(n) {
            Some(s) => *s = a,
            None => return Err(fe_err(ErrorCode::TooManyArgs, name_col)),
        }
        self.def.size = new_size;
        self.def.nargs = n + 1;
        Ok(())
    }

    fn param_load(&mut self, slot: u32, col: usize) -> Result<Load, ParseError> {
        if !self.exit {
            return Ok(Load::Arg(slot));
        }
        let a = u16::try_from(slot).map_err(|_| fe_err(ErrorCode::TooManyArgs, col))?;
        if let Some(p) = self.def.entry_args().iter().position(|&x| x == a) {
            return Ok(Load::EntryData(p as u32));
        }
        let n = self.def.n_entry;
        if n.saturating_mul(8) >= crate::lang::MAX_FPROBE_DATA_SIZE {
            return Err(fe_err(ErrorCode::TooManyEargs, col));
        }
        match self.def.entry_args.get_mut(n) {
            Some(s) => *s = a,
            None => return Err(fe_err(ErrorCode::TooManyEargs, col)),
        }
        self.def.n_entry = n + 1;
        Ok(Load::EntryData(n as u32))
    }
}

/// Is `name` the BTF name of a parameter of `func` other than parameter
/// `slot`? Arguments are positional, so `vfs_read(x64 file, u64 count)`
/// records the buffer pointer as `count`: a mistake easy to make and to
/// miss in the trace. Without BTF for the function nothing is checked.
/// One-letter names are labels (`f(x64 a, x64 b)` over many functions),
/// which meet one-letter parameters by chance: they are not checked.
fn param_elsewhere<R: Resolver>(r: &R, func: &[u8], name: &[u8], slot: u32) -> bool {
    if name.len() < 2 {
        return false;
    }
    let func = text::as_str(func);
    let Some(f) = r.btf_func(func) else {
        return false;
    };
    (0..f.nr_params.min(u32::from(u16::MAX))).any(|i| {
        i != slot
            && r.btf_param(func, i)
                .is_some_and(|(n, _)| n.as_bytes() == name)
    })
}

fn is_name(w: &[u8]) -> bool {
    text::is_good_name(w)
}

/// Parse a `function_events` line (comment already removed).
pub(crate) fn parse<'l, R: Resolver>(
    line: &'l [u8],
    r: &R,
    out: &mut Definition,
) -> Result<Command<'l>, ParseError> {
    let mut p = P { s: line, i: 0 };
    let c = p.peek();
    if c == 0 {
        return Ok(Command::Nothing);
    }
    if c == b'-' || c == b'!' {
        let mut w = crate::lang::parse::Words::new(line);
        let a0 = w.next().unwrap_or(&[]);
        let ev = if at(a0, 1) == b':' {
            text::tail(a0, 2)
        } else {
            text::tail(a0, 1)
        };
        let (group, event) = match text::find(ev, b'/') {
            Some(s) => (Some(text::head(ev, s)), text::tail(ev, s + 1)),
            None => (None, ev),
        };
        if group.is_none() && event.is_empty() {
            return Err(fe_err(ErrorCode::NoEventName, p.i + 1));
        }
        let bad = || fe_err(ErrorCode::BadEventName, 0);
        let group = match group {
            Some(g) => Some(core::str::from_utf8(g).map_err(|_| bad())?),
            None => None,
        };
        let event = core::str::from_utf8(event).map_err(|_| bad())?;
        let start = p.i.saturating_add(a0.len());
        return Ok(Command::Remove {
            group,
            event,
            args: text::tail(line, start),
            kprobes_only: false,
        });
    }

    // FUNCTION
    p.ws();
    let fst = p.i;
    while p.i < line.len() && (is_alnum(at(line, p.i)) || matches!(at(line, p.i), b'_' | b'.')) {
        p.i += 1;
    }
    let func = text::mid(line, fst, p.i);
    if func.is_empty() || !(is_alpha(at(func, 0)) || at(func, 0) == b'_') {
        return Err(fe_err(ErrorCode::FeBadFunc, fst));
    }
    if out.symbol.set(text::as_str(func)).is_err() {
        return Err(fe_err(ErrorCode::FeBadFunc, fst));
    }
    out.has_symbol = true;
    if !p.eat(b'(') {
        return Err(fe_err(ErrorCode::FeNoOpenParen, p.i));
    }
    // Is there an exit part? Look for "->" after the closing parenthesis.
    let close = text::rfind(line, b')');
    let exit = match close {
        Some(c) => {
            let rest = text::tail(line, c + 1);
            let k = rest.iter().position(|&b| !is_space(b));
            k.map(|k| text::tail(rest, k).starts_with(b"->"))
                .unwrap_or(false)
        }
        None => false,
    };
    out.kind = if exit {
        ProbeKind::FunctionExit
    } else {
        ProbeKind::FunctionEntry
    };
    let _ = out.group.set("functions");
    // The name starts with a letter or '_', which the kernel's sanitizing
    // leaves alone.
    text::set_default_event_name(
        &mut out.event,
        format_args!("{}{}", text::as_str(func), if exit { "__exit" } else { "" }),
    );
    out.fe_text.clear();
    let _ = write!(out.fe_text, "{}(", text::as_str(func));

    let mut b = Builder { def: out, exit };
    let mut slot: u32 = 0;
    let mut first_arg = true;
    if p.peek() != b')' {
        loop {
            if !first_arg {
                let _ = b.def.fe_text.push(", ");
            }
            first_arg = false;
            // One ARG: NULL or alternatives separated by '|'.
            let save = p.i;
            let (wst, w) = p.word();
            if w == b"NULL" {
                let _ = b.def.fe_text.push("NULL");
                slot = slot
                    .checked_add(1)
                    .ok_or_else(|| fe_err(ErrorCode::TooManyArgs, wst))?;
            } else {
                p.i = save;
                let mut uses_slot = false;
                let mut first_alt = true;
                loop {
                    if !first_alt {
                        let _ = b.def.fe_text.push(" | ");
                    }
                    first_alt = false;
                    let ty = parse_type(&mut p)?;
                    let _ = write_type(&mut b.def.fe_text, ty);
                    let _ = b.def.fe_text.push(" ");
                    p.ws();
                    let nst = p.i;
                    let c0 = at(line, p.i);
                    let mut piece: Str<128> = Str::new();
                    let _ = write_type(&mut piece, ty);
                    let _ = piece.push(" ");
                    if is_digit(c0) {
                        // TYPE ADDR
                        let addr = p.address()?;
                        let mut nm: Str<32> = Str::new();
                        let _ = write!(nm, "addr_{:x}", addr);
                        let _ = write!(b.def.fe_text, "0x{:x}", addr);
                        let _ = write!(piece, "0x{:x}", addr);
                        let prog = compile(Load::Imm(addr), ty, &[], nst)?;
                        b.add(nm.as_bytes(), nst, ty, prog, piece.as_str())?;
                    } else {
                        let (nst, name) = p.word();
                        if name.is_empty() {
                            return Err(fe_err(ErrorCode::FeNoField, nst));
                        }
                        if !is_name(name) {
                            return Err(fe_err(ErrorCode::BadArgName, nst));
                        }
                        let _ = b.def.fe_text.push(text::as_str(name));
                        let _ = piece.push(text::as_str(name));
                        if p.peek() == b'=' {
                            p.i += 1;
                            p.ws();
                            let ast = p.i;
                            let addr = p.address()?;
                            let _ = write!(b.def.fe_text, "=0x{:x}", addr);
                            let _ = write!(piece, "=0x{:x}", addr);
                            let prog = compile(Load::Imm(addr), ty, &[], ast)?;
                            b.add(name, nst, ty, prog, piece.as_str())?;
                        } else {
                            let mut inds = [(0usize, Ind::Off(0)); 32];
                            let mut itext: Str<128> = Str::new();
                            let ni = parse_inds(&mut p, &mut inds, &mut itext)?;
                            let _ = b.def.fe_text.push(itext.as_str());
                            let _ = piece.push(itext.as_str());
                            uses_slot = true;
                            if param_elsewhere(r, func, name, slot) {
                                return Err(fe_err(ErrorCode::FeParamElsewhere, nst));
                            }
                            let load = b.param_load(slot, nst)?;
                            let prog = compile(load, ty, text::head(&inds, ni), nst)?;
                            b.add(name, nst, ty, prog, piece.as_str())?;
                        }
                    }
                    if !p.eat(b'|') {
                        break;
                    }
                }
                if uses_slot {
                    slot = slot
                        .checked_add(1)
                        .ok_or_else(|| fe_err(ErrorCode::TooManyArgs, save))?;
                }
            }
            if p.eat(b',') {
                continue;
            }
            break;
        }
    }
    if !p.eat(b')') {
        let c = p.peek();
        let code = if c == 0 {
            ErrorCode::FeNoCloseParen
        } else {
            ErrorCode::FeTrailing
        };
        return Err(fe_err(code, p.i));
    }
    let _ = b.def.fe_text.push(")");
    if exit {
        p.ws();
        p.i = p.i.saturating_add(2); // "->"
        let ty = parse_type(&mut p)?;
        let (nst, name) = p.word();
        if name.is_empty() {
            return Err(fe_err(ErrorCode::FeNoField, nst));
        }
        if !is_name(name) {
            return Err(fe_err(ErrorCode::BadArgName, nst));
        }
        let mut piece: Str<128> = Str::new();
        let _ = write_type(&mut piece, ty);
        let _ = write!(piece, " {}", text::as_str(name));
        let mut inds = [(0usize, Ind::Off(0)); 32];
        let ni = parse_inds(&mut p, &mut inds, &mut piece)?;
        let _ = write!(b.def.fe_text, " -> {}", piece.as_str());
        let prog = compile(Load::RetVal, ty, text::head(&inds, ni), nst)?;
        b.add(name, nst, ty, prog, piece.as_str())?;
    }
    if p.peek() != 0 {
        return Err(fe_err(ErrorCode::FeTrailing, p.i));
    }
    if r.function_exists(None, text::as_str(func)) == Some(false) {
        return Err(fe_err(ErrorCode::BadProbeAddr, fst));
    }
    Ok(Command::Define)
}
