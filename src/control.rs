// SPDX-License-Identifier: GPL-2.0

//! The control files' behaviour: what opening, reading and writing
//! `dynprobe/*` does. Called from the C file operations in
//! src/shim/tracefs.c.

use core::fmt::Write;

use kernel::alloc::KVBox;
use kernel::prelude::*;
use kernel::sync::global_lock;

use crate::event::{eopnotsupp, new_definition, Event, VecWriter};
use crate::lang::{self, Command, Control, Definition, ParseError, ProbeKind};
use crate::readme::README;
use crate::resolve::KernelResolver;
use crate::sys::{self, bindings as b, dynprobe_file, dynprobe_text, ErrorSubsystem};

/// Every definition, in creation order, and a spare definition to parse
/// into. One lock serialises all changes: they are rare next to the
/// tracing they set up, and probe handlers never take it.
struct Registry {
    events: KVec<Event>,
    spare: Option<KVBox<Definition>>,
}

impl Registry {
    const fn new() -> Self {
        Registry {
            events: KVec::new(),
            spare: None,
        }
    }
}

global_lock! {
    // SAFETY: initialised in `init()`, the first thing module init does
    // with the registry, before tracefs files can be opened.
    unsafe(uninit) static REGISTRY: Mutex<Registry> = Registry::new();
}

/// Prepares the registry; called once from module init.
pub(crate) fn init() {
    // SAFETY: called exactly once, before any use of REGISTRY.
    unsafe { REGISTRY.init() };
}

/// Removes every definition; called from module exit after the files are
/// gone. Enabled events hold a module reference, so none is enabled here.
pub(crate) fn exit() {
    let mut registry = REGISTRY.lock();
    while registry.events.pop().is_some() {}
    registry.spare = None;
}

/// Which definitions a control file lists, clears and may remove.
fn owns(file: dynprobe_file, kind: ProbeKind) -> bool {
    match file {
        b::dynprobe_file_DYNPROBE_FILE_KPROBE_EVENTS | b::dynprobe_file_DYNPROBE_FILE_KPROBE_PROFILE => {
            matches!(kind, ProbeKind::Kprobe | ProbeKind::Kretprobe)
        }
        b::dynprobe_file_DYNPROBE_FILE_DYNAMIC_EVENTS => !kind.is_function_event(),
        b::dynprobe_file_DYNPROBE_FILE_FUNCTION_EVENTS => kind.is_function_event(),
        _ => false,
    }
}

fn control_of(file: dynprobe_file) -> Option<Control> {
    match file {
        b::dynprobe_file_DYNPROBE_FILE_KPROBE_EVENTS => Some(Control::KprobeEvents),
        b::dynprobe_file_DYNPROBE_FILE_DYNAMIC_EVENTS => Some(Control::DynamicEvents),
        b::dynprobe_file_DYNPROBE_FILE_FUNCTION_EVENTS => Some(Control::FunctionEvents),
        _ => None,
    }
}

/// A snapshot of a file's contents, owned by an open file.
type Snapshot = KVec<u8>;

fn render(file: dynprobe_file, registry: &Registry) -> Result<Snapshot> {
    let mut out = KVec::new();
    let mut w = VecWriter(&mut out);
    match file {
        b::dynprobe_file_DYNPROBE_FILE_README => {
            w.0.extend_from_slice(README.as_bytes(), GFP_KERNEL)?;
        }
        b::dynprobe_file_DYNPROBE_FILE_KPROBE_PROFILE => {
            for ev in registry.events.iter().filter(|e| owns(file, e.def().kind())) {
                let (hits, misses) = ev.counts();
                writeln!(w, "  {:<44} {:>15} {:>15}", ev.def().event(), hits, misses)
                    .map_err(|_| ENOMEM)?;
            }
        }
        _ => {
            for ev in registry.events.iter().filter(|e| owns(file, e.def().kind())) {
                ev.def().canonical(&mut w).map_err(|_| ENOMEM)?;
                w.write_char('\n').map_err(|_| ENOMEM)?;
            }
        }
    }
    Ok(out)
}

