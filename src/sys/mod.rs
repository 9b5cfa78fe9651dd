// SPDX-License-Identifier: GPL-2.0

//! The thin layer between dynprobe's Rust core and the kernel: bindgen's
//! declarations of include/dynprobe/shim.h and safe wrappers around them.

pub(crate) mod events_lock;
pub(crate) mod kernel_symbols;
pub(crate) mod printk;
pub(crate) mod regs_memory;
pub(crate) mod trace_array;
pub(crate) mod tracefs;

use core::fmt::{self, Write};
use core::pin::Pin;

use kernel::alloc::AllocError;
use kernel::error::{to_result, Result};
use kernel::prelude::*;

pub(crate) mod bindings;

/// Registers the module notifier through which an unloading module's
/// events go (the in-kernel API, src/api/mod.rs).
pub(crate) fn api_init() -> Result {
    // SAFETY: called once from module init.
    to_result(unsafe { bindings::dynprobe_api_init() })
}

/// Unregisters what `api_init` registered.
pub(crate) fn api_exit() {
    // SAFETY: called from module exit, or a failed init, after `api_init`
    // succeeded.
    unsafe { bindings::dynprobe_api_exit() }
}

/// Appends to a kernel vector (failing on allocation failure).
pub(crate) struct VecWriter<'a>(pub(crate) &'a mut KVec<u8>);

impl Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}

/// A slice of `len` items taken from `items`, allocated to its size (no
/// allocation when empty); fails when `items` has fewer. (Pinned only
/// because `KBox::pin_slice` is the kernel's way to allocate one; nothing
/// relies on its place.)
pub(crate) fn boxed_slice<T>(
    mut items: impl Iterator<Item = T>,
    len: usize,
) -> Result<Pin<KBox<[T]>>> {
    boxed_slice_of(&mut || items.next(), len)
}

/// [`boxed_slice`] through a `dyn` source of items. `KBox::pin_slice`'s
/// instance is named after its closure's type, which would carry the
/// iterator's whole type (a chain of adapters over a definition's
/// arguments made a 527-byte symbol name): a module symbol of 512 bytes
/// or more (KSYM_NAME_LEN) makes the kernel's sprint_symbol() write before
/// its buffer (tools/check/sealed, check (e)).
fn boxed_slice_of<T>(next: &mut dyn FnMut() -> Option<T>, len: usize) -> Result<Pin<KBox<[T]>>> {
    Ok(KBox::pin_slice(
        |_| next().ok_or(AllocError),
        len,
        GFP_KERNEL,
    )?)
}

/// Counts what is written.
struct ByteCount(usize);

impl Write for ByteCount {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 = self.0.checked_add(s.len()).ok_or(fmt::Error)?;
        Ok(())
    }
}

/// What `write` writes, in a vector allocated to its length: `write` runs
/// twice, first to count. Text an object keeps for its life is made so:
/// a vector grown by appending doubles its capacity, and keeps a slab
/// object up to twice the size it needs.
pub(crate) fn exact_text(write: impl Fn(&mut dyn Write) -> fmt::Result) -> Result<KVec<u8>> {
    let mut len = ByteCount(0);
    write(&mut len).map_err(|_| ENOMEM)?;
    let mut text = KVec::with_capacity(len.0, GFP_KERNEL)?;
    write(&mut VecWriter(&mut text)).map_err(|_| ENOMEM)?;
    Ok(text)
}
