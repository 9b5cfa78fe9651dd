// SPDX-License-Identifier: GPL-2.0
//! Function lists of `f` lines: `SYM[,[!]SYM...]`, each item a name or a
//! glob (`*`, `?`, `[...]`, as the kernel's `glob_match()` reads them), an
//! item with `!` in front excluding what it matches. One event is hooked
//! on every function a positive item matches and no excluded one does.

use crate::lang::error::ErrorCode;

/// Whether `place` (an `f` line's place, without `%return` or
/// `:entry`/`:exit`) is a function list rather than one name or glob: it
/// has a `,` or starts with `!`.
pub fn is_function_list(place: &[u8]) -> bool {
    place.contains(&b',') || place.first() == Some(&b'!')
}

/// A checked function list: every item non-empty, at least one of them
/// not excluded, only characters symbol names and globs use.
#[derive(Clone, Copy, Debug)]
pub struct FunctionList<'a> {
    text: &'a [u8],
}

impl<'a> FunctionList<'a> {
    /// Checks `text`; on error, the offset in it of the bad item and why.
    pub fn parse(text: &'a [u8]) -> Result<Self, (usize, ErrorCode)> {
        let mut positive = false;
        let mut at = 0usize;
        for item in text.split(|&c| c == b',') {
            let (pattern, excluded) = match item.strip_prefix(b"!") {
                Some(p) => (p, true),
                None => (item, false),
            };
            if pattern.is_empty() {
                return Err((at, ErrorCode::FlistEmptyItem));
            }
            let skip = usize::from(excluded);
            if let Some(p) = pattern.iter().position(|&c| !is_pattern_byte(c)) {
                return Err((
                    at.saturating_add(skip).saturating_add(p),
                    ErrorCode::FlistBadItem,
                ));
            }
            positive |= !excluded;
            at = at.saturating_add(item.len()).saturating_add(1);
        }
        if !positive {
            return Err((0, ErrorCode::FlistOnlyExcluded));
        }
        Ok(FunctionList { text })
    }

    /// The list as written.
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// Whether the list takes the function `name`: a positive item matches
    /// it and no excluded one does.
    pub fn matches(&self, name: &[u8]) -> bool {
        let mut taken = false;
        for item in self.text.split(|&c| c == b',') {
            match item.strip_prefix(b"!") {
                Some(p) if glob_match(p, name) => return false,
                Some(_) => {}
                None => taken |= glob_match(item, name),
            }
        }
        taken
    }

    /// The items that name one function (no glob) and are not excluded:
    /// each must exist, as a lone name must.
    pub fn plain_names(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.text
            .split(|&c| c == b',')
            .filter(|i| i.first() != Some(&b'!') && !is_glob(i))
    }
}

/// Whether `pattern` has a glob character.
pub(crate) fn is_glob(pattern: &[u8]) -> bool {
    pattern.iter().any(|c| b"*?[".contains(c))
}

/// Characters of symbol names (letters, digits, `_`, `.` of compiler
/// suffixes, `$`) and of globs.
fn is_pattern_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_.$*?[]-!".contains(&c)
}

/// The kernel's `glob_match()`: `*` any run, `?` any one byte, `[...]` a
/// class ([`class_match`]); no escapes. Backtracks only to
/// the last `*`, as the kernel's does, so it takes time linear in the
/// pattern times the string at most.
pub fn glob_match(pattern: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    // Where to go on from after the last `*`: pattern and string positions.
    let mut back: Option<(usize, usize)> = None;
    loop {
        let c = s.get(i).copied();
        let step = match pattern.get(p) {
            None if c.is_none() => return true,
            None => None,
            Some(b'*') => {
                p = p.saturating_add(1);
                if p == pattern.len() {
                    return true;
                }
                back = Some((p, i));
                continue;
            }
            Some(_) if c.is_none() => return false,
            Some(b'?') => Some(p.saturating_add(1)),
            Some(b'[') => class_match(pattern, p, c.unwrap_or(0)),
            Some(&pc) if Some(pc) == c => Some(p.saturating_add(1)),
            Some(_) => None,
        };
        match step {
            Some(next) => {
                p = next;
                i = i.saturating_add(1);
            }
            None => match back {
                Some((bp, bi)) if bi < s.len() => {
                    let bi = bi.saturating_add(1);
                    back = Some((bp, bi));
                    p = bp;
                    i = bi;
                }
                _ => return false,
            },
        }
    }
}

/// A class at `pattern[at] == b'['` against `c`: where the pattern goes on
/// if it matches, `None` if not. As the kernel reads one: `!` first
/// negates, a `]` first is a member, `a-b` a range (empty when `a > b`),
/// and a class without its `]` is a plain `[`.
fn class_match(pattern: &[u8], at: usize, c: u8) -> Option<usize> {
    let literal = || (c == b'[').then_some(at.saturating_add(1));
    let mut q = at.saturating_add(1);
    let inverted = pattern.get(q) == Some(&b'!');
    if inverted {
        q = q.saturating_add(1);
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let Some(&a) = pattern.get(q) else {
            return literal();
        };
        if a == b']' && !first {
            break;
        }
        first = false;
        let mut b = a;
        let next = pattern.get(q.saturating_add(1)).copied();
        let after = pattern.get(q.saturating_add(2)).copied();
        if next == Some(b'-') && after != Some(b']') {
            match after {
                Some(e) => b = e,
                None => return literal(),
            }
            q = q.saturating_add(2);
        }
        hit |= a <= c && c <= b;
        q = q.saturating_add(1);
    }
    (hit != inverted).then_some(q.saturating_add(1))
}

/// Sorts `v` (a heap sort: no allocation, and none of the checks core's
/// sorts make that end in a panic) and moves each value's first copy to
/// the front; returns how many values are distinct.
pub fn sort_dedup(v: &mut [usize]) -> usize {
    let n = v.len();
    for start in (0..n / 2).rev() {
        sift_down(v, start, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end);
    }
    let mut kept = 0usize;
    for i in 0..n {
        let x = v.get(i).copied().unwrap_or(0);
        let dup = kept > 0 && v.get(kept - 1) == Some(&x);
        if !dup {
            if let Some(slot) = v.get_mut(kept) {
                *slot = x;
            }
            kept += 1;
        }
    }
    kept
}

/// Restores the max-heap below `root` in `v[..end]`.
fn sift_down(v: &mut [usize], mut root: usize, end: usize) {
    loop {
        let left = root.saturating_mul(2).saturating_add(1);
        if left >= end {
            return;
        }
        let right = left.saturating_add(1);
        let get = |i: usize| v.get(i).copied().unwrap_or(0);
        let child = if right < end && get(right) > get(left) {
            right
        } else {
            left
        };
        if get(root) >= get(child) {
            return;
        }
        v.swap(root, child);
        root = child;
    }
}
