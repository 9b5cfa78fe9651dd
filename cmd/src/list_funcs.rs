// SPDX-License-Identifier: GPL-2.0
//! `dynprobe list --funcs [FILTER]`: the functions a probe can be put
//! on, as `perf probe -F` lists them from the kernel's symbol table: the
//! function symbols and labels of the debug file's `.text` (those of init and
//! other sections are not in the running kernel's text), sorted by
//! name, that the filter passes (perf's --filter syntax; default
//! `!_* & !*@plt`).

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

use crate::debugfile::DebugFile;
use crate::strfilter::Filter;

/// perf probe's default filter of `-F`.
pub const DEFAULT_FILTER: &str = "!_* & !*@plt";

/// The names `filter` passes (default: perf's), sorted.
pub fn names(file: &DebugFile, filter: Option<&str>) -> Result<Vec<String>, String> {
    let f = Filter::parse(filter.unwrap_or(DEFAULT_FILTER))?;
    let obj = file.object()?;
    let text = obj.section_by_name(".text").map(|s| s.index());
    let mut out: Vec<String> = obj
        .symbols()
        // perf takes the labels of .text too (its elf_sym__is_label):
        // assembly entry points, whose symbols have no type.
        .filter(|s| {
            !matches!(s.kind(), SymbolKind::Section | SymbolKind::File)
                && s.section_index().is_some()
                && s.section_index() == text
        })
        .filter_map(|s| s.name().ok().map(str::to_string))
        .filter(|n| !n.is_empty() && f.matches(n))
        .collect();
    // perf sorts by name and keeps each symbol: a name defined in
    // several files shows as often.
    out.sort();
    Ok(out)
}

/// The listing.
pub fn run(file: &DebugFile, filter: Option<&str>) -> Result<String, String> {
    Ok(names(file, filter)?.into_iter().map(|n| n + "\n").collect())
}
