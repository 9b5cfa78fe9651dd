// SPDX-License-Identifier: GPL-2.0

//! The one place where dynprobe resolves kernel symbols by name, and the
//! table through which it calls the unexported functions among them.
//!
//! `kallsyms_lookup_name()` itself is not exported since Linux 5.7: where
//! its body begins is read from a kprobe registered on it and removed again
//! at once, and every other symbol is then looked up with it. A missing
//! symbol fails the load with a message naming it and why it is needed,
//! unless it is optional: then only the feature it serves is unavailable.
//!
//! None of the functions is ever called through a pointer. With IBT the
//! kernel seals every function whose address vmlinux never takes, which
//! includes all of them, and an indirect call to a sealed function is a
//! `#CP` fault. dynprobe calls instead, directly, a stub of its own with
//! the same prototype (`dynprobe_call_<function>()`, `src/shim/stubs.c`),
//! and an ftrace_ops filtered on the stubs (`src/shim/resolve.c`) moves
//! the instruction pointer saved at the stub's ftrace call site to the
//! body of the kernel function, found here ([`dynprobe_rs_redirect_body`]).
//! Documentation/design.md ("Calling unexported functions") has the
//! reasoning; `tools/check/sealed` checks the built module against this
//! table and the manifest below.

use core::ffi::c_void;
use core::ptr::addr_of_mut;
use core::sync::atomic::{AtomicUsize, Ordering};

use kernel::error::to_result;
use kernel::ffi::c_char;
use kernel::prelude::*;

use crate::lang::{Memory, Space};
use crate::sys::bindings as b;
use crate::sys::regs_memory::KernelMemory;

/// A kernel function called through its stub and the redirect.
struct Function {
    /// Its name for kallsyms, NUL-terminated.
    name: &'static str,
    /// What it is needed for, for the messages.
    why: &'static str,
    /// The load goes on without it.
    optional: bool,
    /// `dynprobe_call_<name>()`: an address, compared with the ftrace call
    /// site the redirect runs at and handed to ftrace's filter, never
    /// called through.
    stub: *const c_void,
}

/// The functions, in a read-only table whose stub addresses are
/// relocations `tools/check/sealed` reads (as it reads the manifest).
#[repr(transparent)]
struct Functions([Function; NR_FUNCTIONS]);

// SAFETY: the table is immutable and its pointers are only addresses,
// never dereferenced.
unsafe impl Sync for Functions {}

/// A kernel object used through its address, kept in `dynprobe_ksyms`.
struct Object {
    name: &'static str,
    why: &'static str,
    optional: bool,
    /// Stores the address in its field of `dynprobe_ksyms`.
    store: fn(&mut b::dynprobe_kernel_symbols, usize),
}

/// Every symbol dynprobe resolves, and why. `function NAME via STUB`: called
/// through STUB and the redirect, with a flag in `dynprobe_ksyms.have`;
/// `object NAME into FIELD`: used through its address, kept in
/// `dynprobe_ksyms.FIELD`. Each also becomes an ELF note (owner
/// "dynprobe", type 1) in `.note.dynprobe`, a section of the .ko that is
/// not loaded: "function NAME stub STUB" or "object NAME", the manifest
/// `tools/check/sealed` checks.
macro_rules! resolved_symbols {
    (
        $(function $f:ident via $stub:ident, $fopt:expr, $fwhy:literal;)*
        $(object $o:ident into $field:ident, $oopt:expr, $owhy:literal;)*
    ) => {
        const NR_FUNCTIONS: usize = [$(stringify!($f)),*].len();

        #[no_mangle]
        static DYNPROBE_RESOLVED_FUNCTIONS: Functions = Functions([$(Function {
            name: concat!(stringify!($f), "\0"),
            why: $fwhy,
            optional: $fopt,
            stub: b::$stub as *const c_void,
        }),*]);

        /// Set each function's flag in `dynprobe_ksyms.have`, in table order.
        const SET_HAVE: [fn(&mut b::dynprobe_kernel_symbols); NR_FUNCTIONS] =
            [$(|ksyms| ksyms.have.$f = true),*];

        const OBJECTS: &[Object] = &[$(Object {
            name: concat!(stringify!($o), "\0"),
            why: $owhy,
            optional: $oopt,
            // The fields are pointers of several types.
            #[allow(clippy::as_underscore)]
            store: |ksyms, addr| ksyms.$field = addr as _,
        }),*];

        $(manifest_note!("function ", stringify!($f), " stub ", stringify!($stub));)*
        $(manifest_note!("object ", stringify!($o));)*
    };
}

