// SPDX-License-Identifier: GPL-2.0
//! SDT argument specs (`-4@-20(%rbp)`, `8@%rdi`, `4@$5`, `8@foo(%rip)`):
//! read into a typed form, and written as the fetch argument a uprobe
//! line takes (`-20(%bp):s32`).

use core::fmt;

use super::error::SdtArgError;

/// An x86_64 general-purpose register as `struct pt_regs` names it, the
/// way fetch arguments write it (`%ax`, `%r8`, `%ip`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdtReg {
    /// `%rax` and its lower parts.
    Ax,
    /// `%rbx`.
    Bx,
    /// `%rcx`.
    Cx,
    /// `%rdx`.
    Dx,
    /// `%rsi`.
    Si,
    /// `%rdi`.
    Di,
    /// `%rbp`.
    Bp,
    /// `%rsp`.
    Sp,
    /// `%r8` .. `%r15`: the number.
    R(u8),
    /// `%rip`.
    Ip,
}

impl SdtReg {
    /// The name in a fetch argument, without `%`.
    pub fn fetch_name(self) -> &'static str {
        const R: [&str; 8] = ["r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"];
        match self {
            SdtReg::Ax => "ax",
            SdtReg::Bx => "bx",
            SdtReg::Cx => "cx",
            SdtReg::Dx => "dx",
            SdtReg::Si => "si",
            SdtReg::Di => "di",
            SdtReg::Bp => "bp",
            SdtReg::Sp => "sp",
            SdtReg::R(n) => R
                .get(usize::from(n).wrapping_sub(8))
                .copied()
                .unwrap_or("r?"),
            SdtReg::Ip => "ip",
        }
    }
}

/// Where an argument's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdtPlace<'a> {
    /// In a register (`%rdi`, `%esi`: the low bytes the size takes).
    Register(SdtReg),
    /// In memory at a register plus a displacement (`-20(%rbp)`).
    Memory {
        /// The base register.
        base: SdtReg,
        /// The displacement.
        offset: i64,
    },
    /// A constant (`$5`).
    Constant(i64),
    /// In memory at a symbol plus a displacement (`foo+8(%rip)`): a
    /// variable of the file, which a uprobe reads as `@+OFFSET`.
    Symbol {
        /// The symbol's name.
        name: &'a [u8],
        /// The displacement.
        offset: i64,
    },
}

/// One argument of an SDT marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdtArg<'a> {
    /// Its size in bytes: 1, 2, 4 or 8.
    pub size: u8,
    /// Whether it is signed (a `-` before the size).
    pub signed: bool,
    /// Where it is.
    pub place: SdtPlace<'a>,
}

/// Register names: 64-bit, 32-bit, 16-bit, low byte.
const REGISTERS: [(SdtReg, [&[u8]; 4]); 8] = [
    (SdtReg::Ax, [b"rax", b"eax", b"ax", b"al"]),
    (SdtReg::Bx, [b"rbx", b"ebx", b"bx", b"bl"]),
    (SdtReg::Cx, [b"rcx", b"ecx", b"cx", b"cl"]),
    (SdtReg::Dx, [b"rdx", b"edx", b"dx", b"dl"]),
    (SdtReg::Si, [b"rsi", b"esi", b"si", b"sil"]),
    (SdtReg::Di, [b"rdi", b"edi", b"di", b"dil"]),
    (SdtReg::Bp, [b"rbp", b"ebp", b"bp", b"bpl"]),
    (SdtReg::Sp, [b"rsp", b"esp", b"sp", b"spl"]),
];

/// The register `name` (after `%`) names.
fn register(name: &[u8]) -> Result<SdtReg, SdtArgError> {
    if name == b"rip" {
        return Ok(SdtReg::Ip);
    }
    if matches!(name, b"ah" | b"bh" | b"ch" | b"dh") {
        return Err(SdtArgError::HighByteRegister);
    }
    for (reg, names) in REGISTERS {
        if names.contains(&name) {
            return Ok(reg);
        }
    }
    // %r8 .. %r15, with an optional d, w, b (or l) suffix.
    let digits = match name {
        [b'r', rest @ ..] => rest,
        _ => return Err(SdtArgError::UnknownRegister),
    };
    let digits = match digits {
        [d @ .., b'd' | b'w' | b'b' | b'l'] => d,
        d => d,
    };
    let n = match digits {
        [d @ b'0'..=b'9'] => d - b'0',
        [b'1', d @ b'0'..=b'9'] => 10 + (d - b'0'),
        _ => return Err(SdtArgError::UnknownRegister),
    };
    if (8..=15).contains(&n) {
        Ok(SdtReg::R(n))
    } else {
        Err(SdtArgError::UnknownRegister)
    }
}

/// A signed number: decimal, or hexadecimal after `0x`, with an optional
/// sign.
fn number(text: &[u8]) -> Result<i64, SdtArgError> {
    let (negative, rest) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    let (digits, radix) = match rest {
        [b'0', b'x' | b'X', hex @ ..] => (hex, 16),
        _ => (rest, 10),
    };
    if digits.is_empty() {
        return Err(SdtArgError::BadOperand);
    }
    let mut value: u64 = 0;
    for &c in digits {
        let d = char::from(c)
            .to_digit(radix)
            .ok_or(SdtArgError::BadOperand)?;
        value = value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or(SdtArgError::BadNumber)?;
    }
    // Two's complement: `$0xffffffffffffffff` is -1, as the assembler
    // takes it.
    let value = value as i64;
    Ok(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

fn is_symbol_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'@')
}

