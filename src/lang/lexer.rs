// SPDX-License-Identifier: GPL-2.0
//! Lexer: how the bytes written to a control file become lines, and lines
//! words.
//!
//! It owns the line splitting of a write, comments, the words of the
//! kernel's `argv_split()` (the probe event syntax), the caret column
//! error_log shows for a word, and the cursor the function event syntax
//! reads a line with. Whitespace is the kernel's `isspace()` throughout.

use crate::lang::text::ByteWrite;
use crate::lang::text::{at, find, head, is_alnum, is_space, mid, tail};

/// The first line of what is left of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut<'a> {
    /// A line to run.
    Line {
        /// The line without its newline and comment.
        text: &'a [u8],
        /// Bytes of the buffer done with, newline included.
        used: usize,
    },
    /// The line goes on past the buffer, into the rest of the write.
    Unfinished,
    /// The line holds a NUL byte. The kernel reads a write as a C string,
    /// so it fails the write there (without an error_log entry) and runs
    /// nothing after it.
    Nul,
}

/// Cut the first line off `buf`, part of a write that `buf` ends when
/// `ends_write`: the last line of a write needs no newline.
pub fn cut_line(buf: &[u8], ends_write: bool) -> Cut<'_> {
    let (line, used) = match find(buf, b'\n') {
        Some(n) => (head(buf, n), n.saturating_add(1)),
        None if ends_write => (buf, buf.len()),
        None => return Cut::Unfinished,
    };
    if find(line, 0).is_some() {
        return Cut::Nul;
    }
    Cut::Line {
        text: strip_comment(line),
        used,
    }
}

/// Cut the line at the first `#`, as the kernel does.
pub(crate) fn strip_comment(line: &[u8]) -> &[u8] {
    match find(line, b'#') {
        Some(p) => head(line, p),
        None => line,
    }
}

/// Whitespace-separated words of a line (`argv_split()`).
#[derive(Clone)]
pub(crate) struct Words<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Words<'a> {
    pub(crate) fn new(s: &'a [u8]) -> Self {
        Words { s, i: 0 }
    }

    /// Where the next word starts (the line's length when there is none).
    pub(crate) fn next_start(&self) -> usize {
        let rest = tail(self.s, self.i);
        let spaces = rest.iter().take_while(|&&c| is_space(c)).count();
        self.i.saturating_add(spaces)
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.next_start();
        if start >= self.s.len() {
            self.i = start;
            return None;
        }
        let len = tail(self.s, start)
            .iter()
            .take_while(|&&c| !is_space(c))
            .count();
        self.i = start.saturating_add(len);
        Some(mid(self.s, start, self.i))
    }
}

/// Write the words of `line` joined by single spaces: the command text
/// error_log shows for a probe event line.
pub(crate) fn write_words<W: ByteWrite>(line: &[u8], w: &mut W) -> core::fmt::Result {
    for (i, word) in Words::new(line).enumerate() {
        if i > 0 {
            w.write_bytes(b" ")?;
        }
        w.write_bytes(word)?;
    }
    Ok(())
}

/// Caret column of byte `offset` of word `index` in the text
/// [`write_words`] writes, as `__trace_probe_log_err()` computes it; past
/// the last word when there is no such word.
pub(crate) fn column(line: &[u8], index: usize, offset: usize) -> usize {
    let mut pos = 0usize;
    let mut found = None;
    for (i, w) in Words::new(line).enumerate() {
        if i == index {
            found = Some(pos);
        }
        pos = pos.saturating_add(w.len()).saturating_add(1);
    }
    match found {
        Some(p) => p.saturating_add(offset),
        None => pos,
    }
}

/// A position in a line, for a syntax of tokens rather than words (the
/// function events). Columns are byte positions in the line as written.
pub(crate) struct Cursor<'a> {
    line: &'a [u8],
    /// The position: the next byte to read.
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Cursor { line, pos: 0 }
    }

    /// The byte at the position, 0 at the end.
    /// The whole line.
    pub(crate) fn text(&self) -> &'a [u8] {
        self.line
    }

    pub(crate) fn byte(&self) -> u8 {
        at(self.line, self.pos)
    }

    /// Move past whitespace.
    pub(crate) fn skip_space(&mut self) {
        self.take_while(is_space);
    }

    /// The next byte after whitespace (0 at the end), not consumed.
    pub(crate) fn peek(&mut self) -> u8 {
        self.skip_space();
        self.byte()
    }

    /// Consume `c` if it comes next after whitespace.
    pub(crate) fn eat(&mut self, c: u8) -> bool {
        if self.peek() == c {
            self.pos = self.pos.saturating_add(1);
            true
        } else {
            false
        }
    }

    /// Consume the bytes from the position on that `keep` accepts;
    /// returns where they start and them.
    pub(crate) fn take_while(&mut self, keep: impl Fn(u8) -> bool) -> (usize, &'a [u8]) {
        let start = self.pos;
        let len = tail(self.line, start)
            .iter()
            .take_while(|&&c| keep(c))
            .count();
        self.pos = start.saturating_add(len);
        (start, mid(self.line, start, self.pos))
    }

    /// After whitespace, a word of identifier characters (possibly
    /// empty) and where it starts.
    pub(crate) fn word(&mut self) -> (usize, &'a [u8]) {
        self.skip_space();
        self.take_while(|c| is_alnum(c) || c == b'_')
    }

    /// After whitespace, the text of a number: an optional sign, then
    /// alphanumerics, as `kstrtol()` is handed it.
    pub(crate) fn number(&mut self) -> (usize, &'a [u8]) {
        self.skip_space();
        let start = self.pos;
        if matches!(self.byte(), b'-' | b'+') {
            self.pos = self.pos.saturating_add(1);
        }
        self.take_while(is_alnum);
        (start, mid(self.line, start, self.pos))
    }
}
