// SPDX-License-Identifier: GPL-2.0
//! Variables by name at an address, as perf probe's probe-finder.c
//! finds and converts them: the scope's parameters and locals, else the
//! unit's globals; the DWARF location at the address as a fetch
//! argument (a register, an offset from one or from the frame base, a
//! global's symbol, a constant); `->`, `.` and `[N]` as dereferences and
//! offsets; the type as `s32`, `x64`, `string`. A location dynprobe
//! cannot fetch is refused with perf probe's reason.

use gimli::{AttributeValue, Operation, UnitOffset};

use crate::dwarf::{bad, Dwarf, Unit};
use crate::dwarf_bitfield;
use crate::dwarf_lines::{reached, Node};
use crate::srcplace::Field;

/// A fetch argument being built: a base (`%di`, `@jiffies`, `\5`) and
/// the dereferences around it, innermost first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fetch {
    /// The base.
    pub base: String,
    /// The offsets of the dereferences, innermost first.
    pub refs: Vec<i64>,
    /// A bit-field member's place in the word the last dereference
    /// reads (its type becomes `bWIDTH@OFFSET/CONTAINER`).
    pub bitfield: Option<dwarf_bitfield::BitField>,
}

impl Fetch {
    /// As `kprobe_events` writes it: `+64(+32(%r13))`.
    pub fn text(&self) -> String {
        let mut refs = self.refs.iter();
        // `@SYM+OFFS` is already the memory at SYM+OFFS.
        let mut s = match (self.base.starts_with('@'), self.refs.first()) {
            (true, Some(first)) => {
                refs.next();
                format!("{}{first:+}", self.base)
            }
            _ => self.base.clone(),
        };
        for r in refs {
            s = format!("{r:+}({s})");
        }
        s
    }
}

/// x86_64's DWARF register numbers as the kprobe syntax names them.
pub fn register(n: u16) -> Option<&'static str> {
    const REGS: [&str; 17] = [
        "%ax", "%dx", "%cx", "%bx", "%si", "%di", "%bp", "%sp", "%r8", "%r9", "%r10", "%r11",
        "%r12", "%r13", "%r14", "%r15", "%ip",
    ];
    REGS.get(usize::from(n)).copied()
}

/// Why perf probe (and dynprobe) cannot fetch a variable.
pub fn optimized_out(name: &str) -> String {
    format!(
        "Failed to find the location of the '{name}' variable at this address. Perhaps it has been optimized out."
    )
}

/// The variable `name` visible at `addr` from the scope `nodes[0]`: a
/// parameter or local (perf's die_find_variable_at), else a global of
/// the unit.
pub fn find<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    nodes: &[Node],
    globals: &[UnitOffset],
    name: &str,
    addr: u64,
) -> Option<UnitOffset> {
    for (i, n) in nodes.iter().enumerate().skip(1) {
        if !matches!(
            n.tag,
            gimli::DW_TAG_formal_parameter | gimli::DW_TAG_variable
        ) {
            continue;
        }
        if !reached(nodes, i, addr) || dw.name(unit, n.off).as_deref() != Some(name) {
            continue;
        }
        if has_value(unit, n.off) {
            return Some(n.off);
        }
    }
    globals
        .iter()
        .copied()
        .find(|&g| dw.name(unit, g).as_deref() == Some(name) && has_value(unit, g))
}

fn has_value(unit: &Unit<'_>, off: UnitOffset) -> bool {
    let Ok(e) = unit.entry(off) else { return false };
    [
        gimli::DW_AT_external,
        gimli::DW_AT_location,
        gimli::DW_AT_const_value,
    ]
    .iter()
    .any(|&a| e.attr_value(a).ok().flatten().is_some())
}

/// The unit's top-level variables.
pub fn globals(unit: &Unit<'_>) -> Result<Vec<UnitOffset>, String> {
    let mut out = Vec::new();
    let mut tree = unit.entries_tree(None).map_err(bad)?;
    let root = tree.root().map_err(bad)?;
    let mut children = root.children();
    while let Some(c) = children.next().map_err(bad)? {
        if c.entry().tag() == gimli::DW_TAG_variable {
            out.push(c.entry().offset());
        }
    }
    Ok(out)
}

