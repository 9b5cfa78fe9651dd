// SPDX-License-Identifier: GPL-2.0

//! The tracing core's event_mutex, as dynprobe takes it ([`EventsLock`])
//! and as proof that it is held ([`Held`]). It is the kernel's mutex,
//! taken through the kernel crate's bindings (`mutex_lock()` and
//! `lockdep_assert_held()` through its helpers, which lockdep checks).

use core::marker::PhantomData;

use kernel::bindings;

use crate::sys::bindings as b;

/// event_mutex, the tracing core's.
fn event_mutex() -> *mut bindings::mutex {
    // SAFETY: the resolved-symbol table is set up at module init, and
    // event_mutex is found or the module does not load.
    unsafe { (*core::ptr::addr_of!(b::dynprobe_ksyms)).event_mutex.cast() }
}

/// event_mutex, held by the tracing core around a callback: made only by
/// [`Held::by_caller`], which lockdep checks. (dynprobe's own holds are
/// [`EventsLock`] guards.)
#[derive(Clone, Copy)]
pub(crate) struct Held<'a>(PhantomData<&'a ()>);

impl Held<'_> {
    /// The proof for a callback the tracing core calls with event_mutex
    /// held (`reg` of a trace event class).
    ///
    /// # Safety
    ///
    /// The caller holds event_mutex, and keeps holding it while the token
    /// is used. With lockdep, a caller that does not is a splat here.
    pub(crate) unsafe fn by_caller() -> Self {
        // SAFETY: lockdep_assert_held() only reads lockdep's state.
        unsafe { bindings::mutex_assert_is_held(event_mutex()) };
        Held(PhantomData)
    }
}

/// event_mutex, taken by dynprobe: around adding and removing a probe,
/// and across a batch of event removals, so that their busy checks and
/// the removals they allow see one state (enabling takes it too).
pub(crate) struct EventsLock {
    /// Empty the buffers that held records of removed events on unlock.
    reset: bool,
    /// Unlocked by the task that locked it.
    _not_send: PhantomData<*mut ()>,
}

impl EventsLock {
    /// Takes event_mutex for a batch of event removals.
    pub(crate) fn lock() -> Self {
        Self::take(true)
    }

    /// Takes event_mutex to change probes.
    pub(crate) fn lock_probes() -> Self {
        Self::take(false)
    }

    /// Takes event_mutex to read what changes under it (a synthetic
    /// event's users).
    pub(crate) fn lock_to_read() -> Self {
        Self::take(false)
    }

    fn take(reset: bool) -> Self {
        // SAFETY: plain mutex_lock() of event_mutex; released in `drop`.
        unsafe { bindings::mutex_lock(event_mutex()) };
        EventsLock {
            reset,
            _not_send: PhantomData,
        }
    }
}

impl Drop for EventsLock {
    fn drop(&mut self) {
        // SAFETY: the resolved-symbol table is set up at module init.
        let ksyms = unsafe { &*core::ptr::addr_of!(b::dynprobe_ksyms) };
        if self.reset && ksyms.have.tracing_reset_all_online_cpus {
            // Records of removed events cannot be printed any more. The
            // tracing core marked the buffers that held them; only those
            // are emptied, so after a batch that removed nothing this
            // changes nothing (the kernel's dyn_events_release_all calls
            // it the same way). It wants event_mutex held.
            // SAFETY: event_mutex is held; the stub checks the symbol.
            unsafe { b::dynprobe_call_tracing_reset_all_online_cpus() };
        }
        // SAFETY: locked by `take()` in this task (the guard is not Send).
        unsafe { bindings::mutex_unlock(event_mutex()) };
    }
}
