// SPDX-License-Identifier: GPL-2.0

//! Event probes' hook: the source event's records, through in-kernel perf
//! counters (src/shim/eprobe.c says why perf). The counters are made with
//! the probe, outside event_mutex, because making and releasing them takes
//! it (`perf_trace_init()`, `perf_trace_destroy()`), and run from then on:
//! enabling the event probe needs no perf call under event_mutex, and the
//! overflow handler returns at once while the event probe is disabled.
//! The source event stays held (busy) while the probe exists, as the
//! kernel's event probes hold theirs. Counters follow CPU hotplug: a
//! worker makes those of CPUs that come online and releases those of CPUs
//! that went down.

use core::ptr::NonNull;

use kernel::prelude::*;

use super::Hook;
use crate::lang::{DefView, EventField, FieldKind, FilterCheck};
use crate::probe::Feed;
use crate::probe::Place;
use crate::sys::bindings as b;

/// `SYSTEM.EVENT` as two NUL-terminated names.
struct SourceName {
    buf: [u8; 2 * crate::lang::MAX_EVENT_NAME_LEN + 2],
    event_at: usize,
}

impl SourceName {
    fn new(system: &str, event: &str) -> Option<Self> {
        let mut buf = [0u8; 2 * crate::lang::MAX_EVENT_NAME_LEN + 2];
        let event_at = system.len().checked_add(1)?;
        buf.get_mut(..system.len())?
            .copy_from_slice(system.as_bytes());
        buf.get_mut(event_at..event_at.checked_add(event.len())?)?
            .copy_from_slice(event.as_bytes());
        // The NULs after each name: the buffer is zeroed and one byte
        // longer than both names.
        buf.get(event_at.checked_add(event.len())?)?;
        Some(SourceName { buf, event_at })
    }

    /// From a place's `SYSTEM.EVENT` (the event has no `.`).
    fn of_place(place: &str) -> Option<Self> {
        let dot = place.rfind('.')?;
        Self::new(place.get(..dot)?, place.get(dot + 1..)?)
    }

    fn system(&self) -> *const u8 {
        self.buf.as_ptr()
    }

    fn event(&self) -> *const u8 {
        self.buf[self.event_at..].as_ptr()
    }
}

/// Whether an event probe may attach to `system`/`event`.
pub(crate) fn event_source(system: &str, event: &str) -> bool {
    let Some(name) = SourceName::new(system, event) else {
        return false;
    };
    // SAFETY: both names are NUL-terminated and outlive the call.
    unsafe { b::dynprobe_event_source(name.system(), name.event()) == 0 }
}

/// Whether event probes take filters on this kernel.
pub(crate) fn event_filters() -> bool {
    // SAFETY: a read of flags written only during module init.
    unsafe { b::dynprobe_event_filters() }
}

/// Whether the kernel's filter parser takes `filter` for `system`/`event`
/// (it logs a bad filter's error itself).
pub(crate) fn event_filter(system: &str, event: &str, filter: &str) -> FilterCheck {
    let Some(name) = SourceName::new(system, event) else {
        return FilterCheck::Rejected;
    };
    let Ok(mut text) = super::nul_terminated(filter.as_bytes()) else {
        return FilterCheck::Rejected;
    };
    // SAFETY: the names and the filter are NUL-terminated and outlive the
    // call; the filter is parsed, not kept.
    let ret = unsafe {
        b::dynprobe_event_filter_check(name.system(), name.event(), text.as_mut_ptr().cast())
    };
    match ret {
        0 => FilterCheck::Accepted,
        r if r == -crate::lang::errno::EOPNOTSUPP => FilterCheck::Unsupported,
        _ => FilterCheck::Rejected,
    }
}