/// The frame base of function `sp` at `addr`: a register and offset.
pub fn frame_base<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    sp: UnitOffset,
    addr: u64,
) -> Option<(u16, i64)> {
    let e = unit.entry(sp).ok()?;
    let AttributeValue::Exprloc(expr) = e.attr_value(gimli::DW_AT_frame_base).ok()?? else {
        return None;
    };
    let mut ops = expr.operations(unit.encoding());
    match ops.next().ok()?? {
        Operation::CallFrameCFA => {
            use gimli::UnwindSection;
            let bases = gimli::BaseAddresses::default();
            let mut ctx = Box::new(gimli::UnwindContext::new());
            let row = match dw.frame.unwind_info_for_address(
                &bases,
                &mut ctx,
                addr,
                gimli::DebugFrame::cie_from_offset,
            ) {
                Ok(row) => row.clone(),
                // A user binary's CFI is often only in `.eh_frame`.
                Err(_) => {
                    let (eh, eh_bases) = dw.eh_frame.as_ref()?;
                    eh.unwind_info_for_address(
                        eh_bases,
                        &mut ctx,
                        addr,
                        gimli::EhFrame::cie_from_offset,
                    )
                    .ok()?
                    .clone()
                }
            };
            match row.cfa() {
                gimli::CfaRule::RegisterAndOffset { register, offset } => {
                    Some((register.0, *offset))
                }
                _ => None,
            }
        }
        Operation::RegisterOffset {
            register, offset, ..
        } => Some((register.0, offset)),
        _ => None,
    }
}

/// The location of variable `var` at `addr` as a fetch (perf's
/// convert_variable_location): `sp` is the function holding `addr`,
/// `sp_entry` its entry, `sp_end` its end.
pub fn location<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    var: UnitOffset,
    addr: u64,
    sp: UnitOffset,
    sp_range: (u64, u64),
) -> Result<Fetch, String> {
    let e = unit.entry(var).map_err(bad)?;
    let name = dw.name(unit, var).unwrap_or_default();
    let static_var = || Fetch {
        base: format!("@{name}"),
        refs: vec![0],
        bitfield: None,
    };
    if e.attr_value(gimli::DW_AT_external).ok().flatten().is_some() {
        return Ok(static_var());
    }
    if let Some(v) = e.attr_value(gimli::DW_AT_const_value).ok().flatten() {
        let n = match v {
            AttributeValue::Sdata(s) => s,
            other => other
                .udata_value()
                .map(|u| u as i64)
                .ok_or_else(|| format!("'{name}' is a constant of a form dynprobe cannot read"))?,
        };
        return Ok(Fetch {
            base: format!("\\{n}"),
            refs: Vec::new(),
            bitfield: None,
        });
    }
    let Some(loc) = e.attr_value(gimli::DW_AT_location).ok().flatten() else {
        return Err(optimized_out(&name));
    };
    let is_param = e.tag() == gimli::DW_TAG_formal_parameter;
    let expr = match expression_at(dw, unit, loc, addr)? {
        Some(x) => x,
        // At the entry, perf looks for a parameter's first location
        // after the fentry call.
        None if is_param && addr == sp_range.0 => {
            let first = match addr.checked_add(1) {
                Some(from) => first_covered(dw, unit, loc, from, sp_range.1)?,
                None => None,
            };
            match first {
                Some(a) => expression_at(dw, unit, loc, a)?,
                None => None,
            }
            .ok_or_else(|| optimized_out(&name))?
        }
        None => return Err(optimized_out(&name)),
    };
    let unsupported = || "Sorry, we don't support this variable location yet.".to_string();
    let mut ops = expr.operations(unit.encoding());
    let op = ops
        .next()
        .map_err(bad)?
        .ok_or_else(|| optimized_out(&name))?;
    let reg = |r: gimli::Register| register(r.0).map(str::to_string).ok_or_else(unsupported);
    Ok(match op {
        Operation::Address { .. } => static_var(),
        Operation::FrameOffset { offset } => {
            let (r, o) = frame_base(dw, unit, sp, addr).ok_or_else(unsupported)?;
            Fetch {
                base: register(r).ok_or_else(unsupported)?.to_string(),
                refs: vec![o + offset],
                bitfield: None,
            }
        }
        Operation::RegisterOffset {
            register, offset, ..
        } => Fetch {
            base: reg(register)?,
            refs: vec![offset],
            bitfield: None,
        },
        Operation::Register { register } => Fetch {
            base: reg(register)?,
            refs: Vec::new(),
            bitfield: None,
        },
        _ => return Err(unsupported()),
    })
}

