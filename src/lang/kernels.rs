// SPDX-License-Identifier: GPL-2.0
//! What the language depends on per kernel series: one [`KernelFacts`] per
//! series dynprobe supports.
//!
//! A kernel's probe error table (`trace_probe_err_text`, the `ERRORS` list
//! of `kernel/trace/trace_probe.h`) fixes which codes `error_log` can show
//! through the kernel's own table, at which index and with which text; its
//! limits fix which lines the kernel accepts. Both change between series
//! (7.3 sorted its table, added codes, changed a text and raised the
//! longest argument expression), so they are kept here, side by side, and
//! nowhere else. The module picks the facts of the series it is built for
//! (`compat::KERNEL`); the parser reads them through
//! [`crate::lang::Resolver::kernel`]; the host tests compare each series'
//! facts with that kernel's source.
//!
//! Limits that no supported series changed (`MAX_TRACE_ARGS`,
//! `MAX_ARG_NAME_LEN`, ...) stay constants in `lang/mod.rs`.

use crate::lang::error::ErrorCode;
use crate::lang::error::ErrorCode::*;

/// One kernel series' error table and limits.
#[derive(Debug)]
pub struct KernelFacts {
    series: &'static str,
    major: u32,
    minor: u32,
    /// The codes of the kernel's table, in its index order.
    errors: &'static [ErrorCode],
    /// The entries whose text on this kernel is not
    /// [`ErrorCode::message`].
    texts: &'static [(ErrorCode, &'static str)],
    /// `MAX_ARGSTR_LEN`.
    max_argstr_len: usize,
    /// `TRACEPROBE_MAX_NESTED_LEVEL`, for kernels that have it.
    max_nested_level: Option<u32>,
    /// Whether a `$stackN`/`$argN` number `kstrtoul()` refuses fails the
    /// write with `kstrtoul()`'s errno (`ERANGE` for one that overflows),
    /// as 7.3's `parse_probe_var_stack()`/`_arg()` do, or with `EINVAL`
    /// (7.2).
    var_number_errno: bool,
    /// Whether an event probe names a field of its source event without
    /// `$` (7.3's `parse_probe_arg_default()`: `NO_EVENT_FIELD` for a
    /// name that is none), or refuses a bare name (7.2). Kept per series,
    /// unlike 7.3's other additions, which dynprobe accepts everywhere:
    /// 7.2's own tests check that `arg=dfd` is refused.
    eprobe_bare_fields: bool,
    /// Whether the kernel has the per-CPU forms (`this_cpu_ptr()`,
    /// `this_cpu_read()`), which uprobes refuse with `NOSUP_PERCPU` (7.3);
    /// 7.2 has none and takes `this_cpu_ptr(...)` on a uprobe for a BTF
    /// name, which uprobes refuse with `NOSUP_BTFARG`.
    percpu_forms: bool,
}

/// Linux 7.2: the table in the order the codes were added upstream.
pub static LINUX_7_2: KernelFacts = KernelFacts {
    series: "7.2",
    major: 7,
    minor: 2,
    // The codes were added to ErrorCode in 7.2's order, before 7.3's
    // and dynprobe's own (the test against 7.2's trace_probe.h checks).
    errors: ErrorCode::ALL.split_at(82).0,
    texts: &[],
    max_argstr_len: 63,
    max_nested_level: None,
    var_number_errno: false,
    eprobe_bare_fields: false,
    percpu_forms: false,
};

/// Linux 7.3: the table sorted by name, seven new codes, one new text, a
/// longer argument expression and a cap on typecast/dereference nesting.
pub static LINUX_7_3: KernelFacts = KernelFacts {
    series: "7.3",
    major: 7,
    minor: 3,
    errors: &[
        Argidx2big,
        Args2long,
        ArgNameTooLong,
        ArgTooLong,
        ArrayNoClose,
        ArrayTooBig,
        BadAddrSuffix,
        BadArgName,
        BadArgNum,
        BadArrayNum,
        BadArraySuffix,
        BadAttachArg,
        BadAttachEvent,
        BadBitfield,
        BadBtfTid,
        BadDerefOffs,
        BadEventName,
        BadFetchArg,
        BadFileOffs,
        BadGroupName,
        BadHyphen,
        BadImm,
        BadInsnBndry,
        BadMaxact,
        BadMaxactType,
        BadMemAddr,
        BadProbeAddr,
        BadRefcnt,
        BadRefcntSuffix,
        BadRegName,
        BadRetprobe,
        BadStackNum,
        BadString,
        BadSymstring,
        BadTpName,
        BadType,
        BadType4str,
        BadUprobeOffs,
        BadVar,
        BadVarArgs,
        CommCantDeref,
        DerefNeedBrace,
        DerefOpenBrace,
        DiffArgType,
        DiffProbeType,
        DoubleArgs,
        EventExist,
        EventTooBig,
        EventTooLong,
        FailRegProbe,
        FileNotFound,
        FileOnKprobe,
        GroupTooLong,
        ImmstrNoClose,
        MaxactTooBig,
        NeedStringType,
        NofentryArgs,
        NonUniqSymbol,
        NosupBtfarg,
        NosupDatArg,
        NosupPercpu,
        NoArgBody,
        NoArgName,
        NoBtfarg,
        NoBtfEntry,
        NoBtfField,
        NoEpFilter,
        NoEventField,
        NoEventInfo,
        NoEventName,
        NoGroupName,
        NoPtrStrct,
        NoRegularFile,
        NoRetval,
        NoTracepoint,
        RefcntOpenBrace,
        RetvalOnProbe,
        SameProbe,
        SymOnUprobe,
        TooManyArgs,
        TooManyEargs,
        TooManyNested,
        TooManyOps,
        TypecastBadArrow,
        TypecastNotAligned,
        TypecastNotEvent,
        TypecastReqField,
        TypecastSymOffset,
        UsedArgName,
    ],
    texts: &[(
        FileOnKprobe,
        "File offset is not available for kernel probes",
    )],
    max_argstr_len: 255,
    max_nested_level: Some(8),
    var_number_errno: true,
    eprobe_bare_fields: true,
    percpu_forms: true,
};

