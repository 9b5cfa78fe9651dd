// SPDX-License-Identifier: GPL-2.0
//! A small BTF encoder for tests: builds blobs in the format of
//! `/sys/kernel/btf/vmlinux`, one type at a time, ids in creation order.

pub const KIND_INT: u32 = 1;
pub const KIND_PTR: u32 = 2;
pub const KIND_ARRAY: u32 = 3;
pub const KIND_STRUCT: u32 = 4;
pub const KIND_UNION: u32 = 5;
pub const KIND_ENUM: u32 = 6;
pub const KIND_FWD: u32 = 7;
pub const KIND_TYPEDEF: u32 = 8;
pub const KIND_VOLATILE: u32 = 9;
pub const KIND_CONST: u32 = 10;
pub const KIND_RESTRICT: u32 = 11;
pub const KIND_FUNC: u32 = 12;
pub const KIND_FUNC_PROTO: u32 = 13;
pub const KIND_FLOAT: u32 = 16;
pub const KIND_TYPE_TAG: u32 = 18;
pub const KIND_ENUM64: u32 = 19;

/// `BTF_INT_SIGNED`.
pub const INT_SIGNED: u32 = 1;

/// A struct/union member with the offset in bits and, for kind-flag
/// structs, the bitfield size.
pub struct Member<'a> {
    pub name: &'a str,
    pub ty: u32,
    pub bit_offset: u32,
    pub bitfield_size: u32,
}

pub fn m(name: &str, ty: u32, bit_offset: u32) -> Member<'_> {
    Member {
        name,
        ty,
        bit_offset,
        bitfield_size: 0,
    }
}

pub fn bf(name: &str, ty: u32, bit_offset: u32, bitfield_size: u32) -> Member<'_> {
    Member {
        name,
        ty,
        bit_offset,
        bitfield_size,
    }
}

#[derive(Default)]
pub struct BtfWriter {
    pub types: Vec<u8>,
    pub strings: Vec<u8>,
    next_id: u32,
    /// Length of the base's string section (split BTF), 0 for a base.
    str_base: u32,
}

impl BtfWriter {
    pub fn new() -> Self {
        BtfWriter {
            types: Vec::new(),
            strings: vec![0],
            next_id: 1,
            str_base: 0,
        }
    }

    /// Split BTF on a base of `base_types` types and a string section of
    /// `base_str_len` bytes: ids go on after the base's, string offsets
    /// after its strings, whose offset 0 is "", so the split's own strings
    /// start with a name.
    pub fn split(base_types: u32, base_str_len: u32) -> Self {
        BtfWriter {
            types: Vec::new(),
            strings: Vec::new(),
            next_id: base_types + 1,
            str_base: base_str_len,
        }
    }

    /// The id the next type gets (for forward references).
    pub fn next_id(&self) -> u32 {
        self.next_id
    }

