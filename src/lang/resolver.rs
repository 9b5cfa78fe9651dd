// SPDX-License-Identifier: GPL-2.0
//! What the parser asks the kernel: symbols, probe points, BTF and the
//! trace events event probes attach to.
//!
//! Every method has a default so a resolver can answer only what it knows;
//! [`NoResolver`] answers nothing. With no answer the parser behaves as the
//! kernel does when the information is missing (for example BTF argument
//! names fail with `NO_BTF_ENTRY`, `@SYM` fails with `BAD_PROBE_ADDR`).

use crate::lang::elf::ElfError;
use crate::lang::kernels::{KernelFacts, LINUX_7_2};
use crate::lang::text::Str;
use crate::lang::types::EventField;

/// Result of counting the symbols a probe names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolCheck {
    /// Exactly one symbol (or the check is deferred, e.g. the module is not
    /// loaded yet).
    Ok,
    /// No such symbol.
    NotFound,
    /// Several symbols share the name.
    NotUnique,
}

/// The compiler's copies of a function whose own name has no symbol
/// ([`is_entry_copy_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copies {
    /// None.
    None,
    /// Exactly one: its name was written out.
    One,
    /// Several (e.g. `.isra.0` and `.constprop.0`): which one is meant is
    /// the user's to say.
    Several,
}

/// Whether `name` is one of the copies GCC makes of the function `base`
/// that keep its entry: `base` followed by one or more `.isra.N` and
/// `.constprop.N` (interprocedural scalar replacement, constant
/// propagation). `.part.N` (a part split out) and `.cold` (the unlikely
/// path) start inside the function, not at its entry, and are not.
pub fn is_entry_copy_of(name: &[u8], base: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(base) else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    let mut words = rest.split(|&c| c == b'.');
    // `rest` starts with the '.' after `base`.
    if words.next() != Some(&b""[..]) {
        return false;
    }
    loop {
        match words.next() {
            None => return true,
            Some(b"isra" | b"constprop") => {}
            Some(_) => return false,
        }
        match words.next() {
            Some(n) if !n.is_empty() && n.iter().all(u8::is_ascii_digit) => {}
            _ => return false,
        }
    }
}

/// Whether a kprobe address is a function entry (`kprobe_on_func_entry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncEntry {
    /// It is the entry of a function.
    Entry,
    /// It is inside a function.
    NotEntry,
    /// Unknown symbol (the kernel defers this to registration).
    Unknown,
}

/// A function prototype from BTF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtfFunc {
    /// Number of parameters.
    pub nr_params: u32,
    /// Type id of the return type (0: void).
    pub ret_type: u32,
}

/// A BTF type, after modifiers and typedefs are skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtfType {
    /// An integer.
    Int {
        /// Width in bits.
        bits: u8,
        /// Signed encoding.
        signed: bool,
        /// Bit offset encoded in the integer type.
        offset: u8,
    },
    /// An enum of at most 32 bits.
    Enum,
    /// A 64-bit enum.
    Enum64,
    /// A pointer to type `target`.
    Ptr {
        /// Pointed-to type id.
        target: u32,
    },
    /// A struct or union.
    Struct,
    /// An array of type `elem`.
    Array {
        /// Element type id.
        elem: u32,
    },
    /// Anything else.
    Other,
}

/// A struct/union member found by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtfMember {
    /// Offset in bits from the start of the containing type (anonymous
    /// members included).
    pub bit_offset: u32,
    /// Bitfield width (0: not a bitfield).
    pub bitfield_size: u32,
    /// Member type id.
    pub ty: u32,
}

/// Broken BTF type information (`BAD_BTF_TID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtfError;

