// SPDX-License-Identifier: GPL-2.0

//! What one line written to a control file does: a removal, a
//! definition, or a synthetic event's line, run under the registry lock.

use kernel::prelude::*;

use super::{control_of, FileId};
use crate::control::define::define;
use crate::control::registry::{Registry, REGISTRY};
use crate::control::rejection::reject;
use crate::control::removal::remove;
use crate::event::synth::SynthRefusal;
use crate::event::{compile, new_definition};
use crate::lang::{self, Command, Control, SynthCommand, SynthSource};
use crate::probe::resolver::{self, KernelResolver};

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

pub(super) fn command(file: FileId, line: &[u8]) -> Result {
    run(&mut REGISTRY.lock(), file, line)
}

/// Runs one line; the owners of events it removes are forgotten.
pub(super) fn run(registry: &mut Registry, file: FileId, line: &[u8]) -> Result {
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
