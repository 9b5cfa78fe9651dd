// SPDX-License-Identifier: GPL-2.0
//! Synthetic event definitions: lines of `dynprobe/synthetic_events`, in
//! the kernel's own syntax (`NAME FIELD[; FIELD]...`, `!NAME`), and the
//! `s:[synthetic/]NAME FIELD[; FIELD]...` lines of `dynamic_events`.
//!
//! The rules are those of `kernel/trace/trace_events_synth.c` in Linux
//! 7.2 (`create_or_delete_synth_event()`, `create_synth_event()`,
//! `check_command()`, `parse_synth_field()`, `synth_field_size()`), with
//! its error codes and caret positions: the caret goes where the kernel's
//! `errpos()` puts it, at the first occurrence of the offending word in
//! the command. A definition is checked whole when parsed; its fields are
//! then read again, from the line, by [`SynthDef::fields`], so nothing is
//! stored but the line itself.

use core::fmt::{self, Write};

use crate::lang::error::{errno, ErrorCode, ParseError, Subsystem};
use crate::lang::lexer::strip_comment;
use crate::lang::text::{find, find_sub, head, is_good_name, is_space, kstrtouint, tail};

/// Most fields of a synthetic event (`SYNTH_FIELDS_MAX`).
pub const SYNTH_FIELDS_MAX: usize = 64;
/// Longest fixed-size string field (`STR_VAR_LEN_MAX`, which is
/// `MAX_FILTER_STR_VAL`).
pub const SYNTH_STRING_MAX: u32 = 256;
/// The system synthetic events belong to (`SYNTH_SYSTEM`).
pub const SYNTH_SYSTEM: &str = "synthetic";

/// Which file a synthetic event line was written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthSource {
    /// `synthetic_events`: `NAME FIELDS` or `!NAME`.
    SyntheticEvents,
    /// `dynamic_events`: `s:[synthetic/]NAME FIELDS`.
    DynamicEvents,
}

/// What a synthetic event line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthCommand<'l> {
    /// Nothing (blank line or comment).
    Nothing,
    /// Create this event.
    Define(SynthDef<'l>),
    /// `!NAME`: remove the event (the rest of the line is not read).
    Remove {
        /// The event's name as written (maybe empty).
        name: &'l [u8],
    },
}

/// A checked synthetic event definition: its name and the text of its
/// fields, both parts of the line it was parsed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthDef<'l> {
    name: &'l [u8],
    fields: &'l [u8],
}

/// One field of a definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthField<'l> {
    unsigned: bool,
    base: &'l [u8],
    name: &'l [u8],
    array: &'l [u8],
}

/// How a field's type is stored in the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthStorage {
    /// A scalar of this many bytes.
    Fixed(u32),
    /// A string of this many bytes (`char[N]`).
    String(u32),
    /// A string of any length (`char[]`, or `char[0]`).
    DynamicString,
    /// A stack trace (`long[]`).
    Stack,
}

/// Why a field's type is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthTypeError {
    /// A `char[...]` type whose size is malformed or too big.
    BadStringSize,
    /// No type the kernel knows.
    Unknown,
}

/// Whether `line` is for the synthetic event parser in `dynamic_events`:
/// its first word starts with `s:`.
pub fn is_synth_line(line: &[u8]) -> bool {
    skip_spaces(strip_comment(line)).starts_with(b"s:")
}

/// The command text the kernel's `error_log` shows for a synthetic event
/// line: the line without its comment and leading whitespace.
pub fn synth_command_text(line: &[u8]) -> &[u8] {
    skip_spaces(strip_comment(line))
}

/// Parse one line written to `source`.
pub fn parse_synth(source: SynthSource, line: &[u8]) -> Result<SynthCommand<'_>, ParseError> {
    let raw = synth_command_text(line);
    if raw.is_empty() {
        return Ok(SynthCommand::Nothing);
    }
    let cmd = Command { raw };
    match source {
        SynthSource::SyntheticEvents => cmd.synthetic_events(),
        SynthSource::DynamicEvents => cmd.dynamic_events(),
    }
}

/// The error the kernel logs for `code` with the caret at `column`.
pub fn synth_error(code: ErrorCode, column: usize, e: i32) -> ParseError {
    ParseError {
        code,
        column,
        errno: e,
        subsystem: Subsystem::Synthetic,
        logged: true,
    }
}

