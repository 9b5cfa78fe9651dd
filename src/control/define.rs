// SPDX-License-Identifier: GPL-2.0

//! A new definition: a new event, or another probe of an existing one
//! where the kernel would append it, refused as the kernel would
//! otherwise.

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::control::registry::Registry;
use crate::control::rejection::{kernel_error, registration_error};
use crate::event::{CompiledDef, Event};
use crate::lang::{self, JoinRefusal};

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

/// A new definition: a probe of its event if the event exists, else a
/// new event.
pub(super) fn define(registry: &mut Registry, def: Arc<CompiledDef>, line: &[u8]) -> Result {
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
