// SPDX-License-Identifier: GPL-2.0
//! Where a struct member lies in bits, and a bit-field member as the
//! kprobe fetch type `bWIDTH@OFFSET/CONTAINER` reads it: the container
//! word (the member's type's size, at an address aligned to it within
//! the struct), the field's lowest bit in it (little-endian), its width.
//! DWARF 5 says where a bit-field is with DW_AT_data_bit_offset, older
//! DWARF with DW_AT_data_member_location and the big-endian
//! DW_AT_bit_offset; both are read.

use gimli::UnitOffset;

use crate::dwarf::Unit;

/// A bit-field member's place for one fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitField {
    /// The container's offset in bytes from the struct's start.
    pub byte: u64,
    /// The width in bits.
    pub width: u64,
    /// The lowest bit's place in the container.
    pub offset: u64,
    /// The container's size in bits.
    pub container: u64,
}

impl BitField {
    /// The fetch type: `b3@5/32`.
    pub fn type_text(&self) -> String {
        format!("b{}@{}/{}", self.width, self.offset, self.container)
    }
}

fn udata(unit: &Unit<'_>, off: UnitOffset, at: gimli::DwAt) -> Option<u64> {
    unit.entry(off).ok()?.attr_value(at).ok()??.udata_value()
}

/// The byte size of member `die`: its own DW_AT_byte_size, else its
/// type's (`type_size`).
fn byte_size(unit: &Unit<'_>, die: UnitOffset, type_size: Option<u64>) -> Option<u64> {
    udata(unit, die, gimli::DW_AT_byte_size).or(type_size)
}

/// Member `die`'s offset from its struct's start in bits: a bit-field's
/// lowest bit, another member's first byte times 8.
pub fn member_bits(unit: &Unit<'_>, die: UnitOffset, type_size: Option<u64>) -> u64 {
    let loc = udata(unit, die, gimli::DW_AT_data_member_location);
    if let (Some(loc), Some(big), Some(width)) = (
        loc,
        udata(unit, die, gimli::DW_AT_bit_offset),
        udata(unit, die, gimli::DW_AT_bit_size),
    ) {
        // DWARF 2-4: bits counted from the container's most
        // significant one.
        let size = byte_size(unit, die, type_size).unwrap_or(0);
        let lsb = size
            .saturating_mul(8)
            .saturating_sub(big)
            .saturating_sub(width);
        return loc.saturating_mul(8).saturating_add(lsb);
    }
    match loc {
        Some(l) => l.saturating_mul(8),
        None => udata(unit, die, gimli::DW_AT_data_bit_offset).unwrap_or(0),
    }
}

/// The place of bit-field member `die` whose lowest bit is `bits` from
/// its struct's start; `None` for a member that is not a bit-field.
pub fn place(
    unit: &Unit<'_>,
    die: UnitOffset,
    bits: u64,
    type_size: Option<u64>,
) -> Option<BitField> {
    let width = udata(unit, die, gimli::DW_AT_bit_size)?;
    if width == 0 || width > 64 {
        return None;
    }
    let mut size = byte_size(unit, die, type_size)
        .filter(|s| [1, 2, 4, 8].contains(s))
        .unwrap_or(8);
    let mut byte = bits / (size * 8) * size;
    let mut offset = bits - byte * 8;
    if offset + width > size * 8 {
        // A packed field across its type's alignment: the smallest word
        // from its first byte that holds it.
        byte = bits / 8;
        offset = bits % 8;
        size = *[1u64, 2, 4, 8].iter().find(|&&s| offset + width <= s * 8)?;
    }
    Some(BitField {
        byte,
        width,
        offset,
        container: size * 8,
    })
}
