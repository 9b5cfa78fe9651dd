// SPDX-License-Identifier: GPL-2.0
//! Text: fixed-capacity strings, bounded slicing, the kernel's character
//! classes and number parsing, and the rules for names.
//!
//! The bottom layer of the language: it knows nothing of lines, words or
//! syntax. Nothing here allocates; everything is bounded by a const
//! capacity.

use core::fmt;

use crate::lang::MAX_EVENT_NAME_LEN;

/// Where [`crate::lang::write_command`] puts the command text: bytes, not `str`. The
/// kernel's error_log copies the bytes that were written, valid UTF-8 or
/// not, and counts caret columns in bytes; re-encoding them would change
/// both.
pub trait ByteWrite {
    /// Append `b`; an error stops the writing.
    fn write_bytes(&mut self, b: &[u8]) -> core::fmt::Result;
}

impl<F: FnMut(&[u8]) -> core::fmt::Result> ByteWrite for F {
    fn write_bytes(&mut self, b: &[u8]) -> core::fmt::Result {
        self(b)
    }
}

/// A UTF-8 string stored inline with a fixed capacity of `N` bytes.
///
/// Appending never splits a character: a write that does not fit is refused
/// as a whole, so the contents are always valid UTF-8.
#[derive(Clone, Copy)]
pub struct Str<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Str<N> {
    /// An empty string.
    pub const fn new() -> Self {
        Str {
            buf: [0; N],
            len: 0,
        }
    }

    /// The contents.
    pub fn as_str(&self) -> &str {
        match self.buf.get(..self.len) {
            Some(b) => core::str::from_utf8(b).unwrap_or(""),
            None => "",
        }
    }

    /// The contents as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Remove the contents.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Append a string; refused (and nothing appended) when it does not fit.
    pub(crate) fn push(&mut self, s: &str) -> Result<(), ()> {
        let end = self.len.checked_add(s.len()).ok_or(())?;
        let dst = self.buf.get_mut(self.len..end).ok_or(())?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }

    /// Replace the contents with `s`.
    pub(crate) fn set(&mut self, s: &str) -> Result<(), ()> {
        self.clear();
        self.push(s)
    }

    /// Replace the contents with as much of `s` as fits, cut at a
    /// character boundary: for texts the kernel cuts too (default event
    /// names) and constants known to fit.
    pub(crate) fn set_truncated(&mut self, s: &str) {
        let s = char_prefix(s, N);
        self.clear();
        if let Some(dst) = self.buf.get_mut(..s.len()) {
            dst.copy_from_slice(s.as_bytes());
            self.len = s.len();
        }
    }

    /// Replace byte `at` (which must be ASCII, as must `b`) by `b`.
    pub(crate) fn replace_ascii(&mut self, at: usize, b: u8) {
        if at < self.len && b.is_ascii() {
            if let Some(c) = self.buf.get_mut(at) {
                if c.is_ascii() {
                    *c = b;
                }
            }
        }
    }
}

impl<const N: usize> Default for Str<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Write for Str<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s).map_err(|()| fmt::Error)
    }
}

impl<const N: usize> fmt::Debug for Str<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> fmt::Display for Str<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<const N: usize> PartialEq for Str<N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl<const N: usize> Eq for Str<N> {}

/// C `isspace()` in the kernel's ctype table (ASCII part).
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// C `isdigit()`.
pub(crate) fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}

/// C `isalpha()` (ASCII).
pub(crate) fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphabetic()
}

/// C `isalnum()` (ASCII).
pub(crate) fn is_alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

/// Byte at `i`, or 0 past the end (C string semantics).
pub(crate) fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// `s[from..]`, empty when out of range.
pub(crate) fn tail<T>(s: &[T], from: usize) -> &[T] {
    s.get(from..).unwrap_or(&[])
}

/// `s[..to]`, the whole slice when out of range.
pub(crate) fn head<T>(s: &[T], to: usize) -> &[T] {
    s.get(..to).unwrap_or(s)
}

/// `s[a..b]`, empty when out of range.
pub(crate) fn mid<T>(s: &[T], a: usize, b: usize) -> &[T] {
    s.get(a..b).unwrap_or(&[])
}

/// Position of the first `c` in `s` (C `strchr`).
pub(crate) fn find(s: &[u8], c: u8) -> Option<usize> {
    s.iter().position(|&x| x == c)
}

/// Position of the first NUL in `s`, eight bytes at a time (a string
/// read's cost is mostly this scan): a word holds a zero byte exactly when
/// `(w - 0x01..01) & !w & 0x80..80` is not 0, and its lowest set bit is in
/// the first zero byte (borrows only reach bytes above it).
pub fn first_nul(s: &[u8]) -> Option<usize> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = 0usize;
    while let Some(word) = s.get(at..).and_then(|rest| rest.first_chunk::<8>()) {
        let w = u64::from_le_bytes(*word);
        let zero = w.wrapping_sub(LOW) & !w & HIGH;
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    find(tail(s, at), 0).map(|i| at + i)
}

