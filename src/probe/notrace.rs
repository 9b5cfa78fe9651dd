// SPDX-License-Identifier: GPL-2.0

//! What the kernel's kprobe events refuse before they register a kprobe
//! (`__register_trace_kprobe()`), checked the same way for dynprobe's:
//! lockdown, a place in a function ftrace cannot trace, and dynprobe's
//! own text ([`super::own_text`]).
//!
//! Whether a function is one ftrace cannot trace is decided here from
//! kallsyms' text (`sprint_symbol()`'s `SYM+0xOFF/0xSIZE [MOD]`), as the
//! kernel's `within_notrace_func()` decides it from kallsyms: the
//! functions it asks (`kallsyms_lookup_size_offset()`,
//! `ftrace_location_range()`) are not exported.

use kernel::bindings;
use kernel::ffi::c_int;
use kernel::prelude::*;
use kernel::sync::global_lock;
use kernel::types::Opaque;

use crate::sys::bindings as b;
use crate::sys::printk;

/// An ftrace_ops that is never registered: only asked whether ftrace
/// would hook an address.
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

/// The checks of the kernel's kprobe events before `register_kprobe()`,
/// on the kprobe `kp` is about to register: lockdown (`EPERM`), then a
/// place in a function ftrace cannot trace, which includes the tracing
/// core's own (`EINVAL`), and dynprobe's own text (`EINVAL`). The kprobe
/// blacklist is `register_kprobe()`'s to check. The address is
/// `trace_kprobe_address()`'s: the symbol's plus the offset.
///
/// # Safety
///
/// `kp` is a kprobe that is not registered, whose symbol name, when it
/// has one, is a C string.
pub(super) unsafe fn kprobe_precheck(kp: *const b::kprobe) -> Result {
    // SAFETY: asks the security modules; no argument.
    kernel::error::to_result(unsafe { b::dynprobe_lockdown_kprobes() })?;
    // SAFETY: the kprobe is not registered (the function's contract), so
    // nothing changes it meanwhile.
    let (symbol, offset, addr) = unsafe { ((*kp).symbol_name, (*kp).offset, (*kp).addr) };
    let addr = if symbol.is_null() {
        addr as usize
    } else {
        // SAFETY: the symbol name is a C string (the function's contract).
        match unsafe { b::dynprobe_call_kallsyms_lookup_name(symbol) } {
            0 => 0,
            found => found.wrapping_add(offset as usize),
        }
    };
    if within_notrace_func(addr)? {
        printk::print_symbol(
            c"\x014dynprobe: Could not probe notrace function %ps\n",
            addr,
        );
        return Err(EINVAL);
    }
    // dynprobe's own code runs while a hit is recorded; the kprobe
    // blacklist holds only the handler path, and a kernel with
    // KPROBE_EVENTS_ON_NOTRACE would take the rest.
    if super::own_text::contains(addr) {
        printk::print_symbol(c"\x014dynprobe: Could not probe dynprobe's own %ps\n", addr);
        return Err(EINVAL);
    }
    Ok(())
}

/// `within_notrace_func()` of kernel/trace/trace_kprobe.c: a suffixed
/// copy of a function (`SYM.constprop.0`, `SYM.cold`, ...) has no call
/// site of its own, and counts as notrace only if the function it was
/// made from, when kallsyms has it, is. Out of memory is no answer: the
/// probe is refused with `ENOMEM`. A kernel with
/// KPROBE_EVENTS_ON_NOTRACE refuses no function as notrace. (dynprobe
/// needs dynamic ftrace, which the kernel's check needs too.)
fn within_notrace_func(addr: usize) -> Result<bool> {
    if cfg!(CONFIG_KPROBE_EVENTS_ON_NOTRACE) {
        return Ok(false);
    }
    let mut sym = KVec::from_elem(0u8, b::DYNPROBE_KSYM_SYMBOL_LEN as usize, GFP_KERNEL)?;
    let Some(name_len) = notrace_at(addr, &mut sym)? else {
        return Ok(false);
    };
    let Some(dot) = sym[..name_len].iter().position(|&c| c == b'.') else {
        return Ok(true);
    };
    sym[dot] = 0;
    // SAFETY: `sym` holds the name cut at its first dot, NUL-terminated.
    let base = unsafe { b::dynprobe_call_kallsyms_lookup_name(sym.as_ptr().cast()) };
    if base == 0 {
        return Ok(true);
    }
    Ok(notrace_at(base, &mut sym)?.is_some())
}

/// `__within_notrace_func()`: whether `addr` is in a function kallsyms
/// knows that has no ftrace call site; if so, the length of its name,
/// which is left NUL-terminated at the start of `sym`
/// (`DYNPROBE_KSYM_SYMBOL_LEN` bytes). An address kallsyms does not know
/// prints as `0x...`, which has no `+0xOFF/0xSIZE`.
fn notrace_at(addr: usize, sym: &mut [u8]) -> Result<Option<usize>> {
    if addr == 0 {
        return Ok(None);
    }
    // SAFETY: `sym` has the room sprint_symbol() may write.
    let len = unsafe { bindings::sprint_symbol(sym.as_mut_ptr().cast(), addr) };
    let len = usize::try_from(len).unwrap_or(0).min(sym.len());
    let Some((name_len, offset)) = symbol_start(&sym[..len]) else {
        return Ok(None);
    };
    sym[name_len] = 0;
    Ok((!ftrace_site_in(addr.wrapping_sub(offset))?).then_some(name_len))
}

/// In `SYM+0xOFF/0xSIZE [MOD]`, where the name ends (its last `+`) and
/// the offset; `None` unless an offset and a size follow the `+` (as
/// `sscanf("+%lx/%lx")` reads them).
fn symbol_start(text: &[u8]) -> Option<(usize, usize)> {
    let plus = text.iter().rposition(|&c| c == b'+')?;
    let (offset, rest) = hex(&text[plus + 1..])?;
    let (_size, _) = hex(rest.strip_prefix(b"/")?)?;
    Some((plus, offset))
}

/// A hexadecimal number at the start of `text`, `0x` or `0X` before it or
/// not, and what follows it; `None` without a digit.
fn hex(text: &[u8]) -> Option<(usize, &[u8])> {
    let digits = match text {
        [b'0', b'x' | b'X', d, ..] if d.is_ascii_hexdigit() => &text[2..],
        _ => text,
    };
    let n = digits.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    if n == 0 {
        return None;
    }
    let mut value = 0usize;
    for &c in &digits[..n] {
        let d = char::from(c).to_digit(16)? as usize;
        value = value.wrapping_mul(16).wrapping_add(d);
    }
    Some((value, &digits[n..]))
}

/// Whether the function starting at `start` has an ftrace call site:
/// ftrace takes a function's start into a filter only then
/// (`ftrace_location()` maps `SYM+0` to the call site anywhere in SYM's
/// extent), as `ftrace_location_range()` over the extent answers.
/// `ENOMEM` when the filter could not be made: no answer.
fn ftrace_site_in(start: usize) -> Result<bool> {
    let ops = CHECK_OPS.0.get();
    let ret: c_int = {
        let _guard = CHECK.lock();
        // SAFETY: the ops is never registered, and used only under
        // `CHECK`'s lock, which is held; freeing its filter leaves it as
        // it was.
        unsafe {
            let ret = b::ftrace_set_filter_ip(ops, start, 0, 1);
            b::ftrace_free_filter(ops);
            ret
        }
    };
    if ret == ENOMEM.to_errno() {
        return Err(ENOMEM);
    }
    Ok(ret == 0)
}
