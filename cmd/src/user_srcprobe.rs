// SPDX-License-Identifier: GPL-2.0
//! `-x BIN` places read from the binary's DWARF, as `perf probe -x BIN`
//! finds them: `FUNC:RLN`, `FUNC;PTN`, `FUNC%return`, `FUNC+OFFS` and
//! arguments that are variables by name, turned into uprobe lines at
//! file offsets (`p:GROUP/EVENT BIN:0xOFFS ARGS`). The places and
//! fetches are srcprobe.rs's; what is the user binary's own is here: its
//! debug file (user_debuginfo.rs), perf's prologue skip on a function of
//! a unit built without optimization, file offsets, and a global as the
//! uprobe's `@+OFFS` (uprobes take no symbol).

use std::path::Path;

use gimli::{AttributeValue, Operation, UnitOffset};

use crate::argexpand;
use crate::dwarf::{bad, Dwarf, Unit};
use crate::dwarf_index;
use crate::dwarf_lines::subtree;
use crate::dwarf_vars;
use crate::line::{Planned, Target};
use crate::srcplace::{self, SourceProbe, Spot};
use crate::srcprobe::{Ctx, Options, Point};
use crate::user_debuginfo::UserDebug;
use crate::user_place::{binary_group, UserBinary};

/// Whether a `-x` line is one for the DWARF: a source place, a variable
/// by name, or any place when a debug info option was given; SDT
/// markers and fetch arguments as written stay with user_place.rs.
pub fn wants_dwarf(line: &str, opts: &Options) -> bool {
    let spec = line.split_ascii_whitespace().next().unwrap_or_default();
    let place = spec.split_once('=').map_or(spec, |(_, p)| p);
    if place.starts_with("sdt:") || place.starts_with('%') {
        return false;
    }
    match srcplace::parse(line) {
        Ok(sp) => sp.needs_debuginfo() || opts.any() || sp.args.iter().any(names_variables),
        Err(_) => false,
    }
}

/// Whether an argument names variables from the DWARF: a variable, or
/// `$params`/`$vars` (perf's perf_probe_with_var).
fn names_variables(a: &srcplace::Arg) -> bool {
    !a.raw || a.var == argexpand::PARAMS || a.var == argexpand::VARS
}

