// SPDX-License-Identifier: GPL-2.0
//! The record's layout: one recorded argument (its field, its text, its
//! fetch program) and the fields the event's `format` file lists, below
//! both the definition that holds them and the view that reads them.

use core::fmt::{self, Write};

use crate::lang::text::{self, Str};
use crate::lang::types::{Bitfield, Derefs, FetchType, Load, Program, Store, TextRange};
use crate::lang::{MAX_ARGSTR_CAP, MAX_EVENT_NAME_LEN};

/// One recorded argument, as the parser's workspace holds it: with room
/// for the longest name, text and program.
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
    pub fn text_range(&self, r: TextRange) -> &[u8] {
        range_of(self.text.as_bytes(), r)
    }

    /// This argument as a compiled definition keeps it, its name and text
    /// at `text_start` of the definition's text and its dereference
    /// offsets at `derefs_start` of the definition's list; `None` when a
    /// place does not fit its field.
    pub(crate) fn compact(&self, text_start: usize, derefs_start: usize) -> Option<CompactArg> {
        let p = &self.prog;
        Some(CompactArg {
            load: p.load,
            store: p.store,
            offset: self.offset,
            deref_ops: p.deref_spaces(),
            text_start: u16::try_from(text_start).ok()?,
            text_len: u16::try_from(self.text.len()).ok()?,
            derefs_start: u16::try_from(derefs_start).ok()?,
            name_len: u8::try_from(self.name.len()).ok()?,
            nderefs: u8::try_from(p.deref_offsets().len()).ok()?,
            ty: self.ty,
            count: self.count,
            prog_count: p.count,
            fixed_string: self.fixed_string,
            bitfield: p.bitfield,
        })
    }
}

/// The bytes of `r` in an argument's text.
fn range_of(text: &[u8], r: TextRange) -> &[u8] {
    let s = usize::from(r.start);
    text::mid(text, s, s.saturating_add(usize::from(r.len)))
}

/// One recorded argument as a compiled definition
/// ([`crate::lang::Compiled`]) keeps it: a [`ProbeArg`] without its
/// fixed-capacity parts. Its name and text (one after the other) are a
/// range of the definition's text, its dereference offsets a range of the
/// definition's list of them, so that an argument takes a few words
/// whatever it is (its size is pinned by a test).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactArg {
    pub(crate) load: Load,
    pub(crate) store: Store,
    pub(crate) offset: u32,
    /// The dereferences' operations ([`Program`]'s packing).
    pub(crate) deref_ops: u32,
    /// Where the name starts in the definition's text; the text follows.
    pub(crate) text_start: u16,
    pub(crate) text_len: u16,
    /// Where the dereference offsets start in the definition's list.
    pub(crate) derefs_start: u16,
    pub(crate) name_len: u8,
    pub(crate) nderefs: u8,
    pub(crate) ty: FetchType,
    pub(crate) count: u8,
    /// The program's array repetition ([`Program::count`]).
    pub(crate) prog_count: u8,
    pub(crate) fixed_string: bool,
    pub(crate) bitfield: Option<Bitfield>,
}

/// The arguments of a compiled definition, with the text and the
/// dereference offsets their ranges are of.
#[derive(Clone, Copy)]
pub(crate) struct CompactArgs<'a> {
    pub(crate) args: &'a [CompactArg],
    pub(crate) text: &'a str,
    pub(crate) derefs: &'a [i64],
}

impl<'a> CompactArgs<'a> {
    pub(crate) fn get(&self, i: usize) -> Option<CompactRef<'a>> {
        Some(CompactRef {
            arg: self.args.get(i)?,
            text: self.text,
            derefs: self.derefs,
        })
    }

    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = CompactRef<'a>> + Clone {
        let (text, derefs) = (self.text, self.derefs);
        self.args
            .iter()
            .map(move |arg| CompactRef { arg, text, derefs })
    }
}

/// A compiled argument with what its ranges are of.
#[derive(Clone, Copy)]
pub(crate) struct CompactRef<'a> {
    arg: &'a CompactArg,
    text: &'a str,
    derefs: &'a [i64],
}

