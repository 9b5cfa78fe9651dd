// SPDX-License-Identifier: GPL-2.0
//! The parser's workspace: a [`Definition`] of fixed capacity that one
//! line is parsed and compiled into. Everything that reads a definition
//! works on a [`DefView`] of it (src/lang/view.rs), so that the compact
//! [`crate::lang::Compiled`] form reads the same way.

use crate::lang::kind::ProbeKind;
use crate::lang::record::ProbeArg;
use crate::lang::text::Str;
use crate::lang::types::{Load, Store};
use crate::lang::view::{
    Args, DefView, Names, RecordPlan, Scalars, Step, Steps, WordSource, MAX_STEPS,
};
use crate::lang::{MAX_EVENT_NAME_LEN, MAX_FUNCTION_TEXT, MAX_TRACE_ARGS, SYMBOL_CAP};

/// What a line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    /// Nothing (blank line or comment).
    Nothing,
    /// The definition was parsed into the output [`Definition`].
    Define,
    /// Remove events.
    Remove {
        /// Group to match (`None`: any group).
        group: Option<&'a str>,
        /// Event to match (empty: every event of the group).
        event: &'a str,
        /// The rest of the line (probe place and arguments that must match,
        /// see [`crate::lang::DefView::matches_removal`]).
        args: &'a [u8],
    },
}

/// A dynamic event definition: place, names, arguments and their programs,
/// with room for the largest legal line.
///
/// It holds no pointers and is large (tens of KiB): allocate it once (it is
/// `const`-constructible with [`Definition::new`]), parse into it, and keep
/// what a successful parse made as a [`crate::lang::Compiled`] sized to it.
///
/// Its [`Scalars`] (kind, place, sizes) read and write as its own fields.
pub struct Definition {
    scalars: Scalars,
    pub(crate) group: Str<MAX_EVENT_NAME_LEN>,
    pub(crate) event: Str<MAX_EVENT_NAME_LEN>,
    pub(crate) symbol: Str<SYMBOL_CAP>,
    pub(crate) args: [ProbeArg; MAX_TRACE_ARGS],
    pub(crate) nargs: usize,
    pub(crate) entry_args: [u16; MAX_TRACE_ARGS],
    pub(crate) n_entry: usize,
    /// A function event's normalized text; an event probe's filter.
    pub(crate) fe_text: Str<MAX_FUNCTION_TEXT>,
}

impl core::ops::Deref for Definition {
    type Target = Scalars;

    fn deref(&self) -> &Scalars {
        &self.scalars
    }
}

impl core::ops::DerefMut for Definition {
    fn deref_mut(&mut self) -> &mut Scalars {
        &mut self.scalars
    }
}

impl Default for Definition {
    fn default() -> Self {
        Self::new()
    }
}

impl Definition {
    /// An empty definition.
    pub const fn new() -> Definition {
        Definition {
            scalars: Scalars::EMPTY,
            group: Str::new(),
            event: Str::new(),
            symbol: Str::new(),
            args: [ProbeArg::new(); MAX_TRACE_ARGS],
            nargs: 0,
            entry_args: [0; MAX_TRACE_ARGS],
            n_entry: 0,
            fe_text: Str::new(),
        }
    }

    /// Reset to the empty state in place.
    pub fn reset(&mut self) {
        self.scalars = Scalars::EMPTY;
        self.group.clear();
        self.event.clear();
        self.symbol.clear();
        for a in self.args.iter_mut().take(self.nargs) {
            *a = ProbeArg::new();
        }
        self.nargs = 0;
        self.n_entry = 0;
        self.fe_text.clear();
    }

    /// The definition as every reader sees it: layout, format, record,
    /// print and listing.
    pub fn view(&self) -> DefView<'_> {
        let names = Names {
            group: self.group.as_str(),
            event: self.event.as_str(),
            symbol: self.symbol.as_str(),
            fe_text: self.fe_text.as_str(),
        };
        DefView::new(
            self.scalars(),
            names,
            Args::Workspace(self.args()),
            self.entry_args(),
        )
    }

    /// The scalars a view and the compiled form keep.
    pub(crate) fn scalars(&self) -> Scalars {
        Scalars {
            plan: record_plan(self.args(), self.scalars.size),
            ..self.scalars
        }
    }

    /// Kind of probe.
    pub fn kind(&self) -> ProbeKind {
        self.kind
    }

    /// Group (system) name.
    pub fn group(&self) -> &str {
        self.group.as_str()
    }

    /// Event name.
    pub fn event(&self) -> &str {
        self.event.as_str()
    }

    /// Probed symbol without module prefix (`None` for address probes).
    pub fn symbol(&self) -> Option<&str> {
        self.view().symbol()
    }

    /// Module prefix of `MOD:SYM` ([`DefView::module`]).
    pub fn module(&self) -> Option<&str> {
        self.view().module()
    }

    /// True for return probes.
    pub fn is_return(&self) -> bool {
        self.kind.is_return()
    }

    /// The recorded arguments.
    pub fn args(&self) -> &[ProbeArg] {
        self.args.get(..self.nargs).unwrap_or(&[])
    }

    /// Function parameters a return probe saves at entry
    /// ([`DefView::entry_args`]).
    pub fn entry_args(&self) -> &[u16] {
        self.entry_args.get(..self.n_entry).unwrap_or(&[])
    }

    pub(crate) fn arg_mut(&mut self, i: usize) -> Option<&mut ProbeArg> {
        self.args.get_mut(i)
    }
}

