// SPDX-License-Identifier: GPL-2.0

//! The tracing core's synthetic events, by name, through its exported
//! functions (kernel/trace/trace_events_synth.c, trace_events.c): making
//! and deleting one, and reading what the kernel made of it.

use core::ptr;

use kernel::bindings;
use kernel::ffi::{c_char, c_int, c_void};
use kernel::prelude::*;

use crate::sys::bindings as b;
use crate::sys::events_lock::EventsLock;

/// The tracing core's system of synthetic events.
const SYSTEM: &CStr = c"synthetic";

/// `name` as a C string, up to its first NUL: `EINVAL` when it has none.
fn c_name(name: &[u8]) -> Result<*const c_char> {
    c_name_bytes(name).map(|name| name.as_ptr().cast())
}

/// The bytes of `name` up to its first NUL, that NUL included: `EINVAL`
/// when it has none.
fn c_name_bytes(name: &[u8]) -> Result<&[u8]> {
    let nul = name.iter().position(|&c| c == 0).ok_or(EINVAL)?;
    Ok(&name[..=nul])
}

/// Creates synthetic event `name` (NUL-terminated) with `fields`, or
/// fails with the kernel's errno.
pub(super) fn create(name: &[u8], fields: &mut [b::synth_field_desc]) -> Result {
    let name = c_name(name)?;
    let n = u32::try_from(fields.len()).map_err(|_| EINVAL)?;
    // No owner module. A synthetic event runs only the kernel's code (its
    // fields, print and probe are trace_events_synth.c's), so it needs
    // nothing of dynprobe's once made. An owner would be pinned while the
    // event is enabled, but not while a hist trigger's action refers to
    // it: such an event cannot be deleted at unload, and its owner pointer
    // would then point into the freed module the next time it is enabled
    // (synth_event_reg() calls try_module_get() on it). Owned events are
    // also deleted with a reset of every trace buffer.
    // SAFETY: `name` and the strings `fields` points to are NUL-terminated
    // and live across the call, which copies them.
    kernel::error::to_result(unsafe {
        b::synth_event_create(name, fields.as_mut_ptr(), n, ptr::null_mut())
    })
}

/// Deletes synthetic event `name`: `ENOENT` when there is none, `EBUSY`
/// while it is in use.
pub(super) fn delete(name: &[u8]) -> Result {
    let name = c_name(name)?;
    // SAFETY: `name` is NUL-terminated.
    kernel::error::to_result(unsafe { b::synth_event_delete(name) })
}

/// The top instance's file of a synthetic event, held until dropped.
struct EventFile(*mut b::trace_event_file);

impl EventFile {
    /// The file of event `name`: `ENOENT` when there is no such event
    /// (trace_get_event_file() says `EINVAL`).
    fn get(name: &[u8]) -> Result<Self> {
        let name = c_name(name)?;
        // SAFETY: the system and `name` are NUL-terminated; the top
        // instance is NULL.
        let file = unsafe { b::trace_get_event_file(ptr::null(), SYSTEM.as_char_ptr(), name) };
        match kernel::error::from_err_ptr(file) {
            Ok(file) => Ok(EventFile(file)),
            Err(e) if e == EINVAL => Err(ENOENT),
            Err(e) => Err(e),
        }
    }

    /// The event's call, which stays while the file is held.
    fn call(&self) -> *mut b::trace_event_call {
        // SAFETY: the file is held (type invariant).
        unsafe { (*self.0).event_call }
    }

    /// The event's print fmt ("" when it has none).
    fn print_fmt(&self) -> &[u8] {
        // SAFETY: the call stays while the file is held, and its print fmt
        // is set when the event is made.
        let fmt = unsafe { (*self.call()).print_fmt };
        if fmt.is_null() {
            return b"";
        }
        // SAFETY: a non-NULL print fmt is a C string that lives as long as
        // the event, which the file holds.
        unsafe { CStr::from_char_ptr(fmt) }.to_bytes()
    }
}

impl Drop for EventFile {
    fn drop(&mut self) {
        // SAFETY: the file is held, by this.
        unsafe { b::trace_put_event_file(self.0) };
    }
}

/// The print fmt of synthetic event `name` (NUL-terminated), without a
/// NUL: `None` when there is no such event.
pub(super) fn print_fmt(name: &[u8]) -> Result<Option<KVec<u8>>> {
    let file = match EventFile::get(name) {
        Ok(file) => file,
        Err(e) if e == ENOENT => return Ok(None),
        Err(e) => return Err(e),
    };
    let fmt = file.print_fmt();
    let mut copy = KVec::with_capacity(fmt.len(), GFP_KERNEL)?;
    copy.extend_from_slice(fmt, GFP_KERNEL)?;
    Ok(Some(copy))
}

/// Whether the print fmt of synthetic event `name` is `fmt`, without
/// allocating: `ENOENT` when there is no such event.
pub(super) fn print_fmt_is(name: &[u8], fmt: &[u8]) -> Result<bool> {
    Ok(EventFile::get(name)?.print_fmt() == fmt)
}

