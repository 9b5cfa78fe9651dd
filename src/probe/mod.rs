// SPDX-License-Identifier: GPL-2.0

//! One probe feeding an event: its kernel hook (src/probe/), and the feed
//! its hits run: the compiled definition, the event's sink and a per-CPU
//! hit counter.

pub(crate) mod compiled;
mod eprobe;
mod fprobe;
pub(crate) mod hook;
mod kprobe;
mod module_waits;
pub(crate) mod resolver;
mod tracepoint;

use core::fmt::{self, Write};

use kernel::error::to_result;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

use crate::lang::{DefView, ProbeKind, Resolver};
use crate::probe::compiled::CompiledDef;
use crate::probe::resolver::KernelResolver;
use crate::sys::bindings as b;
use hook::Hook;

/// Writes into a fixed buffer, then yields a NUL-terminated C string.
pub(crate) struct CText<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> CText<N> {
    pub(crate) fn new() -> Self {
        CText {
            buf: [0; N],
            len: 0,
        }
    }

    /// The text with its NUL, or `None` if it did not fit.
    pub(crate) fn as_c(&mut self) -> Option<*const u8> {
        *self.buf.get_mut(self.len)? = 0;
        Some(self.buf.as_ptr())
    }
}

impl<const N: usize> Write for CText<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Where a definition's probe goes, as the C side wants it. `symbol` and
/// `filter` receive the NUL-terminated texts the place points to.
fn place_of(
    def: DefView<'_>,
    symbol: &mut CText<600>,
    filter: &mut KVec<u8>,
) -> Result<b::dynprobe_place> {
    if !def.filter().is_empty() {
        *filter = hook::nul_terminated(def.filter().as_bytes())?;
    }
    Ok(b::dynprobe_place {
        kind: match def.kind() {
            ProbeKind::Kprobe => b::dynprobe_probe_kind_DYNPROBE_KPROBE,
            ProbeKind::Kretprobe => b::dynprobe_probe_kind_DYNPROBE_KRETPROBE,
            ProbeKind::FprobeEntry => b::dynprobe_probe_kind_DYNPROBE_FPROBE_ENTRY,
            ProbeKind::FprobeExit => b::dynprobe_probe_kind_DYNPROBE_FPROBE_EXIT,
            ProbeKind::FunctionEntry => b::dynprobe_probe_kind_DYNPROBE_FUNCTION_ENTRY,
            ProbeKind::FunctionExit => b::dynprobe_probe_kind_DYNPROBE_FUNCTION_EXIT,
            ProbeKind::Tracepoint => b::dynprobe_probe_kind_DYNPROBE_TRACEPOINT,
            ProbeKind::Event => b::dynprobe_probe_kind_DYNPROBE_EVENT,
        },
        symbol: match (def.full_symbol(), def.address()) {
            (Some(s), _) => {
                symbol.write_str(s).map_err(|_| EINVAL)?;
                symbol.as_c().ok_or(EINVAL)?
            }
            // An address kallsyms does not know: register_kprobe() fails
            // with -ENOENT, which the kernel's probe events take for a
            // module to come, keeping the event with an unregistered probe
            // that never fires. The C side keeps a place in a module that
            // is not loaded the same way, so the address goes there as a
            // symbol of the unnamed module (`:0x...`), which no module
            // load ever matches.
            (None, Some(a)) if a != 0 && KernelResolver::new().kprobe_address(a).is_none() => {
                write!(symbol, ":0x{:x}", a).map_err(|_| EINVAL)?;
                symbol.as_c().ok_or(EINVAL)?
            }
            (None, _) => core::ptr::null(),
        },
        addr: def.address().unwrap_or(0) as usize,
        offset: def.offset() as usize,
        maxactive: def.maxactive() as i32,
        entry_data_size: (def.entry_args().len() * core::mem::size_of::<u64>()) as u32,
        fixed_record_size: if def.nr_dynamic() == 0 {
            def.fixed_size()
        } else {
            0
        },
        filter: if filter.is_empty() {
            core::ptr::null_mut()
        } else {
            filter.as_mut_ptr().cast()
        },
    })
}

/// What a probe's hits run and where they write. The hook points to it,
/// so it is boxed (a stable address) and outlives the hook.
///
/// # Invariants
///
/// `nhit` is a live per-CPU counter, freed on drop.
struct Feed {
    feed: Opaque<b::dynprobe_feed>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        // SAFETY: the counter is live (type invariant) and nothing reads
        // it any more: the hook that counted into it is gone.
        unsafe { b::dynprobe_counter_free((*self.feed.get()).nhit) };
    }
}

/// A probe and its definition. Dropping it drops the hook first, which
/// returns once no handler of it runs, then the feed and definition.
pub(crate) struct Probe {
    /// First: dropped before what its handlers use.
    hook: KBox<dyn Hook>,
    feed: KBox<Feed>,
    def: Arc<CompiledDef>,
}

impl Probe {
    /// Creates the probe for `def`, writing its hits to `sink`; it stays
    /// disarmed until [`Probe::arm`].
    ///
    /// # Safety
    ///
    /// `sink` must be a live event's sink that outlives the probe.
    pub(crate) unsafe fn new(sink: *mut b::dynprobe_sink, def: Arc<CompiledDef>) -> Result<Self> {
        let view = def.view();
        let mut symbol = CText::<600>::new();
        let mut filter = KVec::new();
        let place = place_of(view, &mut symbol, &mut filter)?;
        // SAFETY: allocates a per-CPU counter, which the feed frees.
        let nhit = unsafe { b::dynprobe_counter_alloc() };
        if nhit.is_null() {
            return Err(ENOMEM);
        }
        let feed = Feed {
            feed: Opaque::new(b::dynprobe_feed {
                sink,
                def: core::ptr::from_ref::<CompiledDef>(&*def).cast(),
                fixed_size: place.fixed_record_size,
                nhit,
            }),
        };
        let feed = KBox::new(feed, GFP_KERNEL)?;
        // SAFETY: the feed is boxed and outlives the hook (field order).
        let hook = unsafe { hook::new_hook(&place, feed.feed.get()) }?;
        Ok(Probe { hook, feed, def })
    }

    /// Hooks the probe's place. Called with event_mutex held, when its
    /// event is enabled.
    pub(crate) fn arm(&self) -> Result {
        self.hook.arm()
    }

    /// Unhooks it again (its handlers may still be running).
    pub(crate) fn disarm(&self) {
        self.hook.disarm()
    }

    /// Hits and misses so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        // SAFETY: the feed's counter is live (`Feed`'s invariant).
        let hits = unsafe { b::dynprobe_counter_sum((*self.feed.feed.get()).nhit) };
        (hits, self.hook.misses())
    }

    /// The definition the probe runs.
    pub(crate) fn def(&self) -> DefView<'_> {
        self.def.view()
    }
}

/// Allocates what probe handlers share (per-CPU scratch buffers) and
/// registers the probes' notifiers.
pub(crate) fn init() -> Result {
    hook::init()?;
    // SAFETY: called once from module init.
    if let Err(e) = to_result(unsafe { b::dynprobe_events_init() }) {
        hook::exit();
        return Err(e);
    }
    Ok(())
}

/// Undoes [`init`], once no event is left.
pub(crate) fn exit() {
    // SAFETY: called from module exit after every event is gone.
    unsafe { b::dynprobe_events_exit() };
    hook::exit();
}