/// Position of the last `c` in `s` (C `strrchr`).
pub(crate) fn rfind(s: &[u8], c: u8) -> Option<usize> {
    s.iter().rposition(|&x| x == c)
}

/// Position of the first occurrence of `needle` (C `strstr`).
pub(crate) fn find_sub(s: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    s.windows(needle.len()).position(|w| w == needle)
}

/// Bytes as `&str` (empty when not UTF-8).
pub(crate) fn as_str(s: &[u8]) -> &str {
    core::str::from_utf8(s).unwrap_or("")
}

/// Write bytes, mapping non-UTF-8 bytes to characters of the same value.
pub(crate) fn write_lossy<W: fmt::Write>(w: &mut W, b: &[u8]) -> fmt::Result {
    match core::str::from_utf8(b) {
        Ok(s) => w.write_str(s),
        Err(_) => {
            for &c in b {
                w.write_char(char::from(c))?;
            }
            Ok(())
        }
    }
}

/// The kernel's `__is_good_name()`: a C identifier (with `-` allowed for
/// system names).
pub(crate) fn is_good_name_ex(name: &[u8], hyphen_ok: bool) -> bool {
    let first = match name.first() {
        Some(&c) => c,
        None => return false,
    };
    if !is_alpha(first) && first != b'_' && !(hyphen_ok && first == b'-') {
        return false;
    }
    name.iter()
        .skip(1)
        .all(|&c| is_alpha(c) || is_digit(c) || c == b'_' || (hyphen_ok && c == b'-'))
}

/// `is_good_name()`.
pub(crate) fn is_good_name(name: &[u8]) -> bool {
    is_good_name_ex(name, false)
}

/// Which fields an event's record has before its arguments.
#[derive(Clone, Copy)]
pub(crate) enum Fields {
    /// kprobe, fprobe and tracepoint probe events.
    Probe,
    /// Function events (`__parent_ip`, `__ip`).
    Function,
}

/// Field names every trace event has.
const COMMON_FIELDS: [&str; 5] = [
    "common_type",
    "common_flags",
    "common_preempt_count",
    "common_pid",
    "common_tgid",
];

/// Names the kernel keeps from probe event arguments
/// (`reserved_field_names[]`), beyond the common fields.
const PROBE_FIELDS: [&str; 3] = ["__probe_ip", "__probe_ret_ip", "__probe_func"];

/// The fields a function event records before its arguments.
const FUNCTION_FIELDS: [&str; 2] = ["__parent_ip", "__ip"];

/// True when an argument may not be called `name`: it would clash with a
/// field the record or the trace event already has.
pub(crate) fn is_reserved_field(name: &[u8], fields: Fields) -> bool {
    let own: &[&str] = match fields {
        Fields::Probe => &PROBE_FIELDS,
        Fields::Function => &FUNCTION_FIELDS,
    };
    COMMON_FIELDS
        .iter()
        .chain(own)
        .any(|r| r.as_bytes() == name)
}

/// The longest prefix of `s` of at most `max` bytes that ends at a
/// character boundary.
fn char_prefix(s: &str, max: usize) -> &str {
    let mut n = s.len().min(max);
    while n > 0 && !s.is_char_boundary(n) {
        n -= 1;
    }
    s.get(..n).unwrap_or("")
}

/// A writer that keeps what fits of what is written to it, cut at a
/// character boundary, and drops the rest.
pub(crate) struct Truncating<'a, const N: usize>(pub(crate) &'a mut Str<N>);

impl<const N: usize> fmt::Write for Truncating<'_, N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = N.saturating_sub(self.0.len());
        self.0.push(char_prefix(s, room)).map_err(|()| fmt::Error)
    }
}

/// `snprintf()` into an event name of `MAX_EVENT_NAME_LEN` bytes, NUL
/// included: what does not fit is dropped, nothing replaced (uprobes'
/// default names, which `__trace_uprobe_create()` takes as they are).
pub(crate) fn set_event_name_truncated(
    event: &mut Str<MAX_EVENT_NAME_LEN>,
    args: fmt::Arguments<'_>,
) {
    let mut buf: Str<512> = Str::new();
    let mut cut = Truncating(&mut buf);
    // Truncating never fails: what does not fit is dropped.
    if fmt::write(&mut cut, args).is_err() {
        buf.clear();
    }
    event.set_truncated(char_prefix(buf.as_str(), MAX_EVENT_NAME_LEN - 1));
}

/// Set `event` to a default event name: the formatted text truncated to
/// fit and sanitized as the kernel's `sanitize_event_name()` does (`:`,
/// `.`, `*` after the first byte become `_`).
pub(crate) fn set_default_event_name(
    event: &mut Str<MAX_EVENT_NAME_LEN>,
    args: fmt::Arguments<'_>,
) {
    set_event_name_truncated(event, args);
    for i in 1..event.len() {
        if matches!(at(event.as_bytes(), i), b':' | b'.' | b'*') {
            event.replace_ascii(i, b'_');
        }
    }
}

