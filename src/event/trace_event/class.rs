// SPDX-License-Identifier: GPL-2.0

//! The `trace_event_class` each dynprobe event points to. The events of a
//! group whose fields [`super::format::define_fields`] defines (most of
//! them) share one class, as the kernel's syscall events share theirs:
//! each keeps the list of its defined fields itself, which the class's
//! `get_fields` finds, so that a class costs the group once rather than
//! each event (whose object it would otherwise take out of the 192-byte
//! slab size class). An event with a fields array of its own (a declared
//! array length) has a class of its own, which holds the array.
//!
//! Locking: the list of classes has a lock of its own, taken by nothing
//! else while it is held (a leaf: the control path holds the registry
//! lock, and may hold event_mutex, around it). Releasing a class never
//! allocates.

use core::pin::Pin;

use kernel::prelude::*;
use kernel::sync::global_lock;
use kernel::types::Opaque;

use super::core_callbacks::{dynprobe_rs_event_reg, event_fields};
use super::format::DEFINE_ALL;
use crate::sys::bindings as b;
use crate::sys::boxed_slice;

/// A class and what it points to.
///
/// # Invariants
///
/// Boxed (the events' calls point to `class`), and listed in [`CLASSES`]
/// until its last user releases it. `class.system` points to `system`
/// (NUL-terminated) and `class.fields_array` to `fields`, or to
/// [`DEFINE_ALL`] when `fields` is empty; neither changes while it lives.
struct EventClass {
    class: Opaque<b::trace_event_class>,
    system: Pin<KBox<[u8]>>,
    fields: Pin<KBox<[b::trace_event_fields]>>,
    /// Events pointing to it (changed under the list's lock).
    users: usize,
}

// SAFETY: the class is only written before it is listed; the tracing
// core only reads it, and `users` changes under the list's lock.
unsafe impl Send for EventClass {}

global_lock! {
    // SAFETY: initialized in `init`, before any event exists.
    unsafe(uninit) static CLASSES: Mutex<KVec<KBox<EventClass>>> = KVec::new();
}

/// Sets up the list's lock; called once at module init.
pub(crate) fn init() {
    // SAFETY: called exactly once, before any event is made.
    unsafe { CLASSES.init() };
}

impl EventClass {
    fn new(system: &[u8], fields: Pin<KBox<[b::trace_event_fields]>>) -> Result<KBox<Self>> {
        let system = boxed_slice(system.iter().copied(), system.len())?;
        let ec = KBox::new(
            EventClass {
                class: Opaque::zeroed(),
                system,
                fields,
                users: 0,
            },
            GFP_KERNEL,
        )?;
        let class = ec.class.get();
        // SAFETY: `class` is the new, unshared class in the box, which
        // keeps its place; the pointers stored are to buffers the box
        // owns for as long as it lives (type invariant) and to statics.
        unsafe {
            (*class).system = ec.system.as_ptr().cast();
            (*class).fields_array = if ec.fields.is_empty() {
                DEFINE_ALL.0.as_ptr().cast_mut()
            } else {
                ec.fields.as_ptr().cast_mut()
            };
            (*class).reg = Some(dynprobe_rs_event_reg);
            (*class).get_fields = Some(event_fields);
            let fields_head = core::ptr::addr_of_mut!((*class).fields);
            (*fields_head).next = fields_head;
            (*fields_head).prev = fields_head;
        }
        Ok(ec)
    }

    /// Shared by the events of group `system` that have no fields array
    /// of their own.
    fn is_shared_by(&self, system: &[u8]) -> bool {
        self.fields.is_empty() && &self.system[..] == system
    }
}

/// A class for an event of group `system` (NUL-terminated) with fields
/// array `fields` (empty: [`DEFINE_ALL`]), counted as one more user: the
/// group's shared class, or a new one. [`release`] gives it back.
pub(super) fn acquire(
    system: &[u8],
    fields: Pin<KBox<[b::trace_event_fields]>>,
) -> Result<*mut b::trace_event_class> {
    let mut classes = CLASSES.lock();
    if fields.is_empty() {
        if let Some(ec) = classes.iter_mut().find(|ec| ec.is_shared_by(system)) {
            ec.users += 1;
            return Ok(ec.class.get());
        }
    }
    let mut ec = EventClass::new(system, fields)?;
    ec.users = 1;
    let class = ec.class.get();
    classes.push(ec, GFP_KERNEL)?;
    Ok(class)
}

/// Counts one user less of `class`, freeing it with its last.
///
/// # Safety
///
/// `class` came from [`acquire`], and its user no longer uses it: its
/// event is not registered with the tracing core.
pub(super) unsafe fn release(class: *mut b::trace_event_class) {
    let mut classes = CLASSES.lock();
    let Some(i) = classes.iter().position(|ec| ec.class.get() == class) else {
        return;
    };
    let last = classes.get_mut(i).is_some_and(|ec| {
        ec.users -= 1;
        ec.users == 0
    });
    if last {
        // Moves the later ones down: no allocation.
        drop(classes.remove(i));
    }
}
