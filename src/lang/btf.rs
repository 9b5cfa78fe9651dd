// SPDX-License-Identifier: GPL-2.0
//! Reader of raw BTF, the type information the kernel carries about itself
//! (`/sys/kernel/btf/vmlinux`, the bytes between `__start_BTF` and
//! `__stop_BTF`).
//!
//! A blob is a header, a type section and a string section (and, from
//! Linux 7.x on, an optional layout section that gives the record size of
//! every kind the encoder knew), all little-endian. Types are variable-length
//! records numbered from 1 in order; id 0 is `void`. To find a type by id
//! without walking the section, the caller provides an index:
//!
//! ```text
//! let len = btf::index_len(blob)?;          // validates the whole blob
//! let mut index = /* len u32s, allocated by the caller */;
//! btf::build_index(blob, &mut index)?;
//! let btf = Btf::new(blob, &index)?;        // cheap: any number of times
//! btf.func("vfs_read")                      // Some(BtfFunc { nr_params: 4, .. })
//! ```
//!
//! The index holds the offset of every type and, sorted by name, the ids of
//! the types looked up by name (functions, tracepoint typedefs), so a lookup
//! by id is O(1) and by name O(log n). Every read is bounds-checked: a
//! corrupt blob is refused by [`index_len`] / [`build_index`], and a blob
//! that is valid in its layout but inconsistent in its contents (ids out of
//! range, typedef cycles) only makes lookups answer `None` or
//! [`BtfError`].
//!
//! A module's BTF is split BTF: it extends a base blob (vmlinux), its type
//! ids continue after the base's last one and its string offsets after the
//! base's string section, and its types may name base types (and base
//! strings). [`index_len_split`] / [`build_index_split`] index such a blob
//! against the base's [`Btf`], and [`Btf::new_split`] reads the two as one:
//!
//! ```text
//! let len = btf::index_len_split(&vmlinux, module_blob)?;
//! let mut index = /* len u32s */;
//! btf::build_index_split(&vmlinux, module_blob, &mut index)?;
//! let btf = Btf::new_split(&vmlinux, module_blob, &index)?;
//! btf.func("v9fs_file_read_iter")       // members may cross into vmlinux
//! ```
//!
//! Only one level is read: a split blob's base must itself be a base.

use core::cmp::Ordering;

use crate::lang::resolver::{BtfError, BtfFunc, BtfMember, BtfType, Resolver};

/// `BTF_MAGIC`, as it reads little-endian.
const MAGIC: u16 = 0xeb9f;
/// `BTF_VERSION`.
const VERSION: u8 = 1;
/// Header up to the string section's fields.
const HEADER_LEN: usize = 24;
/// Header with the layout section's fields.
const HEADER_LAYOUT_LEN: usize = 32;
/// The part every type record starts with (`struct btf_type`).
const TYPE_LEN: usize = 12;
/// One entry of the layout section (`struct btf_layout`).
const LAYOUT_ENTRY_LEN: usize = 4;
/// Most types a blob may hold (`BTF_MAX_TYPE`).
const MAX_TYPES: usize = 0x000f_ffff;
/// Most modifiers and typedefs followed in a row (the kernel's
/// `MAX_RESOLVE_DEPTH`); more means a cycle.
const MAX_MODIFIER_DEPTH: u32 = 32;
/// Anonymous struct/union members remembered while looking for a member
/// (`BTF_ANON_STACK_MAX`).
const ANON_STACK_MAX: usize = 16;
/// Structs and unions visited for one member lookup; more means a cycle.
const MAX_MEMBER_VISITS: u32 = 1024;
/// Entries at the start of the index: number of types, number of names.
const INDEX_HEAD: usize = 2;
/// Tracepoints' probe stubs: `void __probestub_NAME(void *__data, ...)`.
const TRACEPOINT_STUB_PREFIX: &[u8] = b"__probestub_";
/// Tracepoints' probe types: `typedef void (*btf_trace_NAME)(void *,
/// ...)`.
const TRACEPOINT_TYPEDEF_PREFIX: &[u8] = b"btf_trace_";

