// SPDX-License-Identifier: GPL-2.0
//! Records of words and strings written in place: a record of steps
//! ([`RecordPlan::Steps`]) with strings is measured first
//! ([`Scalars::measure_strings`]), so that a probe handler can reserve
//! exactly its size on a ring buffer, then written into that reservation
//! ([`Scalars::write_measured`]): its header and the words before its
//! first string from a word table ([`WordTable::leading`]), the rest
//! here. No scratch buffer and no copy of the record, as the kernel's
//! probe events, which also read a string twice for that. A short string
//! is read once: its measuring read keeps its bytes
//! ([`MeasuredStrings`]). A longer one is read again into the
//! reservation, and may have changed meanwhile: it is then cut at its
//! measured length, or ends early with the rest of its room cleared,
//! never past what was reserved. With memory that does not change, the
//! record is the interpreter's byte for byte (the tests hold them to it).

use crate::lang::interp::{resolve, word, Memory, Regs};
use crate::lang::view::{RecordPlan, Scalars, Step, MAX_STEPS};
use crate::lang::words::WordTable;

/// Bytes of the strings' first reads kept for their writes, all strings
/// together.
pub const KEPT_BYTES: usize = 64;
/// A string's first read: most strings recorded (names, paths'
/// components, commands) fit, and each byte read costs.
const FIRST_READ: usize = 32;
/// Each later read of a longer string while it is measured.
const LATER_READ: usize = 128;
/// A string whose bytes are not kept: its write reads it again.
const NOT_KEPT: u8 = u8::MAX;
const _: () = assert!(KEPT_BYTES < NOT_KEPT as usize);

/// What measuring a record's strings found, for writing them into a
/// reservation of the measured size: per step, the string's bytes in the
/// record (NUL included; 0: recorded empty, as a read that faults), and
/// where its bytes were kept. Plain bytes: any contents are a valid
/// value (a probe handler's stack may hand it over uninitialized by
/// Rust's rules, cleared by the C compiler's), and measuring writes every
/// entry that writing reads.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct MeasuredStrings {
    len: [u16; MAX_STEPS],
    kept_at: [u8; MAX_STEPS],
    kept: [u8; KEPT_BYTES],
}

impl MeasuredStrings {
    /// Nothing measured yet.
    pub const EMPTY: MeasuredStrings = MeasuredStrings {
        len: [0; MAX_STEPS],
        kept_at: [NOT_KEPT; MAX_STEPS],
        kept: [0; KEPT_BYTES],
    };
}

impl Default for MeasuredStrings {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// The `__data_loc` word of `len` bytes at `at`.
fn data_loc(len: usize, at: usize) -> u32 {
    ((len as u32) << 16) | (at as u32 & 0xffff)
}

fn put_u32(out: &mut [u8], at: usize, v: u32) {
    if let Some(s) = out.get_mut(at..).and_then(|r| r.first_chunk_mut::<4>()) {
        *s = v.to_le_bytes();
    }
}

/// Bytes of the string at `addr` as `read_str` records it in `room`
/// bytes (NUL included, 0 for a fault), and where its bytes are in
/// `kept` when they are there; `used`: bytes of `kept` taken so far.
fn measure_one(
    mem: &impl Memory,
    space: crate::lang::Space,
    addr: u64,
    room: usize,
    kept: &mut [u8; KEPT_BYTES],
    used: &mut usize,
) -> (u16, u8) {
    let first = room.min(FIRST_READ);
    let at = *used;
    let kept_room = kept.get_mut(at..at + first);
    let keep = kept_room.is_some();
    // Where the bytes are not kept: the stack's, cleared only then.
    let mut spare = [0u8; FIRST_READ];
    let dst = match kept_room {
        Some(dst) => dst,
        None => match spare.get_mut(..first) {
            Some(dst) => dst,
            None => return (0, NOT_KEPT),
        },
    };
    let n = match mem.read_str(space, addr, dst) {
        Ok(n) if n > 0 && n <= first => n,
        _ => return (0, NOT_KEPT),
    };
    if n < first || first == room {
        // The whole string (or all the room has): its NUL ends it.
        if !keep {
            return (n as u16, NOT_KEPT);
        }
        *used = at + n;
        return (n as u16, at as u8);
    }
    measure_rest(mem, space, addr, first - 1, room)
}

/// [`measure_one`] of a string longer than its first read, whose first
/// `done` bytes hold no NUL: read on from there, as many windows as it
/// takes. Out of line: a short string's measure clears no window.
#[inline(never)]
fn measure_rest(
    mem: &impl Memory,
    space: crate::lang::Space,
    addr: u64,
    mut done: usize,
    room: usize,
) -> (u16, u8) {
    let mut spare = [0u8; LATER_READ];
    loop {
        let want = (room - done).min(LATER_READ);
        let Some(from) = addr.checked_add(done as u64) else {
            return (0, NOT_KEPT);
        };
        let Some(dst) = spare.get_mut(..want) else {
            return (0, NOT_KEPT);
        };
        match mem.read_str(space, from, dst) {
            Ok(m) if m > 0 && m <= want => {
                if m < want || done + want >= room {
                    return ((done + m) as u16, NOT_KEPT);
                }
            }
            _ => return (0, NOT_KEPT),
        }
        done += want - 1;
    }
}

impl Scalars {
    /// The size of the record a probe handler writes in place for this
    /// definition, as [`crate::lang::DefView::record`] would make it in
    /// `cap` bytes, and what [`Scalars::write_measured`] needs of its
    /// strings in `m`; 0 for a definition whose record is not one of
    /// steps, or when `cap` is smaller than its fixed part.
    pub fn measure_strings(
        &self,
        regs: &impl Regs,
        mem: &impl Memory,
        cap: usize,
        m: &mut MeasuredStrings,
    ) -> usize {
        let RecordPlan::Steps(ref steps) = self.plan else {
            return 0;
        };
        let fixed_size = self.fixed_size() as usize;
        if cap < fixed_size {
            return 0;
        }
        let cap = cap.min(0xffff);
        let max = self.string_max();
        let mut cursor = fixed_size;
        let mut used = 0usize;
        for (i, step) in steps.steps().iter().enumerate() {
            let Step::Str {
                base,
                space,
                offset,
            } = *step
            else {
                continue;
            };
            let room = cap.saturating_sub(cursor).min(max);
            let (len, at) = if room == 0 {
                (0, NOT_KEPT)
            } else {
                let addr = word(base, regs).wrapping_add(i64::from(offset) as u64);
                let space = resolve(mem, space, addr);
                measure_one(mem, space, addr, room, &mut m.kept, &mut used)
            };
            if let (Some(l), Some(a)) = (m.len.get_mut(i), m.kept_at.get_mut(i)) {
                *l = len;
                *a = at;
            }
            cursor += usize::from(len);
        }
        cursor
    }

