// SPDX-License-Identifier: GPL-2.0

//! One dynprobe event: its compiled definition and the kernel objects
//! (trace event and probe, src/shim/event.c) built from it, plus the
//! callbacks through which the C side asks the definition for fields,
//! records and trace text.

use core::ffi::c_void;
use core::fmt::{self, Write};
use core::mem::ManuallyDrop;
use core::ptr::NonNull;

use kernel::alloc::KVBox;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::fetch::{KernelMemory, KernelRegs};
use crate::lang::{
    Compiled, DefView, Definition, HeaderIps, ProbeArg, ProbeKind, Resolver, Storage, Symbolizer,
};
use crate::resolve::KernelResolver;
use crate::sys::bindings as b;

/// An empty definition to copy from: a `Definition` is 44 KiB, too
/// big to build on a kernel stack.
static EMPTY_DEFINITION: Definition = Definition::new();

/// Allocates an empty definition directly on the heap.
pub(crate) fn new_definition() -> Result<KVBox<Definition>> {
    let mut boxed = KVBox::<Definition>::new_uninit(GFP_KERNEL)?;
    // SAFETY: `Definition` is plain data (no pointers, no `Drop`), so a
    // bitwise copy of a valid one is a valid one; the destination is a
    // fresh allocation of the right size and alignment.
    unsafe {
        core::ptr::copy_nonoverlapping(&EMPTY_DEFINITION, boxed.as_mut_ptr(), 1);
        Ok(boxed.assume_init())
    }
}

/// A compiled definition's variable-length parts in kernel memory, each
/// allocated to its exact size.
pub(crate) struct KernelStorage {
    args: KVec<ProbeArg>,
    entry_args: KVec<u16>,
    /// Only ever filled by [`compile`], from whole `&str` pieces.
    text: KVec<u8>,
}

impl Storage for KernelStorage {
    fn args(&self) -> &[ProbeArg] {
        &self.args
    }

    fn entry_args(&self) -> &[u16] {
        &self.entry_args
    }

    fn text(&self) -> &str {
        // SAFETY: `text` is private to this type and only `compile` fills
        // it, by appending whole `&str`s (`VecWriter`), so it is UTF-8.
        // Checking it here instead would cost every probe hit a scan.
        unsafe { core::str::from_utf8_unchecked(&self.text) }
    }
}

/// A definition as a probe keeps it: sized to its line, shared between the
/// probe and (for the first probe) the event's shape.
pub(crate) type CompiledDef = Compiled<KernelStorage>;

/// Freezes what the parser left in `def` into a compiled definition of its
/// own size; the workspace can take the next line.
pub(crate) fn compile(def: &Definition) -> Result<Arc<CompiledDef>> {
    let sizes = def.frozen_sizes();
    let mut args = KVec::with_capacity(sizes.args, GFP_KERNEL)?;
    args.extend_from_slice(def.args(), GFP_KERNEL)?;
    let mut entry_args = KVec::with_capacity(sizes.entry_args, GFP_KERNEL)?;
    entry_args.extend_from_slice(def.entry_args(), GFP_KERNEL)?;
    let mut text = KVec::with_capacity(sizes.text, GFP_KERNEL)?;
    def.write_frozen_text(&mut VecWriter(&mut text))
        .map_err(|_| ENOMEM)?;
    let storage = KernelStorage {
        args,
        entry_args,
        text,
    };
    let compiled = def.freeze(storage).ok_or(EINVAL)?;
    Ok(Arc::new(compiled, GFP_KERNEL)?)
}

/// What the C event keeps a pointer to: the definition its fields, print
/// fmt and `cat trace` text come from (its first probe's), and the text of
/// its format fields (the tracing core keeps pointers to type and name, so
/// they live as long as the event).
pub(crate) struct Shape {
    def: Arc<CompiledDef>,
    /// `type\0name\0` for each field, in `DefView::fields()` order.
    field_text: KVec<u8>,
}

/// One probe feeding an event, and the definition its handler runs (the
/// C probe keeps a pointer to it).
struct Probe {
    handle: NonNull<b::dynprobe_probe>,
    def: Arc<CompiledDef>,
}

