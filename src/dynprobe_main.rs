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

/// The loaded module: one guard per step of its set-up, each undoing its
/// step when dropped. Fields drop in the order they are declared, so the
/// steps are undone in the reverse of the order `init` takes them; a
/// failed `init` drops the guards it made so far, the same way.
struct Dynprobe {
    /// tracefs `dynprobe/`: goes first, so that no new open() can reach
    /// the core.
    _files: control_files::ControlFiles,
    /// The in-kernel API's module notifier. Once it is gone no module can
    /// own an event any more: each that used the API holds dynprobe until
    /// it is gone.
    _api: Api,
    /// The registry of definitions: every event goes with it.
    _control: Control,
    /// What probe handlers share, and the probes' notifiers.
    _probes: Probes,
    /// The kernel's BTF index, made by the first definition that needs it.
    _btf: Btf,
    /// The resolved kernel symbols: last, since everything above may call
    /// the kernel through the stubs.
    _symbols: Symbols,
}

struct Symbols;

impl Symbols {
    fn resolve() -> Result<Self> {
        kernel_symbols::resolve()?;
        Ok(Symbols)
    }
}

impl Drop for Symbols {
    fn drop(&mut self) {
        kernel_symbols::exit();
    }
}

struct Btf;

impl Drop for Btf {
    fn drop(&mut self) {
        resolve::btf_exit();
    }
}

struct Control;

impl Control {
    fn init() -> Self {
        control::init();
        error_log::init();
        Control
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        control::exit();
    }
}

struct Probes;

impl Probes {
    fn init() -> Result<Self> {
        probe::init()?;
        Ok(Probes)
    }
}

impl Drop for Probes {
    fn drop(&mut self) {
        probe::exit();
    }
}

struct Api;

impl Api {
    fn init() -> Result<Self> {
        sys::api_init()?;
        Ok(Api)
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        sys::api_exit();
    }
}

impl kernel::Module for Dynprobe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let symbols = Symbols::resolve()?;
        error_table::check()?;
        let btf = Btf;
        let control = Control::init();
        let probes = Probes::init()?;
        let api = Api::init()?;
        let files = control_files::ControlFiles::create()?;
        pr_info!("ready: tracefs dynprobe/\n");
        Ok(Dynprobe {
            _files: files,
            _api: api,
            _control: control,
            _probes: probes,
            _btf: btf,
            _symbols: symbols,
        })
    }
}
