// SPDX-License-Identifier: GPL-2.0
//! The index of a debug file's functions: each name with the DIEs that
//! define it (with code, or an inline function's abstract definition).
//! Made by one pass over every unit's top-level DIEs (shared out among
//! threads; a unit read raw by dwarf_toplevel.rs, or through gimli's
//! entries tree where that reader leaves it), then kept per
//! build id in `$XDG_CACHE_HOME/dynprobe/debuginfo/BUILDID.index`
//! (`~/.cache/...`), so that only the first query on a kernel reads the
//! whole file; the first query writes its lines in unit order and
//! answers from them as later queries do. `rm -r
//! ~/.cache/dynprobe/debuginfo` clears it; a file that does not parse is
//! made again.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;

use crate::cache;
use crate::dwarf::{bad, each_top_level_subprogram, Dwarf, Unit, R};
pub use crate::dwarf_found::{Found, FuncDie, Sink};

/// The cache file's lines of the functions found, in their order.
pub struct Lines(String);

impl<'a> Sink<'a> for Lines {
    fn push(&mut self, name: Cow<'a, str>, f: FuncDie) {
        use std::fmt::Write;
        let kind = if f.inline { 'i' } else { 'c' };
        let _ = writeln!(self.0, "{:x} {:x} {kind} {name}", f.cu, f.die);
    }
    fn mark(&self) -> usize {
        self.0.len()
    }
    fn cut(&mut self, to: usize) {
        self.0.truncate(to);
    }
}

/// Function name to DIEs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Index {
    /// The functions by name.
    pub funcs: HashMap<String, Vec<FuncDie>>,
    /// The cache file's text, read for one name at a time: parsing
    /// the whole of it would cost more than a query. In parts (as the
    /// threads that made it left it), each of whole lines.
    cached: Option<Vec<String>>,
}

/// The `.debug_info` size from which the index is read by several
/// threads.
const THREADED_FROM: usize = 4 << 20;

/// The runs of units a thread reads on average.
const RUNS_A_THREAD: usize = 8;

const MAGIC: &str = "dynprobe-debuginfo-index 2";

impl Index {
    /// Reads every unit's top-level subprograms (see `runs`).
    pub fn build(dw: &mut Dwarf<'_>) -> Result<Index, String> {
        let mut idx = Index::default();
        for run in runs(dw, |_| Vec::new())? {
            for (name, die) in run {
                idx.funcs.entry(name.into_owned()).or_default().push(die);
            }
        }
        Ok(idx)
    }

    /// The DIEs of function `name`.
    pub fn find(&self, name: &str) -> Vec<FuncDie> {
        let Some(parts) = &self.cached else {
            return self.funcs.get(name).cloned().unwrap_or_default();
        };
        let mut out = Vec::new();
        let suffix = format!(" {name}\n");
        for text in parts {
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
            cached: Some(vec![text]),
        })
    }
}

/// Every unit's top-level subprograms (each named function with code,
/// or inline function's abstract definition), each run of units' into
/// a sink `new` makes for its size in bytes: the units shared out among
/// threads (one a CPU, at most 8) in runs, the runs' sinks in unit
/// order, so the index is the same whatever the number of threads.
fn runs<'a, S: Sink<'a> + Send>(
    dw: &Dwarf<'a>,
    new: impl Fn(usize) -> S + Sync,
) -> Result<Vec<S>, String> {
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
    // Runs of about equal size, several a thread, taken in turn by
    // whichever thread is free: a thread the machine's other work
    // holds back reads fewer.
    let count = if threads == 1 {
        1
    } else {
        threads * RUNS_A_THREAD
    };
    let share = total / count + 1;
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
    let (new, runs) = (&new, &runs);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let next = &next;
    let read = move || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(run) = runs.get(i) else {
                return done;
            };
            let size = run.iter().map(|h| h.length_including_self()).sum();
            let mut sink = new(size);
            done.push((i, subprograms(gimli_dwarf, run, &mut sink).map(|()| sink)));
        }
    };
    let mut found: Vec<Option<Result<S, String>>> = (0..runs.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(read)).collect();
        for h in handles {
            // A reader that stopped leaves its runs unread: an error.
            for (i, r) in h.join().unwrap_or_default() {
                found[i] = Some(r);
            }
        }
    });
    found
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("the index's reader stopped".into())))
        .collect()
}