/// Removes the definitions `file` owns; nothing if one of them is busy.
fn clear(file: dynprobe_file, registry: &mut Registry) -> Result {
    if registry
        .events
        .iter()
        .any(|e| owns(file, e.def().kind()) && e.busy())
    {
        return Err(EBUSY);
    }
    let mut i = 0;
    while i < registry.events.len() {
        if owns(file, registry.events[i].def().kind()) {
            // Not busy a moment ago under the same lock; a reference taken
            // since (an event file opened) still refuses cleanly.
            registry.events[i].remove()?;
            registry.events.remove(i)?;
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// Runs on open(); see include/dynprobe/shim.h.
///
/// # Safety
///
/// `text`, `data` and `len` must be valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_open(
    file: dynprobe_file,
    truncate: bool,
    read: bool,
    text: *mut *mut dynprobe_text,
    data: *mut *const u8,
    len: *mut usize,
) -> kernel::ffi::c_int {
    let mut registry = REGISTRY.lock();
    if truncate && control_of(file).is_some() {
        if let Err(e) = clear(file, &mut registry) {
            return e.to_errno();
        }
    }
    if !read {
        return 0;
    }
    let snapshot = match render(file, &registry).and_then(|s| Ok(KBox::new(s, GFP_KERNEL)?)) {
        Ok(s) => s,
        Err(e) => return e.to_errno(),
    };
    // SAFETY: the caller passes pointers valid for writes.
    unsafe {
        *data = snapshot.as_ptr();
        *len = snapshot.len();
        *text = KBox::into_raw(snapshot).cast();
    }
    0
}

/// Frees a snapshot made by `dynprobe_rs_open`.
///
/// # Safety
///
/// `text` must come from `dynprobe_rs_open` and not have been released.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_release(text: *mut dynprobe_text) {
    // SAFETY: per the contract, `text` is a `KBox<Snapshot>` turned into a
    // raw pointer by `dynprobe_rs_open`, released once.
    drop(unsafe { KBox::from_raw(text.cast::<Snapshot>()) });
}

fn subsystem_of(e: &ParseError) -> ErrorSubsystem {
    match e.subsystem {
        lang::Subsystem::Kprobe => ErrorSubsystem::Kprobe,
        lang::Subsystem::Fprobe => ErrorSubsystem::Fprobe,
        lang::Subsystem::Dynevent => ErrorSubsystem::Dynevent,
        lang::Subsystem::Function => ErrorSubsystem::Function,
    }
}

/// Reports a rejected line in error_log and turns it into an errno.
fn reject(e: &ParseError, line: &[u8]) -> Error {
    if e.logged {
        let mut cmd = KVec::new();
        if lang::write_command(e, line, &mut VecWriter(&mut cmd)).is_ok()
            && cmd.push(0, GFP_KERNEL).is_ok()
        {
            let pos = u16::try_from(e.column).unwrap_or(u16::MAX);
            sys::log_error(subsystem_of(e), &cmd, e.code as u8, pos);
        }
    }
    Error::from_errno(-e.errno)
}

fn remove(
    file: dynprobe_file,
    registry: &mut Registry,
    group: Option<&str>,
    event: &str,
    args: &[u8],
) -> Result {
    let mut found = false;
    let mut i = 0;
    while i < registry.events.len() {
        let ev = &mut registry.events[i];
        if owns(file, ev.def().kind()) && ev.def().matches_removal(group, event, args) {
            found = true;
            if ev.busy() {
                return Err(EBUSY);
            }
            ev.remove()?;
            registry.events.remove(i)?;
        } else {
            i += 1;
        }
    }
    if found {
        Ok(())
    } else {
        Err(ENOENT)
    }
}

fn command(file: dynprobe_file, line: &[u8]) -> Result {
    let Some(control) = control_of(file) else {
        return Err(EPERM);
    };
    let mut registry = REGISTRY.lock();
    let mut def = match registry.spare.take() {
        Some(d) => d,
        None => new_definition()?,
    };
    let parsed = lang::parse(control, line, &KernelResolver, &mut def);
    match parsed {
        Ok(Command::Nothing) => {
            registry.spare = Some(def);
            Ok(())
        }
        Ok(Command::Remove {
            group,
            event,
            args,
            kprobes_only: _,
        }) => {
            let ret = remove(file, &mut registry, group, event, args);
            registry.spare = Some(def);
            ret
        }
        Ok(Command::Define) => {
            if def.kind() == ProbeKind::Tracepoint {
                registry.spare = Some(def);
                return Err(eopnotsupp());
            }
            if registry
                .events
                .iter()
                .any(|e| e.def().group() == def.group() && e.def().event() == def.event())
            {
                registry.spare = Some(def);
                return Err(EEXIST);
            }
            registry.events.reserve(1, GFP_KERNEL)?;
            let ev = Event::create(def)?;
            registry.events.push(ev, GFP_KERNEL)?;
            Ok(())
        }
        Err(e) => {
            registry.spare = Some(def);
            Err(reject(&e, line))
        }
    }
}

/// Runs one command line written to a control file.
///
/// # Safety
///
/// `line` must point to `len` readable bytes followed by a NUL byte.
#[no_mangle]
pub(crate) unsafe extern "C" fn dynprobe_rs_command(
    file: dynprobe_file,
    line: *const u8,
    len: usize,
) -> kernel::ffi::c_int {
    // SAFETY: per the contract, `line` holds `len` bytes.
    let line = unsafe { core::slice::from_raw_parts(line, len) };
    match command(file, line) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}