    /// Offset of `s` in the string section (added; "" is offset 0).
    pub fn string(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return 0;
        }
        let off = self.str_base + self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        off
    }

    pub fn words(&mut self, words: &[u32]) {
        for w in words {
            self.types.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// The common part of a type; returns its id.
    pub fn header(
        &mut self,
        name: &str,
        kind: u32,
        kind_flag: bool,
        vlen: u32,
        size_or_type: u32,
    ) -> u32 {
        let name_off = self.string(name);
        let info = (u32::from(kind_flag) << 31) | (kind << 24) | vlen;
        self.words(&[name_off, info, size_or_type]);
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub fn int(&mut self, name: &str, bytes: u32, bits: u32, signed: bool) -> u32 {
        self.int_encoded(name, bytes, bits, 0, if signed { INT_SIGNED } else { 0 })
    }

    pub fn int_encoded(
        &mut self,
        name: &str,
        bytes: u32,
        bits: u32,
        offset: u32,
        encoding: u32,
    ) -> u32 {
        let id = self.header(name, KIND_INT, false, 0, bytes);
        self.words(&[(encoding << 24) | (offset << 16) | bits]);
        id
    }

    pub fn ptr(&mut self, target: u32) -> u32 {
        self.header("", KIND_PTR, false, 0, target)
    }

    pub fn typedef(&mut self, name: &str, target: u32) -> u32 {
        self.header(name, KIND_TYPEDEF, false, 0, target)
    }

    pub fn modifier(&mut self, kind: u32, target: u32) -> u32 {
        self.header("", kind, false, 0, target)
    }

    pub fn type_tag(&mut self, tag: &str, target: u32) -> u32 {
        self.header(tag, KIND_TYPE_TAG, false, 0, target)
    }

    pub fn array(&mut self, elem: u32, index: u32, nelems: u32) -> u32 {
        let id = self.header("", KIND_ARRAY, false, 0, 0);
        self.words(&[elem, index, nelems]);
        id
    }

    fn members(&mut self, kind: u32, name: &str, size: u32, kflag: bool, ms: &[Member]) -> u32 {
        let id = self.header(name, kind, kflag, ms.len() as u32, size);
        for mb in ms {
            let n = self.string(mb.name);
            let off = if kflag {
                (mb.bitfield_size << 24) | mb.bit_offset
            } else {
                mb.bit_offset
            };
            self.words(&[n, mb.ty, off]);
        }
        id
    }

    pub fn structure(&mut self, name: &str, size: u32, ms: &[Member]) -> u32 {
        self.members(KIND_STRUCT, name, size, false, ms)
    }

    /// A struct whose member offsets carry bitfield sizes (kind flag set).
    pub fn structure_bitfields(&mut self, name: &str, size: u32, ms: &[Member]) -> u32 {
        self.members(KIND_STRUCT, name, size, true, ms)
    }

    pub fn union(&mut self, name: &str, size: u32, ms: &[Member]) -> u32 {
        self.members(KIND_UNION, name, size, false, ms)
    }

    pub fn enumeration(&mut self, name: &str, values: &[(&str, i32)]) -> u32 {
        let id = self.header(name, KIND_ENUM, false, values.len() as u32, 4);
        for (n, v) in values {
            let n = self.string(n);
            self.words(&[n, *v as u32]);
        }
        id
    }

    pub fn enumeration64(&mut self, name: &str, values: &[(&str, u64)]) -> u32 {
        let id = self.header(name, KIND_ENUM64, false, values.len() as u32, 8);
        for (n, v) in values {
            let n = self.string(n);
            self.words(&[n, *v as u32, (*v >> 32) as u32]);
        }
        id
    }

    pub fn fwd(&mut self, name: &str) -> u32 {
        self.header(name, KIND_FWD, false, 0, 0)
    }

    pub fn func_proto(&mut self, ret: u32, params: &[(&str, u32)]) -> u32 {
        let id = self.header("", KIND_FUNC_PROTO, false, params.len() as u32, ret);
        for (n, t) in params {
            let n = self.string(n);
            self.words(&[n, *t]);
        }
        id
    }

    pub fn func(&mut self, name: &str, proto: u32) -> u32 {
        // vlen holds the linkage: 1 is global.
        self.header(name, KIND_FUNC, false, 1, proto)
    }

    /// A function and its prototype; returns the function's id.
    pub fn function(&mut self, name: &str, ret: u32, params: &[(&str, u32)]) -> u32 {
        let proto = self.func_proto(ret, params);
        self.func(name, proto)
    }

    /// The blob: 24-byte header, types, strings.
    pub fn finish(&self) -> Vec<u8> {
        self.finish_with(24, &[])
    }

    /// The blob with a header of `hdr_len` bytes (zero-filled past the
    /// known fields) and, when `layout` is not empty, a layout section
    /// after the strings.
    pub fn finish_with(&self, hdr_len: u32, layout: &[[u8; 4]]) -> Vec<u8> {
        let type_len = self.types.len() as u32;
        let str_len = self.strings.len() as u32;
        let mut b = Vec::new();
        b.extend_from_slice(&0xeb9fu16.to_le_bytes());
        b.push(1); // version
        b.push(0); // flags
        for w in [hdr_len, 0, type_len, type_len, str_len] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        if hdr_len >= 32 {
            let layout_len = (layout.len() * 4) as u32;
            for w in [type_len + str_len, layout_len] {
                b.extend_from_slice(&w.to_le_bytes());
            }
        }
        b.resize(hdr_len as usize, 0);
        b.extend_from_slice(&self.types);
        b.extend_from_slice(&self.strings);
        for e in layout {
            b.extend_from_slice(e);
        }
        b
    }
}

/// The index of `blob`, built as the kernel module builds it.
pub fn index_of(blob: &[u8]) -> Vec<u32> {
    let len = dynprobe_lang::btf::index_len(blob).expect("index_len");
    let mut index = vec![0u32; len];
    dynprobe_lang::btf::build_index(blob, &mut index).expect("build_index");
    index
}

/// Offset of `s` in the string section of `blob` (made by
/// [`BtfWriter::finish`]).
pub fn string_in(blob: &[u8], s: &str) -> Option<u32> {
    let word = |off: usize| u32::from_le_bytes(blob[off..off + 4].try_into().unwrap()) as usize;
    let (str_off, str_len) = (24 + word(16), word(20));
    let strings = &blob[str_off..str_off + str_len];
    let mut needle = vec![0];
    needle.extend_from_slice(s.as_bytes());
    needle.push(0);
    strings
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p as u32 + 1)
}

/// The length of `blob`'s string section.
pub fn strings_len(blob: &[u8]) -> u32 {
    u32::from_le_bytes(blob[20..24].try_into().unwrap())
}

/// The index of split blob `blob` on `base`.
pub fn split_index_of(base: &dynprobe_lang::Btf<'_>, blob: &[u8]) -> Vec<u32> {
    let len = dynprobe_lang::btf::index_len_split(base, blob).expect("index_len_split");
    let mut index = vec![0u32; len];
    dynprobe_lang::btf::build_index_split(base, blob, &mut index).expect("build_index_split");
    index
}

/// Writes a little-endian u32 into `blob` at `off`.
pub fn poke(blob: &mut [u8], off: usize, v: u32) {
    blob[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
