// SPDX-License-Identifier: GPL-2.0

//! The control files' behaviour: what opening, reading and writing
//! `dynprobe/*` does. Called from their file operations
//! (src/control/files.rs). This file holds the control path's entry
//! points: module init and exit, open() and write() of a control file
//! (a clear, a snapshot, a write cut into lines) and the in-kernel API's
//! (src/api/mod.rs), with the names of the files. What they run is in
//! files of their own: the registry (`registry.rs`), one line
//! (`command.rs`: definitions in `define.rs`, removals and clears in
//! `removal.rs`, refusals reported in `rejection.rs`) and a read
//! (`render.rs`).

mod command;
mod define;
pub(crate) mod error_log;
pub(crate) mod error_table;
pub(crate) mod files;
pub(crate) mod owners;
pub(crate) mod readme;
mod registry;
mod rejection;
mod removal;
mod render;

use kernel::prelude::*;

use self::command::{command, run};
use self::registry::REGISTRY;
use self::removal::{clear, owned_by, set_closing, set_refused};
use self::render::render;
use crate::event::{self, EventsLock};
use crate::lang::{self, Control, Cut, ProbeKind};
use crate::sys::bindings as b;

/// Prepares the registry; called once from module init.
pub(crate) fn init() {
    // SAFETY: called exactly once, before any use of REGISTRY.
    unsafe { REGISTRY.init() };
    event::init();
}

/// Removes every definition; called from module exit after the files are
/// gone. Enabled events hold a module reference, so none is enabled here.
pub(crate) fn exit() {
    let mut registry = REGISTRY.lock();
    registry.owners.clear();
    registry.synth.exit();
    // One wait for the hits of every event enabled since the last one,
    // rather than one per event as each goes. None is enabled now (each
    // enable holds the module) or can be (the module is going).
    event::wait_for_hits(registry.events.iter(), &EventsLock::lock_probes());
    while registry.events.pop().is_some() {}
    // A static is never dropped: its buffers are freed here or never.
    registry.events = KVec::new();
    registry.workspace = None;
}

/// A file under tracefs `dynprobe/`, in the order `files.rs` creates
/// them; its number (its index in [`FileId::ALL`]) is what tracefs keeps
/// for it and what the in-kernel API names it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileId {
    FunctionEvents,
    KprobeEvents,
    DynamicEvents,
    KprobeProfile,
    Readme,
    SyntheticEvents,
    FetchPrograms,
    UprobeEvents,
    UprobeProfile,
}

impl FileId {
    /// Every file, by number.
    pub(crate) const ALL: [FileId; 9] = [
        FileId::FunctionEvents,
        FileId::KprobeEvents,
        FileId::DynamicEvents,
        FileId::KprobeProfile,
        FileId::Readme,
        FileId::SyntheticEvents,
        FileId::FetchPrograms,
        FileId::UprobeEvents,
        FileId::UprobeProfile,
    ];

    /// The file's number.
    pub(crate) fn number(self) -> usize {
        self as usize
    }

    /// The file of number `n`, if there is one.
    pub(crate) fn from_number(n: usize) -> Option<FileId> {
        FileId::ALL.get(n).copied()
    }
}

/// Which definitions a control file lists, clears and may remove
/// (`kprobe_profile` and `uprobe_profile` count the probes
/// `kprobe_events` and `uprobe_events` list).
fn owns(file: FileId, kind: ProbeKind) -> bool {
    let control = match file {
        FileId::KprobeProfile => Some(Control::KprobeEvents),
        FileId::UprobeProfile => Some(Control::UprobeEvents),
        _ => control_of(file),
    };
    control.is_some_and(|c| kind.family().listed_in(c))
}

fn control_of(file: FileId) -> Option<Control> {
    match file {
        FileId::KprobeEvents => Some(Control::KprobeEvents),
        FileId::UprobeEvents => Some(Control::UprobeEvents),
        FileId::DynamicEvents => Some(Control::DynamicEvents),
        FileId::FunctionEvents => Some(Control::FunctionEvents),
        _ => None,
    }
}

/// A snapshot of a file's contents, owned by an open file.
pub(crate) type Snapshot = KVec<u8>;