/// Reads one argument spec.
pub fn parse_sdt_arg(spec: &[u8]) -> Result<SdtArg<'_>, SdtArgError> {
    let at = spec
        .iter()
        .position(|&c| c == b'@')
        .ok_or(SdtArgError::MissingSize)?;
    let (size, operand) = (&spec[..at], &spec[at + 1..]);
    let (signed, size) = match size {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, size),
    };
    let size = match size {
        b"1" => 1,
        b"2" => 2,
        b"4" => 4,
        b"8" => 8,
        _ => return Err(SdtArgError::BadSize),
    };
    let place = match operand {
        [b'%', name @ ..] => SdtPlace::Register(register(name)?),
        [b'$', imm @ ..] => SdtPlace::Constant(number(imm)?),
        _ => memory(operand)?,
    };
    Ok(SdtArg {
        size,
        signed,
        place,
    })
}

/// `DISP(%REG)`, `SYM[+-N](%rip)`; refuses `(%BASE,%INDEX,SCALE)`.
fn memory(operand: &[u8]) -> Result<SdtPlace<'_>, SdtArgError> {
    let open = operand
        .iter()
        .position(|&c| c == b'(')
        .ok_or(SdtArgError::BadOperand)?;
    let (disp, inner) = (&operand[..open], &operand[open + 1..]);
    let inner = match inner {
        [inner @ .., b')'] => inner,
        _ => return Err(SdtArgError::BadOperand),
    };
    if inner.contains(&b',') {
        return Err(SdtArgError::IndexedAddress);
    }
    let base = match inner {
        [b'%', name @ ..] => register(name)?,
        _ => return Err(SdtArgError::BadOperand),
    };
    let starts_symbol = disp
        .first()
        .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'.');
    if !starts_symbol {
        let offset = if disp.is_empty() { 0 } else { number(disp)? };
        if base == SdtReg::Ip {
            return Err(SdtArgError::NumericRipRelative);
        }
        return Ok(SdtPlace::Memory { base, offset });
    }
    // A symbol, with an optional +N or -N.
    if base != SdtReg::Ip {
        return Err(SdtArgError::BadOperand);
    }
    let end = disp
        .iter()
        .position(|&c| !is_symbol_char(c))
        .unwrap_or(disp.len());
    let (name, rest) = disp.split_at(end);
    let offset = match rest {
        [] => 0,
        [b'+' | b'-', ..] => number(rest)?,
        _ => return Err(SdtArgError::BadOperand),
    };
    Ok(SdtPlace::Symbol { name, offset })
}

/// Iterator over a marker's argument specs (separated by spaces), read
/// one at a time.
#[derive(Clone, Debug)]
pub struct SdtArgs<'a> {
    rest: &'a [u8],
}

impl<'a> SdtArgs<'a> {
    /// The specs of `args`, an [`super::SdtNote`]'s argument string.
    pub fn new(args: &'a [u8]) -> Self {
        SdtArgs { rest: args }
    }
}

impl<'a> Iterator for SdtArgs<'a> {
    /// The spec as written and what it reads as.
    type Item = (&'a [u8], Result<SdtArg<'a>, SdtArgError>);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.rest.iter().position(|c| !c.is_ascii_whitespace())?;
        let rest = &self.rest[start..];
        let len = rest
            .iter()
            .position(|c| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (spec, rest) = rest.split_at(len);
        self.rest = rest;
        Some((spec, parse_sdt_arg(spec)))
    }
}

impl SdtArg<'_> {
    /// The fetch type: `u8` .. `u64`, `s8` .. `s64`.
    pub fn fetch_type(&self) -> &'static str {
        match (self.signed, self.size) {
            (false, 1) => "u8",
            (false, 2) => "u16",
            (false, 4) => "u32",
            (true, 1) => "s8",
            (true, 2) => "s16",
            (true, 4) => "s32",
            (true, _) => "s64",
            (false, _) => "u64",
        }
    }

    /// Writes the fetch argument of a uprobe line that reads this
    /// argument: `%di:u64`, `-20(%bp):s32`, `\5:s32`, and for a symbol
    /// `@+OFFSET:u64`, where `symbol_at` gives the `@+` offset of the
    /// symbol's first byte (its address minus the marker's plus the
    /// marker's file offset, as the kernel maps `@+` from the probe);
    /// without it a symbol is refused.
    pub fn write_fetch<W: fmt::Write>(&self, w: &mut W, symbol_at: Option<u64>) -> fmt::Result {
        match self.place {
            SdtPlace::Register(reg) => write!(w, "%{}", reg.fetch_name())?,
            SdtPlace::Memory { base, offset } => {
                let sign = if offset < 0 { '-' } else { '+' };
                write!(w, "{sign}{}(%{})", offset.unsigned_abs(), base.fetch_name())?
            }
            SdtPlace::Constant(value) => write!(w, "\\{value}")?,
            SdtPlace::Symbol { offset, .. } => {
                let at = symbol_at.ok_or(fmt::Error)?;
                write!(w, "@+{}", at.wrapping_add_signed(offset))?
            }
        }
        write!(w, ":{}", self.fetch_type())
    }
}