/// Every supported series, oldest first.
pub static SERIES: [&KernelFacts; 2] = [&LINUX_7_2, &LINUX_7_3];

/// The longest argument expression any supported kernel accepts: what
/// storage for an argument's text is sized for.
pub const MAX_ARGSTR_CAP: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < SERIES.len() {
        if SERIES[i].max_argstr_len > max {
            max = SERIES[i].max_argstr_len;
        }
        i += 1;
    }
    max
};

// Indices are u8 (tracing_log_err's `err_type`): every table must fit.
const _: () = {
    let mut i = 0;
    while i < SERIES.len() {
        assert!(SERIES[i].errors.len() <= u8::MAX as usize);
        i += 1;
    }
};

/// The facts of series `major.minor`, if dynprobe supports it.
pub fn for_version(major: u32, minor: u32) -> Option<&'static KernelFacts> {
    SERIES
        .iter()
        .copied()
        .find(|k| k.major == major && k.minor == minor)
}

/// The first difference between a kernel's running table and its facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch<'b> {
    /// The index in the kernel's table.
    pub index: u8,
    /// The code the facts have at that index.
    pub code: ErrorCode,
    /// The text the facts have for it.
    pub expected: &'static str,
    /// The running kernel's text there, if it has one that fit the buffer.
    pub kernel: Option<&'b [u8]>,
}

/// How `error_log` shows a code on a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogEntry {
    /// Through the kernel's own table, at this index.
    Kernel(u8),
    /// Through dynprobe's table of its own messages, with this text.
    Own(&'static str),
}

impl KernelFacts {
    /// The series, `"7.2"`.
    pub const fn series(&self) -> &'static str {
        self.series
    }

    /// The series' version as (major, minor).
    pub const fn version(&self) -> (u32, u32) {
        (self.major, self.minor)
    }

    /// The codes of the kernel's table, in its index order.
    pub const fn errors(&self) -> &'static [ErrorCode] {
        self.errors
    }

    /// Longest argument expression (`MAX_ARGSTR_LEN`).
    pub const fn max_argstr_len(&self) -> usize {
        self.max_argstr_len
    }

    /// Deepest typecast/dereference nesting (`TRACEPROBE_MAX_NESTED_LEVEL`),
    /// `None` where the kernel has no such cap.
    pub const fn max_nested_level(&self) -> Option<u32> {
        self.max_nested_level
    }

    /// Whether event probes take bare field names (see the field).
    pub const fn eprobe_bare_fields(&self) -> bool {
        self.eprobe_bare_fields
    }

    /// Whether the kernel has the per-CPU forms (see the field).
    pub const fn percpu_forms(&self) -> bool {
        self.percpu_forms
    }

    /// The errno of a write whose `$stackN`/`$argN` number `kstrtoul()`
    /// refused with `errno`.
    pub const fn var_number_errno(&self, errno: i32) -> i32 {
        if self.var_number_errno {
            errno
        } else {
            crate::lang::errno::EINVAL
        }
    }

    /// The index of `code` in this kernel's table (`TP_ERR_*`), `None` for
    /// a code the kernel lacks.
    pub fn index_of(&self, code: ErrorCode) -> Option<u8> {
        let at = self.errors.iter().position(|c| *c == code)?;
        u8::try_from(at).ok()
    }

    /// The code at `index` of this kernel's table, if any.
    pub fn code_at(&self, index: u8) -> Option<ErrorCode> {
        self.errors.get(usize::from(index)).copied()
    }

    /// The text `error_log` shows for `code` on this kernel: the kernel's
    /// own for its codes, dynprobe's ([`ErrorCode::message`]) for the others.
    pub fn message(&self, code: ErrorCode) -> &'static str {
        match self.texts.iter().find(|(c, _)| *c == code) {
            Some((_, text)) if self.index_of(code).is_some() => text,
            _ => code.message(),
        }
    }

    /// How `error_log` shows `code` on this kernel: by the kernel's index
    /// for a code its table has, else with dynprobe's text for it.
    pub fn log_entry(&self, code: ErrorCode) -> LogEntry {
        match self.index_of(code) {
            Some(index) => LogEntry::Kernel(index),
            None => LogEntry::Own(code.message()),
        }
    }

    /// Compares a running kernel's message table with these facts, entry
    /// by entry in index order. `kernel_text(index, buf)` copies the
    /// kernel's message at `index` into `buf` and returns its length, or
    /// `None` when the table has no such entry or it cannot be read.
    /// Returns the first entry whose text differs, with the kernel's text
    /// (in `buf`) if there is one. Entries past the facts' are not read:
    /// dynprobe never logs them.
    pub fn first_kernel_mismatch<'b>(
        &self,
        buf: &'b mut [u8],
        mut kernel_text: impl FnMut(u8, &mut [u8]) -> Option<usize>,
    ) -> Option<Mismatch<'b>> {
        let mut found = None;
        for (index, code) in (0u8..).zip(self.errors.iter().copied()) {
            let expected = self.message(code);
            let len = kernel_text(index, buf);
            let text = len.and_then(|n| buf.get(..n));
            if text != Some(expected.as_bytes()) {
                found = Some((index, code, expected, len));
                break;
            }
        }
        let (index, code, expected, len) = found?;
        Some(Mismatch {
            index,
            code,
            expected,
            kernel: len.and_then(|n| buf.get(..n)),
        })
    }
}
