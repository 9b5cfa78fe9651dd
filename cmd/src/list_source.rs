// SPDX-License-Identifier: GPL-2.0
//! `dynprobe list --line FUNC[:RLN[+N|-RLN2]]` (`SRC:ALN...` in
//! list_file.rs) and `list --vars PLACE`:
//! a function's source lines with the probe-able ones numbered from its
//! declaration line, as `perf probe -L` prints them, and the variables
//! visible at a place with their types, as `perf probe -V` does.

use std::collections::BTreeSet;

use gimli::UnitOffset;

use crate::dwarf::{bad, Dwarf};
use crate::dwarf_lines::{subtree, tail_eq, UnitView};
use crate::dwarf_vars;
use crate::list_file::show;
use crate::srcplace;
use crate::srcprobe::{with_debuginfo_for, Ctx, Options};

/// What `list` shows of a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// `--line`.
    Lines,
    /// `--vars`.
    Vars,
    /// `--vars --externs`: with the unit's global variables.
    Externs,
    /// `--funcs`: the place is the filter (empty: perf's default).
    Funcs,
}

/// Runs `list --line`, `--vars` or `--funcs`; the exit status.
pub fn run(what: What, place: &str, opts: &Options) -> i32 {
    match text(what, place, opts) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => {
            eprintln!("dynprobe: {e}");
            1
        }
    }
}

/// What `run` prints.
pub fn text(what: What, place: &str, opts: &Options) -> Result<String, String> {
    match what {
        // The symbol table alone: no DWARF read.
        What::Funcs => crate::debugfile::DebugFile::locate(opts.debuginfo.as_deref())
            .and_then(|f| crate::list_funcs::run(&f, Some(place).filter(|p| !p.is_empty()))),
        _ => {
            let list = |ctx: &mut Ctx<'_>| text_in(ctx, what, place);
            // -x BIN: the user binary's DWARF.
            match &opts.exec {
                Some(bin) => crate::user_srcprobe::with_debuginfo(bin, opts, list),
                None => with_debuginfo_for(opts, place, list),
            }
        }
    }
}

/// What `list --line` or `list --vars [--externs]` prints of `place` in
/// an open debug file (`--funcs` needs none: nothing).
pub fn text_in(ctx: &mut Ctx<'_>, what: What, place: &str) -> Result<String, String> {
    match what {
        What::Lines => lines(ctx, place),
        What::Vars | What::Externs => vars(ctx, place, what == What::Externs),
        What::Funcs => Ok(String::new()),
    }
}

/// A line range: FUNC, @SRC, first and last line relative to the
/// declaration (`u64::MAX`: to the function's end).
fn parse_range(s: &str) -> Result<(String, Option<String>, u64, u64), String> {
    let bad_range = || format!("`{s}`: not FUNC[@SRC][:RLN[+N|-RLN2]]");
    let (head, range) = match s.split_once(':') {
        Some((h, r)) => (h, Some(r)),
        None => (s, None),
    };
    let (func, file) = match head.split_once('@') {
        Some((f, src)) => (f.to_string(), Some(src.to_string())),
        None => (head.to_string(), None),
    };
    if func.is_empty() || !func.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad_range());
    }
    let num = |t: &str| t.parse::<u64>().map_err(|_| bad_range());
    let (start, end) = match range {
        None => (0, u64::MAX),
        Some(r) => {
            if let Some((a, n)) = r.split_once('+') {
                let a = num(a)?;
                (a, (a + num(n)?).saturating_sub(1))
            } else if let Some((a, b)) = r.split_once('-') {
                (num(a)?, num(b)?)
            } else {
                (num(r)?, u64::MAX)
            }
        }
    };
    if start > end {
        return Err(format!("`{s}`: start line must be smaller than end line"));
    }
    Ok((func, file, start, end))
}

fn lines(ctx: &mut Ctx<'_>, place: &str) -> Result<String, String> {
    if crate::list_file::is_file_range(place) {
        return crate::list_file::lines(ctx, place);
    }
    let (func, file, rstart, rend) = parse_range(place)?;
    let dies = ctx.function_dies(&func, file.as_deref())?;
    let Some(f) = dies.first().copied() else {
        return Err(format!("Failed to find {func}"));
    };
    let unit = ctx.dw.unit(f.cu)?;
    let die = UnitOffset(f.die);
    let decl = Dwarf::decl_line(&unit, die).ok_or("the function has no declaration line")?;
    let fname = ctx.dw.decl_file(&unit, die).unwrap_or_default();
    let lno_s = decl.saturating_add(rstart);
    let lno_e = decl.saturating_add(rend);
    let view = UnitView::new(&ctx.dw, &unit)?;
    let roots = if f.inline {
        crate::srcprobe::instances(&ctx.dw, &unit, die)?
    } else {
        vec![die]
    };
    let mut set = BTreeSet::new();
    for root in roots {
        for l in view.function_lines(&ctx.dw, root, false)? {
            if !tail_eq(&l.file, &fname) || l.line < lno_s || l.line > lno_e {
                continue;
            }
            // Only lines an address maps back to (perf's check).
            if let Some((f2, l2)) = view.line_info(&ctx.dw, l.addr) {
                if l2 != l.line || f2 != l.file {
                    continue;
                }
            }
            set.insert(l.line);
        }
    }
    let head = |shown: &str| format!("<{func}@{shown}:{rstart}>\n");
    let end = (rend != u64::MAX).then_some(lno_e);
    Ok(show(ctx, &unit, &fname, head, &set, lno_s, end, decl))
}

