// SPDX-License-Identifier: GPL-2.0
//! Source-level places turned into kprobe lines, as perf probe finds
//! them in the kernel's DWARF: a function's entry or `%return`, a line
//! relative to its declaration, the lines a pattern matches; each probe
//! address with the arguments' fetches computed there. Several inline
//! copies or matching lines make one event with one probe each.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use gimli::UnitOffset;

use crate::argexpand;
use crate::debugfile::{self, DebugFile};
use crate::dwarf::{bad, Dwarf, Unit};
use crate::dwarf_index::{self, FuncDie, Index};
use crate::dwarf_lines::{real_function, subtree, tail_eq, UnitView};
use crate::dwarf_scope;
use crate::dwarf_vars::{self, Fetch};
use crate::line::{Planned, Target};
use crate::srcfile;
use crate::srcplace::{self, SourceProbe, Spot};

/// Where the debug info and the sources are, and what the user asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `--debuginfo FILE`.
    pub debuginfo: Option<PathBuf>,
    /// `--source DIR`.
    pub source: Option<PathBuf>,
    /// `-D`: print the lines as perf probe -D does, write nothing.
    pub definition: bool,
    /// `list -x BIN`: the user binary whose DWARF is read.
    pub exec: Option<PathBuf>,
    /// `-m MODULE`: the places are in this kernel module (a name or a
    /// path to its .ko).
    pub module: Option<String>,
}

impl Options {
    /// Whether any was given (then perf's shorthand is read from DWARF).
    pub fn any(&self) -> bool {
        self.debuginfo.is_some()
            || self.source.is_some()
            || self.definition
            || self.module.is_some()
    }
}

/// The open debug file with what queries keep.
pub struct Ctx<'a> {
    /// The file.
    pub file: &'a DebugFile,
    /// Its DWARF.
    pub dw: Dwarf<'a>,
    /// Its function index.
    pub index: Index,
    /// The options.
    pub opts: Options,
    /// The kernel module the file is the debug file of (its name).
    pub module: Option<String>,
}

