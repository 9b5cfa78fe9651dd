// SPDX-License-Identifier: GPL-2.0
//! Fetch types, x86_64 registers and the typed fetch program.

/// Type of a recorded value.
///
/// The first group is the probe-event type table of Linux 7.2
/// (`probe_fetch_types[]`); the second group are the C type names only
/// `function_events` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchType {
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `s8`
    S8,
    /// `s16`
    S16,
    /// `s32`
    S32,
    /// `s64`
    S64,
    /// `x8` (hexadecimal)
    X8,
    /// `x16`
    X16,
    /// `x32`
    X32,
    /// `x64`
    X64,
    /// `char` in probe events: one byte printed as a character.
    Char,
    /// `symbol`: an address printed with `%pS`.
    Symbol,
    /// `string`: a NUL-terminated string read from kernel memory.
    String,
    /// `ustring`: a NUL-terminated string read from user memory.
    UString,
    /// `symstr`: an address converted to its symbol text at record time.
    SymStr,
    /// function_events `char` (signed decimal, or a fixed string as `char[N]`).
    CChar,
    /// function_events `short`.
    CShort,
    /// function_events `int`.
    CInt,
    /// function_events `long`.
    CLong,
    /// function_events `unsigned char`.
    UChar,
    /// function_events `unsigned short`.
    UShort,
    /// function_events `unsigned int`.
    UInt,
    /// function_events `unsigned long`.
    ULong,
    /// function_events `size_t`.
    SizeT,
}

/// How a value of a type is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintKind {
    /// Unsigned decimal.
    Unsigned,
    /// Signed decimal.
    Signed,
    /// Hexadecimal with a `0x` prefix (probe events).
    HexPrefixed,
    /// Hexadecimal without prefix (function events).
    Hex,
    /// A character in single quotes (`'%c'`).
    Char,
    /// An address printed with `%pS`.
    Symbol,
    /// A dynamic string (`__data_loc`), printed quoted in probe events.
    String,
}

impl FetchType {
    /// Size in bytes of one element in the record.
    pub fn size(self) -> u32 {
        use FetchType::*;
        match self {
            U8 | S8 | X8 | Char | CChar | UChar => 1,
            U16 | S16 | X16 | CShort | UShort => 2,
            U32 | S32 | X32 | CInt | UInt => 4,
            String | UString | SymStr => 4,
            U64 | S64 | X64 | Symbol | CLong | ULong | SizeT => 8,
        }
    }

    /// The `signed:` value of the format file.
    pub fn is_signed(self) -> bool {
        use FetchType::*;
        matches!(
            self,
            S8 | S16 | S32 | S64 | String | UString | SymStr | CChar | CShort | CInt | CLong
        )
    }

