// SPDX-License-Identifier: GPL-2.0
//! Records that are nothing but words: the header ips, then 8-byte words
//! each copied from a register, a parameter, the return value or an
//! entry-data slot (`p ... a=%di b=%si`, `f ... $arg1 $arg2`,
//! `vfs_read(x64 file, u64 count)`, `r ... $retval`). Such a record needs
//! no program at all on a hit: where each word comes from is a table a
//! probe handler can follow by itself, which is how the kernel module
//! writes the most common records (src/shim/hit.c). [`WordTable::record`]
//! is the table's meaning, held by the tests to the interpreter's record
//! byte for byte.

use crate::lang::interp::{word, HeaderIps, Regs};
use crate::lang::record::TRACE_ENTRY_SIZE;
use crate::lang::view::{RecordPlan, Scalars, Step, WordSource};

/// The most words a [`WordTable`] holds: as many as a probe handler's
/// table has room for (struct dynprobe_feed).
pub const MAX_TABLE_WORDS: usize = 4;

/// Where each word of a record of words comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordTable {
    header_words: u8,
    len: u8,
    sources: [WordSource; MAX_TABLE_WORDS],
}

impl Scalars {
    /// Where each word of a record of words comes from, when the
    /// definition's record is one.
    pub fn word_table(&self) -> Option<WordTable> {
        WordTable::of(self)
    }
}

impl WordTable {
    /// The table of a definition whose record is its header ips then at
    /// most [`MAX_TABLE_WORDS`] words, each of a [`WordSource`]; `None`
    /// for every other record.
    pub(crate) fn of(scalars: &Scalars) -> Option<WordTable> {
        let RecordPlan::Steps(ref steps) = scalars.plan else {
            return None;
        };
        let header = scalars.header_size();
        if header % 8 != 0 {
            return None;
        }
        let mut table = WordTable {
            header_words: u8::try_from(header / 8).ok()?,
            len: 0,
            sources: [WordSource::RetVal; MAX_TABLE_WORDS],
        };
        for step in steps.steps() {
            let Step::Word(source) = *step else {
                return None;
            };
            *table.sources.get_mut(usize::from(table.len))? = source;
            table.len += 1;
        }
        // The words are the whole record after the common header.
        (scalars.fixed_size() as usize == table.record_size()).then_some(table)
    }

    /// How many header ips come first: 1 (`__probe_ip`) or 2 (the first
    /// and second ip of [`HeaderIps`]); 0 for a kind with no header.
    pub fn header_words(&self) -> u8 {
        self.header_words
    }

    /// Where the argument words come from, in the record's order.
    pub fn sources(&self) -> &[WordSource] {
        self.sources.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Size of the record.
    pub fn record_size(&self) -> usize {
        TRACE_ENTRY_SIZE as usize + 8 * (usize::from(self.header_words) + usize::from(self.len))
    }

    /// Writes the record the table describes, as
    /// [`crate::lang::DefView::record`] does (the common header's bytes
    /// are left alone): the header ips, then each word, little-endian.
    /// Returns its size, or 0 when `out` is smaller.
    pub fn record(&self, regs: &impl Regs, ips: HeaderIps, out: &mut [u8]) -> usize {
        let size = self.record_size();
        let Some(words) = out.get_mut(TRACE_ENTRY_SIZE as usize..size) else {
            return 0;
        };
        let header = [ips.first, ips.second];
        let values = header
            .iter()
            .copied()
            .take(usize::from(self.header_words))
            .chain(self.sources().iter().map(|&s| word(s, regs)));
        for (slot, value) in words.chunks_exact_mut(8).zip(values) {
            slot.copy_from_slice(&value.to_le_bytes());
        }
        size
    }
}
