// SPDX-License-Identifier: GPL-2.0

//! What the tracing core and src/shim/holds.c call on a dynprobe event by
//! its `trace_event_call`: `reg` of its class (enabling and disabling, in
//! a trace instance or for perf), `get_fields` (the event's own list of
//! its fields), and the count of references dynprobe's
//! own event probes take and the flag new references check while a clear
//! removes the event.

use core::ffi::c_void;
use core::sync::atomic::Ordering;

use kernel::ffi::c_int;

use super::TraceEvent;
use crate::sys::bindings as b;
use crate::sys::events_lock::Held;

/// `reg` of the event's class: enabling and disabling.
///
/// # Safety
///
/// Called by the tracing core for a live event: with event_mutex held
/// for (un)registering in a trace instance or for perf (and perf's
/// open and close, which need nothing here); perf's add and del, which
/// also need nothing here, come from perf's scheduling without it.
/// Named: src/shim/holds.c tells dynprobe's events by it.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_event_reg(
    call: *mut b::trace_event_call,
    ty: b::trace_reg,
    data: *mut c_void,
) -> c_int {
    // SAFETY: per the function's contract.
    let ev = unsafe { TraceEvent::from_call(call) };
    let file = data.cast::<b::trace_event_file>();
    let (enable, file) = match ty {
        b::trace_reg_TRACE_REG_REGISTER => (true, Some(file)),
        b::trace_reg_TRACE_REG_UNREGISTER => (false, Some(file)),
        b::trace_reg_TRACE_REG_PERF_REGISTER => (true, None),
        b::trace_reg_TRACE_REG_PERF_UNREGISTER => (false, None),
        _ => return 0,
    };
    // SAFETY: the tracing core (un)registers with event_mutex held
    // (trace_events.c, trace_event_perf.c).
    let held = unsafe { Held::by_caller() };
    let ret = if enable {
        ev.enable(file, held)
    } else {
        ev.disable(file, held)
    };
    match ret {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// Counts a reference one of dynprobe's own event probes takes (`delta`
/// 1) or drops (-1) on the event of `call` (src/shim/holds.c).
///
/// # Safety
///
/// `call` is a live dynprobe event's call; the caller holds dynprobe's
/// control path (the registry lock), which also reads the count.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_internal_ref(
    call: *mut b::trace_event_call,
    delta: c_int,
) {
    // SAFETY: per the function's contract.
    let ev = unsafe { TraceEvent::from_call(call) };
    ev.parts.internal_refs.fetch_add(delta, Ordering::Relaxed);
}

/// Whether the event of `call` is being removed by a clear, which new
/// references must not find (src/shim/holds.c).
///
/// # Safety
///
/// `call` is a live dynprobe event's call.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_event_closing(call: *mut b::trace_event_call) -> bool {
    // SAFETY: per the function's contract.
    let ev = unsafe { TraceEvent::from_call(call) };
    ev.parts.closing()
}

/// `get_fields` of the event's class: the list of the fields the tracing
/// core defined for the event, which each event keeps itself (a class
/// may be its group's: `trace_event/class.rs`).
///
/// # Safety
///
/// Called by the tracing core for a live event's call.
pub(super) unsafe extern "C" fn event_fields(call: *mut b::trace_event_call) -> *mut b::list_head {
    // SAFETY: per the function's contract.
    let ev = unsafe { TraceEvent::from_call(call) };
    ev.fields.get()
}
