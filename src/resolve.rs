// SPDX-License-Identifier: GPL-2.0

//! Answers the definition language's questions about the running kernel
//! (symbols, probe places) while a line is parsed.

use crate::lang::{Resolver, SymbolCheck};
use crate::sys::bindings as b;

/// Resolves through kallsyms.
pub(crate) struct KernelResolver;

impl KernelResolver {
    fn lookup(name: &str) -> Option<u64> {
        // KSYM_NAME_LEN is 512; longer names cannot exist.
        let mut buf = [0u8; 520];
        let dst = buf.get_mut(..name.len())?;
        dst.copy_from_slice(name.as_bytes());
        if name.as_bytes().contains(&0) {
            return None;
        }
        // SAFETY: `buf` holds the name followed by at least one NUL.
        let addr = unsafe { b::dynprobe_lookup_symbol(buf.as_ptr()) };
        (addr != 0).then_some(addr as u64)
    }
}

impl Resolver for KernelResolver {
    fn symbol_address(&self, name: &str) -> Option<u64> {
        Self::lookup(name)
    }

    fn check_probe_symbol(&self, module: Option<&str>, symbol: &str) -> SymbolCheck {
        // A symbol of a module that is not loaded is checked when the
        // probe registers, as the kernel does.
        if module.is_some() {
            return SymbolCheck::Ok;
        }
        if Self::lookup(symbol).is_some() {
            SymbolCheck::Ok
        } else {
            SymbolCheck::NotFound
        }
    }
}
