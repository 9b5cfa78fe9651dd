// SPDX-License-Identifier: GPL-2.0
//! A unit's top-level function DIEs read raw, for the function index
//! (dwarf_index.rs): each top-level DIE's abbreviation tells whether
//! its attributes matter; those that do not are skipped by size, a DIE
//! with children by its DW_AT_sibling, and each attribute wanted is
//! decoded once. No `gimli::Unit` is made (its line table's header and
//! its root's attributes are not needed to find names). What this
//! reader does not handle itself (a name of another string form, a
//! malformed DIE) it leaves to the general reader, which answers for
//! the whole unit: the index is the same either way.

use gimli::{AttributeValue, DebugInfoOffset, DwAt, EntriesRaw, UnitHeader, UnitOffset};

use crate::dwarf::{Unit, R};
use crate::dwarf_index::{Found, FuncDie, Sink};

/// The general reader is needed for this unit.
pub struct Unhandled;

/// What the index keeps of a top-level DIE's attributes (the first of
/// each name, as gimli's `attr_value` takes).
#[derive(Default)]
struct Attrs<'a> {
    name: Option<AttributeValue<R<'a>>>,
    origin: Option<AttributeValue<R<'a>>>,
    specification: Option<AttributeValue<R<'a>>>,
    inline: Option<AttributeValue<R<'a>>>,
    sibling: Option<AttributeValue<R<'a>>>,
}

impl<'a> Attrs<'a> {
    /// The slot of a wanted attribute name; None for the others.
    fn slot(&mut self, name: gimli::DwAt) -> Option<&mut Option<AttributeValue<R<'a>>>> {
        match name {
            gimli::DW_AT_name => Some(&mut self.name),
            gimli::DW_AT_abstract_origin => Some(&mut self.origin),
            gimli::DW_AT_specification => Some(&mut self.specification),
            gimli::DW_AT_inline => Some(&mut self.inline),
            gimli::DW_AT_sibling => Some(&mut self.sibling),
            _ => None,
        }
    }

    /// Reads every attribute of `specs`, keeping the first of each
    /// wanted name.
    fn read(
        raw: &mut EntriesRaw<'_, '_, R<'a>>,
        specs: &[gimli::AttributeSpecification],
    ) -> Result<Attrs<'a>, gimli::Error> {
        let mut out = Attrs::default();
        for spec in specs {
            let a = raw.read_attribute(*spec)?;
            let Some(slot) = out.slot(a.name()) else {
                continue;
            };
            if slot.is_none() {
                *slot = Some(a.value());
            }
        }
        Ok(out)
    }
}

/// Whether abbreviation `specs` has attribute `at` (then a DIE of it
/// has it, whatever its value).
fn has(specs: &[gimli::AttributeSpecification], at: DwAt) -> bool {
    specs.iter().any(|s| s.name() == at)
}

/// How to step over one attribute (or a run of fixed-size ones).
#[derive(Clone, Copy)]
enum Step {
    /// This many bytes.
    Fixed(usize),
    /// A LEB128 number.
    Leb,
    /// A NUL-terminated string.
    Str,
    /// A block whose length is in the first 1, 2 or 4 bytes.
    Block(usize),
    /// A block whose length is a LEB128 number.
    BlockLeb,
    /// The first DW_AT_sibling, a unit reference of this many bytes
    /// (0: LEB128).
    Sibling(usize),
}

/// What a DIE of one abbreviation needs: its steps (`steps[from..to]`
/// of `Plans`), whether it has children, and whether at the top level
/// it may be an indexed function (a subprogram, not a declaration,
/// with code or DW_AT_inline).
#[derive(Clone, Copy)]
struct Plan {
    from: u32,
    to: u32,
    skip: Skip,
    children: bool,
    candidate: bool,
}

/// How a plan's steps are taken (kept small: a plan is read for each
/// DIE).
#[derive(Clone, Copy)]
enum Skip {
    /// The steps are these bytes (the plan of most DIEs).
    Fixed(u32),
    /// The steps are this many bytes, a sibling of this width (1 to 8
    /// bytes), this many bytes.
    FixedSibling(u32, u8, u32),
    /// Step by step.
    Steps,
}

