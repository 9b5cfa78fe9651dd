// SPDX-License-Identifier: GPL-2.0
//! uprobe `p` and `r` lines (`__trace_uprobe_create()`):
//! `p|r[:[GRP/][EVENT]] PATH:OFFSET[%return][(REF_CTR_OFFSET)] [ARGS]`,
//! checked in the kernel's order, with its errors at its places; and
//! dynprobe's places by name, `PATH:SYMBOL[+OFFS]` in place of
//! `PATH:OFFSET`, which the kernel refuses: the resolver looks the
//! function up in the file's symbol tables with the ELF reader.

use super::args::parse_args_as_written;
use super::{finish, lerr, lerr_no, parse_event_name, LErr, LResult, Outcome};
use crate::lang::def::Definition;
use crate::lang::elf::ElfError;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::fetch::{Ctx, Flags};
use crate::lang::kind::ProbeKind;
use crate::lang::lexer::Words;
use crate::lang::resolver::{Resolver, UserFile, UserFunctionError};
use crate::lang::text::{self, at, find, head, is_alpha, is_digit, mid, rfind, tail};
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
    // A digit starts an offset, as the kernel takes it; a letter or `_`
    // a function's name, which dynprobe looks up. Anything else is no
    // uprobe, as in the kernel.
    let first = at(place, colon + 1);
    let named = is_alpha(first) || first == b'_';
    if !named && !is_digit(first) {
        return Ok(Outcome::Cancel);
    }
    // A name is made of what symbols are (`puts@@GLIBC_2.2.5`, C++ and
    // Rust mangling) up to its `+OFFS`, `%return` or `(REF)`: anything
    // else (`$arg2:b4@3/32`, a kprobe line's argument) is no uprobe, as
    // the kernel has it.
    if named {
        let name = tail(place, colon + 1);
        let end = name
            .iter()
            .position(|&c| matches!(c, b'+' | b'%' | b'('))
            .unwrap_or(name.len());
        if !head(name, end).iter().all(|&c| is_symbol_byte(c)) {
            return Ok(Outcome::Cancel);
        }
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
    if named {
        out.offset = function_offset(r, path, arg, arg_at)?;
    } else {
        out.offset = text::kstrtoull_errno(arg, 0)
            .map_err(|e| lerr_no(1, ErrorCode::BadUprobeOffs, arg_at, e))?;
    }
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
    if named {
        // The place as written, which the listing shows.
        let spec =
            core::str::from_utf8(arg).map_err(|_| lerr(1, ErrorCode::UprobeNoFunc, arg_at))?;
        out.fe_text.clear();
        out.fe_text
            .push(spec)
            .map_err(|()| lerr(1, ErrorCode::UprobeNoFunc, arg_at))?;
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
        if named {
            default_named_event(out, is_return, base, arg);
        } else {
            let offset = out.offset;
            text::set_event_name_truncated(
                &mut out.event,
                format_args!("p_{}_0x{:x}", text::as_str(base), offset),
            );
        }
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

/// The file offset of `SYMBOL[+OFFS]` (`spec`, at byte `spec_at` of the
/// place) in the file `path`. The offset reads as a kprobe's does
/// (`kstrtoul()`, decimal or `0x`); the function is the resolver's to
/// find. Errors about the file point at it, those about the function at
/// its name, those about the offset at the `+`.
fn function_offset<R: Resolver>(
    r: &R,
    path: &[u8],
    spec: &[u8],
    spec_at: usize,
) -> Result<u64, LErr> {
    let (name, offs, plus_at) = match find(spec, b'+') {
        Some(plus) => {
            let offs = text::kstrtoull_errno(tail(spec, plus + 1), 0)
                .map_err(|e| lerr_no(1, ErrorCode::BadUprobeOffs, spec_at + plus + 1, e))?;
            (head(spec, plus), offs, spec_at + plus)
        }
        None => (spec, 0, spec_at),
    };
    match r.user_function(path, name, offs) {
        Ok(offset) => Ok(offset),
        Err(e) => {
            let (code, at, errno) = refusal(e);
            let at = match at {
                Blame::Path => 0,
                Blame::Name => spec_at,
                Blame::Offset => plus_at,
            };
            Err(lerr_no(1, code, at, errno))
        }
    }
}

/// What a refusal of a function by name points at.
pub(super) enum Blame {
    /// The file.
    Path,
    /// The function's name.
    Name,
    /// The `+` of its offset.
    Offset,
}

/// The error code, what it points at and the errno of a function by
/// name the resolver did not find.
pub(super) fn refusal(e: UserFunctionError) -> (ErrorCode, Blame, i32) {
    match e {
        UserFunctionError::Read(e) => (ErrorCode::UprobeReadFailed, Blame::Path, e),
        UserFunctionError::TooBig => (ErrorCode::UprobeElfTooBig, Blame::Path, errno::EFBIG),
        UserFunctionError::Elf(e) => match e {
            ElfError::Truncated
            | ElfError::BadMagic
            | ElfError::BadClass
            | ElfError::BadEndian
            | ElfError::BadVersion
            | ElfError::BadMachine
            | ElfError::BadType => (ErrorCode::UprobeNotElf, Blame::Path, errno::ENOEXEC),
            ElfError::NoSymbolTable => (ErrorCode::UprobeNoSymtab, Blame::Name, errno::ENOENT),
            ElfError::SymbolNotFound => (ErrorCode::UprobeNoFunc, Blame::Name, errno::ENOENT),
            ElfError::NotAFunction => (ErrorCode::UprobeNotFunc, Blame::Name, errno::EINVAL),
            ElfError::AmbiguousSymbol => {
                (ErrorCode::NonUniqSymbol, Blame::Name, errno::EADDRNOTAVAIL)
            }
            ElfError::OffsetPastSymbolEnd | ElfError::BadOffset => {
                (ErrorCode::UprobeOffsPastEnd, Blame::Offset, errno::EINVAL)
            }
            ElfError::BadHeaderTable
            | ElfError::SectionOutOfFile
            | ElfError::BadSectionIndex
            | ElfError::StringOutOfTable
            | ElfError::BadSymbolTable
            | ElfError::BadNote
            | ElfError::UnmappedAddress
            | ElfError::NotRead { .. } => (ErrorCode::UprobeBadElf, Blame::Path, errno::ENOEXEC),
        },
    }
}

/// The default name of an event on `PATH:SYMBOL[+OFFS]`: as a kprobe's
/// on `SYMBOL+OFFS` (`p_vfs_read_0`, `r_` for a return probe) with the
/// file's base name before the symbol: `p_libc_malloc_0`. What is not a
/// letter, a digit or `_` (`@` of a version) becomes `_`.
fn default_named_event(out: &mut Definition, is_return: bool, base: &[u8], spec: &[u8]) {
    // The offset read already when the place was resolved.
    let (name, offs) = match find(spec, b'+') {
        Some(plus) => (
            head(spec, plus),
            text::kstrtoull_errno(tail(spec, plus + 1), 0).unwrap_or(0),
        ),
        None => (spec, 0),
    };
    text::set_event_name_truncated(
        &mut out.event,
        format_args!(
            "{}_{}_{}_{}",
            if is_return { 'r' } else { 'p' },
            text::as_str(base),
            text::as_str(name),
            offs
        ),
    );
    for i in 0..out.event.len() {
        let c = at(out.event.as_bytes(), i);
        if !(c.is_ascii_alphanumeric() || c == b'_') {
            out.event.replace_ascii(i, b'_');
        }
    }
}

fn file_not_found(e: i32) -> LErr {
    lerr_no(1, ErrorCode::FileNotFound, 0, e)
}

/// `kern_path()` and `d_is_reg()` of the probed file.
pub(super) fn check_file<R: Resolver>(r: &R, path: &[u8]) -> Result<(), LErr> {
    match r.user_file(path) {
        UserFile::Regular => Ok(()),
        UserFile::NotRegular => Err(lerr(1, ErrorCode::NoRegularFile, 0)),
        UserFile::Missing(e) => Err(file_not_found(e)),
    }
}

/// A byte of an ELF symbol's name as a uprobe place takes it.
fn is_symbol_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'@' | b'$')
}
