// SPDX-License-Identifier: GPL-2.0

//! Entries in the kernel's tracing `error_log`, made by
//! `tracing_log_err`, which is not exported: it is called through its stub
//! (Documentation/design.md "Calling unexported functions").
//!
//! An entry keeps a pointer to its message table, not the text, and reads
//! it whenever error_log is read, also after this module is gone. So a
//! code the running kernel's probe error table has is logged with that
//! table, and the others (function_events syntax, dynevent's "No matching
//! dynamic event type", probe codes only another series has) go into a
//! table that is never freed, each message copied there once when first
//! logged: a few hundred bytes at most per module load, and nothing when
//! none of them is ever logged.
//! Once the module is gone and error_log has dropped the entries that
//! point to it, the table is left unreferenced on purpose: kmemleak is
//! told so.

use core::ptr::{self, NonNull};

use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::global_lock;

use crate::compat;
use crate::lang::{ErrorCode, LogEntry, Subsystem};
use crate::sys::bindings as sys;

/// How many own messages the table holds; more are not logged.
const OWN_MESSAGES_MAX: usize = 64;

// Every code the running kernel's table lacks has a slot of its own.
const _: () = assert!(ErrorCode::ALL.len() - compat::KERNEL.errors().len() <= OWN_MESSAGES_MAX);

type MessageTable = [*const c_char; OWN_MESSAGES_MAX];

/// The own messages' table, once one was logged.
///
/// # Invariants
///
/// `table`, when set, is a `MessageTable` allocation that is never freed,
/// written only under `OWN_MESSAGES`; its entries are NULL or C strings
/// that are never freed, the NULL ones after all the others.
struct OwnMessages {
    table: Option<NonNull<MessageTable>>,
}

// SAFETY: the table is not tied to a thread; the lock serialises its use.
unsafe impl Send for OwnMessages {}

global_lock! {
    // SAFETY: initialised by `init()` in module init, before the control
    // files, the only loggers, exist.
    unsafe(uninit) static OWN_MESSAGES: Mutex<OwnMessages> = OwnMessages { table: None };
}

/// Prepares the own messages' lock; called once from module init.
pub(crate) fn init() {
    // SAFETY: called exactly once, before any use of OWN_MESSAGES.
    unsafe { OWN_MESSAGES.init() };
}

/// Writes an entry: `cmd` as the command line, the message of error
/// `err_type` (a `lang::ErrorCode` value, `code as u8`), the caret at
/// `pos`. A code the running kernel's table has is logged with that table
/// at the kernel's index for it (`compat::KERNEL`); the others with
/// dynprobe's own text. `cmd` must end with a NUL byte; an entry without
/// one, or one that cannot be allocated, is dropped.
pub(crate) fn log(subsystem: Subsystem, cmd: &[u8], err_type: u8, pos: u16) {
    if cmd.last() != Some(&0) {
        return;
    }
    let Ok(cmd) = CStr::from_bytes_until_nul(cmd) else {
        return;
    };
    let Some(code) = ErrorCode::from_value(err_type) else {
        return;
    };
    let Ok(loc) = CString::try_from_fmt(fmt!("{}", subsystem.name())) else {
        return;
    };
    match compat::KERNEL.log_entry(code) {
        LogEntry::Kernel(index) => log_kernel_error(&loc, cmd, index, pos),
        LogEntry::Own(text) => {
            let Ok(message) = CString::try_from_fmt(fmt!("{}", text)) else {
                return;
            };
            log_own_error(&loc, cmd, &message, pos);
        }
    }
}

/// A probe error of the kernel's, at `index` of its message table, which
/// outlives dynprobe.
fn log_kernel_error(loc: &CStr, cmd: &CStr, index: u8, pos: u16) {
    // SAFETY: resolved at load and read-only after init.
    let errs = unsafe { sys::dynprobe_ksyms.trace_probe_err_text };
    // SAFETY: the strings live across the call and tracing_log_err copies
    // them; `errs` is the kernel's table, which `index` (an index of
    // `compat::KERNEL`'s table, checked against the running kernel's at
    // load by `error_table::check`) indexes.
    unsafe {
        sys::dynprobe_call_tracing_log_err(
            ptr::null_mut(),
            loc.as_char_ptr(),
            cmd.as_char_ptr(),
            errs,
            index,
            pos,
        )
    }
}

/// One of dynprobe's own messages, through the table that is never freed.
fn log_own_error(loc: &CStr, cmd: &CStr, message: &CStr, pos: u16) {
    let mut own = OWN_MESSAGES.lock();
    let table = match own.table {
        Some(table) => table,
        None => {
            let Ok(table) = KBox::new([ptr::null(); OWN_MESSAGES_MAX], GFP_KERNEL) else {
                return;
            };
            // Never freed: error_log may point to it after unload.
            let table = NonNull::from(KBox::leak(table));
            // SAFETY: `table` is a live kmalloc allocation.
            unsafe { sys::dynprobe_kmemleak_not_leak(table.as_ptr().cast()) };
            // INVARIANT: a table of NULL entries, never freed.
            own.table = Some(table);
            table
        }
    };
    // SAFETY: the table lives for ever and is written only under the lock,
    // which is held (type invariant).
    let entries = unsafe { &mut *table.as_ptr() };
    let found = entries.iter().position(|&entry| {
        // SAFETY: a non-NULL entry is a C string that is never freed.
        entry.is_null() || unsafe { CStr::from_char_ptr(entry) } == message
    });
    let Some((index, entry)) = found.and_then(|i| Some((i, entries.get_mut(i)?))) else {
        return;
    };
    if entry.is_null() {
        let Ok(copy) = CString::try_from(message) else {
            return;
        };
        // INVARIANT: the copy is the table's from now on, never freed, and
        // the first NULL entry.
        *entry = copy.as_char_ptr();
        core::mem::forget(copy);
    }
    let Ok(index) = u8::try_from(index) else {
        return;
    };
    // SAFETY: the strings live across the call and tracing_log_err copies
    // `loc` and `cmd`; the table and the message at `index` are never
    // freed, so error_log may keep pointing to them.
    unsafe {
        sys::dynprobe_call_tracing_log_err(
            ptr::null_mut(),
            loc.as_char_ptr(),
            cmd.as_char_ptr(),
            table.as_ptr().cast(),
            index,
            pos,
        )
    }
}