/// BTF kinds (`BTF_KIND_*`).
mod kind {
    pub(super) const INT: u8 = 1;
    pub(super) const PTR: u8 = 2;
    pub(super) const ARRAY: u8 = 3;
    pub(super) const STRUCT: u8 = 4;
    pub(super) const UNION: u8 = 5;
    pub(super) const ENUM: u8 = 6;
    pub(super) const FWD: u8 = 7;
    pub(super) const TYPEDEF: u8 = 8;
    pub(super) const VOLATILE: u8 = 9;
    pub(super) const CONST: u8 = 10;
    pub(super) const RESTRICT: u8 = 11;
    pub(super) const FUNC: u8 = 12;
    pub(super) const FUNC_PROTO: u8 = 13;
    pub(super) const VAR: u8 = 14;
    pub(super) const DATASEC: u8 = 15;
    pub(super) const FLOAT: u8 = 16;
    pub(super) const DECL_TAG: u8 = 17;
    pub(super) const TYPE_TAG: u8 = 18;
    pub(super) const ENUM64: u8 = 19;
}

/// Why a blob (or an index for it) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtfBlobError {
    /// Shorter than its header says, or than any header.
    Truncated,
    /// Not the BTF magic (this includes big-endian BTF).
    BadMagic,
    /// A version other than 1.
    BadVersion,
    /// A section lies (partly) outside the blob.
    SectionOutOfRange,
    /// The string section is empty or does not start and end with NUL.
    BadStrings,
    /// The layout section is not made of whole entries.
    BadLayout,
    /// Type `id`'s record runs past the end of the type section.
    TypeTruncated {
        /// The type's id.
        id: u32,
    },
    /// Type `id` has a kind whose record size is not known.
    UnknownKind {
        /// The type's id.
        id: u32,
        /// Its kind.
        kind: u8,
    },
    /// Type `id`, or one of its members or parameters, names a string
    /// outside the string section.
    BadName {
        /// The type's id.
        id: u32,
    },
    /// More types than BTF ids can number.
    TooManyTypes,
    /// The index does not have the length [`index_len`] gave, or was not
    /// built for this blob.
    BadIndex,
    /// The base given for split BTF is itself split.
    BadBase,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let bytes: [u8; 4] = b.get(off..off.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    let bytes: [u8; 2] = b.get(off..off.checked_add(2)?)?.try_into().ok()?;
    Some(u16::from_le_bytes(bytes))
}

fn usize_of(v: u32) -> usize {
    // u32 always fits the usize of the targets this builds for (64-bit
    // kernel, 32/64-bit hosts).
    v as usize
}

/// The sections of a blob.
#[derive(Clone, Copy, Debug)]
struct Sections<'a> {
    types: &'a [u8],
    strings: &'a [u8],
    layout: &'a [u8],
}

/// The sections of `blob`. A base blob's strings start with the empty
/// string; a split blob's continue the base's, so they may be empty and
/// start with any string (`btf_parse_str_sec()`).
fn sections(blob: &[u8], split: bool) -> Result<Sections<'_>, BtfBlobError> {
    let magic = u16_at(blob, 0).ok_or(BtfBlobError::Truncated)?;
    if magic != MAGIC {
        return Err(BtfBlobError::BadMagic);
    }
    match blob.get(2) {
        Some(&VERSION) => {}
        Some(_) => return Err(BtfBlobError::BadVersion),
        None => return Err(BtfBlobError::Truncated),
    }
    let hdr_len = usize_of(u32_at(blob, 4).ok_or(BtfBlobError::Truncated)?);
    if hdr_len < HEADER_LEN {
        return Err(BtfBlobError::Truncated);
    }
    let header = blob.get(..hdr_len).ok_or(BtfBlobError::Truncated)?;
    let body = blob.get(hdr_len..).ok_or(BtfBlobError::Truncated)?;
    // All section offsets count from the end of the header.
    let section = |off_at: usize| -> Result<&[u8], BtfBlobError> {
        let off = usize_of(u32_at(header, off_at).ok_or(BtfBlobError::Truncated)?);
        let len = usize_of(u32_at(header, off_at + 4).ok_or(BtfBlobError::Truncated)?);
        let end = off
            .checked_add(len)
            .ok_or(BtfBlobError::SectionOutOfRange)?;
        body.get(off..end).ok_or(BtfBlobError::SectionOutOfRange)
    };
    let types = section(8)?;
    let strings = section(16)?;
    let layout = if hdr_len >= HEADER_LAYOUT_LEN {
        section(24)?
    } else {
        &[]
    };
    let strings_ok = if split {
        strings.is_empty() || strings.last() == Some(&0)
    } else {
        strings.first() == Some(&0) && strings.last() == Some(&0)
    };
    if !strings_ok {
        return Err(BtfBlobError::BadStrings);
    }
    if layout.len() % LAYOUT_ENTRY_LEN != 0 {
        return Err(BtfBlobError::BadLayout);
    }
    Ok(Sections {
        types,
        strings,
        layout,
    })
}

