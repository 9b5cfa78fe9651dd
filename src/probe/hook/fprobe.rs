// SPDX-License-Identifier: GPL-2.0

//! fprobe hooks: f events and function events at exit, and entry probes
//! on globs and function lists (an entry probe on one function hooks the
//! shared ftrace_ops instead: fentry.rs). Registered only while the event
//! is enabled, since a registered fprobe hooks its function.

use core::cell::Cell;
use core::ffi::CStr;
use core::marker::PhantomPinned;
use core::pin::Pin;

use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::types::Opaque;

use kernel::alloc::KVVec;

use super::function_list::{ListMatcher, ModuleHolds};
use super::traceable::{address_traceable, glob_traceable};
use super::Hook;
use crate::lang::{is_function_list, DefView, FunctionList, ProbeKind};
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

/// An fprobe.
///
/// # Invariants
///
/// Pinned: ftrace keeps pointers into `probe` while it is registered.
/// `registered` and `hooked` change only with event_mutex held or while
/// nothing else reaches the hook. It keeps no copy of its target's name:
/// fprobe reads it only while it registers (at each `arm`, from the
/// definition).
#[pin_data(PinnedDrop)]
pub(crate) struct FprobeHook {
    #[pin]
    probe: Opaque<b::dynprobe_fprobe>,
    /// What `probe` points its hits to.
    feed: Feed,
    /// A function list's compiled items and the kernel image's functions
    /// it takes, made with the hook; `None` for one place.
    list: Option<KBox<ListFunctions>>,
    registered: Cell<bool>,
    /// Was registered at some time: its handlers may have run.
    hooked: Cell<bool>,
    #[pin]
    _pin: PhantomPinned,
}

/// What an fprobe on a function list keeps from its definition: the list
/// compiled, and the kernel image's functions it takes (which do not
/// change, unlike the modules'), so that an enable walks only the
/// modules' symbols.
struct ListFunctions {
    matcher: ListMatcher,
    kernel: KVVec<usize>,
}

impl ListFunctions {
    fn new(text: &[u8]) -> Result<Self> {
        let list = FunctionList::parse(text).map_err(|_| EINVAL)?;
        let matcher = ListMatcher::new(list)?;
        let kernel = super::function_list::kernel_functions(&matcher.compiled(text))?;
        Ok(ListFunctions { matcher, kernel })
    }
}

// The hook, with its feed, in a 128-byte slab object.
const _: () = assert!(core::mem::size_of::<FprobeHook>() <= 128);

// SAFETY: the fprobe is changed by ftrace and under event_mutex; the cell
// as the type invariant says.
unsafe impl Send for FprobeHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for FprobeHook {}

/// The kind as fprobe.c's handlers tell them apart (the record's header,
/// and a tracepoint probe's own registration).
pub(super) fn fprobe_kind(kind: ProbeKind) -> b::dynprobe_fprobe_kind {
    match kind {
        ProbeKind::FprobeExit => b::dynprobe_fprobe_kind_DYNPROBE_FPROBE_EXIT,
        ProbeKind::FunctionEntry => b::dynprobe_fprobe_kind_DYNPROBE_FUNCTION_ENTRY,
        ProbeKind::FunctionExit => b::dynprobe_fprobe_kind_DYNPROBE_FUNCTION_EXIT,
        ProbeKind::Tprobe => b::dynprobe_fprobe_kind_DYNPROBE_TRACEPOINT,
        // Not reached: the other kinds have hooks of their own.
        _ => b::dynprobe_fprobe_kind_DYNPROBE_FPROBE_ENTRY,
    }
}

/// Whether `func` is a glob (`*`, `?`, `[`).
pub(super) fn is_glob(func: &[u8]) -> bool {
    func.iter().any(|c| b"*?[".contains(c))
}

