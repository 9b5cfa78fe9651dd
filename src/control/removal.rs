// SPDX-License-Identifier: GPL-2.0

//! Removing definitions: a clear of a control file, and `-:`/`!` lines.
//! All or nothing (`EBUSY` when one of the events is held), event probes
//! before the events they probe, and without allocating.

use kernel::prelude::*;

use super::{control_of, owns, FileId};
use crate::control::registry::Registry;
use crate::event::{self, Event, EventsLock};
use crate::lang::{self, Control};

/// Whether removing the events `in_set` picks must be refused: one of
/// them is held from outside the set (enabled, perf, a reference that is
/// not one of dynprobe's own event probes', or an event probe of
/// dynprobe's that the set does not include).
pub(super) fn set_refused(
    events: &[Event],
    in_set: &impl Fn(&Event) -> bool,
    lock: &EventsLock,
) -> bool {
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
pub(super) fn set_closing(
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
pub(super) fn owned_by(file: FileId) -> impl Fn(&Event) -> bool {
    move |e: &Event| owns(file, e.def().kind())
}

/// Removes the definitions `file` owns; nothing if one of them is held
/// from outside them.
pub(super) fn clear(file: FileId, registry: &mut Registry) -> Result {
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

/// `-:` / `!` lines: every matching definition goes; a probe of a
/// multi-probe event goes alone when its siblings do not match. All or
/// nothing: when one of the events it touches is in use (`EBUSY`),
/// nothing goes. Event probes among the events it removes go before the
/// events they probe (`-:GROUP/` with both in the group).
pub(super) fn remove(
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