    /// Writes the record `m` measured into `out`, its reservation of the
    /// measured size: the steps from the first string on, the header and
    /// the words before it being the word table's
    /// ([`WordTable::leading`]). Returns the bytes used. A string read
    /// again is cut at its measured length, or ends early with the rest
    /// of its bytes cleared, or is recorded empty if the read faults:
    /// nothing is written past the measured size.
    pub fn write_measured(
        &self,
        regs: &impl Regs,
        mem: &impl Memory,
        m: &MeasuredStrings,
        out: &mut [u8],
    ) -> usize {
        let RecordPlan::Steps(ref steps) = self.plan else {
            return 0;
        };
        let mut at = self.args_offset() as usize;
        let mut cursor = self.fixed_size() as usize;
        let mut leading = true;
        for (i, step) in steps.steps().iter().enumerate() {
            match *step {
                Step::Word(_) if leading => at += 8,
                Step::Word(source) => {
                    if let Some(s) = out.get_mut(at..).and_then(|r| r.first_chunk_mut::<8>()) {
                        *s = word(source, regs).to_le_bytes();
                    }
                    at += 8;
                }
                Step::Str {
                    base,
                    space,
                    offset,
                } => {
                    leading = false;
                    let len = usize::from(m.len.get(i).copied().unwrap_or(0));
                    let kept_at = m.kept_at.get(i).copied().unwrap_or(NOT_KEPT);
                    let Some(dst) = out.get_mut(cursor..cursor + len).filter(|_| len > 0) else {
                        put_u32(out, at, data_loc(0, cursor));
                        at += 4;
                        continue;
                    };
                    let got = if kept_at != NOT_KEPT {
                        let k = usize::from(kept_at);
                        match m.kept.get(k..k + len) {
                            Some(src) => {
                                dst.copy_from_slice(src);
                                len
                            }
                            None => 0,
                        }
                    } else {
                        let addr = word(base, regs).wrapping_add(i64::from(offset) as u64);
                        let space = resolve(mem, space, addr);
                        match mem.read_str(space, addr, dst) {
                            Ok(n) if n > 0 && n <= len => n,
                            _ => 0,
                        }
                    };
                    // What the string no longer fills is cleared, not
                    // left as the ring buffer's stale bytes.
                    if got < len {
                        if let Some(rest) = dst.get_mut(got..) {
                            rest.fill(0);
                        }
                    }
                    put_u32(out, at, data_loc(got, cursor));
                    at += 4;
                    cursor += len;
                }
            }
        }
        cursor
    }
}

impl WordTable {
    /// The table of the header and the words before the first string of
    /// a record of steps with strings, which a probe handler writes
    /// before [`Scalars::write_measured`] writes the rest; `None` for
    /// every other record, and where more words than a table holds come
    /// first.
    pub(crate) fn leading(scalars: &Scalars) -> Option<WordTable> {
        let RecordPlan::Steps(ref steps) = scalars.plan else {
            return None;
        };
        let first_str = steps
            .steps()
            .iter()
            .position(|s| matches!(s, Step::Str { .. }))?;
        let words = steps.steps().get(..first_str)?.iter().map(|s| match *s {
            Step::Word(source) => Some(source),
            Step::Str { .. } => None,
        });
        WordTable::of_sources(scalars.header_size(), words)
    }
}
