// SPDX-License-Identifier: GPL-2.0

//! The tracing core's private `struct trace_array` (kernel/trace/trace.h,
//! not in any header a module can include), located in the kernel's BTF
//! for the fast record path (src/shim/hit.c): where an instance keeps its
//! ring buffer and its options word, which options make a record take
//! the full path, and the count of triggers that read timestamps, which
//! makes a record only triggers read take it too.

use kernel::prelude::*;

use crate::lang::{Btf, BtfMember, BtfType};
use crate::sys::bindings as b;

/// Options of `trace_options` whose work is done in
/// `trace_event_buffer_commit()`: a record takes the full path while
/// either is set.
const FULL_PATH_OPTIONS: [&str; 2] = ["TRACE_ITER_STACKTRACE_BIT", "TRACE_ITER_USERSTACKTRACE_BIT"];

/// Byte offset of a member that is not a bitfield.
fn byte_offset(m: &BtfMember) -> Option<u32> {
    (m.bitfield_size == 0 && m.bit_offset % 8 == 0).then_some(m.bit_offset / 8)
}

/// The layout the fast path needs: offsets of `array_buffer.buffer` and
/// `trace_flags`, the width of `trace_flags`, the bits of the options of
/// [`FULL_PATH_OPTIONS`]. `None` when BTF lacks any of them.
fn layout(btf: &Btf<'_>) -> Option<(u32, u32, u32, u64)> {
    let tr = btf.struct_named("trace_array")?;
    let array_buffer = btf.member(tr, "array_buffer").ok()??;
    let buffer = btf.member(array_buffer.ty, "buffer").ok()??;
    let flags = btf.member(tr, "trace_flags").ok()??;
    let buffer_offset = byte_offset(&array_buffer)?.checked_add(byte_offset(&buffer)?)?;
    let flags_size = match btf.type_info(flags.ty)? {
        BtfType::Int { bits, .. } => u32::from(bits) / 8,
        _ => return None,
    };
    let mut options = 0u64;
    for name in FULL_PATH_OPTIONS {
        // A negative bit is an option this kernel was built without.
        let bit = btf.enumerator(name)?;
        if let Ok(bit @ 0..=63) = u32::try_from(bit) {
            options |= 1 << bit;
        }
    }
    Some((buffer_offset, byte_offset(&flags)?, flags_size, options))
}

/// Byte offset of `no_filter_buffering_ref`, an `int`: `None` when BTF
/// lacks it or gives it another type.
fn no_buffering_offset(btf: &Btf<'_>) -> Option<u32> {
    let tr = btf.struct_named("trace_array")?;
    let count = btf.member(tr, "no_filter_buffering_ref").ok()??;
    match btf.type_info(count.ty)? {
        BtfType::Int { bits: 32, .. } => byte_offset(&count),
        _ => None,
    }
}

/// Turns the fast record path on if BTF locates what it reads, and with
/// it the path of records only triggers read; called once, with the
/// vmlinux BTF, before any event exists.
pub(crate) fn fast_record_init(btf: &Btf<'_>) {
    let on = layout(btf).is_some_and(|(buffer, flags, size, options)| {
        // SAFETY: called once (the first definition's BTF set-up, with
        // the registry lock held); hits read the settings only after the
        // release that publishes them.
        unsafe { b::dynprobe_fast_record_init(buffer, flags, size, options) }
    });
    if !on {
        pr_info!("struct trace_array not found in BTF: every record takes the tracing core's full path\n");
        return;
    }
    match no_buffering_offset(btf) {
        // SAFETY: as above, once, after the fast path is on; hits read
        // the offset only after the release that publishes it.
        Some(offset) => unsafe { b::dynprobe_trigger_record_init(offset) },
        None => pr_info!("no_filter_buffering_ref not found in BTF: records for triggers take the tracing core's full path\n"),
    }
}