impl FprobeHook {
    /// Initialises `probe`, zeroing it first, for a probe at `place` (not
    /// registered), whose feed is set once it is in place.
    ///
    /// # Safety
    ///
    /// `probe` is valid for writes, pinned and unregistered.
    pub(super) unsafe fn setup(probe: *mut b::dynprobe_fprobe, place: &Place<'_>) {
        let exit = matches!(place.kind, ProbeKind::FprobeExit | ProbeKind::FunctionExit);
        // SAFETY: per the function's contract.
        unsafe {
            core::ptr::write_bytes(probe, 0, 1);
            b::dynprobe_fprobe_init(probe, exit, place.entry_data_size);
            (*probe).kind = fprobe_kind(place.kind);
        }
    }

    /// # Safety
    ///
    /// The feed's sink and definition must outlive the hook.
    pub(super) unsafe fn boxed(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
        // The parser has checked that ftrace can hook the target. A
        // list's kernel functions are found here, outside event_mutex.
        let list = match place.symbol.map(|s| s.to_bytes()) {
            Some(text) if is_function_list(text) => {
                Some(KBox::new(ListFunctions::new(text)?, GFP_KERNEL)?)
            }
            _ => None,
        };
        let hook = KBox::pin_init(
            try_pin_init!(FprobeHook {
                probe <- Opaque::ffi_init(|p: *mut b::dynprobe_fprobe| {
                    // SAFETY: `p` is the new hook's probe, valid for
                    // writes and not registered.
                    unsafe { Self::setup(p, place) };
                }),
                feed,
                list,
                registered: Cell::new(false),
                hooked: Cell::new(false),
                _pin: PhantomPinned,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: not registered yet; the feed sits in the pinned hook,
        // which outlives the probe's registration.
        unsafe { (*hook.probe.get()).feed = hook.feed.get() };
        Ok(super::boxed(hook))
    }

    /// For a function list, the addresses of the functions it takes now
    /// (its kernel functions, kept, and the modules' now: they come and go
    /// between enables), and for `MOD:SYM` the address of that module's
    /// function; `None` for one function of the kernel's or glob, which
    /// fprobe finds by name. The modules of the addresses are held in
    /// `holds`. `target` is the place as the definition names it.
    fn addresses(&self, target: &str, holds: &mut ModuleHolds) -> Result<Option<KVVec<usize>>> {
        let text = target.as_bytes();
        if let Some(list) = &self.list {
            let compiled = list.matcher.compiled(text);
            let addrs = super::function_list::addresses(&list.kernel, &compiled, holds)
                .inspect_err(|e| {
                    pr_warn!("cannot list the functions of {}: {:?}\n", target, e);
                })?;
            if addrs.is_empty() {
                pr_warn!("no function to hook in {}\n", target);
                return Err(ENOENT);
            }
            return Ok(Some(addrs));
        }
        let Some(colon) = text.iter().position(|&c| c == b':') else {
            return Ok(None);
        };
        let addr = super::function_list::module_symbol_function(text, colon, Some(holds))
            .inspect_err(|e| {
                pr_warn!("cannot find {}: {:?}\n", target, e);
            })?;
        let mut addrs = KVVec::new();
        addrs.push(addr, GFP_KERNEL)?;
        Ok(Some(addrs))
    }
}

impl Hook for FprobeHook {
    fn arm(&self, def: DefView<'_>) -> Result {
        super::fprobe_lockdown()?;
        let probe = self.probe.get();
        let target = def.full_symbol().ok_or(EINVAL)?;
        // Held until the fprobe is registered: a module that goes after
        // that finds it registered, and fprobe's module notifier unhooks
        // its functions (kernel/trace/fprobe.c, fprobe_module_callback()).
        let mut holds = ModuleHolds::new();
        let list = self.addresses(target, &mut holds)?;
        let func = super::nul_terminated(target.as_bytes())?;
        let func_ptr = func.as_ptr().cast::<c_char>();
        // SAFETY: the fprobe is set up and not registered (event_mutex
        // orders arm and disarm); `func` is NUL-terminated, and fprobe
        // reads it and a list's addresses during the call only. By name
        // is a lookup; a glob scans every symbol.
        let ret = unsafe {
            let fp = core::ptr::addr_of_mut!((*probe).fp);
            if let Some(addrs) = &list {
                // fprobe copies the addresses.
                b::register_fprobe_ips(fp, addrs.as_ptr().cast_mut().cast(), addrs.len() as i32)
            } else if is_glob(target.as_bytes()) {
                // fprobe matches the glob itself: dynprobe's own
                // functions are left out by name.
                let own = crate::probe::own_text::GLOB_EXCLUSION.as_char_ptr();
                b::register_fprobe(fp, func_ptr, own)
            } else {
                let mut syms = [func_ptr];
                b::register_fprobe_syms(fp, syms.as_mut_ptr(), 1)
            }
        };
        drop(holds);
        if ret != 0 {
            pr_warn!("cannot register fprobe on {}: {}\n", target, ret);
        } else {
            self.registered.set(true);
            self.hooked.set(true);
        }
        kernel::error::to_result(ret)
    }

    fn disarm(&self) {
        let probe = self.probe.get();
        if self.registered.get() {
            // Its result is not looked at: unregister_fprobe() fails only
            // for an fprobe that is not registered (-EINVAL). It takes the
            // fprobe out of fprobe's hash whatever ftrace does, and the
            // ftrace_ops it hooks through is fprobe's own, not this
            // module's, so a dead ftrace (-ENODEV inside) leaves nothing
            // of dynprobe's on ftrace's lists (unlike fentry.c's ops).
            // SAFETY: a registered fprobe.
            unsafe { b::unregister_fprobe(core::ptr::addr_of_mut!((*probe).fp)) };
        }
        self.registered.set(false);
    }

    fn misses(&self) -> u64 {
        // SAFETY: a plain counter of the pinned fprobe, read racily as
        // the kernel's profile does.
        unsafe { (*self.probe.get()).fp.nmissed as u64 }
    }

    fn feed(&self) -> &Feed {
        &self.feed
    }
}

#[pinned_drop]
impl PinnedDrop for FprobeHook {
    fn drop(self: Pin<&mut Self>) {
        let probe = self.probe.get();
        if self.registered.get() {
            // SAFETY: a registered fprobe.
            unsafe { b::unregister_fprobe(core::ptr::addr_of_mut!((*probe).fp)) };
        }
        if self.hooked.get() {
            // The fprobe and the feed are freed next. Its handlers run in
            // RCU read-side sections (fprobe's entry and exit under
            // guard(rcu_sched_notrace) and with preemption off), and
            // unregistering takes it out of the lists they look it up in:
            // a grace period after that, none runs. unregister_fprobe() in
            // 7.2 waits so too; waiting here keeps the free safe without
            // relying on how a kernel's unregister_fprobe() is made.
            // SAFETY: may sleep, which dropping a hook may.
            unsafe { b::synchronize_rcu() };
        }
    }
}

/// Whether ftrace can hook `func` (it is in available_filter_functions).
/// The kernel's own check, fprobe_count_ips_from_filter(), is not
/// exported; asking for `func` in the filter of an ftrace_ops that is
/// never registered answers the same question without hooking anything:
/// by address for a plain name (a lookup), by pattern for a glob (a scan
/// of every function).
pub(crate) fn function_traceable(func: &CStr) -> bool {
    let bytes = func.to_bytes();
    if is_function_list(bytes) {
        // A list is traceable when it takes a function ftrace can hook.
        return FunctionList::parse(bytes)
            .ok()
            .and_then(|list| ListMatcher::new(list).ok())
            .is_some_and(|m| super::function_list::takes_a_function(&m.compiled(bytes)));
    }
    let mut glob = KVec::new();
    let mut addr = 0;
    if is_glob(bytes) {
        // ftrace_set_filter() edits the pattern it is given: a copy.
        match super::nul_terminated(bytes) {
            Ok(copy) => glob = copy,
            Err(_) => return false,
        }
    } else {
        // SAFETY: `func` is NUL-terminated; the stub checks the symbol.
        addr = unsafe { b::dynprobe_call_kallsyms_lookup_name(func.as_char_ptr().cast()) };
        if addr == 0 {
            return false;
        }
    }
    if glob.is_empty() {
        return address_traceable(addr);
    }
    glob_traceable(&mut glob, bytes.len())
}