    /// True for the dynamic (`__data_loc`) string types.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            FetchType::String | FetchType::UString | FetchType::SymStr
        )
    }

    /// The type's name as written in a definition.
    pub fn name(self) -> &'static str {
        use FetchType::*;
        match self {
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            X8 => "x8",
            X16 => "x16",
            X32 => "x32",
            X64 => "x64",
            Char => "char",
            Symbol => "symbol",
            String => "string",
            UString => "ustring",
            SymStr => "symstr",
            CChar => "char",
            CShort => "short",
            CInt => "int",
            CLong => "long",
            UChar => "unsigned char",
            UShort => "unsigned short",
            UInt => "unsigned int",
            ULong => "unsigned long",
            SizeT => "size_t",
        }
    }

    /// The C type shown in the event's `format` file.
    pub fn c_type(self) -> &'static str {
        use FetchType::*;
        match self {
            U8 | X8 | Char => "u8",
            U16 | X16 => "u16",
            U32 | X32 => "u32",
            U64 | X64 => "u64",
            Symbol => "u64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            String | UString | SymStr => "__data_loc char[]",
            CChar => "char",
            CShort => "short",
            CInt => "int",
            CLong => "long",
            UChar => "unsigned char",
            UShort => "unsigned short",
            UInt => "unsigned int",
            ULong => "unsigned long",
            SizeT => "size_t",
        }
    }

    /// How values are printed by a probe event (`kprobe`/`fprobe`).
    pub fn probe_print(self) -> PrintKind {
        use FetchType::*;
        match self {
            U8 | U16 | U32 | U64 | UChar | UShort | UInt | ULong | SizeT => PrintKind::Unsigned,
            S8 | S16 | S32 | S64 | CChar | CShort | CInt | CLong => PrintKind::Signed,
            X8 | X16 | X32 | X64 => PrintKind::HexPrefixed,
            Char => PrintKind::Char,
            Symbol => PrintKind::Symbol,
            String | UString | SymStr => PrintKind::String,
        }
    }

    /// How values are printed by a function event.
    pub fn function_print(self) -> PrintKind {
        match self.probe_print() {
            PrintKind::HexPrefixed => PrintKind::Hex,
            PrintKind::Char => PrintKind::Signed,
            k => k,
        }
    }

    /// The `print fmt` conversion of a probe event (`trace_probe.c` table).
    pub fn probe_fmt(self) -> &'static str {
        use FetchType::*;
        match self {
            U8 | U16 | U32 => "%u",
            U64 => "%Lu",
            S8 | S16 | S32 => "%d",
            S64 => "%Ld",
            X8 | X16 | X32 => "0x%x",
            X64 => "0x%Lx",
            Char => "'%c'",
            Symbol => "%pS",
            String | UString | SymStr => "\\\"%s\\\"",
            CChar | CShort | CInt => "%d",
            CLong => "%ld",
            UChar | UShort | UInt => "%u",
            ULong | SizeT => "%lu",
        }
    }

    /// The `print fmt` conversion of a function event.
    pub fn function_fmt(self) -> &'static str {
        use FetchType::*;
        match self {
            U8 | U16 | U32 | UChar | UShort | UInt => "%u",
            U64 => "%llu",
            ULong | SizeT => "%lu",
            S8 | S16 | S32 | CChar | CShort | CInt | Char => "%d",
            S64 => "%lld",
            CLong => "%ld",
            X8 | X16 | X32 => "%x",
            X64 => "%llx",
            Symbol => "%pS",
            String | UString | SymStr => "%s",
        }
    }

    /// Look a probe-event type name up as `find_fetch_type()` does
    /// (`None` selects the default `x64`; `b<W>@<O>/<S>` selects `u<S>`).
    pub(crate) fn find(name: Option<&[u8]>) -> Option<FetchType> {
        let name = match name {
            None => return Some(FetchType::X64),
            Some(n) => n,
        };
        if name.first() == Some(&b'b') {
            let slash = crate::lang::text::find(name, b'/')?;
            let bs = crate::lang::text::kstrtoull(crate::lang::text::tail(name, slash + 1), 0)?;
            return match bs {
                8 => Some(FetchType::U8),
                16 => Some(FetchType::U16),
                32 => Some(FetchType::U32),
                64 => Some(FetchType::U64),
                _ => None,
            };
        }
        use FetchType::*;
        const TABLE: [FetchType; 17] = [
            String, UString, SymStr, U8, U16, U32, U64, S8, S16, S32, S64, X8, X16, X32, X64, Char,
            Symbol,
        ];
        TABLE.iter().copied().find(|t| t.name().as_bytes() == name)
    }
}

/// An x86_64 `pt_regs` register, as named by `regs_query_register_offset()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    /// `r15`
    R15,
    /// `r14`
    R14,
    /// `r13`
    R13,
    /// `r12`
    R12,
    /// `bp`
    Bp,
    /// `bx`
    Bx,
    /// `r11`
    R11,
    /// `r10`
    R10,
    /// `r9`
    R9,
    /// `r8`
    R8,
    /// `ax`
    Ax,
    /// `cx`
    Cx,
    /// `dx`
    Dx,
    /// `si`
    Si,
    /// `di`
    Di,
    /// `orig_ax`
    OrigAx,
    /// `ip`
    Ip,
    /// `cs`
    Cs,
    /// `flags`
    Flags,
    /// `sp`
    Sp,
    /// `ss`
    Ss,
}

