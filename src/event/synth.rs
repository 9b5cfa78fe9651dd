// SPDX-License-Identifier: GPL-2.0

//! The synthetic events dynprobe made, through the kernel's exported
//! synthetic event API ([`tracing_core`]): they are the kernel's own
//! synthetic events, so hist triggers' `onmatch().trace()`, `onmax()` and
//! `onchange()` actions find them by name like any other.
//!
//! They are kept by name, with the print fmt the kernel gave them: the
//! kernel's `synthetic_events` and `dynamic_events` may delete one behind
//! dynprobe's back, and an event of that name made there afterwards is not
//! dynprobe's unless it is the same event. Each use of the list first
//! drops what is no longer there.

mod tracing_core;

use kernel::prelude::*;

use crate::lang::{self, SynthCommand, SynthDef, SynthSource};
use crate::sys::bindings as b;
use crate::sys::VecWriter;

/// One event dynprobe made.
struct SynthEvent {
    /// The name, NUL-terminated.
    name: KVec<u8>,
    /// `NAME\tFIELDS`, as `synthetic_events` lists it; written to it, it
    /// makes the same event again.
    listing: KVec<u8>,
    /// The event's print fmt once made.
    print_fmt: KVec<u8>,
}

/// A command's name or field text as a C string.
fn c_string(parts: &[&[u8]]) -> Result<KVec<u8>> {
    let len = parts.iter().map(|p| p.len()).sum::<usize>() + 1;
    let mut s = KVec::with_capacity(len, GFP_KERNEL)?;
    for p in parts {
        s.extend_from_slice(p, GFP_KERNEL)?;
    }
    s.push(0, GFP_KERNEL)?;
    Ok(s)
}

/// The print fmt of synthetic event `name` (NUL-terminated): `None` when
/// there is no such event.
fn kernel_print_fmt(name: &[u8]) -> Result<Option<KVec<u8>>> {
    tracing_core::print_fmt(name)
}

impl SynthEvent {
    /// Makes the event `def` defines, or fails with the kernel's errno.
    fn create(def: &SynthDef<'_>) -> Result<Self> {
        let name = c_string(&[def.name()])?;
        let count = def.fields().count();
        let mut texts = KVec::with_capacity(2 * count, GFP_KERNEL)?;
        for f in def.fields() {
            let mut ty = KVec::new();
            f.write_type(&mut VecWriter(&mut ty)).map_err(|_| ENOMEM)?;
            texts.push(c_string(&[&ty])?, GFP_KERNEL)?;
            texts.push(c_string(&[f.name()])?, GFP_KERNEL)?;
        }
        let mut descs = KVec::with_capacity(count, GFP_KERNEL)?;
        for pair in texts.chunks(2) {
            let [ty, field] = pair else {
                return Err(EINVAL);
            };
            descs.push(
                b::synth_field_desc {
                    type_: ty.as_ptr().cast(),
                    name: field.as_ptr().cast(),
                },
                GFP_KERNEL,
            )?;
        }
        let mut listing = KVec::new();
        def.write_listing(&mut VecWriter(&mut listing))
            .map_err(|_| ENOMEM)?;
        tracing_core::create(&name, &mut descs)?;
        // The tracing core registers an event whose file in the top trace
        // instance it could not allocate (it only warns): such an event
        // would not be found (`alive()`), so dynprobe would forget it while
        // its name stays taken. It is deleted again, and the write fails
        // with ENOMEM. So is one whose print fmt cannot be copied, or one
        // with fields missing.
        let fields = tracing_core::fields(&name);
        let print_fmt = match kernel_print_fmt(&name) {
            // The tracing core only warns when it cannot define a field
            // either: the event would lack it in its format and filters.
            Ok(Some(fmt)) if fields.ok() == Some(count) => fmt,
            found => {
                // Nothing uses the event yet.
                let _ = tracing_core::delete(&name);
                return Err(found.err().unwrap_or(ENOMEM));
            }
        };
        Ok(SynthEvent {
            name,
            listing,
            print_fmt,
        })
    }

    /// The name without its NUL.
    fn name(&self) -> &[u8] {
        self.name.split_last().map_or(&[], |(_, name)| name)
    }

    /// Whether the kernel's event of this name is still this one. Asked
    /// by every use of the list, removals and the unload's too, so it
    /// needs no memory: out of it, an event would be forgotten, left to
    /// the kernel. Only a missing event or another print fmt says no.
    fn alive(&self) -> bool {
        match tracing_core::print_fmt_is(&self.name, &self.print_fmt) {
            Ok(same) => same,
            Err(e) => e != ENOENT,
        }
    }

    /// Deletes the kernel's event (`EBUSY` while it is in use).
    fn delete(&self) -> Result {
        tracing_core::delete(&self.name)
    }

    /// Whether deleting it would be refused now (`EBUSY`): `None` when
    /// that cannot be told ([`tracing_core::busy`] checks the kernel's
    /// event looks as it expects).
    fn busy(&self) -> Option<bool> {
        tracing_core::busy(&self.name)
    }

    /// Makes the event again from its listing, after a clear that could
    /// not finish.
    fn recreate(&self) -> Result<Self> {
        match lang::parse_synth(SynthSource::SyntheticEvents, &self.listing) {
            Ok(SynthCommand::Define(def)) => SynthEvent::create(&def),
            _ => Err(EINVAL),
        }
    }
}

/// How many events a clear deleted: the first ones of the list, which
/// stay listed until the clear is done ([`SynthEvents::finish`]) or undone
/// ([`SynthEvents::restore`]), so that a clear needs no memory to keep
/// them. Nothing else uses the list meanwhile (the control files' lock).
#[must_use]
pub(crate) struct Cleared(usize);

