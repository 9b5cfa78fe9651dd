// SPDX-License-Identifier: GPL-2.0
//! Host build of dynprobe's definition language.
//!
//! The kernel module includes `src/lang/` as its `lang` submodule; this crate
//! root builds the same sources as an ordinary `no_std` library so the parser,
//! compiler and interpreter can be tested and fuzzed in user space.

#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

#[path = "lang/mod.rs"]
pub mod lang;

pub use lang::*;
