// SPDX-License-Identifier: GPL-2.0

//! Walks of the kernel's symbols: the functions an `f` line's function
//! list takes ([`crate::lang::FunctionList`]), every symbol of the kernel
//! image and of the loaded modules that the list matches and ftrace can
//! hook, by address, for `register_fprobe_ips()` (fprobe's own pattern,
//! `register_fprobe()`, takes one glob and one exclusion; a list has any
//! number of each); and the compiler's copies of a function whose own
//! name has no symbol ([`entry_copies`]).
//!
//! A list is compiled once, when its hook is made ([`ListMatcher`]), and
//! its bound cost ([`crate::lang::MAX_LIST_COST`]) was checked when it was
//! parsed. The kernel image's functions do not change: they are found
//! then, outside event_mutex ([`kernel_functions`]), and kept. Modules
//! come and go, so theirs are found at each enable ([`addresses`],
//! under event_mutex), each module held from the walk that finds its
//! functions until the fprobe is registered ([`ModuleHolds`]).

use core::ffi::c_void;

use kernel::alloc::KVVec;
use kernel::ffi::{c_char, c_int, c_ulong};
use kernel::prelude::*;

use crate::lang::{
    is_entry_copy_of, sort_dedup, CompiledList, Copies, FunctionList, ListItem, ListShape, Str,
};
use crate::sys::bindings as b;

/// The most functions one list may take: what the kernel's `f` takes
/// through one glob is bounded by the kernel's function count; this bound
/// keeps a list like `*` from asking ftrace for every function at once.
pub(crate) const MAX_LIST_FUNCTIONS: usize = 20_000;

/// A function list compiled for the walks: its items, sorted for
/// matching, made once from the list's text (which the definition keeps).
pub(crate) struct ListMatcher {
    items: KVec<ListItem>,
    shape: ListShape,
}

impl ListMatcher {
    pub(crate) fn new(list: FunctionList<'_>) -> Result<Self> {
        let mut items = KVec::from_elem(ListItem::default(), list.item_count(), GFP_KERNEL)?;
        let shape = list.compile_into(&mut items).ok_or(EINVAL)?;
        Ok(ListMatcher { items, shape })
    }

    /// The list compiled, for `text`, the list it was made from.
    pub(crate) fn compiled<'a>(&'a self, text: &'a [u8]) -> CompiledList<'a, 'a> {
        CompiledList::new(text, &self.items, self.shape)
    }
}

/// References on the modules whose functions an fprobe is about to be
/// registered on, taken by the walk that finds them and dropped once the
/// registration is done (src/shim/fprobe.c, dynprobe_hold_live_module()).
/// Dropping it only puts the references: it allocates nothing.
pub(crate) struct ModuleHolds {
    modules: KVec<*mut b::module>,
}

impl ModuleHolds {
    pub(crate) fn new() -> Self {
        ModuleHolds {
            modules: KVec::new(),
        }
    }

