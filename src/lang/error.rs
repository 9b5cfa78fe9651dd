// SPDX-License-Identifier: GPL-2.0
//! Error codes of the probe-event parser and the error position.
//!
//! [`ErrorCode`] is dynprobe's list of error codes: every probe-event code
//! of the kernels dynprobe supports (the `ERRORS` table of
//! `kernel/trace/trace_probe.h`), followed by dynprobe's own for the
//! `function_events` syntax and the synthetic event parser. A code's value
//! is not a kernel index: which codes a kernel has, at which index and with
//! which text, is in that kernel's [`crate::lang::KernelFacts`].

use core::fmt;

/// Why a definition was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ErrorCode {
    /// `Failed to find the given file` (`TP_ERR_FILE_NOT_FOUND`)
    FileNotFound,
    /// `Not a regular file` (`TP_ERR_NO_REGULAR_FILE`)
    NoRegularFile,
    /// `Invalid reference counter offset` (`TP_ERR_BAD_REFCNT`)
    BadRefcnt,
    /// `Reference counter brace is not closed` (`TP_ERR_REFCNT_OPEN_BRACE`)
    RefcntOpenBrace,
    /// `Reference counter has wrong suffix` (`TP_ERR_BAD_REFCNT_SUFFIX`)
    BadRefcntSuffix,
    /// `Invalid uprobe offset` (`TP_ERR_BAD_UPROBE_OFFS`)
    BadUprobeOffs,
    /// `Maxactive is only for function exit` (`TP_ERR_BAD_MAXACT_TYPE`)
    BadMaxactType,
    /// `Invalid maxactive number` (`TP_ERR_BAD_MAXACT`)
    BadMaxact,
    /// `Maxactive is too big` (`TP_ERR_MAXACT_TOO_BIG`)
    MaxactTooBig,
    /// `Invalid probed address or symbol` (`TP_ERR_BAD_PROBE_ADDR`)
    BadProbeAddr,
    /// `The symbol is not unique` (`TP_ERR_NON_UNIQ_SYMBOL`)
    NonUniqSymbol,
    /// `Retprobe address must be an function entry` (`TP_ERR_BAD_RETPROBE`)
    BadRetprobe,
    /// `Tracepoint is not found` (`TP_ERR_NO_TRACEPOINT`)
    NoTracepoint,
    /// `Invalid character in tracepoint name` (`TP_ERR_BAD_TP_NAME`)
    BadTpName,
    /// `Invalid probed address suffix` (`TP_ERR_BAD_ADDR_SUFFIX`)
    BadAddrSuffix,
    /// `Group name is not specified` (`TP_ERR_NO_GROUP_NAME`)
    NoGroupName,
    /// `Group name is too long` (`TP_ERR_GROUP_TOO_LONG`)
    GroupTooLong,
    /// `Group name must follow the same rules as C identifiers` (`TP_ERR_BAD_GROUP_NAME`)
    BadGroupName,
    /// `Event name is not specified` (`TP_ERR_NO_EVENT_NAME`)
    NoEventName,
    /// `Event name is too long` (`TP_ERR_EVENT_TOO_LONG`)
    EventTooLong,
    /// `Event name must follow the same rules as C identifiers` (`TP_ERR_BAD_EVENT_NAME`)
    BadEventName,
    /// `Given group/event name is already used by another event` (`TP_ERR_EVENT_EXIST`)
    EventExist,
    /// `$retval is not available on probe` (`TP_ERR_RETVAL_ON_PROBE`)
    RetvalOnProbe,
    /// `This function returns 'void' type` (`TP_ERR_NO_RETVAL`)
    NoRetval,
    /// `Invalid stack number` (`TP_ERR_BAD_STACK_NUM`)
    BadStackNum,
    /// `Invalid argument number` (`TP_ERR_BAD_ARG_NUM`)
    BadArgNum,
    /// `Invalid $-variable specified` (`TP_ERR_BAD_VAR`)
    BadVar,
    /// `Invalid register name` (`TP_ERR_BAD_REG_NAME`)
    BadRegName,
    /// `Invalid memory address` (`TP_ERR_BAD_MEM_ADDR`)
    BadMemAddr,
    /// `Invalid immediate value` (`TP_ERR_BAD_IMM`)
    BadImm,
    /// `String is not closed with '"'` (`TP_ERR_IMMSTR_NO_CLOSE`)
    ImmstrNoClose,
    /// `File offset is not available with kprobe` (`TP_ERR_FILE_ON_KPROBE`)
    FileOnKprobe,
    /// `Invalid file offset value` (`TP_ERR_BAD_FILE_OFFS`)
    BadFileOffs,
    /// `Symbol is not available with uprobe` (`TP_ERR_SYM_ON_UPROBE`)
    SymOnUprobe,
    /// `Dereference is too much nested` (`TP_ERR_TOO_MANY_OPS`)
    TooManyOps,
    /// `Dereference needs a brace` (`TP_ERR_DEREF_NEED_BRACE`)
    DerefNeedBrace,
    /// `Invalid dereference offset` (`TP_ERR_BAD_DEREF_OFFS`)
    BadDerefOffs,
    /// `Dereference brace is not closed` (`TP_ERR_DEREF_OPEN_BRACE`)
    DerefOpenBrace,
    /// `$comm can not be dereferenced` (`TP_ERR_COMM_CANT_DEREF`)
    CommCantDeref,
    /// `Invalid fetch argument` (`TP_ERR_BAD_FETCH_ARG`)
    BadFetchArg,
    /// `Array is not closed` (`TP_ERR_ARRAY_NO_CLOSE`)
    ArrayNoClose,
    /// `Array has wrong suffix` (`TP_ERR_BAD_ARRAY_SUFFIX`)
    BadArraySuffix,
    /// `Invalid array size` (`TP_ERR_BAD_ARRAY_NUM`)
    BadArrayNum,
    /// `Array number is too big` (`TP_ERR_ARRAY_TOO_BIG`)
    ArrayTooBig,
    /// `Unknown type is specified` (`TP_ERR_BAD_TYPE`)
    BadType,
    /// `String accepts only memory argument` (`TP_ERR_BAD_STRING`)
    BadString,
    /// `Symbol String doesn't accept data/userdata` (`TP_ERR_BAD_SYMSTRING`)
    BadSymstring,
    /// `Invalid bitfield` (`TP_ERR_BAD_BITFIELD`)
    BadBitfield,
    /// `Argument name is too long` (`TP_ERR_ARG_NAME_TOO_LONG`)
    ArgNameTooLong,
    /// `Argument name is not specified` (`TP_ERR_NO_ARG_NAME`)
    NoArgName,
    /// `Argument name must follow the same rules as C identifiers` (`TP_ERR_BAD_ARG_NAME`)
    BadArgName,
    /// `This argument name is already used` (`TP_ERR_USED_ARG_NAME`)
    UsedArgName,
    /// `Argument expression is too long` (`TP_ERR_ARG_TOO_LONG`)
    ArgTooLong,
    /// `No argument expression` (`TP_ERR_NO_ARG_BODY`)
    NoArgBody,
    /// `Probe point is not an instruction boundary` (`TP_ERR_BAD_INSN_BNDRY`)
    BadInsnBndry,
    /// `Failed to register probe event` (`TP_ERR_FAIL_REG_PROBE`)
    FailRegProbe,
    /// `Probe type is different from existing probe` (`TP_ERR_DIFF_PROBE_TYPE`)
    DiffProbeType,
    /// `Argument type or name is different from existing probe` (`TP_ERR_DIFF_ARG_TYPE`)
    DiffArgType,
    /// `There is already the exact same probe event` (`TP_ERR_SAME_PROBE`)
    SameProbe,
    /// `This requires both group and event name to attach` (`TP_ERR_NO_EVENT_INFO`)
    NoEventInfo,
    /// `Attached event does not exist` (`TP_ERR_BAD_ATTACH_EVENT`)
    BadAttachEvent,
    /// `Attached event does not have this field` (`TP_ERR_BAD_ATTACH_ARG`)
    BadAttachArg,
    /// `No filter rule after 'if'` (`TP_ERR_NO_EP_FILTER`)
    NoEpFilter,
    /// `BTF is not available or not supported` (`TP_ERR_NOSUP_BTFARG`)
    NosupBtfarg,
    /// `This variable is not found at this probe point` (`TP_ERR_NO_BTFARG`)
    NoBtfarg,
    /// `No BTF entry for this probe point` (`TP_ERR_NO_BTF_ENTRY`)
    NoBtfEntry,
    /// `$arg* must be an independent parameter without name etc.` (`TP_ERR_BAD_VAR_ARGS`)
    BadVarArgs,
    /// `$arg* can be used only on function entry or exit` (`TP_ERR_NOFENTRY_ARGS`)
    NofentryArgs,
    /// `$arg* can be used only once in the parameters` (`TP_ERR_DOUBLE_ARGS`)
    DoubleArgs,
    /// `$arg* failed because the argument list is too long` (`TP_ERR_ARGS_2LONG`)
    Args2long,
    /// `$argN index is too big` (`TP_ERR_ARGIDX_2BIG`)
    Argidx2big,
    /// `This is not a pointer to union/structure.` (`TP_ERR_NO_PTR_STRCT`)
    NoPtrStrct,
    /// `Non pointer structure/union argument is not supported.` (`TP_ERR_NOSUP_DAT_ARG`)
    NosupDatArg,
    /// `Failed to parse single hyphen. Forgot '>'?` (`TP_ERR_BAD_HYPHEN`)
    BadHyphen,
    /// `This field is not found.` (`TP_ERR_NO_BTF_FIELD`)
    NoBtfField,
    /// `Failed to get BTF type info.` (`TP_ERR_BAD_BTF_TID`)
    BadBtfTid,
    /// `This type does not fit for string.` (`TP_ERR_BAD_TYPE4STR`)
    BadType4str,
    /// `$comm and immediate-string only accepts string type` (`TP_ERR_NEED_STRING_TYPE`)
    NeedStringType,
    /// `Too many arguments are specified` (`TP_ERR_TOO_MANY_ARGS`)
    TooManyArgs,
    /// `Too many entry arguments specified` (`TP_ERR_TOO_MANY_EARGS`)
    TooManyEargs,
    /// `Event too big (too many fields?)` (`TP_ERR_EVENT_TOO_BIG`)
    EventTooBig,
    /// `Typecasts are only for eprobe fields` (`TP_ERR_TYPECAST_NOT_EVENT`)
    TypecastNotEvent,
    /// `Per-cpu variable access is only for kernel probes`
    /// (`TP_ERR_NOSUP_PERCPU`, 7.3)
    NosupPercpu,
    /// `This event field is not found.` (`TP_ERR_NO_EVENT_FIELD`, 7.3)
    NoEventField,
    /// `Too many nested typecasts/dereferences` (`TP_ERR_TOO_MANY_NESTED`,
    /// 7.3)
    TooManyNested,
    /// `Typecast field option does not support -> operator`
    /// (`TP_ERR_TYPECAST_BAD_ARROW`, 7.3)
    TypecastBadArrow,
    /// `Typecast field option is not byte-aligned`
    /// (`TP_ERR_TYPECAST_NOT_ALIGNED`, 7.3)
    TypecastNotAligned,
    /// `Typecast requires a field access` (`TP_ERR_TYPECAST_REQ_FIELD`, 7.3)
    TypecastReqField,
    /// `@SYM+/-OFFSET with typecast needs parentheses`
    /// (`TP_ERR_TYPECAST_SYM_OFFSET`, 7.3)
    TypecastSymOffset,
    /// `Expected '(' after the function name` (dynprobe)
    FeNoOpenParen,
    /// `Expected ')' at the end of the argument list` (dynprobe)
    FeNoCloseParen,
    /// `Unexpected text after the argument list` (dynprobe)
    FeTrailing,
    /// `Invalid function name` (dynprobe)
    FeBadFunc,
    /// `Argument name or address is not specified` (dynprobe)
    FeNoField,
    /// `Invalid index or offset` (dynprobe)
    FeBadIndex,
    /// `'unsigned' applies only to char, short, int and long` (dynprobe)
    FeBadUnsigned,
    /// `Name of another parameter: arguments are positional (NULL skips one)`
    /// (dynprobe)
    FeParamElsewhere,
    /// `No matching dynamic event type` (dynprobe)
    NoMatchingType,
    /// `Illegal name` (`SYNTH_ERR_BAD_NAME`)
    SynthBadName,
    /// `Command must be of the form: <name> field[;field] ...`
    /// (`SYNTH_ERR_INVALID_CMD`)
    SynthInvalidCmd,
    /// `Command must be of the form: s or -:[synthetic/]<name> field[;field] ...`
    /// (`SYNTH_ERR_INVALID_DYN_CMD`)
    SynthInvalidDynCmd,
    /// `Event already exists` (`SYNTH_ERR_EVENT_EXISTS`)
    SynthEventExists,
    /// `Too many fields` (`SYNTH_ERR_TOO_MANY_FIELDS`)
    SynthTooManyFields,
    /// `Incomplete type` (`SYNTH_ERR_INCOMPLETE_TYPE`)
    SynthIncompleteType,
    /// `Invalid type` (`SYNTH_ERR_INVALID_TYPE`)
    SynthInvalidType,
    /// `Invalid field` (`SYNTH_ERR_INVALID_FIELD`)
    SynthInvalidField,
    /// `Invalid array specification` (`SYNTH_ERR_INVALID_ARRAY_SPEC`)
    SynthInvalidArraySpec,
    /// `Filters of event probes are not supported` (dynprobe's own: an
    /// event probe's `if FILTER`)
    EpFilterUnsupported,
}

