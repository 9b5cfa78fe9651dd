// SPDX-License-Identifier: GPL-2.0

//! The in-kernel API's commands (include/dynprobe/api.h): a definition
//! built word by word, each word checked as it is added, is written as
//! the line a control file would take and run down the control files'
//! command path (`crate::api`), so that it is parsed, checked, logged and
//! listed exactly as a written one. These functions are the exported
//! symbols themselves; src/shim/api.c exports them (`EXPORT_SYMBOL_GPL` is
//! a C macro).

use kernel::ffi::{c_char, c_int, c_uint};
use kernel::prelude::*;

use crate::api;
use crate::control::FileId;
use crate::sys::bindings as b;

/// Each function here has the prototype bindgen read in
/// include/dynprobe/api.h, or this does not compile.
macro_rules! same_prototype {
    ($($f:ident),*) => {
        $(const _: () = {
            let _ = if true { b::$f } else { $f };
        };)*
    };
}

same_prototype!(
    dynprobe_cmd_init,
    dynprobe_synth_cmd_start,
    dynprobe_synth_add_field,
    dynprobe_function_cmd_start,
    dynprobe_function_add_arg,
    dynprobe_function_set_return,
    dynprobe_probe_cmd_start,
    dynprobe_probe_add_arg,
    __dynprobe_cmd_create,
    __dynprobe_create,
    __dynprobe_synth_event_create,
    __dynprobe_function_event_create,
    dynprobe_delete
);

/// Bytes that a word of each sort may not hold: they would end it.
const NAME_STOPS: &[u8] = b" \t\n\r\x0b\x0c#;,()=";
const SYNTH_TYPE_STOPS: &[u8] = b"\n\r\x0b\x0c#;";
const FUNC_TYPE_STOPS: &[u8] = b"\n\r\x0b\x0c#;,()=";
const FUNC_NAME_STOPS: &[u8] = b"\n\r\x0b\x0c#;,()= \t";
const FETCH_STOPS: &[u8] = b" \t\n\r\x0b\x0c#";
/// A function event's argument named from BTF (a parameter, a member
/// chain, `NAME=`, `:TYPE`, `...`) ends at a comma or white space.
const BTF_ARG_STOPS: &[u8] = b" \t\n\r\x0b\x0c#;,";
/// An event name stops where any other name does.
const EVENT_STOPS: &[u8] = NAME_STOPS;

/// The longest line, with its NUL.
const LINE_BUF: usize = b::DYNPROBE_API_MAX_LINE as usize + 1;

/// A caller's word, `None` when the pointer is null.
///
/// # Safety
///
/// `ptr` is null or a NUL-terminated string that outlives the result.
pub(crate) unsafe fn word<'a>(ptr: *const c_char) -> Option<&'a [u8]> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the caller's promise.
    Some(unsafe { CStr::from_char_ptr(ptr) }.to_bytes())
}

/// `word` if it is not empty and holds none of `stops`.
fn checked<'a>(word: Option<&'a [u8]>, stops: &[u8]) -> Option<&'a [u8]> {
    word.filter(|w| !w.is_empty() && !w.iter().any(|c| stops.contains(c)))
}