/// Bytes after the common part of a record of `kind`: a fixed part, and
/// one element per `vlen`. Kinds newer than this reader are sized from the
/// blob's layout section when it has one.
fn record_shape(kind: u8, layout: &[u8]) -> Option<(usize, usize)> {
    Some(match kind {
        kind::INT | kind::VAR | kind::DECL_TAG => (4, 0),
        kind::PTR
        | kind::FWD
        | kind::TYPEDEF
        | kind::VOLATILE
        | kind::CONST
        | kind::RESTRICT
        | kind::FUNC
        | kind::FLOAT
        | kind::TYPE_TAG => (0, 0),
        kind::ARRAY => (12, 0),
        kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => (0, 12),
        kind::ENUM | kind::FUNC_PROTO => (0, 8),
        0 => return None,
        k => {
            let entry = layout.get(usize::from(k) * LAYOUT_ENTRY_LEN..)?;
            (usize::from(*entry.first()?), usize::from(*entry.get(1)?))
        }
    })
}

/// One type record.
#[derive(Clone, Copy, Debug)]
struct Record<'a> {
    name_off: u32,
    info: u32,
    /// `size` or `type`, depending on the kind.
    size_or_type: u32,
    /// What follows the common part.
    extra: &'a [u8],
}

impl<'a> Record<'a> {
    fn kind(&self) -> u8 {
        ((self.info >> 24) & 0x7f) as u8
    }

    fn vlen(&self) -> u32 {
        self.info & 0x00ff_ffff
    }

    fn kind_flag(&self) -> bool {
        self.info >> 31 != 0
    }

    fn is_struct(&self) -> bool {
        matches!(self.kind(), kind::STRUCT | kind::UNION)
    }

    fn is_modifier(&self) -> bool {
        matches!(
            self.kind(),
            kind::TYPEDEF | kind::VOLATILE | kind::CONST | kind::RESTRICT | kind::TYPE_TAG
        )
    }

    /// Element `i` of the variable part, `size` bytes each.
    fn element(&self, i: u32, size: usize) -> Option<&'a [u8]> {
        let start = usize_of(i).checked_mul(size)?;
        self.extra.get(start..start.checked_add(size)?)
    }

    /// Offsets into the string section the variable part names (member,
    /// parameter and enumerator names): element size, if the kind has any.
    fn named_element_size(&self) -> Option<usize> {
        match self.kind() {
            kind::STRUCT | kind::UNION | kind::ENUM64 => Some(12),
            kind::ENUM | kind::FUNC_PROTO => Some(8),
            _ => None,
        }
    }
}

/// The record at `off` of the type section and its length.
fn record_at<'a>(
    types: &'a [u8],
    layout: &[u8],
    off: usize,
    id: u32,
) -> Result<(Record<'a>, usize), BtfBlobError> {
    let truncated = BtfBlobError::TypeTruncated { id };
    let common = types
        .get(off..off.checked_add(TYPE_LEN).ok_or(truncated)?)
        .ok_or(truncated)?;
    let name_off = u32_at(common, 0).ok_or(truncated)?;
    let info = u32_at(common, 4).ok_or(truncated)?;
    let size_or_type = u32_at(common, 8).ok_or(truncated)?;
    let mut rec = Record {
        name_off,
        info,
        size_or_type,
        extra: &[],
    };
    let (fixed, elem) = record_shape(rec.kind(), layout).ok_or(BtfBlobError::UnknownKind {
        id,
        kind: rec.kind(),
    })?;
    let extra_len = usize_of(rec.vlen())
        .checked_mul(elem)
        .and_then(|v| v.checked_add(fixed))
        .ok_or(truncated)?;
    let start = off + TYPE_LEN;
    let end = start.checked_add(extra_len).ok_or(truncated)?;
    rec.extra = types.get(start..end).ok_or(truncated)?;
    Ok((rec, TYPE_LEN + extra_len))
}

