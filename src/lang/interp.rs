// SPDX-License-Identifier: GPL-2.0
//! The interpreter: runs the fetch programs and writes a record.

use crate::lang::record::{FetchArg, TRACE_ENTRY_SIZE};
use crate::lang::text;
use crate::lang::types::{Bitfield, Deref, DerefOp, Load, Reg, Space, Store};
use crate::lang::view::{Args, DefView, RecordPlan, Scalars, Step, Steps, WordSource};

/// Register and argument access at the probe point.
pub trait Regs {
    /// Value of a `pt_regs` register.
    fn reg(&self, r: Reg) -> u64;
    /// Kernel stack entry `n` (`regs_get_kernel_stack_nth`; 0 outside the
    /// stack).
    fn stack_nth(&self, n: u32) -> u64;
    /// The kernel stack pointer.
    fn stack_pointer(&self) -> u64;
    /// Function argument `n` (0-based; `di si dx cx r8 r9`, then the stack).
    fn arg(&self, n: u32) -> u64;
    /// The return value.
    fn return_value(&self) -> u64;
    /// The address of the current task's `task_struct` (`$current`).
    fn current_task(&self) -> u64;
    /// Entry-data slot `slot` saved at function entry (see
    /// [`DefView::entry_args`]).
    fn entry_data(&self, _slot: u32) -> u64 {
        0
    }
    /// A uprobe's file base: where offset 0 of the probed file is mapped
    /// in the probed process (the probe's address less its offset, as
    /// `translate_user_vaddr()` takes it), for `@+OFFS`; 0 elsewhere.
    fn file_base(&self) -> u64 {
        0
    }
    /// The instruction pointer.
    fn instruction_pointer(&self) -> u64 {
        self.reg(Reg::Ip)
    }
    /// An event probe's source record, from its common header on (empty
    /// for the other probes). `$FIELD` values are read from it; string
    /// fields are its addresses, which string stores read as memory.
    fn event_record(&self) -> &[u8] {
        &[]
    }
}

/// A memory access faulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault;

/// Fault-tolerant memory access.
pub trait Memory {
    /// Read `dst.len()` bytes at `addr` (`space` is `Kernel` or `User`).
    fn read(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<(), Fault>;
    /// Copy the NUL-terminated string at `addr` into `dst` (never more than
    /// `dst.len()` bytes); returns the bytes written including the NUL. When
    /// the string is longer, the copy is truncated and `dst[len - 1]` is the
    /// NUL. `dst` is never empty.
    fn read_str(&self, space: Space, addr: u64, dst: &mut [u8]) -> Result<usize, Fault>;
    /// The current task's `comm`.
    fn comm(&self) -> [u8; 16];
    /// This CPU's instance of the per-CPU variable at `addr`
    /// (`this_cpu_ptr()`).
    fn this_cpu_ptr(&self, addr: u64) -> u64;
    /// Write `addr` as `sprint_symbol()` does into `dst` (no NUL); returns
    /// the length.
    fn symbol(&self, addr: u64, dst: &mut [u8]) -> usize;
    /// True when `addr` is a user-space address (for [`Space::Auto`]).
    fn is_user_address(&self, addr: u64) -> bool {
        addr < 0x0000_8000_0000_0000
    }
}

/// Values of the probe's own header fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderIps {
    /// `__probe_ip` (kprobe/fentry), `__probe_func` (return probes) or
    /// `__parent_ip` (function events).
    pub first: u64,
    /// `__probe_ret_ip` (return probes) or `__ip` (function events); unused
    /// for single-ip headers.
    pub second: u64,
}

/// The accessor a read at `addr` uses. `Kernel` reads below the
/// user/kernel split go to user memory, as the kernel's probe_mem_read()
/// and string fetches do where address spaces do not overlap (x86_64): a
/// plain `+0(%si)` or `:string` of a user pointer reads it. `User` (`+u`,
/// `ustring`) is never redirected, so a kernel address read with it faults.
fn resolve(mem: &impl Memory, space: Space, addr: u64) -> Space {
    match space {
        Space::Auto | Space::Kernel => {
            if mem.is_user_address(addr) {
                Space::User
            } else {
                Space::Kernel
            }
        }
        Space::User => Space::User,
    }
}