impl<'a> CompactRef<'a> {
    fn name(&self) -> &'a str {
        let start = usize::from(self.arg.text_start);
        let end = start.saturating_add(usize::from(self.arg.name_len));
        self.text.get(start..end).unwrap_or("")
    }

    fn text(&self) -> &'a str {
        let start = usize::from(self.arg.text_start).saturating_add(usize::from(self.arg.name_len));
        let end = start.saturating_add(usize::from(self.arg.text_len));
        self.text.get(start..end).unwrap_or("")
    }
}

/// What the interpreter reads of an argument, in either form: the
/// record's loops are compiled for each form rather than asking which
/// one for every argument of every hit.
pub(crate) trait FetchArg {
    fn fetch_type(&self) -> FetchType;
    /// Offset of the field from the start of the argument area.
    fn offset(&self) -> u32;
    fn load(&self) -> &Load;
    fn store(&self) -> &Store;
    fn bitfield(&self) -> Option<Bitfield>;
    /// The program's array repetition (0: not an array).
    fn prog_count(&self) -> u8;
    fn derefs(&self) -> Derefs<'_>;
    /// Text referenced by a [`TextRange`] of this argument.
    fn text_range(&self, r: TextRange) -> &[u8];
}

impl<A: FetchArg> FetchArg for &A {
    #[inline]
    fn fetch_type(&self) -> FetchType {
        (**self).fetch_type()
    }
    #[inline]
    fn offset(&self) -> u32 {
        (**self).offset()
    }
    #[inline]
    fn load(&self) -> &Load {
        (**self).load()
    }
    #[inline]
    fn store(&self) -> &Store {
        (**self).store()
    }
    #[inline]
    fn bitfield(&self) -> Option<Bitfield> {
        (**self).bitfield()
    }
    #[inline]
    fn prog_count(&self) -> u8 {
        (**self).prog_count()
    }
    #[inline]
    fn derefs(&self) -> Derefs<'_> {
        (**self).derefs()
    }
    fn text_range(&self, r: TextRange) -> &[u8] {
        (**self).text_range(r)
    }
}

impl FetchArg for ProbeArg {
    #[inline]
    fn fetch_type(&self) -> FetchType {
        self.ty
    }
    #[inline]
    fn offset(&self) -> u32 {
        self.offset
    }
    #[inline]
    fn load(&self) -> &Load {
        &self.prog.load
    }
    #[inline]
    fn store(&self) -> &Store {
        &self.prog.store
    }
    #[inline]
    fn bitfield(&self) -> Option<Bitfield> {
        self.prog.bitfield
    }
    #[inline]
    fn prog_count(&self) -> u8 {
        self.prog.count
    }
    #[inline]
    fn derefs(&self) -> Derefs<'_> {
        self.prog.derefs()
    }
    fn text_range(&self, r: TextRange) -> &[u8] {
        ProbeArg::text_range(self, r)
    }
}

impl FetchArg for CompactRef<'_> {
    #[inline]
    fn fetch_type(&self) -> FetchType {
        self.arg.ty
    }
    #[inline]
    fn offset(&self) -> u32 {
        self.arg.offset
    }
    #[inline]
    fn load(&self) -> &Load {
        &self.arg.load
    }
    #[inline]
    fn store(&self) -> &Store {
        &self.arg.store
    }
    #[inline]
    fn bitfield(&self) -> Option<Bitfield> {
        self.arg.bitfield
    }
    #[inline]
    fn prog_count(&self) -> u8 {
        self.arg.prog_count
    }
    #[inline]
    fn derefs(&self) -> Derefs<'_> {
        let start = usize::from(self.arg.derefs_start);
        let end = start.saturating_add(usize::from(self.arg.nderefs));
        Derefs::new(
            self.derefs.get(start..end).unwrap_or(&[]),
            self.arg.deref_ops,
        )
    }
    fn text_range(&self, r: TextRange) -> &[u8] {
        range_of(self.text().as_bytes(), r)
    }
}

