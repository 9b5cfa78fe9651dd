// SPDX-License-Identifier: GPL-2.0

//! A safe Rust layer over dynprobe's in-kernel API
//! (include/dynprobe/api.h, Documentation/api.md), for Rust modules. A
//! module includes this file as a module of its own crate:
//!
//! ```ignore
//! #[path = "PATH/TO/dynprobe/include/dynprobe/rust/dynprobe.rs"]
//! mod dynprobe;
//! ```
//!
//! and is built with dynprobe's `Module.symvers` in
//! `KBUILD_EXTRA_SYMBOLS`.
//!
//! - Builders take names, types and fetch arguments as typed values, so a
//!   command they make is always one well-formed line; what only the
//!   kernel can tell (an unknown function, a name taken) comes back as the
//!   errno a control file would give, with its `error_log` entry.
//! - [`Event`] is a definition the module made: dropping it removes it.
//! - [`EventRef`] holds an event (it cannot be removed meanwhile);
//!   [`SynthEventRef`] also traces a synthetic event, all at once or
//!   through a [`Reservation`], committed when dropped.

#![allow(dead_code)]

use core::ptr::NonNull;
use kernel::ffi::{c_char, c_int, c_uint, c_void};

use kernel::error::{from_err_ptr, to_result};
use kernel::prelude::*;
use kernel::ThisModule;

/// The C API's declarations (include/dynprobe/api.h).
mod ffi {
    use super::*;

    pub(super) const SYNTHETIC_EVENTS: c_uint = 0;
    pub(super) const FUNCTION_EVENTS: c_uint = 1;
    pub(super) const KPROBE_EVENTS: c_uint = 2;
    pub(super) const DYNAMIC_EVENTS: c_uint = 3;

    /// `struct dynprobe_synth_state`.
    #[repr(C)]
    pub(super) struct SynthState {
        pub(super) space: [u64; 16],
    }

    extern "C" {
        pub(super) fn __dynprobe_create(
            kind: c_uint,
            line: *const c_char,
            owner: *mut c_void,
        ) -> c_int;
        pub(super) fn dynprobe_delete(kind: c_uint, event: *const c_char) -> c_int;
        pub(super) fn dynprobe_event_get(
            system: *const c_char,
            event: *const c_char,
        ) -> *mut c_void;
        pub(super) fn dynprobe_event_put(ev: *mut c_void);
        pub(super) fn dynprobe_event_enable(ev: *mut c_void, enable: bool) -> c_int;
        pub(super) fn dynprobe_synth_trace_array(
            ev: *mut c_void,
            vals: *mut u64,
            n: c_uint,
        ) -> c_int;
        pub(super) fn dynprobe_synth_trace_start(ev: *mut c_void, state: *mut SynthState) -> c_int;
        pub(super) fn dynprobe_synth_add_next_val(val: u64, state: *mut SynthState) -> c_int;
        pub(super) fn dynprobe_synth_add_val(
            field: *const c_char,
            val: u64,
            state: *mut SynthState,
        ) -> c_int;
        pub(super) fn dynprobe_synth_trace_end(state: *mut SynthState) -> c_int;
    }
}

/// The longest command line (`DYNPROBE_API_MAX_LINE`).
pub(crate) const MAX_LINE: usize = 4094;
/// Most fields of a synthetic event.
pub(crate) const SYNTH_FIELDS_MAX: usize = 64;
/// Longest event, group, field or argument name the control files take.
pub(crate) const NAME_MAX: usize = 63;

/// A name: a C identifier of at most [`NAME_MAX`] bytes (events, groups,
/// fields, arguments, functions).
#[derive(Clone, Copy)]
pub(crate) struct Name<'a>(&'a CStr);

