// SPDX-License-Identifier: GPL-2.0
//! The compact form of a compiled definition: what a probe keeps after its
//! line was parsed, sized to that line.
//!
//! The parser works in a [`Definition`] with room for the largest legal
//! line (tens of KiB); a probe with three arguments needs a few hundred
//! bytes of it. The language allocates nothing, so its owner sizes the
//! storage ([`Definition::frozen_sizes`]), fills it from the definition
//! ([`Definition::frozen_args`], [`Definition::frozen_derefs`],
//! [`Definition::entry_args`], [`Definition::write_frozen_text`]) and
//! hands it to [`Definition::freeze`], which checks it and keeps the
//! scalars beside it.
//!
//! An argument keeps only what it uses: a [`CompactArg`] of a few words,
//! whose name and text are a range of the definition's text and whose
//! dereference offsets are a range of one list shared by all arguments,
//! where the workspace's [`crate::lang::ProbeArg`] has room for the
//! longest of each.

use core::fmt::{self, Write};

use crate::lang::def::Definition;
use crate::lang::interp::{HeaderIps, Memory, Regs};
use crate::lang::record::{CompactArg, CompactArgs};
use crate::lang::view::{Args, DefView, Names, Scalars};
use crate::lang::words::{StringTable, WordTable};
use crate::lang::{
    MAX_ARGSTR_CAP, MAX_DEREFS, MAX_EVENT_NAME_LEN, MAX_FUNCTION_TEXT, MAX_TRACE_ARGS, SYMBOL_CAP,
};

/// The variable-length parts of a compiled definition, in storage its
/// owner allocated.
pub trait Storage {
    /// The arguments, as [`Definition::frozen_args`] gave them.
    fn args(&self) -> &[CompactArg];
    /// The arguments' dereference offsets, as
    /// [`Definition::frozen_derefs`] gave them.
    fn derefs(&self) -> &[i64];
    /// The saved entry parameters, as [`Definition::entry_args`] gave them.
    fn entry_args(&self) -> &[u16];
    /// The names and the arguments' texts, as
    /// [`Definition::write_frozen_text`] wrote them.
    fn text(&self) -> &str;
}

/// How much storage a definition's compact form needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrozenSizes {
    /// Number of arguments.
    pub args: usize,
    /// Number of dereference offsets, all arguments together.
    pub derefs: usize,
    /// Number of saved entry parameters.
    pub entry_args: usize,
    /// Bytes of text.
    pub text: usize,
}

// A compiled argument places its name, text and dereferences with u16s:
// the longest definition's text and dereferences fit them.
const _: () = assert!(
    2 * MAX_EVENT_NAME_LEN
        + SYMBOL_CAP
        + MAX_FUNCTION_TEXT
        + MAX_TRACE_ARGS * (MAX_EVENT_NAME_LEN + MAX_ARGSTR_CAP + 1)
        <= u16::MAX as usize
);
const _: () = assert!(MAX_TRACE_ARGS * MAX_DEREFS <= u16::MAX as usize);

/// How many of the four names have a NUL after them in the compact text:
/// the group and the event.
const NAME_NULS: usize = 2;

/// A compiled definition in storage sized to it.
pub struct Compiled<S> {
    scalars: Scalars,
    /// Where `group`, `event`, `symbol` and the function event text end in
    /// the text; the arguments' names and texts are the rest.
    ends: [u16; 4],
    store: S,
}

impl Definition {
    /// The four names of the compact form, in their order in its text. A
    /// symbol that is the event's name (a function event's, most often)
    /// is kept once: as an empty symbol, which no definition with a
    /// symbol has ([`Compiled::view`] reads it back).
    fn frozen_names(&self) -> [&str; 4] {
        let symbol = self.symbol.as_str();
        let symbol = if self.has_symbol && symbol == self.event() {
            ""
        } else {
            symbol
        };
        [self.group(), self.event(), symbol, self.fe_text.as_str()]
    }

    /// Bytes of the four names, with the NULs after the group and the
    /// event.
    fn frozen_names_len(&self) -> usize {
        self.frozen_names()
            .iter()
            .fold(NAME_NULS, |n, s| n.saturating_add(s.len()))
    }

    /// What [`Definition::freeze`] needs the storage to hold.
    pub fn frozen_sizes(&self) -> FrozenSizes {
        let text = self.args().iter().fold(self.frozen_names_len(), |n, a| {
            n.saturating_add(a.name.len()).saturating_add(a.text.len())
        });
        FrozenSizes {
            args: self.args().len(),
            derefs: self.frozen_derefs().count(),
            entry_args: self.entry_args().len(),
            text,
        }
    }

