// SPDX-License-Identifier: GPL-2.0
//! The probe event syntax: kprobe, fprobe, tracepoint probe and event
//! probe lines of `kprobe_events` and `dynamic_events` (`trace_kprobe.c`,
//! `trace_fprobe.c`, `trace_eprobe.c` and `trace_probe.c` in the kernel). The words of the
//! line come from the lexer; each argument goes to the fetch compiler.

use core::fmt::Write;

use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode, ParseError, Subsystem};
use crate::lang::fetch::{self, AErr, Ctx, Flags};
use crate::lang::kind::Control;
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::{self, Words};
use crate::lang::resolver::{FilterCheck, FuncEntry, Resolver, SymbolCheck};
use crate::lang::text::{self, at, find, head, is_alnum, is_digit, tail, write_lossy, Str};
use crate::lang::{
    KRETPROBE_MAXACTIVE_MAX, MAX_BTF_ARGS_LEN, MAX_DENTRY_ARGS_LEN, MAX_EVENT_NAME_LEN,
    MAX_FPROBE_DATA_SIZE, MAX_TRACE_ARGS,
};

/// What a probe event line turned out to be.
pub(crate) enum Outcome {
    /// A definition, complete in the output.
    Done,
    /// No probe type takes the line (the kernel's `-ECANCELED`).
    Cancel,
}

/// Parse a probe event line (comment removed, not blank, not a removal)
/// into `out`.
pub(crate) fn parse<R: Resolver>(
    control: Control,
    line: &[u8],
    r: &R,
    out: &mut Definition,
) -> Result<Outcome, ParseError> {
    let c0 = Words::new(line).next().map_or(0, |argv0| at(argv0, 0));
    let (sub, res) = match c0 {
        b'p' | b'r' => (Subsystem::Kprobe, create_kprobe(line, r, out)),
        b'f' | b't' if control == Control::DynamicEvents => {
            (Subsystem::Fprobe, create_fprobe(line, r, out))
        }
        b'e' if control == Control::DynamicEvents => {
            (Subsystem::EventProbe, create_eprobe(line, r, out))
        }
        _ => return Ok(Outcome::Cancel),
    };
    res.map_err(|le| ParseError {
        code: le.e.code,
        column: lexer::column(line, le.index, le.e.offset),
        errno: le.e.errno,
        subsystem: sub,
        logged: le.e.logged,
    })
}

/// Internal error before the column is known.
struct LErr {
    index: usize,
    e: AErr,
}

type LResult = Result<Outcome, LErr>;

fn lerr(index: usize, code: ErrorCode, offset: usize) -> LErr {
    LErr {
        index,
        e: AErr {
            code,
            offset,
            errno: errno::EINVAL,
            logged: true,
        },
    }
}

fn lerr_no(index: usize, code: ErrorCode, offset: usize, e: i32) -> LErr {
    let mut x = lerr(index, code, offset);
    x.e.errno = e;
    x
}

/// `traceprobe_parse_event_name()`; on success the names are in `out`
/// (returns false when only a group was given).
fn parse_event_name(event: &[u8], offset: usize, out: &mut Definition) -> Result<bool, LErr> {
    let mut offset = offset;
    let mut ev = event;
    let slash = find(ev, b'/').or_else(|| find(ev, b'.'));
    if let Some(s) = slash {
        if s == 0 {
            return Err(lerr(0, ErrorCode::NoGroupName, offset));
        }
        if s + 1 > MAX_EVENT_NAME_LEN {
            return Err(lerr(0, ErrorCode::GroupTooLong, offset));
        }
        let g = head(ev, s);
        if !text::is_good_name_ex(g, true) || out.group.set(text::as_str(g)).is_err() {
            return Err(lerr(0, ErrorCode::BadGroupName, offset));
        }
        offset += s + 1;
        ev = tail(ev, s + 1);
    }
    if ev.is_empty() {
        if slash.is_some() {
            return Ok(false);
        }
        return Err(lerr(0, ErrorCode::NoEventName, offset));
    } else if ev.len() >= MAX_EVENT_NAME_LEN {
        return Err(lerr(0, ErrorCode::EventTooLong, offset));
    }
    if !text::is_good_name(ev) || out.event.set(text::as_str(ev)).is_err() {
        return Err(lerr(0, ErrorCode::BadEventName, offset));
    }
    Ok(true)
}