/// Radix detection as the kernel's `_parse_integer_fixup_radix()`; returns
/// the base and the number of prefix bytes to skip.
fn fixup_radix(s: &[u8], base: u32) -> (u32, usize) {
    let mut base = base;
    if base == 0 {
        if at(s, 0) == b'0' {
            if at(s, 1).eq_ignore_ascii_case(&b'x') && at(s, 2).is_ascii_hexdigit() {
                base = 16;
            } else {
                base = 8;
            }
        } else {
            base = 10;
        }
    }
    let skip = if base == 16 && at(s, 0) == b'0' && at(s, 1).eq_ignore_ascii_case(&b'x') {
        2
    } else {
        0
    };
    (base, skip)
}

fn digit_val(c: u8) -> u32 {
    match c {
        b'0'..=b'9' => u32::from(c - b'0'),
        b'a'..=b'f' => u32::from(c - b'a') + 10,
        b'A'..=b'F' => u32::from(c - b'A') + 10,
        _ => 16,
    }
}

/// Parse digits; returns (value, digits consumed, overflowed).
fn parse_digits(s: &[u8], base: u32) -> (u64, usize, bool) {
    let mut v: u64 = 0;
    let mut n = 0;
    let mut ovf = false;
    for &c in s {
        let d = digit_val(c);
        if d >= base {
            break;
        }
        match v
            .checked_mul(u64::from(base))
            .and_then(|x| x.checked_add(u64::from(d)))
        {
            Some(x) => v = x,
            None => {
                ovf = true;
                v = v.wrapping_mul(u64::from(base)).wrapping_add(u64::from(d));
            }
        }
        n += 1;
    }
    (v, n, ovf)
}

/// `kstrtoull(s, base)`: the whole string must be a number (a single
/// trailing newline is allowed, a leading `+` too).
pub(crate) fn kstrtoull(s: &[u8], base: u32) -> Option<u64> {
    kstrtoull_errno(s, base).ok()
}

/// [`kstrtoull`] with the kernel's error: `ERANGE` when the digits
/// overflow (checked before any trailing garbage, as `_kstrtoull()`
/// does), else `EINVAL`.
pub(crate) fn kstrtoull_errno(s: &[u8], base: u32) -> Result<u64, i32> {
    let s = if at(s, 0) == b'+' { tail(s, 1) } else { s };
    kstrtoull_noplus(s, base)
}

/// `_kstrtoull()`: as [`kstrtoull_errno`] without the leading `+`.
fn kstrtoull_noplus(s: &[u8], base: u32) -> Result<u64, i32> {
    let (base, skip) = fixup_radix(s, base);
    let s = tail(s, skip);
    let (v, n, ovf) = parse_digits(s, base);
    if ovf {
        return Err(crate::lang::errno::ERANGE);
    }
    if n == 0 {
        return Err(crate::lang::errno::EINVAL);
    }
    let rest = tail(s, n);
    let rest = if at(rest, 0) == b'\n' {
        tail(rest, 1)
    } else {
        rest
    };
    if rest.is_empty() {
        Ok(v)
    } else {
        Err(crate::lang::errno::EINVAL)
    }
}

/// `kstrtoll(s, base)` / `kstrtol()` on 64-bit.
pub(crate) fn kstrtoll(s: &[u8], base: u32) -> Option<i64> {
    kstrtoll_errno(s, base).ok()
}

/// [`kstrtoll`] with the kernel's error (`ERANGE` or `EINVAL`).
pub(crate) fn kstrtoll_errno(s: &[u8], base: u32) -> Result<i64, i32> {
    if at(s, 0) == b'-' {
        negative_errno(tail(s, 1), base)
    } else {
        let v = kstrtoull_errno(s, base)?;
        if (v as i64) < 0 {
            return Err(crate::lang::errno::ERANGE);
        }
        Ok(v as i64)
    }
}

/// `kstrtoll("-" + digits)`: the digits as `_kstrtoull()` reads them,
/// negated.
pub(crate) fn negative_errno(digits: &[u8], base: u32) -> Result<i64, i32> {
    let v = kstrtoull_noplus(digits, base)?;
    let neg = 0i64.wrapping_sub(v as i64);
    if neg > 0 {
        return Err(crate::lang::errno::ERANGE);
    }
    Ok(neg)
}

/// `kstrtouint()`.
pub(crate) fn kstrtouint(s: &[u8], base: u32) -> Option<u32> {
    let v = kstrtoull(s, base)?;
    u32::try_from(v).ok()
}

/// `simple_strtoul(s, &end, base)`: returns the value and the bytes consumed
/// (prefix included when digits followed).
pub(crate) fn simple_strtoul(s: &[u8], base: u32) -> (u64, usize) {
    let (base, skip) = fixup_radix(s, base);
    let (v, n, _) = parse_digits(tail(s, skip), base);
    (v, skip.saturating_add(n))
}