/// Opens BIN's debug info and runs `f` on the binary and the queries'
/// context.
fn with_binary<T>(
    bin: &Path,
    opts: &Options,
    f: impl FnOnce(&UserDebug, &mut Ctx<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let ud = UserDebug::locate(bin, opts.debuginfo.as_deref())?;
    let obj = ud.debug.object()?;
    let bobj = ud.object()?;
    let mut dw = Dwarf::load(&ud.debug, &obj)?;
    dw.eh_frame = ud.eh_frame(&bobj);
    let index = dwarf_index::load(
        &mut dw,
        ud.debug.build_id.as_deref(),
        ud.debug.map.bytes().len(),
    )?;
    let mut ctx = Ctx {
        file: &ud.debug,
        dw,
        index,
        opts: opts.clone(),
        module: None,
    };
    f(&ud, &mut ctx)
}

/// `list --line`/`--vars -x BIN`: runs `f` on BIN's DWARF.
pub fn with_debuginfo<T>(
    bin: &Path,
    opts: &Options,
    f: impl FnOnce(&mut Ctx<'_>) -> Result<T, String>,
) -> Result<T, String> {
    with_binary(bin, opts, |_, ctx| f(ctx))
}

/// Plans the lines of `-x BIN`: those for the DWARF from its debug info
/// (opened once), the others as user_place.rs does.
pub fn plan_lines(
    bin: &UserBinary,
    lines: &[String],
    opts: &Options,
) -> Result<Vec<Planned>, String> {
    let plain = |l: &String| bin.plan(l).map_err(|e| e.to_string());
    if !lines.iter().any(|l| wants_dwarf(l, opts)) {
        let mut out = Vec::new();
        for l in lines {
            out.extend(plain(l)?);
        }
        return Ok(out);
    }
    with_binary(&bin.path, opts, |ud, ctx| {
        let mut out = Vec::new();
        for l in lines {
            if wants_dwarf(l, opts) {
                out.extend(uprobe_lines(ud, ctx, l)?);
            } else {
                out.extend(plain(l)?);
            }
        }
        Ok(out)
    })
}

/// perf's die_is_optimized_target: a unit where some variable's location
/// is a location list was built with optimization.
fn optimized(unit: &Unit<'_>) -> Result<bool, String> {
    let mut c = unit.entries();
    while let Some((_, e)) = c.next_dfs().map_err(bad)? {
        if !matches!(
            e.tag(),
            gimli::DW_TAG_formal_parameter | gimli::DW_TAG_variable
        ) {
            continue;
        }
        if let Ok(Some(AttributeValue::LocationListsRef(_))) = e.attr_value(gimli::DW_AT_location) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// perf's die_skip_prologue: the address of the line row after the
/// function's entry row (the entry itself when that row ends the
/// prologue), kept inside the function.
fn after_prologue<'a>(dw: &Dwarf<'a>, unit: &Unit<'a>, sp: UnitOffset, entry: u64) -> Option<u64> {
    let e = unit.entry(sp).ok()?;
    let high = dw.ranges(unit, &e).ok()?.first()?.1;
    let program = unit.line_program.clone()?;
    let mut rows = Vec::new();
    let mut it = program.rows();
    while let Ok(Some((_, r))) = it.next_row() {
        rows.push((r.address(), r.prologue_end()));
        if rows.len() > 1 << 22 {
            return None;
        }
    }
    rows.sort_by_key(|r| r.0);
    let idx = rows.iter().position(|r| r.0 == entry)?;
    if rows.get(idx)?.1 {
        return Some(entry);
    }
    match rows.get(idx + 1) {
        Some(&(a, _)) if a < high => Some(a),
        _ => Some(entry),
    }
}

/// The address a global variable `var` (a DW_OP_addr location, else its
/// symbol) has in the binary.
fn global_address<'a>(ctx: &Ctx<'a>, unit: &Unit<'a>, var: UnitOffset) -> Option<u64> {
    let e = unit.entry(var).ok()?;
    if let Some(AttributeValue::Exprloc(x)) = e.attr_value(gimli::DW_AT_location).ok().flatten() {
        if let Ok(Some(Operation::Address { address })) = x.operations(unit.encoding()).next() {
            return Some(address);
        }
    }
    let name = ctx.dw.name(unit, var)?;
    use object::{Object, ObjectSymbol};
    let obj = ctx.file.object().ok()?;
    let sym = obj.symbol_by_name(&name)?;
    (sym.address() != 0).then(|| sym.address())
}

/// `@NAME+N` (or `-N`) in a fetch argument made `@+X`, X the global's
/// offset as the kernel's uprobe counts it (from the probe's address
/// less its file offset).
fn rewrite_global(arg: &str, name: &str, at: i64) -> Option<String> {
    let key = format!("@{name}");
    let i = arg.find(&key)?;
    let rest = &arg[i + key.len()..];
    let digits = rest
        .char_indices()
        .skip(1)
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(rest.len(), |(j, _)| j);
    let off: i64 = rest.get(..digits)?.parse().ok()?;
    Some(format!(
        "{}@+{}{}",
        &arg[..i],
        at.wrapping_add(off),
        &rest[digits..]
    ))
}

/// The fetch arguments at point `p`, globals made `@+X`.
fn arguments(
    ud: &UserDebug,
    ctx: &mut Ctx<'_>,
    sp: &SourceProbe,
    p: &Point,
    ret: bool,
) -> Result<Vec<String>, String> {
    let mut out = ctx.arguments(p, &sp.args, ret)?;
    let unit = ctx.dw.unit(p.cu)?;
    let nodes = subtree(&ctx.dw, &unit, p.scope)?;
    let globals = dwarf_vars::globals(&unit)?;
    let bias = ud
        .file_offset(p.addr)
        .map(|o| p.addr.wrapping_sub(o) as i64)
        .ok_or_else(|| format!("{:#x} is in no loaded segment", p.addr))?;
    for (a, s) in sp.args.iter().zip(out.iter_mut()) {
        if a.raw || !s.contains(&format!("@{}", a.var)) {
            continue;
        }
        let Some(var) = dwarf_vars::find(&ctx.dw, &unit, &nodes, &globals, &a.var, p.addr) else {
            continue;
        };
        let addr = global_address(ctx, &unit, var)
            .ok_or_else(|| format!("'{}': no address for this global", a.var))?;
        *s = rewrite_global(s, &a.var, (addr as i64).wrapping_sub(bias))
            .ok_or_else(|| format!("'{}': cannot write its fetch", a.var))?;
    }
    Ok(out)
}

/// The uprobe lines of one source-level `-x` line.
fn uprobe_lines(ud: &UserDebug, ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Planned>, String> {
    let sp = srcplace::parse(text).map_err(|e| e.to_string())?;
    let mut points = ctx.points(&sp)?;
    let ret = sp.place.spot == Spot::Return;
    let func = ctx.event_function(&sp, &points)?;
    // perf's skip_prologue: FUNC with variables, in a unit built
    // without optimization, is probed after the prologue, where the
    // variables' stack slots are written.
    let mut skipped = Vec::new();
    if sp.place.spot == Spot::Entry(0) && sp.args.iter().any(names_variables) {
        for p in points.iter_mut() {
            let unit = ctx.dw.unit(p.cu)?;
            if p.scope != p.sp || optimized(&unit)? {
                continue;
            }
            if let Some(a) = after_prologue(&ctx.dw, &unit, p.sp, p.addr) {
                if a != p.addr {
                    skipped.push((a, p.addr));
                    p.addr = a;
                }
            }
        }
    }
    let event = match (&sp.event, &sp.place.spot) {
        (Some(e), _) => e.clone(),
        (None, Spot::RelLine(l)) => format!("{func}_L{l}"),
        (None, Spot::Return) => format!("{func}__return"),
        (None, _) => func.clone(),
    };
    let group = sp
        .group
        .clone()
        .unwrap_or_else(|| binary_group(&ud.bin_path));
    let place = text.split_ascii_whitespace().next().unwrap_or_default();
    let mut out = Vec::new();
    let mut left_out = None;
    for p in &points {
        let offs = ud
            .file_offset(p.addr)
            .ok_or_else(|| format!("{text}: {:#x} is in no loaded segment", p.addr))?;
        let args = match arguments(ud, ctx, &sp, p, ret) {
            Ok(a) => a,
            // As srcprobe.rs: an inline copy where an argument cannot
            // be fetched is left out.
            Err(e) if p.instance && points.len() > 1 => {
                eprintln!("dynprobe: {text}: leaving out the copy at {offs:#x}: {e}");
                left_out.get_or_insert(e);
                continue;
            }
            Err(e) => return Err(format!("{text}: {e}")),
        };
        let mut line = format!(
            "{}:{group}/{event} {}:{offs:#x}",
            if ret { 'r' } else { 'p' },
            ud.bin_path.display()
        );
        for a in args {
            line.push(' ');
            line += &a;
        }
        let mut note = format!("{place} at {offs:#x}");
        if let Some(&(_, entry)) = skipped.iter().find(|s| s.0 == p.addr) {
            let e = ud.file_offset(entry).unwrap_or(entry);
            note += &format!(
                ", after the prologue (built without optimization; {func}+0 is at {e:#x})"
            );
        }
        out.push(Planned {
            target: Target::Uprobe,
            line,
            translated: true,
            note: Some(note),
        });
    }
    match left_out {
        Some(e) if out.is_empty() => Err(format!("{text}: {e}")),
        _ => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globals_as_file_offsets() {
        assert_eq!(
            rewrite_global("buf=@buf+0", "buf", 16448).as_deref(),
            Some("buf=@+16448")
        );
        assert_eq!(
            rewrite_global("x=+8(@g+40):s32", "g", 100).as_deref(),
            Some("x=+8(@+140):s32")
        );
        assert_eq!(
            rewrite_global("x=@g-8:s32", "g", 100).as_deref(),
            Some("x=@+92:s32")
        );
        assert_eq!(rewrite_global("x=%di", "g", 1), None);
    }

    #[test]
    fn which_lines_need_dwarf() {
        let o = Options::default();
        assert!(wants_dwarf("uw_tick:5 i", &o));
        assert!(wants_dwarf("uw_add a b", &o));
        assert!(wants_dwarf("call_one;uw_fill* i", &o));
        assert!(!wants_dwarf("uw_add a=%di", &o));
        assert!(!wants_dwarf("uw_add%return $retval", &o));
        assert!(!wants_dwarf("sdt:uprobe_workload:tick", &o));
        assert!(!wants_dwarf("%sdt_uprobe_workload:tick", &o));
        let d = Options {
            definition: true,
            ..Options::default()
        };
        assert!(wants_dwarf("uw_add", &d));
    }
}
