// SPDX-License-Identifier: GPL-2.0
//! The order in which Linux 7.2 checks a probe event line, where a line
//! has more than one fault: which error_log entry (message, caret column,
//! errno) the kernel reports first, and the command text it shows, byte
//! for byte. Each case is a kind of line selftests/robust/malformed_input/ found
//! dynprobe answering differently from the kernel.

use super::common::*;
use dynprobe_lang::ErrorCode::*;
use dynprobe_lang::*;

/// The error for `line` (bytes, not necessarily UTF-8).
fn err_b(control: Control, line: &[u8]) -> ParseError {
    let mut d = Box::new(Definition::new());
    match parse(control, line, &FakeKernel, &mut d) {
        Err(e) => e,
        Ok(c) => panic!("{:?} accepted: {c:?}", String::from_utf8_lossy(line)),
    }
}

/// error_log's command text is the written bytes (words joined by one
/// space), not a UTF-8 re-encoding of them: a byte >= 0x80 stays one
/// byte, so the caret column (counted in bytes) points where the kernel's
/// does.
#[test]
fn command_text_is_the_bytes_written() {
    let line = b"p:m\x80i/ vfs_read  a0=%di";
    let e = err_b(Control::KprobeEvents, line);
    assert_eq!(
        (e.code, e.column, e.errno),
        (BadGroupName, 2, errno::EINVAL)
    );
    assert_eq!(command_bytes(&e, line), b"p:m\x80i/ vfs_read a0=%di");
    // Function events and dynevent errors show the line as written.
    let line = b"vfs_\xe9read(x64 a";
    let e = err_b(Control::FunctionEvents, line);
    assert_eq!(command_bytes(&e, line), line);
    let line = b"x\xff y";
    let e = err_b(Control::DynamicEvents, line);
    assert_eq!(e.subsystem, Subsystem::Dynevent);
    assert_eq!(command_bytes(&e, line), line);
}

/// Error of `line` with resolver `r`.
fn err_r<R: Resolver>(r: &R, control: Control, line: &[u8]) -> ParseError {
    let mut d = Box::new(Definition::new());
    match parse(control, line, r, &mut d) {
        Err(e) => e,
        Ok(c) => panic!("{:?} accepted: {c:?}", String::from_utf8_lossy(line)),
    }
}

/// (code, column, errno) of the error for `line`.
fn got(control: Control, line: &[u8]) -> (ErrorCode, usize, i32) {
    let e = err_b(control, line);
    assert!(e.logged, "{:?}: {e:?}", String::from_utf8_lossy(line));
    (e.code, e.column, e.errno)
}

