// SPDX-License-Identifier: GPL-2.0

//! The print step: a record of a dynprobe event as `cat trace` shows it,
//! the output function every dynprobe event shares ([`EVENT_FUNCS`]),
//! printed by the definition language into the iterator's `trace_seq`.

use core::cell::UnsafeCell;
use core::fmt::{self, Write};
use core::mem::offset_of;

use kernel::ffi::c_int;

use super::TraceEvent;
use crate::lang::Symbolizer;
use crate::sys::bindings as b;

/// The output functions of every dynprobe event: `trace` prints one;
/// `register_trace_event()` sets the others (NULL here) to its nop
/// printer at the first registration, and only reads them after.
pub(super) struct SharedFuncs(pub(super) UnsafeCell<b::trace_event_functions>);

// SAFETY: written only by register_trace_event(), under trace_event_sem,
// and only while a member is NULL (the first registration); read after.
unsafe impl Sync for SharedFuncs {}

pub(super) static EVENT_FUNCS: SharedFuncs =
    SharedFuncs(UnsafeCell::new(b::trace_event_functions {
        trace: Some(event_print),
        raw: None,
        hex: None,
        binary: None,
    }));

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
