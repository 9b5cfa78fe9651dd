// SPDX-License-Identifier: GPL-2.0

//! Watchpoints' hook: wide hardware breakpoints on the watched data
//! (src/shim/wprobe.c), taken while the event is enabled and given back
//! when it is disabled, as the posted wprobe series does: the debug
//! registers are few and shared with perf and debuggers. A watchpoint on
//! a module's data holds the module while it is armed and is not armed
//! on that memory again once the module went (wprobe.c says how).

use core::ptr::NonNull;

use kernel::prelude::*;

use super::Hook;
use crate::lang::DefView;
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

/// One watchpoint's breakpoints.
///
/// # Invariants
///
/// `wprobe`, once set, came from `dynprobe_wprobe_new()` and is freed on
/// drop only. The hook stays in the box it was made in (see
/// `hook::boxed`): the C object points to `feed`.
pub(crate) struct WprobeHook {
    wprobe: Option<NonNull<b::dynprobe_wprobe>>,
    feed: Feed,
}

// SAFETY: the C object is changed by `arm` and `disarm`, which run with
// event_mutex held (one at a time), and by the drop, which has it alone;
// its handlers only read what creation wrote.
unsafe impl Send for WprobeHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for WprobeHook {}

impl WprobeHook {
    /// The hook for the place's watched data; hits run `feed`. Disarmed.
    ///
    /// # Safety
    ///
    /// The feed's sink and definition outlive the hook.
    pub(super) unsafe fn boxed(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
        let (addr, watch) = place.watched.ok_or(EINVAL)?;
        let mut hook = KBox::new(WprobeHook { wprobe: None, feed }, GFP_KERNEL)?;
        // SAFETY: allocates the C object, which the drop frees; the feed
        // is in the hook's box, where it stays until then.
        let wprobe = kernel::error::from_err_ptr(unsafe {
            b::dynprobe_wprobe_new(
                addr as usize,
                u32::from(watch.len),
                watch.access.bp_type(),
                hook.feed.get(),
            )
        })?;
        hook.wprobe = Some(NonNull::new(wprobe).ok_or(ENOMEM)?);
        Ok(hook)
    }

    /// The C object; `None` only while the hook is made.
    fn wprobe(&self) -> Result<NonNull<b::dynprobe_wprobe>> {
        self.wprobe.ok_or(EINVAL)
    }
}

impl Hook for WprobeHook {
    fn arm(&self, def: DefView<'_>) -> Result {
        let wprobe = self.wprobe()?;
        // Where the place's symbol is now: a watchpoint whose module went
        // is armed again only if it is where it was.
        let resolved = def
            .full_symbol()
            .and_then(crate::probe::symbol_name::address)
            .map_or(0, |a| a.wrapping_add(def.offset()));
        // SAFETY: a live object (type invariant); event_mutex is held.
        let ret = kernel::error::to_result(unsafe {
            b::dynprobe_wprobe_arm(wprobe.as_ptr(), resolved as usize)
        });
        if ret == Err(ENOENT) {
            pr_warn!(
                "cannot watch {}: the module whose data it watched went; define the event again\n",
                def.full_symbol().unwrap_or("its address")
            );
        }
        ret
    }

    fn disarm(&self) {
        if let Ok(wprobe) = self.wprobe() {
            // SAFETY: as in `arm`.
            unsafe { b::dynprobe_wprobe_disarm(wprobe.as_ptr()) }
        }
    }

    fn misses(&self) -> u64 {
        0
    }

    fn feed(&self) -> &Feed {
        &self.feed
    }
}

impl Drop for WprobeHook {
    fn drop(&mut self) {
        if let Some(wprobe) = self.wprobe {
            // SAFETY: live (type invariant) and freed only here; returns
            // once no handler of it runs.
            unsafe { b::dynprobe_wprobe_free(wprobe.as_ptr()) };
        }
    }
}

/// Registers wprobe.c's module notifier, which disarms watchpoints on a
/// going module.
pub(super) fn init() -> Result {
    // SAFETY: called once, at module init.
    kernel::error::to_result(unsafe { b::dynprobe_wprobe_init() })
}

/// Undoes [`init`], once no hook is left.
pub(super) fn exit() {
    // SAFETY: the notifier was registered by `init`.
    unsafe { b::dynprobe_wprobe_exit() };
}
