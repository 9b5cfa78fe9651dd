// SPDX-License-Identifier: GPL-2.0
//! One line written to a control file: blank or comment, a removal, or a
//! definition in the probe event syntax ([`syntax`]) or the function event
//! syntax ([`syntax::function`]). The lexer has cut the line; this is the one place
//! that tells which of these a line is.

use crate::lang::def::{Command, Definition};
use crate::lang::error::{errno, function_error, ErrorCode, ParseError, Subsystem};

use crate::lang::kind::Control;
use crate::lang::lexer;
use crate::lang::lexer::Words;
use crate::lang::resolver::Resolver;
use crate::lang::syntax::{self, Outcome};
use crate::lang::text::{at, find, head, tail, ByteWrite};
use crate::lang::MAX_LINE_LEN;

/// Write the command text the kernel's `error_log` shows after
/// `Command: ` for an error on `line`: the words joined by single spaces
/// (comments removed), byte for byte. Function events and the `dynevent`
/// error show the line as written.
pub fn write_command<W: ByteWrite>(err: &ParseError, line: &[u8], w: &mut W) -> core::fmt::Result {
    if err.subsystem == Subsystem::Synthetic {
        return w.write_bytes(crate::lang::synth::synth_command_text(line));
    }
    let line = lexer::strip_comment(line);
    if matches!(err.subsystem, Subsystem::Function | Subsystem::Dynevent) {
        return w.write_bytes(line);
    }
    lexer::write_words(line, w)
}

/// An error the kernel fails the write with, without an error_log entry.
fn unlogged(code: ErrorCode, e: i32, sub: Subsystem) -> ParseError {
    ParseError {
        code,
        column: 0,
        errno: e,
        subsystem: sub,
        logged: false,
    }
}

/// Parse one line written to `control` into `out`.
///
/// `line` is one line without its newline. On `Ok(Command::Define)` the
/// definition is complete in `out`; on any other result `out` holds no
/// meaningful definition. Lines longer than [`MAX_LINE_LEN`] bytes are
/// refused (the kernel refuses them without an `error_log` entry).
pub fn parse<'l, R: Resolver>(
    control: Control,
    line: &'l [u8],
    resolver: &R,
    out: &mut Definition,
) -> Result<Command<'l>, ParseError> {
    out.reset();
    let sub = subsystem(control);
    if line.len() > MAX_LINE_LEN {
        return Err(unlogged(ErrorCode::ArgTooLong, errno::EINVAL, sub));
    }
    if let Some(removal) = parse_removal(control, line) {
        return removal;
    }
    let line = lexer::strip_comment(line);
    let Some(argv0) = Words::new(line).next() else {
        return Ok(Command::Nothing);
    };
    let c0 = at(argv0, 0);
    if control == Control::FunctionEvents {
        // The function event syntax reads a NUL byte as the end of the
        // line.
        if c0 == 0 {
            return Ok(Command::Nothing);
        }
        return syntax::function::parse(line, resolver, out).map(|()| Command::Define);
    }
    match syntax::parse(control, line, resolver, out) {
        Ok(Outcome::Done) => Ok(Command::Define),
        Ok(Outcome::Cancel) => {
            out.reset();
            if matches!(control, Control::KprobeEvents | Control::UprobeEvents) {
                Err(unlogged(ErrorCode::NoMatchingType, errno::EINVAL, sub))
            } else {
                Err(ParseError {
                    code: ErrorCode::NoMatchingType,
                    column: 0,
                    errno: errno::EINVAL,
                    subsystem: Subsystem::Dynevent,
                    logged: true,
                })
            }
        }
        Err(e) => {
            out.reset();
            Err(e)
        }
    }
}

/// The subsystem whose errors a line written to `control` gives.
fn subsystem(control: Control) -> Subsystem {
    match control {
        Control::FunctionEvents => Subsystem::Function,
        Control::KprobeEvents => Subsystem::Kprobe,
        Control::UprobeEvents => Subsystem::Uprobe,
        Control::DynamicEvents => Subsystem::Dynevent,
    }
}

/// A line written to `control` parsed as [`parse`] parses it when it is a
/// removal, without a definition to parse into (a removal needs no
/// memory); `None` when it is not one, or is too long for [`parse`] to
/// accept.
pub fn parse_removal(control: Control, line: &[u8]) -> Option<Result<Command<'_>, ParseError>> {
    if line.len() > MAX_LINE_LEN {
        return None;
    }
    let line = lexer::strip_comment(line);
    let mut words = Words::new(line);
    let start = words.next_start();
    let argv0 = words.next()?;
    let c0 = at(argv0, 0);
    let is_removal = c0 == b'-'
        || (c0 == b'!' && !matches!(control, Control::KprobeEvents | Control::UprobeEvents));
    is_removal.then(|| removal(control, line, start, argv0, subsystem(control)))
}

/// A removal line: `-:[GROUP/]EVENT [PLACE [ARGS]]`, which starts at
/// `start` with the word `argv0`. dynamic_events also takes
/// `!TYPE:[GROUP/]EVENT ...`, function_events `-`, `-:`, `!` or `!:`
/// before the name. The probe event files refuse a malformed removal
/// without an error_log entry; function_events logs it.
fn removal<'l>(
    control: Control,
    line: &'l [u8],
    start: usize,
    argv0: &'l [u8],
    sub: Subsystem,
) -> Result<Command<'l>, ParseError> {
    let function = control == Control::FunctionEvents;
    let no_name = || {
        if function {
            function_error(ErrorCode::NoEventName, start.saturating_add(1))
        } else {
            unlogged(ErrorCode::NoEventName, errno::EINVAL, sub)
        }
    };
    let not_utf8 = || {
        if function {
            function_error(ErrorCode::BadEventName, 0)
        } else {
            no_name()
        }
    };
    let name = if function {
        tail(argv0, if at(argv0, 1) == b':' { 2 } else { 1 })
    } else if at(argv0, 0) == b'-' {
        if at(argv0, 1) != b':' {
            return Err(no_name());
        }
        tail(argv0, 2)
    } else {
        match find(argv0, b':') {
            Some(p) => tail(argv0, p + 1),
            None => return Err(no_name()),
        }
    };
    let (group, event) = match find(name, b'/') {
        Some(p) => (Some(head(name, p)), tail(name, p + 1)),
        None => (None, name),
    };
    if group.is_none() && event.is_empty() {
        return Err(no_name());
    }
    let group = match group {
        Some(g) => Some(core::str::from_utf8(g).map_err(|_| not_utf8())?),
        None => None,
    };
    let event = core::str::from_utf8(event).map_err(|_| not_utf8())?;
    Ok(Command::Remove {
        group,
        event,
        args: tail(line, start.saturating_add(argv0.len())),
    })
}