/// The expression that holds at `addr`, from an exprloc or a list.
fn expression_at<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    loc: AttributeValue<crate::dwarf::R<'a>>,
    addr: u64,
) -> Result<Option<gimli::Expression<crate::dwarf::R<'a>>>, String> {
    if let AttributeValue::Exprloc(x) = loc {
        return Ok(Some(x));
    }
    let Some(mut it) = dw.dwarf.attr_locations(unit, loc).map_err(bad)? else {
        return Ok(None);
    };
    let mut n = 0u32;
    while let Some(l) = it.next().map_err(bad)? {
        if l.range.begin <= addr && addr < l.range.end {
            return Ok(Some(l.data));
        }
        n += 1;
        if n > 1 << 16 {
            return Err("malformed debug info: location list too long".into());
        }
    }
    Ok(None)
}

/// The first address in `from..=to` a location list covers: the one
/// address-by-address walk would stop at, found in one pass over the
/// list (a function's range from malformed debug info may be 2^64 long).
fn first_covered<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    loc: AttributeValue<crate::dwarf::R<'a>>,
    from: u64,
    to: u64,
) -> Result<Option<u64>, String> {
    let Some(mut it) = dw.dwarf.attr_locations(unit, loc).map_err(bad)? else {
        return Ok(None);
    };
    let mut first: Option<u64> = None;
    let mut n = 0u32;
    while let Some(l) = it.next().map_err(bad)? {
        let a = l.range.begin.max(from);
        if a < l.range.end && a <= to {
            first = Some(first.map_or(a, |f| f.min(a)));
        }
        n += 1;
        if n > 1 << 16 {
            return Err("malformed debug info: location list too long".into());
        }
    }
    Ok(first)
}

/// The DIE a `DW_AT_type` names.
pub fn type_of(unit: &Unit<'_>, off: UnitOffset) -> Option<UnitOffset> {
    let v = Dwarf::attr_integrate(unit, off, gimli::DW_AT_type)?;
    Dwarf::reference(unit, v)
}

/// A type without typedefs and qualifiers (perf's die_get_real_type).
pub fn real_type(unit: &Unit<'_>, mut off: UnitOffset) -> Option<UnitOffset> {
    for _ in 0..64 {
        let e = unit.entry(off).ok()?;
        match e.tag() {
            gimli::DW_TAG_typedef
            | gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type
            | gimli::DW_TAG_shared_type
            | gimli::DW_TAG_atomic_type => off = type_of(unit, off)?,
            _ => return Some(off),
        }
    }
    None
}

fn tag(unit: &Unit<'_>, off: UnitOffset) -> Option<gimli::DwTag> {
    unit.entry(off).ok().map(|e| e.tag())
}

fn udata(unit: &Unit<'_>, off: UnitOffset, at: gimli::DwAt) -> Option<u64> {
    unit.entry(off).ok()?.attr_value(at).ok()??.udata_value()
}

/// The byte size of DIE `off`'s type.
fn type_size(unit: &Unit<'_>, off: UnitOffset) -> Option<u64> {
    udata(
        unit,
        real_type(unit, type_of(unit, off)?)?,
        gimli::DW_AT_byte_size,
    )
}

/// A type's name as perf probe's --vars prints it (its
/// die_get_typename): `struct file*`, qualifiers left out, typedefs by
/// name, `(unknown_type)` for what has no name.
pub fn type_name<'a>(dw: &Dwarf<'a>, unit: &Unit<'a>, off: Option<UnitOffset>) -> String {
    let mut depth = 0;
    off.and_then(|o| type_name_at(dw, unit, o, &mut depth))
        .unwrap_or_else(|| "(unknown_type)".into())
}

/// The type `off` less its qualifiers (perf's __die_get_real_type,
/// which keeps typedefs).
fn unqualified(unit: &Unit<'_>, mut off: UnitOffset) -> Option<UnitOffset> {
    for _ in 0..64 {
        match tag(unit, off)? {
            gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type
            | gimli::DW_TAG_shared_type => off = type_of(unit, off)?,
            _ => return Some(off),
        }
    }
    None
}

fn type_name_at<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    off: UnitOffset,
    depth: &mut u32,
) -> Option<String> {
    *depth += 1;
    if *depth > 32 {
        return None;
    }
    let off = unqualified(unit, off)?;
    let t = tag(unit, off)?;
    let suffix = match t {
        gimli::DW_TAG_pointer_type => "*",
        gimli::DW_TAG_array_type => "[]",
        gimli::DW_TAG_subroutine_type => return Some("(function_type)".into()),
        _ => {
            let name = dw.name(unit, off);
            let prefix = match t {
                gimli::DW_TAG_union_type => "union ",
                gimli::DW_TAG_structure_type => "struct ",
                gimli::DW_TAG_enumeration_type => "enum ",
                _ => "",
            };
            if prefix.is_empty() && name.is_none() {
                return None;
            }
            return Some(format!("{prefix}{}", name.unwrap_or_default()));
        }
    };
    match type_of(unit, off) {
        Some(inner) => Some(format!("{}{suffix}", type_name_at(dw, unit, inner, depth)?)),
        // A void pointer has no type.
        None if t == gimli::DW_TAG_pointer_type => Some("void*".into()),
        None => None,
    }
}

