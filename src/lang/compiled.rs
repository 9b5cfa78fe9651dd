// SPDX-License-Identifier: GPL-2.0
//! The compact form of a compiled definition: what a probe keeps after its
//! line was parsed, sized to that line.
//!
//! The parser works in a [`Definition`] with room for the largest legal
//! line (tens of KiB); a probe with three arguments needs a few hundred
//! bytes of it. The language allocates nothing, so its owner sizes the
//! storage ([`Definition::frozen_sizes`]), fills it from the definition
//! ([`Definition::args`], [`Definition::entry_args`],
//! [`Definition::write_frozen_text`]) and hands it to
//! [`Definition::freeze`], which checks it and keeps the scalars beside it.

use core::fmt::{self, Write};

use crate::lang::def::Definition;
use crate::lang::interp::{HeaderIps, Memory, Regs};
use crate::lang::record::ProbeArg;
use crate::lang::view::{DefView, Names, Scalars};

/// The variable-length parts of a compiled definition, in storage its
/// owner allocated.
pub trait Storage {
    /// The arguments, as [`Definition::args`] gave them.
    fn args(&self) -> &[ProbeArg];
    /// The saved entry parameters, as [`Definition::entry_args`] gave them.
    fn entry_args(&self) -> &[u16];
    /// The names, as [`Definition::write_frozen_text`] wrote them.
    fn text(&self) -> &str;
}

/// How much storage a definition's compact form needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrozenSizes {
    /// Number of arguments.
    pub args: usize,
    /// Number of saved entry parameters.
    pub entry_args: usize,
    /// Bytes of text.
    pub text: usize,
}

/// A compiled definition in storage sized to it.
pub struct Compiled<S> {
    scalars: Scalars,
    /// Where `group`, `event` and `symbol` end in the text; the function
    /// event text is the rest.
    ends: [usize; 3],
    store: S,
}

impl Definition {
    /// The four names of the compact form, in their order in its text.
    fn frozen_names(&self) -> [&str; 4] {
        [
            self.group(),
            self.event(),
            self.symbol.as_str(),
            self.fe_text.as_str(),
        ]
    }

    /// What [`Definition::freeze`] needs the storage to hold.
    pub fn frozen_sizes(&self) -> FrozenSizes {
        FrozenSizes {
            args: self.args().len(),
            entry_args: self.entry_args().len(),
            text: self.frozen_names().iter().map(|s| s.len()).sum(),
        }
    }

    /// Writes the names the compact form keeps, one after the other.
    pub fn write_frozen_text<W: Write>(&self, w: &mut W) -> fmt::Result {
        self.frozen_names().iter().try_for_each(|s| w.write_str(s))
    }

    /// The compact form of this definition in `store`, which must hold
    /// exactly what [`Definition::args`], [`Definition::entry_args`] and
    /// [`Definition::write_frozen_text`] give; `None` when it does not.
    pub fn freeze<S: Storage>(&self, store: S) -> Option<Compiled<S>> {
        let names = self.frozen_names();
        let mut ends = [0usize; 3];
        let mut at = 0usize;
        for (i, name) in names.iter().enumerate() {
            let end = at.checked_add(name.len())?;
            if store.text().get(at..end)? != *name {
                return None;
            }
            if let Some(e) = ends.get_mut(i) {
                *e = end;
            }
            at = end;
        }
        let same_args = store.args().len() == self.args().len()
            && store
                .args()
                .iter()
                .zip(self.args())
                .all(|(a, b)| a.is_same(b));
        if at != store.text().len() || !same_args || store.entry_args() != self.entry_args() {
            return None;
        }
        Some(Compiled {
            scalars: self.scalars(),
            ends,
            store,
        })
    }
}

impl<S: Storage> Compiled<S> {
    /// The definition as every reader sees it.
    pub fn view(&self) -> DefView<'_> {
        let text = self.store.text();
        let [g, e, s] = self.ends;
        let names = Names {
            group: text.get(..g).unwrap_or(""),
            event: text.get(g..e).unwrap_or(""),
            symbol: text.get(e..s).unwrap_or(""),
            fe_text: text.get(s..).unwrap_or(""),
        };
        self.view_with(names)
    }

    /// [`DefView::record`] of the definition, for a probe handler: a
    /// record of steps is written from the scalars alone, without making a
    /// view first.
    pub fn record(
        &self,
        regs: &impl Regs,
        mem: &impl Memory,
        ips: HeaderIps,
        out: &mut [u8],
    ) -> usize {
        self.scalars
            .record_by_plan(|| self.record_view(), regs, mem, ips, out)
    }

    /// How many entry-data slots a return probe saves at entry.
    pub fn entry_slots(&self) -> usize {
        self.store.entry_args().len()
    }

    /// The view a probe handler needs: layout, programs and saved entry
    /// parameters, without the names (slicing them out of the text would
    /// cost every hit something for nothing).
    pub fn record_view(&self) -> DefView<'_> {
        self.view_with(Names::NONE)
    }

    fn view_with<'a>(&'a self, names: Names<'a>) -> DefView<'a> {
        DefView::new(
            self.scalars,
            names,
            self.store.args(),
            self.store.entry_args(),
        )
    }
}
