// SPDX-License-Identifier: GPL-2.0

//! Who made each event through the in-kernel API (src/api/): the
//! control files record it, and remove an owner's events when it unloads.

use kernel::prelude::*;

use crate::control::FileId;

/// What an owner made, as the file and the line that remove it: `!NAME`
/// in `synthetic_events`, or `-:GROUP/EVENT` in the file it was made
/// through. The line is made with the record, so that the owner's unload
/// needs no memory to remove its events.
struct Made {
    file: FileId,
    line: KVec<u8>,
}

impl Made {
    fn new(file: FileId, parts: &[&[u8]]) -> Result<Self> {
        let mut line = KVec::with_capacity(parts.iter().map(|p| p.len()).sum(), GFP_KERNEL)?;
        for part in parts {
            line.extend_from_slice(part, GFP_KERNEL)?;
        }
        Ok(Made { file, line })
    }

    /// Whether the event it names is still there.
    fn exists(&self, now: &mut impl Existing) -> bool {
        match self.file {
            FileId::SyntheticEvents => now.synthetic(self.line.get(1..).unwrap_or(&[])),
            _ => {
                let name = self.line.get(2..).unwrap_or(&[]);
                let slash = name.iter().position(|&c| c == b'/').unwrap_or(name.len());
                let (group, event) = name.split_at(slash);
                now.probe(group, event.get(1..).unwrap_or(&[]))
            }
        }
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

impl Owners {
    pub(crate) const fn new() -> Self {
        Owners { owned: KVec::new() }
    }

    /// Records `owner` (not null) as the maker of synthetic event `name`.
    pub(crate) fn synthetic(&mut self, owner: usize, name: &[u8]) -> Result {
        let made = Made::new(FileId::SyntheticEvents, &[b"!", name])?;
        self.owned.push(Owned { owner, made }, GFP_KERNEL)?;
        Ok(())
    }

    /// Records `owner` (not null) as the maker of probe event
    /// `group/event`, made through `file`.
    pub(crate) fn probe(&mut self, owner: usize, file: FileId, group: &str, event: &str) -> Result {
        let parts: [&[u8]; 4] = [b"-:", group.as_bytes(), b"/", event.as_bytes()];
        let made = Made::new(file, &parts)?;
        self.owned.push(Owned { owner, made }, GFP_KERNEL)?;
        Ok(())
    }

    /// Drops the records of events that are gone (removed through a
    /// control file, or the kernel's files for synthetic events).
    pub(crate) fn prune(&mut self, now: &mut impl Existing) {
        if self.owned.is_empty() {
            return;
        }
        self.owned.retain(|o| o.made.exists(now));
    }

    /// Takes out the oldest record of `owner`'s events, as the file and
    /// the line that removes it. Needs no memory.
    pub(crate) fn take(&mut self, owner: usize) -> Option<(FileId, KVec<u8>)> {
        let i = self.owned.iter().position(|o| o.owner == owner)?;
        let made = self.owned.remove(i).ok()?.made;
        Some((made.file, made.line))
    }

    /// Forgets every record (module exit).
    pub(crate) fn clear(&mut self) {
        self.owned = KVec::new();
    }
}