/// `module_names`: `MOD:` with an empty part is left to the resolver, as
/// the kernel's kprobes leave it to `validate_probe_symbol()`, which takes
/// `:SYM` and `MOD:` for places in a module that is not loaded (`:SYM`
/// never resolves, since no module has an empty name). fprobes have no
/// module syntax: the whole name is the symbol.
fn set_symbol(
    out: &mut Definition,
    sym: &[u8],
    idx: usize,
    module_names: bool,
) -> Result<(), LErr> {
    // An empty name (`%return`, `+4`) never resolves.
    if sym.is_empty() {
        return Err(lerr(idx, ErrorCode::BadProbeAddr, 0));
    }
    let name = core::str::from_utf8(sym).map_err(|_| lerr(idx, ErrorCode::BadProbeAddr, 0))?;
    if out.symbol.set(name).is_err() {
        return Err(lerr(idx, ErrorCode::BadProbeAddr, 0));
    }
    out.has_symbol = true;
    out.module_len = if module_names {
        find(sym, b':').map_or(0, |c| c + 1)
    } else {
        0
    };
    Ok(())
}

/// What BTF and kallsyms are asked for a probed name that is not UTF-8:
/// a name no kernel symbol has (kallsyms and BTF names are ASCII), so the
/// BTF questions fail as the kernel's do for the name as written.
const NO_SUCH_SYMBOL: &str = "\u{fffd}";