/// The plans of a unit's abbreviations, made as codes are met.
struct Plans {
    steps: Vec<Step>,
    by_code: Vec<Option<Plan>>,
}

/// The codes whose plans are kept (GCC's are numbered from 1 up).
const KEPT_CODES: u64 = 1 << 14;

impl Plans {
    fn get(
        &mut self,
        abbrevs: &gimli::Abbreviations,
        header: &UnitHeader<R<'_>>,
        code: u64,
    ) -> Result<Plan, Unhandled> {
        let i = usize::try_from(code).map_err(|_| Unhandled)?;
        if code < KEPT_CODES {
            if let Some(Some(p)) = self.by_code.get(i) {
                return Ok(*p);
            }
        }
        let ab = abbrevs.get(code).ok_or(Unhandled)?;
        let specs = ab.attributes();
        let from = self.steps.len();
        let mut sibling_seen = false;
        for s in specs {
            let sib = s.name() == gimli::DW_AT_sibling && !sibling_seen;
            let step = step_of(s, header, sib)?;
            sibling_seen |= sib;
            let merge = self.steps.len() > from;
            match (step, self.steps.last_mut()) {
                (Step::Fixed(n), Some(Step::Fixed(m))) if merge => *m += n,
                _ => self.steps.push(step),
            }
        }
        let bytes = |s: Option<&Step>| match s {
            None => Some(0),
            Some(Step::Fixed(n)) => u32::try_from(*n).ok(),
            _ => None,
        };
        let mine = &self.steps[from..];
        let fixed = match mine {
            [] | [Step::Fixed(_)] => bytes(mine.first()),
            _ => None,
        };
        let fixed_sibling = match mine.iter().position(|s| matches!(s, Step::Sibling(1..))) {
            Some(i) if i <= 1 && mine.len() - i <= 2 => {
                let Step::Sibling(w) = mine[i] else {
                    return Err(Unhandled);
                };
                let w = u8::try_from(w).map_err(|_| Unhandled)?;
                let before = if i == 0 { Some(0) } else { bytes(mine.first()) };
                before.zip(bytes(mine.get(i + 1))).map(|(b, a)| (b, w, a))
            }
            _ => None,
        };
        let skip = match (fixed, fixed_sibling) {
            (Some(n), _) => Skip::Fixed(n),
            (None, Some((b, w, a))) => Skip::FixedSibling(b, w, a),
            (None, None) => Skip::Steps,
        };
        let plan = Plan {
            from: u32::try_from(from).map_err(|_| Unhandled)?,
            to: u32::try_from(self.steps.len()).map_err(|_| Unhandled)?,
            skip,
            children: ab.has_children(),
            candidate: ab.tag() == gimli::DW_TAG_subprogram
                && !has(specs, gimli::DW_AT_declaration)
                && (has(specs, gimli::DW_AT_low_pc)
                    || has(specs, gimli::DW_AT_ranges)
                    || has(specs, gimli::DW_AT_inline)),
        };
        if code < KEPT_CODES {
            if self.by_code.len() <= i {
                self.by_code.resize(i + 1, None);
            }
            self.by_code[i] = Some(plan);
        }
        Ok(plan)
    }

    /// Steps over a DIE's attributes in `buf` from `*at`; its first
    /// DW_AT_sibling, if a unit reference.
    fn skip(&self, plan: Plan, buf: &[u8], at: &mut usize) -> Result<Option<usize>, Unhandled> {
        match plan.skip {
            Skip::Fixed(n) => {
                *at = at
                    .checked_add(n as usize)
                    .filter(|&e| e <= buf.len())
                    .ok_or(Unhandled)?;
                return Ok(None);
            }
            Skip::FixedSibling(before, width, after) => {
                *at = at.checked_add(before as usize).ok_or(Unhandled)?;
                let sibling = fixed(buf, at, usize::from(width))?;
                *at = at
                    .checked_add(after as usize)
                    .filter(|&e| e <= buf.len())
                    .ok_or(Unhandled)?;
                return Ok(Some(sibling));
            }
            Skip::Steps => {}
        }
        let mut sibling = None;
        let steps = self.steps.get(plan.from as usize..plan.to as usize);
        for &step in steps.ok_or(Unhandled)? {
            match step {
                Step::Sibling(0) => sibling = usize::try_from(leb(buf, at)?).ok(),
                Step::Sibling(n) => sibling = Some(fixed(buf, at, n)?),
                _ => take(step, buf, at)?,
            }
        }
        if *at > buf.len() {
            return Err(Unhandled);
        }
        Ok(sibling)
    }
}

