// SPDX-License-Identifier: GPL-2.0
//! Function lists of `f` lines: `SYM[,[!]SYM...]`, each item a name or a
//! glob (`*`, `?`, `[...]`, as the kernel's `glob_match()` reads them), an
//! item with `!` in front excluding what it matches. One event is hooked
//! on every function a positive item matches and no excluded one does.
//!
//! A list is matched against every symbol of the kernel (a few hundred
//! thousand), so what one symbol costs is bounded when the list is
//! parsed ([`MAX_LIST_COST`]), and the list is compiled once
//! ([`CompiledList`]): names in a sorted table, `NAME*` and `*NAME` as a
//! compare of the name's start or end, the rest through [`glob_match`].

use core::cmp::Ordering;

use crate::lang::error::ErrorCode;

/// The most a list may cost to match against one symbol, in pattern bytes
/// looked at ([`FunctionList::cost`]): about 0.3 us per symbol on the
/// slowest patterns (classes), a tenth of a second for the kernel image's
/// symbols. Lists of names, of `NAME*` and `*NAME` items and a few infix
/// globs (`*_show*`) stay far below it; a crafted list of many globs with
/// many `*` would take seconds for every walk of the symbols.
pub const MAX_LIST_COST: u32 = 512;

/// The length of a symbol name the cost model assumes: a `*` tries the
/// rest of the pattern at each byte of the name. Kernel names average 24
/// bytes.
const NAME_LEN: u32 = 32;

/// What looking at one byte of a class (`[...]`) costs, against a literal
/// byte's: [`class_match`] reads the class member by member at each try.
const CLASS_BYTE_COST: u32 = 4;

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
        let list = FunctionList { text };
        if list.cost() > MAX_LIST_COST {
            return Err((0, ErrorCode::FlistTooCostly));
        }
        Ok(list)
    }

    /// What matching the compiled list against one symbol costs at most,
    /// in pattern bytes looked at (a symbol of [`NAME_LEN`] bytes): the
    /// names' table a binary search; `NAME*` and `*NAME` a compare of at
    /// most the symbol's length; a glob its bytes up to the first `*`, and
    /// from there each byte of the rest (`*`s aside) at each byte of the
    /// symbol, as [`glob_match`] backtracks. A byte of a class counts
    /// [`CLASS_BYTE_COST`]. Exclusions count as much as the items they
    /// exclude from (a list taking every symbol tries them all).
    pub fn cost(&self) -> u32 {
        let mut names = 0u32;
        let mut cost = 0u32;
        for item in self.text.split(|&c| c == b',') {
            let pattern = item.strip_prefix(b"!").unwrap_or(item);
            let item_cost = match form_of(pattern) {
                ItemForm::Name => {
                    names = names.saturating_add(1);
                    0
                }
                ItemForm::Prefix | ItemForm::Suffix => {
                    u32::try_from(pattern.len().saturating_sub(1))
                        .map_or(NAME_LEN, |n| n.min(NAME_LEN))
                }
                ItemForm::Glob => glob_cost(pattern),
            };
            cost = cost.saturating_add(item_cost);
        }
        // A binary search: a compare per halving, each of a few bytes
        // (names share prefixes: `__x64_sys_`).
        let halvings = u32::BITS - names.leading_zeros();
        cost.saturating_add(halvings.saturating_mul(8))
    }

    /// How many items the list has: the room [`FunctionList::compile`]
    /// needs.
    pub fn item_count(&self) -> usize {
        self.text.split(|&c| c == b',').count()
    }

    /// The list compiled into `items` (of [`FunctionList::item_count`]
    /// entries): `None` if it has too few, or the list is too long for
    /// the items' offsets (never for a list that fits a line).
    pub fn compile<'s>(&self, items: &'s mut [ListItem]) -> Option<CompiledList<'a, 's>> {
        let shape = self.compile_into(items)?;
        Some(CompiledList {
            text: self.text,
            items,
            shape,
        })
    }

    /// Fills `items` as [`FunctionList::compile`] does and returns their
    /// layout, for a caller that keeps the items and makes the
    /// [`CompiledList`] again with [`CompiledList::new`].
    pub fn compile_into(&self, items: &mut [ListItem]) -> Option<ListShape> {
        let items = items.get_mut(..self.item_count())?;
        // Four runs: names, excluded names, the other items, the other
        // excluded items. Counted first, then each item goes to the next
        // free slot of its run.
        let mut counts = [0usize; 4];
        for (_, run) in self.entries() {
            *counts.get_mut(run)? += 1;
        }
        let mut next = [0usize; 4];
        let mut at = 0usize;
        for (slot, count) in next.iter_mut().zip(counts) {
            *slot = at;
            at = at.checked_add(count)?;
        }
        for (entry, run) in self.entries() {
            let slot = next.get_mut(run)?;
            *items.get_mut(*slot)? = entry?;
            *slot = slot.checked_add(1)?;
        }
        let [names, excluded_names, globs, excluded_globs] = counts;
        let shape = ListShape {
            names,
            excluded_names,
            globs,
            excluded_globs,
        };
        sort_items(self.text, items.get_mut(..shape.names)?);
        let excluded_end = shape.names.checked_add(shape.excluded_names)?;
        sort_items(self.text, items.get_mut(shape.names..excluded_end)?);
        Some(shape)
    }

    /// Each item as compiled (`None` if its offsets do not fit), with its
    /// run (see [`FunctionList::compile_into`]).
    fn entries(&self) -> impl Iterator<Item = (Option<ListItem>, usize)> + 'a {
        let mut start = 0usize;
        self.text.split(|&c| c == b',').map(move |item| {
            let excluded = item.first() == Some(&b'!');
            let skip = usize::from(excluded);
            let pattern = item.get(skip..).unwrap_or(&[]);
            let form = form_of(pattern);
            let run = match (form, excluded) {
                (ItemForm::Name, false) => 0,
                (ItemForm::Name, true) => 1,
                (_, false) => 2,
                (_, true) => 3,
            };
            let entry = match (
                u32::try_from(start.saturating_add(skip)),
                u32::try_from(pattern.len()),
            ) {
                (Ok(start), Ok(len)) => Some(ListItem { start, len, form }),
                _ => None,
            };
            start = start.saturating_add(item.len()).saturating_add(1);
            (entry, run)
        })
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

