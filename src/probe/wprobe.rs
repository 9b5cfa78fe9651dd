// SPDX-License-Identifier: GPL-2.0

//! Watchpoints' hook: wide hardware breakpoints on the watched data
//! (src/shim/wprobe.c), taken while the event is enabled and given back
//! when it is disabled, as the posted wprobe series does: the debug
//! registers are few and shared with perf and debuggers.

use core::ptr::NonNull;

use kernel::prelude::*;

use super::{Hook, Place};
use crate::sys::bindings as b;

/// One watchpoint's breakpoints.
///
/// # Invariants
///
/// `wprobe` came from `dynprobe_wprobe_new()` and is freed on drop only.
pub(crate) struct WprobeHook {
    wprobe: NonNull<b::dynprobe_wprobe>,
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
    /// `feed` outlives the hook.
    pub(super) unsafe fn boxed(
        place: &mut Place<'_>,
        feed: *mut b::dynprobe_feed,
    ) -> Result<KBox<dyn Hook>> {
        let (addr, watch) = place.watched.ok_or(EINVAL)?;
        // SAFETY: allocates the C object; `feed` outlives it (per the
        // function's contract), which the drop frees.
        let wprobe = unsafe {
            b::dynprobe_wprobe_new(
                addr as usize,
                u32::from(watch.len),
                watch.access.bp_type(),
                feed,
            )
        };
        let wprobe = NonNull::new(wprobe).ok_or(ENOMEM)?;
        Ok(KBox::new(WprobeHook { wprobe }, GFP_KERNEL)?)
    }
}

impl Hook for WprobeHook {
    fn arm(&self) -> Result {
        // SAFETY: a live object (type invariant); event_mutex is held.
        kernel::error::to_result(unsafe { b::dynprobe_wprobe_arm(self.wprobe.as_ptr()) })
    }

    fn disarm(&self) {
        // SAFETY: as in `arm`.
        unsafe { b::dynprobe_wprobe_disarm(self.wprobe.as_ptr()) }
    }

    fn misses(&self) -> u64 {
        0
    }
}

impl Drop for WprobeHook {
    fn drop(&mut self) {
        // SAFETY: live (type invariant) and freed only here; returns once
        // no handler of it runs.
        unsafe { b::dynprobe_wprobe_free(self.wprobe.as_ptr()) };
    }
}
