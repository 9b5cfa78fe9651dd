// SPDX-License-Identifier: GPL-2.0
//! The index of a debug file's functions: each name with the DIEs that
//! define it (with code, or an inline function's abstract definition).
//! Made by one pass over every unit's top-level DIEs (shared out among
//! threads), then kept per
//! build id in `$XDG_CACHE_HOME/dynprobe/debuginfo/BUILDID.index`
//! (`~/.cache/...`), so that only the first query on a kernel reads the
//! whole file. `rm -r ~/.cache/dynprobe/debuginfo` clears it; a file that
//! does not parse is made again.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::cache;
use crate::dwarf::{bad, Dwarf, R};

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

/// Function name to DIEs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Index {
    /// The functions by name.
    pub funcs: HashMap<String, Vec<FuncDie>>,
    /// The cache file's text, read for one name at a time: parsing
    /// the whole of it would cost more than a query.
    cached: Option<String>,
}

/// The `.debug_info` size from which the index is read by several
/// threads.
const THREADED_FROM: usize = 4 << 20;

const MAGIC: &str = "dynprobe-debuginfo-index 2";

impl Index {
    /// Reads every unit's top-level subprograms, the units shared out
    /// among threads (one a CPU, at most 8) in runs of about equal size;
    /// the runs' findings are joined in unit order, so the index is the
    /// same whatever the number of threads.
    pub fn build(dw: &mut Dwarf<'_>) -> Result<Index, String> {
        let mut heads = Vec::new();
        let mut total = 0usize;
        let mut headers = dw.dwarf.units();
        while let Some(h) = headers.next().map_err(bad)? {
            total = total.saturating_add(h.length_including_self());
            heads.push(h);
        }
        // A small file (a program, a module, a fuzz input) is read faster
        // than threads start: one thread under THREADED_FROM bytes.
        let threads = if total < THREADED_FROM {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .clamp(1, 8)
        };
        let share = total / threads + 1;
        let mut runs: Vec<&[_]> = Vec::new();
        let (mut first, mut size) = (0, 0usize);
        for (i, h) in heads.iter().enumerate() {
            size = size.saturating_add(h.length_including_self());
            if size >= share {
                runs.push(&heads[first..=i]);
                (first, size) = (i + 1, 0);
            }
        }
        runs.push(&heads[first..]);
        let gimli_dwarf = &dw.dwarf;
        let found: Vec<Result<Vec<(String, FuncDie)>, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = runs
                .iter()
                .map(|run| s.spawn(move || subprograms(gimli_dwarf, run)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("the index's reader stopped".into()))
                })
                .collect()
        });
        let mut idx = Index::default();
        for run in found {
            for (name, die) in run? {
                idx.funcs.entry(name).or_default().push(die);
            }
        }
        Ok(idx)
    }

    /// The DIEs of function `name`.
    pub fn find(&self, name: &str) -> Vec<FuncDie> {
        let Some(text) = &self.cached else {
            return self.funcs.get(name).cloned().unwrap_or_default();
        };
        let mut out = Vec::new();
        let suffix = format!(" {name}\n");
        let mut from = 0;
        while let Some(i) = text.get(from..).and_then(|t| t.find(&suffix)) {
            let end = from + i;
            let start = text[..end].rfind('\n').map_or(0, |n| n + 1);
            if let Some(f) =
                parse_line(&text[start..end + suffix.len() - 1]).filter(|(n, _)| n == name)
            {
                out.push(f.1);
            }
            from = end + suffix.len();
        }
        out
    }

    /// The index as its cache file has it.
    pub fn to_text(&self, key: &str) -> String {
        let mut names: Vec<_> = self.funcs.keys().collect();
        names.sort();
        let mut out = format!("{MAGIC} {key}\n");
        for n in names {
            for f in &self.funcs[n] {
                out += &format!(
                    "{:x} {:x} {} {n}\n",
                    f.cu,
                    f.die,
                    if f.inline { 'i' } else { 'c' }
                );
            }
        }
        out
    }

    /// A cache file's index, if it is one for `key`.
    pub fn from_text(text: &str, key: &str) -> Option<Index> {
        let mut lines = text.lines();
        if lines.next()? != format!("{MAGIC} {key}") {
            return None;
        }
        let mut idx = Index::default();
        for l in lines {
            let (name, f) = parse_line(l)?;
            idx.funcs.entry(name).or_default().push(f);
        }
        Some(idx)
    }

    /// A cache file's index, kept as text (see `find`), if its first
    /// line is the one for `key`.
    pub fn from_cache(text: String, key: &str) -> Option<Index> {
        let first = text.lines().next()?;
        if first != format!("{MAGIC} {key}") {
            return None;
        }
        Some(Index {
            funcs: HashMap::new(),
            cached: Some(text),
        })
    }
}

/// One line of the cache file: `CU DIE KIND NAME`, the name last (a
/// Rust function's may hold blanks).
fn parse_line(l: &str) -> Option<(String, FuncDie)> {
    let mut w = l.splitn(4, ' ');
    let (cu, die, kind, name) = (w.next()?, w.next()?, w.next()?, w.next()?);
    if name.is_empty() {
        return None;
    }
    let f = FuncDie {
        cu: usize::from_str_radix(cu, 16).ok()?,
        die: usize::from_str_radix(die, 16).ok()?,
        inline: match kind {
            "i" => true,
            "c" => false,
            _ => return None,
        },
    };
    Some((name.to_string(), f))
}