/// How a compiled item matches a name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ItemForm {
    /// No glob character: the name itself.
    #[default]
    Name,
    /// `NAME*`: names that start so.
    Prefix,
    /// `*NAME`: names that end so.
    Suffix,
    /// Any other glob: [`glob_match`].
    Glob,
}

/// The form of one item's pattern (without its `!`).
fn form_of(pattern: &[u8]) -> ItemForm {
    if !is_glob(pattern) {
        return ItemForm::Name;
    }
    if let Some(head) = pattern.strip_suffix(b"*") {
        if !is_glob(head) {
            return ItemForm::Prefix;
        }
    }
    if let Some(tail) = pattern.strip_prefix(b"*") {
        if !is_glob(tail) {
            return ItemForm::Suffix;
        }
    }
    ItemForm::Glob
}

/// What [`glob_match`] costs at most on one name ([`FunctionList::cost`]).
fn glob_cost(pattern: &[u8]) -> u32 {
    let byte_costs = |bytes: &[u8]| {
        let mut cost = 0u32;
        let mut in_class = false;
        for &c in bytes {
            if c == b'*' && !in_class {
                continue;
            }
            let opens = c == b'[' && !in_class;
            cost = cost.saturating_add(if in_class || opens {
                CLASS_BYTE_COST
            } else {
                1
            });
            if opens {
                in_class = true;
            } else if c == b']' && in_class {
                in_class = false;
            }
        }
        cost
    };
    match pattern.iter().position(|&c| c == b'*') {
        None => byte_costs(pattern),
        Some(star) => {
            let (head, rest) = pattern.split_at(star);
            let tries = byte_costs(rest).max(1);
            byte_costs(head).saturating_add(tries.saturating_mul(NAME_LEN))
        }
    }
}

/// One item of a compiled list: where its pattern (without its `!`) is
/// in the list's text, and its form. `Default` is a place holder for the
/// room [`FunctionList::compile_into`] fills.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListItem {
    start: u32,
    len: u32,
    form: ItemForm,
}

