// SPDX-License-Identifier: GPL-2.0

//! The trace event of a dynprobe event: a dynamic `trace_event_call`
//! registered with the tracing core, so that events/GRP/EVENT has enable,
//! filter, format, trigger, hist and id like any event, and the probes
//! that feed it.
//!
//! Locking: the tracing core calls [`dynprobe_rs_event_reg`] with event_mutex held;
//! dynprobe takes event_mutex ([`EventsLock`]) to add or remove a probe
//! and to unlink events, so a probe list never changes under an enable.
//! The control path (the registry lock, taken before event_mutex) is the
//! only one that adds or removes probes. Probe handlers read the sink
//! under RCU (they run with preemption disabled).

use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::fmt::{self, Write};
use core::marker::PhantomPinned;
use core::mem::offset_of;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};

use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

use super::probe_list::ProbeList;
use crate::lang::{DefView, Family, Field, Symbolizer, TRACE_ENTRY_SIZE};
use crate::probe::compiled::CompiledDef;
use crate::probe::Probe;
use crate::sys::bindings as b;
use crate::sys::events_lock::{EventsLock, Held};
use crate::sys::{boxed_slice, exact_text};

/// `TRACE_FUNCTION_TYPE`: a fields-array entry that calls `define_fields`.
const TRACE_FUNCTION_TYPE: *const c_char = usize::MAX as *const c_char;

/// What an event's fields and `cat trace` text come from: its first
/// probe's definition, and the text of its print fmt and format fields
/// (the tracing core keeps pointers to them, so they live as long as the
/// event).
struct Shape {
    def: Arc<CompiledDef>,
    /// The print fmt with its NUL, then for each field, in
    /// `DefView::fields()` order, `type\0` unless its type is one of
    /// [`STATIC_TEXT`], then `name\0` unless it is a header field named
    /// there: most events' fields take only their arguments' names. One
    /// allocation, not two: an event's own field text is a few bytes.
    text: Pin<KBox<[u8]>>,
}

/// The field types and header field names the language has, as the C
/// strings the tracing core points to: fields that have them need no text
/// of the event's own.
static STATIC_TEXT: [&CStr; 23] = [
    c"u8",
    c"u16",
    c"u32",
    c"u64",
    c"s8",
    c"s16",
    c"s32",
    c"s64",
    c"__data_loc char[]",
    c"char",
    c"short",
    c"int",
    c"long",
    c"unsigned char",
    c"unsigned short",
    c"unsigned int",
    c"unsigned long",
    c"size_t",
    c"__probe_ip",
    c"__probe_func",
    c"__probe_ret_ip",
    c"__parent_ip",
    c"__ip",
];

/// `text` as one of [`STATIC_TEXT`].
fn static_text(text: &str) -> Option<&'static CStr> {
    STATIC_TEXT
        .iter()
        .copied()
        .find(|c| c.to_bytes() == text.as_bytes())
}