impl ErrorCode {
    /// Every code, in declaration order: `ALL[code as usize] == code`.
    pub const ALL: [ErrorCode; 108] = [
        ErrorCode::FileNotFound,
        ErrorCode::NoRegularFile,
        ErrorCode::BadRefcnt,
        ErrorCode::RefcntOpenBrace,
        ErrorCode::BadRefcntSuffix,
        ErrorCode::BadUprobeOffs,
        ErrorCode::BadMaxactType,
        ErrorCode::BadMaxact,
        ErrorCode::MaxactTooBig,
        ErrorCode::BadProbeAddr,
        ErrorCode::NonUniqSymbol,
        ErrorCode::BadRetprobe,
        ErrorCode::NoTracepoint,
        ErrorCode::BadTpName,
        ErrorCode::BadAddrSuffix,
        ErrorCode::NoGroupName,
        ErrorCode::GroupTooLong,
        ErrorCode::BadGroupName,
        ErrorCode::NoEventName,
        ErrorCode::EventTooLong,
        ErrorCode::BadEventName,
        ErrorCode::EventExist,
        ErrorCode::RetvalOnProbe,
        ErrorCode::NoRetval,
        ErrorCode::BadStackNum,
        ErrorCode::BadArgNum,
        ErrorCode::BadVar,
        ErrorCode::BadRegName,
        ErrorCode::BadMemAddr,
        ErrorCode::BadImm,
        ErrorCode::ImmstrNoClose,
        ErrorCode::FileOnKprobe,
        ErrorCode::BadFileOffs,
        ErrorCode::SymOnUprobe,
        ErrorCode::TooManyOps,
        ErrorCode::DerefNeedBrace,
        ErrorCode::BadDerefOffs,
        ErrorCode::DerefOpenBrace,
        ErrorCode::CommCantDeref,
        ErrorCode::BadFetchArg,
        ErrorCode::ArrayNoClose,
        ErrorCode::BadArraySuffix,
        ErrorCode::BadArrayNum,
        ErrorCode::ArrayTooBig,
        ErrorCode::BadType,
        ErrorCode::BadString,
        ErrorCode::BadSymstring,
        ErrorCode::BadBitfield,
        ErrorCode::ArgNameTooLong,
        ErrorCode::NoArgName,
        ErrorCode::BadArgName,
        ErrorCode::UsedArgName,
        ErrorCode::ArgTooLong,
        ErrorCode::NoArgBody,
        ErrorCode::BadInsnBndry,
        ErrorCode::FailRegProbe,
        ErrorCode::DiffProbeType,
        ErrorCode::DiffArgType,
        ErrorCode::SameProbe,
        ErrorCode::NoEventInfo,
        ErrorCode::BadAttachEvent,
        ErrorCode::BadAttachArg,
        ErrorCode::NoEpFilter,
        ErrorCode::NosupBtfarg,
        ErrorCode::NoBtfarg,
        ErrorCode::NoBtfEntry,
        ErrorCode::BadVarArgs,
        ErrorCode::NofentryArgs,
        ErrorCode::DoubleArgs,
        ErrorCode::Args2long,
        ErrorCode::Argidx2big,
        ErrorCode::NoPtrStrct,
        ErrorCode::NosupDatArg,
        ErrorCode::BadHyphen,
        ErrorCode::NoBtfField,
        ErrorCode::BadBtfTid,
        ErrorCode::BadType4str,
        ErrorCode::NeedStringType,
        ErrorCode::TooManyArgs,
        ErrorCode::TooManyEargs,
        ErrorCode::EventTooBig,
        ErrorCode::TypecastNotEvent,
        ErrorCode::NosupPercpu,
        ErrorCode::NoEventField,
        ErrorCode::TooManyNested,
        ErrorCode::TypecastBadArrow,
        ErrorCode::TypecastNotAligned,
        ErrorCode::TypecastReqField,
        ErrorCode::TypecastSymOffset,
        ErrorCode::FeNoOpenParen,
        ErrorCode::FeNoCloseParen,
        ErrorCode::FeTrailing,
        ErrorCode::FeBadFunc,
        ErrorCode::FeNoField,
        ErrorCode::FeBadIndex,
        ErrorCode::FeBadUnsigned,
        ErrorCode::FeParamElsewhere,
        ErrorCode::NoMatchingType,
        ErrorCode::SynthBadName,
        ErrorCode::SynthInvalidCmd,
        ErrorCode::SynthInvalidDynCmd,
        ErrorCode::SynthEventExists,
        ErrorCode::SynthTooManyFields,
        ErrorCode::SynthIncompleteType,
        ErrorCode::SynthInvalidType,
        ErrorCode::SynthInvalidField,
        ErrorCode::SynthInvalidArraySpec,
        ErrorCode::EpFilterUnsupported,
    ];