/// A string of a string section, without its NUL.
fn string_at(strings: &[u8], off: usize) -> Option<&[u8]> {
    let s = strings.get(off..)?;
    let end = s.iter().position(|&c| c == 0)?;
    s.get(..end)
}

/// The strings a blob's offsets refer to: those of its base (none for a
/// base blob), then its own, numbered on from the base's.
#[derive(Clone, Copy, Debug)]
struct Strings<'a> {
    base: &'a [u8],
    own: &'a [u8],
}

impl<'a> Strings<'a> {
    /// Is `off` inside one of the sections?
    fn contains(&self, off: u32) -> bool {
        let off = usize_of(off);
        off < self.base.len() || off - self.base.len() < self.own.len()
    }

    fn get(&self, off: u32) -> Option<&'a [u8]> {
        let off = usize_of(off);
        match off.checked_sub(self.base.len()) {
            None => string_at(self.base, off),
            Some(own) => string_at(self.own, own),
        }
    }
}

/// Is type `rec` one of those the index finds by name?
fn is_named_lookup(rec: &Record<'_>, strings: Strings<'_>) -> bool {
    match rec.kind() {
        kind::FUNC => true,
        kind::TYPEDEF => strings
            .get(rec.name_off)
            .is_some_and(|n| n.starts_with(TRACEPOINT_TYPEDEF_PREFIX)),
        _ => false,
    }
}

/// Walks every record of `s`, whose first type has id `first_id + 1`,
/// checking its length, kind and names; calls `each` with id, offset and
/// record. Returns the number of types and of types found by name.
fn walk<'a>(
    s: Sections<'a>,
    strings: Strings<'a>,
    first_id: usize,
    mut each: impl FnMut(u32, usize, &Record<'a>),
) -> Result<(usize, usize), BtfBlobError> {
    let mut off = 0usize;
    let mut count = 0usize;
    let mut named = 0usize;
    while off < s.types.len() {
        if first_id.saturating_add(count) >= MAX_TYPES {
            return Err(BtfBlobError::TooManyTypes);
        }
        // first_id + count < MAX_TYPES, so the id fits.
        let id = (first_id + count + 1) as u32;
        let (rec, len) = record_at(s.types, s.layout, off, id)?;
        let bad_name = BtfBlobError::BadName { id };
        if !strings.contains(rec.name_off) {
            return Err(bad_name);
        }
        if let Some(size) = rec.named_element_size() {
            for i in 0..rec.vlen() {
                let name = rec.element(i, size).and_then(|e| u32_at(e, 0));
                if name.is_none_or(|n| !strings.contains(n)) {
                    return Err(bad_name);
                }
            }
        }
        if is_named_lookup(&rec, strings) {
            named += 1;
        }
        each(id, off, &rec);
        count += 1;
        off += len;
    }
    Ok((count, named))
}

/// Length (in `u32`s) of the index [`build_index`] needs for `blob`. Walks
/// and checks the whole blob.
pub fn index_len(blob: &[u8]) -> Result<usize, BtfBlobError> {
    let s = sections(blob, false)?;
    let strings = Strings {
        base: &[],
        own: s.strings,
    };
    let (types, named) = walk(s, strings, 0, |_, _, _| {})?;
    Ok(INDEX_HEAD + types + named)
}

/// Length (in `u32`s) of the index [`build_index_split`] needs for split
/// blob `blob` on `base`. Walks and checks the whole blob.
pub fn index_len_split(base: &Btf<'_>, blob: &[u8]) -> Result<usize, BtfBlobError> {
    if base.base.is_some() {
        return Err(BtfBlobError::BadBase);
    }
    let s = sections(blob, true)?;
    let strings = Strings {
        base: base.own.s.strings,
        own: s.strings,
    };
    let (types, named) = walk(s, strings, base.own.offsets.len(), |_, _, _| {})?;
    Ok(INDEX_HEAD + types + named)
}

/// Fills `index` (of the length [`index_len`] gave) for `blob`.
pub fn build_index(blob: &[u8], index: &mut [u32]) -> Result<(), BtfBlobError> {
    fill_index(None, sections(blob, false)?, index)
}

/// Fills `index` (of the length [`index_len_split`] gave) for split blob
/// `blob` on `base`.
pub fn build_index_split(
    base: &Btf<'_>,
    blob: &[u8],
    index: &mut [u32],
) -> Result<(), BtfBlobError> {
    if base.base.is_some() {
        return Err(BtfBlobError::BadBase);
    }
    fill_index(Some(base.own), sections(blob, true)?, index)
}