/// A LEB128 number at `*at`, stepped over.
fn leb(buf: &[u8], at: &mut usize) -> Result<u64, Unhandled> {
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *buf.get(*at).ok_or(Unhandled)?;
        *at += 1;
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        } else if b & 0x7f != 0 {
            return Err(Unhandled);
        }
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
}

/// How to step over an attribute of `spec` (`sib`: the DIE's first
/// DW_AT_sibling).
fn step_of(
    spec: &gimli::AttributeSpecification,
    header: &UnitHeader<R<'_>>,
    sib: bool,
) -> Result<Step, Unhandled> {
    Ok(match spec.form() {
        gimli::DW_FORM_ref1 if sib => Step::Sibling(1),
        gimli::DW_FORM_ref2 if sib => Step::Sibling(2),
        gimli::DW_FORM_ref4 if sib => Step::Sibling(4),
        gimli::DW_FORM_ref8 if sib => Step::Sibling(8),
        gimli::DW_FORM_ref_udata if sib => Step::Sibling(0),
        f => match spec.size(header) {
            Some(n) => Step::Fixed(n),
            None => match f {
                gimli::DW_FORM_udata
                | gimli::DW_FORM_sdata
                | gimli::DW_FORM_ref_udata
                | gimli::DW_FORM_strx
                | gimli::DW_FORM_GNU_str_index
                | gimli::DW_FORM_addrx
                | gimli::DW_FORM_GNU_addr_index
                | gimli::DW_FORM_loclistx
                | gimli::DW_FORM_rnglistx => Step::Leb,
                gimli::DW_FORM_string => Step::Str,
                gimli::DW_FORM_block1 => Step::Block(1),
                gimli::DW_FORM_block2 => Step::Block(2),
                gimli::DW_FORM_block4 => Step::Block(4),
                gimli::DW_FORM_block | gimli::DW_FORM_exprloc => Step::BlockLeb,
                _ => return Err(Unhandled),
            },
        },
    })
}

/// Steps over one attribute by `step` (what Plans::skip does for each).
#[inline]
fn take(step: Step, buf: &[u8], at: &mut usize) -> Result<(), Unhandled> {
    match step {
        Step::Fixed(n) => *at = at.checked_add(n).ok_or(Unhandled)?,
        Step::Leb | Step::Sibling(0) => {
            leb(buf, at)?;
        }
        Step::Str => {
            let rest = buf.get(*at..).ok_or(Unhandled)?;
            let n = rest.iter().position(|&b| b == 0).ok_or(Unhandled)?;
            *at += n + 1;
        }
        Step::Block(n) => {
            let len = fixed(buf, at, n)?;
            *at = at.checked_add(len).ok_or(Unhandled)?;
        }
        Step::BlockLeb => {
            let len = usize::try_from(leb(buf, at)?).map_err(|_| Unhandled)?;
            *at = at.checked_add(len).ok_or(Unhandled)?;
        }
        Step::Sibling(n) => {
            fixed(buf, at, n)?;
        }
    }
    Ok(())
}

