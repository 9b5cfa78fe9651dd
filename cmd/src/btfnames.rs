// SPDX-License-Identifier: GPL-2.0
//! C names of BTF types, for `dynprobe list -v`: the language crate's
//! reader answers what a definition needs (kinds, sizes, members), not how
//! a type is spelled. A walk over the type section, base and split.

/// One type record: kind, name offset, size-or-type word, kind flag, and
/// for an array its element type and length.
#[derive(Clone, Copy, Debug)]
struct Rec {
    kind: u8,
    flag: bool,
    name_off: u32,
    ty: u32,
    elem: u32,
    nelems: u32,
}

/// Types and strings of a base blob and, optionally, a split blob on it.
#[derive(Default)]
pub struct Names {
    recs: Vec<Rec>,
    strings: Vec<u8>,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

impl Names {
    /// Adds a blob's types and strings (the base first, then a split one).
    /// A kind it does not know ends the walk: later types are unnamed.
    pub fn add(&mut self, blob: &[u8]) {
        let (Some(hdr_len), Some(type_off), Some(type_len), Some(str_off), Some(str_len)) = (
            u32_at(blob, 4),
            u32_at(blob, 8),
            u32_at(blob, 12),
            u32_at(blob, 16),
            u32_at(blob, 20),
        ) else {
            return;
        };
        let at = |o: u32| (hdr_len as usize).saturating_add(o as usize);
        let Some(strings) = blob.get(at(str_off)..at(str_off).saturating_add(str_len as usize))
        else {
            return;
        };
        let Some(types) = blob.get(at(type_off)..at(type_off).saturating_add(type_len as usize))
        else {
            return;
        };
        let mut off = 0usize;
        while off + 12 <= types.len() {
            let (Some(name_off), Some(info), Some(ty)) = (
                u32_at(types, off),
                u32_at(types, off + 4),
                u32_at(types, off + 8),
            ) else {
                break;
            };
            let vlen = (info & 0xffff) as usize;
            let kind = ((info >> 24) & 0x1f) as u8;
            let extra = match kind {
                1 | 14 | 17 => 4,
                3 => 12,
                4 | 5 | 15 | 19 => 12 * vlen,
                6 | 13 => 8 * vlen,
                2 | 7..=12 | 16 | 18 => 0,
                _ => break,
            };
            let (elem, nelems) = if kind == 3 {
                (
                    u32_at(types, off + 12).unwrap_or(0),
                    u32_at(types, off + 20).unwrap_or(0),
                )
            } else {
                (0, 0)
            };
            self.recs.push(Rec {
                kind,
                flag: info >> 31 != 0,
                name_off,
                ty,
                elem,
                nelems,
            });
            off += 12 + extra;
        }
        self.strings.extend_from_slice(strings);
    }

    fn name(&self, off: u32) -> &str {
        let s = self.strings.get(off as usize..).unwrap_or(&[]);
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        std::str::from_utf8(&s[..end]).unwrap_or("?")
    }

    /// The names of the functions (`FUNC` records), in type order.
    pub fn func_names(&self) -> impl Iterator<Item = &str> {
        self.recs
            .iter()
            .filter(|r| r.kind == 12)
            .map(|r| self.name(r.name_off))
    }

    /// The C spelling of type `id` (`struct file *`, `size_t`, `char[16]`).
    pub fn type_name(&self, id: u32) -> String {
        self.spell(id, 0)
    }

    fn spell(&self, id: u32, depth: u32) -> String {
        if id == 0 {
            return "void".into();
        }
        let Some(r) = self.recs.get(id as usize - 1) else {
            return "?".into();
        };
        if depth > 16 {
            return "?".into();
        }
        let n = self.name(r.name_off);
        match r.kind {
            1 | 8 | 16 => n.to_string(),
            2 => {
                let t = self.spell(r.ty, depth + 1);
                if t.ends_with('*') {
                    format!("{t}*")
                } else if (r.ty as usize)
                    .checked_sub(1)
                    .and_then(|i| self.recs.get(i))
                    .is_some_and(|t| t.kind == 13)
                {
                    "void *".into()
                } else {
                    format!("{t} *")
                }
            }
            3 => format!("{}[{}]", self.spell(r.elem, depth + 1), r.nelems),
            4 => format!("struct {n}"),
            5 => format!("union {n}"),
            6 | 19 => format!("enum {n}"),
            7 => format!("{} {n}", if r.flag { "union" } else { "struct" }),
            9 => format!("volatile {}", self.spell(r.ty, depth + 1)),
            10 => format!("const {}", self.spell(r.ty, depth + 1)),
            _ => self.spell(r.ty, depth + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob: header, types, strings.
    fn blob(types: &[u32], strings: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&0xeb9fu16.to_le_bytes());
        b.push(1);
        b.push(0);
        let tl = (types.len() * 4) as u32;
        for v in [24u32, 0, tl, tl, strings.len() as u32] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for t in types {
            b.extend_from_slice(&t.to_le_bytes());
        }
        b.extend_from_slice(strings);
        b
    }

    #[test]
    fn spells_c_types() {
        // 1: int "char" 8 bits; 2: const 1; 3: ptr 2; 4: struct file;
        // 5: ptr 4; 6: typedef size_t -> 7: int "unsigned long";
        // 8: array of 1, 16 long.
        let strings = b"\0char\0file\0size_t\0unsigned long\0";
        let types = [
            1,
            1 << 24,
            1,
            8, // char
            0,
            10 << 24,
            1, // const char
            0,
            2 << 24,
            2, // const char *
            6,
            4 << 24,
            0, // struct file (no members)
            0,
            2 << 24,
            4, // struct file *
            11,
            8 << 24,
            7, // size_t
            18,
            1 << 24,
            8,
            64, // unsigned long
            0,
            3 << 24,
            0,
            1,
            7,
            16, // char[16]
        ];
        let mut n = Names::default();
        n.add(&blob(&types, strings));
        assert_eq!(n.type_name(0), "void");
        assert_eq!(n.type_name(3), "const char *");
        assert_eq!(n.type_name(5), "struct file *");
        assert_eq!(n.type_name(6), "size_t");
        assert_eq!(n.type_name(8), "char[16]");
        assert_eq!(n.type_name(99), "?");
        assert_eq!(n.func_names().count(), 0);
    }

    #[test]
    fn spells_void_pointers() {
        // 1: ptr to void; 2: const 1; 3: FUNC "f" of proto 0.
        let types = [0, 2 << 24, 0, 0, 10 << 24, 1, 1, 12 << 24, 0];
        let mut n = Names::default();
        n.add(&blob(&types, b"\0f\0"));
        assert_eq!(n.type_name(1), "void *");
        assert_eq!(n.type_name(2), "const void *");
        assert_eq!(n.func_names().collect::<Vec<_>>(), ["f"]);
    }
}
