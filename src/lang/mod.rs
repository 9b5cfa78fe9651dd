// SPDX-License-Identifier: GPL-2.0
//! dynprobe's definition language.
//!
//! Pure `core` code (no allocation, no `unsafe`, no panics) shared by the
//! kernel module and the host test build. It turns one line written to a
//! control file into a [`Definition`]: probe place, group and event names,
//! and per argument a typed fetch [`Program`]. A successful parse is kept as
//! a [`Compiled`] definition sized to the line. Both read the same way
//! through a [`DefView`]: the record layout, the `format` fields, the print
//! fmt and the canonical text; the interpreter ([`DefView::record`]) runs
//! the programs against [`Regs`] and [`Memory`] and writes the record;
//! [`DefView::print_event`] prints it as `cat trace` does. What the parser
//! needs to know about the kernel comes through a [`Resolver`]; [`btf`]
//! reads the kernel's BTF for its BTF questions, [`elf`] a user-space
//! binary's symbols and SDT markers for uprobes.
//!
//! # Layers
//!
//! A written line goes down them once: `lexer` cuts a write into lines
//! and a line into words or tokens; `text` holds strings, numbers and
//! names; `parse` tells blank, removal and definition lines apart and
//! hands a definition to its syntax, `syntax` (kprobe_events and
//! dynamic_events, one file a kind) or `syntax::function`
//! (function_events); these hand each argument to its compiler, `fetch`
//! or `funcev_compile`. Synthetic event
//! lines (`synthetic_events`, and `s:` in `dynamic_events`) have a parser of
//! their own, `synth`: they define no probe, only an event's fields.
//!
//! # How the kernel layer uses it
//!
//! ```text
//! let def: &mut Definition = /* heap, Definition::new(), reused */;
//! match parse(Control::KprobeEvents, line, &resolver, def) {
//!     Ok(Command::Nothing) => {}
//!     Ok(Command::Define) => {
//!         // size, then fill: def.frozen_sizes(), def.frozen_args(),
//!         // def.frozen_derefs(), def.entry_args(),
//!         // def.write_frozen_text(&mut w)
//!         let compiled = def.freeze(storage)?;
//!         let v = compiled.view();
//!         // v.group(), v.event(), v.kind(), v.symbol(), v.offset(),
//!         // v.address(), v.maxactive(), v.entry_args()
//!         // for f in v.fields() { trace_define_field(f.name, type, f.offset, f.size, f.signed) }
//!         // v.print_fmt(&mut w)
//!     }
//!     Ok(Command::Remove { group, event, args, .. }) => {
//!         // for each compiled c: c.view().matches_removal(group, event, args)
//!     }
//!     Err(e) => { /* write_command(&e, line, &mut w); e.column; e.code.message() */ }
//! }
//! // In the probe handler:
//! let len = compiled.view().record(&regs, &mem, HeaderIps { first, second }, scratch);
//! // reserve `len` bytes, copy scratch[8..len] after the common header.
//! // In the output callback:
//! compiled.view().print_event(entry_bytes, &mut symbolizer, &mut seq)
//! // Reading the control file:
//! compiled.view().canonical(&mut seq)
//! ```

#![forbid(unsafe_code)]

pub mod btf;
mod compiled;
mod def;
mod dump;
pub mod elf;
mod error;
mod fetch;
mod funcev_compile;
mod funclist;
mod interp;
mod kernels;
mod kind;
mod lexer;
mod listing;
mod parse;
mod print;
mod record;
mod resolver;
mod syntax;
mod synth;
mod text;
mod types;
mod view;
mod watch;
mod words;

