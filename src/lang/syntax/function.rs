// SPDX-License-Identifier: GPL-2.0
//! The function event syntax: a `function_events` line, read with the
//! lexer's cursor and handed to the function event compiler
//! ([`crate::lang::funcev_compile`]).
//!
//! ```text
//! LINE     := FUNCTION '(' ARGS ')' [ '->' TYPE NAME INDIRECT | '->' RETURN ]
//! ARGS     := '' | ARG | ARG ',' ARGS
//! ARG      := 'NULL' | ALT | ALT '|' ARG | NAMED | '...'
//! ALT      := TYPE FIELD | TYPE NAME '=' ADDR | TYPE ADDR
//! TYPE     := ['unsigned'] ATOM ['[' N ']']
//! FIELD    := NAME INDIRECT
//! INDIRECT := { '[' N ']' | '+' N }
//! NAMED    := a fetch argument as fprobes take it, one word:
//!             [NAME '='] PARAM { '->' MEMBER | '.' MEMBER } [':' TYPE] ...
//! RETURN   := NAME [':' TYPE]
//! ```
//!
//! The first lines are the 2018 grammar. The `->` part is dynprobe's exit
//! event: it creates `functions/FUNC__exit` recording the listed entry
//! arguments and the return value. `NAMED`, `...` and `RETURN` are
//! dynprobe's BTF forms ([`named_arg_at`] tells them from the 2018 ones):
//! parameters by name with their BTF types, every parameter, the return
//! value with its BTF type.

use core::fmt::Write;

use crate::lang::def::Definition;
use crate::lang::error::{errno, function_error, ErrorCode, ParseError, Subsystem};
use crate::lang::fetch::{self, AErr, Ctx, Flags};
use crate::lang::funcev_compile::{compile, Builder, Ind, Ty};
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::Cursor;
use crate::lang::resolver::{Copies, Resolver, UserFile};
use crate::lang::syntax::uprobe::{refusal, Blame};
use crate::lang::text::{self, at, head, is_alnum, is_alpha, is_digit, is_space, tail, Str};
use crate::lang::text::{is_reserved_field, Fields};
use crate::lang::types::{FetchType, Load};
use crate::lang::MAX_ARRAY_LEN;

/// Appends to a function event's listed text: refused with `EventTooBig`
/// at `col` when it does not fit ([`append`]).
macro_rules! listed {
    ($text:expr, $col:expr, $($fmt:tt)*) => {
        append(&mut $text, ErrorCode::EventTooBig, $col, format_args!($($fmt)*))
    };
}

/// Appends to one argument's text: refused with `ArgTooLong` at `col`
/// when it does not fit ([`append`]).
macro_rules! arg_text {
    ($text:expr, $col:expr, $($fmt:tt)*) => {
        append(&mut $text, ErrorCode::ArgTooLong, $col, format_args!($($fmt)*))
    };
}

/// Appends to a text of bounded capacity: the definition's listed text
/// (refused with `EventTooBig` when it does not fit) or one argument's
/// (`ArgTooLong`). A definition is refused, with the caret at `col`, rather
/// than listed cut short: the listing grows past the line (offsets in
/// decimal, a space after each comma), so the line's own limit does not
/// bound it.
fn append<W: Write>(
    w: &mut W,
    code: ErrorCode,
    col: usize,
    args: core::fmt::Arguments<'_>,
) -> Result<(), ParseError> {
    w.write_fmt(args).map_err(|_| function_error(code, col))
}

/// An integer as `kstrtol()` accepts it (with an optional sign).
fn number(p: &mut Cursor<'_>) -> Result<(usize, i64), ParseError> {
    let (start, t) = p.number();
    match text::kstrtoll(t, 0) {
        Some(v) => Ok((start, v)),
        None => Err(function_error(ErrorCode::FeBadIndex, start)),
    }
}

