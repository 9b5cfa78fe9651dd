// SPDX-License-Identifier: GPL-2.0

//! The kernel's probe error messages, checked against dynprobe's at load.
//!
//! dynprobe logs the kernel's error codes to `error_log` with the kernel's
//! own message table, by index: `error_log` keeps a pointer to the table,
//! which must outlive the module. The index and text of each code are the
//! facts of the series the module was built for (`compat::KERNEL`); a
//! running kernel whose table differs from them in order or text would
//! show wrong messages, so the load is refused on the first difference,
//! naming it.

use kernel::prelude::*;

use crate::compat;
use crate::sys::kernel_symbols;

/// The longest message the kernel's table may hold for the check (the
/// longest of 7.2's and 7.3's is 57 bytes).
const TEXT_MAX: usize = 128;

/// Compares every entry of the kernel's table that dynprobe uses with
/// dynprobe's message for it.
pub(crate) fn check() -> Result {
    let mut buf = [0u8; TEXT_MAX];
    let facts = compat::KERNEL;
    let Some(m) = facts.first_kernel_mismatch(&mut buf, kernel_symbols::kernel_error_message)
    else {
        return Ok(());
    };
    let (index, series, expected, name) = (m.index, facts.series(), m.expected, m.code.name());
    match m.kernel.map(core::str::from_utf8) {
        Some(Ok(text)) => pr_err!(
            "the kernel's probe error messages differ from Linux {}'s at index {}: kernel \"{}\", dynprobe \"{}\" ({}); this dynprobe does not match this kernel\n",
            series,
            index,
            text,
            expected,
            name
        ),
        Some(Err(_)) => pr_err!(
            "the kernel's probe error messages differ from Linux {}'s at index {}: kernel (not UTF-8), dynprobe \"{}\" ({}); this dynprobe does not match this kernel\n",
            series,
            index,
            expected,
            name
        ),
        None => pr_err!(
            "the kernel's probe error messages differ from Linux {}'s at index {}: kernel (no entry, or longer than {} bytes), dynprobe \"{}\" ({}); this dynprobe does not match this kernel\n",
            series,
            index,
            TEXT_MAX - 2,
            expected,
            name
        ),
    }
    Err(EINVAL)
}