/// Stores the low `dst.len()` bytes of `v`. The sizes of the fetch types
/// are handled one by one so that each is a single store on the hot path,
/// not a byte loop.
fn put_le(dst: &mut [u8], v: u64) {
    let b = v.to_le_bytes();
    if let Ok(d) = <&mut [u8; 8]>::try_from(&mut *dst) {
        *d = b;
    } else if let (Ok(d), Some(s)) = (<&mut [u8; 4]>::try_from(&mut *dst), b.first_chunk()) {
        *d = *s;
    } else if let (Ok(d), Some(s)) = (<&mut [u8; 2]>::try_from(&mut *dst), b.first_chunk()) {
        *d = *s;
    } else {
        for (d, s) in dst.iter_mut().zip(b.iter()) {
            *d = *s;
        }
    }
}

fn get_le(src: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    for (d, s) in b.iter_mut().zip(src.iter()) {
        *d = *s;
    }
    u64::from_le_bytes(b)
}

fn apply_bf(slot: &mut [u8], bf: Bitfield) {
    let bits = u32::from(bf.basesize).saturating_mul(8).min(64);
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits).wrapping_sub(1)
    };
    let v = get_le(slot) & mask;
    let v = v.checked_shl(u32::from(bf.lshift)).unwrap_or(0) & mask;
    let v = v.checked_shr(u32::from(bf.rshift)).unwrap_or(0);
    put_le(slot, v);
}

struct Dyn<'o> {
    out: &'o mut [u8],
    cursor: usize,
    /// Longest string, NUL included.
    string_max: usize,
}

impl Dyn<'_> {
    /// Room for the next string.
    fn room(&self) -> usize {
        let cap = self.out.len().min(0xffff);
        cap.saturating_sub(self.cursor).min(self.string_max)
    }

    fn loc(&self, len: usize) -> u32 {
        ((len as u32) << 16) | (self.cursor as u32 & 0xffff)
    }
}

impl DefView<'_> {
    /// Run every argument's program and write the record into `out`.
    ///
    /// Layout of `out` (identical to the ring-buffer entry):
    /// bytes `0..8` are the common `trace_entry` (left as they are: the
    /// ring buffer fills them, so `out` may be the reserved entry itself),
    /// then the header ips from `ips`, then the fixed argument
    /// area (`args_size()` bytes), then string data. `__data_loc`
    /// offsets count from byte 0 of `out`, as in the kernel.
    ///
    /// Returns the number of bytes used (0 when `out` is smaller than
    /// `fixed_size()`). Strings that do not fit are recorded
    /// empty; a string whose read faults is recorded with length 0 (printed
    /// `(fault)`), as Linux 7.2 does. Probed memory is read once.
    pub fn record(
        &self,
        regs: &impl Regs,
        mem: &impl Memory,
        ips: HeaderIps,
        out: &mut [u8],
    ) -> usize {
        Scalars::record_by_plan(self, || *self, regs, mem, ips, out)
    }

    /// [`DefView::record`] for a definition of plain values that fill the
    /// argument area: each is written in place, nothing is cleared. The
    /// same record as the interpreter's (the tests compare them), in a
    /// fraction of its instructions.
    fn record_values(&self, regs: &impl Regs, ips: HeaderIps, out: &mut [u8]) -> usize {
        let fixed_size = self.fixed_size() as usize;
        let Some(rec) = out.get_mut(..fixed_size) else {
            return 0;
        };
        self.write_header(rec, ips);
        let base = self.args_offset() as usize;
        match self.args {
            Args::Workspace(args) => write_values(args.iter(), base, regs, rec),
            Args::Compact(c) => write_values(c.iter(), base, regs, rec),
        }
        fixed_size
    }

    /// [`DefView::record`] by the interpreter over an area cleared first,
    /// whatever the arguments: the reference the shorter ways are held to.
    /// Public so that tests can compare them.
    #[doc(hidden)]
    pub fn record_general(
        &self,
        regs: &impl Regs,
        mem: &impl Memory,
        ips: HeaderIps,
        out: &mut [u8],
    ) -> usize {
        self.interpret(regs, mem, ips, out, true)
    }

    /// The interpreter; `clear`: clear the header and argument area first
    /// (else every byte of them must be written by the programs).
    fn interpret(
        &self,
        regs: &impl Regs,
        mem: &impl Memory,
        ips: HeaderIps,
        out: &mut [u8],
        clear: bool,
    ) -> usize {
        let fixed_size = self.fixed_size() as usize;
        let t = TRACE_ENTRY_SIZE as usize;
        match out.get_mut(t..fixed_size) {
            Some(area) if clear => area.fill(0),
            Some(_) => {}
            None => return 0,
        }
        self.write_header(out, ips);
        let base = self.args_offset() as usize;
        let mut d = Dyn {
            out,
            cursor: fixed_size,
            string_max: self.string_max(),
        };
        match self.args {
            Args::Workspace(args) => {
                for a in args {
                    run_arg(a, base, regs, mem, &mut d);
                }
            }
            Args::Compact(c) => {
                for a in c.iter() {
                    run_arg(&a, base, regs, mem, &mut d);
                }
            }
        }
        d.cursor
    }
}

