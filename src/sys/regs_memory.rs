// SPDX-License-Identifier: GPL-2.0

//! The fetch interpreter's view of the kernel in a probe handler: the
//! interrupted registers and fault-tolerant memory.

use crate::lang::{first_nul, Fault, Memory, Reg, Regs, Space, WordSource};
use crate::sys::bindings as b;

/// Registers at a kprobe or kretprobe hit, plus the entry data a return
/// probe saved at function entry.
pub(crate) struct KernelRegs {
    regs: *mut b::pt_regs,
    entry_data: *const kernel::ffi::c_ulong,
    entry_slots: usize,
}

/// Number of `unsigned long` slots of x86_64 `struct pt_regs` (r15 .. ss).
const PT_REGS_SLOTS: usize = 21;

/// The registers of the x86_64 calling convention's first parameters.
const ARGS_IN_REGISTERS: [Reg; 6] = [Reg::Di, Reg::Si, Reg::Dx, Reg::Cx, Reg::R8, Reg::R9];

/// Where a record of words' word comes from, as src/shim/hit.c reads it:
/// the `pt_regs` word of that index, or entry-data slot (index −
/// `DYNPROBE_ENTRY_SLOT`); the word `KernelRegs` reads for `source`, with
/// `entry_slots` saved entry words. `None`: a word neither holds (a
/// parameter on the stack).
pub(crate) fn word_slot(source: WordSource, entry_slots: usize) -> Option<u8> {
    let reg = match source {
        WordSource::Reg(r) => r,
        WordSource::Arg(n) => *ARGS_IN_REGISTERS.get(usize::from(n))?,
        WordSource::RetVal => Reg::Ax,
        WordSource::EntryData(s) if usize::from(s) < entry_slots => {
            return u8::try_from(b::DYNPROBE_ENTRY_SLOT).ok()?.checked_add(s);
        }
        WordSource::EntryData(_) => return None,
    };
    let slot = reg as usize;
    if slot >= PT_REGS_SLOTS {
        return None;
    }
    u8::try_from(slot).ok()
}

impl KernelRegs {
    /// # Safety
    ///
    /// `regs` must point to the `pt_regs` of the current probe hit and
    /// `entry_data`, unless null, to `entry_slots` readable words; both
    /// must stay valid while the value is used.
    pub(crate) unsafe fn new(
        regs: *mut b::pt_regs,
        entry_data: *const kernel::ffi::c_ulong,
        entry_slots: usize,
    ) -> Self {
        KernelRegs {
            regs,
            entry_data,
            entry_slots,
        }
    }
}

impl Regs for KernelRegs {
    fn reg(&self, r: Reg) -> u64 {
        let slot = r as usize;
        if slot >= PT_REGS_SLOTS {
            return 0;
        }
        // SAFETY: x86_64 `struct pt_regs` is 21 consecutive unsigned longs
        // in the order of `Reg`; `regs` is valid (constructor contract) and
        // `slot` is in range.
        unsafe { *self.regs.cast::<u64>().add(slot) }
    }

    fn stack_nth(&self, n: u32) -> u64 {
        // SAFETY: `regs` is valid; the helper checks the stack bounds.
        unsafe { b::dynprobe_regs_stack_nth(self.regs, n) as u64 }
    }

    fn stack_pointer(&self) -> u64 {
        self.reg(Reg::Sp)
    }

    fn current_task(&self) -> u64 {
        // SAFETY: reads the current task's address.
        unsafe { b::dynprobe_current_task() as u64 }
    }

    fn arg(&self, n: u32) -> u64 {
        // Read here as regs_get_kernel_argument() would, without a call
        // per argument.
        if let Some(&r) = ARGS_IN_REGISTERS.get(n as usize) {
            return self.reg(r);
        }
        // SAFETY: `regs` is valid; stack arguments are bounds-checked.
        unsafe { b::dynprobe_regs_arg(self.regs, n) as u64 }
    }

    fn return_value(&self) -> u64 {
        self.reg(Reg::Ax)
    }

    fn entry_data(&self, slot: u32) -> u64 {
        let slot = slot as usize;
        if self.entry_data.is_null() || slot >= self.entry_slots {
            return 0;
        }
        // SAFETY: `entry_data` holds `entry_slots` words (constructor
        // contract) and `slot` is below that.
        unsafe { *self.entry_data.add(slot) as u64 }
    }
}