/// A function event's argument named from BTF: one word, whose
/// parentheses (a dereference, `+8($arg2)`) close within it, so that it
/// cannot close the argument list.
fn checked_btf_arg(word: Option<&[u8]>) -> Option<&[u8]> {
    let word = checked(word, BTF_ARG_STOPS)?;
    let mut depth = 0usize;
    for &c in word {
        match c {
            b'(' => depth += 1,
            b')' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    (depth == 0).then_some(word)
}

/// The control file of a kind of command.
fn file_of(kind: c_uint) -> Option<FileId> {
    Some(match kind {
        b::dynprobe_kind_DYNPROBE_SYNTHETIC_EVENTS => FileId::SyntheticEvents,
        b::dynprobe_kind_DYNPROBE_FUNCTION_EVENTS => FileId::FunctionEvents,
        b::dynprobe_kind_DYNPROBE_KPROBE_EVENTS => FileId::KprobeEvents,
        b::dynprobe_kind_DYNPROBE_DYNAMIC_EVENTS => FileId::DynamicEvents,
        _ => return None,
    })
}

/// Runs one line of the control file of `kind`, as a write of it would.
fn run_line(kind: c_uint, line: &[u8], owner: *mut b::module) -> c_int {
    match file_of(kind) {
        Some(file) if !line.contains(&b'\n') => api::run_command(file, line, owner as usize),
        _ => EINVAL.to_errno(),
    }
}

/// A caller's command being built. Its first failure sticks: every later
/// call returns it and adds nothing.
struct Cmd<'a>(&'a mut b::dynprobe_cmd);

impl Cmd<'_> {
    /// # Safety
    ///
    /// `cmd` is null or a command initialised by `dynprobe_cmd_init`, used
    /// by nothing else during the call, whose buffer is still valid.
    unsafe fn of<'a>(cmd: *mut b::dynprobe_cmd) -> Option<Cmd<'a>> {
        // SAFETY: the caller's promise.
        unsafe { cmd.as_mut() }.map(Cmd)
    }

    fn fail(&mut self, err: Error) -> c_int {
        if self.0.err == 0 {
            self.0.err = err.to_errno();
        }
        self.0.err
    }

    /// Appends `s`, keeping the text NUL-terminated.
    fn add(&mut self, s: &[u8]) -> c_int {
        if self.0.err != 0 {
            return self.0.err;
        }
        let (len, size) = (self.0.len as usize, self.0.size as usize);
        if s.len() >= size.saturating_sub(len) {
            return self.fail(E2BIG);
        }
        // SAFETY: `buf` is valid for `size` bytes (`dynprobe_cmd_init`'s
        // contract), and the command is the caller's alone.
        let buf = unsafe { core::slice::from_raw_parts_mut(self.0.buf.cast::<u8>(), size) };
        if let Some(dst) = buf.get_mut(len..=len + s.len()) {
            let (text, nul) = dst.split_at_mut(s.len());
            text.copy_from_slice(s);
            nul.fill(0);
            self.0.len += s.len() as u32;
        }
        0
    }

    fn add_all(&mut self, parts: &[&[u8]]) -> c_int {
        for part in parts {
            self.add(part);
        }
        self.0.err
    }

    /// Starts a command of `kind`: refused once one is started.
    fn start(&mut self, kind: c_uint) -> c_int {
        if self.0.err != 0 {
            return self.0.err;
        }
        if self.0.started || file_of(kind).is_none() {
            return self.fail(EINVAL);
        }
        self.0.started = true;
        self.0.kind = kind;
        0
    }

    fn is(&self, kind: c_uint) -> bool {
        self.0.started && self.0.kind == kind
    }

    /// One more field or argument added, unless the command failed.
    fn counted(&mut self) -> c_int {
        if self.0.err == 0 {
            self.0.n_args += 1;
        }
        self.0.err
    }

    fn create(&mut self, owner: *mut b::module) -> c_int {
        if self.0.err == 0 && !self.0.started {
            self.0.err = EINVAL.to_errno();
        }
        if self.0.kind == b::dynprobe_kind_DYNPROBE_FUNCTION_EVENTS && !self.0.closed {
            self.0.closed = true;
            self.add(b")");
        }
        if self.0.err != 0 {
            return self.0.err;
        }
        let len = self.0.len as usize;
        // SAFETY: as in `add`; the text is `len` bytes.
        let line = unsafe { core::slice::from_raw_parts(self.0.buf.cast::<u8>(), len) };
        run_line(self.0.kind, line, owner)
    }
}