impl<'a> Name<'a> {
    /// Checks `name`: `EINVAL` unless it is a C identifier that fits.
    pub(crate) fn new(name: &'a CStr) -> Result<Self> {
        let b = name.to_bytes();
        let ident = b
            .first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
        if ident && b.len() <= NAME_MAX {
            Ok(Name(name))
        } else {
            Err(EINVAL)
        }
    }

    fn bytes(&self) -> &[u8] {
        self.0.to_bytes()
    }
}

/// A function's symbol: a C identifier, or one with `.` suffixes as GCC
/// makes them (`foo.isra.0`).
#[derive(Clone, Copy)]
pub(crate) struct Symbol<'a>(&'a CStr);

impl<'a> Symbol<'a> {
    /// Checks `symbol`: `EINVAL` unless it is one.
    pub(crate) fn new(symbol: &'a CStr) -> Result<Self> {
        let b = symbol.to_bytes();
        let ok = b
            .first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.');
        if ok && b.len() < 128 {
            Ok(Symbol(symbol))
        } else {
            Err(EINVAL)
        }
    }
}

/// A field type of a synthetic event.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SynthType {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    Int,
    UnsignedInt,
    Long,
    UnsignedLong,
    Pid,
    Bool,
    /// `char[N]`, N from 1 to 256: a string copied into the record.
    Chars(u16),
    /// `char[]`: a string of any length (not with [`Reservation`]).
    String,
    /// `unsigned long[]`: a stack trace.
    Stack,
}

impl SynthType {
    fn write(self, out: &mut Line) -> Result {
        let text: &[u8] = match self {
            SynthType::U8 => b"u8",
            SynthType::U16 => b"u16",
            SynthType::U32 => b"u32",
            SynthType::U64 => b"u64",
            SynthType::S8 => b"s8",
            SynthType::S16 => b"s16",
            SynthType::S32 => b"s32",
            SynthType::S64 => b"s64",
            SynthType::Int => b"int",
            SynthType::UnsignedInt => b"unsigned int",
            SynthType::Long => b"long",
            SynthType::UnsignedLong => b"unsigned long",
            SynthType::Pid => b"pid_t",
            SynthType::Bool => b"bool",
            SynthType::Chars(n) => {
                if !(1..=256).contains(&n) {
                    return Err(EINVAL);
                }
                out.push(b"char[")?;
                out.number(n.into())?;
                return out.push(b"]");
            }
            SynthType::String => b"char[]",
            SynthType::Stack => b"unsigned long[]",
        };
        out.push(text)
    }
}

/// A value type of a function event's argument.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FuncType {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    X8,
    X16,
    X32,
    X64,
    Char,
    Short,
    Int,
    Long,
    SizeT,
    /// A kernel address printed as a symbol.
    Symbol,
    /// The string the value points to.
    String,
}

impl FuncType {
    fn text(self) -> &'static [u8] {
        match self {
            FuncType::U8 => b"u8",
            FuncType::U16 => b"u16",
            FuncType::U32 => b"u32",
            FuncType::U64 => b"u64",
            FuncType::S8 => b"s8",
            FuncType::S16 => b"s16",
            FuncType::S32 => b"s32",
            FuncType::S64 => b"s64",
            FuncType::X8 => b"x8",
            FuncType::X16 => b"x16",
            FuncType::X32 => b"x32",
            FuncType::X64 => b"x64",
            FuncType::Char => b"char",
            FuncType::Short => b"short",
            FuncType::Int => b"int",
            FuncType::Long => b"long",
            FuncType::SizeT => b"size_t",
            FuncType::Symbol => b"symbol",
            FuncType::String => b"string",
        }
    }
}

/// A function event's argument named from BTF: a parameter (`file`), a
/// member chain (`file->f_path.dentry->d_name.name:string`), `NAME=` one
/// of those, or `...` for every parameter. The parser judges it; this
/// only keeps it one word of those characters.
#[derive(Clone, Copy)]
pub(crate) struct BtfArg<'a>(&'a CStr);

