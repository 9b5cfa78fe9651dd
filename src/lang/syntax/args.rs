// SPDX-License-Identifier: GPL-2.0
//! The fetch arguments of a probe line: `$argN`/`$arg*` expanded over the
//! function's BTF (`traceprobe_expand_meta_args()`), each argument's
//! name and text, then each to the fetch compiler.

use core::fmt::Write;

use super::{lerr, lerr_no, LErr};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::fetch::{self, AErr, Ctx};
use crate::lang::lexer::Words;
use crate::lang::resolver::Resolver;
use crate::lang::text::{self, at, find, head, is_digit, tail, write_lossy, Str};
use crate::lang::{MAX_BTF_ARGS_LEN, MAX_DENTRY_ARGS_LEN, MAX_TRACE_ARGS};

/// Where argument `j` of the expanded list comes from.
#[derive(Clone, Copy)]
pub(super) enum Src {
    Orig(usize),
    BtfParam(u32),
}

/// The result of `traceprobe_expand_meta_args()`.
pub(super) struct Meta {
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
pub(super) struct Args<'a> {
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

pub(super) fn expand_meta<R: Resolver>(ctx: &mut Ctx<'_, R>, args: Args<'_>) -> Result<Meta, LErr> {
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
pub(super) const LONG_ARG: usize = crate::lang::MAX_ARGSTR_CAP + 1;
/// Room for an argument's text: a name of up to `MAX_ARG_NAME_LEN` bytes,
/// `=` and `LONG_ARG` bytes, even when every byte takes two there (bytes
/// that are not UTF-8 are kept as two-byte characters).
pub(super) const ARGBUF: usize = 2 * (crate::lang::MAX_ARG_NAME_LEN + 1 + LONG_ARG);

/// Text of expanded argument `j` (BTF names and `%pd`/`%pD` applied).
pub(super) fn arg_text<R: Resolver>(
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

pub(super) fn parse_args<R: Resolver>(
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

/// The fetch arguments of a line whose kind expands neither `$arg*` nor
/// `:%pd` (uprobes; watchpoints, as the series does): each word after the
/// place goes to the argument parser as written, and a refusal points at
/// its word.
pub(super) fn parse_args_as_written<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    out: &mut Definition,
    line: &[u8],
) -> Result<(), LErr> {
    for (j, a) in Words::new(line).skip(2).enumerate() {
        ctx.offset = 0;
        fetch::parse_probe_arg(ctx, out, j, a).map_err(|e| LErr { index: j + 2, e })?;
    }
    Ok(())
}
