// SPDX-License-Identifier: GPL-2.0

//! bindgen's output for include/dynprobe/shim.h (generated at build time).

#![allow(
    dead_code,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    missing_docs,
    unreachable_pub,
    clippy::all
)]

use kernel::ffi;

include!("generated.rs");
