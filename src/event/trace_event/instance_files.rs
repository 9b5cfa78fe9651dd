// SPDX-License-Identifier: GPL-2.0

//! The trace instances an event is enabled in, as its probes' hits find
//! them: the one instance in the sink's `file`, or a set of several
//! published under RCU in its `files` (read by src/shim/hit.c). Changed
//! under event_mutex, by enabling and disabling (src/event/trace_event.rs).

use core::sync::atomic::{AtomicPtr, Ordering};

use kernel::prelude::*;

use super::TraceEvent;
use crate::sys::bindings as b;
use crate::sys::events_lock::Held;

impl TraceEvent {
    /// The trace instances the event is enabled in: the sink's `file`, or
    /// the slots of its set, where an instance disabled since the set was
    /// made leaves a null slot ([`TraceEvent::remove_file`]).
    pub(super) fn files(&self, _held: Held<'_>) -> &[*mut b::trace_event_file] {
        if !self.file_ptr().load(Ordering::Relaxed).is_null() {
            // SAFETY: the field changes only under event_mutex, held here.
            return unsafe { core::slice::from_ref(&*core::ptr::addr_of!((*self.sink()).file)) };
        }
        let set = self.files_ptr().load(Ordering::Relaxed).cast::<usize>();
        if set.is_null() {
            return &[];
        }
        // SAFETY: a set is `nr` followed by `nr` file pointers (`FileSet`)
        // and changes only under event_mutex, held here.
        unsafe { core::slice::from_raw_parts(set.add(1).cast(), *set) }
    }

    /// Starts writing to trace instance `file` too. The only step of an
    /// enable or disable that needs memory: a second instance or more
    /// takes a new set, made here, where failing (`ENOMEM`) changes
    /// nothing. The first instance goes in the sink's `file`, no set.
    /// Hits see the new state whole: the new set is published before
    /// `file` is cleared, and the old set freed once no hit can be using
    /// it (a hit reads `file`, then the set, then `file` again: hit.c).
    pub(super) fn add_file(&self, file: *mut b::trace_event_file, held: Held<'_>) -> Result {
        let live = || self.files(held).iter().copied().filter(|f| !f.is_null());
        let nr = live().count() + 1;
        if nr == 1 {
            self.file_ptr().store(file, Ordering::Release);
            return Ok(());
        }
        let mut set = KVec::with_capacity(nr + 1, GFP_KERNEL)?;
        // Within the capacity just allocated: none of these allocates.
        set.push(nr, GFP_KERNEL)?;
        for f in Iterator::chain(live(), core::iter::once(file)) {
            set.push(f as usize, GFP_KERNEL)?;
        }
        let new = set.into_raw_parts().0.cast::<b::dynprobe_files>();
        let old = self.files_ptr().swap(new, Ordering::Release);
        self.file_ptr()
            .store(core::ptr::null_mut(), Ordering::Release);
        if !old.is_null() {
            // SAFETY: `old` came from a `KVec` (kmalloc); no new hit can
            // see it, and running ones are done after a grace period.
            unsafe { b::dynprobe_kvfree_rcu(old.cast()) };
        }
        Ok(())
    }

    /// Stops writing to trace instance `file`, without allocating: a
    /// disable must not fail, and the tracing core ignores its error (it
    /// would free the instance's file with the sink still pointing to
    /// it). The last instance leaves `file`; of a set, an instance is
    /// nulled in place, so a running hit writes to each other instance
    /// once, or, when one is left, it moves to `file` (set before the set
    /// is unpublished) and the set is freed after a grace period.
    pub(super) fn remove_file(&self, file: *mut b::trace_event_file, held: Held<'_>) {
        if self.file_ptr().load(Ordering::Relaxed) == file {
            self.file_ptr()
                .store(core::ptr::null_mut(), Ordering::Release);
            self.flags()
                .fetch_and(!b::DYNPROBE_SINK_TRACE, Ordering::Release);
            return;
        }
        // Where it is in the set, and the first other instance, with
        // whether there are more.
        let (i, first, more) = {
            let slots = self.files(held);
            let Some(i) = slots.iter().position(|&f| f == file) else {
                return;
            };
            let mut rest = slots.iter().copied().filter(|&f| !f.is_null() && f != file);
            (i, rest.next(), rest.next().is_some())
        };
        let set = self.files_ptr().load(Ordering::Relaxed);
        if more {
            // SAFETY: slot `i` is inside the published set (found above);
            // event_mutex (`held`) excludes other writers, and hit.c reads
            // the slots with READ_ONCE.
            unsafe {
                let slot = set
                    .cast::<usize>()
                    .add(1 + i)
                    .cast::<*mut b::trace_event_file>();
                AtomicPtr::from_ptr(slot).store(core::ptr::null_mut(), Ordering::Release);
            }
            return;
        }
        match first {
            Some(one) => self.file_ptr().store(one, Ordering::Release),
            // Not reached: a set holds two instances or more.
            None => {
                self.flags()
                    .fetch_and(!b::DYNPROBE_SINK_TRACE, Ordering::Release);
            }
        }
        self.files_ptr()
            .store(core::ptr::null_mut(), Ordering::Release);
        // SAFETY: the set came from a `KVec` (kmalloc) and is unpublished:
        // no new hit can see it, and running ones are done after a grace
        // period. kvfree_rcu() without a head never fails: out of memory,
        // it waits for the grace period itself.
        unsafe { b::dynprobe_kvfree_rcu(set.cast()) };
    }
}
