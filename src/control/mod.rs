// SPDX-License-Identifier: GPL-2.0

//! The control files' behaviour: what opening, reading and writing
//! `dynprobe/*` does. Called from their file operations
//! (src/control/files.rs).

pub(crate) mod error_log;
pub(crate) mod error_table;
pub(crate) mod files;
pub(crate) mod owners;
pub(crate) mod readme;

use core::fmt::Write;

use kernel::alloc::KVBox;
use kernel::prelude::*;
use kernel::sync::{global_lock, Arc};

use crate::control::owners::{Existing, Owners};
use crate::control::readme::{README, README_EPROBE, README_EPROBE_FILTER};
use crate::event::synth::{SynthEvents, SynthRefusal};
use crate::event::{self, compile, new_definition, CompiledDef, Event, EventsLock};
use crate::lang::{
    self, Command, Control, Cut, Definition, JoinRefusal, ParseError, ProbeKind, SynthCommand,
    SynthSource,
};
use crate::probe::resolver::{self, KernelResolver};
use crate::sys::bindings as b;
use crate::sys::VecWriter;

/// Every definition, in creation order, and the workspace lines are
/// parsed into (allocated once, for the largest legal line). One lock
/// serialises all changes: they are rare next to the tracing they set up,
/// and probe handlers never take it.
struct Registry {
    events: KVec<Event>,
    workspace: Option<KVBox<Definition>>,
    /// Synthetic events (`synthetic_events`, and `s:` in `dynamic_events`).
    synth: SynthEvents,
    /// Which module made each event made through the in-kernel API.
    owners: Owners,
}

impl Registry {
    const fn new() -> Self {
        Registry {
            events: KVec::new(),
            workspace: None,
            synth: SynthEvents::new(),
            owners: Owners::new(),
        }
    }

    /// Forgets the owners of events that are gone.
    fn prune_owners(&mut self) {
        let mut now = Now {
            events: &self.events,
            synth: &mut self.synth,
        };
        self.owners.prune(&mut now);
    }
}

/// The events there are, for [`Owners::prune`].
struct Now<'a> {
    events: &'a KVec<Event>,
    synth: &'a mut SynthEvents,
}

impl Existing for Now<'_> {
    fn synthetic(&mut self, name: &[u8]) -> bool {
        self.synth.owns(name)
    }

    fn probe(&self, group: &[u8], event: &[u8]) -> bool {
        self.events
            .iter()
            .any(|e| e.def().group().as_bytes() == group && e.def().event().as_bytes() == event)
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
}

