// SPDX-License-Identifier: GPL-2.0

//! One probe feeding an event: its kernel hook (src/probe/), and the feed
//! its hits run: the compiled definition, the event's sink and a per-CPU
//! hit counter.

pub(crate) mod compiled;
pub(crate) mod hook;
mod notrace;
mod own_text;
pub(crate) mod resolver;
mod symbol_name;

use core::fmt::{self, Write};

use kernel::error::to_result;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

use crate::lang::{DefView, ProbeKind, Resolver, Watch};
use crate::probe::compiled::CompiledDef;
use crate::probe::resolver::KernelResolver;
use crate::sys::bindings as b;
use crate::sys::regs_memory::word_slot;
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

    /// The text with its NUL, or `None` if it did not fit (or holds a NUL).
    pub(crate) fn as_cstr(&mut self) -> Option<&CStr> {
        *self.buf.get_mut(self.len)? = 0;
        CStr::from_bytes_with_nul(self.buf.get(..=self.len)?).ok()
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

/// Where a definition's probe goes and what its hook needs to know: made
/// from the definition by [`place_of`], read by the hook of its kind.
pub(crate) struct Place<'a> {
    pub(crate) kind: ProbeKind,
    /// `SYM` or `MOD:SYM`, or a uprobe's file (NUL-terminated); `None`
    /// for an address.
    pub(crate) symbol: Option<&'a CStr>,
    /// The address; a uprobe's reference counter offset.
    pub(crate) addr: usize,
    pub(crate) offset: usize,
    pub(crate) maxactive: i32,
    /// Bytes a return probe saves at function entry for entry arguments.
    pub(crate) entry_data_size: u32,
    /// The record's size when it has no strings (0: it may have some).
    pub(crate) fixed_record_size: u32,
    /// An event probe's filter of its source's records (NUL-terminated).
    pub(crate) filter: Option<&'a mut [u8]>,
    /// A watchpoint's address, access and length.
    pub(crate) watched: Option<(u64, Watch)>,
}

/// The place of a definition's probe. `symbol` and `filter` receive the
/// NUL-terminated texts the place refers to.
fn place_of<'a>(
    def: DefView<'_>,
    symbol: &'a mut CText<600>,
    filter: &'a mut KVec<u8>,
) -> Result<Place<'a>> {
    if !def.filter().is_empty() {
        *filter = hook::nul_terminated(def.filter().as_bytes())?;
    }
    let uprobe = def.uprobe_place();
    let symbol = match (def.full_symbol(), def.address()) {
        // A watchpoint's symbol was resolved with its line.
        _ if def.kind() == ProbeKind::Wprobe => None,
        // A uprobe's file.
        _ if uprobe.is_some() => {
            symbol
                .write_str(uprobe.map_or("", |u| u.0))
                .map_err(|_| EINVAL)?;
            Some(symbol.as_cstr().ok_or(EINVAL)?)
        }
        (Some(s), _) => {
            symbol.write_str(s).map_err(|_| EINVAL)?;
            Some(symbol.as_cstr().ok_or(EINVAL)?)
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
            Some(symbol.as_cstr().ok_or(EINVAL)?)
        }
        (None, _) => None,
    };
    Ok(Place {
        kind: def.kind(),
        symbol,
        // A uprobe's reference counter.
        addr: uprobe.map_or(def.address().unwrap_or(0), |u| u.2) as usize,
        offset: def.offset() as usize,
        maxactive: def.maxactive() as i32,
        entry_data_size: (def.entry_args().len() * core::mem::size_of::<u64>()) as u32,
        fixed_record_size: if def.nr_dynamic() == 0 {
            def.fixed_size()
        } else {
            0
        },
        filter: if filter.is_empty() {
            None
        } else {
            Some(&mut filter[..])
        },
        watched: def.watched(),
    })
}

/// A feed's word table (`header_words`, `words`, `word_slot`): where each
/// word of `def`'s records comes from when they are records of words
/// ([`crate::lang::WordTable`]) of `fixed_size` bytes, for the hit to write
/// them by itself (src/shim/hit.c); or of words and one string
/// ([`string_table`]); no words where they are neither.
fn word_table(def: &CompiledDef, fixed_size: u16) -> (u8, u8, [u8; WORD_SLOTS]) {
    let none = (0, 0, [0; WORD_SLOTS]);
    let Some(table) = def.word_table() else {
        return string_table(def).unwrap_or(none);
    };
    let mut slots = [0u8; WORD_SLOTS];
    for (slot, &source) in slots.iter_mut().zip(table.sources()) {
        match word_slot(source, def.entry_slots()) {
            Some(s) => *slot = s,
            None => return none,
        }
    }
    let words = usize::from(table.header_words()) + table.sources().len();
    match u8::try_from(words) {
        Ok(words)
            if table.sources().len() <= WORD_SLOTS
                && table.record_size() == usize::from(fixed_size) =>
        {
            (table.header_words(), words, slots)
        }
        _ => none,
    }
}