/// The cache file's text of the index of `dw` (answering as
/// `Index::build`'s, without making its map), in parts: its functions
/// in unit order, not by name as `to_text` has them.
fn text_of(dw: &Dwarf<'_>, key: &str) -> Result<Vec<String>, String> {
    // About 3 bytes of lines to 100 of `.debug_info` in a kernel's.
    let runs = runs(dw, |size| Lines(String::with_capacity(size / 32)))?;
    let mut out = vec![format!("{MAGIC} {key}\n")];
    out.extend(runs.into_iter().map(|l| l.0));
    Ok(out)
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
/// A unit is read raw (dwarf_toplevel.rs), or, where that reader does
/// not handle it, through gimli's unit.
fn subprograms<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    heads: &[gimli::UnitHeader<R<'a>>],
    out: &mut impl Sink<'a>,
) -> Result<(), String> {
    for h in heads {
        let Some(cu) = h.offset().as_debug_info_offset() else {
            continue;
        };
        let unit = dwarf.unit(*h).map_err(bad)?;
        let had = out.mark();
        if crate::dwarf_toplevel::subprograms(dwarf, &unit, cu, out).is_err() {
            out.cut(had);
            unit_subprograms(dwarf, &unit, cu, out)?;
        }
    }
    Ok(())
}

/// The top-level subprograms of `unit` at `cu`, read through gimli's
/// entries tree.
pub fn unit_subprograms<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &Unit<'a>,
    cu: gimli::DebugInfoOffset,
    out: &mut impl Sink<'a>,
) -> Result<(), String> {
    each_top_level_subprogram(unit, |e| {
        if e.attr_value(gimli::DW_AT_declaration)
            .ok()
            .flatten()
            .is_some()
        {
            return Ok(());
        }
        let has_code = e.attr_value(gimli::DW_AT_low_pc).ok().flatten().is_some()
            || e.attr_value(gimli::DW_AT_ranges).ok().flatten().is_some();
        let inline = matches!(
            e.attr_value(gimli::DW_AT_inline).ok().flatten(),
            Some(gimli::AttributeValue::Inline(i))
                if i == gimli::DW_INL_inlined || i == gimli::DW_INL_declared_inlined
        );
        if !has_code && !inline {
            return Ok(());
        }
        // A name no place can spell (empty, or one that would break
        // the cache file's lines) is not indexed.
        let Some(name) = Dwarf::attr_integrate(unit, e.offset(), gimli::DW_AT_name)
            .and_then(|v| dwarf.attr_string(unit, v).ok())
            .map(|s| String::from_utf8_lossy(s.slice()))
            .filter(|n| !n.is_empty() && !n.contains('\n'))
        else {
            return Ok(());
        };
        out.push(
            name,
            FuncDie {
                cu: cu.0,
                die: e.offset().0,
                inline: inline && !has_code,
            },
        );
        Ok(())
    })
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
    let Some(path) = path else {
        return Index::build(dw);
    };
    // Made as the cache's text and answered from it, as a later query is.
    let parts = text_of(dw, &key)?;
    cache::store_parts(&path, &parts);
    Ok(Index {
        funcs: HashMap::new(),
        cached: Some(parts),
    })
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
        let mut found = Vec::new();
        subprograms(&dw.dwarf, &heads, &mut found).unwrap();
        for (name, die) in found {
            one.funcs.entry(name.into_owned()).or_default().push(die);
        }
        let built = Index::build(&mut dw).unwrap();
        assert!(built.funcs.len() > 100);
        assert_eq!(built, one);
    }

    /// Each unit of the debug file `path`: the raw reader
    /// (dwarf_toplevel.rs) reads it itself, and finds what gimli's
    /// entries tree finds, in the same order. The number of units.
    fn readers_agree(path: &std::path::Path) -> usize {
        let file = crate::debugfile::DebugFile::open(path).unwrap();
        let obj = file.object().unwrap();
        let dw = Dwarf::load(&file, &obj).unwrap();
        let mut units = 0;
        let mut it = dw.dwarf.units();
        while let Some(h) = it.next().unwrap() {
            let cu = h.offset().as_debug_info_offset().unwrap();
            let unit = dw.dwarf.unit(h).unwrap();
            let mut raw = Vec::new();
            let read = crate::dwarf_toplevel::subprograms(&dw.dwarf, &unit, cu, &mut raw);
            assert!(
                read.is_ok(),
                "{}: unit {:#x} not read raw",
                path.display(),
                cu.0
            );
            let mut general = Vec::new();
            unit_subprograms(&dw.dwarf, &unit, cu, &mut general).unwrap();
            assert_eq!(raw, general, "{}: unit {:#x}", path.display(), cu.0);
            units += 1;
        }
        units
    }

    /// On this test binary (Rust, hundreds of units) and the C fixtures
    /// (a program, a kernel module's relocated debug info).
    #[test]
    fn the_raw_reader_finds_what_gimli_finds() {
        assert!(readers_agree(&std::env::current_exe().unwrap()) > 50);
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        for f in ["srcprobe-fixture", "srcfile-fixture", "srcprobe_fixture.ko"] {
            assert!(readers_agree(&data.join(f)) > 0, "{f}");
        }
    }

    /// The same on the stock kernel's debug vmlinux (2741 units), when
    /// set-up has it: minutes in a debug build, so run on demand
    /// (`cargo test --release -- --ignored readers_agree_on_vmlinux`).
    #[test]
    #[ignore]
    fn readers_agree_on_vmlinux() {
        let cache = std::env::var("DYNPROBE_CACHE").unwrap_or("/var/cache/dynprobe".into());
        let rel = "7.2.13+deb14-amd64";
        let v = std::path::PathBuf::from(format!(
            "{cache}/stock-{rel}/dbg/usr/lib/debug/lib/modules/{rel}/vmlinux"
        ));
        if v.exists() {
            assert!(readers_agree(&v) > 2000);
        }
    }

    /// The cache text a first query makes (in unit order, in parts)
    /// answers as the index `build` makes: read back whole, it is that
    /// index; each name is found with the same DIEs.
    #[test]
    fn the_first_querys_text_is_the_index() {
        let exe = std::env::current_exe().unwrap();
        let file = crate::debugfile::DebugFile::open(&exe).unwrap();
        let obj = file.object().unwrap();
        let mut dw = Dwarf::load(&file, &obj).unwrap();
        let built = Index::build(&mut dw).unwrap();
        let parts = text_of(&dw, "k 1").unwrap();
        assert_eq!(
            Index::from_text(&parts.concat(), "k 1").as_ref(),
            Some(&built)
        );
        let from_parts = Index {
            funcs: HashMap::new(),
            cached: Some(parts),
        };
        let mut names: Vec<_> = built.funcs.keys().collect();
        names.sort();
        let several = names.iter().filter(|n| built.funcs[n.as_str()].len() > 1);
        for n in names.iter().step_by(50).chain(several.take(50)) {
            assert_eq!(from_parts.find(n), built.find(n), "{n}");
        }
        assert!(from_parts.find("no such function").is_empty());
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
