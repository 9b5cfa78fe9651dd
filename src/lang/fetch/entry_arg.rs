// SPDX-License-Identifier: GPL-2.0
//! The entry data an exit event keeps: which parameters are saved at
//! function entry, one slot each, for `$argN` and BTF arguments of a
//! return probe (`__store_entry_arg()`).

use super::{err_no, AErr};
use crate::lang::def::Definition;
use crate::lang::error::{errno, ErrorCode};

/// `__store_entry_arg()`: the entry-data slot of parameter `argnum`.
pub(super) fn store_entry_arg(def: &mut Definition, argnum: u32) -> Result<u32, AErr> {
    let a = u16::try_from(argnum).unwrap_or(u16::MAX);
    if let Some(p) = def.entry_args().iter().position(|&x| x == a) {
        return Ok(p as u32);
    }
    let n = def.n_entry;
    match def.entry_args.get_mut(n) {
        Some(s) => *s = a,
        None => return err_no(ErrorCode::TooManyEargs, 0, errno::E2BIG),
    }
    def.n_entry = n + 1;
    Ok(n as u32)
}
