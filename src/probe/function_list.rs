// SPDX-License-Identifier: GPL-2.0

//! The functions an `f` line's function list takes
//! ([`crate::lang::FunctionList`]): every symbol of the kernel image and of
//! the loaded modules that the list matches and ftrace can hook, by
//! address, for `register_fprobe_ips()`. fprobe's own pattern
//! (`register_fprobe()`) takes one glob and one exclusion; a list has any
//! number of each.

use core::ffi::c_void;

use kernel::ffi::{c_char, c_int, c_ulong};
use kernel::prelude::*;

use crate::lang::{sort_dedup, FunctionList};
use crate::sys::bindings as b;

/// The most functions one list may take: what the kernel's `f` takes
/// through one glob is bounded by the kernel's function count; this bound
/// keeps a list like `*` from asking ftrace for every function at once.
pub(crate) const MAX_LIST_FUNCTIONS: usize = 20_000;

/// What the kallsyms walks fill.
struct Collect<'a> {
    list: FunctionList<'a>,
    addrs: KVec<usize>,
    /// An allocation failed or the bound was passed: the walk stopped.
    error: Option<Error>,
}

/// A kallsyms walk's callback: collects the address of every symbol the
/// list matches. Data symbols and others ftrace cannot hook are sorted
/// out afterwards, outside the walk (the modules' walk holds
/// module_mutex, which ftrace's filter must not be taken under).
///
/// # Safety
///
/// `data` is a live `Collect` used by nothing else during the call;
/// `name` is NUL-terminated.
unsafe extern "C" fn collect(data: *mut c_void, name: *const c_char, addr: c_ulong) -> c_int {
    // SAFETY: `data` is the `Collect` the walk was started with, alive
    // and not otherwise used during it; `name` is a NUL-terminated
    // symbol name kallsyms keeps alive for the call.
    let (c, name) = unsafe { (&mut *data.cast::<Collect<'_>>(), CStr::from_char_ptr(name)) };
    if !c.list.matches(name.to_bytes()) {
        return 0;
    }
    if c.addrs.len() >= MAX_LIST_FUNCTIONS {
        c.error = Some(E2BIG);
        return 1;
    }
    if let Err(e) = c.addrs.push(addr, GFP_KERNEL) {
        c.error = Some(e.into());
        return 1;
    }
    0
}

/// The addresses of the functions `list` takes, sorted, each once.
/// `EOPNOTSUPP` when the kernel image's symbols cannot be walked,
/// `E2BIG` past [`MAX_LIST_FUNCTIONS`].
pub(crate) fn addresses(list: FunctionList<'_>) -> Result<KVec<usize>> {
    // SAFETY: a plain read of the flags set once at load.
    if !unsafe { b::dynprobe_ksyms.have.kallsyms_on_each_symbol } {
        return Err(Error::from_errno(-(crate::lang::errno::EOPNOTSUPP)));
    }
    let mut c = Collect {
        list,
        addrs: KVec::new(),
        error: None,
    };
    let data = core::ptr::from_mut(&mut c).cast::<c_void>();
    // SAFETY: `collect` reads `data` as the `Collect` above, which
    // outlives both walks; the walks may sleep, as this function may.
    unsafe {
        b::dynprobe_call_kallsyms_on_each_symbol(Some(collect), data);
        if c.error.is_none() {
            b::dynprobe_call_module_kallsyms_on_each_symbol(core::ptr::null(), Some(collect), data);
        }
    }
    if let Some(e) = c.error {
        return Err(e);
    }
    let mut addrs = c.addrs;
    // Aliases share an address; fprobe must see each function once, or
    // its hits would be recorded twice.
    let distinct = sort_dedup(&mut addrs);
    addrs.truncate(distinct);
    addrs.retain(|a| super::fprobe::address_traceable(*a));
    Ok(addrs)
}
