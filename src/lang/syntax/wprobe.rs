// SPDX-License-Identifier: GPL-2.0
//! `w` lines: watchpoints, hardware breakpoints on data, as the posted
//! wprobe series defines them (`__trace_wprobe_create()` there):
//! `w[:[GRP/][EVENT]] [r|w|rw]@ADDR|SYM[+|-OFFS][:LEN] [ARGS]`.

use super::args::parse_args_as_written;
use super::{finish, lerr, lerr_no, parse_event_name, LErr, LResult};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::fetch::{Ctx, Flags};
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::Words;
use crate::lang::resolver::Resolver;
use crate::lang::text::{self, at, find, head, mid, tail};
use crate::lang::watch::{Access, Watch, USER_ADDRESS_END};
use crate::lang::MAX_TRACE_ARGS;

/// The group of a `w` line that names none.
const WPROBE_GROUP: &str = "wprobes";

pub(super) fn create_wprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
    let mut words = Words::new(line);
    let argv0 = words.next().unwrap_or(&[]);
    let Some(spec) = words.next() else {
        return Err(lerr(0, ErrorCode::NoArgBody, 0));
    };
    // `w` takes no number (kretprobes' maxactive; the series' later
    // versions make it a count of breakpoints for their triggers).
    if argv0.len() > 1 && at(argv0, 1) != b':' {
        return Err(lerr(0, ErrorCode::BadMaxactType, 1));
    }
    out.group.set_truncated(WPROBE_GROUP);
    // The spec is checked before the event name, as the series does.
    let watched = parse_spec(spec, r, out)?;
    let mut have_event = false;
    if argv0.len() > 1 {
        have_event = parse_event_name(tail(argv0, 2), 2, out)?;
    }
    if !have_event {
        if out.has_symbol {
            let sym = out.symbol;
            text::set_default_event_name(&mut out.event, format_args!("{}", sym.as_str()));
        } else {
            text::set_default_event_name(&mut out.event, format_args!("w_0x{:x}", watched));
        }
    }
    let nargs = Words::new(line).skip(2).count();
    if nargs > MAX_TRACE_ARGS {
        return Err(lerr_no(2, ErrorCode::TooManyArgs, 0, errno::E2BIG));
    }
    out.kind = ProbeKind::Wprobe;
    let flags = Flags {
        wprobe: true,
        ..Flags::default()
    };
    let mut ctx = Ctx::new(r, flags, None);
    parse_args_as_written(&mut ctx, out, line)?;
    finish(r, out)
}

/// `[r|w|rw]@ADDR|SYM[+|-OFFS][:LEN]` (the series' `parse_address_spec()`)
/// into `out`: the access and length, the symbol and offset if any, and
/// the watched address, which it returns. Errors are on word 1.
fn parse_spec<R: Resolver>(spec: &[u8], r: &R, out: &mut Definition) -> Result<u64, LErr> {
    let Some(at_sign) = find(spec, b'@') else {
        return Err(lerr(1, ErrorCode::BadAccessFmt, 0));
    };
    let mut watch = Watch::DEFAULT;
    if at_sign > 0 {
        watch.access = Access::from_letters(head(spec, at_sign))
            .ok_or_else(|| lerr(1, ErrorCode::BadAccessType, 0))?;
    }
    // The first ':' anywhere: one before the '@' has failed as an access
    // type above.
    let colon = find(spec, b':');
    if let Some(c) = colon {
        let len_at = c.saturating_add(1);
        let len = text::kstrtoll(tail(spec, len_at), 0)
            .filter(|v| i32::try_from(*v).is_ok())
            .ok_or_else(|| lerr(1, ErrorCode::BadAccessLen, len_at))?;
        watch.len = match len {
            1 | 2 | 4 | 8 => len as u8,
            _ => return Err(lerr(1, ErrorCode::BadAccessLen, len_at)),
        };
    }
    let place_at = at_sign.saturating_add(1);
    let place = mid(spec, place_at, colon.unwrap_or(spec.len()));
    let addr = match text::kstrtoull(place, 0) {
        Some(a) => a,
        None => watch_symbol(place, place_at, r, out)?,
    };
    // Kernel memory only, aligned to the length (the series'
    // trace_wprobe_is_valid_addr()).
    if addr < USER_ADDRESS_END || addr & u64::from(watch.len - 1) != 0 {
        return Err(lerr(1, ErrorCode::BadAccessAddr, place_at));
    }
    out.addr = addr;
    out.listed_addr = addr;
    out.watch = watch;
    Ok(addr)
}

/// `SYM[+|-OFFS]` at column `place_at` of the spec: the symbol and offset
/// go into `out`; returns their address.
fn watch_symbol<R: Resolver>(
    place: &[u8],
    place_at: usize,
    r: &R,
    out: &mut Definition,
) -> Result<u64, LErr> {
    let (sym, offset) = match place.iter().position(|&c| c == b'+' || c == b'-') {
        Some(p) => {
            let off = text::kstrtoll(tail(place, p), 0)
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| lerr(1, ErrorCode::BadProbeAddr, place_at.saturating_add(p)))?;
            (head(place, p), off)
        }
        None => (place, 0),
    };
    let not_found = || lerr_no(1, ErrorCode::BadAccessAddr, place_at, errno::ENOENT);
    let name = core::str::from_utf8(sym).map_err(|_| not_found())?;
    let base = if name.is_empty() {
        None
    } else {
        r.symbol_address(name)
    };
    let base = base.ok_or_else(not_found)?;
    out.symbol.set(name).map_err(|()| not_found())?;
    out.has_symbol = true;
    out.module_len = 0;
    out.offset = i64::from(offset) as u64;
    Ok(base.wrapping_add_signed(i64::from(offset)))
}