/// A feed's table of a record of words and one string
/// ([`crate::lang::StringTable`]): no words (`words` 0: not a record of
/// words), `header_words` with `DYNPROBE_STRING_TABLE`, the header ips and
/// the words' count, and the words' slots then the string address's.
fn string_table(def: &CompiledDef) -> Option<(u8, u8, [u8; WORD_SLOTS])> {
    // The hit reads the string's first step where the programs would:
    // every string's room has it whole.
    const _: () =
        assert!(crate::lang::MAX_FUNCTION_STRING >= b::DYNPROBE_STRING_FIRST_READ as usize);
    const _: () = assert!(crate::lang::MAX_STRING_SIZE >= b::DYNPROBE_STRING_FIRST_READ as usize);
    let table = def.string_table()?;
    let words = table.words();
    let mut slots = [0u8; WORD_SLOTS];
    let string = [table.string()];
    for (i, &source) in Iterator::chain(words.sources().iter(), string.iter()).enumerate() {
        *slots.get_mut(i)? = word_slot(source, def.entry_slots())?;
    }
    let header_ips = words.header_words();
    let count = u8::try_from(words.sources().len()).ok()?;
    if u32::from(header_ips) > b::DYNPROBE_HEADER_IPS
        || u32::from(count) > b::DYNPROBE_STRING_TABLE >> b::DYNPROBE_STRING_WORDS_SHIFT
    {
        return None;
    }
    let header = u8::try_from(
        b::DYNPROBE_STRING_TABLE
            | u32::from(count) << b::DYNPROBE_STRING_WORDS_SHIFT
            | u32::from(header_ips),
    )
    .ok()?;
    Some((header, 0, slots))
}

/// Room in a feed's word table.
const WORD_SLOTS: usize = b::DYNPROBE_TABLE_WORDS as usize;
const _: () = assert!(WORD_SLOTS == crate::lang::MAX_TABLE_WORDS);

/// What a probe's hits run and where they write: the C side's
/// `struct dynprobe_feed`. Each hook holds its feed, in its own
/// allocation, and points its kernel probe to it once it is in place.
/// The feed owns a reference on the probe's definition, so a probe is
/// its hook alone (a probe list of one is a 16-byte object).
///
/// # Invariants
///
/// `nhit` is a live per-CPU counter and `def` a reference on a
/// [`CompiledDef`] from [`Arc::into_raw`], both given back on drop.
#[repr(transparent)]
pub(crate) struct Feed {
    feed: Opaque<b::dynprobe_feed>,
}

impl Feed {
    /// Whether every word the hit copies from the feed's table
    /// (src/shim/hit.c's `table_word()`) is a `pt_regs` word: no
    /// entry-data slot, in a record of words or one of words and a string.
    pub(crate) fn table_reads_registers_only(&self) -> bool {
        // SAFETY: the feed is initialised; the function only reads it.
        unsafe { b::dynprobe_feed_reads_regs_only(self.feed.get()) }
    }

    /// The C feed, which now owns the counter and the reference (for a
    /// hook that holds the feed inside its C probe: [`Feed::from_raw`]
    /// gives them back).
    fn into_raw(self) -> b::dynprobe_feed {
        let feed = core::mem::ManuallyDrop::new(self);
        // SAFETY: the feed is initialised and not dropped: its fields move
        // out once.
        unsafe { core::ptr::read(feed.feed.get()) }
    }

    /// The feed [`Feed::into_raw`] gave.
    ///
    /// # Safety
    ///
    /// `raw` came from [`Feed::into_raw`], and no other copy of it is
    /// used after.
    unsafe fn from_raw(raw: b::dynprobe_feed) -> Self {
        Feed {
            feed: Opaque::new(raw),
        }
    }

