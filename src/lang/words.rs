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
//!
//! A record of words followed by one string read from a word
//! (`p ... a=%di s=+0(%si):string`, `do_sys_open(int dfd, char *name)`)
//! has a [`StringTable`]: the same table, then where the string's address
//! is. A handler writes the words from the table, the string's
//! `__data_loc` word after them and its bytes after that
//! ([`StringTable::fixed_size`]), as the definition's programs do; it
//! leaves any string it cannot read in one step to the programs.

use crate::lang::interp::{word, HeaderIps, Regs};
use crate::lang::record::TRACE_ENTRY_SIZE;
use crate::lang::types::Space;
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

    /// Where each word of a record of words and one string comes from,
    /// when the definition's record is one.
    pub fn string_table(&self) -> Option<StringTable> {
        StringTable::of(self)
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

/// A record of words and then one string: a [`WordTable`]'s header ips
/// and words, the string's `__data_loc` word, then (in the dynamic area)
/// the string, read in kernel memory (or user memory, below the
/// user/kernel split) at the address a word holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StringTable {
    words: WordTable,
    string: WordSource,
}

impl StringTable {
    /// The table of a definition whose record is its header ips, at most
    /// [`MAX_TABLE_WORDS`] - 1 words, then a string at a word (no offset,
    /// not `ustring`); `None` for every other record.
    fn of(scalars: &Scalars) -> Option<StringTable> {
        let RecordPlan::Steps(ref steps) = scalars.plan else {
            return None;
        };
        let (last, words) = steps.steps().split_last()?;
        let Step::Str {
            base,
            space: Space::Kernel | Space::Auto,
            offset: 0,
        } = *last
        else {
            return None;
        };
        let header = scalars.header_size();
        if header % 8 != 0 || words.len() >= MAX_TABLE_WORDS {
            return None;
        }
        let mut table = WordTable {
            header_words: u8::try_from(header / 8).ok()?,
            len: 0,
            sources: [WordSource::RetVal; MAX_TABLE_WORDS],
        };
        for step in words {
            let Step::Word(source) = *step else {
                return None;
            };
            *table.sources.get_mut(usize::from(table.len))? = source;
            table.len += 1;
        }
        let strings = StringTable {
            words: table,
            string: base,
        };
        (scalars.fixed_size() as usize == strings.fixed_size()).then_some(strings)
    }

    /// The header ips and the words before the string.
    pub fn words(&self) -> &WordTable {
        &self.words
    }

    /// Where the string's address comes from.
    pub fn string(&self) -> WordSource {
        self.string
    }

    /// Size of the record's fixed part: the words, then the string's
    /// `__data_loc` word (its length above bit 16, its offset, this
    /// size, below); the string follows.
    pub fn fixed_size(&self) -> usize {
        self.words.record_size() + 4
    }
}
