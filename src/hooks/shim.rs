// SPDX-License-Identifier: GPL-2.0

//! fprobe and tracepoint hooks, which are C objects (src/shim/probe.c,
//! fentry.c).

use core::ptr::NonNull;

use kernel::prelude::*;

use super::Hook;
use crate::sys::bindings as b;

/// A C probe.
///
/// # Invariants
///
/// `probe` is a live C probe, torn down only in `drop`.
pub(super) struct ShimHook {
    probe: NonNull<b::dynprobe_probe>,
}

// SAFETY: the C probe is changed under event_mutex (arm, disarm) or by
// its own locks (tracepoint notifier, shared entry hook).
unsafe impl Send for ShimHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for ShimHook {}

impl ShimHook {
    /// # Safety
    ///
    /// `feed` must outlive the hook.
    pub(super) unsafe fn new(
        place: &b::dynprobe_place,
        feed: *mut b::dynprobe_feed,
    ) -> Result<KBox<dyn Hook>> {
        let mut err = 0;
        // SAFETY: `place` and its symbol live across the call (the C side
        // copies the symbol); `feed` outlives the C probe per the contract.
        let probe = unsafe { b::dynprobe_probe_create(place, feed, &mut err) };
        let probe = NonNull::new(probe).ok_or_else(|| Error::from_errno(err))?;
        let hook = KBox::new(ShimHook { probe }, GFP_KERNEL).inspect_err(|_| {
            // SAFETY: created above and not used after this.
            unsafe { b::dynprobe_probe_teardown(probe.as_ptr()) };
        })?;
        Ok(hook)
    }
}

impl Hook for ShimHook {
    fn arm(&self) -> Result {
        // SAFETY: `probe` is live; event_mutex is held per the trait.
        kernel::error::to_result(unsafe { b::dynprobe_probe_arm(self.probe.as_ptr()) })
    }

    fn disarm(&self) {
        // SAFETY: `probe` is live.
        unsafe { b::dynprobe_probe_disarm(self.probe.as_ptr()) }
    }

    fn misses(&self) -> u64 {
        // SAFETY: `probe` is live.
        unsafe { b::dynprobe_probe_misses(self.probe.as_ptr()) }
    }
}

impl Drop for ShimHook {
    fn drop(&mut self) {
        // SAFETY: `probe` is live and used for the last time; teardown
        // returns once no handler of it runs.
        unsafe { b::dynprobe_probe_teardown(self.probe.as_ptr()) };
    }
}