/// The kernel's `skip_spaces()`.
fn skip_spaces(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| is_space(c)).count();
    tail(s, n)
}

/// Whitespace-separated words (`argv_split()`).
fn words(s: &[u8]) -> impl Iterator<Item = &[u8]> + Clone {
    s.split(|&c| is_space(c)).filter(|w| !w.is_empty())
}

/// `strpbrk(s, " \t")`.
fn first_blank(s: &[u8]) -> Option<usize> {
    s.iter().position(|&c| c == b' ' || c == b'\t')
}

/// A line being parsed: `raw` is what the kernel keeps as `last_cmd`.
struct Command<'l> {
    raw: &'l [u8],
}

impl<'l> Command<'l> {
    /// The kernel's `errpos()`: where `word` first occurs in the command.
    fn errpos(&self, word: &[u8]) -> usize {
        find_sub(self.raw, word).unwrap_or(0)
    }

    fn invalid_cmd(&self) -> ParseError {
        synth_error(ErrorCode::SynthInvalidCmd, 0, errno::EINVAL)
    }

    /// `create_or_delete_synth_event()`.
    fn synthetic_events(&self) -> Result<SynthCommand<'l>, ParseError> {
        check_command(self.raw).map_err(|()| self.invalid_cmd())?;
        let blank = first_blank(self.raw);
        if blank.is_none() && self.raw.first() != Some(&b'!') {
            return Err(self.invalid_cmd());
        }
        let name = head(self.raw, blank.unwrap_or(self.raw.len()));
        if let Some(rest) = name.strip_prefix(b"!") {
            return Ok(SynthCommand::Remove { name: rest });
        }
        let fields = skip_spaces(tail(self.raw, name.len()));
        self.define(name, fields)
    }

    /// `create_synth_event()`: `s:[synthetic/]NAME FIELDS`.
    fn dynamic_events(&self) -> Result<SynthCommand<'l>, ParseError> {
        let Some(after) = self.raw.strip_prefix(b"s:") else {
            return Err(self.invalid_cmd());
        };
        let Some(blank) = first_blank(self.raw) else {
            return Err(self.invalid_cmd());
        };
        let fields = skip_spaces(tail(self.raw, blank));
        // The kernel looks for a '/' anywhere after "s:".
        let mut start = 2;
        if find(after, b'/').is_some() {
            let prefix = b"synthetic/";
            if !after.starts_with(prefix) {
                return Err(synth_error(ErrorCode::SynthInvalidDynCmd, 0, errno::EINVAL));
            }
            start += prefix.len();
        }
        check_command(tail(self.raw, start)).map_err(|()| self.invalid_cmd())?;
        let name = self.raw.get(start..blank).unwrap_or(&[]);
        self.define(name, fields)
    }

    /// `__create_synth_event()`, up to the kernel's own checks of the
    /// event (whether the name is taken).
    fn define(&self, name: &'l [u8], fields: &'l [u8]) -> Result<SynthCommand<'l>, ParseError> {
        if name.is_empty() {
            return Err(self.invalid_cmd());
        }
        if !is_good_name(name) {
            return Err(synth_error(
                ErrorCode::SynthBadName,
                self.errpos(name),
                errno::EINVAL,
            ));
        }
        let mut n = 0usize;
        let mut cursor = Fields::new(fields);
        while let Some(field) = cursor.next_checked() {
            field.map_err(|(code, word)| synth_error(code, self.errpos(word), errno::EINVAL))?;
            if n == SYNTH_FIELDS_MAX {
                return Err(synth_error(ErrorCode::SynthTooManyFields, 0, errno::EINVAL));
            }
            n += 1;
        }
        if n == 0 {
            return Err(self.invalid_cmd());
        }
        Ok(SynthCommand::Define(SynthDef { name, fields }))
    }
}

/// `check_command()`: the text before the first `;` has at least three
/// words (name, type, field name), unless it is a removal.
fn check_command(s: &[u8]) -> Result<(), ()> {
    let first = head(s, find(s, b';').unwrap_or(s.len()));
    if first.first() == Some(&b'!') || words(first).nth(2).is_some() {
        Ok(())
    } else {
        Err(())
    }
}