/// How many fields the tracing core defined for synthetic event `name`:
/// `ENOENT` when there is no such event.
pub(super) fn fields(name: &[u8]) -> Result<usize> {
    let file = EventFile::get(name)?;
    let call = file.call();
    // trace_get_fields(), a static inline: the class's own list unless it
    // has a get_fields callback. The event is held: its class and its
    // fields stay.
    // SAFETY: the call and its class stay while the file is held.
    let head = unsafe {
        let class = (*call).class;
        match (*class).get_fields {
            Some(get_fields) => get_fields(call),
            None => ptr::addr_of_mut!((*class).fields),
        }
    };
    let mut n = 0;
    // SAFETY: `head` is the event's list of fields, which stays while the
    // file is held.
    let mut pos = unsafe { (*head).next };
    while pos != head {
        n += 1;
        // SAFETY: `pos` is an entry of that list.
        pos = unsafe { (*pos).next };
    }
    Ok(n)
}

/// The head of the kernel's struct synth_event (kernel/trace/trace_synth.h,
/// which no headers package carries; the same from 5.6 to 7.3): its struct
/// dyn_event, the count of hist trigger actions that trace it
/// (`onmatch().trace()`, `.NAME()`, `onmax()` ...), its name. The event's
/// call points back to it (`call->data`, register_synth_event()).
#[repr(C)]
struct SynthEventHead {
    /// struct dyn_event.
    list: b::list_head,
    ops: *mut c_void,
    ref_: c_int,
    name: *mut c_char,
}

/// The longest name [`busy`] compares, NUL included.
const NAME_MAX: usize = 128;

/// Whether deleting synthetic event `name` would fail with `EBUSY` now:
/// `None` when there is no such event, or when the kernel's event does
/// not look as expected (nothing then says it is free).
///
/// What synth_event_delete() would refuse, checked before a clear deletes
/// any event, so that a refused clear deletes none (deleting one and
/// making it again would lose its filters, triggers and id): a hist
/// action tracing it (`se->ref`, destroy_synth_event()), a reference on
/// the event (trace_event_dyn_busy(): event probes, perf,
/// trace_get_event_file() users; the one taken here excepted), and the
/// tracepoint in use (enabled in any instance, or by perf:
/// trace_remove_event_call() refuses). Read under event_mutex, under
/// which each of them changes.
pub(super) fn busy(name: &[u8]) -> Option<bool> {
    let name = c_name_bytes(name).ok()?;
    let file = EventFile::get(name).ok()?;
    let call = file.call();
    // SAFETY: the call stays while the file is held.
    let se = unsafe { (*call).data }.cast::<SynthEventHead>();
    let _lock = EventsLock::lock_to_read();
    // The head is checked before it is believed: it lies before the call
    // inside one allocation, and its name pointer, read without faulting,
    // names this event.
    if se.is_null()
        || se.addr() >= call.addr()
        || call.addr() - se.addr() > 4096
        || name.len() > NAME_MAX
    {
        return None;
    }
    let mut name_ptr: *mut c_char = ptr::null_mut();
    let mut se_name = [0u8; NAME_MAX];
    // SAFETY: both reads are checked by the kernel (no fault), into
    // buffers of the sizes given.
    let unreadable = unsafe {
        bindings::copy_from_kernel_nofault(
            ptr::addr_of_mut!(name_ptr).cast(),
            ptr::addr_of!((*se).name).cast(),
            core::mem::size_of::<*mut c_char>(),
        ) != 0
            || bindings::copy_from_kernel_nofault(
                se_name.as_mut_ptr().cast(),
                name_ptr.cast_const().cast(),
                name.len(),
            ) != 0
    };
    if unreadable || se_name[..name.len()] != *name {
        return None;
    }
    // SAFETY: the call stays while the file is held; its tracepoint, when
    // it has one, is the event's own.
    let tp = unsafe { (*call).__bindgen_anon_1.tp };
    // SAFETY: as above.
    let flags = unsafe { (*call).flags } as u32;
    if flags & b::TRACE_EVENT_FL_TRACEPOINT == 0 || tp.is_null() {
        return None;
    }
    // SAFETY: the head checked out as this event's, which the file holds;
    // the counts and the tracepoint's probes change under event_mutex,
    // which is held; each is read once, as READ_ONCE(), atomic_read() and
    // rcu_access_pointer() read them.
    let busy = unsafe {
        ptr::read_volatile(ptr::addr_of!((*se).ref_)) != 0
            || bindings::atomic_read(
                ptr::addr_of!((*call).__bindgen_anon_2.refcnt).cast::<bindings::atomic_t>(),
            ) > 1
            || perf_refcount(call) != 0
            || !ptr::read_volatile(ptr::addr_of!((*tp).funcs)).is_null()
    };
    Some(busy)
}

/// The event's perf users (none without perf).
///
/// # Safety
///
/// `call` is a live event's call, read under event_mutex.
#[cfg(CONFIG_PERF_EVENTS)]
unsafe fn perf_refcount(call: *mut b::trace_event_call) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { (*call).perf_refcount }
}

/// # Safety
///
/// None: without perf there is nothing to read.
#[cfg(not(CONFIG_PERF_EVENTS))]
unsafe fn perf_refcount(_call: *mut b::trace_event_call) -> c_int {
    0
}
