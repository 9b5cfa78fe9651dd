// SPDX-License-Identifier: GPL-2.0

//! A kernel symbol's name as kallsyms takes it (a C string in a buffer of
//! the longest name's size), and the address kallsyms gives a name: what
//! the resolver asks of symbols and a watchpoint asks when it is armed.

use core::ffi::CStr;

use crate::sys::kernel_symbols;

/// A symbol name as a C string (KSYM_NAME_LEN is 512: longer names
/// cannot exist).
pub(super) struct SymbolName(pub(super) [u8; 520]);

impl SymbolName {
    pub(super) fn new(name: &str) -> Option<Self> {
        let mut buf = [0u8; 520];
        if name.len() >= buf.len() || name.as_bytes().contains(&0) {
            return None;
        }
        buf.get_mut(..name.len())?.copy_from_slice(name.as_bytes());
        Some(SymbolName(buf))
    }

    /// The name as a `CStr` (the buffer always ends in NUL).
    pub(super) fn c_str(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.0).unwrap_or(c"")
    }

    /// `MOD:SYM`, as kallsyms takes it.
    pub(super) fn qualified(module: &str, name: &str) -> Option<Self> {
        let mut buf = [0u8; 520];
        let colon = module.len();
        let len = colon.checked_add(1)?.checked_add(name.len())?;
        if len >= buf.len() || module.as_bytes().contains(&0) || name.as_bytes().contains(&0) {
            return None;
        }
        buf.get_mut(..colon)?.copy_from_slice(module.as_bytes());
        *buf.get_mut(colon)? = b':';
        buf.get_mut(colon + 1..len)?
            .copy_from_slice(name.as_bytes());
        Some(SymbolName(buf))
    }

    pub(super) fn with_prefix(prefix: &str, name: &str) -> Option<Self> {
        let mut buf = [0u8; 520];
        let len = prefix.len().checked_add(name.len())?;
        if len >= buf.len() || name.as_bytes().contains(&0) {
            return None;
        }
        buf.get_mut(..prefix.len())?
            .copy_from_slice(prefix.as_bytes());
        buf.get_mut(prefix.len()..len)?
            .copy_from_slice(name.as_bytes());
        Some(SymbolName(buf))
    }
}

/// The address of symbol `name` (`SYM` or `MOD:SYM`), if kallsyms knows it.
pub(super) fn address(name: &str) -> Option<u64> {
    let name = SymbolName::new(name)?;
    let addr = kernel_symbols::lookup(name.c_str());
    (addr != 0).then_some(addr as u64)
}