impl<'a> BtfArg<'a> {
    /// Checks `arg`: `EINVAL` unless it is one word of a BTF argument's
    /// characters (letters, digits, `_`, `$`, `-`, `>`, `.`, `:`, `=`, `[`, `]`).
    pub(crate) fn new(arg: &'a CStr) -> Result<Self> {
        one_word_of(arg, b"_$->.:=[]").map(BtfArg)
    }
}

/// The functions of an `f` event over many: `vfs_read,vfs_write` or globs
/// with exclusions (`vfs_*,!vfs_fsync*`).
#[derive(Clone, Copy)]
pub(crate) struct FunctionList<'a>(&'a CStr);

impl<'a> FunctionList<'a> {
    /// Checks `list`: `EINVAL` unless it is one word of symbols, globs
    /// (`*`, `?`, `[...]`), `!` and commas.
    pub(crate) fn new(list: &'a CStr) -> Result<Self> {
        one_word_of(list, b"_.*?[]!^-,").map(FunctionList)
    }
}

/// `word` if it is not empty, fits a line and has only letters, digits
/// and bytes of `also`: `EINVAL` otherwise.
fn one_word_of<'a>(word: &'a CStr, also: &[u8]) -> Result<&'a CStr> {
    let b = word.to_bytes();
    let ok = !b.is_empty()
        && b.len() <= MAX_LINE
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || also.contains(c));
    if ok {
        Ok(word)
    } else {
        Err(EINVAL)
    }
}

/// What a watchpoint event watches for.
#[derive(Clone, Copy)]
pub(crate) enum WatchAccess {
    /// `w`: writes.
    Write,
    /// `rw`: reads and writes.
    ReadWrite,
}

/// What a probe event's argument fetches.
#[derive(Clone, Copy)]
pub(crate) enum Fetch {
    /// `$argN`, N from 1.
    Arg(u8),
    /// `$retval` (return probes).
    Retval,
    /// `$comm`.
    Comm,
    /// `$stackN`.
    Stack(u8),
    /// `$addr`: the address a watchpoint watches.
    WatchAddr,
    /// `$value`: what it holds when the watchpoint fires.
    WatchValue,
}

/// The type a probe event's argument is recorded with.
#[derive(Clone, Copy)]
pub(crate) enum FetchType {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    X8,
    X16,
    X32,
    X64,
    Symbol,
    String,
}

impl FetchType {
    fn text(self) -> &'static [u8] {
        match self {
            FetchType::U8 => b"u8",
            FetchType::U16 => b"u16",
            FetchType::U32 => b"u32",
            FetchType::U64 => b"u64",
            FetchType::S8 => b"s8",
            FetchType::S16 => b"s16",
            FetchType::S32 => b"s32",
            FetchType::S64 => b"s64",
            FetchType::X8 => b"x8",
            FetchType::X16 => b"x16",
            FetchType::X32 => b"x32",
            FetchType::X64 => b"x64",
            FetchType::Symbol => b"symbol",
            FetchType::String => b"string",
        }
    }
}

/// A command line being built.
struct Line(KVec<u8>);

impl Line {
    fn new() -> Self {
        Line(KVec::new())
    }

    fn push(&mut self, s: &[u8]) -> Result {
        if self.0.len() + s.len() > MAX_LINE {
            return Err(E2BIG);
        }
        self.0.extend_from_slice(s, GFP_KERNEL)?;
        Ok(())
    }

    fn number(&mut self, mut n: u32) -> Result {
        let mut digits = [0u8; 10];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..])
    }

    /// Runs the line in the control file `kind`, owned by `module`.
    fn run(mut self, kind: c_uint, module: &'static ThisModule) -> Result {
        self.0.push(0, GFP_KERNEL)?;
        // SAFETY: the line is NUL-terminated and lives across the call;
        // `module` is the calling module's.
        to_result(unsafe {
            ffi::__dynprobe_create(kind, self.0.as_ptr().cast(), module.as_ptr().cast())
        })
    }
}

