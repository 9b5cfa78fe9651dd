// SPDX-License-Identifier: GPL-2.0

//! dynprobe: dynamic trace events defined through tracefs.
//!
//! Loading resolves the kernel symbols dynprobe needs, then creates
//! tracefs `dynprobe/` with the control files (the kernel's BTF is
//! indexed when the first definition is written); unloading removes them
//! again.

use kernel::prelude::*;

use control::{error_log, error_table, files as control_files};
use probe::resolver as resolve;
use sys::kernel_symbols;

mod api;
mod compat;
mod control;
mod event;
mod fire;
pub mod lang;
mod probe;
mod sys;

module! {
    type: Dynprobe,
    name: "dynprobe",
    authors: ["dynprobe developers"],
    description: "Dynamic trace events: function_events, kprobe_events, dynamic_events",
    license: "GPL",
}

struct Dynprobe {
    /// tracefs `dynprobe/`; `None` only once module exit removed it.
    files: Option<control_files::ControlFiles>,
}

impl kernel::Module for Dynprobe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        kernel_symbols::resolve()?;
        if let Err(e) = error_table::check() {
            kernel_symbols::exit();
            return Err(e);
        }
        control::init();
        error_log::init();
        if let Err(e) = probe::init() {
            kernel_symbols::exit();
            return Err(e);
        }
        if let Err(e) = sys::api_init() {
            probe::exit();
            kernel_symbols::exit();
            return Err(e);
        }
        let files = match control_files::ControlFiles::create() {
            Ok(files) => files,
            Err(e) => {
                sys::api_exit();
                probe::exit();
                kernel_symbols::exit();
                return Err(e);
            }
        };
        pr_info!("ready: tracefs dynprobe/\n");
        Ok(Dynprobe { files: Some(files) })
    }
}

impl Drop for Dynprobe {
    fn drop(&mut self) {
        // The files go first so that no new open() can reach the core.
        drop(self.files.take());
        // No module can own an event any more: each that used the API
        // holds dynprobe until it is gone.
        sys::api_exit();
        control::exit();
        probe::exit();
        resolve::btf_exit();
        // Last: everything above may call the kernel through the stubs.
        kernel_symbols::exit();
    }
}
