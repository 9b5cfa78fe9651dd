// SPDX-License-Identifier: GPL-2.0

//! The kernel hooks behind probes: the [`Hook`] trait, [`new_hook`] (the
//! one place that picks the implementation for a probe kind) and what the
//! kinds share. One file a kind of kernel probe in hook/, each importing
//! from this file, its parents and what sits below them, never from a
//! file that imports it: kprobe.rs (kprobes and kretprobes), fentry.rs
//! (entry probes on the shared ftrace_ops), fprobe.rs, tprobe.rs
//! (tracepoints), eprobe.rs (event probes), wprobe.rs (watchpoints),
//! uprobe.rs (uprobes and uretprobes);
//! below them, what several use: which functions ftrace can hook
//! (traceable.rs) and function lists (function_list.rs). The answers the
//! resolver asks of the kinds are re-exported here.

use core::pin::Pin;

use kernel::prelude::*;

use crate::lang::{DefView, ProbeKind};
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

mod eprobe;
mod fentry;
mod fprobe;
mod function_list;
mod kprobe;
mod tprobe;
mod traceable;
mod uprobe;
mod wprobe;

pub(crate) use eprobe::{event_field, event_filter, event_filters, event_source};
pub(crate) use fprobe::function_traceable;
pub(crate) use function_list::{entry_copies, module_function};
pub(crate) use tprobe::exists as tracepoint_exists;
pub(crate) use uprobe::{user_file, user_function};

/// A registered (or waiting) kernel probe that feeds one dynprobe probe,
/// and the feed its hits run, which it holds in its own allocation.
/// Dropping it unregisters it and returns once no handler of it runs,
/// then frees the feed.
pub(crate) trait Hook: Send + Sync {
    /// Starts firing, at the place of `def` (the probe's definition).
    /// Called with event_mutex held, when the probe's event is enabled (a
    /// hook waiting for its module starts when the module comes).
    fn arm(&self, def: DefView<'_>) -> Result;
    /// Stops firing; handlers already running may still finish.
    fn disarm(&self);
    /// Hits the kernel missed (recursion, no free instance).
    fn misses(&self) -> u64;
    /// The feed its hits run.
    fn feed(&self) -> &Feed;
}

/// A hook initialised pinned, as the probe keeps it: behind `dyn Hook`,
/// in the box it was initialised in. (`Pin<KBox<dyn Hook>>` would say so
/// in its type, but the kernel's `Box` in 7.2 cannot be unsized under
/// `Pin`.) A [`Hook`] is only ever reached through `&self` and dropped in
/// place, so it never moves out of that box.
pub(super) fn boxed<T: Hook + 'static>(hook: Pin<KBox<T>>) -> KBox<dyn Hook> {
    // SAFETY: the box is never moved out of (see above): the hook stays
    // where it was pinned until it is dropped there.
    let hook: KBox<T> = unsafe { Pin::into_inner_unchecked(hook) };
    hook
}

/// The hook for a probe at `place` whose hits run `feed`, which it takes.
///
/// # Safety
///
/// The feed's sink and definition must outlive the hook.
pub(crate) unsafe fn new_hook(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
    Ok(match place.kind {
        ProbeKind::Kprobe | ProbeKind::Kretprobe => {
            // SAFETY: per the function's contract.
            unsafe { kprobe::KprobeHook::boxed(place, feed) }?
        }
        ProbeKind::Eprobe => {
            // SAFETY: per the function's contract.
            unsafe { eprobe::EprobeHook::boxed(place, feed) }?
        }
        ProbeKind::Tprobe => {
            // SAFETY: per the function's contract.
            unsafe { tprobe::TracepointHook::boxed(place, feed) }?
        }
        ProbeKind::Wprobe => {
            if let Some((addr, watch)) = place.watched {
                if crate::probe::own_text::overlaps(addr as usize, usize::from(watch.len)) {
                    return Err(EINVAL);
                }
            }
            // SAFETY: per the function's contract.
            unsafe { wprobe::WprobeHook::boxed(place, feed) }?
        }
        ProbeKind::Uprobe
        | ProbeKind::Uretprobe
        | ProbeKind::UserFunctionEntry
        | ProbeKind::UserFunctionExit => {
            // SAFETY: per the function's contract.
            unsafe { uprobe::UprobeHook::boxed(place, feed) }?
        }
        ProbeKind::FprobeEntry
        | ProbeKind::FprobeExit
        | ProbeKind::FunctionEntry
        | ProbeKind::FunctionExit => {
            let symbol = place.symbol.ok_or(EINVAL)?;
            match fentry::shared_hook_address(place.kind, symbol.to_bytes()) {
                // The parser refused dynprobe's own functions; one loaded
                // since under the name is refused here.
                Some(addr) if crate::probe::own_text::contains(addr) => return Err(EINVAL),
                // SAFETY: per the function's contract.
                Some(addr) => unsafe { fentry::FentryHook::boxed(place, feed, addr) }?,
                // SAFETY: per the function's contract.
                None => unsafe { fprobe::FprobeHook::boxed(place, feed) }?,
            }
        }
    })
}

/// A copy of `text` with a NUL after it, for the C side.
pub(super) fn nul_terminated(text: &[u8]) -> Result<KVec<u8>> {
    let mut copy = KVec::with_capacity(text.len() + 1, GFP_KERNEL)?;
    copy.extend_from_slice(text, GFP_KERNEL)?;
    copy.push(0, GFP_KERNEL)?;
    Ok(copy)
}

/// The place's symbol with its NUL, as a hook keeps it (the kernel keeps
/// a pointer to it while the hook is registered); empty for an address.
pub(super) fn place_symbol(place: &Place<'_>) -> Result<KVec<u8>> {
    match place.symbol {
        None => Ok(KVec::new()),
        Some(symbol) => nul_terminated(symbol.to_bytes()),
    }
}

/// Lockdown (`LOCKDOWN_KPROBES`, confidentiality) refuses to hook a
/// function with an fprobe, as the kernel's fprobe events (f and t
/// probes) refuse when they are enabled, where they register their
/// fprobe (`__register_trace_fprobe()`): not when they are defined.
pub(super) fn fprobe_lockdown() -> Result {
    // SAFETY: asks the security modules; no argument.
    kernel::error::to_result(unsafe { b::dynprobe_lockdown_kprobes() })
}

/// Sets up what hooks share (locks, the module notifiers).
pub(crate) fn init() -> Result {
    traceable::init();
    fentry::init()?;
    if let Err(e) = kprobe::module_waits::init() {
        fentry::exit();
        return Err(e);
    }
    if let Err(e) = tprobe::init() {
        kprobe::module_waits::exit();
        fentry::exit();
        return Err(e);
    }
    if let Err(e) = eprobe::init() {
        tprobe::exit();
        kprobe::module_waits::exit();
        fentry::exit();
        return Err(e);
    }
    if let Err(e) = wprobe::init() {
        eprobe::exit();
        tprobe::exit();
        kprobe::module_waits::exit();
        fentry::exit();
        return Err(e);
    }
    Ok(())
}

/// Undoes [`init`], once no hook is left.
pub(crate) fn exit() {
    wprobe::exit();
    eprobe::exit();
    tprobe::exit();
    kprobe::module_waits::exit();
    fentry::exit();
}