    /// Writes the text the compact form keeps: the four names, the group
    /// and the event each with a NUL after it (C strings an owner can
    /// point to: [`Compiled::c_names`]), then each argument's name and
    /// text, one after the other.
    pub fn write_frozen_text<W: Write>(&self, w: &mut W) -> fmt::Result {
        self.frozen_names()
            .iter()
            .enumerate()
            .try_for_each(|(i, s)| {
                w.write_str(s)?;
                if i < NAME_NULS {
                    w.write_str("\0")?;
                }
                Ok(())
            })?;
        self.args().iter().try_for_each(|a| {
            w.write_str(a.name())?;
            w.write_str(a.text())
        })
    }

    /// The compact arguments, their names and texts and their dereference
    /// offsets placed where [`Definition::write_frozen_text`] and
    /// [`Definition::frozen_derefs`] put them.
    pub fn frozen_args(&self) -> impl Iterator<Item = CompactArg> + '_ {
        let mut text_at = self.frozen_names_len();
        let mut derefs_at = 0usize;
        // Ends early where a place would not fit (never: see the
        // assertions above), which `freeze` refuses.
        self.args().iter().map_while(move |a| {
            let c = a.compact(text_at, derefs_at)?;
            text_at = text_at
                .checked_add(a.name.len())?
                .checked_add(a.text.len())?;
            derefs_at = derefs_at.checked_add(a.prog.deref_offsets().len())?;
            Some(c)
        })
    }

    /// All arguments' dereference offsets, in order.
    pub fn frozen_derefs(&self) -> impl Iterator<Item = i64> + '_ {
        self.args()
            .iter()
            .flat_map(|a| a.prog.deref_offsets().iter().copied())
    }

    /// The compact form of this definition in `store`, which must hold
    /// exactly what [`Definition::frozen_args`],
    /// [`Definition::frozen_derefs`], [`Definition::entry_args`] and
    /// [`Definition::write_frozen_text`] give; `None` when it does not.
    pub fn freeze<S: Storage>(&self, store: S) -> Option<Compiled<S>> {
        let text = store.text();
        let mut ends = [0u16; 4];
        let mut at = 0usize;
        let mut next = |s: &str| -> Option<usize> {
            let end = at.checked_add(s.len())?;
            if text.get(at..end)? != s {
                return None;
            }
            at = end;
            Some(end)
        };
        for (i, (name, end)) in self.frozen_names().iter().zip(ends.iter_mut()).enumerate() {
            *end = u16::try_from(next(name)?).ok()?;
            if i < NAME_NULS {
                next("\0")?;
            }
        }
        for a in self.args() {
            next(a.name())?;
            next(a.text())?;
        }
        // Compared one by one, not with `Iterator::eq`: its instance over
        // these adapters had a symbol name past the kernel's 512-byte
        // limit (tools/check/sealed, check (e)).
        let mut frozen = self.frozen_args();
        let same_args =
            store.args().iter().all(|a| frozen.next() == Some(*a)) && frozen.next().is_none();
        let same = at == text.len()
            && same_args
            && store.args().len() == self.args().len()
            && store.derefs().iter().copied().eq(self.frozen_derefs())
            && store.entry_args() == self.entry_args();
        if !same {
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
        let [g, e, s, f] = self.ends.map(usize::from);
        let event = text.get(g + 1..e).unwrap_or("");
        let symbol = match text.get(e + 1..s).unwrap_or("") {
            "" if self.scalars.has_symbol => event,
            symbol => symbol,
        };
        let names = Names {
            group: text.get(..g).unwrap_or(""),
            event,
            symbol,
            fe_text: text.get(s..f).unwrap_or(""),
        };
        self.view_with(names)
    }

    /// The group and the event name, each with its NUL: C strings in the
    /// definition's own text, for an owner to point to as long as it
    /// keeps the definition.
    pub fn c_names(&self) -> (&[u8], &[u8]) {
        let text = self.store.text().as_bytes();
        let [g, e, _, _] = self.ends.map(usize::from);
        (
            text.get(..=g).unwrap_or(&[]),
            text.get(g + 1..=e).unwrap_or(&[]),
        )
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

    /// [`Scalars::word_table`] of the definition, for a probe handler.
    pub fn word_table(&self) -> Option<WordTable> {
        self.scalars.word_table()
    }

    /// [`Scalars::string_table`] of the definition, for a probe handler.
    pub fn string_table(&self) -> Option<StringTable> {
        self.scalars.string_table()
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
        let args = CompactArgs {
            args: self.store.args(),
            text: self.store.text(),
            derefs: self.store.derefs(),
        };
        DefView::new(
            self.scalars,
            names,
            Args::Compact(args),
            self.store.entry_args(),
        )
    }
}
