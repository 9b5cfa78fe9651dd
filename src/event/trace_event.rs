// SPDX-License-Identifier: GPL-2.0

//! The trace event of a dynprobe event: a dynamic `trace_event_call`
//! registered with the tracing core, so that events/GRP/EVENT has enable,
//! filter, format, trigger, hist and id like any event, and the probes
//! that feed it. This file owns the pinned event itself: making and
//! registering it, enabling and disabling it, its probe list, the checks
//! a removal makes and unlinking it. What its call points to are files
//! of their own: its class, most often its group's
//! (`trace_event/class.rs`), its format (`trace_event/format.rs`), the
//! output function (`trace_event/print.rs`), the callbacks the tracing
//! core and holds.c call it by (`trace_event/core_callbacks.rs`), and the
//! trace instances its hits write to (`trace_event/instance_files.rs`).
//!
//! Locking: the tracing core calls [`dynprobe_rs_event_reg`] with event_mutex held;
//! dynprobe takes event_mutex ([`EventsLock`]) to add or remove a probe
//! and to unlink events, so a probe list never changes under an enable.
//! The control path (the registry lock, taken before event_mutex) is the
//! only one that adds or removes probes. Probe handlers read the sink
//! under RCU (they run with preemption disabled).

mod class;
mod core_callbacks;
mod event_box;
mod format;
mod instance_files;
mod parts;
mod print;

use core::cell::UnsafeCell;
use core::marker::PhantomPinned;
use core::mem::offset_of;
use core::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, Ordering};

use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

use self::format::{defined_fields, fields_array, shape_text, Shape};
use self::parts::EventParts;
use self::print::EVENT_FUNCS;
use super::probe_list::ProbeList;
use crate::lang::{DefView, Family};
use crate::probe::compiled::CompiledDef;
use crate::probe::Probe;
use crate::sys::bindings as b;
use crate::sys::boxed_slice;
use crate::sys::events_lock::{EventsLock, Held};
pub(crate) use event_box::EventBox;

/// A dynprobe event's trace event and probes.
///
/// # Invariants
///
/// Once [`TraceEvent::create`] returns, the `trace_event_call` is
/// registered with the tracing core and points into this pinned object
/// (its fields, its text), to its class and to the shared functions until
/// it is unlinked; the object is dropped only after that (or if it was
/// never registered). It lives in an [`EventBox`], with its text after
/// it, from where `create` puts it there: only `create` makes one.
/// `probes` changes only with event_mutex held, by the control path.
pub(crate) struct TraceEvent {
    /// The `trace_event_call` and the sink, side by side: the hit path
    /// finds the call from the sink. `call.class` is from
    /// [`class::acquire`] (or null, before it is set), released on drop.
    core: Opaque<b::dynprobe_event_core>,
    /// The fields the tracing core defined for the event, which its class's
    /// `get_fields` finds here: the class may be its group's.
    fields: Opaque<b::list_head>,
    /// What the control path reads but no hit does; how many words of
    /// text follow the event.
    parts: EventParts,
    probes: UnsafeCell<ProbeList>,
    _pin: PhantomPinned,
}

// The event in 192 bytes, its text after it: its class is elsewhere, most
// often its group's.
const _: () = assert!(core::mem::size_of::<TraceEvent>() <= 192);
// `from_call` finds the event from its call at the core's offset.
const _: () = assert!(offset_of!(b::dynprobe_event_core, call) == 0);

// SAFETY: the kernel objects are changed under event_mutex (enable,
// disable, probe changes) or by the tracing core's own locking; `probes`
// as the type invariant says.
unsafe impl Send for TraceEvent {}
// SAFETY: as for `Send`.
unsafe impl Sync for TraceEvent {}

