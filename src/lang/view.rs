// SPDX-License-Identifier: GPL-2.0
//! A definition as its readers see it: names, place, arguments, record
//! layout, `format` fields and print fmt. The parser's workspace
//! ([`crate::lang::Definition`]) and the compact compiled form
//! ([`crate::lang::Compiled`]) both lend one out, so layout, record,
//! print and listing are written once.

use core::fmt::{self, Write};

use crate::lang::kind::ProbeKind;
use crate::lang::record::{ArgView, CompactArgs, Field, ProbeArg, TRACE_ENTRY_SIZE};
use crate::lang::types::{FetchType, Reg, Space};
use crate::lang::watch::Watch;

/// What a definition is besides its names, arguments and saved
/// parameters: a few words, kept by the compiled form and copied into
/// every view (whose fields they read as its own).
#[derive(Clone, Copy)]
pub struct Scalars {
    pub(crate) kind: ProbeKind,
    /// Length of the `MOD:` prefix, colon included (0: no module): at
    /// most [`crate::lang::SYMBOL_CAP`].
    pub(crate) module_len: u16,
    pub(crate) has_symbol: bool,
    /// An address probe's address, a watchpoint's watched address, a
    /// uprobe's reference counter (`(REF_CTR_OFFSET)`, an offset in its
    /// file; 0: none).
    pub(crate) addr: u64,
    /// What the listing shows for an address probe (the kernel's `0x%p`).
    pub(crate) listed_addr: u64,
    pub(crate) offset: u64,
    pub(crate) maxactive: u32,
    /// A watchpoint's access and length (the default for other kinds).
    pub(crate) watch: Watch,
    /// Size of the fixed argument area.
    pub(crate) size: u32,
    /// How a hit writes the record (decided once, from the arguments).
    pub(crate) plan: RecordPlan,
}

/// How [`DefView::record`] writes a definition's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordPlan {
    /// The interpreter, for every kind of argument.
    General,
    /// Every argument is a plain value (a register, a parameter, `$stackN`,
    /// `$retval`, an immediate or a symbol's address, stored as is in 1, 2,
    /// 4 or 8 bytes) and together they fill the argument area: the values
    /// are written in place, with no dereference, string or bitfield to
    /// consider and no byte to clear.
    Values,
    /// Every argument is an 8-byte word from a register, a parameter,
    /// `$retval` or an entry-data slot, or a string at such a word plus an
    /// offset, in order: the record is written step by step, with no
    /// argument looked at.
    Steps(Steps),
    /// Every argument writes all of its slot on every path (plain values,
    /// and strings, whose `__data_loc` words are written also when their
    /// read faults), and together they fill the argument area: the
    /// interpreter runs without clearing it first.
    Filled,
}

/// The most steps a [`RecordPlan::Steps`] record has.
pub(crate) const MAX_STEPS: usize = 6;

/// The steps of a [`RecordPlan::Steps`] record, in the order of the
/// argument area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Steps {
    pub(crate) len: u8,
    pub(crate) steps: [Step; MAX_STEPS],
}

impl Steps {
    /// The record's steps.
    pub(crate) fn steps(&self) -> &[Step] {
        self.steps.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

/// One argument of a [`RecordPlan::Steps`] record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// An 8-byte word.
    Word(WordSource),
    /// The string at the word plus `offset`, read in `space`: its
    /// `__data_loc` word, and its bytes in the dynamic area. A 16-bit
    /// offset keeps a step in 6 bytes (a plan of steps in 38, a compiled
    /// definition in a 128-byte object); a string further from its word
    /// takes another plan.
    Str {
        base: WordSource,
        space: Space,
        offset: i16,
    },
}

/// Where a step's word comes from: the loads of
/// [`Load`](crate::lang::types::Load) that need nothing but the hit's
/// registers and entry data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordSource {
    /// A `pt_regs` register.
    Reg(Reg),
    /// Parameter N (0-based).
    Arg(u8),
    /// The return value.
    RetVal,
    /// A return probe's entry-data slot.
    EntryData(u8),
}

impl Scalars {
    /// Those of an empty definition.
    pub(crate) const EMPTY: Scalars = Scalars {
        kind: ProbeKind::Kprobe,
        module_len: 0,
        has_symbol: false,
        addr: 0,
        listed_addr: 0,
        offset: 0,
        maxactive: 0,
        watch: Watch::DEFAULT,
        size: 0,
        plan: RecordPlan::General,
    };

