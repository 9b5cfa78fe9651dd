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

/// Copies the kernel's probe error message at `index` of its table into
/// `buf`: its length, or `None` when the table has no such entry, the
/// entry cannot be read, or it does not fit.
pub(crate) fn kernel_error_message(index: u8, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: symbols are resolved (init order in the module); the C side
    // writes at most `buf.len()` bytes into `buf` and reads the kernel's
    // table without faulting.
    let len = unsafe {
        bindings::dynprobe_kernel_err_text(index.into(), buf.as_mut_ptr().cast(), buf.len())
    };
    usize::try_from(len).ok()
}

/// Allocates what probe handlers share (per-CPU scratch buffers) and
/// registers the probes' notifiers.
pub(crate) fn events_init() -> Result {
    crate::hooks::init()?;
    // SAFETY: called once from module init.
    if let Err(e) = to_result(unsafe { bindings::dynprobe_events_init() }) {
        crate::hooks::exit();
        return Err(e);
    }
    Ok(())
}

/// Undoes `events_init`, once no event is left.
pub(crate) fn events_exit() {
    // SAFETY: called from module exit after every event is gone.
    unsafe { bindings::dynprobe_events_exit() };
    crate::hooks::exit();
}

/// Registers the module notifier through which an unloading module's
/// events go (the in-kernel API, src/api.rs).
pub(crate) fn api_init() -> Result {
    // SAFETY: called once from module init.
    to_result(unsafe { bindings::dynprobe_api_init() })
}

/// Unregisters what `api_init` registered.
pub(crate) fn api_exit() {
    // SAFETY: called from module exit, or a failed init, after `api_init`
    // succeeded.
    unsafe { bindings::dynprobe_api_exit() }
}
