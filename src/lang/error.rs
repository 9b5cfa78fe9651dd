// SPDX-License-Identifier: GPL-2.0
//! Error codes of the probe-event parser and the error position.
//!
//! [`ErrorCode`] is dynprobe's list of error codes: every probe-event code
//! of the kernels dynprobe supports (the `ERRORS` table of
//! `kernel/trace/trace_probe.h`), followed by dynprobe's own for the
//! `function_events` syntax and the synthetic event parser. A code's value
//! is not a kernel index: which codes a kernel has, at which index and with
//! which text, is in that kernel's [`crate::lang::KernelFacts`].
//!
//! The codes are listed once, in [`error_codes!`]'s table, whose rows read
//! as the kernel's own `C(NAME, "text")` X-macro rows; the enum, its
//! value order ([`ErrorCode::ALL`]), the texts and the names are made from
//! it.

use core::fmt;

/// Makes [`ErrorCode`] from groups of `Variant = C(NAME, "text")` rows,
/// each group under the prefix its kernel source gives the names.
macro_rules! error_codes {
    ($(
        $(#[$group_doc:meta])*
        $prefix:literal {
            $( $(#[$doc:meta])* $variant:ident = C($name:ident, $text:literal), )*
        }
    )*) => {
        /// Why a definition was rejected.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum ErrorCode {
            $($(
                #[doc = concat!("`", $text, "` (`", $prefix, stringify!($name), "`)")]
                $(#[$doc])*
                $variant,
            )*)*
        }

        impl ErrorCode {
            /// Every code, in declaration order: `ALL[code as usize] == code`.
            pub const ALL: [ErrorCode; 0 $($(+ error_codes!(@one $variant))*)*] =
                [$($(ErrorCode::$variant,)*)*];

            /// dynprobe's text for the code: what `error_log` shows for a
            /// code the running kernel's table lacks, and what a
            /// [`ParseError`] displays. For a kernel code it is the kernel's
            /// text (7.2's where 7.3 changed it; a kernel's own text is
            /// [`crate::lang::KernelFacts::message`]).
            pub fn message(self) -> &'static str {
                match self {
                    $($(ErrorCode::$variant => $text,)*)*
                }
            }

            /// The kernel's name for the code, without its prefix (`BAD_TYPE`
            /// for `TP_ERR_BAD_TYPE`).
            pub fn name(self) -> &'static str {
                match self {
                    $($(ErrorCode::$variant => stringify!($name),)*)*
                }
            }
        }
    };
    (@one $variant:ident) => {
        1
    };
}

error_codes! {
    /// The kernel's probe errors: `ERRORS` in `kernel/trace/trace_probe.h`
    /// (`TP_ERR_*`), 7.2's in 7.2's order (`LINUX_7_2` is their prefix),
    /// then those 7.3 added.
    "TP_ERR_" {
        FileNotFound = C(FILE_NOT_FOUND, "Failed to find the given file"),
        NoRegularFile = C(NO_REGULAR_FILE, "Not a regular file"),
        BadRefcnt = C(BAD_REFCNT, "Invalid reference counter offset"),
        RefcntOpenBrace = C(REFCNT_OPEN_BRACE, "Reference counter brace is not closed"),
        BadRefcntSuffix = C(BAD_REFCNT_SUFFIX, "Reference counter has wrong suffix"),
        BadUprobeOffs = C(BAD_UPROBE_OFFS, "Invalid uprobe offset"),
        BadMaxactType = C(BAD_MAXACT_TYPE, "Maxactive is only for function exit"),
        BadMaxact = C(BAD_MAXACT, "Invalid maxactive number"),
        MaxactTooBig = C(MAXACT_TOO_BIG, "Maxactive is too big"),
        BadProbeAddr = C(BAD_PROBE_ADDR, "Invalid probed address or symbol"),
        NonUniqSymbol = C(NON_UNIQ_SYMBOL, "The symbol is not unique"),
        BadRetprobe = C(BAD_RETPROBE, "Retprobe address must be an function entry"),
        NoTracepoint = C(NO_TRACEPOINT, "Tracepoint is not found"),
        BadTpName = C(BAD_TP_NAME, "Invalid character in tracepoint name"),
        BadAddrSuffix = C(BAD_ADDR_SUFFIX, "Invalid probed address suffix"),
        NoGroupName = C(NO_GROUP_NAME, "Group name is not specified"),
        GroupTooLong = C(GROUP_TOO_LONG, "Group name is too long"),
        BadGroupName = C(BAD_GROUP_NAME, "Group name must follow the same rules as C identifiers"),
        NoEventName = C(NO_EVENT_NAME, "Event name is not specified"),
        EventTooLong = C(EVENT_TOO_LONG, "Event name is too long"),
        BadEventName = C(BAD_EVENT_NAME, "Event name must follow the same rules as C identifiers"),
        EventExist = C(EVENT_EXIST, "Given group/event name is already used by another event"),
        RetvalOnProbe = C(RETVAL_ON_PROBE, "$retval is not available on probe"),
        NoRetval = C(NO_RETVAL, "This function returns 'void' type"),
        BadStackNum = C(BAD_STACK_NUM, "Invalid stack number"),
        BadArgNum = C(BAD_ARG_NUM, "Invalid argument number"),
        BadVar = C(BAD_VAR, "Invalid $-variable specified"),
        BadRegName = C(BAD_REG_NAME, "Invalid register name"),
        BadMemAddr = C(BAD_MEM_ADDR, "Invalid memory address"),
        BadImm = C(BAD_IMM, "Invalid immediate value"),
        ImmstrNoClose = C(IMMSTR_NO_CLOSE, "String is not closed with '\"'"),
        FileOnKprobe = C(FILE_ON_KPROBE, "File offset is not available with kprobe"),
        BadFileOffs = C(BAD_FILE_OFFS, "Invalid file offset value"),
        SymOnUprobe = C(SYM_ON_UPROBE, "Symbol is not available with uprobe"),
        TooManyOps = C(TOO_MANY_OPS, "Dereference is too much nested"),
        DerefNeedBrace = C(DEREF_NEED_BRACE, "Dereference needs a brace"),
        BadDerefOffs = C(BAD_DEREF_OFFS, "Invalid dereference offset"),
        DerefOpenBrace = C(DEREF_OPEN_BRACE, "Dereference brace is not closed"),
        CommCantDeref = C(COMM_CANT_DEREF, "$comm can not be dereferenced"),
        BadFetchArg = C(BAD_FETCH_ARG, "Invalid fetch argument"),
        ArrayNoClose = C(ARRAY_NO_CLOSE, "Array is not closed"),
        BadArraySuffix = C(BAD_ARRAY_SUFFIX, "Array has wrong suffix"),
        BadArrayNum = C(BAD_ARRAY_NUM, "Invalid array size"),
        ArrayTooBig = C(ARRAY_TOO_BIG, "Array number is too big"),
        BadType = C(BAD_TYPE, "Unknown type is specified"),
        BadString = C(BAD_STRING, "String accepts only memory argument"),
        BadSymstring = C(BAD_SYMSTRING, "Symbol String doesn't accept data/userdata"),
        BadBitfield = C(BAD_BITFIELD, "Invalid bitfield"),
        ArgNameTooLong = C(ARG_NAME_TOO_LONG, "Argument name is too long"),
        NoArgName = C(NO_ARG_NAME, "Argument name is not specified"),
        BadArgName = C(BAD_ARG_NAME, "Argument name must follow the same rules as C identifiers"),
        UsedArgName = C(USED_ARG_NAME, "This argument name is already used"),
        ArgTooLong = C(ARG_TOO_LONG, "Argument expression is too long"),
        NoArgBody = C(NO_ARG_BODY, "No argument expression"),
        BadInsnBndry = C(BAD_INSN_BNDRY, "Probe point is not an instruction boundary"),
        FailRegProbe = C(FAIL_REG_PROBE, "Failed to register probe event"),
        DiffProbeType = C(DIFF_PROBE_TYPE, "Probe type is different from existing probe"),
        DiffArgType = C(DIFF_ARG_TYPE, "Argument type or name is different from existing probe"),
        SameProbe = C(SAME_PROBE, "There is already the exact same probe event"),
        NoEventInfo = C(NO_EVENT_INFO, "This requires both group and event name to attach"),
        BadAttachEvent = C(BAD_ATTACH_EVENT, "Attached event does not exist"),
        BadAttachArg = C(BAD_ATTACH_ARG, "Attached event does not have this field"),
        NoEpFilter = C(NO_EP_FILTER, "No filter rule after 'if'"),
        NosupBtfarg = C(NOSUP_BTFARG, "BTF is not available or not supported"),
        NoBtfarg = C(NO_BTFARG, "This variable is not found at this probe point"),
        NoBtfEntry = C(NO_BTF_ENTRY, "No BTF entry for this probe point"),
        BadVarArgs = C(BAD_VAR_ARGS, "$arg* must be an independent parameter without name etc."),
        NofentryArgs = C(NOFENTRY_ARGS, "$arg* can be used only on function entry or exit"),
        DoubleArgs = C(DOUBLE_ARGS, "$arg* can be used only once in the parameters"),
        Args2long = C(ARGS_2LONG, "$arg* failed because the argument list is too long"),
        Argidx2big = C(ARGIDX_2BIG, "$argN index is too big"),
        NoPtrStrct = C(NO_PTR_STRCT, "This is not a pointer to union/structure."),
        NosupDatArg = C(NOSUP_DAT_ARG, "Non pointer structure/union argument is not supported."),
        BadHyphen = C(BAD_HYPHEN, "Failed to parse single hyphen. Forgot '>'?"),
        NoBtfField = C(NO_BTF_FIELD, "This field is not found."),
        BadBtfTid = C(BAD_BTF_TID, "Failed to get BTF type info."),
        BadType4str = C(BAD_TYPE4STR, "This type does not fit for string."),
        NeedStringType = C(NEED_STRING_TYPE, "$comm and immediate-string only accepts string type"),
        TooManyArgs = C(TOO_MANY_ARGS, "Too many arguments are specified"),
        TooManyEargs = C(TOO_MANY_EARGS, "Too many entry arguments specified"),
        EventTooBig = C(EVENT_TOO_BIG, "Event too big (too many fields?)"),
        TypecastNotEvent = C(TYPECAST_NOT_EVENT, "Typecasts are only for eprobe fields"),
        NosupPercpu = C(NOSUP_PERCPU, "Per-cpu variable access is only for kernel probes"),
        NoEventField = C(NO_EVENT_FIELD, "This event field is not found."),
        TooManyNested = C(TOO_MANY_NESTED, "Too many nested typecasts/dereferences"),
        TypecastBadArrow = C(
            TYPECAST_BAD_ARROW,
            "Typecast field option does not support -> operator"
        ),
        TypecastNotAligned = C(TYPECAST_NOT_ALIGNED, "Typecast field option is not byte-aligned"),
        TypecastReqField = C(TYPECAST_REQ_FIELD, "Typecast requires a field access"),
        TypecastSymOffset = C(TYPECAST_SYM_OFFSET, "@SYM+/-OFFSET with typecast needs parentheses"),
    }
    /// dynprobe's own: `function_events` and `dynamic_events`.
    "" {
        FeNoOpenParen = C(FE_NO_OPEN_PAREN, "Expected '(' after the function name"),
        FeNoCloseParen = C(FE_NO_CLOSE_PAREN, "Expected ')' at the end of the argument list"),
        FeTrailing = C(FE_TRAILING, "Unexpected text after the argument list"),
        FeBadFunc = C(FE_BAD_FUNC, "Invalid function name"),
        FeNoField = C(FE_NO_FIELD, "Argument name or address is not specified"),
        FeBadIndex = C(FE_BAD_INDEX, "Invalid index or offset"),
        FeBadUnsigned = C(FE_BAD_UNSIGNED, "'unsigned' applies only to char, short, int and long"),
        FeParamElsewhere = C(
            FE_PARAM_ELSEWHERE,
            "Name of another parameter: arguments are positional (NULL skips one)"
        ),
        NoMatchingType = C(NO_MATCHING_TYPE, "No matching dynamic event type"),
        FeSpaceInArg = C(FE_SPACE_IN_ARG, "A named argument is one word: no space inside"),
        FeAllTwice = C(FE_ALL_TWICE, "'...' can be used only once"),
        FlistEmptyItem = C(FLIST_EMPTY_ITEM, "Empty item in the function list"),
        FlistBadItem = C(FLIST_BAD_ITEM, "Invalid character in the function list"),
        FlistOnlyExcluded = C(
            FLIST_ONLY_EXCLUDED,
            "The function list only excludes: name a function to probe"
        ),
        FlistNeedsEvent = C(FLIST_NEEDS_EVENT, "A function list needs an event name"),
        /// Past [`crate::lang::funclist::MAX_LIST_COST`] (`E2BIG`).
        FlistTooCostly = C(
            FLIST_TOO_COSTLY,
            "The function list is too costly to match against every symbol: fewer globs with '*' inside"
        ),
        SeveralCopies = C(
            SEVERAL_COPIES,
            "Only compiler copies (.isra/.constprop) of this function exist, several (the kernel log names them): name one"
        ),
    }
    /// The synthetic event parser's, `ERRORS` in
    /// `kernel/trace/trace_events_synth.c` (`SYNTH_ERR_*`).
    "SYNTH_ERR_" {
        SynthBadName = C(BAD_NAME, "Illegal name"),
        SynthInvalidCmd = C(INVALID_CMD, "Command must be of the form: <name> field[;field] ..."),
        SynthInvalidDynCmd = C(
            INVALID_DYN_CMD,
            "Command must be of the form: s or -:[synthetic/]<name> field[;field] ..."
        ),
        SynthEventExists = C(EVENT_EXISTS, "Event already exists"),
        SynthTooManyFields = C(TOO_MANY_FIELDS, "Too many fields"),
        SynthIncompleteType = C(INCOMPLETE_TYPE, "Incomplete type"),
        SynthInvalidType = C(INVALID_TYPE, "Invalid type"),
        SynthInvalidField = C(INVALID_FIELD, "Invalid field"),
        SynthInvalidArraySpec = C(INVALID_ARRAY_SPEC, "Invalid array specification"),
    }
    /// dynprobe's own: `function_events` and `dynamic_events`.
    "" {
        /// An event probe's `if FILTER`.
        EpFilterUnsupported = C(EP_FILTER_UNSUPPORTED, "Filters of event probes are not supported"),
        /// A uprobe on `PATH:SYMBOL`: the file is not one the ELF reader
        /// takes (`ENOEXEC`).
        UprobeNotElf = C(UPROBE_NOT_ELF, "Not an x86_64 ELF executable or shared object"),
        /// Its headers or symbol tables lie (`ENOEXEC`).
        UprobeBadElf = C(UPROBE_BAD_ELF, "Malformed ELF file"),
        /// Its symbol tables are past what dynprobe reads (`EFBIG`).
        UprobeElfTooBig = C(UPROBE_ELF_TOO_BIG, "The file's symbol tables are too large to read"),
        /// Reading it failed (the read's errno).
        UprobeReadFailed = C(UPROBE_READ_FAILED, "Failed to read the file"),
        /// Neither `.symtab` nor `.dynsym` (`ENOENT`).
        UprobeNoSymtab = C(UPROBE_NO_SYMTAB, "The file has no symbol table (.symtab or .dynsym)"),
        /// No defined function of that name (`ENOENT`).
        UprobeNoFunc = C(UPROBE_NO_FUNC, "No such function in the file's symbol tables"),
        /// Only other symbols (a variable) have that name (`EINVAL`).
        UprobeNotFunc = C(UPROBE_NOT_FUNC, "The symbol is not a function"),
        /// `+OFFS` at or past the function's `st_size` (`EINVAL`).
        UprobeOffsPastEnd = C(UPROBE_OFFS_PAST_END, "Offset is past the end of the function"),
        /// A function event on a user function: its arguments are in the
        /// six registers of the x86_64 SysV ABI (`E2BIG` past them).
        UserFuncTooManyArgs = C(
            USER_FUNC_TOO_MANY_ARGS,
            "A user function's arguments are its first six (the registers)"
        ),
        /// A user function has no BTF: arguments by name, `...` and a
        /// return value by name are refused (`EOPNOTSUPP`).
        UserFuncNamedArg = C(
            USER_FUNC_NAMED_ARG,
            "User functions have no BTF: arguments are positional, with a type"
        ),
    }
    /// The posted wprobe series' probe errors (`TP_ERR_*` there), which
    /// no supported kernel has yet: `error_log` shows dynprobe's copy of
    /// their texts.
    "TP_ERR_" {
        BadAccessFmt = C(BAD_ACCESS_FMT, "Access memory address requires @"),
        BadAccessType = C(BAD_ACCESS_TYPE, "Bad memory access type"),
        BadAccessLen = C(BAD_ACCESS_LEN, "This memory access length is not supported"),
        BadAccessAddr = C(BAD_ACCESS_ADDR, "Invalid access memory address"),
    }
}

impl ErrorCode {
    /// The code whose value (`code as u8`) is `value`, if any: how a code
    /// passed as a number is taken back.
    pub fn from_value(value: u8) -> Option<ErrorCode> {
        ErrorCode::ALL.get(usize::from(value)).copied()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// Linux errno values the parser can return (positive numbers).
pub mod errno {
    /// No such file or directory.
    pub const ENOENT: i32 = 2;
    /// I/O error (a file that could not be read whole).
    pub const EIO: i32 = 5;
    /// Argument list too long.
    pub const E2BIG: i32 = 7;
    /// Exec format error (a file that is not an ELF file dynprobe reads).
    pub const ENOEXEC: i32 = 8;
    /// Out of memory.
    pub const ENOMEM: i32 = 12;
    /// File exists.
    pub const EEXIST: i32 = 17;
    /// No such device (an event probe's source event does not exist).
    pub const ENODEV: i32 = 19;
    /// Invalid argument.
    pub const EINVAL: i32 = 22;
    /// File too large.
    pub const EFBIG: i32 = 27;
    /// Result out of range (a number that overflows).
    pub const ERANGE: i32 = 34;
    /// Operation not supported.
    pub const EOPNOTSUPP: i32 = 95;
    /// Address not available (a symbol name that is not unique).
    pub const EADDRNOTAVAIL: i32 = 99;
}

/// The subsystem name the kernel prints in `error_log` (`[..] NAME: error:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subsystem {
    /// `trace_kprobe` (p and r definitions).
    Kprobe,
    /// `trace_fprobe` (f and t definitions).
    Fprobe,
    /// `dynevent` (a `dynamic_events` line no probe type accepted).
    Dynevent,
    /// `function_events` (dynprobe's function events).
    Function,
    /// `synthetic_events` (synthetic event definitions, in either file).
    Synthetic,
    /// `event_probe` (e definitions).
    EventProbe,
    /// `wprobe` (w definitions, as the posted wprobe series logs them).
    Wprobe,
    /// `trace_uprobe` (p and r definitions on `PATH:OFFSET`).
    Uprobe,
}

impl Subsystem {
    /// The name as printed in `error_log`.
    pub fn name(self) -> &'static str {
        match self {
            Subsystem::Kprobe => "trace_kprobe",
            Subsystem::Fprobe => "trace_fprobe",
            Subsystem::Dynevent => "dynevent",
            Subsystem::Function => "function_events",
            Subsystem::Synthetic => "synthetic_events",
            Subsystem::EventProbe => "event_probe",
            Subsystem::Wprobe => "wprobe",
            Subsystem::Uprobe => "trace_uprobe",
        }
    }
}

/// A rejected line.
///
/// The kernel prints the command as the words of the line joined by single
/// spaces (see [`crate::lang::write_command`]) and puts the caret under
/// column [`ParseError::column`] (0-based) of that text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong.
    pub code: ErrorCode,
    /// Caret column in the normalized command text.
    pub column: usize,
    /// The errno the write should fail with (positive).
    pub errno: i32,
    /// Which subsystem name the error log uses.
    pub subsystem: Subsystem,
    /// False when the kernel fails the write without an `error_log` entry
    /// (for example a line in `kprobe_events` that is neither `p` nor `r`).
    pub logged: bool,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: error: {} (column {})",
            self.subsystem.name(),
            self.code.message(),
            self.column
        )
    }
}

/// A `function_events` error, logged with the caret at byte `column` of
/// the line as written.
pub(crate) fn function_error(code: ErrorCode, column: usize) -> ParseError {
    ParseError {
        code,
        column,
        errno: if matches!(code, ErrorCode::TooManyArgs | ErrorCode::EventTooBig) {
            errno::E2BIG
        } else {
            errno::EINVAL
        },
        subsystem: Subsystem::Function,
        logged: true,
    }
}