/// Column of the first `needle` in `line` (lines here have single spaces,
/// so that is the caret column).
fn col(line: &[u8], needle: &[u8]) -> usize {
    line.windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

/// A kprobe place that is not UTF-8: refused at once unless it is
/// `MOD:SYM` of a module that is not loaded, where the kernel parses on
/// (event name, `$argN` without an entry, BTF of a name no function has)
/// and only then gets to the place.
#[test]
fn kprobe_place_not_utf8() {
    let k = Control::KprobeEvents;
    let l = b"p vfs_\xffread a0=%ax";
    assert_eq!(got(k, l), (BadProbeAddr, 2, errno::EINVAL));
    let l = b"p:mi/1x nomod:vfs\xffread a0=%ax";
    assert_eq!(got(k, l), (BadEventName, 5, errno::EINVAL));
    // Not loaded, so not a function entry: no $argN.
    let l = b"p:mi/e1 ke\x91n:l_clone a0=+0x18($arg1)";
    let (code, _, e) = got(k, l);
    assert_eq!((code, e), (NofentryArgs, errno::EINVAL));
    // A return probe may name BTF parameters, but BTF knows no function
    // of that name.
    let l = b"r:e1 \xad$arg1:s32 a0=%ax count";
    assert_eq!(got(k, l), (NoBtfEntry, col(l, b"count"), errno::ENOENT));
    let l = b"p:mi/e1 ke\x91n:l_clone a0=%ax a0=%bx";
    assert_eq!(got(k, l), (UsedArgName, col(l, b"a0=%bx"), errno::EINVAL));
    // A symbol starting with a digit waits too (refused at the place).
    let l = b"p:mie1 0\x85x:9c957be0 a0=$stack0:symb";
    assert_eq!(got(k, l), (BadType, col(l, b"symb"), errno::EINVAL));
    // Nothing else wrong: refused at the place (the kernel would register
    // it for the module to come; dynprobe cannot list the name).
    let l = b"p:mi/e1 ke\x91n:l_clone a0=%ax";
    assert_eq!(got(k, l), (BadProbeAddr, 8, errno::EINVAL));
}

/// fprobe places are checked after everything else, as
/// trace_fprobe_verify_target() checks them; a name that is not UTF-8 or
/// has a ':' (no kallsyms name has one) never matches.
#[test]
fn fprobe_place_checked_last() {
    let d = Control::DynamicEvents;
    // `a1` alone is a BTF name, and BTF has no such function.
    let l = b"f:e952 vfs_\xbewrite a0=+16($stack0):u8[8] a1 =+0x0($arg3)";
    assert_eq!(got(d, l), (NoBtfEntry, col(l, b"a1 "), errno::ENOENT));
    let l = b"f:mi/ schedule_\xcdi@eout@ arg_0_x=-8(@total_forks):u8[1";
    assert_eq!(got(d, l).0, ArrayNoClose);
    let l = b"f:mi/e288\xb1 copy_pro\xcdcess%return a1=$retval";
    assert_eq!(got(d, l), (BadEventName, 5, errno::EINVAL));
    let l = b"f:mi/e1124 arg_0_x=+8($arg4):b2@12/32 a1=$stack0";
    assert_eq!(got(d, l), (BadProbeAddr, 11, errno::EINVAL));
    let l = b"f:mi/e1 vfs_\xffread a1=$stack0";
    assert_eq!(got(d, l), (BadProbeAddr, 8, errno::EINVAL));
}

/// An argument longer than dynprobe's buffer: the name is checked first
/// (EINVAL), the expression found too long after the `=` (E2BIG).
#[test]
fn long_argument_name_first() {
    let k = Control::KprobeEvents;
    let long = "n".repeat(40) + "=" + &"x".repeat(400);
    let l = format!("p vfs_read a0=%ax {long}");
    assert_eq!(
        got(k, l.as_bytes()),
        (ArgNameTooLong, col(l.as_bytes(), b"nnn"), errno::EINVAL)
    );
    let l = format!("p vfs_read a0=%ax a0={}", "x".repeat(400));
    assert_eq!(
        got(k, l.as_bytes()),
        (UsedArgName, col(l.as_bytes(), b"a0=x"), errno::EINVAL)
    );
    let l = format!("p vfs_read a0=%ax a1={}", "+0(".repeat(150));
    assert_eq!(
        got(k, l.as_bytes()),
        (ArgTooLong, col(l.as_bytes(), b"a1=") + 3, errno::E2BIG)
    );
    let l = format!("p vfs_read a0=%ax {}", "+0(".repeat(150));
    assert_eq!(
        got(k, l.as_bytes()),
        (ArgTooLong, col(l.as_bytes(), b"+0("), errno::E2BIG)
    );
}

/// Kernel text is 0xffff_ffff_8100_0000 to 0xffff_ffff_8200_0000 for
/// kallsyms; vfs_read starts it.
struct Text;

impl Resolver for Text {
    fn symbol_address(&self, name: &str) -> Option<u64> {
        (name == "vfs_read").then_some(0xffff_ffff_8100_0000)
    }
    fn kprobe_address(&self, addr: u64) -> Option<u64> {
        (0xffff_ffff_8100_0000..0xffff_ffff_8200_0000)
            .contains(&addr)
            .then_some(addr)
    }
}

/// A return probe off a function's entry is BAD_RETPROBE only where
/// kallsyms knows the place; elsewhere the kernel parses the arguments
/// first.
#[test]
fn retprobe_off_entry_in_unknown_place() {
    let k = Control::KprobeEvents;
    let e = err_r(&Text, k, b"r vfs_read+0x10 a0=$foo");
    assert_eq!((e.code, e.column), (BadRetprobe, 2));
    let l = b"r vfs_read+0xffffffff a0=$foo";
    let e = err_r(&Text, k, l);
    assert_eq!((e.code, e.column), (BadVar, col(l, b"$foo")));
}

/// `$argN` beyond the function's parameters is found before the count of
/// arguments: the kernel expands them first.
#[test]
fn argn_before_too_many_arguments() {
    let k = Control::KprobeEvents;
    let many: Vec<String> = (0..140).map(|i| format!("x{i}=%ax")).collect();
    let l = format!("p vfs_read $arg5 {}", many.join(" "));
    assert_eq!(
        got(k, l.as_bytes()),
        (NoBtfarg, col(l.as_bytes(), b"$arg5"), errno::ENOENT)
    );
    let l = format!("p vfs_read $arg4 {}", many.join(" "));
    assert_eq!(got(k, l.as_bytes()), (TooManyArgs, 11, errno::E2BIG));
}

/// An address return probe's context has no return flag in the kernel: a
/// BTF name there is NOSUP_BTFARG, logged.
#[test]
fn address_retprobe_btf_name() {
    let l = b"r 9 ksys\x8b\xdew\xc5ite+0";
    assert_eq!(
        got(Control::KprobeEvents, l),
        (NosupBtfarg, 4, errno::EINVAL)
    );
}