/// One note of the manifest: its description is the concatenated text.
macro_rules! manifest_note {
    ($($text:expr),*) => {
        core::arch::global_asm!(
            concat!(
                ".pushsection .note.dynprobe, \"\", @note\n",
                ".balign 4\n",
                ".long 3f - 2f, 5f - 4f, 1\n",
                "2: .asciz \"dynprobe\"\n",
                "3: .balign 4\n",
                "4: .asciz \"", $($text,)* "\"\n",
                "5: .balign 4\n",
                ".popsection\n"
            ),
            options(att_syntax)
        );
    };
}

const REQUIRED: bool = false;
const OPTIONAL: bool = true;

resolved_symbols! {
    // First: found by kprobe, then used to find the rest.
    function kallsyms_lookup_name via dynprobe_call_kallsyms_lookup_name, REQUIRED,
        "resolving the other symbols, @SYM fetch args and SYM+OFF places";
    function tracefs_create_dir via dynprobe_call_tracefs_create_dir, REQUIRED,
        "creating tracefs dynprobe/";
    function tracefs_remove via dynprobe_call_tracefs_remove, REQUIRED,
        "removing tracefs dynprobe/ on unload";
    function tracing_log_err via dynprobe_call_tracing_log_err, REQUIRED,
        "reporting errors in error_log";
    function kallsyms_on_each_match_symbol via dynprobe_call_kallsyms_on_each_match_symbol,
        REQUIRED, "refusing non-unique probe symbols";
    function module_kallsyms_on_each_symbol via dynprobe_call_module_kallsyms_on_each_symbol,
        REQUIRED, "refusing non-unique module probe symbols";
    function kallsyms_on_each_symbol via dynprobe_call_kallsyms_on_each_symbol, OPTIONAL,
        "the function lists of f events";
    function tracing_reset_all_online_cpus via dynprobe_call_tracing_reset_all_online_cpus,
        OPTIONAL, "dropping the records of removed events";
    // Return probes whose return a kretprobe and the function graph both
    // hooked: the trampolines (objects below) are only compared with the
    // return address, never called.
    function rethook_find_ret_addr via dynprobe_call_rethook_find_ret_addr, OPTIONAL,
        "the caller on fprobe exits behind a kretprobe";
    function ftrace_graph_ret_addr via dynprobe_call_ftrace_graph_ret_addr, OPTIONAL,
        "the caller on kretprobes behind an fprobe exit";
    function create_event_filter via dynprobe_call_create_event_filter, OPTIONAL,
        "filters of event probes";
    function free_event_filter via dynprobe_call_free_event_filter, OPTIONAL,
        "filters of event probes";
    function __module_text_address via dynprobe_call___module_text_address, OPTIONAL,
        "entry probes on module functions on the shared ftrace_ops (else fprobe)";
    function __module_address via dynprobe_call___module_address, OPTIONAL,
        "watchpoints on a module's data (else refused)";
    object event_mutex into event_mutex, REQUIRED, "adding and removing trace events";
    object ftrace_events into ftrace_events, REQUIRED,
        "refusing the names of existing events";
    object trace_probe_err_text into trace_probe_err_text, REQUIRED,
        "error_log messages that outlive the module";
    object arch_rethook_trampoline into rethook_trampoline, OPTIONAL,
        "the caller on fprobe exits behind a kretprobe";
    object return_to_handler into fgraph_return_handler, OPTIONAL,
        "the caller on kretprobes behind an fprobe exit";
    // The fast record path (src/shim/hit.c): what the full path's
    // commit would do that it must also see.
    object tracepoint_printk_key into tracepoint_printk_key, OPTIONAL,
        "the fast record path (tp_printk sends records the full way)";
    object trace_event_exports_enabled into trace_event_exports_enabled, OPTIONAL,
        "the fast record path (trace exports send records the full way)";
    object trace_taskinfo_save into trace_taskinfo_save, OPTIONAL,
        "the fast record path (comms saved for cat trace)";
    // Linker symbols, in kallsyms with CONFIG_KALLSYMS_ALL.
    object __start_BTF into start_btf, OPTIONAL, "BTF argument names and members";
    object __stop_BTF into stop_btf, OPTIONAL, "BTF argument names and members";
}