impl FileId {
    /// Every file, by number.
    pub(crate) const ALL: [FileId; 7] = [
        FileId::FunctionEvents,
        FileId::KprobeEvents,
        FileId::DynamicEvents,
        FileId::KprobeProfile,
        FileId::Readme,
        FileId::SyntheticEvents,
        FileId::FetchPrograms,
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
/// (`kprobe_profile` counts the probes `kprobe_events` lists).
fn owns(file: FileId, kind: ProbeKind) -> bool {
    let control = match file {
        FileId::KprobeProfile => Some(Control::KprobeEvents),
        _ => control_of(file),
    };
    control.is_some_and(|c| kind.family().listed_in(c))
}

fn control_of(file: FileId) -> Option<Control> {
    match file {
        FileId::KprobeEvents => Some(Control::KprobeEvents),
        FileId::DynamicEvents => Some(Control::DynamicEvents),
        FileId::FunctionEvents => Some(Control::FunctionEvents),
        _ => None,
    }
}

/// A snapshot of a file's contents, owned by an open file.
pub(crate) type Snapshot = KVec<u8>;

fn render(file: FileId, registry: &mut Registry) -> Result<Snapshot> {
    let mut out = KVec::new();
    let mut w = VecWriter(&mut out);
    match file {
        FileId::Readme => {
            let [head, tail] = README;
            let eprobe = if crate::probe::hook::event_filters() {
                README_EPROBE_FILTER
            } else {
                README_EPROBE
            };
            for part in [head, eprobe, tail] {
                w.0.extend_from_slice(part.as_bytes(), GFP_KERNEL)?;
            }
        }
        FileId::SyntheticEvents => {
            registry.synth.render(w.0, false)?;
        }
        FileId::FetchPrograms => {
            // Every probe definition, as its control file lists it, then
            // what each argument compiled to.
            for ev in registry.events.iter() {
                for def in ev.defs() {
                    def.canonical(&mut w).map_err(|_| ENOMEM)?;
                    w.write_char('\n').map_err(|_| ENOMEM)?;
                    def.write_fetch_programs(&mut w).map_err(|_| ENOMEM)?;
                }
            }
        }
        FileId::KprobeProfile => {
            for ev in registry
                .events
                .iter()
                .filter(|e| owns(file, e.def().kind()))
            {
                for (hits, misses) in ev.counts() {
                    writeln!(w, "  {:<44} {:>15} {:>15}", ev.def().event(), hits, misses)
                        .map_err(|_| ENOMEM)?;
                }
            }
        }
        _ => {
            for ev in registry
                .events
                .iter()
                .filter(|e| owns(file, e.def().kind()))
            {
                for def in ev.defs() {
                    def.canonical(&mut w).map_err(|_| ENOMEM)?;
                    w.write_char('\n').map_err(|_| ENOMEM)?;
                }
            }
            if file == FileId::DynamicEvents {
                registry.synth.render(w.0, true)?;
            }
        }
    }
    Ok(out)
}

/// Whether removing the events `in_set` picks must be refused: one of
/// them is held from outside the set (enabled, perf, a reference that is
/// not one of dynprobe's own event probes', or an event probe of
/// dynprobe's that the set does not include).
fn set_refused(events: &[Event], in_set: &impl Fn(&Event) -> bool, lock: &EventsLock) -> bool {
    events.iter().filter(|e| in_set(e)).any(|e| {
        let (group, event) = (e.def().group(), e.def().event());
        e.held_outside(lock)
            || (e.held_inside(lock)
                && events
                    .iter()
                    .any(|x| !in_set(x) && x.probes_event(group, event)))
    })
}

/// Marks the events `in_set` picks as being removed, or not.
fn set_closing(
    events: &[Event],
    in_set: &impl Fn(&Event) -> bool,
    closing: bool,
    lock: &EventsLock,
) {
    for ev in events.iter().filter(|e| in_set(e)) {
        ev.set_closing(closing, lock);
    }
}

/// The definitions a clear of `file` removes.
fn owned_by(file: FileId) -> impl Fn(&Event) -> bool {
    move |e: &Event| owns(file, e.def().kind())
}

/// Removes the definitions `file` owns; nothing if one of them is held
/// from outside them.
fn clear(file: FileId, registry: &mut Registry) -> Result {
    remove_set(registry, &owned_by(file), &|_: &Event| false)
}

/// Removes the events `in_set` picks, all or (`EBUSY`) none: refused if
/// one of them is held from outside the set, or if an event `busy_check`
/// picks is busy (under the same hold of event_mutex). Event probes among
/// them go before the events they probe, which they hold until their
/// probes are torn down. `in_set` must pick by what an event is, not by
/// where it is in the list. Needs no memory: what a round unlinks moves
/// to the end of the list, and is dropped from there.
fn remove_set(
    registry: &mut Registry,
    in_set: &impl Fn(&Event) -> bool,
    busy_check: &impl Fn(&Event) -> bool,
) -> Result {
    let mut lock = EventsLock::lock();
    // The check and the first removals under one hold of event_mutex, so
    // an event enabled meanwhile cannot make the removal a partial one;
    // what stays for a later round takes no new enable or reference.
    if set_refused(&registry.events, in_set, &lock)
        || registry.events.iter().any(|e| busy_check(e) && e.busy())
    {
        return Err(EBUSY);
    }
    set_closing(&registry.events, in_set, true, &lock);
    // Disabled, and none can be enabled again: one grace period covers
    // the hits of every round.
    event::wait_for_hits(registry.events.iter().filter(|e| in_set(e)), &lock);
    loop {
        // Each round removes what nothing holds any more: the event
        // probes first, then (once their probes are torn down, after
        // event_mutex is released) the events they held. Unlinked
        // events gather at the end of the list, from `end` on, in the
        // order the others keep.
        let mut end = registry.events.len();
        let mut i = 0;
        let mut left = 0;
        let mut failed = None;
        while i < end {
            let ev = &mut registry.events[i];
            if !in_set(ev) {
                i += 1;
            } else if ev.held_inside(&lock) {
                left += 1;
                i += 1;
            } else if let Err(e) = ev.unlink(&lock) {
                set_closing(&registry.events, in_set, false, &lock);
                failed = Some(e);
                break;
            } else {
                registry.events[i..end].rotate_left(1);
                end -= 1;
            }
        }
        let removed = end < registry.events.len();
        drop(lock);
        // The probes are torn down with event_mutex released.
        registry.events.truncate(end);
        if let Some(e) = failed {
            return Err(e);
        }
        if left == 0 {
            return Ok(());
        }
        lock = EventsLock::lock();
        if !removed {
            // Held by nothing this removal takes (not reached: the check
            // above refused such holds).
            set_closing(&registry.events, in_set, false, &lock);
            return Err(EBUSY);
        }
    }
}

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

/// Reports a rejected line in error_log and turns it into an errno.
pub(crate) fn reject(e: &ParseError, line: &[u8]) -> Error {
    if e.logged {
        let mut cmd = KVec::new();
        // Bytes as written: error_log shows them unconverted.
        let mut put = |b: &[u8]| {
            cmd.extend_from_slice(b, GFP_KERNEL)
                .map_err(|_| core::fmt::Error)
        };
        if lang::write_command(e, line, &mut put).is_ok() && cmd.push(0, GFP_KERNEL).is_ok() {
            let pos = u16::try_from(e.column).unwrap_or(u16::MAX);
            error_log::log(e.subsystem, &cmd, e.code as u8, pos);
        }
    }
    Error::from_errno(-e.errno)
}

/// `-:` / `!` lines: every matching definition goes; a probe of a
/// multi-probe event goes alone when its siblings do not match. All or
/// nothing: when one of the events it touches is in use (`EBUSY`),
/// nothing goes. Event probes among the events it removes go before the
/// events they probe (`-:GROUP/` with both in the group).
fn remove(
    file: FileId,
    registry: &mut Registry,
    group: Option<&str>,
    event: &str,
    args: &[u8],
) -> Result {
    let matching = |ev: &Event| {
        ev.defs()
            .filter(|d| owns(file, d.kind()) && d.matches_removal(group, event, args))
            .count()
    };
    let whole = |ev: &Event| {
        let n = matching(ev);
        n > 0 && n == ev.nr_probes()
    };
    let partly = |ev: &Event| {
        let n = matching(ev);
        n > 0 && n < ev.nr_probes()
    };
    let mut found = registry.events.iter().any(|e| matching(e) > 0);
    // The whole events first, refused (nothing removed) if one of them or
    // an event whose probes go alone is in use.
    if found {
        remove_set(registry, &whole, &partly)?;
    }
    for ev in registry.events.iter_mut().filter(|e| partly(e)) {
        if ev.busy() {
            // Enabled since the check above.
            return Err(EBUSY);
        }
        let mut p = 0;
        while p < ev.nr_probes() {
            let hit = ev
                .defs()
                .nth(p)
                .is_some_and(|d| owns(file, d.kind()) && d.matches_removal(group, event, args));
            if hit {
                ev.remove_probe(p)?;
            } else {
                p += 1;
            }
        }
    }
    // dynamic_events also removes a synthetic event of that name.
    let synthetic = group.is_none_or(|g| g == lang::SYNTH_SYSTEM);
    if control_of(file) == Some(Control::DynamicEvents)
        && synthetic
        && registry.synth.owns(event.as_bytes())
    {
        registry.synth.remove(event.as_bytes())?;
        found = true;
    }
    if found {
        Ok(())
    } else {
        Err(ENOENT)
    }
}

/// A line of `synthetic_events`, or an `s:` line of `dynamic_events`.
fn synth_command(registry: &mut Registry, source: SynthSource, line: &[u8]) -> Result {
    match lang::parse_synth(source, line) {
        Ok(SynthCommand::Nothing) => Ok(()),
        Ok(SynthCommand::Remove { name }) => registry.synth.remove(name),
        Ok(SynthCommand::Define(def)) => match registry.synth.define(&def, line) {
            Ok(()) => Ok(()),
            Err(SynthRefusal::Logged(e)) => Err(reject(&e, line)),
            Err(SynthRefusal::Errno(e)) => Err(e),
        },
        Err(ref e) => Err(reject(e, line)),
    }
}

/// Column of word `index` in the command as error_log shows it (words
/// joined by single spaces).
fn word_column(line: &[u8], index: usize) -> usize {
    line.split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .take(index)
        .map(|w| w.len() + 1)
        .sum()
}

/// A rejection of the kernel's making (not the parser's): logged like a
/// parse error, at word `index` of the line.
fn kernel_error(
    kind: ProbeKind,
    line: &[u8],
    code: lang::ErrorCode,
    index: usize,
    errno: Error,
) -> Error {
    let e = ParseError {
        code,
        column: word_column(line, index),
        errno: -errno.to_errno(),
        subsystem: kind.family().subsystem(),
        logged: true,
    };
    reject(&e, line)
}

/// A probe the kernel refused to register, reported as the kernel's probe
/// events report it: at the place (word 1), by errno. Running out of
/// memory is not logged, as in the kernel.
fn registration_error(kind: ProbeKind, line: &[u8], e: Error) -> Error {
    // EILSEQ (not named by the kernel crate): a kprobe offset inside an
    // instruction.
    let code = if e.to_errno() == -(kernel::bindings::EILSEQ as i32) {
        lang::ErrorCode::BadInsnBndry
    } else if e == ENOENT {
        lang::ErrorCode::BadProbeAddr
    } else if e == ENOMEM {
        return e;
    } else {
        lang::ErrorCode::FailRegProbe
    };
    kernel_error(kind, line, code, 1, e)
}

/// A definition for an event that exists: appended as another probe of it
/// when the kernel would, refused as the kernel would otherwise.
fn append(ev: &mut Event, def: Arc<CompiledDef>, line: &[u8]) -> Result {
    let first = ev.def();
    let new = def.view();
    let kind = new.kind();
    if let Err(refusal) = kind.joins(first.kind()) {
        let code = match refusal {
            JoinRefusal::OtherFamily => lang::ErrorCode::EventExist,
            JoinRefusal::OtherSite => lang::ErrorCode::DiffProbeType,
        };
        return Err(kernel_error(kind, line, code, 0, EEXIST));
    }
    let diff = first.compare_arg_types(&new);
    if diff != 0 {
        // The kernel counts arguments from word 2 of the line.
        return Err(kernel_error(
            kind,
            line,
            lang::ErrorCode::DiffArgType,
            diff + 1,
            EEXIST,
        ));
    }
    if ev.defs().any(|d| d.same_as(&new)) {
        return Err(kernel_error(
            kind,
            line,
            lang::ErrorCode::SameProbe,
            0,
            EEXIST,
        ));
    }
    ev.add_probe(def)
        .map_err(|e| registration_error(kind, line, e))
}

fn command(file: FileId, line: &[u8]) -> Result {
    run(&mut REGISTRY.lock(), file, line)
}

/// Runs one line; the owners of events it removes are forgotten.
fn run(registry: &mut Registry, file: FileId, line: &[u8]) -> Result {
    registry.prune_owners();
    let ret = run_line(registry, file, line);
    registry.prune_owners();
    ret
}

fn run_line(registry: &mut Registry, file: FileId, line: &[u8]) -> Result {
    if file == FileId::SyntheticEvents {
        return synth_command(registry, SynthSource::SyntheticEvents, line);
    }
    let Some(control) = control_of(file) else {
        return Err(EPERM);
    };
    if control == Control::DynamicEvents && lang::is_synth_line(line) {
        return synth_command(registry, SynthSource::DynamicEvents, line);
    }
    // A removal needs no workspace: it goes before one is allocated (the
    // first line a file is written may be one).
    match lang::parse_removal(control, line) {
        Some(Ok(Command::Remove {
            group, event, args, ..
        })) => return remove(file, registry, group, event, args),
        Some(Ok(_)) => return Ok(()),
        Some(Err(ref e)) => return Err(reject(e, line)),
        None => {}
    }
    resolver::btf_init();
    let mut def = match registry.workspace.take() {
        Some(d) => d,
        None => new_definition()?,
    };
    let parsed = lang::parse(control, line, &KernelResolver::new(), &mut def);
    let ret = match parsed {
        Ok(Command::Nothing) => Ok(()),
        Ok(Command::Remove {
            group, event, args, ..
        }) => remove(file, registry, group, event, args),
        // Frozen into its own allocation, so that the workspace can take
        // the next line.
        Ok(Command::Define) => compile(&def).and_then(|c| define(registry, c, line)),
        Err(ref e) => Err(reject(e, line)),
    };
    registry.workspace = Some(def);
    ret
}

/// A new definition: a probe of its event if the event exists, else a
/// new event.
fn define(registry: &mut Registry, def: Arc<CompiledDef>, line: &[u8]) -> Result {
    let view = def.view();
    let kind = view.kind();
    let existing = registry
        .events
        .iter()
        .position(|e| e.def().group() == view.group() && e.def().event() == view.event());
    if let Some(i) = existing {
        return append(&mut registry.events[i], def, line);
    }
    registry.events.reserve(1, GFP_KERNEL)?;
    match Event::create(def) {
        Ok(ev) => {
            registry.events.push(ev, GFP_KERNEL)?;
            Ok(())
        }
        Err(e) if e == EEXIST => {
            // Taken by an event that is not dynprobe's.
            Err(kernel_error(
                kind,
                line,
                lang::ErrorCode::EventExist,
                0,
                EEXIST,
            ))
        }
        Err(e) => Err(registration_error(kind, line, e)),
    }
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

/// error_log's caret column for a word of the command: the kernel joins
/// the words by single spaces whatever separated them.
#[kernel::macros::kunit_tests(dynprobe_word_column)]
mod kunit {
    use super::word_column;

    #[test]
    fn word_column_counts_single_spaces() {
        assert_eq!(word_column(b"p:g/e vfs_read a=%di", 0), 0);
        assert_eq!(word_column(b"p:g/e vfs_read a=%di", 1), 6);
        assert_eq!(word_column(b"p:g/e vfs_read a=%di", 2), 15);
        assert_eq!(word_column(b"  p:g/e \t vfs_read\t\ta=%di ", 2), 15);
        // Past the last word: the column after it.
        assert_eq!(word_column(b"p:g/e vfs_read", 5), 15);
        assert_eq!(word_column(b"", 1), 0);
    }
}
