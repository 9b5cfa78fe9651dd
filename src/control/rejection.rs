// SPDX-License-Identifier: GPL-2.0

//! A refused line as the kernel's probe events report it: its error_log
//! entry (the command, the caret's column, the code) and its errno, for
//! the parser's refusals and for the kernel's (an existing event, a
//! probe the kernel would not register).

use kernel::prelude::*;

use crate::control::error_log;
use crate::lang::{self, ParseError, ProbeKind};

/// Reports a rejected line in error_log and turns it into an errno.
pub(crate) fn reject(e: &ParseError, line: &[u8]) -> Error {
    if e.logged {
        let mut cmd = KVec::new();
        // Bytes as written: error_log shows them unconverted.
        let mut put = |b: &[u8]| {
            cmd.extend_from_slice(b, GFP_KERNEL)
                .map_err(|_| core::fmt::Error)
        };
        if lang::write_command(e, line, &mut put).is_ok() && cmd.push(0, GFP_KERNEL).is_ok() {
            let pos = u16::try_from(e.column).unwrap_or(u16::MAX);
            error_log::log(e.subsystem, &cmd, e.code as u8, pos);
        }
    }
    Error::from_errno(-e.errno)
}

/// Column of word `index` in the command as error_log shows it (words
/// joined by single spaces).
fn word_column(line: &[u8], index: usize) -> usize {
    line.split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .take(index)
        .map(|w| w.len() + 1)
        .sum()
}

/// A rejection of the kernel's making (not the parser's): logged like a
/// parse error, at word `index` of the line.
pub(super) fn kernel_error(
    kind: ProbeKind,
    line: &[u8],
    code: lang::ErrorCode,
    index: usize,
    errno: Error,
) -> Error {
    let e = ParseError {
        code,
        column: word_column(line, index),
        errno: -errno.to_errno(),
        subsystem: kind.family().subsystem(),
        logged: true,
    };
    reject(&e, line)
}

/// A probe the kernel refused to register, reported as the kernel's probe
/// events report it: at the place (word 1), by errno. Running out of
/// memory is not logged, as in the kernel.
pub(super) fn registration_error(kind: ProbeKind, line: &[u8], e: Error) -> Error {
    // EILSEQ (not named by the kernel crate): a kprobe offset inside an
    // instruction.
    let code = if e.to_errno() == -(kernel::bindings::EILSEQ as i32) {
        lang::ErrorCode::BadInsnBndry
    } else if e == ENOENT {
        lang::ErrorCode::BadProbeAddr
    } else if e == ENOMEM {
        return e;
    } else {
        lang::ErrorCode::FailRegProbe
    };
    kernel_error(kind, line, code, 1, e)
}

/// error_log's caret column for a word of the command: the kernel joins
/// the words by single spaces whatever separated them.
#[kernel::macros::kunit_tests(dynprobe_word_column)]
mod kunit {
    use super::word_column;

    #[test]
    fn word_column_counts_single_spaces() {
        assert_eq!(word_column(b"p:g/e vfs_read a=%di", 0), 0);
        assert_eq!(word_column(b"p:g/e vfs_read a=%di", 1), 6);
        assert_eq!(word_column(b"p:g/e vfs_read a=%di", 2), 15);
        assert_eq!(word_column(b"  p:g/e \t vfs_read\t\ta=%di ", 2), 15);
        // Past the last word: the column after it.
        assert_eq!(word_column(b"p:g/e vfs_read", 5), 15);
        assert_eq!(word_column(b"", 1), 0);
    }
}