/// Opens the debug file and runs `f` on it.
pub fn with_debuginfo<T>(
    opts: &Options,
    f: impl FnOnce(&mut Ctx<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let (file, module) =
        crate::module_debug::open(opts.debuginfo.as_deref(), opts.module.as_deref())?;
    let obj = file.object()?;
    let mut dw = Dwarf::load(&file, &obj)?;
    let index = dwarf_index::load(&mut dw, file.build_id.as_deref(), file.map.bytes().len())?;
    let mut ctx = Ctx {
        file: &file,
        dw,
        index,
        opts: opts.clone(),
        module,
    };
    f(&mut ctx)
}

/// Runs `f` on the debug file of the function PLACE names: vmlinux's
/// (or `-m`'s module's), else, when vmlinux has no such function, the
/// debug file of the loaded module whose symbols hold it.
pub fn with_debuginfo_for<T>(
    opts: &Options,
    place: &str,
    f: impl Fn(&mut Ctx<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let elsewhere = with_debuginfo(opts, |ctx| match ctx.module_of(place) {
        Some(m) => Ok(Err(m)),
        None => f(ctx).map(Ok),
    })?;
    match elsewhere {
        Ok(v) => Ok(v),
        Err(m) => {
            let opts = Options {
                module: Some(m),
                ..module_options(opts)
            };
            with_debuginfo(&opts, f)
        }
    }
}

/// The options for a module's places when the lines name no module:
/// `--debuginfo` names vmlinux's file then, unless it is a directory of
/// debug files.
fn module_options(opts: &Options) -> Options {
    Options {
        debuginfo: opts.debuginfo.clone().filter(|d| d.is_dir()),
        ..opts.clone()
    }
}

/// A probe point found.
#[derive(Clone, Debug)]
pub struct Point {
    /// The unit.
    pub cu: usize,
    /// The address.
    pub addr: u64,
    /// The DIE whose variables are visible (a function or inline copy).
    pub scope: UnitOffset,
    /// The function holding the address.
    pub sp: UnitOffset,
    /// The line, for names.
    pub line: Option<u64>,
    /// Found as one of an inline function's instances: a copy where an
    /// argument cannot be fetched is left out, not an error.
    pub instance: bool,
    /// The function DIE the place named (none for a source file place):
    /// `$vars` looks into inline copies of it only.
    pub origin: Option<UnitOffset>,
}

/// Which of the scopes holding a line's address a point takes (perf's
/// find_best_scope).
#[derive(Clone, Copy, Debug)]
pub enum Scope<'s> {
    /// The function or inline copy of this name declared in this file
    /// (a place named by function), whose DIE is the third.
    Function(&'s str, &'s str, UnitOffset),
    /// The one declared nearest before this line of this file (a place
    /// named by source file).
    Line(&'s str, u64),
}

/// The instances of abstract function `die` (see `Ctx::instances`).
pub fn instances<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    die: UnitOffset,
) -> Result<Vec<UnitOffset>, String> {
    let decl = (
        Dwarf::decl_line(unit, die),
        Dwarf::attr_integrate(unit, die, gimli::DW_AT_decl_file).and_then(|v| {
            v.udata_value().or(match v {
                gimli::AttributeValue::FileIndex(i) => Some(i),
                _ => None,
            })
        }),
    );
    let mut out = Vec::new();
    let mut c = unit.entries();
    while let Some((_, e)) = c.next_dfs().map_err(bad)? {
        if !matches!(
            e.tag(),
            gimli::DW_TAG_inlined_subroutine | gimli::DW_TAG_subprogram
        ) {
            continue;
        }
        let o = e.attr_value(gimli::DW_AT_abstract_origin).ok().flatten();
        if o.and_then(|v| Dwarf::reference(unit, v)) != Some(die) || dw.entry_pc(unit, e).is_none()
        {
            continue;
        }
        if e.tag() == gimli::DW_TAG_inlined_subroutine {
            let call_file = e
                .attr_value(gimli::DW_AT_call_file)
                .ok()
                .flatten()
                .and_then(|v| match v {
                    gimli::AttributeValue::FileIndex(i) => Some(i),
                    v => v.udata_value(),
                });
            if decl.0.is_some() && Dwarf::call_line(e) == decl.0 && call_file == decl.1 {
                continue;
            }
        }
        out.push(e.offset());
    }
    Ok(out)
}

impl<'a> Ctx<'a> {
    /// A function's DIEs, the first of each unit (as perf probe stops at
    /// the first in a unit), filtered by `@SRC`.
    pub fn function_dies(
        &mut self,
        name: &str,
        file: Option<&str>,
    ) -> Result<Vec<FuncDie>, String> {
        let all = self.index.find(name);
        let Some(all) = (!all.is_empty()).then_some(all) else {
            return Err(crate::module_debug::not_found(
                name,
                self.module.as_deref(),
                &self.file.path,
            ));
        };
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for f in all {
            if let Some(want) = file {
                let unit = self.dw.unit(f.cu)?;
                let decl = self
                    .dw
                    .decl_file(&unit, UnitOffset(f.die))
                    .unwrap_or_default();
                if !tail_eq(&decl, want) {
                    continue;
                }
            }
            if seen.insert(f.cu) {
                out.push(f);
            }
        }
        if out.is_empty() {
            return Err(format!("Failed to find {name} in {}", file.unwrap_or("?")));
        }
        Ok(out)
    }

    /// The loaded module whose symbols hold the function PLACE names,
    /// when this is vmlinux's debug file and has no such function.
    pub fn module_of(&self, place: &str) -> Option<String> {
        if self.module.is_some() {
            return None;
        }
        let func = crate::module_debug::place_function(place)?;
        if !self.index.find(func).is_empty() {
            return None;
        }
        let kallsyms = std::fs::read_to_string("/proc/kallsyms").ok()?;
        crate::module_debug::module_of_function(&kallsyms, func)
    }

    /// The instances of abstract function `die` in its unit, as perf's
    /// die_walk_instances: DIEs with code whose abstract origin it is
    /// (inline copies and the out-of-line copy), in the unit's order,
    /// less the copies whose call line is the function's own
    /// declaration.
    pub fn instances(&self, unit: &Unit<'a>, die: UnitOffset) -> Result<Vec<UnitOffset>, String> {
        instances(&self.dw, unit, die)
    }

    /// The points of a place.
    pub fn points(&mut self, sp: &SourceProbe) -> Result<Vec<Point>, String> {
        let Some(func) = sp.place.func.clone() else {
            return self.file_points(sp);
        };
        let dies = self.function_dies(&func, sp.place.file.as_deref())?;
        let mut out = Vec::new();
        for f in dies {
            let unit = self.dw.unit(f.cu)?;
            let die = UnitOffset(f.die);
            let entry = match &sp.place.spot {
                Spot::Entry(o) => Some((*o, false)),
                Spot::Return => Some((0, true)),
                _ => None,
            };
            match &sp.place.spot {
                _ if entry.is_some() => {
                    let (off, ret) = entry.unwrap_or_default();
                    let roots = if f.inline {
                        self.instances(&unit, die)?
                    } else {
                        vec![die]
                    };
                    let funcs = crate::dwarf_lines::unit_functions(&self.dw, &unit)?;
                    for inst in roots {
                        let e = unit.entry(inst).map_err(bad)?;
                        let Some(entry) = self.dw.entry_pc(&unit, &e).filter(|&a| a != 0) else {
                            continue;
                        };
                        let addr = entry + off;
                        let real = if e.tag() == gimli::DW_TAG_subprogram {
                            inst
                        } else {
                            if ret {
                                return Err(format!(
                                    "Failed to find \"{func}%return\", because {func} is an inlined function and has no return point."
                                ));
                            }
                            let Some(real) = real_function(&funcs, addr) else {
                                continue;
                            };
                            real
                        };
                        // As perf's convert_to_trace_point: inside the
                        // function holding the copy (an inline copy's own
                        // range may be empty).
                        let re = unit.entry(real).map_err(bad)?;
                        if !self.dw.has_pc(&unit, &re, addr) {
                            let name = self.dw.name(&unit, real).unwrap_or_else(|| func.clone());
                            return Err(format!("Specified offset is out of {name}"));
                        }
                        out.push(Point {
                            cu: f.cu,
                            addr,
                            scope: inst,
                            sp: real,
                            line: None,
                            instance: f.inline,
                            origin: Some(die),
                        });
                    }
                }
                Spot::RelLine(rel) => {
                    let Some(decl) = Dwarf::decl_line(&unit, die) else {
                        continue;
                    };
                    let fname = self.dw.decl_file(&unit, die).unwrap_or_default();
                    let lno = decl + rel;
                    let view = UnitView::new(&self.dw, &unit)?;
                    for l in view.unit_lines(&self.dw)? {
                        if l.line != lno || !tail_eq(&l.file, &fname) {
                            continue;
                        }
                        if let Some((f2, l2)) = view.line_info(&self.dw, l.addr) {
                            if f2 == l.file && l2 != lno {
                                return Err(format!(
                                    "This line is sharing the address with other lines: try {func}:{} instead",
                                    l2.saturating_sub(decl)
                                ));
                            }
                        }
                        let at = Scope::Function(&func, &fname, die);
                        out.extend(self.point_at(&unit, &view, f.cu, l.addr, *rel, at, false)?);
                    }
                }
                Spot::Pattern(pat) => {
                    let fname = self.dw.decl_file(&unit, die).unwrap_or_default();
                    let wanted = self.pattern_lines(&unit, &fname, pat)?;
                    let view = UnitView::new(&self.dw, &unit)?;
                    let roots: Vec<UnitOffset> = if f.inline {
                        self.instances(&unit, die)?
                    } else {
                        vec![die]
                    };
                    for root in roots {
                        for l in view.function_lines(&self.dw, root, false)? {
                            if !wanted.contains(&l.line) || !tail_eq(&l.file, &fname) {
                                continue;
                            }
                            let at = Scope::Function(&func, &fname, die);
                            let p =
                                self.point_at(&unit, &view, f.cu, l.addr, l.line, at, f.inline)?;
                            out.extend(p);
                        }
                    }
                }
                _ => return Err("SRC:LINE places are not supported yet".into()),
            }
        }
        // The same address found twice is one probe.
        let mut seen = HashSet::new();
        out.retain(|p| seen.insert(p.addr));
        if out.is_empty() {
            return Err(format!("Probe point '{func}' not found."));
        }
        Ok(out)
    }

    /// The lines of `fname` that the lazy pattern matches.
    pub(crate) fn pattern_lines(
        &self,
        unit: &Unit<'a>,
        fname: &str,
        pat: &str,
    ) -> Result<BTreeSet<u64>, String> {
        let (comp, _) = self.dw.unit_dirs(unit);
        let roots = srcfile::roots(
            self.opts.source.as_deref(),
            comp.as_deref(),
            release_of(&self.file.path).as_deref(),
        );
        let path = srcfile::find(&roots, fname).ok_or_else(|| {
            format!("Failed to find source file path of {fname}: name the source tree with --source DIR")
        })?;
        let lines =
            srcfile::read_lines(&path).ok_or_else(|| format!("cannot read {}", path.display()))?;
        Ok(lines
            .iter()
            .enumerate()
            .filter(|(_, l)| srcfile::lazy_match(l, pat))
            .map(|(i, _)| i as u64 + 1)
            .collect())
    }

    /// The point at line-table address `addr` (of line `line`): the
    /// function holding it and the scope `at` picks there, as perf's
    /// line walkers find them; none outside any function.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn point_at(
        &self,
        unit: &Unit<'a>,
        view: &UnitView<'_, 'a>,
        cu: usize,
        addr: u64,
        line: u64,
        at: Scope<'_>,
        instance: bool,
    ) -> Result<Option<Point>, String> {
        let Some(real) = real_function(&view.funcs, addr) else {
            return Ok(None);
        };
        let scope = self.best_scope(unit, real, addr, at)?;
        let origin = match at {
            Scope::Function(_, _, die) => Some(die),
            Scope::Line(..) => None,
        };
        Ok(Some(Point {
            cu,
            addr,
            scope,
            sp: real,
            line: Some(line),
            instance,
            origin,
        }))
    }

    /// perf's find_best_scope: along the function holding `addr` and
    /// the inline copies in it that hold `addr`, outermost first, the
    /// one `at` asks for; else the function itself.
    fn best_scope(
        &self,
        unit: &Unit<'a>,
        real: UnitOffset,
        addr: u64,
        at: Scope<'_>,
    ) -> Result<UnitOffset, String> {
        let nodes = subtree(&self.dw, unit, real)?;
        let chain = nodes.iter().enumerate().filter(|&(i, n)| {
            i == 0
                || (n.tag == gimli::DW_TAG_inlined_subroutine
                    && n.has_pc(addr)
                    && crate::dwarf_lines::reached(&nodes, i, addr))
        });
        let found = match at {
            Scope::Function(func, fname, _) => chain.map(|(_, n)| n.off).find(|&o| {
                self.dw.decl_file(unit, o).as_deref() == Some(fname)
                    && self.dw.name(unit, o).as_deref() == Some(func)
            }),
            Scope::Line(fname, line) => dwarf_scope::nearest_declared(
                &self.dw,
                unit,
                chain.map(|(_, n)| n.off),
                fname,
                line,
            ),
        };
        Ok(found.unwrap_or(real))
    }

    /// The fetch arguments at a point.
    pub fn arguments(
        &mut self,
        p: &Point,
        args: &[srcplace::Arg],
        ret: bool,
    ) -> Result<Vec<String>, String> {
        let unit = self.dw.unit(p.cu)?;
        let nodes = subtree(&self.dw, &unit, p.scope)?;
        let globals = dwarf_vars::globals(&unit)?;
        let spe = unit.entry(p.sp).map_err(bad)?;
        let ranges = self.dw.ranges(&unit, &spe)?;
        let sp_range = (
            self.dw.entry_pc(&unit, &spe).unwrap_or(0),
            ranges.first().map(|r| r.1).unwrap_or(0),
        );
        let at = argexpand::At {
            addr: p.addr,
            scope: p.scope,
            sp: p.sp,
            origin: p.origin,
            sp_range,
        };
        let args = &argexpand::expand(&self.dw, &unit, at, args)?;
        let mut out = Vec::new();
        for a in args {
            if a.raw {
                let mut s = String::new();
                if let Some(n) = &a.name {
                    s += &format!("{n}=");
                }
                s += &a.var;
                if let Some(c) = &a.cast {
                    s += &format!(":{c}");
                }
                out.push(s);
                continue;
            }
            if ret {
                return Err(format!(
                    "'{}': a return probe takes $retval and raw fetch arguments, not variables",
                    a.var
                ));
            }
            let var = dwarf_vars::find(&self.dw, &unit, &nodes, &globals, &a.var, p.addr)
                .ok_or_else(|| format!("Failed to find '{}' in this function.", a.var))?;
            let mut fetch: Fetch =
                dwarf_vars::location(&self.dw, &unit, var, p.addr, p.sp, sp_range)?;
            let die = dwarf_vars::fields(&self.dw, &unit, var, &a.var, &a.fields, &mut fetch)?;
            let ty =
                dwarf_vars::fetch_type(&self.dw, &unit, die, a.cast.as_deref(), false, &mut fetch)?;
            let mut s = format!("{}={}", a.perf_name(), fetch.text());
            if let Some(t) = ty {
                s += &format!(":{t}");
            }
            out.push(s);
        }
        Ok(out)
    }

    /// The function a probe line's event is named after: the place's,
    /// or for a place named by file its first point's function's, as
    /// perf names each probe of it.
    pub fn event_function(&mut self, sp: &SourceProbe, points: &[Point]) -> Result<String, String> {
        Ok(match (&sp.place.func, points.first()) {
            (Some(f), _) => f.clone(),
            (None, Some(p)) => {
                let unit = self.dw.unit(p.cu)?;
                self.dw.name(&unit, p.scope).unwrap_or_default()
            }
            (None, None) => String::new(),
        })
    }

    /// The kprobe lines of one source-level probe line.
    pub fn lines(&mut self, text: &str) -> Result<Vec<String>, String> {
        let sp = srcplace::parse(text).map_err(|e| e.to_string())?;
        let points = self.points(&sp)?;
        let ret = sp.place.spot == Spot::Return;
        let func = self.event_function(&sp, &points)?;
        let event = match (&sp.event, &sp.place.spot) {
            (Some(e), _) => e.clone(),
            (None, Spot::RelLine(l)) => format!("{func}_L{l}"),
            (None, Spot::Return) => format!("{func}__return"),
            (None, _) => func.clone(),
        };
        let group = sp.group.clone().unwrap_or_else(|| "probe".into());
        let mut out = Vec::new();
        let mut skipped = None;
        for p in &points {
            let sym = self
                .file
                .symbol_at(p.addr)
                .ok_or_else(|| format!("no symbol holds {:#x}", p.addr))?;
            let args = match self.arguments(p, &sp.args, ret) {
                Ok(a) => a,
                // perf probe stops at such a copy and keeps those before
                // it; dynprobe leaves out each such copy.
                Err(e) if p.instance && points.len() > 1 => {
                    eprintln!(
                        "dynprobe: {text}: leaving out the copy in {}+{}: {e}",
                        sym.name,
                        p.addr - sym.addr
                    );
                    skipped.get_or_insert(e);
                    continue;
                }
                Err(e) => return Err(format!("{text}: {e}")),
            };
            let mut l = format!(
                "{}:{group}/{event} {}{}+{}",
                if ret { 'r' } else { 'p' },
                self.module
                    .as_ref()
                    .map(|m| format!("{m}:"))
                    .unwrap_or_default(),
                sym.name,
                p.addr - sym.addr
            );
            for a in args {
                l.push(' ');
                l += &a;
            }
            out.push(l);
        }
        match skipped {
            Some(e) if out.is_empty() => Err(format!("{text}: {e}")),
            _ => Ok(out),
        }
    }
}