/// A candidate subprogram's attributes in `buf` from `*at` (stepped
/// over), decoded here where each wanted one has the form GCC gives
/// it, to the value gimli's `Attribute::value` gives: a string or
/// `.debug_str` offset name, 4-byte references, a 1-byte DW_AT_inline.
/// None (`*at` kept) where one has another form: gimli reads that DIE.
fn quick_attrs<'a>(
    specs: &[gimli::AttributeSpecification],
    header: &UnitHeader<R<'a>>,
    buf: &'a [u8],
    at: &mut usize,
) -> Result<Option<Attrs<'a>>, Unhandled> {
    let mut out = Attrs::default();
    let mut p = *at;
    let word4 = header.format() == gimli::Format::Dwarf32;
    for spec in specs {
        let Some(slot) = out.slot(spec.name()) else {
            take(step_of(spec, header, false)?, buf, &mut p)?;
            continue;
        };
        if slot.is_some() {
            take(step_of(spec, header, false)?, buf, &mut p)?;
            continue;
        }
        let v = match (spec.name(), spec.form()) {
            (gimli::DW_AT_name, gimli::DW_FORM_strp) if word4 => {
                AttributeValue::DebugStrRef(gimli::DebugStrOffset(fixed(buf, &mut p, 4)?))
            }
            (gimli::DW_AT_name, gimli::DW_FORM_string) => {
                let rest = buf.get(p..).ok_or(Unhandled)?;
                let n = rest.iter().position(|&b| b == 0).ok_or(Unhandled)?;
                p += n + 1;
                AttributeValue::String(R::new(&rest[..n], gimli::LittleEndian))
            }
            (
                gimli::DW_AT_abstract_origin | gimli::DW_AT_specification | gimli::DW_AT_sibling,
                gimli::DW_FORM_ref4,
            ) => AttributeValue::UnitRef(UnitOffset(fixed(buf, &mut p, 4)?)),
            (gimli::DW_AT_inline, gimli::DW_FORM_data1) => {
                let b = *buf.get(p).ok_or(Unhandled)?;
                p += 1;
                AttributeValue::Inline(gimli::DwInl(b))
            }
            _ => return Ok(None),
        };
        *slot = Some(v);
    }
    if p > buf.len() {
        return Err(Unhandled);
    }
    *at = p;
    Ok(Some(out))
}

/// An `n`-byte little-endian number at `*at`, stepped over.
fn fixed(buf: &[u8], at: &mut usize, n: usize) -> Result<usize, Unhandled> {
    let b = buf
        .get(*at..at.checked_add(n).ok_or(Unhandled)?)
        .ok_or(Unhandled)?;
    *at += n;
    let v = b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
    usize::try_from(v).map_err(|_| Unhandled)
}

/// The top-level subprograms of the unit `header` at `.debug_info`
/// offset `cu`, appended to `out` in the unit's order: as
/// dwarf_index.rs's general reader finds them, or `Unhandled`.
pub fn subprograms<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &Unit<'a>,
    cu: DebugInfoOffset,
    out: &mut impl Sink<'a>,
) -> Result<(), Unhandled> {
    let header = &unit.header;
    let abbrevs = &*unit.abbreviations;
    let base = header.header_size();
    let buf = header
        .range_from(UnitOffset(base)..)
        .map_err(|_| Unhandled)?
        .slice();
    let mut plans = Plans {
        steps: Vec::new(),
        by_code: Vec::new(),
    };
    let mut at = 0usize;
    let code = leb(buf, &mut at)?;
    let root = plans.get(abbrevs, header, code)?;
    plans.skip(root, buf, &mut at)?;
    if !root.children {
        return Ok(());
    }
    let mut depth = 1usize;
    // As gimli's entries tree walks the root's children: a DIE with
    // children goes on at its sibling when that is after it in the
    // unit, else at its first child; the walk ends at the root's null
    // or the unit's end.
    while at < buf.len() {
        let off = UnitOffset(base + at);
        let code = leb(buf, &mut at)?;
        if code == 0 {
            depth -= 1;
            if depth == 0 {
                break;
            }
            continue;
        }
        let plan = plans.get(abbrevs, header, code)?;
        let sibling = if depth == 1 && plan.candidate {
            let ab = abbrevs.get(code).ok_or(Unhandled)?;
            let attrs = match quick_attrs(ab.attributes(), header, buf, &mut at)? {
                Some(a) => a,
                None => {
                    let mut raw = header
                        .entries_raw(abbrevs, Some(off))
                        .map_err(|_| Unhandled)?;
                    raw.read_abbreviation().map_err(|_| Unhandled)?;
                    let a = Attrs::read(&mut raw, ab.attributes()).map_err(|_| Unhandled)?;
                    at = raw.next_offset().0.checked_sub(base).ok_or(Unhandled)?;
                    a
                }
            };
            if let Some((name, f)) = function(dwarf, unit, cu, off, ab.attributes(), &attrs)? {
                out.push(name, f);
            }
            match attrs.sibling {
                Some(AttributeValue::UnitRef(s)) => Some(s.0),
                _ => None,
            }
        } else {
            plans.skip(plan, buf, &mut at)?
        };
        if !plan.children {
            continue;
        }
        match sibling {
            Some(s) if s > off.0 && s >= base && s - base < buf.len() => at = s - base,
            _ => depth += 1,
        }
    }
    Ok(())
}

