// SPDX-License-Identifier: GPL-2.0

//! Entry probes on one function, of the kernel image or of a module (`f`
//! events and function events at entry): hooked on the shared ftrace_ops
//! (src/shim/fentry.c), the cheapest hook ftrace has, while the event is
//! enabled. Exits, globs and function lists use fprobe (fprobe.rs).

use core::marker::PhantomPinned;
use core::pin::Pin;

use kernel::prelude::*;
use kernel::types::Opaque;

use super::Hook;
use crate::lang::{is_function_list, DefView, ProbeKind};
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

/// An entry probe on the shared ftrace_ops.
///
/// # Invariants
///
/// Pinned: fentry.c's table links `probe` while it is armed. It is armed
/// and disarmed with event_mutex held (fentry.c takes its own lock too,
/// which its module notifier shares), and dropped only disarmed or by
/// the last owner. `probe.feed` holds a feed from `Feed::into_raw`, given
/// back on drop.
#[pin_data(PinnedDrop)]
pub(crate) struct FentryHook {
    #[pin]
    probe: Opaque<b::dynprobe_fentry>,
    #[pin]
    _pin: PhantomPinned,
}

// The hook, its feed inside, in a 64-byte slab object.
const _: () = assert!(core::mem::size_of::<FentryHook>() <= 64);

// SAFETY: the probe is changed by fentry.c under its lock and by `arm`
// with event_mutex held; its handlers only read it.
unsafe impl Send for FentryHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for FentryHook {}

/// The ftrace call site of `target` if an entry probe on it can use the
/// shared ftrace_ops: one function, of the kernel image or of a module
/// (`MOD:SYM`, or a name kallsyms finds in one), when fentry.c can hold
/// that module while it hooks it. Asked when the hook is made and, for a
/// module's function, again at each arm: the module may have been
/// loaded again elsewhere since.
///
/// No module is held between the walk that finds a module's function
/// and fentry.c hooking it (function lists hold theirs: function_list.rs,
/// `ModuleHolds`): arming runs under event_mutex, which the tracing
/// core's module notifier takes before the module can be freed, so the
/// address cannot be another module's yet; a module going meanwhile is
/// not hooked (fentry.c takes a reference only on a live or coming
/// module) and fentry.c's notifier, first in the chain, unhooks it. A
/// module still coming is hooked too: a probe on its init text fires
/// while it initialises.
pub(super) fn shared_hook_address(kind: ProbeKind, target: &[u8]) -> Option<usize> {
    if !matches!(kind, ProbeKind::FprobeEntry | ProbeKind::FunctionEntry) {
        return None;
    }
    if super::fprobe::is_glob(target) || is_function_list(target) {
        return None;
    }
    let addr = match target.iter().position(|&c| c == b':') {
        Some(colon) => super::function_list::module_symbol_function(target, colon, None).ok()?,
        None => {
            let name = super::nul_terminated(target).ok()?;
            // SAFETY: `name` is NUL-terminated; the stub checks the symbol.
            unsafe { b::dynprobe_call_kallsyms_lookup_name(name.as_ptr().cast()) }
        }
    };
    // SAFETY: a plain comparison with the modules' area, and a read of
    // the flags set once at load.
    let module_unheld = unsafe {
        b::dynprobe_in_module_area(addr) && !b::dynprobe_ksyms.have.__module_text_address
    };
    if addr == 0 || module_unheld {
        return None;
    }
    // SAFETY: the helper reads the function's first bytes without
    // faulting. Its body begins at its ftrace call site, the ip its hits
    // report.
    Some(unsafe { b::dynprobe_body_of(addr) })
}

impl FentryHook {
    /// The hook of an entry probe at `place`, on the function whose ftrace
    /// call site is `addr` ([`shared_hook_address`]). Disarmed.
    ///
    /// # Safety
    ///
    /// The feed's sink and definition must outlive the hook.
    pub(super) unsafe fn boxed(
        place: &Place<'_>,
        feed: Feed,
        addr: usize,
    ) -> Result<KBox<dyn Hook>> {
        let kind = super::fprobe::fprobe_kind(place.kind);
        let feed = feed.into_raw();
        let hook = KBox::pin_init(
            try_pin_init!(FentryHook {
                probe <- Opaque::ffi_init(move |p: *mut b::dynprobe_fentry| {
                    // SAFETY: `p` is the new hook's probe, valid for
                    // writes and not armed; all zero is an unlinked node.
                    unsafe {
                        core::ptr::write_bytes(p, 0, 1);
                        (*p).addr = addr;
                        (*p).kind = kind;
                        core::ptr::addr_of_mut!((*p).feed).write(feed);
                    }
                }),
                _pin: PhantomPinned,
            }),
            GFP_KERNEL,
        );
        let hook = match hook {
            Ok(hook) => hook,
            Err(e) => {
                // SAFETY: the allocation failed before the feed moved in:
                // this is its only copy.
                drop(unsafe { Feed::from_raw(feed) });
                return Err(e);
            }
        };
        Ok(super::boxed(hook))
    }
}

impl Hook for FentryHook {
    fn arm(&self, def: DefView<'_>) -> Result {
        super::fprobe_lockdown()?;
        let probe = self.probe.get();
        let target = def.full_symbol().ok_or(EINVAL)?;
        // SAFETY: the probe is set up and not armed (event_mutex orders
        // arm and disarm; fentry.c's notifier only disarms), so nothing
        // reads its address meanwhile.
        unsafe {
            if b::dynprobe_in_module_area((*probe).addr) {
                let Some(addr) = shared_hook_address(def.kind(), target.as_bytes()) else {
                    pr_warn!("cannot find {}\n", target);
                    return Err(ENOENT);
                };
                (*probe).addr = addr;
            }
        }
        // SAFETY: the probe is set up; fentry.c takes its own lock.
        let ret = unsafe { b::dynprobe_fentry_arm(probe) };
        if ret != 0 {
            pr_warn!("cannot hook {}: {}\n", target, ret);
        }
        kernel::error::to_result(ret)
    }

    fn disarm(&self) {
        // SAFETY: the probe is set up; unhooking an unhooked probe does
        // nothing.
        unsafe { b::dynprobe_fentry_disarm(self.probe.get()) };
    }

    fn misses(&self) -> u64 {
        // The shared hook's recursion misses are nobody's in particular.
        0
    }

    fn feed(&self) -> &Feed {
        // SAFETY: the probe holds the hook's feed (type invariant) as long
        // as the hook.
        unsafe { Feed::from_c(core::ptr::addr_of!((*self.probe.get()).feed)) }
    }
}

#[pinned_drop]
impl PinnedDrop for FentryHook {
    fn drop(self: Pin<&mut Self>) {
        let probe = self.probe.get();
        // SAFETY: the probe is set up; its callbacks run with preemption
        // disabled, so one grace period after unhooking none runs, and
        // its feed (type invariant) is given back then, once.
        unsafe {
            b::dynprobe_fentry_disarm(probe);
            b::synchronize_rcu();
            drop(Feed::from_raw(core::ptr::read(core::ptr::addr_of!(
                (*probe).feed
            ))));
        }
    }
}

/// Registers fentry.c's module notifier, which unhooks a going module's
/// probes, and those on a module's init text when it goes live.
pub(super) fn init() -> Result {
    // SAFETY: called once, at module init.
    kernel::error::to_result(unsafe { b::dynprobe_fentry_init() })
}

/// Undoes [`init`], once no hook is left.
pub(super) fn exit() {
    // SAFETY: the notifier was registered by `init`.
    unsafe { b::dynprobe_fentry_exit() };
}