/// perf probe's default filter of `--vars`, on the names.
const VAR_FILTER: &str = "!__k???tab_* & !__crc_*";

fn vars(ctx: &mut Ctx<'_>, place: &str, externs: bool) -> Result<String, String> {
    let filter = crate::strfilter::Filter::parse(VAR_FILTER)?;
    let sp = srcplace::parse(place).map_err(|e| e.to_string())?;
    let points = ctx.points(&sp)?;
    let mut out = format!("Available variables at {}\n", point_text(&sp.place));
    for p in &points {
        let unit = ctx.dw.unit(p.cu)?;
        let sym = ctx
            .file
            .symbol_at(p.addr)
            .map(|s| format!("{}+{}", s.name, p.addr - s.addr))
            .unwrap_or_else(|| format!("{:#x}", p.addr));
        out += &format!("\t@<{sym}>\n");
        let nodes = subtree(&ctx.dw, &unit, p.scope)?;
        let spe = unit.entry(p.sp).map_err(bad)?;
        let ranges = ctx.dw.ranges(&unit, &spe)?;
        let sp_range = (
            ctx.dw.entry_pc(&unit, &spe).unwrap_or(0),
            ranges.first().map(|r| r.1).unwrap_or(0),
        );
        let mut found = BTreeSet::new();
        for (i, n) in nodes.iter().enumerate().skip(1) {
            if !matches!(
                n.tag,
                gimli::DW_TAG_formal_parameter | gimli::DW_TAG_variable
            ) || !crate::dwarf_lines::reached(&nodes, i, p.addr)
            {
                continue;
            }
            let Some(name) = ctx.dw.name(&unit, n.off) else {
                continue;
            };
            if dwarf_vars::location(&ctx.dw, &unit, n.off, p.addr, p.sp, sp_range).is_err() {
                continue;
            }
            let ty = dwarf_vars::type_name(&ctx.dw, &unit, dwarf_vars::type_of(&unit, n.off));
            found.insert(format!("{ty}\t{name}"));
        }
        if externs {
            // perf's collect_variables_cb on the unit's own children.
            for g in dwarf_vars::globals(&unit)? {
                let Some(name) = ctx.dw.name(&unit, g) else {
                    continue;
                };
                if dwarf_vars::location(&ctx.dw, &unit, g, p.addr, p.sp, sp_range).is_err() {
                    continue;
                }
                let ty = dwarf_vars::type_name(&ctx.dw, &unit, dwarf_vars::type_of(&unit, g));
                found.insert(format!("{ty}\t{name}"));
            }
        }
        let shown: Vec<_> = found
            .iter()
            .filter(|v| filter.matches(v.split_once('\t').map_or(v.as_str(), |(_, n)| n)))
            .collect();
        if shown.is_empty() {
            out += "\t\t(No matched variables)\n";
        }
        for v in shown {
            out += &format!("\t\t{v}\n");
        }
    }
    Ok(out)
}

/// A place as perf's synthesize_perf_probe_point writes it:
/// FUNC[+OFFS|:RLN|%return][@SRC][:ALN], SRC shortened to its last 30
/// bytes from a `/`; a pattern is left out.
pub fn point_text(p: &srcplace::Place) -> String {
    let mut out = String::new();
    if let Some(f) = &p.func {
        out += f;
        match p.spot {
            srcplace::Spot::Entry(o) if o > 0 => out += &format!("+{o}"),
            srcplace::Spot::RelLine(l) if l > 0 => out += &format!(":{l}"),
            srcplace::Spot::Return => out += "%return",
            _ => {}
        }
    }
    if let Some(file) = &p.file {
        let mut tail = file.as_str();
        if file.len() > 30 {
            let cut = file.len() - 30;
            tail = match file.get(cut..).and_then(|t| t.find('/')) {
                Some(i) => &file[cut + i + 1..],
                None => file.get(cut..).unwrap_or(file),
            };
        }
        out += &format!("@{tail}");
        if let (None, srcplace::Spot::AbsLine(l)) = (&p.func, &p.spot) {
            out += &format!(":{l}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_texts() {
        let t = |s: &str| point_text(&srcplace::parse(s).unwrap().place);
        assert_eq!(t("vfs_read:12"), "vfs_read:12");
        assert_eq!(t("vfs_read+4"), "vfs_read+4");
        assert_eq!(t("vfs_read%return"), "vfs_read%return");
        assert_eq!(t("fs/read_write.c:566"), "@fs/read_write.c:566");
        assert_eq!(
            t("vfs_read@fs/read_write.c:3"),
            "vfs_read:3@fs/read_write.c"
        );
        assert_eq!(t("fs/read_write.c;ret=*"), "@fs/read_write.c");
        assert_eq!(
            t("drivers/gpu/drm/amd/display/dc/core/dc_resource.c:9"),
            "@display/dc/core/dc_resource.c:9"
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(
            parse_range("vfs_read").unwrap(),
            ("vfs_read".into(), None, 0, u64::MAX)
        );
        assert_eq!(
            parse_range("vfs_read:3+2").unwrap().2..=parse_range("vfs_read:3+2").unwrap().3,
            3..=4
        );
        assert_eq!(
            parse_range("f@a.c:3-9").unwrap(),
            ("f".into(), Some("a.c".into()), 3, 9)
        );
        assert!(parse_range("f:9-3").is_err());
        assert!(parse_range("f:x").is_err());
        assert!(parse_range(":3").is_err());
    }
}
