// SPDX-License-Identifier: GPL-2.0

//! An event's parts: what the tracing core points into or the control
//! path reads but no hit does (the definition its fields and text come
//! from, the text of its print fmt and fields, the list of the fields the
//! core defined, a few counts and flags),
//! in one allocation sized to the text. A header and a text of their own
//! would each round up to a slab size class (a 64-byte object each for
//! a one-argument event); together they round up once.

use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicI32};

use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

use super::format::Shape;
use crate::probe::compiled::CompiledDef;
use crate::sys::bindings as b;
use crate::sys::boxed_slice;

/// What the parts hold besides their text.
pub(super) struct PartsHeader {
    /// The definition the event's fields and text come from (its system
    /// and name are C strings in the definition's text:
    /// `Compiled::c_names`).
    pub(super) def: Arc<CompiledDef>,
    /// The fields the tracing core defined for the event, which its
    /// class's `get_fields` finds here: the class may be its group's.
    /// Initialised by [`EventParts::init_fields`].
    pub(super) fields: Opaque<b::list_head>,
    /// How many of the event's references are dynprobe's own event
    /// probes' (their source file and perf counters): holds from inside
    /// dynprobe, which do not keep the module loaded (src/shim/holds.c).
    pub(super) internal_refs: AtomicI32,
    /// Fields from this index on are defined by `define_fields`.
    first_defined: u16,
    /// Being removed by a clear: no new enable or reference is taken, so
    /// that what the clear checked stays true until the event is gone.
    pub(super) closing: AtomicBool,
    /// Enabled in a trace instance since a removal last waited for
    /// running hits: a hit may still be writing through an instance's
    /// file, which removing the event frees (`TraceEvent::wait_for_hits`).
    pub(super) traced: AtomicBool,
}

/// The header, then the text ([`Shape`]'s: the print fmt, which the
/// call points to, and the fields' own text), in one allocation.
#[repr(C)]
pub(super) struct PartsOf<T: ?Sized> {
    pub(super) header: PartsHeader,
    text: T,
}

/// An event's parts, as the event keeps them: `KBox<EventParts>`.
pub(super) type EventParts = PartsOf<[u8]>;

// The text starts right after the header, which is a whole number of
// words: the allocation is `HEADER_WORDS` words and the text's.
const HEADER_WORDS: usize = core::mem::size_of::<PartsHeader>() / 8;
const _: () = assert!(core::mem::size_of::<PartsHeader>() == 8 * HEADER_WORDS);
const _: () = assert!(core::mem::align_of::<PartsHeader>() == 8);
const _: () = assert!(core::mem::size_of::<PartsHeader>() <= 32);

impl EventParts {
    /// The parts of an event of `def`, whose [`Shape`] text is `text`
    /// (all of whose fields `define_fields` defines, until
    /// [`EventParts::set_first_defined`] says otherwise).
    pub(super) fn new(def: Arc<CompiledDef>, text: &[u8]) -> Result<KBox<Self>> {
        let header = PartsHeader {
            def,
            fields: Opaque::zeroed(),
            internal_refs: AtomicI32::new(0),
            first_defined: 0,
            closing: AtomicBool::new(false),
            traced: AtomicBool::new(false),
        };
        // Words for the header and the text, the last one's tail unused:
        // the size `KBox` frees `EventParts` with (its size rounded up to
        // its alignment, a word's).
        let words = HEADER_WORDS + text.len().div_ceil(8);
        let buf: Pin<KBox<[u64]>> = boxed_slice(core::iter::repeat(0), words)?;
        let raw = KBox::into_raw(Pin::into_inner(buf));
        // A `PartsOf<[u8]>` whose text is `text.len()` bytes, over the
        // words: `repr(C)` puts the text right after the header.
        let parts = core::ptr::slice_from_raw_parts_mut(raw.cast::<u8>(), text.len()) as *mut Self;
        // SAFETY: `raw` is a fresh allocation of `words` words, aligned
        // for the header and as large as `size_of_val` of `*parts` (the
        // header's words and the text's, rounded up to a word), which is
        // what dropping the box frees with; the header is written before
        // the box is made, and the text's bytes (plain data, zero
        // already) are copied in.
        unsafe {
            core::ptr::addr_of_mut!((*parts).header).write(header);
            core::ptr::addr_of_mut!((*parts).text)
                .cast::<u8>()
                .copy_from_nonoverlapping(text.as_ptr(), text.len());
            Ok(KBox::from_raw(parts))
        }
    }

    /// The event's fields, text and definition.
    pub(super) fn shape(&self) -> Shape<'_> {
        Shape::new(&self.header.def, &self.text)
    }

    /// Fields from this index on are defined by `define_fields`.
    pub(super) fn first_defined(&self) -> usize {
        self.header.first_defined.into()
    }

    /// Makes the list of defined fields empty, where it stays.
    pub(super) fn init_fields(&self) {
        let head = self.header.fields.get();
        // SAFETY: the list is in the boxed parts, which keep their place;
        // no field is defined yet.
        unsafe {
            (*head).next = head;
            (*head).prev = head;
        }
    }

    /// Sets where `define_fields` starts, before the event is registered.
    pub(super) fn set_first_defined(&mut self, first_defined: usize) -> Result {
        self.header.first_defined = u16::try_from(first_defined).map_err(|_| EINVAL)?;
        Ok(())
    }
}
