// SPDX-License-Identifier: GPL-2.0

//! One dynprobe event as the control path sees it: compiled definitions
//! and the trace event and probes built from them (src/event/trace_event.rs,
//! src/probe/mod.rs), and the wait for the hits still running on them.
//! What a hit runs is src/fire.rs.

mod probe_list;
pub(crate) mod synth;
pub(crate) mod trace_event;

use core::mem::ManuallyDrop;

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::event::trace_event::{EventBox, TraceEvent};
use crate::lang::{DefView, Family};
pub(crate) use crate::probe::compiled::{compile, new_definition, CompiledDef};
use crate::probe::Probe;
pub(crate) use crate::sys::events_lock::EventsLock;

/// A live event: its trace event and the probes that feed it.
pub(crate) struct Event {
    /// Dropped with the event, or leaked if it cannot be unlinked.
    trace: ManuallyDrop<EventBox>,
    /// Out of tracefs; the probes still exist until the event is dropped.
    unlinked: bool,
}

impl Event {
    /// Creates the trace event and its first (disabled) probe for `def`.
    pub(crate) fn create(def: Arc<CompiledDef>) -> Result<Self> {
        Ok(Event {
            trace: ManuallyDrop::new(TraceEvent::create(def)?),
            unlinked: false,
        })
    }

    fn trace(&self) -> &TraceEvent {
        &self.trace
    }

    fn probes(&self) -> &[Probe] {
        // SAFETY: `Event` is owned by the control path; probes are added
        // and removed only through `&mut self`, which this borrow excludes.
        unsafe { self.trace().probes() }
    }

    /// Adds a probe for `def` (same event, same argument types).
    pub(crate) fn add_probe(&mut self, def: Arc<CompiledDef>) -> Result {
        // SAFETY: `&mut self` is the control path, and no slice of the
        // probes outlives this call.
        unsafe { self.trace().add_probe(def) }
    }

    /// The definitions of the live probes, first one first.
    pub(crate) fn defs(&self) -> impl Iterator<Item = DefView<'_>> + '_ {
        self.probes().iter().map(|p| p.def())
    }

    /// The event's own definition: its names, fields and format.
    pub(crate) fn def(&self) -> DefView<'_> {
        self.trace().def()
    }

    /// Enabled somewhere, or referenced (perf, hist triggers).
    pub(crate) fn busy(&self) -> bool {
        !self.unlinked && self.trace().busy()
    }

    /// Held from outside dynprobe (see [`TraceEvent::held_outside`]).
    pub(crate) fn held_outside(&self, lock: &EventsLock) -> bool {
        !self.unlinked && self.trace().held_outside(lock)
    }

    /// Referenced by dynprobe's own event probes.
    pub(crate) fn held_inside(&self, lock: &EventsLock) -> bool {
        !self.unlinked && self.trace().held_inside(lock)
    }

    /// Refuses new enables and references while a clear removes it.
    pub(crate) fn set_closing(&self, closing: bool, lock: &EventsLock) {
        self.trace().set_closing(closing, lock);
    }

    /// Whether a hit may still be writing through the file of a trace
    /// instance it was enabled in (see [`wait_for_hits`]).
    fn hits_may_run(&self, lock: &EventsLock) -> bool {
        !self.unlinked && self.trace().hits_may_run(lock)
    }

    /// Whether one of its probes is an event probe on `group`/`event`.
    pub(crate) fn probes_event(&self, group: &str, event: &str) -> bool {
        self.defs().any(|d| {
            d.kind().family() == Family::Eprobe
                && d.full_symbol().and_then(|s| s.rsplit_once('.')) == Some((group, event))
        })
    }

    /// Hits and misses of each live probe, in listing order.
    pub(crate) fn counts(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.probes().iter().map(|p| p.counts())
    }

    /// Number of live probes.
    pub(crate) fn nr_probes(&self) -> usize {
        self.probes().len()
    }

    /// Removes the probe at listing position `i` (not the last one) and
    /// frees its definition unless the event's shape still uses it.
    pub(crate) fn remove_probe(&mut self, i: usize) -> Result {
        // SAFETY: as in `add_probe`.
        let probe = unsafe { self.trace().take_probe(i) }?;
        // Torn down here, after event_mutex is released.
        drop(probe);
        Ok(())
    }

    /// Takes the event out of tracefs; its probes and kernel objects go
    /// when it is dropped. On error (`EBUSY`) nothing changed and the
    /// event stays usable.
    pub(crate) fn remove(&mut self) -> Result {
        if !self.unlinked {
            let lock = EventsLock::lock();
            self.unlink(&lock)?;
        }
        Ok(())
    }

    /// `remove` for a batch of removals under one `EventsLock`.
    pub(crate) fn unlink(&mut self, lock: &EventsLock) -> Result {
        if self.unlinked {
            return Ok(());
        }
        self.trace().unlink(lock)?;
        self.unlinked = true;
        Ok(())
    }
}

/// Sets up what events share; called once at module init, before any
/// event is made.
pub(crate) fn init() {
    trace_event::init();
}

/// Waits, once for them all, until no hit that read the file of a trace
/// instance before `events` were disabled runs: removing an event frees
/// its files. Waits only if one of them was enabled in an instance since
/// the last wait (a batch of definitions never enabled takes none). The
/// caller holds event_mutex from before its busy checks until the
/// removals, so none of them is enabled meanwhile.
pub(crate) fn wait_for_hits<'a>(
    events: impl Iterator<Item = &'a Event> + Clone,
    lock: &EventsLock,
) {
    if events.clone().any(|e| e.hits_may_run(lock)) {
        trace_event::grace_period();
        for ev in events.filter(|e| !e.unlinked) {
            ev.trace().hits_waited(lock);
        }
    }
}

impl Drop for Event {
    /// Frees the event once no probe handler or trace reader can see it.
    /// An event that cannot be removed is leaked rather than freed under
    /// its users. At module unload none is held: every reference on an
    /// event holds the module too (src/shim/holds.c).
    fn drop(&mut self) {
        if self.remove().is_err() {
            pr_err!(
                "event {} still referenced; leaking it\n",
                self.def().event()
            );
            return;
        }
        // SAFETY: the event is out of tracefs (`remove` succeeded) and not
        // used after this; event_mutex is not held, so the probes'
        // teardown may wait for their handlers.
        unsafe { ManuallyDrop::drop(&mut self.trace) };
    }
}
