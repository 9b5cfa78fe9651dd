// SPDX-License-Identifier: GPL-2.0

//! The thin layer between dynprobe's Rust core and the kernel: bindgen's
//! declarations of include/dynprobe/shim.h and safe wrappers around them.

use kernel::error::{to_result, Result};

pub(crate) mod bindings;

pub(crate) use bindings::dynprobe_file;

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