impl TraceEvent {
    /// Creates the event for `def` with its first (disarmed) probe, and
    /// registers it with the tracing core.
    pub(crate) fn create(def: Arc<CompiledDef>) -> Result<EventBox> {
        let view = def.view();
        // Not TRACE_EVENT_FL_KPROBE (nor _UPROBE): the kernel paths that
        // test it take the call for a trace_kprobe's and container_of()
        // into one (BPF: attaching a kprobe program, bpf_override_return's
        // trace_kprobe_on_func_entry() and _error_injectable(),
        // bpf_get_kprobe_info(), a link's info and fdinfo), reading
        // dynprobe's event as the kernel's structure. All the flag gave a
        // dynprobe kprobe event was that the kernel's event probes skip it
        // as a source, as they skip the kernel's kprobe events
        // (find_and_get_event() in trace_eprobe.c): TRACE_EVENT_FL_EPROBE
        // keeps that, and nothing else in 7.2 reads it. perf needs no
        // flag. Without one of those flags BPF refuses to attach
        // (EINVAL), as it should: dynprobe never runs BPF programs.
        // TRACE_EVENT_FL_FPROBE, which no kernel path reads, marks the
        // others, as it marks the kernel's fprobe events.
        let flags = b::TRACE_EVENT_FL_DYNAMIC
            | if view.kind().family() == Family::Kprobe {
                b::TRACE_EVENT_FL_EPROBE
            } else {
                b::TRACE_EVENT_FL_FPROBE
            };
        let text = shape_text(&def)?;
        let mut ev = EventBox::new(
            TraceEvent {
                core: Opaque::zeroed(),
                fields: Opaque::zeroed(),
                parts: EventParts::new(def.clone(), text.len())?,
                probes: UnsafeCell::new(ProbeList::EMPTY),
                _pin: PhantomPinned,
            },
            &text,
        )?;
        drop(text);
        let (fields, first_defined) = fields_array(ev.shape())?;
        // SAFETY: not registered yet, so nothing else sees the event.
        unsafe { ev.event_mut() }
            .parts
            .set_first_defined(first_defined)?;
        let fields = boxed_slice(fields.iter().copied(), fields.len())?;
        let call = ev.call();
        let (system_text, name) = ev.parts.def.c_names();
        if system_text.last() != Some(&0) || name.last() != Some(&0) {
            return Err(EINVAL);
        }
        let class = class::acquire(system_text, fields)?;
        let (system, name) = (
            system_text.as_ptr().cast::<c_char>(),
            name.as_ptr().cast::<c_char>(),
        );
        // SAFETY: `ev` is pinned and not shared yet; the pointers stored
        // are to its own pinned fields, to the class (which `drop`
        // releases), to buffers it owns (the shape's definition, whose
        // text holds the name, NUL-terminated, as checked), which live as
        // long as the registration (type invariant), and to statics.
        unsafe {
            let fields_head = ev.fields.get();
            (*fields_head).next = fields_head;
            (*fields_head).prev = fields_head;
            (*call).class = class;
            (*call).__bindgen_anon_1.name = name;
            (*call).print_fmt = ev.shape().print_fmt().cast_mut();
            (*call).event.funcs = EVENT_FUNCS.0.get();
            (*call).flags = flags as c_int;
        }
        // SAFETY: the sink is part of `ev`, which outlives its probes
        // (they go first in `drop`).
        let probe = unsafe { Probe::new(ev.sink(), def) }?;
        // SAFETY: not registered yet, so nothing else sees `probes`.
        unsafe { (*ev.probes.get()).push(probe) }?;
        let _lock = EventsLock::lock_probes();
        // The name is checked and the event registered under one hold of
        // event_mutex, so no event of that name can appear in between;
        // every event counts, the ftrace/* ones too, as for the kernel's
        // probe events.
        // SAFETY: both names are NUL-terminated (checked above);
        // event_mutex is held.
        if unsafe { b::dynprobe_event_name_taken(system, name) } {
            return Err(EEXIST);
        }
        // SAFETY: `call` is fully set up; event_mutex is held, as adding
        // an event call wants. On failure nothing stays registered.
        unsafe {
            if b::register_trace_event(core::ptr::addr_of_mut!((*call).event)) == 0 {
                return Err(ENODEV);
            }
            let ret = b::trace_add_event_call(call);
            if ret != 0 {
                b::unregister_trace_event(core::ptr::addr_of_mut!((*call).event));
                return Err(Error::from_errno(ret));
            }
            // The tracing core defines the fields as it adds the event to
            // the trace instances and only warns when a field cannot be
            // allocated ("Could not initialize trace point events/..."):
            // the event would stay registered with fields missing from its
            // format, its filters and its triggers. It is taken out again,
            // never enabled or seen by a hit, and the write fails. The
            // removal unregisters its trace_event too (event_remove()):
            // a second unregister would free its type number twice.
            if defined_fields(ev.fields.get()) != ev.shape().fields().count() {
                b::trace_remove_event_call(call);
                return Err(ENOMEM);
            }
        }
        Ok(ev)
    }

