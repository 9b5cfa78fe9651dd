// SPDX-License-Identifier: GPL-2.0
//! The record's layout: one recorded argument (its field, its text, its
//! fetch program) and the fields the event's `format` file lists, below
//! both the definition that holds them and the view that reads them.

use core::fmt::{self, Write};

use crate::lang::text::{self, Str};
use crate::lang::types::{FetchType, Program};
use crate::lang::{MAX_ARGSTR_CAP, MAX_EVENT_NAME_LEN};

/// One recorded argument.
#[derive(Clone, Copy)]
pub struct ProbeArg {
    pub(crate) name: Str<MAX_EVENT_NAME_LEN>,
    pub(crate) text: Str<{ MAX_ARGSTR_CAP + 1 }>,
    pub(crate) ty: FetchType,
    pub(crate) count: u8,
    pub(crate) fixed_string: bool,
    pub(crate) offset: u32,
    pub(crate) prog: Program,
}

impl ProbeArg {
    pub(crate) fn new_with_name(name: Str<MAX_EVENT_NAME_LEN>) -> ProbeArg {
        let mut a = ProbeArg::new();
        a.name = name;
        a
    }

    pub(crate) const fn new() -> ProbeArg {
        ProbeArg {
            name: Str::new(),
            text: Str::new(),
            ty: FetchType::X64,
            count: 0,
            fixed_string: false,
            offset: 0,
            prog: Program::empty(),
        }
    }

    /// Field name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The fetch argument as written (after `NAME=`), as the kernel shows it.
    pub fn text(&self) -> &str {
        self.text.as_str()
    }

    /// Type of one element.
    pub fn fetch_type(&self) -> FetchType {
        self.ty
    }

    /// Array length (0: not an array).
    pub fn count(&self) -> u32 {
        u32::from(self.count)
    }

    /// For function events: a `char[N]` printed as a string.
    pub fn is_fixed_string(&self) -> bool {
        self.fixed_string
    }

    /// Offset of the field from the start of the argument area.
    pub fn offset(&self) -> u32 {
        self.offset
    }

    /// Size of the field in the fixed part of the record.
    pub fn size(&self) -> u32 {
        self.ty.size().saturating_mul(self.count.max(1).into())
    }

    /// The compiled fetch program.
    pub fn program(&self) -> &Program {
        &self.prog
    }

    /// Text referenced by a [`crate::lang::TextRange`] of this argument.
    pub fn text_range(&self, r: crate::lang::TextRange) -> &[u8] {
        let s = usize::from(r.start);
        text::mid(
            self.text.as_bytes(),
            s,
            s.saturating_add(usize::from(r.len)),
        )
    }

    pub(crate) fn is_same(&self, o: &ProbeArg) -> bool {
        self.name == o.name
            && self.text == o.text
            && self.ty == o.ty
            && self.count == o.count
            && self.fixed_string == o.fixed_string
            && self.offset == o.offset
            && self.prog == o.prog
    }
}

/// A field as the event's `format` file lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    /// Field name.
    pub name: &'a str,
    /// C type of one element (`u64`, `__data_loc char[]`, `unsigned long`).
    pub c_type: &'static str,
    /// Array length (0: not an array); the full type is `c_type[count]`.
    pub count: u32,
    /// Offset from the start of the trace entry (the 8-byte common header
    /// included).
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// `signed:` value.
    pub signed: bool,
    /// True for the probe's own header fields (`__probe_ip`, ...).
    pub header: bool,
}

impl Field<'_> {
    /// Write the full C type (`u8[4]` for arrays).
    pub fn write_type<W: Write>(&self, w: &mut W) -> fmt::Result {
        if self.count > 0 {
            write!(w, "{}[{}]", self.c_type, self.count)
        } else {
            w.write_str(self.c_type)
        }
    }
}

/// Size of the common `struct trace_entry` header on x86_64.
pub const TRACE_ENTRY_SIZE: u32 = 8;