    /// The code whose value (`code as u8`) is `value`, if any: how a code
    /// passed as a number is taken back.
    pub fn from_value(value: u8) -> Option<ErrorCode> {
        ErrorCode::ALL.get(usize::from(value)).copied()
    }

    /// dynprobe's text for the code: what `error_log` shows for a code the
    /// running kernel's table lacks, and what a [`ParseError`] displays. For
    /// a kernel code it is the kernel's text (7.2's where 7.3 changed it; a
    /// kernel's own text is [`crate::lang::KernelFacts::message`]).
    pub fn message(self) -> &'static str {
        match self {
            ErrorCode::FileNotFound => "Failed to find the given file",
            ErrorCode::NoRegularFile => "Not a regular file",
            ErrorCode::BadRefcnt => "Invalid reference counter offset",
            ErrorCode::RefcntOpenBrace => "Reference counter brace is not closed",
            ErrorCode::BadRefcntSuffix => "Reference counter has wrong suffix",
            ErrorCode::BadUprobeOffs => "Invalid uprobe offset",
            ErrorCode::BadMaxactType => "Maxactive is only for function exit",
            ErrorCode::BadMaxact => "Invalid maxactive number",
            ErrorCode::MaxactTooBig => "Maxactive is too big",
            ErrorCode::BadProbeAddr => "Invalid probed address or symbol",
            ErrorCode::NonUniqSymbol => "The symbol is not unique",
            ErrorCode::BadRetprobe => "Retprobe address must be an function entry",
            ErrorCode::NoTracepoint => "Tracepoint is not found",
            ErrorCode::BadTpName => "Invalid character in tracepoint name",
            ErrorCode::BadAddrSuffix => "Invalid probed address suffix",
            ErrorCode::NoGroupName => "Group name is not specified",
            ErrorCode::GroupTooLong => "Group name is too long",
            ErrorCode::BadGroupName => "Group name must follow the same rules as C identifiers",
            ErrorCode::NoEventName => "Event name is not specified",
            ErrorCode::EventTooLong => "Event name is too long",
            ErrorCode::BadEventName => "Event name must follow the same rules as C identifiers",
            ErrorCode::EventExist => "Given group/event name is already used by another event",
            ErrorCode::RetvalOnProbe => "$retval is not available on probe",
            ErrorCode::NoRetval => "This function returns 'void' type",
            ErrorCode::BadStackNum => "Invalid stack number",
            ErrorCode::BadArgNum => "Invalid argument number",
            ErrorCode::BadVar => "Invalid $-variable specified",
            ErrorCode::BadRegName => "Invalid register name",
            ErrorCode::BadMemAddr => "Invalid memory address",
            ErrorCode::BadImm => "Invalid immediate value",
            ErrorCode::ImmstrNoClose => "String is not closed with '\"'",
            ErrorCode::FileOnKprobe => "File offset is not available with kprobe",
            ErrorCode::BadFileOffs => "Invalid file offset value",
            ErrorCode::SymOnUprobe => "Symbol is not available with uprobe",
            ErrorCode::TooManyOps => "Dereference is too much nested",
            ErrorCode::DerefNeedBrace => "Dereference needs a brace",
            ErrorCode::BadDerefOffs => "Invalid dereference offset",
            ErrorCode::DerefOpenBrace => "Dereference brace is not closed",
            ErrorCode::CommCantDeref => "$comm can not be dereferenced",
            ErrorCode::BadFetchArg => "Invalid fetch argument",
            ErrorCode::ArrayNoClose => "Array is not closed",
            ErrorCode::BadArraySuffix => "Array has wrong suffix",
            ErrorCode::BadArrayNum => "Invalid array size",
            ErrorCode::ArrayTooBig => "Array number is too big",
            ErrorCode::BadType => "Unknown type is specified",
            ErrorCode::BadString => "String accepts only memory argument",
            ErrorCode::BadSymstring => "Symbol String doesn't accept data/userdata",
            ErrorCode::BadBitfield => "Invalid bitfield",
            ErrorCode::ArgNameTooLong => "Argument name is too long",
            ErrorCode::NoArgName => "Argument name is not specified",
            ErrorCode::BadArgName => "Argument name must follow the same rules as C identifiers",
            ErrorCode::UsedArgName => "This argument name is already used",
            ErrorCode::ArgTooLong => "Argument expression is too long",
            ErrorCode::NoArgBody => "No argument expression",
            ErrorCode::BadInsnBndry => "Probe point is not an instruction boundary",
            ErrorCode::FailRegProbe => "Failed to register probe event",
            ErrorCode::DiffProbeType => "Probe type is different from existing probe",
            ErrorCode::DiffArgType => "Argument type or name is different from existing probe",
            ErrorCode::SameProbe => "There is already the exact same probe event",
            ErrorCode::NoEventInfo => "This requires both group and event name to attach",
            ErrorCode::BadAttachEvent => "Attached event does not exist",
            ErrorCode::BadAttachArg => "Attached event does not have this field",
            ErrorCode::NoEpFilter => "No filter rule after 'if'",
            ErrorCode::NosupBtfarg => "BTF is not available or not supported",
            ErrorCode::NoBtfarg => "This variable is not found at this probe point",
            ErrorCode::NoBtfEntry => "No BTF entry for this probe point",
            ErrorCode::BadVarArgs => "$arg* must be an independent parameter without name etc.",
            ErrorCode::NofentryArgs => "$arg* can be used only on function entry or exit",
            ErrorCode::DoubleArgs => "$arg* can be used only once in the parameters",
            ErrorCode::Args2long => "$arg* failed because the argument list is too long",
            ErrorCode::Argidx2big => "$argN index is too big",
            ErrorCode::NoPtrStrct => "This is not a pointer to union/structure.",
            ErrorCode::NosupDatArg => "Non pointer structure/union argument is not supported.",
            ErrorCode::BadHyphen => "Failed to parse single hyphen. Forgot '>'?",
            ErrorCode::NoBtfField => "This field is not found.",
            ErrorCode::BadBtfTid => "Failed to get BTF type info.",
            ErrorCode::BadType4str => "This type does not fit for string.",
            ErrorCode::NeedStringType => "$comm and immediate-string only accepts string type",
            ErrorCode::TooManyArgs => "Too many arguments are specified",
            ErrorCode::TooManyEargs => "Too many entry arguments specified",
            ErrorCode::EventTooBig => "Event too big (too many fields?)",
            ErrorCode::TypecastNotEvent => "Typecasts are only for eprobe fields",
            ErrorCode::NosupPercpu => "Per-cpu variable access is only for kernel probes",
            ErrorCode::NoEventField => "This event field is not found.",
            ErrorCode::TooManyNested => "Too many nested typecasts/dereferences",
            ErrorCode::TypecastBadArrow => "Typecast field option does not support -> operator",
            ErrorCode::TypecastNotAligned => "Typecast field option is not byte-aligned",
            ErrorCode::TypecastReqField => "Typecast requires a field access",
            ErrorCode::TypecastSymOffset => "@SYM+/-OFFSET with typecast needs parentheses",
            ErrorCode::FeNoOpenParen => "Expected '(' after the function name",
            ErrorCode::FeNoCloseParen => "Expected ')' at the end of the argument list",
            ErrorCode::FeTrailing => "Unexpected text after the argument list",
            ErrorCode::FeBadFunc => "Invalid function name",
            ErrorCode::FeNoField => "Argument name or address is not specified",
            ErrorCode::FeBadIndex => "Invalid index or offset",
            ErrorCode::FeBadUnsigned => "'unsigned' applies only to char, short, int and long",
            ErrorCode::FeParamElsewhere => {
                "Name of another parameter: arguments are positional (NULL skips one)"
            }
            ErrorCode::NoMatchingType => "No matching dynamic event type",
            ErrorCode::SynthBadName => "Illegal name",
            ErrorCode::SynthInvalidCmd => "Command must be of the form: <name> field[;field] ...",
            ErrorCode::SynthInvalidDynCmd => {
                "Command must be of the form: s or -:[synthetic/]<name> field[;field] ..."
            }
            ErrorCode::SynthEventExists => "Event already exists",
            ErrorCode::SynthTooManyFields => "Too many fields",
            ErrorCode::SynthIncompleteType => "Incomplete type",
            ErrorCode::SynthInvalidType => "Invalid type",
            ErrorCode::SynthInvalidField => "Invalid field",
            ErrorCode::SynthInvalidArraySpec => "Invalid array specification",
            ErrorCode::EpFilterUnsupported => "Filters of event probes are not supported",
        }
    }

    /// The kernel's name for the code (`BAD_TYPE` for `TP_ERR_BAD_TYPE`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::NoRegularFile => "NO_REGULAR_FILE",
            ErrorCode::BadRefcnt => "BAD_REFCNT",
            ErrorCode::RefcntOpenBrace => "REFCNT_OPEN_BRACE",
            ErrorCode::BadRefcntSuffix => "BAD_REFCNT_SUFFIX",
            ErrorCode::BadUprobeOffs => "BAD_UPROBE_OFFS",
            ErrorCode::BadMaxactType => "BAD_MAXACT_TYPE",
            ErrorCode::BadMaxact => "BAD_MAXACT",
            ErrorCode::MaxactTooBig => "MAXACT_TOO_BIG",
            ErrorCode::BadProbeAddr => "BAD_PROBE_ADDR",
            ErrorCode::NonUniqSymbol => "NON_UNIQ_SYMBOL",
            ErrorCode::BadRetprobe => "BAD_RETPROBE",
            ErrorCode::NoTracepoint => "NO_TRACEPOINT",
            ErrorCode::BadTpName => "BAD_TP_NAME",
            ErrorCode::BadAddrSuffix => "BAD_ADDR_SUFFIX",
            ErrorCode::NoGroupName => "NO_GROUP_NAME",
            ErrorCode::GroupTooLong => "GROUP_TOO_LONG",
            ErrorCode::BadGroupName => "BAD_GROUP_NAME",
            ErrorCode::NoEventName => "NO_EVENT_NAME",
            ErrorCode::EventTooLong => "EVENT_TOO_LONG",
            ErrorCode::BadEventName => "BAD_EVENT_NAME",
            ErrorCode::EventExist => "EVENT_EXIST",
            ErrorCode::RetvalOnProbe => "RETVAL_ON_PROBE",
            ErrorCode::NoRetval => "NO_RETVAL",
            ErrorCode::BadStackNum => "BAD_STACK_NUM",
            ErrorCode::BadArgNum => "BAD_ARG_NUM",
            ErrorCode::BadVar => "BAD_VAR",
            ErrorCode::BadRegName => "BAD_REG_NAME",
            ErrorCode::BadMemAddr => "BAD_MEM_ADDR",
            ErrorCode::BadImm => "BAD_IMM",
            ErrorCode::ImmstrNoClose => "IMMSTR_NO_CLOSE",
            ErrorCode::FileOnKprobe => "FILE_ON_KPROBE",
            ErrorCode::BadFileOffs => "BAD_FILE_OFFS",
            ErrorCode::SymOnUprobe => "SYM_ON_UPROBE",
            ErrorCode::TooManyOps => "TOO_MANY_OPS",
            ErrorCode::DerefNeedBrace => "DEREF_NEED_BRACE",
            ErrorCode::BadDerefOffs => "BAD_DEREF_OFFS",
            ErrorCode::DerefOpenBrace => "DEREF_OPEN_BRACE",
            ErrorCode::CommCantDeref => "COMM_CANT_DEREF",
            ErrorCode::BadFetchArg => "BAD_FETCH_ARG",
            ErrorCode::ArrayNoClose => "ARRAY_NO_CLOSE",
            ErrorCode::BadArraySuffix => "BAD_ARRAY_SUFFIX",
            ErrorCode::BadArrayNum => "BAD_ARRAY_NUM",
            ErrorCode::ArrayTooBig => "ARRAY_TOO_BIG",
            ErrorCode::BadType => "BAD_TYPE",
            ErrorCode::BadString => "BAD_STRING",
            ErrorCode::BadSymstring => "BAD_SYMSTRING",
            ErrorCode::BadBitfield => "BAD_BITFIELD",
            ErrorCode::ArgNameTooLong => "ARG_NAME_TOO_LONG",
            ErrorCode::NoArgName => "NO_ARG_NAME",
            ErrorCode::BadArgName => "BAD_ARG_NAME",
            ErrorCode::UsedArgName => "USED_ARG_NAME",
            ErrorCode::ArgTooLong => "ARG_TOO_LONG",
            ErrorCode::NoArgBody => "NO_ARG_BODY",
            ErrorCode::BadInsnBndry => "BAD_INSN_BNDRY",
            ErrorCode::FailRegProbe => "FAIL_REG_PROBE",
            ErrorCode::DiffProbeType => "DIFF_PROBE_TYPE",
            ErrorCode::DiffArgType => "DIFF_ARG_TYPE",
            ErrorCode::SameProbe => "SAME_PROBE",
            ErrorCode::NoEventInfo => "NO_EVENT_INFO",
            ErrorCode::BadAttachEvent => "BAD_ATTACH_EVENT",
            ErrorCode::BadAttachArg => "BAD_ATTACH_ARG",
            ErrorCode::NoEpFilter => "NO_EP_FILTER",
            ErrorCode::NosupBtfarg => "NOSUP_BTFARG",
            ErrorCode::NoBtfarg => "NO_BTFARG",
            ErrorCode::NoBtfEntry => "NO_BTF_ENTRY",
            ErrorCode::BadVarArgs => "BAD_VAR_ARGS",
            ErrorCode::NofentryArgs => "NOFENTRY_ARGS",
            ErrorCode::DoubleArgs => "DOUBLE_ARGS",
            ErrorCode::Args2long => "ARGS_2LONG",
            ErrorCode::Argidx2big => "ARGIDX_2BIG",
            ErrorCode::NoPtrStrct => "NO_PTR_STRCT",
            ErrorCode::NosupDatArg => "NOSUP_DAT_ARG",
            ErrorCode::BadHyphen => "BAD_HYPHEN",
            ErrorCode::NoBtfField => "NO_BTF_FIELD",
            ErrorCode::BadBtfTid => "BAD_BTF_TID",
            ErrorCode::BadType4str => "BAD_TYPE4STR",
            ErrorCode::NeedStringType => "NEED_STRING_TYPE",
            ErrorCode::TooManyArgs => "TOO_MANY_ARGS",
            ErrorCode::TooManyEargs => "TOO_MANY_EARGS",
            ErrorCode::EventTooBig => "EVENT_TOO_BIG",
            ErrorCode::TypecastNotEvent => "TYPECAST_NOT_EVENT",
            ErrorCode::NosupPercpu => "NOSUP_PERCPU",
            ErrorCode::NoEventField => "NO_EVENT_FIELD",
            ErrorCode::TooManyNested => "TOO_MANY_NESTED",
            ErrorCode::TypecastBadArrow => "TYPECAST_BAD_ARROW",
            ErrorCode::TypecastNotAligned => "TYPECAST_NOT_ALIGNED",
            ErrorCode::TypecastReqField => "TYPECAST_REQ_FIELD",
            ErrorCode::TypecastSymOffset => "TYPECAST_SYM_OFFSET",
            ErrorCode::FeNoOpenParen => "FE_NO_OPEN_PAREN",
            ErrorCode::FeNoCloseParen => "FE_NO_CLOSE_PAREN",
            ErrorCode::FeTrailing => "FE_TRAILING",
            ErrorCode::FeBadFunc => "FE_BAD_FUNC",
            ErrorCode::FeNoField => "FE_NO_FIELD",
            ErrorCode::FeBadIndex => "FE_BAD_INDEX",
            ErrorCode::FeBadUnsigned => "FE_BAD_UNSIGNED",
            ErrorCode::FeParamElsewhere => "FE_PARAM_ELSEWHERE",
            ErrorCode::NoMatchingType => "NO_MATCHING_TYPE",
            ErrorCode::SynthBadName => "BAD_NAME",
            ErrorCode::SynthInvalidCmd => "INVALID_CMD",
            ErrorCode::SynthInvalidDynCmd => "INVALID_DYN_CMD",
            ErrorCode::SynthEventExists => "EVENT_EXISTS",
            ErrorCode::SynthTooManyFields => "TOO_MANY_FIELDS",
            ErrorCode::SynthIncompleteType => "INCOMPLETE_TYPE",
            ErrorCode::SynthInvalidType => "INVALID_TYPE",
            ErrorCode::SynthInvalidField => "INVALID_FIELD",
            ErrorCode::SynthInvalidArraySpec => "INVALID_ARRAY_SPEC",
            ErrorCode::EpFilterUnsupported => "EP_FILTER_UNSUPPORTED",
        }
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
    /// Argument list too long.
    pub const E2BIG: i32 = 7;
    /// Out of memory.
    pub const ENOMEM: i32 = 12;
    /// File exists.
    pub const EEXIST: i32 = 17;
    /// No such device (an event probe's source event does not exist).
    pub const ENODEV: i32 = 19;
    /// Invalid argument.
    pub const EINVAL: i32 = 22;
    /// Result out of range (a number that overflows).
    pub const ERANGE: i32 = 34;
    /// Operation not supported.
    pub const EOPNOTSUPP: i32 = 95;
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
