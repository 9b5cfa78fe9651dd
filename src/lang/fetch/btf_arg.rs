// SPDX-License-Identifier: GPL-2.0
//! BTF arguments: a parameter or member named by BTF (`parse_btf_arg()`,
//! `parse_btf_field()`) and the fetch type BTF gives it.

use super::entry_arg::store_entry_arg;
use super::insn::{op, set, Code, END_SLOT, K};
use super::{err, err_no, AErr, Ctx};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};
use crate::lang::resolver::{BtfMember, BtfType, Resolver};
use crate::lang::text::{self, at, head, tail};
use crate::lang::types::FetchType;

pub(super) fn btf_fetch_type<R: Resolver>(ctx: &mut Ctx<'_, R>, t: BtfType) -> FetchType {
    match t {
        BtfType::Enum => FetchType::S32,
        BtfType::Enum64 => FetchType::S64,
        BtfType::Ptr { .. } => FetchType::X64,
        BtfType::Int {
            bits,
            signed,
            offset,
        } => {
            if signed {
                match bits {
                    8 => FetchType::S8,
                    16 => FetchType::S16,
                    32 => FetchType::S32,
                    64 => FetchType::S64,
                    _ => FetchType::X64,
                }
            } else {
                match bits {
                    8 => FetchType::U8,
                    16 => FetchType::U16,
                    32 => FetchType::U32,
                    64 => FetchType::U64,
                    _ => {
                        ctx.last_bitsize = u32::from(bits);
                        ctx.last_bitoffs = ctx.last_bitoffs.saturating_add(u32::from(offset));
                        FetchType::U64
                    }
                }
            }
        }
        _ => FetchType::X64,
    }
}

pub(super) fn is_uchar<R: Resolver>(ctx: &Ctx<'_, R>, id: u32) -> bool {
    matches!(
        ctx.r.btf_type(id),
        Some(BtfType::Int {
            bits: 8,
            signed: false,
            ..
        })
    )
}

/// `check_prepare_btf_string_fetch()`.
pub(super) fn check_btf_string<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    code: &mut Code,
    pc: usize,
    typename: &[u8],
) -> Result<usize, AErr> {
    let lt = match ctx.last_type {
        None => return Ok(pc),
        Some((t, _)) => t,
    };
    if let BtfType::Array { elem } = lt {
        if is_uchar(ctx, elem) {
            return Ok(pc);
        }
    }
    if let BtfType::Ptr { target } = lt {
        if is_uchar(ctx, target) {
            let n = pc + 1;
            if op(code, n) == K::End {
                return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
            }
            let k = if at(typename, 0) == b'u' {
                K::UDeref(0)
            } else {
                K::Deref(0)
            };
            set(code, n, k);
            return Ok(n);
        }
    }
    err(ErrorCode::BadType4str, ctx.offset)
}

/// `split_next_field()`: (name length, next field start, is arrow).
pub(super) fn split_next_field<R: Resolver>(
    ctx: &Ctx<'_, R>,
    s: &[u8],
) -> Result<(usize, Option<usize>, bool), AErr> {
    match s.iter().position(|&c| c == b'.' || c == b'-') {
        None => Ok((s.len(), None, false)),
        Some(p) => {
            if at(s, p) == b'-' {
                if at(s, p + 1) == b'>' {
                    Ok((p, Some(p + 2), true))
                } else {
                    err(ErrorCode::BadHyphen, ctx.offset + p)
                }
            } else {
                Ok((p, Some(p + 1), false))
            }
        }
    }
}