/// Where each function of the table begins its body (after its ENDBR
/// slot), 0 while not resolved. Written only during module init, before
/// the redirect is registered or the stub first called; read-only
/// afterwards, like the functions' text: the redirect lands on these with
/// a `ret`, which IBT does not check, so they must not stay writable.
#[link_section = ".data..ro_after_init"]
static BODIES: [AtomicUsize; NR_FUNCTIONS] = [const { AtomicUsize::new(0) }; NR_FUNCTIONS];

/// Called by the redirect (`src/shim/resolve.c`) at the ftrace call site of
/// a stub, `ip` being the stub or the address just after its ENDBR (of
/// `endbr_size` bytes, 0 without IBT): the
/// body of the stub's kernel function, or 0 to leave the stub alone (its
/// function is not resolved: its body then reports the bug). Runs inside
/// ftrace's trampoline: reads only the table and the bodies and calls
/// nothing (Rust code has no ftrace call site, and kprobes are kept off it
/// with the rest of the Rust object).
#[no_mangle]
extern "C" fn dynprobe_rs_redirect_body(ip: usize, endbr_size: usize) -> usize {
    for (i, function) in DYNPROBE_RESOLVED_FUNCTIONS.0.iter().enumerate() {
        let stub = function.stub as usize;
        if ip == stub || ip == stub + endbr_size {
            return BODIES.get(i).map_or(0, |body| body.load(Ordering::Relaxed));
        }
    }
    0
}

/// The resolved symbols' table in C, written here during module init only.
fn ksyms() -> *mut b::dynprobe_kernel_symbols {
    addr_of_mut!(b::dynprobe_ksyms)
}

/// Where `kallsyms_lookup_name`'s body begins, from a kprobe on it.
fn find_kallsyms_lookup_name() -> Result<usize> {
    // SAFETY: an all-zero kprobe is an unregistered one, as C's `= { }`.
    let mut kp: b::kprobe = unsafe { core::mem::zeroed() };
    kp.symbol_name = c"kallsyms_lookup_name".as_char_ptr().cast();
    // SAFETY: `kp` is a valid kprobe that stays in place until it is
    // unregistered below.
    let ret = unsafe { b::register_kprobe(&mut kp) };
    if ret != 0 {
        pr_err!(
            "cannot find kallsyms_lookup_name (kprobe: {}); needed to resolve unexported symbols\n",
            ret
        );
        return Err(Error::from_errno(ret));
    }
    // A kprobe on a function sits after its ENDBR slot: the body.
    let addr = kp.addr as usize;
    // SAFETY: `kp` was registered above.
    unsafe { b::unregister_kprobe(&mut kp) };
    Ok(addr)
}

/// Looks a table name (NUL-terminated `&str`) up with [`lookup`].
fn lookup_name(name: &str) -> usize {
    CStr::from_bytes_with_nul(name.as_bytes()).map_or(0, lookup)
}

/// `name` without its NUL, for messages.
fn printable(name: &str) -> &str {
    name.trim_end_matches('\0')
}

/// Resolves every symbol and registers the redirect. Called once from
/// module init; on failure nothing stays registered.
pub(crate) fn resolve() -> Result {
    let own = find_kallsyms_lookup_name()?;
    BODIES[0].store(own, Ordering::Relaxed);
    let stubs = DYNPROBE_RESOLVED_FUNCTIONS
        .0
        .each_ref()
        .map(|f| f.stub as usize);
    // SAFETY: `stubs` holds `stubs.len()` addresses; ftrace copies them.
    to_result(unsafe { b::dynprobe_redirect_register(stubs.as_ptr().cast(), stubs.len() as u32) })?;
    if let Err(e) = resolve_all(own) {
        exit();
        return Err(e);
    }
    Ok(())
}

