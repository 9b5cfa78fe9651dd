// SPDX-License-Identifier: GPL-2.0

//! uprobes' hook: the probed file, held from the definition to its
//! removal (a binary deleted or replaced meanwhile keeps its probe, as
//! the kernel's uprobe events keep theirs), and a uprobe consumer
//! registered while the event is enabled (src/shim/uprobe.c), with a
//! return probe's entry words saved at entry (`$argN`). Also the
//! resolver's question about a uprobe line's file.

use core::ptr::NonNull;

use kernel::prelude::*;

use super::Hook;
use crate::lang::{DefView, UserFile};
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

/// One uprobe's file and consumer.
///
/// # Invariants
///
/// `uprobe`, once set, came from `dynprobe_uprobe_new()` and is freed on
/// drop only. The hook stays in the box it was made in (see
/// `hook::boxed`): the C object points to `feed`.
pub(crate) struct UprobeHook {
    uprobe: Option<NonNull<b::dynprobe_uprobe>>,
    feed: Feed,
}

// SAFETY: the C object is changed by `arm` and `disarm`, which run with
// event_mutex held (one at a time), and by the drop, which has it alone;
// its handlers only read what creation wrote.
unsafe impl Send for UprobeHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for UprobeHook {}

impl UprobeHook {
    /// The hook for the place's file and offset; hits run `feed`.
    /// Disarmed, holding the file.
    ///
    /// # Safety
    ///
    /// The feed's sink and definition outlive the hook.
    pub(super) unsafe fn boxed(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
        let path = place.symbol.ok_or(EINVAL)?;
        let ret = place.kind.is_return();
        // A return probe's entry words (`$argN` saved at entry).
        let entry_words = place.entry_data_size / core::mem::size_of::<u64>() as u32;
        let mut hook = KBox::new(UprobeHook { uprobe: None, feed }, GFP_KERNEL)?;
        // SAFETY: allocates the C object, which the drop frees; `path` is
        // NUL-terminated and only read during the call; the feed is in
        // the hook's box, where it stays until then.
        let uprobe = kernel::error::from_err_ptr(unsafe {
            b::dynprobe_uprobe_new(
                path.as_char_ptr(),
                place.offset,
                place.addr,
                ret,
                entry_words,
                hook.feed.get(),
            )
        })?;
        hook.uprobe = Some(NonNull::new(uprobe).ok_or(ENOMEM)?);
        Ok(hook)
    }

    /// The C object; `None` only while the hook is made.
    fn uprobe(&self) -> Result<NonNull<b::dynprobe_uprobe>> {
        self.uprobe.ok_or(EINVAL)
    }
}

impl Hook for UprobeHook {
    fn arm(&self, _def: DefView<'_>) -> Result {
        let uprobe = self.uprobe()?;
        // SAFETY: a live object (type invariant); event_mutex is held.
        kernel::error::to_result(unsafe { b::dynprobe_uprobe_arm(uprobe.as_ptr()) })
    }

    fn disarm(&self) {
        if let Ok(uprobe) = self.uprobe() {
            // SAFETY: as in `arm`.
            unsafe { b::dynprobe_uprobe_disarm(uprobe.as_ptr()) }
        }
    }

    /// Calls of a return probe with entry arguments that found no
    /// entry-data slot, or whose slot was taken over.
    fn misses(&self) -> u64 {
        match self.uprobe() {
            // SAFETY: a live object (type invariant).
            Ok(uprobe) => unsafe { b::dynprobe_uprobe_misses(uprobe.as_ptr()) },
            Err(_) => 0,
        }
    }

    fn feed(&self) -> &Feed {
        &self.feed
    }
}

impl Drop for UprobeHook {
    fn drop(&mut self) {
        if let Some(uprobe) = self.uprobe {
            // SAFETY: live (type invariant) and freed only here; returns
            // once no handler of it runs.
            unsafe { b::dynprobe_uprobe_free(uprobe.as_ptr()) };
        }
    }
}

// Every entry word a definition may save has its place in the C side's
// buffers.
const _: () = assert!(crate::lang::MAX_TRACE_ARGS <= b::DYNPROBE_UPROBE_ENTRY_WORDS as usize);

/// What the file a uprobe line names is (`kern_path()`, `d_is_reg()`).
pub(crate) fn user_file(path: &[u8]) -> UserFile {
    let Ok(path) = super::nul_terminated(path) else {
        return UserFile::Missing(crate::lang::errno::ENOMEM);
    };
    // A path with a NUL in it ends there for the kernel too.
    // SAFETY: `path` is NUL-terminated and lives across the call.
    match unsafe { b::dynprobe_user_file(path.as_ptr().cast()) } {
        0 => UserFile::Regular,
        1 => UserFile::NotRegular,
        e => UserFile::Missing(-e),
    }
}