/// A member `name` of struct or union `ty` (looking into unnamed
/// members): its offset in bits (a bit-field's lowest bit) and its DIE.
fn member<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    ty: UnitOffset,
    name: &str,
    depth: u32,
) -> Option<(u64, UnitOffset)> {
    if depth > 16 {
        return None;
    }
    let is_union = tag(unit, ty)? == gimli::DW_TAG_union_type;
    let mut tree = unit.entries_tree(Some(ty)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    while let Some(c) = children.next().ok()? {
        let e = c.entry();
        if e.tag() != gimli::DW_TAG_member {
            continue;
        }
        let off = if is_union {
            0
        } else {
            dwarf_bitfield::member_bits(unit, e.offset(), type_size(unit, e.offset()))
        };
        match dw.name(unit, e.offset()) {
            Some(n) if n == name => return Some((off, e.offset())),
            Some(_) => {}
            None => {
                let t = real_type(unit, type_of(unit, e.offset())?)?;
                if let Some((o, m)) = member(dw, unit, t, name, depth + 1) {
                    return Some((off.saturating_add(o), m));
                }
            }
        }
    }
    None
}

/// Applies `->`, `.` and `[N]` to a fetch (perf's
/// convert_variable_fields); the DIE whose type the result has.
pub fn fields<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    var: UnitOffset,
    varname: &str,
    steps: &[Field],
    fetch: &mut Fetch,
) -> Result<UnitOffset, String> {
    let mut cur = var;
    let mut curname = varname.to_string();
    for step in steps {
        let ty = type_of(unit, cur)
            .and_then(|t| real_type(unit, t))
            .ok_or_else(|| format!("Failed to get the type of {curname}."))?;
        let t = tag(unit, ty);
        match step {
            Field::Index(i) => {
                if !matches!(
                    t,
                    Some(gimli::DW_TAG_array_type | gimli::DW_TAG_pointer_type)
                ) {
                    return Err(format!(
                        "Semantic error: {curname} is not a pointer nor array."
                    ));
                }
                let elem = type_of(unit, ty)
                    .and_then(|e| real_type(unit, e))
                    .ok_or_else(|| format!("Failed to get the type of {curname}."))?;
                if t == Some(gimli::DW_TAG_pointer_type) {
                    fetch.refs.push(0);
                }
                let size = udata(unit, elem, gimli::DW_AT_byte_size)
                    .ok_or_else(|| format!("Failed to get the size of {curname}'s elements."))?;
                let Some(last) = fetch.refs.last_mut() else {
                    return Err("Array indexing not supported for variables in registers.".into());
                };
                *last += (size as i64).wrapping_mul(*i);
                // The element's type is the array's or pointer's target:
                // kept as the DIE `ty` is, read again through type_of.
                cur = ty;
                curname = format!("{curname}[{i}]");
                continue;
            }
            Field::Member(m, arrow) => {
                let st = if t == Some(gimli::DW_TAG_pointer_type) {
                    if !arrow {
                        return Err(format!("Semantic error: {m} must be referred by '->'"));
                    }
                    let st = type_of(unit, ty)
                        .and_then(|x| real_type(unit, x))
                        .ok_or_else(|| format!("Failed to get the type of {curname}."))?;
                    if !matches!(
                        tag(unit, st),
                        Some(gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type)
                    ) {
                        return Err(format!("{curname} is not a data structure nor a union."));
                    }
                    fetch.refs.push(0);
                    st
                } else {
                    if !matches!(
                        t,
                        Some(gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type)
                    ) {
                        return Err(format!("{curname} is not a data structure nor a union."));
                    }
                    if *arrow {
                        return Err(format!("Semantic error: {m} must be referred by '.'"));
                    }
                    if fetch.refs.is_empty() {
                        return Err("Structure on a register is not supported yet.".into());
                    }
                    ty
                };
                let (off, mdie) = member(dw, unit, st, m, 0).ok_or_else(|| {
                    format!(
                        "{curname}(type:{}) has no member {m}.",
                        dw.name(unit, st).unwrap_or_default()
                    )
                })?;
                let bits = dwarf_bitfield::place(unit, mdie, off, type_size(unit, mdie));
                if let Some(last) = fetch.refs.last_mut() {
                    *last += bits.map_or(off / 8, |b| b.byte) as i64;
                }
                fetch.bitfield = bits;
                cur = mdie;
                curname = m.clone();
            }
        }
    }
    // An index step leaves `cur` at the array or pointer type: its
    // element type is what the value has.
    Ok(cur)
}