/// A kernel address (`0x...`, unsigned 64-bit).
fn address(p: &mut Cursor<'_>) -> Result<u64, ParseError> {
    p.skip_space();
    let (start, t) = p.take_while(is_alnum);
    let hex = t.len() > 2 && at(t, 0) == b'0' && at(t, 1).eq_ignore_ascii_case(&b'x');
    match text::kstrtoull(t, 0) {
        Some(v) if hex => Ok(v),
        _ => Err(function_error(ErrorCode::BadMemAddr, start)),
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

fn parse_type(p: &mut Cursor<'_>) -> Result<Ty, ParseError> {
    let (st, w) = p.word();
    if w.is_empty() {
        return Err(function_error(ErrorCode::BadType, st));
    }
    let t = if w == b"unsigned" {
        let (st2, w2) = p.word();
        match w2 {
            b"char" => FetchType::UChar,
            b"short" => FetchType::UShort,
            b"int" => FetchType::UInt,
            b"long" => FetchType::ULong,
            _ => return Err(function_error(ErrorCode::FeBadUnsigned, st2)),
        }
    } else {
        match atom(w) {
            Some(t) => t,
            None => return Err(function_error(ErrorCode::BadType, st)),
        }
    };
    let mut count = 0u32;
    if p.peek() == b'[' {
        let lb = p.pos;
        p.pos += 1;
        let (nst, n) = number(p)?;
        if !p.eat(b']') {
            return Err(function_error(ErrorCode::ArrayNoClose, p.pos));
        }
        if t == FetchType::String {
            return Err(function_error(ErrorCode::BadString, lb));
        }
        if n <= 0 {
            return Err(function_error(ErrorCode::BadArrayNum, nst));
        }
        if n > i64::from(MAX_ARRAY_LEN) {
            return Err(function_error(ErrorCode::ArrayTooBig, nst));
        }
        count = n as u32;
    }
    Ok(Ty { t, count })
}

/// A type as a definition is listed with it: `u8`, `x64[6]`.
struct TypeText(Ty);

impl core::fmt::Display for TypeText {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0.t.name())?;
        if self.0.count > 0 {
            write!(f, "[{}]", self.0.count)?;
        }
        Ok(())
    }
}