fn resolve_all(own: usize) -> Result {
    // SAFETY: module init is the only writer of the table, and nothing
    // reads it before init returns.
    let ksyms = unsafe { &mut *ksyms() };
    // It finds itself where its kprobe is only if the call reached it.
    let found_own = lookup_name(DYNPROBE_RESOLVED_FUNCTIONS.0[0].name);
    // SAFETY: reads the kernel text at `found_own` without faulting.
    if unsafe { b::dynprobe_body_of(found_own) } as usize != own {
        pr_err!("kallsyms_lookup_name, called through its stub, does not find itself: calls to unexported functions do not work\n");
        return Err(ENOENT);
    }
    SET_HAVE[0](ksyms);
    for (i, function) in DYNPROBE_RESOLVED_FUNCTIONS.0.iter().enumerate().skip(1) {
        let Some(addr) = found(function.name, function.optional, function.why)? else {
            continue;
        };
        // SAFETY: reads the kernel text at `addr` without faulting.
        let start = unsafe { b::dynprobe_body_of(addr) };
        if let (Some(body), Some(set)) = (BODIES.get(i), SET_HAVE.get(i)) {
            body.store(start as usize, Ordering::Relaxed);
            set(ksyms);
        }
    }
    for object in OBJECTS {
        if let Some(addr) = found(object.name, object.optional, object.why)? {
            (object.store)(ksyms, addr);
        }
    }
    // Only now: counting needs two of the functions above.
    for function in DYNPROBE_RESOLVED_FUNCTIONS.0.iter() {
        unique(function.name, function.why)?;
    }
    for object in OBJECTS {
        unique(object.name, object.why)?;
    }
    Ok(())
}

/// Refuses a name kallsyms holds more than once (static functions and
/// objects of the same name in two files): kallsyms_lookup_name() gives
/// one of them, which need not be the one meant, and calling or using the
/// wrong one would not be noticed.
fn unique(name: &str, why: &str) -> Result {
    let Ok(cname) = CStr::from_bytes_with_nul(name.as_bytes()) else {
        return Err(EINVAL);
    };
    match count_symbols(None, cname).0 {
        0 | 1 => Ok(()),
        n => {
            pr_err!(
                "kernel symbol {} is not unique ({} symbols of that name): cannot tell which one is the one needed for {}\n",
                printable(name),
                n,
                why
            );
            Err(EINVAL)
        }
    }
}

/// Looks a symbol up: `None` for a missing optional one, an error for a
/// missing required one.
fn found(name: &str, optional: bool, why: &str) -> Result<Option<usize>> {
    match lookup_name(name) {
        0 if optional => {
            pr_info!("kernel symbol {} not found: no {}\n", printable(name), why);
            Ok(None)
        }
        0 => {
            pr_err!(
                "kernel symbol {} not found; needed for {}\n",
                printable(name),
                why
            );
            Err(ENOENT)
        }
        addr => Ok(Some(addr)),
    }
}

/// Unregisters the redirect: called last at module exit, and on a failed
/// load, once nothing can call the stubs any more. The table stays as it
/// is (read-only by then, freed with the module).
pub(crate) fn exit() {
    // SAFETY: nothing calls the stubs any more.
    unsafe { b::dynprobe_redirect_unregister() }
}

/// The address of kernel symbol `name`, 0 if kallsyms does not know it.
pub(crate) fn lookup(name: &CStr) -> usize {
    // SAFETY: `name` is NUL-terminated; the stub reaches
    // kallsyms_lookup_name() (checked by `resolve`) or returns 0.
    unsafe { b::dynprobe_call_kallsyms_lookup_name(name.as_char_ptr().cast()) as usize }
}

