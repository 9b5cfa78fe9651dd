// SPDX-License-Identifier: GPL-2.0

//! The in-kernel API's owners and lookups (the commands are
//! src/api/commands.rs, the exports src/shim/api.c): a command from
//! another module runs down the control files' command path
//! (src/control/mod.rs), and the events it makes are recorded as that
//! module's, to be removed when it unloads.

pub(crate) mod commands;

use kernel::prelude::*;

use crate::api::commands::word;
use crate::control;
use crate::control::FileId;
use crate::lang;
use crate::sys::bindings as b;

/// Runs a line from another module (src/api/commands.rs) in control file
/// `file`, recording what it makes as `owner`'s (a `struct module`, or 0).
pub(crate) fn run_command(file: FileId, line: &[u8], owner: usize) -> core::ffi::c_int {
    match control::api_command(file, line, owner) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// Removes what a module made through the API, as it unloads.
///
/// # Safety
///
/// `name` is the unloading module's NUL-terminated name.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_api_owner_gone(
    owner: *const core::ffi::c_void,
    name: *const u8,
) {
    // SAFETY: the caller's promise.
    let name = kernel::str::BStr::from_bytes(unsafe { word(name) }.unwrap_or(&[]));
    control::owner_gone(owner as usize, |line, file, e| {
        pr_warn!(
            "{} unloads: '{}' in {} failed ({:?}): the event stays, for that file to remove\n",
            name,
            kernel::str::BStr::from_bytes(line),
            control::file_name(file),
            e
        );
    });
}

/// Gets the file of dynprobe's event `system/event`, held.
///
/// # Safety
///
/// `system` and `event` are NUL-terminated; `file` is writable.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_api_event_get(
    system: *const u8,
    event: *const u8,
    file: *mut *mut b::trace_event_file,
) -> core::ffi::c_int {
    // SAFETY: the caller's promise.
    let (sys_name, ev_name) = unsafe { (word(system).unwrap_or(&[]), word(event).unwrap_or(&[])) };
    let synthetic = sys_name == lang::SYNTH_SYSTEM.as_bytes();
    match control::event_get(sys_name, ev_name, synthetic, || {
        // SAFETY: both strings are NUL-terminated; NULL is the top-level
        // trace instance.
        unsafe { b::trace_get_event_file(core::ptr::null(), system.cast(), event.cast()) }
    }) {
        Ok((f, synth)) => {
            // SAFETY: the caller's promise.
            unsafe { *file = f };
            i32::from(synth)
        }
        Err(e) => e.to_errno(),
    }
}
