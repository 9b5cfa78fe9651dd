// SPDX-License-Identifier: GPL-2.0

//! An event's probes: most events have one, kept in the event itself; a
//! second (multi-probe events) moves them to a vector of their own.

use kernel::prelude::*;

use crate::probe::Probe;

/// The probes of one event, in the order they were added.
pub(crate) enum ProbeList {
    /// One probe, with no allocation of the list's own.
    One(Probe),
    /// Two or more (or fewer, after removals); none ([`ProbeList::EMPTY`])
    /// before the first and once the event is going. Two variants, not
    /// three: the compiler tells them by the probe's pointer, which is
    /// never null, and the list takes two words, not three.
    Many(Option<KBox<KVec<Probe>>>),
}

// Two words of the event's 192.
const _: () = assert!(core::mem::size_of::<ProbeList>() <= 16);

impl ProbeList {
    /// No probe.
    pub(crate) const EMPTY: ProbeList = ProbeList::Many(None);

    /// The probes, first one first.
    pub(crate) fn as_slice(&self) -> &[Probe] {
        match self {
            ProbeList::Many(None) => &[],
            ProbeList::One(probe) => core::slice::from_ref(probe),
            ProbeList::Many(Some(probes)) => probes,
        }
    }

    /// Makes room for one more probe, so that [`ProbeList::push`] cannot
    /// fail once this succeeded.
    pub(crate) fn reserve_one(&mut self) -> Result {
        match self {
            ProbeList::Many(None) => Ok(()),
            ProbeList::One(_) => {
                let probes = KBox::new(KVec::with_capacity(2, GFP_KERNEL)?, GFP_KERNEL)?;
                let ProbeList::One(first) = core::mem::replace(self, ProbeList::Many(Some(probes)))
                else {
                    return Ok(());
                };
                if let ProbeList::Many(Some(probes)) = self {
                    // Within the capacity just allocated.
                    probes.push(first, GFP_KERNEL)?;
                }
                Ok(())
            }
            ProbeList::Many(Some(probes)) => Ok(probes.reserve(1, GFP_KERNEL)?),
        }
    }

    /// Adds `probe` last; after [`ProbeList::reserve_one`] it does not
    /// fail.
    pub(crate) fn push(&mut self, probe: Probe) -> Result {
        match self {
            ProbeList::Many(None) => {
                *self = ProbeList::One(probe);
                Ok(())
            }
            ProbeList::One(_) => {
                self.reserve_one()?;
                self.push(probe)
            }
            ProbeList::Many(Some(probes)) => Ok(probes.push(probe, GFP_KERNEL)?),
        }
    }

    /// Takes out the probe at `i`.
    pub(crate) fn remove(&mut self, i: usize) -> Result<Probe> {
        match self {
            ProbeList::One(_) if i == 0 => match core::mem::replace(self, ProbeList::EMPTY) {
                ProbeList::One(probe) => Ok(probe),
                _ => Err(EINVAL),
            },
            ProbeList::Many(Some(probes)) => probes.remove(i).map_err(|_| EINVAL),
            _ => Err(EINVAL),
        }
    }

    /// Drops every probe, first one first; each teardown returns once no
    /// handler of the probe runs.
    pub(crate) fn clear(&mut self) {
        match self {
            ProbeList::Many(Some(probes)) => probes.clear(),
            _ => *self = ProbeList::EMPTY,
        }
    }
}