/// The arguments of a record of plain values, each written in place.
#[inline]
fn write_values<A: FetchArg>(
    args: impl Iterator<Item = A>,
    base: usize,
    regs: &impl Regs,
    rec: &mut [u8],
) {
    for a in args {
        let at = base.saturating_add(a.offset() as usize);
        if let Some(s) = rec.get_mut(at..at.saturating_add(a.fetch_type().size() as usize)) {
            put_le(s, load_value(&a, regs));
        }
    }
}

/// The word a step reads.
pub(crate) fn word(source: WordSource, regs: &impl Regs) -> u64 {
    match source {
        WordSource::Reg(r) => regs.reg(r),
        WordSource::Arg(n) => regs.arg(u32::from(n)),
        WordSource::RetVal => regs.return_value(),
        WordSource::EntryData(s) => regs.entry_data(u32::from(s)),
    }
}

fn load_value(a: &impl FetchArg, regs: &impl Regs) -> u64 {
    match *a.load() {
        Load::Reg(r) => regs.reg(r),
        Load::Stack(n) => regs.stack_nth(n),
        Load::StackPointer => regs.stack_pointer(),
        Load::RetVal => regs.return_value(),
        Load::Arg(n) => regs.arg(n),
        Load::EntryData(s) => regs.entry_data(s),
        Load::Imm(v) => v,
        Load::Current => regs.current_task(),
        Load::FileOffset(off) => regs.file_base().wrapping_add(off),
        Load::Symbol { addr, .. } => addr,
        Load::Field(f) => {
            let rec = regs.event_record();
            f.value(rec, rec.as_ptr() as u64)
        }
        Load::Comm | Load::ImmString(_) | Load::None => 0,
    }
}

/// The value one dereference step gives from `val`.
fn deref_step(mem: &impl Memory, dr: Deref, val: u64) -> Result<u64, Fault> {
    let at = val.wrapping_add(dr.offset as u64);
    match dr.op {
        DerefOp::Read(space) => read_u64(mem, space, at),
        DerefOp::ThisCpuPtr => Ok(mem.this_cpu_ptr(at)),
    }
}

