// SPDX-License-Identifier: GPL-2.0

//! The thin layer between dynprobe's Rust core and the kernel: bindgen's
//! declarations of include/dynprobe/shim.h and safe wrappers around them.

use crate::lang::{ErrorCode, Subsystem};
use kernel::error::{to_result, Result};

pub(crate) mod bindings;

pub(crate) use bindings::{dynprobe_file, dynprobe_text};

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

/// Creates tracefs `dynprobe/` and its files.
pub(crate) fn tracefs_init() -> Result {
    // SAFETY: symbols are resolved (init order in the module) and the
    // directory does not exist yet.
    to_result(unsafe { bindings::dynprobe_tracefs_init() })
}

/// Removes tracefs `dynprobe/`; open files keep working until closed
/// because tracefs holds a module reference for them.
pub(crate) fn tracefs_exit() {
    // SAFETY: removing the directory created by tracefs_init (a no-op if
    // it does not exist).
    unsafe { bindings::dynprobe_tracefs_exit() }
}

/// Writes an entry into the kernel's error_log: `cmd` as the command line,
/// the message of probe error `err_type` (a `lang::ErrorCode` value), the
/// caret at `pos`. `cmd` must end with a NUL byte; an entry without one is
/// dropped.
pub(crate) fn log_error(subsystem: Subsystem, cmd: &[u8], err_type: u8, pos: u16) {
    if cmd.last() != Some(&0) {
        return;
    }
    // The subsystem name as a C string (the names are short and fixed).
    let name = subsystem.name().as_bytes();
    let mut loc = [0u8; 32];
    match loc.get_mut(..name.len()) {
        Some(dst) if name.len() < 32 => dst.copy_from_slice(name),
        _ => return,
    }
    if err_type < ErrorCode::FIRST_OWN {
        // SAFETY: both strings are NUL-terminated and live across the
        // call; tracing_log_err copies them, and `err_type` indexes the
        // kernel's table.
        unsafe { bindings::dynprobe_log_err(loc.as_ptr(), cmd.as_ptr(), err_type, pos) };
        return;
    }
    let Some(code) = ErrorCode::own_code(err_type) else {
        return;
    };
    let message = code.message().as_bytes();
    // The message as a C string (the longest is under 60 bytes).
    const TEXT_MAX: usize = 80;
    if message.len() >= TEXT_MAX {
        return;
    }
    let mut text = [0u8; TEXT_MAX];
    match text.get_mut(..message.len()) {
        Some(dst) => dst.copy_from_slice(message),
        None => return,
    }
    // SAFETY: the three strings are NUL-terminated and live across the
    // call; the C side copies them.
    unsafe { bindings::dynprobe_log_own_err(loc.as_ptr(), cmd.as_ptr(), text.as_ptr(), pos) }
}
