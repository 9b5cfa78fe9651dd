// SPDX-License-Identifier: GPL-2.0

//! An event's probes: most events have one, kept in the event itself; a
//! second (multi-probe events) moves them to a vector of their own.

use kernel::prelude::*;

use crate::probe::Probe;

/// The probes of one event, in the order they were added.
pub(crate) enum ProbeList {
    /// None left (the event is going).
    Empty,
    /// One probe, with no allocation of the list's own.
    One(Probe),
    /// Two or more (or fewer, after removals).
    Many(KBox<KVec<Probe>>),
}

// In the event's 256-byte object, no larger than the vector it replaced.
const _: () = assert!(core::mem::size_of::<ProbeList>() <= 24);

impl ProbeList {
    /// The probes, first one first.
    pub(crate) fn as_slice(&self) -> &[Probe] {
        match self {
            ProbeList::Empty => &[],
            ProbeList::One(probe) => core::slice::from_ref(probe),
            ProbeList::Many(probes) => probes,
        }
    }

    /// Makes room for one more probe, so that [`ProbeList::push`] cannot
    /// fail once this succeeded.
    pub(crate) fn reserve_one(&mut self) -> Result {
        match self {
            ProbeList::Empty => Ok(()),
            ProbeList::One(_) => {
                let probes = KBox::new(KVec::with_capacity(2, GFP_KERNEL)?, GFP_KERNEL)?;
                let ProbeList::One(first) = core::mem::replace(self, ProbeList::Many(probes))
                else {
                    return Ok(());
                };
                if let ProbeList::Many(probes) = self {
                    // Within the capacity just allocated.
                    probes.push(first, GFP_KERNEL)?;
                }
                Ok(())
            }
            ProbeList::Many(probes) => Ok(probes.reserve(1, GFP_KERNEL)?),
        }
    }

    /// Adds `probe` last; after [`ProbeList::reserve_one`] it does not
    /// fail.
    pub(crate) fn push(&mut self, probe: Probe) -> Result {
        match self {
            ProbeList::Empty => {
                *self = ProbeList::One(probe);
                Ok(())
            }
            ProbeList::One(_) => {
                self.reserve_one()?;
                self.push(probe)
            }
            ProbeList::Many(probes) => Ok(probes.push(probe, GFP_KERNEL)?),
        }
    }

    /// Takes out the probe at `i`.
    pub(crate) fn remove(&mut self, i: usize) -> Result<Probe> {
        match self {
            ProbeList::One(_) if i == 0 => match core::mem::replace(self, ProbeList::Empty) {
                ProbeList::One(probe) => Ok(probe),
                _ => Err(EINVAL),
            },
            ProbeList::Many(probes) => probes.remove(i).map_err(|_| EINVAL),
            _ => Err(EINVAL),
        }
    }

    /// Drops every probe, first one first; each teardown returns once no
    /// handler of the probe runs.
    pub(crate) fn clear(&mut self) {
        match self {
            ProbeList::Many(probes) => probes.clear(),
            _ => *self = ProbeList::Empty,
        }
    }
}