    /// Holds the module whose text has `addr`, a symbol a walk found:
    /// `Ok(true)` when the address may be hooked (the kernel image's, or
    /// a live module's, now held), `Ok(false)` when it must not (module
    /// data, or a module loading or going).
    fn hold(&mut self, addr: usize) -> Result<bool> {
        if let Some(&last) = self.modules.last() {
            // SAFETY: `last` is held: it is not freed.
            if unsafe { b::dynprobe_within_module(addr, last) } {
                return Ok(true);
            }
        }
        // SAFETY: takes a reference only on a live module, which the
        // drop puts.
        let module = unsafe { b::dynprobe_hold_live_module(addr) };
        match kernel::error::from_err_ptr(module) {
            Ok(m) if m.is_null() => Ok(true),
            Ok(m) => {
                if let Err(e) = self.modules.push(m, GFP_KERNEL) {
                    // SAFETY: the reference just taken, kept nowhere.
                    unsafe { b::module_put(m) };
                    return Err(e.into());
                }
                Ok(true)
            }
            Err(e) if e == ENOENT => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl Drop for ModuleHolds {
    fn drop(&mut self) {
        for &m in self.modules.iter() {
            // SAFETY: each was taken by `hold` and is put once.
            unsafe { b::module_put(m) };
        }
    }
}

/// What the kallsyms walks fill.
struct Collect<'l, 'h> {
    list: CompiledList<'l, 'l>,
    addrs: KVec<usize>,
    /// For a registration: the modules of the addresses taken, held.
    holds: Option<&'h mut ModuleHolds>,
    /// Stop at the first function ftrace can hook (whether the list takes
    /// any): only in the kernel image's walk, which holds no lock.
    first_traceable: bool,
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
    let (c, name) = unsafe {
        (
            &mut *data.cast::<Collect<'_, '_>>(),
            CStr::from_char_ptr(name),
        )
    };
    if !c.list.matches(name.to_bytes()) {
        return 0;
    }
    // A symbol's address (c_ulong is usize in the kernel's crate).
    let addr: usize = addr;
    if let Some(holds) = c.holds.as_deref_mut() {
        match holds.hold(addr) {
            Ok(true) => {}
            Ok(false) => return 0,
            Err(e) => {
                c.error = Some(e);
                return 1;
            }
        }
    }
    if c.first_traceable && !super::traceable::address_traceable(addr) {
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
    i32::from(c.first_traceable)
}

/// Which symbols a walk goes through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    KernelImage,
    Modules,
}

/// The addresses of the symbols `list` matches in `which` symbols, in
/// the walk's order (maybe the same twice); the first ftrace can hook
/// only, with `first_traceable`.
fn walk(
    list: &CompiledList<'_, '_>,
    which: Walk,
    holds: Option<&mut ModuleHolds>,
    first_traceable: bool,
) -> Result<KVec<usize>> {
    let mut c = Collect {
        list: *list,
        addrs: KVec::new(),
        holds,
        first_traceable,
        error: None,
    };
    let data = core::ptr::from_mut(&mut c).cast::<c_void>();
    // SAFETY: `collect` reads `data` as the `Collect` above, which
    // outlives the walk; the walks may sleep, as this function may. The
    // flag is set once at load.
    unsafe {
        match which {
            Walk::KernelImage if !b::dynprobe_ksyms.have.kallsyms_on_each_symbol => {
                return Err(Error::from_errno(-(crate::lang::errno::EOPNOTSUPP)));
            }
            Walk::KernelImage => {
                b::dynprobe_call_kallsyms_on_each_symbol(Some(collect), data);
            }
            Walk::Modules => {
                b::dynprobe_call_module_kallsyms_on_each_symbol(
                    core::ptr::null(),
                    Some(collect),
                    data,
                );
            }
        }
    }
    match c.error {
        Some(e) => Err(e),
        None => Ok(c.addrs),
    }
}

/// `addrs` sorted, each once, and only those ftrace can hook. Aliases
/// share an address; fprobe must see each function once, or its hits
/// would be recorded twice.
fn hookable(mut addrs: KVec<usize>) -> KVec<usize> {
    let distinct = sort_dedup(&mut addrs);
    addrs.truncate(distinct);
    addrs.retain(|a| super::traceable::address_traceable(*a));
    addrs
}

/// The functions of the kernel image `list` takes, sorted, each once:
/// found when the hook is made and kept, since the kernel image's
/// functions stay. `EOPNOTSUPP` when its symbols cannot be walked,
/// `E2BIG` past [`MAX_LIST_FUNCTIONS`].
pub(crate) fn kernel_functions(list: &CompiledList<'_, '_>) -> Result<KVVec<usize>> {
    let addrs = hookable(walk(list, Walk::KernelImage, None, false)?);
    let mut kept = KVVec::with_capacity(addrs.len(), GFP_KERNEL)?;
    kept.extend_from_slice(&addrs, GFP_KERNEL)?;
    Ok(kept)
}

/// The addresses an fprobe on `list` registers now: `kernel` (the kernel
/// image's, from [`kernel_functions`]) and those of the loaded modules,
/// each module held in `holds` until the caller has registered them.
/// `E2BIG` past [`MAX_LIST_FUNCTIONS`] in all.
pub(crate) fn addresses(
    kernel: &[usize],
    list: &CompiledList<'_, '_>,
    holds: &mut ModuleHolds,
) -> Result<KVVec<usize>> {
    let modules = hookable(walk(list, Walk::Modules, Some(holds), false)?);
    let total = kernel.len().saturating_add(modules.len());
    if total > MAX_LIST_FUNCTIONS {
        return Err(E2BIG);
    }
    let mut addrs = KVVec::with_capacity(total, GFP_KERNEL)?;
    addrs.extend_from_slice(kernel, GFP_KERNEL)?;
    addrs.extend_from_slice(&modules, GFP_KERNEL)?;
    Ok(addrs)
}

/// Whether `list` takes a function ftrace can hook (the definition's
/// check): the kernel image's walk stops at the first.
pub(crate) fn takes_a_function(list: &CompiledList<'_, '_>) -> bool {
    match walk(list, Walk::KernelImage, None, true) {
        Ok(first) if !first.is_empty() => true,
        // Without the kernel image's walk, no list is hooked.
        Err(_) => false,
        Ok(_) => walk(list, Walk::Modules, None, false).is_ok_and(|a| !hookable(a).is_empty()),
    }
}

/// What a walk for the compiler's copies of one function finds.
struct CopyWalk<'a> {
    base: &'a [u8],
    /// The first copy: its address and name.
    first: Option<(usize, KVec<u8>)>,
    /// Another copy (another name or address) was seen.
    several: bool,
}

/// A kallsyms walk's callback for [`entry_copies`].
///
/// # Safety
///
/// `data` is a live `CopyWalk` used by nothing else during the call;
/// `name` is NUL-terminated.
unsafe extern "C" fn find_copy(data: *mut c_void, name: *const c_char, addr: c_ulong) -> c_int {
    // SAFETY: per the function's contract.
    let (w, name) = unsafe { (&mut *data.cast::<CopyWalk<'_>>(), CStr::from_char_ptr(name)) };
    let name = name.to_bytes();
    if !is_entry_copy_of(name, w.base) {
        return 0;
    }
    match &w.first {
        None => {
            let mut copy = KVec::new();
            if copy.extend_from_slice(name, GFP_KERNEL).is_err() {
                // Cannot name it: as good as ambiguous.
                w.several = true;
                return 1;
            }
            w.first = Some((addr, copy));
            0
        }
        // An alias of the first copy.
        Some((a, n)) if *a == addr && n.as_slice() == name => 0,
        Some(_) => {
            w.several = true;
            1
        }
    }
}

/// The copies GCC made of `base` that keep its entry (`base.isra.0`,
/// `base.constprop.0`: [`is_entry_copy_of`]), in the kernel image and the
/// loaded modules, or in `module`'s; the one copy's name goes to `out`.
pub(crate) fn entry_copies(
    module: Option<&core::ffi::CStr>,
    base: &[u8],
    out: &mut Str<{ crate::lang::SYMBOL_CAP }>,
) -> Copies {
    let mut w = CopyWalk {
        base,
        first: None,
        several: false,
    };
    let data = core::ptr::from_mut(&mut w).cast::<c_void>();
    // SAFETY: `find_copy` reads `data` as the `CopyWalk` above, which
    // outlives both walks; the flags are set once at load. The walks may
    // sleep, as the parser's callers may.
    unsafe {
        if module.is_none() && b::dynprobe_ksyms.have.kallsyms_on_each_symbol {
            b::dynprobe_call_kallsyms_on_each_symbol(Some(find_copy), data);
        }
        if !w.several {
            let m = module.map_or(core::ptr::null(), |m| m.as_char_ptr());
            b::dynprobe_call_module_kallsyms_on_each_symbol(m, Some(find_copy), data);
        }
    }
    match (w.several, w.first) {
        (true, _) => {
            log_copies(module, base);
            Copies::Several
        }
        (false, None) => Copies::None,
        (false, Some((_, name))) => match core::str::from_utf8(&name) {
            Ok(name) if core::fmt::Write::write_str(out, name).is_ok() => Copies::One,
            _ => Copies::None,
        },
    }
}

/// The most distinct copy names [`log_copies`] lists.
const MAX_LOGGED_COPIES: usize = 16;

/// What a walk for [`log_copies`] collects: each copy's name, with how
/// many functions have it (static functions of several files can share
/// one).
struct CopyNames<'a> {
    base: &'a [u8],
    names: KVec<(KVec<u8>, usize)>,
}

/// A kallsyms walk's callback for [`log_copies`].
///
/// # Safety
///
/// `data` is a live `CopyNames` used by nothing else during the call;
/// `name` is NUL-terminated.
unsafe extern "C" fn collect_copy_name(
    data: *mut c_void,
    name: *const c_char,
    _addr: c_ulong,
) -> c_int {
    // SAFETY: per the function's contract.
    let (w, name) = unsafe {
        (
            &mut *data.cast::<CopyNames<'_>>(),
            CStr::from_char_ptr(name),
        )
    };
    let name = name.to_bytes();
    if !is_entry_copy_of(name, w.base) {
        return 0;
    }
    if let Some(seen) = w.names.iter_mut().find(|(n, _)| n.as_slice() == name) {
        seen.1 += 1;
        return 0;
    }
    if w.names.len() >= MAX_LOGGED_COPIES {
        return 1;
    }
    let mut copy = KVec::new();
    if copy.extend_from_slice(name, GFP_KERNEL).is_err()
        || w.names.push((copy, 1), GFP_KERNEL).is_err()
    {
        return 1;
    }
    0
}

/// Lists in the kernel log the copies that made `base` ambiguous
/// (`SEVERAL_COPIES`): the error log's messages are fixed texts, so the
/// names to pick from go there. Only a refused line walks again.
fn log_copies(module: Option<&core::ffi::CStr>, base: &[u8]) {
    let mut w = CopyNames {
        base,
        names: KVec::new(),
    };
    let data = core::ptr::from_mut(&mut w).cast::<c_void>();
    // SAFETY: `collect_copy_name` reads `data` as the `CopyNames` above,
    // which outlives both walks; the flags are set once at load.
    unsafe {
        if module.is_none() && b::dynprobe_ksyms.have.kallsyms_on_each_symbol {
            b::dynprobe_call_kallsyms_on_each_symbol(Some(collect_copy_name), data);
        }
        let m = module.map_or(core::ptr::null(), |m| m.as_char_ptr());
        b::dynprobe_call_module_kallsyms_on_each_symbol(m, Some(collect_copy_name), data);
    }
    let base = core::str::from_utf8(base).unwrap_or("?");
    for (name, count) in &w.names {
        let name = core::str::from_utf8(name).unwrap_or("?");
        if *count > 1 {
            pr_notice!(
                "{base}: several compiler copies: {name}, {count} functions of that name (name one by address)\n"
            );
        } else {
            pr_notice!("{base}: several compiler copies: {name}\n");
        }
    }
}

/// The address of the function a `MOD:SYM` place names (`colon` is
/// where its `:` is): [`module_function`] of the two halves, its module
/// held in `holds` if given.
pub(crate) fn module_symbol_function(
    place: &[u8],
    colon: usize,
    holds: Option<&mut ModuleHolds>,
) -> Result<usize> {
    let module = super::nul_terminated(place.get(..colon).ok_or(EINVAL)?)?;
    let module = core::ffi::CStr::from_bytes_with_nul(&module).map_err(|_| EINVAL)?;
    module_function_held(module, place.get(colon + 1..).ok_or(EINVAL)?, holds)
}

/// What a walk for one name in one module finds.
struct NameWalk<'a> {
    name: &'a [u8],
    /// Addresses of the symbols of that name (aliases once).
    found: Option<usize>,
    several: bool,
    /// For a registration: the module, held when its symbol is found.
    holds: Option<&'a mut ModuleHolds>,
    /// The module's symbol could not be held (a module loading or going),
    /// or holding it failed.
    error: Option<Error>,
}

/// A kallsyms walk's callback for [`module_function`].
///
/// # Safety
///
/// `data` is a live `NameWalk` used by nothing else during the call;
/// `name` is NUL-terminated.
unsafe extern "C" fn find_name(data: *mut c_void, name: *const c_char, addr: c_ulong) -> c_int {
    // SAFETY: per the function's contract.
    let (w, name) = unsafe { (&mut *data.cast::<NameWalk<'_>>(), CStr::from_char_ptr(name)) };
    if name.to_bytes() != w.name {
        return 0;
    }
    // A symbol's address (c_ulong is usize in the kernel's crate).
    let addr: usize = addr;
    match w.found {
        None => {
            if let Some(holds) = w.holds.as_deref_mut() {
                match holds.hold(addr) {
                    Ok(true) => {}
                    Ok(false) => {
                        w.error = Some(ENOENT);
                        return 1;
                    }
                    Err(e) => {
                        w.error = Some(e);
                        return 1;
                    }
                }
            }
            w.found = Some(addr);
        }
        Some(a) if a == addr => {}
        Some(_) => w.several = true,
    }
    0
}

/// The address of function `name` of the loaded module `module` (a
/// `MOD:SYM` place of an `f` line or function event), which ftrace can
/// hook: `ENOENT` if the module has none (or is not loaded), `EINVAL` if
/// it has several of that name or ftrace cannot hook it.
pub(crate) fn module_function(module: &core::ffi::CStr, name: &[u8]) -> Result<usize> {
    module_function_held(module, name, None)
}

/// [`module_function`], holding the module in `holds` if given (for a
/// registration: `ENOENT` too if the module is loading or going).
fn module_function_held(
    module: &core::ffi::CStr,
    name: &[u8],
    holds: Option<&mut ModuleHolds>,
) -> Result<usize> {
    let mut w = NameWalk {
        name,
        found: None,
        several: false,
        holds,
        error: None,
    };
    let data = core::ptr::from_mut(&mut w).cast::<c_void>();
    // SAFETY: `find_name` reads `data` as the `NameWalk` above, which
    // outlives the walk; `module` is NUL-terminated. The walk may sleep.
    unsafe {
        b::dynprobe_call_module_kallsyms_on_each_symbol(module.as_char_ptr(), Some(find_name), data)
    };
    if let Some(e) = w.error {
        return Err(e);
    }
    match (w.found, w.several) {
        (None, _) => Err(ENOENT),
        (Some(_), true) => Err(EINVAL),
        (Some(addr), false) if super::traceable::address_traceable(addr) => Ok(addr),
        (Some(_), false) => Err(EINVAL),
    }
}