/// One recorded argument as a [`crate::lang::DefView`] lends it, from the
/// parser's workspace or from a compiled definition.
#[derive(Clone, Copy)]
pub struct ArgView<'a>(Form<'a>);

#[derive(Clone, Copy)]
enum Form<'a> {
    Workspace(&'a ProbeArg),
    Compact(CompactRef<'a>),
}

impl<'a> From<&'a ProbeArg> for ArgView<'a> {
    fn from(a: &'a ProbeArg) -> Self {
        ArgView(Form::Workspace(a))
    }
}

impl<'a> From<CompactRef<'a>> for ArgView<'a> {
    fn from(a: CompactRef<'a>) -> Self {
        ArgView(Form::Compact(a))
    }
}

impl<'a> ArgView<'a> {
    /// Field name.
    pub fn name(&self) -> &'a str {
        match self.0 {
            Form::Workspace(a) => a.name(),
            Form::Compact(c) => c.name(),
        }
    }

    /// The fetch argument as written (after `NAME=`), as the kernel shows it.
    pub fn text(&self) -> &'a str {
        match self.0 {
            Form::Workspace(a) => a.text(),
            Form::Compact(c) => c.text(),
        }
    }

    /// Type of one element.
    pub fn fetch_type(&self) -> FetchType {
        match self.0 {
            Form::Workspace(a) => a.ty,
            Form::Compact(c) => c.arg.ty,
        }
    }

    /// Array length (0: not an array).
    pub fn count(&self) -> u32 {
        u32::from(match self.0 {
            Form::Workspace(a) => a.count,
            Form::Compact(c) => c.arg.count,
        })
    }

    /// For function events: a `char[N]` printed as a string.
    pub fn is_fixed_string(&self) -> bool {
        match self.0 {
            Form::Workspace(a) => a.fixed_string,
            Form::Compact(c) => c.arg.fixed_string,
        }
    }

    /// Offset of the field from the start of the argument area.
    pub fn offset(&self) -> u32 {
        FetchArg::offset(self)
    }

    /// Size of the field in the fixed part of the record.
    pub fn size(&self) -> u32 {
        self.fetch_type().size().saturating_mul(self.count().max(1))
    }

    /// The same argument: name, text, layout and program.
    pub(crate) fn is_same(&self, o: &ArgView<'_>) -> bool {
        self.name() == o.name()
            && self.text() == o.text()
            && self.fetch_type() == o.fetch_type()
            && self.count() == o.count()
            && self.is_fixed_string() == o.is_fixed_string()
            && self.offset() == o.offset()
            && self.load() == o.load()
            && self.store() == o.store()
            && self.bitfield() == o.bitfield()
            && self.prog_count() == o.prog_count()
            && self.derefs().eq(o.derefs())
    }
}

impl FetchArg for ArgView<'_> {
    fn fetch_type(&self) -> FetchType {
        ArgView::fetch_type(self)
    }
    fn offset(&self) -> u32 {
        match self.0 {
            Form::Workspace(a) => a.offset,
            Form::Compact(c) => c.arg.offset,
        }
    }
    fn load(&self) -> &Load {
        match &self.0 {
            Form::Workspace(a) => &a.prog.load,
            Form::Compact(c) => &c.arg.load,
        }
    }
    fn store(&self) -> &Store {
        match &self.0 {
            Form::Workspace(a) => &a.prog.store,
            Form::Compact(c) => &c.arg.store,
        }
    }
    fn bitfield(&self) -> Option<Bitfield> {
        match self.0 {
            Form::Workspace(a) => a.prog.bitfield,
            Form::Compact(c) => c.arg.bitfield,
        }
    }
    fn prog_count(&self) -> u8 {
        match self.0 {
            Form::Workspace(a) => a.prog.count,
            Form::Compact(c) => c.arg.prog_count,
        }
    }
    fn derefs(&self) -> Derefs<'_> {
        match &self.0 {
            Form::Workspace(a) => a.prog.derefs(),
            Form::Compact(c) => FetchArg::derefs(c),
        }
    }
    fn text_range(&self, r: TextRange) -> &[u8] {
        range_of(self.text().as_bytes(), r)
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