impl Reg {
    /// All registers in `struct pt_regs` order.
    pub const ALL: [Reg; 21] = [
        Reg::R15,
        Reg::R14,
        Reg::R13,
        Reg::R12,
        Reg::Bp,
        Reg::Bx,
        Reg::R11,
        Reg::R10,
        Reg::R9,
        Reg::R8,
        Reg::Ax,
        Reg::Cx,
        Reg::Dx,
        Reg::Si,
        Reg::Di,
        Reg::OrigAx,
        Reg::Ip,
        Reg::Cs,
        Reg::Flags,
        Reg::Sp,
        Reg::Ss,
    ];

    /// The register's name (without `%`).
    pub fn name(self) -> &'static str {
        match self {
            Reg::R15 => "r15",
            Reg::R14 => "r14",
            Reg::R13 => "r13",
            Reg::R12 => "r12",
            Reg::Bp => "bp",
            Reg::Bx => "bx",
            Reg::R11 => "r11",
            Reg::R10 => "r10",
            Reg::R9 => "r9",
            Reg::R8 => "r8",
            Reg::Ax => "ax",
            Reg::Cx => "cx",
            Reg::Dx => "dx",
            Reg::Si => "si",
            Reg::Di => "di",
            Reg::OrigAx => "orig_ax",
            Reg::Ip => "ip",
            Reg::Cs => "cs",
            Reg::Flags => "flags",
            Reg::Sp => "sp",
            Reg::Ss => "ss",
        }
    }

    /// Byte offset of the register in x86_64 `struct pt_regs`.
    pub fn pt_regs_offset(self) -> u32 {
        let idx = Reg::ALL.iter().position(|&r| r == self).unwrap_or(0);
        (idx as u32).saturating_mul(8)
    }

    /// Look a register name up.
    pub(crate) fn from_name(name: &[u8]) -> Option<Reg> {
        Reg::ALL
            .iter()
            .copied()
            .find(|r| r.name().as_bytes() == name)
    }
}

/// Which address space a memory access uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// Kernel memory (`copy_from_kernel_nofault`); an address below the
    /// user/kernel split is read as user memory, as the kernel does.
    Kernel,
    /// User memory (`copy_from_user_nofault`).
    User,
    /// User memory below the user/kernel split, kernel memory above
    /// (function events).
    Auto,
}

impl Space {
    /// Two bits for [`Program`]'s packed dereferences (3 is
    /// [`DerefOp::ThisCpuPtr`]).
    const fn bits(self) -> u32 {
        match self {
            Space::Kernel => 0,
            Space::User => 1,
            Space::Auto => 2,
        }
    }

    const fn from_bits(bits: u32) -> Space {
        match bits & 3 {
            1 => Space::User,
            2 => Space::Auto,
            _ => Space::Kernel,
        }
    }
}

/// A byte range of an argument's text (`ProbeArg::text`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextRange {
    /// First byte.
    pub start: u8,
    /// Length in bytes.
    pub len: u8,
}

/// How a field of an event probe's source record is read
/// (`get_event_field()`, by the field's `filter_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A number of 1, 2, 4 or 8 bytes (sign-extended when signed).
    Value,
    /// Any other size (an array): its address in the record.
    Array,
    /// `__data_loc char[]`: the string's address, from the record start.
    DynString,
    /// `__rel_loc char[]`: the string's address, from the field.
    RelString,
    /// `char[N]`: the field's address.
    StaticString,
    /// `char *`: the pointer the field holds.
    PtrString,
}

/// A field of the event an event probe is attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventField {
    /// Offset from the start of the record (common header included).
    pub offset: u16,
    /// Size in bytes.
    pub size: u16,
    /// `signed:` of the source event's format.
    pub signed: bool,
    /// How the value is taken from the record.
    pub kind: FieldKind,
}