/// Runs on open(): `truncate` clears the definitions the file owns
/// (failing with `EBUSY`, and removing nothing, if one is in use); `read`
/// asks for a snapshot of the contents, which the open file keeps.
pub(crate) fn open(file: FileId, truncate: bool, read: bool) -> Result<Option<KBox<Snapshot>>> {
    let mut registry = REGISTRY.lock();
    if truncate && file == FileId::SyntheticEvents {
        let cleared = registry.synth.clear()?;
        registry.synth.finish(cleared);
    } else if truncate && file == FileId::DynamicEvents {
        // All or nothing across both kinds. The probe events are checked
        // first and, from then on, take no new enable or reference: a
        // busy probe event refuses the clear before any synthetic event
        // is deleted (deleting one and making it again would lose its
        // filter and triggers), and none can become busy while the
        // synthetic events go (deleting them takes event_mutex, so both
        // kinds cannot go under one hold of it). A busy synthetic event
        // refuses it before any is deleted too (SynthEvents::clear).
        let owned = owned_by(file);
        {
            let lock = EventsLock::lock_probes();
            if set_refused(&registry.events, &owned, &lock) {
                return Err(EBUSY);
            }
            set_closing(&registry.events, &owned, true, &lock);
        }
        let cleared = match registry.synth.clear() {
            Ok(cleared) => cleared,
            Err(e) => {
                set_closing(&registry.events, &owned, false, &EventsLock::lock_probes());
                return Err(e);
            }
        };
        if let Err(e) = clear(file, &mut registry) {
            set_closing(&registry.events, &owned, false, &EventsLock::lock_probes());
            registry.synth.restore(cleared);
            return Err(e);
        }
        registry.synth.finish(cleared);
    } else if truncate && control_of(file).is_some() {
        clear(file, &mut registry)?;
    }
    registry.prune_owners();
    if !read {
        return Ok(None);
    }
    Ok(Some(KBox::new(render(file, &mut registry)?, GFP_KERNEL)?))
}

/// Runs the lines a piece of a write starts with (`ends_write`: the write
/// ends with the piece, so its last line needs no newline) and returns how
/// many bytes it ran, newlines included; 0 when the first line goes on past
/// the piece (too long to run); the error of the first line that failed
/// (the lines before it stay applied).
pub(crate) fn write(file: FileId, piece: &[u8], ends_write: bool) -> Result<usize> {
    let mut used = 0;
    while let Some(rest) = piece.get(used..).filter(|rest| !rest.is_empty()) {
        match lang::cut_line(rest, ends_write) {
            Cut::Line { text, used: n } => {
                command(file, text)?;
                used += n;
            }
            Cut::Unfinished => break,
            Cut::Nul => return Err(EINVAL),
        }
    }
    Ok(used)
}

/// A control file's name, for messages.
pub(crate) fn file_name(file: FileId) -> &'static str {
    match file {
        FileId::SyntheticEvents => "synthetic_events",
        FileId::FunctionEvents => "function_events",
        FileId::KprobeEvents => "kprobe_events",
        FileId::UprobeEvents => "uprobe_events",
        FileId::DynamicEvents => "dynamic_events",
        _ => "?",
    }
}

/// Runs a line from another module (src/api/mod.rs), exactly as a line
/// written to `file`, and records `owner` (a `struct module`, or 0) as
/// the owner of the event it makes. A probe added to an existing event
/// belongs to that event's owner.
pub(crate) fn api_command(file: FileId, line: &[u8], owner: usize) -> Result {
    let mut guard = REGISTRY.lock();
    let registry = &mut *guard;
    registry.prune_owners();
    let events = registry.events.len();
    let synths = registry.synth.len();
    run(registry, file, line)?;
    if owner == 0 {
        return Ok(());
    }
    if registry.events.len() == events + 1 {
        let Some(ev) = registry.events.last() else {
            return Ok(());
        };
        let (group, event) = (ev.def().group(), ev.def().event());
        if let Err(e) = registry.owners.probe(owner, file, group, event) {
            // Not left behind unowned: it would outlive its module.
            if let Some(mut ev) = registry.events.pop() {
                let _ = ev.remove();
            }
            return Err(e);
        }
    } else if registry.synth.len() == synths + 1 {
        let Some(name) = registry.synth.last_name() else {
            return Ok(());
        };
        if let Err(e) = registry.owners.synthetic(owner, name) {
            let name = KVec::from_elem(0u8, 0, GFP_KERNEL).and_then(|mut v| {
                v.extend_from_slice(name, GFP_KERNEL)?;
                Ok(v)
            });
            if let Ok(name) = name {
                let _ = registry.synth.remove(&name);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Removes the events `owner` made, as it unloads, without allocating;
/// tells `refused` of each removal that failed, with the line, the file
/// and the error (an event in use stays, for its control file to remove).
pub(crate) fn owner_gone(owner: usize, mut refused: impl FnMut(&[u8], FileId, Error)) {
    let mut registry = REGISTRY.lock();
    registry.prune_owners();
    while let Some((file, line)) = registry.owners.take(owner) {
        if let Err(e) = run(&mut registry, file, &line) {
            refused(&line, file, e);
        }
    }
}

/// Gets the file of dynprobe's event `system/event` with `get` while no
/// definition can change: with whether it is a synthetic event (the
/// synthetic system's, made by dynprobe), or `ENOENT` when dynprobe has
/// no such event.
pub(crate) fn event_get(
    system: &[u8],
    event: &[u8],
    synthetic: bool,
    get: impl FnOnce() -> *mut b::trace_event_file,
) -> Result<(*mut b::trace_event_file, bool)> {
    let mut registry = REGISTRY.lock();
    let synth = synthetic && registry.synth.owns(event);
    let probe = || {
        registry
            .events
            .iter()
            .any(|e| e.def().group().as_bytes() == system && e.def().event().as_bytes() == event)
    };
    if !synth && !probe() {
        return Err(ENOENT);
    }
    let file = kernel::error::from_err_ptr(get())?;
    Ok((file, synth))
}