    /// Size of the probe's header after the common `trace_entry`
    /// (`__probe_ip`: 8; `__probe_func`+`__probe_ret_ip` or
    /// `__parent_ip`+`__ip`: 16).
    pub fn header_size(&self) -> u32 {
        self.kind.header_size()
    }

    /// Offset of the first argument from the start of the trace entry.
    pub fn args_offset(&self) -> u32 {
        TRACE_ENTRY_SIZE.saturating_add(self.header_size())
    }

    /// Size of the fixed argument area (the kernel's `tp->size`).
    pub fn args_size(&self) -> u32 {
        self.size
    }

    /// Size of the fixed part of a record: trace entry, header, arguments.
    pub fn fixed_size(&self) -> u32 {
        self.args_offset().saturating_add(self.size)
    }

    /// Longest string an argument records, NUL included: function events
    /// keep the 2018 interface's limit, probe events the kernel's.
    pub fn string_max(&self) -> usize {
        if self.kind.is_function_event() {
            crate::lang::MAX_FUNCTION_STRING
        } else {
            crate::lang::MAX_STRING_SIZE
        }
    }
}

/// The names a definition was written with.
#[derive(Clone, Copy)]
pub(crate) struct Names<'a> {
    pub(crate) group: &'a str,
    pub(crate) event: &'a str,
    /// The place as written: `MOD:SYM`, `SYM`, or empty for an address.
    pub(crate) symbol: &'a str,
    /// A function event's normalized text (its listing); an event
    /// probe's filter.
    pub(crate) fe_text: &'a str,
}

impl Names<'_> {
    /// No names: what a probe handler's view carries.
    pub(crate) const NONE: Names<'static> = Names {
        group: "",
        event: "",
        symbol: "",
        fe_text: "",
    };
}

/// A definition's arguments in the form it keeps them.
#[derive(Clone, Copy)]
pub(crate) enum Args<'a> {
    /// The parser's workspace's.
    Workspace(&'a [ProbeArg]),
    /// A compiled definition's.
    Compact(CompactArgs<'a>),
}

impl<'a> Args<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Args::Workspace(a) => a.len(),
            Args::Compact(c) => c.args.len(),
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<ArgView<'a>> {
        match self {
            Args::Workspace(a) => a.get(i).map(ArgView::from),
            Args::Compact(c) => c.get(i).map(ArgView::from),
        }
    }
}

/// The arguments of a [`DefView`], in order.
#[derive(Clone)]
pub struct ArgViews<'a> {
    args: Args<'a>,
    next: usize,
}

impl<'a> Iterator for ArgViews<'a> {
    type Item = ArgView<'a>;

    fn next(&mut self) -> Option<ArgView<'a>> {
        let a = self.args.get(self.next)?;
        self.next = self.next.saturating_add(1);
        Some(a)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.args.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for ArgViews<'_> {}

/// A borrowed definition. Cheap to make and to copy (a few words).
#[derive(Clone, Copy)]
pub struct DefView<'a> {
    scalars: Scalars,
    pub(crate) group: &'a str,
    pub(crate) event: &'a str,
    pub(crate) symbol: &'a str,
    pub(crate) args: Args<'a>,
    pub(crate) entry_args: &'a [u16],
    pub(crate) fe_text: &'a str,
}

impl core::ops::Deref for DefView<'_> {
    type Target = Scalars;

    fn deref(&self) -> &Scalars {
        &self.scalars
    }
}

impl<'a> DefView<'a> {
    pub(crate) fn new(
        scalars: Scalars,
        names: Names<'a>,
        args: Args<'a>,
        entry_args: &'a [u16],
    ) -> Self {
        DefView {
            scalars,
            group: names.group,
            event: names.event,
            symbol: names.symbol,
            args,
            entry_args,
            fe_text: names.fe_text,
        }
    }

    /// Kind of probe.
    pub fn kind(&self) -> ProbeKind {
        self.kind
    }

