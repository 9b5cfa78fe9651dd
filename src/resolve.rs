// SPDX-License-Identifier: GPL-2.0

//! Answers the definition language's questions about the running kernel
//! (symbols, probe places) while a line is parsed.

use crate::lang::{Resolver, SymbolCheck};
use crate::sys::bindings as b;

/// Resolves through kallsyms.
pub(crate) struct KernelResolver;

/// A symbol name as a C string (KSYM_NAME_LEN is 512: longer names
/// cannot exist).
struct SymbolName([u8; 520]);

impl SymbolName {
    fn new(name: &str) -> Option<Self> {
        let mut buf = [0u8; 520];
        if name.len() >= buf.len() || name.as_bytes().contains(&0) {
            return None;
        }
        buf.get_mut(..name.len())?.copy_from_slice(name.as_bytes());
        Some(SymbolName(buf))
    }
}

impl KernelResolver {
    fn lookup(name: &str) -> Option<u64> {
        let name = SymbolName::new(name)?;
        // SAFETY: the buffer holds the name followed by a NUL.
        let addr = unsafe { b::dynprobe_lookup_symbol(name.0.as_ptr()) };
        (addr != 0).then_some(addr as u64)
    }
}

impl Resolver for KernelResolver {
    fn dentry_name_offset(&self) -> u64 {
        // SAFETY: returns a constant of the kernel's struct layout.
        unsafe { b::dynprobe_dentry_name_offset() as u64 }
    }

    fn file_dentry_offset(&self) -> u64 {
        // SAFETY: returns a constant of the kernel's struct layout.
        unsafe { b::dynprobe_file_dentry_offset() as u64 }
    }

    fn function_exists(&self, module: Option<&str>, symbol: &str) -> Option<bool> {
        if module.is_some() {
            return None;
        }
        let Some(name) = SymbolName::new(symbol) else {
            return Some(false);
        };
        // SAFETY: the buffer holds the name followed by a NUL.
        Some(unsafe { b::dynprobe_function_traceable(name.0.as_ptr()) })
    }

    /// A tracepoint that is not found may belong to a module loaded later
    /// (the kernel accepts such t probes too): only "yes" is an answer.
    fn tracepoint_exists(&self, name: &str) -> Option<bool> {
        let name = SymbolName::new(name)?;
        // SAFETY: the buffer holds the name followed by a NUL.
        unsafe { b::dynprobe_tracepoint_exists(name.0.as_ptr()) }.then_some(true)
    }

    fn symbol_address(&self, name: &str) -> Option<u64> {
        Self::lookup(name)
    }

    fn check_probe_symbol(&self, module: Option<&str>, symbol: &str) -> SymbolCheck {
        let Some(name) = SymbolName::new(symbol) else {
            return SymbolCheck::NotFound;
        };
        let module_name = match module {
            Some(m) => match SymbolName::new(m) {
                Some(m) => Some(m),
                None => return SymbolCheck::NotFound,
            },
            None => None,
        };
        let module_ptr = module_name
            .as_ref()
            .map_or(core::ptr::null(), |m| m.0.as_ptr());
        let mut module_loaded = false;
        // SAFETY: both names are NUL-terminated buffers (or null for the
        // module) that live across the call; `module_loaded` is a valid
        // place to write.
        let count =
            unsafe { b::dynprobe_count_symbols(module_ptr, name.0.as_ptr(), &mut module_loaded) };
        match count {
            // A module that is not loaded yet is checked when it loads; a
            // loaded one must have the symbol, as validate_probe_symbol()
            // requires.
            0 if module.is_some() && !module_loaded => SymbolCheck::Ok,
            0 => SymbolCheck::NotFound,
            1 => SymbolCheck::Ok,
            _ => SymbolCheck::NotUnique,
        }
    }
}