/// How many symbols are called `name`: in vmlinux if there are any there
/// (module symbols do not shadow them), else in `module` or all modules;
/// and, with `module`, whether that module is loaded (a loaded module has
/// symbols), so that a name missing from it can be told from a module
/// that may still come.
pub(crate) fn count_symbols(module: Option<&CStr>, name: &CStr) -> (u32, bool) {
    let mut ctx = SymbolCount {
        name,
        count: 0,
        module_symbols: 0,
    };
    if module.is_none() {
        // SAFETY: `name` is NUL-terminated; the callback gets `ctx.count`,
        // which outlives the call.
        unsafe {
            b::dynprobe_call_kallsyms_on_each_match_symbol(
                Some(count_symbol),
                name.as_char_ptr().cast(),
                addr_of_mut!(ctx.count).cast(),
            )
        };
        if ctx.count != 0 {
            return (ctx.count, false);
        }
    }
    let module_ptr = module.map_or(core::ptr::null(), |m| m.as_char_ptr().cast());
    // SAFETY: `module_ptr` is NUL-terminated or null (all modules); the
    // callback gets `ctx`, which outlives the call.
    unsafe {
        b::dynprobe_call_module_kallsyms_on_each_symbol(
            module_ptr,
            Some(count_module_symbol),
            addr_of_mut!(ctx).cast(),
        )
    };
    (ctx.count, module.is_some() && ctx.module_symbols != 0)
}

struct SymbolCount<'a> {
    name: &'a CStr,
    count: u32,
    module_symbols: u32,
}

extern "C" fn count_symbol(data: *mut c_void, _addr: kernel::ffi::c_ulong) -> kernel::ffi::c_int {
    // SAFETY: `count_symbols` passes its counter.
    unsafe { *data.cast::<u32>() += 1 };
    0
}

extern "C" fn count_module_symbol(
    data: *mut c_void,
    name: *const c_char,
    _addr: kernel::ffi::c_ulong,
) -> kernel::ffi::c_int {
    // SAFETY: `count_symbols` passes its `SymbolCount`, alone in use
    // during the walk.
    let ctx = unsafe { &mut *data.cast::<SymbolCount<'_>>() };
    ctx.module_symbols += 1;
    // SAFETY: kallsyms passes NUL-terminated names.
    if unsafe { CStr::from_char_ptr(name.cast()) } == ctx.name {
        ctx.count += 1;
    }
    0
}

/// The kernel's probe error message at `index` of its table, copied with
/// its NUL into `buf`: its length, or `None` when the table has no such
/// entry, the entry cannot be read, or it does not fit. The kernel's table
/// has no end marker and its length is not exported: an index is read
/// only if kallsyms puts its slot inside the table's symbol. (A symbol
/// reaches to the next one, so alignment padding after the table may pass
/// as slots; they hold no message the caller accepts.)
pub(crate) fn kernel_error_message(index: u8, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: written during module init only.
    let table = unsafe { (*ksyms()).trace_probe_err_text };
    if table.is_null() {
        return None;
    }
    let slot = table.wrapping_add(index.into()) as usize;
    let mut owner = [0u8; 64];
    // SAFETY: `owner` is writable for its length.
    let n =
        unsafe { b::dynprobe_sprint_symbol(owner.as_mut_ptr(), owner.len(), slot as usize, false) };
    if owner.get(..n)? != b"trace_probe_err_text" {
        return None;
    }
    let mut word = [0u8; 8];
    KernelMemory
        .read(Space::Kernel, slot as u64, &mut word)
        .ok()?;
    let text = u64::from_ne_bytes(word);
    if text == 0 {
        return None;
    }
    // Byte by byte: the message may end just before unmapped memory.
    for (i, byte) in buf.iter_mut().enumerate() {
        let at = text.wrapping_add(i as u64);
        KernelMemory
            .read(Space::Kernel, at, core::slice::from_mut(byte))
            .ok()?;
        if *byte == 0 {
            return Some(i);
        }
    }
    None
}

/// The vmlinux BTF, or `None` when its bounds were not found or make no
/// sense.
pub(crate) fn vmlinux_btf() -> Option<&'static [u8]> {
    // SAFETY: written during module init only.
    let (start, stop) = unsafe { ((*ksyms()).start_btf, (*ksyms()).stop_btf) };
    if start.is_null() || stop <= start {
        return None;
    }
    // SAFETY: [start, stop) is the kernel's .BTF section, read-only data
    // that lives as long as the kernel.
    Some(unsafe { core::slice::from_raw_parts(start, stop as usize - start as usize) })
}