impl ListItem {
    /// Its pattern in `text`, the list it was compiled from (empty for
    /// another text that does not reach so far).
    fn pattern<'t>(&self, text: &'t [u8]) -> &'t [u8] {
        let start = self.start as usize;
        text.get(start..start.saturating_add(self.len as usize))
            .unwrap_or(&[])
    }

    /// Whether its pattern, in `text`, matches `name`.
    fn matches(&self, text: &[u8], name: &[u8]) -> bool {
        let pattern = self.pattern(text);
        match self.form {
            ItemForm::Name => pattern == name,
            ItemForm::Prefix => name.starts_with(pattern.strip_suffix(b"*").unwrap_or(pattern)),
            ItemForm::Suffix => name.ends_with(pattern.strip_prefix(b"*").unwrap_or(pattern)),
            ItemForm::Glob => glob_match(pattern, name),
        }
    }
}

/// How a compiled list's items lie: four runs, in this order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListShape {
    /// Names taken, sorted.
    names: usize,
    /// Names excluded, sorted.
    excluded_names: usize,
    /// Other items taken (prefixes, suffixes, globs), as listed.
    globs: usize,
    /// Other items excluded, as listed.
    excluded_globs: usize,
}

/// A function list compiled for matching many names: what
/// [`FunctionList::matches`] answers, with a binary search for the names.
#[derive(Clone, Copy, Debug)]
pub struct CompiledList<'a, 's> {
    text: &'a [u8],
    items: &'s [ListItem],
    shape: ListShape,
}

impl<'a, 's> CompiledList<'a, 's> {
    /// The list `text` compiled into `items` with layout `shape` by
    /// [`FunctionList::compile_into`]. Items of another text match what
    /// their offsets find there, or nothing.
    pub fn new(text: &'a [u8], items: &'s [ListItem], shape: ListShape) -> Self {
        CompiledList { text, items, shape }
    }

    /// The list as written.
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// The run `index` (0 to 3) of the items.
    fn run(&self, index: usize) -> &'s [ListItem] {
        let s = self.shape;
        let lens = [s.names, s.excluded_names, s.globs, s.excluded_globs];
        let start = lens
            .iter()
            .take(index)
            .fold(0usize, |at, len| at.saturating_add(*len));
        let len = lens.get(index).copied().unwrap_or(0);
        self.items
            .get(start..start.saturating_add(len))
            .unwrap_or(&[])
    }

    /// Whether `name` is among the sorted names `run`.
    fn has_name(&self, run: &[ListItem], name: &[u8]) -> bool {
        let (mut low, mut high) = (0usize, run.len());
        while low < high {
            let mid = low + (high - low) / 2;
            let Some(item) = run.get(mid) else {
                return false;
            };
            match item.pattern(self.text).cmp(name) {
                Ordering::Less => low = mid + 1,
                Ordering::Greater => high = mid,
                Ordering::Equal => return true,
            }
        }
        false
    }

    /// Whether the list takes the function `name`: a positive item
    /// matches it and no excluded one does.
    pub fn matches(&self, name: &[u8]) -> bool {
        let text = self.text;
        let taken =
            self.has_name(self.run(0), name) || self.run(2).iter().any(|i| i.matches(text, name));
        taken
            && !self.has_name(self.run(1), name)
            && !self.run(3).iter().any(|i| i.matches(text, name))
    }
}

/// Sorts the name items `items` by their patterns in `text` (a heap sort:
/// no allocation, no panicking checks).
fn sort_items(text: &[u8], items: &mut [ListItem]) {
    heap_sort_by(items, |a, b| a.pattern(text) < b.pattern(text));
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
    heap_sort_by(v, |a, b| a < b);
    let n = v.len();
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

/// Sorts `v` by `less` with a heap sort.
fn heap_sort_by<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = v.len();
    for start in (0..n / 2).rev() {
        sift_down(v, start, n, &less);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end, &less);
    }
}

/// Restores the max-heap below `root` in `v[..end]`.
fn sift_down<T: Copy>(v: &mut [T], mut root: usize, end: usize, less: &impl Fn(&T, &T) -> bool) {
    loop {
        let left = root.saturating_mul(2).saturating_add(1);
        if left >= end {
            return;
        }
        let right = left.saturating_add(1);
        let (Some(&l), Some(&r)) = (v.get(left), v.get(root)) else {
            return;
        };
        let mut child = left;
        let mut big = l;
        if let Some(&rv) = v.get(right).filter(|_| right < end) {
            if less(&l, &rv) {
                child = right;
                big = rv;
            }
        }
        if !less(&r, &big) {
            return;
        }
        v.swap(root, child);
        root = child;
    }
}
