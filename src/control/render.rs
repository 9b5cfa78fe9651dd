// SPDX-License-Identifier: GPL-2.0

//! What reading a control file shows: the snapshot an open file keeps,
//! rendered from the registry (definitions as their files list them,
//! probe counts, fetch programs, README, synthetic events).

use core::fmt::Write;

use kernel::prelude::*;

use super::{owns, FileId, Snapshot};
use crate::control::readme::{README, README_EPROBE, README_EPROBE_FILTER};
use crate::control::registry::Registry;
use crate::sys::VecWriter;

pub(super) fn render(file: FileId, registry: &mut Registry) -> Result<Snapshot> {
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
        FileId::UprobeProfile => {
            // probes_profile_seq_show(): each probe's file and hits; a
            // return probe with entry arguments (which the kernel's
            // cannot have) adds its misses, as kprobe_profile's column.
            for ev in registry
                .events
                .iter()
                .filter(|e| owns(file, e.def().kind()))
            {
                for (def, (hits, misses)) in ev.defs().zip(ev.counts()) {
                    let path = def.uprobe_place().map_or("", |u| u.0);
                    write!(w, "  {} {:<44} {:>15}", path, def.event(), hits).map_err(|_| ENOMEM)?;
                    if !def.entry_args().is_empty() {
                        write!(w, " {:>15}", misses).map_err(|_| ENOMEM)?;
                    }
                    w.write_char('\n').map_err(|_| ENOMEM)?;
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
