// SPDX-License-Identifier: GPL-2.0

//! kprobes on module functions (`MOD:SYM`) may be defined before the
//! module loads, and survive its unloading: they are registered again
//! whenever the module comes, as the kernel's kprobe events are.
//!
//! Lock order: the waits list, then event_mutex (which orders
//! registration against enabling and disabling). A hook is registered
//! (the first time) and listed under one hold of the list's lock, so that
//! a module coming in between finds it listed.

use core::ptr::NonNull;

use kernel::ffi::{c_int, c_ulong, c_void};
use kernel::prelude::*;
use kernel::sync::global_lock;
use kernel::types::Opaque;

use super::KprobeHook;
use crate::sys::bindings as b;
use crate::sys::events_lock::EventsLock;

/// A hook waiting for (or re-registered with) its module.
struct Waiting {
    hook: NonNull<KprobeHook>,
    /// Offset and length of the module name in the hook's symbol.
    module_len: usize,
}

// SAFETY: the hook is pinned and removes itself from the list (under its
// lock) before it goes; it is only used under the list's lock.
unsafe impl Send for Waiting {}

global_lock! {
    // SAFETY: initialized in `init`, before any hook exists.
    unsafe(uninit) static WAITS: Mutex<KVec<Waiting>> = KVec::new();
}

/// A notifier block the kernel links into its chain.
struct Notifier(Opaque<b::notifier_block>);

// SAFETY: the kernel changes the block only under its notifier chain's
// lock; dynprobe never touches it after creation.
unsafe impl Sync for Notifier {}

static MODULE_NB: Notifier = Notifier(Opaque::new(b::notifier_block {
    notifier_call: Some(module_coming),
    next: core::ptr::null_mut(),
    // After the kprobes core has prepared the module's text.
    priority: 1,
}));

/// Registers `hook` (disarmed) and, unless that fails for another
/// reason than its module missing (`ENOENT`), puts it on the list; both
/// under one hold of the list's lock, which the module notifier takes: a
/// module that comes after the registration found it missing waits for
/// the hook to be listed, then registers it. `module` is the start of the
/// hook's symbol. An error means the hook is not listed (it may be
/// registered: its drop unregisters it).
pub(super) fn register_and_add(hook: &KprobeHook, module: &[u8]) -> Result {
    let mut waits = WAITS.lock();
    // Nothing else reaches the hook before it is listed.
    let registered = hook.register(false);
    if registered.is_err() && registered != Err(ENOENT) {
        return registered;
    }
    waits.push(
        Waiting {
            hook: NonNull::from(hook),
            module_len: module.len(),
        },
        GFP_KERNEL,
    )?;
    Ok(())
}

/// Takes `hook` off the list; no notifier uses it once this returns.
pub(super) fn remove(hook: &KprobeHook) {
    let mut waits = WAITS.lock();
    if let Some(i) = waits
        .iter()
        .position(|w| core::ptr::eq(w.hook.as_ptr(), hook))
    {
        let _ = waits.remove(i);
    }
}

/// # Safety
///
/// Called by the module notifier chain, `data` being the module.
unsafe extern "C" fn module_coming(
    _nb: *mut b::notifier_block,
    state: c_ulong,
    data: *mut c_void,
) -> c_int {
    if state != b::module_state_MODULE_STATE_COMING as c_ulong {
        return b::NOTIFY_DONE as c_int;
    }
    // SAFETY: `data` is the coming module, whose name is NUL-terminated.
    let name = unsafe {
        kernel::str::CStr::from_char_ptr((*data.cast::<b::module>()).name.as_ptr()).to_bytes()
    };
    let waits = WAITS.lock();
    for w in waits.iter() {
        // SAFETY: a hook on the list is live (it takes itself off first).
        let hook = unsafe { w.hook.as_ref() };
        if hook.name().get(..w.module_len) != Some(name) {
            continue;
        }
        let _events = EventsLock::lock_probes();
        hook.unregister();
        if hook.register(hook.event_enabled()).is_err() {
            pr_warn!(
                "cannot probe {} in module {}\n",
                core::str::from_utf8(hook.name()).unwrap_or("?"),
                core::str::from_utf8(name).unwrap_or("?")
            );
        }
    }
    b::NOTIFY_DONE as c_int
}

pub(in crate::probe::hook) fn init() -> Result {
    // SAFETY: called once at module init, before any hook exists.
    unsafe { WAITS.init() };
    // SAFETY: the block is static and unregistered in `exit`.
    kernel::error::to_result(unsafe { b::register_module_notifier(MODULE_NB.0.get()) })
}

pub(in crate::probe::hook) fn exit() {
    // SAFETY: registered in `init`.
    unsafe { b::unregister_module_notifier(MODULE_NB.0.get()) };
}
