// SPDX-License-Identifier: GPL-2.0

//! The compat layer, Rust half: what differs between the kernel series
//! dynprobe supports, behind names that say what it is.
//!
//! `src/compat/compat.mk` reads the kernel's version at build time and
//! sets the cfgs used here (`dynprobe_series_7_2`, `dynprobe_series_7_3`
//! and one `dynprobe_FEATURE` per difference); nothing else in the module
//! tests a kernel version. Documentation/compat.md lists the differences.

use kernel::ThisModule;

use crate::lang;

/// The language's facts (error table, limits) of the series this module
/// is built for: `error_log` indices, the load check and the parser's
/// limits come from here.
#[cfg(dynprobe_series_7_2)]
pub(crate) const KERNEL: &lang::KernelFacts = &lang::LINUX_7_2;

/// The language's facts (error table, limits) of the series this module
/// is built for: `error_log` indices, the load check and the parser's
/// limits come from here.
#[cfg(dynprobe_series_7_3)]
pub(crate) const KERNEL: &lang::KernelFacts = &lang::LINUX_7_3;

/// This module's `ThisModule`, for file operations and module references.
#[cfg(not(dynprobe_module_metadata_this_module))]
pub(crate) const fn this_module() -> &'static ThisModule {
    // 7.2's `module!` defines it at the crate root.
    &crate::THIS_MODULE
}

/// This module's `ThisModule`, for file operations and module references.
#[cfg(dynprobe_module_metadata_this_module)]
pub(crate) const fn this_module() -> &'static ThisModule {
    // 7.3's `module!` keeps it in the module type's metadata.
    &<crate::LocalModule as kernel::ModuleMetadata>::THIS_MODULE
}