/// An event probe's hit: the registers where its source event fired and
/// the source event's record, which `$FIELD` fetches read. A type of its
/// own so that the other probes' interpreter carries no record.
pub(crate) struct EventProbeRegs<'r> {
    regs: KernelRegs,
    record: &'r [u8],
}

impl<'r> EventProbeRegs<'r> {
    pub(crate) fn new(regs: KernelRegs, record: &'r [u8]) -> Self {
        EventProbeRegs { regs, record }
    }
}

impl Regs for EventProbeRegs<'_> {
    fn reg(&self, r: Reg) -> u64 {
        self.regs.reg(r)
    }

    fn stack_nth(&self, n: u32) -> u64 {
        self.regs.stack_nth(n)
    }

    fn stack_pointer(&self) -> u64 {
        self.regs.stack_pointer()
    }

    fn arg(&self, n: u32) -> u64 {
        self.regs.arg(n)
    }

    fn return_value(&self) -> u64 {
        self.regs.return_value()
    }

    fn current_task(&self) -> u64 {
        self.regs.current_task()
    }

    fn event_record(&self) -> &[u8] {
        self.record
    }

    fn entry_data(&self, slot: u32) -> u64 {
        self.regs.entry_data(slot)
    }
}

/// A uprobe's hit: the probed task's user registers, its user stack, a
/// return probe's entry words, and where offset 0 of the probed file is
/// mapped (for `@+OFFS`). Read in the task with preemption on: its stack
/// is read where pages can be faulted in.
pub(crate) struct UserRegs {
    regs: KernelRegs,
    file_base: u64,
}

impl UserRegs {
    pub(crate) fn new(regs: KernelRegs, file_base: u64) -> Self {
        UserRegs { regs, file_base }
    }
}

impl Regs for UserRegs {
    fn reg(&self, r: Reg) -> u64 {
        self.regs.reg(r)
    }

    fn stack_nth(&self, n: u32) -> u64 {
        // SAFETY: `regs` is valid (KernelRegs' constructor contract); the
        // helper reads user memory, in the task's uprobe handler.
        unsafe { b::dynprobe_user_stack_nth(self.regs.regs, n) as u64 }
    }

    fn stack_pointer(&self) -> u64 {
        self.regs.reg(Reg::Sp)
    }

    /// The x86_64 System V ABI's: six registers, then the stack above
    /// the return address (at a function's first instruction).
    fn arg(&self, n: u32) -> u64 {
        match ARGS_IN_REGISTERS.get(n as usize) {
            Some(&r) => self.regs.reg(r),
            None => self.stack_nth(n - ARGS_IN_REGISTERS.len() as u32 + 1),
        }
    }

    fn entry_data(&self, slot: u32) -> u64 {
        self.regs.entry_data(slot)
    }

    fn return_value(&self) -> u64 {
        self.regs.return_value()
    }

    fn current_task(&self) -> u64 {
        self.regs.current_task()
    }

    fn file_base(&self) -> u64 {
        self.file_base
    }
}

/// A uprobe handler's memory: the probed task's read where pages can be
/// faulted in (`copy_from_user()`, `strncpy_from_user()`), as the
/// kernel's uprobe events read it; a kernel address as [`KernelMemory`]
/// reads it.
pub(crate) struct UserMemory;

impl Memory for UserMemory {
    fn read(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        if space != Space::User {
            return KernelMemory.read(space, addr, dst);
        }
        // SAFETY: `dst` is valid for `dst.len()` bytes; the helper reads
        // `addr` through copy_from_user(), in the task's uprobe handler.
        match unsafe { b::dynprobe_uprobe_read(dst.as_mut_ptr().cast(), addr as usize, dst.len()) }
        {
            0 => Ok(()),
            _ => Err(Fault),
        }
    }

    fn read_str(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        if space != Space::User {
            return KernelMemory.read_str(space, addr, dst);
        }
        let cap = dst.len();
        let len = isize::try_from(cap).map_err(|_| Fault)?;
        // SAFETY: as in `read`; strncpy_from_user() writes at most `cap`
        // bytes.
        let got = unsafe { b::dynprobe_uprobe_read_str(dst.as_mut_ptr(), addr as usize, len) };
        // As fetch_store_string(): a string cut at `cap` ends in a NUL
        // there; a shorter one's NUL is counted.
        match usize::try_from(got) {
            Err(_) => Err(Fault),
            Ok(n) if n >= cap => {
                if let Some(last) = dst.last_mut() {
                    *last = 0;
                }
                Ok(cap)
            }
            Ok(n) => Ok(n + 1),
        }
    }