fn fill_index(
    base: Option<Part<'_>>,
    s: Sections<'_>,
    index: &mut [u32],
) -> Result<(), BtfBlobError> {
    let strings = Strings {
        base: base.map_or(&[][..], |b| b.s.strings),
        own: s.strings,
    };
    let first_id = base.map_or(0, |b| b.offsets.len());
    let (types, named) = walk(s, strings, first_id, |_, _, _| {})?;
    if index.len() != INDEX_HEAD + types + named {
        return Err(BtfBlobError::BadIndex);
    }
    let (head, rest) = index
        .split_at_mut_checked(INDEX_HEAD)
        .ok_or(BtfBlobError::BadIndex)?;
    let (offsets, names) = rest
        .split_at_mut_checked(types)
        .ok_or(BtfBlobError::BadIndex)?;
    let mut n = 0usize;
    walk(s, strings, first_id, |id, off, rec| {
        if let Some(o) = offsets.get_mut(usize_of(id).saturating_sub(first_id + 1)) {
            // The type section is shorter than 4 GiB: its length is a u32.
            *o = off as u32;
        }
        if is_named_lookup(rec, strings) {
            if let Some(v) = names.get_mut(n) {
                *v = id;
            }
            n += 1;
        }
    })?;
    for (slot, v) in head.iter_mut().zip([types, named]) {
        // Both are below MAX_TYPES.
        *slot = v as u32;
    }
    let btf = Btf {
        base,
        own: Part {
            s,
            offsets,
            names: &[],
        },
    };
    sort_by_name(&btf, names);
    Ok(())
}

/// Sorts type ids by (name, id). The kernel's BTF is already sorted by
/// name, which this checks first.
fn sort_by_name(btf: &Btf<'_>, ids: &mut [u32]) {
    let less = |a: u32, b: u32| -> bool {
        match btf.name_of(a).cmp(btf.name_of(b)) {
            Ordering::Less => true,
            Ordering::Equal => a < b,
            Ordering::Greater => false,
        }
    };
    if ids.windows(2).all(|w| match w {
        [a, b] => less(*a, *b),
        _ => true,
    }) {
        return;
    }
    // Heapsort: in place, no recursion, n log n.
    let n = ids.len();
    for start in (0..n / 2).rev() {
        sift_down(ids, start, n, &less);
    }
    for end in (1..n).rev() {
        if end < ids.len() {
            ids.swap(0, end);
        }
        sift_down(ids, 0, end, &less);
    }
}

fn sift_down(v: &mut [u32], mut root: usize, end: usize, less: &impl Fn(u32, u32) -> bool) {
    let at = |v: &[u32], i: usize| v.get(i).copied().unwrap_or(0);
    loop {
        let left = root.saturating_mul(2).saturating_add(1);
        if left >= end {
            return;
        }
        let right = left + 1;
        let child = if right < end && less(at(v, left), at(v, right)) {
            right
        } else {
            left
        };
        if !less(at(v, root), at(v, child)) {
            return;
        }
        if root < v.len() && child < v.len() {
            v.swap(root, child);
        }
        root = child;
    }
}

/// A function prototype (`FUNC_PROTO`) by id.
#[derive(Clone, Copy, Debug)]
struct Proto<'a> {
    rec: Record<'a>,
}

/// One blob and its index.
#[derive(Clone, Copy, Debug)]
struct Part<'a> {
    s: Sections<'a>,
    /// Offset of the blob's `i`-th type in its type section.
    offsets: &'a [u32],
    /// Ids of its functions and tracepoint typedefs, by (name, id).
    names: &'a [u32],
}

impl<'a> Part<'a> {
    fn new(s: Sections<'a>, index: &'a [u32]) -> Result<Self, BtfBlobError> {
        let types = usize_of(*index.first().ok_or(BtfBlobError::BadIndex)?);
        let named = usize_of(*index.get(1).ok_or(BtfBlobError::BadIndex)?);
        let rest = index.get(INDEX_HEAD..).ok_or(BtfBlobError::BadIndex)?;
        if rest.len() != types.saturating_add(named) {
            return Err(BtfBlobError::BadIndex);
        }
        let (offsets, names) = rest.split_at_checked(types).ok_or(BtfBlobError::BadIndex)?;
        Ok(Part { s, offsets, names })
    }
}

