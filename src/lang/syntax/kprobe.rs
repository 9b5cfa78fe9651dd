// SPDX-License-Identifier: GPL-2.0
//! `p` and `r` lines: kprobes and kretprobes (`__trace_kprobe_create()`).

use super::args::parse_args;
use super::{
    finish, lerr, parse_event_name, set_symbol, take_entry_copy, LResult, Outcome, NO_SUCH_SYMBOL,
};
use crate::lang::def::Definition;
use crate::lang::error::ErrorCode;
use crate::lang::fetch::{self, Ctx, Flags};
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::Words;
use crate::lang::resolver::{FuncEntry, Resolver, SymbolCheck};
use crate::lang::text::{self, at, find, head, is_digit, tail, Str};
use crate::lang::{KRETPROBE_MAXACTIVE_MAX, MAX_EVENT_NAME_LEN};

/// A probed name that is not UTF-8 (the kernel takes any bytes) can name
/// no symbol, but the kernel finds that out only where it looks the name
/// up; until then it parses on. For kprobes that is
/// `validate_probe_symbol()`, which refuses it unless it is `MOD:SYM` of
/// a module that is not loaded (a module name that is not UTF-8 is never
/// loaded).
pub(super) fn kprobe_name_pending<R: Resolver>(r: &R, name: &[u8]) -> bool {
    match find(name, b':') {
        None => false,
        Some(c) => match core::str::from_utf8(head(name, c)) {
            Ok("") | Err(_) => true,
            Ok(m) => matches!(
                r.check_probe_symbol(Some(m), NO_SUCH_SYMBOL),
                SymbolCheck::Ok
            ),
        },
    }
}

