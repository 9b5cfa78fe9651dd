// SPDX-License-Identifier: GPL-2.0
//! What a unit's reader finds of the functions the index keeps
//! (dwarf_index.rs, from a unit read raw by dwarf_toplevel.rs or
//! through gimli): each function's DIE and name, and where the reader
//! puts them.

use std::borrow::Cow;

/// A function's DIE: its unit's `.debug_info` offset and its offset
/// within the unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FuncDie {
    /// The unit's offset in `.debug_info`.
    pub cu: usize,
    /// The DIE's offset in the unit.
    pub die: usize,
    /// Whether it is an inline function's abstract definition (its
    /// copies are DW_TAG_inlined_subroutine DIEs of the same unit).
    pub inline: bool,
}

/// A function's name (borrowed from the file where it can be) and DIE,
/// as a unit's reader finds it.
pub type Found<'a> = (Cow<'a, str>, FuncDie);

/// Where a unit's reader puts the functions it finds, in order.
pub trait Sink<'a> {
    /// One more.
    fn push(&mut self, name: Cow<'a, str>, f: FuncDie);
    /// How much is held, for `cut`.
    fn mark(&self) -> usize;
    /// Drops what was pushed after `mark` said `to`.
    fn cut(&mut self, to: usize);
}

impl<'a> Sink<'a> for Vec<Found<'a>> {
    fn push(&mut self, name: Cow<'a, str>, f: FuncDie) {
        Vec::push(self, (name, f));
    }
    fn mark(&self) -> usize {
        self.len()
    }
    fn cut(&mut self, to: usize) {
        self.truncate(to);
    }
}