/// Reads fields off the text after the name: `;`-separated groups of
/// words, each group holding one or more `[unsigned] TYPE NAME[ARRAY]`.
#[derive(Clone)]
struct Fields<'l> {
    /// The groups not started yet.
    rest: Option<&'l [u8]>,
    /// The words of the current group not read yet.
    group: &'l [u8],
}

/// Why a field is refused, and the word the caret goes under.
type FieldError<'l> = (ErrorCode, &'l [u8]);

impl<'l> Fields<'l> {
    fn new(text: &'l [u8]) -> Self {
        Fields {
            rest: Some(text),
            group: &[],
        }
    }

    /// The next word of the current group and the text after it.
    fn take_word(&mut self) -> Option<&'l [u8]> {
        let s = skip_spaces(self.group);
        let len = s.iter().take_while(|&&c| !is_space(c)).count();
        if len == 0 {
            self.group = s;
            return None;
        }
        self.group = tail(s, len);
        Some(head(s, len))
    }

    /// The next field, checked (`parse_synth_field()`); `None` after the
    /// last.
    fn next_checked(&mut self) -> Option<Result<SynthField<'l>, FieldError<'l>>> {
        let first = loop {
            if let Some(w) = self.take_word() {
                break w;
            }
            let rest = self.rest?;
            let end = find(rest, b';');
            self.group = head(rest, end.unwrap_or(rest.len()));
            self.rest = end.map(|e| tail(rest, e + 1));
        };
        Some(self.field(first))
    }

    fn field(&mut self, first: &'l [u8]) -> Result<SynthField<'l>, FieldError<'l>> {
        let (unsigned, base, name) = if first == b"unsigned" {
            let mut ahead = self.clone();
            match (ahead.take_word(), ahead.take_word()) {
                (Some(base), Some(name)) => {
                    *self = ahead;
                    (true, base, name)
                }
                _ => return Err((ErrorCode::SynthIncompleteType, first)),
            }
        } else {
            match self.take_word() {
                Some(name) => (false, first, name),
                None => return Err((ErrorCode::SynthInvalidField, first)),
            }
        };
        let bracket = find(name, b'[').unwrap_or(name.len());
        let field = SynthField {
            unsigned,
            base,
            name: head(name, bracket),
            array: tail(name, bracket),
        };
        if !is_good_name(field.name) {
            return Err((ErrorCode::SynthBadName, name));
        }
        match field.storage() {
            Ok(_) => Ok(field),
            Err(SynthTypeError::BadStringSize) if !field.array.is_empty() => {
                Err((ErrorCode::SynthInvalidArraySpec, name))
            }
            Err(_) => Err((ErrorCode::SynthInvalidType, base)),
        }
    }
}

impl<'l> Iterator for Fields<'l> {
    type Item = SynthField<'l>;
    fn next(&mut self) -> Option<SynthField<'l>> {
        // A definition's fields were checked when it was parsed.
        self.next_checked()?.ok()
    }
}

/// The fixed-size types and their sizes (`synth_field_size()`).
const SCALARS: [(&[u8], u32); 17] = [
    (b"s64", 8),
    (b"u64", 8),
    (b"s32", 4),
    (b"u32", 4),
    (b"s16", 2),
    (b"u16", 2),
    (b"s8", 1),
    (b"u8", 1),
    (b"char", 1),
    (b"unsigned char", 1),
    (b"int", 4),
    (b"unsigned int", 4),
    (b"long", 8),
    (b"unsigned long", 8),
    (b"bool", 1),
    (b"pid_t", 4),
    (b"gfp_t", 4),
];

/// A field's type text, `[unsigned ]BASE[ARRAY]`, read in place from
/// its three parts: the kernel composes it into one string and searches
/// that, so a match may span two parts.
struct TypeText<'a> {
    parts: [&'a [u8]; 3],
}

impl<'a> TypeText<'a> {
    fn of(f: &SynthField<'a>) -> Self {
        let prefix: &[u8] = if f.unsigned { b"unsigned " } else { b"" };
        TypeText {
            parts: [prefix, f.base, f.array],
        }
    }

    fn len(&self) -> usize {
        self.parts.iter().map(|p| p.len()).sum()
    }

    fn byte(&self, mut i: usize) -> Option<u8> {
        for p in self.parts {
            match p.get(i) {
                Some(&c) => return Some(c),
                None => i -= p.len(),
            }
        }
        None
    }