    fn is_user_address(&self, addr: u64) -> bool {
        KernelMemory.is_user_address(addr)
    }

    fn this_cpu_ptr(&self, addr: u64) -> u64 {
        KernelMemory.this_cpu_ptr(addr)
    }

    fn comm(&self) -> [u8; 16] {
        KernelMemory.comm()
    }

    fn symbol(&self, addr: u64, dst: &mut [u8]) -> usize {
        KernelMemory.symbol(addr, dst)
    }
}

/// Kernel and user memory through the `*_nofault` accessors: a bad
/// address is a `Fault`, never an oops, and nothing sleeps.
pub(crate) struct KernelMemory;

const PAGE_SIZE: u64 = 4096;
/// Bytes read by the first step of a string copy (shim.h says why so few),
/// as the hit path reads a string of a record of words and one string.
const STRING_FIRST_STEP: usize = b::DYNPROBE_STRING_FIRST_READ as usize;
/// Bytes read per later step: fewer calls for long strings.
const STRING_STEP: usize = 128;

impl KernelMemory {
    fn read_raw(space: Space, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        // SAFETY: `dst` is valid for `dst.len()` bytes; the helpers only
        // read `addr` through the fault-tolerant accessors.
        let ret = unsafe {
            match space {
                Space::User => {
                    b::dynprobe_read_user(dst.as_mut_ptr().cast(), addr as usize, dst.len())
                }
                _ => b::dynprobe_read_kernel(dst.as_mut_ptr().cast(), addr as usize, dst.len()),
            }
        };
        if ret == 0 {
            Ok(())
        } else {
            Err(Fault)
        }
    }
}

impl Memory for KernelMemory {
    fn read(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        Self::read_raw(space, addr, dst)
    }

    /// Reads in small steps that never cross a page boundary (so nothing
    /// past the page holding the NUL is touched), since the kernel's
    /// nofault string copies are not exported.
    fn read_str(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        let cap = dst.len();
        if cap == 0 {
            return Err(Fault);
        }
        let mut done = 0usize;
        let mut step = STRING_FIRST_STEP;
        while done < cap {
            let at = addr.checked_add(done as u64).ok_or(Fault)?;
            let to_page_end = (PAGE_SIZE - (at % PAGE_SIZE)) as usize;
            let want = to_page_end.min(step).min(cap - done);
            let chunk = dst.get_mut(done..done + want).ok_or(Fault)?;
            Self::read_raw(space, at, chunk)?;
            if let Some(nul) = first_nul(chunk) {
                return Ok(done + nul + 1);
            }
            done += want;
            step = STRING_STEP;
        }
        // Truncated: the last byte becomes the terminator.
        if let Some(last) = dst.last_mut() {
            *last = 0;
        }
        Ok(cap)
    }

    /// Below TASK_SIZE, where the kernel's probe fetches use the user
    /// accessor (it moves with 5-level paging and 32-bit tasks).
    fn is_user_address(&self, addr: u64) -> bool {
        // SAFETY: a comparison with the current task's TASK_SIZE.
        unsafe { b::dynprobe_is_user_address(addr as usize) }
    }

    fn this_cpu_ptr(&self, addr: u64) -> u64 {
        // SAFETY: pointer arithmetic only (this CPU's per-CPU offset);
        // what it gives is read, if at all, with the fault-tolerant reads.
        unsafe { b::dynprobe_this_cpu_ptr(addr as usize) as u64 }
    }

    fn comm(&self) -> [u8; 16] {
        let mut comm = [0u8; 16];
        // SAFETY: `comm` is valid for 16 bytes.
        unsafe { b::dynprobe_current_comm(comm.as_mut_ptr(), comm.len()) };
        comm
    }

    /// Only on the hit path (a symstr argument, written into the record
    /// in the hit's scratch buffer).
    fn symbol(&self, addr: u64, dst: &mut [u8]) -> usize {
        // SAFETY: `dst` is valid for `dst.len()` bytes; the interpreter
        // calls this during a hit, which holds a scratch level.
        unsafe { b::dynprobe_record_symbol(dst.as_mut_ptr(), dst.len(), addr as usize) }
    }
}