/// A field's type as a static C string, if it has one (not an array).
fn static_type(field: &Field<'_>) -> Option<&'static CStr> {
    (field.count == 0)
        .then(|| static_text(field.c_type))
        .flatten()
}

/// A header field's name as a static C string.
fn static_name(field: &Field<'_>) -> Option<&'static CStr> {
    field.header.then(|| static_text(field.name)).flatten()
}

/// The NUL-terminated piece at the start of `text`, which moves past it.
fn next_piece(text: &mut &[u8]) -> *const c_char {
    let ptr = text.as_ptr().cast();
    let len = text.iter().position(|&c| c == 0).unwrap_or(text.len());
    *text = text.get(len + 1..).unwrap_or(&[]);
    ptr
}

impl Shape {
    fn new(def: Arc<CompiledDef>) -> Result<Self> {
        let text = exact_text(|mut w| {
            def.view().print_fmt(&mut w)?;
            w.write_str("\0")?;
            def.view().fields().try_for_each(|field| {
                if static_type(&field).is_none() {
                    field.write_type(&mut w)?;
                    w.write_str("\0")?;
                }
                if static_name(&field).is_none() {
                    write!(w, "{}\0", field.name)?;
                }
                Ok(())
            })
        })?;
        Ok(Shape {
            def,
            text: boxed_slice(text.iter().copied(), text.len())?,
        })
    }

    /// The print fmt, NUL-terminated.
    fn print_fmt(&self) -> *const c_char {
        self.text.as_ptr().cast()
    }

    /// The fields' own text, after the print fmt.
    fn field_text(&self) -> &[u8] {
        let fmt_len = self
            .text
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(self.text.len());
        self.text.get(fmt_len + 1..).unwrap_or(&[])
    }

    /// Each field with its NUL-terminated type and name.
    fn fields(&self) -> impl Iterator<Item = (Field<'_>, *const c_char, *const c_char)> + '_ {
        let mut text = self.field_text();
        let view = self.def.view();
        (0..view.nr_fields()).filter_map(move |i| {
            let field = view.field(i)?;
            let type_ptr = match static_type(&field) {
                Some(c) => c.as_char_ptr(),
                None => next_piece(&mut text),
            };
            let name_ptr = match static_name(&field) {
                Some(c) => c.as_char_ptr(),
                None => next_piece(&mut text),
            };
            Some((field, type_ptr, name_ptr))
        })
    }
}

/// The alignment that makes the tracing core's layout of a fields array
/// (each field at its offset rounded up to its alignment) put a field
/// ending at `end` next at `offset`, if there is one.
fn align_reaching(end: u32, offset: u32) -> Option<u32> {
    if offset == end {
        return Some(1);
    }
    let align = 1u32.checked_shl(offset.trailing_zeros())?;
    (offset > end && offset - align < end).then_some(align)
}

/// The fields array of every event none of whose fields declares an
/// array length: [`define_fields`] defines them all, as the kernel's probe
/// events have theirs defined, and the events share it instead of each
/// allocating one.
struct SharedFields([b::trace_event_fields; 2]);

// SAFETY: never written; the tracing core only reads a fields array.
unsafe impl Sync for SharedFields {}

static DEFINE_ALL: SharedFields = SharedFields([
    b::trace_event_fields {
        type_: TRACE_FUNCTION_TYPE,
        __bindgen_anon_1: b::trace_event_fields__bindgen_ty_1 {
            define_fields: Some(define_fields),
        },
    },
    // SAFETY: an all-zero `trace_event_fields` is valid (null pointers,
    // zero numbers); its null type ends the array.
    unsafe { core::mem::zeroed() },
]);

/// The event's own fields array, where a field declares an array length
/// (a function event's `char name[64]`: [`fields_array_entries`]); empty
/// where the shared one does, since `trace_define_field()` takes no
/// length and needs no entry. Also returns the index of the first field
/// [`define_fields`] defines.
/// How many fields the tracing core has defined for the event of `class`
/// (its list of them).
///
/// # Safety
///
/// `class` is a registered event's class; event_mutex is held, under
/// which the list changes.
unsafe fn defined_fields(class: *mut b::trace_event_class) -> usize {
    // SAFETY: per the function's contract, the list is initialised and
    // stable while it is walked.
    unsafe {
        let head = core::ptr::addr_of_mut!((*class).fields);
        let mut n = 0;
        let mut at = (*head).next;
        while !at.is_null() && at != head {
            n += 1;
            at = (*at).next;
        }
        n
    }
}

fn fields_array(shape: &Shape) -> Result<(KVec<b::trace_event_fields>, usize)> {
    let view = shape.def.view();
    if view.fields().all(|f| view.declared_len(&f) == 0) {
        return Ok((KVec::new(), 0));
    }
    fields_array_entries(shape)
}

/// An event's fields array: each field the tracing core can lay out at
/// its offset is an entry of its own, which carries its declared array
/// length (`trace_define_field()` takes none); from the first that it
/// cannot, `define_fields` defines the rest. Also returns that index.
fn fields_array_entries(shape: &Shape) -> Result<(KVec<b::trace_event_fields>, usize)> {
    let view = shape.def.view();
    // How many fields the array can lay out: it is allocated to its size
    // (an array of them sized for the largest event would take a bigger
    // slab object for every small one).
    let mut end = TRACE_ENTRY_SIZE;
    let mut first_defined = view.nr_fields();
    for (i, (field, _, _)) in shape.fields().enumerate() {
        if align_reaching(end, field.offset).is_none() {
            first_defined = i;
            break;
        }
        end = field.offset + field.size;
    }
    let defined_later = usize::from(first_defined < view.nr_fields());
    let mut array = KVec::with_capacity(first_defined + defined_later + 1, GFP_KERNEL)?;
    end = TRACE_ENTRY_SIZE;
    for (field, type_ptr, name_ptr) in shape.fields().take(first_defined) {
        let align = align_reaching(end, field.offset).unwrap_or(1);
        // SAFETY: an all-zero `trace_event_fields` is valid (null
        // pointers, zero numbers).
        let mut entry: b::trace_event_fields = unsafe { core::mem::zeroed() };
        entry.type_ = type_ptr;
        // SAFETY: writing the plain-field variant of the union.
        let plain = unsafe { &mut entry.__bindgen_anon_1.__bindgen_anon_1 };
        plain.name = name_ptr;
        plain.size = field.size as c_int;
        plain.align = align as c_int;
        plain.set_is_signed(field.signed.into());
        plain.filter_type = b::FILTER_OTHER as c_int;
        plain.len = view.declared_len(&field) as c_int;
        array.push(entry, GFP_KERNEL)?;
        end = field.offset + field.size;
    }
    if defined_later != 0 {
        // SAFETY: as above.
        let mut entry: b::trace_event_fields = unsafe { core::mem::zeroed() };
        entry.type_ = TRACE_FUNCTION_TYPE;
        entry.__bindgen_anon_1.define_fields = Some(define_fields);
        array.push(entry, GFP_KERNEL)?;
    }
    // SAFETY: as above; a null type ends the array.
    array.push(unsafe { core::mem::zeroed() }, GFP_KERNEL)?;
    Ok((array, first_defined))
}

/// The text and fields of an event, which its `trace_event_call` and
/// class point into (never changed while it is registered). Its parts are
/// boxed slices, each allocated to its size, and it fits a 64-byte slab
/// object.
struct EventParts {
    /// `class.fields_array` points to its buffer, or to [`DEFINE_ALL`]
    /// when it is empty.
    fields: Pin<KBox<[b::trace_event_fields]>>,
    /// Fields from this index on are defined by [`define_fields`].
    first_defined: usize,
    /// Its text holds the print fmt, which the call points to (its system
    /// and name are C strings in the definition's text:
    /// `Compiled::c_names`).
    shape: Shape,
    /// How many of the event's references are dynprobe's own event
    /// probes' (their source file and perf counters): holds from inside
    /// dynprobe, which do not keep the module loaded (src/shim/holds.c).
    /// Here rather than in the event, which has no room for it on 7.3.
    internal_refs: AtomicI32,
    /// Being removed by a clear: no new enable or reference is taken, so
    /// that what the clear checked stays true until the event is gone.
    closing: AtomicBool,
    /// Enabled in a trace instance since a removal last waited for
    /// running hits: a hit may still be writing through an instance's
    /// file, which removing the event frees ([`TraceEvent::wait_for_hits`]).
    traced: AtomicBool,
}
const _: () = assert!(core::mem::size_of::<EventParts>() <= 64);

/// The output functions of every dynprobe event: `trace` prints one;
/// `register_trace_event()` sets the others (NULL here) to its nop
/// printer at the first registration, and only reads them after.
struct SharedFuncs(UnsafeCell<b::trace_event_functions>);

// SAFETY: written only by register_trace_event(), under trace_event_sem,
// and only while a member is NULL (the first registration); read after.
unsafe impl Sync for SharedFuncs {}

static EVENT_FUNCS: SharedFuncs = SharedFuncs(UnsafeCell::new(b::trace_event_functions {
    trace: Some(event_print),
    raw: None,
    hex: None,
    binary: None,
}));

/// A dynprobe event's trace event and probes.
///
/// # Invariants
///
/// Once [`TraceEvent::create`] returns, the `trace_event_call` is
/// registered with the tracing core and points into this pinned object
/// (its class, and the fields array and `text` of `parts`) and to the
/// shared functions until it is unlinked; the object is dropped only
/// after that (or if it was never registered).
/// `probes` changes only with event_mutex held, by the control path.
pub(crate) struct TraceEvent {
    /// The `trace_event_call` and the sink, side by side: the hit path
    /// finds the call from the sink.
    core: Opaque<b::dynprobe_event_core>,
    class: Opaque<b::trace_event_class>,
    /// What the tracing core points into but no hit reads, in an
    /// allocation of its own: without it the event fits a 256-byte slab
    /// object instead of a 512-byte one.
    parts: KBox<EventParts>,
    probes: UnsafeCell<ProbeList>,
    _pin: PhantomPinned,
}

// The event in a 256-byte slab object, with 7.3's 80-byte class too.
const _: () = assert!(core::mem::size_of::<TraceEvent>() <= 256);
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
    pub(crate) fn create(def: Arc<CompiledDef>) -> Result<Pin<KBox<Self>>> {
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
        let shape = Shape::new(def.clone())?;
        let (fields, first_defined) = fields_array(&shape)?;
        let parts = KBox::new(
            EventParts {
                fields: boxed_slice(fields.iter().copied(), fields.len())?,
                first_defined,
                shape,
                internal_refs: AtomicI32::new(0),
                closing: AtomicBool::new(false),
                traced: AtomicBool::new(false),
            },
            GFP_KERNEL,
        )?;
        let ev = KBox::pin(
            TraceEvent {
                core: Opaque::zeroed(),
                class: Opaque::zeroed(),
                parts,
                probes: UnsafeCell::new(ProbeList::Empty),
                _pin: PhantomPinned,
            },
            GFP_KERNEL,
        )?;
        let (call, class) = (ev.call(), ev.class.get());
        let (system, name) = ev.parts.shape.def.c_names();
        if system.last() != Some(&0) || name.last() != Some(&0) {
            return Err(EINVAL);
        }
        let (system, name) = (
            system.as_ptr().cast::<c_char>(),
            name.as_ptr().cast::<c_char>(),
        );
        // SAFETY: `ev` is pinned and not shared yet; the pointers stored
        // are to its own pinned fields, to buffers it owns (the shape's
        // definition, whose text holds the system and the name, both
        // NUL-terminated, as checked), which live as long as the
        // registration (type invariant), and to statics.
        unsafe {
            (*class).system = system;
            (*class).fields_array = if ev.parts.fields.is_empty() {
                DEFINE_ALL.0.as_ptr().cast_mut()
            } else {
                ev.parts.fields.as_ptr().cast_mut()
            };
            (*class).reg = Some(dynprobe_rs_event_reg);
            let fields_head = core::ptr::addr_of_mut!((*class).fields);
            (*fields_head).next = fields_head;
            (*fields_head).prev = fields_head;
            (*call).class = class;
            (*call).__bindgen_anon_1.name = name;
            (*call).print_fmt = ev.parts.shape.print_fmt().cast_mut();
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
            // never enabled or seen by a hit, and the write fails.
            if defined_fields(class) != ev.parts.shape.fields().count() {
                b::trace_remove_event_call(call);
                b::unregister_trace_event(core::ptr::addr_of_mut!((*call).event));
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

    /// The trace instances the event is enabled in: the sink's `file`, or
    /// the slots of its set, where an instance disabled since the set was
    /// made leaves a null slot ([`TraceEvent::remove_file`]).
    fn files(&self, _held: Held<'_>) -> &[*mut b::trace_event_file] {
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
    fn add_file(&self, file: *mut b::trace_event_file, held: Held<'_>) -> Result {
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
    fn remove_file(&self, file: *mut b::trace_event_file, held: Held<'_>) {
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

    /// Enables the event in trace instance `file`, or for perf (`None`).
    /// Enabling in an instance takes a module reference, so that rmmod is
    /// refused while an event is enabled. perf's registration takes none:
    /// it lasts as long as perf's counters, each of which holds a
    /// reference on the event (perf_trace_init()), and those pin the
    /// module one by one unless they are dynprobe's own event probes'
    /// (src/shim/holds.c). A pin of the registration's would stay with
    /// whichever user came first, outside perf or an event probe.
    fn enable(&self, file: Option<*mut b::trace_event_file>, held: Held<'_>) -> Result {
        if self.parts.closing.load(Ordering::Relaxed) {
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
                self.parts.traced.store(true, Ordering::Relaxed);
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

    /// The definition the event's fields and text come from.
    pub(crate) fn def(&self) -> DefView<'_> {
        self.parts.shape.def.view()
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
        self.parts.closing.store(closing, Ordering::Relaxed);
    }

    /// Whether a hit may still be writing through the file of a trace
    /// instance the event was enabled in: enabled in one since a removal
    /// last waited ([`TraceEvent::hits_waited`]).
    pub(crate) fn hits_may_run(&self, _lock: &EventsLock) -> bool {
        self.parts.traced.load(Ordering::Relaxed)
    }

    /// Records that a grace period passed since the event was last
    /// disabled (it is not enabled: the caller checked, under the same
    /// hold of event_mutex).
    pub(crate) fn hits_waited(&self, _lock: &EventsLock) {
        self.parts.traced.store(false, Ordering::Relaxed);
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
    }
}

/// Waits for an RCU grace period: every hit running now has returned
/// after it (see [`TraceEvent::wait_for_hits`]).
pub(crate) fn grace_period() {
    // SAFETY: may sleep; callers run in process context (the control
    // path), where waiting with event_mutex held is allowed.
    unsafe { b::synchronize_rcu() };
}

/// `reg` of the event's class: enabling and disabling.
///
/// # Safety
///
/// Called by the tracing core, with event_mutex held, for a live event.
/// Named: src/shim/holds.c tells dynprobe's events by it.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_event_reg(
    call: *mut b::trace_event_call,
    ty: b::trace_reg,
    data: *mut c_void,
) -> c_int {
    // SAFETY: per the function's contract.
    let ev = unsafe { TraceEvent::from_call(call) };
    // SAFETY: the tracing core calls `reg` with event_mutex held.
    let held = unsafe { Held::by_caller() };
    let file = data.cast::<b::trace_event_file>();
    let ret = match ty {
        b::trace_reg_TRACE_REG_REGISTER => ev.enable(Some(file), held),
        b::trace_reg_TRACE_REG_UNREGISTER => ev.disable(Some(file), held),
        b::trace_reg_TRACE_REG_PERF_REGISTER => ev.enable(None, held),
        b::trace_reg_TRACE_REG_PERF_UNREGISTER => ev.disable(None, held),
        _ => Ok(()),
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
    ev.parts.closing.load(Ordering::Relaxed)
}

/// Defines the fields the fields array could not lay out.
///
/// # Safety
///
/// Called by the tracing core for a live event's call.
unsafe extern "C" fn define_fields(call: *mut b::trace_event_call) -> c_int {
    // SAFETY: per the function's contract.
    let ev = unsafe { TraceEvent::from_call(call) };
    for (field, type_ptr, name_ptr) in ev.parts.shape.fields().skip(ev.parts.first_defined) {
        // SAFETY: both strings are NUL-terminated in the shape, which
        // lives as long as the event.
        let ret = unsafe {
            b::trace_define_field(
                call,
                type_ptr,
                name_ptr,
                field.offset as c_int,
                field.size as c_int,
                field.signed.into(),
                b::FILTER_OTHER as c_int,
            )
        };
        if ret != 0 {
            return ret;
        }
    }
    0
}

/// `trace_seq` as a `fmt::Write` target.
struct SeqWriter(*mut b::trace_seq);

impl SeqWriter {
    fn put(&mut self, bytes: &[u8]) {
        // SAFETY: the seq pointer is valid during the print callback.
        unsafe { b::trace_seq_putmem(self.0, bytes.as_ptr().cast(), bytes.len() as u32) };
    }
}

impl Write for SeqWriter {
    /// The definition language prints recorded bytes that are not ASCII
    /// as the characters U+0080..U+00FF of the same value; they go out as
    /// those bytes again, so `cat trace` shows what was recorded, as the
    /// kernel's probe events do.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if s.is_ascii() {
            self.put(s.as_bytes());
            return Ok(());
        }
        for c in s.chars() {
            match u8::try_from(u32::from(c)) {
                Ok(byte) => self.put(&[byte]),
                Err(_) => self.put(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        Ok(())
    }
}

/// `%pS`/`%ps` through `sprint_symbol`.
struct KernelSymbols;

impl Symbolizer for KernelSymbols {
    fn write_symbol(&mut self, w: &mut dyn Write, addr: u64, with_offset: bool) -> fmt::Result {
        let mut buf = [0u8; 600];
        // SAFETY: `buf` is valid for its length.
        let n = unsafe {
            b::dynprobe_sprint_symbol(buf.as_mut_ptr(), buf.len(), addr as usize, with_offset)
        };
        let text = buf.get(..n).unwrap_or(&[]);
        w.write_str(core::str::from_utf8(text).unwrap_or("?"))
    }
}

/// The event's `trace` output function: a record as `cat trace` shows it.
///
/// # Safety
///
/// Called by the tracing core with a live iterator whose entry is a record
/// of the live event `event` belongs to.
unsafe extern "C" fn event_print(
    iter: *mut b::trace_iterator,
    _flags: c_int,
    event: *mut b::trace_event,
) -> b::print_line_t {
    // SAFETY: `event` is the `event` field of a live event's call.
    let ev = unsafe {
        let call = event
            .cast::<u8>()
            .sub(offset_of!(b::trace_event_call, event));
        TraceEvent::from_call(call.cast())
    };
    // SAFETY: per the function's contract, the iterator's entry is valid
    // for `ent_size` bytes and its seq is ours to write during the call.
    let (seq, rec) = unsafe {
        let len = usize::try_from((*iter).ent_size).unwrap_or(0);
        (
            core::ptr::addr_of_mut!((*iter).seq),
            core::slice::from_raw_parts((*iter).ent.cast::<u8>(), len),
        )
    };
    let mut w = SeqWriter(seq);
    let _ = ev.def().print_event(rec, &mut KernelSymbols, &mut w);
    let _ = w.write_char('\n');
    // SAFETY: `seq` is valid during the call.
    unsafe { b::trace_handle_return(seq) }
}

/// The fields array the tracing core lays out (`trace_event_fields` with
/// an alignment each) must put every field at the offset the record
/// layout gave it: the host tests check the layout, these its translation.
#[kernel::macros::kunit_tests(dynprobe_fields_array)]
mod kunit {
    use super::*;
    use crate::lang::{parse, Command, Control, NoResolver};
    use crate::probe::compiled::{compile, new_definition};

    /// Where the tracing core puts a field ending at `end` with `align`.
    fn core_offset(end: u32, align: u32) -> u32 {
        end.div_ceil(align) * align
    }

    #[test]
    fn align_reaching_rounds_up_to_the_next_offset() {
        assert_eq!(align_reaching(8, 8), Some(1));
        assert_eq!(align_reaching(9, 16), Some(16));
        assert_eq!(align_reaching(17, 20), Some(4));
        assert_eq!(align_reaching(21, 22), Some(2));
        // Offsets no alignment reaches: a 4-byte gap after an 8-aligned
        // end, an offset before the end, offset 0.
        assert_eq!(align_reaching(8, 12), None);
        assert_eq!(align_reaching(16, 12), None);
        assert_eq!(align_reaching(4, 0), None);
        for end in 0..64u32 {
            for offset in end..end + 40 {
                if let Some(align) = align_reaching(end, offset) {
                    assert_eq!(core_offset(end, align), offset);
                }
            }
        }
    }

    /// The shape of an event defined by `line`.
    fn shape_of(line: &[u8], control: Control) -> Result<Shape> {
        let mut def = new_definition()?;
        match parse(control, line, &NoResolver, &mut def) {
            Ok(Command::Define) => {}
            _ => return Err(EINVAL),
        }
        Shape::new(compile(&def)?)
    }

    /// The fields array of a definition, laid out as the tracing core
    /// does: each entry at the offset and of the size of its field.
    fn check_layout(line: &[u8], control: Control) -> Result {
        let shape = shape_of(line, control)?;
        let (array, first_defined) = fields_array_entries(&shape)?;
        let view = shape.def.view();
        assert_eq!(first_defined, view.nr_fields());
        // One entry per field and the null that ends the array.
        assert_eq!(array.len(), view.nr_fields() + 1);
        let mut end = TRACE_ENTRY_SIZE;
        for (entry, field) in array.iter().zip(view.fields()) {
            // SAFETY: fields_array() wrote the plain-field variant.
            let plain = unsafe { &entry.__bindgen_anon_1.__bindgen_anon_1 };
            assert_eq!(plain.size, field.size as c_int);
            assert_eq!(core_offset(end, plain.align as u32), field.offset);
            assert_eq!(plain.len, view.declared_len(&field) as c_int);
            end = field.offset + field.size;
        }
        assert!(array.last().is_some_and(|e| e.type_.is_null()));
        Ok(())
    }

    #[test]
    fn fields_array_lays_out_kprobe_arguments() -> Result {
        check_layout(
            b"p:kunit/kp 0x1000 a=%di:u8 b=%si:u64 c=%dx:s16 d=%cx:x32 e=+0(%di):string",
            Control::KprobeEvents,
        )
    }

    #[test]
    fn fields_array_lays_out_char_arrays() -> Result {
        check_layout(
            b"p:kunit/arr 0x1000 a=%di:u8 b=+0(%si):u8[3] c=%dx:u64 d=+0(%cx):char[5]",
            Control::KprobeEvents,
        )
    }

    #[test]
    fn fields_array_lays_out_function_event_arrays() -> Result {
        check_layout(
            b"link_path_walk(char[64] name, x8[6] mac+558, int n)",
            Control::FunctionEvents,
        )
    }

    /// Each field's type and name as the tracing core reads them (static
    /// or the event's own text), and the event's own text.
    fn field_texts(line: &[u8], control: Control) -> Result<KVec<u8>> {
        let shape = shape_of(line, control)?;
        for (field, type_ptr, name_ptr) in shape.fields() {
            // SAFETY: `fields()` points into `shape`'s text or statics,
            // NUL-terminated.
            let (ty, name) =
                unsafe { (CStr::from_char_ptr(type_ptr), CStr::from_char_ptr(name_ptr)) };
            let mut want = KVec::new();
            field
                .write_type(&mut crate::sys::VecWriter(&mut want))
                .map_err(|_| ENOMEM)?;
            assert_eq!(ty.to_bytes(), &want[..]);
            assert_eq!(name.to_bytes(), field.name.as_bytes());
        }
        let mut own = KVec::new();
        own.extend_from_slice(shape.field_text(), GFP_KERNEL)?;
        Ok(own)
    }

    #[test]
    fn common_types_and_header_names_take_no_text_of_the_event() -> Result {
        let text = field_texts(b"vfs_read(x64 file, u64 count)", Control::FunctionEvents)?;
        assert_eq!(&text[..], b"file\0count\0");
        let line = b"p:kunit/kp 0x1000 a=%ax:s32 b=+0(%si):u8[3] e=+0(%di):string";
        let text = field_texts(line, Control::KprobeEvents)?;
        assert_eq!(&text[..], b"a\0u8[3]\0b\0e\0");
        Ok(())
    }

    /// Which array an event gets: its own only where a field declares a
    /// length, the shared one otherwise.
    fn own_array_len(line: &[u8], control: Control) -> Result<usize> {
        let (array, first_defined) = fields_array(&shape_of(line, control)?)?;
        if array.is_empty() {
            assert_eq!(first_defined, 0);
        }
        Ok(array.len())
    }

    #[test]
    fn only_declared_lengths_need_an_array_of_their_own() -> Result {
        let kprobe = b"p:kunit/arr 0x1000 a=%di:u8 b=+0(%si):u8[3] e=+0(%di):string";
        assert_eq!(own_array_len(kprobe, Control::KprobeEvents)?, 0);
        assert_eq!(
            own_array_len(b"vfs_read(x64 file, u64 n)", Control::FunctionEvents)?,
            0
        );
        // Two header fields, the array, the terminator.
        assert_eq!(
            own_array_len(b"vfs_read(char[8] f)", Control::FunctionEvents)?,
            4
        );
        Ok(())
    }
}