/// A live event: the trace event and the probes that feed it.
pub(crate) struct Event {
    handle: NonNull<b::dynprobe_event>,
    /// Dropped by hand: leaked with the event if it cannot be removed.
    shape: ManuallyDrop<KBox<Shape>>,
    /// Live probes, in listing order. A removed probe's definition is
    /// freed once its handlers are done (the shape keeps the first one).
    probes: KVec<Probe>,
    state: State,
}

/// Where an event is in its removal.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// In tracefs, probes allocated.
    Live,
    /// Out of tracefs; the probes still exist until `free`.
    Unlinked,
    /// The C event is freed.
    Gone,
}

/// event_mutex, held across a batch of removals so that their busy
/// checks and the removals they allow see one state: enabling an event
/// takes event_mutex too. Probes are torn down after it is released.
pub(crate) struct EventsLock {
    /// Unlocked by the task that locked it.
    _not_send: core::marker::PhantomData<*mut ()>,
}

impl EventsLock {
    pub(crate) fn lock() -> Self {
        // SAFETY: plain mutex_lock() of event_mutex; released in `drop`.
        unsafe { b::dynprobe_events_lock() };
        EventsLock {
            _not_send: core::marker::PhantomData,
        }
    }
}

impl Drop for EventsLock {
    fn drop(&mut self) {
        // SAFETY: locked by `lock()` in this task (the guard is not Send).
        unsafe { b::dynprobe_events_unlock() };
    }
}

// SAFETY: the C event and probes are only changed under the registry lock
// or by the tracing core's own locking; the handles are owner pointers.
unsafe impl Send for Event {}

/// Writes into a fixed buffer, then yields a NUL-terminated C string.
struct CText<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> CText<N> {
    fn new() -> Self {
        CText { buf: [0; N], len: 0 }
    }

    /// The text with its NUL, or `None` if it did not fit.
    fn as_c(&mut self) -> Option<*const u8> {
        *self.buf.get_mut(self.len)? = 0;
        Some(self.buf.as_ptr())
    }
}

impl<const N: usize> Write for CText<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Appends to a kernel vector (failing on allocation failure).
pub(crate) struct VecWriter<'a>(pub(crate) &'a mut KVec<u8>);

impl Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}

fn new_shape(def: Arc<CompiledDef>) -> Result<KBox<Shape>> {
    let mut field_text = KVec::new();
    for field in def.view().fields() {
        let mut w = VecWriter(&mut field_text);
        field.write_type(&mut w).map_err(|_| ENOMEM)?;
        w.0.push(0, GFP_KERNEL)?;
        w.0.extend_from_slice(field.name.as_bytes(), GFP_KERNEL)?;
        w.0.push(0, GFP_KERNEL)?;
    }
    Ok(KBox::new(Shape { def, field_text }, GFP_KERNEL)?)
}

/// Where a definition's probe goes, as the C side wants it. `symbol`
/// receives the NUL-terminated symbol text the place points to.
fn place_of(def: DefView<'_>, symbol: &mut CText<600>) -> Result<b::dynprobe_place> {
    Ok(b::dynprobe_place {
        kind: match def.kind() {
            ProbeKind::Kprobe => b::dynprobe_probe_kind_DYNPROBE_KPROBE,
            ProbeKind::Kretprobe => b::dynprobe_probe_kind_DYNPROBE_KRETPROBE,
            ProbeKind::FprobeEntry => b::dynprobe_probe_kind_DYNPROBE_FPROBE_ENTRY,
            ProbeKind::FprobeExit => b::dynprobe_probe_kind_DYNPROBE_FPROBE_EXIT,
            ProbeKind::FunctionEntry => b::dynprobe_probe_kind_DYNPROBE_FUNCTION_ENTRY,
            ProbeKind::FunctionExit => b::dynprobe_probe_kind_DYNPROBE_FUNCTION_EXIT,
            ProbeKind::Tracepoint => b::dynprobe_probe_kind_DYNPROBE_TRACEPOINT,
        },
        symbol: match (def.full_symbol(), def.address()) {
            (Some(s), _) => {
                symbol.write_str(s).map_err(|_| EINVAL)?;
                symbol.as_c().ok_or(EINVAL)?
            }
            // An address kallsyms does not know: register_kprobe() fails
            // with -ENOENT, which the kernel's probe events take for a
            // module to come, keeping the event with an unregistered probe
            // that never fires. The C side keeps a place in a module that
            // is not loaded the same way, so the address goes there as a
            // symbol of the unnamed module (`:0x...`), which no module
            // load ever matches.
            (None, Some(a)) if a != 0 && KernelResolver::new().kprobe_address(a).is_none() => {
                write!(symbol, ":0x{:x}", a).map_err(|_| EINVAL)?;
                symbol.as_c().ok_or(EINVAL)?
            }
            (None, _) => core::ptr::null(),
        },
        addr: def.address().unwrap_or(0) as usize,
        offset: def.offset() as usize,
        maxactive: def.maxactive() as i32,
        entry_data_size: (def.entry_args().len() * core::mem::size_of::<u64>()) as u32,
        fixed_record_size: if def.nr_dynamic() == 0 {
            def.fixed_size()
        } else {
            0
        },
    })
}