/// Kernel services the parser needs.
pub trait Resolver {
    /// The series the parser answers as: its limits (such as the longest
    /// argument expression) and error table. The default is the oldest
    /// supported series, 7.2, which the host tests were written against;
    /// the module's resolver answers with the series it was built for.
    fn kernel(&self) -> &'static KernelFacts {
        &LINUX_7_2
    }

    /// Address of a kernel symbol (`kallsyms_lookup_name`), for `@SYM`.
    fn symbol_address(&self, _name: &str) -> Option<u64> {
        None
    }

    /// For a function name no symbol has: the copies the compiler made of
    /// it that keep its entry ([`is_entry_copy_of`]), in the kernel image
    /// or in `module`; the name of the one copy goes to `out`.
    fn entry_copies(
        &self,
        _module: Option<&str>,
        _symbol: &str,
        _out: &mut Str<{ crate::lang::SYMBOL_CAP }>,
    ) -> Copies {
        Copies::None
    }

    /// Validate a kprobe target symbol (`MOD:SYM` has `module`).
    fn check_probe_symbol(&self, _module: Option<&str>, _symbol: &str) -> SymbolCheck {
        SymbolCheck::Ok
    }

    /// Is `symbol + offset` a function entry? The default says yes exactly
    /// when the offset is 0.
    fn func_entry(&self, _module: Option<&str>, _symbol: &str, offset: u64) -> FuncEntry {
        if offset == 0 {
            FuncEntry::Entry
        } else {
            FuncEntry::NotEntry
        }
    }

    /// Can an fprobe (or a function event) attach to this function?
    /// `None`: unknown (accepted).
    fn function_exists(&self, _module: Option<&str>, _symbol: &str) -> Option<bool> {
        None
    }

    /// Does this tracepoint exist? `None`: unknown (accepted).
    fn tracepoint_exists(&self, _name: &str) -> Option<bool> {
        None
    }

    /// BTF prototype of a function.
    fn btf_func(&self, _func: &str) -> Option<BtfFunc> {
        None
    }

    /// Name and type id of parameter `idx` (0-based) of a function.
    fn btf_param(&self, _func: &str, _idx: u32) -> Option<(&str, u32)> {
        None
    }

    /// BTF prototype of the probe functions of tracepoint `name` (that of
    /// its `__probestub_<name>`, the kernel's source of parameter names),
    /// the hidden first parameter `void *__data` included.
    fn btf_tracepoint(&self, _name: &str) -> Option<BtfFunc> {
        None
    }

    /// Name and type id of parameter `idx` (0-based, 0 being `__data`) of
    /// tracepoint `name`'s probe functions.
    fn btf_tracepoint_param(&self, _name: &str, _idx: u32) -> Option<(&str, u32)> {
        None
    }

    /// A type by id, modifiers and typedefs skipped (`void`, id 0, is
    /// [`BtfType::Other`]).
    fn btf_type(&self, _id: u32) -> Option<BtfType> {
        None
    }

    /// The type id of the structure named `name` (`bpf_find_btf_id()`
    /// with `BTF_KIND_STRUCT`), vmlinux's first.
    fn btf_struct(&self, _name: &str) -> Option<u32> {
        None
    }

    /// A member of struct/union `id` by name. `Err` when the type
    /// information is broken (`BAD_BTF_TID`), `Ok(None)` when there is no
    /// such member.
    fn btf_member(&self, _id: u32, _name: &str) -> Result<Option<BtfMember>, BtfError> {
        Ok(None)
    }

    /// The maxactive `register_kretprobe()` gives a kretprobe defined
    /// without one (`max(10, 2 * num_possible_cpus())`), which the
    /// kernel's listing then shows (`r10:...`). 0: unknown, listed as
    /// written (`r:...`).
    fn default_maxactive(&self) -> u32 {
        0
    }

    /// The address a kprobe at `addr` is registered at (`_kprobe_addr()`:
    /// past the ENDBR of an IBT kernel's function entry), or `None` when
    /// kallsyms does not know `addr`: the kernel then defers the probe to
    /// a module load, which never places it.
    fn kprobe_address(&self, addr: u64) -> Option<u64> {
        Some(addr)
    }

    /// What the kernel's `%p` prints for pointer `value` (a hash of it,
    /// unless pointers are shown unhashed), for listings and default names
    /// of address probes as the kernel's. `None`: they show the address as
    /// written, which lists back to the same probe.
    fn hash_pointer(&self, _value: u64) -> Option<u64> {
        None
    }

    /// `offsetof(struct dentry, d_name.name)` (for `:%pd`).
    fn dentry_name_offset(&self) -> u64 {
        0x28
    }

    /// `offsetof(struct file, f_path.dentry)` (for `:%pD`).
    fn file_dentry_offset(&self) -> u64 {
        0x48
    }

    /// Whether trace event `system`/`event` exists and an event probe may
    /// attach to it (the kernel's `find_and_get_event()`: not a kprobe,
    /// uprobe or event probe event, nor one of ftrace's own).
    fn event_source(&self, _system: &str, _event: &str) -> bool {
        false
    }

    /// Field `field` of trace event `system`/`event` (its own fields,
    /// not the common ones, as `trace_get_fields()` lists them).
    fn event_field(&self, _system: &str, _event: &str, _field: &str) -> Option<EventField> {
        None
    }

    /// Checks an event probe's filter against its source event
    /// `system`/`event`, as the kernel's `create_event_filter()` parses it
    /// (which logs its own error_log entry for a bad filter).
    fn event_filter(&self, _system: &str, _event: &str, _filter: &str) -> FilterCheck {
        FilterCheck::Unsupported
    }

    /// What the file a uprobe names is (`kern_path()` with
    /// `LOOKUP_FOLLOW`, then `d_is_reg()`); with no answer, a file that
    /// does not exist.
    fn user_file(&self, _path: &[u8]) -> UserFile {
        UserFile::Missing(crate::lang::error::errno::ENOENT)
    }

    /// The file offset a uprobe on `PATH:NAME+OFFS` takes: the function
    /// `name` of the ELF file `path` (a regular file, [`Self::user_file`]),
    /// plus `offs` bytes, as [`crate::lang::elf::Elf::lookup_function`]
    /// finds it in `.symtab`, else `.dynsym`. The resolver reads the file;
    /// the lookup is the ELF reader's. With no answer the file cannot be
    /// read.
    fn user_function(
        &self,
        _path: &[u8],
        _name: &[u8],
        _offs: u64,
    ) -> Result<u64, UserFunctionError> {
        Err(UserFunctionError::Read(crate::lang::error::errno::ENOENT))
    }
}

/// Why [`Resolver::user_function`] found no place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserFunctionError {
    /// The ELF reader refused the file or found no such function.
    Elf(ElfError),
    /// Reading the file failed with this errno.
    Read(i32),
    /// The ranges the reader needs are more than the resolver reads.
    TooBig,
}

/// What [`Resolver::user_file`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserFile {
    /// A regular file.
    Regular,
    /// Something else (a directory, a device, a socket...).
    NotRegular,
    /// The lookup failed with this errno (`ENOENT`, `ENOTDIR`, `EACCES`...).
    Missing(i32),
}

/// What [`Resolver::event_filter`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterCheck {
    /// The filter parses.
    Accepted,
    /// The filter does not parse; the kernel logged why (`EINVAL`).
    Rejected,
    /// This kernel offers no filters to event probes (`EOPNOTSUPP`).
    Unsupported,
}

/// A resolver that knows nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoResolver;

impl Resolver for NoResolver {}