    fn matches_at(&self, at: usize, s: &[u8]) -> bool {
        s.iter()
            .enumerate()
            .all(|(k, &c)| self.byte(at + k) == Some(c))
    }

    /// `strstr()`.
    fn find(&self, s: &[u8]) -> Option<usize> {
        let len = self.len();
        (0..=len.checked_sub(s.len())?).find(|&at| self.matches_at(at, s))
    }

    /// `strcmp() == 0`.
    fn is(&self, s: &[u8]) -> bool {
        self.len() == s.len() && self.matches_at(0, s)
    }

    /// `synth_field_string_size()` on a type holding `char[`: the size, 0
    /// for a string of any length.
    fn string_size(&self) -> Result<u32, ()> {
        let start = self.find(b"char[").ok_or(())? + b"char[".len();
        let end = (0..self.len())
            .find(|&i| self.byte(i) == Some(b']'))
            .ok_or(())?;
        if end < start || end + 1 != self.len() {
            return Err(());
        }
        let mut digits = [0u8; 3];
        let n = end - start;
        if n > digits.len() {
            return Err(());
        }
        if n == 0 {
            return Ok(0);
        }
        for (k, d) in digits.iter_mut().enumerate().take(n) {
            *d = self.byte(start + k).ok_or(())?;
        }
        let size = kstrtouint(head(&digits, n), 0).ok_or(())?;
        if size > SYNTH_STRING_MAX {
            return Err(());
        }
        Ok(size)
    }
}

impl<'l> SynthField<'l> {
    /// The field's name (without its array suffix).
    pub fn name(&self) -> &'l [u8] {
        self.name
    }

    /// Writes the field's type as the kernel lists it:
    /// `[unsigned ]BASE[ARRAY]`.
    pub fn write_type<W: Write>(&self, w: &mut W) -> fmt::Result {
        if self.unsigned {
            w.write_str("unsigned ")?;
        }
        write_bytes(w, self.base)?;
        write_bytes(w, self.array)
    }

    /// How the kernel stores the field, or why it refuses the type.
    pub fn storage(&self) -> Result<SynthStorage, SynthTypeError> {
        let ty = TypeText::of(self);
        if let Some(&(_, size)) = SCALARS.iter().find(|(name, _)| ty.is(name)) {
            return Ok(SynthStorage::Fixed(size));
        }
        if ty.find(b"char[").is_some() {
            return match ty.string_size() {
                Err(()) => Err(SynthTypeError::BadStringSize),
                Ok(0) => Ok(SynthStorage::DynamicString),
                Ok(n) => Ok(SynthStorage::String(n)),
            };
        }
        if ty.find(b"long[").is_some() {
            return Ok(SynthStorage::Stack);
        }
        Err(SynthTypeError::Unknown)
    }
}

fn write_bytes<W: Write>(w: &mut W, b: &[u8]) -> fmt::Result {
    crate::lang::text::write_lossy(w, b)
}

impl<'l> SynthDef<'l> {
    /// The event's name.
    pub fn name(&self) -> &'l [u8] {
        self.name
    }

    /// The kernel's refusal of the definition, written as `line`, when
    /// its name is taken: `Event already exists`, under the name.
    pub fn exists_error(&self, line: &[u8]) -> ParseError {
        let cmd = Command {
            raw: synth_command_text(line),
        };
        synth_error(
            ErrorCode::SynthEventExists,
            cmd.errpos(self.name),
            errno::EEXIST,
        )
    }

    /// The fields, in order.
    pub fn fields(&self) -> impl Iterator<Item = SynthField<'l>> + Clone {
        Fields::new(self.fields)
    }

    /// Writes the definition as the kernel's `synthetic_events` lists it:
    /// `NAME\tTYPE FIELD; TYPE FIELD`. The same text, written to
    /// `synthetic_events`, defines the same event.
    pub fn write_listing<W: Write>(&self, w: &mut W) -> fmt::Result {
        write_bytes(w, self.name)?;
        w.write_char('\t')?;
        for (i, f) in self.fields().enumerate() {
            if i > 0 {
                w.write_str("; ")?;
            }
            f.write_type(w)?;
            w.write_char(' ')?;
            write_bytes(w, f.name)?;
        }
        Ok(())
    }
}
