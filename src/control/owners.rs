// SPDX-License-Identifier: GPL-2.0

//! Who made each event through the in-kernel API (src/api/): the
//! control files record it, and remove an owner's events when it unloads.

use kernel::prelude::*;

use crate::control::FileId;

/// What an owner made: removed with `!NAME` in `synthetic_events`, or
/// `-:GROUP/EVENT` in the file it was made through.
enum Made {
    Synthetic {
        name: KVec<u8>,
    },
    Probe {
        file: FileId,
        group: KVec<u8>,
        event: KVec<u8>,
    },
}

impl Made {
    /// The file and the line that remove the event.
    fn removal(&self) -> Result<(FileId, KVec<u8>)> {
        let mut line = KVec::new();
        let file = match self {
            Made::Synthetic { name } => {
                line.push(b'!', GFP_KERNEL)?;
                line.extend_from_slice(name, GFP_KERNEL)?;
                FileId::SyntheticEvents
            }
            Made::Probe { file, group, event } => {
                line.extend_from_slice(b"-:", GFP_KERNEL)?;
                line.extend_from_slice(group, GFP_KERNEL)?;
                line.push(b'/', GFP_KERNEL)?;
                line.extend_from_slice(event, GFP_KERNEL)?;
                *file
            }
        };
        Ok((file, line))
    }
}

/// One event made through the API, and the module that made it.
struct Owned {
    /// The owner's `struct module`, compared only: a record goes when its
    /// module unloads, before the address can be another module's.
    owner: usize,
    made: Made,
}

/// Every event made through the API whose owner is loaded, used under
/// the control files' lock. A record goes with its event: the owner
/// removes only what it made, never a later event of the same name.
pub(crate) struct Owners {
    owned: KVec<Owned>,
}

/// What exists now, as the control files see it.
pub(crate) trait Existing {
    /// Whether dynprobe's synthetic event `name` exists.
    fn synthetic(&mut self, name: &[u8]) -> bool;
    /// Whether dynprobe's probe event `group/event` exists.
    fn probe(&self, group: &[u8], event: &[u8]) -> bool;
}

fn copy(s: &[u8]) -> Result<KVec<u8>> {
    let mut v = KVec::with_capacity(s.len(), GFP_KERNEL)?;
    v.extend_from_slice(s, GFP_KERNEL)?;
    Ok(v)
}

impl Owners {
    pub(crate) const fn new() -> Self {
        Owners { owned: KVec::new() }
    }

    /// Records `owner` (not null) as the maker of synthetic event `name`.
    pub(crate) fn synthetic(&mut self, owner: usize, name: &[u8]) -> Result {
        let made = Made::Synthetic { name: copy(name)? };
        self.owned.push(Owned { owner, made }, GFP_KERNEL)?;
        Ok(())
    }

    /// Records `owner` (not null) as the maker of probe event
    /// `group/event`, made through `file`.
    pub(crate) fn probe(&mut self, owner: usize, file: FileId, group: &str, event: &str) -> Result {
        let made = Made::Probe {
            file,
            group: copy(group.as_bytes())?,
            event: copy(event.as_bytes())?,
        };
        self.owned.push(Owned { owner, made }, GFP_KERNEL)?;
        Ok(())
    }

    /// Drops the records of events that are gone (removed through a
    /// control file, or the kernel's files for synthetic events).
    pub(crate) fn prune(&mut self, now: &mut impl Existing) {
        if self.owned.is_empty() {
            return;
        }
        self.owned.retain(|o| match &o.made {
            Made::Synthetic { name } => now.synthetic(name),
            Made::Probe { group, event, .. } => now.probe(group, event),
        });
    }

    /// Takes out the records of `owner`'s events, each as the file and
    /// the line that removes it. Every record of `owner` goes, even one
    /// whose line could not be made (out of memory: that event stays).
    pub(crate) fn take(&mut self, owner: usize) -> KVec<(FileId, KVec<u8>)> {
        let mut lines = KVec::new();
        for o in self.owned.iter().filter(|o| o.owner == owner) {
            if let Ok(line) = o.made.removal() {
                if lines.push(line, GFP_KERNEL).is_err() {
                    pr_warn!("out of memory: an event of an unloading module stays\n");
                }
            }
        }
        self.owned.retain(|o| o.owner != owner);
        lines
    }

    /// Forgets every record (module exit).
    pub(crate) fn clear(&mut self) {
        self.owned = KVec::new();
    }
}
