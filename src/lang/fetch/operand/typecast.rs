// SPDX-License-Identifier: GPL-2.0
//! 7.3's BTF typecasts (`handle_typecast()`, `parse_btf_casttype()`):
//! `(STRUCT)VAR->M...` reads members of the structure VAR points to;
//! `(STRUCT,FIELD[.F2])VAR->M` takes VAR as pointing at FIELD inside
//! STRUCT (container_of); VAR may be parenthesized (and hold another
//! typecast), a dereference or a per-CPU form. Spoken on every kernel.
//! A part of an operand: VAR is an operand again ([`parse_fetch`]).

use super::{check_nesting, parse_fetch, THIS_CPU_PTR, THIS_CPU_READ};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::fetch::btf_arg::{btf_member, members_of, split_next_field};
use crate::lang::fetch::insn::{op, set, Code, K};
use crate::lang::fetch::{err, err_no, AErr, Ctx};
use crate::lang::resolver::{BtfType, Resolver};
use crate::lang::text::{self, at, find, head, is_digit, tail};

/// The index of the `)` that closes the `(` at `open` in `s`.
fn matched_close(s: &[u8], open: usize) -> Option<usize> {
    let mut count = 0u32;
    for (i, &c) in s.iter().enumerate().skip(open) {
        match c {
            b'(' => count += 1,
            b')' => {
                count = count.checked_sub(1)?;
                if count == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Where a typecast's parts are, in bytes from its `(`.
struct Parts {
    /// The cast type (`STRUCT[,FIELD]`) is `1..cast_end`.
    cast_end: usize,
    /// The inner argument.
    inner: core::ops::Range<usize>,
    /// The member path after `->`.
    field: usize,
}

/// `handle_typecast()`'s checks, made before the inner argument is parsed.
fn split_typecast<R: Resolver>(ctx: &mut Ctx<'_, R>, arg: &[u8]) -> Result<Parts, AErr> {
    let cast_end = match find(arg, b')') {
        Some(p) => p,
        None => return err(ErrorCode::DerefOpenBrace, ctx.offset + arg.len()),
    };
    let start = cast_end + 1;
    let rest = tail(arg, start);
    ctx.offset += start;
    let arrow_at = |i: usize| at(rest, i) == b'-' && at(rest, i + 1) == b'>';
    let (inner, field) = if at(rest, 0) == b'(' {
        // (STRUCT)(VAR)->M: VAR is anything, another typecast too.
        let close = match matched_close(rest, 0) {
            Some(c) => c,
            None => return err(ErrorCode::DerefOpenBrace, ctx.offset),
        };
        if !arrow_at(close + 1) {
            return err(ErrorCode::TypecastReqField, ctx.offset + close + 1);
        }
        ctx.offset += 1;
        (1..close, close + 3)
    } else if matches!(at(rest, 0), b'+' | b'-')
        || rest.starts_with(THIS_CPU_PTR)
        || rest.starts_with(THIS_CPU_READ)
    {
        // A dereference or per-CPU form, which may hold a typecast too.
        let open = match find(tail(rest, 1), b'(') {
            Some(p) => p + 1,
            None => return err(ErrorCode::DerefNeedBrace, ctx.offset),
        };
        let close = match matched_close(rest, open) {
            Some(c) => c + 1,
            None => return err(ErrorCode::DerefOpenBrace, ctx.offset + rest.len()),
        };
        if !arrow_at(close) {
            return err(ErrorCode::TypecastReqField, ctx.offset + close);
        }
        (0..close, close + 2)
    } else {
        if at(rest, 0) == b'@' {
            // @SYM+OFFS would read as a member path: it needs parentheses.
            if let Some(p) = rest.iter().position(|&c| c == b'+' || c == b'-') {
                if is_digit(at(rest, p + 1)) {
                    return err(ErrorCode::TypecastSymOffset, ctx.offset);
                }
            }
        }
        match find(rest, b'-') {
            Some(p) if at(rest, p + 1) == b'>' => (0..p, p + 2),
            _ => return err(ErrorCode::TypecastReqField, ctx.offset + rest.len()),
        }
    };
    Ok(Parts {
        cast_end,
        inner: start + inner.start..start + inner.end,
        field: start + field,
    })
}

/// `get_bitoffset_of_field()` for a cast's FIELD option: the bit offset
/// of a `.`-connected member path inside structure `id`, and whether the
/// path went on past a `->`.
fn member_path_bits<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    id: u32,
    path: &[u8],
) -> Result<(u32, bool), AErr> {
    let mut bits = 0u32;
    let mut id = id;
    let mut path = path;
    loop {
        let (nlen, next, is_ptr) = split_next_field(ctx, path)?;
        let m = btf_member(ctx, id, head(path, nlen))?;
        bits = bits.saturating_add(m.bit_offset);
        ctx.last_bitsize = m.bitfield_size;
        if ctx.r.btf_type(m.ty).is_none() {
            return err(ErrorCode::BadBtfTid, ctx.offset);
        }
        id = m.ty;
        match next {
            Some(n) => {
                ctx.offset += n;
                path = tail(path, n);
                if is_ptr {
                    return Ok((bits, true));
                }
            }
            None => return Ok((bits, false)),
        }
    }
}

/// `(STRUCT[,FIELD])INNER->M...`, from its `(` (`arg`): parses INNER,
/// then reads the members from the structure it points to.
#[inline(never)]
pub(super) fn parse_typecast<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    code: &mut Code,
    pc: usize,
    arg: &[u8],
    abs: usize,
    depth: u32,
) -> Result<usize, AErr> {
    check_nesting(ctx, depth)?;
    if !(ctx.flags.tevent || ctx.flags.is_function_entry() || ctx.flags.is_function_return()) {
        return err_no(ErrorCode::NosupBtfarg, ctx.offset, errno::EOPNOTSUPP);
    }
    let orig = ctx.offset;
    let parts = split_typecast(ctx, arg)?;
    let inner = arg.get(parts.inner.clone()).unwrap_or(&[]);
    let pc = parse_fetch(
        ctx,
        def,
        code,
        pc,
        inner,
        abs + parts.inner.start,
        depth + 1,
    )?;

    // The structure, and the FIELD option's offset inside it.
    let cast = arg.get(1..parts.cast_end).unwrap_or(&[]);
    let (sname, option) = match find(cast, b',') {
        Some(p) => (head(cast, p), Some((p + 1, tail(cast, p + 1)))),
        None => (cast, None),
    };
    ctx.offset = orig + 1;
    let sid = match ctx.r.btf_struct(text::as_str(sname)) {
        Some(id) => id,
        None => return err(ErrorCode::NoPtrStrct, ctx.offset),
    };
    let mut prefix = 0i64;
    if let Some((at_option, path)) = option {
        ctx.offset += at_option;
        let (bits, past_arrow) = member_path_bits(ctx, sid, path)?;
        if bits % 8 != 0 {
            return err(ErrorCode::TypecastNotAligned, ctx.offset);
        }
        if past_arrow {
            return err(ErrorCode::TypecastBadArrow, ctx.offset.saturating_sub(2));
        }
        prefix = i64::from(bits / 8);
    }

    // The members, the first looked up in the structure itself.
    ctx.offset = orig;
    let first = pc + 1;
    let ty = (BtfType::Ptr { target: sid }, sid);
    let pc = members_of(ctx, code, pc, ty, arg, Some(parts.field))?;
    if let K::Deref(o) = op(code, first) {
        set(code, first, K::Deref(o - prefix));
    }
    Ok(pc)
}