impl Event {
    /// Creates the trace event and its first (disabled) probe for `def`.
    pub(crate) fn create(def: Arc<CompiledDef>) -> Result<Self> {
        let shape = new_shape(def.clone())?;
        let view = def.view();
        let mut print_fmt = KVec::new();
        view.print_fmt(&mut VecWriter(&mut print_fmt))
            .map_err(|_| ENOMEM)?;
        print_fmt.push(0, GFP_KERNEL)?;
        let mut group = CText::<80>::new();
        let mut name = CText::<80>::new();
        let mut symbol = CText::<600>::new();
        group.write_str(view.group()).map_err(|_| EINVAL)?;
        name.write_str(view.event()).map_err(|_| EINVAL)?;
        let place = place_of(view, &mut symbol)?;
        let mut probes = KVec::with_capacity(1, GFP_KERNEL)?;
        let mut first = core::ptr::null_mut();
        let mut err = 0;
        // SAFETY: all strings are NUL-terminated and live across the call
        // (the C side copies them); `shape` and `def` are stable heap
        // addresses that outlive the C event and probe, which `remove`
        // destroys first.
        let handle = unsafe {
            b::dynprobe_event_create(
                group.as_c().ok_or(EINVAL)?,
                name.as_c().ok_or(EINVAL)?,
                print_fmt.as_ptr(),
                &place,
                (&*shape as *const Shape).cast(),
                (&*def as *const CompiledDef).cast(),
                &mut first,
                &mut err,
            )
        };
        let (Some(handle), Some(first)) = (NonNull::new(handle), NonNull::new(first)) else {
            return Err(Error::from_errno(err));
        };
        probes.push(Probe { handle: first, def }, GFP_KERNEL)?;
        Ok(Event {
            handle,
            shape: ManuallyDrop::new(shape),
            probes,
            state: State::Live,
        })
    }

    /// Adds a probe for `def` (same event, same argument types).
    pub(crate) fn add_probe(&mut self, def: Arc<CompiledDef>) -> Result {
        let mut symbol = CText::<600>::new();
        let place = place_of(def.view(), &mut symbol)?;
        self.probes.reserve(1, GFP_KERNEL)?;
        let mut err = 0;
        // SAFETY: `handle` is live; `place` and its symbol live across the
        // call; `def` outlives the probe (kept beside it in `probes`).
        let probe = unsafe {
            b::dynprobe_probe_add(
                self.handle.as_ptr(),
                &place,
                (&*def as *const CompiledDef).cast(),
                &mut err,
            )
        };
        let handle = NonNull::new(probe).ok_or_else(|| Error::from_errno(err))?;
        self.probes.push(Probe { handle, def }, GFP_KERNEL)?;
        Ok(())
    }

    /// The definitions of the live probes, first one first.
    pub(crate) fn defs(&self) -> impl Iterator<Item = DefView<'_>> + '_ {
        self.probes.iter().map(|p| p.def.view())
    }

