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