pub(super) fn create_kprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
    let mut words = Words::new(line);
    let argv0 = words.next().unwrap_or(&[]);
    let argv1 = match words.next() {
        Some(a) => a,
        None => return Ok(Outcome::Cancel),
    };
    let mut is_return = at(argv0, 0) == b'r';
    let ev_pos = find(tail(argv0, 1), b':').map(|p| p + 2);
    if is_digit(at(argv0, 1)) {
        if !is_return {
            return Err(lerr(0, ErrorCode::BadMaxactType, 1));
        }
        let len = match ev_pos {
            Some(e) => e - 2,
            None => argv0.len() - 1,
        };
        if len > MAX_EVENT_NAME_LEN - 1 {
            return Err(lerr(0, ErrorCode::BadMaxact, 1));
        }
        let m = match text::kstrtouint(text::mid(argv0, 1, 1 + len), 0) {
            Some(m) if m > 0 => m,
            _ => return Err(lerr(0, ErrorCode::BadMaxact, 1)),
        };
        if m > KRETPROBE_MAXACTIVE_MAX {
            return Err(lerr(0, ErrorCode::MaxactTooBig, 1));
        }
        out.maxactive = m;
    }
    let mut flags = Flags::default();
    let mut offset: u64 = 0;
    let mut not_utf8 = false;
    match text::kstrtoull(argv1, 0) {
        Some(addr) => {
            out.has_symbol = false;
            out.addr = addr;
            // The kernel lists the registered kprobe's address, hashed
            // (`0x%p`); an address kallsyms does not know is never
            // registered and keeps the written one.
            let placed = r.kprobe_address(addr);
            out.listed_addr = r.hash_pointer(placed.unwrap_or(addr)).unwrap_or(addr);
            if is_return && out.maxactive == 0 && placed.is_some() {
                out.maxactive = r.default_maxactive();
            }
        }
        None => {
            if find(argv1, b'/').is_some() && find(argv1, b':').is_some() {
                return Ok(Outcome::Cancel);
            }
            let mut sym = argv1;
            if let Some(p) = find(sym, b'%') {
                if tail(sym, p) == b"%return" {
                    sym = head(sym, p);
                    is_return = true;
                } else {
                    return Err(lerr(1, ErrorCode::BadAddrSuffix, p));
                }
            }
            let (name, off) = match fetch::split_symbol_offset(sym) {
                Some((n, o)) if (0..=i64::from(u32::MAX)).contains(&o) => (n, o as u64),
                _ => return Err(lerr(1, ErrorCode::BadProbeAddr, 0)),
            };
            offset = off;
            // A C symbol never starts with a digit; such a name would also
            // be listed back as an address.
            let plain_name = match find(name, b':') {
                Some(c) => tail(name, c + 1),
                None => name,
            };
            let not_utf8_pending =
                core::str::from_utf8(name).is_err() && kprobe_name_pending(r, name);
            if is_digit(at(plain_name, 0)) && !not_utf8_pending {
                return Err(lerr(1, ErrorCode::BadProbeAddr, 0));
            }
            if core::str::from_utf8(name).is_err() {
                if !kprobe_name_pending(r, name) {
                    return Err(lerr(1, ErrorCode::BadProbeAddr, 0));
                }
                // kprobe_on_func_entry() cannot place it (-ENOENT, deferred
                // to registration): neither an entry nor refused as a
                // return probe's place.
                not_utf8 = true;
                out.has_symbol = true;
                if is_return {
                    flags.ret = true;
                }
            } else {
                set_symbol(out, name, 1, true)?;
            }
        }
    }
    // The event is named after the place as written, also when the
    // place becomes a compiler copy of the function below.
    let written: Str<{ crate::lang::SYMBOL_CAP }> = out.symbol;
    if out.has_symbol && !not_utf8 {
        let mut maxactive = out.maxactive;
        let mut check = r.check_probe_symbol(out.module(), out.symbol().unwrap_or(""));
        // Where the compiler kept only its copies of the function
        // (`NAME.isra.0`), the one copy is the place, checked in turn.
        if check == SymbolCheck::NotFound && take_entry_copy(r, out, 1)? {
            check = r.check_probe_symbol(out.module(), out.symbol().unwrap_or(""));
        }
        let module = out.module();
        let plain = out.symbol().unwrap_or("");
        match check {
            SymbolCheck::Ok => {}
            SymbolCheck::NotUnique => return Err(lerr(1, ErrorCode::NonUniqSymbol, 0)),
            SymbolCheck::NotFound => return Err(lerr(1, ErrorCode::BadProbeAddr, 0)),
        }
        if is_return {
            flags.ret = true;
            // register_kretprobe() sets the default once the place
            // resolves; a symbol in a module that is not loaded (or
            // `:SYM`) does not, and is listed without it.
            if maxactive == 0
                && (module.is_none() || r.symbol_address(out.symbol.as_str()).is_some())
            {
                maxactive = r.default_maxactive();
            }
        }
        match r.func_entry(module, plain, offset) {
            FuncEntry::Entry => {
                if !is_return {
                    flags.fentry = true;
                }
            }
            FuncEntry::NotEntry => {
                // _kprobe_addr(): a place kallsyms does not know (past
                // the end of the text) is -ENOENT, left to registration;
                // only a known place off the entry is BAD_RETPROBE.
                let known = r
                    .symbol_address(out.symbol.as_str())
                    .is_none_or(|a| r.kprobe_address(a.wrapping_add(offset)).is_some());
                if is_return && known {
                    return Err(lerr(1, ErrorCode::BadRetprobe, 0));
                }
            }
            FuncEntry::Unknown => {}
        }
        out.maxactive = maxactive;
    }
    // An address probe's context has no return flag, even for `r`: the
    // kernel sets TPARG_FL_RETURN for a symbol's return probe only, so
    // BTF names and `$retval` are refused on address return probes.
    out.offset = offset;
    out.kind = if is_return {
        ProbeKind::Kretprobe
    } else {
        ProbeKind::Kprobe
    };
    if !is_return {
        out.maxactive = 0;
    }
    out.group.set_truncated("kprobes");
    let mut have_event = false;
    if let Some(e) = ev_pos {
        have_event = parse_event_name(tail(argv0, e), e, out)?;
    }
    if !have_event {
        let c = if is_return { 'r' } else { 'p' };
        if out.has_symbol {
            text::set_default_event_name(
                &mut out.event,
                format_args!("{}_{}_{}", c, written.as_str(), offset),
            );
        } else {
            // `%c_0x%p` of the written address.
            let a = r.hash_pointer(out.addr).unwrap_or(out.addr);
            text::set_default_event_name(&mut out.event, format_args!("{}_0x{:016x}", c, a));
        }
    }
    let sym_copy: Str<{ crate::lang::SYMBOL_CAP }> = out.symbol;
    let funcname = if not_utf8 {
        Some(NO_SUCH_SYMBOL)
    } else if out.has_symbol {
        Some(sym_copy.as_str())
    } else {
        None
    };
    let mut ctx = Ctx::new(r, flags, funcname);
    parse_args(&mut ctx, line, out)?;
    if not_utf8 {
        // The kernel would register it for the module to come; dynprobe
        // keeps names as UTF-8 and cannot list this one.
        return Err(lerr(1, ErrorCode::BadProbeAddr, 0));
    }
    finish(r, out)
}