/// An event the module made: removed when dropped (unless busy: then it
/// goes when the module unloads, or through its control file).
pub(crate) struct Event {
    kind: c_uint,
    /// `[GROUP/]EVENT`, NUL-terminated.
    name: KVec<u8>,
}

impl Event {
    fn new(kind: c_uint, parts: &[&[u8]]) -> Result<Self> {
        let mut name = KVec::new();
        for p in parts {
            name.extend_from_slice(p, GFP_KERNEL)?;
        }
        name.push(0, GFP_KERNEL)?;
        Ok(Event { kind, name })
    }

    /// Removes the event now: `EBUSY` while it is in use (it stays).
    pub(crate) fn delete(self) -> Result {
        let ret = self.remove();
        core::mem::forget(self);
        ret
    }

    /// Leaves the event in place; it goes when the module unloads.
    pub(crate) fn keep(self) {
        core::mem::forget(self);
    }

    fn remove(&self) -> Result {
        // SAFETY: the name is NUL-terminated.
        to_result(unsafe { ffi::dynprobe_delete(self.kind, self.name.as_ptr().cast()) })
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            pr_warn!(
                "dynprobe event {} not removed ({:?})\n",
                kernel::str::BStr::from_bytes(self.name.split_last().map_or(&[], |(_, n)| n)),
                e
            );
        }
    }
}

/// Builds a synthetic event: `NAME TYPE FIELD; ...`.
pub(crate) struct SynthEventBuilder<'a> {
    name: Name<'a>,
    line: Line,
    fields: usize,
}

impl<'a> SynthEventBuilder<'a> {
    /// Starts event `synthetic/NAME`.
    pub(crate) fn new(name: Name<'a>) -> Result<Self> {
        let mut line = Line::new();
        line.push(name.bytes())?;
        Ok(SynthEventBuilder {
            name,
            line,
            fields: 0,
        })
    }

    /// Adds a field.
    pub(crate) fn field(mut self, ty: SynthType, name: Name<'_>) -> Result<Self> {
        if self.fields == SYNTH_FIELDS_MAX {
            return Err(E2BIG);
        }
        self.line
            .push(if self.fields == 0 { b" " } else { b"; " })?;
        ty.write(&mut self.line)?;
        self.line.push(b" ")?;
        self.line.push(name.bytes())?;
        self.fields += 1;
        Ok(self)
    }

    /// Makes the event, owned by `module`.
    pub(crate) fn create(self, module: &'static ThisModule) -> Result<Event> {
        let event = Event::new(ffi::SYNTHETIC_EVENTS, &[self.name.bytes()])?;
        self.line.run(ffi::SYNTHETIC_EVENTS, module)?;
        Ok(event)
    }
}

/// Builds a function event: `FUNC(TYPE NAME, NULL, ...) [-> TYPE NAME]`.
pub(crate) struct FunctionEventBuilder<'a> {
    func: Symbol<'a>,
    line: Line,
    args: usize,
}

impl<'a> FunctionEventBuilder<'a> {
    /// Starts event `functions/FUNC`.
    pub(crate) fn new(func: Symbol<'a>) -> Result<Self> {
        let mut line = Line::new();
        line.push(func.0.to_bytes())?;
        line.push(b"(")?;
        Ok(FunctionEventBuilder {
            func,
            line,
            args: 0,
        })
    }

    fn separator(&mut self) -> Result {
        if self.args > 0 {
            self.line.push(b", ")?;
        }
        self.args += 1;
        Ok(())
    }

    /// Records the next parameter as `name`, of type `ty`.
    pub(crate) fn arg(mut self, ty: FuncType, name: Name<'_>) -> Result<Self> {
        self.separator()?;
        self.line.push(ty.text())?;
        self.line.push(b" ")?;
        self.line.push(name.bytes())?;
        Ok(self)
    }