    /// The event's own definition: its names, fields and format.
    pub(crate) fn def(&self) -> DefView<'_> {
        self.shape.def.view()
    }

    /// Enabled somewhere, or referenced (perf, hist triggers).
    pub(crate) fn busy(&self) -> bool {
        // SAFETY: `handle` is a live event owned by `self`.
        self.state == State::Live && unsafe { b::dynprobe_event_busy(self.handle.as_ptr()) }
    }

    /// Hits and misses of each live probe, in listing order.
    pub(crate) fn counts(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.probes.iter().map(|probe| {
            let (mut hits, mut misses) = (0u64, 0u64);
            // SAFETY: `probe` is live; the out pointers are valid.
            unsafe { b::dynprobe_probe_counts(probe.handle.as_ptr(), &mut hits, &mut misses) };
            (hits, misses)
        })
    }

    /// Number of live probes.
    pub(crate) fn nr_probes(&self) -> usize {
        self.probes.len()
    }

    /// Removes the probe at listing position `i` (not the last one) and
    /// frees its definition unless the event's shape still uses it.
    pub(crate) fn remove_probe(&mut self, i: usize) -> Result {
        let probe = self.probes.get(i).ok_or(EINVAL)?.handle;
        // SAFETY: both handles are live and owned by `self`; on success
        // no handler of the probe runs any more and it is freed, so its
        // definition may go with it below.
        let ret = unsafe { b::dynprobe_probe_remove(self.handle.as_ptr(), probe.as_ptr()) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        self.probes.remove(i)?;
        Ok(())
    }

    /// Removes the trace event and its probes. On error (`EBUSY`) nothing
    /// changed and the event stays usable.
    pub(crate) fn remove(&mut self) -> Result {
        if self.state == State::Live {
            let lock = EventsLock::lock();
            self.unlink(&lock)?;
        }
        self.free();
        Ok(())
    }

    /// Takes the event out of tracefs: the first half of `remove`, for a
    /// batch of removals under one `EventsLock`. On error (`EBUSY`)
    /// nothing changed. The probes go in `free`, or when `self` is dropped.
    pub(crate) fn unlink(&mut self, _lock: &EventsLock) -> Result {
        if self.state != State::Live {
            return Ok(());
        }
        // SAFETY: `handle` is live and owned by `self`, and event_mutex is
        // held (`_lock`).
        let ret = unsafe { b::dynprobe_event_unlink(self.handle.as_ptr()) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        self.state = State::Unlinked;
        Ok(())
    }

    /// Tears down the probes of an unlinked event and frees it.
    fn free(&mut self) {
        if self.state != State::Unlinked {
            return;
        }
        // SAFETY: the event is unlinked, so nothing in tracefs can reach
        // it any more; `handle` and the probes are never used again.
        unsafe { b::dynprobe_event_free(self.handle.as_ptr()) };
        self.state = State::Gone;
        self.probes.clear();
    }
}

impl Drop for Event {
    /// Frees the definitions once no probe handler or trace reader can see
    /// them. An event that cannot be removed (still referenced at module
    /// unload) is leaked rather than freed under its users.
    fn drop(&mut self) {
        if self.remove().is_err() {
            pr_err!("event {} still referenced; leaking it\n", self.def().event());
            core::mem::forget(core::mem::replace(&mut self.probes, KVec::new()));
            // The shape stays (`ManuallyDrop`) where the C event points.
            return;
        }
        // SAFETY: the C event is freed (`remove` succeeded), so nothing
        // points to the shape any more, and it is not used after this.
        unsafe { ManuallyDrop::drop(&mut self.shape) };
    }
}

/// The definition behind a probe's C pointer.
///
/// # Safety
///
/// `def` must be the definition pointer given to `dynprobe_event_create`
/// or `dynprobe_probe_add` for a probe that is not torn down yet.
unsafe fn probe_def<'a>(def: *const c_void) -> &'a CompiledDef {
    // SAFETY: per the function's contract, `Event` keeps the `Arc` that
    // owns it until the probe is torn down.
    unsafe { &*def.cast::<CompiledDef>() }
}

/// The shape behind an event's C pointer.
///
/// # Safety
///
/// `shape` must be the shape pointer given to `dynprobe_event_create` for
/// an event that is not freed yet.
unsafe fn event_shape<'a>(shape: *const c_void) -> &'a Shape {
    // SAFETY: per the function's contract, `Event` keeps the box until the
    // C event is freed.
    unsafe { &*shape.cast::<Shape>() }
}

/// Fetches one record (called from the probe handlers).
///
/// # Safety
///
/// `def` is a live probe's definition, `regs` the hit's registers,
/// `entry_data` null or the return probe's saved entry words, `buf` valid
/// for `cap` bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_record(
    def: *const c_void,
    regs: *mut b::pt_regs,
    entry_data: *const kernel::ffi::c_ulong,
    buf: *mut u8,
    cap: usize,
    ip1: kernel::ffi::c_ulong,
    ip2: kernel::ffi::c_ulong,
) -> usize {
    // SAFETY: per the function's contract.
    let def = unsafe { probe_def(def) }.record_view();
    // SAFETY: per the function's contract.
    let regs = unsafe { KernelRegs::new(regs, entry_data, def.entry_args().len()) };
    // SAFETY: `buf` is valid for `cap` bytes and used by nothing else
    // while the handler runs (per-CPU scratch buffer).
    let out = unsafe { core::slice::from_raw_parts_mut(buf, cap) };
    let ips = HeaderIps {
        first: ip1 as u64,
        second: ip2 as u64,
    };
    def.record(&regs, &KernelMemory, ips, out)
}

