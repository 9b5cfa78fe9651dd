// SPDX-License-Identifier: GPL-2.0
//! The function event compiler: what the function event syntax read
//! becomes, a program per argument and the record layout.

use crate::lang::def::Definition;
use crate::lang::error::{function_error, ErrorCode, ParseError};
use crate::lang::record::ProbeArg;
use crate::lang::text::{self, is_reserved_field, Fields};
use crate::lang::types::{Deref, FetchType, Load, Program, Space, Store};
use crate::lang::{MAX_PROBE_EVENT_SIZE, MAX_TRACE_ARGS};

/// A type as written: a fetch type and, for an array, its length.
#[derive(Clone, Copy)]
pub(crate) struct Ty {
    pub(crate) t: FetchType,
    /// Array length; 0 when not an array.
    pub(crate) count: u32,
}

/// One indirection after a value: `+N` adds to the address, `[N]` indexes
/// elements of the argument's type (and, but for the last, loads).
#[derive(Clone, Copy)]
pub(crate) enum Ind {
    Off(i64),
    Idx(i64),
}

/// Compile a value source plus indirections (each with the column it
/// was written at) into a program.
pub(crate) fn compile(load: Load, ty: Ty, inds: &[(usize, Ind)]) -> Result<Program, ParseError> {
    let mut p = Program::empty();
    p.load = load;
    let esize = if ty.t.is_string() {
        1
    } else {
        i64::from(ty.t.size())
    };
    let is_str = ty.t.is_string();
    let array = ty.count > 0;
    p.count = u8::try_from(ty.count).unwrap_or(0);
    if inds.is_empty() {
        p.store = if is_str {
            Store::String {
                space: Space::Auto,
                offset: 0,
            }
        } else if array || matches!(load, Load::Imm(_)) {
            Store::Mem {
                space: Space::Auto,
                offset: 0,
            }
        } else {
            Store::Raw
        };
        return Ok(p);
    }
    let mut pending: i64 = 0;
    let n = inds.len();
    for (k, &(col, ind)) in inds.iter().enumerate() {
        let last = k + 1 == n;
        match ind {
            Ind::Off(o) => {
                pending = pending
                    .checked_add(o)
                    .ok_or_else(|| function_error(ErrorCode::FeBadIndex, col))?;
            }
            Ind::Idx(i) => {
                let off = i
                    .checked_mul(esize)
                    .and_then(|x| x.checked_add(pending))
                    .ok_or_else(|| function_error(ErrorCode::FeBadIndex, col))?;
                if last && !is_str {
                    p.store = Store::Mem {
                        space: Space::Auto,
                        offset: off,
                    };
                    return Ok(p);
                }
                p.push_deref(Deref::read(Space::Auto, off))
                    .map_err(|()| function_error(ErrorCode::TooManyOps, col))?;
                pending = 0;
            }
        }
    }
    p.store = if is_str {
        Store::String {
            space: Space::Auto,
            offset: pending,
        }
    } else {
        Store::Mem {
            space: Space::Auto,
            offset: pending,
        }
    };
    Ok(p)
}

/// Adds compiled arguments to a function event's definition.
pub(crate) struct Builder<'d> {
    pub(crate) def: &'d mut Definition,
    /// Building the exit event: parameters are saved at entry.
    exit: bool,
}

impl<'d> Builder<'d> {
    pub(crate) fn new(def: &'d mut Definition, exit: bool) -> Self {
        Builder { def, exit }
    }

    /// Add argument `name` (written at `name_col`), recorded by `prog`
    /// and listed as `text`.
    pub(crate) fn add(
        &mut self,
        name: &[u8],
        name_col: usize,
        ty: Ty,
        prog: Program,
        text: &str,
    ) -> Result<(), ParseError> {
        if is_reserved_field(name, Fields::Function) {
            return Err(function_error(ErrorCode::UsedArgName, name_col));
        }
        let mut a = ProbeArg::new();
        if a.name.set(text::as_str(name)).is_err() || name.len() > crate::lang::MAX_ARG_NAME_LEN {
            return Err(function_error(ErrorCode::ArgNameTooLong, name_col));
        }
        a.text.set_truncated(text);
        a.ty = ty.t;
        a.count = u8::try_from(ty.count).unwrap_or(0);
        a.fixed_string = ty.count > 0 && matches!(ty.t, FetchType::CChar | FetchType::UChar);
        a.prog = prog;
        a.offset = self.def.size;
        let size = a.size();
        let n = self.def.nargs;
        if n >= MAX_TRACE_ARGS {
            return Err(function_error(ErrorCode::TooManyArgs, name_col));
        }
        let new_size = self.def.size.saturating_add(size);
        if new_size > MAX_PROBE_EVENT_SIZE {
            return Err(function_error(ErrorCode::EventTooBig, name_col));
        }
        match self.def.arg_mut(n) {
            Some(s) => *s = a,
            None => return Err(function_error(ErrorCode::TooManyArgs, name_col)),
        }
        self.def.size = new_size;
        self.def.nargs = n + 1;
        Ok(())
    }

    /// Where parameter `slot` is read: the register at entry, or the
    /// value saved at entry for the exit event.
    pub(crate) fn param_load(&mut self, slot: u32, col: usize) -> Result<Load, ParseError> {
        if !self.exit {
            return Ok(Load::Arg(slot));
        }
        let a = u16::try_from(slot).map_err(|_| function_error(ErrorCode::TooManyArgs, col))?;
        if let Some(p) = self.def.entry_args().iter().position(|&x| x == a) {
            return Ok(Load::EntryData(p as u32));
        }
        let n = self.def.n_entry;
        if n.saturating_mul(8) >= crate::lang::MAX_FPROBE_DATA_SIZE {
            return Err(function_error(ErrorCode::TooManyEargs, col));
        }
        match self.def.entry_args.get_mut(n) {
            Some(s) => *s = a,
            None => return Err(function_error(ErrorCode::TooManyEargs, col)),
        }
        self.def.n_entry = n + 1;
        Ok(Load::EntryData(n as u32))
    }
}