/// Field `field` of `system`/`event`, as the parser wants it.
pub(crate) fn event_field(system: &str, event: &str, field: &str) -> Option<EventField> {
    let name = SourceName::new(system, event)?;
    let mut cfield = [0u8; 128];
    cfield
        .get_mut(..field.len())?
        .copy_from_slice(field.as_bytes());
    cfield.get(field.len())?;
    let mut out = b::dynprobe_event_field {
        offset: 0,
        size: 0,
        is_signed: false,
        kind: 0,
    };
    // SAFETY: the names are NUL-terminated and outlive the call; `out` is
    // a valid place to write the answer.
    let ret =
        unsafe { b::dynprobe_event_field(name.system(), name.event(), cfield.as_ptr(), &mut out) };
    if ret != 0 {
        return None;
    }
    let kind = match out.kind {
        b::dynprobe_field_kind_DYNPROBE_FIELD_VALUE => FieldKind::Value,
        b::dynprobe_field_kind_DYNPROBE_FIELD_ARRAY => FieldKind::Array,
        b::dynprobe_field_kind_DYNPROBE_FIELD_DYN_STRING => FieldKind::DynString,
        b::dynprobe_field_kind_DYNPROBE_FIELD_REL_STRING => FieldKind::RelString,
        b::dynprobe_field_kind_DYNPROBE_FIELD_STATIC_STRING => FieldKind::StaticString,
        _ => FieldKind::PtrString,
    };
    Some(EventField {
        offset: u16::try_from(out.offset).ok()?,
        size: u16::try_from(out.size).ok()?,
        signed: out.is_signed,
        kind,
    })
}

/// Sets up the CPU hotplug states through which event probes' counters
/// follow CPUs that come online or go down (src/shim/eprobe.c).
pub(crate) fn init() -> Result {
    // SAFETY: called once from module init, before any event probe.
    kernel::error::to_result(unsafe { b::dynprobe_eprobe_init() })
}

/// Undoes [`init`], once no event probe is left.
pub(crate) fn exit() {
    // SAFETY: called from module exit (or a failed init) after `init`
    // succeeded, with every event probe detached.
    unsafe { b::dynprobe_eprobe_exit() }
}

/// The counters and the held source of one event probe.
///
/// # Invariants
///
/// `eprobe`, once set, came from `dynprobe_eprobe_attach()` and is
/// detached on drop only. The hook stays in the box it was made in (see
/// `hook::boxed`): the C object points to `feed`.
pub(crate) struct EprobeHook {
    eprobe: Option<NonNull<b::dynprobe_eprobe>>,
    feed: Feed,
}

// SAFETY: the C object is touched only at creation and in `drop`, each
// from one task, and by the hotplug worker, under the C side's lock; its
// handlers run on their own.
unsafe impl Send for EprobeHook {}
// SAFETY: `&EprobeHook` gives access to nothing of the C object.
unsafe impl Sync for EprobeHook {}

impl EprobeHook {
    /// Attaches to the place's `SYSTEM.EVENT`; hits that pass the place's
    /// filter run `feed`. Called without event_mutex held.
    ///
    /// # Safety
    ///
    /// The feed's sink and definition outlive the hook.
    pub(crate) unsafe fn boxed(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
        let name = place
            .symbol
            .ok_or(EINVAL)?
            .to_str()
            .ok()
            .and_then(SourceName::of_place)
            .ok_or(EINVAL)?;
        let filter = place
            .filter
            .as_deref_mut()
            .map_or(core::ptr::null_mut(), |f| f.as_mut_ptr().cast());
        let mut hook = KBox::new(EprobeHook { eprobe: None, feed }, GFP_KERNEL)?;
        // SAFETY: the names and the filter are NUL-terminated (the filter
        // is parsed, not kept); the feed is in the hook's box, where it
        // stays until the drop has released the counters.
        let eprobe = unsafe {
            b::dynprobe_eprobe_attach(name.system(), name.event(), filter, hook.feed.get())
        };
        let eprobe = kernel::error::from_err_ptr(eprobe)?;
        hook.eprobe = Some(NonNull::new(eprobe).ok_or(ENOMEM)?);
        Ok(hook)
    }
}

impl Hook for EprobeHook {
    fn arm(&self, _def: DefView<'_>) -> Result {
        // The counters run from creation; the handler checks the sink.
        Ok(())
    }

    fn disarm(&self) {}

    fn misses(&self) -> u64 {
        0
    }

    fn feed(&self) -> &Feed {
        &self.feed
    }
}

impl Drop for EprobeHook {
    fn drop(&mut self) {
        if let Some(eprobe) = self.eprobe {
            // SAFETY: attached (type invariant) and detached only here;
            // the drop runs without event_mutex held (probes are dropped
            // so).
            unsafe { b::dynprobe_eprobe_detach(eprobe.as_ptr()) };
        }
    }
}
