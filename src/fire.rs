// SPDX-License-Identifier: GPL-2.0

//! What runs on a hit: the path of a hit (src/shim/hit.c), entered from
//! the probe handlers (src/shim/kprobe.c, fprobe.c, eprobe.c, wprobe.c,
//! uprobe.c and the shared ftrace_ops' callback in hit.c), calls these to write a
//! record from the hit's registers and memory; the return probes' entry
//! handlers (kprobe.c, fprobe.c, uprobe.c) call them to save the entry
//! arguments.
//! Nothing here takes a lock or allocates; it reads the definition the
//! probe keeps (src/probe/).

use core::ffi::c_void;

use crate::lang::HeaderIps;
use crate::probe::compiled::CompiledDef;
use crate::sys::bindings as b;
use crate::sys::regs_memory::{EventProbeRegs, KernelMemory, KernelRegs, UserMemory, UserRegs};

/// The definition behind a probe's C pointer.
///
/// # Safety
///
/// `def` must be the definition pointer of a live probe's feed
/// (src/probe/).
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

/// Fetches one record of a uprobe, in the probed task with preemption
/// on (called from src/shim/uprobe.c's handlers): its registers and
/// memory are the task's user ones, its memory read where pages can be
/// faulted in. Entry and return probes alike have the probed function's
/// address as the first header word, from which the probe's offset gives
/// where the file is mapped (`@+OFFS`), as the kernel's
/// translate_user_vaddr() takes it.
///
/// # Safety
///
/// As [`dynprobe_rs_record`]; `entry_data` null or the return probe's
/// entry words (`entry_args().len()` of them).
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_record_user(
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
    let kregs = unsafe { KernelRegs::new(regs, entry_data, def.entry_slots()) };
    let def = def.record_view();
    let regs = UserRegs::new(kregs, (ip1 as u64).wrapping_sub(def.offset()));
    // SAFETY: as in `dynprobe_rs_record`.
    let out = unsafe { core::slice::from_raw_parts_mut(buf, cap) };
    let ips = HeaderIps {
        first: ip1 as u64,
        second: ip2 as u64,
    };
    def.record(&regs, &UserMemory, ips, out)
}

/// Saves a uretprobe's entry arguments, from the probed task's user
/// registers and stack (called at function entry, in the task with
/// preemption on).
///
/// # Safety
///
/// `def` is a live probe's definition, `regs` the hit's registers and
/// `entry_data` valid for `entry_args().len()` words.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_store_entry_user(
    def: *const c_void,
    regs: *mut b::pt_regs,
    entry_data: *mut kernel::ffi::c_ulong,
) {
    // SAFETY: per the function's contract.
    let def = unsafe { probe_def(def) }.record_view();
    // SAFETY: per the function's contract.
    let kregs = unsafe { KernelRegs::new(regs, core::ptr::null(), 0) };
    let regs = UserRegs::new(kregs, 0);
    for (slot, &param) in def.entry_args().iter().enumerate() {
        use crate::lang::Regs;
        // SAFETY: `slot` < entry_args().len(), the size of `entry_data`.
        unsafe { *entry_data.add(slot) = regs.arg(u32::from(param)) as usize };
    }
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
