// SPDX-License-Identifier: GPL-2.0
//! `e` lines: event probes on another event's records
//! (`__trace_eprobe_create()`).

use core::fmt::Write;

use super::{finish, lerr, lerr_no, parse_event_name, LErr, LResult, Outcome};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::fetch::{self, Ctx, Flags};
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::Words;
use crate::lang::resolver::{FilterCheck, Resolver};
use crate::lang::text::{self, find, head, tail, Str};
use crate::lang::{MAX_EVENT_NAME_LEN, MAX_TRACE_ARGS};

/// `SYSTEM.EVENT` or `SYSTEM/EVENT`: the event an event probe attaches to.
/// The kernel reads it with `traceprobe_parse_event_name()`, which logs a
/// bad group or event name first (the caret at the name); a word without
/// both parts is then refused with NO_EVENT_INFO.
pub(super) fn source_event(word: &[u8]) -> Result<(&str, &str), LErr> {
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
pub(super) fn create_eprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
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
    out.kind = ProbeKind::Eprobe;
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
pub(super) fn eprobe_filter<R: Resolver>(
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
