// SPDX-License-Identifier: GPL-2.0
//! perf probe's `$params` and `$vars` arguments, expanded at a point as
//! its expand_probe_args does: the parameters (and with `$vars`, the
//! local variables too, from then on) among the scope's children that
//! can be fetched there, by name, in the DIEs' order. The walk goes
//! into the lexical blocks that hold the address, not into inline
//! copies of other functions (perf's copy_variables_cb).

use gimli::UnitOffset;

use crate::dwarf::{bad, Dwarf, Unit};
use crate::dwarf_vars;
use crate::srcplace::Arg;

/// `$params`.
pub const PARAMS: &str = "$params";
/// `$vars`.
pub const VARS: &str = "$vars";
/// perf's MAX_PROBE_ARGS.
const MAX_ARGS: usize = 128;
/// Blocks nested deeper than this are malformed debug info.
const MAX_DEPTH: u32 = 256;

/// Where the names are looked for.
#[derive(Clone, Copy, Debug)]
pub struct At {
    /// The probe's address.
    pub addr: u64,
    /// The scope DIE whose children are walked.
    pub scope: UnitOffset,
    /// The function holding the address.
    pub sp: UnitOffset,
    /// The function DIE the place named, if any.
    pub origin: Option<UnitOffset>,
    /// That function's entry and end.
    pub sp_range: (u64, u64),
}

/// `args` with `$params` and `$vars` replaced by the names they stand
/// for at `p`.
pub fn expand<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    p: At,
    args: &[Arg],
) -> Result<Vec<Arg>, String> {
    if !args
        .iter()
        .any(|a| a.raw && (a.var == PARAMS || a.var == VARS))
    {
        return Ok(args.to_vec());
    }
    let mut out = Vec::new();
    let mut vars = false;
    for a in args {
        if !(a.raw && a.name.is_none() && a.cast.is_none() && (a.var == PARAMS || a.var == VARS)) {
            out.push(a.clone());
            continue;
        }
        // As perf: `$vars` once seen makes later `$params` take locals.
        vars |= a.var == VARS;
        let walk = Walk { dw, unit, p, vars };
        let mut names = Vec::new();
        walk.children(p.scope, 0, &mut names)?;
        out.extend(names.into_iter().map(|n| Arg {
            name: None,
            var: n,
            raw: false,
            fields: Vec::new(),
            cast: None,
        }));
        if out.len() > MAX_ARGS {
            return Err(format!("Too many( > {MAX_ARGS}) arguments"));
        }
    }
    Ok(out)
}

struct Walk<'w, 'a> {
    dw: &'w Dwarf<'a>,
    unit: &'w Unit<'a>,
    p: At,
    vars: bool,
}

impl Walk<'_, '_> {
    /// The names under DIE `parent` (perf's die_find_child).
    fn children(
        &self,
        parent: UnitOffset,
        depth: u32,
        out: &mut Vec<String>,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("malformed debug info: DIEs nested too deep".into());
        }
        let mut tree = self.unit.entries_tree(Some(parent)).map_err(bad)?;
        let root = tree.root().map_err(bad)?;
        let mut children = root.children();
        let mut into = Vec::new();
        while let Some(c) = children.next().map_err(bad)? {
            let e = c.entry();
            let tag = e.tag();
            if tag == gimli::DW_TAG_formal_parameter || (tag == gimli::DW_TAG_variable && self.vars)
            {
                let fetchable = dwarf_vars::location(
                    self.dw,
                    self.unit,
                    e.offset(),
                    self.p.addr,
                    self.p.sp,
                    self.p.sp_range,
                )
                .is_ok();
                if let (true, Some(n)) = (fetchable, self.dw.name(self.unit, e.offset())) {
                    out.push(n);
                }
            }
            if !self.dw.has_pc(self.unit, e, self.p.addr) {
                continue;
            }
            // A DIE standing for another (an inline copy, a concrete
            // block) is entered only when it stands for the function
            // the place named.
            let origin = e
                .attr_value(gimli::DW_AT_abstract_origin)
                .ok()
                .flatten()
                .map(|v| Dwarf::reference(self.unit, v));
            match origin {
                None => into.push((e.offset(), out.len())),
                Some(o) if o.is_some() && o == self.p.origin => into.push((e.offset(), out.len())),
                Some(_) => {}
            }
        }
        // Depth first, as perf: a block's names come where the block is.
        for (off, at) in into.into_iter().rev() {
            let mut inner = Vec::new();
            self.children(off, depth + 1, &mut inner)?;
            out.splice(at..at, inner);
        }
        Ok(())
    }
}