    /// The event that owns `call`.
    ///
    /// # Safety
    ///
    /// `call` is the call of a live `TraceEvent`.
    unsafe fn from_call<'a>(call: *mut b::trace_event_call) -> &'a Self {
        // SAFETY: per the contract, `call` is the `call` field of a live
        // `TraceEvent` (`Opaque` is transparent).
        unsafe {
            &*call
                .cast::<u8>()
                .sub(offset_of!(TraceEvent, core) + offset_of!(b::dynprobe_event_core, call))
                .cast::<Self>()
        }
    }

    /// The event's `trace_event_call`.
    fn call(&self) -> *mut b::trace_event_call {
        // SAFETY: a field of the pinned core, no read.
        unsafe { core::ptr::addr_of_mut!((*self.core.get()).call) }
    }

    /// Where its probes' hits find where records go.
    fn sink(&self) -> *mut b::dynprobe_sink {
        // SAFETY: a field of the pinned core, no read.
        unsafe { core::ptr::addr_of_mut!((*self.core.get()).sink) }
    }

    /// The one trace instance the event is enabled in, when it is one.
    fn file_ptr(&self) -> &AtomicPtr<b::trace_event_file> {
        // SAFETY: `file` is an aligned pointer in the pinned sink, read
        // by the C hit path with READ_ONCE.
        unsafe { AtomicPtr::from_ptr(core::ptr::addr_of_mut!((*self.sink()).file)) }
    }

    fn flags(&self) -> &AtomicU32 {
        // SAFETY: `flags` is a naturally aligned u32 in the pinned sink,
        // read by the C hit path with READ_ONCE.
        unsafe { AtomicU32::from_ptr(core::ptr::addr_of_mut!((*self.sink()).flags)) }
    }

    fn files_ptr(&self) -> &AtomicPtr<b::dynprobe_files> {
        // SAFETY: `files` is an aligned pointer in the pinned sink, read
        // by the C hit path with rcu_dereference.
        unsafe { AtomicPtr::from_ptr(core::ptr::addr_of_mut!((*self.sink()).files)) }
    }

    /// Enables the event in trace instance `file`, or for perf (`None`).
    /// Enabling in an instance takes a module reference, so that rmmod is
    /// refused while an event is enabled. perf's registration takes none:
    /// it lasts as long as perf's counters, each of which holds a
    /// reference on the event (perf_trace_init()), and those pin the
    /// module one by one unless they are dynprobe's own event probes'
    /// (src/shim/holds.c). A pin of the registration's would stay with
    /// whichever user came first, outside perf or an event probe.
    fn enable(&self, file: Option<*mut b::trace_event_file>, held: Held<'_>) -> Result {
        if self.parts.closing() {
            return Err(EBUSY);
        }
        let was_enabled = self.flags().load(Ordering::Relaxed) != 0;
        let bit = match file {
            Some(file) => {
                // SAFETY: `this_module()` is this module; a reference is
                // taken or the call fails.
                if !unsafe { b::try_module_get(crate::compat::this_module().as_ptr().cast()) } {
                    return Err(ENODEV);
                }
                if let Err(e) = self.add_file(file, held) {
                    self.unpin(Some(file));
                    return Err(e);
                }
                // From here until a removal has waited, a hit may hold
                // this instance's file ([`TraceEvent::wait_for_hits`]).
                self.parts.set_traced(true);
                b::DYNPROBE_SINK_TRACE
            }
            None => b::DYNPROBE_SINK_PERF,
        };
        self.flags().fetch_or(bit, Ordering::Release);
        if was_enabled {
            return Ok(());
        }
        if let Err(e) = self.arm_all(held) {
            self.drop_target(file, held);
            self.unpin(file);
            return Err(e);
        }
        Ok(())
    }

    /// Disables the event in trace instance `file`, or for perf (`None`).
    /// Needs no memory and fails only for an instance it is not enabled
    /// in.
    fn disable(&self, file: Option<*mut b::trace_event_file>, held: Held<'_>) -> Result {
        if let Some(file) = file {
            if file.is_null() || !self.files(held).contains(&file) {
                return Err(ENOENT);
            }
        }
        self.drop_target(file, held);
        if self.flags().load(Ordering::Relaxed) == 0 {
            // SAFETY: event_mutex is held (`held`).
            for probe in unsafe { self.probes_locked(held) } {
                probe.disarm();
            }
        }
        self.unpin(file);
        Ok(())
    }

