// SPDX-License-Identifier: GPL-2.0

//! kprobe and kretprobe hooks. They are registered (disabled) when the
//! probe is made, which checks the place at once, and enabled while the
//! event is. A place in a module (`MOD:SYM`) that is not loaded waits for
//! the module, and is registered again whenever it comes, as the kernel's
//! kprobe events are ([`module_waits`]).

use core::cell::Cell;
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::sync::atomic::{AtomicU32, Ordering};

use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::types::Opaque;

use super::Hook;
use crate::lang::{DefView, ProbeKind};
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

pub(super) mod module_waits;
mod symbol;

use symbol::HookSymbol;

/// A kprobe or kretprobe.
///
/// # Invariants
///
/// Pinned: the kprobes core keeps pointers into `probe` while it is
/// registered. `symbol` (NUL-terminated, or empty for an address) is what
/// `probe.rp.kp.symbol_name` points to. `registered` changes only with
/// event_mutex held, or while nothing else can reach the hook (when it is
/// made and dropped).
#[pin_data(PinnedDrop)]
pub(crate) struct KprobeHook {
    #[pin]
    probe: Opaque<b::dynprobe_kprobe>,
    /// What `probe` points its hits to.
    feed: Feed,
    symbol: HookSymbol,
    ret: bool,
    registered: Cell<bool>,
    /// In the module waits list (a `MOD:SYM` place).
    waits: Cell<bool>,
    #[pin]
    _pin: PhantomPinned,
}

// The hook, with its feed, in a 256-byte slab object.
const _: () = assert!(core::mem::size_of::<KprobeHook>() <= 256);

// SAFETY: the kprobe is changed only by the kprobes core and under
// event_mutex; the cells as the type invariant says.
unsafe impl Send for KprobeHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for KprobeHook {}

/// The module a `MOD:SYM` symbol names, if it does.
fn module_of(symbol: &[u8]) -> Option<&[u8]> {
    let colon = symbol.iter().position(|&c| c == b':')?;
    symbol.get(..colon)
}

