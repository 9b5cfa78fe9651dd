// SPDX-License-Identifier: GPL-2.0
//! The parsed and compiled definition, its record layout, `format` fields,
//! print fmt and canonical text.

use core::fmt::{self, Write};

use crate::lang::fixed::{self, Str};
use crate::lang::types::{FetchType, Load, Program};
use crate::lang::{
    MAX_ARGSTR_LEN, MAX_EVENT_NAME_LEN, MAX_FUNCTION_TEXT, MAX_TRACE_ARGS, SYMBOL_CAP,
};

/// Which control file a line was written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// `kprobe_events`: `p`, `r` and `-` lines.
    KprobeEvents,
    /// `dynamic_events`: adds `f`, `t` and `!`.
    DynamicEvents,
    /// `function_events`: `FUNC(ARGS)` lines.
    FunctionEvents,
}

/// What kind of probe a definition creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// kprobe (`p`).
    Kprobe,
    /// kretprobe (`r`, or `p ...%return`).
    Kretprobe,
    /// fprobe at function entry (`f SYM`).
    FprobeEntry,
    /// fprobe at function exit (`f SYM%return`).
    FprobeExit,
    /// tracepoint probe (`t TP`).
    Tracepoint,
    /// function event at entry (`FUNC(ARGS)`).
    FunctionEntry,
    /// function event at exit (`FUNC(ARGS) -> TYPE NAME`).
    FunctionExit,
}

impl ProbeKind {
    /// True for the exit/return kinds.
    pub fn is_return(self) -> bool {
        matches!(
            self,
            ProbeKind::Kretprobe | ProbeKind::FprobeExit | ProbeKind::FunctionExit
        )
    }

    /// True for function events.
    pub fn is_function_event(self) -> bool {
        matches!(self, ProbeKind::FunctionEntry | ProbeKind::FunctionExit)
    }
}

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
        /// see [`Definition::matches_removal`]).
        args: &'a [u8],
        /// True when only kprobe definitions may be removed (a `-` line in
        /// `kprobe_events`).
        kprobes_only: bool,
    },
}

/// One recorded argument.
#[derive(Clone, Copy)]
pub struct ProbeArg {
    pub(crate) name: Str<MAX_EVENT_NAME_LEN>,
    pub(crate) text: Str<{ MAX_ARGSTR_LEN + 1 }>,
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
        fixed::mid(
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

/// A dynamic event definition: place, names, arguments and their programs.
///
/// It holds no pointers and is large (tens of KiB): allocate it once (it is
/// `const`-constructible with [`Definition::new`]) and parse into it.
pub struct Definition {
    pub(crate) kind: ProbeKind,
    pub(crate) group: Str<MAX_EVENT_NAME_LEN>,
    pub(crate) event: Str<MAX_EVENT_NAME_LEN>,
    pub(crate) symbol: Str<SYMBOL_CAP>,
    /// Length of the `MOD:` prefix, colon included (0: no module).
    pub(crate) module_len: usize,
    pub(crate) has_symbol: bool,
    pub(crate) addr: u64,
    /// What the listing shows for an address probe (the kernel's `0x%p`).
    pub(crate) listed_addr: u64,
    pub(crate) offset: u64,
    pub(crate) maxactive: u32,
    pub(crate) args: [ProbeArg; MAX_TRACE_ARGS],
    pub(crate) nargs: usize,
    pub(crate) size: u32,
    pub(crate) entry_args: [u16; MAX_TRACE_ARGS],
    pub(crate) n_entry: usize,
    pub(crate) fe_text: Str<MAX_FUNCTION_TEXT>,
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
            kind: ProbeKind::Kprobe,
            group: Str::new(),
            event: Str::new(),
            symbol: Str::new(),
            module_len: 0,
            has_symbol: false,
            addr: 0,
            listed_addr: 0,
            offset: 0,
            maxactive: 0,
            args: [ProbeArg::new(); MAX_TRACE_ARGS],
            nargs: 0,
            size: 0,
            entry_args: [0; MAX_TRACE_ARGS],
            n_entry: 0,
            fe_text: Str::new(),
        }
    }

    /// Reset to the empty state in place.
    pub fn reset(&mut self) {
        self.kind = ProbeKind::Kprobe;
        self.group.clear();
        self.event.clear();
        self.symbol.clear();
        self.module_len = 0;
        self.has_symbol = false;
        self.addr = 0;
        self.listed_addr = 0;
        self.offset = 0;
        self.maxactive = 0;
        for a in self.args.iter_mut().take(self.nargs) {
            *a = ProbeArg::new();
        }
        self.nargs = 0;
        self.size = 0;
        self.n_entry = 0;
        self.fe_text.clear();
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
        if !self.has_symbol {
            return None;
        }
        self.symbol.as_str().get(self.module_len..)
    }