    /// Stops writing to `file` (or to perf), without allocating.
    fn drop_target(&self, file: Option<*mut b::trace_event_file>, held: Held<'_>) {
        match file {
            Some(file) => self.remove_file(file, held),
            None => {
                self.flags()
                    .fetch_and(!b::DYNPROBE_SINK_PERF, Ordering::Release);
            }
        }
    }

    /// Drops the module reference `enable` took for `file` (none for perf).
    fn unpin(&self, file: Option<*mut b::trace_event_file>) {
        if file.is_none() {
            return;
        }
        // SAFETY: drops the reference `enable` took.
        unsafe { b::module_put(crate::compat::this_module().as_ptr().cast()) };
    }

    fn arm_all(&self, held: Held<'_>) -> Result {
        // SAFETY: event_mutex is held (`held`).
        let probes = unsafe { self.probes_locked(held) };
        for (i, probe) in probes.iter().enumerate() {
            if let Err(e) = probe.arm() {
                for armed in probes.iter().take(i).rev() {
                    armed.disarm();
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// The probes, with event_mutex held.
    ///
    /// # Safety
    ///
    /// `held` is for real: the reg callback gets it from the tracing core.
    unsafe fn probes_locked(&self, _held: Held<'_>) -> &[Probe] {
        // SAFETY: `probes` changes only with event_mutex held (type
        // invariant), which the caller holds.
        unsafe { (*self.probes.get()).as_slice() }
    }

    /// The probes, for the control path.
    ///
    /// # Safety
    ///
    /// The caller is the control path, so no probe is added or removed
    /// while the slice lives (only the control path does that).
    pub(crate) unsafe fn probes(&self) -> &[Probe] {
        // SAFETY: per the contract, nothing changes `probes` meanwhile;
        // the reg callback only reads it.
        unsafe { (*self.probes.get()).as_slice() }
    }

    /// Adds a probe for `def` (same argument types), armed at once if the
    /// event is enabled.
    ///
    /// # Safety
    ///
    /// The caller is the control path and holds no slice of `probes()`.
    pub(crate) unsafe fn add_probe(&self, def: Arc<CompiledDef>) -> Result {
        // SAFETY: the sink is part of `self`, which outlives its probes.
        let probe = unsafe { Probe::new(self.sink(), def) }?;
        let lock = EventsLock::lock_probes();
        // SAFETY: event_mutex is held and the caller is the control path,
        // so nothing else reads or changes `probes` meanwhile.
        let probes = unsafe { &mut *self.probes.get() };
        probes.reserve_one()?;
        if self.flags().load(Ordering::Relaxed) != 0 {
            probe.arm()?;
        }
        probes.push(probe)?;
        drop(lock);
        Ok(())
    }

    /// Takes out the probe at position `i` (not the last one); the caller
    /// drops it (tearing it down) after event_mutex is released.
    ///
    /// # Safety
    ///
    /// As for [`TraceEvent::add_probe`].
    pub(crate) unsafe fn take_probe(&self, i: usize) -> Result<Probe> {
        let _lock = EventsLock::lock_probes();
        if self.busy() {
            return Err(EBUSY);
        }
        // SAFETY: as in `add_probe`.
        let probes = unsafe { &mut *self.probes.get() };
        if probes.as_slice().len() <= 1 {
            // The last probe goes with its event.
            return Err(EINVAL);
        }
        probes.remove(i)
    }

    /// The event's fields, text and definition.
    fn shape(&self) -> Shape<'_> {
        Shape::new(&self.parts.def, self.text())
    }

    /// The definition the event's fields and text come from.
    pub(crate) fn def(&self) -> DefView<'_> {
        self.parts.def.view()
    }

    /// Enabled somewhere, or referenced (perf, hist triggers).
    pub(crate) fn busy(&self) -> bool {
        self.flags().load(Ordering::Relaxed) != 0 || self.refs() != 0
    }

    /// The dynamic event's reference count.
    fn refs(&self) -> i32 {
        // SAFETY: `refcnt` is the dynamic event's reference count (the
        // flags say it is dynamic), an aligned atomic int in the pinned
        // call; trace_event_dyn_busy() is not exported and reads the same.
        unsafe {
            let counter = core::ptr::addr_of_mut!((*self.call()).__bindgen_anon_2.refcnt.counter);
            AtomicI32::from_ptr(counter).load(Ordering::Relaxed)
        }
    }

    /// Held from outside dynprobe: enabled in a trace instance, or
    /// referenced by anything but dynprobe's own event probes (perf's
    /// counters each hold a reference).
    pub(crate) fn held_outside(&self, _lock: &EventsLock) -> bool {
        let flags = self.flags().load(Ordering::Relaxed);
        flags & b::DYNPROBE_SINK_TRACE != 0
            || self.refs() > self.parts.internal_refs.load(Ordering::Relaxed)
    }

    /// Referenced by dynprobe's own event probes.
    pub(crate) fn held_inside(&self, _lock: &EventsLock) -> bool {
        self.parts.internal_refs.load(Ordering::Relaxed) > 0
    }

    /// While set, the event takes no new enable or reference (a clear is
    /// removing it); changed under event_mutex.
    pub(crate) fn set_closing(&self, closing: bool, _lock: &EventsLock) {
        self.parts.set_closing(closing);
    }

    /// Whether a hit may still be writing through the file of a trace
    /// instance the event was enabled in: enabled in one since a removal
    /// last waited ([`TraceEvent::hits_waited`]).
    pub(crate) fn hits_may_run(&self, _lock: &EventsLock) -> bool {
        self.parts.traced()
    }

    /// Records that a grace period passed since the event was last
    /// disabled (it is not enabled: the caller checked, under the same
    /// hold of event_mutex).
    pub(crate) fn hits_waited(&self, _lock: &EventsLock) {
        self.parts.set_traced(false);
    }

    /// Waits until no hit that read the file of a trace instance before
    /// the event was disabled runs. Removing the event frees its files
    /// (trace_remove_event_call()), and a disable only stops new hits
    /// from finding them: the hit path runs with preemption disabled (a
    /// kprobe's handler, an ftrace or fprobe callback, which take
    /// ftrace's recursion lock, a perf overflow handler), so one grace
    /// period after the disable none does. Only events that were enabled
    /// in an instance since the last wait pay for it.
    pub(crate) fn wait_for_hits(&self, lock: &EventsLock) {
        if self.hits_may_run(lock) {
            grace_period();
            self.hits_waited(lock);
        }
    }

    /// Takes the event out of tracefs, or answers `EBUSY` (nothing
    /// changed) while it is enabled or referenced. Its probes go when it
    /// is dropped.
    pub(crate) fn unlink(&self, lock: &EventsLock) -> Result {
        // trace_remove_event_call() only refuses enabled events; hist
        // triggers and perf hold the dynamic reference count instead.
        if self.busy() {
            return Err(EBUSY);
        }
        self.wait_for_hits(lock);
        // SAFETY: the call is registered (type invariant) and event_mutex
        // is held (`lock`).
        kernel::error::to_result(unsafe { b::trace_remove_event_call(self.call()) })
    }
}

impl Drop for TraceEvent {
    fn drop(&mut self) {
        // Each teardown returns once no handler of the probe runs.
        self.probes.get_mut().clear();
        let set = self.files_ptr().load(Ordering::Relaxed);
        if !set.is_null() {
            // SAFETY: no probe is left to read it; it came from a `KVec`.
            unsafe { b::dynprobe_kvfree_rcu(set.cast()) };
        }
        // SAFETY: the call is the event's own, no longer registered (type
        // invariant); its class, when set, came from `class::acquire`.
        unsafe {
            let class = (*self.call()).class;
            if !class.is_null() {
                class::release(class);
            }
        }
    }
}

/// Sets up what events share (the classes' lock); called once at module
/// init.
pub(crate) fn init() {
    class::init();
}

/// Waits for an RCU grace period: every hit running now has returned
/// after it (see [`TraceEvent::wait_for_hits`]).
pub(crate) fn grace_period() {
    // SAFETY: may sleep; callers run in process context (the control
    // path), where waiting with event_mutex held is allowed.
    unsafe { b::synchronize_rcu() };
}
