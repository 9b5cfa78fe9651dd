// SPDX-License-Identifier: GPL-2.0
//! `f` and `t` lines: fprobes on function entry and exit, and tracepoint
//! probes (`trace_fprobe_create_internal()`).

use super::args::parse_args;
use super::{
    finish, lerr, lerr_no, parse_event_name, set_symbol, take_entry_copy, LResult, Outcome,
    NO_SUCH_SYMBOL,
};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::fetch::{Ctx, Flags};
use crate::lang::funclist::{is_function_list, is_glob, FunctionList};
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::Words;
use crate::lang::resolver::Resolver;
use crate::lang::text::{self, at, find, head, is_alnum, is_digit, tail, Str};
use crate::lang::MAX_FPROBE_DATA_SIZE;

pub(super) fn create_fprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
    let mut words = Words::new(line);
    let argv0 = words.next().unwrap_or(&[]);
    let argv1 = match words.next() {
        Some(a) => a,
        None => return Ok(Outcome::Cancel),
    };
    let is_tp = at(argv0, 0) == b't';
    out.group
        .set_truncated(if is_tp { "tracepoints" } else { "fprobes" });
    let mut ev_pos = None;
    if argv0.len() > 1 {
        if at(argv0, 1) != b':' {
            return Err(lerr(0, ErrorCode::BadMaxact, 1));
        }
        ev_pos = Some(2);
    }
    // parse_symbol_and_return(), and the `:entry`/`:exit` suffix of
    // function lists (dynprobe's, as posted upstream for fprobe events);
    // it is taken on any `f` place: with a `:`, the place named a
    // function of a module, which `f` never found.
    let mut is_return = false;
    let mut explicit_entry = false;
    let argv1 = if is_tp {
        argv1
    } else if let Some(p) = argv1.strip_suffix(b":exit") {
        is_return = true;
        p
    } else if let Some(p) = argv1.strip_suffix(b":entry") {
        explicit_entry = true;
        p
    } else {
        argv1
    };
    let sym = match find(argv1, b'%') {
        Some(p) => {
            if !is_tp && tail(argv1, p) == b"%return" && !is_return && !explicit_entry {
                is_return = true;
            } else {
                return Err(lerr(1, ErrorCode::BadAddrSuffix, p));
            }
            head(argv1, p)
        }
        None => argv1,
    };
    if !is_return {
        if is_tp {
            if let Some(p) = sym.iter().position(|&c| !(is_alnum(c) || c == b'_')) {
                return Err(lerr(1, ErrorCode::BadTpName, p));
            }
        }
        for (i, a) in Words::new(line).enumerate().skip(2) {
            if let Some(p) = text::find_sub(a, b"$retval") {
                let nc = at(a, p + 7);
                if !is_alnum(nc) && nc != b'_' {
                    if is_tp || explicit_entry {
                        return Err(lerr(i, ErrorCode::RetvalOnProbe, p));
                    }
                    is_return = true;
                    break;
                }
            }
        }
    }
    // The kernel takes any name here and finds out whether it names a
    // function only when it registers the probe (trace_fprobe_verify_target(),
    // after the arguments): an empty name or one that is not UTF-8 waits
    // until then, with BTF asked about a name no function has.
    let list = if !is_tp && is_function_list(sym) {
        match FunctionList::parse(sym) {
            Ok(l) => Some(l),
            // What matching it would cost: past the bound, as a list of
            // functions past its bound is (E2BIG).
            Err((offset, ErrorCode::FlistTooCostly)) => {
                return Err(lerr_no(1, ErrorCode::FlistTooCostly, offset, errno::E2BIG))
            }
            Err((offset, code)) => return Err(lerr(1, code, offset)),
        }
    } else {
        None
    };
    let named = set_symbol(out, sym, 1, false).is_ok();
    out.has_symbol = true;
    let mut have_event = false;
    if let Some(e) = ev_pos {
        have_event = parse_event_name(tail(argv0, e), e, out)?;
    }
    if list.is_some() && !have_event {
        // No name to make one from: a list has many functions.
        return Err(lerr(0, ErrorCode::FlistNeedsEvent, 0));
    }
    if !have_event {
        let s: Str<{ crate::lang::SYMBOL_CAP }> = out.symbol;
        if is_tp {
            let pre = if is_digit(at(s.as_bytes(), 0)) {
                "_"
            } else {
                ""
            };
            text::set_default_event_name(&mut out.event, format_args!("{}{}", pre, s.as_str()));
        } else {
            let sfx = if is_return { "exit" } else { "entry" };
            text::set_default_event_name(&mut out.event, format_args!("{}__{}", s.as_str(), sfx));
        }
    }
    let flags = Flags {
        ret: is_return,
        fentry: !is_return,
        fprobe: true,
        tpoint: is_tp,
        tevent: false,
        wprobe: false,
        user: false,
    };
    out.kind = if is_tp {
        ProbeKind::Tprobe
    } else if is_return {
        ProbeKind::FprobeExit
    } else {
        ProbeKind::FprobeEntry
    };
    // Where the compiler kept only its copies of the function
    // (`NAME.isra.0`), the one copy is the place; the event keeps the
    // name as written.
    // The lone function is asked about once, here; the check after the
    // arguments reuses the answer.
    let lone = named && !is_tp && list.is_none() && !is_glob(sym) && find(sym, b':').is_none();
    let mut lone_exists = None;
    if lone {
        lone_exists = r.function_exists(None, out.symbol.as_str());
        if lone_exists == Some(false) && take_entry_copy(r, out, 1)? {
            lone_exists = r.function_exists(None, out.symbol.as_str());
        }
    }
    let sym_copy: Str<{ crate::lang::SYMBOL_CAP }> = out.symbol;
    // A list's functions have a BTF prototype each: none is the list's
    // (BTF arguments are refused as for a function without BTF).
    let funcname = if named && list.is_none() {
        sym_copy.as_str()
    } else {
        NO_SUCH_SYMBOL
    };
    let mut ctx = Ctx::new(r, flags, Some(funcname));
    parse_args(&mut ctx, line, out)?;
    if is_return && out.n_entry.saturating_mul(8) > MAX_FPROBE_DATA_SIZE {
        return Err(lerr_no(2, ErrorCode::TooManyEargs, 0, errno::E2BIG));
    }
    if let Some(list) = list {
        // Each function named without a glob must exist, as a lone one
        // must; then the list must take at least one.
        let mut at = 0usize;
        for item in list.text().split(|&c| c == b',') {
            let plain = !item.starts_with(b"!") && !is_glob(item);
            let name = core::str::from_utf8(item).unwrap_or(NO_SUCH_SYMBOL);
            if plain && r.function_exists(None, name) == Some(false) {
                return Err(lerr_no(1, ErrorCode::BadProbeAddr, at, errno::EINVAL));
            }
            at = at.saturating_add(item.len()).saturating_add(1);
        }
    }
    let exists = if !named {
        Some(false)
    } else if is_tp {
        r.tracepoint_exists(sym_copy.as_str())
    } else if list.is_some() {
        r.function_exists(None, sym_copy.as_str())
    } else if let Some(c) = find(sym, b':') {
        // The kernel's fprobes match the name against kallsyms names,
        // which have no module prefix, so `MOD:SYM` never matches there;
        // dynprobe takes that module's function of the name (loaded, one
        // of the name, traceable), as kprobes do, and hooks it by address.
        let module = core::str::from_utf8(head(sym, c)).unwrap_or(NO_SUCH_SYMBOL);
        let name = core::str::from_utf8(tail(sym, c + 1)).unwrap_or(NO_SUCH_SYMBOL);
        if module.is_empty() || name.is_empty() {
            Some(false)
        } else {
            r.function_exists(Some(module), name)
        }
    } else if lone {
        lone_exists
    } else {
        r.function_exists(None, sym_copy.as_str())
    };
    if exists == Some(false) {
        return Err(lerr_no(1, ErrorCode::BadProbeAddr, 0, errno::EINVAL));
    }
    finish(r, out)
}