/// `parse_btf_arg()`.
pub(super) fn parse_btf_arg<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    def: &mut Definition,
    code: &mut Code,
    pc: usize,
    varname: &[u8],
) -> Result<usize, AErr> {
    if ctx.funcname.is_none() && !varname.starts_with(b"$current") {
        return Err(AErr {
            code: ErrorCode::BadFetchArg,
            offset: ctx.offset,
            errno: errno::EINVAL,
            logged: false,
        });
    }
    let (nlen, field, is_ptr) = split_next_field(ctx, varname)?;
    if !is_ptr {
        if let Some(f) = field {
            return err_no(ErrorCode::NosupDatArg, ctx.offset + f, errno::EOPNOTSUPP);
        }
    }
    let name = head(varname, nlen);
    let tid;
    if name == b"$current" {
        set(code, pc, K::Current);
        // Its members are task_struct's: the first field is looked up in
        // the structure, as behind a pointer to it.
        let task = match ctx.r.btf_struct("task_struct") {
            Some(id) => id,
            None => return err_no(ErrorCode::NoBtfEntry, ctx.offset, errno::ENOENT),
        };
        return members_of(
            ctx,
            code,
            pc,
            (BtfType::Ptr { target: task }, task),
            varname,
            field,
        );
    }
    if ctx.flags.ret && name == b"$retval" {
        set(code, pc, K::Retval);
        match ctx.query_btf() {
            Some(b) => {
                if b.ret_type == 0 {
                    return err_no(ErrorCode::NoRetval, ctx.offset, errno::ENOENT);
                }
                tid = b.ret_type;
            }
            None => {
                if let Some(f) = field {
                    return err_no(ErrorCode::NoBtfEntry, ctx.offset + f, errno::ENOENT);
                }
                return Ok(pc);
            }
        }
    } else {
        let b = match ctx.query_btf() {
            Some(b) if b.nr_params > 0 => b,
            _ => return err_no(ErrorCode::NoBtfEntry, ctx.offset, errno::ENOENT),
        };
        let mut found = None;
        for i in 0..b.nr_params {
            if let Some((pn, t)) = ctx.btf_param(i) {
                if pn.as_bytes() == name {
                    found = Some((i, t));
                    break;
                }
            }
        }
        let (i, t) = match found {
            Some(x) => x,
            None => return err_no(ErrorCode::NoBtfarg, ctx.offset, errno::ENOENT),
        };
        if ctx.flags.is_function_entry() {
            let p = if ctx.flags.tpoint {
                i.saturating_add(1)
            } else {
                i
            };
            set(code, pc, K::Arg(p));
        } else if ctx.flags.is_function_return() {
            let slot = store_entry_arg(def, i)?;
            set(code, pc, K::Edata(slot));
        }
        tid = t;
    }
    let ty = match ctx.r.btf_type(tid) {
        Some(t) => t,
        None => return err(ErrorCode::BadBtfTid, ctx.offset),
    };
    members_of(ctx, code, pc, (ty, tid), varname, field)
}

/// From a value of type `ty` (with its id), the members `varname` names
/// from byte `field` on, if any (`parse_btf_arg()`'s `found_type`).
pub(super) fn members_of<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    code: &mut Code,
    pc: usize,
    ty: (BtfType, u32),
    varname: &[u8],
    field: Option<usize>,
) -> Result<usize, AErr> {
    ctx.last_type = Some(ty);
    ctx.last_bitoffs = 0;
    ctx.last_bitsize = 0;
    match field {
        Some(f) => {
            ctx.offset += f;
            parse_btf_field(ctx, code, pc, tail(varname, f))
        }
        None => Ok(pc),
    }
}

/// Member `name` of struct/union `id`, with the errors
/// `get_bitoffset_of_field()` logs at the member.
pub(super) fn btf_member<R: Resolver>(
    ctx: &Ctx<'_, R>,
    id: u32,
    name: &[u8],
) -> Result<BtfMember, AErr> {
    match ctx.r.btf_member(id, text::as_str(name)) {
        Err(_) => err(ErrorCode::BadBtfTid, ctx.offset),
        Ok(None) => err_no(ErrorCode::NoBtfField, ctx.offset, errno::ENOENT),
        Ok(Some(m)) => Ok(m),
    }
}

/// `parse_btf_field()`.
pub(super) fn parse_btf_field<R: Resolver>(
    ctx: &mut Ctx<'_, R>,
    code: &mut Code,
    pc: usize,
    fieldname: &[u8],
) -> Result<usize, AErr> {
    let mut pc = pc;
    let (mut ty, _) = match ctx.last_type {
        Some(t) => t,
        None => return err(ErrorCode::BadBtfTid, ctx.offset),
    };
    let mut fieldname = Some(fieldname);
    let mut guard = 0u32;
    while let Some(fname) = fieldname {
        guard += 1;
        if guard > 64 {
            return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
        }
        let mut cur_id = match ty {
            BtfType::Ptr { target } => target,
            _ => return err(ErrorCode::NoPtrStrct, ctx.offset),
        };
        if ctx.r.btf_type(cur_id).is_none() {
            return err(ErrorCode::BadBtfTid, ctx.offset);
        }
        let mut bitoffs: u32 = 0;
        let mut fname = fname;
        loop {
            guard += 1;
            if guard > 64 {
                return err_no(ErrorCode::TooManyOps, ctx.offset, errno::E2BIG);
            }
            let (nlen, next, is_ptr) = split_next_field(ctx, fname)?;
            let m = btf_member(ctx, cur_id, head(fname, nlen))?;
            bitoffs = bitoffs.saturating_add(m.bit_offset);
            ctx.last_bitsize = m.bitfield_size;
            ty = match ctx.r.btf_type(m.ty) {
                Some(t) => t,
                None => return err(ErrorCode::BadBtfTid, ctx.offset),
            };
            cur_id = m.ty;
            match next {
                Some(n) => {
                    ctx.offset += n;
                    fname = tail(fname, n);
                    fieldname = Some(fname);
                }
                None => fieldname = None,
            }
            if is_ptr || next.is_none() {
                break;
            }
        }
        pc += 1;
        if pc == END_SLOT {
            return err(ErrorCode::TooManyOps, ctx.offset);
        }
        set(code, pc, K::Deref(i64::from(bitoffs / 8)));
        ctx.last_bitoffs = bitoffs % 8;
        ctx.last_type = Some((ty, cur_id));
    }
    Ok(pc)
}