    /// Skips the next parameter (`NULL`).
    pub(crate) fn skip(mut self) -> Result<Self> {
        self.separator()?;
        self.line.push(b"NULL")?;
        Ok(self)
    }

    /// Records `arg`, named and typed from BTF; it takes no position
    /// among the typed arguments.
    pub(crate) fn btf_arg(mut self, arg: BtfArg<'_>) -> Result<Self> {
        self.separator()?;
        self.line.push(arg.0.to_bytes())?;
        Ok(self)
    }

    /// Records every parameter, named and typed from BTF (`...`).
    pub(crate) fn all_params(mut self) -> Result<Self> {
        self.separator()?;
        self.line.push(b"...")?;
        Ok(self)
    }

    /// Makes the event, at entry, owned by `module`.
    pub(crate) fn create(mut self, module: &'static ThisModule) -> Result<Event> {
        self.line.push(b")")?;
        let name = self.func.0.to_bytes();
        let event = Event::new(ffi::FUNCTION_EVENTS, &[b"functions/", name])?;
        self.line.run(ffi::FUNCTION_EVENTS, module)?;
        Ok(event)
    }

    /// Makes an exit event (`functions/FUNC__exit`) that also records the
    /// return value as `name`, owned by `module`.
    pub(crate) fn create_exit(
        mut self,
        ty: FuncType,
        name: Name<'_>,
        module: &'static ThisModule,
    ) -> Result<Event> {
        self.line.push(b") -> ")?;
        self.line.push(ty.text())?;
        self.line.push(b" ")?;
        self.line.push(name.bytes())?;
        self.create_exit_event(module)
    }

    /// Makes an exit event that also records the return value as `name`,
    /// typed from BTF (`-> NAME`), owned by `module`.
    pub(crate) fn create_exit_btf(
        mut self,
        name: Name<'_>,
        module: &'static ThisModule,
    ) -> Result<Event> {
        self.line.push(b") -> ")?;
        self.line.push(name.bytes())?;
        self.create_exit_event(module)
    }

    /// Runs the finished exit event's line: `functions/FUNC__exit`.
    fn create_exit_event(self, module: &'static ThisModule) -> Result<Event> {
        let func = self.func.0.to_bytes();
        let event = Event::new(ffi::FUNCTION_EVENTS, &[b"functions/", func, b"__exit"])?;
        self.line.run(ffi::FUNCTION_EVENTS, module)?;
        Ok(event)
    }
}