fn parse_inds<W: Write>(
    p: &mut Cursor<'_>,
    out: &mut [(usize, Ind); 32],
    text: &mut W,
    arg_col: usize,
) -> Result<usize, ParseError> {
    let mut n = 0usize;
    loop {
        let c = p.peek();
        let col = p.pos;
        let ind = if c == b'[' {
            p.pos += 1;
            let (_, v) = number(p)?;
            if !p.eat(b']') {
                return Err(function_error(ErrorCode::ArrayNoClose, p.pos));
            }
            arg_text!(*text, arg_col, "[{}]", v)?;
            Ind::Idx(v)
        } else if c == b'+' {
            p.pos += 1;
            let (_, v) = number(p)?;
            arg_text!(*text, arg_col, "+{}", v)?;
            Ind::Off(v)
        } else {
            return Ok(n);
        };
        match out.get_mut(n) {
            Some(s) => *s = (col, ind),
            None => return Err(function_error(ErrorCode::TooManyOps, col)),
        }
        n += 1;
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

/// Does a named argument (dynprobe's BTF form) start at `pos`, rather than
/// one of the 2018 grammar? Every 2018 argument is `NULL`, or a type
/// followed by a space (or `[`) and a field or address, so an argument is
/// named when it is `...`, or one word that is not a type word (a type
/// word followed by `=`, `-`, `.` or `:` is a parameter's name). Lines the
/// 2018 grammar accepts keep their meaning; a word followed by a second
/// word stays in it (`x86 dev` is a bad type, as before).
fn named_arg_at(line: &[u8], pos: usize) -> bool {
    let rest = tail(line, pos);
    if rest.starts_with(b"...") {
        return true;
    }
    let wlen = rest
        .iter()
        .position(|&c| !(is_alnum(c) || c == b'_'))
        .unwrap_or(rest.len());
    let word = head(rest, wlen);
    let next = at(rest, wlen);
    if word == b"NULL" || word == b"unsigned" || atom(word).is_some() {
        return matches!(next, b'=' | b'-' | b'.' | b':');
    }
    if word.is_empty() {
        return !matches!(next, 0 | b',' | b')');
    }
    if next == b'[' {
        return false;
    }
    let after = tail(rest, wlen);
    let spaces = after
        .iter()
        .position(|&c| !is_space(c))
        .unwrap_or(after.len());
    let second = at(after, spaces);
    !(spaces > 0 && (is_alnum(second) || second == b'_'))
}

/// The end of the named argument starting at `p.pos`: at the `,` or `)`
/// outside parentheses that ends it. A fetch argument is one word: a
/// space followed by anything else is refused there.
fn named_arg_end(p: &mut Cursor<'_>) -> Result<usize, ParseError> {
    let start = p.pos;
    let end = named_arg_scan(p)?;
    // Fetch arguments are text: bytes that are not UTF-8 could not be
    // listed back.
    if core::str::from_utf8(text::mid(p.text(), start, end)).is_err() {
        return Err(function_error(ErrorCode::BadFetchArg, start));
    }
    Ok(end)
}

/// [`named_arg_end`]'s scan.
fn named_arg_scan(p: &mut Cursor<'_>) -> Result<usize, ParseError> {
    let mut depth = 0usize;
    loop {
        let c = p.byte();
        match c {
            0 => return Ok(p.pos),
            b'(' => depth = depth.saturating_add(1),
            b')' if depth == 0 => return Ok(p.pos),
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => return Ok(p.pos),
            c if is_space(c) => {
                let end = p.pos;
                p.skip_space();
                return match p.byte() {
                    // A fetch argument closes what it opens.
                    0 | b',' | b')' if depth > 0 => {
                        Err(function_error(ErrorCode::BadFetchArg, end))
                    }
                    0 | b',' | b')' => Ok(end),
                    _ => Err(function_error(ErrorCode::FeSpaceInArg, end)),
                };
            }
            _ => {}
        }
        p.pos = p.pos.saturating_add(1);
    }
}

/// A fetch argument's error as a function event's, its caret at `col`
/// plus the offset within the argument.
fn arg_error(e: AErr, col: usize) -> ParseError {
    ParseError {
        code: e.code,
        column: col.saturating_add(e.offset),
        errno: e.errno,
        subsystem: Subsystem::Function,
        logged: e.logged,
    }
}

/// The name a named argument records under when it gives none: the
/// parameter's (`count`), or for members the last one's (`f_mode` for
/// `file->f_mode`, where the kernel's fprobes say `argN`: a function
/// event has no positions to number).
fn default_name(arg: &[u8]) -> Option<&[u8]> {
    if text::find(arg, b'=').is_some() {
        return None;
    }
    let expr = head(arg, text::find(arg, b':').unwrap_or(arg.len()));
    if text::is_good_name(expr) {
        return None;
    }
    let start = expr
        .iter()
        .rposition(|&c| c == b'>' || c == b'.')
        .map_or(0, |p| p.saturating_add(1));
    let leaf = tail(expr, start);
    (start > 0 && text::is_good_name(leaf)).then_some(leaf)
}

/// N of an argument that is `$argN[:TYPE]` and nothing more.
fn arg_number(arg: &[u8]) -> Option<u32> {
    let rest = arg.strip_prefix(b"$arg")?;
    let digits = rest.iter().take_while(|&&c| is_digit(c)).count();
    if digits == 0 || !matches!(at(rest, digits), 0 | b':') {
        return None;
    }
    text::kstrtouint(head(rest, digits), 10)
}

/// Compiles a named argument (`arg`, written at `col`) with the fetch
/// argument compiler, as the next argument of `def`: its BTF type unless
/// one is given, its name `NAME=`'s or [`default_name`]. The function
/// event's own fields (`__ip`, `__parent_ip`) are not names it may take.
fn add_named<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    arg: &[u8],
    col: usize,
) -> Result<(), ParseError> {
    let i = def.nargs;
    if i >= crate::lang::MAX_TRACE_ARGS {
        return Err(function_error(ErrorCode::TooManyArgs, col));
    }
    let mut named: Str<{ crate::lang::MAX_ARGSTR_CAP + crate::lang::MAX_EVENT_NAME_LEN + 2 }> =
        Str::new();
    let (fetcharg, shift) = if let Some(n) = arg_number(arg) {
        // `$argN` records under the parameter's BTF name, as `$argN` on an
        // fprobe does, or as `argN` with the N written.
        let btf_name = n.checked_sub(1).and_then(|i| ctx.btf_param(i)).map(|p| p.0);
        match btf_name {
            Some(name) => arg_text!(named, col, "{}={}", name, text::as_str(arg))?,
            None => arg_text!(named, col, "arg{}={}", n, text::as_str(arg))?,
        }
        let shift = named.len().saturating_sub(arg.len());
        (named.as_bytes(), shift)
    } else {
        match default_name(arg) {
            Some(leaf) => {
                arg_text!(named, col, "{}={}", text::as_str(leaf), text::as_str(arg))?;
                (named.as_bytes(), leaf.len().saturating_add(1))
            }
            None => (arg, 0),
        }
    };
    ctx.offset = 0;
    fetch::parse_probe_arg(ctx, def, i, fetcharg).map_err(|e| {
        let offset = e.offset.saturating_sub(shift);
        arg_error(AErr { offset, ..e }, col)
    })?;
    let reserved = def
        .args()
        .get(i)
        .is_some_and(|a| is_reserved_field(a.name().as_bytes(), Fields::Function));
    if reserved {
        def.nargs = i;
        return Err(function_error(ErrorCode::UsedArgName, col));
    }
    Ok(())
}

/// `...`: every parameter of the function, by its BTF name and type.
fn add_all_params<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    col: usize,
) -> Result<(), ParseError> {
    let nr = match ctx.query_btf() {
        Some(f) if f.nr_params > 0 => f.nr_params,
        _ => {
            return Err(ParseError {
                errno: errno::EOPNOTSUPP,
                ..function_error(ErrorCode::NosupBtfarg, col)
            })
        }
    };
    for n in 0..nr {
        let Some((name, _)) = ctx.btf_param(n) else {
            return Err(ParseError {
                errno: errno::ENOENT,
                ..function_error(ErrorCode::NoBtfEntry, col)
            });
        };
        // The column stays at `...`: the text is not the line's.
        let e = add_named(ctx, def, name.as_bytes(), col);
        e.map_err(|e| ParseError { column: col, ..e })?;
    }
    Ok(())
}