/// How records of `args` (an argument area of `size` bytes) are written:
/// as plain values ([`RecordPlan::Values`]), by the interpreter over an
/// area it fills ([`RecordPlan::Filled`]), or by the interpreter over an
/// area cleared first.
fn record_plan(args: &[ProbeArg], size: u32) -> RecordPlan {
    let mut covered = 0u32;
    let mut all_plain = true;
    for a in args {
        let p = &a.prog;
        let plain_load = matches!(
            p.load,
            Load::Reg(_)
                | Load::Stack(_)
                | Load::StackPointer
                | Load::RetVal
                | Load::Arg(_)
                | Load::EntryData(_)
                | Load::Imm(_)
                | Load::Current
                | Load::Symbol { .. }
        );
        let plain = plain_load
            && p.derefs().len() == 0
            && p.store == Store::Raw
            && p.bitfield.is_none()
            && p.count == 0
            && !a.ty.is_string()
            && matches!(a.ty.size(), 1 | 2 | 4 | 8);
        if !plain && !fills_slot(a) {
            return RecordPlan::General;
        }
        all_plain &= plain;
        covered = covered.saturating_add(a.size());
    }
    // Arguments never overlap: covering as many bytes as the area has,
    // they cover all of it (the layout has no padding, as the kernel's).
    match (covered == size, all_plain) {
        (true, true) => steps_of(args).map_or(RecordPlan::Values, RecordPlan::Steps),
        (true, false) => steps_of(args).map_or(RecordPlan::Filled, RecordPlan::Steps),
        (false, _) => RecordPlan::General,
    }
}

/// The steps of a record whose arguments fill the argument area in order,
/// each an 8-byte word from the registers or entry data, or a string at
/// such a word plus an offset; at most [`MAX_STEPS`].
fn steps_of(args: &[ProbeArg]) -> Option<Steps> {
    let mut steps = Steps {
        len: u8::try_from(args.len()).ok()?,
        steps: [Step::Word(WordSource::RetVal); MAX_STEPS],
    };
    let mut at = 0u32;
    for (i, a) in args.iter().enumerate() {
        let p = &a.prog;
        let source = match p.load {
            Load::Reg(r) => WordSource::Reg(r),
            Load::Arg(n) => WordSource::Arg(u8::try_from(n).ok()?),
            Load::RetVal => WordSource::RetVal,
            Load::EntryData(s) => WordSource::EntryData(u8::try_from(s).ok()?),
            _ => return None,
        };
        if a.offset != at || p.derefs().len() != 0 || p.bitfield.is_some() || p.count != 0 {
            return None;
        }
        let (step, size) = match p.store {
            Store::Raw if !a.ty.is_string() && a.ty.size() == 8 => (Step::Word(source), 8),
            Store::String { space, offset } if a.ty.is_string() && a.size() == 4 => (
                Step::Str {
                    base: source,
                    space,
                    offset: i16::try_from(offset).ok()?,
                },
                4,
            ),
            _ => return None,
        };
        *steps.steps.get_mut(i)? = step;
        at += size;
    }
    Some(steps)
}

/// Whether the interpreter writes all of a string argument's slot,
/// whatever its read finds: a string read or its dereference that faults
/// is recorded empty, with its `__data_loc` word written all the same.
fn fills_slot(a: &ProbeArg) -> bool {
    let p = &a.prog;
    if !a.ty.is_string() || a.ty.size() != 4 {
        return false;
    }
    match (p.load, p.store) {
        (Load::None, _) => false,
        // One word each, written once.
        (Load::Comm | Load::ImmString(_), _) | (_, Store::SymStr { .. }) => p.count <= 1,
        // A word per element, on every path.
        (_, Store::String { .. }) => true,
        _ => false,
    }
}
