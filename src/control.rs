// SPDX-License-Identifier: GPL-2.0

//! The control files' behaviour: what opening, reading and writing
//! `dynprobe/*` does. Called from the C file operations in
//! src/shim/tracefs.c.

use crate::readme::README;
use crate::sys::{dynprobe_file, dynprobe_text, ErrorSubsystem};
use kernel::prelude::*;
use kernel::sync::global_lock;

/// The definitions of all control files, guarded by one lock: every change
/// is rare and short next to the tracing it sets up.
struct Registry {
    /// Number of definitions; none can be created yet.
    count: usize,
}

impl Registry {
    const fn new() -> Self {
        Registry { count: 0 }
    }
}

global_lock! {
    // SAFETY: initialised in `init()`, the first thing module init does
    // with the registry, before tracefs files can be opened.
    unsafe(uninit) static REGISTRY: Mutex<Registry> = Registry::new();
}

/// Prepares the registry; called once from module init.
pub(crate) fn init() {
    // SAFETY: called exactly once, before any use of REGISTRY.
    unsafe { REGISTRY.init() };
}

/// Drops every definition; called from module exit after the files are
/// gone.
pub(crate) fn exit() {
    REGISTRY.lock().count = 0;
}

/// A snapshot of a file's contents, owned by an open file.
type Snapshot = KVec<u8>;

fn file_of(raw: dynprobe_file) -> Option<dynprobe_file> {
    (raw < crate::sys::bindings::dynprobe_file_DYNPROBE_NR_FILES).then_some(raw)
}

fn render(file: dynprobe_file, _registry: &Registry) -> Result<Snapshot> {
    use crate::sys::bindings::*;
    let mut out = KVec::new();
    if file == dynprobe_file_DYNPROBE_FILE_README {
        out.extend_from_slice(README.as_bytes(), GFP_KERNEL)?;
    }
    // The other files list definitions (or their hit counts); there are
    // none until the definition language is wired in.
    Ok(out)
}

/// Runs on open(); see include/dynprobe/shim.h.
///
/// # Safety
///
/// `text`, `data` and `len` must be valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_open(
    file: dynprobe_file,
    truncate: bool,
    read: bool,
    text: *mut *mut dynprobe_text,
    data: *mut *const u8,
    len: *mut usize,
) -> kernel::ffi::c_int {
    let Some(file) = file_of(file) else {
        return EINVAL.to_errno();
    };
    let mut registry = REGISTRY.lock();
    if truncate {
        // Nothing can be busy while there are no definitions.
        registry.count = 0;
    }
    if !read {
        return 0;
    }
    let snapshot = match render(file, &registry).and_then(|s| Ok(KBox::new(s, GFP_KERNEL)?)) {
        Ok(s) => s,
        Err(e) => return e.to_errno(),
    };
    // SAFETY: the caller passes pointers valid for writes.
    unsafe {
        *data = snapshot.as_ptr();
        *len = snapshot.len();
        *text = KBox::into_raw(snapshot).cast();
    }
    0
}

/// Frees a snapshot made by `dynprobe_rs_open`.
///
/// # Safety
///
/// `text` must come from `dynprobe_rs_open` and not have been released.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_release(text: *mut dynprobe_text) {
    // SAFETY: per the contract, `text` is a `KBox<Snapshot>` turned into a
    // raw pointer by `dynprobe_rs_open`, released once.
    drop(unsafe { KBox::from_raw(text.cast::<Snapshot>()) });
}

/// Runs one command line written to a control file.
///
/// # Safety
///
/// `line` must point to `len` readable bytes followed by a NUL byte.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_command(
    file: dynprobe_file,
    line: *const u8,
    len: usize,
) -> kernel::ffi::c_int {
    let Some(file) = file_of(file) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the contract, `line` holds `len` bytes plus a NUL.
    let with_nul = unsafe { core::slice::from_raw_parts(line, len + 1) };
    let text = with_nul.get(..len).unwrap_or(&[]);
    if text.iter().all(u8::is_ascii_whitespace) {
        return 0;
    }
    let subsystem = match file {
        crate::sys::bindings::dynprobe_file_DYNPROBE_FILE_FUNCTION_EVENTS => {
            ErrorSubsystem::Function
        }
        crate::sys::bindings::dynprobe_file_DYNPROBE_FILE_DYNAMIC_EVENTS => {
            ErrorSubsystem::Dynevent
        }
        crate::sys::bindings::dynprobe_file_DYNPROBE_FILE_KPROBE_EVENTS => ErrorSubsystem::Kprobe,
        _ => return EPERM.to_errno(),
    };
    let _registry = REGISTRY.lock();
    let _ = subsystem;
    pr_warn!("definitions are not implemented yet\n");
    // EOPNOTSUPP: the kernel crate only names the internal ENOTSUPP.
    -95
}
