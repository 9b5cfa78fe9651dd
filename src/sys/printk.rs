// SPDX-License-Identifier: GPL-2.0

//! Kernel log messages printed word for word, without the `dynprobe: `
//! prefix the kernel crate's `pr_*!` macros add: those that repeat the
//! kernel's own (a line too long) and those the module has always printed
//! so. Each format starts with its `KERN_*` level (`"\x01" "3"` for an
//! error, `"\x01" "4"` for a warning).

use kernel::bindings;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// Prints `fmt`, which takes no argument.
pub(crate) fn print(fmt: &CStr) {
    // SAFETY: `fmt` is a C string without conversions.
    unsafe { bindings::_printk(fmt.as_char_ptr()) };
}

/// Prints `fmt`, whose one conversion is a `%s`, with `arg`.
pub(crate) fn print_str(fmt: &CStr, arg: &CStr) {
    // SAFETY: `fmt` is a C string whose one conversion is a `%s`, given a
    // C string that lives across the call.
    unsafe { bindings::_printk(fmt.as_char_ptr(), arg.as_char_ptr()) };
}

/// Prints `fmt`, whose one conversion is a `%ps` (the symbol at an
/// address, which Rust's formatting cannot print), with `addr`.
pub(crate) fn print_symbol(fmt: &CStr, addr: usize) {
    // SAFETY: `fmt` is a C string whose one conversion is a `%ps`, given a
    // pointer, which it only looks up.
    unsafe { bindings::_printk(fmt.as_char_ptr(), addr as *const core::ffi::c_void) };
}

/// Prints `fmt`, whose one conversion is a `%d`, with `arg`.
pub(crate) fn print_int(fmt: &CStr, arg: c_int) {
    // SAFETY: `fmt` is a C string whose one conversion is a `%d`, given an
    // `int`.
    unsafe { bindings::_printk(fmt.as_char_ptr(), arg) };
}
