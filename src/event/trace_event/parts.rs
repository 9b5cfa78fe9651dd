// SPDX-License-Identifier: GPL-2.0

//! An event's parts: what the control path reads but no hit does (the
//! definition its fields and text come from, a few counts and flags),
//! two words in the event, and the length of the text that follows the
//! event in its allocation (`trace_event/event_box.rs`).

use core::sync::atomic::{AtomicI32, AtomicU8, Ordering};

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::probe::compiled::CompiledDef;

/// The parts: two words.
pub(super) struct EventParts {
    /// The definition the event's fields and text come from (its system
    /// and name are C strings in the definition's text:
    /// `Compiled::c_names`).
    pub(super) def: Arc<CompiledDef>,
    /// How many of the event's references are dynprobe's own event
    /// probes' (their source file and perf counters): holds from inside
    /// dynprobe, which do not keep the module loaded (src/shim/holds.c).
    pub(super) internal_refs: AtomicI32,
    /// Words of text after the event (its last one padded with NULs).
    text_words: u16,
    /// Fields from this index on are defined by `define_fields`.
    first_defined: u8,
    /// [`CLOSING`] and [`TRACED`].
    flags: AtomicU8,
}

const _: () = assert!(core::mem::size_of::<EventParts>() == 16);

/// Being removed by a clear: no new enable or reference is taken, so
/// that what the clear checked stays true until the event is gone.
const CLOSING: u8 = 1;
/// Enabled in a trace instance since a removal last waited for running
/// hits: a hit may still be writing through an instance's file, which
/// removing the event frees (`TraceEvent::wait_for_hits`).
const TRACED: u8 = 2;

impl EventParts {
    /// The parts of an event of `def` whose text is `text_len` bytes
    /// (all of whose fields `define_fields` defines, until
    /// [`EventParts::set_first_defined`] says otherwise). The text's words
    /// are at most 64 Ki (512 KiB: more than the longest print fmt a
    /// 4094-byte line makes, 128 arguments of 64 elements).
    pub(super) fn new(def: Arc<CompiledDef>, text_len: usize) -> Result<Self> {
        Ok(EventParts {
            def,
            internal_refs: AtomicI32::new(0),
            text_words: u16::try_from(text_len.div_ceil(8)).map_err(|_| ENOMEM)?,
            first_defined: 0,
            flags: AtomicU8::new(0),
        })
    }

    /// Words of text after the event.
    pub(super) fn text_words(&self) -> usize {
        self.text_words.into()
    }

    /// Fields from this index on are defined by `define_fields`.
    pub(super) fn first_defined(&self) -> usize {
        self.first_defined.into()
    }

    /// Sets where `define_fields` starts, before the event is registered.
    pub(super) fn set_first_defined(&mut self, first_defined: usize) -> Result {
        self.first_defined = u8::try_from(first_defined).map_err(|_| EINVAL)?;
        Ok(())
    }

    fn flag(&self, flag: u8) -> bool {
        self.flags.load(Ordering::Relaxed) & flag != 0
    }

    fn set_flag(&self, flag: u8, on: bool) {
        if on {
            self.flags.fetch_or(flag, Ordering::Relaxed);
        } else {
            self.flags.fetch_and(!flag, Ordering::Relaxed);
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
