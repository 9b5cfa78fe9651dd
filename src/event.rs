// SPDX-License-Identifier: GPL-2.0

//! One dynprobe event as the control path sees it: compiled definitions
//! and the trace event and probes built from them (src/trace_event.rs,
//! src/probe.rs), plus the callbacks through which the probe handlers run
//! a definition.

use core::ffi::c_void;
use core::fmt::{self, Write};
use core::mem::ManuallyDrop;
use core::pin::Pin;

use kernel::alloc::KVBox;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::fetch::{EventProbeRegs, KernelMemory, KernelRegs};
use crate::lang::{Compiled, DefView, Definition, Family, HeaderIps, ProbeArg, Storage};
use crate::probe::Probe;
use crate::sys::bindings as b;
pub(crate) use crate::trace_event::EventsLock;
use crate::trace_event::TraceEvent;

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

/// A live event: its trace event and the probes that feed it.
pub(crate) struct Event {
    /// Dropped with the event, or leaked if it cannot be unlinked.
    trace: ManuallyDrop<Pin<KBox<TraceEvent>>>,
    /// Out of tracefs; the probes still exist until the event is dropped.
    unlinked: bool,
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

    /// Whether one of its probes is an event probe on `group`/`event`.
    pub(crate) fn probes_event(&self, group: &str, event: &str) -> bool {
        self.defs().any(|d| {
            d.kind().family() == Family::Event
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

/// The definition behind a probe's C pointer.
///
/// # Safety
///
/// `def` must be the definition pointer of a live probe's feed
/// (src/probe.rs).
unsafe fn probe_def<'a>(def: *const c_void) -> &'a CompiledDef {
    // SAFETY: per the function's contract, the `Probe` keeps the `Arc`
    // that owns it until the C probe is torn down.
    unsafe { &*def.cast::<CompiledDef>() }
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
    let def = unsafe { probe_def(def) };
    // SAFETY: per the function's contract.
    let regs = unsafe { KernelRegs::new(regs, entry_data, def.entry_slots()) };
    // SAFETY: `buf` is valid for `cap` bytes and used by nothing else
    // while the handler runs (the reserved ring-buffer entry or the
    // per-CPU scratch buffer).
    let out = unsafe { core::slice::from_raw_parts_mut(buf, cap) };
    let ips = HeaderIps {
        first: ip1 as u64,
        second: ip2 as u64,
    };
    def.record(&regs, &KernelMemory, ips, out)
}

/// Fetches one record of an event probe, from its source event's record
/// (called from the hit path, src/shim/eprobe.c). The other probes' record
/// function does not carry the source record: their hits stay as cheap as
/// before event probes.
///
/// # Safety
///
/// `def` is a live event probe's definition, `regs` the hit's registers,
/// `source` valid for `source_len` bytes, `buf` valid for `cap` bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_record_event(
    def: *const c_void,
    regs: *mut b::pt_regs,
    source: *const c_void,
    source_len: usize,
    buf: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: per the function's contract.
    let def = unsafe { probe_def(def) }.record_view();
    // SAFETY: the source event's record stays valid while its perf
    // handler runs, which is when this runs.
    let source = unsafe { core::slice::from_raw_parts(source.cast::<u8>(), source_len) };
    // SAFETY: per the function's contract; no entry data.
    let regs = unsafe { KernelRegs::new(regs, core::ptr::null(), 0) };
    // SAFETY: as in `dynprobe_rs_record`.
    let out = unsafe { core::slice::from_raw_parts_mut(buf, cap) };
    let ips = HeaderIps {
        first: 0,
        second: 0,
    };
    def.record(&EventProbeRegs::new(regs, source), &KernelMemory, ips, out)
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