    /// Group (system) name.
    pub fn group(&self) -> &'a str {
        self.group
    }

    /// Event name.
    pub fn event(&self) -> &'a str {
        self.event
    }

    /// An event probe's filter of its source event's records, as the
    /// kernel's filter parser takes it; empty for none and for the other
    /// kinds.
    pub fn filter(&self) -> &'a str {
        if self.kind == ProbeKind::Eprobe {
            self.fe_text
        } else {
            ""
        }
    }

    /// Probed symbol without module prefix (`None` for address probes).
    pub fn symbol(&self) -> Option<&'a str> {
        if !self.has_symbol {
            return None;
        }
        self.symbol.get(usize::from(self.module_len)..)
    }

    /// Module prefix of `MOD:SYM` (empty for `:SYM`, which the kernel
    /// takes for a symbol of a module that is not loaded).
    pub fn module(&self) -> Option<&'a str> {
        let len = self.module_len.checked_sub(1)?;
        self.symbol.get(..usize::from(len))
    }

    /// The symbol as written (`MOD:SYM` or `SYM`).
    pub fn full_symbol(&self) -> Option<&'a str> {
        if self.has_symbol {
            Some(self.symbol)
        } else {
            None
        }
    }

    /// A uprobe's file, its offset in it and its reference counter's
    /// offset (0: none), as written; a user function event's file and
    /// offset (`None` for the other kinds).
    pub fn uprobe_place(&self) -> Option<(&'a str, u64, u64)> {
        self.kind
            .is_user()
            .then_some((self.symbol, self.offset, self.addr))
    }

    /// A uprobe's place by name, `SYMBOL[+OFFS]` as written (its offset
    /// is [`Self::uprobe_place`]'s); `None` for a place by offset and the
    /// other kinds.
    pub fn uprobe_function(&self) -> Option<&'a str> {
        (self.kind.is_uprobe() && !self.fe_text.is_empty()).then_some(self.fe_text)
    }

    /// Probe address for `p ADDR` probes.
    pub fn address(&self) -> Option<u64> {
        if self.has_symbol || self.kind.is_uprobe() {
            None
        } else {
            Some(self.addr)
        }
    }

    /// Offset from the symbol (`SYM+OFFS`).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// A watchpoint's watched address (symbol and offset resolved), its
    /// access and its length; `None` for the other kinds.
    pub fn watched(&self) -> Option<(u64, Watch)> {
        if self.kind.is_watchpoint() {
            Some((self.addr, self.watch))
        } else {
            None
        }
    }

    /// True for return probes.
    pub fn is_return(&self) -> bool {
        self.kind.is_return()
    }

    /// `r[MAXACTIVE]`; without one, the default the kernel gives a
    /// kretprobe it registers ([`crate::lang::Resolver::default_maxactive`]),
    /// or 0 when the place does not resolve yet.
    pub fn maxactive(&self) -> u32 {
        self.maxactive
    }

    /// The recorded arguments.
    pub fn args(&self) -> ArgViews<'a> {
        ArgViews {
            args: self.args,
            next: 0,
        }
    }

    /// Recorded argument `i`.
    pub fn arg(&self, i: usize) -> Option<ArgView<'a>> {
        self.args.get(i)
    }

    /// Function parameters (0-based) a return probe must save at entry, in
    /// entry-data slot order: slot `i` holds parameter `entry_args()[i]`.
    pub fn entry_args(&self) -> &'a [u16] {
        self.entry_args
    }

    /// Number of string arguments (each may add up to 4096 bytes).
    pub fn nr_dynamic(&self) -> u32 {
        self.args()
            .filter(|a| a.fetch_type().is_string())
            .map(|a| a.count().max(1))
            .fold(0u32, |x, y| x.saturating_add(y))
    }

    /// A record never exceeds this many bytes.
    pub fn max_record_size(&self) -> u32 {
        self.fixed_size()
            .saturating_add(self.nr_dynamic().saturating_mul(self.string_max() as u32))
    }

    /// Number of fields in the `format` file (header fields included).
    pub fn nr_fields(&self) -> usize {
        self.args
            .len()
            .saturating_add(self.kind.info().header.len())
    }

    /// Field `i` of the `format` file (header fields first).
    pub fn field(&self, i: usize) -> Option<Field<'a>> {
        let hdr = |name: &'static str, off: u32| Field {
            name,
            c_type: "unsigned long",
            count: 0,
            offset: off,
            size: 8,
            signed: false,
            header: true,
        };
        let header = self.kind.info().header;
        let nh = header.len();
        if let Some(&name) = header.get(i) {
            let offset = TRACE_ENTRY_SIZE.saturating_add(8 * i as u32);
            return Some(hdr(name, offset));
        }
        let a = self.args.get(i.checked_sub(nh)?)?;
        let ty = a.fetch_type();
        let c_type = if self.kind.is_function_event() && ty == FetchType::Symbol {
            "unsigned long"
        } else {
            ty.c_type()
        };
        Some(Field {
            name: a.name(),
            c_type,
            count: a.count(),
            offset: self.args_offset().saturating_add(a.offset()),
            size: a.size(),
            signed: ty.is_signed(),
            header: false,
        })
    }

    /// Iterate over the `format` fields.
    pub fn fields(&self) -> impl Iterator<Item = Field<'a>> + '_ {
        (0..self.nr_fields()).filter_map(move |i| self.field(i))
    }

    /// The element count `format` declares for `field`: function events
    /// declare it as the kernel's own fixed arrays do (`char name[64]`),
    /// probe events leave it out as the kernel's probe events do
    /// (`u8 arr[]`, the size still says how many).
    pub fn declared_len(&self, field: &Field<'_>) -> u32 {
        if self.kind.is_function_event() && !field.header {
            field.count
        } else {
            0
        }
    }

    /// Write the `print fmt` string exactly as the kernel builds it (with the
    /// surrounding quotes and the `REC->` argument list).
    pub fn print_fmt<W: Write>(&self, w: &mut W) -> fmt::Result {
        if self.kind.is_function_event() {
            return self.function_print_fmt(w);
        }
        let (fmt, args) = if self.kind.is_event_probe() {
            ("", "")
        } else if self.kind.is_return() {
            ("(%lx <- %lx)", ", REC->__probe_func, REC->__probe_ret_ip")
        } else {
            ("(%lx)", ", REC->__probe_ip")
        };
        write!(w, "\"{}", fmt)?;
        for a in self.args() {
            write!(w, " {}=", a.name())?;
            let fmt = a.fetch_type().probe_fmt();
            if a.count() > 0 {
                write!(w, "{{{}", fmt)?;
                for _ in 1..a.count() {
                    write!(w, ",{}", fmt)?;
                }
                w.write_str("}")?;
            } else {
                w.write_str(fmt)?;
            }
        }
        write!(w, "\"{}", args)?;
        self.write_rec_args(w)
    }

    /// The print fmt's argument list: `, REC->name` per value, `[j]` per
    /// array element, `__get_str()` for strings (a `char[N]` is one value).
    fn write_rec_args<W: Write>(&self, w: &mut W) -> fmt::Result {
        for a in self.args() {
            let count = if a.is_fixed_string() { 0 } else { a.count() };
            let string = a.fetch_type().is_string();
            for j in 0..count {
                if string {
                    write!(w, ", __get_str({}[{}])", a.name(), j)?;
                } else {
                    write!(w, ", REC->{}[{}]", a.name(), j)?;
                }
            }
            if count > 0 {
                continue;
            }
            if string {
                write!(w, ", __get_str({})", a.name())?;
            } else {
                write!(w, ", REC->{}", a.name())?;
            }
        }
        Ok(())
    }

    /// A function event's arguments as both its print fmt and its trace
    /// lines lay them out: `a=.., b=..)` at entry, `a=..) ret=..` at exit
    /// (the last argument is the return value). `value` writes what
    /// follows each `name=`.
    pub(crate) fn write_function_args<W: Write>(
        &self,
        w: &mut W,
        mut value: impl FnMut(&mut W, ArgView<'a>) -> fmt::Result,
    ) -> fmt::Result {
        let n = self.args.len();
        let nparams = if self.kind.is_return() {
            n.saturating_sub(1)
        } else {
            n
        };
        for (i, a) in self.args().enumerate() {
            if i == nparams {
                w.write_str(") ")?;
            } else if i > 0 {
                w.write_str(", ")?;
            }
            write!(w, "{}=", a.name())?;
            value(w, a)?;
        }
        if nparams == n {
            w.write_str(")")?;
        }
        Ok(())
    }

    fn function_print_fmt<W: Write>(&self, w: &mut W) -> fmt::Result {
        let exit = self.kind.is_return();
        let (head, tail_args) = if exit {
            ("\"%pS <- %pS(", ", REC->__parent_ip, REC->__ip")
        } else {
            ("\"%pS->%pS(", ", REC->__ip, REC->__parent_ip")
        };
        w.write_str(head)?;
        self.write_function_args(w, |w, a| {
            let fmt = a.fetch_type().function_fmt();
            if a.count() > 0 && !a.is_fixed_string() {
                for j in 0..a.count() {
                    if j > 0 {
                        w.write_str(",")?;
                    }
                    w.write_str(fmt)?;
                }
                Ok(())
            } else if a.is_fixed_string() {
                w.write_str("%s")
            } else {
                w.write_str(fmt)
            }
        })?;
        w.write_str("\"")?;
        w.write_str(tail_args)?;
        self.write_rec_args(w)
    }
}