/// The kernel release a debug file's path names (Debian's layout).
pub fn release_of(path: &Path) -> Option<String> {
    let s = path.to_string_lossy();
    if let Some(i) = s.find("/lib/modules/") {
        let rest = &s[i + "/lib/modules/".len()..];
        return rest.split('/').next().map(str::to_string);
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    name.strip_prefix("vmlinux-")
        .map(str::to_string)
        .or_else(debugfile::running_release)
}

/// Whether a line is perf probe's shorthand read from DWARF: a source
/// place, or any shorthand when an option asks for the debug info.
pub fn wants_dwarf(line: &str, opts: &Options) -> bool {
    match crate::line::plan(line) {
        Ok(p) if !p.translated => return false,
        _ => {}
    }
    match srcplace::parse(line) {
        Ok(sp) => sp.needs_debuginfo() || opts.any(),
        Err(_) => false,
    }
}

/// Plans each line: source places become kprobe lines from DWARF (the
/// debug file opened once), the others as `line::plan` does.
pub fn plan_lines(lines: &[String], opts: &Options) -> Result<Vec<Planned>, String> {
    let dwarf_needed = lines.iter().any(|l| wants_dwarf(l, opts));
    let go = |ctx: Option<&mut Ctx<'_>>| -> Result<Vec<Planned>, String> {
        let mut out = Vec::new();
        let mut ctx = ctx;
        for l in lines {
            if let (true, Some(c)) = (wants_dwarf(l, opts), ctx.as_deref_mut()) {
                let found = match c.module_of(l) {
                    Some(m) => with_debuginfo(
                        &Options {
                            module: Some(m),
                            ..module_options(opts)
                        },
                        |c| c.lines(l),
                    )?,
                    None => c.lines(l)?,
                };
                for k in found {
                    out.push(Planned {
                        target: Target::Kprobe,
                        line: k,
                        translated: true,
                        note: None,
                    });
                }
                continue;
            }
            out.push(crate::line::plan(l).map_err(|e| e.to_string())?);
        }
        Ok(out)
    };
    if dwarf_needed {
        with_debuginfo(opts, |c| go(Some(c)))
    } else {
        go(None)
    }
}
