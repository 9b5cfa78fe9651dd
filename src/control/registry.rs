// SPDX-License-Identifier: GPL-2.0

//! The registry of definitions: every event dynprobe made, the parser's
//! workspace, the synthetic events and who made each event through the
//! API, under the one lock ([`REGISTRY`]) every control-file change and
//! read takes.

use kernel::alloc::KVBox;
use kernel::prelude::*;
use kernel::sync::global_lock;

use crate::control::owners::{Existing, Owners};
use crate::event::synth::SynthEvents;
use crate::event::Event;
use crate::lang::Definition;

/// Every definition, in creation order, and the workspace lines are
/// parsed into (allocated once, for the largest legal line). One lock
/// serialises all changes: they are rare next to the tracing they set up,
/// and probe handlers never take it.
pub(super) struct Registry {
    pub(super) events: KVec<Event>,
    pub(super) workspace: Option<KVBox<Definition>>,
    /// Synthetic events (`synthetic_events`, and `s:` in `dynamic_events`).
    pub(super) synth: SynthEvents,
    /// Which module made each event made through the in-kernel API.
    pub(super) owners: Owners,
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
    pub(super) fn prune_owners(&mut self) {
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
    pub(super) unsafe(uninit) static REGISTRY: Mutex<Registry> = Registry::new();
}