/// Checks the words of a call and runs `f` on the command, or records
/// `EINVAL` in it.
///
/// # Safety
///
/// As [`Cmd::of`].
unsafe fn with_cmd(
    cmd: *mut b::dynprobe_cmd,
    f: impl FnOnce(&mut Cmd<'_>) -> Option<c_int>,
) -> c_int {
    // SAFETY: the caller's promise.
    let Some(mut cmd) = (unsafe { Cmd::of(cmd) }) else {
        return EINVAL.to_errno();
    };
    match f(&mut cmd) {
        Some(ret) => ret,
        None => cmd.fail(EINVAL),
    }
}

/// # Safety
///
/// `cmd` is writable; `buf` is null or valid for `size` bytes for as long
/// as the command is used.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_cmd_init(
    cmd: *mut b::dynprobe_cmd,
    buf: *mut c_char,
    size: c_uint,
) {
    // SAFETY: the caller's promise.
    let Some(cmd) = (unsafe { cmd.as_mut() }) else {
        return;
    };
    *cmd = b::dynprobe_cmd {
        buf,
        len: 0,
        size,
        kind: 0,
        n_args: 0,
        err: 0,
        started: false,
        closed: false,
    };
    if buf.is_null() || size == 0 {
        cmd.err = EINVAL.to_errno();
    } else {
        // SAFETY: `buf` holds at least one byte.
        unsafe { *buf = 0 };
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `name` is null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_synth_cmd_start(
    cmd: *mut b::dynprobe_cmd,
    name: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise.
    let name = unsafe { word(name) };
    // SAFETY: the caller's promise.
    unsafe {
        with_cmd(cmd, |cmd| {
            let name = checked(name, NAME_STOPS)?;
            cmd.start(b::dynprobe_kind_DYNPROBE_SYNTHETIC_EVENTS);
            Some(cmd.add(name))
        })
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `ty` and `name` are null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_synth_add_field(
    cmd: *mut b::dynprobe_cmd,
    ty: *const c_char,
    name: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise.
    let (ty, name) = unsafe { (word(ty), word(name)) };
    // SAFETY: the caller's promise.
    unsafe {
        with_cmd(cmd, |cmd| {
            if !cmd.is(b::dynprobe_kind_DYNPROBE_SYNTHETIC_EVENTS) {
                return None;
            }
            let ty = checked(ty, SYNTH_TYPE_STOPS)?;
            let name = checked(name, NAME_STOPS)?;
            let sep: &[u8] = if cmd.0.n_args == 0 { b" " } else { b"; " };
            cmd.add_all(&[sep, ty, b" ", name]);
            Some(cmd.counted())
        })
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `func` is null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_function_cmd_start(
    cmd: *mut b::dynprobe_cmd,
    func: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise.
    let func = unsafe { word(func) };
    // SAFETY: the caller's promise.
    unsafe {
        with_cmd(cmd, |cmd| {
            let func = checked(func, NAME_STOPS)?;
            cmd.start(b::dynprobe_kind_DYNPROBE_FUNCTION_EVENTS);
            Some(cmd.add_all(&[func, b"("]))
        })
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `ty` and `name` are null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_function_add_arg(
    cmd: *mut b::dynprobe_cmd,
    ty: *const c_char,
    name: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise.
    let (ty, name) = unsafe { (word(ty), word(name)) };
    // SAFETY: the caller's promise.
    unsafe {
        with_cmd(cmd, |cmd| {
            if !cmd.is(b::dynprobe_kind_DYNPROBE_FUNCTION_EVENTS) || cmd.0.closed {
                return None;
            }
            let sep: &[u8] = if cmd.0.n_args == 0 { b"" } else { b", " };
            match (ty, name) {
                // A parameter skipped.
                (_, None) => cmd.add_all(&[sep, b"NULL"]),
                // No type: an argument named from BTF.
                (None, Some(_)) => cmd.add_all(&[sep, checked_btf_arg(name)?]),
                (Some(_), Some(_)) => {
                    let ty = checked(ty, FUNC_TYPE_STOPS)?;
                    let name = checked(name, FUNC_NAME_STOPS)?;
                    cmd.add_all(&[sep, ty, b" ", name])
                }
            };
            Some(cmd.counted())
        })
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `ty` and `name` are null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_function_set_return(
    cmd: *mut b::dynprobe_cmd,
    ty: *const c_char,
    name: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise.
    let (ty, name) = unsafe { (word(ty), word(name)) };
    // SAFETY: the caller's promise.
    unsafe {
        with_cmd(cmd, |cmd| {
            if !cmd.is(b::dynprobe_kind_DYNPROBE_FUNCTION_EVENTS) || cmd.0.closed {
                return None;
            }
            let ret = match ty {
                // No type: the return value typed from BTF, `-> NAME[:TYPE]`.
                None => {
                    let name = checked(name, FUNC_NAME_STOPS)?;
                    cmd.add_all(&[b") -> ", name])
                }
                Some(_) => {
                    let ty = checked(ty, FUNC_TYPE_STOPS)?;
                    let name = checked(name, FUNC_NAME_STOPS)?;
                    cmd.add_all(&[b") -> ", ty, b" ", name])
                }
            };
            cmd.0.closed = true;
            Some(ret)
        })
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `event` and `place` are null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_probe_cmd_start(
    cmd: *mut b::dynprobe_cmd,
    kind: c_uint,
    probe_type: c_char,
    event: *const c_char,
    place: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise.
    let (event, place) = unsafe { (word(event), word(place)) };
    // SAFETY: the caller's promise.
    unsafe {
        with_cmd(cmd, |cmd| {
            let types: &[u8] = match kind {
                b::dynprobe_kind_DYNPROBE_KPROBE_EVENTS => b"pr",
                b::dynprobe_kind_DYNPROBE_DYNAMIC_EVENTS => b"prftwe",
                _ => return None,
            };
            if !types.contains(&probe_type) {
                return None;
            }
            let place = checked(place, FETCH_STOPS)?;
            let event = match event {
                Some(_) => Some(checked(event, EVENT_STOPS)?),
                None => None,
            };
            cmd.start(kind);
            let head = [probe_type];
            Some(match event {
                Some(event) => cmd.add_all(&[&head, b":", event, b" ", place]),
                None => cmd.add_all(&[&head, b" ", place]),
            })
        })
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `name` and `fetch` are null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_probe_add_arg(
    cmd: *mut b::dynprobe_cmd,
    name: *const c_char,
    fetch: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise.
    let (name, fetch) = unsafe { (word(name), word(fetch)) };
    // SAFETY: the caller's promise.
    unsafe {
        with_cmd(cmd, |cmd| {
            if !cmd.is(b::dynprobe_kind_DYNPROBE_KPROBE_EVENTS)
                && !cmd.is(b::dynprobe_kind_DYNPROBE_DYNAMIC_EVENTS)
            {
                return None;
            }
            let fetch = checked(fetch, FETCH_STOPS)?;
            match name {
                Some(_) => {
                    let name = checked(name, NAME_STOPS)?;
                    cmd.add_all(&[b" ", name, b"=", fetch])
                }
                None => cmd.add_all(&[b" ", fetch]),
            };
            Some(cmd.counted())
        })
    }
}

/// # Safety
///
/// As [`Cmd::of`]; `owner` is null or the calling module.
#[no_mangle]
pub(crate) unsafe extern "C" fn __dynprobe_cmd_create(
    cmd: *mut b::dynprobe_cmd,
    owner: *mut b::module,
) -> c_int {
    // SAFETY: the caller's promise.
    unsafe { with_cmd(cmd, |cmd| Some(cmd.create(owner))) }
}

/// # Safety
///
/// `line` is null or NUL-terminated; `owner` is null or the calling
/// module.
#[no_mangle]
pub(crate) unsafe extern "C" fn __dynprobe_create(
    kind: c_uint,
    line: *const c_char,
    owner: *mut b::module,
) -> c_int {
    // SAFETY: the caller's promise.
    match unsafe { word(line) } {
        Some(line) => run_line(kind, line, owner),
        None => EINVAL.to_errno(),
    }
}

/// Builds and runs a command from a caller's array of fields.
///
/// # Safety
///
/// `head` is null or NUL-terminated; `fields` is null with `n` 0, or holds
/// `n` fields whose words are null or NUL-terminated; `start` and `add`
/// are the builder calls.
unsafe fn create_from_fields(
    start: unsafe extern "C" fn(*mut b::dynprobe_cmd, *const c_char) -> c_int,
    head: *const c_char,
    add: unsafe extern "C" fn(*mut b::dynprobe_cmd, *const c_char, *const c_char) -> c_int,
    fields: *const b::dynprobe_field,
    n: c_uint,
    owner: *mut b::module,
) -> c_int {
    if fields.is_null() && n != 0 {
        return EINVAL.to_errno();
    }
    let Ok(mut buf) = KVec::from_elem(0u8, LINE_BUF, GFP_KERNEL) else {
        return ENOMEM.to_errno();
    };
    let mut cmd = core::mem::MaybeUninit::<b::dynprobe_cmd>::uninit();
    let cmd = cmd.as_mut_ptr();
    // SAFETY: `cmd` is writable; `buf` outlives every use of the command.
    unsafe { dynprobe_cmd_init(cmd, buf.as_mut_ptr().cast(), LINE_BUF as c_uint) };
    // SAFETY: the command is initialised; `head` is the caller's.
    unsafe { start(cmd, head) };
    let fields = if n == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's promise.
        unsafe { core::slice::from_raw_parts(fields, n as usize) }
    };
    for field in fields {
        // SAFETY: the command is initialised; the words are the caller's.
        unsafe { add(cmd, field.type_, field.name) };
    }
    // SAFETY: the command is initialised and its buffer alive.
    unsafe { __dynprobe_cmd_create(cmd, owner) }
}

/// # Safety
///
/// `name` is null or NUL-terminated; `fields` as in
/// [`create_from_fields`]; `owner` is null or the calling module.
#[no_mangle]
pub(crate) unsafe extern "C" fn __dynprobe_synth_event_create(
    name: *const c_char,
    fields: *const b::dynprobe_field,
    n: c_uint,
    owner: *mut b::module,
) -> c_int {
    let (start, add) = (dynprobe_synth_cmd_start, dynprobe_synth_add_field);
    // SAFETY: the caller's promise.
    unsafe { create_from_fields(start, name, add, fields, n, owner) }
}

/// # Safety
///
/// `func` is null or NUL-terminated; `args` as in [`create_from_fields`];
/// `owner` is null or the calling module.
#[no_mangle]
pub(crate) unsafe extern "C" fn __dynprobe_function_event_create(
    func: *const c_char,
    args: *const b::dynprobe_field,
    n: c_uint,
    owner: *mut b::module,
) -> c_int {
    let (start, add) = (dynprobe_function_cmd_start, dynprobe_function_add_arg);
    // SAFETY: the caller's promise.
    unsafe { create_from_fields(start, func, add, args, n, owner) }
}

/// # Safety
///
/// `event` is null or NUL-terminated.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_delete(kind: c_uint, event: *const c_char) -> c_int {
    // SAFETY: the caller's promise.
    let Some(event) = checked(unsafe { word(event) }, EVENT_STOPS) else {
        return EINVAL.to_errno();
    };
    let head: &[u8] = if kind == b::dynprobe_kind_DYNPROBE_SYNTHETIC_EVENTS {
        b"!"
    } else {
        b"-:"
    };
    let mut line = KVec::new();
    if line.extend_from_slice(head, GFP_KERNEL).is_err()
        || line.extend_from_slice(event, GFP_KERNEL).is_err()
    {
        return ENOMEM.to_errno();
    }
    run_line(kind, &line, core::ptr::null_mut())
}
