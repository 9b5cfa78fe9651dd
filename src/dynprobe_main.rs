// SPDX-License-Identifier: GPL-2.0

//! dynprobe: dynamic trace events defined through tracefs.
//!
//! Loading resolves the kernel symbols dynprobe needs, then creates
//! tracefs `dynprobe/` with the control files (the kernel's BTF is
//! indexed when the first definition is written); unloading removes them
//! again.

use kernel::prelude::*;

mod control;
mod error_table;
mod event;
mod fetch;
pub mod lang;
mod readme;
mod resolve;
mod sys;

module! {
    type: Dynprobe,
    name: "dynprobe",
    authors: ["dynprobe developers"],
    description: "Dynamic trace events: function_events, kprobe_events, dynamic_events",
    license: "GPL",
}

struct Dynprobe;

impl kernel::Module for Dynprobe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        sys::resolve_symbols()?;
        if let Err(e) = error_table::check() {
            sys::resolve_exit();
            return Err(e);
        }
        control::init();
        if let Err(e) = sys::events_init() {
            sys::resolve_exit();
            return Err(e);
        }
        if let Err(e) = sys::tracefs_init() {
            sys::events_exit();
            sys::resolve_exit();
            return Err(e);
        }
        pr_info!("ready: tracefs dynprobe/\n");
        Ok(Dynprobe)
    }
}

impl Drop for Dynprobe {
    fn drop(&mut self) {
        // The files go first so that no new open() can reach the core.
        sys::tracefs_exit();
        control::exit();
        sys::events_exit();
        resolve::btf_exit();
        // Last: everything above may call the kernel through the stubs.
        sys::resolve_exit();
    }
}
