// SPDX-License-Identifier: GPL-2.0

//! dynprobe's own text and data are no place for a probe of any kind.
//!
//! What a hit runs (the C handlers, the Rust interpreter, the helpers
//! they call) would fire the probe again from inside itself: a probe on
//! the shared ftrace_ops' callback recursed until the stack ran out. The
//! module is built without ftrace call sites but for its stubs (Kbuild),
//! and its Rust code is on the kprobe blacklist (src/kprobes.lds); this
//! refuses the rest the same way for every kind, whatever another
//! kernel's configuration lets through: entry, exit and function events
//! by name, `MOD:SYM`, lists and globs (hook/fprobe.rs,
//! hook/traceable.rs), kprobes by symbol or address
//! (`dynprobe_kprobe_precheck()`, kprobe.c) and watchpoints on the
//! module's data (hook.rs).

use crate::sys::bindings as b;

/// Whether `addr` is in any section of dynprobe's module.
pub(super) fn contains(addr: usize) -> bool {
    // SAFETY: compares the address with the module's own layout, which
    // stays as it is while the module runs.
    unsafe { b::dynprobe_own_address(addr) }
}

/// Whether any byte of `len` bytes at `addr` is dynprobe's.
pub(super) fn overlaps(addr: usize, len: usize) -> bool {
    contains(addr) || contains(addr.wrapping_add(len.saturating_sub(1)))
}

/// A glob's exclusion: the only functions of dynprobe's that ftrace can
/// hook are its stubs (`dynprobe_call_*`, src/shim/stubs.c), whose call
/// sites the redirect uses. fprobe takes one pattern to leave out.
pub(super) const GLOB_EXCLUSION: &core::ffi::CStr = c"dynprobe_call_*";
