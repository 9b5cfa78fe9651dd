// SPDX-License-Identifier: GPL-2.0
//! `dynprobe list --line FUNC[:RLN[+N|-RLN2]]` and `list --vars PLACE`:
//! a function's source lines with the probe-able ones numbered from its
//! declaration line, as `perf probe -L` prints them, and the variables
//! visible at a place with their types, as `perf probe -V` does.

use std::collections::BTreeSet;

use gimli::UnitOffset;

use crate::dwarf::{bad, Dwarf};
use crate::dwarf_lines::{subtree, tail_eq, UnitView};
use crate::dwarf_vars;
use crate::srcfile;
use crate::srcplace;
use crate::srcprobe::{release_of, with_debuginfo, Ctx, Options};

/// What `list` shows of a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// `--line`.
    Lines,
    /// `--vars`.
    Vars,
}

/// Runs `list --line` or `list --vars`; the exit status.
pub fn run(what: What, place: &str, opts: &Options) -> i32 {
    match with_debuginfo(opts, |ctx| text(ctx, what, place)) {
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

/// What `list --line` or `list --vars` prints of `place` in an open
/// debug file.
pub fn text(ctx: &mut Ctx<'_>, what: What, place: &str) -> Result<String, String> {
    match what {
        What::Lines => lines(ctx, place),
        What::Vars => vars(ctx, place),
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
    let (comp, _) = ctx.dw.unit_dirs(&unit);
    let roots = srcfile::roots(
        ctx.opts.source.as_deref(),
        comp.as_deref(),
        release_of(&ctx.file.path).as_deref(),
    );
    let src = srcfile::find(&roots, &fname);
    let text = src.as_deref().and_then(srcfile::read_lines);
    let shown = src
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| fname.clone());
    let mut out = format!("<{func}@{shown}:{rstart}>\n");
    let rel = |l: u64| l.saturating_sub(decl);
    let Some(text) = text else {
        // No source: the numbers alone.
        for l in &set {
            out += &format!("{:7}\n", rel(*l));
        }
        return Ok(out);
    };
    let get = |l: u64| text.get((l as usize).wrapping_sub(1));
    let mut l = lno_s;
    for &n in &set {
        while l < n {
            out += &format!("         {}\n", get(l).map(String::as_str).unwrap_or(""));
            l += 1;
        }
        out += &format!(
            "{:7}  {}\n",
            rel(l),
            get(l).map(String::as_str).unwrap_or("")
        );
        l += 1;
    }
    let end = if rend == u64::MAX { l + 2 } else { lno_e };
    while l <= end {
        let Some(t) = get(l) else { break };
        out += &format!("         {t}\n");
        l += 1;
    }
    Ok(out)
}

fn vars(ctx: &mut Ctx<'_>, place: &str) -> Result<String, String> {
    let sp = srcplace::parse(place).map_err(|e| e.to_string())?;
    let points = ctx.points(&sp)?;
    let mut out = format!("Available variables at {place}\n");
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
        for v in found {
            out += &format!("\t\t{v}\n");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