/// A blob and its index, or a split blob on its base.
#[derive(Clone, Copy, Debug)]
pub struct Btf<'a> {
    /// The base of split BTF; `None` for a base blob.
    base: Option<Part<'a>>,
    /// The blob itself: ids after the base's.
    own: Part<'a>,
}

impl<'a> Btf<'a> {
    /// `blob` with the index [`build_index`] made for it. Checks only the
    /// header and the index's size, so it is cheap enough to call for every
    /// question.
    pub fn new(blob: &'a [u8], index: &'a [u32]) -> Result<Self, BtfBlobError> {
        Ok(Btf {
            base: None,
            own: Part::new(sections(blob, false)?, index)?,
        })
    }

    /// Split blob `blob` on `base`, with the index [`build_index_split`]
    /// made for the two. As cheap as [`Btf::new`].
    pub fn new_split(
        base: &Btf<'a>,
        blob: &'a [u8],
        index: &'a [u32],
    ) -> Result<Self, BtfBlobError> {
        if base.base.is_some() {
            return Err(BtfBlobError::BadBase);
        }
        Ok(Btf {
            base: Some(base.own),
            own: Part::new(sections(blob, true)?, index)?,
        })
    }

    /// Is this split BTF (on a base)?
    pub fn is_split(&self) -> bool {
        self.base.is_some()
    }

    /// Types of the base (0 for a base blob): the blob's own ids follow.
    fn base_types(&self) -> usize {
        self.base.map_or(0, |b| b.offsets.len())
    }

    /// Number of types (ids 1 to this), the base's included.
    pub fn nr_types(&self) -> u32 {
        // Both indexes were built from at most MAX_TYPES types in all.
        (self.base_types() + self.own.offsets.len()) as u32
    }

