// SPDX-License-Identifier: GPL-2.0

//! The thin layer between dynprobe's Rust core and the kernel: bindgen's
//! declarations of include/dynprobe/shim.h and safe wrappers around them.

use kernel::error::{to_result, Result};

pub(crate) mod bindings;

pub(crate) use bindings::dynprobe_file;

/// Resolves the unexported kernel symbols dynprobe needs; fails (with a
/// message in dmesg naming the symbol) if one is missing.
pub(crate) fn resolve_symbols() -> Result {
    // SAFETY: called once from module init, before anything uses the
    // resolved table.
    to_result(unsafe { bindings::dynprobe_resolve_symbols() })
}

/// Undoes `resolve_symbols`: unregisters the redirect through which the
/// unexported kernel functions are called. Called last at module exit, and
/// on a failed load, once nothing can call them any more.
pub(crate) fn resolve_exit() {
    // SAFETY: called after `resolve_symbols` succeeded, when no C shim
    // runs any more.
    unsafe { bindings::dynprobe_resolve_exit() }
}

/// Allocates what probe handlers share (per-CPU scratch buffers).
pub(crate) fn events_init() -> Result {
    // SAFETY: called once from module init.
    to_result(unsafe { bindings::dynprobe_events_init() })
}

/// Frees what `events_init` allocated, once no event is left.
pub(crate) fn events_exit() {
    // SAFETY: called from module exit after every event is gone.
    unsafe { bindings::dynprobe_events_exit() }
}