impl EventField {
    /// The value `get_event_field()` takes from `rec`, a record whose
    /// first byte is at address `base`; 0 when the field lies outside it.
    pub fn value(&self, rec: &[u8], base: u64) -> u64 {
        let off = usize::from(self.offset);
        let addr = base.wrapping_add(u64::from(self.offset));
        let read = |n: usize| -> Option<u64> {
            let b = rec.get(off..off.checked_add(n)?)?;
            let mut v = [0u8; 8];
            v.get_mut(..n)?.copy_from_slice(b);
            Some(u64::from_le_bytes(v))
        };
        let v = match self.kind {
            FieldKind::DynString => read(4).map(|loc| base.wrapping_add(loc & 0xffff)),
            // As the kernel's eprobe reads it: from the field itself.
            FieldKind::RelString => read(4).map(|loc| addr.wrapping_add(loc & 0xffff)),
            FieldKind::StaticString | FieldKind::Array => Some(addr),
            FieldKind::PtrString => read(8),
            FieldKind::Value => {
                let n = usize::from(self.size);
                read(n).map(|v| match (self.signed, n) {
                    (true, 1) => i64::from(v as u8 as i8) as u64,
                    (true, 2) => i64::from(v as u16 as i16) as u64,
                    (true, 4) => i64::from(v as u32 as i32) as u64,
                    _ => v,
                })
            }
        };
        v.unwrap_or(0)
    }
}

/// First stage of a fetch program: where the value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// `%REG`
    Reg(Reg),
    /// `$stackN`
    Stack(u32),
    /// `$stack`
    StackPointer,
    /// `$retval`
    RetVal,
    /// `$argN` on function entry (0-based parameter number).
    Arg(u32),
    /// `$argN` at function exit: the entry-data slot saved at entry.
    EntryData(u32),
    /// `\IMM` or `@ADDR`.
    Imm(u64),
    /// `$comm`: the current task's command name.
    Comm,
    /// `$current`: the address of the current task's `task_struct`.
    Current,
    /// `$FIELD` of an event probe: a field of the source event's record.
    Field(EventField),
    /// `\"str"`: the text (without quotes) is in the argument's text.
    ImmString(TextRange),
    /// `@SYM[+|-OFFS]`: `addr` is the resolved address (offset included).
    Symbol {
        /// The symbol name in the argument's text.
        name: TextRange,
        /// The `+|-OFFS` part.
        offset: i64,
        /// Resolved address (symbol + offset).
        addr: u64,
    },
    /// `@+OFFS` of a uprobe: the address where offset `OFFS` of the
    /// probed file is mapped in the probed process.
    FileOffset(u64),
    /// Nothing is loaded (a `NULL` function-event argument); never stored.
    None,
}

/// Second stage: one step from `value + offset` to the next value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deref {
    /// What the step does.
    pub op: DerefOp,
    /// Added to the value first.
    pub offset: i64,
}

impl Deref {
    /// A read of a pointer-sized value at `value + offset` in `space`.
    pub const fn read(space: Space, offset: i64) -> Deref {
        Deref {
            op: DerefOp::Read(space),
            offset,
        }
    }
}

/// What a [`Deref`] step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DerefOp {
    /// Read a pointer-sized value there.
    Read(Space),
    /// Take this CPU's instance of the per-CPU variable there
    /// (`this_cpu_ptr()`); no memory is read.
    ThisCpuPtr,
}

impl DerefOp {
    /// Two bits for [`Program`]'s packed dereferences.
    const fn bits(self) -> u32 {
        match self {
            DerefOp::Read(space) => space.bits(),
            DerefOp::ThisCpuPtr => 3,
        }
    }

    const fn from_bits(bits: u32) -> DerefOp {
        match bits & 3 {
            3 => DerefOp::ThisCpuPtr,
            b => DerefOp::Read(Space::from_bits(b)),
        }
    }
}

/// Third stage: how the value reaches the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// Store the value itself, truncated to the type size.
    Raw,
    /// Read the type's size at `value + offset`.
    Mem {
        /// Address space.
        space: Space,
        /// Added to the value.
        offset: i64,
    },
    /// Copy the string at `value + offset` into the dynamic area.
    String {
        /// Address space.
        space: Space,
        /// Added to the value.
        offset: i64,
    },
    /// Format `value + offset` as a symbol into the dynamic area.
    SymStr {
        /// Added to the value.
        offset: i64,
    },
}

/// Fourth stage: extract a bitfield from the stored value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bitfield {
    /// Size in bytes of the unit the shifts apply to.
    pub basesize: u8,
    /// Left shift.
    pub lshift: u8,
    /// Right shift.
    pub rshift: u8,
}