/// The top-level subprograms of the units `heads`, in order: each
/// named function with code, or inline function's abstract definition.
fn subprograms<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    heads: &[gimli::UnitHeader<R<'a>>],
) -> Result<Vec<(String, FuncDie)>, String> {
    let mut out = Vec::new();
    for h in heads {
        let Some(cu) = h.offset().as_debug_info_offset() else {
            continue;
        };
        let unit = dwarf.unit(*h).map_err(bad)?;
        let mut tree = unit.entries_tree(None).map_err(bad)?;
        let root = tree.root().map_err(bad)?;
        let mut children = root.children();
        while let Some(child) = children.next().map_err(bad)? {
            let e = child.entry();
            if e.tag() != gimli::DW_TAG_subprogram {
                continue;
            }
            if e.attr_value(gimli::DW_AT_declaration)
                .ok()
                .flatten()
                .is_some()
            {
                continue;
            }
            let has_code = e.attr_value(gimli::DW_AT_low_pc).ok().flatten().is_some()
                || e.attr_value(gimli::DW_AT_ranges).ok().flatten().is_some();
            let inline = matches!(
                e.attr_value(gimli::DW_AT_inline).ok().flatten(),
                Some(gimli::AttributeValue::Inline(i))
                    if i == gimli::DW_INL_inlined || i == gimli::DW_INL_declared_inlined
            );
            if !has_code && !inline {
                continue;
            }
            // A name no place can spell (empty, or one that would break
            // the cache file's lines) is not indexed.
            let Some(name) = Dwarf::attr_integrate(&unit, e.offset(), gimli::DW_AT_name)
                .and_then(|v| dwarf.attr_string(&unit, v).ok())
                .map(|s| String::from_utf8_lossy(s.slice()).into_owned())
                .filter(|n| !n.is_empty() && !n.contains('\n'))
            else {
                continue;
            };
            out.push((
                name,
                FuncDie {
                    cu: cu.0,
                    die: e.offset().0,
                    inline: inline && !has_code,
                },
            ));
        }
    }
    Ok(out)
}

/// Where the index of build id `id` is kept.
pub fn cache_path(id: &str) -> Option<PathBuf> {
    Some(cache::dir("debuginfo")?.join(format!("{id}.index")))
}

/// The index of the file with build id `id` (None: not cached), from
/// its cache or made and cached; `size` is the file's, part of the key.
pub fn load(dw: &mut Dwarf<'_>, id: Option<&str>, size: usize) -> Result<Index, String> {
    let Some(id) = id else {
        return Index::build(dw);
    };
    let key = format!("{id} {size}");
    let path = cache_path(id);
    if let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) {
        if let Some(idx) = Index::from_cache(text, &key) {
            return Ok(idx);
        }
    }
    let idx = Index::build(dw)?;
    if let Some(p) = path {
        cache::store(&p, &idx.to_text(&key));
    }
    Ok(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index made by threads is the one a single pass over every
    /// unit makes, names and DIEs in the same order: on this test
    /// binary, whose DWARF has hundreds of units (and more than
    /// THREADED_FROM bytes, so several threads read it).
    #[test]
    fn threads_make_the_same_index() {
        let exe = std::env::current_exe().unwrap();
        let file = crate::debugfile::DebugFile::open(&exe).unwrap();
        let obj = file.object().unwrap();
        let mut dw = Dwarf::load(&file, &obj).unwrap();
        let mut heads = Vec::new();
        let mut it = dw.dwarf.units();
        while let Some(h) = it.next().unwrap() {
            heads.push(h);
        }
        assert!(heads.len() > 50, "{} units", heads.len());
        let mut one = Index::default();
        for (name, die) in subprograms(&dw.dwarf, &heads).unwrap() {
            one.funcs.entry(name).or_default().push(die);
        }
        let built = Index::build(&mut dw).unwrap();
        assert!(built.funcs.len() > 100);
        assert_eq!(built, one);
    }

    #[test]
    fn text_round_trip() {
        let mut idx = Index::default();
        idx.funcs.insert(
            "vfs_read".into(),
            vec![FuncDie {
                cu: 0x10,
                die: 0x2a,
                inline: false,
            }],
        );
        idx.funcs.insert(
            "and_then<(), core::fmt::Error>".into(),
            vec![FuncDie {
                cu: 3,
                die: 4,
                inline: false,
            }],
        );
        idx.funcs.insert(
            "fdget".into(),
            vec![
                FuncDie {
                    cu: 0,
                    die: 5,
                    inline: true,
                },
                FuncDie {
                    cu: 0x99,
                    die: 7,
                    inline: true,
                },
            ],
        );
        let t = idx.to_text("abc 12");
        let cached = Index::from_cache(t.clone(), "abc 12").unwrap();
        for n in [
            "vfs_read",
            "fdget",
            "and_then<(), core::fmt::Error>",
            "read",
            "x",
        ] {
            assert_eq!(cached.find(n), idx.find(n), "{n}");
        }
        assert_eq!(cached.find("fdget").len(), 2);
        assert!(Index::from_cache(t.clone(), "abc 13").is_none());
        assert_eq!(Index::from_text(&t, "abc 12"), Some(idx));
        assert_eq!(Index::from_text(&t, "abc 13"), None);
        assert_eq!(Index::from_text("junk", "abc 12"), None);
        for l in 0..t.len() {
            let _ = Index::from_text(&t[..l], "abc 12");
        }
        let bad = format!("{MAGIC} k\nzz 1 c f\n");
        assert_eq!(Index::from_text(&bad, "k"), None);
    }
}