fn read_u64(mem: &impl Memory, space: Space, addr: u64) -> Result<u64, Fault> {
    let mut b = [0u8; 8];
    mem.read(resolve(mem, space, addr), addr, &mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Copy bytes (plus NUL) into the dynamic area; returns the data_loc.
fn store_bytes(d: &mut Dyn<'_>, bytes: &[u8]) -> u32 {
    let room = d.room();
    if room == 0 {
        return d.loc(0);
    }
    let n = bytes.len().min(room - 1);
    let start = d.cursor;
    if let Some(dst) = d.out.get_mut(start..start + n + 1) {
        if let (Some(dd), Some(src)) = (dst.get_mut(..n), bytes.get(..n)) {
            dd.copy_from_slice(src);
        }
        if let Some(z) = dst.get_mut(n) {
            *z = 0;
        }
    } else {
        return d.loc(0);
    }
    let loc = d.loc(n + 1);
    d.cursor = start + n + 1;
    loc
}

fn store_string(d: &mut Dyn<'_>, mem: &impl Memory, space: Space, addr: u64) -> u32 {
    let room = d.room();
    if room == 0 {
        return d.loc(0);
    }
    let start = d.cursor;
    let sp = resolve(mem, space, addr);
    let res = match d.out.get_mut(start..start + room) {
        Some(dst) => mem.read_str(sp, addr, dst),
        None => Err(Fault),
    };
    match res {
        Ok(n) if n > 0 && n <= room => {
            if let Some(z) = d.out.get_mut(start + n - 1) {
                *z = 0;
            }
            let loc = d.loc(n);
            d.cursor = start + n;
            loc
        }
        _ => d.loc(0),
    }
}

fn store_symstr(d: &mut Dyn<'_>, mem: &impl Memory, addr: u64) -> u32 {
    let room = d.room();
    if room == 0 {
        return d.loc(0);
    }
    let start = d.cursor;
    let n = match d.out.get_mut(start..start + room - 1) {
        Some(dst) => mem.symbol(addr, dst).min(room - 1),
        None => return d.loc(0),
    };
    if let Some(z) = d.out.get_mut(start + n) {
        *z = 0;
    }
    let loc = d.loc(n + 1);
    d.cursor = start + n + 1;
    loc
}

fn set_u32(d: &mut Dyn<'_>, at: usize, v: u32) {
    if let Some(s) = d.out.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

fn run_arg(a: &impl FetchArg, base: usize, regs: &impl Regs, mem: &impl Memory, d: &mut Dyn<'_>) {
    let ty = a.fetch_type();
    let slot = base.saturating_add(a.offset() as usize);
    let size = ty.size() as usize;
    let count = usize::from(a.prog_count().max(1));

    // Immediate and comm strings.
    match *a.load() {
        // Untyped, an event probe's `$comm` is the address the kernel's
        // records (which dynprobe does not disclose: 0).
        Load::Comm if ty.is_string() => {
            let c = mem.comm();
            let n = c.iter().position(|&b| b == 0).unwrap_or(c.len());
            let loc = store_bytes(d, text::head(&c, n));
            set_u32(d, slot, loc);
            return;
        }
        Load::ImmString(r) => {
            let mut tmp = [0u8; 64];
            let t = a.text_range(r);
            let n = t.len().min(tmp.len());
            if let (Some(dst), Some(src)) = (tmp.get_mut(..n), t.get(..n)) {
                dst.copy_from_slice(src);
            }
            let loc = store_bytes(d, text::head(&tmp, n));
            set_u32(d, slot, loc);
            return;
        }
        Load::None => return,
        _ => {}
    }

    let mut val = load_value(a, regs);
    let mut lval = val;
    for dr in a.derefs() {
        lval = val;
        match deref_step(mem, dr, val) {
            Ok(v) => val = v,
            Err(Fault) => {
                if ty.is_string() {
                    let loc = d.loc(0);
                    for k in 0..count {
                        set_u32(d, slot + 4 * k, loc);
                    }
                }
                return;
            }
        }
    }

    match *a.store() {
        Store::Raw => {
            if let Some(s) = d.out.get_mut(slot..slot + size) {
                put_le(s, val);
                if let Some(bf) = a.bitfield() {
                    apply_bf(s, bf);
                }
            }
        }
        Store::Mem { space, offset } => {
            for k in 0..count {
                let addr = val
                    .wrapping_add(offset as u64)
                    .wrapping_add((k * size) as u64);
                let at = slot + k * size;
                if let Some(s) = d.out.get_mut(at..at + size) {
                    let sp = resolve(mem, space, addr);
                    if mem.read(sp, addr, s).is_err() {
                        s.fill(0);
                    } else if let Some(bf) = a.bitfield() {
                        apply_bf(s, bf);
                    }
                }
            }
        }
        Store::String { space, offset } => {
            let last = a.derefs().last();
            for k in 0..count {
                let addr = if k == 0 {
                    Some(val.wrapping_add(offset as u64))
                } else {
                    match last {
                        Some(dr) => deref_step(mem, dr, lval.wrapping_add((8 * k) as u64))
                            .ok()
                            .map(|v| v.wrapping_add(offset as u64)),
                        None => None,
                    }
                };
                let loc = match addr {
                    Some(ad) => store_string(d, mem, space, ad),
                    None => d.loc(0),
                };
                set_u32(d, slot + 4 * k, loc);
            }
        }
        Store::SymStr { offset } => {
            let loc = store_symstr(d, mem, val.wrapping_add(offset as u64));
            set_u32(d, slot, loc);
        }
    }
}

impl Scalars {
    /// The one dispatch on a definition's record plan, for
    /// [`DefView::record`] and [`crate::lang::Compiled::record`]: a record
    /// of steps is written from the scalars alone; the other plans read
    /// the arguments, through the view `view` makes.
    #[inline]
    pub(crate) fn record_by_plan<'v>(
        &self,
        view: impl FnOnce() -> DefView<'v>,
        regs: &impl Regs,
        mem: &impl Memory,
        ips: HeaderIps,
        out: &mut [u8],
    ) -> usize {
        match self.plan {
            RecordPlan::Steps(ref steps) => self.record_steps(steps, regs, mem, ips, out),
            RecordPlan::Values => view().record_values(regs, ips, out),
            RecordPlan::Filled => view().interpret(regs, mem, ips, out, false),
            RecordPlan::General => view().interpret(regs, mem, ips, out, true),
        }
    }

    /// [`DefView::record`] for a definition of words and strings from the
    /// registers and entry data ([`RecordPlan::Steps`]): the header and
    /// each step in turn, without looking at the arguments.
    pub(crate) fn record_steps(
        &self,
        steps: &Steps,
        regs: &impl Regs,
        mem: &impl Memory,
        ips: HeaderIps,
        out: &mut [u8],
    ) -> usize {
        let fixed_size = self.fixed_size() as usize;
        let Some(rec) = out.get_mut(..fixed_size) else {
            return 0;
        };
        self.write_header(rec, ips);
        let mut at = self.args_offset() as usize;
        let mut d = Dyn {
            out,
            cursor: fixed_size,
            string_max: self.string_max(),
        };
        for step in steps.steps() {
            match *step {
                Step::Word(source) => {
                    let value = word(source, regs);
                    if let Some(slot) = d.out.get_mut(at..).and_then(|r| r.first_chunk_mut::<8>()) {
                        *slot = value.to_le_bytes();
                    }
                    at += 8;
                }
                Step::Str {
                    base,
                    space,
                    offset,
                } => {
                    let addr = word(base, regs).wrapping_add(i64::from(offset) as u64);
                    let loc = store_string(&mut d, mem, space, addr);
                    set_u32(&mut d, at, loc);
                    at += 4;
                }
            }
        }
        d.cursor
    }

    /// Writes the header ips of a record of at least `fixed_size()` bytes.
    pub(crate) fn write_header(&self, rec: &mut [u8], ips: HeaderIps) {
        let t = TRACE_ENTRY_SIZE as usize;
        match self.header_size() {
            16 => {
                if let Some(h) = rec.get_mut(t..t + 16) {
                    let (first, second) = h.split_at_mut(8);
                    put_le(first, ips.first);
                    put_le(second, ips.second);
                }
            }
            8 => {
                if let Some(h) = rec.get_mut(t..t + 8) {
                    put_le(h, ips.first);
                }
            }
            _ => {}
        }
    }
}
