// SPDX-License-Identifier: GPL-2.0
//! `@SYM` loads: the symbol and its offset, resolved at the end of a
//! definition.

use super::insn::range;
use crate::lang::def::Definition;
use crate::lang::resolver::Resolver;
use crate::lang::text::{self, head, tail};
use crate::lang::types::Load;

/// Split `SYM[+|-OFFS]` (`traceprobe_split_symbol_offset`).
pub(crate) fn split_symbol_offset(s: &[u8]) -> Option<(&[u8], i64)> {
    match s.iter().position(|&c| c == b'+' || c == b'-') {
        None => Some((s, 0)),
        Some(p) => Some((head(s, p), text::kstrtoll(tail(s, p), 0)?)),
    }
}

/// Resolve `@SYM` loads; `Err(())` when the offset is malformed (register
/// failure) and `Ok(false)` when a symbol is unknown.
pub(crate) fn resolve_symbols<R: Resolver>(r: &R, def: &mut Definition) -> Result<bool, ()> {
    let n = def.nargs;
    for a in def.args.iter_mut().take(n) {
        if let Load::Symbol { name, .. } = a.prog.load {
            let s = usize::from(name.start);
            let full = text::mid(
                a.text.as_bytes(),
                s,
                s.saturating_add(usize::from(name.len)),
            );
            let (sym, off) = split_symbol_offset(full).ok_or(())?;
            let sym_r = range(s, sym.len());
            match r.symbol_address(text::as_str(sym)) {
                Some(addr) => {
                    a.prog.load = Load::Symbol {
                        name: sym_r,
                        offset: off,
                        addr: addr.wrapping_add(off as u64),
                    }
                }
                None => return Ok(false),
            }
        }
    }
    Ok(true)
}
