// SPDX-License-Identifier: GPL-2.0

//! bindgen's output for include/dynprobe/shim.h (generated at build time).

#![allow(
    dead_code,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    missing_docs,
    unreachable_pub,
    // bindgen's bitfield accessors are unsafe fns made of unsafe calls.
    unsafe_op_in_unsafe_fn,
    // rustc 1.97 finds some of those accessors' transmutes unnecessary;
    // 1.85 does not know the lint.
    unknown_lints,
    unnecessary_transmutes,
    clippy::all,
    // The lints the kernel adds to clippy's defaults, for code no one
    // writes by hand.
    clippy::as_underscore,
    clippy::cast_lossless,
    clippy::ptr_as_ptr,
    clippy::ref_as_ptr,
    clippy::undocumented_unsafe_blocks
)]
// The kernel's structs (dentry, file_operations) hold a zero-sized
// lockdep_map without lockdep; only pointers to them cross the boundary.
#![allow(improper_ctypes)]

use kernel::bindings::{dentry, file_operations};
use kernel::ffi;

include!("generated.rs");