    fn record(&self, id: u32) -> Option<Record<'a>> {
        let i = usize_of(id.checked_sub(1)?);
        let (part, i) = match self.base {
            Some(base) if i < base.offsets.len() => (base, i),
            _ => (self.own, i.checked_sub(self.base_types())?),
        };
        let off = *part.offsets.get(i)?;
        record_at(part.s.types, part.s.layout, usize_of(off), id)
            .ok()
            .map(|(r, _)| r)
    }

    fn strings(&self) -> Strings<'a> {
        Strings {
            base: self.base.map_or(&[][..], |b| b.s.strings),
            own: self.own.s.strings,
        }
    }

    fn string(&self, off: u32) -> Option<&'a [u8]> {
        self.strings().get(off)
    }

    fn name_of(&self, id: u32) -> &'a [u8] {
        self.record(id)
            .and_then(|r| self.string(r.name_off))
            .unwrap_or(&[])
    }

    /// The lowest id of kind `kind` named `prefix` + `name`: the base's
    /// ids come first.
    fn find(&self, kind: u8, prefix: &[u8], name: &[u8]) -> Option<u32> {
        let key = |id: u32| -> Ordering {
            self.name_of(id)
                .iter()
                .cmp(prefix.iter().chain(name.iter()))
        };
        let find_in = |names: &[u32]| -> Option<u32> {
            let first = names.partition_point(|&id| key(id) == Ordering::Less);
            names
                .get(first..)?
                .iter()
                .take_while(|&&id| key(id) == Ordering::Equal)
                .copied()
                .find(|&id| self.record(id).is_some_and(|r| r.kind() == kind))
        };
        self.base
            .and_then(|b| find_in(b.names))
            .or_else(|| find_in(self.own.names))
    }

    /// Follows modifiers and typedefs from `id`: the id reached and its
    /// record (`None` for `void`). `None` for an unknown id or a cycle.
    fn skip_modifiers(&self, id: u32) -> Option<(u32, Option<Record<'a>>)> {
        let mut id = id;
        for _ in 0..MAX_MODIFIER_DEPTH {
            if id == 0 {
                return Some((0, None));
            }
            let rec = self.record(id)?;
            if !rec.is_modifier() {
                return Some((id, Some(rec)));
            }
            id = rec.size_or_type;
        }
        None
    }

    fn proto(&self, id: u32) -> Option<Proto<'a>> {
        match self.skip_modifiers(id)? {
            (_, Some(rec)) if rec.kind() == kind::FUNC_PROTO => Some(Proto { rec }),
            _ => None,
        }
    }

    /// The prototype of function `name`.
    fn func_proto(&self, prefix: &[u8], name: &[u8]) -> Option<Proto<'a>> {
        let func = self.record(self.find(kind::FUNC, prefix, name)?)?;
        let rec = self.record(func.size_or_type)?;
        (rec.kind() == kind::FUNC_PROTO).then_some(Proto { rec })
    }

    /// The prototype of tracepoint `name`'s probes: that of its probe stub
    /// `__probestub_NAME`, as the kernel's tracepoint probe events take it;
    /// or else the function type `btf_trace_NAME` points to, which has the
    /// same types but no parameter names (DWARF gives function pointer
    /// types' parameters none).
    fn tracepoint_proto(&self, name: &[u8]) -> Option<Proto<'a>> {
        let from_typedef = || {
            let typedef =
                self.record(self.find(kind::TYPEDEF, TRACEPOINT_TYPEDEF_PREFIX, name)?)?;
            match self.skip_modifiers(typedef.size_or_type)? {
                (_, Some(ptr)) if ptr.kind() == kind::PTR => self.proto(ptr.size_or_type),
                _ => None,
            }
        };
        self.func_proto(TRACEPOINT_STUB_PREFIX, name)
            .or_else(from_typedef)
    }

    fn summary(p: Proto<'a>) -> BtfFunc {
        BtfFunc {
            nr_params: p.rec.vlen(),
            ret_type: p.rec.size_or_type,
        }
    }

    fn param(&self, p: Proto<'a>, idx: u32) -> Option<(&'a str, u32)> {
        let e = p.rec.element(idx, 8)?;
        let name = core::str::from_utf8(self.string(u32_at(e, 0)?)?).ok()?;
        Some((name, u32_at(e, 4)?))
    }

    /// Number of parameters and return type of function `name`.
    pub fn func(&self, name: &str) -> Option<BtfFunc> {
        self.func_proto(&[], name.as_bytes()).map(Self::summary)
    }

    /// Name and type id of parameter `idx` of function `name`.
    pub fn func_param(&self, name: &str, idx: u32) -> Option<(&'a str, u32)> {
        self.param(self.func_proto(&[], name.as_bytes())?, idx)
    }

    /// Prototype of tracepoint `name`'s probe functions, the hidden first
    /// parameter `void *__data` included.
    pub fn tracepoint(&self, name: &str) -> Option<BtfFunc> {
        self.tracepoint_proto(name.as_bytes()).map(Self::summary)
    }

    /// Parameter `idx` of tracepoint `name`'s probe functions (0 is
    /// `__data`).
    pub fn tracepoint_param(&self, name: &str, idx: u32) -> Option<(&'a str, u32)> {
        self.param(self.tracepoint_proto(name.as_bytes())?, idx)
    }

    /// The lowest id of a structure named `name` (the base's first). A
    /// walk over every type, not the name index, which holds only what
    /// definitions look up often (functions, tracepoints): structures are
    /// named only by `$current` and typecasts, at definition time.
    pub fn struct_named(&self, name: &str) -> Option<u32> {
        (1..=self.nr_types()).find(|&id| {
            self.record(id).is_some_and(|r| r.kind() == kind::STRUCT)
                && self.name_of(id) == name.as_bytes()
        })
    }

    /// The value of enumerator `name` (of any `ENUM` or `ENUM64`; C gives
    /// enumerators one namespace), as a signed value. A walk over every
    /// type, like [`Btf::struct_named`]: asked once, at load, for the
    /// bits of the tracing core's private flag words.
    pub fn enumerator(&self, name: &str) -> Option<i64> {
        (1..=self.nr_types()).find_map(|id| {
            let rec = self.record(id)?;
            let (size, wide) = match rec.kind() {
                kind::ENUM => (8, false),
                kind::ENUM64 => (12, true),
                _ => return None,
            };
            (0..rec.vlen()).find_map(|i| {
                let e = rec.element(i, size)?;
                if self.string(u32_at(e, 0)?)? != name.as_bytes() {
                    return None;
                }
                let lo = u32_at(e, 4)?;
                Some(if wide {
                    i64::from(lo) | (i64::from(u32_at(e, 8)?) << 32)
                } else {
                    i64::from(lo as i32)
                })
            })
        })
    }

    /// Type `id` with modifiers and typedefs skipped (`void` is
    /// [`BtfType::Other`]); `None` for an unknown id.
    pub fn type_info(&self, id: u32) -> Option<BtfType> {
        let rec = match self.skip_modifiers(id)? {
            (_, Some(rec)) => rec,
            (_, None) => return Some(BtfType::Other),
        };
        Some(match rec.kind() {
            kind::INT => {
                let data = u32_at(rec.extra, 0)?;
                BtfType::Int {
                    bits: (data & 0xff) as u8,
                    signed: (data >> 24) & 1 != 0,
                    offset: ((data >> 16) & 0xff) as u8,
                }
            }
            kind::PTR => BtfType::Ptr {
                target: rec.size_or_type,
            },
            kind::ARRAY => BtfType::Array {
                elem: u32_at(rec.extra, 0)?,
            },
            kind::STRUCT | kind::UNION => BtfType::Struct,
            kind::ENUM => BtfType::Enum,
            kind::ENUM64 => BtfType::Enum64,
            _ => BtfType::Other,
        })
    }

    /// Member `name` of struct/union `id` (modifiers skipped), also inside
    /// anonymous struct/union members, searched as the kernel searches
    /// (`btf_find_struct_member()`): the members of one type first, then
    /// the anonymous ones last-seen first. `Err` when `id` is not a
    /// struct or union.
    pub fn member(&self, id: u32, name: &str) -> Result<Option<BtfMember>, BtfError> {
        let mut cur = match self.skip_modifiers(id) {
            Some((_, Some(rec))) if rec.is_struct() => rec,
            _ => return Err(BtfError),
        };
        let mut cur_offset = 0u32;
        let mut anon = [(0u32, 0u32); ANON_STACK_MAX];
        let mut top = 0usize;
        for _ in 0..MAX_MEMBER_VISITS {
            let kind_flag = cur.kind_flag();
            for i in 0..cur.vlen() {
                let m = cur.element(i, 12).ok_or(BtfError)?;
                let (name_off, ty, raw_offset) = match (u32_at(m, 0), u32_at(m, 4), u32_at(m, 8)) {
                    (Some(a), Some(b), Some(c)) => (a, b, c),
                    _ => return Err(BtfError),
                };
                // With the kind flag, the offset word also holds the
                // bitfield's size.
                let (bit_offset, bitfield_size) = if kind_flag {
                    (raw_offset & 0x00ff_ffff, raw_offset >> 24)
                } else {
                    (raw_offset, 0)
                };
                if name_off == 0 {
                    if let Some((tid, Some(rec))) = self.skip_modifiers(ty) {
                        if rec.is_struct() {
                            if let Some(slot) = anon.get_mut(top) {
                                *slot = (tid, cur_offset.saturating_add(bit_offset));
                                top += 1;
                            }
                        }
                    }
                } else if self.string(name_off) == Some(name.as_bytes()) {
                    return Ok(Some(BtfMember {
                        bit_offset: cur_offset.saturating_add(bit_offset),
                        bitfield_size,
                        ty,
                    }));
                }
            }
            if top == 0 {
                return Ok(None);
            }
            top -= 1;
            let (tid, offset) = anon.get(top).copied().ok_or(BtfError)?;
            cur = self.record(tid).ok_or(BtfError)?;
            cur_offset = offset;
        }
        Err(BtfError)
    }
}

/// A blob answers the parser's BTF questions; everything else is left to
/// the defaults.
impl Resolver for Btf<'_> {
    fn btf_func(&self, func: &str) -> Option<BtfFunc> {
        self.func(func)
    }

    fn btf_param(&self, func: &str, idx: u32) -> Option<(&str, u32)> {
        self.func_param(func, idx)
    }

    fn btf_tracepoint(&self, name: &str) -> Option<BtfFunc> {
        self.tracepoint(name)
    }

    fn btf_tracepoint_param(&self, name: &str, idx: u32) -> Option<(&str, u32)> {
        self.tracepoint_param(name, idx)
    }

    fn btf_type(&self, id: u32) -> Option<BtfType> {
        self.type_info(id)
    }

    fn btf_struct(&self, name: &str) -> Option<u32> {
        self.struct_named(name)
    }

    fn btf_member(&self, id: u32, name: &str) -> Result<Option<BtfMember>, BtfError> {
        self.member(id, name)
    }
}