pub use btf::{Btf, BtfBlobError};
pub use compiled::{Compiled, FrozenSizes, Storage};
pub use def::{Command, Definition};
pub use error::{errno, ErrorCode, ParseError, Subsystem};
pub use funclist::{
    glob_match, is_function_list, sort_dedup, CompiledList, FunctionList, ListItem, ListShape,
    MAX_LIST_COST,
};
pub use interp::{Fault, HeaderIps, Memory, Regs};
pub use kernels::{
    for_version, KernelFacts, LogEntry, Mismatch, LINUX_7_2, LINUX_7_3, MAX_ARGSTR_CAP, SERIES,
};
pub use kind::{Control, Family, JoinRefusal, KindInfo, ProbeKind, Site};
pub use lexer::{cut_line, Cut};
pub use parse::{parse, parse_removal, write_command};
pub use print::Symbolizer;
pub use record::{ArgView, CompactArg, Field, ProbeArg, TRACE_ENTRY_SIZE};
pub use resolver::{
    is_entry_copy_of, BtfError, BtfFunc, BtfMember, BtfType, Copies, FilterCheck, FuncEntry,
    NoResolver, Resolver, SymbolCheck, UserFile, UserFunctionError,
};
pub use synth::{
    is_synth_line, parse_synth, synth_command_text, synth_error, SynthCommand, SynthDef,
    SynthField, SynthSource, SynthStorage, SynthTypeError, SYNTH_FIELDS_MAX, SYNTH_STRING_MAX,
    SYNTH_SYSTEM,
};
pub use text::ByteWrite;
pub use text::{first_nul, Str};
pub use types::{
    Bitfield, Deref, DerefOp, Derefs, EventField, FetchType, FieldKind, Load, PrintKind, Program,
    Reg, Space, Store, TextRange, MAX_DEREFS,
};
pub use view::{ArgViews, DefView, WordSource};
pub use watch::{Access, Watch};
pub use words::{StringTable, WordTable, MAX_TABLE_WORDS};

/// Most arguments of one event (`MAX_TRACE_ARGS`).
pub const MAX_TRACE_ARGS: usize = 128;
/// Longest explicit argument name (`MAX_ARG_NAME_LEN`).
pub const MAX_ARG_NAME_LEN: usize = 32;
/// Group and event names are shorter than this (`MAX_EVENT_NAME_LEN`).
pub const MAX_EVENT_NAME_LEN: usize = 64;
/// Longest array (`MAX_ARRAY_LEN`).
pub const MAX_ARRAY_LEN: u32 = 64;
/// Largest fixed argument area (`MAX_PROBE_EVENT_SIZE`).
pub const MAX_PROBE_EVENT_SIZE: u32 = 3072;
/// Longest recorded string, NUL included (`MAX_STRING_SIZE`, `PATH_MAX`).
pub const MAX_STRING_SIZE: usize = 4096;
/// Longest string a function event records, NUL included: the 2018
/// interface copied at most 512 bytes and truncated the rest.
pub const MAX_FUNCTION_STRING: usize = 512;
/// Instructions per argument program (`FETCH_INSN_MAX`).
pub const FETCH_INSN_MAX: usize = 16;
/// Longest command line. The kernel reads a write in pieces of
/// `WRITE_BUFSIZE - 1` bytes, each starting at a line: a line that ends
/// in a newline fits with up to 4094 bytes, the last line of a write, which
/// needs none, with up to 4095. The control files split writes the same
/// way; this is the bound a single line can reach.
pub const MAX_LINE_LEN: usize = 4095;
/// Capacity for a probed symbol name (`KSYM_NAME_LEN`).
pub const SYMBOL_CAP: usize = 512;
/// Capacity of a function event's canonical text.
pub const MAX_FUNCTION_TEXT: usize = 4096;
/// Largest `$stackN` / `$argN` (`THREAD_SIZE / sizeof(long)` on x86_64).
pub const PARAM_MAX_STACK: u64 = 2048;
/// Largest `r[MAXACTIVE]`.
pub const KRETPROBE_MAXACTIVE_MAX: u32 = 4096;
/// Buffer for BTF-expanded `$arg*` names (`MAX_BTF_ARGS_LEN`).
pub const MAX_BTF_ARGS_LEN: usize = 128;
/// Buffer for `%pd`/`%pD` expansions (`MAX_DENTRY_ARGS_LEN`).
pub const MAX_DENTRY_ARGS_LEN: usize = 256;
/// fprobe entry data limit in bytes (15 words).
pub const MAX_FPROBE_DATA_SIZE: usize = 15 * 8;