/// Where a probe event is placed.
#[derive(Clone, Copy)]
pub(crate) enum Place<'a> {
    /// `p`: a kprobe at a function's entry.
    Kprobe(Symbol<'a>),
    /// `r`: a kretprobe at its return.
    Kretprobe(Symbol<'a>),
    /// `f`: an fprobe at its entry (dynamic_events).
    Fentry(Symbol<'a>),
    /// `f ...%return`: an fprobe at its exit (dynamic_events).
    Fexit(Symbol<'a>),
    /// `f LIST`: one fprobe at the entry of every function of a list.
    FentryList(FunctionList<'a>),
    /// `f LIST:exit`: the same at their exits.
    FexitList(FunctionList<'a>),
    /// `w`: a watchpoint on `len` bytes (1, 2, 4 or 8) at a symbol.
    Watch(WatchAccess, Symbol<'a>, u8),
}

/// Builds a probe event of `dynamic_events`: `TYPE:GROUP/EVENT PLACE
/// NAME=FETCH[:TYPE] ...`.
pub(crate) struct ProbeEventBuilder<'a> {
    group: Name<'a>,
    event: Name<'a>,
    line: Line,
    args: usize,
}

impl<'a> ProbeEventBuilder<'a> {
    /// Starts event `group/event` at `place`.
    pub(crate) fn new(group: Name<'a>, event: Name<'a>, place: Place<'_>) -> Result<Self> {
        let mut line = Line::new();
        let (head, access, what, tail): (&[u8], &[u8], &CStr, &[u8]) = match place {
            Place::Kprobe(s) => (b"p:", b"", s.0, b""),
            Place::Kretprobe(s) => (b"r:", b"", s.0, b""),
            Place::Fentry(s) => (b"f:", b"", s.0, b""),
            Place::Fexit(s) => (b"f:", b"", s.0, b"%return"),
            Place::FentryList(l) => (b"f:", b"", l.0, b""),
            Place::FexitList(l) => (b"f:", b"", l.0, b":exit"),
            Place::Watch(access, s, len) => {
                let access: &[u8] = match access {
                    WatchAccess::Write => b"w@",
                    WatchAccess::ReadWrite => b"rw@",
                };
                let len: &[u8] = match len {
                    1 => b":1",
                    2 => b":2",
                    4 => b":4",
                    8 => b":8",
                    _ => return Err(EINVAL),
                };
                (b"w:", access, s.0, len)
            }
        };
        line.push(head)?;
        line.push(group.bytes())?;
        line.push(b"/")?;
        line.push(event.bytes())?;
        line.push(b" ")?;
        line.push(access)?;
        line.push(what.to_bytes())?;
        line.push(tail)?;
        Ok(ProbeEventBuilder {
            group,
            event,
            line,
            args: 0,
        })
    }

    /// Adds argument `name`, fetched by `fetch`, recorded as `ty` (the
    /// default type when `None`).
    pub(crate) fn arg(
        mut self,
        name: Name<'_>,
        fetch: Fetch,
        ty: Option<FetchType>,
    ) -> Result<Self> {
        self.line.push(b" ")?;
        self.line.push(name.bytes())?;
        self.line.push(b"=")?;
        match fetch {
            Fetch::Arg(n) => {
                self.line.push(b"$arg")?;
                self.line.number(n.into())?;
            }
            Fetch::Retval => self.line.push(b"$retval")?,
            Fetch::WatchAddr => self.line.push(b"$addr")?,
            Fetch::WatchValue => self.line.push(b"$value")?,
            Fetch::Comm => self.line.push(b"$comm")?,
            Fetch::Stack(n) => {
                self.line.push(b"$stack")?;
                self.line.number(n.into())?;
            }
        }
        if let Some(ty) = ty {
            self.line.push(b":")?;
            self.line.push(ty.text())?;
        }
        self.args += 1;
        Ok(self)
    }

    /// Makes the event, owned by `module`.
    pub(crate) fn create(self, module: &'static ThisModule) -> Result<Event> {
        let event = Event::new(
            ffi::DYNAMIC_EVENTS,
            &[self.group.bytes(), b"/", self.event.bytes()],
        )?;
        self.line.run(ffi::DYNAMIC_EVENTS, module)?;
        Ok(event)
    }
}

/// A dynprobe event, held: it cannot be removed while this lives.
pub(crate) struct EventRef {
    ev: NonNull<c_void>,
}

// SAFETY: the handle is only read; the C calls on it may be made from
// any task, and the tracing calls concurrently from any context.
unsafe impl Send for EventRef {}
// SAFETY: as above.
unsafe impl Sync for EventRef {}

impl EventRef {
    /// Holds dynprobe's event `system/event` (`ENOENT`: none such).
    pub(crate) fn get(system: Name<'_>, event: Name<'_>) -> Result<Self> {
        // SAFETY: both names are NUL-terminated.
        let ev = unsafe { ffi::dynprobe_event_get(system.0.as_char_ptr(), event.0.as_char_ptr()) };
        let ev = from_err_ptr(ev)?;
        NonNull::new(ev).map(|ev| EventRef { ev }).ok_or(ENOENT)
    }

    /// Enables or disables the event in the top-level trace instance.
    pub(crate) fn enable(&self, enable: bool) -> Result {
        // SAFETY: `ev` is held.
        to_result(unsafe { ffi::dynprobe_event_enable(self.ev.as_ptr(), enable) })
    }
}

impl Drop for EventRef {
    fn drop(&mut self) {
        // SAFETY: `ev` came from dynprobe_event_get() and is put once.
        unsafe { ffi::dynprobe_event_put(self.ev.as_ptr()) }
    }
}

/// A value of a synthetic event's field.
#[derive(Clone, Copy)]
pub(crate) enum Value<'a> {
    /// Any integer field (cut to the field's size).
    U64(u64),
    /// A signed integer field.
    S64(i64),
    /// A string field (`char[N]` or `char[]`).
    Str(&'a CStr),
}

impl Value<'_> {
    fn raw(self) -> u64 {
        match self {
            Value::U64(v) => v,
            Value::S64(v) => v as u64,
            Value::Str(s) => s.as_char_ptr() as usize as u64,
        }
    }
}

/// A held synthetic event that the module traces.
pub(crate) struct SynthEventRef(EventRef);

impl SynthEventRef {
    /// Holds dynprobe's synthetic event `name`.
    pub(crate) fn get(name: Name<'_>) -> Result<Self> {
        let system = Name::new(c"synthetic")?;
        Ok(SynthEventRef(EventRef::get(system, name)?))
    }

    /// Enables or disables the event in the top-level trace instance.
    pub(crate) fn enable(&self, enable: bool) -> Result {
        self.0.enable(enable)
    }

    /// Traces one record: a value per field, in order. Records nothing,
    /// and succeeds, while the event is disabled.
    pub(crate) fn trace(&self, values: &[Value<'_>]) -> Result {
        let mut raw = [0u64; SYNTH_FIELDS_MAX];
        let n = values.len();
        if n > SYNTH_FIELDS_MAX {
            return Err(EINVAL);
        }
        for (r, v) in raw.iter_mut().zip(values) {
            *r = v.raw();
        }
        // SAFETY: `ev` is a held synthetic event; `raw` holds `n` values,
        // and the strings they point to live across the call.
        to_result(unsafe {
            ffi::dynprobe_synth_trace_array(self.0.ev.as_ptr(), raw.as_mut_ptr(), n as c_uint)
        })
    }

    /// Reserves a record, to fill field by field: committed when the
    /// reservation is dropped.
    pub(crate) fn reserve(&self) -> Result<Reservation<'_>> {
        let mut state = ffi::SynthState { space: [0; 16] };
        // SAFETY: `ev` is a held synthetic event; `state` is writable.
        to_result(unsafe { ffi::dynprobe_synth_trace_start(self.0.ev.as_ptr(), &mut state) })?;
        // Only a started state is ended (by the drop).
        Ok(Reservation {
            state,
            _event: self,
        })
    }
}

/// A record being filled in the trace buffer; committed on drop.
pub(crate) struct Reservation<'a> {
    state: ffi::SynthState,
    _event: &'a SynthEventRef,
}

impl Reservation<'_> {
    /// Sets the next field (not with [`Reservation::set`]).
    pub(crate) fn next(&mut self, value: Value<'_>) -> Result<&mut Self> {
        // SAFETY: `state` was started; a string is copied by the call.
        to_result(unsafe { ffi::dynprobe_synth_add_next_val(value.raw(), &mut self.state) })?;
        Ok(self)
    }

    /// Sets the field `field` (not with [`Reservation::next`]).
    pub(crate) fn set(&mut self, field: Name<'_>, value: Value<'_>) -> Result<&mut Self> {
        // SAFETY: as for `next`; `field` is NUL-terminated.
        to_result(unsafe {
            ffi::dynprobe_synth_add_val(field.0.as_char_ptr(), value.raw(), &mut self.state)
        })?;
        Ok(self)
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        // SAFETY: `state` was started and is ended once.
        unsafe { ffi::dynprobe_synth_trace_end(&mut self.state) };
    }
}