/// Every synthetic event dynprobe made, in creation order. Used under the
/// control files' lock.
pub(crate) struct SynthEvents {
    events: KVec<SynthEvent>,
}

impl SynthEvents {
    pub(crate) const fn new() -> Self {
        SynthEvents {
            events: KVec::new(),
        }
    }

    /// Drops the events that are gone or are not dynprobe's any more.
    fn prune(&mut self) {
        self.events.retain(|e| e.alive());
    }

    fn position(&self, name: &[u8]) -> Option<usize> {
        self.events.iter().position(|e| e.name() == name)
    }

    /// How many events there are (those still there).
    pub(crate) fn len(&mut self) -> usize {
        self.prune();
        self.events.len()
    }

    /// The name of the newest event.
    pub(crate) fn last_name(&self) -> Option<&[u8]> {
        self.events.last().map(|e| e.name())
    }

    /// Whether dynprobe made the event `name` (and it is still there).
    pub(crate) fn owns(&mut self, name: &[u8]) -> bool {
        self.prune();
        self.position(name).is_some()
    }

    /// Makes the event `def` defines (written as `line`); a name taken by
    /// any event of the synthetic system is refused as the kernel refuses
    /// it. Errors to be logged come back as parse errors.
    pub(crate) fn define(&mut self, def: &SynthDef<'_>, line: &[u8]) -> Result<(), SynthRefusal> {
        self.prune();
        let name = c_string(&[def.name()]).map_err(SynthRefusal::Errno)?;
        self.events
            .reserve(1, GFP_KERNEL)
            .map_err(|_| SynthRefusal::Errno(ENOMEM))?;
        if kernel_print_fmt(&name)
            .map_err(SynthRefusal::Errno)?
            .is_some()
        {
            return Err(SynthRefusal::Logged(def.exists_error(line)));
        }
        match SynthEvent::create(def) {
            Ok(ev) => self
                .events
                .push(ev, GFP_KERNEL)
                .map_err(|_| SynthRefusal::Errno(ENOMEM)),
            Err(e) if e == EEXIST => Err(SynthRefusal::Logged(def.exists_error(line))),
            Err(e) => Err(SynthRefusal::Errno(e)),
        }
    }

    /// Removes the event `name`: `ENOENT` when dynprobe has none of that
    /// name, `EBUSY` while it is in use.
    pub(crate) fn remove(&mut self, name: &[u8]) -> Result {
        self.prune();
        let i = self.position(name).ok_or(ENOENT)?;
        self.events[i].delete()?;
        self.events.remove(i)?;
        Ok(())
    }

    /// Removes every event, or none (`EBUSY`) when one is in use. In use
    /// is checked first, so that a refused clear deletes nothing: an event
    /// deleted and made again would have lost its filter, triggers and id.
    /// Only an event taken in use after that check (a hist trigger written
    /// meanwhile), or one whose use cannot be told, makes the clear
    /// delete and make again those it deleted before it. The caller
    /// finishes the clear ([`SynthEvents::finish`]) or undoes it.
    pub(crate) fn clear(&mut self) -> Result<Cleared> {
        self.prune();
        if self.events.iter().any(|e| e.busy() == Some(true)) {
            return Err(EBUSY);
        }
        for i in 0..self.events.len() {
            if let Err(e) = self.events[i].delete() {
                self.restore(Cleared(i));
                return Err(e);
            }
        }
        Ok(Cleared(self.events.len()))
    }

    /// Forgets the events a clear deleted.
    pub(crate) fn finish(&mut self, _cleared: Cleared) {
        // They are no longer there.
        self.prune();
    }

    /// Makes the events a clear deleted again, in their places.
    pub(crate) fn restore(&mut self, cleared: Cleared) {
        for ev in self.events.iter_mut().take(cleared.0) {
            match ev.recreate() {
                Ok(again) => *ev = again,
                Err(_) => pr_warn!(
                    "could not make synthetic event {} again\n",
                    kernel::str::BStr::from_bytes(ev.name())
                ),
            }
        }
        // Those that could not be made again.
        self.prune();
    }

    /// Lists the events: as `synthetic_events` does, or as
    /// `dynamic_events` does (`s:synthetic/` before each).
    pub(crate) fn render(&mut self, out: &mut KVec<u8>, dynamic: bool) -> Result {
        self.prune();
        for ev in self.events.iter() {
            if dynamic {
                out.extend_from_slice(b"s:", GFP_KERNEL)?;
                out.extend_from_slice(lang::SYNTH_SYSTEM.as_bytes(), GFP_KERNEL)?;
                out.push(b'/', GFP_KERNEL)?;
            }
            out.extend_from_slice(&ev.listing, GFP_KERNEL)?;
            out.push(b'\n', GFP_KERNEL)?;
        }
        Ok(())
    }

    /// Deletes every event at unload. One still in use (enabled, or named
    /// by a hist trigger's action) stays, as the kernel's own: nothing of
    /// it is dynprobe's, and the kernel's `synthetic_events` removes it.
    pub(crate) fn exit(&mut self) {
        self.prune();
        for ev in self.events.drain_all() {
            if let Err(e) = ev.delete() {
                pr_warn!(
                    "synthetic event {} is in use ({:?}): left to the kernel's synthetic_events\n",
                    kernel::str::BStr::from_bytes(ev.name()),
                    e
                );
            }
        }
        self.events = KVec::new();
    }
}

/// Why a synthetic event was not made.
pub(crate) enum SynthRefusal {
    /// Refused with an error_log entry.
    Logged(lang::ParseError),
    /// Refused with only an errno (the kernel may have logged it).
    Errno(Error),
}