/// The fetch type of the value of DIE `die` (a variable, member, or for
/// an index step the array or pointer type itself), perf's
/// convert_variable_type; a `string` cast adds the dereference.
pub fn fetch_type<'a>(
    dw: &Dwarf<'a>,
    unit: &Unit<'a>,
    die: UnitOffset,
    cast: Option<&str>,
    auto_string: bool,
    fetch: &mut Fetch,
) -> Result<Option<String>, String> {
    if let Some(c) = cast {
        if !matches!(c, "string" | "x" | "s" | "u") {
            return Ok(Some(c.to_string()));
        }
    }
    let dtag = tag(unit, die);
    let ty = if matches!(
        dtag,
        Some(gimli::DW_TAG_array_type | gimli::DW_TAG_pointer_type)
    ) {
        type_of(unit, die).and_then(|t| real_type(unit, t))
    } else {
        if udata(unit, die, gimli::DW_AT_bit_size).is_some() {
            // perf's convert_variable_type: a bit-field's own type.
            let name = dw.name(unit, die).unwrap_or_default();
            let b = fetch
                .bitfield
                .ok_or_else(|| format!("Failed to get the offset of {name}."))?;
            return Ok(Some(b.type_text()));
        }
        type_of(unit, die).and_then(|t| real_type(unit, t))
    };
    let name = dw.name(unit, die).unwrap_or_default();
    let ty = ty.ok_or_else(|| format!("Failed to get a type information of {name}."))?;
    let t = tag(unit, ty);
    let is_char_ptr = || {
        t == Some(gimli::DW_TAG_pointer_type)
            && type_of(unit, ty)
                .and_then(|x| real_type(unit, x))
                .and_then(|x| dw.name(unit, x))
                .is_some_and(|n| n == "char" || n == "unsigned char")
    };
    if cast == Some("string") || (cast.is_none() && auto_string && is_char_ptr()) {
        if !matches!(
            t,
            Some(gimli::DW_TAG_pointer_type | gimli::DW_TAG_array_type)
        ) {
            return Err(format!(
                "Failed to cast into string: {name} is not a pointer nor array."
            ));
        }
        let target = type_of(unit, ty)
            .and_then(|x| real_type(unit, x))
            .and_then(|x| dw.name(unit, x));
        if !matches!(target.as_deref(), Some("char" | "unsigned char")) {
            return Err(format!(
                "Failed to cast into string: {name} is not (unsigned) char *."
            ));
        }
        if t == Some(gimli::DW_TAG_pointer_type) {
            fetch.refs.push(0);
        }
        return Ok(Some("string".into()));
    }
    let signed = matches!(
        unit.entry(ty)
            .ok()
            .and_then(|e| e.attr_value(gimli::DW_AT_encoding).ok().flatten()),
        Some(AttributeValue::Encoding(
            gimli::DW_ATE_signed | gimli::DW_ATE_signed_char | gimli::DW_ATE_float
        ))
    );
    let prefix = match cast {
        Some("u") => 'u',
        Some("s") => 's',
        Some("x") => 'x',
        _ if signed => 's',
        _ => 'x',
    };
    let Some(bytes) = udata(unit, ty, gimli::DW_AT_byte_size).filter(|&b| b > 0) else {
        return Ok(None);
    };
    Ok(Some(format!("{prefix}{}", (bytes * 8).min(64))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_text() {
        let f = Fetch {
            base: "%r13".into(),
            refs: vec![32, 64],
            bitfield: None,
        };
        assert_eq!(f.text(), "+64(+32(%r13))");
        let f = Fetch {
            base: "%sp".into(),
            refs: vec![-8],
            bitfield: None,
        };
        assert_eq!(f.text(), "-8(%sp)");
        let f = Fetch {
            base: "@generic_ro_fops".into(),
            refs: vec![40, 8],
            bitfield: None,
        };
        assert_eq!(f.text(), "+8(@generic_ro_fops+40)");
        assert_eq!(register(5), Some("%di"));
        assert_eq!(register(99), None);
    }
}
