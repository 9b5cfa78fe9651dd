// SPDX-License-Identifier: GPL-2.0

//! Tracepoint hooks (t events). A tracepoint calls each registered probe
//! with the probe's data pointer followed by the tracepoint's arguments.
//! Its probestub is an empty traceable function of exactly that prototype:
//! registered on the tracepoint with the hook as its data, it hands the
//! fprobe placed on it the tracepoint's arguments in registers, shifted by
//! one (the parser accounts for the hidden first argument).
//!
//! A t probe may name a tracepoint of a module that is not loaded: it is
//! hooked when the module comes and unhooked when it goes, as the
//! kernel's tracepoint probes are. The kernel does not export its list of
//! modules with tracepoints, so [`STATE`] keeps one from the tracepoint
//! module notifier, with every hook's state. Lock order: event_mutex
//! (arm, disarm) and the tracepoint core's module mutex (the notifier),
//! then [`STATE`].

use core::cell::Cell;
use core::ffi::CStr;
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::ptr::NonNull;

use kernel::ffi::{c_int, c_ulong, c_void};
use kernel::prelude::*;
use kernel::sync::global_lock;
use kernel::types::Opaque;

use super::fprobe::FprobeHook;
use super::Hook;
use crate::lang::DefView;
use crate::probe::{Feed, Place};
use crate::sys::bindings as b;

/// Modules with tracepoints, and the hooks.
struct State {
    modules: KVec<NonNull<b::module>>,
    hooks: KVec<NonNull<TracepointHook>>,
}

// SAFETY: the modules are live while listed (the notifier takes them off
// when they go); the hooks take themselves off before they go; both are
// used only under the lock.
unsafe impl Send for State {}

global_lock! {
    // SAFETY: initialized in `init`, before any hook exists.
    unsafe(uninit) static STATE: Mutex<State> = State {
        modules: KVec::new(),
        hooks: KVec::new(),
    };
}

/// A t probe.
///
/// # Invariants
///
/// Pinned: ftrace and the tracepoint keep pointers into `probe` while it
/// is hooked. The cells change only under [`STATE`]'s lock. `name` is the
/// NUL-terminated tracepoint name.
#[pin_data(PinnedDrop)]
pub(crate) struct TracepointHook {
    #[pin]
    probe: Opaque<b::dynprobe_fprobe>,
    /// What `probe` points its hits to.
    feed: Feed,
    name: KVec<u8>,
    /// The event is enabled: hook the tracepoint whenever it is there.
    armed: Cell<bool>,
    /// Hooked to this tracepoint (null: not hooked).
    tpoint: Cell<*mut b::tracepoint>,
    /// Was hooked at some time: its fprobe's handler may have run.
    hooked: Cell<bool>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: as the type invariant says.
unsafe impl Send for TracepointHook {}
// SAFETY: as for `Send`.
unsafe impl Sync for TracepointHook {}

/// The tracepoint of `module` named `name`.
fn find_in_module(module: NonNull<b::module>, name: &CStr) -> Option<NonNull<b::tracepoint>> {
    for i in 0.. {
        // SAFETY: the module is live (listed); `i` is checked there.
        let tp = NonNull::new(unsafe { b::dynprobe_module_tracepoint(module.as_ptr(), i) })?;
        // SAFETY: a live tracepoint's name is NUL-terminated.
        if unsafe { CStr::from_char_ptr((*tp.as_ptr()).name.cast()) } == name {
            return Some(tp);
        }
    }
    None
}

struct Lookup<'a> {
    name: &'a CStr,
    found: *mut b::tracepoint,
}

