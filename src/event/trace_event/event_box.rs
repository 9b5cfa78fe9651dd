// SPDX-License-Identifier: GPL-2.0

//! An event and the text of its shape (its print fmt, which its call
//! points to, and its fields' own text: `format.rs`'s `Shape`) in one
//! allocation, the text right after the event: apart, the text would
//! round up to a slab size class of its own (a 64-byte object for a
//! one-argument event) and the event to another; together they round up
//! once (a one-argument function or kprobe event and its text in 256
//! bytes). The box owns the allocation and never moves the event in it.

use core::ops::Deref;
use core::pin::Pin;
use core::ptr::NonNull;

use kernel::prelude::*;

use super::TraceEvent;
use crate::sys::boxed_slice;

/// Words of the event, which the text follows.
const EVENT_WORDS: usize = core::mem::size_of::<TraceEvent>() / 8;
const _: () = assert!(core::mem::size_of::<TraceEvent>() == 8 * EVENT_WORDS);
const _: () = assert!(core::mem::align_of::<TraceEvent>() <= 8);

/// A pinned event with its text after it.
///
/// # Invariants
///
/// `ptr` is the start of a `KBox<[u64]>` given up by `KBox::into_raw`, of
/// [`EVENT_WORDS`] and the event's `parts.text_words()` words: the event,
/// initialised, then its text. The event never moves in it; it is
/// dropped, and the words freed, only by the box's drop.
pub(crate) struct EventBox {
    ptr: NonNull<TraceEvent>,
}

// SAFETY: the box owns the event, which is `Send` and `Sync`, and its
// text, never changed once written.
unsafe impl Send for EventBox {}
// SAFETY: as for `Send`.
unsafe impl Sync for EventBox {}

impl EventBox {
    /// Boxes `event` with `text` after it; `event.parts` says how many
    /// words of text follow, which must hold `text`.
    pub(super) fn new(event: TraceEvent, text: &[u8]) -> Result<Self> {
        let text_words = event.parts.text_words();
        if text.len() > 8 * text_words {
            return Err(EINVAL);
        }
        let buf: Pin<KBox<[u64]>> = boxed_slice(core::iter::repeat(0), EVENT_WORDS + text_words)?;
        let raw = KBox::into_raw(Pin::into_inner(buf)).cast::<TraceEvent>();
        // SAFETY: `raw` is a fresh allocation of the event's words and
        // the text's, aligned for the event: the event is written at its
        // start and the text (plain bytes, NUL-padded: the words were
        // zero) right after it.
        unsafe {
            raw.write(event);
            raw.add(1)
                .cast::<u8>()
                .copy_from_nonoverlapping(text.as_ptr(), text.len());
        }
        Ok(EventBox {
            // A box's pointer is never null.
            ptr: NonNull::new(raw).ok_or(ENOMEM)?,
        })
    }

    /// The event, mutable while nothing else knows of it.
    ///
    /// # Safety
    ///
    /// Nothing else refers to the event (it is not registered) while the
    /// reference lives; the event is not moved out of it.
    pub(super) unsafe fn event_mut(&mut self) -> &mut TraceEvent {
        // SAFETY: the event is initialised (type invariant) and, per the
        // function's contract, not shared.
        unsafe { self.ptr.as_mut() }
    }
}

impl Deref for EventBox {
    type Target = TraceEvent;

    fn deref(&self) -> &TraceEvent {
        // SAFETY: the event is initialised and lives as long as the box
        // (type invariant).
        unsafe { self.ptr.as_ref() }
    }
}

impl TraceEvent {
    /// The text after the event, NUL-padded to whole words.
    ///
    /// The event is always in an [`EventBox`]: `TraceEvent::create` makes
    /// it nowhere else.
    pub(super) fn text(&self) -> &[u8] {
        let len = 8 * self.parts.text_words();
        let event: *const TraceEvent = self;
        // SAFETY: the event is in an `EventBox`, whose allocation holds
        // `len` bytes of text right after it (its type invariant), never
        // changed once written, as long as the event lives.
        unsafe { core::slice::from_raw_parts(event.add(1).cast::<u8>(), len) }
    }
}

impl Drop for EventBox {
    fn drop(&mut self) {
        let words = EVENT_WORDS + self.parts.text_words();
        // SAFETY: the event is initialised and dropped here, once, in
        // place; then the words the box was made of (type invariant) are
        // freed, with their number.
        unsafe {
            core::ptr::drop_in_place(self.ptr.as_ptr());
            drop(KBox::from_raw(core::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr().cast::<u64>(),
                words,
            )));
        }
    }
}