/// A probed name that is not UTF-8 (the kernel takes any bytes) can name
/// no symbol, but the kernel finds that out only where it looks the name
/// up; until then it parses on. For kprobes that is
/// `validate_probe_symbol()`, which refuses it unless it is `MOD:SYM` of
/// a module that is not loaded (a module name that is not UTF-8 is never
/// loaded).
fn kprobe_name_pending<R: Resolver>(r: &R, name: &[u8]) -> bool {
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

fn create_kprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
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
    if out.has_symbol && !not_utf8 {
        let mut maxactive = out.maxactive;
        let module = out.module();
        let plain = out.symbol().unwrap_or("");
        match r.check_probe_symbol(module, plain) {
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
            let sym: Str<{ crate::lang::SYMBOL_CAP }> = out.symbol;
            text::set_default_event_name(
                &mut out.event,
                format_args!("{}_{}_{}", c, sym.as_str(), offset),
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

fn create_fprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
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
    // parse_symbol_and_return()
    let mut is_return = false;
    let sym = match find(argv1, b'%') {
        Some(p) => {
            if !is_tp && tail(argv1, p) == b"%return" {
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
                    if is_tp {
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
    let named = set_symbol(out, sym, 1, false).is_ok();
    out.has_symbol = true;
    let mut have_event = false;
    if let Some(e) = ev_pos {
        have_event = parse_event_name(tail(argv0, e), e, out)?;
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
    };
    out.kind = if is_tp {
        ProbeKind::Tracepoint
    } else if is_return {
        ProbeKind::FprobeExit
    } else {
        ProbeKind::FprobeEntry
    };
    let sym_copy: Str<{ crate::lang::SYMBOL_CAP }> = out.symbol;
    let funcname = if named {
        sym_copy.as_str()
    } else {
        NO_SUCH_SYMBOL
    };
    let mut ctx = Ctx::new(r, flags, Some(funcname));
    parse_args(&mut ctx, line, out)?;
    if is_return && out.n_entry.saturating_mul(8) > MAX_FPROBE_DATA_SIZE {
        return Err(lerr_no(2, ErrorCode::TooManyEargs, 0, errno::E2BIG));
    }
    let exists = if !named {
        Some(false)
    } else if is_tp {
        r.tracepoint_exists(sym_copy.as_str())
    } else if find(sym, b':').is_some() {
        // 7.2's fprobes match the name against kallsyms names, which
        // have no module prefix: `MOD:SYM` (or any ':') never matches.
        Some(false)
    } else {
        r.function_exists(None, sym_copy.as_str())
    };
    if exists == Some(false) {
        return Err(lerr_no(1, ErrorCode::BadProbeAddr, 0, errno::EINVAL));
    }
    finish(r, out)
}

/// `SYSTEM.EVENT` or `SYSTEM/EVENT`: the event an event probe attaches to.
/// The kernel reads it with `traceprobe_parse_event_name()`, which logs a
/// bad group or event name first (the caret at the name); a word without
/// both parts is then refused with NO_EVENT_INFO.
fn source_event(word: &[u8]) -> Result<(&str, &str), LErr> {
    let no_info = || lerr(1, ErrorCode::NoEventInfo, 0);
    let Some(split) = find(word, b'/').or_else(|| find(word, b'.')) else {
        if word.is_empty() {
            return Err(lerr(1, ErrorCode::NoEventName, 0));
        }
        if word.len() >= MAX_EVENT_NAME_LEN {
            return Err(lerr(1, ErrorCode::EventTooLong, 0));
        }
        if !text::is_good_name(word) {
            return Err(lerr(1, ErrorCode::BadEventName, 0));
        }
        return Err(no_info());
    };
    let (sys, ev) = (head(word, split), tail(word, split + 1));
    if split == 0 {
        return Err(lerr(1, ErrorCode::NoGroupName, 0));
    }
    if split + 1 > MAX_EVENT_NAME_LEN {
        return Err(lerr(1, ErrorCode::GroupTooLong, 0));
    }
    if !text::is_good_name_ex(sys, true) {
        return Err(lerr(1, ErrorCode::BadGroupName, 0));
    }
    if ev.is_empty() {
        return Err(no_info());
    }
    if ev.len() >= MAX_EVENT_NAME_LEN {
        return Err(lerr(1, ErrorCode::EventTooLong, split + 1));
    }
    if !text::is_good_name(ev) {
        return Err(lerr(1, ErrorCode::BadEventName, split + 1));
    }
    match (core::str::from_utf8(sys), core::str::from_utf8(ev)) {
        (Ok(s), Ok(e)) => Ok((s, e)),
        _ => Err(no_info()),
    }
}

/// `__trace_eprobe_create()`: `e[:[GRP/][EVENT]] SYSTEM.EVENT [ARGS]`.
/// The place is kept as `SYSTEM.EVENT`, as the listing shows it.
fn create_eprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
    let mut words = Words::new(line);
    let argv0 = words.next().unwrap_or(&[]);
    let argv1 = match words.next() {
        Some(a) => a,
        None => return Ok(Outcome::Cancel),
    };
    out.group.set_truncated("eprobes");
    let mut have_event = false;
    if let Some(p) = find(tail(argv0, 1), b':') {
        have_event = parse_event_name(tail(argv0, p + 2), p + 2, out)?;
    }
    let (sys, ev) = source_event(argv1)?;
    if !have_event && out.event.set(ev).is_err() {
        return Err(lerr(1, ErrorCode::NoEventInfo, 0));
    }
    // The arguments end at `if`; the words after it are a filter of the
    // source event's records.
    let nargs = Words::new(line).skip(2).take_while(|w| *w != b"if").count();
    if nargs > MAX_TRACE_ARGS {
        return Err(lerr_no(2, ErrorCode::TooManyArgs, 0, errno::E2BIG));
    }
    if !r.event_source(sys, ev) {
        return Err(lerr_no(1, ErrorCode::BadAttachEvent, 0, errno::ENODEV));
    }
    let filter = 2 + nargs;
    if Words::new(line).nth(filter).is_some() {
        eprobe_filter(line, filter + 1, r, (sys, ev), out)?;
    }
    let mut place: Str<{ crate::lang::SYMBOL_CAP }> = Str::new();
    if write!(place, "{}.{}", sys, ev).is_err() || out.symbol.set(place.as_str()).is_err() {
        return Err(lerr(1, ErrorCode::NoEventInfo, 0));
    }
    out.has_symbol = true;
    out.kind = ProbeKind::Event;
    let flags = Flags {
        tevent: true,
        ..Flags::default()
    };
    let mut ctx = Ctx::new(r, flags, None);
    ctx.source = Some((sys, ev));
    for (j, a) in Words::new(line).skip(2).take(nargs).enumerate() {
        ctx.offset = 0;
        fetch::parse_probe_arg(&mut ctx, out, j, a).map_err(|e| LErr { index: j + 2, e })?;
    }
    finish(r, out)
}

/// `trace_eprobe_parse_filter()`: the words from `first` on, joined by one
/// space as the kernel joins them, are the filter, which the kernel's
/// filter parser must accept for the source event. Kept in `out` (the
/// listing does not show it, as the kernel's does not).
fn eprobe_filter<R: Resolver>(
    line: &[u8],
    first: usize,
    r: &R,
    (sys, ev): (&str, &str),
    out: &mut Definition,
) -> Result<(), LErr> {
    if Words::new(line).nth(first).is_none() {
        return Err(lerr(first, ErrorCode::NoEpFilter, 0));
    }
    out.fe_text.clear();
    for (i, w) in Words::new(line).skip(first).enumerate() {
        let word = core::str::from_utf8(w).map_err(|_| lerr(first + i, ErrorCode::BadString, 0))?;
        if (i > 0 && out.fe_text.push(" ").is_err()) || out.fe_text.push(word).is_err() {
            return Err(lerr_no(first, ErrorCode::ArgTooLong, 0, errno::E2BIG));
        }
    }
    match r.event_filter(sys, ev, out.fe_text.as_str()) {
        FilterCheck::Accepted => Ok(()),
        FilterCheck::Rejected => {
            let mut e = lerr(first, ErrorCode::NoEpFilter, 0);
            // The kernel's filter parser has logged why.
            e.e.logged = false;
            Err(e)
        }
        FilterCheck::Unsupported => Err(lerr_no(
            first,
            ErrorCode::EpFilterUnsupported,
            0,
            errno::EOPNOTSUPP,
        )),
    }
}

/// Resolve the `@SYM` arguments: the last step of a definition.
fn finish<R: Resolver>(r: &R, out: &mut Definition) -> LResult {
    match fetch::resolve_symbols(r, out) {
        Ok(true) => Ok(Outcome::Done),
        Ok(false) => Err(lerr_no(1, ErrorCode::BadProbeAddr, 0, errno::ENOENT)),
        Err(()) => Err(lerr(1, ErrorCode::FailRegProbe, 0)),
    }
}

/// Where argument `j` of the expanded list comes from.
#[derive(Clone, Copy)]
enum Src {
    Orig(usize),
    BtfParam(u32),
}

/// The result of `traceprobe_expand_meta_args()`.
struct Meta {
    active: bool,
    star: Option<usize>,
    nr: u32,
    argc: usize,
}

impl Meta {
    fn src(&self, j: usize) -> Src {
        match self.star {
            Some(a) if self.active => {
                let nr = self.nr as usize;
                if j < a {
                    Src::Orig(j)
                } else if j < a + nr {
                    Src::BtfParam((j - a) as u32)
                } else {
                    Src::Orig(j + 1 - nr)
                }
            }
            _ => Src::Orig(j),
        }
    }
}

/// The words after the place (`argv[2..]`), read from the line where
/// needed: the kernel expands `$argN` and `$arg*` over all of them before
/// it counts them, so there is no bound to store them under.
#[derive(Clone, Copy)]
struct Args<'a> {
    line: &'a [u8],
}

impl<'a> Args<'a> {
    fn iter(self) -> impl Iterator<Item = &'a [u8]> {
        Words::new(self.line).skip(2)
    }

    fn len(self) -> usize {
        self.iter().count()
    }

    fn get(self, k: usize) -> Option<&'a [u8]> {
        self.iter().nth(k)
    }
}

fn expand_meta<R: Resolver>(ctx: &mut Ctx<'_, R>, args: Args<'_>) -> Result<Meta, LErr> {
    let argc = args.len();
    let mut star = None;
    let mut found = false;
    let mut index = 0usize;
    for (i, a) in args.iter().enumerate() {
        if a.starts_with(b"$arg") {
            index = i + 2;
            if !ctx.flags.is_function_entry() && !ctx.flags.is_function_return() {
                return Err(lerr(index, ErrorCode::NofentryArgs, 0));
            }
            if is_digit(at(a, 4)) {
                found = true;
                continue;
            }
            if at(a, 4) != b'*' {
                return Err(lerr(index, ErrorCode::BadVar, 0));
            }
            if star.is_some() {
                return Err(lerr(index, ErrorCode::DoubleArgs, 0));
            }
            found = true;
            star = Some(i);
        }
    }
    let none = Meta {
        active: false,
        star: None,
        nr: 0,
        argc,
    };
    if !found {
        return Ok(none);
    }
    let b = match ctx.query_btf() {
        Some(b) if b.nr_params > 0 => b,
        _ => {
            if star.is_some() {
                return Err(lerr_no(index, ErrorCode::NosupBtfarg, 0, errno::EOPNOTSUPP));
            }
            return Ok(none);
        }
    };
    let nr = b.nr_params;
    let mut used = 0usize;
    let mut charge = |index: usize, len: usize| -> Result<(), LErr> {
        if len >= MAX_BTF_ARGS_LEN.saturating_sub(used) {
            return Err(lerr_no(index, ErrorCode::Args2long, 0, errno::E2BIG));
        }
        used = used.saturating_add(len + 1);
        Ok(())
    };
    for (i, a) in args.iter().enumerate() {
        let index = i + 2;
        if Some(i) == star {
            for n in 0..nr {
                let name = match ctx.btf_param(n) {
                    Some((nm, _)) => nm,
                    None => return Err(lerr_no(index, ErrorCode::NoBtfEntry, 0, errno::ENOENT)),
                };
                charge(index, name.len())?;
            }
            continue;
        }
        if a.starts_with(b"$arg") {
            let (n, used_digits) = text::simple_strtoul(tail(a, 4), 10);
            let ty = tail(a, 4 + used_digits);
            if !(ty.is_empty() || at(ty, 0) == b':') {
                return Err(lerr_no(index, ErrorCode::BadVar, 0, errno::ENOENT));
            }
            if n == 0 {
                return Err(lerr(index, ErrorCode::BadArgNum, 0));
            }
            let idx = n - 1;
            if idx >= u64::from(nr) {
                return Err(lerr_no(index, ErrorCode::NoBtfarg, 0, errno::ENOENT));
            }
            let name = match ctx.btf_param(idx as u32) {
                Some((nm, _)) => nm,
                None => return Err(lerr_no(index, ErrorCode::NoBtfEntry, 0, errno::ENOENT)),
            };
            charge(index, name.len().saturating_add(ty.len()))?;
        }
    }
    let argc = if star.is_some() {
        (argc + nr as usize).saturating_sub(1)
    } else {
        argc
    };
    Ok(Meta {
        active: true,
        star,
        nr,
        argc,
    })
}

/// Bytes of an argument (or of the expression after `NAME=`) kept when it
/// is longer: more than the longest expression any supported kernel
/// accepts (`MAX_ARGSTR_CAP`), so still too long on every one.
const LONG_ARG: usize = crate::lang::MAX_ARGSTR_CAP + 1;
/// Room for an argument's text: a name of up to `MAX_ARG_NAME_LEN` bytes,
/// `=` and `LONG_ARG` bytes, even when every byte takes two there (bytes
/// that are not UTF-8 are kept as two-byte characters).
const ARGBUF: usize = 2 * (crate::lang::MAX_ARG_NAME_LEN + 1 + LONG_ARG);

/// Text of expanded argument `j` (BTF names and `%pd`/`%pD` applied).
fn arg_text<R: Resolver>(
    ctx: &Ctx<'_, R>,
    meta: &Meta,
    args: Args<'_>,
    j: usize,
    dentry_used: &mut usize,
    buf: &mut Str<ARGBUF>,
) -> Result<(), LErr> {
    buf.clear();
    let overflow = || lerr_no(j + 2, ErrorCode::ArgTooLong, 0, errno::E2BIG);
    match meta.src(j) {
        Src::BtfParam(n) => {
            let name = ctx.btf_param(n).map(|x| x.0).unwrap_or("");
            buf.push(name).map_err(|()| overflow())?;
        }
        Src::Orig(k) => {
            let a = args.get(k).unwrap_or(&[]);
            if meta.active && a.starts_with(b"$arg") && is_digit(at(a, 4)) {
                let (n, d) = text::simple_strtoul(tail(a, 4), 10);
                let name = ctx
                    .btf_param(n.saturating_sub(1) as u32)
                    .map(|x| x.0)
                    .unwrap_or("");
                buf.push(name).map_err(|()| overflow())?;
                write_lossy(buf, tail(a, 4 + d)).map_err(|_| overflow())?;
            } else if a.len() > LONG_ARG {
                // Longer than the buffer may hold: the kernel still checks
                // the name first (`NAME=`: too long, missing, bad, used)
                // and finds the expression too long only after it, with
                // the caret past `=`. Keep the name and enough of the
                // expression for the parser to find it too long.
                match find(a, b'=') {
                    Some(eq) if eq > crate::lang::MAX_ARG_NAME_LEN => {
                        return Err(lerr(j + 2, ErrorCode::ArgNameTooLong, 0));
                    }
                    Some(eq) => {
                        write_lossy(buf, head(a, eq + 1)).map_err(|_| overflow())?;
                        write_lossy(buf, head(tail(a, eq + 1), LONG_ARG))
                            .map_err(|_| overflow())?;
                    }
                    None => write_lossy(buf, head(a, LONG_ARG)).map_err(|_| overflow())?,
                }
            } else {
                write_lossy(buf, a).map_err(|_| overflow())?;
            }
        }
    }
    // traceprobe_expand_dentry_args()
    let b = *buf;
    let t = b.as_bytes();
    let n = t.len();
    if n >= 4 && text::mid(t, n - 4, n - 1) == b":%p" && matches!(at(t, n - 1), b'd' | b'D') {
        let eq = find(t, b'=');
        let (pre, val) = match eq {
            Some(e) if e < n - 4 => (head(t, e + 1), text::mid(t, e + 1, n - 4)),
            _ => (&[][..], head(t, n - 4)),
        };
        buf.clear();
        let dn = ctx.r.dentry_name_offset();
        let r = if at(t, n - 1) == b'd' {
            write_lossy(buf, pre)
                .and_then(|()| write!(buf, "+0x0(+0x{:x}({})):string", dn, text::as_str(val)))
        } else {
            let fd = ctx.r.file_dentry_offset();
            write_lossy(buf, pre).and_then(|()| {
                write!(
                    buf,
                    "+0x0(+0x{:x}(+0x{:x}({}))):string",
                    dn,
                    fd,
                    text::as_str(val)
                )
            })
        };
        let len = buf.len();
        if r.is_err() || len >= MAX_DENTRY_ARGS_LEN.saturating_sub(*dentry_used) {
            return Err(LErr {
                index: j + 2,
                e: AErr {
                    code: ErrorCode::ArgTooLong,
                    offset: 0,
                    errno: errno::ENOMEM,
                    logged: false,
                },
            });
        }
        *dentry_used = dentry_used.saturating_add(len + 1);
    }
    Ok(())
}

fn parse_args<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    line: &[u8],
    out: &mut Definition,
) -> Result<(), LErr> {
    let args = Args { line };
    let meta = expand_meta(ctx, args)?;
    if meta.argc > MAX_TRACE_ARGS {
        return Err(lerr_no(2, ErrorCode::TooManyArgs, 0, errno::E2BIG));
    }
    let mut dentry_used = 0usize;
    let mut buf: Str<ARGBUF> = Str::new();
    for j in 0..meta.argc {
        arg_text(ctx, &meta, args, j, &mut dentry_used, &mut buf)?;
        ctx.offset = 0;
        fetch::parse_probe_arg(ctx, out, j, buf.as_bytes())
            .map_err(|e| LErr { index: j + 2, e })?;
    }
    Ok(())
}
