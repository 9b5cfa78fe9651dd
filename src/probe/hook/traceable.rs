// SPDX-License-Identifier: GPL-2.0

//! Whether ftrace can hook a function, asked without hooking anything:
//! in the filter of an ftrace_ops that is never registered. The kernel's
//! own check, fprobe_count_ips_from_filter(), is not exported. fprobes
//! ask it of their targets, function lists of each function they take.

use kernel::ffi::c_ulong;
use kernel::prelude::*;
use kernel::sync::global_lock;
use kernel::types::Opaque;

use crate::sys::bindings as b;

/// An ftrace_ops that is never registered, for filter checks.
struct CheckOps(Opaque<b::ftrace_ops>);

// SAFETY: only used under `CHECK`'s lock.
unsafe impl Sync for CheckOps {}

static CHECK_OPS: CheckOps = CheckOps(Opaque::zeroed());

global_lock! {
    // SAFETY: initialized in `init`, before any check.
    unsafe(uninit) static CHECK: Mutex<()> = ();
}

pub(super) fn init() {
    // SAFETY: called once at module init, before any check.
    unsafe { CHECK.init() };
}

/// Whether ftrace can hook a function `glob` matches: `glob` is the
/// pattern (`len` bytes) with a NUL after it, a copy, since
/// ftrace_set_filter() edits the pattern it is given.
pub(super) fn glob_traceable(glob: &mut [u8], len: usize) -> bool {
    let _check = CHECK.lock();
    let ops = CHECK_OPS.0.get();
    // SAFETY: the ops is never registered and only used under `CHECK`;
    // the pattern is a writable NUL-terminated copy.
    let ret = unsafe {
        let ret = b::ftrace_set_filter(ops, glob.as_mut_ptr(), len as i32, 1);
        b::ftrace_free_filter(ops);
        ret
    };
    ret == 0
}

/// Whether ftrace can hook the function at `addr` (a symbol's address),
/// asked as [`super::fprobe::function_traceable`] asks: in the filter of
/// an ops that is never registered. Never dynprobe's own (own_text.rs).
pub(super) fn address_traceable(addr: usize) -> bool {
    if crate::probe::own_text::contains(addr) {
        return false;
    }
    let _check = CHECK.lock();
    let ops = CHECK_OPS.0.get();
    // SAFETY: the ops is never registered and only used under `CHECK`.
    let ret = unsafe {
        let ret = b::ftrace_set_filter_ip(ops, addr as c_ulong, 0, 1);
        b::ftrace_free_filter(ops);
        ret
    };
    ret == 0
}
