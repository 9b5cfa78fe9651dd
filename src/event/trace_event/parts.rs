// SPDX-License-Identifier: GPL-2.0

//! An event's parts: what the tracing core points into or the control
//! path reads but no hit does (the definition its fields and text come
//! from, the text of its print fmt and fields, a few counts and flags),
//! in one allocation sized to the text and kept by a thin pointer. A
//! header and a text of their own would each round up to a slab size
//! class (a 64-byte object each for a one-argument event); together they
//! round up once.

use core::pin::Pin;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicI32, AtomicU8, Ordering};

use kernel::prelude::*;
use kernel::sync::Arc;

use super::format::Shape;
use crate::probe::compiled::CompiledDef;
use crate::sys::boxed_slice;

/// What the parts hold besides their text: two words.
pub(super) struct PartsHeader {
    /// The definition the event's fields and text come from (its system
    /// and name are C strings in the definition's text:
    /// `Compiled::c_names`).
    pub(super) def: Arc<CompiledDef>,
    /// How many of the event's references are dynprobe's own event
    /// probes' (their source file and perf counters): holds from inside
    /// dynprobe, which do not keep the module loaded (src/shim/holds.c).
    pub(super) internal_refs: AtomicI32,
    /// Words of text after the header (its last one padded with NULs).
    text_words: u16,
    /// Fields from this index on are defined by `define_fields`.
    first_defined: u8,
    /// [`CLOSING`] and [`TRACED`].
    flags: AtomicU8,
}

/// Being removed by a clear: no new enable or reference is taken, so
/// that what the clear checked stays true until the event is gone.
const CLOSING: u8 = 1;
/// Enabled in a trace instance since a removal last waited for running
/// hits: a hit may still be writing through an instance's file, which
/// removing the event frees (`TraceEvent::wait_for_hits`).
const TRACED: u8 = 2;

/// The header, then the text ([`Shape`]'s: the print fmt, which the
/// call points to, and the fields' own text), in one allocation.
#[repr(C)]
struct PartsOf<T: ?Sized> {
    header: PartsHeader,
    text: T,
}

// The text starts right after the header, which is a whole number of
// words: the allocation is `HEADER_WORDS` words and the text's.
const HEADER_WORDS: usize = core::mem::size_of::<PartsHeader>() / 8;
const _: () = assert!(core::mem::size_of::<PartsHeader>() == 16);
const _: () = assert!(core::mem::align_of::<PartsHeader>() == 8);

/// An event's parts.
///
/// # Invariants
///
/// `ptr` is a `KBox<PartsOf<[u8]>>` given up by `KBox::into_raw`, whose
/// text is `header.text_words` words, made and freed only here.
pub(super) struct EventParts {
    ptr: NonNull<PartsHeader>,
}

// SAFETY: the parts own their allocation; what is shared (the header's
// `Arc` and atomics, the text, never changed once made) is `Send` and
// `Sync`.
unsafe impl Send for EventParts {}
// SAFETY: as for `Send`.
unsafe impl Sync for EventParts {}

impl EventParts {
    /// The parts of an event of `def`, whose [`Shape`] text is `text`
    /// (all of whose fields `define_fields` defines, until
    /// [`EventParts::set_first_defined`] says otherwise).
    pub(super) fn new(def: Arc<CompiledDef>, text: &[u8]) -> Result<Self> {
        let text_words = text.len().div_ceil(8);
        let header = PartsHeader {
            def,
            internal_refs: AtomicI32::new(0),
            text_words: u16::try_from(text_words).map_err(|_| ENOMEM)?,
            first_defined: 0,
            flags: AtomicU8::new(0),
        };
        // The size `KBox` frees a `PartsOf<[u8]>` of `8 * text_words`
        // bytes of text with: the header's words and the text's.
        let buf: Pin<KBox<[u64]>> = boxed_slice(core::iter::repeat(0), HEADER_WORDS + text_words)?;
        let raw = KBox::into_raw(Pin::into_inner(buf)).cast::<PartsHeader>();
        // SAFETY: `raw` is a fresh allocation of the header's words and
        // the text's, aligned for the header; the header is written, then
        // the text's bytes (plain data, NUL-padded already: the words
        // were zero) right after it, where `repr(C)` puts the text.
        unsafe {
            raw.write(header);
            raw.add(1)
                .cast::<u8>()
                .copy_from_nonoverlapping(text.as_ptr(), text.len());
        }
        Ok(EventParts {
            // A box's pointer is never null.
            ptr: NonNull::new(raw).ok_or(ENOMEM)?,
        })
    }

    /// The whole allocation, its text included.
    fn whole(&self) -> *mut PartsOf<[u8]> {
        let text_len = 8 * usize::from(self.header().text_words);
        core::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr().cast::<u8>(), text_len)
            as *mut PartsOf<[u8]>
    }

    pub(super) fn header(&self) -> &PartsHeader {
        // SAFETY: the header is written by `new` and lives as long as the
        // parts (type invariant).
        unsafe { self.ptr.as_ref() }
    }

    /// The event's fields, text and definition.
    pub(super) fn shape(&self) -> Shape<'_> {
        // SAFETY: the allocation holds the header and `text_words` words
        // of text (type invariant), never changed once made.
        let text = unsafe { &(*self.whole()).text };
        Shape::new(&self.header().def, text)
    }

    /// Fields from this index on are defined by `define_fields`.
    pub(super) fn first_defined(&self) -> usize {
        self.header().first_defined.into()
    }

    /// Sets where `define_fields` starts, before the event is registered.
    pub(super) fn set_first_defined(&mut self, first_defined: usize) -> Result {
        let first_defined = u8::try_from(first_defined).map_err(|_| EINVAL)?;
        // SAFETY: `&mut self`: the parts are not shared yet.
        unsafe { self.ptr.as_mut().first_defined = first_defined };
        Ok(())
    }

    fn flag(&self, flag: u8) -> bool {
        self.header().flags.load(Ordering::Relaxed) & flag != 0
    }

    fn set_flag(&self, flag: u8, on: bool) {
        let flags = &self.header().flags;
        if on {
            flags.fetch_or(flag, Ordering::Relaxed);
        } else {
            flags.fetch_and(!flag, Ordering::Relaxed);
        }
    }

    /// Being removed by a clear ([`CLOSING`]).
    pub(super) fn closing(&self) -> bool {
        self.flag(CLOSING)
    }

    pub(super) fn set_closing(&self, closing: bool) {
        self.set_flag(CLOSING, closing);
    }

    /// Enabled in a trace instance since a removal last waited
    /// ([`TRACED`]).
    pub(super) fn traced(&self) -> bool {
        self.flag(TRACED)
    }

    pub(super) fn set_traced(&self, traced: bool) {
        self.set_flag(TRACED, traced);
    }
}

impl Drop for EventParts {
    fn drop(&mut self) {
        // SAFETY: the box `new` gave up, whole (type invariant), not used
        // after.
        drop(unsafe { KBox::from_raw(self.whole()) });
    }
}