    /// The feed inside a C probe, as [`Feed::into_raw`] put it there.
    ///
    /// # Safety
    ///
    /// `raw` holds a feed from [`Feed::into_raw`] and lives as long as
    /// `'a`.
    unsafe fn from_c<'a>(raw: *const b::dynprobe_feed) -> &'a Self {
        // SAFETY: `Feed` is a transparent `Opaque<dynprobe_feed>`, which is
        // transparent over the C struct; per the function's contract.
        unsafe { &*raw.cast::<Feed>() }
    }

    /// The definition the probe runs.
    fn def(&self) -> &CompiledDef {
        // SAFETY: `def` holds a reference on the definition (type
        // invariant), which lives as long as the feed.
        unsafe { &*(*self.feed.get()).def.cast::<CompiledDef>() }
    }

    /// Where the hook's kernel probe finds it: stable once the hook that
    /// holds it is in its allocation.
    pub(crate) fn get(&self) -> *mut b::dynprobe_feed {
        self.feed.get()
    }

    /// The probe's hits so far.
    fn hits(&self) -> u64 {
        // SAFETY: the counter is live (type invariant).
        unsafe { b::dynprobe_counter_sum((*self.feed.get()).nhit) }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        // SAFETY: the counter is live and `def` a reference of the feed's
        // own (type invariant), and nothing reads either any more: the
        // hook that holds the feed has unhooked (a hook's own drop runs
        // before its fields').
        unsafe {
            kernel::bindings::free_percpu((*self.feed.get()).nhit.cast());
            drop(Arc::from_raw((*self.feed.get()).def.cast::<CompiledDef>()));
        }
    }
}

/// A probe: its hook, whose feed holds the definition. Dropping it drops
/// the hook, which returns once no handler of it runs, then its feed and
/// with it the definition.
pub(crate) struct Probe {
    hook: KBox<dyn Hook>,
}

// An event's list of one probe in a 16-byte slab object.
const _: () = assert!(core::mem::size_of::<Probe>() == 16);

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
        let mut place = place_of(view, &mut symbol, &mut filter)?;
        // SAFETY: allocates a per-CPU counter, which the feed frees.
        let nhit = unsafe { b::dynprobe_counter_alloc() };
        if nhit.is_null() {
            return Err(ENOMEM);
        }
        let fixed_size = u16::try_from(place.fixed_record_size).unwrap_or(0);
        let (header_words, words, word_slot) = word_table(&def, fixed_size);
        let feed = Feed {
            feed: Opaque::new(b::dynprobe_feed {
                sink,
                def: Arc::into_raw(def).cast(),
                nhit,
                fixed_size,
                header_words,
                words,
                word_slot,
            }),
        };
        // SAFETY: the sink outlives the probe (the function's contract),
        // and the feed holds the definition as long as the hook.
        let hook = unsafe { hook::new_hook(&mut place, feed) }?;
        Ok(Probe { hook })
    }

    /// Hooks the probe's place. Called with event_mutex held, when its
    /// event is enabled.
    pub(crate) fn arm(&self) -> Result {
        self.hook.arm(self.hook.feed().def().view())
    }

    /// Unhooks it again (its handlers may still be running).
    pub(crate) fn disarm(&self) {
        self.hook.disarm()
    }

    /// Hits and misses so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.hook.feed().hits(), self.hook.misses())
    }

    /// The definition the probe runs.
    pub(crate) fn def(&self) -> DefView<'_> {
        self.hook.feed().def().view()
    }
}

/// Allocates what probe handlers share (per-CPU scratch buffers),
/// registers the probes' notifiers, and pins the module under every
/// reference on its events (src/shim/holds.c).
pub(crate) fn init() -> Result {
    notrace::init();
    hook::init()?;
    // SAFETY: called once from module init.
    if let Err(e) = to_result(unsafe { b::dynprobe_hit_init() }) {
        hook::exit();
        return Err(e);
    }
    // Before any event exists: every reference on one pins the module.
    // SAFETY: called once from module init.
    if let Err(e) = to_result(unsafe { b::dynprobe_holds_init() }) {
        // SAFETY: `dynprobe_hit_init` succeeded; no hit can run yet.
        unsafe { b::dynprobe_hit_exit() };
        hook::exit();
        return Err(e);
    }
    Ok(())
}

/// Undoes [`init`], once no event is left.
pub(crate) fn exit() {
    // SAFETY: called from module exit after every event is gone, so no
    // reference on one is taken or dropped, and no hit runs.
    unsafe {
        b::dynprobe_holds_exit();
        b::dynprobe_hit_exit();
    }
    hook::exit();
}