/// Parse a `function_events` definition: a line that is not blank,
/// comment or removal (those are the caller's), comment removed.
pub(crate) fn parse<R: Resolver>(
    line: &[u8],
    r: &R,
    out: &mut Definition,
) -> Result<(), ParseError> {
    let mut p = Cursor::new(line);
    // FUNCTION
    p.skip_space();
    let start = p.pos;
    // `PATH:FUNCTION`: a function of a user-space file (dynprobe's).
    let user_path = user_path_at(line, &mut p)?;
    let (fst, mut func) = p.take_while(|c| is_alnum(c) || matches!(c, b'_' | b'.'));
    // `MOD:FUNCTION`: that module's function (dynprobe's; the event is
    // still `functions/FUNCTION`).
    let mut module: &[u8] = &[];
    if user_path.is_none() && p.byte() == b':' {
        p.pos += 1;
        module = func;
        let (nst, name) = p.take_while(|c| is_alnum(c) || matches!(c, b'_' | b'.'));
        if module.is_empty() {
            return Err(function_error(ErrorCode::FeBadFunc, fst));
        }
        if name.is_empty() {
            return Err(function_error(ErrorCode::FeBadFunc, nst));
        }
        func = name;
    }
    if func.is_empty() || !(is_alpha(at(func, 0)) || at(func, 0) == b'_') {
        return Err(function_error(ErrorCode::FeBadFunc, fst));
    }
    let place = text::mid(line, start, p.pos);
    // A user function's probe is on its file, which the symbol names.
    if out
        .symbol
        .set(text::as_str(user_path.unwrap_or(place)))
        .is_err()
    {
        return Err(function_error(ErrorCode::FeBadFunc, fst));
    }
    out.has_symbol = true;
    if !p.eat(b'(') {
        return Err(function_error(ErrorCode::FeNoOpenParen, p.pos));
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
    out.kind = match (user_path.is_some(), exit) {
        (false, false) => ProbeKind::FunctionEntry,
        (false, true) => ProbeKind::FunctionExit,
        (true, false) => ProbeKind::UserFunctionEntry,
        (true, true) => ProbeKind::UserFunctionExit,
    };
    out.group.set_truncated("functions");
    // The name starts with a letter or '_', which the kernel's sanitizing
    // leaves alone.
    text::set_default_event_name(
        &mut out.event,
        format_args!("{}{}", text::as_str(func), if exit { "__exit" } else { "" }),
    );
    out.fe_text.clear();
    listed!(out.fe_text, fst, "{}(", text::as_str(place))?;

    // Where the compiler kept only its copies of the function
    // (`NAME.isra.0`), the one copy is the place; the event keeps the
    // name as written, and BTF (the copy has none) names no parameter.
    // A missing function is refused after the arguments, whose errors
    // come first.
    let mut copy: Str<{ crate::lang::SYMBOL_CAP }> = Str::new();
    let mut missing = None;
    if let Some(path) = user_path {
        out.offset = user_function_offset(r, path, func, start, fst)?;
    } else if !module.is_empty() {
        // No BTF is asked about it: BTF finds a function by its name
        // alone, which may be another module's.
        if r.function_exists(Some(text::as_str(module)), text::as_str(func)) == Some(false) {
            missing = Some(ErrorCode::BadProbeAddr);
        }
    } else if r.function_exists(None, text::as_str(func)) == Some(false) {
        match r.entry_copies(None, text::as_str(func), &mut copy) {
            Copies::One => {
                if out.symbol.set(copy.as_str()).is_err() {
                    return Err(function_error(ErrorCode::FeBadFunc, fst));
                }
            }
            Copies::Several => missing = Some(ErrorCode::SeveralCopies),
            Copies::None => missing = Some(ErrorCode::BadProbeAddr),
        }
    }
    let func_name = if !module.is_empty() {
        text::as_str(place)
    } else if copy.is_empty() {
        text::as_str(func)
    } else {
        copy.as_str()
    };
    // Named arguments are fetch arguments of an fprobe on the function.
    let user = user_path.is_some();
    let flags = Flags {
        ret: exit,
        fentry: !exit && !user,
        fprobe: !user,
        tpoint: false,
        tevent: false,
        wprobe: false,
        user,
    };
    let mut ctx = Ctx::new(r, flags, Some(func_name));
    // Where the first named argument that reads a symbol (`@SYM`) is:
    // symbols are resolved once all arguments are read.
    let mut symbol_col = None;
    let mut all_params = false;
    let mut b = Builder::new(out, exit);
    let mut slot: u32 = 0;
    let mut first_arg = true;
    if p.peek() != b')' {
        loop {
            if !first_arg {
                listed!(b.def.fe_text, p.pos, ", ")?;
            }
            first_arg = false;
            p.skip_space();
            if named_arg_at(line, p.pos) {
                // Named arguments take no position: the 2018 ones around
                // them count parameters as if they were not there.
                let ast = p.pos;
                if user {
                    return Err(user_refusal(ErrorCode::UserFuncNamedArg, ast));
                }
                let end = named_arg_end(&mut p)?;
                let arg = text::mid(line, ast, end);
                listed!(b.def.fe_text, ast, "{}", text::as_str(arg))?;
                if arg == b"..." {
                    if all_params {
                        return Err(function_error(ErrorCode::FeAllTwice, ast));
                    }
                    all_params = true;
                    add_all_params(&mut ctx, b.def, ast)?;
                } else {
                    if symbol_col.is_none() && text::find(arg, b'@').is_some() {
                        symbol_col = Some(ast);
                    }
                    add_named(&mut ctx, b.def, arg, ast)?;
                }
                if p.eat(b',') {
                    continue;
                }
                break;
            }
            // One ARG: NULL or alternatives separated by '|'.
            let save = p.pos;
            let (wst, w) = p.word();
            if w == b"NULL" {
                listed!(b.def.fe_text, wst, "NULL")?;
                slot = slot
                    .checked_add(1)
                    .ok_or_else(|| function_error(ErrorCode::TooManyArgs, wst))?;
            } else {
                p.pos = save;
                let mut uses_slot = false;
                let mut first_alt = true;
                loop {
                    if !first_alt {
                        listed!(b.def.fe_text, p.pos, " | ")?;
                    }
                    first_alt = false;
                    p.skip_space();
                    let tst = p.pos;
                    let ty = parse_type(&mut p)?;
                    listed!(b.def.fe_text, tst, "{} ", TypeText(ty))?;
                    p.skip_space();
                    let nst = p.pos;
                    let c0 = p.byte();
                    let mut piece: Str<128> = Str::new();
                    arg_text!(piece, nst, "{} ", TypeText(ty))?;
                    if is_digit(c0) {
                        // TYPE ADDR
                        let addr = address(&mut p)?;
                        let mut nm: Str<32> = Str::new();
                        arg_text!(nm, nst, "addr_{:x}", addr)?;
                        listed!(b.def.fe_text, nst, "0x{:x}", addr)?;
                        arg_text!(piece, nst, "0x{:x}", addr)?;
                        let prog = compile(Load::Imm(addr), ty, &[])?;
                        b.add(nm.as_bytes(), nst, ty, prog, piece.as_str())?;
                    } else {
                        let (nst, name) = p.word();
                        if name.is_empty() {
                            return Err(function_error(ErrorCode::FeNoField, nst));
                        }
                        if !text::is_good_name(name) {
                            return Err(function_error(ErrorCode::BadArgName, nst));
                        }
                        let name_text = text::as_str(name);
                        listed!(b.def.fe_text, nst, "{}", name_text)?;
                        arg_text!(piece, nst, "{}", name_text)?;
                        if p.peek() == b'=' {
                            p.pos += 1;
                            let addr = address(&mut p)?;
                            listed!(b.def.fe_text, nst, "=0x{:x}", addr)?;
                            arg_text!(piece, nst, "=0x{:x}", addr)?;
                            let prog = compile(Load::Imm(addr), ty, &[])?;
                            b.add(name, nst, ty, prog, piece.as_str())?;
                        } else {
                            let mut inds = [(0usize, Ind::Off(0)); 32];
                            let mut itext: Str<128> = Str::new();
                            let ni = parse_inds(&mut p, &mut inds, &mut itext, nst)?;
                            listed!(b.def.fe_text, nst, "{}", itext)?;
                            arg_text!(piece, nst, "{}", itext)?;
                            uses_slot = true;
                            if user {
                                user_param(slot, nst)?;
                            } else if param_elsewhere(r, func_name.as_bytes(), name, slot) {
                                return Err(function_error(ErrorCode::FeParamElsewhere, nst));
                            }
                            let load = b.param_load(slot, nst)?;
                            let prog = compile(load, ty, text::head(&inds, ni))?;
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
                        .ok_or_else(|| function_error(ErrorCode::TooManyArgs, save))?;
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
        return Err(function_error(code, p.pos));
    }
    listed!(b.def.fe_text, p.pos, ")")?;
    if exit {
        p.skip_space();
        p.pos = p.pos.saturating_add(2); // "->"
        p.skip_space();
        if user && named_arg_at(line, p.pos) {
            return Err(user_refusal(ErrorCode::UserFuncNamedArg, p.pos));
        }
        if named_arg_at(line, p.pos) {
            // `-> NAME[:TYPE]`: the return value, typed from BTF unless a
            // type is given, compiled as `NAME=$retval[:TYPE]`.
            let nst = p.pos;
            let end = named_arg_end(&mut p)?;
            let arg = text::mid(line, nst, end);
            let name_len = arg.iter().position(|&c| c == b':').unwrap_or(arg.len());
            let name = head(arg, name_len);
            if name.is_empty() {
                return Err(function_error(ErrorCode::FeNoField, nst));
            }
            if !text::is_good_name(name) {
                return Err(function_error(ErrorCode::BadArgName, nst));
            }
            listed!(b.def.fe_text, nst, " -> {}", text::as_str(arg))?;
            const RETVAL: &str = "=$retval";
            let mut fetcharg: Str<{ crate::lang::MAX_ARGSTR_CAP + 48 }> = Str::new();
            arg_text!(
                fetcharg,
                nst,
                "{}{}{}",
                text::as_str(name),
                RETVAL,
                text::as_str(tail(arg, name_len))
            )?;
            let i = b.def.nargs;
            ctx.offset = 0;
            fetch::parse_probe_arg(&mut ctx, b.def, i, fetcharg.as_bytes()).map_err(|e| {
                // Offsets past the name are in the `:TYPE` part, which
                // `=$retval` moved.
                let offset = if e.offset > name_len {
                    e.offset.saturating_sub(RETVAL.len()).max(name_len)
                } else {
                    e.offset
                };
                arg_error(AErr { offset, ..e }, nst)
            })?;
            let reserved = is_reserved_field(name, Fields::Function);
            if reserved {
                b.def.nargs = i;
                return Err(function_error(ErrorCode::UsedArgName, nst));
            }
        } else {
            parse_exit_2018(&mut p, &mut b)?;
        }
    }
    if p.peek() != 0 {
        return Err(function_error(ErrorCode::FeTrailing, p.pos));
    }
    if let Some(col) = symbol_col {
        match fetch::resolve_symbols(r, b.def) {
            Ok(true) => {}
            Ok(false) => {
                return Err(ParseError {
                    errno: errno::ENOENT,
                    ..function_error(ErrorCode::BadProbeAddr, col)
                })
            }
            Err(()) => return Err(function_error(ErrorCode::FailRegProbe, col)),
        }
    }
    match missing {
        Some(code) => Err(function_error(code, fst)),
        None => Ok(()),
    }
}

/// The file of `PATH:FUNCTION` at the cursor, which moves past its last
/// `:` before `(`; `None` (the cursor unmoved) for a kernel function,
/// whose place does not start with `/`.
fn user_path_at<'a>(line: &'a [u8], p: &mut Cursor<'a>) -> Result<Option<&'a [u8]>, ParseError> {
    let start = p.pos;
    if at(line, start) != b'/' {
        return Ok(None);
    }
    let rest = tail(line, start);
    let end = rest
        .iter()
        .position(|&c| c == b'(' || is_space(c))
        .unwrap_or(rest.len());
    let place = head(rest, end);
    let Some(colon) = text::rfind(place, b':') else {
        return Err(function_error(ErrorCode::FeBadFunc, start));
    };
    p.pos = start + colon + 1;
    Ok(Some(head(place, colon)))
}

/// The file offset of user function `func` (at column `fst`) of the file
/// `path` (at column `start`), with a uprobe line's refusals of the file
/// and the function.
fn user_function_offset<R: Resolver>(
    r: &R,
    path: &[u8],
    func: &[u8],
    start: usize,
    fst: usize,
) -> Result<u64, ParseError> {
    match r.user_file(path) {
        UserFile::Regular => {}
        UserFile::NotRegular => return Err(function_error(ErrorCode::NoRegularFile, start)),
        UserFile::Missing(e) => {
            return Err(ParseError {
                errno: e,
                ..function_error(ErrorCode::FileNotFound, start)
            })
        }
    }
    r.user_function(path, func, 0).map_err(|e| {
        let (code, blame, errno) = refusal(e);
        let column = match blame {
            Blame::Path => start,
            Blame::Name | Blame::Offset => fst,
        };
        ParseError {
            errno,
            ..function_error(code, column)
        }
    })
}

/// A refusal of what user functions do not take (`EOPNOTSUPP`).
fn user_refusal(code: ErrorCode, col: usize) -> ParseError {
    ParseError {
        errno: errno::EOPNOTSUPP,
        ..function_error(code, col)
    }
}

/// Checks the parameter `slot` of a user function: one of the six in
/// registers (the x86_64 SysV ABI: di, si, dx, cx, r8, r9). On an exit
/// it is saved at entry, as a uretprobe's `$argN`.
fn user_param(slot: u32, col: usize) -> Result<(), ParseError> {
    if slot >= 6 {
        return Err(ParseError {
            errno: errno::E2BIG,
            ..function_error(ErrorCode::UserFuncTooManyArgs, col)
        });
    }
    Ok(())
}

/// The 2018-style return value: `-> TYPE NAME INDIRECT`.
fn parse_exit_2018(p: &mut Cursor<'_>, b: &mut Builder<'_>) -> Result<(), ParseError> {
    let ty = parse_type(p)?;
    let (nst, name) = p.word();
    if name.is_empty() {
        return Err(function_error(ErrorCode::FeNoField, nst));
    }
    if !text::is_good_name(name) {
        return Err(function_error(ErrorCode::BadArgName, nst));
    }
    let mut piece: Str<128> = Str::new();
    arg_text!(piece, nst, "{} {}", TypeText(ty), text::as_str(name))?;
    let mut inds = [(0usize, Ind::Off(0)); 32];
    let ni = parse_inds(p, &mut inds, &mut piece, nst)?;
    listed!(b.def.fe_text, nst, " -> {}", piece)?;
    let prog = compile(Load::RetVal, ty, text::head(&inds, ni))?;
    b.add(name, nst, ty, prog, piece.as_str())
}