    /// Module prefix of `MOD:SYM` (empty for `:SYM`, which the kernel
    /// takes for a symbol of a module that is not loaded).
    pub fn module(&self) -> Option<&str> {
        let len = self.module_len.checked_sub(1)?;
        self.symbol.as_str().get(..len)
    }

    /// The symbol as written (`MOD:SYM` or `SYM`).
    pub fn full_symbol(&self) -> Option<&str> {
        if self.has_symbol {
            Some(self.symbol.as_str())
        } else {
            None
        }
    }

    /// Probe address for `p ADDR` probes.
    pub fn address(&self) -> Option<u64> {
        if self.has_symbol {
            None
        } else {
            Some(self.addr)
        }
    }

    /// Offset from the symbol (`SYM+OFFS`).
    pub fn offset(&self) -> u64 {
        self.offset
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
    pub fn args(&self) -> &[ProbeArg] {
        self.args.get(..self.nargs).unwrap_or(&[])
    }

    /// Function parameters (0-based) a return probe must save at entry, in
    /// entry-data slot order: slot `i` holds parameter `entry_args()[i]`.
    pub fn entry_args(&self) -> &[u16] {
        self.entry_args.get(..self.n_entry).unwrap_or(&[])
    }

    /// Size of the probe's header after the common `trace_entry`
    /// (`__probe_ip`: 8; `__probe_func`+`__probe_ret_ip` or
    /// `__parent_ip`+`__ip`: 16).
    pub fn header_size(&self) -> u32 {
        match self.kind {
            ProbeKind::Kprobe | ProbeKind::FprobeEntry | ProbeKind::Tracepoint => 8,
            _ => 16,
        }
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

    /// Number of string arguments (each may add up to 4096 bytes).
    pub fn nr_dynamic(&self) -> u32 {
        self.args()
            .iter()
            .filter(|a| a.ty.is_string())
            .map(|a| u32::from(a.count.max(1)))
            .fold(0u32, |x, y| x.saturating_add(y))
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

    /// A record never exceeds this many bytes.
    pub fn max_record_size(&self) -> u32 {
        self.fixed_size()
            .saturating_add(self.nr_dynamic().saturating_mul(self.string_max() as u32))
    }

    /// Number of fields in the `format` file (header fields included).
    pub fn nr_fields(&self) -> usize {
        let h = if self.header_size() == 8 { 1 } else { 2 };
        self.nargs.saturating_add(h)
    }

    /// Field `i` of the `format` file (header fields first).
    pub fn field(&self, i: usize) -> Option<Field<'_>> {
        let hdr = |name: &'static str, off: u32| Field {
            name,
            c_type: "unsigned long",
            count: 0,
            offset: off,
            size: 8,
            signed: false,
            header: true,
        };
        let (h0, h1) = match self.kind {
            ProbeKind::Kprobe | ProbeKind::FprobeEntry | ProbeKind::Tracepoint => {
                ("__probe_ip", "")
            }
            ProbeKind::Kretprobe | ProbeKind::FprobeExit => ("__probe_func", "__probe_ret_ip"),
            ProbeKind::FunctionEntry | ProbeKind::FunctionExit => ("__parent_ip", "__ip"),
        };
        let nh = if h1.is_empty() { 1 } else { 2 };
        if i == 0 {
            return Some(hdr(h0, 8));
        }
        if i == 1 && nh == 2 {
            return Some(hdr(h1, 16));
        }
        let a = self.args.get(i.checked_sub(nh)?)?;
        if a.nargs_guard(self.nargs, i.checked_sub(nh)?) {
            return None;
        }
        let c_type = if self.kind.is_function_event() && a.ty == FetchType::Symbol {
            "unsigned long"
        } else {
            a.ty.c_type()
        };
        Some(Field {
            name: a.name(),
            c_type,
            count: a.count(),
            offset: self.args_offset().saturating_add(a.offset),
            size: a.size(),
            signed: a.ty.is_signed(),
            header: false,
        })
    }

    /// Iterate over the `format` fields.
    pub fn fields(&self) -> impl Iterator<Item = Field<'_>> + '_ {
        (0..self.nr_fields()).filter_map(move |i| self.field(i))
    }

    /// Write the `print fmt` string exactly as the kernel builds it (with the
    /// surrounding quotes and the `REC->` argument list).
    pub fn print_fmt<W: Write>(&self, w: &mut W) -> fmt::Result {
        if self.kind.is_function_event() {
            return self.function_print_fmt(w);
        }
        let (fmt, args) = match self.kind {
            ProbeKind::Kretprobe | ProbeKind::FprobeExit => {
                ("(%lx <- %lx)", ", REC->__probe_func, REC->__probe_ret_ip")
            }
            _ => ("(%lx)", ", REC->__probe_ip"),
        };
        write!(w, "\"{}", fmt)?;
        for a in self.args() {
            write!(w, " {}=", a.name())?;
            if a.count > 0 {
                write!(w, "{{{}", a.ty.probe_fmt())?;
                for _ in 1..a.count {
                    write!(w, ",{}", a.ty.probe_fmt())?;
                }
                w.write_str("}")?;
            } else {
                w.write_str(a.ty.probe_fmt())?;
            }
        }
        write!(w, "\"{}", args)?;
        self.write_rec_args(w)
    }

    /// The print fmt's argument list: `, REC->name` per value, `[j]` per
    /// array element, `__get_str()` for strings (a `char[N]` is one value).
    fn write_rec_args<W: Write>(&self, w: &mut W) -> fmt::Result {
        for a in self.args() {
            let count = if a.fixed_string { 0 } else { a.count };
            for j in 0..count {
                if a.ty.is_string() {
                    write!(w, ", __get_str({}[{}])", a.name(), j)?;
                } else {
                    write!(w, ", REC->{}[{}]", a.name(), j)?;
                }
            }
            if count > 0 {
                continue;
            }
            if a.ty.is_string() {
                write!(w, ", __get_str({})", a.name())?;
            } else {
                write!(w, ", REC->{}", a.name())?;
            }
        }
        Ok(())
    }

    fn function_print_fmt<W: Write>(&self, w: &mut W) -> fmt::Result {
        let exit = self.kind == ProbeKind::FunctionExit;
        let (head, tail_args) = if exit {
            ("\"%pS <- %pS(", ", REC->__parent_ip, REC->__ip")
        } else {
            ("\"%pS->%pS(", ", REC->__ip, REC->__parent_ip")
        };
        w.write_str(head)?;
        let nparams = if exit {
            self.nargs.saturating_sub(1)
        } else {
            self.nargs
        };
        for (i, a) in self.args().iter().enumerate() {
            if i == nparams {
                w.write_str(") ")?;
            } else if i > 0 {
                w.write_str(", ")?;
            }
            write!(w, "{}=", a.name())?;
            if a.count > 0 && !a.fixed_string {
                for j in 0..a.count {
                    if j > 0 {
                        w.write_str(",")?;
                    }
                    w.write_str(a.ty.function_fmt())?;
                }
            } else if a.fixed_string {
                w.write_str("%s")?;
            } else {
                w.write_str(a.ty.function_fmt())?;
            }
        }
        if nparams == self.nargs {
            w.write_str(")")?;
        }
        w.write_str("\"")?;
        w.write_str(tail_args)?;
        self.write_rec_args(w)
    }

    /// Write the probe place as the kernel shows and matches it
    /// (`SYM`, `SYM+OFFS`, `0xADDR`; an address as `0x%p` shows it).
    pub fn write_place<W: Write>(&self, w: &mut W) -> fmt::Result {
        if !self.has_symbol {
            write!(w, "0x{:016x}", self.listed_addr)
        } else if self.offset != 0 {
            write!(w, "{}+{}", self.symbol.as_str(), self.offset)
        } else {
            w.write_str(self.symbol.as_str())
        }
    }

    /// Write the definition as the control file lists it (no newline):
    /// `p:kprobes/p_vfs_read_0 vfs_read arg1=%di:u64`, or for function
    /// events the normalized definition text.
    pub fn canonical<W: Write>(&self, w: &mut W) -> fmt::Result {
        match self.kind {
            ProbeKind::FunctionEntry | ProbeKind::FunctionExit => {
                return w.write_str(self.fe_text.as_str());
            }
            ProbeKind::Kprobe | ProbeKind::Kretprobe => {
                if self.kind.is_return() {
                    w.write_str("r")?;
                    if self.maxactive > 0 {
                        write!(w, "{}", self.maxactive)?;
                    }
                } else {
                    w.write_str("p")?;
                }
                write!(w, ":{}/{} ", self.group(), self.event())?;
                self.write_place(w)?;
            }
            ProbeKind::FprobeEntry | ProbeKind::FprobeExit | ProbeKind::Tracepoint => {
                let c = if self.kind == ProbeKind::Tracepoint {
                    "t"
                } else {
                    "f"
                };
                write!(
                    w,
                    "{}:{}/{} {}{}",
                    c,
                    self.group(),
                    self.event(),
                    self.symbol.as_str(),
                    if self.kind == ProbeKind::FprobeExit {
                        "%return"
                    } else {
                        ""
                    }
                )?;
            }
        }
        for a in self.args() {
            write!(w, " {}={}", a.name(), a.text())?;
        }
        Ok(())
    }

    /// Would a removal command `-:[GROUP/]EVENT [PLACE [ARGS...]]` remove
    /// this definition? (`trace_kprobe_match` / `trace_fprobe_match`.)
    pub fn matches_removal(&self, group: Option<&str>, event: &str, args: &[u8]) -> bool {
        if !event.is_empty() && event != self.event() {
            return false;
        }
        if let Some(g) = group {
            if g != self.group() {
                return false;
            }
        }
        let mut words = crate::lang::parse::Words::new(args);
        let place = match words.next() {
            None => return true,
            Some(p) => p,
        };
        if self.kind.is_function_event() {
            return place == self.symbol.as_bytes();
        }
        let mut buf: Str<{ SYMBOL_CAP + 32 }> = Str::new();
        let placed = match self.kind {
            ProbeKind::Kprobe | ProbeKind::Kretprobe => self.write_place(&mut buf),
            _ => buf.write_str(self.symbol.as_str()),
        };
        if placed.is_err() || buf.as_bytes() != place {
            return false;
        }
        let mut i = 0usize;
        for word in words {
            let a = match self.args.get(i) {
                Some(a) if i < self.nargs => a,
                _ => return false,
            };
            let n = a.name.as_bytes();
            if fixed::head(word, n.len()) != n
                || fixed::at(word, n.len()) != b'='
                || fixed::tail(word, n.len().saturating_add(1)) != a.text.as_bytes()
            {
                return false;
            }
            i = i.saturating_add(1);
        }
        true
    }

    /// Compare argument types and names with another definition of the same
    /// event (`trace_probe_compare_arg_type`): 0 when equal, else the
    /// 1-based index of the first difference.
    pub fn compare_arg_types(&self, other: &Definition) -> usize {
        if self.nargs != other.nargs {
            return self.nargs.min(other.nargs).saturating_add(1);
        }
        for (i, (a, b)) in self.args().iter().zip(other.args()).enumerate() {
            if a.ty != b.ty || a.count != b.count || a.name != b.name {
                return i.saturating_add(1);
            }
        }
        0
    }

    /// True when both definitions are identical (same place, names,
    /// arguments and programs).
    pub fn same_as(&self, o: &Definition) -> bool {
        self.kind == o.kind
            && self.group == o.group
            && self.event == o.event
            && self.symbol == o.symbol
            && self.has_symbol == o.has_symbol
            && self.addr == o.addr
            && self.offset == o.offset
            && self.maxactive == o.maxactive
            && self.nargs == o.nargs
            && self.size == o.size
            && self.entry_args() == o.entry_args()
            && self.args().iter().zip(o.args()).all(|(a, b)| a.is_same(b))
    }

    /// Resolve (again) the `@SYM` addresses of all arguments; returns false
    /// when a symbol is unknown.
    pub fn resolve_symbols<R: crate::lang::Resolver>(&mut self, r: &R) -> bool {
        let n = self.nargs;
        for a in self.args.iter_mut().take(n) {
            if let Load::Symbol { name, offset, .. } = a.prog.load {
                let s = usize::from(name.start);
                let nm = fixed::mid(a.text.as_bytes(), s, s.saturating_add(name.len.into()));
                match r.symbol_address(fixed::as_str(nm)) {
                    Some(addr) => {
                        a.prog.load = Load::Symbol {
                            name,
                            offset,
                            addr: addr.wrapping_add(offset as u64),
                        }
                    }
                    None => return false,
                }
            }
        }
        true
    }

    pub(crate) fn arg_mut(&mut self, i: usize) -> Option<&mut ProbeArg> {
        self.args.get_mut(i)
    }
}

impl ProbeArg {
    fn nargs_guard(&self, nargs: usize, i: usize) -> bool {
        i >= nargs
    }
}
