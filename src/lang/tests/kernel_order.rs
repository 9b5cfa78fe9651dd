// SPDX-License-Identifier: GPL-2.0
//! The order in which Linux 7.2 checks a probe event line, where a line
//! has more than one fault: which error_log entry (message, caret column,
//! errno) the kernel reports first, and the command text it shows, byte
//! for byte. Each case is a kind of line tools/malformed-input.py found
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