/// The index's entry for a top-level subprogram at `off` with `attrs`
/// (abbreviation `specs`), if it has one: not a declaration, with code
/// or an inline function's abstract definition, named.
fn function<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &Unit<'a>,
    cu: DebugInfoOffset,
    off: UnitOffset,
    specs: &[gimli::AttributeSpecification],
    attrs: &Attrs<'a>,
) -> Result<Option<Found<'a>>, Unhandled> {
    if has(specs, gimli::DW_AT_declaration) {
        return Ok(None);
    }
    let has_code = has(specs, gimli::DW_AT_low_pc) || has(specs, gimli::DW_AT_ranges);
    let inline = matches!(
        attrs.inline,
        Some(AttributeValue::Inline(i))
            if i == gimli::DW_INL_inlined || i == gimli::DW_INL_declared_inlined
    );
    if !has_code && !inline {
        return Ok(None);
    }
    // A name no place can spell (empty, or one that would break the
    // cache file's lines) is not indexed.
    let Some(name) = integrated_name(unit, attrs)?.and_then(|v| dwarf.attr_string(unit, v).ok())
    else {
        return Ok(None);
    };
    let name = String::from_utf8_lossy(name.slice());
    if name.is_empty() || name.contains('\n') {
        return Ok(None);
    }
    Ok(Some((
        name,
        FuncDie {
            cu: cu.0,
            die: off.0,
            inline: inline && !has_code,
        },
    )))
}

/// A DIE's name, or its abstract origin's or specification's (two steps
/// at most, as `Dwarf::attr_integrate`), None where that finds none.
fn integrated_name<'a>(
    unit: &Unit<'a>,
    first: &Attrs<'a>,
) -> Result<Option<AttributeValue<R<'a>>>, Unhandled> {
    let header = &unit.header;
    let mut next_attrs;
    let mut attrs = first;
    for step in 0..3 {
        if let Some(v) = attrs.name {
            return Ok(Some(v));
        }
        if step == 2 {
            break;
        }
        let Some(next) = attrs.origin.or(attrs.specification) else {
            return Ok(None);
        };
        let target = match next {
            AttributeValue::UnitRef(o) => o,
            // Within the unit only, as Dwarf::reference.
            AttributeValue::DebugInfoRef(o) => {
                let base = header.offset().as_debug_info_offset().ok_or(Unhandled)?.0;
                let Some(o) = o.0.checked_sub(base) else {
                    return Ok(None);
                };
                UnitOffset(o)
            }
            _ => return Ok(None),
        };
        // No DIE there (outside the unit, a null): no name, as
        // `unit.entry` fails for attr_integrate.
        let Ok(mut raw) = header.entries_raw(&unit.abbreviations, Some(target)) else {
            return Ok(None);
        };
        let Ok(Some(ab)) = raw.read_abbreviation() else {
            return Ok(None);
        };
        next_attrs = Attrs::read(&mut raw, ab.attributes()).map_err(|_| Unhandled)?;
        attrs = &next_attrs;
    }
    Ok(None)
}
