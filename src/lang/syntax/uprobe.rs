// SPDX-License-Identifier: GPL-2.0
//! uprobe `p` and `r` lines (`__trace_uprobe_create()`):
//! `p|r[:[GRP/][EVENT]] PATH:OFFSET[%return][(REF_CTR_OFFSET)] [ARGS]`,
//! checked in the kernel's order, with its errors at its places.

use super::args::parse_args_as_written;
use super::{finish, lerr, lerr_no, parse_event_name, LErr, LResult, Outcome};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::fetch::{Ctx, Flags};
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::Words;
use crate::lang::resolver::{Resolver, UserFile};
use crate::lang::text::{self, at, find, head, is_digit, mid, rfind, tail};
use crate::lang::MAX_TRACE_ARGS;

/// The group of a uprobe line that names none (`UPROBE_EVENT_SYSTEM`).
const UPROBE_GROUP: &str = "uprobes";

pub(super) fn create_uprobe<R: Resolver>(line: &[u8], r: &R, out: &mut Definition) -> LResult {
    let mut words = Words::new(line);
    let argv0 = words.next().unwrap_or(&[]);
    let Some(place) = words.next() else {
        return Ok(Outcome::Cancel);
    };
    let mut is_return = at(argv0, 0) == b'r';
    if Words::new(line).skip(2).count() > MAX_TRACE_ARGS {
        return Err(lerr_no(2, ErrorCode::TooManyArgs, 0, errno::E2BIG));
    }
    // Only `p:` and `r:` name the event: `r5:EV` is a uprobe with the
    // default name (the kernel looks at the second byte alone).
    let event_at = (at(argv0, 1) == b':').then_some(2);
    if find(place, b'/').is_none() {
        return Ok(Outcome::Cancel);
    }
    // The last ':', in case the path holds one too.
    let Some(colon) = rfind(place, b':') else {
        return Ok(Outcome::Cancel);
    };
    if !is_digit(at(place, colon + 1)) {
        return Ok(Outcome::Cancel);
    }
    let path = head(place, colon);
    check_file(r, path)?;
    let arg_at = colon + 1;
    let mut arg = tail(place, arg_at);
    // The reference counter: `(OFFS)` at the end of the place.
    if let Some(open) = find(arg, b'(') {
        let open_at = arg_at + open;
        let Some(close) = find(tail(place, open_at), b')') else {
            return Err(lerr(1, ErrorCode::RefcntOpenBrace, place.len()));
        };
        let close_at = open_at + close;
        if close_at + 1 != place.len() {
            return Err(lerr(1, ErrorCode::BadRefcntSuffix, close_at + 1));
        }
        out.addr = text::kstrtoull_errno(mid(place, open_at + 1, close_at), 0)
            .map_err(|e| lerr_no(1, ErrorCode::BadRefcnt, open_at + 1, e))?;
        arg = mid(place, arg_at, open_at);
    }
    if let Some(pct) = find(arg, b'%') {
        if tail(arg, pct) == b"%return" {
            is_return = true;
            arg = head(arg, pct);
        } else {
            return Err(lerr(1, ErrorCode::BadAddrSuffix, arg_at + pct));
        }
    }
    out.offset = text::kstrtoull_errno(arg, 0)
        .map_err(|e| lerr_no(1, ErrorCode::BadUprobeOffs, arg_at, e))?;
    // The file as written; dynprobe keeps it as UTF-8 text.
    let path_text = core::str::from_utf8(path).map_err(|_| file_not_found(errno::ENOENT))?;
    out.symbol
        .set(path_text)
        .map_err(|()| file_not_found(errno::ENOENT))?;
    out.has_symbol = false;
    out.module_len = 0;
    out.group.set_truncated(UPROBE_GROUP);
    let mut have_event = false;
    if let Some(e) = event_at {
        have_event = parse_event_name(tail(argv0, e), e, out)?;
    }
    if !have_event {
        // `p_BASENAME_0xOFFSET`, the base name cut at its first `.`, `-`
        // or `_`; `p` for return probes too.
        let base = match rfind(path, b'/') {
            Some(s) => tail(path, s + 1),
            None => path,
        };
        let base = match base.iter().position(|c| matches!(c, b'.' | b'-' | b'_')) {
            Some(p) => head(base, p),
            None => base,
        };
        let offset = out.offset;
        text::set_event_name_truncated(
            &mut out.event,
            format_args!("p_{}_0x{:x}", text::as_str(base), offset),
        );
    }
    out.kind = if is_return {
        ProbeKind::Uretprobe
    } else {
        ProbeKind::Uprobe
    };
    let flags = Flags {
        ret: is_return,
        user: true,
        ..Flags::default()
    };
    let mut ctx = Ctx::new(r, flags, None);
    parse_args_as_written(&mut ctx, out, line)?;
    finish(r, out)
}

fn file_not_found(e: i32) -> LErr {
    lerr_no(1, ErrorCode::FileNotFound, 0, e)
}

/// `kern_path()` and `d_is_reg()` of the probed file.
fn check_file<R: Resolver>(r: &R, path: &[u8]) -> Result<(), LErr> {
    match r.user_file(path) {
        UserFile::Regular => Ok(()),
        UserFile::NotRegular => Err(lerr(1, ErrorCode::NoRegularFile, 0)),
        UserFile::Missing(e) => Err(file_not_found(e)),
    }
}
