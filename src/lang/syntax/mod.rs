// SPDX-License-Identifier: GPL-2.0
//! The probe event syntax, one file a kind: kprobe, uprobe, fprobe,
//! tracepoint probe, event probe and watchpoint lines of `kprobe_events`,
//! `uprobe_events` and `dynamic_events` (`trace_kprobe.c`,
//! `trace_uprobe.c`, `trace_fprobe.c`, `trace_eprobe.c` and
//! `trace_probe.c` in the kernel). The words of the
//! line come from the lexer; each argument goes to the fetch compiler.

use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode, ParseError, Subsystem};
use crate::lang::fetch::{self, AErr};
use crate::lang::kind::Control;
use crate::lang::lexer::{self, Words};
use crate::lang::resolver::{Copies, Resolver};
use crate::lang::text::{self, at, find, head, tail, Str};
use crate::lang::MAX_EVENT_NAME_LEN;
use eprobe::create_eprobe;
use fprobe::create_fprobe;
use kprobe::create_kprobe;
use uprobe::create_uprobe;
use wprobe::create_wprobe;

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
        b'p' | b'r' if control == Control::UprobeEvents => {
            (Subsystem::Uprobe, create_uprobe(line, r, out))
        }
        b'p' | b'r' => match create_kprobe(line, r, out) {
            // kprobes leave `PATH:OFFSET` to uprobes (dyn_event_create()
            // asks trace_kprobe first, then trace_uprobe).
            Ok(Outcome::Cancel) if control == Control::DynamicEvents => {
                out.reset();
                (Subsystem::Uprobe, create_uprobe(line, r, out))
            }
            res => (Subsystem::Kprobe, res),
        },
        b'f' | b't' if control == Control::DynamicEvents => {
            (Subsystem::Fprobe, create_fprobe(line, r, out))
        }
        b'e' if control == Control::DynamicEvents => {
            (Subsystem::EventProbe, create_eprobe(line, r, out))
        }
        b'w' if control == Control::DynamicEvents => {
            (Subsystem::Wprobe, create_wprobe(line, r, out))
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
    // The symbol fits SYMBOL_CAP, so its prefix a u16.
    out.module_len = if module_names {
        find(sym, b':').map_or(0, |c| u16::try_from(c + 1).unwrap_or(0))
    } else {
        0
    };
    Ok(())
}

/// A probed function that has no symbol of its own but one compiler copy
/// that keeps its entry (`NAME.isra.0`, `NAME.constprop.0`): the place
/// becomes the copy (`MOD:` kept), which the listing then shows, and BTF
/// is asked about the copy, which has none (its parameters may differ
/// from the prototype's). Several copies are refused at the place (word
/// `idx`): the user names one. With none, nothing changes and the
/// caller's own check refuses the name. Says whether the place changed.
fn take_entry_copy<R: Resolver>(r: &R, out: &mut Definition, idx: usize) -> Result<bool, LErr> {
    let mut copy: Str<{ crate::lang::SYMBOL_CAP }> = Str::new();
    let written: Str<{ crate::lang::SYMBOL_CAP }> = out.symbol;
    let module_len = usize::from(out.module_len);
    let module = out.module();
    match r.entry_copies(module, out.symbol().unwrap_or(""), &mut copy) {
        Copies::None => Ok(false),
        Copies::Several => Err(lerr(idx, ErrorCode::SeveralCopies, 0)),
        Copies::One => {
            let prefix = text::head(written.as_bytes(), module_len);
            let mut full: Str<{ crate::lang::SYMBOL_CAP }> = Str::new();
            full.push(text::as_str(prefix))
                .and_then(|()| full.push(copy.as_str()))
                .map_err(|()| lerr(idx, ErrorCode::BadProbeAddr, 0))?;
            set_symbol(out, full.as_bytes(), idx, module_len > 0)?;
            Ok(true)
        }
    }
}

/// What BTF and kallsyms are asked for a probed name that is not UTF-8:
/// a name no kernel symbol has (kallsyms and BTF names are ASCII), so the
/// BTF questions fail as the kernel's do for the name as written.
const NO_SUCH_SYMBOL: &str = "\u{fffd}";

/// Resolve the `@SYM` arguments: the last step of a definition.
fn finish<R: Resolver>(r: &R, out: &mut Definition) -> LResult {
    match fetch::resolve_symbols(r, out) {
        Ok(true) => Ok(Outcome::Done),
        Ok(false) => Err(lerr_no(1, ErrorCode::BadProbeAddr, 0, errno::ENOENT)),
        Err(()) => Err(lerr(1, ErrorCode::FailRegProbe, 0)),
    }
}

mod args;
mod eprobe;
mod fprobe;
mod kprobe;
mod uprobe;
mod wprobe;

pub(crate) mod function;