impl KprobeHook {
    /// # Safety
    ///
    /// The feed's sink and definition must outlive the hook.
    pub(super) unsafe fn boxed(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
        let symbol = HookSymbol::new(super::place_symbol(place)?);
        let ret = place.kind == ProbeKind::Kretprobe;
        // A kprobe's handler (dynprobe_kprobe_hit()) reads its table's
        // words from the registers without testing each: a probe that is
        // not a return probe has no entry data, so no definition gives
        // its table an entry-data slot.
        if !ret && !feed.table_reads_registers_only() {
            return Err(EINVAL);
        }
        let by_symbol = !symbol.with_nul().is_empty();
        let hook = KBox::pin_init(
            try_pin_init!(KprobeHook {
                probe <- Opaque::ffi_init(|p: *mut b::dynprobe_kprobe| {
                    // SAFETY: `p` is the new hook's probe, valid for
                    // writes and seen by nothing else until registered;
                    // zeroed first, as the kprobes core wants a probe it
                    // has not seen.
                    unsafe {
                        core::ptr::write_bytes(p, 0, 1);
                        b::dynprobe_kprobe_init(p, ret, place.entry_data_size);
                        let kp = core::ptr::addr_of_mut!((*p).rp.kp);
                        // The symbol's place is set once the hook is in
                        // its own: the symbol may be inside it.
                        if by_symbol {
                            (*kp).offset = place.offset as u32;
                        } else {
                            (*kp).addr = place.addr as *mut u8;
                        }
                        (*p).rp.maxactive = place.maxactive;
                    }
                }),
                feed,
                symbol,
                ret,
                registered: Cell::new(false),
                waits: Cell::new(false),
                _pin: PhantomPinned,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: not registered yet; the feed and the symbol sit in the
        // pinned hook (or the symbol in a buffer it owns), which outlives
        // the probe's registration.
        unsafe {
            (*hook.probe.get()).feed = hook.feed.get();
            if by_symbol {
                (*hook.kprobe()).symbol_name = hook.symbol.with_nul().as_ptr().cast::<c_char>();
            }
        }
        let Some(module) = module_of(hook.name()) else {
            hook.register(false)?;
            return Ok(super::boxed(hook));
        };
        // Not loaded yet (ENOENT): registered when the module comes.
        module_waits::register_and_add(&hook, module)?;
        hook.waits.set(true);
        Ok(super::boxed(hook))
    }

    /// The symbol, without its NUL.
    pub(super) fn name(&self) -> &[u8] {
        self.symbol
            .with_nul()
            .split_last()
            .map_or(&[], |(_, name)| name)
    }

    fn kprobe(&self) -> *mut b::kprobe {
        // SAFETY: only computes the address of a field of the pinned probe.
        unsafe { core::ptr::addr_of_mut!((*self.probe.get()).rp.kp) }
    }

    /// The kprobes core found its place gone (its module unloaded).
    fn gone(&self) -> bool {
        // SAFETY: `flags` is an aligned u32 of the pinned kprobe, which the
        // kprobes core changes under its own lock.
        let flags = unsafe { AtomicU32::from_ptr(core::ptr::addr_of_mut!((*self.kprobe()).flags)) };
        flags.load(Ordering::Relaxed) & b::KPROBE_FLAG_GONE != 0
    }

    /// Whether the event the hook feeds is enabled.
    pub(super) fn event_enabled(&self) -> bool {
        // SAFETY: the feed is the hook's and its sink outlives the hook
        // (`boxed`'s contract); the flags are an aligned u32 the hit path
        // reads.
        unsafe {
            let sink = (*self.feed.get()).sink;
            AtomicU32::from_ptr(core::ptr::addr_of_mut!((*sink).flags)).load(Ordering::Relaxed) != 0
        }
    }

    /// Registers the probe (enabled if `armed`).
    ///
    /// Called with event_mutex held, or before anything else can reach
    /// the hook (type invariant).
    pub(super) fn register(&self, armed: bool) -> Result {
        let kp = self.kprobe();
        // SAFETY: the probe is not registered (the callers unregister it
        // first), so its fields are ours; a kprobe is registered by
        // symbol again after an unregister.
        let ret = unsafe {
            (*kp).hlist.next = core::ptr::null_mut();
            (*kp).hlist.pprev = core::ptr::null_mut();
            let list = core::ptr::addr_of_mut!((*kp).list);
            (*list).next = list;
            (*list).prev = list;
            if !(*kp).symbol_name.is_null() {
                (*kp).addr = core::ptr::null_mut();
            }
            (*kp).flags = if armed { 0 } else { b::KPROBE_FLAG_DISABLED };
            // Lockdown and places ftrace cannot trace, as the kernel's
            // kprobe events check them before registering.
            if let Err(e) = crate::probe::notrace::kprobe_precheck(kp) {
                e.to_errno()
            } else if self.ret {
                b::register_kretprobe(core::ptr::addr_of_mut!((*self.probe.get()).rp))
            } else {
                b::register_kprobe(kp)
            }
        };
        self.registered.set(ret == 0);
        kernel::error::to_result(ret)
    }

    /// Unregisters it if it is; returns once no handler of it runs.
    pub(super) fn unregister(&self) {
        if !self.registered.get() {
            return;
        }
        // SAFETY: the probe is registered; unregistering waits for its
        // handlers.
        unsafe {
            if self.ret {
                b::unregister_kretprobe(core::ptr::addr_of_mut!((*self.probe.get()).rp));
            } else {
                b::unregister_kprobe(self.kprobe());
            }
        }
        self.registered.set(false);
    }
}

impl Hook for KprobeHook {
    fn arm(&self, _def: DefView<'_>) -> Result {
        // A probe whose module is not there is armed when it comes.
        if !self.registered.get() || self.gone() {
            return Ok(());
        }
        // SAFETY: a registered kprobe (enable_kretprobe() is this too).
        kernel::error::to_result(unsafe { b::enable_kprobe(self.kprobe()) })
    }

    fn disarm(&self) {
        if self.registered.get() && !self.gone() {
            // SAFETY: a registered kprobe.
            unsafe { b::disable_kprobe(self.kprobe()) };
        }
    }

    fn misses(&self) -> u64 {
        // SAFETY: plain counters of the pinned probe, read racily as the
        // kernel's kprobe_profile does.
        unsafe {
            let p = self.probe.get();
            let kp = (*p).rp.kp.nmissed as u64;
            if self.ret {
                kp + (*p).rp.nmissed as u64
            } else {
                kp
            }
        }
    }

    fn feed(&self) -> &Feed {
        &self.feed
    }
}

#[pinned_drop]
impl PinnedDrop for KprobeHook {
    fn drop(self: Pin<&mut Self>) {
        if self.waits.get() {
            module_waits::remove(&self);
        }
        self.unregister();
    }
}