/// Most dereferences a program may hold (the kernel's 16 instructions minus
/// load, store and end).
pub const MAX_DEREFS: usize = 13;

/// A compiled fetch program.
///
/// The stages are fixed: one load, up to [`MAX_DEREFS`] dereferences, one
/// store, an optional bitfield, an optional array repetition. A program
/// carries no destination offsets or sizes: the interpreter writes only into
/// the slot the record layout assigned to the argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// Where the value comes from.
    pub load: Load,
    /// The dereferences' offsets and, two bits each, their address spaces:
    /// half the size of an array of [`Deref`], and a program is most of
    /// what a compiled argument takes.
    deref_offsets: [i64; MAX_DEREFS],
    deref_spaces: u32,
    nderefs: u8,
    /// How it is stored.
    pub store: Store,
    /// Bitfield extraction, if any.
    pub bitfield: Option<Bitfield>,
    /// Number of array elements (0: not an array).
    pub count: u8,
}

impl Program {
    /// A program that stores nothing.
    pub const fn empty() -> Program {
        Program {
            load: Load::None,
            deref_offsets: [0; MAX_DEREFS],
            deref_spaces: 0,
            nderefs: 0,
            store: Store::Raw,
            bitfield: None,
            count: 0,
        }
    }

    /// The dereference stages, in order.
    pub fn derefs(&self) -> Derefs<'_> {
        Derefs::new(self.deref_offsets(), self.deref_spaces)
    }

    /// The dereferences' offsets, in order.
    pub(crate) fn deref_offsets(&self) -> &[i64] {
        self.deref_offsets
            .get(..usize::from(self.nderefs))
            .unwrap_or(&[])
    }

    /// The dereferences' operations, two bits each, the first lowest.
    pub(crate) fn deref_spaces(&self) -> u32 {
        self.deref_spaces
    }

    /// Make every memory access of the program a read of user memory
    /// (a uprobe's; its programs have no per-CPU step).
    pub(crate) fn make_user_space(&mut self) {
        let mut spaces = 0u32;
        for (i, d) in self.derefs().enumerate() {
            let op = match d.op {
                DerefOp::Read(_) => DerefOp::Read(Space::User),
                other => other,
            };
            spaces |= op.bits().checked_shl(2 * i as u32).unwrap_or(0);
        }
        self.deref_spaces = spaces;
        self.store = match self.store {
            Store::Mem { offset, .. } => Store::Mem {
                space: Space::User,
                offset,
            },
            Store::String { offset, .. } => Store::String {
                space: Space::User,
                offset,
            },
            other => other,
        };
    }

    pub(crate) fn push_deref(&mut self, d: Deref) -> Result<(), ()> {
        let i = usize::from(self.nderefs);
        let slot = self.deref_offsets.get_mut(i).ok_or(())?;
        *slot = d.offset;
        self.deref_spaces |= d.op.bits().checked_shl(2 * i as u32).ok_or(())?;
        self.nderefs = self.nderefs.checked_add(1).ok_or(())?;
        Ok(())
    }
}

/// The dereference stages of a program, from their offsets and their
/// packed operations: how a [`Program`] and a compiled argument, whose
/// offsets are in its definition's shared list, both give them.
#[derive(Clone, Debug)]
pub struct Derefs<'a> {
    offsets: core::slice::Iter<'a, i64>,
    /// The next stage's operation in the two lowest bits.
    ops: u32,
}

impl<'a> Derefs<'a> {
    pub(crate) fn new(offsets: &'a [i64], ops: u32) -> Derefs<'a> {
        Derefs {
            offsets: offsets.iter(),
            ops,
        }
    }
}

impl Iterator for Derefs<'_> {
    type Item = Deref;

    fn next(&mut self) -> Option<Deref> {
        let offset = *self.offsets.next()?;
        let op = DerefOp::from_bits(self.ops);
        self.ops >>= 2;
        Some(Deref { op, offset })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.offsets.size_hint()
    }
}

impl ExactSizeIterator for Derefs<'_> {}