/// Saves a return probe's entry arguments (called at function entry).
///
/// # Safety
///
/// `def` is a live probe's definition, `regs` the hit's registers and
/// `entry_data` valid for `entry_args().len()` words.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_store_entry(
    def: *const c_void,
    regs: *mut b::pt_regs,
    entry_data: *mut kernel::ffi::c_ulong,
) {
    // SAFETY: per the function's contract.
    let def = unsafe { probe_def(def) }.record_view();
    // SAFETY: per the function's contract.
    let kregs = unsafe { KernelRegs::new(regs, core::ptr::null(), 0) };
    for (slot, &param) in def.entry_args().iter().enumerate() {
        use crate::lang::Regs;
        // SAFETY: `slot` < entry_args().len(), the size of `entry_data`.
        unsafe { *entry_data.add(slot) = kregs.arg(u32::from(param)) as usize };
    }
}

/// Defines the event's fields for its `format` file and filters.
///
/// # Safety
///
/// `shape` is a live event's shape and `call` its trace event.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_define_fields(
    shape: *const c_void,
    call: *mut b::trace_event_call,
) -> kernel::ffi::c_int {
    // SAFETY: per the function's contract.
    let shape = unsafe { event_shape(shape) };
    let mut text = shape.field_text.as_slice();
    for field in shape.def.view().fields() {
        let type_len = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        let type_ptr = text.as_ptr();
        text = text.get(type_len + 1..).unwrap_or(&[]);
        let name_len = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        let name_ptr = text.as_ptr();
        text = text.get(name_len + 1..).unwrap_or(&[]);
        // SAFETY: both strings are NUL-terminated inside `field_text`,
        // which lives as long as the event.
        let ret = unsafe {
            b::dynprobe_define_field(
                call,
                type_ptr,
                name_ptr,
                field.offset as i32,
                field.size as i32,
                field.signed,
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
        unsafe { b::dynprobe_seq_write(self.0, bytes.as_ptr(), bytes.len()) };
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
        let n = unsafe { b::dynprobe_sprint_symbol(buf.as_mut_ptr(), buf.len(), addr as usize, with_offset) };
        let text = buf.get(..n).unwrap_or(&[]);
        w.write_str(core::str::from_utf8(text).unwrap_or("?"))
    }
}

/// Prints a record as `cat trace` shows it.
///
/// # Safety
///
/// `shape` is a live event's shape, `seq` the iterator's seq and `entry`
/// valid for `len` bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_print(
    shape: *const c_void,
    seq: *mut b::trace_seq,
    entry: *const u8,
    len: usize,
) {
    // SAFETY: per the function's contract.
    let shape = unsafe { event_shape(shape) };
    // SAFETY: per the function's contract.
    let rec = unsafe { core::slice::from_raw_parts(entry, len) };
    let mut w = SeqWriter(seq);
    let _ = shape.def.view().print_event(rec, &mut KernelSymbols, &mut w);
    let _ = w.write_char('\n');
}