/// # Safety
///
/// Called by `for_each_kernel_tracepoint` with a live tracepoint and the
/// `Lookup` given to it.
unsafe extern "C" fn match_tracepoint(tp: *mut b::tracepoint, priv_: *mut c_void) {
    // SAFETY: per the function's contract.
    let lookup = unsafe { &mut *priv_.cast::<Lookup<'_>>() };
    // SAFETY: a live tracepoint's name is NUL-terminated.
    if lookup.found.is_null() && unsafe { CStr::from_char_ptr((*tp).name.cast()) } == lookup.name {
        lookup.found = tp;
    }
}

/// The tracepoint named `name`, in the kernel image or a listed module.
fn find(state: &State, name: &CStr) -> Option<NonNull<b::tracepoint>> {
    let mut lookup = Lookup {
        name,
        found: core::ptr::null_mut(),
    };
    // SAFETY: the callback gets `lookup` back, which lives across the call.
    unsafe {
        b::for_each_kernel_tracepoint(
            Some(match_tracepoint),
            core::ptr::from_mut(&mut lookup).cast(),
        )
    };
    if let Some(tp) = NonNull::new(lookup.found) {
        return Some(tp);
    }
    state.modules.iter().find_map(|&m| find_in_module(m, name))
}

/// Whether a tracepoint named `name` exists that a t probe can hook.
pub(crate) fn exists(name: &CStr) -> bool {
    let state = STATE.lock();
    // SAFETY: a found tracepoint is live while the lock is held.
    find(&state, name).is_some_and(|tp| !unsafe { (*tp.as_ptr()).probestub }.is_null())
}

impl TracepointHook {
    /// # Safety
    ///
    /// The feed's sink and definition must outlive the hook.
    pub(super) unsafe fn boxed(place: &mut Place<'_>, feed: Feed) -> Result<KBox<dyn Hook>> {
        let name = super::place_symbol(place)?;
        if name.is_empty() {
            return Err(EINVAL);
        }
        let hook = KBox::pin_init(
            try_pin_init!(TracepointHook {
                probe <- Opaque::ffi_init(|p: *mut b::dynprobe_fprobe| {
                    // SAFETY: `p` is the new hook's probe, valid for
                    // writes and not registered.
                    unsafe { FprobeHook::setup(p, place) }
                }),
                feed,
                name,
                armed: Cell::new(false),
                tpoint: Cell::new(core::ptr::null_mut()),
                hooked: Cell::new(false),
                _pin: PhantomPinned,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: not hooked yet (it is not in the list the module
        // notifier hooks from); the feed sits in the pinned hook, which
        // outlives its hooking.
        unsafe { (*hook.probe.get()).feed = hook.feed.get() };
        let mut state = STATE.lock();
        state.hooks.push(NonNull::from(&*hook), GFP_KERNEL)?;
        drop(state);
        Ok(super::boxed(hook))
    }

    fn name(&self) -> &CStr {
        CStr::from_bytes_with_nul(&self.name).unwrap_or(c"?")
    }

    /// Hooks `tp`. Called under [`STATE`]'s lock.
    fn hook(&self, _state: &State, tp: NonNull<b::tracepoint>) -> Result {
        let probe = self.probe.get();
        // SAFETY: `tp` is live under the lock; the fprobe is set up and not
        // registered (the cells say so, under the lock); the hook is its
        // own data pointer, which the handler checks.
        unsafe {
            let mut stub = (*tp.as_ptr()).probestub as c_ulong;
            if stub == 0 {
                return Err(ENOENT);
            }
            let fp = core::ptr::addr_of_mut!((*probe).fp);
            kernel::error::to_result(b::register_fprobe_ips(fp, &mut stub, 1))?;
            self.hooked.set(true);
            let ret =
                b::tracepoint_probe_register(tp.as_ptr(), (*tp.as_ptr()).probestub, probe.cast());
            if ret != 0 {
                b::unregister_fprobe(fp);
                return Err(Error::from_errno(ret));
            }
        }
        self.tpoint.set(tp.as_ptr());
        Ok(())
    }

    /// Unhooks it if hooked. Called under [`STATE`]'s lock. Stub calls
    /// already under way are not hooked once the fprobe goes.
    fn unhook(&self, _state: &State) {
        let tp = self.tpoint.get();
        if tp.is_null() {
            return;
        }
        let probe = self.probe.get();
        // SAFETY: hooked to `tp`, which is live until its module's
        // notifier unhooks it.
        unsafe {
            b::tracepoint_probe_unregister(tp, (*tp).probestub, probe.cast());
            b::unregister_fprobe(core::ptr::addr_of_mut!((*probe).fp));
        }
        self.tpoint.set(core::ptr::null_mut());
    }
}

impl Hook for TracepointHook {
    /// A tracepoint that is not there yet is hooked when its module comes.
    fn arm(&self, _def: DefView<'_>) -> Result {
        super::fprobe_lockdown()?;
        let state = STATE.lock();
        self.armed.set(true);
        let ret = match find(&state, self.name()) {
            Some(tp) => self.hook(&state, tp),
            None => Ok(()),
        };
        if let Err(e) = ret {
            self.armed.set(false);
            pr_warn!(
                "cannot probe tracepoint {:?}: {}\n",
                self.name(),
                e.to_errno()
            );
        }
        ret
    }

    fn disarm(&self) {
        let state = STATE.lock();
        self.unhook(&state);
        self.armed.set(false);
    }

    fn misses(&self) -> u64 {
        // SAFETY: a plain counter of the pinned fprobe.
        unsafe { (*self.probe.get()).fp.nmissed as u64 }
    }

    fn feed(&self) -> &Feed {
        &self.feed
    }
}

#[pinned_drop]
impl PinnedDrop for TracepointHook {
    fn drop(self: Pin<&mut Self>) {
        let mut state = STATE.lock();
        self.unhook(&state);
        let me: *const TracepointHook = &*self;
        if let Some(i) = state
            .hooks
            .iter()
            .position(|h| core::ptr::eq(h.as_ptr(), me))
        {
            let _ = state.hooks.remove(i);
        }
        drop(state);
        if self.hooked.get() {
            // The fprobe and the feed are freed next: its handler runs in
            // an RCU read-side section (fprobe's entry under
            // guard(rcu_sched_notrace)), so a grace period after it is
            // unregistered none runs. unregister_fprobe() in 7.2 waits
            // so too; waiting here keeps the free safe without relying on
            // how a kernel's unregister_fprobe() is made.
            // SAFETY: may sleep, which dropping a hook may.
            unsafe { b::synchronize_rcu() };
        }
    }
}

/// # Safety
///
/// Called by the tracepoint module notifier chain with a `tp_module`.
unsafe extern "C" fn module_event(
    _nb: *mut b::notifier_block,
    event: c_ulong,
    data: *mut c_void,
) -> c_int {
    // SAFETY: per the function's contract, `data` is a live tp_module.
    let Some(module) = NonNull::new(unsafe { (*data.cast::<b::tp_module>()).mod_ }) else {
        return b::NOTIFY_DONE as c_int;
    };
    let mut state = STATE.lock();
    if event == b::module_state_MODULE_STATE_COMING as c_ulong {
        if state.modules.push(module, GFP_KERNEL).is_err() {
            pr_warn!("no memory to track the tracepoints of a module\n");
            return b::NOTIFY_DONE as c_int;
        }
        for h in state.hooks.iter() {
            // SAFETY: a listed hook is live (it takes itself off first).
            let hook = unsafe { h.as_ref() };
            if !hook.armed.get() || !hook.tpoint.get().is_null() {
                continue;
            }
            if let Some(tp) = find_in_module(module, hook.name()) {
                if hook.hook(&state, tp).is_err() {
                    pr_warn!("cannot probe tracepoint {:?} in a module\n", hook.name());
                }
            }
        }
    } else if event == b::module_state_MODULE_STATE_GOING as c_ulong {
        // The tracepoint core checks that nothing stays registered.
        for h in state.hooks.iter() {
            // SAFETY: as above.
            let hook = unsafe { h.as_ref() };
            let tp = hook.tpoint.get();
            // SAFETY: `module` is live while its notifier runs.
            if !tp.is_null() && unsafe { b::dynprobe_within_module(tp as usize, module.as_ptr()) } {
                hook.unhook(&state);
            }
        }
        state.modules.retain(|m| *m != module);
    }
    b::NOTIFY_DONE as c_int
}

/// A notifier block the kernel links into its chain.
struct Notifier(Opaque<b::notifier_block>);

// SAFETY: the kernel changes the block only under its chain's lock.
unsafe impl Sync for Notifier {}

static TRACEPOINT_MODULE_NB: Notifier = Notifier(Opaque::new(b::notifier_block {
    notifier_call: Some(module_event),
    next: core::ptr::null_mut(),
    priority: 0,
}));

pub(super) fn init() -> Result {
    // SAFETY: called once at module init, before any hook exists.
    unsafe { STATE.init() };
    // SAFETY: the block is static and unregistered in `exit`. Registering
    // also reports every module with tracepoints already loaded.
    kernel::error::to_result(unsafe {
        b::register_tracepoint_module_notifier(TRACEPOINT_MODULE_NB.0.get())
    })
}

pub(super) fn exit() {
    // SAFETY: registered in `init`. Unregistering reports every module as
    // going, which empties the module list.
    unsafe { b::unregister_tracepoint_module_notifier(TRACEPOINT_MODULE_NB.0.get()) };
}
